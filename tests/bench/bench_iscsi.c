/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Benchmark of a tape drive over the built-in iSCSI target, with libiscsi as
 * the host: writes VTL_BENCH_MB MiB of variable blocks of 256 KiB and 512 KiB
 * (random data, then data the cartridge stores at about 2:1) with several
 * commands in flight, then WRITE FILEMARKS, rewinds, reads everything back
 * with several commands in flight and checks every byte. Next to it, in the
 * same run and the same folder, the raw disk writes the same block sequence
 * (like dd oflag=direct, and like dd conv=fdatasync) and reads it back.
 *
 * It prints MB/s, the client's and vtld's CPU seconds and ratios to the
 * baselines. Nothing passes or fails on time: the exit status is non-zero
 * only when something goes wrong (a command fails, data reads back wrong).
 * tests/bench/bench_iscsi.sh starts vtld for it; docs/benchmarks.md explains
 * every figure.
 *
 * Usage: bench_iscsi PORTAL TARGET-IQN
 * Environment: VTL_BENCH_DIR (folder for the baseline files, on the same file
 * system as vtld's pool; required), VTL_BENCH_POOL (vtld's pool member, to
 * measure what the cartridges hold), VTL_BENCH_VTLD_PID (to read vtld's CPU
 * time), VTL_BENCH_MB, VTL_BENCH_QD, VTL_BENCH_ROUNDS, VTL_BENCH_SEED,
 * VTL_BENCH_PRECONDITION.
 */
#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <inttypes.h>
#include <stddef.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <lz4.h>

#include <iscsi/iscsi.h>
#include <iscsi/scsi-lowlevel.h>

#include "tests/integration/hostlib.h"

#define SMALL_BLOCK ((size_t)256 << 10)
#define LARGE_BLOCK ((size_t)512 << 10)
#define DIRECT_ALIGN 4096          /* O_DIRECT buffer and offset alignment */
#define POOL_BYTES ((size_t)128 << 20) /* each data pool, reused cyclically */
#define QD_MAX 32                  /* the target's command window (MaxCmdSN - ExpCmdSN + 1) */
#define ROUNDS_MAX 9
#define POLL_MS 1000

/* SCSI (SSC-4, SMC-3, SPC-4) opcodes and the element addresses of the library vtld is given. */
#define OP_REWIND 0x01
#define OP_READ6 0x08
#define OP_WRITE6 0x0A
#define OP_WRITE_FILEMARKS6 0x10
#define OP_MOVE_MEDIUM 0xA5
#define CHANGER_LUN 0
#define FIRST_SLOT 1025
#define FIRST_DRIVE 257
#define ASCQ_FILEMARK 0x0001      /* FILEMARK DETECTED */
#define TUR_TRIES 5

#define TARGET_RANDOM 0.90        /* random write >= 0.9 x the O_DIRECT disk write */
#define TARGET_COMPRESSIBLE 1.00  /* compressible write above the O_DIRECT disk write */
#define TARGET_READ_MBS 1500.0    /* read >= 1.5 GB/s */

#define MB 1e6                    /* MB/s = 10^6 bytes per second, as dd prints them */
#define MIB ((uint64_t)1 << 20)

enum run { R_DIRECT, R_BUFFERED, R_RANDOM, R_COMPRESSIBLE, R_KINDS };
static const char *const run_name[R_KINDS] = {
	"raw O_DIRECT + fdatasync", "raw buffered + fdatasync", "(a) random data", "(b) ~2:1 data",
};

struct figures {
	double write_mbs, write_cpu_client, write_cpu_vtld, fm_ms;
	double read_mbs, read_cpu_client, read_cpu_vtld; /* cold: the page cache dropped before */
	double warm_mbs, warm_cpu_client, warm_cpu_vtld; /* warm: read again at once */
	double host_to_disk;
};

static struct iscsi_context *g_iscsi;
static const char *g_dir;
static char g_file[4096];

/* ------------------------------------------------------------- plumbing */

static void die(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "bench_iscsi: ERROR: ");
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	if (g_iscsi)
		fprintf(stderr, " (libiscsi: %s)", iscsi_get_error(g_iscsi));
	fputc('\n', stderr);
	if (g_file[0])
		unlink(g_file);
	exit(1);
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static double cpu_self(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
	       ru.ru_stime.tv_usec / 1e6;
}

/* user+system seconds of process pid from /proc/PID/stat (fields 14 and 15); -1 when unknown. */
static double cpu_of(long pid)
{
	if (pid <= 0)
		return -1;
	char path[64], buf[1024];
	snprintf(path, sizeof path, "/proc/%ld/stat", pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = 0;
	/* The command name may hold blanks: count fields after its closing parenthesis (field 2). */
	char *p = strrchr(buf, ')');
	unsigned long long ut, st;
	if (!p || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
		return -1;
	return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

static uint64_t env_u64(const char *name, uint64_t def, uint64_t lo, uint64_t hi)
{
	const char *s = getenv(name);
	if (!s || !*s)
		return def;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || *end || v < lo || v > hi)
		die("%s=%s: expected a number from %" PRIu64 " to %" PRIu64, name, s, lo, hi);
	return v;
}

/* Writes the dirty pages out and, as root, empties the page cache, so no run pays for the last one. */
static void settle(void)
{
	sync();
	int fd = open("/proc/sys/vm/drop_caches", O_WRONLY);
	if (fd >= 0) {
		if (write(fd, "1", 1) != 1) {
			/* Not root, or not allowed here: the runs are then only as cold as sync makes them. */
		}
		close(fd);
	}
}

static double median(double *v, unsigned n)
{
	for (unsigned i = 1; i < n; i++)
		for (unsigned j = i; j > 0 && v[j - 1] > v[j]; j--) {
			double t = v[j];
			v[j] = v[j - 1];
			v[j - 1] = t;
		}
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* ----------------------------------------------------------------- data */

static uint64_t g_rng;

static uint64_t rnd(void)
{
	/* xorshift64*: fast, and the same bytes for the same seed. */
	g_rng ^= g_rng >> 12;
	g_rng ^= g_rng << 25;
	g_rng ^= g_rng >> 27;
	return g_rng * 2685821657736338717ull;
}

static void fill_random(uint8_t *p, size_t n)
{
	for (size_t i = 0; i + 8 <= n; i += 8) {
		uint64_t v = rnd();
		memcpy(p + i, &v, 8);
	}
}

/*
 * Data LZ4 stores at about 2:1: random literals of 16..31 bytes, each
 * followed by `fill` bytes that are either a run of one byte or a copy of
 * bytes seen shortly before. calibrate() picks `fill` so that LZ4 as the
 * cartridge uses it (64 KiB pieces, acceleration 2, docs/benchmarks.md)
 * reaches 2:1; the table shows what the cartridge really stored.
 */
#define LIT_MIN 16
#define LIT_SPAN 16
#define COPY_BACK_MAX 4096
#define LZ4_PIECE (64u << 10)
#define LZ4_ACCELERATION 2
#define CALIBRATE_BYTES ((size_t)8 << 20)
#define FILL_MAX 64
#define RATIO_WANTED 2.0

static void fill_compressible(uint8_t *p, size_t n, size_t fill)
{
	size_t at = 0;
	while (at < n) {
		size_t lit = LIT_MIN + rnd() % LIT_SPAN;
		for (size_t i = 0; i < lit && at < n; i++)
			p[at++] = (uint8_t)rnd();
		uint64_t r = rnd();
		size_t back = 1 + r % (at < COPY_BACK_MAX ? at : COPY_BACK_MAX);
		for (size_t i = 0; i < fill && at < n; i++, at++)
			p[at] = (r >> 40) & 1 ? p[at - back] : (uint8_t)(r >> 48);
	}
}

/* The ratio LZ4 reaches on n bytes of p, in pieces as the cartridge compresses them. */
static double lz4_ratio(const uint8_t *p, size_t n)
{
	static char out[LZ4_COMPRESSBOUND(LZ4_PIECE)];
	size_t stored = 0;
	for (size_t at = 0; at < n; at += LZ4_PIECE) {
		int len = (int)(n - at < LZ4_PIECE ? n - at : LZ4_PIECE);
		int c = LZ4_compress_fast((const char *)p + at, out, len, (int)sizeof out, LZ4_ACCELERATION);
		stored += c > 0 && c < len ? (size_t)c : (size_t)len;
	}
	return (double)n / (double)stored;
}

/* The smallest fill length whose data LZ4 stores at RATIO_WANTED:1 or better; *ratio tells what it got. */
static size_t calibrate(uint8_t *scratch, double *ratio)
{
	uint64_t seed = g_rng;
	size_t fill = 1;
	for (; fill < FILL_MAX; fill++) {
		g_rng = seed;
		fill_compressible(scratch, CALIBRATE_BYTES, fill);
		if ((*ratio = lz4_ratio(scratch, CALIBRATE_BYTES)) >= RATIO_WANTED)
			break;
	}
	g_rng = seed;
	return fill;
}

/* The block sequence: lengths of 256 or 512 KiB at random, each from its own offset of the pool. */
struct seq {
	size_t n;
	uint32_t *len;
	size_t *off;
	uint64_t bytes;
};

static void seq_make(struct seq *s, uint64_t total)
{
	size_t cap = (size_t)(total / SMALL_BLOCK) + 1;
	s->len = calloc(cap, sizeof *s->len);
	s->off = calloc(cap, sizeof *s->off);
	if (!s->len || !s->off)
		die("out of memory for %zu block descriptors", cap);
	s->n = 0;
	s->bytes = 0;
	size_t span = POOL_BYTES - LARGE_BLOCK, at = 0;
	while (s->bytes < total) {
		size_t len = rnd() & 1 && s->bytes + LARGE_BLOCK <= total ? LARGE_BLOCK : SMALL_BLOCK;
		/* Each block starts one 4 KiB page past the previous one's end, so neighbours never hold the same bytes. */
		s->off[s->n] = at % span / DIRECT_ALIGN * DIRECT_ALIGN;
		s->len[s->n++] = (uint32_t)len;
		s->bytes += len;
		at += len + DIRECT_ALIGN;
	}
}

/* --------------------------------------------------------------- iSCSI */

static void put24(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 16);
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)v;
}

/* Runs one command synchronously; returns the task (the caller frees it). */
static struct scsi_task *run_sync(int lun, const uint8_t *cdb, int cdb_len, int dir, void *buf, size_t len)
{
	struct scsi_task *t = scsi_create_task(cdb_len, (unsigned char *)cdb, dir, (int)len);
	if (!t)
		die("scsi_create_task");
	struct iscsi_data d = {len, buf};
	if (!iscsi_scsi_command_sync(g_iscsi, lun, t, dir == SCSI_XFER_WRITE ? &d : NULL))
		die("command %02Xh on LUN %d did not complete", cdb[0], lun);
	return t;
}

static void good_sync(int lun, const uint8_t *cdb, int cdb_len, int dir, void *buf, size_t len)
{
	struct scsi_task *t = run_sync(lun, cdb, cdb_len, dir, buf, len);
	if (t->status != SCSI_STATUS_GOOD)
		die("command %02Xh on LUN %d: status %d, sense key %d, ASC/ASCQ %04X", cdb[0], lun, t->status,
		    t->sense.key, t->sense.ascq);
	scsi_free_scsi_task(t);
}

/* TEST UNIT READY until GOOD, past the unit attentions a new session and a load bring. */
static void ready(int lun)
{
	uint8_t tur[6] = {0};
	for (int i = 0; i < TUR_TRIES; i++) {
		struct scsi_task *t = run_sync(lun, tur, sizeof tur, SCSI_XFER_NONE, NULL, 0);
		int st = t->status, key = t->sense.key;
		scsi_free_scsi_task(t);
		if (st == SCSI_STATUS_GOOD)
			return;
		if (key != SCSI_SENSE_UNIT_ATTENTION)
			die("TEST UNIT READY on LUN %d: status %d, sense key %d", lun, st, key);
	}
	die("LUN %d never became ready", lun);
}

/* The barcode in element addr ("" when empty), from READ ELEMENT STATUS with VOLTAG. */
static void barcode_at(uint16_t addr, char out[HOST_BARCODE_LEN + 1])
{
	host_barcode_at(g_iscsi, CHANGER_LUN, addr, out);
}

/* Moves the cartridge of slot FIRST_SLOT + i into drive i (LUN i + 1), unless one is there already. */
static void load(unsigned i, char barcode[HOST_BARCODE_LEN + 1])
{
	uint16_t slot = (uint16_t)(FIRST_SLOT + i), drive = (uint16_t)(FIRST_DRIVE + i);
	barcode_at(drive, barcode);
	if (!barcode[0]) {
		uint8_t cdb[12] = {OP_MOVE_MEDIUM, 0, 0, 0, (uint8_t)(slot >> 8), (uint8_t)slot, (uint8_t)(drive >> 8),
				   (uint8_t)drive};
		good_sync(CHANGER_LUN, cdb, sizeof cdb, SCSI_XFER_NONE, NULL, 0);
		barcode_at(drive, barcode);
		if (!barcode[0])
			die("drive element %u is empty after MOVE MEDIUM from slot %u", drive, slot);
	}
	ready((int)i + 1);
}

/* Commands in flight on one drive: WRITE(6) or READ(6) of the blocks of a sequence, in order. */
struct stream {
	int lun;
	bool write;
	const struct seq *seq;
	const uint8_t *pool;
	size_t next, done, in_flight;
};

static uint8_t *g_rbuf[QD_MAX]; /* read buffers, one per command slot */

struct slot_ref {
	struct stream *s;
	unsigned slot;
	size_t blk;
};
static struct slot_ref g_refs[QD_MAX];

static void issue(struct stream *s, unsigned slot);

static void completed(struct iscsi_context *iscsi, int status, void *command_data, void *private_data)
{
	(void)iscsi;
	struct scsi_task *t = command_data;
	struct slot_ref *r = private_data;
	struct stream *s = r->s;
	uint32_t len = s->seq->len[r->blk];
	if (status != SCSI_STATUS_GOOD)
		die("%s of block %zu (%u bytes): status %d, sense key %d, ASC/ASCQ %04X", s->write ? "WRITE" : "READ",
		    r->blk, len, status, t->sense.key, t->sense.ascq);
	if (!s->write) {
		if (t->residual_status != SCSI_RESIDUAL_NO_RESIDUAL)
			die("READ of block %zu: residual %u (a block of another length: out of order?)", r->blk, t->residual);
		if (memcmp(g_rbuf[r->slot], s->pool + s->seq->off[r->blk], len) != 0)
			die("block %zu (%u bytes) reads back different from what was written", r->blk, len);
	}
	scsi_free_scsi_task(t);
	s->done++;
	s->in_flight--;
	if (s->next < s->seq->n)
		issue(s, r->slot);
}

static void issue(struct stream *s, unsigned slot)
{
	size_t b = s->next++;
	uint32_t len = s->seq->len[b];
	uint8_t cdb[6] = {s->write ? OP_WRITE6 : OP_READ6, 0};
	put24(cdb + 2, len);
	struct scsi_task *t = scsi_create_task(sizeof cdb, cdb, s->write ? SCSI_XFER_WRITE : SCSI_XFER_READ, (int)len);
	if (!t)
		die("scsi_create_task");
	/* Reads land straight in the slot's buffer; writes go from the pool: no copy in the client. */
	if (!s->write && scsi_task_add_data_in_buffer(t, (int)len, g_rbuf[slot]) != 0)
		die("scsi_task_add_data_in_buffer");
	struct iscsi_data d = {len, (unsigned char *)s->pool + s->seq->off[b]};
	g_refs[slot] = (struct slot_ref){s, slot, b};
	s->in_flight++;
	if (iscsi_scsi_command_async(g_iscsi, s->lun, t, completed, s->write ? &d : NULL, &g_refs[slot]) != 0)
		die("sending block %zu", b);
}

/* Runs the whole sequence with qd commands in flight. */
static void stream_run(struct stream *s, unsigned qd)
{
	s->next = s->done = s->in_flight = 0;
	for (unsigned i = 0; i < qd && s->next < s->seq->n; i++)
		issue(s, i);
	while (s->done < s->seq->n) {
		struct pollfd pfd = {.fd = iscsi_get_fd(g_iscsi), .events = (short)iscsi_which_events(g_iscsi)};
		int n = poll(&pfd, 1, POLL_MS);
		if (n < 0 && errno != EINTR)
			die("poll: %s", strerror(errno));
		if (iscsi_service(g_iscsi, n > 0 ? pfd.revents : 0) != 0)
			die("iscsi_service");
	}
}

/* ---------------------------------------------------------------- runs */

static long g_vtld;

/* REWIND, then reads the stream's blocks back (cold: after settle) and meets the filemark after them. */
static void tape_read(struct stream *s, unsigned qd, bool cold, double *mbs, double *cpu_client, double *cpu_vtld)
{
	uint8_t rew[6] = {OP_REWIND};
	good_sync(s->lun, rew, sizeof rew, SCSI_XFER_NONE, NULL, 0);
	if (cold)
		settle();
	double c0 = cpu_self(), v0 = cpu_of(g_vtld), t0 = now();
	stream_run(s, qd);
	double t1 = now();
	*mbs = (double)s->seq->bytes / (t1 - t0) / MB;
	*cpu_client = cpu_self() - c0;
	*cpu_vtld = g_vtld > 0 ? cpu_of(g_vtld) - v0 : -1;
	/* After the last block: the filemark, reported as CHECK CONDITION, NO SENSE, FILEMARK. */
	uint8_t rd[6] = {OP_READ6, 0};
	put24(rd + 2, SMALL_BLOCK);
	struct scsi_task *t = run_sync(s->lun, rd, sizeof rd, SCSI_XFER_READ, g_rbuf[0], SMALL_BLOCK);
	if (t->status != SCSI_STATUS_CHECK_CONDITION || t->sense.key != SCSI_SENSE_NO_SENSE || t->sense.ascq != ASCQ_FILEMARK)
		die("after the last block: status %d, sense key %d, ASC/ASCQ %04X instead of the filemark", t->status,
		    t->sense.key, t->sense.ascq);
	scsi_free_scsi_task(t);
}

/* (a) or (b): write the sequence, a filemark, rewind, read it back and check it. */
static void tape_run(unsigned drive, const struct seq *seq, const uint8_t *pool, unsigned qd, const char *barcode,
		     const char *pool_dir, struct figures *f)
{
	int lun = (int)drive + 1;
	uint8_t rew[6] = {OP_REWIND}, wfm[6] = {OP_WRITE_FILEMARKS6, 0, 0, 0, 1, 0};
	good_sync(lun, rew, sizeof rew, SCSI_XFER_NONE, NULL, 0);
	struct stream s = {.lun = lun, .write = true, .seq = seq, .pool = pool};
	settle();
	double c0 = cpu_self(), v0 = cpu_of(g_vtld), t0 = now();
	stream_run(&s, qd);
	double t1 = now();
	/* Without IMMED, WRITE FILEMARKS ends when every block before it is on the medium (SSC-4 4.2.9). */
	good_sync(lun, wfm, sizeof wfm, SCSI_XFER_NONE, NULL, 0);
	double t2 = now(), c1 = cpu_self(), v1 = cpu_of(g_vtld);
	f->write_mbs = (double)seq->bytes / (t2 - t0) / MB;
	f->fm_ms = (t2 - t1) * 1e3;
	f->write_cpu_client = c1 - c0;
	f->write_cpu_vtld = g_vtld > 0 ? v1 - v0 : -1;
	f->host_to_disk = 0;
	if (pool_dir) {
		char dir[4096];
		snprintf(dir, sizeof dir, "%s/%s", pool_dir, barcode);
		uint64_t stored = 0;
		DIR *d = opendir(dir);
		if (!d)
			die("cannot open the cartridge folder %s: %s", dir, strerror(errno));
		for (struct dirent *e; (e = readdir(d));) {
			struct stat st;
			if (e->d_name[0] != '.' && fstatat(dirfd(d), e->d_name, &st, 0) == 0 && S_ISREG(st.st_mode))
				stored += (uint64_t)st.st_size;
		}
		closedir(d);
		f->host_to_disk = stored ? (double)seq->bytes / (double)stored : 0;
	}
	s.write = false;
	tape_read(&s, qd, true, &f->read_mbs, &f->read_cpu_client, &f->read_cpu_vtld);
	tape_read(&s, qd, false, &f->warm_mbs, &f->warm_cpu_client, &f->warm_cpu_vtld);
}

/* read() of each block of the baseline file into one buffer (cold: after settle). */
static void raw_read(const struct seq *seq, bool cold, double *mbs, double *cpu)
{
	int fd = open(g_file, O_RDONLY);
	uint8_t *b = aligned_alloc(DIRECT_ALIGN, LARGE_BLOCK);
	if (fd < 0 || !b)
		die("open %s: %s", g_file, strerror(errno));
	if (cold)
		settle();
	double c0 = cpu_self(), t0 = now();
	for (size_t i = 0; i < seq->n; i++)
		if (read(fd, b, seq->len[i]) != (ssize_t)seq->len[i])
			die("read %s: %s", g_file, strerror(errno));
	*mbs = (double)seq->bytes / (now() - t0) / MB;
	*cpu = cpu_self() - c0;
	free(b);
	close(fd);
}

/* The raw disk baselines: the same blocks from the same pool to a plain file, then fdatasync; read back. */
static void raw_run(bool direct, const struct seq *seq, const uint8_t *pool, struct figures *f)
{
	snprintf(g_file, sizeof g_file, "%s/raw-baseline", g_dir);
	int fd = open(g_file, O_WRONLY | O_CREAT | O_TRUNC | (direct ? O_DIRECT : 0), 0600);
	if (fd < 0)
		die("open %s: %s", g_file, strerror(errno));
	settle();
	double c0 = cpu_self(), t0 = now();
	for (size_t i = 0; i < seq->n; i++) {
		ssize_t n = write(fd, pool + seq->off[i], seq->len[i]);
		if (n != (ssize_t)seq->len[i])
			die("write %s: %s", g_file, n < 0 ? strerror(errno) : "short write");
	}
	double t1 = now();
	if (fdatasync(fd) != 0)
		die("fdatasync %s: %s", g_file, strerror(errno));
	double t2 = now();
	f->write_mbs = (double)seq->bytes / (t2 - t0) / MB;
	f->fm_ms = (t2 - t1) * 1e3;
	f->write_cpu_client = cpu_self() - c0;
	f->write_cpu_vtld = -1;
	f->host_to_disk = 1;
	close(fd);
	raw_read(seq, true, &f->read_mbs, &f->read_cpu_client);
	raw_read(seq, false, &f->warm_mbs, &f->warm_cpu_client);
	f->read_cpu_vtld = f->warm_cpu_vtld = -1;
	unlink(g_file);
	g_file[0] = 0;
}

/* Writes and deletes a file as large as what the run keeps on disk, so every run rewrites freed blocks. */
static void precondition(const uint8_t *pool, uint64_t bytes)
{
	snprintf(g_file, sizeof g_file, "%s/precondition", g_dir);
	int fd = open(g_file, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		die("open %s: %s", g_file, strerror(errno));
	double t0 = now();
	for (uint64_t at = 0; at < bytes; at += LARGE_BLOCK)
		if (write(fd, pool + at % (POOL_BYTES - LARGE_BLOCK), LARGE_BLOCK) != (ssize_t)LARGE_BLOCK)
			die("write %s: %s", g_file, strerror(errno));
	if (fdatasync(fd) != 0)
		die("fdatasync %s: %s", g_file, strerror(errno));
	printf("  precondition %.2f GiB written (buffered + fdatasync, %.1f MB/s) and deleted before the timed runs\n",
	       (double)bytes / (double)(1ull << 30), (double)bytes / (now() - t0) / MB);
	close(fd);
	unlink(g_file);
	g_file[0] = 0;
}

/* ---------------------------------------------------------------- main */

static void print_runs(const char *what, double v[ROUNDS_MAX], unsigned n)
{
	printf("   %s", what);
	for (unsigned i = 0; i < n; i++)
		printf("%s%.0f", i ? " / " : " ", v[i]);
}

static void target_line(const char *what, double got, double want, bool strictly)
{
	bool met = strictly ? got > want : got >= want;
	printf("    %-52s %s (%.3f %s %.2f)\n", what, met ? "met" : "MISSED", got,
	       met ? (strictly ? ">" : ">=") : (strictly ? "<=" : "<"), want);
}

/* The median of one figure over the rounds, the rounds' values kept in v. */
static double med_of(struct figures fig[][ROUNDS_MAX], enum run k, size_t field, unsigned n, double v[ROUNDS_MAX])
{
	double tmp[ROUNDS_MAX];
	for (unsigned r = 0; r < n; r++)
		v[r] = tmp[r] = *(const double *)((const char *)&fig[k][r] + field);
	return median(tmp, n);
}

#define FIELD(name) offsetof(struct figures, name)

static void cpu_cell(double v)
{
	if (v < 0)
		printf("       -");
	else
		printf(" %7.2f", v);
}

static void report(struct figures fig[][ROUNDS_MAX], unsigned n, unsigned qd)
{
	double v[ROUNDS_MAX], direct = med_of(fig, R_DIRECT, FIELD(write_mbs), n, v);
	double buffered = med_of(fig, R_BUFFERED, FIELD(write_mbs), n, v);
	printf("\n== Write: every block, then WRITE FILEMARKS (1, not IMMED); timed from the first WRITE to the\n"
	       "   filemark's GOOD status, which vtld sends once the cartridge is synced. The baselines write the\n"
	       "   same blocks to a plain file in the same folder and end with fdatasync. Medians of %u rounds.\n\n", n);
	printf("                                  MB/s  x direct  x buffered  sync/FM ms  CPU s client  CPU s vtld  host:disk\n");
	for (unsigned k = 0; k < R_KINDS; k++) {
		double mbs = med_of(fig, (enum run)k, FIELD(write_mbs), n, v);
		printf("  %-26s %8.1f  %8.2f  %10.2f  %10.0f      ", run_name[k], mbs, mbs / direct, mbs / buffered,
		       med_of(fig, (enum run)k, FIELD(fm_ms), n, v));
		cpu_cell(med_of(fig, (enum run)k, FIELD(write_cpu_client), n, v));
		printf("    ");
		cpu_cell(med_of(fig, (enum run)k, FIELD(write_cpu_vtld), n, v));
		double h = med_of(fig, (enum run)k, FIELD(host_to_disk), n, v);
		if (h > 0)
			printf("     %5.2f:1", h);
		else
			printf("          -");
		med_of(fig, (enum run)k, FIELD(write_mbs), n, v);
		print_runs(" runs", v, n);
		printf("\n");
	}
	printf("\n  raw O_DIRECT: like dd oflag=direct (each block one write() from an aligned buffer), then fdatasync\n"
	       "  raw buffered: like dd conv=fdatasync (every write into the page cache, then one fdatasync)\n"
	       "  (a), (b): %u WRITE(6) commands in flight on one session, variable blocks; sync/FM ms is the final\n"
	       "  fdatasync (baselines) or the WRITE FILEMARKS alone (cartridges), inside the timed span;\n"
	       "  host:disk = host bytes / bytes of the cartridge's segment files after the filemark\n", qd);

	printf("\n== Read: REWIND, then every block with READ(6) of its exact length, %u in flight, each compared\n"
	       "   with what was written (in the completion, inside the timed span); then one more READ must meet\n"
	       "   the filemark. Baseline: read() of each block of the O_DIRECT file, in the same two cache states.\n\n", qd);
	static const struct {
		const char *name;
		size_t mbs, client, vtld;
	} pass[] = {
		{"cold", FIELD(read_mbs), FIELD(read_cpu_client), FIELD(read_cpu_vtld)},
		{"warm", FIELD(warm_mbs), FIELD(warm_cpu_client), FIELD(warm_cpu_vtld)},
	};
	printf("                                 cache     MB/s    x raw   CPU s client  CPU s vtld\n");
	for (unsigned p = 0; p < 2; p++) {
		double raw = med_of(fig, R_DIRECT, pass[p].mbs, n, v);
		for (unsigned k = 0; k < R_KINDS; k++) {
			if (k == R_BUFFERED)
				continue;
			double mbs = med_of(fig, (enum run)k, pass[p].mbs, n, v);
			printf("  %-28s %5s %8.1f  %7.2f      ", k == R_DIRECT ? "raw read() of the file" : run_name[k],
			       pass[p].name, mbs, mbs / raw);
			cpu_cell(med_of(fig, (enum run)k, pass[p].client, n, v));
			printf("    ");
			cpu_cell(med_of(fig, (enum run)k, pass[p].vtld, n, v));
			med_of(fig, (enum run)k, pass[p].mbs, n, v);
			print_runs("   runs", v, n);
			printf("\n");
		}
	}
	printf("  cold: sync and (as root) the page cache dropped just before; warm: read again at once after the\n"
	       "  cold pass, so the blocks come from the page cache (and vtld's read-ahead)\n");

	double a = med_of(fig, R_RANDOM, FIELD(write_mbs), n, v), b = med_of(fig, R_COMPRESSIBLE, FIELD(write_mbs), n, v);
	double ra = med_of(fig, R_RANDOM, FIELD(read_mbs), n, v), rb = med_of(fig, R_COMPRESSIBLE, FIELD(read_mbs), n, v);
	double wa = med_of(fig, R_RANDOM, FIELD(warm_mbs), n, v), wb = med_of(fig, R_COMPRESSIBLE, FIELD(warm_mbs), n, v);
	double raw_read = med_of(fig, R_DIRECT, FIELD(read_mbs), n, v), raw_warm = med_of(fig, R_DIRECT, FIELD(warm_mbs), n, v);
	printf("\n  targets (informational, never pass/fail):\n");
	target_line("random write incl. filemark >= 0.90 x raw O_DIRECT", a / direct, TARGET_RANDOM, false);
	target_line("~2:1 write incl. filemark > raw O_DIRECT", b / direct, TARGET_COMPRESSIBLE, true);
	target_line("read of (a), cold, >= 1500 MB/s (ratio to 1500)", ra / TARGET_READ_MBS, 1.0, false);
	target_line("read of (b), cold, >= 1500 MB/s (ratio to 1500)", rb / TARGET_READ_MBS, 1.0, false);
	target_line("read of (a), warm, >= 1500 MB/s (ratio to 1500)", wa / TARGET_READ_MBS, 1.0, false);
	target_line("read of (b), warm, >= 1500 MB/s (ratio to 1500)", wb / TARGET_READ_MBS, 1.0, false);
	printf("\n  key=value\n");
	printf("  iscsi.write.direct_mbs=%.1f\n  iscsi.write.buffered_mbs=%.1f\n  iscsi.write.a_random_mbs=%.1f\n"
	       "  iscsi.write.b_2to1_mbs=%.1f\n  iscsi.read.raw_mbs=%.1f\n  iscsi.read.a_random_mbs=%.1f\n"
	       "  iscsi.read.b_2to1_mbs=%.1f\n  iscsi.read_warm.raw_mbs=%.1f\n  iscsi.read_warm.a_random_mbs=%.1f\n"
	       "  iscsi.read_warm.b_2to1_mbs=%.1f\n",
	       direct, buffered, a, b, raw_read, ra, rb, raw_warm, wa, wb);
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: bench_iscsi PORTAL TARGET-IQN (tests/bench/bench_iscsi.sh starts vtld for it)\n");
		return 2;
	}
	g_dir = getenv("VTL_BENCH_DIR");
	if (!g_dir || !*g_dir)
		die("VTL_BENCH_DIR is not set: the folder for the baseline files, on the file system of vtld's pool");
	const char *pool_dir = getenv("VTL_BENCH_POOL");
	g_vtld = (long)env_u64("VTL_BENCH_VTLD_PID", 0, 0, INT32_MAX);
	uint64_t mb = env_u64("VTL_BENCH_MB", 2048, 16, 1u << 20);
	unsigned qd = (unsigned)env_u64("VTL_BENCH_QD", 8, 1, QD_MAX);
	unsigned rounds = (unsigned)env_u64("VTL_BENCH_ROUNDS", 3, 1, ROUNDS_MAX);
	g_rng = env_u64("VTL_BENCH_SEED", 1, 1, UINT64_MAX);
	bool precond = env_u64("VTL_BENCH_PRECONDITION", 1, 0, 1);

	uint8_t *random_pool = aligned_alloc(DIRECT_ALIGN, POOL_BYTES);
	uint8_t *comp_pool = aligned_alloc(DIRECT_ALIGN, POOL_BYTES);
	if (!random_pool || !comp_pool)
		die("out of memory for the data pools");
	fill_random(random_pool, POOL_BYTES);
	double lz4_trial;
	size_t fill = calibrate(comp_pool, &lz4_trial);
	fill_compressible(comp_pool, POOL_BYTES, fill);
	struct seq seq;
	seq_make(&seq, mb * MIB);
	size_t large = 0;
	for (size_t i = 0; i < seq.n; i++)
		large += seq.len[i] == LARGE_BLOCK;

	time_t wall = time(NULL);
	char date[64];
	strftime(date, sizeof date, "%Y-%m-%d %H:%M:%S UTC", gmtime(&wall));
	double la[3] = {0};
	if (getloadavg(la, 3) != 3)
		la[0] = la[1] = la[2] = -1;
	printf("vtl iSCSI benchmark (tests/bench/bench_iscsi): a libiscsi host against vtld on %s\n\n", argv[1]);
	printf("  date        %s\n", date);
	printf("  machine     %ld CPUs online, shared by the client, vtld and the disk's writeback\n",
	       sysconf(_SC_NPROCESSORS_ONLN));
	printf("  load avg    %.2f %.2f %.2f at the start\n", la[0], la[1], la[2]);
	printf("  folder      %s (baseline files; vtld's pool member %s)\n", g_dir, pool_dir ? pool_dir : "unknown");
	printf("  run size    %" PRIu64 " MiB per run: %zu blocks, %zu of 512 KiB and %zu of 256 KiB in random order,\n"
	       "              from a 128 MiB pool generated before any timing; the same blocks for every run\n",
	       mb, seq.n, large, seq.n - large);
	printf("  data        (a) random bytes; (b) random literals of %d..%d bytes, each followed by %zu bytes of a\n"
	       "              byte run or a copy of earlier bytes, the fewest for which LZ4 (%u KiB pieces,\n"
	       "              acceleration %d, as the cartridge compresses) reaches %.2f:1 on an 8 MiB trial\n",
	       LIT_MIN, LIT_MIN + LIT_SPAN - 1, fill, LZ4_PIECE >> 10, LZ4_ACCELERATION, lz4_trial);
	printf("  in flight   %u commands (libiscsi async, one session; the target runs a drive's commands in CmdSN order)\n", qd);
	printf("  vtld CPU    %s\n", g_vtld > 0 ? "from /proc/PID/stat (utime + stime), all its threads" : "not measured (VTL_BENCH_VTLD_PID unset)");
	if (precond)
		precondition(random_pool, 3 * seq.bytes);

	g_iscsi = iscsi_create_context("iqn.2026-01.org.vtl:bench-host");
	if (!g_iscsi)
		die("iscsi_create_context");
	iscsi_set_targetname(g_iscsi, argv[2]);
	iscsi_set_session_type(g_iscsi, ISCSI_SESSION_NORMAL);
	iscsi_set_header_digest(g_iscsi, ISCSI_HEADER_DIGEST_NONE);
	if (iscsi_full_connect_sync(g_iscsi, argv[1], CHANGER_LUN) != 0)
		die("login to %s at %s", argv[2], argv[1]);
	ready(CHANGER_LUN);
	char bc[2][HOST_BARCODE_LEN + 1];
	load(0, bc[0]);
	load(1, bc[1]);
	printf("  cartridges  %s in drive 1 (LUN 1) for (a), %s in drive 2 (LUN 2) for (b)\n", bc[0], bc[1]);

	for (unsigned i = 0; i < qd; i++)
		if (!(g_rbuf[i] = malloc(LARGE_BLOCK)))
			die("out of memory for the read buffers");

	static struct figures fig[R_KINDS][ROUNDS_MAX];
	printf("\n== %u rounds of the 4 runs, every second round in reverse order; before every timed write and\n"
	       "   every timed read: sync and (as root) drop the page cache\n", rounds);
	for (unsigned r = 0; r < rounds; r++) {
		for (unsigned k = 0; k < R_KINDS; k++) {
			enum run run = (enum run)(r % 2 ? R_KINDS - 1 - k : k);
			struct figures *f = &fig[run][r];
			if (run == R_DIRECT || run == R_BUFFERED)
				raw_run(run == R_DIRECT, &seq, random_pool, f);
			else if (run == R_RANDOM)
				tape_run(0, &seq, random_pool, qd, bc[0], pool_dir, f);
			else
				tape_run(1, &seq, comp_pool, qd, bc[1], pool_dir, f);
			printf("   round %u  %-26s write %7.1f MB/s   read cold %7.1f MB/s, warm %7.1f MB/s\n", r + 1,
			       run_name[run], f->write_mbs, f->read_mbs, f->warm_mbs);
			fflush(stdout);
		}
	}
	report(fig, rounds, qd);
	iscsi_logout_sync(g_iscsi);
	iscsi_destroy_context(g_iscsi);
	for (unsigned i = 0; i < qd; i++)
		free(g_rbuf[i]);
	free(seq.len);
	free(seq.off);
	free(random_pool);
	free(comp_pool);
	return 0;
}
