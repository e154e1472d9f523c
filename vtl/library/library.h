/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A tape library as hosts and the operator both see it: the element map and
 * cartridges kept in the catalog, and an emulated drive behind each data
 * transfer element. Every movement of a cartridge (the changer's MOVE MEDIUM
 * and EXCHANGE MEDIUM, the operator's import, export, load and unload) goes
 * through this model, so the catalog, the drives and what hosts are told
 * never disagree, and the state is in the catalog the moment a move ends.
 * The mail slot bank's open state and the hosts' prevent state are kept in
 * memory only: a restart closes the bank and allows removal, as a power
 * cycle of a real library does.
 */
#ifndef VTL_LIBRARY_LIBRARY_H
#define VTL_LIBRARY_LIBRARY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backend/pool.h"
#include "catalog/catalog.h"
#include "vtl/drive/ssc.h"

struct vtl_library;

struct library_options {
	uint64_t early_warning; /* passed to every drive (0: the drive's default) */
	unsigned clean_ms;      /* how long a drive's cleaning cycle takes */
	const char *migrator;   /* vtl-migrator's control socket, told of recalls at once (NULL: it finds them itself) */
	unsigned stage_wait_ms; /* passed to every drive: how long a command waits on a recall (0: SSC_STAGE_WAIT_MS) */
	/*
	 * The model without its drives, for vtlctl while vtld is stopped: no drive
	 * is created and nothing is loaded; moves obey the same rules (a drive
	 * element takes only media its catalog model reads) and are recorded in
	 * the catalog only. The pool may be NULL (then no blank cartridge is
	 * created: library_import refuses a barcode the catalog lacks).
	 */
	bool offline;
};

/*
 * Opens library name of the catalog and creates a drive for each of its data
 * transfer elements (model and serial from the catalog). A cartridge the
 * catalog has in a drive is loaded into it again, so a restart keeps what
 * hosts saw. VTL_E_NOTFOUND (with err) for an unknown library; VTL_E_CONFIG
 * for a drive model the library does not emulate. With opt->offline, no
 * drive is created (see struct library_options).
 */
int library_open(struct vtl_catalog *cat, struct vtl_pool *pool, const char *name, const struct library_options *opt,
		 struct vtl_library **out, char *err, size_t errlen);

/*
 * Closes every drive (a loaded cartridge is synced and stays in its drive),
 * records each cartridge's usage and frees lib. Returns the first drive's
 * close error (its final sync failed; each is logged), else VTL_OK.
 */
int library_close(struct vtl_library *lib);

/* The library's catalog row (element ranges, identity). */
const struct cat_library *library_info(const struct vtl_library *lib);

/* Number of drives. */
unsigned library_drive_count(const struct vtl_library *lib);

/* Drive i (0-based, in address order) and its element address (may be NULL); NULL offline. */
struct ssc_drive *library_drive(struct vtl_library *lib, unsigned i, uint16_t *address);

/* The actor of the changer's own commands: its moves raise no IMPORT OR EXPORT ELEMENT ACCESSED. */
#define LIBRARY_ACTOR_HOST "host"

/*
 * Moves the cartridge in element from to element to, as the robot does.
 * Out of a drive only once the drive has ejected it (VTL_E_BUSY otherwise);
 * into a drive only media that drive can read (VTL_E_INCOMPATIBLE); to or
 * from a mail slot not while the bank is open (VTL_E_INACCESSIBLE). Also
 * VTL_E_INVAL for an address that is no storage, mail slot or drive element,
 * VTL_E_SRC_EMPTY, VTL_E_DST_FULL. err says what went wrong in words. Any
 * failure leaves everything where it was.
 */
int library_move(struct vtl_library *lib, uint16_t from, uint16_t to, const char *actor, char *err, size_t errlen);

/*
 * EXCHANGE MEDIUM: the cartridge in src goes to dst1 and the one that was in
 * dst1 to dst2; dst2 may be src (a swap). Every check of library_move is made
 * for both cartridges before either moves (VTL_E_SRC_EMPTY also when dst1 is
 * empty; VTL_E_INVAL when dst1 equals src or dst2), and the catalog records
 * both in one transaction: nothing is ever half done.
 */
int library_exchange(struct vtl_library *lib, uint16_t src, uint16_t dst1, uint16_t dst2, const char *actor, char *err,
		     size_t errlen);

/*
 * The operator puts cartridge barcode from outside the library into the
 * empty mail slot ie (a barcode the catalog lacks is created blank, its
 * capacity the label's nominal one). VTL_E_INVAL (ie is no mail slot or the
 * barcode is malformed), VTL_E_DST_FULL, VTL_E_EXISTS (the cartridge is in
 * an element or another library), VTL_E_BUSY while a host prevents removal.
 */
int library_import(struct vtl_library *lib, const char *barcode, uint16_t ie, const char *actor, char *err,
		   size_t errlen);

/*
 * The operator takes the cartridge in mail slot ie out of the library (the
 * catalog keeps it, in no element, state "exported"). VTL_E_INVAL,
 * VTL_E_SRC_EMPTY, VTL_E_BUSY while a host prevents removal.
 */
int library_export(struct vtl_library *lib, uint16_t ie, const char *actor, char *err, size_t errlen);

/*
 * The operator has the robot load what (a barcode in the library, or an
 * element address in decimal) into the drive at drive: library_move's rules.
 */
int library_load(struct vtl_library *lib, const char *what, uint16_t drive, const char *actor, char *err,
		 size_t errlen);

/*
 * The operator unloads the drive at drive (VTL_E_BUSY while a host of the
 * drive prevents removal) and has the robot take the cartridge to slot, or
 * with slot CAT_NO_ELEMENT back to its source slot (the first empty slot if
 * that is full). The destination is checked before the drive unloads. When
 * the drive's close fails (its last writes could not be made durable) the
 * cartridge is moved all the same and that error is returned, err saying so.
 */
int library_unload(struct vtl_library *lib, uint16_t drive, uint16_t slot, const char *actor, char *err,
		   size_t errlen);

/* Whether hosts of the changer prevent medium removal: while they do, the mail slots stay locked. */
void library_set_prevent(struct vtl_library *lib, bool prevent);

/*
 * Opens (or closes) the mail slot bank that holds element ie, as OPEN/CLOSE
 * IMPORT/EXPORT ELEMENT does; while open, the robot cannot reach the mail
 * slots. VTL_E_INVAL for no mail slot; opening is refused (VTL_E_BUSY) while
 * a host prevents removal and a mail slot holds a cartridge. A change by
 * anyone but LIBRARY_ACTOR_HOST is reported as an import/export change.
 */
int library_ie_set_open(struct vtl_library *lib, uint16_t ie, bool open, const char *actor, char *err, size_t errlen);

/* Whether the mail slot bank is open. */
bool library_ie_is_open(struct vtl_library *lib);

/* An element as the changer reports it. */
struct library_element {
	struct cat_element e;
	bool accessible;          /* the robot can reach it: not a drive with its cartridge threaded or held,
				     not a mail slot of an open bank */
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
 * Calls fn (NULL: no one) whenever an operator's action (any actor but
 * LIBRARY_ACTOR_HOST) touched an import/export element, so that the changer
 * can tell hosts (IMPORT OR EXPORT ELEMENT ACCESSED). fn runs with no lock of
 * the library held.
 */
void library_on_ie_change(struct vtl_library *lib, void (*fn)(void *arg), void *arg);

#endif
