/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Append-only mode (SSC-4 4.2.23): the WRITE MODE of the Device
 * Configuration Extension mode page (10h/01h, SSC-4 8.3.8) and the ALLOW
 * OVERWRITE command (82h, SSC-4 7.1), as IBM LTO drives offer them and IBM
 * Storage Protect uses them (CHECKTAPEPOS): once a host sets append-only
 * mode, a write-type command (WRITE, WRITE FILEMARKS, ERASE) anywhere but
 * at end of data is refused, unless the host first named that position with
 * ALLOW OVERWRITE (current position); FORMAT MEDIUM and SET CAPACITY, which
 * rewrite the medium from BOT, need ALLOW OVERWRITE format. The allow
 * overwrite variable is used up by the write-type command it let through
 * (or refused), and forgotten at every load.
 *
 * The refusal is DATA PROTECT, WORM MEDIUM - OVERWRITE ATTEMPTED (30h/0Ch)
 * with TapeAlert flag 09h, as mhVTL answers it; a host reads it as "append
 * only", the same as on WORM media.
 */
#include "vtl/drive/ssc_internal.h"

#include <string.h>

#include "vtl/scsi/spc_mode.h"

/* Device Configuration Extension mode page (SSC-4 8.3.8): sub_page format, 32 bytes. */
#define DCE_MODES 5            /* bits 7..4 WRITE MODE, bits 3..0 SHORT ERASE MODE */
#define DCE_WRITE_MODE_SHIFT 4
#define DCE_WRITE_MODE_BIT 7
#define WRITE_MODE_OVERWRITE 0x0   /* overwrite-allowed */
#define WRITE_MODE_APPEND_ONLY 0x1

/* ALLOW OVERWRITE CDB (SSC-4 7.1): 16 bytes. */
#define AO_FIELD_BYTE 2        /* bits 3..0 ALLOW OVERWRITE */
#define AO_FIELD_MASK 0x0F
#define AO_PARTITION_BYTE 3
#define AO_OBJECT_BYTE 4       /* 8 bytes: LOGICAL OBJECT IDENTIFIER */

const uint8_t ssc_dce_page_mask[SSC_DCE_PAGE_LEN] = {[DCE_MODES] = 0xF0};

void ssc_dce_page_render(const struct ssc_mode *m, uint8_t *p)
{
	p[DCE_MODES] = (uint8_t)((m->append_only ? WRITE_MODE_APPEND_ONLY : WRITE_MODE_OVERWRITE)
				 << DCE_WRITE_MODE_SHIFT);
}

bool ssc_dce_page_check(const struct ssc_mode *cur, const uint8_t *p, uint16_t *byte, int *bit)
{
	uint8_t wm = p[DCE_MODES] >> DCE_WRITE_MODE_SHIFT;
	/*
	 * Only the two write modes exist; and append-only, once set, is not
	 * taken back by a MODE SELECT (as mhVTL reads SSC-4 8.3.8): a host that
	 * protects its tapes this way cannot be undone by another.
	 */
	if (wm > WRITE_MODE_APPEND_ONLY || (cur->append_only && wm == WRITE_MODE_OVERWRITE)) {
		*byte = DCE_MODES;
		*bit = DCE_WRITE_MODE_BIT;
		return false;
	}
	return true;
}

void ssc_dce_page_apply(struct ssc_mode *m, const uint8_t *p)
{
	m->append_only = (p[DCE_MODES] >> DCE_WRITE_MODE_SHIFT) == WRITE_MODE_APPEND_ONLY;
}

void ssc_allow_overwrite(struct scsi_dev *dev, struct scsi_cmd *c)
{
	struct ssc_drive *d = ssc_of(dev);
	const uint8_t *cdb = c->cdb;
	if (cdb[1]) {
		scsi_fail(c, sense_invalid_cdb_field(1, top_bit(cdb[1])));
		return;
	}
	if (cdb[AO_FIELD_BYTE] & ~AO_FIELD_MASK) {
		scsi_fail(c, sense_invalid_cdb_field(AO_FIELD_BYTE, top_bit(cdb[AO_FIELD_BYTE] & ~AO_FIELD_MASK)));
		return;
	}
	uint8_t what = cdb[AO_FIELD_BYTE] & AO_FIELD_MASK;
	d->allow_overwrite = SSC_ALLOW_DISABLED;
	switch (what) {
	case SSC_ALLOW_DISABLED:
		break;
	case SSC_ALLOW_CURRENT: {
		if (cdb[AO_PARTITION_BYTE] != 0) {
			/* One partition only. */
			scsi_fail(c, sense_invalid_cdb_field(AO_PARTITION_BYTE, SPC_MODE_FIELD_BIT));
			return;
		}
		struct vtl_position pos;
		vtl_cart_position(d->cart, &pos);
		if (be_get(cdb + AO_OBJECT_BYTE, 8) != pos.object) {
			/* It must name where the drive is (SSC-4 7.1). */
			scsi_fail(c, sense_of(SK_ILLEGAL_REQUEST, ASC_SEQUENTIAL_POSITIONING_ERROR));
			return;
		}
		d->allow_overwrite = SSC_ALLOW_CURRENT;
		d->allow_object = pos.object;
		break;
	}
	case SSC_ALLOW_FORMAT:
		d->allow_overwrite = SSC_ALLOW_FORMAT;
		break;
	default:
		scsi_fail(c, sense_invalid_cdb_field(AO_FIELD_BYTE, 3));
		return;
	}
	scsi_done(c, 0);
}

bool ssc_append_allowed(struct ssc_drive *d, bool from_bot, struct scsi_sense *s)
{
	if (!d->mode.append_only)
		return true;
	struct vtl_position pos;
	vtl_cart_position(d->cart, &pos);
	uint8_t allow = d->allow_overwrite;
	d->allow_overwrite = SSC_ALLOW_DISABLED;
	/* Writing at end of data overwrites nothing (a blank medium is at its end of data). */
	bool ok = pos.at_eod;
	if (from_bot)
		ok |= allow == SSC_ALLOW_FORMAT;
	else
		ok |= allow == SSC_ALLOW_CURRENT && d->allow_object == pos.object;
	if (!ok) {
		*s = sense_of(SK_DATA_PROTECT, ASC_APPEND_ONLY_OVERWRITE);
		d->tapealert |= 1ull << (TA_WRITE_PROTECT - 1);
	}
	return ok;
}
