/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Medium auxiliary memory as a host sees it: READ ATTRIBUTE's service
 * actions, WRITE ATTRIBUTE's checks, the attributes the drive maintains
 * across loads, the catalog round trip and a drive without a catalog.
 */
#include "tests/unit/scsi_host.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "common/vtl_error.h"
#include "vtl/drive/ssc_internal.h"
#include "vtl/library/drive_store.h"

#define BUF 8192
static uint8_t buf[BUF];

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint16_t be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/* READ ATTRIBUTE (8Ch) into buf. */
static int read_attr(struct host *h, uint8_t sa, uint16_t first, uint32_t alloc, bool cache)
{
	uint8_t cdb[16] = {0x8C, sa};
	cdb[8] = (uint8_t)(first >> 8);
	cdb[9] = (uint8_t)first;
	cdb[10] = (uint8_t)(alloc >> 24);
	cdb[11] = (uint8_t)(alloc >> 16);
	cdb[12] = (uint8_t)(alloc >> 8);
	cdb[13] = (uint8_t)alloc;
	cdb[14] = cache ? 1 : 0;
	memset(buf, 0xEE, sizeof buf);
	return host_cmd(h, cdb, 16, SCSI_DIR_IN, buf, sizeof buf);
}

/* WRITE ATTRIBUTE (8Dh) with the parameter list p of n bytes. */
static int write_attr(struct host *h, const uint8_t *p, uint32_t n)
{
	uint8_t cdb[16] = {0x8D};
	cdb[10] = (uint8_t)(n >> 24);
	cdb[11] = (uint8_t)(n >> 16);
	cdb[12] = (uint8_t)(n >> 8);
	cdb[13] = (uint8_t)n;
	static uint8_t out[BUF];
	memcpy(out, p, n);
	return host_cmd(h, cdb, 16, SCSI_DIR_OUT, out, n);
}

/* Appends one attribute (id, format, value) to a parameter list being built at *at. */
static void add_attr(uint8_t *p, size_t *at, uint16_t id, uint8_t format, const void *val, uint16_t len)
{
	p[*at] = (uint8_t)(id >> 8);
	p[*at + 1] = (uint8_t)id;
	p[*at + 2] = format;
	p[*at + 3] = (uint8_t)(len >> 8);
	p[*at + 4] = (uint8_t)len;
	memcpy(p + *at + 5, val, len);
	*at += 5u + len;
}

/* Writes the one attribute given; returns the status. */
static int write_one(struct host *h, uint16_t id, uint8_t format, const void *val, uint16_t len)
{
	uint8_t p[600] = {0};
	size_t at = 4;
	add_attr(p, &at, id, format, val, len);
	p[3] = (uint8_t)(at - 4);
	return write_attr(h, p, (uint32_t)at);
}

/* The attribute id in an ATTRIBUTE VALUES answer in buf; NULL if absent. */
static const uint8_t *find_attr(uint16_t id)
{
	uint32_t avail = be32(buf);
	for (uint32_t at = 4; at + 5 <= avail + 4; at += 5u + be16(buf + at + 3))
		if (be16(buf + at) == id)
			return buf + at;
	return NULL;
}

/* The value of a binary attribute (up to 8 bytes), failing if it is absent. */
static uint64_t attr_num(struct host *h, uint16_t id)
{
	read_attr(h, 0x00, 0, BUF, false);
	expect_good(h);
	const uint8_t *a = find_attr(id);
	if (!a)
		fail_msg("attribute %04Xh missing", id);
	uint64_t v = 0;
	for (unsigned i = 0; i < be16(a + 3); i++)
		v = v << 8 | a[5 + i];
	return v;
}

static void unload_remove(struct host *h)
{
	char bc[VTL_LABEL_LEN + 1];
	EXPECT_RC(ssc_eject(h->d), 0);
	EXPECT_RC(ssc_remove(h->d, bc), 0);
}

/* Replaces the host's drive with an IBM LTO-8 over catalog cat (may be NULL), cleaning clean_ms long. */
static void replace_drive(struct host *h, struct vtl_catalog *cat, unsigned clean_ms)
{
	ssc_destroy(h->d);
	struct ssc_config cfg = {.pool = h->fx->pool, .clean_ms = clean_ms};
	library_drive_store(&cfg, cat);
	snprintf(cfg.ident.vendor, sizeof cfg.ident.vendor, "IBM");
	snprintf(cfg.ident.product, sizeof cfg.ident.product, "ULT3580-TD8");
	snprintf(cfg.ident.revision, sizeof cfg.ident.revision, "V001");
	snprintf(cfg.ident.serial, sizeof cfg.ident.serial, "1013000002");
	EXPECT_RC(ssc_create(&cfg, &h->d), 0);
	uint8_t cdb[6];
	host_cmd(h, cdb, cdb_simple(cdb, 0x00), SCSI_DIR_NONE, NULL, 0);
	expect_sense(h, SK_UNIT_ATTENTION, ASC_POWER_ON_RESET);
}

static void expect_param_pointer(struct host *h, uint16_t byte)
{
	expect_sense(h, SK_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_PARAMETERS);
	assert_true(h->c.sense.sks_valid);
	assert_false(h->c.sense.sks_cdb);
	assert_int_equal(h->c.sense.sks_field, byte);
}

static void expect_cdb_pointer(struct host *h, uint16_t byte)
{
	expect_sense(h, SK_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_CDB);
	assert_true(h->c.sense.sks_valid);
	assert_true(h->c.sense.sks_cdb);
	assert_int_equal(h->c.sense.sks_field, byte);
}

static void no_medium_not_ready(void **state)
{
	struct host *h = *state;
	read_attr(h, 0x00, 0, BUF, false);
	expect_sense(h, SK_NOT_READY, ASC_MEDIUM_NOT_PRESENT);
	read_attr(h, 0x00, 0, BUF, true); /* CACHE: nothing was ever loaded */
	expect_sense(h, SK_NOT_READY, ASC_MEDIUM_NOT_PRESENT);
	write_one(h, 0x0800, 1, "APPVEND ", 8);
	expect_sense(h, SK_NOT_READY, ASC_MEDIUM_NOT_PRESENT);
}

static void device_and_medium_attributes(void **state)
{
	struct host *h = *state;
	host_new_cart(h, "A00001L8", 0);
	host_load(h, "A00001L8");
	read_attr(h, 0x00, 0, BUF, false);
	expect_good(h);
	uint32_t avail = be32(buf);
	assert_int_equal(h->c.data_len, avail + 4);
	/* Every attribute in ascending order, each header consistent. */
	uint16_t last = 0;
	unsigned count = 0;
	for (uint32_t at = 4; at < avail + 4; at += 5u + be16(buf + at + 3), count++) {
		uint16_t id = be16(buf + at);
		assert_true(count == 0 || id > last);
		last = id;
		assert_true(id < 0x0800); /* no host attribute exists yet */
		assert_int_equal(buf[at + 2] & 0x80, 0x80); /* device and medium attributes are read only */
	}
	assert_int_equal(count, 24);
	const uint64_t mib = 1ull << 20;
	assert_int_equal(attr_num(h, 0x0000), VTL_CAP_LTO8 / mib); /* blank: all of it remains */
	assert_int_equal(attr_num(h, 0x0001), VTL_CAP_LTO8 / mib);
	assert_int_equal(attr_num(h, 0x0003), 1);                  /* load count */
	assert_int_equal(attr_num(h, 0x0006), 0x5E);
	assert_int_equal(attr_num(h, 0x0007), 0);
	assert_int_equal(attr_num(h, 0x0402), 960);                /* meters */
	assert_int_equal(attr_num(h, 0x0403), 127);
	assert_int_equal(attr_num(h, 0x0405), 0x5E);
	assert_int_equal(attr_num(h, 0x0407), 16384);
	assert_int_equal(attr_num(h, 0x0408), 0x00);               /* data medium */
	assert_true(attr_num(h, 0x0004) < 16384);                  /* MAM space remaining */
	const uint8_t *a = find_attr(0x0005);
	assert_int_equal(a[2], 0x81); /* read only, ASCII */
	assert_int_equal(be16(a + 3), 8);
	assert_memory_equal(a + 5, "LTO-CVE ", 8);
	a = find_attr(0x0400);
	assert_memory_equal(a + 5, "IBM     ", 8);
	a = find_attr(0x0401);
	assert_int_equal(be16(a + 3), 32);
	assert_memory_equal(a + 5, "VTLA00001L8 ", 12);
	a = find_attr(0x020A);
	assert_int_equal(be16(a + 3), 40);
	assert_memory_equal(a + 5, "IBM     1013000001 ", 19);
	assert_null(find_attr(0x020B)); /* only one load so far */
	a = find_attr(0x0003);
	assert_int_equal(a[2], 0x80); /* read only, binary */
	assert_int_equal(be16(a + 3), 8);
	a = find_attr(0x0406);
	assert_int_equal(be16(a + 3), 8);
	assert_true(a[5] == '2' && a[6] == '0'); /* YYYYMMDD of the first load */
}

static void allocation_and_first_attribute(void **state)
{
	struct host *h = *state;
	host_new_cart(h, "A00002L8", 0);
	host_load(h, "A00002L8");
	read_attr(h, 0x00, 0, BUF, false);
	uint8_t full[BUF];
	size_t full_len = h->c.data_len;
	memcpy(full, buf, full_len);
	/* A short allocation cuts the data and leaves AVAILABLE DATA alone. */
	read_attr(h, 0x00, 0, 10, false);
	expect_good(h);
	assert_int_equal(h->c.data_len, 10);
	assert_memory_equal(buf, full, 10);
	assert_int_equal(buf[10], 0xEE);
	read_attr(h, 0x00, 0, 0, false);
	expect_good(h);
	assert_int_equal(h->c.data_len, 0);
	/* FIRST ATTRIBUTE IDENTIFIER: from 0400h on; an identifier between two starts at the next. */
	read_attr(h, 0x00, 0x0400, BUF, false);
	expect_good(h);
	assert_int_equal(be16(buf + 4), 0x0400);
	read_attr(h, 0x00, 0x0301, BUF, false);
	assert_int_equal(be16(buf + 4), 0x0400);
	read_attr(h, 0x00, 0x0410, BUF, false);
	expect_good(h);
	assert_int_equal(be32(buf), 0); /* nothing at or above it yet */
	assert_int_equal(h->c.data_len, 4);
	/* ATTRIBUTE LIST: identifiers only, from the first asked. */
	read_attr(h, 0x01, 0x0400, BUF, false);
	expect_good(h);
	assert_int_equal(be32(buf), 2 * 10);
	assert_int_equal(be16(buf + 4), 0x0400);
	assert_int_equal(be16(buf + 4 + 18), 0x0409);
	read_attr(h, 0x01, 0, BUF, false);
	assert_int_equal(be32(buf), 2 * 24);
	/* SUPPORTED ATTRIBUTES: host attributes too, set or not. */
	read_attr(h, 0x05, 0x0800, BUF, false);
	expect_good(h);
	static const uint16_t host_ids[] = {0x0800, 0x0801, 0x0802, 0x0803, 0x0804, 0x0805,
					    0x0806, 0x0807, 0x0808, 0x080B, 0x080C};
	assert_int_equal(be32(buf), 2 * 11);
	for (unsigned i = 0; i < 11; i++)
		assert_int_equal(be16(buf + 4 + 2 * i), host_ids[i]);
	read_attr(h, 0x05, 0, 6, false);
	assert_int_equal(h->c.data_len, 6);
	assert_int_equal(be32(buf), 2 * 38);
	assert_int_equal(be16(buf + 4), 0x0000);
	/* LOGICAL VOLUME LIST and PARTITION LIST: one of each, numbered 0. */
	static const uint8_t one[4] = {0x00, 0x02, 0x00, 0x01};
	for (uint8_t sa = 0x02; sa <= 0x03; sa++) {
		read_attr(h, sa, 0, BUF, false);
		expect_good(h);
		assert_int_equal(h->c.data_len, 4);
		assert_memory_equal(buf, one, 4);
		read_attr(h, sa, 0, 3, false);
		assert_int_equal(h->c.data_len, 3);
	}
}

static void bad_cdb_fields(void **state)
{
	struct host *h = *state;
	host_new_cart(h, "A00003L8", 0);
	host_load(h, "A00003L8");
	static const uint8_t bad_sa[] = {0x04, 0x06, 0x1F};
	for (unsigned i = 0; i < sizeof bad_sa; i++) {
		read_attr(h, bad_sa[i], 0, BUF, false);
		expect_cdb_pointer(h, 1);
		assert_true(h->c.sense.sks_bit_valid);
		assert_int_equal(h->c.sense.sks_bit, 4);
	}
	uint8_t cdb[16] = {0x8C, 0x00};
	cdb[13] = 0xFF;
	cdb[5] = 1; /* logical volume 1 */
	host_cmd(h, cdb, 16, SCSI_DIR_IN, buf, BUF);
	expect_cdb_pointer(h, 5);
	cdb[5] = 0;
	cdb[7] = 1; /* partition 1 */
	host_cmd(h, cdb, 16, SCSI_DIR_IN, buf, BUF);
	expect_cdb_pointer(h, 7);
	uint8_t w[16] = {0x8D};
	w[5] = 2;
	host_cmd(h, w, 16, SCSI_DIR_OUT, buf, 0);
	expect_cdb_pointer(h, 5);
	w[5] = 0;
	w[7] = 3;
	host_cmd(h, w, 16, SCSI_DIR_OUT, buf, 0);
	expect_cdb_pointer(h, 7);
	/* A list length of zero writes nothing and is no error. */
	w[7] = 0;
	host_cmd(h, w, 16, SCSI_DIR_OUT, buf, 0);
	expect_good(h);
}

static void host_attributes_round_trip(void **state)
{
	struct host *h = *state;
	host_new_cart(h, "A00004L8", 0);
	host_load(h, "A00004L8");
	uint8_t p[600] = {0};
	size_t at = 4;
	uint8_t label[160];
	memset(label, 0, sizeof label);
	memcpy(label, "weekly full backup", 18);
	add_attr(p, &at, 0x0800, 0x01, "ACME    ", 8);
	add_attr(p, &at, 0x0803, 0x02, label, 160);
	add_attr(p, &at, 0x0805, 0x00, "\x81", 1);
	add_attr(p, &at, 0x0806, 0x01, "A00004L8                        ", 32);
	/* PARAMETER DATA LENGTH (bytes 0..3) is ignored: left 0. */
	write_attr(h, p, (uint32_t)at);
	expect_good(h);
	read_attr(h, 0x00, 0x0800, BUF, false);
	expect_good(h);
	const uint8_t *a = find_attr(0x0800);
	assert_non_null(a);
	assert_int_equal(a[2], 0x01); /* read/write, ASCII */
	assert_memory_equal(a + 5, "ACME    ", 8);
	a = find_attr(0x0803);
	assert_int_equal(a[2], 0x02);
	assert_int_equal(be16(a + 3), 160);
	assert_memory_equal(a + 5, label, 160);
	assert_int_equal(find_attr(0x0805)[5], 0x81);
	assert_null(find_attr(0x0801));
	/* In the catalog, keyed by barcode. */
	uint8_t v[64];
	size_t len;
	EXPECT_RC(catalog_mam_get(h->cat, "A00004L8", 0x0800, v, sizeof v, &len), 0);
	assert_int_equal(len, 8);
	assert_memory_equal(v, "ACME    ", 8);
	/* Unload, load again: still there; the load count and the last drives moved on. */
	unload_remove(h);
	host_load(h, "A00004L8");
	read_attr(h, 0x00, 0, BUF, false);
	expect_good(h);
	assert_memory_equal(find_attr(0x0800) + 5, "ACME    ", 8);
	assert_memory_equal(find_attr(0x0806) + 5, "A00004L8", 8);
	assert_int_equal(attr_num(h, 0x0003), 2);
	assert_non_null(find_attr(0x020B));
	assert_memory_equal(find_attr(0x020B) + 5, "IBM     1013000001", 18);
	/* A later load by another drive (new drive object, same catalog) is recorded first. */
	unload_remove(h);
	replace_drive(h, h->cat, 0);
	host_load(h, "A00004L8");
	assert_int_equal(attr_num(h, 0x0003), 3);
	assert_memory_equal(find_attr(0x020A) + 5, "IBM     1013000002", 18);
	assert_memory_equal(find_attr(0x020B) + 5, "IBM     1013000001", 18);
	assert_memory_equal(find_attr(0x020C) + 5, "IBM     1013000001", 18);
	/* Length zero deletes. */
	write_one(h, 0x0800, 0x01, "", 0);
	expect_good(h);
	read_attr(h, 0x00, 0x0800, BUF, false);
	assert_null(find_attr(0x0800));
	assert_non_null(find_attr(0x0806));
	EXPECT_RC(catalog_mam_get(h->cat, "A00004L8", 0x0800, v, sizeof v, &len), VTL_E_NOTFOUND);
	/* Overwrite an existing one. */
	write_one(h, 0x0806, 0x01, "NEWCODE1                        ", 32);
	expect_good(h);
	read_attr(h, 0x00, 0x0806, BUF, false);
	assert_memory_equal(find_attr(0x0806) + 5, "NEWCODE1", 8);
}

static void write_attribute_refusals(void **state)
{
	struct host *h = *state;
	host_new_cart(h, "A00005L8", 0);
	host_load(h, "A00005L8");
	uint8_t eight[8] = {0};
	/* Read-only device and medium attributes; an unsupported one: pointer at its identifier (byte 4). */
	static const uint16_t ro[] = {0x0000, 0x0003, 0x0007, 0x020A, 0x0220, 0x0400, 0x0408};
	for (unsigned i = 0; i < VTL_ARRAY_SIZE(ro); i++) {
		write_one(h, ro[i], 0x00, eight, 8);
		expect_param_pointer(h, 4);
	}
	write_one(h, 0x0810, 0x01, "X", 1);
	expect_param_pointer(h, 4);
	write_one(h, 0xFF00, 0x00, "\xFF\xFF", 2); /* the drive's private attribute is not a host's */
	expect_param_pointer(h, 4);
	/* Wrong length: pointer at ATTRIBUTE LENGTH (byte 7). */
	write_one(h, 0x0800, 0x01, "SHORT  ", 7);
	expect_param_pointer(h, 7);
	write_one(h, 0x0805, 0x00, "\x01\x02", 2);
	expect_param_pointer(h, 7);
	/* Wrong format: pointer at byte 6, bit 1. */
	write_one(h, 0x0800, 0x02, "ACME    ", 8);
	expect_param_pointer(h, 6);
	assert_true(h->c.sense.sks_bit_valid);
	assert_int_equal(h->c.sense.sks_bit, 1);
	/* A control character in an ASCII attribute: pointer at it. */
	write_one(h, 0x0800, 0x01, "AC\x01E    ", 8);
	expect_param_pointer(h, 11);
	/* The whole list is checked first: a good attribute before a bad one is not written. */
	uint8_t p[64] = {0};
	size_t at = 4;
	add_attr(p, &at, 0x0800, 0x01, "ACME    ", 8);
	size_t bad_at = at;
	add_attr(p, &at, 0x0003, 0x00, eight, 8);
	write_attr(h, p, (uint32_t)at);
	expect_param_pointer(h, (uint16_t)bad_at);
	read_attr(h, 0x00, 0x0800, BUF, false);
	assert_null(find_attr(0x0800));
	/* An attribute cut by the parameter list length; a list shorter than its header. */
	write_attr(h, p, (uint32_t)(bad_at - 2));
	expect_sense(h, SK_ILLEGAL_REQUEST, ASC_PARAMETER_LIST_LENGTH);
	write_attr(h, p, 7); /* the attribute's header itself is cut */
	expect_sense(h, SK_ILLEGAL_REQUEST, ASC_PARAMETER_LIST_LENGTH);
	write_attr(h, p, 2);
	expect_sense(h, SK_ILLEGAL_REQUEST, ASC_PARAMETER_LIST_LENGTH);
	read_attr(h, 0x00, 0x0800, BUF, false);
	assert_null(find_attr(0x0800));
	/* A header alone writes nothing. */
	write_attr(h, p, 4);
	expect_good(h);
}

static void volume_coherency(void **state)
{
	struct host *h = *state;
	host_new_cart(h, "A00006L8", 0);
	host_load(h, "A00006L8");
	/* VCR length 8, VCR, count, set id, 4 bytes of application information. */
	uint8_t v[1 + 8 + 16 + 2 + 4] = {8, 1, 2, 3, 4, 5, 6, 7, 8};
	v[1 + 8 + 16 + 1] = 4;
	memcpy(v + 1 + 8 + 16 + 2, "LTFS", 4);
	write_one(h, 0x080C, 0x00, v, sizeof v);
	expect_good(h);
	read_attr(h, 0x00, 0x080C, BUF, false);
	const uint8_t *a = find_attr(0x080C);
	assert_non_null(a);
	assert_int_equal(be16(a + 3), sizeof v);
	assert_memory_equal(a + 5, v, sizeof v);
	/* Information length that disagrees with the attribute's: pointer at it (byte 9 + 25). */
	v[1 + 8 + 16 + 1] = 5;
	write_one(h, 0x080C, 0x00, v, sizeof v);
	expect_param_pointer(h, 9 + 25);
	/* A VCR longer than 8 bytes; shorter than the fixed part. */
	v[1 + 8 + 16 + 1] = 4;
	v[0] = 9;
	write_one(h, 0x080C, 0x00, v, sizeof v);
	expect_param_pointer(h, 9);
	write_one(h, 0x080C, 0x00, v, 18);
	expect_param_pointer(h, 9);
	uint8_t big[300] = {0};
	write_one(h, 0x080C, 0x00, big, sizeof big);
	expect_param_pointer(h, 7);
}

static void usage_counters(void **state)
{
	struct host *h = *state;
	host_new_cart(h, "A00007L8", 0);
	host_load(h, "A00007L8");
	/* WRITE(6) is not this module's: write through the backend as the data path will. */
	const size_t mib = 1u << 20;
	uint8_t *blk = malloc(mib);
	assert_non_null(blk);
	gen_random(blk, 0, mib, 11); /* incompressible: the medium holds 3 MiB whatever the compression */
	struct vtl_cart *cart = h->d->cart;
	for (int i = 0; i < 3; i++)
		EXPECT_RC(vtl_cart_write_block(cart, blk, mib), 0);
	EXPECT_RC(vtl_cart_rewind(cart), 0);
	struct vtl_read_result r;
	EXPECT_RC(vtl_cart_read(cart, blk, mib, &r), 0);
	free(blk);
	assert_int_equal(attr_num(h, 0x0222), 3); /* MiB written this load */
	assert_int_equal(attr_num(h, 0x0220), 3); /* in the medium's life */
	assert_int_equal(attr_num(h, 0x0223), 1);
	assert_int_equal(attr_num(h, 0x0221), 1);
	uint64_t remaining = attr_num(h, 0x0000);
	assert_true(remaining < attr_num(h, 0x0001));
	assert_true(attr_num(h, 0x0001) - remaining >= 3);
	assert_int_equal(attr_num(h, 0x0009), 0);
	/* TapeAlert flags: flag n is bit 64 - n (flag 9, write protect, here). */
	h->d->tapealert |= 1ull << (TA_WRITE_PROTECT - 1);
	assert_int_equal(attr_num(h, 0x0002), 1ull << (64 - TA_WRITE_PROTECT));
	h->d->tapealert = 0;
	unload_remove(h);
	host_load(h, "A00007L8");
	assert_int_equal(attr_num(h, 0x0222), 0); /* a new load */
	assert_int_equal(attr_num(h, 0x0220), 3);
	assert_int_equal(attr_num(h, 0x0221), 1);
	assert_int_equal(attr_num(h, 0x0009), 1); /* the volume changed in that load */
	assert_int_equal(attr_num(h, 0x0000), remaining);
	unload_remove(h);
	host_load(h, "A00007L8");
	assert_int_equal(attr_num(h, 0x0009), 1); /* a load without writing changes nothing */
}

static void cache_after_unload(void **state)
{
	struct host *h = *state;
	host_new_cart(h, "A00008L8", 0);
	host_load(h, "A00008L8");
	write_one(h, 0x0801, 0x01, "NIGHTLY BACKUP APPLICATION      ", 32);
	expect_good(h);
	EXPECT_RC(ssc_eject(h->d), 0);
	read_attr(h, 0x00, 0, BUF, false);
	expect_sense(h, SK_NOT_READY, ASC_MEDIUM_NOT_PRESENT);
	read_attr(h, 0x00, 0, BUF, true);
	expect_good(h);
	assert_memory_equal(find_attr(0x0801) + 5, "NIGHTLY BACKUP", 14);
	assert_non_null(find_attr(0x0000)); /* stored at unload */
	/* Still after the robot took it; a write needs the medium. */
	char bc[VTL_LABEL_LEN + 1];
	EXPECT_RC(ssc_remove(h->d, bc), 0);
	read_attr(h, 0x01, 0, BUF, true);
	expect_good(h);
	write_one(h, 0x0800, 0x01, "ACME    ", 8);
	expect_sense(h, SK_NOT_READY, ASC_MEDIUM_NOT_PRESENT);
}

static void cleaning_cartridge(void **state)
{
	struct host *h = *state;
	replace_drive(h, h->cat, 60000);
	host_new_cart(h, "CLN001L1", 0);
	struct ssc_medium m = {.barcode = "CLN001L1"};
	char err[128];
	EXPECT_RC(ssc_insert(h->d, &m, err, sizeof err), 0);
	read_attr(h, 0x00, 0, BUF, false);
	expect_sense(h, SK_UNIT_ATTENTION, ASC_NOT_READY_TO_READY);
	read_attr(h, 0x00, 0, BUF, false);
	expect_sense(h, SK_NOT_READY, ASC_CLEANING_CARTRIDGE);
	read_attr(h, 0x00, 0, BUF, true);
	expect_sense(h, SK_NOT_READY, ASC_CLEANING_CARTRIDGE);
	write_one(h, 0x0800, 0x01, "ACME    ", 8);
	expect_sense(h, SK_NOT_READY, ASC_CLEANING_CARTRIDGE);
}

static void without_catalog(void **state)
{
	struct host *h = *state;
	replace_drive(h, NULL, 0);
	host_new_cart(h, "A00009L8", 0);
	host_new_cart(h, "A00010L8", 0);
	host_load(h, "A00009L8");
	write_one(h, 0x0800, 0x01, "ACME    ", 8);
	expect_good(h);
	assert_int_equal(attr_num(h, 0x0003), 1);
	uint8_t v[16];
	size_t len;
	EXPECT_RC(catalog_mam_get(h->cat, "A00009L8", 0x0800, v, sizeof v, &len), VTL_E_NOTFOUND);
	/* The same cartridge again: the drive still holds its attributes. */
	unload_remove(h);
	host_load(h, "A00009L8");
	read_attr(h, 0x00, 0x0800, BUF, false);
	assert_memory_equal(find_attr(0x0800) + 5, "ACME    ", 8);
	assert_int_equal(attr_num(h, 0x0003), 2);
	/* Another cartridge starts afresh. */
	unload_remove(h);
	host_load(h, "A00010L8");
	read_attr(h, 0x00, 0x0800, BUF, false);
	assert_null(find_attr(0x0800));
	assert_int_equal(attr_num(h, 0x0003), 1);
}

static void worm_and_older_media(void **state)
{
	struct host *h = *state;
	host_new_cart(h, "A00011LY", 0); /* LTO-8 WORM */
	host_load(h, "A00011LY");
	assert_int_equal(attr_num(h, 0x0408), 0x80);
	unload_remove(h);
	host_new_cart(h, "A00012L7", 0); /* an LTO-7 cartridge in the LTO-8 drive */
	host_load(h, "A00012L7");
	assert_int_equal(attr_num(h, 0x0405), 0x5C);
	assert_int_equal(attr_num(h, 0x0402), 960);
	unload_remove(h);
	host_new_cart(h, "A00013M8", 0); /* Type M */
	host_load(h, "A00013M8");
	assert_int_equal(attr_num(h, 0x0405), 0x5D);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(no_medium_not_ready, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(device_and_medium_attributes, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(allocation_and_first_attribute, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(bad_cdb_fields, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(host_attributes_round_trip, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(write_attribute_refusals, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(volume_coherency, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(usage_counters, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(cache_after_unload, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(cleaning_cartridge, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(without_catalog, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(worm_and_older_media, host_setup, host_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
