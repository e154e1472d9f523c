/* SPDX-License-Identifier: Apache-2.0 */
#include "vtl/vtld/control.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/clock.h"
#include "common/grow.h"
#include "common/ctlsock.h"
#include "common/jsonout.h"
#include "common/log.h"
#include "common/vtl_error.h"
#include "catalog/catalog.h"
#include "config/config.h"
#include "vtl/library/library.h"
#include "vtl/tcmu/front.h"
#include "vtl/library/throttle.h"
#include "vtl/vtld/daemon.h"

#define SAMPLE_MS 1000         /* how often the drives' byte counters are sampled for MB/s */
#define MB 1e6

static const char *state_name(enum ssc_state st)
{
	switch (st) {
	case SSC_LOADED: return "loaded";
	case SSC_EJECTED: return "ejected";
	case SSC_CLEANING: return "cleaning";
	case SSC_STAGING: return "staging";
	default: return "empty";
	}
}

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
	}
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
		    "\"write_buffer_bytes\":%llu,\"prevent\":%s}",
		    k > 1 ? "," : "", lus[i].lun, address, state_name(st.state), st.barcode,
		    (unsigned long long)st.object, (unsigned long long)st.file, (unsigned long long)st.eod,
		    (unsigned long long)st.written_bytes, (unsigned long long)st.read_bytes,
		    meter_rate(&vtld_meters(v, i)->written) / MB, meter_rate(&vtld_meters(v, i)->read) / MB,
		    (unsigned long long)st.readahead_ready, (unsigned long long)st.readahead_limit,
		    (unsigned long long)st.unsynced_bytes, st.prevent ? "true" : "false");
	}
	struct throttle_state ts;
	throttle_state(vtld_throttle(v), &ts);
	jo_printf(out, cap, &at, "],\"pool\":{\"fill_percent\":%.1f,\"throttle\":%u,\"throttled\":%s,"
		  "\"throttle_rate\":%u}", ts.fill, ts.threshold, ts.active ? "true" : "false", ts.rate);
	struct tcmu_front *tf = vtld_tcmu(v);
	if (tf)
		jo_printf(out, cap, &at, ",\"tcmu\":{\"devices\":%u}", tcmu_front_devices(tf));
	jo_printf(out, cap, &at, "}");
}

#define OPERATOR "operator" /* the actor the event log and the attentions name */

/* A decimal element address, or -1. */
static long address_of(const char *s)
{
	char *end;
	long a = strtol(s, &end, 10);
	return *s && !*end && a >= 0 && a < CAT_NO_ELEMENT ? a : -1;
}

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
 * The operator's requests (vtlctl sends them while vtld runs):
 *   move FROM TO          FROM an address or a barcode in the library
 *   load WHAT DRIVE       WHAT a barcode or an address
 *   unload DRIVE [SLOT]   back to its source slot unless SLOT
 *   import BARCODE [IE]   from outside into a mail slot (the first empty one unless IE)
 *   export IE             out of the library from a mail slot
 * They go through the library model as the changer's commands do.
 */
static void operator_request(struct vtld *v, const char *word, int argc, char args[][64], char *out, size_t cap)
{
	struct vtl_library *lib = vtld_library(v);
	char err[512] = "", done[256] = "";
	int rc = VTL_E_INVAL;
	long a0 = argc > 0 ? address_of(args[0]) : -1, a1 = argc > 1 ? address_of(args[1]) : -1;
	if (!strcmp(word, "move") && argc == 2 && a1 >= 0) {
		long from = a0;
		if (from < 0) {
			struct cat_cartridge c;
			if (catalog_cartridge_get(vtld_catalog(v), args[0], &c) != VTL_OK || c.element == CAT_NO_ELEMENT)
				snprintf(err, sizeof err, "there is no cartridge %s in the library", args[0]);
			else
				from = c.element;
		}
		if (from >= 0 && (rc = library_move(lib, (uint16_t)from, (uint16_t)a1, OPERATOR, err, sizeof err)) == VTL_OK)
			snprintf(done, sizeof done, "moved from %ld to %ld", from, a1);
	} else if (!strcmp(word, "load") && argc == 2 && a1 >= 0) {
		if ((rc = library_load(lib, args[0], (uint16_t)a1, OPERATOR, err, sizeof err)) == VTL_OK)
			snprintf(done, sizeof done, "loaded %s into drive %ld", args[0], a1);
	} else if (!strcmp(word, "unload") && (argc == 1 || argc == 2) && a0 >= 0 && (argc == 1 || a1 >= 0)) {
		uint16_t slot = argc == 2 ? (uint16_t)a1 : CAT_NO_ELEMENT;
		if ((rc = library_unload(lib, (uint16_t)a0, slot, OPERATOR, err, sizeof err)) == VTL_OK)
			snprintf(done, sizeof done, "unloaded drive %ld", a0);
	} else if (!strcmp(word, "import") && (argc == 1 || argc == 2) && (argc == 1 || a1 >= 0)) {
		struct first_empty f = {.address = a1};
		if (argc == 1)
			library_elements(lib, CAT_ELEM_IE, first_empty, &f);
		if (f.address < 0) {
			rc = VTL_E_DST_FULL;
			snprintf(err, sizeof err, "all mail slots are full");
		} else if ((rc = library_import(lib, args[0], (uint16_t)f.address, OPERATOR, err, sizeof err)) == VTL_OK) {
			snprintf(done, sizeof done, "imported %s into mail slot %ld", args[0], f.address);
		}
	} else if (!strcmp(word, "export") && argc == 1 && a0 >= 0) {
		if ((rc = library_export(lib, (uint16_t)a0, OPERATOR, err, sizeof err)) == VTL_OK)
			snprintf(done, sizeof done, "took the cartridge in mail slot %ld out of the library", a0);
	} else {
		snprintf(err, sizeof err, "usage: move FROM TO | load WHAT DRIVE | unload DRIVE [SLOT] | import BARCODE "
					  "[IE] | export IE");
	}
	jo_answer(out, cap, rc, err, done);
}

void control_answer(struct vtld *v, const char *request, char *out, size_t cap)
{
	char word[32] = "";
	char args[3][64];
	int n = sscanf(request, "%31s %63s %63s %63s", word, args[0], args[1], args[2]);
	if (strcmp(word, "status") == 0) {
		status(v, out, cap);
		return;
	}
	static const char *const ops[] = {"move", "load", "unload", "import", "export"};
	for (size_t i = 0; i < VTL_ARRAY_SIZE(ops); i++)
		if (strcmp(word, ops[i]) == 0) {
			operator_request(v, word, n > 0 ? n - 1 : 0, args, out, cap);
			return;
		}
	size_t at = 0;
	jo_printf(out, cap, &at, "{\"ok\":false,\"error\":\"unknown request '");
	jo_str(out, cap, &at, word);
	jo_printf(out, cap, &at, "'\"}");
}

static void handle(void *arg, const char *request, char *out, size_t cap)
{
	control_answer(arg, request, out, cap);
}

static void tick(void *arg)
{
	sample_drives(arg, false);
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
