/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The drive scheduler's decision (migrator/sched.h): queued work spreads over
 * every drive, one job per drive; recalls go first and stop exactly one copy
 * when no drive is free; recall_drives keeps drives for recalls; a pinned
 * job waits for its drive while later jobs take the others.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "migrator/sched.h"

#define M CAT_JOB_MIGRATE
#define R CAT_JOB_RECALL
#define V CAT_JOB_VERIFY
#define ANY CAT_JOB_DRIVE_ANY

/* The drive the plan starts job id on, or -1. */
static int drive_of(const struct sched_plan *p, const struct sched_job *q, int64_t id)
{
	for (unsigned i = 0; i < p->nstart; i++)
		if (q[p->start[i].job].id == id)
			return (int)p->start[i].drive;
	return -1;
}

static void four_copies_take_four_drives(void **state)
{
	(void)state;
	struct sched_job q[] = {{1, M, ANY}, {2, M, ANY}, {3, M, ANY}, {4, M, ANY}, {5, M, ANY}};
	struct sched_drive d[4] = {{0}};
	struct sched_plan p;
	sched_plan(q, 5, d, 4, 0, &p);
	assert_int_equal(p.nstart, 4);
	assert_int_equal(p.npreempt, 0);
	for (int64_t id = 1; id <= 4; id++)
		assert_int_equal(drive_of(&p, q, id), (int)id - 1);
	assert_int_equal(drive_of(&p, q, 5), -1); /* no fifth drive: it waits */
}

static void a_running_job_is_not_started_again(void **state)
{
	(void)state;
	struct sched_job q[] = {{1, M, ANY}, {2, M, ANY}};
	struct sched_drive d[2] = {{.job = 1, .kind = M, .started = 1}, {0}};
	struct sched_plan p;
	sched_plan(q, 2, d, 2, 0, &p);
	assert_int_equal(p.nstart, 1);
	assert_int_equal(drive_of(&p, q, 2), 1);
}

static void a_recall_takes_a_free_drive_first(void **state)
{
	(void)state;
	struct sched_job q[] = {{1, M, ANY}, {2, M, ANY}, {3, R, ANY}};
	struct sched_drive d[2] = {{0}};
	struct sched_plan p;
	sched_plan(q, 3, d, 2, 0, &p);
	assert_int_equal(p.nstart, 2);
	assert_int_equal(drive_of(&p, q, 3), 0); /* the newer recall goes before the older copies */
	assert_int_equal(drive_of(&p, q, 1), 1);
	assert_int_equal(p.npreempt, 0);
}

static void a_recall_stops_exactly_one_copy_when_none_is_free(void **state)
{
	(void)state;
	struct sched_job q[] = {{9, R, ANY}, {10, M, ANY}};
	struct sched_drive d[4] = {{.job = 1, .kind = M, .started = 1},
				   {.job = 2, .kind = M, .started = 4},
				   {.job = 3, .kind = V, .started = 2},
				   {.job = 4, .kind = M, .started = 3}};
	struct sched_plan p;
	sched_plan(q, 2, d, 4, 0, &p);
	assert_int_equal(p.nstart, 0);
	assert_int_equal(p.npreempt, 1);
	assert_int_equal(p.preempt[0], 1); /* the copy started last */
	/* While it stops, the next plan stops no other, and starts nothing on its drive. */
	d[1].stopping = true;
	sched_plan(q, 2, d, 4, 0, &p);
	assert_int_equal(p.npreempt, 0);
	assert_int_equal(p.nstart, 0);
	/* Once it has stopped, the recall takes its drive, not the queued copy. */
	d[1] = (struct sched_drive){0};
	sched_plan(q, 2, d, 4, 0, &p);
	assert_int_equal(p.nstart, 1);
	assert_int_equal(drive_of(&p, q, 9), 1);
}

static void a_copy_stops_before_a_verify(void **state)
{
	(void)state;
	struct sched_job q[] = {{9, R, ANY}};
	struct sched_drive d[2] = {{.job = 1, .kind = M, .started = 1}, {.job = 2, .kind = V, .started = 2}};
	struct sched_plan p;
	sched_plan(q, 1, d, 2, 0, &p);
	assert_int_equal(p.npreempt, 1);
	assert_int_equal(p.preempt[0], 0); /* the older copy, not the newer verify */
	d[0].kind = V;
	sched_plan(q, 1, d, 2, 0, &p);
	assert_int_equal(p.npreempt, 1);
	assert_int_equal(p.preempt[0], 1); /* two verifies: the one started last */
}

static void recalls_never_stop_recalls(void **state)
{
	(void)state;
	struct sched_job q[] = {{9, R, ANY}};
	struct sched_drive d[2] = {{.job = 1, .kind = R, .started = 1}, {.job = 2, .kind = R, .started = 2}};
	struct sched_plan p;
	sched_plan(q, 1, d, 2, 0, &p);
	assert_int_equal(p.nstart, 0);
	assert_int_equal(p.npreempt, 0);
}

static void recall_drives_stay_free_for_recalls(void **state)
{
	(void)state;
	struct sched_job q[] = {{1, M, ANY}, {2, M, ANY}, {3, M, ANY}, {4, M, ANY}};
	struct sched_drive d[4] = {{0}};
	struct sched_plan p;
	sched_plan(q, 4, d, 4, 1, &p);
	assert_int_equal(p.nstart, 3);
	assert_int_equal(drive_of(&p, q, 4), -1);
	/* Three copies run: the recall takes the fourth drive and stops nothing. */
	struct sched_job r[] = {{4, M, ANY}, {5, R, ANY}};
	for (unsigned i = 0; i < 3; i++)
		d[i] = (struct sched_drive){.job = (int64_t)i + 1, .kind = M, .started = i + 1};
	sched_plan(r, 2, d, 4, 1, &p);
	assert_int_equal(p.nstart, 1);
	assert_int_equal(drive_of(&p, r, 5), 3);
	assert_int_equal(p.npreempt, 0);
	/* With the recall running, copies still get no more than drives - recall_drives. */
	d[3] = (struct sched_drive){.job = 5, .kind = R, .started = 4};
	d[0] = (struct sched_drive){0};
	sched_plan(r, 1, d, 4, 1, &p);
	assert_int_equal(p.nstart, 1);
	assert_int_equal(drive_of(&p, r, 4), 0);
}

static void a_pinned_job_waits_for_its_drive(void **state)
{
	(void)state;
	struct sched_job q[] = {{5, M, 2}, {6, M, ANY}, {7, M, 9}};
	struct sched_drive d[3] = {{0}, {0}, {.job = 1, .kind = M, .started = 1}};
	struct sched_plan p;
	sched_plan(q, 3, d, 3, 0, &p);
	assert_int_equal(drive_of(&p, q, 5), -1); /* drive 2 is busy: job 5 waits */
	assert_int_equal(drive_of(&p, q, 6), 0);  /* and a later job goes ahead on another drive */
	assert_int_equal(drive_of(&p, q, 7), -1); /* no drive 9: never started */
	assert_int_equal(p.nstart, 1);
	d[2] = (struct sched_drive){0};
	sched_plan(q, 3, d, 3, 0, &p);
	assert_int_equal(drive_of(&p, q, 5), 2);
	assert_int_equal(drive_of(&p, q, 6), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(four_copies_take_four_drives),
		cmocka_unit_test(a_running_job_is_not_started_again),
		cmocka_unit_test(a_recall_takes_a_free_drive_first),
		cmocka_unit_test(a_recall_stops_exactly_one_copy_when_none_is_free),
		cmocka_unit_test(a_copy_stops_before_a_verify),
		cmocka_unit_test(recalls_never_stop_recalls),
		cmocka_unit_test(recall_drives_stay_free_for_recalls),
		cmocka_unit_test(a_pinned_job_waits_for_its_drive),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
