/* SPDX-License-Identifier: Apache-2.0 */
#include "vtl/library/docs.h"

#include <stdlib.h>
#include <string.h>

#include "common/grow.h"

#include "common/jsonw.h"
#include "config/media.h"
#include "common/vtl_error.h"

#define TIME_TEXT 40

enum cat_elem_type libdoc_elem_type(const struct cat_library *lib, uint16_t a)
{
	if (a >= lib->transport_first && a - lib->transport_first < lib->transports)
		return CAT_ELEM_TRANSPORT;
	if (a >= lib->slot_first && a - lib->slot_first < lib->slots)
		return CAT_ELEM_SLOT;
	if (a >= lib->ie_first && a - lib->ie_first < lib->ies)
		return CAT_ELEM_IE;
	if (a >= lib->drive_first && a - lib->drive_first < lib->drives)
		return CAT_ELEM_DRIVE;
	return CAT_ELEM_ALL;
}

const char *libdoc_elem_type_name(enum cat_elem_type t)
{
	switch (t) {
	case CAT_ELEM_TRANSPORT: return "transport";
	case CAT_ELEM_SLOT: return "slot";
	case CAT_ELEM_IE: return "ie";
	case CAT_ELEM_DRIVE: return "drive";
	case CAT_ELEM_ALL: break;
	}
	return "unknown";
}

unsigned libdoc_elem_ordinal(const struct cat_library *lib, uint16_t a)
{
	switch (libdoc_elem_type(lib, a)) {
	case CAT_ELEM_TRANSPORT: return (unsigned)(a - lib->transport_first) + 1;
	case CAT_ELEM_SLOT: return (unsigned)(a - lib->slot_first) + 1;
	case CAT_ELEM_IE: return (unsigned)(a - lib->ie_first) + 1;
	case CAT_ELEM_DRIVE: return (unsigned)(a - lib->drive_first) + 1;
	case CAT_ELEM_ALL: break;
	}
	return 0;
}

struct elem_walk {
	const struct cat_library *lib;
	enum libdoc_filter filter;
	struct json j;
};

static int element(const struct cat_element *e, void *arg)
{
	struct elem_walk *w = arg;
	if ((w->filter == LIBDOC_FULL && !e->full) || (w->filter == LIBDOC_EMPTY && e->full))
		return 0;
	json_obj(&w->j, NULL);
	json_u64(&w->j, "address", e->address);
	json_str(&w->j, "type", libdoc_elem_type_name(e->type));
	json_u64(&w->j, "number", libdoc_elem_ordinal(w->lib, e->address));
	json_bool(&w->j, "full", e->full);
	json_str(&w->j, "barcode", e->full ? e->barcode : NULL);
	if (e->full && e->source != CAT_NO_ELEMENT)
		json_u64(&w->j, "source", e->source);
	else
		json_null(&w->j, "source");
	json_obj_end(&w->j);
	return 0;
}

int libdoc_elements(struct vtl_catalog *cat, const struct cat_library *lib, enum cat_elem_type type,
		    enum libdoc_filter filter, FILE *f)
{
	struct elem_walk w = {.lib = lib, .filter = filter};
	json_init(&w.j, f);
	json_obj(&w.j, NULL);
	json_arr(&w.j, "elements");
	int rc = catalog_element_list(cat, lib->id, type, element, &w);
	json_arr_end(&w.j);
	json_obj_end(&w.j);
	json_end(&w.j);
	return rc;
}

static int event(const struct cat_event *ev, void *arg)
{
	struct json *j = arg;
	char tm[TIME_TEXT];
	fmt_time_iso(ev->time, tm, sizeof tm);
	json_obj(j, NULL);
	json_i64(j, "id", ev->id);
	json_i64(j, "time", ev->time);
	json_str(j, "time_utc", tm);
	json_str(j, "actor", ev->actor);
	json_str(j, "what", ev->what);
	json_obj_end(j);
	return 0;
}

int libdoc_events(struct vtl_catalog *cat, int64_t since, unsigned limit, FILE *f)
{
	struct json j;
	json_init(&j, f);
	json_obj(&j, NULL);
	json_arr(&j, "events");
	int rc = catalog_event_list(cat, since, limit, event, &j);
	json_arr_end(&j);
	json_obj_end(&j);
	json_end(&j);
	return rc;
}

const char *libdoc_cache_name(enum cat_cache_state s)
{
	switch (s) {
	case CAT_CACHE_RESIDENT: return "resident";
	case CAT_CACHE_PREMIGRATED: return "premigrated";
	case CAT_CACHE_MIGRATED: return "migrated";
	case CAT_CACHE_RECALLING: return "recalling";
	}
	return "unknown";
}

void libdoc_cartridge_fields(struct json *j, const struct cat_library *lib, const struct cat_cartridge *c)
{
	bool tm = c->media == CAT_MEDIA_LTO7 && vtl_label_is_type_m(c->barcode);
	char tbuf[40];
	json_str(j, "barcode", c->barcode);
	json_str(j, "media", vtl_media_name(c->media, tm));
	json_u64(j, "capacity", c->capacity);
	json_bool(j, "write_protect", c->write_protect);
	json_str(j, "state", c->state);
	json_bool(j, "in_library", c->library_id == lib->id);
	if (c->library_id == lib->id && c->element != CAT_NO_ELEMENT) {
		json_obj(j, "location");
		json_str(j, "type", libdoc_elem_type_name(libdoc_elem_type(lib, c->element)));
		json_u64(j, "address", c->element);
		json_obj_end(j);
	} else {
		json_null(j, "location");
	}
	json_u64(j, "bytes_written", c->bytes_written);
	json_u64(j, "bytes_stored", c->bytes_stored);
	json_u64(j, "eod", c->eod);
	json_u64(j, "mounts", c->mounts);
	if (c->last_mounted) {
		fmt_time_iso(c->last_mounted, tbuf, sizeof tbuf);
		json_str(j, "last_mounted", tbuf);
	} else {
		json_null(j, "last_mounted");
	}
	json_str(j, "cache", libdoc_cache_name(c->cache));
}

struct cart_walk {
	const struct cat_library *lib;
	struct json j;
	unsigned long n;
};

static int cartridge(const struct cat_cartridge *c, void *arg)
{
	struct cart_walk *w = arg;
	w->n++;
	json_obj(&w->j, NULL);
	libdoc_cartridge_fields(&w->j, w->lib, c);
	json_obj_end(&w->j);
	return 0;
}

int libdoc_cartridges(struct vtl_catalog *cat, const struct cat_library *lib, FILE *f)
{
	struct cart_walk w = {.lib = lib};
	json_init(&w.j, f);
	json_obj(&w.j, NULL);
	json_str(&w.j, "library", lib->name);
	json_arr(&w.j, "cartridges");
	int rc = catalog_cartridge_list(cat, 0, cartridge, &w);
	json_arr_end(&w.j);
	json_u64(&w.j, "count", w.n);
	json_obj_end(&w.j);
	json_end(&w.j);
	return rc;
}

static int add_drive(const struct cat_drive *d, void *arg)
{
	struct libdoc_drive_rows *ds = arg;
	if (ds->n >= VTL_CFG_MAX_DRIVES)
		return 1;
	ds->d[ds->n++] = *d;
	return 0;
}

static int drive_elem(const struct cat_element *e, void *arg)
{
	struct libdoc_drive_rows *ds = arg;
	for (size_t i = 0; i < ds->n; i++)
		if (ds->d[i].address == e->address && e->full)
			snprintf(ds->loaded[i], sizeof ds->loaded[i], "%s", e->barcode);
	return 0;
}

int libdoc_drive_rows(struct vtl_catalog *cat, const struct cat_library *lib, struct libdoc_drive_rows **out)
{
	struct libdoc_drive_rows *ds = calloc(1, sizeof *ds);
	if (!ds)
		return VTL_E_NOMEM;
	int rc = catalog_drive_list(cat, lib->id, add_drive, ds);
	if (rc == VTL_OK)
		rc = catalog_element_list(cat, lib->id, CAT_ELEM_DRIVE, drive_elem, ds);
	if (rc != VTL_OK) {
		free(ds);
		return rc;
	}
	*out = ds;
	return VTL_OK;
}

int libdoc_drives(struct vtl_catalog *cat, const struct cat_library *lib, FILE *f)
{
	struct libdoc_drive_rows *ds;
	int rc = libdoc_drive_rows(cat, lib, &ds);
	if (rc != VTL_OK)
		return rc;
	struct json j;
	json_init(&j, f);
	json_obj(&j, NULL);
	json_arr(&j, "drives");
	for (size_t i = 0; i < ds->n; i++) {
		const struct cat_drive *d = &ds->d[i];
		json_obj(&j, NULL);
		json_u64(&j, "address", d->address);
		json_u64(&j, "number", libdoc_elem_ordinal(lib, d->address));
		json_str(&j, "vendor", d->vendor);
		json_str(&j, "model", d->model);
		json_str(&j, "revision", d->revision);
		json_str(&j, "serial", d->serial);
		unsigned g = vtl_drive_generation(d->vendor, d->model);
		if (g)
			json_u64(&j, "generation", g);
		else
			json_null(&j, "generation");
		json_i64(&j, "lun", d->lun);
		json_str(&j, "state", d->state);
		json_str(&j, "cartridge", ds->loaded[i][0] ? ds->loaded[i] : NULL);
		json_obj_end(&j);
	}
	json_arr_end(&j);
	json_obj_end(&j);
	json_end(&j);
	free(ds);
	return VTL_OK;
}

/* ------------------------------------------------------------ library show */

static int count_elem(const struct cat_element *e, void *arg)
{
	struct libdoc_counts *c = arg;
	if (e->full && e->type >= 1 && e->type <= CAT_ELEM_DRIVE)
		c->full[e->type]++;
	return 0;
}

struct cart_count {
	int64_t lib;
	struct libdoc_counts *c;
};

static int count_cart(const struct cat_cartridge *c, void *arg)
{
	struct cart_count *n = arg;
	if (c->library_id == n->lib)
		n->c->in++;
	else if (c->library_id == 0)
		n->c->outside++;
	return 0;
}

int libdoc_count(struct vtl_catalog *cat, const struct cat_library *lib, struct libdoc_counts *out)
{
	memset(out, 0, sizeof *out);
	int rc = catalog_element_list(cat, lib->id, CAT_ELEM_ALL, count_elem, out);
	if (rc == VTL_OK)
		rc = catalog_cartridge_list(cat, 0, count_cart, &(struct cart_count){lib->id, out});
	return rc;
}

static void json_range(struct json *j, const char *key, unsigned first, unsigned count, int full)
{
	json_obj(j, key);
	json_u64(j, "first", first);
	json_u64(j, "count", count);
	if (full >= 0)
		json_u64(j, "full", (uint64_t)full);
	json_obj_end(j);
}

int libdoc_library(struct vtl_catalog *cat, const struct cat_library *lib, const struct libdoc_library_src *src,
		   FILE *f)
{
	struct libdoc_counts ec;
	int rc = libdoc_count(cat, lib, &ec);
	if (rc)
		return rc;
	struct json j;
	json_init(&j, f);
	json_obj(&j, NULL);
	json_str(&j, "name", lib->name);
	json_str(&j, "vendor", lib->vendor);
	json_str(&j, "product", lib->product);
	json_str(&j, "revision", lib->revision);
	json_str(&j, "serial", lib->serial);
	json_str(&j, "catalog", src->catalog);
	json_str(&j, "config", src->config);
	json_obj(&j, "elements");
	json_range(&j, "transport", lib->transport_first, lib->transports, -1);
	json_range(&j, "drives", lib->drive_first, lib->drives, (int)ec.full[CAT_ELEM_DRIVE]);
	json_range(&j, "slots", lib->slot_first, lib->slots, (int)ec.full[CAT_ELEM_SLOT]);
	json_range(&j, "mail_slots", lib->ie_first, lib->ies, (int)ec.full[CAT_ELEM_IE]);
	json_obj_end(&j);
	json_obj(&j, "cartridges");
	json_u64(&j, "in_library", ec.in);
	json_u64(&j, "outside", ec.outside);
	json_obj_end(&j);
	json_obj(&j, "pool");
	json_arr(&j, "members");
	for (unsigned i = 0; src->pool && i < vtl_pool_members(src->pool); i++) {
		struct vtl_member_space ms;
		if (vtl_pool_member_space(src->pool, i, &ms) != VTL_OK)
			continue;
		json_obj(&j, NULL);
		json_str(&j, "path", ms.path);
		json_u64(&j, "used_bytes", ms.used_bytes);
		json_u64(&j, "free_bytes", ms.free_bytes);
		json_obj_end(&j);
	}
	json_arr_end(&j);
	json_str(&j, "error", src->pool ? NULL : src->pool_err);
	json_obj_end(&j);
	json_obj_end(&j);
	json_end(&j);
	return VTL_OK;
}

/* ---------------------------------------------------------- cartridge show */

static int copy_row(const struct cat_copy *k, void *arg)
{
	struct libdoc_cart *r = arg;
	int rc = vtl_grow((void **)&r->copies, &r->cap, r->ncopies, sizeof *r->copies);
	if (rc)
		return rc;
	r->copies[r->ncopies++] = (struct libdoc_copy){.k = *k};
	return 0;
}

int libdoc_cart_read(struct vtl_catalog *cat, struct vtl_pool *pool, const char *pool_err, const char *barcode,
		     struct libdoc_cart *out)
{
	memset(out, 0, sizeof *out);
	int rc = catalog_cartridge_get(cat, barcode, &out->c);
	if (rc)
		return rc;
	out->pool_rc = pool ? vtl_cart_info(pool, barcode, &out->info) : VTL_E_IO;
	if (!pool)
		snprintf(out->pool_err, sizeof out->pool_err, "%s", pool_err ? pool_err : "the pool is not open");
	else if (out->pool_rc)
		snprintf(out->pool_err, sizeof out->pool_err, "%s",
			 out->pool_rc == VTL_E_NOTFOUND ? "no cartridge of this barcode in the pool"
			 : out->pool_rc == VTL_E_BUSY	? "in use (vtld has it open for writing)"
							: vtl_strerror(out->pool_rc));
	if ((rc = catalog_copy_list(cat, barcode, copy_row, out))) {
		libdoc_cart_free(out);
		return rc;
	}
	for (size_t i = 0; i < out->ncopies; i++) {
		struct cat_ptape t;
		struct libdoc_copy *k = &out->copies[i];
		rc = catalog_ptape_get(cat, k->k.tape, &t);
		if (rc == VTL_OK) {
			snprintf(k->library, sizeof k->library, "%s", t.library);
			snprintf(k->pool, sizeof k->pool, "%s", t.pool);
		} else if (rc != VTL_E_NOTFOUND) {
			libdoc_cart_free(out);
			return rc;
		}
	}
	return VTL_OK;
}

void libdoc_cart_write(const struct cat_library *lib, const struct libdoc_cart *k, FILE *f)
{
	struct json j;
	json_init(&j, f);
	json_obj(&j, NULL);
	json_str(&j, "library", lib->name);
	libdoc_cartridge_fields(&j, lib, &k->c);
	json_obj(&j, "pool");
	if (k->pool_rc) {
		json_str(&j, "error", k->pool_err);
	} else {
		const struct vtl_cart_info *info = &k->info;
		json_u64(&j, "objects", info->eod);
		json_u64(&j, "filemarks", info->filemarks);
		json_u64(&j, "stored_bytes", info->stored_bytes);
		json_u64(&j, "segments", info->segments);
		json_u64(&j, "damaged_ranges", info->damaged);
		json_u64(&j, "damaged_objects", info->damaged_objects);
		json_arr(&j, "damage");
		for (uint32_t i = 0; i < info->damaged && i < VTL_DAMAGE_INFO_MAX; i++) {
			const struct vtl_damage *d = &info->damage[i];
			json_obj(&j, NULL);
			json_u64(&j, "first_object", d->first);
			json_u64(&j, "objects", d->count);
			json_str(&j, "kind", vtl_damage_kind_name(d->kind));
			json_u64(&j, "segment", d->seq);
			json_u64(&j, "segment_last", d->seq_last);
			json_obj_end(&j);
		}
		json_arr_end(&j);
	}
	json_obj_end(&j);
	json_arr(&j, "copies");
	for (size_t i = 0; i < k->ncopies; i++) {
		json_obj(&j, NULL);
		const struct libdoc_copy *c = &k->copies[i];
		json_str(&j, "tape", c->k.tape);
		json_str(&j, "library", c->library); /* the physical library that holds it */
		json_str(&j, "pool", c->pool);
		json_u64(&j, "file", c->k.file);
		json_u64(&j, "bytes", c->k.length);
		json_str(&j, "state", c->k.state);
		json_obj_end(&j);
	}
	json_arr_end(&j);
	json_obj_end(&j);
	json_end(&j);
}

void libdoc_cart_free(struct libdoc_cart *k)
{
	free(k->copies);
	k->copies = NULL;
	k->ncopies = k->cap = 0;
}
