/* SPDX-License-Identifier: Apache-2.0 */
#include "vtl/lu_worker.h"

#include <pthread.h>
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
};

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
		if (w->cmd)
			wk->exec(wk->dev, w->cmd);
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
