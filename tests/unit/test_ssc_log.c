/* SPDX-License-Identifier: Apache-2.0 */
/*
 * LOG SENSE and LOG SELECT of the drive as a host sees them: the supported
 * pages, each page's parameters and values, page control, the parameter
 * pointer, allocation lengths, TapeAlert flags cleared by reading them,
 * resets per page with the unit attention to other nexuses, and every
 * refusal with its field pointer.
 */
#include "tests/unit/scsi_host.h"

#include <string.h>

#include "vtl/drive/ssc_internal.h"

#define BUF 1024

static size_t log_sense(struct host *h, uint8_t byte1, uint8_t pc_page, uint8_t subpage, uint16_t pointer,
			uint16_t alloc, uint8_t *buf)
{
	uint8_t cdb[10] = {0x4D, byte1, pc_page, subpage, 0, (uint8_t)(pointer >> 8), (uint8_t)pointer,
			   (uint8_t)(alloc >> 8), (uint8_t)alloc, 0};
	memset(buf, 0xEE, BUF);
	host_cmd(h, cdb, 10, SCSI_DIR_IN, buf, BUF);
	return h->c.data_len;
}

static int log_select(struct host *h, uint8_t byte1, uint8_t pc_page, uint8_t subpage, const uint8_t *data,
		      uint16_t len)
{
	uint8_t cdb[10] = {0x4C, byte1, pc_page, subpage, 0, 0, 0, (uint8_t)(len >> 8), (uint8_t)len, 0};
	uint8_t buf[BUF];
	if (len)
		memcpy(buf, data, len);
	return host_cmd(h, cdb, 10, len ? SCSI_DIR_OUT : SCSI_DIR_NONE, len ? buf : NULL, len);
}

/* The value of parameter code in a page of n bytes; fails if it is not there. */
static uint64_t param(const uint8_t *page, size_t n, uint16_t code, unsigned *len)
{
	for (size_t at = 4; at + 4 <= n; at += 4u + page[at + 3]) {
		if ((page[at] << 8 | page[at + 1]) != code)
			continue;
		uint64_t v = 0;
		for (unsigned i = 0; i < page[at + 3]; i++)
			v = v << 8 | page[at + 4 + i];
		if (len)
			*len = page[at + 3];
		return v;
	}
	fail_msg("parameter %04Xh not in page %02Xh", code, page[0] & 0x3F);
	return 0;
}

static void set_counters(struct ssc_drive *d)
{
	d->cnt.host_written = 3500000;
	d->cnt.medium_written = 1750000;
	d->cnt.host_read = 2000000;
	d->cnt.medium_read = 1000000;
	d->cnt.write_errors = 2;
	d->cnt.read_errors = 3;
}

static void supported_pages(void **state)
{
	struct host *h = *state;
	uint8_t b[BUF];
	size_t n = log_sense(h, 0, 0x40, 0, 0, BUF, b);
	expect_good(h);
	static const uint8_t pages[] = {0x00, 0x02, 0x03, 0x0C, 0x1B, 0x2E, 0x30, 0x31};
	assert_int_equal(n, 4 + sizeof pages);
	assert_int_equal(b[0], 0x80); /* DS, page 00h */
	assert_int_equal(b[2] << 8 | b[3], sizeof pages);
	assert_memory_equal(b + 4, pages, sizeof pages);
	/* Supported pages and subpages: SPF set, pairs including 00h/FFh itself. */
	n = log_sense(h, 0, 0x40, 0xFF, 0, BUF, b);
	expect_good(h);
	assert_int_equal(b[0], 0xC0);
	assert_int_equal(b[1], 0xFF);
	static const uint8_t pairs[] = {0x00, 0x00, 0x00, 0xFF, 0x02, 0x00, 0x03, 0x00,
					0x0C, 0x00, 0x1B, 0x00, 0x2E, 0x00, 0x30, 0x00, 0x31, 0x00};
	assert_int_equal(n, 4 + sizeof pairs);
	assert_memory_equal(b + 4, pairs, sizeof pairs);
}

static void cdb_errors(void **state)
{
	struct host *h = *state;
	uint8_t b[BUF];
	log_sense(h, 0x01, 0x40 | 0x02, 0, 0, BUF, b);
	expect_invalid_field(h, ASC_INVALID_FIELD_IN_CDB, true, 1, 0);
	log_sense(h, 0x02, 0x40 | 0x02, 0, 0, BUF, b);
	expect_invalid_field(h, ASC_INVALID_FIELD_IN_CDB, true, 1, 1);
	log_sense(h, 0, 0x40 | 0x05, 0, 0, BUF, b);
	expect_invalid_field(h, ASC_INVALID_FIELD_IN_CDB, true, 2, 5);
	log_sense(h, 0, 0x40 | 0x02, 0x01, 0, BUF, b);
	expect_invalid_field(h, ASC_INVALID_FIELD_IN_CDB, true, 3, 7);
	log_sense(h, 0, 0x40 | 0x02, 0xFF, 0, BUF, b);
	expect_invalid_field(h, ASC_INVALID_FIELD_IN_CDB, true, 3, 7);
	/* A parameter pointer past the page's last parameter; page 00h has none. */
	log_sense(h, 0, 0x40 | 0x02, 0, 7, BUF, b);
	expect_invalid_field(h, ASC_INVALID_FIELD_IN_CDB, true, 5, 7);
	log_sense(h, 0, 0x40 | 0x2E, 0, 65, BUF, b);
	expect_invalid_field(h, ASC_INVALID_FIELD_IN_CDB, true, 5, 7);
	log_sense(h, 0, 0x40, 0, 1, BUF, b);
	expect_invalid_field(h, ASC_INVALID_FIELD_IN_CDB, true, 5, 7);
	/* LOG SELECT: SP, PCR with a list, unknown page with no list. */
	log_select(h, 0x01, 0xC0, 0, NULL, 0);
	expect_invalid_field(h, ASC_INVALID_FIELD_IN_CDB, true, 1, 0);
	uint8_t list[4] = {0x02, 0, 0, 0};
	log_select(h, 0x02, 0x40, 0, list, 4);
	expect_invalid_field(h, ASC_INVALID_FIELD_IN_CDB, true, 1, 1);
	log_select(h, 0x02, 0x40 | 0x07, 0, NULL, 0);
	expect_invalid_field(h, ASC_INVALID_FIELD_IN_CDB, true, 2, 5);
	log_select(h, 0x02, 0x40 | 0x0C, 0x03, NULL, 0);
	expect_invalid_field(h, ASC_INVALID_FIELD_IN_CDB, true, 3, 7);
}

static void error_counter_pages(void **state)
{
	struct host *h = *state;
	set_counters(h->d);
	uint8_t b[BUF];
	size_t n = log_sense(h, 0, 0x40 | 0x02, 0, 0, BUF, b);
	expect_good(h);
	assert_int_equal(b[0], 0x82);
	assert_int_equal(b[2] << 8 | b[3], n - 4);
	for (uint16_t code = 0; code <= 4; code++)
		assert_int_equal(param(b, n, code, NULL), 0);
	unsigned len;
	assert_int_equal(param(b, n, 5, &len), 3500000);
	assert_int_equal(len, 8);
	assert_int_equal(param(b, n, 6, NULL), 2);
	assert_int_equal(b[6], 0x20); /* control byte: TSD, bounded data counter */
	n = log_sense(h, 0, 0x40 | 0x03, 0, 0, BUF, b);
	expect_good(h);
	assert_int_equal(param(b, n, 5, NULL), 2000000);
	assert_int_equal(param(b, n, 6, NULL), 3);
	/* Thresholds are each counter's maximum; default cumulative values are zero. */
	n = log_sense(h, 0, 0x00 | 0x02, 0, 0, BUF, b);
	expect_good(h);
	assert_int_equal(param(b, n, 6, NULL), 0xFFFFFFFF);
	assert_true(param(b, n, 5, NULL) == UINT64_MAX);
	n = log_sense(h, 0, 0x80 | 0x02, 0, 0, BUF, b);
	assert_int_equal(param(b, n, 6, NULL), 0xFFFFFFFF);
	n = log_sense(h, 0, 0xC0 | 0x02, 0, 0, BUF, b);
	expect_good(h);
	assert_int_equal(param(b, n, 5, NULL), 0);
	assert_int_equal(param(b, n, 6, NULL), 0);
	/* The parameter pointer: parameters from code 5 on. */
	n = log_sense(h, 0, 0x40 | 0x02, 0, 5, BUF, b);
	expect_good(h);
	assert_int_equal(n, 4 + 12 + 8);
	assert_int_equal(b[4] << 8 | b[5], 5);
}

static void sequential_and_compression(void **state)
{
	struct host *h = *state;
	set_counters(h->d);
	uint8_t b[BUF];
	size_t n = log_sense(h, 0, 0x40 | 0x0C, 0, 0, BUF, b);
	expect_good(h);
	assert_int_equal(param(b, n, 0x0000, NULL), 3500000);
	assert_int_equal(param(b, n, 0x0001, NULL), 1750000);
	assert_int_equal(param(b, n, 0x0002, NULL), 1000000);
	assert_int_equal(param(b, n, 0x0003, NULL), 2000000);
	assert_int_equal(param(b, n, 0x0004, NULL), 0); /* no medium */
	assert_int_equal(param(b, n, 0x0100, NULL), 0);
	h->d->tapealert |= 1ull << (TA_CLEAN_NOW - 1);
	n = log_sense(h, 0, 0x40 | 0x0C, 0, 0, BUF, b);
	assert_int_equal(param(b, n, 0x0100, NULL), 1);
	n = log_sense(h, 0, 0x40 | 0x1B, 0, 0, BUF, b);
	expect_good(h);
	assert_int_equal(param(b, n, 0x0000, NULL), 200); /* read ratio x100 */
	assert_int_equal(param(b, n, 0x0001, NULL), 200);
	assert_int_equal(param(b, n, 0x0002, NULL), 2);  /* MB to the server */
	assert_int_equal(param(b, n, 0x0003, NULL), 0);
	assert_int_equal(param(b, n, 0x0004, NULL), 1);
	assert_int_equal(param(b, n, 0x0006, NULL), 3);  /* MB from the server ... */
	assert_int_equal(param(b, n, 0x0007, NULL), 500000); /* ... and the bytes beyond */
	assert_int_equal(param(b, n, 0x0008, NULL), 1);
	assert_int_equal(param(b, n, 0x0009, NULL), 750000);
}

/* Real WRITE and READ commands reach the counters: host bytes as sent, medium bytes after compression. */
static void counters_follow_the_data_path(void **state)
{
	struct host *h = *state;
	host_new_cart(h, "E00001L8", 0);
	host_load(h, "E00001L8");
	static uint8_t data[65536];
	gen_data(data, sizeof data, 1, true); /* text: compresses */
	uint8_t cdb[6];
	for (int i = 0; i < 4; i++) {
		host_cmd(h, cdb, cdb_write6(cdb, false, sizeof data), SCSI_DIR_OUT, data, sizeof data);
		expect_good(h);
	}
	host_cmd(h, cdb, cdb_simple(cdb, 0x01), SCSI_DIR_NONE, NULL, 0);
	host_cmd(h, cdb, cdb_read6(cdb, false, false, sizeof data), SCSI_DIR_IN, data, sizeof data);
	expect_good(h);
	uint8_t b[BUF];
	size_t n = log_sense(h, 0, 0x40 | 0x0C, 0, 0, BUF, b);
	expect_good(h);
	assert_int_equal(param(b, n, 0x0000, NULL), 4 * sizeof data);
	uint64_t medium = param(b, n, 0x0001, NULL);
	assert_true(medium > 0 && medium < 4 * sizeof data);
	uint64_t read_medium = param(b, n, 0x0002, NULL);
	assert_true(read_medium > 0 && read_medium < sizeof data);
	assert_int_equal(param(b, n, 0x0003, NULL), sizeof data);
}

/* Page 30h: the cartridge's history as its MAM holds it, across loads. */
static void tape_usage(void **state)
{
	struct host *h = *state;
	uint8_t b[BUF];
	size_t n = log_sense(h, 0, 0x40 | 0x30, 0, 0, BUF, b);
	expect_good(h);
	assert_int_equal(param(b, n, 0x0001, NULL), 0); /* no medium */
	host_new_cart(h, "E00002L8", 0);
	host_load(h, "E00002L8");
	static uint8_t data[1u << 20];
	gen_data(data, sizeof data, 2, false);
	uint8_t cdb[6];
	for (int i = 0; i < 12; i++) {
		host_cmd(h, cdb, cdb_write6(cdb, false, sizeof data), SCSI_DIR_OUT, data, sizeof data);
		expect_good(h);
	}
	n = log_sense(h, 0, 0x40 | 0x30, 0, 0, BUF, b);
	unsigned len;
	assert_int_equal(param(b, n, 0x0001, &len), 1);
	assert_int_equal(len, 4);
	assert_int_equal(param(b, n, 0x0002, &len), 12ull * (1u << 20) / 5111808); /* LTO-8 data sets */
	assert_int_equal(len, 8);
	assert_int_equal(param(b, n, 0x0004, &len), 0);
	assert_int_equal(len, 2);
	assert_int_equal(param(b, n, 0x000B, NULL), 0);
	/* Unloaded and loaded again: two threads, the data sets still counted. */
	EXPECT_RC(ssc_eject(h->d), 0);
	char bc[VTL_LABEL_LEN + 1];
	EXPECT_RC(ssc_remove(h->d, bc), 0);
	host_load(h, "E00002L8");
	n = log_sense(h, 0, 0x40 | 0x30, 0, 0, BUF, b);
	assert_int_equal(param(b, n, 0x0001, NULL), 2);
	assert_int_equal(param(b, n, 0x0002, NULL), 12ull * (1u << 20) / 5111808);
}

static void tapealert_read_clears(void **state)
{
	struct host *h = *state;
	h->d->tapealert = (1ull << 2) | (1ull << 19); /* flags 3 and 20 */
	uint8_t b[BUF];
	/* The header alone (as sg_logs reads first) clears nothing. */
	size_t n = log_sense(h, 0, 0x40 | 0x2E, 0, 0, 4, b);
	expect_good(h);
	assert_int_equal(n, 4);
	assert_int_equal(b[2] << 8 | b[3], 64 * 5);
	assert_int_equal(h->d->tapealert, (1ull << 2) | (1ull << 19));
	/* Up to flag 3 only: flag 3 is read and cleared, flag 20 stays. */
	n = log_sense(h, 0, 0x40 | 0x2E, 0, 0, 4 + 3 * 5, b);
	assert_int_equal(n, 19);
	assert_int_equal(b[4 + 2 * 5 + 1], 3);
	assert_int_equal(b[4 + 2 * 5 + 4], 1);
	assert_int_equal(h->d->tapealert, 1ull << 19);
	/* Default values show nothing and clear nothing. */
	n = log_sense(h, 0, 0xC0 | 0x2E, 0, 0, BUF, b);
	assert_int_equal(param(b, n, 20, NULL), 0);
	assert_int_equal(h->d->tapealert, 1ull << 19);
	/* The whole page: 64 parameters of one byte. */
	n = log_sense(h, 0, 0x40 | 0x2E, 0, 0, BUF, b);
	expect_good(h);
	assert_int_equal(n, 4 + 64 * 5);
	for (uint16_t f = 1; f <= 64; f++)
		assert_int_equal(param(b, n, f, NULL), f == 20);
	assert_int_equal(b[4 + 2], 0x23); /* TSD, binary list */
	assert_int_equal(h->d->tapealert, 0);
	n = log_sense(h, 0, 0x40 | 0x2E, 0, 0, BUF, b);
	assert_int_equal(param(b, n, 20, NULL), 0);
	/* With a parameter pointer the page starts at that flag. */
	h->d->tapealert = 1ull << 63;
	n = log_sense(h, 0, 0x40 | 0x2E, 0, 64, BUF, b);
	assert_int_equal(n, 4 + 5);
	assert_int_equal(b[5], 64);
	assert_int_equal(b[8], 1);
	assert_int_equal(h->d->tapealert, 0);
}

static void tapealert_test_flag(void **state)
{
	struct host *h = *state;
	/* MODE SELECT page 1Ch with TEST and flag number 9 sets TapeAlert flag 9 (write protect). */
	uint8_t list[16] = {0, 0, 0x10, 0, 0x1C, 0x0A, 0x0C, 3, 0, 0, 0, 0, 0, 0, 0, 9};
	uint8_t cdb[6] = {0x15, 0x10, 0, 0, 16, 0};
	host_cmd(h, cdb, 6, SCSI_DIR_OUT, list, 16);
	expect_good(h);
	uint8_t b[BUF];
	size_t n = log_sense(h, 0, 0x40 | 0x2E, 0, 0, BUF, b);
	assert_int_equal(param(b, n, 9, NULL), 1);
	n = log_sense(h, 0, 0x40 | 0x2E, 0, 0, BUF, b);
	assert_int_equal(param(b, n, 9, NULL), 0);
}

static void tape_capacity(void **state)
{
	struct host *h = *state;
	uint8_t b[BUF];
	/* No medium: zeros, not NOT READY (the page is the drive's, as on IBM drives). */
	size_t n = log_sense(h, 0, 0x40 | 0x31, 0, 0, BUF, b);
	expect_good(h);
	assert_int_equal(n, 4 + 4 * 8);
	for (uint16_t code = 1; code <= 4; code++)
		assert_int_equal(param(b, n, code, NULL), 0);
	host_new_cart(h, "A00001L8", 300ull << 20);
	host_load(h, "A00001L8");
	n = log_sense(h, 0, 0x40 | 0x31, 0, 0, BUF, b);
	expect_good(h);
	unsigned len;
	assert_int_equal(param(b, n, 3, &len), 300);
	assert_int_equal(len, 4);
	uint64_t remaining = param(b, n, 1, NULL);
	assert_true(remaining <= 300 && remaining >= 299);
	assert_int_equal(param(b, n, 2, NULL), 0);
	assert_int_equal(param(b, n, 4, NULL), 0);
	/* A nominal LTO-8 cartridge: 12 TB in MiB. */
	host_new_cart(h, "A00002L8", 0);
	EXPECT_RC(ssc_eject(h->d), 0);
	char bc[VTL_LABEL_LEN + 1];
	EXPECT_RC(ssc_remove(h->d, bc), 0);
	host_load(h, "A00002L8");
	n = log_sense(h, 0, 0x40 | 0x31, 0, 0, BUF, b);
	assert_int_equal(param(b, n, 3, NULL), 12000000000000ull >> 20);
	/* The sequential-access page's capacity to EOD is there with a medium. */
	n = log_sense(h, 0, 0x40 | 0x0C, 0, 0, BUF, b);
	expect_good(h);
	assert_true(param(b, n, 4, NULL) < 1);
}

static void allocation_lengths(void **state)
{
	struct host *h = *state;
	set_counters(h->d);
	uint8_t full[BUF], b[BUF];
	size_t n = log_sense(h, 0, 0x40 | 0x0C, 0, 0, BUF, full);
	uint16_t allocs[] = {0, 1, 3, 17, 31};
	for (unsigned i = 0; i < 5; i++) {
		size_t got = log_sense(h, 0, 0x40 | 0x0C, 0, 0, allocs[i], b);
		expect_good(h);
		assert_int_equal(got, allocs[i]);
		assert_memory_equal(b, full, got);
		assert_int_equal(b[got], 0xEE);
	}
	assert_true(n > 31);
}

static void reset_per_page_and_all(void **state)
{
	struct host *h = *state;
	set_counters(h->d);
	h->nexus = 0x200;
	uint8_t cdb[6] = {0};
	host_cmd(h, cdb, 6, SCSI_DIR_NONE, NULL, 0);
	expect_sense(h, SK_UNIT_ATTENTION, ASC_POWER_ON_RESET);
	h->nexus = HOST_NEXUS;
	/* PC 01b without PCR changes nothing and raises nothing. */
	log_select(h, 0, 0x40, 0, NULL, 0);
	expect_good(h);
	h->nexus = 0x200;
	uint8_t b[BUF];
	size_t n = log_sense(h, 0, 0x40 | 0x02, 0, 0, BUF, b);
	expect_good(h);
	h->nexus = HOST_NEXUS;
	/* PC 11b on page 02h: that page starts from zero, the others keep counting. */
	log_select(h, 0, 0xC0 | 0x02, 0, NULL, 0);
	expect_good(h);
	n = log_sense(h, 0, 0x40 | 0x02, 0, 0, BUF, b);
	assert_int_equal(param(b, n, 5, NULL), 0);
	assert_int_equal(param(b, n, 6, NULL), 0);
	n = log_sense(h, 0, 0x40 | 0x03, 0, 0, BUF, b);
	assert_int_equal(param(b, n, 6, NULL), 3);
	h->d->cnt.write_errors++;
	n = log_sense(h, 0, 0x40 | 0x02, 0, 0, BUF, b);
	assert_int_equal(param(b, n, 6, NULL), 1);
	/* The other nexus is told once. */
	h->nexus = 0x200;
	log_sense(h, 0, 0x40, 0, 0, BUF, b);
	expect_sense(h, SK_UNIT_ATTENTION, ASC_LOG_PARAMETERS_CHANGED);
	log_sense(h, 0, 0x40, 0, 0, BUF, b);
	expect_good(h);
	/* PCR for all pages (page code 0): every counter page starts from zero; the drive's counters are untouched. */
	log_select(h, 0x02, 0x40, 0, NULL, 0);
	expect_good(h);
	static const uint8_t pages[] = {0x02, 0x03, 0x0C, 0x1B};
	for (unsigned i = 0; i < 4; i++) {
		n = log_sense(h, 0, 0x40 | pages[i], 0, 0, BUF, b);
		for (size_t at = 4; at < n; at += 4u + b[at + 3])
			for (unsigned k = 0; k < b[at + 3]; k++)
				assert_int_equal(b[at + 4 + k], 0);
	}
	assert_int_equal(h->d->cnt.host_written, 3500000);
	h->nexus = HOST_NEXUS;
	log_sense(h, 0, 0x40, 0, 0, BUF, b);
	expect_sense(h, SK_UNIT_ATTENTION, ASC_LOG_PARAMETERS_CHANGED);
	/* Resetting a page without counters (TapeAlert) raises nothing. */
	log_select(h, 0x02, 0x40 | 0x2E, 0, NULL, 0);
	expect_good(h);
	h->nexus = 0x200;
	log_sense(h, 0, 0x40, 0, 0, BUF, b);
	expect_good(h);
}

static void select_parameter_lists(void **state)
{
	struct host *h = *state;
	/* Empty pages are accepted; parameter values are not settable. */
	uint8_t list[16] = {0x02, 0, 0, 0, 0x0C, 0, 0, 0};
	log_select(h, 0, 0x40, 0, list, 8);
	expect_good(h);
	uint8_t withparam[12] = {0x02, 0, 0, 8, 0, 6, 0x20, 4, 0, 0, 0, 0};
	log_select(h, 0, 0x40, 0, withparam, 12);
	expect_invalid_field(h, ASC_INVALID_FIELD_IN_PARAMETERS, false, 4, 7);
	/* A page that runs past the list, a header cut short. */
	log_select(h, 0, 0x40, 0, withparam, 10);
	expect_sense(h, SK_ILLEGAL_REQUEST, ASC_PARAMETER_LIST_LENGTH);
	log_select(h, 0, 0x40, 0, list, 6);
	expect_sense(h, SK_ILLEGAL_REQUEST, ASC_PARAMETER_LIST_LENGTH);
	/* A page the drive does not have, the supported pages page, a subpage it lacks. */
	uint8_t bad[8] = {0x02, 0, 0, 0, 0x07, 0, 0, 0};
	log_select(h, 0, 0x40, 0, bad, 8);
	expect_invalid_field(h, ASC_INVALID_FIELD_IN_PARAMETERS, false, 4, 5);
	bad[4] = 0x00;
	log_select(h, 0, 0x40, 0, bad, 8);
	expect_invalid_field(h, ASC_INVALID_FIELD_IN_PARAMETERS, false, 4, 5);
	bad[4] = 0x42;
	bad[5] = 0x01;
	log_select(h, 0, 0x40, 0, bad, 8);
	expect_invalid_field(h, ASC_INVALID_FIELD_IN_PARAMETERS, false, 4, 5);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(supported_pages, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(cdb_errors, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(error_counter_pages, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(sequential_and_compression, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(counters_follow_the_data_path, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(tape_usage, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(tapealert_read_clears, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(tapealert_test_flag, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(tape_capacity, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(allocation_lengths, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(reset_per_page_and_all, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(select_parameter_lists, host_setup, host_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
