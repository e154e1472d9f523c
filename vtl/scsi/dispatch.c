/* SPDX-License-Identifier: Apache-2.0 */
#include "vtl/scsi/dispatch.h"

#include "common/scsi_proto.h"
#include "vtl/scsi/reserve.h"

/* Opcodes whose CDB carries a service action (SPC-4: byte 1, bits 4..0). */
static bool has_service_action(uint8_t opcode)
{
	return opcode == SCSI_OP_SERVICE_ACTION_IN16 || opcode == SCSI_OP_MAINTENANCE_IN ||
	       opcode == SCSI_OP_MAINTENANCE_OUT || opcode == SCSI_OP_PERSISTENT_RESERVE_IN ||
	       opcode == SCSI_OP_PERSISTENT_RESERVE_OUT;
}

uint8_t scsi_cdb_len_of(uint8_t opcode)
{
	return scsi_cdb_group_len(opcode);
}

const struct scsi_op *scsi_op_find(const struct scsi_op *table, size_t n, const struct scsi_cmd *cmd)
{
	if (cmd->cdb_len == 0)
		return NULL;
	uint8_t opcode = cmd->cdb[0];
	uint16_t sa = has_service_action(opcode) && cmd->cdb_len > SCSI_CDB_SA_BYTE
			      ? (uint16_t)(cmd->cdb[SCSI_CDB_SA_BYTE] & SCSI_CDB_SA_MASK)
			      : SA_NONE;
	for (size_t i = 0; i < n; i++)
		if (table[i].opcode == opcode && table[i].service_action == sa)
			return &table[i];
	return NULL;
}

void scsi_dispatch(const struct scsi_op *table, size_t n, struct scsi_dev *dev, const struct scsi_dev_state *st,
		   struct scsi_cmd *cmd)
{
	const struct scsi_op *op = scsi_op_find(table, n, cmd);
	if (!op) {
		bool known_opcode = false;
		for (size_t i = 0; cmd->cdb_len && i < n && !known_opcode; i++)
			known_opcode = table[i].opcode == cmd->cdb[0];
		/*
		 * A known opcode with an unknown service action points at the service
		 * action field, or at the last byte when the CDB ends before it.
		 */
		struct scsi_sense s = !known_opcode ? sense_invalid_cdb_field(0, -1)
				      : cmd->cdb_len > SCSI_CDB_SA_BYTE ? sense_invalid_cdb_field(SCSI_CDB_SA_BYTE, 4)
				      : sense_invalid_cdb_field((uint16_t)(cmd->cdb_len - 1), -1);
		s.asc = known_opcode ? ASC_INVALID_FIELD_IN_CDB : ASC_INVALID_OPCODE;
		scsi_fail(cmd, s);
		return;
	}
	if (cmd->cdb_len < op->cdb_len) {
		scsi_fail(cmd, sense_invalid_cdb_field(cmd->cdb_len ? (uint16_t)(cmd->cdb_len - 1) : 0, -1));
		return;
	}
	if (st->res && res_conflict(st->res, cmd, op->flags)) {
		cmd->status = SCSI_RESERVATION_CONFLICT;
		cmd->data_len = 0;
		return;
	}
	if ((op->flags & OP_NEEDS_MEDIUM) && st->not_ready) {
		scsi_fail(cmd, *st->not_ready);
		return;
	}
	op->handler(dev, cmd);
}
