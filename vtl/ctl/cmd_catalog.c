/* SPDX-License-Identifier: Apache-2.0 */
/* vtlctl catalog rebuild (cartridge rows from the pool's self-describing segments) and catalog check. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cartridge.h"
#include "common/grow.h"
#include "common/vtl_error.h"
#include "vtl/ctl/ctl.h"
#include "config/media.h"

struct names {
	char **v;
	size_t n, cap;
	int err;
};

static int names_add(struct names *s, const char *name)
{
	if (vtl_grow((void **)&s->v, &s->cap, s->n, sizeof *s->v))
		return s->err = VTL_E_NOMEM;
	if (!(s->v[s->n] = strdup(name)))
		return s->err = VTL_E_NOMEM;
	s->n++;
	return 0;
}

static void names_free(struct names *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
}

static int pool_name(const char *barcode, void *arg)
{
	return names_add(arg, barcode);
}

struct orphan_walk {
	struct vtl_pool *pool;
	struct names missing;
};

static int check_row(const struct cat_cartridge *c, void *arg)
{
	struct orphan_walk *w = arg;
	if (vtl_cart_exists(w->pool, c->barcode) == 0)
		return names_add(&w->missing, c->barcode);
	return 0;
}

struct added {
	struct cat_cartridge c;
	bool type_m;
};

int cmd_catalog_rebuild(struct ctl *ctl, int argc, char **argv)
{
	char **pos;
	int npos;
	int rc = ctl_parse(ctl, argc, argv, NULL, 0, &pos, &npos);
	if (rc)
		return rc;
	if (npos)
		return ctl_usage(ctl, "unexpected argument '%s'", pos[0]);
	if ((rc = ctl_open_library(ctl)) || (rc = ctl_open_pool(ctl)) || (rc = ctl_require_offline(ctl)))
		return rc;

	struct names pool = {0}, already = {0}, skipped = {0}, skip_why = {0}, failed = {0};
	struct ctl_empty slots = {0};
	size_t next_slot = 0;
	struct orphan_walk ow = {ctl->pool, {0}};
	struct added *added = NULL;
	size_t nadded = 0, in_none = 0;

	rc = vtl_pool_list_cartridges(ctl->pool, pool_name, &pool);
	if (rc || pool.err) {
		rc = ctl_err(ctl, VTLCTL_FAIL, "cannot list the pool's cartridges: %s", vtl_strerror(rc ? rc : pool.err));
		goto out;
	}
	rc = ctl_empty_elements(ctl, CAT_ELEM_SLOT, &slots);
	if (rc) {
		rc = ctl_cat_err(ctl, rc, "listing the empty slots");
		goto out;
	}
	added = calloc(pool.n ? pool.n : 1, sizeof *added);
	if (!added) {
		rc = ctl_err(ctl, VTLCTL_FAIL, "out of memory");
		goto out;
	}

	for (size_t i = 0; i < pool.n; i++) {
		const char *bc = pool.v[i];
		struct cat_cartridge c;
		char err[512];
		int r = catalog_cartridge_get(ctl->cat, bc, &c);
		if (r == 0) {
			names_add(&already, bc);
			continue;
		}
		if (r != VTL_E_NOTFOUND) {
			snprintf(err, sizeof err, "%s", catalog_last_error(ctl->cat));
			names_add(&failed, bc);
			ctl_warn(ctl, "%s: cannot look it up in the catalog: %s", bc, err);
			continue;
		}
		struct vtl_label l;
		if (vtl_label_parse(bc, &l, err, sizeof err)) {
			names_add(&skipped, bc);
			names_add(&skip_why, err);
			ctl_warn(ctl, "skipped %s: %s; the catalog takes LTO labels only", bc, err);
			continue;
		}
		struct vtl_cart_info info;
		memset(&info, 0, sizeof info);
		r = vtl_cart_info(ctl->pool, bc, &info);
		if (r)
			ctl_warn(ctl, "%s: cannot read what it holds (%s); its row gets no usage figures", bc, vtl_strerror(r));
		memset(&c, 0, sizeof c);
		snprintf(c.barcode, sizeof c.barcode, "%s", bc);
		c.media = l.media;
		c.capacity = l.capacity;
		snprintf(c.state, sizeof c.state, "available");
		c.library_id = ctl->lib.id;
		c.element = next_slot < slots.n ? slots.addr[next_slot] : CAT_NO_ELEMENT;
		c.bytes_stored = info.stored_bytes;
		c.eod = info.eod;
		c.cache = CAT_CACHE_RESIDENT;
		r = catalog_cartridge_add(ctl->cat, &c);
		if (r) {
			snprintf(err, sizeof err, "%s", catalog_last_error(ctl->cat));
			names_add(&failed, bc);
			ctl_warn(ctl, "%s: cannot add it to the catalog: %s", bc, err);
			continue;
		}
		if (c.element != CAT_NO_ELEMENT)
			next_slot++;
		else
			in_none++;
		added[nadded].c = c;
		added[nadded].type_m = l.type_m;
		nadded++;
	}
	rc = catalog_cartridge_list(ctl->cat, 0, check_row, &ow);
	if (rc || ow.missing.err) {
		rc = ctl_cat_err(ctl, rc ? rc : ow.missing.err, "listing the catalog's cartridges");
		goto out;
	}
	char what[256];
	snprintf(what, sizeof what, "catalog rebuild: %zu cartridges in the pool, %zu added, %zu already there, %zu "
		 "skipped, %zu failed", pool.n, nadded, already.n, skipped.n, failed.n);
	if (catalog_event(ctl->cat, ctl->actor, what))
		ctl_warn(ctl, "the event log could not be written");

	if (ctl->json) {
		struct json j;
		json_init(&j, stdout);
		json_obj(&j, NULL);
		json_u64(&j, "pool_cartridges", pool.n);
		json_arr(&j, "added");
		for (size_t i = 0; i < nadded; i++) {
			const struct cat_cartridge *c = &added[i].c;
			json_obj(&j, NULL);
			json_str(&j, "barcode", c->barcode);
			json_str(&j, "media", vtl_media_name(c->media, added[i].type_m));
			json_u64(&j, "bytes_stored", c->bytes_stored);
			json_u64(&j, "eod", c->eod);
			if (c->element == CAT_NO_ELEMENT) {
				json_null(&j, "location");
			} else {
				json_obj(&j, "location");
				json_str(&j, "type", "slot");
				json_u64(&j, "address", c->element);
				json_obj_end(&j);
			}
			json_obj_end(&j);
		}
		json_arr_end(&j);
		json_arr(&j, "already_in_catalog");
		for (size_t i = 0; i < already.n; i++)
			json_str(&j, NULL, already.v[i]);
		json_arr_end(&j);
		json_arr(&j, "skipped");
		for (size_t i = 0; i < skipped.n; i++) {
			json_obj(&j, NULL);
			json_str(&j, "barcode", skipped.v[i]);
			json_str(&j, "reason", i < skip_why.n ? skip_why.v[i] : "");
			json_obj_end(&j);
		}
		json_arr_end(&j);
		json_arr(&j, "failed");
		for (size_t i = 0; i < failed.n; i++)
			json_str(&j, NULL, failed.v[i]);
		json_arr_end(&j);
		json_arr(&j, "missing_from_pool");
		for (size_t i = 0; i < ow.missing.n; i++)
			json_str(&j, NULL, ow.missing.v[i]);
		json_arr_end(&j);
		json_obj_end(&j);
		json_end(&j);
	} else {
		if (nadded) {
			static const char *const head[] = {"BARCODE", "MEDIA", "STORED", "EOD", "LOCATION"};
			struct table t;
			table_init(&t, 5, head, "LLRRL");
			for (size_t i = 0; i < nadded; i++) {
				const struct cat_cartridge *c = &added[i].c;
				char st[32], eod[24], loc[32];
				fmt_bytes(c->bytes_stored, st, sizeof st);
				snprintf(eod, sizeof eod, "%" PRIu64, c->eod);
				ctl_location(&ctl->lib, c, loc, sizeof loc);
				table_add(&t, c->barcode, vtl_media_name(c->media, added[i].type_m), st, eod, loc);
			}
			table_print(&t, stdout);
			table_free(&t);
		}
		printf("rebuild: %zu cartridge%s in the pool: %zu added, %zu already in the catalog, %zu skipped, %zu "
		       "failed\n", pool.n, pool.n == 1 ? "" : "s", nadded, already.n, skipped.n, failed.n);
		if (in_none)
			printf("%zu of the added cartridges are in no element (the storage slots are full): free slots, "
			       "then 'vtlctl import BARCODE' puts each into a mail slot\n", in_none);
		for (size_t i = 0; i < ow.missing.n; i++)
			printf("catalog row %s has no cartridge in the pool (left alone; 'vtlctl cartridge remove %s' "
			       "removes it)\n", ow.missing.v[i], ow.missing.v[i]);
	}
	rc = 0;
	if (skipped.n || failed.n)
		rc = ctl_err(ctl, VTLCTL_FAIL, "%zu cartridge%s of the pool %s not in the catalog (see the warnings above)",
			     skipped.n + failed.n, skipped.n + failed.n == 1 ? "" : "s",
			     skipped.n + failed.n == 1 ? "is" : "are");
out:
	free(added);
	free(slots.addr);
	names_free(&pool);
	names_free(&already);
	names_free(&skipped);
	names_free(&skip_why);
	names_free(&failed);
	names_free(&ow.missing);
	return rc;
}

/* ------------------------------------------------------------ catalog check */

struct check_walk {
	struct ctl *ctl;
	struct names problems; /* "BARCODE: what is wrong" */
	size_t rows;
};

static int problem(struct check_walk *w, const char *barcode, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int problem(struct check_walk *w, const char *barcode, const char *fmt, ...)
{
	char what[384], line[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	snprintf(line, sizeof line, "%s: %s", barcode, what);
	return names_add(&w->problems, line);
}

/*
 * A row whose disk copy is the cartridge (resident or premigrated) must have
 * it in the pool, with the end of data and stored bytes the catalog recorded
 * when it last left a drive (vtld records them then and when it stops, so
 * offline the two agree). A migrated or recalling cartridge's disk copy is
 * gone or being rebuilt: only its tape copies speak for it.
 */
static int check_cartridge(const struct cat_cartridge *c, void *arg)
{
	struct check_walk *w = arg;
	w->rows++;
	if (c->cache != CAT_CACHE_RESIDENT && c->cache != CAT_CACHE_PREMIGRATED)
		return 0;
	int r = vtl_cart_exists(w->ctl->pool, c->barcode);
	if (r < 0)
		return problem(w, c->barcode, "cannot look for it in the pool: %s", vtl_strerror(r));
	if (r == 0)
		return problem(w, c->barcode, "in the catalog, but the pool holds no cartridge of that name");
	struct vtl_cart_info info;
	if ((r = vtl_cart_info(w->ctl->pool, c->barcode, &info)))
		return problem(w, c->barcode, "cannot read what the pool holds: %s", vtl_strerror(r));
	if (info.eod != c->eod)
		return problem(w, c->barcode,
			       "the catalog says end of data at object %" PRIu64 ", the pool holds %" PRIu64 " objects",
			       c->eod, info.eod);
	if (info.stored_bytes != c->bytes_stored)
		return problem(w, c->barcode, "the catalog says %" PRIu64 " bytes stored, the pool holds %" PRIu64,
			       c->bytes_stored, info.stored_bytes);
	return 0;
}

/* A cartridge of the pool must have a catalog row. */
static int check_pool_name(const char *barcode, void *arg)
{
	struct check_walk *w = arg;
	struct cat_cartridge c;
	int r = catalog_cartridge_get(w->ctl->cat, barcode, &c);
	if (r == VTL_E_NOTFOUND)
		return problem(w, barcode, "in the pool, but the catalog has no row for it ('vtlctl catalog rebuild')");
	if (r)
		return problem(w, barcode, "cannot look it up in the catalog: %s", catalog_last_error(w->ctl->cat));
	return 0;
}

int cmd_catalog_check(struct ctl *ctl, int argc, char **argv)
{
	int rc = ctl_parse_bare(ctl, argc, argv);
	if (rc)
		return rc;
	if ((rc = ctl_open_library(ctl)) || (rc = ctl_open_pool(ctl)) || (rc = ctl_require_offline(ctl)))
		return rc;
	struct check_walk w = {.ctl = ctl};
	char err[512];
	if (catalog_check(ctl->cat, err, sizeof err) != VTL_OK)
		rc = problem(&w, "catalog", "%s", err);
	if (!rc)
		rc = catalog_cartridge_list(ctl->cat, 0, check_cartridge, &w);
	if (rc || w.problems.err) {
		rc = ctl_cat_err(ctl, rc ? rc : w.problems.err, "checking the catalog's cartridges");
		goto out;
	}
	rc = vtl_pool_list_cartridges(ctl->pool, check_pool_name, &w);
	if (rc || w.problems.err) {
		rc = ctl_err(ctl, VTLCTL_FAIL, "cannot list the pool's cartridges: %s",
			     vtl_strerror(rc ? rc : w.problems.err));
		goto out;
	}
	if (ctl->json) {
		struct json j;
		json_init(&j, stdout);
		json_obj(&j, NULL);
		json_u64(&j, "cartridges", w.rows);
		json_bool(&j, "consistent", w.problems.n == 0);
		json_arr(&j, "problems");
		for (size_t i = 0; i < w.problems.n; i++)
			json_str(&j, NULL, w.problems.v[i]);
		json_arr_end(&j);
		json_obj_end(&j);
		json_end(&j);
	} else {
		for (size_t i = 0; i < w.problems.n; i++)
			printf("%s\n", w.problems.v[i]);
		printf("catalog check: %zu cartridge%s, %s\n", w.rows, w.rows == 1 ? "" : "s",
		       w.problems.n ? "problems found" : "the catalog and the pool agree");
	}
	rc = 0;
	if (w.problems.n)
		rc = ctl_err(ctl, VTLCTL_FAIL, "%zu problem%s", w.problems.n, w.problems.n == 1 ? "" : "s");
out:
	names_free(&w.problems);
	return rc;
}
