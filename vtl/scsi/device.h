/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What every emulated logical unit has, whatever its type: who it says it
 * is, its command table, unit attentions per initiator and reservations.
 * A drive or a changer embeds a struct scsi_dev as its first member and runs
 * every command through scsi_dev_execute, which applies SAM/SPC's common
 * rules before the handler sees the command.
 */
#ifndef VTL_SCSI_DEVICE_H
#define VTL_SCSI_DEVICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vtl/scsi/cmd.h"
#include "vtl/scsi/dispatch.h"
#include "vtl/scsi/reserve.h"
#include "vtl/scsi/spc.h"
#include "vtl/scsi/ua.h"

#define SCSI_MAX_LUNS 256
#define SCSI_MAX_PREVENT 8 /* nexuses that may prevent medium removal at once */

struct scsi_dev {
	struct scsi_ident ident;
	const struct scsi_op *ops;
	size_t n_ops;
	struct scsi_ua_set ua;
	struct scsi_res res;
	bool d_sense;           /* control mode page D_SENSE: report sense in descriptor format */
	/* The LUNs of the target this unit belongs to, for REPORT LUNS (set by the front end). */
	uint16_t luns[SCSI_MAX_LUNS];
	unsigned n_luns;
	/* PREVENT ALLOW MEDIUM REMOVAL: the nexuses that prevent it (SPC-4 6.13). */
	uint64_t prevent_nexus[SCSI_MAX_PREVENT];
	unsigned n_prevent;
};

/* Sets up dev with its identity and command table; no unit attention is pending yet. */
void scsi_dev_init(struct scsi_dev *dev, const struct scsi_ident *id, const struct scsi_op *ops, size_t n_ops);

/* Records whether nexus prevents medium removal; returns whether any nexus still does. */
bool scsi_dev_prevent(struct scsi_dev *dev, uint64_t nexus, bool on);

/* The nexus logged out: its unit attentions, SPC-2 reservation and prevent go (SPC-4 6.13, 5.9). */
void scsi_dev_nexus_lost(struct scsi_dev *dev, uint64_t nexus);

/* A logical unit reset: every nexus gets POWER ON/RESET; SPC-2 reservations and prevents go. */
void scsi_dev_reset(struct scsi_dev *dev);

/* Sets the LUN list REPORT LUNS answers with (at most SCSI_MAX_LUNS). */
void scsi_dev_set_luns(struct scsi_dev *dev, const uint16_t *luns, unsigned n);

/*
 * Runs c on dev: a pending unit attention for c's nexus first (except for
 * INQUIRY, REPORT LUNS and REQUEST SENSE), then the table's checks (opcode,
 * CDB length, reservation conflict, readiness: not_ready is the sense a
 * command needing a medium gets, NULL when ready), then the handler.
 */
void scsi_dev_execute(struct scsi_dev *dev, const struct scsi_sense *not_ready, struct scsi_cmd *c);

#endif
