/* SPDX-License-Identifier: Apache-2.0 */
/*
 * LOG SENSE and LOG SELECT as every device type answers them (SPC-4 6.6,
 * 6.7, 7.3), over a table of the device's log pages: the CDB checks, the
 * supported pages pages, the page header, parameters rendered for a page
 * control, the TapeAlert page (SSC-4 and SMC-3 annexes, TapeAlert v3) with
 * its flags cleared by reading them, and LOG SELECT's parameter list.
 */
#ifndef VTL_SCSI_SPC_LOG_H
#define VTL_SCSI_SPC_LOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vtl/scsi/cmd.h"

/* Page control (SPC-4 table 154). */
enum spc_log_pc {
	SPC_LOG_THRESHOLD = 0,
	SPC_LOG_CUMULATIVE = 1,
	SPC_LOG_DEFAULT_THRESHOLD = 2,
	SPC_LOG_DEFAULT_CUMULATIVE = 3,
};

#define SPC_LOG_PAGE_HDR 4         /* log page header (SPC-4 7.3.2.1) */
#define SPC_LOG_PARAM_HDR 4        /* log parameter header (SPC-4 7.3.2.2) */
#define SPC_LOG_SUPPORTED 0x00     /* supported log pages (SPC-4 7.3.18) */
#define SPC_LOG_SUBPAGE_ALL 0xFF   /* with page 00h: supported pages and subpages (SPC-4 7.3.19) */
#define SPC_LOG_TAPEALERT 0x2E     /* TapeAlert (SSC-4 8.2.3, SMC-3 7.2.3) */
#define SPC_TAPEALERT_FLAGS 64

/* A page being written. */
struct spc_log_out {
	uint8_t *buf;
	size_t at;          /* where the next parameter goes */
	uint16_t pointer;   /* parameters with smaller codes are left out */
	enum spc_log_pc pc;
};

enum spc_log_kind { SPC_LOG_COUNTER, SPC_LOG_LIST };

/*
 * Appends parameter code of len bytes unless the pointer leaves it out.
 * Cumulative values are v; default cumulative values zero; a counter's
 * threshold (current and default: thresholds cannot be changed) is its
 * maximum, and a list parameter has none.
 */
void spc_log_param(struct spc_log_out *o, uint16_t code, enum spc_log_kind kind, unsigned len, uint64_t v);

/* Appends TapeAlert flags 1..64 of flags (bit flag - 1) as one-byte parameters 0001h-0040h. */
void spc_log_tapealert(struct spc_log_out *o, uint64_t flags);

/*
 * The flags left after a host received done bytes of a TapeAlert page read
 * from pointer with page control pc: reading cumulative values clears the
 * flags the host actually received; a flag the allocation length cut stays.
 */
uint64_t spc_log_tapealert_read(uint64_t flags, enum spc_log_pc pc, uint16_t pointer, size_t done);

/* One log page of a device; a table lists them in the order page 00h reports them. */
struct spc_log_page {
	uint8_t code;
	uint8_t subpage;
	uint16_t last_param;  /* the largest parameter code, for the parameter pointer */
	int base;             /* the device's own index of what a reset starts from; -1: nothing to reset */
	/* Appends the page's parameters from the device's state src; NULL for the 00h pages, built from the table. */
	void (*render)(const void *src, struct spc_log_out *o);
};

/* A LOG SENSE CDB (SPC-4 6.7). */
struct spc_log_sense {
	enum spc_log_pc pc;
	uint8_t code, subpage;
	uint16_t pointer;
	size_t alloc;
};

/*
 * LOG SENSE, first half: reads c's CDB into *l and returns the page of
 * pages (n of them) it names; NULL with c failed (SP, PPC, an unknown page or
 * subpage, a parameter pointer above the page's last parameter).
 */
const struct spc_log_page *spc_log_sense_page(struct scsi_cmd *c, const struct spc_log_page *pages, size_t n,
					      struct spc_log_sense *l);

/* LOG SENSE, second half: sends page pg rendered from src as l asks; returns the bytes the host received. */
size_t spc_log_sense_answer(struct scsi_cmd *c, const struct spc_log_page *pages, size_t n,
			    const struct spc_log_page *pg, const struct spc_log_sense *l, const void *src);

/*
 * LOG SELECT checks (SPC-4 6.6): SP, PCR with a list, the list (pages of the
 * table other than 00h, whole, with no parameter: none is settable), the
 * page the CDB names. False with c failed; true when the device may complete
 * it, with *reset set when cumulative values are to be reset (PCR, or PC
 * 11b without a list) and *pg the page (NULL: every page).
 */
bool spc_log_select(struct scsi_cmd *c, const struct spc_log_page *pages, size_t n, const struct spc_log_page **pg,
		    bool *reset);

#endif
