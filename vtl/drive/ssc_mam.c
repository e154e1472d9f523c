/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Medium auxiliary memory (MAM): READ ATTRIBUTE and WRITE ATTRIBUTE (SPC-4
 * 6.16, 6.40, attributes in SPC-4 7.4), as an LTO drive keeps them in the
 * cartridge memory chip.
 *
 * The attributes of the loaded cartridge live in d->mam_mem while it is in
 * the drive (and after it is unloaded, for READ ATTRIBUTE with CACHE); the
 * drive's MAM store (struct ssc_mam_ops: the catalog, as the library model
 * wires it), when it has one, is their durable home keyed by barcode: read
 * once at load, written through on every change. Device attributes that
 * change with use are computed live while the cartridge is loaded and stored
 * when it is unloaded.
 */
#include "vtl/drive/ssc_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/grow.h"
#include "common/vtl_error.h"

/* READ ATTRIBUTE / WRITE ATTRIBUTE CDB (SPC-4 tables 170 and 211). */
#define CDB_SA_BYTE 1
#define CDB_SA_MASK 0x1F
#define CDB_SA_BIT 4
#define CDB_VOLUME_BYTE 5
#define CDB_PARTITION_BYTE 7
#define CDB_FIRST_ID_BYTE 8   /* 2 bytes */
#define CDB_LENGTH_BYTE 10    /* allocation / parameter list length, 4 bytes */
#define CDB_CACHE_BYTE 14
#define CDB_CACHE_BIT 0x01

/* READ ATTRIBUTE service actions (SPC-4 table 171). */
enum {
	RA_VALUES = 0x00,
	RA_LIST = 0x01,
	RA_VOLUME_LIST = 0x02,
	RA_PARTITION_LIST = 0x03,
	RA_SUPPORTED = 0x05,
};

/* Attribute format (SPC-4 table 336) and header (SPC-4 table 335: id, READ ONLY + FORMAT, length). */
enum mam_format { MAM_BINARY = 0x0, MAM_ASCII = 0x1, MAM_TEXT = 0x2 };
#define MAM_FORMAT_MASK 0x03
#define MAM_READ_ONLY 0x80
#define MAM_HEADER 5
#define LIST_HEADER 4 /* AVAILABLE DATA / PARAMETER DATA LENGTH */

/* How an attribute behaves here. */
enum mam_kind {
	K_HOST,    /* written by hosts (read/write) */
	K_STORED,  /* read only, set by the drive at load or by FORMAT MEDIUM */
	K_LIVE,    /* read only, computed from the loaded cartridge; stored at unload */
};

struct mam_def {
	uint16_t id;
	enum mam_format format;
	uint16_t len;     /* the attribute's length; for a variable one its maximum */
	bool variable;
	enum mam_kind kind;
};

/* Attribute identifiers (SPC-4 7.4.2). */
enum {
	A_REMAINING_CAPACITY = 0x0000, A_MAXIMUM_CAPACITY = 0x0001, A_TAPEALERT = 0x0002, A_LOAD_COUNT = 0x0003,
	A_MAM_SPACE_REMAINING = 0x0004, A_ASSIGNING_ORG = 0x0005, A_FORMAT_DENSITY = 0x0006,
	A_INIT_COUNT = 0x0007, A_VOLUME_CHANGE_REF = 0x0009,
	A_LAST_LOAD = 0x020A, A_LAST_LOAD_3 = 0x020D, /* 020Ah..020Dh: drive vendor/serial at the last loads */
	A_MIB_WRITTEN_LIFE = 0x0220, A_MIB_READ_LIFE = 0x0221, A_MIB_WRITTEN_LOAD = 0x0222, A_MIB_READ_LOAD = 0x0223,
	A_MEDIUM_MANUFACTURER = 0x0400, A_MEDIUM_SERIAL = 0x0401, A_MEDIUM_LENGTH = 0x0402, A_MEDIUM_WIDTH = 0x0403,
	A_MEDIUM_ASSIGNING_ORG = 0x0404, A_MEDIUM_DENSITY = 0x0405, A_MANUFACTURE_DATE = 0x0406,
	A_MAM_CAPACITY = 0x0407, A_MEDIUM_TYPE = 0x0408, A_MEDIUM_TYPE_INFO = 0x0409,
	A_VOLUME_COHERENCY = 0x080C,
};

/* Every attribute the drive supports, in identifier order (SPC-4 tables 338, 339, 340). */
static const struct mam_def mam_defs[] = {
	{A_REMAINING_CAPACITY, MAM_BINARY, 8, false, K_LIVE},   /* MiB left in the partition */
	{A_MAXIMUM_CAPACITY, MAM_BINARY, 8, false, K_LIVE},     /* MiB the partition holds */
	{A_TAPEALERT, MAM_BINARY, 8, false, K_LIVE},
	{A_LOAD_COUNT, MAM_BINARY, 8, false, K_STORED},
	{A_MAM_SPACE_REMAINING, MAM_BINARY, 8, false, K_LIVE},
	{A_ASSIGNING_ORG, MAM_ASCII, 8, false, K_STORED},
	{A_FORMAT_DENSITY, MAM_BINARY, 1, false, K_STORED},
	{A_INIT_COUNT, MAM_BINARY, 2, false, K_STORED},
	{A_VOLUME_CHANGE_REF, MAM_BINARY, 4, false, K_STORED},
	{0x020A, MAM_ASCII, 40, false, K_STORED},
	{0x020B, MAM_ASCII, 40, false, K_STORED},
	{0x020C, MAM_ASCII, 40, false, K_STORED},
	{0x020D, MAM_ASCII, 40, false, K_STORED},
	{A_MIB_WRITTEN_LIFE, MAM_BINARY, 8, false, K_LIVE},
	{A_MIB_READ_LIFE, MAM_BINARY, 8, false, K_LIVE},
	{A_MIB_WRITTEN_LOAD, MAM_BINARY, 8, false, K_LIVE},
	{A_MIB_READ_LOAD, MAM_BINARY, 8, false, K_LIVE},
	{A_MEDIUM_MANUFACTURER, MAM_ASCII, 8, false, K_STORED},
	{A_MEDIUM_SERIAL, MAM_ASCII, 32, false, K_STORED},
	{A_MEDIUM_LENGTH, MAM_BINARY, 4, false, K_STORED},      /* meters */
	{A_MEDIUM_WIDTH, MAM_BINARY, 4, false, K_STORED},       /* tenths of a millimeter */
	{A_MEDIUM_ASSIGNING_ORG, MAM_ASCII, 8, false, K_STORED},
	{A_MEDIUM_DENSITY, MAM_BINARY, 1, false, K_STORED},
	{A_MANUFACTURE_DATE, MAM_ASCII, 8, false, K_STORED},    /* YYYYMMDD */
	{A_MAM_CAPACITY, MAM_BINARY, 8, false, K_STORED},
	{A_MEDIUM_TYPE, MAM_BINARY, 1, false, K_STORED},
	{A_MEDIUM_TYPE_INFO, MAM_BINARY, 2, false, K_STORED},
	{0x0800, MAM_ASCII, 8, false, K_HOST},    /* application vendor */
	{0x0801, MAM_ASCII, 32, false, K_HOST},   /* application name */
	{0x0802, MAM_ASCII, 8, false, K_HOST},    /* application version */
	{0x0803, MAM_TEXT, 160, false, K_HOST},   /* user medium text label */
	{0x0804, MAM_ASCII, 12, false, K_HOST},   /* date and time last written */
	{0x0805, MAM_BINARY, 1, false, K_HOST},   /* text localization identifier */
	{0x0806, MAM_ASCII, 32, false, K_HOST},   /* barcode */
	{0x0807, MAM_TEXT, 80, false, K_HOST},    /* owning host textual name */
	{0x0808, MAM_TEXT, 160, false, K_HOST},   /* media pool */
	{0x080B, MAM_ASCII, 16, false, K_HOST},   /* application format version */
	{A_VOLUME_COHERENCY, MAM_BINARY, 256, true, K_HOST},
};
#define N_DEFS (VTL_ARRAY_SIZE(mam_defs))

/* Volume coherency information (SPC-4 table 343): VCR length, VCR, count (8), set id (8), info length (2), info. */
#define VCI_FIXED 19 /* every byte but the VCR value and the information */
#define VCI_VCR_MAX 8

/* Medium facts (LTO cartridge specifications as the IBM/HP references report them). */
#define LTO_ASSIGNING_ORG "LTO-CVE"
#define LTO_WIDTH_TENTHS_MM 127
#define LTO_CM_SMALL 8192u  /* LTO-5 cartridge memory, bytes */
#define LTO_CM_LARGE 16384u /* LTO-6 and later */
#define MEDIUM_TYPE_DATA 0x00  /* SPC-4 table 341 */
#define MEDIUM_TYPE_WORM 0x80
#define LAST_LOAD_VENDOR 8     /* 020Ah..: vendor (8) then serial (32) */
#define MIB (1ull << 20)

/* The attributes of one cartridge, kept for the load (and after, for CACHE). */
#define MAM_VALUE_MAX 256
#define MAM_SLOTS (N_DEFS + 8)
struct mam_slot {
	uint16_t id;
	uint16_t len;
	uint8_t val[MAM_VALUE_MAX];
};
struct ssc_mam {
	char barcode[VTL_LABEL_LEN + 1]; /* whose attributes these are; "" none */
	bool read_error;                 /* the MAM store could not be read at load */
	uint64_t eod_at_load;            /* to tell whether this load changed the volume */
	unsigned n;
	struct mam_slot a[MAM_SLOTS];
};

static const struct mam_def *def_of(uint16_t id)
{
	for (size_t i = 0; i < N_DEFS; i++)
		if (mam_defs[i].id == id)
			return &mam_defs[i];
	return NULL;
}

static struct mam_slot *slot_of(struct ssc_mam *m, uint16_t id)
{
	for (unsigned i = 0; i < m->n; i++)
		if (m->a[i].id == id)
			return &m->a[i];
	return NULL;
}

/* Sets (len > 0) or removes an attribute in memory; false if it has no room (never with the table's sizes). */
static bool mem_put(struct ssc_mam *m, uint16_t id, const void *val, size_t len)
{
	struct mam_slot *s = slot_of(m, id);
	if (!len) {
		if (s)
			*s = m->a[--m->n];
		return true;
	}
	if (len > MAM_VALUE_MAX || (!s && m->n == MAM_SLOTS))
		return false;
	if (!s) {
		s = &m->a[m->n++];
		s->id = id;
	}
	s->len = (uint16_t)len;
	memcpy(s->val, val, len);
	return true;
}

static struct ssc_mam *mam_of(struct ssc_drive *d)
{
	return d->mam_mem;
}

int ssc_mam_get(struct ssc_drive *d, uint16_t id, void *buf, size_t cap, size_t *len)
{
	struct ssc_mam *m = mam_of(d);
	if (!m || !m->barcode[0])
		return VTL_E_INVAL;
	struct mam_slot *s = slot_of(m, id);
	if (!s)
		return VTL_E_NOTFOUND;
	memcpy(buf, s->val, s->len < cap ? s->len : cap);
	*len = s->len;
	return VTL_OK;
}

int ssc_mam_put(struct ssc_drive *d, uint16_t id, const void *val, size_t len)
{
	struct ssc_mam *m = mam_of(d);
	if (!m || !m->barcode[0] || len > MAM_VALUE_MAX)
		return VTL_E_INVAL;
	if (d->cfg.mam) {
		int rc = len ? d->cfg.mam->set(d->cfg.mam_arg, m->barcode, id, val, len)
			     : d->cfg.mam->remove(d->cfg.mam_arg, m->barcode, id);
		if (rc != VTL_OK)
			return rc;
	}
	return mem_put(m, id, val, len) ? VTL_OK : VTL_E_NOMEM;
}

/* A stored big-endian counter (0 when unset). */
static uint64_t get_num(struct ssc_drive *d, uint16_t id)
{
	uint8_t b[8];
	size_t len = 0;
	if (ssc_mam_get(d, id, b, sizeof b, &len) != VTL_OK || len > sizeof b)
		return 0;
	return be_get(b, (unsigned)len);
}

/*
 * Stores a number as the attribute's length. The drive's own updates at load
 * and unload have nobody to report a catalog failure to: the memory copy is
 * what this load answers with either way.
 */
static void put_num(struct ssc_drive *d, uint16_t id, uint64_t v)
{
	const struct mam_def *def = def_of(id);
	uint8_t b[8];
	unsigned n = def ? def->len : 2;
	be_put(b, v, n);
	(void)ssc_mam_put(d, id, b, n);
}

static void put_ascii(struct ssc_drive *d, uint16_t id, const char *s)
{
	const struct mam_def *def = def_of(id);
	uint8_t b[MAM_VALUE_MAX];
	size_t n = strnlen(s, def->len);
	memset(b, ' ', def->len);
	memcpy(b, s, n);
	(void)ssc_mam_put(d, id, b, def->len);
}

static bool has(struct ssc_drive *d, uint16_t id)
{
	return slot_of(mam_of(d), id) != NULL;
}

static int load_one(const struct ssc_mam_attr *a, void *arg)
{
	struct ssc_mam *m = arg;
	/* Only what this drive knows (a value written by vtlctl or another version may not fit the table). */
	const struct mam_def *def = def_of(a->id);
	bool ok = def ? a->len && a->len <= def->len : a->id == MAM_PRIVATE_CAPACITY || a->id == MAM_PRIVATE_ENC_FIRST;
	if (ok)
		mem_put(m, a->id, a->value, a->len);
	return 0;
}

/* Meters of tape in an LTO cartridge of generation gen (LTO cartridge specifications). */
static uint32_t medium_length_m(unsigned gen)
{
	/* LTO-10: 1035 m (FreeBSD mt(1), from the MAM of real LTO-10 cartridges). */
	static const uint16_t len[] = {[5] = 846, [6] = 846, [7] = 960, [8] = 960, [9] = 1035, [10] = 1035};
	return gen >= VTL_GEN_MIN && gen <= VTL_GEN_MAX ? len[gen] : 0;
}

/* The medium attributes a cartridge is born with, written the first time a drive sees it. */
static void medium_birth(struct ssc_drive *d)
{
	if (has(d, A_MEDIUM_SERIAL))
		return;
	char serial[40];
	snprintf(serial, sizeof serial, "VTL%s", d->medium.barcode);
	put_ascii(d, A_MEDIUM_MANUFACTURER, d->dev.ident.vendor);
	put_ascii(d, A_MEDIUM_SERIAL, serial);
	put_num(d, A_MEDIUM_LENGTH, medium_length_m(d->label.generation));
	put_num(d, A_MEDIUM_WIDTH, LTO_WIDTH_TENTHS_MM);
	put_ascii(d, A_MEDIUM_ASSIGNING_ORG, LTO_ASSIGNING_ORG);
	put_num(d, A_MEDIUM_DENSITY, ssc_density_of_medium(d));
	time_t now = time(NULL);
	struct tm tm;
	char date[16];
	gmtime_r(&now, &tm);
	strftime(date, sizeof date, "%Y%m%d", &tm);
	put_ascii(d, A_MANUFACTURE_DATE, date);
	put_num(d, A_MAM_CAPACITY, d->label.generation <= 5 ? LTO_CM_SMALL : LTO_CM_LARGE);
	put_num(d, A_MEDIUM_TYPE, d->label.worm ? MEDIUM_TYPE_WORM : MEDIUM_TYPE_DATA);
	put_num(d, A_MEDIUM_TYPE_INFO, 0);
	put_ascii(d, A_ASSIGNING_ORG, LTO_ASSIGNING_ORG);
	put_num(d, A_FORMAT_DENSITY, ssc_density_of_medium(d));
	put_num(d, A_INIT_COUNT, 0);
	put_num(d, A_VOLUME_CHANGE_REF, 0);
	put_num(d, A_LOAD_COUNT, 0);
}

void ssc_mam_loaded(struct ssc_drive *d)
{
	d->native_capacity = d->capacity;
	if (!d->mam_mem && !(d->mam_mem = calloc(1, sizeof(struct ssc_mam))))
		return; /* READ/WRITE ATTRIBUTE answer AUXILIARY MEMORY READ ERROR without it */
	struct ssc_mam *m = mam_of(d);
	bool same = strcmp(m->barcode, d->medium.barcode) == 0;
	if (d->cfg.mam || !same) {
		memset(m, 0, sizeof *m);
		snprintf(m->barcode, sizeof m->barcode, "%s", d->medium.barcode);
		if (d->cfg.mam && d->cfg.mam->list(d->cfg.mam_arg, m->barcode, load_one, m) != VTL_OK)
			m->read_error = true;
	}
	if (m->read_error)
		return;
	struct vtl_position pos;
	vtl_cart_position(d->cart, &pos);
	m->eod_at_load = pos.eod;
	medium_birth(d);
	put_num(d, A_LOAD_COUNT, get_num(d, A_LOAD_COUNT) + 1);
	/* The drives of the last four loads, newest first. */
	for (uint16_t id = A_LAST_LOAD_3; id > A_LAST_LOAD; id--) {
		uint8_t b[MAM_VALUE_MAX];
		size_t len;
		if (ssc_mam_get(d, (uint16_t)(id - 1), b, sizeof b, &len) == VTL_OK)
			(void)ssc_mam_put(d, id, b, len);
	}
	char who[48];
	snprintf(who, sizeof who, "%-8.8s%s", d->dev.ident.vendor, d->dev.ident.serial);
	put_ascii(d, A_LAST_LOAD, who);
	ssc_capacity_loaded(d);
}

/* The live value of a K_LIVE attribute while the cartridge is loaded (8-byte counters). */
static uint64_t live_value(struct ssc_drive *d, uint16_t id)
{
	struct vtl_position pos;
	struct vtl_cart_stats st;
	vtl_cart_position(d->cart, &pos);
	vtl_cart_stats(d->cart, &st);
	switch (id) {
	case A_REMAINING_CAPACITY:
		return pos.stored_bytes < d->capacity ? (d->capacity - pos.stored_bytes) / MIB : 0;
	case A_MAXIMUM_CAPACITY:
		return d->capacity / MIB;
	case A_TAPEALERT: {
		/* Flag n is bit 64 - n: flag 1 in the most significant bit, as the TapeAlert log page orders them. */
		uint64_t v = 0;
		for (unsigned f = 1; f <= 64; f++)
			if (d->tapealert & (1ull << (f - 1)))
				v |= 1ull << (64 - f);
		return v;
	}
	case A_MIB_WRITTEN_LIFE:
		return get_num(d, id) + st.written_bytes / MIB;
	case A_MIB_READ_LIFE:
		return get_num(d, id) + st.read_bytes / MIB;
	case A_MIB_WRITTEN_LOAD:
		return st.written_bytes / MIB;
	case A_MIB_READ_LOAD:
		return st.read_bytes / MIB;
	default:
		return get_num(d, id);
	}
}

uint64_t ssc_mam_number(struct ssc_drive *d, uint16_t id)
{
	struct ssc_mam *m = mam_of(d);
	return m && !m->read_error && d->cart ? live_value(d, id) : 0;
}

void ssc_mam_unloading(struct ssc_drive *d)
{
	struct ssc_mam *m = mam_of(d);
	if (m && !m->read_error && m->barcode[0] && d->cart) {
		uint64_t v[N_DEFS];
		for (size_t i = 0; i < N_DEFS; i++)
			v[i] = mam_defs[i].kind == K_LIVE && mam_defs[i].id != A_MAM_SPACE_REMAINING
				       ? live_value(d, mam_defs[i].id) : 0;
		for (size_t i = 0; i < N_DEFS; i++)
			if (mam_defs[i].kind == K_LIVE && mam_defs[i].id != A_MAM_SPACE_REMAINING)
				put_num(d, mam_defs[i].id, v[i]);
		struct vtl_position pos;
		struct vtl_cart_stats st;
		vtl_cart_position(d->cart, &pos);
		vtl_cart_stats(d->cart, &st);
		if (st.written_bytes || pos.eod != m->eod_at_load)
			put_num(d, A_VOLUME_CHANGE_REF, get_num(d, A_VOLUME_CHANGE_REF) + 1);
	}
	/* The next load starts from the medium's own capacity and applies SET CAPACITY's proportion again. */
	if (d->native_capacity)
		d->capacity = d->native_capacity;
	d->native_capacity = 0;
}

void ssc_mam_formatted(struct ssc_drive *d, bool initialized)
{
	if (initialized)
		put_num(d, A_INIT_COUNT, get_num(d, A_INIT_COUNT) + 1);
	put_num(d, A_VOLUME_CHANGE_REF, get_num(d, A_VOLUME_CHANGE_REF) + 1);
	ssc_crypt_written(d, 0, false); /* erased from BOT: no encrypted block left */
	struct ssc_mam *m = mam_of(d);
	if (m)
		m->eod_at_load = 0;
}

/* ------------------------------------------------------------ READ ATTRIBUTE */

/* One logical volume and one partition: number 0 of each (SPC-4 6.16.1, 6.40.1); else fails c. */
static bool volume_partition_ok(struct scsi_cmd *c)
{
	if (c->cdb[CDB_VOLUME_BYTE]) {
		scsi_fail(c, sense_invalid_cdb_field(CDB_VOLUME_BYTE, -1));
		return false;
	}
	if (c->cdb[CDB_PARTITION_BYTE]) {
		scsi_fail(c, sense_invalid_cdb_field(CDB_PARTITION_BYTE, -1));
		return false;
	}
	return true;
}

/* Bytes the MAM's stored attributes take, as a real cartridge memory would count them. */
static uint64_t mam_used(const struct ssc_mam *m)
{
	uint64_t used = 0;
	for (unsigned i = 0; i < m->n; i++)
		if (def_of(m->a[i].id))
			used += MAM_HEADER + m->a[i].len;
	return used;
}

/*
 * The current value of def into out (MAM_VALUE_MAX bytes): its length, or 0
 * when the attribute is in the nonexistent state. live: the cartridge is
 * loaded (else stored values answer, as for CACHE).
 */
static size_t value_of(struct ssc_drive *d, const struct mam_def *def, bool live, uint8_t *out)
{
	struct ssc_mam *m = mam_of(d);
	if (def->id == A_MAM_SPACE_REMAINING) {
		uint64_t cap = get_num(d, A_MAM_CAPACITY), used = mam_used(m);
		be_put(out, cap > used ? cap - used : 0, def->len);
		return def->len;
	}
	if (live && def->kind == K_LIVE) {
		be_put(out, live_value(d, def->id), def->len);
		return def->len;
	}
	struct mam_slot *s = slot_of(m, def->id);
	if (!s)
		return 0;
	memcpy(out, s->val, s->len);
	return s->len;
}

/* Whether READ ATTRIBUTE may answer, from what; else fills *s. */
static bool mam_readable(struct ssc_drive *d, bool cache, bool *live, struct scsi_sense *s)
{
	struct scsi_sense nr;
	const struct scsi_sense *not_ready = ssc_not_ready(d, &nr);
	struct ssc_mam *m = mam_of(d);
	*live = !not_ready;
	if (not_ready && !(cache && d->state != SSC_CLEANING && m && m->barcode[0] && !m->read_error)) {
		*s = *not_ready;
		return false;
	}
	if (!m || m->read_error) {
		*s = sense_of(SK_MEDIUM_ERROR, ASC_AUXILIARY_MEMORY_READ_ERROR);
		return false;
	}
	return true;
}

/* The biggest READ ATTRIBUTE answer: every attribute at its longest. */
#define RA_MAX (LIST_HEADER + N_DEFS * (MAM_HEADER + MAM_VALUE_MAX))

void ssc_read_attribute(struct scsi_dev *dev, struct scsi_cmd *c)
{
	struct ssc_drive *d = ssc_of(dev);
	uint8_t sa = c->cdb[CDB_SA_BYTE] & CDB_SA_MASK;
	uint16_t first = (uint16_t)be_get(c->cdb + CDB_FIRST_ID_BYTE, 2);
	size_t alloc = (size_t)be_get(c->cdb + CDB_LENGTH_BYTE, 4);
	bool cache = c->cdb[CDB_CACHE_BYTE] & CDB_CACHE_BIT;
	if (sa != RA_VALUES && sa != RA_LIST && sa != RA_VOLUME_LIST && sa != RA_PARTITION_LIST &&
	    sa != RA_SUPPORTED) {
		scsi_fail(c, sense_invalid_cdb_field(CDB_SA_BYTE, CDB_SA_BIT));
		return;
	}
	if (!volume_partition_ok(c))
		return;
	bool live;
	struct scsi_sense s;
	if (!mam_readable(d, cache, &live, &s)) {
		scsi_fail(c, s);
		return;
	}
	uint8_t *b = malloc(RA_MAX);
	if (!b) {
		scsi_fail(c, sense_of(SK_HARDWARE_ERROR, ASC_INTERNAL_TARGET_FAILURE));
		return;
	}
	size_t at;
	if (sa == RA_VOLUME_LIST || sa == RA_PARTITION_LIST) {
		/* AVAILABLE DATA (2 bytes), first number, how many (SPC-4 tables 173, 174). */
		be_put(b, 2, 2);
		b[2] = 0;
		b[3] = 1;
		at = 4;
	} else {
		at = LIST_HEADER;
		for (size_t i = 0; i < N_DEFS; i++) {
			const struct mam_def *def = &mam_defs[i];
			if (def->id < first)
				continue;
			uint8_t v[MAM_VALUE_MAX];
			size_t len = sa == RA_SUPPORTED ? 1 : value_of(d, def, live, v);
			if (!len)
				continue;
			be_put(b + at, def->id, 2);
			at += 2;
			if (sa == RA_VALUES) {
				b[at] = (uint8_t)((def->kind == K_HOST ? 0 : MAM_READ_ONLY) | def->format);
				be_put(b + at + 1, len, 2);
				memcpy(b + at + 3, v, len);
				at += 3 + len;
			}
		}
		be_put(b, at - LIST_HEADER, 4);
	}
	scsi_data_in(c, b, at, alloc);
	free(b);
}

/* ----------------------------------------------------------- WRITE ATTRIBUTE */

/* Checks one attribute of the parameter list at offset at; false with *s on the first fault. */
static bool attr_ok(const uint8_t *p, size_t at, struct scsi_sense *s)
{
	uint16_t id = (uint16_t)be_get(p + at, 2);
	uint8_t format = p[at + 2] & MAM_FORMAT_MASK;
	size_t len = (size_t)be_get(p + at + 3, 2);
	const uint8_t *v = p + at + MAM_HEADER;
	const struct mam_def *def = def_of(id);
	/* Unsupported or read only: the field pointer names its identifier (SPC-4 6.40). */
	if (!def || def->kind != K_HOST) {
		*s = sense_invalid_param_field((uint16_t)at, -1);
		return false;
	}
	if (format != def->format) {
		*s = sense_invalid_param_field((uint16_t)(at + 2), 1);
		return false;
	}
	if (len == 0) /* the attribute goes to the nonexistent state */
		return true;
	if (def->variable ? len > def->len : len != def->len) {
		*s = sense_invalid_param_field((uint16_t)(at + 3), -1);
		return false;
	}
	if (def->format == MAM_ASCII) {
		/* ASCII attributes hold printable characters only (SPC-4 4.3.1). */
		for (size_t i = 0; i < len; i++)
			if (v[i] < 0x20 || v[i] > 0x7E) {
				*s = sense_invalid_param_field((uint16_t)(at + MAM_HEADER + i), -1);
				return false;
			}
	}
	if (id == A_VOLUME_COHERENCY) {
		size_t vcr = v[0];
		if (len < VCI_FIXED || vcr > VCI_VCR_MAX || VCI_FIXED + vcr > len) {
			*s = sense_invalid_param_field((uint16_t)(at + MAM_HEADER), -1);
			return false;
		}
		size_t info_at = 1 + vcr + 16;
		if (info_at + 2 + be_get(v + info_at, 2) != len) {
			*s = sense_invalid_param_field((uint16_t)(at + MAM_HEADER + info_at), -1);
			return false;
		}
	}
	return true;
}

void ssc_write_attribute(struct scsi_dev *dev, struct scsi_cmd *c)
{
	struct ssc_drive *d = ssc_of(dev);
	if (!volume_partition_ok(c))
		return;
	size_t plen = (size_t)be_get(c->cdb + CDB_LENGTH_BYTE, 4);
	struct scsi_sense s;
	const struct scsi_sense *not_ready = ssc_not_ready(d, &s);
	if (not_ready) {
		scsi_fail(c, *not_ready);
		return;
	}
	struct ssc_mam *m = mam_of(d);
	if (!m || m->read_error) {
		scsi_fail(c, sense_of(SK_MEDIUM_ERROR, ASC_AUXILIARY_MEMORY_READ_ERROR));
		return;
	}
	if (plen == 0) {
		scsi_done(c, 0);
		return;
	}
	size_t cap = scsi_buf_len(c) < plen ? scsi_buf_len(c) : plen;
	uint8_t *p = malloc(cap ? cap : 1);
	if (!p) {
		scsi_fail(c, sense_of(SK_HARDWARE_ERROR, ASC_INTERNAL_TARGET_FAILURE));
		return;
	}
	size_t n = scsi_data_out(c, p, cap);
	/* The list is checked whole before anything changes; PARAMETER DATA LENGTH is ignored (SPC-4 6.40). */
	bool ok = n >= LIST_HEADER;
	if (!ok)
		s = sense_of(SK_ILLEGAL_REQUEST, ASC_PARAMETER_LIST_LENGTH);
	for (size_t at = LIST_HEADER; ok && at < n;) {
		if (at + MAM_HEADER > n || at + MAM_HEADER + be_get(p + at + 3, 2) > n) {
			/* An attribute cut by the parameter list length (SPC-4 6.40). */
			s = sense_of(SK_ILLEGAL_REQUEST, ASC_PARAMETER_LIST_LENGTH);
			ok = false;
		} else {
			ok = attr_ok(p, at, &s);
			at += MAM_HEADER + be_get(p + at + 3, 2);
		}
	}
	for (size_t at = LIST_HEADER; ok && at < n; at += MAM_HEADER + be_get(p + at + 3, 2)) {
		if (ssc_mam_put(d, (uint16_t)be_get(p + at, 2), p + at + MAM_HEADER, (size_t)be_get(p + at + 3, 2)) !=
		    VTL_OK) {
			s = sense_of(SK_MEDIUM_ERROR, ASC_AUXILIARY_MEMORY_WRITE_ERROR);
			ok = false;
		}
	}
	free(p);
	if (ok)
		scsi_done(c, 0);
	else
		scsi_fail(c, s);
}
