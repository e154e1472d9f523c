/* SPDX-License-Identifier: Apache-2.0 */
/* INQUIRY as sg_inq decodes it: standard data and VPD pages 00h, 80h, 83h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "vtl/scsi/spc.h"

static const struct scsi_ident drive = {
	.type = SCSI_TYPE_TAPE, .vendor = "IBM", .product = "ULT3580-TD8", .revision = "Q3A1", .serial = "1013000412"};

static uint8_t buf[512];
static struct iovec iov[2];

/* An INQUIRY with allocation length alloc into two buffers of 20 bytes and the rest. */
static struct scsi_cmd inquiry(int evpd, uint8_t page, uint16_t alloc, size_t xfer)
{
	struct scsi_cmd c;
	memset(&c, 0, sizeof c);
	memset(buf, 0xEE, sizeof buf);
	c.cdb[0] = 0x12;
	c.cdb[1] = (uint8_t)evpd;
	c.cdb[2] = page;
	c.cdb[3] = (uint8_t)(alloc >> 8);
	c.cdb[4] = (uint8_t)alloc;
	c.cdb_len = 6;
	c.dir = SCSI_DIR_IN;
	c.xfer_len = xfer;
	iov[0] = (struct iovec){buf, 20};
	iov[1] = (struct iovec){buf + 20, sizeof buf - 20};
	c.iov = iov;
	c.iov_cnt = 2;
	return c;
}

static void standard_data(void **state)
{
	(void)state;
	struct scsi_cmd c = inquiry(0, 0, 96, 96);
	spc_inquiry(&drive, &c);
	assert_int_equal(c.status, SCSI_GOOD);
	assert_int_equal(c.data_len, 96);
	assert_int_equal(buf[0], 0x01);        /* sequential-access device */
	assert_int_equal(buf[1] & 0x80, 0x80); /* removable */
	assert_int_equal(buf[4], 91);          /* additional length */
	assert_memory_equal(buf + 8, "IBM     ", 8);
	assert_memory_equal(buf + 16, "ULT3580-TD8     ", 16);
	assert_memory_equal(buf + 32, "Q3A1", 4);
}

static void allocation_and_transfer_length_cut_it(void **state)
{
	(void)state;
	struct scsi_cmd c = inquiry(0, 0, 36, 255); /* the classic 36-byte INQUIRY */
	spc_inquiry(&drive, &c);
	assert_int_equal(c.data_len, 36);
	assert_int_equal(buf[36], 0xEE);
	c = inquiry(0, 0, 255, 5); /* the initiator asked to receive only 5 */
	spc_inquiry(&drive, &c);
	assert_int_equal(c.data_len, 5);
	assert_int_equal(buf[5], 0xEE);
}

static void vpd_pages(void **state)
{
	(void)state;
	struct scsi_cmd c = inquiry(1, 0x00, 255, 255);
	spc_inquiry(&drive, &c);
	assert_int_equal(c.data_len, 7);
	static const uint8_t sup[7] = {0x01, 0x00, 0x00, 0x03, 0x00, 0x80, 0x83};
	assert_memory_equal(buf, sup, 7);

	c = inquiry(1, 0x80, 255, 255);
	spc_inquiry(&drive, &c);
	assert_int_equal(buf[1], 0x80);
	assert_int_equal(buf[3], 10);
	assert_memory_equal(buf + 4, "1013000412", 10);

	c = inquiry(1, 0x83, 255, 255);
	spc_inquiry(&drive, &c);
	size_t len = 4 + ((size_t)buf[2] << 8 | buf[3]);
	assert_int_equal(c.data_len, len);
	/* Walk the designation descriptors as a host does. */
	int t10 = 0, naa = 0;
	for (size_t at = 4; at + 4 <= len; at += 4 + buf[at + 3]) {
		uint8_t type = buf[at + 1] & 0x0F;
		if (type == 1) {
			t10++;
			assert_int_equal(buf[at] & 0x0F, 2); /* ASCII */
			assert_memory_equal(buf + at + 4, "IBM     ULT3580-TD8     1013000412", 34);
		} else if (type == 3) {
			naa++;
			assert_int_equal(buf[at + 3], 8);
			assert_int_equal(buf[at + 4] >> 4, 3); /* NAA 3: locally assigned */
		}
	}
	assert_int_equal(t10, 1);
	assert_int_equal(naa, 1);
	assert_true(spc_naa_of("1013000412") != spc_naa_of("1013000413"));
}

static void bad_page_requests(void **state)
{
	(void)state;
	struct scsi_cmd c = inquiry(0, 0x80, 255, 255); /* a page code without EVPD */
	spc_inquiry(&drive, &c);
	assert_int_equal(c.status, SCSI_CHECK_CONDITION);
	assert_int_equal(c.sense.key, SK_ILLEGAL_REQUEST);
	assert_int_equal(c.sense.asc, ASC_INVALID_FIELD_IN_CDB);
	assert_int_equal(c.sense.sks_field, 2);
	c = inquiry(1, 0xB0, 255, 255); /* a VPD page this device does not have */
	spc_inquiry(&drive, &c);
	assert_int_equal(c.status, SCSI_CHECK_CONDITION);
	assert_int_equal(c.sense.sks_field, 2);
	assert_int_equal(c.data_len, 0);
}

static size_t extra_page(const void *arg, uint8_t *out)
{
	const char *s = arg;
	memcpy(out, s, 3);
	return 3;
}

/* A device's own pages: listed by 00h after the common three, answered, others still refused. */
static void device_vpd_pages(void **state)
{
	(void)state;
	static const struct spc_vpd_page extra[] = {{0xB0, extra_page}, {0xC7, extra_page}};
	struct scsi_cmd c = inquiry(1, 0x00, 255, 255);
	spc_inquiry_vpd(&drive, extra, 2, "abc", &c);
	assert_int_equal(c.data_len, 9);
	static const uint8_t sup[9] = {0x01, 0x00, 0x00, 0x05, 0x00, 0x80, 0x83, 0xB0, 0xC7};
	assert_memory_equal(buf, sup, 9);
	c = inquiry(1, 0xC7, 255, 255);
	spc_inquiry_vpd(&drive, extra, 2, "abc", &c);
	assert_int_equal(c.status, SCSI_GOOD);
	assert_int_equal(c.data_len, 7);
	static const uint8_t page[7] = {0x01, 0xC7, 0x00, 0x03, 'a', 'b', 'c'};
	assert_memory_equal(buf, page, 7);
	c = inquiry(1, 0xC6, 255, 255);
	spc_inquiry_vpd(&drive, extra, 2, "abc", &c);
	assert_int_equal(c.status, SCSI_CHECK_CONDITION);
	assert_int_equal(c.sense.asc, ASC_INVALID_FIELD_IN_CDB);
	assert_int_equal(c.sense.sks_field, 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(standard_data),
		cmocka_unit_test(allocation_and_transfer_length_cut_it),
		cmocka_unit_test(vpd_pages),
		cmocka_unit_test(bad_page_requests),
		cmocka_unit_test(device_vpd_pages),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
