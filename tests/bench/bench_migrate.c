/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Benchmark of the migrator's streaming (migrator/stream.c, copy.c): a
 * cartridge copied to a simulated LTO drive (migrator/phys_sim.c, which
 * models speed matching, its buffer and back-hitches in real time).
 *
 * Baselines measured in the same run: the drive fed from memory (the most
 * it takes: its modelled native rate, measured through the same calls) and
 * the cartridge's record stream read alone from the pool (what the disk
 * gives). Then the copy (a) alone, cold; (b) while a host thread writes
 * another cartridge as fast as it can; (c) with every read of a segment
 * file delayed by VTL_BENCH_DELAY_US (a test-only shim over pread in this
 * program). Each prints MB/s as a share of the baseline, back-hitches, the
 * ring's wait counters and the rate over time; then a sweep of ring sizes
 * (M buffers x B bytes) under the delay of (c); then (d) N cartridges
 * copied at once to the N drives of one simulated library (each copy its
 * own thread, ring and readers, as vtl-migrator's drive runners do) beside
 * one of them copied alone to one drive in the same run: the aggregate rate
 * and its ratio to the single drive's. Nothing passes or fails on time: the
 * exit status is non-zero only when something fails.
 *
 * Knobs (environment): VTL_BENCH_DIR (/var/tmp), VTL_BENCH_MIGRATE_MB (8192),
 * VTL_BENCH_SWEEP_MB (1024), VTL_BENCH_GEN (9), VTL_BENCH_DRIVE_BUFFER_MB
 * (512), VTL_BENCH_BACKHITCH_MS (3000), VTL_BENCH_DELAY_US (2000),
 * VTL_BENCH_SWEEP (1; 0 skips the sweep), VTL_BENCH_DRIVES (4; 0 skips (d)),
 * VTL_BENCH_PARALLEL_MB (1024, per cartridge of (d)), VTL_BENCH_PARALLEL_GEN (6).
 */
#include <dlfcn.h>
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
#include "common/grow.h"
#include "common/vtl_error.h"
#include "migrator/copy.h"
#include "tests/bench/bench_util.h"
#include "migrator/phys_sim.h"

#define BLOCK (256u << 10)            /* host block size of the cartridges */
#define MB 1e6
#define MAX_SAMPLES 4096
#define HOST_WRAP (4ull << 30)        /* (b)'s host rewinds after this much, to keep its disk use bounded */
#define DEFAULT_M 64
#define DEFAULT_B (1u << 20)
#define DEFAULT_READERS 4
#define TARGET_SHARE 0.98             /* issue 8: at least 98% of the drive's native rate */

static char dir[4096];
static unsigned delay_us;
static atomic_bool delay_on;

static void die(const char *what, int rc)
{
	fprintf(stderr, "bench_migrate: %s: %s\n", what, rc ? vtl_strerror(rc) : strerror(errno));
	exit(1);
}


/*
 * The test-only shim of (c): reads of segment files (the pool's) sleep first,
 * as a busy or remote disk would answer. This program's pread interposes on
 * libc's for the library linked into it.
 */
ssize_t pread(int fd, void *buf, size_t n, off_t off)
{
	static ssize_t (*real)(int, void *, size_t, off_t);
	if (!real)
		real = (ssize_t(*)(int, void *, size_t, off_t))dlsym(RTLD_NEXT, "pread");
	if (atomic_load(&delay_on)) {
		char link[64], path[512];
		snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
		ssize_t l = readlink(link, path, sizeof path - 1);
		if (l > 4 && !memcmp(path + l - 4, ".seg", 4)) {
			struct timespec ts = {0, (long)delay_us * 1000};
			nanosleep(&ts, NULL);
		}
	}
	return real(fd, buf, n, off);
}

static void cleanup(void)
{
	bench_rmtree(dir);
}


static void drop_caches(void)
{
	sync();
	int fd = open("/proc/sys/vm/drop_caches", O_WRONLY);
	if (fd >= 0) {
		if (write(fd, "3", 1) != 1)
			fprintf(stderr, "bench_migrate: could not drop the page cache\n");
		close(fd);
	}
}

static void fill(uint8_t *b, size_t n, uint64_t seed)
{
	uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
	for (size_t i = 0; i + 8 <= n; i += 8) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		memcpy(b + i, &x, 8);
	}
}

static void make_cart(struct vtl_pool *pool, const char *bc, uint64_t mb)
{
	int rc = vtl_cart_create(pool, bc);
	if (rc)
		die("create", rc);
	struct vtl_cart_params p = {0};
	struct vtl_cart *c;
	if ((rc = vtl_cart_open(pool, bc, &p, &c)))
		die("open", rc);
	static uint8_t buf[8][BLOCK];
	for (int i = 0; i < 8; i++)
		fill(buf[i], BLOCK, (uint64_t)i + 1);
	uint64_t blocks = mb * (1u << 20) / BLOCK;
	for (uint64_t i = 0; i < blocks; i++) {
		buf[i % 8][0] = (uint8_t)i; /* no two blocks alike */
		buf[i % 8][1] = (uint8_t)(i >> 8);
		if ((rc = vtl_cart_write_block(c, buf[i % 8], BLOCK)) < 0)
			die("write", rc);
	}
	if ((rc = vtl_cart_close(c)))
		die("close", rc);
}

/* ------------------------------------------------------------ the runs */

struct samples {
	double t0;
	double t[MAX_SAMPLES], mbs[MAX_SAMPLES];
	unsigned n;
};

static void on_progress(void *arg, const struct stream_progress *p)
{
	struct samples *s = arg;
	if (!s->n)
		s->t0 = bench_now_s();
	if (s->n < MAX_SAMPLES) {
		s->t[s->n] = bench_now_s() - s->t0;
		s->mbs[s->n++] = p->mbs;
	}
}

struct result {
	double mbs, min_mbs, secs;
	struct stream_counters c;
	struct phys_sim_stats st;
	struct samples s;
};

static struct phys_lib *open_sim_drives(unsigned gen, unsigned drives, uint64_t buffer, unsigned backhitch)
{
	struct phys_sim_config cfg = {.generation = gen, .drives = drives, .slots = 40, .tapes = 40, .buffer = buffer,
				      .backhitch_ms = backhitch}; /* no data_dir: lengths and checksums only */
	struct phys_lib *l;
	char err[256];
	int rc = phys_sim_open(&cfg, &l, err, sizeof err);
	if (rc) {
		fprintf(stderr, "bench_migrate: %s\n", err);
		exit(1);
	}
	return l;
}

static struct phys_lib *open_sim(unsigned gen, uint64_t buffer, unsigned backhitch)
{
	return open_sim_drives(gen, 1, buffer, backhitch);
}

static unsigned next_tape;

/* A fresh tape into drive 0 (the last one back to its slot). */
static void fresh_tape(struct phys_lib *l)
{
	int rc;
	if (next_tape && (rc = l->ops->move(l, PHYS_SIM_DRIVE0, (uint16_t)(PHYS_SIM_SLOT0 + next_tape - 1))) != VTL_OK)
		die("unload the tape", rc);
	rc = l->ops->move(l, (uint16_t)(PHYS_SIM_SLOT0 + next_tape), PHYS_SIM_DRIVE0);
	if (rc)
		die(phys_error(l), rc);
	next_tape++;
}

static void copy_run(struct phys_lib *l, struct vtl_pool *pool, const char *bc, unsigned m, size_t b,
		     struct result *r)
{
	memset(r, 0, sizeof *r);
	fresh_tape(l);
	struct vtl_cart_params p = {.readonly = true};
	struct vtl_cart *c;
	int rc = vtl_cart_open(pool, bc, &p, &c);
	if (rc)
		die("open for the copy", rc);
	struct copy_job j = {.ring = {.buffers = m, .buffer_size = b, .readers = DEFAULT_READERS},
			     .library = "bench", .progress = on_progress, .progress_arg = &r->s};
	struct copy_result cr;
	double t0 = bench_now_s();
	if ((rc = copy_write(l, 0, c, &j, &cr)))
		die(phys_error(l), rc);
	r->secs = bench_now_s() - t0;
	r->c = cr.counters;
	r->mbs = (double)cr.tape_bytes / r->secs / MB;
	r->min_mbs = cr.counters.min_mbs;
	phys_sim_stats(l, 0, &r->st);
	vtl_ignore(vtl_cart_close(c)); /* opened read-only: its close loses nothing */
}

/* Baseline: the drive fed from memory, as fast as the sim takes it, the same bytes in blocks of b. */
static double drive_alone(struct phys_lib *l, uint64_t bytes, size_t b)
{
	fresh_tape(l);
	uint8_t *buf = malloc(b);
	if (!buf)
		die("malloc", VTL_E_NOMEM);
	fill(buf, b, 99);
	double t0 = bench_now_s();
	for (uint64_t done = 0; done < bytes; done += b) {
		int rc = l->ops->write_block(l, 0, buf, bytes - done < b ? (size_t)(bytes - done) : b);
		if (rc < 0)
			die(phys_error(l), rc);
	}
	int rc = l->ops->write_filemarks(l, 0, 1);
	if (rc)
		die(phys_error(l), rc);
	free(buf);
	return (double)bytes / (bench_now_s() - t0) / MB;
}

/* Baseline: the record stream read alone, sequentially, in blocks of b (cold). */
static double stream_alone(struct vtl_pool *pool, const char *bc, size_t b)
{
	struct vtl_cart_params p = {.readonly = true};
	struct vtl_cart *c;
	int rc = vtl_cart_open(pool, bc, &p, &c);
	if (rc)
		die("open", rc);
	uint64_t size = vtl_cart_stream_size(c);
	uint8_t *buf = malloc(b);
	drop_caches();
	double t0 = bench_now_s();
	for (uint64_t off = 0; off < size; off += b)
		if ((rc = vtl_cart_stream_read(c, off, buf, size - off < b ? (size_t)(size - off) : b)))
			die("stream read", rc);
	double mbs = (double)size / (bench_now_s() - t0) / MB;
	free(buf);
	vtl_ignore(vtl_cart_close(c)); /* opened read-only: its close loses nothing */
	return mbs;
}

/* (b)'s host: writes a cartridge at full speed until told to stop. */
struct host {
	struct vtl_pool *pool;
	atomic_bool stop;
	uint64_t bytes;
	double secs;
};

static void *host_writer(void *arg)
{
	struct host *h = arg;
	struct vtl_cart_params p = {0};
	struct vtl_cart *c;
	int rc = vtl_cart_open(h->pool, "HOST01L9", &p, &c);
	if (rc)
		die("open the host's cartridge", rc);
	static uint8_t buf[BLOCK];
	fill(buf, BLOCK, 7);
	double t0 = bench_now_s();
	uint64_t since_rewind = 0;
	while (!atomic_load(&h->stop)) {
		buf[0]++;
		if ((rc = vtl_cart_write_block(c, buf, BLOCK)) < 0)
			die("host write", rc);
		h->bytes += BLOCK;
		if ((since_rewind += BLOCK) >= HOST_WRAP) {
			if ((rc = vtl_cart_rewind(c)) != VTL_OK) /* overwriting from the start keeps the disk use bounded */
				die("host rewind", rc);
			since_rewind = 0;
		}
	}
	h->secs = bench_now_s() - t0;
	if ((rc = vtl_cart_close(c)) != VTL_OK)
		die("host close", rc);
	return NULL;
}

static void report(const char *name, const struct result *r, double base)
{
	printf("  %-34s %8.1f  %6.3f  %8.1f  %6llu  %6llu/%-6llu  %6llu/%-6llu  %8.1f  %8.1f\n", name, r->mbs,
	       r->mbs / base, r->min_mbs, (unsigned long long)r->st.backhitches, (unsigned long long)r->c.writer_waits,
	       (unsigned long long)r->c.writer_delays, (unsigned long long)r->c.reader_waits,
	       (unsigned long long)r->c.reader_delays, r->secs, r->st.busy_s);
}

/* The rate over time as rows of "t  MB/s  bar". */
static void plot(const char *name, const struct samples *s, double native)
{
	printf("\n  rate over time, %s (each sample: the last ~0.5 s; '|' marks the native rate)\n", name);
	unsigned step = s->n > 40 ? s->n / 40 : 1;
	for (unsigned i = 0; i < s->n; i += step) {
		int bar = (int)(s->mbs[i] / native * 50 + 0.5), mark = 50;
		char line[80];
		int k = 0;
		for (; k < bar && k < 70; k++)
			line[k] = '#';
		for (; k <= mark; k++)
			line[k] = k == mark ? '|' : ' ';
		line[k] = 0;
		printf("  %6.1fs %7.1f %s\n", s->t[i], s->mbs[i], line);
	}
}

/* (d): one copy of N at once, on its own drive and thread. */
struct par_copy {
	struct phys_lib *l;
	struct vtl_pool *pool;
	char bc[16];
	unsigned drive;
	uint64_t bytes;
	struct phys_sim_stats st;
	int rc;
};

static void *par_copy_main(void *arg)
{
	struct par_copy *p = arg;
	struct vtl_cart_params cp = {.readonly = true};
	struct vtl_cart *c;
	if ((p->rc = vtl_cart_open(p->pool, p->bc, &cp, &c)))
		return NULL;
	struct copy_job j = {.ring = {.buffers = DEFAULT_M, .buffer_size = DEFAULT_B, .readers = DEFAULT_READERS},
			     .library = "bench"};
	struct copy_result cr;
	if ((p->rc = copy_write(p->l, p->drive, c, &j, &cr)) == VTL_OK)
		p->bytes = cr.tape_bytes;
	phys_sim_stats(p->l, p->drive, &p->st);
	vtl_ignore(vtl_cart_close(c)); /* opened read-only: its close loses nothing */
	return NULL;
}

/* Copies cartridges PAR001L9.. at once to drives 0..n-1 of a fresh simulated library; the aggregate MB/s. */
static double par_run(struct vtl_pool *pool, unsigned gen, unsigned n, uint64_t dbuf, unsigned backhitch,
		      uint64_t *hitches)
{
	struct phys_lib *l = open_sim_drives(gen, n, dbuf, backhitch);
	struct par_copy p[PHYS_MAX_DRIVES];
	pthread_t th[PHYS_MAX_DRIVES];
	for (unsigned d = 0; d < n; d++) {
		int rc = l->ops->move(l, (uint16_t)(PHYS_SIM_SLOT0 + d), (uint16_t)(PHYS_SIM_DRIVE0 + d));
		if (rc)
			die(phys_error(l), rc);
		p[d] = (struct par_copy){.l = l, .pool = pool, .drive = d};
		snprintf(p[d].bc, sizeof p[d].bc, "PAR%03uL9", d + 1);
	}
	drop_caches();
	double t0 = bench_now_s();
	for (unsigned d = 0; d < n; d++)
		if (pthread_create(&th[d], NULL, par_copy_main, &p[d]))
			die("pthread_create", 0);
	uint64_t bytes = 0;
	*hitches = 0;
	for (unsigned d = 0; d < n; d++) {
		pthread_join(th[d], NULL);
		if (p[d].rc)
			die("a copy of (d)", p[d].rc);
		bytes += p[d].bytes;
		*hitches += p[d].st.backhitches;
	}
	double secs = bench_now_s() - t0;
	l->ops->close(l);
	return (double)bytes / secs / MB;
}

int main(void)
{
	const char *base_dir = getenv("VTL_BENCH_DIR") ? getenv("VTL_BENCH_DIR") : "/var/tmp";
	uint64_t mb = bench_env_ul("VTL_BENCH_MIGRATE_MB", 8192), sweep_mb = bench_env_ul("VTL_BENCH_SWEEP_MB", 1024);
	unsigned gen = (unsigned)bench_env_ul("VTL_BENCH_GEN", 9);
	uint64_t dbuf = bench_env_ul("VTL_BENCH_DRIVE_BUFFER_MB", 512) << 20;
	unsigned backhitch = (unsigned)bench_env_ul("VTL_BENCH_BACKHITCH_MS", 3000);
	delay_us = (unsigned)bench_env_ul("VTL_BENCH_DELAY_US", 2000);
	bool sweep = bench_env_ul("VTL_BENCH_SWEEP", 1) != 0;
	unsigned drives = (unsigned)bench_env_ul("VTL_BENCH_DRIVES", 4);
	uint64_t par_mb = bench_env_ul("VTL_BENCH_PARALLEL_MB", 1024);
	unsigned par_gen = (unsigned)bench_env_ul("VTL_BENCH_PARALLEL_GEN", 6);
	if (drives > PHYS_MAX_DRIVES || (drives && !phys_sim_native_rate(par_gen))) {
		fprintf(stderr, "bench_migrate: VTL_BENCH_DRIVES=%u (at most %d), VTL_BENCH_PARALLEL_GEN=%u (5..9)\n", drives,
			PHYS_MAX_DRIVES, par_gen);
		return 1;
	}
	double native = phys_sim_native_rate(gen);
	if (!native) {
		fprintf(stderr, "bench_migrate: VTL_BENCH_GEN=%u: use 5..9\n", gen);
		return 1;
	}
	if (!bench_make_dir(dir, sizeof dir, base_dir, "vtl-bench-migrate", cleanup))
		die(dir, 0);
	struct statvfs sv;
	uint64_t need = (mb + sweep_mb + drives * par_mb) * 1.1 * (1u << 20) + HOST_WRAP + (1ull << 30);
	if (statvfs(dir, &sv) == 0 && (uint64_t)sv.f_bavail * sv.f_frsize < need) {
		fprintf(stderr, "bench_migrate: %s has less than the %llu MiB free this run needs\n", dir,
			(unsigned long long)(need >> 20));
		return 1;
	}
	char m0[4200], m1[4200];
	snprintf(m0, sizeof m0, "%s/m0", dir);
	snprintf(m1, sizeof m1, "%s/m1", dir);
	mkdir(m0, 0755);
	mkdir(m1, 0755);
	struct vtl_pool_config pc = {.members = {m0, m1}, .n_members = 2};
	struct vtl_pool *pool;
	char err[512];
	int rc = vtl_pool_open(&pc, &pool, err, sizeof err);
	if (rc) {
		fprintf(stderr, "bench_migrate: %s\n", err);
		return 1;
	}
	printf("== bench_migrate: a %llu MiB cartridge (256 KiB blocks of random data) copied to a simulated LTO-%u\n"
	       "   (native %.0f MB/s, speed matching down to a third, drive buffer %llu MiB, back-hitch %u ms);\n"
	       "   ring M=%d x B=%u KiB, %d readers; pool of 2 members in %s\n",
	       (unsigned long long)mb, gen, native, (unsigned long long)(dbuf >> 20), backhitch, DEFAULT_M,
	       DEFAULT_B >> 10, DEFAULT_READERS, dir);
	fflush(stdout);
	make_cart(pool, "SRC001L9", mb);
	if ((rc = vtl_cart_create(pool, "HOST01L9")))
		die("create", rc);
	struct phys_lib *l = open_sim(gen, dbuf, backhitch);

	double base = drive_alone(l, mb << 20, DEFAULT_B);
	double src = stream_alone(pool, "SRC001L9", DEFAULT_B);
	printf("\n== Baselines (same run)\n"
	       "  the drive fed from memory           %8.1f MB/s  (the most it takes: its modelled native rate)\n"
	       "  the record stream read alone, cold  %8.1f MB/s  (what the pool gives one reader, 1 MiB reads)\n",
	       base, src);

	printf("\n== Copies (MB/s: header, stream and trailer over the whole copy, filemark included)\n"
	       "  %-34s %8s  %6s  %8s  %6s  %13s  %13s  %8s  %8s\n",
	       "run", "MB/s", "x base", "min MB/s", "hitch", "wr wait/dly", "rd wait/dly", "s", "tape s");
	struct result a, b, c;
	drop_caches();
	copy_run(l, pool, "SRC001L9", DEFAULT_M, DEFAULT_B, &a);
	report("(a) alone, cold", &a, base);
	fflush(stdout);

	struct host h = {.pool = pool};
	pthread_t th;
	drop_caches();
	if (pthread_create(&th, NULL, host_writer, &h))
		die("pthread_create", 0);
	copy_run(l, pool, "SRC001L9", DEFAULT_M, DEFAULT_B, &b);
	atomic_store(&h.stop, true);
	pthread_join(th, NULL);
	report("(b) while a host writes, cold", &b, base);
	printf("      the host wrote %.1f MB/s meanwhile\n", (double)h.bytes / h.secs / MB);
	fflush(stdout);

	drop_caches();
	atomic_store(&delay_on, true);
	copy_run(l, pool, "SRC001L9", DEFAULT_M, DEFAULT_B, &c);
	atomic_store(&delay_on, false);
	char name[64];
	snprintf(name, sizeof name, "(c) %u us added per pool read", delay_us);
	report(name, &c, base);

	printf("\n  targets (informational, never pass/fail): >= %.2f x the drive's rate and 0 back-hitches\n",
	       TARGET_SHARE);
	const struct result *runs[3] = {&a, &b, &c};
	const char *names[3] = {"(a)", "(b)", "(c)"};
	for (int i = 0; i < 3; i++)
		printf("    %s %s (%.3f x, %llu back-hitches)\n", names[i],
		       runs[i]->mbs / base >= TARGET_SHARE && runs[i]->st.backhitches == 0 ? "met" : "MISSED",
		       runs[i]->mbs / base, (unsigned long long)runs[i]->st.backhitches);
	plot("(a)", &a.s, native);
	plot("(b)", &b.s, native);
	plot("(c)", &c.s, native);

	if (sweep) {
		make_cart(pool, "SWP001L9", sweep_mb);
		static const unsigned ms[] = {2, 8, 32, 128};
		static const size_t bs[] = {256u << 10, 1u << 20, 4u << 20};
		printf("\n== Ring sweep: a %llu MiB cartridge, %u us added per pool read as in (c), warm cache;\n"
		       "   each cell: MB/s as a share of the drive's rate / back-hitches / writer waits\n\n  %8s",
		       (unsigned long long)sweep_mb, delay_us, "M \\ B");
		for (size_t j = 0; j < VTL_ARRAY_SIZE(bs); j++)
			printf("  %22zu KiB", bs[j] >> 10);
		printf("\n");
		atomic_store(&delay_on, true);
		for (size_t i = 0; i < VTL_ARRAY_SIZE(ms); i++) {
			printf("  %8u", ms[i]);
			for (size_t j = 0; j < VTL_ARRAY_SIZE(bs); j++) {
				struct result r;
				copy_run(l, pool, "SWP001L9", ms[i], bs[j], &r);
				printf("  %12.3f / %2llu / %4llu", r.mbs / base, (unsigned long long)r.st.backhitches,
				       (unsigned long long)r.c.writer_waits);
				fflush(stdout);
			}
			printf("\n");
		}
		atomic_store(&delay_on, false);
	}
	double one = 0, all = 0;
	uint64_t one_hitches = 0, all_hitches = 0;
	if (drives) {
		for (unsigned d = 0; d < drives; d++) {
			char bc[16];
			snprintf(bc, sizeof bc, "PAR%03uL9", d + 1);
			make_cart(pool, bc, par_mb);
		}
		printf("\n== (d) %u cartridges of %llu MiB copied at once to the %u drives of a simulated LTO-%u library\n"
		       "   (native %.0f MB/s each), each copy its own thread, ring and readers; beside one copy alone, cold\n",
		       drives, (unsigned long long)par_mb, drives, par_gen, phys_sim_native_rate(par_gen));
		one = par_run(pool, par_gen, 1, dbuf, backhitch, &one_hitches);
		all = par_run(pool, par_gen, drives, dbuf, backhitch, &all_hitches);
		printf("  1 drive alone           %8.1f MB/s  %llu back-hitches\n"
		       "  %u drives at once        %8.1f MB/s  %llu back-hitches (all drives)\n"
		       "  aggregate / one drive   %8.2f x  (%u would be every drive streaming; the pool's disks may be the "
		       "limit)\n",
		       one, (unsigned long long)one_hitches, drives, all, (unsigned long long)all_hitches, all / one, drives);
	}
	printf("\n  key=value\n  migrate.par_drives=%u\n  migrate.par_one_mbs=%.1f\n  migrate.par_all_mbs=%.1f\n"
	       "  migrate.par_ratio=%.2f\n", drives, one, all, one > 0 ? all / one : 0);
	printf("  migrate.base_mbs=%.1f\n  migrate.stream_mbs=%.1f\n  migrate.a_mbs=%.1f\n"
	       "  migrate.a_backhitches=%llu\n  migrate.b_mbs=%.1f\n  migrate.b_backhitches=%llu\n"
	       "  migrate.c_mbs=%.1f\n  migrate.c_backhitches=%llu\n",
	       base, src, a.mbs, (unsigned long long)a.st.backhitches, b.mbs, (unsigned long long)b.st.backhitches,
	       c.mbs, (unsigned long long)c.st.backhitches);
	l->ops->close(l);
	vtl_pool_close(pool);
	return 0;
}
