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
};

/*
 * Copies len bytes of response data into the command's buffers, cut to the
 * allocation length alloc and to the transfer length; sets GOOD and the
 * count. Returns the bytes copied.
 */
size_t scsi_data_in(struct scsi_cmd *c, const void *data, size_t len, size_t alloc);

/* INQUIRY (12h): standard data, or VPD pages 00h, 80h, 83h; anything else INVALID FIELD IN CDB. */
void spc_inquiry(const struct scsi_ident *id, struct scsi_cmd *c);

/* The 8-byte NAA identifier (NAA 3, locally assigned) VPD 83h reports for a serial number. */
uint64_t spc_naa_of(const char *serial);

#endif
