/* SPDX-License-Identifier: Apache-2.0 */
#include "vtl/scsi/spc_mode.h"

#include "common/scsi_proto.h"
#include "vtl/scsi/spc.h"

/* CDB fields (SPC-4 6.9 MODE SELECT(6), 6.10 (10), 6.11 MODE SENSE(6), 6.12 (10)). */
#define CDB_FLAGS_BYTE 1
#define CDB_DBD 0x08          /* byte 1 bit 3: disable block descriptors */
#define CDB_PF 0x10           /* byte 1 bit 4: page format */
#define CDB_PF_BIT 4
#define CDB_SP 0x01           /* byte 1 bit 0: save pages */
#define CDB_SP_BIT 0
#define CDB_PAGE_BYTE 2
#define CDB_PC_SHIFT 6        /* byte 2 bits 7..6: page control */
#define CDB_PAGE_MASK 0x3F    /* byte 2 bits 5..0: page code */
#define CDB_PAGE_BIT 5
#define CDB_SUBPAGE_BYTE 3
#define CDB_ALLOC6_BYTE 4     /* MODE SENSE(6) allocation length, MODE SELECT(6) parameter list length */
#define CDB_ALLOC10_BYTE 7    /* 2 bytes in the 10-byte forms */

/* Mode parameter header (SPC-4 7.5.4). */
#define HDR6_MEDIUM 1
#define HDR6_DSP 2
#define HDR6_BDL 3
#define HDR10_MEDIUM 2
#define HDR10_DSP 3
#define HDR10_LONGLBA 4      /* byte 4 bit 0: long LBA block descriptors */
#define LONGLBA 0x01
#define LONGLBA_BIT 0
#define HDR10_BDL 6          /* 2 bytes */

/* Page header (SPC-4 7.5.7): byte 0 PS, SPF and the page code. */
#define PAGE_SPF 0x40
#define PAGE_CODE_MASK 0x3F
#define PAGE0_LEN_BYTE 1
#define SUBPAGE_BYTE 1
#define SUBPAGE_LEN_BYTE 2   /* 2 bytes */

void spc_mode_sense_cdb(const struct scsi_cmd *c, struct spc_mode_sense *m)
{
	m->six = c->cdb[0] == SCSI_OP_MODE_SENSE6;
	m->dbd = c->cdb[CDB_FLAGS_BYTE] & CDB_DBD;
	m->pc = (enum spc_mode_pc)(c->cdb[CDB_PAGE_BYTE] >> CDB_PC_SHIFT);
	m->code = c->cdb[CDB_PAGE_BYTE] & CDB_PAGE_MASK;
	m->subpage = c->cdb[CDB_SUBPAGE_BYTE];
	m->alloc = m->six ? c->cdb[CDB_ALLOC6_BYTE] : be_get(c->cdb + CDB_ALLOC10_BYTE, 2);
}

bool spc_mode_sense_known(const struct spc_mode_sense *m, bool code_known, bool sub_known, struct scsi_sense *s)
{
	if (m->pc == SPC_PC_SAVED) {
		*s = sense_of(SK_ILLEGAL_REQUEST, ASC_SAVING_NOT_SUPPORTED);
		return false;
	}
	if (m->code == SPC_MODE_PAGE_ALL) {
		code_known = true;
		sub_known |= m->subpage == 0 || m->subpage == SPC_MODE_SUBPAGE_ALL;
	}
	if (!code_known) {
		*s = sense_invalid_cdb_field(CDB_PAGE_BYTE, CDB_PAGE_BIT);
		return false;
	}
	if (!sub_known) {
		*s = sense_invalid_cdb_field(CDB_SUBPAGE_BYTE, SPC_MODE_FIELD_BIT);
		return false;
	}
	return true;
}

void spc_mode_header(uint8_t *buf, bool six, size_t len, uint8_t medium_type, uint8_t dsp, uint16_t bdl)
{
	/* MODE DATA LENGTH counts the bytes after itself: 1 byte in the 6-byte form, 2 in the 10-byte one. */
	if (six) {
		buf[0] = (uint8_t)(len - 1);
		buf[HDR6_MEDIUM] = medium_type;
		buf[HDR6_DSP] = dsp;
		buf[HDR6_BDL] = (uint8_t)bdl;
	} else {
		be_put(buf, len - 2, 2);
		buf[HDR10_MEDIUM] = medium_type;
		buf[HDR10_DSP] = dsp;
		be_put(buf + HDR10_BDL, bdl, 2);
	}
}

struct scsi_sense spc_mode_pf_needed(void)
{
	return sense_invalid_cdb_field(CDB_FLAGS_BYTE, CDB_PF_BIT);
}

static struct scsi_sense list_length_error(void)
{
	return sense_of(SK_ILLEGAL_REQUEST, ASC_PARAMETER_LIST_LENGTH);
}

bool spc_mode_select_list(struct scsi_cmd *c, uint8_t *buf, size_t max, struct spc_mode_select *m)
{
	uint8_t flags = c->cdb[CDB_FLAGS_BYTE];
	m->six = c->cdb[0] == SCSI_OP_MODE_SELECT6;
	m->pf = flags & CDB_PF;
	size_t plen = m->six ? c->cdb[CDB_ALLOC6_BYTE] : be_get(c->cdb + CDB_ALLOC10_BYTE, 2);
	m->hdr = m->six ? SPC_MODE_HDR6_LEN : SPC_MODE_HDR10_LEN;
	m->dsp_at = m->six ? HDR6_DSP : HDR10_DSP;
	m->bdl_at = m->six ? HDR6_BDL : HDR10_BDL;
	m->n = 0;
	if (flags & CDB_SP) {
		/* No saved pages (SPC-4 6.9): SP=1 is an invalid CDB field. */
		scsi_fail(c, sense_invalid_cdb_field(CDB_FLAGS_BYTE, CDB_SP_BIT));
		return false;
	}
	if (plen == 0) {
		scsi_done(c, 0); /* an empty list is not an error (SPC-4 6.9) */
		return false;
	}
	if (plen > max) {
		scsi_fail(c, sense_invalid_cdb_field(m->six ? CDB_ALLOC6_BYTE : CDB_ALLOC10_BYTE, SPC_MODE_FIELD_BIT));
		return false;
	}
	m->n = scsi_data_out(c, buf, plen);
	if (m->n < m->hdr) {
		scsi_fail(c, list_length_error());
		return false;
	}
	if (!m->six && (buf[HDR10_LONGLBA] & LONGLBA)) {
		scsi_fail(c, sense_invalid_param_field(HDR10_LONGLBA, LONGLBA_BIT));
		return false;
	}
	m->dsp = buf[m->dsp_at];
	m->bdl = m->six ? buf[HDR6_BDL] : be_get(buf + HDR10_BDL, 2);
	return true;
}

bool spc_mode_list_page(const uint8_t *buf, size_t at, size_t n, struct spc_mode_list_page *pg,
			struct scsi_sense *s)
{
	if (n - at < SPC_MODE_PAGE0_HDR) {
		*s = list_length_error();
		return false;
	}
	pg->spf = buf[at] & PAGE_SPF;
	pg->hdr = pg->spf ? SPC_MODE_SUBPAGE_HDR : SPC_MODE_PAGE0_HDR;
	if (n - at < pg->hdr) {
		*s = list_length_error();
		return false;
	}
	/* PS is reserved in MODE SELECT; hosts echo what MODE SENSE gave, so it is ignored. */
	pg->code = buf[at] & PAGE_CODE_MASK;
	pg->subpage = pg->spf ? buf[at + SUBPAGE_BYTE] : 0;
	pg->len = pg->hdr + (pg->spf ? be_get(buf + at + SUBPAGE_LEN_BYTE, 2) : buf[at + PAGE0_LEN_BYTE]);
	return true;
}

struct scsi_sense spc_mode_list_unknown(const struct spc_mode_list_page *pg, size_t at, bool code_known)
{
	if (pg->spf && code_known)
		return sense_invalid_param_field((uint16_t)(at + SUBPAGE_BYTE), SPC_MODE_FIELD_BIT);
	return sense_invalid_param_field((uint16_t)at, CDB_PAGE_BIT);
}

bool spc_mode_list_fits(const struct spc_mode_list_page *pg, size_t at, size_t n, size_t want, struct scsi_sense *s)
{
	if (pg->len != want) {
		*s = sense_invalid_param_field((uint16_t)(at + (pg->spf ? SUBPAGE_LEN_BYTE : PAGE0_LEN_BYTE)),
					       SPC_MODE_FIELD_BIT);
		return false;
	}
	if (n - at < pg->len) {
		*s = list_length_error();
		return false;
	}
	return true;
}

bool spc_mode_list_unchanged(const struct spc_mode_list_page *pg, const uint8_t *p, const uint8_t *cur,
			     const uint8_t *mask, size_t at, struct scsi_sense *s)
{
	for (size_t i = pg->hdr; i < pg->len; i++) {
		uint8_t bad = (uint8_t)((p[i] ^ cur[i]) & ~(mask ? mask[i] : 0));
		if (bad) {
			int bit = 7;
			while (!(bad & (1u << bit)))
				bit--;
			*s = sense_invalid_param_field((uint16_t)(at + i), bit);
			return false;
		}
	}
	return true;
}
