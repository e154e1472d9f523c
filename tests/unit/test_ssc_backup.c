/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A scripted backup application, as Bacula or tar over st would drive the
 * drive: several files of blocks separated by filemarks (variable and fixed
 * blocks), positions remembered with READ POSITION and returned to with
 * LOCATE, files found with SPACE, an append at the end, an overwrite in the
 * middle that cuts off what followed, a cartridge unloaded and loaded again,
 * and everything read back against a model of what the tape must hold.
 */
#include "tests/unit/scsi_host.h"

#include <string.h>

#include "common/vtl_error.h"
#include "vtl/drive/ssc_internal.h"

#define MAX_OBJ 512
#define MAX_BLOCK (128u << 10)

/* What the tape must hold: per object, 0 for a filemark or the block's length and content key. */
struct model {
	uint32_t len[MAX_OBJ];
	uint64_t key[MAX_OBJ];
	unsigned n;
};

static struct model m;
static uint8_t wbuf[MAX_BLOCK * 8], rbuf[MAX_BLOCK * 8], want[MAX_BLOCK];

static uint64_t pos_of(struct host *h)
{
	return host_position(h);
}

/* Writes count variable blocks of len bytes at the drive's position (which the model follows). */
static void write_blocks(struct host *h, unsigned count, uint32_t len, uint64_t key)
{
	unsigned at = (unsigned)pos_of(h);
	uint8_t cdb[6];
	for (unsigned i = 0; i < count; i++) {
		uint32_t l = len ? len : 1 + (uint32_t)((key * 7919 + i * 104729) % MAX_BLOCK);
		gen_data(wbuf, l, key + i, (i & 1) != 0);
		host_cmd(h, cdb, cdb_write6(cdb, false, l), SCSI_DIR_OUT, wbuf, l);
		expect_good(h);
		m.len[at + i] = l;
		m.key[at + i] = key + i;
	}
	m.n = at + count;
}

/* Writes count fixed blocks (the drive's block length) in commands of up to 8 blocks. */
static void write_fixed(struct host *h, unsigned count, uint64_t key)
{
	uint32_t bl = h->d->mode.block_len;
	unsigned at = (unsigned)pos_of(h);
	uint8_t cdb[6];
	for (unsigned i = 0; i < count;) {
		unsigned k = count - i < 8 ? count - i : 8;
		for (unsigned j = 0; j < k; j++) {
			gen_data(wbuf + (size_t)j * bl, bl, key + i + j, false);
			m.len[at + i + j] = bl;
			m.key[at + i + j] = key + i + j;
		}
		host_cmd(h, cdb, cdb_write6(cdb, true, k), SCSI_DIR_OUT, wbuf, (size_t)k * bl);
		expect_good(h);
		i += k;
	}
	m.n = at + count;
}

static void write_fm(struct host *h, unsigned count)
{
	unsigned at = (unsigned)pos_of(h);
	uint8_t cdb[6];
	host_cmd(h, cdb, cdb_wfm6(cdb, count, false), SCSI_DIR_NONE, NULL, 0);
	expect_good(h);
	for (unsigned i = 0; i < count; i++)
		m.len[at + i] = 0;
	m.n = at + count;
}

/* Reads the object at the position and checks it against the model. */
static void read_expect(struct host *h, unsigned obj)
{
	uint8_t cdb[6];
	host_cmd(h, cdb, cdb_read6(cdb, false, false, MAX_BLOCK), SCSI_DIR_IN, rbuf, MAX_BLOCK);
	if (obj >= m.n) {
		expect_sense(h, SK_BLANK_CHECK, ASC_EOD_DETECTED);
		return;
	}
	if (m.len[obj] == 0) {
		expect_sense(h, SK_NO_SENSE, ASC_FILEMARK_DETECTED);
		return;
	}
	if (m.len[obj] == MAX_BLOCK) {
		expect_good(h);
	} else {
		expect_sense(h, SK_NO_SENSE, ASC_NONE); /* a shorter block, no SILI: ILI */
		assert_true(h->c.sense.ili);
		assert_int_equal(sense_info(h), MAX_BLOCK - m.len[obj]);
	}
	assert_int_equal(h->c.data_len, m.len[obj]);
	gen_data(want, m.len[obj], m.key[obj], false);
	uint8_t *alt = wbuf;
	gen_data(alt, m.len[obj], m.key[obj], true);
	if (memcmp(rbuf, want, m.len[obj]) != 0 && memcmp(rbuf, alt, m.len[obj]) != 0)
		fail_msg("object %u: data differs from what was written", obj);
}

/* Reads the whole tape from BOT and checks every object and the end of data. */
static void read_all(struct host *h)
{
	uint8_t cdb[6];
	host_cmd(h, cdb, cdb_simple(cdb, 0x01), SCSI_DIR_NONE, NULL, 0);
	expect_good(h);
	for (unsigned i = 0; i <= m.n; i++)
		read_expect(h, i);
	assert_int_equal(pos_of(h), m.n);
}

static void space_fm(struct host *h, int32_t n)
{
	uint8_t cdb[6];
	host_cmd(h, cdb, cdb_space6(cdb, 1, n), SCSI_DIR_NONE, NULL, 0);
	expect_good(h);
}

static void backup_session(void **state)
{
	struct host *h = *state;
	memset(&m, 0, sizeof m);
	host_new_cart(h, "C00001L8", 0);
	host_load(h, "C00001L8");

	/* Three files: variable blocks, fixed blocks, blocks of assorted lengths; double filemark at the end. */
	write_blocks(h, 40, MAX_BLOCK, 1000);
	write_fm(h, 1);
	uint64_t file2 = pos_of(h);
	h->d->mode.block_len = 16384;
	write_fixed(h, 30, 2000);
	h->d->mode.block_len = 0;
	write_fm(h, 1);
	uint64_t file3 = pos_of(h);
	write_blocks(h, 25, 0, 3000);
	write_fm(h, 2);
	read_all(h);

	/* Find file 3 by spacing filemarks, file 2's 11th block by LOCATE to a remembered position. */
	uint8_t cdb[10];
	host_cmd(h, cdb, cdb_simple(cdb, 0x01), SCSI_DIR_NONE, NULL, 0);
	space_fm(h, 2);
	assert_int_equal(pos_of(h), file3);
	read_expect(h, (unsigned)file3);
	host_cmd(h, cdb, cdb_locate10(cdb, (uint32_t)file2 + 10), SCSI_DIR_NONE, NULL, 0);
	expect_good(h);
	read_expect(h, (unsigned)file2 + 10);
	/* Back over a filemark from inside file 3 lands just before it. */
	host_cmd(h, cdb, cdb_locate10(cdb, (uint32_t)file3 + 5), SCSI_DIR_NONE, NULL, 0);
	space_fm(h, -1);
	assert_int_equal(pos_of(h), file3 - 1);

	/* Append, as st does: to end of data, back over the second closing filemark, a new file. */
	host_cmd(h, cdb, cdb_space6(cdb, 3, 0), SCSI_DIR_NONE, NULL, 0);
	expect_good(h);
	space_fm(h, -1);
	write_blocks(h, 12, 0, 4000);
	write_fm(h, 2);
	read_all(h);

	/* The cartridge leaves the drive and comes back: everything is still there. */
	EXPECT_RC(ssc_eject(h->d), 0);
	char bc[VTL_LABEL_LEN + 1];
	EXPECT_RC(ssc_remove(h->d, bc), 0);
	host_load(h, "C00001L8");
	read_all(h);

	/* Overwrite in the middle: a new file 2 cuts off files 2..4. */
	host_cmd(h, cdb, cdb_locate10(cdb, (uint32_t)file2), SCSI_DIR_NONE, NULL, 0);
	expect_good(h);
	write_blocks(h, 7, 0, 5000);
	write_fm(h, 1);
	assert_int_equal(m.n, file2 + 8);
	read_all(h);
	/* SPACE past what was cut off finds end of data. */
	host_cmd(h, cdb, cdb_simple(cdb, 0x01), SCSI_DIR_NONE, NULL, 0);
	host_cmd(h, cdb, cdb_space6(cdb, 1, 3), SCSI_DIR_NONE, NULL, 0);
	expect_sense(h, SK_BLANK_CHECK, ASC_EOD_DETECTED);
	assert_int_equal(sense_info(h), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(backup_session, host_setup, host_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
