/* SPDX-License-Identifier: Apache-2.0 */
/* Host ingest first (migrator/ingest.h): what the copies may read while hosts write. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>

#include "migrator/ingest.h"
#include "migrator/phys_sim.h"

#define MBS 1000000ull

static void the_copies_share_what_the_hosts_leave(void **state)
{
	(void)state;
	/* A 600 MB/s pool, hosts at 200: 400 left for two copies, or four. */
	uint64_t two[] = {20 * MBS, 20 * MBS}, four[] = {20 * MBS, 20 * MBS, 20 * MBS, 20 * MBS};
	assert_int_equal(ingest_left(600 * MBS, 200 * MBS), 400 * MBS);
	assert_int_equal(ingest_copy_share(ingest_left(600 * MBS, 200 * MBS), two, 2, 20 * MBS), 200 * MBS);
	assert_int_equal(ingest_copy_share(ingest_left(600 * MBS, 200 * MBS), four, 4, 20 * MBS), 100 * MBS);
	/* Hosts take almost everything, or more than the pool's rate: each copy keeps its floor. */
	assert_int_equal(ingest_copy_share(ingest_left(600 * MBS, 590 * MBS), four, 4, 20 * MBS), 20 * MBS);
	assert_int_equal(ingest_left(600 * MBS, 900 * MBS), 0);
	assert_int_equal(ingest_copy_share(0, four, 1, 20 * MBS), 20 * MBS);
	/* A floor of 0 with nothing left is the slowest rate, never "no limit". */
	uint64_t none[] = {0, 0, 0};
	assert_int_equal(ingest_copy_share(0, none, 3, 0), 1);
}

static void copies_with_different_floors_share_what_is_left(void **state)
{
	(void)state;
	/* An LTO-9 copy (floor 177) and two LTO-6 copies (53) share 400: the LTO-9 one keeps its floor, the
	 * other two share the rest equally (111.5 each, above their own floors). */
	uint64_t f[] = {177 * MBS, 53 * MBS, 53 * MBS};
	assert_int_equal(ingest_copy_share(400 * MBS, f, 3, 177 * MBS), 177 * MBS);
	assert_int_equal(ingest_copy_share(400 * MBS, f, 3, 53 * MBS), 223 * MBS / 2);
	/* With 600 all three are above their floors: an equal 200 each. */
	assert_int_equal(ingest_copy_share(600 * MBS, f, 3, 177 * MBS), 200 * MBS);
	assert_int_equal(ingest_copy_share(600 * MBS, f, 3, 53 * MBS), 200 * MBS);
	/* The floors together exceed what is left (283 > 250): every copy keeps its own floor, the hosts lose. */
	assert_int_equal(ingest_copy_share(250 * MBS, f, 3, 177 * MBS), 177 * MBS);
	assert_int_equal(ingest_copy_share(250 * MBS, f, 3, 53 * MBS), 53 * MBS);
}

static void no_budget_no_limit(void **state)
{
	(void)state;
	struct ingest_auto a = {0};
	/* Hosts idle, or no copy: the probe rests and says "no limit". */
	assert_int_equal(ingest_auto_step(&a, 1000, 0, 300 * MBS, 200 * MBS), 0);
	assert_int_equal(ingest_auto_step(&a, 2000, 500 * MBS, 0, 0), 0);
	/* Hosts come while copies run: the copies start at their floors. */
	assert_int_equal(ingest_auto_step(&a, 3000, 500 * MBS, 600 * MBS, 200 * MBS), 200 * MBS);
}

static void a_drive_floor_is_its_lowest_matched_speed(void **state)
{
	(void)state;
	bool est;
	assert_true(phys_lto_min_matched_mbs(8, &est) == 112 && !est); /* IBM full-height LTO-8, L8 media */
	assert_true(phys_lto_min_matched_mbs(9, &est) == 177 && !est);
	double lto6 = phys_lto_min_matched_mbs(6, &est); /* no published figure found: a third of native */
	assert_true(est && lto6 > 53 && lto6 < 54);
	assert_true(phys_lto_min_matched_mbs(4, &est) == 0);
}

/*
 * A simulated pool whose rate moves: 1000 MB/s, then 400 (the disk slows, as
 * this VM's did by 4x), then 1000 again. The hosts ask 600 MB/s, four LTO-6
 * copies 160 each (floors 54). When the two together ask more than the pool
 * gives, it gives each in proportion to what it asks. vtld's report is the
 * hosts' 5 s average, once a second; the probe steps on it.
 */
#define SIM_S 900
#define HOSTS_ASK (600.0 * MBS)
#define COPIES 4
#define COPY_ASK (160.0 * MBS)
#define FLOOR (54 * MBS)

static double sim_pool(unsigned t)
{
	return (t < 300 || t >= 600 ? 1000.0 : 400.0) * MBS;
}

struct sim_run {
	double host[SIM_S], copies[SIM_S];
	uint64_t budget[SIM_S];
};

static void sim_pool_run(struct sim_run *run)
{
	struct ingest_auto a = {0};
	uint64_t floors[COPIES], floors_sum = COPIES * FLOOR, budget = 0;
	for (unsigned i = 0; i < COPIES; i++)
		floors[i] = FLOOR;
	double window[5] = {0}, copies_now = 0;
	for (unsigned t = 0; t < SIM_S; t++) {
		/* Each copy reads its share of the budget (no more than it asks); the pool gives what it can. */
		double each = budget ? (double)ingest_copy_share(budget, floors, COPIES, FLOOR) : COPY_ASK;
		double c_ask = COPIES * (each < COPY_ASK ? each : COPY_ASK), p = sim_pool(t);
		double h = HOSTS_ASK, c = c_ask;
		if (h + c > p) {
			h = p * HOSTS_ASK / (HOSTS_ASK + c_ask);
			c = p * c_ask / (HOSTS_ASK + c_ask);
		}
		run->host[t] = h;
		run->copies[t] = copies_now = c;
		window[t % 5] = h;
		double report = 0;
		for (unsigned i = 0; i < 5; i++)
			report += window[i] / 5;
		uint64_t before = budget;
		budget = ingest_auto_step(&a, (uint64_t)t * 1000, (uint64_t)report, (uint64_t)copies_now, floors_sum);
		run->budget[t] = budget;
		/* Floors hold: never under them, and no step larger than its bound. */
		assert_true(budget >= floors_sum);
		if (before && budget > before)
			assert_true(budget - before <= INGEST_AUTO_STEP_MAX);
		if (before && budget < before)
			assert_true((double)budget >= (double)before * INGEST_AUTO_CUT - 1);
		assert_true(ingest_copy_share(budget, floors, COPIES, FLOOR) >= FLOOR);
	}
}

static double mean(const double *v, unsigned from, unsigned to)
{
	double s = 0;
	for (unsigned i = from; i < to; i++)
		s += v[i];
	return s / (to - from);
}

static void the_hosts_share_recovers_and_floors_hold(void **state)
{
	(void)state;
	static struct sim_run run;
	sim_pool_run(&run);
	/* What the hosts get with the copies at their floors, the most the rule can give them (floors hold). */
	double at_floors_fast = 1000.0 * MBS * HOSTS_ASK / (HOSTS_ASK + COPIES * FLOOR);
	at_floors_fast = at_floors_fast < HOSTS_ASK ? at_floors_fast : HOSTS_ASK; /* 816 asked of 1000: all of it */
	double at_floors_slow = 400.0 * MBS * HOSTS_ASK / (HOSTS_ASK + COPIES * FLOOR);
	double h1 = mean(run.host, 60, 300), c1 = mean(run.copies, 60, 300);
	double h2 = mean(run.host, 360, 600), c2 = mean(run.copies, 360, 600);
	double h3 = mean(run.host, 660, 900), c3 = mean(run.copies, 660, 900);
	print_message("pool 1000: hosts %.0f MB/s (%.2f of asked), copies %.0f; pool 400: hosts %.0f (%.2f of the "
		      "most with copies at floors), copies %.0f; pool 1000 again: hosts %.0f, copies %.0f\n",
		      h1 / MBS, h1 / HOSTS_ASK, c1 / MBS, h2 / MBS, h2 / at_floors_slow, c2 / MBS, h3 / MBS, c3 / MBS);
	/* The baseline of the same model: the copies not held back, each reading all it asks. */
	double unheld_fast = 1000.0 * MBS * HOSTS_ASK / (HOSTS_ASK + COPIES * COPY_ASK);
	double unheld_slow = 400.0 * MBS * HOSTS_ASK / (HOSTS_ASK + COPIES * COPY_ASK);
	print_message("no rule: hosts %.0f MB/s on the pool of 1000 (%.2f of asked), %.0f on 400; copies at their floors: "
		      "hosts %.0f on 1000, %.0f on 400\n", unheld_fast / MBS, unheld_fast / HOSTS_ASK, unheld_slow / MBS,
		      at_floors_fast / MBS, at_floors_slow / MBS);
	assert_true(h1 > unheld_fast && h2 > unheld_slow); /* the probe does better for the hosts than no rule */
	/* Copies added to a fast pool: the hosts keep 0.85 of their own rate, and the copies found the room. */
	assert_true(h1 >= 0.85 * HOSTS_ASK);
	assert_true(c1 >= 1.5 * COPIES * FLOOR);
	/* The disk slows to 400: the hosts' share recovers to near the most the floors leave them ... */
	assert_true(h2 >= 0.85 * at_floors_slow);
	/* ... within a minute of the drop, the budget is back near the floors ... */
	uint64_t lowest = UINT64_MAX;
	for (unsigned t = 300; t < 360; t++)
		lowest = run.budget[t] < lowest ? run.budget[t] : lowest;
	assert_true(lowest <= COPIES * FLOOR + INGEST_AUTO_STEP_MIN);
	/* ... and the copies still read at least their floors together. */
	assert_true(c2 >= 0.9 * 400.0 * MBS * COPIES * FLOOR / (HOSTS_ASK + COPIES * FLOOR));
	/* The disk is fast again: the hosts back at 0.85 of their rate, the copies probe the room back. */
	assert_true(h3 >= 0.85 * HOSTS_ASK);
	assert_true(c3 >= 1.5 * COPIES * FLOOR);
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
		cmocka_unit_test(copies_with_different_floors_share_what_is_left),
		cmocka_unit_test(no_budget_no_limit),
		cmocka_unit_test(a_drive_floor_is_its_lowest_matched_speed),
		cmocka_unit_test(the_hosts_share_recovers_and_floors_hold),
		cmocka_unit_test(a_report_goes_stale),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
