/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Table-driven command dispatch: one table per device type maps an opcode
 * (and service action) to its handler, with the checks every handler would
 * otherwise repeat: the CDB length, whether a loaded medium is needed, and
 * whether a reservation by another nexus makes it conflict. REPORT SUPPORTED
 * OPERATION CODES answers from the same tables, so it cannot lie.
 */
#ifndef VTL_SCSI_DISPATCH_H
#define VTL_SCSI_DISPATCH_H

#include <stdbool.h>
#include <stdint.h>

#include "vtl/scsi/cmd.h"

#define SA_NONE 0xFFFF /* the opcode has no service action */

enum scsi_op_flags {
	OP_NEEDS_MEDIUM = 1u << 0, /* NOT READY (with the device's reason) unless a medium is ready */
	OP_UA_EXEMPT = 1u << 1,    /* a pending unit attention is neither reported nor cleared (SAM-5 5.14) */
	/*
	 * Reservation classes: what a command from a nexus that does not hold
	 * the reservation gets (res_conflict). SPC-4 table 64 and SSC-4's table
	 * of tape commands give each command a row; a command with none of
	 * these flags conflicts with every reservation of another nexus, except
	 * that a registered nexus passes a Registrants Only / All Registrants one.
	 */
	OP_RES_ALLOWED = 1u << 2,  /* "Allowed" under every persistent reservation type (TUR, LOG SENSE, PR IN/OUT ...) */
	OP_RES_READ = 1u << 3,     /* allowed under the Write Exclusive types, conflicts under Exclusive Access */
	OP_RES_SPC2_OK = 1u << 4,  /* allowed under another's SPC-2 reservation (SPC-2 5.5.1: INQUIRY, RELEASE ...) */
	OP_RES_PREVENT = 1u << 5,  /* PREVENT ALLOW MEDIUM REMOVAL: allowed everywhere when PREVENT is 0, else none of the above */
};

#define SCSI_USAGE_MAX 16 /* the longest CDB a table entry describes */

struct scsi_dev; /* the device a table serves (drive or changer): vtl/scsi/device.h */
struct scsi_res;

struct scsi_op {
	uint8_t opcode;
	uint16_t service_action; /* SA_NONE, or the value in the CDB's service action field */
	uint8_t cdb_len;
	unsigned flags;
	const char *name;
	void (*handler)(struct scsi_dev *dev, struct scsi_cmd *cmd);
	/*
	 * CDB usage map for REPORT SUPPORTED OPERATION CODES (SPC-4 6.35.3):
	 * byte 0 the opcode, the service action (if any) where the CDB has it,
	 * elsewhere a 1 for each bit the handler honours; cdb_len bytes are used.
	 */
	uint8_t usage[SCSI_USAGE_MAX];
	uint32_t timeout; /* recommended command timeout in seconds (SPC-4 6.35.4); 0: none given */
};

/*
 * CDB usage maps (SPC-4 6.35.3): byte 0 the opcode, the service action where
 * the CDB carries it (byte 1), elsewhere a 1 for each bit the handler honours;
 * the control byte's NACA and LINK are not supported, so it maps to 0.
 */
#define U6(op, b1, b2, b3, b4) {op, b1, b2, b3, b4, 0x00}
#define U10(op, b1, b2, b3, b4, b5, b6, b7, b8) {op, b1, b2, b3, b4, b5, b6, b7, b8, 0x00}
#define U12(op, b1, b2, b3, b4, b5, b6, b7, b8, b9, b10) {op, b1, b2, b3, b4, b5, b6, b7, b8, b9, b10, 0x00}

/* What the dispatcher asks of the device for its checks. */
struct scsi_dev_state {
	const struct scsi_sense *not_ready; /* sense for OP_NEEDS_MEDIUM commands; NULL when ready */
	const struct scsi_res *res;         /* reservations to check, or NULL for none */
};

/*
 * Finds the entry for cmd's CDB in table (n entries); NULL when the opcode
 * (or its service action) is not there.
 */
const struct scsi_op *scsi_op_find(const struct scsi_op *table, size_t n, const struct scsi_cmd *cmd);

/*
 * Runs cmd through table: unknown opcode -> ILLEGAL REQUEST / INVALID COMMAND
 * OPERATION CODE (pointing at byte 0, or at the service action field); a CDB
 * shorter than the command's length -> INVALID FIELD IN CDB; a reservation
 * conflict (res_conflict); not ready -> st->not_ready; else the handler.
 */
void scsi_dispatch(const struct scsi_op *table, size_t n, struct scsi_dev *dev, const struct scsi_dev_state *st,
		   struct scsi_cmd *cmd);

/* The CDB length the opcode's group code implies (SPC-4 4.3.2), 0 for vendor-specific groups. */
uint8_t scsi_cdb_len_of(uint8_t opcode);

#endif
