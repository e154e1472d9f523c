/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Reservations: SPC-2 RESERVE/RELEASE(6/10) and SPC-4 persistent
 * reservations (PERSISTENT RESERVE IN/OUT), shared by the drive and the
 * changer. Which command conflicts with which reservation is decided here,
 * from the reservation class a command's dispatch table entry gives it.
 *
 * Persistent reservations live in memory only: they survive a logical unit
 * reset and an I_T nexus loss, not a restart of the daemon (so REPORT
 * CAPABILITIES says PTPL_C=0 and APTPL=1 is refused). One target port, so
 * ALL_TG_PT and SPEC_I_PT are refused too.
 */
#ifndef VTL_SCSI_RESERVE_H
#define VTL_SCSI_RESERVE_H

#include <stdbool.h>
#include <stdint.h>

#include "vtl/scsi/cmd.h"

#include "vtl/scsi/dispatch.h"

#define RES_MAX_REG 32 /* registrations a device keeps */

/* Persistent reservation types (SPC-4 table 174). */
enum res_type {
	PR_WRITE_EXCLUSIVE = 0x1,
	PR_EXCLUSIVE_ACCESS = 0x3,
	PR_WRITE_EXCLUSIVE_RO = 0x5, /* registrants only */
	PR_EXCLUSIVE_ACCESS_RO = 0x6,
	PR_WRITE_EXCLUSIVE_AR = 0x7, /* all registrants */
	PR_EXCLUSIVE_ACCESS_AR = 0x8,
};

struct scsi_res {
	/* SPC-2 reservation. */
	bool spc2_held;
	uint64_t spc2_nexus;
	/* Persistent reservation (SPC-4 5.9): one registration per I_T nexus. */
	struct {
		uint64_t nexus;
		uint64_t key;
		struct scsi_tid tid; /* the initiator port's, as the front end gave it at REGISTER */
	} reg[RES_MAX_REG];
	unsigned n_reg;
	uint32_t generation;  /* PRgeneration */
	bool pr_held;
	uint64_t pr_nexus;    /* holder; for the all-registrants types every registered nexus holds it */
	uint8_t pr_type;      /* enum res_type */
	/*
	 * Told, after the command (or event) that caused it, of each nexus that
	 * held a reservation and holds none now; preempted when another nexus's
	 * PREEMPT (AND ABORT) took it. NULL: nobody listens. The device above
	 * registers it (the drive's CKORP/CKORL, SSC-4 8.5.3.2); it runs under
	 * the same lock as the command and must not call back into reserve.c.
	 */
	void (*on_loss)(void *arg, uint64_t nexus, bool preempted);
	void *loss_arg;
};

struct scsi_dev;
struct scsi_cmd;

/* No reservation and no registration. */
void res_init(struct scsi_res *r);

/*
 * Whether command c, whose dispatch table entry has op_flags (OP_RES_*),
 * conflicts with a reservation another nexus holds (SPC-2 5.5.1, SPC-4
 * 5.9.1 and table 64, SSC-4's reservation table).
 */
bool res_conflict(const struct scsi_res *r, const struct scsi_cmd *c, unsigned op_flags);

/* Whether nexus holds a persistent reservation, or (unless persistent_only) an SPC-2 one. */
bool res_holds(const struct scsi_res *r, uint64_t nexus, bool persistent_only);

/* I_T nexus loss (logout): releases an SPC-2 reservation nexus holds; persistent ones stay. */
void res_nexus_lost(struct scsi_res *r, uint64_t nexus);

/* Logical unit reset: releases the SPC-2 reservation; persistent ones stay. */
void res_reset(struct scsi_res *r);

/* RESERVE(6) 16h / RESERVE(10) 56h (SPC-2 7.21, 7.22 with SPC-4 5.9.3's exceptions). */
void spc_reserve(struct scsi_dev *dev, struct scsi_cmd *c);
/* RELEASE(6) 17h / RELEASE(10) 57h (SPC-2 7.17, 7.18 with SPC-4 5.9.3's exceptions). */
void spc_release(struct scsi_dev *dev, struct scsi_cmd *c);
/* PERSISTENT RESERVE IN 5Eh: READ KEYS, READ RESERVATION, REPORT CAPABILITIES, READ FULL STATUS. */
void spc_pr_in(struct scsi_dev *dev, struct scsi_cmd *c);
/* PERSISTENT RESERVE OUT 5Fh: REGISTER, RESERVE, RELEASE, CLEAR, PREEMPT, PREEMPT AND ABORT, REGISTER AND IGNORE. */
void spc_pr_out(struct scsi_dev *dev, struct scsi_cmd *c);

/*
 * The PERSISTENT RESERVE IN and OUT rows of a command table (SPC-4 6.15, 6.16),
 * with reservation class flags and timeout tmo; SCOPE and TYPE (byte 2)
 * matter to RESERVE, RELEASE and the PREEMPTs only.
 */
#define SPC_PR_OPS(flags, tmo) \
	{0x5E, 0x00, 10, flags, "PERSISTENT RESERVE IN / READ KEYS", spc_pr_in, \
		U10(0x5E, 0x00, 0, 0, 0, 0, 0, 0xFF, 0xFF), tmo}, \
	{0x5E, 0x01, 10, flags, "PERSISTENT RESERVE IN / READ RESERVATION", spc_pr_in, \
		U10(0x5E, 0x01, 0, 0, 0, 0, 0, 0xFF, 0xFF), tmo}, \
	{0x5E, 0x02, 10, flags, "PERSISTENT RESERVE IN / REPORT CAPABILITIES", spc_pr_in, \
		U10(0x5E, 0x02, 0, 0, 0, 0, 0, 0xFF, 0xFF), tmo}, \
	{0x5E, 0x03, 10, flags, "PERSISTENT RESERVE IN / READ FULL STATUS", spc_pr_in, \
		U10(0x5E, 0x03, 0, 0, 0, 0, 0, 0xFF, 0xFF), tmo}, \
	{0x5F, 0x00, 10, flags, "PERSISTENT RESERVE OUT / REGISTER", spc_pr_out, \
		U10(0x5F, 0x00, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF), tmo}, \
	{0x5F, 0x01, 10, flags, "PERSISTENT RESERVE OUT / RESERVE", spc_pr_out, \
		U10(0x5F, 0x01, 0xFF, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF), tmo}, \
	{0x5F, 0x02, 10, flags, "PERSISTENT RESERVE OUT / RELEASE", spc_pr_out, \
		U10(0x5F, 0x02, 0xFF, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF), tmo}, \
	{0x5F, 0x03, 10, flags, "PERSISTENT RESERVE OUT / CLEAR", spc_pr_out, \
		U10(0x5F, 0x03, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF), tmo}, \
	{0x5F, 0x04, 10, flags, "PERSISTENT RESERVE OUT / PREEMPT", spc_pr_out, \
		U10(0x5F, 0x04, 0xFF, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF), tmo}, \
	{0x5F, 0x05, 10, flags, "PERSISTENT RESERVE OUT / PREEMPT AND ABORT", spc_pr_out, \
		U10(0x5F, 0x05, 0xFF, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF), tmo}, \
	{0x5F, 0x06, 10, flags, "PERSISTENT RESERVE OUT / REGISTER AND IGNORE EXISTING KEY", spc_pr_out, \
		U10(0x5F, 0x06, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF), tmo}

#endif
