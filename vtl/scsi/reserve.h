/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Reservations: SPC-2 RESERVE/RELEASE(6/10) and SPC-4 persistent
 * reservations (PERSISTENT RESERVE IN/OUT), shared by the drive and the
 * changer. Which command conflicts with which reservation is decided here,
 * from the reservation class a command's dispatch table entry gives it.
 */
#ifndef VTL_SCSI_RESERVE_H
#define VTL_SCSI_RESERVE_H

#include <stdbool.h>
#include <stdint.h>

#define RES_MAX_REG 32 /* registrations a device keeps */

struct scsi_res {
	/* SPC-2 reservation. */
	bool spc2_held;
	uint64_t spc2_nexus;
	/* Persistent reservation (SPC-4 5.9). */
	struct {
		uint64_t nexus;
		uint64_t key;
	} reg[RES_MAX_REG];
	unsigned n_reg;
	uint32_t generation;  /* PRgeneration */
	bool pr_held;
	uint64_t pr_nexus;    /* holder (for all-registrants types: any registrant holds it) */
	uint8_t pr_type;      /* SPC-4 table 174 */
};

struct scsi_dev;
struct scsi_cmd;

/* No reservation and no registration. */
void res_init(struct scsi_res *r);

/*
 * Whether a command of op_flags (the dispatch table's OP_RES_* flags) from
 * nexus conflicts with a reservation another nexus holds (SPC-2 7.21, SPC-4
 * table 64 / 5.9.1).
 */
bool res_conflict(const struct scsi_res *r, uint64_t nexus, unsigned op_flags);

/* I_T nexus loss (logout): releases an SPC-2 reservation nexus holds; persistent ones stay. */
void res_nexus_lost(struct scsi_res *r, uint64_t nexus);

/* Logical unit reset: releases the SPC-2 reservation; persistent ones stay. */
void res_reset(struct scsi_res *r);

/* RESERVE(6) 16h / RESERVE(10) 56h. */
void spc_reserve(struct scsi_dev *dev, struct scsi_cmd *c);
/* RELEASE(6) 17h / RELEASE(10) 57h. */
void spc_release(struct scsi_dev *dev, struct scsi_cmd *c);
/* PERSISTENT RESERVE IN 5Eh: READ KEYS, READ RESERVATION, REPORT CAPABILITIES, READ FULL STATUS. */
void spc_pr_in(struct scsi_dev *dev, struct scsi_cmd *c);
/* PERSISTENT RESERVE OUT 5Fh: REGISTER, RESERVE, RELEASE, CLEAR, PREEMPT, PREEMPT AND ABORT, REGISTER AND IGNORE. */
void spc_pr_out(struct scsi_dev *dev, struct scsi_cmd *c);

#endif
