/* SPDX-License-Identifier: Apache-2.0 */
#include "vtl/vtld/control.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "common/clock.h"
#include "common/ctlproto.h"
#include "common/ctlsock.h"
#include "common/jsonout.h"
#include "common/lockorder.h"
#include "common/log.h"
#include "common/vtl_error.h"
#include "catalog/catalog.h"
#include "config/config.h"
#include "vtl/library/library.h"
#include "vtl/tcmu/front.h"
#include "vtl/library/throttle.h"
#include "vtl/vtld/daemon.h"

#define SAMPLE_MS 1000         /* how often the drives' byte counters are sampled for MB/s */
#define INGEST_TIMEOUT_MS 250  /* the control thread waits no longer for a migrator that does not answer */
#define MB 1e6

/* Samples every drive's byte counters, at most once per SAMPLE_MS unless forced (a status asked). */
static void sample_drives(struct vtld *v, bool force)
{
	unsigned n;
	struct vtl_lu *lus = vtld_lus(v, &n);
	uint64_t t = vtl_mono_ms();
	for (unsigned i = 0; i < n; i++) {
		struct vtld_meters *m = vtld_meters(v, i);
		if (strcmp(lus[i].what, "drive") != 0 || (!force && meter_age(&m->written, t) < SAMPLE_MS))
			continue;
		struct ssc_status st;
		ssc_status_now(lus[i].dev, &st);
		meter_sample(&m->written, t, st.written_bytes);
		meter_sample(&m->read, t, st.read_bytes);
		/* A counter below what was seen: a new load began at 0 since the last sample. */
		m->moved_total += st.written_bytes >= m->seen_written ? st.written_bytes - m->seen_written : st.written_bytes;
		m->moved_total += st.read_bytes >= m->seen_read ? st.read_bytes - m->seen_read : st.read_bytes;
		m->seen_written = st.written_bytes;
		m->seen_read = st.read_bytes;
		meter_sample(&m->moved, t, m->moved_total);
	}
}

/*
 * What the hosts move through every drive, per second over the last few
 * (the meter's span): a host that loads, writes and unloads in turn still
 * counts between its writes; one that stops counts as stopped a few seconds later.
 */
static void measure_ingest(struct vtld *v)
{
	unsigned n;
	struct vtl_lu *lus = vtld_lus(v, &n);
	double bps = 0;
	for (unsigned i = 0; i < n; i++)
		if (strcmp(lus[i].what, "drive") == 0)
			bps += meter_rate(&vtld_meters(v, i)->moved);
	vtld_ingest(v)->host_bps = bps;
}

/*
 * Host ingest first (docs/migrator.md): tells vtl-migrator what the hosts
 * move, every second while they move anything and once when they stop, so
 * that its copies read the pool only with what is left. A migrator that is
 * not running, or does not answer soon, is tried again at the next tick.
 */
/* What the hosts move now, in whole MB/s as the ingest hint carries it (rounded up: a trickle counts). */
static unsigned ingest_mbs(const struct vtld_ingest *g)
{
	double mbs = g->host_bps / MB;
	return mbs >= CTLPROTO_RATE_MAX ? CTLPROTO_RATE_MAX : (unsigned)(mbs + 0.999);
}

/* Tells the migrator at path (NULL: none) that the hosts move mbs, unless mbs and the last report are 0. True when told. */
static bool report_ingest(const char *path, unsigned mbs, unsigned last)
{
	if (!path || (mbs == 0 && last == 0)) /* nobody to tell; or quiet, and said so */
		return false;
	struct ctlproto_request r = {.verb = CTLPROTO_INGEST};
	r.given[CTLPROTO_OPT_RATE] = true;
	r.option[CTLPROTO_OPT_RATE] = mbs;
	char req[CTLSOCK_REQUEST_MAX], ans[256], err[256];
	if (ctlproto_format(&r, req, sizeof req, err, sizeof err) != VTL_OK) {
		log_debug("cannot tell vtl-migrator the hosts' rate: %s", err);
		return false;
	}
	int rc = ctlsock_exchange(path, req, ans, sizeof ans, INGEST_TIMEOUT_MS);
	if (rc != VTL_OK)
		log_debug("telling vtl-migrator \"%s\": %s", req, vtl_strerror(rc));
	return rc == VTL_OK;
}

static void status(struct vtld *v, char *out, size_t cap)
{
	sample_drives(v, true);
	size_t at = 0;
	struct vtl_library *lib = vtld_library(v);
	jo_printf(out, cap, &at, "{\"ok\":true,\"library\":\"%s\",\"drives\":[", library_info(lib)->name);
	unsigned n;
	struct vtl_lu *lus = vtld_lus(v, &n);
	for (unsigned i = 0, k = 0; i < n; i++) {
		if (strcmp(lus[i].what, "drive") != 0)
			continue;
		uint16_t address = 0;
		library_drive(lib, k++, &address);
		struct ssc_status st;
		ssc_status_now(lus[i].dev, &st);
		jo_printf(out, cap, &at,
		    "%s{\"lun\":%u,\"address\":%u,\"state\":\"%s\",\"barcode\":\"%s\",\"position\":%llu,"
		    "\"file\":%llu,\"eod\":%llu,\"written_bytes\":%llu,\"read_bytes\":%llu,"
		    "\"write_mb_s\":%.1f,\"read_mb_s\":%.1f,\"read_buffer_bytes\":%llu,\"read_buffer_size\":%llu,"
		    "\"read_direct_bytes\":%llu,\"write_direct_bytes\":%llu,\"write_buffer_bytes\":%llu,\"compression\":\"%s\",\"prevent\":%s}",
		    k > 1 ? "," : "", lus[i].lun, address, ssc_state_name(st.state), st.barcode,
		    (unsigned long long)st.object, (unsigned long long)st.file, (unsigned long long)st.eod,
		    (unsigned long long)st.written_bytes, (unsigned long long)st.read_bytes,
		    meter_rate(&vtld_meters(v, i)->written) / MB, meter_rate(&vtld_meters(v, i)->read) / MB,
		    (unsigned long long)st.readahead_ready, (unsigned long long)st.readahead_limit,
		    (unsigned long long)st.readahead_direct, (unsigned long long)st.written_direct,
		    (unsigned long long)st.unsynced_bytes, st.compression ? st.compression : "-",
		    st.prevent ? "true" : "false");
	}
	struct throttle_state ts;
	throttle_state(vtld_throttle(v), &ts);
	struct vtld_ingest *g = vtld_ingest(v);
	jo_printf(out, cap, &at, "],\"ingest\":{\"host_mb_s\":%.1f,\"reported_mb_s\":%u,\"migrator\":%s}",
		  g->host_bps / MB, g->last_mbs, g->migrator ? "true" : "false");
	jo_printf(out, cap, &at, ",\"pool\":{\"fill_percent\":%.1f,\"throttle\":%u,\"throttled\":%s,"
		  "\"throttle_rate\":%u}", ts.fill, ts.threshold, ts.active ? "true" : "false", ts.rate);
	struct tcmu_front *tf = vtld_tcmu(v);
	if (tf)
		jo_printf(out, cap, &at, ",\"tcmu\":{\"devices\":%u}", tcmu_front_devices(tf));
	jo_printf(out, cap, &at, "}");
}

#define OPERATOR "operator" /* the actor the event log and the attentions name */

_Static_assert(CTLPROTO_ELEMENT_MAX < CAT_NO_ELEMENT, "a request's element address is never the catalog's 'none'");

/* The first empty element of type, or -1. */
struct first_empty {
	long address;
};

static int first_empty(const struct library_element *le, void *arg)
{
	struct first_empty *f = arg;
	if (le->e.full)
		return 0;
	f->address = le->e.address;
	return 1;
}

/*
 * The operator's requests (vtlctl sends them while vtld runs; their grammar is
 * common/ctlproto.c's table). They go through the library model as the
 * changer's commands do; each writes what it did, or why not, into done or err.
 */
typedef int (*operator_fn)(struct vtl_library *lib, struct vtl_catalog *cat, const struct ctlproto_request *r,
			   char *done, size_t donelen, char *err, size_t errlen);

static int op_move(struct vtl_library *lib, struct vtl_catalog *cat, const struct ctlproto_request *r, char *done,
		   size_t donelen, char *err, size_t errlen)
{
	uint16_t from = r->item.address, to = r->element[0];
	if (!r->item.is_address) {
		struct cat_cartridge c;
		if (catalog_cartridge_get(cat, r->item.barcode, &c) != VTL_OK || c.element == CAT_NO_ELEMENT) {
			snprintf(err, errlen, "there is no cartridge %s in the library", r->item.barcode);
			return VTL_E_INVAL;
		}
		from = c.element;
	}
	int rc = library_move(lib, from, to, OPERATOR, err, errlen);
	if (rc == VTL_OK)
		snprintf(done, donelen, "moved from %u to %u", from, to);
	return rc;
}

static int op_load(struct vtl_library *lib, struct vtl_catalog *cat, const struct ctlproto_request *r, char *done,
		   size_t donelen, char *err, size_t errlen)
{
	(void)cat;
	char what[VTL_BARCODE_MAX + 1];
	if (r->item.is_address)
		snprintf(what, sizeof what, "%u", r->item.address);
	else
		snprintf(what, sizeof what, "%s", r->item.barcode);
	int rc = library_load(lib, what, r->element[0], OPERATOR, err, errlen);
	if (rc == VTL_OK)
		snprintf(done, donelen, "loaded %s into drive %u", what, r->element[0]);
	return rc;
}

static int op_unload(struct vtl_library *lib, struct vtl_catalog *cat, const struct ctlproto_request *r, char *done,
		     size_t donelen, char *err, size_t errlen)
{
	(void)cat;
	uint16_t slot = r->elements == 2 ? r->element[1] : CAT_NO_ELEMENT; /* back to its source slot unless SLOT */
	int rc = library_unload(lib, r->element[0], slot, OPERATOR, err, errlen);
	if (rc == VTL_OK)
		snprintf(done, donelen, "unloaded drive %u", r->element[0]);
	return rc;
}

static int op_import(struct vtl_library *lib, struct vtl_catalog *cat, const struct ctlproto_request *r, char *done,
		     size_t donelen, char *err, size_t errlen)
{
	(void)cat;
	struct first_empty f = {.address = r->elements ? r->element[0] : -1};
	if (!r->elements) /* the first empty mail slot unless IE */
		library_elements(lib, CAT_ELEM_IE, first_empty, &f);
	if (f.address < 0) {
		snprintf(err, errlen, "all mail slots are full");
		return VTL_E_DST_FULL;
	}
	int rc = library_import(lib, r->barcode, (uint16_t)f.address, OPERATOR, err, errlen);
	if (rc == VTL_OK)
		snprintf(done, donelen, "imported %s into mail slot %ld", r->barcode, f.address);
	return rc;
}

static int op_export(struct vtl_library *lib, struct vtl_catalog *cat, const struct ctlproto_request *r, char *done,
		     size_t donelen, char *err, size_t errlen)
{
	(void)cat;
	int rc = library_export(lib, r->element[0], OPERATOR, err, errlen);
	if (rc == VTL_OK)
		snprintf(done, donelen, "took the cartridge in mail slot %u out of the library", r->element[0]);
	return rc;
}

static const operator_fn operators[CTLPROTO_VERBS] = {
	[CTLPROTO_MOVE] = op_move,     [CTLPROTO_LOAD] = op_load,     [CTLPROTO_UNLOAD] = op_unload,
	[CTLPROTO_IMPORT] = op_import, [CTLPROTO_EXPORT] = op_export,
};

static void answer(struct vtld *v, const char *request, char *out, size_t cap)
{
	struct ctlproto_request r;
	char err[512] = "", done[256] = "";
	int rc = ctlproto_parse(request, strlen(request), CTLPROTO_VTLD, &r, err, sizeof err);
	if (rc == VTL_OK && r.verb == CTLPROTO_STATUS) {
		status(v, out, cap);
		return;
	}
	if (rc == VTL_OK && r.verb == CTLPROTO_RELOAD) {
		char msg[2048];
		rc = vtld_reload(v, msg, sizeof msg);
		jo_answer(out, cap, rc, msg, msg);
		return;
	}
	if (rc == VTL_OK)
		rc = operators[r.verb](vtld_library(v), vtld_catalog(v), &r, done, sizeof done, err, sizeof err);
	jo_answer(out, cap, rc, err, done);
}

void control_answer(struct vtld *v, const char *request, char *out, size_t cap)
{
	vtl_lock(vtld_control_mu(v), VTL_LOCK_CONTROL);
	answer(v, request, out, cap);
	vtl_unlock(vtld_control_mu(v), VTL_LOCK_CONTROL);
}

static void handle(void *arg, const char *request, char *out, size_t cap)
{
	control_answer(arg, request, out, cap);
}

static void tick(void *arg)
{
	vtl_lock(vtld_control_mu(arg), VTL_LOCK_CONTROL);
	sample_drives(arg, false);
	measure_ingest(arg);
	unsigned mbs = ingest_mbs(vtld_ingest(arg)), last = vtld_ingest(arg)->last_mbs;
	vtl_unlock(vtld_control_mu(arg), VTL_LOCK_CONTROL);
	/* Not under the lock: a migrator slow to answer must not hold up vtlctl or HTTP answers. */
	if (report_ingest(vtld_ingest(arg)->migrator, mbs, last)) {
		vtl_lock(vtld_control_mu(arg), VTL_LOCK_CONTROL);
		vtld_ingest(arg)->last_mbs = mbs;
		vtl_unlock(vtld_control_mu(arg), VTL_LOCK_CONTROL);
	}
}

bool control_answers(const char *path)
{
	return ctlsock_answers(path);
}

int control_start(const char *path, const struct vtl_cfg_group *group, struct vtld *v, struct ctlsock **out, char *err,
		  size_t errlen)
{
	struct ctlsock_config c = {.path = path, .group = group->name, .gid = group->gid, .daemon = "vtld",
				   .handler = handle, .tick = tick, .tick_ms = SAMPLE_MS, .arg = v};
	return ctlsock_start(&c, out, err, errlen);
}

void control_stop(struct ctlsock *c)
{
	ctlsock_stop(c);
}
