/* SPDX-License-Identifier: Apache-2.0 */
/*
 * LOG SENSE and LOG SELECT of the drive (SPC-4 6.6/6.7, SSC-4 8.2), with the
 * pages IBM and HP LTO drives report and backup software polls.
 *
 * Counters come from d->cnt, which the data path only ever increments; a
 * LOG SELECT that resets a page records d->cnt as that page's base, and the
 * page reports the difference. Pages about the medium report zeros while no
 * cartridge is loaded, as the drive's own counters do not need one.
 */
#include "vtl/drive/ssc_internal.h"

#include "vtl/scsi/spc_log.h"

#include "common/grow.h"

/* Pages (SPC-4 table 373, SSC-4 table 51, IBM/HP LTO references). */
#define LP_WRITE_ERRORS 0x02
#define LP_READ_ERRORS 0x03
#define LP_SEQUENTIAL 0x0C
#define LP_COMPRESSION 0x1B
#define LP_TAPE_USAGE 0x30
#define LP_TAPE_CAPACITY 0x31

/* Error counter parameters (SPC-4 7.3.4/7.3.15). */
#define EC_CORRECTED_NO_DELAY 0x0000
#define EC_CORRECTED_DELAY 0x0001
#define EC_RETRIES 0x0002
#define EC_TOTAL_CORRECTED 0x0003
#define EC_ALGORITHM_RUNS 0x0004
#define EC_BYTES 0x0005
#define EC_UNCORRECTED 0x0006

/* Sequential-access device parameters (SSC-4 8.2.3); capacities in megabytes of 10^6 bytes. */
#define SA_HOST_WRITTEN 0x0000
#define SA_MEDIUM_WRITTEN 0x0001
#define SA_MEDIUM_READ 0x0002
#define SA_HOST_READ 0x0003
#define SA_BOP_TO_EOD 0x0004
#define SA_CLEANING_REQUIRED 0x0100

/* Data compression parameters (SSC-4 8.2.2): ratios x100, byte counts as megabytes plus remainder. */
#define DC_READ_RATIO 0x0000
#define DC_WRITE_RATIO 0x0001
#define DC_TO_SERVER_MB 0x0002
#define DC_READ_FROM_TAPE_MB 0x0004
#define DC_FROM_SERVER_MB 0x0006
#define DC_WRITTEN_TO_TAPE_MB 0x0008
#define RATIO_SCALE 100
#define RATIO_MAX 0xFFFF

/*
 * Tape usage parameters (LTO log page 30h, as sg_logs decodes it): the
 * cartridge's history from its MAM. Data set counts use the LTO format's data
 * set size; the disk below never retries or suspends, so those counts are 0.
 */
#define TU_THREADS 0x0001        /* 4 bytes */
#define TU_SETS_WRITTEN 0x0002   /* 8 bytes */
#define TU_WRITE_RETRIES 0x0003  /* 4 bytes */
#define TU_WRITE_ERRORS 0x0004   /* 2 bytes, as the following counts */
#define TU_SUSP_WRITES 0x0005
#define TU_FATAL_SUSP_WRITES 0x0006
#define TU_SETS_READ 0x0007      /* 8 bytes */
#define TU_READ_RETRIES 0x0008   /* 4 bytes */
#define TU_READ_ERRORS 0x0009
#define TU_SUSP_READS 0x000A
#define TU_FATAL_SUSP_READS 0x000B
#define DATA_SET_LTO5 2472960ull /* bytes of user data per data set, LTO-5 and LTO-6 */
#define DATA_SET_LTO7 5111808ull /* LTO-7 to LTO-9; LTO-10 counted alike (its data set size was not found) */
#define MAM_LOAD_COUNT 0x0003    /* SPC-4 table 330 */
#define MAM_MIB_WRITTEN_LIFE 0x0220
#define MAM_MIB_READ_LIFE 0x0221

/* Tape capacity parameters (IBM/HP LTO log page 31h), in MiB. */
#define TC_MAIN_REMAINING 0x0001
#define TC_ALT_REMAINING 0x0002
#define TC_MAIN_MAXIMUM 0x0003
#define TC_ALT_MAXIMUM 0x0004

#define MB 1000000ull
#define MIB (1ull << 20)

/* What a page is rendered from. */
struct log_src {
	const struct ssc_drive *d;
	struct ssc_counters c;   /* d->cnt since the page's last reset */
	bool loaded;
	struct vtl_position pos; /* valid when loaded */
	uint64_t threads, mib_written, mib_read; /* the medium's life from MAM, when loaded */
};

static void error_counters(struct spc_log_out *o, uint64_t bytes, uint64_t uncorrected)
{
	/* The disk below corrects nothing by retrying: corrected counts are truly zero. */
	static const uint16_t zero[] = {EC_CORRECTED_NO_DELAY, EC_CORRECTED_DELAY, EC_RETRIES, EC_TOTAL_CORRECTED,
					EC_ALGORITHM_RUNS};
	for (size_t i = 0; i < VTL_ARRAY_SIZE(zero); i++)
		spc_log_param(o, zero[i], SPC_LOG_COUNTER, 4, 0);
	spc_log_param(o, EC_BYTES, SPC_LOG_COUNTER, 8, bytes);
	spc_log_param(o, EC_UNCORRECTED, SPC_LOG_COUNTER, 4, uncorrected);
}

static void render_write_errors(const void *src, struct spc_log_out *o)
{
	const struct log_src *s = src;
	error_counters(o, s->c.host_written, s->c.write_errors);
}

static void render_read_errors(const void *src, struct spc_log_out *o)
{
	const struct log_src *s = src;
	error_counters(o, s->c.host_read, s->c.read_errors);
}

static void render_sequential(const void *src, struct spc_log_out *o)
{
	const struct log_src *s = src;
	spc_log_param(o, SA_HOST_WRITTEN, SPC_LOG_COUNTER, 8, s->c.host_written);
	spc_log_param(o, SA_MEDIUM_WRITTEN, SPC_LOG_COUNTER, 8, s->c.medium_written);
	spc_log_param(o, SA_MEDIUM_READ, SPC_LOG_COUNTER, 8, s->c.medium_read);
	spc_log_param(o, SA_HOST_READ, SPC_LOG_COUNTER, 8, s->c.host_read);
	spc_log_param(o, SA_BOP_TO_EOD, SPC_LOG_LIST, 4, s->loaded ? s->pos.stored_bytes / MB : 0);
	bool clean = s->d->tapealert & ((1ull << (TA_CLEAN_NOW - 1)) | (1ull << (TA_CLEAN_PERIODIC - 1)));
	spc_log_param(o, SA_CLEANING_REQUIRED, SPC_LOG_LIST, 1, clean);
}

static uint64_t ratio(uint64_t host, uint64_t medium)
{
	if (!medium)
		return 0;
	uint64_t r = host / medium * RATIO_SCALE + host % medium * RATIO_SCALE / medium;
	return r < RATIO_MAX ? r : RATIO_MAX;
}

/* A byte count as the page gives it: whole megabytes at code, the rest at code + 1. */
static void put_mb(struct spc_log_out *o, uint16_t code, uint64_t bytes)
{
	spc_log_param(o, code, SPC_LOG_COUNTER, 4, bytes / MB);
	spc_log_param(o, (uint16_t)(code + 1), SPC_LOG_COUNTER, 4, bytes % MB);
}

static void render_compression(const void *src, struct spc_log_out *o)
{
	const struct log_src *s = src;
	spc_log_param(o, DC_READ_RATIO, SPC_LOG_LIST, 2, ratio(s->c.host_read, s->c.medium_read));
	spc_log_param(o, DC_WRITE_RATIO, SPC_LOG_LIST, 2, ratio(s->c.host_written, s->c.medium_written));
	put_mb(o, DC_TO_SERVER_MB, s->c.host_read);
	put_mb(o, DC_READ_FROM_TAPE_MB, s->c.medium_read);
	put_mb(o, DC_FROM_SERVER_MB, s->c.host_written);
	put_mb(o, DC_WRITTEN_TO_TAPE_MB, s->c.medium_written);
}

static void render_tapealert(const void *src, struct spc_log_out *o)
{
	const struct log_src *s = src;
	spc_log_tapealert(o, s->d->tapealert);
}

static void render_capacity(const void *src, struct spc_log_out *o)
{
	const struct log_src *s = src;
	uint64_t cap = s->loaded ? s->d->capacity : 0;
	uint64_t used = s->loaded ? s->pos.stored_bytes : 0;
	spc_log_param(o, TC_MAIN_REMAINING, SPC_LOG_LIST, 4, used < cap ? (cap - used) / MIB : 0);
	spc_log_param(o, TC_ALT_REMAINING, SPC_LOG_LIST, 4, 0);
	spc_log_param(o, TC_MAIN_MAXIMUM, SPC_LOG_LIST, 4, cap / MIB);
	spc_log_param(o, TC_ALT_MAXIMUM, SPC_LOG_LIST, 4, 0);
}

static void render_usage(const void *src, struct spc_log_out *o)
{
	const struct log_src *s = src;
	uint64_t set = s->loaded && s->d->label.generation >= 7 ? DATA_SET_LTO7 : DATA_SET_LTO5;
	spc_log_param(o, TU_THREADS, SPC_LOG_COUNTER, 4, s->threads);
	spc_log_param(o, TU_SETS_WRITTEN, SPC_LOG_COUNTER, 8, s->mib_written * MIB / set);
	spc_log_param(o, TU_WRITE_RETRIES, SPC_LOG_COUNTER, 4, 0);
	spc_log_param(o, TU_WRITE_ERRORS, SPC_LOG_COUNTER, 2, 0);
	spc_log_param(o, TU_SUSP_WRITES, SPC_LOG_COUNTER, 2, 0);
	spc_log_param(o, TU_FATAL_SUSP_WRITES, SPC_LOG_COUNTER, 2, 0);
	spc_log_param(o, TU_SETS_READ, SPC_LOG_COUNTER, 8, s->mib_read * MIB / set);
	spc_log_param(o, TU_READ_RETRIES, SPC_LOG_COUNTER, 4, 0);
	spc_log_param(o, TU_READ_ERRORS, SPC_LOG_COUNTER, 2, 0);
	spc_log_param(o, TU_SUSP_READS, SPC_LOG_COUNTER, 2, 0);
	spc_log_param(o, TU_FATAL_SUSP_READS, SPC_LOG_COUNTER, 2, 0);
}

/* Indices into d->log_base of the pages with counters a reset starts from zero. */
enum log_base_index { BASE_WRITE_ERRORS, BASE_READ_ERRORS, BASE_SEQUENTIAL, BASE_COMPRESSION, N_BASES };
_Static_assert(N_BASES <= SSC_LOG_BASES, "every resettable page needs a base in struct ssc_drive");

/* The drive's log pages, in the order the supported pages page lists them. */
static const struct spc_log_page log_pages[] = {
	{SPC_LOG_SUPPORTED, 0, 0, -1, NULL},
	{SPC_LOG_SUPPORTED, SPC_LOG_SUBPAGE_ALL, 0, -1, NULL},
	{LP_WRITE_ERRORS, 0, EC_UNCORRECTED, BASE_WRITE_ERRORS, render_write_errors},
	{LP_READ_ERRORS, 0, EC_UNCORRECTED, BASE_READ_ERRORS, render_read_errors},
	{LP_SEQUENTIAL, 0, SA_CLEANING_REQUIRED, BASE_SEQUENTIAL, render_sequential},
	{LP_COMPRESSION, 0, DC_WRITTEN_TO_TAPE_MB + 1, BASE_COMPRESSION, render_compression},
	{SPC_LOG_TAPEALERT, 0, SPC_TAPEALERT_FLAGS, -1, render_tapealert},
	{LP_TAPE_USAGE, 0, TU_FATAL_SUSP_READS, -1, render_usage},
	{LP_TAPE_CAPACITY, 0, TC_ALT_MAXIMUM, -1, render_capacity},
};
#define N_PAGES (VTL_ARRAY_SIZE(log_pages))

static void counters_since(const struct ssc_drive *d, int base, struct ssc_counters *c)
{
	*c = d->cnt;
	if (base < 0)
		return;
	const struct ssc_counters *b = &d->log_base[base];
	c->write_cmds -= b->write_cmds;
	c->read_cmds -= b->read_cmds;
	c->host_written -= b->host_written;
	c->host_read -= b->host_read;
	c->medium_written -= b->medium_written;
	c->medium_read -= b->medium_read;
	c->write_errors -= b->write_errors;
	c->read_errors -= b->read_errors;
	c->filemarks_written -= b->filemarks_written;
}

void ssc_log_sense(struct scsi_dev *dev, struct scsi_cmd *c)
{
	struct ssc_drive *d = ssc_of(dev);
	struct spc_log_sense l;
	const struct spc_log_page *pg = spc_log_sense_page(c, log_pages, N_PAGES, &l);
	if (!pg)
		return;
	struct log_src src = {.d = d, .loaded = d->state == SSC_LOADED && d->cart};
	counters_since(d, pg->base, &src.c);
	if (src.loaded) {
		vtl_cart_position(d->cart, &src.pos);
		src.threads = ssc_mam_number(d, MAM_LOAD_COUNT);
		src.mib_written = ssc_mam_number(d, MAM_MIB_WRITTEN_LIFE);
		src.mib_read = ssc_mam_number(d, MAM_MIB_READ_LIFE);
	}
	size_t done = spc_log_sense_answer(c, log_pages, N_PAGES, pg, &l, &src);
	if (pg->code == SPC_LOG_TAPEALERT)
		d->tapealert = spc_log_tapealert_read(d->tapealert, l.pc, l.pointer, done);
}

/* Sets the cumulative values of pg (or of every page) to their defaults; whether any counter was reset. */
static bool reset_cumulative(struct ssc_drive *d, const struct spc_log_page *pg)
{
	bool any = false;
	for (size_t i = 0; i < N_PAGES; i++)
		if (log_pages[i].base >= 0 && (!pg || pg == &log_pages[i])) {
			d->log_base[log_pages[i].base] = d->cnt;
			any = true;
		}
	return any;
}

void ssc_log_select(struct scsi_dev *dev, struct scsi_cmd *c)
{
	struct ssc_drive *d = ssc_of(dev);
	const struct spc_log_page *pg;
	bool reset;
	if (!spc_log_select(c, log_pages, N_PAGES, &pg, &reset))
		return;
	if (reset && reset_cumulative(d, pg))
		ua_raise_all(&d->dev.ua, UA_LOG_CHANGED, c->nexus);
	scsi_done(c, 0);
}
