/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The tiers behind the disk cache (schema version 2): physical tapes, the
 * copies of cartridges on them and the migrator's jobs. The contracts are
 * in catalog.h; the conventions in cat_internal.h.
 */
#include "catalog/cat_internal.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/vtl_error.h"

#define BARCODE_OK(s) cat_str_ok((s), CAT_BARCODE_MAX + 1, true)
#define STATE_OK(s) cat_str_ok((s), sizeof(((struct cat_ptape *)0)->state), false)

/* ---------------------------------------------------------- physical tapes */

int catalog_ptape_add(struct vtl_catalog *cat, struct cat_ptape *t)
{
	if (!cat || !t)
		return VTL_E_INVAL;
	cat_lock(cat);
	if (!cat_str_ok(t->barcode, sizeof(t->barcode), true) || !cat_str_ok(t->library, sizeof(t->library), false) ||
	    !STATE_OK(t->state) || !cat_str_ok(t->pool, sizeof(t->pool), false))
		return cat_unlock(cat, cat_fail(cat, VTL_E_INVAL, "physical tape: barcode empty or a string too long"));
	int rc = cat_exec(cat,
			  "INSERT INTO ptape (barcode, library, slot, capacity, used, state, pool)"
			  " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
			  "ttiUUtt", t->barcode, t->library, (int)t->slot, t->capacity, t->used, t->state,
			  t->pool[0] ? t->pool : CAT_POOL_DEFAULT);
	if (rc == 0)
		t->id = sqlite3_last_insert_rowid(cat->db);
	else if (rc == VTL_E_EXISTS)
		cat_fail(cat, rc, "a physical tape %s exists", t->barcode);
	return cat_unlock(cat, rc);
}

#define PTAPE_COLS "id, barcode, library, slot, capacity, used, state, files, pool"

static void ptape_read(sqlite3_stmt *st, struct cat_ptape *o)
{
	memset(o, 0, sizeof(*o));
	o->id = sqlite3_column_int64(st, 0);
	cat_col_text(st, 1, o->barcode, sizeof(o->barcode));
	cat_col_text(st, 2, o->library, sizeof(o->library));
	o->slot = (int32_t)sqlite3_column_int(st, 3);
	o->capacity = (uint64_t)sqlite3_column_int64(st, 4);
	o->used = (uint64_t)sqlite3_column_int64(st, 5);
	cat_col_text(st, 6, o->state, sizeof(o->state));
	o->files = (uint32_t)sqlite3_column_int64(st, 7);
	cat_col_text(st, 8, o->pool, sizeof(o->pool));
}

int catalog_ptape_get(struct vtl_catalog *cat, const char *barcode, struct cat_ptape *out)
{
	if (!cat || !out)
		return VTL_E_INVAL;
	cat_lock(cat);
	if (!BARCODE_OK(barcode))
		return cat_unlock(cat, cat_fail(cat, VTL_E_INVAL, "barcode empty or too long"));
	sqlite3_stmt *st;
	int rc = cat_row(cat, "SELECT " PTAPE_COLS " FROM ptape WHERE barcode = ?1", &st, "t", barcode);
	if (rc == 0) {
		ptape_read(st, out);
		sqlite3_reset(st);
	} else if (rc == VTL_E_NOTFOUND) {
		cat_fail(cat, rc, "no physical tape %s", barcode);
	}
	return cat_unlock(cat, rc);
}

int catalog_ptape_list(struct vtl_catalog *cat, int (*fn)(const struct cat_ptape *t, void *arg), void *arg)
{
	if (!cat || !fn)
		return VTL_E_INVAL;
	struct cat_ptape *arr = NULL;
	size_t n = 0, cap = 0;
	cat_lock(cat);
	sqlite3_stmt *st;
	int rc = cat_query(cat, "SELECT " PTAPE_COLS " FROM ptape ORDER BY barcode", &st, "");
	while (rc == 0 && (rc = cat_step(cat, st)) == 1) {
		rc = vtl_grow((void **)&arr, &cap, n, sizeof(*arr));
		if (rc == 0)
			ptape_read(st, &arr[n++]);
	}
	rc = cat_unlock(cat, rc);
	if (rc == 0)
		CAT_WALK(rc, arr, n, fn, arg);
	free(arr);
	return rc;
}

int catalog_ptape_set_pool(struct vtl_catalog *cat, const char *barcode, const char *pool)
{
	if (!cat)
		return VTL_E_INVAL;
	cat_lock(cat);
	if (!BARCODE_OK(barcode) || !cat_str_ok(pool, CAT_NAME_MAX + 1, true))
		return cat_unlock(cat, cat_fail(cat, VTL_E_INVAL, "physical tape: bad barcode or pool name"));
	int rc = cat_exec(cat, "UPDATE ptape SET pool = ?2 WHERE barcode = ?1 AND files = 0", "tt", barcode, pool);
	if (rc == 0 && cat_changes(cat) == 0) {
		sqlite3_stmt *st;
		int found = cat_row(cat, "SELECT files FROM ptape WHERE barcode = ?1", &st, "t", barcode);
		if (found == 0) {
			int64_t files = sqlite3_column_int64(st, 0);
			sqlite3_reset(st);
			rc = cat_fail(cat, VTL_E_INVAL, "physical tape %s holds %lld files: only an empty tape changes pool",
				      barcode, (long long)files);
		} else {
			rc = cat_fail(cat, VTL_E_NOTFOUND, "no physical tape %s", barcode);
		}
	}
	return cat_unlock(cat, rc);
}

int catalog_ptape_update(struct vtl_catalog *cat, const char *barcode, uint64_t used, const char *state)
{
	if (!cat)
		return VTL_E_INVAL;
	cat_lock(cat);
	if (!BARCODE_OK(barcode) || (state && !STATE_OK(state)))
		return cat_unlock(cat, cat_fail(cat, VTL_E_INVAL, "physical tape: bad barcode or state"));
	int rc = cat_exec(cat, "UPDATE ptape SET used = ?2, state = COALESCE(?3, state) WHERE barcode = ?1", "tUt",
			  barcode, used, state);
	if (rc == 0 && cat_changes(cat) == 0)
		rc = cat_fail(cat, VTL_E_NOTFOUND, "no physical tape %s", barcode);
	return cat_unlock(cat, rc);
}

/* ------------------------------------------------------------------ copies */

int catalog_copy_add(struct vtl_catalog *cat, struct cat_copy *c)
{
	if (!cat || !c)
		return VTL_E_INVAL;
	cat_lock(cat);
	if (!cat_str_ok(c->barcode, sizeof(c->barcode), true) || !cat_str_ok(c->tape, sizeof(c->tape), true) ||
	    !cat_str_ok(c->digest, sizeof(c->digest), false) || !STATE_OK(c->state))
		return cat_unlock(cat, cat_fail(cat, VTL_E_INVAL, "copy: barcode empty or a string too long"));
	/* One statement: it inserts nothing unless both the cartridge and the tape exist. */
	int rc = cat_exec(cat,
			  "INSERT INTO copy (cartridge_id, ptape_id, file, block, length, digest, verified_at, state,"
			  " block_size) SELECT c.id, t.id, ?3, ?4, ?5, ?6, ?7, ?8, ?9 FROM cartridge c, ptape t"
			  " WHERE c.barcode = ?1 AND t.barcode = ?2",
			  "ttIUUtItI", c->barcode, c->tape, (int64_t)c->file, c->block, c->length, c->digest,
			  c->verified_at, c->state, (int64_t)c->block_size);
	if (rc == 0 && cat_changes(cat) == 0)
		rc = cat_fail(cat, VTL_E_NOTFOUND, "no cartridge %s or no physical tape %s", c->barcode, c->tape);
	if (rc == 0)
		c->id = sqlite3_last_insert_rowid(cat->db);
	return cat_unlock(cat, rc);
}

int catalog_copy_commit(struct vtl_catalog *cat, struct cat_copy *c, uint64_t used, const char *state)
{
	if (!cat || !c)
		return VTL_E_INVAL;
	cat_lock(cat);
	if (!cat_str_ok(c->barcode, sizeof(c->barcode), true) || !cat_str_ok(c->tape, sizeof(c->tape), true) ||
	    !cat_str_ok(c->digest, sizeof(c->digest), false) || !STATE_OK(c->state) || (state && !STATE_OK(state)))
		return cat_unlock(cat, cat_fail(cat, VTL_E_INVAL, "copy: barcode empty or a string too long"));
	int rc = cat_begin(cat);
	if (rc == 0) {
		/* The file number is the tape's count: it moves only here, so a stale count means another writer. */
		rc = cat_exec(cat,
			      "UPDATE ptape SET used = ?2, state = COALESCE(?3, state), files = files + 1"
			      " WHERE barcode = ?1 AND files = ?4",
			      "tUtI", c->tape, used, state, (int64_t)c->file);
		if (rc == 0 && cat_changes(cat) == 0) {
			struct cat_ptape t;
			sqlite3_stmt *st;
			int found = cat_row(cat, "SELECT " PTAPE_COLS " FROM ptape WHERE barcode = ?1", &st, "t", c->tape);
			if (found == 0) {
				ptape_read(st, &t);
				sqlite3_reset(st);
				rc = cat_fail(cat, VTL_E_BUSY, "physical tape %s holds %u files, not %u", c->tape, t.files, c->file);
			} else {
				rc = cat_fail(cat, VTL_E_NOTFOUND, "no physical tape %s", c->tape);
			}
		}
		if (rc == 0)
			rc = cat_exec(cat,
				      "INSERT INTO copy (cartridge_id, ptape_id, file, block, length, digest, verified_at,"
				      " state, block_size) SELECT c.id, t.id, ?3, ?4, ?5, ?6, ?7, ?8, ?9 FROM cartridge c,"
				      " ptape t WHERE c.barcode = ?1 AND t.barcode = ?2",
				      "ttIUUtItI", c->barcode, c->tape, (int64_t)c->file, c->block, c->length, c->digest,
				      c->verified_at, c->state, (int64_t)c->block_size);
		if (rc == 0 && cat_changes(cat) == 0)
			rc = cat_fail(cat, VTL_E_NOTFOUND, "no cartridge %s", c->barcode);
		if (rc == 0)
			c->id = sqlite3_last_insert_rowid(cat->db);
		rc = cat_end(cat, rc);
	}
	return cat_unlock(cat, rc);
}

int catalog_cartridge_modified(struct vtl_catalog *cat, const char *barcode, unsigned *copies)
{
	if (!cat)
		return VTL_E_INVAL;
	cat_lock(cat);
	if (copies)
		*copies = 0;
	if (!cat_str_ok(barcode, CAT_BARCODE_MAX + 1, true))
		return cat_unlock(cat, cat_fail(cat, VTL_E_INVAL, "bad barcode"));
	int rc = cat_begin(cat);
	if (rc == 0) {
		rc = cat_exec(cat, "UPDATE cartridge SET cache = ?2 WHERE barcode = ?1", "ti", barcode,
			      (int)CAT_CACHE_RESIDENT);
		if (rc == 0 && cat_changes(cat) == 0)
			rc = cat_fail(cat, VTL_E_NOTFOUND, "no cartridge %s", barcode);
		/* Every copy but those already bad or invalid describes the data the host is replacing. */
		if (rc == 0)
			rc = cat_exec(cat,
				      "UPDATE copy SET state = ?2 WHERE state NOT IN (?2, ?3) AND cartridge_id ="
				      " (SELECT id FROM cartridge WHERE barcode = ?1)",
				      "ttt", barcode, CAT_COPY_INVALID, CAT_COPY_BAD);
		if (rc == 0 && copies)
			*copies = (unsigned)cat_changes(cat);
		rc = cat_end(cat, rc);
	}
	return cat_unlock(cat, rc);
}

static void copy_read(sqlite3_stmt *st, struct cat_copy *o)
{
	memset(o, 0, sizeof(*o));
	o->id = sqlite3_column_int64(st, 0);
	cat_col_text(st, 1, o->barcode, sizeof(o->barcode));
	cat_col_text(st, 2, o->tape, sizeof(o->tape));
	o->file = (uint32_t)sqlite3_column_int64(st, 3);
	o->block = (uint64_t)sqlite3_column_int64(st, 4);
	o->length = (uint64_t)sqlite3_column_int64(st, 5);
	cat_col_text(st, 6, o->digest, sizeof(o->digest));
	o->verified_at = sqlite3_column_int64(st, 7);
	cat_col_text(st, 8, o->state, sizeof(o->state));
	o->block_size = (uint32_t)sqlite3_column_int64(st, 9);
}

int catalog_copy_list(struct vtl_catalog *cat, const char *barcode, int (*fn)(const struct cat_copy *c, void *arg),
		      void *arg)
{
	if (!cat || !fn)
		return VTL_E_INVAL;
	struct cat_copy *arr = NULL;
	size_t n = 0, cap = 0;
	cat_lock(cat);
	if (!BARCODE_OK(barcode))
		return cat_unlock(cat, cat_fail(cat, VTL_E_INVAL, "barcode empty or too long"));
	sqlite3_stmt *st;
	/* The LEFT JOIN yields one row of NULLs for a cartridge without copies, none for an unknown one. */
	int rc = cat_query(cat,
			   "SELECT p.id, c.barcode, t.barcode, p.file, p.block, p.length, p.digest, p.verified_at,"
			   " p.state, p.block_size FROM cartridge c LEFT JOIN copy p ON p.cartridge_id = c.id"
			   " LEFT JOIN ptape t ON t.id = p.ptape_id WHERE c.barcode = ?1 ORDER BY p.id",
			   &st, "t", barcode);
	bool found = false;
	while (rc == 0 && (rc = cat_step(cat, st)) == 1) {
		found = true;
		rc = 0;
		if (sqlite3_column_type(st, 0) == SQLITE_NULL)
			continue;
		rc = vtl_grow((void **)&arr, &cap, n, sizeof(*arr));
		if (rc == 0)
			copy_read(st, &arr[n++]);
	}
	if (rc == 0 && !found)
		rc = cat_fail(cat, VTL_E_NOTFOUND, "no cartridge %s", barcode);
	rc = cat_unlock(cat, rc);
	if (rc == 0)
		CAT_WALK(rc, arr, n, fn, arg);
	free(arr);
	return rc;
}

static int copy_update(struct vtl_catalog *cat, int64_t id, int rc)
{
	if (rc == 0 && cat_changes(cat) == 0)
		rc = cat_fail(cat, VTL_E_NOTFOUND, "no copy %lld", (long long)id);
	return cat_unlock(cat, rc);
}

int catalog_copy_set_state(struct vtl_catalog *cat, int64_t id, const char *state)
{
	if (!cat)
		return VTL_E_INVAL;
	cat_lock(cat);
	if (!STATE_OK(state))
		return cat_unlock(cat, cat_fail(cat, VTL_E_INVAL, "copy state missing or too long"));
	return copy_update(cat, id, cat_exec(cat, "UPDATE copy SET state = ?2 WHERE id = ?1", "It", id, state));
}

int catalog_copy_verified(struct vtl_catalog *cat, int64_t id, int64_t when)
{
	if (!cat)
		return VTL_E_INVAL;
	cat_lock(cat);
	return copy_update(cat, id, cat_exec(cat, "UPDATE copy SET verified_at = ?2 WHERE id = ?1", "II", id, when));
}

int catalog_copy_set_block_size(struct vtl_catalog *cat, int64_t id, uint32_t block_size)
{
	if (!cat)
		return VTL_E_INVAL;
	cat_lock(cat);
	return copy_update(cat, id, cat_exec(cat, "UPDATE copy SET block_size = ?2 WHERE id = ?1", "II", id,
					     (int64_t)block_size));
}

/* -------------------------------------------------------------------- jobs */

int catalog_job_add(struct vtl_catalog *cat, enum cat_job_kind kind, const char *barcode, int64_t *id)
{
	struct cat_job_opts o = {.drive = CAT_JOB_DRIVE_ANY};
	return catalog_job_add_opts(cat, kind, barcode, &o, id);
}

int catalog_job_add_opts(struct vtl_catalog *cat, enum cat_job_kind kind, const char *barcode,
			 const struct cat_job_opts *o, int64_t *id)
{
	if (!cat || !id || !o)
		return VTL_E_INVAL;
	cat_lock(cat);
	if (!BARCODE_OK(barcode) || kind < CAT_JOB_MIGRATE || kind > CAT_JOB_VERIFY)
		return cat_unlock(cat, cat_fail(cat, VTL_E_INVAL, "job: bad barcode or kind %d", (int)kind));
	if (o->drive < CAT_JOB_DRIVE_ANY || o->rate > CAT_JOB_RATE_MAX || !cat_str_ok(o->library, sizeof o->library, false))
		return cat_unlock(cat, cat_fail(cat, VTL_E_INVAL, "job: bad drive %d, rate %u or library name", o->drive,
						o->rate));
	int rc = cat_exec(cat,
			  "INSERT INTO job (kind, barcode, state, drive, rate, copy, library)"
			  " SELECT ?2, barcode, ?3, ?4, ?5, ?6, ?7 FROM cartridge WHERE barcode = ?1",
			  "tiiiItt", barcode, (int)kind, (int)CAT_JOB_QUEUED, o->drive, (int64_t)o->rate,
			  o->native ? CAT_COPY_NATIVE : CAT_COPY_STACKED, o->library);
	if (rc == 0 && cat_changes(cat) == 0)
		rc = cat_fail(cat, VTL_E_NOTFOUND, "no cartridge %s", barcode);
	if (rc == 0)
		*id = sqlite3_last_insert_rowid(cat->db);
	return cat_unlock(cat, rc);
}

int catalog_job_update(struct vtl_catalog *cat, int64_t id, enum cat_job_state state, uint64_t bytes_done,
		       const char *error)
{
	if (!cat)
		return VTL_E_INVAL;
	cat_lock(cat);
	if (state < CAT_JOB_QUEUED || state > CAT_JOB_FAILED ||
	    (error && !cat_str_ok(error, sizeof(((struct cat_job *)0)->error), false)))
		return cat_unlock(cat, cat_fail(cat, VTL_E_INVAL, "job: bad state %d or error text too long", (int)state));
	int rc = cat_exec(cat,
			  "UPDATE job SET state = ?2, bytes_done = ?3, error = COALESCE(?4, error),"
			  " started = CASE WHEN ?2 = 1 THEN 0 WHEN ?2 = 2 AND started = 0 THEN ?5 ELSE started END,"
			  " finished = CASE WHEN ?2 >= 3 THEN ?5 ELSE 0 END WHERE id = ?1",
			  "IiUtI", id, (int)state, bytes_done, error, (int64_t)time(NULL));
	if (rc == 0 && cat_changes(cat) == 0)
		rc = cat_fail(cat, VTL_E_NOTFOUND, "no job %lld", (long long)id);
	return cat_unlock(cat, rc);
}

int catalog_job_set_library(struct vtl_catalog *cat, int64_t id, const char *library)
{
	if (!cat || !library)
		return VTL_E_INVAL;
	cat_lock(cat);
	if (!cat_str_ok(library, sizeof(((struct cat_job_opts *)0)->library), false))
		return cat_unlock(cat, cat_fail(cat, VTL_E_INVAL, "job: bad library name"));
	/* Only a queued job moves: a running one is its library's until it ends. */
	int rc = cat_exec(cat, "UPDATE job SET library = ?2 WHERE id = ?1 AND state = 1", "It", id, library);
	if (rc == 0 && cat_changes(cat) == 0)
		rc = cat_fail(cat, VTL_E_NOTFOUND, "no queued job %lld", (long long)id);
	return cat_unlock(cat, rc);
}

#define JOB_COLS "id, kind, barcode, state, bytes_done, started, finished, error, drive, rate, copy, library"

static void job_read(sqlite3_stmt *st, struct cat_job *o)
{
	memset(o, 0, sizeof(*o));
	o->id = sqlite3_column_int64(st, 0);
	o->kind = (enum cat_job_kind)sqlite3_column_int(st, 1);
	cat_col_text(st, 2, o->barcode, sizeof(o->barcode));
	o->state = (enum cat_job_state)sqlite3_column_int(st, 3);
	o->bytes_done = (uint64_t)sqlite3_column_int64(st, 4);
	o->started = sqlite3_column_int64(st, 5);
	o->finished = sqlite3_column_int64(st, 6);
	cat_col_text(st, 7, o->error, sizeof(o->error));
	o->opts.drive = sqlite3_column_int(st, 8);
	int64_t rate = sqlite3_column_int64(st, 9);
	o->opts.rate = rate > 0 && rate <= CAT_JOB_RATE_MAX ? (unsigned)rate : 0; /* the schema checks only >= 0 */
	char copy[16];
	cat_col_text(st, 10, copy, sizeof(copy));
	o->opts.native = strcmp(copy, CAT_COPY_NATIVE) == 0;
	cat_col_text(st, 11, o->opts.library, sizeof(o->opts.library));
}

int catalog_job_get(struct vtl_catalog *cat, int64_t id, struct cat_job *out)
{
	if (!cat || !out)
		return VTL_E_INVAL;
	cat_lock(cat);
	sqlite3_stmt *st;
	int rc = cat_row(cat, "SELECT " JOB_COLS " FROM job WHERE id = ?1", &st, "I", id);
	if (rc == 0) {
		job_read(st, out);
		sqlite3_reset(st);
	} else if (rc == VTL_E_NOTFOUND) {
		cat_fail(cat, rc, "no job %lld", (long long)id);
	}
	return cat_unlock(cat, rc);
}

int catalog_job_list(struct vtl_catalog *cat, enum cat_job_state state, int (*fn)(const struct cat_job *j, void *arg),
		     void *arg)
{
	if (!cat || !fn || (int)state < CAT_JOB_ANY || state > CAT_JOB_FAILED)
		return VTL_E_INVAL;
	struct cat_job *arr = NULL;
	size_t n = 0, cap = 0;
	cat_lock(cat);
	sqlite3_stmt *st;
	int rc = cat_query(cat, "SELECT " JOB_COLS " FROM job WHERE ?1 = 0 OR state = ?1 ORDER BY id", &st, "i",
			   (int)state);
	while (rc == 0 && (rc = cat_step(cat, st)) == 1) {
		rc = vtl_grow((void **)&arr, &cap, n, sizeof(*arr));
		if (rc == 0)
			job_read(st, &arr[n++]);
	}
	rc = cat_unlock(cat, rc);
	if (rc == 0)
		CAT_WALK(rc, arr, n, fn, arg);
	free(arr);
	return rc;
}
