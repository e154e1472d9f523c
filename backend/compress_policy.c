/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The compression decision (compress_policy.h). The feedback's estimates:
 *
 * - d, the disk's ns per stored byte: the writes' waits since the last sync
 *   divided by the bytes they wrote are a lower bound (the page cache takes
 *   buffered writes at memory speed and the disk's cost comes due at the
 *   sync); a sync covering at least CPOL_SYNC_MIN completes it and replaces
 *   the estimate; the writes alone only raise an estimate a sync made.
 *   Without any, the cartridge compresses, as before.
 * - c, the writer's ns per host byte spent compressing (sampling included),
 *   and r, stored / plain of those records, over the last window that
 *   compressed.
 *
 * Compressing saves d * (1 - r) per host byte and costs c. It stops when
 * c > d * (1 - r), only for data that does shrink (incompressible data is
 * already stored raw for the price of its samples), and a probe window
 * after CPOL_PROBE_EVERY raw windows (twice as many after each probe that
 * finds it still CPU-bound, at most CPOL_PROBE_MAX) turns it back on when
 * c < d * (1 - r) * 7/8: the margin keeps a cartridge on the boundary from
 * switching every window.
 */
#include "backend/compress_policy.h"

#include <lz4.h>

#include "common/clock.h"

/* Fixed point of the estimates: ns per 2^16 bytes, so that sub-ns per byte costs keep their digits. */
#define FIX_SHIFT 16
#define FIX_ONE (1ull << FIX_SHIFT)
/* A probe resumes compression only with this margin (RESUME_NUM / RESUME_DEN of the saving). */
#define RESUME_NUM 7u
#define RESUME_DEN 8u

static uint64_t mono_clock(void)
{
	return vtl_mono_ns();
}

void cpol_init(struct cpol *p, uint64_t (*clock)(void))
{
	*p = (struct cpol){.clock = clock ? clock : mono_clock, .state = CPOL_ON_UNMEASURED, .probe_every = CPOL_PROBE_EVERY};
}

static bool sample_shrinks(const unsigned char *src, size_t len)
{
	size_t n = len < CPOL_SAMPLE ? len : CPOL_SAMPLE;
	char out[LZ4_COMPRESSBOUND(CPOL_SAMPLE)];
	/* Acceleration 1: the sample must find what the full pass (at any acceleration) could. */
	int got = LZ4_compress_default((const char *)src, out, (int)n, (int)sizeof out);
	return got > 0 && (size_t)got <= n - n / CPOL_SAMPLE_GAIN_DIV;
}

bool cpol_sample_pays(const void *src, size_t len)
{
	const unsigned char *p = src;
	/* The middle catches a piece whose head is the tail of an incompressible file. */
	return sample_shrinks(p, len) || (len >= 2 * CPOL_SAMPLE && sample_shrinks(p + len / 2, len - len / 2));
}

bool cpol_compress_next(const struct cpol *p)
{
	return p->state != CPOL_OFF_CPU;
}

uint64_t cpol_now(const struct cpol *p)
{
	return p->clock();
}

static uint64_t since(const struct cpol *p, uint64_t t0)
{
	uint64_t t = p->clock();
	return t > t0 ? t - t0 : 0;
}

void cpol_cpu_done(struct cpol *p, uint64_t t0)
{
	p->cpu_ns += since(p, t0);
}

void cpol_io_done(struct cpol *p, uint64_t t0, uint64_t bytes, bool sync)
{
	uint64_t ns = since(p, t0);
	if (!sync) {
		p->io_ns += ns;
		p->io_bytes += bytes;
		return;
	}
	/* A small sync measures the disk's latency, not its rate: it leaves the estimate alone. */
	if (p->io_bytes >= CPOL_SYNC_MIN)
		p->disk_per64k = ((p->io_ns + ns) << FIX_SHIFT) / p->io_bytes;
	p->io_ns = p->io_bytes = 0;
}

/* The end of a window: update c and r, then decide. */
static void decide(struct cpol *p)
{
	/* Only raises a sync's estimate: a page cache taking writes at memory speed is no disk measured. */
	if (p->disk_per64k && p->io_bytes >= CPOL_SYNC_MIN) {
		uint64_t lower = (p->io_ns << FIX_SHIFT) / p->io_bytes;
		if (lower > p->disk_per64k)
			p->disk_per64k = lower;
	}
	if (p->cpu_plain) {
		p->cpu_per64k = (p->cpu_ns << FIX_SHIFT) / p->cpu_plain;
		p->ratio_per64k = (p->cpu_stored << FIX_SHIFT) / p->cpu_plain;
		if (p->ratio_per64k > FIX_ONE)
			p->ratio_per64k = FIX_ONE; /* raw pieces and the piece table: never below no saving */
	}
	enum cpol_state was = p->state;
	p->win_plain = p->cpu_ns = p->cpu_plain = p->cpu_stored = 0;
	if (was == CPOL_OFF_CPU) {
		if (++p->raw_windows >= p->probe_every) {
			p->raw_windows = 0;
			p->state = CPOL_ON_PROBE;
		}
		return;
	}
	if (!p->disk_per64k)
		return; /* unmeasured: keep compressing */
	uint64_t saved = p->disk_per64k * (FIX_ONE - p->ratio_per64k) >> FIX_SHIFT;
	bool shrinks = p->ratio_per64k < FIX_ONE - FIX_ONE / CPOL_SAMPLE_GAIN_DIV;
	bool pays = was == CPOL_ON_PROBE ? p->cpu_per64k * RESUME_DEN < saved * RESUME_NUM : p->cpu_per64k <= saved;
	p->state = (pays || !shrinks) ? CPOL_ON_PAYS : CPOL_OFF_CPU;
	if (p->state == CPOL_OFF_CPU)
		p->probe_every = was != CPOL_ON_PROBE         ? CPOL_PROBE_EVERY
				 : p->probe_every * 2 > CPOL_PROBE_MAX ? CPOL_PROBE_MAX
								       : p->probe_every * 2;
}

void cpol_record(struct cpol *p, uint64_t plain, uint64_t stored, bool compressed)
{
	p->win_plain += plain;
	if (compressed) {
		p->cpu_plain += plain;
		p->cpu_stored += stored;
	}
	if (p->win_plain >= CPOL_WINDOW)
		decide(p);
}

const char *cpol_reason(const struct cpol *p)
{
	switch (p->state) {
	case CPOL_ON_UNMEASURED:
		return "on (disk not measured)";
	case CPOL_ON_PAYS:
		return "on (pays)";
	case CPOL_OFF_CPU:
		return "off (CPU-bound)";
	case CPOL_ON_PROBE:
		return "on (probing)";
	}
	return "on";
}
