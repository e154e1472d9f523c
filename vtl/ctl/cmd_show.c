/* SPDX-License-Identifier: Apache-2.0 */
/* vtlctl library show, drive list, slot list, events: reading the catalog. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "common/vtl_error.h"
#include "vtl/ctl/ctl.h"
#include "config/media.h"

/* Commands that take no argument besides the global options. */
static int no_args(struct ctl *ctl, int argc, char **argv)
{
	char **pos;
	int npos;
	int rc = ctl_parse(ctl, argc, argv, NULL, 0, &pos, &npos);
	if (rc)
		return rc;
	if (npos)
		return ctl_usage(ctl, "unexpected argument '%s'", pos[0]);
	return 0;
}

/* ----------------------------------------------------------- library show */

static void range_text(char *buf, size_t len, unsigned first, unsigned count)
{
	if (count == 0)
		snprintf(buf, len, "0");
	else if (count == 1)
		snprintf(buf, len, "1 (%u)", first);
	else
		snprintf(buf, len, "%u (%u..%u)", count, first, first + count - 1);
}

int cmd_library_show(struct ctl *ctl, int argc, char **argv)
{
	int rc = no_args(ctl, argc, argv);
	if (rc || (rc = ctl_open_library(ctl)))
		return rc;
	const struct cat_library *lib = &ctl->lib;
	struct libdoc_counts ec;
	if ((rc = libdoc_count(ctl->cat, lib, &ec)))
		return ctl_cat_err(ctl, rc, "counting the elements and cartridges");

	/* The pool, if it opens: its members' space. */
	struct vtl_pool_config pc;
	vtl_config_pool(ctl->cfg, &pc);
	pc.io_threads = 1;
	char perr[512] = "";
	struct vtl_pool *pool = NULL;
	int prc = vtl_pool_open(&pc, &pool, perr, sizeof perr);
	struct vtl_member_space ms[VTL_POOL_MAX_MEMBERS];
	unsigned nm = 0;
	if (prc == 0) {
		for (unsigned i = 0; i < vtl_pool_members(pool); i++)
			if (vtl_pool_member_space(pool, i, &ms[nm]) == 0)
				nm++;
	}

	if (ctl->json) {
		struct libdoc_library_src src = {.catalog = ctl->cfg->catalog.path, .config = ctl->cfg->path,
						 .pool = prc ? NULL : pool, .pool_err = perr};
		if ((rc = libdoc_library(ctl->cat, lib, &src, stdout))) {
			vtl_pool_close(pool);
			return ctl_cat_err(ctl, rc, "counting the elements and cartridges");
		}
	} else {
		struct kv kv[16 + VTL_POOL_MAX_MEMBERS];
		size_t n = 0;
		memset(kv, 0, sizeof kv);
#define KV(k, ...) (kv[n].key = (k), snprintf(kv[n].value, sizeof kv[n].value, __VA_ARGS__), n++)
		char r[64];
		KV("name", "%s", lib->name);
		KV("vendor", "%s", lib->vendor);
		KV("product", "%s", lib->product);
		KV("revision", "%s", lib->revision);
		KV("serial", "%s", lib->serial);
		if (lib->transports == 1)
			KV("robot", "element %u", lib->transport_first);
		else
			KV("robots", "%u (%u..%u)", lib->transports, lib->transport_first,
			   lib->transport_first + lib->transports - 1);
		range_text(r, sizeof r, lib->drive_first, lib->drives);
		KV("drives", "%s, %u loaded", r, ec.full[CAT_ELEM_DRIVE]);
		range_text(r, sizeof r, lib->slot_first, lib->slots);
		KV("storage slots", "%s, %u full", r, ec.full[CAT_ELEM_SLOT]);
		range_text(r, sizeof r, lib->ie_first, lib->ies);
		KV("mail slots", "%s, %u full", r, ec.full[CAT_ELEM_IE]);
		KV("cartridges", "%lu in the library, %lu outside", ec.in, ec.outside);
		KV("catalog", "%s", ctl->cfg->catalog.path);
		if (prc) {
			KV("pool", "cannot open: %s", perr);
		} else {
			for (unsigned i = 0; i < nm; i++) {
				char u[32], f[32];
				fmt_bytes(ms[i].used_bytes, u, sizeof u);
				fmt_bytes(ms[i].free_bytes, f, sizeof f);
				KV("pool member", "%s: %s used, %s free", ms[i].path, u, f);
			}
		}
#undef KV
		kv_print(kv, n, stdout);
	}
	vtl_pool_close(pool);
	return 0;
}

/* ------------------------------------------------------------- drive list */

int cmd_drive_list(struct ctl *ctl, int argc, char **argv)
{
	int rc = no_args(ctl, argc, argv);
	if (rc || (rc = ctl_open_library(ctl)))
		return rc;
	if (ctl->json) {
		/* The document vtld's /api/drives serves too (vtl/library/docs.h). */
		if ((rc = libdoc_drives(ctl->cat, &ctl->lib, stdout)))
			return ctl_cat_err(ctl, rc, "listing the drives");
		return 0;
	}
	struct libdoc_drive_rows *ds;
	if ((rc = libdoc_drive_rows(ctl->cat, &ctl->lib, &ds)))
		return ctl_cat_err(ctl, rc, "listing the drives");
	static const char *const head[] = {"ADDRESS", "DRIVE", "VENDOR", "MODEL", "LTO", "SERIAL", "LUN", "STATE",
					   "CARTRIDGE"};
	struct table t;
	table_init(&t, 9, head, "RRLLRLRLL");
	for (size_t i = 0; i < ds->n && !rc; i++) {
		const struct cat_drive *d = &ds->d[i];
		char a[8], num[8], gen[8], lun[8];
		snprintf(a, sizeof a, "%u", d->address);
		snprintf(num, sizeof num, "%u", libdoc_elem_ordinal(&ctl->lib, d->address));
		unsigned g = vtl_drive_generation(d->vendor, d->model);
		snprintf(gen, sizeof gen, "%u", g);
		snprintf(lun, sizeof lun, "%d", d->lun);
		rc = table_add(&t, a, num, d->vendor, d->model, g ? gen : NULL, d->serial, lun, d->state,
			       ds->loaded[i][0] ? ds->loaded[i] : NULL);
	}
	if (!rc)
		table_print(&t, stdout);
	table_free(&t);
	free(ds);
	return rc ? ctl_err(ctl, VTLCTL_FAIL, "out of memory") : 0;
}

/* -------------------------------------------------------------- slot list */

struct slot_walk {
	struct ctl *ctl;
	struct table t;
	int filter; /* enum libdoc_filter */
	int err;
};

static int slot_row(const struct cat_element *e, void *arg)
{
	struct slot_walk *w = arg;
	if ((w->filter == LIBDOC_FULL && !e->full) || (w->filter == LIBDOC_EMPTY && e->full))
		return 0;
	const struct cat_library *lib = &w->ctl->lib;
	char a[8], num[8], src[8];
	snprintf(a, sizeof a, "%u", e->address);
	snprintf(num, sizeof num, "%u", libdoc_elem_ordinal(lib, e->address));
	snprintf(src, sizeof src, "%u", e->source);
	if (table_add(&w->t, a, libdoc_elem_type_name(e->type), num, e->full ? "full" : "empty",
		      e->full ? e->barcode : NULL, e->full && e->source != CAT_NO_ELEMENT ? src : NULL))
		return w->err = VTL_E_NOMEM;
	return 0;
}

int cmd_slot_list(struct ctl *ctl, int argc, char **argv)
{
	struct ctl_opt opts[] = {
		{"type", 0, true, NULL, false},
		{"full", 0, false, NULL, false},
		{"empty", 0, false, NULL, false},
	};
	char **pos;
	int npos;
	int rc = ctl_parse(ctl, argc, argv, opts, 3, &pos, &npos);
	if (rc)
		return rc;
	if (npos)
		return ctl_usage(ctl, "unexpected argument '%s'", pos[0]);
	enum cat_elem_type type = CAT_ELEM_ALL;
	if (opts[0].set) {
		static const struct {
			const char *name;
			enum cat_elem_type t;
		} types[] = {
			{"all", CAT_ELEM_ALL}, {"slot", CAT_ELEM_SLOT}, {"slots", CAT_ELEM_SLOT},
			{"storage", CAT_ELEM_SLOT}, {"ie", CAT_ELEM_IE}, {"mail", CAT_ELEM_IE},
			{"drive", CAT_ELEM_DRIVE}, {"drives", CAT_ELEM_DRIVE}, {"transport", CAT_ELEM_TRANSPORT},
			{"robot", CAT_ELEM_TRANSPORT},
		};
		bool found = false;
		for (size_t i = 0; i < VTL_ARRAY_SIZE(types); i++)
			if (strcmp(opts[0].val, types[i].name) == 0) {
				type = types[i].t;
				found = true;
			}
		if (!found)
			return ctl_usage(ctl, "--type %s: use all, slot, ie, drive or transport", opts[0].val);
	}
	if (opts[1].set && opts[2].set)
		return ctl_usage(ctl, "--full and --empty exclude each other");
	if ((rc = ctl_open_library(ctl)))
		return rc;
	int filter = opts[1].set ? LIBDOC_FULL : opts[2].set ? LIBDOC_EMPTY : LIBDOC_ALL;
	if (ctl->json) {
		/* The document vtld's /api/elements serves too (vtl/library/docs.h). */
		if ((rc = libdoc_elements(ctl->cat, &ctl->lib, type, (enum libdoc_filter)filter, stdout)))
			return ctl_cat_err(ctl, rc, "listing the elements");
		return 0;
	}
	struct slot_walk w;
	memset(&w, 0, sizeof w);
	w.ctl = ctl;
	w.filter = filter;
	static const char *const head[] = {"ADDRESS", "TYPE", "NUMBER", "STATUS", "BARCODE", "SOURCE"};
	table_init(&w.t, 6, head, "RLRLLR");
	rc = catalog_element_list(ctl->cat, ctl->lib.id, type, slot_row, &w);
	if (!rc && w.err)
		rc = w.err;
	if (!rc)
		table_print(&w.t, stdout);
	table_free(&w.t);
	if (rc)
		return ctl_cat_err(ctl, rc, "listing the elements");
	return 0;
}

/* ----------------------------------------------------------------- events */

struct ev_walk {
	struct table t;
	int err;
};

static int ev_row(const struct cat_event *ev, void *arg)
{
	struct ev_walk *w = arg;
	char tm[40], id[24];
	snprintf(id, sizeof id, "%" PRId64, ev->id);
	fmt_time(ev->time, tm, sizeof tm);
	if (table_add(&w->t, id, tm, ev->actor, ev->what))
		return w->err = VTL_E_NOMEM;
	return 0;
}

int cmd_events(struct ctl *ctl, int argc, char **argv)
{
	struct ctl_opt opts[] = {
		{"since", 0, true, NULL, false},
		{"limit", 0, true, NULL, false},
	};
	char **pos;
	int npos;
	int rc = ctl_parse(ctl, argc, argv, opts, 2, &pos, &npos);
	if (rc)
		return rc;
	if (npos)
		return ctl_usage(ctl, "unexpected argument '%s'", pos[0]);
	uint64_t since = 0, limit = 0;
	if (opts[0].set && vtl_parse_uint(opts[0].val, INT64_MAX, &since))
		return ctl_usage(ctl, "--since %s: give an event id (a whole number)", opts[0].val);
	if (opts[1].set && (vtl_parse_uint(opts[1].val, UINT32_MAX, &limit) || limit == 0))
		return ctl_usage(ctl, "--limit %s: give a number of events from 1 to %u", opts[1].val, UINT32_MAX);
	if ((rc = ctl_open_library(ctl)))
		return rc;
	if (ctl->json) {
		/* The document vtld's /api/events serves too (vtl/library/docs.h). */
		if ((rc = libdoc_events(ctl->cat, (int64_t)since, (unsigned)limit, stdout)))
			return ctl_cat_err(ctl, rc, "reading the event log");
		return 0;
	}
	struct ev_walk w;
	memset(&w, 0, sizeof w);
	static const char *const head[] = {"ID", "TIME", "ACTOR", "WHAT"};
	table_init(&w.t, 4, head, "RLLL");
	rc = catalog_event_list(ctl->cat, (int64_t)since, (unsigned)limit, ev_row, &w);
	if (!rc && w.err)
		rc = w.err;
	if (!rc)
		table_print(&w.t, stdout);
	table_free(&w.t);
	if (rc)
		return ctl_cat_err(ctl, rc, "reading the event log");
	return 0;
}
