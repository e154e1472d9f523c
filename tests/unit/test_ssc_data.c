/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The drive's data path as a host sees it: READ(6)/WRITE(6) in variable and
 * fixed mode with ILI, SILI and residues, filemarks and end of data, write
 * protection, WORM, early warning, the end of the medium and a full pool,
 * WRITE FILEMARKS, VERIFY, READ BLOCK LIMITS, and buffers split or short.
 */
#include "tests/unit/scsi_host.h"

#include <string.h>

#include "common/vtl_error.h"
#include "vtl/drive/ssc_internal.h"

#define BIG (256u << 10)

static uint8_t wbuf[BIG * 4], rbuf[BIG * 4 + 64];

static void write_var(struct host *h, uint32_t len, uint64_t key)
{
	uint8_t cdb[6];
	gen_data(wbuf, len, key, false);
	host_cmd(h, cdb, cdb_write6(cdb, false, len), SCSI_DIR_OUT, wbuf, len);
	expect_good(h);
	assert_int_equal(h->c.data_len, len);
}

static void wfm(struct host *h, uint32_t n)
{
	uint8_t cdb[6];
	host_cmd(h, cdb, cdb_wfm6(cdb, n, false), SCSI_DIR_NONE, NULL, 0);
	expect_good(h);
}

static void rewind_tape(struct host *h)
{
	uint8_t cdb[6];
	host_cmd(h, cdb, cdb_simple(cdb, 0x01), SCSI_DIR_NONE, NULL, 0);
	expect_good(h);
}

static int read_var(struct host *h, uint32_t len, bool sili)
{
	uint8_t cdb[6];
	memset(rbuf, 0xEE, sizeof rbuf);
	return host_cmd(h, cdb, cdb_read6(cdb, sili, false, len), SCSI_DIR_IN, rbuf, len);
}

static void loaded(struct host *h, const char *bc)
{
	host_new_cart(h, bc, 0);
	host_load(h, bc);
}

static void variable_round_trip(void **state)
{
	struct host *h = *state;
	loaded(h, "A00001L8");
	const uint32_t sizes[] = {1, 80, 4096, 65536, BIG, 12345};
	for (unsigned i = 0; i < 6; i++)
		write_var(h, sizes[i], i);
	wfm(h, 1);
	assert_int_equal(host_position(h), 7);
	rewind_tape(h);
	for (unsigned i = 0; i < 6; i++) {
		read_var(h, sizes[i], false);
		expect_good(h);
		assert_int_equal(h->c.data_len, sizes[i]);
		gen_data(wbuf, sizes[i], i, false);
		assert_memory_equal(rbuf, wbuf, sizes[i]);
		assert_int_equal(rbuf[sizes[i]], 0xEE);
	}
	/* The filemark: NO SENSE, FILEMARK, INFORMATION = the whole request; positioned after it. */
	read_var(h, 1000, false);
	expect_sense(h, SK_NO_SENSE, ASC_FILEMARK_DETECTED);
	assert_true(h->c.sense.filemark);
	assert_int_equal(sense_info(h), 1000);
	assert_int_equal(h->c.data_len, 0);
	assert_int_equal(host_position(h), 7);
	/* End of data: BLANK CHECK, END-OF-DATA DETECTED, position stays. */
	read_var(h, 1000, false);
	expect_sense(h, SK_BLANK_CHECK, ASC_EOD_DETECTED);
	assert_int_equal(sense_info(h), 1000);
	assert_int_equal(host_position(h), 7);
	/* A transfer length of 0 moves nothing. */
	read_var(h, 0, false);
	expect_good(h);
	assert_int_equal(host_position(h), 7);
}

static void incorrect_length(void **state)
{
	struct host *h = *state;
	loaded(h, "A00002L8");
	write_var(h, 1000, 1);
	write_var(h, 1000, 2);
	write_var(h, 1000, 3);
	rewind_tape(h);
	/* Block shorter than asked, no SILI: ILI with the positive residue, the block's bytes transferred. */
	read_var(h, 4000, false);
	expect_sense(h, SK_NO_SENSE, ASC_NONE);
	assert_true(h->c.sense.ili);
	assert_int_equal(sense_info(h), 3000);
	assert_int_equal(h->c.data_len, 1000);
	gen_data(wbuf, 1000, 1, false);
	assert_memory_equal(rbuf, wbuf, 1000);
	/* With SILI the short block is no error. */
	read_var(h, 4000, true);
	expect_good(h);
	assert_int_equal(h->c.data_len, 1000);
	/* Block longer than asked: ILI, negative residue, only what was asked is transferred; SILI does not hide it. */
	read_var(h, 100, true);
	expect_sense(h, SK_NO_SENSE, ASC_NONE);
	assert_true(h->c.sense.ili);
	assert_int_equal(sense_info(h), -900);
	assert_int_equal(h->c.data_len, 100);
	assert_int_equal(rbuf[100], 0xEE);
	/* The fixed-format bytes: VALID, ILI, INFORMATION in two's complement. */
	assert_int_equal(h->sense[0], 0xF0);
	assert_int_equal(h->sense[2], 0x20);
	assert_int_equal(h->sense[3], 0xFF);
	assert_int_equal(h->sense[6], 0x7C);
	/* The long block was passed: the position is after it. */
	assert_int_equal(host_position(h), 3);
}

static void fixed_mode(void **state)
{
	struct host *h = *state;
	loaded(h, "A00003L8");
	uint8_t cdb[6];
	/* FIXED while the block length is 0 is refused, pointing at the FIXED bit. */
	host_cmd(h, cdb, cdb_write6(cdb, true, 1), SCSI_DIR_OUT, wbuf, 512);
	expect_sense(h, SK_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_CDB);
	assert_int_equal(h->c.sense.sks_field, 1);
	assert_int_equal(h->c.sense.sks_bit, 0);
	h->d->mode.block_len = 512;
	gen_data(wbuf, 8 * 512, 7, false);
	host_cmd(h, cdb, cdb_write6(cdb, true, 8), SCSI_DIR_OUT, wbuf, 8 * 512);
	expect_good(h);
	wfm(h, 1);
	write_var(h, 700, 9); /* a block of another length after the filemark */
	rewind_tape(h);
	gen_data(wbuf, 8 * 512, 7, false);
	host_cmd(h, cdb, cdb_read6(cdb, false, true, 5), SCSI_DIR_IN, rbuf, 5 * 512);
	expect_good(h);
	assert_memory_equal(rbuf, wbuf, 5 * 512);
	/* Three blocks left, then a filemark: FILEMARK with the residue in blocks. */
	host_cmd(h, cdb, cdb_read6(cdb, false, true, 5), SCSI_DIR_IN, rbuf, 5 * 512);
	expect_sense(h, SK_NO_SENSE, ASC_FILEMARK_DETECTED);
	assert_true(h->c.sense.filemark);
	assert_int_equal(sense_info(h), 2);
	assert_int_equal(h->c.data_len, 3 * 512);
	assert_memory_equal(rbuf, wbuf + 5 * 512, 3 * 512);
	/* A 700-byte block where 512 are expected: ILI, residue counts the blocks not read. */
	host_cmd(h, cdb, cdb_read6(cdb, false, true, 2), SCSI_DIR_IN, rbuf, 2 * 512);
	expect_sense(h, SK_NO_SENSE, ASC_NONE);
	assert_true(h->c.sense.ili);
	assert_int_equal(sense_info(h), 2);
	/* SILI together with FIXED is not allowed. */
	host_cmd(h, cdb, cdb_read6(cdb, true, true, 1), SCSI_DIR_IN, rbuf, 512);
	expect_sense(h, SK_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_CDB);
	assert_int_equal(h->c.sense.sks_bit, 1);
}

static void short_and_split_buffers(void **state)
{
	struct host *h = *state;
	loaded(h, "A00004L8");
	uint8_t cdb[6];
	/* The initiator offers fewer bytes than WRITE(6) names: nothing is written. */
	host_cmd(h, cdb, cdb_write6(cdb, false, 5000), SCSI_DIR_OUT, wbuf, 4000);
	expect_sense(h, SK_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_CDB);
	assert_int_equal(h->c.sense.sks_field, 2);
	assert_int_equal(host_position(h), 0);
	/* A block from three separate buffers, read back into two. */
	gen_data(wbuf, 10000, 11, false);
	struct iovec out[3] = {{wbuf, 3000}, {wbuf + 3000, 1}, {wbuf + 3001, 6999}};
	struct scsi_cmd c;
	memset(&c, 0, sizeof c);
	cdb_write6(c.cdb, false, 10000);
	c.cdb_len = 6;
	c.dir = SCSI_DIR_OUT;
	c.xfer_len = 10000;
	c.iov = out;
	c.iov_cnt = 3;
	c.nexus = HOST_NEXUS;
	ssc_execute(h->d, &c);
	assert_int_equal(c.status, SCSI_GOOD);
	rewind_tape(h);
	memset(rbuf, 0xEE, sizeof rbuf);
	struct iovec in[2] = {{rbuf, 7}, {rbuf + 100, 9993}};
	memset(&c, 0, sizeof c);
	cdb_read6(c.cdb, false, false, 10000);
	c.cdb_len = 6;
	c.dir = SCSI_DIR_IN;
	c.xfer_len = 10000;
	c.iov = in;
	c.iov_cnt = 2;
	c.nexus = HOST_NEXUS;
	ssc_execute(h->d, &c);
	assert_int_equal(c.status, SCSI_GOOD);
	assert_int_equal(c.data_len, 10000);
	assert_memory_equal(rbuf, wbuf, 7);
	assert_int_equal(rbuf[7], 0xEE);
	assert_memory_equal(rbuf + 100, wbuf + 7, 9993);
	/* READ whose buffer is shorter than the CDB asks: never written past, the block is passed. */
	rewind_tape(h);
	memset(rbuf, 0xEE, sizeof rbuf);
	host_cmd(h, cdb, cdb_read6(cdb, false, false, 10000), SCSI_DIR_IN, rbuf, 100);
	assert_true(h->c.data_len <= 100);
	assert_int_equal(rbuf[100], 0xEE);
	assert_int_equal(host_position(h), 1);
}

static void write_protection(void **state)
{
	struct host *h = *state;
	host_new_cart(h, "A00005L8", 0);
	struct ssc_medium m = {.barcode = "A00005L8", .write_protected = true};
	char err[128];
	EXPECT_RC(ssc_insert(h->d, &m, err, sizeof err), 0);
	uint8_t cdb[6];
	host_cmd(h, cdb, cdb_simple(cdb, 0), SCSI_DIR_NONE, NULL, 0); /* the load's attention */
	host_cmd(h, cdb, cdb_write6(cdb, false, 100), SCSI_DIR_OUT, wbuf, 100);
	expect_sense(h, SK_DATA_PROTECT, ASC_WRITE_PROTECTED);
	host_cmd(h, cdb, cdb_wfm6(cdb, 1, false), SCSI_DIR_NONE, NULL, 0);
	expect_sense(h, SK_DATA_PROTECT, ASC_WRITE_PROTECTED);
	host_cmd(h, cdb, cdb_simple(cdb, 0x19), SCSI_DIR_NONE, NULL, 0);
	expect_sense(h, SK_DATA_PROTECT, ASC_WRITE_PROTECTED);
	/* An older generation an LTO-7 drive only reads: DATA PROTECT, cannot write (incompatible format). */
	EXPECT_RC(ssc_eject(h->d), 0);
	char bc[VTL_LABEL_LEN + 1];
	EXPECT_RC(ssc_remove(h->d, bc), 0);
	host_drive_model(h, "IBM", "ULT3580-TD7");
	loaded(h, "A00006L5");
	host_cmd(h, cdb, cdb_write6(cdb, false, 100), SCSI_DIR_OUT, wbuf, 100);
	expect_sense(h, SK_DATA_PROTECT, ASC_CANNOT_WRITE_MEDIUM);
	read_var(h, 100, false);
	expect_sense(h, SK_BLANK_CHECK, ASC_EOD_DETECTED); /* but reading works */
}

static void worm_appends_only(void **state)
{
	struct host *h = *state;
	loaded(h, "A00007LY");
	write_var(h, 1000, 1);
	write_var(h, 1000, 2);
	wfm(h, 1);
	rewind_tape(h);
	uint8_t cdb[6];
	host_cmd(h, cdb, cdb_write6(cdb, false, 100), SCSI_DIR_OUT, wbuf, 100);
	expect_sense(h, SK_DATA_PROTECT, ASC_WORM_OVERWRITE);
	host_cmd(h, cdb, cdb_simple(cdb, 0x19), SCSI_DIR_NONE, NULL, 0);
	expect_sense(h, SK_DATA_PROTECT, ASC_WORM_OVERWRITE);
	/* Nothing was lost, and appending at end of data works. */
	host_cmd(h, cdb, cdb_space6(cdb, 3, 0), SCSI_DIR_NONE, NULL, 0);
	expect_good(h);
	write_var(h, 500, 3);
	rewind_tape(h);
	read_var(h, 1000, false);
	expect_good(h);
	gen_data(wbuf, 1000, 1, false);
	assert_memory_equal(rbuf, wbuf, 1000);
	assert_int_equal(host_position(h), 1);
}

static void filemarks_command(void **state)
{
	struct host *h = *state;
	loaded(h, "A00008L8");
	uint8_t cdb[6];
	host_cmd(h, cdb, cdb_wfm6(cdb, 3, true), SCSI_DIR_NONE, NULL, 0);
	expect_good(h);
	assert_int_equal(host_position(h), 3);
	host_cmd(h, cdb, cdb_wfm6(cdb, 0, false), SCSI_DIR_NONE, NULL, 0); /* 0: only synchronize */
	expect_good(h);
	assert_int_equal(host_position(h), 3);
	cdb_wfm6(cdb, 1, false);
	cdb[1] = 0x02; /* WSMK: no setmarks on LTO */
	host_cmd(h, cdb, 6, SCSI_DIR_NONE, NULL, 0);
	expect_sense(h, SK_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_CDB);
	assert_int_equal(h->c.sense.sks_bit, 1);
	assert_int_equal(host_position(h), 3);
}

/* Writes 64 KiB blocks until the drive reports something other than GOOD; returns the blocks written GOOD. */
static unsigned fill(struct host *h, unsigned max)
{
	uint8_t cdb[6];
	gen_data(wbuf, 65536, 99, false);
	for (unsigned i = 0; i < max; i++)
		if (host_cmd(h, cdb, cdb_write6(cdb, false, 65536), SCSI_DIR_OUT, wbuf, 65536) != SCSI_GOOD)
			return i;
	return max;
}

static void early_warning_and_end(void **state)
{
	struct host *h = *state;
	/* A 4 MiB cartridge is narrower than the early-warning zone (one largest write): in it from BOT. */
	host_new_cart(h, "A00009L8", 4u << 20);
	host_load(h, "A00009L8");
	unsigned good = fill(h, 1000);
	/* Early warning: the block was written, NO SENSE with EOM and END-OF-PARTITION/MEDIUM DETECTED. */
	expect_sense(h, SK_NO_SENSE, ASC_EOM_DETECTED);
	assert_true(h->c.sense.eom);
	assert_int_equal(sense_info(h), 0);
	assert_int_equal(host_position(h), good + 1);
	/* Writing on past early warning works until the end, which gives VOLUME OVERFLOW and the residue. */
	uint8_t cdb[6];
	unsigned more = 0;
	for (;;) {
		host_cmd(h, cdb, cdb_write6(cdb, false, 65536), SCSI_DIR_OUT, wbuf, 65536);
		if (h->c.sense.key == SK_VOLUME_OVERFLOW)
			break;
		expect_sense(h, SK_NO_SENSE, ASC_EOM_DETECTED);
		assert_true(++more < 100);
	}
	expect_sense(h, SK_VOLUME_OVERFLOW, ASC_EOM_DETECTED);
	assert_true(h->c.sense.eom);
	assert_int_equal(sense_info(h), 65536);
	uint64_t end = host_position(h);
	assert_int_equal(end, good + 1 + more);
	/* Filemarks at the end too. */
	host_cmd(h, cdb, cdb_wfm6(cdb, 1, false), SCSI_DIR_NONE, NULL, 0);
	assert_int_equal(h->c.status, SCSI_CHECK_CONDITION);
	/* Every block acknowledged reads back. */
	rewind_tape(h);
	for (uint64_t i = 0; i < end; i++) {
		read_var(h, 65536, false);
		expect_good(h);
		assert_memory_equal(rbuf, wbuf, 65536);
	}
}

/*
 * A small cartridge whose 2% early-warning zone is narrower than one write:
 * the host still gets early warning (NO SENSE, EOM) before the end (VOLUME
 * OVERFLOW), never the end first, and every block acknowledged reads back.
 */
static void early_warning_before_the_end_of_a_small_tape(void **state)
{
	struct host *h = *state;
	enum { BLOCK = sizeof wbuf };                /* 1 MiB writes: the zone of 2% of 40 MiB is 800 KiB */
	host_new_cart(h, "A00012L8", 40u << 20);
	host_load(h, "A00012L8");
	gen_data(wbuf, BLOCK, 12, false);
	uint8_t cdb[6];
	unsigned good = 0, warned = 0;
	for (;;) {
		host_cmd(h, cdb, cdb_write6(cdb, false, BLOCK), SCSI_DIR_OUT, wbuf, BLOCK);
		if (h->c.status == SCSI_GOOD) {
			assert_int_equal(warned, 0); /* past early warning, every write says so */
			good++;
		} else if (h->c.sense.key == SK_NO_SENSE) {
			expect_sense(h, SK_NO_SENSE, ASC_EOM_DETECTED);
			assert_true(h->c.sense.eom);
			warned++;
		} else {
			break;
		}
		assert_true(good + warned < 64);
	}
	expect_sense(h, SK_VOLUME_OVERFLOW, ASC_EOM_DETECTED);
	if (!warned)
		fail_msg("VOLUME OVERFLOW after %u GOOD writes of %u bytes without an early warning", good, BLOCK);
	assert_int_equal(host_position(h), good + warned);
	rewind_tape(h);
	for (unsigned i = 0; i < good + warned; i++) {
		read_var(h, BLOCK, false);
		expect_good(h);
		assert_memory_equal(rbuf, wbuf, BLOCK);
	}
}

static void fixed_mode_at_the_end(void **state)
{
	struct host *h = *state;
	host_new_cart(h, "A00010L8", 1u << 20);
	host_load(h, "A00010L8");
	h->d->mode.block_len = 32768;
	uint8_t cdb[6];
	gen_data(wbuf, 64 * 32768u > sizeof wbuf ? sizeof wbuf : 64 * 32768u, 5, false);
	/* 40 blocks of 32 KiB do not fit 1 MiB: the residue counts the blocks not written. */
	host_cmd(h, cdb, cdb_write6(cdb, true, 40), SCSI_DIR_OUT, wbuf, 40 * 32768);
	expect_sense(h, SK_VOLUME_OVERFLOW, ASC_EOM_DETECTED);
	int32_t residue = sense_info(h);
	assert_true(residue > 0 && residue < 40);
	assert_int_equal(host_position(h), (uint64_t)(40 - residue));
}

static void pool_full(void **state)
{
	struct host *h = *state;
	host_pool_quota(h, 3u << 20, 256u << 10); /* the disk fills long before the 12 TB cartridge */
	loaded(h, "A00011L8");
	unsigned good = fill(h, 1000);
	assert_true(good < 100);
	/* The same as the end of the medium, never a silent loss. */
	expect_sense(h, SK_VOLUME_OVERFLOW, ASC_EOM_DETECTED);
	assert_true(h->c.sense.eom);
	assert_int_equal(sense_info(h), 65536);
	uint64_t end = host_position(h);
	assert_int_equal(end, good);
	rewind_tape(h);
	for (uint64_t i = 0; i < end; i++) {
		read_var(h, 65536, false);
		expect_good(h);
		assert_memory_equal(rbuf, wbuf, 65536);
	}
	read_var(h, 65536, false);
	expect_sense(h, SK_BLANK_CHECK, ASC_EOD_DETECTED);
}

static void unbuffered_mode(void **state)
{
	struct host *h = *state;
	loaded(h, "A00012L8");
	h->d->mode.buffered = false;
	write_var(h, 5000, 1);
	wfm(h, 1);
	rewind_tape(h);
	read_var(h, 5000, false);
	expect_good(h);
}

static void deferred_error_reporting(void **state)
{
	struct host *h = *state;
	loaded(h, "A00013L8");
	/* A failure of earlier buffered writes, as ssc_flush records it, reaches the next command once. */
	struct scsi_sense s;
	s = sense_of(SK_MEDIUM_ERROR, ASC_WRITE_ERROR);
	s.deferred = true;
	h->d->deferred = s;
	h->d->deferred_pending = true;
	uint8_t cdb[6];
	uint8_t inq[6] = {0x12, 0, 0, 0, 36, 0};
	host_cmd(h, inq, 6, SCSI_DIR_IN, rbuf, 36);
	expect_good(h); /* INQUIRY does not take it */
	host_cmd(h, cdb, cdb_simple(cdb, 0), SCSI_DIR_NONE, NULL, 0);
	expect_sense(h, SK_MEDIUM_ERROR, ASC_WRITE_ERROR);
	assert_int_equal(h->sense[0], 0x71);
	host_cmd(h, cdb, cdb_simple(cdb, 0), SCSI_DIR_NONE, NULL, 0);
	expect_good(h);
}

static void verify_command(void **state)
{
	struct host *h = *state;
	loaded(h, "A00014L8");
	h->d->mode.block_len = 1024;
	uint8_t cdb[6];
	gen_data(wbuf, 4 * 1024, 3, false);
	host_cmd(h, cdb, cdb_write6(cdb, true, 4), SCSI_DIR_OUT, wbuf, 4 * 1024);
	expect_good(h);
	wfm(h, 1);
	rewind_tape(h);
	uint8_t v[6] = {0x13, 0x01, 0, 0, 2, 0};
	host_cmd(h, v, 6, SCSI_DIR_NONE, NULL, 0);
	expect_good(h);
	assert_int_equal(host_position(h), 2);
	/* Byte compare against the host's data: equal, then different. */
	v[1] = 0x03;
	v[4] = 1;
	host_cmd(h, v, 6, SCSI_DIR_OUT, wbuf + 2 * 1024, 1024);
	expect_good(h);
	host_cmd(h, v, 6, SCSI_DIR_OUT, wbuf, 1024);
	expect_sense(h, SK_MISCOMPARE, ASC_MISCOMPARE_DURING_VERIFY);
	/* Verifying into the filemark. */
	v[1] = 0x01;
	v[4] = 3;
	host_cmd(h, v, 6, SCSI_DIR_NONE, NULL, 0);
	expect_sense(h, SK_NO_SENSE, ASC_FILEMARK_DETECTED);
	assert_int_equal(sense_info(h), 3);
	v[1] = 0x20; /* VTE is not offered */
	host_cmd(h, v, 6, SCSI_DIR_NONE, NULL, 0);
	expect_sense(h, SK_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_CDB);
	assert_int_equal(h->c.sense.sks_bit, 5);
}

static void block_limits(void **state)
{
	struct host *h = *state;
	uint8_t cdb[6], b[16];
	memset(b, 0xEE, sizeof b);
	host_cmd(h, cdb, cdb_simple(cdb, 0x05), SCSI_DIR_IN, b, 6); /* no medium needed */
	expect_good(h);
	static const uint8_t want[6] = {0x00, 0x80, 0x00, 0x00, 0x00, 0x01};
	assert_memory_equal(b, want, 6);
	assert_int_equal(b[6], 0xEE);
	/* And the limit is enforced. */
	loaded(h, "A00015L8");
	host_cmd(h, cdb, cdb_write6(cdb, false, 0x800001), SCSI_DIR_OUT, wbuf, 16);
	expect_sense(h, SK_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_CDB);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, host_setup, host_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(variable_round_trip), T(incorrect_length), T(fixed_mode), T(short_and_split_buffers),
		T(write_protection), T(worm_appends_only), T(filemarks_command), T(early_warning_and_end),
		T(early_warning_before_the_end_of_a_small_tape), T(fixed_mode_at_the_end), T(pool_full),
		T(unbuffered_mode), T(deferred_error_reporting),
		T(verify_command), T(block_limits),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
