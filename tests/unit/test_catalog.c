/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests of the catalog (catalog/catalog.h): opening and the schema
 * (including an upgrade from version 1), libraries and elements, drives,
 * cartridges, moves, MAM attributes, events, physical tapes, copies, jobs,
 * the integrity check, and writers in several threads and processes.
 *
 * Every test works on its own catalog in a temporary directory (mkdtemp
 * under $TMPDIR or /tmp), removed by the teardown even when it fails.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "catalog/catalog.h"
#include "common/grow.h"
#include "common/vtl_error.h"
#include "tests/unit/testlib.h"

static uint64_t g_seed;
static double g_scale;

/* ---------------------------------------------------------------- fixture */

struct cfx {
	struct fx *fx;          /* the temporary directory (testlib) */
	char path[TL_PATH_LEN]; /* <dir>/catalog.db */
	struct vtl_catalog *cat;
	struct cat_library lib; /* the standard library (setup_lib) */
};

/* The standard library: transport 0, slots 1024..1063, import/export 16..19, drives 256..259. */
#define SLOT0 1024
#define NSLOTS 40
#define IE0 16
#define NIES 4
#define DRIVE0 256
#define NDRIVES 4

static void std_library(struct cat_library *l, const char *name)
{
	memset(l, 0, sizeof(*l));
	snprintf(l->name, sizeof(l->name), "%s", name);
	strcpy(l->vendor, "VTL");
	strcpy(l->product, "VLIB-1");
	strcpy(l->revision, "0100");
	strcpy(l->serial, "SN0001");
	l->transport_first = 0;
	l->transports = 1;
	l->slot_first = SLOT0;
	l->slots = NSLOTS;
	l->ie_first = IE0;
	l->ies = NIES;
	l->drive_first = DRIVE0;
	l->drives = NDRIVES;
}

/* catalog_open: fails the test with the code and the reason unless it returns 0. */
static struct vtl_catalog *tl_cat_open(const char *path, bool create)
{
	char err[256] = "";
	struct vtl_catalog *cat = NULL;
	int rc = catalog_open(path, create, &cat, err, sizeof(err));
	if (rc != 0)
		fail_msg("catalog_open(%s): %d (%s): %s", path, rc, es(rc), err);
	assert_non_null(cat);
	return cat;
}

static int setup_empty(void **state)
{
	void *tmp = NULL;
	if (fx_setup_dirs(&tmp, "vtl-cat", 0) != 0)
		return -1;
	struct cfx *c = calloc(1, sizeof(*c));
	if (!c) {
		fx_teardown(&tmp);
		return -1;
	}
	c->fx = tmp;
	snprintf(c->path, sizeof(c->path), "%.500s/catalog.db", c->fx->dir);
	char err[256] = "";
	if (catalog_open(c->path, true, &c->cat, err, sizeof(err)) != 0) {
		fprintf(stderr, "setup: catalog_open: %s\n", err);
		fx_teardown(&tmp);
		free(c);
		return -1;
	}
	*state = c;
	return 0;
}

static int setup_lib(void **state)
{
	if (setup_empty(state) != 0)
		return -1;
	struct cfx *c = *state;
	std_library(&c->lib, "LIB1");
	int rc = catalog_library_create(c->cat, &c->lib);
	if (rc != 0) {
		fprintf(stderr, "setup: catalog_library_create: %s (%s)\n", es(rc), catalog_last_error(c->cat));
		return -1; /* cmocka still runs the teardown */
	}
	return 0;
}

static int teardown(void **state)
{
	struct cfx *c = *state;
	if (!c)
		return 0;
	catalog_close(c->cat);
	void *tmp = c->fx;
	fx_teardown(&tmp);
	free(c);
	return 0;
}

/* Closes and reopens the fixture's catalog. */
static void reopen(struct cfx *c)
{
	catalog_close(c->cat);
	c->cat = NULL;
	c->cat = tl_cat_open(c->path, false);
}

static void cart_init(struct cat_cartridge *k, const char *bc, int64_t lib, uint16_t elem)
{
	memset(k, 0, sizeof(*k));
	snprintf(k->barcode, sizeof(k->barcode), "%s", bc);
	k->media = CAT_MEDIA_LTO8;
	k->capacity = 12000000000000ull;
	strcpy(k->state, "available");
	k->library_id = lib;
	k->element = elem;
	k->cache = CAT_CACHE_RESIDENT;
}

/* Adds an LTO-8 data cartridge at elem of lib; fails the test unless that works. */
static void add_cart(struct vtl_catalog *cat, const char *bc, int64_t lib, uint16_t elem)
{
	struct cat_cartridge k;
	cart_init(&k, bc, lib, elem);
	int rc = catalog_cartridge_add(cat, &k);
	if (rc != 0)
		fail_msg("catalog_cartridge_add(%s at %u): %d (%s): %s", bc, elem, rc, es(rc), catalog_last_error(cat));
}

static struct cat_element get_elem(struct vtl_catalog *cat, int64_t lib, uint16_t addr)
{
	struct cat_element e;
	memset(&e, 0xa5, sizeof(e));
	EXPECT_RC(catalog_element_get(cat, lib, addr, &e), 0);
	return e;
}

static struct cat_cartridge get_cart(struct vtl_catalog *cat, const char *bc)
{
	struct cat_cartridge k;
	memset(&k, 0xa5, sizeof(k));
	EXPECT_RC(catalog_cartridge_get(cat, bc, &k), 0);
	return k;
}

static void assert_empty_elem(struct vtl_catalog *cat, int64_t lib, uint16_t addr)
{
	struct cat_element e = get_elem(cat, lib, addr);
	assert_false(e.full);
	assert_string_equal(e.barcode, "");
	assert_int_equal(e.source, CAT_NO_ELEMENT);
}

static void assert_holds(struct vtl_catalog *cat, int64_t lib, uint16_t addr, const char *bc, uint16_t source)
{
	struct cat_element e = get_elem(cat, lib, addr);
	assert_true(e.full);
	assert_string_equal(e.barcode, bc);
	assert_int_equal(e.source, source);
	struct cat_cartridge k = get_cart(cat, bc);
	assert_int_equal(k.library_id, lib);
	assert_int_equal(k.element, addr);
}

static void assert_check_ok(struct vtl_catalog *cat)
{
	char err[256] = "";
	int rc = catalog_check(cat, err, sizeof(err));
	if (rc != 0)
		fail_msg("catalog_check: %d (%s): %s", rc, es(rc), err);
}

/* ---- callbacks that collect what a list function walks */

#define MAXREC 1024

struct rec {
	int n;
	int stop_after; /* 0: never */
	int stop_with;
	struct cat_element el[MAXREC];
	struct cat_drive dr[16];
	struct cat_cartridge ca[MAXREC];
	struct cat_event ev[MAXREC];
	struct cat_ptape pt[16];
	struct cat_copy co[16];
	struct cat_job jo[16];
};

static struct rec *new_rec(void)
{
	return talloc(sizeof(struct rec));
}

static int rec_next(struct rec *r)
{
	r->n++;
	return r->stop_after && r->n >= r->stop_after ? r->stop_with : 0;
}

#define REC_FN(name, type, field, max)                     \
	static int name(const type *x, void *arg)          \
	{                                                  \
		struct rec *r = arg;                       \
		if (r->n < (max))                          \
			r->field[r->n] = *x;               \
		return rec_next(r);                        \
	}
REC_FN(rec_el, struct cat_element, el, MAXREC)
REC_FN(rec_dr, struct cat_drive, dr, 16)
REC_FN(rec_ca, struct cat_cartridge, ca, MAXREC)
REC_FN(rec_ev, struct cat_event, ev, MAXREC)
REC_FN(rec_pt, struct cat_ptape, pt, 16)
REC_FN(rec_co, struct cat_copy, co, 16)
REC_FN(rec_jo, struct cat_job, jo, 16)

static int count_events(struct vtl_catalog *cat)
{
	struct rec *r = new_rec();
	EXPECT_RC(catalog_event_list(cat, 0, 0, rec_ev, r), 0);
	int n = r->n;
	tfree(r);
	return n;
}

/* ============================================================ open, schema */

static void test_open_create_and_reopen(void **state)
{
	struct cfx *c = *state;
	assert_int_equal(catalog_schema_version(c->cat), CAT_SCHEMA_VERSION);
	/* WAL mode: the -wal file exists while the catalog is open. */
	char wal[TL_PATH_LEN + 8];
	snprintf(wal, sizeof(wal), "%s-wal", c->path);
	struct stat sb;
	assert_int_equal(stat(wal, &sb), 0);
	assert_string_equal(catalog_last_error(c->cat), "");
	reopen(c);
	assert_int_equal(catalog_schema_version(c->cat), CAT_SCHEMA_VERSION);
	/* A second handle on the same file at the same time. */
	struct vtl_catalog *other = tl_cat_open(c->path, false);
	assert_int_equal(catalog_schema_version(other), CAT_SCHEMA_VERSION);
	catalog_close(other);
	catalog_close(NULL);
	assert_check_ok(c->cat);
}

static void test_open_errors(void **state)
{
	struct cfx *c = *state;
	char path[TL_PATH_LEN + 32], err[256];
	struct vtl_catalog *cat = (void *)1;

	/* Missing, without create. */
	snprintf(path, sizeof(path), "%.500s/missing.db", c->fx->dir);
	strcpy(err, "");
	EXPECT_RC(catalog_open(path, false, &cat, err, sizeof(err)), VTL_E_NOTFOUND);
	assert_null(cat);
	assert_true(strlen(err) > 0);
	assert_int_equal(access(path, F_OK), -1);

	/* An empty file holds no catalog: NOTFOUND without create; create makes one in it. */
	snprintf(path, sizeof(path), "%.500s/empty.db", c->fx->dir);
	int fd = open(path, O_CREAT | O_WRONLY, 0644);
	assert_true(fd >= 0);
	close(fd);
	EXPECT_RC(catalog_open(path, false, &cat, err, sizeof(err)), VTL_E_NOTFOUND);
	assert_null(cat);
	cat = tl_cat_open(path, true);
	assert_int_equal(catalog_schema_version(cat), CAT_SCHEMA_VERSION);
	catalog_close(cat);

	/* Not a database at all. */
	snprintf(path, sizeof(path), "%.500s/junk.db", c->fx->dir);
	fd = open(path, O_CREAT | O_WRONLY, 0644);
	assert_true(fd >= 0);
	char junk[4096];
	for (size_t i = 0; i < sizeof(junk); i++)
		junk[i] = (char)('a' + i % 26);
	assert_int_equal(write(fd, junk, sizeof(junk)), (ssize_t)sizeof(junk));
	close(fd);
	strcpy(err, "");
	EXPECT_RC(catalog_open(path, false, &cat, err, sizeof(err)), VTL_E_CORRUPT);
	assert_null(cat);
	assert_true(strlen(err) > 0);
	EXPECT_RC(catalog_open(path, true, &cat, err, sizeof(err)), VTL_E_CORRUPT);

	/* Bad arguments. */
	EXPECT_RC(catalog_open(NULL, true, &cat, err, sizeof(err)), VTL_E_INVAL);
	EXPECT_RC(catalog_open("", true, &cat, err, sizeof(err)), VTL_E_INVAL);
	EXPECT_RC(catalog_open(c->path, true, NULL, err, sizeof(err)), VTL_E_INVAL);
	EXPECT_RC(catalog_open(c->path, false, &cat, NULL, 0), 0); /* err may be NULL */
	catalog_close(cat);
	EXPECT_RC(catalog_open_at_version(c->path, 0, &cat, err, sizeof(err)), VTL_E_INVAL);
	EXPECT_RC(catalog_open_at_version(c->path, CAT_SCHEMA_VERSION + 1, &cat, err, sizeof(err)), VTL_E_INVAL);
	assert_null(cat);
}

/* Writes version into the user_version field of the SQLite header of a closed database (offset 60, big-endian). */
static void poke_user_version(const char *path, uint32_t version)
{
	int fd = open(path, O_WRONLY);
	assert_true(fd >= 0);
	unsigned char be[4] = {(unsigned char)(version >> 24), (unsigned char)(version >> 16),
			       (unsigned char)(version >> 8), (unsigned char)version};
	assert_int_equal(pwrite(fd, be, 4, 60), 4);
	close(fd);
}

static void test_open_newer_schema(void **state)
{
	struct cfx *c = *state;
	catalog_close(c->cat);
	c->cat = NULL;
	poke_user_version(c->path, CAT_SCHEMA_VERSION + 7);
	char err[256] = "";
	struct vtl_catalog *cat = NULL;
	EXPECT_RC(catalog_open(c->path, false, &cat, err, sizeof(err)), VTL_E_INVAL);
	assert_null(cat);
	assert_non_null(strstr(err, "newer"));
	/* And back: the data was not touched. */
	poke_user_version(c->path, CAT_SCHEMA_VERSION);
	c->cat = tl_cat_open(c->path, false);
	struct cat_library l;
	EXPECT_RC(catalog_library_get(c->cat, "LIB1", &l), 0);
}

static void test_upgrade_from_v1(void **state)
{
	struct cfx *c = *state;
	char path[TL_PATH_LEN + 32], err[256] = "";
	snprintf(path, sizeof(path), "%.500s/v1.db", c->fx->dir);
	struct vtl_catalog *v1 = NULL;
	int rc = catalog_open_at_version(path, 1, &v1, err, sizeof(err));
	if (rc)
		fail_msg("catalog_open_at_version 1: %s: %s", es(rc), err);
	assert_int_equal(catalog_schema_version(v1), 1);

	/* Version 1 data: a library, a drive, cartridges, a move, MAM, events. */
	struct cat_library l;
	std_library(&l, "OLD");
	EXPECT_RC(catalog_library_create(v1, &l), 0);
	struct cat_drive d;
	memset(&d, 0, sizeof(d));
	d.library_id = l.id;
	d.address = DRIVE0;
	strcpy(d.vendor, "IBM");
	strcpy(d.model, "ULT3580-TD8");
	strcpy(d.serial, "D0");
	strcpy(d.state, "online");
	EXPECT_RC(catalog_drive_set(v1, &d), 0);
	add_cart(v1, "OLD001L8", l.id, SLOT0);
	add_cart(v1, "OLD002L8", l.id, SLOT0 + 1);
	EXPECT_RC(catalog_cartridge_usage(v1, "OLD001L8", 5000, 2500, 7, true), 0);
	EXPECT_RC(catalog_move(v1, l.id, SLOT0, DRIVE0, "v1"), 0);
	EXPECT_RC(catalog_mam_set(v1, "OLD002L8", 0x0400, "IBM", 3), 0);
	EXPECT_RC(catalog_event(v1, "v1", "hello from version 1"), 0);
	/* The version 2 tables are not there yet. */
	struct cat_ptape t;
	memset(&t, 0, sizeof(t));
	strcpy(t.barcode, "P00001L8");
	EXPECT_RC(catalog_ptape_add(v1, &t), VTL_E_IO);
	int64_t job;
	EXPECT_RC(catalog_job_add(v1, CAT_JOB_MIGRATE, "OLD002L8", &job), VTL_E_IO);
	assert_check_ok(v1);
	catalog_close(v1);

	/* Opening it normally upgrades it in place. */
	struct vtl_catalog *cat = tl_cat_open(path, false);
	assert_int_equal(catalog_schema_version(cat), CAT_SCHEMA_VERSION);
	struct cat_library got;
	EXPECT_RC(catalog_library_get(cat, NULL, &got), 0);
	assert_int_equal(got.id, l.id);
	assert_string_equal(got.name, "OLD");
	assert_int_equal(got.slots, NSLOTS);
	assert_holds(cat, l.id, DRIVE0, "OLD001L8", SLOT0);
	assert_holds(cat, l.id, SLOT0 + 1, "OLD002L8", CAT_NO_ELEMENT);
	struct cat_cartridge k = get_cart(cat, "OLD001L8");
	assert_int_equal(k.bytes_written, 5000);
	assert_int_equal(k.mounts, 1);
	assert_int_equal(k.cache, CAT_CACHE_RESIDENT);
	char buf[8];
	size_t len = 0;
	EXPECT_RC(catalog_mam_get(cat, "OLD002L8", 0x0400, buf, sizeof(buf), &len), 0);
	assert_int_equal(len, 3);
	assert_memory_equal(buf, "IBM", 3);
	struct rec *r = new_rec();
	EXPECT_RC(catalog_event_list(cat, 0, 0, rec_ev, r), 0);
	assert_int_equal(r->n, 2);
	assert_string_equal(r->ev[0].what, "move OLD001L8 from 1024 to 256");
	assert_string_equal(r->ev[1].what, "hello from version 1");
	r->n = 0;
	EXPECT_RC(catalog_drive_list(cat, l.id, rec_dr, r), 0);
	assert_int_equal(r->n, 1);
	assert_string_equal(r->dr[0].model, "ULT3580-TD8");

	/* The new tables work, on the old rows. */
	strcpy(t.library, "PHYS");
	t.slot = 3;
	t.capacity = 12000000000000ull;
	strcpy(t.state, "scratch");
	EXPECT_RC(catalog_ptape_add(cat, &t), 0);
	struct cat_ptape tg;
	EXPECT_RC(catalog_ptape_get(cat, "P00001L8", &tg), 0);
	assert_string_equal(tg.pool, CAT_POOL_DEFAULT);
	struct cat_copy cp;
	memset(&cp, 0, sizeof(cp));
	strcpy(cp.barcode, "OLD002L8");
	strcpy(cp.tape, "P00001L8");
	cp.file = 1;
	strcpy(cp.state, "valid");
	EXPECT_RC(catalog_copy_add(cat, &cp), 0);
	EXPECT_RC(catalog_job_add(cat, CAT_JOB_MIGRATE, "OLD002L8", &job), 0);
	EXPECT_RC(catalog_cartridge_set_cache(cat, "OLD002L8", CAT_CACHE_PREMIGRATED), 0);
	r->n = 0;
	EXPECT_RC(catalog_copy_list(cat, "OLD002L8", rec_co, r), 0);
	assert_int_equal(r->n, 1);
	assert_string_equal(r->co[0].tape, "P00001L8");
	assert_check_ok(cat);
	catalog_close(cat);

	/* Asking for version 1 of a version 2 catalog does not downgrade it. */
	EXPECT_RC(catalog_open_at_version(path, 1, &v1, err, sizeof(err)), 0);
	assert_int_equal(catalog_schema_version(v1), CAT_SCHEMA_VERSION);
	catalog_close(v1);
}

/* ================================================================ library */

static void test_library_create_and_get(void **state)
{
	struct cfx *c = *state;
	EXPECT_RC(catalog_library_get(c->cat, NULL, &c->lib), VTL_E_NOTFOUND);
	std_library(&c->lib, "LIB1");
	c->lib.id = 0;
	EXPECT_RC(catalog_library_create(c->cat, &c->lib), 0);
	assert_true(c->lib.id > 0);

	struct cat_library g;
	memset(&g, 0xa5, sizeof(g));
	EXPECT_RC(catalog_library_get(c->cat, "LIB1", &g), 0);
	assert_int_equal(g.id, c->lib.id);
	assert_string_equal(g.vendor, "VTL");
	assert_string_equal(g.product, "VLIB-1");
	assert_string_equal(g.revision, "0100");
	assert_string_equal(g.serial, "SN0001");
	assert_int_equal(g.transport_first, 0);
	assert_int_equal(g.transports, 1);
	assert_int_equal(g.slot_first, SLOT0);
	assert_int_equal(g.slots, NSLOTS);
	assert_int_equal(g.ie_first, IE0);
	assert_int_equal(g.ies, NIES);
	assert_int_equal(g.drive_first, DRIVE0);
	assert_int_equal(g.drives, NDRIVES);
	memset(&g, 0, sizeof(g));
	EXPECT_RC(catalog_library_get(c->cat, NULL, &g), 0); /* the only one */
	assert_int_equal(g.id, c->lib.id);

	/* A second library: its own elements at the same addresses; NULL is now ambiguous. */
	struct cat_library l2;
	std_library(&l2, "LIB2");
	l2.ies = 0; /* counts may be 0, except transports */
	l2.drives = 0;
	l2.ie_first = SLOT0; /* an empty range overlaps nothing */
	EXPECT_RC(catalog_library_create(c->cat, &l2), 0);
	assert_true(l2.id != c->lib.id);
	EXPECT_RC(catalog_library_get(c->cat, NULL, &g), VTL_E_INVAL);
	EXPECT_RC(catalog_library_get(c->cat, "LIB2", &g), 0);
	assert_int_equal(g.ies, 0);
	EXPECT_RC(catalog_library_get(c->cat, "NOPE", &g), VTL_E_NOTFOUND);
	EXPECT_RC(catalog_library_get(c->cat, "", &g), VTL_E_INVAL);
	char longname[CAT_NAME_MAX + 2];
	memset(longname, 'n', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	EXPECT_RC(catalog_library_get(c->cat, longname, &g), VTL_E_INVAL);
	EXPECT_RC(catalog_library_get(c->cat, "LIB1", NULL), VTL_E_INVAL);

	/* A library may end at the last address. */
	struct cat_library l3;
	std_library(&l3, "EDGE");
	l3.slot_first = 0xFFFE - 9;
	l3.slots = 10;
	EXPECT_RC(catalog_library_create(c->cat, &l3), 0);
	struct cat_element e = get_elem(c->cat, l3.id, 0xFFFE);
	assert_int_equal(e.type, CAT_ELEM_SLOT);
	EXPECT_RC(catalog_element_get(c->cat, l3.id, 0xFFFF, &e), VTL_E_NOTFOUND);
}

static void test_library_create_errors(void **state)
{
	struct cfx *c = *state;
	struct cat_library l;

	std_library(&l, "LIB1");
	EXPECT_RC(catalog_library_create(c->cat, &l), VTL_E_EXISTS);
	assert_non_null(strstr(catalog_last_error(c->cat), "LIB1"));

	std_library(&l, "X");
	l.transports = 0;
	EXPECT_RC(catalog_library_create(c->cat, &l), VTL_E_INVAL);

	std_library(&l, "X");
	l.drive_first = SLOT0 + NSLOTS - 1; /* last slot */
	EXPECT_RC(catalog_library_create(c->cat, &l), VTL_E_INVAL);

	std_library(&l, "X");
	l.ie_first = DRIVE0 - 1; /* 255..258 overlaps the drives 256.. */
	EXPECT_RC(catalog_library_create(c->cat, &l), VTL_E_INVAL);

	std_library(&l, "X");
	l.transport_first = IE0 + NIES - 1;
	EXPECT_RC(catalog_library_create(c->cat, &l), VTL_E_INVAL);

	std_library(&l, "X");
	l.slot_first = 0xFFF0;
	l.slots = 0x10; /* would end at 0xFFFF, the address of no element */
	EXPECT_RC(catalog_library_create(c->cat, &l), VTL_E_INVAL);

	std_library(&l, "X");
	l.name[0] = '\0';
	EXPECT_RC(catalog_library_create(c->cat, &l), VTL_E_INVAL);

	std_library(&l, "X");
	memset(l.name, 'n', sizeof(l.name)); /* no terminator: too long */
	EXPECT_RC(catalog_library_create(c->cat, &l), VTL_E_INVAL);

	std_library(&l, "X");
	memset(l.vendor, 'v', sizeof(l.vendor));
	EXPECT_RC(catalog_library_create(c->cat, &l), VTL_E_INVAL);

	std_library(&l, "X");
	memset(l.serial, 's', sizeof(l.serial));
	EXPECT_RC(catalog_library_create(c->cat, &l), VTL_E_INVAL);

	EXPECT_RC(catalog_library_create(c->cat, NULL), VTL_E_INVAL);

	/* None of that left a library or elements behind. */
	struct cat_library g;
	EXPECT_RC(catalog_library_get(c->cat, NULL, &g), 0);
	assert_int_equal(g.id, c->lib.id);
	EXPECT_RC(catalog_library_get(c->cat, "X", &g), VTL_E_NOTFOUND);
	EXPECT_RC(catalog_element_list(c->cat, c->lib.id + 1, CAT_ELEM_ALL, rec_el, new_rec()), VTL_E_NOTFOUND);
}

/* =============================================================== elements */

struct nested {
	struct vtl_catalog *cat;
	int n;
};

/* A callback that calls the catalog itself: the list holds no lock while it runs. */
static int nested_get(const struct cat_element *e, void *arg)
{
	struct nested *x = arg;
	struct cat_element again;
	if (catalog_element_get(x->cat, e->library_id, e->address, &again) != 0 || again.address != e->address)
		return -100;
	if (e->type == CAT_ELEM_IE && catalog_event(x->cat, "cb", "inside a list") != 0)
		return -101;
	x->n++;
	return 0;
}

static void test_elements(void **state)
{
	struct cfx *c = *state;
	int64_t lib = c->lib.id;
	struct rec *r = new_rec();
	EXPECT_RC(catalog_element_list(c->cat, lib, CAT_ELEM_ALL, rec_el, r), 0);
	assert_int_equal(r->n, 1 + NSLOTS + NIES + NDRIVES);
	for (int i = 0; i < r->n; i++) {
		if (i)
			assert_true(r->el[i].address > r->el[i - 1].address);
		assert_int_equal(r->el[i].library_id, lib);
		assert_false(r->el[i].full);
		assert_int_equal(r->el[i].source, CAT_NO_ELEMENT);
	}
	assert_int_equal(r->el[0].address, 0);
	assert_int_equal(r->el[0].type, CAT_ELEM_TRANSPORT);

	const struct {
		enum cat_elem_type t;
		int first, n;
	} want[] = {{CAT_ELEM_TRANSPORT, 0, 1}, {CAT_ELEM_SLOT, SLOT0, NSLOTS}, {CAT_ELEM_IE, IE0, NIES},
		    {CAT_ELEM_DRIVE, DRIVE0, NDRIVES}};
	for (size_t w = 0; w < VTL_ARRAY_SIZE(want); w++) {
		r->n = 0;
		EXPECT_RC(catalog_element_list(c->cat, lib, want[w].t, rec_el, r), 0);
		assert_int_equal(r->n, want[w].n);
		for (int i = 0; i < r->n; i++) {
			assert_int_equal(r->el[i].type, want[w].t);
			assert_int_equal(r->el[i].address, want[w].first + i);
		}
		struct cat_element e = get_elem(c->cat, lib, (uint16_t)want[w].first);
		assert_int_equal(e.type, want[w].t);
		assert_int_equal(e.library_id, lib);
	}

	/* A full element shows its barcode. */
	add_cart(c->cat, "E00001L8", lib, SLOT0 + 3);
	r->n = 0;
	EXPECT_RC(catalog_element_list(c->cat, lib, CAT_ELEM_SLOT, rec_el, r), 0);
	assert_true(r->el[3].full);
	assert_string_equal(r->el[3].barcode, "E00001L8");
	assert_false(r->el[4].full);

	/* Stopping early: positive stops with 0, negative is passed on. */
	r->n = 0;
	r->stop_after = 5;
	r->stop_with = 1;
	EXPECT_RC(catalog_element_list(c->cat, lib, CAT_ELEM_ALL, rec_el, r), 0);
	assert_int_equal(r->n, 5);
	r->n = 0;
	r->stop_with = -42;
	EXPECT_RC(catalog_element_list(c->cat, lib, CAT_ELEM_ALL, rec_el, r), -42);
	assert_int_equal(r->n, 5);

	/* The callback may use the catalog. */
	struct nested x = {c->cat, 0};
	EXPECT_RC(catalog_element_list(c->cat, lib, CAT_ELEM_ALL, nested_get, &x), 0);
	assert_int_equal(x.n, 1 + NSLOTS + NIES + NDRIVES);
	assert_int_equal(count_events(c->cat), NIES);

	/* Errors. */
	struct cat_element e;
	EXPECT_RC(catalog_element_get(c->cat, lib, 999, &e), VTL_E_NOTFOUND);
	EXPECT_RC(catalog_element_get(c->cat, lib, CAT_NO_ELEMENT, &e), VTL_E_NOTFOUND);
	EXPECT_RC(catalog_element_get(c->cat, lib + 7, SLOT0, &e), VTL_E_NOTFOUND);
	EXPECT_RC(catalog_element_get(c->cat, lib, SLOT0, NULL), VTL_E_INVAL);
	EXPECT_RC(catalog_element_list(c->cat, lib + 7, CAT_ELEM_ALL, rec_el, r), VTL_E_NOTFOUND);
	EXPECT_RC(catalog_element_list(c->cat, lib, (enum cat_elem_type)5, rec_el, r), VTL_E_INVAL);
	EXPECT_RC(catalog_element_list(c->cat, lib, CAT_ELEM_ALL, NULL, r), VTL_E_INVAL);
}

/* ================================================================= drives */

static void drive_init(struct cat_drive *d, int64_t lib, uint16_t addr, const char *serial)
{
	memset(d, 0, sizeof(*d));
	d->library_id = lib;
	d->address = addr;
	strcpy(d->vendor, "IBM");
	strcpy(d->model, "ULT3580-TD8");
	strcpy(d->revision, "Q3F4");
	snprintf(d->serial, sizeof(d->serial), "%s", serial);
	d->lun = addr - DRIVE0 + 1;
	strcpy(d->state, "online");
}

static void test_drives(void **state)
{
	struct cfx *c = *state;
	int64_t lib = c->lib.id;
	struct cat_drive d;
	struct rec *r = new_rec();
	EXPECT_RC(catalog_drive_list(c->cat, lib, rec_dr, r), 0);
	assert_int_equal(r->n, 0);

	drive_init(&d, lib, DRIVE0 + 2, "SER2");
	EXPECT_RC(catalog_drive_set(c->cat, &d), 0);
	drive_init(&d, lib, DRIVE0, "SER0");
	EXPECT_RC(catalog_drive_set(c->cat, &d), 0);
	EXPECT_RC(catalog_drive_list(c->cat, lib, rec_dr, r), 0);
	assert_int_equal(r->n, 2);
	assert_int_equal(r->dr[0].address, DRIVE0);
	assert_string_equal(r->dr[0].serial, "SER0");
	assert_string_equal(r->dr[0].vendor, "IBM");
	assert_string_equal(r->dr[0].model, "ULT3580-TD8");
	assert_string_equal(r->dr[0].revision, "Q3F4");
	assert_int_equal(r->dr[0].lun, 1);
	assert_string_equal(r->dr[0].state, "online");
	assert_int_equal(r->dr[0].library_id, lib);
	assert_int_equal(r->dr[1].address, DRIVE0 + 2);

	/* Replacing. */
	drive_init(&d, lib, DRIVE0, "SER0B");
	strcpy(d.model, "ULT3580-TD9");
	strcpy(d.state, "offline");
	d.lun = 9;
	EXPECT_RC(catalog_drive_set(c->cat, &d), 0);
	r->n = 0;
	EXPECT_RC(catalog_drive_list(c->cat, lib, rec_dr, r), 0);
	assert_int_equal(r->n, 2);
	assert_string_equal(r->dr[0].serial, "SER0B");
	assert_string_equal(r->dr[0].model, "ULT3580-TD9");
	assert_string_equal(r->dr[0].state, "offline");
	assert_int_equal(r->dr[0].lun, 9);

	/* Stopping. */
	r->n = 0;
	r->stop_after = 1;
	r->stop_with = -3;
	EXPECT_RC(catalog_drive_list(c->cat, lib, rec_dr, r), -3);
	assert_int_equal(r->n, 1);

	/* Errors. */
	drive_init(&d, lib, SLOT0, "X");
	EXPECT_RC(catalog_drive_set(c->cat, &d), VTL_E_INVAL); /* not a data transfer element */
	drive_init(&d, lib, 999, "X");
	EXPECT_RC(catalog_drive_set(c->cat, &d), VTL_E_NOTFOUND);
	drive_init(&d, lib + 5, DRIVE0, "X");
	EXPECT_RC(catalog_drive_set(c->cat, &d), VTL_E_NOTFOUND);
	drive_init(&d, lib, DRIVE0 + 1, "X");
	memset(d.model, 'm', sizeof(d.model));
	EXPECT_RC(catalog_drive_set(c->cat, &d), VTL_E_INVAL);
	drive_init(&d, lib, DRIVE0 + 1, "X");
	memset(d.state, 's', sizeof(d.state));
	EXPECT_RC(catalog_drive_set(c->cat, &d), VTL_E_INVAL);
	EXPECT_RC(catalog_drive_set(c->cat, NULL), VTL_E_INVAL);
	EXPECT_RC(catalog_drive_list(c->cat, lib + 5, rec_dr, r), VTL_E_NOTFOUND);
	EXPECT_RC(catalog_drive_list(c->cat, lib, NULL, r), VTL_E_INVAL);
	r->n = 0;
	r->stop_after = 0;
	EXPECT_RC(catalog_drive_list(c->cat, lib, rec_dr, r), 0);
	assert_int_equal(r->n, 2);
}

/* ============================================================= cartridges */

static void test_cartridge_add_get(void **state)
{
	struct cfx *c = *state;
	int64_t lib = c->lib.id;
	struct cat_cartridge k;
	cart_init(&k, "A00001L8", lib, SLOT0 + 5);
	k.media = CAT_MEDIA_LTO9W;
	k.capacity = 18000000000000ull;
	k.write_protect = true;
	k.bytes_written = UINT64_MAX - 3; /* every bit survives */
	k.bytes_stored = 77;
	k.eod = 12345;
	k.mounts = 4000000000u;
	k.last_mounted = 1700000000;
	k.cache = CAT_CACHE_MIGRATED;
	EXPECT_RC(catalog_cartridge_add(c->cat, &k), 0);
	struct cat_cartridge g = get_cart(c->cat, "A00001L8");
	assert_string_equal(g.barcode, "A00001L8");
	assert_int_equal(g.media, CAT_MEDIA_LTO9W);
	assert_int_equal(g.capacity, 18000000000000ull);
	assert_true(g.write_protect);
	assert_string_equal(g.state, "available");
	assert_int_equal(g.library_id, lib);
	assert_int_equal(g.element, SLOT0 + 5);
	assert_true(g.bytes_written == UINT64_MAX - 3);
	assert_int_equal(g.bytes_stored, 77);
	assert_int_equal(g.eod, 12345);
	assert_int_equal(g.mounts, 4000000000u);
	assert_int_equal(g.last_mounted, 1700000000);
	assert_int_equal(g.cache, CAT_CACHE_MIGRATED);
	assert_holds(c->cat, lib, SLOT0 + 5, "A00001L8", CAT_NO_ELEMENT);

	/* In a library but in no element, and in no library at all (exported). */
	cart_init(&k, "B00001L8", lib, CAT_NO_ELEMENT);
	EXPECT_RC(catalog_cartridge_add(c->cat, &k), 0);
	g = get_cart(c->cat, "B00001L8");
	assert_int_equal(g.library_id, lib);
	assert_int_equal(g.element, CAT_NO_ELEMENT);
	cart_init(&k, "C00001CU", 0, CAT_NO_ELEMENT);
	k.media = CAT_MEDIA_CLEANING;
	strcpy(k.state, "exported");
	EXPECT_RC(catalog_cartridge_add(c->cat, &k), 0);
	g = get_cart(c->cat, "C00001CU");
	assert_int_equal(g.library_id, 0);
	assert_int_equal(g.element, CAT_NO_ELEMENT);
	assert_int_equal(g.media, CAT_MEDIA_CLEANING);

	/* The longest barcode. */
	char bc[CAT_BARCODE_MAX + 1];
	memset(bc, 'Z', CAT_BARCODE_MAX);
	bc[CAT_BARCODE_MAX] = '\0';
	add_cart(c->cat, bc, lib, DRIVE0);
	g = get_cart(c->cat, bc);
	assert_string_equal(g.barcode, bc);

	/* Every media type. */
	const enum cat_media media[] = {CAT_MEDIA_LTO5,	 CAT_MEDIA_LTO6,  CAT_MEDIA_LTO7,  CAT_MEDIA_LTO8,
					CAT_MEDIA_LTO9,	 CAT_MEDIA_LTO5W, CAT_MEDIA_LTO6W, CAT_MEDIA_LTO7W,
					CAT_MEDIA_LTO8W, CAT_MEDIA_LTO9W, CAT_MEDIA_CLEANING};
	for (size_t i = 0; i < VTL_ARRAY_SIZE(media); i++) {
		char b[32];
		snprintf(b, sizeof(b), "M%05zuL8", i);
		cart_init(&k, b, 0, CAT_NO_ELEMENT);
		k.media = media[i];
		EXPECT_RC(catalog_cartridge_add(c->cat, &k), 0);
		assert_int_equal(get_cart(c->cat, b).media, media[i]);
	}
	assert_check_ok(c->cat);
}

static void test_cartridge_add_errors(void **state)
{
	struct cfx *c = *state;
	int64_t lib = c->lib.id;
	struct cat_cartridge k;
	add_cart(c->cat, "A00001L8", lib, SLOT0);
	int events = count_events(c->cat);

	/* Duplicate barcode: EXISTS, and the empty slot it named stays empty. */
	cart_init(&k, "A00001L8", lib, SLOT0 + 1);
	EXPECT_RC(catalog_cartridge_add(c->cat, &k), VTL_E_EXISTS);
	assert_empty_elem(c->cat, lib, SLOT0 + 1);
	assert_holds(c->cat, lib, SLOT0, "A00001L8", CAT_NO_ELEMENT);

	/* Into a full element. */
	cart_init(&k, "A00002L8", lib, SLOT0);
	EXPECT_RC(catalog_cartridge_add(c->cat, &k), VTL_E_DST_FULL);
	EXPECT_RC(catalog_cartridge_get(c->cat, "A00002L8", &k), VTL_E_NOTFOUND);

	/* Unknown element, unknown library, an element without a library. */
	cart_init(&k, "A00003L8", lib, 999);
	EXPECT_RC(catalog_cartridge_add(c->cat, &k), VTL_E_NOTFOUND);
	cart_init(&k, "A00003L8", lib + 9, CAT_NO_ELEMENT);
	EXPECT_RC(catalog_cartridge_add(c->cat, &k), VTL_E_NOTFOUND);
	cart_init(&k, "A00003L8", lib + 9, SLOT0 + 2);
	EXPECT_RC(catalog_cartridge_add(c->cat, &k), VTL_E_NOTFOUND);
	cart_init(&k, "A00003L8", 0, SLOT0 + 2);
	EXPECT_RC(catalog_cartridge_add(c->cat, &k), VTL_E_INVAL);
	EXPECT_RC(catalog_cartridge_get(c->cat, "A00003L8", &k), VTL_E_NOTFOUND);

	/* Bad values. */
	const int bad_media[] = {0, 4, 11, 14, 20, 29, 31, -1}; /* 10 is LTO-10 */
	for (size_t i = 0; i < VTL_ARRAY_SIZE(bad_media); i++) {
		cart_init(&k, "A00004L8", lib, CAT_NO_ELEMENT);
		k.media = (enum cat_media)bad_media[i];
		EXPECT_RC(catalog_cartridge_add(c->cat, &k), VTL_E_INVAL);
	}
	cart_init(&k, "A00004L8", lib, CAT_NO_ELEMENT);
	k.cache = (enum cat_cache_state)4;
	EXPECT_RC(catalog_cartridge_add(c->cat, &k), VTL_E_INVAL);
	cart_init(&k, "", lib, CAT_NO_ELEMENT);
	EXPECT_RC(catalog_cartridge_add(c->cat, &k), VTL_E_INVAL);
	cart_init(&k, "A00004L8", lib, CAT_NO_ELEMENT);
	memset(k.barcode, 'B', sizeof(k.barcode)); /* 33 characters, no terminator */
	EXPECT_RC(catalog_cartridge_add(c->cat, &k), VTL_E_INVAL);
	cart_init(&k, "A00004L8", lib, CAT_NO_ELEMENT);
	memset(k.state, 's', sizeof(k.state));
	EXPECT_RC(catalog_cartridge_add(c->cat, &k), VTL_E_INVAL);
	EXPECT_RC(catalog_cartridge_add(c->cat, NULL), VTL_E_INVAL);

	/* get errors */
	char longbc[CAT_BARCODE_MAX + 2];
	memset(longbc, 'L', sizeof(longbc) - 1);
	longbc[sizeof(longbc) - 1] = '\0';
	EXPECT_RC(catalog_cartridge_get(c->cat, longbc, &k), VTL_E_INVAL);
	EXPECT_RC(catalog_cartridge_get(c->cat, "", &k), VTL_E_INVAL);
	EXPECT_RC(catalog_cartridge_get(c->cat, NULL, &k), VTL_E_INVAL);
	EXPECT_RC(catalog_cartridge_get(c->cat, "A00001L8", NULL), VTL_E_INVAL);

	/* Nothing of it stuck. */
	struct rec *r = new_rec();
	EXPECT_RC(catalog_cartridge_list(c->cat, 0, rec_ca, r), 0);
	assert_int_equal(r->n, 1);
	assert_int_equal(count_events(c->cat), events);
	assert_check_ok(c->cat);
}

static void test_cartridge_list(void **state)
{
	struct cfx *c = *state;
	int64_t lib = c->lib.id;
	struct cat_library l2;
	std_library(&l2, "LIB2");
	EXPECT_RC(catalog_library_create(c->cat, &l2), 0);
	add_cart(c->cat, "C00003L8", lib, SLOT0 + 2);
	add_cart(c->cat, "C00001L8", lib, SLOT0);
	add_cart(c->cat, "D00001L8", l2.id, SLOT0); /* the same address in the other library */
	add_cart(c->cat, "C00002L8", lib, IE0);
	add_cart(c->cat, "X00001L8", 0, CAT_NO_ELEMENT);

	struct rec *r = new_rec();
	EXPECT_RC(catalog_cartridge_list(c->cat, 0, rec_ca, r), 0);
	assert_int_equal(r->n, 5);
	const char *all[] = {"C00001L8", "C00002L8", "C00003L8", "D00001L8", "X00001L8"};
	for (int i = 0; i < 5; i++)
		assert_string_equal(r->ca[i].barcode, all[i]);
	assert_int_equal(r->ca[1].element, IE0);
	assert_int_equal(r->ca[3].library_id, l2.id);

	r->n = 0;
	EXPECT_RC(catalog_cartridge_list(c->cat, lib, rec_ca, r), 0);
	assert_int_equal(r->n, 3);
	assert_string_equal(r->ca[2].barcode, "C00003L8");
	r->n = 0;
	EXPECT_RC(catalog_cartridge_list(c->cat, l2.id, rec_ca, r), 0);
	assert_int_equal(r->n, 1);
	assert_string_equal(r->ca[0].barcode, "D00001L8");

	r->n = 0;
	r->stop_after = 2;
	r->stop_with = 7;
	EXPECT_RC(catalog_cartridge_list(c->cat, 0, rec_ca, r), 0);
	assert_int_equal(r->n, 2);
	r->n = 0;
	r->stop_with = VTL_E_IO;
	EXPECT_RC(catalog_cartridge_list(c->cat, 0, rec_ca, r), VTL_E_IO);

	EXPECT_RC(catalog_cartridge_list(c->cat, l2.id + 10, rec_ca, r), VTL_E_NOTFOUND);
	EXPECT_RC(catalog_cartridge_list(c->cat, 0, NULL, r), VTL_E_INVAL);
	assert_check_ok(c->cat);
}

static void test_cartridge_usage_and_cache(void **state)
{
	struct cfx *c = *state;
	add_cart(c->cat, "U00001L8", c->lib.id, SLOT0);
	int64_t t0 = (int64_t)time(NULL);
	EXPECT_RC(catalog_cartridge_usage(c->cat, "U00001L8", 1000, 400, 10, true), 0);
	struct cat_cartridge g = get_cart(c->cat, "U00001L8");
	assert_int_equal(g.bytes_written, 1000);
	assert_int_equal(g.bytes_stored, 400);
	assert_int_equal(g.eod, 10);
	assert_int_equal(g.mounts, 1);
	assert_true(g.last_mounted >= t0 && g.last_mounted <= (int64_t)time(NULL));

	/* Totals, not increments; not mounted leaves mounts and last_mounted. */
	EXPECT_RC(catalog_cartridge_usage(c->cat, "U00001L8", 3000, 1000, 25, false), 0);
	struct cat_cartridge h = get_cart(c->cat, "U00001L8");
	assert_int_equal(h.bytes_written, 3000);
	assert_int_equal(h.bytes_stored, 1000);
	assert_int_equal(h.eod, 25);
	assert_int_equal(h.mounts, 1);
	assert_int_equal(h.last_mounted, g.last_mounted);
	EXPECT_RC(catalog_cartridge_usage(c->cat, "U00001L8", 3000, 1000, 25, true), 0);
	assert_int_equal(get_cart(c->cat, "U00001L8").mounts, 2);
	EXPECT_RC(catalog_cartridge_usage(c->cat, "U00001L8", UINT64_MAX, UINT64_MAX - 1, UINT64_MAX, false), 0);
	h = get_cart(c->cat, "U00001L8");
	assert_true(h.bytes_written == UINT64_MAX && h.bytes_stored == UINT64_MAX - 1 && h.eod == UINT64_MAX);

	EXPECT_RC(catalog_cartridge_usage(c->cat, "NOPE01L8", 1, 1, 1, true), VTL_E_NOTFOUND);
	EXPECT_RC(catalog_cartridge_usage(c->cat, "", 1, 1, 1, true), VTL_E_INVAL);
	EXPECT_RC(catalog_cartridge_usage(c->cat, NULL, 1, 1, 1, true), VTL_E_INVAL);

	const enum cat_cache_state states[] = {CAT_CACHE_PREMIGRATED, CAT_CACHE_MIGRATED, CAT_CACHE_RECALLING,
					       CAT_CACHE_RESIDENT};
	for (int i = 0; i < 4; i++) {
		EXPECT_RC(catalog_cartridge_set_cache(c->cat, "U00001L8", states[i]), 0);
		assert_int_equal(get_cart(c->cat, "U00001L8").cache, states[i]);
	}
	EXPECT_RC(catalog_cartridge_set_cache(c->cat, "U00001L8", (enum cat_cache_state)4), VTL_E_INVAL);
	EXPECT_RC(catalog_cartridge_set_cache(c->cat, "U00001L8", (enum cat_cache_state)-1), VTL_E_INVAL);
	EXPECT_RC(catalog_cartridge_set_cache(c->cat, "NOPE01L8", CAT_CACHE_MIGRATED), VTL_E_NOTFOUND);
	EXPECT_RC(catalog_cartridge_set_cache(c->cat, NULL, CAT_CACHE_MIGRATED), VTL_E_INVAL);
	assert_int_equal(get_cart(c->cat, "U00001L8").cache, CAT_CACHE_RESIDENT);
}

static void test_cartridge_remove(void **state)
{
	struct cfx *c = *state;
	int64_t lib = c->lib.id;
	add_cart(c->cat, "R00001L8", lib, SLOT0);
	add_cart(c->cat, "R00002L8", lib, SLOT0 + 1);
	EXPECT_RC(catalog_move(c->cat, lib, SLOT0, DRIVE0, "t"), 0);
	EXPECT_RC(catalog_mam_set(c->cat, "R00001L8", 0x0401, "X", 1), 0);
	EXPECT_RC(catalog_mam_set(c->cat, "R00002L8", 0x0401, "Y", 1), 0);

	EXPECT_RC(catalog_cartridge_remove(c->cat, "R00001L8"), 0);
	assert_empty_elem(c->cat, lib, DRIVE0);
	struct cat_cartridge k;
	EXPECT_RC(catalog_cartridge_get(c->cat, "R00001L8", &k), VTL_E_NOTFOUND);
	char b[4];
	size_t len;
	EXPECT_RC(catalog_mam_get(c->cat, "R00001L8", 0x0401, b, sizeof(b), &len), VTL_E_NOTFOUND);
	EXPECT_RC(catalog_mam_get(c->cat, "R00002L8", 0x0401, b, sizeof(b), &len), 0);
	EXPECT_RC(catalog_cartridge_remove(c->cat, "R00001L8"), VTL_E_NOTFOUND);
	EXPECT_RC(catalog_cartridge_remove(c->cat, ""), VTL_E_INVAL);
	EXPECT_RC(catalog_cartridge_remove(c->cat, NULL), VTL_E_INVAL);

	/* The barcode and the element can be used again; the old MAM is gone. */
	add_cart(c->cat, "R00001L8", lib, DRIVE0);
	assert_holds(c->cat, lib, DRIVE0, "R00001L8", CAT_NO_ELEMENT);
	EXPECT_RC(catalog_mam_get(c->cat, "R00001L8", 0x0401, b, sizeof(b), &len), VTL_E_NOTFOUND);

	/* An exported cartridge (in no element) too. */
	add_cart(c->cat, "R00003L8", 0, CAT_NO_ELEMENT);
	EXPECT_RC(catalog_cartridge_remove(c->cat, "R00003L8"), 0);
	assert_check_ok(c->cat);
}

/* =================================================================== move */

static void test_move(void **state)
{
	struct cfx *c = *state;
	int64_t lib = c->lib.id;
	add_cart(c->cat, "A00001L8", lib, SLOT0);
	int64_t t0 = (int64_t)time(NULL);

	EXPECT_RC(catalog_move(c->cat, lib, SLOT0, DRIVE0, "vtld"), 0);
	assert_empty_elem(c->cat, lib, SLOT0);
	assert_holds(c->cat, lib, DRIVE0, "A00001L8", SLOT0);
	struct rec *r = new_rec();
	EXPECT_RC(catalog_event_list(c->cat, 0, 0, rec_ev, r), 0);
	assert_int_equal(r->n, 1);
	assert_string_equal(r->ev[0].actor, "vtld");
	assert_string_equal(r->ev[0].what, "move A00001L8 from 1024 to 256");
	assert_true(r->ev[0].time >= t0 && r->ev[0].time <= (int64_t)time(NULL));

	/* Through the transport and the mail slot, to another slot. */
	EXPECT_RC(catalog_move(c->cat, lib, DRIVE0, 0, "vtld"), 0);
	assert_holds(c->cat, lib, 0, "A00001L8", DRIVE0);
	assert_empty_elem(c->cat, lib, DRIVE0);
	EXPECT_RC(catalog_move(c->cat, lib, 0, IE0 + 1, "vtlctl"), 0);
	EXPECT_RC(catalog_move(c->cat, lib, IE0 + 1, SLOT0 + 7, "vtlctl"), 0);
	assert_holds(c->cat, lib, SLOT0 + 7, "A00001L8", IE0 + 1);
	assert_int_equal(count_events(c->cat), 4);
	assert_check_ok(c->cat);
}

/* An operator puts a cartridge from outside into a mail slot, and takes one out of the library. */
static void test_cartridge_place(void **state)
{
	struct cfx *c = *state;
	int64_t lib = c->lib.id;
	add_cart(c->cat, "A00001L8", lib, SLOT0);
	add_cart(c->cat, "A00002L8", lib, IE0);
	int events = count_events(c->cat);

	EXPECT_RC(catalog_cartridge_place(c->cat, "A00001L8", lib, CAT_NO_ELEMENT, "exported", "vtlctl"), 0);
	assert_empty_elem(c->cat, lib, SLOT0);
	struct cat_cartridge k;
	EXPECT_RC(catalog_cartridge_get(c->cat, "A00001L8", &k), 0);
	assert_int_equal(k.element, CAT_NO_ELEMENT);
	assert_int_equal(k.library_id, 0);
	assert_string_equal(k.state, "exported");
	assert_check_ok(c->cat);

	/* Back in through a mail slot: a full one is refused, an unknown one too, nothing changes. */
	EXPECT_RC(catalog_cartridge_place(c->cat, "A00001L8", lib, IE0, "available", "vtlctl"), VTL_E_DST_FULL);
	EXPECT_RC(catalog_cartridge_place(c->cat, "A00001L8", lib, 999, "available", "vtlctl"), VTL_E_NOTFOUND);
	EXPECT_RC(catalog_cartridge_place(c->cat, "NOPE01L8", lib, IE0 + 1, "available", "vtlctl"), VTL_E_NOTFOUND);
	EXPECT_RC(catalog_cartridge_get(c->cat, "A00001L8", &k), 0);
	assert_int_equal(k.element, CAT_NO_ELEMENT);
	assert_int_equal(count_events(c->cat), events + 1);
	EXPECT_RC(catalog_cartridge_place(c->cat, "A00001L8", lib, IE0 + 1, "available", "vtlctl"), 0);
	EXPECT_RC(catalog_cartridge_get(c->cat, "A00001L8", &k), 0);
	assert_int_equal(k.element, IE0 + 1);
	assert_int_equal(k.library_id, lib);
	struct cat_element e;
	EXPECT_RC(catalog_element_get(c->cat, lib, IE0 + 1, &e), 0);
	assert_true(e.full);
	assert_string_equal(e.barcode, "A00001L8");
	/* Placing it elsewhere directly also empties where it was. */
	EXPECT_RC(catalog_cartridge_place(c->cat, "A00001L8", lib, SLOT0 + 3, "available", "vtlctl"), 0);
	assert_empty_elem(c->cat, lib, IE0 + 1);
	assert_int_equal(count_events(c->cat), events + 3);
	assert_check_ok(c->cat);
}

static void test_move_errors(void **state)
{
	struct cfx *c = *state;
	int64_t lib = c->lib.id;
	add_cart(c->cat, "A00001L8", lib, SLOT0);
	add_cart(c->cat, "A00002L8", lib, SLOT0 + 1);
	EXPECT_RC(catalog_move(c->cat, lib, SLOT0 + 1, DRIVE0, "t"), 0);
	int events = count_events(c->cat);

	EXPECT_RC(catalog_move(c->cat, lib, SLOT0 + 2, DRIVE0 + 1, "t"), VTL_E_SRC_EMPTY);
	assert_non_null(strstr(catalog_last_error(c->cat), "empty"));
	EXPECT_RC(catalog_move(c->cat, lib, SLOT0, DRIVE0, "t"), VTL_E_DST_FULL); /* into a full drive */
	assert_non_null(strstr(catalog_last_error(c->cat), "full"));
	EXPECT_RC(catalog_move(c->cat, lib, DRIVE0, SLOT0, "t"), VTL_E_DST_FULL); /* into a full slot */
	EXPECT_RC(catalog_move(c->cat, lib, SLOT0, SLOT0, "t"), VTL_E_DST_FULL);  /* onto itself */
	EXPECT_RC(catalog_move(c->cat, lib, SLOT0 + 2, SLOT0 + 2, "t"), VTL_E_SRC_EMPTY);
	EXPECT_RC(catalog_move(c->cat, lib, 999, SLOT0 + 3, "t"), VTL_E_NOTFOUND);     /* unknown source */
	EXPECT_RC(catalog_move(c->cat, lib, SLOT0, 999, "t"), VTL_E_NOTFOUND);         /* unknown destination */
	EXPECT_RC(catalog_move(c->cat, lib, SLOT0, CAT_NO_ELEMENT, "t"), VTL_E_NOTFOUND);
	EXPECT_RC(catalog_move(c->cat, lib + 3, SLOT0, SLOT0 + 3, "t"), VTL_E_NOTFOUND); /* unknown library */
	char actor[40];
	memset(actor, 'a', 32); /* 32 characters: one too many */
	actor[32] = '\0';
	EXPECT_RC(catalog_move(c->cat, lib, SLOT0, SLOT0 + 3, actor), VTL_E_INVAL);
	EXPECT_RC(catalog_move(c->cat, lib, SLOT0, SLOT0 + 3, NULL), VTL_E_INVAL);
	EXPECT_RC(catalog_move(NULL, lib, SLOT0, SLOT0 + 3, "t"), VTL_E_INVAL);

	/* Another library has the same addresses, but not these cartridges. */
	struct cat_library l2;
	std_library(&l2, "LIB2");
	EXPECT_RC(catalog_library_create(c->cat, &l2), 0);
	EXPECT_RC(catalog_move(c->cat, l2.id, SLOT0, SLOT0 + 3, "t"), VTL_E_SRC_EMPTY);

	/* Nothing changed, nothing was logged. */
	assert_holds(c->cat, lib, SLOT0, "A00001L8", CAT_NO_ELEMENT);
	assert_holds(c->cat, lib, DRIVE0, "A00002L8", SLOT0 + 1);
	assert_empty_elem(c->cat, lib, SLOT0 + 1);
	assert_empty_elem(c->cat, lib, SLOT0 + 3);
	assert_int_equal(count_events(c->cat), events);
	memset(actor, 'a', 31);
	actor[31] = '\0';
	EXPECT_RC(catalog_move(c->cat, lib, SLOT0, SLOT0 + 3, actor), 0); /* 31 is fine */
	assert_check_ok(c->cat);
}

/* ==================================================================== MAM */

static void test_mam(void **state)
{
	struct cfx *c = *state;
	add_cart(c->cat, "M00001L8", c->lib.id, SLOT0);
	add_cart(c->cat, "M00002L8", c->lib.id, SLOT0 + 1);
	uint8_t buf[64];
	size_t len = 999;

	EXPECT_RC(catalog_mam_set(c->cat, "M00001L8", 0x0400, "IBM     ", 8), 0);
	EXPECT_RC(catalog_mam_set(c->cat, "M00001L8", 0x0401, "SERIAL0001", 10), 0);
	EXPECT_RC(catalog_mam_get(c->cat, "M00001L8", 0x0400, buf, sizeof(buf), &len), 0);
	assert_int_equal(len, 8);
	assert_memory_equal(buf, "IBM     ", 8);

	/* Replacing; a short buffer gets the start and the true length. */
	EXPECT_RC(catalog_mam_set(c->cat, "M00001L8", 0x0400, "HPE", 3), 0);
	EXPECT_RC(catalog_mam_get(c->cat, "M00001L8", 0x0400, buf, sizeof(buf), &len), 0);
	assert_int_equal(len, 3);
	assert_memory_equal(buf, "HPE", 3);
	memset(buf, 0x5a, sizeof(buf));
	EXPECT_RC(catalog_mam_get(c->cat, "M00001L8", 0x0401, buf, 4, &len), 0);
	assert_int_equal(len, 10);
	assert_memory_equal(buf, "SERI", 4);
	assert_int_equal(buf[4], 0x5a);
	EXPECT_RC(catalog_mam_get(c->cat, "M00001L8", 0x0401, NULL, 0, &len), 0); /* just the length */
	assert_int_equal(len, 10);

	/* Binary values, the empty value, the largest value, attribute ids at the ends. */
	uint8_t bin[256];
	gen_random(bin, 0, sizeof(bin), 7);
	EXPECT_RC(catalog_mam_set(c->cat, "M00001L8", 0xFFFF, bin, sizeof(bin)), 0);
	uint8_t back[256];
	EXPECT_RC(catalog_mam_get(c->cat, "M00001L8", 0xFFFF, back, sizeof(back), &len), 0);
	assert_int_equal(len, sizeof(bin));
	assert_memory_equal(back, bin, sizeof(bin));
	EXPECT_RC(catalog_mam_set(c->cat, "M00001L8", 0x0000, NULL, 0), 0);
	EXPECT_RC(catalog_mam_get(c->cat, "M00001L8", 0x0000, buf, sizeof(buf), &len), 0);
	assert_int_equal(len, 0);
	uint8_t *big = talloc(0x10000);
	gen_random(big, 0, 0x10000, 9);
	EXPECT_RC(catalog_mam_set(c->cat, "M00002L8", 0x0800, big, 0xFFFF), 0);
	uint8_t *big2 = talloc(0x10000);
	EXPECT_RC(catalog_mam_get(c->cat, "M00002L8", 0x0800, big2, 0x10000, &len), 0);
	assert_int_equal(len, 0xFFFF);
	assert_memory_equal(big, big2, 0xFFFF);

	/* Errors. */
	EXPECT_RC(catalog_mam_set(c->cat, "M00002L8", 0x0801, big, 0x10000), VTL_E_INVAL);
	EXPECT_RC(catalog_mam_set(c->cat, "M00002L8", 0x0801, NULL, 3), VTL_E_INVAL);
	EXPECT_RC(catalog_mam_set(c->cat, "NOPE01L8", 0x0400, "X", 1), VTL_E_NOTFOUND);
	EXPECT_RC(catalog_mam_set(c->cat, "", 0x0400, "X", 1), VTL_E_INVAL);
	EXPECT_RC(catalog_mam_get(c->cat, "M00002L8", 0x0400, buf, sizeof(buf), &len), VTL_E_NOTFOUND); /* unset */
	EXPECT_RC(catalog_mam_get(c->cat, "NOPE01L8", 0x0400, buf, sizeof(buf), &len), VTL_E_NOTFOUND);
	EXPECT_RC(catalog_mam_get(c->cat, "M00001L8", 0x0400, NULL, 5, &len), VTL_E_INVAL);
	EXPECT_RC(catalog_mam_get(c->cat, NULL, 0x0400, buf, sizeof(buf), &len), VTL_E_INVAL);
}

/* What catalog_mam_list hands over, recorded for the checks. */
struct mam_seen {
	unsigned n;
	uint16_t id[8];
	size_t len[8];
	uint8_t first[8];
	int stop_after; /* return 1 (stop) after this many; 0: never */
};

static int mam_collect(const struct cat_mam_attr *a, void *arg)
{
	struct mam_seen *s = arg;
	if (s->n < 8) {
		s->id[s->n] = a->id;
		s->len[s->n] = a->len;
		s->first[s->n] = a->len ? a->value[0] : 0;
	}
	s->n++;
	return s->stop_after && s->n >= (unsigned)s->stop_after ? 1 : 0;
}

static int mam_fail(const struct cat_mam_attr *a, void *arg)
{
	(void)a;
	(void)arg;
	return VTL_E_IO;
}

static void test_mam_list_delete(void **state)
{
	struct cfx *c = *state;
	add_cart(c->cat, "L00001L8", c->lib.id, SLOT0);
	add_cart(c->cat, "L00002L8", c->lib.id, SLOT0 + 1);
	EXPECT_RC(catalog_mam_set(c->cat, "L00001L8", 0x0806, "B", 1), 0);
	EXPECT_RC(catalog_mam_set(c->cat, "L00001L8", 0x0003, "\x00\x07", 2), 0);
	EXPECT_RC(catalog_mam_set(c->cat, "L00001L8", 0x0800, "VENDOR  ", 8), 0);
	EXPECT_RC(catalog_mam_set(c->cat, "L00001L8", 0x0801, NULL, 0), 0);
	EXPECT_RC(catalog_mam_set(c->cat, "L00002L8", 0x0400, "X", 1), 0); /* another cartridge's */

	/* In identifier order, empty values included, only this cartridge's. */
	struct mam_seen s = {0};
	EXPECT_RC(catalog_mam_list(c->cat, "L00001L8", mam_collect, &s), 0);
	assert_int_equal(s.n, 4);
	static const uint16_t want[] = {0x0003, 0x0800, 0x0801, 0x0806};
	static const size_t want_len[] = {2, 8, 0, 1};
	for (unsigned i = 0; i < 4; i++) {
		assert_int_equal(s.id[i], want[i]);
		assert_int_equal(s.len[i], want_len[i]);
	}
	assert_int_equal(s.first[1], 'V');
	assert_int_equal(s.first[3], 'B');

	/* The callback stops the walk; a negative return is the result. */
	struct mam_seen stop = {.stop_after = 2};
	EXPECT_RC(catalog_mam_list(c->cat, "L00001L8", mam_collect, &stop), 0);
	assert_int_equal(stop.n, 2);
	EXPECT_RC(catalog_mam_list(c->cat, "L00001L8", mam_fail, NULL), VTL_E_IO);

	/* Delete one; deleting an unset one is no error; the other cartridge keeps its own. */
	EXPECT_RC(catalog_mam_delete(c->cat, "L00001L8", 0x0800), 0);
	EXPECT_RC(catalog_mam_delete(c->cat, "L00001L8", 0x0800), 0);
	uint8_t buf[16];
	size_t len;
	EXPECT_RC(catalog_mam_get(c->cat, "L00001L8", 0x0800, buf, sizeof(buf), &len), VTL_E_NOTFOUND);
	memset(&s, 0, sizeof s);
	EXPECT_RC(catalog_mam_list(c->cat, "L00001L8", mam_collect, &s), 0);
	assert_int_equal(s.n, 3);
	EXPECT_RC(catalog_mam_get(c->cat, "L00002L8", 0x0400, buf, sizeof(buf), &len), 0);

	/* A cartridge without attributes lists nothing; unknown and bad arguments. */
	EXPECT_RC(catalog_mam_delete(c->cat, "L00002L8", 0x0400), 0);
	memset(&s, 0, sizeof s);
	EXPECT_RC(catalog_mam_list(c->cat, "L00002L8", mam_collect, &s), 0);
	assert_int_equal(s.n, 0);
	EXPECT_RC(catalog_mam_list(c->cat, "NOPE01L8", mam_collect, &s), VTL_E_NOTFOUND);
	EXPECT_RC(catalog_mam_delete(c->cat, "NOPE01L8", 0x0400), VTL_E_NOTFOUND);
	EXPECT_RC(catalog_mam_list(c->cat, "", mam_collect, &s), VTL_E_INVAL);
	EXPECT_RC(catalog_mam_list(c->cat, "L00001L8", NULL, &s), VTL_E_INVAL);
	EXPECT_RC(catalog_mam_delete(c->cat, NULL, 0x0400), VTL_E_INVAL);
	EXPECT_RC(catalog_mam_list(NULL, "L00001L8", mam_collect, &s), VTL_E_INVAL);
}

/* ================================================================= events */

static void test_events(void **state)
{
	struct cfx *c = *state;
	struct rec *r = new_rec();
	EXPECT_RC(catalog_event_list(c->cat, 0, 0, rec_ev, r), 0);
	assert_int_equal(r->n, 0);
	int64_t t0 = (int64_t)time(NULL);
	for (int i = 0; i < 5; i++) {
		char what[32];
		snprintf(what, sizeof(what), "event %d", i);
		EXPECT_RC(catalog_event(c->cat, i % 2 ? "vtld" : "vtlctl", what), 0);
	}
	EXPECT_RC(catalog_event_list(c->cat, 0, 0, rec_ev, r), 0);
	assert_int_equal(r->n, 5);
	for (int i = 0; i < 5; i++) {
		char what[32];
		snprintf(what, sizeof(what), "event %d", i);
		assert_string_equal(r->ev[i].what, what);
		assert_string_equal(r->ev[i].actor, i % 2 ? "vtld" : "vtlctl");
		assert_true(r->ev[i].time >= t0 && r->ev[i].time <= (int64_t)time(NULL));
		if (i)
			assert_true(r->ev[i].id > r->ev[i - 1].id);
	}
	int64_t second = r->ev[1].id;

	/* after_id and limit. */
	r->n = 0;
	EXPECT_RC(catalog_event_list(c->cat, second, 0, rec_ev, r), 0);
	assert_int_equal(r->n, 3);
	assert_string_equal(r->ev[0].what, "event 2");
	r->n = 0;
	EXPECT_RC(catalog_event_list(c->cat, second, 2, rec_ev, r), 0);
	assert_int_equal(r->n, 2);
	assert_string_equal(r->ev[1].what, "event 3");
	r->n = 0;
	EXPECT_RC(catalog_event_list(c->cat, r->ev[4].id + 1000, 0, rec_ev, r), 0);
	assert_int_equal(r->n, 0);

	/* Stopping. */
	r->n = 0;
	r->stop_after = 2;
	r->stop_with = 1;
	EXPECT_RC(catalog_event_list(c->cat, 0, 0, rec_ev, r), 0);
	assert_int_equal(r->n, 2);
	r->n = 0;
	r->stop_with = -9;
	EXPECT_RC(catalog_event_list(c->cat, 0, 0, rec_ev, r), -9);
	r->stop_after = 0;

	/* More than one batch (256): all, in order; a limit across batches. */
	for (int i = 5; i < 600; i++) {
		char what[32];
		snprintf(what, sizeof(what), "event %d", i);
		EXPECT_RC(catalog_event(c->cat, "bulk", what), 0);
	}
	r->n = 0;
	EXPECT_RC(catalog_event_list(c->cat, 0, 0, rec_ev, r), 0);
	assert_int_equal(r->n, 600);
	for (int i = 1; i < 600; i++)
		assert_true(r->ev[i].id > r->ev[i - 1].id);
	assert_string_equal(r->ev[599].what, "event 599");
	r->n = 0;
	EXPECT_RC(catalog_event_list(c->cat, second, 300, rec_ev, r), 0);
	assert_int_equal(r->n, 300);
	assert_string_equal(r->ev[299].what, "event 301");
	r->n = 0;
	r->stop_after = 400;
	r->stop_with = 1;
	EXPECT_RC(catalog_event_list(c->cat, 0, 0, rec_ev, r), 0);
	assert_int_equal(r->n, 400);
	r->stop_after = 0;

	/* Lengths: actor up to 31, what up to 255. */
	char s[300];
	memset(s, 'w', sizeof(s));
	s[255] = '\0';
	EXPECT_RC(catalog_event(c->cat, "x", s), 0);
	s[255] = 'w';
	s[256] = '\0';
	EXPECT_RC(catalog_event(c->cat, "x", s), VTL_E_INVAL);
	s[31] = '\0';
	EXPECT_RC(catalog_event(c->cat, s, "y"), 0);
	s[31] = 'w';
	s[32] = '\0';
	EXPECT_RC(catalog_event(c->cat, s, "y"), VTL_E_INVAL);
	EXPECT_RC(catalog_event(c->cat, NULL, "y"), VTL_E_INVAL);
	EXPECT_RC(catalog_event(c->cat, "x", NULL), VTL_E_INVAL);
	EXPECT_RC(catalog_event_list(c->cat, 0, 0, NULL, r), VTL_E_INVAL);
	assert_int_equal(count_events(c->cat), 602);
	r->n = 0;
	EXPECT_RC(catalog_event_list(c->cat, 0, 0, rec_ev, r), 0);
	assert_int_equal((int)strlen(r->ev[600].what), 255);
	assert_int_equal((int)strlen(r->ev[601].actor), 31);
}

/* ========================================================= physical tapes */

static void ptape_init(struct cat_ptape *t, const char *bc, int32_t slot)
{
	memset(t, 0, sizeof(*t));
	snprintf(t->barcode, sizeof(t->barcode), "%s", bc);
	strcpy(t->library, "TS4500-A");
	t->slot = slot;
	t->capacity = 18000000000000ull;
	strcpy(t->state, "scratch");
}

static void test_ptapes(void **state)
{
	struct cfx *c = *state;
	struct cat_ptape t, g;
	ptape_init(&t, "P00002L9", 12);
	EXPECT_RC(catalog_ptape_add(c->cat, &t), 0);
	assert_true(t.id > 0);
	int64_t id2 = t.id;
	ptape_init(&t, "P00001L9", -1);
	t.used = 5;
	EXPECT_RC(catalog_ptape_add(c->cat, &t), 0);
	assert_true(t.id != id2);

	memset(&g, 0xa5, sizeof(g));
	EXPECT_RC(catalog_ptape_get(c->cat, "P00002L9", &g), 0);
	assert_int_equal(g.id, id2);
	assert_string_equal(g.barcode, "P00002L9");
	assert_string_equal(g.library, "TS4500-A");
	assert_int_equal(g.slot, 12);
	assert_int_equal(g.capacity, 18000000000000ull);
	assert_int_equal(g.used, 0);
	assert_string_equal(g.state, "scratch");
	EXPECT_RC(catalog_ptape_get(c->cat, "P00001L9", &g), 0);
	assert_int_equal(g.slot, -1);
	assert_int_equal(g.used, 5);

	struct rec *r = new_rec();
	EXPECT_RC(catalog_ptape_list(c->cat, rec_pt, r), 0);
	assert_int_equal(r->n, 2);
	assert_string_equal(r->pt[0].barcode, "P00001L9");
	assert_string_equal(r->pt[1].barcode, "P00002L9");
	r->n = 0;
	r->stop_after = 1;
	r->stop_with = -5;
	EXPECT_RC(catalog_ptape_list(c->cat, rec_pt, r), -5);
	assert_int_equal(r->n, 1);

	EXPECT_RC(catalog_ptape_update(c->cat, "P00002L9", 4096, "filling"), 0);
	EXPECT_RC(catalog_ptape_get(c->cat, "P00002L9", &g), 0);
	assert_int_equal(g.used, 4096);
	assert_string_equal(g.state, "filling");
	EXPECT_RC(catalog_ptape_update(c->cat, "P00002L9", 8192, NULL), 0); /* state kept */
	EXPECT_RC(catalog_ptape_get(c->cat, "P00002L9", &g), 0);
	assert_int_equal(g.used, 8192);
	assert_string_equal(g.state, "filling");

	/* Errors. */
	ptape_init(&t, "P00002L9", 1);
	EXPECT_RC(catalog_ptape_add(c->cat, &t), VTL_E_EXISTS);
	ptape_init(&t, "", 1);
	EXPECT_RC(catalog_ptape_add(c->cat, &t), VTL_E_INVAL);
	ptape_init(&t, "P00003L9", 1);
	memset(t.library, 'l', sizeof(t.library));
	EXPECT_RC(catalog_ptape_add(c->cat, &t), VTL_E_INVAL);
	ptape_init(&t, "P00003L9", 1);
	memset(t.state, 's', sizeof(t.state));
	EXPECT_RC(catalog_ptape_add(c->cat, &t), VTL_E_INVAL);
	EXPECT_RC(catalog_ptape_add(c->cat, NULL), VTL_E_INVAL);
	EXPECT_RC(catalog_ptape_get(c->cat, "P00003L9", &g), VTL_E_NOTFOUND);
	EXPECT_RC(catalog_ptape_get(c->cat, NULL, &g), VTL_E_INVAL);
	EXPECT_RC(catalog_ptape_update(c->cat, "P00003L9", 1, "full"), VTL_E_NOTFOUND);
	EXPECT_RC(catalog_ptape_update(c->cat, "P00002L9", 1, "a state that is too long"), VTL_E_INVAL);
	EXPECT_RC(catalog_ptape_list(c->cat, NULL, r), VTL_E_INVAL);
}

/* ================================================================= copies */

static void copy_init(struct cat_copy *k, const char *bc, const char *tape, uint32_t file)
{
	memset(k, 0, sizeof(*k));
	snprintf(k->barcode, sizeof(k->barcode), "%s", bc);
	snprintf(k->tape, sizeof(k->tape), "%s", tape);
	k->file = file;
	k->block = 1000ull * file;
	k->length = 123456789012ull;
	snprintf(k->digest, sizeof(k->digest), "sha256:%064u", file);
	strcpy(k->state, "writing");
}

/* A copy committed with its tape: file numbers follow the tape's count; a stale one changes nothing. */
static void test_copy_commit(void **state)
{
	struct cfx *c = *state;
	add_cart(c->cat, "V00001L8", c->lib.id, SLOT0);
	struct cat_ptape t, g;
	ptape_init(&t, "P00001L9", 1);
	EXPECT_RC(catalog_ptape_add(c->cat, &t), 0);
	EXPECT_RC(catalog_ptape_get(c->cat, "P00001L9", &g), 0);
	assert_int_equal(g.files, 0);
	struct cat_copy k;
	copy_init(&k, "V00001L8", "P00001L9", 0);
	strcpy(k.state, "good");
	EXPECT_RC(catalog_copy_commit(c->cat, &k, 5000, "filling"), 0);
	assert_true(k.id > 0);
	EXPECT_RC(catalog_ptape_get(c->cat, "P00001L9", &g), 0);
	assert_int_equal(g.files, 1);
	assert_int_equal(g.used, 5000);
	assert_string_equal(g.state, "filling");
	/* File 0 again: another writer got there first; neither the tape nor the copies change. */
	EXPECT_RC(catalog_copy_commit(c->cat, &k, 9000, "full"), VTL_E_BUSY);
	assert_non_null(strstr(catalog_last_error(c->cat), "holds 1 files, not 0"));
	EXPECT_RC(catalog_ptape_get(c->cat, "P00001L9", &g), 0);
	assert_int_equal(g.files, 1);
	assert_int_equal(g.used, 5000);
	struct rec *r = new_rec();
	EXPECT_RC(catalog_copy_list(c->cat, "V00001L8", rec_co, r), 0);
	assert_int_equal(r->n, 1);
	/* An unknown cartridge: the tape's count does not move either. */
	copy_init(&k, "V00009L8", "P00001L9", 1);
	EXPECT_RC(catalog_copy_commit(c->cat, &k, 9000, NULL), VTL_E_NOTFOUND);
	EXPECT_RC(catalog_ptape_get(c->cat, "P00001L9", &g), 0);
	assert_int_equal(g.files, 1);
	copy_init(&k, "V00001L8", "P00009L9", 0);
	EXPECT_RC(catalog_copy_commit(c->cat, &k, 9000, NULL), VTL_E_NOTFOUND);
}

/* A host's write: the cartridge is resident again and its good copies become history, in one step. */
static void test_cartridge_modified(void **state)
{
	struct cfx *c = *state;
	add_cart(c->cat, "V00001L8", c->lib.id, SLOT0);
	add_cart(c->cat, "V00002L8", c->lib.id, SLOT0 + 1);
	struct cat_ptape t;
	ptape_init(&t, "P00001L9", 1);
	EXPECT_RC(catalog_ptape_add(c->cat, &t), 0);
	static const char *const states[] = {CAT_COPY_GOOD, CAT_COPY_BAD, CAT_COPY_GOOD};
	for (unsigned i = 0; i < 3; i++) {
		struct cat_copy k;
		copy_init(&k, "V00001L8", "P00001L9", i);
		strcpy(k.state, states[i]);
		EXPECT_RC(catalog_copy_add(c->cat, &k), 0);
	}
	struct cat_copy other;
	copy_init(&other, "V00002L8", "P00001L9", 3);
	strcpy(other.state, CAT_COPY_GOOD);
	EXPECT_RC(catalog_copy_add(c->cat, &other), 0);
	EXPECT_RC(catalog_cartridge_set_cache(c->cat, "V00001L8", CAT_CACHE_PREMIGRATED), 0);

	unsigned n = 99;
	EXPECT_RC(catalog_cartridge_modified(c->cat, "V00001L8", &n), 0);
	assert_int_equal(n, 2);
	struct cat_cartridge cc;
	EXPECT_RC(catalog_cartridge_get(c->cat, "V00001L8", &cc), 0);
	assert_int_equal(cc.cache, CAT_CACHE_RESIDENT);
	struct rec *r = new_rec();
	EXPECT_RC(catalog_copy_list(c->cat, "V00001L8", rec_co, r), 0);
	assert_int_equal(r->n, 3);
	assert_string_equal(r->co[0].state, CAT_COPY_INVALID);
	assert_string_equal(r->co[1].state, CAT_COPY_BAD); /* a bad copy stays bad: it says why it was dropped */
	assert_string_equal(r->co[2].state, CAT_COPY_INVALID);
	r = new_rec();
	EXPECT_RC(catalog_copy_list(c->cat, "V00002L8", rec_co, r), 0);
	assert_string_equal(r->co[0].state, CAT_COPY_GOOD); /* another cartridge's copy is untouched */
	/* Twice: nothing more to invalidate. */
	EXPECT_RC(catalog_cartridge_modified(c->cat, "V00001L8", &n), 0);
	assert_int_equal(n, 0);
	EXPECT_RC(catalog_cartridge_modified(c->cat, "V00009L8", NULL), VTL_E_NOTFOUND);
}

/* A version 3 catalog's tapes land in the default pool when it is upgraded. */
static void test_upgrade_from_v3_pools(void **state)
{
	struct cfx *c = *state;
	char path[TL_PATH_LEN + 32], err[256] = "";
	snprintf(path, sizeof(path), "%.500s/v3.db", c->fx->dir);
	struct vtl_catalog *v3 = NULL;
	EXPECT_RC(catalog_open_at_version(path, 3, &v3, err, sizeof(err)), 0);
	struct cat_ptape t, g;
	ptape_init(&t, "P00003L9", 3);
	EXPECT_RC(catalog_ptape_add(v3, &t), VTL_E_IO); /* the pool column is not there yet */
	catalog_close(v3);
	EXPECT_RC(catalog_open_at_version(path, 3, &v3, err, sizeof(err)), 0);
	EXPECT_RC(catalog_ptape_set_pool(v3, "P00003L9", "vault"), VTL_E_IO);
	catalog_close(v3);
	struct vtl_catalog *cat = tl_cat_open(path, false);
	assert_int_equal(catalog_schema_version(cat), CAT_SCHEMA_VERSION);
	EXPECT_RC(catalog_ptape_add(cat, &t), 0);
	EXPECT_RC(catalog_ptape_get(cat, "P00003L9", &g), 0);
	assert_string_equal(g.pool, CAT_POOL_DEFAULT);
	catalog_close(cat);
}

/*
 * A version 4 catalog's copies have no block size: upgraded, they read as 0
 * (not known) until a verify records it; new copies keep theirs.
 */
static void test_upgrade_from_v4_block_size(void **state)
{
	struct cfx *c = *state;
	char path[TL_PATH_LEN + 32], err[256] = "";
	snprintf(path, sizeof(path), "%.500s/v4.db", c->fx->dir);
	struct vtl_catalog *v4 = NULL;
	EXPECT_RC(catalog_open_at_version(path, 4, &v4, err, sizeof(err)), 0);
	struct cat_library l;
	std_library(&l, "OLD4");
	EXPECT_RC(catalog_library_create(v4, &l), 0);
	add_cart(v4, "V00001L8", l.id, SLOT0);
	struct cat_ptape t;
	ptape_init(&t, "P00001L9", 1);
	EXPECT_RC(catalog_ptape_add(v4, &t), 0);
	struct cat_copy k;
	copy_init(&k, "V00001L8", "P00001L9", 0);
	k.block_size = 262144;
	EXPECT_RC(catalog_copy_add(v4, &k), VTL_E_IO); /* the block_size column is not there yet */
	catalog_close(v4);
	/* A row as the version 4 program wrote it (this one no longer can). */
	sqlite3 *db;
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, "INSERT INTO copy (cartridge_id, ptape_id, file, block, length, digest,"
				      " verified_at, state) SELECT c.id, t.id, 0, 0, 4096, 'crc32c-blocks:00000001', 5,"
				      " 'good' FROM cartridge c, ptape t", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	struct vtl_catalog *cat = tl_cat_open(path, false);
	assert_int_equal(catalog_schema_version(cat), CAT_SCHEMA_VERSION);
	struct rec *r = new_rec();
	EXPECT_RC(catalog_copy_list(cat, "V00001L8", rec_co, r), 0);
	assert_int_equal(r->n, 1);
	assert_int_equal(r->co[0].block_size, 0);
	EXPECT_RC(catalog_copy_set_block_size(cat, r->co[0].id, 262144), 0);
	EXPECT_RC(catalog_copy_set_block_size(cat, r->co[0].id + 100, 262144), VTL_E_NOTFOUND);
	copy_init(&k, "V00001L8", "P00001L9", 1);
	k.block_size = 1u << 20;
	EXPECT_RC(catalog_copy_add(cat, &k), 0);
	r = new_rec();
	EXPECT_RC(catalog_copy_list(cat, "V00001L8", rec_co, r), 0);
	assert_int_equal(r->n, 2);
	assert_int_equal(r->co[0].block_size, 262144);
	assert_int_equal(r->co[1].block_size, 1u << 20);
	assert_check_ok(cat);
	catalog_close(cat);
}

/*
 * A version 5 catalog's jobs stay queued when it is upgraded, asking for the
 * defaults (any drive, the configured rate, a stacked copy); new jobs keep
 * what they ask for.
 */
static void test_upgrade_from_v5_job_opts(void **state)
{
	struct cfx *c = *state;
	char path[TL_PATH_LEN + 32], err[256] = "";
	snprintf(path, sizeof(path), "%.500s/v5.db", c->fx->dir);
	struct vtl_catalog *v5 = NULL;
	EXPECT_RC(catalog_open_at_version(path, 5, &v5, err, sizeof(err)), 0);
	struct cat_library l;
	std_library(&l, "OLD5");
	EXPECT_RC(catalog_library_create(v5, &l), 0);
	add_cart(v5, "V00001L8", l.id, SLOT0);
	add_cart(v5, "V00002L8", l.id, SLOT0 + 1);
	struct cat_job_opts o = {.drive = 2, .rate = 50, .native = true};
	int64_t a = 0, b = 0, x = 0;
	EXPECT_RC(catalog_job_add_opts(v5, CAT_JOB_MIGRATE, "V00001L8", &o, &x), VTL_E_IO); /* no such columns yet */
	catalog_close(v5);
	/* Rows as the version 5 program wrote them (this one no longer can). */
	sqlite3 *db;
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, "INSERT INTO job (kind, barcode, state) VALUES (1, 'V00001L8', 1), (2, 'V00002L8', 1)",
				      NULL, NULL, NULL), SQLITE_OK);
	a = sqlite3_last_insert_rowid(db) - 1;
	b = a + 1;
	sqlite3_close(db);
	struct vtl_catalog *cat = tl_cat_open(path, false);
	assert_int_equal(catalog_schema_version(cat), CAT_SCHEMA_VERSION);
	struct rec *r = new_rec();
	EXPECT_RC(catalog_job_list(cat, CAT_JOB_QUEUED, rec_jo, r), 0);
	assert_int_equal(r->n, 2);
	assert_int_equal(r->jo[0].id, a);
	assert_int_equal(r->jo[1].id, b);
	assert_int_equal(r->jo[1].kind, CAT_JOB_RECALL);
	for (size_t i = 0; i < 2; i++) {
		assert_int_equal(r->jo[i].opts.drive, CAT_JOB_DRIVE_ANY);
		assert_int_equal(r->jo[i].opts.rate, 0);
		assert_false(r->jo[i].opts.native);
		assert_string_equal(r->jo[i].opts.library, "");
	}
	/* A new job keeps its options, and reads them back. */
	snprintf(o.library, sizeof(o.library), "vault");
	EXPECT_RC(catalog_job_add_opts(cat, CAT_JOB_MIGRATE, "V00001L8", &o, &x), 0);
	struct cat_job j;
	EXPECT_RC(catalog_job_get(cat, x, &j), 0);
	assert_int_equal(j.opts.drive, 2);
	assert_int_equal(j.opts.rate, 50);
	assert_true(j.opts.native);
	assert_string_equal(j.opts.library, "vault");
	assert_check_ok(cat);
	catalog_close(cat);
}

/* Pools: a tape is in the default one unless put in another, and only an empty tape moves. */
static void test_ptape_pools(void **state)
{
	struct cfx *c = *state;
	add_cart(c->cat, "V00001L8", c->lib.id, SLOT0);
	struct cat_ptape t, g;
	ptape_init(&t, "P00001L9", 1);
	EXPECT_RC(catalog_ptape_add(c->cat, &t), 0);
	ptape_init(&t, "P00002L9", 2);
	strcpy(t.pool, "vault");
	EXPECT_RC(catalog_ptape_add(c->cat, &t), 0);
	EXPECT_RC(catalog_ptape_get(c->cat, "P00001L9", &g), 0);
	assert_string_equal(g.pool, CAT_POOL_DEFAULT);
	EXPECT_RC(catalog_ptape_get(c->cat, "P00002L9", &g), 0);
	assert_string_equal(g.pool, "vault");
	EXPECT_RC(catalog_ptape_set_pool(c->cat, "P00001L9", "offsite"), 0);
	EXPECT_RC(catalog_ptape_get(c->cat, "P00001L9", &g), 0);
	assert_string_equal(g.pool, "offsite");
	struct cat_copy k;
	copy_init(&k, "V00001L8", "P00001L9", 0);
	strcpy(k.state, CAT_COPY_GOOD);
	EXPECT_RC(catalog_copy_commit(c->cat, &k, 5000, "filling"), 0);
	EXPECT_RC(catalog_ptape_set_pool(c->cat, "P00001L9", "vault"), VTL_E_INVAL);
	assert_non_null(strstr(catalog_last_error(c->cat), "holds 1 files"));
	EXPECT_RC(catalog_ptape_get(c->cat, "P00001L9", &g), 0);
	assert_string_equal(g.pool, "offsite");
	EXPECT_RC(catalog_ptape_set_pool(c->cat, "P00009L9", "vault"), VTL_E_NOTFOUND);
	EXPECT_RC(catalog_ptape_set_pool(c->cat, "P00002L9", ""), VTL_E_INVAL);
}

static void test_copies(void **state)
{
	struct cfx *c = *state;
	add_cart(c->cat, "V00001L8", c->lib.id, SLOT0);
	add_cart(c->cat, "V00002L8", c->lib.id, SLOT0 + 1);
	struct cat_ptape t;
	ptape_init(&t, "P00001L9", 1);
	EXPECT_RC(catalog_ptape_add(c->cat, &t), 0);
	ptape_init(&t, "P00002L9", 2);
	EXPECT_RC(catalog_ptape_add(c->cat, &t), 0);

	struct rec *r = new_rec();
	EXPECT_RC(catalog_copy_list(c->cat, "V00001L8", rec_co, r), 0); /* none yet */
	assert_int_equal(r->n, 0);

	struct cat_copy k;
	copy_init(&k, "V00001L8", "P00002L9", 3);
	EXPECT_RC(catalog_copy_add(c->cat, &k), 0);
	int64_t first = k.id;
	copy_init(&k, "V00001L8", "P00001L9", 1);
	k.verified_at = 1600000000;
	EXPECT_RC(catalog_copy_add(c->cat, &k), 0);
	int64_t second = k.id;
	assert_true(second > first);
	copy_init(&k, "V00002L8", "P00001L9", 2);
	EXPECT_RC(catalog_copy_add(c->cat, &k), 0);

	EXPECT_RC(catalog_copy_list(c->cat, "V00001L8", rec_co, r), 0);
	assert_int_equal(r->n, 2);
	assert_int_equal(r->co[0].id, first);
	assert_string_equal(r->co[0].barcode, "V00001L8");
	assert_string_equal(r->co[0].tape, "P00002L9");
	assert_int_equal(r->co[0].file, 3);
	assert_int_equal(r->co[0].block, 3000);
	assert_int_equal(r->co[0].length, 123456789012ull);
	assert_string_equal(r->co[0].digest, "sha256:0000000000000000000000000000000000000000000000000000000000000003");
	assert_int_equal(r->co[0].verified_at, 0);
	assert_string_equal(r->co[0].state, "writing");
	assert_int_equal(r->co[1].verified_at, 1600000000);

	EXPECT_RC(catalog_copy_set_state(c->cat, first, "valid"), 0);
	EXPECT_RC(catalog_copy_verified(c->cat, first, 1700000001), 0);
	r->n = 0;
	EXPECT_RC(catalog_copy_list(c->cat, "V00001L8", rec_co, r), 0);
	assert_string_equal(r->co[0].state, "valid");
	assert_int_equal(r->co[0].verified_at, 1700000001);
	assert_string_equal(r->co[1].state, "writing");
	r->n = 0;
	r->stop_after = 1;
	r->stop_with = 3;
	EXPECT_RC(catalog_copy_list(c->cat, "V00001L8", rec_co, r), 0);
	assert_int_equal(r->n, 1);
	r->stop_after = 0;

	/* Errors. */
	copy_init(&k, "NOPE01L8", "P00001L9", 1);
	EXPECT_RC(catalog_copy_add(c->cat, &k), VTL_E_NOTFOUND);
	copy_init(&k, "V00001L8", "NOPE01L9", 1);
	EXPECT_RC(catalog_copy_add(c->cat, &k), VTL_E_NOTFOUND);
	copy_init(&k, "V00001L8", "", 1);
	EXPECT_RC(catalog_copy_add(c->cat, &k), VTL_E_INVAL);
	copy_init(&k, "V00001L8", "P00001L9", 1);
	memset(k.digest, 'd', sizeof(k.digest));
	EXPECT_RC(catalog_copy_add(c->cat, &k), VTL_E_INVAL);
	EXPECT_RC(catalog_copy_add(c->cat, NULL), VTL_E_INVAL);
	EXPECT_RC(catalog_copy_list(c->cat, "NOPE01L8", rec_co, r), VTL_E_NOTFOUND);
	EXPECT_RC(catalog_copy_list(c->cat, "V00001L8", NULL, r), VTL_E_INVAL);
	EXPECT_RC(catalog_copy_set_state(c->cat, second + 100, "valid"), VTL_E_NOTFOUND);
	EXPECT_RC(catalog_copy_set_state(c->cat, first, NULL), VTL_E_INVAL);
	EXPECT_RC(catalog_copy_set_state(c->cat, first, "much too long a state"), VTL_E_INVAL);
	EXPECT_RC(catalog_copy_verified(c->cat, second + 100, 1), VTL_E_NOTFOUND);

	/* Removing a cartridge removes its copies, not the others. */
	EXPECT_RC(catalog_cartridge_remove(c->cat, "V00001L8"), 0);
	EXPECT_RC(catalog_copy_list(c->cat, "V00001L8", rec_co, r), VTL_E_NOTFOUND);
	EXPECT_RC(catalog_copy_set_state(c->cat, first, "valid"), VTL_E_NOTFOUND);
	r->n = 0;
	EXPECT_RC(catalog_copy_list(c->cat, "V00002L8", rec_co, r), 0);
	assert_int_equal(r->n, 1);
	assert_check_ok(c->cat);
}

/* =================================================================== jobs */

static void test_jobs(void **state)
{
	struct cfx *c = *state;
	add_cart(c->cat, "J00001L8", c->lib.id, SLOT0);
	add_cart(c->cat, "J00002L8", c->lib.id, SLOT0 + 1);
	int64_t a = 0, b = 0, d = 0;
	EXPECT_RC(catalog_job_add(c->cat, CAT_JOB_MIGRATE, "J00001L8", &a), 0);
	EXPECT_RC(catalog_job_add(c->cat, CAT_JOB_RECALL, "J00002L8", &b), 0);
	EXPECT_RC(catalog_job_add(c->cat, CAT_JOB_VERIFY, "J00001L8", &d), 0);
	assert_true(a > 0 && b > a && d > b);

	struct cat_job j;
	memset(&j, 0xa5, sizeof(j));
	EXPECT_RC(catalog_job_get(c->cat, a, &j), 0);
	assert_int_equal(j.id, a);
	assert_int_equal(j.kind, CAT_JOB_MIGRATE);
	assert_string_equal(j.barcode, "J00001L8");
	assert_int_equal(j.state, CAT_JOB_QUEUED);
	assert_int_equal(j.bytes_done, 0);
	assert_int_equal(j.started, 0);
	assert_int_equal(j.finished, 0);
	assert_string_equal(j.error, "");

	int64_t t0 = (int64_t)time(NULL);
	EXPECT_RC(catalog_job_update(c->cat, a, CAT_JOB_RUNNING, 1000, NULL), 0);
	EXPECT_RC(catalog_job_get(c->cat, a, &j), 0);
	assert_int_equal(j.state, CAT_JOB_RUNNING);
	assert_int_equal(j.bytes_done, 1000);
	assert_true(j.started >= t0 && j.started <= (int64_t)time(NULL));
	assert_int_equal(j.finished, 0);
	int64_t started = j.started;
	EXPECT_RC(catalog_job_update(c->cat, a, CAT_JOB_RUNNING, 2000, NULL), 0);
	EXPECT_RC(catalog_job_update(c->cat, a, CAT_JOB_DONE, 3000, NULL), 0);
	EXPECT_RC(catalog_job_get(c->cat, a, &j), 0);
	assert_int_equal(j.state, CAT_JOB_DONE);
	assert_int_equal(j.bytes_done, 3000);
	assert_int_equal(j.started, started);
	assert_true(j.finished >= started && j.finished <= (int64_t)time(NULL));

	EXPECT_RC(catalog_job_update(c->cat, b, CAT_JOB_FAILED, 0, "tape P00001L9: medium error"), 0);
	EXPECT_RC(catalog_job_get(c->cat, b, &j), 0);
	assert_int_equal(j.state, CAT_JOB_FAILED);
	assert_string_equal(j.error, "tape P00001L9: medium error");
	assert_true(j.finished > 0);
	/* Requeued: times cleared, the error kept unless replaced. */
	EXPECT_RC(catalog_job_update(c->cat, b, CAT_JOB_QUEUED, 0, NULL), 0);
	EXPECT_RC(catalog_job_get(c->cat, b, &j), 0);
	assert_int_equal(j.state, CAT_JOB_QUEUED);
	assert_int_equal(j.started, 0);
	assert_int_equal(j.finished, 0);
	assert_string_equal(j.error, "tape P00001L9: medium error");
	EXPECT_RC(catalog_job_update(c->cat, b, CAT_JOB_QUEUED, 0, ""), 0);
	EXPECT_RC(catalog_job_get(c->cat, b, &j), 0);
	assert_string_equal(j.error, "");

	struct rec *r = new_rec();
	EXPECT_RC(catalog_job_list(c->cat, CAT_JOB_ANY, rec_jo, r), 0);
	assert_int_equal(r->n, 3);
	assert_int_equal(r->jo[0].id, a);
	assert_int_equal(r->jo[2].id, d);
	r->n = 0;
	EXPECT_RC(catalog_job_list(c->cat, CAT_JOB_QUEUED, rec_jo, r), 0);
	assert_int_equal(r->n, 2);
	assert_int_equal(r->jo[0].id, b);
	assert_int_equal(r->jo[1].id, d);
	assert_int_equal(r->jo[1].kind, CAT_JOB_VERIFY);
	r->n = 0;
	EXPECT_RC(catalog_job_list(c->cat, CAT_JOB_DONE, rec_jo, r), 0);
	assert_int_equal(r->n, 1);
	r->n = 0;
	EXPECT_RC(catalog_job_list(c->cat, CAT_JOB_RUNNING, rec_jo, r), 0);
	assert_int_equal(r->n, 0);
	r->stop_after = 1;
	r->stop_with = -2;
	EXPECT_RC(catalog_job_list(c->cat, CAT_JOB_ANY, rec_jo, r), -2);
	r->stop_after = 0;

	/* A job outlives its cartridge. */
	EXPECT_RC(catalog_cartridge_remove(c->cat, "J00001L8"), 0);
	EXPECT_RC(catalog_job_get(c->cat, d, &j), 0);
	assert_string_equal(j.barcode, "J00001L8");

	/* Errors. */
	int64_t x = 0;
	EXPECT_RC(catalog_job_add(c->cat, CAT_JOB_MIGRATE, "J00001L8", &x), VTL_E_NOTFOUND);
	EXPECT_RC(catalog_job_add(c->cat, (enum cat_job_kind)0, "J00002L8", &x), VTL_E_INVAL);
	EXPECT_RC(catalog_job_add(c->cat, (enum cat_job_kind)4, "J00002L8", &x), VTL_E_INVAL);
	EXPECT_RC(catalog_job_add(c->cat, CAT_JOB_MIGRATE, "J00002L8", NULL), VTL_E_INVAL);
	EXPECT_RC(catalog_job_add(c->cat, CAT_JOB_MIGRATE, NULL, &x), VTL_E_INVAL);
	EXPECT_RC(catalog_job_update(c->cat, d + 100, CAT_JOB_RUNNING, 0, NULL), VTL_E_NOTFOUND);
	EXPECT_RC(catalog_job_update(c->cat, d, CAT_JOB_ANY, 0, NULL), VTL_E_INVAL);
	EXPECT_RC(catalog_job_update(c->cat, d, (enum cat_job_state)5, 0, NULL), VTL_E_INVAL);
	char longerr[300];
	memset(longerr, 'e', sizeof(longerr) - 1);
	longerr[sizeof(longerr) - 1] = '\0';
	EXPECT_RC(catalog_job_update(c->cat, d, CAT_JOB_FAILED, 0, longerr), VTL_E_INVAL);
	EXPECT_RC(catalog_job_get(c->cat, d + 100, &j), VTL_E_NOTFOUND);
	EXPECT_RC(catalog_job_get(c->cat, d, NULL), VTL_E_INVAL);
	EXPECT_RC(catalog_job_list(c->cat, (enum cat_job_state)5, rec_jo, r), VTL_E_INVAL);
	EXPECT_RC(catalog_job_list(c->cat, CAT_JOB_ANY, NULL, r), VTL_E_INVAL);

	/* Options out of range are refused. */
	struct cat_job_opts o = {.drive = -2};
	EXPECT_RC(catalog_job_add_opts(c->cat, CAT_JOB_MIGRATE, "J00002L8", &o, &x), VTL_E_INVAL);
	o = (struct cat_job_opts){.drive = CAT_JOB_DRIVE_ANY, .rate = CAT_JOB_RATE_MAX + 1};
	EXPECT_RC(catalog_job_add_opts(c->cat, CAT_JOB_MIGRATE, "J00002L8", &o, &x), VTL_E_INVAL);
	EXPECT_RC(catalog_job_add_opts(c->cat, CAT_JOB_MIGRATE, "J00002L8", NULL, &x), VTL_E_INVAL);
	/* Defaults read back as the defaults. */
	EXPECT_RC(catalog_job_get(c->cat, b, &j), 0);
	assert_int_equal(j.opts.drive, CAT_JOB_DRIVE_ANY);
	assert_int_equal(j.opts.rate, 0);
	assert_false(j.opts.native);

	/* Ids only grow. */
	EXPECT_RC(catalog_job_add(c->cat, CAT_JOB_MIGRATE, "J00002L8", &x), 0);
	assert_true(x > d);

	/* A queued job goes to another library, kept with it; a job that left the queue does not move. */
	EXPECT_RC(catalog_job_set_library(c->cat, x, "vault"), 0);
	EXPECT_RC(catalog_job_get(c->cat, x, &j), 0);
	assert_string_equal(j.opts.library, "vault");
	assert_int_equal(j.state, CAT_JOB_QUEUED);
	EXPECT_RC(catalog_job_update(c->cat, x, CAT_JOB_RUNNING, 0, NULL), 0);
	EXPECT_RC(catalog_job_set_library(c->cat, x, "site"), VTL_E_NOTFOUND);
	EXPECT_RC(catalog_job_get(c->cat, x, &j), 0);
	assert_string_equal(j.opts.library, "vault");
	EXPECT_RC(catalog_job_set_library(c->cat, x + 100, "site"), VTL_E_NOTFOUND);
	EXPECT_RC(catalog_job_set_library(c->cat, x, NULL), VTL_E_INVAL);
	char longname[CAT_NAME_MAX + 2];
	memset(longname, 'n', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	EXPECT_RC(catalog_job_set_library(c->cat, x, longname), VTL_E_INVAL);
}

/* ================================================================== check */

static void test_check_and_errors_text(void **state)
{
	struct cfx *c = *state;
	add_cart(c->cat, "K00001L8", c->lib.id, SLOT0);
	EXPECT_RC(catalog_move(c->cat, c->lib.id, SLOT0, DRIVE0, "t"), 0);
	char err[256] = "x";
	EXPECT_RC(catalog_check(c->cat, err, sizeof(err)), 0);
	assert_string_equal(err, "");
	EXPECT_RC(catalog_check(c->cat, NULL, 0), 0);
	EXPECT_RC(catalog_check(NULL, err, sizeof(err)), VTL_E_INVAL);
	/* The check is read-only: it leaves no transaction open, so writes go on. */
	EXPECT_RC(catalog_move(c->cat, c->lib.id, DRIVE0, SLOT0, "t"), 0);

	EXPECT_RC(catalog_move(c->cat, c->lib.id, SLOT0 + 1, SLOT0 + 2, "t"), VTL_E_SRC_EMPTY);
	assert_non_null(strstr(catalog_last_error(c->cat), "1025"));
	EXPECT_RC(catalog_cartridge_get(c->cat, "NOPE01L8", &(struct cat_cartridge){0}), VTL_E_NOTFOUND);
	assert_non_null(strstr(catalog_last_error(c->cat), "NOPE01L8"));
	assert_string_equal(catalog_last_error(NULL), "");
	assert_int_equal(catalog_schema_version(NULL), VTL_E_INVAL);
}

/* ========================================================== concurrency */

/* The library the concurrency tests shuffle: 48 elements, 30 cartridges. */
#define CC_CARTS 30

static void cc_populate(struct cfx *c)
{
	for (int i = 0; i < CC_CARTS; i++) {
		char bc[32];
		snprintf(bc, sizeof(bc), "S%05dL8", i);
		add_cart(c->cat, bc, c->lib.id, (uint16_t)(SLOT0 + i));
	}
}

static uint16_t cc_addrs[1 + NSLOTS + NIES + NDRIVES];

static int cc_addr_fn(const struct cat_element *e, void *arg)
{
	int *n = arg;
	cc_addrs[(*n)++] = e->address;
	return 0;
}

struct cc_counts {
	int moves, ticks, mounts, refused, other;
};

/* Random moves (and events and usage updates) on cat; returns the counts. Never asserts: it runs in children. */
static void cc_work(struct vtl_catalog *cat, int64_t lib, int naddr, int iters, uint64_t seed, const char *actor,
		    struct cc_counts *k)
{
	memset(k, 0, sizeof(*k));
	uint64_t s = seed;
	for (int i = 0; i < iters; i++) {
		uint16_t from = cc_addrs[splitmix64(&s) % (uint64_t)naddr];
		uint16_t to = cc_addrs[splitmix64(&s) % (uint64_t)naddr];
		int rc = catalog_move(cat, lib, from, to, actor);
		if (rc == 0)
			k->moves++;
		else if (rc == VTL_E_SRC_EMPTY || rc == VTL_E_DST_FULL)
			k->refused++;
		else {
			fprintf(stderr, "%s: move %u -> %u: %d (%s): %s\n", actor, from, to, rc, es(rc),
				catalog_last_error(cat));
			k->other++;
		}
		if (i % 8 == 0) {
			rc = catalog_event(cat, actor, "tick");
			if (rc == 0)
				k->ticks++;
			else {
				fprintf(stderr, "%s: event: %d (%s): %s\n", actor, rc, es(rc), catalog_last_error(cat));
				k->other++;
			}
		}
		if (i % 16 == 0) {
			char bc[32];
			snprintf(bc, sizeof(bc), "S%05dL8", (int)(splitmix64(&s) % CC_CARTS));
			rc = catalog_cartridge_usage(cat, bc, (uint64_t)i, (uint64_t)i / 2, (uint64_t)i, true);
			if (rc == 0)
				k->mounts++;
			else {
				fprintf(stderr, "%s: usage: %d (%s): %s\n", actor, rc, es(rc), catalog_last_error(cat));
				k->other++;
			}
		}
		if (i % 32 == 0) { /* readers run alongside */
			struct cat_element e;
			rc = catalog_element_get(cat, lib, to, &e);
			if (rc != 0) {
				fprintf(stderr, "%s: element_get: %d (%s)\n", actor, rc, es(rc));
				k->other++;
			}
		}
	}
}

static char cc_last_actor[32];
static int cc_switches; /* how often the actor changed along the event log: the writers interleaved */

static int cc_event_fn(const struct cat_event *ev, void *arg)
{
	struct cc_counts *k = arg;
	if (strcmp(ev->actor, cc_last_actor) != 0) {
		cc_switches++;
		snprintf(cc_last_actor, sizeof(cc_last_actor), "%s", ev->actor);
	}
	if (strncmp(ev->what, "move ", 5) == 0)
		k->moves++;
	else if (strcmp(ev->what, "tick") == 0)
		k->ticks++;
	else
		k->other++;
	return 0;
}

/* The invariants after any number of moves: each cartridge in exactly one element that points back. */
static void cc_verify(struct cfx *c, const struct cc_counts *total, const char *who)
{
	int64_t lib = c->lib.id;
	assert_check_ok(c->cat);
	struct rec *r = new_rec();
	EXPECT_RC(catalog_element_list(c->cat, lib, CAT_ELEM_ALL, rec_el, r), 0);
	assert_int_equal(r->n, 1 + NSLOTS + NIES + NDRIVES);
	bool seen[CC_CARTS] = {false};
	int full = 0;
	for (int i = 0; i < r->n; i++) {
		const struct cat_element *e = &r->el[i];
		if (!e->full) {
			assert_string_equal(e->barcode, "");
			assert_int_equal(e->source, CAT_NO_ELEMENT);
			continue;
		}
		full++;
		int n = -1;
		assert_int_equal(sscanf(e->barcode, "S%05dL8", &n), 1);
		assert_true(n >= 0 && n < CC_CARTS);
		assert_false(seen[n]);
		seen[n] = true;
		struct cat_cartridge k = get_cart(c->cat, e->barcode);
		assert_int_equal(k.library_id, lib);
		assert_int_equal(k.element, e->address);
	}
	assert_int_equal(full, CC_CARTS);
	r->n = 0;
	EXPECT_RC(catalog_cartridge_list(c->cat, 0, rec_ca, r), 0);
	assert_int_equal(r->n, CC_CARTS);
	uint64_t mounts = 0;
	for (int i = 0; i < r->n; i++) {
		struct cat_element e = get_elem(c->cat, lib, r->ca[i].element);
		assert_true(e.full);
		assert_string_equal(e.barcode, r->ca[i].barcode);
		mounts += r->ca[i].mounts;
	}
	/* Every successful move logged exactly one event, in its own transaction. */
	struct cc_counts ev;
	memset(&ev, 0, sizeof(ev));
	cc_last_actor[0] = '\0';
	cc_switches = 0;
	EXPECT_RC(catalog_event_list(c->cat, 0, 0, cc_event_fn, &ev), 0);
	printf("   %s: the event log changes writer %d times\n", who, cc_switches);
	assert_int_equal(ev.moves, total->moves);
	assert_int_equal(ev.ticks, total->ticks);
	assert_int_equal(ev.other, 0);
	assert_int_equal(mounts, (uint64_t)total->mounts);
	assert_int_equal(total->other, 0);
	tfree(r);
}

#define CC_PROCS 4

static void test_concurrent_processes(void **state)
{
	struct cfx *c = *state;
	cc_populate(c);
	int naddr = 0;
	EXPECT_RC(catalog_element_list(c->cat, c->lib.id, CAT_ELEM_ALL, cc_addr_fn, &naddr), 0);
	assert_int_equal(naddr, 1 + NSLOTS + NIES + NDRIVES);
	int64_t lib = c->lib.id;
	int iters = (int)(1000 * g_scale);
	if (iters < 10)
		iters = 10;
	/* The parent's handle is not used across fork: close it, and reopen after. */
	catalog_close(c->cat);
	c->cat = NULL;

	int fds[2], go[2];
	assert_int_equal(pipe(fds), 0);
	assert_int_equal(pipe(go), 0);
	fflush(NULL);
	pid_t pids[CC_PROCS];
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int p = 0; p < CC_PROCS; p++) {
		pids[p] = fork();
		assert_true(pids[p] >= 0);
		if (pids[p] == 0) {
			/* Child: no cmocka here. */
			close(fds[0]);
			close(go[1]);
			alarm(120); /* never outlive a parent that failed half-way */
			char err[256] = "", actor[32];
			snprintf(actor, sizeof(actor), "proc%d", p);
			struct vtl_catalog *cat = NULL;
			int rc = catalog_open(c->path, false, &cat, err, sizeof(err));
			if (rc != 0) {
				fprintf(stderr, "%s: catalog_open: %d (%s): %s\n", actor, rc, es(rc), err);
				_exit(10);
			}
			char g;
			if (read(go[0], &g, 1) != 1) /* all start together */
				_exit(13);
			struct cc_counts k;
			cc_work(cat, lib, naddr, iters, g_seed + 1000003ull * (uint64_t)(p + 1), actor, &k);
			catalog_close(cat);
			if (write(fds[1], &k, sizeof(k)) != (ssize_t)sizeof(k))
				_exit(11);
			_exit(k.other ? 12 : 0);
		}
	}
	close(fds[1]);
	close(go[0]);
	assert_int_equal(write(go[1], "gggg", CC_PROCS), CC_PROCS);
	close(go[1]);
	struct cc_counts total;
	memset(&total, 0, sizeof(total));
	int got = 0;
	struct cc_counts k;
	while (read(fds[0], &k, sizeof(k)) == (ssize_t)sizeof(k)) {
		total.moves += k.moves;
		total.ticks += k.ticks;
		total.mounts += k.mounts;
		total.refused += k.refused;
		total.other += k.other;
		got++;
	}
	close(fds[0]);
	for (int p = 0; p < CC_PROCS; p++) {
		int st = 0;
		assert_int_equal(waitpid(pids[p], &st, 0), pids[p]);
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
			fail_msg("child %d: %s %d", p, WIFEXITED(st) ? "exit" : "signal",
				 WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	assert_int_equal(got, CC_PROCS);
	printf("   %d processes x %d iterations: %d moves, %d refused (empty/full), %d events, %.2f s\n", CC_PROCS,
	       iters, total.moves, total.refused, total.ticks,
	       (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
	assert_true(total.moves > 0);
	assert_int_equal(total.moves + total.refused, CC_PROCS * iters);

	c->cat = tl_cat_open(c->path, false);
	cc_verify(c, &total, "processes");
}

struct cc_thread {
	struct vtl_catalog *cat;
	int64_t lib;
	int naddr, iters;
	uint64_t seed;
	char actor[32];
	struct cc_counts k;
};

static void *cc_thread_main(void *arg)
{
	struct cc_thread *t = arg;
	cc_work(t->cat, t->lib, t->naddr, t->iters, t->seed, t->actor, &t->k);
	return NULL;
}

/* Threads sharing one handle, and a second handle in the same process. */
static void test_concurrent_threads(void **state)
{
	struct cfx *c = *state;
	cc_populate(c);
	int naddr = 0;
	EXPECT_RC(catalog_element_list(c->cat, c->lib.id, CAT_ELEM_ALL, cc_addr_fn, &naddr), 0);
	struct vtl_catalog *second = tl_cat_open(c->path, false);
	struct cc_thread t[4];
	pthread_t th[4];
	for (int i = 0; i < 4; i++) {
		memset(&t[i], 0, sizeof(t[i]));
		t[i].cat = i < 3 ? c->cat : second;
		t[i].lib = c->lib.id;
		t[i].naddr = naddr;
		t[i].iters = (int)(500 * g_scale) + 10;
		t[i].seed = g_seed * 31 + (uint64_t)i;
		snprintf(t[i].actor, sizeof(t[i].actor), "thread%d", i);
		assert_int_equal(pthread_create(&th[i], NULL, cc_thread_main, &t[i]), 0);
	}
	struct cc_counts total;
	memset(&total, 0, sizeof(total));
	for (int i = 0; i < 4; i++) {
		assert_int_equal(pthread_join(th[i], NULL), 0);
		total.moves += t[i].k.moves;
		total.ticks += t[i].k.ticks;
		total.mounts += t[i].k.mounts;
		total.other += t[i].k.other;
	}
	catalog_close(second);
	assert_true(total.moves > 0);
	cc_verify(c, &total, "threads");
}

#define ERR_ITERS 3000 /* failures per thread: enough for the two to interleave many times */

struct err_thread {
	struct vtl_catalog *cat;
	char tag;
	int mixed; /* failures whose text was not this thread's */
};

static void *err_thread_main(void *arg)
{
	struct err_thread *t = arg;
	for (int i = 0; i < ERR_ITERS; i++) {
		char name[32], want[64];
		snprintf(name, sizeof name, "lib%c-%d", t->tag, i);
		snprintf(want, sizeof want, "no library %s", name);
		struct cat_library l;
		if (catalog_library_get(t->cat, name, &l) != VTL_E_NOTFOUND || strcmp(catalog_last_error(t->cat), want))
			t->mixed++;
	}
	return NULL;
}

/* Two threads failing on one handle each read their own failure's text, never the other's. */
static void test_errors_per_thread(void **state)
{
	struct cfx *c = *state;
	struct cat_library l;
	assert_int_equal(catalog_library_get(c->cat, "mine", &l), VTL_E_NOTFOUND);
	struct err_thread t[2] = {{c->cat, 'A', 0}, {c->cat, 'B', 0}};
	pthread_t th[2];
	for (int i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&th[i], NULL, err_thread_main, &t[i]), 0);
	for (int i = 0; i < 2; i++)
		assert_int_equal(pthread_join(th[i], NULL), 0);
	assert_int_equal(t[0].mixed, 0);
	assert_int_equal(t[1].mixed, 0);
	/* This thread's last failure is still its own. */
	assert_string_equal(catalog_last_error(c->cat), "no library mine");
}

/* Several processes create (and upgrade) the same new catalog at once, each adding its own library. */
static void test_concurrent_create(void **state)
{
	struct cfx *c = *state;
	char path[TL_PATH_LEN + 32];
	snprintf(path, sizeof(path), "%.500s/fresh.db", c->fx->dir);
	int go[2];
	assert_int_equal(pipe(go), 0);
	fflush(NULL);
	pid_t pids[CC_PROCS];
	for (int p = 0; p < CC_PROCS; p++) {
		pids[p] = fork();
		assert_true(pids[p] >= 0);
		if (pids[p] == 0) {
			close(go[1]);
			alarm(60);
			char g, err[256] = "";
			if (read(go[0], &g, 1) != 1)
				_exit(20);
			struct vtl_catalog *cat = NULL;
			/* Half of them go through version 1 first. */
			int rc = p % 2 ? catalog_open_at_version(path, 1, &cat, err, sizeof(err))
				       : catalog_open(path, true, &cat, err, sizeof(err));
			if (rc != 0) {
				fprintf(stderr, "create %d: %d (%s): %s\n", p, rc, es(rc), err);
				_exit(21);
			}
			struct cat_library l;
			char name[32];
			snprintf(name, sizeof(name), "L%d", p);
			std_library(&l, name);
			rc = catalog_library_create(cat, &l);
			if (rc != 0) {
				fprintf(stderr, "create %d: library: %d (%s): %s\n", p, rc, es(rc), catalog_last_error(cat));
				_exit(22);
			}
			catalog_close(cat);
			_exit(0);
		}
	}
	close(go[0]);
	assert_int_equal(write(go[1], "gggg", CC_PROCS), CC_PROCS);
	close(go[1]);
	for (int p = 0; p < CC_PROCS; p++) {
		int st = 0;
		assert_int_equal(waitpid(pids[p], &st, 0), pids[p]);
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
			fail_msg("child %d: %s %d", p, WIFEXITED(st) ? "exit" : "signal",
				 WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
	}
	struct vtl_catalog *cat = tl_cat_open(path, false);
	assert_int_equal(catalog_schema_version(cat), CAT_SCHEMA_VERSION);
	for (int p = 0; p < CC_PROCS; p++) {
		char name[32];
		snprintf(name, sizeof(name), "L%d", p);
		struct cat_library l;
		EXPECT_RC(catalog_library_get(cat, name, &l), 0);
		assert_int_equal(l.slots, NSLOTS);
	}
	assert_check_ok(cat);
	catalog_close(cat);
}

int main(void)
{
	g_seed = tl_env_seed();
	g_scale = tl_env_scale();
	printf("test_catalog: seed %" PRIu64 " (VTL_TEST_SEED=%" PRIu64 " repeats the random choices)\n", g_seed,
	       g_seed);
	fflush(stdout);
	signal(SIGPIPE, SIG_IGN);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_open_create_and_reopen, setup_lib, teardown),
		cmocka_unit_test_setup_teardown(test_open_errors, setup_empty, teardown),
		cmocka_unit_test_setup_teardown(test_open_newer_schema, setup_lib, teardown),
		cmocka_unit_test_setup_teardown(test_upgrade_from_v1, setup_empty, teardown),
		cmocka_unit_test_setup_teardown(test_library_create_and_get, setup_empty, teardown),
		cmocka_unit_test_setup_teardown(test_library_create_errors, setup_lib, teardown),
		cmocka_unit_test_setup_teardown(test_elements, setup_lib, teardown),
		cmocka_unit_test_setup_teardown(test_drives, setup_lib, teardown),
		cmocka_unit_test_setup_teardown(test_cartridge_add_get, setup_lib, teardown),
		cmocka_unit_test_setup_teardown(test_cartridge_add_errors, setup_lib, teardown),
		cmocka_unit_test_setup_teardown(test_cartridge_list, setup_lib, teardown),
		cmocka_unit_test_setup_teardown(test_cartridge_usage_and_cache, setup_lib, teardown),
		cmocka_unit_test_setup_teardown(test_cartridge_remove, setup_lib, teardown),
		cmocka_unit_test_setup_teardown(test_move, setup_lib, teardown),
		cmocka_unit_test_setup_teardown(test_cartridge_place, setup_lib, teardown),
		cmocka_unit_test_setup_teardown(test_move_errors, setup_lib, teardown),
		cmocka_unit_test_setup_teardown(test_mam, setup_lib, teardown),
		cmocka_unit_test_setup_teardown(test_mam_list_delete, setup_lib, teardown),
		cmocka_unit_test_setup_teardown(test_events, setup_empty, teardown),
		cmocka_unit_test_setup_teardown(test_ptapes, setup_empty, teardown),
		cmocka_unit_test_setup_teardown(test_copies, setup_lib, teardown),
		cmocka_unit_test_setup_teardown(test_copy_commit, setup_lib, teardown),
		cmocka_unit_test_setup_teardown(test_jobs, setup_lib, teardown),
		cmocka_unit_test_setup_teardown(test_cartridge_modified, setup_lib, teardown),
		cmocka_unit_test_setup_teardown(test_ptape_pools, setup_lib, teardown),
		cmocka_unit_test_setup_teardown(test_upgrade_from_v3_pools, setup_lib, teardown),
		cmocka_unit_test_setup_teardown(test_upgrade_from_v4_block_size, setup_lib, teardown),
		cmocka_unit_test_setup_teardown(test_upgrade_from_v5_job_opts, setup_lib, teardown),
		cmocka_unit_test_setup_teardown(test_check_and_errors_text, setup_lib, teardown),
		cmocka_unit_test_setup_teardown(test_concurrent_processes, setup_lib, teardown),
		cmocka_unit_test_setup_teardown(test_concurrent_threads, setup_lib, teardown),
		cmocka_unit_test_setup_teardown(test_errors_per_thread, setup_lib, teardown),
		cmocka_unit_test_setup_teardown(test_concurrent_create, setup_empty, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
