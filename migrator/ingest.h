/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Host ingest first: the rule by which the hosts' traffic and the copies'
 * pool reads share the disk pool (docs/migrator.md, "Host ingest first").
 * vtld tells the migrator about once a second how many MB/s its hosts move
 * through the drives (the `ingest` hint); while they move any, the copies
 * together read at most what is left of [migrator] pool_rate, each copy
 * keeping at least copy_floor so that no drive stops. A report older than
 * INGEST_STALE_MS counts as none: a vtld that stopped or died does not hold
 * the copies back. No clock inside: callers pass the time.
 */
#ifndef VTL_MIGRATOR_INGEST_H
#define VTL_MIGRATOR_INGEST_H

#include <stdatomic.h>
#include <stdint.h>

#define INGEST_STALE_MS 5000 /* vtld reports every second while hosts move data: five missed reports mean none */

/* The last report; read and written from any thread without a lock. */
struct ingest {
	_Atomic uint64_t host_bps; /* bytes/s the hosts moved when vtld last reported */
	_Atomic uint64_t at_ms;    /* when that report came (monotonic ms); 0: never */
};

/* Records vtld's report that the hosts move host_bps bytes/s, received at now_ms. */
void ingest_note(struct ingest *g, uint64_t now_ms, uint64_t host_bps);

/* The hosts' bytes/s at now_ms: the last report, or 0 when there is none or it is stale. */
uint64_t ingest_host(struct ingest *g, uint64_t now_ms);

/*
 * Bytes/s each of copies running copies may read while the hosts move
 * host_bps: (pool_bps - host_bps) / copies, at least floor_bps; 0 means no
 * limit from this rule (pool_bps 0: the rule is off; no host traffic; no copy).
 */
uint64_t ingest_copy_limit(uint64_t pool_bps, uint64_t floor_bps, uint64_t host_bps, unsigned copies);

#endif
