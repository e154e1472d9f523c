/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The segment files' descriptors and whole-buffer I/O. A cartridge keeps at
 * most FD_CACHE_MAX segment files open (the cursor's and the last one always);
 * a descriptor read-ahead still uses outlives its segment's hold on it (struct
 * fdref). Owns struct cart_tape's nfd and every seg's fd.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "backend/internal.h"
#include "common/vtl_error.h"

/* Segment files kept open at once per cartridge (the current, the last, read-ahead's). */
#define FD_CACHE_MAX 8

/* Reads [at, want) of fd into p, the file's bytes from at: 0 once it holds everything before need. */
static int pread_until(int fd, unsigned char *p, uint64_t at, uint64_t want, uint64_t need)
{
	while (at < need) {
		ssize_t n = pread(fd, p, (size_t)(want - at), (off_t)at);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return VTL_E_IO;
		if (n == 0)
			return VTL_E_CORRUPT; /* short file */
		p += n;
		at += (uint64_t)n;
	}
	return VTL_OK;
}

int read_full(int fd, void *buf, size_t len, uint64_t off)
{
	return pread_until(fd, buf, off, off + len, off + len);
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

struct fdref *fdref_new(const struct vtl_cart *c, int fd)
{
	struct fdref *f = calloc(1, sizeof *f);
	if (!f)
		return NULL;
	f->fd = fd;
	f->dfd = FDREF_DIRECT_NONE;
	/*
	 * With O_DIRECT read-ahead, the kernel's own read-ahead on this descriptor would fill the cache
	 * ahead of a buffered read (a record read before read-ahead starts, a chunk found cached) and so
	 * make the next chunks look cached: a chain of copies through the cache that the direct reads are
	 * there to avoid. Its reads are then exactly what is asked; a failure only keeps the kernel's.
	 */
	if (c->pool->ra_direct)
		(void)posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
	return f;
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
	struct fdref *f = fdref_new(c, fd);
	if (!f) {
		close(fd);
		return NULL;
	}
	s->fd = f;
	c->tape.nfd++;
	return f;
}

int seg_fd(struct vtl_cart *c, size_t si)
{
	struct fdref *f = cart_seg_fd(c, si);
	return f ? f->fd : -1;
}

void cart_seg_direct(struct vtl_cart *c, size_t si, struct fdref *f)
{
	if (f->dfd != FDREF_DIRECT_NONE)
		return;
	char path[PATH_MAX];
	f->dfd = FDREF_DIRECT_FAILED;
	if (pool_seg_path(c->pool, c->barcode, c->tape.segs[si].seq, path, sizeof path))
		return;
	/* Writable for the appends of cart_direct.c, on a cartridge that may write. */
	int fd = open(path, (c->p.readonly ? O_RDONLY : O_RDWR) | O_DIRECT | O_CLOEXEC);
	if (fd < 0)
		return;
	f->dfd = fd;
}

/* cachestat(2) (Linux 6.5): pages of a range in the page cache, without mapping the file. */
#ifndef __NR_cachestat
#define __NR_cachestat 451
#endif
struct cachestat_range_arg {
	uint64_t off, len;
};
struct cachestat_out {
	uint64_t nr_cache, nr_dirty, nr_writeback, nr_evicted, nr_recently_evicted;
};

bool fd_range_cached(int fd, uint64_t off, uint64_t len)
{
	static const uint64_t page = 4096; /* cachestat and mincore count in the kernel's pages */
	if (len == 0)
		return true;
	uint64_t first = off / page, pages = (off + len + page - 1) / page - first;
	struct cachestat_range_arg r = {first * page, pages * page};
	struct cachestat_out cs;
	if (syscall(__NR_cachestat, fd, &r, &cs, 0) == 0)
		return cs.nr_cache >= pages;
	/* Older kernels: map the range (never touched, so no fault and no SIGBUS) and ask mincore. */
	if (pages > (64u << 20) / page)
		return false;
	void *m = mmap(NULL, (size_t)(pages * page), PROT_READ, MAP_SHARED, fd, (off_t)(first * page));
	if (m == MAP_FAILED)
		return false;
	unsigned char vec[(64u << 20) / 4096];
	bool all = mincore(m, (size_t)(pages * page), vec) == 0;
	for (uint64_t i = 0; all && i < pages; i++)
		all = vec[i] & 1;
	munmap(m, (size_t)(pages * page));
	return all;
}

size_t direct_span(uint64_t off, size_t len)
{
	return ((size_t)(off % DIRECT_ALIGN) + len + DIRECT_ALIGN - 1) / DIRECT_ALIGN * DIRECT_ALIGN;
}

int direct_buf_reserve(unsigned char **buf, size_t *cap, size_t n)
{
	if (*cap >= n)
		return VTL_OK;
	void *p = NULL;
	if (posix_memalign(&p, DIRECT_ALIGN, n))
		return VTL_E_NOMEM;
	free(*buf);
	*buf = p;
	*cap = n;
	return VTL_OK;
}

int read_full_direct(int dfd, unsigned char *abuf, uint64_t off, size_t len)
{
	/* A short read before the end (the file ends there) leaves an unaligned offset: EINVAL, then the buffered read. */
	uint64_t at = off - off % DIRECT_ALIGN;
	return pread_until(dfd, abuf, at, at + direct_span(off, len), off + len);
}

/* Each thread's aligned buffer for O_DIRECT reads into a caller's unaligned one; freed with the thread. */
static pthread_key_t bounce_key;
static pthread_once_t bounce_once = PTHREAD_ONCE_INIT;
static bool bounce_ok;

struct bounce {
	unsigned char *p;
	size_t cap;
};

static void bounce_free(void *v)
{
	struct bounce *b = v;
	free(b->p);
	free(b);
}

static void bounce_init(void)
{
	bounce_ok = pthread_key_create(&bounce_key, bounce_free) == 0;
}

/* The calling thread's buffer of at least n bytes, DIRECT_ALIGN-aligned; NULL when out of memory. */
static unsigned char *bounce_get(size_t n)
{
	if (pthread_once(&bounce_once, bounce_init) || !bounce_ok)
		return NULL;
	struct bounce *b = pthread_getspecific(bounce_key);
	if (!b) {
		if (!(b = calloc(1, sizeof *b)))
			return NULL;
		if (pthread_setspecific(bounce_key, b)) {
			free(b);
			return NULL;
		}
	}
	return direct_buf_reserve(&b->p, &b->cap, n) ? NULL : b->p;
}

int read_path_range(const struct vtl_pool *pool, const char *path, void *buf, size_t len, uint64_t off)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return VTL_E_IO;
	int rc = VTL_E_IO;
	bool done = false;
	/* As the read-ahead's cold chunks: a copy reading a cartridge once does not go through the cache. */
	if (pool->ra_direct && len >= DIRECT_ALIGN && !fd_range_cached(fd, off, len)) {
		unsigned char *b = bounce_get(direct_span(off, len));
		int dfd = b ? open(path, O_RDONLY | O_DIRECT | O_CLOEXEC) : -1;
		if (dfd >= 0) {
			rc = read_full_direct(dfd, b, off, len);
			bool refused = rc == VTL_E_IO && errno == EINVAL;
			close(dfd);
			done = !refused;
			if (rc == VTL_OK)
				memcpy(buf, b + off % DIRECT_ALIGN, len);
		}
	}
	if (!done)
		rc = read_full(fd, buf, len, off);
	close(fd);
	return rc;
}
