/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The clocks: CLOCK_MONOTONIC for every timeout, rate, deadline and timed
 * wait (it never jumps when an administrator or NTP sets the wall clock),
 * CLOCK_REALTIME only for times that are recorded (segment headers, log
 * lines). Timed waits use a condition variable set up by vtl_cond_init_mono,
 * so that their absolute deadlines are monotonic too.
 */
#ifndef VTL_COMMON_CLOCK_H
#define VTL_COMMON_CLOCK_H

#include <pthread.h>
#include <stdint.h>
#include <time.h>

#define VTL_NS_PER_S 1000000000ull
#define VTL_NS_PER_MS 1000000ull

/* Nanoseconds of CLOCK_MONOTONIC. */
static inline uint64_t vtl_mono_ns(void)
{
	struct timespec ts;
	(void)clock_gettime(CLOCK_MONOTONIC, &ts); /* cannot fail for a clock every Linux has */
	return (uint64_t)ts.tv_sec * VTL_NS_PER_S + (uint64_t)ts.tv_nsec;
}

/* Milliseconds of CLOCK_MONOTONIC. */
static inline uint64_t vtl_mono_ms(void)
{
	return vtl_mono_ns() / VTL_NS_PER_MS;
}

/* Seconds of CLOCK_MONOTONIC, with their fraction. */
static inline double vtl_mono_s(void)
{
	return (double)vtl_mono_ns() / 1e9;
}

/* Nanoseconds since the epoch (CLOCK_REALTIME), for times that are recorded, never for intervals. */
static inline uint64_t vtl_wall_ns(void)
{
	struct timespec ts;
	(void)clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * VTL_NS_PER_S + (uint64_t)ts.tv_nsec;
}

/* Initialises cond so that pthread_cond_timedwait's deadlines are CLOCK_MONOTONIC times; 0 or an errno. */
static inline int vtl_cond_init_mono(pthread_cond_t *cond)
{
	pthread_condattr_t a;
	int rc = pthread_condattr_init(&a);
	if (rc)
		return rc;
	if (!(rc = pthread_condattr_setclock(&a, CLOCK_MONOTONIC)))
		rc = pthread_cond_init(cond, &a);
	(void)pthread_condattr_destroy(&a); /* cannot fail on an initialised attribute */
	return rc;
}

/* The CLOCK_MONOTONIC time ms milliseconds from now, as the deadline of a wait on a vtl_cond_init_mono cond. */
static inline struct timespec vtl_mono_deadline_ms(uint64_t ms)
{
	uint64_t t = vtl_mono_ns() + ms * VTL_NS_PER_MS;
	return (struct timespec){.tv_sec = (time_t)(t / VTL_NS_PER_S), .tv_nsec = (long)(t % VTL_NS_PER_S)};
}

#endif
