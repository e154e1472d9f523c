/* SPDX-License-Identifier: Apache-2.0 */
#include "migrator/stream.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/clock.h"
#include "common/vtl_error.h"

#define MB 1e6
#define PROGRESS_EVERY_S 0.5
#define RATE_WINDOW_S 1.0

enum slot_state { SLOT_EMPTY, SLOT_FILLING, SLOT_FULL };

struct ring {
	const struct stream_job *job;
	unsigned m;
	size_t b;
	unsigned watermark;
	uint64_t nblocks;
	uint8_t *mem;
	enum slot_state *state;
	size_t *len;
	pthread_mutex_t mu;
	pthread_cond_t filled;   /* a slot became full (the writer waits on it) */
	pthread_cond_t emptied;  /* a slot became empty (readers wait on it) */
	uint64_t next_read;      /* the next block a reader takes */
	uint64_t next_write;     /* the next block the writer hands out */
	int error;
	bool stop;
	struct stream_counters c;
};

static void sleep_s(double s)
{
	if (s <= 0)
		return;
	struct timespec ts = {(time_t)s, (long)((s - floor(s)) * 1e9)};
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

static uint64_t delays(double waited)
{
	return (uint64_t)ceil(waited * 1000.0 / STREAM_DELAY_MS);
}

static bool cancelled(const struct ring *r)
{
	return r->job->cancel && atomic_load(r->job->cancel);
}

/* Ends the run with rc (the first error wins) and wakes everybody. Called with the lock held. */
static void ring_stop(struct ring *r, int rc)
{
	if (!r->error)
		r->error = rc;
	r->stop = true;
	pthread_cond_broadcast(&r->filled);
	pthread_cond_broadcast(&r->emptied);
}

static void *reader(void *arg)
{
	struct ring *r = arg;
	pthread_mutex_lock(&r->mu);
	while (!r->stop && r->next_read < r->nblocks) {
		uint64_t blk = r->next_read++;
		unsigned s = (unsigned)(blk % r->m);
		/* The slot is free once the writer has handed out the block M before this one. */
		if (blk >= r->next_write + r->m) {
			double t0 = vtl_mono_s();
			r->c.reader_waits++;
			while (!r->stop && blk >= r->next_write + r->m)
				pthread_cond_wait(&r->emptied, &r->mu);
			r->c.reader_delays += delays(vtl_mono_s() - t0);
		}
		if (r->stop)
			break;
		r->state[s] = SLOT_FILLING;
		uint64_t off = blk * r->b;
		size_t len = r->job->total - off < r->b ? (size_t)(r->job->total - off) : r->b;
		pthread_mutex_unlock(&r->mu);
		int rc = cancelled(r) ? VTL_E_BUSY : r->job->read(r->job->read_arg, off, r->mem + (size_t)s * r->b, len);
		pthread_mutex_lock(&r->mu);
		if (rc) {
			ring_stop(r, rc);
			break;
		}
		r->len[s] = len;
		r->state[s] = SLOT_FULL;
		pthread_cond_broadcast(&r->filled);
	}
	pthread_mutex_unlock(&r->mu);
	return NULL;
}

/* Full slots in a row from the writer's next block. Called with the lock held. */
static unsigned full_run(const struct ring *r)
{
	unsigned k = 0;
	while (k < r->m && r->next_write + k < r->nblocks && r->state[(r->next_write + k) % r->m] == SLOT_FULL)
		k++;
	return k;
}

/* Waits until the ring holds a burst: the watermark, or everything that is left. Lock held. */
static void wait_for_burst(struct ring *r)
{
	double t0 = vtl_mono_s();
	bool waited = false;
	for (;;) {
		unsigned have = full_run(r);
		if (r->stop || have >= r->watermark || r->next_write + have >= r->nblocks)
			break;
		waited = true;
		struct timespec ts = vtl_mono_deadline_ms(50); /* wake now and then to notice a cancel */
		(void)pthread_cond_timedwait(&r->filled, &r->mu, &ts); /* ETIMEDOUT: look at the ring again */
		if (cancelled(r))
			ring_stop(r, VTL_E_BUSY);
	}
	if (waited) {
		double waited_s = vtl_mono_s() - t0;
		r->c.writer_waits++;
		r->c.writer_delays += delays(waited_s);
		r->c.gaps += waited_s * 1000 >= STREAM_GAP_MS;
	}
}

struct meterw {
	double start, win_start, last_progress;
	uint64_t win_bytes;
	bool full_window;
	double next_at; /* the rate limit: when the next block may go */
};

static void count_rate(struct ring *r, struct meterw *w, double now, size_t len)
{
	w->win_bytes += len;
	double span = now - w->win_start;
	if (span >= RATE_WINDOW_S) {
		double mbs = (double)w->win_bytes / span / MB;
		if (!w->full_window || mbs < r->c.min_mbs)
			r->c.min_mbs = mbs;
		if (mbs > r->c.max_mbs)
			r->c.max_mbs = mbs;
		w->full_window = true;
		w->win_start = now;
		w->win_bytes = 0;
	}
}

static void throttle(struct ring *r, struct meterw *w, size_t len)
{
	const struct stream_config *cfg = &r->job->cfg;
	double rate = cfg->rate_limit ? cfg->rate_limit(cfg->rate_arg) : 0;
	if (rate <= 0) {
		w->next_at = 0;
		return;
	}
	double now = vtl_mono_s();
	if (w->next_at > now) {
		r->c.throttled++;
		sleep_s(w->next_at - now);
		now = w->next_at;
	}
	w->next_at = now + (double)len / rate;
}

static void report(struct ring *r, struct meterw *w, double now, bool last)
{
	if (!r->job->progress || (!last && now - w->last_progress < PROGRESS_EVERY_S))
		return;
	struct stream_progress p = {.bytes = r->c.bytes, .total = r->job->total, .buffers = r->m, .c = &r->c};
	p.full = full_run(r);
	double span = now - w->win_start;
	p.mbs = span > 0.05 ? (double)w->win_bytes / span / MB : r->c.avg_mbs;
	w->last_progress = now;
	r->job->progress(r->job->progress_arg, &p);
}

/* The writer: blocks in order to the sink, in bursts. */
static void writer(struct ring *r)
{
	struct meterw w = {0};
	pthread_mutex_lock(&r->mu);
	wait_for_burst(r);
	r->c.writer_waits = r->c.writer_delays = 0; /* the first fill is not a wait: the writer has not started */
	w.start = w.win_start = w.last_progress = vtl_mono_s();
	while (!r->stop && r->next_write < r->nblocks) {
		unsigned s = (unsigned)(r->next_write % r->m);
		if (r->state[s] != SLOT_FULL)
			wait_for_burst(r);
		if (r->stop)
			break;
		size_t len = r->len[s];
		pthread_mutex_unlock(&r->mu);
		throttle(r, &w, len);
		int rc = cancelled(r) ? VTL_E_BUSY : r->job->write(r->job->write_arg, r->mem + (size_t)s * r->b, len);
		double now = vtl_mono_s();
		pthread_mutex_lock(&r->mu);
		if (rc) {
			ring_stop(r, rc);
			break;
		}
		r->state[s] = SLOT_EMPTY;
		r->next_write++;
		r->c.bytes += len;
		r->c.blocks++;
		pthread_cond_broadcast(&r->emptied);
		count_rate(r, &w, now, len);
		r->c.seconds = now - w.start;
		r->c.avg_mbs = r->c.seconds > 0 ? (double)r->c.bytes / r->c.seconds / MB : 0;
		report(r, &w, now, r->next_write == r->nblocks);
	}
	if (!w.full_window)
		r->c.min_mbs = r->c.max_mbs = r->c.avg_mbs;
	pthread_mutex_unlock(&r->mu);
}

int stream_run(const struct stream_job *job, struct stream_counters *out)
{
	memset(out, 0, sizeof *out);
	const struct stream_config *cfg = &job->cfg;
	if (cfg->buffers < 2 || cfg->buffers > STREAM_MAX_BUFFERS || !cfg->buffer_size || !cfg->readers ||
	    cfg->readers > STREAM_MAX_READERS || cfg->watermark > cfg->buffers || !job->read || !job->write)
		return VTL_E_INVAL;
	struct ring r = {.job = job, .m = cfg->buffers, .b = cfg->buffer_size};
	r.watermark = cfg->watermark ? cfg->watermark : cfg->buffers / 2;
	r.nblocks = (job->total + r.b - 1) / r.b;
	r.mem = malloc((size_t)r.m * r.b);
	r.state = calloc(r.m, sizeof *r.state);
	r.len = calloc(r.m, sizeof *r.len);
	if (!r.mem || !r.state || !r.len) {
		free(r.mem);
		free(r.state);
		free(r.len);
		return VTL_E_NOMEM;
	}
	if (vtl_cond_init_mono(&r.filled) != 0) { /* the writer's timed waits are monotonic deadlines */
		free(r.mem);
		free(r.state);
		free(r.len);
		return VTL_E_NOMEM;
	}
	pthread_mutex_init(&r.mu, NULL);
	pthread_cond_init(&r.emptied, NULL);
	pthread_t th[STREAM_MAX_READERS];
	unsigned started = 0;
	for (; started < cfg->readers; started++)
		if (pthread_create(&th[started], NULL, reader, &r) != 0)
			break;
	if (started == 0) {
		r.error = VTL_E_NOMEM;
	} else {
		writer(&r);
		pthread_mutex_lock(&r.mu);
		if (!r.error && r.next_write < r.nblocks)
			r.error = VTL_E_BUSY;
		ring_stop(&r, VTL_OK);
		pthread_mutex_unlock(&r.mu);
	}
	for (unsigned i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	*out = r.c;
	pthread_cond_destroy(&r.filled);
	pthread_cond_destroy(&r.emptied);
	pthread_mutex_destroy(&r.mu);
	free(r.mem);
	free(r.state);
	free(r.len);
	return r.error;
}
