/* SPDX-License-Identifier: Apache-2.0 */
/*
 * MODE SENSE and MODE SELECT of the drive as a host sees them: the header,
 * block descriptor and pages in their 6- and 10-byte forms, page control,
 * allocation lengths, every refusal with its field pointer, the all-or-
 * nothing rule, the unit attention to other nexuses, and what a change does
 * to the drive.
 */
#include "tests/unit/scsi_host.h"

#include <string.h>

#include "vtl/drive/ssc_internal.h"

#define BUF 512

/* Sends MODE SENSE(6) or (10); returns the bytes received. */
static size_t sense(struct host *h, bool six, uint8_t byte1, uint8_t pc_page, uint8_t subpage, uint16_t alloc,
		    uint8_t *buf)
{
	uint8_t cdb[10] = {0};
	cdb[0] = six ? 0x1A : 0x5A;
	cdb[1] = byte1;
	cdb[2] = pc_page;
	cdb[3] = subpage;
	if (six) {
		cdb[4] = (uint8_t)alloc;
	} else {
		cdb[7] = (uint8_t)(alloc >> 8);
		cdb[8] = (uint8_t)alloc;
	}
	memset(buf, 0xEE, BUF);
	host_cmd(h, cdb, six ? 6 : 10, SCSI_DIR_IN, buf, BUF);
	return h->c.data_len;
}

/* Sends MODE SELECT(6) or (10) with PF set unless byte1 says otherwise. */
static int select_(struct host *h, bool six, uint8_t byte1, const uint8_t *data, uint16_t len)
{
	uint8_t cdb[10] = {0};
	uint8_t buf[BUF];
	memcpy(buf, data, len);
	cdb[0] = six ? 0x15 : 0x55;
	cdb[1] = byte1;
	if (six) {
		cdb[4] = (uint8_t)len;
	} else {
		cdb[7] = (uint8_t)(len >> 8);
		cdb[8] = (uint8_t)len;
	}
	return host_cmd(h, cdb, six ? 6 : 10, SCSI_DIR_OUT, buf, len);
}

static void expect_param(struct host *h, uint16_t byte, int bit)
{
	expect_invalid_field(h, ASC_INVALID_FIELD_IN_PARAMETERS, false, byte, bit);
}

static void expect_cdb(struct host *h, uint16_t byte, int bit)
{
	expect_invalid_field(h, ASC_INVALID_FIELD_IN_CDB, true, byte, bit);
}

/* The page with this code in MODE SENSE data of n bytes (header hdr bytes), or NULL. */
static const uint8_t *page_in(const uint8_t *buf, size_t n, size_t hdr, uint8_t code)
{
	size_t bdl = hdr == 4 ? buf[3] : (size_t)(buf[6] << 8 | buf[7]);
	for (size_t at = hdr + bdl; at + 2 <= n; at += 2 + buf[at + 1])
		if ((buf[at] & 0x3F) == code)
			return buf + at;
	return NULL;
}

/* A MODE SELECT(6) list: header (buffered), no block descriptor, then the page as MODE SENSE gave it. */
static uint16_t list_with_page(struct host *h, uint8_t code, uint8_t *list)
{
	uint8_t buf[BUF];
	size_t n = sense(h, true, 0x08, code, 0, 255, buf);
	expect_good(h);
	const uint8_t *pg = page_in(buf, n, 4, code);
	assert_non_null(pg);
	memset(list, 0, 4);
	list[2] = 0x10;
	memcpy(list + 4, pg, 2u + pg[1]);
	return (uint16_t)(4 + 2 + pg[1]);
}

static void tur(struct host *h)
{
	uint8_t cdb[6];
	host_cmd(h, cdb, cdb_simple(cdb, 0x00), SCSI_DIR_NONE, NULL, 0);
}

static void all_pages_six_and_ten(void **state)
{
	struct host *h = *state;
	uint8_t b6[BUF], b10[BUF];
	/* Without a medium: an IBM TD8 reports its own density, variable blocks, buffered mode. */
	size_t n6 = sense(h, true, 0, 0x3F, 0, 255, b6);
	expect_good(h);
	assert_int_equal(b6[0], n6 - 1);
	assert_int_equal(b6[1], SSC_MEDIUM_TYPE_DATA);
	assert_int_equal(b6[2], 0x10);
	assert_int_equal(b6[3], 8);
	assert_int_equal(b6[4], DENSITY_LTO8);
	assert_memory_equal(b6 + 5, "\0\0\0\0\0\0\0", 7);
	/* Pages in order 0Ah, 0Fh, 10h, 11h, 1Ch with their lengths. */
	static const uint8_t order[][2] = {{0x0A, 0x0A}, {0x0F, 0x0E}, {0x10, 0x0E}, {0x11, 0x08}, {0x1C, 0x0A}};
	size_t at = 12;
	for (unsigned i = 0; i < 5; i++) {
		assert_int_equal(b6[at], order[i][0]);
		assert_int_equal(b6[at + 1], order[i][1]);
		at += 2u + b6[at + 1];
	}
	assert_int_equal(at, n6);
	/* Compression page: DCE and DCC set, DDE set, algorithm 1 both ways. */
	const uint8_t *dc = page_in(b6, n6, 4, 0x0F);
	assert_int_equal(dc[2], 0xC0);
	assert_int_equal(dc[3], 0x80);
	assert_int_equal(dc[7], 1);
	assert_int_equal(dc[11], 1);
	/* Device configuration: LOIS, EEG, SEW, compression algorithm selected. */
	const uint8_t *cfg = page_in(b6, n6, 4, 0x10);
	assert_int_equal(cfg[8], 0x40);
	assert_int_equal(cfg[10], 0x18);
	assert_int_equal(cfg[14], 1);
	/* Informational exceptions: DEXCPT (TapeAlert by polling), MRIE 3. */
	const uint8_t *ie = page_in(b6, n6, 4, 0x1C);
	assert_int_equal(ie[2], 0x08);
	assert_int_equal(ie[3], 3);
	/* One partition, no more possible. */
	const uint8_t *part = page_in(b6, n6, 4, 0x11);
	assert_int_equal(part[2], 0);
	assert_int_equal(part[3], 0);
	assert_int_equal(part[5], 0x03);

	/* MODE SENSE(10): the same content behind an 8-byte header. */
	size_t n10 = sense(h, false, 0, 0x3F, 0, 1000, b10);
	expect_good(h);
	assert_int_equal(n10, n6 + 4);
	assert_int_equal(b10[0] << 8 | b10[1], n10 - 2);
	assert_int_equal(b10[2], b6[1]);
	assert_int_equal(b10[3], b6[2]);
	assert_int_equal(b10[6] << 8 | b10[7], 8);
	assert_memory_equal(b10 + 8, b6 + 4, n6 - 4);
	/*
	 * All pages and subpages: the same pages, Control Data Protection
	 * (0Ah/F0h) after the control page and Device Configuration Extension
	 * (10h/01h) after device configuration, 32 bytes each.
	 */
	size_t nff = sense(h, false, 0, 0x3F, 0xFF, 1000, b6);
	expect_good(h);
	assert_int_equal(nff, n10 + 64);
	assert_int_equal(b6[8 + 8 + 12], 0x4A);
	assert_int_equal(b6[8 + 8 + 12 + 1], 0xF0);
	assert_int_equal(b6[8 + 8 + 12 + 32 + 16 + 16], 0x50);
	assert_int_equal(b6[8 + 8 + 12 + 32 + 16 + 16 + 1], 0x01);
	/* DBD: no block descriptor. */
	n6 = sense(h, true, 0x08, 0x0F, 0, 255, b6);
	expect_good(h);
	assert_int_equal(n6, 4 + 16);
	assert_int_equal(b6[3], 0);
	assert_int_equal(b6[4], 0x0F);
	/* One page with subpage FFh: that page. */
	n6 = sense(h, true, 0x08, 0x1C, 0xFF, 255, b6);
	expect_good(h);
	assert_int_equal(n6, 4 + 12);
}

static void allocation_lengths(void **state)
{
	struct host *h = *state;
	uint8_t full[BUF], b[BUF];
	size_t n = sense(h, false, 0, 0x3F, 0, 1000, full);
	expect_good(h);
	size_t allocs[] = {0, 1, 5, 13, 63};
	for (unsigned i = 0; i < 5; i++) {
		size_t got = sense(h, false, 0, 0x3F, 0, (uint16_t)allocs[i], b);
		expect_good(h);
		assert_int_equal(got, allocs[i]);
		/* A short allocation cuts the data, never changes it (the length field still says it all). */
		assert_memory_equal(b, full, got);
		if (got)
			assert_int_equal(b[got], 0xEE);
	}
	assert_true(n > 63);
	/* The transfer length cuts it too. */
	uint8_t cdb[6] = {0x1A, 0, 0x3F, 0, 255, 0};
	host_cmd(h, cdb, 6, SCSI_DIR_IN, b, 7);
	expect_good(h);
	assert_int_equal(h->c.data_len, 7);
}

static void page_control(void **state)
{
	struct host *h = *state;
	uint8_t b[BUF];
	/* Changeable: DCE alone on page 0Fh; BUFFERED MODE in the header; density and block length. */
	size_t n = sense(h, true, 0, 0x40 | 0x3F, 0, 255, b);
	expect_good(h);
	assert_int_equal(b[2], 0x70);
	assert_int_equal(b[4], 0xFF);
	assert_memory_equal(b + 9, "\xFF\xFF\xFF", 3);
	const uint8_t *dc = page_in(b, n, 4, 0x0F);
	assert_int_equal(dc[2], 0x80);
	assert_int_equal(dc[3], 0x00);
	const uint8_t *ctl = page_in(b, n, 4, 0x0A);
	assert_int_equal(ctl[2], 0x04); /* D_SENSE */
	assert_int_equal(ctl[4], 0x08); /* SWP */
	const uint8_t *part = page_in(b, n, 4, 0x11);
	for (unsigned i = 2; i < 10; i++)
		assert_int_equal(part[i], 0);
	/* Default: compression on even after the host turned it off. */
	h->d->mode.compression = false;
	n = sense(h, true, 0x08, 0x80 | 0x0F, 0, 255, b);
	expect_good(h);
	assert_int_equal(b[4 + 2], 0xC0);
	n = sense(h, true, 0x08, 0x0F, 0, 255, b);
	assert_int_equal(b[4 + 2], 0x40);
	/* Saved values are not supported. */
	sense(h, true, 0, 0xC0 | 0x3F, 0, 255, b);
	expect_sense(h, SK_ILLEGAL_REQUEST, ASC_SAVING_NOT_SUPPORTED);
	sense(h, false, 0, 0xC0 | 0x0F, 0, 255, b);
	expect_sense(h, SK_ILLEGAL_REQUEST, ASC_SAVING_NOT_SUPPORTED);
}

/* Page 00h, as the Linux st driver asks when it opens the drive: the header and block descriptor. */
static void page_zero_for_st(void **state)
{
	struct host *h = *state;
	host_new_cart(h, "M00001L8", 0);
	host_load(h, "M00001L8");
	uint8_t b[BUF];
	size_t n = sense(h, true, 0, 0x00, 0, 12, b);
	expect_good(h);
	assert_int_equal(n, 12);
	assert_int_equal(b[0], 11);   /* mode data length */
	assert_int_equal(b[3], 8);    /* block descriptor length */
	assert_int_equal(b[4], 0x5E); /* LTO-8 density: what st shows as the density code */
	assert_int_equal(b[9] << 16 | b[10] << 8 | b[11], 0); /* variable block length */
	sense(h, true, 0, 0x00, 0x01, 12, b); /* page 00h has no subpages */
	expect_cdb(h, 3, 7);
}

static void unknown_pages(void **state)
{
	struct host *h = *state;
	uint8_t b[BUF];
	sense(h, true, 0, 0x05, 0, 255, b);
	expect_cdb(h, 2, 5);
	sense(h, false, 0, 0x3E, 0, 255, b);
	expect_cdb(h, 2, 5);
	/* A known page with a subpage it does not have; all pages with a subpage other than 00h/FFh. */
	sense(h, true, 0, 0x0F, 0x01, 255, b);
	expect_cdb(h, 3, 7);
	sense(h, false, 0, 0x3F, 0x02, 255, b);
	expect_cdb(h, 3, 7);
}

static void block_descriptor_select(void **state)
{
	struct host *h = *state;
	host_new_cart(h, "A00001L8", 0);
	host_load(h, "A00001L8");
	uint8_t list[12] = {0, 0, 0x10, 8, 0, 0, 0, 0, 0, 0, 0x02, 0x00}; /* 512-byte blocks */
	select_(h, true, 0x10, list, 12);
	expect_good(h);
	assert_int_equal(h->d->mode.block_len, 512);
	uint8_t b[BUF];
	sense(h, true, 0, 0x0F, 0, 255, b);
	assert_int_equal(b[4], DENSITY_LTO8);
	assert_int_equal(b[9] << 16 | b[10] << 8 | b[11], 512);
	/* The largest block and variable mode again, through MODE SELECT(10). */
	uint8_t l10[16] = {0, 0, 0, 0x10, 0, 0, 0, 8, DENSITY_LTO7, 0, 0, 0, 0, 0x80, 0x00, 0x00};
	select_(h, false, 0x10, l10, 16);
	expect_good(h);
	assert_int_equal(h->d->mode.block_len, SSC_BLOCK_LIMIT_MAX);
	assert_int_equal(h->d->mode.density, DENSITY_LTO7);
	memset(l10 + 8, 0, 8);
	select_(h, false, 0x10, l10, 16);
	expect_good(h);
	assert_int_equal(h->d->mode.block_len, 0);
	sense(h, false, 0, 0x0F, 0, 255, b);
	assert_int_equal(b[13] << 16 | b[14] << 8 | b[15], 0);
	/* Too large a block: the block length field (byte 4 + 5). */
	list[9] = 0x80;
	list[10] = 0;
	list[11] = 1;
	select_(h, true, 0x10, list, 12);
	expect_param(h, 9, 7);
	/* A density this LTO-8 drive cannot write (LTO-6), or not LTO at all. */
	memset(list + 4, 0, 8);
	list[4] = DENSITY_LTO6;
	select_(h, true, 0x10, list, 12);
	expect_param(h, 4, 7);
	list[4] = 0x40;
	select_(h, true, 0x10, list, 12);
	expect_param(h, 4, 7);
	/* Number of blocks must be zero. */
	list[4] = 0;
	list[7] = 1;
	select_(h, true, 0x10, list, 12);
	expect_param(h, 5, 7);
	/* A block descriptor length other than 0 or 8. */
	list[7] = 0;
	list[3] = 4;
	select_(h, true, 0x10, list, 12);
	expect_param(h, 3, 7);
	/* Long LBA descriptors in MODE SELECT(10) are not supported. */
	l10[4] = 1;
	select_(h, false, 0x10, l10, 16);
	expect_param(h, 4, 0);
	l10[4] = 0;
	l10[7] = 9;
	select_(h, false, 0x10, l10, 16);
	expect_param(h, 6, 7);
	assert_int_equal(h->d->mode.block_len, 0);
}

static void header_fields(void **state)
{
	struct host *h = *state;
	uint8_t list[4] = {0, 0, 0x00, 0};
	/* BUFFERED MODE 0: unbuffered; the header says so. */
	select_(h, true, 0x10, list, 4);
	expect_good(h);
	assert_false(h->d->mode.buffered);
	uint8_t b[BUF];
	sense(h, true, 0x08, 0x0A, 0, 255, b);
	assert_int_equal(b[2], 0x00);
	/* MODE DATA LENGTH and MEDIUM TYPE are reserved in MODE SELECT and WP is ignored. */
	uint8_t buffered[4] = {0x33, 0x44, 0x90, 0};
	select_(h, true, 0x10, buffered, 4);
	expect_good(h);
	assert_true(h->d->mode.buffered);
	/* BUFFERED MODE 2 and a speed are not supported. */
	list[2] = 0x20;
	select_(h, true, 0x10, list, 4);
	expect_param(h, 2, 6);
	list[2] = 0x11;
	select_(h, true, 0x10, list, 4);
	expect_param(h, 2, 3);
	uint8_t l10[8] = {0, 0, 0, 0x21, 0, 0, 0, 0};
	select_(h, false, 0x10, l10, 8);
	expect_param(h, 3, 6);
	assert_true(h->d->mode.buffered);
}

static void select_cdb_and_lengths(void **state)
{
	struct host *h = *state;
	uint8_t list[BUF];
	uint16_t n = list_with_page(h, 0x0F, list);
	/* SP: no saved pages. */
	select_(h, true, 0x11, list, n);
	expect_cdb(h, 1, 0);
	select_(h, false, 0x11, list, n);
	expect_cdb(h, 1, 0);
	/* Pages need PF; a header and block descriptor alone do not. */
	select_(h, true, 0x00, list, n);
	expect_cdb(h, 1, 4);
	select_(h, true, 0x00, list, 4);
	expect_good(h);
	/* A parameter list length of zero is not an error. */
	select_(h, true, 0x10, list, 0);
	expect_good(h);
	/* Truncated header, block descriptor, page header, page. */
	select_(h, true, 0x10, list, 3);
	expect_sense(h, SK_ILLEGAL_REQUEST, ASC_PARAMETER_LIST_LENGTH);
	uint8_t bd[12] = {0, 0, 0x10, 8, 0};
	select_(h, true, 0x10, bd, 10);
	expect_sense(h, SK_ILLEGAL_REQUEST, ASC_PARAMETER_LIST_LENGTH);
	select_(h, true, 0x10, list, 5);
	expect_sense(h, SK_ILLEGAL_REQUEST, ASC_PARAMETER_LIST_LENGTH);
	select_(h, true, 0x10, list, (uint16_t)(n - 1));
	expect_sense(h, SK_ILLEGAL_REQUEST, ASC_PARAMETER_LIST_LENGTH);
	uint8_t l10[8 + 16] = {0};
	memcpy(l10 + 8, list + 4, 16);
	select_(h, false, 0x10, l10, 7);
	expect_sense(h, SK_ILLEGAL_REQUEST, ASC_PARAMETER_LIST_LENGTH);
	select_(h, false, 0x10, l10, 24);
	expect_good(h);
	/* A page length that is not the page's. */
	list[5] = 0x0D;
	select_(h, true, 0x10, list, n);
	expect_param(h, 5, 7);
	list[5] = 0x0E;
	/* Unknown page; known page in sub_page format with a subpage it lacks; unknown page with a subpage. */
	uint8_t unk[8] = {0, 0, 0x10, 0, 0x05, 0x02, 0, 0};
	select_(h, true, 0x10, unk, 8);
	expect_param(h, 4, 5);
	uint8_t sub[10] = {0, 0, 0x10, 0, 0x4F, 0x01, 0, 2, 0, 0};
	select_(h, true, 0x10, sub, 10);
	expect_param(h, 5, 7);
	sub[4] = 0x45;
	select_(h, true, 0x10, sub, 10);
	expect_param(h, 4, 5);
	/* A non-changeable bit: DDE (page byte 3 bit 7) and the compression algorithm. */
	list[4 + 3] = 0x00;
	select_(h, true, 0x10, list, n);
	expect_param(h, 7, 7);
	list[4 + 3] = 0x80;
	list[4 + 7] = 0x03;
	select_(h, true, 0x10, list, n);
	expect_param(h, 11, 1);
}

static void compression_reaches_drive(void **state)
{
	struct host *h = *state;
	host_new_cart(h, "A00002L8", 0);
	host_load(h, "A00002L8");
	uint8_t list[BUF];
	uint16_t n = list_with_page(h, 0x0F, list);
	list[4 + 2] &= (uint8_t)~0x80; /* DCE off; PS as MODE SENSE gave it is fine too */
	list[4] |= 0x80;
	select_(h, true, 0x10, list, n);
	expect_good(h);
	assert_false(h->d->mode.compression);
	uint8_t b[BUF];
	size_t got = sense(h, true, 0x08, 0x3F, 0, 255, b);
	assert_int_equal(page_in(b, got, 4, 0x0F)[2], 0x40);
	assert_int_equal(page_in(b, got, 4, 0x10)[14], 0);
	/* Page 10h's SELECT DATA COMPRESSION ALGORITHM turns it back on; values other than 0 and 1 are refused. */
	n = list_with_page(h, 0x10, list);
	list[4 + 14] = 1;
	select_(h, true, 0x10, list, n);
	expect_good(h);
	assert_true(h->d->mode.compression);
	list[4 + 14] = 2;
	select_(h, true, 0x10, list, n);
	expect_param(h, 18, 7);
	/* REW and SEW are changeable; the active partition is not. */
	list[4 + 14] = 1;
	list[4 + 8] |= 0x01;
	list[4 + 10] &= (uint8_t)~0x08;
	select_(h, true, 0x10, list, n);
	expect_good(h);
	assert_true(h->d->mode.rew);
	assert_false(h->d->mode.sew);
	list[4 + 3] = 1;
	select_(h, true, 0x10, list, n);
	expect_param(h, 7, 0);
}

static void all_or_nothing(void **state)
{
	struct host *h = *state;
	/* Block descriptor (1024) + page 0Fh (DCE off) + page 0Ah with TST changed: nothing applies. */
	uint8_t list[BUF] = {0, 0, 0x00, 8, 0, 0, 0, 0, 0, 0, 0x04, 0x00};
	uint8_t b[BUF];
	size_t n = sense(h, true, 0x08, 0x0F, 0, 255, b);
	memcpy(list + 12, b + 4, n - 4);
	list[12 + 2] = 0x40;
	size_t at = 12 + n - 4;
	n = sense(h, true, 0x08, 0x0A, 0, 255, b);
	memcpy(list + at, b + 4, n - 4);
	list[at + 2] |= 0x20; /* TST */
	uint16_t len = (uint16_t)(at + n - 4);
	select_(h, true, 0x10, list, len);
	expect_param(h, (uint16_t)(at + 2), 5);
	assert_int_equal(h->d->mode.block_len, 0);
	assert_true(h->d->mode.compression);
	assert_true(h->d->mode.buffered);
	/* Without the bad bit it all applies. */
	list[at + 2] &= (uint8_t)~0x20;
	select_(h, true, 0x10, list, len);
	expect_good(h);
	assert_int_equal(h->d->mode.block_len, 1024);
	assert_false(h->d->mode.compression);
	assert_false(h->d->mode.buffered);
}

static void unit_attention_to_others(void **state)
{
	struct host *h = *state;
	h->nexus = 0x200;
	tur(h);
	expect_sense(h, SK_UNIT_ATTENTION, ASC_POWER_ON_RESET);
	h->nexus = HOST_NEXUS;
	/* A select that changes nothing raises nothing. */
	uint8_t same[4] = {0, 0, 0x10, 0};
	select_(h, true, 0x10, same, 4);
	expect_good(h);
	h->nexus = 0x200;
	uint8_t b[BUF];
	sense(h, true, 0, 0x0A, 0, 255, b);
	expect_good(h);
	/* A change: every other nexus is told once, the one that made it is not. */
	h->nexus = HOST_NEXUS;
	uint8_t list[12] = {0, 0, 0x10, 8, 0, 0, 0, 0, 0, 0, 0x01, 0x00};
	select_(h, true, 0x10, list, 12);
	expect_good(h);
	sense(h, true, 0, 0x0A, 0, 255, b);
	expect_good(h);
	h->nexus = 0x200;
	sense(h, true, 0, 0x0A, 0, 255, b);
	expect_sense(h, SK_UNIT_ATTENTION, ASC_MODE_PARAMETERS_CHANGED);
	sense(h, true, 0, 0x0A, 0, 255, b);
	expect_good(h);
}

static void write_protect_and_control(void **state)
{
	struct host *h = *state;
	host_new_cart(h, "A00003L8", 0);
	struct ssc_medium m = {.barcode = "A00003L8", .write_protected = true};
	char err[128];
	assert_int_equal(ssc_insert(h->d, &m, err, sizeof err), 0);
	tur(h);
	expect_sense(h, SK_UNIT_ATTENTION, ASC_NOT_READY_TO_READY);
	uint8_t b[BUF];
	sense(h, true, 0, 0x0A, 0, 255, b);
	assert_int_equal(b[2], 0x90); /* WP and buffered */
	assert_int_equal(b[4], DENSITY_LTO8);
	/* The MODE SENSE(10) header too. */
	sense(h, false, 0, 0x0A, 0, 255, b);
	assert_int_equal(b[3], 0x90);
	EXPECT_RC(ssc_eject(h->d), 0);
	char bc[VTL_LABEL_LEN + 1];
	EXPECT_RC(ssc_remove(h->d, bc), 0);
	sense(h, true, 0, 0x0A, 0, 255, b);
	assert_int_equal(b[2], 0x10);
	/* SWP in the control page protects whatever is loaded; D_SENSE switches the sense format. */
	uint8_t list[BUF];
	uint16_t n = list_with_page(h, 0x0A, list);
	list[4 + 4] |= 0x08;
	list[4 + 2] |= 0x04;
	select_(h, true, 0x10, list, n);
	expect_good(h);
	assert_true(h->d->mode.swp);
	assert_true(h->d->dev.d_sense);
	sense(h, true, 0, 0x0A, 0, 255, b);
	assert_int_equal(b[2], 0x90);
	assert_int_equal(b[12 + 2] & 0x04, 0x04);
	sense(h, true, 0, 0x05, 0, 255, b);
	expect_cdb(h, 2, 5);
	assert_true(h->c.sense_desc);
	/* Other control bits stay as they are (QERR). */
	list[4 + 3] |= 0x02;
	select_(h, true, 0x10, list, n);
	expect_param(h, 7, 1);
}

static void worm_medium_type(void **state)
{
	struct host *h = *state;
	host_new_cart(h, "A00004LY", 0);
	host_load(h, "A00004LY");
	uint8_t b[BUF];
	sense(h, true, 0, 0x0A, 0, 255, b);
	expect_good(h);
	assert_int_equal(b[1], SSC_MEDIUM_TYPE_WORM);
	sense(h, false, 0, 0x0A, 0, 255, b);
	assert_int_equal(b[2], SSC_MEDIUM_TYPE_WORM);
}

static void partitions_refused(void **state)
{
	struct host *h = *state;
	host_new_cart(h, "A00005L8", 0);
	host_load(h, "A00005L8");
	uint8_t list[BUF];
	uint16_t n = list_with_page(h, 0x11, list);
	/* Partition size of the one partition, in units of 10^9 bytes: 12000 for LTO-8. */
	assert_int_equal(list[4 + 6] & 0x0F, 9);
	assert_int_equal(list[4 + 8] << 8 | list[4 + 9], 12000);
	/* Sending it back unchanged is accepted. */
	select_(h, true, 0x10, list, n);
	expect_good(h);
	/* Two partitions (ADDITIONAL PARTITIONS DEFINED 1) and format requests are refused. */
	list[4 + 3] = 1;
	select_(h, true, 0x10, list, n);
	expect_param(h, 7, 0);
	list[4 + 3] = 0;
	list[4 + 4] |= 0x20; /* IDP */
	select_(h, true, 0x10, list, n);
	expect_param(h, 8, 5);
}

static void informational_exceptions(void **state)
{
	struct host *h = *state;
	uint8_t list[BUF];
	uint16_t n = list_with_page(h, 0x1C, list);
	/* TEST with a TapeAlert flag number sets that flag; a negative number clears it. */
	list[4 + 2] |= 0x04;
	list[4 + 11] = 5;
	select_(h, true, 0x10, list, n);
	expect_good(h);
	assert_true(h->d->tapealert & (1ull << 4));
	assert_false(h->d->mode.test);
	list[4 + 8] = list[4 + 9] = list[4 + 10] = 0xFF;
	list[4 + 11] = (uint8_t)-5;
	select_(h, true, 0x10, list, n);
	expect_good(h);
	assert_false(h->d->tapealert & (1ull << 4));
	/* Flag numbers beyond 64. */
	list[4 + 8] = list[4 + 9] = list[4 + 10] = 0;
	list[4 + 11] = 65;
	select_(h, true, 0x10, list, n);
	expect_param(h, 12, 7);
	/* TEST without a flag number needs exceptions enabled. */
	list[4 + 11] = 0;
	select_(h, true, 0x10, list, n);
	expect_param(h, 6, 2);
	list[4 + 2] = 0x04; /* DEXCPT off */
	select_(h, true, 0x10, list, n);
	expect_good(h);
	assert_false(h->d->mode.dexcpt);
	assert_true(h->d->mode.test);
	/* A report count without TEST; MRIE 1 (obsolete) and 7 (reserved); MRIE 4 is kept. */
	list[4 + 2] = 0x08;
	list[4 + 11] = 1;
	select_(h, true, 0x10, list, n);
	expect_param(h, 12, 7);
	list[4 + 11] = 0;
	list[4 + 3] = 1;
	select_(h, true, 0x10, list, n);
	expect_param(h, 7, 3);
	list[4 + 3] = 7;
	select_(h, true, 0x10, list, n);
	expect_param(h, 7, 3);
	list[4 + 3] = 4;
	select_(h, true, 0x10, list, n);
	expect_good(h);
	assert_int_equal(h->d->mode.mrie, 4);
	assert_true(h->d->mode.dexcpt);
	/* The interval timer is not changeable. */
	list[4 + 7] = 1;
	select_(h, true, 0x10, list, n);
	expect_param(h, 11, 0);
}

static void other_generations(void **state)
{
	struct host *h = *state;
	host_drive_model(h, "HP", "Ultrium 6-SCSI");
	uint8_t b[BUF];
	sense(h, true, 0, 0x0A, 0, 255, b);
	expect_good(h);
	assert_int_equal(b[4], DENSITY_LTO6);
	/* An LTO-6 drive writes LTO-5 and LTO-6 densities, not LTO-7. */
	uint8_t list[12] = {0, 0, 0x10, 8, DENSITY_LTO5, 0, 0, 0, 0, 0, 0, 0};
	select_(h, true, 0x10, list, 12);
	expect_good(h);
	list[4] = DENSITY_LTO7;
	select_(h, true, 0x10, list, 12);
	expect_param(h, 4, 7);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(all_pages_six_and_ten, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(allocation_lengths, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(page_control, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(unknown_pages, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(page_zero_for_st, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(block_descriptor_select, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(header_fields, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(select_cdb_and_lengths, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(compression_reaches_drive, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(all_or_nothing, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(unit_attention_to_others, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(write_protect_and_control, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(worm_medium_type, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(partitions_refused, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(informational_exceptions, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(other_generations, host_setup, host_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
