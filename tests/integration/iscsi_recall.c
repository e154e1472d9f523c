/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A backup host for the recall tests, over iSCSI with libiscsi:
 *
 *   iscsi_recall HOST:PORT IQN write SLOT DRIVE LUN BLOCKS SEED
 *       loads the cartridge in storage element SLOT into data transfer
 *       element DRIVE (LUN), writes BLOCKS blocks of 256 KiB (content from
 *       SEED), a filemark, rewinds, unloads and puts it back in SLOT.
 *   iscsi_recall HOST:PORT IQN read SLOT DRIVE LUN BLOCKS SEED
 *       loads it as a restore does, waits through NOT READY / becoming
 *       ready, reads the BLOCKS blocks and the filemark back and compares
 *       every byte, then unloads and puts it back; prints how many times the
 *       drive said "becoming ready" and when (ms after the MOVE MEDIUM) it
 *       became ready, the first block arrived and the last one did; with
 *       PROGRESS_FILE in $RECALL_PROGRESS it writes "first" there once the
 *       first block is in.
 *   iscsi_recall HOST:PORT IQN append SLOT DRIVE LUN BLOCKS SEED
 *       loads it, spaces to end of data and writes one more block (a host
 *       appending to a cartridge), then unloads and puts it back.

 *
 * With RECALL_LBP=1 in the environment, write and read use logical block
 * protection (Control Data Protection mode page, CRC32C): every block is
 * written with its CRC32C appended under LBP_W and read back under LBP_R,
 * where the CRC the drive appends must be the block's.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tests/integration/hostlib.h"

#define BLOCK (256u << 10)
#define CHANGER 0
#define READY_WAIT_MS 180000 /* a recall of a few tens of MB from the simulated library takes seconds */

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void run_ok(struct iscsi_context *c, int lun, const uint8_t *cdb, int len, int dir, void *data, size_t n,
		   const char *what)
{
	struct scsi_task *t = host_run(c, lun, cdb, len, dir, data, n);
	if (t->status != SCSI_STATUS_GOOD)
		fail("%s: status %d, sense %d/%02X%02X", what, t->status, t->sense.key, t->sense.ascq >> 8,
		     t->sense.ascq & 0xFF);
	scsi_free_scsi_task(t);
}

static void move(struct iscsi_context *c, unsigned from, unsigned to)
{
	uint8_t cdb[12] = {0xA5, 0, 0, 0, from >> 8, from & 0xFF, to >> 8, to & 0xFF};
	run_ok(c, CHANGER, cdb, 12, SCSI_XFER_NONE, NULL, 0, "MOVE MEDIUM");
}

/* TEST UNIT READY until GOOD; returns how many times it said NOT READY / becoming ready (04h/01h). */
static unsigned wait_ready(struct iscsi_context *c, int lun)
{
	uint8_t tur[6] = {0};
	unsigned becoming = 0;
	for (uint64_t until = now_ms() + READY_WAIT_MS;;) {
		struct scsi_task *t = host_run(c, lun, tur, 6, SCSI_XFER_NONE, NULL, 0);
		int st = t->status, key = t->sense.key, ascq = t->sense.ascq;
		scsi_free_scsi_task(t);
		if (st == SCSI_STATUS_GOOD)
			return becoming;
		if (key == SCSI_SENSE_NOT_READY && ascq == 0x0401)
			becoming++;
		else if (key != SCSI_SENSE_UNIT_ATTENTION)
			fail("TEST UNIT READY: sense key %d, ASC/ASCQ %04X", key, ascq);
		if (now_ms() > until)
			fail("the drive did not become ready within %d s", READY_WAIT_MS / 1000);
		usleep(10000);
	}
}

static void unload_and_return(struct iscsi_context *c, int lun, unsigned drive, unsigned slot)
{
	uint8_t rewind[6] = {0x01}, unload[6] = {0x1B};
	run_ok(c, lun, rewind, 6, SCSI_XFER_NONE, NULL, 0, "REWIND");
	run_ok(c, lun, unload, 6, SCSI_XFER_NONE, NULL, 0, "LOAD UNLOAD (unload)");
	move(c, drive, slot);
}

static void cdb6(uint8_t *cdb, uint8_t op, uint8_t flags, uint32_t len)
{
	memset(cdb, 0, 6);
	cdb[0] = op;
	cdb[1] = flags;
	cdb[2] = (uint8_t)(len >> 16);
	cdb[3] = (uint8_t)(len >> 8);
	cdb[4] = (uint8_t)len;
}

/* MODE SELECT(10) of page 0Ah/F0h: CRC32C with LBP_W (write) or LBP_R (read). */
static void select_lbp(struct iscsi_context *c, int lun, bool write)
{
	uint8_t list[8 + 32] = {0};
	list[3] = 0x10; /* buffered mode */
	uint8_t *p = list + 8;
	p[0] = 0x4A;
	p[1] = 0xF0;
	p[3] = 0x1C;
	p[4] = 0x02; /* CRC32C */
	p[5] = 4;
	p[6] = write ? 0x80 : 0x40;
	uint8_t cdb[10] = {0x55, 0x10, 0, 0, 0, 0, 0, 0, sizeof list, 0};
	run_ok(c, lun, cdb, 10, SCSI_XFER_WRITE, list, sizeof list, "MODE SELECT(10) of logical block protection");
}

/* CRC32C (Castagnoli, reflected polynomial 82F63B78h), bit by bit: the host's own, not the target's code. */
static uint32_t host_crc32c(const uint8_t *p, size_t n)
{
	uint32_t crc = 0xFFFFFFFFu;
	for (size_t i = 0; i < n; i++) {
		crc ^= p[i];
		for (int k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0x82F63B78u & (0u - (crc & 1)));
	}
	return ~crc;
}

/* Appends the CRC32C of the block's n bytes, least significant byte first. */
static void put_crc(uint8_t *b, size_t n)
{
	uint32_t crc = host_crc32c(b, n);
	for (int i = 0; i < 4; i++)
		b[n + i] = (uint8_t)(crc >> (8 * i));
}

int main(int argc, char **argv)
{
	if (argc != 9) {
		fprintf(stderr, "usage: iscsi_recall HOST:PORT IQN write|read|append SLOT DRIVE LUN BLOCKS SEED\n");
		return 2;
	}
	const char *mode = argv[3];
	unsigned slot = (unsigned)atoi(argv[4]), drive = (unsigned)atoi(argv[5]);
	int lun = atoi(argv[6]);
	unsigned blocks = (unsigned)atoi(argv[7]), seed = (unsigned)atoi(argv[8]);
	struct iscsi_context *c = iscsi_create_context("iqn.2026-01.org.vtl:recall-host");
	if (!c)
		fail("no iSCSI context");
	host_ctx = c;
	char url[512];
	snprintf(url, sizeof url, "iscsi://%s/%s/0", argv[1], argv[2]);
	struct iscsi_url *u = iscsi_parse_full_url(c, url);
	if (!u)
		fail("bad URL %s", url);
	iscsi_set_targetname(c, u->target);
	iscsi_set_session_type(c, ISCSI_SESSION_NORMAL);
	if (iscsi_full_connect_sync(c, u->portal, u->lun) != 0)
		fail("login to %s", url);
	iscsi_destroy_url(u);
	host_ready(c, CHANGER);
	const char *lbp_env = getenv("RECALL_LBP");
	bool lbp = lbp_env && !strcmp(lbp_env, "1");
	uint32_t pi = lbp ? 4 : 0;
	uint8_t *b = malloc(BLOCK + 4), *want = malloc(BLOCK + 4);
	if (!b || !want)
		fail("out of memory");
	uint8_t cdb[6];
	uint64_t t0 = now_ms();
	move(c, slot, drive);
	if (!strcmp(mode, "write") || !strcmp(mode, "append")) {
		wait_ready(c, lun);
		if (!strcmp(mode, "append")) {
			uint8_t space[6] = {0x11, 0x03}; /* SPACE to end of data */
			run_ok(c, lun, space, 6, SCSI_XFER_NONE, NULL, 0, "SPACE to end of data");
		}
		if (lbp)
			select_lbp(c, lun, true);
		for (unsigned i = 0; i < blocks; i++) {
			host_fill(b, BLOCK, seed + i);
			if (lbp)
				put_crc(b, BLOCK);
			cdb6(cdb, 0x0A, 0, BLOCK + pi);
			run_ok(c, lun, cdb, 6, SCSI_XFER_WRITE, b, BLOCK + pi, "WRITE(6)");
		}
		if (lbp) {
			/* A block whose CRC is wrong: HARDWARE ERROR, LOGICAL BLOCK GUARD CHECK FAILED, nothing written. */
			b[BLOCK] ^= 1;
			cdb6(cdb, 0x0A, 0, BLOCK + pi);
			struct scsi_task *t = host_run(c, lun, cdb, 6, SCSI_XFER_WRITE, b, BLOCK + pi);
			if (t->status != SCSI_STATUS_CHECK_CONDITION || t->sense.key != 0x04 || t->sense.ascq != 0x1001)
				fail("a WRITE with a wrong CRC: status %d, sense %d/%04X, expected HARDWARE ERROR 10h/01h",
				     t->status, t->sense.key, t->sense.ascq);
			scsi_free_scsi_task(t);
		}
		cdb6(cdb, 0x10, 0, 1);
		run_ok(c, lun, cdb, 6, SCSI_XFER_NONE, NULL, 0, "WRITE FILEMARKS(6)");
		unload_and_return(c, lun, drive, slot);
		printf("%s: %u blocks of %u bytes%s and a filemark\n", mode, blocks, BLOCK, lbp ? " with CRC32C" : "");
	} else if (!strcmp(mode, "read")) {
		unsigned becoming = wait_ready(c, lun);
		uint64_t t_ready = now_ms() - t0, t_first = 0;
		const char *progress = getenv("RECALL_PROGRESS");
		if (lbp)
			select_lbp(c, lun, false);
		for (unsigned i = 0; i < blocks; i++) {
			cdb6(cdb, 0x08, 0, BLOCK + pi);
			struct scsi_task *t = host_run(c, lun, cdb, 6, SCSI_XFER_READ, NULL, BLOCK + pi);
			if (t->status != SCSI_STATUS_GOOD || t->datain.size != (int)(BLOCK + pi))
				fail("READ(6) of block %u: status %d, sense %d/%04X, %d bytes", i, t->status, t->sense.key,
				     t->sense.ascq, t->datain.size);
			host_fill(want, BLOCK, seed + i);
			if (lbp)
				put_crc(want, BLOCK);
			if (memcmp(t->datain.data, want, BLOCK) != 0)
				fail("block %u differs from what was written", i);
			if (lbp && memcmp(t->datain.data + BLOCK, want + BLOCK, pi) != 0)
				fail("block %u: the drive's CRC is not the block's", i);
			scsi_free_scsi_task(t);
			if (i == 0) {
				t_first = now_ms() - t0;
				if (progress) {
					FILE *f = fopen(progress, "w");
					if (f) {
						fputs("first\n", f);
						fclose(f);
					}
				}
			}
		}
		uint64_t t_last = now_ms() - t0;
		cdb6(cdb, 0x08, 0, BLOCK + pi);
		struct scsi_task *t = host_run(c, lun, cdb, 6, SCSI_XFER_READ, NULL, BLOCK + pi);
		if (t->status != SCSI_STATUS_CHECK_CONDITION || !(t->sense.ascq == 0x0001))
			fail("the read after the last block did not stop at the filemark (status %d, sense %d/%04X)",
			     t->status, t->sense.key, t->sense.ascq);
		scsi_free_scsi_task(t);
		unload_and_return(c, lun, drive, slot);
		printf("read: %u blocks bit-exact%s; becoming ready %u times; ready after %llu ms, first block after %llu ms, "
		       "last block after %llu ms\n",
		       blocks, lbp ? ", each with its CRC32C" : "", becoming, (unsigned long long)t_ready, (unsigned long long)t_first,
		       (unsigned long long)t_last);
	} else {
		fail("unknown mode %s", mode);
	}
	free(b);
	free(want);
	iscsi_logout_sync(c);
	iscsi_destroy_context(c);
	return 0;
}
