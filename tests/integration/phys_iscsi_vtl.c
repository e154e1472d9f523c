/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The migrator's iSCSI physical library (migrator/phys_iscsi.c) against a
 * vtld playing the physical library: every phys_ops call, with the answers
 * checked. test_phys_iscsi.sh makes the library (2 drives, 8 slots, 2 mail
 * slots) with cartridges P00001L8 and P00002L8 in slots, M00001L8 in a mail
 * slot and S00001L8, a small one (12 MB), in a slot.
 *
 * Another initiator resets a drive LUN on the way, as a second host or a
 * bridge would: after that the library must refuse to write until the drive
 * is positioned again.
 *
 * With PHYS_CHAP_USER and PHYS_CHAP_SECRET in the environment it logs in
 * with CHAP, and with PHYS_MUTUAL_USER and PHYS_MUTUAL_SECRET too it asks
 * the target to prove itself (mutual CHAP); it first checks that a wrong
 * expected target secret or name, and no CHAP at all, make the open fail. With
 * PHYS_EXPECT_REFUSED set too, it only checks that the open fails (a target
 * that knows no secret, as an impostor would be).
 *
 * Usage: phys_iscsi_vtl PORTAL TARGET-IQN   (e.g. 127.0.0.1:3260 iqn.2026-01.org.vtl:x)
 * Exit 0 when every step passed; each step prints a line.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <iscsi/iscsi.h>

#include "migrator/phys_iscsi.h"
#include "tests/phys_check.h"

#define INITIATOR "iqn.2026-01.org.vtl:phys-iscsi-check"
#define TAPE "P00001L8"
#define TAPE2 "P00002L8"
#define MAIL_TAPE "M00001L8"

/* A LOGICAL UNIT RESET of lun from another initiator: every session gets a unit attention for it. */
static void reset_from_another_host(const char *portal, const char *iqn, int lun)
{
	struct iscsi_context *c = iscsi_create_context(INITIATOR "-other");
	const char *user = getenv("PHYS_CHAP_USER"), *secret = getenv("PHYS_CHAP_SECRET");
	if (c && user && *user && iscsi_set_initiator_username_pwd(c, user, secret))
		fail("CHAP for the other initiator: %s", iscsi_get_error(c));
	if (!c || iscsi_set_targetname(c, iqn) || iscsi_set_session_type(c, ISCSI_SESSION_NORMAL) ||
	    iscsi_full_connect_sync(c, portal, lun) != 0 || iscsi_task_mgmt_lun_reset_sync(c, (uint32_t)lun) != 0)
		fail("LOGICAL UNIT RESET of LUN %d from another initiator: %s", lun, c ? iscsi_get_error(c) : "no context");
	iscsi_logout_sync(c);
	iscsi_destroy_context(c);
}

/* The library's configuration, with the credentials the environment gives. */
static struct phys_iscsi_config config(const char *portal, const char *iqn)
{
	return (struct phys_iscsi_config){.portal = portal, .target_iqn = iqn, .initiator_iqn = INITIATOR,
					  .chap_user = getenv("PHYS_CHAP_USER"), .chap_secret = getenv("PHYS_CHAP_SECRET"),
					  .mutual_user = getenv("PHYS_MUTUAL_USER"),
					  .mutual_secret = getenv("PHYS_MUTUAL_SECRET"), .ready_timeout_s = 20,
					  .command_timeout_s = 30};
}

/* A login that must fail: with the reason in words, and no library. */
static void expect_refused(const struct phys_iscsi_config *cfg, const char *what, const char *reason)
{
	char err[PHYS_ERR_MAX] = "";
	int rc = phys_iscsi_open(cfg, &lib, err, sizeof err);
	if (rc != VTL_E_IO || lib || !strstr(err, "login") || (reason && !strstr(err, reason)))
		fail("%s: open gave %s (%s), expected a refused login", what, vtl_strerror(rc), err);
	printf("-- %s: refused: %s\n", what, err);
}

/* Mutual CHAP: a target that cannot prove the secret the migrator expects is refused; so is a login without CHAP. */
static void check_mutual(const char *portal, const char *iqn)
{
	struct phys_iscsi_config cfg = config(portal, iqn);
	if (!cfg.mutual_user || !cfg.mutual_user[0])
		return;
	cfg.mutual_secret = "not-the-target-secret";
	expect_refused(&cfg, "a wrong expected target secret", "mutual CHAP");
	cfg = config(portal, iqn);
	cfg.mutual_user = "another-library";
	expect_refused(&cfg, "a target answering with another name", "mutual CHAP");
	cfg = config(portal, iqn);
	cfg.chap_user = cfg.mutual_user = NULL;
	expect_refused(&cfg, "no CHAP to a target that wants it", NULL);
}

static void open_lib(const char *portal, const char *iqn)
{
	struct phys_iscsi_config cfg = config(portal, iqn);
	char err[PHYS_ERR_MAX];
	int rc = phys_iscsi_open(&cfg, &lib, err, sizeof err);
	if (rc != VTL_OK)
		fail("phys_iscsi_open: %s", err);
	if (strcmp(lib->ops->kind, "iscsi") != 0 || lib->drives != 2)
		fail("opened a '%s' library of %u drives, expected iscsi with 2", lib->ops->kind, lib->drives);
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: phys_iscsi_vtl PORTAL TARGET-IQN\n");
		return 2;
	}
	const char *portal = argv[1], *iqn = argv[2];
	if (getenv("PHYS_EXPECT_REFUSED")) {
		struct phys_iscsi_config cfg = config(portal, iqn);
		expect_refused(&cfg, "a target that proves nothing (no CHAP of its own)", "mutual CHAP");
		return 0;
	}

	/* Refusals first: a missing name, and a target that does not exist, each with its reason. */
	struct phys_iscsi_config bad = {.portal = portal, .target_iqn = iqn};
	char err[PHYS_ERR_MAX];
	expect(phys_iscsi_open(&bad, &lib, err, sizeof err), VTL_E_CONFIG, "open without an initiator name");
	bad.initiator_iqn = INITIATOR;
	bad.target_iqn = "iqn.2026-01.org.vtl:no-such-target";
	if (phys_iscsi_open(&bad, &lib, err, sizeof err) >= 0 || lib || !strstr(err, "login"))
		fail("a login to a missing target did not fail with a reason: '%s'", err);
	printf("-- open refuses a missing initiator name and a missing target: %s\n", err);

	check_mutual(portal, iqn);
	open_lib(portal, iqn);
	const char *mu = getenv("PHYS_MUTUAL_USER"), *cu = getenv("PHYS_CHAP_USER");
	printf("-- logged in%s: changer and %u drives at elements %u and %u\n",
	       mu && *mu ? " with mutual CHAP" : cu && *cu ? " with CHAP" : "", lib->drives, lib->drive_addr[0],
	       lib->drive_addr[1]);

	inventory();
	if (count_type(PHYS_ELEM_TRANSPORT, false) != 1 || count_type(PHYS_ELEM_DRIVE, false) != 2 ||
	    count_type(PHYS_ELEM_SLOT, true) + count_type(PHYS_ELEM_SLOT, false) != 8 ||
	    count_type(PHYS_ELEM_IE, true) != 1 || count_type(PHYS_ELEM_IE, false) != 1)
		fail("inventory: the element types do not add up to 1 robot, 2 empty drives, 8 slots, 2 mail slots");
	for (unsigned d = 0; d < lib->drives; d++) {
		int i = -1;
		for (unsigned k = 0; k < nelems; k++)
			if (elems[k].type == PHYS_ELEM_DRIVE && elems[k].address == lib->drive_addr[d])
				i = (int)k;
		if (i < 0)
			fail("drive %u's element %u is not a drive element of the inventory", d, lib->drive_addr[d]);
	}
	uint16_t slot = where(TAPE, PHYS_ELEM_SLOT)->address;
	uint16_t slot2 = where(TAPE2, PHYS_ELEM_SLOT)->address;
	uint16_t small_slot = where(SMALL_TAPE, PHYS_ELEM_SLOT)->address;
	uint16_t mail = where(MAIL_TAPE, PHYS_ELEM_IE)->address;
	uint16_t empty = 0;
	for (unsigned i = 0; i < nelems && !empty; i++)
		if (elems[i].type == PHYS_ELEM_SLOT && !elems[i].full)
			empty = elems[i].address;
	unsigned n_small = 0;
	struct phys_element few[3];
	expect(lib->ops->inventory(lib, few, 3, &n_small), VTL_OK, "inventory into 3 entries");
	if (n_small != ELEMENTS)
		fail("inventory into 3 entries counts %u elements, expected %u", n_small, ELEMENTS);
	printf("-- inventory: %u elements; %s in slot %u, %s in slot %u, %s in slot %u, %s in mail slot %u\n", nelems,
	       TAPE, slot, TAPE2, slot2, SMALL_TAPE, small_slot, MAIL_TAPE, mail);

	/* Load drive 0; drive 1 stays empty, which also shows the drive map points at the right LUN. */
	expect(lib->ops->move(lib, slot, lib->drive_addr[0]), VTL_OK, "move into drive 0");
	inventory();
	if (where(TAPE, PHYS_ELEM_DRIVE)->address != lib->drive_addr[0])
		fail("%s is not in drive 0's element after the move", TAPE);
	struct phys_drive_status st = status(0), st1 = status(1);
	if (!st.ready || !st.bot || st.block != 0 || st.file != 0 || st.write_protected || st.early_warning ||
	    st.max_block == 0 || st.written != 0 || st.tapealert != 0)
		fail("drive 0 after the load: ready %d bot %d block %" PRIu64 " file %" PRIu64 " wp %d ew %d max %u",
		     st.ready, st.bot, st.block, st.file, st.write_protected, st.early_warning, st.max_block);
	if (st1.ready || st1.file != UINT64_MAX)
		fail("drive 1 is ready without a tape");
	printf("-- move slot %u -> drive 0: ready at BOT, block limit %u bytes, no TapeAlert flags; drive 1 empty\n",
	       slot, st.max_block);

	static uint8_t buf[BIG];
	uint64_t total = 0;
	for (unsigned i = 0; i < NBLOCKS; i++) {
		fill(buf, sizes[i], i);
		expect(lib->ops->write_block(lib, 0, buf, sizes[i]), VTL_OK, "write_block");
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

	/* A reset from elsewhere: the status poll takes the attention, and a write is then refused until a locate. */
	reset_from_another_host(portal, iqn, 1);
	status(0);
	int rc = lib->ops->write_block(lib, 0, buf, 512);
	if (rc != VTL_E_IO || !strstr(phys_error(lib), "reset"))
		fail("a write after a reset: %s", vtl_strerror(rc));
	printf("-- after another host reset the drive: %s\n", phys_error(lib));
	expect(lib->ops->locate(lib, 0, 7), VTL_OK, "locate after the reset");
	expect_position(0, 7, 2, "after the locate that follows the reset");

	/* A second session finds the drive loaded: its attentions are taken, and the position is the drive's. */
	lib->ops->close(lib);
	lib = NULL;
	open_lib(portal, iqn);
	expect_position(0, 7, 2, "after logging in again");
	expect(lib->ops->rewind(lib, 0), VTL_OK, "rewind");
	expect_position(0, 0, 0, "after rewind");
	printf("-- a new session sees block 7 of file 2; rewind brings it to BOT\n");

	for (unsigned i = 0; i < NBLOCKS; i++) {
		read_expect(0, i, i == 4 ? sizes[i] : BIG); /* the last one exactly: GOOD, no ILI */
		if (i == 2 || i == 4)
			read_filemark(0, "reading a filemark");
	}
	size_t len = 99;
	expect(lib->ops->read_block(lib, 0, buf, BIG, &len), VTL_E_EOD, "read at end of data");
	if (len != 0)
		fail("end of data returned %zu bytes", len);
	printf("-- read back byte for byte (shorter blocks by their residue), filemarks as warnings, then end of data: "
	       "%s\n",
	       phys_error(lib));

	expect(lib->ops->locate(lib, 0, object_of[3]), VTL_OK, "locate");
	expect_position(0, object_of[3], 1, "after locate");
	read_expect(0, 3, BIG);
	expect_position(0, object_of[3] + 1, 1, "after reading the located block");
	printf("-- locate to block %" PRIu64 " and read it: file 1\n", object_of[3]);

	expect(lib->ops->rewind(lib, 0), VTL_OK, "rewind");
	expect(lib->ops->space_filemarks(lib, 0, 1), VTL_OK, "space 1 filemark forward");
	expect_position(0, 4, 1, "after spacing a filemark forward");
	read_expect(0, 3, BIG);
	expect(lib->ops->space_filemarks(lib, 0, -1), VTL_OK, "space 1 filemark backward");
	expect_position(0, 3, 0, "after spacing a filemark backward");
	read_filemark(0, "reading the filemark spaced back to");
	read_expect(0, 3, BIG);
	rc = lib->ops->space_filemarks(lib, 0, 5);
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
	if (rc != VTL_E_INVAL || len != 0 || !strstr(phys_error(lib), "65536"))
		fail("a 65536-byte block into 1000 bytes: %s, %zu bytes", vtl_strerror(rc), len);
	printf("-- a 65536-byte block into a 1000-byte buffer: %s\n", phys_error(lib));
	read_expect(0, 2, BIG); /* the position is past the long block */

	expect(lib->ops->unload(lib, 0), VTL_OK, "unload");
	st = status(0);
	if (st.ready)
		fail("drive 0 is still ready after unload");
	expect(lib->ops->move(lib, lib->drive_addr[0], slot), VTL_OK, "move back");
	inventory();
	where(TAPE, PHYS_ELEM_SLOT);
	if (where(TAPE, PHYS_ELEM_SLOT)->address != slot)
		fail("%s did not go back to slot %u", TAPE, slot);
	printf("-- unload and move back to slot %u\n", slot);

	rc = lib->ops->move(lib, empty, lib->drive_addr[0]);
	if (rc != VTL_E_SRC_EMPTY || !strstr(phys_error(lib), "source element empty"))
		fail("a move from empty slot %u: %s", empty, vtl_strerror(rc));
	printf("-- a move from empty slot %u: %s\n", empty, phys_error(lib));
	rc = lib->ops->move(lib, slot2, slot);
	if (rc != VTL_E_DST_FULL)
		fail("a move into full slot %u: %s", slot, vtl_strerror(rc));
	printf("-- a move into full slot %u: %s\n", slot, phys_error(lib));
	expect(lib->ops->move(lib, mail, lib->drive_addr[1]), VTL_OK, "move from the mail slot into drive 1");
	expect(lib->ops->unload(lib, 1), VTL_OK, "unload drive 1");
	expect(lib->ops->move(lib, lib->drive_addr[1], mail), VTL_OK, "move back to the mail slot");
	printf("-- %s from mail slot %u into drive 1 and back\n", MAIL_TAPE, mail);

	/* The small cartridge: write until the drive says early warning, then until nothing fits. */
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
	if (rc != VTL_E_EOM || ok == 0 || warned == 0 || !strstr(phys_error(lib), "VOLUME OVERFLOW"))
		fail("the small cartridge: %u blocks, %u with early warning, then %s", ok, warned, vtl_strerror(rc));
	printf("-- %s: %u blocks of %u bytes, %u more past early warning, then %s\n", SMALL_TAPE, ok, SMALL_BLOCK,
	       warned, phys_error(lib));
	st = status(1);
	if (!st.early_warning || st.written != (uint64_t)(ok + warned) * SMALL_BLOCK)
		fail("drive 1 past early warning: ew %d, written %" PRIu64, st.early_warning, st.written);
	expect(lib->ops->unload(lib, 1), VTL_OK, "unload drive 1");
	expect(lib->ops->move(lib, lib->drive_addr[1], small_slot), VTL_OK, "move the small cartridge back");
	printf("-- status showed early warning and %" PRIu64 " bytes written; unloaded and put back\n", st.written);

	lib->ops->close(lib);
	printf("phys_iscsi_vtl: all steps passed\n");
	return 0;
}
