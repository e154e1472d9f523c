/* SPDX-License-Identifier: Apache-2.0 */
/*
 * vtl-migrator's core: the catalog, the pool and the physical libraries of
 * a configuration; a dispatcher that sends each queued job to a library
 * (a copy to the one keeping its copy pool, a recall or verify to one
 * holding a copy) and plans each library's jobs over its drives
 * (migrator/sched.h); a runner thread per drive that runs one job at a
 * time on it; and the control socket vtlctl talks to (migrate, verify,
 * jobs with live progress and drive, cancel, scan, physical with each drive
 * busy or idle). Jobs live in the catalog with what they asked for: a job
 * left running by a crash is queued again at the next start.
 */
#ifndef VTL_MIGRATOR_DAEMON_H
#define VTL_MIGRATOR_DAEMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "catalog/catalog.h"
#include "config/config.h"
#include "migrator/phys.h"
#include "migrator/policyd.h"

struct migd;

/* Opens everything cfg names and starts the job threads and the control socket; err says what failed. */
int migd_start(const struct vtl_config *cfg, struct migd **out, char *err, size_t errlen);

/* Stops the running jobs (they are queued again), the threads and the socket, and frees m. */
void migd_stop(struct migd *m);

#define MIGD_RECALL_BUCKETS 10 /* upper bounds of the recalls' time to first block (migd_recall_bounds) */
#define MIGD_JOB_KINDS 4       /* enum cat_job_kind, from 1 */
#define MIGD_JOB_STATES 5      /* enum cat_job_state, from 1 */

/* One physical drive as the metrics see it. */
struct migd_drive_snap {
	char library[CAT_NAME_MAX + 1]; /* its physical library */
	unsigned number;        /* its drive number there, from 0 */
	bool runs_jobs;         /* within [migrator] drives */
	bool busy;              /* a job is given to it */
	int64_t job;
	enum cat_job_kind kind;
	char barcode[CAT_BARCODE_MAX + 1];
	uint64_t job_bytes, job_total; /* the running job's, at its last progress report */
	unsigned ring_full, ring_buffers;
	/* Since the start, the ended jobs' last progress reports and the running one's. */
	uint64_t bytes, writer_waits, reader_waits, gaps;
	uint64_t jobs_ended;
};

/* Host ingest first as it stands (migrator/ingest.h): what `vtlctl jobs` and /metrics show of the rule. */
struct migd_ingest_snap {
	uint64_t host_bps;      /* what vtld says its hosts move now (0: idle, or no report) */
	uint64_t copies_bps;    /* what the running copies read now, together */
	uint64_t floors_bps;    /* their floors together */
	uint64_t budget_bps;    /* the copies' budget; 0 while the rule does not hold them (held false) */
	uint64_t limit_bps;     /* what the copy with the lowest floor may read; 0 when not held */
	uint64_t ref_bps;       /* pool_rate = auto: the hosts' reference rate */
	unsigned pool_rate;     /* MB/s; 0 with auto or without the rule */
	unsigned copy_floor;    /* the operator's floor, MB/s */
	unsigned copies;        /* copies running */
	unsigned drops;         /* pool_rate = auto: drops the probe saw */
	bool automatic, held;
};

/* Fills *out (takes mu briefly; never the catalog's lock). */
void migd_ingest_snapshot(struct migd *m, struct migd_ingest_snap *out);

/* What vtl-migrator's /metrics shows, read under its scheduler lock and then the catalog's and the policy's. */
struct migd_snapshot {
	unsigned drives;        /* every physical library's, library by library, at most PHYS_MAX_DRIVES each */
	struct migd_drive_snap drive[VTL_CFG_MAX_PHYS_LIBS * PHYS_MAX_DRIVES];
	uint64_t recalls;       /* recalls that reached their first block */
	uint64_t recall_first_block[MIGD_RECALL_BUCKETS + 1]; /* by bucket, the last above every bound */
	double recall_first_block_sum; /* seconds */
	bool jobs_ok;           /* the catalog answered the job counts */
	uint64_t jobs[MIGD_JOB_KINDS][MIGD_JOB_STATES];
	struct policyd_counts policy;
	struct migd_ingest_snap ingest;
};

/* The upper bounds, in seconds, of the time-to-first-block buckets (MIGD_RECALL_BUCKETS of them). */
const double *migd_recall_bounds(void);

/* Fills *out. */
void migd_snapshot(struct migd *m, struct migd_snapshot *out);

/*
 * Reads the configuration file (cfg->path of migd_start) again and applies
 * the keys vtl_reload_keys_migrator reloads (the log level, [migrator] rate,
 * window, window_rate, pool_rate and copy_floor, the cache policy's marks,
 * rules, idle time and interval), all or nothing: VTL_OK
 * with msg saying what; VTL_E_CONFIG when the file does not parse or
 * changes anything else it reads (msg names each such key), VTL_E_BUSY
 * during another reload. Tells the service manager RELOADING=1, READY=1.
 */
int migd_reload(struct migd *m, char *msg, size_t cap);

/* Answers one control request line into out (JSON, cap bytes); the socket's handler, for tests too. */
void migd_answer(struct migd *m, const char *request, char *out, size_t cap);

#endif
