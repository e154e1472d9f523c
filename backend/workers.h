/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A small pool of threads shared by every cartridge of a pool: read-ahead
 * reads and block compression run on it. Jobs run in submission order.
 */
#ifndef VTL_BACKEND_WORKERS_H
#define VTL_BACKEND_WORKERS_H

struct job {
	void (*run)(struct job *job);
	struct job *next;
};

struct workers;

/* Starts n threads; NULL on failure. */
struct workers *workers_start(unsigned n);

/* Runs the jobs still queued, stops the threads and frees w. */
void workers_stop(struct workers *w);

/* Queues job; job->run is called once, on a worker thread. */
void workers_submit(struct workers *w, struct job *job);

/* Number of threads. */
unsigned workers_count(const struct workers *w);

#endif
