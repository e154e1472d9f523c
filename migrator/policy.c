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

static int queue_job(const struct policy_ctx *ctx, struct view *v, enum cat_job_kind kind, const char *barcode,
		     struct policy_list *l, char *err, size_t errlen)
{
	int64_t id;
	int rc = catalog_job_add(ctx->cat, kind, barcode, &id);
	if (rc == VTL_OK)
		rc = mark_busy(v, barcode);
	if (rc) {
		snprintf(err, errlen, "queueing a %s of %s: %s", kind == CAT_JOB_VERIFY ? "verify" : "copy", barcode,
			 catalog_last_error(ctx->cat));
		return rc;
	}
	list_add(l, barcode);
	return VTL_OK;
}

static int queue_copy(const struct policy_ctx *ctx, struct view *v, const char *barcode, struct policy_list *l,
		      char *err, size_t errlen)
{
	return queue_job(ctx, v, CAT_JOB_MIGRATE, barcode, l, err, errlen);
}

/* A good stacked copy: one a recall can stage (a native export copy holds the host's blocks, not the records). */
static bool stacked_good(const struct cat_copy *k)
{
	return !strcmp(k->state, CAT_COPY_GOOD) && strncmp(k->digest, COPY_NATIVE_PREFIX, strlen(COPY_NATIVE_PREFIX)) != 0;
}

static int count_size_unknown(const struct cat_copy *k, void *arg)
{
	*(unsigned *)arg += stacked_good(k) && !k->block_size;
	return 0;
}

/* Whether a good copy of barcode lacks its block size (recorded before schema 5): a verify records it. */
static int size_unknown(const struct policy_ctx *ctx, const char *barcode, bool *unknown, char *err, size_t errlen)
{
	unsigned n = 0;
	int rc = catalog_copy_list(ctx->cat, barcode, count_size_unknown, &n);
	if (rc)
		snprintf(err, errlen, "reading the copies of %s: %s", barcode, catalog_last_error(ctx->cat));
	*unknown = n > 0;
	return rc;
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
		/* A copy from before schema 5 cannot be compared: a verify records its block size, a later pass releases. */
		bool unknown;
		if ((rc = size_unknown(ctx, c->barcode, &unknown, err, errlen)) != VTL_OK ||
		    (unknown && (rc = queue_job(ctx, v, CAT_JOB_VERIFY, c->barcode, &r->verify, err, errlen)) != VTL_OK))
			return rc;
		if (unknown)
			continue;
		char why[96], e[256];
		snprintf(why, sizeof why, "pool %.1f%% full: above the low-water mark of %u%% since it reached the "
			 "high-water mark of %u%%", r->after.percent, ctx->cfg->low_water, ctx->cfg->high_water);
		uint64_t freed = 0;
		rc = policy_release(ctx->cat, ctx->pool, ctx->cfg, c->barcode, why, &freed, e, sizeof e);
		if (rc == VTL_E_BUSY) {
			list_add(&r->busy, c->barcode); /* a host or another process has it: the next pass tries again */
			continue;
		}
		if (rc == VTL_E_CORRUPT || rc == VTL_E_MEDIUM || rc == VTL_E_INVAL) {
			/* Its disk copy cannot be shown to be its tape copies' (the event log says why): kept, and the next. */
			list_add(&r->refused, c->barcode);
			log_warn("policy: %s", e);
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
	if (!stacked_good(k))
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


/* Whether barcode may give up its disk copy now: premigrated, not loaded, no job; *cc its row; err says why not. */
static int release_check(struct vtl_catalog *cat, const struct vtl_policy_config *cfg, const char *barcode,
			 struct cat_cartridge *cc, char *err, size_t errlen)
{
	struct view v = {0};
	int rc = catalog_cartridge_get(cat, barcode, cc);
	if (rc == VTL_OK)
		rc = jobs_of(cat, &v);
	bool job = has_job(&v, barcode);
	view_free(&v);
	if (rc) {
		snprintf(err, errlen, rc == VTL_E_NOTFOUND ? "there is no cartridge %s" : "%s: %s", barcode,
			 catalog_last_error(cat));
		return rc;
	}
	if (cc->cache != CAT_CACHE_PREMIGRATED) {
		snprintf(err, errlen, "%s is %s, not premigrated: only a cartridge whose data has a verified copy on "
			 "physical tape can give up its disk copy", barcode,
			 (unsigned)cc->cache < VTL_ARRAY_SIZE(cache_names)? cache_names[cc->cache] : "?");
		return VTL_E_INVAL;
	}
	if (!strcmp(cc->state, "loaded") || job) {
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

/* ------------------------------------------ the disk copy against the tape copies */

/*
 * A disk copy is given up only for tape copies that hold the same record
 * stream: as many bytes to end of data, and the same digest, recomputed from
 * the disk with each copy's block size. A catalog that says premigrated over
 * a disk copy that changed since (a first write whose catalog change was
 * lost, a restore of an old catalog) must never lead to releasing the newer
 * data. A mismatch says nothing about which side is wrong, unless the disk
 * copy fails its own checks: then it is damaged, and only the forced
 * release, with evidence that a tape copy holds what the catalog recorded
 * before the damage, gives it up.
 */

/* The good stacked copies of a cartridge, oldest first. */
struct good_copies {
	struct cat_copy *k;
	size_t n, cap;
};

static int collect_good(const struct cat_copy *k, void *arg)
{
	struct good_copies *g = arg;
	if (!stacked_good(k))
		return 0;
	int rc = vtl_grow((void **)&g->k, &g->cap, g->n, sizeof *g->k);
	if (rc)
		return rc;
	g->k[g->n++] = *k;
	return 0;
}

/* What the disk copy is, compared with the good copies. */
enum disk_verdict {
	DISK_SAME,      /* every good copy holds its record stream: it may be released */
	DISK_DIFFERENT, /* its records are sound and a good copy holds another stream; or it cannot be compared */
	DISK_DAMAGED,   /* damaged ranges, or records that fail their checks */
};

/* The disk copy's digest for each good copy's block size: *differ = the first copy whose digest is not it. */
static int compare_digests(struct vtl_cart *c, const struct good_copies *g, const struct cat_copy **differ,
			   char disk[COPY_DIGEST_MAX])
{
	uint32_t *size = calloc(g->n, sizeof *size);
	char (*dg)[COPY_DIGEST_MAX] = calloc(g->n, sizeof *dg);
	int rc = size && dg ? VTL_OK : VTL_E_NOMEM;
	size_t nd = 0;
	for (size_t i = 0; rc == VTL_OK && i < g->n; i++) {
		size_t j = 0;
		while (j < nd && size[j] != g->k[i].block_size)
			j++;
		if (j == nd)
			size[nd++] = g->k[i].block_size;
	}
	for (size_t at = 0; rc == VTL_OK && at < nd; at += COPY_DIGEST_SIZES_MAX)
		rc = copy_stream_digests(c, size + at, nd - at < COPY_DIGEST_SIZES_MAX ? nd - at : COPY_DIGEST_SIZES_MAX,
					 dg + at);
	*differ = NULL;
	for (size_t i = 0; rc == VTL_OK && !*differ && i < g->n; i++) {
		size_t j = 0;
		while (size[j] != g->k[i].block_size)
			j++;
		if (strcmp(dg[j], g->k[i].digest) != 0) {
			*differ = &g->k[i];
			snprintf(disk, COPY_DIGEST_MAX, "%s", dg[j]);
		}
	}
	free(size);
	free(dg);
	return rc;
}

/* err: the disk copy's damage in words (the first range, and how many there are). */
static void damage_words(struct vtl_cart *c, const char *barcode, char *err, size_t errlen)
{
	struct vtl_damage d;
	size_t n = vtl_cart_damage(c, &d, 1);
	snprintf(err, errlen, "%s: its disk copy is damaged: objects %llu..%llu unreadable (%s, segment file "
		 "%08u.seg)%s", barcode, (unsigned long long)d.first, (unsigned long long)(d.first + d.count - 1),
		 vtl_damage_kind_name(d.kind), (unsigned)d.seq, n > 1 ? " and more ranges (vtlctl cartridge show)" : "");
}

/*
 * Compares the disk copy c (open with its write lock, at end of data) with
 * g; *v says what it is. VTL_OK when it may be released (DISK_SAME);
 * otherwise the refusal's code and err say why: VTL_E_MEDIUM (damaged),
 * VTL_E_CORRUPT (differs), VTL_E_INVAL (a copy without its block size).
 */
static int disk_compare(struct vtl_cart *c, const char *barcode, const struct good_copies *g, enum disk_verdict *v,
			char *err, size_t errlen)
{
	*v = DISK_DAMAGED;
	if (vtl_cart_damage(c, NULL, 0)) {
		damage_words(c, barcode, err, errlen);
		return VTL_E_MEDIUM;
	}
	*v = DISK_DIFFERENT;
	uint64_t stream = vtl_cart_stream_size(c);
	const struct cat_copy *differ = NULL;
	for (size_t i = 0; !differ && i < g->n; i++)
		if (g->k[i].length != stream)
			differ = &g->k[i];
	if (!g->n || differ) {
		snprintf(err, errlen, "%s: its disk copy holds %llu bytes of records, %s %llu", barcode,
			 (unsigned long long)stream, g->n ? "a good tape copy holds" : "and no good tape copy holds",
			 (unsigned long long)(differ ? differ->length : 0));
	} else {
		for (size_t i = 0; !differ && i < g->n; i++)
			if (!g->k[i].block_size)
				differ = &g->k[i];
		if (differ) {
			snprintf(err, errlen, "%s: its copy on %s file %u was recorded without its block size, so its digest "
				 "cannot be compared with the disk copy's: not released; vtlctl verify %s reads the copy "
				 "back and records it", barcode, differ->tape, differ->file, barcode);
			return VTL_E_INVAL;
		}
		char disk[COPY_DIGEST_MAX] = "";
		int rc = compare_digests(c, g, &differ, disk);
		if (rc) {
			snprintf(err, errlen, "%s: reading its disk copy for its digest: %s", barcode, vtl_strerror(rc));
			return rc;
		}
		if (!differ) {
			*v = DISK_SAME;
			return VTL_OK;
		}
		snprintf(err, errlen, "%s: its disk copy's digest is %s, its copy on %s file %u has %s", barcode, disk,
			 differ->tape, differ->file, differ->digest);
	}
	/* Which side is wrong: only the disk copy's own checks can say, here. */
	uint64_t bad_at = 0;
	size_t at = strlen(err);
	int rc = copy_stream_check(c, &bad_at);
	if (rc == VTL_E_MEDIUM) {
		*v = DISK_DAMAGED;
		snprintf(err + at, errlen - at, "; its disk copy is damaged: its records fail their checks near stream "
			 "byte %llu", (unsigned long long)bad_at);
		return VTL_E_MEDIUM;
	}
	snprintf(err + at, errlen - at, "; not released: %s (check it with vtlctl cartridge show; vtlctl verify %s "
		 "reads the tape copies back against their digests; a new copy makes it premigrated again)",
		 rc == VTL_OK ? "its records are sound, so it may hold data the copies do not; which side is wrong is "
				"not known" : "its records could not be read", barcode);
	return VTL_E_CORRUPT;
}

/*
 * A damaged disk copy may be given up for a good copy when the evidence
 * says the copy holds what the host wrote last: every good copy holds the
 * bytes the catalog recorded for the cartridge (at its last unload, before
 * the damage) and those with the same block size agree; one of them was
 * verified (read back against its digest) and has its block size; and the
 * disk copy holds no more objects or bytes than the catalog recorded (it
 * may hold data written after the copy). *use = the newest verified copy.
 */
static int forced_evidence(struct vtl_cart *c, const char *barcode, const struct cat_cartridge *cc,
			   const struct good_copies *g, const struct cat_copy **use, char *err, size_t errlen)
{
	struct vtl_position pos;
	vtl_cart_position(c, &pos);
	*use = NULL;
	if (!g->n) {
		snprintf(err, errlen, "%s: no good copy on physical tape restores it: its disk copy stays (what reads can "
			 "still be restored from it; docs/operations.md, \"A damaged cartridge\")", barcode);
		return VTL_E_NOTFOUND;
	}
	if (pos.eod > cc->eod || vtl_cart_stream_size(c) > cc->bytes_stored) {
		snprintf(err, errlen, "%s: its disk copy holds %llu objects (%llu bytes of records), more than the %llu "
			 "objects (%llu bytes) the catalog recorded: it may hold data written after its copies; not "
			 "released", barcode, (unsigned long long)pos.eod, (unsigned long long)vtl_cart_stream_size(c),
			 (unsigned long long)cc->eod, (unsigned long long)cc->bytes_stored);
		return VTL_E_CORRUPT;
	}
	for (size_t i = 0; i < g->n; i++) {
		const struct cat_copy *k = &g->k[i];
		if (k->length != cc->bytes_stored) {
			snprintf(err, errlen, "%s: its copy on %s file %u holds %llu bytes, the catalog recorded %llu bytes "
				 "stored for the cartridge: that copy may not hold what the host wrote last; not released",
				 barcode, k->tape, k->file, (unsigned long long)k->length,
				 (unsigned long long)cc->bytes_stored);
			return VTL_E_CORRUPT;
		}
		for (size_t j = 0; j < i; j++)
			if (g->k[j].block_size == k->block_size && k->block_size && strcmp(g->k[j].digest, k->digest)) {
				snprintf(err, errlen, "%s: its copies on %s file %u and %s file %u have different digests (%s, "
					 "%s): not released; vtlctl verify %s tells which is sound", barcode, g->k[j].tape,
					 g->k[j].file, k->tape, k->file, g->k[j].digest, k->digest, barcode);
				return VTL_E_CORRUPT;
			}
		if (k->verified_at && k->block_size)
			*use = k;
	}
	if (!*use) {
		snprintf(err, errlen, "%s: none of its good copies has been verified with its block size recorded: run "
			 "vtlctl verify %s first (giving up the disk copy gives up what of it still reads)", barcode,
			 barcode);
		return VTL_E_INVAL;
	}
	return VTL_OK;
}

/* ---------------------------------------------------------------- release */

/* What a release is asked to do, and what it did. */
struct release {
	const char *barcode, *why;
	bool force;
	uint64_t freed;
	bool forced;       /* a damaged disk copy was given up */
	bool delete_files; /* forced, and the erase could not cut the damaged files: they go whole once closed */
	char *did;
	size_t didlen;
};

#define EVENT_LEN sizeof(((struct cat_event *)0)->what) /* the longest line the event log keeps, with its NUL */

/* Records what (cut to what the event log keeps) as the policy's event. */
static int policy_event(struct vtl_catalog *cat, const char *what)
{
	char line[EVENT_LEN];
	size_t n = strnlen(what, sizeof line - 1);
	memcpy(line, what, n);
	line[n] = 0;
	return catalog_event(cat, ACTOR, line);
}

/* Marks r's cartridge migrated, then empties c (open with its write lock, compared already). */
static int release_locked(struct vtl_catalog *cat, struct vtl_cart *c, struct release *r, const struct cat_cartridge *cc,
			  char *err, size_t errlen)
{
	struct vtl_position pos;
	int rc = vtl_cart_space_eod(c);
	if (rc) {
		snprintf(err, errlen, "%s: reading its end of data: %s", r->barcode, vtl_strerror(rc));
		return rc;
	}
	vtl_cart_position(c, &pos);
	struct good_copies g = {0};
	if ((rc = catalog_copy_list(cat, r->barcode, collect_good, &g)) != VTL_OK) {
		snprintf(err, errlen, "reading the copies of %s: %s", r->barcode, catalog_last_error(cat));
		free(g.k);
		return rc;
	}
	enum disk_verdict v;
	const struct cat_copy *use = NULL;
	rc = disk_compare(c, r->barcode, &g, &v, err, errlen);
	if (rc == VTL_E_MEDIUM && v == DISK_DAMAGED && !r->force) {
		size_t at = strlen(err);
		snprintf(err + at, errlen - at, "; not released: vtlctl release --force %s gives it up for a good tape "
			 "copy (docs/operations.md, \"A damaged cartridge\")", r->barcode);
	} else if (rc == VTL_E_MEDIUM && v == DISK_DAMAGED) {
		char why[512];
		rc = forced_evidence(c, r->barcode, cc, &g, &use, why, sizeof why);
		size_t at = strlen(err);
		if (rc == VTL_OK)
			r->forced = true;
		else /* the damage, then why the forced release refuses */
			snprintf(err + at, errlen - at, "; %s", why);
	} else if (rc == VTL_E_CORRUPT && r->force) {
		size_t at = strlen(err);
		snprintf(err + at, errlen - at, "; --force gives up only a damaged disk copy");
	}
	if (rc) {
		char what[1024];
		snprintf(what, sizeof what, "release %s%s refused: %s", r->barcode, r->force ? " --force" : "", err);
		/* Best effort: the refusal changes nothing, and err tells the caller the same. */
		if (policy_event(cat, what) != VTL_OK)
			log_warn("policy: cannot record an event: %s", catalog_last_error(cat));
		free(g.k);
		return rc;
	}
	char copy[CAT_BARCODE_MAX + CAT_DIGEST_MAX + 96] = "";
	if (use)
		snprintf(copy, sizeof copy, "%s file %u (%llu bytes, %s, verified)", use->tape, use->file,
			 (unsigned long long)use->length, use->digest);
	free(g.k);
	/* Migrated first: a crash from here on leaves a migrated cartridge, which a recall empties and restages. */
	if ((rc = catalog_cartridge_set_cache(cat, r->barcode, CAT_CACHE_MIGRATED)) != VTL_OK) {
		snprintf(err, errlen, "%s: %s", r->barcode, catalog_last_error(cat));
		return rc;
	}
	if ((rc = vtl_cart_rewind(c)) != VTL_OK || (rc = vtl_cart_erase(c)) != VTL_OK) {
		if (r->forced && rc == VTL_E_MEDIUM) {
			r->delete_files = true; /* damage where the cut would go: nowhere to cut, so the files go whole */
		} else {
			snprintf(err, errlen, "%s: emptying its files: %s (it is migrated; a recall empties it again)",
				 r->barcode, vtl_strerror(rc));
			return rc;
		}
	}
	r->freed = pos.stored_bytes;
	char what[512];
	if (r->forced)
		snprintf(what, sizeof what, "release %s forced: its damaged disk copy (%llu bytes) given up for its copy on "
			 "%s; it is migrated, the next load or vtlctl recall restores it whole (%s)", r->barcode,
			 (unsigned long long)pos.stored_bytes, copy, r->why);
	else
		snprintf(what, sizeof what, "release %s: disk copy of %llu bytes released (%s)", r->barcode,
			 (unsigned long long)pos.stored_bytes, r->why);
	if (r->forced)
		snprintf(r->did, r->didlen, "%s", what);
	if ((rc = policy_event(cat, what)) != VTL_OK)
		snprintf(err, errlen, "%s: recording the release: %s", r->barcode, catalog_last_error(cat));
	return rc;
}

static int release(struct vtl_catalog *cat, struct vtl_pool *pool, const struct vtl_policy_config *cfg,
		   struct release *r, char *err, size_t errlen)
{
	struct cat_cartridge cc;
	int rc = release_check(cat, cfg, r->barcode, &cc, err, errlen);
	if (rc)
		return rc;
	/* The write lock: a cartridge a drive or a copy holds open is skipped, and none can open it meanwhile. */
	struct vtl_cart_params p = {0};
	struct vtl_cart *c;
	rc = vtl_cart_open(pool, r->barcode, &p, &c);
	if (rc) {
		snprintf(err, errlen, "%s: %s", r->barcode,
			 rc == VTL_E_BUSY ? "open elsewhere (loaded in a drive of vtld, or being copied)" : vtl_strerror(rc));
		return rc;
	}
	/* Checked again under the lock: a host may have loaded and written it since the first look. */
	rc = release_check(cat, cfg, r->barcode, &cc, err, errlen);
	if (rc == VTL_OK)
		rc = release_locked(cat, c, r, &cc, err, errlen);
	int crc = vtl_cart_close(c);
	if (rc == VTL_OK && crc && !r->delete_files) {
		snprintf(err, errlen, "%s: closing it: %s", r->barcode, vtl_strerror(crc));
		rc = crc;
	}
	/* Migrated already: a drive that loads it meanwhile waits for a recall, which empties a damaged disk copy. */
	if (rc == VTL_OK && r->delete_files &&
	    ((rc = vtl_cart_delete(pool, r->barcode)) != VTL_OK || (rc = vtl_cart_create(pool, r->barcode)) != VTL_OK))
		snprintf(err, errlen, "%s: removing its damaged files: %s (it is migrated; a recall empties it)", r->barcode,
			 vtl_strerror(rc));
	return rc;
}

int policy_release(struct vtl_catalog *cat, struct vtl_pool *pool, const struct vtl_policy_config *cfg,
		   const char *barcode, const char *why, uint64_t *freed, char *err, size_t errlen)
{
	char did[512];
	struct release r = {.barcode = barcode, .why = why, .did = did, .didlen = sizeof did};
	int rc = release(cat, pool, cfg, &r, err, errlen);
	*freed = r.freed;
	return rc;
}

int policy_release_forced(struct vtl_catalog *cat, struct vtl_pool *pool, const struct vtl_policy_config *cfg,
			  const char *barcode, const char *why, uint64_t *freed, char *did, size_t didlen, char *err,
			  size_t errlen)
{
	struct release r = {.barcode = barcode, .why = why, .force = true, .did = did, .didlen = didlen};
	did[0] = 0;
	int rc = release(cat, pool, cfg, &r, err, errlen);
	*freed = r.freed;
	return rc;
}
