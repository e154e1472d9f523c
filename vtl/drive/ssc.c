/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The drive's life: its command table, creation, cartridges going in and
 * out (robot, host LOAD UNLOAD, cleaning), readiness, TEST UNIT READY,
 * REQUEST SENSE, PREVENT ALLOW MEDIUM REMOVAL and INQUIRY.
 */
#include "vtl/drive/ssc_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/lockorder.h"
#include "common/clock.h"
#include "common/grow.h"
#include "common/log.h"
#include "common/vtl_error.h"

#define NEED OP_NEEDS_MEDIUM
#define EXEMPT (OP_UA_EXEMPT | OP_RES_ALLOWED | OP_RES_SPC2_OK)
/*
 * Reservation classes (vtl/scsi/dispatch.h) from SPC-4 table 64, SSC-4's
 * table of tape commands and SPC-2 5.5.1: R_ANY never conflicts (LOG SENSE,
 * READ BLOCK LIMITS, REPORT DENSITY SUPPORT: "Allowed" in every column);
 * TUR and the PERSISTENT RESERVE commands pass persistent reservations
 * only (their handlers apply SPC-4 5.9 themselves); READ commands that read
 * the medium or the device's state, and positioning that does not write,
 * pass the Write Exclusive types; the rest (writing, erasing, loading,
 * selecting parameters) conflict.
 */
#define R_ANY (OP_RES_ALLOWED | OP_RES_SPC2_OK)
#define R_PR OP_RES_ALLOWED
#define R_READ OP_RES_READ
#define R_WRITE 0

/*
 * Recommended command timeouts, seconds (REPORT SUPPORTED OPERATION CODES,
 * SPC-4 6.35.4): this drive's own ceilings, generous as LTO drives' are.
 */
#define TMO_STATE 60     /* answered from memory */
#define TMO_DATA 1200    /* one block moved, or filemarks written: may wait on a segment seal */
#define TMO_MOTION 2400  /* positioning over a whole cartridge, loading, unloading */
#define TMO_FORMAT 3600  /* ERASE, FORMAT MEDIUM, SET CAPACITY: every segment removed */


/* The drive's commands (SSC-4 table 5 and SPC-4); REPORT SUPPORTED OPERATION CODES lists exactly these. */
static const struct scsi_op ssc_ops[] = {
	{0x00, SA_NONE, 6, NEED | R_PR, "TEST UNIT READY", ssc_test_unit_ready,
	 U6(0x00, 0, 0, 0, 0), TMO_STATE},
	{0x01, SA_NONE, 6, NEED | R_READ, "REWIND", ssc_rewind,
	 U6(0x01, 0x01, 0, 0, 0), TMO_MOTION},
	{0x03, SA_NONE, 6, EXEMPT, "REQUEST SENSE", ssc_request_sense,
	 U6(0x03, 0x01, 0, 0, 0xFF), TMO_STATE},
	{0x04, SA_NONE, 6, NEED | R_WRITE, "FORMAT MEDIUM", ssc_format_medium,
	 U6(0x04, 0x03, 0x0F, 0xFF, 0xFF), TMO_FORMAT},
	{0x05, SA_NONE, 6, R_ANY, "READ BLOCK LIMITS", ssc_read_block_limits,
	 U6(0x05, 0, 0, 0, 0), TMO_STATE},
	{0x08, SA_NONE, 6, NEED | R_READ, "READ(6)", ssc_read6,
	 U6(0x08, 0x03, 0xFF, 0xFF, 0xFF), TMO_DATA},
	{0x0A, SA_NONE, 6, NEED | R_WRITE, "WRITE(6)", ssc_write6,
	 U6(0x0A, 0x01, 0xFF, 0xFF, 0xFF), TMO_DATA},
	{0x0B, SA_NONE, 6, NEED | R_WRITE, "SET CAPACITY", ssc_set_capacity,
	 U6(0x0B, 0x01, 0, 0xFF, 0xFF), TMO_FORMAT},
	{0x10, SA_NONE, 6, NEED | R_WRITE, "WRITE FILEMARKS(6)", ssc_write_filemarks6,
	 U6(0x10, 0x01, 0xFF, 0xFF, 0xFF), TMO_DATA},
	{0x11, SA_NONE, 6, NEED | R_READ, "SPACE(6)", ssc_space6,
	 U6(0x11, 0x0F, 0xFF, 0xFF, 0xFF), TMO_MOTION},
	{0x12, SA_NONE, 6, EXEMPT, "INQUIRY", ssc_inquiry,
	 U6(0x12, 0x01, 0xFF, 0xFF, 0xFF), TMO_STATE},
	{0x13, SA_NONE, 6, NEED | R_READ, "VERIFY(6)", ssc_verify6,
	 U6(0x13, 0x07, 0xFF, 0xFF, 0xFF), TMO_DATA},
	{0x15, SA_NONE, 6, R_WRITE, "MODE SELECT(6)", ssc_mode_select,
	 U6(0x15, 0x11, 0, 0, 0xFF), TMO_STATE},
	{0x16, SA_NONE, 6, R_PR, "RESERVE(6)", spc_reserve,
	 U6(0x16, 0, 0, 0, 0), TMO_STATE},
	{0x17, SA_NONE, 6, R_ANY, "RELEASE(6)", spc_release,
	 U6(0x17, 0, 0, 0, 0), TMO_STATE},
	{0x19, SA_NONE, 6, NEED | R_WRITE, "ERASE(6)", ssc_erase6,
	 U6(0x19, 0x03, 0, 0, 0), TMO_FORMAT},
	{0x1A, SA_NONE, 6, R_READ, "MODE SENSE(6)", ssc_mode_sense,
	 U6(0x1A, 0x08, 0xFF, 0xFF, 0xFF), TMO_STATE},
	{0x1B, SA_NONE, 6, R_WRITE, "LOAD UNLOAD", ssc_load_unload,
	 U6(0x1B, 0x01, 0, 0, 0x0F), TMO_MOTION},
	{0x1E, SA_NONE, 6, OP_RES_PREVENT, "PREVENT ALLOW MEDIUM REMOVAL", ssc_prevent_allow,
	 U6(0x1E, 0, 0, 0, 0x03), TMO_STATE},
	{0x2B, SA_NONE, 10, NEED | R_READ, "LOCATE(10)", ssc_locate10,
	 U10(0x2B, 0x07, 0, 0xFF, 0xFF, 0xFF, 0xFF, 0, 0xFF), TMO_MOTION},
	{0x34, SA_NONE, 10, NEED | R_READ, "READ POSITION", ssc_read_position,
	 U10(0x34, 0x1F, 0, 0, 0, 0, 0, 0xFF, 0xFF), TMO_STATE},
	{0x44, SA_NONE, 10, R_ANY, "REPORT DENSITY SUPPORT", ssc_report_density,
	 U10(0x44, 0x03, 0, 0, 0, 0, 0, 0xFF, 0xFF), TMO_STATE},
	{0x4C, SA_NONE, 10, R_WRITE, "LOG SELECT", ssc_log_select,
	 U10(0x4C, 0x03, 0xFF, 0xFF, 0, 0, 0, 0xFF, 0xFF), TMO_STATE},
	{0x4D, SA_NONE, 10, R_ANY, "LOG SENSE", ssc_log_sense,
	 U10(0x4D, 0x01, 0xFF, 0xFF, 0, 0xFF, 0xFF, 0xFF, 0xFF), TMO_STATE},
	{0x55, SA_NONE, 10, R_WRITE, "MODE SELECT(10)", ssc_mode_select,
	 U10(0x55, 0x11, 0, 0, 0, 0, 0, 0xFF, 0xFF), TMO_STATE},
	{0x56, SA_NONE, 10, R_PR, "RESERVE(10)", spc_reserve,
	 U10(0x56, 0, 0, 0, 0, 0, 0, 0, 0), TMO_STATE},
	{0x57, SA_NONE, 10, R_ANY, "RELEASE(10)", spc_release,
	 U10(0x57, 0, 0, 0, 0, 0, 0, 0, 0), TMO_STATE},
	{0x5A, SA_NONE, 10, R_READ, "MODE SENSE(10)", ssc_mode_sense,
	 U10(0x5A, 0x18, 0xFF, 0xFF, 0, 0, 0, 0xFF, 0xFF), TMO_STATE},
	SPC_PR_OPS(R_PR, TMO_STATE),
	{0x82, SA_NONE, 16, NEED | R_WRITE, "ALLOW OVERWRITE", ssc_allow_overwrite,
	 {0x82, 0, 0x0F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0}, TMO_STATE},
	{0x8C, SA_NONE, 16, R_READ, "READ ATTRIBUTE", ssc_read_attribute,
	 {0x8C, 0x1F, 0, 0, 0, 0xFF, 0, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01, 0}, TMO_STATE},
	{0x8D, SA_NONE, 16, R_WRITE, "WRITE ATTRIBUTE", ssc_write_attribute,
	 {0x8D, 0x01, 0, 0, 0, 0xFF, 0, 0xFF, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF, 0, 0}, TMO_STATE},
	{0x91, SA_NONE, 16, NEED | R_READ, "SPACE(16)", ssc_space16,
	 {0x91, 0x0F, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0}, TMO_MOTION},
	{0x92, SA_NONE, 16, NEED | R_READ, "LOCATE(16)", ssc_locate16,
	 {0x92, 0x3B, 0, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0}, TMO_MOTION},
	{0xA0, SA_NONE, 12, EXEMPT, "REPORT LUNS", spc_report_luns,
	 {0xA0, 0, 0xFF, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF, 0, 0}, TMO_STATE},
	{0xA2, SA_NONE, 12, R_READ, "SECURITY PROTOCOL IN", ssc_security_in,
	 {0xA2, 0xFF, 0xFF, 0xFF, 0x80, 0, 0xFF, 0xFF, 0xFF, 0xFF, 0, 0}, TMO_STATE},
	{0xA3, 0x0C, 12, R_READ, "REPORT SUPPORTED OPERATION CODES", spc_report_opcodes,
	 {0xA3, 0x0C, 0x87, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0, 0}, TMO_STATE},
	{0xB5, SA_NONE, 12, R_WRITE, "SECURITY PROTOCOL OUT", ssc_security_out,
	 {0xB5, 0xFF, 0xFF, 0xFF, 0x80, 0, 0xFF, 0xFF, 0xFF, 0xFF, 0, 0}, TMO_STATE},
};

const struct scsi_op *ssc_command_table(size_t *n)
{
	*n = VTL_ARRAY_SIZE(ssc_ops);
	return ssc_ops;
}

/* LOAD UNLOAD, PREVENT ALLOW MEDIUM REMOVAL and REQUEST SENSE fields (SSC-4, SPC-4). */
#define CDB_PREVENT_BYTE 4
#define PREVENT_MASK 0x03
#define PREVENT_ON 0x01
#define CDB_LOAD_BYTE 4
#define LOAD_BIT 0x01
#define RETEN_BIT 0x02
#define EOT_BIT 0x04
#define HOLD_BIT 0x08
#define CDB_IMMED_BYTE 1
#define REQSENSE_DESC 0x01
#define REQSENSE_ALLOC_BYTE 4

#define EW_DEFAULT_DIVISOR 50        /* early warning at 98% of capacity unless configured */
#define EW_DEFAULT_MAX (64ull << 30) /* and never more than 64 GiB before the end */
/*
 * The zone is never narrower than one largest write (a block of the READ
 * BLOCK LIMITS maximum with its record header): a write that starts before
 * early warning then always fits, so a host meets early warning (SSC-4
 * 4.2.6: NO SENSE, EOM, 00h/02h) before VOLUME OVERFLOW, however small the
 * cartridge. A cartridge no larger than the zone is in early warning from BOT.
 */
#define EW_MIN ((uint64_t)SSC_BLOCK_LIMIT_MAX + VTL_RECORD_OVERHEAD)

uint64_t ssc_early_warning(const struct ssc_drive *d, uint64_t capacity)
{
	uint64_t ew = d->cfg.early_warning;
	if (!ew) {
		ew = capacity / EW_DEFAULT_DIVISOR;
		if (ew > EW_DEFAULT_MAX)
			ew = EW_DEFAULT_MAX;
	}
	if (ew < EW_MIN)
		ew = EW_MIN;
	return ew < capacity ? ew : capacity;
}

static void opening_tick(struct ssc_drive *d);

/*
 * Moves the drive on: a cartridge a copy held is threaded once the copy lets
 * go, a stage moves on, a cleaning cycle that has run its time ends (the
 * drive ejects the cleaning cartridge).
 */
static void ssc_tick(struct ssc_drive *d)
{
	if (d->opening)
		opening_tick(d);
	else if (d->state == SSC_STAGING || d->following)
		ssc_stage_tick(d);
	if (d->state == SSC_CLEANING && vtl_mono_ms() >= d->clean_until_ms) {
		d->state = SSC_EJECTED;
		d->cnt.cleanings++;
		d->tapealert &= ~((1ull << (TA_CLEAN_NOW - 1)) | (1ull << (TA_CLEAN_PERIODIC - 1)));
	}
}

int ssc_create(const struct ssc_config *cfg, struct ssc_drive **out)
{
	unsigned gen = vtl_drive_generation(cfg->ident.vendor, cfg->ident.product);
	if (!gen || !cfg->pool)
		return VTL_E_CONFIG;
	struct ssc_drive *d = calloc(1, sizeof *d);
	if (!d)
		return VTL_E_NOMEM;
	struct scsi_ident id = cfg->ident;
	id.type = SCSI_TYPE_TAPE;
	/*
	 * Every model offers logical block protection (page 0Ah/F0h), and says so
	 * with PROTECT as IBM LTO drives do: hosts that use LBP (Storage Protect's
	 * LBPROTECT) look at this bit; mhVTL sets it for its LBP-capable IBM
	 * Ultrium drives for that reason (its issue 79, commit ce37a2e).
	 */
	id.protect = true;
	scsi_dev_init(&d->dev, &id, ssc_ops, VTL_ARRAY_SIZE(ssc_ops));
	d->dev.res.on_loss = ssc_crypt_res_lost; /* CKORP / CKORL */
	d->dev.res.loss_arg = d;
	pthread_mutex_init(&d->mu, NULL);
	pthread_mutex_init(&d->snap_mu, NULL);
	d->cfg = *cfg;
	d->gen = gen;
	ssc_mode_init(d);
	ssc_crypt_wipe(d); /* no key, both modes DISABLE */
	*out = d;
	return VTL_OK;
}

/* Position and counts of the loaded cartridge into st. */
static void fill_counts(struct ssc_drive *d, struct ssc_status *st)
{
	struct vtl_position pos;
	struct vtl_cart_stats cs;
	vtl_cart_position(d->cart, &pos);
	vtl_cart_stats(d->cart, &cs);
	st->object = pos.object;
	st->file = pos.file;
	st->eod = pos.eod;
	st->stored_bytes = pos.stored_bytes;
	st->written_bytes = cs.written_bytes;
	st->written_stored = cs.written_stored;
	st->read_bytes = cs.read_bytes;
	st->readahead_ready = cs.readahead_ready;
	st->readahead_limit = cs.readahead_limit;
	st->readahead_direct = cs.readahead_direct;
	st->written_direct = cs.written_direct;
	st->unsynced_bytes = cs.unsynced_bytes;
	st->compression = cs.compression;
}

/*
 * Closes the cartridge of a loaded drive; the drive keeps it, ejected. A sync
 * failure is returned; *unrecorded (may be NULL) tells whether the library
 * failed to record the unload (the cartridge is out of the drive's hands
 * either way).
 */
static int ssc_unthread(struct ssc_drive *d, bool *unrecorded)
{
	int rc = VTL_OK;
	if (unrecorded)
		*unrecorded = false;
	if (d->cart) {
		fill_counts(d, &d->last);
		ssc_mam_unloading(d);
		rc = vtl_cart_close(d->cart);
		d->cart = NULL;
		ssc_crypt_unloaded(d);
	}
	if ((d->state == SSC_LOADED || d->state == SSC_STAGING) && d->cfg.on_medium &&
	    d->cfg.on_medium(d->cfg.on_medium_arg, d->medium.barcode, SSC_EJECTED) != VTL_OK && unrecorded)
		*unrecorded = true;
	d->following = false;
	d->opening = false;
	d->state = SSC_EJECTED;
	return rc;
}

int ssc_destroy(struct ssc_drive *d)
{
	if (!d)
		return VTL_OK;
	d->cfg.on_medium = NULL; /* going away is no unload: the cartridge stays threaded for the next start */
	int rc = ssc_unthread(d, NULL);
	/* No host hears of it any more: the operator must, since acknowledged writes may be gone. */
	if (rc != VTL_OK)
		log_error("drive %s: the final sync of cartridge %s failed (%s): what was written after its last "
			  "synchronizing command may not be on the disk",
			  d->dev.ident.serial, d->medium.barcode, vtl_strerror(rc));
	ssc_crypt_wipe(d); /* keys never outlive the drive */
	free(d->mam_mem);
	free(d->bounce);
	pthread_mutex_destroy(&d->mu);
	pthread_mutex_destroy(&d->snap_mu);
	free(d);
	return rc;
}

const struct scsi_sense *ssc_not_ready(struct ssc_drive *d, struct scsi_sense *buf)
{
	ssc_tick(d);
	switch (d->state) {
	case SSC_LOADED:
		return NULL;
	case SSC_CLEANING:
		*buf = sense_of(SK_NOT_READY, ASC_CLEANING_CARTRIDGE);
		return buf;
	case SSC_STAGING:
		/* The library mounts the physical tape and stages the cartridge back (a recall). */
		*buf = sense_of(SK_NOT_READY, ASC_BECOMING_READY);
		return buf;
	case SSC_EJECTED:
		if (d->held) {
			/* Held in the drive after LOAD UNLOAD with HOLD: a LOAD makes it ready (SSC-4, LOAD UNLOAD). */
			*buf = sense_of(SK_NOT_READY, ASC_NOT_READY_INIT_REQUIRED);
			return buf;
		}
		break;
	case SSC_EMPTY:
		break;
	}
	*buf = sense_of(SK_NOT_READY, ASC_MEDIUM_NOT_PRESENT);
	return buf;
}

bool ssc_may_write(struct ssc_drive *d, struct scsi_sense *s)
{
	if (d->medium.write_protected || d->mode.swp) {
		*s = sense_of(SK_DATA_PROTECT, ASC_WRITE_PROTECTED);
		d->tapealert |= 1ull << (TA_WRITE_PROTECT - 1);
		return false;
	}
	if (!d->can_write) {
		*s = sense_of(SK_DATA_PROTECT, ASC_CANNOT_WRITE_MEDIUM);
		return false;
	}
	return ssc_stage_writable(d, s);
}

struct scsi_sense ssc_sense_of_err(struct ssc_drive *d, int err)
{
	switch (err) {
	case VTL_E_WORM:
		return sense_of(SK_DATA_PROTECT, ASC_WORM_OVERWRITE);
	case VTL_E_MEDIUM:
		d->cnt.read_errors++;
		d->tapealert |= 1ull << (TA_READ_FAILURE - 1);
		return sense_of(SK_MEDIUM_ERROR, ASC_UNRECOVERED_READ_ERROR);
	case VTL_E_READONLY:
		return sense_of(SK_DATA_PROTECT, ASC_WRITE_PROTECTED);
	case VTL_E_EOM:
	case VTL_E_POOL_FULL: {
		struct scsi_sense s = sense_of(SK_VOLUME_OVERFLOW, ASC_EOM_DETECTED);
		s.eom = true;
		return s;
	}
	case VTL_E_NOMEM:
		return sense_of(SK_HARDWARE_ERROR, ASC_INTERNAL_TARGET_FAILURE);
	/* An encrypted block the drive cannot give the host (SSC-4 4.2.21; IBM/HP LTO references). */
	case VTL_E_ENCRYPTED:
		return sense_of(SK_DATA_PROTECT, ASC_UNABLE_TO_DECRYPT);
	case VTL_E_KEY:
		return sense_of(SK_DATA_PROTECT, ASC_INCORRECT_ENCRYPTION_KEY);
	case VTL_E_AUTH:
		return sense_of(SK_DATA_PROTECT, ASC_CRYPTO_INTEGRITY_FAILED);
	case VTL_E_PLAIN:
		return sense_of(SK_DATA_PROTECT, ASC_UNENCRYPTED_WHILE_DECRYPTING);
	default:
		d->cnt.write_errors++;
		d->tapealert |= 1ull << (TA_HARD_ERROR - 1);
		return sense_of(SK_MEDIUM_ERROR, ASC_WRITE_ERROR);
	}
}

enum scsi_asc ssc_ie_pending(struct ssc_drive *d)
{
	d->ie_reported &= d->tapealert;
	if (d->mode.dexcpt || d->mode.mrie == MRIE_NONE)
		return ASC_NONE;
	if (d->mode.test)
		return ASC_FAILURE_PREDICTION_TEST;
	return (d->tapealert & ~d->ie_reported) ? ASC_FAILURE_PREDICTION : ASC_NONE;
}

void ssc_ie_reported(struct ssc_drive *d)
{
	d->mode.test = false;
	d->ie_reported = d->tapealert;
}

/*
 * Reports informational exception ie, pending before command c ran (the
 * next command after the condition tells), the way page 1Ch's MRIE says.
 */
static void report_ie(struct ssc_drive *d, struct scsi_cmd *c, enum scsi_asc ie)
{
	if (ie == ASC_NONE || ssc_ie_pending(d) == ASC_NONE)
		return;
	switch (d->mode.mrie) {
	case MRIE_RECOVERED_CONDITIONAL:
	case MRIE_RECOVERED:
	case MRIE_NO_SENSE:
		/* The command completed; its status carries the exception, its data stays transferred. */
		if (c->status != SCSI_GOOD)
			break;
		c->status = SCSI_CHECK_CONDITION;
		c->sense = sense_of(d->mode.mrie == MRIE_NO_SENSE ? SK_NO_SENSE : SK_RECOVERED_ERROR, ie);
		ssc_ie_reported(d);
		break;
	default:
		break; /* MRIE 2: raised before the command ran; MRIE 6: REQUEST SENSE reports it */
	}
}

bool ssc_flush(struct ssc_drive *d, struct scsi_sense *s)
{
	if (!d->cart || vtl_cart_sync(d->cart) == VTL_OK)
		return true;
	d->cnt.write_errors++;
	d->tapealert |= 1ull << (TA_WRITE_FAILURE - 1);
	*s = sense_of(SK_MEDIUM_ERROR, ASC_WRITE_ERROR);
	s->deferred = true;
	return false;
}

uint8_t ssc_density_of_medium(const struct ssc_drive *d)
{
	static const uint8_t by_gen[] = {[5] = DENSITY_LTO5, [6] = DENSITY_LTO6, [7] = DENSITY_LTO7,
					 [8] = DENSITY_LTO8, [9] = DENSITY_LTO9, [10] = DENSITY_LTO10};
	if (d->state == SSC_LOADED && d->label.generation >= VTL_GEN_MIN && d->label.generation <= VTL_GEN_MAX)
		return d->label.type_m ? DENSITY_LTO7M : by_gen[d->label.generation];
	return by_gen[d->gen];
}

/* Fills *st (and the snapshot ssc_status_now hands out while a command runs); called with d->mu held. */
static void status_locked(struct ssc_drive *d, struct ssc_status *st);

/* Refreshes the snapshot after a change; called with d->mu held. */
static void snap_update(struct ssc_drive *d)
{
	struct ssc_status st;
	status_locked(d, &st);
}

void ssc_execute(struct ssc_drive *d, struct scsi_cmd *c)
{
	vtl_lock(&d->mu, VTL_LOCK_DRIVE);
	d->stage_wait_until_ms = 0; /* each command waits on a stage for its own SSC_STAGE_WAIT_MS */
	d->stage_timed_out = false;
	struct scsi_sense nr;
	const struct scsi_sense *not_ready = ssc_not_ready(d, &nr);
	const struct scsi_op *op = scsi_op_find(d->dev.ops, d->dev.n_ops, c);
	/* A deferred error goes to the next command that would report a unit attention, after any such attention. */
	if (d->deferred_pending && !(op && (op->flags & OP_UA_EXEMPT)) && !ua_pending(&d->dev.ua, c->nexus)) {
		d->deferred_pending = false;
		c->sense_desc = d->dev.d_sense;
		scsi_fail(c, d->deferred);
		vtl_unlock(&d->mu, VTL_LOCK_DRIVE);
		return;
	}
	/* What the command moved to and from the medium, for the log pages' medium counters. */
	struct vtl_cart *cart = d->cart;
	struct vtl_cart_stats before, after;
	if (cart)
		vtl_cart_stats(cart, &before);
	enum scsi_asc ie = ssc_ie_pending(d);
	if (ie != ASC_NONE && d->mode.mrie == MRIE_UNIT_ATTENTION) {
		/* MRIE 2: every nexus gets a unit attention, this command's first. */
		ua_raise_all(&d->dev.ua, ie == ASC_FAILURE_PREDICTION_TEST ? UA_FAILURE_PREDICTION_TEST
									: UA_FAILURE_PREDICTION, UA_NO_NEXUS);
		ssc_ie_reported(d);
	}
	scsi_dev_execute(&d->dev, not_ready, c);
	if (!(op && (op->flags & OP_UA_EXEMPT)))
		report_ie(d, c, ie);
	if (cart && d->cart == cart) {
		vtl_cart_stats(cart, &after);
		d->cnt.medium_written += after.written_stored - before.written_stored;
		d->cnt.medium_read += after.read_stored - before.read_stored;
	}
	snap_update(d);
	vtl_unlock(&d->mu, VTL_LOCK_DRIVE);
}

/*
 * How long a load waits for a copy to physical tape to let go of the
 * cartridge, unless the drive's stage wait ([library] recall_wait) says:
 * a wait on another process with the drive held, as on a recall.
 */
#define YIELD_WAIT_MS 10000
#define YIELD_RETRY_US 50000
#define OPEN_RETRY_MS 50 /* a drive becoming ready tries to open the cartridge a copy held this often */

static uint64_t yield_wait_ms(const struct ssc_drive *d)
{
	return d->cfg.stage_wait_ms ? d->cfg.stage_wait_ms : YIELD_WAIT_MS;
}

struct vtl_cart_params ssc_cart_params(struct ssc_drive *d, bool follow)
{
	return (struct vtl_cart_params){
		.capacity = d->capacity,
		.early_warning = ssc_early_warning(d, d->capacity),
		.compression = d->mode.compression,
		.readonly = d->medium.write_protected || !d->can_write,
		.worm = d->label.worm,
		.follow = follow,
		.more = follow ? ssc_stage_more : NULL,
		.more_arg = d,
	};
}

int ssc_open_cart(struct ssc_drive *d, bool follow, struct vtl_cart **out)
{
	struct vtl_cart_params p = ssc_cart_params(d, follow);
	int rc = vtl_cart_open(d->cfg.pool, d->medium.barcode, &p, out);
	if (rc == VTL_E_BUSY && d->cfg.stage && d->cfg.stage->yield) {
		/* The migrator reads it for a copy: a host's load comes first, the copy runs again later. */
		d->cfg.stage->yield(d->cfg.stage_arg, d->medium.barcode);
		d->yield_asked_ms = vtl_mono_ms();
		for (uint64_t until = d->yield_asked_ms + yield_wait_ms(d); rc == VTL_E_BUSY && vtl_mono_ms() < until;) {
			usleep(YIELD_RETRY_US);
			rc = vtl_cart_open(d->cfg.pool, d->medium.barcode, &p, out);
		}
	}
	return rc;
}

/* Damage the open found is recorded in the event log at every load (the backend logs it too). */
static void damage_events(struct ssc_drive *d, struct vtl_cart *c)
{
	struct vtl_damage dm[VTL_DAMAGE_INFO_MAX];
	size_t n = vtl_cart_damage(c, dm, VTL_DAMAGE_INFO_MAX);
	if (!n || !d->cfg.on_event)
		return;
	char what[256];
	for (size_t i = 0; i < n && i < VTL_DAMAGE_INFO_MAX; i++) {
		size_t len = vtl_damage_describe(vtl_cart_barcode(c), &dm[i], what, sizeof what);
		snprintf(what + len, sizeof what - len, ", loaded in drive %s", d->dev.ident.serial);
		d->cfg.on_event(d->cfg.on_event_arg, what);
	}
	if (n > VTL_DAMAGE_INFO_MAX) {
		snprintf(what, sizeof what, "cartridge %s: damaged: %zu more damaged ranges (vtlctl cartridge show %s)",
			 vtl_cart_barcode(c), n - VTL_DAMAGE_INFO_MAX, vtl_cart_barcode(c));
		d->cfg.on_event(d->cfg.on_event_arg, what);
	}
}

int ssc_record_loaded(struct ssc_drive *d)
{
	int rc = d->cfg.on_medium ? d->cfg.on_medium(d->cfg.on_medium_arg, d->medium.barcode, SSC_LOADED) : VTL_OK;
	d->unrecorded = rc != VTL_OK;
	return rc;
}

int ssc_threaded(struct ssc_drive *d, struct vtl_cart *c, bool follow)
{
	int rc = ssc_record_loaded(d);
	if (rc != VTL_OK) {
		/* Nothing was written through c yet: its close cannot lose data. */
		vtl_ignore(vtl_cart_close(c));
		return rc;
	}
	damage_events(d, c);
	d->cart = c;
	d->following = follow;
	d->state = SSC_LOADED;
	d->allow_overwrite = SSC_ALLOW_DISABLED; /* it named a position on the last cartridge */
	memset(&d->last, 0, sizeof d->last);
	d->cnt.loads++;
	ssc_mam_loaded(d);
	return VTL_OK;
}

int ssc_thread(struct ssc_drive *d, bool follow)
{
	struct vtl_cart *c;
	int rc = ssc_open_cart(d, follow, &c);
	if (rc == VTL_OK)
		rc = ssc_threaded(d, c, follow);
	return rc;
}

/*
 * The robot put the cartridge in, but a copy to physical tape still holds
 * it after the yield wait: the drive keeps it and is becoming ready (NOT
 * READY, 04h/01h), as a real drive threading a tape is, until the copy lets
 * go (opening_tick); the move itself is done. The catalog says "loaded"
 * first, so that no new copy starts. on_medium failing: as ssc_threaded.
 */
static int opening_begin(struct ssc_drive *d)
{
	int rc = ssc_record_loaded(d);
	if (rc != VTL_OK)
		return rc;
	d->state = SSC_STAGING;
	d->opening = true;
	d->open_retry_ms = vtl_mono_ms() + OPEN_RETRY_MS;
	log_info("drive %s: a copy still holds %s: becoming ready until it lets go", d->dev.ident.serial,
		 d->medium.barcode);
	return VTL_OK;
}

/* One try at threading the cartridge a copy held (never a wait: commands and status displays come through here). */
static void opening_tick(struct ssc_drive *d)
{
	uint64_t now = vtl_mono_ms();
	if (now < d->open_retry_ms)
		return;
	d->open_retry_ms = now + OPEN_RETRY_MS;
	struct vtl_cart_params p = ssc_cart_params(d, false);
	struct vtl_cart *c;
	int rc = vtl_cart_open(d->cfg.pool, d->medium.barcode, &p, &c);
	if (rc == VTL_E_BUSY) {
		/* The request is only a hint to the migrator: asked again after each wait. */
		if (now - d->yield_asked_ms >= yield_wait_ms(d) && d->cfg.stage && d->cfg.stage->yield) {
			d->cfg.stage->yield(d->cfg.stage_arg, d->medium.barcode);
			d->yield_asked_ms = vtl_mono_ms();
		}
		return;
	}
	if (rc != VTL_OK) {
		/* The drive cannot load it: ejected, so that the robot may take it back (NOT READY, 3Ah/00h meanwhile). */
		log_error("drive %s: cannot open cartridge %s: %s; it is ejected", d->dev.ident.serial, d->medium.barcode,
			  vtl_strerror(rc));
		bool unrecorded;
		if (ssc_unthread(d, &unrecorded) == VTL_OK && unrecorded) /* nothing was open: only the catalog can fail */
			log_warn("drive %s: the catalog cannot record that %s is ejected", d->dev.ident.serial,
				 d->medium.barcode);
		return;
	}
	if (ssc_threaded(d, c, false) != VTL_OK)
		return; /* the catalog cannot record the load: still becoming ready, the next try records it */
	d->opening = false;
	ua_raise_all(&d->dev.ua, UA_MEDIUM_CHANGED, UA_NO_NEXUS); /* not ready to ready */
}

int ssc_insert(struct ssc_drive *d, const struct ssc_medium *m, char *err, size_t errlen)
{
	vtl_lock(&d->mu, VTL_LOCK_DRIVE);
	ssc_tick(d);
	int rc = VTL_OK;
	struct vtl_label label;
	bool can_write = false;
	if (d->state != SSC_EMPTY) {
		snprintf(err, errlen, "drive %s already holds %s", d->dev.ident.serial, d->medium.barcode);
		rc = VTL_E_DST_FULL;
	} else if ((rc = vtl_label_parse(m->barcode, &label, err, errlen)) != VTL_OK) {
		/* err says why */
	} else if (!vtl_drive_accepts(d->gen, &label, &can_write)) {
		snprintf(err, errlen, "an LTO-%u drive cannot read %s (%s)", d->gen, m->barcode,
			 vtl_media_describe(label.media, label.type_m));
		d->tapealert |= 1ull << (TA_UNSUPPORTED_FORMAT - 1);
		rc = VTL_E_INCOMPATIBLE;
	} else {
		d->medium = *m;
		d->held = false;
		d->label = label;
		d->can_write = can_write;
		d->capacity = m->capacity ? m->capacity : label.capacity;
		d->following = d->modified = d->opening = false;
		d->stage = SSC_STAGE_DONE;
		if (label.cleaning) {
			d->state = SSC_CLEANING;
			d->clean_until_ms = vtl_mono_ms() + d->cfg.clean_ms;
			d->tapealert |= 1ull << (TA_CLEANING_MEDIA - 1);
		} else {
			d->unrecorded = false;
			rc = m->migrated && d->cfg.stage && d->cfg.stage->poll ? ssc_stage_begin(d) : ssc_thread(d, false);
			/* A copy asked to let go has not yet: the cartridge is in, the drive becoming ready. */
			if (rc == VTL_E_BUSY && !d->unrecorded && d->cfg.stage && d->cfg.stage->yield)
				rc = opening_begin(d);
			if (rc != VTL_OK && d->unrecorded) {
				/* The catalog's failure, whatever its code (VTL_E_IO: HARDWARE ERROR for a host). */
				snprintf(err, errlen, "the catalog cannot record that %s is loaded", m->barcode);
				rc = VTL_E_IO;
			} else if (rc != VTL_OK) {
				snprintf(err, errlen, "cannot open cartridge %s: %s", m->barcode, vtl_strerror(rc));
				/* Its files cannot be read or their repair made durable: the drive failed to load it. */
				if (rc != VTL_E_BUSY && rc != VTL_E_NOMEM)
					rc = VTL_E_MEDIUM;
			}
			if (rc != VTL_OK)
				d->state = SSC_EMPTY;
		}
		/* A staging cartridge tells the hosts once it is ready (ssc_stage.c). */
		if (rc == VTL_OK && d->state != SSC_STAGING)
			ua_raise_all(&d->dev.ua, UA_MEDIUM_CHANGED, UA_NO_NEXUS);
	}
	snap_update(d);
	vtl_unlock(&d->mu, VTL_LOCK_DRIVE);
	return rc;
}

int ssc_eject(struct ssc_drive *d)
{
	vtl_lock(&d->mu, VTL_LOCK_DRIVE);
	ssc_tick(d);
	int rc = VTL_OK;
	if (d->state == SSC_EMPTY)
		rc = VTL_E_SRC_EMPTY;
	else if (d->dev.n_prevent)
		rc = VTL_E_BUSY;
	else if (d->state == SSC_LOADED || d->state == SSC_STAGING) {
		bool unrecorded;
		rc = ssc_unthread(d, &unrecorded);
		if (rc == VTL_OK && unrecorded)
			rc = VTL_E_IO;
	}
	if (rc == VTL_OK)
		d->held = false;
	snap_update(d);
	vtl_unlock(&d->mu, VTL_LOCK_DRIVE);
	return rc;
}

int ssc_remove(struct ssc_drive *d, char *barcode)
{
	vtl_lock(&d->mu, VTL_LOCK_DRIVE);
	ssc_tick(d);
	int rc = VTL_OK;
	if (d->state == SSC_EMPTY) {
		rc = VTL_E_SRC_EMPTY;
	} else if (d->state != SSC_EJECTED || d->held) {
		rc = VTL_E_BUSY; /* threaded, cleaning, or held in the drive by the host */
	} else {
		memcpy(barcode, d->medium.barcode, sizeof d->medium.barcode);
		memset(&d->medium, 0, sizeof d->medium);
		d->state = SSC_EMPTY;
		d->tapealert &= ~(1ull << (TA_CLEANING_MEDIA - 1));
	}
	snap_update(d);
	vtl_unlock(&d->mu, VTL_LOCK_DRIVE);
	return rc;
}

bool ssc_removable(struct ssc_drive *d)
{
	vtl_lock(&d->mu, VTL_LOCK_DRIVE);
	ssc_tick(d);
	bool r = d->state == SSC_EJECTED && !d->held;
	vtl_unlock(&d->mu, VTL_LOCK_DRIVE);
	return r;
}


void ssc_status(struct ssc_drive *d, struct ssc_status *st)
{
	vtl_lock(&d->mu, VTL_LOCK_DRIVE);
	status_locked(d, st);
	vtl_unlock(&d->mu, VTL_LOCK_DRIVE);
}

void ssc_status_now(struct ssc_drive *d, struct ssc_status *st)
{
	if (vtl_trylock(&d->mu, VTL_LOCK_DRIVE)) {
		status_locked(d, st);
		vtl_unlock(&d->mu, VTL_LOCK_DRIVE);
		return;
	}
	vtl_lock(&d->snap_mu, VTL_LOCK_SNAPSHOT);
	*st = d->snap;
	vtl_unlock(&d->snap_mu, VTL_LOCK_SNAPSHOT);
	st->busy = true;
}

const char *ssc_state_name(enum ssc_state st)
{
	switch (st) {
	case SSC_LOADED: return "loaded";
	case SSC_EJECTED: return "ejected";
	case SSC_CLEANING: return "cleaning";
	case SSC_STAGING: return "staging";
	default: return "empty";
	}
}

static void status_locked(struct ssc_drive *d, struct ssc_status *st)
{
	ssc_tick(d);
	memset(st, 0, sizeof *st);
	st->state = d->state;
	st->generation = d->gen;
	st->prevent = d->dev.n_prevent > 0;
	if (d->state != SSC_EMPTY)
		memcpy(st->barcode, d->medium.barcode, sizeof st->barcode);
	if (d->cart) {
		fill_counts(d, st);
	} else if (d->state == SSC_EJECTED) {
		st->object = st->file = 0;
		st->eod = d->last.eod;
		st->stored_bytes = d->last.stored_bytes;
		st->written_bytes = d->last.written_bytes;
		st->written_stored = d->last.written_stored;
		st->read_bytes = d->last.read_bytes;
	}
	st->removable = d->state == SSC_EJECTED && !d->held;
	vtl_lock(&d->snap_mu, VTL_LOCK_SNAPSHOT);
	d->snap = *st;
	vtl_unlock(&d->snap_mu, VTL_LOCK_SNAPSHOT);
}

void ssc_reset(struct ssc_drive *d)
{
	vtl_lock(&d->mu, VTL_LOCK_DRIVE);
	scsi_dev_reset(&d->dev);
	ssc_crypt_wipe(d); /* a reset ends every nexus's encryption parameters, and their keys */
	vtl_unlock(&d->mu, VTL_LOCK_DRIVE);
}

void ssc_nexus_lost(struct ssc_drive *d, uint64_t nexus)
{
	vtl_lock(&d->mu, VTL_LOCK_DRIVE);
	scsi_dev_nexus_lost(&d->dev, nexus); /* a prevent ends with the nexus that set it (SPC-4 6.13) */
	ssc_crypt_nexus_lost(d, nexus);
	vtl_unlock(&d->mu, VTL_LOCK_DRIVE);
}

void ssc_set_luns(struct ssc_drive *d, const uint16_t *luns, unsigned n)
{
	vtl_lock(&d->mu, VTL_LOCK_DRIVE);
	scsi_dev_set_luns(&d->dev, luns, n);
	vtl_unlock(&d->mu, VTL_LOCK_DRIVE);
}

/* ------------------------------------------------------------------ commands */

void ssc_test_unit_ready(struct scsi_dev *dev, struct scsi_cmd *c)
{
	(void)dev; /* the dispatcher already answered NOT READY when no medium is ready */
	scsi_done(c, 0);
}

void ssc_request_sense(struct scsi_dev *dev, struct scsi_cmd *c)
{
	struct ssc_drive *d = ssc_of(dev);
	struct scsi_sense s = sense_of(SK_NO_SENSE, ASC_NONE);
	struct scsi_sense nr;
	const struct scsi_sense *not_ready = ssc_not_ready(d, &nr);
	if (ua_take(&dev->ua, c->nexus, &s)) {
		/* reported and cleared */
	} else if (d->deferred_pending) {
		s = d->deferred;
		d->deferred_pending = false;
	} else if (d->mode.mrie == MRIE_ON_REQUEST && ssc_ie_pending(d) != ASC_NONE) {
		s = sense_of(SK_NO_SENSE, ssc_ie_pending(d));
		ssc_ie_reported(d);
	} else if (not_ready) {
		s = *not_ready;
	} else {
		struct vtl_position pos;
		vtl_cart_position(d->cart, &pos);
		s.eom = pos.early_warning;
	}
	uint8_t b[SENSE_MAX_LEN];
	size_t n = (c->cdb[1] & REQSENSE_DESC) ? sense_encode_desc(&s, b, sizeof b) : sense_encode(&s, b, sizeof b);
	scsi_data_in(c, b, n, c->cdb[REQSENSE_ALLOC_BYTE]);
}

void ssc_prevent_allow(struct scsi_dev *dev, struct scsi_cmd *c)
{
	uint8_t v = c->cdb[CDB_PREVENT_BYTE] & PREVENT_MASK;
	if (v & ~PREVENT_ON) {
		/* 10b and 11b (medium changer values) are reserved for a tape drive (SSC-4, LOAD UNLOAD). */
		scsi_fail(c, sense_invalid_cdb_field(CDB_PREVENT_BYTE, 1));
		return;
	}
	scsi_dev_prevent(dev, c->nexus, v == PREVENT_ON);
	scsi_done(c, 0);
}

void ssc_load_unload(struct scsi_dev *dev, struct scsi_cmd *c)
{
	struct ssc_drive *d = ssc_of(dev);
	uint8_t f = c->cdb[CDB_LOAD_BYTE];
	bool load = f & LOAD_BIT;
	if ((f & EOT_BIT) && load) {
		/* EOT with LOAD is not allowed (SSC-4 7.2). */
		scsi_fail(c, sense_invalid_cdb_field(CDB_LOAD_BYTE, 2));
		return;
	}
	struct scsi_sense nr;
	ssc_not_ready(d, &nr);
	if (d->state == SSC_EMPTY || d->state == SSC_CLEANING) {
		scsi_fail(c, d->state == SSC_EMPTY ? sense_of(SK_NOT_READY, ASC_MEDIUM_NOT_PRESENT)
						   : sense_of(SK_NOT_READY, ASC_CLEANING_CARTRIDGE));
		return;
	}
	bool hold = f & HOLD_BIT;
	if (load && hold) {
		/* Load to the point where MAM is accessible, without threading (SSC-4, LOAD UNLOAD). */
		if (d->state == SSC_EJECTED)
			d->held = true;
		scsi_done(c, 0);
		return;
	}
	if (load) {
		int rc = VTL_OK;
		if (d->state == SSC_STAGING) {
			scsi_fail(c, sense_of(SK_NOT_READY, ASC_BECOMING_READY));
			return;
		}
		d->unrecorded = false;
		if (d->state == SSC_EJECTED && d->medium.migrated && d->stage != SSC_STAGE_DONE) {
			d->held = false;
			rc = ssc_stage_begin(d); /* not all of it came back last time: ask again */
		} else if (d->state == SSC_EJECTED) {
			d->held = false;
			rc = ssc_thread(d, false);
			if (rc == VTL_OK)
				ua_raise_all(&dev->ua, UA_MEDIUM_CHANGED, c->nexus);
		} else {
			/*
			 * LOAD of a loaded medium positions at BOT (RETEN too): the drive
			 * empties its buffer before it moves the tape, as for a REWIND,
			 * and a failed sync is that deferred error (no filemark is added).
			 */
			struct scsi_sense s;
			if (!ssc_flush(d, &s)) {
				scsi_fail(c, s);
				return;
			}
			rc = vtl_cart_rewind(d->cart);
		}
		if (rc == VTL_OK)
			scsi_done(c, 0);
		else if (d->unrecorded) /* the catalog could not record the load: not loaded */
			scsi_fail(c, sense_of(SK_HARDWARE_ERROR, ASC_INTERNAL_TARGET_FAILURE));
		else if (rc == VTL_E_BUSY) /* a copy was asked to let go and has not yet (YIELD_WAIT_MS) */
			scsi_fail(c, sense_of(SK_NOT_READY, ASC_BECOMING_READY));
		else
			scsi_fail(c, sense_of(SK_MEDIUM_ERROR, ASC_MEDIA_LOAD_EJECT_FAILED));
		return;
	}
	if (d->dev.n_prevent) {
		d->tapealert |= 1ull << (TA_NO_REMOVAL - 1);
		scsi_fail(c, sense_of(SK_ILLEGAL_REQUEST, ASC_MEDIUM_REMOVAL_PREVENTED));
		return;
	}
	if (d->state == SSC_LOADED || d->state == SSC_STAGING) {
		bool unrecorded;
		int rc = ssc_unthread(d, &unrecorded);
		if (rc != VTL_OK) {
			/* The data of earlier buffered writes could not be made durable. */
			struct scsi_sense s = sense_of(SK_MEDIUM_ERROR, ASC_WRITE_ERROR);
			s.deferred = true;
			scsi_fail(c, s);
			return;
		}
		if (unrecorded) {
			/* Unloaded, but the catalog still says threaded: the host must not take it as done. */
			scsi_fail(c, sense_of(SK_HARDWARE_ERROR, ASC_INTERNAL_TARGET_FAILURE));
			return;
		}
	}
	d->held = hold;
	scsi_done(c, 0);
}

/* ----------------------------------------------------- as a logical unit */

static void unit_execute(void *dev, struct scsi_cmd *c)
{
	ssc_execute(dev, c);
}

static void unit_reset(void *dev)
{
	ssc_reset(dev);
}

static void unit_nexus_lost(void *dev, uint64_t nexus)
{
	ssc_nexus_lost(dev, nexus);
}

const struct scsi_unit_ops ssc_unit_ops = {
	.execute = unit_execute, .reset = unit_reset, .nexus_lost = unit_nexus_lost,
};
