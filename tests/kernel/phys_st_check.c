/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The migrator's st physical library (migrator/phys_st.c) in a real Linux
 * guest (tests/kernel/guest_st.sh): vtld on the host is the library, reached
 * over iSCSI, and the guest's st and sg drivers give /dev/nst0, /dev/nst1
 * and the changer's /dev/sgN. Every phys_ops call, with the answers checked.
 * test_kernel.sh makes the library: 2 drives, 8 slots, 2 mail slots, with
 * K00004L8 in a slot and S00001L8, a small one (12 MB), in another; both
 * drives are empty when this starts, and are left so.
 *
 * Usage: phys_st_check CHANGER-SG NST0 NST1 SG0 SG1
 *   (SG0 and SG1 are the drives' own sg nodes, in the order of NST0, NST1)
 * Exit 0 when every step passed; each step prints a line.
 */
#include <stdio.h>
#include <string.h>

#include "migrator/phys_st.h"
#include "tests/phys_check.h"

#define TAPE "K00004L8"

static void open_lib(const struct phys_st_config *cfg)
{
	char err[PHYS_ERR_MAX];
	int rc = phys_st_open(cfg, &lib, err, sizeof err);
	if (rc != VTL_OK)
		fail("phys_st_open: %s", err);
	/* No drive nodes given (drives 0): the caller checks what was found. */
	if (strcmp(lib->ops->kind, "st") != 0 || (cfg->drives && lib->drives != cfg->drives))
		fail("opened a '%s' library of %u drives, expected st with %u", lib->ops->kind, lib->drives, cfg->drives);
}

static void close_lib(void)
{
	lib->ops->close(lib);
	lib = NULL;
}

int main(int argc, char **argv)
{
	if (argc != 6) {
		fprintf(stderr, "usage: phys_st_check CHANGER-SG NST0 NST1 SG0 SG1\n");
		return 2;
	}
	/* Refusals first: a drive's sg node as the changer, a drive node that does not exist. */
	char err[PHYS_ERR_MAX];
	struct phys_st_config bad = {.changer = argv[4], .drive = {argv[2]}, .drives = 1};
	if (phys_st_open(&bad, &lib, err, sizeof err) != VTL_E_CONFIG || lib || !strstr(err, "not a medium changer"))
		fail("a drive's sg node as the changer: '%s'", err);
	printf("-- open refuses a drive's sg node as the changer: %s\n", err);
	bad = (struct phys_st_config){.changer = argv[1], .drive = {"/dev/nst9"}, .drives = 1};
	if (phys_st_open(&bad, &lib, err, sizeof err) >= 0 || lib || !strstr(err, "/dev/nst9"))
		fail("a missing drive node: '%s'", err);
	printf("-- and a drive node that does not exist: %s\n", err);

	/* Drive sg nodes not given: SG_IO goes through the st nodes (the guest runs as root). */
	struct phys_st_config cfg = {.changer = argv[1], .drive = {argv[2], argv[3]}, .drives = 2, .ready_timeout_s = 30,
				     .command_timeout_s = 60};
	open_lib(&cfg);
	uint16_t addr0 = lib->drive_addr[0], addr1 = lib->drive_addr[1];
	printf("-- opened: changer and %u drives, %s at element %u and %s at element %u\n", lib->drives, argv[2], addr0,
	       argv[3], addr1);

	/* The same drives named in the other order, with their sg nodes: the map follows the serial numbers. */
	close_lib();
	struct phys_st_config rev = {.changer = argv[1], .drive = {argv[3], argv[2]}, .drive_sg = {argv[5], argv[4]},
				     .drives = 2, .ready_timeout_s = 30, .command_timeout_s = 60};
	open_lib(&rev);
	if (lib->drive_addr[0] != addr1 || lib->drive_addr[1] != addr0)
		fail("with the nodes swapped the drives are at elements %u and %u, expected %u and %u", lib->drive_addr[0],
		     lib->drive_addr[1], addr1, addr0);
	printf("-- with the nodes in the other order (and the drives' sg nodes): elements %u and %u, by serial number\n",
	       lib->drive_addr[0], lib->drive_addr[1]);
	close_lib();
	/* No drive nodes: every drive the changer reports, found among the guest's st drives by serial number
	 * (sysfs vpd_pg80 against DVCID), drive i at the changer's element i. */
	struct phys_st_config found = {.changer = argv[1], .ready_timeout_s = 30, .command_timeout_s = 60};
	open_lib(&found);
	uint16_t lo = addr0 < addr1 ? addr0 : addr1, hi = addr0 < addr1 ? addr1 : addr0;
	if (lib->drives != 2 || lib->drive_addr[0] != lo || lib->drive_addr[1] != hi)
		fail("with the drives found: %u drives at elements %u and %u, expected 2 at %u and %u", lib->drives,
		     lib->drive_addr[0], lib->drive_addr[1], lo, hi);
	printf("-- with no drive nodes given: both found, at elements %u and %u in the changer's order\n",
	       lib->drive_addr[0], lib->drive_addr[1]);
	close_lib();
	open_lib(&cfg);

	inventory();
	if (count_type(PHYS_ELEM_TRANSPORT, false) != 1 || count_type(PHYS_ELEM_DRIVE, false) != 2 ||
	    count_type(PHYS_ELEM_SLOT, true) + count_type(PHYS_ELEM_SLOT, false) != 8 ||
	    count_type(PHYS_ELEM_IE, true) + count_type(PHYS_ELEM_IE, false) != 2)
		fail("inventory: the element types do not add up to 1 robot, 2 empty drives, 8 slots, 2 mail slots");
	uint16_t slot = where(TAPE, PHYS_ELEM_SLOT)->address;
	uint16_t small_slot = where(SMALL_TAPE, PHYS_ELEM_SLOT)->address;
	uint16_t full_slot = 0, empty = 0;
	for (unsigned i = 0; i < nelems; i++) {
		if (elems[i].type == PHYS_ELEM_SLOT && !elems[i].full && !empty)
			empty = elems[i].address;
		if (elems[i].type == PHYS_ELEM_SLOT && elems[i].full && elems[i].address != slot && !full_slot)
			full_slot = elems[i].address;
	}
	unsigned n_small = 0;
	struct phys_element few[3];
	expect(lib->ops->inventory(lib, few, 3, &n_small), VTL_OK, "inventory into 3 entries");
	if (n_small != ELEMENTS)
		fail("inventory into 3 entries counts %u elements, expected %u", n_small, ELEMENTS);
	printf("-- inventory: %u elements; %s in slot %u, %s in slot %u, slot %u empty\n", nelems, TAPE, slot, SMALL_TAPE,
	       small_slot, empty);

	expect(lib->ops->move(lib, slot, lib->drive_addr[0]), VTL_OK, "move into drive 0");
	inventory();
	if (where(TAPE, PHYS_ELEM_DRIVE)->address != lib->drive_addr[0])
		fail("%s is not in drive 0's element after the move", TAPE);
	struct phys_drive_status st = status(0), st1 = status(1);
	if (!st.ready || !st.bot || st.block != 0 || st.file != 0 || st.write_protected || st.early_warning ||
	    st.max_block == 0 || st.written != 0 || st.tapealert != 0)
		fail("drive 0 after the load: ready %d bot %d block %" PRIu64 " file %" PRIu64 " wp %d ew %d max %u",
		     st.ready, st.bot, st.block, st.file, st.write_protected, st.early_warning, st.max_block);
	if (st1.ready)
		fail("drive 1 is ready without a tape");
	printf("-- move slot %u -> drive 0: online at BOT, block limit %u bytes, no TapeAlert flags; drive 1 empty\n", slot,
	       st.max_block);

	/* Odd blocks start one byte into the buffer: phys_st must copy them to aligned memory (direct I/O). */
	static uint8_t raw[BIG + 1];
	uint64_t total = 0;
	for (unsigned i = 0; i < NBLOCKS; i++) {
		uint8_t *b = raw + (i & 1);
		fill(b, sizes[i], i);
		expect(lib->ops->write_block(lib, 0, b, sizes[i]), VTL_OK, "write_block");
		total += sizes[i];
		if (i == 2 || i == 4)
			expect(lib->ops->write_filemarks(lib, 0, 1), VTL_OK, "write_filemarks");
	}
	st = status(0);
	if (st.block != 7 || st.file != 2 || st.bot || st.written != total)
		fail("after writing: block %" PRIu64 " file %" PRIu64 " written %" PRIu64 ", expected 7, 2, %" PRIu64,
		     st.block, st.file, st.written, total);
	printf("-- wrote blocks of 1000, 65536 and 1 bytes, a filemark, 262144 and 4096, a filemark: block 7, file 2, "
	       "%" PRIu64 " bytes\n",
	       st.written);

	expect(lib->ops->rewind(lib, 0), VTL_OK, "rewind");
	expect_position(0, 0, 0, "after rewind");
	for (unsigned i = 0; i < NBLOCKS; i++) {
		read_expect(0, i, i == 4 ? sizes[i] : BIG);
		if (i == 2 || i == 4)
			read_filemark(0, "reading a filemark");
	}
	size_t len = 99;
	static uint8_t buf[BIG];
	expect(lib->ops->read_block(lib, 0, buf, BIG, &len), VTL_E_EOD, "read at end of data");
	if (len != 0)
		fail("end of data returned %zu bytes", len);
	printf("-- rewound and read back byte for byte, filemarks as warnings, then %s\n", phys_error(lib));

	expect(lib->ops->locate(lib, 0, object_of[3]), VTL_OK, "locate");
	expect_position(0, object_of[3], 1, "after locate");
	read_expect(0, 3, BIG);
	expect_position(0, object_of[3] + 1, 1, "after reading the located block");
	printf("-- locate to block %" PRIu64 " and read it: file 1 (from the drive: st forgets it on MTSEEK)\n",
	       object_of[3]);

	expect(lib->ops->rewind(lib, 0), VTL_OK, "rewind");
	expect(lib->ops->space_filemarks(lib, 0, 1), VTL_OK, "space 1 filemark forward");
	expect_position(0, 4, 1, "after spacing a filemark forward");
	read_expect(0, 3, BIG);
	expect(lib->ops->space_filemarks(lib, 0, -1), VTL_OK, "space 1 filemark backward");
	expect_position(0, 3, 0, "after spacing a filemark backward (st leaves the tape before it)");
	read_filemark(0, "reading the filemark spaced back to");
	read_expect(0, 3, BIG);
	int rc = lib->ops->space_filemarks(lib, 0, 5);
	if (rc != VTL_E_EOD)
		fail("spacing 5 filemarks forward past 2: %s, expected end of data", vtl_strerror(rc));
	printf("-- space forward and back over filemarks; past the last one: %s\n", phys_error(lib));
	expect(lib->ops->rewind(lib, 0), VTL_OK, "rewind");
	rc = lib->ops->space_filemarks(lib, 0, -1);
	if (rc >= 0)
		fail("spacing a filemark backward from BOT succeeded");
	printf("-- backward from BOT: %s (%s)\n", vtl_strerror(rc), phys_error(lib));

	expect(lib->ops->locate(lib, 0, object_of[1]), VTL_OK, "locate");
	rc = lib->ops->read_block(lib, 0, buf, 1000, &len);
	if (rc != VTL_E_INVAL || len != 0 || !strstr(phys_error(lib), "longer than the buffer"))
		fail("a 65536-byte block into 1000 bytes: %s, %zu bytes", vtl_strerror(rc), len);
	printf("-- a 65536-byte block into a 1000-byte buffer: %s\n", phys_error(lib));
	read_expect(0, 2, BIG); /* the position is past the long block */

	expect(lib->ops->unload(lib, 0), VTL_OK, "unload");
	if (status(0).ready)
		fail("drive 0 is still ready after unload");
	expect(lib->ops->move(lib, lib->drive_addr[0], slot), VTL_OK, "move back");
	inventory();
	if (where(TAPE, PHYS_ELEM_SLOT)->address != slot)
		fail("%s did not go back to slot %u", TAPE, slot);
	printf("-- unload and move back to slot %u\n", slot);

	rc = lib->ops->move(lib, empty, lib->drive_addr[0]);
	if (rc != VTL_E_SRC_EMPTY || !strstr(phys_error(lib), "source element empty"))
		fail("a move from empty slot %u: %s", empty, vtl_strerror(rc));
	printf("-- a move from empty slot %u: %s\n", empty, phys_error(lib));
	rc = lib->ops->move(lib, full_slot, slot);
	if (rc != VTL_E_DST_FULL)
		fail("a move into full slot %u: %s", slot, vtl_strerror(rc));
	printf("-- a move into full slot %u: %s\n", slot, phys_error(lib));

	/* The small cartridge: write until st reports early warning, then until nothing fits. */
	expect(lib->ops->move(lib, small_slot, lib->drive_addr[1]), VTL_OK, "move the small cartridge into drive 1");
	unsigned ok = 0, warned = 0, i;
	for (i = 0; i < 1000; i++) {
		fill(buf, SMALL_BLOCK, 1000 + i);
		rc = lib->ops->write_block(lib, 1, buf, SMALL_BLOCK);
		if (rc == VTL_OK && warned)
			fail("block %u written without early warning after %u warnings", i, warned);
		if (rc == VTL_OK)
			ok++;
		else if (rc == VTL_W_EARLY_WARNING)
			warned++;
		else
			break;
	}
	if (rc != VTL_E_EOM || ok == 0 || warned < 2 || !strstr(phys_error(lib), "No space left on device"))
		fail("the small cartridge: %u blocks, %u with early warning, then %s", ok, warned, vtl_strerror(rc));
	printf("-- %s: %u blocks of %u bytes, %u more past early warning (through st's refusals), then %s\n", SMALL_TAPE,
	       ok, SMALL_BLOCK, warned, phys_error(lib));
	st = status(1);
	if (!st.early_warning || st.written != (uint64_t)(ok + warned) * SMALL_BLOCK || st.block != ok + warned)
		fail("drive 1 past early warning: ew %d, written %" PRIu64 ", block %" PRIu64, st.early_warning, st.written,
		     st.block);
	expect(lib->ops->rewind(lib, 1), VTL_OK, "rewind the small cartridge");
	for (unsigned k = 0; k < ok + warned; k += ok + warned - 1) {
		static uint8_t want[SMALL_BLOCK];
		expect(lib->ops->locate(lib, 1, k), VTL_OK, "locate on the small cartridge");
		expect(lib->ops->read_block(lib, 1, buf, BIG, &len), VTL_OK, "read on the small cartridge");
		fill(want, SMALL_BLOCK, 1000 + k);
		if (len != SMALL_BLOCK || memcmp(buf, want, len) != 0)
			fail("block %u of the small cartridge reads back wrong", k);
	}
	expect(lib->ops->unload(lib, 1), VTL_OK, "unload drive 1");
	expect(lib->ops->move(lib, lib->drive_addr[1], small_slot), VTL_OK, "move the small cartridge back");
	printf("-- status showed early warning, block %" PRIu64 " and %" PRIu64 " bytes written; the first and last "
	       "blocks read back; unloaded and put back\n",
	       st.block, st.written);

	close_lib();
	printf("phys_st_check: all steps passed\n");
	return 0;
}
