/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A host that writes while vtld is killed under it, then checks that nothing
 * a WRITE FILEMARKS acknowledged was lost (issue 17; test_crash_kill.sh):
 *
 *   iscsi_crashwrite write|append|verify PORTAL TARGET-IQN SLOT SEED RECORD
 *
 * The stream is a function of SEED alone. It is a sequence of elements (the
 * logical objects of SSC-4: blocks and filemarks, counted together): runs of
 * 1..64 variable-length blocks, each run followed by one filemark. Block i
 * has a size from 1 byte to 256 KiB and content (random, or a repeating
 * pattern LZ4 shrinks) that depend only on SEED and i; its first bytes
 * carry i and SEED, so a misplaced block says which one it is.
 *
 * The cartridge in storage element SLOT is moved into drive element 257
 * (LUN 1) unless it is there already (after a restart of vtld it is).
 *
 * write   rewinds and writes the stream from BOT with QUEUE_DEPTH commands
 *         in flight: WRITE(6) for a block, WRITE FILEMARKS(6) of 1 filemark
 *         without IMMED for a filemark. RECORD is truncated and gets the
 *         starting position as its first line once the first command is
 *         sent; then, each time every element up to a filemark has ended
 *         GOOD, the element count up to and including that filemark (the
 *         acknowledged position) as one more line, fdatasynced before the
 *         program goes on (RECORD survives: only vtld is killed). It writes
 *         until the connection breaks, then prints what it wrote and exits 0.
 * append  the same from the last position in RECORD: LOCATE(10) to that
 *         logical object (which discards whatever lies beyond), READ
 *         POSITION must agree, and the stream goes on from there.
 * verify  rewinds and reads from BOT with READ(6), QUEUE_DEPTH in flight,
 *         one per element: a block's exact length, which must come back
 *         GOOD with the stream's bytes; a filemark must be reported as
 *         CHECK CONDITION with the FILEMARK bit. Every element before the
 *         last position in RECORD must be there; after it, the tape may end
 *         (BLANK CHECK, end of data) anywhere, but whatever it holds before
 *         its end must be the stream. Prints one line of what it verified.
 *
 * With VTL_CRASH_KILL_PID=PID and VTL_CRASH_KILL_AT=K in its environment,
 * write and append send SIGKILL to PID (vtld) the moment the K-th position of
 * the run is recorded: right after a WRITE FILEMARKS was acknowledged, with
 * the next commands about to go out, a moment a script's polling would miss.
 *
 * Exit status: 0 when all is as above, 1 on anything else (a command that is
 * not GOOD while vtld lives, a lost or wrong element, a failed login), with
 * the reason on stderr.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/integration/hostlib.h"

#define QUEUE_DEPTH 4              /* commands in flight: the brief's depth, well inside vtld's window */
#define BLOCK_MAX (256u << 10)     /* largest block of the stream */
#define RUN_MAX 64                 /* blocks between two filemarks: 1..RUN_MAX */
#define STAMP_LEN 16               /* block index and seed at the start of a block */
#define PATTERN_LEN 64             /* period of a compressible block */
#define POLL_MS 1000
#define READY_TRIES 300            /* TEST UNIT READY attempts, READY_WAIT_MS apart: 30 s */
#define READY_WAIT_MS 100

/* SCSI opcodes (SSC-4, SMC-3, SPC-4) and the library's element addresses. */
#define OP_TEST_UNIT_READY 0x00
#define OP_REWIND 0x01
#define OP_READ6 0x08
#define OP_WRITE6 0x0A
#define OP_WRITE_FILEMARKS6 0x10
#define OP_LOCATE10 0x2B
#define OP_READ_POSITION 0x34
#define OP_MOVE_MEDIUM 0xA5
#define CHANGER_LUN 0
#define DRIVE_LUN 1
#define DRIVE_ELEMENT 257
#define RP_SHORT_LEN 20            /* READ POSITION short form (SSC-4, READ POSITION) */
#define RP_FIRST_AT 4              /* its first logical object location */
#define ASC_BECOMING_READY 0x0401  /* NOT READY, LOGICAL UNIT IS IN PROCESS OF BECOMING READY */

/*
 * Fixed-format sense (SPC-4 4.5.3) as libiscsi keeps it for CHECK CONDITION:
 * task->datain holds the 2-byte SenseLength of the iSCSI response (RFC 7143
 * 11.4.7.2), then the sense bytes.
 */
#define SENSE_AT 2
#define SENSE_FLAGS 2              /* FILEMARK, EOM, ILI and the sense key */
#define SENSE_FILEMARK 0x80
#define SENSE_EOM 0x40
#define SENSE_ILI 0x20
#define SENSE_INFO 3               /* INFORMATION, 4 bytes */
#define SENSE_MIN (SENSE_INFO + 4)

/* -------------------------------------------------------------- the stream */

/* splitmix64 of (seed, index, what): every choice of the stream comes from here. */
static uint64_t mix(uint64_t seed, uint64_t index, uint64_t what)
{
	uint64_t z = seed * 0x9E3779B97F4A7C15ull + index * 0xD1B54A32D192ED03ull + what * 0x8CB92BA72F3D8DD7ull;
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

enum { MIX_RUN, MIX_SIZE, MIX_DATA };

/*
 * A block's size: an eighth each tiny (1..16 bytes) and exactly BLOCK_MAX, a
 * quarter each up to 4 KiB, up to 64 KiB and up to BLOCK_MAX, so that a trial
 * has many records of every shape and a few hundred MB at most.
 */
static uint32_t block_size(uint64_t seed, uint64_t b)
{
	uint64_t h = mix(seed, b, MIX_SIZE), r = h >> 8;
	switch (h % 8) {
	case 0:
		return 1 + (uint32_t)(r % 16);
	case 1:
	case 2:
		return 17 + (uint32_t)(r % (4096 - 16));
	case 3:
	case 4:
		return 4097 + (uint32_t)(r % (65536 - 4096));
	case 5:
	case 6:
		return 65537 + (uint32_t)(r % (BLOCK_MAX - 65537));
	default:
		return BLOCK_MAX;
	}
}

static void put_le64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_le64(const uint8_t *p)
{
	uint64_t v = 0;
	for (int i = 0; i < 8; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

/* Block b of the stream of seed: n = block_size(seed, b) bytes. Half the blocks repeat a pattern. */
static void block_fill(uint8_t *p, uint32_t n, uint64_t seed, uint64_t b)
{
	uint64_t x = mix(seed, b, MIX_DATA) | 1;
	bool compressible = x & 2;
	uint32_t period = compressible ? PATTERN_LEN : n;
	for (uint32_t i = 0; i < n; i += 8) {
		if (i >= period) {
			memcpy(p + i, p + i - period, n - i < 8 ? n - i : 8);
			continue;
		}
		/* xorshift64*: the same bytes for the same block. */
		x ^= x >> 12;
		x ^= x << 25;
		x ^= x >> 27;
		uint64_t v = x * 2685821657736338717ull;
		memcpy(p + i, &v, n - i < 8 ? n - i : 8);
	}
	uint8_t stamp[STAMP_LEN];
	put_le64(stamp, b);
	put_le64(stamp + 8, seed);
	memcpy(p, stamp, n < STAMP_LEN ? n : STAMP_LEN);
}

/* The stream's cursor: the next element and, if it is a block, which one. */
struct stream {
	uint64_t seed;
	uint64_t elem;   /* index of the next element */
	uint64_t blocks; /* blocks before it */
	uint64_t marks;  /* filemarks before it */
	uint32_t left;   /* blocks left before the next filemark */
};

static void stream_start(struct stream *s, uint64_t seed)
{
	*s = (struct stream){.seed = seed, .left = 1 + (uint32_t)(mix(seed, 0, MIX_RUN) % RUN_MAX)};
}

/* Whether the next element is a filemark (else it is block s->blocks). */
static bool stream_at_filemark(const struct stream *s)
{
	return s->left == 0;
}

/* Moves past the next element. */
static void stream_step(struct stream *s)
{
	s->elem++;
	if (s->left == 0) {
		s->marks++;
		s->left = 1 + (uint32_t)(mix(s->seed, s->marks, MIX_RUN) % RUN_MAX);
	} else {
		s->left--;
		s->blocks++;
	}
}

/* ------------------------------------------------------------- the host */

static struct iscsi_context *g_c;

static void put24(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 16);
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)v;
}

static uint32_t get_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* The sense bytes of a CHECK CONDITION task (NULL if it has fewer than SENSE_MIN). */
static const uint8_t *sense_of(const struct scsi_task *t)
{
	if (!t->datain.data || t->datain.size < SENSE_AT + SENSE_MIN)
		return NULL;
	return t->datain.data + SENSE_AT;
}

/* "status S, sense key K, ASC/ASCQ X, FILEMARK EOM ILI, INFORMATION I" of a finished task. */
static const char *task_words(const struct scsi_task *t, int status)
{
	static char out[160];
	if (status != SCSI_STATUS_CHECK_CONDITION) {
		snprintf(out, sizeof out, "status %d", status);
		return out;
	}
	const uint8_t *s = sense_of(t);
	snprintf(out, sizeof out, "CHECK CONDITION, sense key %d, ASC/ASCQ %04X%s%s%s, INFORMATION %" PRId32,
		 t->sense.key, t->sense.ascq, s && s[SENSE_FLAGS] & SENSE_FILEMARK ? ", FILEMARK" : "",
		 s && s[SENSE_FLAGS] & SENSE_EOM ? ", EOM" : "", s && s[SENSE_FLAGS] & SENSE_ILI ? ", ILI" : "",
		 s ? (int32_t)get_be32(s + SENSE_INFO) : 0);
	return out;
}

/* Runs a CDB that must end GOOD; returns the task (the caller frees it). */
static struct scsi_task *good(int lun, const uint8_t *cdb, int len, int dir, void *data, size_t n, const char *what)
{
	struct scsi_task *t = host_run(g_c, lun, cdb, len, dir, data, n);
	if (t->status != SCSI_STATUS_GOOD)
		fail("%s: %s", what, task_words(t, t->status));
	return t;
}

/* TEST UNIT READY until GOOD, past unit attentions and "becoming ready" (a restarted vtld reopens the cartridge). */
static void ready(int lun)
{
	const uint8_t tur[6] = {OP_TEST_UNIT_READY};
	for (int i = 0; i < READY_TRIES; i++) {
		struct scsi_task *t = host_run(g_c, lun, tur, 6, SCSI_XFER_NONE, NULL, 0);
		int st = t->status, key = t->sense.key, ascq = t->sense.ascq;
		scsi_free_scsi_task(t);
		if (st == SCSI_STATUS_GOOD)
			return;
		if (key == SCSI_SENSE_NOT_READY && ascq == ASC_BECOMING_READY)
			usleep(READY_WAIT_MS * 1000);
		else if (key != SCSI_SENSE_UNIT_ATTENTION)
			fail("TEST UNIT READY on LUN %d: status %d, sense key %d, ASC/ASCQ %04X", lun, st, key, ascq);
	}
	fail("LUN %d did not become ready within %d s", lun, READY_TRIES * READY_WAIT_MS / 1000);
}

/* Logs in and has the cartridge of slot in the drive (moving it there unless it is), ready. */
static void connect_and_load(const char *portal, const char *iqn, uint16_t slot)
{
	g_c = host_ctx = iscsi_create_context("iqn.2026-01.org.vtl:crash-host");
	if (!g_c)
		fail("iscsi_create_context");
	iscsi_set_targetname(g_c, iqn);
	iscsi_set_session_type(g_c, ISCSI_SESSION_NORMAL);
	iscsi_set_header_digest(g_c, ISCSI_HEADER_DIGEST_NONE);
	/* A broken connection is the end of a write run, not something to hide by logging in again. */
	iscsi_set_noautoreconnect(g_c, 1);
	if (iscsi_full_connect_sync(g_c, portal, CHANGER_LUN) != 0)
		fail("login to %s at %s", iqn, portal);
	ready(CHANGER_LUN);
	char in_slot[HOST_BARCODE_LEN + 1], in_drive[HOST_BARCODE_LEN + 1];
	host_barcode_at(g_c, CHANGER_LUN, slot, in_slot);
	host_barcode_at(g_c, CHANGER_LUN, DRIVE_ELEMENT, in_drive);
	if (!in_drive[0]) {
		if (!in_slot[0])
			fail("both slot %u and drive element %u are empty", slot, DRIVE_ELEMENT);
		uint8_t mv[12] = {OP_MOVE_MEDIUM, 0, 0, 0, (uint8_t)(slot >> 8), (uint8_t)slot, DRIVE_ELEMENT >> 8,
				  DRIVE_ELEMENT & 0xFF};
		scsi_free_scsi_task(good(CHANGER_LUN, mv, 12, SCSI_XFER_NONE, NULL, 0, "MOVE MEDIUM into the drive"));
	} else if (in_slot[0]) {
		fail("drive element %u holds %s while slot %u still holds %s", DRIVE_ELEMENT, in_drive, slot, in_slot);
	}
	ready(DRIVE_LUN);
}

/* ------------------------------------------------------ commands in flight */

/* One command slot: the element it carries, its buffer, and (verify) what it found. */
struct slot {
	bool busy, done;
	uint64_t elem, block; /* block: a block's index in the stream; for a filemark, the blocks before it */
	bool filemark;
	uint32_t len;         /* a block's length */
	uint8_t *buf;
	int status;           /* as the callback got it */
	char why[256];        /* verify: what was wrong, "" if the element is right */
	bool eod;             /* verify: the drive reported end of data here */
};

static struct slot g_slot[QUEUE_DEPTH];
static bool g_lost;       /* the connection broke (vtld is gone) */
static uint8_t *g_expect; /* verify: the expected block */
static uint64_t g_seed;   /* verify: the stream's seed */

static struct slot *slot_of_elem(uint64_t elem)
{
	struct slot *s = &g_slot[elem % QUEUE_DEPTH];
	return s->busy && s->elem == elem ? s : NULL;
}

/* Waits for the connection's events and processes them; false once the connection is gone. */
static bool service(void)
{
	struct pollfd pfd = {.fd = iscsi_get_fd(g_c), .events = (short)iscsi_which_events(g_c)};
	int n = poll(&pfd, 1, POLL_MS);
	if (n < 0 && errno != EINTR)
		fail("poll: %s", strerror(errno));
	if (iscsi_service(g_c, n > 0 ? pfd.revents : 0) != 0)
		g_lost = true;
	return !g_lost;
}

/* The statuses of a command that never reached a verdict of the drive: the connection went away. */
static bool status_is_lost(int status)
{
	return status == SCSI_STATUS_ERROR || status == SCSI_STATUS_CANCELLED || status == SCSI_STATUS_TIMEOUT;
}

static void write_done(struct iscsi_context *iscsi, int status, void *command_data, void *private_data)
{
	(void)iscsi;
	struct scsi_task *t = command_data;
	struct slot *s = private_data;
	if (status_is_lost(status)) {
		g_lost = true;
	} else if (status != SCSI_STATUS_GOOD) {
		if (s->filemark)
			fail("WRITE FILEMARKS at element %" PRIu64 ": %s", s->elem, task_words(t, status));
		fail("WRITE(6) of block %" PRIu64 " (%u bytes) at element %" PRIu64 ": %s", s->block, s->len, s->elem,
		     task_words(t, status));
	}
	s->status = status;
	s->done = true;
	scsi_free_scsi_task(t);
}

/* Sends the stream's next element from slot s. */
static void write_issue(struct stream *st, struct slot *s)
{
	*s = (struct slot){.busy = true, .elem = st->elem, .block = st->blocks, .filemark = stream_at_filemark(st),
			   .buf = s->buf};
	uint8_t cdb[6] = {OP_WRITE_FILEMARKS6, 0, 0, 0, 1, 0}; /* 1 filemark, IMMED 0 */
	struct iscsi_data d = {0, NULL};
	if (!s->filemark) {
		s->len = block_size(st->seed, s->block);
		block_fill(s->buf, s->len, st->seed, s->block);
		cdb[0] = OP_WRITE6;
		put24(cdb + 2, s->len); /* variable-block mode: one block of len bytes */
		d = (struct iscsi_data){s->len, s->buf};
	}
	stream_step(st);
	struct scsi_task *t = scsi_create_task(6, cdb, s->filemark ? SCSI_XFER_NONE : SCSI_XFER_WRITE, (int)s->len);
	if (!t)
		fail("scsi_create_task");
	if (iscsi_scsi_command_async(g_c, DRIVE_LUN, t, write_done, s->filemark ? NULL : &d, s) != 0) {
		scsi_free_scsi_task(t);
		g_lost = true;
	}
}

/* Appends position to the record and makes it durable before anything else happens. */
static void record_put(int fd, uint64_t position)
{
	char line[32];
	int n = snprintf(line, sizeof line, "%" PRIu64 "\n", position);
	if (write(fd, line, (size_t)n) != n || fdatasync(fd) != 0)
		fail("writing the record: %s", strerror(errno));
}

/* The last position in the record (0 if it has none). */
static uint64_t record_last(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	uint64_t last = 0, v;
	char line[64];
	while (fgets(line, sizeof line, f)) {
		char *end;
		errno = 0;
		v = strtoull(line, &end, 10);
		if (errno || end == line || *end != '\n')
			fail("%s: a line that is not a position: %s", path, line);
		last = v;
	}
	fclose(f);
	return last;
}

/* Positions the drive at logical object obj and checks READ POSITION says so. */
static void position_at(uint64_t obj)
{
	if (obj > UINT32_MAX)
		fail("position %" PRIu64 " does not fit LOCATE(10)", obj);
	uint8_t loc[10] = {OP_LOCATE10, 0, 0, (uint8_t)(obj >> 24), (uint8_t)(obj >> 16), (uint8_t)(obj >> 8),
			   (uint8_t)obj};
	scsi_free_scsi_task(good(DRIVE_LUN, loc, 10, SCSI_XFER_NONE, NULL, 0, "LOCATE(10) to the acknowledged position"));
	static uint8_t b[RP_SHORT_LEN];
	uint8_t rp[10] = {OP_READ_POSITION};
	struct scsi_task *t = good(DRIVE_LUN, rp, 10, SCSI_XFER_READ, b, sizeof b, "READ POSITION");
	if (t->datain.size < RP_FIRST_AT + 4 || get_be32(t->datain.data + RP_FIRST_AT) != obj)
		fail("READ POSITION after LOCATE to %" PRIu64 " says %" PRIu32, obj,
		     t->datain.size >= RP_FIRST_AT + 4 ? get_be32(t->datain.data + RP_FIRST_AT) : 0);
	scsi_free_scsi_task(t);
}


static void rewind_drive(void)
{
	const uint8_t rew[6] = {OP_REWIND};
	scsi_free_scsi_task(good(DRIVE_LUN, rew, 6, SCSI_XFER_NONE, NULL, 0, "REWIND"));
}

static uint64_t parse_u64(const char *s, uint64_t max, const char *what)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || end == s || *end || v > max)
		fail("%s: %s is not a number up to %" PRIu64, what, s, max);
	return v;
}

/* The PID and acknowledgement count of VTL_CRASH_KILL_PID / VTL_CRASH_KILL_AT (0: no kill by the host). */
static long g_kill_pid;
static uint64_t g_kill_at;

static void kill_setup(void)
{
	const char *p = getenv("VTL_CRASH_KILL_PID"), *k = getenv("VTL_CRASH_KILL_AT");
	if (!p && !k)
		return;
	if (!p || !k)
		fail("VTL_CRASH_KILL_PID and VTL_CRASH_KILL_AT go together");
	g_kill_pid = (long)parse_u64(p, INT32_MAX, "VTL_CRASH_KILL_PID");
	g_kill_at = parse_u64(k, UINT64_MAX, "VTL_CRASH_KILL_AT");
	if (g_kill_pid < 2 || g_kill_at == 0)
		fail("VTL_CRASH_KILL_PID must be a process and VTL_CRASH_KILL_AT at least 1");
}

/* write / append: the stream from BOT or from the record's last position, until the connection breaks. */
static int run_write(uint64_t seed, const char *record, bool append)
{
	kill_setup();
	uint64_t acks = 0;
	uint64_t start = append ? record_last(record) : 0;
	struct stream st;
	stream_start(&st, seed);
	while (st.elem < start)
		stream_step(&st);
	if (append)
		position_at(start);
	else
		rewind_drive();
	int fd = open(record, O_WRONLY | O_CREAT | O_APPEND | (append ? 0 : O_TRUNC), 0644);
	if (fd < 0)
		fail("open %s: %s", record, strerror(errno));
	/* The first line: the stream is about to be written from here (the test times its kill from it). */
	record_put(fd, start);
	uint64_t completed = start, acked = start, acked_blocks = st.blocks;
	while (!g_lost) {
		while (!g_lost && st.elem < completed + QUEUE_DEPTH)
			write_issue(&st, &g_slot[st.elem % QUEUE_DEPTH]);
		if (!g_lost)
			service();
		/* What ended GOOD before the connection broke still counts: walk the completed prefix. */
		for (struct slot *s; (s = slot_of_elem(completed)) && s->done && s->status == SCSI_STATUS_GOOD;) {
			if (s->filemark) {
				acked = s->elem + 1;
				acked_blocks = s->block;
				record_put(fd, acked);
				if (++acks == g_kill_at && g_kill_pid && kill((pid_t)g_kill_pid, SIGKILL) != 0)
					fail("kill %ld: %s", g_kill_pid, strerror(errno));
			}
			s->busy = false;
			completed++;
		}
	}
	if (close(fd) != 0)
		fail("closing the record: %s", strerror(errno));
	printf("write: from element %" PRIu64 ", %" PRIu64 " sent, %" PRIu64 " ended GOOD; acknowledged position %" PRIu64
	       " (%" PRIu64 " blocks, %" PRIu64 " filemarks); then the connection broke\n",
	       start, st.elem - start, completed - start, acked, acked_blocks, acked - acked_blocks);
	if (g_kill_pid)
		printf("write: SIGKILL sent to %ld at acknowledgement %" PRIu64 " of %" PRIu64 "\n", g_kill_pid, g_kill_at,
		       acks);
	return 0;
}

/* Decides whether the element slot s read is the stream's (s->why empty) or end of data (s->eod). */
static void judge(struct slot *s, const struct scsi_task *t, int status)
{
	const uint8_t *sense = status == SCSI_STATUS_CHECK_CONDITION ? sense_of(t) : NULL;
	if (status == SCSI_STATUS_CHECK_CONDITION && t->sense.key == SCSI_SENSE_BLANK_CHECK) {
		s->eod = true;
		return;
	}
	if (s->filemark) {
		if (status == SCSI_STATUS_CHECK_CONDITION && t->sense.key == SCSI_SENSE_NO_SENSE && sense &&
		    sense[SENSE_FLAGS] & SENSE_FILEMARK)
			return;
		snprintf(s->why, sizeof s->why, "a filemark expected, READ(6) got %s", task_words(t, status));
		return;
	}
	if (status != SCSI_STATUS_GOOD || t->residual_status != SCSI_RESIDUAL_NO_RESIDUAL) {
		snprintf(s->why, sizeof s->why, "block %" PRIu64 " of %u bytes expected, READ(6) got %s%s", s->block, s->len,
			 task_words(t, status), t->residual_status != SCSI_RESIDUAL_NO_RESIDUAL ? " with a residual" : "");
		return;
	}
	block_fill(g_expect, s->len, g_seed, s->block);
	if (memcmp(s->buf, g_expect, s->len) == 0)
		return;
	uint32_t at = 0;
	while (s->buf[at] == g_expect[at])
		at++;
	char found[96] = "";
	if (s->len >= STAMP_LEN)
		snprintf(found, sizeof found, " (its stamp: block %" PRIu64 " of seed %" PRIu64 ")", get_le64(s->buf),
			 get_le64(s->buf + 8));
	snprintf(s->why, sizeof s->why, "block %" PRIu64 " of %u bytes differs from byte %u on%s", s->block, s->len, at,
		 found);
}

static void read_done(struct iscsi_context *iscsi, int status, void *command_data, void *private_data)
{
	(void)iscsi;
	struct scsi_task *t = command_data;
	struct slot *s = private_data;
	s->status = status;
	s->done = true;
	if (status_is_lost(status)) {
		g_lost = true;
		snprintf(s->why, sizeof s->why, "the connection broke");
	} else {
		judge(s, t, status);
	}
	scsi_free_scsi_task(t);
}

/* Reads the stream's next element into slot s: a block's exact length, or the largest block for a filemark. */
static void read_issue(struct stream *st, struct slot *s)
{
	*s = (struct slot){.busy = true, .elem = st->elem, .block = st->blocks, .filemark = stream_at_filemark(st),
			   .buf = s->buf};
	s->len = s->filemark ? BLOCK_MAX : block_size(st->seed, s->block);
	stream_step(st);
	uint8_t cdb[6] = {OP_READ6, 0}; /* variable-block mode, SILI 0: a block of another length is ILI */
	put24(cdb + 2, s->len);
	struct scsi_task *t = scsi_create_task(6, cdb, SCSI_XFER_READ, (int)s->len);
	if (!t)
		fail("scsi_create_task");
	if (scsi_task_add_data_in_buffer(t, (int)s->len, s->buf) != 0 ||
	    iscsi_scsi_command_async(g_c, DRIVE_LUN, t, read_done, NULL, s) != 0)
		fail("sending READ(6) of element %" PRIu64, s->elem);
}

/* verify: the tape from BOT holds the stream, at least up to the record's last position. */
static int run_verify(uint64_t seed, const char *record)
{
	uint64_t acked = record_last(record);
	g_seed = seed;
	if (!(g_expect = malloc(BLOCK_MAX)))
		fail("out of memory");
	rewind_drive();
	struct stream st;
	stream_start(&st, seed);
	uint64_t completed = 0, blocks = 0, marks = 0, bytes = 0;
	bool eod = false;
	for (;;) {
		while (!eod && st.elem < completed + QUEUE_DEPTH)
			read_issue(&st, &g_slot[st.elem % QUEUE_DEPTH]);
		if (completed == st.elem)
			break; /* end of data found and everything after it drained */
		if (!service())
			fail("the connection broke while verifying, at element %" PRIu64, completed);
		for (struct slot *s; (s = slot_of_elem(completed)) && s->done; completed++) {
			s->busy = false;
			const char *where = completed < acked ? "acknowledged" : "beyond the acknowledged position";
			if (s->eod) {
				if (completed < acked)
					fail("end of data at element %" PRIu64 ", but %" PRIu64
					     " were acknowledged: acknowledged data is lost",
					     completed, acked);
				eod = true;
			} else if (eod) {
				fail("element %" PRIu64 " read after end of data was reported before it", completed);
			} else if (s->why[0]) {
				fail("element %" PRIu64 " (%s): %s", completed, where, s->why);
			} else {
				blocks += !s->filemark;
				marks += s->filemark;
				bytes += s->filemark ? 0 : s->len;
			}
		}
	}
	uint64_t found = blocks + marks;
	printf("verify: %" PRIu64 " elements intact from BOT (%" PRIu64 " blocks, %.1f MB, %" PRIu64
	       " filemarks), then end of data; %" PRIu64 " acknowledged, %" PRIu64 " more survived\n",
	       found, blocks, (double)bytes / 1e6, marks, acked, found - acked);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 7 || (strcmp(argv[1], "write") && strcmp(argv[1], "append") && strcmp(argv[1], "verify"))) {
		fprintf(stderr, "usage: iscsi_crashwrite write|append|verify PORTAL TARGET-IQN SLOT SEED RECORD\n");
		return 2;
	}
	/* A write to the socket of a killed vtld must fail with EPIPE, the end of a run, not kill the host. */
	if (signal(SIGPIPE, SIG_IGN) == SIG_ERR)
		fail("signal: %s", strerror(errno));
	uint16_t slot = (uint16_t)parse_u64(argv[4], UINT16_MAX, "SLOT");
	uint64_t seed = parse_u64(argv[5], UINT64_MAX, "SEED");
	for (unsigned i = 0; i < QUEUE_DEPTH; i++)
		if (!(g_slot[i].buf = malloc(BLOCK_MAX)))
			fail("out of memory");
	connect_and_load(argv[2], argv[3], slot);
	int rc = strcmp(argv[1], "verify") ? run_write(seed, argv[6], !strcmp(argv[1], "append"))
					   : run_verify(seed, argv[6]);
	if (!g_lost)
		iscsi_logout_sync(g_c);
	iscsi_destroy_context(g_c);
	for (unsigned i = 0; i < QUEUE_DEPTH; i++)
		free(g_slot[i].buf);
	free(g_expect);
	return rc;
}
