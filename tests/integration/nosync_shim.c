/* SPDX-License-Identifier: Apache-2.0 */
/*
 * LD_PRELOAD shim for the power-cut test's control (tests/kernel/test_powercut.sh):
 * fsync and fdatasync succeed without doing anything, as on a system whose
 * program forgot them. vtld then acknowledges WRITE FILEMARKS with the blocks
 * still only in the page cache, and a power cut must lose them: the control
 * shows that the test sees such a loss. Never for anything but that control.
 *
 * Build: -shared -fPIC. Use: LD_PRELOAD=nosync_shim.so vtld ...
 */
#include <unistd.h>

int fsync(int fd)
{
	(void)fd;
	return 0;
}

int fdatasync(int fd)
{
	(void)fd;
	return 0;
}
