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
int catalog_open(const char *path, bool create, struct vtl_catalog **out, char *err, size_t errlen);
/* Closes the catalog. */
void catalog_close(struct vtl_catalog *cat);
/* The schema version of the open database. */
int catalog_schema_version(struct vtl_catalog *cat);

/* Creates a library and all its elements (empty); sets lib->id. VTL_E_EXISTS on a duplicate name. */
int catalog_library_create(struct vtl_catalog *cat, struct cat_library *lib);
/* Finds a library by name (NULL: the only one, VTL_E_INVAL if several). */
int catalog_library_get(struct vtl_catalog *cat, const char *name, struct cat_library *out);

/* Reads one element; VTL_E_NOTFOUND for an address the library does not have. */
int catalog_element_get(struct vtl_catalog *cat, int64_t library_id, uint16_t address, struct cat_element *out);
/* Calls fn for each element of type (CAT_ELEM_ALL: all) in address order; fn returning non-zero stops. */
int catalog_element_list(struct vtl_catalog *cat, int64_t library_id, enum cat_elem_type type,
			 int (*fn)(const struct cat_element *e, void *arg), void *arg);

/* Adds or replaces the drive at d->address (which must be a data transfer element). */
int catalog_drive_set(struct vtl_catalog *cat, const struct cat_drive *d);
/* Calls fn for each drive of the library in address order. */
int catalog_drive_list(struct vtl_catalog *cat, int64_t library_id, int (*fn)(const struct cat_drive *d, void *arg),
		       void *arg);

/*
 * Adds a cartridge; if c->element is not CAT_NO_ELEMENT it is placed there in
 * the same transaction (the element must exist and be empty). VTL_E_EXISTS on
 * a duplicate barcode, VTL_E_DST_FULL on a full element.
 */
int catalog_cartridge_add(struct vtl_catalog *cat, const struct cat_cartridge *c);
/* Reads a cartridge by barcode; VTL_E_NOTFOUND if none. */
int catalog_cartridge_get(struct vtl_catalog *cat, const char *barcode, struct cat_cartridge *out);
/* Calls fn for each cartridge (library_id 0: all) in barcode order. */
int catalog_cartridge_list(struct vtl_catalog *cat, int64_t library_id,
			   int (*fn)(const struct cat_cartridge *c, void *arg), void *arg);
/* Updates usage after a session: bytes, EOD, mounts, last mounted. */
int catalog_cartridge_usage(struct vtl_catalog *cat, const char *barcode, uint64_t bytes_written,
			    uint64_t bytes_stored, uint64_t eod, bool mounted);
/* Sets the cache state. */
int catalog_cartridge_set_cache(struct vtl_catalog *cat, const char *barcode, enum cat_cache_state st);
/* Removes a cartridge (and its MAM attributes), emptying its element. */
int catalog_cartridge_remove(struct vtl_catalog *cat, const char *barcode);

/*
 * Moves the cartridge in element from to element to, in one transaction that
 * checks the source is full (VTL_E_SRC_EMPTY) and the destination empty
 * (VTL_E_DST_FULL); VTL_E_NOTFOUND for an address the library lacks. Records
 * the source, and an event naming actor.
 */
int catalog_move(struct vtl_catalog *cat, int64_t library_id, uint16_t from, uint16_t to, const char *actor);

/* Sets MAM attribute id of a cartridge (SPC-4 attribute identifier) to len bytes. */
int catalog_mam_set(struct vtl_catalog *cat, const char *barcode, uint16_t id, const void *val, size_t len);
/* Reads MAM attribute id into buf (cap bytes); *len = its true length. VTL_E_NOTFOUND if unset. */
int catalog_mam_get(struct vtl_catalog *cat, const char *barcode, uint16_t id, void *buf, size_t cap, size_t *len);

/* Appends an event (time = now). */
int catalog_event(struct vtl_catalog *cat, const char *actor, const char *what);
/* Calls fn for each event with id > after_id, oldest first, at most limit (0: all). */
int catalog_event_list(struct vtl_catalog *cat, int64_t after_id, unsigned limit,
		       int (*fn)(const struct cat_event *ev, void *arg), void *arg);

#endif
