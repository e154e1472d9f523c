/* SPDX-License-Identifier: Apache-2.0 */
#include "migrator/metrics.h"

#include <stdio.h>

#include "common/grow.h"
#include "common/promtext.h"

#define NUM_TEXT 24 /* a decimal number as a label value */

static const char *const kinds[MIGD_JOB_KINDS] = {"", "migrate", "recall", "verify"};
static const char *const states[MIGD_JOB_STATES] = {"", "queued", "running", "done", "failed"};

/* A drive's labels: its physical library and its number there. */
static unsigned drive_labels(const void *row, struct prom_label *l, char *text)
{
	const struct migd_drive_snap *d = row;
	snprintf(text, PROM_ROW_TEXT, "%u", d->number);
	l[0] = (struct prom_label){"library", d->library};
	l[1] = (struct prom_label){"drive", text};
	return 2;
}

static uint64_t bytes(const void *row) { return ((const struct migd_drive_snap *)row)->bytes; }
static uint64_t writer_waits(const void *row) { return ((const struct migd_drive_snap *)row)->writer_waits; }
static uint64_t reader_waits(const void *row) { return ((const struct migd_drive_snap *)row)->reader_waits; }
static uint64_t gaps(const void *row) { return ((const struct migd_drive_snap *)row)->gaps; }
static uint64_t ended(const void *row) { return ((const struct migd_drive_snap *)row)->jobs_ended; }
static uint64_t ring_full(const void *row) { return ((const struct migd_drive_snap *)row)->ring_full; }
static uint64_t ring_buffers(const void *row) { return ((const struct migd_drive_snap *)row)->ring_buffers; }
static uint64_t job_bytes(const void *row) { return ((const struct migd_drive_snap *)row)->job_bytes; }
static uint64_t job_total(const void *row) { return ((const struct migd_drive_snap *)row)->job_total; }

void migd_metrics_write(const struct migd_snapshot *s, struct outbuf *o)
{
	const struct prom_rows drives = {.rows = s->drive, .n = s->drives, .size = sizeof s->drive[0],
					 .labels = drive_labels};
	prom_family(o, "vtl_migrator_drive_info", "gauge", "A physical drive: its state (unused: beyond [migrator] drives; "
		    "idle; busy) and its job's id, kind and cartridge; always 1");
	for (unsigned d = 0; d < s->drives; d++) {
		const struct migd_drive_snap *x = &s->drive[d];
		char num[NUM_TEXT], job[NUM_TEXT];
		snprintf(num, sizeof num, "%u", x->number);
		snprintf(job, sizeof job, "%lld", x->busy ? (long long)x->job : 0LL);
		struct prom_label l[] = {{"library", x->library}, {"drive", num},
					 {"state", !x->runs_jobs ? "unused" : x->busy ? "busy" : "idle"}, {"job", x->busy ? job : ""},
					 {"kind", x->busy && (unsigned)x->kind < MIGD_JOB_KINDS ? kinds[x->kind] : ""},
					 {"barcode", x->busy ? x->barcode : ""}};
		prom_sample_u64(o, "vtl_migrator_drive_info", l, 6, 1);
	}
	prom_rows_u64(o, &drives, "vtl_migrator_drive_bytes_total", "counter",
		     "Bytes the drive's jobs copied or staged (as of each job's last progress report)", bytes);
	prom_rows_u64(o, &drives, "vtl_migrator_drive_writer_waits_total", "counter",
		     "Times the tape writer found the next ring buffer not yet full", writer_waits);
	prom_rows_u64(o, &drives, "vtl_migrator_drive_reader_waits_total", "counter",
		     "Times a disk reader found no empty ring buffer", reader_waits);
	prom_rows_u64(o, &drives, "vtl_migrator_drive_backhitches_total", "counter",
		     "Writer waits of a second or more: back-hitches a real drive likely made", gaps);
	prom_rows_u64(o, &drives, "vtl_migrator_drive_jobs_ended_total", "counter",
		     "Jobs the drive ran to their end (done, failed or stopped)", ended);
	prom_rows_u64(o, &drives, "vtl_migrator_drive_ring_full_buffers", "gauge",
		     "Full buffers in the running copy's ring", ring_full);
	prom_rows_u64(o, &drives, "vtl_migrator_drive_ring_buffers", "gauge",
		     "Buffers of the running copy's ring (0: no copy runs)", ring_buffers);
	prom_rows_u64(o, &drives, "vtl_migrator_drive_job_bytes", "gauge", "Bytes the running job has done",
		     job_bytes);
	prom_rows_u64(o, &drives, "vtl_migrator_drive_job_total_bytes", "gauge", "Bytes the running job has to do",
		     job_total);

	prom_family(o, "vtl_migrator_catalog_up", "gauge", "1 when the catalog answered the job counts");
	prom_sample_u64(o, "vtl_migrator_catalog_up", NULL, 0, s->jobs_ok);
	if (s->jobs_ok) {
		prom_family(o, "vtl_migrator_jobs", "gauge", "Jobs in the catalog by kind and state");
		for (unsigned k = 1; k < MIGD_JOB_KINDS; k++)
			for (unsigned st = 1; st < MIGD_JOB_STATES; st++) {
				struct prom_label l[] = {{"kind", kinds[k]}, {"state", states[st]}};
				prom_sample_u64(o, "vtl_migrator_jobs", l, 2, s->jobs[k][st]);
			}
	}

	prom_family(o, "vtl_migrator_policy_passes_total", "counter", "Cache policy passes run");
	prom_sample_u64(o, "vtl_migrator_policy_passes_total", NULL, 0, s->policy.passes);
	prom_family(o, "vtl_migrator_policy_copies_queued_total", "counter", "Copies the policy passes queued");
	prom_sample_u64(o, "vtl_migrator_policy_copies_queued_total", NULL, 0, s->policy.queued);
	prom_family(o, "vtl_migrator_policy_releases_total", "counter", "Disk copies released (passes and operators)");
	prom_sample_u64(o, "vtl_migrator_policy_releases_total", NULL, 0, s->policy.released);
	prom_family(o, "vtl_migrator_policy_released_bytes_total", "counter", "Bytes of the disk copies released");
	prom_sample_u64(o, "vtl_migrator_policy_released_bytes_total", NULL, 0, s->policy.released_bytes);

	/* Host ingest first (docs/migrator.md): the rule's inputs and what it gives the copies. */
	const struct migd_ingest_snap *g = &s->ingest;
	static const struct {
		const char *name, *type, *help;
	} rule[] = {
		{"vtl_migrator_ingest_host_bytes_per_second", "gauge", "What vtld says its hosts move through the drives now"},
		{"vtl_migrator_ingest_copies_read_bytes_per_second", "gauge", "What the running copies read from the pool now, together"},
		{"vtl_migrator_ingest_copy_floors_bytes_per_second", "gauge", "The running copies' floors together (each at least its drive's lowest matched speed)"},
		{"vtl_migrator_ingest_held", "gauge", "1 while host ingest first holds the copies to a budget"},
		{"vtl_migrator_ingest_copy_budget_bytes_per_second", "gauge", "The copies' budget together while held (0: not held)"},
		{"vtl_migrator_ingest_host_reference_bytes_per_second", "gauge", "pool_rate = auto: the hosts' rate the probe holds them to"},
		{"vtl_migrator_ingest_probe_drops_total", "counter", "pool_rate = auto: times the hosts fell below their reference and the budget was cut"},
	};
	const uint64_t val[] = {g->host_bps, g->copies_bps, g->floors_bps, g->held, g->budget_bps, g->ref_bps, g->drops};
	_Static_assert(sizeof val / sizeof val[0] == sizeof rule / sizeof rule[0], "a value for each family");
	for (unsigned i = 0; i < sizeof rule / sizeof rule[0]; i++) {
		prom_family(o, rule[i].name, rule[i].type, rule[i].help);
		prom_sample_u64(o, rule[i].name, NULL, 0, val[i]);
	}

	prom_family(o, "vtl_migrator_recall_first_block_seconds", "histogram",
		    "Time from a recall's start (mount and locate included) to its first block back on disk");
	prom_histogram(o, "vtl_migrator_recall_first_block_seconds", NULL, 0, migd_recall_bounds(),
		       s->recall_first_block, MIGD_RECALL_BUCKETS, s->recall_first_block_sum);
}
