/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The changer's pages as a host sees them: MODE SENSE 1Dh/1Eh/1Fh byte by
 * byte for the standard library in both CDB forms, page control, subpages,
 * allocation lengths (zero, short, odd), MODE SELECT that may only repeat
 * what MODE SENSE reports, LOG SENSE/SELECT with the library's TapeAlert
 * page, the INQUIRY VPD pages, and every refusal with its field pointer.
 */
#include "tests/unit/scsi_host.h"

#include <stdio.h>
#include <string.h>

#include "vtl/library/library.h"
#include "vtl/changer/smc.h"
#include "vtl/changer/smc_internal.h"

#include "common/grow.h"

#define NEXUS 7
#define OTHER 8
#define BUF 1024

struct chg {
	struct host *h;
	struct vtl_library *lib;
	struct smc_changer *ch;
	struct scsi_cmd c;
};

static struct chg g;
static uint8_t buf[BUF];

/* What MODE SENSE reports for the standard library (scsi_host.h): the robot at 1, slots 1000-1005, mail slots 10-11, drives 256-257. */
static const uint8_t page_1d[20] = {0x1D, 0x12, 0x00, 0x01, 0x00, 0x01, 0x03, 0xE8, 0x00, 0x06,
				    0x00, 0x0A, 0x00, 0x02, 0x01, 0x00, 0x00, 0x02, 0x00, 0x00};
static const uint8_t page_1e[4] = {0x1E, 0x02, 0x00, 0x00};
/* StorDT, StorI/E, StorST; nothing from the robot; every holder to every holder, for moves and exchanges. */
static const uint8_t page_1f[20] = {0x1F, 0x12, 0x0E, 0x00, 0x00, 0x0E, 0x0E, 0x0E, 0x00, 0x00,
				    0x00, 0x00, 0x00, 0x0E, 0x0E, 0x0E, 0x00, 0x00, 0x00, 0x00};
#define ALL_PAGES_LEN (sizeof page_1d + sizeof page_1e + sizeof page_1f)

static int cmd_on(uint64_t nexus, const uint8_t *cdb, uint8_t len, enum scsi_dir dir, void *data, size_t xfer)
{
	return host_changer_cmd(g.ch, &g.c, nexus, cdb, len, dir, data, xfer);
}

static int cmd(const uint8_t *cdb, uint8_t len, enum scsi_dir dir, void *data, size_t xfer)
{
	return cmd_on(NEXUS, cdb, len, dir, data, xfer);
}

static void chg_good(void)
{
	if (g.c.status != SCSI_GOOD)
		fail_msg("opcode %02Xh: status %02Xh sense %X %04X", g.c.cdb[0], g.c.status, g.c.sense.key, g.c.sense.asc);
}

static void chg_check(enum scsi_sense_key key, enum scsi_asc asc)
{
	if (g.c.status != SCSI_CHECK_CONDITION || g.c.sense.key != key || g.c.sense.asc != asc)
		fail_msg("opcode %02Xh: status %02Xh sense %X %04X; expected %X %04X", g.c.cdb[0], g.c.status,
			 g.c.sense.key, g.c.sense.asc, key, asc);
}

/* ILLEGAL REQUEST with the field pointer at byte and bit of the CDB (cdb) or of the parameter list. */
static void expect_field(bool cdb, uint16_t byte, int bit)
{
	chg_check(SK_ILLEGAL_REQUEST, cdb ? ASC_INVALID_FIELD_IN_CDB : ASC_INVALID_FIELD_IN_PARAMETERS);
	assert_true(g.c.sense.sks_valid);
	assert_int_equal(g.c.sense.sks_cdb, cdb);
	assert_int_equal(g.c.sense.sks_field, byte);
	assert_true(g.c.sense.sks_bit_valid);
	assert_int_equal(g.c.sense.sks_bit, bit);
}

/* Clears the power-on attention of nexus. */
static void attention_seen(uint64_t nexus)
{
	uint8_t tur[6] = {0};
	cmd_on(nexus, tur, 6, SCSI_DIR_NONE, NULL, 0);
	chg_check(SK_UNIT_ATTENTION, ASC_POWER_ON_RESET);
	cmd_on(nexus, tur, 6, SCSI_DIR_NONE, NULL, 0);
	chg_good();
}

static int setup(void **state)
{
	if (host_setup(state) != 0)
		return -1;
	g.h = *state;
	g.lib = host_library(g.h);
	if (smc_create(g.lib, &g.ch) != 0)
		return -1;
	attention_seen(NEXUS);
	return 0;
}

static int teardown(void **state)
{
	smc_destroy(g.ch);
	library_close(g.lib);
	return host_teardown(state);
}

/* MODE SENSE(6) or (10); returns the bytes received (buf is filled with EEh first). */
static size_t mode_sense(bool six, uint8_t byte1, uint8_t pc_page, uint8_t subpage, uint16_t alloc)
{
	uint8_t cdb[10] = {six ? 0x1A : 0x5A, byte1, pc_page, subpage};
	if (six) {
		cdb[4] = (uint8_t)alloc;
	} else {
		cdb[7] = (uint8_t)(alloc >> 8);
		cdb[8] = (uint8_t)alloc;
	}
	memset(buf, 0xEE, sizeof buf);
	cmd(cdb, six ? 6 : 10, SCSI_DIR_IN, buf, sizeof buf);
	return g.c.data_len;
}

/* MODE SELECT(6) or (10) of len bytes of data with byte 1 as given (PF is 10h). */
static int mode_select(bool six, uint8_t byte1, const uint8_t *data, uint16_t len)
{
	uint8_t cdb[10] = {six ? 0x15 : 0x55, byte1};
	uint8_t out[BUF];
	if (len)
		memcpy(out, data, len);
	if (six) {
		cdb[4] = (uint8_t)len;
	} else {
		cdb[7] = (uint8_t)(len >> 8);
		cdb[8] = (uint8_t)len;
	}
	return cmd(cdb, six ? 6 : 10, len ? SCSI_DIR_OUT : SCSI_DIR_NONE, len ? out : NULL, len);
}

/* Checks the mode parameter header of an answer of total bytes: no medium type, device-specific parameter or block descriptors. */
static void expect_header(bool six, size_t total)
{
	if (six) {
		assert_int_equal(buf[0], total - 1);
		assert_int_equal(buf[1], 0);
		assert_int_equal(buf[2], 0);
		assert_int_equal(buf[3], 0);
	} else {
		assert_int_equal(buf[0] << 8 | buf[1], total - 2);
		for (int i = 2; i < 8; i++)
			assert_int_equal(buf[i], 0);
	}
}

static void mode_pages_six_and_ten(void **state)
{
	(void)state;
	for (int six = 1; six >= 0; six--) {
		size_t hdr = six ? 4 : 8;
		/* All pages, with and without DBD: the same, as a changer has no block descriptors. */
		for (uint8_t dbd = 0; dbd <= 0x08; dbd += 0x08) {
			size_t n = mode_sense(six, dbd, 0x3F, 0, 255);
			chg_good();
			assert_int_equal(n, hdr + ALL_PAGES_LEN);
			expect_header(six, n);
			assert_memory_equal(buf + hdr, page_1d, sizeof page_1d);
			assert_memory_equal(buf + hdr + sizeof page_1d, page_1e, sizeof page_1e);
			assert_memory_equal(buf + hdr + sizeof page_1d + sizeof page_1e, page_1f, sizeof page_1f);
			assert_int_equal(buf[n], 0xEE);
		}
		/* Each page alone. */
		const struct {
			uint8_t code;
			const uint8_t *page;
			size_t len;
		} one[] = {{0x1D, page_1d, sizeof page_1d}, {0x1E, page_1e, sizeof page_1e}, {0x1F, page_1f, sizeof page_1f}};
		for (size_t i = 0; i < 3; i++) {
			size_t n = mode_sense(six, 0, one[i].code, 0, 255);
			chg_good();
			assert_int_equal(n, hdr + one[i].len);
			expect_header(six, n);
			assert_memory_equal(buf + hdr, one[i].page, one[i].len);
		}
	}
}

static void mode_page_control(void **state)
{
	(void)state;
	/* Changeable: every page with its header and nothing else set. */
	size_t n = mode_sense(true, 0, 0x40 | 0x3F, 0, 255);
	chg_good();
	assert_int_equal(n, 4 + ALL_PAGES_LEN);
	expect_header(true, n);
	static const uint8_t changeable[ALL_PAGES_LEN] = {0x1D, 0x12, [20] = 0x1E, 0x02, [24] = 0x1F, 0x12};
	assert_memory_equal(buf + 4, changeable, sizeof changeable);
	/* Default: the current values (the element map is the configuration's). */
	n = mode_sense(false, 0, 0x80 | 0x1D, 0, 255);
	chg_good();
	assert_int_equal(n, 8 + sizeof page_1d);
	assert_memory_equal(buf + 8, page_1d, sizeof page_1d);
	/* Saved values: none. */
	mode_sense(true, 0, 0xC0 | 0x1F, 0, 255);
	chg_check(SK_ILLEGAL_REQUEST, ASC_SAVING_NOT_SUPPORTED);
	assert_int_equal(g.c.data_len, 0);
}

static void mode_subpages_and_unknown_pages(void **state)
{
	(void)state;
	/* Subpage FFh: every subpage, that is the page itself; 3Fh/FFh is every page. */
	size_t n = mode_sense(true, 0, 0x3F, 0xFF, 255);
	chg_good();
	assert_int_equal(n, 4 + ALL_PAGES_LEN);
	n = mode_sense(false, 0, 0x1E, 0xFF, 255);
	chg_good();
	assert_int_equal(n, 8 + sizeof page_1e);
	assert_memory_equal(buf + 8, page_1e, sizeof page_1e);
	/* A subpage the page does not have: byte 3. */
	mode_sense(true, 0, 0x1D, 0x01, 255);
	expect_field(true, 3, 7);
	mode_sense(false, 0, 0x3F, 0x01, 255);
	expect_field(true, 3, 7);
	/* Pages a changer does not have (the drive's control, informational exceptions): byte 2 bit 5. */
	static const uint8_t unknown[] = {0x00, 0x0A, 0x1C, 0x20};
	for (size_t i = 0; i < sizeof unknown; i++) {
		mode_sense(i % 2, 0, unknown[i], 0, 255);
		expect_field(true, 2, 5);
	}
}

static void mode_allocation_lengths(void **state)
{
	(void)state;
	uint8_t whole[BUF];
	size_t n6 = mode_sense(true, 0, 0x3F, 0, 255);
	memcpy(whole, buf, n6);
	/* Zero: nothing, and GOOD. */
	assert_int_equal(mode_sense(true, 0, 0x3F, 0, 0), 0);
	chg_good();
	assert_int_equal(buf[0], 0xEE);
	/* Short and odd: the data are cut, never changed; the length field still gives the whole. */
	static const uint16_t cuts[] = {1, 3, 7, 25, 47};
	for (size_t i = 0; i < VTL_ARRAY_SIZE(cuts); i++) {
		assert_int_equal(mode_sense(true, 0, 0x3F, 0, cuts[i]), cuts[i]);
		chg_good();
		assert_int_equal(buf[0], n6 - 1);
		assert_memory_equal(buf, whole, cuts[i]);
		assert_int_equal(buf[cuts[i]], 0xEE);
	}
	size_t n10 = mode_sense(false, 0, 0x3F, 0, 1000);
	assert_int_equal(n10, 8 + ALL_PAGES_LEN);
	memcpy(whole, buf, n10);
	static const uint16_t cuts10[] = {0, 1, 2, 9, 51};
	for (size_t i = 0; i < VTL_ARRAY_SIZE(cuts10); i++) {
		assert_int_equal(mode_sense(false, 0, 0x3F, 0, cuts10[i]), cuts10[i]);
		chg_good();
		assert_memory_equal(buf, whole, cuts10[i]);
		assert_int_equal(buf[cuts10[i]], 0xEE);
	}
	/* The transfer length cuts it too. */
	uint8_t cdb[6] = {0x1A, 0, 0x3F, 0, 255, 0};
	memset(buf, 0xEE, sizeof buf);
	cmd(cdb, 6, SCSI_DIR_IN, buf, 5);
	chg_good();
	assert_int_equal(g.c.data_len, 5);
	assert_int_equal(buf[0], n6 - 1);
}

/* The current pages as MODE SENSE(10) gives them (header included) into list; returns the length. */
static size_t current_list(uint8_t *list)
{
	size_t n = mode_sense(false, 0, 0x3F, 0, 1000);
	chg_good();
	memcpy(list, buf, n);
	return n;
}

static void mode_select_accepts_current(void **state)
{
	(void)state;
	attention_seen(OTHER);
	uint8_t list[BUF];
	/* An empty list, a header alone (6 and 10, with or without PF). */
	mode_select(true, 0x10, NULL, 0);
	chg_good();
	uint8_t hdr[8] = {0};
	mode_select(true, 0x00, hdr, 4);
	chg_good();
	mode_select(false, 0x10, hdr, 8);
	chg_good();
	/* What MODE SENSE reported, echoed (MODE DATA LENGTH, MEDIUM TYPE and PS are not looked at). */
	size_t n = current_list(list);
	list[0] = 0xAB;
	list[2] = 0x05;
	list[8] |= 0x80;
	mode_select(false, 0x10, list, (uint16_t)n);
	chg_good();
	/* The six-byte form with one page. */
	uint8_t six[4 + sizeof page_1f] = {0};
	memcpy(six + 4, page_1f, sizeof page_1f);
	mode_select(true, 0x10, six, sizeof six);
	chg_good();
	/* Nothing changed, so no other nexus hears of it. */
	uint8_t tur[6] = {0};
	cmd_on(OTHER, tur, 6, SCSI_DIR_NONE, NULL, 0);
	chg_good();
}

static void mode_select_refusals(void **state)
{
	(void)state;
	uint8_t list[BUF];
	size_t n = current_list(list);
	/* A changed value: at its first changed bit (the number of storage elements, page byte 9). */
	list[8 + 9] ^= 0x05;
	mode_select(false, 0x10, list, (uint16_t)n);
	expect_field(false, 8 + 9, 2);
	n = current_list(list);
	/* ROTATE of the transport (1Eh, byte 2 bit 0). */
	list[8 + 20 + 2] = 0x01;
	mode_select(false, 0x10, list, (uint16_t)n);
	expect_field(false, 8 + 20 + 2, 0);
	n = current_list(list);
	/* The move matrix: moving from the robot (1Fh byte 4). */
	list[8 + 24 + 4] = 0x08;
	mode_select(false, 0x10, list, (uint16_t)n);
	expect_field(false, 8 + 24 + 4, 3);
	n = current_list(list);
	/* A wrong page length: at the length byte. */
	list[8 + 1] = 0x10;
	mode_select(false, 0x10, list, (uint16_t)n);
	expect_field(false, 8 + 1, 7);
	/* An unknown page: at its page code, bit 5. */
	uint8_t unknown[8 + 12] = {[8] = 0x0A, [9] = 0x0A};
	mode_select(false, 0x10, unknown, sizeof unknown);
	expect_field(false, 8, 5);
	/* A subpage of a known page: at the subpage. */
	uint8_t sub[8 + 4 + 18] = {[8] = 0x40 | 0x1D, [9] = 0x01, [10] = 0x00, [11] = 18};
	mode_select(false, 0x10, sub, sizeof sub);
	expect_field(false, 9, 7);
	/* Pages without PF: INVALID FIELD IN CDB byte 1 bit 4; SP: bit 0. */
	n = current_list(list);
	mode_select(false, 0x00, list, (uint16_t)n);
	expect_field(true, 1, 4);
	mode_select(false, 0x11, list, (uint16_t)n);
	expect_field(true, 1, 0);
	/* Header fields: a block descriptor length (6, 10), a device-specific parameter (6, 10), LONGLBA. */
	static const struct {
		bool six;
		uint8_t at, value, len, field, bit;
	} bad[] = {{true, 3, 8, 12, 3, 7}, {false, 7, 8, 16, 6, 7}, {true, 2, 0x10, 4, 2, 7},
		   {false, 3, 0x80, 8, 3, 7}, {false, 4, 0x01, 8, 4, 0}};
	uint8_t h[16];
	for (size_t i = 0; i < VTL_ARRAY_SIZE(bad); i++) {
		memset(h, 0, sizeof h);
		h[bad[i].at] = bad[i].value;
		mode_select(bad[i].six, 0x10, h, bad[i].len);
		expect_field(false, bad[i].field, bad[i].bit);
	}
	memset(h, 0, sizeof h);
	/* Lengths: a cut header, a cut page header, a cut page. */
	mode_select(false, 0x10, h, 7);
	chg_check(SK_ILLEGAL_REQUEST, ASC_PARAMETER_LIST_LENGTH);
	n = current_list(list);
	mode_select(false, 0x10, list, 9);
	chg_check(SK_ILLEGAL_REQUEST, ASC_PARAMETER_LIST_LENGTH);
	mode_select(false, 0x10, list, 8 + 19);
	chg_check(SK_ILLEGAL_REQUEST, ASC_PARAMETER_LIST_LENGTH);
	/* A parameter list longer than any the changer takes: INVALID FIELD IN CDB at its length. */
	uint8_t big[10] = {0x55, 0x10, 0, 0, 0, 0, 0, 0x10, 0x00, 0};
	uint8_t data[4096] = {0};
	cmd(big, 10, SCSI_DIR_OUT, data, sizeof data);
	expect_field(true, 7, 7);
}

/* LOG SENSE; returns the bytes received. */
static size_t log_sense(uint8_t byte1, uint8_t pc_page, uint8_t subpage, uint16_t pointer, uint16_t alloc)
{
	uint8_t cdb[10] = {0x4D, byte1, pc_page, subpage, 0, (uint8_t)(pointer >> 8), (uint8_t)pointer,
			   (uint8_t)(alloc >> 8), (uint8_t)alloc, 0};
	memset(buf, 0xEE, sizeof buf);
	cmd(cdb, 10, SCSI_DIR_IN, buf, sizeof buf);
	return g.c.data_len;
}

static int log_select(uint8_t byte1, uint8_t pc_page, uint8_t subpage, const uint8_t *data, uint16_t len)
{
	uint8_t cdb[10] = {0x4C, byte1, pc_page, subpage, 0, 0, 0, (uint8_t)(len >> 8), (uint8_t)len, 0};
	uint8_t out[BUF];
	if (len)
		memcpy(out, data, len);
	return cmd(cdb, 10, len ? SCSI_DIR_OUT : SCSI_DIR_NONE, len ? out : NULL, len);
}

static void log_supported_pages(void **state)
{
	(void)state;
	static const uint8_t pages[] = {0x80, 0x00, 0x00, 0x02, 0x00, 0x2E};
	assert_int_equal(log_sense(0, 0x40, 0, 0, BUF), sizeof pages);
	chg_good();
	assert_memory_equal(buf, pages, sizeof pages);
	static const uint8_t subpages[] = {0xC0, 0xFF, 0x00, 0x06, 0x00, 0x00, 0x00, 0xFF, 0x2E, 0x00};
	assert_int_equal(log_sense(0, 0x40, 0xFF, 0, BUF), sizeof subpages);
	chg_good();
	assert_memory_equal(buf, subpages, sizeof subpages);
	/* Cut: the length field still gives the whole. */
	assert_int_equal(log_sense(0, 0x40, 0, 0, 3), 3);
	assert_memory_equal(buf, pages, 3);
	assert_int_equal(buf[3], 0xEE);
	assert_int_equal(log_sense(0, 0x40, 0, 0, 0), 0);
	chg_good();
}

/* Checks a TapeAlert page from buf of n bytes starting at flag first: each parameter and its value. */
static void expect_tapealert(size_t n, uint16_t first, uint64_t flags)
{
	unsigned count = 64 - first + 1;
	assert_int_equal(n, 4 + 5 * count);
	assert_int_equal(buf[0], 0x80 | 0x2E);
	assert_int_equal(buf[1], 0);
	assert_int_equal(buf[2] << 8 | buf[3], 5 * count);
	for (unsigned i = 0; i < count; i++) {
		const uint8_t *p = buf + 4 + 5 * i;
		uint16_t f = (uint16_t)(first + i);
		assert_int_equal(p[0] << 8 | p[1], f);
		assert_int_equal(p[2], 0x23); /* TSD, binary list */
		assert_int_equal(p[3], 1);
		assert_int_equal(p[4], (flags >> (f - 1)) & 1);
	}
}

static void log_tapealert(void **state)
{
	(void)state;
	/* Nothing the emulation detects has raised a flag. */
	expect_tapealert(log_sense(0, 0x40 | 0x2E, 0, 0, BUF), 1, 0);
	chg_good();
	/* Flags stand for conditions a library would raise (13 pick retry, 22 drive offline, 64). */
	uint64_t flags = (1ull << 12) | (1ull << 21) | (1ull << 63);
	g.ch->tapealert = flags;
	/* Default and threshold values read 0 and clear nothing. */
	expect_tapealert(log_sense(0, 0xC0 | 0x2E, 0, 0, BUF), 1, 0);
	expect_tapealert(log_sense(0, 0x00 | 0x2E, 0, 0, BUF), 1, 0);
	assert_int_equal(g.ch->tapealert, flags);
	/* A cut read clears only what the host received: flags 1..13 in 4 + 13 * 5 bytes. */
	assert_int_equal(log_sense(0, 0x40 | 0x2E, 0, 0, 4 + 13 * 5), 4 + 13 * 5);
	assert_int_equal(buf[4 + 12 * 5 + 4], 1);
	assert_int_equal(g.ch->tapealert, (1ull << 21) | (1ull << 63));
	/* From the parameter pointer: flags 22..64 only; an odd cut keeps the flag it split (64). */
	size_t n = log_sense(0, 0x40 | 0x2E, 0, 22, 4 + 43 * 5 - 1);
	assert_int_equal(n, 4 + 43 * 5 - 1);
	assert_int_equal(buf[2] << 8 | buf[3], 43 * 5);
	assert_int_equal(buf[4] << 8 | buf[5], 22);
	assert_int_equal(buf[8], 1);
	assert_int_equal(g.ch->tapealert, 1ull << 63);
	expect_tapealert(log_sense(0, 0x40 | 0x2E, 0, 64, BUF), 64, 1ull << 63);
	assert_int_equal(g.ch->tapealert, 0);
	expect_tapealert(log_sense(0, 0x40 | 0x2E, 0, 0, BUF), 1, 0);
}

static void log_refusals(void **state)
{
	(void)state;
	log_sense(0x01, 0x40 | 0x2E, 0, 0, BUF);
	expect_field(true, 1, 0);
	log_sense(0x02, 0x40 | 0x2E, 0, 0, BUF);
	expect_field(true, 1, 1);
	/* The drive's pages are not the changer's. */
	static const uint8_t unknown[] = {0x02, 0x0C, 0x30};
	for (size_t i = 0; i < sizeof unknown; i++) {
		log_sense(0, 0x40 | unknown[i], 0, 0, BUF);
		expect_field(true, 2, 5);
	}
	log_sense(0, 0x40 | 0x2E, 0x01, 0, BUF);
	expect_field(true, 3, 7);
	/* A parameter pointer past the last parameter. */
	log_sense(0, 0x40 | 0x2E, 0, 65, BUF);
	expect_field(true, 5, 7);
	log_sense(0, 0x40, 0, 1, BUF);
	expect_field(true, 5, 7);
}

static void log_select_nothing_to_reset(void **state)
{
	(void)state;
	attention_seen(OTHER);
	g.ch->tapealert = 1ull << 4;
	/* PCR, or PC 11b, for every page or for TapeAlert: accepted; nothing is a counter. */
	log_select(0x02, 0x40, 0, NULL, 0);
	chg_good();
	log_select(0x00, 0xC0 | 0x2E, 0, NULL, 0);
	chg_good();
	assert_int_equal(g.ch->tapealert, 1ull << 4);
	uint8_t tur[6] = {0};
	cmd_on(OTHER, tur, 6, SCSI_DIR_NONE, NULL, 0);
	chg_good();
	/* A list with the page and no parameters. */
	uint8_t list[12] = {0x2E, 0, 0, 0};
	log_select(0, 0x40, 0, list, 4);
	chg_good();
	/* Refusals: a parameter (none is settable), page 00h, a cut list, PCR with a list, SP, an unknown page. */
	list[3] = 5;
	list[5] = 1;
	list[7] = 1;
	log_select(0, 0x40, 0, list, 9);
	expect_field(false, 4, 7);
	uint8_t zero[4] = {0};
	log_select(0, 0x40, 0, zero, 4);
	expect_field(false, 0, 5);
	log_select(0, 0x40, 0, list, 6);
	chg_check(SK_ILLEGAL_REQUEST, ASC_PARAMETER_LIST_LENGTH);
	list[3] = 0;
	log_select(0x02, 0x40, 0, list, 4);
	expect_field(true, 1, 1);
	log_select(0x01, 0x40, 0, NULL, 0);
	expect_field(true, 1, 0);
	log_select(0x02, 0x40 | 0x0C, 0, NULL, 0);
	expect_field(true, 2, 5);
}

/* INQUIRY with EVPD for page; returns the bytes received. */
static size_t vpd(uint8_t page, uint16_t alloc)
{
	uint8_t cdb[6] = {0x12, 0x01, page, (uint8_t)(alloc >> 8), (uint8_t)alloc, 0};
	memset(buf, 0xEE, sizeof buf);
	cmd(cdb, 6, SCSI_DIR_IN, buf, sizeof buf);
	return g.c.data_len;
}

static void inquiry_vpd_pages(void **state)
{
	(void)state;
	static const uint8_t supported[] = {0x08, 0x00, 0x00, 0x04, 0x00, 0x80, 0x83, 0xC0};
	assert_int_equal(vpd(0x00, 255), sizeof supported);
	chg_good();
	assert_memory_equal(buf, supported, sizeof supported);
	/* C0h, firmware build information (IBM 3573): reserved, checksum, build date, reserved. */
	assert_int_equal(vpd(0xC0, 255), 64);
	chg_good();
	static const uint8_t head[] = {0x08, 0xC0, 0x00, 0x3C, 0, 0, 0, 0};
	assert_memory_equal(buf, head, sizeof head);
	assert_memory_equal(buf + 8, "0000", 4);
	assert_memory_equal(buf + 12, "01-01-2024              ", 24);
	for (int i = 36; i < 64; i++)
		assert_int_equal(buf[i], 0);
	assert_int_equal(vpd(0xC0, 9), 9);
	assert_int_equal(buf[9], 0xEE);
	/* Serial and identification stay spc_inquiry's. */
	assert_int_equal(vpd(0x80, 255), 4 + 7);
	assert_memory_equal(buf + 4, "LIB0001", 7);
	/* A page the library does not have. */
	vpd(0xD0, 255);
	chg_check(SK_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_CDB);
}

static void inquiry_vpd_other_vendors(void **state)
{
	(void)state;
	/* A library of another vendor (an HP MSL) has the standard pages only. */
	snprintf(g.ch->dev.ident.vendor, sizeof g.ch->dev.ident.vendor, "HP");
	static const uint8_t supported[] = {0x08, 0x00, 0x00, 0x03, 0x00, 0x80, 0x83};
	assert_int_equal(vpd(0x00, 255), sizeof supported);
	assert_memory_equal(buf, supported, sizeof supported);
	vpd(0xC0, 255);
	chg_check(SK_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_CDB);
}

static void reservations(void **state)
{
	(void)state;
	/* Under another nexus's RESERVE: LOG SENSE passes, MODE SENSE and MODE SELECT conflict (SPC-2 5.5.1). */
	attention_seen(OTHER);
	uint8_t reserve[6] = {0x16};
	cmd_on(OTHER, reserve, 6, SCSI_DIR_NONE, NULL, 0);
	chg_good();
	log_sense(0, 0x40, 0, 0, BUF);
	chg_good();
	mode_sense(true, 0, 0x3F, 0, 255);
	assert_int_equal(g.c.status, SCSI_RESERVATION_CONFLICT);
	uint8_t hdr[4] = {0};
	mode_select(true, 0x10, hdr, 4);
	assert_int_equal(g.c.status, SCSI_RESERVATION_CONFLICT);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(mode_pages_six_and_ten), T(mode_page_control), T(mode_subpages_and_unknown_pages),
		T(mode_allocation_lengths), T(mode_select_accepts_current), T(mode_select_refusals),
		T(log_supported_pages), T(log_tapealert), T(log_refusals), T(log_select_nothing_to_reset),
		T(inquiry_vpd_pages), T(inquiry_vpd_other_vendors), T(reservations),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
