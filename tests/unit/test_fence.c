/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The write fence: after a failed fdatasync (or write), a cartridge never
 * again reports success for a write or a sync, even when the next
 * fdatasync would succeed (Linux reports a writeback error to a descriptor
 * once, so the pages it dropped would be acknowledged as durable), until
 * it is closed and opened again. Seen by a host, through the drive: WRITE
 * FILEMARKS gets MEDIUM ERROR, WRITE ERROR, so does every write after it,
 * and after an unload and a new load the tape works again from what is on
 * the disk.
 *
 * This program defines fdatasync itself: the store's calls (linked in
 * statically) come here, and fail while fail_syncs is above 0.
 */
#include "tests/unit/scsi_host.h"

#include <errno.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "backend/cartridge.h"
#include "common/vtl_error.h"

static int fail_syncs; /* the next fail_syncs calls of fdatasync fail with EIO */
static int syncs;      /* calls seen */

int fdatasync(int fd)
{
	syncs++;
	if (fail_syncs > 0) {
		fail_syncs--;
		errno = EIO;
		return -1;
	}
	return (int)syscall(SYS_fdatasync, fd);
}

static int setup(void **state)
{
	fail_syncs = syncs = 0;
	return fx_setup_dirs(state, "vtl-fence", 1);
}

static void store_fenced_until_reopened(void **state)
{
	struct fx *f = *state;
	fx_pool_config(f, 1, 1u << 20);
	tl_pool_open(&f->cfg, &f->pool);
	assert_int_equal(vtl_cart_create(f->pool, "FEN001L8"), 0);
	struct vtl_cart *c = tl_cart_open(f->pool, "FEN001L8", NULL);
	static uint8_t block[65536];
	gen_data(block, sizeof block, 1, false);
	assert_int_equal(vtl_cart_write_block(c, block, sizeof block), 0);
	assert_int_equal(vtl_cart_sync(c), 0);
	assert_int_equal(vtl_cart_write_block(c, block, sizeof block), 0);
	fail_syncs = 1;
	assert_int_equal(vtl_cart_sync(c), VTL_E_IO);
	/* The disk would take the next fdatasync; the cartridge still refuses. */
	int before = syncs;
	assert_int_equal(vtl_cart_sync(c), VTL_E_IO);
	assert_int_equal(vtl_cart_write_block(c, block, sizeof block), VTL_E_IO);
	assert_int_equal(vtl_cart_write_filemarks(c, 1), VTL_E_IO);
	assert_int_equal(vtl_cart_erase(c), VTL_E_IO);
	assert_int_equal(syncs, before); /* nothing was even tried */
	/* Reading goes on. */
	assert_int_equal(vtl_cart_rewind(c), 0);
	static uint8_t back[65536];
	struct vtl_read_result r;
	assert_int_equal(vtl_cart_read(c, back, sizeof back, &r), 0);
	assert_memory_equal(back, block, sizeof block);
	assert_int_equal(vtl_cart_close(c), VTL_E_IO); /* the close says so too, and writes no footer */
	/* Opened again: the repair finds what is on disk, and writing works. */
	c = tl_cart_open(f->pool, "FEN001L8", NULL);
	struct vtl_position pos;
	assert_int_equal(vtl_cart_space_eod(c), 0);
	get_pos(c, &pos);
	assert_true(pos.object >= 1);
	assert_int_equal(vtl_cart_write_block(c, block, sizeof block), 0);
	assert_int_equal(vtl_cart_sync(c), 0);
	assert_int_equal(vtl_cart_close(c), 0);
}

static int host_up(void **state)
{
	fail_syncs = syncs = 0;
	return host_setup(state);
}

/* What a host sees: the failed WRITE FILEMARKS, then MEDIUM ERROR for every write until the tape is reloaded. */
static void host_sees_medium_error(void **state)
{
	struct host *h = *state;
	host_new_cart(h, "FEN002L8", 0);
	host_load(h, "FEN002L8");
	static uint8_t block[32768];
	gen_data(block, sizeof block, 2, false);
	uint8_t cdb[6];
	cdb_write6(cdb, false, sizeof block);
	host_cmd(h, cdb, 6, SCSI_DIR_OUT, block, sizeof block);
	expect_good(h);
	fail_syncs = 1;
	cdb_wfm6(cdb, 1, false);
	host_cmd(h, cdb, 6, SCSI_DIR_NONE, NULL, 0);
	expect_sense(h, SK_MEDIUM_ERROR, ASC_WRITE_ERROR);
	cdb_write6(cdb, false, sizeof block);
	host_cmd(h, cdb, 6, SCSI_DIR_OUT, block, sizeof block);
	expect_sense(h, SK_MEDIUM_ERROR, ASC_WRITE_ERROR);
	cdb_wfm6(cdb, 1, false);
	host_cmd(h, cdb, 6, SCSI_DIR_NONE, NULL, 0);
	expect_sense(h, SK_MEDIUM_ERROR, ASC_WRITE_ERROR);
	/*
	 * Unloaded (the cartridge leaves, with the error: an unload's GOOD means
	 * everything is on the medium) and loaded again: the block written
	 * before the failed sync is on disk, and writing works.
	 */
	uint8_t unload[6] = {0x1B, 0, 0, 0, 0, 0}, load[6] = {0x1B, 0, 0, 0, 1, 0};
	host_cmd(h, unload, 6, SCSI_DIR_NONE, NULL, 0);
	expect_sense(h, SK_MEDIUM_ERROR, ASC_WRITE_ERROR); /* ejected, but GOOD would say all is on the medium */
	host_cmd(h, load, 6, SCSI_DIR_NONE, NULL, 0);
	expect_good(h);
	uint8_t space_eod[6];
	cdb_space6(space_eod, 3, 0);
	host_cmd(h, space_eod, 6, SCSI_DIR_NONE, NULL, 0);
	expect_good(h);
	assert_true(host_position(h) >= 1); /* the block written before the failed sync (its filemark may be there too) */
	cdb_write6(cdb, false, sizeof block);
	host_cmd(h, cdb, 6, SCSI_DIR_OUT, block, sizeof block);
	expect_good(h);
	cdb_wfm6(cdb, 1, false);
	host_cmd(h, cdb, 6, SCSI_DIR_NONE, NULL, 0);
	expect_good(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(store_fenced_until_reopened, setup, fx_teardown),
		cmocka_unit_test_setup_teardown(host_sees_medium_error, host_up, host_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
