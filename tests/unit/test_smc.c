/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The medium changer as mtx and backup software see it: INQUIRY and
 * readiness, READ ELEMENT STATUS checked byte by byte against the SMC-3
 * layout (every element type, type 0, VOLTAG and DVCID on and off, starting
 * address and count, tiny and odd allocation lengths), MOVE MEDIUM with each
 * refusal's sense, POSITION TO ELEMENT, INITIALIZE ELEMENT STATUS and
 * PREVENT ALLOW MEDIUM REMOVAL.
 */
#include "tests/unit/scsi_host.h"

#include <string.h>

#include "common/grow.h"
#include "common/vtl_error.h"
#include "vtl/library/library.h"
#include "vtl/changer/smc.h"

#define NEXUS 7

struct chg {
	struct host *h;
	struct vtl_library *lib;
	struct smc_changer *ch;
	struct scsi_cmd c;
};

static struct chg g;
static uint8_t buf[8192];

static int setup(void **state)
{
	if (host_setup(state) != 0)
		return -1;
	g.h = *state;
	g.lib = host_library(g.h);
	if (smc_create(g.lib, &g.ch) != 0)
		return -1;
	return 0;
}

static int teardown(void **state)
{
	smc_destroy(g.ch);
	library_close(g.lib);
	return host_teardown(state);
}

static int cmd(const uint8_t *cdb, uint8_t len, enum scsi_dir dir, void *data, size_t xfer)
{
	return host_changer_cmd(g.ch, &g.c, NEXUS, cdb, len, dir, data, xfer);
}

static void expect(int status, enum scsi_sense_key key, enum scsi_asc asc)
{
	if ((int)g.c.status != status || (status == SCSI_CHECK_CONDITION && (g.c.sense.key != key || g.c.sense.asc != asc)))
		fail_msg("opcode %02Xh: status %02Xh sense %X %04X; expected %02Xh %X %04X", g.c.cdb[0], g.c.status,
			 g.c.sense.key, g.c.sense.asc, status, key, asc);
}

/* Clears the power-on attention of the test nexus. */
static void attention_seen(void)
{
	uint8_t tur[6] = {0};
	cmd(tur, 6, SCSI_DIR_NONE, NULL, 0);
	expect(SCSI_CHECK_CONDITION, SK_UNIT_ATTENTION, ASC_POWER_ON_RESET);
	cmd(tur, 6, SCSI_DIR_NONE, NULL, 0);
	expect(SCSI_GOOD, 0, 0);
}

static size_t res(uint8_t type, bool voltag, uint16_t start, uint16_t count, bool dvcid, uint32_t alloc)
{
	uint8_t cdb[12] = {0xB8, (uint8_t)((voltag ? 0x10 : 0) | type), (uint8_t)(start >> 8), (uint8_t)start,
			   (uint8_t)(count >> 8), (uint8_t)count, dvcid ? 1 : 0, (uint8_t)(alloc >> 16),
			   (uint8_t)(alloc >> 8), (uint8_t)alloc, 0, 0};
	memset(buf, 0xEE, sizeof buf);
	cmd(cdb, 12, SCSI_DIR_IN, buf, sizeof buf);
	return g.c.data_len;
}

static uint32_t be(const uint8_t *p, unsigned n)
{
	uint32_t v = 0;
	for (unsigned i = 0; i < n; i++)
		v = v << 8 | p[i];
	return v;
}

static int move(uint16_t from, uint16_t to)
{
	uint8_t cdb[12] = {0xA5, 0, 0, 0, (uint8_t)(from >> 8), (uint8_t)from, (uint8_t)(to >> 8), (uint8_t)to};
	return cmd(cdb, 12, SCSI_DIR_NONE, NULL, 0);
}

static void identity_and_readiness(void **state)
{
	(void)state;
	uint8_t inq[6] = {0x12, 0, 0, 0, 96, 0};
	cmd(inq, 6, SCSI_DIR_IN, buf, 96);
	expect(SCSI_GOOD, 0, 0);
	assert_int_equal(buf[0], 0x08);
	assert_memory_equal(buf + 8, "IBM     3573-TL         F.11", 28);
	attention_seen();
	uint8_t ies[6] = {0x07};
	cmd(ies, 6, SCSI_DIR_NONE, NULL, 0);
	expect(SCSI_GOOD, 0, 0);
	uint8_t iesr[10] = {0xE7, 0x01, 0x03, 0xE8, 0, 0, 0, 0, 2, 0};
	cmd(iesr, 10, SCSI_DIR_NONE, NULL, 0);
	expect(SCSI_GOOD, 0, 0);
}

static void request_sense(void **state)
{
	(void)state;
	uint8_t rs[6] = {0x03, 0, 0, 0, 18, 0};
	cmd(rs, 6, SCSI_DIR_IN, buf, 18);
	expect(SCSI_GOOD, 0, 0);
	assert_int_equal(buf[0], 0x70);
	assert_int_equal(buf[2], SK_UNIT_ATTENTION);
	assert_int_equal(buf[12], 0x29);
	cmd(rs, 6, SCSI_DIR_IN, buf, 18);
	assert_int_equal(buf[2], SK_NO_SENSE);
	assert_int_equal(buf[12], 0);
	rs[1] = 1;
	rs[4] = 4;
	memset(buf, 0xEE, 16);
	cmd(rs, 6, SCSI_DIR_IN, buf, 18);
	assert_int_equal(g.c.data_len, 4);
	assert_int_equal(buf[0], 0x72);
	assert_int_equal(buf[4], 0xEE);
}

static void element_status_all_types(void **state)
{
	(void)state;
	attention_seen();
	size_t n = res(0, true, 0, 0xFFFF, false, sizeof buf);
	expect(SCSI_GOOD, 0, 0);
	/* Header: first address 1 (the robot), 11 elements, bytes after the header. */
	assert_int_equal(be(buf, 2), 1);
	assert_int_equal(be(buf + 2, 2), 11);
	assert_int_equal(be(buf + 5, 3), n - 8);
	/* Four pages, in address order: transport (1), mail slots (10, 11), drives (256, 257), slots (1000..). */
	static const struct { uint8_t type; unsigned count; uint16_t first; } pages[] = {
		{1, 1, 1}, {3, 2, HOST_IE0}, {4, 2, HOST_DRIVE0}, {2, 6, HOST_SLOT0}};
	size_t at = 8;
	for (unsigned p = 0; p < 4; p++) {
		assert_int_equal(buf[at], pages[p].type);
		assert_int_equal(buf[at + 1], 0x80); /* PVOLTAG */
		assert_int_equal(be(buf + at + 2, 2), 12 + 36);
		assert_int_equal(be(buf + at + 5, 3), pages[p].count * 48);
		assert_int_equal(be(buf + at + 8, 2), pages[p].first);
		at += 8 + pages[p].count * 48;
	}
	assert_int_equal(at, n);
	/* Slot 1000 holds D00000L8: FULL and ACCESS, volume tag space padded, no source known. */
	uint8_t *slot = buf + n - 6 * 48;
	assert_int_equal(be(slot, 2), 1000);
	assert_int_equal(slot[2], 0x09);
	assert_int_equal(slot[9] & 0x80, 0);
	assert_memory_equal(slot + 12, "D00000L8                        ", 32);
	/* Slot 1004 is empty: ACCESS only, volume tag all spaces. */
	uint8_t *empty = slot + 4 * 48;
	assert_int_equal(be(empty, 2), 1004);
	assert_int_equal(empty[2], 0x08);
	assert_memory_equal(empty + 12, "                                ", 32);
	/* The drives: empty, accessible, LU VALID with their LUNs 1 and 2. */
	uint8_t *drv = buf + 8 + (8 + 48) + (8 + 2 * 48) + 8;
	assert_int_equal(be(drv, 2), HOST_DRIVE0);
	assert_int_equal(drv[2], 0x08);
	assert_int_equal(drv[6], 0x11);
	assert_int_equal(drv[48 + 6], 0x12);
	/* Mail slots: import and export enabled, empty. */
	uint8_t *ie = buf + 8 + (8 + 48) + 8;
	assert_int_equal(ie[2], 0x38);
	/* Without VOLTAG the descriptors are 12 bytes. */
	n = res(0, false, 0, 0xFFFF, false, sizeof buf);
	assert_int_equal(n, 8 + 4 * 8 + 11 * 12);
	assert_int_equal(buf[9], 0x00);
	/* One type at a time. */
	for (uint8_t t = 1; t <= 4; t++) {
		static const unsigned count[5] = {0, 1, 6, 2, 2};
		n = res(t, false, 0, 0xFFFF, false, sizeof buf);
		expect(SCSI_GOOD, 0, 0);
		assert_int_equal(be(buf + 2, 2), count[t]);
		assert_int_equal(buf[8], t);
		assert_int_equal(n, 8 + 8 + count[t] * 12);
	}
	/* A type code above 4. */
	res(5, false, 0, 10, false, sizeof buf);
	expect(SCSI_CHECK_CONDITION, SK_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_CDB);
	assert_int_equal(g.c.sense.sks_field, 1);
}

static void dvcid_and_range(void **state)
{
	(void)state;
	attention_seen();
	size_t n = res(4, true, 0, 0xFFFF, true, sizeof buf);
	expect(SCSI_GOOD, 0, 0);
	const unsigned dl = 12 + 36 + 4 + 56;
	assert_int_equal(be(buf + 8 + 2, 2), dl);
	assert_int_equal(n, 8 + 8 + 2 * dl);
	uint8_t *id = buf + 16 + 12 + 36;
	assert_int_equal(id[0], 0x02); /* ASCII */
	assert_int_equal(id[1], 0x01); /* T10 vendor identification */
	assert_int_equal(id[3], 56);
	assert_memory_equal(id + 4, "IBM     ULT3580-TD8     DRV0000 ", 32);
	/* DVCID only changes data transfer descriptors. */
	n = res(2, false, 0, 0xFFFF, true, sizeof buf);
	assert_int_equal(be(buf + 8 + 2, 2), 12);
	/* Starting address and count. */
	n = res(2, false, 1002, 2, false, sizeof buf);
	assert_int_equal(be(buf, 2), 1002);
	assert_int_equal(be(buf + 2, 2), 2);
	assert_int_equal(n, 8 + 8 + 2 * 12);
	assert_int_equal(be(buf + 16, 2), 1002);
	assert_int_equal(be(buf + 28, 2), 1003);
	n = res(0, false, 300, 3, false, sizeof buf);
	assert_int_equal(be(buf, 2), 1000);
	assert_int_equal(be(buf + 2, 2), 3);
	/* Nothing at or above the start. */
	n = res(2, false, 2000, 5, false, sizeof buf);
	expect(SCSI_GOOD, 0, 0);
	assert_int_equal(be(buf + 2, 2), 0);
	assert_int_equal(n, 8);
}

static void allocation_lengths(void **state)
{
	(void)state;
	attention_seen();
	static uint8_t full[8192];
	size_t total = res(0, true, 0, 0xFFFF, true, sizeof buf);
	memcpy(full, buf, total);
	const uint32_t allocs[] = {0, 1, 7, 8, 9, 15, 16, 17, 63, 101, (uint32_t)total - 1, (uint32_t)total + 100};
	for (unsigned i = 0; i < VTL_ARRAY_SIZE(allocs); i++) {
		size_t n = res(0, true, 0, 0xFFFF, true, allocs[i]);
		expect(SCSI_GOOD, 0, 0);
		size_t want = allocs[i] < total ? allocs[i] : total;
		assert_int_equal(n, want);
		/* Cut, never changed: the header still counts the whole answer. */
		assert_memory_equal(buf, full, want);
		assert_int_equal(buf[want], 0xEE);
	}
}

static void move_medium(void **state)
{
	(void)state;
	attention_seen();
	move(HOST_SLOT0, HOST_DRIVE0);
	expect(SCSI_GOOD, 0, 0);
	size_t n = res(4, true, 0, 0xFFFF, false, sizeof buf);
	(void)n;
	uint8_t *drv = buf + 16;
	assert_int_equal(drv[2], 0x01);       /* FULL, and no ACCESS: the drive has threaded it */
	assert_int_equal(drv[9], 0x80);       /* SVALID */
	assert_int_equal(be(drv + 10, 2), HOST_SLOT0);
	assert_memory_equal(drv + 12, "D00000L8", 8);
	/* Refusals, each with its own sense. */
	move(HOST_SLOT0, HOST_SLOT0 + 4);
	expect(SCSI_CHECK_CONDITION, SK_ILLEGAL_REQUEST, ASC_MEDIUM_SOURCE_EMPTY);
	move(HOST_SLOT0 + 1, HOST_SLOT0 + 2);
	expect(SCSI_CHECK_CONDITION, SK_ILLEGAL_REQUEST, ASC_MEDIUM_DESTINATION_FULL);
	move(HOST_SLOT0 + 1, 999);
	expect(SCSI_CHECK_CONDITION, SK_ILLEGAL_REQUEST, ASC_INVALID_ELEMENT_ADDRESS);
	move(HOST_DRIVE0, HOST_SLOT0);
	expect(SCSI_CHECK_CONDITION, SK_ILLEGAL_REQUEST, ASC_MEDIUM_REMOVAL_PREVENTED);
	move(HOST_SLOT0 + 2, HOST_DRIVE0 + 1); /* LTO-6 into the LTO-9 drive */
	expect(SCSI_CHECK_CONDITION, SK_ILLEGAL_REQUEST, ASC_INCOMPATIBLE_MEDIUM);
	uint8_t bad_transport[12] = {0xA5, 0, 0x03, 0xE8, 0x03, 0xE9, 0x03, 0xEC};
	cmd(bad_transport, 12, SCSI_DIR_NONE, NULL, 0);
	expect(SCSI_CHECK_CONDITION, SK_ILLEGAL_REQUEST, ASC_INVALID_ELEMENT_ADDRESS);
	uint8_t invert[12] = {0xA5, 0, 0, 1, 0x03, 0xE9, 0x03, 0xEC, 0, 0, 1};
	cmd(invert, 12, SCSI_DIR_NONE, NULL, 0);
	expect(SCSI_CHECK_CONDITION, SK_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_CDB);
	/* Once the drive has ejected it, the robot takes it back. */
	struct ssc_drive *d = library_drive(g.lib, 0, NULL);
	EXPECT_RC(ssc_eject(d), 0);
	res(4, false, HOST_DRIVE0, 1, false, sizeof buf);
	assert_int_equal(buf[16 + 2], 0x09); /* FULL and ACCESS */
	move(HOST_DRIVE0, HOST_SLOT0 + 5);
	expect(SCSI_GOOD, 0, 0);
	res(2, true, HOST_SLOT0 + 5, 1, false, sizeof buf);
	assert_memory_equal(buf + 16 + 12, "D00000L8", 8);
	assert_int_equal(be(buf + 16 + 10, 2), HOST_DRIVE0);
}

static void position_and_prevent(void **state)
{
	(void)state;
	attention_seen();
	uint8_t pos[10] = {0x2B, 0, 0, 1, 0x03, 0xE8};
	cmd(pos, 10, SCSI_DIR_NONE, NULL, 0);
	expect(SCSI_GOOD, 0, 0);
	pos[5] = 0xF0;
	cmd(pos, 10, SCSI_DIR_NONE, NULL, 0);
	expect(SCSI_CHECK_CONDITION, SK_ILLEGAL_REQUEST, ASC_INVALID_ELEMENT_ADDRESS);
	uint8_t pa[6] = {0x1E, 0, 0, 0, 1, 0};
	cmd(pa, 6, SCSI_DIR_NONE, NULL, 0);
	expect(SCSI_GOOD, 0, 0);
	pa[4] = 3;
	cmd(pa, 6, SCSI_DIR_NONE, NULL, 0);
	expect(SCSI_CHECK_CONDITION, SK_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_CDB);
	/* An unknown opcode. */
	uint8_t unk[6] = {0x08};
	cmd(unk, 6, SCSI_DIR_NONE, NULL, 0);
	expect(SCSI_CHECK_CONDITION, SK_ILLEGAL_REQUEST, ASC_INVALID_OPCODE);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(identity_and_readiness), T(request_sense), T(element_status_all_types), T(dvcid_and_range), T(allocation_lengths),
		T(move_medium), T(position_and_prevent),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
