/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A follower: a read-only open beside the writer that holds the lock (the
 * migrator copying a cartridge a host is still writing). It trusts only whole,
 * checked records, picks up what the writer appended on a refresh, and waits
 * through the opener's more hook when a read or a space reaches what it sees.
 */
#include <stdlib.h>
#include <sys/stat.h>

#include "backend/internal.h"
#include "common/vtl_error.h"

/*
 * A follower that reached what it sees waits, through the opener's more hook,
 * until the writer has appended past object obj or has finished (obj
 * UINT64_MAX: finished). True when the tape now holds obj.
 */
bool follow_until(struct vtl_cart *c, uint64_t obj)
{
	if (!c->p.follow || !c->p.more)
		return c->tape.eod > obj;
	while (c->tape.eod <= obj) {
		if (vtl_cart_refresh(c, NULL) != VTL_OK)
			break;
		if (c->tape.eod > obj)
			break;
		if (c->p.more(c->p.more_arg) <= 0) {
			/* Finished: whatever it appended last is on disk now. A failed refresh
			 * ends the wait as the one above does: eod stays what was last seen. */
			if (vtl_cart_refresh(c, NULL) != VTL_OK)
				break;
			break;
		}
	}
	return c->tape.eod > obj;
}

/* Takes segment si's records out of the totals and forgets its index: it is loaded again from scratch. */
static void seg_reset_view(struct vtl_cart *c, struct seg *s)
{
	c->tape.eod -= s->n_obj;
	c->tape.total_fm -= s->n_fm;
	c->tape.stored -= s->data_end - SEG_HEADER_LEN;
	free(s->fm);
	s->fm = NULL;
	s->fm_cap = 0;
	free(s->mem_off);
	s->mem_off = NULL;
	s->n_obj = s->n_fm = 0;
	s->data_end = SEG_HEADER_LEN;
	s->sealed = s->eod_rec = false;
}

/* The last segment got its footer meanwhile: its index is on disk now, its filemarks are read from it. */
static void seg_now_sealed(struct vtl_cart *c, struct seg *s, const struct seg *t)
{
	c->tape.eod += t->n_obj - s->n_obj;
	c->tape.total_fm += t->n_fm - s->n_fm;
	c->tape.stored += t->data_end - s->data_end;
	free(s->fm);
	s->fm = NULL;
	s->fm_cap = 0;
	s->n_obj = t->n_obj;
	s->n_fm = t->n_fm;
	s->data_end = t->data_end;
	s->fm_off = t->fm_off;
	s->index_off = t->index_off;
	s->eod_rec = t->eod_rec;
	s->sealed = true;
	free(c->tape.off);
	c->tape.off = NULL;
	c->tape.offcap = 0;
}

int vtl_cart_refresh(struct vtl_cart *c, uint64_t *eod)
{
	if (!c || !c->p.follow)
		return VTL_E_INVAL;
	uint64_t before = c->tape.eod;
	size_t si = c->tape.nseg - 1;
	struct seg *s = &c->tape.segs[si];
	int fd = seg_fd(c, si);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0)
		return VTL_E_IO;
	uint64_t size = (uint64_t)st.st_size;
	struct seg t = *s;
	bool trailer = seg_trailer_load(&t, fd, size);
	int rc = VTL_OK;
	if (s->sealed && !(trailer && t.n_obj == s->n_obj && t.data_end == s->data_end)) {
		/* The writer reopened the segment to append to it: walk it again from its header. */
		seg_reset_view(c, s);
		free(c->tape.off);
		c->tape.off = NULL;
		c->tape.offcap = 0;
		trailer = false;
	}
	if (!s->sealed && trailer && t.n_obj >= s->n_obj) {
		seg_now_sealed(c, s, &t);
	} else if (!s->sealed) {
		uint32_t n_obj = s->n_obj, n_fm = s->n_fm;
		uint64_t data_end = s->data_end;
		if ((rc = seg_scan(c, si, fd, size, true, true, 0, &c->tape.off, &c->tape.offcap)))
			return rc;
		c->tape.eod += s->n_obj - n_obj;
		c->tape.total_fm += s->n_fm - n_fm;
		c->tape.stored += s->data_end - data_end;
		if (seg_continues(c, s->seq + 1, c->tape.eod, c->tape.total_fm)) {
			/* The writer moved on to a new segment before this one's footer landed: keep the index in memory. */
			s->sealed = true;
			s->mem_off = c->tape.off ? c->tape.off : malloc(sizeof *s->mem_off);
			c->tape.off = NULL;
			c->tape.offcap = 0;
			if (!s->mem_off)
				return VTL_E_NOMEM;
		}
	}
	if (s->sealed && (rc = cart_load_from(c, s->seq + 1)) != VTL_OK && rc != VTL_E_NOTFOUND)
		return rc;
	if (c->tape.eod != before) {
		/* The cursor may sit at the end of a segment that now has a successor. */
		c->cur.valid = false;
	}
	if (eod)
		*eod = c->tape.eod;
	return VTL_OK;
}
