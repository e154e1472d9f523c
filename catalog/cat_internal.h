/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the catalog's source files share: the handle, the statement cache
 * and the helpers that bind, step and map SQLite's errors. Not for use
 * outside catalog/.
 *
 * Conventions: every public function validates its arguments first, then
 * takes the handle's lock (cat_lock), does its work and leaves through
 * cat_unlock, which resets every statement still running so that no read
 * transaction outlives a call. A write transaction is cat_begin ...
 * cat_end(cat, rc): commit if rc is 0, else roll back.
 */
#ifndef VTL_CATALOG_CAT_INTERNAL_H
#define VTL_CATALOG_CAT_INTERNAL_H

#include "common/grow.h"
#include <pthread.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "catalog/catalog.h"

#define CAT_STMT_MAX 96 /* distinct SQL texts a handle caches */
#define CAT_ERR_MAX 256 /* the longest failure text kept (catalog_last_error), with its NUL */

struct vtl_catalog {
	sqlite3 *db;
	pthread_mutex_t mu;
	int nstmt;
	struct {
		const char *sql; /* the string literal of the call site: the cache key */
		sqlite3_stmt *st;
	} stmt[CAT_STMT_MAX];
};

void cat_lock(struct vtl_catalog *cat);
/* Resets every busy statement of the connection, then unlocks; returns rc. */
int cat_unlock(struct vtl_catalog *cat, int rc);

/* Maps an SQLite result code to a vtl_err and records SQLite's message. */
int cat_sqlerr(struct vtl_catalog *cat, int src);
/* Records a reason (printf format) and returns code. */
int cat_fail(struct vtl_catalog *cat, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/*
 * Binding formats, one character per parameter ?1, ?2, ...:
 *   t const char * (NULL binds NULL)   i int      I int64_t    U uint64_t
 *   b const void *, size_t (a blob)    e int element address (CAT_NO_ELEMENT binds NULL)
 *   L int64_t library id (0 binds NULL)
 */

/* The cached statement for sql, reset and with its bindings bound from fmt. */
int cat_query(struct vtl_catalog *cat, const char *sql, sqlite3_stmt **out, const char *fmt, ...);
/* Runs sql (with fmt's bindings) to completion. */
int cat_exec(struct vtl_catalog *cat, const char *sql, const char *fmt, ...);
/*
 * Runs sql to its first row: 0 with the row in *out (read it, then
 * sqlite3_reset), VTL_E_NOTFOUND if it has none, or an error.
 */
int cat_row(struct vtl_catalog *cat, const char *sql, sqlite3_stmt **out, const char *fmt, ...);
/* Steps st: 1 for a row, 0 at the end (st reset), or an error (st reset). */
int cat_step(struct vtl_catalog *cat, sqlite3_stmt *st);

/* BEGIN IMMEDIATE. */
int cat_begin(struct vtl_catalog *cat);
/* Commits if rc is 0 (returning COMMIT's error, after a rollback, if it fails), else rolls back; returns rc. */
int cat_end(struct vtl_catalog *cat, int rc);

/* Rows the last statement changed. */
int cat_changes(struct vtl_catalog *cat);

/* true if s is a string of at most cap - 1 characters (and not empty if nonempty). */
bool cat_str_ok(const char *s, size_t cap, bool nonempty);
/* Copies column col of st's row into dst (cap bytes, always terminated). */
void cat_col_text(sqlite3_stmt *st, int col, char *dst, size_t cap);


/* rc = the list functions' result (see catalog.h) of calling fn(&arr[i], arg) for the n elements of arr. */
#define CAT_WALK(rc, arr, n, fn, arg)                                  \
	do {                                                           \
		(rc) = 0;                                              \
		for (size_t walk_i_ = 0; walk_i_ < (n); walk_i_++) {   \
			int walk_r_ = (fn)(&(arr)[walk_i_], (arg));    \
			if (walk_r_) {                                 \
				(rc) = walk_r_ < 0 ? walk_r_ : 0;      \
				break;                                 \
			}                                              \
		}                                                      \
	} while (0)

#endif
