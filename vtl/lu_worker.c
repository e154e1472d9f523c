/* SPDX-License-Identifier: Apache-2.0 */
#include "vtl/lu_worker.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "common/vtl_error.h"

struct lu_worker {
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct lu_work *head, *tail;
	bool stopping;
	void (*exec)(void *dev, struct scsi_cmd *c);
	void *dev;
	void (*gate)(void *arg, const struct scsi_cmd *c);
	void *gate_arg;
	_Atomic uint64_t commands, data_in, data_out, checks[LU_SENSE_KEYS];
};

/* Counts c, run: relaxed adds, as nothing is ordered by them. */
static void count(struct lu_worker *wk, const struct scsi_cmd *c)
{
	atomic_fetch_add_explicit(&wk->commands, 1, memory_order_relaxed);
	if (c->dir == SCSI_DIR_IN)
		atomic_fetch_add_explicit(&wk->data_in, c->data_len, memory_order_relaxed);
	else if (c->dir == SCSI_DIR_OUT)
		atomic_fetch_add_explicit(&wk->data_out, c->data_len, memory_order_relaxed);
	if (c->status == SCSI_CHECK_CONDITION)
		atomic_fetch_add_explicit(&wk->checks[c->sense.key & (LU_SENSE_KEYS - 1)], 1, memory_order_relaxed);
}

void lu_worker_counts(struct lu_worker *wk, struct lu_counts *out)
{
	out->commands = atomic_load_explicit(&wk->commands, memory_order_relaxed);
	out->data_in_bytes = atomic_load_explicit(&wk->data_in, memory_order_relaxed);
	out->data_out_bytes = atomic_load_explicit(&wk->data_out, memory_order_relaxed);
	for (unsigned i = 0; i < LU_SENSE_KEYS; i++)
		out->checks[i] = atomic_load_explicit(&wk->checks[i], memory_order_relaxed);
}

static void *run(void *arg)
{
	struct lu_worker *wk = arg;
	pthread_mutex_lock(&wk->mu);
	for (;;) {
		while (!wk->head && !wk->stopping)
			pthread_cond_wait(&wk->cv, &wk->mu);
		struct lu_work *w = wk->head;
		if (!w)
			break; /* stopping, and nothing left */
		wk->head = w->next;
		if (!wk->head)
			wk->tail = NULL;
		pthread_mutex_unlock(&wk->mu);
		if (w->cmd && wk->gate)
			wk->gate(wk->gate_arg, w->cmd);
		if (w->cmd) {
			wk->exec(wk->dev, w->cmd);
			count(wk, w->cmd); /* before done: the command belongs to its front end again after it */
		}
		w->done(w);
		pthread_mutex_lock(&wk->mu);
	}
	pthread_mutex_unlock(&wk->mu);
	return NULL;
}

int lu_worker_start(void (*exec)(void *dev, struct scsi_cmd *c), void *dev, struct lu_worker **out)
{
	struct lu_worker *wk = calloc(1, sizeof *wk);
	if (!wk)
		return VTL_E_NOMEM;
	pthread_mutex_init(&wk->mu, NULL);
	pthread_cond_init(&wk->cv, NULL);
	wk->exec = exec;
	wk->dev = dev;
	if (pthread_create(&wk->thread, NULL, run, wk) != 0) {
		pthread_cond_destroy(&wk->cv);
		pthread_mutex_destroy(&wk->mu);
		free(wk);
		return VTL_E_NOMEM;
	}
	*out = wk;
	return VTL_OK;
}

void lu_worker_set_gate(struct lu_worker *wk, void (*gate)(void *arg, const struct scsi_cmd *c), void *arg)
{
	pthread_mutex_lock(&wk->mu);
	wk->gate = gate;
	wk->gate_arg = arg;
	pthread_mutex_unlock(&wk->mu);
}

void lu_worker_submit(struct lu_worker *wk, struct lu_work *w)
{
	w->next = NULL;
	pthread_mutex_lock(&wk->mu);
	if (wk->tail)
		wk->tail->next = w;
	else
		wk->head = w;
	wk->tail = w;
	pthread_cond_signal(&wk->cv);
	pthread_mutex_unlock(&wk->mu);
}

void lu_worker_stop(struct lu_worker *wk)
{
	if (!wk)
		return;
	pthread_mutex_lock(&wk->mu);
	wk->stopping = true;
	pthread_cond_signal(&wk->cv);
	pthread_mutex_unlock(&wk->mu);
	pthread_join(wk->thread, NULL);
	pthread_cond_destroy(&wk->cv);
	pthread_mutex_destroy(&wk->mu);
	free(wk);
}

int vtl_lu_start(struct vtl_lu *lu)
{
	if (!lu->ops || !lu->ops->execute)
		return VTL_E_INVAL;
	return lu_worker_start(lu->ops->execute, lu->dev, &lu->worker);
}
