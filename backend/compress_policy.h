/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Whether LZ4 pays, decided twice, cheaply:
 *
 * - Per piece (compress.c's 64 KiB pieces), from samples: a quick LZ4 of
 *   CPOL_SAMPLE bytes at the piece's head and, when that does not pay, at its
 *   middle. When neither shrinks by 1/CPOL_SAMPLE_GAIN_DIV the piece is
 *   stored raw with no full compression attempt. Chosen by measurement
 *   (docs/benchmarks.md, "Compression decision"): a byte-histogram entropy
 *   calls LZ data with random literals and LZ4 output of text the wrong way
 *   round, 2 KiB samples miss matches further back, a head sample alone
 *   misjudges 3.9% of a backup-like stream's pieces, head-else-middle 1.4%.
 *
 * - Per cartridge, from measured time: compressing a host byte costs c ns of
 *   the writer's time and saves (1 - r) of the d ns the disk takes per stored
 *   byte (r = stored / plain of what was compressed; d from the writes' and
 *   the syncs' waits). LZ4 pays while c < d * (1 - r); when it does not, the
 *   CPU and not the disk is the bottleneck and records are stored raw, with
 *   a probe window of compression now and then to see whether it pays again.
 *
 * The clock is a function pointer so that tests drive the feedback with a
 * simulated one. The module does no I/O and holds no locks: the cartridge's
 * writer owns its struct cpol.
 */
#ifndef VTL_BACKEND_COMPRESS_POLICY_H
#define VTL_BACKEND_COMPRESS_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Bytes of one sample (the measurement's pick, docs/benchmarks.md). */
#define CPOL_SAMPLE (4u << 10)
/*
 * A sample must shrink by 1/8 for its piece to be worth a full attempt: less
 * saves under 8 KiB of disk per 64 KiB piece for a full pass over it.
 */
#define CPOL_SAMPLE_GAIN_DIV 8u

/* Host bytes in one feedback window. */
#define CPOL_WINDOW (32ull << 20)
/* Bytes a sync must cover for its time to count as bandwidth rather than latency. */
#define CPOL_SYNC_MIN (4ull << 20)
/*
 * Windows stored raw before the first probe window once the CPU is the bottleneck; each probe that
 * finds it still so doubles the wait, up to CPOL_PROBE_MAX (64 windows, 2 GiB of host data): a
 * stream that stays CPU-bound pays 1/65 of it compressed instead of 1/9.
 */
#define CPOL_PROBE_EVERY 8u
#define CPOL_PROBE_MAX 64u

/* Why the cartridge compresses or not, for status displays. */
enum cpol_state {
	CPOL_ON_UNMEASURED, /* no disk time measured yet: compress, as the mode page asks */
	CPOL_ON_PAYS,       /* compressing costs less than the disk time it saves */
	CPOL_OFF_CPU,       /* the CPU is the bottleneck: stored raw */
	CPOL_ON_PROBE,      /* a probe window while off */
};

struct cpol {
	uint64_t (*clock)(void); /* ns; vtl_mono_ns unless a test injects its own */
	enum cpol_state state;
	unsigned raw_windows; /* windows stored raw since the last probe */
	unsigned probe_every; /* raw windows before the next probe: CPOL_PROBE_EVERY, doubled by each failed probe */
	/* The window being measured. */
	uint64_t win_plain;    /* host bytes written */
	uint64_t cpu_ns;       /* time compressing (the compressed records only) */
	uint64_t cpu_plain;    /* host bytes of the compressed records */
	uint64_t cpu_stored;   /* their stored bytes */
	/* Disk time: writes and syncs, with the stored bytes they covered. */
	uint64_t io_ns, io_bytes;
	uint64_t unsynced_stored; /* stored bytes since the last sync, for the sync's share */
	/* The last estimates, in ns per 2^16 bytes (fixed point); 0 = unknown. */
	uint64_t disk_per64k;
	uint64_t cpu_per64k;
	uint64_t ratio_per64k; /* stored per 2^16 plain bytes of compressed records */
};

/* Sets p up in state CPOL_ON_UNMEASURED, reading time from clock (NULL = the monotonic clock). */
void cpol_init(struct cpol *p, uint64_t (*clock)(void));

/* Whether the piece src[len] is worth a full LZ4 attempt, judged from its sample; no state. */
bool cpol_sample_pays(const void *src, size_t len);

/* Whether the next record should be offered to the compressor (its pieces are still sampled). */
bool cpol_compress_next(const struct cpol *p);

/* The policy's clock, for the t0 of cpol_cpu_done and cpol_io_done. */
uint64_t cpol_now(const struct cpol *p);

/* A compression that started at t0 has ended. */
void cpol_cpu_done(struct cpol *p, uint64_t t0);

/* A write of stored bytes (or a sync: bytes 0, it covers what was written since the last one) that started at t0 has ended. */
void cpol_io_done(struct cpol *p, uint64_t t0, uint64_t bytes, bool sync);

/* A record of plain host bytes was stored in stored bytes, compressed or not; may end the window and decide. */
void cpol_record(struct cpol *p, uint64_t plain, uint64_t stored, bool compressed);

/* The state and its reason, short, for status displays: "on (pays)", "off (CPU-bound)", ... (a static string). */
const char *cpol_reason(const struct cpol *p);

#endif
