/* SPDX-License-Identifier: Apache-2.0 */
#include "migrator/daemon.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend/cartridge.h"
#include "catalog/catalog.h"
#include "common/clock.h"
#include "common/ctlproto.h"
#include "common/ctlsock.h"
#include "common/grow.h"
#include "common/jsonout.h"
#include "common/log.h"
#include "common/vtl_error.h"
#include "migrator/ingest.h"
#include "config/reload.h"
#include "migrator/migrate.h"
#include "migrator/phys_iscsi.h"
#include "migrator/phys_st.h"
#include "migrator/policy.h"
#include "migrator/policyd.h"
#include "migrator/sched.h"
#include "migrator/stream.h"
#include "common/lockorder.h"

_Static_assert(VTL_CFG_MAX_PHYS_DRIVES <= PHYS_MAX_DRIVES, "[physical] drive lines must fit a phys_st_config");
_Static_assert(CTLPROTO_DRIVE_MAX + 1 >= PHYS_MAX_DRIVES, "a request can name every physical drive");
#include "migrator/phys_sim.h"

#define IDLE_WAIT_S 1          /* the dispatcher looks for queued jobs at least this often */
#define RESERVE_POLL_MS 200    /* a job waiting for another job's tape looks at its stop flag this often */
#define INVENTORY_MAX 4096     /* elements a "physical" answer lists */
#define QUEUE_MAX 1024         /* queued jobs other than recalls one plan looks at: the oldest */
#define JOBS_SHOWN 100         /* the most recent jobs a "jobs" answer lists */
#define MB 1e6
#define ACTOR "migrator"

/* What a running job is doing, for "jobs". */
struct live {
	bool running;
	int64_t id;
	enum cat_job_kind kind;
	char barcode[CAT_BARCODE_MAX + 1];
	uint64_t bytes, total;
	unsigned full, buffers;
	double mbs;
	struct stream_counters c;
};

/*
 * One physical drive's job runner: a thread that runs the jobs the
 * dispatcher gives it, one at a time, on its drive. Its fields after th are
 * the scheduler's state, under migd.mu.
 */
struct runner {
	struct migd *m;
	struct mlib *l;                 /* its library */
	unsigned drive;
	pthread_t th;
	bool th_started;
	pthread_cond_t go;              /* a job was given, or the migrator stops */
	bool assigned;                  /* job is this drive's (given, running, or recording its end) */
	struct cat_job job;
	uint64_t seq;                   /* when it was given, in jobs started since the start */
	struct live live;
	struct stream_counters ended;   /* the sum of the ended jobs' last progress reports (bytes, waits, gaps) */
	uint64_t jobs_ended;
	uint64_t started_ns;            /* when the job began to run (CLOCK_MONOTONIC) */
	bool first_block;               /* its first block was reported */
	char tape[CAT_BARCODE_MAX + 1]; /* the physical tape the job uses now ("": none) */
	bool by_operator;               /* cancelled by an operator: it fails */
	bool preempted;                 /* stopped for a recall: queued again */
	bool yielded;                   /* stopped because a host loads its cartridge: it fails; policy retries */
	atomic_bool cancel;             /* the job's stop flag, which the copy and stage loops read */
	_Atomic uint64_t copy_min_bps;  /* while it runs a copy: its drive's lowest matched speed (B/s); 0: none */
};

/*
 * One physical library ([physical] or [physical NAME]): its robot, its
 * drives' runners, the copy pools whose tapes it keeps. Its tapes are its
 * own (ptape.library): reservations are per library.
 */
struct mlib {
	struct migd *m;
	unsigned index;                      /* in cfg->physical */
	const struct vtl_physical_config *pc;
	struct phys_lib *lib;
	pthread_mutex_t robot;               /* one job's mount (inventory, unloads, moves) at a time */
	bool robot_init;
	unsigned ndrives;                    /* drives 0..ndrives-1 run jobs ([migrator] drives) */
	unsigned recall_drives;
	uint64_t min_matched_bps;            /* the lowest speed its drives match: no copy is held below it */
	struct runner run[PHYS_MAX_DRIVES];
	struct vtl_policy_config copies;     /* [policy] copy_pools, only those this library keeps */
};

/*
 * Locks (docs/architecture.md, "Locking"): a library's robot (one mount at
 * a time in it; a job holds only its own library's) ranks before the
 * physical library's own locks, which rank before mu; mu is never held
 * across a catalog or a physical call.
 */
struct migd {
	const struct vtl_config *cfg;
	struct vtl_catalog *cat;
	struct vtl_pool *pool;
	struct mlib libs[VTL_CFG_MAX_PHYS_LIBS];
	unsigned nlibs;
	pthread_mutex_t mu;       /* libs[].run[].(assigned..), seq, stopping */
	pthread_cond_t wake;      /* the dispatcher: a job was queued or ended, a recall waits */
	pthread_cond_t tapes;     /* a reserved tape was given back */
	bool stopping;
	pthread_t dispatcher;
	bool dispatcher_started;
	uint64_t seq;
	uint64_t recalls, recall_first_block[MIGD_RECALL_BUCKETS + 1]; /* under mu */
	double recall_first_block_sum;
	struct ctlsock *sock;
	struct policyd *policy;   /* the cache policy: a pass each dispatcher round, and its requests */
	struct ingest ingest;     /* vtld's last report of what its hosts move (migrator/ingest.h) */
	atomic_uint copies;       /* copies (migrate jobs) running now: they share what the hosts leave */
	/* [migrator] rate, window_rate, pool_rate, copy_floor (MB/s) and window (minutes of the day; from < 0:
	 * none), which a reload changes. */
	_Atomic unsigned rate, window_rate, pool_rate, copy_floor; /* pool_rate VTL_CFG_POOL_RATE_AUTO: probed */
	struct ingest_auto probe;         /* pool_rate = auto's probe; under mu */
	_Atomic uint64_t probe_budget;    /* its last budget (B/s, the copies together); 0: none */
	_Atomic int window_from, window_to;
	struct vtl_config *applied; /* the last reload's configuration; NULL: cfg's */
	atomic_flag reloading;    /* one reload at a time (SIGHUP and vtlctl reload) */
};

/* Takes cfg's rates, for rate_now. */
static void set_rates(struct migd *m, const struct vtl_config *cfg)
{
	unsigned from, to;
	bool window = cfg->migrator.window[0] && vtl_config_window(cfg->migrator.window, &from, &to);
	atomic_store(&m->rate, cfg->migrator.rate);
	atomic_store(&m->window_rate, cfg->migrator.window_rate);
	atomic_store(&m->pool_rate, cfg->migrator.pool_rate);
	atomic_store(&m->copy_floor, cfg->migrator.copy_floor);
	atomic_store(&m->window_to, window ? (int)to : 0);
	atomic_store(&m->window_from, window ? (int)from : -1);
}

static const char *const kind_names[] = {"", "migrate", "recall", "verify"};

/* ------------------------------------------------------------ the rate */

/* Bytes/s a job may write as asked: its own rate, else the window's during the window, else [migrator] rate. */
static double rate_asked(const struct runner *r)
{
	struct migd *m = r->m;
	if (r->job.opts.rate) /* set before the job runs and constant while it does */
		return r->job.opts.rate * MB;
	int from = atomic_load(&m->window_from), to = atomic_load(&m->window_to);
	if (from >= 0) {
		time_t now = time(NULL);
		struct tm tm;
		localtime_r(&now, &tm);
		int min = tm.tm_hour * 60 + tm.tm_min;
		bool in = from <= to ? min >= from && min < to : min >= from || min < to; /* a window may span midnight */
		if (in)
			return atomic_load(&m->window_rate) * MB;
	}
	return atomic_load(&m->rate) * MB;
}

static void lock(struct migd *m);
static void unlock(struct migd *m);

/* A copy's floor (B/s): its drive's lowest matched speed and a margin, or the operator's copy_floor when higher. */
static uint64_t copy_floor_of(struct migd *m, uint64_t min_matched_bps)
{
	uint64_t op = (uint64_t)atomic_load(&m->copy_floor) * (uint64_t)MB;
	uint64_t drive = (uint64_t)((double)min_matched_bps * INGEST_FLOOR_MARGIN);
	return op > drive ? op : drive;
}

/* The floors of the copies running now into floors (at most cap), their count in *n; returns their sum. */
static uint64_t copy_floors(struct migd *m, uint64_t *floors, unsigned cap, unsigned *n)
{
	uint64_t sum = 0;
	*n = 0;
	for (unsigned li = 0; li < m->nlibs; li++)
		for (unsigned d = 0; d < m->libs[li].ndrives; d++) {
			uint64_t min = atomic_load(&m->libs[li].run[d].copy_min_bps);
			if (min && *n < cap) {
				floors[(*n)++] = copy_floor_of(m, min);
				sum += floors[*n - 1];
			}
		}
	return sum;
}

/* What the running copies read now (B/s, together), as their last progress reports say. Takes mu. */
static uint64_t copies_reading(struct migd *m)
{
	double sum = 0;
	lock(m);
	for (unsigned li = 0; li < m->nlibs; li++)
		for (unsigned d = 0; d < m->libs[li].ndrives; d++) {
			const struct runner *r = &m->libs[li].run[d];
			if (atomic_load(&r->copy_min_bps) && r->live.running && r->live.mbs > 0)
				sum += r->live.mbs * MB;
		}
	unlock(m);
	return (uint64_t)sum;
}

/* The copies' budget (B/s, together) while hosts move data: false when the rule does not hold them now. */
static bool copy_budget(struct migd *m, uint64_t now_ms, uint64_t floors_sum, uint64_t *budget)
{
	unsigned pool = atomic_load(&m->pool_rate);
	uint64_t host = ingest_host(&m->ingest, now_ms);
	if (pool == 0 || host == 0 || floors_sum == 0)
		return false;
	if (pool == VTL_CFG_POOL_RATE_AUTO) {
		uint64_t b = atomic_load(&m->probe_budget); /* never under the floors: a copy may have joined since */
		*budget = b > floors_sum ? b : floors_sum;
	} else {
		*budget = ingest_left((uint64_t)pool * (uint64_t)MB, host);
	}
	return true;
}

/* The share of the pool a copy whose floor is mine gets while hosts move data (migrator/ingest.h); 0: no limit. */
static uint64_t ingest_limit(struct migd *m, uint64_t now_ms, uint64_t mine)
{
	uint64_t floors[VTL_CFG_MAX_PHYS_LIBS * PHYS_MAX_DRIVES], budget;
	unsigned n;
	uint64_t sum = copy_floors(m, floors, VTL_ARRAY_SIZE(floors), &n);
	if (!copy_budget(m, now_ms, sum, &budget))
		return 0;
	return ingest_copy_share(budget, floors, n, mine);
}

/* Bytes/s a job may write now: as asked, and a copy no more than host ingest leaves it. */
static double rate_now(void *arg)
{
	struct runner *r = arg;
	double asked = rate_asked(r);
	uint64_t min = atomic_load(&r->copy_min_bps);
	if (r->job.kind != CAT_JOB_MIGRATE || !min) /* verifies read tape only; a recall is what a host waits for */
		return asked;
	uint64_t share = ingest_limit(r->m, vtl_mono_ms(), copy_floor_of(r->m, min));
	return share && (asked <= 0 || (double)share < asked) ? (double)share : asked;
}

/* ------------------------------------------------------------- the runners */

static void lock(struct migd *m)
{
	vtl_lock(&m->mu, VTL_LOCK_SCHED);
}

static void unlock(struct migd *m)
{
	vtl_unlock(&m->mu, VTL_LOCK_SCHED);
}

/* Seconds from a recall's start (its mount and locate included) to its first block on disk: a host waits that long. */
static const double recall_bounds[MIGD_RECALL_BUCKETS] = {0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300};

const double *migd_recall_bounds(void)
{
	return recall_bounds;
}

/* A recall's first block came: its time joins the histogram. Under mu. */
static void recall_first_block(struct migd *m, struct runner *r)
{
	double s = (double)(vtl_mono_ns() - r->started_ns) / 1e9;
	unsigned b = 0;
	while (b < MIGD_RECALL_BUCKETS && s > recall_bounds[b])
		b++;
	m->recall_first_block[b]++;
	m->recall_first_block_sum += s;
	m->recalls++;
	r->first_block = true;
}

static void on_progress(void *arg, const char *barcode, const struct stream_progress *p)
{
	struct runner *r = arg;
	lock(r->m);
	if (r->job.kind == CAT_JOB_RECALL && !r->first_block && p->bytes > 0)
		recall_first_block(r->m, r); /* a stage reports its first block at once (copy.c's stage_progress) */
	snprintf(r->live.barcode, sizeof r->live.barcode, "%s", barcode);
	r->live.bytes = p->bytes;
	r->live.total = p->total;
	r->live.full = p->full;
	r->live.buffers = p->buffers;
	r->live.mbs = p->mbs;
	r->live.c = *p->c;
	unlock(r->m);
}

/* The runner whose job uses tape, other than r; NULL. Under mu. */
static struct runner *tape_holder(const struct runner *r, const char *tape)
{
	struct mlib *l = r->l; /* tapes are a library's own: another library's tape of that name is another tape */
	for (unsigned i = 0; i < l->ndrives; i++)
		if (&l->run[i] != r && l->run[i].assigned && !strcmp(l->run[i].tape, tape))
			return &l->run[i];
	return NULL;
}

/*
 * migrate.h's reserve: two jobs never use one tape at a time. A recall
 * waiting for a tape a copy or verify holds stops that job (queued again):
 * a host may be waiting on the recall.
 */
static int tape_reserve(void *arg, const char *tape, bool wait)
{
	struct runner *r = arg;
	struct migd *m = r->m;
	int rc = VTL_OK;
	lock(m);
	for (;;) {
		struct runner *h = tape_holder(r, tape);
		if (!h) {
			snprintf(r->tape, sizeof r->tape, "%s", tape);
			break;
		}
		if (!wait || atomic_load(&r->cancel)) {
			rc = VTL_E_BUSY;
			break;
		}
		if (r->job.kind == CAT_JOB_RECALL && h->job.kind != CAT_JOB_RECALL && !h->preempted) {
			h->preempted = true;
			atomic_store(&h->cancel, true);
			log_info("job %lld on drive %u stops: recall job %lld needs its tape %s; it is queued again",
				 (long long)h->job.id, h->drive, (long long)r->job.id, tape);
		}
		struct timespec ts = vtl_mono_deadline_ms(RESERVE_POLL_MS); /* and looks at its cancel flag again */
		(void)pthread_cond_timedwait(&m->tapes, &m->mu, &ts);
	}
	unlock(m);
	return rc;
}

static void tape_release(void *arg, const char *tape)
{
	struct runner *r = arg;
	lock(r->m);
	if (!strcmp(r->tape, tape))
		r->tape[0] = 0;
	pthread_cond_broadcast(&r->m->tapes);
	unlock(r->m);
}

/*
 * Records a stopped job's new state. No host waits on it; a job the catalog
 * cannot move stays "running" there, and the next start queues it again.
 */
static void job_set(struct migd *m, const struct cat_job *j, enum cat_job_state st, const char *error)
{
	if (catalog_job_update(m->cat, j->id, st, 0, error) != VTL_OK)
		log_warn("job %lld (%s): cannot record that it is %s: %s; it runs again at the next start",
			 (long long)j->id, j->barcode, st == CAT_JOB_QUEUED ? "queued again" : "failed",
			 catalog_last_error(m->cat));
}

static bool recall_elsewhere(struct migd *m, const struct mlib *l, const struct cat_job *j, const char *err);

static void run_job(struct migd *m, struct runner *r, const struct cat_job *j)
{
	const struct vtl_config *c = m->cfg;
	struct mlib *l = r->l;
	struct migrator mig = {.cat = m->cat, .pool = m->pool, .lib = l->lib, .phys_name = l->pc->name,
			       .virt_name = c->library.name, .verify = c->migrator.verify, .drive = (int)r->drive,
			       .copies = &l->copies, .native = j->opts.native, .cancel = &r->cancel,
			       .progress = on_progress, .progress_arg = r, .robot = &l->robot,
			       .reserve = tape_reserve, .release = tape_release, .tapes_arg = r,
			       .recall_may_go_on = m->nlibs > 1};
	/* Each job its own ring and readers. */
	mig.ring = (struct stream_config){.buffers = c->migrator.buffers, .buffer_size = (size_t)c->migrator.buffer_size,
					  .watermark = c->migrator.watermark, .readers = c->migrator.readers,
					  .rate_limit = rate_now, .rate_arg = r};
	char err[512] = "";
	int rc;
	if (j->kind == CAT_JOB_MIGRATE) {
		struct migrate_report rep;
		atomic_store(&r->copy_min_bps, l->min_matched_bps);
		atomic_fetch_add(&m->copies, 1);
		rc = migrate_copy(&mig, j->barcode, j->id, &rep, err, sizeof err);
		atomic_fetch_sub(&m->copies, 1);
		atomic_store(&r->copy_min_bps, 0);
		if (rc == VTL_OK)
			log_info("job %lld: copied %s to %s file %u: %.1f MB/s average, %.1f minimum; writer "
				 "waited %llu times (%llu delays), readers %llu times; back-hitches: %llu %s%s; drive %u",
				 (long long)j->id, j->barcode, rep.tape, rep.file, rep.copy.counters.avg_mbs,
				 rep.copy.counters.min_mbs, (unsigned long long)rep.copy.counters.writer_waits,
				 (unsigned long long)rep.copy.counters.writer_delays,
				 (unsigned long long)rep.copy.counters.reader_waits,
				 (unsigned long long)(rep.backhitches_known ? rep.backhitches : rep.copy.counters.gaps),
				 rep.backhitches_known ? "(counted by the drive)" : "(estimated: writer gaps of a second or more)",
				 rep.verified ? "; verified" : "", r->drive);
		if (rc == VTL_OK)
			log_info("job %lld ran on drive %u of %s", (long long)j->id, r->drive, l->pc->name);
	} else if (j->kind == CAT_JOB_VERIFY) {
		unsigned n = 0;
		rc = migrate_verify(&mig, j->barcode, j->id, &n, err, sizeof err);
		if (rc == VTL_OK)
			log_info("job %lld: verified %u copies of %s on drive %u", (long long)j->id, n, j->barcode, r->drive);
	} else {
		rc = migrate_recall(&mig, j->barcode, j->id, err, sizeof err);
		if (rc == VTL_OK)
			log_info("job %lld: recalled %s on drive %u of %s", (long long)j->id, j->barcode, r->drive,
				 l->pc->name);
		else if (mig.recall_may_go_on && (rc == VTL_E_MEDIUM || rc == VTL_E_NOTFOUND)) {
			if (recall_elsewhere(m, l, j, err))
				return;
			job_set(m, j, CAT_JOB_FAILED, err); /* migrate_recall left its end to us */
		}
	}
	if (rc) {
		lock(m);
		bool by_operator = r->by_operator, shutdown = m->stopping && !by_operator;
		bool preempted = r->preempted && !by_operator, yielded = r->yielded && !by_operator;
		unlock(m);
		if (rc == VTL_E_BUSY && preempted) {
			job_set(m, j, CAT_JOB_QUEUED, NULL);
			log_info("job %lld: stopped on drive %u for a recall; queued again (it starts again from its start)",
				 (long long)j->id, r->drive);
		} else if (rc == VTL_E_BUSY && yielded) {
			job_set(m, j, CAT_JOB_FAILED, "stopped: a host loaded the cartridge; copy it once it is unloaded");
			log_info("job %lld: stopped, a host loads %s", (long long)j->id, j->barcode);
		} else if (rc == VTL_E_BUSY && shutdown) {
			/* Stopped by a shutdown, not by an operator: it runs again at the next start. */
			job_set(m, j, CAT_JOB_QUEUED, NULL);
			log_info("job %lld: interrupted by the shutdown; queued again", (long long)j->id);
		} else {
			if (rc == VTL_E_BUSY && by_operator)
				job_set(m, j, CAT_JOB_FAILED, "cancelled by the operator");
			log_warn("job %lld (%s): %s", (long long)j->id, j->barcode,
				 by_operator ? "cancelled by the operator" : err);
		}
	}
}

static void *runner_main(void *arg)
{
	struct runner *r = arg;
	struct migd *m = r->m;
	lock(m);
	for (;;) {
		while (!r->assigned && !m->stopping)
			pthread_cond_wait(&r->go, &m->mu);
		if (!r->assigned)
			break;
		struct cat_job j = r->job;
		r->started_ns = vtl_mono_ns();
		r->first_block = false;
		unlock(m);
		/* Planned from a list read before: an operator may have cancelled it since; it runs only if still queued. */
		struct cat_job now;
		int gr = catalog_job_get(m->cat, j.id, &now);
		/* The library it runs in is in the catalog before it runs: jobs and a restart show it. */
		if (gr == VTL_OK && now.state == CAT_JOB_QUEUED && strcmp(now.opts.library, j.opts.library) != 0 &&
		    catalog_job_set_library(m->cat, j.id, j.opts.library) != VTL_OK)
			log_warn("job %lld (%s): cannot record that it runs in %s: %s", (long long)j.id, j.barcode,
				 j.opts.library, catalog_last_error(m->cat));
		if (gr == VTL_OK && now.state == CAT_JOB_QUEUED)
			run_job(m, r, &j);
		else if (gr != VTL_OK)
			log_warn("job %lld (%s): cannot read it back: %s; the next plan tries it again", (long long)j.id,
				 j.barcode, catalog_last_error(m->cat));
		lock(m);
		/* Its end is in the catalog now: the drive and its tape are free for the next plan. */
		r->assigned = false;
		r->ended.bytes += r->live.bytes;
		r->ended.writer_waits += r->live.c.writer_waits;
		r->ended.reader_waits += r->live.c.reader_waits;
		r->ended.gaps += r->live.c.gaps;
		r->jobs_ended++;
		r->live = (struct live){0};
		r->tape[0] = 0;
		pthread_cond_signal(&m->wake);
		pthread_cond_broadcast(&m->tapes);
	}
	unlock(m);
	return NULL;
}

/* ------------------------------------------------------------ the dispatcher */

struct queue {
	struct cat_job *j;
	size_t n, cap;
};

/* The queued jobs a plan looks at: every recall, and the oldest QUEUE_MAX others. */
static int collect_queued(const struct cat_job *j, void *arg)
{
	struct queue *q = arg;
	if (q->n >= QUEUE_MAX && j->kind != CAT_JOB_RECALL)
		return 0;
	int rc = vtl_grow((void **)&q->j, &q->cap, q->n, sizeof *q->j);
	if (rc)
		return rc;
	q->j[q->n++] = *j;
	return 0;
}

/* The libraries a job may run in, the first preferred; a recall takes the first with a free drive. */
struct route {
	unsigned lib[VTL_CFG_MAX_PHYS_LIBS];
	unsigned n;
};

struct copy_libs {
	struct migd *m;
	struct route *rt;
};

/*
 * The index in cfg->physical of the library holding copy k when it is a good
 * stacked one (one a recall can stage) on a tape of a library this migrator
 * serves; -1 otherwise.
 */
static int good_copy_library(struct migd *m, const struct cat_copy *k)
{
	struct cat_ptape t;
	if (strcmp(k->state, CAT_COPY_GOOD) != 0 || !strncmp(k->digest, COPY_NATIVE_PREFIX, strlen(COPY_NATIVE_PREFIX)) ||
	    catalog_ptape_get(m->cat, k->tape, &t) != VTL_OK)
		return -1;
	const struct vtl_physical_config *pc = vtl_config_physical_named(m->cfg, t.library);
	return pc ? (int)(pc - m->cfg->physical) : -1;
}

/* Adds the library of each good stacked copy (listed oldest first) to the front: the newest copy's comes first. */
static int copy_lib(const struct cat_copy *k, void *arg)
{
	struct copy_libs *cl = arg;
	int at = good_copy_library(cl->m, k);
	if (at < 0)
		return 0;
	unsigned idx = (unsigned)at, n = 0;
	struct route *rt = cl->rt;
	for (unsigned i = 0; i < rt->n; i++)
		if (rt->lib[i] != idx)
			rt->lib[n++] = rt->lib[i];
	memmove(rt->lib + 1, rt->lib, n * sizeof rt->lib[0]);
	rt->lib[0] = idx;
	rt->n = n + 1;
	return 0;
}

/* The libraries holding a good stacked copy of barcode, the newest copy's first. */
static int copy_libraries(struct migd *m, const char *barcode, struct route *rt)
{
	rt->n = 0;
	struct copy_libs cl = {.m = m, .rt = rt};
	return catalog_copy_list(m->cat, barcode, copy_lib, &cl);
}

struct stale_copy {
	struct migd *m;
	int lib;             /* the library of the good copy checked longest ago; -1: none yet */
	bool unknown;        /* that copy's block size is not known (recorded before schema 5) */
	int64_t verified_at;
};

/* Keeps the good stacked copy a verify should check first: one without its block size, else the oldest check. */
static int stale_copy(const struct cat_copy *k, void *arg)
{
	struct stale_copy *sc = arg;
	int at = good_copy_library(sc->m, k);
	bool unknown = !k->block_size;
	if (at < 0 || (sc->lib >= 0 && (sc->unknown || (!unknown && k->verified_at >= sc->verified_at))))
		return 0;
	*sc = (struct stale_copy){.m = sc->m, .lib = at, .unknown = unknown, .verified_at = k->verified_at};
	return 0;
}

/* The names of the libraries, "site, vault", for messages. */
static void library_names(const struct migd *m, char *buf, size_t cap)
{
	size_t at = 0;
	buf[0] = 0;
	for (unsigned i = 0; i < m->nlibs && at < cap; i++) {
		int w = snprintf(buf + at, cap - at, "%s%s", i ? ", " : "", m->libs[i].pc->name);
		at += w > 0 ? (size_t)w : 0;
	}
}

/*
 * Where a queued job runs (not under mu: it reads the catalog): the library
 * it names; else a copy in the library that keeps the next copy pool it
 * needs, a recall in those holding a good copy (the newest's first), a
 * verify where a good copy was checked longest ago, anything else in the
 * first. false (why says) when it can never
 * run here: it fails.
 */
static bool route(struct migd *m, const struct cat_job *j, struct route *rt, char *why, size_t cap)
{
	rt->n = 0;
	if (j->opts.library[0]) {
		const struct vtl_physical_config *pc = vtl_config_physical_named(m->cfg, j->opts.library);
		if (!pc) {
			/* Queued for another library (a catalog shared with another migrator): never written to this one. */
			char names[256];
			library_names(m, names, sizeof names);
			snprintf(why, cap, "queued for physical library %s; this migrator serves %s", j->opts.library, names);
			return false;
		}
		rt->lib[rt->n++] = (unsigned)(pc - m->cfg->physical);
	} else if (m->nlibs > 1 && j->kind == CAT_JOB_MIGRATE && !j->opts.native) {
		unsigned have = 0;
		int at = -1;
		if (policy_copy_pools(m->cat, &m->cfg->policy, j->barcode, &have) == VTL_OK)
			at = vtl_config_pool_library(m->cfg, policy_next_pool(&m->cfg->policy, have));
		rt->lib[rt->n++] = at >= 0 ? (unsigned)at : 0; /* a catalog that does not answer: the next plan asks again */
	} else if (m->nlibs > 1 && j->kind == CAT_JOB_VERIFY) {
		/* The policy's verifies record block sizes: each goes where a copy still lacks one, or was checked last. */
		struct stale_copy sc = {.m = m, .lib = -1};
		vtl_ignore(catalog_copy_list(m->cat, j->barcode, stale_copy, &sc)); /* none: it fails in the first */
		rt->lib[rt->n++] = sc.lib >= 0 ? (unsigned)sc.lib : 0;
	} else if (m->nlibs > 1 && j->kind == CAT_JOB_RECALL) {
		if (copy_libraries(m, j->barcode, rt) != VTL_OK || !rt->n)
			*rt = (struct route){.lib = {0}, .n = 1}; /* none: it fails in the first, saying so */
	} else {
		rt->lib[rt->n++] = 0;
	}
	const struct mlib *l = &m->libs[rt->lib[0]];
	if (j->opts.drive >= (int)l->ndrives) {
		snprintf(why, cap, "queued for drive %d; this migrator runs jobs on drives 0..%u of %s ([migrator] drives)",
			 j->opts.drive, l->ndrives - 1, l->pc->name);
		return false;
	}
	return true;
}

/* Whether library l has a drive that runs jobs and has none. Under mu. */
static bool has_free_drive(const struct mlib *l)
{
	for (unsigned i = 0; i < l->ndrives; i++)
		if (!l->run[i].assigned)
			return true;
	return false;
}

/* Plans library l's jobs (those of q routed to it: lib[k] == l) and gives them to its runners; how many. Under mu. */
static unsigned dispatch_lib(struct migd *m, struct mlib *l, const struct queue *q, const unsigned *lib)
{
	struct sched_job *sq = q->n ? calloc(q->n, sizeof *sq) : NULL;
	size_t *at = q->n ? calloc(q->n, sizeof *at) : NULL;
	if (q->n && (!sq || !at)) {
		free(sq);
		free(at);
		return 0; /* the next round plans again */
	}
	size_t n = 0;
	for (size_t k = 0; k < q->n; k++)
		if (lib[k] == l->index) {
			sq[n] = (struct sched_job){.id = q->j[k].id, .kind = q->j[k].kind, .drive = q->j[k].opts.drive};
			at[n++] = k;
		}
	struct sched_drive sd[PHYS_MAX_DRIVES];
	for (unsigned i = 0; i < l->ndrives; i++) {
		const struct runner *r = &l->run[i];
		sd[i] = (struct sched_drive){.job = r->assigned ? r->job.id : 0, .kind = r->job.kind, .started = r->seq,
					     .stopping = r->assigned && atomic_load(&r->cancel)};
	}
	struct sched_plan p;
	sched_plan(sq, n, sd, l->ndrives, l->recall_drives, &p);
	free(sq);
	for (unsigned i = 0; i < p.nstart; i++) {
		struct runner *r = &l->run[p.start[i].drive];
		const struct cat_job *j = &q->j[at[p.start[i].job]];
		r->job = *j;
		snprintf(r->job.opts.library, sizeof r->job.opts.library, "%s", l->pc->name); /* the runner records it */
		r->assigned = true;
		r->seq = ++m->seq;
		r->by_operator = r->preempted = r->yielded = false;
		r->tape[0] = 0;
		atomic_store(&r->cancel, false);
		r->live = (struct live){.running = true, .id = j->id, .kind = j->kind};
		snprintf(r->live.barcode, sizeof r->live.barcode, "%s", j->barcode);
		pthread_cond_signal(&r->go);
	}
	free(at);
	for (unsigned i = 0; i < p.npreempt; i++) {
		struct runner *r = &l->run[p.preempt[i]];
		r->preempted = true;
		atomic_store(&r->cancel, true);
		log_info("job %lld on drive %u of %s stops so that a recall gets a drive; it is queued again",
			 (long long)r->job.id, r->drive, l->pc->name);
	}
	return p.nstart;
}

/*
 * Plans each library over the jobs routed to it (rt, one per queued job): a
 * recall that may read from several libraries goes to the first with a free
 * drive, else to the first (where it stops a copy). Under mu.
 */
static unsigned dispatch(struct migd *m, const struct queue *q, const struct route *rt)
{
	unsigned *lib = q->n ? calloc(q->n, sizeof *lib) : NULL;
	if (q->n && !lib)
		return 0;
	for (size_t k = 0; k < q->n; k++) {
		lib[k] = rt[k].lib[0];
		for (unsigned i = 0; q->j[k].kind == CAT_JOB_RECALL && i < rt[k].n; i++)
			if (has_free_drive(&m->libs[rt[k].lib[i]])) {
				lib[k] = rt[k].lib[i];
				break;
			}
	}
	unsigned started = 0;
	for (unsigned i = 0; i < m->nlibs; i++)
		started += dispatch_lib(m, &m->libs[i], q, lib);
	free(lib);
	return started;
}

static void *dispatcher_main(void *arg)
{
	struct migd *m = arg;
	lock(m);
	while (!m->stopping) {
		unlock(m);
		policyd_tick(m->policy); /* it leaves cartridges with a queued or running job alone */
		struct queue q = {0};
		int rc = catalog_job_list(m->cat, CAT_JOB_QUEUED, collect_queued, &q);
		struct route *rt = rc == VTL_OK && q.n ? calloc(q.n, sizeof *rt) : NULL;
		if (q.n && !rt)
			rc = VTL_E_NOMEM; /* the next round tries again */
		size_t keep = 0;
		for (size_t k = 0; rc == VTL_OK && k < q.n; k++) {
			char why[512];
			if (!route(m, &q.j[k], &rt[keep], why, sizeof why)) {
				job_set(m, &q.j[k], CAT_JOB_FAILED, why);
				log_warn("job %lld (%s): %s", (long long)q.j[k].id, q.j[k].barcode, why);
			} else {
				q.j[keep++] = q.j[k];
			}
		}
		q.n = keep;
		lock(m);
		unsigned started = m->stopping || rc != VTL_OK ? 0 : dispatch(m, &q, rt);
		free(q.j);
		free(rt);
		if (!started && !m->stopping) {
			struct timespec ts = vtl_mono_deadline_ms(IDLE_WAIT_S * 1000ull);
			(void)pthread_cond_timedwait(&m->wake, &m->mu, &ts); /* ETIMEDOUT is the idle tick */
		}
	}
	unlock(m);
	return NULL;
}

/*
 * A recall that failed in library l (every copy there bad, or none left)
 * goes to the next library holding a good copy: queued again there. false
 * when none does (the failure stands).
 */
static bool recall_elsewhere(struct migd *m, const struct mlib *l, const struct cat_job *j, const char *err)
{
	struct route rt;
	if (m->nlibs < 2 || copy_libraries(m, j->barcode, &rt) != VTL_OK)
		return false;
	for (unsigned i = 0; i < rt.n; i++) {
		const struct mlib *next = &m->libs[rt.lib[i]];
		if (next == l)
			continue;
		if (catalog_job_update(m->cat, j->id, CAT_JOB_QUEUED, 0, "") != VTL_OK ||
		    catalog_job_set_library(m->cat, j->id, next->pc->name) != VTL_OK) {
			log_warn("job %lld (%s): cannot queue it again for %s: %s", (long long)j->id, j->barcode,
				 next->pc->name, catalog_last_error(m->cat));
			return false;
		}
		log_info("job %lld: the recall of %s from %s failed (%s); queued again for %s, which has a good copy",
			 (long long)j->id, j->barcode, l->pc->name, err, next->pc->name);
		return true;
	}
	return false;
}

/* --------------------------------------------------------- the requests */

/* library: "" lets the dispatcher pick (migrator/daemon.c route). */
static void queue_job(struct migd *m, enum cat_job_kind kind, const char *barcode, int drive, unsigned rate,
		      bool native, const char *library, char *out, size_t cap)
{
	struct cat_cartridge cc;
	int64_t id;
	/* Kept with the job, so that a restart runs it as it was asked for. */
	struct cat_job_opts o = {.drive = drive, .rate = rate, .native = native};
	snprintf(o.library, sizeof o.library, "%s", m->nlibs == 1 && !library[0] ? m->libs[0].pc->name : library);
	int rc = catalog_cartridge_get(m->cat, barcode, &cc);
	/* A verify of every copy: one job in each library holding one. */
	struct route each = {.n = 0};
	if (rc == VTL_OK && kind == CAT_JOB_VERIFY && m->nlibs > 1 && !o.library[0])
		rc = copy_libraries(m, barcode, &each);
	char more[256] = "";
	size_t mat = 0;
	for (unsigned i = 1; rc == VTL_OK && i < each.n; i++) {
		int64_t extra;
		snprintf(o.library, sizeof o.library, "%s", m->libs[each.lib[i]].pc->name);
		if ((rc = catalog_job_add_opts(m->cat, kind, barcode, &o, &extra)) == VTL_OK) {
			int w = snprintf(more + mat, sizeof more - mat, ", job %lld in %s", (long long)extra, o.library);
			mat += w > 0 && (size_t)w < sizeof more - mat ? (size_t)w : 0;
		}
	}
	if (each.n)
		snprintf(o.library, sizeof o.library, "%s", m->libs[each.lib[0]].pc->name);
	if (rc == VTL_OK)
		rc = catalog_job_add_opts(m->cat, kind, barcode, &o, &id);
	if (rc) {
		jo_answer(out, cap, rc, catalog_last_error(m->cat), NULL);
		return;
	}
	lock(m);
	pthread_cond_signal(&m->wake);
	unlock(m);
	char msg[512];
	snprintf(msg, sizeof msg, "queued job %lld: %s %s%s%s%s%s", (long long)id, kind_names[kind], barcode,
		 native ? " (native)" : "", o.library[0] && m->nlibs > 1 ? " in " : "", m->nlibs > 1 ? o.library : "",
		 more);
	size_t at = 0;
	jo_printf(out, cap, &at, "{\"ok\":true,\"job\":%lld,\"message\":\"", (long long)id);
	jo_str(out, cap, &at, msg);
	jo_printf(out, cap, &at, "\"}");
}

struct jobs {
	struct cat_job *j;
	size_t n, cap;
};

static int collect_job(const struct cat_job *j, void *arg)
{
	struct jobs *js = arg;
	int rc = vtl_grow((void **)&js->j, &js->cap, js->n, sizeof *js->j);
	if (rc)
		return rc;
	js->j[js->n++] = *j;
	return 0;
}

static const char *const state_names[] = {"", "queued", "running", "done", "failed"};

static void jobs_answer(struct migd *m, char *out, size_t cap)
{
	struct jobs js = {0};
	int rc = catalog_job_list(m->cat, CAT_JOB_ANY, collect_job, &js);
	if (rc) {
		free(js.j);
		jo_answer(out, cap, rc, catalog_last_error(m->cat), NULL);
		return;
	}
	struct live lv[VTL_CFG_MAX_PHYS_LIBS][PHYS_MAX_DRIVES];
	lock(m);
	for (unsigned li = 0; li < m->nlibs; li++)
		for (unsigned d = 0; d < m->libs[li].ndrives; d++)
			lv[li][d] = m->libs[li].run[d].live;
	unlock(m);
	size_t at = 0;
	jo_printf(out, cap, &at, "{\"ok\":true,\"jobs\":[");
	size_t first = js.n > JOBS_SHOWN ? js.n - JOBS_SHOWN : 0;
	for (size_t i = first; i < js.n; i++) {
		const struct cat_job *j = &js.j[i];
		const struct live *l = NULL;
		unsigned drive = 0;
		const char *library = j->opts.library;
		for (unsigned li = 0; li < m->nlibs && !l; li++)
			for (unsigned d = 0; d < m->libs[li].ndrives && !l; d++)
				if (lv[li][d].running && lv[li][d].id == j->id) {
					l = &lv[li][d];
					drive = d;
					library = m->libs[li].pc->name;
				}
		bool live = l != NULL;
		jo_printf(out, cap, &at,
			  "%s{\"id\":%lld,\"kind\":\"%s\",\"barcode\":\"%s\",\"state\":\"%s\",\"bytes\":%llu,"
			  "\"started\":%lld,\"finished\":%lld,\"error\":\"",
			  i > first ? "," : "", (long long)j->id, kind_names[j->kind], j->barcode, state_names[j->state],
			  (unsigned long long)(live ? l->bytes : j->bytes_done), (long long)j->started,
			  (long long)j->finished);
		jo_str(out, cap, &at, j->error);
		/* What it was asked for, as the catalog keeps it. */
		jo_printf(out, cap, &at, "\",\"copy\":\"%s\",\"asked_drive\":%d,\"rate\":%u,\"library\":\"",
			  j->opts.native ? CAT_COPY_NATIVE : CAT_COPY_STACKED, j->opts.drive, j->opts.rate);
		jo_str(out, cap, &at, library);
		jo_printf(out, cap, &at, "\"");
		if (live) {
			double eta = l->mbs > 0 && l->total > l->bytes ? (double)(l->total - l->bytes) / (l->mbs * MB) : 0;
			jo_printf(out, cap, &at,
				  ",\"total\":%llu,\"mb_s\":%.1f,\"avg_mb_s\":%.1f,\"min_mb_s\":%.1f,\"ring_full\":%u,"
				  "\"ring_buffers\":%u,\"writer_waits\":%llu,\"writer_delays\":%llu,\"reader_waits\":%llu,"
				  "\"eta_s\":%.0f,\"drive\":%u",
				  (unsigned long long)l->total, l->mbs, l->c.avg_mbs, l->c.min_mbs, l->full, l->buffers,
				  (unsigned long long)l->c.writer_waits, (unsigned long long)l->c.writer_delays,
				  (unsigned long long)l->c.reader_waits, eta, drive);
		}
		jo_printf(out, cap, &at, "}");
	}
	/* Host ingest first: what vtld says its hosts move, what the copies read, and what that leaves each copy. */
	struct migd_ingest_snap g;
	migd_ingest_snapshot(m, &g);
	jo_printf(out, cap, &at,
		  "],\"ingest\":{\"host_mb_s\":%.1f,\"pool_rate\":%u,\"auto\":%s,\"copy_floor\":%u,\"copies\":%u,"
		  "\"copy_limit_mb_s\":%.1f,\"floors_mb_s\":%.1f,\"budget_mb_s\":%.1f,\"copies_mb_s\":%.1f,"
		  "\"pool_mb_s\":%.1f,\"host_ref_mb_s\":%.1f,\"drops\":%u}}",
		  (double)g.host_bps / MB, g.pool_rate, g.automatic ? "true" : "false", g.copy_floor, g.copies,
		  (double)g.limit_bps / MB, (double)g.floors_bps / MB, (double)g.budget_bps / MB,
		  (double)g.copies_bps / MB, (double)(g.host_bps + g.copies_bps) / MB, (double)g.ref_bps / MB, g.drops);
	free(js.j);
}

static void cancel_job(struct migd *m, int64_t id, char *out, size_t cap)
{
	struct cat_job j;
	int rc = catalog_job_get(m->cat, id, &j);
	if (rc) {
		jo_answer(out, cap, rc, catalog_last_error(m->cat), NULL);
		return;
	}
	char msg[96];
	if (j.state == CAT_JOB_QUEUED) {
		rc = catalog_job_update(m->cat, id, CAT_JOB_FAILED, 0, "cancelled by the operator");
		snprintf(msg, sizeof msg, "job %lld cancelled before it started", (long long)id);
	} else if (j.state == CAT_JOB_RUNNING) {
		lock(m);
		for (unsigned li = 0; li < m->nlibs; li++)
			for (unsigned d = 0; d < m->libs[li].ndrives; d++) {
				struct runner *r = &m->libs[li].run[d];
				if (r->assigned && r->job.id == id) {
					r->by_operator = true;
					atomic_store(&r->cancel, true);
				}
			}
		unlock(m);
		snprintf(msg, sizeof msg, "job %lld is being cancelled", (long long)id);
	} else {
		rc = VTL_E_INVAL;
		snprintf(msg, sizeof msg, "job %lld has already ended (%s)", (long long)id, state_names[j.state]);
	}
	jo_answer(out, cap, rc, msg, msg);
}

/*
 * vtld's hints: "wake" (a host loaded a migrated cartridge; its recall is in
 * the catalog) makes the dispatcher plan at once: the recall takes a free
 * drive, or stops one copy or verify when none is free; "yield" (a host
 * loads a cartridge a copy is reading) stops that copy.
 */
static void host_hint(struct migd *m, bool wake, const char *barcode, char *out, size_t cap)
{
	const char *msg = wake ? "the recall takes a free drive, or one a copy gives up" : "nothing to stop";
	lock(m);
	for (unsigned li = 0; !wake && li < m->nlibs; li++)
		for (unsigned d = 0; d < m->libs[li].ndrives; d++) {
			struct runner *r = &m->libs[li].run[d];
			if (r->assigned && r->job.kind != CAT_JOB_RECALL && !strcmp(r->job.barcode, barcode)) {
				r->yielded = true;
				atomic_store(&r->cancel, true);
				msg = "stopping the copy of the cartridge";
			}
		}
	pthread_cond_signal(&m->wake);
	unlock(m);
	jo_answer(out, cap, VTL_OK, msg, msg);
}

/* The capacity a new tape of library pc gets in the catalog. */
static uint64_t tape_capacity(const struct vtl_physical_config *pc)
{
	return pc->tape_capacity ? pc->tape_capacity : phys_sim_native_capacity(pc->generation);
}

/* Adds library l's new tapes to the catalog, in its first pool (none named: the default one). */
static int scan_lib(struct migd *m, struct mlib *l, unsigned *added, char *err, size_t errlen)
{
	struct migrator mig = {.cat = m->cat, .lib = l->lib, .phys_name = l->pc->name,
			       .tape_pool = l->pc->pools ? l->pc->pool[0] : NULL};
	return migrate_scan_tapes(&mig, tape_capacity(l->pc), added, err, errlen);
}

/* Jobs on other drives go on meanwhile: each library serialises its changer's calls itself. */
static void scan(struct migd *m, char *out, size_t cap)
{
	char err[512] = "", msg[512] = "";
	size_t at = 0;
	int rc = VTL_OK;
	for (unsigned i = 0; rc == VTL_OK && i < m->nlibs; i++) {
		unsigned added = 0;
		rc = scan_lib(m, &m->libs[i], &added, err, sizeof err);
		int w = snprintf(msg + at, sizeof msg - at, "%s%u new tapes of %s", i ? ", " : "", added,
				 m->libs[i].pc->name);
		at += w > 0 && (size_t)w < sizeof msg - at ? (size_t)w : 0;
	}
	if (at < sizeof msg)
		snprintf(msg + at, sizeof msg - at, " in the catalog");
	jo_answer(out, cap, rc, err, msg);
}

/* The library named library; NULL with the refusal (naming the libraries there are) in out. */
static struct mlib *lib_named(struct migd *m, const char *library, char *out, size_t cap)
{
	for (unsigned i = 0; i < m->nlibs; i++)
		if (!strcmp(m->libs[i].pc->name, library))
			return &m->libs[i];
	char names[256], msg[384];
	library_names(m, names, sizeof names);
	snprintf(msg, sizeof msg, "no physical library %s: this migrator serves %s", library, names);
	jo_answer(out, cap, VTL_E_NOTFOUND, msg, NULL);
	return NULL;
}

/* One library's elements into out, each drive with its job (busy), idle, or unused (beyond [migrator] drives). */
static void physical_lib(struct migd *m, struct mlib *l, const struct phys_element *e, unsigned n, char *out,
			 size_t cap, size_t *at, bool *first)
{
	struct {
		bool busy;
		int64_t job;
		enum cat_job_kind kind;
	} use[PHYS_MAX_DRIVES] = {{0}};
	lock(m);
	for (unsigned d = 0; d < l->ndrives; d++)
		use[d].busy = l->run[d].assigned, use[d].job = l->run[d].job.id, use[d].kind = l->run[d].job.kind;
	unlock(m);
	static const char *const types[] = {"", "transport", "slot", "ie", "drive"};
	for (unsigned i = 0; i < n; i++) {
		jo_printf(out, cap, at, "%s{\"address\":%u,\"library\":\"", *first ? "" : ",", e[i].address);
		*first = false;
		jo_str(out, cap, at, l->pc->name);
		jo_printf(out, cap, at, "\",\"type\":\"%s\",\"barcode\":\"", types[e[i].type]);
		jo_str(out, cap, at, e[i].full ? e[i].barcode : "");
		jo_printf(out, cap, at, "\"");
		int d = e[i].type == PHYS_ELEM_DRIVE ? phys_drive_of(l->lib, e[i].address) : -1;
		if (d >= 0 && (unsigned)d >= l->ndrives)
			jo_printf(out, cap, at, ",\"drive\":%d,\"state\":\"unused\"", d);
		else if (d >= 0 && use[d].busy)
			jo_printf(out, cap, at, ",\"drive\":%d,\"state\":\"busy\",\"job\":%lld,\"job_kind\":\"%s\"", d,
				  (long long)use[d].job, kind_names[use[d].kind]);
		else if (d >= 0)
			jo_printf(out, cap, at, ",\"drive\":%d,\"state\":\"idle\"", d);
		jo_printf(out, cap, at, "}");
	}
}

/*
 * One library's part of an answer that lists every library's (physical,
 * drives), from its inventory (e, n elements): its items appended to out at
 * *at, the first of all without a comma (*first, cleared once one is written).
 */
typedef void (*lib_part_fn)(struct migd *m, struct mlib *l, const struct phys_element *e, unsigned n, char *out,
			    size_t cap, size_t *at, bool *first);

/*
 * Answers with head (the document's opening up to its array's '[') and
 * the part of every library (library "": all) or of the one named, then
 * "]}"; head gets the first library, or the named one. A library whose
 * changer does not answer its inventory makes it a refusal saying so.
 */
static void libs_answer(struct migd *m, const char *library,
			void (*head)(struct migd *m, const struct mlib *l, char *out, size_t cap, size_t *at),
			lib_part_fn part, char *out, size_t cap)
{
	struct mlib *only = NULL;
	if (library[0] && !(only = lib_named(m, library, out, cap)))
		return;
	struct phys_element *e = malloc(INVENTORY_MAX * sizeof *e);
	if (!e) {
		jo_answer(out, cap, VTL_E_NOMEM, "out of memory", NULL);
		return;
	}
	size_t at = 0;
	head(m, only ? only : &m->libs[0], out, cap, &at);
	char err[PHYS_ERR_MAX + CAT_NAME_MAX + 4];
	int rc = VTL_OK;
	bool first = true;
	for (unsigned i = 0; rc == VTL_OK && i < m->nlibs; i++) {
		struct mlib *l = &m->libs[i];
		unsigned n = 0;
		if (only && only != l)
			continue;
		if ((rc = l->lib->ops->inventory(l->lib, e, INVENTORY_MAX, &n)) != VTL_OK)
			snprintf(err, sizeof err, "%s: %s", l->pc->name, phys_error(l->lib));
		else
			part(m, l, e, n < INVENTORY_MAX ? n : INVENTORY_MAX, out, cap, &at, &first);
	}
	free(e);
	if (rc) {
		jo_answer(out, cap, rc, err, NULL);
		return;
	}
	jo_printf(out, cap, &at, "]}");
}

/* "physical"'s library and kind: the first library's (or the named one's), as with a single library. */
static void physical_head(struct migd *m, const struct mlib *l, char *out, size_t cap, size_t *at)
{
	(void)m;
	jo_printf(out, cap, at, "{\"ok\":true,\"library\":\"");
	jo_str(out, cap, at, l->pc->name);
	jo_printf(out, cap, at, "\",\"kind\":\"%s\",\"elements\":[", l->lib->ops->kind);
}

/* One drive of a "drives" answer, copied under mu so that the answer is written without it. */
struct drive_view {
	bool busy;
	struct cat_job job;
	char job_tape[CAT_BARCODE_MAX + 1]; /* the tape its job has reserved ("": none yet) */
	struct live live;
};

/*
 * Library l's drives into out: each busy with its job (the running one's
 * live figures), idle, or unused (beyond [migrator] drives), with the tape
 * its changer shows in it. Back-hitches: the simulated drive counts them
 * since its tape was loaded; another drive does not report them, so a
 * running job's writer gaps of STREAM_GAP_MS or more stand for them.
 */
static void drives_lib(struct migd *m, struct mlib *l, const struct phys_element *e, unsigned n, char *out,
		       size_t cap, size_t *at, bool *first)
{
	unsigned have = l->lib->drives < PHYS_MAX_DRIVES ? l->lib->drives : PHYS_MAX_DRIVES;
	struct drive_view v[PHYS_MAX_DRIVES];
	lock(m);
	for (unsigned d = 0; d < have; d++) {
		const struct runner *r = &l->run[d];
		v[d] = (struct drive_view){.busy = d < l->ndrives && r->assigned, .job = r->job, .live = r->live};
		snprintf(v[d].job_tape, sizeof v[d].job_tape, "%s", r->tape);
	}
	unlock(m);
	bool counted = l->lib->ops->counts_backhitches;
	size_t ring_buffer = (size_t)m->cfg->migrator.buffer_size;
	for (unsigned d = 0; d < have; d++) {
		const char *tape = "";
		for (unsigned i = 0; i < n; i++)
			if (e[i].type == PHYS_ELEM_DRIVE && e[i].address == l->lib->drive_addr[d] && e[i].full)
				tape = e[i].barcode;
		const struct drive_view *w = &v[d];
		jo_printf(out, cap, at, "%s{\"library\":\"", *first ? "" : ",");
		*first = false;
		jo_str(out, cap, at, l->pc->name);
		jo_printf(out, cap, at, "\",\"drive\":%u,\"address\":%u,\"state\":\"%s\",\"tape\":\"", d,
			  l->lib->drive_addr[d], d >= l->ndrives ? "unused" : w->busy ? "busy" : "idle");
		jo_str(out, cap, at, tape);
		jo_printf(out, cap, at, "\"");
		uint64_t backhitches = 0;
		bool known = false;
		struct phys_drive_status st;
		if (counted && tape[0] && l->lib->ops->status(l->lib, d, &st) == VTL_OK) {
			backhitches = st.backhitches;
			known = true;
		} else if (w->busy && w->live.running) {
			backhitches = w->live.c.gaps;
		}
		if (w->busy) {
			const struct live *lv = &w->live;
			jo_printf(out, cap, at, ",\"job\":%lld,\"job_kind\":\"%s\",\"barcode\":\"", (long long)w->job.id,
				  kind_names[w->job.kind]);
			jo_str(out, cap, at, w->job.barcode);
			jo_printf(out, cap, at, "\",\"job_tape\":\"");
			jo_str(out, cap, at, w->job_tape);
			jo_printf(out, cap, at,
				  "\",\"bytes\":%llu,\"total\":%llu,\"mb_s\":%.1f,\"ring_full\":%u,\"ring_buffers\":%u,"
				  "\"ring_bytes\":%llu,\"writer_waits\":%llu,\"writer_wait_ms\":%llu,\"reader_waits\":%llu,"
				  "\"reader_wait_ms\":%llu",
				  (unsigned long long)lv->bytes, (unsigned long long)lv->total, lv->mbs, lv->full, lv->buffers,
				  (unsigned long long)lv->full * (unsigned long long)ring_buffer,
				  (unsigned long long)lv->c.writer_waits,
				  (unsigned long long)lv->c.writer_delays * STREAM_DELAY_MS,
				  (unsigned long long)lv->c.reader_waits,
				  (unsigned long long)lv->c.reader_delays * STREAM_DELAY_MS);
		}
		if (known || w->busy)
			jo_printf(out, cap, at, ",\"backhitches\":%llu,\"backhitches_counted\":%s",
				  (unsigned long long)backhitches, known ? "true" : "false");
		jo_printf(out, cap, at, "}");
	}
}

/* "drives"'s opening: the ring's buffer size, which ring_bytes counts in. */
static void drives_head(struct migd *m, const struct mlib *l, char *out, size_t cap, size_t *at)
{
	(void)l;
	jo_printf(out, cap, at, "{\"ok\":true,\"ring_buffer_size\":%llu,\"drives\":[",
		  (unsigned long long)m->cfg->migrator.buffer_size);
}

/* ------------------------------------------------------------- the metrics */

struct job_counts {
	uint64_t (*n)[MIGD_JOB_STATES];
};

static int count_job(const struct cat_job *j, void *arg)
{
	struct job_counts *c = arg;
	if ((unsigned)j->kind < MIGD_JOB_KINDS && (unsigned)j->state < MIGD_JOB_STATES)
		c->n[j->kind][j->state]++;
	return 0;
}

void migd_ingest_snapshot(struct migd *m, struct migd_ingest_snap *out)
{
	uint64_t now = vtl_mono_ms(), floors[VTL_CFG_MAX_PHYS_LIBS * PHYS_MAX_DRIVES], budget = 0, low = 0;
	unsigned n, pool = atomic_load(&m->pool_rate);
	memset(out, 0, sizeof *out);
	out->floors_bps = copy_floors(m, floors, VTL_ARRAY_SIZE(floors), &n);
	for (unsigned i = 0; i < n; i++)
		low = !low || floors[i] < low ? floors[i] : low;
	out->held = copy_budget(m, now, out->floors_bps, &budget);
	out->host_bps = ingest_host(&m->ingest, now);
	out->copies_bps = copies_reading(m);
	out->automatic = pool == VTL_CFG_POOL_RATE_AUTO;
	out->pool_rate = out->automatic ? 0 : pool;
	out->copy_floor = atomic_load(&m->copy_floor);
	out->copies = atomic_load(&m->copies);
	if (out->held) {
		out->budget_bps = budget;
		out->limit_bps = ingest_copy_share(budget, floors, n, low);
	}
	lock(m);
	out->drops = m->probe.drops;
	out->ref_bps = out->automatic ? m->probe.ref_bps : 0;
	unlock(m);
}

void migd_snapshot(struct migd *m, struct migd_snapshot *out)
{
	memset(out, 0, sizeof *out);
	lock(m);
	for (unsigned li = 0; li < m->nlibs; li++) {
		const struct mlib *l = &m->libs[li];
		unsigned have = l->lib->drives < PHYS_MAX_DRIVES ? l->lib->drives : PHYS_MAX_DRIVES;
		for (unsigned d = 0; d < have; d++) {
			const struct runner *r = &l->run[d];
			struct migd_drive_snap *s = &out->drive[out->drives++];
			snprintf(s->library, sizeof s->library, "%s", l->pc->name);
			s->number = d;
			s->runs_jobs = d < l->ndrives;
			s->busy = r->assigned;
			s->jobs_ended = r->jobs_ended;
			s->bytes = r->ended.bytes + r->live.bytes;
			s->writer_waits = r->ended.writer_waits + r->live.c.writer_waits;
			s->reader_waits = r->ended.reader_waits + r->live.c.reader_waits;
			s->gaps = r->ended.gaps + r->live.c.gaps;
			if (r->assigned) {
				s->job = r->job.id;
				s->kind = r->job.kind;
				snprintf(s->barcode, sizeof s->barcode, "%s", r->job.barcode);
				s->job_bytes = r->live.bytes;
				s->job_total = r->live.total;
				s->ring_full = r->live.full;
				s->ring_buffers = r->live.buffers;
			}
		}
	}
	out->recalls = m->recalls;
	memcpy(out->recall_first_block, m->recall_first_block, sizeof out->recall_first_block);
	out->recall_first_block_sum = m->recall_first_block_sum;
	unlock(m);
	/* Neither under mu (never held across a catalog call) nor under the policy's lock. */
	struct job_counts jc = {out->jobs};
	out->jobs_ok = catalog_job_list(m->cat, CAT_JOB_ANY, count_job, &jc) == VTL_OK;
	policyd_counts(m->policy, &out->policy);
	migd_ingest_snapshot(m, &out->ingest);
}

/* "policy" and "release BARCODE [force]", answered by the cache policy. */
static void policy_request(struct migd *m, const char *word, int args, const char *barcode, const char *opt,
			   char *out, size_t cap)
{
	if (!strcmp(word, "policy"))
		policyd_answer_status(m->policy, out, cap);
	else if (args == 1 || (args == 2 && !strcmp(opt, "force")))
		policyd_answer_release(m->policy, barcode, args == 2, out, cap);
	else
		jo_answer(out, cap, VTL_E_INVAL, "give the barcode of the premigrated cartridge to release (and force)", NULL);
}

/*
 * The requests, parsed by common/ctlproto.c's table, each answered by the
 * handler above it takes: these adapters only hand it the parsed values.
 */
typedef void (*request_fn)(struct migd *m, const struct ctlproto_request *r, char *out, size_t cap);

static void req_job(struct migd *m, const struct ctlproto_request *r, char *out, size_t cap)
{
	const struct mlib *l = m->nlibs == 1 ? &m->libs[0] : NULL;
	for (unsigned i = 0; r->library[0] && i < m->nlibs; i++)
		if (!strcmp(m->libs[i].pc->name, r->library))
			l = &m->libs[i];
	char msg[384];
	if (r->library[0] && (!l || strcmp(l->pc->name, r->library) != 0)) {
		char names[256];
		library_names(m, names, sizeof names);
		snprintf(msg, sizeof msg, "no physical library %s: this migrator serves %s", r->library, names);
		jo_answer(out, cap, VTL_E_NOTFOUND, msg, NULL);
		return;
	}
	if (r->given[CTLPROTO_OPT_DRIVE] && !l) {
		snprintf(msg, sizeof msg, "a drive number belongs to one library: name it with library NAME");
		jo_answer(out, cap, VTL_E_INVAL, msg, NULL);
		return;
	}
	if (r->given[CTLPROTO_OPT_DRIVE] && r->option[CTLPROTO_OPT_DRIVE] >= l->lib->drives) {
		snprintf(msg, sizeof msg, "%s has drives 0..%u", l->pc->name, l->lib->drives - 1);
		jo_answer(out, cap, VTL_E_INVAL, msg, NULL);
		return;
	}
	enum cat_job_kind kind = r->verb == CTLPROTO_VERIFY ? CAT_JOB_VERIFY
				 : r->verb == CTLPROTO_RECALL ? CAT_JOB_RECALL
							      : CAT_JOB_MIGRATE;
	int drive = r->given[CTLPROTO_OPT_DRIVE] ? (int)r->option[CTLPROTO_OPT_DRIVE] : -1;
	unsigned rate = r->given[CTLPROTO_OPT_RATE] ? (unsigned)r->option[CTLPROTO_OPT_RATE] : 0;
	queue_job(m, kind, r->barcode, drive, rate, r->option[CTLPROTO_OPT_NATIVE] != 0, r->library, out, cap);
}

static void req_hint(struct migd *m, const struct ctlproto_request *r, char *out, size_t cap)
{
	host_hint(m, r->verb == CTLPROTO_WAKE, r->barcode, out, cap);
}

/*
 * vtld's report of what its hosts move (about every second while they move
 * data, once when they stop): noted, and with pool_rate = auto one step of
 * the probe (migrator/ingest.h), which rests when hosts are idle.
 */
static void req_ingest(struct migd *m, const struct ctlproto_request *r, char *out, size_t cap)
{
	uint64_t mbs = r->given[CTLPROTO_OPT_RATE] ? r->option[CTLPROTO_OPT_RATE] : 0;
	uint64_t now = vtl_mono_ms();
	bool before = ingest_host(&m->ingest, now) > 0;
	ingest_note(&m->ingest, now, mbs * (uint64_t)MB);
	unsigned pool = atomic_load(&m->pool_rate);
	if (pool == VTL_CFG_POOL_RATE_AUTO) {
		uint64_t floors[VTL_CFG_MAX_PHYS_LIBS * PHYS_MAX_DRIVES];
		unsigned n;
		uint64_t sum = copy_floors(m, floors, VTL_ARRAY_SIZE(floors), &n), reading = copies_reading(m);
		lock(m);
		if (!before)
			m->probe = (struct ingest_auto){0}; /* hosts came (or vtld came back): start at the floors */
		unsigned drops = m->probe.drops;
		uint64_t b = ingest_auto_step(&m->probe, now, mbs * (uint64_t)MB, reading, sum);
		bool dropped = m->probe.drops != drops;
		uint64_t ref = m->probe.ref_bps;
		unlock(m);
		atomic_store(&m->probe_budget, b);
		if (dropped)
			log_info("hosts move %llu MB/s, below their %.0f MB/s before: the %u copies' budget is cut to %.0f "
				 "MB/s (at least their floors, %.1f)", (unsigned long long)mbs, (double)ref / MB, n,
				 (double)b / MB, (double)sum / MB);
	}
	if (before != (mbs > 0) && pool == VTL_CFG_POOL_RATE_AUTO)
		log_info(mbs ? "hosts move %llu MB/s: copies start at their floors and probe what the pool gives "
			       "(pool_rate auto), copy_floor %u"
			     : "hosts stopped moving data (%llu MB/s): copies read at their own rate again; pool_rate auto, "
			       "copy_floor %u",
			 (unsigned long long)mbs, atomic_load(&m->copy_floor));
	else if (before != (mbs > 0) && pool)
		log_info(mbs ? "hosts move %llu MB/s: copies read what is left of pool_rate %u MB/s, each at least its "
			       "drive's lowest matched speed and copy_floor %u"
			     : "hosts stopped moving data (%llu MB/s): copies read at their own rate again; pool_rate %u, "
			       "copy_floor %u",
			 (unsigned long long)mbs, pool, atomic_load(&m->copy_floor));
	jo_answer(out, cap, VTL_OK, NULL, "noted");
}

static void req_jobs(struct migd *m, const struct ctlproto_request *r, char *out, size_t cap)
{
	(void)r;
	jobs_answer(m, out, cap);
}

static void req_cancel(struct migd *m, const struct ctlproto_request *r, char *out, size_t cap)
{
	cancel_job(m, r->job, out, cap);
}

static void req_scan(struct migd *m, const struct ctlproto_request *r, char *out, size_t cap)
{
	(void)r;
	scan(m, out, cap);
}

static void req_physical(struct migd *m, const struct ctlproto_request *r, char *out, size_t cap)
{
	libs_answer(m, r->library, physical_head, physical_lib, out, cap);
}

static void req_drives(struct migd *m, const struct ctlproto_request *r, char *out, size_t cap)
{
	libs_answer(m, r->library, drives_head, drives_lib, out, cap);
}

static void req_policy(struct migd *m, const struct ctlproto_request *r, char *out, size_t cap)
{
	bool force = r->flags & CTLPROTO_FLAG_FORCE;
	if (r->verb == CTLPROTO_POLICY)
		policy_request(m, "policy", 0, "", "", out, cap);
	else
		policy_request(m, "release", force ? 2 : 1, r->barcode, force ? "force" : "", out, cap);
}

static void req_reload(struct migd *m, const struct ctlproto_request *r, char *out, size_t cap)
{
	(void)r;
	char msg[2048];
	int rc = migd_reload(m, msg, sizeof msg);
	jo_answer(out, cap, rc, msg, msg);
}

static const request_fn requests[CTLPROTO_VERBS] = {
	[CTLPROTO_MIGRATE] = req_job,       [CTLPROTO_VERIFY] = req_job,   [CTLPROTO_RECALL] = req_job,
	[CTLPROTO_WAKE] = req_hint,         [CTLPROTO_YIELD] = req_hint,   [CTLPROTO_JOBS] = req_jobs,
	[CTLPROTO_CANCEL] = req_cancel,     [CTLPROTO_SCAN] = req_scan,    [CTLPROTO_PHYSICAL] = req_physical,
	[CTLPROTO_DRIVES] = req_drives,
	[CTLPROTO_POLICY] = req_policy,     [CTLPROTO_RELEASE] = req_policy,  [CTLPROTO_INGEST] = req_ingest,
	[CTLPROTO_MIGRATOR_RELOAD] = req_reload,
};

/* vtl_reload's apply, for the keys vtl_reload_keys_migrator (config/reload.c) reloads: nothing here can
 * fail, so all of next applies. */
static int apply_reload(void *arg, struct vtl_config *next)
{
	struct migd *m = arg;
	int level = log_level_parse(next->migrator.log_level);
	log_set_level(level < 0 ? LOG_LEVEL_INFO : (enum log_level)level);
	set_rates(m, next);
	policyd_set(m->policy, &next->policy);
	vtl_config_free(m->applied);
	m->applied = next; /* what the next reload compares with */
	return VTL_OK;
}

int migd_reload(struct migd *m, char *msg, size_t cap)
{
	char name[CAT_NAME_MAX + 32];
	snprintf(name, sizeof name, "copies go to %s%s", m->libs[0].pc->name, m->nlibs > 1 ? " and more" : "");
	struct vtl_reload r = {.keys = &vtl_reload_keys_migrator, .apply = apply_reload, .arg = m, .name = name,
			       .busy = &m->reloading};
	return vtl_reload(m->applied ? m->applied : m->cfg, &r, msg, cap);
}

void migd_answer(struct migd *m, const char *request, char *out, size_t cap)
{
	struct ctlproto_request r;
	char err[512];
	if (ctlproto_parse(request, strlen(request), CTLPROTO_MIGRATOR, &r, err, sizeof err) != VTL_OK)
		jo_answer(out, cap, VTL_E_INVAL, err, NULL);
	else
		requests[r.verb](m, &r, out, cap);
}

static void handle(void *arg, const char *request, char *out, size_t cap)
{
	migd_answer(arg, request, out, cap);
}

/* ------------------------------------------------------- start and stop */

static int open_physical(const struct vtl_physical_config *c, struct phys_lib **out, char *err, size_t errlen)
{
	if (!strcmp(c->type, "sim")) {
		struct phys_sim_config sc = {.generation = c->generation, .drives = c->drives, .slots = c->slots,
					     .mail_slots = c->mail_slots, .tapes = c->tapes, .capacity = c->tape_capacity,
					     .buffer = c->drive_buffer, .rate_mbs = c->rate, .backhitch_ms = c->backhitch_ms,
					     .load_ms = c->load_ms, .locate_ms = c->locate_ms, .prefix = c->prefix,
					     .data_dir = c->keep_data ? c->data_dir : NULL};
		return phys_sim_open(&sc, out, err, errlen);
	}
	if (!strcmp(c->type, "st")) {
		struct phys_st_config sc = {.changer = c->changer, .drives = c->st_drives};
		for (unsigned d = 0; d < c->st_drives; d++) {
			sc.drive[d] = c->drive[d];
			sc.drive_sg[d] = d < c->st_drive_sgs ? c->drive_sg[d] : NULL;
		}
		return phys_st_open(&sc, out, err, errlen);
	}
	struct phys_iscsi_config ic = {.portal = c->portal, .target_iqn = c->target, .initiator_iqn = c->initiator,
				       .chap_user = c->chap_user, .chap_secret = c->chap_secret,
				       .mutual_user = c->mutual_user, .mutual_secret = c->mutual_secret};
	return phys_iscsi_open(&ic, out, err, errlen);
}

/* Jobs a crash left running run again. */
static int requeue(const struct cat_job *j, void *arg)
{
	struct migd *m = arg;
	int rc = catalog_job_update(m->cat, j->id, CAT_JOB_QUEUED, 0, NULL);
	if (rc != VTL_OK) {
		log_error("job %lld (%s %s) was running when the migrator stopped, and cannot be queued again: %s",
			  (long long)j->id, kind_names[j->kind], j->barcode, catalog_last_error(m->cat));
		return rc; /* the start fails: a migrator that cannot record its jobs must not run them */
	}
	log_info("job %lld (%s %s) was running when the migrator stopped: queued again", (long long)j->id,
		 kind_names[j->kind], j->barcode);
	return 0;
}

/*
 * How many of library l's drives run jobs, and how many of them are kept for
 * recalls; err says what does not fit. [migrator] drives counts each
 * library's: with several, one that has fewer uses all of its own.
 */
static int plan_drives(struct migd *m, struct mlib *l, char *err, size_t errlen)
{
	const struct vtl_config *c = m->cfg;
	unsigned have = l->lib->drives < PHYS_MAX_DRIVES ? l->lib->drives : PHYS_MAX_DRIVES;
	if (c->migrator.drives > have && m->cfg->physicals == 1) {
		snprintf(err, errlen, "[migrator] drives = %u: %s has %u drives", c->migrator.drives, l->pc->name, have);
		return VTL_E_CONFIG;
	}
	l->ndrives = c->migrator.drives && c->migrator.drives < have ? c->migrator.drives : have;
	if (c->migrator.recall_drives >= l->ndrives) {
		snprintf(err, errlen, "[migrator] recall_drives = %u must be below the %u drives that run jobs%s%s: copies "
			 "need a drive too", c->migrator.recall_drives, l->ndrives, m->nlibs > 1 ? " in " : "",
			 m->nlibs > 1 ? l->pc->name : "");
		return VTL_E_CONFIG;
	}
	l->recall_drives = c->migrator.recall_drives;
	return VTL_OK;
}

/* [policy] copy_pools, those library l keeps: a copy there goes to the first without a good copy. */
static void lib_copies(const struct vtl_config *c, struct mlib *l)
{
	l->copies = c->policy;
	l->copies.copy_pools = 0;
	for (unsigned i = 0; i < c->policy.copy_pools; i++)
		if (vtl_config_library_serves(l->pc, c->policy.copy_pool[i]))
			snprintf(l->copies.copy_pool[l->copies.copy_pools++], sizeof l->copies.copy_pool[0], "%s",
				 c->policy.copy_pool[i]);
	/* A library asked for by name that keeps no copy pool: its own first pool. */
	if (!l->copies.copy_pools) {
		snprintf(l->copies.copy_pool[0], sizeof l->copies.copy_pool[0], "%s",
			 l->pc->pools ? l->pc->pool[0] : CAT_POOL_DEFAULT);
		l->copies.copy_pools = 1;
	}
}

/* Opens library i of the configuration with its drives' plan, and adds its new tapes to the catalog. */
static int open_lib(struct migd *m, unsigned i, char *err, size_t errlen)
{
	struct mlib *l = &m->libs[i];
	int rc = open_physical(l->pc, &l->lib, err, errlen);
	if (rc == VTL_OK)
		rc = plan_drives(m, l, err, errlen);
	unsigned added = 0;
	if (rc == VTL_OK && (rc = scan_lib(m, l, &added, err, errlen)) == VTL_OK && added)
		log_info("%u tapes of %s added to the catalog", added, l->pc->name);
	if (rc == VTL_OK) {
		/* The simulated drive's model says its own; a real drive's comes from its generation's published figure. */
		bool estimated = false;
		double min = l->lib->min_matched_mbs > 0 ? l->lib->min_matched_mbs
							 : phys_lto_min_matched_mbs(l->pc->generation, &estimated);
		l->min_matched_bps = min > 0 ? (uint64_t)(min * MB) : 1;
		log_info("%u drives of %s run jobs, %u of them kept for recalls; a copy is never held below %.1f MB/s, "
			 "5 %% above %.1f MB/s, the lowest speed its drives match (%s)", l->ndrives, l->pc->name,
			 l->recall_drives, min * INGEST_FLOOR_MARGIN, min,
			 l->lib->min_matched_mbs > 0 ? "the simulated drive's model"
			 : estimated			? "an estimate: a third of the generation's native rate"
							: "the generation's published figure");
	}
	return rc;
}

/* Starts a runner per drive of each library, then the dispatcher. */
static int start_threads(struct migd *m)
{
	for (unsigned li = 0; li < m->nlibs; li++)
		for (unsigned d = 0; d < m->libs[li].ndrives; d++) {
			struct runner *r = &m->libs[li].run[d];
			if (pthread_create(&r->th, NULL, runner_main, r) != 0)
				return VTL_E_NOMEM;
			r->th_started = true;
		}
	if (pthread_create(&m->dispatcher, NULL, dispatcher_main, m) != 0)
		return VTL_E_NOMEM;
	m->dispatcher_started = true;
	return VTL_OK;
}

int migd_start(const struct vtl_config *cfg, struct migd **out, char *err, size_t errlen)
{
	if (!vtl_config_has_physical(cfg)) {
		snprintf(err, errlen, "%s has no [physical] section: name the library copies go to (docs/migrator.md)",
			 cfg->path);
		return VTL_E_CONFIG;
	}
	struct migd *m = calloc(1, sizeof *m);
	if (!m)
		return VTL_E_NOMEM;
	m->cfg = cfg;
	set_rates(m, cfg);
	atomic_flag_clear(&m->reloading);
	pthread_mutex_init(&m->mu, NULL);
	/* Its idle and tape waits are monotonic deadlines. */
	bool conds = vtl_cond_init_mono(&m->wake) == 0;
	if (conds && vtl_cond_init_mono(&m->tapes) != 0) {
		pthread_cond_destroy(&m->wake);
		conds = false;
	}
	if (!conds) {
		pthread_mutex_destroy(&m->mu);
		free(m);
		snprintf(err, errlen, "cannot set up a condition variable on the monotonic clock");
		return VTL_E_NOMEM;
	}
	m->nlibs = cfg->physicals;
	for (unsigned li = 0; li < m->nlibs; li++) {
		struct mlib *l = &m->libs[li];
		l->m = m;
		l->index = li;
		l->pc = &cfg->physical[li];
		pthread_mutex_init(&l->robot, NULL);
		l->robot_init = true;
		lib_copies(cfg, l);
		for (unsigned d = 0; d < PHYS_MAX_DRIVES; d++) {
			l->run[d].m = m;
			l->run[d].l = l;
			l->run[d].drive = d;
			pthread_cond_init(&l->run[d].go, NULL);
		}
	}
	int rc = catalog_open(cfg->catalog.path, false, &m->cat, err, errlen);
	if (rc == VTL_OK) {
		struct vtl_pool_config pc;
		vtl_config_pool(cfg, &pc);
		rc = vtl_pool_open(&pc, &m->pool, err, errlen);
	}
	for (unsigned li = 0; rc == VTL_OK && li < m->nlibs; li++)
		rc = open_lib(m, li, err, errlen);
	if (rc == VTL_OK && (rc = catalog_job_list(m->cat, CAT_JOB_RUNNING, requeue, m)) != VTL_OK)
		snprintf(err, errlen, "queueing again the jobs a stop interrupted: %s", catalog_last_error(m->cat));
	if (rc == VTL_OK)
		rc = policyd_create(m->cat, m->pool, cfg, &m->policy);
	if (rc == VTL_OK) {
		struct ctlsock_config sc = {.path = cfg->migrator.control_socket, .group = cfg->migrator.control_group.name,
					    .gid = cfg->migrator.control_group.gid, .daemon = "vtl-migrator",
					    .handler = handle, .arg = m};
		rc = ctlsock_start(&sc, &m->sock, err, errlen);
	}
	if (rc == VTL_OK && (rc = start_threads(m)) != VTL_OK)
		snprintf(err, errlen, "cannot start the job threads");
	if (rc) {
		migd_stop(m);
		return rc;
	}
	*out = m;
	return VTL_OK;
}

void migd_stop(struct migd *m)
{
	if (!m)
		return;
	ctlsock_stop(m->sock);
	lock(m);
	m->stopping = true;
	for (unsigned li = 0; li < m->nlibs; li++)
		for (unsigned d = 0; d < m->libs[li].ndrives; d++) {
			atomic_store(&m->libs[li].run[d].cancel, true);
			pthread_cond_signal(&m->libs[li].run[d].go);
		}
	pthread_cond_signal(&m->wake);
	pthread_cond_broadcast(&m->tapes);
	unlock(m);
	if (m->dispatcher_started)
		pthread_join(m->dispatcher, NULL);
	for (unsigned li = 0; li < m->nlibs; li++)
		for (unsigned d = 0; d < m->libs[li].ndrives; d++)
			if (m->libs[li].run[d].th_started)
				pthread_join(m->libs[li].run[d].th, NULL);
	policyd_destroy(m->policy);
	vtl_config_free(m->applied);
	for (unsigned li = 0; li < m->nlibs; li++) {
		struct mlib *l = &m->libs[li];
		if (l->lib)
			l->lib->ops->close(l->lib);
		for (unsigned d = 0; d < PHYS_MAX_DRIVES; d++)
			pthread_cond_destroy(&l->run[d].go);
		if (l->robot_init)
			pthread_mutex_destroy(&l->robot);
	}
	if (m->pool)
		vtl_pool_close(m->pool);
	if (m->cat)
		catalog_close(m->cat);
	pthread_cond_destroy(&m->tapes);
	pthread_cond_destroy(&m->wake);
	pthread_mutex_destroy(&m->mu);
	free(m);
}
