/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A migrated cartridge in a drive: the library stages it back from physical
 * tape while the drive reports "becoming ready"; as soon as records are on
 * disk the drive is ready and reads them as they arrive (read-through),
 * waiting only when it overtakes the stage. A write waits for the whole
 * cartridge, then the drive reopens it writable and tells the library that
 * the physical copies no longer hold its data.
 *
 * No wait is unbounded: a command that needs what the stage has not brought
 * yet waits with the drive's lock held for at most the drive's stage wait
 * (SSC_STAGE_WAIT_MS by default), then ends NOT READY / becoming ready so
 * that the host asks again; a stage that has failed ends reads with MEDIUM
 * ERROR at what it could not bring back. A write whose effect on the
 * physical copies the library cannot record is refused (HARDWARE ERROR),
 * never carried out as if the copies were still the cartridge's data.
 */
#include <unistd.h>

#include "common/clock.h"
#include "common/log.h"
#include "common/vtl_error.h"
#include "common/scsi_sense.h"
#include "vtl/drive/ssc_internal.h"
#include "vtl/scsi/ua.h"

#define STAGE_POLL_MS 20    /* how often the drive asks how the stage stands */
#define STAGE_WAIT_US 2000  /* a read that overtook the stage looks again after this */

static enum ssc_stage poll_now(struct ssc_drive *d)
{
	d->stage_polled_ms = vtl_mono_ms();
	d->stage = d->cfg.stage->poll(d->cfg.stage_arg, d->medium.barcode);
	return d->stage;
}

static enum ssc_stage poll_due(struct ssc_drive *d)
{
	return vtl_mono_ms() - d->stage_polled_ms >= STAGE_POLL_MS ? poll_now(d) : d->stage;
}

int ssc_stage_begin(struct ssc_drive *d)
{
	/* The catalog says "loaded" before the stage starts, so that nothing but the stage touches the cartridge. */
	int rc = ssc_record_loaded(d);
	if (rc != VTL_OK)
		return rc;
	d->state = SSC_STAGING;
	d->stage = SSC_STAGE_RUNNING;
	d->stage_polled_ms = 0;
	if (d->cfg.stage->request)
		d->cfg.stage->request(d->cfg.stage_arg, d->medium.barcode);
	ssc_stage_tick(d);
	return VTL_OK;
}

/* The follower is done with: the cartridge is opened as any other, at the same position. */
static int stop_following(struct ssc_drive *d)
{
	struct vtl_position pos;
	vtl_cart_position(d->cart, &pos);
	struct vtl_cart *f = d->cart;
	struct vtl_cart_params p = ssc_cart_params(d, false);
	struct vtl_cart *c;
	int rc = vtl_cart_open(d->cfg.pool, d->medium.barcode, &p, &c);
	if (rc != VTL_OK)
		return rc; /* the stage's writer has not let go yet: the follower stays */
	if ((rc = vtl_cart_locate(c, pos.object)) != VTL_OK) {
		/* The follower stays where the host is; nothing was written through c. */
		vtl_ignore(vtl_cart_close(c));
		return rc;
	}
	/* The follower only read: closing it cannot lose data. */
	vtl_ignore(vtl_cart_close(f));
	d->cart = c;
	d->following = false;
	return VTL_OK;
}

/* Out of SSC_STAGING: every host learns that the medium is ready (a not-ready-to-ready change). */
static void now_ready(struct ssc_drive *d)
{
	ua_raise_all(&d->dev.ua, UA_MEDIUM_CHANGED, UA_NO_NEXUS);
}

void ssc_stage_tick(struct ssc_drive *d)
{
	if (!d->cfg.stage || !d->cfg.stage->poll)
		return;
	if (d->state == SSC_LOADED && d->following) {
		if (poll_due(d) != SSC_STAGE_RUNNING)
			(void)stop_following(d);
		return;
	}
	if (d->state != SSC_STAGING || vtl_mono_ms() - d->stage_polled_ms < STAGE_POLL_MS)
		return;
	enum ssc_stage st = poll_now(d);
	if (st == SSC_STAGE_RUNNING) {
		/* Ready as soon as the first records are on disk; until then the drive has loaded nothing. */
		struct vtl_cart *c;
		uint64_t eod = 0;
		if (ssc_open_cart(d, true, &c) != VTL_OK)
			return;
		if (vtl_cart_refresh(c, &eod) != VTL_OK || eod == 0) {
			vtl_ignore(vtl_cart_close(c)); /* opened read-only to look: nothing to lose */
			return;
		}
		if (ssc_threaded(d, c, true) != VTL_OK)
			return; /* the catalog cannot record the load: still becoming ready, the next poll tries again */
		now_ready(d);
		return;
	}
	int rc = ssc_thread(d, false);
	if (rc != VTL_OK) {
		d->state = SSC_STAGING; /* the stage's writer is closing the cartridge: the next poll tries again */
		log_debug("drive %s: %s staged, not opened yet: %s", d->dev.ident.serial, d->medium.barcode,
			  vtl_strerror(rc));
		return;
	}
	now_ready(d);
}

/* Whether the running command may wait on the stage a little longer; false once its deadline passed. */
static bool may_wait(struct ssc_drive *d)
{
	uint64_t now = vtl_mono_ms();
	if (!d->stage_wait_until_ms)
		d->stage_wait_until_ms = now + (d->cfg.stage_wait_ms ? d->cfg.stage_wait_ms : SSC_STAGE_WAIT_MS);
	if (now < d->stage_wait_until_ms)
		return true;
	d->stage_timed_out = true;
	return false;
}

int ssc_stage_more(void *arg)
{
	struct ssc_drive *d = arg;
	if (!may_wait(d))
		return 0; /* the read ends where the stage stands; ssc_stage_sense says why */
	usleep(STAGE_WAIT_US);
	return poll_due(d) == SSC_STAGE_RUNNING;
}

bool ssc_stage_writable(struct ssc_drive *d, struct scsi_sense *s)
{
	if (d->following) {
		/* Writing cuts the tape at the position: everything up to it must be back first. */
		while (poll_due(d) == SSC_STAGE_RUNNING && may_wait(d))
			usleep(STAGE_WAIT_US);
		if (d->stage == SSC_STAGE_RUNNING || stop_following(d) != VTL_OK) {
			*s = sense_of(SK_NOT_READY, ASC_BECOMING_READY);
			return false;
		}
	}
	if (!d->modified && d->cfg.stage && d->cfg.stage->modify) {
		int rc = d->cfg.stage->modify(d->cfg.stage_arg, d->medium.barcode);
		if (rc != VTL_OK) {
			/* The physical copies would still count as this cartridge's data: nothing is written. */
			log_warn("drive %s: a write to %s refused: the library cannot record that its copies are stale: %s",
				 d->dev.ident.serial, d->medium.barcode, vtl_strerror(rc));
			*s = sense_of(SK_HARDWARE_ERROR, ASC_INTERNAL_TARGET_FAILURE);
			return false;
		}
		d->modified = true;
		d->stage = SSC_STAGE_DONE; /* from here on the tape holds what the host writes */
	}
	return true;
}

bool ssc_stage_sense(struct ssc_drive *d, uint64_t eod, struct scsi_sense *s)
{
	if (d->stage_timed_out && d->following && d->stage == SSC_STAGE_RUNNING) {
		/* The stage may still bring the rest: the host asks again. */
		*s = sense_of(SK_NOT_READY, ASC_BECOMING_READY);
		return true;
	}
	if (ssc_stage_lost(d, eod)) {
		/* The recall could not bring these records back: unreadable, never a false end of data. */
		*s = sense_of(SK_MEDIUM_ERROR, ASC_UNRECOVERED_READ_ERROR);
		return true;
	}
	return false;
}

bool ssc_stage_lost(struct ssc_drive *d, uint64_t eod)
{
	return d->medium.migrated && d->stage == SSC_STAGE_FAILED && eod < d->medium.eod;
}
