/* SPDX-License-Identifier: Apache-2.0 */
/*
 * MODE SENSE(6)/(10) and MODE SELECT(6)/(10) of the changer (SPC-4 6.9-6.12,
 * SMC-3 7.3): the element address assignment (1Dh), transport geometry (1Eh)
 * and device capabilities (1Fh) pages, rendered from the library's element
 * map. Nothing is changeable (the map is the configuration's, and a robot's
 * abilities are what the library model does), so the default values are the
 * current ones and MODE SELECT accepts only what MODE SENSE reports.
 */
#include "vtl/changer/smc_internal.h"

#include <string.h>

#include "vtl/scsi/spc_mode.h"

#include "common/grow.h"

/* Mode parameter header of a changer (SMC-3 7.3.1): medium type and device-specific parameter reserved. */
#define MEDIUM_TYPE_NONE 0x00
#define DSP_NONE 0x00

/* Element address assignment page (SMC-3 7.3.3): first address and count of each element type. */
#define PG_EAA 0x1D
#define EAA_LEN 20
#define EAA_TRANSPORT 2      /* 2-byte first address, 2-byte count, likewise below */
#define EAA_STORAGE 6
#define EAA_IE 10
#define EAA_DRIVE 14

/* Transport geometry parameters page (SMC-3 7.3.5): a 2-byte descriptor per transport. */
#define PG_TGP 0x1E
#define TGP_DESC_LEN 2
#define TGP_MEMBER 1         /* byte 1 of a descriptor: member number in the transport element set */
#define TGP_MAX_DESC ((0xFF - 1) / TGP_DESC_LEN) /* what the 1-byte page length can describe */

/* Device capabilities page (SMC-3 7.3.4): storage, move and exchange abilities by element type. */
#define PG_CAP 0x1F
#define CAP_LEN 20
#define CAP_STOR 2           /* StorDT, StorI/E, StorST, StorMT in bits 3..0 */
#define CAP_MOVE_FROM 4      /* bytes 4..7: from MT, ST, I/E, DT; bits 3..0 to DT, I/E, ST, MT */
#define CAP_EXCHANGE_FROM 12 /* bytes 12..15 likewise for EXCHANGE MEDIUM */
#define CAP_TYPES 4          /* one byte per source type in each matrix */
#define CAP_FROM_MT 0        /* the transport's byte, first of each matrix */
#define CAP_ST 0x02
#define CAP_IE 0x04
#define CAP_DT 0x08
/*
 * library_move moves between any two storage, import/export and data
 * transfer elements and never parks a cartridge in the robot: every type but
 * the transport stores media, and each reaches every other. EXCHANGE MEDIUM
 * is two such moves, so its matrix is the same.
 */
#define CAP_MEDIA_HOLDERS (CAP_ST | CAP_IE | CAP_DT)

#define PAGE_MAX (SPC_MODE_PAGE0_HDR + TGP_MAX_DESC * TGP_DESC_LEN) /* the longest page */
#define MODE_BUF_MAX (SPC_MODE_HDR10_LEN + EAA_LEN + PAGE_MAX + CAP_LEN)
#define SELECT_MAX 1024      /* the header and every page come to well under this */

struct smc_page {
	uint8_t code;
	/* Writes the page's current (and default) values at p; returns its length. */
	size_t (*render)(const struct cat_library *li, uint8_t *p);
};

static void put_range(uint8_t *p, uint16_t first, uint16_t count)
{
	be_put(p, count ? first : 0, 2);
	be_put(p + 2, count, 2);
}

static size_t render_eaa(const struct cat_library *li, uint8_t *p)
{
	put_range(p + EAA_TRANSPORT, li->transport_first, li->transports);
	put_range(p + EAA_STORAGE, li->slot_first, li->slots);
	put_range(p + EAA_IE, li->ie_first, li->ies);
	put_range(p + EAA_DRIVE, li->drive_first, li->drives);
	return EAA_LEN;
}

static size_t tgp_len(const struct cat_library *li)
{
	unsigned n = li->transports < TGP_MAX_DESC ? li->transports : TGP_MAX_DESC;
	return SPC_MODE_PAGE0_HDR + n * TGP_DESC_LEN;
}

static size_t render_tgp(const struct cat_library *li, uint8_t *p)
{
	size_t len = tgp_len(li);
	/* One robot set: transport i is member i; none turns media over (ROTATE 0). */
	for (size_t at = SPC_MODE_PAGE0_HDR, i = 0; at < len; at += TGP_DESC_LEN, i++)
		p[at + TGP_MEMBER] = (uint8_t)i;
	return len;
}

static size_t render_cap(const struct cat_library *li, uint8_t *p)
{
	(void)li;
	p[CAP_STOR] = CAP_MEDIA_HOLDERS;
	for (unsigned from = 0; from < CAP_TYPES; from++) {
		bool holder = from != CAP_FROM_MT;
		p[CAP_MOVE_FROM + from] = holder ? CAP_MEDIA_HOLDERS : 0;
		p[CAP_EXCHANGE_FROM + from] = holder ? CAP_MEDIA_HOLDERS : 0;
	}
	return CAP_LEN;
}

/* The changer's pages, in the order MODE SENSE returns them for "all pages"; none has subpages. */
static const struct smc_page smc_pages[] = {
	{PG_EAA, render_eaa},
	{PG_TGP, render_tgp},
	{PG_CAP, render_cap},
};
#define N_PAGES (VTL_ARRAY_SIZE(smc_pages))

static const struct smc_page *page_find(uint8_t code)
{
	for (size_t i = 0; i < N_PAGES; i++)
		if (smc_pages[i].code == code)
			return &smc_pages[i];
	return NULL;
}

/* Writes page pg as pc asks at p; returns its length. Changeable values are all zero. */
static size_t page_write(const struct cat_library *li, const struct smc_page *pg, enum spc_mode_pc pc, uint8_t *p)
{
	uint8_t cur[PAGE_MAX];
	memset(cur, 0, sizeof cur);
	size_t len = pg->render(li, cur);
	if (pc == SPC_PC_CHANGEABLE)
		memset(p, 0, len);
	else
		memcpy(p, cur, len);
	p[0] = pg->code; /* PS 0: nothing is saved */
	p[1] = (uint8_t)(len - SPC_MODE_PAGE0_HDR);
	return len;
}

void smc_mode_sense(struct scsi_dev *dev, struct scsi_cmd *c)
{
	struct smc_changer *ch = smc_of(dev);
	struct spc_mode_sense m;
	spc_mode_sense_cdb(c, &m);
	bool code_known = page_find(m.code) != NULL;
	bool sub_known = code_known && (m.subpage == 0 || m.subpage == SPC_MODE_SUBPAGE_ALL);
	struct scsi_sense s;
	if (!spc_mode_sense_known(&m, code_known, sub_known, &s)) {
		scsi_fail(c, s);
		return;
	}
	const struct cat_library *li = library_info(ch->lib);
	uint8_t buf[MODE_BUF_MAX];
	size_t at = m.six ? SPC_MODE_HDR6_LEN : SPC_MODE_HDR10_LEN;
	memset(buf, 0, at);
	/* DBD changes nothing: a changer has no block descriptors (SMC-3 7.3.1). */
	for (size_t i = 0; i < N_PAGES; i++)
		if (m.code == SPC_MODE_PAGE_ALL || m.code == smc_pages[i].code)
			at += page_write(li, &smc_pages[i], m.pc, buf + at);
	spc_mode_header(buf, m.six, at, MEDIUM_TYPE_NONE, DSP_NONE, 0);
	scsi_data_in(c, buf, at, m.alloc);
}

/* Checks the pages of a parameter list from at to n: each must be one of ours, whole, and unchanged. */
static bool pages_unchanged(const struct cat_library *li, const uint8_t *buf, size_t at, size_t n,
			    struct scsi_sense *s)
{
	while (at < n) {
		struct spc_mode_list_page lp;
		if (!spc_mode_list_page(buf, at, n, &lp, s))
			return false;
		const struct smc_page *pg = page_find(lp.code);
		if (!pg || lp.subpage != 0) {
			*s = spc_mode_list_unknown(&lp, at, pg != NULL);
			return false;
		}
		uint8_t cur[PAGE_MAX];
		size_t len = page_write(li, pg, SPC_PC_CURRENT, cur);
		if (!spc_mode_list_fits(&lp, at, n, len, s) ||
		    !spc_mode_list_unchanged(&lp, buf + at, cur, NULL, at, s))
			return false;
		at += len;
	}
	return true;
}

void smc_mode_select(struct scsi_dev *dev, struct scsi_cmd *c)
{
	struct smc_changer *ch = smc_of(dev);
	struct spc_mode_select m;
	uint8_t buf[SELECT_MAX];
	if (!spc_mode_select_list(c, buf, sizeof buf, &m))
		return;
	/* The device-specific parameter is reserved for a changer (SMC-3 7.3.1): only 0, as MODE SENSE reports it. */
	if (m.dsp != DSP_NONE) {
		scsi_fail(c, sense_invalid_param_field((uint16_t)m.dsp_at, SPC_MODE_FIELD_BIT));
		return;
	}
	if (m.bdl != 0) {
		scsi_fail(c, sense_invalid_param_field((uint16_t)m.bdl_at, SPC_MODE_FIELD_BIT));
		return;
	}
	if (!m.pf && m.hdr < m.n) {
		/* Without PF the list holds no pages (SPC-4 6.9): pages need PF set. */
		scsi_fail(c, spc_mode_pf_needed());
		return;
	}
	struct scsi_sense s;
	if (!pages_unchanged(library_info(ch->lib), buf, m.hdr, m.n, &s)) {
		scsi_fail(c, s);
		return;
	}
	scsi_done(c, 0); /* nothing changed, so no MODE PARAMETERS CHANGED attention */
}
