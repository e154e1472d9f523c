/* SPDX-License-Identifier: Apache-2.0 */
#include "backend/workers.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

struct workers {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct job *head, *tail;
	bool stop;
	unsigned n;
	pthread_t threads[];
};

static void *worker_main(void *arg)
{
	struct workers *w = arg;
	for (;;) {
		pthread_mutex_lock(&w->lock);
		while (!w->head && !w->stop)
			pthread_cond_wait(&w->cond, &w->lock);
		struct job *j = w->head;
		if (!j) {
			pthread_mutex_unlock(&w->lock);
			return NULL;
		}
		w->head = j->next;
		if (!w->head)
			w->tail = NULL;
		pthread_mutex_unlock(&w->lock);
		j->run(j);
	}
}

struct workers *workers_start(unsigned n)
{
	struct workers *w = calloc(1, sizeof *w + n * sizeof(pthread_t));
	if (!w)
		return NULL;
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->cond, NULL);
	for (; w->n < n; w->n++)
		if (pthread_create(&w->threads[w->n], NULL, worker_main, w) != 0)
			break;
	if (w->n == 0) {
		workers_stop(w);
		return NULL;
	}
	return w;
}

void workers_stop(struct workers *w)
{
	pthread_mutex_lock(&w->lock);
	w->stop = true;
	pthread_cond_broadcast(&w->cond);
	pthread_mutex_unlock(&w->lock);
	for (unsigned i = 0; i < w->n; i++)
		pthread_join(w->threads[i], NULL);
	pthread_cond_destroy(&w->cond);
	pthread_mutex_destroy(&w->lock);
	free(w);
}

void workers_submit(struct workers *w, struct job *job)
{
	pthread_mutex_lock(&w->lock);
	job->next = NULL;
	if (w->tail)
		w->tail->next = job;
	else
		w->head = job;
	w->tail = job;
	pthread_cond_signal(&w->cond);
	pthread_mutex_unlock(&w->lock);
}

unsigned workers_count(const struct workers *w)
{
	return w->n;
}
