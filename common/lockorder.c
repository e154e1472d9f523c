/* SPDX-License-Identifier: Apache-2.0 */
#include "common/lockorder.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

_Static_assert(VTL_LOCK_RANKS <= 32, "one bit per rank");


#ifndef NDEBUG
static const char *const rank_names[VTL_LOCK_RANKS] = {
	[VTL_LOCK_CONTROL] = "control", [VTL_LOCK_CHANGER] = "changer",   [VTL_LOCK_LIBRARY] = "library", [VTL_LOCK_DRIVE] = "drive",
	[VTL_LOCK_SNAPSHOT] = "snapshot", [VTL_LOCK_ROBOT] = "migrator robot",
	[VTL_LOCK_PHYS_CHANGER] = "physical changer", [VTL_LOCK_PHYS_DRIVE] = "physical drive",
	[VTL_LOCK_SCHED] = "migrator scheduler", [VTL_LOCK_CATALOG] = "catalog", [VTL_LOCK_POOL] = "pool member",
	[VTL_LOCK_LOG] = "log",
};

/* The ranks this thread holds, one bit each. */
static _Thread_local uint32_t held;

/* Reports the first lock held at or after r and aborts: a path that could deadlock. */
static void order_check(enum vtl_lock_rank r)
{
	uint32_t late = held & ~((1u << r) - 1u);
	if (!late)
		return;
	unsigned h = 0;
	while (!(late & (1u << h)))
		h++;
	/* Not log.c: its own lock is one of the ranks. */
	fprintf(stderr, "vtl: lock order violated: taking the %s lock while holding the %s lock "
		"(docs/architecture.md, \"Locking\")\n", rank_names[r], rank_names[h]);
	abort();
}
#endif

void vtl_lock(pthread_mutex_t *mu, enum vtl_lock_rank r)
{
#ifndef NDEBUG
	order_check(r);
#endif
	(void)pthread_mutex_lock(mu); /* fails only for a mutex that was never initialised */
#ifndef NDEBUG
	held |= 1u << r;
#endif
}

bool vtl_trylock(pthread_mutex_t *mu, enum vtl_lock_rank r)
{
	if (pthread_mutex_trylock(mu) != 0)
		return false;
#ifndef NDEBUG
	held |= 1u << r;
#else
	(void)r;
#endif
	return true;
}

void vtl_unlock(pthread_mutex_t *mu, enum vtl_lock_rank r)
{
#ifndef NDEBUG
	held &= ~(1u << r);
#else
	(void)r;
#endif
	(void)pthread_mutex_unlock(mu);
}
