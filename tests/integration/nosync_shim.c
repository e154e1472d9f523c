/* SPDX-License-Identifier: Apache-2.0 */
/*
 * LD_PRELOAD shim for the power-cut test's controls (tests/kernel/test_powercut.sh):
 * fsync, fdatasync and sync_file_range (the backend's streaming writeback,
 * which would otherwise put most blocks on the disk anyway) succeed without
 * doing anything, as on a system whose program forgot them. vtld then
 * acknowledges WRITE FILEMARKS with the blocks still only in the page cache,
 * and a power cut must lose them: the control shows that the test sees such
 * a loss. Never for anything but those controls.
 *
 * VTL_NOSYNC_MATCH=SUFFIX limits that to the files whose path ends with
 * SUFFIX; every other file is synced for real. The migrator's control uses
 * ".tape" (the simulated library's tape files): vtl-migrator then records a
 * copy good whose blocks are only in the page cache, while its catalog
 * commits stay durable, and a power cut must leave a copy called good that
 * is not.
 *
 * Build: -shared -fPIC. Use: LD_PRELOAD=nosync_shim.so vtld ...
 */
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "tests/integration/shim_path.h"

/* Whether fd's syncs are to be dropped: every file's, or with VTL_NOSYNC_MATCH those that match it. */
static bool dropped(int fd)
{
	const char *m = getenv("VTL_NOSYNC_MATCH");
	return !m || !*m || shim_path_ends_with(fd, m);
}

int fsync(int fd)
{
	return dropped(fd) ? 0 : (int)syscall(SYS_fsync, fd);
}

int fdatasync(int fd)
{
	return dropped(fd) ? 0 : (int)syscall(SYS_fdatasync, fd);
}

int sync_file_range(int fd, off_t offset, off_t nbytes, unsigned int flags)
{
	return dropped(fd) ? 0 : (int)syscall(SYS_sync_file_range, fd, offset, nbytes, flags);
}
