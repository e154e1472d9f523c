/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Durability: vtl_cart_sync, the sync mark and the write fence. A sync makes
 * the open segment's records and the folders' entries durable, then removes
 * the marker of a cut it made durable; the sync mark in the segment header,
 * one sync behind, lets the next open tell a bad record below it (damage)
 * from a torn tail (a crash). The first failed write or sync fences the
 * cartridge (struct cart_write's fault) until it is closed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/uio.h>
#include <unistd.h>

#include "backend/internal.h"
#include "common/vtl_error.h"

/* Writes the sync mark end into the header in fd, in place. */
int mark_pwrite(int fd, uint64_t end)
{
	unsigned char m[SEG_SYNCMARK_LEN];
	seg_syncmark_encode(end, m);
	struct iovec iov = {m, sizeof m};
	return write_fullv(fd, &iov, 1, SEG_SYNCMARK_OFF);
}

/* Writes segment si's sync mark: its records below end are durable (the next fdatasync carries it). */
int seg_mark_write(struct vtl_cart *c, size_t si, uint64_t end)
{
	int fd = seg_fd(c, si);
	if (fd < 0)
		return VTL_E_IO;
	int rc = mark_pwrite(fd, end);
	if (!rc)
		c->tape.segs[si].synced_end = end;
	return rc;
}

/* Fences c after a failed write or sync (see struct cart_write's fault); returns rc. */
int cart_fence(struct vtl_cart *c, int rc)
{
	if (rc < 0 && rc != VTL_E_POOL_FULL && rc != VTL_E_NOMEM && !c->wr.fault)
		c->wr.fault = rc;
	return rc;
}

/* Makes segment files created, removed or renamed since the last sync durable in their folders. */
int cart_sync_dirs(struct vtl_cart *c)
{
	for (unsigned m = 0; c->wr.dir_dirty && m < c->pool->n; m++) {
		if (!(c->wr.dir_dirty & (1ull << m)))
			continue;
		char dir[PATH_MAX];
		if (pool_cart_dir(c->pool, m, c->barcode, dir, sizeof dir) || fsync_path(dir))
			return VTL_E_IO;
		c->wr.dir_dirty &= ~(1ull << m);
	}
	return VTL_OK;
}

/*
 * Writeback is started for each WRITEBACK_STEP the writer fills (8 MiB, the
 * step of the fastest plain-file pattern tests/bench/bench_backend.c's "raw
 * streamed" found), and waited for WRITEBACK_LAG behind the writer: a
 * cartridge then holds at most about that much dirty data, which is all a
 * sync has left to write, and the disk is kept busy from the first step on
 * rather than after the kernel's dirty thresholds (seconds and hundreds of
 * MiB later) or at WRITE FILEMARKS.
 */
#define WRITEBACK_STEP (8u << 20)
#define WRITEBACK_LAG (4ull * WRITEBACK_STEP)

/* A failed sync_file_range: no support (writeback stays the kernel's), or a writeback error (the fence). */
static int writeback_failed(struct vtl_cart *c)
{
	if (errno == EINVAL || errno == ENOSYS || errno == ESPIPE || errno == EOPNOTSUPP) {
		c->wr.wb_off = true;
		return VTL_OK;
	}
	return cart_fence(c, VTL_E_IO);
}

int cart_writeback(struct vtl_cart *c)
{
	if (c->wr.wb_off || !c->tape.nseg)
		return VTL_OK;
	struct seg *s = last_seg(c);
	if (s->sealed || s->data_end < s->wb_started + WRITEBACK_STEP)
		return VTL_OK;
	int fd = seg_fd(c, c->tape.nseg - 1);
	if (fd < 0)
		return VTL_E_IO;
	uint64_t end = s->data_end;
	if (sync_file_range(fd, (off_t)s->wb_started, (off_t)(end - s->wb_started), SYNC_FILE_RANGE_WRITE) != 0)
		return writeback_failed(c);
	s->wb_started = end;
	/*
	 * The wait reports (and consumes) a writeback error of the range: it
	 * fences the cartridge like a failed fdatasync, which would no longer
	 * see it.
	 */
	if (end > WRITEBACK_LAG && end - WRITEBACK_LAG > s->wb_waited) {
		uint64_t upto = end - WRITEBACK_LAG;
		if (sync_file_range(fd, (off_t)s->wb_waited, (off_t)(upto - s->wb_waited),
				    SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER) != 0)
			return writeback_failed(c);
		s->wb_waited = upto;
	}
	return VTL_OK;
}

int vtl_cart_sync(struct vtl_cart *c)
{
	if (c->p.readonly)
		return VTL_OK;
	if (c->wr.fault)
		return c->wr.fault;
	int rc = seal_wait(c);
	if (rc)
		return cart_fence(c, rc);
	if (c->wr.need_sync && c->tape.nseg) {
		int fd = seg_fd(c, c->tape.nseg - 1);
		uint64_t t0 = cpol_now(&c->wr.cpol);
		if (fd < 0 || fdatasync(fd) != 0)
			return cart_fence(c, VTL_E_IO);
		cpol_io_done(&c->wr.cpol, t0, 0, true);
		c->wr.need_sync = false;
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
			if (s->mark_next > s->synced_end && (rc = seg_mark_write(c, c->tape.nseg - 1, s->mark_next)) &&
			    !errno_is_full())
				return cart_fence(c, rc);
			s->mark_next = s->data_end;
		}
	}
	c->wr.unsynced = 0;
	rc = cart_sync_dirs(c);
	/* The cut is durable now, and so is the lowered sync mark it wrote: the marker may go. */
	if (!rc && c->dmg.cut_marker && !c->wr.need_sync)
		rc = cut_marker_clear(c);
	return cart_fence(c, rc);
}
