/* SPDX-License-Identifier: Apache-2.0 */
/* Host ingest first (migrator/ingest.h): what the copies may read while hosts write. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "migrator/ingest.h"

#define MBS 1000000ull

static void the_copies_share_what_the_hosts_leave(void **state)
{
	(void)state;
	/* A 600 MB/s pool, hosts at 200: 400 left for two copies. */
	assert_int_equal(ingest_copy_limit(600 * MBS, 20 * MBS, 200 * MBS, 2), 200 * MBS);
	assert_int_equal(ingest_copy_limit(600 * MBS, 20 * MBS, 200 * MBS, 4), 100 * MBS);
	/* Hosts take almost everything: each copy keeps its floor. */
	assert_int_equal(ingest_copy_limit(600 * MBS, 20 * MBS, 590 * MBS, 4), 20 * MBS);
	/* Hosts above the pool's rate: the floor still. */
	assert_int_equal(ingest_copy_limit(600 * MBS, 20 * MBS, 900 * MBS, 1), 20 * MBS);
	/* A floor of 0 with nothing left is the slowest rate, never "no limit". */
	assert_int_equal(ingest_copy_limit(600 * MBS, 0, 600 * MBS, 3), 1);
}

static void no_rule_no_hosts_no_copies_no_limit(void **state)
{
	(void)state;
	assert_int_equal(ingest_copy_limit(0, 20 * MBS, 500 * MBS, 2), 0);   /* pool_rate 0: off */
	assert_int_equal(ingest_copy_limit(600 * MBS, 20 * MBS, 0, 2), 0);   /* hosts idle */
	assert_int_equal(ingest_copy_limit(600 * MBS, 20 * MBS, 100 * MBS, 0), 0);
}

static void a_report_goes_stale(void **state)
{
	(void)state;
	struct ingest g = {0};
	assert_int_equal(ingest_host(&g, 5000), 0); /* never reported */
	ingest_note(&g, 10000, 300 * MBS);
	assert_int_equal(ingest_host(&g, 10000), 300 * MBS);
	assert_int_equal(ingest_host(&g, 10000 + INGEST_STALE_MS), 300 * MBS);
	assert_int_equal(ingest_host(&g, 10000 + INGEST_STALE_MS + 1), 0); /* vtld stopped reporting */
	ingest_note(&g, 20000, 0); /* the hosts stopped: vtld says so once */
	assert_int_equal(ingest_host(&g, 20001), 0);
	ingest_note(&g, 0, 50 * MBS); /* a report at time 0 still counts */
	assert_int_equal(ingest_host(&g, 0), 50 * MBS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(the_copies_share_what_the_hosts_leave),
		cmocka_unit_test(no_rule_no_hosts_no_copies_no_limit),
		cmocka_unit_test(a_report_goes_stale),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
