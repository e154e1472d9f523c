/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the benchmark programs that drive the library in-process share: knobs
 * from the environment, a monotonic clock, and the removal of their
 * temporary folder on every exit. Each program is built on its own, so these
 * are static inline functions.
 */
#ifndef VTL_TESTS_BENCH_BENCH_UTIL_H
#define VTL_TESTS_BENCH_BENCH_UTIL_H

#include <ftw.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>

#define BENCH_RM_FDS 16 /* file descriptors nftw may hold open while removing a folder */

/* A knob from the environment: the decimal number in name, or def when unset or empty. */
static inline unsigned long bench_env_ul(const char *name, unsigned long def)
{
	const char *v = getenv(name);
	return v && *v ? strtoul(v, NULL, 10) : def;
}

/* Seconds on CLOCK_MONOTONIC. */
static inline double bench_now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static inline int bench_rm_one(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(p);
}

/* Removes the folder dir and everything in it ("" : nothing). */
static inline void bench_rmtree(const char *dir)
{
	if (dir[0])
		nftw(dir, bench_rm_one, BENCH_RM_FDS, FTW_DEPTH | FTW_PHYS);
}

/* SIGINT/SIGTERM handler: exit, so that the atexit cleanup removes the temporary folder. */
static inline void bench_on_signal(int sig)
{
	(void)sig;
	exit(130);
}

/*
 * Makes dir (cap bytes) a new folder base/name.XXXXXX and has cleanup (which
 * removes it) run at every exit, also on SIGINT, SIGTERM, SIGHUP and SIGPIPE.
 * False when the folder cannot be made.
 */
static inline bool bench_make_dir(char *dir, size_t cap, const char *base, const char *name, void (*cleanup)(void))
{
	snprintf(dir, cap, "%s/%s.XXXXXX", base, name);
	if (!mkdtemp(dir))
		return false;
	atexit(cleanup);
	signal(SIGINT, bench_on_signal);
	signal(SIGTERM, bench_on_signal);
	signal(SIGHUP, bench_on_signal);
	signal(SIGPIPE, bench_on_signal);
	return true;
}

#endif
