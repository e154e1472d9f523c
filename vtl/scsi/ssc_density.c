/* SPDX-License-Identifier: Apache-2.0 */
/* PLACEHOLDER: answers INVALID COMMAND OPERATION CODE until implemented. */
#include "vtl/scsi/ssc_internal.h"

void ssc_report_density(struct scsi_dev *dev, struct scsi_cmd *c)
{
	(void)dev;
	struct scsi_sense s = sense_invalid_cdb_field(0, -1);
	s.asc = ASC_INVALID_OPCODE;
	scsi_fail(c, s);
}

void ssc_set_capacity(struct scsi_dev *dev, struct scsi_cmd *c)
{
	(void)dev;
	struct scsi_sense s = sense_invalid_cdb_field(0, -1);
	s.asc = ASC_INVALID_OPCODE;
	scsi_fail(c, s);
}

void ssc_format_medium(struct scsi_dev *dev, struct scsi_cmd *c)
{
	(void)dev;
	struct scsi_sense s = sense_invalid_cdb_field(0, -1);
	s.asc = ASC_INVALID_OPCODE;
	scsi_fail(c, s);
}

