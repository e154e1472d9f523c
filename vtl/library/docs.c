/* SPDX-License-Identifier: Apache-2.0 */
#include "vtl/library/docs.h"

#include <stdlib.h>

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
