/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Benchmark of a recall (issue 9): a migrated cartridge staged back from a
 * simulated LTO drive (migrator/phys_sim.c, with modelled load and locate
 * times) by migrate_recall, while a "host" reads it through a follower the
 * way the virtual drive does (vtl/drive/ssc_stage.c): it polls the catalog
 * until the cache state is RECALLING and records are on disk, then reads
 * every block to the end, waiting through the follower's more hook whenever
 * it overtakes the stage.
 *
 * Figures: the time to the host's first block after the modelled mount and
 * locate (target <= 2 s), and the stage's rate as a share of the drive's
 * read rate measured in the same run through the same phys calls (target
 * >= 95%). Nothing passes or fails on time: the exit status is non-zero
 * only when something fails (a call, the data read back, the cleanup).
 *
 * Knobs (environment): VTL_BENCH_DIR (/var/tmp), VTL_BENCH_RECALL_MB (4096),
 * VTL_BENCH_GEN (9), VTL_BENCH_LOAD_MS (3000), VTL_BENCH_LOCATE_MS (2000).
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "backend/cartridge.h"
#include "backend/pool.h"
#include "catalog/catalog.h"
#include "common/crc32c.h"
#include "common/grow.h"
#include "common/vtl_error.h"
#include "migrator/migrate.h"
#include "migrator/phys_sim.h"
#include "migrator/policy.h"
#include "config/media.h"
#include "tests/bench/bench_util.h"

#define BLOCK (256u << 10)        /* host block size of the cartridge */
#define MB 1e6
#define PATTERNS 16               /* distinct compressible blocks, each written again with a new stamp */
#define STAMP_LEN 8               /* the block number at the start of each block: no two blocks alike */
#define LITERAL_MIN 16            /* compressible data: random literals of 16..32 bytes ... */
#define LITERAL_SPAN 17
#define REPEAT_EXTRA 17           /* ... each followed by a repeat this much longer: LZ4 stores it at about 2:1 */
#define BACKREF_MIN 64            /* a repeat copies earlier bytes from 64..4063 bytes back, or is a run */
#define BACKREF_SPAN 4000
#define FILLER_MB 64              /* a copy stacked before the recalled one, so that its recall needs a locate */
#define FREE_MARGIN (1ull << 30)  /* free space wanted beyond the cartridge's two copies (pool and tape) */
#define TARGET_TTFB_S 2.0         /* issue 9: first block at most 2 s after the modelled mount and locate */
#define TARGET_SHARE 0.95         /* issue 9: at least 95% of the drive's rate */
#define STAGE_POLL_MS 20          /* how often the host asks the catalog, as the drive does (ssc_stage.c) */
#define STAGE_WAIT_US 2000        /* a read that overtook the stage looks again after this (ssc_stage.c) */
#define SIM_SLOTS 8
#define SIM_TAPES 4
#define RECALLED "RCL001L9"
#define FILLER "FIL001L9"
#define PHYS_NAME "bench-sim"
#define VIRT_NAME "bench"
/* The migrator's default ring (config/config.c): it sets B, the block size of the copy on tape. */
#define RING_BUFFERS 64
#define RING_BUFFER_SIZE (1u << 20)
#define RING_WATERMARK 32
#define RING_READERS 4
#define CRC_PASSES 1024           /* 256 MiB of CRC32C over the patterns: long enough to time, short enough not to matter */

static char dir[4096];

_Noreturn static void die(const char *what, int rc)
{
	fprintf(stderr, "bench_recall: %s: %s\n", what, rc ? vtl_strerror(rc) : strerror(errno));
	exit(1);
}

_Noreturn static void die_msg(const char *what, const char *msg)
{
	fprintf(stderr, "bench_recall: %s: %s\n", what, msg);
	exit(1);
}


static void sleep_us(unsigned us)
{
	struct timespec ts = {us / 1000000u, (long)(us % 1000000u) * 1000};
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

static void cleanup(void)
{
	bench_rmtree(dir);
}

/* The load average over the last minute: other work on the machine shows in the figures. */
static double load1(void)
{
	double l[1];
	return getloadavg(l, 1) == 1 ? l[0] : -1;
}


/* ------------------------------------------------------------ the data */

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

static uint64_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

/*
 * Data that compresses like a backup's, about 2:1 under LZ4: random literals,
 * each followed by a run of one byte or a copy of earlier bytes of the block.
 * Random data alone would make the stored stream as long as the host's data
 * and hide what compression does to the recall (the stream on tape is stored,
 * compressed; the host reads it decompressed).
 */
static void fill_backup_like(uint8_t *b, size_t n)
{
	size_t at = 0;
	while (at < n) {
		size_t lit = LITERAL_MIN + (size_t)(rng() % LITERAL_SPAN);
		for (size_t i = 0; i < lit && at < n; i++)
			b[at++] = (uint8_t)rng();
		size_t m = lit + REPEAT_EXTRA;
		if (m > n - at)
			m = n - at;
		uint64_t r = rng();
		size_t back = BACKREF_MIN + (size_t)((r >> 8) % BACKREF_SPAN);
		if ((r & 1) || at < back)
			memset(b + at, (int)((r >> 16) & 0xff), m);
		else
			memmove(b + at, b + at - back, m);
		at += m;
	}
}

static uint8_t pattern[PATTERNS][BLOCK];

/* Host block i: a pattern with i stamped at its start. */
static void block_of(uint64_t i, uint8_t *out)
{
	memcpy(out, pattern[i % PATTERNS], BLOCK);
	memcpy(out, &i, STAMP_LEN);
}

/* What writing a cartridge took. */
struct written {
	uint64_t blocks, host_bytes, stored_bytes;
	double secs;
};

/* A cartridge of the library's catalog and the pool: blocks of backup-like data and a filemark, LZ4 on. */
static void make_cart(struct vtl_pool *pool, struct vtl_catalog *cat, const char *bc, uint64_t mb, struct written *w)
{
	struct vtl_label label;
	char err[256];
	if (vtl_label_parse(bc, &label, err, sizeof err))
		die_msg(bc, err);
	struct cat_cartridge cc = {.media = label.media, .capacity = label.capacity, .element = CAT_NO_ELEMENT};
	snprintf(cc.barcode, sizeof cc.barcode, "%s", bc);
	snprintf(cc.state, sizeof cc.state, "available");
	int rc = catalog_cartridge_add(cat, &cc);
	if (rc)
		die_msg("catalog_cartridge_add", catalog_last_error(cat));
	if ((rc = vtl_cart_create(pool, bc)))
		die("vtl_cart_create", rc);
	struct vtl_cart_params p = {.compression = true};
	struct vtl_cart *c;
	if ((rc = vtl_cart_open(pool, bc, &p, &c)))
		die("vtl_cart_open", rc);
	static uint8_t buf[BLOCK];
	memset(w, 0, sizeof *w);
	w->blocks = mb * (1u << 20) / BLOCK;
	double t0 = bench_now_s();
	for (uint64_t i = 0; i < w->blocks; i++) {
		block_of(i, buf);
		if ((rc = vtl_cart_write_block(c, buf, BLOCK)) < 0)
			die("vtl_cart_write_block", rc);
	}
	if ((rc = vtl_cart_write_filemarks(c, 1)) < 0)
		die("vtl_cart_write_filemarks", rc);
	struct vtl_cart_stats st;
	vtl_cart_stats(c, &st);
	struct vtl_position pos;
	vtl_cart_position(c, &pos);
	if ((rc = vtl_cart_close(c)))
		die("vtl_cart_close", rc);
	w->secs = bench_now_s() - t0;
	w->host_bytes = st.written_bytes;
	w->stored_bytes = st.written_stored;
	if ((rc = catalog_cartridge_usage(cat, bc, w->host_bytes, pos.stored_bytes, pos.eod, false)))
		die_msg("catalog_cartridge_usage", catalog_last_error(cat));
}

/* ------------------------------------------- the library, with a stopwatch */

/*
 * The simulated library behind a pass-through that timestamps what the
 * recall pays for: the load of a tape into a drive, the locate, and the time
 * the drive spends in reads (the stage reads through a ring on its own
 * thread: the rest of the stage's time is the drive standing still).
 */
struct timed_lib {
	struct phys_lib base;
	struct phys_lib *in;
	double load_start, load_end;     /* the last move into a drive */
	double locate_start, locate_end; /* the last locate */
	double read_s;                   /* inside read_block, in all */
};

static struct timed_lib *timed_of(struct phys_lib *l)
{
	return (struct timed_lib *)l;
}

/* Passes rc on, with the simulated library's words for a failure. */
static int passed(struct phys_lib *l, int rc)
{
	return rc ? phys_fail(l, rc, "%s", phys_error(timed_of(l)->in)) : rc;
}

static int t_inventory(struct phys_lib *l, struct phys_element *out, unsigned cap, unsigned *n)
{
	struct phys_lib *in = timed_of(l)->in;
	return passed(l, in->ops->inventory(in, out, cap, n));
}

static int t_move(struct phys_lib *l, uint16_t from, uint16_t to)
{
	struct timed_lib *t = timed_of(l);
	double t0 = bench_now_s();
	int rc = t->in->ops->move(t->in, from, to);
	if (rc == VTL_OK && phys_drive_of(t->in, to) >= 0) {
		t->load_start = t0;
		t->load_end = bench_now_s();
	}
	return passed(l, rc);
}

static int t_unload(struct phys_lib *l, unsigned d)
{
	struct phys_lib *in = timed_of(l)->in;
	return passed(l, in->ops->unload(in, d));
}

static int t_rewind(struct phys_lib *l, unsigned d)
{
	struct phys_lib *in = timed_of(l)->in;
	return passed(l, in->ops->rewind(in, d));
}

static int t_write_block(struct phys_lib *l, unsigned d, const void *buf, size_t len)
{
	struct phys_lib *in = timed_of(l)->in;
	return passed(l, in->ops->write_block(in, d, buf, len));
}

static int t_write_filemarks(struct phys_lib *l, unsigned d, unsigned n)
{
	struct phys_lib *in = timed_of(l)->in;
	return passed(l, in->ops->write_filemarks(in, d, n));
}

static int t_read_block(struct phys_lib *l, unsigned d, void *buf, size_t cap, size_t *len)
{
	struct timed_lib *t = timed_of(l);
	double t0 = bench_now_s();
	int rc = t->in->ops->read_block(t->in, d, buf, cap, len);
	t->read_s += bench_now_s() - t0;
	return passed(l, rc);
}

static int t_space_filemarks(struct phys_lib *l, unsigned d, int64_t n)
{
	struct phys_lib *in = timed_of(l)->in;
	return passed(l, in->ops->space_filemarks(in, d, n));
}

static int t_locate(struct phys_lib *l, unsigned d, uint64_t block)
{
	struct timed_lib *t = timed_of(l);
	double t0 = bench_now_s();
	int rc = t->in->ops->locate(t->in, d, block);
	t->locate_start = t0;
	t->locate_end = bench_now_s();
	return passed(l, rc);
}

static int t_status(struct phys_lib *l, unsigned d, struct phys_drive_status *st)
{
	struct phys_lib *in = timed_of(l)->in;
	return passed(l, in->ops->status(in, d, st));
}

static void t_close(struct phys_lib *l)
{
	struct phys_lib *in = timed_of(l)->in;
	in->ops->close(in);
}

static const struct phys_ops timed_ops = {
	.kind = "sim", /* the migrator asks the simulated drive for its back-hitch counts by this name */
	.inventory = t_inventory,
	.move = t_move,
	.unload = t_unload,
	.rewind = t_rewind,
	.write_block = t_write_block,
	.write_filemarks = t_write_filemarks,
	.read_block = t_read_block,
	.space_filemarks = t_space_filemarks,
	.locate = t_locate,
	.status = t_status,
	.close = t_close,
};

static void timed_wrap(struct timed_lib *t, struct phys_lib *in)
{
	memset(t, 0, sizeof *t);
	t->in = in;
	t->base.ops = &timed_ops;
	t->base.drives = in->drives;
	memcpy(t->base.drive_addr, in->drive_addr, sizeof t->base.drive_addr);
}

/* ------------------------------------------------------------ baselines */

/*
 * The drive's read rate: the copy read back block by block through the same
 * read_block calls the stage makes, with nothing done with the data. Timed
 * from after the header block (the locate and the header are not the rate)
 * to the filemark that ends the copy.
 */
static double drive_read_alone(struct phys_lib *l, unsigned d, uint64_t block, uint64_t *bytes)
{
	int rc = l->ops->locate(l, d, block);
	if (rc)
		die_msg("baseline: locate", phys_error(l));
	uint8_t *buf = malloc(RING_BUFFER_SIZE);
	if (!buf)
		die("malloc", VTL_E_NOMEM);
	size_t len;
	if ((rc = l->ops->read_block(l, d, buf, RING_BUFFER_SIZE, &len)))
		die_msg("baseline: reading the header block", phys_error(l));
	*bytes = 0;
	double t0 = bench_now_s();
	while ((rc = l->ops->read_block(l, d, buf, RING_BUFFER_SIZE, &len)) == VTL_OK)
		*bytes += len;
	double secs = bench_now_s() - t0;
	free(buf);
	if (rc != VTL_W_FILEMARK)
		die_msg("baseline: reading the copy", phys_error(l));
	return (double)*bytes / secs / MB;
}

/*
 * CRC32C over data in memory: the stage checks each block of the copy and
 * each record (twice: the walker, then the append), so this rate bounds
 * what its own work can reach.
 */
static double crc_alone(void)
{
	uint32_t crc = 0;
	double t0 = bench_now_s();
	for (unsigned i = 0; i < CRC_PASSES; i++)
		crc = crc32c(crc, pattern[i % PATTERNS], BLOCK);
	double secs = bench_now_s() - t0;
	/* Printed with the rate so that the compiler cannot leave the loop out. */
	printf("  CRC32C over data in memory             %8.1f MB/s  (%s, checksum %08x)\n",
	       (double)CRC_PASSES * BLOCK / secs / MB, crc32c_hw() ? "SSE4.2" : "portable", crc);
	return (double)CRC_PASSES * BLOCK / secs / MB;
}

/* Puts the tape of drive d back in the first empty slot, so that the recall pays for its load. */
static void unmount(struct phys_lib *l, unsigned d)
{
	struct phys_element e[SIM_SLOTS + PHYS_MAX_DRIVES];
	unsigned n;
	int rc = l->ops->inventory(l, e, VTL_ARRAY_SIZE(e), &n);
	if (rc)
		die_msg("inventory", phys_error(l));
	int slot = -1;
	for (unsigned i = 0; i < n && i < VTL_ARRAY_SIZE(e)&& slot < 0; i++)
		if (e[i].type == PHYS_ELEM_SLOT && !e[i].full)
			slot = (int)i;
	if (slot < 0)
		die_msg("unmount", "the simulated library has no empty slot");
	if ((rc = l->ops->unload(l, d)) || (rc = l->ops->move(l, l->drive_addr[d], e[slot].address)))
		die_msg("unmount", phys_error(l));
}

/* ------------------------------------------------------------ the recall */

/* What the stage reported, from its progress callback (the recall's thread). */
struct stage_watch {
	atomic_bool on;             /* only the recall is watched, not the copies before it */
	const struct timed_lib *tl;
	double first_at, last_at;   /* the first data block off tape, the last one */
	double read_first, read_last; /* the time in the drive's reads by then */
	uint64_t first_bytes, bytes, total;
};

static void on_progress(void *arg, const char *barcode, const struct stream_progress *p)
{
	(void)barcode;
	struct stage_watch *w = arg;
	if (!atomic_load(&w->on))
		return;
	double t = bench_now_s();
	if (!w->first_at) {
		/* The stage reports first as it feeds the first data block: that block is off the tape. */
		w->first_at = t;
		w->first_bytes = p->bytes;
		w->read_first = w->tl->read_s; /* the same thread makes the reads: no race */
	}
	w->last_at = t;
	w->read_last = w->tl->read_s;
	w->bytes = p->bytes;
	w->total = p->total;
}

struct recall_run {
	struct migrator *m;
	double start, done;
	int rc;
	char err[512];
	atomic_bool finished;
};

static void *recall_thread(void *arg)
{
	struct recall_run *r = arg;
	r->rc = migrate_recall(r->m, RECALLED, 0, r->err, sizeof r->err);
	r->done = bench_now_s();
	atomic_store(&r->finished, true);
	return NULL;
}

/* The host: a virtual drive's reads of the cartridge while it is staged back. */
struct host {
	struct vtl_catalog *cat;      /* its own handle, as vtld has its own */
	struct vtl_pool *pool;
	const struct recall_run *recall;
	uint64_t blocks;              /* data blocks expected, then one filemark */
	double last_poll;
	bool running;                 /* the stage, as the last poll saw it */
	double ready_at, first_at, end_at;
	uint64_t read_blocks, read_bytes, filemarks;
	uint64_t waits, opens;        /* more-hook calls (the host overtook the stage), follower opens */
	double waited_s;
	bool saw_recalling;           /* the host found the stage running (read-through), not finished */
	int rc;
	char err[256];
};

/* The stage as the drive's poll sees it: running while recalling, or still to start. */
static bool poll_stage(struct host *h, enum cat_cache_state *st)
{
	struct cat_cartridge cc;
	h->last_poll = bench_now_s();
	if (catalog_cartridge_get(h->cat, RECALLED, &cc) != VTL_OK)
		return h->running = true; /* the catalog is busy: ask again, as the drive does */
	if (st)
		*st = cc.cache;
	h->running = cc.cache == CAT_CACHE_RECALLING ||
		     (cc.cache == CAT_CACHE_MIGRATED && !atomic_load(&h->recall->finished));
	return h->running;
}

static int host_more(void *arg)
{
	struct host *h = arg;
	double t0 = bench_now_s();
	h->waits++;
	sleep_us(STAGE_WAIT_US);
	if (bench_now_s() - h->last_poll >= STAGE_POLL_MS / 1e3)
		poll_stage(h, NULL);
	h->waited_s += bench_now_s() - t0;
	return h->running;
}

static int host_fail(struct host *h, int rc, const char *what)
{
	h->rc = rc ? rc : VTL_E_CORRUPT;
	snprintf(h->err, sizeof h->err, "%s", what);
	return h->rc;
}

/* Waits, as the drive does while "becoming ready", until records are on disk; *c gets the open cartridge. */
static int host_wait_ready(struct host *h, struct vtl_cart **c)
{
	struct vtl_cart_params p = {.follow = true, .more = host_more, .more_arg = h};
	for (;;) {
		enum cat_cache_state st = CAT_CACHE_MIGRATED;
		bool running = poll_stage(h, &st);
		if (st == CAT_CACHE_PREMIGRATED) {
			/* Staged before the host looked: no read-through (the report says so). */
			int rc = vtl_cart_open(h->pool, RECALLED, &p, c);
			return rc ? host_fail(h, rc, "opening the staged cartridge") : VTL_OK;
		}
		if (!running)
			return host_fail(h, VTL_E_MEDIUM, "the recall ended without the data");
		if (st == CAT_CACHE_RECALLING) {
			int rc = vtl_cart_open(h->pool, RECALLED, &p, c);
			if (rc)
				return host_fail(h, rc, "opening the follower");
			h->opens++;
			uint64_t eod = 0;
			if ((rc = vtl_cart_refresh(*c, &eod)))
				return host_fail(h, rc, "vtl_cart_refresh");
			if (eod > 0) {
				h->saw_recalling = true;
				return VTL_OK;
			}
			vtl_ignore(vtl_cart_close(*c)); /* a read-only follower: its close loses nothing */
		}
		sleep_us(STAGE_POLL_MS * 1000u);
	}
}

static void *host_thread(void *arg)
{
	struct host *h = arg;
	struct vtl_cart *c;
	if (host_wait_ready(h, &c))
		return NULL;
	h->ready_at = bench_now_s();
	uint8_t *got = malloc(BLOCK), *want = malloc(BLOCK);
	if (!got || !want) {
		free(got);
		free(want);
		vtl_ignore(vtl_cart_close(c)); /* a read-only follower: its close loses nothing */
		host_fail(h, VTL_E_NOMEM, "malloc");
		return NULL;
	}
	for (;;) {
		struct vtl_read_result r;
		int rc = vtl_cart_read(c, got, BLOCK, &r);
		if (rc) {
			host_fail(h, rc, "vtl_cart_read");
			break;
		}
		if (r.type == VTL_OBJ_EOD)
			break;
		if (r.type == VTL_OBJ_FILEMARK) {
			h->filemarks++;
			continue;
		}
		if (!h->first_at)
			h->first_at = bench_now_s();
		block_of(h->read_blocks, want);
		if (h->filemarks || r.length != BLOCK || r.copied != BLOCK || memcmp(got, want, BLOCK)) {
			char what[128];
			snprintf(what, sizeof what, "block %llu reads back wrong", (unsigned long long)h->read_blocks);
			host_fail(h, VTL_E_CORRUPT, what);
			break;
		}
		h->read_blocks++;
		h->read_bytes += r.copied;
	}
	h->end_at = bench_now_s();
	if (!h->rc && (h->read_blocks != h->blocks || h->filemarks != 1)) {
		char what[128];
		snprintf(what, sizeof what, "read %llu blocks and %llu filemarks, not %llu and 1",
			 (unsigned long long)h->read_blocks, (unsigned long long)h->filemarks,
			 (unsigned long long)h->blocks);
		host_fail(h, VTL_E_CORRUPT, what);
	}
	free(got);
	free(want);
	vtl_ignore(vtl_cart_close(c)); /* a read-only follower: its close loses nothing */
	return NULL;
}

/* "met", or by how much it is missed, in the target's unit. */
static void verdict(char *out, size_t cap, bool met, double by, const char *unit)
{
	if (met)
		snprintf(out, cap, "met");
	else
		snprintf(out, cap, "missed by %.3f%s", by, unit);
}

int main(void)
{
	const char *base_dir = getenv("VTL_BENCH_DIR") ? getenv("VTL_BENCH_DIR") : "/var/tmp";
	uint64_t mb = bench_env_ul("VTL_BENCH_RECALL_MB", 4096);
	unsigned gen = (unsigned)bench_env_ul("VTL_BENCH_GEN", 9);
	unsigned load_ms = (unsigned)bench_env_ul("VTL_BENCH_LOAD_MS", 3000);
	unsigned locate_ms = (unsigned)bench_env_ul("VTL_BENCH_LOCATE_MS", 2000);
	double native = phys_sim_native_rate(gen);
	if (!native) {
		fprintf(stderr, "bench_recall: VTL_BENCH_GEN=%u: use 5..9\n", gen);
		return 1;
	}
	if (mb * (1u << 20) < BLOCK) {
		fprintf(stderr, "bench_recall: VTL_BENCH_RECALL_MB=%llu: at least 1\n", (unsigned long long)mb);
		return 1;
	}
	if (!bench_make_dir(dir, sizeof dir, base_dir, "vtl-bench-recall", cleanup))
		die(dir, 0);
	struct statvfs sv;
	/* Counted as if incompressible: the pool's copy, the tape file's, and the filler's. */
	uint64_t need = 2 * ((mb + FILLER_MB) << 20) + FREE_MARGIN;
	if (statvfs(dir, &sv) == 0 && (uint64_t)sv.f_bavail * sv.f_frsize < need) {
		fprintf(stderr, "bench_recall: %s has less than the %llu MiB free this run needs\n", dir,
			(unsigned long long)(need >> 20));
		return 1;
	}
	char m0[4200], m1[4200], tapes[4200], catpath[4200];
	snprintf(m0, sizeof m0, "%s/m0", dir);
	snprintf(m1, sizeof m1, "%s/m1", dir);
	snprintf(tapes, sizeof tapes, "%s/tapes", dir);
	snprintf(catpath, sizeof catpath, "%s/catalog.db", dir);
	if (mkdir(m0, 0755) != 0 || mkdir(m1, 0755) != 0)
		die("mkdir", 0);
	struct vtl_pool_config pc = {.members = {m0, m1}, .n_members = 2};
	struct vtl_pool *pool;
	char err[512];
	int rc = vtl_pool_open(&pc, &pool, err, sizeof err);
	if (rc)
		die_msg("vtl_pool_open", err);
	struct vtl_catalog *cat, *host_cat;
	if ((rc = catalog_open(catpath, true, &cat, err, sizeof err)) ||
	    (rc = catalog_open(catpath, false, &host_cat, err, sizeof err)))
		die_msg("catalog_open", err);
	struct phys_sim_config sc = {.generation = gen, .drives = 1, .slots = SIM_SLOTS, .tapes = SIM_TAPES,
				     .load_ms = load_ms, .locate_ms = locate_ms, .data_dir = tapes};
	struct phys_lib *sim;
	if ((rc = phys_sim_open(&sc, &sim, err, sizeof err)))
		die_msg("phys_sim_open", err);
	struct timed_lib tl;
	timed_wrap(&tl, sim);
	struct phys_lib *lib = &tl.base;

	for (unsigned i = 0; i < PATTERNS; i++)
		fill_backup_like(pattern[i], BLOCK);
	printf("== bench_recall: a %llu MiB cartridge (256 KiB blocks of ~2:1 compressible data, LZ4 on) recalled from a\n"
	       "   simulated LTO-%u (native %.0f MB/s; modelled load %u ms, locate %u ms) while a host reads it;\n"
	       "   copy blocks of %u KiB (the migrator's default ring); pool of 2 members in %s\n",
	       (unsigned long long)mb, gen, native, load_ms, locate_ms, RING_BUFFER_SIZE >> 10, dir);
	printf("   %ld CPUs online, load average %.2f at the start\n", sysconf(_SC_NPROCESSORS_ONLN), load1());
	fflush(stdout);

	struct stage_watch watch = {.tl = &tl};
	struct migrator m = {.cat = cat, .pool = pool, .lib = lib, .phys_name = PHYS_NAME, .virt_name = VIRT_NAME,
			     .ring = {.buffers = RING_BUFFERS, .buffer_size = RING_BUFFER_SIZE, .watermark = RING_WATERMARK,
				      .readers = RING_READERS},
			     .verify = true, .drive = -1, .progress = on_progress, .progress_arg = &watch};
	unsigned added;
	if ((rc = migrate_scan_tapes(&m, phys_sim_native_capacity(gen), &added, err, sizeof err)))
		die_msg("migrate_scan_tapes", err);

	/* Not timed: the cartridges, their copies, the release. */
	struct written filler, w;
	make_cart(pool, cat, FILLER, FILLER_MB, &filler);
	make_cart(pool, cat, RECALLED, mb, &w);
	struct migrate_report rf, rep;
	if ((rc = migrate_copy(&m, FILLER, 0, &rf, err, sizeof err)) || (rc = migrate_copy(&m, RECALLED, 0, &rep, err, sizeof err)))
		die_msg("migrate_copy", err);
	unsigned d;
	if ((rc = migrate_mount(&m, rep.tape, &d, err, sizeof err)))
		die_msg("migrate_mount", err);
	uint64_t base_bytes;
	double base = drive_read_alone(lib, d, rep.copy.block, &base_bytes);
	uint64_t freed;
	if ((rc = policy_release(cat, pool, NULL, RECALLED, "bench_recall", &freed, err, sizeof err)))
		die_msg("policy_release", err);
	unmount(lib, d);
	printf("\n   %s: %llu blocks, %.1f MB host, %.1f MB stored (%.2f:1); copied to %s file %u at block %llu,\n"
	       "   after %s's copy (so the recall locates), verified; disk copy released (%.1f MB), tape back in its slot\n",
	       RECALLED, (unsigned long long)w.blocks, (double)w.host_bytes / MB, (double)w.stored_bytes / MB,
	       (double)w.host_bytes / (double)w.stored_bytes, rep.tape, rep.file, (unsigned long long)rep.copy.block,
	       FILLER, (double)freed / MB);

	printf("\n== Baselines (same run)\n"
	       "  the drive reading the copy alone       %8.1f MB/s  (%.1f MB through the same read_block calls, nothing\n"
	       "                                                        done with the data; modelled native %.0f MB/s)\n"
	       "  the pool writing the cartridge         %8.1f MB/s  host, %.1f MB/s stored (the host's writes, LZ4 on;\n"
	       "                                                        the stage appends stored records, no LZ4)\n",
	       base, (double)base_bytes / MB, native, (double)w.host_bytes / w.secs / MB,
	       (double)w.stored_bytes / w.secs / MB);
	double crc_mbs = crc_alone();
	fflush(stdout);

	/* The recall, with the host reading through it. */
	struct recall_run run = {.m = &m};
	struct host h = {.cat = host_cat, .pool = pool, .recall = &run, .blocks = w.blocks};
	atomic_store(&watch.on, true);
	pthread_t rt, ht;
	run.start = bench_now_s();
	if (pthread_create(&ht, NULL, host_thread, &h) || pthread_create(&rt, NULL, recall_thread, &run))
		die("pthread_create", 0);
	pthread_join(rt, NULL);
	pthread_join(ht, NULL);
	atomic_store(&watch.on, false);
	if (run.rc)
		die_msg("migrate_recall", run.err);
	if (h.rc)
		die_msg("the host's read", h.err);
	struct cat_cartridge cc;
	if ((rc = catalog_cartridge_get(cat, RECALLED, &cc)))
		die_msg("catalog_cartridge_get", catalog_last_error(cat));
	if (cc.cache != CAT_CACHE_PREMIGRATED)
		die_msg("after the recall", "the cartridge is not premigrated");
	if (!watch.first_at || watch.bytes != watch.total)
		die_msg("the stage's progress", "it did not report the whole stream");

	double t0 = run.start;
	double modelled = (load_ms + locate_ms) / 1e3;
	double mount_locate = tl.locate_end - t0; /* from the start to the end of the modelled locate */
	double ttfb = h.first_at - tl.locate_end;
	double stage_s = watch.last_at - watch.first_at;
	double stage_mbs = (double)(watch.bytes - watch.first_bytes) / stage_s / MB;
	double share = stage_mbs / base;
	double host_s = h.end_at - h.first_at;
	char v_ttfb[64], v_share[64];
	verdict(v_ttfb, sizeof v_ttfb, ttfb <= TARGET_TTFB_S, ttfb - TARGET_TTFB_S, " s");
	verdict(v_share, sizeof v_share, share >= TARGET_SHARE, TARGET_SHARE - share, " x");

	printf("\n== Recall (seconds from migrate_recall's start; the host polls every %d ms, waits %d us when ahead)\n"
	       "  %-44s %10s   %-22s %s\n", STAGE_POLL_MS, STAGE_WAIT_US, "", "measured", "target", "");
	printf("  %-44s %8.3f s\n", "modelled load + locate (configured)", modelled);
	printf("  %-44s %8.3f s   (load %.3f s, locate %.3f s)\n", "tape loaded and located", mount_locate,
	       tl.load_end - tl.load_start, tl.locate_end - tl.locate_start);
	printf("  %-44s %8.3f s\n", "first data block off the tape", watch.first_at - t0);
	printf("  %-44s %8.3f s   (%llu follower opens before)\n", "host: records on disk, drive ready",
	       h.ready_at - t0, (unsigned long long)h.opens);
	printf("  %-44s %8.3f s\n", "host: first block read", h.first_at - t0);
	printf("  %-44s %8.3f s   <= %.1f s                %s\n", "TTFB after the mount and locate", ttfb, TARGET_TTFB_S,
	       v_ttfb);
	printf("  %-44s %8.3f s   (first block - configured %.1f s)\n", "TTFB after the modelled load + locate",
	       h.first_at - t0 - modelled, modelled);
	printf("  %-44s %8.1f MB/s  %.3f x the drive    >= %.2f x  %s\n", "recall throughput (stream, data blocks)",
	       stage_mbs, share, TARGET_SHARE, v_share);
	printf("  %-44s %8.3f x   (of %.0f MB/s)\n", "  the same, of the modelled native rate", stage_mbs / native, native);
	double read_s = watch.read_last - watch.read_first, own_s = stage_s - read_s;
	printf("  %-44s %8.3f s   of those %.3f s (%.1f%%)\n", "  the drive busy reading", read_s, stage_s,
	       100.0 * read_s / stage_s);
	printf("  %-44s %8.3f s   (the checks and appends run beside the reads; CRC32C alone %.1f MB/s)\n",
	       "  the drive standing still", own_s > 0 ? own_s : 0, crc_mbs);
	printf("  %-44s %8.3f s   (%.1f MB of stream)\n", "stage: last data block off the tape", watch.last_at - t0,
	       (double)watch.total / MB);
	printf("  %-44s %8.3f s   (trailer, sync, close, catalog)\n", "recall done (premigrated)", run.done - t0);
	printf("  %-44s %8.3f s\n", "host: end of data read", h.end_at - t0);
	printf("  %-44s %8.1f MB/s  host bytes (%.1f MB/s of stream at %.2f:1)\n", "host read rate, first block to EOD",
	       (double)h.read_bytes / host_s / MB, (double)w.stored_bytes / host_s / MB,
	       (double)w.host_bytes / (double)w.stored_bytes);
	printf("  %-44s %8llu     (%.3f s waited; read-through %s)\n", "host waits (it overtook the stage)",
	       (unsigned long long)h.waits, h.waited_s, h.saw_recalling ? "yes" : "NO: staged before the host looked");

	printf("\n  load average %.2f at the end\n", load1());
	printf("\n  key=value\n  recall.base_mbs=%.1f\n  recall.mount_locate_s=%.3f\n  recall.first_block_s=%.3f\n"
	       "  recall.ttfb_s=%.3f\n  recall.stage_mbs=%.1f\n  recall.stage_share=%.3f\n  recall.host_mbs=%.1f\n"
	       "  recall.host_waits=%llu\n",
	       base, mount_locate, h.first_at - t0, ttfb, stage_mbs, share, (double)h.read_bytes / host_s / MB,
	       (unsigned long long)h.waits);
	lib->ops->close(lib);
	catalog_close(host_cat);
	catalog_close(cat);
	vtl_pool_close(pool);
	return 0;
}
