/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A cartridge's life in the pool: whether it exists, create, delete (highest
 * segment first, so that a crash leaves a shorter but consistent tape), open
 * (with its lock, the repair of cart_repair.c and its read-ahead) and close
 * (the footer written, everything synced), and what an open one says of
 * itself (barcode, filemarks, statistics). Owns the identity fields of struct
 * vtl_cart and its one cleanup path, cart_free.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend/internal.h"
#include "common/vtl_error.h"

static void cart_free(struct vtl_cart *c)
{
	(void)seal_wait(c); /* an error here was already lost with the session */
	if (c->ra)
		ra_destroy(c->ra);
	direct_forget(c);
	for (size_t i = 0; i < c->tape.nseg; i++)
		seg_forget(c, &c->tape.segs[i]);
	free(c->tape.segs);
	free(c->tape.off);
	free(c->scratch.stored);
	free(c->scratch.plain);
	free(c->scratch.crypt);
	free(c->dmg.list);
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
	c->wr.compress = p->compression;
	cpol_init(&c->wr.cpol, NULL);
	c->lockfd = -1;
	/* A follower reads beside the writer that holds the lock; it trusts only whole, checked records. */
	int rc = p->follow ? VTL_OK : cart_lock(pool, barcode, !c->p.readonly, &c->lockfd);
	if (!rc)
		rc = cart_load(c);
	if (!rc && !(c->ra = ra_create(c)))
		rc = VTL_E_NOMEM;
	if (!rc && (c->wr.dir_dirty || c->dmg.cut_marker) && !c->p.readonly)
		rc = vtl_cart_sync(c);
	if (rc) {
		cart_free(c);
		return rc;
	}
	*out = c;
	return VTL_OK;
}

int vtl_cart_close(struct vtl_cart *c)
{
	if (!c)
		return VTL_E_INVAL;
	int rc = VTL_OK;
	if (c->wr.fault) {
		/* Nothing more is written over what may be lost: the next open's repair finds the end. */
		rc = c->wr.fault;
		(void)seal_wait(c); /* its error is the fault's, already returned */
	} else if (!c->p.readonly) {
		ra_reset(c->ra);
		if (c->wr.dirty && c->tape.nseg && !last_seg(c)->sealed)
			rc = seg_seal_last(c, true, false);
		int rc2 = vtl_cart_sync(c);
		if (!rc)
			rc = rc2;
	}
	cart_free(c);
	return rc;
}

void vtl_cart_stats(const struct vtl_cart *c, struct vtl_cart_stats *st)
{
	*st = c->st;
	st->unsynced_bytes = c->wr.unsynced;
	st->compression = c->wr.compress ? cpol_reason(&c->wr.cpol) : "off (mode page)";
	st->readahead_ready = st->readahead_limit = 0;
	if (c->ra && ra_active(c->ra))
		ra_buffered(c->ra, &st->readahead_ready, &st->readahead_limit);
	st->readahead_direct = c->ra ? ra_direct_bytes(c->ra) : 0;
	st->written_direct = c->wr.dw.bytes;
}

const char *vtl_cart_barcode(const struct vtl_cart *c)
{
	return c->barcode;
}

uint64_t vtl_cart_filemarks(const struct vtl_cart *c)
{
	return c->tape.total_fm;
}
