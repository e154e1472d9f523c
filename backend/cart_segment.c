/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Segment files: creating one, sealing the last (records made durable before
 * the footer that indexes them, on a worker at a segment change), and
 * reopening a sealed one for appending. Owns struct cart_write's seal (the
 * seal in flight) and the open segment's in-memory index while it is sealed.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "backend/internal.h"
#include "backend/workers.h"
#include "common/clock.h"
#include "common/crc32c.h"
#include "common/grow.h"
#include "common/vtl_error.h"

/* Creates segment file seq with its header; the caller adds it to the table. */
int seg_file_create(struct vtl_pool *pool, const char *barcode, uint32_t seq, uint64_t first_obj,
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
int seg_append_new(struct vtl_cart *c)
{
	int rc = vtl_grow_to((void **)&c->tape.segs, &c->tape.segcap, c->tape.nseg + 1, sizeof *c->tape.segs);
	if (rc)
		return rc;
	uint32_t seq = c->tape.nseg ? last_seg(c)->seq + 1 : 0;
	int fd;
	rc = seg_file_create(c->pool, c->barcode, seq, c->tape.eod, c->tape.total_fm, &fd, &c->wr.dir_dirty);
	if (rc)
		return rc;
	struct fdref *f = fdref_new(c, fd);
	if (!f) {
		close(fd);
		return VTL_E_NOMEM;
	}
	struct seg *s = &c->tape.segs[c->tape.nseg++];
	memset(s, 0, sizeof *s);
	s->seq = seq;
	s->member = vtl_pool_member_for(c->pool, c->barcode, seq);
	s->first_obj = c->tape.eod;
	s->first_fm = c->tape.total_fm;
	s->data_end = SEG_HEADER_LEN;
	s->acct = SEG_HEADER_LEN + FOOTER_FIXED;
	s->fd = f;
	c->tape.nfd++;
	fd_trim(c, c->tape.nseg - 1);
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
		h.object = c->tape.eod;
		h.payload_crc = crc32c(0, NULL, 0);
		rec_header_encode(&h, p);
		p += REC_HEADER_LEN;
	}
	*fm_off = at + (uint64_t)(p - buf);
	unsigned char *fp = p + REC_HEADER_LEN;
	for (uint32_t i = 0; i < s->n_fm; i++)
		put_le32(fp + 4ull * i, s->fm[i]);
	h = (struct rec_header){.type = REC_FMARKS, .stored_len = (uint32_t)fmb, .length = (uint32_t)fmb,
				.object = c->tape.eod, .payload_crc = crc32c(0, fp, fmb)};
	rec_header_encode(&h, p);
	p = fp + fmb;
	*index_off = at + (uint64_t)(p - buf);
	unsigned char *ip = p + REC_HEADER_LEN;
	bool damaged = false;
	for (uint32_t i = 0; i < s->n_obj; i++) {
		put_le32(ip + 4ull * i, c->tape.off[i]);
		damaged |= c->tape.off[i] == 0; /* a damaged object: the flag lets the next open list it */
	}
	h = (struct rec_header){.type = REC_INDEX, .stored_len = (uint32_t)ixb, .length = (uint32_t)ixb,
				.object = c->tape.eod, .payload_crc = crc32c(0, ip, ixb)};
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
	/* The zeros a direct append left past the records (cart_direct.c) must not follow the trailer. */
	if (ftruncate(fd, (off_t)at) != 0 || fdatasync(fd) != 0)
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
int seal_wait(struct vtl_cart *c)
{
	struct seal_job *sj = c->wr.seal;
	if (!sj)
		return VTL_OK;
	pthread_mutex_lock(&sj->lock);
	while (!sj->done)
		pthread_cond_wait(&sj->cond, &sj->lock);
	pthread_mutex_unlock(&sj->lock);
	int rc = sj->rc;
	for (size_t i = 0; !rc && i < c->tape.nseg; i++) {
		struct seg *s = &c->tape.segs[i];
		if (s->seq == sj->seq && s->sealed && s->mem_off && s->index_off) {
			free(s->mem_off);
			s->mem_off = NULL;
		}
	}
	pthread_mutex_destroy(&sj->lock);
	pthread_cond_destroy(&sj->cond);
	free(sj->footer);
	free(sj);
	c->wr.seal = NULL;
	return rc;
}

/*
 * Seals the last segment. Synchronous (close) or, at a segment change, on a
 * worker: the records' fdatasync takes as long as the disk needs to catch up,
 * and the host should keep the disk busy meanwhile. Until the worker is done
 * the segment is read through a copy of its index in memory.
 */
int seg_seal_last(struct vtl_cart *c, bool with_eod, bool async)
{
	int rc = seal_wait(c);
	if (rc)
		return cart_fence(c, rc);
	struct seg *s = last_seg(c);
	struct fdref *f = cart_seg_fd(c, c->tape.nseg - 1);
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
		memcpy(copy, c->tape.off, 4ull * s->n_obj);
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
		c->wr.seal = sj;
		workers_submit(c->pool->workers, &sj->job);
	}
	s->sealed = true;
	s->eod_rec = with_eod;
	s->dmg_flag = false;
	for (uint32_t i = 0; i < s->n_obj && !s->dmg_flag; i++)
		s->dmg_flag = c->tape.off[i] == 0;
	s->fm_off = fm_off;
	s->index_off = index_off;
	return VTL_OK;
}

/*
 * Reads the INDEX footer record of sealed segment s (in fd) into out, checked
 * against its CRC; entries of 0 (damaged objects) only with s->dmg_flag.
 */
int index_read(const struct seg *s, int fd, uint32_t *out)
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

/* Reads the INDEX footer record of sealed segment si into c->tape.off. */
static int seg_read_index(struct vtl_cart *c, size_t si)
{
	int fd = seg_fd(c, si);
	if (fd < 0)
		return VTL_E_IO;
	return index_read(&c->tape.segs[si], fd, c->tape.off);
}

/* Reopens the sealed segment si for appending: its index comes back into memory, its footer goes. */
int seg_unseal(struct vtl_cart *c, size_t si)
{
	struct seg *s = &c->tape.segs[si];
	if (s->lost)
		return VTL_E_MEDIUM;
	int rc = seg_load_fm(c, si);
	if (rc)
		return rc;
	if ((rc = vtl_grow_to((void **)&c->tape.off, &c->tape.offcap, s->n_obj + 1, sizeof *c->tape.off)))
		return rc;
	rc = s->mem_off ? VTL_OK : seg_read_index(c, si);
	if (rc == VTL_E_CORRUPT)
		rc = seg_rebuild(c, si);
	if (rc)
		return rc;
	if (s->mem_off) {
		memcpy(c->tape.off, s->mem_off, 4ull * s->n_obj);
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
	c->wr.need_sync = true;
	/* Its records were durable under the footer: the crash walk may tell damage among them from a tear. */
	return s->synced_end == s->data_end ? VTL_OK : seg_mark_write(c, si, s->data_end);
}

void seg_forget(struct vtl_cart *c, struct seg *s)
{
	seg_close_fd(c, s);
	free(s->fm);
	s->fm = NULL;
	free(s->mem_off);
	s->mem_off = NULL;
}
