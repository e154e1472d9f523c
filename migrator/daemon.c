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
#include "common/ctlsock.h"
#include "common/grow.h"
#include "common/jsonout.h"
#include "common/log.h"
#include "common/vtl_error.h"
#include "migrator/migrate.h"
#include "migrator/phys_iscsi.h"
#include "migrator/phys_st.h"
#include "migrator/policyd.h"

_Static_assert(VTL_CFG_MAX_PHYS_DRIVES <= PHYS_MAX_DRIVES, "[physical] drive lines must fit a phys_st_config");
#include "migrator/phys_sim.h"

#define IDLE_WAIT_S 1          /* the worker looks for queued jobs at least this often */
#define JOBS_SHOWN 100         /* the most recent jobs a "jobs" answer lists */
#define MB 1e6
#define ACTOR "migrator"

/* What the running job is doing, for "jobs". */
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

struct migd {
	const struct vtl_config *cfg;
	struct vtl_catalog *cat;
	struct vtl_pool *pool;
	struct phys_lib *lib;
	pthread_mutex_t lib_mu;   /* one user of the physical library at a time */
	pthread_mutex_t mu;       /* live, stopping, cancel_id */
	pthread_cond_t wake;
	bool stopping;
	pthread_t worker;
	bool worker_started;
	atomic_bool cancel;
	int64_t cancel_id;        /* the job an operator cancelled (it fails instead of being queued again) */
	int64_t preempt_id;       /* the job stopped so that a recall runs first (it is queued again) */
	int64_t yield_id;         /* the job stopped because a host loads its cartridge (it fails; policy retries) */
	struct live live;
	unsigned job_rate;        /* the running job's own rate, MB/s */
	struct ctlsock *sock;
	struct policyd *policy;   /* the cache policy: a pass between jobs, and its requests */
};

static const char *const kind_names[] = {"", "migrate", "recall", "verify"};

/* ------------------------------------------------------------ the rate */

/* Bytes/s the running job may write now: its own rate, else the window's during the window, else [migrator] rate. */
static double rate_now(void *arg)
{
	struct migd *m = arg;
	const struct vtl_config *c = m->cfg;
	if (m->job_rate)
		return m->job_rate * MB;
	unsigned from, to;
	if (c->migrator.window[0] && vtl_config_window(c->migrator.window, &from, &to)) {
		time_t now = time(NULL);
		struct tm tm;
		localtime_r(&now, &tm);
		unsigned min = (unsigned)(tm.tm_hour * 60 + tm.tm_min);
		bool in = from <= to ? min >= from && min < to : min >= from || min < to; /* a window may span midnight */
		if (in)
			return c->migrator.window_rate * MB;
	}
	return c->migrator.rate * MB;
}

/* ------------------------------------------------------------- the worker */

static void on_progress(void *arg, const char *barcode, const struct stream_progress *p)
{
	struct migd *m = arg;
	pthread_mutex_lock(&m->mu);
	snprintf(m->live.barcode, sizeof m->live.barcode, "%s", barcode);
	m->live.bytes = p->bytes;
	m->live.total = p->total;
	m->live.full = p->full;
	m->live.buffers = p->buffers;
	m->live.mbs = p->mbs;
	m->live.c = *p->c;
	pthread_mutex_unlock(&m->mu);
}

/* The job to run next: the oldest recall (a host may be waiting on it), else the oldest job. */
static int first_queued(const struct cat_job *j, void *arg)
{
	struct cat_job *next = arg;
	if (!next->id || (j->kind == CAT_JOB_RECALL && next->kind != CAT_JOB_RECALL))
		*next = *j;
	return j->kind == CAT_JOB_RECALL; /* a positive value stops the walk, which then returns 0 */
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

/* Ends a job that cannot run as it was asked for; VTL_E_INVAL (or the catalog's error). */
static int job_fail(struct migd *m, const struct cat_job *j, char *err)
{
	if (catalog_job_update(m->cat, j->id, CAT_JOB_FAILED, 0, err) != VTL_OK) {
		log_warn("job %lld (%s): cannot record that it failed: %s", (long long)j->id, j->barcode,
			 catalog_last_error(m->cat));
		return VTL_E_IO;
	}
	return VTL_E_INVAL;
}

static void run_job(struct migd *m, const struct cat_job *j)
{
	const struct vtl_config *c = m->cfg;
	struct migrator mig = {.cat = m->cat, .pool = m->pool, .lib = m->lib, .phys_name = c->physical.name,
			       .virt_name = c->library.name, .verify = c->migrator.verify, .drive = j->opts.drive,
			       .copies = &c->policy,
			       .native = j->opts.native,
			       .cancel = &m->cancel, .progress = on_progress, .progress_arg = m};
	mig.ring = (struct stream_config){.buffers = c->migrator.buffers, .buffer_size = (size_t)c->migrator.buffer_size,
					  .watermark = c->migrator.watermark, .readers = c->migrator.readers,
					  .rate_limit = rate_now, .rate_arg = m};
	m->job_rate = j->opts.rate;
	char err[512] = "";
	int rc;
	pthread_mutex_lock(&m->lib_mu);
	if (j->opts.library[0] && strcmp(j->opts.library, c->physical.name) != 0) {
		/* Queued for another library (a catalog shared with another migrator): never written to this one. */
		snprintf(err, sizeof err, "queued for physical library %s; this migrator serves %s", j->opts.library,
			 c->physical.name);
		rc = job_fail(m, j, err);
	} else if (j->opts.drive >= (int)m->lib->drives) {
		snprintf(err, sizeof err, "queued for drive %d; %s has drives 0..%u", j->opts.drive, c->physical.name,
			 m->lib->drives - 1);
		rc = job_fail(m, j, err);
	} else if (j->kind == CAT_JOB_MIGRATE) {
		struct migrate_report r;
		rc = migrate_copy(&mig, j->barcode, j->id, &r, err, sizeof err);
		if (rc == VTL_OK)
			log_info("job %lld: copied %s to %s file %u: %.1f MB/s average, %.1f minimum; writer waited %llu "
				 "times (%llu delays), readers %llu times; back-hitches: %llu %s%s",
				 (long long)j->id, j->barcode, r.tape, r.file, r.copy.counters.avg_mbs, r.copy.counters.min_mbs,
				 (unsigned long long)r.copy.counters.writer_waits,
				 (unsigned long long)r.copy.counters.writer_delays,
				 (unsigned long long)r.copy.counters.reader_waits,
				 (unsigned long long)(r.backhitches_known ? r.backhitches : r.copy.counters.gaps),
				 r.backhitches_known ? "(counted by the drive)" : "(estimated: writer gaps of a second or more)",
				 r.verified ? "; verified" : "");
	} else if (j->kind == CAT_JOB_VERIFY) {
		unsigned n = 0;
		rc = migrate_verify(&mig, j->barcode, j->id, &n, err, sizeof err);
		if (rc == VTL_OK)
			log_info("job %lld: verified %u copies of %s", (long long)j->id, n, j->barcode);
	} else {
		rc = migrate_recall(&mig, j->barcode, j->id, err, sizeof err);
		if (rc == VTL_OK)
			log_info("job %lld: recalled %s", (long long)j->id, j->barcode);
	}
	pthread_mutex_unlock(&m->lib_mu);
	m->job_rate = 0;
	if (rc) {
		pthread_mutex_lock(&m->mu);
		bool by_operator = m->cancel_id == j->id, shutdown = m->stopping && !by_operator;
		bool preempted = m->preempt_id == j->id && !by_operator, yielded = m->yield_id == j->id && !by_operator;
		pthread_mutex_unlock(&m->mu);
		if (rc == VTL_E_BUSY && preempted) {
			job_set(m, j, CAT_JOB_QUEUED, NULL);
			log_info("job %lld: paused for a recall; queued again", (long long)j->id);
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

static void *worker(void *arg)
{
	struct migd *m = arg;
	pthread_mutex_lock(&m->mu);
	while (!m->stopping) {
		struct cat_job j = {0};
		pthread_mutex_unlock(&m->mu);
		policyd_tick(m->policy); /* here no job runs: a pass cannot race one on the same cartridge */
		int rc = catalog_job_list(m->cat, CAT_JOB_QUEUED, first_queued, &j);
		pthread_mutex_lock(&m->mu);
		if (m->stopping)
			break;
		if (rc != VTL_OK || !j.id) {
			struct timespec ts = vtl_mono_deadline_ms(IDLE_WAIT_S * 1000ull);
			(void)pthread_cond_timedwait(&m->wake, &m->mu, &ts); /* ETIMEDOUT is the idle tick */
			continue;
		}
		m->live = (struct live){.running = true, .id = j.id, .kind = j.kind};
		snprintf(m->live.barcode, sizeof m->live.barcode, "%s", j.barcode);
		atomic_store(&m->cancel, false);
		pthread_mutex_unlock(&m->mu);
		run_job(m, &j);
		pthread_mutex_lock(&m->mu);
		m->live.running = false;
	}
	pthread_mutex_unlock(&m->mu);
	return NULL;
}

/* --------------------------------------------------------- the requests */

static void queue_job(struct migd *m, enum cat_job_kind kind, const char *barcode, int drive, unsigned rate,
		      bool native, char *out, size_t cap)
{
	struct cat_cartridge cc;
	int64_t id;
	/* Kept with the job, so that a restart runs it as it was asked for. */
	struct cat_job_opts o = {.drive = drive, .rate = rate, .native = native};
	snprintf(o.library, sizeof o.library, "%s", m->cfg->physical.name);
	int rc = catalog_cartridge_get(m->cat, barcode, &cc);
	if (rc == VTL_OK)
		rc = catalog_job_add_opts(m->cat, kind, barcode, &o, &id);
	if (rc) {
		jo_answer(out, cap, rc, catalog_last_error(m->cat), NULL);
		return;
	}
	pthread_mutex_lock(&m->mu);
	pthread_cond_signal(&m->wake);
	pthread_mutex_unlock(&m->mu);
	char msg[128];
	snprintf(msg, sizeof msg, "queued job %lld: %s %s%s", (long long)id, kind_names[kind], barcode,
		 native ? " (native)" : "");
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
	pthread_mutex_lock(&m->mu);
	struct live lv = m->live;
	pthread_mutex_unlock(&m->mu);
	size_t at = 0;
	jo_printf(out, cap, &at, "{\"ok\":true,\"jobs\":[");
	size_t first = js.n > JOBS_SHOWN ? js.n - JOBS_SHOWN : 0;
	for (size_t i = first; i < js.n; i++) {
		const struct cat_job *j = &js.j[i];
		bool live = lv.running && lv.id == j->id;
		jo_printf(out, cap, &at,
			  "%s{\"id\":%lld,\"kind\":\"%s\",\"barcode\":\"%s\",\"state\":\"%s\",\"bytes\":%llu,"
			  "\"started\":%lld,\"finished\":%lld,\"error\":\"",
			  i > first ? "," : "", (long long)j->id, kind_names[j->kind], j->barcode, state_names[j->state],
			  (unsigned long long)(live ? lv.bytes : j->bytes_done), (long long)j->started,
			  (long long)j->finished);
		jo_str(out, cap, &at, j->error);
		jo_printf(out, cap, &at, "\"");
		if (live) {
			double eta = lv.mbs > 0 && lv.total > lv.bytes ? (double)(lv.total - lv.bytes) / (lv.mbs * MB) : 0;
			jo_printf(out, cap, &at,
				  ",\"total\":%llu,\"mb_s\":%.1f,\"avg_mb_s\":%.1f,\"min_mb_s\":%.1f,\"ring_full\":%u,"
				  "\"ring_buffers\":%u,\"writer_waits\":%llu,\"writer_delays\":%llu,\"reader_waits\":%llu,"
				  "\"eta_s\":%.0f",
				  (unsigned long long)lv.total, lv.mbs, lv.c.avg_mbs, lv.c.min_mbs, lv.full, lv.buffers,
				  (unsigned long long)lv.c.writer_waits, (unsigned long long)lv.c.writer_delays,
				  (unsigned long long)lv.c.reader_waits, eta);
		}
		jo_printf(out, cap, &at, "}");
	}
	jo_printf(out, cap, &at, "]}");
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
		pthread_mutex_lock(&m->mu);
		if (m->live.running && m->live.id == id) {
			m->cancel_id = id;
			atomic_store(&m->cancel, true);
		}
		pthread_mutex_unlock(&m->mu);
		snprintf(msg, sizeof msg, "job %lld is being cancelled", (long long)id);
	} else {
		rc = VTL_E_INVAL;
		snprintf(msg, sizeof msg, "job %lld has already ended (%s)", (long long)id, state_names[j.state]);
	}
	jo_answer(out, cap, rc, msg, msg);
}

/*
 * vtld's hints: "wake" (a host loaded a migrated cartridge; its recall is in
 * the catalog) runs the recall at once, stopping a copy or verify that
 * holds the library; "yield" (a host loads a cartridge a copy is reading)
 * stops that copy.
 */
static int recall_queued(const struct cat_job *j, void *arg)
{
	if (j->kind != CAT_JOB_RECALL)
		return 0;
	*(bool *)arg = true;
	return 1;
}

static void host_hint(struct migd *m, bool wake, const char *barcode, char *out, size_t cap)
{
	bool recall = false;
	/* A hint only: when the catalog cannot tell, nothing is paused and the worker finds the recall itself. */
	if (wake && catalog_job_list(m->cat, CAT_JOB_QUEUED, recall_queued, &recall) != VTL_OK)
		log_debug("wake %s: cannot list the queued jobs: %s", barcode, catalog_last_error(m->cat));
	pthread_mutex_lock(&m->mu);
	const char *msg = "nothing to stop";
	if (m->live.running && m->live.kind != CAT_JOB_RECALL) {
		if (wake && recall) {
			m->preempt_id = m->live.id;
			atomic_store(&m->cancel, true);
			msg = "pausing the running job for the recall";
		} else if (!wake && !strcmp(m->live.barcode, barcode)) {
			m->yield_id = m->live.id;
			atomic_store(&m->cancel, true);
			msg = "stopping the copy of the cartridge";
		}
	}
	pthread_cond_signal(&m->wake);
	pthread_mutex_unlock(&m->mu);
	jo_answer(out, cap, VTL_OK, msg, msg);
}

/* Requests that use the physical library wait for no job: they are refused while one runs. */
static bool lib_try(struct migd *m, char *out, size_t cap)
{
	if (pthread_mutex_trylock(&m->lib_mu) == 0)
		return true;
	jo_answer(out, cap, VTL_E_BUSY, "a job is using the physical library; try again when it ends", NULL);
	return false;
}

static void scan(struct migd *m, char *out, size_t cap)
{
	if (!lib_try(m, out, cap))
		return;
	const struct vtl_config *c = m->cfg;
	uint64_t capacity = c->physical.tape_capacity ? c->physical.tape_capacity
						      : phys_sim_native_capacity(c->physical.generation);
	struct migrator mig = {.cat = m->cat, .lib = m->lib, .phys_name = c->physical.name};
	unsigned added = 0;
	char err[512] = "", msg[128];
	int rc = migrate_scan_tapes(&mig, capacity, &added, err, sizeof err);
	pthread_mutex_unlock(&m->lib_mu);
	snprintf(msg, sizeof msg, "%u new tapes of %s in the catalog", added, c->physical.name);
	jo_answer(out, cap, rc, err, msg);
}

static void physical(struct migd *m, char *out, size_t cap)
{
	if (!lib_try(m, out, cap))
		return;
	static struct phys_element e[4096];
	unsigned n = 0;
	int rc = m->lib->ops->inventory(m->lib, e, 4096, &n);
	char err[PHYS_ERR_MAX];
	snprintf(err, sizeof err, "%s", phys_error(m->lib));
	pthread_mutex_unlock(&m->lib_mu);
	if (rc) {
		jo_answer(out, cap, rc, err, NULL);
		return;
	}
	static const char *const types[] = {"", "transport", "slot", "ie", "drive"};
	size_t at = 0;
	jo_printf(out, cap, &at, "{\"ok\":true,\"library\":\"%s\",\"kind\":\"%s\",\"elements\":[", m->cfg->physical.name,
		  m->lib->ops->kind);
	for (unsigned i = 0; i < n && i < 4096; i++) {
		jo_printf(out, cap, &at, "%s{\"address\":%u,\"type\":\"%s\",\"barcode\":\"", i ? "," : "", e[i].address,
			  types[e[i].type]);
		jo_str(out, cap, &at, e[i].full ? e[i].barcode : "");
		jo_printf(out, cap, &at, "\"}");
	}
	jo_printf(out, cap, &at, "]}");
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

void migd_answer(struct migd *m, const char *request, char *out, size_t cap)
{
	char word[32] = "", a[4][64] = {"", "", "", ""};
	int n = sscanf(request, "%31s %63s %63s %63s %63s", word, a[0], a[1], a[2], a[3]);
	if (!strcmp(word, "migrate") || !strcmp(word, "verify") || !strcmp(word, "recall")) {
		if (n < 2 || vtl_barcode_check(a[0]) != VTL_OK) {
			jo_answer(out, cap, VTL_E_INVAL, "give the cartridge's barcode", NULL);
			return;
		}
		int drive = -1;
		unsigned rate = 0;
		bool native = false;
		for (int i = 1; i + 1 < n; i += 2) {
			char *end;
			long v = strtol(a[i + 1], &end, 10);
			if (*end || v < 0 || (strcmp(a[i], "drive") && strcmp(a[i], "rate") && strcmp(a[i], "native"))) {
				jo_answer(out, cap, VTL_E_INVAL, "options: drive N, rate MB/s, native 1", NULL);
				return;
			}
			if (!strcmp(a[i], "drive"))
				drive = (int)v;
			else if (!strcmp(a[i], "rate"))
				rate = (unsigned)v;
			else
				native = v != 0;
		}
		if (drive >= (int)m->lib->drives) {
			char msg[96];
			snprintf(msg, sizeof msg, "%s has drives 0..%u", m->cfg->physical.name, m->lib->drives - 1);
			jo_answer(out, cap, VTL_E_INVAL, msg, NULL);
			return;
		}
		enum cat_job_kind kind = word[0] == 'v' ? CAT_JOB_VERIFY : word[0] == 'r' ? CAT_JOB_RECALL : CAT_JOB_MIGRATE;
		queue_job(m, kind, a[0], drive, rate, native, out, cap);
	} else if ((!strcmp(word, "wake") || !strcmp(word, "yield")) && n == 2) {
		host_hint(m, word[0] == 'w', a[0], out, cap);
	} else if (!strcmp(word, "jobs")) {
		jobs_answer(m, out, cap);
	} else if (!strcmp(word, "cancel") && n == 2) {
		cancel_job(m, strtoll(a[0], NULL, 10), out, cap);
	} else if (!strcmp(word, "scan")) {
		scan(m, out, cap);
	} else if (!strcmp(word, "physical")) {
		physical(m, out, cap);
	} else if (!strcmp(word, "policy") || !strcmp(word, "release")) {
		policy_request(m, word, n - 1, a[0], a[1], out, cap);
	} else {
		size_t at = 0;
		jo_printf(out, cap, &at, "{\"ok\":false,\"error\":\"unknown request '");
		jo_str(out, cap, &at, word);
		jo_printf(out, cap, &at, "'\"}");
	}
}

static void handle(void *arg, const char *request, char *out, size_t cap)
{
	migd_answer(arg, request, out, cap);
}

/* ------------------------------------------------------- start and stop */

static int open_physical(const struct vtl_config *c, struct phys_lib **out, char *err, size_t errlen)
{
	if (!c->physical.configured) {
		snprintf(err, errlen, "%s has no [physical] section: name the library copies go to (docs/migrator.md)",
			 c->path);
		return VTL_E_CONFIG;
	}
	if (!strcmp(c->physical.type, "sim")) {
		struct phys_sim_config sc = {.generation = c->physical.generation, .drives = c->physical.drives,
					     .slots = c->physical.slots, .mail_slots = c->physical.mail_slots,
					     .tapes = c->physical.tapes, .capacity = c->physical.tape_capacity,
					     .buffer = c->physical.drive_buffer, .rate_mbs = c->physical.rate,
					     .backhitch_ms = c->physical.backhitch_ms, .load_ms = c->physical.load_ms,
					     .locate_ms = c->physical.locate_ms,
					     .data_dir = c->physical.keep_data ? c->physical.data_dir : NULL};
		return phys_sim_open(&sc, out, err, errlen);
	}
	if (!strcmp(c->physical.type, "st")) {
		struct phys_st_config sc = {.changer = c->physical.changer, .drives = c->physical.st_drives};
		for (unsigned d = 0; d < c->physical.st_drives; d++) {
			sc.drive[d] = c->physical.drive[d];
			sc.drive_sg[d] = d < c->physical.st_drive_sgs ? c->physical.drive_sg[d] : NULL;
		}
		return phys_st_open(&sc, out, err, errlen);
	}
	struct phys_iscsi_config ic = {.portal = c->physical.portal, .target_iqn = c->physical.target,
				       .initiator_iqn = c->physical.initiator, .chap_user = c->physical.chap_user,
				       .chap_secret = c->physical.chap_secret, .mutual_user = c->physical.mutual_user,
				       .mutual_secret = c->physical.mutual_secret};
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

int migd_start(const struct vtl_config *cfg, struct migd **out, char *err, size_t errlen)
{
	struct migd *m = calloc(1, sizeof *m);
	if (!m)
		return VTL_E_NOMEM;
	m->cfg = cfg;
	pthread_mutex_init(&m->lib_mu, NULL);
	pthread_mutex_init(&m->mu, NULL);
	if (vtl_cond_init_mono(&m->wake) != 0) { /* its idle waits are monotonic deadlines */
		pthread_mutex_destroy(&m->mu);
		pthread_mutex_destroy(&m->lib_mu);
		free(m);
		snprintf(err, errlen, "cannot set up a condition variable on the monotonic clock");
		return VTL_E_NOMEM;
	}
	int rc = catalog_open(cfg->catalog.path, false, &m->cat, err, errlen);
	if (rc == VTL_OK) {
		struct vtl_pool_config pc;
		vtl_config_pool(cfg, &pc);
		rc = vtl_pool_open(&pc, &m->pool, err, errlen);
	}
	if (rc == VTL_OK)
		rc = open_physical(cfg, &m->lib, err, errlen);
	if (rc == VTL_OK) {
		uint64_t capacity = cfg->physical.tape_capacity ? cfg->physical.tape_capacity
								: phys_sim_native_capacity(cfg->physical.generation);
		struct migrator mig = {.cat = m->cat, .lib = m->lib, .phys_name = cfg->physical.name};
		unsigned added = 0;
		rc = migrate_scan_tapes(&mig, capacity, &added, err, errlen);
		if (rc == VTL_OK && added)
			log_info("%u tapes of %s added to the catalog", added, cfg->physical.name);
	}
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
	if (rc == VTL_OK) {
		if (pthread_create(&m->worker, NULL, worker, m) == 0)
			m->worker_started = true;
		else
			rc = VTL_E_NOMEM;
	}
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
	pthread_mutex_lock(&m->mu);
	m->stopping = true;
	atomic_store(&m->cancel, true);
	pthread_cond_signal(&m->wake);
	pthread_mutex_unlock(&m->mu);
	if (m->worker_started)
		pthread_join(m->worker, NULL);
	policyd_destroy(m->policy);
	if (m->lib)
		m->lib->ops->close(m->lib);
	if (m->pool)
		vtl_pool_close(m->pool);
	if (m->cat)
		catalog_close(m->cat);
	pthread_cond_destroy(&m->wake);
	pthread_mutex_destroy(&m->mu);
	pthread_mutex_destroy(&m->lib_mu);
	free(m);
}
