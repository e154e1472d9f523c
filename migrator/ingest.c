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

uint64_t ingest_left(uint64_t pool_bps, uint64_t host_bps)
{
	return host_bps < pool_bps ? pool_bps - host_bps : 0;
}

uint64_t ingest_copy_share(uint64_t budget_bps, const uint64_t *floors, unsigned n, uint64_t mine)
{
	/* The level x at which the copies above their floors get x each and the others their floors: start from
	 * the equal share and raise it while copies whose floors exceed it drop out of the sharing; at most n
	 * rounds, since each round either ends or takes one more copy out. */
	uint64_t x = n ? budget_bps / n : budget_bps;
	for (unsigned round = 0; round < n; round++) {
		uint64_t fixed = 0;
		unsigned sharing = 0;
		for (unsigned i = 0; i < n; i++) {
			if (floors[i] > x)
				fixed += floors[i];
			else
				sharing++;
		}
		if (sharing == 0 || fixed >= budget_bps) { /* the floors take it all: each keeps its own */
			x = 0;
			break;
		}
		uint64_t nx = (budget_bps - fixed) / sharing;
		if (nx == x)
			break;
		x = nx;
	}
	uint64_t share = x > mine ? x : mine;
	return share ? share : 1; /* a floor of 0 with nothing left: as slow as can be, never "no limit" */
}

uint64_t ingest_auto_step(struct ingest_auto *a, uint64_t now_ms, uint64_t host_bps, uint64_t copies_bps,
			  uint64_t floors_bps)
{
	if (host_bps == 0 || floors_bps == 0) { /* hosts idle or no copy: no rule; start again from the floors */
		a->budget_bps = 0;
		a->ref_bps = host_bps;
		return 0;
	}
	if (a->budget_bps == 0) { /* hosts (or the first copy) came: the copies start at their floors */
		a->budget_bps = floors_bps;
		a->ref_bps = host_bps;
		a->next_ms = now_ms + INGEST_AUTO_PERIOD_MS;
		return a->budget_bps;
	}
	if (a->budget_bps < floors_bps) /* a copy joined: the budget holds every floor at once */
		a->budget_bps = floors_bps;
	if (now_ms < a->next_ms)
		return a->budget_bps;
	a->next_ms = now_ms + INGEST_AUTO_PERIOD_MS;
	if (a->budget_bps <= floors_bps || host_bps > a->ref_bps)
		a->ref_bps = host_bps; /* at the floors: the most the rule can give the hosts while copies run */
	if ((double)host_bps < (double)a->ref_bps * (1.0 - INGEST_AUTO_BAND)) {
		uint64_t cut = (uint64_t)((double)a->budget_bps * INGEST_AUTO_CUT);
		a->budget_bps = cut > floors_bps ? cut : floors_bps;
		a->drops++;
		return a->budget_bps;
	}
	if ((double)host_bps < (double)a->ref_bps * (1.0 - INGEST_AUTO_HOLD))
		return a->budget_bps; /* already costing the hosts a little: hold */
	uint64_t step = (uint64_t)((double)a->budget_bps * INGEST_AUTO_GROW);
	step = step < INGEST_AUTO_STEP_MIN ? INGEST_AUTO_STEP_MIN : step > INGEST_AUTO_STEP_MAX ? INGEST_AUTO_STEP_MAX : step;
	uint64_t grown = a->budget_bps + step, cap = copies_bps + step;
	grown = grown < cap ? grown : cap;
	a->budget_bps = grown > floors_bps ? grown : floors_bps;
	return a->budget_bps;
}
