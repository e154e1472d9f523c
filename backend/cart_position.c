/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The position on the tape and moving it: READ POSITION's view, locate,
 * rewind, space over blocks or filemarks (stopping at damage it cannot pass)
 * and to EOD. Owns struct cart_cursor: the object number and the cursor into
 * the segment that holds it.
 */
#include <string.h>

#include "backend/internal.h"
#include "common/vtl_error.h"

static void pos_set(struct vtl_cart *c, uint64_t obj)
{
	c->cur.pos = obj;
	c->cur.valid = false;
	c->cur.seq_run = 0;
	ra_reset(c->ra);
}

/* Makes the cursor (cur.seg, cur.off) point at cur.pos (< eod). */
int cursor_find(struct vtl_cart *c)
{
	if (c->cur.valid)
		return VTL_OK;
	size_t si = cart_seg_of(c, c->cur.pos);
	uint64_t off;
	int rc = obj_offset(c, si, c->cur.pos, &off);
	if (rc)
		return rc;
	c->cur.seg = si;
	c->cur.off = off;
	c->cur.valid = true;
	return VTL_OK;
}

/* Moves the cursor past a record of rec_len bytes that ended at object pos. */
void cursor_advance(struct vtl_cart *c, uint64_t rec_len)
{
	c->cur.off += rec_len;
	while (c->cur.seg + 1 < c->tape.nseg && c->cur.off >= c->tape.segs[c->cur.seg].data_end) {
		c->cur.seg++;
		c->cur.off = SEG_HEADER_LEN;
		if (c->tape.segs[c->cur.seg].lost) {
			c->cur.valid = false; /* no record to point at: the next read reports the damage */
			return;
		}
	}
}

void vtl_cart_position(struct vtl_cart *c, struct vtl_position *pos)
{
	memset(pos, 0, sizeof *pos);
	pos->object = c->cur.pos;
	pos->eod = c->tape.eod;
	pos->bot = c->cur.pos == 0;
	pos->at_eod = c->cur.pos == c->tape.eod;
	pos->stored_bytes = c->tape.stored;
	if (fm_before(c, c->cur.pos, &pos->file))
		pos->file = 0; /* unreadable filemark list: a later read reports the medium error */
	pos->early_warning = c->p.capacity && c->tape.stored >= c->p.capacity - c->p.early_warning;
}

int vtl_cart_locate(struct vtl_cart *c, uint64_t obj)
{
	if (obj > c->tape.eod)
		follow_until(c, obj - 1);
	if (obj > c->tape.eod) {
		pos_set(c, c->tape.eod);
		return VTL_E_EOD;
	}
	pos_set(c, obj);
	return VTL_OK;
}

int vtl_cart_rewind(struct vtl_cart *c)
{
	pos_set(c, 0);
	return VTL_OK;
}

int vtl_cart_space_eod(struct vtl_cart *c)
{
	follow_until(c, UINT64_MAX);
	pos_set(c, c->tape.eod);
	return VTL_OK;
}

/*
 * Stops a space at a damaged object it cannot pass (SSC: a space that cannot
 * read what it passes ends there with a medium error): the position is at
 * at, on the near side of the damage, and residual is what was not spaced.
 */
static int space_damaged(struct vtl_cart *c, uint64_t at, uint64_t residual, struct vtl_space_result *r)
{
	r->stop = VTL_SPACE_MEDIUM;
	r->residual = residual;
	pos_set(c, at);
	return VTL_E_MEDIUM;
}

static int space_blocks_once(struct vtl_cart *c, int64_t count, struct vtl_space_result *r)
{
	r->stop = VTL_SPACE_DONE;
	r->residual = 0;
	if (count == 0)
		return VTL_OK;
	uint64_t k;
	int rc = fm_before(c, c->cur.pos, &k);
	if (rc)
		return rc;
	if (count > 0) {
		uint64_t n = (uint64_t)count, limit = c->tape.eod, fm = UINT64_MAX;
		uint64_t bad = dmg_next(c, c->cur.pos);
		if (k < c->tape.total_fm) {
			rc = fm_object(c, k, &fm);
			if (rc == VTL_E_MEDIUM && bad != UINT64_MAX)
				fm = UINT64_MAX; /* the next filemark is in the damage: the space stops there first */
			else if (rc)
				return rc;
			limit = fm == UINT64_MAX ? c->tape.eod : fm;
		}
		if (bad < limit && bad - c->cur.pos < n)
			return space_damaged(c, bad, n - (bad - c->cur.pos), r);
		uint64_t avail = limit - c->cur.pos;
		if (n <= avail) {
			pos_set(c, c->cur.pos + n);
			return VTL_OK;
		}
		r->residual = n - avail;
		if (fm != UINT64_MAX) {
			r->stop = VTL_SPACE_FILEMARK;
			pos_set(c, fm + 1);
		} else {
			r->stop = VTL_SPACE_EOD;
			pos_set(c, c->tape.eod);
		}
		return VTL_OK;
	}
	uint64_t n = (uint64_t)(-(count + 1)) + 1, floor = 0, fm = UINT64_MAX;
	uint64_t bad = dmg_prev(c, c->cur.pos);
	if (k > 0) {
		rc = fm_object(c, k - 1, &fm);
		if (rc == VTL_E_MEDIUM && bad != UINT64_MAX)
			fm = UINT64_MAX;
		else if (rc)
			return rc;
		floor = fm == UINT64_MAX ? 0 : fm + 1;
	}
	if (bad != UINT64_MAX && bad >= floor && c->cur.pos - bad <= n)
		return space_damaged(c, bad + 1, n - (c->cur.pos - bad - 1), r);
	uint64_t avail = c->cur.pos - floor;
	if (n <= avail) {
		pos_set(c, c->cur.pos - n);
		return VTL_OK;
	}
	r->residual = n - avail;
	if (fm != UINT64_MAX) {
		r->stop = VTL_SPACE_FILEMARK;
		pos_set(c, fm);
	} else {
		r->stop = VTL_SPACE_BOT;
		pos_set(c, 0);
	}
	return VTL_OK;
}

static int space_filemarks_once(struct vtl_cart *c, int64_t count, struct vtl_space_result *r)
{
	r->stop = VTL_SPACE_DONE;
	r->residual = 0;
	if (count == 0)
		return VTL_OK;
	uint64_t k, obj;
	int rc = fm_before(c, c->cur.pos, &k);
	if (rc)
		return rc;
	if (count > 0) {
		uint64_t n = (uint64_t)count, bad = dmg_next(c, c->cur.pos), before;
		if (bad != UINT64_MAX) {
			/* The filemarks passed before the damage count as spaced. */
			rc = n <= c->tape.total_fm - k ? fm_object(c, k + n - 1, &obj) : VTL_OK;
			if (rc == VTL_E_MEDIUM || n > c->tape.total_fm - k || obj >= bad) {
				if ((rc = fm_before(c, bad, &before)))
					return rc;
				return space_damaged(c, bad, n - (before - k), r);
			}
			if (rc)
				return rc;
		}
		if (n <= c->tape.total_fm - k) {
			if ((rc = fm_object(c, k + n - 1, &obj)))
				return rc;
			pos_set(c, obj + 1);
			return VTL_OK;
		}
		r->stop = VTL_SPACE_EOD;
		r->residual = n - (c->tape.total_fm - k);
		pos_set(c, c->tape.eod);
		return VTL_OK;
	}
	uint64_t n = (uint64_t)(-(count + 1)) + 1, bad = dmg_prev(c, c->cur.pos), after;
	if (bad != UINT64_MAX) {
		rc = n <= k ? fm_object(c, k - n, &obj) : VTL_OK;
		if (rc == VTL_E_MEDIUM || n > k || obj < bad) {
			if ((rc = fm_before(c, bad + 1, &after)))
				return rc;
			return space_damaged(c, bad + 1, n - (k - after), r);
		}
		if (rc)
			return rc;
	}
	if (n <= k) {
		if ((rc = fm_object(c, k - n, &obj)))
			return rc;
		pos_set(c, obj);
		return VTL_OK;
	}
	r->stop = VTL_SPACE_BOT;
	r->residual = n - k;
	pos_set(c, 0);
	return VTL_OK;
}

/* Spaces once over what the tape holds; a follower stopped by EOD waits for more and spaces again. */
static int space_following(struct vtl_cart *c, int64_t count, struct vtl_space_result *r,
			   int (*once)(struct vtl_cart *, int64_t, struct vtl_space_result *))
{
	uint64_t from = c->cur.pos;
	for (;;) {
		int rc = once(c, count, r);
		if (rc || r->stop != VTL_SPACE_EOD || !follow_until(c, c->tape.eod))
			return rc;
		pos_set(c, from);
	}
}

int vtl_cart_space_blocks(struct vtl_cart *c, int64_t count, struct vtl_space_result *r)
{
	return space_following(c, count, r, space_blocks_once);
}

int vtl_cart_space_filemarks(struct vtl_cart *c, int64_t count, struct vtl_space_result *r)
{
	return space_following(c, count, r, space_filemarks_once);
}
