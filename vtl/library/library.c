/* SPDX-License-Identifier: Apache-2.0 */
#include "vtl/library/library.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cartridge.h"
#include "common/lockorder.h"
#include "common/ctlproto.h"
#include "common/ctlsock.h"
#include "common/log.h"
#include "common/vtl_error.h"
#include "config/config.h"
#include "config/media.h"
#include "vtl/library/drive_store.h"

#define STATE_AVAILABLE "available"
#define STATE_EXPORTED "exported"
#define STATE_LOADED "loaded"     /* in a drive, threaded */
#define STATE_UNLOADED "unloaded" /* in a drive, unloaded by a host: the robot may take it */

struct lib_drive {
	uint16_t address;
	int lun;
	struct scsi_ident ident;
	unsigned gen;               /* LTO generation of its model */
	struct ssc_drive *drive;    /* NULL in an offline model */
};

struct vtl_library {
	pthread_mutex_t mu; /* one move at a time, as one robot makes them */
	struct vtl_catalog *cat;
	struct vtl_pool *pool;
	struct library_options opt;
	struct cat_library info;
	struct lib_drive *drives;
	unsigned ndrives;
	void (*ie_fn)(void *arg);
	void *ie_arg;
	bool ie_open;   /* the mail slot bank is open to the operator: the robot cannot reach it */
	bool prevented; /* a host prevents medium removal: the mail slots stay locked */
};

struct drive_list {
	struct vtl_library *lib;
	int rc;
	char *err;
	size_t errlen;
};

/*
 * The drive threaded or unthreaded a cartridge: the catalog remembers it for
 * a restart, and "loaded" keeps the migrator away from it. A failure fails
 * the host's command (ssc.h).
 */
static int drive_medium(void *arg, const char *barcode, enum ssc_state state)
{
	struct vtl_library *lib = arg;
	const char *word = state == SSC_LOADED ? STATE_LOADED : STATE_UNLOADED;
	int rc = catalog_cartridge_set_state(lib->cat, barcode, word);
	if (rc != VTL_OK)
		log_warn("cannot record that %s is %s: %s", barcode, word, catalog_last_error(lib->cat));
	return rc;
}

/* ------------------------------------------------ migrated cartridges */

#define ACTOR "vtld"
#define MIGRATOR_TIMEOUT_MS 2000 /* a migrator that does not answer soon finds the job in the catalog itself */

struct job_find {
	const char *barcode;
	bool found;
};

static int recall_of(const struct cat_job *j, void *arg)
{
	struct job_find *f = arg;
	if (j->kind == CAT_JOB_RECALL && strcmp(j->barcode, f->barcode) == 0) {
		f->found = true;
		return 1;
	}
	return 0;
}

/* Whether a recall of barcode is queued or running (*pending); a catalog error when it cannot tell. */
static int recall_pending(struct vtl_library *lib, const char *barcode, bool *pending)
{
	struct job_find f = {.barcode = barcode};
	int rc = catalog_job_list(lib->cat, CAT_JOB_RUNNING, recall_of, &f);
	if (rc == VTL_OK && !f.found)
		rc = catalog_job_list(lib->cat, CAT_JOB_QUEUED, recall_of, &f);
	*pending = f.found;
	return rc;
}

/* Tells the migrator something now; it is only a hint: the catalog holds the work. */
static void tell_migrator(struct vtl_library *lib, enum ctlproto_verb verb, const char *barcode)
{
	if (!lib->opt.migrator)
		return;
	struct ctlproto_request r = {.verb = verb};
	char req[CTLSOCK_REQUEST_MAX], ans[512], err[256];
	snprintf(r.barcode, sizeof r.barcode, "%s", barcode);
	if (ctlproto_format(&r, req, sizeof req, err, sizeof err) != VTL_OK) {
		log_debug("cannot tell vtl-migrator about %s: %s", barcode, err);
		return;
	}
	int rc = ctlsock_exchange(lib->opt.migrator, req, ans, sizeof ans, MIGRATOR_TIMEOUT_MS);
	if (rc != VTL_OK)
		log_debug("telling vtl-migrator \"%s\": %s", req, vtl_strerror(rc));
}

static void stage_request(void *arg, const char *barcode)
{
	struct vtl_library *lib = arg;
	bool pending = false;
	/* Not knowing whether one is queued, it queues one: a recall too many finds the cartridge back already. */
	if (recall_pending(lib, barcode, &pending) != VTL_OK || !pending) {
		int64_t id;
		int rc = catalog_job_add(lib->cat, CAT_JOB_RECALL, barcode, &id);
		char what[128];
		if (rc == VTL_OK)
			snprintf(what, sizeof what, "a host loaded migrated cartridge %s: recall queued (job %lld)", barcode,
				 (long long)id);
		else
			snprintf(what, sizeof what, "a host loaded migrated cartridge %s: cannot queue its recall: %.60s",
				 barcode, catalog_last_error(lib->cat));
		/* Best effort: the log line says the same, and the job (or its absence, which ends the stage
		 * FAILED at the next poll) is what the drive acts on. */
		vtl_ignore(catalog_event(lib->cat, ACTOR, what));
		log_info("%s", what);
	}
	tell_migrator(lib, CTLPROTO_WAKE, barcode);
}

static enum ssc_stage stage_poll(void *arg, const char *barcode)
{
	struct vtl_library *lib = arg;
	struct cat_cartridge cc;
	if (catalog_cartridge_get(lib->cat, barcode, &cc) != VTL_OK)
		return SSC_STAGE_RUNNING; /* the catalog is busy: ask again */
	switch (cc.cache) {
	case CAT_CACHE_RECALLING:
	case CAT_CACHE_MIGRATED: {
		/*
		 * Migrated: not started yet, or ended without its data. Recalling with
		 * no recall left: a migrator that could not record the stage's end.
		 */
		bool pending;
		if (recall_pending(lib, barcode, &pending) != VTL_OK)
			return SSC_STAGE_RUNNING; /* cannot tell: ask again (each command's wait has its deadline) */
		return pending ? SSC_STAGE_RUNNING : SSC_STAGE_FAILED;
	}
	default:
		return SSC_STAGE_DONE;
	}
}

static void stage_yield(void *arg, const char *barcode)
{
	tell_migrator(arg, CTLPROTO_YIELD, barcode);
}

/* Before a host's first write: its copies stop being its data. A failure refuses the write (ssc.h). */
static int stage_modify(void *arg, const char *barcode)
{
	struct vtl_library *lib = arg;
	struct cat_cartridge cc;
	unsigned n = 0;
	int rc = catalog_cartridge_get(lib->cat, barcode, &cc);
	if (rc == VTL_OK)
		rc = catalog_cartridge_modified(lib->cat, barcode, &n);
	if (rc != VTL_OK) {
		log_warn("cannot record that a host writes %s: %s", barcode, catalog_last_error(lib->cat));
		return rc;
	}
	if (n || cc.cache != CAT_CACHE_RESIDENT) {
		char what[128];
		snprintf(what, sizeof what, "a host writes %s: %u physical copies invalidated, the cartridge is resident",
			 barcode, n);
		/* Best effort: the change itself is committed; the event only tells an operator, as the log does. */
		vtl_ignore(catalog_event(lib->cat, ACTOR, what));
		log_info("%s", what);
	}
	return VTL_OK;
}

static const struct ssc_stage_ops stage_ops = {
	.request = stage_request, .poll = stage_poll, .yield = stage_yield, .modify = stage_modify,
};

static int add_drive(const struct cat_drive *cd, void *arg)
{
	struct drive_list *dl = arg;
	struct vtl_library *lib = dl->lib;
	unsigned gen = vtl_drive_generation(cd->vendor, cd->model);
	struct ssc_config cfg = {.pool = lib->pool, .early_warning = lib->opt.early_warning,
				 .clean_ms = lib->opt.clean_ms, .on_medium = drive_medium, .on_medium_arg = lib,
				 .stage = &stage_ops, .stage_arg = lib, .stage_wait_ms = lib->opt.stage_wait_ms};
	library_drive_store(&cfg, lib->cat);
	cfg.ident.type = SCSI_TYPE_TAPE;
	snprintf(cfg.ident.vendor, sizeof cfg.ident.vendor, "%s", cd->vendor);
	snprintf(cfg.ident.product, sizeof cfg.ident.product, "%s", cd->model);
	snprintf(cfg.ident.revision, sizeof cfg.ident.revision, "%s", cd->revision);
	snprintf(cfg.ident.serial, sizeof cfg.ident.serial, "%s", cd->serial);
	struct ssc_drive *d = NULL;
	int rc = gen ? VTL_OK : VTL_E_CONFIG;
	if (rc == VTL_OK && !lib->opt.offline)
		rc = ssc_create(&cfg, &d);
	if (rc != VTL_OK) {
		snprintf(dl->err, dl->errlen, "drive %u (%s %s): %s", cd->address, cd->vendor, cd->model,
			 rc == VTL_E_CONFIG ? "not a model this library emulates" : vtl_strerror(rc));
		dl->rc = rc;
		return 1;
	}
	lib->drives[lib->ndrives].address = cd->address;
	lib->drives[lib->ndrives].lun = cd->lun;
	lib->drives[lib->ndrives].ident = cfg.ident;
	lib->drives[lib->ndrives].gen = gen;
	lib->drives[lib->ndrives].drive = d;
	lib->ndrives++;
	return 0;
}

static struct lib_drive *drive_at(struct vtl_library *lib, uint16_t address)
{
	for (unsigned i = 0; i < lib->ndrives; i++)
		if (lib->drives[i].address == address)
			return &lib->drives[i];
	return NULL;
}

/* The medium description the drive gets for a cartridge of the catalog. */
static int medium_of(struct vtl_library *lib, const char *barcode, struct ssc_medium *m)
{
	struct cat_cartridge cc;
	int rc = catalog_cartridge_get(lib->cat, barcode, &cc);
	if (rc != VTL_OK)
		return rc;
	memset(m, 0, sizeof *m);
	snprintf(m->barcode, sizeof m->barcode, "%s", barcode);
	m->write_protected = cc.write_protect;
	m->capacity = cc.capacity;
	m->migrated = cc.cache == CAT_CACHE_MIGRATED || cc.cache == CAT_CACHE_RECALLING;
	m->eod = cc.eod;
	return VTL_OK;
}

/* Records what a load did to the cartridge once it leaves a drive (its end of data: what a stage checks against). */
static int record_usage(struct vtl_library *lib, const char *barcode, const struct ssc_status *st)
{
	struct cat_cartridge cc;
	int rc = catalog_cartridge_get(lib->cat, barcode, &cc);
	/* Bytes written from BOT of this load replace what was there when the tape was rewritten. */
	if (rc == VTL_OK)
		rc = catalog_cartridge_usage(lib->cat, barcode, cc.bytes_written + st->written_bytes, st->stored_bytes,
					     st->eod, false);
	return rc;
}

/* Counts a mount of the cartridge (its bytes stay as they are). */
static int count_mount(struct vtl_library *lib, const char *barcode)
{
	struct cat_cartridge cc;
	int rc = catalog_cartridge_get(lib->cat, barcode, &cc);
	if (rc == VTL_OK)
		rc = catalog_cartridge_usage(lib->cat, barcode, cc.bytes_written, cc.bytes_stored, cc.eod, true);
	return rc;
}

int library_open(struct vtl_catalog *cat, struct vtl_pool *pool, const char *name, const struct library_options *opt,
		 struct vtl_library **out, char *err, size_t errlen)
{
	struct vtl_library *lib = calloc(1, sizeof *lib);
	if (!lib)
		return VTL_E_NOMEM;
	pthread_mutex_init(&lib->mu, NULL);
	lib->cat = cat;
	lib->pool = pool;
	if (opt)
		lib->opt = *opt;
	int rc = catalog_library_get(cat, name, &lib->info);
	if (rc != VTL_OK) {
		snprintf(err, errlen, "library '%s': %s", name, rc == VTL_E_NOTFOUND ? "not in the catalog"
										   : catalog_last_error(cat));
		goto fail;
	}
	lib->drives = calloc(lib->info.drives ? lib->info.drives : 1, sizeof *lib->drives);
	if (!lib->drives) {
		rc = VTL_E_NOMEM;
		goto fail;
	}
	struct drive_list dl = {.lib = lib, .err = err, .errlen = errlen};
	rc = catalog_drive_list(cat, lib->info.id, add_drive, &dl);
	if (rc != VTL_OK && !dl.rc)
		snprintf(err, errlen, "library '%s': listing its drives: %s", name, catalog_last_error(cat));
	if (dl.rc)
		rc = dl.rc;
	if (rc != VTL_OK)
		goto fail;
	/* Cartridges the catalog has in drives go back in, as they were before a restart. */
	for (unsigned i = 0; i < lib->ndrives && !lib->opt.offline; i++) {
		struct cat_element e;
		struct ssc_medium m;
		char why[256];
		if (catalog_element_get(cat, lib->info.id, lib->drives[i].address, &e) != VTL_OK || !e.full)
			continue;
		struct cat_cartridge cc;
		bool unloaded = catalog_cartridge_get(cat, e.barcode, &cc) == VTL_OK && !strcmp(cc.state, STATE_UNLOADED);
		if ((rc = medium_of(lib, e.barcode, &m)) != VTL_OK ||
		    (rc = ssc_insert(lib->drives[i].drive, &m, why, sizeof why)) != VTL_OK) {
			snprintf(err, errlen, "cartridge %s in drive %u: %s", e.barcode, lib->drives[i].address,
				 rc == VTL_OK ? "" : why);
			goto fail;
		}
		/* A host had unloaded it: it waits in the drive for the robot, as before the restart. */
		if (unloaded && (rc = ssc_eject(lib->drives[i].drive)) != VTL_OK) {
			snprintf(err, errlen, "cartridge %s in drive %u: cannot put it back unloaded: %s", e.barcode,
				 lib->drives[i].address, vtl_strerror(rc));
			goto fail;
		}
	}
	*out = lib;
	return VTL_OK;
fail:
	/* The open's own error is what the caller must see; a drive's failed close is logged by the drive. */
	vtl_ignore(library_close(lib));
	return rc;
}

int library_close(struct vtl_library *lib)
{
	if (!lib)
		return VTL_OK;
	int first = VTL_OK;
	for (unsigned i = 0; i < lib->ndrives; i++) {
		struct ssc_status st;
		if (!lib->drives[i].drive)
			continue;
		ssc_status(lib->drives[i].drive, &st);
		int rc = ssc_destroy(lib->drives[i].drive); /* closes (syncs) a loaded cartridge; logs a failure */
		if (first == VTL_OK)
			first = rc;
		/* No host waits on a shutdown: the log tells the operator the catalog's totals are behind. */
		if (st.state != SSC_EMPTY && st.barcode[0] && record_usage(lib, st.barcode, &st) != VTL_OK)
			log_warn("cannot record the usage of %s at shutdown: %s", st.barcode, catalog_last_error(lib->cat));
	}
	free(lib->drives);
	pthread_mutex_destroy(&lib->mu);
	free(lib);
	return first;
}

const struct cat_library *library_info(const struct vtl_library *lib)
{
	return &lib->info;
}

unsigned library_drive_count(const struct vtl_library *lib)
{
	return lib->ndrives;
}

struct ssc_drive *library_drive(struct vtl_library *lib, unsigned i, uint16_t *address)
{
	if (i >= lib->ndrives)
		return NULL;
	if (address)
		*address = lib->drives[i].address;
	return lib->drives[i].drive;
}

struct elem_walk {
	struct vtl_library *lib;
	bool ie_open;
	int (*fn)(const struct library_element *le, void *arg);
	void *arg;
};

static int elem_one(const struct cat_element *e, void *arg)
{
	struct elem_walk *w = arg;
	struct library_element le;
	memset(&le, 0, sizeof le);
	le.e = *e;
	le.accessible = true;
	le.lun = -1;
	if (e->type == CAT_ELEM_IE) {
		le.imported = e->full && e->source == CAT_NO_ELEMENT;
		le.accessible = !w->ie_open;
	}
	struct lib_drive *ld = e->type == CAT_ELEM_DRIVE ? drive_at(w->lib, e->address) : NULL;
	if (ld) {
		struct ssc_status st;
		if (ld->drive) {
			ssc_status_now(ld->drive, &st); /* a drive waiting on a recall must not hold up the changer */
			le.accessible = st.state == SSC_EMPTY || st.removable;
		}
		le.lun = ld->lun;
		le.ident = ld->ident;
	}
	return w->fn(&le, w->arg);
}

int library_elements(struct vtl_library *lib, enum cat_elem_type type,
		     int (*fn)(const struct library_element *le, void *arg), void *arg)
{
	vtl_lock(&lib->mu, VTL_LOCK_LIBRARY);
	struct elem_walk w = {lib, lib->ie_open, fn, arg};
	vtl_unlock(&lib->mu, VTL_LOCK_LIBRARY);
	return catalog_element_list(lib->cat, lib->info.id, type, elem_one, &w);
}

void library_on_ie_change(struct vtl_library *lib, void (*fn)(void *arg), void *arg)
{
	vtl_lock(&lib->mu, VTL_LOCK_LIBRARY);
	lib->ie_fn = fn;
	lib->ie_arg = arg;
	vtl_unlock(&lib->mu, VTL_LOCK_LIBRARY);
}

/* Fetches element a; VTL_E_INVAL with err unless it is a slot, mail slot or drive of the library. */
static int element(struct vtl_library *lib, uint16_t a, struct cat_element *e, char *err, size_t errlen)
{
	int rc = catalog_element_get(lib->cat, lib->info.id, a, e);
	if (rc == VTL_E_NOTFOUND || (rc == VTL_OK && e->type == CAT_ELEM_TRANSPORT)) {
		snprintf(err, errlen, "element %u is not a storage, import/export or drive element", a);
		return VTL_E_INVAL;
	}
	if (rc != VTL_OK)
		snprintf(err, errlen, "catalog: %s", catalog_last_error(lib->cat));
	return rc;
}

/* Fetches element a and refuses it (VTL_E_INVAL) unless it is of type t. */
static int element_of_type(struct vtl_library *lib, uint16_t a, enum cat_elem_type t, struct cat_element *e,
			   char *err, size_t errlen)
{
	int rc = element(lib, a, e, err, errlen);
	if (rc == VTL_OK && e->type != t) {
		snprintf(err, errlen, "element %u is not a %s", a, t == CAT_ELEM_IE ? "mail slot" : "drive");
		rc = VTL_E_INVAL;
	}
	return rc;
}

static bool is_mail_slot(const struct vtl_library *lib, uint16_t a)
{
	return a >= lib->info.ie_first && a - lib->info.ie_first < lib->info.ies;
}

static bool by_operator(const char *actor)
{
	return strcmp(actor, LIBRARY_ACTOR_HOST) != 0;
}

/* The robot cannot reach a mail slot while the bank is open to the operator. */
static int reachable(struct vtl_library *lib, uint16_t a, char *err, size_t errlen)
{
	if (lib->ie_open && is_mail_slot(lib, a)) {
		snprintf(err, errlen, "mail slot %u is open to the operator; the robot cannot reach it until it is closed",
			 a);
		return VTL_E_INACCESSIBLE;
	}
	return VTL_OK;
}

/*
 * One cartridge's part of a robot action: out of from (a drive there gives
 * it up), into to (a drive there loads it).
 */
struct step {
	uint16_t from, to;
	char barcode[CAT_BARCODE_MAX + 1];
	struct lib_drive *sd, *dd;
	struct ssc_medium m;
	struct ssc_status ss; /* the source drive's, as the cartridge left it */
	bool taken, put;
};

/* Checks a step before anything moves: reachable elements, a source drive that let go, a drive that can read it. */
static int step_check(struct vtl_library *lib, struct step *s, char *err, size_t errlen)
{
	int rc;
	if ((rc = reachable(lib, s->from, err, errlen)) || (rc = reachable(lib, s->to, err, errlen)))
		return rc;
	s->sd = drive_at(lib, s->from);
	s->dd = drive_at(lib, s->to);
	if ((rc = medium_of(lib, s->barcode, &s->m)) != VTL_OK) {
		snprintf(err, errlen, "cartridge %s: %s", s->barcode, catalog_last_error(lib->cat));
		return rc;
	}
	if (s->sd && s->sd->drive && !ssc_removable(s->sd->drive)) {
		snprintf(err, errlen, "the drive at %u has %s loaded; it must be unloaded first", s->from, s->barcode);
		return VTL_E_BUSY;
	}
	if (s->dd) {
		struct vtl_label label;
		bool can_write;
		if ((rc = vtl_label_parse(s->barcode, &label, err, errlen)) != VTL_OK)
			return rc;
		if (!vtl_drive_accepts(s->dd->gen, &label, &can_write)) {
			snprintf(err, errlen, "the LTO-%u drive at %u (%s %s) cannot read %s (%s)", s->dd->gen, s->to,
				 s->dd->ident.vendor, s->dd->ident.product, s->barcode,
				 vtl_media_describe(label.media, label.type_m));
			return VTL_E_INCOMPATIBLE;
		}
	}
	return VTL_OK;
}

/* Undoes what steps_run did to the drives: loaded cartridges out, taken ones back, ejected, as they were. */
static void steps_undo(struct step *st, unsigned n, char *err, size_t errlen)
{
	for (unsigned i = 0; i < n; i++) {
		char bc[VTL_LABEL_LEN + 1];
		if (st[i].put && ssc_eject(st[i].dd->drive) == VTL_OK)
			ssc_remove(st[i].dd->drive, bc);
	}
	for (unsigned i = 0; i < n; i++) {
		size_t at = strlen(err);
		if (st[i].taken && ssc_insert(st[i].sd->drive, &st[i].m, err + at, errlen - at) == VTL_OK)
			ssc_eject(st[i].sd->drive);
	}
}

/*
 * Carries out checked steps: source drives give their cartridges up,
 * destination drives load theirs, and last the catalog records the whole
 * action in one transaction (cat_do), so that it never needs undoing;
 * whatever fails, the drives are put back as they were.
 */
static int steps_run(struct vtl_library *lib, struct step *st, unsigned n,
		     int (*cat_do)(struct vtl_library *lib, const struct step *st, const char *actor), const char *actor,
		     char *err, size_t errlen)
{
	int rc = VTL_OK;
	for (unsigned i = 0; i < n && rc == VTL_OK; i++) {
		if (!st[i].sd || !st[i].sd->drive)
			continue;
		char bc[VTL_LABEL_LEN + 1];
		ssc_status(st[i].sd->drive, &st[i].ss);
		if ((rc = ssc_remove(st[i].sd->drive, bc)) != VTL_OK) {
			snprintf(err, errlen, "the drive at %u has %s loaded; it must be unloaded first", st[i].from,
				 st[i].barcode);
			rc = rc == VTL_E_SRC_EMPTY ? VTL_E_SRC_EMPTY : VTL_E_BUSY;
		} else {
			st[i].taken = true;
		}
	}
	for (unsigned i = 0; i < n && rc == VTL_OK; i++) {
		char why[256];
		if (!st[i].dd || !st[i].dd->drive)
			continue;
		if ((rc = ssc_insert(st[i].dd->drive, &st[i].m, why, sizeof why)) != VTL_OK)
			snprintf(err, errlen, "%s", why);
		else
			st[i].put = true;
	}
	/*
	 * What the source drives' loads did is recorded before the move: true
	 * whether or not the move follows, and a failure leaves nothing moved.
	 */
	for (unsigned i = 0; i < n && rc == VTL_OK; i++)
		if (st[i].taken && record_usage(lib, st[i].barcode, &st[i].ss) != VTL_OK) {
			snprintf(err, errlen, "catalog: cannot record the usage of %s: %s", st[i].barcode,
				 catalog_last_error(lib->cat));
			rc = VTL_E_IO; /* the catalog's failure, whatever its code: HARDWARE ERROR for a host */
		}
	if (rc == VTL_OK && (rc = cat_do(lib, st, actor)) != VTL_OK)
		snprintf(err, errlen, "catalog: %s", catalog_last_error(lib->cat));
	if (rc != VTL_OK) {
		steps_undo(st, n, err, errlen);
		return rc;
	}
	/* Moved: a failure from here on is reported (the host sees HARDWARE ERROR), never passed over. */
	for (unsigned i = 0; i < n && rc == VTL_OK; i++) {
		if (st[i].taken && !st[i].put &&
		    catalog_cartridge_set_state(lib->cat, st[i].barcode, STATE_AVAILABLE) != VTL_OK) {
			snprintf(err, errlen, "moved, but the catalog cannot record %s as available: %s", st[i].barcode,
				 catalog_last_error(lib->cat));
			rc = VTL_E_IO;
		} else if (st[i].put && count_mount(lib, st[i].barcode) != VTL_OK) {
			snprintf(err, errlen, "moved, but the catalog cannot count the mount of %s: %s", st[i].barcode,
				 catalog_last_error(lib->cat));
			rc = VTL_E_IO;
		}
	}
	return rc;
}

static int cat_move(struct vtl_library *lib, const struct step *st, const char *actor)
{
	return catalog_move(lib->cat, lib->info.id, st[0].from, st[0].to, actor);
}

/* The move itself, with lib->mu held. */
static int move_locked(struct vtl_library *lib, uint16_t from, uint16_t to, const char *actor, char *err,
		       size_t errlen)
{
	struct cat_element src, dst;
	int rc;
	if ((rc = element(lib, from, &src, err, errlen)) || (rc = element(lib, to, &dst, err, errlen)))
		return rc;
	if (!src.full) {
		snprintf(err, errlen, "element %u is empty", from);
		return VTL_E_SRC_EMPTY;
	}
	if (dst.full) {
		snprintf(err, errlen, "element %u already holds %s", to, dst.barcode);
		return VTL_E_DST_FULL;
	}
	struct step st = {.from = from, .to = to};
	snprintf(st.barcode, sizeof st.barcode, "%s", src.barcode);
	if ((rc = step_check(lib, &st, err, errlen)) != VTL_OK)
		return rc;
	return steps_run(lib, &st, 1, cat_move, actor, err, errlen);
}

/* Begins an action: one at a time, as one robot makes them. */
static void begin(struct vtl_library *lib, char *err)
{
	vtl_lock(&lib->mu, VTL_LOCK_LIBRARY);
	err[0] = 0;
}

/* Ends an action: after a success that touched a mail slot by an operator's hand, the changer is told. */
static int finish(struct vtl_library *lib, int rc, bool operator_touched_ie)
{
	void (*fn)(void *) = rc == VTL_OK && operator_touched_ie ? lib->ie_fn : NULL;
	void *arg = lib->ie_arg;
	vtl_unlock(&lib->mu, VTL_LOCK_LIBRARY);
	if (fn)
		fn(arg);
	return rc;
}

int library_move(struct vtl_library *lib, uint16_t from, uint16_t to, const char *actor, char *err, size_t errlen)
{
	begin(lib, err);
	int rc = move_locked(lib, from, to, actor, err, errlen);
	return finish(lib, rc, by_operator(actor) && (is_mail_slot(lib, from) || is_mail_slot(lib, to)));
}

static int cat_exchange(struct vtl_library *lib, const struct step *st, const char *actor)
{
	return catalog_exchange(lib->cat, lib->info.id, st[0].from, st[0].to, st[1].to, actor);
}

static int exchange_locked(struct vtl_library *lib, uint16_t src, uint16_t dst1, uint16_t dst2, const char *actor,
			   char *err, size_t errlen)
{
	struct cat_element s, d1, d2;
	int rc;
	if ((rc = element(lib, src, &s, err, errlen)) || (rc = element(lib, dst1, &d1, err, errlen)) ||
	    (rc = element(lib, dst2, &d2, err, errlen)))
		return rc;
	if (dst1 == src || dst1 == dst2) {
		snprintf(err, errlen, "the first destination %u must differ from the source and the second destination",
			 dst1);
		return VTL_E_INVAL;
	}
	if (!s.full || !d1.full) {
		snprintf(err, errlen, "element %u is empty", s.full ? dst1 : src);
		return VTL_E_SRC_EMPTY;
	}
	if (d2.full && dst2 != src) {
		snprintf(err, errlen, "element %u already holds %s", dst2, d2.barcode);
		return VTL_E_DST_FULL;
	}
	struct step st[2] = {{.from = src, .to = dst1}, {.from = dst1, .to = dst2}};
	snprintf(st[0].barcode, sizeof st[0].barcode, "%s", s.barcode);
	snprintf(st[1].barcode, sizeof st[1].barcode, "%s", d1.barcode);
	if ((rc = step_check(lib, &st[0], err, errlen)) || (rc = step_check(lib, &st[1], err, errlen)))
		return rc;
	return steps_run(lib, st, 2, cat_exchange, actor, err, errlen);
}

int library_exchange(struct vtl_library *lib, uint16_t src, uint16_t dst1, uint16_t dst2, const char *actor, char *err,
		     size_t errlen)
{
	begin(lib, err);
	int rc = exchange_locked(lib, src, dst1, dst2, actor, err, errlen);
	return finish(lib, rc,
		      by_operator(actor) && (is_mail_slot(lib, src) || is_mail_slot(lib, dst1) || is_mail_slot(lib, dst2)));
}

/* ------------------------------------------------------- the operator's hands */

/* The mail slots are locked while a host prevents medium removal. */
static int unlocked(struct vtl_library *lib, char *err, size_t errlen)
{
	if (lib->prevented) {
		snprintf(err, errlen, "a host prevents medium removal: the mail slots stay locked until it allows it");
		return VTL_E_BUSY;
	}
	return VTL_OK;
}

/* Adds a new blank cartridge, outside every element, to the pool and the catalog. */
static int create_blank(struct vtl_library *lib, const char *barcode, char *err, size_t errlen)
{
	struct vtl_label label;
	int rc = vtl_label_parse(barcode, &label, err, errlen);
	if (rc != VTL_OK)
		return rc;
	if (!lib->pool) {
		snprintf(err, errlen, "there is no cartridge %s, and this offline library has no pool to create it in",
			 barcode);
		return VTL_E_NOTFOUND;
	}
	struct cat_cartridge c;
	memset(&c, 0, sizeof c);
	snprintf(c.barcode, sizeof c.barcode, "%s", barcode);
	c.media = label.media;
	c.capacity = label.capacity;
	snprintf(c.state, sizeof c.state, "%s", STATE_AVAILABLE);
	c.element = CAT_NO_ELEMENT;
	if (!label.cleaning && (rc = vtl_cart_create(lib->pool, barcode)) != VTL_OK) {
		snprintf(err, errlen, "creating %s in the pool: %s", barcode, vtl_strerror(rc));
		return rc;
	}
	if ((rc = catalog_cartridge_add(lib->cat, &c)) != VTL_OK) {
		snprintf(err, errlen, "adding %s to the catalog: %s", barcode, catalog_last_error(lib->cat));
		int drc;
		if (!label.cleaning && (drc = vtl_cart_delete(lib->pool, barcode)) != VTL_OK)
			log_warn("cartridge %s stays in the pool without a catalog entry: %s", barcode, vtl_strerror(drc));
	}
	return rc;
}

static int import_locked(struct vtl_library *lib, const char *barcode, uint16_t ie, const char *actor, char *err,
			 size_t errlen)
{
	struct cat_element e;
	struct cat_cartridge cc;
	int rc;
	if ((rc = element_of_type(lib, ie, CAT_ELEM_IE, &e, err, errlen)) || (rc = unlocked(lib, err, errlen)))
		return rc;
	if (e.full) {
		snprintf(err, errlen, "mail slot %u already holds %s", ie, e.barcode);
		return VTL_E_DST_FULL;
	}
	rc = catalog_cartridge_get(lib->cat, barcode, &cc);
	if (rc == VTL_E_NOTFOUND)
		rc = create_blank(lib, barcode, err, errlen);
	else if (rc != VTL_OK)
		snprintf(err, errlen, "catalog: %s", catalog_last_error(lib->cat));
	else if (cc.element != CAT_NO_ELEMENT || (cc.library_id && cc.library_id != lib->info.id)) {
		snprintf(err, errlen, "cartridge %s is not outside the library (%s %u)", barcode,
			 cc.library_id == lib->info.id ? "in element" : "in another library, element", cc.element);
		rc = VTL_E_EXISTS;
	}
	if (rc != VTL_OK)
		return rc;
	if ((rc = catalog_cartridge_place(lib->cat, barcode, lib->info.id, ie, STATE_AVAILABLE, actor)) != VTL_OK)
		snprintf(err, errlen, "catalog: %s", catalog_last_error(lib->cat));
	return rc;
}

int library_import(struct vtl_library *lib, const char *barcode, uint16_t ie, const char *actor, char *err,
		   size_t errlen)
{
	begin(lib, err);
	int rc = import_locked(lib, barcode, ie, actor, err, errlen);
	return finish(lib, rc, true);
}

static int export_locked(struct vtl_library *lib, uint16_t ie, const char *actor, char *err, size_t errlen)
{
	struct cat_element e;
	int rc;
	if ((rc = element_of_type(lib, ie, CAT_ELEM_IE, &e, err, errlen)) || (rc = unlocked(lib, err, errlen)))
		return rc;
	if (!e.full) {
		snprintf(err, errlen, "mail slot %u is empty", ie);
		return VTL_E_SRC_EMPTY;
	}
	if ((rc = catalog_cartridge_place(lib->cat, e.barcode, 0, CAT_NO_ELEMENT, STATE_EXPORTED, actor)) != VTL_OK)
		snprintf(err, errlen, "catalog: %s", catalog_last_error(lib->cat));
	return rc;
}

int library_export(struct vtl_library *lib, uint16_t ie, const char *actor, char *err, size_t errlen)
{
	begin(lib, err);
	int rc = export_locked(lib, ie, actor, err, errlen);
	return finish(lib, rc, true);
}

/* The element that holds what: a whole decimal number is an element address, anything else a barcode. */
static int locate(struct vtl_library *lib, const char *what, uint16_t *a, char *err, size_t errlen)
{
	uint64_t v;
	if (vtl_parse_uint(what, CAT_NO_ELEMENT - 1, &v) == VTL_OK) { /* "000123L8" is a barcode, "1000" an address */
		*a = (uint16_t)v;
		return VTL_OK;
	}
	struct cat_cartridge cc;
	int rc = catalog_cartridge_get(lib->cat, what, &cc);
	if (rc == VTL_OK && (cc.library_id != lib->info.id || cc.element == CAT_NO_ELEMENT))
		rc = VTL_E_NOTFOUND;
	if (rc == VTL_E_NOTFOUND)
		snprintf(err, errlen, "cartridge %s is not in the library", what);
	else if (rc != VTL_OK)
		snprintf(err, errlen, "catalog: %s", catalog_last_error(lib->cat));
	*a = cc.element;
	return rc;
}

int library_load(struct vtl_library *lib, const char *what, uint16_t drive, const char *actor, char *err,
		 size_t errlen)
{
	begin(lib, err);
	struct cat_element d;
	uint16_t from = CAT_NO_ELEMENT;
	int rc = element_of_type(lib, drive, CAT_ELEM_DRIVE, &d, err, errlen);
	if (rc == VTL_OK && (rc = locate(lib, what, &from, err, errlen)) == VTL_OK)
		rc = move_locked(lib, from, drive, actor, err, errlen);
	return finish(lib, rc, by_operator(actor) && is_mail_slot(lib, from));
}

struct first_empty {
	uint16_t address;
	bool found;
};

static int first_empty_one(const struct cat_element *e, void *arg)
{
	struct first_empty *f = arg;
	if (e->full)
		return 0;
	f->address = e->address;
	f->found = true;
	return 1;
}

/* Where an unloaded cartridge goes: slot if given, else its source if that is an empty slot, else the first empty slot. */
static int unload_target(struct vtl_library *lib, const struct cat_element *d, uint16_t slot, uint16_t *to, char *err,
			 size_t errlen)
{
	struct cat_element e;
	int rc;
	if (slot != CAT_NO_ELEMENT) {
		if ((rc = element(lib, slot, &e, err, errlen)) != VTL_OK)
			return rc;
		if (e.full) {
			snprintf(err, errlen, "element %u already holds %s", slot, e.barcode);
			return VTL_E_DST_FULL;
		}
		*to = slot;
		return reachable(lib, slot, err, errlen);
	}
	if (d->source != CAT_NO_ELEMENT && catalog_element_get(lib->cat, lib->info.id, d->source, &e) == VTL_OK &&
	    e.type == CAT_ELEM_SLOT && !e.full) {
		*to = d->source;
		return VTL_OK;
	}
	struct first_empty f = {0};
	if ((rc = catalog_element_list(lib->cat, lib->info.id, CAT_ELEM_SLOT, first_empty_one, &f)) != VTL_OK) {
		snprintf(err, errlen, "catalog: %s", catalog_last_error(lib->cat));
		return rc;
	}
	if (!f.found) {
		snprintf(err, errlen, "every storage slot is full");
		return VTL_E_DST_FULL;
	}
	*to = f.address;
	return VTL_OK;
}

/*
 * Unloads the drive at drive and moves its cartridge to slot (or its home).
 * *closed gets what the drive's close of the cartridge reported: after a
 * failure there (its last writes could not be made durable) the cartridge
 * is out of the drive all the same, as after a host's UNLOAD, so it is
 * moved, and err says what failed.
 */
static int unload_locked(struct vtl_library *lib, uint16_t drive, uint16_t slot, uint16_t *to, const char *actor,
			 int *closed, char *err, size_t errlen)
{
	struct cat_element d;
	int rc;
	if ((rc = element_of_type(lib, drive, CAT_ELEM_DRIVE, &d, err, errlen)) != VTL_OK)
		return rc;
	if (!d.full) {
		snprintf(err, errlen, "the drive at %u is empty", drive);
		return VTL_E_SRC_EMPTY;
	}
	/* Where it goes is settled before the drive lets go of it. */
	if ((rc = unload_target(lib, &d, slot, to, err, errlen)) != VTL_OK)
		return rc;
	struct lib_drive *ld = drive_at(lib, drive);
	*closed = VTL_OK;
	if (ld && ld->drive && (rc = ssc_eject(ld->drive)) != VTL_OK && rc != VTL_E_SRC_EMPTY) {
		if (rc == VTL_E_BUSY) {
			snprintf(err, errlen, "a host prevents medium removal from the drive at %u", drive);
			return VTL_E_BUSY;
		}
		*closed = rc;
	}
	if ((rc = move_locked(lib, drive, *to, actor, err, errlen)) != VTL_OK || *closed == VTL_OK)
		return rc;
	snprintf(err, errlen,
		 "%s was unloaded to %u, but the drive at %u reported an error as it let go of it (%s): what was "
		 "written after the last synchronizing command may not be durable",
		 d.barcode, *to, drive, vtl_strerror(*closed));
	log_error("unload: %s", err);
	return VTL_OK;
}

int library_unload(struct vtl_library *lib, uint16_t drive, uint16_t slot, const char *actor, char *err,
		   size_t errlen)
{
	begin(lib, err);
	uint16_t to = CAT_NO_ELEMENT;
	int closed = VTL_OK;
	int rc = unload_locked(lib, drive, slot, &to, actor, &closed, err, errlen);
	rc = finish(lib, rc, by_operator(actor) && is_mail_slot(lib, to));
	return rc == VTL_OK ? closed : rc;
}

void library_set_prevent(struct vtl_library *lib, bool prevent)
{
	vtl_lock(&lib->mu, VTL_LOCK_LIBRARY);
	lib->prevented = prevent;
	vtl_unlock(&lib->mu, VTL_LOCK_LIBRARY);
}

/* Sets *arg once an element holds a cartridge. */
static int any_full(const struct cat_element *e, void *arg)
{
	bool *full = arg;
	*full = e->full;
	return e->full;
}

static int ie_open_locked(struct vtl_library *lib, uint16_t ie, bool open, char *err, size_t errlen)
{
	struct cat_element e;
	int rc = element_of_type(lib, ie, CAT_ELEM_IE, &e, err, errlen);
	if (rc != VTL_OK)
		return rc;
	if (open && lib->prevented) {
		bool full = false;
		if ((rc = catalog_element_list(lib->cat, lib->info.id, CAT_ELEM_IE, any_full, &full)) != VTL_OK) {
			snprintf(err, errlen, "catalog: %s", catalog_last_error(lib->cat));
			return rc;
		}
		if (full)
			return unlocked(lib, err, errlen);
	}
	lib->ie_open = open;
	return VTL_OK;
}

int library_ie_set_open(struct vtl_library *lib, uint16_t ie, bool open, const char *actor, char *err, size_t errlen)
{
	begin(lib, err);
	bool was = lib->ie_open;
	int rc = ie_open_locked(lib, ie, open, err, errlen);
	return finish(lib, rc, by_operator(actor) && was != open);
}

bool library_ie_is_open(struct vtl_library *lib)
{
	vtl_lock(&lib->mu, VTL_LOCK_LIBRARY);
	bool open = lib->ie_open;
	vtl_unlock(&lib->mu, VTL_LOCK_LIBRARY);
	return open;
}
