/* SPDX-License-Identifier: Apache-2.0 */
#include "vtl/scsi/spc.h"

#include <string.h>

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

static void put_padded(uint8_t *dst, const char *s, size_t width)
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
	put_padded(b + at + 4, id->vendor, 8);
	put_padded(b + at + 12, id->product, 16);
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
		b[7] = STD_CMDQUE;
		put_padded(b + STD_VENDOR, id->vendor, 8);
		put_padded(b + STD_PRODUCT, id->product, 16);
		put_padded(b + STD_REVISION, id->revision, 4);
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

/* PLACEHOLDER until implemented: INVALID COMMAND OPERATION CODE. */
void spc_report_luns(struct scsi_dev *dev, struct scsi_cmd *c)
{
	(void)dev;
	struct scsi_sense s = sense_invalid_cdb_field(0, -1);
	s.asc = ASC_INVALID_OPCODE;
	scsi_fail(c, s);
}

void spc_report_opcodes(struct scsi_dev *dev, struct scsi_cmd *c)
{
	(void)dev;
	struct scsi_sense s = sense_invalid_cdb_field(0, -1);
	s.asc = ASC_INVALID_OPCODE;
	scsi_fail(c, s);
}
