/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The per-unit worker: commands of one unit run one at a time in submission
 * order, on the worker's own thread, while two units run side by side; a
 * stop runs what was queued first; a gate runs before each command, on the
 * worker's thread.
 */
#include "tests/unit/testlib.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "vtl/lu_worker.h"

#define N 200

struct unit {
	atomic_int running;   /* commands executing at once: must stay 1 */
	int order[N];
	atomic_int n;
	atomic_int overlap;
	pthread_t caller;
	atomic_int on_caller;
	int delay_us;
};

static void exec(void *dev, struct scsi_cmd *c)
{
	struct unit *u = dev;
	if (atomic_fetch_add(&u->running, 1) != 0)
		atomic_fetch_add(&u->overlap, 1);
	if (pthread_equal(pthread_self(), u->caller))
		atomic_fetch_add(&u->on_caller, 1);
	if (u->delay_us) {
		struct timespec ts = {0, u->delay_us * 1000L};
		nanosleep(&ts, NULL);
	}
	u->order[atomic_fetch_add(&u->n, 1)] = (int)c->cdb[0] << 8 | c->cdb[1];
	atomic_fetch_sub(&u->running, 1);
}

static atomic_int done_count;
static void done(struct lu_work *w)
{
	(void)w;
	atomic_fetch_add(&done_count, 1);
}

static void runs_in_order_one_at_a_time(void **state)
{
	(void)state;
	static struct unit a, b;
	memset(&a, 0, sizeof a);
	memset(&b, 0, sizeof b);
	a.caller = b.caller = pthread_self();
	b.delay_us = 1000; /* a slow unit must not hold up the other */
	struct lu_worker *wa, *wb;
	EXPECT_RC(lu_worker_start(exec, &a, &wa), 0);
	EXPECT_RC(lu_worker_start(exec, &b, &wb), 0);
	static struct scsi_cmd ca[N], cb[N];
	static struct lu_work wka[N], wkb[N];
	done_count = 0;
	for (int i = 0; i < N; i++) {
		ca[i].cdb[0] = (uint8_t)(i >> 8);
		ca[i].cdb[1] = (uint8_t)i;
		cb[i] = ca[i];
		wka[i] = (struct lu_work){.cmd = &ca[i], .done = done};
		wkb[i] = (struct lu_work){.cmd = &cb[i], .done = done};
		lu_worker_submit(wa, &wka[i]);
		lu_worker_submit(wb, &wkb[i]);
	}
	/* The fast unit finishes long before the slow one. */
	for (int spins = 0; atomic_load(&a.n) < N && spins < 10000; spins++) {
		struct timespec ts = {0, 100000};
		nanosleep(&ts, NULL);
	}
	assert_int_equal(atomic_load(&a.n), N);
	assert_true(atomic_load(&b.n) < N);
	lu_worker_stop(wb); /* runs what is still queued */
	lu_worker_stop(wa);
	assert_int_equal(atomic_load(&b.n), N);
	assert_int_equal(done_count, 2 * N);
	for (int i = 0; i < N; i++) {
		assert_int_equal(a.order[i], i);
		assert_int_equal(b.order[i], i);
	}
	assert_int_equal(atomic_load(&a.overlap) + atomic_load(&b.overlap), 0);
	assert_int_equal(atomic_load(&a.on_caller) + atomic_load(&b.on_caller), 0);
}

/* The gate sees each command just before it runs: exec finds the gate's count one ahead of its own. */
static atomic_int gated;
static int gated_at_exec[N];

static void gate(void *arg, const struct scsi_cmd *c)
{
	struct unit *u = arg;
	(void)c;
	if (pthread_equal(pthread_self(), u->caller))
		atomic_fetch_add(&u->on_caller, 1);
	atomic_fetch_add(&gated, 1);
}

static void exec_after_gate(void *dev, struct scsi_cmd *c)
{
	struct unit *u = dev;
	gated_at_exec[atomic_load(&u->n)] = atomic_load(&gated);
	exec(dev, c);
}

static void gate_runs_before_each_command(void **state)
{
	(void)state;
	static struct unit u;
	memset(&u, 0, sizeof u);
	u.caller = pthread_self();
	gated = 0;
	struct lu_worker *w;
	EXPECT_RC(lu_worker_start(exec_after_gate, &u, &w), 0);
	lu_worker_set_gate(w, gate, &u);
	static struct scsi_cmd c[N];
	static struct lu_work wk[N];
	for (int i = 0; i < N; i++) {
		c[i].cdb[1] = (uint8_t)i;
		wk[i] = (struct lu_work){.cmd = &c[i], .done = done};
		lu_worker_submit(w, &wk[i]);
	}
	lu_worker_stop(w);
	assert_int_equal(atomic_load(&gated), N);
	for (int i = 0; i < N; i++)
		assert_int_equal(gated_at_exec[i], i + 1);
	assert_int_equal(atomic_load(&u.on_caller), 0);
}

/* What the metrics count: each command the unit ran, its data by direction, its CHECK CONDITIONs by sense key. */
static void answer(void *dev, struct scsi_cmd *c)
{
	(void)dev;
	if (c->cdb[0] == 0x01) /* REWIND: fails NOT READY */
		scsi_fail(c, sense_of(SK_NOT_READY, ASC_MEDIUM_NOT_PRESENT));
	else
		scsi_done(c, c->xfer_len);
}

static atomic_int counted_done;
static void counted(struct lu_work *w)
{
	(void)w;
	atomic_fetch_add(&counted_done, 1);
}

static void counts_commands_data_and_checks(void **state)
{
	(void)state;
	struct lu_worker *wk;
	EXPECT_RC(lu_worker_start(answer, NULL, &wk), 0);
	static struct scsi_cmd cmds[4];
	static struct lu_work works[4];
	memset(cmds, 0, sizeof cmds);
	cmds[0] = (struct scsi_cmd){.cdb = {0x0A}, .dir = SCSI_DIR_OUT, .xfer_len = 65536};  /* WRITE(6) */
	cmds[1] = (struct scsi_cmd){.cdb = {0x08}, .dir = SCSI_DIR_IN, .xfer_len = 4096};    /* READ(6) */
	cmds[2] = (struct scsi_cmd){.cdb = {0x01}, .dir = SCSI_DIR_NONE};                    /* REWIND */
	cmds[3] = (struct scsi_cmd){.cdb = {0x0A}, .dir = SCSI_DIR_OUT, .xfer_len = 100};
	atomic_store(&counted_done, 0);
	for (int i = 0; i < 4; i++) {
		works[i] = (struct lu_work){.cmd = &cmds[i], .done = counted};
		lu_worker_submit(wk, &works[i]);
	}
	while (atomic_load(&counted_done) < 4) {
		struct timespec ts = {0, 1000000};
		nanosleep(&ts, NULL);
	}
	struct lu_counts n;
	lu_worker_counts(wk, &n);
	assert_int_equal(n.commands, 4);
	assert_int_equal(n.data_out_bytes, 65636);
	assert_int_equal(n.data_in_bytes, 4096);
	assert_int_equal(n.checks[SK_NOT_READY], 1);
	uint64_t checks = 0;
	for (int k = 0; k < LU_SENSE_KEYS; k++)
		checks += n.checks[k];
	assert_int_equal(checks, 1);
	lu_worker_stop(wk);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(runs_in_order_one_at_a_time),
		cmocka_unit_test(gate_runs_before_each_command),
		cmocka_unit_test(counts_commands_data_and_checks),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
