/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A host over iSCSI (libiscsi) for test_faults.sh: it writes to a tape while
 * vtld's disk fails under it (fault_shim.so), checks the SSC answers, and
 * keeps a manifest of what the drive acknowledged, which a later run reads
 * the tape back against byte for byte.
 *
 *   iscsi_faults PORTAL IQN enospc   SLOT MANIFEST
 *       writes blocks, a WRITE FILEMARKS after every few, until a command
 *       fails; that must be VOLUME OVERFLOW with EOM, END-OF-PARTITION/MEDIUM
 *       DETECTED (0Dh, 00h/02h); then one more WRITE FILEMARKS (GOOD, or the
 *       same overflow) and UNLOAD, which must be GOOD: a full disk loses
 *       nothing the drive took.
 *   iscsi_faults PORTAL IQN syncfail SLOT MANIFEST TRIGGER
 *       writes two files, then three more blocks; creates TRIGGER (the shim's
 *       fdatasync fault) and writes a filemark: it must get MEDIUM ERROR,
 *       WRITE ERROR (03h, 0Ch/00h) and the shim must have taken the trigger;
 *       then a WRITE, a WRITE FILEMARKS and the UNLOAD must get the same,
 *       though the disk would sync again. The manifest keeps only what the
 *       last GOOD WRITE FILEMARKS covered.
 *   iscsi_faults PORTAL IQN writefail SLOT MANIFEST TRIGGER
 *       the same with the shim's write fault: two files, then TRIGGER and a
 *       WRITE, which must get MEDIUM ERROR, WRITE ERROR as a current error
 *       (70h), and the same fence after it.
 *   iscsi_faults PORTAL IQN syncpoints SLOT MANIFEST TRIGGER
 *       which commands make buffered writes durable: one round per command
 *       (REWIND, SPACE to end of data, LOCATE, ERASE, UNLOAD, WRITE in
 *       buffered mode 0), each on a fresh load: a block and a WRITE
 *       FILEMARKS (GOOD, kept in the manifest); TRIGGER created; a buffered
 *       WRITE and a WRITE FILEMARKS with IMMED, both GOOD with TRIGGER still
 *       there (neither synced); then the command, which must take TRIGGER
 *       and fail with the deferred MEDIUM ERROR, WRITE ERROR (71h, 03h,
 *       0Ch/00h).
 *   iscsi_faults PORTAL IQN earlywarning SLOT MANIFEST TRIGGER
 *       a file (GOOD, in the manifest), TRIGGER, then buffered WRITEs, GOOD
 *       without syncing, until the one that reaches early warning (the tape
 *       must be small): with SEW 1 (the default) it syncs first, so it must
 *       take TRIGGER and get the deferred MEDIUM ERROR.
 *   iscsi_faults PORTAL IQN leave    SLOT MANIFEST
 *       a file (GOOD, in the manifest) and three buffered blocks, then logs
 *       out with the tape still loaded (for a vtld stop).
 *   iscsi_faults PORTAL IQN append   SLOT MANIFEST BLOCKS
 *       spaces to end of data, writes BLOCKS blocks and a filemark (all GOOD)
 *       and unloads (GOOD).
 *   iscsi_faults PORTAL IQN verify   SLOT MANIFEST
 *       reads the tape from BOT: every block of the manifest with its length
 *       and bytes, every filemark, in order, then end of data (BLANK CHECK).
 *
 * Each mode moves the cartridge in storage element SLOT into the first drive
 * (element 257, LUN 1) and back (leave: not back). The manifest has one line
 * per object: "B SEED LENGTH" for a block (content host_fill(SEED)), "F" for
 * a filemark; the modes that write from BOT write it afresh, append adds to
 * it, verify reads it. Exit 0 when every check passed; each mode prints what
 * it saw.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/integration/hostlib.h"

#define CHANGER 0
#define DRIVE 1
#define DRIVE_ELEMENT 257
/* Blocks are MIN_BLOCK + (a step of the seed) bytes, below MAX_BLOCK, so that records cross any budget unevenly. */
#define MIN_BLOCK (16u << 10)
#define MAX_BLOCK (96u << 10)
#define BLOCK_STEP 7919u
#define FILE_BLOCKS 5       /* a WRITE FILEMARKS after every this many blocks */
#define ENOSPC_MAX_BLOCKS 4096 /* the budget test_faults.sh sets is reached far before this */
#define MANIFEST_MAX 8192

/* SPC-4 4.5.3 fixed-format sense: byte 2 holds FILEMARK, EOM, ILI and the key. */
#define SENSE_EOM 0x40
#define SENSE_KEY_MASK 0x0F
#define SENSE_RESPONSE_MASK 0x7F
#define SENSE_FIXED_CURRENT 0x70
#define SENSE_FIXED_DEFERRED 0x71
/* The SCSI Response's data segment starts with the 2-byte sense length (RFC 7143 11.4.7.2). */
#define SENSE_LENGTH_BYTES 2
#define SK_VOLUME_OVERFLOW 0x0D
#define ASCQ_EOM_DETECTED 0x0002   /* END-OF-PARTITION/MEDIUM DETECTED */
#define ASCQ_WRITE_ERROR 0x0C00    /* WRITE ERROR */
#define ASCQ_FILEMARK 0x0001       /* FILEMARK DETECTED */
#define ASCQ_EOD 0x0005            /* END-OF-DATA DETECTED */

static struct iscsi_context *iscsi;

struct object {
	char type; /* 'B' or 'F' */
	unsigned seed;
	uint32_t len;
};
static struct object manifest[MANIFEST_MAX];
static size_t n_manifest;

static uint8_t block[MAX_BLOCK], back[MAX_BLOCK];

static struct scsi_task *run(int lun, const uint8_t *cdb, int len, int dir, void *data, size_t n)
{
	return host_run(iscsi, lun, cdb, len, dir, data, n);
}

static void good(int lun, const uint8_t *cdb, int len, int dir, void *data, size_t n, const char *what)
{
	struct scsi_task *t = run(lun, cdb, len, dir, data, n);
	if (t->status != SCSI_STATUS_GOOD)
		fail("%s: status %d, sense key %d, ASC/ASCQ %04X", what, t->status, t->sense.key, t->sense.ascq);
	scsi_free_scsi_task(t);
}

/* The fixed-format sense bytes of a CHECK CONDITION, or NULL when there are none. */
static const uint8_t *raw_sense(const struct scsi_task *t)
{
	if (t->status != SCSI_STATUS_CHECK_CONDITION || !t->datain.data || t->datain.size < SENSE_LENGTH_BYTES + 3)
		return NULL;
	return t->datain.data + SENSE_LENGTH_BYTES;
}

/* Fails unless t ended CHECK CONDITION with key and ascq. */
static void expect_sense(const struct scsi_task *t, int key, int ascq, const char *what)
{
	if (t->status != SCSI_STATUS_CHECK_CONDITION || (int)t->sense.key != key || t->sense.ascq != ascq)
		fail("%s: status %d, sense key %02Xh, ASC/ASCQ %04X; expected CHECK CONDITION, %02Xh, %04X", what,
		     t->status, (unsigned)t->sense.key, (unsigned)t->sense.ascq, (unsigned)key, (unsigned)ascq);
}

static void put24(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 16);
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)v;
}

static uint32_t len_of(unsigned seed)
{
	return MIN_BLOCK + (seed * BLOCK_STEP) % (MAX_BLOCK - MIN_BLOCK);
}

/* WRITE(6) of one variable block of seed's length and content; the task (the caller frees it). */
static struct scsi_task *write_block(unsigned seed)
{
	uint32_t len = len_of(seed);
	uint8_t cdb[6] = {0x0A, 0};
	put24(cdb + 2, len);
	host_fill(block, len, seed);
	return run(DRIVE, cdb, 6, SCSI_XFER_WRITE, block, len);
}

static struct scsi_task *write_filemark(void)
{
	const uint8_t cdb[6] = {0x10, 0, 0, 0, 1, 0};
	return run(DRIVE, cdb, 6, SCSI_XFER_NONE, NULL, 0);
}

static struct scsi_task *unload(void)
{
	const uint8_t cdb[6] = {0x1B, 0, 0, 0, 0, 0};
	return run(DRIVE, cdb, 6, SCSI_XFER_NONE, NULL, 0);
}

static void add(char type, unsigned seed)
{
	if (n_manifest == MANIFEST_MAX)
		fail("manifest full");
	manifest[n_manifest++] = (struct object){type, seed, type == 'B' ? len_of(seed) : 0};
}

static void manifest_load(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		fail("cannot read the manifest %s: %s", path, strerror(errno));
	char type;
	unsigned seed;
	unsigned long len;
	n_manifest = 0;
	for (;;) {
		int n = fscanf(f, " %c", &type);
		if (n != 1)
			break;
		if (type == 'B') {
			if (fscanf(f, "%u %lu", &seed, &len) != 2 || len != len_of(seed))
				fail("manifest %s: bad block line %zu", path, n_manifest + 1);
			add('B', seed);
		} else if (type == 'F') {
			add('F', 0);
		} else {
			fail("manifest %s: bad line %zu", path, n_manifest + 1);
		}
	}
	fclose(f);
}

static void manifest_save(const char *path)
{
	FILE *f = fopen(path, "w");
	if (!f)
		fail("cannot write the manifest %s: %s", path, strerror(errno));
	for (size_t i = 0; i < n_manifest; i++) {
		if (manifest[i].type == 'B')
			fprintf(f, "B %u %u\n", manifest[i].seed, (unsigned)manifest[i].len);
		else
			fprintf(f, "F\n");
	}
	if (fclose(f) != 0)
		fail("cannot write the manifest %s", path);
}

/* The next block seed after the manifest's (seeds grow, so no two blocks are alike). */
static unsigned next_seed(void)
{
	unsigned s = 1;
	for (size_t i = 0; i < n_manifest; i++)
		if (manifest[i].type == 'B' && manifest[i].seed >= s)
			s = manifest[i].seed + 1;
	return s;
}

static void move(unsigned from, unsigned to, const char *what)
{
	uint8_t cdb[12] = {0xA5, 0, 0, 0, (uint8_t)(from >> 8), (uint8_t)from, (uint8_t)(to >> 8), (uint8_t)to};
	good(CHANGER, cdb, 12, SCSI_XFER_NONE, NULL, 0, what);
}

/* Fails unless t is the deferred MEDIUM ERROR, WRITE ERROR a failed sync of earlier writes gives. */
static void expect_deferred_write_error(const struct scsi_task *t, const char *what)
{
	expect_sense(t, SCSI_SENSE_MEDIUM_ERROR, ASCQ_WRITE_ERROR, what);
	const uint8_t *s = raw_sense(t);
	if (!s || (s[0] & SENSE_RESPONSE_MASK) != SENSE_FIXED_DEFERRED)
		fail("%s: not a deferred error (response code %02Xh)", what, s ? (unsigned)(s[0] & SENSE_RESPONSE_MASK) : 0u);
}

static void make_trigger(const char *trigger)
{
	FILE *trig = fopen(trigger, "w");
	if (!trig || fclose(trig) != 0)
		fail("cannot create the trigger %s", trigger);
}

/* Writes until a command fails with the full disk's answer; keeps what was acknowledged. */
static void mode_enospc(void)
{
	size_t good_blocks = 0, files = 0;
	unsigned seed = next_seed();
	struct scsi_task *t = NULL;
	const char *failed = NULL;
	for (unsigned i = 0; i < ENOSPC_MAX_BLOCKS && !failed; i++, seed++) {
		t = write_block(seed);
		if (t->status != SCSI_STATUS_GOOD) {
			failed = "WRITE";
			break;
		}
		scsi_free_scsi_task(t);
		add('B', seed);
		good_blocks++;
		if ((i + 1) % FILE_BLOCKS == 0) {
			t = write_filemark();
			if (t->status != SCSI_STATUS_GOOD) {
				failed = "WRITE FILEMARKS";
				break;
			}
			scsi_free_scsi_task(t);
			add('F', 0);
			files++;
		}
	}
	if (!failed)
		fail("%u blocks went in without the disk filling up", ENOSPC_MAX_BLOCKS);
	expect_sense(t, SK_VOLUME_OVERFLOW, ASCQ_EOM_DETECTED, failed);
	const uint8_t *s = raw_sense(t);
	if (!s || !(s[2] & SENSE_EOM))
		fail("%s at the full disk: VOLUME OVERFLOW without EOM", failed);
	scsi_free_scsi_task(t);
	printf("-- %zu blocks and %zu filemarks GOOD, then %s: VOLUME OVERFLOW, EOM, 00h/02h\n", good_blocks, files,
	       failed);
	t = write_filemark();
	if (t->status == SCSI_STATUS_GOOD) {
		add('F', 0);
		printf("-- a WRITE FILEMARKS after it: GOOD\n");
	} else {
		expect_sense(t, SK_VOLUME_OVERFLOW, ASCQ_EOM_DETECTED, "WRITE FILEMARKS after the overflow");
		printf("-- a WRITE FILEMARKS after it: VOLUME OVERFLOW too\n");
	}
	scsi_free_scsi_task(t);
	t = unload();
	if (t->status != SCSI_STATUS_GOOD)
		fail("UNLOAD of the full tape: status %d, sense key %d, ASC/ASCQ %04X", t->status, t->sense.key,
		     t->sense.ascq);
	scsi_free_scsi_task(t);
	printf("-- UNLOAD: GOOD\n");
}

/* Three buffered blocks, then a WRITE FILEMARKS whose fdatasync fails. */
static void mode_fence_sync(const char *trigger, unsigned *seedp)
{
	unsigned seed = *seedp;
	struct scsi_task *t;
	/* Buffered, acknowledged GOOD, and never covered by a GOOD filemark: not in the manifest. */
	for (unsigned b = 0; b < 3; b++, seed++) {
		t = write_block(seed);
		if (t->status != SCSI_STATUS_GOOD)
			fail("WRITE of buffered block %u: status %d", seed, t->status);
		scsi_free_scsi_task(t);
	}
	make_trigger(trigger);
	t = write_filemark();
	expect_sense(t, SCSI_SENSE_MEDIUM_ERROR, ASCQ_WRITE_ERROR, "WRITE FILEMARKS whose fdatasync fails");
	scsi_free_scsi_task(t);
	if (access(trigger, F_OK) == 0)
		fail("the WRITE FILEMARKS failed, but no fdatasync took the trigger %s", trigger);
	printf("-- 3 more blocks, then WRITE FILEMARKS with fdatasync failing: MEDIUM ERROR, 0Ch/00h\n");
	*seedp = seed;
}

/* After the fault: WRITE, WRITE FILEMARKS and UNLOAD all fail, though the disk works again. */
static void fence_holds(unsigned seed)
{
	struct scsi_task *t = write_block(seed);
	expect_sense(t, SCSI_SENSE_MEDIUM_ERROR, ASCQ_WRITE_ERROR, "WRITE after the fault");
	scsi_free_scsi_task(t);
	t = write_filemark();
	expect_sense(t, SCSI_SENSE_MEDIUM_ERROR, ASCQ_WRITE_ERROR, "WRITE FILEMARKS after the fault");
	scsi_free_scsi_task(t);
	printf("-- the next WRITE and WRITE FILEMARKS: MEDIUM ERROR, 0Ch/00h\n");
	t = unload();
	expect_deferred_write_error(t, "UNLOAD after the fault");
	scsi_free_scsi_task(t);
	printf("-- UNLOAD: MEDIUM ERROR, 0Ch/00h, deferred (71h)\n");
}

/*
 * The fence after a failed fdatasync at a WRITE FILEMARKS (at_write false),
 * or after a WRITE whose write to the disk fails (at_write true).
 */
static void mode_fence(const char *trigger, bool at_write)
{
	unsigned seed = next_seed();
	struct scsi_task *t;
	for (unsigned f = 0; f < 2; f++) {
		for (unsigned b = 0; b < FILE_BLOCKS; b++, seed++) {
			t = write_block(seed);
			if (t->status != SCSI_STATUS_GOOD)
				fail("WRITE of block %u: status %d", seed, t->status);
			scsi_free_scsi_task(t);
			add('B', seed);
		}
		t = write_filemark();
		if (t->status != SCSI_STATUS_GOOD)
			fail("WRITE FILEMARKS %u: status %d", f, t->status);
		scsi_free_scsi_task(t);
		add('F', 0);
	}
	printf("-- 2 files of %u blocks, each WRITE FILEMARKS GOOD\n", FILE_BLOCKS);
	if (at_write) {
		make_trigger(trigger);
		t = write_block(seed++);
		expect_sense(t, SCSI_SENSE_MEDIUM_ERROR, ASCQ_WRITE_ERROR, "WRITE whose write to the disk fails");
		const uint8_t *s = raw_sense(t);
		if (!s || (s[0] & SENSE_RESPONSE_MASK) != SENSE_FIXED_CURRENT)
			fail("the failed WRITE: not a current error (response code %02Xh)",
			     s ? (unsigned)(s[0] & SENSE_RESPONSE_MASK) : 0u);
		scsi_free_scsi_task(t);
		if (access(trigger, F_OK) == 0)
			fail("the WRITE failed, but no write took the trigger %s", trigger);
		printf("-- WRITE with the disk's write failing: MEDIUM ERROR, 0Ch/00h (current)\n");
	} else {
		mode_fence_sync(trigger, &seed);
	}
	fence_holds(seed);
}


/* MODE SELECT(6) of the header alone: BUFFERED MODE (SSC-4 8.3.1, device-specific byte bits 6..4) 1 or 0. */
static void buffered_mode(bool on)
{
	uint8_t hdr[4] = {0, 0, on ? 0x10 : 0x00, 0};
	const uint8_t cdb[6] = {0x15, 0x10, 0, 0, sizeof hdr, 0};
	good(DRIVE, cdb, 6, SCSI_XFER_WRITE, hdr, sizeof hdr, "MODE SELECT(6) of the buffered mode");
}

enum sync_op { OP_REWIND, OP_SPACE_EOD, OP_LOCATE, OP_ERASE, OP_UNLOAD, OP_UNBUFFERED_WRITE, N_SYNC_OPS };
static const char *const sync_op_name[N_SYNC_OPS] = {"REWIND", "SPACE to end of data", "LOCATE(10) to BOT",
						     "ERASE (short, at end of data)", "UNLOAD", "WRITE in buffered mode 0"};

static void mode_syncpoints(unsigned slot, const char *trigger)
{
	const uint8_t eod[6] = {0x11, 3, 0, 0, 0, 0}, rewind[6] = {0x01, 0, 0, 0, 0, 0};
	const uint8_t locate[10] = {0x2B, 0, 0, 0, 0, 0, 0, 0, 0, 0}, wfm_immed[6] = {0x10, 1, 0, 0, 1, 0};
	const uint8_t erase[6] = {0x19, 0, 0, 0, 0, 0};
	unsigned seed = next_seed();
	for (int op = 0; op < N_SYNC_OPS; op++) {
		if (op > 0) {
			move(slot, DRIVE_ELEMENT, "MOVE MEDIUM into the drive");
			host_ready(iscsi, DRIVE);
		}
		good(DRIVE, eod, 6, SCSI_XFER_NONE, NULL, 0, "SPACE to end of data");
		struct scsi_task *t = write_block(seed);
		if (t->status != SCSI_STATUS_GOOD)
			fail("WRITE of block %u: status %d", seed, t->status);
		scsi_free_scsi_task(t);
		add('B', seed++);
		t = write_filemark();
		if (t->status != SCSI_STATUS_GOOD)
			fail("WRITE FILEMARKS: status %d", t->status);
		scsi_free_scsi_task(t);
		add('F', 0);
		make_trigger(trigger);
		t = write_block(seed++);
		if (t->status != SCSI_STATUS_GOOD)
			fail("buffered WRITE with the sync fault armed: status %d, sense key %d", t->status, t->sense.key);
		scsi_free_scsi_task(t);
		good(DRIVE, wfm_immed, 6, SCSI_XFER_NONE, NULL, 0, "WRITE FILEMARKS with IMMED");
		if (access(trigger, F_OK) != 0)
			fail("a buffered WRITE or a WRITE FILEMARKS with IMMED synced (it took the trigger)");
		const char *name = sync_op_name[op];
		switch (op) {
		case OP_REWIND:
			t = run(DRIVE, rewind, 6, SCSI_XFER_NONE, NULL, 0);
			break;
		case OP_SPACE_EOD:
			t = run(DRIVE, eod, 6, SCSI_XFER_NONE, NULL, 0);
			break;
		case OP_LOCATE:
			t = run(DRIVE, locate, 10, SCSI_XFER_NONE, NULL, 0);
			break;
		case OP_ERASE:
			t = run(DRIVE, erase, 6, SCSI_XFER_NONE, NULL, 0);
			break;
		case OP_UNLOAD:
			t = unload();
			break;
		default:
			buffered_mode(false);
			t = write_block(seed++);
			break;
		}
		if (access(trigger, F_OK) == 0)
			fail("%s did not sync (the trigger is still there)", name);
		expect_deferred_write_error(t, name);
		scsi_free_scsi_task(t);
		if (op == OP_UNBUFFERED_WRITE)
			buffered_mode(true);
		if (op != OP_UNLOAD) {
			t = unload();
			expect_deferred_write_error(t, "UNLOAD after the failed sync");
			scsi_free_scsi_task(t);
		}
		printf("-- %s syncs: its failed fdatasync gives deferred MEDIUM ERROR, 0Ch/00h; a buffered WRITE and "
		       "WRITE FILEMARKS with IMMED before it did not sync\n",
		       name);
		if (op + 1 < N_SYNC_OPS)
			move(DRIVE_ELEMENT, slot, "MOVE MEDIUM back to its slot");
	}
}

/* With SEW 1 (the default) the WRITE that reaches early warning syncs first; none before it does. */
static void mode_earlywarning(const char *trigger)
{
	unsigned seed = next_seed();
	for (unsigned b = 0; b < FILE_BLOCKS; b++, seed++) {
		struct scsi_task *t = write_block(seed);
		if (t->status != SCSI_STATUS_GOOD)
			fail("WRITE of block %u: status %d", seed, t->status);
		scsi_free_scsi_task(t);
		add('B', seed);
	}
	struct scsi_task *t = write_filemark();
	if (t->status != SCSI_STATUS_GOOD)
		fail("WRITE FILEMARKS: status %d", t->status);
	scsi_free_scsi_task(t);
	add('F', 0);
	make_trigger(trigger);
	unsigned n = 0;
	for (;; n++) {
		if (n == ENOSPC_MAX_BLOCKS)
			fail("%u blocks went in without early warning", n);
		t = write_block(seed++);
		if (t->status != SCSI_STATUS_GOOD)
			break;
		scsi_free_scsi_task(t);
		if (access(trigger, F_OK) != 0)
			fail("buffered WRITE %u before early warning synced (it took the trigger)", n);
	}
	expect_deferred_write_error(t, "the WRITE that reaches early warning, its sync failing");
	scsi_free_scsi_task(t);
	if (access(trigger, F_OK) == 0)
		fail("the WRITE at early warning failed without syncing");
	printf("-- %u buffered WRITEs GOOD without a sync, then the one at early warning synced: deferred MEDIUM "
	       "ERROR, 0Ch/00h\n",
	       n);
	t = unload();
	expect_deferred_write_error(t, "UNLOAD after the failed sync");
	scsi_free_scsi_task(t);
}

/* A file (GOOD, in the manifest) and three buffered blocks, and the tape left loaded. */
static void mode_leave(void)
{
	unsigned seed = next_seed();
	struct scsi_task *t;
	for (unsigned b = 0; b < FILE_BLOCKS + 3; b++, seed++) {
		t = write_block(seed);
		if (t->status != SCSI_STATUS_GOOD)
			fail("WRITE of block %u: status %d", seed, t->status);
		scsi_free_scsi_task(t);
		if (b >= FILE_BLOCKS)
			continue; /* buffered, after the last filemark: not in the manifest */
		add('B', seed);
		if (b + 1 == FILE_BLOCKS) {
			t = write_filemark();
			if (t->status != SCSI_STATUS_GOOD)
				fail("WRITE FILEMARKS: status %d", t->status);
			scsi_free_scsi_task(t);
			add('F', 0);
		}
	}
	printf("-- a file of %u blocks with a GOOD WRITE FILEMARKS, 3 buffered blocks; the tape stays loaded\n",
	       FILE_BLOCKS);
}

static void mode_append(unsigned blocks)
{
	const uint8_t eod[6] = {0x11, 3, 0, 0, 0, 0}; /* SPACE to end of data */
	good(DRIVE, eod, 6, SCSI_XFER_NONE, NULL, 0, "SPACE to end of data");
	unsigned seed = next_seed();
	for (unsigned b = 0; b < blocks; b++, seed++) {
		struct scsi_task *t = write_block(seed);
		if (t->status != SCSI_STATUS_GOOD)
			fail("WRITE of appended block %u: status %d, sense key %d, ASC/ASCQ %04X", b, t->status,
			     t->sense.key, t->sense.ascq);
		scsi_free_scsi_task(t);
		add('B', seed);
	}
	struct scsi_task *t = write_filemark();
	if (t->status != SCSI_STATUS_GOOD)
		fail("WRITE FILEMARKS after the appended blocks: status %d, sense key %d, ASC/ASCQ %04X", t->status,
		     t->sense.key, t->sense.ascq);
	scsi_free_scsi_task(t);
	add('F', 0);
	t = unload();
	if (t->status != SCSI_STATUS_GOOD)
		fail("UNLOAD after appending: status %d, sense key %d, ASC/ASCQ %04X", t->status, t->sense.key,
		     t->sense.ascq);
	scsi_free_scsi_task(t);
	printf("-- appended %u blocks and a filemark at end of data, unloaded: all GOOD\n", blocks);
}

static void mode_verify(void)
{
	size_t blocks = 0, marks = 0;
	for (size_t i = 0; i < n_manifest; i++) {
		const struct object *o = &manifest[i];
		uint8_t cdb[6] = {0x08, 0};
		put24(cdb + 2, o->type == 'B' ? o->len : MAX_BLOCK);
		struct scsi_task *t = run(DRIVE, cdb, 6, SCSI_XFER_READ, back, o->type == 'B' ? o->len : MAX_BLOCK);
		if (o->type == 'F') {
			expect_sense(t, SCSI_SENSE_NO_SENSE, ASCQ_FILEMARK, "READ at a filemark");
			marks++;
		} else {
			if (t->status != SCSI_STATUS_GOOD)
				fail("READ of object %zu (block seed %u): status %d, sense key %d, ASC/ASCQ %04X", i,
				     o->seed, t->status, t->sense.key, t->sense.ascq);
			host_fill(block, o->len, o->seed);
			if (t->datain.size != (int)o->len || memcmp(t->datain.data, block, o->len) != 0)
				fail("object %zu (block seed %u, %u bytes) reads back wrong (%d bytes)", i, o->seed,
				     (unsigned)o->len, t->datain.size);
			blocks++;
		}
		scsi_free_scsi_task(t);
	}
	uint8_t cdb[6] = {0x08, 0};
	put24(cdb + 2, MAX_BLOCK);
	struct scsi_task *t = run(DRIVE, cdb, 6, SCSI_XFER_READ, back, MAX_BLOCK);
	expect_sense(t, SCSI_SENSE_BLANK_CHECK, ASCQ_EOD, "READ after the last acknowledged object");
	scsi_free_scsi_task(t);
	t = unload();
	if (t->status != SCSI_STATUS_GOOD)
		fail("UNLOAD after reading: status %d", t->status);
	scsi_free_scsi_task(t);
	printf("-- read back %zu blocks and %zu filemarks byte for byte, then end of data\n", blocks, marks);
}

int main(int argc, char **argv)
{
	if (argc < 6) {
		fprintf(stderr, "usage: iscsi_faults PORTAL IQN enospc|syncfail|writefail|syncpoints|earlywarning|leave|"
				"append|verify SLOT "
				"MANIFEST [TRIGGER|BLOCKS]\n");
		return 2;
	}
	const char *mode = argv[3], *path = argv[5];
	unsigned slot = (unsigned)strtoul(argv[4], NULL, 10);
	bool syncpoints = strcmp(mode, "syncpoints") == 0, ew = strcmp(mode, "earlywarning") == 0;
	bool fence = strcmp(mode, "syncfail") == 0 || strcmp(mode, "writefail") == 0;
	bool leave = strcmp(mode, "leave") == 0;
	bool fresh = strcmp(mode, "enospc") == 0 || fence || syncpoints || ew || leave;
	if ((fence || syncpoints || ew || strcmp(mode, "append") == 0) != (argc == 7) ||
	    (!fresh && strcmp(mode, "append") != 0 && strcmp(mode, "verify") != 0)) {
		fprintf(stderr, "iscsi_faults: bad mode or arguments\n");
		return 2;
	}
	if (!fresh)
		manifest_load(path);
	iscsi = host_iscsi_login("iqn.2026-01.org.vtl:faults-host", argv[2], argv[1], CHANGER, ISCSI_HEADER_DIGEST_NONE);
	host_ready(iscsi, CHANGER);
	move(slot, DRIVE_ELEMENT, "MOVE MEDIUM into the drive");
	host_ready(iscsi, DRIVE);
	if (strcmp(mode, "enospc") == 0)
		mode_enospc();
	else if (fence)
		mode_fence(argv[6], strcmp(mode, "writefail") == 0);
	else if (syncpoints)
		mode_syncpoints(slot, argv[6]);
	else if (ew)
		mode_earlywarning(argv[6]);
	else if (leave)
		mode_leave();
	else if (strcmp(mode, "append") == 0)
		mode_append((unsigned)strtoul(argv[6], NULL, 10));
	else
		mode_verify();
	if (strcmp(mode, "verify") != 0)
		manifest_save(path);
	if (!leave)
		move(DRIVE_ELEMENT, slot, "MOVE MEDIUM back to its slot");
	iscsi_logout_sync(iscsi);
	iscsi_destroy_context(iscsi);
	printf("iscsi_faults %s: all checks passed\n", mode);
	return 0;
}
