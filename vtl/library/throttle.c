/* SPDX-License-Identifier: Apache-2.0 */
#include "vtl/library/throttle.h"

#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "common/clock.h"
#include "common/log.h"
#include "common/scsi_proto.h"
#include "common/vtl_error.h"

#define NS 1000000000ull
#define MB 1000000ull

struct throttle {
	struct vtl_pool *pool;
	pthread_mutex_t mu;   /* all below */
	unsigned threshold, rate;
	double fill;
	bool active;
	bool measuring;       /* a thread is measuring: the others use the last value */
	uint64_t measured;    /* monotonic ns of the last measure; 0: never */
	uint64_t next;        /* monotonic ns when the writes admitted so far are through */
};

int throttle_create(struct vtl_pool *pool, unsigned threshold, unsigned rate, struct throttle **out)
{
	if (!rate)
		return VTL_E_INVAL;
	struct throttle *t = calloc(1, sizeof *t);
	if (!t)
		return VTL_E_NOMEM;
	t->pool = pool;
	t->threshold = threshold;
	t->rate = rate;
	pthread_mutex_init(&t->mu, NULL);
	*out = t;
	return VTL_OK;
}

void throttle_destroy(struct throttle *t)
{
	if (!t)
		return;
	pthread_mutex_destroy(&t->mu);
	free(t);
}

uint64_t throttle_schedule(uint64_t *next, uint64_t now, uint64_t bytes, uint64_t rate)
{
	uint64_t start = *next > now ? *next : now; /* time not used by earlier writes is not saved up */
	*next = start + (uint64_t)((double)bytes * (double)NS / (double)rate);
	return start - now;
}

bool throttle_is_write(const uint8_t *cdb)
{
	return cdb[0] == SCSI_OP_WRITE6 || cdb[0] == SCSI_OP_WRITE_FILEMARKS6;
}

/* Measures the pool's fill when the last measure is old, one thread at a time (mu held on entry and exit). */
static void measure(struct throttle *t, uint64_t now)
{
	if (t->measuring || (t->measured && now - t->measured < THROTTLE_MEASURE_NS))
		return;
	t->measuring = true;
	pthread_mutex_unlock(&t->mu);
	struct vtl_pool_fill f;
	int rc = vtl_pool_fill(t->pool, true, &f);
	pthread_mutex_lock(&t->mu);
	t->measuring = false;
	t->measured = now;
	if (rc) {
		log_warn("throttle: cannot measure the pool: %s", vtl_strerror(rc));
		return; /* the last fill stands */
	}
	t->fill = f.percent;
	bool active = t->threshold && f.percent >= t->threshold;
	if (active != t->active)
		log_info("throttle: pool %.1f%% full: host writes %s", f.percent,
			 active ? "slowed" : "at full speed again");
	if (active && !t->active)
		t->next = now;
	t->active = active;
}

int throttle_set(struct throttle *t, unsigned threshold, unsigned rate)
{
	if (!rate)
		return VTL_E_INVAL;
	pthread_mutex_lock(&t->mu);
	t->threshold = threshold;
	t->rate = rate;
	t->measured = 0; /* the next write measures the fill against the new threshold */
	pthread_mutex_unlock(&t->mu);
	return VTL_OK;
}

void throttle_gate(struct throttle *t, const struct scsi_cmd *c)
{
	if (!throttle_is_write(c->cdb))
		return;
	uint64_t now = vtl_mono_ns();
	pthread_mutex_lock(&t->mu);
	measure(t, now);
	uint64_t wait = t->active ? throttle_schedule(&t->next, now, c->xfer_len, (uint64_t)t->rate * MB) : 0;
	pthread_mutex_unlock(&t->mu);
	if (wait) {
		struct timespec ts = {.tv_sec = (time_t)(wait / NS), .tv_nsec = (long)(wait % NS)};
		while (nanosleep(&ts, &ts) != 0)
			; /* a signal cut the sleep short: sleep the rest */
	}
}

void throttle_state(struct throttle *t, struct throttle_state *st)
{
	pthread_mutex_lock(&t->mu);
	measure(t, vtl_mono_ns());
	*st = (struct throttle_state){.fill = t->fill, .active = t->active, .threshold = t->threshold, .rate = t->rate};
	pthread_mutex_unlock(&t->mu);
}
