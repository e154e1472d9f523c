/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Tape semantics over segment files: the segment table, append, read,
 * positioning without scanning, truncation, sealing and crash repair.
 */
#include "backend/cartridge.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "backend/compress.h"
#include "backend/internal.h"
#include "backend/workers.h"
#include "common/clock.h"
#include "common/grow.h"
#include "common/crc32c.h"
#include "common/log.h"
#include "common/vtl_error.h"

/* Segment files kept open at once per cartridge (the current, the last, read-ahead's). */
#define FD_CACHE_MAX 8
/* Space a sealed footer needs beyond 4 bytes per object: EOD, FMARKS, INDEX headers, trailer. */
#define FOOTER_FIXED (3 * REC_HEADER_LEN + TRAILER_LEN)
_Static_assert(VTL_RECORD_OVERHEAD == REC_HEADER_LEN, "capacity counts a record header per object");
/* Bytes of a segment the crash scan reads at once. */
#define SCAN_WINDOW (4u << 20)
/* The marker file of a cut not yet synced, in the cartridge's folder on its home member. */
#define CUT_MARKER "cut"

int read_full(int fd, void *buf, size_t len, uint64_t off)
{
	unsigned char *p = buf;
	while (len) {
		ssize_t n = pread(fd, p, len, (off_t)off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return VTL_E_IO;
		if (n == 0)
			return VTL_E_CORRUPT; /* short file */
		p += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return VTL_OK;
}

static int write_fullv(int fd, struct iovec *iov, int cnt, uint64_t off)
{
	while (cnt > 0) {
		ssize_t n = pwritev(fd, iov, cnt, (off_t)off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return VTL_E_IO;
		if (n == 0) {
			errno = ENOSPC;
			return VTL_E_IO;
		}
		off += (uint64_t)n;
		while (cnt > 0 && (size_t)n >= iov->iov_len) {
			n -= (ssize_t)iov->iov_len;
			iov++;
			cnt--;
		}
		if (cnt > 0) {
			iov->iov_base = (char *)iov->iov_base + n;
			iov->iov_len -= (size_t)n;
		}
	}
	return VTL_OK;
}

static bool errno_is_full(void)
{
	return errno == ENOSPC || errno == EDQUOT || errno == EFBIG;
}

static int scratch_need(unsigned char **buf, size_t *cap, size_t need)
{
	return vtl_grow_to((void **)buf, cap, need, 1);
}

static int fsync_path(const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return VTL_E_IO;
	int rc = fsync(fd) == 0 ? VTL_OK : VTL_E_IO;
	close(fd);
	return rc;
}

static struct seg *last_seg(struct vtl_cart *c)
{
	return &c->segs[c->nseg - 1];
}

static uint64_t footer_size(uint32_t n_obj, uint32_t n_fm)
{
	return FOOTER_FIXED + 4ull * n_obj + 4ull * n_fm;
}

/* ---- file descriptors ---- */

static void seg_close_fd(struct vtl_cart *c, struct seg *s)
{
	if (s->fd) {
		fdref_drop(s->fd);
		s->fd = NULL;
		c->nfd--;
	}
}

/* Keeps at most FD_CACHE_MAX segment files open: the cursor's and the last stay. */
static void fd_trim(struct vtl_cart *c, size_t keep)
{
	if (c->nfd < FD_CACHE_MAX)
		return;
	for (size_t i = 0; i + 1 < c->nseg && c->nfd >= FD_CACHE_MAX / 2; i++)
		if (i != keep && !(c->cur_valid && i == c->cur_seg))
			seg_close_fd(c, &c->segs[i]);
}

struct fdref *cart_seg_fd(struct vtl_cart *c, size_t si)
{
	struct seg *s = &c->segs[si];
	if (s->fd)
		return s->fd;
	fd_trim(c, si);
	char path[PATH_MAX];
	if (pool_seg_path(c->pool, c->barcode, s->seq, path, sizeof path))
		return NULL;
	int fd = open(path, (c->p.readonly ? O_RDONLY : O_RDWR) | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	struct fdref *f = calloc(1, sizeof *f);
	if (!f) {
		close(fd);
		return NULL;
	}
	f->fd = fd;
	s->fd = f;
	c->nfd++;
	return f;
}

static int seg_fd(struct vtl_cart *c, size_t si)
{
	struct fdref *f = cart_seg_fd(c, si);
	return f ? f->fd : -1;
}

/* ---- lookups ---- */

size_t cart_seg_of(const struct vtl_cart *c, uint64_t obj)
{
	size_t lo = 0, hi = c->nseg - 1;
	while (lo < hi) {
		size_t mid = (lo + hi + 1) / 2;
		if (c->segs[mid].first_obj <= obj)
			lo = mid;
		else
			hi = mid - 1;
	}
	/* Empty segments share first_obj with the next; the object is in the last one that starts before it. */
	while (lo > 0 && c->segs[lo].n_obj == 0 && c->segs[lo].first_obj > obj)
		lo--;
	return lo;
}

int cart_offsets(struct vtl_cart *c, size_t si, uint32_t rel, uint32_t n, uint32_t *out)
{
	struct seg *s = &c->segs[si];
	if ((uint64_t)rel + n > s->n_obj)
		return VTL_E_INVAL;
	if (s->lost)
		return VTL_E_CORRUPT; /* no file holds these objects */
	if (!s->sealed || s->mem_off) {
		memcpy(out, (s->sealed ? s->mem_off : c->off) + rel, 4ull * n);
		return VTL_OK;
	}
	int fd = seg_fd(c, si);
	if (fd < 0)
		return VTL_E_IO;
	unsigned char *raw = (unsigned char *)out;
	int rc = read_full(fd, raw, 4ull * n, s->index_off + REC_HEADER_LEN + 4ull * rel);
	if (rc)
		return rc;
	for (uint32_t i = 0; i < n; i++)
		out[i] = get_le32(raw + 4ull * i);
	return VTL_OK;
}

static int obj_offset(struct vtl_cart *c, size_t si, uint64_t obj, uint64_t *off)
{
	struct seg *s = &c->segs[si];
	if (obj == s->first_obj + s->n_obj) {
		*off = s->data_end;
		return VTL_OK;
	}
	uint32_t o;
	int rc = cart_offsets(c, si, (uint32_t)(obj - s->first_obj), 1, &o);
	if (rc)
		return rc;
	if (o < SEG_HEADER_LEN || o >= s->data_end)
		return VTL_E_CORRUPT;
	*off = o;
	return VTL_OK;
}

static int seg_rebuild(struct vtl_cart *c, size_t si);

/* ---- damage ---- */

/* Records that objects first..first+count-1 are damaged (the list stays in tape order). */
static int dmg_add(struct vtl_cart *c, uint64_t first, uint64_t count, uint32_t seq, uint32_t seq_last,
		   enum vtl_damage_kind kind)
{
	if (!count)
		return VTL_OK;
	if (c->ndmg) {
		struct vtl_damage *d = &c->dmg[c->ndmg - 1];
		if (d->kind == kind && d->seq == seq && d->first + d->count == first) {
			d->count += count;
			return VTL_OK;
		}
	}
	int rc = vtl_grow_to((void **)&c->dmg, &c->dmgcap, c->ndmg + 1, sizeof *c->dmg);
	if (rc)
		return rc;
	c->dmg[c->ndmg++] = (struct vtl_damage){.first = first, .count = count, .seq = seq, .seq_last = seq_last,
						.kind = kind};
	return VTL_OK;
}

/* The first damaged object at or after from; UINT64_MAX when there is none. */
static uint64_t dmg_next(const struct vtl_cart *c, uint64_t from)
{
	for (size_t i = 0; i < c->ndmg; i++)
		if (c->dmg[i].first + c->dmg[i].count > from)
			return c->dmg[i].first > from ? c->dmg[i].first : from;
	return UINT64_MAX;
}

/* The last damaged object before before; UINT64_MAX when there is none. */
static uint64_t dmg_prev(const struct vtl_cart *c, uint64_t before)
{
	for (size_t i = c->ndmg; i-- > 0;)
		if (c->dmg[i].first < before) {
			uint64_t end = c->dmg[i].first + c->dmg[i].count;
			return (end < before ? end : before) - 1;
		}
	return UINT64_MAX;
}

/* Forgets the damage from object obj on (a cut removed it from the tape). */
static void dmg_cut(struct vtl_cart *c, uint64_t obj)
{
	while (c->ndmg && c->dmg[c->ndmg - 1].first >= obj)
		c->ndmg--;
	if (c->ndmg && c->dmg[c->ndmg - 1].first + c->dmg[c->ndmg - 1].count > obj)
		c->dmg[c->ndmg - 1].count = obj - c->dmg[c->ndmg - 1].first;
}

const char *vtl_damage_kind_name(enum vtl_damage_kind kind)
{
	switch (kind) {
	case VTL_DAMAGE_RECORDS:
		return "bad records";
	case VTL_DAMAGE_SHORT:
		return "segment cut short";
	case VTL_DAMAGE_MISSING:
		return "segments missing";
	case VTL_DAMAGE_HEADER:
		return "segment header unreadable";
	}
	return "damage";
}

size_t vtl_cart_damage(const struct vtl_cart *c, struct vtl_damage *out, size_t max)
{
	for (size_t i = 0; i < c->ndmg && i < max; i++)
		out[i] = c->dmg[i];
	return c->ndmg;
}

size_t vtl_damage_describe(const char *barcode, const struct vtl_damage *d, char *buf, size_t len)
{
	unsigned long long first = d->first, last = d->first + d->count - 1;
	int n;
	if (d->kind == VTL_DAMAGE_MISSING || d->kind == VTL_DAMAGE_HEADER)
		n = snprintf(buf, len, "cartridge %s: damaged: segment files %08u..%08u.seg %s: objects %llu..%llu unreadable",
			     barcode, d->seq, d->seq_last, d->kind == VTL_DAMAGE_MISSING ? "missing" : "with an unreadable header",
			     first, last);
	else
		n = snprintf(buf, len, "cartridge %s: damaged: %s in segment file %08u.seg: objects %llu..%llu unreadable",
			     barcode, vtl_damage_kind_name(d->kind), d->seq, first, last);
	return n < 0 ? 0 : (size_t)n < len ? (size_t)n : len ? len - 1 : 0;
}

/* One warning per damaged range, naming the cartridge, the segment file(s) and the objects. */
static void dmg_log(const struct vtl_cart *c)
{
	char line[256];
	for (size_t i = 0; i < c->ndmg; i++) {
		vtl_damage_describe(c->barcode, &c->dmg[i], line, sizeof line);
		log_msg(LOG_LEVEL_WARN, "%s (what follows stays readable)", line);
	}
}

/* ---- the cut marker and the sync mark ---- */

static int cut_marker_path(const struct vtl_pool *pool, const char *barcode, char *buf, size_t len)
{
	unsigned m = vtl_pool_member_for(pool, barcode, 0);
	int n = snprintf(buf, len, "%s/%s/" CUT_MARKER, pool->m[m].path, barcode);
	return (n < 0 || (size_t)n >= len) ? VTL_E_INVAL : VTL_OK;
}

/* Reads the cut marker, if there is one: from its segment on, the open's repair reads crash leftovers. */
static void cut_marker_load(struct vtl_cart *c)
{
	char path[PATH_MAX], buf[16] = {0};
	if (cut_marker_path(c->pool, c->barcode, path, sizeof path))
		return;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	c->cut_marker = true;
	/* Unreadable content: the marker alone says a cut was under way; trust nothing from segment 0. */
	char *end;
	unsigned long v = n > 0 ? strtoul(buf, &end, 10) : 0;
	c->cut_seq = n > 0 && end != buf && v <= UINT32_MAX ? (uint32_t)v : 0;
}

/*
 * Makes the marker of a cut at segment seq durable before the cut removes or
 * truncates anything; a marker of an earlier cut not yet synced stays if it
 * names an earlier segment.
 */
static int cut_marker_set(struct vtl_cart *c, uint32_t seq)
{
	if (c->cut_marker && c->cut_seq <= seq)
		return VTL_OK;
	char path[PATH_MAX], buf[16];
	if (cut_marker_path(c->pool, c->barcode, path, sizeof path))
		return VTL_E_INVAL;
	int len = snprintf(buf, sizeof buf, "%u\n", seq);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0640);
	if (fd < 0)
		return VTL_E_IO;
	struct iovec iov = {buf, (size_t)len};
	int rc = write_fullv(fd, &iov, 1, 0);
	if (!rc && fdatasync(fd) != 0)
		rc = VTL_E_IO;
	close(fd);
	unsigned m = vtl_pool_member_for(c->pool, c->barcode, 0);
	char dir[PATH_MAX];
	if (!rc && (pool_cart_dir(c->pool, m, c->barcode, dir, sizeof dir) || fsync_path(dir)))
		rc = VTL_E_IO;
	if (!rc) {
		c->cut_marker = true;
		c->cut_seq = seq;
	}
	return rc;
}

/* Removes the cut marker once the cut and everything before it are durable. */
static int cut_marker_clear(struct vtl_cart *c)
{
	if (!c->cut_marker)
		return VTL_OK;
	char path[PATH_MAX];
	if (cut_marker_path(c->pool, c->barcode, path, sizeof path))
		return VTL_E_INVAL;
	if (unlink(path) != 0 && errno != ENOENT)
		return VTL_E_IO;
	unsigned m = vtl_pool_member_for(c->pool, c->barcode, 0);
	char dir[PATH_MAX];
	if (pool_cart_dir(c->pool, m, c->barcode, dir, sizeof dir) || fsync_path(dir))
		return VTL_E_IO;
	c->cut_marker = false;
	return VTL_OK;
}

/* True when what the open finds from segment seq on may be a crash's leftovers rather than damage. */
static bool crash_may(const struct vtl_cart *c, uint32_t seq)
{
	return c->p.follow || (c->cut_marker && seq >= c->cut_seq);
}

/* Writes the sync mark end into the header in fd, in place. */
static int mark_pwrite(int fd, uint64_t end)
{
	unsigned char m[SEG_SYNCMARK_LEN];
	seg_syncmark_encode(end, m);
	struct iovec iov = {m, sizeof m};
	return write_fullv(fd, &iov, 1, SEG_SYNCMARK_OFF);
}

/* Writes segment si's sync mark: its records below end are durable (the next fdatasync carries it). */
static int seg_mark_write(struct vtl_cart *c, size_t si, uint64_t end)
{
	int fd = seg_fd(c, si);
	if (fd < 0)
		return VTL_E_IO;
	int rc = mark_pwrite(fd, end);
	if (!rc)
		c->segs[si].synced_end = end;
	return rc;
}

/* Loads the filemark list of a sealed segment from its footer (a small record, checked whole). */
static int seg_load_fm_footer(struct vtl_cart *c, size_t si)
{
	struct seg *s = &c->segs[si];
	if (s->lost && s->n_fm)
		return VTL_E_MEDIUM; /* where its filemarks were is lost with it */
	if (s->fm || s->n_fm == 0)
		return VTL_OK;
	int fd = seg_fd(c, si);
	if (fd < 0)
		return VTL_E_IO;
	unsigned char hb[REC_HEADER_LEN];
	struct rec_header h;
	int rc = read_full(fd, hb, sizeof hb, s->fm_off);
	if (rc)
		return rc;
	if (rec_header_decode(hb, &h) || h.type != REC_FMARKS || h.stored_len != 4ull * s->n_fm)
		return VTL_E_CORRUPT;
	unsigned char *raw = malloc(h.stored_len);
	uint32_t *fm = malloc(4ull * s->n_fm);
	if (!raw || !fm) {
		free(raw);
		free(fm);
		return VTL_E_NOMEM;
	}
	rc = read_full(fd, raw, h.stored_len, s->fm_off + REC_HEADER_LEN);
	if (!rc && crc32c(0, raw, h.stored_len) != h.payload_crc)
		rc = VTL_E_CORRUPT;
	for (uint32_t i = 0; !rc && i < s->n_fm; i++) {
		fm[i] = get_le32(raw + 4ull * i);
		if (fm[i] >= s->n_obj || (i && fm[i] <= fm[i - 1]))
			rc = VTL_E_CORRUPT;
	}
	free(raw);
	if (rc) {
		free(fm);
		return rc;
	}
	s->fm = fm;
	s->fm_cap = s->n_fm;
	return VTL_OK;
}

/* Loads the filemark list of a sealed segment; a damaged footer is rebuilt from the records. */
static int seg_load_fm(struct vtl_cart *c, size_t si)
{
	int rc = seg_load_fm_footer(c, si);
	if (rc == VTL_E_CORRUPT)
		rc = seg_rebuild(c, si);
	return rc == VTL_E_CORRUPT && c->segs[si].lost ? VTL_E_MEDIUM : rc;
}

/* Filemarks before object obj (0..eod). */
static int fm_before(struct vtl_cart *c, uint64_t obj, uint64_t *count)
{
	if (obj >= c->eod) {
		*count = c->total_fm;
		return VTL_OK;
	}
	size_t si = cart_seg_of(c, obj);
	struct seg *s = &c->segs[si];
	if (s->lost && obj == s->first_obj) {
		*count = s->first_fm;
		return VTL_OK;
	}
	int rc = seg_load_fm(c, si);
	if (rc)
		return rc;
	uint32_t rel = (uint32_t)(obj - s->first_obj);
	uint32_t lo = 0, hi = s->n_fm;
	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;
		if (s->fm[mid] < rel)
			lo = mid + 1;
		else
			hi = mid;
	}
	*count = s->first_fm + lo;
	return VTL_OK;
}

/* Object number of the k-th filemark on the tape (k < total_fm). */
static int fm_object(struct vtl_cart *c, uint64_t k, uint64_t *obj)
{
	size_t lo = 0, hi = c->nseg - 1;
	while (lo < hi) { /* first segment whose filemarks reach past k */
		size_t mid = (lo + hi) / 2;
		if (c->segs[mid].first_fm + c->segs[mid].n_fm > k)
			hi = mid;
		else
			lo = mid + 1;
	}
	struct seg *s = &c->segs[lo];
	if (k < s->first_fm || k >= s->first_fm + s->n_fm)
		return VTL_E_CORRUPT;
	int rc = seg_load_fm(c, lo);
	if (rc)
		return rc;
	*obj = s->first_obj + s->fm[k - s->first_fm];
	return VTL_OK;
}

/* Record bytes on the tape before object obj. */
static int stored_before(struct vtl_cart *c, uint64_t obj, uint64_t *bytes)
{
	if (obj >= c->eod) {
		*bytes = c->stored;
		return VTL_OK;
	}
	size_t si = cart_seg_of(c, obj);
	uint64_t off = SEG_HEADER_LEN, sum = 0;
	/* A lost range holds no bytes: what is before it is what the files before it hold. */
	int rc = c->segs[si].lost ? VTL_OK : obj_offset(c, si, obj, &off);
	if (rc)
		return rc;
	for (size_t i = 0; i < si; i++)
		sum += c->segs[i].data_end - SEG_HEADER_LEN;
	*bytes = sum + off - SEG_HEADER_LEN;
	return VTL_OK;
}

/* ---- segment files ---- */

/* Creates segment file seq with its header; the caller adds it to the table. */
static int seg_file_create(struct vtl_pool *pool, const char *barcode, uint32_t seq, uint64_t first_obj,
			   uint64_t first_fm, int *fd_out, uint64_t *dir_dirty)
{
	unsigned m = vtl_pool_member_for(pool, barcode, seq);
	char dir[PATH_MAX], path[PATH_MAX];
	if (pool_cart_dir(pool, m, barcode, dir, sizeof dir) || pool_seg_path(pool, barcode, seq, path, sizeof path))
		return VTL_E_INVAL;
	if (mkdir(dir, 0750) == 0) {
		if (fsync_path(pool->m[m].path))
			return VTL_E_IO;
	} else if (errno != EEXIST) {
		return VTL_E_IO;
	}
	int rc = pool_space_take(pool, m, SEG_HEADER_LEN + FOOTER_FIXED);
	if (rc)
		return rc;
	int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0640);
	if (fd < 0) {
		pool_space_give(pool, m, SEG_HEADER_LEN + FOOTER_FIXED);
		return errno == EEXIST ? VTL_E_EXISTS : VTL_E_IO;
	}
	struct seg_header h = {.seq = seq, .first_object = first_obj, .first_filemark = first_fm,
			       .created_ns = vtl_wall_ns()};
	snprintf(h.barcode, sizeof h.barcode, "%s", barcode);
	unsigned char hb[SEG_HEADER_LEN];
	seg_header_encode(&h, hb);
	struct iovec iov = {hb, sizeof hb};
	rc = write_fullv(fd, &iov, 1, 0);
	if (rc) {
		rc = errno_is_full() ? VTL_E_POOL_FULL : VTL_E_IO;
		close(fd);
		unlink(path);
		pool_space_give(pool, m, SEG_HEADER_LEN + FOOTER_FIXED);
		return rc;
	}
	*dir_dirty |= 1ull << m;
	*fd_out = fd;
	return VTL_OK;
}

/* Appends a new empty open segment after the last one (which must be sealed). */
static int seg_append_new(struct vtl_cart *c)
{
	int rc = vtl_grow_to((void **)&c->segs, &c->segcap, c->nseg + 1, sizeof *c->segs);
	if (rc)
		return rc;
	uint32_t seq = c->nseg ? last_seg(c)->seq + 1 : 0;
	int fd;
	rc = seg_file_create(c->pool, c->barcode, seq, c->eod, c->total_fm, &fd, &c->dir_dirty);
	if (rc)
		return rc;
	struct fdref *f = calloc(1, sizeof *f);
	if (!f) {
		close(fd);
		return VTL_E_NOMEM;
	}
	f->fd = fd;
	struct seg *s = &c->segs[c->nseg++];
	memset(s, 0, sizeof *s);
	s->seq = seq;
	s->member = vtl_pool_member_for(c->pool, c->barcode, seq);
	s->first_obj = c->eod;
	s->first_fm = c->total_fm;
	s->data_end = SEG_HEADER_LEN;
	s->acct = SEG_HEADER_LEN + FOOTER_FIXED;
	s->fd = f;
	c->nfd++;
	fd_trim(c, c->nseg - 1);
	return VTL_OK;
}

/* Encodes the footer of the last segment ([EOD] FMARKS INDEX trailer) into a new buffer. */
static unsigned char *footer_build(struct vtl_cart *c, bool with_eod, size_t *len, uint64_t *fm_off,
				   uint64_t *index_off)
{
	struct seg *s = last_seg(c);
	size_t fmb = 4ull * s->n_fm, ixb = 4ull * s->n_obj;
	size_t eodb = with_eod ? REC_HEADER_LEN : 0;
	size_t total = eodb + 2 * REC_HEADER_LEN + fmb + ixb + TRAILER_LEN;
	unsigned char *buf = malloc(total);
	if (!buf)
		return NULL;
	unsigned char *p = buf;
	uint64_t at = s->data_end;
	struct rec_header h = {0};
	if (with_eod) {
		h.type = REC_EOD;
		h.object = c->eod;
		h.payload_crc = crc32c(0, NULL, 0);
		rec_header_encode(&h, p);
		p += REC_HEADER_LEN;
	}
	*fm_off = at + (uint64_t)(p - buf);
	unsigned char *fp = p + REC_HEADER_LEN;
	for (uint32_t i = 0; i < s->n_fm; i++)
		put_le32(fp + 4ull * i, s->fm[i]);
	h = (struct rec_header){.type = REC_FMARKS, .stored_len = (uint32_t)fmb, .length = (uint32_t)fmb,
				.object = c->eod, .payload_crc = crc32c(0, fp, fmb)};
	rec_header_encode(&h, p);
	p = fp + fmb;
	*index_off = at + (uint64_t)(p - buf);
	unsigned char *ip = p + REC_HEADER_LEN;
	bool damaged = false;
	for (uint32_t i = 0; i < s->n_obj; i++) {
		put_le32(ip + 4ull * i, c->off[i]);
		damaged |= c->off[i] == 0; /* a damaged object: the flag lets the next open list it */
	}
	h = (struct rec_header){.type = REC_INDEX, .stored_len = (uint32_t)ixb, .length = (uint32_t)ixb,
				.object = c->eod, .payload_crc = crc32c(0, ip, ixb)};
	rec_header_encode(&h, p);
	p = ip + ixb;
	struct seg_trailer t = {.data_end = s->data_end, .fm_off = *fm_off, .index_off = *index_off,
				.n_objects = s->n_obj, .n_filemarks = s->n_fm,
				.flags = (with_eod ? TRAILER_FLAG_EOD : 0) | (damaged ? TRAILER_FLAG_DAMAGED : 0)};
	seg_trailer_encode(&t, p);
	*len = total;
	return buf;
}

/*
 * Makes a segment's records durable, then writes its footer after them: a
 * footer that reached the disk before a record it covers would make a torn
 * record look like a sealed one. VTL_E_POOL_FULL when only the footer did
 * not fit (the file system is full): the records are durable, what was
 * written of the footer is cut off, and the next open indexes the segment
 * from its records, as after a crash.
 */
static int footer_commit(int fd, unsigned char *footer, size_t len, uint64_t at)
{
	if (fdatasync(fd) != 0)
		return VTL_E_IO;
	struct iovec iov = {footer, len};
	int rc = write_fullv(fd, &iov, 1, at);
	if (rc != VTL_OK && errno_is_full())
		return ftruncate(fd, (off_t)at) == 0 && fdatasync(fd) == 0 ? VTL_E_POOL_FULL : VTL_E_IO;
	/* Synced too, so that an open after a power cut finds the footer and need not rebuild the index. */
	if (rc == VTL_OK && fdatasync(fd) != 0)
		rc = VTL_E_IO;
	return rc;
}

/* Fences c after a failed write or sync (see struct vtl_cart's fault); returns rc. */
static int cart_fence(struct vtl_cart *c, int rc)
{
	if (rc < 0 && rc != VTL_E_POOL_FULL && rc != VTL_E_NOMEM && !c->fault)
		c->fault = rc;
	return rc;
}

/* The seal of a full segment, done by a worker while the host writes on into the next one. */
struct seal_job {
	struct job job; /* first: the worker hands back this pointer */
	struct fdref *fd;
	unsigned char *footer;
	size_t len;
	uint64_t at;
	uint32_t seq;
	int rc;
	bool done;
	pthread_mutex_t lock;
	pthread_cond_t cond;
};

static void seal_job_run(struct job *j)
{
	struct seal_job *sj = (struct seal_job *)j;
	int rc = footer_commit(sj->fd->fd, sj->footer, sj->len, sj->at);
	fdref_put(sj->fd);
	pthread_mutex_lock(&sj->lock);
	sj->rc = rc;
	sj->done = true;
	pthread_cond_signal(&sj->cond);
	pthread_mutex_unlock(&sj->lock);
}

/*
 * Waits for the seal in flight, if any. Its segment keeps its in-memory index
 * until then; after a failure it keeps it for good (the footer on disk is
 * missing or torn, which the next open repairs) and the error is returned.
 */
static int seal_wait(struct vtl_cart *c)
{
	struct seal_job *sj = c->seal;
	if (!sj)
		return VTL_OK;
	pthread_mutex_lock(&sj->lock);
	while (!sj->done)
		pthread_cond_wait(&sj->cond, &sj->lock);
	pthread_mutex_unlock(&sj->lock);
	int rc = sj->rc;
	for (size_t i = 0; !rc && i < c->nseg; i++) {
		struct seg *s = &c->segs[i];
		if (s->seq == sj->seq && s->sealed && s->mem_off && s->index_off) {
			free(s->mem_off);
			s->mem_off = NULL;
		}
	}
	pthread_mutex_destroy(&sj->lock);
	pthread_cond_destroy(&sj->cond);
	free(sj->footer);
	free(sj);
	c->seal = NULL;
	return rc;
}

/*
 * Seals the last segment. Synchronous (close) or, at a segment change, on a
 * worker: the records' fdatasync takes as long as the disk needs to catch up,
 * and the host should keep the disk busy meanwhile. Until the worker is done
 * the segment is read through a copy of its index in memory.
 */
static int seg_seal_last(struct vtl_cart *c, bool with_eod, bool async)
{
	int rc = seal_wait(c);
	if (rc)
		return cart_fence(c, rc);
	struct seg *s = last_seg(c);
	struct fdref *f = cart_seg_fd(c, c->nseg - 1);
	if (!f)
		return VTL_E_IO;
	size_t len;
	uint64_t fm_off, index_off;
	unsigned char *footer = footer_build(c, with_eod, &len, &fm_off, &index_off);
	if (!footer)
		return VTL_E_NOMEM;
	struct seal_job *sj = async ? calloc(1, sizeof *sj) : NULL;
	uint32_t *copy = async ? malloc(4ull * s->n_obj + 4) : NULL;
	if (async && (!sj || !copy)) {
		free(sj);
		free(copy);
		async = false;
	}
	if (!async) {
		rc = footer_commit(f->fd, footer, len, s->data_end);
		free(footer);
		/* A close on a full disk: every record is durable, the footer is only an index. */
		if (rc == VTL_E_POOL_FULL)
			return VTL_OK;
		if (rc) {
			cart_fence(c, rc);
			if (ftruncate(f->fd, (off_t)s->data_end) != 0)
				return VTL_E_IO;
			return rc;
		}
	} else {
		memcpy(copy, c->off, 4ull * s->n_obj);
		s->mem_off = copy;
		fdref_get(f);
		sj->job.run = seal_job_run;
		sj->fd = f;
		sj->footer = footer;
		sj->len = len;
		sj->at = s->data_end;
		sj->seq = s->seq;
		pthread_mutex_init(&sj->lock, NULL);
		pthread_cond_init(&sj->cond, NULL);
		c->seal = sj;
		workers_submit(c->pool->workers, &sj->job);
	}
	s->sealed = true;
	s->eod_rec = with_eod;
	s->dmg_flag = false;
	for (uint32_t i = 0; i < s->n_obj && !s->dmg_flag; i++)
		s->dmg_flag = c->off[i] == 0;
	s->fm_off = fm_off;
	s->index_off = index_off;
	return VTL_OK;
}

/*
 * Reads the INDEX footer record of sealed segment s (in fd) into out, checked
 * against its CRC; entries of 0 (damaged objects) only with s->dmg_flag.
 */
static int index_read(const struct seg *s, int fd, uint32_t *out)
{
	unsigned char hb[REC_HEADER_LEN];
	struct rec_header h;
	int rc = read_full(fd, hb, sizeof hb, s->index_off);
	if (rc)
		return rc;
	if (rec_header_decode(hb, &h) || h.type != REC_INDEX || h.stored_len != 4ull * s->n_obj)
		return VTL_E_CORRUPT;
	unsigned char *raw = malloc(h.stored_len ? h.stored_len : 1);
	if (!raw)
		return VTL_E_NOMEM;
	rc = read_full(fd, raw, h.stored_len, s->index_off + REC_HEADER_LEN);
	if (!rc && crc32c(0, raw, h.stored_len) != h.payload_crc)
		rc = VTL_E_CORRUPT;
	uint32_t prev = 0;
	for (uint32_t i = 0; !rc && i < s->n_obj; i++) {
		out[i] = get_le32(raw + 4ull * i);
		if (out[i] == 0 && s->dmg_flag)
			continue;
		if (out[i] < SEG_HEADER_LEN || out[i] >= s->data_end || out[i] <= prev)
			rc = VTL_E_CORRUPT;
		prev = out[i];
	}
	free(raw);
	return rc;
}

/* Reads the INDEX footer record of sealed segment si into c->off. */
static int seg_read_index(struct vtl_cart *c, size_t si)
{
	int fd = seg_fd(c, si);
	if (fd < 0)
		return VTL_E_IO;
	return index_read(&c->segs[si], fd, c->off);
}

/* Reopens the sealed segment si for appending: its index comes back into memory, its footer goes. */
static int seg_unseal(struct vtl_cart *c, size_t si)
{
	struct seg *s = &c->segs[si];
	if (s->lost)
		return VTL_E_MEDIUM;
	int rc = seg_load_fm(c, si);
	if (rc)
		return rc;
	if ((rc = vtl_grow_to((void **)&c->off, &c->offcap, s->n_obj + 1, sizeof *c->off)))
		return rc;
	rc = s->mem_off ? VTL_OK : seg_read_index(c, si);
	if (rc == VTL_E_CORRUPT)
		rc = seg_rebuild(c, si);
	if (rc)
		return rc;
	if (s->mem_off) {
		memcpy(c->off, s->mem_off, 4ull * s->n_obj);
		free(s->mem_off);
		s->mem_off = NULL;
	}
	if (s->n_fm && !s->fm)
		return VTL_E_CORRUPT;
	int fd = seg_fd(c, si);
	if (fd < 0 || ftruncate(fd, (off_t)s->data_end) != 0)
		return VTL_E_IO;
	s->sealed = false;
	s->eod_rec = false;
	s->index_off = s->fm_off = 0;
	c->need_sync = true;
	/* Its records were durable under the footer: the crash walk may tell damage among them from a tear. */
	return s->synced_end == s->data_end ? VTL_OK : seg_mark_write(c, si, s->data_end);
}

static void seg_forget(struct vtl_cart *c, struct seg *s)
{
	seg_close_fd(c, s);
	free(s->fm);
	s->fm = NULL;
	free(s->mem_off);
	s->mem_off = NULL;
}

/* ---- crash repair and index rebuild ---- */

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
/* Reads the record at off and checks it whole: header, object in (lo, hi], length, payload CRC. */
static bool rec_whole_at(struct vtl_cart *c, int fd, uint64_t size, uint64_t off, uint64_t lo, uint64_t hi,
			 struct rec_header *h)
{
	unsigned char hb[REC_HEADER_LEN];
	if (off + REC_HEADER_LEN > size || read_full(fd, hb, sizeof hb, off) || rec_header_decode(hb, h) ||
	    h->object <= lo || h->object > hi || (h->type != REC_DATA && h->type != REC_FILEMARK) ||
	    off + REC_HEADER_LEN + h->stored_len > size)
		return false;
	if (scratch_need(&c->scratch, &c->scratch_cap, h->stored_len ? h->stored_len : 1) ||
	    read_full(fd, c->scratch, h->stored_len, off + REC_HEADER_LEN))
		return false;
	return crc32c(0, c->scratch, h->stored_len) == h->payload_crc;
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

static int seg_scan(struct vtl_cart *c, size_t si, int fd, uint64_t size, bool check_payload, bool resume,
		    uint64_t mark, uint32_t **offs, size_t *cap)
{
	struct seg *s = &c->segs[si];
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
				if ((rc = scratch_need(&c->scratch, &c->scratch_cap, h.stored_len)))
					break;
				if ((rc = read_full(fd, c->scratch, h.stored_len, at + REC_HEADER_LEN)))
					break;
				payload = c->scratch;
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
		uint64_t next_at, next_obj, expect = s->first_obj + n_obj;
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
static int seg_rebuild(struct vtl_cart *c, size_t si)
{
	struct seg *s = &c->segs[si];
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

/* ---- open / close ---- */

static void cart_free(struct vtl_cart *c)
{
	(void)seal_wait(c); /* an error here was already lost with the session */
	if (c->ra)
		ra_destroy(c->ra);
	for (size_t i = 0; i < c->nseg; i++)
		seg_forget(c, &c->segs[i]);
	free(c->segs);
	free(c->off);
	free(c->scratch);
	free(c->scratch2);
	free(c->dmg);
	if (c->lockfd >= 0)
		close(c->lockfd);
	free(c);
}

static int lock_path(struct vtl_pool *pool, const char *barcode, char *buf, size_t len)
{
	unsigned m = vtl_pool_member_for(pool, barcode, 0);
	int n = snprintf(buf, len, "%s/%s/lock", pool->m[m].path, barcode);
	return (n < 0 || (size_t)n >= len) ? VTL_E_INVAL : VTL_OK;
}

static int cart_lock(struct vtl_pool *pool, const char *barcode, bool exclusive, int *fd_out)
{
	char path[PATH_MAX];
	if (lock_path(pool, barcode, path, sizeof path))
		return VTL_E_INVAL;
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0640);
	if (fd < 0)
		return errno == ENOENT ? VTL_E_NOTFOUND : VTL_E_IO;
	if (flock(fd, (exclusive ? LOCK_EX : LOCK_SH) | LOCK_NB) != 0) {
		int busy = errno == EWOULDBLOCK;
		close(fd);
		return busy ? VTL_E_BUSY : VTL_E_IO;
	}
	*fd_out = fd;
	return VTL_OK;
}

int vtl_cart_exists(struct vtl_pool *pool, const char *barcode)
{
	if (vtl_barcode_check(barcode))
		return VTL_E_INVAL;
	char path[PATH_MAX];
	if (pool_seg_path(pool, barcode, 0, path, sizeof path))
		return VTL_E_INVAL;
	struct stat st;
	if (stat(path, &st) == 0)
		return 1;
	return errno == ENOENT ? 0 : VTL_E_IO;
}

int vtl_cart_create(struct vtl_pool *pool, const char *barcode)
{
	if (vtl_barcode_check(barcode))
		return VTL_E_INVAL;
	int ex = vtl_cart_exists(pool, barcode);
	if (ex < 0)
		return ex;
	if (ex)
		return VTL_E_EXISTS;
	uint64_t dirty = 0;
	int fd;
	int rc = seg_file_create(pool, barcode, 0, 0, 0, &fd, &dirty);
	if (rc)
		return rc;
	if (fdatasync(fd) != 0)
		rc = VTL_E_IO;
	close(fd);
	unsigned m = vtl_pool_member_for(pool, barcode, 0);
	char dir[PATH_MAX];
	if (!rc && !pool_cart_dir(pool, m, barcode, dir, sizeof dir))
		rc = fsync_path(dir);
	return rc;
}

/* The first segment number from seq on that has no file: the segment files run seq..end-1. */
static uint32_t seg_files_end(struct vtl_pool *pool, const char *barcode, uint32_t seq)
{
	char path[PATH_MAX];
	struct stat st;
	while (!pool_seg_path(pool, barcode, seq, path, sizeof path) && stat(path, &st) == 0)
		seq++;
	return seq;
}

static int seg_files_scan(struct vtl_pool *pool, const char *barcode, uint32_t after, uint32_t *next, uint32_t *top);

/* Removes the *.seg.orphan files an interrupted cut left in a cartridge's folder on member m. */
static int remove_orphans(struct vtl_pool *pool, unsigned m, const char *barcode)
{
	char dir[PATH_MAX];
	if (pool_cart_dir(pool, m, barcode, dir, sizeof dir))
		return VTL_E_INVAL;
	DIR *d = opendir(dir);
	if (!d)
		return errno == ENOENT ? VTL_OK : VTL_E_IO;
	int rc = VTL_OK;
	struct dirent *e;
	while ((e = readdir(d))) {
		size_t n = strlen(e->d_name);
		struct stat st;
		if (n > 11 && strcmp(e->d_name + n - 11, ".seg.orphan") == 0 &&
		    fstatat(dirfd(d), e->d_name, &st, 0) == 0) {
			if (unlinkat(dirfd(d), e->d_name, 0) == 0)
				pool_space_give(pool, m, (uint64_t)st.st_size);
			else
				rc = VTL_E_IO;
		}
	}
	closedir(d);
	return rc;
}

int vtl_cart_delete(struct vtl_pool *pool, const char *barcode)
{
	if (vtl_barcode_check(barcode))
		return VTL_E_INVAL;
	int lockfd;
	int rc = cart_lock(pool, barcode, true, &lockfd);
	if (rc)
		return rc;
	/*
	 * Highest segment first, so that a crash leaves a shorter but consistent
	 * tape; from the highest file there is, past any gap damage left.
	 */
	uint32_t next, top;
	if ((rc = seg_files_scan(pool, barcode, 0, &next, &top))) {
		close(lockfd);
		return rc;
	}
	uint32_t n = top == UINT32_MAX ? 0 : top + 1;
	char path[PATH_MAX];
	struct stat st;
	while (n-- > 0) {
		if (pool_seg_path(pool, barcode, n, path, sizeof path) || stat(path, &st) != 0)
			continue;
		if (unlink(path) == 0)
			pool_space_give(pool, vtl_pool_member_for(pool, barcode, n), (uint64_t)st.st_size);
		else
			rc = VTL_E_IO;
	}
	for (unsigned m = 0; !rc && m < pool->n; m++)
		rc = remove_orphans(pool, m, barcode);
	if (!rc && !cut_marker_path(pool, barcode, path, sizeof path))
		unlink(path); /* a cut's marker not yet synced away: it goes with the cartridge */
	if (!rc && !lock_path(pool, barcode, path, sizeof path))
		unlink(path);
	close(lockfd);
	for (unsigned m = 0; !rc && m < pool->n; m++) {
		char dir[PATH_MAX];
		if (!pool_cart_dir(pool, m, barcode, dir, sizeof dir) && rmdir(dir) == 0)
			fsync_path(pool->m[m].path);
	}
	return rc;
}

/* Reads the header and, if there is one, the trailer of segment file seq into s. */
/* Header check results for a segment file at open. */
enum seg_hdr {
	HDR_OK,    /* ours, and it continues the tape */
	HDR_TORN,  /* not a valid header: its creation was torn */
	HDR_STALE, /* a valid header that does not continue the tape: left by an interrupted cut */
};

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
static bool seg_trailer_load(struct seg *s, int fd, uint64_t size)
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
static int seg_files_scan(struct vtl_pool *pool, const char *barcode, uint32_t after, uint32_t *next, uint32_t *top)
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
	int rc = vtl_grow_to((void **)&c->segs, &c->segcap, c->nseg + 1, sizeof *c->segs);
	if (rc || (rc = dmg_add(c, c->eod, h->first_object - c->eod, seq, seq_last, kind)))
		return rc;
	struct seg *s = &c->segs[c->nseg++];
	memset(s, 0, sizeof *s);
	s->seq = seq;
	s->member = vtl_pool_member_for(c->pool, c->barcode, seq);
	s->first_obj = c->eod;
	s->n_obj = (uint32_t)(h->first_object - c->eod);
	s->first_fm = c->total_fm;
	s->n_fm = (uint32_t)(h->first_filemark - c->total_fm);
	s->data_end = SEG_HEADER_LEN;
	s->sealed = true;
	s->lost = true;
	s->lost_files = kind != VTL_DAMAGE_SHORT; /* a short one's file is the segment's before it */
	s->lost_last = seq_last;
	c->eod = h->first_object;
	c->total_fm = h->first_filemark;
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
static bool seg_continues(struct vtl_cart *c, uint32_t seq, uint64_t obj, uint64_t fm)
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
				c->barcode, n, n, (unsigned long long)c->eod);
		}
		c->dir_dirty |= 1ull << m;
	}
	return VTL_OK;
}

/* Adds the segment in fd (already checked) to the table and counts it in the tape. */
static int cart_add_seg(struct vtl_cart *c, struct seg *s, int fd)
{
	struct fdref *f = calloc(1, sizeof *f);
	if (!f)
		return VTL_E_NOMEM;
	f->fd = fd;
	s->fd = f;
	c->segs[c->nseg++] = *s;
	c->nfd++;
	c->eod += s->n_obj;
	c->total_fm += s->n_fm;
	c->stored += s->data_end - SEG_HEADER_LEN;
	fd_trim(c, c->nseg - 1);
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
	size_t si = c->nseg; /* seg_scan works on the table entry */
	c->segs[si] = *s;
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
	struct seg *t = &c->segs[si];
	*s = *t;
	if (rc) {
		free(offs);
		return rc;
	}
	if (seg_continues(c, t->seq + 1, c->eod + t->n_obj, c->total_fm + t->n_fm)) {
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
	    lost_gap_ok(c->eod + t->n_obj, c->total_fm + t->n_fm, &nh) &&
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
	free(c->off);
	c->off = offs;
	c->offcap = cap;
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
	c->dirty = true; /* close must write the footer this segment lacks */
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
	    !lost_gap_ok(c->eod, c->total_fm, &nh))
		return rc;
	if ((rc = cart_add_lost(c, &nh, seq, next - 1, kind)))
		return rc;
	*resume = next;
	return VTL_OK;
}

/* Loads segments seq and up, continuing the tape as far as c holds it. */
static int cart_load_from(struct vtl_cart *c, uint32_t first)
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
		int rc = vtl_grow_to((void **)&c->segs, &c->segcap, c->nseg + 1, sizeof *c->segs);
		if (rc || fstat(fd, &st) != 0) {
			close(fd);
			return rc ? rc : VTL_E_IO;
		}
		uint64_t size = (uint64_t)st.st_size;
		enum seg_hdr hc = seg_header_check(c, fd, size, seq, c->eod, c->total_fm, &h);
		bool more = seg_files_end(c->pool, c->barcode, seq + 1) > seq + 1;
		if (hc == HDR_STALE && c->nseg && !crash_may(c, seq) && lost_gap_ok(c->eod, c->total_fm, &h)) {
			/* The segment before ends (with its footer) before this one starts: objects lost between. */
			uint32_t prev = c->segs[c->nseg - 1].seq;
			if ((rc = cart_add_lost(c, &h, prev, prev, VTL_DAMAGE_SHORT))) {
				close(fd);
				return rc;
			}
			if ((rc = vtl_grow_to((void **)&c->segs, &c->segcap, c->nseg + 1, sizeof *c->segs))) {
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

static int cart_load(struct vtl_cart *c)
{
	if (!c->p.follow)
		cut_marker_load(c);
	int rc = cart_load_from(c, 0);
	if (!rc)
		dmg_log(c);
	return rc;
}

int vtl_cart_open(struct vtl_pool *pool, const char *barcode, const struct vtl_cart_params *p,
		  struct vtl_cart **out)
{
	*out = NULL;
	if (vtl_barcode_check(barcode) || !p || (p->capacity && p->early_warning > p->capacity))
		return VTL_E_INVAL;
	int ex = vtl_cart_exists(pool, barcode);
	if (ex <= 0)
		return ex < 0 ? ex : VTL_E_NOTFOUND;
	struct vtl_cart *c = calloc(1, sizeof *c);
	if (!c)
		return VTL_E_NOMEM;
	c->pool = pool;
	snprintf(c->barcode, sizeof c->barcode, "%s", barcode);
	c->p = *p;
	if (p->follow)
		c->p.readonly = true;
	c->compress = p->compression;
	c->lockfd = -1;
	/* A follower reads beside the writer that holds the lock; it trusts only whole, checked records. */
	int rc = p->follow ? VTL_OK : cart_lock(pool, barcode, !c->p.readonly, &c->lockfd);
	if (!rc)
		rc = cart_load(c);
	if (!rc && !(c->ra = ra_create(c)))
		rc = VTL_E_NOMEM;
	if (!rc && (c->dir_dirty || c->cut_marker) && !c->p.readonly)
		rc = vtl_cart_sync(c);
	if (rc) {
		cart_free(c);
		return rc;
	}
	*out = c;
	return VTL_OK;
}

/* Takes segment si's records out of the totals and forgets its index: it is loaded again from scratch. */
static void seg_reset_view(struct vtl_cart *c, struct seg *s)
{
	c->eod -= s->n_obj;
	c->total_fm -= s->n_fm;
	c->stored -= s->data_end - SEG_HEADER_LEN;
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
	c->eod += t->n_obj - s->n_obj;
	c->total_fm += t->n_fm - s->n_fm;
	c->stored += t->data_end - s->data_end;
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
	free(c->off);
	c->off = NULL;
	c->offcap = 0;
}

int vtl_cart_refresh(struct vtl_cart *c, uint64_t *eod)
{
	if (!c || !c->p.follow)
		return VTL_E_INVAL;
	uint64_t before = c->eod;
	size_t si = c->nseg - 1;
	struct seg *s = &c->segs[si];
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
		free(c->off);
		c->off = NULL;
		c->offcap = 0;
		trailer = false;
	}
	if (!s->sealed && trailer && t.n_obj >= s->n_obj) {
		seg_now_sealed(c, s, &t);
	} else if (!s->sealed) {
		uint32_t n_obj = s->n_obj, n_fm = s->n_fm;
		uint64_t data_end = s->data_end;
		if ((rc = seg_scan(c, si, fd, size, true, true, 0, &c->off, &c->offcap)))
			return rc;
		c->eod += s->n_obj - n_obj;
		c->total_fm += s->n_fm - n_fm;
		c->stored += s->data_end - data_end;
		if (seg_continues(c, s->seq + 1, c->eod, c->total_fm)) {
			/* The writer moved on to a new segment before this one's footer landed: keep the index in memory. */
			s->sealed = true;
			s->mem_off = c->off ? c->off : malloc(sizeof *s->mem_off);
			c->off = NULL;
			c->offcap = 0;
			if (!s->mem_off)
				return VTL_E_NOMEM;
		}
	}
	if (s->sealed && (rc = cart_load_from(c, s->seq + 1)) != VTL_OK && rc != VTL_E_NOTFOUND)
		return rc;
	if (c->eod != before) {
		/* The cursor may sit at the end of a segment that now has a successor. */
		c->cur_valid = false;
	}
	if (eod)
		*eod = c->eod;
	return VTL_OK;
}

/* Makes segment files created, removed or renamed since the last sync durable in their folders. */
static int cart_sync_dirs(struct vtl_cart *c)
{
	for (unsigned m = 0; c->dir_dirty && m < c->pool->n; m++) {
		if (!(c->dir_dirty & (1ull << m)))
			continue;
		char dir[PATH_MAX];
		if (pool_cart_dir(c->pool, m, c->barcode, dir, sizeof dir) || fsync_path(dir))
			return VTL_E_IO;
		c->dir_dirty &= ~(1ull << m);
	}
	return VTL_OK;
}

int vtl_cart_sync(struct vtl_cart *c)
{
	if (c->p.readonly)
		return VTL_OK;
	if (c->fault)
		return c->fault;
	int rc = seal_wait(c);
	if (rc)
		return cart_fence(c, rc);
	if (c->need_sync && c->nseg) {
		int fd = seg_fd(c, c->nseg - 1);
		if (fd < 0 || fdatasync(fd) != 0)
			return cart_fence(c, VTL_E_IO);
		c->need_sync = false;
		/*
		 * Say in the header, in place (the next fdatasync or the kernel's
		 * writeback carries it), what an earlier sync made durable, so that
		 * an open tells damage there from a crash's torn tail. It lags one
		 * sync behind: the mark never vouches for more than a sync the host
		 * was already told about.
		 */
		struct seg *s = last_seg(c);
		if (!s->sealed) {
			/*
			 * A full file system refusing even these 16 bytes in place
			 * costs nothing durable (the records are synced): the mark
			 * stays lower, which only makes an open take more for a tail.
			 */
			if (s->mark_next > s->synced_end && (rc = seg_mark_write(c, c->nseg - 1, s->mark_next)) &&
			    !errno_is_full())
				return cart_fence(c, rc);
			s->mark_next = s->data_end;
		}
	}
	c->unsynced = 0;
	rc = cart_sync_dirs(c);
	/* The cut is durable now, and so is the lowered sync mark it wrote: the marker may go. */
	if (!rc && c->cut_marker && !c->need_sync)
		rc = cut_marker_clear(c);
	return cart_fence(c, rc);
}

int vtl_cart_close(struct vtl_cart *c)
{
	if (!c)
		return VTL_E_INVAL;
	int rc = VTL_OK;
	if (c->fault) {
		/* Nothing more is written over what may be lost: the next open's repair finds the end. */
		rc = c->fault;
		(void)seal_wait(c); /* its error is the fault's, already returned */
	} else if (!c->p.readonly) {
		ra_reset(c->ra);
		if (c->dirty && c->nseg && !last_seg(c)->sealed)
			rc = seg_seal_last(c, true, false);
		int rc2 = vtl_cart_sync(c);
		if (!rc)
			rc = rc2;
	}
	cart_free(c);
	return rc;
}

/* ---- position ---- */

static void pos_set(struct vtl_cart *c, uint64_t obj)
{
	c->pos = obj;
	c->cur_valid = false;
	c->seq_run = 0;
	ra_reset(c->ra);
}

/* Makes (cur_seg, cur_off) point at pos (< eod). */
static int cursor_find(struct vtl_cart *c)
{
	if (c->cur_valid)
		return VTL_OK;
	size_t si = cart_seg_of(c, c->pos);
	uint64_t off;
	int rc = obj_offset(c, si, c->pos, &off);
	if (rc)
		return rc;
	c->cur_seg = si;
	c->cur_off = off;
	c->cur_valid = true;
	return VTL_OK;
}

/* Moves the cursor past a record of rec_len bytes that ended at object pos. */
static void cursor_advance(struct vtl_cart *c, uint64_t rec_len)
{
	c->cur_off += rec_len;
	while (c->cur_seg + 1 < c->nseg && c->cur_off >= c->segs[c->cur_seg].data_end) {
		c->cur_seg++;
		c->cur_off = SEG_HEADER_LEN;
		if (c->segs[c->cur_seg].lost) {
			c->cur_valid = false; /* no record to point at: the next read reports the damage */
			return;
		}
	}
}

void vtl_cart_position(struct vtl_cart *c, struct vtl_position *pos)
{
	memset(pos, 0, sizeof *pos);
	pos->object = c->pos;
	pos->eod = c->eod;
	pos->bot = c->pos == 0;
	pos->at_eod = c->pos == c->eod;
	pos->stored_bytes = c->stored;
	if (fm_before(c, c->pos, &pos->file))
		pos->file = 0; /* unreadable filemark list: a later read reports the medium error */
	pos->early_warning = c->p.capacity && c->stored >= c->p.capacity - c->p.early_warning;
}

/*
 * A follower that reached what it sees waits, through the opener's more hook,
 * until the writer has appended past object obj or has finished (obj
 * UINT64_MAX: finished). True when the tape now holds obj.
 */
static bool follow_until(struct vtl_cart *c, uint64_t obj)
{
	if (!c->p.follow || !c->p.more)
		return c->eod > obj;
	while (c->eod <= obj) {
		if (vtl_cart_refresh(c, NULL) != VTL_OK)
			break;
		if (c->eod > obj)
			break;
		if (c->p.more(c->p.more_arg) <= 0) {
			/* Finished: whatever it appended last is on disk now. A failed refresh
			 * ends the wait as the one above does: eod stays what was last seen. */
			if (vtl_cart_refresh(c, NULL) != VTL_OK)
				break;
			break;
		}
	}
	return c->eod > obj;
}

int vtl_cart_locate(struct vtl_cart *c, uint64_t obj)
{
	if (obj > c->eod)
		follow_until(c, obj - 1);
	if (obj > c->eod) {
		pos_set(c, c->eod);
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
	pos_set(c, c->eod);
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
	int rc = fm_before(c, c->pos, &k);
	if (rc)
		return rc;
	if (count > 0) {
		uint64_t n = (uint64_t)count, limit = c->eod, fm = UINT64_MAX;
		uint64_t bad = dmg_next(c, c->pos);
		if (k < c->total_fm) {
			rc = fm_object(c, k, &fm);
			if (rc == VTL_E_MEDIUM && bad != UINT64_MAX)
				fm = UINT64_MAX; /* the next filemark is in the damage: the space stops there first */
			else if (rc)
				return rc;
			limit = fm == UINT64_MAX ? c->eod : fm;
		}
		if (bad < limit && bad - c->pos < n)
			return space_damaged(c, bad, n - (bad - c->pos), r);
		uint64_t avail = limit - c->pos;
		if (n <= avail) {
			pos_set(c, c->pos + n);
			return VTL_OK;
		}
		r->residual = n - avail;
		if (fm != UINT64_MAX) {
			r->stop = VTL_SPACE_FILEMARK;
			pos_set(c, fm + 1);
		} else {
			r->stop = VTL_SPACE_EOD;
			pos_set(c, c->eod);
		}
		return VTL_OK;
	}
	uint64_t n = (uint64_t)(-(count + 1)) + 1, floor = 0, fm = UINT64_MAX;
	uint64_t bad = dmg_prev(c, c->pos);
	if (k > 0) {
		rc = fm_object(c, k - 1, &fm);
		if (rc == VTL_E_MEDIUM && bad != UINT64_MAX)
			fm = UINT64_MAX;
		else if (rc)
			return rc;
		floor = fm == UINT64_MAX ? 0 : fm + 1;
	}
	if (bad != UINT64_MAX && bad >= floor && c->pos - bad <= n)
		return space_damaged(c, bad + 1, n - (c->pos - bad - 1), r);
	uint64_t avail = c->pos - floor;
	if (n <= avail) {
		pos_set(c, c->pos - n);
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
	int rc = fm_before(c, c->pos, &k);
	if (rc)
		return rc;
	if (count > 0) {
		uint64_t n = (uint64_t)count, bad = dmg_next(c, c->pos), before;
		if (bad != UINT64_MAX) {
			/* The filemarks passed before the damage count as spaced. */
			rc = n <= c->total_fm - k ? fm_object(c, k + n - 1, &obj) : VTL_OK;
			if (rc == VTL_E_MEDIUM || n > c->total_fm - k || obj >= bad) {
				if ((rc = fm_before(c, bad, &before)))
					return rc;
				return space_damaged(c, bad, n - (before - k), r);
			}
			if (rc)
				return rc;
		}
		if (n <= c->total_fm - k) {
			if ((rc = fm_object(c, k + n - 1, &obj)))
				return rc;
			pos_set(c, obj + 1);
			return VTL_OK;
		}
		r->stop = VTL_SPACE_EOD;
		r->residual = n - (c->total_fm - k);
		pos_set(c, c->eod);
		return VTL_OK;
	}
	uint64_t n = (uint64_t)(-(count + 1)) + 1, bad = dmg_prev(c, c->pos), after;
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

/* ---- reading ---- */

int record_payload_decode(const struct rec_header *h, const unsigned char *stored, unsigned char *dst,
			  size_t dst_len)
{
	if (crc32c(0, stored, h->stored_len) != h->payload_crc)
		return VTL_E_MEDIUM;
	if (!(h->flags & REC_FLAG_LZ4)) {
		memcpy(dst, stored, dst_len < h->length ? dst_len : h->length);
		return VTL_OK;
	}
	if (dst_len < h->length)
		return VTL_E_INVAL;
	return lz4_record_decompress(stored, h->stored_len, dst, h->length) ? VTL_E_MEDIUM : VTL_OK;
}

/* Finds and checks the header of the record of object pos: VTL_E_MEDIUM when it is not there. */
static int cursor_header(struct vtl_cart *c, int *fd, struct rec_header *h)
{
	int rc = cursor_find(c);
	if (rc)
		return rc == VTL_E_CORRUPT ? VTL_E_MEDIUM : rc;
	*fd = seg_fd(c, c->cur_seg);
	if (*fd < 0)
		return VTL_E_IO;
	unsigned char hb[REC_HEADER_LEN];
	rc = read_full(*fd, hb, sizeof hb, c->cur_off);
	if (rc == VTL_E_CORRUPT || (!rc && (rec_header_decode(hb, h) || h->object != c->pos ||
					     (h->type != REC_DATA && h->type != REC_FILEMARK))))
		return VTL_E_MEDIUM;
	return rc;
}

/* Reads the record at the cursor, which must be object pos. */
static int read_direct(struct vtl_cart *c, void *buf, size_t buflen, struct vtl_read_result *r,
		       uint64_t *rec_len)
{
	int fd;
	struct rec_header h;
	int rc = cursor_header(c, &fd, &h);
	size_t si = rc == VTL_E_MEDIUM ? cart_seg_of(c, c->pos) : 0;
	if (rc == VTL_E_MEDIUM && c->segs[si].sealed && !c->segs[si].mem_off && seg_rebuild(c, si) == VTL_OK) {
		/* The footer index pointed at the wrong place; the records themselves are fine. */
		c->cur_valid = false;
		rc = cursor_header(c, &fd, &h);
	}
	if (rc)
		return rc;
	*rec_len = REC_HEADER_LEN + (uint64_t)h.stored_len;
	r->object = c->pos;
	if (h.type == REC_FILEMARK) {
		r->type = VTL_OBJ_FILEMARK;
		return VTL_OK;
	}
	r->type = VTL_OBJ_DATA;
	r->length = h.length;
	r->copied = (uint32_t)(buflen < h.length ? buflen : h.length);
	uint64_t poff = c->cur_off + REC_HEADER_LEN;
	bool whole = buflen >= h.length;
	if (!(h.flags & REC_FLAG_LZ4) && whole) {
		/* The common case: straight into the caller's buffer, checked there. */
		rc = read_full(fd, buf, h.stored_len, poff);
		if (rc)
			return rc == VTL_E_CORRUPT ? VTL_E_MEDIUM : rc;
		return crc32c(0, buf, h.stored_len) == h.payload_crc ? VTL_OK : VTL_E_MEDIUM;
	}
	if ((rc = scratch_need(&c->scratch, &c->scratch_cap, h.stored_len)))
		return rc;
	rc = read_full(fd, c->scratch, h.stored_len, poff);
	if (rc)
		return rc == VTL_E_CORRUPT ? VTL_E_MEDIUM : rc;
	if (!(h.flags & REC_FLAG_LZ4) || whole)
		return record_payload_decode(&h, c->scratch, buf, buflen);
	if ((rc = scratch_need(&c->scratch2, &c->scratch2_cap, h.length)))
		return rc;
	rc = record_payload_decode(&h, c->scratch, c->scratch2, h.length);
	if (!rc)
		memcpy(buf, c->scratch2, r->copied);
	return rc;
}

/* Spaces once over what the tape holds; a follower stopped by EOD waits for more and spaces again. */
static int space_following(struct vtl_cart *c, int64_t count, struct vtl_space_result *r,
			   int (*once)(struct vtl_cart *, int64_t, struct vtl_space_result *))
{
	uint64_t from = c->pos;
	for (;;) {
		int rc = once(c, count, r);
		if (rc || r->stop != VTL_SPACE_EOD || !follow_until(c, c->eod))
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

int vtl_cart_read(struct vtl_cart *c, void *buf, size_t buflen, struct vtl_read_result *r)
{
	memset(r, 0, sizeof *r);
	r->object = c->pos;
	if (c->pos >= c->eod && !follow_until(c, c->pos)) {
		r->type = VTL_OBJ_EOD;
		return VTL_OK;
	}
	bool sequential = c->seq_run > 0 && c->seq_next == c->pos;
	c->seq_run = sequential ? c->seq_run + 1 : 1;
	if (ra_active(c->ra)) {
		int served = ra_read(c->ra, c->pos, buf, buflen, r);
		if (served) {
			c->st.readahead_hits++;
			c->cur_valid = false;
			c->pos++;
			c->seq_next = c->pos;
			if (r->type == VTL_OBJ_DATA) {
				c->st.read_bytes += r->copied;
			}
			return VTL_OK;
		}
	}
	uint64_t rec_len = 0;
	int rc = read_direct(c, buf, buflen, r, &rec_len);
	if (rc) {
		r->object = c->pos;
		c->seq_run = 0;
		ra_reset(c->ra);
		return rc;
	}
	c->st.readahead_misses += ra_active(c->ra);
	if (r->type == VTL_OBJ_DATA) {
		c->st.read_bytes += r->copied;
		c->st.read_stored += rec_len - REC_HEADER_LEN;
	}
	c->pos++;
	cursor_advance(c, rec_len);
	c->seq_next = c->pos;
	/* Two reads in a row are a stream: start reading ahead of it. */
	if (c->seq_run >= 2 && !ra_active(c->ra) && c->pos < c->eod && !c->ndmg)
		ra_start(c->ra, c->pos);
	return VTL_OK;
}

/* ---- writing ---- */

/* Discards every object from obj on. */
static int truncate_at(struct vtl_cart *c, uint64_t obj)
{
	if (obj >= c->eod)
		return VTL_OK;
	if (c->p.worm)
		return VTL_E_WORM;
	ra_reset(c->ra);
	int rc = seal_wait(c);
	if (rc)
		return rc;
	size_t si = cart_seg_of(c, obj);
	if (c->segs[si].lost && obj == c->segs[si].first_obj && si > 0)
		si--; /* a cut at the start of a lost range: the segment before it is cut at its end */
	if (c->segs[si].lost)
		return VTL_E_MEDIUM; /* inside objects no file holds: there is nowhere to cut */
	if (obj < c->segs[si].first_obj + c->segs[si].n_obj) {
		uint32_t o;
		if ((rc = cart_offsets(c, si, (uint32_t)(obj - c->segs[si].first_obj), 1, &o)))
			return rc == VTL_E_CORRUPT ? VTL_E_MEDIUM : rc;
		if (o == 0)
			return VTL_E_MEDIUM; /* a damaged record: where it starts is not known */
	}
	/* A crash in the middle of the cut must not look like damage at the next open. */
	if ((rc = cut_marker_set(c, c->segs[si].seq)))
		return rc;
	/* Highest segment first, so that a crash leaves a shorter but consistent tape. */
	while (c->nseg - 1 > si) {
		struct seg *s = last_seg(c);
		char path[PATH_MAX];
		if (!s->lost) {
			if (pool_seg_path(c->pool, c->barcode, s->seq, path, sizeof path) || unlink(path) != 0)
				return VTL_E_IO;
			pool_space_give(c->pool, s->member, s->acct);
			c->dir_dirty |= 1ull << s->member;
		}
		for (uint32_t q = s->lost_last + 1; s->lost && s->lost_files && q-- > s->seq;) {
			/* What is left of its files (an unreadable header) goes with it. */
			struct stat st;
			unsigned m = vtl_pool_member_for(c->pool, c->barcode, q);
			if (pool_seg_path(c->pool, c->barcode, q, path, sizeof path) || stat(path, &st) != 0)
				continue;
			if (unlink(path) != 0)
				return VTL_E_IO;
			pool_space_give(c->pool, m, (uint64_t)st.st_size);
			c->dir_dirty |= 1ull << m;
		}
		c->eod -= s->n_obj;
		c->total_fm -= s->n_fm;
		c->stored -= s->data_end - SEG_HEADER_LEN;
		seg_forget(c, s);
		c->nseg--;
	}
	/*
	 * The removals must be on disk before the cut: a cut segment followed by
	 * the old later segments would not be a tape.
	 */
	if ((rc = cart_sync_dirs(c)))
		return rc;
	struct seg *s = last_seg(c);
	if (s->sealed && (rc = seg_unseal(c, si)))
		return rc;
	uint32_t rel = (uint32_t)(obj - s->first_obj);
	uint64_t new_end = rel < s->n_obj ? c->off[rel] : s->data_end;
	int fd = seg_fd(c, si);
	if (fd < 0 || ftruncate(fd, (off_t)new_end) != 0)
		return VTL_E_IO;
	/* Records written from here on are not synced yet: the mark must not vouch for them. */
	if (s->synced_end > new_end && (rc = seg_mark_write(c, si, new_end)))
		return rc;
	if (s->mark_next > new_end)
		s->mark_next = new_end;
	dmg_cut(c, obj);
	uint32_t fm_keep = 0;
	while (fm_keep < s->n_fm && s->fm[fm_keep] < rel)
		fm_keep++;
	c->eod -= s->n_obj - rel;
	c->total_fm -= s->n_fm - fm_keep;
	c->stored -= s->data_end - new_end;
	s->n_obj = rel;
	s->n_fm = fm_keep;
	s->data_end = new_end;
	uint64_t acct = new_end + footer_size(rel, fm_keep);
	if (s->acct > acct) {
		pool_space_give(c->pool, s->member, s->acct - acct);
		s->acct = acct;
	}
	c->cur_valid = false;
	c->dirty = true;
	c->need_sync = true;
	return VTL_OK;
}

/* Room for rec bytes on the tape before EOD (obj is where the write starts). */
static int capacity_check(struct vtl_cart *c, uint64_t rec)
{
	if (!c->p.capacity)
		return VTL_OK;
	uint64_t before;
	int rc = stored_before(c, c->pos, &before);
	if (rc)
		return rc;
	return before + rec > c->p.capacity ? VTL_E_EOM : VTL_OK;
}

/* Makes the last segment open and ready for a record of rec bytes. */
static int prepare_append(struct vtl_cart *c, uint64_t rec)
{
	struct seg *s = last_seg(c);
	int rc;
	if (s->sealed && (rc = seg_unseal(c, c->nseg - 1)))
		return rc;
	s = last_seg(c);
	if (s->n_obj > 0 && s->data_end - SEG_HEADER_LEN + rec > c->pool->segment_size) {
		if ((rc = seg_seal_last(c, false, true)))
			return rc;
		if ((rc = seg_append_new(c)))
			return rc;
	}
	return VTL_OK;
}

static int append_record(struct vtl_cart *c, struct rec_header *h, const void *payload)
{
	uint64_t rec = REC_HEADER_LEN + (uint64_t)h->stored_len;
	struct seg *s = last_seg(c);
	int fd = seg_fd(c, c->nseg - 1);
	if (fd < 0)
		return VTL_E_IO;
	uint64_t take = rec + 4 + (h->type == REC_FILEMARK ? 4 : 0); /* the record and its index entries */
	int rc = pool_space_take(c->pool, s->member, take);
	if (rc)
		return rc;
	size_t fmcap = s->fm_cap;
	if ((rc = vtl_grow_to((void **)&c->off, &c->offcap, s->n_obj + 1, sizeof *c->off)) ||
	    (h->type == REC_FILEMARK && (rc = vtl_grow_to((void **)&s->fm, &fmcap, s->n_fm + 1, sizeof *s->fm)))) {
		pool_space_give(c->pool, s->member, take);
		return rc;
	}
	s->fm_cap = (uint32_t)fmcap;
	h->object = c->eod;
	unsigned char hb[REC_HEADER_LEN];
	rec_header_encode(h, hb);
	struct iovec iov[2] = {{hb, sizeof hb}, {(void *)payload, h->stored_len}};
	rc = write_fullv(fd, iov, h->stored_len ? 2 : 1, s->data_end);
	if (rc) {
		bool full = errno_is_full();
		/* Nothing half-written may stay behind the last whole record. */
		if (ftruncate(fd, (off_t)s->data_end) != 0)
			return cart_fence(c, VTL_E_IO);
		pool_space_give(c->pool, s->member, take);
		return full ? VTL_E_POOL_FULL : cart_fence(c, VTL_E_IO);
	}
	c->off[s->n_obj] = (uint32_t)s->data_end;
	if (h->type == REC_FILEMARK) {
		s->fm[s->n_fm++] = s->n_obj;
		c->total_fm++;
	}
	s->n_obj++;
	s->data_end += rec;
	s->acct += take;
	c->eod++;
	c->pos = c->eod;
	c->stored += rec;
	c->cur_valid = false;
	c->dirty = true;
	c->need_sync = true;
	return VTL_OK;
}

static int write_prologue(struct vtl_cart *c, uint64_t rec)
{
	if (c->p.readonly)
		return VTL_E_READONLY;
	if (c->fault)
		return c->fault;
	if (c->p.worm && c->pos < c->eod)
		return VTL_E_WORM;
	int rc = capacity_check(c, rec);
	if (rc)
		return rc;
	c->seq_run = 0;
	ra_reset(c->ra);
	if ((rc = truncate_at(c, c->pos)))
		return rc;
	return prepare_append(c, rec);
}

static int ew_status(struct vtl_cart *c)
{
	return c->p.capacity && c->stored >= c->p.capacity - c->p.early_warning ? VTL_W_EARLY_WARNING : VTL_OK;
}

int vtl_cart_write_block(struct vtl_cart *c, const void *buf, size_t len)
{
	if (len == 0 || len > VTL_BLOCK_MAX || !buf)
		return VTL_E_INVAL;
	struct rec_header h = {.type = REC_DATA, .length = (uint32_t)len};
	const void *payload = buf;
	h.stored_len = (uint32_t)len;
	if (c->compress && !c->p.readonly) {
		int rc = scratch_need(&c->scratch, &c->scratch_cap, lz4_record_scratch(len));
		if (rc)
			return rc;
		size_t n = lz4_record_compress(c->pool->workers, buf, len, c->scratch, c->pool->lz4_accel,
					       &c->lz4_slow);
		if (n) {
			payload = c->scratch;
			h.stored_len = (uint32_t)n;
			h.flags = REC_FLAG_LZ4;
		}
	}
	h.payload_crc = crc32c(0, payload, h.stored_len);
	int rc = write_prologue(c, REC_HEADER_LEN + (uint64_t)h.stored_len);
	if (rc)
		return rc;
	if ((rc = append_record(c, &h, payload)))
		return rc;
	c->st.written_bytes += len;
	c->unsynced += len;
	c->st.written_stored += h.stored_len;
	return ew_status(c);
}

int vtl_cart_append_stored(struct vtl_cart *c, const void *rec, size_t len)
{
	struct rec_header h;
	const unsigned char *p = rec;
	if (c->p.readonly)
		return VTL_E_READONLY;
	if (len < REC_HEADER_LEN || rec_header_decode(p, &h) != 0 || (h.type != REC_DATA && h.type != REC_FILEMARK) ||
	    len != REC_HEADER_LEN + (size_t)h.stored_len || h.object != c->eod || c->pos != c->eod ||
	    crc32c(0, p + REC_HEADER_LEN, h.stored_len) != h.payload_crc)
		return VTL_E_CORRUPT;
	int rc = write_prologue(c, len);
	if (rc)
		return rc;
	if ((rc = append_record(c, &h, p + REC_HEADER_LEN)))
		return rc;
	if (h.type == REC_DATA) {
		c->st.written_bytes += h.length;
		c->unsynced += h.length;
		c->st.written_stored += h.stored_len;
	}
	return ew_status(c);
}

int vtl_cart_write_filemarks(struct vtl_cart *c, uint32_t count)
{
	if (count == 0)
		return c->p.readonly ? VTL_E_READONLY : VTL_OK;
	int rc = write_prologue(c, (uint64_t)count * REC_HEADER_LEN);
	if (rc)
		return rc;
	for (uint32_t i = 0; i < count; i++) {
		struct rec_header h = {.type = REC_FILEMARK, .payload_crc = crc32c(0, NULL, 0)};
		if (i && (rc = prepare_append(c, REC_HEADER_LEN)))
			return rc;
		if ((rc = append_record(c, &h, NULL)))
			return rc;
	}
	return ew_status(c);
}

int vtl_cart_erase(struct vtl_cart *c)
{
	if (c->p.readonly)
		return VTL_E_READONLY;
	if (c->fault)
		return c->fault;
	c->seq_run = 0;
	uint64_t at = c->pos;
	int rc = truncate_at(c, at);
	c->pos = at;
	return rc;
}

int vtl_cart_set_capacity(struct vtl_cart *c, uint64_t capacity, uint64_t early_warning)
{
	if (c->pos != 0 || (capacity && early_warning > capacity))
		return VTL_E_INVAL;
	if (c->p.readonly)
		return VTL_E_READONLY;
	c->p.capacity = capacity;
	c->p.early_warning = capacity ? early_warning : 0;
	return VTL_OK;
}

void vtl_cart_set_compression(struct vtl_cart *c, bool on)
{
	c->compress = on;
}

void vtl_cart_stats(const struct vtl_cart *c, struct vtl_cart_stats *st)
{
	*st = c->st;
	st->unsynced_bytes = c->unsynced;
	st->readahead_ready = st->readahead_limit = 0;
	if (c->ra && ra_active(c->ra))
		ra_buffered(c->ra, &st->readahead_ready, &st->readahead_limit);
}

const char *vtl_cart_barcode(const struct vtl_cart *c)
{
	return c->barcode;
}

uint64_t vtl_cart_filemarks(const struct vtl_cart *c)
{
	return c->total_fm;
}

uint64_t vtl_cart_stream_size(const struct vtl_cart *c)
{
	uint64_t sum = 0;
	for (size_t i = 0; i < c->nseg; i++)
		sum += c->segs[i].data_end - SEG_HEADER_LEN;
	return sum;
}

int vtl_cart_stream_read(struct vtl_cart *c, uint64_t off, void *buf, size_t len)
{
	if (c->ndmg)
		return VTL_E_MEDIUM; /* a copy of a damaged tape would not hold every record */
	size_t si = 0;
	uint64_t base = 0;
	/* The segment holding off: segments are few (a tape of 18 TB in 256 MiB segments has 70,000 at most). */
	while (si < c->nseg && off >= base + (c->segs[si].data_end - SEG_HEADER_LEN)) {
		base += c->segs[si].data_end - SEG_HEADER_LEN;
		si++;
	}
	unsigned char *p = buf;
	while (len) {
		if (si >= c->nseg)
			return VTL_E_INVAL;
		const struct seg *s = &c->segs[si];
		uint64_t in = off - base, avail = s->data_end - SEG_HEADER_LEN - in;
		size_t take = len < avail ? len : (size_t)avail;
		char path[PATH_MAX];
		if (pool_seg_path(c->pool, c->barcode, s->seq, path, sizeof path))
			return VTL_E_INVAL;
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return VTL_E_IO;
		int rc = read_full(fd, p, take, SEG_HEADER_LEN + in);
		close(fd);
		if (rc)
			return rc;
		p += take;
		off += take;
		len -= take;
		base += s->data_end - SEG_HEADER_LEN;
		si++;
	}
	return VTL_OK;
}

/* ---- pool inventory ---- */

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int vtl_pool_list_cartridges(struct vtl_pool *pool, int (*fn)(const char *barcode, void *arg), void *arg)
{
	char **names = NULL;
	size_t n = 0, cap = 0;
	int rc = VTL_OK;
	for (unsigned m = 0; !rc && m < pool->n; m++) {
		DIR *d = opendir(pool->m[m].path);
		if (!d) {
			rc = VTL_E_IO;
			break;
		}
		struct dirent *e;
		while (!rc && (e = readdir(d))) {
			/* Only on its home member, so each cartridge is named once. */
			if (vtl_barcode_check(e->d_name) || vtl_pool_member_for(pool, e->d_name, 0) != m ||
			    vtl_cart_exists(pool, e->d_name) != 1)
				continue;
			if ((rc = vtl_grow_to((void **)&names, &cap, n + 1, sizeof *names)))
				break;
			if (!(names[n] = strdup(e->d_name)))
				rc = VTL_E_NOMEM;
			else
				n++;
		}
		closedir(d);
	}
	if (!rc && n)
		qsort(names, n, sizeof *names, cmp_names);
	for (size_t i = 0; !rc && i < n; i++)
		rc = fn(names[i], arg);
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return rc;
}

int vtl_cart_info(struct vtl_pool *pool, const char *barcode, struct vtl_cart_info *out)
{
	struct vtl_cart_params p = {.readonly = true};
	struct vtl_cart *c;
	int rc = vtl_cart_open(pool, barcode, &p, &c);
	if (rc)
		return rc;
	memset(out, 0, sizeof *out);
	out->eod = c->eod;
	out->filemarks = c->total_fm;
	out->stored_bytes = c->stored;
	for (size_t i = 0; i < c->nseg; i++)
		out->segments += !c->segs[i].lost;
	out->damaged = (uint32_t)vtl_cart_damage(c, out->damage, VTL_DAMAGE_INFO_MAX);
	for (size_t i = 0; i < c->ndmg; i++)
		out->damaged_objects += c->dmg[i].count;
	return vtl_cart_close(c);
}
