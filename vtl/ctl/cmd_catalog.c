/* SPDX-License-Identifier: Apache-2.0 */
/* vtlctl catalog rebuild: cartridge rows from the pool's self-describing segments. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cartridge.h"
#include "common/vtl_error.h"
#include "vtl/ctl/ctl.h"
#include "vtl/media.h"

struct names {
	char **v;
	size_t n, cap;
	int err;
};

static int names_add(struct names *s, const char *name)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 64;
		char **v = realloc(s->v, cap * sizeof *v);
		if (!v)
			return s->err = VTL_E_NOMEM;
		s->v = v;
		s->cap = cap;
	}
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
