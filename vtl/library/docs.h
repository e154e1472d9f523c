/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The library's catalog as JSON documents: its elements, drives, cartridges
 * and event log, written exactly as `vtlctl --json slot list`, `drive
 * list`, `cartridge list` and `events` print them and vtld's /api/elements,
 * /api/drives, /api/cartridges and /api/events serve them (one writer for
 * both), and the vocabulary they use.
 */
#ifndef VTL_LIBRARY_DOCS_H
#define VTL_LIBRARY_DOCS_H

#include <stdint.h>
#include <stdio.h>

#include "backend/cartridge.h"
#include "backend/pool.h"
#include "catalog/catalog.h"
#include "common/jsonw.h"
#include "config/config.h"

/* Type of the element at address in lib (CAT_ELEM_ALL if it has none there). */
enum cat_elem_type libdoc_elem_type(const struct cat_library *lib, uint16_t address);

/* "transport", "slot", "ie", "drive" (what --type takes and the documents say). */
const char *libdoc_elem_type_name(enum cat_elem_type t);

/* 1-based number of the element among those of its type (slot 1, drive 2), 0 if none. */
unsigned libdoc_elem_ordinal(const struct cat_library *lib, uint16_t address);

/* Which elements libdoc_elements lists. */
enum libdoc_filter { LIBDOC_ALL, LIBDOC_FULL, LIBDOC_EMPTY };

/*
 * Writes {"elements":[...]} of lib's elements of type (CAT_ELEM_ALL: every
 * one) onto f, closed even when the catalog fails midway (what was written
 * stays parseable). VTL_OK or the catalog's error.
 */
int libdoc_elements(struct vtl_catalog *cat, const struct cat_library *lib, enum cat_elem_type type,
		    enum libdoc_filter filter, FILE *f);

/* "resident", "premigrated", "migrated", "recalling": a cache state as the documents and tables name it. */
const char *libdoc_cache_name(enum cat_cache_state s);

/* The members of a cartridge's object (barcode, media, location, bytes, cache...) into the open object of j. */
void libdoc_cartridge_fields(struct json *j, const struct cat_library *lib, const struct cat_cartridge *c);

/* Writes {"library":...,"cartridges":[...],"count":N} of every cartridge in the catalog onto f; as libdoc_elements. */
int libdoc_cartridges(struct vtl_catalog *cat, const struct cat_library *lib, FILE *f);

/* A library's drives as the catalog has them, with the barcode each holds ("" when empty). */
struct libdoc_drive_rows {
	struct cat_drive d[VTL_CFG_MAX_DRIVES];
	char loaded[VTL_CFG_MAX_DRIVES][CAT_BARCODE_MAX + 1];
	size_t n;
};

/* Reads lib's drives into *out (allocated; the caller frees it). VTL_OK, VTL_E_NOMEM or the catalog's error. */
int libdoc_drive_rows(struct vtl_catalog *cat, const struct cat_library *lib, struct libdoc_drive_rows **out);

/* Writes {"drives":[...]} of lib's drives onto f (nothing when the catalog fails first). VTL_OK or the error. */
int libdoc_drives(struct vtl_catalog *cat, const struct cat_library *lib, FILE *f);

/* Writes {"events":[...]}, those after id since, at most limit (0: all), onto f; as libdoc_elements. */
int libdoc_events(struct vtl_catalog *cat, int64_t since, unsigned limit, FILE *f);

/* What `library show` counts: full elements by type, cartridges in this library and outside any. */
struct libdoc_counts {
	unsigned full[CAT_ELEM_DRIVE + 1];
	unsigned long in, outside;
};

/* Counts lib's full elements and the catalog's cartridges into *out. VTL_OK or the catalog's error. */
int libdoc_count(struct vtl_catalog *cat, const struct cat_library *lib, struct libdoc_counts *out);

/* Where `library show` reads from: the files' paths, and the pool (NULL: it did not open, pool_err says why). */
struct libdoc_library_src {
	const char *catalog, *config;
	struct vtl_pool *pool;
	const char *pool_err;
};

/*
 * Writes the document of `vtlctl --json library show` and /api/library
 * (identity, element ranges with their fill, cartridges, pool members'
 * space) onto f. VTL_OK or the catalog's error (nothing written then).
 */
int libdoc_library(struct vtl_catalog *cat, const struct cat_library *lib, const struct libdoc_library_src *src,
		   FILE *f);

/* A tape copy of a cartridge, with the physical library and pool of its tape ("" when the catalog has no such tape). */
struct libdoc_copy {
	struct cat_copy k;
	char library[CAT_NAME_MAX + 1], pool[CAT_NAME_MAX + 1];
};

/* One cartridge as `cartridge show` shows it: its row, what the pool holds of it, its tape copies. */
struct libdoc_cart {
	struct cat_cartridge c;
	int pool_rc;             /* 0: info is what the pool holds; else pool_err says why not */
	char pool_err[512];
	struct vtl_cart_info info;
	struct libdoc_copy *copies; /* allocated: libdoc_cart_free */
	size_t ncopies, cap;
};

/*
 * Reads barcode's row, its pool info (pool NULL: pool_err is why none) and
 * copies into *out. VTL_OK; VTL_E_NOTFOUND when the catalog has no such
 * cartridge; the catalog's error otherwise (*out freed then).
 */
int libdoc_cart_read(struct vtl_catalog *cat, struct vtl_pool *pool, const char *pool_err, const char *barcode,
		     struct libdoc_cart *out);

/* Writes the document of `vtlctl --json cartridge show` and /api/cartridges/BARCODE onto f. */
void libdoc_cart_write(const struct cat_library *lib, const struct libdoc_cart *k, FILE *f);

/* Frees what libdoc_cart_read allocated. */
void libdoc_cart_free(struct libdoc_cart *k);

#endif
