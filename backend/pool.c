/* SPDX-License-Identifier: Apache-2.0 */
#include "backend/pool.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "backend/internal.h"
#include "backend/workers.h"
#include "common/lockorder.h"
#include "common/clock.h"
#include "common/vtl_error.h"

#define RESERVE_DEFAULT (32ull << 20)
#define RA_DEPTH_DEFAULT 8
#define RA_CHUNK_DEFAULT (1u << 20)
#define IO_THREADS_DEFAULT 4
/* Twice the speed of 1 for about 4% less ratio on binaries (measured here: docs/benchmarks.md). */
#define LZ4_ACCEL_DEFAULT 2
/* statvfs is asked again after this many bytes were taken, so a shared disk is seen filling. */
#define STATFS_REFRESH_BYTES (64ull << 20)
/*
 * A take that hits the quota rescans its member from disk at most this often:
 * another process (the migrator) may have freed space, and a full pool must
 * not turn every write into a directory walk.
 */
#define RESCAN_MIN_MS 1000

static int member_rescan(struct pool_member *pm, bool lower_only);

static int fail(char *err, size_t errlen, int rc, const char *fmt, ...)
{
	if (err && errlen) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return rc;
}

/* FNV-1a: cheap, and spreads similar barcodes (ABC001, ABC002) over different members. */
static uint32_t barcode_hash(const char *barcode)
{
	uint32_t h = 2166136261u;
	for (const unsigned char *p = (const unsigned char *)barcode; *p; p++)
		h = (h ^ *p) * 16777619u;
	return h;
}

unsigned vtl_pool_member_for(const struct vtl_pool *pool, const char *barcode, uint32_t seq)
{
	return (unsigned)((barcode_hash(barcode) + (uint64_t)seq) % pool->n);
}

unsigned vtl_pool_members(const struct vtl_pool *pool)
{
	return pool->n;
}

int pool_cart_dir(const struct vtl_pool *pool, unsigned m, const char *barcode, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s/%s", pool->m[m].path, barcode);
	return (n < 0 || (size_t)n >= len) ? VTL_E_INVAL : VTL_OK;
}

int pool_seg_path(const struct vtl_pool *pool, const char *barcode, uint32_t seq, char *buf, size_t len)
{
	unsigned m = vtl_pool_member_for(pool, barcode, seq);
	int n = snprintf(buf, len, "%s/%s/%08u.seg", pool->m[m].path, barcode, seq);
	return (n < 0 || (size_t)n >= len) ? VTL_E_INVAL : VTL_OK;
}

static int member_statfs(struct pool_member *pm, uint64_t *free_bytes)
{
	struct statvfs sv;
	if (statvfs(pm->path, &sv) != 0)
		return VTL_E_IO;
	*free_bytes = (uint64_t)sv.f_bavail * sv.f_frsize;
	return VTL_OK;
}

/* Whether a quota member may rescan now (pm->lock held): its last rescan is old enough; marks it done. */
static bool rescan_due(struct pool_member *pm)
{
	uint64_t now = vtl_mono_ms();
	if (pm->rescan_ms && now - pm->rescan_ms < RESCAN_MIN_MS)
		return false;
	pm->rescan_ms = now;
	return true;
}

int pool_space_take(struct vtl_pool *pool, unsigned m, uint64_t bytes)
{
	struct pool_member *pm = &pool->m[m];
	int rc = VTL_OK;
	vtl_lock(&pm->lock, VTL_LOCK_POOL);
	if (pool->quota) {
		if (pm->used + bytes + pool->reserve > pool->quota && rescan_due(pm)) {
			/* Before refusing: another process may have released space since we last looked. */
			vtl_unlock(&pm->lock, VTL_LOCK_POOL);
			member_rescan(pm, true);
			vtl_lock(&pm->lock, VTL_LOCK_POOL);
		}
		if (pm->used + bytes + pool->reserve > pool->quota)
			rc = VTL_E_POOL_FULL;
	} else {
		if (pm->taken_since >= STATFS_REFRESH_BYTES || pm->free_cache < bytes + pool->reserve) {
			uint64_t f;
			if (member_statfs(pm, &f) == VTL_OK) {
				pm->free_cache = f;
				pm->taken_since = 0;
			}
		}
		if (pm->free_cache < bytes + pool->reserve)
			rc = VTL_E_POOL_FULL;
		else {
			pm->free_cache -= bytes;
			pm->taken_since += bytes;
		}
	}
	if (rc == VTL_OK) {
		pm->used += bytes;
		pm->taken_total += bytes;
	}
	vtl_unlock(&pm->lock, VTL_LOCK_POOL);
	return rc;
}

void pool_space_give(struct vtl_pool *pool, unsigned m, uint64_t bytes)
{
	struct pool_member *pm = &pool->m[m];
	vtl_lock(&pm->lock, VTL_LOCK_POOL);
	pm->used = pm->used > bytes ? pm->used - bytes : 0;
	pm->given_total += bytes;
	if (!pool->quota)
		pm->free_cache += bytes;
	vtl_unlock(&pm->lock, VTL_LOCK_POOL);
}

int vtl_pool_member_space(struct vtl_pool *pool, unsigned i, struct vtl_member_space *out)
{
	if (i >= pool->n)
		return VTL_E_INVAL;
	struct pool_member *pm = &pool->m[i];
	uint64_t fs_free = 0;
	int rc = member_statfs(pm, &fs_free);
	if (rc)
		return rc;
	vtl_lock(&pm->lock, VTL_LOCK_POOL);
	out->path = pm->path;
	out->used_bytes = pm->used;
	if (pool->quota)
		out->free_bytes = pool->quota > pm->used + pool->reserve ? pool->quota - pm->used - pool->reserve : 0;
	else
		out->free_bytes = fs_free > pool->reserve ? fs_free - pool->reserve : 0;
	if (pool->quota && out->free_bytes > fs_free)
		out->free_bytes = fs_free; /* a quota larger than the disk promises nothing */
	vtl_unlock(&pm->lock, VTL_LOCK_POOL);
	return VTL_OK;
}

/* Sums the segment files already on a member, so that accounting survives restarts. */
static int member_scan_used(const char *path, uint64_t *out)
{
	uint64_t used = 0;
	DIR *d = opendir(path);
	if (!d)
		return VTL_E_IO;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		int cfd = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY);
		if (cfd < 0)
			continue;
		DIR *cd = fdopendir(cfd);
		if (!cd) {
			close(cfd);
			continue;
		}
		struct dirent *s;
		while ((s = readdir(cd))) {
			/* Segments and the orphans an interrupted cut left: both take room. */
			struct stat st;
			if (strstr(s->d_name, ".seg") && fstatat(dirfd(cd), s->d_name, &st, 0) == 0 &&
			    S_ISREG(st.st_mode))
				used += (uint64_t)st.st_size;
		}
		closedir(cd);
	}
	closedir(d);
	*out = used;
	return VTL_OK;
}

/*
 * Re-reads a member's used bytes from disk (see vtl_pool_rescan). The files
 * do not show everything this pool accounts: bytes taken but not written yet
 * and the footer space an open segment holds for its index. So the account
 * is lowered only by what was provably freed elsewhere (another process
 * deleted or emptied files): the drop of the files' bytes since the last
 * scan beyond every byte this pool gave back since that scan began (its own
 * deletions and truncations, counted as if all were on disk, which only
 * lowers the estimate). Without lower_only (a full rescan) it may also rise
 * to the files' bytes plus what was taken during the scan.
 */
static int member_rescan(struct pool_member *pm, bool lower_only)
{
	vtl_lock(&pm->lock, VTL_LOCK_POOL);
	uint64_t taken_before = pm->taken_total, given_before = pm->given_total;
	vtl_unlock(&pm->lock, VTL_LOCK_POOL);
	uint64_t disk;
	int rc = member_scan_used(pm->path, &disk);
	if (rc)
		return rc;
	vtl_lock(&pm->lock, VTL_LOCK_POOL);
	uint64_t seen = disk + (pm->taken_total - taken_before);
	uint64_t given = pm->given_total - pm->scan_given; /* gives since the last scan began, up to now */
	uint64_t freed = pm->scan_disk > disk + given ? pm->scan_disk - disk - given : 0;
	if (!lower_only && seen > pm->used)
		pm->used = seen;
	else
		pm->used = pm->used > freed ? pm->used - freed : 0;
	pm->scan_disk = disk;
	pm->scan_given = given_before; /* a give during this scan counts again at the next: never too little */
	vtl_unlock(&pm->lock, VTL_LOCK_POOL);
	return VTL_OK;
}

int vtl_pool_rescan(struct vtl_pool *pool)
{
	for (unsigned i = 0; i < pool->n; i++) {
		int rc = member_rescan(&pool->m[i], false);
		if (rc)
			return rc;
	}
	return VTL_OK;
}

int vtl_pool_fill(struct vtl_pool *pool, bool rescan, struct vtl_pool_fill *out)
{
	*out = (struct vtl_pool_fill){0};
	int rc = rescan ? vtl_pool_rescan(pool) : VTL_OK;
	for (unsigned i = 0; rc == VTL_OK && i < pool->n; i++) {
		struct vtl_member_space ms;
		if ((rc = vtl_pool_member_space(pool, i, &ms)) == VTL_OK) {
			out->used_bytes += ms.used_bytes;
			out->size_bytes += ms.used_bytes + ms.free_bytes;
		}
	}
	out->percent = out->size_bytes ? (double)out->used_bytes * 100.0 / (double)out->size_bytes : 100.0;
	return rc;
}

/* A member must be a directory we can create files in; root ignores modes, so try it. */
static int member_check(const char *path, char *err, size_t errlen)
{
	struct stat st;
	if (stat(path, &st) != 0)
		return fail(err, errlen, VTL_E_CONFIG, "pool member %s: %s", path, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return fail(err, errlen, VTL_E_CONFIG, "pool member %s: not a directory", path);
	char probe[PATH_MAX];
	int n = snprintf(probe, sizeof probe, "%s/.vtl-probe.%ld", path, (long)getpid());
	if (n < 0 || (size_t)n >= sizeof probe)
		return fail(err, errlen, VTL_E_CONFIG, "pool member %s: path too long", path);
	int fd = open(probe, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return fail(err, errlen, VTL_E_CONFIG, "pool member %s: not writable: %s", path, strerror(errno));
	close(fd);
	unlink(probe);
	return VTL_OK;
}

int vtl_pool_open(const struct vtl_pool_config *cfg, struct vtl_pool **out, char *err, size_t errlen)
{
	*out = NULL;
	if (!cfg || cfg->n_members == 0 || cfg->n_members > VTL_POOL_MAX_MEMBERS)
		return fail(err, errlen, VTL_E_CONFIG, "pool: 1 to %d member directories are needed",
			    VTL_POOL_MAX_MEMBERS);
	uint64_t segsz = cfg->segment_size ? cfg->segment_size : VTL_SEGMENT_SIZE_DEFAULT;
	if (segsz < VTL_SEGMENT_SIZE_MIN || segsz > VTL_SEGMENT_SIZE_MAX)
		return fail(err, errlen, VTL_E_CONFIG, "pool: segment size %llu out of range %llu..%llu",
			    (unsigned long long)segsz, (unsigned long long)VTL_SEGMENT_SIZE_MIN,
			    (unsigned long long)VTL_SEGMENT_SIZE_MAX);
	struct stat seen[VTL_POOL_MAX_MEMBERS];
	for (unsigned i = 0; i < cfg->n_members; i++) {
		if (!cfg->members[i] || !cfg->members[i][0])
			return fail(err, errlen, VTL_E_CONFIG, "pool member %u: empty path", i);
		int rc = member_check(cfg->members[i], err, errlen);
		if (rc)
			return rc;
		stat(cfg->members[i], &seen[i]);
		for (unsigned j = 0; j < i; j++)
			if (seen[j].st_dev == seen[i].st_dev && seen[j].st_ino == seen[i].st_ino)
				return fail(err, errlen, VTL_E_CONFIG, "pool members %s and %s are the same directory",
					    cfg->members[j], cfg->members[i]);
	}
	struct vtl_pool *pool = calloc(1, sizeof *pool);
	if (!pool)
		return fail(err, errlen, VTL_E_NOMEM, "pool: out of memory");
	pool->n = cfg->n_members;
	pool->segment_size = segsz;
	pool->quota = cfg->member_quota;
	pool->reserve = cfg->reserve_bytes ? cfg->reserve_bytes : (cfg->member_quota ? 0 : RESERVE_DEFAULT);
	pool->ra_depth = cfg->readahead_depth ? cfg->readahead_depth : RA_DEPTH_DEFAULT;
	pool->ra_chunk = cfg->readahead_chunk ? cfg->readahead_chunk : RA_CHUNK_DEFAULT;
	pool->ra_memory = cfg->readahead_memory ? cfg->readahead_memory : pool->ra_depth * pool->ra_chunk * 5;
	pool->ra_direct = !cfg->readahead_buffered;
	pool->wr_direct = !cfg->write_buffered;
	pool->lz4_accel = cfg->lz4_acceleration > 0 ? cfg->lz4_acceleration : LZ4_ACCEL_DEFAULT;
	for (unsigned i = 0; i < pool->n; i++) {
		struct pool_member *pm = &pool->m[i];
		pthread_mutex_init(&pm->lock, NULL);
		pm->path = strdup(cfg->members[i]);
		if (!pm->path) {
			pool->n = i;
			vtl_pool_close(pool);
			return fail(err, errlen, VTL_E_NOMEM, "pool: out of memory");
		}
		if (member_scan_used(pm->path, &pm->used) != VTL_OK || member_statfs(pm, &pm->free_cache) != VTL_OK) {
			pool->n = i + 1;
			vtl_pool_close(pool);
			return fail(err, errlen, VTL_E_CONFIG, "pool member %s: cannot measure it: %s", cfg->members[i],
				    strerror(errno));
		}
		pm->scan_disk = pm->used; /* the baseline of the next rescan */
	}
	pool->workers = workers_start(cfg->io_threads ? cfg->io_threads : IO_THREADS_DEFAULT);
	if (!pool->workers) {
		vtl_pool_close(pool);
		return fail(err, errlen, VTL_E_NOMEM, "pool: cannot start I/O threads");
	}
	*out = pool;
	return VTL_OK;
}

void vtl_pool_close(struct vtl_pool *pool)
{
	if (!pool)
		return;
	if (pool->workers)
		workers_stop(pool->workers);
	for (unsigned i = 0; i < pool->n; i++) {
		free(pool->m[i].path);
		pthread_mutex_destroy(&pool->m[i].lock);
	}
	free(pool);
}
