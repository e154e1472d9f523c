/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Densities and capacity: REPORT DENSITY SUPPORT (SSC-4 6.5), SET CAPACITY
 * (SSC-4) and FORMAT MEDIUM (SSC-4 6.2), for the LTO formats the drive
 * knows (LTO-5 to LTO-10 and LTO-7 Type M).
 */
#include "vtl/drive/ssc_internal.h"

#include <stdio.h>
#include <string.h>

#include "common/grow.h"
#include "common/vtl_error.h"

/* REPORT DENSITY SUPPORT CDB (SSC-4 table 30). */
#define RDS_FLAGS_BYTE 1
#define RDS_MEDIA 0x01
#define RDS_MEDIUM_TYPE 0x02
#define RDS_ALLOC_BYTE 7 /* 2 bytes */

/* REPORT DENSITY SUPPORT data (SSC-4 tables 31..33). */
#define RDS_HEADER 4            /* AVAILABLE DENSITY SUPPORT LENGTH (2), reserved (2) */
#define DENSITY_DESC_LEN 52     /* density support data block descriptor */
#define MEDIUM_DESC_LEN 56      /* medium type descriptor */
#define DESC_WRTOK 0x80
#define DESC_DEFLT 0x20
#define DESC_DLV 0x01           /* DESCRIPTOR LENGTH field valid */
#define MEDIUM_DENSITY_CODES 9  /* primary density codes a medium type descriptor has room for */
#define ASSIGNING_ORG "LTO-CVE"
#define LTO_WIDTH_TENTHS_MM 127
#define MB 1000000ull           /* CAPACITY is in megabytes of 10^6 bytes */

/* SET CAPACITY and FORMAT MEDIUM CDBs (SSC-4 tables 40 and 24). */
#define SETCAP_VALUE_BYTE 3     /* CAPACITY PROPORTION VALUE, 2 bytes */
#define PROPORTION_WHOLE 65535u
#define FORMAT_FIELD_BYTE 2
#define FORMAT_FIELD_MASK 0x0F
#define FORMAT_DEFAULT 0x00     /* 01h partition per mode page 11h, 02h both: refused (one partition) */
#define FORMAT_XFER_BYTE 3      /* TRANSFER LENGTH, 2 bytes */

/* The LTO formats (IBM LTO SCSI reference, REPORT DENSITY SUPPORT; LTO format specifications). */
struct density {
	uint8_t code;
	unsigned gen;
	bool type_m;
	uint32_t bits_per_mm;
	uint16_t tracks;
	uint32_t capacity_mb;
	uint16_t length_m;       /* tape length of the cartridge, meters */
	const char *name;        /* DENSITY NAME, 8 characters */
	const char *description; /* 20 characters */
};

static const struct density densities[] = {
	{DENSITY_LTO5, 5, false, 15142, 1280, 1500000, 846, "U-516", "Ultrium 5/16T"},
	{DENSITY_LTO6, 6, false, 15142, 2176, 2500000, 846, "U-616", "Ultrium 6/16T"},
	{DENSITY_LTO7, 7, false, 19107, 3584, 6000000, 960, "U-732", "Ultrium 7/32T"},
	{DENSITY_LTO7M, 7, true, 19107, 5376, 9000000, 960, "U-732M", "Ultrium M8/32T"},
	{DENSITY_LTO8, 8, false, 20669, 6656, 12000000, 960, "U-832", "Ultrium 8/32T"},
	{DENSITY_LTO9, 9, false, 23031, 8960, 18000000, 1035, "U-932", "Ultrium 9/32T"},
	/*
	 * LTO-10: density 62h, 21657 bits/mm, 1035 m of tape (FreeBSD mt(1), from IBM's
	 * figures and real cartridges), 30 TB. Its track count and the DENSITY NAME and
	 * DESCRIPTION an LTO-10 drive reports were found nowhere: tracks 0 and the names
	 * blank rather than invented ones.
	 */
	{DENSITY_LTO10, 10, false, 21657, 0, 30000000, 1035, "", ""},
};
#define N_DENSITIES (VTL_ARRAY_SIZE(densities))

/* IBM's medium type codes for LTO: generation in the high nibble, 8h data, Ch WORM. */
#define MEDIUM_TYPE_OF(gen, worm) ((uint8_t)((gen) << 4 | ((worm) ? 0x0C : 0x08)))

/* Whether a drive of generation gen reads (and *writes) a density's cartridges. */
static bool drive_reads(unsigned gen, const struct density *de, bool *writes)
{
	struct vtl_label l = {.generation = de->gen, .type_m = de->type_m};
	return vtl_drive_accepts(gen, &l, writes);
}

static const struct density *density_of(uint8_t code)
{
	for (size_t i = 0; i < N_DENSITIES; i++)
		if (densities[i].code == code)
			return &densities[i];
	return NULL;
}

static void density_desc(uint8_t *b, const struct density *de, uint8_t flags, uint64_t capacity_mb)
{
	memset(b, 0, DENSITY_DESC_LEN);
	b[0] = de->code;
	b[1] = de->code; /* no secondary density: the same code */
	b[2] = (uint8_t)(flags | DESC_DLV);
	be_put(b + 3, DENSITY_DESC_LEN - 3, 2);
	be_put(b + 5, de->bits_per_mm, 3);
	be_put(b + 8, LTO_WIDTH_TENTHS_MM, 2);
	be_put(b + 10, de->tracks, 2);
	be_put(b + 12, capacity_mb, 4);
	spc_put_padded(b + 16, ASSIGNING_ORG, 8);
	spc_put_padded(b + 24, de->name, 8);
	spc_put_padded(b + 32, de->description, 20);
}

/* A medium type descriptor for the cartridges of generation gen (data or WORM), with the densities drive_gen uses on them. */
static void medium_desc(uint8_t *b, unsigned drive_gen, unsigned gen, bool worm)
{
	memset(b, 0, MEDIUM_DESC_LEN);
	b[0] = MEDIUM_TYPE_OF(gen, worm);
	be_put(b + 2, MEDIUM_DESC_LEN - 4, 2);
	unsigned n = 0;
	uint16_t length = 0;
	for (size_t i = 0; i < N_DENSITIES && n < MEDIUM_DENSITY_CODES; i++)
		if (densities[i].gen == gen && drive_reads(drive_gen, &densities[i], NULL) &&
		    !(worm && densities[i].type_m)) {
			b[5 + n++] = densities[i].code;
			length = densities[i].length_m;
		}
	b[4] = (uint8_t)n;
	be_put(b + 14, LTO_WIDTH_TENTHS_MM, 2);
	be_put(b + 16, length, 2);
	spc_put_padded(b + 20, ASSIGNING_ORG, 8);
	char name[9], desc[21];
	snprintf(name, sizeof name, "LTO-%u%s", gen, worm ? "W" : "");
	snprintf(desc, sizeof desc, "Ultrium %u %s", gen, worm ? "WORM" : "Data");
	spc_put_padded(b + 28, name, 8);
	spc_put_padded(b + 36, desc, 20);
}

void ssc_report_density(struct scsi_dev *dev, struct scsi_cmd *c)
{
	struct ssc_drive *d = ssc_of(dev);
	bool media = c->cdb[RDS_FLAGS_BYTE] & RDS_MEDIA;
	bool medium_type = c->cdb[RDS_FLAGS_BYTE] & RDS_MEDIUM_TYPE;
	size_t alloc = (size_t)be_get(c->cdb + RDS_ALLOC_BYTE, 2);
	if (media) {
		struct scsi_sense nr;
		const struct scsi_sense *not_ready = ssc_not_ready(d, &nr);
		if (not_ready) {
			scsi_fail(c, *not_ready);
			return;
		}
	}
	uint8_t b[RDS_HEADER + 2 * N_DENSITIES * MEDIUM_DESC_LEN];
	size_t at = RDS_HEADER;
	memset(b, 0, RDS_HEADER);
	if (!medium_type && media) {
		/* The loaded medium's density; CAPACITY is what it holds now (SET CAPACITY included). */
		const struct density *de = density_of(ssc_density_of_medium(d));
		if (de) {
			density_desc(b + at, de, (uint8_t)((d->can_write ? DESC_WRTOK : 0) | DESC_DEFLT), d->capacity / MB);
			at += DENSITY_DESC_LEN;
		}
	} else if (!medium_type) {
		for (size_t i = 0; i < N_DENSITIES; i++) {
			bool writes;
			if (!drive_reads(d->gen, &densities[i], &writes))
				continue;
			uint8_t flags = (uint8_t)((writes ? DESC_WRTOK : 0) | (densities[i].gen == d->gen && !densities[i].type_m ? DESC_DEFLT : 0));
			density_desc(b + at, &densities[i], flags, densities[i].capacity_mb);
			at += DENSITY_DESC_LEN;
		}
	} else if (media) {
		medium_desc(b + at, d->gen, d->label.generation, d->label.worm);
		at += MEDIUM_DESC_LEN;
	} else {
		/* Each generation of cartridge the drive loads, data then WORM. */
		for (unsigned gen = VTL_GEN_MIN; gen <= VTL_GEN_MAX; gen++) {
			struct vtl_label l = {.generation = gen};
			if (!vtl_drive_accepts(d->gen, &l, NULL))
				continue;
			for (int worm = 0; worm <= (gen <= VTL_WORM_GEN_MAX); worm++) {
				medium_desc(b + at, d->gen, gen, worm);
				at += MEDIUM_DESC_LEN;
			}
		}
	}
	be_put(b, at - 2, 2);
	scsi_data_in(c, b, at, alloc);
}

/* SET CAPACITY and FORMAT MEDIUM: at BOT, on a medium the drive may write and, if WORM, blank. */
static bool may_rewrite_from_bot(struct ssc_drive *d, struct scsi_cmd *c)
{
	struct vtl_position pos;
	vtl_cart_position(d->cart, &pos);
	struct scsi_sense s;
	if (!pos.bot) {
		scsi_fail(c, sense_of(SK_ILLEGAL_REQUEST, ASC_POSITION_PAST_BOM));
		return false;
	}
	if (!ssc_may_write(d, &s) || !ssc_append_allowed(d, true, &s)) {
		scsi_fail(c, s);
		return false;
	}
	if (d->label.worm && pos.eod > 0) {
		scsi_fail(c, sense_of(SK_DATA_PROTECT, ASC_WORM_OVERWRITE));
		return false;
	}
	return true;
}

/* Applies the capacity proportion to the loaded cartridge; a backend error is returned. */
static int capacity_apply(struct ssc_drive *d, unsigned proportion)
{
	uint64_t cap = d->native_capacity;
	if (proportion < PROPORTION_WHOLE)
		cap = cap / PROPORTION_WHOLE * proportion + cap % PROPORTION_WHOLE * proportion / PROPORTION_WHOLE;
	int rc = vtl_cart_set_capacity(d->cart, cap, ssc_early_warning(d, cap));
	/* A write-protected cartridge is opened read-only; it still reports the capacity set. */
	if (rc == VTL_OK || rc == VTL_E_READONLY)
		d->capacity = cap;
	return rc == VTL_E_READONLY ? VTL_OK : rc;
}

void ssc_capacity_loaded(struct ssc_drive *d)
{
	uint8_t v[2];
	size_t len = 0;
	if (ssc_mam_get(d, MAM_PRIVATE_CAPACITY, v, sizeof v, &len) != VTL_OK || len != sizeof v)
		return;
	/* A failure leaves the native capacity in force: the cartridge stays usable. */
	(void)capacity_apply(d, (unsigned)be_get(v, 2));
}

void ssc_set_capacity(struct scsi_dev *dev, struct scsi_cmd *c)
{
	struct ssc_drive *d = ssc_of(dev);
	unsigned proportion = (unsigned)be_get(c->cdb + SETCAP_VALUE_BYTE, 2);
	if (proportion == 0) {
		/* Nothing would fit; no LTO drive offers it. */
		scsi_fail(c, sense_invalid_cdb_field(SETCAP_VALUE_BYTE, -1));
		return;
	}
	if (!may_rewrite_from_bot(d, c))
		return;
	/* The data on the medium becomes inaccessible: it is erased. IMMED makes no difference here. */
	int rc = vtl_cart_erase(d->cart);
	if (rc == VTL_OK)
		rc = capacity_apply(d, proportion);
	if (rc != VTL_OK) {
		scsi_fail(c, ssc_sense_of_err(d, rc));
		return;
	}
	uint8_t v[2];
	be_put(v, proportion, 2);
	if (ssc_mam_put(d, MAM_PRIVATE_CAPACITY, v, proportion == PROPORTION_WHOLE ? 0 : sizeof v) != VTL_OK) {
		scsi_fail(c, sense_of(SK_MEDIUM_ERROR, ASC_AUXILIARY_MEMORY_WRITE_ERROR));
		return;
	}
	ssc_mam_formatted(d, false);
	scsi_done(c, 0);
}

void ssc_format_medium(struct scsi_dev *dev, struct scsi_cmd *c)
{
	struct ssc_drive *d = ssc_of(dev);
	if ((c->cdb[FORMAT_FIELD_BYTE] & FORMAT_FIELD_MASK) != FORMAT_DEFAULT) {
		scsi_fail(c, sense_invalid_cdb_field(FORMAT_FIELD_BYTE, 3));
		return;
	}
	if (be_get(c->cdb + FORMAT_XFER_BYTE, 2)) {
		/* The default format takes no parameter data. */
		scsi_fail(c, sense_invalid_cdb_field(FORMAT_XFER_BYTE, -1));
		return;
	}
	if (!may_rewrite_from_bot(d, c))
		return;
	/* VERIFY: a virtual medium has nothing to certify; IMMED: done before status either way. */
	int rc = vtl_cart_erase(d->cart);
	if (rc != VTL_OK) {
		scsi_fail(c, ssc_sense_of_err(d, rc));
		return;
	}
	ssc_mam_formatted(d, true);
	scsi_done(c, 0);
}
