/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Two hosts and a restart, over iSCSI with libiscsi as the initiators.
 *
 *   iscsi_hosts PORTAL IQN reserve   two initiators share a drive: SPC-2 RESERVE keeps the other's
 *                                    commands out (RESERVATION CONFLICT) but INQUIRY and RELEASE;
 *                                    the holder's RELEASE lets it in; then a persistent reservation
 *                                    (Write Exclusive): the other may read but not write, until
 *                                    the holder releases it; a LOGICAL UNIT RESET (task management
 *                                    over the wire) ends an SPC-2 reservation and tells every host
 *   iscsi_hosts PORTAL IQN write     loads slot 1026 into the second drive, writes two files and
 *                                    leaves the cartridge loaded (for a restart)
 *   iscsi_hosts PORTAL IQN check     after vtld restarted: the cartridge is still in that drive,
 *                                    and every block and filemark is where it was written
 *   iscsi_hosts PORTAL IQN stream    with that cartridge still loaded: goes to end of data, writes
 *                                    256 KiB blocks at about 25 MB/s for STREAM_SECONDS, then reads
 *                                    them back at that pace, saying "-- writing" and "-- reading"
 *                                    as each phase starts (the test watches vtld's status meanwhile)
 * Exit 0 when every step passed.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "tests/integration/hostlib.h"

#define CHANGER 0
#define DRIVE 2
#define SLOT 1026
#define DRIVE_ELEMENT 258
#define BLOCK 65536
#define BLOCKS 5

static struct iscsi_context *login(const char *portal, const char *iqn, const char *initiator)
{
	return host_iscsi_login(initiator, iqn, portal, DRIVE, ISCSI_HEADER_DIGEST_NONE_CRC32C);
}

#define run host_run
#define ready host_ready
#define fill(b, n, seed) host_fill(b, n, (seed) + 7)

/* Runs a command and checks its status (and sense key for CHECK CONDITION, -1: any). */
static void expect(struct iscsi_context *c, int lun, const uint8_t *cdb, int len, int dir, void *data, size_t n,
		   int status, int key, const char *what)
{
	struct scsi_task *t = run(c, lun, cdb, len, dir, data, n);
	if (t->status != status || (status == SCSI_STATUS_CHECK_CONDITION && key >= 0 && (int)t->sense.key != key))
		fail("%s: status %d sense key %d ASC/ASCQ %04X, expected status %d", what, t->status, t->sense.key,
		     t->sense.ascq, status);
	scsi_free_scsi_task(t);
	printf("   %s\n", what);
}

static const uint8_t wr6[6] = {0x0A, 0, 0x01, 0x00, 0x00, 0}; /* one 64 KiB variable block */
static const uint8_t rd6[6] = {0x08, 0, 0x01, 0x00, 0x00, 0};
static const uint8_t tur6[6] = {0};
static const uint8_t wfm1[6] = {0x10, 0, 0, 0, 1, 0};
static const uint8_t rewind6[6] = {0x01};

static void reserve(const char *portal, const char *iqn)
{
	struct iscsi_context *a = login(portal, iqn, "iqn.2026-01.org.vtl:host-a");
	struct iscsi_context *b = login(portal, iqn, "iqn.2026-01.org.vtl:host-b");
	uint8_t move[12] = {0xA5, 0, 0, 0, SLOT >> 8, SLOT & 0xFF, DRIVE_ELEMENT >> 8, DRIVE_ELEMENT & 0xFF};
	ready(a, CHANGER);
	expect(a, CHANGER, move, 12, SCSI_XFER_NONE, NULL, 0, SCSI_STATUS_GOOD, 0, "host A loads a cartridge");
	ready(a, DRIVE);
	ready(b, DRIVE);
	static uint8_t block[BLOCK], pos[20];
	fill(block, BLOCK, 1);
	uint8_t res6[6] = {0x16}, rel6[6] = {0x17}, inq[6] = {0x12, 0, 0, 0, 36, 0}, rp[10] = {0x34};
	static uint8_t buf[256];
	expect(a, DRIVE, res6, 6, SCSI_XFER_NONE, NULL, 0, SCSI_STATUS_GOOD, 0, "host A: RESERVE(6)");
	expect(b, DRIVE, wr6, 6, SCSI_XFER_WRITE, block, BLOCK, SCSI_STATUS_RESERVATION_CONFLICT, -1,
	       "host B: WRITE(6) -> RESERVATION CONFLICT");
	expect(b, DRIVE, inq, 6, SCSI_XFER_READ, buf, 36, SCSI_STATUS_GOOD, 0, "host B: INQUIRY passes");
	expect(a, DRIVE, wr6, 6, SCSI_XFER_WRITE, block, BLOCK, SCSI_STATUS_GOOD, 0, "host A: WRITE(6)");
	expect(b, DRIVE, rel6, 6, SCSI_XFER_NONE, NULL, 0, SCSI_STATUS_GOOD, 0,
	       "host B: RELEASE(6) of A's reservation is GOOD and releases nothing");
	expect(b, DRIVE, rp, 10, SCSI_XFER_READ, pos, sizeof pos, SCSI_STATUS_RESERVATION_CONFLICT, -1,
	       "host B: READ POSITION still conflicts");
	expect(a, DRIVE, rel6, 6, SCSI_XFER_NONE, NULL, 0, SCSI_STATUS_GOOD, 0, "host A: RELEASE(6)");
	expect(b, DRIVE, rp, 10, SCSI_XFER_READ, pos, sizeof pos, SCSI_STATUS_GOOD, 0, "host B: READ POSITION now");

	/* Persistent reservation, Write Exclusive: B may read, not write. */
	uint8_t reg[10] = {0x5F, 0x00, 0, 0, 0, 0, 0, 0, 24, 0}, resv[10] = {0x5F, 0x01, 0x01, 0, 0, 0, 0, 0, 24, 0};
	uint8_t relpr[10] = {0x5F, 0x02, 0x01, 0, 0, 0, 0, 0, 24, 0};
	uint8_t key_a[24] = {0}, key_as_res[24] = {0};
	key_a[15] = 0xA1;      /* SERVICE ACTION RESERVATION KEY */
	key_as_res[7] = 0xA1;  /* RESERVATION KEY */
	expect(a, DRIVE, reg, 10, SCSI_XFER_WRITE, key_a, 24, SCSI_STATUS_GOOD, 0, "host A: PR OUT REGISTER key A1");
	expect(a, DRIVE, resv, 10, SCSI_XFER_WRITE, key_as_res, 24, SCSI_STATUS_GOOD, 0,
	       "host A: PR OUT RESERVE, Write Exclusive");
	expect(b, DRIVE, rewind6, 6, SCSI_XFER_NONE, NULL, 0, SCSI_STATUS_GOOD, 0, "host B: REWIND passes");
	static uint8_t whole[BLOCK];
	expect(b, DRIVE, rd6, 6, SCSI_XFER_READ, whole, BLOCK, SCSI_STATUS_GOOD, 0, "host B: READ passes");
	expect(b, DRIVE, wfm1, 6, SCSI_XFER_NONE, NULL, 0, SCSI_STATUS_RESERVATION_CONFLICT, -1,
	       "host B: WRITE FILEMARKS -> RESERVATION CONFLICT");
	expect(a, DRIVE, relpr, 10, SCSI_XFER_WRITE, key_as_res, 24, SCSI_STATUS_GOOD, 0, "host A: PR OUT RELEASE");
	expect(b, DRIVE, tur6, 6, SCSI_XFER_NONE, NULL, 0, SCSI_STATUS_GOOD, 0, "host B: TEST UNIT READY");

	/* LOGICAL UNIT RESET over the wire: it drops A's SPC-2 reservation and every host learns of the reset. */
	expect(a, DRIVE, reg, 10, SCSI_XFER_WRITE, key_as_res, 24, SCSI_STATUS_GOOD, 0,
	       "host A: PR OUT REGISTER with key 0 unregisters (no PR left to block RESERVE)");
	expect(a, DRIVE, res6, 6, SCSI_XFER_NONE, NULL, 0, SCSI_STATUS_GOOD, 0, "host A: RESERVE(6) again");
	expect(b, DRIVE, tur6, 6, SCSI_XFER_NONE, NULL, 0, SCSI_STATUS_RESERVATION_CONFLICT, -1,
	       "host B: TEST UNIT READY conflicts");
	host_ctx = b;
	if (iscsi_task_mgmt_lun_reset_sync(b, DRIVE) != 0)
		fail("LOGICAL UNIT RESET");
	printf("   host B: LOGICAL UNIT RESET of the drive\n");
	expect(b, DRIVE, tur6, 6, SCSI_XFER_NONE, NULL, 0, SCSI_STATUS_CHECK_CONDITION, SCSI_SENSE_UNIT_ATTENTION,
	       "host B: UNIT ATTENTION (power on, reset)");
	expect(b, DRIVE, tur6, 6, SCSI_XFER_NONE, NULL, 0, SCSI_STATUS_GOOD, 0,
	       "host B: TEST UNIT READY: the reservation is gone");
	expect(a, DRIVE, tur6, 6, SCSI_XFER_NONE, NULL, 0, SCSI_STATUS_CHECK_CONDITION, SCSI_SENSE_UNIT_ATTENTION,
	       "host A: UNIT ATTENTION too");
	uint8_t unload[6] = {0x1B};
	expect(b, DRIVE, unload, 6, SCSI_XFER_NONE, NULL, 0, SCSI_STATUS_GOOD, 0, "host B: unloads");
	uint8_t back[12] = {0xA5, 0, 0, 0, DRIVE_ELEMENT >> 8, DRIVE_ELEMENT & 0xFF, SLOT >> 8, SLOT & 0xFF};
	ready(b, CHANGER);
	expect(b, CHANGER, back, 12, SCSI_XFER_NONE, NULL, 0, SCSI_STATUS_GOOD, 0,
	       "host B: the robot puts it back");
	iscsi_logout_sync(a);
	iscsi_logout_sync(b);
	iscsi_destroy_context(a);
	iscsi_destroy_context(b);
}

/* Host A logs in and has the robot load slot 1026 into the drive, which becomes ready. */
static struct iscsi_context *login_and_load(const char *portal, const char *iqn)
{
	struct iscsi_context *a = login(portal, iqn, "iqn.2026-01.org.vtl:host-a");
	uint8_t move[12] = {0xA5, 0, 0, 0, SLOT >> 8, SLOT & 0xFF, DRIVE_ELEMENT >> 8, DRIVE_ELEMENT & 0xFF};
	ready(a, CHANGER);
	expect(a, CHANGER, move, 12, SCSI_XFER_NONE, NULL, 0, SCSI_STATUS_GOOD, 0, "the robot loads slot 1026");
	ready(a, DRIVE);
	return a;
}

static void write_for_restart(const char *portal, const char *iqn)
{
	struct iscsi_context *a = login_and_load(portal, iqn);
	static uint8_t block[BLOCK];
	for (unsigned f = 0; f < 2; f++) {
		for (unsigned b = 0; b < BLOCKS; b++) {
			fill(block, BLOCK, 10 * f + b + 100);
			struct scsi_task *t = run(a, DRIVE, wr6, 6, SCSI_XFER_WRITE, block, BLOCK);
			if (t->status != SCSI_STATUS_GOOD)
				fail("write");
			scsi_free_scsi_task(t);
		}
		expect(a, DRIVE, wfm1, 6, SCSI_XFER_NONE, NULL, 0, SCSI_STATUS_GOOD, 0, "file written, filemark");
	}
	iscsi_logout_sync(a);
	iscsi_destroy_context(a);
}

static void check_after_restart(const char *portal, const char *iqn)
{
	struct iscsi_context *a = login(portal, iqn, "iqn.2026-01.org.vtl:host-c");
	ready(a, DRIVE); /* the cartridge is still in the drive: it becomes ready without a move */
	printf("   the cartridge is still loaded after the restart\n");
	/* LOCATE to file 1's third block (object 5 + 1 + 2) and read from there; then file 0 from BOT. */
	uint8_t loc[10] = {0x2B, 0, 0, 0, 0, 0, BLOCKS + 1 + 2, 0, 0, 0};
	expect(a, DRIVE, loc, 10, SCSI_XFER_NONE, NULL, 0, SCSI_STATUS_GOOD, 0, "LOCATE to file 1, block 2");
	static uint8_t block[BLOCK], back[BLOCK];
	for (unsigned b = 2; b < BLOCKS; b++) {
		struct scsi_task *t = run(a, DRIVE, rd6, 6, SCSI_XFER_READ, back, BLOCK);
		fill(block, BLOCK, 10 + b + 100);
		if (t->status != SCSI_STATUS_GOOD || memcmp(t->datain.data, block, BLOCK) != 0)
			fail("file 1 block %u after the restart", b);
		scsi_free_scsi_task(t);
	}
	expect(a, DRIVE, rd6, 6, SCSI_XFER_READ, back, BLOCK, SCSI_STATUS_CHECK_CONDITION, SCSI_SENSE_NO_SENSE,
	       "the filemark closing file 1");
	expect(a, DRIVE, rd6, 6, SCSI_XFER_READ, back, BLOCK, SCSI_STATUS_CHECK_CONDITION, SCSI_SENSE_BLANK_CHECK,
	       "then end of data");
	expect(a, DRIVE, rewind6, 6, SCSI_XFER_NONE, NULL, 0, SCSI_STATUS_GOOD, 0, "REWIND");
	for (unsigned b = 0; b < BLOCKS; b++) {
		struct scsi_task *t = run(a, DRIVE, rd6, 6, SCSI_XFER_READ, back, BLOCK);
		fill(block, BLOCK, b + 100);
		if (t->status != SCSI_STATUS_GOOD || memcmp(t->datain.data, block, BLOCK) != 0)
			fail("file 0 block %u after the restart", b);
		scsi_free_scsi_task(t);
	}
	printf("   every block reads back where it was written\n");
	iscsi_logout_sync(a);
	iscsi_destroy_context(a);
}

#define STREAM_BLOCK (256u << 10)
#define STREAM_SECONDS 5
#define STREAM_BLOCKS_PER_S 100 /* about 26 MB/s: slow enough for a loaded machine, fast enough to see */

static double seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Sleeps until block i of a paced stream that started at t0 is due. */
static void pace(double t0, unsigned i)
{
	double due = t0 + (double)i / STREAM_BLOCKS_PER_S, now = seconds();
	if (due > now) {
		double s = due - now;
		struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
		nanosleep(&ts, NULL);
	}
}

static void stream(const char *portal, const char *iqn)
{
	struct iscsi_context *a = login(portal, iqn, "iqn.2026-01.org.vtl:host-s");
	ready(a, DRIVE);
	static const uint8_t eod[6] = {0x11, 0x03}; /* SPACE(6) to end of data */
	expect(a, DRIVE, eod, 6, SCSI_XFER_NONE, NULL, 0, SCSI_STATUS_GOOD, 0, "SPACE to end of data");
	uint8_t rp[10] = {0x34};
	uint8_t pos[20];
	struct scsi_task *t = run(a, DRIVE, rp, 10, SCSI_XFER_READ, pos, sizeof pos);
	if (t->status != SCSI_STATUS_GOOD)
		fail("READ POSITION");
	uint8_t start[4];
	memcpy(start, t->datain.data + 4, 4);
	scsi_free_scsi_task(t);
	static uint8_t block[STREAM_BLOCK], back[STREAM_BLOCK];
	const uint8_t wr[6] = {0x0A, 0, STREAM_BLOCK >> 16, (STREAM_BLOCK >> 8) & 0xFF, STREAM_BLOCK & 0xFF, 0};
	const uint8_t rd[6] = {0x08, 0, STREAM_BLOCK >> 16, (STREAM_BLOCK >> 8) & 0xFF, STREAM_BLOCK & 0xFF, 0};
	const unsigned n = STREAM_SECONDS * STREAM_BLOCKS_PER_S;
	printf("-- writing\n");
	fflush(stdout);
	double t0 = seconds();
	for (unsigned i = 0; i < n; i++) {
		pace(t0, i);
		fill(block, 64, i + 1000); /* the rest stays as it was: compressible, cheap to make */
		t = run(a, DRIVE, wr, 6, SCSI_XFER_WRITE, block, STREAM_BLOCK);
		if (t->status != SCSI_STATUS_GOOD)
			fail("streaming write %u", i);
		scsi_free_scsi_task(t);
	}
	printf("   %u blocks written in %.1f s\n", n, seconds() - t0);
	uint8_t loc[10] = {0x2B, 0, 0, start[0], start[1], start[2], start[3], 0, 0, 0};
	expect(a, DRIVE, loc, 10, SCSI_XFER_NONE, NULL, 0, SCSI_STATUS_GOOD, 0, "LOCATE back to the stream's start");
	printf("-- reading\n");
	fflush(stdout);
	t0 = seconds();
	for (unsigned i = 0; i < n; i++) {
		pace(t0, i);
		t = run(a, DRIVE, rd, 6, SCSI_XFER_READ, back, STREAM_BLOCK);
		fill(block, 64, i + 1000);
		if (t->status != SCSI_STATUS_GOOD || memcmp(t->datain.data, block, 64) != 0)
			fail("streaming read %u", i);
		scsi_free_scsi_task(t);
	}
	printf("   %u blocks read back in %.1f s\n", n, seconds() - t0);
	iscsi_logout_sync(a);
	iscsi_destroy_context(a);
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: iscsi_hosts PORTAL IQN reserve|write|check|stream\n");
		return 2;
	}
	if (!strcmp(argv[3], "reserve"))
		reserve(argv[1], argv[2]);
	else if (!strcmp(argv[3], "write"))
		write_for_restart(argv[1], argv[2]);
	else if (!strcmp(argv[3], "check"))
		check_after_restart(argv[1], argv[2]);
	else if (!strcmp(argv[3], "stream"))
		stream(argv[1], argv[2]);
	else
		return 2;
	printf("iscsi_hosts %s: all steps passed\n", argv[3]);
	return 0;
}
