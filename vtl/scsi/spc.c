/* SPDX-License-Identifier: Apache-2.0 */
#include "vtl/scsi/spc.h"

#include <stdlib.h>
#include <string.h>

#include "vtl/scsi/device.h"

/* INQUIRY CDB (SPC-4 6.6.1). */
#define INQ_EVPD_BYTE 1
#define INQ_EVPD_BIT 0x01
#define INQ_PAGE_BYTE 2
#define INQ_ALLOC_BYTE 3 /* 2 bytes, big-endian */

/* Standard INQUIRY data (SPC-4 table 137). */
#define STD_LEN 96
#define STD_RMB 0x80             /* byte 1: removable medium */
#define STD_VERSION_SPC4 0x06    /* byte 2 */
#define STD_HISUP_FORMAT2 0x12   /* byte 3: HISUP, response data format 2 */
#define STD_PROTECT 0x01         /* byte 5: PROTECT (SPC-4 standard INQUIRY data) */
#define STD_CMDQUE 0x02          /* byte 7 */
#define STD_VENDOR 8
#define STD_PRODUCT 16
#define STD_REVISION 32

/* VPD pages (SPC-4 7.8). */
#define VPD_SUPPORTED 0x00
#define VPD_SERIAL 0x80
#define VPD_DEVICE_ID 0x83
#define VPD_HEADER 4
/* Designation descriptors (SPC-4 7.8.6): code set, association/type. */
#define DESIG_BINARY 0x01
#define DESIG_ASCII 0x02
#define DESIG_T10_VENDOR 0x01
#define DESIG_NAA 0x03
#define NAA_LOCAL 0x3

size_t scsi_data_in(struct scsi_cmd *c, const void *data, size_t len, size_t alloc)
{
	size_t n = len < alloc ? len : alloc;
	if (n > c->xfer_len)
		n = c->xfer_len;
	size_t done = 0;
	for (int i = 0; i < c->iov_cnt && done < n; i++) {
		size_t k = n - done < c->iov[i].iov_len ? n - done : c->iov[i].iov_len;
		memcpy(c->iov[i].iov_base, (const uint8_t *)data + done, k);
		done += k;
	}
	scsi_done(c, done);
	return done;
}

size_t scsi_buf_len(const struct scsi_cmd *c)
{
	size_t total = 0;
	for (int i = 0; i < c->iov_cnt; i++)
		total += c->iov[i].iov_len;
	return total < c->xfer_len ? total : c->xfer_len;
}

size_t scsi_data_out(const struct scsi_cmd *c, void *buf, size_t len)
{
	size_t n = scsi_buf_len(c);
	if (n > len)
		n = len;
	size_t done = 0;
	for (int i = 0; i < c->iov_cnt && done < n; i++) {
		size_t k = n - done < c->iov[i].iov_len ? n - done : c->iov[i].iov_len;
		memcpy((uint8_t *)buf + done, c->iov[i].iov_base, k);
		done += k;
	}
	return done;
}

void spc_put_padded(uint8_t *dst, const char *s, size_t width)
{
	size_t n = strnlen(s, width);
	memset(dst, ' ', width);
	memcpy(dst, s, n);
}

uint64_t spc_naa_of(const char *serial)
{
	/* FNV-1a over the serial: stable, and different serials give different identifiers. */
	uint64_t h = 14695981039346656037ull;
	for (const unsigned char *p = (const unsigned char *)serial; *p; p++)
		h = (h ^ *p) * 1099511628211ull;
	return ((uint64_t)NAA_LOCAL << 60) | (h & 0x0FFFFFFFFFFFFFFFull);
}

static size_t vpd_device_id(const struct scsi_ident *id, uint8_t *b)
{
	size_t at = VPD_HEADER;
	/* T10 vendor identification: vendor (8) + product (16) + serial. */
	size_t slen = strnlen(id->serial, sizeof id->serial - 1);
	b[at] = DESIG_ASCII;
	b[at + 1] = DESIG_T10_VENDOR;
	b[at + 3] = (uint8_t)(8 + 16 + slen);
	spc_put_padded(b + at + 4, id->vendor, 8);
	spc_put_padded(b + at + 12, id->product, 16);
	memcpy(b + at + 28, id->serial, slen);
	at += 4 + 8 + 16 + slen;
	/* NAA, 8 bytes. */
	uint64_t naa = spc_naa_of(id->serial);
	b[at] = DESIG_BINARY;
	b[at + 1] = DESIG_NAA;
	b[at + 3] = 8;
	for (int i = 0; i < 8; i++)
		b[at + 4 + i] = (uint8_t)(naa >> (56 - 8 * i));
	at += 12;
	return at;
}

void spc_inquiry(const struct scsi_ident *id, struct scsi_cmd *c)
{
	spc_inquiry_vpd(id, NULL, 0, NULL, c);
}

void spc_inquiry_vpd(const struct scsi_ident *id, const struct spc_vpd_page *pages, size_t n, const void *arg,
		     struct scsi_cmd *c)
{
	uint8_t b[VPD_HEADER + SPC_VPD_MAX];
	memset(b, 0, sizeof b);
	size_t alloc = (size_t)c->cdb[INQ_ALLOC_BYTE] << 8 | c->cdb[INQ_ALLOC_BYTE + 1];
	uint8_t page = c->cdb[INQ_PAGE_BYTE];
	size_t len;
	if (!(c->cdb[INQ_EVPD_BYTE] & INQ_EVPD_BIT)) {
		if (page != 0) {
			scsi_fail(c, sense_invalid_cdb_field(INQ_PAGE_BYTE, -1));
			return;
		}
		b[0] = (uint8_t)id->type;
		b[1] = STD_RMB;
		b[2] = STD_VERSION_SPC4;
		b[3] = STD_HISUP_FORMAT2;
		b[4] = STD_LEN - 5;
		b[5] = id->protect ? STD_PROTECT : 0;
		b[7] = STD_CMDQUE;
		spc_put_padded(b + STD_VENDOR, id->vendor, 8);
		spc_put_padded(b + STD_PRODUCT, id->product, 16);
		spc_put_padded(b + STD_REVISION, id->revision, 4);
		len = STD_LEN;
	} else {
		b[0] = (uint8_t)id->type;
		b[1] = page;
		switch (page) {
		case VPD_SUPPORTED:
			b[4] = VPD_SUPPORTED;
			b[5] = VPD_SERIAL;
			b[6] = VPD_DEVICE_ID;
			len = VPD_HEADER + 3;
			for (size_t i = 0; i < n && len < sizeof b; i++)
				b[len++] = pages[i].code;
			break;
		case VPD_SERIAL: {
			size_t slen = strnlen(id->serial, sizeof id->serial - 1);
			memcpy(b + VPD_HEADER, id->serial, slen);
			len = VPD_HEADER + slen;
			break;
		}
		case VPD_DEVICE_ID:
			len = vpd_device_id(id, b);
			break;
		default: {
			size_t i = 0;
			while (i < n && pages[i].code != page)
				i++;
			if (i == n) {
				scsi_fail(c, sense_invalid_cdb_field(INQ_PAGE_BYTE, -1));
				return;
			}
			len = VPD_HEADER + pages[i].build(arg, b + VPD_HEADER);
			break;
		}
		}
		b[2] = (uint8_t)((len - VPD_HEADER) >> 8);
		b[3] = (uint8_t)(len - VPD_HEADER);
	}
	scsi_data_in(c, b, len, alloc);
}

/* REPORT LUNS (SPC-4 6.33). */
#define RL_SELECT_BYTE 2
#define RL_ALLOC_BYTE 6 /* 4 bytes */
#define RL_MIN_ALLOC 16
enum { RL_SELECT_ALL = 0x00, RL_SELECT_WELL_KNOWN = 0x01, RL_SELECT_BOTH = 0x02 };
#define RL_HEADER 8     /* LUN LIST LENGTH (4), reserved (4) */
#define LUN_LEN 8
/* Single-level LUNs (SAM-5 4.7): peripheral device addressing below 256, flat space above. */
#define LUN_PERIPHERAL_MAX 0xFF
#define LUN_FLAT 0x40
#define LUN_FLAT_MAX 0x3FFF

void spc_report_luns(struct scsi_dev *dev, struct scsi_cmd *c)
{
	uint8_t select = c->cdb[RL_SELECT_BYTE];
	if (select != RL_SELECT_ALL && select != RL_SELECT_WELL_KNOWN && select != RL_SELECT_BOTH) {
		scsi_fail(c, sense_invalid_cdb_field(RL_SELECT_BYTE, -1));
		return;
	}
	uint32_t alloc = (uint32_t)be_get(c->cdb + RL_ALLOC_BYTE, 4);
	if (alloc < RL_MIN_ALLOC) {
		scsi_fail(c, sense_invalid_cdb_field(RL_ALLOC_BYTE, -1));
		return;
	}
	uint8_t b[RL_HEADER + SCSI_MAX_LUNS * LUN_LEN];
	memset(b, 0, sizeof b);
	size_t at = RL_HEADER;
	/* There are no well-known logical units: 01h lists none, 02h the same as 00h. */
	for (unsigned i = 0; select != RL_SELECT_WELL_KNOWN && i < dev->n_luns && i < SCSI_MAX_LUNS; i++) {
		uint16_t lun = dev->luns[i];
		if (lun > LUN_FLAT_MAX)
			continue; /* not a single-level LUN: a front end never configures one */
		b[at] = lun > LUN_PERIPHERAL_MAX ? (uint8_t)(LUN_FLAT | lun >> 8) : 0;
		b[at + 1] = (uint8_t)lun;
		at += LUN_LEN;
	}
	be_put(b, at - RL_HEADER, 4);
	scsi_data_in(c, b, at, alloc);
}

/* REPORT SUPPORTED OPERATION CODES (SPC-4 6.35). */
#define RSOC_OPTIONS_BYTE 2
#define RSOC_RCTD 0x80          /* return command timeouts descriptors */
#define RSOC_OPTIONS_MASK 0x07
#define RSOC_OPTIONS_BIT 2      /* the field's most significant bit, for the field pointer */
#define RSOC_OPCODE_BYTE 3
#define RSOC_SA_BYTE 4          /* 2 bytes */
#define RSOC_ALLOC_BYTE 6       /* 4 bytes */
enum { RSOC_ALL = 0, RSOC_ONE = 1, RSOC_ONE_SA = 2, RSOC_ONE_ANY = 3 };
/* All-commands format (table 288) and its command descriptor (table 289). */
#define RSOC_ALL_HEADER 4       /* COMMAND DATA LENGTH */
#define RSOC_DESC_LEN 8
#define RSOC_DESC_SA 2          /* 2 bytes */
#define RSOC_DESC_FLAGS 5       /* CTDP (bit 1), SERVACTV (bit 0) */
#define RSOC_DESC_CTDP 0x02
#define RSOC_DESC_SERVACTV 0x01
#define RSOC_DESC_CDB_LEN 6     /* 2 bytes */
/* One-command format (table 290). */
#define RSOC_ONE_FLAGS 1        /* CTDP (bit 7), SUPPORT (bits 2..0) */
#define RSOC_ONE_CTDP 0x80
#define RSOC_SUPPORT_NONE 0x1   /* not supported */
#define RSOC_SUPPORT_STD 0x3    /* supported as the standard says */
#define RSOC_ONE_CDB_SIZE 2     /* 2 bytes */
#define RSOC_ONE_HEADER 4
/* Command timeouts descriptor (6.35.4, table 292). */
#define CTD_LEN 12
#define CTD_DESC_LEN 0x0A
#define CTD_NOMINAL 4           /* 4 bytes; 0: none given */
#define CTD_RECOMMENDED 8       /* 4 bytes */

static size_t put_timeouts(uint8_t *p, const struct scsi_op *op)
{
	memset(p, 0, CTD_LEN);
	be_put(p, CTD_DESC_LEN, 2);
	be_put(p + CTD_RECOMMENDED, op->timeout, 4);
	return CTD_LEN;
}

static bool has_service_actions(const struct scsi_dev *dev, uint8_t opcode)
{
	for (size_t i = 0; i < dev->n_ops; i++)
		if (dev->ops[i].opcode == opcode && dev->ops[i].service_action != SA_NONE)
			return true;
	return false;
}

static const struct scsi_op *op_of(const struct scsi_dev *dev, uint8_t opcode, uint16_t sa)
{
	for (size_t i = 0; i < dev->n_ops; i++)
		if (dev->ops[i].opcode == opcode && dev->ops[i].service_action == sa)
			return &dev->ops[i];
	return NULL;
}

static void rsoc_all(struct scsi_dev *dev, struct scsi_cmd *c, bool rctd, uint32_t alloc)
{
	size_t each = RSOC_DESC_LEN + (rctd ? CTD_LEN : 0);
	uint8_t *b = calloc(1, RSOC_ALL_HEADER + dev->n_ops * each);
	if (!b) {
		scsi_fail(c, sense_of(SK_HARDWARE_ERROR, ASC_INTERNAL_TARGET_FAILURE));
		return;
	}
	size_t at = RSOC_ALL_HEADER;
	for (size_t i = 0; i < dev->n_ops; i++) {
		const struct scsi_op *op = &dev->ops[i];
		uint8_t *d = b + at;
		d[0] = op->opcode;
		if (op->service_action != SA_NONE) {
			be_put(d + RSOC_DESC_SA, op->service_action, 2);
			d[RSOC_DESC_FLAGS] |= RSOC_DESC_SERVACTV;
		}
		be_put(d + RSOC_DESC_CDB_LEN, op->cdb_len, 2);
		at += RSOC_DESC_LEN;
		if (rctd) {
			d[RSOC_DESC_FLAGS] |= RSOC_DESC_CTDP;
			at += put_timeouts(b + at, op);
		}
	}
	be_put(b, at - RSOC_ALL_HEADER, 4);
	scsi_data_in(c, b, at, alloc);
	free(b);
}

void spc_report_opcodes(struct scsi_dev *dev, struct scsi_cmd *c)
{
	bool rctd = c->cdb[RSOC_OPTIONS_BYTE] & RSOC_RCTD;
	uint8_t option = c->cdb[RSOC_OPTIONS_BYTE] & RSOC_OPTIONS_MASK;
	uint8_t opcode = c->cdb[RSOC_OPCODE_BYTE];
	uint16_t sa = (uint16_t)be_get(c->cdb + RSOC_SA_BYTE, 2);
	uint32_t alloc = (uint32_t)be_get(c->cdb + RSOC_ALLOC_BYTE, 4);
	if (option > RSOC_ONE_ANY) {
		scsi_fail(c, sense_invalid_cdb_field(RSOC_OPTIONS_BYTE, RSOC_OPTIONS_BIT));
		return;
	}
	if (option == RSOC_ALL) {
		rsoc_all(dev, c, rctd, alloc);
		return;
	}
	/* 001b names an opcode without service actions, 010b one with; 011b either (SPC-4 table 287). */
	bool with_sa = has_service_actions(dev, opcode);
	if ((option == RSOC_ONE && with_sa) || (option == RSOC_ONE_SA && !with_sa && op_of(dev, opcode, SA_NONE))) {
		scsi_fail(c, sense_invalid_cdb_field(RSOC_OPTIONS_BYTE, RSOC_OPTIONS_BIT));
		return;
	}
	const struct scsi_op *op = op_of(dev, opcode, with_sa ? sa : SA_NONE);
	uint8_t b[RSOC_ONE_HEADER + SCSI_USAGE_MAX + CTD_LEN];
	memset(b, 0, sizeof b);
	size_t at = RSOC_ONE_HEADER;
	if (!op || (option == RSOC_ONE_SA && !with_sa)) {
		b[RSOC_ONE_FLAGS] = RSOC_SUPPORT_NONE;
	} else {
		uint8_t n = op->cdb_len <= SCSI_USAGE_MAX ? op->cdb_len : SCSI_USAGE_MAX;
		b[RSOC_ONE_FLAGS] = RSOC_SUPPORT_STD;
		be_put(b + RSOC_ONE_CDB_SIZE, n, 2);
		memcpy(b + at, op->usage, n);
		at += n;
		if (rctd) {
			b[RSOC_ONE_FLAGS] |= RSOC_ONE_CTDP;
			at += put_timeouts(b + at, op);
		}
	}
	scsi_data_in(c, b, at, alloc);
}
