/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The write throttle: when the disk pool's fill reaches [policy] throttle,
 * hosts' WRITE and WRITE FILEMARKS commands are slowed, all drives together,
 * to [policy] throttle_rate MB/s, so that the migrator can copy and release
 * cartridges before the pool runs out. A write is delayed, never failed.
 * The fill is measured at most once a second (with a rescan of the pool, so
 * that space the migrator released counts).
 */
#ifndef VTL_LIBRARY_THROTTLE_H
#define VTL_LIBRARY_THROTTLE_H

#include <stdbool.h>
#include <stdint.h>

#include "backend/pool.h"
#include "common/vtl_error.h"
#include "vtl/scsi/cmd.h"

#define THROTTLE_MEASURE_NS 1000000000ull /* the pool's fill is measured at most this often */

struct throttle;

/* What the throttle sees now. */
struct throttle_state {
	double fill;        /* percent of the pool used, as last measured */
	bool active;        /* writes are being slowed */
	unsigned threshold; /* fill (percent) from which they are; 0: never */
	unsigned rate;      /* MB/s they are slowed to */
};

/* A throttle over pool: from threshold percent (0: never) writes go at rate MB/s (rate > 0). */
int throttle_create(struct vtl_pool *pool, unsigned threshold, unsigned rate, struct throttle **out);

/* Frees t (NULL is fine). */
void throttle_destroy(struct throttle *t);

/* Changes the threshold (0: never) and the rate (> 0, else VTL_E_INVAL) while drives write (a reload). */
int throttle_set(struct throttle *t, unsigned threshold, unsigned rate) VTL_MUST_CHECK;

/* Before a drive runs c (on its worker): sleeps as long as a write must wait while throttled; else returns at once. */
void throttle_gate(struct throttle *t, const struct scsi_cmd *c);

/* Fills *st, measuring the pool first if the last measure is older than THROTTLE_MEASURE_NS. */
void throttle_state(struct throttle *t, struct throttle_state *st);

/*
 * The arithmetic, for tests: a write of bytes at rate bytes/s asked at now
 * (ns) starts when the writes before it are through, *next (ns); returns how
 * long it waits (ns) and moves *next past it.
 */
uint64_t throttle_schedule(uint64_t *next, uint64_t now, uint64_t bytes, uint64_t rate);

/* Whether cdb is one the throttle slows: WRITE(6) or WRITE FILEMARKS(6). */
bool throttle_is_write(const uint8_t *cdb);

#endif
