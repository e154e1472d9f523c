/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The emulated library in the catalog: libraries and their elements,
 * drives, cartridges, moves between elements, MAM attributes and the event
 * log. The contracts are in catalog.h; the conventions in cat_internal.h.
 */
#include "catalog/cat_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/vtl_error.h"

#define FIELD_OK(s, field, nonempty) cat_str_ok((s), sizeof(field), (nonempty))
#define BARCODE_OK(s) cat_str_ok((s), CAT_BARCODE_MAX + 1, true)

static int64_t now(void)
{
	return (int64_t)time(NULL);
}

static int library_exists(struct vtl_catalog *cat, int64_t id)
{
	sqlite3_stmt *st;
	int rc = cat_row(cat, "SELECT 1 FROM library WHERE id = ?1", &st, "I", id);
	if (rc == 0)
		sqlite3_reset(st);
	else if (rc == VTL_E_NOTFOUND)
		cat_fail(cat, rc, "no library %lld", (long long)id);
	return rc;
}

/* ----------------------------------------------------------------- library */

struct range {
	unsigned first, count;
	enum cat_elem_type type;
	const char *what;
};

static int library_check(struct vtl_catalog *cat, const struct cat_library *l, struct range r[4])
{
	if (!FIELD_OK(l->name, l->name, true) || !FIELD_OK(l->vendor, l->vendor, false) ||
	    !FIELD_OK(l->product, l->product, false) || !FIELD_OK(l->revision, l->revision, false) ||
	    !FIELD_OK(l->serial, l->serial, false))
		return cat_fail(cat, VTL_E_INVAL, "library: a name or identity string is empty or too long");
	r[0] = (struct range){l->transport_first, l->transports, CAT_ELEM_TRANSPORT, "transport"};
	r[1] = (struct range){l->slot_first, l->slots, CAT_ELEM_SLOT, "slot"};
	r[2] = (struct range){l->ie_first, l->ies, CAT_ELEM_IE, "import/export"};
	r[3] = (struct range){l->drive_first, l->drives, CAT_ELEM_DRIVE, "drive"};
	if (l->transports < 1)
		return cat_fail(cat, VTL_E_INVAL, "library %s: no medium transport", l->name);
	for (int i = 0; i < 4; i++) {
		if (r[i].count && r[i].first + r[i].count - 1 > 0xFFFEu)
			return cat_fail(cat, VTL_E_INVAL, "library %s: %s addresses end past 0xFFFE", l->name,
					r[i].what);
		for (int j = 0; j < i; j++)
			if (r[i].count && r[j].count && r[i].first < r[j].first + r[j].count &&
			    r[j].first < r[i].first + r[i].count)
				return cat_fail(cat, VTL_E_INVAL, "library %s: %s and %s addresses overlap", l->name,
						r[j].what, r[i].what);
	}
	return 0;
}

static int library_create_locked(struct vtl_catalog *cat, const struct cat_library *l, const struct range r[4],
				 int64_t *id)
{
	int rc = cat_exec(cat,
			  "INSERT INTO library (name, vendor, product, revision, serial, transport_first, transports,"
			  " slot_first, slots, ie_first, ies, drive_first, drives)"
			  " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
			  "tttttiiiiiiii", l->name, l->vendor, l->product, l->revision, l->serial, r[0].first,
			  r[0].count, r[1].first, r[1].count, r[2].first, r[2].count, r[3].first, r[3].count);
	if (rc == VTL_E_EXISTS)
		return cat_fail(cat, rc, "a library named %s exists", l->name);
	if (rc)
		return rc;
	*id = sqlite3_last_insert_rowid(cat->db);
	for (int i = 0; i < 4; i++)
		for (unsigned a = r[i].first; a < r[i].first + r[i].count; a++) {
			rc = cat_exec(cat, "INSERT INTO element (library_id, address, type) VALUES (?1, ?2, ?3)",
				      "Iii", *id, (int)a, (int)r[i].type);
			if (rc)
				return rc;
		}
	return 0;
}

int catalog_library_create(struct vtl_catalog *cat, struct cat_library *lib)
{
	if (!cat || !lib)
		return VTL_E_INVAL;
	struct range r[4];
	cat_lock(cat);
	int rc = library_check(cat, lib, r);
	if (rc)
		return cat_unlock(cat, rc);
	int64_t id = 0;
	rc = cat_begin(cat);
	if (rc == 0)
		rc = cat_end(cat, library_create_locked(cat, lib, r, &id));
	if (rc == 0)
		lib->id = id;
	return cat_unlock(cat, rc);
}

#define LIBRARY_COLS                                                                                      \
	"id, name, vendor, product, revision, serial, transport_first, transports, slot_first, slots, ie_first," \
	" ies, drive_first, drives"

static void library_read(sqlite3_stmt *st, struct cat_library *o)
{
	memset(o, 0, sizeof(*o));
	o->id = sqlite3_column_int64(st, 0);
	cat_col_text(st, 1, o->name, sizeof(o->name));
	cat_col_text(st, 2, o->vendor, sizeof(o->vendor));
	cat_col_text(st, 3, o->product, sizeof(o->product));
	cat_col_text(st, 4, o->revision, sizeof(o->revision));
	cat_col_text(st, 5, o->serial, sizeof(o->serial));
	o->transport_first = (uint16_t)sqlite3_column_int(st, 6);
	o->transports = (uint16_t)sqlite3_column_int(st, 7);
	o->slot_first = (uint16_t)sqlite3_column_int(st, 8);
	o->slots = (uint16_t)sqlite3_column_int(st, 9);
	o->ie_first = (uint16_t)sqlite3_column_int(st, 10);
	o->ies = (uint16_t)sqlite3_column_int(st, 11);
	o->drive_first = (uint16_t)sqlite3_column_int(st, 12);
	o->drives = (uint16_t)sqlite3_column_int(st, 13);
}

static int library_get_locked(struct vtl_catalog *cat, const char *name, struct cat_library *out)
{
	sqlite3_stmt *st;
	int rc;
	if (name) {
		rc = cat_row(cat, "SELECT " LIBRARY_COLS " FROM library WHERE name = ?1", &st, "t", name);
		if (rc == VTL_E_NOTFOUND)
			return cat_fail(cat, rc, "no library %s", name);
		if (rc)
			return rc;
		library_read(st, out);
		sqlite3_reset(st);
		return 0;
	}
	rc = cat_row(cat, "SELECT " LIBRARY_COLS " FROM library ORDER BY id LIMIT 2", &st, "");
	if (rc == VTL_E_NOTFOUND)
		return cat_fail(cat, rc, "no library");
	if (rc)
		return rc;
	library_read(st, out);
	rc = cat_step(cat, st);
	if (rc == 1) {
		sqlite3_reset(st);
		return cat_fail(cat, VTL_E_INVAL, "several libraries: name one");
	}
	return rc;
}

int catalog_library_get(struct vtl_catalog *cat, const char *name, struct cat_library *out)
{
	if (!cat || !out)
		return VTL_E_INVAL;
	cat_lock(cat);
	if (name && !cat_str_ok(name, CAT_NAME_MAX + 1, true))
		return cat_unlock(cat, cat_fail(cat, VTL_E_INVAL, "library name empty or too long"));
	struct cat_library l;
	int rc = library_get_locked(cat, name, &l);
	if (rc == 0)
		*out = l;
	return cat_unlock(cat, rc);
}

/* ---------------------------------------------------------------- elements */

#define ELEMENT_SELECT                                                                                  \
	"SELECT e.library_id, e.address, e.type, c.barcode, e.source FROM element e"                      \
	" LEFT JOIN cartridge c ON c.id = e.cartridge_id"

static void element_read(sqlite3_stmt *st, struct cat_element *o)
{
	memset(o, 0, sizeof(*o));
	o->library_id = sqlite3_column_int64(st, 0);
	o->address = (uint16_t)sqlite3_column_int(st, 1);
	o->type = (enum cat_elem_type)sqlite3_column_int(st, 2);
	o->full = sqlite3_column_type(st, 3) != SQLITE_NULL;
	cat_col_text(st, 3, o->barcode, sizeof(o->barcode));
	o->source = sqlite3_column_type(st, 4) == SQLITE_NULL ? CAT_NO_ELEMENT : (uint16_t)sqlite3_column_int(st, 4);
}

int catalog_element_get(struct vtl_catalog *cat, int64_t library_id, uint16_t address, struct cat_element *out)
{
	if (!cat || !out)
		return VTL_E_INVAL;
	cat_lock(cat);
	sqlite3_stmt *st;
	int rc = cat_row(cat, ELEMENT_SELECT " WHERE e.library_id = ?1 AND e.address = ?2", &st, "Ii", library_id,
			 (int)address);
	if (rc == 0) {
		element_read(st, out);
		sqlite3_reset(st);
	} else if (rc == VTL_E_NOTFOUND) {
		cat_fail(cat, rc, "library %lld has no element %u", (long long)library_id, address);
	}
	return cat_unlock(cat, rc);
}

int catalog_element_list(struct vtl_catalog *cat, int64_t library_id, enum cat_elem_type type,
			 int (*fn)(const struct cat_element *e, void *arg), void *arg)
{
	if (!cat || !fn || (int)type < CAT_ELEM_ALL || type > CAT_ELEM_DRIVE)
		return VTL_E_INVAL;
	struct cat_element *arr = NULL;
	size_t n = 0, cap = 0;
	cat_lock(cat);
	int rc = library_exists(cat, library_id);
	sqlite3_stmt *st;
	if (rc == 0)
		rc = cat_query(cat, ELEMENT_SELECT " WHERE e.library_id = ?1 AND (?2 = 0 OR e.type = ?2)"
				    " ORDER BY e.address",
			       &st, "Ii", library_id, (int)type);
	while (rc == 0 && (rc = cat_step(cat, st)) == 1) {
		rc = vtl_grow((void **)&arr, &cap, n, sizeof(*arr));
		if (rc == 0)
			element_read(st, &arr[n++]);
	}
	rc = cat_unlock(cat, rc);
	if (rc == 0)
		CAT_WALK(rc, arr, n, fn, arg);
	free(arr);
	return rc;
}

/* ------------------------------------------------------------------ drives */

static int drive_set_locked(struct vtl_catalog *cat, const struct cat_drive *d)
{
	sqlite3_stmt *st;
	int rc = cat_row(cat, "SELECT type FROM element WHERE library_id = ?1 AND address = ?2", &st, "Ii",
			 d->library_id, (int)d->address);
	if (rc == VTL_E_NOTFOUND)
		return cat_fail(cat, rc, "library %lld has no element %u", (long long)d->library_id, d->address);
	if (rc)
		return rc;
	int type = sqlite3_column_int(st, 0);
	sqlite3_reset(st);
	if (type != CAT_ELEM_DRIVE)
		return cat_fail(cat, VTL_E_INVAL, "element %u is not a data transfer element", d->address);
	return cat_exec(cat,
			"INSERT INTO drive (library_id, address, vendor, model, revision, serial, lun, state)"
			" VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)"
			" ON CONFLICT (library_id, address) DO UPDATE SET vendor = excluded.vendor,"
			" model = excluded.model, revision = excluded.revision, serial = excluded.serial,"
			" lun = excluded.lun, state = excluded.state",
			"Iittttit", d->library_id, (int)d->address, d->vendor, d->model, d->revision, d->serial,
			d->lun, d->state);
}

int catalog_drive_set(struct vtl_catalog *cat, const struct cat_drive *d)
{
	if (!cat || !d)
		return VTL_E_INVAL;
	cat_lock(cat);
	if (!FIELD_OK(d->vendor, d->vendor, false) || !FIELD_OK(d->model, d->model, false) ||
	    !FIELD_OK(d->revision, d->revision, false) || !FIELD_OK(d->serial, d->serial, false) ||
	    !FIELD_OK(d->state, d->state, false))
		return cat_unlock(cat, cat_fail(cat, VTL_E_INVAL, "drive: a string is too long"));
	int rc = cat_begin(cat);
	if (rc == 0)
		rc = cat_end(cat, drive_set_locked(cat, d));
	return cat_unlock(cat, rc);
}

static void drive_read(sqlite3_stmt *st, struct cat_drive *o)
{
	memset(o, 0, sizeof(*o));
	o->library_id = sqlite3_column_int64(st, 0);
	o->address = (uint16_t)sqlite3_column_int(st, 1);
	cat_col_text(st, 2, o->vendor, sizeof(o->vendor));
	cat_col_text(st, 3, o->model, sizeof(o->model));
	cat_col_text(st, 4, o->revision, sizeof(o->revision));
	cat_col_text(st, 5, o->serial, sizeof(o->serial));
	o->lun = sqlite3_column_int(st, 6);
	cat_col_text(st, 7, o->state, sizeof(o->state));
}

int catalog_drive_list(struct vtl_catalog *cat, int64_t library_id, int (*fn)(const struct cat_drive *d, void *arg),
		       void *arg)
{
	if (!cat || !fn)
		return VTL_E_INVAL;
	struct cat_drive *arr = NULL;
	size_t n = 0, cap = 0;
	cat_lock(cat);
	int rc = library_exists(cat, library_id);
	sqlite3_stmt *st;
	if (rc == 0)
		rc = cat_query(cat,
			       "SELECT library_id, address, vendor, model, revision, serial, lun, state FROM drive"
			       " WHERE library_id = ?1 ORDER BY address",
			       &st, "I", library_id);
	while (rc == 0 && (rc = cat_step(cat, st)) == 1) {
		rc = vtl_grow((void **)&arr, &cap, n, sizeof(*arr));
		if (rc == 0)
			drive_read(st, &arr[n++]);
	}
	rc = cat_unlock(cat, rc);
	if (rc == 0)
		CAT_WALK(rc, arr, n, fn, arg);
	free(arr);
	return rc;
}

/* -------------------------------------------------------------- cartridges */

static bool media_ok(int m)
{
	return (m >= CAT_MEDIA_LTO5 && m <= CAT_MEDIA_LTO10) || (m >= CAT_MEDIA_LTO5W && m <= CAT_MEDIA_LTO9W) ||
	       m == CAT_MEDIA_CLEANING;
}

static bool cache_ok(int c)
{
	return c >= CAT_CACHE_RESIDENT && c <= CAT_CACHE_RECALLING;
}

/* The cartridge id in element (library_id, address), 0 if it is empty; VTL_E_NOTFOUND if there is no such element. */
static int element_holder(struct vtl_catalog *cat, int64_t library_id, unsigned address, int64_t *holder)
{
	sqlite3_stmt *st;
	int rc = cat_row(cat, "SELECT cartridge_id FROM element WHERE library_id = ?1 AND address = ?2", &st,
			 "Ii", library_id, (int)address);
	if (rc == VTL_E_NOTFOUND)
		return cat_fail(cat, rc, "library %lld has no element %u", (long long)library_id, address);
	if (rc)
		return rc;
	*holder = sqlite3_column_int64(st, 0); /* NULL reads as 0; cartridge ids start at 1 */
	sqlite3_reset(st);
	return 0;
}

static int cartridge_add_locked(struct vtl_catalog *cat, const struct cat_cartridge *c)
{
	int rc;
	if (c->library_id && (rc = library_exists(cat, c->library_id)) != 0)
		return rc;
	if (c->element != CAT_NO_ELEMENT) {
		int64_t holder;
		rc = element_holder(cat, c->library_id, c->element, &holder);
		if (rc)
			return rc;
		if (holder)
			return cat_fail(cat, VTL_E_DST_FULL, "element %u is full", c->element);
	}
	rc = cat_exec(cat,
		      "INSERT INTO cartridge (barcode, media, capacity, write_protect, state, library_id, element,"
		      " bytes_written, bytes_stored, eod, mounts, last_mounted, cache)"
		      " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
		      "tiUitLeUUUIIi", c->barcode, (int)c->media, c->capacity, c->write_protect ? 1 : 0, c->state,
		      c->library_id, (int)c->element, c->bytes_written, c->bytes_stored, c->eod, (int64_t)c->mounts,
		      c->last_mounted, (int)c->cache);
	if (rc == VTL_E_EXISTS)
		return cat_fail(cat, rc, "a cartridge %s exists", c->barcode);
	if (rc || c->element == CAT_NO_ELEMENT)
		return rc;
	return cat_exec(cat, "UPDATE element SET cartridge_id = ?3, source = NULL WHERE library_id = ?1 AND address = ?2",
			"IiI", c->library_id, (int)c->element, (int64_t)sqlite3_last_insert_rowid(cat->db));
}

int catalog_cartridge_add(struct vtl_catalog *cat, const struct cat_cartridge *c)
{
	if (!cat || !c)
		return VTL_E_INVAL;
	cat_lock(cat);
	if (!FIELD_OK(c->barcode, c->barcode, true) || !FIELD_OK(c->state, c->state, false))
		return cat_unlock(cat, cat_fail(cat, VTL_E_INVAL, "cartridge: barcode empty or a string too long"));
	if (!media_ok((int)c->media) || !cache_ok((int)c->cache))
		return cat_unlock(cat, cat_fail(cat, VTL_E_INVAL, "cartridge %s: media %d or cache state %d unknown",
						c->barcode, (int)c->media, (int)c->cache));
	if (c->element != CAT_NO_ELEMENT && !c->library_id)
		return cat_unlock(cat, cat_fail(cat, VTL_E_INVAL, "cartridge %s: an element but no library", c->barcode));
	int rc = cat_begin(cat);
	if (rc == 0)
		rc = cat_end(cat, cartridge_add_locked(cat, c));
	return cat_unlock(cat, rc);
}

#define CARTRIDGE_COLS                                                                                          \
	"barcode, media, capacity, write_protect, state, library_id, element, bytes_written, bytes_stored, eod," \
	" mounts, last_mounted, cache"

static void cartridge_read(sqlite3_stmt *st, struct cat_cartridge *o)
{
	memset(o, 0, sizeof(*o));
	cat_col_text(st, 0, o->barcode, sizeof(o->barcode));
	o->media = (enum cat_media)sqlite3_column_int(st, 1);
	o->capacity = (uint64_t)sqlite3_column_int64(st, 2);
	o->write_protect = sqlite3_column_int(st, 3) != 0;
	cat_col_text(st, 4, o->state, sizeof(o->state));
	o->library_id = sqlite3_column_int64(st, 5);
	o->element = sqlite3_column_type(st, 6) == SQLITE_NULL ? CAT_NO_ELEMENT : (uint16_t)sqlite3_column_int(st, 6);
	o->bytes_written = (uint64_t)sqlite3_column_int64(st, 7);
	o->bytes_stored = (uint64_t)sqlite3_column_int64(st, 8);
	o->eod = (uint64_t)sqlite3_column_int64(st, 9);
	o->mounts = (uint32_t)sqlite3_column_int64(st, 10);
	o->last_mounted = sqlite3_column_int64(st, 11);
	o->cache = (enum cat_cache_state)sqlite3_column_int(st, 12);
}

int catalog_cartridge_get(struct vtl_catalog *cat, const char *barcode, struct cat_cartridge *out)
{
	if (!cat || !out)
		return VTL_E_INVAL;
	cat_lock(cat);
	if (!BARCODE_OK(barcode))
		return cat_unlock(cat, cat_fail(cat, VTL_E_INVAL, "barcode empty or too long"));
	sqlite3_stmt *st;
	int rc = cat_row(cat, "SELECT " CARTRIDGE_COLS " FROM cartridge WHERE barcode = ?1", &st, "t", barcode);
	if (rc == 0) {
		cartridge_read(st, out);
		sqlite3_reset(st);
	} else if (rc == VTL_E_NOTFOUND) {
		cat_fail(cat, rc, "no cartridge %s", barcode);
	}
	return cat_unlock(cat, rc);
}

int catalog_cartridge_list(struct vtl_catalog *cat, int64_t library_id,
			   int (*fn)(const struct cat_cartridge *c, void *arg), void *arg)
{
	if (!cat || !fn)
		return VTL_E_INVAL;
	struct cat_cartridge *arr = NULL;
	size_t n = 0, cap = 0;
	cat_lock(cat);
	int rc = library_id ? library_exists(cat, library_id) : 0;
	sqlite3_stmt *st;
	if (rc == 0)
		rc = cat_query(cat,
			       "SELECT " CARTRIDGE_COLS " FROM cartridge WHERE ?1 IS NULL OR library_id = ?1"
			       " ORDER BY barcode",
			       &st, "L", library_id);
	while (rc == 0 && (rc = cat_step(cat, st)) == 1) {
		rc = vtl_grow((void **)&arr, &cap, n, sizeof(*arr));
		if (rc == 0)
			cartridge_read(st, &arr[n++]);
	}
	rc = cat_unlock(cat, rc);
	if (rc == 0)
		CAT_WALK(rc, arr, n, fn, arg);
	free(arr);
	return rc;
}

/* Runs a one-statement update of the cartridge barcode (?1); VTL_E_NOTFOUND if it changed nothing. */
static int cartridge_update(struct vtl_catalog *cat, const char *barcode, int rc)
{
	if (rc == 0 && cat_changes(cat) == 0)
		rc = cat_fail(cat, VTL_E_NOTFOUND, "no cartridge %s", barcode);
	return cat_unlock(cat, rc);
}

int catalog_cartridge_usage(struct vtl_catalog *cat, const char *barcode, uint64_t bytes_written,
			    uint64_t bytes_stored, uint64_t eod, bool mounted)
{
	if (!cat)
		return VTL_E_INVAL;
	cat_lock(cat);
	if (!BARCODE_OK(barcode))
		return cat_unlock(cat, cat_fail(cat, VTL_E_INVAL, "barcode empty or too long"));
	int rc = cat_exec(cat,
			  "UPDATE cartridge SET bytes_written = ?2, bytes_stored = ?3, eod = ?4, mounts = mounts + ?5,"
			  " last_mounted = CASE WHEN ?5 THEN ?6 ELSE last_mounted END WHERE barcode = ?1",
			  "tUUUiI", barcode, bytes_written, bytes_stored, eod, mounted ? 1 : 0, now());
	return cartridge_update(cat, barcode, rc);
}

int catalog_cartridge_set_cache(struct vtl_catalog *cat, const char *barcode, enum cat_cache_state st)
{
	if (!cat)
		return VTL_E_INVAL;
	cat_lock(cat);
	if (!BARCODE_OK(barcode) || !cache_ok((int)st))
		return cat_unlock(cat, cat_fail(cat, VTL_E_INVAL, "bad barcode or cache state %d", (int)st));
	int rc = cat_exec(cat, "UPDATE cartridge SET cache = ?2 WHERE barcode = ?1", "ti", barcode, (int)st);
	return cartridge_update(cat, barcode, rc);
}

int catalog_cartridge_set_state(struct vtl_catalog *cat, const char *barcode, const char *state)
{
	if (!cat)
		return VTL_E_INVAL;
	cat_lock(cat);
	if (!BARCODE_OK(barcode) || !cat_str_ok(state, sizeof(((struct cat_cartridge *)0)->state), false))
		return cat_unlock(cat, cat_fail(cat, VTL_E_INVAL, "bad barcode or state"));
	int rc = cat_exec(cat, "UPDATE cartridge SET state = ?2 WHERE barcode = ?1", "tt", barcode, state);
	return cartridge_update(cat, barcode, rc);
}

static int cartridge_remove_locked(struct vtl_catalog *cat, const char *barcode)
{
	sqlite3_stmt *st;
	int rc = cat_row(cat, "SELECT id FROM cartridge WHERE barcode = ?1", &st, "t", barcode);
	if (rc == VTL_E_NOTFOUND)
		return cat_fail(cat, rc, "no cartridge %s", barcode);
	if (rc)
		return rc;
	int64_t id = sqlite3_column_int64(st, 0);
	sqlite3_reset(st);
	rc = cat_exec(cat, "UPDATE element SET cartridge_id = NULL, source = NULL WHERE cartridge_id = ?1", "I", id);
	if (rc == 0) /* MAM attributes and copies go by ON DELETE CASCADE */
		rc = cat_exec(cat, "DELETE FROM cartridge WHERE id = ?1", "I", id);
	return rc;
}

int catalog_cartridge_remove(struct vtl_catalog *cat, const char *barcode)
{
	if (!cat)
		return VTL_E_INVAL;
	cat_lock(cat);
	if (!BARCODE_OK(barcode))
		return cat_unlock(cat, cat_fail(cat, VTL_E_INVAL, "barcode empty or too long"));
	int rc = cat_begin(cat);
	if (rc == 0)
		rc = cat_end(cat, cartridge_remove_locked(cat, barcode));
	return cat_unlock(cat, rc);
}

/* -------------------------------------------------------------------- move */

static int event_add(struct vtl_catalog *cat, const char *actor, const char *what)
{
	return cat_exec(cat, "INSERT INTO event (time, actor, what) VALUES (?1, ?2, ?3)", "Itt", now(), actor, what);
}

static int move_locked(struct vtl_catalog *cat, int64_t library_id, uint16_t from, uint16_t to, const char *actor)
{
	int64_t src, dst;
	int rc = element_holder(cat, library_id, from, &src);
	if (rc == 0)
		rc = element_holder(cat, library_id, to, &dst);
	if (rc)
		return rc;
	if (!src)
		return cat_fail(cat, VTL_E_SRC_EMPTY, "element %u is empty", from);
	if (dst)
		return cat_fail(cat, VTL_E_DST_FULL, "element %u is full", to);
	sqlite3_stmt *st;
	rc = cat_row(cat, "SELECT barcode FROM cartridge WHERE id = ?1", &st, "I", src);
	if (rc)
		return rc;
	char bc[CAT_BARCODE_MAX + 1];
	cat_col_text(st, 0, bc, sizeof(bc));
	sqlite3_reset(st);
	/* Empty the source first: a cartridge is in at most one element (UNIQUE cartridge_id). */
	rc = cat_exec(cat, "UPDATE element SET cartridge_id = NULL, source = NULL WHERE library_id = ?1 AND address = ?2",
		      "Ii", library_id, (int)from);
	if (rc == 0)
		rc = cat_exec(cat,
			      "UPDATE element SET cartridge_id = ?3, source = ?4 WHERE library_id = ?1 AND address = ?2",
			      "IiIi", library_id, (int)to, src, (int)from);
	if (rc == 0)
		rc = cat_exec(cat, "UPDATE cartridge SET element = ?2 WHERE id = ?1", "Ii", src, (int)to);
	if (rc == 0) {
		char what[128];
		snprintf(what, sizeof(what), "move %s from %u to %u", bc, from, to);
		rc = event_add(cat, actor, what);
	}
	return rc;
}

static int exchange_locked(struct vtl_catalog *cat, int64_t library_id, uint16_t src, uint16_t dst1, uint16_t dst2,
			   const char *actor)
{
	if (dst1 == src || dst1 == dst2)
		return cat_fail(cat, VTL_E_INVAL, "exchange: the first destination %u must differ from %u and %u", dst1, src,
				dst2);
	int64_t a, b, c;
	int rc = element_holder(cat, library_id, src, &a);
	if (rc == 0)
		rc = element_holder(cat, library_id, dst1, &b);
	if (rc == 0)
		rc = element_holder(cat, library_id, dst2, &c);
	if (rc)
		return rc;
	if (!a || !b)
		return cat_fail(cat, VTL_E_SRC_EMPTY, "element %u is empty", a ? dst1 : src);
	if (c && dst2 != src)
		return cat_fail(cat, VTL_E_DST_FULL, "element %u is full", dst2);
	char bca[CAT_BARCODE_MAX + 1], bcb[CAT_BARCODE_MAX + 1];
	sqlite3_stmt *st;
	if ((rc = cat_row(cat, "SELECT barcode FROM cartridge WHERE id = ?1", &st, "I", a)))
		return rc;
	cat_col_text(st, 0, bca, sizeof(bca));
	sqlite3_reset(st);
	if ((rc = cat_row(cat, "SELECT barcode FROM cartridge WHERE id = ?1", &st, "I", b)))
		return rc;
	cat_col_text(st, 0, bcb, sizeof(bcb));
	sqlite3_reset(st);
	/* Both out first, then both in: a cartridge is in at most one element (UNIQUE cartridge_id). */
	rc = cat_exec(cat,
		      "UPDATE element SET cartridge_id = NULL, source = NULL"
		      " WHERE library_id = ?1 AND address IN (?2, ?3)",
		      "Iii", library_id, (int)src, (int)dst1);
	if (rc == 0)
		rc = cat_exec(cat,
			      "UPDATE element SET cartridge_id = ?3, source = ?4 WHERE library_id = ?1 AND address = ?2",
			      "IiIi", library_id, (int)dst1, a, (int)src);
	if (rc == 0)
		rc = cat_exec(cat,
			      "UPDATE element SET cartridge_id = ?3, source = ?4 WHERE library_id = ?1 AND address = ?2",
			      "IiIi", library_id, (int)dst2, b, (int)dst1);
	/* Likewise a cartridge row names at most one element (UNIQUE library_id, element). */
	if (rc == 0)
		rc = cat_exec(cat, "UPDATE cartridge SET element = NULL WHERE id IN (?1, ?2)", "II", a, b);
	if (rc == 0)
		rc = cat_exec(cat, "UPDATE cartridge SET element = ?2 WHERE id = ?1", "Ii", a, (int)dst1);
	if (rc == 0)
		rc = cat_exec(cat, "UPDATE cartridge SET element = ?2 WHERE id = ?1", "Ii", b, (int)dst2);
	if (rc == 0) {
		char what[160];
		snprintf(what, sizeof(what), "exchange: %s from %u to %u, %s from %u to %u", bca, src, dst1, bcb, dst1,
			 dst2);
		rc = event_add(cat, actor, what);
	}
	return rc;
}

/* A move (dst2 CAT_NO_ELEMENT) or an exchange, in one transaction. */
static int move_txn(struct vtl_catalog *cat, int64_t library_id, uint16_t src, uint16_t dst1, uint16_t dst2,
		    const char *actor)
{
	if (!cat)
		return VTL_E_INVAL;
	cat_lock(cat);
	if (!cat_str_ok(actor, sizeof(((struct cat_event *)0)->actor), false))
		return cat_unlock(cat, cat_fail(cat, VTL_E_INVAL, "actor missing or too long"));
	int rc = cat_begin(cat);
	if (rc == 0)
		rc = cat_end(cat, dst2 == CAT_NO_ELEMENT ? move_locked(cat, library_id, src, dst1, actor)
							 : exchange_locked(cat, library_id, src, dst1, dst2, actor));
	return cat_unlock(cat, rc);
}

int catalog_move(struct vtl_catalog *cat, int64_t library_id, uint16_t from, uint16_t to, const char *actor)
{
	return move_txn(cat, library_id, from, to, CAT_NO_ELEMENT, actor);
}

int catalog_exchange(struct vtl_catalog *cat, int64_t library_id, uint16_t src, uint16_t dst1, uint16_t dst2,
		     const char *actor)
{
	return dst2 == CAT_NO_ELEMENT ? VTL_E_INVAL : move_txn(cat, library_id, src, dst1, dst2, actor);
}

static int place_locked(struct vtl_catalog *cat, const char *barcode, int64_t library_id, uint16_t element,
			const char *state, const char *actor)
{
	sqlite3_stmt *st;
	int rc = cat_row(cat, "SELECT id, element FROM cartridge WHERE barcode = ?1", &st, "t", barcode);
	if (rc == VTL_E_NOTFOUND)
		return cat_fail(cat, rc, "no cartridge %s", barcode);
	if (rc)
		return rc;
	int64_t id = sqlite3_column_int64(st, 0);
	bool was_in = sqlite3_column_type(st, 1) != SQLITE_NULL;
	unsigned was = was_in ? (unsigned)sqlite3_column_int(st, 1) : 0;
	sqlite3_reset(st);
	if (element != CAT_NO_ELEMENT) {
		int64_t holder;
		if ((rc = element_holder(cat, library_id, element, &holder)))
			return rc;
		if (holder)
			return cat_fail(cat, VTL_E_DST_FULL, "element %u is full", element);
	}
	/* Out of its element first: a cartridge is in at most one element (UNIQUE cartridge_id). */
	rc = cat_exec(cat, "UPDATE element SET cartridge_id = NULL, source = NULL WHERE cartridge_id = ?1", "I", id);
	if (rc == 0)
		rc = cat_exec(cat, "UPDATE cartridge SET library_id = ?2, element = ?3, state = ?4 WHERE id = ?1", "ILet",
			      id, element == CAT_NO_ELEMENT ? (int64_t)0 : library_id, (int)element, state);
	if (rc == 0 && element != CAT_NO_ELEMENT)
		rc = cat_exec(cat, "UPDATE element SET cartridge_id = ?3 WHERE library_id = ?1 AND address = ?2", "IiI",
			      library_id, (int)element, id);
	if (rc == 0) {
		char what[128];
		if (element == CAT_NO_ELEMENT)
			snprintf(what, sizeof(what), "%s taken out of the library%s%u", barcode, was_in ? " from " : "",
				 was);
		else
			snprintf(what, sizeof(what), "%s placed into %u", barcode, element);
		if (element == CAT_NO_ELEMENT && !was_in)
			snprintf(what, sizeof(what), "%s taken out of the library", barcode);
		rc = event_add(cat, actor, what);
	}
	return rc;
}

int catalog_cartridge_place(struct vtl_catalog *cat, const char *barcode, int64_t library_id, uint16_t element,
			    const char *state, const char *actor)
{
	if (!cat)
		return VTL_E_INVAL;
	cat_lock(cat);
	if (!BARCODE_OK(barcode) || !cat_str_ok(state, sizeof(((struct cat_cartridge *)0)->state), true) ||
	    !cat_str_ok(actor, sizeof(((struct cat_event *)0)->actor), false))
		return cat_unlock(cat, cat_fail(cat, VTL_E_INVAL, "place: bad barcode, state or actor"));
	int rc = cat_begin(cat);
	if (rc == 0)
		rc = cat_end(cat, place_locked(cat, barcode, library_id, element, state, actor));
	return cat_unlock(cat, rc);
}

/* --------------------------------------------------------------------- MAM */

int catalog_mam_set(struct vtl_catalog *cat, const char *barcode, uint16_t id, const void *val, size_t len)
{
	if (!cat)
		return VTL_E_INVAL;
	cat_lock(cat);
	if (!BARCODE_OK(barcode) || len > 0xFFFF || (!val && len))
		return cat_unlock(cat, cat_fail(cat, VTL_E_INVAL, "MAM attribute: bad barcode or value"));
	int rc = cat_exec(cat,
			  "INSERT INTO mam (cartridge_id, attr, value) SELECT id, ?2, ?3 FROM cartridge WHERE barcode = ?1"
			  " ON CONFLICT (cartridge_id, attr) DO UPDATE SET value = excluded.value",
			  "tib", barcode, (int)id, val, len);
	return cartridge_update(cat, barcode, rc);
}

int catalog_mam_get(struct vtl_catalog *cat, const char *barcode, uint16_t id, void *buf, size_t cap, size_t *len)
{
	if (!cat || (!buf && cap))
		return VTL_E_INVAL;
	cat_lock(cat);
	if (!BARCODE_OK(barcode))
		return cat_unlock(cat, cat_fail(cat, VTL_E_INVAL, "barcode empty or too long"));
	sqlite3_stmt *st;
	int rc = cat_row(cat,
			 "SELECT m.value FROM mam m JOIN cartridge c ON c.id = m.cartridge_id"
			 " WHERE c.barcode = ?1 AND m.attr = ?2",
			 &st, "ti", barcode, (int)id);
	if (rc == 0) {
		size_t n = (size_t)sqlite3_column_bytes(st, 0);
		const void *p = sqlite3_column_blob(st, 0);
		if (n && cap)
			memcpy(buf, p, n < cap ? n : cap);
		if (len)
			*len = n;
		sqlite3_reset(st);
	} else if (rc == VTL_E_NOTFOUND) {
		cat_fail(cat, rc, "cartridge %s has no MAM attribute 0x%04x", barcode, id);
	}
	return cat_unlock(cat, rc);
}

int catalog_mam_delete(struct vtl_catalog *cat, const char *barcode, uint16_t id)
{
	if (!cat)
		return VTL_E_INVAL;
	cat_lock(cat);
	if (!BARCODE_OK(barcode))
		return cat_unlock(cat, cat_fail(cat, VTL_E_INVAL, "barcode empty or too long"));
	sqlite3_stmt *st;
	int rc = cat_row(cat, "SELECT id FROM cartridge WHERE barcode = ?1", &st, "t", barcode);
	if (rc == 0) {
		int64_t cid = sqlite3_column_int64(st, 0);
		sqlite3_reset(st);
		rc = cat_exec(cat, "DELETE FROM mam WHERE cartridge_id = ?1 AND attr = ?2", "Ii", cid, (int)id);
	} else if (rc == VTL_E_NOTFOUND) {
		cat_fail(cat, rc, "no cartridge %s", barcode);
	}
	return cat_unlock(cat, rc);
}

/* One attribute copied out of its row, so that the callbacks run without the lock. */
struct mam_row {
	uint16_t id;
	uint8_t *value;
	size_t len;
};

int catalog_mam_list(struct vtl_catalog *cat, const char *barcode,
		     int (*fn)(const struct cat_mam_attr *a, void *arg), void *arg)
{
	if (!cat || !fn)
		return VTL_E_INVAL;
	cat_lock(cat);
	if (!BARCODE_OK(barcode))
		return cat_unlock(cat, cat_fail(cat, VTL_E_INVAL, "barcode empty or too long"));
	struct mam_row *rows = NULL;
	size_t n = 0, cap = 0;
	sqlite3_stmt *st;
	int rc = cat_row(cat, "SELECT id FROM cartridge WHERE barcode = ?1", &st, "t", barcode);
	if (rc == 0) {
		int64_t cid = sqlite3_column_int64(st, 0);
		sqlite3_reset(st);
		rc = cat_query(cat, "SELECT attr, value FROM mam WHERE cartridge_id = ?1 ORDER BY attr", &st, "I", cid);
		while (rc == 0 && (rc = cat_step(cat, st)) == 1) {
			rc = vtl_grow((void **)&rows, &cap, n, sizeof *rows);
			if (rc)
				break;
			size_t len = (size_t)sqlite3_column_bytes(st, 1);
			const void *p = sqlite3_column_blob(st, 1);
			struct mam_row *r = &rows[n];
			r->id = (uint16_t)sqlite3_column_int(st, 0);
			r->len = len;
			r->value = malloc(len ? len : 1);
			if (!r->value) {
				rc = VTL_E_NOMEM;
				break;
			}
			if (len)
				memcpy(r->value, p, len);
			n++;
		}
	} else if (rc == VTL_E_NOTFOUND) {
		cat_fail(cat, rc, "no cartridge %s", barcode);
	}
	rc = cat_unlock(cat, rc);
	for (size_t i = 0; rc == 0 && i < n; i++) {
		struct cat_mam_attr a = {.id = rows[i].id, .value = rows[i].value, .len = rows[i].len};
		int r = fn(&a, arg);
		if (r) {
			rc = r < 0 ? r : 0;
			break;
		}
	}
	for (size_t i = 0; i < n; i++)
		free(rows[i].value);
	free(rows);
	return rc;
}

/* ------------------------------------------------------------------ events */

int catalog_event(struct vtl_catalog *cat, const char *actor, const char *what)
{
	if (!cat)
		return VTL_E_INVAL;
	cat_lock(cat);
	if (!cat_str_ok(actor, sizeof(((struct cat_event *)0)->actor), false) ||
	    !cat_str_ok(what, sizeof(((struct cat_event *)0)->what), false))
		return cat_unlock(cat, cat_fail(cat, VTL_E_INVAL, "event: actor or text missing or too long"));
	return cat_unlock(cat, event_add(cat, actor, what));
}

#define EVENT_BATCH 256

int catalog_event_list(struct vtl_catalog *cat, int64_t after_id, unsigned limit,
		       int (*fn)(const struct cat_event *ev, void *arg), void *arg)
{
	if (!cat || !fn)
		return VTL_E_INVAL;
	struct cat_event *arr = malloc(EVENT_BATCH * sizeof(*arr));
	if (!arr)
		return VTL_E_NOMEM;
	uint64_t left = limit ? limit : UINT64_MAX;
	int rc = 0;
	while (rc == 0 && left) {
		int want = left < EVENT_BATCH ? (int)left : EVENT_BATCH;
		size_t n = 0;
		cat_lock(cat);
		sqlite3_stmt *st;
		rc = cat_query(cat, "SELECT id, time, actor, what FROM event WHERE id > ?1 ORDER BY id LIMIT ?2", &st,
			       "Ii", after_id, want);
		while (rc == 0 && (rc = cat_step(cat, st)) == 1) {
			rc = 0;
			struct cat_event *e = &arr[n++];
			memset(e, 0, sizeof(*e));
			e->id = sqlite3_column_int64(st, 0);
			e->time = sqlite3_column_int64(st, 1);
			cat_col_text(st, 2, e->actor, sizeof(e->actor));
			cat_col_text(st, 3, e->what, sizeof(e->what));
		}
		rc = cat_unlock(cat, rc);
		if (rc)
			break;
		int stop = 0;
		for (size_t i = 0; i < n && !stop; i++) {
			int r = fn(&arr[i], arg);
			if (r) {
				rc = r < 0 ? r : 0;
				stop = 1;
			}
		}
		if (stop || n < (size_t)want)
			break;
		after_id = arr[n - 1].id;
		left -= n;
	}
	free(arr);
	return rc;
}
