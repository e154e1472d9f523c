/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Walking a segment's records from its header: crash repair of the open
 * segment (every payload CRC checked, a bad record below the sync mark kept as
 * damage, a torn one after it cut off) and the rebuild of the index of a sealed
 * segment whose footer is damaged.
 */
#include <stdlib.h>
#include <string.h>

#include "backend/internal.h"
#include "common/crc32c.h"
#include "common/grow.h"
#include "common/vtl_error.h"

/* Bytes of a segment the crash scan reads at once. */
#define SCAN_WINDOW (4u << 20)

/* Reads the record at off and checks it whole: header, object in (lo, hi], length, payload CRC. */
static bool rec_whole_at(struct vtl_cart *c, int fd, uint64_t size, uint64_t off, uint64_t lo, uint64_t hi,
			 struct rec_header *h)
{
	unsigned char hb[REC_HEADER_LEN];
	if (off + REC_HEADER_LEN > size || read_full(fd, hb, sizeof hb, off) || rec_header_decode(hb, h) ||
	    h->object <= lo || h->object > hi || (h->type != REC_DATA && h->type != REC_FILEMARK) ||
	    off + REC_HEADER_LEN + h->stored_len > size)
		return false;
	if (scratch_need(&c->scratch.stored, &c->scratch.stored_cap, h->stored_len ? h->stored_len : 1) ||
	    read_full(fd, c->scratch.stored, h->stored_len, off + REC_HEADER_LEN))
		return false;
	return crc32c(0, c->scratch.stored, h->stored_len) == h->payload_crc;
}

/*
 * After a bad record at offset from whose object would have been expect,
 * finds the next whole record that starts at most at mark (the synced end):
 * every damaged object takes at least a record header, which bounds how far
 * its number may run ahead. 1 and *at, *obj when found, 0 when not, <0 on error.
 */
static int scan_resync(struct vtl_cart *c, int fd, uint64_t size, uint64_t from, uint64_t mark, uint64_t expect,
		       uint64_t *at, uint64_t *obj)
{
	unsigned char *win = malloc(SCAN_WINDOW);
	if (!win)
		return VTL_E_NOMEM;
	int found = 0;
	for (uint64_t base = from + 1; !found && base <= mark && base + REC_HEADER_LEN <= size;) {
		uint64_t len = size - base < SCAN_WINDOW ? size - base : SCAN_WINDOW;
		int rc = read_full(fd, win, len, base);
		if (rc) {
			free(win);
			return rc;
		}
		for (uint64_t i = 0; i + 1 < len && base + i <= mark; i++) {
			if (win[i] != (REC_MAGIC & 0xFF) || win[i + 1] != (REC_MAGIC >> 8))
				continue;
			uint64_t b = base + i;
			struct rec_header h;
			if (rec_whole_at(c, fd, size, b, expect, expect + (b - from) / REC_HEADER_LEN, &h)) {
				*at = b;
				*obj = h.object;
				found = 1;
				break;
			}
		}
		if (len <= REC_HEADER_LEN)
			break;
		base += len - REC_HEADER_LEN;
	}
	free(win);
	return found;
}

/*
 * Walks the records of segment si from its header and keeps the longest
 * prefix of whole, consecutive records: each header CRC, the object numbering,
 * the length against the file size and, with check_payload, each payload CRC.
 * An EOD record, a footer record or the end of the file ends the walk. Fills
 * *offs (capacity *cap) with the offsets and the segment's filemark list;
 * sets n_obj, n_fm and data_end.
 *
 * With check_payload it is crash repair of the open segment (a torn payload
 * ends the tape there); without, it rebuilds the index of a segment whose
 * footer is damaged (a damaged payload is a medium error for that one block).
 * With resume it goes on from the segment's data_end, n_obj and n_fm (*offs
 * holding their offsets): a follower picking up what a writer appended.
 */
int seg_scan(struct vtl_cart *c, size_t si, int fd, uint64_t size, bool check_payload, bool resume,
	     uint64_t mark, uint32_t **offs, size_t *cap)
{
	struct seg *s = &c->tape.segs[si];
	uint64_t win_size = size < SCAN_WINDOW ? (size ? size : 1) : SCAN_WINDOW;
	unsigned char *win = malloc(win_size);
	if (!win)
		return VTL_E_NOMEM;
	uint64_t wstart = 0, wlen = 0; /* window [wstart, wstart + wlen) of the file */
	uint64_t at = resume ? s->data_end : SEG_HEADER_LEN;
	int rc = VTL_OK;
	uint32_t n_obj = resume ? s->n_obj : 0, n_fm = resume ? s->n_fm : 0;
	for (;;) {
		if (at + REC_HEADER_LEN > size)
			break;
		if (at < wstart || at + REC_HEADER_LEN > wstart + wlen) {
			wstart = at;
			wlen = size - at < win_size ? size - at : win_size;
			if ((rc = read_full(fd, win, wlen, wstart)))
				break;
		}
		struct rec_header h;
		if (rec_header_decode(win + (at - wstart), &h) || h.object != s->first_obj + n_obj)
			goto bad;
		if (h.type != REC_DATA && h.type != REC_FILEMARK)
			break; /* EOD or a footer: the tape ends here */
		uint64_t end = at + REC_HEADER_LEN + h.stored_len;
		if (end > size)
			goto bad;
		if (check_payload) {
			const unsigned char *payload;
			if (end <= wstart + wlen) {
				payload = win + (at + REC_HEADER_LEN - wstart);
			} else {
				if ((rc = scratch_need(&c->scratch.stored, &c->scratch.stored_cap, h.stored_len)))
					break;
				if ((rc = read_full(fd, c->scratch.stored, h.stored_len, at + REC_HEADER_LEN)))
					break;
				payload = c->scratch.stored;
			}
			if (crc32c(0, payload, h.stored_len) != h.payload_crc)
				goto bad;
		}
		if ((rc = vtl_grow_to((void **)offs, cap, n_obj + 1, sizeof **offs)))
			break;
		if (h.type == REC_FILEMARK) {
			size_t fcap = s->fm_cap;
			if ((rc = vtl_grow_to((void **)&s->fm, &fcap, n_fm + 1, sizeof *s->fm)))
				break;
			s->fm_cap = (uint32_t)fcap;
			s->fm[n_fm++] = n_obj;
		}
		(*offs)[n_obj++] = (uint32_t)at;
		at = end;
		continue;
	bad:
		/*
		 * A crash leaves torn records only after the sync mark; a bad one
		 * before it is damage: the objects up to the next whole record
		 * keep their numbers, with index entries of 0 (unreadable).
		 */
		if (!check_payload || resume || at >= mark)
			break;
		uint64_t next_at = 0, next_obj = 0, expect = s->first_obj + n_obj; /* set by a found resync; gcc cannot tell */
		int found = scan_resync(c, fd, size, at, mark, expect, &next_at, &next_obj);
		if (found < 0) {
			rc = found;
			break;
		}
		if (!found || next_obj - s->first_obj > UINT32_MAX)
			break;
		uint32_t lost = (uint32_t)(next_obj - expect);
		if ((rc = vtl_grow_to((void **)offs, cap, n_obj + lost, sizeof **offs)) ||
		    (rc = dmg_add(c, expect, lost, s->seq, s->seq, VTL_DAMAGE_RECORDS)))
			break;
		memset(*offs + n_obj, 0, 4ull * lost);
		n_obj += lost;
		at = next_at;
		wlen = 0; /* read the window again from the next record */
	}
	free(win);
	if (rc)
		return rc;
	if (!s->fm && !(s->fm = malloc(sizeof *s->fm)))
		return VTL_E_NOMEM;
	if (!s->fm_cap)
		s->fm_cap = 1;
	s->n_obj = n_obj;
	s->n_fm = n_fm;
	s->data_end = at;
	return VTL_OK;
}

/*
 * Rebuilds, by walking its record headers, the index and filemark list of a
 * sealed segment whose footer turned out damaged; the trailer's counts must
 * agree. The footer on disk is left alone (a writable session rewrites it if
 * it reopens the segment for appending).
 */
int seg_rebuild(struct vtl_cart *c, size_t si)
{
	struct seg *s = &c->tape.segs[si];
	if (s->mem_off || !s->sealed || s->lost)
		return VTL_E_CORRUPT; /* already rebuilt, or in memory anyway: the damage is elsewhere */
	int fd = seg_fd(c, si);
	if (fd < 0)
		return VTL_E_IO;
	struct seg saved = *s;
	free(s->fm);
	s->fm = NULL;
	s->fm_cap = 0;
	uint32_t *offs = NULL;
	size_t cap = 0;
	int rc = seg_scan(c, si, fd, saved.data_end, false, false, 0, &offs, &cap);
	if (!rc && (s->n_obj != saved.n_obj || s->n_fm != saved.n_fm || s->data_end != saved.data_end))
		rc = VTL_E_CORRUPT;
	if (rc) {
		free(offs);
		free(s->fm);
		s->fm = NULL;
		s->fm_cap = 0;
		s->n_obj = saved.n_obj;
		s->n_fm = saved.n_fm;
		s->data_end = saved.data_end;
		return rc;
	}
	if (!offs && !(offs = malloc(sizeof *offs))) {
		return VTL_E_NOMEM;
	}
	s->mem_off = offs;
	return VTL_OK;
}
