/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The segment files' descriptors and whole-buffer I/O. A cartridge keeps at
 * most FD_CACHE_MAX segment files open (the cursor's and the last one always);
 * a descriptor read-ahead still uses outlives its segment's hold on it (struct
 * fdref). Owns struct cart_tape's nfd and every seg's fd.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/uio.h>
#include <unistd.h>

#include "backend/internal.h"
#include "common/vtl_error.h"

/* Segment files kept open at once per cartridge (the current, the last, read-ahead's). */
#define FD_CACHE_MAX 8

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

int write_fullv(int fd, struct iovec *iov, int cnt, uint64_t off)
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

bool errno_is_full(void)
{
	return errno == ENOSPC || errno == EDQUOT || errno == EFBIG;
}

int fsync_path(const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return VTL_E_IO;
	int rc = fsync(fd) == 0 ? VTL_OK : VTL_E_IO;
	close(fd);
	return rc;
}

void seg_close_fd(struct vtl_cart *c, struct seg *s)
{
	if (s->fd) {
		fdref_drop(s->fd);
		s->fd = NULL;
		c->tape.nfd--;
	}
}

/* Keeps at most FD_CACHE_MAX segment files open: the cursor's and the last stay. */
void fd_trim(struct vtl_cart *c, size_t keep)
{
	if (c->tape.nfd < FD_CACHE_MAX)
		return;
	for (size_t i = 0; i + 1 < c->tape.nseg && c->tape.nfd >= FD_CACHE_MAX / 2; i++)
		if (i != keep && !(c->cur.valid && i == c->cur.seg))
			seg_close_fd(c, &c->tape.segs[i]);
}

struct fdref *cart_seg_fd(struct vtl_cart *c, size_t si)
{
	struct seg *s = &c->tape.segs[si];
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
	c->tape.nfd++;
	return f;
}

int seg_fd(struct vtl_cart *c, size_t si)
{
	struct fdref *f = cart_seg_fd(c, si);
	return f ? f->fd : -1;
}
