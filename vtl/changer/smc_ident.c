/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Who the changer says it is: INQUIRY with the VPD pages of the library it
 * plays. The standard data and pages 00h, 80h and 83h are spc_inquiry's; an
 * IBM 3573-style library adds its firmware build information page (C0h) as
 * the IBM TS3100/TS3200 (Dell TL2000/TL4000) SCSI reference lays it out.
 * Other vendors' libraries answer with the standard pages only.
 */
#include "vtl/changer/smc_internal.h"

#include <string.h>

#include "common/grow.h"

/* IBM 3573 firmware build information VPD page (C0h): offsets in the page data after its 4-byte header. */
#define IBM_VPD_FIRMWARE 0xC0
#define IBM_FW_LEN 0x3C       /* page length */
#define IBM_FW_CHECKSUM 4     /* 4 ASCII characters, after 4 reserved bytes */
#define IBM_FW_CHECKSUM_LEN 4
#define IBM_FW_DATE 8         /* build date, ASCII mm-dd-yyyy, in a 24-byte field */
#define IBM_FW_DATE_LEN 24
/* The emulation has no firmware image to sum or date: fixed values that say so. */
#define IBM_FW_CHECKSUM_OF "0000"
#define IBM_FW_DATE_OF "01-01-2024"

static size_t ibm_firmware(const void *arg, uint8_t *out)
{
	(void)arg;
	memset(out, 0, IBM_FW_LEN);
	spc_put_padded(out + IBM_FW_CHECKSUM, IBM_FW_CHECKSUM_OF, IBM_FW_CHECKSUM_LEN);
	spc_put_padded(out + IBM_FW_DATE, IBM_FW_DATE_OF, IBM_FW_DATE_LEN);
	return IBM_FW_LEN;
}

static const struct spc_vpd_page ibm_pages[] = {
	{IBM_VPD_FIRMWARE, ibm_firmware},
};

void smc_inquiry(struct scsi_dev *dev, struct scsi_cmd *c)
{
	if (strcmp(dev->ident.vendor, "IBM") == 0)
		spc_inquiry_vpd(&dev->ident, ibm_pages, VTL_ARRAY_SIZE(ibm_pages), NULL, c);
	else
		spc_inquiry(&dev->ident, c);
}
