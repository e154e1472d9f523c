/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The migrator's commands: physical tapes (list, add), migrate, verify,
 * jobs and cancel. Jobs are queued through vtl-migrator when it runs (it
 * starts them at once and knows their live progress), or in the catalog
 * when it does not (it runs them when it starts).
 */
#include <ctype.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/vtl_error.h"
#include "vtl/ctl/ctl.h"

#define ANSWER_MAX 65536

/* ------------------------------------------------------------- physical */

/* A pool name as [policy] copy_pools takes it. */
static bool pool_name_ok(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n > CAT_NAME_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && !strchr("._-", s[i]))
			return false;
	return true;
}

/*
 * --library NAME (opt; not set: NULL) as the configuration names its
 * physical libraries: *lib the one named, else the first. VTLCTL_USAGE
 * (reported) for a name the configuration does not have.
 */
static int library_opt(struct ctl *ctl, const struct ctl_opt *opt, const struct vtl_physical_config **lib)
{
	const struct vtl_config *c = ctl->cfg;
	*lib = c->physicals ? &c->physical[0] : NULL;
	if (!opt || !opt->set)
		return 0;
	if ((*lib = vtl_config_physical_named(c, opt->val)) != NULL)
		return 0;
	char names[256] = "";
	size_t at = 0;
	for (unsigned i = 0; i < c->physicals && at < sizeof names; i++) {
		int w = snprintf(names + at, sizeof names - at, "%s%s", i ? ", " : "", c->physical[i].name);
		at += w > 0 ? (size_t)w : 0;
	}
	return ctl_usage(ctl, c->physicals ? "--library %.64s: %s has no such physical library; its libraries are %s"
					   : "--library %.64s: %s has no physical library%s", opt->val, c->path, names);
}

struct pt_walk {
	struct ctl *ctl;
	struct table t;
	struct json j;
};

static int pt_row(const struct cat_ptape *p, void *arg)
{
	struct pt_walk *w = arg;
	if (w->ctl->json) {
		json_obj(&w->j, NULL);
		json_str(&w->j, "barcode", p->barcode);
		json_str(&w->j, "library", p->library);
		json_str(&w->j, "pool", p->pool);
		json_i64(&w->j, "slot", p->slot);
		json_str(&w->j, "state", p->state);
		json_u64(&w->j, "files", p->files);
		json_u64(&w->j, "used", p->used);
		json_u64(&w->j, "capacity", p->capacity);
		json_obj_end(&w->j);
		return 0;
	}
	char used[32], cap[32], slot[16], files[16];
	fmt_bytes(p->used, used, sizeof used);
	fmt_bytes(p->capacity, cap, sizeof cap);
	snprintf(slot, sizeof slot, p->slot >= 0 ? "%d" : "-", p->slot);
	snprintf(files, sizeof files, "%u", p->files);
	return table_add(&w->t, p->barcode, p->library, p->pool, slot, p->state, files, used, cap);
}

int cmd_physical_list(struct ctl *ctl, int argc, char **argv)
{
	int rc = ctl_parse_bare(ctl, argc, argv);
	if (rc || (rc = ctl_open_library(ctl)))
		return rc;
	struct pt_walk w = {.ctl = ctl};
	static const char *const head[] = {"BARCODE", "LIBRARY", "POOL", "SLOT", "STATE", "FILES", "USED", "CAPACITY"};
	table_init(&w.t, 8, head, "LLLRLRRR");
	if (ctl->json) {
		json_init(&w.j, stdout);
		json_obj(&w.j, NULL);
		json_arr(&w.j, "tapes");
	}
	rc = catalog_ptape_list(ctl->cat, pt_row, &w);
	if (ctl->json) {
		json_arr_end(&w.j);
		json_obj_end(&w.j);
		json_end(&w.j);
	} else if (!rc) {
		table_print(&w.t, stdout);
	}
	table_free(&w.t);
	return rc ? ctl_cat_err(ctl, rc, "listing the physical tapes") : 0;
}

int cmd_physical_add(struct ctl *ctl, int argc, char **argv)
{
	struct ctl_opt opts[] = {
		{"barcode", 0, true, NULL, false},
		{"capacity", 0, true, NULL, false},
		{"pool", 0, true, NULL, false},
		{"library", 0, true, NULL, false},
	};
	char **pos;
	int npos;
	int rc = ctl_parse(ctl, argc, argv, opts, 4, &pos, &npos);
	if (rc)
		return rc;
	if (npos)
		return ctl_usage(ctl, "unexpected argument '%s'", pos[0]);
	const struct vtl_physical_config *lib;
	if ((rc = ctl_load_config(ctl)) || (rc = library_opt(ctl, &opts[3], &lib)))
		return rc;
	char msg[512];
	if (opts[2].set && (!opts[0].set || !pool_name_ok(opts[2].val)))
		return ctl_usage(ctl, opts[0].set ? "--pool '%.40s': give a name of up to %d letters, digits, '.', '_' or '-'"
						  : "--pool goes with --barcode (put scanned tapes in a pool with "
						    "'vtlctl physical pool')", opts[2].val, CAT_NAME_MAX);
	if (!opts[0].set) {
		/* The library's own inventory: only vtl-migrator, which has it open, can read it. */
		if (!ctl_migrator_up(ctl))
			return ctl_err(ctl, VTLCTL_FAIL, "vtl-migrator is not running: start it to add the tapes of the "
				       "physical library, or name one with --barcode BC --capacity SIZE");
		if ((rc = ctl_request(ctl, &(struct ctlproto_request){.verb = CTLPROTO_SCAN}, msg, sizeof msg)))
			return rc;
		printf("%s\n", msg);
		return 0;
	}
	uint64_t capacity = 0;
	if (!opts[1].set || vtl_parse_size(opts[1].val, true, &capacity) || capacity == 0)
		return ctl_usage(ctl, "--barcode needs --capacity SIZE (e.g. 18T for an LTO-9 tape)");
	if ((rc = ctl_open_library(ctl)))
		return rc;
	struct cat_ptape t = {.slot = -1, .capacity = capacity};
	snprintf(t.barcode, sizeof t.barcode, "%s", opts[0].val);
	snprintf(t.library, sizeof t.library, "%s", lib ? lib->name : "physical");
	snprintf(t.state, sizeof t.state, "scratch");
	/* Not named: the library's first pool, where its scanned tapes go too. */
	snprintf(t.pool, sizeof t.pool, "%s", opts[2].set ? opts[2].val : lib && lib->pools ? lib->pool[0] : CAT_POOL_DEFAULT);
	if ((rc = catalog_ptape_add(ctl->cat, &t)))
		return ctl_cat_err(ctl, rc, "adding physical tape %s", t.barcode);
	printf("added physical tape %s of %s to pool %s (scratch)\n", t.barcode, t.library, t.pool);
	return 0;
}

int cmd_physical_pool(struct ctl *ctl, int argc, char **argv)
{
	char **pos;
	int npos;
	int rc = ctl_parse(ctl, argc, argv, NULL, 0, &pos, &npos);
	if (rc)
		return rc;
	if (npos < 2)
		return ctl_usage(ctl, "give a pool and one or more physical tapes: physical pool POOL BARCODE...");
	if (!pool_name_ok(pos[0]))
		return ctl_usage(ctl, "pool '%.40s': give a name of up to %d letters, digits, '.', '_' or '-'", pos[0],
				 CAT_NAME_MAX);
	if ((rc = ctl_open_library(ctl)))
		return rc;
	for (int i = 1; i < npos; i++) {
		if ((rc = catalog_ptape_set_pool(ctl->cat, pos[i], pos[0])))
			return ctl_cat_err(ctl, rc, "putting %s in pool %s", pos[i], pos[0]);
		printf("%s is in pool %s\n", pos[i], pos[0]);
	}
	return 0;
}

/*
 * What physical inventory and physical drives share: the option --library
 * NAME, the refusal when vtl-migrator does not run (what: what it holds),
 * and the request verb with the library named, whose answer is in answer
 * (cap bytes). 0 with *printed set when --json printed it; else
 * VTLCTL_USAGE or VTLCTL_FAIL (reported).
 */
static int physical_query(struct ctl *ctl, int argc, char **argv, enum ctlproto_verb verb, const char *what,
			  char *answer, size_t cap, bool *printed)
{
	struct ctl_opt opts[] = {{"library", 0, true, NULL, false}};
	char **pos;
	int npos;
	int rc = ctl_parse(ctl, argc, argv, opts, 1, &pos, &npos);
	if (rc)
		return rc;
	if (npos)
		return ctl_usage(ctl, "unexpected argument '%s'", pos[0]);
	const struct vtl_physical_config *lib;
	if ((rc = ctl_load_config(ctl)) || (rc = library_opt(ctl, &opts[0], &lib)))
		return rc;
	if (!ctl_migrator_up(ctl))
		return ctl_err(ctl, VTLCTL_FAIL, "vtl-migrator is not running (nothing answers on %s): it holds %s",
			       ctl->cfg->migrator.control_socket, what);
	struct ctlproto_request r = {.verb = verb};
	if (opts[0].set)
		snprintf(r.library, sizeof r.library, "%s", lib->name);
	return ctl_query(ctl, &r, answer, cap, printed);
}

int cmd_physical_inventory(struct ctl *ctl, int argc, char **argv)
{
	static char answer[ANSWER_MAX];
	bool printed;
	int rc = physical_query(ctl, argc, argv, CTLPROTO_PHYSICAL, "the physical libraries", answer, sizeof answer,
				&printed);
	if (rc || printed)
		return rc;
	static const char *const head[] = {"LIBRARY", "ADDRESS", "TYPE", "BARCODE", "USE"};
	struct table t;
	table_init(&t, 5, head, "LRLLL");
	for (const char *e = strstr(answer, "{\"address\""); e; e = strstr(e + 1, "{\"address\"")) {
		char addr[16], type[16], bc[48], state[16] = "", use[64] = "", library[CAT_NAME_MAX + 1];
		snprintf(addr, sizeof addr, "%llu", ans_u64(e, "address"));
		ans_text(e, "library", library, sizeof library);
		ans_text(e, "type", type, sizeof type);
		ans_text(e, "barcode", bc, sizeof bc);
		const char *end = strchr(e, '}');
		const char *st = strstr(e, "\"state\":");
		if (st && end && st < end) /* a drive: busy with a job, idle, or unused by the migrator */
			ans_text(e, "state", state, sizeof state);
		if (!strcmp(state, "busy")) {
			char jk[16];
			ans_text(e, "job_kind", jk, sizeof jk);
			snprintf(use, sizeof use, "drive %llu: busy, job %llu (%s)", ans_u64(e, "drive"), ans_u64(e, "job"), jk);
		} else if (state[0]) {
			snprintf(use, sizeof use, "drive %llu: %s", ans_u64(e, "drive"), state);
		}
		table_add(&t, library, addr, type, bc[0] ? bc : "-", use);
	}
	table_print(&t, stdout);
	table_free(&t);
	return 0;
}

/* The object of a daemon's answer that starts at e, up to its '}' (it holds no object), into buf: its keys only. */
static void ans_object(const char *e, char *buf, size_t cap)
{
	const char *end = strchr(e, '}');
	size_t n = end ? (size_t)(end - e) + 1 : strlen(e);
	if (n >= cap)
		n = cap - 1;
	memcpy(buf, e, n);
	buf[n] = 0;
}

int cmd_physical_drives(struct ctl *ctl, int argc, char **argv)
{
	static char answer[ANSWER_MAX];
	bool printed;
	int rc = physical_query(ctl, argc, argv, CTLPROTO_DRIVES, "the physical drives and their jobs", answer,
				sizeof answer, &printed);
	if (rc || printed)
		return rc;
	static const char *const head[] = {"LIBRARY", "DRIVE", "STATE", "JOB", "KIND", "CARTRIDGE", "TAPE", "MB/s",
					   "RING", "WAITS", "BACK-HITCHES"};
	struct table t;
	table_init(&t, 11, head, "LRLRLLLRRRR");
	for (const char *e = strstr(answer, "{\"library\""); e; e = strstr(e + 1, "{\"library\"")) {
		char o[2048], library[CAT_NAME_MAX + 1], drive[16], state[16], tape[48], job[24] = "-", kind[16] = "-",
			      bc[48] = "-", mbs[16] = "-", ring[48] = "-", waits[48] = "-", bh[32] = "-";
		ans_object(e, o, sizeof o);
		ans_text(o, "library", library, sizeof library);
		snprintf(drive, sizeof drive, "%llu", ans_u64(o, "drive"));
		ans_text(o, "state", state, sizeof state);
		ans_text(o, "tape", tape, sizeof tape);
		if (strstr(o, "\"job\":")) {
			char ringb[32];
			snprintf(job, sizeof job, "%llu", ans_u64(o, "job"));
			ans_text(o, "job_kind", kind, sizeof kind);
			ans_text(o, "barcode", bc, sizeof bc);
			snprintf(mbs, sizeof mbs, "%.1f", ans_real(o, "mb_s"));
			fmt_bytes(ans_u64(o, "ring_bytes"), ringb, sizeof ringb);
			snprintf(ring, sizeof ring, "%llu/%llu (%s)", ans_u64(o, "ring_full"), ans_u64(o, "ring_buffers"), ringb);
			/* The writer's waits for a full buffer: the drive starved of data (how often, how long). */
			snprintf(waits, sizeof waits, "%llu (%.2f s)", ans_u64(o, "writer_waits"),
				 (double)ans_u64(o, "writer_wait_ms") / 1000.0);
		}
		if (strstr(o, "\"backhitches\":")) /* counted by the drive, or a running job's estimate (~) */
			snprintf(bh, sizeof bh, "%s%llu", strstr(o, "\"backhitches_counted\":true") ? "" : "~",
				 ans_u64(o, "backhitches"));
		table_add(&t, library, drive, state, job, kind, bc, tape[0] ? tape : "-", mbs, ring, waits, bh);
	}
	table_print(&t, stdout);
	table_free(&t);
	return 0;
}

/* --------------------------------------------------------------- jobs */

/*
 * Queues the job *r (migrate, verify, recall of r->barcode): through
 * vtl-migrator, or in the catalog when it is not running, with what it
 * asks for (o; NULL: the defaults), which the migrator reads when it
 * starts the job.
 */
static int queue(struct ctl *ctl, const struct ctlproto_request *r, enum cat_job_kind kind,
		 const struct cat_job_opts *o)
{
	char msg[512];
	const char *what = ctlproto_verb(r->verb)->word;
	if (ctl_migrator_up(ctl)) {
		int rc = ctl_request(ctl, r, msg, sizeof msg);
		if (rc)
			return rc;
		printf("%s\n", msg);
		return 0;
	}
	int rc = ctl_open_library(ctl);
	if (rc)
		return rc;
	int64_t id;
	struct cat_job_opts none = {.drive = CAT_JOB_DRIVE_ANY};
	if ((rc = catalog_job_add_opts(ctl->cat, kind, r->barcode, o ? o : &none, &id)))
		return ctl_cat_err(ctl, rc, "queueing a job for %s", r->barcode);
	printf("queued job %" PRId64 ": %s %s%s; vtl-migrator is not running: it runs the job when it starts\n", id, what,
	       r->barcode, o && o->native ? " (native)" : "");
	return 0;
}

int cmd_migrate(struct ctl *ctl, int argc, char **argv)
{
	struct ctl_opt opts[] = {
		{"native", 0, false, NULL, false},
		{"drive", 0, true, NULL, false},
		{"rate", 0, true, NULL, false},
		{"library", 0, true, NULL, false},
	};
	char **pos;
	int npos;
	int rc = ctl_parse(ctl, argc, argv, opts, 4, &pos, &npos);
	if (rc)
		return rc;
	if (npos != 1)
		return ctl_usage(ctl, "give one cartridge barcode");
	if (strlen(pos[0]) > CAT_BARCODE_MAX || vtl_barcode_check(pos[0]))
		return ctl_usage(ctl, "'%.40s' is not a barcode", pos[0]);
	struct ctlproto_request r = {.verb = CTLPROTO_MIGRATE};
	snprintf(r.barcode, sizeof r.barcode, "%s", pos[0]);
	uint64_t *drive = &r.option[CTLPROTO_OPT_DRIVE], *rate = &r.option[CTLPROTO_OPT_RATE];
	if (opts[1].set && vtl_parse_uint(opts[1].val, CTLPROTO_DRIVE_MAX, drive))
		return ctl_usage(ctl, "--drive %s: give a drive number of the physical library, from 0", opts[1].val);
	if (opts[2].set && (vtl_parse_uint(opts[2].val, CTLPROTO_RATE_MAX, rate) || *rate == 0))
		return ctl_usage(ctl, "--rate %s: give MB/s, 1 to %u", opts[2].val, CTLPROTO_RATE_MAX);
	const struct vtl_physical_config *lib;
	if ((rc = ctl_load_config(ctl)) || (rc = library_opt(ctl, &opts[3], &lib)))
		return rc;
	if (opts[3].set)
		snprintf(r.library, sizeof r.library, "%s", lib->name);
	r.given[CTLPROTO_OPT_NATIVE] = opts[0].set;
	r.option[CTLPROTO_OPT_NATIVE] = opts[0].set;
	r.given[CTLPROTO_OPT_DRIVE] = opts[1].set;
	r.given[CTLPROTO_OPT_RATE] = opts[2].set;
	struct cat_job_opts o = {.drive = opts[1].set ? (int)*drive : CAT_JOB_DRIVE_ANY, .rate = (unsigned)*rate,
				 .native = opts[0].set};
	/* Not named, with several libraries: vtl-migrator picks the one that keeps the next copy pool. */
	if (opts[3].set || ctl->cfg->physicals == 1)
		snprintf(o.library, sizeof o.library, "%s", lib ? lib->name : "");
	return queue(ctl, &r, CAT_JOB_MIGRATE, &o);
}

/* A job on one cartridge: verify, recall; --library NAME reads the copies in that library. */
static int barcode_job(struct ctl *ctl, int argc, char **argv, enum ctlproto_verb verb, enum cat_job_kind kind)
{
	const char *barcode;
	struct ctl_opt opts[] = {{"library", 0, true, NULL, false}};
	const struct vtl_physical_config *lib;
	int rc = ctl_parse_barcode_opts(ctl, argc, argv, opts, 1, &barcode);
	if (rc || (rc = library_opt(ctl, &opts[0], &lib)))
		return rc;
	struct ctlproto_request r = {.verb = verb};
	snprintf(r.barcode, sizeof r.barcode, "%s", barcode);
	struct cat_job_opts o = {.drive = CAT_JOB_DRIVE_ANY};
	if (opts[0].set) {
		snprintf(r.library, sizeof r.library, "%s", lib->name);
		snprintf(o.library, sizeof o.library, "%s", lib->name);
	}
	return queue(ctl, &r, kind, &o);
}

int cmd_verify(struct ctl *ctl, int argc, char **argv)
{
	return barcode_job(ctl, argc, argv, CTLPROTO_VERIFY, CAT_JOB_VERIFY);
}

int cmd_recall(struct ctl *ctl, int argc, char **argv)
{
	return barcode_job(ctl, argc, argv, CTLPROTO_RECALL, CAT_JOB_RECALL);
}

static const char *const kinds[] = {"", "migrate", "recall", "verify"};
static const char *const states[] = {"", "queued", "running", "done", "failed"};

struct job_walk {
	struct ctl *ctl;
	struct table t;
	struct json j;
};

static int job_row(const struct cat_job *jb, void *arg)
{
	struct job_walk *w = arg;
	if (w->ctl->json) {
		json_obj(&w->j, NULL);
		json_i64(&w->j, "id", jb->id);
		json_str(&w->j, "kind", kinds[jb->kind]);
		json_str(&w->j, "barcode", jb->barcode);
		json_str(&w->j, "state", states[jb->state]);
		json_u64(&w->j, "bytes", jb->bytes_done);
		json_i64(&w->j, "started", jb->started);
		json_i64(&w->j, "finished", jb->finished);
		json_str(&w->j, "error", jb->error);
		json_str(&w->j, "copy", jb->opts.native ? CAT_COPY_NATIVE : CAT_COPY_STACKED);
		json_i64(&w->j, "asked_drive", jb->opts.drive);
		json_u64(&w->j, "rate", jb->opts.rate);
		json_str(&w->j, "library", jb->opts.library);
		json_obj_end(&w->j);
		return 0;
	}
	char id[24], bytes[32];
	snprintf(id, sizeof id, "%" PRId64, jb->id);
	fmt_bytes(jb->bytes_done, bytes, sizeof bytes);
	return table_add(&w->t, id, kinds[jb->kind], jb->barcode, states[jb->state], bytes, "-", "-", "-", "-",
			 jb->opts.library[0] ? jb->opts.library : "-", "-", jb->error[0] ? jb->error : "");
}

static const char *const job_head[] = {"ID", "KIND", "BARCODE", "STATE", "DONE", "MB/s", "RING", "WAITS W/R", "ETA",
				       "LIBRARY", "DRIVE", "ERROR"};

/* The live figures of a jobs answer's ingest object: what the pool gives both, the copies' budget against their
 * floors, the probe's reference and drops (pool_rate = auto). */
static void ingest_live_line(const char *ingest)
{
	printf("  the pool gives %.1f MB/s: hosts %.1f, copies %.1f; the copies' budget %.1f MB/s, their floors %.1f",
	       ans_real(ingest, "pool_mb_s"), ans_real(ingest, "host_mb_s"), ans_real(ingest, "copies_mb_s"),
	       ans_real(ingest, "budget_mb_s"), ans_real(ingest, "floors_mb_s"));
	if (strstr(ingest, "\"auto\":true"))
		printf("; the hosts' reference %.1f MB/s, %llu drops", ans_real(ingest, "host_ref_mb_s"),
		       ans_u64(ingest, "drops"));
	printf("\n");
}

void ctl_ingest_live(struct ctl *ctl)
{
	static char answer[ANSWER_MAX];
	if (!ctl_migrator_up(ctl) ||
	    ctl_request_raw(ctl, &(struct ctlproto_request){.verb = CTLPROTO_JOBS}, answer, sizeof answer) ||
	    strncmp(answer, "{\"ok\":true", 10) != 0)
		return;
	const char *ingest = strstr(answer, "\"ingest\":{");
	if (ingest)
		ingest_live_line(ingest);
}

/* The jobs as vtl-migrator sees them, the running one with its live figures. */
static int jobs_live(struct ctl *ctl)
{
	static char answer[ANSWER_MAX];
	int rc = ctl_request_raw(ctl, &(struct ctlproto_request){.verb = CTLPROTO_JOBS}, answer, sizeof answer);
	if (rc)
		return rc;
	if (strncmp(answer, "{\"ok\":true", 10) != 0) { /* refused (not this user's socket, busy): not an empty list */
		char e[512];
		ans_text(answer, "error", e, sizeof e);
		return ctl_err(ctl, VTLCTL_FAIL, "%s", e[0] ? e : answer);
	}
	if (ctl->json) {
		printf("%s\n", answer);
		return 0;
	}
	const char *ingest = strstr(answer, "\"ingest\":{");
	bool probed = ingest && strstr(ingest, "\"auto\":true");
	if (ingest && (ans_u64(ingest, "pool_rate") || probed)) {
		double limit = ans_real(ingest, "copy_limit_mb_s");
		printf("host ingest first: hosts move %.1f MB/s; ", ans_real(ingest, "host_mb_s"));
		if (limit > 0)
			printf("each of %llu copies reads at most %.1f MB/s", ans_u64(ingest, "copies"), limit);
		else
			printf("copies are not held back");
		if (probed)
			printf(" (pool_rate auto, copy_floor %llu MB/s)\n", ans_u64(ingest, "copy_floor"));
		else
			printf(" (pool_rate %llu, copy_floor %llu MB/s)\n", ans_u64(ingest, "pool_rate"),
			       ans_u64(ingest, "copy_floor"));
		ingest_live_line(ingest);
	}
	struct table t;
	table_init(&t, 12, job_head, "RLLLRRRRRLRL");
	for (const char *e = strstr(answer, "{\"id\""); e; e = strstr(e + 1, "{\"id\"")) {
		char id[24], kind[16], bc[48], st[16], err[256], done[80], mbs[16] = "-", ring[16] = "-",
										    waits[40] = "-", eta[16] = "-", drive[16] = "-",
										    library[CAT_NAME_MAX + 1];
		snprintf(id, sizeof id, "%llu", ans_u64(e, "id"));
		ans_text(e, "kind", kind, sizeof kind);
		ans_text(e, "barcode", bc, sizeof bc);
		ans_text(e, "state", st, sizeof st);
		ans_text(e, "error", err, sizeof err);
		ans_text(e, "library", library, sizeof library);
		fmt_bytes(ans_u64(e, "bytes"), done, sizeof done);
		const char *end = strchr(e, '}');
		const char *live = strstr(e, "\"mb_s\":");
		if (live && end && live < end) {
			snprintf(mbs, sizeof mbs, "%.1f", ans_real(e, "mb_s"));
			snprintf(ring, sizeof ring, "%llu/%llu", ans_u64(e, "ring_full"), ans_u64(e, "ring_buffers"));
			snprintf(waits, sizeof waits, "%llu/%llu", ans_u64(e, "writer_waits"), ans_u64(e, "reader_waits"));
			snprintf(eta, sizeof eta, "%.0fs", ans_real(e, "eta_s"));
			snprintf(drive, sizeof drive, "%llu", ans_u64(e, "drive"));
			char total[32];
			fmt_bytes(ans_u64(e, "total"), total, sizeof total);
			size_t n = strlen(done);
			snprintf(done + n, sizeof done - n, " of %s", total);
		}
		table_add(&t, id, kind, bc, st, done, mbs, ring, waits, eta, library[0] ? library : "-", drive, err);
	}
	table_print(&t, stdout);
	table_free(&t);
	return 0;
}

int cmd_jobs(struct ctl *ctl, int argc, char **argv)
{
	int rc = ctl_parse_bare(ctl, argc, argv);
	if (rc)
		return rc;
	if (ctl_migrator_up(ctl))
		return jobs_live(ctl);
	if ((rc = ctl_open_library(ctl)))
		return rc;
	struct job_walk w = {.ctl = ctl};
	table_init(&w.t, 12, job_head, "RLLLRRRRRLRL");
	if (ctl->json) {
		json_init(&w.j, stdout);
		json_obj(&w.j, NULL);
		json_arr(&w.j, "jobs");
	}
	rc = catalog_job_list(ctl->cat, CAT_JOB_ANY, job_row, &w);
	if (ctl->json) {
		json_arr_end(&w.j);
		json_obj_end(&w.j);
		json_end(&w.j);
	} else if (!rc) {
		table_print(&w.t, stdout);
	}
	table_free(&w.t);
	return rc ? ctl_cat_err(ctl, rc, "listing the jobs") : 0;
}

int cmd_cancel(struct ctl *ctl, int argc, char **argv)
{
	char **pos;
	int npos;
	int rc = ctl_parse(ctl, argc, argv, NULL, 0, &pos, &npos);
	if (rc)
		return rc;
	uint64_t id;
	if (npos != 1 || vtl_parse_uint(pos[0], CTLPROTO_JOB_MAX, &id) || id == 0)
		return ctl_usage(ctl, "give one job id (see 'vtlctl jobs')");
	if ((rc = ctl_load_config(ctl)))
		return rc;
	if (!ctl_migrator_up(ctl))
		return ctl_err(ctl, VTLCTL_FAIL, "vtl-migrator is not running");
	char msg[512];
	if ((rc = ctl_request(ctl, &(struct ctlproto_request){.verb = CTLPROTO_CANCEL, .job = (int64_t)id}, msg, sizeof msg)))
		return rc;
	printf("%s\n", msg);
	return 0;
}
