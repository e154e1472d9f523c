/* SPDX-License-Identifier: Apache-2.0 */
/*
 * REPORT DENSITY SUPPORT, SET CAPACITY and FORMAT MEDIUM as a host sees
 * them, with the capacity checked on the cartridge behind the drive.
 */
#include "tests/unit/scsi_host.h"

#include <stdio.h>
#include <string.h>

#include "common/vtl_error.h"
#include "vtl/drive/ssc_internal.h"

static uint8_t buf[1024];

static uint16_t be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int rds(struct host *h, bool media, bool medium_type, uint16_t alloc)
{
	uint8_t cdb[10] = {0x44, (uint8_t)((media ? 1 : 0) | (medium_type ? 2 : 0))};
	cdb[7] = (uint8_t)(alloc >> 8);
	cdb[8] = (uint8_t)alloc;
	memset(buf, 0xEE, sizeof buf);
	return host_cmd(h, cdb, 10, SCSI_DIR_IN, buf, sizeof buf);
}

static int set_capacity(struct host *h, uint16_t proportion, bool immed)
{
	uint8_t cdb[6] = {0x0B, immed ? 1 : 0, 0, (uint8_t)(proportion >> 8), (uint8_t)proportion, 0};
	return host_cmd(h, cdb, 6, SCSI_DIR_NONE, NULL, 0);
}

static int format_medium(struct host *h, uint8_t byte1, uint8_t format, uint16_t xfer)
{
	uint8_t cdb[6] = {0x04, byte1, format, (uint8_t)(xfer >> 8), (uint8_t)xfer, 0};
	return host_cmd(h, cdb, 6, SCSI_DIR_NONE, NULL, 0);
}

static void expect_cdb_pointer(struct host *h, uint16_t byte)
{
	expect_sense(h, SK_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_CDB);
	assert_true(h->c.sense.sks_valid && h->c.sense.sks_cdb);
	assert_int_equal(h->c.sense.sks_field, byte);
}

/* Checks one density descriptor at d. */
static void density_is(const uint8_t *d, uint8_t code, uint8_t flags, uint32_t mb, const char *name)
{
	assert_int_equal(d[0], code);
	assert_int_equal(d[1], code);
	assert_int_equal(d[2], flags | 0x01); /* DLV */
	assert_int_equal(be16(d + 3), 49);    /* descriptor length */
	assert_int_equal(be16(d + 8), 127);   /* media width, tenths of mm */
	assert_int_equal(be32(d + 12), mb);
	assert_memory_equal(d + 16, "LTO-CVE ", 8);
	char padded[9];
	snprintf(padded, sizeof padded, "%-8s", name);
	assert_memory_equal(d + 24, padded, 8);
}

#define WRTOK 0x80
#define DEFLT 0x20

static void drive_densities(void **state)
{
	struct host *h = *state;
	/* MEDIA 0 needs no medium: an LTO-8 drive reads and writes LTO-7, Type M and LTO-8. */
	rds(h, false, false, 1024);
	expect_good(h);
	assert_int_equal(be16(buf), 2 + 3 * 52);
	assert_int_equal(h->c.data_len, 4 + 3 * 52);
	density_is(buf + 4, 0x5C, WRTOK, 6000000, "U-732");
	density_is(buf + 4 + 52, 0x5D, WRTOK, 9000000, "U-732M");
	density_is(buf + 4 + 104, 0x5E, WRTOK | DEFLT, 12000000, "U-832");
	assert_int_equal(be16(buf + 4 + 104 + 10), 6656);                  /* tracks */
	assert_int_equal(buf[4 + 104 + 5] << 16 | be16(buf + 4 + 104 + 6), 20669); /* bits per mm */
	assert_memory_equal(buf + 4 + 104 + 32, "Ultrium 8/32T       ", 20);
	/* The allocation length cuts it; the header still tells the whole length. */
	rds(h, false, false, 10);
	expect_good(h);
	assert_int_equal(h->c.data_len, 10);
	assert_int_equal(be16(buf), 2 + 3 * 52);
	assert_int_equal(buf[10], 0xEE);
	/* Other generations: LTO-9 reads LTO-8; an LTO-7 drive only reads LTO-5. */
	host_drive_model(h, "IBM", "ULT3580-TD9");
	rds(h, false, false, 1024);
	assert_int_equal(be16(buf), 2 + 2 * 52);
	density_is(buf + 4, 0x5E, WRTOK, 12000000, "U-832");
	density_is(buf + 4 + 52, 0x60, WRTOK | DEFLT, 18000000, "U-932");
	host_drive_model(h, "HP", "Ultrium 7-SCSI");
	rds(h, false, false, 1024);
	assert_int_equal(be16(buf), 2 + 3 * 52);
	density_is(buf + 4, 0x58, 0, 1500000, "U-516");
	density_is(buf + 4 + 52, 0x5A, WRTOK, 2500000, "U-616");
	density_is(buf + 4 + 104, 0x5C, WRTOK | DEFLT, 6000000, "U-732");
}

static void medium_density(void **state)
{
	struct host *h = *state;
	rds(h, true, false, 1024);
	expect_sense(h, SK_NOT_READY, ASC_MEDIUM_NOT_PRESENT);
	rds(h, true, true, 1024);
	expect_sense(h, SK_NOT_READY, ASC_MEDIUM_NOT_PRESENT);
	host_new_cart(h, "A00001L7", 0);
	host_load(h, "A00001L7");
	rds(h, true, false, 1024);
	expect_good(h);
	assert_int_equal(be16(buf), 2 + 52);
	density_is(buf + 4, 0x5C, WRTOK | DEFLT, 6000000, "U-732");
	/* Its medium type: an LTO-7 data cartridge, on which this drive writes 5Ch or 5Dh. */
	rds(h, true, true, 1024);
	expect_good(h);
	assert_int_equal(be16(buf), 2 + 56);
	const uint8_t *m = buf + 4;
	assert_int_equal(m[0], 0x78);
	assert_int_equal(be16(m + 2), 52);
	assert_int_equal(m[4], 2);
	assert_int_equal(m[5], 0x5C);
	assert_int_equal(m[6], 0x5D);
	assert_int_equal(be16(m + 14), 127);
	assert_int_equal(be16(m + 16), 960);
	assert_memory_equal(m + 20, "LTO-CVE ", 8);
	assert_memory_equal(m + 28, "LTO-7   ", 8);
	/* A write-protected LTO-8 WORM cartridge: WRTOK is about the format, not the tab. */
	EXPECT_RC(ssc_eject(h->d), 0);
	char bc[VTL_LABEL_LEN + 1];
	EXPECT_RC(ssc_remove(h->d, bc), 0);
	host_new_cart(h, "A00002LY", 0);
	struct ssc_medium wp = {.barcode = "A00002LY", .write_protected = true};
	char err[128];
	EXPECT_RC(ssc_insert(h->d, &wp, err, sizeof err), 0);
	rds(h, true, false, 1024);
	expect_sense(h, SK_UNIT_ATTENTION, ASC_NOT_READY_TO_READY);
	rds(h, true, false, 1024);
	expect_good(h);
	assert_int_equal(buf[4 + 2], WRTOK | DEFLT | 0x01);
	assert_int_equal(buf[4], 0x5E);
	rds(h, true, true, 1024);
	assert_int_equal(buf[4], 0x8C);
	assert_int_equal(buf[4 + 4], 1);
	assert_memory_equal(buf + 4 + 28, "LTO-8W  ", 8);
	/* An LTO-5 cartridge in an LTO-7 drive is read only: no WRTOK. */
	EXPECT_RC(ssc_eject(h->d), 0);
	EXPECT_RC(ssc_remove(h->d, bc), 0);
	host_drive_model(h, "HP", "Ultrium 7-SCSI");
	host_new_cart(h, "A00003L5", 0);
	host_load(h, "A00003L5");
	rds(h, true, false, 1024);
	expect_good(h);
	density_is(buf + 4, 0x58, DEFLT, 1500000, "U-516");
	rds(h, true, true, 1024);
	assert_int_equal(buf[4], 0x58);
	assert_int_equal(buf[4 + 4], 1);
	assert_int_equal(buf[4 + 5], 0x58);
	assert_int_equal(be16(buf + 4 + 16), 846);
}

static void drive_medium_types(void **state)
{
	struct host *h = *state;
	rds(h, false, true, 1024);
	expect_good(h);
	/* LTO-7 and LTO-8 cartridges, data and WORM each. */
	assert_int_equal(be16(buf), 2 + 4 * 56);
	static const uint8_t types[] = {0x78, 0x7C, 0x88, 0x8C};
	static const uint8_t ncodes[] = {2, 1, 1, 1};
	for (unsigned i = 0; i < 4; i++) {
		assert_int_equal(buf[4 + 56 * i], types[i]);
		assert_int_equal(buf[4 + 56 * i + 4], ncodes[i]);
	}
	assert_int_equal(buf[4 + 56 + 5], 0x5C); /* no Type M on WORM */
	rds(h, false, true, 60);
	assert_int_equal(h->c.data_len, 60);
	assert_int_equal(be16(buf), 2 + 4 * 56);
}

/* An LTO-10 drive (IBM ULT3580-TDA): density 62h only, on LTO-10 cartridges only (not backward compatible). */
static void lto10_drive(void **state)
{
	struct host *h = *state;
	host_drive_model(h, "IBM", "ULT3580-TDA");
	rds(h, false, false, 1024);
	expect_good(h);
	assert_int_equal(be16(buf), 2 + 52);
	density_is(buf + 4, 0x62, WRTOK | DEFLT, 30000000, "");
	assert_int_equal(buf[4 + 5] << 16 | be16(buf + 4 + 6), 21657); /* bits per mm */
	assert_int_equal(be16(buf + 4 + 10), 0);                       /* tracks: not found in any reference */
	rds(h, false, true, 1024);
	expect_good(h);
	assert_int_equal(be16(buf), 2 + 56); /* LTO-10 data only: no LTO-10 WORM */
	assert_int_equal(buf[4], 0xA8);      /* IBM's medium type code (LTFS TC_MP_LTO10D_CART) */
	assert_int_equal(buf[4 + 4], 1);
	assert_int_equal(buf[4 + 5], 0x62);
	host_new_cart(h, "A00001LA", 0);
	host_load(h, "A00001LA");
	rds(h, true, false, 1024);
	expect_good(h);
	assert_int_equal(be16(buf), 2 + 52);
	density_is(buf + 4, 0x62, WRTOK | DEFLT, 30000000, "");
	/* An LTO-9 drive does not list LTO-10. */
	host_drive_model(h, "IBM", "ULT3580-TD9");
	rds(h, false, false, 1024);
	expect_good(h);
	assert_int_equal(be16(buf), 2 + 2 * 52);
	density_is(buf + 4 + 52, 0x60, WRTOK | DEFLT, 18000000, "U-932");
}

/* Loads a cartridge of capacity bytes (0: nominal). */
static void load_new(struct host *h, const char *bc, uint64_t capacity)
{
	host_new_cart(h, bc, capacity);
	host_load(h, bc);
}

static int write_blocks(struct host *h, unsigned n, size_t len)
{
	static uint8_t blk[64 << 10];
	gen_random(blk, 0, sizeof blk, 3);
	int rc = 0;
	for (unsigned i = 0; i < n && rc >= 0; i++)
		rc = vtl_cart_write_block(h->d->cart, blk, len);
	return rc;
}

static void set_capacity_effect(void **state)
{
	struct host *h = *state;
	const uint64_t native = 24u << 20; /* half of it is wider than the early-warning zone's minimum */
	load_new(h, "A00003L8", native);
	/* Not at BOT: ILLEGAL REQUEST, POSITION PAST BEGINNING OF MEDIUM. */
	EXPECT_RC(write_blocks(h, 1, 1000), 0);
	set_capacity(h, 32768, false);
	expect_sense(h, SK_ILLEGAL_REQUEST, ASC_POSITION_PAST_BOM);
	EXPECT_RC(vtl_cart_rewind(h->d->cart), 0);
	set_capacity(h, 0, false);
	expect_cdb_pointer(h, 3);
	/* Half: 12 MiB (rounded down), the data gone. */
	set_capacity(h, 32768, false);
	expect_good(h);
	uint64_t cap = native / 65535 * 32768 + native % 65535 * 32768 / 65535;
	assert_int_equal(h->d->capacity, cap);
	struct vtl_position pos;
	vtl_cart_position(h->d->cart, &pos);
	assert_int_equal(pos.eod, 0);
	/*
	 * Early warning at capacity / 50 before the end, but never closer than
	 * one largest write (8 MiB and its record header), then no room: records
	 * of 64 KiB + 32.
	 */
	const uint64_t rec = (64 << 10) + 32, zone_min = SSC_BLOCK_LIMIT_MAX + VTL_RECORD_OVERHEAD;
	const uint64_t ew_at = cap - (cap / 50 > zone_min ? cap / 50 : zone_min);
	unsigned k = 0;
	int rc = 0;
	while ((rc = write_blocks(h, 1, 64 << 10)) == 0)
		k++;
	assert_int_equal(rc, VTL_W_EARLY_WARNING);
	assert_int_equal(k, (ew_at + rec - 1) / rec - 1);
	while ((rc = write_blocks(h, 1, 64 << 10)) == VTL_W_EARLY_WARNING)
		k++;
	assert_int_equal(rc, VTL_E_EOM);
	assert_int_equal(k + 1, cap / rec);
	/* The medium's maximum capacity attribute says so. */
	uint8_t cdb[16] = {0x8C, 0, 0, 0, 0, 0, 0, 0, 0x00, 0x01, 0, 0, 0, 17};
	uint8_t a[32];
	host_cmd(h, cdb, 16, SCSI_DIR_IN, a, sizeof a);
	expect_good(h);
	assert_int_equal(be16(a + 4), 0x0001);
	assert_int_equal(be32(a + 9), 0);
	assert_int_equal(be32(a + 13), cap >> 20);
	/* It stays with the cartridge across an unload. */
	EXPECT_RC(ssc_eject(h->d), 0);
	char bc[VTL_LABEL_LEN + 1];
	EXPECT_RC(ssc_remove(h->d, bc), 0);
	host_load(h, "A00003L8");
	assert_int_equal(h->d->capacity, cap);
	vtl_cart_position(h->d->cart, &pos);
	assert_true(pos.early_warning); /* the data written above is past the new early warning */
	/* The whole again, IMMED set. */
	set_capacity(h, 65535, true);
	expect_good(h);
	assert_int_equal(h->d->capacity, native);
	vtl_cart_position(h->d->cart, &pos);
	assert_false(pos.early_warning);
	EXPECT_RC(write_blocks(h, 100, 64 << 10), 0);
}

static void set_capacity_refusals(void **state)
{
	struct host *h = *state;
	set_capacity(h, 100, false);
	expect_sense(h, SK_NOT_READY, ASC_MEDIUM_NOT_PRESENT);
	host_new_cart(h, "A00004L8", 0);
	struct ssc_medium wp = {.barcode = "A00004L8", .write_protected = true};
	char err[128];
	EXPECT_RC(ssc_insert(h->d, &wp, err, sizeof err), 0);
	set_capacity(h, 100, false);
	expect_sense(h, SK_UNIT_ATTENTION, ASC_NOT_READY_TO_READY);
	set_capacity(h, 100, false);
	expect_sense(h, SK_DATA_PROTECT, ASC_WRITE_PROTECTED);
	format_medium(h, 0, 0, 0);
	expect_sense(h, SK_DATA_PROTECT, ASC_WRITE_PROTECTED);
	EXPECT_RC(ssc_eject(h->d), 0);
	char bc[VTL_LABEL_LEN + 1];
	EXPECT_RC(ssc_remove(h->d, bc), 0);
	/* A WORM cartridge that holds data can be neither resized nor formatted. */
	load_new(h, "A00005LY", 0);
	EXPECT_RC(write_blocks(h, 1, 1000), 0);
	EXPECT_RC(vtl_cart_rewind(h->d->cart), 0);
	set_capacity(h, 100, false);
	expect_sense(h, SK_DATA_PROTECT, ASC_WORM_OVERWRITE);
	format_medium(h, 0, 0, 0);
	expect_sense(h, SK_DATA_PROTECT, ASC_WORM_OVERWRITE);
}

static void format_medium_erases(void **state)
{
	struct host *h = *state;
	format_medium(h, 0, 0, 0);
	expect_sense(h, SK_NOT_READY, ASC_MEDIUM_NOT_PRESENT);
	load_new(h, "A00006L8", 0);
	EXPECT_RC(write_blocks(h, 5, 1000), 0);
	/* Partitioning formats, reserved values and parameter data are refused. */
	for (uint8_t f = 1; f <= 0x0F; f++) {
		format_medium(h, 0, f, 0);
		expect_cdb_pointer(h, 2);
		assert_true(h->c.sense.sks_bit_valid);
		assert_int_equal(h->c.sense.sks_bit, 3);
	}
	format_medium(h, 0, 0, 8);
	expect_cdb_pointer(h, 3);
	format_medium(h, 0, 0, 0);
	expect_sense(h, SK_ILLEGAL_REQUEST, ASC_POSITION_PAST_BOM);
	EXPECT_RC(vtl_cart_rewind(h->d->cart), 0);
	format_medium(h, 0x03, 0, 0); /* VERIFY and IMMED */
	expect_good(h);
	struct vtl_position pos;
	vtl_cart_position(h->d->cart, &pos);
	assert_int_equal(pos.eod, 0);
	assert_int_equal(pos.stored_bytes, 0);
	/* MAM counts the initialization. */
	uint8_t cdb[16] = {0x8C, 0, 0, 0, 0, 0, 0, 0, 0x00, 0x07, 0, 0, 0, 11};
	uint8_t a[16];
	host_cmd(h, cdb, 16, SCSI_DIR_IN, a, sizeof a);
	expect_good(h);
	assert_int_equal(be16(a + 4), 0x0007);
	assert_int_equal(be16(a + 9), 1);
	/* A blank WORM cartridge may be formatted. */
	EXPECT_RC(ssc_eject(h->d), 0);
	char bc[VTL_LABEL_LEN + 1];
	EXPECT_RC(ssc_remove(h->d, bc), 0);
	load_new(h, "A00007LY", 0);
	format_medium(h, 0, 0, 0);
	expect_good(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(drive_densities, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(medium_density, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(drive_medium_types, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(lto10_drive, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(set_capacity_effect, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(set_capacity_refusals, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(format_medium_erases, host_setup, host_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
