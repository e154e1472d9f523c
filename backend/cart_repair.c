/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The open's walk over a cartridge's segment files, which builds the segment
 * table (struct cart_tape) and repairs what a crash left: a torn last segment
 * is cut at its last whole record, a torn or stale file after it is removed or
 * set aside as *.seg.orphan (never deleted on a guess). What a crash cannot
 * explain (a missing file, a header unreadable, a segment cut short below its
 * sync mark) is damage: the objects it held are listed and read as a medium
 * error, and what follows stays readable.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "backend/internal.h"
#include "common/clock.h"
#include "common/grow.h"
#include "common/log.h"
#include "common/vtl_error.h"

/* The first segment number from seq on that has no file: the segment files run seq..end-1. */
static uint32_t seg_files_end(struct vtl_pool *pool, const char *barcode, uint32_t seq)
{
	char path[PATH_MAX];
	struct stat st;
	while (!pool_seg_path(pool, barcode, seq, path, sizeof path) && stat(path, &st) == 0)
		seq++;
	return seq;
}

/* Header check results for a segment file at open. */
enum seg_hdr {
	HDR_OK,    /* ours, and it continues the tape */
	HDR_TORN,  /* not a valid header: its creation was torn */
	HDR_STALE, /* a valid header that does not continue the tape: left by an interrupted cut */
};

/* Reads the header of segment file seq (in fd, size bytes long) into h and checks it against the tape at (obj, fm). */
static enum seg_hdr seg_header_check(struct vtl_cart *c, int fd, uint64_t size, uint32_t seq, uint64_t obj,
				     uint64_t fm, struct seg_header *h)
{
	unsigned char hb[SEG_HEADER_LEN];
	if (size < SEG_HEADER_LEN || read_full(fd, hb, sizeof hb, 0) || seg_header_decode(hb, h) ||
	    h->seq != seq || strcmp(h->barcode, c->barcode) != 0)
		return HDR_TORN;
	return h->first_object == obj && h->first_filemark == fm ? HDR_OK : HDR_STALE;
}

/* Reads the trailer of a segment into s; false when there is no trustworthy one. */
bool seg_trailer_load(struct seg *s, int fd, uint64_t size)
{
	if (size < SEG_HEADER_LEN + TRAILER_LEN)
		return false;
	unsigned char tb[TRAILER_LEN];
	struct seg_trailer t;
	if (read_full(fd, tb, sizeof tb, size - TRAILER_LEN) || seg_trailer_decode(tb, &t))
		return false;
	if (t.index_off + REC_HEADER_LEN + 4ull * t.n_objects + TRAILER_LEN != size ||
	    t.fm_off + REC_HEADER_LEN + 4ull * t.n_filemarks != t.index_off)
		return false;
	s->n_obj = t.n_objects;
	s->n_fm = t.n_filemarks;
	s->data_end = t.data_end;
	s->fm_off = t.fm_off;
	s->index_off = t.index_off;
	s->eod_rec = t.flags & TRAILER_FLAG_EOD;
	s->dmg_flag = t.flags & TRAILER_FLAG_DAMAGED;
	s->sealed = true;
	return true;
}

/*
 * Scans the cartridge's folders for segment files: *next gets the lowest
 * number above after, *top the highest of all (UINT32_MAX: none).
 */
int seg_files_scan(struct vtl_pool *pool, const char *barcode, uint32_t after, uint32_t *next, uint32_t *top)
{
	*next = *top = UINT32_MAX;
	for (unsigned m = 0; m < pool->n; m++) {
		char dir[PATH_MAX];
		if (pool_cart_dir(pool, m, barcode, dir, sizeof dir))
			return VTL_E_INVAL;
		DIR *d = opendir(dir);
		if (!d) {
			if (errno == ENOENT)
				continue;
			return VTL_E_IO;
		}
		struct dirent *e;
		while ((e = readdir(d))) {
			/* <8 decimal digits>.seg */
			const char *n = e->d_name;
			if (strlen(n) != 12 || strcmp(n + 8, ".seg") != 0 || strspn(n, "0123456789") != 8)
				continue;
			uint32_t seq = (uint32_t)strtoul(n, NULL, 10);
			if (*top == UINT32_MAX || seq > *top)
				*top = seq;
			if (seq > after && (*next == UINT32_MAX || seq < *next))
				*next = seq;
		}
		closedir(d);
	}
	return VTL_OK;
}

/* Opens segment file seq read-only, its length in *size; -1 when it cannot be opened or measured. */
static int seg_open_read(struct vtl_cart *c, uint32_t seq, uint64_t *size)
{
	char path[PATH_MAX];
	if (pool_seg_path(c->pool, c->barcode, seq, path, sizeof path))
		return -1;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	struct stat st;
	if (fstat(fd, &st) != 0) {
		close(fd);
		return -1;
	}
	*size = (uint64_t)st.st_size;
	return fd;
}

/* Reads the header of segment file seq (and whether it has a trailer); false when it has no valid one. */
static bool seg_peek(struct vtl_cart *c, uint32_t seq, struct seg_header *h, bool *trailer)
{
	uint64_t size;
	int fd = seg_open_read(c, seq, &size);
	if (fd < 0)
		return false;
	struct seg t = {0};
	bool ok = seg_header_check(c, fd, size, seq, 0, 0, h) != HDR_TORN;
	*trailer = ok && seg_trailer_load(&t, fd, size);
	close(fd);
	return ok;
}

/* True when a segment with header h may follow a tape that ends at (eod, fm) with objects lost between. */
static bool lost_gap_ok(uint64_t eod, uint64_t fm, const struct seg_header *h)
{
	return h->first_object > eod && h->first_filemark >= fm && h->first_filemark - fm <= h->first_object - eod &&
	       h->first_object - eod <= UINT32_MAX;
}

/*
 * Adds to the tape the objects no file holds, from its end up to the first
 * object of the segment with header h: a damaged range (kind, in segment
 * files seq..seq_last) that reads as a medium error.
 */
static int cart_add_lost(struct vtl_cart *c, const struct seg_header *h, uint32_t seq, uint32_t seq_last,
			 enum vtl_damage_kind kind)
{
	int rc = vtl_grow_to((void **)&c->tape.segs, &c->tape.segcap, c->tape.nseg + 1, sizeof *c->tape.segs);
	if (rc || (rc = dmg_add(c, c->tape.eod, h->first_object - c->tape.eod, seq, seq_last, kind)))
		return rc;
	struct seg *s = &c->tape.segs[c->tape.nseg++];
	memset(s, 0, sizeof *s);
	s->seq = seq;
	s->member = vtl_pool_member_for(c->pool, c->barcode, seq);
	s->first_obj = c->tape.eod;
	s->n_obj = (uint32_t)(h->first_object - c->tape.eod);
	s->first_fm = c->tape.total_fm;
	s->n_fm = (uint32_t)(h->first_filemark - c->tape.total_fm);
	s->data_end = SEG_HEADER_LEN;
	s->sealed = true;
	s->lost = true;
	s->lost_files = kind != VTL_DAMAGE_SHORT; /* a short one's file is the segment's before it */
	s->lost_last = seq_last;
	c->tape.eod = h->first_object;
	c->tape.total_fm = h->first_filemark;
	return VTL_OK;
}

/* Loads the INDEX of a sealed segment flagged damaged into memory and lists its damaged objects. */
static int seg_load_damaged(struct vtl_cart *c, struct seg *s, int fd)
{
	uint32_t *offs = malloc(4ull * s->n_obj + 4);
	if (!offs)
		return VTL_E_NOMEM;
	int rc = index_read(s, fd, offs);
	for (uint32_t i = 0; !rc && i < s->n_obj; i++)
		if (offs[i] == 0)
			rc = dmg_add(c, s->first_obj + i, 1, s->seq, s->seq, VTL_DAMAGE_RECORDS);
	if (rc == VTL_E_CORRUPT) {
		/* A damaged INDEX: read through the footer as usual, whose checks rebuild it. */
		free(offs);
		return VTL_OK;
	}
	if (rc) {
		free(offs);
		return rc;
	}
	s->mem_off = offs;
	return VTL_OK;
}

/* True when segment file seq exists with a valid header that continues the tape at (obj, fm). */
bool seg_continues(struct vtl_cart *c, uint32_t seq, uint64_t obj, uint64_t fm)
{
	uint64_t size;
	int fd = seg_open_read(c, seq, &size);
	if (fd < 0)
		return false;
	struct seg_header h;
	bool yes = seg_header_check(c, fd, size, seq, obj, fm, &h) == HDR_OK;
	close(fd);
	return yes;
}

/*
 * Takes segment files seq and up out of the tape (highest first). Torn ones
 * (no valid header: nothing in them was ever synced) are removed; stale ones
 * (an interrupted cut left them) are renamed *.seg.orphan, never deleted, so
 * that no data disappears on a guess. A read-only open only ignores them.
 */
static int cart_drop_from(struct vtl_cart *c, uint32_t seq, bool torn_first)
{
	if (c->p.readonly)
		return VTL_OK;
	uint32_t next, top;
	int rc = seg_files_scan(c->pool, c->barcode, seq, &next, &top);
	if (rc)
		return rc;
	if (top == UINT32_MAX || top < seq)
		return VTL_OK;
	char path[PATH_MAX];
	struct stat st;
	for (uint32_t n = top + 1; n-- > seq;) {
		unsigned m = vtl_pool_member_for(c->pool, c->barcode, n);
		if (pool_seg_path(c->pool, c->barcode, n, path, sizeof path))
			return VTL_E_INVAL;
		if (stat(path, &st) != 0)
			continue; /* a gap a crash left among the files */
		if (n == seq && torn_first) {
			uint64_t size = (uint64_t)st.st_size;
			if (unlink(path) != 0)
				return VTL_E_IO;
			pool_space_give(c->pool, m, size);
		} else {
			char orphan[PATH_MAX + 8];
			snprintf(orphan, sizeof orphan, "%s.orphan", path);
			if (rename(path, orphan) != 0)
				return VTL_E_IO;
			log_msg(LOG_LEVEL_WARN,
				"cartridge %s: segment file %08u.seg does not continue the tape (left by a crash "
				"during an overwrite or a segment change, before anything after it was synced): "
				"set aside as %08u.seg.orphan, the tape ends at object %llu",
				c->barcode, n, n, (unsigned long long)c->tape.eod);
		}
		c->wr.dir_dirty |= 1ull << m;
	}
	return VTL_OK;
}

/* Adds the segment in fd (already checked) to the table and counts it in the tape. */
static int cart_add_seg(struct vtl_cart *c, struct seg *s, int fd)
{
	struct fdref *f = fdref_new(c, fd);
	if (!f)
		return VTL_E_NOMEM;
	s->fd = f;
	c->tape.segs[c->tape.nseg++] = *s;
	c->tape.nfd++;
	c->tape.eod += s->n_obj;
	c->tape.total_fm += s->n_fm;
	c->tape.stored += s->data_end - SEG_HEADER_LEN;
	fd_trim(c, c->tape.nseg - 1);
	return VTL_OK;
}

/*
 * Loads a segment without a trustworthy trailer, walking its records with
 * their payload CRCs. If the next segment continues right after the last whole
 * record, the footer was lost (a crash before an asynchronous seal wrote it,
 * or damage): the index is kept in memory. Otherwise this is the last segment,
 * left open by a crash: torn records are cut off (writable) and whatever
 * follows it is taken out of the tape.
 */
static int seg_load_open(struct vtl_cart *c, struct seg *s, int fd, uint64_t size, bool *last,
			 struct seg_header *lost_h, uint32_t *lost_next)
{
	size_t si = c->tape.nseg; /* seg_scan works on the table entry */
	c->tape.segs[si] = *s;
	uint32_t *offs = NULL;
	size_t cap = 0;
	/* Below the sync mark records were durable: a bad one there is damage (unless a cut was under way). */
	uint64_t mark = crash_may(c, s->seq) ? 0 : s->synced_end;
	if (mark > size) {
		log_msg(LOG_LEVEL_WARN,
			"cartridge %s: damaged: segment file %08u.seg is %llu bytes, shorter than the %llu its "
			"records had when synced: the tape ends in it",
			c->barcode, s->seq, (unsigned long long)size, (unsigned long long)mark);
		mark = size;
	}
	int rc = seg_scan(c, si, fd, size, true, false, mark, &offs, &cap);
	struct seg *t = &c->tape.segs[si];
	*s = *t;
	if (rc) {
		free(offs);
		return rc;
	}
	if (seg_continues(c, t->seq + 1, c->tape.eod + t->n_obj, c->tape.total_fm + t->n_fm)) {
		s->sealed = true;
		s->mem_off = offs ? offs : malloc(sizeof *offs);
		*last = false;
		return s->mem_off ? VTL_OK : VTL_E_NOMEM;
	}
	/*
	 * A later segment says this one should run further. A crash leaves that
	 * only while this one's seal was in flight: its successor is then the
	 * last file, without a footer (a seal waits for the one before it), and
	 * nothing below the sync mark is missing. Anything else is damage: this
	 * segment keeps what it holds, the objects up to the next one are lost.
	 */
	uint32_t next, top, next2, top2;
	struct seg_header nh;
	bool ntrailer = false;
	if (!crash_may(c, t->seq) && (rc = seg_files_scan(c->pool, c->barcode, t->seq, &next, &top)) == VTL_OK &&
	    next != UINT32_MAX && seg_peek(c, next, &nh, &ntrailer) &&
	    lost_gap_ok(c->tape.eod + t->n_obj, c->tape.total_fm + t->n_fm, &nh) &&
	    (rc = seg_files_scan(c->pool, c->barcode, next, &next2, &top2)) == VTL_OK) {
		bool seal_in_flight = next == t->seq + 1 && next2 == UINT32_MAX && !ntrailer && t->data_end >= mark;
		if (!seal_in_flight) {
			s->sealed = true;
			s->mem_off = offs ? offs : malloc(sizeof *offs);
			*last = false;
			*lost_h = nh;
			*lost_next = next;
			return s->mem_off ? VTL_OK : VTL_E_NOMEM;
		}
	}
	if (rc) {
		free(offs);
		return rc;
	}
	free(c->tape.off);
	c->tape.off = offs;
	c->tape.offcap = cap;
	*last = true;
	if (!c->p.readonly && s->data_end != size) {
		if (ftruncate(fd, (off_t)s->data_end) != 0 || fdatasync(fd) != 0)
			return VTL_E_IO;
		pool_space_give(c->pool, s->member, size - s->data_end);
		s->acct = s->data_end + footer_size(s->n_obj, s->n_fm);
	}
	if (!c->p.readonly && s->synced_end > s->data_end) {
		/*
		 * A mark past the end the repair kept (a cut a crash interrupted
		 * before its lowered mark landed, or damage): lowered, and durable
		 * before anything is appended that it would wrongly vouch for.
		 */
		if (mark_pwrite(fd, s->data_end) != VTL_OK || fdatasync(fd) != 0)
			return VTL_E_IO;
		s->synced_end = s->data_end;
	}
	c->wr.dirty = true; /* close must write the footer this segment lacks */
	return cart_drop_from(c, s->seq + 1, false);
}

/* Makes segment 0 a blank tape again (writable) or just describes it so (read-only). */
static int seg0_rewrite(struct vtl_cart *c, int fd, struct seg_header *h)
{
	memset(h, 0, sizeof *h);
	snprintf(h->barcode, sizeof h->barcode, "%s", c->barcode);
	if (c->p.readonly)
		return VTL_OK;
	h->created_ns = vtl_wall_ns();
	unsigned char hb[SEG_HEADER_LEN];
	seg_header_encode(h, hb);
	struct iovec iov = {hb, sizeof hb};
	if (ftruncate(fd, 0) != 0 || write_fullv(fd, &iov, 1, 0) != VTL_OK || fdatasync(fd) != 0)
		return VTL_E_IO;
	return VTL_OK;
}

/*
 * Segment file seq is missing or unreadable with later files: unless a crash
 * may explain it, the objects up to the next file's first object are a lost
 * range (kind) and *resume is that file's number; UINT32_MAX when the next
 * file says nothing usable (or there is none, or a crash may explain it).
 */
static int cart_lost_files(struct vtl_cart *c, uint32_t seq, enum vtl_damage_kind kind, uint32_t *resume)
{
	*resume = UINT32_MAX;
	uint32_t next, top;
	struct seg_header nh;
	bool ntrailer;
	int rc = seg_files_scan(c->pool, c->barcode, seq, &next, &top);
	if (rc || next == UINT32_MAX || crash_may(c, seq) || !seg_peek(c, next, &nh, &ntrailer) ||
	    !lost_gap_ok(c->tape.eod, c->tape.total_fm, &nh))
		return rc;
	if ((rc = cart_add_lost(c, &nh, seq, next - 1, kind)))
		return rc;
	*resume = next;
	return VTL_OK;
}

/* Loads segments seq and up, continuing the tape as far as c holds it. */
int cart_load_from(struct vtl_cart *c, uint32_t first)
{
	for (uint32_t seq = first;; seq++) {
		char path[PATH_MAX];
		if (pool_seg_path(c->pool, c->barcode, seq, path, sizeof path))
			return VTL_E_INVAL;
		int fd = open(path, (c->p.readonly ? O_RDONLY : O_RDWR) | O_CLOEXEC);
		if (fd < 0) {
			if (errno != ENOENT)
				return VTL_E_IO;
			if (seq == 0)
				return VTL_E_NOTFOUND;
			if (c->p.follow)
				return VTL_OK; /* the writer has not created it yet */
			/*
			 * A missing segment with later ones: a crash leaves that only
			 * while a cut removes segments (the cut marker says so); then
			 * the later ones are set aside. Otherwise it is damage: the
			 * objects it held are lost, the next one's header says how many.
			 */
			uint32_t resume;
			int rc = cart_lost_files(c, seq, VTL_DAMAGE_MISSING, &resume);
			if (rc || resume == UINT32_MAX)
				return rc ? rc : cart_drop_from(c, seq, false);
			seq = resume - 1;
			continue;
		}
		struct stat st;
		struct seg_header h;
		int rc = vtl_grow_to((void **)&c->tape.segs, &c->tape.segcap, c->tape.nseg + 1, sizeof *c->tape.segs);
		if (rc || fstat(fd, &st) != 0) {
			close(fd);
			return rc ? rc : VTL_E_IO;
		}
		uint64_t size = (uint64_t)st.st_size;
		enum seg_hdr hc = seg_header_check(c, fd, size, seq, c->tape.eod, c->tape.total_fm, &h);
		bool more = seg_files_end(c->pool, c->barcode, seq + 1) > seq + 1;
		if (hc == HDR_STALE && c->tape.nseg && !crash_may(c, seq) && lost_gap_ok(c->tape.eod, c->tape.total_fm, &h)) {
			/* The segment before ends (with its footer) before this one starts: objects lost between. */
			uint32_t prev = c->tape.segs[c->tape.nseg - 1].seq;
			if ((rc = cart_add_lost(c, &h, prev, prev, VTL_DAMAGE_SHORT))) {
				close(fd);
				return rc;
			}
			if ((rc = vtl_grow_to((void **)&c->tape.segs, &c->tape.segcap, c->tape.nseg + 1, sizeof *c->tape.segs))) {
				close(fd);
				return rc;
			}
			hc = HDR_OK;
		}
		if (hc == HDR_TORN && seq == 0 && size < SEG_HEADER_LEN && !more) {
			/*
			 * The only segment, cut inside its header: nothing of the tape is
			 * left to read, so it is a blank tape. A writable open writes the
			 * header again.
			 */
			if ((rc = seg0_rewrite(c, fd, &h))) {
				close(fd);
				return rc;
			}
			hc = HDR_OK;
			size = c->p.readonly ? size : SEG_HEADER_LEN;
		}
		if (hc != HDR_OK) {
			close(fd);
			/* Segment 0 is synced at creation; a torn one in the middle is damage, not a crash. */
			if (seq == 0)
				return VTL_E_CORRUPT;
			if (hc == HDR_TORN && more) {
				/* Its objects are lost with the header (the next header says how many); else refused. */
				uint32_t resume;
				if ((rc = cart_lost_files(c, seq, VTL_DAMAGE_HEADER, &resume)))
					return rc;
				if (resume == UINT32_MAX)
					return VTL_E_CORRUPT;
				seq = resume - 1;
				continue;
			}
			return cart_drop_from(c, seq, hc == HDR_TORN);
		}
		struct seg s = {.seq = seq, .member = vtl_pool_member_for(c->pool, c->barcode, seq),
				.first_obj = h.first_object, .first_fm = h.first_filemark,
				.data_end = SEG_HEADER_LEN};
		s.acct = size;
		s.synced_end = h.synced_end;
		bool last = false;
		struct seg_header lost_h;
		uint32_t lost_next = UINT32_MAX;
		if (!seg_trailer_load(&s, fd, size))
			rc = seg_load_open(c, &s, fd, size, &last, &lost_h, &lost_next);
		else if (s.dmg_flag)
			rc = seg_load_damaged(c, &s, fd);
		if (!rc)
			rc = cart_add_seg(c, &s, fd);
		if (!rc && lost_next != UINT32_MAX) {
			bool short_one = lost_next == seq + 1;
			rc = cart_add_lost(c, &lost_h, short_one ? seq : seq + 1, short_one ? seq : lost_next - 1,
					   short_one ? VTL_DAMAGE_SHORT : VTL_DAMAGE_MISSING);
			if (!rc) {
				seq = lost_next - 1;
				continue;
			}
			return rc;
		}
		if (rc) {
			if (!s.fd)
				close(fd);
			free(s.fm);
			free(s.mem_off);
			return rc;
		}
		if (last)
			return VTL_OK;
	}
}

int cart_load(struct vtl_cart *c)
{
	if (!c->p.follow)
		cut_marker_load(c);
	int rc = cart_load_from(c, 0);
	if (!rc)
		dmg_log(c);
	return rc;
}
