/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The cache policy of the disk pool: one pass looks at the library's
 * cartridges and the pool's fill, queues copies (migrate jobs) of the
 * resident cartridges a rule names, and under pool pressure releases the
 * disk copies of premigrated cartridges, least recently mounted first, from
 * the high-water mark down to the low-water mark (docs/migrator.md, "Cache
 * policy"). Pressure has hysteresis: it begins when the fill reaches the high
 * mark and lasts, pass after pass, until the fill is at the low mark. It runs no job itself: the migrator's worker runs what it queues.
 *
 * A cartridge loaded in a drive, or with a queued or running job, is never
 * chosen. A release first shows the disk copy to be what its good tape
 * copies hold (below; a copy whose block size the catalog lacks gets a
 * verify job queued instead, which records it), then marks the cartridge
 * migrated in the catalog before it empties its files, holding the
 * cartridge's write lock all along, so a crash never shows a cartridge
 * resident or premigrated whose data is gone.
 */
#ifndef VTL_MIGRATOR_POLICY_H
#define VTL_MIGRATOR_POLICY_H

#include <stdbool.h>
#include <stdint.h>

#include "backend/pool.h"
#include "catalog/catalog.h"
#include "config/config.h"

/*
 * Rule "full": the cartridge's stored bytes reached its early-warning point,
 * capacity - capacity / POLICY_EW_DIVISOR, at most POLICY_EW_MAX before the
 * end: the point the emulated drives report early warning at by default.
 */
#define POLICY_EW_DIVISOR 50
#define POLICY_EW_MAX (64ull << 30)
#define POLICY_LIST_MAX 16 /* barcodes a report names for each kind of action */

/* What a pass works on. */
struct policy_ctx {
	struct vtl_catalog *cat;
	struct vtl_pool *pool;
	const char *library;                 /* the virtual library's name */
	const struct vtl_policy_config *cfg;
	int64_t now;                         /* Unix seconds: the time the idle rule measures against */
	bool draining;                       /* the last pass's report.draining: releases go on below high water */
};

/* Barcodes a pass acted on (the first POLICY_LIST_MAX), and how many in all. */
struct policy_list {
	unsigned n;
	char barcode[POLICY_LIST_MAX][CAT_BARCODE_MAX + 1];
};

/* What a pass did. */
struct policy_report {
	int64_t time;                   /* when it ran (ctx.now) */
	struct vtl_pool_fill before, after;
	struct policy_list full, ejected, idle; /* copies queued by each rule */
	struct policy_list pressure;    /* copies queued because the pool stayed above low water */
	struct policy_list pools;       /* copies queued for a copy pool that lacked one (copy_pools) */
	struct policy_list released;    /* disk copies released */
	uint64_t released_bytes;        /* bytes those held on disk */
	struct policy_list busy;        /* releases skipped: another process held the cartridge open */
	struct policy_list refused;     /* releases refused: the disk copy does not match its copies, or cannot be shown to */
	struct policy_list verify;      /* verifies queued: a good copy's block size is not known (schema 4 or older) */
	bool draining;                  /* releases began and the pool is still above low water: the next pass goes on */
};

/*
 * Runs one policy pass (see above) and fills *r. Returns 0, or the first
 * catalog or pool error (err says what); a cartridge that cannot be released
 * for being busy, or whose release is refused (below), is skipped, not an
 * error; one with a good copy whose block size is not known gets a verify
 * job instead, which records it, so that a later pass can release it.
 */
int policy_pass(const struct policy_ctx *ctx, struct policy_report *r, char *err, size_t errlen);

/*
 * Releases the disk copy of the premigrated cartridge barcode, once it has a
 * good copy in each of cfg's copy pools (cfg NULL: any one copy): marks it
 * migrated, empties its files (it stays in the pool as a blank cartridge;
 * its bytes and EOD in the catalog are kept for the recall) and records an
 * event saying why. *freed = bytes it held on disk. VTL_E_INVAL when it is
 * not premigrated, VTL_E_BUSY when it is loaded, has a queued or running job,
 * or another process holds it open; err says which. Before anything is
 * emptied, the disk copy is compared with every good stacked copy: as many
 * bytes of records to end of data, and the digest recomputed from the disk
 * with each copy's block size. A difference refuses with VTL_E_CORRUPT (a
 * copy recorded without its block size: VTL_E_INVAL, until a verify records
 * it; a damaged disk copy: VTL_E_MEDIUM), records an event, and marks
 * nothing good or bad.
 */
int policy_release(struct vtl_catalog *cat, struct vtl_pool *pool, const struct vtl_policy_config *cfg,
		   const char *barcode, const char *why, uint64_t *freed, char *err, size_t errlen);


/*
 * The operator's forced release (vtlctl release --force): as policy_release
 * with the reason why, and a damaged disk copy (damaged ranges, or records
 * that fail their checks) is given up too, marked migrated and emptied, when
 * every good stacked copy holds the bytes the catalog recorded for the
 * cartridge before the damage, those of one block size agree, one of them
 * is verified with its block size known, and the disk copy holds no more
 * than the catalog recorded. did gets the line the event log records (it
 * says "forced"; "" when the disk copy was sound, matched and was released
 * as policy_release does). A sound disk copy that differs is never given up;
 * refusals change nothing and say why in err (VTL_E_NOTFOUND: no good copy).
 */
int policy_release_forced(struct vtl_catalog *cat, struct vtl_pool *pool, const struct vtl_policy_config *cfg,
			  const char *barcode, const char *why, uint64_t *freed, char *did, size_t didlen, char *err,
			  size_t errlen);

/*
 * Which of cfg's copy pools hold a good stacked copy of barcode: bit i for
 * cfg->copy_pool[i] (a native export copy does not count: it cannot be
 * recalled). 0 or a catalog error.
 */
int policy_copy_pools(struct vtl_catalog *cat, const struct vtl_policy_config *cfg, const char *barcode,
		      unsigned *have);

/* The pool the next copy of a cartridge goes to: the first copy pool without one, else the first. */
const char *policy_next_pool(const struct vtl_policy_config *cfg, unsigned have);

/* The rule "full": whether stored bytes reached the early-warning point of capacity (0: never full). */
bool policy_full(uint64_t stored, uint64_t capacity);

#endif
