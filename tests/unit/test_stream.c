/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The streaming engine: every byte reaches the sink once and in order with
 * several readers; a slow source makes the writer wait in bursts of the
 * watermark, not block by block; a slow sink makes the readers wait; errors
 * of either side and a cancel stop the run; the rate limit holds.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "common/vtl_error.h"
#include "migrator/stream.h"

static uint8_t byte_at(uint64_t off)
{
	return (uint8_t)(off * 7 + (off >> 11));
}

struct src {
	unsigned sleep_us;
	uint64_t fail_at; /* offset of the block whose read fails (0: none) */
};

static void pause_us(unsigned us)
{
	struct timespec ts = {us / 1000000, (long)(us % 1000000) * 1000};
	nanosleep(&ts, NULL);
}

static int src_read(void *arg, uint64_t off, void *buf, size_t len)
{
	struct src *s = arg;
	if (s->sleep_us)
		pause_us(s->sleep_us);
	if (s->fail_at && off == s->fail_at)
		return VTL_E_MEDIUM;
	uint8_t *p = buf;
	for (size_t i = 0; i < len; i++)
		p[i] = byte_at(off + i);
	return VTL_OK;
}

struct sink {
	uint64_t at;        /* bytes taken */
	uint64_t blocks;
	unsigned sleep_us;
	uint64_t fail_after; /* blocks after which a write fails (0: never) */
	atomic_bool *cancel_after_half;
	uint64_t total;
	bool bad;
};

static int sink_write(void *arg, const void *buf, size_t len)
{
	struct sink *k = arg;
	if (k->fail_after && k->blocks == k->fail_after)
		return VTL_E_IO;
	const uint8_t *p = buf;
	for (size_t i = 0; i < len; i++)
		if (p[i] != byte_at(k->at + i))
			k->bad = true;
	k->at += len;
	k->blocks++;
	if (k->sleep_us)
		pause_us(k->sleep_us);
	if (k->cancel_after_half && k->at >= k->total / 2)
		atomic_store(k->cancel_after_half, true);
	return VTL_OK;
}

static struct stream_job job_of(struct src *s, struct sink *k, uint64_t total)
{
	k->total = total;
	return (struct stream_job){.cfg = {.buffers = 8, .buffer_size = 65536, .watermark = 4, .readers = 3},
				   .total = total, .read = src_read, .read_arg = s, .write = sink_write, .write_arg = k};
}

static void every_byte_in_order(void **state)
{
	(void)state;
	struct src s = {0};
	struct sink k = {0};
	uint64_t total = 100 * 65536 + 1234; /* the last block is short */
	struct stream_job j = job_of(&s, &k, total);
	struct stream_counters c;
	assert_int_equal(stream_run(&j, &c), VTL_OK);
	assert_false(k.bad);
	assert_int_equal(k.at, total);
	assert_int_equal(c.bytes, total);
	assert_int_equal(c.blocks, 101);
	assert_int_equal(k.blocks, 101);
	/* Nothing at all is a run too. */
	k = (struct sink){0};
	j = job_of(&s, &k, 0);
	assert_int_equal(stream_run(&j, &c), VTL_OK);
	assert_int_equal(k.blocks, 0);
}

/* A source slower than the sink: the writer waits, but each wait ends only with a burst of the watermark. */
static void slow_source_waits_in_bursts(void **state)
{
	(void)state;
	struct src s = {.sleep_us = 3000};
	struct sink k = {0};
	struct stream_job j = job_of(&s, &k, 120 * 65536);
	j.cfg.readers = 1;
	struct stream_counters c;
	assert_int_equal(stream_run(&j, &c), VTL_OK);
	assert_false(k.bad);
	assert_true(c.writer_waits >= 5);
	assert_true(c.writer_waits <= 120 / 4 + 1);
	assert_true(c.writer_delays >= c.writer_waits);
	assert_int_equal(c.reader_waits, 0);
	assert_int_equal(c.gaps, 0); /* a burst of 4 blocks at 3 ms a block: no wait near a second */
}

/* A source that stalls for longer than STREAM_GAP_MS: one gap, a likely back-hitch on a real drive. */
static int stalling_read(void *arg, uint64_t off, void *buf, size_t len)
{
	if (off == 20 * 65536)
		pause_us(STREAM_GAP_MS * 1000 + 200000);
	return src_read(arg, off, buf, len);
}

static void long_stall_counts_a_gap(void **state)
{
	(void)state;
	struct src s = {0};
	struct sink k = {0};
	struct stream_job j = job_of(&s, &k, 40 * 65536);
	j.cfg.readers = 1;
	j.read = stalling_read;
	struct stream_counters c;
	assert_int_equal(stream_run(&j, &c), VTL_OK);
	assert_false(k.bad);
	assert_int_equal(c.gaps, 1);
}

/* A sink slower than the source: the readers wait for empty buffers; the writer never does. */
static void slow_sink_makes_readers_wait(void **state)
{
	(void)state;
	struct src s = {0};
	struct sink k = {.sleep_us = 2000};
	struct stream_job j = job_of(&s, &k, 60 * 65536);
	struct stream_counters c;
	assert_int_equal(stream_run(&j, &c), VTL_OK);
	assert_false(k.bad);
	assert_true(c.reader_waits > 10);
	assert_int_equal(c.writer_waits, 0);
	assert_true(c.avg_mbs > 0);
	assert_true(c.min_mbs <= c.avg_mbs + 1e-9 && c.max_mbs >= c.min_mbs);
}

static void errors_and_cancel_stop_the_run(void **state)
{
	(void)state;
	struct src s = {.fail_at = 30 * 65536};
	struct sink k = {0};
	struct stream_job j = job_of(&s, &k, 80 * 65536);
	struct stream_counters c;
	assert_int_equal(stream_run(&j, &c), VTL_E_MEDIUM);
	assert_true(k.blocks <= 30); /* never past the block that could not be read */
	assert_false(k.bad);

	s = (struct src){0};
	k = (struct sink){.fail_after = 10};
	j = job_of(&s, &k, 80 * 65536);
	assert_int_equal(stream_run(&j, &c), VTL_E_IO);
	assert_int_equal(c.blocks, 10);

	atomic_bool cancel = false;
	k = (struct sink){.cancel_after_half = &cancel};
	j = job_of(&s, &k, 80 * 65536);
	j.cancel = &cancel;
	assert_int_equal(stream_run(&j, &c), VTL_E_BUSY);
	assert_true(c.blocks >= 40 && c.blocks < 80);

	j.cfg.buffers = 1;
	assert_int_equal(stream_run(&j, &c), VTL_E_INVAL);
}

static double limit_20mbs(void *arg)
{
	(void)arg;
	return 20e6;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void rate_limit_holds(void **state)
{
	(void)state;
	struct src s = {0};
	struct sink k = {0};
	struct stream_job j = job_of(&s, &k, 64 * 65536); /* 4 MiB at 20 MB/s: at least 0.2 s */
	j.cfg.rate_limit = limit_20mbs;
	struct stream_counters c;
	double t0 = now_s();
	assert_int_equal(stream_run(&j, &c), VTL_OK);
	assert_true(now_s() - t0 >= 63.0 * 65536 / 20e6);
	assert_true(c.throttled > 50);
	assert_true(c.avg_mbs < 21);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_byte_in_order),
		cmocka_unit_test(slow_source_waits_in_bursts),
		cmocka_unit_test(slow_sink_makes_readers_wait),
		cmocka_unit_test(errors_and_cancel_stop_the_run),
		cmocka_unit_test(rate_limit_holds),
		cmocka_unit_test(long_stall_counts_a_gap),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
