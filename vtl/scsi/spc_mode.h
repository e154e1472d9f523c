/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What MODE SENSE and MODE SELECT look like on every device type (SPC-4
 * 6.9-6.12, 7.5): the CDB fields, the mode parameter header, and the pages
 * of a MODE SELECT parameter list taken apart and compared with the
 * device's current values. Each device keeps its own pages and values.
 */
#ifndef VTL_SCSI_SPC_MODE_H
#define VTL_SCSI_SPC_MODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vtl/scsi/cmd.h"

/* Page control (SPC-4 table 101). */
enum spc_mode_pc { SPC_PC_CURRENT = 0, SPC_PC_CHANGEABLE = 1, SPC_PC_DEFAULT = 2, SPC_PC_SAVED = 3 };

#define SPC_MODE_PAGE_ALL 0x3F    /* return all pages (SPC-4 table 102) */
#define SPC_MODE_SUBPAGE_ALL 0xFF /* all subpages of the page(s) */
#define SPC_MODE_HDR6_LEN 4       /* mode parameter header (SPC-4 7.5.4) */
#define SPC_MODE_HDR10_LEN 8
#define SPC_MODE_PAGE0_HDR 2      /* page_0 format: code, length */
#define SPC_MODE_SUBPAGE_HDR 4    /* sub_page format: code, subpage, 2-byte length */
#define SPC_MODE_FIELD_BIT 7      /* a field pointer names the leftmost bit of the field (SPC-4 4.5.2.4.2) */

/* A MODE SENSE(6) or (10) CDB (SPC-4 6.11, 6.12). */
struct spc_mode_sense {
	bool six;
	bool dbd;             /* disable block descriptors */
	enum spc_mode_pc pc;
	uint8_t code, subpage;
	size_t alloc;
};

/* Reads the fields of c's MODE SENSE(6) or (10) CDB into *m. */
void spc_mode_sense_cdb(const struct scsi_cmd *c, struct spc_mode_sense *m);

/*
 * Whether a device with a page of this code (code_known) and subpage
 * (sub_known, which counts SPC_MODE_SUBPAGE_ALL) can answer m; else *s is the
 * refusal: SAVING PARAMETERS NOT SUPPORTED for saved values, INVALID FIELD IN
 * CDB at the page code or the subpage. Page 3Fh with subpage 00h or FFh is
 * always known.
 */
bool spc_mode_sense_known(const struct spc_mode_sense *m, bool code_known, bool sub_known, struct scsi_sense *s);

/* Sets the mode parameter header of an answer of len bytes in all (4 bytes for MODE SENSE(6), else 8). */
void spc_mode_header(uint8_t *buf, bool six, size_t len, uint8_t medium_type, uint8_t dsp, uint16_t bdl);

/* A MODE SELECT(6) or (10) command (SPC-4 6.9, 6.10) and the header of its parameter list (SPC-4 7.5.4). */
struct spc_mode_select {
	bool six;
	bool pf;        /* page format */
	size_t n;       /* bytes of parameter list received */
	size_t hdr;     /* the length of the mode parameter header */
	size_t dsp_at;  /* where the device-specific parameter is */
	size_t bdl_at;  /* where the block descriptor length is */
	uint8_t dsp;
	size_t bdl;     /* block descriptor length */
};

/*
 * Reads c's MODE SELECT CDB and its parameter list (at most max bytes) into
 * buf and the header's fields into *m; true when the device has a list to
 * check. False when c is already completed: GOOD for an empty list (SPC-4
 * 6.9), else failed for SP=1 (no saved pages), a list longer than max, a
 * list that cuts the header (PARAMETER LIST LENGTH ERROR) or LONGLBA set.
 * MODE DATA LENGTH and MEDIUM TYPE are reserved in MODE SELECT and ignored.
 */
bool spc_mode_select_list(struct scsi_cmd *c, uint8_t *buf, size_t max, struct spc_mode_select *m);

/* The refusal of a parameter list with pages but PF 0 (SPC-4 6.9): INVALID FIELD IN CDB at PF. */
struct scsi_sense spc_mode_pf_needed(void);

/* The header of one page in a MODE SELECT parameter list. */
struct spc_mode_list_page {
	uint8_t code, subpage;
	bool spf;   /* sub_page format */
	size_t hdr; /* SPC_MODE_PAGE0_HDR or SPC_MODE_SUBPAGE_HDR */
	size_t len; /* header included */
};

/* Reads the page header at buf[at] of a list of n bytes; false with PARAMETER LIST LENGTH ERROR when cut. */
bool spc_mode_list_page(const uint8_t *buf, size_t at, size_t n, struct spc_mode_list_page *pg,
			struct scsi_sense *s);

/*
 * The refusal of a page at list offset at that the device lacks: at its
 * subpage when the device has the page code (code_known) and the list names a
 * subpage, else at its page code.
 */
struct scsi_sense spc_mode_list_unknown(const struct spc_mode_list_page *pg, size_t at, bool code_known);

/*
 * Whether the page at list offset at has the device's length want and fits
 * in the n bytes of the list; else *s points at its length field or is a
 * PARAMETER LIST LENGTH ERROR.
 */
bool spc_mode_list_fits(const struct spc_mode_list_page *pg, size_t at, size_t n, size_t want, struct scsi_sense *s);

/*
 * Whether page p (pg->len bytes at list offset at) changes nothing of its
 * current value cur outside the changeable mask (NULL: nothing changeable);
 * else *s is INVALID FIELD IN PARAMETER LIST at the first changed bit.
 */
bool spc_mode_list_unchanged(const struct spc_mode_list_page *pg, const uint8_t *p, const uint8_t *cur,
			     const uint8_t *mask, size_t at, struct scsi_sense *s);

#endif
