/* SPDX-License-Identifier: Apache-2.0 */
/*
 * LD_PRELOAD shim that injects disk faults into vtld, for tests/integration/
 * test_faults.sh: a full file system (ENOSPC) in the middle of a host's
 * writes, and a write or an fdatasync that fails with EIO at a moment the
 * test chooses.
 * It interposes write, pwrite, pwritev, fdatasync and fsync, and touches only
 * descriptors whose file's path ends with VTL_FAULT_MATCH (default ".seg": the
 * cartridges' segment files); the catalog, the event log and folders are
 * never faulted. Everything is controlled by environment variables, each
 * naming a file the test (or its host program) writes, so that a fault fires
 * at a known command and the test needs no timing:
 *
 *   VTL_FAULT_SPACE=FILE        FILE holds a decimal number of bytes: all
 *                               writes to matching files together may write
 *                               that many bytes in this process; a write that
 *                               would pass it writes what still fits (a short
 *                               write, as a filling disk does), then writes
 *                               fail with ENOSPC. FILE is read again at every
 *                               write, so raising the number gives the space
 *                               back; no FILE: no limit.
 *   VTL_FAULT_SYNC_TRIGGER=FILE when FILE exists, the next fdatasync or fsync
 *                               of a matching file fails with EIO without
 *                               syncing, and the shim removes FILE (so the
 *                               test sees that it fired); later syncs work,
 *                               as Linux reports a writeback error once.
 *   VTL_FAULT_WRITE_TRIGGER=FILE when FILE exists, the next write to a
 *                               matching file fails with EIO, writing nothing,
 *                               and the shim removes FILE.
 *   VTL_FAULT_SYNC_LOSE=1       that failed sync also loses what was written
 *                               to the file since its last good sync (the
 *                               file is cut back to the size it had then), as
 *                               a kernel that dropped the pages would.
 *
 * Every injected fault is logged to stderr with a "fault_shim:" prefix.
 *
 * vtld built with AddressSanitizer (make asan) checks that the sanitizer's
 * runtime comes first in the list of libraries; this shim is built without
 * it (see the Makefile), so test_faults.sh preloads the runtime before it.
 *
 * Build: -shared -fPIC, linked with -ldl. Use: LD_PRELOAD=fault_shim.so vtld ...
 */
#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#include "tests/integration/shim_path.h"

#define DEFAULT_MATCH ".seg"
/* Descriptors this far are tracked for their last good sync; vtld opens far fewer. */
#define MAX_TRACKED_FD 4096
/* The budget file holds one decimal number. */
#define BUDGET_TEXT_MAX 32

typedef ssize_t (*write_fn)(int, const void *, size_t);
typedef ssize_t (*pwrite_fn)(int, const void *, size_t, off_t);
typedef ssize_t (*pwritev_fn)(int, const struct iovec *, int, off_t);
typedef int (*sync_fn)(int);

static struct {
	write_fn write;
	pwrite_fn pwrite;
	pwritev_fn pwritev;
	sync_fn fdatasync;
	sync_fn fsync;
} real;

/* The size a tracked file had at its last good sync (or when first written through this descriptor). */
struct tracked {
	dev_t dev;
	ino_t ino;
	off_t synced;
	bool valid;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static uint64_t written; /* bytes written to matching files by this process */
static struct tracked fds[MAX_TRACKED_FD];

static void *must_find(const char *name)
{
	void *p = dlsym(RTLD_NEXT, name);
	if (!p) {
		fprintf(stderr, "fault_shim: %s not found: %s\n", name, dlerror());
		abort();
	}
	return p;
}

static void resolve(void)
{
	real.write = (write_fn)must_find("write");
	real.pwrite = (pwrite_fn)must_find("pwrite");
	real.pwritev = (pwritev_fn)must_find("pwritev");
	real.fdatasync = (sync_fn)must_find("fdatasync");
	real.fsync = (sync_fn)must_find("fsync");
}

/* Whether fd's file is one the faults apply to (its path ends with VTL_FAULT_MATCH). */
static bool matches(int fd)
{
	const char *m = getenv("VTL_FAULT_MATCH");
	if (!m || !*m)
		m = DEFAULT_MATCH;
	return shim_path_ends_with(fd, m);
}

/* The byte budget from VTL_FAULT_SPACE's file; false when there is none (no limit). */
static bool budget(uint64_t *out)
{
	const char *f = getenv("VTL_FAULT_SPACE");
	if (!f || !*f)
		return false;
	FILE *fp = fopen(f, "re");
	if (!fp)
		return false;
	char text[BUDGET_TEXT_MAX] = {0};
	bool ok = fgets(text, sizeof text, fp) != NULL;
	fclose(fp);
	if (!ok)
		return false;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(text, &end, 10);
	if (errno || end == text)
		return false;
	*out = v;
	return true;
}

/* Records the size fd's file has now as synced, unless fd already tracks this file (called with lock held). */
static void track(int fd, bool synced_now)
{
	struct stat st;
	if (fd < 0 || fd >= MAX_TRACKED_FD || fstat(fd, &st) != 0)
		return;
	struct tracked *t = &fds[fd];
	if (!synced_now && t->valid && t->dev == st.st_dev && t->ino == st.st_ino)
		return;
	t->dev = st.st_dev;
	t->ino = st.st_ino;
	t->synced = st.st_size;
	t->valid = true;
}

/* Whether the trigger file named by the environment variable var exists; it is removed (one fault per file). */
static bool take_trigger(const char *var)
{
	const char *trigger = getenv(var);
	return trigger && *trigger && unlink(trigger) == 0;
}

/*
 * How many of want bytes a write to fd may write: want when fd does not
 * match or there is no fault; 0 with *err EIO when the write trigger fired;
 * else what is left of the budget, with *err ENOSPC when that is less than
 * want (0: nothing fits). Counts them as written (the caller gives back what
 * was not).
 */
static size_t admit(int fd, size_t want, int *err)
{
	*err = 0;
	if (!matches(fd))
		return want;
	if (take_trigger("VTL_FAULT_WRITE_TRIGGER")) {
		*err = EIO;
		fprintf(stderr, "fault_shim: write of %zu bytes to fd %d: EIO\n", want, fd);
		return 0;
	}
	pthread_mutex_lock(&lock);
	track(fd, false);
	uint64_t limit;
	size_t allow = want;
	if (budget(&limit)) {
		uint64_t left = limit > written ? limit - written : 0;
		if (left < want) {
			allow = (size_t)left;
			*err = ENOSPC;
		}
	}
	written += allow;
	pthread_mutex_unlock(&lock);
	if (*err)
		fprintf(stderr, "fault_shim: write of %zu bytes to fd %d: %s\n", want, fd,
			allow ? "short write at the space budget" : "ENOSPC");
	return allow;
}

/* Gives back bytes admitted but not written. */
static void unadmit(size_t bytes)
{
	pthread_mutex_lock(&lock);
	written -= bytes < written ? bytes : written;
	pthread_mutex_unlock(&lock);
}

/* Finishes a write: n bytes of allow were written; gives back the rest. */
static ssize_t written_result(ssize_t n, size_t allow)
{
	if (n < 0)
		unadmit(allow);
	else if ((size_t)n < allow)
		unadmit(allow - (size_t)n);
	return n;
}

/* Admits a write of want bytes to fd (*allow: how many may go, *err: the fault); true, errno set, when none may. */
static bool refused(int fd, size_t want, size_t *allow, int *err)
{
	pthread_once(&once, resolve);
	*allow = admit(fd, want, err);
	if (*err && *allow == 0) {
		errno = *err;
		return true;
	}
	return false;
}

ssize_t write(int fd, const void *buf, size_t len)
{
	size_t allow;
	int err;
	if (refused(fd, len, &allow, &err))
		return -1;
	return written_result(real.write(fd, buf, allow), allow);
}

ssize_t pwrite(int fd, const void *buf, size_t len, off_t off)
{
	size_t allow;
	int err;
	if (refused(fd, len, &allow, &err))
		return -1;
	return written_result(real.pwrite(fd, buf, allow, off), allow);
}

/* Also the 64-bit name glibc's headers may redirect pwrite to. */
ssize_t pwrite64(int fd, const void *buf, size_t len, off_t off)
{
	return pwrite(fd, buf, len, off);
}

ssize_t pwritev(int fd, const struct iovec *iov, int cnt, off_t off)
{
	size_t want = 0;
	for (int i = 0; i < cnt; i++)
		want += iov[i].iov_len;
	size_t allow;
	int err;
	if (refused(fd, want, &allow, &err))
		return -1;
	if (!err)
		return written_result(real.pwritev(fd, iov, cnt, off), allow);
	/* The short write: the first allow bytes of the vector. */
	struct iovec part[IOV_MAX];
	int n = 0;
	for (size_t left = allow; n < cnt && n < IOV_MAX && left > 0; n++) {
		part[n] = iov[n];
		if (part[n].iov_len > left)
			part[n].iov_len = left;
		left -= part[n].iov_len;
	}
	return written_result(real.pwritev(fd, part, n, off), allow);
}

ssize_t pwritev64(int fd, const struct iovec *iov, int cnt, off_t off)
{
	return pwritev(fd, iov, cnt, off);
}

/* Whether this sync of fd is the one to fail: the trigger file exists (and is removed). */
static bool sync_fault(int fd)
{
	if (!matches(fd) || !take_trigger("VTL_FAULT_SYNC_TRIGGER"))
		return false;
	const char *lose = getenv("VTL_FAULT_SYNC_LOSE");
	off_t cut = -1;
	pthread_mutex_lock(&lock);
	struct stat st;
	if (lose && strcmp(lose, "1") == 0 && fd >= 0 && fd < MAX_TRACKED_FD && fds[fd].valid &&
	    fstat(fd, &st) == 0 && fds[fd].dev == st.st_dev && fds[fd].ino == st.st_ino && st.st_size > fds[fd].synced)
		cut = fds[fd].synced;
	pthread_mutex_unlock(&lock);
	if (cut >= 0 && ftruncate(fd, cut) != 0)
		fprintf(stderr, "fault_shim: cutting fd %d back to %jd bytes failed: %s\n", fd, (intmax_t)cut,
			strerror(errno));
	fprintf(stderr, "fault_shim: sync of fd %d: EIO%s\n", fd, cut >= 0 ? ", unsynced bytes dropped" : "");
	return true;
}

/* A good sync of a matching file: what it holds now is durable. */
static int synced(int fd, int rc)
{
	if (rc == 0 && matches(fd)) {
		pthread_mutex_lock(&lock);
		track(fd, true);
		pthread_mutex_unlock(&lock);
	}
	return rc;
}

/* A sync through real_sync, failing instead when the trigger says so. */
static int sync_through(int fd, sync_fn *real_sync)
{
	pthread_once(&once, resolve);
	if (sync_fault(fd)) {
		errno = EIO;
		return -1;
	}
	return synced(fd, (*real_sync)(fd));
}

int fdatasync(int fd)
{
	return sync_through(fd, &real.fdatasync);
}

int fsync(int fd)
{
	return sync_through(fd, &real.fsync);
}
