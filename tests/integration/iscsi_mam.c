/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A host that keeps notes in a cartridge's medium auxiliary memory, as
 * backup software does, over iSCSI with libiscsi: it moves the cartridge in
 * slot 1025 into the first drive and, with "write", sets two host attributes
 * (WRITE ATTRIBUTE) and clears one of them again; with "check", after the
 * cartridge was unloaded and vtld restarted, reads them back (READ
 * ATTRIBUTE): the one set is there byte for byte, the one cleared is gone,
 * and the drive's own LOAD COUNT has counted both loads. Either way it
 * unloads the cartridge and moves it back.
 *
 * Usage: iscsi_mam PORTAL TARGET-IQN write|check
 * Exit 0 when every step passed; each step prints a line.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "tests/integration/hostlib.h"

#define CHANGER 0
#define DRIVE 1
#define SLOT 1025
#define DRIVE_ELEMENT 257

/* SPC-4 6.16 / 6.40: READ ATTRIBUTE (16 bytes) and WRITE ATTRIBUTE (16 bytes). */
#define OP_READ_ATTRIBUTE 0x8C
#define OP_WRITE_ATTRIBUTE 0x8D
#define RA_VALUES 0x00 /* service action: ATTRIBUTE VALUES */
#define ATTR_LIST_HEADER 4 /* AVAILABLE DATA / PARAMETER DATA LENGTH */
#define ATTR_HEADER 5      /* identifier (2), READ ONLY + FORMAT (1), length (2) */
#define ATTR_ASCII 0x01
/* SPC-4 7.4.2: the attributes used. */
#define A_LOAD_COUNT 0x0003
#define A_APP_VENDOR 0x0800 /* ASCII, 8 bytes */
#define A_APP_NAME 0x0801   /* ASCII, 32 bytes */
#define APP_VENDOR_LEN 8
#define APP_NAME_LEN 32
#define ATTR_ALLOC 8192

static const char app_vendor[APP_VENDOR_LEN + 1] = "VTLTEST ";
static const char app_name[APP_NAME_LEN + 1] = "vtl integration MAM check       ";

static struct iscsi_context *iscsi;

static struct scsi_task *good(int lun, const uint8_t *cdb, int cdb_len, int dir, void *data, size_t len)
{
	return host_good(iscsi, lun, cdb, cdb_len, dir, data, len);
}

static void move(uint16_t from, uint16_t to)
{
	host_move(iscsi, CHANGER, from, to);
}

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* WRITE ATTRIBUTE of one ASCII attribute: len bytes of val (len 0: the attribute is cleared). */
static void write_attr(uint16_t id, const char *val, uint16_t len)
{
	uint8_t list[ATTR_LIST_HEADER + ATTR_HEADER + APP_NAME_LEN] = {0};
	size_t n = ATTR_LIST_HEADER + ATTR_HEADER + len;
	put32(list, (uint32_t)(n - ATTR_LIST_HEADER));
	list[4] = (uint8_t)(id >> 8);
	list[5] = (uint8_t)id;
	list[6] = ATTR_ASCII;
	list[7] = (uint8_t)(len >> 8);
	list[8] = (uint8_t)len;
	memcpy(list + ATTR_LIST_HEADER + ATTR_HEADER, val, len);
	uint8_t cdb[16] = {OP_WRITE_ATTRIBUTE};
	put32(cdb + 10, (uint32_t)n);
	scsi_free_scsi_task(good(DRIVE, cdb, 16, SCSI_XFER_WRITE, list, n));
}

/*
 * READ ATTRIBUTE, ATTRIBUTE VALUES from id on: copies the value of the first
 * attribute returned whose identifier is id (cap bytes at most) to out and
 * returns its length, or -1 when the drive has no attribute id.
 */
static int read_attr(uint16_t id, uint8_t *out, size_t cap)
{
	static uint8_t b[ATTR_ALLOC];
	uint8_t cdb[16] = {OP_READ_ATTRIBUTE, RA_VALUES, 0, 0, 0, 0, 0, 0, (uint8_t)(id >> 8), (uint8_t)id};
	put32(cdb + 10, ATTR_ALLOC);
	struct scsi_task *t = good(DRIVE, cdb, 16, SCSI_XFER_READ, b, sizeof b);
	int found = -1;
	size_t size = (size_t)t->datain.size;
	const uint8_t *d = t->datain.data;
	if (size >= ATTR_LIST_HEADER + ATTR_HEADER && ((uint16_t)(d[4] << 8 | d[5])) == id) {
		size_t len = (size_t)(d[7] << 8 | d[8]);
		if (ATTR_LIST_HEADER + ATTR_HEADER + len > size || len > cap)
			fail("attribute %04Xh: %zu bytes, more than the %zu returned or expected", id, len, size);
		memcpy(out, d + ATTR_LIST_HEADER + ATTR_HEADER, len);
		found = (int)len;
	}
	scsi_free_scsi_task(t);
	return found;
}

static uint64_t load_count(void)
{
	uint8_t v[8];
	int n = read_attr(A_LOAD_COUNT, v, sizeof v);
	if (n <= 0)
		fail("no LOAD COUNT attribute");
	uint64_t c = 0;
	for (int i = 0; i < n; i++)
		c = c << 8 | v[i];
	return c;
}

int main(int argc, char **argv)
{
	if (argc != 4 || (strcmp(argv[3], "write") != 0 && strcmp(argv[3], "check") != 0)) {
		fprintf(stderr, "usage: iscsi_mam PORTAL TARGET-IQN write|check\n");
		return 2;
	}
	bool writing = strcmp(argv[3], "write") == 0;
	iscsi = host_iscsi_login("iqn.2026-01.org.vtl:mam-host", argv[2], argv[1], CHANGER, ISCSI_HEADER_DIGEST_NONE_CRC32C);
	host_ready(iscsi, CHANGER);
	move(SLOT, DRIVE_ELEMENT);
	host_ready(iscsi, DRIVE);
	printf("-- MOVE MEDIUM %u -> %u, the drive is ready\n", SLOT, DRIVE_ELEMENT);

	uint8_t v[APP_NAME_LEN];
	uint64_t loads = load_count();
	if (writing) {
		if (loads != 1)
			fail("LOAD COUNT of a new cartridge's first load is %llu, expected 1", (unsigned long long)loads);
		write_attr(A_APP_VENDOR, app_vendor, APP_VENDOR_LEN);
		write_attr(A_APP_NAME, app_name, APP_NAME_LEN);
		if (read_attr(A_APP_VENDOR, v, sizeof v) != APP_VENDOR_LEN || memcmp(v, app_vendor, APP_VENDOR_LEN) != 0)
			fail("APPLICATION VENDOR does not read back as written");
		write_attr(A_APP_VENDOR, "", 0);
		printf("-- WRITE ATTRIBUTE: APPLICATION NAME set, APPLICATION VENDOR set and cleared (LOAD COUNT 1)\n");
	} else {
		if (loads != 2)
			fail("LOAD COUNT at the second load is %llu, expected 2", (unsigned long long)loads);
		int n = read_attr(A_APP_NAME, v, sizeof v);
		if (n != APP_NAME_LEN || memcmp(v, app_name, APP_NAME_LEN) != 0)
			fail("APPLICATION NAME after the unload and the restart: %d bytes, not as written", n);
		if (read_attr(A_APP_VENDOR, v, sizeof v) >= 0)
			fail("APPLICATION VENDOR was cleared but reads back after the unload and the restart");
		printf("-- READ ATTRIBUTE: APPLICATION NAME as written, APPLICATION VENDOR gone, LOAD COUNT 2\n");
	}

	host_unload(iscsi, CHANGER, DRIVE, DRIVE_ELEMENT, SLOT);
	printf("-- unloaded and moved back to slot %u\n", SLOT);
	iscsi_logout_sync(iscsi);
	iscsi_destroy_context(iscsi);
	printf("   iscsi_mam %s: all steps passed\n", argv[3]);
	return 0;
}
