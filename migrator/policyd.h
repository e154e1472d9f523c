/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The cache policy in the running vtl-migrator: a policy pass every
 * [policy] interval, run by the dispatcher while jobs run on the drives (a
 * pass leaves every cartridge with a queued or running job alone, so it
 * never races one), the last pass kept for the "policy" request, and the
 * operator's "release BARCODE".
 */
#ifndef VTL_MIGRATOR_POLICYD_H
#define VTL_MIGRATOR_POLICYD_H

#include <stdbool.h>
#include <stddef.h>

#include "backend/pool.h"
#include "catalog/catalog.h"
#include "config/config.h"

struct policyd;

/* A policy runner over cat and pool for the library and [policy] of cfg (all must outlive it). */
int policyd_create(struct vtl_catalog *cat, struct vtl_pool *pool, const struct vtl_config *cfg,
		   struct policyd **out);

/* Frees pd (NULL is fine). */
void policyd_destroy(struct policyd *pd);

/* Makes later passes and releases use p (a reload; copied): its marks, rules, idle time and interval. */
void policyd_set(struct policyd *pd, const struct vtl_policy_config *p);

/* Runs a pass when the interval has passed since the last one; call only where no job of this process runs. */
void policyd_tick(struct policyd *pd);

/* What the policy did since the start: passes, copies queued, disk copies released and their bytes. */
struct policyd_counts {
	unsigned long passes, queued, released;
	uint64_t released_bytes;
};

/* Fills *out (waits for a pass that is running). */
void policyd_counts(struct policyd *pd, struct policyd_counts *out);

/* Answers "policy": the pool's fill now, the marks and rules, and what the last pass did (JSON into out). */
void policyd_answer_status(struct policyd *pd, char *out, size_t cap);

/*
 * Answers "release BARCODE" (force: "release BARCODE force"): releases the
 * disk copy of a premigrated cartridge (policy_release, policy_release_forced), or says why not.
 */
void policyd_answer_release(struct policyd *pd, const char *barcode, bool force, char *out, size_t cap);

#endif
