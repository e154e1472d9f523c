/* SPDX-License-Identifier: Apache-2.0 */
/*
 * One thread per logical unit that runs its commands in arrival order, so a
 * tape drive executes sequentially while network threads never wait on a
 * disk, and a slow drive never holds up another. The front ends (iSCSI,
 * TCMU) hand commands in and get each back, executed, through a callback
 * that runs on the worker's thread.
 */
#ifndef VTL_VTL_LU_WORKER_H
#define VTL_VTL_LU_WORKER_H

#include <stdbool.h>

#include "vtl/scsi/cmd.h"

struct lu_work {
	struct scsi_cmd *cmd;            /* NULL: nothing to run, done is called in its turn (an answer already made) */
	void (*done)(struct lu_work *w); /* called on the worker thread once cmd has run */
	void *owner;                     /* for done */
	struct lu_work *next;            /* the worker's queue link */
};

struct lu_worker;

#define LU_SENSE_KEYS 16 /* a sense key is 4 bits (SPC-4 4.5.6) */

/* What a worker has run since it started (atomic adds on its thread; read at any time). */
struct lu_counts {
	uint64_t commands;
	uint64_t data_in_bytes;  /* data transferred to initiators (READ, INQUIRY, ...) */
	uint64_t data_out_bytes; /* data taken from initiators (WRITE, MODE SELECT, ...) */
	uint64_t checks[LU_SENSE_KEYS]; /* CHECK CONDITION by sense key */
};

/* Starts a worker that runs exec(dev, cmd) for each submitted command. */
int lu_worker_start(void (*exec)(void *dev, struct scsi_cmd *c), void *dev, struct lu_worker **out);

/*
 * Has the worker call gate(arg, cmd) before it runs each command, on its own
 * thread (the write throttle sleeps there). Set it before any command is
 * submitted; gate NULL: none.
 */
void lu_worker_set_gate(struct lu_worker *wk, void (*gate)(void *arg, const struct scsi_cmd *c), void *arg);

/* Queues w; commands run one at a time in the order they were submitted. */
void lu_worker_submit(struct lu_worker *wk, struct lu_work *w);

/* Fills *out with what wk has run so far (each field read atomically; together, not one instant). */
void lu_worker_counts(struct lu_worker *wk, struct lu_counts *out);

/* Runs what is queued, then stops the thread and frees wk. */
void lu_worker_stop(struct lu_worker *wk);

/*
 * A logical unit as every front end (iSCSI, TCMU) sees it: its LUN, the
 * device and its operations, and the worker that runs its commands in order.
 */
struct vtl_lu {
	uint16_t lun;
	const char *what;                 /* "changer" or "drive", for log lines and vtlctl status */
	void *dev;                        /* the struct ssc_drive or struct smc_changer */
	const struct scsi_unit_ops *ops;  /* its execute, reset, nexus_lost (each may be NULL in a test) */
	struct lu_worker *worker;         /* runs ops->execute(dev, cmd) in arrival order */
};

/* Starts lu's worker (lu->worker) running lu->ops->execute on lu->dev. */
int vtl_lu_start(struct vtl_lu *lu);

#endif
