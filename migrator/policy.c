/* SPDX-License-Identifier: Apache-2.0 */
#include "migrator/policy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cartridge.h"
#include "common/grow.h"
#include "common/log.h"
#include "common/vtl_error.h"
#include "migrator/copy.h"

#define ACTOR "policy"

static const char *const cache_names[] = {"resident", "premigrated", "migrated", "recalling"};

/* The library's cartridges, least recently mounted first, and the barcodes that have a job. */
struct view {
	struct cat_cartridge *c;
	size_t n, cap;
	char (*busy)[CAT_BARCODE_MAX + 1]; /* barcodes with a queued or running job */
	size_t nbusy, busycap;
};

static int collect_cart(const struct cat_cartridge *c, void *arg)
{
	struct view *v = arg;
	int rc = vtl_grow((void **)&v->c, &v->cap, v->n, sizeof *v->c);
	if (rc)
		return rc;
	v->c[v->n++] = *c;
	return 0;
}

static int mark_busy(struct view *v, const char *barcode)
{
	int rc = vtl_grow((void **)&v->busy, &v->busycap, v->nbusy, sizeof *v->busy);
	if (rc)
		return rc;
	snprintf(v->busy[v->nbusy++], sizeof *v->busy, "%s", barcode);
	return 0;
}

static int collect_job(const struct cat_job *j, void *arg)
{
	return mark_busy(arg, j->barcode);
}

static bool has_job(const struct view *v, const char *barcode)
{
	for (size_t i = 0; i < v->nbusy; i++)
		if (!strcmp(v->busy[i], barcode))
			return true;
	return false;
}

static int jobs_of(struct vtl_catalog *cat, struct view *v)
{
	int rc = catalog_job_list(cat, CAT_JOB_QUEUED, collect_job, v);
	return rc ? rc : catalog_job_list(cat, CAT_JOB_RUNNING, collect_job, v);
}

/* Least recently mounted first; the barcode breaks ties so that passes are repeatable. */
static int by_lru(const void *a, const void *b)
{
	const struct cat_cartridge *x = a, *y = b;
	if (x->last_mounted != y->last_mounted)
		return x->last_mounted < y->last_mounted ? -1 : 1;
	return strcmp(x->barcode, y->barcode);
}

static void view_free(struct view *v)
{
	free(v->c);
	free(v->busy);
}

static void list_add(struct policy_list *l, const char *barcode)
{
	if (l->n < POLICY_LIST_MAX)
		snprintf(l->barcode[l->n], sizeof l->barcode[l->n], "%s", barcode);
	l->n++;
}

bool policy_full(uint64_t stored, uint64_t capacity)
{
	if (!capacity)
		return false;
	uint64_t ew = capacity / POLICY_EW_DIVISOR;
	if (ew > POLICY_EW_MAX)
		ew = POLICY_EW_MAX;
	return stored >= capacity - ew;
}

/* Neither in a drive nor the subject of a job: a cartridge the policy may act on. */
static bool idle_now(const struct view *v, const struct cat_cartridge *c)
{
	return strcmp(c->state, "loaded") != 0 && !has_job(v, c->barcode);
}

/* The rule that makes a resident cartridge a candidate for a copy, or NULL. */
static struct policy_list *rule_for(const struct policy_ctx *ctx, const struct cat_library *lib,
				    const struct cat_cartridge *c, struct policy_report *r)
{
	const struct vtl_policy_config *p = ctx->cfg;
	if ((p->premigrate & VTL_POLICY_FULL) && policy_full(c->bytes_stored, c->capacity))
		return &r->full;
	if ((p->premigrate & VTL_POLICY_EJECTED) && lib->ies && c->element != CAT_NO_ELEMENT &&
	    c->element >= lib->ie_first && c->element - lib->ie_first < lib->ies)
		return &r->ejected;
	/* A cartridge with data that was never mounted (imported, say) has been idle for as long as we know. */
	if ((p->premigrate & VTL_POLICY_IDLE) && p->idle && ctx->now - c->last_mounted >= (int64_t)p->idle)
		return &r->idle;
	return NULL;
}

static int queue_copy(const struct policy_ctx *ctx, struct view *v, const char *barcode, struct policy_list *l,
		      char *err, size_t errlen)
{
	int64_t id;
	int rc = catalog_job_add(ctx->cat, CAT_JOB_MIGRATE, barcode, &id);
	if (rc == VTL_OK)
		rc = mark_busy(v, barcode);
	if (rc) {
		snprintf(err, errlen, "queueing a copy of %s: %s", barcode, catalog_last_error(ctx->cat));
		return rc;
	}
	list_add(l, barcode);
	return VTL_OK;
}

/* Whether every copy pool of the configuration holds a good copy of barcode. */
static int all_copies(const struct policy_ctx *ctx, const char *barcode, bool *all, char *err, size_t errlen)
{
	unsigned have = 0;
	int rc = policy_copy_pools(ctx->cat, ctx->cfg, barcode, &have);
	if (rc)
		snprintf(err, errlen, "reading the copies of %s: %s", barcode, catalog_last_error(ctx->cat));
	*all = have == (1u << ctx->cfg->copy_pools) - 1;
	return rc;
}

/*
 * (a) A copy of every resident cartridge holding data that a rule names, and
 * of every premigrated one that lacks a copy in one of the copy pools.
 */
static int queue_candidates(const struct policy_ctx *ctx, const struct cat_library *lib, struct view *v,
			    struct policy_report *r, char *err, size_t errlen)
{
	for (size_t i = 0; i < v->n; i++) {
		const struct cat_cartridge *c = &v->c[i];
		if (c->cache == CAT_CACHE_PREMIGRATED && ctx->cfg->copy_pools > 1 && idle_now(v, c)) {
			bool all;
			int rc = all_copies(ctx, c->barcode, &all, err, errlen);
			if (rc == VTL_OK && !all)
				rc = queue_copy(ctx, v, c->barcode, &r->pools, err, errlen);
			if (rc)
				return rc;
			continue;
		}
		if (c->cache != CAT_CACHE_RESIDENT || !c->bytes_stored || !idle_now(v, c))
			continue;
		struct policy_list *l = rule_for(ctx, lib, c, r);
		int rc = l ? queue_copy(ctx, v, c->barcode, l, err, errlen) : VTL_OK;
		if (rc)
			return rc;
	}
	return VTL_OK;
}

/* (b) Releases premigrated disk copies, least recently mounted first, until the fill is at low water. */
static int release_lru(const struct policy_ctx *ctx, struct view *v, struct policy_report *r, char *err,
		       size_t errlen)
{
	for (size_t i = 0; i < v->n && r->after.percent > ctx->cfg->low_water; i++) {
		const struct cat_cartridge *c = &v->c[i];
		if (c->cache != CAT_CACHE_PREMIGRATED || !idle_now(v, c))
			continue;
		bool all;
		int rc = all_copies(ctx, c->barcode, &all, err, errlen);
		if (rc)
			return rc;
		if (!all)
			continue; /* its copy in another pool is queued: released once that is made */
		char why[96], e[256];
		snprintf(why, sizeof why, "pool %.1f%% full: above the low-water mark of %u%% since it reached the "
			 "high-water mark of %u%%", r->after.percent, ctx->cfg->low_water, ctx->cfg->high_water);
		uint64_t freed = 0;
		rc = policy_release(ctx->cat, ctx->pool, ctx->cfg, c->barcode, why, &freed, e, sizeof e);
		if (rc == VTL_E_BUSY) {
			list_add(&r->busy, c->barcode); /* a host or another process has it: the next pass tries again */
			continue;
		}
		if (rc == VTL_OK)
			rc = vtl_pool_fill(ctx->pool, false, &r->after);
		if (rc) {
			snprintf(err, errlen, "%s", e);
			return rc;
		}
		list_add(&r->released, c->barcode);
		r->released_bytes += freed;
	}
	return VTL_OK;
}

/*
 * (c) Still above low water with nothing premigrated left to release: copies
 * of the least recently mounted resident cartridges, enough to get there
 * with those already queued, so that a later pass can release them.
 */
static int queue_pressure(const struct policy_ctx *ctx, struct view *v, struct policy_report *r, char *err,
			  size_t errlen)
{
	double low = (double)ctx->cfg->low_water / 100.0 * (double)r->after.size_bytes;
	uint64_t need = (double)r->after.used_bytes > low ? (uint64_t)((double)r->after.used_bytes - low) : 0;
	uint64_t queued = 0;
	for (size_t i = 0; i < v->n && queued < need; i++) {
		const struct cat_cartridge *c = &v->c[i];
		if (c->cache != CAT_CACHE_RESIDENT || !c->bytes_stored || !strcmp(c->state, "loaded"))
			continue;
		/* Copies queued before (by a rule or an earlier pass) count: each pass must not queue more. */
		int rc = has_job(v, c->barcode) ? VTL_OK : queue_copy(ctx, v, c->barcode, &r->pressure, err, errlen);
		if (rc)
			return rc;
		queued += c->bytes_stored;
	}
	return VTL_OK;
}

int policy_pass(const struct policy_ctx *ctx, struct policy_report *r, char *err, size_t errlen)
{
	memset(r, 0, sizeof *r);
	r->time = ctx->now;
	struct cat_library lib;
	struct view v = {0};
	int rc = catalog_library_get(ctx->cat, ctx->library, &lib);
	if (rc == VTL_OK)
		rc = catalog_cartridge_list(ctx->cat, lib.id, collect_cart, &v);
	if (rc == VTL_OK)
		rc = jobs_of(ctx->cat, &v);
	if (rc) {
		snprintf(err, errlen, "reading library %s from the catalog: %s", ctx->library, catalog_last_error(ctx->cat));
		view_free(&v);
		return rc;
	}
	if (v.n)
		qsort(v.c, v.n, sizeof *v.c, by_lru);
	rc = queue_candidates(ctx, &lib, &v, r, err, errlen);
	if (rc == VTL_OK && (rc = vtl_pool_fill(ctx->pool, true, &r->before)) != VTL_OK)
		snprintf(err, errlen, "measuring the pool: %s", vtl_strerror(rc));
	if (rc == VTL_OK) {
		r->after = r->before;
		bool pressure = r->before.percent >= ctx->cfg->high_water ||
				(ctx->draining && r->before.percent > ctx->cfg->low_water);
		if (pressure) {
			rc = release_lru(ctx, &v, r, err, errlen);
			if (rc == VTL_OK && r->after.percent > ctx->cfg->low_water)
				rc = queue_pressure(ctx, &v, r, err, errlen);
			r->draining = r->after.percent > ctx->cfg->low_water;
		}
	}
	view_free(&v);
	return rc;
}

/* ------------------------------------------------------------- release */

struct pool_walk {
	struct vtl_catalog *cat;
	const struct vtl_policy_config *cfg;
	unsigned have;
	int rc;
};

static int pool_of_copy(const struct cat_copy *k, void *arg)
{
	struct pool_walk *w = arg;
	struct cat_ptape t;
	if (strcmp(k->state, CAT_COPY_GOOD) != 0 || !strncmp(k->digest, COPY_NATIVE_PREFIX, strlen(COPY_NATIVE_PREFIX)))
		return 0;
	int rc = catalog_ptape_get(w->cat, k->tape, &t);
	if (rc == VTL_E_NOTFOUND)
		return 0; /* a tape taken out of the catalog holds nothing to count on */
	if (rc)
		return w->rc = rc;
	for (unsigned i = 0; i < w->cfg->copy_pools; i++)
		if (!strcmp(t.pool, w->cfg->copy_pool[i]))
			w->have |= 1u << i;
	return 0;
}

int policy_copy_pools(struct vtl_catalog *cat, const struct vtl_policy_config *cfg, const char *barcode,
		      unsigned *have)
{
	struct pool_walk w = {.cat = cat, .cfg = cfg};
	int rc = catalog_copy_list(cat, barcode, pool_of_copy, &w);
	*have = w.have;
	return rc ? rc : w.rc;
}

const char *policy_next_pool(const struct vtl_policy_config *cfg, unsigned have)
{
	for (unsigned i = 0; i < cfg->copy_pools; i++)
		if (!(have & (1u << i)))
			return cfg->copy_pool[i];
	return cfg->copy_pool[0];
}

/* Whether barcode may give up its disk copy now: premigrated, not loaded, no job; err says why not. */
static int release_check(struct vtl_catalog *cat, const struct vtl_policy_config *cfg, const char *barcode,
			 char *err, size_t errlen)
{
	struct cat_cartridge cc;
	struct view v = {0};
	int rc = catalog_cartridge_get(cat, barcode, &cc);
	if (rc == VTL_OK)
		rc = jobs_of(cat, &v);
	bool job = has_job(&v, barcode);
	view_free(&v);
	if (rc) {
		snprintf(err, errlen, rc == VTL_E_NOTFOUND ? "there is no cartridge %s" : "%s: %s", barcode,
			 catalog_last_error(cat));
		return rc;
	}
	if (cc.cache != CAT_CACHE_PREMIGRATED) {
		snprintf(err, errlen, "%s is %s, not premigrated: only a cartridge whose data has a verified copy on "
			 "physical tape can give up its disk copy", barcode,
			 (unsigned)cc.cache < sizeof cache_names / sizeof cache_names[0] ? cache_names[cc.cache] : "?");
		return VTL_E_INVAL;
	}
	if (!strcmp(cc.state, "loaded") || job) {
		snprintf(err, errlen, "%s %s", barcode, job ? "has a queued or running job" : "is loaded in a drive");
		return VTL_E_BUSY;
	}
	unsigned have = 0;
	if (cfg && (rc = policy_copy_pools(cat, cfg, barcode, &have)) != VTL_OK) {
		snprintf(err, errlen, "reading the copies of %s: %s", barcode, catalog_last_error(cat));
		return rc;
	}
	if (cfg && have != (1u << cfg->copy_pools) - 1) {
		snprintf(err, errlen, "%s has no good copy in pool %s yet (copy_pools): its disk copy stays until it has",
			 barcode, policy_next_pool(cfg, have));
		return VTL_E_INVAL;
	}
	return VTL_OK;
}

/* The good stacked copies of a cartridge whose length is not its disk copy's record stream. */
struct length_walk {
	uint64_t stream;
	unsigned good, differ;
	uint64_t first_differ;
};

static int copy_length(const struct cat_copy *k, void *arg)
{
	struct length_walk *w = arg;
	if (strcmp(k->state, CAT_COPY_GOOD) != 0 || !strncmp(k->digest, COPY_NATIVE_PREFIX, strlen(COPY_NATIVE_PREFIX)))
		return 0;
	w->good++;
	if (k->length != w->stream && w->differ++ == 0)
		w->first_differ = k->length;
	return 0;
}

/*
 * Whether the disk copy is the one the tape copies hold: every good stacked
 * copy has as many bytes as its record stream to end of data. A catalog
 * that says premigrated over a disk copy that changed since (a first write
 * whose catalog change was lost, a restore of an old catalog) must never
 * lead to releasing the newer data.
 */
static int release_matches(struct vtl_catalog *cat, struct vtl_cart *c, const char *barcode, char *err,
			   size_t errlen)
{
	struct length_walk w = {.stream = vtl_cart_stream_size(c)};
	int rc = catalog_copy_list(cat, barcode, copy_length, &w);
	if (rc) {
		snprintf(err, errlen, "reading the copies of %s: %s", barcode, catalog_last_error(cat));
		return rc;
	}
	if (!w.good || w.differ) {
		snprintf(err, errlen, "%s: its disk copy holds %llu bytes of records, %s %llu: not released (check it "
			 "with vtlctl cartridge show; a new copy makes it premigrated again)", barcode,
			 (unsigned long long)w.stream, w.good ? "a good tape copy holds" : "and no good tape copy holds",
			 (unsigned long long)(w.good ? w.first_differ : 0));
		return VTL_E_CORRUPT;
	}
	return VTL_OK;
}

/* Marks barcode migrated, then empties c (open with its write lock): *freed = the bytes it held. */
static int release_locked(struct vtl_catalog *cat, struct vtl_cart *c, const char *barcode, const char *why,
			  uint64_t *freed, char *err, size_t errlen)
{
	struct vtl_position pos;
	int rc = vtl_cart_space_eod(c);
	if (rc) {
		snprintf(err, errlen, "%s: reading its end of data: %s", barcode, vtl_strerror(rc));
		return rc;
	}
	vtl_cart_position(c, &pos);
	if ((rc = release_matches(cat, c, barcode, err, errlen)) != VTL_OK) {
		char what[512];
		snprintf(what, sizeof what, "release %s refused: %s", barcode, err);
		if (catalog_event(cat, ACTOR, what) != VTL_OK)
			log_warn("policy: cannot record an event: %s", catalog_last_error(cat));
		return rc;
	}
	/* Migrated first: a crash from here on leaves a migrated cartridge, which a recall empties and restages. */
	if ((rc = catalog_cartridge_set_cache(cat, barcode, CAT_CACHE_MIGRATED)) != VTL_OK) {
		snprintf(err, errlen, "%s: %s", barcode, catalog_last_error(cat));
		return rc;
	}
	if ((rc = vtl_cart_rewind(c)) != VTL_OK || (rc = vtl_cart_erase(c)) != VTL_OK) {
		snprintf(err, errlen, "%s: emptying its files: %s (it is migrated; a recall empties it again)", barcode,
			 vtl_strerror(rc));
		return rc;
	}
	*freed = pos.stored_bytes;
	char what[256];
	snprintf(what, sizeof what, "release %s: disk copy of %llu bytes released (%s)", barcode,
		 (unsigned long long)pos.stored_bytes, why);
	if ((rc = catalog_event(cat, ACTOR, what)) != VTL_OK)
		snprintf(err, errlen, "%s: recording the release: %s", barcode, catalog_last_error(cat));
	return rc;
}

int policy_release(struct vtl_catalog *cat, struct vtl_pool *pool, const struct vtl_policy_config *cfg,
		   const char *barcode, const char *why, uint64_t *freed, char *err, size_t errlen)
{
	*freed = 0;
	int rc = release_check(cat, cfg, barcode, err, errlen);
	if (rc)
		return rc;
	/* The write lock: a cartridge a drive or a copy holds open is skipped, and none can open it meanwhile. */
	struct vtl_cart_params p = {0};
	struct vtl_cart *c;
	rc = vtl_cart_open(pool, barcode, &p, &c);
	if (rc) {
		snprintf(err, errlen, "%s: %s", barcode,
			 rc == VTL_E_BUSY ? "open elsewhere (loaded in a drive of vtld, or being copied)" : vtl_strerror(rc));
		return rc;
	}
	/* Checked again under the lock: a host may have loaded and written it since the first look. */
	rc = release_check(cat, cfg, barcode, err, errlen);
	if (rc == VTL_OK)
		rc = release_locked(cat, c, barcode, why, freed, err, errlen);
	int crc = vtl_cart_close(c);
	if (rc == VTL_OK && crc) {
		snprintf(err, errlen, "%s: closing it: %s", barcode, vtl_strerror(crc));
		rc = crc;
	}
	return rc;
}
