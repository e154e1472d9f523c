/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The drive scheduler's decision, without threads or I/O: from the queued
 * jobs and the drives' states, which job starts on which drive now, and
 * which running copy (if any) stops so that a recall gets a drive.
 *
 * The rules, in the order they apply:
 *   - one job per drive; a job already on a drive is not started again;
 *   - recalls first (a host may be waiting on one), oldest first, each on a
 *     free drive; with no drive free, one running copy or verify stops for
 *     each recall still without a drive (a copy before a verify, which stops
 *     only between two copies it reads; of those the one started last: it
 *     loses the least work), unless a stop for it is already under way;
 *   - then the other jobs, oldest first, on the free drives, but never on
 *     more than drives - recall_drives at once, so that recall_drives drives
 *     stay for recalls;
 *   - a job pinned to a drive waits for that drive (later jobs go ahead of
 *     it on the others); one pinned to a drive outside the scheduled ones
 *     starts on nothing (the caller fails it);
 *   - an unpinned job takes the free drive of lowest number, so that queued
 *     work spreads over all of them.
 */
#ifndef VTL_MIGRATOR_SCHED_H
#define VTL_MIGRATOR_SCHED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "catalog/catalog.h"
#include "migrator/phys.h"

/* A queued job as the scheduler sees it. */
struct sched_job {
	int64_t id;
	enum cat_job_kind kind;
	int drive; /* the drive it is pinned to; CAT_JOB_DRIVE_ANY: any */
};

/* A drive the scheduler may use. */
struct sched_drive {
	int64_t job;            /* the job on it; 0: free */
	enum cat_job_kind kind; /* that job's kind */
	uint64_t started;       /* when it started, in any increasing count (to pick the last one started) */
	bool stopping;          /* asked to stop (a preemption or a cancel under way) */
};

/* What to do now. */
struct sched_plan {
	struct {
		size_t job;     /* index into the queue */
		unsigned drive;
	} start[PHYS_MAX_DRIVES];
	unsigned nstart;
	int preempt[PHYS_MAX_DRIVES]; /* drives whose copy stops for a recall */
	unsigned npreempt;
};

/*
 * Plans over the queue q (nq jobs, oldest first) and the drives d (nd, at
 * most PHYS_MAX_DRIVES), keeping recall_drives of them for recalls.
 */
void sched_plan(const struct sched_job *q, size_t nq, const struct sched_drive *d, unsigned nd,
		unsigned recall_drives, struct sched_plan *out);

#endif
