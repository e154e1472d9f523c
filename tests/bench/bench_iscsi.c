/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Benchmark of tape drives over iSCSI with libiscsi as the host, vtld beside
 * its peer, Linux's tgt (tgtd with its SSC emulation on a file), measured in
 * the same run on the same file system: the figures of issue 20's Goal.
 *
 * Rounds alternate the two targets run by run (vtld, tgt, vtld, tgt, ...):
 * on a virtual disk the blocks freed just before a write are faster to write
 * than others, so neither target may always come after the other's deletion.
 * Each run starts on an empty medium (vtld: ERASE at BOT; tgt: a new tape
 * file), writes VTL_BENCH_MB MiB in variable blocks of 256 KiB with
 * VTL_BENCH_QD commands in flight, then WRITE FILEMARKS(1) without IMMED,
 * which both targets answer once the data is synced; then rewinds and reads
 * everything back three times (after write: at once, from what the write left
 * in the page cache; cold: page cache dropped; again: at once after the cold
 * read), checking every byte. Two kinds of data: random, and text that LZ4 stores at about
 * 2:1. Then four hosts write to four drives (four tape LUNs of tgt) at once.
 * Every round also writes the same blocks to a plain file the fastest way
 * found (bench_backend's "raw streamed").
 *
 * It prints MB/s, the targets' CPU seconds per GiB and the Goal's ratios with
 * the goal beside each, never pass/fail: the exit status is non-zero only
 * when something goes wrong on vtld's side or in the host (a command fails,
 * data reads back wrong). When tgt is absent or fails, the reason is printed
 * and vtld's figures are printed without ratios.
 * tests/bench/bench_iscsi.sh starts both targets; docs/benchmarks.md explains
 * every figure.
 *
 * Usage: bench_iscsi PORTAL TARGET-IQN     (vtld's)
 * Environment: VTL_BENCH_DIR (folder for the baseline file, on the file
 * system of both targets' data; required), VTL_BENCH_POOL (vtld's pool
 * member), VTL_BENCH_VTLD_PID; VTL_BENCH_TGT_PORTAL, VTL_BENCH_TGT_IQN,
 * VTL_BENCH_TGTD_PID, VTL_BENCH_TGT_CTL (tests/bench/tgt_peer.sh, which gives a
 * tgt LUN a new tape file), VTL_BENCH_TGT_DIR (tgtd's folder), or
 * VTL_BENCH_TGT_ABSENT (why there is no tgt); VTL_BENCH_MB, VTL_BENCH_QD,
 * VTL_BENCH_ROUNDS, VTL_BENCH_SEED, VTL_BENCH_PRECONDITION, VTL_BENCH_ISCSI_CRYPT_MB (the
 * encryption pass's size, at most 256 MiB unless set; 0 leaves it out).
 */
#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <inttypes.h>
#include <poll.h>
#include <setjmp.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <lz4.h>

#include <iscsi/iscsi.h>
#include <iscsi/scsi-lowlevel.h>

#include "tests/integration/hostlib.h"

extern char **environ;

#define BLOCK ((size_t)256 << 10)  /* the issue's block: variable blocks of 256 KiB */
#define BLOCK_ALIGN 4096           /* each block starts on its own page of the data pool */
#define POOL_BYTES ((size_t)128 << 20) /* each data pool, reused cyclically */
#define QD_MAX 32                  /* vtld's command window (MaxCmdSN - ExpCmdSN + 1) */
#define ROUNDS_MAX 9
#define HOSTS 4                    /* the Goal's "four hosts on four drives at once" */
#define POLL_MS 1000               /* also how often libiscsi checks its timeouts */
#define CMD_TIMEOUT_S 120          /* a command not done by then fails the run */
#define WRITEBACK_STEP ((uint64_t)8 << 20) /* raw streamed: writeback started every 8 MiB, as bench_backend */

/* SCSI (SSC-4, SMC-3, SPC-4) opcodes and the element addresses of the library vtld is given. */
#define OP_REWIND 0x01
#define OP_READ6 0x08
#define OP_WRITE6 0x0A
#define OP_WRITE_FILEMARKS6 0x10
#define OP_ERASE6 0x19
#define OP_MOVE_MEDIUM 0xA5
#define OP_SECURITY_OUT 0xB5

/* SET DATA ENCRYPTION: SECURITY PROTOCOL OUT, protocol 20h (SPC-4), page 0010h (SSC-4 8.5.3). */
#define SPOUT_PROTOCOL_TAPE 0x20
#define SDE_PAGE 0x0010
#define SDE_HEADER 20            /* the page up to its KEY field */
#define SDE_SCOPE_ALL 0x40       /* byte 4: SCOPE 010b, ALL I_T NEXUS */
#define SDE_ENCRYPT 0x02         /* byte 6: ENCRYPTION MODE ENCRYPT */
#define SDE_DECRYPT 0x02         /* byte 7: DECRYPTION MODE DECRYPT */
#define SDE_ALG_INDEX 0x01       /* byte 8: the drive's one algorithm, AES-256-GCM */
#define SDE_KEY_LEN 32
#define CRYPT_MB_DEFAULT 256     /* the encryption pass writes at most this much (VTL_BENCH_ISCSI_CRYPT_MB) */
#define CHANGER_LUN 0
#define FIRST_SLOT 1025
#define FIRST_DRIVE 257
#define ASCQ_FILEMARK 0x0001      /* FILEMARK DETECTED */
#define TUR_TRIES 8

/* Issue 20's Goal, each ratio printed beside its figure. */
#define GOAL_WRITE_RANDOM 1.2     /* write, random data: vtld / tgt */
#define GOAL_WRITE_RAW 0.9        /* write, random data: vtld / raw streamed */
#define GOAL_WRITE_TEXT 1.5       /* write, ~2:1 data: vtld / tgt */
#define GOAL_HOSTS 1.3            /* four hosts, aggregate: vtld / tgt */
#define GOAL_CPU_RANDOM 1.0       /* CPU s per GiB written, random: vtld / tgt at most */
#define GOAL_CPU_TEXT 1.5         /* CPU s per GiB written, ~2:1: vtld / tgt at most */
#define GOAL_READ 2.0             /* reads: vtld / tgt */

#define MB 1e6                    /* MB/s = 10^6 bytes per second, as dd prints them */
#define MIB ((uint64_t)1 << 20)
#define GIB ((double)(1ull << 30))

enum target { T_VTLD, T_TGT, T_N };
static const char *const target_name[T_N] = {"vtld", "tgt"};
enum kind { K_RANDOM, K_TEXT, K_N };
static const char *const kind_name[K_N] = {"random", "text ~2:1"};

struct figures {
	double write_mbs, write_cpu, fm_ms;
	double after_mbs, after_cpu; /* after write: at once, what the write left in the page cache */
	double cold_mbs, cold_cpu;   /* cold: the page cache dropped before */
	double warm_mbs, warm_cpu;   /* again: read again at once after the cold read */
	double host_to_disk;
};

struct peer {
	const char *portal, *iqn;
	long pid;
	bool up;
	char why_not[512]; /* why it is not measured ("" while it is) */
};

static struct peer g_peer[T_N];
static double now(void);
static const char *g_dir, *g_pool_dir, *g_tgt_ctl, *g_tgt_dir;
static char g_file[4096];
static char g_barcode[HOSTS][HOST_BARCODE_LEN + 1];

/*
 * While a tgt run is under way, a failure is tgt's, not the benchmark's: die()
 * jumps back to the run loop, which leaves tgt out from then on (its sessions
 * are abandoned, never serviced again) and goes on with vtld alone.
 */
static bool g_in_tgt;
static jmp_buf g_tgt_failed;

/* ------------------------------------------------------------- plumbing */

static void die(const char *fmt, ...)
{
	va_list ap;
	if (g_in_tgt) {
		g_in_tgt = false;
		va_start(ap, fmt);
		vsnprintf(g_peer[T_TGT].why_not, sizeof g_peer[T_TGT].why_not, fmt, ap);
		va_end(ap);
		longjmp(g_tgt_failed, 1);
	}
	va_start(ap, fmt);
	fprintf(stderr, "bench_iscsi: ERROR: ");
	vfprintf(stderr, fmt, ap);
	va_end(ap);
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

/* user+system seconds of process pid from /proc/PID/stat (fields 14 and 15), all its threads; -1 when unknown. */
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

static double cpu_delta(long pid, double before)
{
	double after = cpu_of(pid);
	return before < 0 || after < 0 ? -1 : after - before;
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

static double median(const double *in, unsigned n)
{
	double v[ROUNDS_MAX];
	memcpy(v, in, n * sizeof *v);
	for (unsigned i = 1; i < n; i++)
		for (unsigned j = i; j > 0 && v[j - 1] > v[j]; j--) {
			double t = v[j];
			v[j] = v[j - 1];
			v[j - 1] = t;
		}
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Bytes of the regular files in dir (the segment files of a cartridge); 0 when it cannot be read. */
static uint64_t dir_bytes(const char *dir)
{
	uint64_t stored = 0;
	DIR *d = opendir(dir);
	if (!d)
		return 0;
	for (struct dirent *e; (e = readdir(d));) {
		struct stat st;
		if (e->d_name[0] != '.' && fstatat(dirfd(d), e->d_name, &st, 0) == 0 && S_ISREG(st.st_mode))
			stored += (uint64_t)st.st_size;
	}
	closedir(d);
	return stored;
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
 * Text LZ4 stores at about 2:1: lines of 8..15 words separated by blanks,
 * each word drawn from a vocabulary of pseudo-words of 2..11 letters with a
 * skewed frequency (the product of two uniform draws, so a few words are
 * common and most are rare, as in prose or logs), and one token in 16 a
 * number of 3..8 digits. calibrate() picks the vocabulary's size: the largest
 * whose text LZ4 (64 KiB pieces, acceleration 1: the library's default)
 * still stores at RATIO_WANTED:1. The host:disk column shows what vtld
 * really stored.
 */
#define VOCAB_MAX 8192
#define VOCAB_MIN 64
#define VOCAB_STEP 64
#define WORD_MIN 2
#define WORD_SPAN 10
#define LINE_MIN 8
#define LINE_SPAN 8
#define NUMBER_IN_64 4 /* one token in 16 is a number */
#define NUMBER_MIN 3
#define NUMBER_SPAN 6
#define LZ4_PIECE (64u << 10)
#define LZ4_ACCEL_PLAIN 1
#define LZ4_ACCEL_POOL 2 /* backend/pool.c's default today, printed for comparison */
#define CALIBRATE_BYTES ((size_t)8 << 20)
#define RATIO_WANTED 2.0

static char g_word[VOCAB_MAX][WORD_MIN + WORD_SPAN];
static unsigned g_word_len[VOCAB_MAX];

static void vocabulary(void)
{
	for (unsigned i = 0; i < VOCAB_MAX; i++) {
		g_word_len[i] = WORD_MIN + (unsigned)(rnd() % WORD_SPAN);
		for (unsigned j = 0; j < g_word_len[i]; j++)
			g_word[i][j] = (char)('a' + rnd() % 26);
	}
}

static void fill_text(uint8_t *p, size_t n, unsigned vocab)
{
	size_t at = 0;
	unsigned tok = 0, line = LINE_MIN + (unsigned)(rnd() % LINE_SPAN);
	while (at < n) {
		char w[WORD_MIN + WORD_SPAN + NUMBER_MIN + NUMBER_SPAN + 1];
		unsigned l;
		uint64_t r = rnd();
		if (r % 64 < NUMBER_IN_64) {
			l = NUMBER_MIN + (unsigned)((r >> 8) % NUMBER_SPAN);
			for (unsigned j = 0; j < l; j++)
				w[j] = (char)('0' + rnd() % 10);
		} else {
			uint64_t a = (r >> 8) & 0xFFFF, b = (r >> 24) & 0xFFFF;
			unsigned i = (unsigned)((a * b * vocab) >> 32);
			l = g_word_len[i];
			memcpy(w, g_word[i], l);
		}
		if (++tok < line) {
			w[l++] = ' ';
		} else {
			w[l++] = '\n';
			tok = 0;
			line = LINE_MIN + (unsigned)(rnd() % LINE_SPAN);
		}
		for (unsigned j = 0; j < l && at < n; j++)
			p[at++] = (uint8_t)w[j];
	}
}

/* The ratio LZ4 reaches on n bytes of p, in pieces as the cartridge compresses them. */
static double lz4_ratio(const uint8_t *p, size_t n, int accel)
{
	static char out[LZ4_COMPRESSBOUND(LZ4_PIECE)];
	size_t stored = 0;
	for (size_t at = 0; at < n; at += LZ4_PIECE) {
		int len = (int)(n - at < LZ4_PIECE ? n - at : LZ4_PIECE);
		int c = LZ4_compress_fast((const char *)p + at, out, len, (int)sizeof out, accel);
		stored += c > 0 && c < len ? (size_t)c : (size_t)len;
	}
	return (double)n / (double)stored;
}

/* The largest vocabulary whose text LZ4 stores at RATIO_WANTED:1 or better on a trial. */
static unsigned calibrate(uint8_t *scratch)
{
	uint64_t seed = g_rng;
	unsigned best = VOCAB_MIN;
	for (unsigned v = VOCAB_MIN; v <= VOCAB_MAX; v += VOCAB_STEP) {
		g_rng = seed;
		fill_text(scratch, CALIBRATE_BYTES, v);
		if (lz4_ratio(scratch, CALIBRATE_BYTES, LZ4_ACCEL_PLAIN) < RATIO_WANTED)
			break;
		best = v;
	}
	g_rng = seed;
	return best;
}

/* The block sequence: blocks of 256 KiB, each from its own offset of the data pool. */
struct seq {
	size_t n;
	size_t *off;
	uint64_t bytes;
};

static void seq_make(struct seq *s, uint64_t total)
{
	s->n = (size_t)(total / BLOCK);
	s->off = calloc(s->n, sizeof *s->off);
	if (!s->off)
		die("out of memory for %zu block descriptors", s->n);
	s->bytes = (uint64_t)s->n * BLOCK;
	size_t span = POOL_BYTES - BLOCK, at = 0;
	for (size_t i = 0; i < s->n; i++) {
		/* Each block starts one page past the previous one's end, so neighbours never hold the same bytes. */
		s->off[i] = at % span / BLOCK_ALIGN * BLOCK_ALIGN;
		at += BLOCK + BLOCK_ALIGN;
	}
}

/* --------------------------------------------------------------- hosts */

/* One host: a session on one LUN of one target, streaming WRITE(6) or READ(6) of a sequence's blocks. */
struct host;
struct slot_ref {
	struct host *h;
	unsigned slot;
	size_t blk;
};

struct host {
	struct iscsi_context *ctx;
	int lun;
	bool write;
	const struct seq *seq;
	const uint8_t *pool;
	size_t next, done;
	bool fm_sent, finished; /* a write ends with its WRITE FILEMARKS */
	double fm_sent_at, fm_done_at;
	uint8_t *rbuf[QD_MAX];  /* read buffers, one per command slot */
	struct slot_ref refs[QD_MAX];
};

static void put24(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 16);
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)v;
}

/* Runs one command synchronously; returns the task (the caller frees it). */
static struct scsi_task *run_sync(struct host *h, int lun, const uint8_t *cdb, int cdb_len, int dir, void *buf,
				  size_t len)
{
	struct scsi_task *t = scsi_create_task(cdb_len, (unsigned char *)cdb, dir, (int)len);
	if (!t)
		die("scsi_create_task");
	struct iscsi_data d = {len, buf};
	if (!iscsi_scsi_command_sync(h->ctx, lun, t, dir == SCSI_XFER_WRITE ? &d : NULL))
		die("command %02Xh on LUN %d did not complete (libiscsi: %s)", cdb[0], lun, iscsi_get_error(h->ctx));
	return t;
}

static void good_sync(struct host *h, int lun, const uint8_t *cdb, int cdb_len)
{
	struct scsi_task *t = run_sync(h, lun, cdb, cdb_len, SCSI_XFER_NONE, NULL, 0);
	if (t->status != SCSI_STATUS_GOOD)
		die("command %02Xh on LUN %d: status %d, sense key %d, ASC/ASCQ %04X", cdb[0], lun, t->status,
		    t->sense.key, t->sense.ascq);
	scsi_free_scsi_task(t);
}

/* TEST UNIT READY until GOOD, past the unit attentions a new session, a load or a new LUN bring. */
static void ready(struct host *h, int lun)
{
	uint8_t tur[6] = {0};
	for (int i = 0; i < TUR_TRIES; i++) {
		struct scsi_task *t = run_sync(h, lun, tur, sizeof tur, SCSI_XFER_NONE, NULL, 0);
		int st = t->status, key = t->sense.key;
		scsi_free_scsi_task(t);
		if (st == SCSI_STATUS_GOOD)
			return;
		if (key != SCSI_SENSE_UNIT_ATTENTION)
			die("TEST UNIT READY on LUN %d: status %d, sense key %d", lun, st, key);
	}
	die("LUN %d never became ready", lun);
}

/* Logs host h in to target t as initiator number i, for LUN lun, and waits until that LUN is ready. */
static void host_login(struct host *h, enum target t, unsigned i, int lun)
{
	char name[96];
	snprintf(name, sizeof name, "iqn.2026-01.org.vtl:bench-host%u", i + 1);
	memset(h, 0, sizeof *h);
	h->lun = lun;
	if (!(h->ctx = iscsi_create_context(name)))
		die("iscsi_create_context");
	iscsi_set_targetname(h->ctx, g_peer[t].iqn);
	iscsi_set_session_type(h->ctx, ISCSI_SESSION_NORMAL);
	iscsi_set_header_digest(h->ctx, ISCSI_HEADER_DIGEST_NONE);
	/* A lost connection or a command that never ends is a failure of the target, not something to wait out. */
	iscsi_set_noautoreconnect(h->ctx, 1);
	iscsi_set_timeout(h->ctx, CMD_TIMEOUT_S);
	if (iscsi_full_connect_sync(h->ctx, g_peer[t].portal, lun) != 0)
		die("login of host %u to %s (%s at %s): %s", i + 1, target_name[t], g_peer[t].iqn, g_peer[t].portal,
		    iscsi_get_error(h->ctx));
	ready(h, lun);
}

static void host_logout(struct host *h)
{
	iscsi_logout_sync(h->ctx);
	iscsi_destroy_context(h->ctx);
	for (unsigned i = 0; i < QD_MAX; i++)
		free(h->rbuf[i]);
	h->ctx = NULL;
}

static void issue(struct host *h, unsigned slot);

static void fm_done(struct iscsi_context *iscsi, int status, void *command_data, void *private_data)
{
	(void)iscsi;
	struct scsi_task *t = command_data;
	struct host *h = private_data;
	if (status != SCSI_STATUS_GOOD)
		die("WRITE FILEMARKS on LUN %d: status %d, sense key %d, ASC/ASCQ %04X", h->lun, status, t->sense.key,
		    t->sense.ascq);
	scsi_free_scsi_task(t);
	h->fm_done_at = now();
	h->finished = true;
}

/* Without IMMED, WRITE FILEMARKS ends when every block before it is on the medium (SSC-4 4.2.9). */
static void send_filemark(struct host *h)
{
	uint8_t wfm[6] = {OP_WRITE_FILEMARKS6, 0, 0, 0, 1, 0};
	struct scsi_task *t = scsi_create_task(sizeof wfm, wfm, SCSI_XFER_NONE, 0);
	if (!t)
		die("scsi_create_task");
	h->fm_sent = true;
	h->fm_sent_at = now();
	if (iscsi_scsi_command_async(h->ctx, h->lun, t, fm_done, NULL, h) != 0)
		die("sending WRITE FILEMARKS on LUN %d", h->lun);
}

static void completed(struct iscsi_context *iscsi, int status, void *command_data, void *private_data)
{
	(void)iscsi;
	struct scsi_task *t = command_data;
	struct slot_ref *r = private_data;
	struct host *h = r->h;
	if (status != SCSI_STATUS_GOOD)
		die("%s of block %zu on LUN %d: status %d, sense key %d, ASC/ASCQ %04X", h->write ? "WRITE" : "READ",
		    r->blk, h->lun, status, t->sense.key, t->sense.ascq);
	if (!h->write) {
		if (t->residual_status != SCSI_RESIDUAL_NO_RESIDUAL)
			die("READ of block %zu: residual %u (a block of another length: out of order?)", r->blk, t->residual);
		if (memcmp(h->rbuf[r->slot], h->pool + h->seq->off[r->blk], BLOCK) != 0)
			die("block %zu on LUN %d reads back different from what was written", r->blk, h->lun);
	}
	scsi_free_scsi_task(t);
	h->done++;
	if (h->next < h->seq->n)
		issue(h, r->slot);
	else if (h->done == h->seq->n) {
		if (h->write)
			send_filemark(h);
		else
			h->finished = true;
	}
}

static void issue(struct host *h, unsigned slot)
{
	size_t b = h->next++;
	uint8_t cdb[6] = {h->write ? OP_WRITE6 : OP_READ6, 0};
	put24(cdb + 2, (uint32_t)BLOCK);
	struct scsi_task *t = scsi_create_task(sizeof cdb, cdb, h->write ? SCSI_XFER_WRITE : SCSI_XFER_READ, (int)BLOCK);
	if (!t)
		die("scsi_create_task");
	/* Reads land straight in the slot's buffer; writes go from the pool: no copy in the client. */
	if (!h->write && scsi_task_add_data_in_buffer(t, (int)BLOCK, h->rbuf[slot]) != 0)
		die("scsi_task_add_data_in_buffer");
	struct iscsi_data d = {BLOCK, (unsigned char *)h->pool + h->seq->off[b]};
	h->refs[slot] = (struct slot_ref){h, slot, b};
	if (iscsi_scsi_command_async(h->ctx, h->lun, t, completed, h->write ? &d : NULL, &h->refs[slot]) != 0)
		die("sending block %zu on LUN %d", b, h->lun);
}

/* Runs the hosts' sequences at once, qd commands in flight on each, writes up to their filemark's GOOD. */
static void stream_run(struct host *hs, unsigned n, unsigned qd)
{
	for (unsigned k = 0; k < n; k++) {
		struct host *h = &hs[k];
		h->next = h->done = 0;
		h->fm_sent = h->finished = false;
		for (unsigned i = 0; i < qd && !h->write && !h->rbuf[i]; i++)
			if (!(h->rbuf[i] = malloc(BLOCK)))
				die("out of memory for the read buffers");
		for (unsigned i = 0; i < qd && h->next < h->seq->n; i++)
			issue(h, i);
	}
	for (;;) {
		struct pollfd pfd[HOSTS];
		unsigned busy = 0;
		for (unsigned k = 0; k < n; k++)
			busy += !hs[k].finished;
		if (!busy)
			return;
		for (unsigned k = 0; k < n; k++)
			pfd[k] = (struct pollfd){.fd = iscsi_get_fd(hs[k].ctx), .events = (short)iscsi_which_events(hs[k].ctx)};
		int rc = poll(pfd, n, POLL_MS);
		if (rc < 0 && errno != EINTR)
			die("poll: %s", strerror(errno));
		for (unsigned k = 0; k < n; k++)
			if (iscsi_service(hs[k].ctx, rc > 0 ? pfd[k].revents : 0) != 0)
				die("iscsi_service on LUN %d: %s", hs[k].lun, iscsi_get_error(hs[k].ctx));
	}
}

/* ---------------------------------------------------------------- media */

/* Moves the cartridge of slot FIRST_SLOT + i into vtld's drive i (LUN i + 1), unless one is there already. */
static void vtld_load(struct host *c, unsigned i)
{
	uint16_t slot = (uint16_t)(FIRST_SLOT + i), drive = (uint16_t)(FIRST_DRIVE + i);
	host_barcode_at(c->ctx, CHANGER_LUN, drive, g_barcode[i]);
	if (!g_barcode[i][0]) {
		uint8_t cdb[12] = {OP_MOVE_MEDIUM, 0, 0, 0, (uint8_t)(slot >> 8), (uint8_t)slot, (uint8_t)(drive >> 8),
				   (uint8_t)drive};
		good_sync(c, CHANGER_LUN, cdb, sizeof cdb);
		host_barcode_at(c->ctx, CHANGER_LUN, drive, g_barcode[i]);
		if (!g_barcode[i][0])
			die("drive element %u is empty after MOVE MEDIUM from slot %u", drive, slot);
	}
}

/* Gives tgt's LUN lun a new, empty tape file (VTL_BENCH_TGT_CTL fresh DIR LUN); false, with why_not set, on failure. */
static bool tgt_fresh_tape(int lun)
{
	char arg[16];
	snprintf(arg, sizeof arg, "%d", lun);
	char *argv[] = {"sh", (char *)g_tgt_ctl, "fresh", (char *)g_tgt_dir, arg, NULL};
	pid_t pid;
	int st, rc = posix_spawnp(&pid, "sh", NULL, NULL, argv, environ);
	if (rc != 0) {
		snprintf(g_peer[T_TGT].why_not, sizeof g_peer[T_TGT].why_not, "cannot run %s: %s", g_tgt_ctl, strerror(rc));
		return false;
	}
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			die("waitpid: %s", strerror(errno));
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		snprintf(g_peer[T_TGT].why_not, sizeof g_peer[T_TGT].why_not,
			 "%s fresh %d failed (its message is above)", g_tgt_ctl, lun);
		return false;
	}
	return true;
}

/* Before a timed write: an empty medium at BOT in drive i of target t (vtld: ERASE; tgt: a new tape file). */
static bool fresh_medium(enum target t, unsigned i)
{
	return t == T_TGT ? tgt_fresh_tape((int)i + 1) : true;
}

static void rewind_and_erase(struct host *h, enum target t)
{
	uint8_t rew[6] = {OP_REWIND}, erase[6] = {OP_ERASE6};
	good_sync(h, h->lun, rew, sizeof rew);
	if (t == T_VTLD) {
		/* Short ERASE at BOT: end of data there, every segment of the last run removed before the timing. */
		good_sync(h, h->lun, erase, sizeof erase);
		good_sync(h, h->lun, rew, sizeof rew);
	}
}

/* What the medium in drive i of target t holds on disk, in bytes (0: unknown). */
static uint64_t medium_bytes(enum target t, unsigned i)
{
	char path[4096];
	if (t == T_VTLD) {
		if (!g_pool_dir)
			return 0;
		snprintf(path, sizeof path, "%s/%s", g_pool_dir, g_barcode[i]);
		return dir_bytes(path);
	}
	struct stat st;
	snprintf(path, sizeof path, "%s/tapes/tape%u", g_tgt_dir ? g_tgt_dir : ".", i + 1);
	return g_tgt_dir && stat(path, &st) == 0 ? (uint64_t)st.st_size : 0;
}

/* ---------------------------------------------------------------- runs */

/* REWIND, then reads the host's blocks back (cold: after settle) and meets the filemark after them. */
static void tape_read(struct host *h, long pid, unsigned qd, bool cold, double *mbs, double *cpu)
{
	uint8_t rew[6] = {OP_REWIND};
	good_sync(h, h->lun, rew, sizeof rew);
	h->write = false;
	if (cold)
		settle();
	double v0 = cpu_of(pid), t0 = now();
	stream_run(h, 1, qd);
	*mbs = (double)h->seq->bytes / (now() - t0) / MB;
	*cpu = cpu_delta(pid, v0);
	/* After the last block: the filemark, reported as CHECK CONDITION, NO SENSE, FILEMARK. */
	uint8_t rd[6] = {OP_READ6, 0};
	put24(rd + 2, (uint32_t)BLOCK);
	struct scsi_task *t = run_sync(h, h->lun, rd, sizeof rd, SCSI_XFER_READ, h->rbuf[0], BLOCK);
	if (t->status != SCSI_STATUS_CHECK_CONDITION || t->sense.key != SCSI_SENSE_NO_SENSE || t->sense.ascq != ASCQ_FILEMARK)
		die("LUN %d after the last block: status %d, sense key %d, ASC/ASCQ %04X instead of the filemark", h->lun,
		    t->status, t->sense.key, t->sense.ascq);
	scsi_free_scsi_task(t);
}

/* One host on drive (LUN) 1 of target t: write the sequence and a filemark, then read it back three times. */
static bool tape_run(enum target t, const struct seq *seq, const uint8_t *pool, unsigned qd, struct figures *f)
{
	if (!fresh_medium(t, 0))
		return false;
	struct host h;
	host_login(&h, t, 0, 1);
	rewind_and_erase(&h, t);
	h.write = true;
	h.seq = seq;
	h.pool = pool;
	settle();
	long pid = g_peer[t].pid;
	double v0 = cpu_of(pid), t0 = now();
	stream_run(&h, 1, qd);
	double t2 = now();
	f->write_mbs = (double)seq->bytes / (t2 - t0) / MB;
	f->write_cpu = cpu_delta(pid, v0);
	f->fm_ms = (h.fm_done_at - h.fm_sent_at) * 1e3;
	uint64_t stored = medium_bytes(t, 0);
	f->host_to_disk = stored ? (double)seq->bytes / (double)stored : 0;
	tape_read(&h, pid, qd, false, &f->after_mbs, &f->after_cpu);
	tape_read(&h, pid, qd, true, &f->cold_mbs, &f->cold_cpu);
	tape_read(&h, pid, qd, false, &f->warm_mbs, &f->warm_cpu);
	host_logout(&h);
	return true;
}

static double per_gib(double cpu, double bytes);

/* Sets vtld's drive 1 to encrypt and decrypt with a fixed key (on) or to neither (off), for every nexus. */
static void vtld_encryption(bool on)
{
	struct host h;
	host_login(&h, T_VTLD, 0, 1);
	uint8_t p[SDE_HEADER + SDE_KEY_LEN] = {0};
	size_t n = SDE_HEADER + (on ? SDE_KEY_LEN : 0);
	p[0] = SDE_PAGE >> 8, p[1] = SDE_PAGE & 0xFF;
	p[2] = (uint8_t)((n - 4) >> 8), p[3] = (uint8_t)(n - 4);
	p[4] = SDE_SCOPE_ALL;
	p[6] = on ? SDE_ENCRYPT : 0;
	p[7] = on ? SDE_DECRYPT : 0;
	p[8] = SDE_ALG_INDEX;
	p[19] = on ? SDE_KEY_LEN : 0;
	for (unsigned i = 0; on && i < SDE_KEY_LEN; i++)
		p[SDE_HEADER + i] = (uint8_t)(0xA5 ^ i); /* a benchmark's key: any 32 bytes do */
	uint8_t cdb[12] = {OP_SECURITY_OUT, SPOUT_PROTOCOL_TAPE, SDE_PAGE >> 8, SDE_PAGE & 0xFF, 0, 0, 0, 0, 0,
			   (uint8_t)n, 0, 0};
	struct scsi_task *t = run_sync(&h, h.lun, cdb, sizeof cdb, SCSI_XFER_WRITE, p, n);
	if (t->status != SCSI_STATUS_GOOD)
		die("SET DATA ENCRYPTION (%s) on LUN %d: status %d, sense key %d, ASC/ASCQ %04X", on ? "on" : "off", h.lun,
		    t->status, t->sense.key, t->sense.ascq);
	scsi_free_scsi_task(t);
	host_logout(&h);
}

/*
 * Encryption's cost over iSCSI: one host on vtld's drive 1 writes and reads
 * random data with encryption off, then on (AES-256-GCM, compress then
 * encrypt), in the same run; MB/s and vtld's CPU per GiB side by side.
 */
static void crypt_pass(const struct seq *seq, const uint8_t *pool, unsigned qd)
{
	struct figures f[2];
	for (int on = 0; on <= 1; on++) {
		vtld_encryption(on);
		if (!tape_run(T_VTLD, seq, pool, qd, &f[on]))
			die("the encryption pass could not run");
	}
	vtld_encryption(false);
	printf("\n== encryption on vtld's drive 1, random data, %" PRIu64 " MiB, one host (off, then on, same run)\n",
	       seq->bytes / MIB);
	printf("  %11s  %11s  %11s  %11s  %11s  %11s\n", "encryption", "write MB/s", "w CPU s/GiB", "cold MB/s", "r CPU s/GiB",
	       "again MB/s");
	for (int on = 0; on <= 1; on++)
		printf("  %11s  %11.1f  %11.2f  %11.1f  %11.2f  %11.1f\n", on ? "on" : "off", f[on].write_mbs,
		       per_gib(f[on].write_cpu, (double)seq->bytes), f[on].cold_mbs,
		       per_gib(f[on].cold_cpu, (double)seq->bytes), f[on].warm_mbs);
	printf("  iscsi.vtld.crypt.write_mbs=%.1f (off %.1f)\n  iscsi.vtld.crypt.write_cpu_s_per_gib=%.2f (off %.2f)\n",
	       f[1].write_mbs, f[0].write_mbs, per_gib(f[1].write_cpu, (double)seq->bytes),
	       per_gib(f[0].write_cpu, (double)seq->bytes));
}

/* HOSTS hosts, each on its own drive (LUNs 1..HOSTS) of target t, writing at once; aggregate MB/s. */
static bool hosts_run(enum target t, const struct seq *seq, const uint8_t *pool, unsigned qd, double *mbs, double *cpu)
{
	struct host hs[HOSTS];
	for (unsigned i = 0; i < HOSTS; i++)
		if (!fresh_medium(t, i))
			return false;
	for (unsigned i = 0; i < HOSTS; i++) {
		host_login(&hs[i], t, i, (int)i + 1);
		rewind_and_erase(&hs[i], t);
		hs[i].write = true;
		hs[i].seq = seq;
		hs[i].pool = pool;
	}
	settle();
	long pid = g_peer[t].pid;
	double v0 = cpu_of(pid), t0 = now();
	stream_run(hs, HOSTS, qd);
	*mbs = (double)seq->bytes * HOSTS / (now() - t0) / MB;
	*cpu = cpu_delta(pid, v0);
	for (unsigned i = 0; i < HOSTS; i++)
		host_logout(&hs[i]);
	return true;
}

/* The raw streamed baseline: the same blocks to a plain file, writeback started every 8 MiB, then fdatasync. */
static void raw_run(const struct seq *seq, const uint8_t *pool, double *mbs, double *cold_mbs)
{
	snprintf(g_file, sizeof g_file, "%s/raw-streamed", g_dir);
	unlink(g_file);
	int fd = open(g_file, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		die("open %s: %s", g_file, strerror(errno));
	settle();
	double t0 = now();
	for (size_t i = 0; i < seq->n; i++) {
		ssize_t n = write(fd, pool + seq->off[i], BLOCK);
		if (n != (ssize_t)BLOCK)
			die("write %s: %s", g_file, n < 0 ? strerror(errno) : "short write");
		uint64_t end = (uint64_t)(i + 1) * BLOCK, start = end - BLOCK;
		if (start / WRITEBACK_STEP != end / WRITEBACK_STEP) {
			uint64_t from = start / WRITEBACK_STEP * WRITEBACK_STEP;
			if (sync_file_range(fd, (off_t)from, (off_t)(end - from), SYNC_FILE_RANGE_WRITE) != 0)
				die("sync_file_range %s: %s", g_file, strerror(errno));
		}
	}
	if (fdatasync(fd) != 0)
		die("fdatasync %s: %s", g_file, strerror(errno));
	*mbs = (double)seq->bytes / (now() - t0) / MB;
	close(fd);
	fd = open(g_file, O_RDONLY);
	uint8_t *b = malloc(BLOCK);
	if (fd < 0 || !b)
		die("open %s: %s", g_file, strerror(errno));
	settle();
	t0 = now();
	for (size_t i = 0; i < seq->n; i++)
		if (read(fd, b, BLOCK) != (ssize_t)BLOCK)
			die("read %s: %s", g_file, strerror(errno));
	*cold_mbs = (double)seq->bytes / (now() - t0) / MB;
	free(b);
	close(fd);
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
	for (uint64_t at = 0; at < bytes; at += BLOCK)
		if (write(fd, pool + at % (POOL_BYTES - BLOCK), BLOCK) != (ssize_t)BLOCK)
			die("write %s: %s", g_file, strerror(errno));
	if (fdatasync(fd) != 0)
		die("fdatasync %s: %s", g_file, strerror(errno));
	printf("  precondition %.2f GiB written (buffered + fdatasync, %.1f MB/s) and deleted before the timed runs\n",
	       (double)bytes / GIB, (double)bytes / (now() - t0) / MB);
	close(fd);
	unlink(g_file);
	g_file[0] = 0;
}

/* ---------------------------------------------------------------- report */

static struct figures g_fig[T_N][K_N][ROUNDS_MAX];
static double g_hosts_mbs[T_N][ROUNDS_MAX], g_hosts_cpu[T_N][ROUNDS_MAX];
static double g_raw_mbs[ROUNDS_MAX], g_raw_cold[ROUNDS_MAX];

#define FIELD(name) offsetof(struct figures, name)

/* The rounds' values of one figure of target t and kind k, into v; returns their median. */
static double med(enum target t, enum kind k, size_t field, unsigned n, double v[ROUNDS_MAX])
{
	for (unsigned r = 0; r < n; r++)
		v[r] = *(const double *)((const char *)&g_fig[t][k][r] + field);
	return median(v, n);
}

/* CPU seconds per GiB written (-1 when the CPU time is unknown). */
static double per_gib(double cpu, double bytes)
{
	return cpu < 0 ? -1 : cpu / (bytes / GIB);
}

static void print_rounds(const double *v, unsigned n)
{
	printf("   rounds");
	for (unsigned i = 0; i < n; i++)
		printf("%s%.0f", i ? " / " : " ", v[i]);
	printf("\n");
}

static void cell(double v, const char *fmt)
{
	if (v < 0)
		printf("%8s", "-");
	else
		printf(fmt, v);
}

static void goal_line(const char *what, double vtld, double tgt, double goal, const char *rel)
{
	printf("  %-50s", what);
	if (vtld < 0 || tgt <= 0)
		printf("  %7s   (goal %s %.2f)\n", "-", rel, goal);
	else
		printf("  %7.2f   (goal %s %.2f)\n", vtld / tgt, rel, goal);
}

static void report(unsigned n, const struct seq *seq, bool have_tgt)
{
	double v[ROUNDS_MAX];
	printf("\n== Write: every block, then WRITE FILEMARKS (1, not IMMED), timed from the first WRITE to the\n"
	       "   filemark's GOOD status (both targets sync the medium before it). Medians of %u rounds.\n\n", n);
	printf("  target  data           MB/s  CPU s/GiB  FM ms  host:disk\n");
	for (unsigned k = 0; k < K_N; k++)
		for (unsigned t = 0; t < T_N; t++) {
			if (t == T_TGT && !have_tgt)
				continue;
			double mbs = med((enum target)t, (enum kind)k, FIELD(write_mbs), n, v);
			printf("  %-6s  %-10s  %8.1f  ", target_name[t], kind_name[k], mbs);
			double cpu = med((enum target)t, (enum kind)k, FIELD(write_cpu), n, v);
			cell(per_gib(cpu, (double)seq->bytes), "%9.2f");
			printf("  %5.0f", med((enum target)t, (enum kind)k, FIELD(fm_ms), n, v));
			double h = med((enum target)t, (enum kind)k, FIELD(host_to_disk), n, v);
			if (h > 0)
				printf("    %5.2f:1", h);
			else
				printf("          -");
			med((enum target)t, (enum kind)k, FIELD(write_mbs), n, v);
			print_rounds(v, n);
		}
	printf("  raw     streamed    %8.1f          -      -     1.00:1", median(g_raw_mbs, n));
	print_rounds(g_raw_mbs, n);
	printf("\n  raw streamed: the same blocks (random data) into a plain file in the same folder, writeback\n"
	       "  started every 8 MiB (sync_file_range), then fdatasync: bench_backend's fastest plain-file write.\n"
	       "  CPU s/GiB: the target's user+system seconds (all threads, /proc/PID/stat) per GiB written.\n"
	       "  FM ms: the WRITE FILEMARKS alone (sent as the last WRITE completes), inside the timed span.\n"
	       "  host:disk = host bytes / bytes of the cartridge's segment files (tgt: of the tape file)\n");

	printf("\n== Read: REWIND, then every block with READ(6), each compared with what was written, then one\n"
	       "   more READ must meet the filemark. after write: at once after the write, from what it left in\n"
	       "   the page cache (the issue's own measurement); cold: sync and (as root) the page cache dropped\n"
	       "   before; again: read again at once after the cold read.\n\n");
	printf("  target  data        read          MB/s  CPU s/GiB\n");
	static const struct {
		const char *name;
		size_t mbs, cpu;
	} pass[] = {{"after write", FIELD(after_mbs), FIELD(after_cpu)},
		    {"cold", FIELD(cold_mbs), FIELD(cold_cpu)},
		    {"again", FIELD(warm_mbs), FIELD(warm_cpu)}};
	for (unsigned p = 0; p < sizeof pass / sizeof pass[0]; p++)
		for (unsigned k = 0; k < K_N; k++)
			for (unsigned t = 0; t < T_N; t++) {
				if (t == T_TGT && !have_tgt)
					continue;
				double mbs = med((enum target)t, (enum kind)k, pass[p].mbs, n, v);
				printf("  %-6s  %-10s  %-11s  %8.1f  ", target_name[t], kind_name[k], pass[p].name, mbs);
				cell(per_gib(med((enum target)t, (enum kind)k, pass[p].cpu, n, v), (double)seq->bytes), "%9.2f");
				med((enum target)t, (enum kind)k, pass[p].mbs, n, v);
				print_rounds(v, n);
			}
	printf("  raw     read()      cold         %8.1f          -", median(g_raw_cold, n));
	print_rounds(g_raw_cold, n);

	printf("\n== %u hosts on %u drives at once (random data, %.0f MiB each, then each its WRITE FILEMARKS;\n"
	       "   timed from the first WRITE to the last filemark's GOOD): aggregate\n\n", HOSTS, HOSTS,
	       (double)seq->bytes / (double)MIB);
	printf("  target      MB/s  CPU s/GiB\n");
	for (unsigned t = 0; t < T_N; t++) {
		if (t == T_TGT && !have_tgt)
			continue;
		printf("  %-6s  %8.1f  ", target_name[t], median(g_hosts_mbs[t], n));
		cell(per_gib(median(g_hosts_cpu[t], n), (double)seq->bytes * HOSTS), "%9.2f");
		print_rounds(g_hosts_mbs[t], n);
	}

	double w[T_N][K_N], c[T_N][K_N], ra[T_N][K_N], rc[T_N][K_N], rw[T_N][K_N], hm[T_N];
	for (unsigned t = 0; t < T_N; t++) {
		for (unsigned k = 0; k < K_N; k++) {
			w[t][k] = med((enum target)t, (enum kind)k, FIELD(write_mbs), n, v);
			c[t][k] = per_gib(med((enum target)t, (enum kind)k, FIELD(write_cpu), n, v), (double)seq->bytes);
			ra[t][k] = med((enum target)t, (enum kind)k, FIELD(after_mbs), n, v);
			rc[t][k] = med((enum target)t, (enum kind)k, FIELD(cold_mbs), n, v);
			rw[t][k] = med((enum target)t, (enum kind)k, FIELD(warm_mbs), n, v);
		}
		hm[t] = median(g_hosts_mbs[t], n);
	}
	double raw = median(g_raw_mbs, n);
	printf("\n== Issue 20's Goal: ratios of medians measured in this run (figures, never pass/fail)\n\n");
	goal_line("write, random: vtld / raw streamed", w[T_VTLD][K_RANDOM], raw, GOAL_WRITE_RAW, ">=");
	if (!have_tgt) {
		printf("  the ratios to tgt are not printed: %s\n", g_peer[T_TGT].why_not);
	} else {
		goal_line("write, random: vtld / tgt", w[T_VTLD][K_RANDOM], w[T_TGT][K_RANDOM], GOAL_WRITE_RANDOM, ">=");
		goal_line("write, text ~2:1: vtld / tgt", w[T_VTLD][K_TEXT], w[T_TGT][K_TEXT], GOAL_WRITE_TEXT, ">=");
		goal_line("four hosts, aggregate: vtld / tgt", hm[T_VTLD], hm[T_TGT], GOAL_HOSTS, ">=");
		goal_line("CPU s per GiB written, random: vtld / tgt", c[T_VTLD][K_RANDOM], c[T_TGT][K_RANDOM],
			  GOAL_CPU_RANDOM, "<=");
		goal_line("CPU s per GiB written, text ~2:1: vtld / tgt", c[T_VTLD][K_TEXT], c[T_TGT][K_TEXT], GOAL_CPU_TEXT,
			  "<=");
		goal_line("read after write, random: vtld / tgt", ra[T_VTLD][K_RANDOM], ra[T_TGT][K_RANDOM], GOAL_READ, ">=");
		goal_line("read after write, text ~2:1: vtld / tgt", ra[T_VTLD][K_TEXT], ra[T_TGT][K_TEXT], GOAL_READ, ">=");
		goal_line("read cold, random: vtld / tgt", rc[T_VTLD][K_RANDOM], rc[T_TGT][K_RANDOM], GOAL_READ, ">=");
		goal_line("read cold, text ~2:1: vtld / tgt", rc[T_VTLD][K_TEXT], rc[T_TGT][K_TEXT], GOAL_READ, ">=");
		goal_line("read again after cold, random: vtld / tgt", rw[T_VTLD][K_RANDOM], rw[T_TGT][K_RANDOM], GOAL_READ, ">=");
		goal_line("read again after cold, text ~2:1: vtld / tgt", rw[T_VTLD][K_TEXT], rw[T_TGT][K_TEXT], GOAL_READ, ">=");
		printf("  CPU s per GiB written: vtld %.2f / tgt %.2f (random), vtld %.2f / tgt %.2f (text ~2:1)\n",
		       c[T_VTLD][K_RANDOM], c[T_TGT][K_RANDOM], c[T_VTLD][K_TEXT], c[T_TGT][K_TEXT]);
	}

	double la[3];
	if (getloadavg(la, 3) == 3)
		printf("\n  load avg    %.2f %.2f %.2f at the end\n", la[0], la[1], la[2]);
	printf("\n  key=value\n");
	printf("  iscsi.write.raw_streamed_mbs=%.1f\n", raw);
	for (unsigned t = 0; t < T_N; t++) {
		if (t == T_TGT && !have_tgt)
			continue;
		static const char *const key[K_N] = {"random", "text"};
		for (unsigned k = 0; k < K_N; k++)
			printf("  iscsi.%s.write.%s_mbs=%.1f\n  iscsi.%s.write.%s_cpu_s_per_gib=%.2f\n"
			       "  iscsi.%s.read_after_write.%s_mbs=%.1f\n"
			       "  iscsi.%s.read_cold.%s_mbs=%.1f\n  iscsi.%s.read_again.%s_mbs=%.1f\n",
			       target_name[t], key[k], w[t][k], target_name[t], key[k], c[t][k], target_name[t], key[k],
			       ra[t][k], target_name[t], key[k], rc[t][k], target_name[t], key[k], rw[t][k]);
		printf("  iscsi.%s.hosts%u.write_mbs=%.1f\n", target_name[t], HOSTS, hm[t]);
	}
}

/* ---------------------------------------------------------------- main */

/*
 * A single-host run (f) or a HOSTS-host run (mbs, cpu) on target t. False when
 * it was tgt's and tgt failed: the reason is printed, and tgt is left out.
 */
static bool guarded_run(enum target t, const struct seq *seq, const uint8_t *pool, unsigned qd, struct figures *f,
			double *mbs, double *cpu)
{
	if (t == T_TGT) {
		if (setjmp(g_tgt_failed)) {
			g_peer[T_TGT].up = false;
			printf("   tgt FAILED: %s; it is left out from here on\n", g_peer[T_TGT].why_not);
			return false;
		}
		g_in_tgt = true;
	}
	bool ok = f ? tape_run(t, seq, pool, qd, f) : hosts_run(t, seq, pool, qd, mbs, cpu);
	g_in_tgt = false;
	if (!ok) {
		g_peer[T_TGT].up = false;
		printf("   tgt FAILED: %s; it is left out from here on\n", g_peer[T_TGT].why_not);
	}
	return ok;
}

static void peers_from_env(int argc, char **argv)
{
	g_peer[T_VTLD] = (struct peer){.portal = argv[1], .iqn = argv[2], .up = true};
	g_peer[T_VTLD].pid = (long)env_u64("VTL_BENCH_VTLD_PID", 0, 0, INT32_MAX);
	(void)argc;
	struct peer *p = &g_peer[T_TGT];
	const char *absent = getenv("VTL_BENCH_TGT_ABSENT");
	p->portal = getenv("VTL_BENCH_TGT_PORTAL");
	p->iqn = getenv("VTL_BENCH_TGT_IQN");
	g_tgt_ctl = getenv("VTL_BENCH_TGT_CTL");
	g_tgt_dir = getenv("VTL_BENCH_TGT_DIR");
	p->pid = (long)env_u64("VTL_BENCH_TGTD_PID", 0, 0, INT32_MAX);
	if (absent && *absent)
		snprintf(p->why_not, sizeof p->why_not, "%s", absent);
	else if (!p->portal || !p->iqn || !g_tgt_ctl || !g_tgt_dir)
		snprintf(p->why_not, sizeof p->why_not,
			 "VTL_BENCH_TGT_PORTAL, VTL_BENCH_TGT_IQN, VTL_BENCH_TGT_CTL and VTL_BENCH_TGT_DIR are not all set "
			 "(tests/bench/bench_iscsi.sh sets them when it could start tgtd)");
	p->up = !p->why_not[0];
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: bench_iscsi PORTAL TARGET-IQN (tests/bench/bench_iscsi.sh starts vtld and tgtd for it)\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	g_dir = getenv("VTL_BENCH_DIR");
	if (!g_dir || !*g_dir)
		die("VTL_BENCH_DIR is not set: the folder for the baseline file, on the file system of vtld's pool");
	g_pool_dir = getenv("VTL_BENCH_POOL");
	peers_from_env(argc, argv);
	uint64_t mb = env_u64("VTL_BENCH_MB", 1024, 16, 1u << 20);
	unsigned qd = (unsigned)env_u64("VTL_BENCH_QD", 4, 1, QD_MAX);
	unsigned rounds = (unsigned)env_u64("VTL_BENCH_ROUNDS", 3, 1, ROUNDS_MAX);
	g_rng = env_u64("VTL_BENCH_SEED", 1, 1, UINT64_MAX);
	bool precond = env_u64("VTL_BENCH_PRECONDITION", 1, 0, 1);

	uint8_t *pool[K_N];
	for (unsigned k = 0; k < K_N; k++)
		if (!(pool[k] = malloc(POOL_BYTES)))
			die("out of memory for the data pools");
	fill_random(pool[K_RANDOM], POOL_BYTES);
	vocabulary();
	unsigned vocab = calibrate(pool[K_TEXT]);
	fill_text(pool[K_TEXT], POOL_BYTES, vocab);
	double ratio1 = lz4_ratio(pool[K_TEXT], POOL_BYTES, LZ4_ACCEL_PLAIN);
	double ratio2 = lz4_ratio(pool[K_TEXT], POOL_BYTES, LZ4_ACCEL_POOL);
	double ratio_random = lz4_ratio(pool[K_RANDOM], POOL_BYTES, LZ4_ACCEL_PLAIN);
	struct seq seq;
	seq_make(&seq, mb * MIB);

	time_t wall = time(NULL);
	char date[64];
	strftime(date, sizeof date, "%Y-%m-%d %H:%M:%S UTC", gmtime(&wall));
	double la[3] = {0};
	if (getloadavg(la, 3) != 3)
		la[0] = la[1] = la[2] = -1;
	printf("vtl iSCSI benchmark (tests/bench/bench_iscsi): a libiscsi host against vtld on %s and tgt on %s\n\n",
	       argv[1], g_peer[T_TGT].up ? g_peer[T_TGT].portal : "(none)");
	printf("  date        %s\n", date);
	printf("  machine     %ld CPUs online, shared by the host, the target and the disk's writeback\n",
	       sysconf(_SC_NPROCESSORS_ONLN));
	printf("  load avg    %.2f %.2f %.2f at the start\n", la[0], la[1], la[2]);
	printf("  folder      %s (raw baseline; vtld's pool %s; tgtd's folder %s)\n", g_dir,
	       g_pool_dir ? g_pool_dir : "unknown", g_tgt_dir ? g_tgt_dir : "-");
	printf("  run size    %" PRIu64 " MiB per run: %zu WRITE(6) of 256 KiB (variable-block mode), %u in flight on\n"
	       "              one session, from a 128 MiB pool generated before any timing\n",
	       seq.bytes / MIB, seq.n, qd);
	printf("  data        random (LZ4 %.2f:1); text of a %u-word vocabulary: LZ4 %.2f:1 at acceleration %d\n"
	       "              (64 KiB pieces), %.2f:1 at acceleration %d (the pool's default today)\n",
	       ratio_random, vocab, ratio1, LZ4_ACCEL_PLAIN, ratio2, LZ4_ACCEL_POOL);
	printf("  target CPU  %s\n", g_peer[T_VTLD].pid > 0 ? "from /proc/PID/stat (utime + stime), all the target's threads"
							    : "not measured (VTL_BENCH_VTLD_PID unset)");
	if (g_peer[T_TGT].up)
		printf("  tgt         tgtd pid %ld, %s at %s\n", g_peer[T_TGT].pid, g_peer[T_TGT].iqn, g_peer[T_TGT].portal);
	else
		printf("  tgt         NOT MEASURED: %s; vtld's figures follow without ratios to tgt\n", g_peer[T_TGT].why_not);
	if (precond)
		precondition(pool[K_RANDOM], 3 * seq.bytes);

	struct host changer;
	host_login(&changer, T_VTLD, 0, CHANGER_LUN);
	for (unsigned i = 0; i < HOSTS; i++)
		vtld_load(&changer, i);
	host_logout(&changer);
	printf("  cartridges  vtld: %s %s %s %s in drives 1..4 (LUNs 1..4)%s\n", g_barcode[0], g_barcode[1],
	       g_barcode[2], g_barcode[3], g_peer[T_TGT].up ? "; tgt: a tape file on each of LUNs 1..4" : "");

	printf("\n== %u rounds: raw streamed, then random and text ~2:1 on vtld and tgt alternately (a new empty\n"
	       "   medium before every write); then %u rounds of %u hosts at once, vtld and tgt alternately\n",
	       rounds, rounds, HOSTS);
	for (unsigned r = 0; r < rounds; r++) {
		raw_run(&seq, pool[K_RANDOM], &g_raw_mbs[r], &g_raw_cold[r]);
		printf("   round %u  raw streamed          write %7.1f MB/s                     read cold %7.1f MB/s\n", r + 1,
		       g_raw_mbs[r], g_raw_cold[r]);
		for (unsigned k = 0; k < K_N; k++)
			for (unsigned t = 0; t < T_N; t++) {
				if (t == T_TGT && !g_peer[T_TGT].up)
					continue;
				struct figures *f = &g_fig[t][k][r];
				if (!guarded_run((enum target)t, &seq, pool[k], qd, f, NULL, NULL))
					continue;
				printf("   round %u  %-4s  %-10s  write %7.1f MB/s, %5.2f CPU s/GiB, %4.2f:1   read after write %7.1f, cold %7.1f, again %7.1f MB/s\n",
				       r + 1, target_name[t], kind_name[k], f->write_mbs, per_gib(f->write_cpu, (double)seq.bytes),
				       f->host_to_disk, f->after_mbs, f->cold_mbs, f->warm_mbs);
			}
	}
	for (unsigned r = 0; r < rounds; r++)
		for (unsigned t = 0; t < T_N; t++) {
			if (t == T_TGT && !g_peer[T_TGT].up)
				continue;
			if (!guarded_run((enum target)t, &seq, pool[K_RANDOM], qd, NULL, &g_hosts_mbs[t][r], &g_hosts_cpu[t][r]))
				continue;
			printf("   round %u  %-4s  %u hosts    write %7.1f MB/s, %5.2f CPU s/GiB together\n", r + 1, target_name[t],
			       HOSTS, g_hosts_mbs[t][r], per_gib(g_hosts_cpu[t][r], (double)seq.bytes * HOSTS));
		}
	report(rounds, &seq, g_peer[T_TGT].up);
	uint64_t crypt_mb = env_u64("VTL_BENCH_ISCSI_CRYPT_MB", mb < CRYPT_MB_DEFAULT ? mb : CRYPT_MB_DEFAULT, 0, mb);
	if (crypt_mb) {
		struct seq cs;
		seq_make(&cs, crypt_mb * MIB);
		crypt_pass(&cs, pool[K_RANDOM], qd);
		free(cs.off);
	}
	free(seq.off);
	for (unsigned k = 0; k < K_N; k++)
		free(pool[k]);
	return 0;
}
