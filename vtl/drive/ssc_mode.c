/* SPDX-License-Identifier: Apache-2.0 */
/*
 * MODE SENSE(6)/(10) and MODE SELECT(6)/(10) of the drive (SPC-4 6.11-6.14,
 * SSC-4 8.3), as IBM and HP LTO drives answer them.
 *
 * Each page is one table entry: how to render it from a set of mode values,
 * the mask of what MODE SELECT may change, and how to check and apply the
 * values a host sends. MODE SENSE renders current, changeable (the mask) or
 * default values from the same code, so the three cannot disagree; MODE
 * SELECT checks the whole parameter list against the same table before it
 * applies anything.
 */
#include "vtl/drive/ssc_internal.h"

#include <string.h>

#include "vtl/scsi/spc_mode.h"

#include "common/grow.h"

/* The device-specific parameter of the mode parameter header for SSC (SSC-4 8.3.1). */
#define DSP_WP 0x80          /* write protect */
#define DSP_BUFMODE_SHIFT 4  /* BUFFERED MODE, bits 6..4 */
#define DSP_BUFMODE_MASK 0x70
#define DSP_BUFMODE_BIT 6
#define DSP_SPEED_MASK 0x0F  /* SPEED, bits 3..0: 0 = default speed only */
#define DSP_SPEED_BIT 3
#define BUFMODE_UNBUFFERED 0
#define BUFMODE_BUFFERED 1

/* Short block descriptor (SPC-4 7.5.5.1, SSC-4 8.3.1): density, number of blocks, block length. */
#define BD_LEN 8
#define BD_DENSITY 0
#define BD_BLOCKS 1          /* 3 bytes, always zero on a tape drive */
#define BD_BLOCK_LEN 5       /* 3 bytes */

/* Control mode page 0Ah (SPC-4 7.5.8). */
#define PG_CONTROL 0x0A
#define CONTROL_LEN 12
#define CONTROL_DSENSE_BYTE 2
#define CONTROL_DSENSE 0x04
#define CONTROL_GLTSD 0x02   /* logs are never saved */
#define CONTROL_SWP_BYTE 4
#define CONTROL_SWP 0x08

/* Data compression mode page 0Fh (SSC-4 8.3.2). */
#define PG_COMPRESSION 0x0F
#define COMPRESSION_LEN 16
#define COMP_DCE_BYTE 2
#define COMP_DCE 0x80
#define COMP_DCC 0x40        /* the drive can compress */
#define COMP_DDE_BYTE 3
#define COMP_DDE 0x80        /* decompression always on */
#define COMP_ALGO 4          /* 4 bytes */
#define COMP_DECOMP_ALGO 8   /* 4 bytes */
#define ALGO_LTO_DC 0x01     /* the algorithm identifier IBM and HP LTO drives report for LTO-DC (SLDC) */

/* Device configuration mode page 10h (SSC-4 8.3.3). */
#define PG_DEVCONFIG 0x10
#define DEVCONFIG_LEN 16
#define DC_ACTIVE_PARTITION 3
#define DC_FLAGS8 8
#define DC_LOIS 0x40         /* logical object identifiers supported */
#define DC_REW 0x01          /* report early warning on read */
#define DC_FLAGS10 10
#define DC_EEG 0x10          /* EOD generation enabled */
#define DC_SEW 0x08          /* synchronize at early warning */
#define DC_SDCA 14           /* SELECT DATA COMPRESSION ALGORITHM: 0 none, 1 the default algorithm */
#define SDCA_NONE 0x00
#define SDCA_DEFAULT 0x01

/* Medium partition mode page 11h (SSC-4 8.3.4): one partition only. */
#define PG_PARTITION 0x11
#define PARTITION_LEN 10     /* the fixed fields and one partition size descriptor */
#define PART_FLAGS 4
#define PART_PSUM_UNITS 0x18 /* PSUM 11b: sizes in PARTITION UNITS */
#define PART_RECOGNITION 5
#define PART_FORMAT_AND_PARTITION 0x03 /* format and partition recognition */
#define PART_UNITS 6
#define PART_UNITS_1E9 9     /* partition units of 10^9 bytes */
#define PART_SIZE0 8         /* 2 bytes */
#define BYTES_PER_PART_UNIT 1000000000ull
#define PART_SIZE_MAX 0xFFFF

/* Informational exceptions control mode page 1Ch (SPC-4 7.5.11) with the TapeAlert test flag (SSC-4 annex, TapeAlert v3). */
#define PG_IE 0x1C
#define IE_LEN 12
#define IE_FLAGS 2
#define IE_DEXCPT 0x08
#define IE_TEST 0x04
#define IE_TEST_BIT 2
#define IE_MRIE 3
#define IE_MRIE_MASK 0x0F
#define IE_MRIE_BIT 3
#define IE_REPORT_COUNT 8    /* 4 bytes; with TEST=1 the TapeAlert test flag number (+n sets, -n clears) */
#define TAPEALERT_FLAGS 64

#define MODE_PAGE_NONE 0x00 /* no page: header and block descriptor only */
#define MODE_BUF_MAX 512     /* header, block descriptor and every page: well under this */
#define SELECT_MAX 4096      /* a parameter list longer than this is refused */

/* The values a page is rendered from: the drive's current ones or the power-on defaults. */
struct mode_vals {
	struct ssc_mode m;
	bool d_sense;
};

#define FIELD_BIT SPC_MODE_FIELD_BIT

/* Where a parameter list is wrong: byte offset in the page and bit. */
struct mode_err {
	uint16_t byte;
	int bit;
};

struct mode_page {
	uint8_t code;
	uint8_t subpage;
	uint8_t len;                 /* bytes including the page header */
	const uint8_t *changeable;   /* mask of len bytes; headers zero */
	void (*render)(const struct ssc_drive *d, const struct mode_vals *v, uint8_t *p);
	/* Checks field values the mask lets through; false with *e relative to the page. */
	bool (*check)(const struct ssc_drive *d, const uint8_t *p, struct mode_err *e);
	void (*apply)(struct ssc_drive *d, const uint8_t *p);
};

static void mode_defaults(struct ssc_mode *m)
{
	memset(m, 0, sizeof *m);
	m->buffered = true;
	m->compression = true;
	m->sew = true;        /* flush buffered data at early warning, as IBM LTO drives do by default */
	m->dexcpt = true;     /* TapeAlert by polling log page 2Eh, as backup software expects */
	m->mrie = MRIE_RECOVERED_CONDITIONAL;
}

void ssc_mode_init(struct ssc_drive *d)
{
	mode_defaults(&d->mode);
	d->dev.d_sense = false;
}

/* ------------------------------------------------------------------ pages */

#define PAGE_SPF 0x40 /* byte 0: sub_page format (SPC-4 7.5.7) */

static void page_header(uint8_t *p, uint8_t code, uint8_t subpage, uint8_t len)
{
	if (subpage == 0) {
		p[0] = code;
		p[1] = (uint8_t)(len - SPC_MODE_PAGE0_HDR);
	} else {
		p[0] = (uint8_t)(code | PAGE_SPF);
		p[1] = subpage;
		be_put(p + 2, (uint64_t)(len - SPC_MODE_SUBPAGE_HDR), 2);
	}
}

static const uint8_t control_mask[CONTROL_LEN] = {[CONTROL_DSENSE_BYTE] = CONTROL_DSENSE,
						  [CONTROL_SWP_BYTE] = CONTROL_SWP};

static void control_render(const struct ssc_drive *d, const struct mode_vals *v, uint8_t *p)
{
	(void)d;
	p[CONTROL_DSENSE_BYTE] = (uint8_t)(CONTROL_GLTSD | (v->d_sense ? CONTROL_DSENSE : 0));
	p[CONTROL_SWP_BYTE] = v->m.swp ? CONTROL_SWP : 0;
}

static void control_apply(struct ssc_drive *d, const uint8_t *p)
{
	d->dev.d_sense = p[CONTROL_DSENSE_BYTE] & CONTROL_DSENSE;
	d->mode.swp = p[CONTROL_SWP_BYTE] & CONTROL_SWP;
}

static const uint8_t compression_mask[COMPRESSION_LEN] = {[COMP_DCE_BYTE] = COMP_DCE};

static void compression_render(const struct ssc_drive *d, const struct mode_vals *v, uint8_t *p)
{
	(void)d;
	p[COMP_DCE_BYTE] = (uint8_t)(COMP_DCC | (v->m.compression ? COMP_DCE : 0));
	p[COMP_DDE_BYTE] = COMP_DDE;
	be_put(p + COMP_ALGO, ALGO_LTO_DC, 4);
	be_put(p + COMP_DECOMP_ALGO, ALGO_LTO_DC, 4);
}

static void set_compression(struct ssc_drive *d, bool on)
{
	d->mode.compression = on;
	if (d->cart)
		vtl_cart_set_compression(d->cart, on);
}

static void compression_apply(struct ssc_drive *d, const uint8_t *p)
{
	set_compression(d, p[COMP_DCE_BYTE] & COMP_DCE);
}

static const uint8_t devconfig_mask[DEVCONFIG_LEN] = {[DC_FLAGS8] = DC_REW, [DC_FLAGS10] = DC_SEW, [DC_SDCA] = 0xFF};

static void devconfig_render(const struct ssc_drive *d, const struct mode_vals *v, uint8_t *p)
{
	(void)d;
	p[DC_ACTIVE_PARTITION] = v->m.select_partition;
	p[DC_FLAGS8] = (uint8_t)(DC_LOIS | (v->m.rew ? DC_REW : 0));
	p[DC_FLAGS10] = (uint8_t)(DC_EEG | (v->m.sew ? DC_SEW : 0));
	p[DC_SDCA] = v->m.compression ? SDCA_DEFAULT : SDCA_NONE;
}

static bool devconfig_check(const struct ssc_drive *d, const uint8_t *p, struct mode_err *e)
{
	(void)d;
	if (p[DC_SDCA] != SDCA_NONE && p[DC_SDCA] != SDCA_DEFAULT) {
		*e = (struct mode_err){DC_SDCA, FIELD_BIT};
		return false;
	}
	return true;
}

static void devconfig_apply(struct ssc_drive *d, const uint8_t *p)
{
	d->mode.rew = p[DC_FLAGS8] & DC_REW;
	d->mode.sew = p[DC_FLAGS10] & DC_SEW;
	set_compression(d, p[DC_SDCA] == SDCA_DEFAULT);
}

/* Nothing is changeable: partitioning (LTFS-style two partitions) is not supported. */
static const uint8_t partition_mask[PARTITION_LEN];

static void partition_render(const struct ssc_drive *d, const struct mode_vals *v, uint8_t *p)
{
	(void)v;
	p[PART_FLAGS] = PART_PSUM_UNITS;
	p[PART_RECOGNITION] = PART_FORMAT_AND_PARTITION;
	p[PART_UNITS] = PART_UNITS_1E9;
	uint64_t size = d->state == SSC_LOADED ? d->capacity / BYTES_PER_PART_UNIT : 0;
	be_put(p + PART_SIZE0, size < PART_SIZE_MAX ? size : PART_SIZE_MAX, 2);
}

static const uint8_t ie_mask[IE_LEN] = {
	[IE_FLAGS] = IE_DEXCPT | IE_TEST, [IE_MRIE] = IE_MRIE_MASK,
	[IE_REPORT_COUNT] = 0xFF, 0xFF, 0xFF, 0xFF,
};

static void ie_render(const struct ssc_drive *d, const struct mode_vals *v, uint8_t *p)
{
	(void)d;
	p[IE_FLAGS] = (uint8_t)((v->m.dexcpt ? IE_DEXCPT : 0) | (v->m.test ? IE_TEST : 0));
	p[IE_MRIE] = v->m.mrie;
}

/* The TapeAlert test flag number of a page with TEST set: +n sets flag n, -n clears it, 0 a test failure. */
static int32_t ie_test_flag(const uint8_t *p)
{
	return (int32_t)(uint32_t)be_get(p + IE_REPORT_COUNT, 4);
}

static bool ie_check(const struct ssc_drive *d, const uint8_t *p, struct mode_err *e)
{
	(void)d;
	uint8_t mrie = p[IE_MRIE] & IE_MRIE_MASK;
	if (mrie == MRIE_OBSOLETE || mrie > MRIE_ON_REQUEST) {
		*e = (struct mode_err){IE_MRIE, IE_MRIE_BIT};
		return false;
	}
	bool test = p[IE_FLAGS] & IE_TEST;
	int32_t flag = ie_test_flag(p);
	/* Without TEST the field is the report count; only 0 (no limit) is supported. */
	if ((!test && flag != 0) || flag > TAPEALERT_FLAGS || flag < -TAPEALERT_FLAGS) {
		*e = (struct mode_err){IE_REPORT_COUNT, FIELD_BIT};
		return false;
	}
	/* A test failure with exceptions disabled could never be reported (TapeAlert v3 test flag rules). */
	if (test && flag == 0 && (p[IE_FLAGS] & IE_DEXCPT)) {
		*e = (struct mode_err){IE_FLAGS, IE_TEST_BIT};
		return false;
	}
	return true;
}

static void ie_apply(struct ssc_drive *d, const uint8_t *p)
{
	d->mode.dexcpt = p[IE_FLAGS] & IE_DEXCPT;
	d->mode.mrie = p[IE_MRIE] & IE_MRIE_MASK;
	bool test = p[IE_FLAGS] & IE_TEST;
	int32_t flag = ie_test_flag(p);
	/* A test flag number sets or clears that TapeAlert flag once; TEST itself is not kept on. */
	d->mode.test = test && flag == 0;
	if (test && flag > 0)
		d->tapealert |= 1ull << (flag - 1);
	else if (test && flag < 0)
		d->tapealert &= ~(1ull << (-flag - 1));
}

/* Control Data Protection 0Ah/F0h: its fields are ssc_lbp.c's. */
static void lbp_render(const struct ssc_drive *d, const struct mode_vals *v, uint8_t *p)
{
	(void)d;
	ssc_lbp_page_render(&v->m, p);
}

static bool lbp_check(const struct ssc_drive *d, const uint8_t *p, struct mode_err *e)
{
	(void)d;
	return ssc_lbp_page_check(p, &e->byte, &e->bit);
}

static void lbp_apply(struct ssc_drive *d, const uint8_t *p)
{
	ssc_lbp_page_apply(&d->mode, p);
}

/* Device Configuration Extension 10h/01h: its fields are ssc_append.c's. */
static void dce_render(const struct ssc_drive *d, const struct mode_vals *v, uint8_t *p)
{
	(void)d;
	ssc_dce_page_render(&v->m, p);
}

static bool dce_check(const struct ssc_drive *d, const uint8_t *p, struct mode_err *e)
{
	return ssc_dce_page_check(&d->mode, p, &e->byte, &e->bit);
}

static void dce_apply(struct ssc_drive *d, const uint8_t *p)
{
	ssc_dce_page_apply(&d->mode, p);
}

/* The drive's mode pages, in the order MODE SENSE returns them for "all pages". */
static const struct mode_page mode_pages[] = {
	{PG_CONTROL, 0, CONTROL_LEN, control_mask, control_render, NULL, control_apply},
	{SSC_LBP_PAGE, SSC_LBP_SUBPAGE, SSC_LBP_PAGE_LEN, ssc_lbp_page_mask, lbp_render, lbp_check, lbp_apply},
	{PG_COMPRESSION, 0, COMPRESSION_LEN, compression_mask, compression_render, NULL, compression_apply},
	{PG_DEVCONFIG, 0, DEVCONFIG_LEN, devconfig_mask, devconfig_render, devconfig_check, devconfig_apply},
	{SSC_DCE_PAGE, SSC_DCE_SUBPAGE, SSC_DCE_PAGE_LEN, ssc_dce_page_mask, dce_render, dce_check, dce_apply},
	{PG_PARTITION, 0, PARTITION_LEN, partition_mask, partition_render, NULL, NULL},
	{PG_IE, 0, IE_LEN, ie_mask, ie_render, ie_check, ie_apply},
};
#define N_PAGES (VTL_ARRAY_SIZE(mode_pages))

static const struct mode_page *page_find(uint8_t code, uint8_t subpage)
{
	for (size_t i = 0; i < N_PAGES; i++)
		if (mode_pages[i].code == code && mode_pages[i].subpage == subpage)
			return &mode_pages[i];
	return NULL;
}

static void vals_of(const struct ssc_drive *d, enum spc_mode_pc pc, struct mode_vals *v)
{
	if (pc == SPC_PC_DEFAULT) {
		mode_defaults(&v->m);
		v->d_sense = false;
	} else {
		v->m = d->mode;
		v->d_sense = d->dev.d_sense;
	}
}

/* Writes page pg as pc asks at p (pg->len bytes). */
static void page_write(const struct ssc_drive *d, const struct mode_page *pg, enum spc_mode_pc pc, uint8_t *p)
{
	if (pc == SPC_PC_CHANGEABLE) {
		memcpy(p, pg->changeable, pg->len);
	} else {
		struct mode_vals v;
		vals_of(d, pc, &v);
		memset(p, 0, pg->len);
		pg->render(d, &v, p);
	}
	page_header(p, pg->code, pg->subpage, pg->len);
}

/* ------------------------------------------------------------------ header */

static uint8_t medium_type(const struct ssc_drive *d)
{
	if (d->state == SSC_CLEANING)
		return SSC_MEDIUM_TYPE_CLEANING;
	if (d->state == SSC_LOADED && d->label.worm)
		return SSC_MEDIUM_TYPE_WORM;
	return SSC_MEDIUM_TYPE_DATA;
}

static uint8_t device_specific(const struct ssc_drive *d, enum spc_mode_pc pc)
{
	if (pc == SPC_PC_CHANGEABLE)
		return DSP_BUFMODE_MASK;
	struct mode_vals v;
	vals_of(d, pc, &v);
	uint8_t dsp = (uint8_t)((v.m.buffered ? BUFMODE_BUFFERED : BUFMODE_UNBUFFERED) << DSP_BUFMODE_SHIFT);
	if (pc == SPC_PC_CURRENT && (v.m.swp || (d->state == SSC_LOADED && d->medium.write_protected)))
		dsp |= DSP_WP;
	return dsp;
}

static void block_descriptor(const struct ssc_drive *d, enum spc_mode_pc pc, uint8_t *p)
{
	memset(p, 0, BD_LEN);
	if (pc == SPC_PC_CHANGEABLE) {
		p[BD_DENSITY] = 0xFF;
		be_put(p + BD_BLOCK_LEN, 0xFFFFFF, 3);
		return;
	}
	p[BD_DENSITY] = ssc_density_of_medium(d);
	be_put(p + BD_BLOCK_LEN, pc == SPC_PC_CURRENT ? d->mode.block_len : 0, 3);
}

/* Renders the header, block descriptor (unless dbd) and the pages code/subpage select; returns the length. */
static size_t mode_render(const struct ssc_drive *d, bool six, bool dbd, enum spc_mode_pc pc, uint8_t code,
			  uint8_t subpage, uint8_t *buf)
{
	size_t hdr = six ? SPC_MODE_HDR6_LEN : SPC_MODE_HDR10_LEN;
	size_t at = hdr;
	memset(buf, 0, hdr);
	if (!dbd) {
		block_descriptor(d, pc, buf + at);
		at += BD_LEN;
	}
	for (size_t i = 0; i < N_PAGES; i++) {
		const struct mode_page *pg = &mode_pages[i];
		bool code_ok = code == SPC_MODE_PAGE_ALL || code == pg->code;
		bool sub_ok = subpage == SPC_MODE_SUBPAGE_ALL || subpage == pg->subpage;
		if (code_ok && sub_ok) {
			page_write(d, pg, pc, buf + at);
			at += pg->len;
		}
	}
	spc_mode_header(buf, six, at, medium_type(d), device_specific(d, pc), dbd ? 0 : BD_LEN);
	return at;
}

void ssc_mode_sense(struct scsi_dev *dev, struct scsi_cmd *c)
{
	struct ssc_drive *d = ssc_of(dev);
	struct spc_mode_sense m;
	spc_mode_sense_cdb(c, &m);
	/*
	 * Page 00h (vendor specific, SPC-4 table 102) asks for the header and
	 * block descriptor alone: the Linux st driver reads density and block
	 * length that way when it opens the drive.
	 */
	bool code_known = m.code == MODE_PAGE_NONE, sub_known = m.code == MODE_PAGE_NONE && m.subpage == 0;
	for (size_t i = 0; i < N_PAGES; i++)
		if (mode_pages[i].code == m.code) {
			code_known = true;
			sub_known |= m.subpage == SPC_MODE_SUBPAGE_ALL || m.subpage == mode_pages[i].subpage;
		}
	struct scsi_sense s;
	if (!spc_mode_sense_known(&m, code_known, sub_known, &s)) {
		scsi_fail(c, s);
		return;
	}
	uint8_t buf[MODE_BUF_MAX];
	size_t n = mode_render(d, m.six, m.dbd, m.pc, m.code, m.subpage, buf);
	scsi_data_in(c, buf, n, m.alloc);
}

/* ------------------------------------------------------------------ MODE SELECT */

static struct scsi_sense list_length_error(void)
{
	return sense_of(SK_ILLEGAL_REQUEST, ASC_PARAMETER_LIST_LENGTH);
}

/*
 * Walks the pages of a parameter list from at to n: checks each (apply
 * false) or applies each (apply true, only after a check passed). Returns
 * true, or false with *s set.
 */
static bool pages_walk(struct ssc_drive *d, const uint8_t *buf, size_t at, size_t n, bool apply,
		       struct scsi_sense *s)
{
	while (at < n) {
		struct spc_mode_list_page lp;
		if (!spc_mode_list_page(buf, at, n, &lp, s))
			return false;
		const struct mode_page *pg = page_find(lp.code, lp.subpage);
		if (!pg) {
			*s = spc_mode_list_unknown(&lp, at, page_find(lp.code, 0) != NULL);
			return false;
		}
		if (!spc_mode_list_fits(&lp, at, n, pg->len, s))
			return false;
		const uint8_t *p = buf + at;
		if (apply) {
			if (pg->apply)
				pg->apply(d, p);
		} else {
			uint8_t cur[MODE_BUF_MAX];
			page_write(d, pg, SPC_PC_CURRENT, cur);
			if (!spc_mode_list_unchanged(&lp, p, cur, pg->changeable, at, s))
				return false;
			struct mode_err e;
			if (pg->check && !pg->check(d, p, &e)) {
				*s = sense_invalid_param_field((uint16_t)(at + e.byte), e.bit);
				return false;
			}
		}
		at += pg->len;
	}
	return true;
}

/* Whether this drive can write density code density (its own generation and the one before, LTO-10 its own only; M8 on LTO-8). */
static bool density_writable(const struct ssc_drive *d, uint8_t density)
{
	static const struct {
		uint8_t density;
		unsigned gen;
	} by_density[] = {{DENSITY_LTO5, 5}, {DENSITY_LTO6, 6}, {DENSITY_LTO7, 7},
			  {DENSITY_LTO7M, 8}, {DENSITY_LTO8, 8}, {DENSITY_LTO9, 9}, {DENSITY_LTO10, 10}};
	for (size_t i = 0; i < VTL_ARRAY_SIZE(by_density); i++)
		if (by_density[i].density == density)
			return by_density[i].gen == d->gen ||
			       (by_density[i].gen + 1 == d->gen && density != DENSITY_LTO7M && d->gen < 10);
	return false;
}

/* Renders everything MODE SENSE could report as current, to tell whether a MODE SELECT changed anything. */
static size_t mode_snapshot(const struct ssc_drive *d, uint8_t *buf)
{
	size_t n = mode_render(d, false, false, SPC_PC_CURRENT, SPC_MODE_PAGE_ALL, SPC_MODE_SUBPAGE_ALL, buf);
	buf[n++] = d->mode.density;
	return n;
}

void ssc_mode_select(struct scsi_dev *dev, struct scsi_cmd *c)
{
	struct ssc_drive *d = ssc_of(dev);
	struct spc_mode_select m;
	uint8_t buf[SELECT_MAX];
	if (!spc_mode_select_list(c, buf, sizeof buf, &m))
		return;
	size_t n = m.n, hdr = m.hdr, dsp_at = m.dsp_at, bdl_at = m.bdl_at, bdl = m.bdl;
	uint8_t dsp = m.dsp;
	/* WP is ignored in MODE SELECT (SSC-4 8.3.1). */
	if (bdl != 0 && bdl != BD_LEN) {
		scsi_fail(c, sense_invalid_param_field((uint16_t)bdl_at, FIELD_BIT));
		return;
	}
	if (n < hdr + bdl) {
		scsi_fail(c, list_length_error());
		return;
	}
	uint8_t bufmode = (dsp & DSP_BUFMODE_MASK) >> DSP_BUFMODE_SHIFT;
	if (bufmode > BUFMODE_BUFFERED) {
		scsi_fail(c, sense_invalid_param_field((uint16_t)dsp_at, DSP_BUFMODE_BIT));
		return;
	}
	if (dsp & DSP_SPEED_MASK) {
		scsi_fail(c, sense_invalid_param_field((uint16_t)dsp_at, DSP_SPEED_BIT));
		return;
	}
	const uint8_t *bd = bdl ? buf + hdr : NULL;
	uint32_t block_len = 0;
	if (bd) {
		uint8_t density = bd[BD_DENSITY];
		if (density != DENSITY_DEFAULT && density != ssc_density_of_medium(d) && !density_writable(d, density)) {
			scsi_fail(c, sense_invalid_param_field((uint16_t)(hdr + BD_DENSITY), FIELD_BIT));
			return;
		}
		if (be_get(bd + BD_BLOCKS, 3) != 0) {
			scsi_fail(c, sense_invalid_param_field((uint16_t)(hdr + BD_BLOCKS), FIELD_BIT));
			return;
		}
		block_len = (uint32_t)be_get(bd + BD_BLOCK_LEN, 3);
		if (block_len != 0 && (block_len < SSC_BLOCK_LIMIT_MIN || block_len > SSC_BLOCK_LIMIT_MAX)) {
			scsi_fail(c, sense_invalid_param_field((uint16_t)(hdr + BD_BLOCK_LEN), FIELD_BIT));
			return;
		}
	}
	size_t pages_at = hdr + bdl;
	if (!m.pf && pages_at < n) {
		/* Without PF the list holds no pages (SPC-4 6.9): pages need PF set. */
		scsi_fail(c, spc_mode_pf_needed());
		return;
	}
	struct scsi_sense s;
	if (!pages_walk(d, buf, pages_at, n, false, &s)) {
		scsi_fail(c, s);
		return;
	}
	/* Everything checked: apply it all. */
	uint8_t before[MODE_BUF_MAX], after[MODE_BUF_MAX];
	size_t nb = mode_snapshot(d, before);
	d->mode.buffered = bufmode == BUFMODE_BUFFERED;
	if (bd) {
		d->mode.block_len = block_len;
		d->mode.density = bd[BD_DENSITY];
	}
	pages_walk(d, buf, pages_at, n, true, &s);
	size_t na = mode_snapshot(d, after);
	if (na != nb || memcmp(before, after, na) != 0)
		ua_raise_all(&d->dev.ua, UA_MODE_CHANGED, c->nexus);
	scsi_done(c, 0);
}
