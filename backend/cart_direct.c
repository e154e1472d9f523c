/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Appending records past the page cache. A record of DIRECT_RECORD_MIN bytes
 * or more is written with O_DIRECT, synchronously, from an aligned buffer that
 * starts with the open segment's last partial DIRECT_ALIGN block (kept from
 * the record before, or read back once) and ends with zeros up to the next
 * block: the file then holds every byte of the record when the append returns,
 * as a buffered write would, and its size runs up to DIRECT_ALIGN - 1 bytes of
 * zeros past the last record, which the next append overwrites, a footer
 * replaces (footer_commit cuts them first) and an open after a crash cuts as a
 * torn tail. Smaller records, and the first block of a segment (its header,
 * which the sync mark rewrites in place), stay buffered.
 *
 * Why: on the machines this was measured on, copying into the page cache
 * (and then writing it back) cost 2.2 to 4.8 CPU seconds per GiB, the largest
 * single cost of a host's write and of a recall's staging, where an O_DIRECT
 * write costs 0.3 to 0.5 (docs/benchmarks.md, "Writes past the page cache").
 * Owns struct cart_write's dw.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "backend/internal.h"
#include "common/vtl_error.h"

/*
 * The smallest record written with O_DIRECT. A synchronous direct write of
 * 64 KiB ran at 1.3 times a buffered one's rate here for a third of its CPU, one of 32 KiB at
 * 0.7 times; Bacula's default block (64,512 bytes) is included.
 */
#define DIRECT_RECORD_MIN (60u << 10)

void direct_forget(struct vtl_cart *c)
{
	struct cart_direct *d = &c->wr.dw;
	if (d->ref)
		fdref_put(d->ref);
	d->ref = NULL;
	free(d->buf);
	d->buf = NULL;
	d->cap = 0;
}

/* The file's last partial block before at, into d's buffer (grown to n bytes first, its old contents dropped). */
static int tail_load(struct vtl_cart *c, struct fdref *f, uint64_t at, size_t n)
{
	struct cart_direct *d = &c->wr.dw;
	if (d->ref != f) {
		if (d->ref)
			fdref_put(d->ref);
		fdref_get(f);
		d->ref = f;
	}
	d->end = UINT64_MAX; /* not valid until read */
	int rc = direct_buf_reserve(&d->buf, &d->cap, n);
	if (rc)
		return rc;
	size_t tail = (size_t)(at % DIRECT_ALIGN);
	if (tail && (rc = read_full(f->fd, d->buf, tail, at - tail))) {
		errno = EIO; /* the file is shorter than its records: no full disk */
		return VTL_E_IO;
	}
	d->end = at;
	return VTL_OK;
}

/* Grows d's buffer to n bytes, keeping its first keep bytes: 0 or VTL_E_NOMEM. */
static int buf_grow(struct cart_direct *d, size_t n, size_t keep)
{
	if (d->cap >= n)
		return VTL_OK;
	unsigned char *nb = NULL;
	size_t cap = 0;
	if (direct_buf_reserve(&nb, &cap, n))
		return VTL_E_NOMEM;
	memcpy(nb, d->buf, keep);
	free(d->buf);
	d->buf = nb;
	d->cap = cap;
	return VTL_OK;
}

/* Writes n bytes (a multiple of DIRECT_ALIGN) of b at the aligned offset at through dfd: 0 or VTL_E_IO. */
static int pwrite_direct(int dfd, const unsigned char *b, size_t n, uint64_t at)
{
	while (n) {
		ssize_t w = pwrite(dfd, b, n, (off_t)at);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return VTL_E_IO;
		if (w == 0 || (size_t)w % DIRECT_ALIGN) {
			/* Short of a whole block: the file system ran out of room part-way. */
			errno = ENOSPC;
			return VTL_E_IO;
		}
		b += w;
		n -= (size_t)w;
		at += (uint64_t)w;
	}
	return VTL_OK;
}

int direct_append(struct vtl_cart *c, size_t si, struct iovec *iov, int cnt, uint64_t at)
{
	struct cart_direct *d = &c->wr.dw;
	struct fdref *f = cart_seg_fd(c, si);
	if (!f)
		return VTL_E_IO;
	size_t len = 0;
	for (int i = 0; i < cnt; i++)
		len += iov[i].iov_len;
	bool direct = c->pool->wr_direct && !d->off && len >= DIRECT_RECORD_MIN && at >= DIRECT_ALIGN;
	if (direct) {
		cart_seg_direct(c, si, f);
		if (f->dfd < 0)
			direct = false, d->off = true; /* the file system refuses O_DIRECT: buffered from here on */
	}
	if (!direct) {
		d->end = UINT64_MAX; /* the page cache holds the new tail: read it back before a direct write */
		return write_fullv(f->fd, iov, cnt, at);
	}
	size_t tail = (size_t)(at % DIRECT_ALIGN), span = direct_span(at, len);
	int rc = d->ref == f && d->end == at ? buf_grow(d, span, tail) : tail_load(c, f, at, span);
	if (rc)
		return rc == VTL_E_NOMEM ? write_fullv(f->fd, iov, cnt, at) : rc;
	unsigned char *p = d->buf + tail;
	for (int i = 0; i < cnt; i++) {
		memcpy(p, iov[i].iov_base, iov[i].iov_len);
		p += iov[i].iov_len;
	}
	memset(p, 0, span - tail - len);
	d->end = UINT64_MAX; /* whatever happens, the file's tail is no longer known */
	rc = pwrite_direct(f->dfd, d->buf, span, at - tail);
	if (rc && errno == EINVAL) {
		/* Refused after all (a file system that takes the open but not the write): buffered from now on. */
		d->off = true;
		return write_fullv(f->fd, iov, cnt, at);
	}
	if (rc)
		return rc;
	uint64_t end = at + len;
	size_t keep = (size_t)(end % DIRECT_ALIGN);
	if (keep)
		memmove(d->buf, d->buf + (end - keep - (at - tail)), keep);
	d->end = end;
	d->bytes += len;
	return VTL_OK;
}
