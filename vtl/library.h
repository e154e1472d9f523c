/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A tape library as hosts and the operator both see it: the element map and
 * cartridges kept in the catalog, and an emulated drive behind each data
 * transfer element. Every movement of a cartridge (the changer's MOVE MEDIUM,
 * the operator's import, export, load and unload) goes through library_move,
 * so the catalog, the drives and what hosts are told never disagree, and the
 * state is in the catalog the moment a move ends.
 */
#ifndef VTL_VTL_LIBRARY_H
#define VTL_VTL_LIBRARY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backend/pool.h"
#include "catalog/catalog.h"
#include "vtl/scsi/ssc.h"

struct vtl_library;

struct library_options {
	uint64_t early_warning; /* passed to every drive (0: the drive's default) */
	unsigned clean_ms;      /* how long a drive's cleaning cycle takes */
};

/*
 * Opens library name of the catalog and creates a drive for each of its data
 * transfer elements (model and serial from the catalog). A cartridge the
 * catalog has in a drive is loaded into it again, so a restart keeps what
 * hosts saw. VTL_E_NOTFOUND (with err) for an unknown library.
 */
int library_open(struct vtl_catalog *cat, struct vtl_pool *pool, const char *name, const struct library_options *opt,
		 struct vtl_library **out, char *err, size_t errlen);

/* Unloads every drive, records each cartridge's usage and frees lib. */
void library_close(struct vtl_library *lib);

/* The library's catalog row (element ranges, identity). */
const struct cat_library *library_info(const struct vtl_library *lib);

/* Number of drives. */
unsigned library_drive_count(const struct vtl_library *lib);

/* Drive i (0-based, in address order) and its element address (may be NULL). */
struct ssc_drive *library_drive(struct vtl_library *lib, unsigned i, uint16_t *address);

/*
 * Moves the cartridge in element from to element to, as the robot does.
 * Out of a drive only once the drive has ejected it (VTL_E_BUSY otherwise);
 * into a drive only media that drive can read (VTL_E_INCOMPATIBLE). Also
 * VTL_E_INVAL for an address that is no storage, mail slot or drive element,
 * VTL_E_SRC_EMPTY, VTL_E_DST_FULL. err says what went wrong in words.
 */
int library_move(struct vtl_library *lib, uint16_t from, uint16_t to, const char *actor, char *err, size_t errlen);

/* An element as the changer reports it. */
struct library_element {
	struct cat_element e;
	bool accessible;          /* the robot can reach it: not a drive with its cartridge threaded or held */
	bool imported;            /* mail slot: the cartridge came from outside (an operator), not the robot */
	int lun;                  /* drive: its LUN; -1 for other elements */
	struct scsi_ident ident;  /* drive: vendor, product, serial */
};

/*
 * Calls fn for each element of type (CAT_ELEM_ALL: every type) in address
 * order; fn returning non-zero stops the walk and is returned.
 */
int library_elements(struct vtl_library *lib, enum cat_elem_type type,
		     int (*fn)(const struct library_element *le, void *arg), void *arg);

/*
 * Calls fn whenever a move touched an import/export element, so that the
 * changer can tell hosts (IMPORT OR EXPORT ELEMENT ACCESSED).
 */
void library_on_ie_change(struct vtl_library *lib, void (*fn)(void *arg), void *arg);

#endif
