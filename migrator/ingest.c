/* SPDX-License-Identifier: Apache-2.0 */
#include "migrator/ingest.h"

void ingest_note(struct ingest *g, uint64_t now_ms, uint64_t host_bps)
{
	atomic_store(&g->host_bps, host_bps);
	atomic_store(&g->at_ms, now_ms ? now_ms : 1); /* 0 means "never" */
}

uint64_t ingest_host(struct ingest *g, uint64_t now_ms)
{
	uint64_t at = atomic_load(&g->at_ms);
	if (at == 0 || now_ms > at + INGEST_STALE_MS)
		return 0;
	return atomic_load(&g->host_bps);
}

uint64_t ingest_copy_limit(uint64_t pool_bps, uint64_t floor_bps, uint64_t host_bps, unsigned copies)
{
	if (pool_bps == 0 || host_bps == 0 || copies == 0)
		return 0;
	uint64_t left = host_bps < pool_bps ? pool_bps - host_bps : 0;
	uint64_t each = left / copies;
	if (each < floor_bps)
		each = floor_bps;
	return each ? each : 1; /* a floor of 0 with nothing left: as slow as can be, never "no limit" */
}
