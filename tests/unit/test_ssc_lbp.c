/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Logical block protection as a host sees it: the Control Data Protection
 * mode page (0Ah/F0h) and its refusals, WRITE under LBP_W with right and
 * wrong CRCs (a wrong one writes nothing and leaves the position), READ
 * under LBP_R with the CRC appended (residues and ILI on the protected
 * length), for blocks written with and without protection, compressed or
 * not, and both methods: CRC32C and ECMA-319's Reed-Solomon CRC.
 */
#include "tests/unit/scsi_host.h"

#include <string.h>

#include "common/crc32c.h"
#include "common/vtl_error.h"
#include "vtl/drive/ssc_internal.h"

#define BUF 512
#define PI 4
#define BLK 5000u

static uint8_t wbuf[64 << 10], rbuf[64 << 10];

static size_t mode_sense_lbp(struct host *h, uint8_t pc, uint8_t *buf)
{
	uint8_t cdb[10] = {0x5A, 0x08, (uint8_t)(pc << 6 | 0x0A), 0xF0, 0, 0, 0, 0, BUF & 0xFF, 0};
	cdb[7] = BUF >> 8;
	memset(buf, 0xEE, BUF);
	host_cmd(h, cdb, 10, SCSI_DIR_IN, buf, BUF);
	return h->c.data_len;
}

/* MODE SELECT(10) of page 0Ah/F0h with these method, length and flag bytes (PF set, buffered, no descriptor). */
static int select_lbp(struct host *h, uint8_t method, uint8_t len, uint8_t flags)
{
	uint8_t list[8 + 32] = {0};
	list[3] = 0x10;
	uint8_t *p = list + 8;
	p[0] = 0x4A;
	p[1] = 0xF0;
	p[3] = 0x1C;
	p[4] = method;
	p[5] = len;
	p[6] = flags;
	uint8_t cdb[10] = {0x55, 0x10, 0, 0, 0, 0, 0, 0, sizeof list, 0};
	return host_cmd(h, cdb, 10, SCSI_DIR_OUT, list, sizeof list);
}

static void expect_param(struct host *h, uint16_t byte, int bit)
{
	expect_invalid_field(h, ASC_INVALID_FIELD_IN_PARAMETERS, false, byte, bit);
}

static void loaded(struct host *h, const char *bc)
{
	host_new_cart(h, bc, 0);
	host_load(h, bc);
}

static void rewind_tape(struct host *h)
{
	uint8_t cdb[6];
	host_cmd(h, cdb, cdb_simple(cdb, 0x01), SCSI_DIR_NONE, NULL, 0);
	expect_good(h);
}

static void set_compression(struct host *h, bool on)
{
	uint8_t list[4 + 16] = {0};
	list[2] = 0x10;
	list[4] = 0x0F;
	list[5] = 14;
	list[6] = on ? 0xC0 : 0x40;
	list[7] = 0x80;
	list[11] = 1;
	list[15] = 1;
	uint8_t cdb[6] = {0x15, 0x10, 0, 0, sizeof list, 0};
	host_cmd(h, cdb, 6, SCSI_DIR_OUT, list, sizeof list);
	expect_good(h);
}

/* Block k of n bytes: compressible (repeated text) or not (pseudo-random). */
static void block(uint8_t *p, uint32_t n, uint64_t k, bool compressible)
{
	if (compressible) {
		for (uint32_t i = 0; i < n; i++)
			p[i] = (uint8_t)("protected block "[i % 16] + (k & 7));
	} else {
		gen_data(p, n, k, false);
	}
}

/* ECMA-319's Reed-Solomon CRC, bit by bit over GF(2^8) / 11Dh: an independent check of the table version. */
static uint8_t gf_mul_slow(uint8_t a, uint8_t b)
{
	uint8_t r = 0;
	for (int i = 0; i < 8; i++) {
		if (b & (1u << i))
			r ^= a;
		a = (uint8_t)((a << 1) ^ ((a & 0x80) ? 0x1D : 0));
	}
	return r;
}

static uint32_t rs_slow(const uint8_t *p, size_t n)
{
	static const uint8_t g[4] = {0x38, 0xCF, 0x38, 0x01};
	uint8_t r[4] = {0};
	for (size_t i = 0; i < n; i++) {
		uint8_t f = p[i] ^ r[0];
		for (int k = 0; k < 3; k++)
			r[k] = r[k + 1] ^ gf_mul_slow(f, g[k]);
		r[3] = gf_mul_slow(f, g[3]);
	}
	return (uint32_t)r[0] << 24 | (uint32_t)r[1] << 16 | (uint32_t)r[2] << 8 | r[3];
}

/* Appends the PI of method to n bytes at p. */
static void append_pi(uint8_t *p, uint32_t n, uint8_t method)
{
	uint32_t crc = method == LBP_METHOD_RS_CRC ? ssc_rs_crc(p, n) : crc32c(0, p, n);
	for (int i = 0; i < PI; i++)
		p[n + (method == LBP_METHOD_RS_CRC ? PI - 1 - i : i)] = (uint8_t)(crc >> (8 * i));
}

static int write6(struct host *h, uint8_t *buf, uint32_t len)
{
	uint8_t cdb[6];
	return host_cmd(h, cdb, cdb_write6(cdb, false, len), SCSI_DIR_OUT, buf, len);
}

/* Writes block k (BLK bytes) with the PI of method appended (0: none); returns the status. */
static int write_block(struct host *h, uint64_t k, bool compressible, uint8_t method)
{
	block(wbuf, BLK, k, compressible);
	if (method)
		append_pi(wbuf, BLK, method);
	return write6(h, wbuf, BLK + (method ? PI : 0));
}

static int read6(struct host *h, uint32_t len, bool sili)
{
	uint8_t cdb[6];
	memset(rbuf, 0xEE, sizeof rbuf);
	return host_cmd(h, cdb, cdb_read6(cdb, sili, false, len), SCSI_DIR_IN, rbuf, len);
}

/* Reads one block of BLK bytes and its PI; fails unless it is block k with the PI of method. */
static void expect_read_block(struct host *h, uint64_t k, bool compressible, uint8_t method)
{
	read6(h, BLK + PI, false);
	expect_good(h);
	assert_int_equal(h->c.data_len, BLK + PI);
	block(wbuf, BLK, k, compressible);
	append_pi(wbuf, BLK, method);
	assert_memory_equal(rbuf, wbuf, BLK + PI);
}

/* ------------------------------------------------------------------ tests */

/* Fails unless MODE SENSE of page 0Ah/F0h with page control pc gives these method, length and flag bytes. */
static void expect_page(struct host *h, uint8_t pc, uint8_t method, uint8_t len, uint8_t flags)
{
	uint8_t b[BUF];
	mode_sense_lbp(h, pc, b);
	expect_good(h);
	assert_int_equal(b[12], method);
	assert_int_equal(b[13], len);
	assert_int_equal(b[14], flags);
}

static void page_round_trip(void **state)
{
	struct host *h = *state;
	uint8_t b[BUF];
	/* Default: no protection. The page is in sub_page format, 32 bytes. */
	size_t n = mode_sense_lbp(h, 0, b);
	expect_good(h);
	assert_int_equal(n, 8 + 32);
	assert_int_equal(b[8], 0x4A);
	assert_int_equal(b[9], 0xF0);
	assert_int_equal(b[10] << 8 | b[11], 0x1C);
	expect_page(h, 0, 0, 0, 0);
	/* Changeable: the method, the length, LBP_W and LBP_R (RBDP: RECOVER BUFFERED DATA is not offered). */
	expect_page(h, 1, 0xFF, 0x3F, 0xC0);
	/* CRC32C with both: reads back as set; the default values stay none. */
	select_lbp(h, 2, 4, 0xC0);
	expect_good(h);
	expect_page(h, 0, 2, 4, 0xC0);
	expect_page(h, 2, 0, 0, 0);
	/* Reed-Solomon, LBP_W only. */
	select_lbp(h, 1, 4, 0x80);
	expect_good(h);
	expect_page(h, 0, 1, 4, 0x80);
	/* Back to none. */
	select_lbp(h, 0, 0, 0);
	expect_good(h);
	expect_page(h, 0, 0, 0, 0);
}

static void page_refusals(void **state)
{
	struct host *h = *state;
	select_lbp(h, 2, 4, 0x80);
	expect_good(h);
	/* Each refusal points at its field: byte (of the list: the page starts at 8) and bit. */
	static const struct {
		uint8_t method, len, flags;
		uint16_t byte;
		int bit;
	} bad[] = {
		{3, 4, 0x80, 8 + 4, 7},    /* an unknown method */
		{0xFF, 4, 0, 8 + 4, 7},
		{2, 8, 0x80, 8 + 5, 5},    /* a length that is not the method's */
		{0, 4, 0, 8 + 5, 5},
		{0, 0, 0x40, 8 + 6, 6},    /* LBP_R with no method */
		{0, 0, 0x80, 8 + 6, 7},    /* LBP_W with no method */
		{2, 4, 0xA0, 8 + 6, 5},    /* RBDP is not changeable */
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		select_lbp(h, bad[i].method, bad[i].len, bad[i].flags);
		expect_param(h, bad[i].byte, bad[i].bit);
	}
	/* Nothing of the refused lists was applied. */
	expect_page(h, 0, 2, 4, 0x80);
}

static void write_checks_crc(void **state)
{
	struct host *h = *state;
	loaded(h, "P00001L8");
	select_lbp(h, 2, 4, 0x80);
	expect_good(h);
	write_block(h, 1, false, 2);
	expect_good(h);
	assert_int_equal(host_position(h), 1);
	/* A wrong CRC: HARDWARE ERROR, LOGICAL BLOCK GUARD CHECK FAILED, INFORMATION = the whole request. */
	block(wbuf, BLK, 2, false);
	append_pi(wbuf, BLK, 2);
	wbuf[BLK + 1] ^= 0x10;
	write6(h, wbuf, BLK + PI);
	expect_sense(h, SK_HARDWARE_ERROR, ASC_LOGICAL_BLOCK_GUARD_CHECK_FAILED);
	assert_int_equal(sense_info(h), BLK + PI);
	assert_int_equal(host_position(h), 1);
	/* Data damaged instead of the CRC: the same. */
	append_pi(wbuf, BLK, 2);
	wbuf[7] ^= 1;
	write6(h, wbuf, BLK + PI);
	expect_sense(h, SK_HARDWARE_ERROR, ASC_LOGICAL_BLOCK_GUARD_CHECK_FAILED);
	/* A block of nothing but its PI is no block. */
	write6(h, wbuf, PI);
	expect_sense(h, SK_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_CDB);
	/* Before end of data, a refused write does not cut the tape: the block after stays. */
	rewind_tape(h);
	block(wbuf, BLK, 3, false);
	append_pi(wbuf, BLK, 2);
	wbuf[0] ^= 0xFF;
	write6(h, wbuf, BLK + PI);
	expect_sense(h, SK_HARDWARE_ERROR, ASC_LOGICAL_BLOCK_GUARD_CHECK_FAILED);
	assert_int_equal(host_position(h), 0);
	/* What was stored is the data alone: read without LBP_R. */
	select_lbp(h, 2, 4, 0);
	expect_good(h);
	read6(h, BLK, false);
	expect_good(h);
	assert_int_equal(h->c.data_len, BLK);
	block(wbuf, BLK, 1, false);
	assert_memory_equal(rbuf, wbuf, BLK);
	read6(h, BLK, false);
	expect_sense(h, SK_BLANK_CHECK, ASC_EOD_DETECTED);
}

/* Writes blocks with and without LBP_W, compressed and not, and reads them back under LBP_R. */
static void read_appends_crc(void **state)
{
	struct host *h = *state;
	loaded(h, "P00002L8");
	struct {
		bool comp, lbp_w;
	} blocks[] = {{false, false}, {true, false}, {false, true}, {true, true}};
	for (unsigned i = 0; i < 4; i++) {
		set_compression(h, blocks[i].comp);
		select_lbp(h, blocks[i].lbp_w ? 2 : 0, blocks[i].lbp_w ? 4 : 0, blocks[i].lbp_w ? 0x80 : 0);
		expect_good(h);
		write_block(h, i, blocks[i].comp, blocks[i].lbp_w ? 2 : 0);
		expect_good(h);
	}
	rewind_tape(h);
	select_lbp(h, 2, 4, 0x40);
	expect_good(h);
	for (unsigned i = 0; i < 4; i++)
		expect_read_block(h, i, blocks[i].comp, 2);
	/* Residue and ILI on the protected length: asked for the data alone, the block is 4 bytes longer. */
	rewind_tape(h);
	read6(h, BLK, true);
	expect_sense(h, SK_NO_SENSE, ASC_NONE);
	assert_true(h->c.sense.ili);
	assert_int_equal(sense_info(h), -PI);
	assert_int_equal(h->c.data_len, BLK);
	/* Asked for more: a short block, positive residue; without SILI, ILI. */
	read6(h, BLK + 100, false);
	expect_sense(h, SK_NO_SENSE, ASC_NONE);
	assert_true(h->c.sense.ili);
	assert_int_equal(sense_info(h), 100 - PI);
	assert_int_equal(h->c.data_len, BLK + PI);
	/* Two bytes of the PI fit: those two are sent. */
	read6(h, BLK + 2, false);
	expect_sense(h, SK_NO_SENSE, ASC_NONE);
	assert_int_equal(sense_info(h), -2);
	assert_int_equal(h->c.data_len, BLK + 2);
	block(wbuf, BLK, 2, false);
	append_pi(wbuf, BLK, 2);
	assert_memory_equal(rbuf, wbuf, BLK + 2);
	assert_int_equal(rbuf[BLK + 2], 0xEE);
}

static void reed_solomon_method(void **state)
{
	struct host *h = *state;
	/* The table version agrees with a bit-by-bit division, and with the table entry for 80h the IBM reference lists. */
	uint8_t one = 0x80;
	assert_int_equal(ssc_rs_crc(&one, 1), 0x51475180u);
	block(wbuf, 9000, 5, false);
	assert_int_equal(ssc_rs_crc(wbuf, 9000), rs_slow(wbuf, 9000));
	assert_int_equal(ssc_rs_crc(wbuf, 0), 0);
	loaded(h, "P00003L8");
	select_lbp(h, 1, 4, 0xC0);
	expect_good(h);
	write_block(h, 6, true, 1);
	expect_good(h);
	/* A CRC32C where the Reed-Solomon CRC belongs is refused. */
	write_block(h, 7, false, 2);
	expect_sense(h, SK_HARDWARE_ERROR, ASC_LOGICAL_BLOCK_GUARD_CHECK_FAILED);
	rewind_tape(h);
	expect_read_block(h, 6, true, 1);
	/* The same block read under CRC32C carries its CRC32C. */
	rewind_tape(h);
	select_lbp(h, 2, 4, 0x40);
	expect_good(h);
	expect_read_block(h, 6, true, 2);
}

static void fixed_blocks(void **state)
{
	struct host *h = *state;
	loaded(h, "P00004L8");
	/* Block descriptor: fixed blocks of 1000 bytes; with CRC32C on both ways, each is sent as 1004. */
	uint8_t list[8 + 8 + 32] = {0};
	list[3] = 0x10;
	list[7] = 8;
	list[8 + 5] = 0x00;
	list[8 + 6] = 0x03;
	list[8 + 7] = 0xE8;
	uint8_t *p = list + 16;
	p[0] = 0x4A, p[1] = 0xF0, p[3] = 0x1C, p[4] = 2, p[5] = 4, p[6] = 0xC0;
	uint8_t cdb[10] = {0x55, 0x10, 0, 0, 0, 0, 0, 0, sizeof list, 0};
	host_cmd(h, cdb, 10, SCSI_DIR_OUT, list, sizeof list);
	expect_good(h);
	for (unsigned i = 0; i < 3; i++) {
		block(wbuf + i * 1004, 1000, 10 + i, false);
		append_pi(wbuf + i * 1004, 1000, 2);
	}
	/* The third block's CRC is wrong: none of the three is written. */
	wbuf[2 * 1004 + 1000] ^= 1;
	uint8_t c6[6];
	host_cmd(h, c6, cdb_write6(c6, true, 3), SCSI_DIR_OUT, wbuf, 3 * 1004);
	expect_sense(h, SK_HARDWARE_ERROR, ASC_LOGICAL_BLOCK_GUARD_CHECK_FAILED);
	assert_int_equal(sense_info(h), 3);
	assert_int_equal(host_position(h), 0);
	wbuf[2 * 1004 + 1000] ^= 1;
	host_cmd(h, c6, cdb_write6(c6, true, 3), SCSI_DIR_OUT, wbuf, 3 * 1004);
	expect_good(h);
	assert_int_equal(host_position(h), 3);
	rewind_tape(h);
	memset(rbuf, 0xEE, sizeof rbuf);
	host_cmd(h, c6, cdb_read6(c6, false, true, 3), SCSI_DIR_IN, rbuf, 3 * 1004);
	expect_good(h);
	assert_int_equal(h->c.data_len, 3 * 1004);
	assert_memory_equal(rbuf, wbuf, 3 * 1004);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(page_round_trip, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(page_refusals, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(write_checks_crc, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(read_appends_crc, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(reed_solomon_method, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(fixed_blocks, host_setup, host_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
