/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Benchmark of the cartridge store (backend/): append and sequential-read
 * throughput, LOCATE latency, the on-disk index overhead, and writing with a
 * WRITE FILEMARKS (a filemark and a sync) every 1, 8 or 64 blocks.
 *
 * Every figure is printed next to a baseline measured in the same run, in the
 * same folder, on the same bytes (raw write()/read()/pread() of a plain file),
 * as a ratio. Nothing here passes or fails on time: the exit status is 0
 * unless something errors (a backend call fails, data reads back wrong, the
 * folder lacks room). docs/benchmarks.md explains every figure.
 *
 * Knobs (environment, all optional; docs/benchmarks.md has the defaults):
 * VTL_BENCH_DIR, VTL_BENCH_MB, VTL_BENCH_MEMBERS, VTL_BENCH_ROUNDS,
 * VTL_BENCH_POOL_MB, VTL_BENCH_LOCATE_BLOCKS, VTL_BENCH_LOCATES,
 * VTL_BENCH_PRECONDITION, VTL_BENCH_SEED, VTL_BENCH_KV, VTL_BENCH_FM_MB.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <limits.h>
#include <lz4.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "backend/cartridge.h"
#include "backend/format.h" /* REC_HEADER_LEN, SEG_HEADER_LEN, SEG_SYNCMARK_*: header sizes, the sync mark */
#include "backend/pool.h"
#include "common/crc32c.h"
#include "common/grow.h"
#include "common/vtl_error.h"

#define BLK ((size_t)256 << 10)  /* block size of the throughput runs */
#define LOC_BS ((size_t)512)      /* block size of the LOCATE cartridge */
#define LOC_FM_EVERY 10000u       /* a filemark after every this many blocks */
#define MHVTL_INDEX_PER_BLOCK 512 /* mhVTL usr/vtlcart.c: one 512-byte struct raw_header per block in .indx */

#define ROUNDS_MAX 16 /* append rounds (VTL_BENCH_ROUNDS) */
enum { W_DIRECT, W_BUF, W_STREAM, W_A, W_B, W_C, W_KINDS }; /* the append runs of a round, in order */
enum raw_mode { RAW_DIRECT, RAW_BUFFERED, RAW_STREAMED };
#define WRITEBACK_STEP ((uint64_t)8 << 20) /* the "streamed" baseline starts writeback this often */

#define TARGET_INCOMP 0.90 /* incompressible append >= 0.9 x raw disk write */
#define TARGET_COMP 1.00   /* compressible append faster than the disk */
#define TARGET_LOCATE_US 1000.0

#define MB 1e6 /* rates are in MB/s = 10^6 bytes per second, as dd prints them */
#define MIB ((uint64_t)1 << 20)
#define GIB (1024.0 * 1024.0 * 1024.0)

static volatile sig_atomic_t g_stop;
static char g_dir[PATH_MAX]; /* our mkdtemp folder; everything we create is inside, removed at exit */
static char g_member[VTL_POOL_MAX_MEMBERS][PATH_MAX + 16];
static unsigned g_nmem;
static struct vtl_pool *g_pool;
static bool g_root;
static int g_dropped_global = -1; /* last /proc/sys/vm/drop_caches attempt: 1 done, 0 failed, -1 not tried */

struct cfg {
	const char *base;
	unsigned members;
	uint64_t run_bytes;
	size_t pool_bytes;
	uint64_t loc_blocks;
	unsigned loc_n;
	uint64_t seed;
	unsigned rounds;
	bool precondition;
	bool kv;
	uint64_t fm_bytes; /* per run of the WRITE FILEMARKS-heavy section */
};

/* ---------------------------------------------------------------- output */

struct kv {
	char key[64];
	char val[40];
};
static struct kv g_kv[200];
static unsigned g_nkv;

static void kv(const char *key, const char *fmt, ...)
{
	if (g_nkv >= VTL_ARRAY_SIZE(g_kv))
		return;
	struct kv *e = &g_kv[g_nkv++];
	snprintf(e->key, sizeof e->key, "%s", key);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(e->val, sizeof e->val, fmt, ap);
	va_end(ap);
}

static int fail_vtl(const char *what, int rc)
{
	int e = errno;
	fprintf(stderr, "bench_backend: ERROR: %s: %s (rc %d", what, vtl_strerror(rc), rc);
	if (rc == VTL_E_IO)
		fprintf(stderr, ", errno %d: %s", e, strerror(e));
	fprintf(stderr, ")\n");
	return -1;
}

static int fail_sys(const char *what, const char *path)
{
	fprintf(stderr, "bench_backend: ERROR: %s %s: %s\n", what, path ? path : "", strerror(errno));
	return -1;
}

static int fail_msg(const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "bench_backend: ERROR: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return -1;
}

static int interrupted(void)
{
	return fail_msg("interrupted");
}

/* 1234567 -> "1,234,567" */
static const char *grp(uint64_t v, char *buf, size_t len)
{
	char tmp[32];
	int n = snprintf(tmp, sizeof tmp, "%" PRIu64, v);
	size_t o = 0;
	for (int i = 0; i < n && o + 2 < len; i++) {
		buf[o++] = tmp[i];
		if ((n - i - 1) % 3 == 0 && i != n - 1)
			buf[o++] = ',';
	}
	buf[o] = 0;
	return buf;
}

/* Verdict on a ratio that should be >= target. */
static const char *verdict_ge(double v, double target, char *buf, size_t len)
{
	if (v >= target)
		snprintf(buf, len, "met (%.3f >= %.2f)", v, target);
	else
		snprintf(buf, len, "MISSED by %.1f%% (%.3f < %.2f)", 100.0 * (target - v) / target, v, target);
	return buf;
}

static const char *verdict_gt(double v, double target, char *buf, size_t len)
{
	if (v > target)
		snprintf(buf, len, "met (%.3f > %.2f)", v, target);
	else
		snprintf(buf, len, "MISSED by %.1f%% (%.3f <= %.2f)", 100.0 * (target - v) / target, v, target);
	return buf;
}

static const char *verdict_le_us(double us, char *buf, size_t len)
{
	if (us <= TARGET_LOCATE_US)
		snprintf(buf, len, "met (%.1f us <= 1 ms)", us);
	else
		snprintf(buf, len, "MISSED (%.1f us > 1 ms, %.1fx)", us, us / TARGET_LOCATE_US);
	return buf;
}

/* ---------------------------------------------------------------- time, randomness */

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static double cpu_secs(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
	       ru.ru_stime.tv_usec / 1e6;
}

/* CRCs of one BLK buffer per pass of the header's CRC32C figure (128 MiB), and the passes (best kept). */
#define CRC_BENCH_REPS 512
#define CRC_BENCH_PASSES 3

static double thread_cpu_secs(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * CPU seconds per GiB of f over one BLK buffer (in the cache: the CRC's own
 * cost, without memory's), best of CRC_BENCH_PASSES; thread CPU time, so
 * that other processes inflate it less than wall time would.
 */
static double crc_cpu_per_gib(uint32_t (*f)(uint32_t, const void *, size_t), const unsigned char *buf)
{
	double best = 0;
	volatile uint32_t sink = 0;
	for (int pass = 0; pass < CRC_BENCH_PASSES; pass++) {
		double t0 = thread_cpu_secs();
		for (int i = 0; i < CRC_BENCH_REPS; i++)
			sink ^= f(0, buf, BLK);
		double t = thread_cpu_secs() - t0;
		if (pass == 0 || t < best)
			best = t;
	}
	(void)sink;
	return best * GIB / ((double)CRC_BENCH_REPS * (double)BLK);
}

static uint64_t rs[4]; /* xoshiro256** */

static uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

static uint64_t rng(void)
{
	uint64_t r = rotl(rs[1] * 5, 7) * 9, t = rs[1] << 17;
	rs[2] ^= rs[0];
	rs[3] ^= rs[1];
	rs[1] ^= rs[2];
	rs[0] ^= rs[3];
	rs[2] ^= t;
	rs[3] = rotl(rs[3], 45);
	return r;
}

static void rng_seed(uint64_t seed)
{
	for (int i = 0; i < 4; i++) { /* splitmix64 */
		uint64_t z = (seed += 0x9e3779b97f4a7c15ull);
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
		z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
		rs[i] = z ^ (z >> 31);
	}
}

static uint64_t rng_below(uint64_t n)
{
	return rng() % n;
}

static void fill_random(unsigned char *p, size_t n)
{
	while (n >= 8) {
		uint64_t v = rng();
		memcpy(p, &v, 8);
		p += 8;
		n -= 8;
	}
	while (n--)
		*p++ = (unsigned char)rng();
}

/*
 * Compressible data, mixed at small granularity: a random literal of 16..32
 * bytes, then `extra` more bytes than that literal of either a run of one byte
 * or a copy of earlier bytes of the same 256 KiB block, and again. `extra`
 * sets the ratio; calibrate_extra() picks it for LZ4 ~2:1.
 */
static void fill_compressible(unsigned char *p, size_t n, unsigned extra)
{
	for (size_t b = 0; b < n; b += BLK) {
		unsigned char *blk = p + b;
		size_t len = n - b < BLK ? n - b : BLK, at = 0;
		while (at < len) {
			size_t lit = 16 + (size_t)rng_below(17);
			if (lit > len - at)
				lit = len - at;
			fill_random(blk + at, lit);
			at += lit;
			size_t m = lit + extra;
			if (m > len - at)
				m = len - at;
			uint64_t r = rng();
			if ((r & 1) || at < 4096) {
				memset(blk + at, (int)((r >> 8) & 0xff), m);
			} else {
				size_t back = 64 + (size_t)((r >> 8) % 4000);
				memmove(blk + at, blk + at - back, m);
			}
			at += m;
		}
	}
}

/* host bytes / LZ4 bytes over whole 256 KiB blocks, counting a block that does not shrink as stored raw. */
static double lz4_ratio(const unsigned char *p, size_t n)
{
	int bound = LZ4_compressBound((int)BLK);
	char *out = malloc((size_t)bound);
	if (!out)
		return 0;
	uint64_t stored = 0;
	for (size_t b = 0; b + BLK <= n; b += BLK) {
		int c = LZ4_compress_default((const char *)p + b, out, (int)BLK, bound);
		stored += (c > 0 && (size_t)c < BLK) ? (uint64_t)c : BLK;
	}
	free(out);
	return stored ? (double)(n - n % BLK) / (double)stored : 0;
}

static double dist2(double r)
{
	return r > 2.0 ? r - 2.0 : 2.0 - r;
}

/*
 * Picks `extra` so that the cartridge itself (its LZ4 settings, whatever they
 * are) stores the compressible data at about 2:1: 16 blocks are written to a
 * scratch cartridge per try and the ratio read from vtl_cart_stats.
 */
static int calibrate_extra(struct vtl_pool *pool, unsigned *extra_out, double *ratio_out)
{
	size_t n = 16 * BLK;
	unsigned char *s = malloc(n);
	unsigned best = 0;
	double best_r = 0;
	if (!s)
		return fail_msg("out of memory");
	for (unsigned extra = 0; extra <= 96; extra++) {
		struct vtl_cart *c;
		struct vtl_cart_params p = {.compression = true};
		struct vtl_cart_stats st;
		int rc = vtl_cart_create(pool, "BENCHCAL");
		if (rc || (rc = vtl_cart_open(pool, "BENCHCAL", &p, &c))) {
			free(s);
			return fail_vtl("create/open BENCHCAL", rc);
		}
		fill_compressible(s, n, extra);
		for (size_t off = 0; off < n; off += BLK)
			if ((rc = vtl_cart_write_block(c, s + off, BLK))) {
				free(s);
				return fail_vtl("vtl_cart_write_block(BENCHCAL)", rc);
			}
		vtl_cart_stats(c, &st);
		if ((rc = vtl_cart_close(c)) || (rc = vtl_cart_delete(pool, "BENCHCAL"))) {
			free(s);
			return fail_vtl("close/delete BENCHCAL", rc);
		}
		double r = st.written_stored ? (double)st.written_bytes / (double)st.written_stored : 0;
		if (best_r == 0 || dist2(r) < dist2(best_r)) {
			best = extra;
			best_r = r;
		}
		if (r >= 2.0)
			break;
	}
	free(s);
	*extra_out = best;
	*ratio_out = best_r;
	return 0;
}

/* ---------------------------------------------------------------- files */

static int write_full(int fd, const void *buf, size_t n)
{
	const unsigned char *p = buf;
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static int rm_cb(const char *path, const struct stat *st, int flag, struct FTW *f)
{
	(void)st;
	(void)flag;
	(void)f;
	remove(path);
	return 0;
}

static void rm_rf(const char *path)
{
	nftw(path, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
}

struct paths {
	char **p;
	size_t n;
};

static void paths_free(struct paths *ps)
{
	for (size_t i = 0; i < ps->n; i++)
		free(ps->p[i]);
	free(ps->p);
	ps->p = NULL;
	ps->n = 0;
}

static int paths_add(struct paths *ps, const char *path)
{
	char **np = realloc(ps->p, (ps->n + 1) * sizeof *np);
	if (!np)
		return -1;
	ps->p = np;
	if (!(ps->p[ps->n] = strdup(path)))
		return -1;
	ps->n++;
	return 0;
}

/* Every segment file of a cartridge: <member>/<BARCODE>/ *.seg on every member. */
static int cart_files(const char *barcode, struct paths *ps)
{
	for (unsigned m = 0; m < g_nmem; m++) {
		char dir[PATH_MAX + 128];
		snprintf(dir, sizeof dir, "%s/%s", g_member[m], barcode);
		DIR *d = opendir(dir);
		if (!d) {
			if (errno == ENOENT)
				continue;
			return fail_sys("opendir", dir);
		}
		struct dirent *e;
		while ((e = readdir(d))) {
			size_t n = strlen(e->d_name);
			if (n > 4 && strcmp(e->d_name + n - 4, ".seg") == 0) {
				char path[2 * PATH_MAX];
				snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
				if (paths_add(ps, path)) {
					closedir(d);
					return fail_msg("out of memory");
				}
			}
		}
		closedir(d);
	}
	return 0;
}

static int files_size(const struct paths *ps, uint64_t *total)
{
	*total = 0;
	for (size_t i = 0; i < ps->n; i++) {
		struct stat st;
		if (stat(ps->p[i], &st) != 0)
			return fail_sys("stat", ps->p[i]);
		*total += (uint64_t)st.st_size;
	}
	return 0;
}

/* Fraction of the files' pages in the page cache, by mincore(). */
static double resident(const struct paths *ps)
{
	uint64_t tot = 0, res = 0;
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	for (size_t i = 0; i < ps->n; i++) {
		int fd = open(ps->p[i], O_RDONLY | O_CLOEXEC);
		struct stat st;
		if (fd < 0)
			continue;
		if (fstat(fd, &st) != 0 || st.st_size == 0) {
			close(fd);
			continue;
		}
		size_t len = (size_t)st.st_size, pages = (len + pg - 1) / pg;
		void *m = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
		unsigned char *v = malloc(pages);
		if (m != MAP_FAILED && v && mincore(m, len, v) == 0) {
			for (size_t k = 0; k < pages; k++)
				res += v[k] & 1;
			tot += pages;
		}
		free(v);
		if (m != MAP_FAILED)
			munmap(m, len);
		close(fd);
	}
	return tot ? (double)res / (double)tot : 0;
}

/* fsync, then drop the file's pages; and, as root, the whole page cache (failure ignored). */
static int drop_cache(const struct paths *ps)
{
	for (size_t i = 0; i < ps->n; i++) {
		int fd = open(ps->p[i], O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return fail_sys("open", ps->p[i]);
		if (fsync(fd) != 0) {
			close(fd);
			return fail_sys("fsync", ps->p[i]);
		}
		int e = posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
		close(fd);
		if (e) {
			errno = e;
			return fail_sys("posix_fadvise(DONTNEED)", ps->p[i]);
		}
	}
	if (g_root) {
		sync();
		int fd = open("/proc/sys/vm/drop_caches", O_WRONLY | O_CLOEXEC);
		g_dropped_global = fd >= 0 && write(fd, "1", 1) == 1;
		if (fd >= 0)
			close(fd);
	}
	return 0;
}

/* Before a timed write: everything written so far on disk, and (as root) the page cache emptied, so that no run pays for the previous one's writeback or page reclaim. */
static void settle(void)
{
	sync();
	if (g_root) {
		int fd = open("/proc/sys/vm/drop_caches", O_WRONLY | O_CLOEXEC);
		if (fd >= 0) {
			if (write(fd, "1", 1) != 1)
				g_dropped_global = 0;
			close(fd);
		}
	}
}

/* Reads the files through once (untimed), so that they are in the page cache. */
static int warm_up(const struct paths *ps, unsigned char *buf)
{
	for (size_t i = 0; i < ps->n; i++) {
		int fd = open(ps->p[i], O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return fail_sys("open", ps->p[i]);
		ssize_t n;
		while ((n = read(fd, buf, BLK)) > 0)
			;
		close(fd);
		if (n < 0)
			return fail_sys("read", ps->p[i]);
	}
	return 0;
}

static const char *fs_name(long type)
{
	switch ((unsigned long)type & 0xffffffffu) {
	case 0xEF53: return "ext2/3/4";
	case 0x58465342: return "xfs";
	case 0x9123683E: return "btrfs";
	case 0x01021994: return "tmpfs";
	case 0x858458F6: return "ramfs";
	case 0x2FC12FC1: return "zfs";
	case 0x6969: return "nfs";
	case 0x794C7630: return "overlayfs";
	case 0xF2F52010: return "f2fs";
	case 0x65735546: return "fuse";
	case 0x5346544E: return "ntfs";
	case 0x4d44: return "vfat";
	case 0xFF534D42: return "cifs";
	case 0x01161970: return "gfs2";
	case 0x5346414F: return "afs";
	case 0xCA451A4E: return "bcachefs";
	default: return "unknown";
	}
}

/* "vda (rotational 0)" for the block device behind the folder, when sysfs tells. */
static void device_of(const char *path, char *buf, size_t len)
{
	struct stat st;
	snprintf(buf, len, "unknown device");
	if (stat(path, &st) != 0)
		return;
	unsigned ma = major(st.st_dev), mi = minor(st.st_dev);
	char p[128], line[256], name[256] = "";
	snprintf(p, sizeof p, "/sys/dev/block/%u:%u/uevent", ma, mi);
	FILE *f = fopen(p, "r");
	if (!f) {
		snprintf(buf, len, "device %u:%u", ma, mi);
		return;
	}
	while (fgets(line, sizeof line, f))
		if (strncmp(line, "DEVNAME=", 8) == 0) {
			line[strcspn(line, "\n")] = 0;
			snprintf(name, sizeof name, "%s", line + 8);
		}
	fclose(f);
	int rot = -1;
	snprintf(p, sizeof p, "/sys/dev/block/%u:%u/queue/rotational", ma, mi);
	if (!(f = fopen(p, "r"))) {
		snprintf(p, sizeof p, "/sys/dev/block/%u:%u/../queue/rotational", ma, mi);
		f = fopen(p, "r");
	}
	if (f) {
		if (fscanf(f, "%d", &rot) != 1)
			rot = -1;
		fclose(f);
	}
	snprintf(buf, len, "device %.64s (%u:%u, rotational %d)", name[0] ? name : "?", ma, mi, rot);
}

static void loadavg(char *buf, size_t len)
{
	double l[3];
	if (getloadavg(l, 3) == 3)
		snprintf(buf, len, "%.2f %.2f %.2f", l[0], l[1], l[2]);
	else
		snprintf(buf, len, "unknown");
}

static void cpu_model(char *buf, size_t len)
{
	snprintf(buf, len, "unknown CPU");
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[512];
	if (!f)
		return;
	while (fgets(line, sizeof line, f))
		if (strncmp(line, "model name", 10) == 0) {
			char *c = strchr(line, ':');
			if (c) {
				c++;
				while (*c == ' ')
					c++;
				c[strcspn(c, "\n")] = 0;
				snprintf(buf, len, "%s", c);
			}
			break;
		}
	fclose(f);
}

/* ---------------------------------------------------------------- configuration */

static int env_u64(const char *name, uint64_t def, uint64_t min, uint64_t max, uint64_t *out)
{
	const char *s = getenv(name);
	*out = def;
	if (!s || !*s)
		return 0;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || *end || s[0] == '-' || v < min || v > max)
		return fail_msg("%s=%s: expected an integer from %" PRIu64 " to %" PRIu64, name, s, min, max);
	*out = v;
	return 0;
}

static int read_cfg(struct cfg *c)
{
	uint64_t v;
	const char *d = getenv("VTL_BENCH_DIR");
	c->base = d && *d ? d : "/var/tmp";
	if (env_u64("VTL_BENCH_MEMBERS", 2, 1, VTL_POOL_MAX_MEMBERS, &v))
		return -1;
	c->members = (unsigned)v;
	if (env_u64("VTL_BENCH_MB", 2048, 1, 1u << 24, &v))
		return -1;
	c->run_bytes = v * MIB;
	if (env_u64("VTL_BENCH_POOL_MB", 256, 1, 8192, &v))
		return -1;
	c->pool_bytes = (size_t)(v * MIB);
	if (c->pool_bytes > c->run_bytes)
		c->pool_bytes = (size_t)c->run_bytes;
	if (env_u64("VTL_BENCH_LOCATE_BLOCKS", 1000000, 1, 100000000, &c->loc_blocks))
		return -1;
	if (env_u64("VTL_BENCH_LOCATES", 10000, 1, 10000000, &v))
		return -1;
	c->loc_n = (unsigned)v;
	if (env_u64("VTL_BENCH_ROUNDS", 3, 1, ROUNDS_MAX, &v))
		return -1;
	c->rounds = (unsigned)v;
	if (env_u64("VTL_BENCH_SEED", 1, 0, UINT64_MAX, &c->seed))
		return -1;
	if (env_u64("VTL_BENCH_PRECONDITION", 1, 0, 1, &v))
		return -1;
	c->precondition = v != 0;
	if (env_u64("VTL_BENCH_KV", 1, 0, 1, &v))
		return -1;
	c->kv = v != 0;
	if (env_u64("VTL_BENCH_FM_MB", 64, 1, 1u << 20, &v))
		return -1;
	c->fm_bytes = v * MIB;
	return 0;
}

/* ---------------------------------------------------------------- append */

struct wres {
	bool ran;
	double secs;      /* first write to end of the sync */
	double sync_secs; /* the final fdatasync / vtl_cart_sync alone */
	double close_secs;
	double cpu;
	struct vtl_cart_stats st;
};

static int raw_write(const char *path, enum raw_mode mode, const unsigned char *src, size_t pool, uint64_t total,
		     struct wres *w)
{
	bool direct = mode == RAW_DIRECT;
	memset(w, 0, sizeof *w);
	unlink(path);
	settle();
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | (direct ? O_DIRECT : 0), 0640);
	if (fd < 0) {
		if (direct && errno == EINVAL) {
			printf("  note: %s does not support O_DIRECT: that baseline is skipped\n", g_dir);
			return 0;
		}
		return fail_sys("open", path);
	}
	double c0 = cpu_secs();
	uint64_t t0 = now_ns();
	for (uint64_t off = 0; off < total; off += BLK) {
		if (g_stop) {
			close(fd);
			return interrupted();
		}
		if (write_full(fd, src + off % pool, BLK)) {
			close(fd);
			return fail_sys("write", path);
		}
		uint64_t end = off + BLK;
		if (mode == RAW_STREAMED && off / WRITEBACK_STEP != end / WRITEBACK_STEP) {
			uint64_t start = off / WRITEBACK_STEP * WRITEBACK_STEP;
			sync_file_range(fd, (off_t)start, (off_t)(end - start), SYNC_FILE_RANGE_WRITE);
		}
	}
	uint64_t t1 = now_ns();
	if (fdatasync(fd) != 0) {
		close(fd);
		return fail_sys("fdatasync", path);
	}
	uint64_t t2 = now_ns();
	w->cpu = cpu_secs() - c0;
	close(fd);
	w->ran = true;
	w->secs = (double)(t2 - t0) / 1e9;
	w->sync_secs = (double)(t2 - t1) / 1e9;
	return 0;
}

static int cart_write(const char *bc, bool lz4, const unsigned char *src, size_t pool, uint64_t total,
		      struct wres *w)
{
	memset(w, 0, sizeof *w);
	struct vtl_cart *c;
	struct vtl_cart_params p = {.compression = lz4};
	int rc = vtl_cart_create(g_pool, bc);
	if (rc)
		return fail_vtl("vtl_cart_create", rc);
	if ((rc = vtl_cart_open(g_pool, bc, &p, &c)))
		return fail_vtl("vtl_cart_open", rc);
	settle();
	double c0 = cpu_secs();
	uint64_t t0 = now_ns();
	for (uint64_t off = 0; off < total; off += BLK) {
		if (g_stop)
			return interrupted();
		if ((rc = vtl_cart_write_block(c, src + off % pool, BLK)) != VTL_OK) {
			char what[96];
			snprintf(what, sizeof what, "vtl_cart_write_block(%s, block %" PRIu64 ")", bc, off / BLK);
			return fail_vtl(what, rc);
		}
	}
	uint64_t t1 = now_ns();
	if ((rc = vtl_cart_sync(c)))
		return fail_vtl("vtl_cart_sync", rc);
	uint64_t t2 = now_ns();
	w->cpu = cpu_secs() - c0;
	vtl_cart_stats(c, &w->st);
	struct vtl_position pos;
	vtl_cart_position(c, &pos);
	if (pos.eod != total / BLK || !pos.at_eod)
		return fail_msg("%s: after %" PRIu64 " writes the position says eod %" PRIu64 ", at_eod %d", bc,
				total / BLK, pos.eod, (int)pos.at_eod);
	if (w->st.written_bytes != total)
		return fail_msg("%s: stats written_bytes %" PRIu64 ", %" PRIu64 " were written", bc,
				w->st.written_bytes, total);
	uint64_t t3 = now_ns();
	if ((rc = vtl_cart_close(c)))
		return fail_vtl("vtl_cart_close", rc);
	uint64_t t4 = now_ns();
	w->ran = true;
	w->secs = (double)(t2 - t0) / 1e9;
	w->sync_secs = (double)(t2 - t1) / 1e9;
	w->close_secs = (double)(t4 - t3) / 1e9;
	return 0;
}

/* ---------------------------------------------------------------- sequential read */

struct rres {
	double secs;
	double resident; /* page-cache residency just before */
	uint64_t bytes;
	struct vtl_cart_stats st;
};

static int raw_read(const char *path, unsigned char *buf, struct rres *r)
{
	struct paths ps = {0};
	if (paths_add(&ps, path))
		return fail_msg("out of memory");
	r->resident = resident(&ps);
	paths_free(&ps);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return fail_sys("open", path);
	uint64_t t0 = now_ns(), bytes = 0;
	for (;;) {
		ssize_t n = read(fd, buf, BLK);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			close(fd);
			return fail_sys("read", path);
		}
		if (n == 0)
			break;
		bytes += (uint64_t)n;
		if (g_stop) {
			close(fd);
			return interrupted();
		}
	}
	uint64_t t1 = now_ns();
	close(fd);
	r->secs = (double)(t1 - t0) / 1e9;
	r->bytes = bytes;
	return 0;
}

/*
 * Reads a cartridge from BOT to EOD. Every read is checked for type, object
 * number and length; with verify, the data is also compared with what was
 * written (that pass is not timed).
 */
static int cart_read(const char *bc, unsigned char *buf, const unsigned char *expect, size_t pool,
		     uint64_t nblocks, bool verify, struct rres *r)
{
	struct paths ps = {0};
	if (cart_files(bc, &ps))
		return -1;
	r->resident = resident(&ps);
	paths_free(&ps);
	struct vtl_cart *c;
	struct vtl_cart_params p = {.readonly = true};
	int rc = vtl_cart_open(g_pool, bc, &p, &c);
	if (rc)
		return fail_vtl("vtl_cart_open(readonly)", rc);
	struct vtl_read_result rr;
	uint64_t t0 = now_ns(), n = 0, bytes = 0;
	for (;;) {
		if ((rc = vtl_cart_read(c, buf, BLK, &rr))) {
			char what[96];
			snprintf(what, sizeof what, "vtl_cart_read(%s, object %" PRIu64 ")", bc, n);
			return fail_vtl(what, rc);
		}
		if (rr.type == VTL_OBJ_EOD)
			break;
		if (rr.type != VTL_OBJ_DATA || rr.object != n || rr.length != BLK || rr.copied != BLK)
			return fail_msg("%s: read %" PRIu64 " gave type %d object %" PRIu64 " length %u copied %u; "
					"expected a %zu-byte data block, object %" PRIu64,
					bc, n, (int)rr.type, rr.object, rr.length, rr.copied, BLK, n);
		if (verify && memcmp(buf, expect + (n * BLK) % pool, BLK) != 0)
			return fail_msg("%s: object %" PRIu64 " reads back different bytes from those written", bc, n);
		bytes += rr.copied;
		n++;
		if (g_stop)
			return interrupted();
	}
	uint64_t t1 = now_ns();
	vtl_cart_stats(c, &r->st);
	if ((rc = vtl_cart_close(c)))
		return fail_vtl("vtl_cart_close(readonly)", rc);
	if (n != nblocks)
		return fail_msg("%s: EOD after %" PRIu64 " blocks, %" PRIu64 " were written", bc, n, nblocks);
	if (r->st.read_bytes != bytes)
		return fail_msg("%s: stats read_bytes %" PRIu64 ", the reads returned %" PRIu64, bc,
				r->st.read_bytes, bytes);
	r->secs = (double)(t1 - t0) / 1e9;
	r->bytes = bytes;
	return 0;
}

/* ---------------------------------------------------------------- LOCATE */

/* The LOCATE cartridge: LOC_FM_EVERY blocks, a filemark, again; block j holds src[(j * LOC_BS) % pool]. */
static bool loc_is_fm(uint64_t obj)
{
	return obj % (LOC_FM_EVERY + 1) == LOC_FM_EVERY;
}

static uint64_t loc_block_of(uint64_t obj) /* data block index of a data object */
{
	return obj - obj / (LOC_FM_EVERY + 1);
}

static uint64_t loc_raw_off(uint64_t obj) /* offset of object obj in the raw file */
{
	uint64_t fm = obj / (LOC_FM_EVERY + 1);
	return (obj - fm) * (REC_HEADER_LEN + LOC_BS) + fm * REC_HEADER_LEN;
}

struct lat {
	double mean, p50, p99, max; /* microseconds */
};

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static struct lat lat_of(uint64_t *ns, unsigned n)
{
	struct lat l = {0};
	double sum = 0;
	for (unsigned i = 0; i < n; i++)
		sum += (double)ns[i];
	qsort(ns, n, sizeof *ns, cmp_u64);
	l.mean = sum / n / 1e3;
	l.p50 = (double)ns[(n - 1) / 2] / 1e3;
	l.p99 = (double)ns[(size_t)((n - 1) * 0.99)] / 1e3;
	l.max = (double)ns[n - 1] / 1e3;
	return l;
}

/* One LOCATE + READ of object obj, checked; loc/lr get the times. */
static int cart_locate_read(struct vtl_cart *c, uint64_t obj, unsigned char *buf,
			    const unsigned char *src, size_t pool, uint64_t *loc, uint64_t *lr)
{
	struct vtl_read_result rr;
	uint64_t t0 = now_ns();
	int rc = vtl_cart_locate(c, obj);
	uint64_t t1 = now_ns();
	if (rc)
		return fail_vtl("vtl_cart_locate", rc);
	rc = vtl_cart_read(c, buf, LOC_BS, &rr);
	uint64_t t2 = now_ns();
	if (rc) {
		char what[64];
		snprintf(what, sizeof what, "vtl_cart_read after locate(%" PRIu64 ")", obj);
		return fail_vtl(what, rc);
	}
	*loc = t1 - t0;
	*lr = t2 - t0;
	bool fm = loc_is_fm(obj);
	if (rr.object != obj || rr.type != (fm ? VTL_OBJ_FILEMARK : VTL_OBJ_DATA))
		return fail_msg("locate(%" PRIu64 ") + read gave object %" PRIu64 " type %d, expected type %d", obj,
				rr.object, (int)rr.type, fm ? VTL_OBJ_FILEMARK : VTL_OBJ_DATA);
	if (!fm && (rr.length != LOC_BS ||
		    memcmp(buf, src + (loc_block_of(obj) * LOC_BS) % pool, LOC_BS) != 0))
		return fail_msg("locate(%" PRIu64 ") + read: block %" PRIu64 " reads back wrong (length %u)", obj,
				loc_block_of(obj), rr.length);
	return 0;
}

static int raw_pread_one(int fd, uint64_t obj, unsigned char *buf, const unsigned char *src, size_t pool,
			 uint64_t *ns)
{
	bool fm = loc_is_fm(obj);
	size_t len = fm ? REC_HEADER_LEN : LOC_BS;
	uint64_t off = loc_raw_off(obj) + (fm ? 0 : REC_HEADER_LEN);
	uint64_t t0 = now_ns();
	ssize_t n = pread(fd, buf, len, (off_t)off);
	uint64_t t1 = now_ns();
	if (n != (ssize_t)len)
		return fail_sys("pread", "raw_small.dat");
	if (!fm && memcmp(buf, src + (loc_block_of(obj) * LOC_BS) % pool, LOC_BS) != 0)
		return fail_msg("raw baseline file reads back wrong at object %" PRIu64 " (bench bug)", obj);
	*ns = t1 - t0;
	return 0;
}

/* The least any footer-indexed format pays to mount: open, fstat, read header and trailer of each file. */
static int raw_open_cost(const struct paths *ps, double *secs)
{
	unsigned char b[SEG_HEADER_LEN];
	uint64_t t0 = now_ns();
	for (size_t i = 0; i < ps->n; i++) {
		int fd = open(ps->p[i], O_RDONLY | O_CLOEXEC);
		struct stat st;
		if (fd < 0 || fstat(fd, &st) != 0)
			return fail_sys("open/fstat", ps->p[i]);
		if (pread(fd, b, SEG_HEADER_LEN, 0) < 0 ||
		    pread(fd, b, TRAILER_LEN, st.st_size > TRAILER_LEN ? st.st_size - TRAILER_LEN : 0) < 0) {
			close(fd);
			return fail_sys("pread", ps->p[i]);
		}
		close(fd);
	}
	*secs = (double)(now_ns() - t0) / 1e9;
	return 0;
}

/* ---------------------------------------------------------------- the run */

static void print_lat_row(const char *label, struct lat l)
{
	printf("  %-34s %9.1f %9.1f %9.1f %9.1f\n", label, l.mean, l.p50, l.p99, l.max);
}

static void kv_lat(const char *prefix, struct lat l)
{
	char k[64];
	snprintf(k, sizeof k, "%s.mean_us", prefix);
	kv(k, "%.2f", l.mean);
	snprintf(k, sizeof k, "%s.p50_us", prefix);
	kv(k, "%.2f", l.p50);
	snprintf(k, sizeof k, "%s.p99_us", prefix);
	kv(k, "%.2f", l.p99);
	snprintf(k, sizeof k, "%s.max_us", prefix);
	kv(k, "%.2f", l.max);
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* Median of n values (sorts v). */
static double median(double *v, unsigned n)
{
	qsort(v, n, sizeof *v, cmp_dbl);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static double mbps(uint64_t bytes, double secs)
{
	return secs > 0 ? (double)bytes / MB / secs : 0;
}

/*
 * Writes and deletes a file as large as the most the benchmark keeps on disk,
 * so that the timed runs write to blocks the disk has already seen: a
 * thin-provisioned virtual disk writes first-touch blocks much slower, which
 * would favour whichever run happens to reuse freed blocks.
 */
static int precondition(const struct cfg *cf, const unsigned char *rnd, uint64_t bytes)
{
	char path[PATH_MAX + 32];
	struct wres w;
	snprintf(path, sizeof path, "%s/precondition.dat", g_dir);
	if (raw_write(path, RAW_BUFFERED, rnd, cf->pool_bytes, bytes, &w))
		return -1;
	unlink(path);
	sync();
	printf("  precondition %.2f GiB written (buffered + fdatasync, %.1f MB/s) and deleted before the timed runs\n",
	       (double)bytes / GIB, mbps(bytes, w.secs));
	kv("precondition.mbps", "%.1f", mbps(bytes, w.secs));
	return 0;
}

static int section_throughput(const struct cfg *cf, unsigned char *rnd, unsigned char *cmp, unsigned char *buf)
{
	uint64_t total = cf->run_bytes, nblocks = total / BLK;
	size_t pool = cf->pool_bytes;
	char p_tmp[PATH_MAX + 32], p_buf[PATH_MAX + 32];
	snprintf(p_tmp, sizeof p_tmp, "%s/raw_scratch.dat", g_dir);
	snprintf(p_buf, sizeof p_buf, "%s/raw_buffered.dat", g_dir);

	printf("\n== 1. Append: %" PRIu64 " MiB per run in 256 KiB blocks, timed from the first write to the end of the sync\n",
	       total / MIB);
	unsigned R = cf->rounds;
	printf("   %u round%s of the 3 baselines then (a), (b), (c)%s; MB/s is the median of the\n"
	       "   %u run%s listed under \"runs\" (in round order); before each run: sync%s\n",
	       R, R > 1 ? "s" : "", R > 1 ? ", every second round in reverse order" : "", R, R > 1 ? "s" : "",
	       g_root ? " and drop the page cache" : "");
	struct wres res[W_KINDS][ROUNDS_MAX];
	memset(res, 0, sizeof res);
	for (unsigned r = 0; r < R; r++)
		for (int k = 0; k < W_KINDS; k++) {
			int kind = r % 2 ? W_KINDS - 1 - k : k;
			struct wres *w = &res[kind][r];
			int rc = 0;
			switch (kind) {
			case W_DIRECT:
			case W_STREAM:
				rc = raw_write(p_tmp, kind == W_DIRECT ? RAW_DIRECT : RAW_STREAMED, rnd, pool, total, w);
				unlink(p_tmp);
				break;
			case W_BUF: /* kept: the file the read baseline reads */
				rc = raw_write(p_buf, RAW_BUFFERED, rnd, pool, total, w);
				break;
			default: {
				const char *bc = kind == W_A ? "BENCHA" : kind == W_B ? "BENCHB" : "BENCHC";
				int ex = vtl_cart_exists(g_pool, bc), drc;
				if (ex > 0 && (drc = vtl_cart_delete(g_pool, bc)))
					return fail_vtl("vtl_cart_delete", drc);
				rc = cart_write(bc, kind != W_C, kind == W_B ? cmp : rnd, pool, total, w);
				if (!rc && kind == W_C && (drc = vtl_cart_delete(g_pool, bc)))
					return fail_vtl("vtl_cart_delete(BENCHC)", drc);
				break;
			}
			}
			if (rc)
				return -1;
		}

	double med[W_KINDS], sync_s[W_KINDS], cpu[W_KINDS], close_s[W_KINDS], rate[ROUNDS_MAX];
	char runs[W_KINDS][96];
	for (int k = 0; k < W_KINDS; k++) {
		sync_s[k] = cpu[k] = close_s[k] = 0;
		size_t o = (size_t)snprintf(runs[k], sizeof runs[k], "runs");
		for (unsigned r = 0; r < R; r++) {
			struct wres *w = &res[k][r];
			double m = w->ran ? mbps(total, w->secs) : 0;
			rate[r] = m;
			sync_s[k] += w->sync_secs / R;
			cpu[k] += w->cpu / R;
			close_s[k] += w->close_secs / R;
			if (o < sizeof runs[k])
				o += (size_t)snprintf(runs[k] + o, sizeof runs[k] - o, "%s %.1f", r ? " /" : "", m);
		}
		med[k] = median(rate, R);
	}
	static const struct {
		const char *label, *key;
	} row[W_KINDS] = {
		[W_DIRECT] = {"raw O_DIRECT, + fdatasync", "raw_direct"},
		[W_BUF] = {"raw buffered, + fdatasync", "raw_fdatasync"},
		[W_STREAM] = {"raw buffered, writeback/8MiB", "raw_streamed"},
		[W_A] = {"(a) random data, LZ4 on", "a_random_lz4"},
		[W_B] = {"(b) ~2:1 data, LZ4 on", "b_2to1_lz4"},
		[W_C] = {"(c) random data, LZ4 off", "c_random_nolz4"},
	};
	static const int base[3] = {W_DIRECT, W_BUF, W_STREAM};
	static const char *const xkey[3] = {"x_direct", "x_fdatasync", "x_streamed"};
	printf("\n  %-30s %8s %9s %9s %9s %7s %6s %9s\n", "", "MB/s", "x direct", "x fdsync", "x stream", "sync s",
	       "CPU s", "host:disk");
	for (int k = 0; k < W_KINDS; k++) {
		char x[3][16], ratios[16], key[64];
		for (int j = 0; j < 3; j++) {
			double bm = med[base[j]];
			if (bm > 0 && med[k] > 0)
				snprintf(x[j], sizeof x[j], "%.2f", med[k] / bm);
			else
				snprintf(x[j], sizeof x[j], "n/a");
		}
		double ratio = 1.0;
		if (k >= W_A) {
			struct vtl_cart_stats *st = &res[k][R - 1].st;
			ratio = st->written_stored ? (double)st->written_bytes / (double)st->written_stored : 0;
		}
		snprintf(ratios, sizeof ratios, "%.2f:1", ratio);
		if (k == W_A)
			printf("\n");
		if (med[k] > 0)
			printf("  %-30s %8.1f %9s %9s %9s %7.3f %6.2f %9s   %s\n", row[k].label, med[k], x[0], x[1], x[2],
			       sync_s[k], cpu[k], ratios, runs[k]);
		else
			printf("  %-30s %8s   (skipped)\n", row[k].label, "n/a");
		if (med[k] <= 0)
			continue;
		snprintf(key, sizeof key, "append.%s.mbps", row[k].key);
		kv(key, "%.1f", med[k]);
		if (k < W_A)
			continue;
		for (int j = 0; j < 3; j++)
			if (med[base[j]] > 0) {
				snprintf(key, sizeof key, "append.%s.%s", row[k].key, xkey[j]);
				kv(key, "%.3f", med[k] / med[base[j]]);
			}
		snprintf(key, sizeof key, "append.%s.host_to_disk", row[k].key);
		kv(key, "%.3f", ratio);
		snprintf(key, sizeof key, "append.%s.close_ms", row[k].key);
		kv(key, "%.1f", close_s[k] * 1e3);
	}
	printf("\n  raw O_DIRECT:  like dd oflag=direct (one 256 KiB write at a time, aligned buffer), then one fdatasync\n"
	       "  raw buffered:  like dd conv=fdatasync (every write into the page cache, then one fdatasync)\n"
	       "  raw streamed:  buffered writes that start the writeback of every 8 MiB as it fills\n"
	       "                 (sync_file_range), then one fdatasync: the fastest plain-file pattern found\n"
	       "  sync s: the final fdatasync / vtl_cart_sync alone, inside the timed span; CPU s: user+system of\n"
	       "  the whole process (with the backend's worker threads); vtl_cart_close after the timed span:\n"
	       "  (a) %.1f ms, (b) %.1f ms, (c) %.1f ms\n",
	       close_s[W_A] * 1e3, close_s[W_B] * 1e3, close_s[W_C] * 1e3);
	int rc;

	printf("\n  targets (informational, never pass/fail):\n");
	static const char *const bname[3] = {"O_DIRECT", "buffered", "streamed"};
	printf("    incompressible append >= %.2f x raw disk write, (a):\n", TARGET_INCOMP);
	for (int j = 0; j < 3; j++) {
		char v[96];
		if (med[base[j]] > 0)
			printf("      vs raw %-9s %s\n", bname[j], verdict_ge(med[W_A] / med[base[j]], TARGET_INCOMP, v, sizeof v));
	}
	printf("    compressible append faster than the disk (> %.2f x), (b):\n", TARGET_COMP);
	for (int j = 0; j < 3; j++) {
		char v[96];
		if (med[base[j]] > 0)
			printf("      vs raw %-9s %s\n", bname[j], verdict_gt(med[W_B] / med[base[j]], TARGET_COMP, v, sizeof v));
	}

	/* ---- 2. sequential read ---- */
	printf("\n== 2. Sequential read, BOT to EOD with 256 KiB buffers (vtl_cart_read; baseline: read() of the\n"
	       "      buffered baseline file). MB/s counts host bytes; disk MB/s counts bytes read from the medium\n");
	printf("\n  %-26s %5s %8s %8s %7s %9s %16s\n", "", "cache", "resident", "MB/s", "x raw", "disk MB/s",
	       "RA hits/misses");
	struct paths praw = {0}, pa = {0}, pb = {0};
	if (paths_add(&praw, p_buf) || cart_files("BENCHA", &pa) || cart_files("BENCHB", &pb))
		return -1;
	for (int cold = 0; cold <= 1; cold++) {
		const char *cache = cold ? "cold" : "warm";
		struct rres rr = {0}, ar = {0}, br = {0};
		if (cold ? drop_cache(&praw) : warm_up(&praw, buf))
			return -1;
		if (raw_read(p_buf, buf, &rr))
			return -1;
		if (cold ? drop_cache(&pa) : warm_up(&pa, buf))
			return -1;
		if (cart_read("BENCHA", buf, rnd, pool, nblocks, false, &ar))
			return -1;
		if (cold ? drop_cache(&pb) : warm_up(&pb, buf))
			return -1;
		if (cart_read("BENCHB", buf, cmp, pool, nblocks, false, &br))
			return -1;
		double raw = mbps(rr.bytes, rr.secs);
		printf("  %-26s %5s %7.0f%% %8.1f %7.2f %9.1f %16s\n", "baseline read() 256 KiB", cache,
		       rr.resident * 100, raw, 1.0, raw, "");
		struct {
			const char *label, *key;
			struct rres *r;
		} rows[] = {{"(a) random, LZ4 on", "a_random_lz4", &ar}, {"(b) ~2:1, LZ4 on", "b_2to1_lz4", &br}};
		for (size_t i = 0; i < 2; i++) {
			struct rres *r = rows[i].r;
			double m = mbps(r->bytes, r->secs);
			char hm[40], k[64];
			snprintf(hm, sizeof hm, "%" PRIu64 "/%" PRIu64, r->st.readahead_hits, r->st.readahead_misses);
			printf("  %-26s %5s %7.0f%% %8.1f %7.2f %9.1f %16s\n", rows[i].label, cache, r->resident * 100,
			       m, m / raw, mbps(r->st.read_stored, r->secs), hm);
			snprintf(k, sizeof k, "read.%s.%s.mbps", cache, rows[i].key);
			kv(k, "%.1f", m);
			snprintf(k, sizeof k, "read.%s.%s.x_raw", cache, rows[i].key);
			kv(k, "%.3f", m / raw);
			snprintf(k, sizeof k, "read.%s.%s.readahead_hits", cache, rows[i].key);
			kv(k, "%" PRIu64, r->st.readahead_hits);
			snprintf(k, sizeof k, "read.%s.%s.readahead_misses", cache, rows[i].key);
			kv(k, "%" PRIu64, r->st.readahead_misses);
		}
		char k[64];
		snprintf(k, sizeof k, "read.%s.raw.mbps", cache);
		kv(k, "%.1f", raw);
	}
	if (g_root)
		printf("  warm = the files read through once just before; cold = fsync + posix_fadvise(DONTNEED) on each file,\n"
		       "  then \"1\" > /proc/sys/vm/drop_caches (%s); resident = the files' pages in the page cache just\n"
		       "  before the run (mincore)\n",
		       g_dropped_global == 1 ? "done" : "FAILED, ignored");
	else
		printf("  warm = the files read through once just before; cold = fsync + posix_fadvise(DONTNEED) on each\n"
		       "  file (not root: no drop_caches); resident = the files' pages in the page cache just before the\n"
		       "  run (mincore)\n");

	/* Content check, untimed: every block of (a) and (b) compared with what was written. */
	struct rres vr = {0};
	if (cart_read("BENCHA", buf, rnd, pool, nblocks, true, &vr) ||
	    cart_read("BENCHB", buf, cmp, pool, nblocks, true, &vr))
		return -1;
	printf("  content check (untimed): all %" PRIu64 " blocks of (a) and of (b) read back identical\n", nblocks);
	paths_free(&praw);
	paths_free(&pa);
	paths_free(&pb);
	if ((rc = vtl_cart_delete(g_pool, "BENCHA")) || (rc = vtl_cart_delete(g_pool, "BENCHB")))
		return fail_vtl("vtl_cart_delete", rc);
	unlink(p_buf);
	return 0;
}

static int section_locate(const struct cfg *cf, unsigned char *rnd, unsigned char *buf)
{
	size_t pool = cf->pool_bytes;
	uint64_t blocks = cf->loc_blocks, nfm = blocks / LOC_FM_EVERY, objects = blocks + nfm;
	unsigned n = cf->loc_n;
	char p_raw[PATH_MAX + 32], g1[32], g2[32], g3[32], v1[96], v2[96];
	snprintf(p_raw, sizeof p_raw, "%s/raw_small.dat", g_dir);
	printf("\n== 3. LOCATE on a cartridge of %s objects: %s blocks of %zu bytes, a filemark after every %u\n",
	       grp(objects, g1, sizeof g1), grp(blocks, g2, sizeof g2), LOC_BS, LOC_FM_EVERY);

	/* Baseline: the same record bytes (32-byte header + payload, 32 bytes per filemark), one writev each. */
	static const unsigned char zero[REC_HEADER_LEN];
	settle();
	int fd = open(p_raw, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0640);
	if (fd < 0)
		return fail_sys("open", p_raw);
	uint64_t t0 = now_ns();
	for (uint64_t j = 0; j < blocks; j++) {
		struct iovec iov[2] = {{(void *)zero, REC_HEADER_LEN}, {rnd + (j * LOC_BS) % pool, LOC_BS}};
		if (writev(fd, iov, 2) != (ssize_t)(REC_HEADER_LEN + LOC_BS) ||
		    ((j + 1) % LOC_FM_EVERY == 0 && write(fd, zero, REC_HEADER_LEN) != REC_HEADER_LEN)) {
			close(fd);
			return fail_sys("write", p_raw);
		}
		if (g_stop) {
			close(fd);
			return interrupted();
		}
	}
	if (fdatasync(fd) != 0) {
		close(fd);
		return fail_sys("fdatasync", p_raw);
	}
	double raw_w = (double)(now_ns() - t0) / 1e9;
	close(fd);

	struct vtl_cart *c;
	struct vtl_cart_params p = {.compression = false};
	int rc = vtl_cart_create(g_pool, "BENCHL");
	if (rc || (rc = vtl_cart_open(g_pool, "BENCHL", &p, &c)))
		return fail_vtl("create/open BENCHL", rc);
	settle();
	t0 = now_ns();
	for (uint64_t j = 0; j < blocks; j++) {
		if ((rc = vtl_cart_write_block(c, rnd + (j * LOC_BS) % pool, LOC_BS)))
			return fail_vtl("vtl_cart_write_block(BENCHL)", rc);
		if ((j + 1) % LOC_FM_EVERY == 0 && (rc = vtl_cart_write_filemarks(c, 1)))
			return fail_vtl("vtl_cart_write_filemarks(BENCHL)", rc);
		if (g_stop)
			return interrupted();
	}
	if ((rc = vtl_cart_sync(c)))
		return fail_vtl("vtl_cart_sync(BENCHL)", rc);
	double cart_w = (double)(now_ns() - t0) / 1e9;
	struct vtl_position pos;
	vtl_cart_position(c, &pos);
	if (pos.eod != objects || pos.file != nfm)
		return fail_msg("BENCHL: after writing %" PRIu64 " objects (%" PRIu64 " filemarks) the position says eod %" PRIu64
				", file %" PRIu64, objects, nfm, pos.eod, pos.file);
	uint64_t stored = pos.stored_bytes;
	t0 = now_ns();
	if ((rc = vtl_cart_close(c)))
		return fail_vtl("vtl_cart_close(BENCHL)", rc);
	double close_w = (double)(now_ns() - t0) / 1e9;
	printf("\n  writing them (each write a syscall, then sync):  cartridge %.2f s (%.0f objects/s), raw writev()\n"
	       "  of the same record bytes + fdatasync %.2f s: %.2f x raw speed\n",
	       cart_w, objects / cart_w, raw_w, raw_w / cart_w);
	kv("locate.write.cart_s", "%.3f", cart_w);
	kv("locate.write.raw_s", "%.3f", raw_w);
	kv("locate.write.x_raw", "%.3f", raw_w / cart_w);

	struct paths ps = {0}, pall = {0}, praw = {0};
	if (cart_files("BENCHL", &ps) || cart_files("BENCHL", &pall) || paths_add(&pall, p_raw) ||
	    paths_add(&praw, p_raw))
		return -1;

	uint64_t *tl = malloc(n * sizeof *tl), *tlr = malloc(n * sizeof *tlr), *traw = malloc(n * sizeof *traw);
	uint64_t *objs = malloc(n * sizeof *objs);
	if (!tl || !tlr || !traw || !objs)
		return fail_msg("out of memory");
	int rfd = -1;

	printf("\n  mount and first LOCATE (x baseline = cartridge time / baseline time: below 1 is faster)\n");
	printf("  %-31s %13s %11s %12s   %s\n", "", "cartridge", "baseline", "x baseline", "(baseline)");
	printf("  close after writing (seal+sync) %10.2f ms %10s %12s   (none: no raw equivalent)\n", close_w * 1e3, "-",
	       "-");
	kv("locate.close_after_write_ms", "%.3f", close_w * 1e3);
	struct lat cold_l, cold_lr, cold_raw, warm_l, warm_lr, warm_raw;
	for (int warm = 0; warm <= 1; warm++) {
		const char *cache = warm ? "warm" : "cold";
		double raw_open = 0, cart_open = 0, close_clean = 0;
		for (unsigned i = 0; i < n; i++)
			objs[i] = rng_below(objects);
		uint64_t first = rng_below(objects), f_loc, f_lr, f_raw;

		/* raw mount cost */
		if (warm ? warm_up(&pall, buf) : drop_cache(&pall))
			return -1;
		if (raw_open_cost(&ps, &raw_open))
			return -1;
		/* cartridge: open, first locate, N random locates */
		if (!warm && drop_cache(&pall))
			return -1;
		t0 = now_ns();
		if ((rc = vtl_cart_open(g_pool, "BENCHL", &p, &c)))
			return fail_vtl("vtl_cart_open(BENCHL)", rc);
		cart_open = (double)(now_ns() - t0) / 1e9;
		vtl_cart_position(c, &pos);
		if (pos.eod != objects || pos.stored_bytes != stored)
			return fail_msg("BENCHL reopened: eod %" PRIu64 " stored %" PRIu64 ", expected %" PRIu64 " and %" PRIu64,
					pos.eod, pos.stored_bytes, objects, stored);
		if (cart_locate_read(c, first, buf, rnd, pool, &f_loc, &f_lr))
			return -1;
		for (unsigned i = 0; i < n; i++) {
			if (cart_locate_read(c, objs[i], buf, rnd, pool, &tl[i], &tlr[i]))
				return -1;
			if (g_stop)
				return interrupted();
		}
		t0 = now_ns();
		if ((rc = vtl_cart_close(c)))
			return fail_vtl("vtl_cart_close(BENCHL)", rc);
		close_clean = (double)(now_ns() - t0) / 1e9;
		/* raw: first pread, N random preads */
		if (!warm && drop_cache(&praw))
			return -1;
		if ((rfd = open(p_raw, O_RDONLY | O_CLOEXEC)) < 0)
			return fail_sys("open", p_raw);
		if (raw_pread_one(rfd, first, buf, rnd, pool, &f_raw))
			return -1;
		for (unsigned i = 0; i < n; i++)
			if (raw_pread_one(rfd, objs[i], buf, rnd, pool, &traw[i]))
				return -1;
		close(rfd);

		struct lat l = lat_of(tl, n), lr = lat_of(tlr, n), lraw = lat_of(traw, n);
		if (warm) {
			warm_l = l;
			warm_lr = lr;
			warm_raw = lraw;
		} else {
			cold_l = l;
			cold_lr = lr;
			cold_raw = lraw;
		}
		char label[64], k[64];
		snprintf(label, sizeof label, "reopen, %s cache", cache);
		printf("  %-31s %10.2f ms %8.2f ms %12.2f   (open+fstat+read header & trailer of the %zu files)\n", label,
		       cart_open * 1e3, raw_open * 1e3, raw_open > 0 ? cart_open / raw_open : 0, ps.n);
		if (warm)
			printf("  %-31s %10.2f ms %10s %12s   (none)\n", "close, clean (nothing written)", close_clean * 1e3,
			       "-", "-");
		snprintf(label, sizeof label, "first locate+read, %s", cache);
		printf("  %-31s %10.1f us %8.1f us %12.2f   (one pread of the block from a plain file)\n", label,
		       (double)f_lr / 1e3, (double)f_raw / 1e3, f_raw ? (double)f_lr / (double)f_raw : 0);
		printf("  %-31s %10.1f us\n", "  of which the locate alone", (double)f_loc / 1e3);
		snprintf(k, sizeof k, "locate.%s.reopen_ms", cache);
		kv(k, "%.3f", cart_open * 1e3);
		snprintf(k, sizeof k, "locate.%s.raw_open_ms", cache);
		kv(k, "%.3f", raw_open * 1e3);
		snprintf(k, sizeof k, "locate.%s.first_locate_read_us", cache);
		kv(k, "%.2f", (double)f_lr / 1e3);
		snprintf(k, sizeof k, "locate.%s.first_locate_us", cache);
		kv(k, "%.2f", (double)f_loc / 1e3);
		snprintf(k, sizeof k, "locate.%s.first_raw_pread_us", cache);
		kv(k, "%.2f", (double)f_raw / 1e3);
		if (warm) {
			kv("locate.close_clean_ms", "%.3f", close_clean * 1e3);
		}
	}

	printf("\n  %s random objects, each: vtl_cart_locate then one vtl_cart_read (microseconds)\n", grp(n, g3, sizeof g3));
	printf("  %-34s %9s %9s %9s %9s\n", "", "mean", "p50", "p99", "max");
	print_lat_row("cold: locate alone", cold_l);
	print_lat_row("cold: locate + read", cold_lr);
	print_lat_row("cold: baseline pread() of the block", cold_raw);
	printf("  %-34s %9.2f %9.2f %9.2f %9.2f   (time ratios)\n", "cold: locate+read x baseline", cold_lr.mean / cold_raw.mean,
	       cold_lr.p50 / cold_raw.p50, cold_lr.p99 / cold_raw.p99, cold_lr.max / cold_raw.max);
	print_lat_row("warm: locate alone", warm_l);
	print_lat_row("warm: locate + read", warm_lr);
	print_lat_row("warm: baseline pread() of the block", warm_raw);
	printf("  %-34s %9.2f %9.2f %9.2f %9.2f   (time ratios)\n", "warm: locate+read x baseline", warm_lr.mean / warm_raw.mean,
	       warm_lr.p50 / warm_raw.p50, warm_lr.p99 / warm_raw.p99, warm_lr.max / warm_raw.max);
	printf("  cold: the page cache was dropped before the reopen, so the random reads start cold (the index and\n"
	       "  data pages they touch stay cached afterwards); warm: every file was read through first\n");
	kv_lat("locate.cold.locate", cold_l);
	kv_lat("locate.cold.locate_read", cold_lr);
	kv_lat("locate.cold.raw_pread", cold_raw);
	kv_lat("locate.warm.locate", warm_l);
	kv_lat("locate.warm.locate_read", warm_lr);
	kv_lat("locate.warm.raw_pread", warm_raw);
	printf("\n  target LOCATE <= 1 ms (informational): locate alone, worst case: %s\n",
	       verdict_le_us(cold_l.max > warm_l.max ? cold_l.max : warm_l.max, v1, sizeof v1));
	printf("                                         locate + first read, p99 cold: %s\n",
	       verdict_le_us(cold_lr.p99, v2, sizeof v2));
	printf("                                         locate + first read, max cold: %s\n",
	       verdict_le_us(cold_lr.max, v1, sizeof v1));
	printf("                                         locate + first read, p99 warm: %s\n",
	       verdict_le_us(warm_lr.p99, v2, sizeof v2));

	/* ---- 4. on-disk overhead ---- */
	uint64_t files_bytes;
	if (files_size(&ps, &files_bytes))
		return -1;
	uint64_t payload = blocks * LOC_BS;
	uint64_t expect_stored = blocks * (REC_HEADER_LEN + LOC_BS) + nfm * REC_HEADER_LEN;
	uint64_t seg_hdrs = (uint64_t)ps.n * SEG_HEADER_LEN;
	uint64_t overhead = files_bytes - stored - seg_hdrs;
	double hdr_per_rec = (double)(stored - payload) / (double)objects;
	double ov_per_block = (double)overhead / (double)blocks;
	char g4[32], g5[32], g6[32], g7[32];
	printf("\n== 4. On-disk overhead of that cartridge (measured from file sizes, not from the format description)\n\n");
	printf("  segment files                    %zu files, %s bytes\n", ps.n, grp(files_bytes, g4, sizeof g4));
	printf("  record bytes (headers+payloads)  %s bytes, as the cartridge reports them (stored_bytes); %s\n",
	       grp(stored, g5, sizeof g5), stored == expect_stored ? "= blocks x (32+512) + filemarks x 32" : "UNEXPECTED");
	printf("  segment headers                  %zu x %d = %s bytes\n", ps.n, SEG_HEADER_LEN, grp(seg_hdrs, g6, sizeof g6));
	printf("  index + footer (the rest)        %s bytes = %.3f bytes per block\n", grp(overhead, g7, sizeof g7),
	       ov_per_block);
	printf("  record header, in-line           %.2f bytes per record (stored_bytes - payload) / objects\n", hdr_per_rec);
	printf("\n  %-42s %10s %12s %10s\n", "bytes per block", "cartridge", "mhVTL (ref.)", "x mhVTL");
	printf("  %-42s %10.3f %12d %10.4f\n", "index + footer", ov_per_block, MHVTL_INDEX_PER_BLOCK,
	       ov_per_block / MHVTL_INDEX_PER_BLOCK);
	printf("  %-42s %10.3f %12d %10.4f\n", "all metadata (record header + index+footer)",
	       hdr_per_rec * objects / blocks + ov_per_block, MHVTL_INDEX_PER_BLOCK,
	       (hdr_per_rec * objects / blocks + ov_per_block) / MHVTL_INDEX_PER_BLOCK);
	printf("  mhVTL reference, not measured here: usr/vtlcart.c keeps one 512-byte struct raw_header per block\n"
	       "  or filemark in the .indx file and nothing else per block in .data\n");
	if (stored != expect_stored)
		printf("  WARNING: stored_bytes %" PRIu64 " differs from the %" PRIu64 " bytes of records written\n", stored,
		       expect_stored);
	kv("index.segment_files", "%zu", ps.n);
	kv("index.file_bytes", "%" PRIu64, files_bytes);
	kv("index.stored_bytes", "%" PRIu64, stored);
	kv("index.overhead_bytes", "%" PRIu64, overhead);
	kv("index.overhead_per_block", "%.4f", ov_per_block);
	kv("index.record_header_per_record", "%.3f", hdr_per_rec);
	kv("index.x_mhvtl", "%.5f", ov_per_block / MHVTL_INDEX_PER_BLOCK);

	free(tl);
	free(tlr);
	free(traw);
	free(objs);
	paths_free(&ps);
	paths_free(&pall);
	paths_free(&praw);
	if ((rc = vtl_cart_delete(g_pool, "BENCHL")))
		return fail_vtl("vtl_cart_delete(BENCHL)", rc);
	unlink(p_raw);
	return stored == expect_stored ? 0 : -1;
}

static void on_signal(int sig)
{
	(void)sig;
	g_stop = 1;
}

/* ---------------------------------------------------------------- WRITE FILEMARKS-heavy writing */

/*
 * A host that writes a filemark every few blocks (WRITE FILEMARKS without
 * IMMED: the drive syncs everything before it) pays a sync per filemark.
 * Since the damage detection, each sync of a cartridge also writes its
 * segment's sync mark (header bytes 80..95, carried by the next fdatasync),
 * so the header's page is written again at every sync. Measured beside a
 * plain file in the same folder with the same blocks and an fdatasync at the
 * same points, and beside the same plain file that also rewrites 16 bytes at
 * offset 80 after each fdatasync, which tells the mark's share.
 */
#define FM_BLK ((size_t)64 << 10) /* block size of the filemark runs */
static const unsigned fm_every[] = {1, 8, 64};
enum { FM_RAW, FM_RAW_MARK, FM_CART, FM_KINDS }; /* per pattern: plain file, plain file with the mark, cartridge */

struct fmres {
	double secs;
	unsigned syncs;
};

/* Plain file: every blocks by write(), then fdatasync (with mark: then 16 bytes rewritten at offset 80). */
static int raw_fm_write(const char *path, unsigned every, bool mark, const unsigned char *src, size_t pool,
			uint64_t total, struct fmres *r)
{
	memset(r, 0, sizeof *r);
	unlink(path);
	settle();
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0640);
	if (fd < 0)
		return fail_sys("open", path);
	unsigned char m[SEG_SYNCMARK_LEN];
	memset(m, 0xA5, sizeof m);
	uint64_t t0 = now_ns(), n = 0;
	for (uint64_t off = 0; off < total; off += FM_BLK) {
		if (g_stop) {
			close(fd);
			return interrupted();
		}
		if (write_full(fd, src + off % pool, FM_BLK)) {
			close(fd);
			return fail_sys("write", path);
		}
		if (++n % every && off + FM_BLK < total)
			continue;
		if (fdatasync(fd) != 0) {
			close(fd);
			return fail_sys("fdatasync", path);
		}
		r->syncs++;
		if (mark && pwrite(fd, m, sizeof m, SEG_SYNCMARK_OFF) != (ssize_t)sizeof m) {
			close(fd);
			return fail_sys("pwrite", path);
		}
	}
	r->secs = (double)(now_ns() - t0) / 1e9;
	close(fd);
	unlink(path);
	return 0;
}

/* The cartridge: every blocks, then WRITE FILEMARKS as the drive runs it without IMMED (a filemark, then a sync). */
static int cart_fm_write(const char *bc, unsigned every, const unsigned char *src, size_t pool, uint64_t total,
			 struct fmres *r)
{
	memset(r, 0, sizeof *r);
	int ex = vtl_cart_exists(g_pool, bc), rc;
	if (ex > 0 && (rc = vtl_cart_delete(g_pool, bc)))
		return fail_vtl("vtl_cart_delete", rc);
	if ((rc = vtl_cart_create(g_pool, bc)))
		return fail_vtl("vtl_cart_create", rc);
	struct vtl_cart *c;
	struct vtl_cart_params p = {0};
	if ((rc = vtl_cart_open(g_pool, bc, &p, &c)))
		return fail_vtl("vtl_cart_open", rc);
	settle();
	uint64_t t0 = now_ns(), n = 0, fms = 0;
	for (uint64_t off = 0; off < total; off += FM_BLK) {
		if (g_stop)
			return interrupted();
		if ((rc = vtl_cart_write_block(c, src + off % pool, FM_BLK)) != VTL_OK)
			return fail_vtl("vtl_cart_write_block", rc);
		if (++n % every && off + FM_BLK < total)
			continue;
		if ((rc = vtl_cart_write_filemarks(c, 1)) != VTL_OK)
			return fail_vtl("vtl_cart_write_filemarks", rc);
		fms++;
		if ((rc = vtl_cart_sync(c)) != VTL_OK)
			return fail_vtl("vtl_cart_sync", rc);
		r->syncs++;
	}
	r->secs = (double)(now_ns() - t0) / 1e9;
	struct vtl_position pos;
	vtl_cart_position(c, &pos);
	if (pos.eod != n + fms)
		return fail_msg("%s: %" PRIu64 " blocks and %" PRIu64 " filemarks written, end of data at %" PRIu64, bc, n,
				fms, pos.eod);
	if ((rc = vtl_cart_close(c)))
		return fail_vtl("vtl_cart_close", rc);
	if ((rc = vtl_cart_delete(g_pool, bc)))
		return fail_vtl("vtl_cart_delete", rc);
	return 0;
}

static int section_filemarks(const struct cfg *cf, const unsigned char *rnd)
{
	uint64_t total = cf->fm_bytes / FM_BLK * FM_BLK;
	unsigned R = cf->rounds;
	char path[PATH_MAX + 32];
	snprintf(path, sizeof path, "%s/raw_filemarks.dat", g_dir);
	printf("\n== 5. WRITE FILEMARKS-heavy writing: %" PRIu64 " MiB per run in 64 KiB blocks, a filemark and a sync\n"
	       "   (WRITE FILEMARKS without IMMED) after every 1, 8 or 64 blocks, timed from the first write to the\n"
	       "   last sync. Baselines in the same folder with the same blocks: a plain file, write() and an\n"
	       "   fdatasync where the cartridge syncs; the same with 16 bytes rewritten at offset 80 after each\n"
	       "   fdatasync (what the sync mark adds). %u round%s, a pattern's three runs in a row (reversed every\n"
	       "   second round); MB/s of host data and ms per sync, the medians; the ratio's range is over the\n"
	       "   rounds (each round's cartridge / plain), to show how steady the disk was\n\n",
	       total / MIB, R, R > 1 ? "s" : "");
	printf("   %-6s %9s %11s %10s %11s %12s %9s %11s %10s\n", "every", "plain", "plain+mark", "cartridge",
	       "cartridge/", "ratio", "ms/sync", "ms/sync", "ms/sync");
	printf("   %-6s %9s %11s %10s %11s %12s %9s %11s %10s\n", "blocks", "MB/s", "MB/s", "MB/s", "plain", "range",
	       "plain", "plain+mark", "cartridge");
	for (size_t e = 0; e < VTL_ARRAY_SIZE(fm_every); e++) {
		unsigned every = fm_every[e];
		struct fmres res[FM_KINDS][ROUNDS_MAX];
		for (unsigned r = 0; r < R; r++)
			for (int k = 0; k < FM_KINDS; k++) {
				int kind = r % 2 ? FM_KINDS - 1 - k : k;
				int rc = kind == FM_CART
						 ? cart_fm_write("BENCHF", every, rnd, cf->pool_bytes, total, &res[kind][r])
						 : raw_fm_write(path, every, kind == FM_RAW_MARK, rnd, cf->pool_bytes, total,
								&res[kind][r]);
				if (rc)
					return -1;
			}
		double rate[FM_KINDS], ms[FM_KINDS], v[ROUNDS_MAX];
		for (int k = 0; k < FM_KINDS; k++) {
			for (unsigned r = 0; r < R; r++)
				v[r] = mbps(total, res[k][r].secs);
			rate[k] = median(v, R);
			for (unsigned r = 0; r < R; r++)
				v[r] = res[k][r].syncs ? res[k][r].secs * 1e3 / res[k][r].syncs : 0;
			ms[k] = median(v, R);
		}
		double ratio = rate[FM_RAW] > 0 ? rate[FM_CART] / rate[FM_RAW] : 0, lo = 0, hi = 0;
		for (unsigned r = 0; r < R; r++) {
			double x = res[FM_CART][r].secs > 0 ? res[FM_RAW][r].secs / res[FM_CART][r].secs : 0;
			lo = r == 0 || x < lo ? x : lo;
			hi = r == 0 || x > hi ? x : hi;
		}
		char range[32];
		snprintf(range, sizeof range, "%.2f..%.2f", lo, hi);
		printf("   %-6u %9.1f %11.1f %10.1f %11.2f %12s %9.3f %11.3f %10.3f\n", every, rate[FM_RAW],
		       rate[FM_RAW_MARK], rate[FM_CART], ratio, range, ms[FM_RAW], ms[FM_RAW_MARK], ms[FM_CART]);
		char key[64];
		snprintf(key, sizeof key, "filemarks.every%u.plain_mbs", every);
		kv(key, "%.1f", rate[FM_RAW]);
		snprintf(key, sizeof key, "filemarks.every%u.plain_mark_mbs", every);
		kv(key, "%.1f", rate[FM_RAW_MARK]);
		snprintf(key, sizeof key, "filemarks.every%u.cart_mbs", every);
		kv(key, "%.1f", rate[FM_CART]);
		snprintf(key, sizeof key, "filemarks.every%u.cart_over_plain", every);
		kv(key, "%.3f", ratio);
		snprintf(key, sizeof key, "filemarks.every%u.cart_ms_per_sync", every);
		kv(key, "%.3f", ms[FM_CART]);
	}
	printf("\n   (ratios, not verdicts: nothing here passes or fails on time)\n");
	return 0;
}

static int run(const struct cfg *cf)
{
	char g1[32];
	/* ---- machine facts ---- */
	struct utsname un;
	uname(&un);
	char cpu[160], dev[160], when[64];
	cpu_model(cpu, sizeof cpu);
	device_of(g_dir, dev, sizeof dev);
	time_t now = time(NULL);
	strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S UTC", gmtime(&now));
	struct statfs sfs;
	struct statvfs svfs;
	if (statfs(g_dir, &sfs) != 0 || statvfs(g_dir, &svfs) != 0)
		return fail_sys("statfs", g_dir);
	uint64_t free_b = (uint64_t)svfs.f_bavail * svfs.f_frsize;
	double ram = (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGESIZE) / GIB;
	uint64_t t_ov0 = now_ns();
	for (int i = 0; i < 100000; i++)
		(void)now_ns();
	double timer_ns = (double)(now_ns() - t_ov0) / 100000;

	printf("vtl cartridge-store benchmark (tests/bench/bench_backend)\n\n");
	printf("  date        %s\n", when);
	printf("  machine     %ld CPUs online (nproc), %s, %.1f GiB RAM\n", sysconf(_SC_NPROCESSORS_ONLN), cpu, ram);
	printf("  kernel      %s %s %s\n", un.sysname, un.release, un.machine);
	char la[64];
	loadavg(la, sizeof la);
	printf("  load avg    %s at the start (1/5/15 min; anything else running shares the CPUs and the disk)\n", la);
	printf("  crc32c      %s\n", crc32c_hw() ? "hardware (SSE4.2 crc32 instruction)" : "table fallback (no hardware crc32)");
	double crc_fast = 0, crc_table = 0;
	unsigned char *crc_buf = malloc(BLK);
	if (crc_buf) {
		for (size_t i = 0; i < BLK; i++)
			crc_buf[i] = (unsigned char)(i * 2654435761u >> 13); /* the CRC costs the same for any bytes */
		crc_fast = crc_cpu_per_gib(crc32c, crc_buf);
		crc_table = crc_cpu_per_gib(crc32c_portable, crc_buf);
		printf("              %.3f CPU s per GiB over a %zu KiB buffer in the cache (the table code: %.3f)\n",
		       crc_fast, BLK >> 10, crc_table);
		free(crc_buf);
	}
	printf("  lz4         %s;  timer: CLOCK_MONOTONIC, %.0f ns per reading\n", LZ4_versionString(), timer_ns);
	printf("  folder      %s\n", g_dir);
	printf("  file system %s (statfs type 0x%lx), %s, %.1f GiB free\n", fs_name((long)sfs.f_type),
	       (unsigned long)sfs.f_type & 0xffffffffu, dev, (double)free_b / GIB);
	if (sfs.f_type == 0x01021994 || sfs.f_type == 0x858458F6)
		printf("  WARNING     this folder is in memory (tmpfs/ramfs): the figures say nothing about a disk\n");
	printf("  pool        %u member directories in that folder%s,\n"
	       "              every other setting default (segment size %llu MiB, read-ahead, I/O threads, LZ4 level)\n",
	       g_nmem, g_nmem > 1 ? " (one file system: members do not add disks)" : "",
	       (unsigned long long)(VTL_SEGMENT_SIZE_DEFAULT / MIB));
	printf("  run size    %" PRIu64 " MiB per append run; the data comes from a %zu MiB buffer generated before\n"
	       "              any timing and reused cyclically, identical for the baselines and the cartridges\n",
	       cf->run_bytes / MIB, cf->pool_bytes / MIB);
	printf("  privileges  %s\n", g_root ? "root: cold runs also drop the whole page cache"
					   : "not root: cold runs drop only the files' own pages");
	/*
	 * Peak bytes on disk: the precondition file (4 runs), or during the appends at most 3.5 runs at once (the
	 * buffered baseline, (a), (b) at ~half and (c) or a scratch baseline file), or the LOCATE phase.
	 */
	uint64_t loc_bytes = 2 * (cf->loc_blocks + cf->loc_blocks / LOC_FM_EVERY) * (REC_HEADER_LEN + LOC_BS + 8);
	uint64_t peak = 4 * cf->run_bytes > loc_bytes ? 4 * cf->run_bytes : loc_bytes;
	printf("  data size   at most %.2f GiB on disk at once; 3x that is needed free: %s\n", (double)peak / GIB,
	       free_b >= 3 * peak ? "ok" : "NOT ENOUGH");
	kv("machine.nproc", "%ld", sysconf(_SC_NPROCESSORS_ONLN));
	kv("machine.crc32c_hw", "%d", crc32c_hw() ? 1 : 0);
	kv("machine.crc32c_cpu_s_per_gib", "%.3f", crc_fast);
	kv("machine.crc32c_table_cpu_s_per_gib", "%.3f", crc_table);
	kv("machine.fs", "%s", fs_name((long)sfs.f_type));
	kv("machine.free_gib", "%.1f", (double)free_b / GIB);
	kv("run.mib", "%" PRIu64, cf->run_bytes / MIB);
	if (free_b < 3 * peak) {
		fprintf(stderr,
			"bench_backend: refusing to run: %s has %.2f GiB free, the benchmark needs 3 x %.2f GiB = %.2f GiB.\n"
			"  Lower VTL_BENCH_MB (now %" PRIu64 ") or VTL_BENCH_LOCATE_BLOCKS, or point VTL_BENCH_DIR elsewhere.\n",
			g_dir, (double)free_b / GIB, (double)peak / GIB, 3.0 * (double)peak / GIB, cf->run_bytes / MIB);
		return -1;
	}

	/* ---- the pool ---- */
	struct vtl_pool_config pc = {.n_members = g_nmem};
	for (unsigned i = 0; i < g_nmem; i++) {
		snprintf(g_member[i], sizeof g_member[i], "%s/m%u", g_dir, i);
		if (mkdir(g_member[i], 0750) != 0)
			return fail_sys("mkdir", g_member[i]);
		pc.members[i] = g_member[i];
	}
	char err[256] = "";
	int rc = vtl_pool_open(&pc, &g_pool, err, sizeof err);
	if (rc) {
		fprintf(stderr, "bench_backend: ERROR: vtl_pool_open: %s: %s\n", vtl_strerror(rc), err);
		return -1;
	}

	/* ---- the data, before any timing ---- */
	unsigned char *rnd = NULL, *cmp = NULL, *buf = NULL;
	if (posix_memalign((void **)&rnd, 4096, cf->pool_bytes) || posix_memalign((void **)&cmp, 4096, cf->pool_bytes) ||
	    posix_memalign((void **)&buf, 4096, BLK))
		return fail_msg("cannot allocate 2 x %zu MiB of data buffers", cf->pool_bytes / MIB);
	rng_seed(cf->seed);
	double cal_ratio = 0;
	unsigned extra = 0;
	if (calibrate_extra(g_pool, &extra, &cal_ratio))
		return -1;
	fill_random(rnd, cf->pool_bytes);
	fill_compressible(cmp, cf->pool_bytes, extra);
	double lz_rnd = lz4_ratio(rnd, cf->pool_bytes), lz_cmp = lz4_ratio(cmp, cf->pool_bytes);
	printf("  data        random bytes; compressible: literals of 16..32 random bytes, each followed by %u bytes\n"
	       "              more of a byte run or a copy of earlier bytes (%.0f%% random), tuned so that the cartridge\n"
	       "              stores it at %.2f:1 (16-block trial); plain LZ4_compress_default on whole 256 KiB\n"
	       "              blocks of the buffers: random %.3f:1, compressible %.3f:1\n",
	       extra, 100.0 * 24 / (24 + 24 + extra), cal_ratio, lz_rnd, lz_cmp);
	kv("data.calibration_ratio", "%.3f", cal_ratio);
	kv("data.lz4_ratio_random", "%.3f", lz_rnd);
	kv("data.lz4_ratio_compressible", "%.3f", lz_cmp);

	if (cf->precondition && precondition(cf, rnd, peak))
		return -1;
	if (section_throughput(cf, rnd, cmp, buf))
		return -1;
	if (section_locate(cf, rnd, buf))
		return -1;
	if (section_filemarks(cf, rnd))
		return -1;
	free(rnd);
	free(cmp);
	free(buf);
	vtl_pool_close(g_pool);
	g_pool = NULL;

	if (cf->kv) {
		printf("\n== key=value (one line per figure, for scripts; VTL_BENCH_KV=0 turns this off)\n");
		for (unsigned i = 0; i < g_nkv; i++)
			printf("%s=%s\n", g_kv[i].key, g_kv[i].val);
	}
	loadavg(la, sizeof la);
	printf("\nload average at the end: %s\n", la);
	printf("bench_backend: done (%s objects checked on read; no pass/fail on time)\n",
	       grp(2 * (cf->run_bytes / BLK) + cf->loc_n * 2 + 2, g1, sizeof g1));
	return 0;
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	struct cfg cf;
	if (read_cfg(&cf))
		return 1;
	g_nmem = cf.members;
	g_root = geteuid() == 0;
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGPIPE, &sa, NULL); /* the reader of our output went away: stop, clean up */

	int n = snprintf(g_dir, sizeof g_dir, "%s/vtl-bench.XXXXXX", cf.base);
	if (n < 0 || (size_t)n >= sizeof g_dir - 64) {
		fprintf(stderr, "bench_backend: VTL_BENCH_DIR is too long\n");
		return 1;
	}
	if (!mkdtemp(g_dir)) {
		fprintf(stderr, "bench_backend: cannot create a folder in %s: %s\n", cf.base, strerror(errno));
		return 1;
	}
	int rc = run(&cf);
	if (rc && g_pool)
		fprintf(stderr, "bench_backend: stopped; removing %s\n", g_dir);
	/* After a failure a cartridge may still be open: the pool is not closed then, the process ends anyway. */
	rm_rf(g_dir);
	return rc ? 1 : 0;
}
