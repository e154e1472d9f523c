/* SPDX-License-Identifier: Apache-2.0 */
#include "migrator/migrate.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/grow.h"
#include "common/lockorder.h"
#include "common/log.h"
#include "common/vtl_error.h"
#include "migrator/policy.h"

#define INVENTORY_MAX 4096
#define ACTOR "migrator"
#define STATE_GOOD CAT_COPY_GOOD
#define STATE_BAD CAT_COPY_BAD
#define TAPE_SCRATCH "scratch"
#define TAPE_FILLING "filling"
#define TAPE_FULL "full"
#define TAPE_ERROR "error"
#define TAPE_NATIVE "native" /* holds one native copy from its beginning: nothing is stacked after it */
/* A tape with less than this share of its capacity left after a copy is called full. */
#define TAPE_FULL_PERCENT 1

static int inventory(struct migrator *m, struct phys_element **out, unsigned *n, char *err, size_t errlen)
{
	struct phys_element *e = malloc(INVENTORY_MAX * sizeof *e);
	if (!e)
		return VTL_E_NOMEM;
	int rc = m->lib->ops->inventory(m->lib, e, INVENTORY_MAX, n);
	if (rc) {
		snprintf(err, errlen, "inventory of %s: %s", m->phys_name, phys_error(m->lib));
		free(e);
		return rc;
	}
	if (*n > INVENTORY_MAX)
		*n = INVENTORY_MAX;
	*out = e;
	return VTL_OK;
}

static int first_empty(const struct phys_element *e, unsigned n, enum phys_elem_type type)
{
	for (unsigned i = 0; i < n; i++)
		if (e[i].type == type && !e[i].full)
			return (int)i;
	return -1;
}

/* Empties drive d: rewinds, unloads, and the robot puts the tape in the first empty slot. */
static int empty_drive(struct migrator *m, const struct phys_element *e, unsigned n, unsigned d, char *err,
		       size_t errlen)
{
	int slot = first_empty(e, n, PHYS_ELEM_SLOT);
	if (slot < 0) {
		snprintf(err, errlen, "%s has no empty slot to put the tape of drive %u in", m->phys_name, d);
		return VTL_E_DST_FULL;
	}
	int rc = m->lib->ops->unload(m->lib, d);
	if (rc == VTL_OK)
		rc = m->lib->ops->move(m->lib, m->lib->drive_addr[d], e[slot].address);
	if (rc)
		snprintf(err, errlen, "emptying drive %u: %s", d, phys_error(m->lib));
	return rc;
}

static int mount_locked(struct migrator *m, const char *barcode, unsigned *d, char *err, size_t errlen);

int migrate_mount(struct migrator *m, const char *barcode, unsigned *d, char *err, size_t errlen)
{
	if (m->robot)
		vtl_lock(m->robot, VTL_LOCK_ROBOT);
	int rc = mount_locked(m, barcode, d, err, errlen);
	if (m->robot)
		vtl_unlock(m->robot, VTL_LOCK_ROBOT);
	return rc;
}

/* The mount, with no other job's mount between its inventory and its moves. */
static int mount_locked(struct migrator *m, const char *barcode, unsigned *d, char *err, size_t errlen)
{
	struct phys_element *e;
	unsigned n;
	int rc = inventory(m, &e, &n, err, errlen);
	if (rc)
		return rc;
	int at = phys_find(e, n, barcode);
	if (at < 0) {
		snprintf(err, errlen, "tape %s is not in %s", barcode, m->phys_name);
		free(e);
		return VTL_E_NOTFOUND;
	}
	int in = e[at].type == PHYS_ELEM_DRIVE ? phys_drive_of(m->lib, e[at].address) : -1;
	if (in >= 0 && (m->drive < 0 || in == m->drive)) {
		*d = (unsigned)in;
		free(e);
		return VTL_OK;
	}
	int want = m->drive;
	if (want < 0) {
		/* The first drive without a tape, else drive 0 after it gives its tape back. */
		want = 0;
		for (unsigned i = 0; i < m->lib->drives; i++) {
			int k = -1;
			for (unsigned j = 0; j < n; j++)
				if (e[j].type == PHYS_ELEM_DRIVE && e[j].address == m->lib->drive_addr[i])
					k = (int)j;
			if (k >= 0 && !e[k].full) {
				want = (int)i;
				break;
			}
		}
	}
	if ((unsigned)want >= m->lib->drives) {
		snprintf(err, errlen, "%s has no drive %d", m->phys_name, want);
		free(e);
		return VTL_E_INVAL;
	}
	for (unsigned j = 0; rc == VTL_OK && j < n; j++)
		if (e[j].type == PHYS_ELEM_DRIVE && e[j].address == m->lib->drive_addr[want] && e[j].full)
			rc = empty_drive(m, e, n, (unsigned)want, err, errlen);
	if (rc == VTL_OK && in >= 0)
		rc = m->lib->ops->unload(m->lib, (unsigned)in);
	if (rc == VTL_OK && (rc = m->lib->ops->move(m->lib, e[at].address, m->lib->drive_addr[want])))
		snprintf(err, errlen, "loading %s into drive %d: %s", barcode, want, phys_error(m->lib));
	free(e);
	if (rc == VTL_OK)
		*d = (unsigned)want;
	return rc;
}

/* ------------------------------------------------------------ choosing */

struct tapes {
	struct cat_ptape *t;
	size_t n, cap;
	const char *library;
	const char *pool; /* NULL: any */
};

static int collect(const struct cat_ptape *t, void *arg)
{
	struct tapes *ts = arg;
	if (strcmp(t->library, ts->library) != 0 || (ts->pool && strcmp(t->pool, ts->pool) != 0))
		return 0;
	int rc = vtl_grow((void **)&ts->t, &ts->cap, ts->n, sizeof *ts->t);
	if (rc)
		return rc;
	ts->t[ts->n++] = *t;
	return 0;
}

/* Makes tape this job's: VTL_OK, or VTL_E_BUSY when another job uses it (wait: once it is free, unless cancelled). */
static int reserve(struct migrator *m, const char *tape, bool wait)
{
	return m->reserve ? m->reserve(m->tapes_arg, tape, wait) : VTL_OK;
}

static void release(struct migrator *m, const char *tape)
{
	if (m->release)
		m->release(m->tapes_arg, tape);
}

/*
 * The tape for a copy of need bytes: a filling one first (copies stack), then
 * a scratch one; a native copy takes a scratch tape only. The tape chosen is
 * reserved for this job; one another job uses is skipped (*in_use, if not -1,
 * is the first such tape that would do). -1 if none.
 */
static int choose(struct migrator *m, const struct tapes *ts, uint64_t need, bool native, const char *const *tried,
		  unsigned ntried, int *in_use)
{
	*in_use = -1;
	for (int pass = native ? 1 : 0; pass < 2; pass++)
		for (size_t i = 0; i < ts->n; i++) {
			const struct cat_ptape *t = &ts->t[i];
			if (strcmp(t->state, pass ? TAPE_SCRATCH : TAPE_FILLING) != 0 || t->used + need > t->capacity)
				continue;
			bool seen = false;
			for (unsigned k = 0; k < ntried; k++)
				seen |= strcmp(tried[k], t->barcode) == 0;
			if (seen)
				continue;
			if (reserve(m, t->barcode, false) == VTL_OK)
				return (int)i;
			if (*in_use < 0)
				*in_use = (int)i; /* two jobs never append to one tape */
		}
	return -1;
}

/* ------------------------------------------------------------- copying */

/*
 * Records how job ended (rc: its result, err its reason). A job whose end
 * cannot be recorded is no success: it stays "running" in the catalog (the
 * next start queues it again) and the caller gets the catalog's error.
 */
static int job_end(struct migrator *m, int64_t job, int rc, uint64_t bytes, char *err, size_t errlen)
{
	if (!job)
		return rc;
	int ur = catalog_job_update(m->cat, job, rc ? CAT_JOB_FAILED : CAT_JOB_DONE, bytes, rc ? err : NULL);
	if (ur != VTL_OK) {
		size_t at = rc ? strlen(err) : 0; /* after a success err may hold an earlier attempt's words */
		snprintf(err + at, errlen - at, "%scannot record the end of job %lld: %s", at ? "; and " : "",
			 (long long)job, catalog_last_error(m->cat));
		return rc ? rc : ur;
	}
	return rc;
}

struct progress_ctx {
	struct migrator *m;
	const char *barcode;
	int64_t job;
};

static void on_progress(void *arg, const struct stream_progress *p)
{
	struct progress_ctx *x = arg;
	/* Best effort: bytes done are for display; the job's start and end are recorded and checked. */
	if (x->job)
		vtl_ignore(catalog_job_update(x->m->cat, x->job, CAT_JOB_RUNNING, p->bytes, NULL));
	if (x->m->progress)
		x->m->progress(x->m->progress_arg, x->barcode, p);
}

/* Positions drive d of tape t at the end of its last file: where the next copy goes. */
static int to_append_point(struct migrator *m, unsigned d, const struct cat_ptape *t)
{
	int rc = m->lib->ops->rewind(m->lib, d);
	if (rc == VTL_OK && t->files)
		rc = m->lib->ops->space_filemarks(m->lib, d, t->files);
	return rc;
}

/*
 * One attempt on tape t: mount, position, copy, verify if asked, record.
 * *tape_at_fault says whether a failure is the tape's (it was mounted and
 * failed a write, a position or the read-back) rather than the robot's or a
 * drive's that could not take it.
 */
static int attempt(struct migrator *m, struct vtl_cart *c, const struct cat_ptape *t, int64_t job,
		   struct migrate_report *rep, bool *tape_at_fault, char *err, size_t errlen)
{
	unsigned d;
	*tape_at_fault = false;
	int rc = migrate_mount(m, t->barcode, &d, err, errlen);
	if (rc)
		return rc;
	*tape_at_fault = true;
	if ((rc = to_append_point(m, d, t))) {
		snprintf(err, errlen, "positioning %s after its %u files: %s", t->barcode, t->files, phys_error(m->lib));
		return rc;
	}
	struct progress_ctx px = {m, vtl_cart_barcode(c), job};
	struct copy_job cj = {.ring = m->ring, .library = m->virt_name, .progress = on_progress, .progress_arg = &px,
			      .cancel = m->cancel};
	struct phys_drive_status before, after;
	bool counted = m->lib->ops->counts_backhitches && m->lib->ops->status(m->lib, d, &before) == VTL_OK;
	rc = m->native ? copy_write_native(m->lib, d, c, &cj, &rep->copy) : copy_write(m->lib, d, c, &cj, &rep->copy);
	if (counted && m->lib->ops->status(m->lib, d, &after) == VTL_OK) {
		rep->backhitches = after.backhitches - before.backhitches;
		rep->backhitches_known = true;
	}
	if (rc) {
		snprintf(err, errlen, "copy to %s: %s", t->barcode, rc == VTL_E_BUSY ? "cancelled" : phys_error(m->lib));
		return rc;
	}
	int64_t verified_at = 0;
	if (m->verify) {
		struct copy_result v;
		char why[256];
		struct copy_expect want = {.barcode = vtl_cart_barcode(c), .digest = rep->copy.digest,
					   .stream_bytes = rep->copy.stream_bytes};
		rc = m->native ? copy_verify_native(m->lib, d, c, rep->copy.digest, &v, why, sizeof why)
			       : copy_verify(m->lib, d, rep->copy.block, &want, &v, why, sizeof why);
		if (rc) {
			snprintf(err, errlen, "verify of the copy on %s: %s", t->barcode, why);
			return rc == VTL_E_MEDIUM ? VTL_E_IO : rc;
		}
		verified_at = (int64_t)time(NULL);
		rep->verified = true;
	}
	struct cat_copy k = {.file = t->files, .block = rep->copy.block, .length = rep->copy.stream_bytes,
			     .verified_at = verified_at, .block_size = rep->copy.block_size};
	snprintf(k.barcode, sizeof k.barcode, "%s", vtl_cart_barcode(c));
	snprintf(k.tape, sizeof k.tape, "%s", t->barcode);
	snprintf(k.digest, sizeof k.digest, "%s", rep->copy.digest);
	snprintf(k.state, sizeof k.state, STATE_GOOD);
	uint64_t used = t->used + rep->copy.tape_bytes;
	const char *state = m->native ? TAPE_NATIVE
			    : used + t->capacity / 100 * TAPE_FULL_PERCENT > t->capacity ? TAPE_FULL : TAPE_FILLING;
	if ((rc = catalog_copy_commit(m->cat, &k, used, state))) {
		snprintf(err, errlen, "recording the copy: %s", catalog_last_error(m->cat));
		return rc;
	}
	snprintf(rep->tape, sizeof rep->tape, "%s", t->barcode);
	rep->file = t->files;
	return VTL_OK;
}

/* A physical failure of the drive or tape (retry elsewhere), as opposed to the source's or the catalog's. */
static bool physical(int rc)
{
	return rc == VTL_E_IO || rc == VTL_E_EOM || rc == VTL_E_EOD;
}

static int copy_job(struct migrator *m, const char *barcode, int64_t job, struct migrate_report *rep, char *err,
		    size_t errlen)
{
	struct cat_cartridge cc;
	int rc = catalog_cartridge_get(m->cat, barcode, &cc);
	if (rc) {
		snprintf(err, errlen, "%s", catalog_last_error(m->cat));
		return rc;
	}
	if (strcmp(cc.state, "loaded") == 0) {
		snprintf(err, errlen, "%s is loaded in a drive: a host may be writing it; copy it once it is unloaded",
			 barcode);
		return VTL_E_BUSY;
	}
	struct vtl_cart_params p = {.readonly = true};
	struct vtl_cart *c;
	if ((rc = vtl_cart_open(m->pool, barcode, &p, &c))) {
		snprintf(err, errlen, "opening %s: %s", barcode,
			 rc == VTL_E_BUSY ? "it is open elsewhere (loaded in a drive of vtld?)" : vtl_strerror(rc));
		return rc;
	}
	if (job && (rc = catalog_job_update(m->cat, job, CAT_JOB_RUNNING, 0, NULL))) {
		snprintf(err, errlen, "recording the job as running: %s", catalog_last_error(m->cat));
		vtl_ignore(vtl_cart_close(c)); /* opened read-only: its close loses nothing */
		return rc;
	}
	/* The header, the stream, and room for a trailer of 16 bytes per data block. */
	uint64_t need = COPY_HEADER_LEN + vtl_cart_stream_size(c) + vtl_cart_stream_size(c) / m->ring.buffer_size * 16 + 4096;
	const char *pool = NULL;
	unsigned have = 0;
	if (m->copies && !m->native && (rc = policy_copy_pools(m->cat, m->copies, barcode, &have)) == VTL_OK)
		pool = policy_next_pool(m->copies, have);
	if (rc) {
		snprintf(err, errlen, "reading the copies of %s: %s", barcode, catalog_last_error(m->cat));
		vtl_ignore(vtl_cart_close(c)); /* opened read-only: its close loses nothing */
		return rc;
	}
	const char *tried[MIGRATE_TAPE_TRIES];
	rc = VTL_E_POOL_FULL;
	while (rep->tries < MIGRATE_TAPE_TRIES) {
		struct tapes ts = {.library = m->phys_name, .pool = pool};
		int lr = catalog_ptape_list(m->cat, collect, &ts), in_use = -1;
		int i = lr ? -1 : choose(m, &ts, need, m->native, tried, rep->tries, &in_use);
		if (i < 0 && in_use >= 0) {
			/* Only tapes other jobs write to would do: wait for one, then choose again (its room has changed). */
			char bc[CAT_BARCODE_MAX + 1];
			snprintf(bc, sizeof bc, "%s", ts.t[in_use].barcode);
			free(ts.t);
			if ((rc = reserve(m, bc, true)) != VTL_OK) {
				snprintf(err, errlen, "cancelled while waiting for tape %s, which another job writes to", bc);
				break;
			}
			release(m, bc);
			continue;
		}
		if (i < 0) {
			if (lr)
				rc = lr;
			if (!err[0] || lr)
				snprintf(err, errlen, "no tape of %s%s%s has room for %llu bytes%s", m->phys_name,
					 pool ? " in pool " : "", pool ? pool : "", (unsigned long long)need,
					 rep->tries ? " (after the failures above)" : "");
			free(ts.t);
			break;
		}
		struct cat_ptape t = ts.t[i];
		free(ts.t);
		snprintf(rep->pool, sizeof rep->pool, "%s", t.pool);
		tried[rep->tries++] = strdup(t.barcode);
		char why[512] = "";
		bool tape_at_fault;
		rc = attempt(m, c, &t, job, rep, &tape_at_fault, why, sizeof why);
		release(m, t.barcode);
		if (rc == VTL_OK)
			break;
		snprintf(err, errlen, "%s", why);
		char what[256];
		snprintf(what, sizeof what, "copy of %s to %s failed: %.200s", barcode, t.barcode, why);
		/* Best effort: the job's error (recorded below) says the same. */
		vtl_ignore(catalog_event(m->cat, ACTOR, what));
		/* A robot or drive that cannot mount the tape says nothing against it: the job fails, the tape stays. */
		if (!physical(rc) || !tape_at_fault)
			break;
		/* The attempt stays in the catalog's history as a bad copy: what was written, where, and that it failed. */
		struct cat_copy bad = {.file = t.files, .block = rep->copy.block, .length = rep->copy.counters.bytes};
		snprintf(bad.barcode, sizeof bad.barcode, "%s", barcode);
		snprintf(bad.tape, sizeof bad.tape, "%s", t.barcode);
		snprintf(bad.state, sizeof bad.state, STATE_BAD);
		/* The tape (or its drive) failed: stop using the tape until an operator looks at it. Unrecorded, a
		 * later job would pick it again: the job ends here instead of trying the next tape. */
		int cr = catalog_copy_add(m->cat, &bad);
		if (cr == VTL_OK)
			cr = catalog_ptape_update(m->cat, t.barcode, t.used, TAPE_ERROR);
		if (cr != VTL_OK) {
			snprintf(err, errlen, "%.300s; and the catalog cannot record that tape %s failed: %.100s", why,
				 t.barcode, catalog_last_error(m->cat));
			break;
		}
	}
	for (unsigned k = 0; k < rep->tries; k++)
		free((void *)tried[k]);
	vtl_ignore(vtl_cart_close(c)); /* opened read-only: its close loses nothing */
	if (rc == VTL_OK && cc.cache == CAT_CACHE_RESIDENT &&
	    (rc = catalog_cartridge_set_cache(m->cat, barcode, CAT_CACHE_PREMIGRATED)) != VTL_OK)
		snprintf(err, errlen, "copied %s to %s file %u, but the catalog cannot record it as premigrated: %s", barcode,
			 rep->tape, rep->file, catalog_last_error(m->cat));
	if (rc == VTL_OK) {
		char what[256];
		snprintf(what, sizeof what, "copied %s%s to %s file %u, pool %s (%llu bytes, %s%s)", barcode,
			 m->native ? " (native)" : "", rep->tape, rep->file, rep->pool,
			 (unsigned long long)rep->copy.stream_bytes, rep->copy.digest, rep->verified ? ", verified" : "");
		/* Best effort: the copy and the cartridge's state are committed; the event only tells an operator. */
		vtl_ignore(catalog_event(m->cat, ACTOR, what));
	}
	return rc;
}

int migrate_copy(struct migrator *m, const char *barcode, int64_t job, struct migrate_report *rep, char *err,
		 size_t errlen)
{
	memset(rep, 0, sizeof *rep);
	err[0] = 0;
	int rc = copy_job(m, barcode, job, rep, err, errlen);
	return job_end(m, job, rc, rep->copy.counters.bytes, err, errlen);
}

/* ------------------------------------------------------------ verifying */

struct copies {
	struct cat_copy *k;
	size_t n, cap;
	struct migrator *m;
};

/* Good copies on tapes of this migrator's library (copies in other libraries are theirs to verify). */
static int collect_copy(const struct cat_copy *k, void *arg)
{
	struct copies *cs = arg;
	struct cat_ptape t;
	if (!k->id || strcmp(k->state, STATE_GOOD) != 0 || catalog_ptape_get(cs->m->cat, k->tape, &t) != VTL_OK ||
	    strcmp(t.library, cs->m->phys_name) != 0)
		return 0;
	int rc = vtl_grow((void **)&cs->k, &cs->cap, cs->n, sizeof *cs->k);
	if (rc)
		return rc;
	cs->k[cs->n++] = *k;
	return 0;
}

static int count_good(const struct cat_copy *k, void *arg)
{
	if (!strcmp(k->state, STATE_GOOD))
		(*(unsigned *)arg)++;
	return 0;
}

/*
 * After a copy was marked bad: a premigrated cartridge left without a good
 * copy anywhere is resident again, so that the catalog claims no tape copy
 * that is gone and the policy (which copies resident cartridges only)
 * copies it again. *changed says whether it was.
 */
static int resident_without_copy(struct migrator *m, const char *barcode, bool *changed)
{
	unsigned good = 0;
	struct cat_cartridge cc;
	*changed = false;
	int rc = catalog_copy_list(m->cat, barcode, count_good, &good);
	if (rc == VTL_OK)
		rc = catalog_cartridge_get(m->cat, barcode, &cc);
	if (rc == VTL_OK && !good && cc.cache == CAT_CACHE_PREMIGRATED &&
	    (rc = catalog_cartridge_set_cache(m->cat, barcode, CAT_CACHE_RESIDENT)) == VTL_OK)
		*changed = true;
	return rc;
}

static int verify_job(struct migrator *m, const char *barcode, int64_t job, unsigned *verified, uint64_t *bytes,
		      char *err, size_t errlen)
{
	struct copies cs = {.m = m};
	int rc = catalog_copy_list(m->cat, barcode, collect_copy, &cs);
	if (rc) {
		snprintf(err, errlen, "%s", catalog_last_error(m->cat));
		free(cs.k);
		return rc;
	}
	if (cs.n == 0) {
		snprintf(err, errlen, "%s has no good copy on a tape of %s", barcode, m->phys_name);
		free(cs.k);
		return VTL_E_NOTFOUND;
	}
	if (job && (rc = catalog_job_update(m->cat, job, CAT_JOB_RUNNING, 0, NULL))) {
		snprintf(err, errlen, "recording the job as running: %s", catalog_last_error(m->cat));
		free(cs.k);
		return rc;
	}
	int first_bad = VTL_OK;
	bool marked_bad = false;
	for (size_t i = 0; i < cs.n; i++) {
		unsigned d;
		char why[256] = "";
		struct copy_result v;
		if (m->cancel && atomic_load(m->cancel)) {
			/* Stopped between two copies (a read-back itself runs to its end): nothing is recorded for the rest. */
			if (!first_bad) {
				snprintf(err, errlen, "cancelled after %zu of its %zu copies", i, cs.n);
				first_bad = VTL_E_BUSY;
			}
			break;
		}
		if ((rc = reserve(m, cs.k[i].tape, true)) != VTL_OK) {
			if (!first_bad) {
				snprintf(err, errlen, "cancelled while waiting for tape %s, which another job uses", cs.k[i].tape);
				first_bad = rc;
			}
			break;
		}
		rc = migrate_mount(m, cs.k[i].tape, &d, why, sizeof why);
		if (rc == VTL_OK && !strncmp(cs.k[i].digest, COPY_NATIVE_PREFIX, strlen(COPY_NATIVE_PREFIX))) {
			/* Compared with the cartridge too when the pool has it free; by the digest alone otherwise. */
			struct vtl_cart_params p = {.readonly = true};
			struct vtl_cart *c = NULL;
			if (vtl_cart_open(m->pool, barcode, &p, &c) != VTL_OK)
				c = NULL;
			rc = copy_verify_native(m->lib, d, c, cs.k[i].digest, &v, why, sizeof why);
			if (c)
				vtl_ignore(vtl_cart_close(c)); /* opened read-only: its close loses nothing */
		} else if (rc == VTL_OK) {
			/* What the catalog recorded with the copy is what its header must say. */
			struct copy_expect want = {.barcode = barcode, .digest = cs.k[i].digest,
						   .stream_bytes = cs.k[i].length, .block_size = cs.k[i].block_size};
			rc = copy_verify(m->lib, d, cs.k[i].block, &want, &v, why, sizeof why);
		}
		release(m, cs.k[i].tape);
		char what[512];
		int cr = VTL_OK;
		/* A copy recorded before its block size was: the verify proved the header's, which the digest chains. */
		bool size_learnt = rc == VTL_OK && !cs.k[i].block_size && v.block_size;
		if (size_learnt)
			cr = catalog_copy_set_block_size(m->cat, cs.k[i].id, v.block_size);
		if (rc == VTL_OK && cr == VTL_OK &&
		    (cr = catalog_copy_verified(m->cat, cs.k[i].id, (int64_t)time(NULL))) == VTL_OK) {
			(*verified)++;
			*bytes += v.stream_bytes;
			snprintf(what, sizeof what, "verified the copy of %s on %s file %u%s", barcode, cs.k[i].tape,
				 cs.k[i].file, size_learnt ? " and recorded its block size" : "");
		} else if (rc == VTL_OK) {
			/* Verified, but not recorded: the job does not count it. */
			rc = cr;
			snprintf(what, sizeof what, "verified the copy of %s on %s file %u, but cannot record it: %.200s",
				 barcode, cs.k[i].tape, cs.k[i].file, catalog_last_error(m->cat));
		} else {
			if (rc == VTL_E_MEDIUM && (cr = catalog_copy_set_state(m->cat, cs.k[i].id, STATE_BAD)) == VTL_OK)
				marked_bad = true;
			snprintf(what, sizeof what, "the copy of %s on %s file %u failed verification: %.250s%s", barcode,
				 cs.k[i].tape, cs.k[i].file, why,
				 cr != VTL_OK ? "; the catalog could not mark it bad and still calls it good" : "");
		}
		if (rc != VTL_OK && !first_bad) {
			first_bad = rc;
			snprintf(err, errlen, "%s", what);
		}
		/* Best effort: the job's result and error carry what matters; the event tells an operator. */
		vtl_ignore(catalog_event(m->cat, ACTOR, what));
	}
	free(cs.k);
	bool changed;
	int cr = marked_bad ? resident_without_copy(m, barcode, &changed) : VTL_OK;
	if (cr != VTL_OK) {
		size_t at = strlen(err);
		snprintf(err + at, errlen - at, "; and the catalog cannot make it resident again (it has no good copy "
			 "left): %s", catalog_last_error(m->cat));
	} else if (marked_bad && changed) {
		char what[256];
		snprintf(what, sizeof what, "%s is resident again: no good copy of it is left", barcode);
		/* Best effort: the cache state is committed; the event only tells an operator. */
		vtl_ignore(catalog_event(m->cat, ACTOR, what));
	}
	return first_bad;
}

int migrate_verify(struct migrator *m, const char *barcode, int64_t job, unsigned *verified, char *err, size_t errlen)
{
	*verified = 0;
	err[0] = 0;
	uint64_t bytes = 0;
	int rc = verify_job(m, barcode, job, verified, &bytes, err, errlen);
	return job_end(m, job, rc, bytes, err, errlen);
}

int migrate_scan_tapes(struct migrator *m, uint64_t capacity, unsigned *added, char *err, size_t errlen)
{
	*added = 0;
	struct phys_element *e;
	unsigned n;
	int rc = inventory(m, &e, &n, err, errlen);
	if (rc)
		return rc;
	for (unsigned i = 0; rc == VTL_OK && i < n; i++) {
		if (!e[i].full || !e[i].barcode[0])
			continue;
		struct cat_ptape t = {.slot = e[i].type == PHYS_ELEM_SLOT ? e[i].address : -1, .capacity = capacity};
		snprintf(t.barcode, sizeof t.barcode, "%s", e[i].barcode);
		snprintf(t.library, sizeof t.library, "%s", m->phys_name);
		snprintf(t.state, sizeof t.state, TAPE_SCRATCH);
		snprintf(t.pool, sizeof t.pool, "%s", m->tape_pool ? m->tape_pool : "");
		rc = catalog_ptape_add(m->cat, &t);
		if (rc == VTL_E_EXISTS)
			rc = VTL_OK;
		else if (rc == VTL_OK)
			(*added)++;
		else
			snprintf(err, errlen, "%s", catalog_last_error(m->cat));
	}
	free(e);
	return rc;
}

/* --------------------------------------------------------------- recalling */

/* Live progress of a stage, in the terms of a copy's. */
struct recall_live {
	struct migrator *m;
	const char *barcode;
	struct stream_counters none;
};

static void recall_progress(void *arg, uint64_t bytes, uint64_t total, double mbs)
{
	struct recall_live *rl = arg;
	struct stream_progress p = {.bytes = bytes, .total = total, .mbs = mbs, .c = &rl->none};
	rl->m->progress(rl->m->progress_arg, rl->barcode, &p);
}

static int recall_job(struct migrator *m, const char *barcode, int64_t job, uint64_t *bytes, char *err, size_t errlen)
{
	struct cat_cartridge cc;
	int rc = catalog_cartridge_get(m->cat, barcode, &cc);
	if (rc) {
		snprintf(err, errlen, "%s", catalog_last_error(m->cat));
		return rc;
	}
	/* A host may have it loaded: its drive follows the stage and reads what is back already. */
	if (cc.cache != CAT_CACHE_MIGRATED && cc.cache != CAT_CACHE_RECALLING) {
		snprintf(err, errlen, "%s is on disk already: nothing to recall", barcode);
		return VTL_E_EXISTS;
	}
	struct copies cs = {.m = m};
	if ((rc = catalog_copy_list(m->cat, barcode, collect_copy, &cs))) {
		snprintf(err, errlen, "%s", catalog_last_error(m->cat));
		free(cs.k);
		return rc;
	}
	struct vtl_cart_params p = {0};
	struct vtl_cart *c;
	if ((rc = vtl_cart_open(m->pool, barcode, &p, &c))) {
		snprintf(err, errlen, "opening %s: %s", barcode, vtl_strerror(rc));
		free(cs.k);
		return rc;
	}
	if ((job && (rc = catalog_job_update(m->cat, job, CAT_JOB_RUNNING, 0, NULL))) ||
	    (rc = catalog_cartridge_set_cache(m->cat, barcode, CAT_CACHE_RECALLING))) {
		/* Nothing staged yet: the cartridge stays as the catalog has it. */
		snprintf(err, errlen, "recording the recall of %s as running: %s", barcode, catalog_last_error(m->cat));
		vtl_ignore(vtl_cart_close(c)); /* nothing written through it: its close loses nothing */
		free(cs.k);
		return rc;
	}
	/*
	 * Records an interrupted stage brought back stay: every good copy holds the same, the stage goes on after
	 * them. A damaged disk copy (a forced release that stopped before its files were gone) is no such prefix:
	 * it goes first.
	 */
	bool positioned = vtl_cart_damage(c, NULL, 0) == 0 || ((rc = vtl_cart_rewind(c)) == VTL_OK &&
							   (rc = vtl_cart_erase(c)) == VTL_OK);
	if (!positioned)
		snprintf(err, errlen, "emptying the damaged disk copy of %s: %s", barcode, vtl_strerror(rc));
	else
		positioned = (rc = vtl_cart_space_eod(c)) == VTL_OK;
	if (!positioned && !err[0]) {
		snprintf(err, errlen, "positioning %s at its end: %s", barcode, vtl_strerror(rc));
	} else if (positioned) {
		rc = VTL_E_NOTFOUND;
		snprintf(err, errlen, "%s has no good stacked copy on a tape of %s", barcode, m->phys_name);
	}
	struct recall_live rl = {.m = m, .barcode = barcode};
	struct copy_stage_opts o = {.cancel = m->cancel, .progress = m->progress ? recall_progress : NULL,
				    .progress_arg = &rl};
	int unmarked = VTL_OK; /* a copy that failed, which the catalog could not mark bad */
	/* The newest copy first: the older ones are the fallback. */
	for (size_t i = cs.n; positioned && i-- > 0 && !(m->cancel && atomic_load(m->cancel));) {
		const struct cat_copy *k = &cs.k[i];
		if (!strncmp(k->digest, COPY_NATIVE_PREFIX, strlen(COPY_NATIVE_PREFIX)))
			continue; /* a native copy holds the host's blocks, not the stored records: not staged here */
		unsigned d;
		char why[256] = "";
		struct copy_result r;
		struct copy_expect want = {.barcode = barcode, .digest = k->digest, .stream_bytes = k->length,
					   .block_size = k->block_size};
		if ((rc = reserve(m, k->tape, true)) != VTL_OK) {
			snprintf(err, errlen, "cancelled while waiting for tape %s, which another job uses", k->tape);
			break;
		}
		if ((rc = migrate_mount(m, k->tape, &d, why, sizeof why)) == VTL_OK)
			rc = copy_stage(m->lib, d, k->block, &want, c, &o, &r, why, sizeof why);
		release(m, k->tape);
		if (rc == VTL_OK && (rc = vtl_cart_sync(c)) != VTL_OK)
			snprintf(why, sizeof why, "syncing the staged cartridge: %s", vtl_strerror(rc));
		char what[512];
		if (rc == VTL_OK) {
			*bytes = r.stream_bytes;
			snprintf(what, sizeof what, "recalled %s from %s file %u (%llu bytes)", barcode, k->tape, k->file,
				 (unsigned long long)r.stream_bytes);
			vtl_ignore(catalog_event(m->cat, ACTOR, what)); /* best effort: tells an operator, as the log does */
			break;
		}
		if (rc == VTL_E_BUSY && m->cancel && atomic_load(m->cancel))
			snprintf(why, sizeof why, "cancelled");
		snprintf(what, sizeof what, "recall of %s from %s file %u failed: %.300s", barcode, k->tape, k->file, why);
		vtl_ignore(catalog_event(m->cat, ACTOR, what)); /* best effort: the job's error says the same */
		snprintf(err, errlen, "%s", what);
		int mr = rc == VTL_E_MEDIUM ? catalog_copy_set_state(m->cat, k->id, STATE_BAD) : VTL_OK;
		if (mr != VTL_OK) {
			unmarked = mr; /* kept: a later copy's success does not clear it */
			log_warn("the copy of %s on %s file %u failed its recall, but the catalog cannot mark it bad: %s",
				 barcode, k->tape, k->file, catalog_last_error(m->cat));
		}
	}
	free(cs.k);
	struct vtl_position pos;
	vtl_cart_position(c, &pos);
	int crc = vtl_cart_close(c);
	if (rc == VTL_OK && crc) {
		rc = crc;
		snprintf(err, errlen, "closing the staged cartridge: %s", vtl_strerror(rc));
	}
	if (rc && rc != VTL_E_BUSY) {
		char what[256];
		snprintf(what, sizeof what, "%s stays migrated: %llu of its %llu objects are on disk; a host reading past them "
			 "gets a medium error", barcode, (unsigned long long)pos.eod, (unsigned long long)cc.eod);
		vtl_ignore(catalog_event(m->cat, ACTOR, what)); /* best effort: the job's error says why */
	}
	/* Closed first: a drive waiting on the stage opens the cartridge as soon as it reads this. */
	int sr = catalog_cartridge_set_cache(m->cat, barcode, rc ? CAT_CACHE_MIGRATED : CAT_CACHE_PREMIGRATED);
	if (sr != VTL_OK) {
		/* Left "recalling": a drive waiting on it sees no recall pending once the job has ended, and fails it. */
		size_t at = rc ? strlen(err) : 0;
		snprintf(err + at, errlen - at, "%sthe catalog cannot record the end of the stage of %s: %s",
			 rc ? "; and " : "", barcode, catalog_last_error(m->cat));
		return rc ? rc : sr;
	}
	if (rc == VTL_OK && unmarked != VTL_OK) {
		/* Back on disk, but a copy that failed still counts as good: the job is no success. */
		snprintf(err, errlen, "recalled %s, but the catalog still calls a copy that failed good", barcode);
		return unmarked;
	}
	return rc;
}

int migrate_recall(struct migrator *m, const char *barcode, int64_t job, char *err, size_t errlen)
{
	err[0] = 0;
	uint64_t bytes = 0;
	int rc = recall_job(m, barcode, job, &bytes, err, errlen);
	/* Not "failed" for a moment and then queued again: an operator or a script would see it end. */
	if (m->recall_may_go_on && (rc == VTL_E_MEDIUM || rc == VTL_E_NOTFOUND))
		return rc;
	return job_end(m, job, rc, bytes, err, errlen);
}
