/* SPDX-License-Identifier: Apache-2.0 */
#include "migrator/sched.h"

#include <string.h>

static bool running(const struct sched_drive *d, unsigned nd, int64_t id)
{
	for (unsigned i = 0; i < nd; i++)
		if (d[i].job == id)
			return true;
	return false;
}

/* The free drive a job may take (its pinned one, else the lowest free), or -1. */
static int free_drive(const struct sched_job *j, const bool *busy, unsigned nd)
{
	if (j->drive != CAT_JOB_DRIVE_ANY)
		return j->drive >= 0 && (unsigned)j->drive < nd && !busy[j->drive] ? j->drive : -1;
	for (unsigned i = 0; i < nd; i++)
		if (!busy[i])
			return (int)i;
	return -1;
}

static void start(struct sched_plan *p, bool *busy, size_t job, unsigned drive)
{
	p->start[p->nstart].job = job;
	p->start[p->nstart].drive = drive;
	p->nstart++;
	busy[drive] = true;
}

void sched_plan(const struct sched_job *q, size_t nq, const struct sched_drive *d, unsigned nd,
		unsigned recall_drives, struct sched_plan *out)
{
	memset(out, 0, sizeof *out);
	if (nd > PHYS_MAX_DRIVES)
		nd = PHYS_MAX_DRIVES;
	bool busy[PHYS_MAX_DRIVES] = {false};
	unsigned others = 0, stopping_for_recall = 0;
	for (unsigned i = 0; i < nd; i++) {
		busy[i] = d[i].job != 0;
		if (busy[i] && d[i].kind != CAT_JOB_RECALL) {
			if (d[i].stopping)
				stopping_for_recall++; /* its drive is about to be free */
			else
				others++;
		}
	}
	/* Recalls: a free drive, else a copy stops. */
	unsigned waiting = 0;
	for (size_t k = 0; k < nq; k++) {
		if (q[k].kind != CAT_JOB_RECALL || running(d, nd, q[k].id))
			continue;
		int at = free_drive(&q[k], busy, nd);
		if (at >= 0)
			start(out, busy, k, (unsigned)at);
		else if (q[k].drive == CAT_JOB_DRIVE_ANY)
			waiting++;
	}
	while (waiting > stopping_for_recall + out->npreempt) {
		int victim = -1;
		for (unsigned i = 0; i < nd; i++) {
			bool taken = false;
			for (unsigned p = 0; p < out->npreempt; p++)
				taken |= out->preempt[p] == (int)i;
			if (!d[i].job || d[i].kind == CAT_JOB_RECALL || d[i].stopping || taken)
				continue;
			/* A copy before a verify (which stops only between two copies it reads), then the last started. */
			bool copy = d[i].kind == CAT_JOB_MIGRATE, victim_copy = victim >= 0 && d[victim].kind == CAT_JOB_MIGRATE;
			if (victim < 0 || (copy && !victim_copy) || (copy == victim_copy && d[i].started > d[victim].started))
				victim = (int)i;
		}
		if (victim < 0)
			break; /* every drive recalls already: the recall waits for one */
		out->preempt[out->npreempt++] = victim;
		others--;
	}
	/* The other jobs, on the drives not kept for recalls. */
	unsigned limit = recall_drives < nd ? nd - recall_drives : 0;
	for (size_t k = 0; k < nq && others < limit; k++) {
		if (q[k].kind == CAT_JOB_RECALL || running(d, nd, q[k].id))
			continue;
		if (waiting > stopping_for_recall + out->npreempt)
			break; /* a recall waits for a drive: nothing else takes one */
		int at = free_drive(&q[k], busy, nd);
		if (at >= 0) {
			start(out, busy, k, (unsigned)at);
			others++;
		}
	}
}
