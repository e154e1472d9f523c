/* SPDX-License-Identifier: Apache-2.0 */
/*
 * For the LD_PRELOAD shims of the tests (tests/integration/, the files named _shim.c): which
 * file a descriptor is open on, so that a shim touches only the files it is
 * meant for (segments, tapes) and leaves the catalog and the rest alone.
 */
#ifndef VTL_TESTS_SHIM_PATH_H
#define VTL_TESTS_SHIM_PATH_H

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Whether fd is open on a file whose path (as /proc/self/fd shows it) ends with suffix. */
static inline bool shim_path_ends_with(int fd, const char *suffix)
{
	char link[64], path[PATH_MAX];
	snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
	ssize_t n = readlink(link, path, sizeof path - 1);
	if (n <= 0)
		return false;
	path[n] = '\0';
	size_t pl = (size_t)n, sl = strlen(suffix);
	return pl >= sl && strcmp(path + pl - sl, suffix) == 0;
}

#endif
