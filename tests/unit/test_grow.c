/* SPDX-License-Identifier: Apache-2.0 */
/* Growing arrays (common/grow.h): doubling, the first size, and sizes that would overflow refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "common/grow.h"
#include "common/vtl_error.h"

static void grows_by_doubling(void **state)
{
	(void)state;
	int *a = NULL;
	size_t cap = 0;
	for (size_t n = 0; n < 1000; n++) {
		assert_int_equal(vtl_grow((void **)&a, &cap, n, sizeof *a), VTL_OK);
		assert_true(cap > n);
		a[n] = (int)n;
	}
	assert_int_equal(cap, 1024);
	for (size_t n = 0; n < 1000; n++)
		assert_int_equal(a[n], (int)n);
	assert_int_equal(vtl_grow_to((void **)&a, &cap, 1024, sizeof *a), VTL_OK);
	assert_int_equal(cap, 1024); /* enough already: untouched */
	assert_int_equal(vtl_grow_to((void **)&a, &cap, 5000, sizeof *a), VTL_OK);
	assert_int_equal(cap, 8192);
	free(a);
}

static void overflowing_sizes_are_refused(void **state)
{
	(void)state;
	char *a = NULL;
	size_t cap = 0;
	assert_int_equal(vtl_grow((void **)&a, &cap, SIZE_MAX, 1), VTL_E_NOMEM);
	assert_int_equal(vtl_grow_to((void **)&a, &cap, SIZE_MAX / 2 + 2, 1), VTL_E_NOMEM);
	assert_int_equal(vtl_grow_to((void **)&a, &cap, 64, SIZE_MAX / 8), VTL_E_NOMEM);
	assert_int_equal(vtl_grow_to((void **)&a, &cap, 1, 0), VTL_E_INVAL);
	assert_null(a);
	assert_int_equal(cap, 0);
	int v[7];
	assert_int_equal(VTL_ARRAY_SIZE(v), 7);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(grows_by_doubling),
		cmocka_unit_test(overflowing_sizes_are_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
