/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The catalog: the library's memory, one SQLite database in WAL mode that
 * vtld, vtl-migrator and vtlctl open at the same time. It knows libraries,
 * their elements (SMC: medium transport, storage, import/export, data
 * transfer) and what each holds, drives, cartridges and their MAM
 * attributes, physical tapes, copies, jobs and an event log.
 *
 * Every function returns 0 or a negative vtl_err (common/vtl_error.h);
 * SQLite errors map to VTL_E_IO, "busy" beyond the busy timeout to
 * VTL_E_BUSY. All SQL lives in catalog/; every statement binds its values.
 */
#ifndef VTL_CATALOG_CATALOG_H
#define VTL_CATALOG_CATALOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/vtl_error.h"

#define CAT_NAME_MAX 64
#define CAT_BARCODE_MAX 32
#define CAT_NO_ELEMENT 0xFFFFu /* element address of a cartridge that is in no element */

struct vtl_catalog;

/* SMC element type codes (SMC-3, table "Element type code"). */
enum cat_elem_type {
	CAT_ELEM_ALL = 0,
	CAT_ELEM_TRANSPORT = 1, /* medium transport (robot) */
	CAT_ELEM_SLOT = 2,      /* storage */
	CAT_ELEM_IE = 3,        /* import/export (mail slot) */
	CAT_ELEM_DRIVE = 4,     /* data transfer */
};

enum cat_media {
	CAT_MEDIA_LTO5 = 5, CAT_MEDIA_LTO6, CAT_MEDIA_LTO7, CAT_MEDIA_LTO8, CAT_MEDIA_LTO9,
	CAT_MEDIA_LTO10 = 10, /* LTO-10 (suffix LA); there is no LTO-10 WORM value: no reference gives its suffix */
	CAT_MEDIA_LTO5W = 15, CAT_MEDIA_LTO6W, CAT_MEDIA_LTO7W, CAT_MEDIA_LTO8W, CAT_MEDIA_LTO9W,
	CAT_MEDIA_CLEANING = 30,
};

enum cat_cache_state {
	CAT_CACHE_RESIDENT = 0, CAT_CACHE_PREMIGRATED = 1, CAT_CACHE_MIGRATED = 2, CAT_CACHE_RECALLING = 3,
};

struct cat_library {
	int64_t id; /* set by catalog_library_create */
	char name[CAT_NAME_MAX + 1];
	char vendor[9], product[17], revision[5], serial[CAT_BARCODE_MAX + 1];
	/* First element address and count of each element type. */
	uint16_t transport_first, transports;
	uint16_t slot_first, slots;
	uint16_t ie_first, ies;
	uint16_t drive_first, drives;
};

struct cat_element {
	int64_t library_id;
	uint16_t address;
	enum cat_elem_type type;
	bool full;
	char barcode[CAT_BARCODE_MAX + 1]; /* empty when not full */
	uint16_t source;                   /* where the cartridge came from; CAT_NO_ELEMENT if unknown */
};

struct cat_drive {
	int64_t library_id;
	uint16_t address; /* its data transfer element */
	char vendor[9], model[17], revision[5], serial[CAT_BARCODE_MAX + 1];
	int lun;
	char state[16]; /* e.g. "online", "offline" */
};

struct cat_cartridge {
	char barcode[CAT_BARCODE_MAX + 1];
	enum cat_media media;
	uint64_t capacity;   /* nominal, bytes */
	bool write_protect;
	char state[16];      /* e.g. "available", "loaded", "exported" */
	int64_t library_id;  /* 0: in no library (exported) */
	uint16_t element;    /* CAT_NO_ELEMENT when in none */
	uint64_t bytes_written; /* host bytes, before compression */
	uint64_t bytes_stored;  /* bytes on the medium, after compression */
	uint64_t eod;           /* logical object number of end of data */
	uint32_t mounts;
	int64_t last_mounted;   /* Unix seconds, 0 = never */
	enum cat_cache_state cache;
};

struct cat_event {
	int64_t id;
	int64_t time; /* Unix seconds */
	char actor[32];
	char what[256];
};

/* Opens (create: creates if missing) the catalog at path, upgrading its schema in place. */
VTL_MUST_CHECK int catalog_open(const char *path, bool create, struct vtl_catalog **out, char *err, size_t errlen);
/* Closes the catalog. */
void catalog_close(struct vtl_catalog *cat);
/* The schema version of the open database. */
VTL_MUST_CHECK int catalog_schema_version(struct vtl_catalog *cat);

/* Creates a library and all its elements (empty); sets lib->id. VTL_E_EXISTS on a duplicate name. */
VTL_MUST_CHECK int catalog_library_create(struct vtl_catalog *cat, struct cat_library *lib);
/* Finds a library by name (NULL: the only one, VTL_E_INVAL if several). */
VTL_MUST_CHECK int catalog_library_get(struct vtl_catalog *cat, const char *name, struct cat_library *out);

/* Reads one element; VTL_E_NOTFOUND for an address the library does not have. */
VTL_MUST_CHECK int catalog_element_get(struct vtl_catalog *cat, int64_t library_id, uint16_t address, struct cat_element *out);
/* Calls fn for each element of type (CAT_ELEM_ALL: all) in address order; fn returning non-zero stops. */
VTL_MUST_CHECK int catalog_element_list(struct vtl_catalog *cat, int64_t library_id, enum cat_elem_type type,
			 int (*fn)(const struct cat_element *e, void *arg), void *arg);

/* Adds or replaces the drive at d->address (which must be a data transfer element). */
VTL_MUST_CHECK int catalog_drive_set(struct vtl_catalog *cat, const struct cat_drive *d);
/* Calls fn for each drive of the library in address order. */
VTL_MUST_CHECK int catalog_drive_list(struct vtl_catalog *cat, int64_t library_id, int (*fn)(const struct cat_drive *d, void *arg),
		       void *arg);

/*
 * Adds a cartridge; if c->element is not CAT_NO_ELEMENT it is placed there in
 * the same transaction (the element must exist and be empty). VTL_E_EXISTS on
 * a duplicate barcode, VTL_E_DST_FULL on a full element.
 */
VTL_MUST_CHECK int catalog_cartridge_add(struct vtl_catalog *cat, const struct cat_cartridge *c);
/* Reads a cartridge by barcode; VTL_E_NOTFOUND if none. */
VTL_MUST_CHECK int catalog_cartridge_get(struct vtl_catalog *cat, const char *barcode, struct cat_cartridge *out);
/* Calls fn for each cartridge (library_id 0: all) in barcode order. */
VTL_MUST_CHECK int catalog_cartridge_list(struct vtl_catalog *cat, int64_t library_id,
			   int (*fn)(const struct cat_cartridge *c, void *arg), void *arg);
/* Updates usage after a session: bytes, EOD, mounts, last mounted. */
VTL_MUST_CHECK int catalog_cartridge_usage(struct vtl_catalog *cat, const char *barcode, uint64_t bytes_written,
			    uint64_t bytes_stored, uint64_t eod, bool mounted);
/* Sets the cache state. */
VTL_MUST_CHECK int catalog_cartridge_set_cache(struct vtl_catalog *cat, const char *barcode, enum cat_cache_state st);
/* Sets the state word (e.g. "available", "loaded", "unloaded"); VTL_E_NOTFOUND for an unknown barcode. */
VTL_MUST_CHECK int catalog_cartridge_set_state(struct vtl_catalog *cat, const char *barcode, const char *state);
/*
 * Puts a cartridge into element (of library_id), or out of every element and
 * library (element CAT_NO_ELEMENT, library_id ignored), and sets its state, in
 * one transaction with an event naming actor: how an operator imports a
 * cartridge from outside the library into a mail slot, or takes one out.
 * VTL_E_NOTFOUND (cartridge or element), VTL_E_DST_FULL.
 */
VTL_MUST_CHECK int catalog_cartridge_place(struct vtl_catalog *cat, const char *barcode, int64_t library_id, uint16_t element,
			    const char *state, const char *actor);

/* Removes a cartridge (and its MAM attributes), emptying its element. */
VTL_MUST_CHECK int catalog_cartridge_remove(struct vtl_catalog *cat, const char *barcode);

/*
 * Moves the cartridge in element from to element to, in one transaction that
 * checks the source is full (VTL_E_SRC_EMPTY) and the destination empty
 * (VTL_E_DST_FULL); VTL_E_NOTFOUND for an address the library lacks. Records
 * the source, and an event naming actor.
 */
VTL_MUST_CHECK int catalog_move(struct vtl_catalog *cat, int64_t library_id, uint16_t from, uint16_t to, const char *actor);

/*
 * EXCHANGE MEDIUM in one transaction: the cartridge in src goes to dst1 and
 * the one that was in dst1 to dst2 (dst2 may be src: a swap). Checks as
 * catalog_move (VTL_E_SRC_EMPTY when src or dst1 is empty, VTL_E_DST_FULL);
 * VTL_E_INVAL when dst1 equals src or dst2. Records sources and one event.
 */
VTL_MUST_CHECK int catalog_exchange(struct vtl_catalog *cat, int64_t library_id, uint16_t src, uint16_t dst1, uint16_t dst2,
		     const char *actor);

/* Sets MAM attribute id of a cartridge (SPC-4 attribute identifier) to len bytes. */
VTL_MUST_CHECK int catalog_mam_set(struct vtl_catalog *cat, const char *barcode, uint16_t id, const void *val, size_t len);
/* Reads MAM attribute id into buf (cap bytes); *len = its true length. VTL_E_NOTFOUND if unset. */
VTL_MUST_CHECK int catalog_mam_get(struct vtl_catalog *cat, const char *barcode, uint16_t id, void *buf, size_t cap, size_t *len);
/* Removes MAM attribute id of a cartridge (no error if it was unset; VTL_E_NOTFOUND for an unknown cartridge). */
VTL_MUST_CHECK int catalog_mam_delete(struct vtl_catalog *cat, const char *barcode, uint16_t id);

/* A MAM attribute as catalog_mam_list hands it over. */
struct cat_mam_attr {
	uint16_t id;
	const uint8_t *value; /* valid during the callback only */
	size_t len;
};
/* Calls fn for each MAM attribute of the cartridge in identifier order (a list function: see below). */
VTL_MUST_CHECK int catalog_mam_list(struct vtl_catalog *cat, const char *barcode,
		     int (*fn)(const struct cat_mam_attr *a, void *arg), void *arg);

/* Appends an event (time = now). */
VTL_MUST_CHECK int catalog_event(struct vtl_catalog *cat, const char *actor, const char *what);
/* Calls fn for each event with id > after_id, oldest first, at most limit (0: all). */
VTL_MUST_CHECK int catalog_event_list(struct vtl_catalog *cat, int64_t after_id, unsigned limit,
		       int (*fn)(const struct cat_event *ev, void *arg), void *arg);

/* ------------------------------------------------------------------------
 * Added with the implementation in catalog/. Notes on the functions above:
 *
 * - A struct vtl_catalog may be shared by the threads of one process (calls
 *   on it are serialized); every process, and each side of a fork, opens its
 *   own. Writes start with BEGIN IMMEDIATE and wait up to CAT_BUSY_TIMEOUT_MS
 *   for writers of other handles and processes, so callers never retry;
 *   VTL_E_BUSY only after that. A failed call leaves no transaction open and
 *   changes nothing.
 * - catalog_open: VTL_E_NOTFOUND if path is missing (or holds no catalog)
 *   and !create; VTL_E_CORRUPT if it is not an SQLite database or one that
 *   is not a catalog; VTL_E_INVAL if its schema is newer than
 *   CAT_SCHEMA_VERSION. err (may be NULL) gets the reason.
 * - Strings longer than their field (barcode: CAT_BARCODE_MAX, name:
 *   CAT_NAME_MAX, the char arrays of the structs: their size - 1), NULL
 *   strings and empty names and barcodes are VTL_E_INVAL.
 * - List functions call fn with no lock or transaction held, so fn may call
 *   the catalog; each list is one consistent snapshot (events: read in
 *   batches by id). If fn returns non-zero the walk stops, and the list
 *   function returns that value if it is negative, else 0. VTL_E_NOTFOUND for
 *   a library (or cartridge) that does not exist.
 * - catalog_library_create: VTL_E_INVAL unless transports >= 1, every range
 *   ends at or below 0xFFFE and no two non-empty ranges overlap.
 * - catalog_drive_set: VTL_E_NOTFOUND if the library has no element at
 *   d->address, VTL_E_INVAL if it is not a data transfer element.
 * - catalog_cartridge_add: VTL_E_INVAL for a media or cache value outside the
 *   enums or an element without a library_id; VTL_E_NOTFOUND for an unknown
 *   library or element. The element's source becomes CAT_NO_ELEMENT.
 * - catalog_cartridge_usage sets the totals given (not increments); mounted
 *   adds one to mounts and sets last_mounted to now.
 * - Unknown barcodes are VTL_E_NOTFOUND everywhere.
 * - catalog_cartridge_remove also removes the cartridge's copies (below).
 * - catalog_move sets the destination's source to from, clears the source
 *   element's, leaves the cartridge's state alone and records the event
 *   "move <barcode> from <from> to <to>" in the same transaction.
 * - catalog_mam_set: VTL_E_INVAL if len > 65535 (or val NULL with len > 0).
 * - catalog_event: actor up to 31 characters, what up to 255.
 */

#define CAT_SCHEMA_VERSION 6     /* the schema catalog_open upgrades every catalog to */
/*
 * How long a call waits for other writers. A writer holds the lock through
 * its commit's fsync, which on a disk flooded by writeback took over 5 s
 * (bench_library, four LTO-8 copies and two hosts: a host's MOVE MEDIUM
 * failed with 44h/00h when this was 5 s). 30 s stays well below what hosts
 * allow a move or load (Linux ch's MOVE MEDIUM timeout,
 * timeout_move, is 300 s by default).
 */
#define CAT_BUSY_TIMEOUT_MS 30000
#define CAT_DIGEST_MAX 128       /* a copy's digest: text, e.g. "sha256:<hex>" */

/*
 * For tests: like catalog_open with create, but upgrades the schema only up
 * to version (1..CAT_SCHEMA_VERSION; never downgrades). Functions that need
 * tables of a later version fail with VTL_E_IO on such a handle.
 */
VTL_MUST_CHECK int catalog_open_at_version(const char *path, int version, struct vtl_catalog **out, char *err,
			    size_t errlen);

/*
 * The reason for the last failed call this thread made on cat, or "": kept
 * per thread, so another thread's failures on the same handle never show
 * here; valid until this thread's next catalog call.
 */
const char *catalog_last_error(struct vtl_catalog *cat);

/*
 * Checks SQLite's integrity and foreign keys and the catalog's own
 * invariant: an element holds a cartridge exactly when that cartridge's
 * library and element point back at it. 0, or VTL_E_CORRUPT with the first
 * problem in err (may be NULL).
 */
VTL_MUST_CHECK int catalog_check(struct vtl_catalog *cat, char *err, size_t errlen);

/* ---- Physical tapes (schema version 2): the real cartridges copies go to. */

struct cat_ptape {
	int64_t id; /* set by catalog_ptape_add */
	char barcode[CAT_BARCODE_MAX + 1];
	char library[CAT_NAME_MAX + 1]; /* the physical library that holds it */
	int32_t slot;                   /* its slot there, -1 if none */
	uint64_t capacity, used;        /* bytes */
	char state[16];                 /* e.g. "scratch", "filling", "full", "offline" */
	uint32_t files;                 /* tape files written on it (schema 3): the next one's number */
	char pool[CAT_NAME_MAX + 1];    /* its pool (schema 4); "" in catalog_ptape_add: CAT_POOL_DEFAULT */
};

#define CAT_POOL_DEFAULT "default" /* the pool of a physical tape nobody put in another */

/* Adds a physical tape; sets t->id. VTL_E_EXISTS on a duplicate barcode. */
VTL_MUST_CHECK int catalog_ptape_add(struct vtl_catalog *cat, struct cat_ptape *t);
/* Reads a physical tape by barcode. */
VTL_MUST_CHECK int catalog_ptape_get(struct vtl_catalog *cat, const char *barcode, struct cat_ptape *out);
/* Calls fn for each physical tape in barcode order. */
VTL_MUST_CHECK int catalog_ptape_list(struct vtl_catalog *cat, int (*fn)(const struct cat_ptape *t, void *arg), void *arg);
/*
 * Puts a physical tape in pool (schema 4). Only a tape without files moves:
 * VTL_E_INVAL for one that holds copies (or an empty or too long name),
 * VTL_E_NOTFOUND.
 */
VTL_MUST_CHECK int catalog_ptape_set_pool(struct vtl_catalog *cat, const char *barcode, const char *pool);

/* Sets a physical tape's used bytes and (state not NULL) its state. */
VTL_MUST_CHECK int catalog_ptape_update(struct vtl_catalog *cat, const char *barcode, uint64_t used, const char *state);


/* ---- Copies: where a cartridge's data lies on a physical tape. */

struct cat_copy {
	int64_t id;                        /* set by catalog_copy_add */
	char barcode[CAT_BARCODE_MAX + 1]; /* the (virtual) cartridge */
	char tape[CAT_BARCODE_MAX + 1];    /* the physical tape */
	uint32_t file;                     /* file number on that tape */
	uint64_t block;                    /* its first block */
	uint64_t length;                   /* bytes */
	char digest[CAT_DIGEST_MAX + 1];
	int64_t verified_at; /* Unix seconds, 0 = never */
	char state[16];      /* CAT_COPY_GOOD, CAT_COPY_BAD or CAT_COPY_INVALID */
	uint32_t block_size; /* a stacked copy's data block size, which its digest chains (schema 5); 0: not known */
};

/* Adds a copy (verified_at as given); sets c->id. VTL_E_NOTFOUND for an unknown cartridge or tape. */
VTL_MUST_CHECK int catalog_copy_add(struct vtl_catalog *cat, struct cat_copy *c);
/* Calls fn for each copy of the cartridge, oldest first. */
VTL_MUST_CHECK int catalog_copy_list(struct vtl_catalog *cat, const char *barcode, int (*fn)(const struct cat_copy *c, void *arg),
		      void *arg);
/* Sets a copy's state. VTL_E_NOTFOUND for an unknown id. */
VTL_MUST_CHECK int catalog_copy_set_state(struct vtl_catalog *cat, int64_t id, const char *state);
/* Records that a copy was verified at time when (Unix seconds). VTL_E_NOTFOUND for an unknown id. */
VTL_MUST_CHECK int catalog_copy_verified(struct vtl_catalog *cat, int64_t id, int64_t when);
/*
 * Records the data block size a verify read from a copy's header (a copy
 * recorded before schema 5 has 0). VTL_E_NOTFOUND for an unknown id.
 */
VTL_MUST_CHECK int catalog_copy_set_block_size(struct vtl_catalog *cat, int64_t id, uint32_t block_size);
/*
 * Records a copy written on a physical tape, in one transaction: the copy
 * (c->file must be the tape's files count; c->id is set), the tape's used
 * bytes, its state (NULL: kept) and one more file. VTL_E_BUSY when another
 * writer added a file meanwhile (nothing changes), VTL_E_NOTFOUND.
 */
VTL_MUST_CHECK int catalog_copy_commit(struct vtl_catalog *cat, struct cat_copy *c, uint64_t used, const char *state);

/* A copy's state: readable and current; failed a read or verify; replaced by a host's write (history). */
#define CAT_COPY_GOOD "good"
#define CAT_COPY_BAD "bad"
#define CAT_COPY_INVALID "invalid"

/*
 * A host changed the cartridge: in one transaction its cache state becomes
 * resident and every copy that is not bad becomes invalid (kept as history;
 * *copies, if not NULL, counts those that changed). VTL_E_NOTFOUND.
 */
VTL_MUST_CHECK int catalog_cartridge_modified(struct vtl_catalog *cat, const char *barcode, unsigned *copies);

/* ---- Jobs of the migrator. */

enum cat_job_kind { CAT_JOB_MIGRATE = 1, CAT_JOB_RECALL = 2, CAT_JOB_VERIFY = 3 };

enum cat_job_state {
	CAT_JOB_ANY = 0, /* catalog_job_list: every state */
	CAT_JOB_QUEUED = 1, CAT_JOB_RUNNING = 2, CAT_JOB_DONE = 3, CAT_JOB_FAILED = 4,
};

/* A job's kind of copy (job.copy, schema 6): the stored records in big blocks, or the host's blocks one to one. */
#define CAT_COPY_STACKED "stacked"
#define CAT_COPY_NATIVE "native"
#define CAT_JOB_DRIVE_ANY (-1)
#define CAT_JOB_RATE_MAX 100000 /* MB/s: the most a job may ask for, as [migrator] rate */

/* What a job was asked for (schema 6); zeroed, with drive = CAT_JOB_DRIVE_ANY, it asks for the defaults. */
struct cat_job_opts {
	int drive;                      /* the physical drive; CAT_JOB_DRIVE_ANY: any */
	unsigned rate;                  /* MB/s, at most CAT_JOB_RATE_MAX; 0: the configured rate */
	bool native;                    /* a native export copy, not a stacked one */
	char library[CAT_NAME_MAX + 1]; /* the physical library; "": the migrator's own */
};

struct cat_job {
	int64_t id;
	enum cat_job_kind kind;
	char barcode[CAT_BARCODE_MAX + 1]; /* kept when the cartridge is removed */
	enum cat_job_state state;
	uint64_t bytes_done;
	int64_t started, finished; /* Unix seconds, 0 = not yet */
	char error[256];
	struct cat_job_opts opts;
};

/* Queues a job for the cartridge with the defaults; *id = its id (ids only grow). VTL_E_NOTFOUND for an unknown cartridge. */
VTL_MUST_CHECK int catalog_job_add(struct vtl_catalog *cat, enum cat_job_kind kind, const char *barcode, int64_t *id);
/* catalog_job_add with what the job asks for (o); VTL_E_INVAL for a drive below -1, a rate above the most or a bad library name. */
VTL_MUST_CHECK int catalog_job_add_opts(struct vtl_catalog *cat, enum cat_job_kind kind, const char *barcode,
					const struct cat_job_opts *o, int64_t *id);
/*
 * Sets a job's state and bytes done, and (error not NULL) its error text.
 * RUNNING sets started to now if it was 0, DONE and FAILED set finished to
 * now, QUEUED clears both. VTL_E_NOTFOUND for an unknown id.
 */
VTL_MUST_CHECK int catalog_job_update(struct vtl_catalog *cat, int64_t id, enum cat_job_state state, uint64_t bytes_done,
		       const char *error);
/* Sends a queued job to physical library library; VTL_E_NOTFOUND when no queued job has that id. */
VTL_MUST_CHECK int catalog_job_set_library(struct vtl_catalog *cat, int64_t id, const char *library);
/* Reads a job. */
VTL_MUST_CHECK int catalog_job_get(struct vtl_catalog *cat, int64_t id, struct cat_job *out);
/* Calls fn for each job in state (CAT_JOB_ANY: all), oldest first. */
VTL_MUST_CHECK int catalog_job_list(struct vtl_catalog *cat, enum cat_job_state state, int (*fn)(const struct cat_job *j, void *arg),
		     void *arg);

#endif
