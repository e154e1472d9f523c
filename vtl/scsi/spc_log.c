/* SPDX-License-Identifier: Apache-2.0 */
#include "vtl/scsi/spc_log.h"

#include "vtl/scsi/spc.h"

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

/* Log page header and parameter control byte (SPC-4 7.3.2). */
#define PAGE_DS 0x80           /* disable save: no log parameter is saved */
#define PAGE_SPF 0x40
#define PAGE_LEN_BYTE 2        /* 2 bytes */
#define CTL_TSD 0x20           /* parameters are never saved implicitly */
#define CTL_BOUNDED_COUNTER 0x00 /* FORMAT AND LINKING 00b */
#define CTL_BINARY_LIST 0x03   /* FORMAT AND LINKING 11b */
#define TAPEALERT_PARAM_LEN (SPC_LOG_PARAM_HDR + 1)

#define LOG_BUF_MAX 1024       /* the longest page (TapeAlert: 4 + 64 * 5 bytes) fits */

static uint64_t all_ones(unsigned len)
{
	return len >= 8 ? UINT64_MAX : (1ull << (8 * len)) - 1;
}

void spc_log_param(struct spc_log_out *o, uint16_t code, enum spc_log_kind kind, unsigned len, uint64_t v)
{
	if (code < o->pointer)
		return;
	uint64_t value = v;
	if (o->pc == SPC_LOG_THRESHOLD || o->pc == SPC_LOG_DEFAULT_THRESHOLD)
		value = kind == SPC_LOG_COUNTER ? all_ones(len) : 0;
	else if (o->pc == SPC_LOG_DEFAULT_CUMULATIVE)
		value = 0;
	uint8_t *p = o->buf + o->at;
	be_put(p, code, 2);
	p[2] = (uint8_t)(CTL_TSD | (kind == SPC_LOG_COUNTER ? CTL_BOUNDED_COUNTER : CTL_BINARY_LIST));
	p[3] = (uint8_t)len;
	be_put(p + SPC_LOG_PARAM_HDR, value, len);
	o->at += SPC_LOG_PARAM_HDR + len;
}

void spc_log_tapealert(struct spc_log_out *o, uint64_t flags)
{
	for (uint16_t f = 1; f <= SPC_TAPEALERT_FLAGS; f++)
		spc_log_param(o, f, SPC_LOG_LIST, 1, (flags >> (f - 1)) & 1);
}

uint64_t spc_log_tapealert_read(uint64_t flags, enum spc_log_pc pc, uint16_t pointer, size_t done)
{
	if (pc != SPC_LOG_CUMULATIVE)
		return flags;
	/* Reading a flag clears it (TapeAlert v3); a flag the allocation length cut off stays set. */
	uint16_t first = pointer ? pointer : 1;
	for (uint16_t f = first; f <= SPC_TAPEALERT_FLAGS; f++)
		if (SPC_LOG_PAGE_HDR + (size_t)(f - first + 1) * TAPEALERT_PARAM_LEN <= done)
			flags &= ~(1ull << (f - 1));
	return flags;
}

/* The page code/subpage names in pages, or NULL with *s at the page code, or at the subpage of a known code. */
static const struct spc_log_page *page_find(const struct spc_log_page *pages, size_t n, uint8_t code,
					    uint8_t subpage, struct scsi_sense *s)
{
	bool code_known = false;
	for (size_t i = 0; i < n; i++) {
		if (pages[i].code == code && pages[i].subpage == subpage)
			return &pages[i];
		code_known |= pages[i].code == code;
	}
	*s = code_known ? sense_invalid_cdb_field(CDB_SUBPAGE_BYTE, FIELD_BIT)
			: sense_invalid_cdb_field(CDB_PAGE_BYTE, CDB_PAGE_BIT);
	return NULL;
}

const struct spc_log_page *spc_log_sense_page(struct scsi_cmd *c, const struct spc_log_page *pages, size_t n,
					      struct spc_log_sense *l)
{
	const uint8_t *cdb = c->cdb;
	if (cdb[CDB_FLAGS_BYTE] & CDB_SP) {
		scsi_fail(c, sense_invalid_cdb_field(CDB_FLAGS_BYTE, CDB_SP_BIT));
		return NULL;
	}
	if (cdb[CDB_FLAGS_BYTE] & CDB_PPC) {
		/* Only parameters that changed since the last command: not supported, as on IBM LTO drives. */
		scsi_fail(c, sense_invalid_cdb_field(CDB_FLAGS_BYTE, CDB_PPC_BIT));
		return NULL;
	}
	l->pc = (enum spc_log_pc)(cdb[CDB_PAGE_BYTE] >> CDB_PC_SHIFT);
	l->code = cdb[CDB_PAGE_BYTE] & CDB_PAGE_MASK;
	l->subpage = cdb[CDB_SUBPAGE_BYTE];
	l->pointer = (uint16_t)be_get(cdb + CDB_POINTER_BYTE, 2);
	l->alloc = be_get(cdb + CDB_LEN_BYTE, 2);
	struct scsi_sense s;
	const struct spc_log_page *pg = page_find(pages, n, l->code, l->subpage, &s);
	if (!pg) {
		scsi_fail(c, s);
		return NULL;
	}
	if (l->pointer > pg->last_param) {
		scsi_fail(c, sense_invalid_cdb_field(CDB_POINTER_BYTE, FIELD_BIT));
		return NULL;
	}
	return pg;
}

/* Page 00h: the page codes of the table (subpage 00h); subpage FFh: every code and subpage. */
static void render_supported(const struct spc_log_page *pages, size_t n, bool subpages, struct spc_log_out *o)
{
	for (size_t i = 0; i < n; i++) {
		if (!subpages && pages[i].subpage != 0)
			continue;
		o->buf[o->at++] = pages[i].code;
		if (subpages)
			o->buf[o->at++] = pages[i].subpage;
	}
}

size_t spc_log_sense_answer(struct scsi_cmd *c, const struct spc_log_page *pages, size_t n,
			    const struct spc_log_page *pg, const struct spc_log_sense *l, const void *src)
{
	uint8_t buf[LOG_BUF_MAX];
	struct spc_log_out o = {.buf = buf, .at = SPC_LOG_PAGE_HDR, .pointer = l->pointer, .pc = l->pc};
	if (pg->render)
		pg->render(src, &o);
	else
		render_supported(pages, n, pg->subpage == SPC_LOG_SUBPAGE_ALL, &o);
	buf[0] = (uint8_t)(PAGE_DS | (pg->subpage ? PAGE_SPF : 0) | pg->code);
	buf[1] = pg->subpage;
	be_put(buf + PAGE_LEN_BYTE, o.at - SPC_LOG_PAGE_HDR, 2);
	return scsi_data_in(c, buf, o.at, l->alloc);
}

/* Checks a LOG SELECT parameter list: pages of the table other than 00h, whole, and without parameters. */
static bool check_list(const struct spc_log_page *pages, size_t np, const uint8_t *buf, size_t n,
		       struct scsi_sense *s)
{
	size_t at = 0;
	while (at < n) {
		if (n - at < SPC_LOG_PAGE_HDR) {
			*s = sense_of(SK_ILLEGAL_REQUEST, ASC_PARAMETER_LIST_LENGTH);
			return false;
		}
		uint8_t code = buf[at] & CDB_PAGE_MASK;
		uint8_t subpage = (buf[at] & PAGE_SPF) ? buf[at + 1] : 0;
		size_t len = be_get(buf + at + PAGE_LEN_BYTE, 2);
		struct scsi_sense unused;
		if (code == SPC_LOG_SUPPORTED || !page_find(pages, np, code, subpage, &unused)) {
			*s = sense_invalid_param_field((uint16_t)at, CDB_PAGE_BIT);
			return false;
		}
		if (n - at - SPC_LOG_PAGE_HDR < len) {
			*s = sense_of(SK_ILLEGAL_REQUEST, ASC_PARAMETER_LIST_LENGTH);
			return false;
		}
		if (len) {
			*s = sense_invalid_param_field((uint16_t)(at + SPC_LOG_PAGE_HDR), FIELD_BIT);
			return false;
		}
		at += SPC_LOG_PAGE_HDR;
	}
	return true;
}

bool spc_log_select(struct scsi_cmd *c, const struct spc_log_page *pages, size_t n, const struct spc_log_page **pg,
		    bool *reset)
{
	const uint8_t *cdb = c->cdb;
	bool pcr = cdb[CDB_FLAGS_BYTE] & CDB_PPC;
	enum spc_log_pc pc = (enum spc_log_pc)(cdb[CDB_PAGE_BYTE] >> CDB_PC_SHIFT);
	uint8_t code = cdb[CDB_PAGE_BYTE] & CDB_PAGE_MASK, subpage = cdb[CDB_SUBPAGE_BYTE];
	size_t plen = be_get(cdb + CDB_LEN_BYTE, 2);
	*pg = NULL;
	*reset = false;
	if (cdb[CDB_FLAGS_BYTE] & CDB_SP) {
		scsi_fail(c, sense_invalid_cdb_field(CDB_FLAGS_BYTE, CDB_SP_BIT));
		return false;
	}
	struct scsi_sense s;
	if (plen) {
		/* PCR resets; it comes without parameters (SPC-4 6.6). */
		if (pcr) {
			scsi_fail(c, sense_invalid_cdb_field(CDB_FLAGS_BYTE, CDB_PPC_BIT));
			return false;
		}
		uint8_t buf[LOG_BUF_MAX];
		if (plen > sizeof buf) {
			scsi_fail(c, sense_invalid_cdb_field(CDB_LEN_BYTE, FIELD_BIT));
			return false;
		}
		size_t got = scsi_data_out(c, buf, plen);
		if (!check_list(pages, n, buf, got, &s)) {
			scsi_fail(c, s);
			return false;
		}
		return true;
	}
	/* No list: page code 0 and subpage 0 name every page (SPC-4 6.6); else the one page named. */
	if ((code || subpage) && !(*pg = page_find(pages, n, code, subpage, &s))) {
		scsi_fail(c, s);
		return false;
	}
	/* Thresholds cannot be changed, so only cumulative values are ever reset. */
	*reset = pcr || pc == SPC_LOG_DEFAULT_CUMULATIVE;
	return true;
}
