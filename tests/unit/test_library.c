/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The library model: moves between slots, mail slots and drives as the
 * robot makes them, kept in the catalog and reflected in the drives (a
 * cartridge moved into a drive is loaded there, one in a loaded drive cannot
 * be taken out), the refusals with their reasons, the import/export
 * notification, and a restart that finds every cartridge where it was;
 * EXCHANGE MEDIUM in one catalog step, undone whole when a drive fails; the
 * operator's import, export, load and unload; the mail slot bank's open and
 * prevent states.
 */
#include "tests/unit/scsi_host.h"

#include <stdio.h>
#include <string.h>

#include "common/vtl_error.h"
#include "vtl/library/library.h"

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

/* Opens LIB1 of the host's catalog again, as a restart does. */
static struct vtl_library *make_library_again(struct host *h)
{
	struct library_options opt = {0};
	struct vtl_library *lib = NULL;
	char err[256];
	EXPECT_RC(library_open(h->cat, h->fx->pool, "LIB1", &opt, &lib, err, sizeof err), 0);
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

static void source_of(struct host *h, const struct vtl_library *lib, uint16_t a, uint16_t want)
{
	struct cat_element e;
	EXPECT_RC(catalog_element_get(h->cat, library_info(lib)->id, a, &e), 0);
	assert_int_equal(e.source, want);
}

/* A cartridge a host unloaded is still unloaded after a restart: not threaded, and the robot may take it. */
static void restart_keeps_an_unloaded_cartridge_unloaded(void **state)
{
	struct host *h = *state;
	struct vtl_library *lib = make_library(h);
	char err[256];
	EXPECT_RC(move(lib, SLOT0, DRIVE0, err), 0);
	struct ssc_drive *d = library_drive(lib, 0, NULL);
	struct scsi_cmd c;
	uint8_t tur[6] = {0}, unload[6] = {0x1B, 0, 0, 0, 0, 0};
	drive_cmd(d, tur, 6, SCSI_DIR_NONE, NULL, 0, &c);
	assert_int_equal(drive_cmd(d, unload, 6, SCSI_DIR_NONE, NULL, 0, &c), SCSI_GOOD);
	struct cat_cartridge cc;
	EXPECT_RC(catalog_cartridge_get(h->cat, "D00000L8", &cc), 0);
	assert_string_equal(cc.state, "unloaded");
	library_close(lib);
	struct library_options opt = {0};
	EXPECT_RC(library_open(h->cat, h->fx->pool, "LIB1", &opt, &lib, err, sizeof err), 0);
	struct ssc_status st;
	ssc_status(library_drive(lib, 0, NULL), &st);
	assert_int_equal(st.state, SSC_EJECTED);
	EXPECT_RC(move(lib, DRIVE0, SLOT0, err), 0);
	EXPECT_RC(catalog_cartridge_get(h->cat, "D00000L8", &cc), 0);
	assert_string_equal(cc.state, "available");
	/* One that stays threaded across a clean stop is threaded again. */
	EXPECT_RC(move(lib, SLOT0, DRIVE0, err), 0);
	EXPECT_RC(catalog_cartridge_get(h->cat, "D00000L8", &cc), 0);
	assert_string_equal(cc.state, "loaded");
	library_close(lib);
	EXPECT_RC(library_open(h->cat, h->fx->pool, "LIB1", &opt, &lib, err, sizeof err), 0);
	ssc_status(library_drive(lib, 0, NULL), &st);
	assert_int_equal(st.state, SSC_LOADED);
	library_close(lib);
}

static int last_event(const struct cat_event *ev, void *arg)
{
	snprintf(arg, sizeof ((struct cat_event *)0)->what, "%s", ev->what);
	return 0;
}

static void exchange_in_one_step(void **state)
{
	struct host *h = *state;
	struct vtl_library *lib = make_library(h);
	char err[256], what[256] = "";
	/* Two moves; then a swap through a mail slot by an operator, who is the only one heard of. */
	EXPECT_RC(library_exchange(lib, SLOT0, SLOT0 + 1, IE0, LIBRARY_ACTOR_HOST, err, sizeof err), 0);
	where(h, lib, SLOT0, NULL);
	where(h, lib, SLOT0 + 1, "D00000L8");
	where(h, lib, IE0, "D00001L8");
	source_of(h, lib, SLOT0 + 1, SLOT0);
	source_of(h, lib, IE0, SLOT0 + 1);
	assert_int_equal(ie_calls, 0);
	EXPECT_RC(library_exchange(lib, IE0, SLOT0 + 1, IE0, "operator", err, sizeof err), 0);
	where(h, lib, IE0, "D00000L8");
	where(h, lib, SLOT0 + 1, "D00001L8");
	assert_int_equal(ie_calls, 1);
	/* One event for the whole exchange. */
	EXPECT_RC(catalog_event_list(h->cat, 0, 1000, last_event, what), 0);
	assert_non_null(strstr(what, "exchange: D00001L8 from 10 to 1001, D00000L8 from 1001 to 10"));
	/* Refusals leave everything where it was. */
	EXPECT_RC(library_exchange(lib, SLOT0, SLOT0 + 1, SLOT0 + 4, "test", err, sizeof err), VTL_E_SRC_EMPTY);
	EXPECT_RC(library_exchange(lib, SLOT0 + 1, SLOT0 + 2, SLOT0 + 3, "test", err, sizeof err), VTL_E_DST_FULL);
	EXPECT_RC(library_exchange(lib, SLOT0 + 1, SLOT0 + 1, SLOT0 + 4, "test", err, sizeof err), VTL_E_INVAL);
	where(h, lib, SLOT0 + 1, "D00001L8");
	assert_int_equal(ie_calls, 1);
	library_close(lib);
}

/* A cartridge the catalog has but the pool lacks: the drive cannot load it, and everything goes back. */
static void failed_load_is_undone(void **state)
{
	struct host *h = *state;
	struct vtl_library *lib = make_library(h);
	char err[256];
	struct cat_cartridge c;
	memset(&c, 0, sizeof c);
	snprintf(c.barcode, sizeof c.barcode, "GHOST0L8");
	c.media = CAT_MEDIA_LTO8;
	snprintf(c.state, sizeof c.state, "available");
	c.element = CAT_NO_ELEMENT;
	EXPECT_RC(catalog_cartridge_add(h->cat, &c), 0);
	EXPECT_RC(catalog_cartridge_place(h->cat, "GHOST0L8", library_info(lib)->id, SLOT0 + 4, "available", "test"), 0);
	assert_int_not_equal(move(lib, SLOT0 + 4, DRIVE0, err), 0);
	where(h, lib, SLOT0 + 4, "GHOST0L8");
	where(h, lib, DRIVE0, NULL);
	/* In an exchange, the drive's own cartridge comes back to it, unloaded, as it was. */
	EXPECT_RC(move(lib, SLOT0, DRIVE0, err), 0);
	struct ssc_drive *d = library_drive(lib, 0, NULL);
	EXPECT_RC(ssc_eject(d), 0);
	assert_int_not_equal(library_exchange(lib, SLOT0 + 4, DRIVE0, SLOT0 + 5, "test", err, sizeof err), 0);
	where(h, lib, SLOT0 + 4, "GHOST0L8");
	where(h, lib, DRIVE0, "D00000L8");
	where(h, lib, SLOT0 + 5, NULL);
	source_of(h, lib, DRIVE0, SLOT0);
	struct ssc_status st;
	ssc_status(d, &st);
	assert_int_equal(st.state, SSC_EJECTED);
	assert_string_equal(st.barcode, "D00000L8");
	EXPECT_RC(move(lib, DRIVE0, SLOT0, err), 0);
	library_close(lib);
}

static int count_imported(const struct library_element *le, void *arg)
{
	*(int *)arg += le->imported;
	return 0;
}

static void import_export_and_the_open_bank(void **state)
{
	struct host *h = *state;
	struct vtl_library *lib = make_library(h);
	char err[256];
	/* A barcode the catalog lacks is created blank, and the drive can use it. */
	EXPECT_RC(library_import(lib, "E00001L8", IE0, "operator", err, sizeof err), 0);
	assert_int_equal(ie_calls, 1);
	struct cat_cartridge cc;
	EXPECT_RC(catalog_cartridge_get(h->cat, "E00001L8", &cc), 0);
	assert_int_equal(cc.media, CAT_MEDIA_LTO8);
	assert_int_equal(cc.element, IE0);
	EXPECT_RC(library_load(lib, "E00001L8", DRIVE0, "operator", err, sizeof err), 0);
	assert_int_equal(ie_calls, 2);
	ssc_eject(library_drive(lib, 0, NULL));
	EXPECT_RC(library_unload(lib, DRIVE0, IE0 + 1, "operator", err, sizeof err), 0);
	assert_int_equal(ie_calls, 3);
	/* Refusals. */
	EXPECT_RC(library_import(lib, "E00002L8", SLOT0 + 4, "operator", err, sizeof err), VTL_E_INVAL);
	EXPECT_RC(library_import(lib, "bad", IE0, "operator", err, sizeof err), VTL_E_INVAL);
	EXPECT_RC(library_import(lib, "E00002L8", IE0 + 1, "operator", err, sizeof err), VTL_E_DST_FULL);
	EXPECT_RC(library_import(lib, "D00000L8", IE0, "operator", err, sizeof err), VTL_E_EXISTS);
	assert_non_null(strstr(err, "not outside"));
	EXPECT_RC(library_export(lib, IE0, "operator", err, sizeof err), VTL_E_SRC_EMPTY);
	EXPECT_RC(library_export(lib, SLOT0, "operator", err, sizeof err), VTL_E_INVAL);
	assert_int_equal(ie_calls, 3);
	/* Exported: kept in the catalog, in no library. */
	EXPECT_RC(library_export(lib, IE0 + 1, "operator", err, sizeof err), 0);
	EXPECT_RC(catalog_cartridge_get(h->cat, "E00001L8", &cc), 0);
	assert_string_equal(cc.state, "exported");
	assert_int_equal(cc.library_id, 0);
	assert_int_equal(cc.element, CAT_NO_ELEMENT);
	/* Imported again, it is reported as imported, across a restart too. */
	EXPECT_RC(library_import(lib, "E00001L8", IE0, "operator", err, sizeof err), 0);
	int imported = 0;
	library_elements(lib, CAT_ELEM_IE, count_imported, &imported);
	assert_int_equal(imported, 1);
	library_close(lib);
	lib = make_library_again(h);
	imported = 0;
	library_elements(lib, CAT_ELEM_IE, count_imported, &imported);
	assert_int_equal(imported, 1);
	/* The open bank: the robot cannot reach it, the operator can; a host opening it is not reported. */
	EXPECT_RC(library_ie_set_open(lib, IE0, true, LIBRARY_ACTOR_HOST, err, sizeof err), 0);
	assert_int_equal(ie_calls, 0);
	EXPECT_RC(move(lib, IE0, SLOT0 + 4, err), VTL_E_INACCESSIBLE);
	EXPECT_RC(library_load(lib, "E00001L8", DRIVE0, "operator", err, sizeof err), VTL_E_INACCESSIBLE);
	EXPECT_RC(library_export(lib, IE0, "operator", err, sizeof err), 0);
	assert_int_equal(ie_calls, 1);
	EXPECT_RC(library_ie_set_open(lib, SLOT0, false, "operator", err, sizeof err), VTL_E_INVAL);
	EXPECT_RC(library_ie_set_open(lib, IE0 + 1, false, "operator", err, sizeof err), 0);
	assert_int_equal(ie_calls, 2);
	/* A prevent keeps a full bank shut. */
	EXPECT_RC(library_import(lib, "E00001L8", IE0, "operator", err, sizeof err), 0);
	library_set_prevent(lib, true);
	EXPECT_RC(library_ie_set_open(lib, IE0, true, "operator", err, sizeof err), VTL_E_BUSY);
	assert_false(library_ie_is_open(lib));
	/* Neither the prevent nor an open bank outlives a restart. */
	library_set_prevent(lib, false);
	EXPECT_RC(library_ie_set_open(lib, IE0, true, "operator", err, sizeof err), 0);
	library_set_prevent(lib, true);
	library_close(lib);
	lib = make_library_again(h);
	assert_false(library_ie_is_open(lib));
	EXPECT_RC(library_export(lib, IE0, "operator", err, sizeof err), 0);
	library_close(lib);
}

/* vtlctl's model while vtld is stopped: no drives, the same rules, the catalog only. */
static void offline_model_moves_by_the_same_rules(void **state)
{
	struct host *h = *state;
	library_close(make_library(h)); /* creates LIB1 and its cartridges in the catalog */
	struct library_options opt = {.offline = true};
	struct vtl_library *lib = NULL;
	char err[256];
	EXPECT_RC(library_open(h->cat, NULL, "LIB1", &opt, &lib, err, sizeof err), 0);
	assert_true(library_drive_count(lib) > 0);
	assert_null(library_drive(lib, 0, NULL));
	EXPECT_RC(move(lib, SLOT0 + 2, DRIVE0, err), VTL_E_INCOMPATIBLE);
	assert_non_null(strstr(err, "cannot read D00002L6"));
	where(h, lib, SLOT0 + 2, "D00002L6");
	EXPECT_RC(move(lib, SLOT0, SLOT0 + 1, err), VTL_E_DST_FULL);
	EXPECT_RC(move(lib, SLOT0, DRIVE0, err), 0);
	where(h, lib, DRIVE0, "D00000L8");
	EXPECT_RC(move(lib, DRIVE0, SLOT0 + 5, err), 0);
	where(h, lib, SLOT0 + 5, "D00000L8");
	where(h, lib, DRIVE0, NULL);
	/* No pool to create a blank cartridge in: refused, nothing placed. */
	EXPECT_RC(library_import(lib, "N00001L8", IE0, "operator", err, sizeof err), VTL_E_NOTFOUND);
	assert_non_null(strstr(err, "no pool"));
	where(h, lib, IE0, NULL);
	library_close(lib);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, host_setup, host_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(slot_to_drive_and_back), T(refusals), T(mail_slots_and_cleaning), T(restart_keeps_the_drives_loaded),
		T(restart_keeps_an_unloaded_cartridge_unloaded),
		T(exchange_in_one_step), T(failed_load_is_undone), T(import_export_and_the_open_bank),
		T(offline_model_moves_by_the_same_rules),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
