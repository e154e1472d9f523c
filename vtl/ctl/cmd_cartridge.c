/* SPDX-License-Identifier: Apache-2.0 */
/* vtlctl cartridge add, list, show, remove. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cartridge.h"
#include "common/grow.h"
#include "common/vtl_error.h"
#include "vtl/ctl/ctl.h"
#include "config/media.h"

#define CAPACITY_MIN 1000000ull /* 1 MB: below that early warning and EOM make no sense */
#define RANGE_MAX 10000ul       /* cartridges one 'cartridge add' creates at most */

/* The suffix a label needs for a media: "L8", "LY", "M8", "CU". */
static const char *media_suffix(enum cat_media m, bool type_m)
{
	static const char *const data[] = {"L5", "L6", "L7", "L8", "L9", "LA"};
	static const char *const worm[] = {"LV", "LW", "LX", "LY", "LZ"};
	if (m == CAT_MEDIA_CLEANING)
		return "CU";
	if (type_m)
		return "M8";
	if (m >= CAT_MEDIA_LTO5 && m <= CAT_MEDIA_LTO10)
		return data[m - CAT_MEDIA_LTO5];
	if (m >= CAT_MEDIA_LTO5W && m <= CAT_MEDIA_LTO9W)
		return worm[m - CAT_MEDIA_LTO5W];
	return "?";
}

/* ------------------------------------------------------------ new cartridges */

int ctl_new_cart(struct ctl *ctl, const char *barcode, const char *media, const char *capacity, struct new_cart *out)
{
	char err[512];
	struct vtl_label l;
	if (vtl_label_parse(barcode, &l, err, sizeof err))
		return ctl_usage(ctl, "%s", err);
	memset(out, 0, sizeof *out);
	snprintf(out->barcode, sizeof out->barcode, "%s", barcode);
	out->media = l.media;
	out->type_m = l.type_m;
	out->capacity = l.capacity;
	if (media) {
		enum cat_media m;
		bool tm;
		if (vtl_media_parse(media, &m, &tm))
			return ctl_usage(ctl, "--media %s: use LTO5..LTO10 (data), LTO5W..LTO9W (WORM), LTO7M (Type M) or "
					 "CLN (cleaning)", media);
		if (m != l.media || tm != l.type_m) {
			if (l.cleaning)
				return ctl_usage(ctl, "--media %s does not match barcode %s, a cleaning label (CLN...); use "
						 "--media CLN or leave --media out", media, barcode);
			if (m == CAT_MEDIA_CLEANING)
				return ctl_usage(ctl, "--media CLN does not match barcode %s: cleaning labels start with CLN "
						 "(e.g. CLN001CU)", barcode);
			return ctl_usage(ctl, "--media %s does not match barcode %s, whose suffix %s means %s; use --media "
					 "%s, or a barcode ending in %s for %s", media, barcode, l.suffix,
					 vtl_media_name(l.media, l.type_m), vtl_media_name(l.media, l.type_m),
					 media_suffix(m, tm), vtl_media_name(m, tm));
		}
	}
	if (capacity) {
		uint64_t c;
		if (l.cleaning)
			return ctl_usage(ctl, "--capacity: %s is a cleaning cartridge, which has no capacity", barcode);
		if (vtl_parse_size(capacity, false, &c))
			return ctl_usage(ctl, "--capacity %s: give a size such as 500G or 2.5T (K, M, G, T = powers of "
					 "1000; KiB, MiB, GiB, TiB = of 1024)", capacity);
		if (c < CAPACITY_MIN)
			return ctl_usage(ctl, "--capacity %s is below the minimum of 1 MB", capacity);
		out->capacity = c;
	}
	return 0;
}

int ctl_check_new(struct ctl *ctl, const char *barcode)
{
	struct cat_cartridge c;
	int rc = catalog_cartridge_get(ctl->cat, barcode, &c);
	if (rc == 0) {
		char loc[64];
		ctl_location(&ctl->lib, &c, loc, sizeof loc);
		return ctl_err(ctl, VTLCTL_FAIL, "cartridge %s is already in the catalog (location: %s); nothing was "
			       "added", barcode, loc);
	}
	if (rc != VTL_E_NOTFOUND)
		return ctl_cat_err(ctl, rc, "looking up %s", barcode);
	rc = vtl_cart_exists(ctl->pool, barcode);
	if (rc == 1)
		return ctl_err(ctl, VTLCTL_FAIL, "cartridge %s exists in the pool but not in the catalog; 'vtlctl catalog "
			       "rebuild' adds it to the catalog; nothing was added", barcode);
	if (rc < 0)
		return ctl_err(ctl, VTLCTL_FAIL, "cannot check the pool for %s: %s", barcode, vtl_strerror(rc));
	return 0;
}

/* Creates one cartridge; on failure writes why into err and leaves nothing behind. */
static int create_cart(struct ctl *ctl, const struct new_cart *nc, uint16_t element, char *err, size_t errlen)
{
	int rc = vtl_cart_create(ctl->pool, nc->barcode);
	if (rc) {
		snprintf(err, errlen, "cannot create %s in the pool: %s%s%s", nc->barcode, vtl_strerror(rc),
			 rc == VTL_E_IO ? ": " : "", rc == VTL_E_IO ? strerror(errno) : "");
		return VTLCTL_FAIL;
	}
	struct cat_cartridge c;
	memset(&c, 0, sizeof c);
	snprintf(c.barcode, sizeof c.barcode, "%s", nc->barcode);
	c.media = nc->media;
	c.capacity = nc->capacity;
	snprintf(c.state, sizeof c.state, "available");
	c.library_id = ctl->lib.id;
	c.element = element;
	c.cache = CAT_CACHE_RESIDENT;
	rc = catalog_cartridge_add(ctl->cat, &c);
	if (rc) {
		snprintf(err, errlen, "cannot add %s to the catalog: %s", nc->barcode,
			 rc == VTL_E_BUSY ? "the catalog stayed busy" : catalog_last_error(ctl->cat));
		int drc = vtl_cart_delete(ctl->pool, nc->barcode);
		if (drc != VTL_OK) {
			size_t at = strlen(err);
			snprintf(err + at, errlen - at, "; its files stay in the pool (%s %s)", nc->barcode,
				 vtl_strerror(drc));
		}
		return VTLCTL_FAIL;
	}
	return 0;
}

int ctl_create_cart(struct ctl *ctl, const struct new_cart *nc, uint16_t element)
{
	char err[512];
	if (create_cart(ctl, nc, element, err, sizeof err))
		return ctl_err(ctl, VTLCTL_FAIL, "%s; nothing was added", err);
	return 0;
}

/* -------------------------------------------------------------------- add */

int ctl_check_target(struct ctl *ctl, uint16_t addr, enum cat_elem_type want)
{
	struct cat_element e;
	char ranges[256];
	int rc = catalog_element_get(ctl->cat, ctl->lib.id, addr, &e);
	if (rc == VTL_E_NOTFOUND) {
		ctl_elem_ranges(&ctl->lib, ranges, sizeof ranges);
		return ctl_err(ctl, VTLCTL_FAIL, "the library has no element %u (%s)", addr, ranges);
	}
	if (rc)
		return ctl_cat_err(ctl, rc, "reading element %u", addr);
	if (want == CAT_ELEM_ALL ? (e.type != CAT_ELEM_SLOT && e.type != CAT_ELEM_IE) : e.type != want)
		return ctl_err(ctl, VTLCTL_FAIL, "element %u is a %s; give %s", addr, ctl_elem_type_words(e.type),
			       want == CAT_ELEM_IE ? "a mail slot" : "a storage slot or a mail slot");
	if (e.full)
		return ctl_err(ctl, VTLCTL_FAIL, "%s %u already holds %s", ctl_elem_type_words(e.type), addr, e.barcode);
	return 0;
}

int ctl_first_empty(struct ctl *ctl, enum cat_elem_type type, uint16_t *addr)
{
	struct ctl_empty w;
	int rc = ctl_empty_elements(ctl, type, &w);
	if (rc == 0 && w.n == 0)
		rc = VTL_E_DST_FULL;
	if (rc == 0)
		*addr = w.addr[0];
	free(w.addr);
	return rc;
}

static void print_added(struct ctl *ctl, const struct new_cart *nc, const uint16_t *where, size_t n)
{
	if (ctl->json) {
		struct json j;
		json_init(&j, stdout);
		json_obj(&j, NULL);
		json_arr(&j, "added");
		for (size_t i = 0; i < n; i++) {
			json_obj(&j, NULL);
			json_str(&j, "barcode", nc[i].barcode);
			json_str(&j, "media", vtl_media_name(nc[i].media, nc[i].type_m));
			json_u64(&j, "capacity", nc[i].capacity);
			json_obj(&j, "location");
			json_str(&j, "type", libdoc_elem_type_name(libdoc_elem_type(&ctl->lib, where[i])));
			json_u64(&j, "address", where[i]);
			json_obj_end(&j);
			json_obj_end(&j);
		}
		json_arr_end(&j);
		json_obj_end(&j);
		json_end(&j);
		return;
	}
	static const char *const head[] = {"BARCODE", "MEDIA", "CAPACITY", "LOCATION"};
	struct table t;
	table_init(&t, 4, head, "LLRL");
	for (size_t i = 0; i < n; i++) {
		char cap[32], loc[32];
		fmt_bytes(nc[i].capacity, cap, sizeof cap);
		snprintf(loc, sizeof loc, "%s %u", libdoc_elem_type_name(libdoc_elem_type(&ctl->lib, where[i])), where[i]);
		table_add(&t, nc[i].barcode, vtl_media_name(nc[i].media, nc[i].type_m),
			  nc[i].media == CAT_MEDIA_CLEANING ? NULL : cap, loc);
	}
	table_print(&t, stdout);
	table_free(&t);
	printf("added %zu cartridge%s\n", n, n == 1 ? "" : "s");
}

int cmd_cartridge_add(struct ctl *ctl, int argc, char **argv)
{
	struct ctl_opt opts[] = {
		{"barcode", 0, true, NULL, false},
		{"count", 0, true, NULL, false},
		{"to", 0, true, NULL, false},
		{"media", 0, true, NULL, false},
		{"capacity", 0, true, NULL, false},
		{"slot", 0, true, NULL, false},
	};
	char **pos;
	int npos;
	int rc = ctl_parse(ctl, argc, argv, opts, 6, &pos, &npos);
	if (rc)
		return rc;
	const char *first = opts[0].val;
	if (npos > 1 || (npos == 1 && first))
		return ctl_usage(ctl, "unexpected argument '%s': give one barcode, with --count or --to for a range",
				 pos[npos - 1]);
	if (npos == 1)
		first = pos[0];
	if (!first)
		return ctl_usage(ctl, "which cartridge? give --barcode BARCODE (e.g. --barcode A00001L8)");
	if (opts[1].set && opts[2].set)
		return ctl_usage(ctl, "--count and --to exclude each other: give the range one way");

	/* The barcodes, all checked before anything is created. */
	unsigned long count = 1;
	char err[512];
	struct new_cart first_nc;
	if ((rc = ctl_new_cart(ctl, first, opts[3].val, opts[4].val, &first_nc)))
		return rc;
	if (opts[1].set) {
		uint64_t v;
		if (vtl_parse_uint(opts[1].val, RANGE_MAX, &v) || v == 0)
			return ctl_usage(ctl, "--count %s: give a number of cartridges from 1 to %lu", opts[1].val,
					 RANGE_MAX);
		count = (unsigned long)v;
	} else if (opts[2].set) {
		struct vtl_label l;
		if (vtl_label_parse(opts[2].val, &l, err, sizeof err))
			return ctl_usage(ctl, "--to: %s", err);
		if (vtl_label_range(first, opts[2].val, &count, err, sizeof err))
			return ctl_usage(ctl, "--to: %s", err);
		if (count > RANGE_MAX)
			return ctl_usage(ctl, "--to: the range holds %lu cartridges; at most %lu at a time", count, RANGE_MAX);
	}
	if (opts[5].set && count > 1)
		return ctl_usage(ctl, "--slot places a single cartridge; leave it out for a range (each goes into the "
				 "next empty slot)");
	uint16_t slot = CAT_NO_ELEMENT;
	if (opts[5].set && ctl_parse_address(opts[5].val, &slot))
		return ctl_usage(ctl, "--slot %s: give an element address (a number, see 'vtlctl slot list')",
				 opts[5].val);
	struct new_cart *nc = calloc(count, sizeof *nc);
	uint16_t *where = calloc(count, sizeof *where);
	struct ctl_empty w = {0};
	if (!nc || !where) {
		rc = ctl_err(ctl, VTLCTL_FAIL, "out of memory");
		goto out;
	}
	nc[0] = first_nc;
	for (unsigned long i = 1; i < count; i++) {
		char next[VTL_LABEL_LEN + 1];
		if (vtl_label_next(nc[i - 1].barcode, next)) {
			rc = ctl_usage(ctl, "the range from %s runs out of digits after %s (%lu cartridges asked); start "
				       "lower or add fewer", first, nc[i - 1].barcode, count);
			goto out;
		}
		nc[i] = first_nc;
		snprintf(nc[i].barcode, sizeof nc[i].barcode, "%s", next);
	}

	if ((rc = ctl_open_library(ctl)) || (rc = ctl_open_pool(ctl)) || (rc = ctl_require_offline(ctl)))
		goto out;
	for (unsigned long i = 0; i < count; i++)
		if ((rc = ctl_check_new(ctl, nc[i].barcode)))
			goto out;
	if (slot != CAT_NO_ELEMENT) {
		if ((rc = ctl_check_target(ctl, slot, CAT_ELEM_ALL)))
			goto out;
		where[0] = slot;
	} else {
		if ((rc = ctl_empty_elements(ctl, CAT_ELEM_SLOT, &w))) {
			rc = ctl_cat_err(ctl, rc, "listing the empty slots");
			goto out;
		}
		if (w.n < count) {
			rc = ctl_err(ctl, VTLCTL_FAIL, "library %s has %zu empty storage slot%s of %u; cannot add %lu "
				     "cartridge%s (nothing was added; free slots with 'vtlctl export' or 'vtlctl cartridge "
				     "remove')", ctl->lib.name, w.n, w.n == 1 ? "" : "s", ctl->lib.slots, count,
				     count == 1 ? "" : "s");
			goto out;
		}
		for (unsigned long i = 0; i < count; i++)
			where[i] = w.addr[i];
	}

	unsigned long done = 0;
	for (; done < count; done++)
		if (create_cart(ctl, &nc[done], where[done], err, sizeof err))
			break;
	if (done) {
		char what[200];
		if (done == 1)
			snprintf(what, sizeof what, "add %s (%s) into %u", nc[0].barcode,
				 vtl_media_name(nc[0].media, nc[0].type_m), where[0]);
		else
			snprintf(what, sizeof what, "add %lu cartridges %s..%s (%s) into %u..", done, nc[0].barcode,
				 nc[done - 1].barcode, vtl_media_name(nc[0].media, nc[0].type_m), where[0]);
		int erc = catalog_event(ctl->cat, ctl->actor, what);
		if (erc)
			ctl_warn(ctl, "the cartridges were added, but the event log could not be written: %s",
				 catalog_last_error(ctl->cat));
	}
	if (done < count) {
		if (done)
			print_added(ctl, nc, where, done);
		if (done == 0)
			rc = ctl_err(ctl, VTLCTL_FAIL, "%s; nothing was added", err);
		else
			rc = ctl_err(ctl, VTLCTL_FAIL, "%s; %lu of %lu cartridges were added (%s..%s), %s and the rest "
				     "were not", err, done, count, nc[0].barcode, nc[done - 1].barcode, nc[done].barcode);
		goto out;
	}
	print_added(ctl, nc, where, count);
	rc = 0;
out:
	free(w.addr);
	free(nc);
	free(where);
	return rc;
}

/* ------------------------------------------------------------------- list */

struct list_walk {
	struct ctl *ctl;
	struct table t;
	int err;
};

static int list_row(const struct cat_cartridge *c, void *arg)
{
	struct list_walk *w = arg;
	bool tm = c->media == CAT_MEDIA_LTO7 && vtl_label_is_type_m(c->barcode);
	char cap[32], used[32], loc[64];
	fmt_bytes(c->capacity, cap, sizeof cap);
	fmt_bytes(c->bytes_stored, used, sizeof used);
	ctl_location(&w->ctl->lib, c, loc, sizeof loc);
	const char *media = vtl_media_name(c->media, tm);
	if (table_add(&w->t, c->barcode, media ? media : "?", c->media == CAT_MEDIA_CLEANING ? NULL : cap,
		      c->media == CAT_MEDIA_CLEANING ? NULL : used, loc, c->state[0] ? c->state : NULL,
		      c->media == CAT_MEDIA_CLEANING ? NULL : libdoc_cache_name(c->cache)))
		return w->err = VTL_E_NOMEM;
	return 0;
}

int cmd_cartridge_list(struct ctl *ctl, int argc, char **argv)
{
	char **pos;
	int npos;
	int rc = ctl_parse(ctl, argc, argv, NULL, 0, &pos, &npos);
	if (rc)
		return rc;
	if (npos)
		return ctl_usage(ctl, "unexpected argument '%s' (for one cartridge use 'vtlctl cartridge show %s')",
				 pos[0], pos[0]);
	if ((rc = ctl_open_library(ctl)))
		return rc;
	if (ctl->json) {
		/* The document vtld's /api/cartridges serves too (vtl/library/docs.h). */
		if ((rc = libdoc_cartridges(ctl->cat, &ctl->lib, stdout)))
			return ctl_cat_err(ctl, rc, "listing the cartridges");
		return 0;
	}
	struct list_walk w;
	memset(&w, 0, sizeof w);
	w.ctl = ctl;
	static const char *const head[] = {"BARCODE", "MEDIA", "CAPACITY", "STORED", "LOCATION", "STATE", "CACHE"};
	table_init(&w.t, 7, head, "LLRRLLL");
	rc = catalog_cartridge_list(ctl->cat, 0, list_row, &w);
	if (!rc && w.err)
		rc = w.err;
	if (!rc)
		table_print(&w.t, stdout);
	table_free(&w.t);
	if (rc)
		return ctl_cat_err(ctl, rc, "listing the cartridges");
	return 0;
}

/* ------------------------------------------------------------------- show */

static int show_cart(struct ctl *ctl, const struct libdoc_cart *k);

int cmd_cartridge_show(struct ctl *ctl, int argc, char **argv)
{
	struct ctl_opt opts[] = {{"barcode", 0, true, NULL, false}};
	char **pos;
	int npos;
	int rc = ctl_parse(ctl, argc, argv, opts, 1, &pos, &npos);
	if (rc)
		return rc;
	const char *bc = opts[0].val;
	if (npos + (bc != NULL) != 1)
		return ctl_usage(ctl, "give exactly one barcode");
	if (!bc)
		bc = pos[0];
	if (strlen(bc) > CAT_BARCODE_MAX)
		return ctl_usage(ctl, "barcode '%.40s...' is longer than %d characters", bc, CAT_BARCODE_MAX);
	if ((rc = ctl_open_library(ctl)))
		return rc;
	/* What the pool holds, if it can be read. */
	struct vtl_pool_config pc;
	vtl_config_pool(ctl->cfg, &pc);
	pc.io_threads = 1;
	char perr[512] = "";
	struct vtl_pool *pool = NULL;
	if (vtl_pool_open(&pc, &pool, perr, sizeof perr) != 0)
		pool = NULL;
	struct libdoc_cart k;
	rc = libdoc_cart_read(ctl->cat, pool, perr, bc, &k);
	vtl_pool_close(pool);
	if (rc == VTL_E_NOTFOUND)
		return ctl_err(ctl, VTLCTL_FAIL, "there is no cartridge %s in the catalog (see 'vtlctl cartridge list')",
			       bc);
	if (rc)
		return ctl_cat_err(ctl, rc, "reading %s", bc);
	rc = show_cart(ctl, &k);
	libdoc_cart_free(&k);
	return rc;
}

static int show_cart(struct ctl *ctl, const struct libdoc_cart *k)
{
	const struct cat_cartridge c = k->c;
	const struct vtl_cart_info info = k->info;
	int irc = k->pool_rc;
	const char *perr = k->pool_err;
	bool tm = c.media == CAT_MEDIA_LTO7 && vtl_label_is_type_m(c.barcode);
	if (ctl->json) {
		libdoc_cart_write(&ctl->lib, k, stdout);
		return 0;
	}
	struct kv kv[40];
	size_t n = 0;
	memset(kv, 0, sizeof kv);
#define KV(k, ...) (kv[n].key = (k), snprintf(kv[n].value, sizeof kv[n].value, __VA_ARGS__), n++)
	char b1[32], b2[64];
	KV("barcode", "%s", c.barcode);
	KV("media", "%s (%s)", vtl_media_name(c.media, tm), vtl_media_describe(c.media, tm));
	fmt_bytes(c.capacity, b1, sizeof b1);
	KV("capacity", "%" PRIu64 " bytes (%s)", c.capacity, b1);
	KV("write protect", "%s", c.write_protect ? "yes" : "no");
	KV("state", "%s", c.state);
	ctl_location(&ctl->lib, &c, b2, sizeof b2);
	KV("location", "%s", b2);
	fmt_bytes(c.bytes_written, b1, sizeof b1);
	KV("bytes written", "%" PRIu64 " (%s)", c.bytes_written, b1);
	fmt_bytes(c.bytes_stored, b1, sizeof b1);
	KV("bytes stored", "%" PRIu64 " (%s)", c.bytes_stored, b1);
	KV("end of data", "object %" PRIu64, c.eod);
	KV("mounts", "%" PRIu32, c.mounts);
	fmt_time(c.last_mounted, b2, sizeof b2);
	KV("last mounted", "%s", b2);
	KV("cache", "%s", libdoc_cache_name(c.cache));
	if (irc)
		KV("pool", "%s", perr);
	else
		KV("pool", "%" PRIu64 " objects (%" PRIu64 " filemarks), %" PRIu64 " bytes stored, %" PRIu32 " segment%s",
		   info.eod, info.filemarks, info.stored_bytes, info.segments, info.segments == 1 ? "" : "s");
	for (uint32_t i = 0; !irc && i < info.damaged && i < VTL_DAMAGE_INFO_MAX; i++) {
		const struct vtl_damage *d = &info.damage[i];
		char seg[48];
		if (d->kind == VTL_DAMAGE_MISSING || d->kind == VTL_DAMAGE_HEADER)
			snprintf(seg, sizeof seg, "segment files %08u..%08u.seg", d->seq, d->seq_last);
		else
			snprintf(seg, sizeof seg, "segment file %08u.seg", d->seq);
		KV(i ? "" : "damaged", "objects %" PRIu64 "..%" PRIu64 " unreadable (%s, %s)", d->first,
		   d->first + d->count - 1, vtl_damage_kind_name(d->kind), seg);
	}
	if (!irc && info.damaged > VTL_DAMAGE_INFO_MAX)
		KV("", "%" PRIu32 " more damaged ranges, %" PRIu64 " damaged objects in all", info.damaged - VTL_DAMAGE_INFO_MAX,
		   info.damaged_objects);
	if (!irc && info.damaged)
		KV("", "the rest reads; recall it from a good tape copy, or export what reads (docs/operations.md)");
	for (size_t i = 0; i < k->ncopies && n < VTL_ARRAY_SIZE(kv); i++) {
		const struct libdoc_copy *cp = &k->copies[i];
		bool known = cp->library[0];
		KV(i ? "" : "copies", "%s file %u, %" PRIu64 " bytes, %s%s%s%s%s%s", cp->k.tape, cp->k.file, cp->k.length,
		   cp->k.state, known ? " (library " : "", cp->library, known ? ", pool " : "", cp->pool, known ? ")" : "");
	}
#undef KV
	kv_print(kv, n, stdout);
	return 0;
}

/* ----------------------------------------------------------------- remove */

int cmd_cartridge_remove(struct ctl *ctl, int argc, char **argv)
{
	struct ctl_opt opts[] = {{"force", 'f', false, NULL, false}};
	char **pos;
	int npos;
	int rc = ctl_parse(ctl, argc, argv, opts, 1, &pos, &npos);
	if (rc)
		return rc;
	bool force = opts[0].set;
	if (npos == 0)
		return ctl_usage(ctl, "which cartridge? give one or more barcodes");
	for (int i = 0; i < npos; i++) {
		if (strlen(pos[i]) > CAT_BARCODE_MAX || vtl_barcode_check(pos[i]))
			return ctl_usage(ctl, "'%.40s' is not a barcode", pos[i]);
		for (int k = 0; k < i; k++)
			if (strcmp(pos[i], pos[k]) == 0)
				return ctl_usage(ctl, "%s is named twice", pos[i]);
	}
	if ((rc = ctl_open_library(ctl)) || (rc = ctl_open_pool(ctl)) || (rc = ctl_require_offline(ctl)))
		return rc;

	/* Check every cartridge before deleting any. */
	bool *in_pool = calloc((size_t)npos, sizeof *in_pool);
	if (!in_pool)
		return ctl_err(ctl, VTLCTL_FAIL, "out of memory");
	for (int i = 0; i < npos && !rc; i++) {
		const char *bc = pos[i];
		struct cat_cartridge c;
		int r = catalog_cartridge_get(ctl->cat, bc, &c);
		if (r == VTL_E_NOTFOUND) {
			rc = ctl_err(ctl, VTLCTL_FAIL, "there is no cartridge %s in the catalog%s; nothing was removed", bc,
				     vtl_cart_exists(ctl->pool, bc) == 1
					     ? " (the pool has one: 'vtlctl catalog rebuild' adds it, then remove it)"
					     : "");
			break;
		}
		if (r) {
			rc = ctl_cat_err(ctl, r, "reading %s", bc);
			break;
		}
		if (c.library_id == ctl->lib.id && c.element != CAT_NO_ELEMENT &&
		    libdoc_elem_type(&ctl->lib, c.element) == CAT_ELEM_DRIVE && !force) {
			rc = ctl_err(ctl, VTLCTL_FAIL, "cartridge %s is in drive %u; move it to a slot first ('vtlctl move "
				     "%u <slot>') or use --force; nothing was removed", bc, c.element, c.element);
			break;
		}
		struct vtl_cart_info info;
		r = vtl_cart_info(ctl->pool, bc, &info);
		if (r == VTL_E_NOTFOUND) {
			in_pool[i] = false;
			continue;
		}
		in_pool[i] = true;
		if (r == VTL_E_BUSY) {
			rc = ctl_err(ctl, VTLCTL_FAIL, "cartridge %s is open for writing (by vtld?); unload it first; "
				     "nothing was removed", bc);
		} else if (r && !force) {
			rc = ctl_err(ctl, VTLCTL_FAIL, "cannot read cartridge %s in the pool: %s; use --force to delete it "
				     "anyway; nothing was removed", bc, vtl_strerror(r));
		} else if (!r && info.eod > 0 && !force) {
			char b[32];
			fmt_bytes(info.stored_bytes, b, sizeof b);
			rc = ctl_err(ctl, VTLCTL_FAIL, "cartridge %s holds data (%" PRIu64 " objects, %s stored); use "
				     "--force to delete it with its data; nothing was removed", bc, info.eod, b);
		}
	}
	int removed = 0;
	for (int i = 0; i < npos && !rc; i++) {
		const char *bc = pos[i];
		int r = in_pool[i] ? vtl_cart_delete(ctl->pool, bc) : 0;
		if (r) {
			rc = ctl_err(ctl, VTLCTL_FAIL, "cannot delete %s from the pool: %s%s", bc,
				     r == VTL_E_BUSY ? "it is in use (by vtld?)" : vtl_strerror(r),
				     removed ? " (the cartridges before it were removed)" : "");
			break;
		}
		r = catalog_cartridge_remove(ctl->cat, bc);
		if (r) {
			rc = ctl_cat_err(ctl, r, "%s was deleted from the pool but not from the catalog (run 'vtlctl "
					 "cartridge remove %s' again)", bc, bc);
			break;
		}
		char what[128];
		snprintf(what, sizeof what, "remove %s%s%s", bc, force ? " (forced)" : "",
			 in_pool[i] ? "" : " (no pool copy)");
		if (catalog_event(ctl->cat, ctl->actor, what))
			ctl_warn(ctl, "%s was removed, but the event log could not be written", bc);
		if (!in_pool[i])
			ctl_warn(ctl, "%s had no cartridge in the pool; its catalog row was removed", bc);
		removed++;
	}
	if (ctl->json) {
		struct json j;
		json_init(&j, stdout);
		json_obj(&j, NULL);
		json_arr(&j, "removed");
		for (int i = 0; i < removed; i++)
			json_str(&j, NULL, pos[i]);
		json_arr_end(&j);
		json_obj_end(&j);
		json_end(&j);
	} else {
		for (int i = 0; i < removed; i++)
			printf("removed %s\n", pos[i]);
	}
	free(in_pool);
	return rc;
}
