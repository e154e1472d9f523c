/* SPDX-License-Identifier: Apache-2.0 */
/*
 * vtl-migrator's core: the catalog, the pool and the physical library of a
 * configuration; a dispatcher that plans the queued jobs over the physical
 * drives (migrator/sched.h) and a runner thread per drive that runs one job
 * at a time on it; and the control socket vtlctl talks to (migrate, verify,
 * jobs with live progress and drive, cancel, scan, physical with each drive
 * busy or idle). Jobs live in the catalog with what they asked for: a job
 * left running by a crash is queued again at the next start.
 */
#ifndef VTL_MIGRATOR_DAEMON_H
#define VTL_MIGRATOR_DAEMON_H

#include <stddef.h>

#include "config/config.h"

struct migd;

/* Opens everything cfg names and starts the job threads and the control socket; err says what failed. */
int migd_start(const struct vtl_config *cfg, struct migd **out, char *err, size_t errlen);

/* Stops the running jobs (they are queued again), the threads and the socket, and frees m. */
void migd_stop(struct migd *m);

/*
 * Reads the configuration file (cfg->path of migd_start) again and applies
 * the log level, [migrator] rate, window and window_rate and the cache
 * policy's marks, rules, idle time and interval, all or nothing: VTL_OK
 * with msg saying what; VTL_E_CONFIG when the file does not parse or
 * changes anything else it reads (msg names each such key), VTL_E_BUSY
 * during another reload. Tells the service manager RELOADING=1, READY=1.
 */
int migd_reload(struct migd *m, char *msg, size_t cap);

/* Answers one control request line into out (JSON, cap bytes); the socket's handler, for tests too. */
void migd_answer(struct migd *m, const char *request, char *out, size_t cap);

#endif
