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
 * A full file system is not a fault: when only a footer does not fit (at a
 * close, or in the seal at a segment change), the records are already
 * synced, so nothing is lost and the store reports a full pool at most.
 *
 * LOAD of a loaded tape empties the buffer as REWIND does: its sync, and
 * its failure reported as REWIND reports it.
 *
 * The streaming writeback (sync_file_range behind the writer) reports a
 * writeback error once too, so it fences the cartridge the same way; a file
 * system without sync_file_range is no fault, the kernel then writes back.
 *
 * This program defines fdatasync, pwritev and sync_file_range itself: the
 * store's calls (linked in statically) come here; fdatasync fails while
 * fail_syncs is above 0, pwritev with ENOSPC while disk_full is set,
 * sync_file_range with wb_errno while that is set.
 */
#include "tests/unit/scsi_host.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "backend/cartridge.h"
#include "backend/format.h"
#include "backend/internal.h"
#include "common/vtl_error.h"
#include "vtl/library/library.h"
#include "vtl/changer/smc.h"

static int fail_syncs; /* the next fail_syncs calls of fdatasync fail with EIO */
static int syncs;      /* calls seen */
static bool seg_syncs_fail; /* while set, fdatasync of a segment file (not the catalog's) fails with EIO */

/* Whether fd is a cartridge's segment file (its name ends with ".seg"). */
static bool is_segment(int fd)
{
	char link[64], path[4096];
	snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
	ssize_t n = readlink(link, path, sizeof path - 1);
	if (n < 4)
		return false;
	path[n] = 0;
	return strcmp(path + n - 4, ".seg") == 0;
}
/* While set, pwritev fails with ENOSPC (a full file system); read by the store's seal worker too. */
static _Atomic int disk_full;
static _Atomic int refused; /* writes refused so */

int fdatasync(int fd)
{
	syncs++;
	if (fail_syncs > 0 || (seg_syncs_fail && is_segment(fd))) {
		if (fail_syncs > 0)
			fail_syncs--;
		errno = EIO;
		return -1;
	}
	return (int)syscall(SYS_fdatasync, fd);
}

ssize_t pwritev(int fd, const struct iovec *iov, int cnt, off_t off)
{
	if (disk_full) {
		refused++;
		errno = ENOSPC;
		return -1;
	}
	return (ssize_t)syscall(SYS_pwritev, fd, iov, cnt, (long)off, (long)((uint64_t)off >> 32));
}

static int wb_errno; /* while set, sync_file_range fails with it */
static int wb_calls; /* calls of sync_file_range seen */

int sync_file_range(int fd, off_t offset, off_t nbytes, unsigned int flags)
{
	wb_calls++;
	if (wb_errno) {
		errno = wb_errno;
		return -1;
	}
	return (int)syscall(SYS_sync_file_range, fd, offset, nbytes, flags);
}

static int setup(void **state)
{
	wb_errno = wb_calls = 0;
	fail_syncs = syncs = 0;
	seg_syncs_fail = false;
	disk_full = refused = 0;
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

/* A new cartridge, opened, in a pool of one member with 64 MiB segments (room for several writeback steps). */
static struct vtl_cart *new_cart_in_big_segments(struct fx *f, const char *bc)
{
	fx_pool_config(f, 1, 64u << 20);
	tl_pool_open(&f->cfg, &f->pool);
	assert_int_equal(vtl_cart_create(f->pool, bc), 0);
	return tl_cart_open(f->pool, bc, NULL);
}

/* Writes 1 MiB blocks until one does not return 0 (at most max); returns how many did. */
static unsigned write_mib_blocks(struct vtl_cart *c, unsigned max, int *rc)
{
	static uint8_t block[1u << 20];
	gen_data(block, sizeof block, 7, false);
	unsigned n = 0;
	while (n < max && (*rc = vtl_cart_write_block(c, block, sizeof block)) == 0)
		n++;
	return n;
}

/*
 * A writeback error the streaming writeback meets: the WRITE in progress
 * fails, and so does every write and sync after it, without an fdatasync
 * that could not see the error any more; opened again, the tape works.
 */
static void writeback_error_fences(void **state)
{
	struct fx *f = *state;
	struct vtl_cart *c = new_cart_in_big_segments(f, "FEN005L8");
	wb_errno = EIO;
	int rc = 0;
	unsigned n = write_mib_blocks(c, 16, &rc);
	assert_int_equal(rc, VTL_E_IO);
	assert_int_equal(n, 8); /* the first write after 8 MiB had filled started the writeback */
	assert_int_equal(wb_calls, 1);
	wb_errno = 0;
	int before = syncs;
	assert_int_equal(vtl_cart_sync(c), VTL_E_IO);
	assert_int_equal(write_mib_blocks(c, 1, &rc), 0);
	assert_int_equal(rc, VTL_E_IO);
	assert_int_equal(syncs, before);
	assert_int_equal(vtl_cart_close(c), VTL_E_IO);
	c = tl_cart_open(f->pool, "FEN005L8", NULL);
	assert_int_equal(vtl_cart_space_eod(c), 0);
	assert_int_equal(write_mib_blocks(c, 1, &rc), 1);
	assert_int_equal(vtl_cart_sync(c), 0);
	assert_int_equal(vtl_cart_close(c), 0);
}

/* A file system without sync_file_range: writing and syncing go on, and the store stops asking. */
static void writeback_unsupported_is_no_fault(void **state)
{
	struct fx *f = *state;
	struct vtl_cart *c = new_cart_in_big_segments(f, "FEN006L8");
	wb_errno = EINVAL;
	int rc = 0;
	assert_int_equal(write_mib_blocks(c, 40, &rc), 40);
	assert_int_equal(wb_calls, 1);
	assert_int_equal(vtl_cart_write_filemarks(c, 1), 0);
	assert_int_equal(vtl_cart_sync(c), 0);
	assert_int_equal(vtl_cart_close(c), 0);
}

/* Reads n blocks of len bytes and keys base.. from the position; fails the test on a difference. */
static void read_blocks(struct vtl_cart *c, unsigned n, uint64_t base, size_t len)
{
	static uint8_t want[65536], back[65536];
	for (unsigned i = 0; i < n; i++) {
		struct vtl_read_result r;
		gen_data(want, len, base + i, false);
		assert_int_equal(vtl_cart_read(c, back, len, &r), 0);
		assert_int_equal(r.type, VTL_OBJ_DATA);
		assert_int_equal(r.length, len);
		assert_memory_equal(back, want, len);
	}
}

/*
 * A file system full when the close writes the footer: every record is
 * already synced and the footer is only an index, so the close succeeds (an
 * unload is GOOD) and the next open indexes the segment from its records.
 */
static void full_disk_at_close_loses_nothing(void **state)
{
	struct fx *f = *state;
	fx_pool_config(f, 1, 1u << 20);
	tl_pool_open(&f->cfg, &f->pool);
	assert_int_equal(vtl_cart_create(f->pool, "FUL001L8"), 0);
	struct vtl_cart *c = tl_cart_open(f->pool, "FUL001L8", NULL);
	static uint8_t block[16384];
	for (unsigned i = 0; i < 4; i++) {
		gen_data(block, sizeof block, 10 + i, false);
		assert_int_equal(vtl_cart_write_block(c, block, sizeof block), 0);
	}
	disk_full = 1;
	assert_int_equal(vtl_cart_close(c), 0);
	disk_full = 0;
	assert_true(refused > 0); /* the footer was refused */
	c = tl_cart_open(f->pool, "FUL001L8", NULL);
	struct vtl_position pos;
	assert_int_equal(vtl_cart_space_eod(c), 0);
	get_pos(c, &pos);
	assert_int_equal(pos.object, 4);
	assert_int_equal(vtl_cart_rewind(c), 0);
	read_blocks(c, 4, 10, sizeof block);
	assert_int_equal(vtl_cart_write_block(c, block, sizeof block), 0);
	assert_int_equal(vtl_cart_close(c), 0);
}

/*
 * Full at a segment change, while the seal of the full segment writes its
 * footer on a worker: the write that needed the new segment and the sync
 * after it report a full pool (the drive's VOLUME OVERFLOW), never the fence;
 * once there is space the tape takes more, and everything reads back.
 */
static void full_disk_at_segment_change_is_no_fault(void **state)
{
	struct fx *f = *state;
	enum { SEG = 65536, BLK = 16384 };
	fx_pool_config(f, 1, SEG);
	tl_pool_open(&f->cfg, &f->pool);
	assert_int_equal(vtl_cart_create(f->pool, "FUL002L8"), 0);
	struct vtl_cart *c = tl_cart_open(f->pool, "FUL002L8", NULL);
	static uint8_t block[BLK];
	/* Three blocks fit in the first segment with its header; the fourth needs a new one. */
	unsigned n = 0;
	for (; n < 3; n++) {
		gen_data(block, sizeof block, 20 + n, false);
		assert_int_equal(vtl_cart_write_block(c, block, sizeof block), 0);
	}
	disk_full = 1;
	gen_data(block, sizeof block, 20 + n, false);
	int rc = vtl_cart_write_block(c, block, sizeof block);
	int rc_sync = vtl_cart_sync(c);
	disk_full = 0;
	assert_true(refused > 0);
	assert_int_equal(rc, VTL_E_POOL_FULL);
	assert_int_equal(rc_sync, VTL_E_POOL_FULL); /* the seal's footer did not fit either */
	/* Space again: the same open cartridge takes the block, and syncs. */
	assert_int_equal(vtl_cart_write_block(c, block, sizeof block), 0);
	n++;
	assert_int_equal(vtl_cart_sync(c), 0);
	assert_int_equal(vtl_cart_rewind(c), 0);
	read_blocks(c, n, 20, sizeof block);
	assert_int_equal(vtl_cart_close(c), 0);
	c = tl_cart_open(f->pool, "FUL002L8", NULL);
	read_blocks(c, n, 20, sizeof block);
	struct vtl_position pos;
	assert_int_equal(vtl_cart_space_eod(c), 0);
	get_pos(c, &pos);
	assert_int_equal(pos.object, n);
	assert_int_equal(vtl_cart_close(c), 0);
}

static int host_up(void **state)
{
	fail_syncs = syncs = 0;
	seg_syncs_fail = false;
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

/*
 * LOAD of a tape already loaded rewinds it; the drive empties its buffer
 * first, as for a REWIND: the buffered blocks are synced (and no filemark is
 * added), and a sync that fails is that deferred MEDIUM ERROR, the tape not
 * moved.
 */
static void load_of_a_loaded_tape_syncs(void **state)
{
	struct host *h = *state;
	host_new_cart(h, "FEN003L8", 0);
	host_load(h, "FEN003L8");
	static uint8_t block[32768];
	uint8_t cdb[6], load[6] = {0x1B, 0, 0, 0, 1, 0};
	gen_data(block, sizeof block, 3, false);
	cdb_write6(cdb, false, sizeof block);
	host_cmd(h, cdb, 6, SCSI_DIR_OUT, block, sizeof block);
	expect_good(h);
	int before = syncs;
	host_cmd(h, load, 6, SCSI_DIR_NONE, NULL, 0);
	expect_good(h);
	assert_true(syncs > before); /* the buffered block was synced */
	assert_int_equal(host_position(h), 0);
	/* Nothing was added: at end of data there is the one block, no filemark. */
	uint8_t space_eod[6];
	cdb_space6(space_eod, 3, 0);
	host_cmd(h, space_eod, 6, SCSI_DIR_NONE, NULL, 0);
	expect_good(h);
	assert_int_equal(host_position(h), 1);
	/* Another buffered block, and its sync fails: the LOAD reports it, the tape stays where it was. */
	host_cmd(h, cdb, 6, SCSI_DIR_OUT, block, sizeof block);
	expect_good(h);
	fail_syncs = 1;
	host_cmd(h, load, 6, SCSI_DIR_NONE, NULL, 0);
	expect_sense(h, SK_MEDIUM_ERROR, ASC_WRITE_ERROR);
	assert_true(h->c.sense.deferred);
	assert_int_equal(fail_syncs, 0);
	assert_int_equal(host_position(h), 2);
}

/* MOVE MEDIUM from to to on changer ch; returns the status, the command's result in *c. */
static int move_medium(struct smc_changer *ch, struct scsi_cmd *c, uint16_t from, uint16_t to)
{
	uint8_t cdb[12] = {0xA5, 0, 0, 0, (uint8_t)(from >> 8), (uint8_t)from, (uint8_t)(to >> 8), (uint8_t)to};
	return host_changer_cmd(ch, c, HOST_NEXUS, cdb, sizeof cdb, SCSI_DIR_NONE, NULL, 0);
}

/* Whether READ ELEMENT STATUS (VOLTAG) of element a shows barcode (NULL: empty). */
static bool element_shows(struct smc_changer *ch, uint16_t a, const char *barcode)
{
	static uint8_t b[1024];
	struct scsi_cmd c;
	uint8_t cdb[12] = {0xB8, 0x10, (uint8_t)(a >> 8), (uint8_t)a, 0, 1, 0, 0, sizeof b >> 8, sizeof b & 0xFF};
	memset(b, 0, sizeof b);
	if (host_changer_cmd(ch, &c, HOST_NEXUS, cdb, sizeof cdb, SCSI_DIR_IN, b, sizeof b) != SCSI_GOOD)
		fail_msg("READ ELEMENT STATUS of %u: status %02Xh sense %X %04X", a, c.status, c.sense.key, c.sense.asc);
	const uint8_t *d = b + 16; /* header 8, page header 8, then the one descriptor */
	assert_int_equal(d[0] << 8 | d[1], a);
	bool full = d[2] & 0x01;
	if (!barcode)
		return !full;
	return full && memcmp(d + 12, barcode, strlen(barcode)) == 0;
}

/*
 * A MOVE MEDIUM into a drive whose load must make the cartridge's repair
 * durable, while the disk cannot sync: the drive could not load the
 * cartridge, and the changer answers what the drive would (MEDIUM ERROR,
 * MEDIA LOAD OR EJECT FAILED, 53h/00h), not INTERNAL TARGET FAILURE; the
 * cartridge stays in its slot, where READ ELEMENT STATUS shows it, and loads
 * once the disk syncs again.
 */
static void move_whose_load_cannot_sync(void **state)
{
	struct host *h = *state;
	struct vtl_library *lib = host_library(h);
	struct smc_changer *ch;
	EXPECT_RC(smc_create(lib, &ch), 0);
	struct scsi_cmd c;
	move_medium(ch, &c, HOST_SLOT0, HOST_DRIVE0); /* the changer's power-on attention first */
	move_medium(ch, &c, HOST_SLOT0, HOST_DRIVE0);
	assert_int_equal(c.status, SCSI_GOOD);
	/* The host writes to the library's drive: a synced file, then two buffered blocks. */
	struct ssc_drive *own = h->d;
	h->d = library_drive(lib, 0, NULL);
	static uint8_t block[16384];
	uint8_t cdb[6], unload[6] = {0x1B, 0, 0, 0, 0, 0};
	host_cmd(h, cdb, cdb_simple(cdb, 0x00), SCSI_DIR_NONE, NULL, 0); /* its power-on attention */
	for (unsigned i = 0; i < 3; i++) {
		gen_data(block, sizeof block, 40 + i, false);
		host_cmd(h, cdb, cdb_write6(cdb, false, sizeof block), SCSI_DIR_OUT, block, sizeof block);
		expect_good(h);
		if (i == 0) {
			host_cmd(h, cdb, cdb_wfm6(cdb, 1, false), SCSI_DIR_NONE, NULL, 0);
			expect_good(h);
		}
	}
	/* The disk stops syncing: the unload reports it, and the robot takes the cartridge home. */
	seg_syncs_fail = true;
	host_cmd(h, unload, 6, SCSI_DIR_NONE, NULL, 0);
	expect_sense(h, SK_MEDIUM_ERROR, ASC_WRITE_ERROR);
	move_medium(ch, &c, HOST_DRIVE0, HOST_SLOT0);
	assert_int_equal(c.status, SCSI_GOOD);
	/* A torn record at the tail (the write the crash cut): the next load cuts it off and must sync that. */
	char path[4096];
	EXPECT_RC(pool_seg_path(h->fx->pool, "D00000L8", 0, path, sizeof path), 0);
	int fd = open(path, O_WRONLY | O_APPEND);
	assert_true(fd >= 0);
	static const uint8_t torn[REC_HEADER_LEN / 2] = {0x5A};
	assert_int_equal(write(fd, torn, sizeof torn), (ssize_t)sizeof torn);
	assert_int_equal(close(fd), 0);
	/* Back into the drive: its load cannot make the repair durable. */
	move_medium(ch, &c, HOST_SLOT0, HOST_DRIVE0);
	if (c.status != SCSI_CHECK_CONDITION || c.sense.key != SK_MEDIUM_ERROR || c.sense.asc != ASC_MEDIA_LOAD_EJECT_FAILED)
		fail_msg("MOVE MEDIUM whose load cannot sync: status %02Xh sense %X %04X, expected MEDIUM ERROR 5300",
			 c.status, c.sense.key, c.sense.asc);
	assert_true(element_shows(ch, HOST_SLOT0, "D00000L8"));
	assert_true(element_shows(ch, HOST_DRIVE0, NULL));
	/* The disk syncs again: the same move loads it, and the file synced before reads back. */
	seg_syncs_fail = false;
	move_medium(ch, &c, HOST_SLOT0, HOST_DRIVE0);
	assert_int_equal(c.status, SCSI_GOOD);
	assert_true(element_shows(ch, HOST_DRIVE0, "D00000L8"));
	host_cmd(h, cdb, cdb_simple(cdb, 0x00), SCSI_DIR_NONE, NULL, 0);
	expect_sense(h, SK_UNIT_ATTENTION, ASC_NOT_READY_TO_READY);
	static uint8_t back[16384];
	host_cmd(h, cdb, cdb_read6(cdb, false, false, sizeof back), SCSI_DIR_IN, back, sizeof back);
	expect_good(h);
	gen_data(block, sizeof block, 40, false);
	assert_memory_equal(back, block, sizeof block);
	h->d = own;
	smc_destroy(ch);
	EXPECT_RC(library_close(lib), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(store_fenced_until_reopened, setup, fx_teardown),
		cmocka_unit_test_setup_teardown(host_sees_medium_error, host_up, host_teardown),
		cmocka_unit_test_setup_teardown(load_of_a_loaded_tape_syncs, host_up, host_teardown),
		cmocka_unit_test_setup_teardown(move_whose_load_cannot_sync, host_up, host_teardown),
		cmocka_unit_test_setup_teardown(full_disk_at_close_loses_nothing, setup, fx_teardown),
		cmocka_unit_test_setup_teardown(full_disk_at_segment_change_is_no_fault, setup, fx_teardown),
		cmocka_unit_test_setup_teardown(writeback_error_fences, setup, fx_teardown),
		cmocka_unit_test_setup_teardown(writeback_unsupported_is_no_fault, setup, fx_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
