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
#include "vtl/scsi/ssc_internal.h"

#include <string.h>

/* CDB fields (SPC-4 6.6 LOG SELECT, 6.7 LOG SENSE). */
#define CDB_FLAGS_BYTE 1
#define CDB_SP 0x01            /* save parameters: not supported */
#define CDB_SP_BIT 0
#define CDB_PPC 0x02           /* LOG SENSE: parameter pointer control; LOG SELECT: PCR */
#define CDB_PPC_BIT 1
#define CDB_PAGE_BYTE 2
#define CDB_PC_SHIFT 6
#define CDB_PAGE_MASK 0x3F
#define CDB_PAGE_BIT 5
#define CDB_SUBPAGE_BYTE 3
#define CDB_POINTER_BYTE 5     /* 2 bytes */
#define CDB_LEN_BYTE 7         /* 2 bytes: allocation length / parameter list length */
#define FIELD_BIT 7            /* a field pointer names the leftmost bit of the field (SPC-4 4.5.2.4.2) */

/* Page control (SPC-4 table 154). */
enum log_pc { PC_THRESHOLD = 0, PC_CUMULATIVE = 1, PC_DEFAULT_THRESHOLD = 2, PC_DEFAULT_CUMULATIVE = 3 };

/* Log page header (SPC-4 7.3.2.1). */
#define PAGE_HDR 4
#define PAGE_DS 0x80           /* disable save: the drive saves no log parameters */
#define PAGE_SPF 0x40
#define SUBPAGE_ALL 0xFF

/* Log parameter header and control byte (SPC-4 7.3.2.2). */
#define PARAM_HDR 4
#define CTL_TSD 0x20           /* the drive never saves parameters implicitly */
#define CTL_BOUNDED_COUNTER 0x00 /* FORMAT AND LINKING 00b */
#define CTL_BINARY_LIST 0x03   /* FORMAT AND LINKING 11b */

/* Pages (SPC-4 table 373, SSC-4 table 51, IBM/HP LTO references). */
#define LP_SUPPORTED 0x00
#define LP_WRITE_ERRORS 0x02
#define LP_READ_ERRORS 0x03
#define LP_SEQUENTIAL 0x0C
#define LP_COMPRESSION 0x1B
#define LP_TAPEALERT 0x2E
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
#define DATA_SET_LTO7 5111808ull /* LTO-7 to LTO-9 */
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
#define TAPEALERT_FLAGS 64
#define TAPEALERT_PARAM_LEN (PARAM_HDR + 1)

#define LOG_BUF_MAX 1024       /* the longest page (TapeAlert: 4 + 64 * 5 bytes) fits */

/* What a page is rendered from. */
struct log_src {
	const struct ssc_drive *d;
	struct ssc_counters c;   /* d->cnt since the page's last reset */
	bool loaded;
	struct vtl_position pos; /* valid when loaded */
	uint64_t threads, mib_written, mib_read; /* the medium's life from MAM, when loaded */
};

/* A page being written: parameters below pointer are left out; values follow the page control. */
struct log_out {
	uint8_t *buf;
	size_t at;
	uint16_t pointer;
	enum log_pc pc;
};

enum log_kind { LK_COUNTER, LK_LIST };

struct log_page {
	uint8_t code;
	uint8_t subpage;
	int base;              /* index into d->log_base; -1: nothing to reset */
	uint16_t last_param;   /* the largest parameter code, for the parameter pointer */
	void (*render)(const struct log_src *s, struct log_out *o);
};

static uint64_t all_ones(unsigned len)
{
	return len >= 8 ? UINT64_MAX : (1ull << (8 * len)) - 1;
}

/*
 * Appends one parameter. Cumulative values are the counts; default
 * cumulative values are zero; a counter's threshold (current and default,
 * which cannot be changed) is its maximum, and a list parameter has none.
 */
static void put_param(struct log_out *o, uint16_t code, enum log_kind kind, unsigned len, uint64_t v)
{
	if (code < o->pointer)
		return;
	uint64_t value = v;
	if (o->pc == PC_THRESHOLD || o->pc == PC_DEFAULT_THRESHOLD)
		value = kind == LK_COUNTER ? all_ones(len) : 0;
	else if (o->pc == PC_DEFAULT_CUMULATIVE)
		value = 0;
	uint8_t *p = o->buf + o->at;
	be_put(p, code, 2);
	p[2] = (uint8_t)(CTL_TSD | (kind == LK_COUNTER ? CTL_BOUNDED_COUNTER : CTL_BINARY_LIST));
	p[3] = (uint8_t)len;
	be_put(p + PARAM_HDR, value, len);
	o->at += PARAM_HDR + len;
}

static void error_counters(struct log_out *o, uint64_t bytes, uint64_t uncorrected)
{
	/* The disk below corrects nothing by retrying: corrected counts are truly zero. */
	static const uint16_t zero[] = {EC_CORRECTED_NO_DELAY, EC_CORRECTED_DELAY, EC_RETRIES, EC_TOTAL_CORRECTED,
					EC_ALGORITHM_RUNS};
	for (size_t i = 0; i < sizeof zero / sizeof zero[0]; i++)
		put_param(o, zero[i], LK_COUNTER, 4, 0);
	put_param(o, EC_BYTES, LK_COUNTER, 8, bytes);
	put_param(o, EC_UNCORRECTED, LK_COUNTER, 4, uncorrected);
}

static void render_write_errors(const struct log_src *s, struct log_out *o)
{
	error_counters(o, s->c.host_written, s->c.write_errors);
}

static void render_read_errors(const struct log_src *s, struct log_out *o)
{
	error_counters(o, s->c.host_read, s->c.read_errors);
}

static void render_sequential(const struct log_src *s, struct log_out *o)
{
	put_param(o, SA_HOST_WRITTEN, LK_COUNTER, 8, s->c.host_written);
	put_param(o, SA_MEDIUM_WRITTEN, LK_COUNTER, 8, s->c.medium_written);
	put_param(o, SA_MEDIUM_READ, LK_COUNTER, 8, s->c.medium_read);
	put_param(o, SA_HOST_READ, LK_COUNTER, 8, s->c.host_read);
	put_param(o, SA_BOP_TO_EOD, LK_LIST, 4, s->loaded ? s->pos.stored_bytes / MB : 0);
	bool clean = s->d->tapealert & ((1ull << (TA_CLEAN_NOW - 1)) | (1ull << (TA_CLEAN_PERIODIC - 1)));
	put_param(o, SA_CLEANING_REQUIRED, LK_LIST, 1, clean);
}

static uint64_t ratio(uint64_t host, uint64_t medium)
{
	if (!medium)
		return 0;
	uint64_t r = host / medium * RATIO_SCALE + host % medium * RATIO_SCALE / medium;
	return r < RATIO_MAX ? r : RATIO_MAX;
}

/* A byte count as the page gives it: whole megabytes at code, the rest at code + 1. */
static void put_mb(struct log_out *o, uint16_t code, uint64_t bytes)
{
	put_param(o, code, LK_COUNTER, 4, bytes / MB);
	put_param(o, (uint16_t)(code + 1), LK_COUNTER, 4, bytes % MB);
}

static void render_compression(const struct log_src *s, struct log_out *o)
{
	put_param(o, DC_READ_RATIO, LK_LIST, 2, ratio(s->c.host_read, s->c.medium_read));
	put_param(o, DC_WRITE_RATIO, LK_LIST, 2, ratio(s->c.host_written, s->c.medium_written));
	put_mb(o, DC_TO_SERVER_MB, s->c.host_read);
	put_mb(o, DC_READ_FROM_TAPE_MB, s->c.medium_read);
	put_mb(o, DC_FROM_SERVER_MB, s->c.host_written);
	put_mb(o, DC_WRITTEN_TO_TAPE_MB, s->c.medium_written);
}

static void render_tapealert(const struct log_src *s, struct log_out *o)
{
	for (uint16_t f = 1; f <= TAPEALERT_FLAGS; f++)
		put_param(o, f, LK_LIST, 1, (s->d->tapealert >> (f - 1)) & 1);
}

static void render_capacity(const struct log_src *s, struct log_out *o)
{
	uint64_t cap = s->loaded ? s->d->capacity : 0;
	uint64_t used = s->loaded ? s->pos.stored_bytes : 0;
	put_param(o, TC_MAIN_REMAINING, LK_LIST, 4, used < cap ? (cap - used) / MIB : 0);
	put_param(o, TC_ALT_REMAINING, LK_LIST, 4, 0);
	put_param(o, TC_MAIN_MAXIMUM, LK_LIST, 4, cap / MIB);
	put_param(o, TC_ALT_MAXIMUM, LK_LIST, 4, 0);
}

static void render_usage(const struct log_src *s, struct log_out *o)
{
	uint64_t set = s->loaded && s->d->label.generation >= 7 ? DATA_SET_LTO7 : DATA_SET_LTO5;
	put_param(o, TU_THREADS, LK_COUNTER, 4, s->threads);
	put_param(o, TU_SETS_WRITTEN, LK_COUNTER, 8, s->mib_written * MIB / set);
	put_param(o, TU_WRITE_RETRIES, LK_COUNTER, 4, 0);
	put_param(o, TU_WRITE_ERRORS, LK_COUNTER, 2, 0);
	put_param(o, TU_SUSP_WRITES, LK_COUNTER, 2, 0);
	put_param(o, TU_FATAL_SUSP_WRITES, LK_COUNTER, 2, 0);
	put_param(o, TU_SETS_READ, LK_COUNTER, 8, s->mib_read * MIB / set);
	put_param(o, TU_READ_RETRIES, LK_COUNTER, 4, 0);
	put_param(o, TU_READ_ERRORS, LK_COUNTER, 2, 0);
	put_param(o, TU_SUSP_READS, LK_COUNTER, 2, 0);
	put_param(o, TU_FATAL_SUSP_READS, LK_COUNTER, 2, 0);
}

static void render_supported(const struct log_src *s, struct log_out *o);
static void render_supported_subpages(const struct log_src *s, struct log_out *o);

/* Indices into d->log_base of the pages with counters a reset starts from zero. */
enum log_base_index { BASE_WRITE_ERRORS, BASE_READ_ERRORS, BASE_SEQUENTIAL, BASE_COMPRESSION, N_BASES };
_Static_assert(N_BASES <= SSC_LOG_BASES, "every resettable page needs a base in struct ssc_drive");

/* The drive's log pages, in the order the supported pages page lists them. */
static const struct log_page log_pages[] = {
	{LP_SUPPORTED, 0, -1, 0, render_supported},
	{LP_SUPPORTED, SUBPAGE_ALL, -1, 0, render_supported_subpages},
	{LP_WRITE_ERRORS, 0, BASE_WRITE_ERRORS, EC_UNCORRECTED, render_write_errors},
	{LP_READ_ERRORS, 0, BASE_READ_ERRORS, EC_UNCORRECTED, render_read_errors},
	{LP_SEQUENTIAL, 0, BASE_SEQUENTIAL, SA_CLEANING_REQUIRED, render_sequential},
	{LP_COMPRESSION, 0, BASE_COMPRESSION, DC_WRITTEN_TO_TAPE_MB + 1, render_compression},
	{LP_TAPEALERT, 0, -1, TAPEALERT_FLAGS, render_tapealert},
	{LP_TAPE_USAGE, 0, -1, TU_FATAL_SUSP_READS, render_usage},
	{LP_TAPE_CAPACITY, 0, -1, TC_ALT_MAXIMUM, render_capacity},
};
#define N_PAGES (sizeof log_pages / sizeof log_pages[0])

static void render_supported(const struct log_src *s, struct log_out *o)
{
	(void)s;
	for (size_t i = 0; i < N_PAGES; i++)
		if (log_pages[i].subpage == 0)
			o->buf[o->at++] = log_pages[i].code;
}

static void render_supported_subpages(const struct log_src *s, struct log_out *o)
{
	(void)s;
	for (size_t i = 0; i < N_PAGES; i++) {
		o->buf[o->at++] = log_pages[i].code;
		o->buf[o->at++] = log_pages[i].subpage;
	}
}

/* The page the CDB names, or NULL with *s set to the field at fault. */
static const struct log_page *page_of_cdb(const uint8_t *cdb, struct scsi_sense *s)
{
	uint8_t code = cdb[CDB_PAGE_BYTE] & CDB_PAGE_MASK;
	uint8_t subpage = cdb[CDB_SUBPAGE_BYTE];
	bool code_known = false;
	for (size_t i = 0; i < N_PAGES; i++) {
		if (log_pages[i].code == code && log_pages[i].subpage == subpage)
			return &log_pages[i];
		code_known |= log_pages[i].code == code;
	}
	*s = code_known ? sense_invalid_cdb_field(CDB_SUBPAGE_BYTE, FIELD_BIT)
			: sense_invalid_cdb_field(CDB_PAGE_BYTE, CDB_PAGE_BIT);
	return NULL;
}

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
	const uint8_t *cdb = c->cdb;
	if (cdb[CDB_FLAGS_BYTE] & CDB_SP) {
		scsi_fail(c, sense_invalid_cdb_field(CDB_FLAGS_BYTE, CDB_SP_BIT));
		return;
	}
	if (cdb[CDB_FLAGS_BYTE] & CDB_PPC) {
		/* Only parameters that changed since the last command: not supported, as on IBM LTO drives. */
		scsi_fail(c, sense_invalid_cdb_field(CDB_FLAGS_BYTE, CDB_PPC_BIT));
		return;
	}
	struct scsi_sense s;
	const struct log_page *pg = page_of_cdb(cdb, &s);
	if (!pg) {
		scsi_fail(c, s);
		return;
	}
	uint16_t pointer = (uint16_t)be_get(cdb + CDB_POINTER_BYTE, 2);
	if (pointer > pg->last_param) {
		scsi_fail(c, sense_invalid_cdb_field(CDB_POINTER_BYTE, FIELD_BIT));
		return;
	}
	struct log_src src = {.d = d, .loaded = d->state == SSC_LOADED && d->cart};
	counters_since(d, pg->base, &src.c);
	if (src.loaded) {
		vtl_cart_position(d->cart, &src.pos);
		src.threads = ssc_mam_number(d, MAM_LOAD_COUNT);
		src.mib_written = ssc_mam_number(d, MAM_MIB_WRITTEN_LIFE);
		src.mib_read = ssc_mam_number(d, MAM_MIB_READ_LIFE);
	}
	uint8_t buf[LOG_BUF_MAX];
	struct log_out o = {.buf = buf, .at = PAGE_HDR, .pointer = pointer,
			    .pc = (enum log_pc)(cdb[CDB_PAGE_BYTE] >> CDB_PC_SHIFT)};
	pg->render(&src, &o);
	buf[0] = (uint8_t)(PAGE_DS | (pg->subpage ? PAGE_SPF : 0) | pg->code);
	buf[1] = pg->subpage;
	be_put(buf + 2, o.at - PAGE_HDR, 2);
	size_t done = scsi_data_in(c, buf, o.at, be_get(cdb + CDB_LEN_BYTE, 2));
	if (pg->code == LP_TAPEALERT && o.pc == PC_CUMULATIVE) {
		/* Reading a flag clears it (TapeAlert v3); a flag the allocation length cut off stays set. */
		uint16_t first = pointer ? pointer : 1;
		for (uint16_t f = first; f <= TAPEALERT_FLAGS; f++)
			if (PAGE_HDR + (size_t)(f - first + 1) * TAPEALERT_PARAM_LEN <= done)
				d->tapealert &= ~(1ull << (f - 1));
	}
}

/* Sets the cumulative values of pg (or of every page) to their defaults; whether any counter was reset. */
static bool reset_cumulative(struct ssc_drive *d, const struct log_page *pg)
{
	bool any = false;
	for (size_t i = 0; i < N_PAGES; i++)
		if (log_pages[i].base >= 0 && (!pg || pg == &log_pages[i])) {
			d->log_base[log_pages[i].base] = d->cnt;
			any = true;
		}
	return any;
}

/* Checks a LOG SELECT parameter list: supported pages, whole, and no parameter values (none is settable). */
static bool check_list(const uint8_t *buf, size_t n, struct scsi_sense *s)
{
	size_t at = 0;
	while (at < n) {
		if (n - at < PAGE_HDR) {
			*s = sense_of(SK_ILLEGAL_REQUEST, ASC_PARAMETER_LIST_LENGTH);
			return false;
		}
		uint8_t code = buf[at] & CDB_PAGE_MASK;
		uint8_t subpage = (buf[at] & PAGE_SPF) ? buf[at + 1] : 0;
		size_t len = be_get(buf + at + 2, 2);
		bool known = false;
		for (size_t i = 0; i < N_PAGES; i++)
			known |= log_pages[i].code == code && log_pages[i].subpage == subpage && code != LP_SUPPORTED;
		if (!known) {
			*s = sense_invalid_param_field((uint16_t)at, CDB_PAGE_BIT);
			return false;
		}
		if (n - at - PAGE_HDR < len) {
			*s = sense_of(SK_ILLEGAL_REQUEST, ASC_PARAMETER_LIST_LENGTH);
			return false;
		}
		if (len) {
			*s = sense_invalid_param_field((uint16_t)(at + PAGE_HDR), FIELD_BIT);
			return false;
		}
		at += PAGE_HDR;
	}
	return true;
}

void ssc_log_select(struct scsi_dev *dev, struct scsi_cmd *c)
{
	struct ssc_drive *d = ssc_of(dev);
	const uint8_t *cdb = c->cdb;
	bool pcr = cdb[CDB_FLAGS_BYTE] & CDB_PPC;
	enum log_pc pc = (enum log_pc)(cdb[CDB_PAGE_BYTE] >> CDB_PC_SHIFT);
	size_t plen = be_get(cdb + CDB_LEN_BYTE, 2);
	if (cdb[CDB_FLAGS_BYTE] & CDB_SP) {
		scsi_fail(c, sense_invalid_cdb_field(CDB_FLAGS_BYTE, CDB_SP_BIT));
		return;
	}
	if (plen) {
		/* PCR resets; it comes without parameters (SPC-4 6.6). */
		if (pcr) {
			scsi_fail(c, sense_invalid_cdb_field(CDB_FLAGS_BYTE, CDB_PPC_BIT));
			return;
		}
		uint8_t buf[LOG_BUF_MAX];
		if (plen > sizeof buf) {
			scsi_fail(c, sense_invalid_cdb_field(CDB_LEN_BYTE, FIELD_BIT));
			return;
		}
		size_t n = scsi_data_out(c, buf, plen);
		struct scsi_sense s;
		if (!check_list(buf, n, &s)) {
			scsi_fail(c, s);
			return;
		}
		scsi_done(c, 0);
		return;
	}
	/* No list: page code 0 and subpage 0 name every page (SPC-4 6.6); else the one page named. */
	const struct log_page *pg = NULL;
	if ((cdb[CDB_PAGE_BYTE] & CDB_PAGE_MASK) || cdb[CDB_SUBPAGE_BYTE]) {
		struct scsi_sense s;
		if (!(pg = page_of_cdb(cdb, &s))) {
			scsi_fail(c, s);
			return;
		}
	}
	/* Thresholds cannot be changed, so only cumulative values are ever reset. */
	if ((pcr || pc == PC_DEFAULT_CUMULATIVE) && reset_cumulative(d, pg))
		ua_raise_all(&d->dev.ua, UA_LOG_CHANGED, c->nexus);
	scsi_done(c, 0);
}
