/* SPDX-License-Identifier: Apache-2.0 */
#include "vtl/vtld/metrics.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/pool.h"
#include "catalog/catalog.h"
#include "common/grow.h"
#include "common/promtext.h"
#include "common/scsi_proto.h"
#include "common/vtl_error.h"
#include "vtl/drive/ssc.h"
#include "vtl/iscsi/target.h"
#include "vtl/library/docs.h"
#include "vtl/library/library.h"
#include "vtl/library/throttle.h"
#include "vtl/vtld/daemon.h"

#define PERCENT 100.0
#define MB 1e6
#define CACHE_STATES 4          /* enum cat_cache_state */
#define NUM_TEXT 24             /* a decimal number as a label value */

/* SPC-4 4.5.6, table 27: the sense keys by name, as label values. */
static const char *const sense_keys[LU_SENSE_KEYS] = {
	[SK_NO_SENSE] = "NO SENSE",         [SK_RECOVERED_ERROR] = "RECOVERED ERROR",
	[SK_NOT_READY] = "NOT READY",       [SK_MEDIUM_ERROR] = "MEDIUM ERROR",
	[SK_HARDWARE_ERROR] = "HARDWARE ERROR", [SK_ILLEGAL_REQUEST] = "ILLEGAL REQUEST",
	[SK_UNIT_ATTENTION] = "UNIT ATTENTION", [SK_DATA_PROTECT] = "DATA PROTECT",
	[SK_BLANK_CHECK] = "BLANK CHECK",   [SK_ABORTED_COMMAND] = "ABORTED COMMAND",
	[SK_VOLUME_OVERFLOW] = "VOLUME OVERFLOW", [SK_MISCOMPARE] = "MISCOMPARE",
};

/* One drive's snapshot, taken before any line is written. */
struct drive_snap {
	char address[NUM_TEXT], lun[NUM_TEXT];
	struct ssc_status st;
	struct lu_counts n;
};

/* A drive's labels: its element address and its LUN. */
static unsigned drive_labels(const void *row, struct prom_label *l, char *text)
{
	(void)text;
	const struct drive_snap *d = row;
	l[0] = (struct prom_label){"drive", d->address};
	l[1] = (struct prom_label){"lun", d->lun};
	return 2;
}

static uint64_t host_written(const void *row) { return ((const struct drive_snap *)row)->n.data_out_bytes; }
static uint64_t host_read(const void *row) { return ((const struct drive_snap *)row)->n.data_in_bytes; }
static uint64_t load_written(const void *row) { return ((const struct drive_snap *)row)->st.written_bytes; }
static uint64_t load_stored(const void *row) { return ((const struct drive_snap *)row)->st.written_stored; }
static uint64_t medium(const void *row) { return ((const struct drive_snap *)row)->st.stored_bytes; }
static uint64_t ra_fill(const void *row) { return ((const struct drive_snap *)row)->st.readahead_ready; }
static uint64_t ra_size(const void *row) { return ((const struct drive_snap *)row)->st.readahead_limit; }
static uint64_t ra_direct(const void *row) { return ((const struct drive_snap *)row)->st.readahead_direct; }
static uint64_t wr_direct(const void *row) { return ((const struct drive_snap *)row)->st.written_direct; }
static uint64_t unsynced(const void *row) { return ((const struct drive_snap *)row)->st.unsynced_bytes; }
static uint64_t position(const void *row) { return ((const struct drive_snap *)row)->st.object; }

static void drives(struct vtld *v, struct outbuf *o)
{
	unsigned n;
	struct vtl_lu *lus = vtld_lus(v, &n);
	struct drive_snap *d = calloc(n ? n : 1, sizeof *d);
	if (!d) {
		o->failed = true;
		return;
	}
	unsigned nd = 0;
	for (unsigned i = 0, k = 0; i < n; i++) {
		if (strcmp(lus[i].what, "drive") != 0)
			continue;
		uint16_t address = 0;
		library_drive(vtld_library(v), k++, &address);
		snprintf(d[nd].address, sizeof d[nd].address, "%u", address);
		snprintf(d[nd].lun, sizeof d[nd].lun, "%u", lus[i].lun);
		ssc_status_now(lus[i].dev, &d[nd].st); /* the drive's snapshot lock, released on return */
		lu_worker_counts(lus[i].worker, &d[nd].n);
		nd++;
	}
	const struct prom_rows rows = {.rows = d, .n = nd, .size = sizeof d[0], .labels = drive_labels};
	prom_family(o, "vtl_drive_info", "gauge", "A virtual tape drive: its state and the cartridge in it (barcode \"\" "
		    "when empty); always 1");
	for (unsigned i = 0; i < nd; i++) {
		struct prom_label l[] = {{"drive", d[i].address}, {"lun", d[i].lun},
					 {"state", ssc_state_name(d[i].st.state)}, {"barcode", d[i].st.barcode}};
		prom_sample_u64(o, "vtl_drive_info", l, 4, 1);
	}
	prom_rows_u64(o, &rows, "vtl_drive_host_written_bytes_total", "counter",
		     "Data bytes hosts sent to the drive (WRITE data and the few bytes of parameter lists)", host_written);
	prom_rows_u64(o, &rows, "vtl_drive_host_read_bytes_total", "counter",
		     "Data bytes the drive returned to hosts (READ data and command answers)", host_read);
	prom_rows_u64(o, &rows, "vtl_drive_load_written_bytes", "gauge",
		     "Host bytes written to the loaded cartridge since it was loaded", load_written);
	prom_rows_u64(o, &rows, "vtl_drive_load_stored_bytes", "gauge",
		     "Bytes those took on the medium, after compression", load_stored);
	prom_family(o, "vtl_drive_compression_ratio", "gauge",
		    "Host bytes written since the load over the bytes they took on the medium (absent before a write)");
	for (unsigned i = 0; i < nd; i++) {
		if (!d[i].st.written_stored)
			continue;
		struct prom_label l[] = {{"drive", d[i].address}, {"lun", d[i].lun}};
		prom_sample(o, "vtl_drive_compression_ratio", l, 2,
			    (double)d[i].st.written_bytes / (double)d[i].st.written_stored);
	}
	prom_rows_u64(o, &rows, "vtl_drive_medium_bytes", "gauge",
		     "Bytes the loaded cartridge's medium holds before end of data", medium);
	prom_rows_u64(o, &rows, "vtl_drive_position_objects", "gauge",
		     "The drive's logical object number (its position on the cartridge)", position);
	prom_rows_u64(o, &rows, "vtl_drive_readahead_bytes", "gauge",
		     "Stored bytes read ahead and ready for the host: the read buffer's fill", ra_fill);
	prom_rows_u64(o, &rows, "vtl_drive_readahead_limit_bytes", "gauge",
		     "The most stored bytes the read-ahead keeps in flight: the read buffer's size", ra_size);
	prom_rows_u64(o, &rows, "vtl_drive_load_read_direct_bytes", "gauge",
		     "Stored bytes read ahead for hosts since the load past the page cache (O_DIRECT: the cache did not "
		     "hold them)", ra_direct);
	prom_rows_u64(o, &rows, "vtl_drive_load_write_direct_bytes", "gauge",
		     "Record bytes written for hosts since the load past the page cache (O_DIRECT)", wr_direct);
	prom_rows_u64(o, &rows, "vtl_drive_unsynced_bytes", "gauge",
		     "Host bytes written and acknowledged but not yet synced: the write buffer's fill", unsynced);
	free(d);
}

/* Every logical unit's commands and CHECK CONDITIONs. */
static void units(struct vtld *v, struct outbuf *o)
{
	unsigned n;
	struct vtl_lu *lus = vtld_lus(v, &n);
	struct lu_counts *c = calloc(n ? n : 1, sizeof *c);
	if (!c) {
		o->failed = true;
		return;
	}
	for (unsigned i = 0; i < n; i++)
		lu_worker_counts(lus[i].worker, &c[i]);
	prom_family(o, "vtl_lu_commands_total", "counter", "SCSI commands a logical unit (changer or drive) ran");
	for (unsigned i = 0; i < n; i++) {
		char lun[NUM_TEXT];
		snprintf(lun, sizeof lun, "%u", lus[i].lun);
		struct prom_label l[] = {{"lun", lun}, {"device", lus[i].what}};
		prom_sample_u64(o, "vtl_lu_commands_total", l, 2, c[i].commands);
	}
	prom_family(o, "vtl_lu_check_conditions_total", "counter",
		    "Commands that ended in CHECK CONDITION, by sense key (NO SENSE: a filemark, EOM or ILI report)");
	for (unsigned i = 0; i < n; i++) {
		char lun[NUM_TEXT];
		snprintf(lun, sizeof lun, "%u", lus[i].lun);
		for (unsigned k = 0; k < LU_SENSE_KEYS; k++) {
			if (!sense_keys[k] && !c[i].checks[k])
				continue; /* the reserved keys only once one is seen */
			char other[NUM_TEXT];
			snprintf(other, sizeof other, "0x%X", k);
			struct prom_label l[] = {{"lun", lun}, {"device", lus[i].what},
						 {"sense_key", sense_keys[k] ? sense_keys[k] : other}};
			prom_sample_u64(o, "vtl_lu_check_conditions_total", l, 3, c[i].checks[k]);
		}
	}
	free(c);
}

static void sessions(struct vtld *v, struct outbuf *o)
{
	struct iscsi_target *t = vtld_iscsi(v);
	unsigned max = t ? iscsi_target_sessions(t, NULL, 0) : 0;
	struct iscsi_session_info *s = max ? calloc(max, sizeof *s) : NULL;
	if (max && !s) {
		o->failed = true;
		return;
	}
	unsigned n = max ? iscsi_target_sessions(t, s, max) : 0;
	n = n < max ? n : max; /* some may have logged in since the count */
	prom_family(o, "vtl_iscsi_sessions", "gauge", "Normal iSCSI sessions logged in");
	prom_sample_u64(o, "vtl_iscsi_sessions", NULL, 0, n);
	static const struct {
		const char *name, *type, *help;
	} fam[] = {
		{"vtl_iscsi_session_commands_in_flight", "gauge", "Commands of the session with a logical unit now"},
		{"vtl_iscsi_session_commands_total", "counter", "Commands of the session the logical units finished"},
		{"vtl_iscsi_session_data_in_bytes_total", "counter", "SCSI data bytes sent to the initiator"},
		{"vtl_iscsi_session_data_out_bytes_total", "counter", "SCSI data bytes taken from the initiator"},
	};
	for (unsigned f = 0; f < VTL_ARRAY_SIZE(fam); f++) {
		prom_family(o, fam[f].name, fam[f].type, fam[f].help);
		for (unsigned i = 0; i < n; i++) {
			struct prom_label l[] = {{"initiator", s[i].initiator}, {"isid", s[i].isid}, {"peer", s[i].peer}};
			uint64_t val = f == 0 ? s[i].in_flight : f == 1 ? s[i].commands : f == 2 ? s[i].data_in_bytes
												 : s[i].data_out_bytes;
			prom_sample_u64(o, fam[f].name, l, 3, val);
		}
	}
	free(s);
}

static void pool(struct vtld *v, struct outbuf *o)
{
	struct vtl_pool *p = vtld_pool(v);
	unsigned n = vtl_pool_members(p);
	struct vtl_member_space ms[VTL_POOL_MAX_MEMBERS];
	bool ok[VTL_POOL_MAX_MEMBERS] = {false};
	for (unsigned i = 0; i < n && i < VTL_POOL_MAX_MEMBERS; i++)
		ok[i] = vtl_pool_member_space(p, i, &ms[i]) == VTL_OK; /* the member's lock, released on return */
	prom_family(o, "vtl_pool_member_used_bytes", "gauge", "Bytes of segment files the pool counts on the member");
	for (unsigned i = 0; i < n && i < VTL_POOL_MAX_MEMBERS; i++)
		if (ok[i])
			prom_sample_u64(o, "vtl_pool_member_used_bytes", &(struct prom_label){"member", ms[i].path}, 1,
					ms[i].used_bytes);
	prom_family(o, "vtl_pool_member_free_bytes", "gauge", "Bytes still available to cartridges on the member");
	for (unsigned i = 0; i < n && i < VTL_POOL_MAX_MEMBERS; i++)
		if (ok[i])
			prom_sample_u64(o, "vtl_pool_member_free_bytes", &(struct prom_label){"member", ms[i].path}, 1,
					ms[i].free_bytes);
	struct throttle_state ts;
	throttle_state(vtld_throttle(v), &ts);
	prom_family(o, "vtl_pool_fill_ratio", "gauge", "Share of the pool used, as the write throttle last measured it");
	prom_sample(o, "vtl_pool_fill_ratio", NULL, 0, ts.fill / PERCENT);
	prom_family(o, "vtl_throttle_active", "gauge", "1 while host writes are slowed because the pool is nearly full");
	prom_sample_u64(o, "vtl_throttle_active", NULL, 0, ts.active);
	prom_family(o, "vtl_throttle_threshold_ratio", "gauge", "Pool fill from which host writes are slowed (0: never)");
	prom_sample(o, "vtl_throttle_threshold_ratio", NULL, 0, ts.threshold / PERCENT);
	prom_family(o, "vtl_throttle_rate_bytes_per_second", "gauge", "The rate host writes are slowed to");
	prom_sample(o, "vtl_throttle_rate_bytes_per_second", NULL, 0, ts.rate * MB);
}

struct cache_counts {
	uint64_t n[CACHE_STATES], bytes[CACHE_STATES];
};

static int count_cart(const struct cat_cartridge *c, void *arg)
{
	struct cache_counts *cc = arg;
	if ((unsigned)c->cache < CACHE_STATES) {
		cc->n[c->cache]++;
		cc->bytes[c->cache] += c->bytes_stored;
	}
	return 0;
}

static void cache(struct vtld *v, struct outbuf *o)
{
	struct cache_counts cc = {{0}, {0}};
	int rc = catalog_cartridge_list(vtld_catalog(v), library_info(vtld_library(v))->id, count_cart, &cc);
	prom_family(o, "vtl_catalog_up", "gauge", "1 when the catalog answered the cache counts below");
	prom_sample_u64(o, "vtl_catalog_up", NULL, 0, rc == VTL_OK);
	if (rc != VTL_OK)
		return;
	prom_family(o, "vtl_cartridges", "gauge", "The library's cartridges by cache state");
	for (unsigned i = 0; i < CACHE_STATES; i++) {
		struct prom_label l = {"cache", libdoc_cache_name((enum cat_cache_state)i)};
		prom_sample_u64(o, "vtl_cartridges", &l, 1, cc.n[i]);
	}
	prom_family(o, "vtl_cartridge_stored_bytes", "gauge",
		    "Bytes the library's cartridges hold on their media (after compression), by cache state");
	for (unsigned i = 0; i < CACHE_STATES; i++) {
		struct prom_label l = {"cache", libdoc_cache_name((enum cat_cache_state)i)};
		prom_sample_u64(o, "vtl_cartridge_stored_bytes", &l, 1, cc.bytes[i]);
	}
}

void vtld_metrics_write(struct vtld *v, struct outbuf *o)
{
	drives(v, o);
	units(v, o);
	sessions(v, o);
	pool(v, o);
	cache(v, o);
}
