/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The lock order check (common/lockorder.h): locks taken in rank order pass;
 * a lock taken while a later-ranked one is held aborts the process with a
 * line naming both, which a test of any path that does so would see.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/lockorder.h"

static pthread_mutex_t a = PTHREAD_MUTEX_INITIALIZER, b = PTHREAD_MUTEX_INITIALIZER;

static void in_order_passes(void **state)
{
	(void)state;
	vtl_lock(&a, VTL_LOCK_LIBRARY);
	vtl_lock(&b, VTL_LOCK_DRIVE);
	vtl_unlock(&b, VTL_LOCK_DRIVE);
	vtl_unlock(&a, VTL_LOCK_LIBRARY);
	/* Released: the order starts again. */
	vtl_lock(&b, VTL_LOCK_DRIVE);
	vtl_unlock(&b, VTL_LOCK_DRIVE);
	vtl_lock(&a, VTL_LOCK_LIBRARY);
	vtl_unlock(&a, VTL_LOCK_LIBRARY);
	/* A trylock never waits: it may break the order. */
	vtl_lock(&b, VTL_LOCK_DRIVE);
	assert_true(vtl_trylock(&a, VTL_LOCK_LIBRARY));
	vtl_unlock(&a, VTL_LOCK_LIBRARY);
	vtl_unlock(&b, VTL_LOCK_DRIVE);
}

/* Runs fn in a child; returns its stderr in buf and whether it died of SIGABRT. */
static bool aborts(void (*fn)(void), char *buf, size_t len)
{
	int p[2];
	assert_int_equal(pipe(p), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(p[1], 2);
		fn();
		_exit(0);
	}
	close(p[1]);
	ssize_t n = read(p[0], buf, len - 1);
	buf[n > 0 ? n : 0] = 0;
	close(p[0]);
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	return WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT;
}

static void library_under_drive(void)
{
	vtl_lock(&b, VTL_LOCK_DRIVE);
	vtl_lock(&a, VTL_LOCK_LIBRARY);
}

static void two_of_one_rank(void)
{
	vtl_lock(&a, VTL_LOCK_CATALOG);
	vtl_lock(&b, VTL_LOCK_CATALOG);
}

static void out_of_order_aborts(void **state)
{
	(void)state;
	char err[512];
	assert_true(aborts(library_under_drive, err, sizeof err));
	assert_non_null(strstr(err, "lock order violated: taking the library lock while holding the drive lock"));
	assert_true(aborts(two_of_one_rank, err, sizeof err));
	assert_non_null(strstr(err, "taking the catalog lock while holding the catalog lock"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(in_order_passes),
		cmocka_unit_test(out_of_order_aborts),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
