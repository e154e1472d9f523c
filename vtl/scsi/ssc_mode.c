/* SPDX-License-Identifier: Apache-2.0 */
/* PLACEHOLDER: answers INVALID COMMAND OPERATION CODE until implemented. */
#include "vtl/scsi/ssc_internal.h"

void ssc_mode_sense(struct scsi_dev *dev, struct scsi_cmd *c)
{
	(void)dev;
	struct scsi_sense s = sense_invalid_cdb_field(0, -1);
	s.asc = ASC_INVALID_OPCODE;
	scsi_fail(c, s);
}

void ssc_mode_select(struct scsi_dev *dev, struct scsi_cmd *c)
{
	(void)dev;
	struct scsi_sense s = sense_invalid_cdb_field(0, -1);
	s.asc = ASC_INVALID_OPCODE;
	scsi_fail(c, s);
}

void ssc_mode_init(struct ssc_drive *d)
{
	d->mode.buffered = true;
	d->mode.compression = true;
}
