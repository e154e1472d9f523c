/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Cartridges moving as hosts and the operator move them: EXCHANGE MEDIUM
 * (two moves or a swap, every refusal with its sense and nothing half
 * done), OPEN/CLOSE IMPORT/EXPORT ELEMENT, PREVENT ALLOW MEDIUM REMOVAL
 * locking the mail slots, the operator's import, export, load and unload
 * with the attentions hosts get, and the whole life of a cartridge: written
 * in one drive, exported, imported and read back in the other, with the
 * library restarted between the steps; and a catalog that cannot record a
 * move, a load, a session's usage or a host's first write over physical
 * copies: the host gets HARDWARE ERROR and nothing proceeds as if recorded
 * (a trigger added to the catalog is the fault). Hosts are driven through
 * smc_execute and ssc_execute only; READ ELEMENT STATUS says where things are.
 */
#include "tests/unit/scsi_host.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/vtl_error.h"
#include "vtl/library/library.h"
#include "vtl/changer/smc.h"

#define NEXUS 7
#define OTHER 8 /* a second initiator of the changer */
#define SLOT(i) (uint16_t)(HOST_SLOT0 + (i))
#define IE(i) (uint16_t)(HOST_IE0 + (i))
#define DRIVE(i) (uint16_t)(HOST_DRIVE0 + (i))
#define OPERATOR "operator"

/* READ ELEMENT STATUS descriptor, byte 2 (SMC-3). */
#define F_FULL 0x01
#define F_IMPEXP 0x02
#define F_ACCESS 0x08
#define F_INEXENAB 0x30 /* INENAB and EXENAB */

struct chg {
	struct host *h;
	struct vtl_library *lib;
	struct smc_changer *ch;
	struct scsi_cmd c;
	char err[256];
};

static struct chg g;
static uint8_t buf[8192];

static void changer_up(void)
{
	assert_int_equal(smc_create(g.lib, &g.ch), 0);
}

static int setup(void **state)
{
	if (host_setup(state) != 0)
		return -1;
	g.h = *state;
	g.lib = host_library(g.h);
	changer_up();
	return 0;
}

static int teardown(void **state)
{
	smc_destroy(g.ch);
	library_close(g.lib);
	return host_teardown(state);
}

/* Sends a CDB to the changer (d NULL) or to drive d as nexus; returns the status. */
static int send(struct ssc_drive *d, uint64_t nexus, const uint8_t *cdb, uint8_t len, enum scsi_dir dir, void *data,
		size_t xfer)
{
	struct scsi_cmd *c = &g.c;
	memset(c, 0, sizeof *c);
	memcpy(c->cdb, cdb, len);
	c->cdb_len = len;
	c->dir = dir;
	c->xfer_len = xfer;
	struct iovec iov = {data, xfer};
	c->iov = &iov;
	c->iov_cnt = data ? 1 : 0;
	c->nexus = nexus;
	if (d)
		ssc_execute(d, c);
	else
		smc_execute(g.ch, c);
	c->iov = NULL;
	return c->status;
}

static int cmd(const uint8_t *cdb, uint8_t len)
{
	return send(NULL, NEXUS, cdb, len, SCSI_DIR_NONE, NULL, 0);
}

static void expect(int status, enum scsi_sense_key key, enum scsi_asc asc)
{
	if ((int)g.c.status != status || (status == SCSI_CHECK_CONDITION && (g.c.sense.key != key || g.c.sense.asc != asc)))
		fail_msg("opcode %02Xh: status %02Xh sense %X %04X; expected %02Xh %X %04X", g.c.cdb[0], g.c.status,
			 g.c.sense.key, g.c.sense.asc, status, key, asc);
}

static void expect_field(unsigned byte, unsigned bit)
{
	expect(SCSI_CHECK_CONDITION, SK_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_CDB);
	assert_int_equal(g.c.sense.sks_field, byte);
	assert_int_equal(g.c.sense.sks_bit, bit);
}

/* TEST UNIT READY from nexus to d (NULL: the changer) must report exactly this attention, and then no other. */
static void attention(struct ssc_drive *d, uint64_t nexus, enum scsi_asc asc)
{
	uint8_t tur[6] = {0};
	send(d, nexus, tur, 6, SCSI_DIR_NONE, NULL, 0);
	expect(SCSI_CHECK_CONDITION, SK_UNIT_ATTENTION, asc);
	send(d, nexus, tur, 6, SCSI_DIR_NONE, NULL, 0);
	if (g.c.status != SCSI_GOOD && g.c.sense.key == SK_UNIT_ATTENTION)
		fail_msg("a second attention %04X after %04X", g.c.sense.asc, asc);
}

static void quiet(struct ssc_drive *d, uint64_t nexus)
{
	uint8_t tur[6] = {0};
	send(d, nexus, tur, 6, SCSI_DIR_NONE, NULL, 0);
	expect(SCSI_GOOD, 0, 0);
}

static uint32_t be(const uint8_t *p, unsigned n)
{
	uint32_t v = 0;
	for (unsigned i = 0; i < n; i++)
		v = v << 8 | p[i];
	return v;
}

/* READ ELEMENT STATUS of every element, with volume tags, into buf; returns the length. */
static size_t status_all(void)
{
	uint8_t cdb[12] = {0xB8, 0x10, 0, 0, 0xFF, 0xFF, 0, 0, (uint8_t)(sizeof buf >> 8), (uint8_t)sizeof buf};
	memset(buf, 0xEE, sizeof buf);
	send(NULL, NEXUS, cdb, 12, SCSI_DIR_IN, buf, sizeof buf);
	expect(SCSI_GOOD, 0, 0);
	return g.c.data_len;
}

/* The descriptor of element a in the answer in buf (SMC-3 pages walked as a host walks them). */
static const uint8_t *desc(uint16_t a)
{
	size_t end = 8 + be(buf + 5, 3);
	for (size_t at = 8; at < end;) {
		size_t dl = be(buf + at + 2, 2), bytes = be(buf + at + 5, 3);
		for (size_t d = at + 8; d < at + 8 + bytes; d += dl)
			if (be(buf + d, 2) == a)
				return buf + d;
		at += 8 + bytes;
	}
	fail_msg("element %u is not reported", a);
	return NULL;
}

/*
 * Element a as READ ELEMENT STATUS reports it: barcode (NULL: empty), the
 * source address (CAT_NO_ELEMENT: SVALID 0), and the byte 2 flags under mask.
 */
static void elem(uint16_t a, const char *barcode, uint16_t source, uint8_t mask, uint8_t flags)
{
	status_all();
	const uint8_t *d = desc(a);
	char tag[33];
	memset(tag, ' ', 32);
	tag[32] = 0;
	if (barcode)
		memcpy(tag, barcode, strlen(barcode));
	assert_memory_equal(d + 12, tag, 32);
	assert_int_equal(d[2] & F_FULL, barcode ? F_FULL : 0);
	assert_int_equal(d[2] & mask, flags);
	if (source == CAT_NO_ELEMENT) {
		assert_int_equal(d[9] & 0x80, 0);
	} else {
		assert_int_equal(d[9] & 0x80, 0x80);
		assert_int_equal(be(d + 10, 2), source);
	}
}

static int move(uint16_t from, uint16_t to)
{
	uint8_t cdb[12] = {0xA5, 0, 0, 0, (uint8_t)(from >> 8), (uint8_t)from, (uint8_t)(to >> 8), (uint8_t)to};
	return cmd(cdb, 12);
}

static int exchange(uint16_t src, uint16_t d1, uint16_t d2, uint8_t inv)
{
	uint8_t cdb[12] = {0xA6, 0, 0, 0, (uint8_t)(src >> 8), (uint8_t)src, (uint8_t)(d1 >> 8), (uint8_t)d1,
			   (uint8_t)(d2 >> 8), (uint8_t)d2, inv, 0};
	return cmd(cdb, 12);
}

static int open_close(uint16_t a, uint8_t action)
{
	uint8_t cdb[6] = {0x1B, 0, (uint8_t)(a >> 8), (uint8_t)a, action, 0};
	return cmd(cdb, 6);
}

static int prevent(uint64_t nexus, bool on)
{
	uint8_t cdb[6] = {0x1E, 0, 0, 0, on ? 1 : 0, 0};
	return send(NULL, nexus, cdb, 6, SCSI_DIR_NONE, NULL, 0);
}

/* The host of drive i unloads it (LOAD UNLOAD, LOAD 0), after hearing any attention the drive has for it. */
static void host_unload(unsigned i)
{
	uint8_t cdb[6] = {0x1B, 0, 0, 0, 0, 0};
	for (unsigned tries = 0; tries < 3; tries++)
		if (send(library_drive(g.lib, i, NULL), NEXUS, cdb, 6, SCSI_DIR_NONE, NULL, 0) == SCSI_GOOD ||
		    g.c.sense.key != SK_UNIT_ATTENTION)
			break;
	expect(SCSI_GOOD, 0, 0);
}

static struct ssc_status drive_status(unsigned i)
{
	struct ssc_status st;
	ssc_status(library_drive(g.lib, i, NULL), &st);
	return st;
}

/* Everything READ ELEMENT STATUS says must be the same as in snap. */
static void unchanged(const uint8_t *snap, size_t n)
{
	assert_int_equal(status_all(), n);
	assert_memory_equal(buf, snap, n);
}

/* ------------------------------------------------------------ EXCHANGE MEDIUM */

static void exchange_moves_two(void **state)
{
	(void)state;
	attention(NULL, NEXUS, ASC_POWER_ON_RESET);
	exchange(SLOT(0), SLOT(1), SLOT(4), 0);
	expect(SCSI_GOOD, 0, 0);
	elem(SLOT(0), NULL, CAT_NO_ELEMENT, F_ACCESS, F_ACCESS);
	elem(SLOT(1), "D00000L8", SLOT(0), F_ACCESS, F_ACCESS);
	elem(SLOT(4), "D00001L8", SLOT(1), F_ACCESS, F_ACCESS);
	/* A swap: the second destination is the source. */
	exchange(SLOT(1), SLOT(4), SLOT(1), 0);
	expect(SCSI_GOOD, 0, 0);
	elem(SLOT(1), "D00001L8", SLOT(4), 0, 0);
	elem(SLOT(4), "D00000L8", SLOT(1), 0, 0);
	/* The robot's own address as transport is accepted, like 0. */
	uint8_t cdb[12] = {0xA6, 0, 0, 1, 0x03, 0xE9, 0x03, 0xEC, 0x03, 0xE9, 0, 0};
	cmd(cdb, 12);
	expect(SCSI_GOOD, 0, 0);
	elem(SLOT(1), "D00000L8", SLOT(4), 0, 0);
	/* The host's own exchange tells no one of the mail slots. */
	quiet(NULL, NEXUS);
}

static void exchange_with_drives(void **state)
{
	(void)state;
	attention(NULL, NEXUS, ASC_POWER_ON_RESET);
	struct ssc_drive *d0 = library_drive(g.lib, 0, NULL);
	attention(d0, NEXUS, ASC_POWER_ON_RESET);
	move(SLOT(1), DRIVE(0));
	expect(SCSI_GOOD, 0, 0);
	attention(d0, NEXUS, ASC_NOT_READY_TO_READY);
	/* Loaded: the exchange is refused and nothing moves. */
	size_t n = status_all();
	static uint8_t snap[8192];
	memcpy(snap, buf, n);
	exchange(SLOT(0), DRIVE(0), SLOT(4), 0);
	expect(SCSI_CHECK_CONDITION, SK_ILLEGAL_REQUEST, ASC_MEDIUM_REMOVAL_PREVENTED);
	unchanged(snap, n);
	/* Unloaded by its host: the new cartridge goes in and the old one out, in one command. */
	host_unload(0);
	exchange(SLOT(0), DRIVE(0), SLOT(4), 0);
	expect(SCSI_GOOD, 0, 0);
	elem(DRIVE(0), "D00000L8", SLOT(0), F_ACCESS, 0);
	elem(SLOT(4), "D00001L8", DRIVE(0), F_ACCESS, F_ACCESS);
	struct ssc_status st = drive_status(0);
	assert_int_equal(st.state, SSC_LOADED);
	assert_string_equal(st.barcode, "D00000L8");
	attention(d0, NEXUS, ASC_NOT_READY_TO_READY);
	/* A swap with the drive: its cartridge comes out to the slot the new one came from. */
	host_unload(0);
	exchange(SLOT(4), DRIVE(0), SLOT(4), 0);
	expect(SCSI_GOOD, 0, 0);
	elem(SLOT(4), "D00000L8", DRIVE(0), 0, 0);
	elem(DRIVE(0), "D00001L8", SLOT(4), 0, 0);
	/* The catalog counts each load. */
	struct cat_cartridge cc;
	EXPECT_RC(catalog_cartridge_get(g.h->cat, "D00001L8", &cc), 0);
	assert_int_equal(cc.mounts, 2);
}

static void exchange_refusals(void **state)
{
	(void)state;
	attention(NULL, NEXUS, ASC_POWER_ON_RESET);
	/* Drive 256 holds D00000L8 unloaded, drive 257 D00001L8 threaded. */
	move(SLOT(0), DRIVE(0));
	expect(SCSI_GOOD, 0, 0);
	host_unload(0);
	move(SLOT(1), DRIVE(1));
	expect(SCSI_GOOD, 0, 0);
	size_t n = status_all();
	static uint8_t snap[8192];
	memcpy(snap, buf, n);
	/* No medium is inverted; reserved bits. */
	exchange(SLOT(2), SLOT(3), SLOT(4), 0x01);
	expect_field(10, 0);
	exchange(SLOT(2), SLOT(3), SLOT(4), 0x02);
	expect_field(10, 1);
	exchange(SLOT(2), SLOT(3), SLOT(4), 0x05);
	expect_field(10, 2);
	uint8_t bad_transport[12] = {0xA6, 0, 0x03, 0xE8, 0x03, 0xEA, 0x03, 0xEB, 0x03, 0xEC, 0, 0};
	cmd(bad_transport, 12);
	expect(SCSI_CHECK_CONDITION, SK_ILLEGAL_REQUEST, ASC_INVALID_ELEMENT_ADDRESS);
	/* Source or first destination empty; second destination full. */
	exchange(SLOT(4), SLOT(2), SLOT(5), 0);
	expect(SCSI_CHECK_CONDITION, SK_ILLEGAL_REQUEST, ASC_MEDIUM_SOURCE_EMPTY);
	exchange(SLOT(2), SLOT(4), SLOT(5), 0);
	expect(SCSI_CHECK_CONDITION, SK_ILLEGAL_REQUEST, ASC_MEDIUM_SOURCE_EMPTY);
	exchange(SLOT(2), SLOT(3), DRIVE(0), 0);
	expect(SCSI_CHECK_CONDITION, SK_ILLEGAL_REQUEST, ASC_MEDIUM_DESTINATION_FULL);
	/* Addresses: none such, the robot, the first destination equal to the source or the second. */
	exchange(SLOT(2), 999, SLOT(4), 0);
	expect(SCSI_CHECK_CONDITION, SK_ILLEGAL_REQUEST, ASC_INVALID_ELEMENT_ADDRESS);
	exchange(SLOT(2), SLOT(3), 1, 0);
	expect(SCSI_CHECK_CONDITION, SK_ILLEGAL_REQUEST, ASC_INVALID_ELEMENT_ADDRESS);
	exchange(SLOT(2), SLOT(2), SLOT(4), 0);
	expect(SCSI_CHECK_CONDITION, SK_ILLEGAL_REQUEST, ASC_INVALID_ELEMENT_ADDRESS);
	exchange(SLOT(2), SLOT(3), SLOT(3), 0);
	expect(SCSI_CHECK_CONDITION, SK_ILLEGAL_REQUEST, ASC_INVALID_ELEMENT_ADDRESS);
	/* Media a drive cannot read: in the first move (LTO-6 into the LTO-8 drive), or only in the second. */
	exchange(SLOT(2), DRIVE(0), SLOT(4), 0);
	expect(SCSI_CHECK_CONDITION, SK_ILLEGAL_REQUEST, ASC_INCOMPATIBLE_MEDIUM);
	exchange(DRIVE(0), SLOT(2), DRIVE(0), 0);
	expect(SCSI_CHECK_CONDITION, SK_ILLEGAL_REQUEST, ASC_INCOMPATIBLE_MEDIUM);
	/* A threaded cartridge: as the source, or only as the second move's (the first could be made). */
	exchange(DRIVE(1), SLOT(2), SLOT(4), 0);
	expect(SCSI_CHECK_CONDITION, SK_ILLEGAL_REQUEST, ASC_MEDIUM_REMOVAL_PREVENTED);
	exchange(DRIVE(0), DRIVE(1), SLOT(4), 0);
	expect(SCSI_CHECK_CONDITION, SK_ILLEGAL_REQUEST, ASC_MEDIUM_REMOVAL_PREVENTED);
	/* Nothing was half done: the drives hold what they held, as they held it. */
	unchanged(snap, n);
	assert_int_equal(drive_status(0).state, SSC_EJECTED);
	assert_int_equal(drive_status(1).state, SSC_LOADED);
	/* Reserved byte 1. */
	uint8_t res1[12] = {0xA6, 0x20, 0, 0, 0x03, 0xEA, 0x03, 0xEB, 0x03, 0xEC, 0, 0};
	cmd(res1, 12);
	expect_field(1, 5);
}

/* ------------------------------------------------ OPEN/CLOSE IMPORT/EXPORT ELEMENT */

static void open_and_close_the_mail_slots(void **state)
{
	(void)state;
	attention(NULL, NEXUS, ASC_POWER_ON_RESET);
	move(SLOT(0), IE(0));
	expect(SCSI_GOOD, 0, 0);
	open_close(IE(1), 0x00);
	expect(SCSI_GOOD, 0, 0);
	assert_true(library_ie_is_open(g.lib));
	/* The whole bank is open: no ACCESS, and the robot cannot reach either mail slot. */
	elem(IE(0), "D00000L8", SLOT(0), F_ACCESS | F_IMPEXP, 0);
	elem(IE(1), NULL, CAT_NO_ELEMENT, F_ACCESS, 0);
	move(IE(0), SLOT(0));
	expect(SCSI_CHECK_CONDITION, SK_ILLEGAL_REQUEST, ASC_MEDIUM_MAGAZINE_NOT_ACCESSIBLE);
	move(SLOT(1), IE(1));
	expect(SCSI_CHECK_CONDITION, SK_ILLEGAL_REQUEST, ASC_MEDIUM_MAGAZINE_NOT_ACCESSIBLE);
	exchange(SLOT(1), SLOT(2), IE(1), 0);
	expect(SCSI_CHECK_CONDITION, SK_ILLEGAL_REQUEST, ASC_MEDIUM_MAGAZINE_NOT_ACCESSIBLE);
	elem(SLOT(1), "D00001L8", CAT_NO_ELEMENT, 0, 0);
	/* Opening again is no error; the operator works in the open bank and the hosts hear of it. */
	open_close(IE(0), 0x00);
	expect(SCSI_GOOD, 0, 0);
	EXPECT_RC(library_export(g.lib, IE(0), OPERATOR, g.err, sizeof g.err), 0);
	attention(NULL, NEXUS, ASC_IE_ELEMENT_ACCESSED);
	/* Closed: the robot reaches them again. */
	open_close(IE(0), 0x01);
	expect(SCSI_GOOD, 0, 0);
	assert_false(library_ie_is_open(g.lib));
	elem(IE(0), NULL, CAT_NO_ELEMENT, F_ACCESS, F_ACCESS);
	move(SLOT(1), IE(1));
	expect(SCSI_GOOD, 0, 0);
	/* Refusals: an element that is no mail slot, reserved action codes and bits. */
	open_close(SLOT(0), 0x00);
	expect(SCSI_CHECK_CONDITION, SK_ILLEGAL_REQUEST, ASC_INVALID_ELEMENT_ADDRESS);
	open_close(1, 0x00);
	expect(SCSI_CHECK_CONDITION, SK_ILLEGAL_REQUEST, ASC_INVALID_ELEMENT_ADDRESS);
	open_close(IE(0), 0x02);
	expect_field(4, 4);
	open_close(IE(0), 0x1F);
	expect_field(4, 4);
	open_close(IE(0), 0x60);
	expect_field(4, 6);
	uint8_t res1[6] = {0x1B, 0x80, 0, HOST_IE0, 0x01, 0};
	cmd(res1, 6);
	expect_field(1, 7);
	assert_false(library_ie_is_open(g.lib));
	/* A prevent keeps a bank that holds a cartridge shut; an empty one may open. */
	prevent(NEXUS, true);
	expect(SCSI_GOOD, 0, 0);
	open_close(IE(0), 0x00);
	expect(SCSI_CHECK_CONDITION, SK_ILLEGAL_REQUEST, ASC_MEDIUM_REMOVAL_PREVENTED);
	assert_false(library_ie_is_open(g.lib));
	move(IE(1), SLOT(1));
	expect(SCSI_GOOD, 0, 0);
	open_close(IE(0), 0x00);
	expect(SCSI_GOOD, 0, 0);
	/* The host's own commands raised no IMPORT OR EXPORT ELEMENT ACCESSED. */
	quiet(NULL, NEXUS);
	quiet(NULL, NEXUS);
}

/* ----------------------------------------------------- the operator and PREVENT */

static void prevent_locks_the_mail_slots(void **state)
{
	(void)state;
	attention(NULL, NEXUS, ASC_POWER_ON_RESET);
	attention(NULL, OTHER, ASC_POWER_ON_RESET);
	move(SLOT(0), IE(0));
	expect(SCSI_GOOD, 0, 0);
	/* Two hosts prevent; the operator can neither take nor put. */
	prevent(NEXUS, true);
	prevent(OTHER, true);
	EXPECT_RC(library_export(g.lib, IE(0), OPERATOR, g.err, sizeof g.err), VTL_E_BUSY);
	assert_non_null(strstr(g.err, "prevents"));
	EXPECT_RC(library_import(g.lib, "E00000L8", IE(1), OPERATOR, g.err, sizeof g.err), VTL_E_BUSY);
	/* The robot still serves the hosts. */
	move(IE(0), SLOT(0));
	expect(SCSI_GOOD, 0, 0);
	move(SLOT(0), IE(0));
	expect(SCSI_GOOD, 0, 0);
	/* One allows: the other still prevents. */
	prevent(NEXUS, false);
	EXPECT_RC(library_export(g.lib, IE(0), OPERATOR, g.err, sizeof g.err), VTL_E_BUSY);
	/* The other logs out: nothing prevents any more. */
	smc_nexus_lost(g.ch, OTHER);
	EXPECT_RC(library_export(g.lib, IE(0), OPERATOR, g.err, sizeof g.err), 0);
	attention(NULL, NEXUS, ASC_IE_ELEMENT_ACCESSED);
	elem(IE(0), NULL, CAT_NO_ELEMENT, 0, 0);
	/* A reset clears every prevent. */
	prevent(NEXUS, true);
	EXPECT_RC(library_import(g.lib, "D00000L8", IE(0), OPERATOR, g.err, sizeof g.err), VTL_E_BUSY);
	smc_reset(g.ch);
	attention(NULL, NEXUS, ASC_POWER_ON_RESET);
	EXPECT_RC(library_import(g.lib, "D00000L8", IE(0), OPERATOR, g.err, sizeof g.err), 0);
	attention(NULL, NEXUS, ASC_IE_ELEMENT_ACCESSED);
	elem(IE(0), "D00000L8", CAT_NO_ELEMENT, F_IMPEXP, F_IMPEXP);
}

static void operator_import_and_export(void **state)
{
	(void)state;
	attention(NULL, NEXUS, ASC_POWER_ON_RESET);
	attention(NULL, OTHER, ASC_POWER_ON_RESET);
	/* A host's MOVE MEDIUM into a mail slot: no attention, IMPEXP 0 (the robot put it there). */
	move(SLOT(1), IE(0));
	expect(SCSI_GOOD, 0, 0);
	quiet(NULL, OTHER);
	elem(IE(0), "D00001L8", SLOT(1), F_IMPEXP | F_ACCESS, F_ACCESS);
	/* The operator takes it out: every initiator hears of it. */
	EXPECT_RC(library_export(g.lib, IE(0), OPERATOR, g.err, sizeof g.err), 0);
	attention(NULL, NEXUS, ASC_IE_ELEMENT_ACCESSED);
	attention(NULL, OTHER, ASC_IE_ELEMENT_ACCESSED);
	elem(IE(0), NULL, CAT_NO_ELEMENT, 0, 0);
	struct cat_cartridge cc;
	EXPECT_RC(catalog_cartridge_get(g.h->cat, "D00001L8", &cc), 0);
	assert_string_equal(cc.state, "exported");
	assert_int_equal(cc.element, CAT_NO_ELEMENT);
	/* And puts it back into the other mail slot: IMPEXP 1, no source. */
	EXPECT_RC(library_import(g.lib, "D00001L8", IE(1), OPERATOR, g.err, sizeof g.err), 0);
	attention(NULL, NEXUS, ASC_IE_ELEMENT_ACCESSED);
	elem(IE(1), "D00001L8", CAT_NO_ELEMENT, F_IMPEXP | F_ACCESS, F_IMPEXP | F_ACCESS);
	EXPECT_RC(catalog_cartridge_get(g.h->cat, "D00001L8", &cc), 0);
	assert_string_equal(cc.state, "available");
	/* A failed action raises nothing. */
	EXPECT_RC(library_import(g.lib, "D00001L8", IE(0), OPERATOR, g.err, sizeof g.err), VTL_E_EXISTS);
	EXPECT_RC(library_export(g.lib, IE(0), OPERATOR, g.err, sizeof g.err), VTL_E_SRC_EMPTY);
	quiet(NULL, NEXUS);
	/* The robot carries the imported cartridge on. */
	move(IE(1), SLOT(4));
	expect(SCSI_GOOD, 0, 0);
	elem(SLOT(4), "D00001L8", IE(1), 0, 0);
	quiet(NULL, NEXUS);
}

static void operator_load_and_unload(void **state)
{
	(void)state;
	attention(NULL, NEXUS, ASC_POWER_ON_RESET);
	struct ssc_drive *d1 = library_drive(g.lib, 1, NULL);
	attention(d1, NEXUS, ASC_POWER_ON_RESET);
	/* By barcode: the drive becomes ready and its host hears of the new medium. */
	EXPECT_RC(library_load(g.lib, "D00001L8", DRIVE(1), OPERATOR, g.err, sizeof g.err), 0);
	attention(d1, NEXUS, ASC_NOT_READY_TO_READY);
	elem(DRIVE(1), "D00001L8", SLOT(1), F_ACCESS, 0);
	/* Mail slots untouched: the changer's hosts hear nothing. */
	quiet(NULL, NEXUS);
	/* Unload while the drive's host prevents removal: refused, still loaded. */
	uint8_t pa[6] = {0x1E, 0, 0, 0, 1, 0};
	send(d1, NEXUS, pa, 6, SCSI_DIR_NONE, NULL, 0);
	expect(SCSI_GOOD, 0, 0);
	EXPECT_RC(library_unload(g.lib, DRIVE(1), CAT_NO_ELEMENT, OPERATOR, g.err, sizeof g.err), VTL_E_BUSY);
	assert_int_equal(drive_status(1).state, SSC_LOADED);
	pa[4] = 0;
	send(d1, NEXUS, pa, 6, SCSI_DIR_NONE, NULL, 0);
	/* A full destination is refused before the drive unloads. */
	EXPECT_RC(library_unload(g.lib, DRIVE(1), SLOT(2), OPERATOR, g.err, sizeof g.err), VTL_E_DST_FULL);
	assert_int_equal(drive_status(1).state, SSC_LOADED);
	/* Back to its source slot. */
	EXPECT_RC(library_unload(g.lib, DRIVE(1), CAT_NO_ELEMENT, OPERATOR, g.err, sizeof g.err), 0);
	elem(SLOT(1), "D00001L8", DRIVE(1), 0, 0);
	elem(DRIVE(1), NULL, CAT_NO_ELEMENT, F_ACCESS, F_ACCESS);
	assert_int_equal(drive_status(1).state, SSC_EMPTY);
	/* By slot address, then unloaded into a slot of the operator's choice. */
	EXPECT_RC(library_load(g.lib, "1000", DRIVE(0), OPERATOR, g.err, sizeof g.err), 0);
	EXPECT_RC(library_unload(g.lib, DRIVE(0), SLOT(5), OPERATOR, g.err, sizeof g.err), 0);
	elem(SLOT(5), "D00000L8", DRIVE(0), 0, 0);
	/* Its source taken meanwhile: the first empty slot. */
	EXPECT_RC(library_load(g.lib, "D00000L8", DRIVE(0), OPERATOR, g.err, sizeof g.err), 0);
	move(SLOT(1), SLOT(5));
	expect(SCSI_GOOD, 0, 0);
	EXPECT_RC(library_unload(g.lib, DRIVE(0), CAT_NO_ELEMENT, OPERATOR, g.err, sizeof g.err), 0);
	elem(SLOT(0), "D00000L8", DRIVE(0), 0, 0);
	/* Refusals. */
	EXPECT_RC(library_load(g.lib, "D00002L6", DRIVE(0), OPERATOR, g.err, sizeof g.err), VTL_E_INCOMPATIBLE);
	EXPECT_RC(library_load(g.lib, "NOSUCHL8", DRIVE(0), OPERATOR, g.err, sizeof g.err), VTL_E_NOTFOUND);
	EXPECT_RC(library_load(g.lib, "1004", DRIVE(0), OPERATOR, g.err, sizeof g.err), VTL_E_SRC_EMPTY);
	EXPECT_RC(library_load(g.lib, "D00000L8", SLOT(4), OPERATOR, g.err, sizeof g.err), VTL_E_INVAL);
	EXPECT_RC(library_unload(g.lib, DRIVE(0), CAT_NO_ELEMENT, OPERATOR, g.err, sizeof g.err), VTL_E_SRC_EMPTY);
	EXPECT_RC(library_unload(g.lib, SLOT(0), CAT_NO_ELEMENT, OPERATOR, g.err, sizeof g.err), VTL_E_INVAL);
	/* Loaded from a mail slot by the operator: the changer's hosts hear of it. */
	move(SLOT(0), IE(0));
	EXPECT_RC(library_load(g.lib, "10", DRIVE(0), OPERATOR, g.err, sizeof g.err), 0);
	attention(NULL, NEXUS, ASC_IE_ELEMENT_ACCESSED);
}

/* ------------------------------------------------------------- the whole life */

/*
 * Stops the changer and the library and starts them again, as a restart of
 * vtld does, with drives whose waits on another process end after wait_ms
 * ([library] recall_wait; 0: the default).
 */
static void restart_waiting(unsigned wait_ms)
{
	smc_destroy(g.ch);
	EXPECT_RC(library_close(g.lib), 0);
	struct library_options opt = {.stage_wait_ms = wait_ms};
	EXPECT_RC(library_open(g.h->cat, g.h->fx->pool, "LIB1", &opt, &g.lib, g.err, sizeof g.err), 0);
	changer_up();
	attention(NULL, NEXUS, ASC_POWER_ON_RESET);
}

static void restart(void)
{
	restart_waiting(0);
}

/* READ ELEMENT STATUS before and after a restart are the same, byte for byte. */
static void restart_keeps_everything(void)
{
	static uint8_t snap[8192];
	size_t n = status_all();
	memcpy(snap, buf, n);
	restart();
	unchanged(snap, n);
}

/* Sends a CDB with data to drive i as the test nexus. */
static int drive_cmd(unsigned i, const uint8_t *cdb, uint8_t len, enum scsi_dir dir, void *data, size_t xfer)
{
	return send(library_drive(g.lib, i, NULL), NEXUS, cdb, len, dir, data, xfer);
}

static void fill(uint8_t *p, size_t n, uint8_t seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(seed + i * 7);
}

static void write_export_import_read_back(void **state)
{
	(void)state;
	static uint8_t data[3][4000], back[4096];
	const size_t len[3] = {4000, 1234, 777};
	uint8_t cdb[12];
	attention(NULL, NEXUS, ASC_POWER_ON_RESET);
	/* Slot -> first drive; the host writes two blocks, a filemark, a block and a filemark. */
	move(SLOT(0), DRIVE(0));
	expect(SCSI_GOOD, 0, 0);
	attention(library_drive(g.lib, 0, NULL), NEXUS, ASC_POWER_ON_RESET);
	for (unsigned b = 0; b < 3; b++) {
		fill(data[b], len[b], (uint8_t)(b * 50 + 1));
		drive_cmd(0, cdb, cdb_write6(cdb, false, (uint32_t)len[b]), SCSI_DIR_OUT, data[b], len[b]);
		expect(SCSI_GOOD, 0, 0);
		if (b >= 1) {
			drive_cmd(0, cdb, cdb_wfm6(cdb, 1, false), SCSI_DIR_NONE, NULL, 0);
			expect(SCSI_GOOD, 0, 0);
		}
	}
	restart_keeps_everything(); /* loaded in the drive, before and after */
	attention(library_drive(g.lib, 0, NULL), NEXUS, ASC_POWER_ON_RESET);
	/* The host unloads; the robot takes it back to a slot. */
	host_unload(0);
	move(DRIVE(0), SLOT(4));
	expect(SCSI_GOOD, 0, 0);
	elem(SLOT(4), "D00000L8", DRIVE(0), 0, 0);
	restart_keeps_everything();
	/* Out through a mail slot. */
	move(SLOT(4), IE(0));
	expect(SCSI_GOOD, 0, 0);
	restart_keeps_everything();
	EXPECT_RC(library_export(g.lib, IE(0), OPERATOR, g.err, sizeof g.err), 0);
	attention(NULL, NEXUS, ASC_IE_ELEMENT_ACCESSED);
	elem(IE(0), NULL, CAT_NO_ELEMENT, 0, 0);
	restart_keeps_everything();
	/* Back in through the other mail slot: the host is told, and sees it imported. */
	EXPECT_RC(library_import(g.lib, "D00000L8", IE(1), OPERATOR, g.err, sizeof g.err), 0);
	attention(NULL, NEXUS, ASC_IE_ELEMENT_ACCESSED);
	elem(IE(1), "D00000L8", CAT_NO_ELEMENT, F_IMPEXP | F_ACCESS | F_INEXENAB, F_IMPEXP | F_ACCESS | F_INEXENAB);
	restart_keeps_everything();
	/* Into the other drive (LTO-9 reads LTO-8), and read back. */
	move(IE(1), DRIVE(1));
	expect(SCSI_GOOD, 0, 0);
	restart_keeps_everything();
	attention(library_drive(g.lib, 1, NULL), NEXUS, ASC_POWER_ON_RESET);
	for (unsigned b = 0; b < 3; b++) {
		memset(back, 0, sizeof back);
		drive_cmd(1, cdb, cdb_read6(cdb, true, false, sizeof back), SCSI_DIR_IN, back, sizeof back);
		if (g.c.status != SCSI_GOOD) /* a shorter block than asked, with SILI: GOOD */
			fail_msg("block %u: status %02Xh sense %X %04X", b, g.c.status, g.c.sense.key, g.c.sense.asc);
		assert_int_equal(g.c.data_len, len[b]);
		assert_memory_equal(back, data[b], len[b]);
		if (b >= 1) {
			drive_cmd(1, cdb, cdb_read6(cdb, true, false, sizeof back), SCSI_DIR_IN, back, sizeof back);
			expect(SCSI_CHECK_CONDITION, SK_NO_SENSE, ASC_FILEMARK_DETECTED);
		}
	}
	drive_cmd(1, cdb, cdb_read6(cdb, true, false, sizeof back), SCSI_DIR_IN, back, sizeof back);
	expect(SCSI_CHECK_CONDITION, SK_BLANK_CHECK, ASC_EOD_DETECTED);
	struct cat_cartridge cc;
	EXPECT_RC(catalog_cartridge_get(g.h->cat, "D00000L8", &cc), 0);
	assert_int_equal(cc.mounts, 2);
	assert_int_equal(cc.bytes_written, len[0] + len[1] + len[2]);
}

/* ---------------------------------------------------- a catalog that cannot record */

#define FAULT_ON(column) \
	"CREATE TRIGGER fault BEFORE UPDATE OF " column " ON cartridge BEGIN SELECT RAISE(ABORT, 'injected'); END;"
#define FAULT_OFF "DROP TRIGGER fault;"

static void hardware_error(void)
{
	expect(SCSI_CHECK_CONDITION, SK_HARDWARE_ERROR, ASC_INTERNAL_TARGET_FAILURE);
}

/* MOVE MEDIUM while updates of column of cartridges fail: HARDWARE ERROR, and nothing moved. */
static void move_unrecorded(uint16_t from, uint16_t to, const char *fault)
{
	size_t n = status_all();
	static uint8_t snap[8192];
	memcpy(snap, buf, n);
	host_catalog_fault(g.h, fault);
	move(from, to);
	hardware_error();
	host_catalog_fault(g.h, FAULT_OFF);
	unchanged(snap, n);
}

/* The drive could load it, but the catalog cannot say it is loaded: the move fails and nothing moved. */
static void unrecorded_load_fails_the_move(void **state)
{
	(void)state;
	attention(NULL, NEXUS, ASC_POWER_ON_RESET);
	move_unrecorded(SLOT(0), DRIVE(0), FAULT_ON("state"));
	assert_int_equal(drive_status(0).state, SSC_EMPTY);
	move(SLOT(0), DRIVE(0));
	expect(SCSI_GOOD, 0, 0);
	assert_int_equal(drive_status(0).state, SSC_LOADED);
}

/* The session's usage (its end of data) cannot be recorded: the cartridge stays in its drive. */
static void unrecorded_usage_fails_the_move_out(void **state)
{
	(void)state;
	uint8_t cdb[12], data[3000];
	attention(NULL, NEXUS, ASC_POWER_ON_RESET);
	move(SLOT(0), DRIVE(0));
	expect(SCSI_GOOD, 0, 0);
	attention(library_drive(g.lib, 0, NULL), NEXUS, ASC_POWER_ON_RESET);
	fill(data, sizeof data, 9);
	drive_cmd(0, cdb, cdb_write6(cdb, false, sizeof data), SCSI_DIR_OUT, data, sizeof data);
	expect(SCSI_GOOD, 0, 0);
	host_unload(0);
	move_unrecorded(DRIVE(0), SLOT(4), FAULT_ON("eod"));
	struct cat_cartridge cc;
	EXPECT_RC(catalog_cartridge_get(g.h->cat, "D00000L8", &cc), 0);
	assert_int_equal(cc.eod, 0);
	move(DRIVE(0), SLOT(4));
	expect(SCSI_GOOD, 0, 0);
	elem(SLOT(4), "D00000L8", DRIVE(0), 0, 0);
	EXPECT_RC(catalog_cartridge_get(g.h->cat, "D00000L8", &cc), 0);
	assert_int_equal(cc.eod, 1); /* what a recall of it must bring back */
}

static int count_good(const struct cat_copy *k, void *arg)
{
	*(unsigned *)arg += strcmp(k->state, CAT_COPY_GOOD) == 0;
	return 0;
}

/*
 * A host writes a premigrated cartridge, whose copy on tape the policy may
 * release the disk copy for: the write that cannot mark that copy stale is
 * refused, and the copy stays the cartridge's data.
 */
static void unrecorded_first_write_is_refused(void **state)
{
	(void)state;
	struct cat_ptape t = {.slot = -1, .capacity = 1u << 30};
	snprintf(t.barcode, sizeof t.barcode, "PHY001L8");
	snprintf(t.library, sizeof t.library, "sim");
	snprintf(t.state, sizeof t.state, "filling");
	EXPECT_RC(catalog_ptape_add(g.h->cat, &t), 0);
	struct cat_copy k = {.length = 0};
	snprintf(k.barcode, sizeof k.barcode, "D00000L8");
	snprintf(k.tape, sizeof k.tape, "PHY001L8");
	snprintf(k.digest, sizeof k.digest, "sha256:0");
	snprintf(k.state, sizeof k.state, CAT_COPY_GOOD);
	EXPECT_RC(catalog_copy_add(g.h->cat, &k), 0);
	EXPECT_RC(catalog_cartridge_set_cache(g.h->cat, "D00000L8", CAT_CACHE_PREMIGRATED), 0);
	attention(NULL, NEXUS, ASC_POWER_ON_RESET);
	move(SLOT(0), DRIVE(0));
	expect(SCSI_GOOD, 0, 0);
	attention(library_drive(g.lib, 0, NULL), NEXUS, ASC_POWER_ON_RESET);
	uint8_t cdb[12], data[2000];
	fill(data, sizeof data, 3);
	host_catalog_fault(g.h, FAULT_ON("cache"));
	drive_cmd(0, cdb, cdb_write6(cdb, false, sizeof data), SCSI_DIR_OUT, data, sizeof data);
	hardware_error();
	drive_cmd(0, cdb, cdb_read6(cdb, true, false, sizeof data), SCSI_DIR_IN, data, sizeof data);
	expect(SCSI_CHECK_CONDITION, SK_BLANK_CHECK, ASC_EOD_DETECTED); /* nothing was written */
	struct cat_cartridge cc;
	unsigned good = 0;
	EXPECT_RC(catalog_cartridge_get(g.h->cat, "D00000L8", &cc), 0);
	assert_int_equal(cc.cache, CAT_CACHE_PREMIGRATED);
	EXPECT_RC(catalog_copy_list(g.h->cat, "D00000L8", count_good, &good), 0);
	assert_int_equal(good, 1);
	/* Recorded at the next try: the write goes through and the copy is history. */
	host_catalog_fault(g.h, FAULT_OFF);
	drive_cmd(0, cdb, cdb_write6(cdb, false, sizeof data), SCSI_DIR_OUT, data, sizeof data);
	expect(SCSI_GOOD, 0, 0);
	EXPECT_RC(catalog_cartridge_get(g.h->cat, "D00000L8", &cc), 0);
	assert_int_equal(cc.cache, CAT_CACHE_RESIDENT);
	good = 0;
	EXPECT_RC(catalog_copy_list(g.h->cat, "D00000L8", count_good, &good), 0);
	assert_int_equal(good, 0);
}

/* A host's unload the catalog cannot record is no success. */
static void unrecorded_unload_is_a_hardware_error(void **state)
{
	(void)state;
	attention(NULL, NEXUS, ASC_POWER_ON_RESET);
	move(SLOT(0), DRIVE(0));
	expect(SCSI_GOOD, 0, 0);
	attention(library_drive(g.lib, 0, NULL), NEXUS, ASC_POWER_ON_RESET);
	host_catalog_fault(g.h, FAULT_ON("state"));
	uint8_t unload[6] = {0x1B, 0, 0, 0, 0, 0};
	send(library_drive(g.lib, 0, NULL), NEXUS, unload, 6, SCSI_DIR_NONE, NULL, 0);
	hardware_error();
	host_catalog_fault(g.h, FAULT_OFF);
}

static int the_recall(const struct cat_job *j, void *arg)
{
	*(int64_t *)arg = j->kind == CAT_JOB_RECALL ? j->id : 0;
	return j->kind == CAT_JOB_RECALL;
}

/*
 * A recall that ended (failed) without recording the cartridge's end state
 * leaves it "recalling": a drive waiting on it must not wait for ever. It
 * sees the stage failed once no recall job is left, becomes ready on what is
 * on disk, and reads what is missing as MEDIUM ERROR.
 */
static void recalling_without_a_recall_ends_the_wait(void **state)
{
	(void)state;
	EXPECT_RC(catalog_cartridge_usage(g.h->cat, "D00000L8", 8000, 8000, 4, false), 0);
	EXPECT_RC(catalog_cartridge_set_cache(g.h->cat, "D00000L8", CAT_CACHE_RECALLING), 0);
	attention(NULL, NEXUS, ASC_POWER_ON_RESET);
	move(SLOT(0), DRIVE(0));
	expect(SCSI_GOOD, 0, 0);
	struct ssc_drive *d0 = library_drive(g.lib, 0, NULL);
	uint8_t tur[6] = {0};
	send(d0, NEXUS, tur, 6, SCSI_DIR_NONE, NULL, 0);
	expect(SCSI_CHECK_CONDITION, SK_UNIT_ATTENTION, ASC_POWER_ON_RESET);
	send(d0, NEXUS, tur, 6, SCSI_DIR_NONE, NULL, 0);
	expect(SCSI_CHECK_CONDITION, SK_NOT_READY, ASC_BECOMING_READY); /* the load queued a recall */
	int64_t job = 0;
	EXPECT_RC(catalog_job_list(g.h->cat, CAT_JOB_QUEUED, the_recall, &job), 0);
	assert_true(job > 0);
	EXPECT_RC(catalog_job_update(g.h->cat, job, CAT_JOB_FAILED, 0, "the migrator could not record the stage's end"), 0);
	for (int tries = 0; tries < 200; tries++) {
		if (send(d0, NEXUS, tur, 6, SCSI_DIR_NONE, NULL, 0) == SCSI_GOOD)
			break;
		usleep(10000);
		if (g.c.sense.key == SK_UNIT_ATTENTION)
			tries--; /* the not-ready-to-ready change */
	}
	expect(SCSI_GOOD, 0, 0);
	uint8_t cdb[6], data[1024];
	drive_cmd(0, cdb, cdb_read6(cdb, true, false, sizeof data), SCSI_DIR_IN, data, sizeof data);
	expect(SCSI_CHECK_CONDITION, SK_MEDIUM_ERROR, ASC_UNRECOVERED_READ_ERROR); /* not a false end of data */
}

/*
 * A host moves a cartridge into a drive while a copy to physical tape holds
 * it (its shared lock) and does not let go within the wait: the robot's move
 * is done (GOOD, the cartridge in the drive, recorded loaded so that no new
 * copy starts), and the drive answers NOT READY, BECOMING READY (04h/01h),
 * as a drive threading a tape does, until the copy lets go; then NOT READY
 * TO READY CHANGE, and the tape works.
 */
static void move_into_a_drive_a_copy_holds(void **state)
{
	(void)state;
	enum { WAIT_MS = 200, READY_MS = 5000 };
	restart_waiting(WAIT_MS);
	struct vtl_cart_params ro = {.readonly = true};
	struct vtl_cart *copy = NULL;
	EXPECT_RC(vtl_cart_open(g.h->fx->pool, "D00000L8", &ro, &copy), 0);
	move(SLOT(0), DRIVE(0));
	expect(SCSI_GOOD, 0, 0);
	elem(DRIVE(0), "D00000L8", SLOT(0), F_ACCESS, 0); /* in the drive, which holds it threading */
	elem(SLOT(0), NULL, CAT_NO_ELEMENT, 0, 0);
	struct cat_cartridge cc;
	EXPECT_RC(catalog_cartridge_get(g.h->cat, "D00000L8", &cc), 0);
	assert_string_equal(cc.state, "loaded");
	struct ssc_drive *d = library_drive(g.lib, 0, NULL);
	attention(d, NEXUS, ASC_POWER_ON_RESET);
	uint8_t tur[6] = {0};
	send(d, NEXUS, tur, 6, SCSI_DIR_NONE, NULL, 0);
	expect(SCSI_CHECK_CONDITION, SK_NOT_READY, ASC_BECOMING_READY);
	usleep(2 * WAIT_MS * 1000); /* past the wait, still held: still becoming ready */
	send(d, NEXUS, tur, 6, SCSI_DIR_NONE, NULL, 0);
	expect(SCSI_CHECK_CONDITION, SK_NOT_READY, ASC_BECOMING_READY);
	/* The copy lets go: the drive threads the tape. */
	EXPECT_RC(vtl_cart_close(copy), 0);
	unsigned waited = 0;
	while (send(d, NEXUS, tur, 6, SCSI_DIR_NONE, NULL, 0) != SCSI_GOOD && g.c.sense.key == SK_NOT_READY) {
		expect(SCSI_CHECK_CONDITION, SK_NOT_READY, ASC_BECOMING_READY);
		assert_true(waited < READY_MS);
		usleep(10000);
		waited += 10;
	}
	expect(SCSI_CHECK_CONDITION, SK_UNIT_ATTENTION, ASC_NOT_READY_TO_READY);
	quiet(d, NEXUS);
	uint8_t cdb[6], data[512];
	fill(data, sizeof data, 9);
	drive_cmd(0, cdb, cdb_write6(cdb, false, sizeof data), SCSI_DIR_OUT, data, sizeof data);
	expect(SCSI_GOOD, 0, 0);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(exchange_moves_two), T(exchange_with_drives), T(exchange_refusals), T(open_and_close_the_mail_slots),
		T(prevent_locks_the_mail_slots), T(operator_import_and_export), T(operator_load_and_unload),
		T(write_export_import_read_back), T(unrecorded_load_fails_the_move), T(unrecorded_usage_fails_the_move_out),
		T(unrecorded_first_write_is_refused), T(unrecorded_unload_is_a_hardware_error),
		T(recalling_without_a_recall_ends_the_wait), T(move_into_a_drive_a_copy_holds),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
