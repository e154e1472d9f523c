/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A host that encrypts what it writes, as a backup application with drive
 * encryption does, over iSCSI with libiscsi: it moves the cartridge in slot
 * 1025 into the first drive, reads the encryption capabilities, sets a key
 * with SET DATA ENCRYPTION (scope all nexuses, ENCRYPT and DECRYPT, a
 * U-KAD), writes blocks that carry a marker and a filemark, rewinds, sees
 * NEXT BLOCK ENCRYPTION STATUS say "encrypted, able to decrypt" with its
 * U-KAD, reads everything back byte for byte; then turns encryption off and
 * reads the first block again: DATA PROTECT, UNABLE TO DECRYPT DATA
 * (74h/01h), and the status says "cannot decrypt". It unloads the cartridge
 * and moves it back; the script then looks for the marker in the pool.
 * With "read" (after the cartridge was copied to physical tape and its disk
 * copy released), it loads it again, waits while the drive is becoming ready
 * (the recall), sets the same key and reads every block back byte for byte.
 *
 * Usage: iscsi_crypt PORTAL TARGET-IQN MARKER write|read
 * Exit 0 when every step passed; each step prints a line.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tests/integration/hostlib.h"

#define CHANGER 0
#define DRIVE 1
#define SLOT 1025
#define DRIVE_ELEMENT 257
#define BLOCKS 16
#define BLOCK_LEN 65536

/* SPC-4 SECURITY PROTOCOL IN/OUT, protocol 20h (SSC-4 8.5). */
#define OP_SP_IN 0xA2
#define OP_SP_OUT 0xB5
#define SP_TAPE 0x20
#define PAGE_CAPS 0x0010
#define PAGE_SDE 0x0010
#define PAGE_NBES 0x0021
#define NBES_CAN_DECRYPT 0x5
#define NBES_CANNOT_DECRYPT 0x6
#define SK_DATA_PROTECT 0x7
#define ASCQ_UNABLE_TO_DECRYPT 0x7401
#define UKAD "integration key 1"
#define SK_NOT_READY 0x2
#define READY_WAIT_S 60

static struct iscsi_context *iscsi;
static void fill(unsigned i, const char *marker);
static uint8_t block[BLOCK_LEN], back[BLOCK_LEN];

static struct scsi_task *run(int lun, const uint8_t *cdb, int cdb_len, int dir, void *data, size_t len)
{
	return host_run(iscsi, lun, cdb, cdb_len, dir, data, len);
}

static struct scsi_task *good(int lun, const uint8_t *cdb, int cdb_len, int dir, void *data, size_t len)
{
	return host_good(iscsi, lun, cdb, cdb_len, dir, data, len);
}

static void move(uint16_t from, uint16_t to)
{
	host_move(iscsi, CHANGER, from, to);
}

/* SECURITY PROTOCOL IN page pg of protocol 20h into buf (cap bytes); returns the bytes received. */
static size_t spin(uint16_t pg, uint8_t *buf, size_t cap)
{
	uint8_t cdb[12] = {OP_SP_IN, SP_TAPE, (uint8_t)(pg >> 8), (uint8_t)pg, 0, 0, 0, 0, (uint8_t)(cap >> 8), (uint8_t)cap};
	struct scsi_task *t = good(DRIVE, cdb, 12, SCSI_XFER_READ, buf, cap);
	size_t n = (size_t)t->datain.size < cap ? (size_t)t->datain.size : cap;
	memcpy(buf, t->datain.data, n);
	scsi_free_scsi_task(t);
	return n;
}

/* SET DATA ENCRYPTION: scope all nexuses; encrypt and decrypt with key and the U-KAD, or both off. */
static void set_encryption(bool on)
{
	uint8_t p[64 + sizeof UKAD] = {0};
	p[0] = 0x00, p[1] = 0x10;
	p[4] = 2 << 5;         /* SCOPE: ALL I_T NEXUS */
	p[6] = on ? 2 : 0;     /* ENCRYPT */
	p[7] = on ? 2 : 0;     /* DECRYPT */
	p[8] = 1;              /* algorithm index 1 */
	size_t n = 20;
	if (on) {
		p[19] = 32;
		for (int i = 0; i < 32; i++)
			p[20 + i] = (uint8_t)(0xA0 + i);
		n += 32;
		p[n + 3] = (uint8_t)(sizeof UKAD - 1); /* U-KAD descriptor */
		memcpy(p + n + 4, UKAD, sizeof UKAD - 1);
		n += 4 + sizeof UKAD - 1;
	}
	p[3] = (uint8_t)(n - 4);
	uint8_t cdb[12] = {OP_SP_OUT, SP_TAPE, 0x00, PAGE_SDE, 0, 0, 0, 0, 0, (uint8_t)n};
	scsi_free_scsi_task(good(DRIVE, cdb, 12, SCSI_XFER_WRITE, p, n));
}

/* TEST UNIT READY until GOOD: unit attentions, and NOT READY while a recall brings the cartridge back. */
static void wait_ready(void)
{
	uint8_t tur[6] = {0};
	for (int i = 0; i < READY_WAIT_S * 10; i++) {
		struct scsi_task *t = run(DRIVE, tur, 6, SCSI_XFER_NONE, NULL, 0);
		int st = t->status, key = t->sense.key;
		scsi_free_scsi_task(t);
		if (st == SCSI_STATUS_GOOD)
			return;
		if (key != SCSI_SENSE_UNIT_ATTENTION && key != SK_NOT_READY)
			fail("TEST UNIT READY: status %d, sense key %d", st, key);
		usleep(100000);
	}
	fail("the drive did not become ready within %d s", READY_WAIT_S);
}

/* Reads the BLOCKS blocks from the position and compares each with what write wrote. */
static void read_back(const char *marker)
{
	uint8_t r[6] = {0x08, 0, (uint8_t)(BLOCK_LEN >> 16), (uint8_t)(BLOCK_LEN >> 8), (uint8_t)BLOCK_LEN, 0};
	for (unsigned i = 0; i < BLOCKS; i++) {
		struct scsi_task *t = good(DRIVE, r, 6, SCSI_XFER_READ, back, sizeof back);
		fill(i, marker);
		if ((size_t)t->datain.size != BLOCK_LEN || memcmp(t->datain.data, block, BLOCK_LEN) != 0)
			fail("block %u does not read back as written", i);
		scsi_free_scsi_task(t);
	}
}

static void fill(unsigned i, const char *marker)
{
	host_fill(block, sizeof block, i + 1);
	memcpy(block + 1000, marker, strlen(marker));
}

int main(int argc, char **argv)
{
	if (argc != 5 || (strcmp(argv[4], "write") != 0 && strcmp(argv[4], "read") != 0)) {
		fprintf(stderr, "usage: iscsi_crypt PORTAL TARGET-IQN MARKER write|read\n");
		return 2;
	}
	bool writing = strcmp(argv[4], "write") == 0;
	const char *marker = argv[3];
	iscsi = host_iscsi_login("iqn.2026-01.org.vtl:crypt-host", argv[2], argv[1], CHANGER, ISCSI_HEADER_DIGEST_NONE_CRC32C);
	host_ready(iscsi, CHANGER);
	move(SLOT, DRIVE_ELEMENT);
	wait_ready();
	printf("-- MOVE MEDIUM %u -> %u, the drive is ready\n", SLOT, DRIVE_ELEMENT);
	uint8_t rew[6] = {0x01, 0, 0, 0, 0, 0};
	if (!writing) {
		set_encryption(true);
		read_back(marker);
		printf("-- recalled: read %u blocks back with the key, byte for byte\n", BLOCKS);
		goto unload;
	}

	uint8_t pg[512];
	if (spin(PAGE_CAPS, pg, sizeof pg) < 44 || pg[20] != 1 || (pg[30] << 8 | pg[31]) != 32)
		fail("data encryption capabilities: no algorithm 1 with 32-byte keys");
	set_encryption(true);
	printf("-- capabilities: algorithm 1, 32-byte keys; SET DATA ENCRYPTION with a key and U-KAD \"%s\"\n", UKAD);

	for (unsigned i = 0; i < BLOCKS; i++) {
		fill(i, marker);
		uint8_t w[6] = {0x0A, 0, (uint8_t)(BLOCK_LEN >> 16), (uint8_t)(BLOCK_LEN >> 8), (uint8_t)BLOCK_LEN, 0};
		scsi_free_scsi_task(good(DRIVE, w, 6, SCSI_XFER_WRITE, block, sizeof block));
	}
	uint8_t wfm[6] = {0x10, 0, 0, 0, 1, 0};
	scsi_free_scsi_task(good(DRIVE, wfm, 6, SCSI_XFER_NONE, NULL, 0));
	scsi_free_scsi_task(good(DRIVE, rew, 6, SCSI_XFER_NONE, NULL, 0));
	printf("-- wrote %u blocks of %u bytes and a filemark, rewound\n", BLOCKS, BLOCK_LEN);

	size_t n = spin(PAGE_NBES, pg, sizeof pg);
	if (n < 20 || (pg[12] & 0x0F) != NBES_CAN_DECRYPT || memcmp(pg + 20, UKAD, sizeof UKAD - 1) != 0)
		fail("next block encryption status: %02Xh, not encrypted-and-able-to-decrypt with its U-KAD", pg[12]);
	printf("-- next block: encrypted, able to decrypt, U-KAD \"%s\"\n", UKAD);
	read_back(marker);
	printf("-- read %u blocks back with the key, byte for byte\n", BLOCKS);

	set_encryption(false);
	scsi_free_scsi_task(good(DRIVE, rew, 6, SCSI_XFER_NONE, NULL, 0));
	uint8_t r[6] = {0x08, 0, (uint8_t)(BLOCK_LEN >> 16), (uint8_t)(BLOCK_LEN >> 8), (uint8_t)BLOCK_LEN, 0};
	struct scsi_task *t = run(DRIVE, r, 6, SCSI_XFER_READ, back, sizeof back);
	if (t->status != SCSI_STATUS_CHECK_CONDITION || t->sense.key != SK_DATA_PROTECT ||
	    t->sense.ascq != ASCQ_UNABLE_TO_DECRYPT)
		fail("READ without the key: status %d, sense key %d, ASC/ASCQ %04X; expected DATA PROTECT 74h/01h",
		     t->status, t->sense.key, t->sense.ascq);
	scsi_free_scsi_task(t);
	if (spin(PAGE_NBES, pg, sizeof pg) < 16 || (pg[12] & 0x0F) != NBES_CANNOT_DECRYPT)
		fail("next block encryption status without the key: %02Xh", pg[12]);
	printf("-- without the key: DATA PROTECT, UNABLE TO DECRYPT DATA (74h/01h); status: cannot decrypt\n");

unload:;
	host_unload(iscsi, CHANGER, DRIVE, DRIVE_ELEMENT, SLOT);
	printf("-- unloaded and moved back to slot %u\n", SLOT);
	iscsi_logout_sync(iscsi);
	iscsi_destroy_context(iscsi);
	printf("   iscsi_crypt %s: all steps passed\n", argv[4]);
	return 0;
}
