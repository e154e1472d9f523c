/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Commands every device type answers the same way (SPC-4): INQUIRY with its
 * vital product data pages, and the copy of response data into the
 * transport's buffers that honours the allocation length.
 */
#ifndef VTL_SCSI_SPC_H
#define VTL_SCSI_SPC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/bytes.h" /* be_get, be_put */
#include "vtl/scsi/cmd.h"

/* Peripheral device types (SPC-4 table 49). */
enum scsi_device_type {
	SCSI_TYPE_TAPE = 0x01,    /* sequential-access device */
	SCSI_TYPE_CHANGER = 0x08, /* medium changer */
};

/* Who a device says it is in INQUIRY. */
struct scsi_ident {
	enum scsi_device_type type;
	char vendor[9];   /* 8 characters, space padded on the wire */
	char product[17]; /* 16 */
	char revision[5]; /* 4 */
	char serial[33];  /* unit serial number (VPD 80h) */
	bool protect;     /* standard INQUIRY PROTECT: the unit supports protection information (for a tape drive, logical block protection) */
};

/*
 * Copies len bytes of response data into the command's buffers, cut to the
 * allocation length alloc and to the transfer length; sets GOOD and the
 * count. Returns the bytes copied.
 */
size_t scsi_data_in(struct scsi_cmd *c, const void *data, size_t len, size_t alloc);

/* Gathers up to len bytes of the command's data-out buffers (at most its transfer length) into buf; returns the count. */
size_t scsi_data_out(const struct scsi_cmd *c, void *buf, size_t len);

/* Total bytes of the command's buffers that the transfer length lets the device use. */
size_t scsi_buf_len(const struct scsi_cmd *c);

/* Writes s into a field of width bytes, space padded (ASCII fields of INQUIRY and VPD data, SPC-4 4.4.1). */
void spc_put_padded(uint8_t *dst, const char *s, size_t width);

struct scsi_dev;
/* REPORT LUNS (A0h) from the device's LUN list. */
void spc_report_luns(struct scsi_dev *dev, struct scsi_cmd *c);
/* REPORT SUPPORTED OPERATION CODES (A3h/0Ch), generated from the device's command table. */
void spc_report_opcodes(struct scsi_dev *dev, struct scsi_cmd *c);

/* INQUIRY (12h): standard data, or VPD pages 00h, 80h, 83h; anything else INVALID FIELD IN CDB. */
void spc_inquiry(const struct scsi_ident *id, struct scsi_cmd *c);

#define SPC_VPD_MAX 252 /* the most page data (after the 4-byte header) a device page may build */

/* A VPD page of a device type or vendor, beyond the three every device has. */
struct spc_vpd_page {
	uint8_t code; /* above 83h; a table lists them in ascending order */
	/* Writes the page's data after its header into out (SPC_VPD_MAX bytes); returns its length. */
	size_t (*build)(const void *arg, uint8_t *out);
};

/*
 * INQUIRY with the device's own VPD pages too (n of them, in ascending
 * order of code): page 00h lists them after 00h, 80h and 83h; build gets arg.
 */
void spc_inquiry_vpd(const struct scsi_ident *id, const struct spc_vpd_page *pages, size_t n, const void *arg,
		     struct scsi_cmd *c);

/* The 8-byte NAA identifier (NAA 3, locally assigned) VPD 83h reports for a serial number. */
uint64_t spc_naa_of(const char *serial);

#endif
