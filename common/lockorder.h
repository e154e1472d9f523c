/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The lock order (docs/architecture.md, "Locking"), checked as locks are
 * taken. A thread may take a lock only while every lock it holds ranks
 * before it: vtld's control answers, changer, library, drive, drive snapshot, the migrator's robot,
 * a physical changer, a physical drive, the migrator's scheduler, catalog,
 * pool member, log. Two locks of one rank are never held at once (two drives, two
 * catalogs). Without NDEBUG (every build of this project) a violation is
 * reported on stderr and aborts, so that a test finds an order that could
 * deadlock the first time the path runs, not the day two threads race on it.
 */
#ifndef VTL_COMMON_LOCKORDER_H
#define VTL_COMMON_LOCKORDER_H

#include <pthread.h>
#include <stdbool.h>

enum vtl_lock_rank {
	VTL_LOCK_CONTROL = 1, /* vtld's control answers: one at a time, from the control socket or an HTTP connection's thread */
	VTL_LOCK_CHANGER,     /* smc_changer.mu: one changer command at a time */
	VTL_LOCK_LIBRARY,     /* vtl_library.mu: one robot move at a time */
	VTL_LOCK_DRIVE,       /* ssc_drive.mu: the drive's state during a command */
	VTL_LOCK_SNAPSHOT,    /* ssc_drive.snap_mu: the drive as status readers see it */
	VTL_LOCK_ROBOT,       /* migd.robot: one migrator job's mount (inventory, unload, moves) at a time */
	VTL_LOCK_PHYS_CHANGER, /* a physical library's changer: one inventory or move at a time (migrator/phys.h) */
	VTL_LOCK_PHYS_DRIVE,  /* a physical drive: one call for it at a time (migrator/phys.h) */
	VTL_LOCK_SCHED,       /* migd.mu: the migrator's drives, running jobs and reserved tapes */
	VTL_LOCK_CATALOG,     /* vtl_catalog.mu: one statement sequence per handle */
	VTL_LOCK_POOL,        /* pool_member.lock: a member's space accounting */
	VTL_LOCK_LOG,         /* log.c: one line at a time */
	VTL_LOCK_RANKS
};

/* Takes mu, of rank r, after checking the order against the locks this thread holds. */
void vtl_lock(pthread_mutex_t *mu, enum vtl_lock_rank r);

/* Takes mu, of rank r, if it is free (no order to keep: it never waits); whether it was taken. */
bool vtl_trylock(pthread_mutex_t *mu, enum vtl_lock_rank r);

/* Releases mu, of rank r, taken by vtl_lock or vtl_trylock. */
void vtl_unlock(pthread_mutex_t *mu, enum vtl_lock_rank r);

#endif
