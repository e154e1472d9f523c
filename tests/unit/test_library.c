/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The library model: moves between slots, mail slots and drives as the
 * robot makes them, kept in the catalog and reflected in the drives (a
 * cartridge moved into a drive is loaded there, one in a loaded drive cannot
 * be taken out), the refusals with their reasons, the import/export
 * notification, and a restart that finds every cartridge where it was.
 */
#include "tests/unit/scsi_host.h"

#include <stdio.h>
#include <string.h>

#include "common/vtl_error.h"
#include "vtl/library.h"

#define SLOT0 HOST_SLOT0
#define IE0 HOST_IE0
#define DRIVE0 HOST_DRIVE0

static int ie_calls;
static void on_ie(void *arg)
{
	(void)arg;
	ie_calls++;
}

static struct vtl_library *make_library(struct host *h)
{
	struct vtl_library *lib = host_library(h);
	ie_calls = 0;
	library_on_ie_change(lib, on_ie, NULL);
	return lib;
}

static int move(struct vtl_library *lib, uint16_t from, uint16_t to, char *err)
{
	return library_move(lib, from, to, "test", err, 256);
}

/* Sends one command to a drive as nexus 1 and returns its status. */
static int drive_cmd(struct ssc_drive *d, const uint8_t *cdb, uint8_t len, enum scsi_dir dir, void *buf, size_t xfer,
		     struct scsi_cmd *c)
{
	memset(c, 0, sizeof *c);
	memcpy(c->cdb, cdb, len);
	c->cdb_len = len;
	c->dir = dir;
	c->xfer_len = xfer;
	struct iovec iov = {buf, xfer};
	c->iov = &iov;
	c->iov_cnt = buf ? 1 : 0;
	c->nexus = 1;
	ssc_execute(d, c);
	c->iov = NULL;
	return c->status;
}

static void where(struct host *h, const struct vtl_library *lib, uint16_t a, const char *want)
{
	struct cat_element e;
	EXPECT_RC(catalog_element_get(h->cat, library_info(lib)->id, a, &e), 0);
	if (want)
		assert_string_equal(e.barcode, want);
	else
		assert_false(e.full);
}

static void slot_to_drive_and_back(void **state)
{
	struct host *h = *state;
	struct vtl_library *lib = make_library(h);
	char err[256];
	EXPECT_RC(move(lib, SLOT0, DRIVE0, err), 0);
	where(h, lib, SLOT0, NULL);
	where(h, lib, DRIVE0, "D00000L8");
	struct ssc_drive *d = library_drive(lib, 0, NULL);
	struct scsi_cmd c;
	uint8_t tur[6] = {0};
	drive_cmd(d, tur, 6, SCSI_DIR_NONE, NULL, 0, &c);
	assert_int_equal(c.sense.asc, ASC_POWER_ON_RESET); /* a new initiator: covers the medium change */
	assert_int_equal(drive_cmd(d, tur, 6, SCSI_DIR_NONE, NULL, 0, &c), SCSI_GOOD);
	uint8_t data[1000];
	memset(data, 'x', sizeof data);
	uint8_t wr[6] = {0x0A, 0, 0, 0x03, 0xE8, 0};
	assert_int_equal(drive_cmd(d, wr, 6, SCSI_DIR_OUT, data, sizeof data, &c), SCSI_GOOD);
	/* Loaded: the robot cannot take it. */
	EXPECT_RC(move(lib, DRIVE0, SLOT0, err), VTL_E_BUSY);
	assert_non_null(strstr(err, "unloaded"));
	where(h, lib, DRIVE0, "D00000L8");
	/* The host unloads; now it moves, and the catalog counts the load. */
	uint8_t unload[6] = {0x1B, 0, 0, 0, 0, 0};
	assert_int_equal(drive_cmd(d, unload, 6, SCSI_DIR_NONE, NULL, 0, &c), SCSI_GOOD);
	EXPECT_RC(move(lib, DRIVE0, SLOT0 + 4, err), 0);
	where(h, lib, DRIVE0, NULL);
	where(h, lib, SLOT0 + 4, "D00000L8");
	struct cat_cartridge cc;
	EXPECT_RC(catalog_cartridge_get(h->cat, "D00000L8", &cc), 0);
	assert_int_equal(cc.mounts, 1);
	assert_int_equal(cc.bytes_written, 1000);
	assert_int_equal(cc.eod, 1);
	assert_int_equal(ie_calls, 0);
	library_close(lib);
}

static void refusals(void **state)
{
	struct host *h = *state;
	struct vtl_library *lib = make_library(h);
	char err[256];
	EXPECT_RC(move(lib, SLOT0 + 5, DRIVE0, err), VTL_E_SRC_EMPTY);
	EXPECT_RC(move(lib, SLOT0, SLOT0 + 1, err), VTL_E_DST_FULL);
	assert_non_null(strstr(err, "D00001L8"));
	EXPECT_RC(move(lib, SLOT0, 999, err), VTL_E_INVAL);
	EXPECT_RC(move(lib, 1, SLOT0 + 4, err), VTL_E_INVAL); /* the robot itself is no source */
	/* LTO-6 media in an LTO-8 drive: refused before anything moves. */
	EXPECT_RC(move(lib, SLOT0 + 2, DRIVE0, err), VTL_E_INCOMPATIBLE);
	assert_non_null(strstr(err, "cannot read"));
	where(h, lib, SLOT0 + 2, "D00002L6");
	where(h, lib, DRIVE0, NULL);
	/* A host that prevents removal keeps the cartridge in the drive. */
	EXPECT_RC(move(lib, SLOT0 + 1, DRIVE0 + 1, err), 0);
	struct ssc_drive *d = library_drive(lib, 1, NULL);
	struct scsi_cmd c;
	uint8_t tur[6] = {0}, prevent[6] = {0x1E, 0, 0, 0, 1, 0};
	drive_cmd(d, tur, 6, SCSI_DIR_NONE, NULL, 0, &c);
	drive_cmd(d, tur, 6, SCSI_DIR_NONE, NULL, 0, &c);
	assert_int_equal(drive_cmd(d, prevent, 6, SCSI_DIR_NONE, NULL, 0, &c), SCSI_GOOD);
	EXPECT_RC(ssc_eject(d), VTL_E_BUSY);
	EXPECT_RC(move(lib, DRIVE0 + 1, SLOT0 + 5, err), VTL_E_BUSY);
	library_close(lib);
}

static void mail_slots_and_cleaning(void **state)
{
	struct host *h = *state;
	struct vtl_library *lib = make_library(h);
	char err[256];
	EXPECT_RC(move(lib, SLOT0 + 1, IE0, err), 0);
	assert_int_equal(ie_calls, 1);
	EXPECT_RC(move(lib, IE0, SLOT0 + 5, err), 0);
	assert_int_equal(ie_calls, 2);
	/* A cleaning cartridge cleans and is ejected by the drive; the robot then takes it back. */
	EXPECT_RC(move(lib, SLOT0 + 3, DRIVE0, err), 0);
	EXPECT_RC(move(lib, DRIVE0, SLOT0 + 3, err), 0);
	where(h, lib, SLOT0 + 3, "CLN000L1");
	library_close(lib);
}

static void restart_keeps_the_drives_loaded(void **state)
{
	struct host *h = *state;
	struct vtl_library *lib = make_library(h);
	char err[256];
	EXPECT_RC(move(lib, SLOT0, DRIVE0 + 1, err), 0);
	struct ssc_drive *d = library_drive(lib, 1, NULL);
	struct scsi_cmd c;
	uint8_t tur[6] = {0}, wfm[6] = {0x10, 0, 0, 0, 2, 0};
	drive_cmd(d, tur, 6, SCSI_DIR_NONE, NULL, 0, &c);
	drive_cmd(d, tur, 6, SCSI_DIR_NONE, NULL, 0, &c);
	assert_int_equal(drive_cmd(d, wfm, 6, SCSI_DIR_NONE, NULL, 0, &c), SCSI_GOOD);
	library_close(lib);
	struct library_options opt = {0};
	EXPECT_RC(library_open(h->cat, h->fx->pool, "LIB1", &opt, &lib, err, sizeof err), 0);
	d = library_drive(lib, 1, NULL);
	struct ssc_status st;
	ssc_status(d, &st);
	assert_int_equal(st.state, SSC_LOADED);
	assert_string_equal(st.barcode, "D00000L8");
	assert_int_equal(st.eod, 2);
	library_close(lib);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, host_setup, host_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(slot_to_drive_and_back), T(refusals), T(mail_slots_and_cleaning), T(restart_keeps_the_drives_loaded),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
