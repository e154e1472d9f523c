/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The drive's identity as sg_inq / sg_vpd decode it: standard INQUIRY of
 * every IBM and HP model, every VPD page listed in 00h fetched and checked
 * for consistent lengths, and the vendor pages' fields.
 */
#include "tests/unit/scsi_host.h"

#include <stdio.h>
#include <string.h>

static uint8_t buf[512];

static int inquiry(struct host *h, bool evpd, uint8_t page, uint16_t alloc)
{
	uint8_t cdb[6] = {0x12, evpd ? 1 : 0, page, (uint8_t)(alloc >> 8), (uint8_t)alloc, 0};
	memset(buf, 0xEE, sizeof buf);
	return host_cmd(h, cdb, 6, SCSI_DIR_IN, buf, sizeof buf);
}

static uint16_t be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/* Fetches every page 00h lists and checks what sg_vpd relies on; returns the list (n pages). */
static unsigned pages_consistent(struct host *h, uint8_t *list)
{
	inquiry(h, true, 0x00, 255);
	expect_good(h);
	unsigned n = be16(buf + 2);
	assert_int_equal(h->c.data_len, 4 + n);
	memcpy(list, buf + 4, n);
	for (unsigned i = 0; i < n; i++) {
		assert_true(i == 0 || list[i] > list[i - 1]); /* ascending */
		inquiry(h, true, list[i], 255);
		expect_good(h);
		assert_int_equal(buf[0], 0x01);
		assert_int_equal(buf[1], list[i]);
		assert_int_equal(h->c.data_len, 4u + be16(buf + 2));
		/* A short allocation cuts the page, never changes it. */
		uint8_t full[256];
		memcpy(full, buf, h->c.data_len);
		inquiry(h, true, list[i], 5);
		assert_int_equal(h->c.data_len, 5);
		assert_memory_equal(buf, full, 5);
	}
	return n;
}

static void ibm_pages(void **state)
{
	struct host *h = *state;
	uint8_t list[64];
	unsigned n = pages_consistent(h, list);
	static const uint8_t want[] = {0x00, 0x80, 0x83, 0xB0, 0xB1, 0xC0, 0xC1};
	assert_int_equal(n, sizeof want);
	assert_memory_equal(list, want, sizeof want);
	/* B0h: WORM supported. */
	inquiry(h, true, 0xB0, 255);
	assert_int_equal(be16(buf + 2), 2);
	assert_int_equal(buf[4] & 0x01, 1);
	/* B1h: the serial. */
	inquiry(h, true, 0xB1, 255);
	assert_int_equal(be16(buf + 2), 10);
	assert_memory_equal(buf + 4, "1013000001", 10);
	/* C0h: 43 bytes as sg_vpd's IBM decoder wants: code name, time, date, platform. */
	inquiry(h, true, 0xC0, 255);
	assert_int_equal(h->c.data_len, 0x2B);
	assert_memory_equal(buf + 4, "V001        ", 12);
	assert_memory_equal(buf + 23, "20", 2);
	assert_memory_equal(buf + 31, "ULT3580-TD8 ", 12);
	/* C1h: manufacturing and reported serial numbers, 12 characters each. */
	inquiry(h, true, 0xC1, 255);
	assert_int_equal(h->c.data_len, 0x1C);
	assert_memory_equal(buf + 4, "1013000001  ", 12);
	assert_memory_equal(buf + 16, "1013000001  ", 12);
	/* Pages it does not have: INVALID FIELD IN CDB, byte 2. */
	static const uint8_t absent[] = {0x01, 0x86, 0xB2, 0xC2, 0xC5, 0xFF};
	for (unsigned i = 0; i < sizeof absent; i++) {
		inquiry(h, true, absent[i], 255);
		expect_sense(h, SK_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_CDB);
		assert_true(h->c.sense.sks_valid && h->c.sense.sks_cdb);
		assert_int_equal(h->c.sense.sks_field, 2);
	}
}

static void hp_pages(void **state)
{
	struct host *h = *state;
	host_drive_model(h, "HP", "Ultrium 6-SCSI");
	uint8_t list[64];
	unsigned n = pages_consistent(h, list);
	static const uint8_t want[] = {0x00, 0x80, 0x83, 0xB0, 0xB1, 0xC0, 0xC1, 0xC2, 0xC3, 0xC4, 0xC5};
	assert_int_equal(n, sizeof want);
	assert_memory_equal(list, want, sizeof want);
	static const char *const component[] = {"Firmware", "Hardware", "PCA", "Mechanism", "Head Assy", "ACI"};
	for (uint8_t p = 0xC0; p <= 0xC5; p++) {
		inquiry(h, true, p, 255);
		/* 96 bytes: component (26), version (19), date (24), variant (23), as sg_vpd's HP decoder reads them. */
		assert_int_equal(h->c.data_len, 96);
		assert_int_equal(buf[3], 0x5C);
		char f[27];
		snprintf(f, sizeof f, "%-26s", component[p - 0xC0]);
		assert_memory_equal(buf + 4, f, 26);
		assert_memory_equal(buf + 49, "2024/01/01", 10);
		assert_memory_equal(buf + 73, "Ultrium 6-SCSI ", 15);
	}
	inquiry(h, true, 0xC0, 255);
	assert_memory_equal(buf + 30, "V001 ", 5);
	inquiry(h, true, 0xC6, 255);
	expect_sense(h, SK_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_CDB);
	assert_int_equal(h->c.sense.sks_field, 2);
}

static void every_model(void **state)
{
	struct host *h = *state;
	for (unsigned gen = 5; gen <= 9; gen++) {
		for (int hp = 0; hp <= 1; hp++) {
			char product[17];
			snprintf(product, sizeof product, hp ? "Ultrium %u-SCSI" : "ULT3580-TD%u", gen);
			host_drive_model(h, hp ? "HP" : "IBM", product);
			inquiry(h, false, 0, 96);
			expect_good(h);
			assert_int_equal(h->c.data_len, 96);
			assert_int_equal(buf[0], 0x01);
			assert_int_equal(buf[1], 0x80);
			assert_int_equal(buf[5], 0x01); /* PROTECT: logical block protection is offered */
			char v[9], p[17];
			snprintf(v, sizeof v, "%-8s", hp ? "HP" : "IBM");
			snprintf(p, sizeof p, "%-16s", product);
			assert_memory_equal(buf + 8, v, 8);
			assert_memory_equal(buf + 16, p, 16);
			assert_memory_equal(buf + 32, "V001", 4);
			uint8_t list[64];
			pages_consistent(h, list);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(ibm_pages, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(hp_pages, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(every_model, host_setup, host_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
