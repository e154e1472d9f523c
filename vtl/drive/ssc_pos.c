/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Positioning (SSC-4): REWIND, SPACE(6/16), LOCATE(10/16), READ POSITION
 * in its short, long and extended forms, and ERASE. The tape has one
 * partition (0); logical object identifiers count blocks and filemarks
 * from 0 at BOT, as the backend numbers them.
 *
 * A drive empties its buffer to the medium before it moves the tape, so a
 * positioning command first makes buffered writes durable; a failure there
 * belongs to the earlier writes and is reported as a deferred error.
 */
#include "vtl/drive/ssc_internal.h"

#include <string.h>

#include "common/vtl_error.h"

#define IMMED_BIT 0x01

/* SPACE(6) / SPACE(16) (SSC-4, SPACE(6) and SPACE(16)): CODE in byte 1 bits 3..0. */
#define SPACE_CODE_MASK 0x0F
enum space_code {
	SPACE_BLOCKS = 0,
	SPACE_FILEMARKS = 1,
	SPACE_SEQ_FILEMARKS = 2,
	SPACE_EOD = 3,
};
#define SPACE6_COUNT_BYTE 2   /* 3 bytes, two's complement */
#define SPACE16_COUNT_BYTE 4  /* 8 bytes */
#define SPACE16_PLEN_BYTE 12  /* parameter length: no parameter data is defined */

/* LOCATE(10) / LOCATE(16). */
#define LOCATE_CP 0x02        /* change partition */
#define LOCATE10_BT 0x04      /* block address type: device-specific, the same numbers here */
#define LOCATE10_ADDR_BYTE 3
#define LOCATE10_PART_BYTE 8
#define LOCATE16_DEST_SHIFT 3 /* DEST_TYPE, byte 1 bits 5..3 */
#define LOCATE16_DEST_MASK 0x07
#define LOCATE16_BAM 0x01     /* byte 2: implicit block address mode */
#define LOCATE16_PART_BYTE 3
#define LOCATE16_ADDR_BYTE 4
enum dest_type { DEST_OBJECT = 0, DEST_FILE = 1, DEST_EOD = 3 };

/* READ POSITION (SSC-4 7.7): service actions and data. */
#define RP_SA_MASK 0x1F
enum rp_form { RP_SHORT = 0x00, RP_SHORT_VENDOR = 0x01, RP_LONG = 0x06, RP_EXTENDED = 0x08 };
#define RP_ALLOC_BYTE 7       /* extended form only, 2 bytes */
#define RP_SHORT_LEN 20
#define RP_LONG_LEN 32
#define RP_EXT_LEN 32
#define RP_BOP 0x80           /* beginning of partition */
#define RP_EOP 0x40           /* between early warning and end of partition */
#define RP_LOLU 0x04          /* short/extended: logical object location unknown */
#define RP_LONU 0x04          /* long: logical object number unknown */
#define RP_SHORT_MAX 0xFFFFFFFFull

/* ERASE(6). */
#define ERASE_LONG 0x01
#define ERASE_IMMED 0x02

/* Flushes before moving; on failure fails c with the deferred error and returns false. */
static bool flush_first(struct ssc_drive *d, struct scsi_cmd *c)
{
	struct scsi_sense s;
	if (ssc_flush(d, &s))
		return true;
	scsi_fail(c, s);
	return false;
}

void ssc_rewind(struct scsi_dev *dev, struct scsi_cmd *c)
{
	struct ssc_drive *d = ssc_of(dev);
	if (c->cdb[1] & ~IMMED_BIT) {
		scsi_fail(c, sense_invalid_cdb_field(1, top_bit(c->cdb[1] & ~IMMED_BIT)));
		return;
	}
	if (!flush_first(d, c))
		return;
	if (vtl_cart_rewind(d->cart) != VTL_OK) {
		scsi_fail(c, sense_of(SK_MEDIUM_ERROR, ASC_SEQUENTIAL_POSITIONING_ERROR));
		return;
	}
	scsi_done(c, 0);
}

/*
 * The sense of a positioning command that met end of data: BLANK CHECK, or,
 * on a cartridge being staged back, what its stage says instead (NOT READY
 * while the command's wait on it ran out, MEDIUM ERROR for what it failed to
 * bring back): never a false end of data.
 */
static struct scsi_sense eod_sense(struct ssc_drive *d)
{
	struct vtl_position pos;
	vtl_cart_position(d->cart, &pos);
	struct scsi_sense s;
	if (ssc_stage_sense(d, pos.eod, &s))
		return s;
	s = sense_of(SK_BLANK_CHECK, ASC_EOD_DETECTED);
	s.eom = pos.early_warning;
	return s;
}

/* Positions at end of data (SPACE code 011b, LOCATE(16) destination 011b). */
static void to_eod(struct ssc_drive *d, struct scsi_cmd *c)
{
	struct vtl_position pos;
	struct scsi_sense s;
	if (vtl_cart_space_eod(d->cart) != VTL_OK) {
		scsi_fail(c, sense_of(SK_MEDIUM_ERROR, ASC_LOCATE_FAILED));
		return;
	}
	vtl_cart_position(d->cart, &pos);
	if (ssc_stage_sense(d, pos.eod, &s))
		scsi_fail(c, s); /* the end of what is back, not the cartridge's */
	else
		scsi_done(c, 0);
}

/* Reports how a space stopped before its count (SSC-4, SPACE(6)); INFORMATION is the count not spaced. */
static void space_stopped(struct ssc_drive *d, struct scsi_cmd *c, const struct vtl_space_result *r)
{
	struct scsi_sense s;
	switch (r->stop) {
	case VTL_SPACE_FILEMARK:
		s = sense_of(SK_NO_SENSE, ASC_FILEMARK_DETECTED);
		s.filemark = true;
		break;
	case VTL_SPACE_EOD:
		s = eod_sense(d);
		break;
	case VTL_SPACE_BOT:
		s = sense_of(SK_NO_SENSE, ASC_BOT_DETECTED);
		s.eom = true;
		break;
	case VTL_SPACE_MEDIUM:
		/* Damage it cannot space over: MEDIUM ERROR where it stopped (SSC-4, SPACE(6)). */
		s = ssc_sense_of_err(d, VTL_E_MEDIUM);
		break;
	default:
		scsi_done(c, 0);
		return;
	}
	s.info_valid = true;
	s.info = r->residual > INT32_MAX ? INT32_MAX : (int32_t)r->residual;
	scsi_fail(c, s);
}

static void space(struct ssc_drive *d, struct scsi_cmd *c, uint8_t code, int64_t count)
{
	if (code != SPACE_BLOCKS && code != SPACE_FILEMARKS && code != SPACE_EOD) {
		/* Sequential filemarks and setmarks are not LTO features. */
		scsi_fail(c, sense_invalid_cdb_field(1, 3));
		return;
	}
	if (!flush_first(d, c))
		return;
	if (code == SPACE_EOD) {
		to_eod(d, c);
		return;
	}
	if (count == 0) {
		scsi_done(c, 0);
		return;
	}
	struct vtl_space_result r;
	int rc = code == SPACE_BLOCKS ? vtl_cart_space_blocks(d->cart, count, &r)
				      : vtl_cart_space_filemarks(d->cart, count, &r);
	if (rc < 0 && r.stop == VTL_SPACE_DONE) {
		scsi_fail(c, ssc_sense_of_err(d, rc));
		return;
	}
	space_stopped(d, c, &r);
}

void ssc_space6(struct scsi_dev *dev, struct scsi_cmd *c)
{
	if (c->cdb[1] & ~SPACE_CODE_MASK) {
		scsi_fail(c, sense_invalid_cdb_field(1, top_bit(c->cdb[1] & ~SPACE_CODE_MASK)));
		return;
	}
	/* A 24-bit two's complement count. */
	int64_t count = (int64_t)be_get(c->cdb + SPACE6_COUNT_BYTE, 3);
	if (count & 0x800000)
		count -= 0x1000000;
	space(ssc_of(dev), c, c->cdb[1] & SPACE_CODE_MASK, count);
}

void ssc_space16(struct scsi_dev *dev, struct scsi_cmd *c)
{
	if (c->cdb[1] & ~SPACE_CODE_MASK) {
		scsi_fail(c, sense_invalid_cdb_field(1, top_bit(c->cdb[1] & ~SPACE_CODE_MASK)));
		return;
	}
	if (be_get(c->cdb + SPACE16_PLEN_BYTE, 2) != 0) {
		scsi_fail(c, sense_invalid_cdb_field(SPACE16_PLEN_BYTE, -1));
		return;
	}
	int64_t count = (int64_t)be_get(c->cdb + SPACE16_COUNT_BYTE, 8);
	space(ssc_of(dev), c, c->cdb[1] & SPACE_CODE_MASK, count);
}

/* Positions at object obj; past end of data it stops there with BLANK CHECK (SSC-4, LOCATE(10) and LOCATE(16)). */
static void locate_object(struct ssc_drive *d, struct scsi_cmd *c, uint64_t obj)
{
	int rc = vtl_cart_locate(d->cart, obj);
	if (rc == VTL_E_EOD) {
		scsi_fail(c, eod_sense(d));
		return;
	}
	if (rc != VTL_OK) {
		scsi_fail(c, ssc_sense_of_err(d, rc));
		return;
	}
	scsi_done(c, 0);
}

/* Checks the partition fields: only partition 0 exists. */
static bool partition_ok(struct scsi_cmd *c, bool cp, uint8_t part_byte)
{
	if (cp && c->cdb[part_byte] != 0) {
		scsi_fail(c, sense_invalid_cdb_field(part_byte, -1));
		return false;
	}
	return true;
}

void ssc_locate10(struct scsi_dev *dev, struct scsi_cmd *c)
{
	struct ssc_drive *d = ssc_of(dev);
	uint8_t f = c->cdb[1];
	if (f & ~(IMMED_BIT | LOCATE_CP | LOCATE10_BT)) {
		scsi_fail(c, sense_invalid_cdb_field(1, top_bit(f & ~(IMMED_BIT | LOCATE_CP | LOCATE10_BT))));
		return;
	}
	if (!partition_ok(c, f & LOCATE_CP, LOCATE10_PART_BYTE) || !flush_first(d, c))
		return;
	locate_object(d, c, be_get(c->cdb + LOCATE10_ADDR_BYTE, 4));
}

void ssc_locate16(struct scsi_dev *dev, struct scsi_cmd *c)
{
	struct ssc_drive *d = ssc_of(dev);
	uint8_t f = c->cdb[1];
	unsigned dest = (f >> LOCATE16_DEST_SHIFT) & LOCATE16_DEST_MASK;
	uint8_t known = IMMED_BIT | LOCATE_CP | (LOCATE16_DEST_MASK << LOCATE16_DEST_SHIFT);
	if (f & ~known) {
		scsi_fail(c, sense_invalid_cdb_field(1, top_bit(f & ~known)));
		return;
	}
	if (dest != DEST_OBJECT && dest != DEST_FILE && dest != DEST_EOD) {
		scsi_fail(c, sense_invalid_cdb_field(1, 5));
		return;
	}
	if (c->cdb[2] & LOCATE16_BAM) {
		/* Implicit addressing needs the host to track positions the drive cannot check: not offered. */
		scsi_fail(c, sense_invalid_cdb_field(2, 0));
		return;
	}
	if (!partition_ok(c, f & LOCATE_CP, LOCATE16_PART_BYTE) || !flush_first(d, c))
		return;
	uint64_t id = be_get(c->cdb + LOCATE16_ADDR_BYTE, 8);
	if (dest == DEST_OBJECT) {
		locate_object(d, c, id);
		return;
	}
	if (dest == DEST_EOD) {
		to_eod(d, c);
		return;
	}
	/* File n begins just past the n-th filemark from BOT. */
	struct vtl_space_result r = {0};
	int rc = vtl_cart_rewind(d->cart);
	if (rc == VTL_OK && id > 0)
		rc = vtl_cart_space_filemarks(d->cart, (int64_t)(id > INT64_MAX ? INT64_MAX : id), &r);
	if (r.stop == VTL_SPACE_EOD) {
		scsi_fail(c, eod_sense(d));
		return;
	}
	if (rc < 0) {
		scsi_fail(c, ssc_sense_of_err(d, rc));
		return;
	}
	scsi_done(c, 0);
}

void ssc_read_position(struct scsi_dev *dev, struct scsi_cmd *c)
{
	struct ssc_drive *d = ssc_of(dev);
	uint8_t sa = c->cdb[1] & RP_SA_MASK;
	if (c->cdb[1] & ~RP_SA_MASK) {
		scsi_fail(c, sense_invalid_cdb_field(1, top_bit(c->cdb[1] & ~RP_SA_MASK)));
		return;
	}
	struct vtl_position pos;
	vtl_cart_position(d->cart, &pos);
	uint8_t flags = (uint8_t)((pos.bot ? RP_BOP : 0) | (pos.early_warning && pos.at_eod ? RP_EOP : 0));
	uint8_t b[RP_EXT_LEN];
	memset(b, 0, sizeof b);
	switch (sa) {
	case RP_SHORT:
	case RP_SHORT_VENDOR:
		/* Nothing waits in a buffer: written objects are on the medium the moment WRITE ends. */
		b[0] = flags;
		if (pos.object > RP_SHORT_MAX) {
			b[0] |= RP_LOLU; /* the position does not fit the 4-byte fields */
		} else {
			be_put(b + 4, pos.object, 4);
			be_put(b + 8, pos.object, 4);
		}
		scsi_data_in(c, b, RP_SHORT_LEN, RP_SHORT_LEN);
		return;
	case RP_LONG:
		b[0] = flags;
		be_put(b + 8, pos.object, 8);
		be_put(b + 16, pos.file, 8);
		scsi_data_in(c, b, RP_LONG_LEN, RP_LONG_LEN);
		return;
	case RP_EXTENDED:
		b[0] = flags;
		be_put(b + 2, RP_EXT_LEN - 4, 2);
		be_put(b + 8, pos.object, 8);
		be_put(b + 16, pos.object, 8);
		scsi_data_in(c, b, RP_EXT_LEN, be_get(c->cdb + RP_ALLOC_BYTE, 2));
		return;
	default:
		scsi_fail(c, sense_invalid_cdb_field(1, 4));
		return;
	}
}

void ssc_erase6(struct scsi_dev *dev, struct scsi_cmd *c)
{
	struct ssc_drive *d = ssc_of(dev);
	uint8_t f = c->cdb[1];
	if (f & ~(ERASE_LONG | ERASE_IMMED)) {
		scsi_fail(c, sense_invalid_cdb_field(1, top_bit(f & ~(ERASE_LONG | ERASE_IMMED))));
		return;
	}
	struct scsi_sense s;
	if (!ssc_may_write(d, &s) || !ssc_append_allowed(d, false, &s)) {
		scsi_fail(c, s);
		return;
	}
	struct vtl_position pos;
	vtl_cart_position(d->cart, &pos);
	if (d->label.worm && !pos.at_eod) {
		/* Erasing written WORM data is an overwrite. */
		scsi_fail(c, sense_of(SK_DATA_PROTECT, ASC_WORM_OVERWRITE));
		return;
	}
	/*
	 * Short erase writes end of data here; long erase erases to the end of the
	 * medium. Both leave nothing after this position, which is what a host can
	 * observe; the position stays.
	 */
	int rc = vtl_cart_erase(d->cart);
	if (rc != VTL_OK) {
		scsi_fail(c, ssc_sense_of_err(d, rc));
		return;
	}
	ssc_crypt_written(d, pos.object, false); /* nothing after this position */
	if (!(f & ERASE_IMMED) && !flush_first(d, c))
		return;
	scsi_done(c, 0);
}
