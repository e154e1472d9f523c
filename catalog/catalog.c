/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The catalog's handle: opening (WAL, foreign keys, busy timeout), the
 * numbered schema migrations, the statement cache and the helpers every
 * other catalog file uses (cat_internal.h), and the integrity check.
 */
#include "catalog/cat_internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "common/lockorder.h"
#include "common/grow.h"
#include "common/vtl_error.h"

/* ------------------------------------------------------------------ schema */

/*
 * The migrations: migrations[v] takes a catalog from version v - 1 to v, in
 * the transaction that also sets PRAGMA user_version (the script's last
 * statement). Append new versions; never edit a published one.
 *
 * Version 1: the emulated library. Libraries, their elements and what each
 * holds (element.cartridge_id, mirrored by cartridge.library_id/element),
 * drives, cartridges, their MAM attributes and the event log.
 */
static const char schema_v1[] =
	"CREATE TABLE library ("
	" id INTEGER PRIMARY KEY,"
	" name TEXT NOT NULL UNIQUE,"
	" vendor TEXT NOT NULL, product TEXT NOT NULL, revision TEXT NOT NULL, serial TEXT NOT NULL,"
	" transport_first INTEGER NOT NULL, transports INTEGER NOT NULL,"
	" slot_first INTEGER NOT NULL, slots INTEGER NOT NULL,"
	" ie_first INTEGER NOT NULL, ies INTEGER NOT NULL,"
	" drive_first INTEGER NOT NULL, drives INTEGER NOT NULL);"
	"CREATE TABLE cartridge ("
	" id INTEGER PRIMARY KEY,"
	" barcode TEXT NOT NULL UNIQUE,"
	" media INTEGER NOT NULL,"
	" capacity INTEGER NOT NULL DEFAULT 0,"
	" write_protect INTEGER NOT NULL DEFAULT 0 CHECK (write_protect IN (0, 1)),"
	" state TEXT NOT NULL DEFAULT '',"
	" library_id INTEGER REFERENCES library(id),"
	" element INTEGER,"
	" bytes_written INTEGER NOT NULL DEFAULT 0,"
	" bytes_stored INTEGER NOT NULL DEFAULT 0,"
	" eod INTEGER NOT NULL DEFAULT 0,"
	" mounts INTEGER NOT NULL DEFAULT 0,"
	" last_mounted INTEGER NOT NULL DEFAULT 0,"
	" cache INTEGER NOT NULL DEFAULT 0 CHECK (cache BETWEEN 0 AND 3),"
	" CHECK (element IS NULL OR library_id IS NOT NULL),"
	" FOREIGN KEY (library_id, element) REFERENCES element(library_id, address));"
	"CREATE UNIQUE INDEX cartridge_place ON cartridge(library_id, element) WHERE element IS NOT NULL;"
	"CREATE TABLE element ("
	" library_id INTEGER NOT NULL REFERENCES library(id) ON DELETE CASCADE,"
	" address INTEGER NOT NULL CHECK (address BETWEEN 0 AND 65534),"
	" type INTEGER NOT NULL CHECK (type BETWEEN 1 AND 4),"
	" cartridge_id INTEGER UNIQUE REFERENCES cartridge(id),"
	" source INTEGER,"
	" PRIMARY KEY (library_id, address)) WITHOUT ROWID;"
	"CREATE TABLE drive ("
	" library_id INTEGER NOT NULL, address INTEGER NOT NULL,"
	" vendor TEXT NOT NULL, model TEXT NOT NULL, revision TEXT NOT NULL, serial TEXT NOT NULL,"
	" lun INTEGER NOT NULL, state TEXT NOT NULL,"
	" PRIMARY KEY (library_id, address),"
	" FOREIGN KEY (library_id, address) REFERENCES element(library_id, address) ON DELETE CASCADE"
	") WITHOUT ROWID;"
	"CREATE TABLE mam ("
	" cartridge_id INTEGER NOT NULL REFERENCES cartridge(id) ON DELETE CASCADE,"
	" attr INTEGER NOT NULL CHECK (attr BETWEEN 0 AND 65535),"
	" value BLOB NOT NULL,"
	" PRIMARY KEY (cartridge_id, attr)) WITHOUT ROWID;"
	"CREATE TABLE event ("
	" id INTEGER PRIMARY KEY AUTOINCREMENT,"
	" time INTEGER NOT NULL, actor TEXT NOT NULL, what TEXT NOT NULL);"
	"PRAGMA user_version = 1;";

/*
 * Version 2: the tiers behind the cache. Physical tapes, the copies of
 * cartridges on them, the migrator's jobs, and an index to find cartridges
 * by cache state.
 */
static const char schema_v2[] =
	"CREATE TABLE ptape ("
	" id INTEGER PRIMARY KEY,"
	" barcode TEXT NOT NULL UNIQUE,"
	" library TEXT NOT NULL,"
	" slot INTEGER NOT NULL,"
	" capacity INTEGER NOT NULL, used INTEGER NOT NULL,"
	" state TEXT NOT NULL);"
	"CREATE TABLE copy ("
	" id INTEGER PRIMARY KEY,"
	" cartridge_id INTEGER NOT NULL REFERENCES cartridge(id) ON DELETE CASCADE,"
	" ptape_id INTEGER NOT NULL REFERENCES ptape(id),"
	" file INTEGER NOT NULL, block INTEGER NOT NULL, length INTEGER NOT NULL,"
	" digest TEXT NOT NULL,"
	" verified_at INTEGER NOT NULL DEFAULT 0,"
	" state TEXT NOT NULL);"
	"CREATE INDEX copy_cartridge ON copy(cartridge_id);"
	"CREATE INDEX copy_ptape ON copy(ptape_id);"
	"CREATE TABLE job ("
	" id INTEGER PRIMARY KEY AUTOINCREMENT,"
	" kind INTEGER NOT NULL CHECK (kind BETWEEN 1 AND 3),"
	" barcode TEXT NOT NULL,"
	" state INTEGER NOT NULL CHECK (state BETWEEN 1 AND 4),"
	" bytes_done INTEGER NOT NULL DEFAULT 0,"
	" started INTEGER NOT NULL DEFAULT 0,"
	" finished INTEGER NOT NULL DEFAULT 0,"
	" error TEXT NOT NULL DEFAULT '');"
	"CREATE INDEX job_state ON job(state, id);"
	"CREATE INDEX cartridge_cache ON cartridge(cache);"
	"PRAGMA user_version = 2;";

/*
 * Version 3: a physical tape counts the files (copies) written on it, so
 * that the next copy is appended after them even when the cartridges of
 * earlier copies are gone from the catalog.
 */
static const char schema_v3[] =
	"ALTER TABLE ptape ADD COLUMN files INTEGER NOT NULL DEFAULT 0;"
	"PRAGMA user_version = 3;";

/*
 * Version 4: a physical tape belongs to a pool (a set of tapes a copy is
 * written to, e.g. one kept on site and one sent to a vault), so that a
 * cartridge's copies can be kept in different pools.
 */
static const char schema_v4[] =
	"ALTER TABLE ptape ADD COLUMN pool TEXT NOT NULL DEFAULT '" CAT_POOL_DEFAULT "';"
	"PRAGMA user_version = 4;";

/*
 * Version 5: a stacked copy records the size of its data blocks, which its
 * digest chains (docs/format.md, "Copies on physical tape"), so that the
 * policy can recompute the digest from the disk copy before releasing it.
 * Rows from before have 0: not known until a verify reads it from the
 * copy's header (docs/operations.md, "The disk pool as a cache").
 */
static const char schema_v5[] =
	"ALTER TABLE copy ADD COLUMN block_size INTEGER NOT NULL DEFAULT 0;"
	"PRAGMA user_version = 5;";

/*
 * Version 6: a job keeps what it was asked for (the physical drive, -1 for
 * any; the rate in MB/s, 0 for the configured one; a stacked or a native
 * copy; the physical library, '' for the migrator's own), so that a job
 * queued before a restart runs as it was asked for. Rows from before get
 * the defaults: any drive, the configured rate, a stacked copy.
 */
static const char schema_v6[] =
	"ALTER TABLE job ADD COLUMN drive INTEGER NOT NULL DEFAULT -1 CHECK (drive >= -1);"
	"ALTER TABLE job ADD COLUMN rate INTEGER NOT NULL DEFAULT 0 CHECK (rate >= 0);"
	"ALTER TABLE job ADD COLUMN copy TEXT NOT NULL DEFAULT '" CAT_COPY_STACKED "'"
	" CHECK (copy IN ('" CAT_COPY_STACKED "', '" CAT_COPY_NATIVE "'));"
	"ALTER TABLE job ADD COLUMN library TEXT NOT NULL DEFAULT '';"
	"PRAGMA user_version = 6;";

static const char *const migrations[] = {NULL, schema_v1, schema_v2, schema_v3, schema_v4, schema_v5, schema_v6};
_Static_assert(VTL_ARRAY_SIZE(migrations) == CAT_SCHEMA_VERSION + 1,
	       "one migration per schema version");

/* ----------------------------------------------------------------- helpers */

/*
 * The reason for the last failure, kept per thread (with the handle it was
 * on), not per handle: threads share a handle, and one thread's failure
 * must never be read as another's.
 */
static _Thread_local struct {
	const struct vtl_catalog *cat;
	char msg[CAT_ERR_MAX];
} last_err;

/* This thread's error buffer, now for cat. */
static char *errbuf(const struct vtl_catalog *cat)
{
	last_err.cat = cat;
	return last_err.msg;
}

static const char *errmsg_of(const struct vtl_catalog *cat)
{
	return cat && last_err.cat == cat ? last_err.msg : "";
}

void cat_lock(struct vtl_catalog *cat)
{
	vtl_lock(&cat->mu, VTL_LOCK_CATALOG);
}

int cat_unlock(struct vtl_catalog *cat, int rc)
{
	for (sqlite3_stmt *st = sqlite3_next_stmt(cat->db, NULL); st; st = sqlite3_next_stmt(cat->db, st))
		if (sqlite3_stmt_busy(st))
			sqlite3_reset(st);
	vtl_unlock(&cat->mu, VTL_LOCK_CATALOG);
	return rc;
}

int cat_sqlerr(struct vtl_catalog *cat, int src)
{
	snprintf(errbuf(cat), CAT_ERR_MAX, "%s", sqlite3_errstr(src));
	if (cat->db && sqlite3_errcode(cat->db) == src)
		snprintf(errbuf(cat), CAT_ERR_MAX, "%s", sqlite3_errmsg(cat->db));
	switch (src & 0xff) {
	case SQLITE_BUSY:
	case SQLITE_LOCKED:
		return VTL_E_BUSY;
	case SQLITE_CONSTRAINT:
		if (src == SQLITE_CONSTRAINT_UNIQUE || src == SQLITE_CONSTRAINT_PRIMARYKEY)
			return VTL_E_EXISTS;
		if (src == SQLITE_CONSTRAINT_FOREIGNKEY)
			return VTL_E_NOTFOUND;
		return VTL_E_INVAL;
	case SQLITE_NOMEM:
		return VTL_E_NOMEM;
	case SQLITE_CORRUPT:
	case SQLITE_NOTADB:
		return VTL_E_CORRUPT;
	case SQLITE_READONLY:
		return VTL_E_READONLY;
	case SQLITE_TOOBIG:
	case SQLITE_RANGE:
	case SQLITE_MISUSE:
		return VTL_E_INVAL;
	default: {
		int e = cat->db ? sqlite3_system_errno(cat->db) : 0;
		errno = e ? e : EIO;
		return VTL_E_IO;
	}
	}
}

int cat_fail(struct vtl_catalog *cat, int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(errbuf(cat), CAT_ERR_MAX, fmt, ap);
	va_end(ap);
	return code;
}

static int prep(struct vtl_catalog *cat, const char *sql, sqlite3_stmt **out)
{
	for (int i = 0; i < cat->nstmt; i++)
		if (cat->stmt[i].sql == sql) {
			*out = cat->stmt[i].st;
			sqlite3_reset(*out);
			sqlite3_clear_bindings(*out);
			return 0;
		}
	sqlite3_stmt *st = NULL;
	bool keep = cat->nstmt < CAT_STMT_MAX;
	int rc = sqlite3_prepare_v3(cat->db, sql, -1, keep ? SQLITE_PREPARE_PERSISTENT : 0, &st, NULL);
	if (rc != SQLITE_OK) {
		sqlite3_finalize(st);
		return cat_sqlerr(cat, rc);
	}
	if (!keep) { /* cannot happen with the catalog's own statements; the cache is sized for them */
		sqlite3_finalize(st);
		return cat_fail(cat, VTL_E_NOMEM, "catalog statement cache full");
	}
	cat->stmt[cat->nstmt].sql = sql;
	cat->stmt[cat->nstmt].st = st;
	cat->nstmt++;
	*out = st;
	return 0;
}

static int bindv(struct vtl_catalog *cat, sqlite3_stmt *st, const char *fmt, va_list ap)
{
	int rc = SQLITE_OK;
	for (int i = 1; fmt && fmt[i - 1] && rc == SQLITE_OK; i++) {
		switch (fmt[i - 1]) {
		case 't': {
			const char *s = va_arg(ap, const char *);
			rc = s ? sqlite3_bind_text(st, i, s, -1, SQLITE_TRANSIENT) : sqlite3_bind_null(st, i);
			break;
		}
		case 'i':
			rc = sqlite3_bind_int(st, i, va_arg(ap, int));
			break;
		case 'I':
			rc = sqlite3_bind_int64(st, i, va_arg(ap, int64_t));
			break;
		case 'U': /* stored as the int64 with the same bits; read back with a cast */
			rc = sqlite3_bind_int64(st, i, (int64_t)va_arg(ap, uint64_t));
			break;
		case 'b': {
			const void *p = va_arg(ap, const void *);
			size_t n = va_arg(ap, size_t);
			rc = sqlite3_bind_blob64(st, i, n ? p : "", n, SQLITE_TRANSIENT);
			break;
		}
		case 'e': {
			int a = va_arg(ap, int);
			rc = a == CAT_NO_ELEMENT ? sqlite3_bind_null(st, i) : sqlite3_bind_int(st, i, a);
			break;
		}
		case 'L': {
			int64_t id = va_arg(ap, int64_t);
			rc = id ? sqlite3_bind_int64(st, i, id) : sqlite3_bind_null(st, i);
			break;
		}
		default:
			rc = SQLITE_MISUSE;
		}
	}
	return rc == SQLITE_OK ? 0 : cat_sqlerr(cat, rc);
}

int cat_query(struct vtl_catalog *cat, const char *sql, sqlite3_stmt **out, const char *fmt, ...)
{
	int rc = prep(cat, sql, out);
	if (rc)
		return rc;
	va_list ap;
	va_start(ap, fmt);
	rc = bindv(cat, *out, fmt, ap);
	va_end(ap);
	return rc;
}

int cat_step(struct vtl_catalog *cat, sqlite3_stmt *st)
{
	int rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		return 1;
	sqlite3_reset(st);
	return rc == SQLITE_DONE ? 0 : cat_sqlerr(cat, rc);
}

int cat_exec(struct vtl_catalog *cat, const char *sql, const char *fmt, ...)
{
	sqlite3_stmt *st;
	int rc = prep(cat, sql, &st);
	if (rc)
		return rc;
	va_list ap;
	va_start(ap, fmt);
	rc = bindv(cat, st, fmt, ap);
	va_end(ap);
	if (rc)
		return rc;
	while ((rc = cat_step(cat, st)) == 1)
		;
	return rc;
}

int cat_row(struct vtl_catalog *cat, const char *sql, sqlite3_stmt **out, const char *fmt, ...)
{
	int rc = prep(cat, sql, out);
	if (rc)
		return rc;
	va_list ap;
	va_start(ap, fmt);
	rc = bindv(cat, *out, fmt, ap);
	va_end(ap);
	if (rc)
		return rc;
	rc = cat_step(cat, *out);
	if (rc == 1)
		return 0;
	return rc == 0 ? VTL_E_NOTFOUND : rc;
}

int cat_begin(struct vtl_catalog *cat)
{
	return cat_exec(cat, "BEGIN IMMEDIATE", "");
}

int cat_end(struct vtl_catalog *cat, int rc)
{
	for (sqlite3_stmt *st = sqlite3_next_stmt(cat->db, NULL); st; st = sqlite3_next_stmt(cat->db, st))
		if (sqlite3_stmt_busy(st))
			sqlite3_reset(st);
	if (rc == 0)
		rc = cat_exec(cat, "COMMIT", "");
	if (rc != 0 && !sqlite3_get_autocommit(cat->db)) {
		char keep[CAT_ERR_MAX];
		snprintf(keep, sizeof(keep), "%s", errmsg_of(cat));
		cat_exec(cat, "ROLLBACK", "");
		snprintf(errbuf(cat), CAT_ERR_MAX, "%s", keep);
	}
	return rc;
}

int cat_changes(struct vtl_catalog *cat)
{
	return sqlite3_changes(cat->db);
}

bool cat_str_ok(const char *s, size_t cap, bool nonempty)
{
	if (!s)
		return false;
	size_t n = strnlen(s, cap);
	return n < cap && (!nonempty || n > 0);
}

void cat_col_text(sqlite3_stmt *st, int col, char *dst, size_t cap)
{
	const unsigned char *s = sqlite3_column_text(st, col);
	snprintf(dst, cap, "%s", s ? (const char *)s : "");
}

/* -------------------------------------------------------------------- open */

static void seterr(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void seterr(char *err, size_t errlen, const char *fmt, ...)
{
	if (!err || !errlen)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

static int user_version(struct vtl_catalog *cat, int *v)
{
	sqlite3_stmt *st;
	int rc = cat_row(cat, "PRAGMA user_version", &st, "");
	if (rc)
		return rc == VTL_E_NOTFOUND ? cat_fail(cat, VTL_E_IO, "no user_version") : rc;
	*v = sqlite3_column_int(st, 0);
	sqlite3_reset(st);
	return 0;
}

/* Brings the schema up to target, in one write transaction; 0 at once if it is there already. */
static int migrate(struct vtl_catalog *cat, bool create, int target)
{
	int v, rc = user_version(cat, &v);
	if (rc)
		return rc;
	if (v > CAT_SCHEMA_VERSION)
		return cat_fail(cat, VTL_E_INVAL, "schema version %d is newer than this program's %d", v,
				CAT_SCHEMA_VERSION);
	if (v >= target)
		return 0;
	rc = cat_begin(cat);
	if (rc == 0)
		rc = user_version(cat, &v); /* again: another process may have upgraded meanwhile */
	if (rc == 0 && v == 0) {
		sqlite3_stmt *st;
		int r = cat_row(cat, "SELECT name FROM sqlite_master WHERE name NOT LIKE 'sqlite!_%' ESCAPE '!'",
				&st, "");
		if (r == 0) {
			rc = cat_fail(cat, VTL_E_CORRUPT, "not a catalog: it has a table %s but no schema version",
				      (const char *)sqlite3_column_text(st, 0));
			sqlite3_reset(st);
		} else if (r != VTL_E_NOTFOUND) {
			rc = r;
		} else if (!create) {
			rc = cat_fail(cat, VTL_E_NOTFOUND, "holds no catalog");
		}
	}
	for (int i = v + 1; rc == 0 && i <= target; i++) {
		char *msg = NULL;
		int r = sqlite3_exec(cat->db, migrations[i], NULL, NULL, &msg);
		if (r != SQLITE_OK) {
			rc = cat_sqlerr(cat, r);
			cat_fail(cat, rc, "schema version %d: %s", i, msg ? msg : sqlite3_errstr(r));
		}
		sqlite3_free(msg);
	}
	return cat_end(cat, rc);
}

static int open_db(const char *path, bool create, int target, struct vtl_catalog **out, char *err, size_t errlen)
{
	if (err && errlen)
		err[0] = '\0';
	if (!out)
		return VTL_E_INVAL;
	*out = NULL;
	if (!path || !*path) {
		seterr(err, errlen, "no catalog path");
		return VTL_E_INVAL;
	}
	struct stat sb;
	if (!create && stat(path, &sb) != 0) {
		int e = errno;
		seterr(err, errlen, "%s: %s", path, strerror(e));
		errno = e;
		return e == ENOENT ? VTL_E_NOTFOUND : VTL_E_IO;
	}
	struct vtl_catalog *cat = calloc(1, sizeof(*cat));
	if (!cat) {
		seterr(err, errlen, "out of memory");
		return VTL_E_NOMEM;
	}
	pthread_mutex_init(&cat->mu, NULL);
	errbuf(cat)[0] = '\0'; /* no earlier handle's failure at this address shows as this one's */
	int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | (create ? SQLITE_OPEN_CREATE : 0);
	int rc = sqlite3_open_v2(path, &cat->db, flags, NULL);
	if (rc != SQLITE_OK) {
		rc = cat->db ? cat_sqlerr(cat, rc) : cat_fail(cat, VTL_E_NOMEM, "out of memory");
		goto fail;
	}
	sqlite3_extended_result_codes(cat->db, 1);
	sqlite3_busy_timeout(cat->db, CAT_BUSY_TIMEOUT_MS);

	/* Settings of this connection; journal_mode=WAL is stored in the file and returns the mode now in force. */
	sqlite3_stmt *st;
	/*
	 * Switching a new file to WAL needs an exclusive lock, and SQLite does not
	 * call the busy handler for it when another opener holds a shared one
	 * (seen as "database is locked" with several processes creating the
	 * catalog at once): wait here, within the same busy timeout.
	 */
	for (int waited = 0;; waited += 10) {
		rc = cat_row(cat, "PRAGMA journal_mode = WAL", &st, "");
		if (rc != VTL_E_BUSY || waited >= CAT_BUSY_TIMEOUT_MS)
			break;
		usleep(10000);
	}
	if (rc)
		goto fail;
	char mode[16];
	cat_col_text(st, 0, mode, sizeof(mode));
	sqlite3_reset(st);
	if (strcmp(mode, "wal") != 0) {
		rc = cat_fail(cat, VTL_E_IO, "journal mode is %s, not wal", mode);
		goto fail;
	}
	/*
	 * synchronous=FULL: each commit syncs the WAL before it returns, so what
	 * the catalog says about where data lives (cache state, copies, moves,
	 * jobs, releases) survives a power cut once the call returned, before
	 * anything acts on it. NORMAL let the last commits roll back: a host's
	 * first write to a premigrated cartridge could come back as premigrated
	 * with good tape copies, and a later release would empty the newer
	 * disk copy. Measured on the development machine's disk: 0.66 ms per
	 * commit instead of 0.05 ms; the catalog commits per mount, move and job
	 * step, never per block.
	 */
	if ((rc = cat_exec(cat, "PRAGMA foreign_keys = ON", "")) != 0 ||
	    (rc = cat_exec(cat, "PRAGMA synchronous = FULL", "")) != 0)
		goto fail;
	rc = migrate(cat, create, target);
	if (rc)
		goto fail;
	cat_unlock(cat, 0); /* resets anything left running; the handle is not shared yet */
	*out = cat;
	return 0;
fail:
	seterr(err, errlen, "%s: %s", path, errmsg_of(cat));
	catalog_close(cat);
	return rc;
}

int catalog_open(const char *path, bool create, struct vtl_catalog **out, char *err, size_t errlen)
{
	return open_db(path, create, CAT_SCHEMA_VERSION, out, err, errlen);
}

int catalog_open_at_version(const char *path, int version, struct vtl_catalog **out, char *err, size_t errlen)
{
	if (version < 1 || version > CAT_SCHEMA_VERSION) {
		if (out)
			*out = NULL;
		seterr(err, errlen, "no schema version %d", version);
		return VTL_E_INVAL;
	}
	return open_db(path, true, version, out, err, errlen);
}

void catalog_close(struct vtl_catalog *cat)
{
	if (!cat)
		return;
	for (int i = 0; i < cat->nstmt; i++)
		sqlite3_finalize(cat->stmt[i].st);
	sqlite3_close_v2(cat->db);
	pthread_mutex_destroy(&cat->mu);
	free(cat);
}

int catalog_schema_version(struct vtl_catalog *cat)
{
	if (!cat)
		return VTL_E_INVAL;
	cat_lock(cat);
	int v = 0, rc = user_version(cat, &v);
	return cat_unlock(cat, rc ? rc : v);
}

const char *catalog_last_error(struct vtl_catalog *cat)
{
	return errmsg_of(cat);
}

/* ------------------------------------------------------------------- check */

static int check_locked(struct vtl_catalog *cat)
{
	sqlite3_stmt *st;
	int rc = cat_row(cat, "PRAGMA integrity_check", &st, "");
	if (rc)
		return rc;
	char what[200];
	cat_col_text(st, 0, what, sizeof(what));
	sqlite3_reset(st);
	if (strcmp(what, "ok") != 0)
		return cat_fail(cat, VTL_E_CORRUPT, "integrity: %s", what);

	rc = cat_row(cat, "PRAGMA foreign_key_check", &st, "");
	if (rc == 0) {
		char table[64], parent[64];
		cat_col_text(st, 0, table, sizeof(table));
		cat_col_text(st, 2, parent, sizeof(parent));
		int64_t row = sqlite3_column_int64(st, 1);
		sqlite3_reset(st);
		return cat_fail(cat, VTL_E_CORRUPT, "foreign key: %s row %lld names a missing %s", table,
				(long long)row, parent);
	}
	if (rc != VTL_E_NOTFOUND)
		return rc;

	rc = cat_row(cat,
		     "SELECT e.library_id, e.address, c.barcode FROM element e JOIN cartridge c ON c.id = e.cartridge_id"
		     " WHERE c.library_id IS NOT e.library_id OR c.element IS NOT e.address LIMIT 1",
		     &st, "");
	if (rc == 0) {
		char bc[CAT_BARCODE_MAX + 1];
		cat_col_text(st, 2, bc, sizeof(bc));
		int64_t lib = sqlite3_column_int64(st, 0);
		int addr = sqlite3_column_int(st, 1);
		sqlite3_reset(st);
		return cat_fail(cat, VTL_E_CORRUPT, "element %d of library %lld holds %s, which is elsewhere", addr,
				(long long)lib, bc);
	}
	if (rc != VTL_E_NOTFOUND)
		return rc;

	rc = cat_row(cat,
		     "SELECT c.barcode, c.library_id, c.element FROM cartridge c LEFT JOIN element e"
		     " ON e.library_id = c.library_id AND e.address = c.element"
		     " WHERE c.element IS NOT NULL AND e.cartridge_id IS NOT c.id LIMIT 1",
		     &st, "");
	if (rc == 0) {
		char bc[CAT_BARCODE_MAX + 1];
		cat_col_text(st, 0, bc, sizeof(bc));
		int64_t lib = sqlite3_column_int64(st, 1);
		int addr = sqlite3_column_int(st, 2);
		sqlite3_reset(st);
		return cat_fail(cat, VTL_E_CORRUPT, "%s claims element %d of library %lld, which does not hold it", bc,
				addr, (long long)lib);
	}
	return rc == VTL_E_NOTFOUND ? 0 : rc;
}

int catalog_check(struct vtl_catalog *cat, char *err, size_t errlen)
{
	if (err && errlen)
		err[0] = '\0';
	if (!cat)
		return VTL_E_INVAL;
	cat_lock(cat);
	int rc = cat_exec(cat, "BEGIN", ""); /* one snapshot for all the checks */
	if (rc == 0) {
		rc = check_locked(cat);
		/* a read transaction: ending it commits nothing; roll back so a check never writes */
		cat_end(cat, rc ? rc : -1);
	}
	if (rc)
		seterr(err, errlen, "%s", errmsg_of(cat));
	return cat_unlock(cat, rc);
}
