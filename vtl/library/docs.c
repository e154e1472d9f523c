/* SPDX-License-Identifier: Apache-2.0 */
#include "vtl/library/docs.h"

#include "common/jsonw.h"
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
