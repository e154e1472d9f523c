/* SPDX-License-Identifier: Apache-2.0 */
/* PLACEHOLDER: answers INVALID COMMAND OPERATION CODE until implemented. */
#include "vtl/scsi/reserve.h"

#include <string.h>

#include "vtl/scsi/device.h"

void spc_reserve(struct scsi_dev *dev, struct scsi_cmd *c)
{
	(void)dev;
	struct scsi_sense s = sense_invalid_cdb_field(0, -1);
	s.asc = ASC_INVALID_OPCODE;
	scsi_fail(c, s);
}

void spc_release(struct scsi_dev *dev, struct scsi_cmd *c)
{
	(void)dev;
	struct scsi_sense s = sense_invalid_cdb_field(0, -1);
	s.asc = ASC_INVALID_OPCODE;
	scsi_fail(c, s);
}

void spc_pr_in(struct scsi_dev *dev, struct scsi_cmd *c)
{
	(void)dev;
	struct scsi_sense s = sense_invalid_cdb_field(0, -1);
	s.asc = ASC_INVALID_OPCODE;
	scsi_fail(c, s);
}

void spc_pr_out(struct scsi_dev *dev, struct scsi_cmd *c)
{
	(void)dev;
	struct scsi_sense s = sense_invalid_cdb_field(0, -1);
	s.asc = ASC_INVALID_OPCODE;
	scsi_fail(c, s);
}

void res_init(struct scsi_res *r)
{
	memset(r, 0, sizeof *r);
}

bool res_conflict(const struct scsi_res *r, uint64_t nexus, unsigned op_flags)
{
	return r->spc2_held && r->spc2_nexus != nexus && !(op_flags & OP_RES_SPC2_OK);
}

void res_nexus_lost(struct scsi_res *r, uint64_t nexus)
{
	if (r->spc2_held && r->spc2_nexus == nexus)
		r->spc2_held = false;
}

void res_reset(struct scsi_res *r)
{
	r->spc2_held = false;
}
