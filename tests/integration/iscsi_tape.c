/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A host over iSCSI, with libiscsi as the initiator: logs in to vtld, reads
 * the changer's elements, moves a cartridge into a drive, writes a backup of
 * three files of 256 KiB blocks separated by filemarks, rewinds, spaces and
 * reads everything back, checking every byte, the filemarks, the residual of
 * a short read and end of data; then unloads and moves the cartridge back.
 *
 * Usage: iscsi_tape PORTAL TARGET-IQN   (e.g. 127.0.0.1:3260 iqn.2026-01.org.vtl:x)
 * Exit 0 when every step passed; each step prints a line.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "tests/integration/hostlib.h"

#define BLOCK (256u << 10)
#define BLOCKS_PER_FILE 8
#define FILES 3
#define CHANGER 0
#define DRIVE 1
#define SLOT 1025
#define DRIVE_ELEMENT 257

static struct iscsi_context *iscsi;

static struct scsi_task *run(int lun, const uint8_t *cdb, int cdb_len, int dir, void *data, size_t len)
{
	return host_run(iscsi, lun, cdb, cdb_len, dir, data, len);
}

/* Runs a CDB that must end GOOD. */
static struct scsi_task *good(int lun, const uint8_t *cdb, int cdb_len, int dir, void *data, size_t len)
{
	struct scsi_task *t = run(lun, cdb, cdb_len, dir, data, len);
	if (t->status != SCSI_STATUS_GOOD)
		fail("command %02Xh on LUN %d: status %d, sense key %d, ASC/ASCQ %04X", cdb[0], lun, t->status,
		     t->sense.key, t->sense.ascq);
	return t;
}

static void ready(int lun)
{
	host_ready(iscsi, lun);
}

#define fill host_fill

static void put24(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 16);
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)v;
}

static void move(uint16_t from, uint16_t to)
{
	uint8_t cdb[12] = {0xA5, 0, 0, 0, (uint8_t)(from >> 8), (uint8_t)from, (uint8_t)(to >> 8), (uint8_t)to};
	scsi_free_scsi_task(good(CHANGER, cdb, 12, SCSI_XFER_NONE, NULL, 0));
}

static void barcode_at(uint16_t a, char out[HOST_BARCODE_LEN + 1])
{
	host_barcode_at(iscsi, CHANGER, a, out);
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: iscsi_tape PORTAL TARGET-IQN\n");
		return 2;
	}
	iscsi = host_iscsi_login("iqn.2026-01.org.vtl:test-host", argv[2], argv[1], CHANGER, ISCSI_HEADER_DIGEST_NONE_CRC32C);
	printf("-- logged in to %s\n", argv[2]);

	ready(CHANGER);
	char bc[9];
	barcode_at(SLOT, bc);
	if (!bc[0])
		fail("slot %u is empty", SLOT);
	printf("-- READ ELEMENT STATUS: slot %u holds %s\n", SLOT, bc);
	move(SLOT, DRIVE_ELEMENT);
	char in_drive[9];
	barcode_at(DRIVE_ELEMENT, in_drive);
	if (strcmp(in_drive, bc) != 0)
		fail("drive element shows '%s' after MOVE MEDIUM, expected %s", in_drive, bc);
	printf("-- MOVE MEDIUM %u -> %u\n", SLOT, DRIVE_ELEMENT);
	ready(DRIVE);

	static uint8_t block[BLOCK], back[BLOCK];
	uint8_t wr[6] = {0x0A, 0}, wfm[6] = {0x10, 0, 0, 0, 1, 0}, rew[6] = {0x01};
	put24(wr + 2, BLOCK);
	for (unsigned f = 0; f < FILES; f++) {
		for (unsigned b = 0; b < BLOCKS_PER_FILE; b++) {
			fill(block, BLOCK, f * 100 + b);
			scsi_free_scsi_task(good(DRIVE, wr, 6, SCSI_XFER_WRITE, block, BLOCK));
		}
		scsi_free_scsi_task(good(DRIVE, wfm, 6, SCSI_XFER_NONE, NULL, 0));
	}
	printf("-- wrote %u files of %u blocks of %u bytes with filemarks\n", FILES, BLOCKS_PER_FILE, BLOCK);
	scsi_free_scsi_task(good(DRIVE, rew, 6, SCSI_XFER_NONE, NULL, 0));

	/* File 2 first: SPACE 2 filemarks, then read it. */
	uint8_t space[6] = {0x11, 1, 0, 0, 2, 0};
	scsi_free_scsi_task(good(DRIVE, space, 6, SCSI_XFER_NONE, NULL, 0));
	uint8_t rd[6] = {0x08, 0};
	put24(rd + 2, BLOCK);
	for (unsigned b = 0; b < BLOCKS_PER_FILE; b++) {
		struct scsi_task *t = good(DRIVE, rd, 6, SCSI_XFER_READ, back, BLOCK);
		fill(block, BLOCK, 200 + b);
		if (t->datain.size != BLOCK || memcmp(t->datain.data, block, BLOCK) != 0)
			fail("file 2 block %u reads back wrong", b);
		scsi_free_scsi_task(t);
	}
	printf("-- SPACE 2 filemarks, file 2 reads back byte for byte\n");
	/* Past the last block: the filemark, reported as CHECK CONDITION, NO SENSE, FILEMARK. */
	struct scsi_task *t = run(DRIVE, rd, 6, SCSI_XFER_READ, back, BLOCK);
	if (t->status != SCSI_STATUS_CHECK_CONDITION || t->sense.key != SCSI_SENSE_NO_SENSE || t->sense.ascq != 0x0001)
		fail("reading the filemark: status %d key %d ASC/ASCQ %04X", t->status, t->sense.key, t->sense.ascq);
	scsi_free_scsi_task(t);
	/* Then end of data: BLANK CHECK. */
	t = run(DRIVE, rd, 6, SCSI_XFER_READ, back, BLOCK);
	if (t->status != SCSI_STATUS_CHECK_CONDITION || t->sense.key != SCSI_SENSE_BLANK_CHECK || t->sense.ascq != 0x0005)
		fail("reading at end of data: status %d key %d ASC/ASCQ %04X", t->status, t->sense.key, t->sense.ascq);
	scsi_free_scsi_task(t);
	printf("-- filemark and end of data reported with their sense\n");

	/* Back to BOT; file 0 and file 1 in order, one block read with a larger request (ILI, underflow). */
	scsi_free_scsi_task(good(DRIVE, rew, 6, SCSI_XFER_NONE, NULL, 0));
	for (unsigned f = 0; f < 2; f++) {
		for (unsigned b = 0; b < BLOCKS_PER_FILE; b++) {
			struct scsi_task *r = good(DRIVE, rd, 6, SCSI_XFER_READ, back, BLOCK);
			fill(block, BLOCK, f * 100 + b);
			if (memcmp(r->datain.data, block, BLOCK) != 0)
				fail("file %u block %u reads back wrong", f, b);
			scsi_free_scsi_task(r);
		}
		t = run(DRIVE, rd, 6, SCSI_XFER_READ, back, BLOCK);
		scsi_free_scsi_task(t);
	}
	uint8_t rd_big[6] = {0x08, 0};
	static uint8_t big[BLOCK * 2];
	put24(rd_big + 2, BLOCK * 2);
	t = run(DRIVE, rd_big, 6, SCSI_XFER_READ, big, BLOCK * 2);
	/* (libiscsi keeps the SCSI Response's sense as the task's data then: the bytes arrived, the residual says how many.) */
	if (t->status != SCSI_STATUS_CHECK_CONDITION || t->sense.key != SCSI_SENSE_NO_SENSE ||
	    t->residual_status != SCSI_RESIDUAL_UNDERFLOW || t->residual != BLOCK)
		fail("a short block: status %d, sense key %d, residual %d/%zu", t->status, t->sense.key,
		     (int)t->residual_status, t->residual);
	scsi_free_scsi_task(t);
	printf("-- files 0 and 1 read back; a larger request gives ILI with the underflow residual\n");

	/* READ POSITION (long form): object and file numbers. */
	uint8_t rp[10] = {0x34, 0x06};
	static uint8_t pos[32];
	t = good(DRIVE, rp, 10, SCSI_XFER_READ, pos, sizeof pos);
	uint64_t obj = 0, file = 0;
	for (int i = 0; i < 8; i++) {
		obj = obj << 8 | t->datain.data[8 + i];
		file = file << 8 | t->datain.data[16 + i];
	}
	if (obj != 2 * (BLOCKS_PER_FILE + 1) + 1 || file != 2)
		fail("READ POSITION: object %llu file %llu", (unsigned long long)obj, (unsigned long long)file);
	scsi_free_scsi_task(t);
	printf("-- READ POSITION: object %llu in file %llu\n", (unsigned long long)obj, (unsigned long long)file);

	/* Unload, and the robot puts the cartridge back. */
	uint8_t unload[6] = {0x1B, 0, 0, 0, 0, 0};
	scsi_free_scsi_task(good(DRIVE, unload, 6, SCSI_XFER_NONE, NULL, 0));
	move(DRIVE_ELEMENT, SLOT);
	barcode_at(SLOT, in_drive);
	if (strcmp(in_drive, bc) != 0)
		fail("slot %u shows '%s' after the move back", SLOT, in_drive);
	printf("-- unloaded and moved back to slot %u\n", SLOT);
	iscsi_logout_sync(iscsi);
	iscsi_destroy_context(iscsi);
	printf("iscsi_tape: all steps passed\n");
	return 0;
}
