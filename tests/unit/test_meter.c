/* SPDX-License-Identifier: Apache-2.0 */
/* The throughput meter behind `vtlctl status`: rates over the last samples, restarts, edges. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "common/meter.h"

static void no_rate_without_two_samples(void **state)
{
	(void)state;
	struct meter m = {0};
	assert_true(meter_rate(&m) == 0);
	assert_true(meter_age(&m, 5) == UINT64_MAX);
	meter_sample(&m, 1000, 500);
	assert_true(meter_rate(&m) == 0);
	assert_int_equal(meter_age(&m, 1400), 400);
}

/* 100 MB a second for a while, then idle: the rate follows the last five intervals only. */
static void rate_over_the_window(void **state)
{
	(void)state;
	struct meter m = {0};
	uint64_t v = 0;
	for (uint64_t t = 0; t <= 10000; t += 1000, v += 100000000)
		meter_sample(&m, t, v);
	assert_true(meter_rate(&m) > 99.9e6 && meter_rate(&m) < 100.1e6);
	v -= 100000000;
	for (uint64_t t = 11000; t <= 13000; t += 1000)
		meter_sample(&m, t, v);
	/* Samples 8..13 s: 2 of 5 intervals carried 100 MB each. */
	assert_true(meter_rate(&m) > 39.9e6 && meter_rate(&m) < 40.1e6);
	for (uint64_t t = 14000; t <= 16000; t += 1000)
		meter_sample(&m, t, v);
	assert_true(meter_rate(&m) == 0);
}

/* A counter that goes back (a new load) starts the window afresh instead of showing a huge rate. */
static void counter_reset_restarts(void **state)
{
	(void)state;
	struct meter m = {0};
	meter_sample(&m, 0, 0);
	meter_sample(&m, 1000, 5000000000ull);
	meter_sample(&m, 2000, 1000);
	assert_true(meter_rate(&m) == 0);
	meter_sample(&m, 2500, 1000 + 50000000);
	assert_true(meter_rate(&m) > 99.9e6 && meter_rate(&m) < 100.1e6);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(no_rate_without_two_samples),
		cmocka_unit_test(rate_over_the_window),
		cmocka_unit_test(counter_reset_restarts),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
