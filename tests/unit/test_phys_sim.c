/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The simulated physical library, as the migrator uses it: the changer's
 * elements and moves, blocks and filemarks written and read back, positions,
 * the end of the tape, injected faults, state kept across a reopen, and the
 * timing model (streaming with no back-hitch when fed fast enough, back-hitches
 * when fed below the slowest speed), and four drives written and read at
 * once on four threads while the changer answers inventories and moves.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "common/vtl_error.h"
#include "migrator/phys_sim.h"
#include "tests/unit/testlib.h"

static struct phys_sim_config base_cfg(const char *dir)
{
	return (struct phys_sim_config){.generation = 9, .drives = 2, .slots = 6, .mail_slots = 2, .tapes = 4,
					.capacity = 64u << 20, .data_dir = dir};
}

static struct phys_lib *open_sim(const struct phys_sim_config *cfg)
{
	struct phys_lib *l = NULL;
	char err[256] = "";
	int rc = phys_sim_open(cfg, &l, err, sizeof err);
	if (rc)
		fail_msg("phys_sim_open: %s", err);
	return l;
}

#define OPS(l) ((l)->ops)

static void inventory_and_moves(void **state)
{
	struct fx *f = *state;
	struct phys_sim_config cfg = base_cfg(f->dir);
	struct phys_lib *l = open_sim(&cfg);
	struct phys_element e[32];
	unsigned n = 0;
	assert_int_equal(OPS(l)->inventory(l, e, 32, &n), VTL_OK);
	assert_int_equal(n, 2 + 2 + 6);
	int at = phys_find(e, n, "PHY003L9");
	assert_true(at >= 0);
	assert_int_equal(e[at].type, PHYS_ELEM_SLOT);
	assert_int_equal(e[at].address, PHYS_SIM_SLOT0 + 2);
	assert_int_equal(l->drives, 2);
	assert_int_equal(phys_drive_of(l, PHYS_SIM_DRIVE0 + 1), 1);

	/* An empty source, a full destination, an unknown address: refused, with the changer's words. */
	assert_int_equal(OPS(l)->move(l, PHYS_SIM_SLOT0 + 5, PHYS_SIM_DRIVE0), VTL_E_SRC_EMPTY);
	assert_non_null(strstr(phys_error(l), "source element empty"));
	assert_int_equal(OPS(l)->move(l, PHYS_SIM_SLOT0, PHYS_SIM_SLOT0 + 1), VTL_E_DST_FULL);
	assert_int_equal(OPS(l)->move(l, PHYS_SIM_SLOT0, 9999), VTL_E_INVAL);

	struct phys_drive_status st;
	assert_int_equal(OPS(l)->status(l, 0, &st), VTL_OK);
	assert_false(st.ready);
	assert_int_equal(OPS(l)->write_block(l, 0, "x", 1), VTL_E_IO);
	assert_non_null(strstr(phys_error(l), "medium not present"));
	assert_int_equal(OPS(l)->move(l, PHYS_SIM_SLOT0 + 2, PHYS_SIM_DRIVE0), VTL_OK);
	assert_int_equal(OPS(l)->status(l, 0, &st), VTL_OK);
	assert_true(st.ready && st.bot);
	assert_int_equal(OPS(l)->move(l, PHYS_SIM_DRIVE0, PHYS_SIM_IE0), VTL_OK);
	assert_int_equal(OPS(l)->inventory(l, e, 32, &n), VTL_OK);
	at = phys_find(e, n, "PHY003L9");
	assert_int_equal(e[at].type, PHYS_ELEM_IE);
	OPS(l)->close(l);
}

/* Blocks of several sizes and filemarks, read back; positions, spacing, locate, a short buffer, EOD. */
static void write_read_position(void **state)
{
	struct fx *f = *state;
	struct phys_sim_config cfg = base_cfg(f->dir);
	struct phys_lib *l = open_sim(&cfg);
	assert_int_equal(OPS(l)->move(l, PHYS_SIM_SLOT0, PHYS_SIM_DRIVE0 + 1), VTL_OK);
	static uint8_t blk[3][200000], back[200000];
	const size_t sizes[3] = {200000, 4096, 77777};
	for (int i = 0; i < 3; i++)
		gen_data(blk[i], sizes[i], 40 + (uint64_t)i, false);
	/* File 0: blocks 0,1; file 1: block 2. Objects: 0 1 FM 3(=blk2) FM. */
	assert_int_equal(OPS(l)->write_block(l, 1, blk[0], sizes[0]), VTL_OK);
	assert_int_equal(OPS(l)->write_block(l, 1, blk[1], sizes[1]), VTL_OK);
	assert_int_equal(OPS(l)->write_filemarks(l, 1, 1), VTL_OK);
	assert_int_equal(OPS(l)->write_block(l, 1, blk[2], sizes[2]), VTL_OK);
	assert_int_equal(OPS(l)->write_filemarks(l, 1, 1), VTL_OK);
	struct phys_drive_status st;
	assert_int_equal(OPS(l)->status(l, 1, &st), VTL_OK);
	assert_int_equal(st.block, 5);
	assert_int_equal(st.file, 2);
	assert_int_equal(st.written, sizes[0] + sizes[1] + sizes[2]);

	assert_int_equal(OPS(l)->rewind(l, 1), VTL_OK);
	size_t len = 0;
	for (int i = 0; i < 2; i++) {
		assert_int_equal(OPS(l)->read_block(l, 1, back, sizeof back, &len), VTL_OK);
		assert_int_equal(len, sizes[i]);
		assert_memory_equal(back, blk[i], len);
	}
	assert_int_equal(OPS(l)->read_block(l, 1, back, sizeof back, &len), VTL_W_FILEMARK);
	assert_int_equal(OPS(l)->read_block(l, 1, back, 1000, &len), VTL_E_INVAL); /* 77777 bytes do not fit */
	assert_int_equal(OPS(l)->read_block(l, 1, back, sizeof back, &len), VTL_W_FILEMARK);
	assert_int_equal(OPS(l)->read_block(l, 1, back, sizeof back, &len), VTL_E_EOD);
	assert_non_null(strstr(phys_error(l), "end of data"));

	assert_int_equal(OPS(l)->locate(l, 1, 1), VTL_OK);
	assert_int_equal(OPS(l)->read_block(l, 1, back, sizeof back, &len), VTL_OK);
	assert_memory_equal(back, blk[1], sizes[1]);
	assert_int_equal(OPS(l)->space_filemarks(l, 1, 1), VTL_OK); /* past the first filemark: block 3 */
	assert_int_equal(OPS(l)->status(l, 1, &st), VTL_OK);
	assert_int_equal(st.block, 3);
	assert_int_equal(st.file, 1);
	assert_int_equal(OPS(l)->space_filemarks(l, 1, -1), VTL_OK); /* back before that filemark */
	assert_int_equal(OPS(l)->status(l, 1, &st), VTL_OK);
	assert_int_equal(st.block, 2);
	assert_int_equal(OPS(l)->space_filemarks(l, 1, 3), VTL_E_EOD);
	assert_int_equal(OPS(l)->locate(l, 1, 99), VTL_E_EOD);

	/* A write in the middle cuts what follows, as on tape. */
	assert_int_equal(OPS(l)->locate(l, 1, 1), VTL_OK);
	assert_int_equal(OPS(l)->write_block(l, 1, blk[2], sizes[2]), VTL_OK);
	assert_int_equal(OPS(l)->read_block(l, 1, back, sizeof back, &len), VTL_E_EOD);
	OPS(l)->close(l);

	/* Reopened: the tape is still in drive 1 with what was written. */
	l = open_sim(&cfg);
	assert_int_equal(OPS(l)->status(l, 1, &st), VTL_OK);
	assert_true(st.ready);
	assert_int_equal(OPS(l)->read_block(l, 1, back, sizeof back, &len), VTL_OK);
	assert_memory_equal(back, blk[0], sizes[0]);
	assert_int_equal(OPS(l)->read_block(l, 1, back, sizeof back, &len), VTL_OK);
	assert_int_equal(len, sizes[2]);
	assert_memory_equal(back, blk[2], sizes[2]);
	OPS(l)->close(l);
}

/* Early warning near the end, then VOLUME OVERFLOW with nothing written. */
static void end_of_tape(void **state)
{
	struct fx *f = *state;
	struct phys_sim_config cfg = base_cfg(f->dir);
	cfg.capacity = 10u << 20;
	struct phys_lib *l = open_sim(&cfg);
	assert_int_equal(OPS(l)->move(l, PHYS_SIM_SLOT0 + 1, PHYS_SIM_DRIVE0), VTL_OK);
	static uint8_t blk[1 << 20];
	int rc = VTL_OK;
	unsigned written = 0, warned_at = 0;
	while (rc >= 0 && written < 20) {
		rc = OPS(l)->write_block(l, 0, blk, sizeof blk);
		if (rc >= 0)
			written++;
		if (rc == VTL_W_EARLY_WARNING && !warned_at)
			warned_at = written;
	}
	assert_int_equal(rc, VTL_E_EOM);
	assert_int_equal(written, 10);
	assert_int_equal(warned_at, 10);
	assert_non_null(strstr(phys_error(l), "VOLUME OVERFLOW"));
	struct phys_drive_status st;
	assert_int_equal(OPS(l)->status(l, 0, &st), VTL_OK);
	assert_int_equal(st.block, 10);
	assert_true(st.early_warning);
	OPS(l)->close(l);
}

static void injected_faults(void **state)
{
	struct fx *f = *state;
	struct phys_sim_config cfg = base_cfg(f->dir);
	struct phys_lib *l = open_sim(&cfg);
	assert_int_equal(OPS(l)->move(l, PHYS_SIM_SLOT0, PHYS_SIM_DRIVE0), VTL_OK);
	static uint8_t blk[65536];
	struct phys_sim_fault fault = {.write_error_at = 3 * sizeof blk};
	phys_sim_inject(l, 0, &fault);
	for (int i = 0; i < 3; i++)
		assert_int_equal(OPS(l)->write_block(l, 0, blk, sizeof blk), VTL_OK);
	assert_int_equal(OPS(l)->write_block(l, 0, blk, sizeof blk), VTL_E_IO);
	assert_non_null(strstr(phys_error(l), "MEDIUM ERROR, write error"));
	fault = (struct phys_sim_fault){.read_error = true};
	phys_sim_inject(l, 0, &fault);
	assert_int_equal(OPS(l)->rewind(l, 0), VTL_OK);
	size_t len;
	assert_int_equal(OPS(l)->read_block(l, 0, blk, sizeof blk, &len), VTL_E_MEDIUM);
	fault = (struct phys_sim_fault){.offline = true};
	phys_sim_inject(l, 0, &fault);
	assert_int_equal(OPS(l)->rewind(l, 0), VTL_E_IO);
	assert_non_null(strstr(phys_error(l), "offline"));
	assert_int_equal(OPS(l)->move(l, PHYS_SIM_DRIVE0, PHYS_SIM_SLOT0), VTL_E_IO);
	struct phys_drive_status st;
	assert_int_equal(OPS(l)->status(l, 0, &st), VTL_OK);
	assert_false(st.ready);
	OPS(l)->close(l);
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * Fed faster than it streams, the drive takes the data at its native rate
 * and never stops: the writer waits once the buffer is full. Fed below its
 * slowest speed, the buffer runs dry between blocks: back-hitches.
 */
static void timing_model(void **state)
{
	(void)state;
	struct phys_sim_config cfg = {.generation = 7, .drives = 1, .slots = 2, .tapes = 2, .rate_mbs = 200,
				      .buffer = 64u << 20, .backhitch_ms = 20};
	struct phys_lib *l = open_sim(&cfg); /* no data_dir: only lengths and checksums are kept */
	assert_int_equal(OPS(l)->move(l, PHYS_SIM_SLOT0, PHYS_SIM_DRIVE0), VTL_OK);
	static uint8_t blk[1 << 20];
	double t0 = now_s();
	for (int i = 0; i < 160; i++)
		assert_int_equal(OPS(l)->write_block(l, 0, blk, sizeof blk), VTL_OK);
	double took = now_s() - t0;
	/* 160 MiB into a 64 MiB buffer at 200 MB/s: at least the 96 MiB beyond the buffer take their time. */
	assert_true(took > 96.0 * (1 << 20) / 200e6 * 0.9);
	struct phys_sim_stats st;
	phys_sim_stats(l, 0, &st);
	assert_int_equal(st.backhitches, 0);
	assert_true(st.speed_mbs > 199 && st.speed_mbs < 201);
	assert_int_equal(OPS(l)->write_filemarks(l, 0, 1), VTL_OK);
	phys_sim_stats(l, 0, &st);
	assert_int_equal(st.flushes, 1);
	OPS(l)->close(l);

	/* Slow feed: 1 MiB every 25 ms is 42 MB/s, below a third of 200; a 1 MiB buffer runs dry each time. */
	cfg.buffer = 1u << 20;
	cfg.backhitch_ms = 1;
	l = open_sim(&cfg);
	assert_int_equal(OPS(l)->move(l, PHYS_SIM_SLOT0 + 1, PHYS_SIM_DRIVE0), VTL_OK);
	for (int i = 0; i < 12; i++) {
		assert_int_equal(OPS(l)->write_block(l, 0, blk, sizeof blk), VTL_OK);
		struct timespec ts = {0, 25 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
	phys_sim_stats(l, 0, &st);
	assert_true(st.backhitches >= 8);
	assert_true(st.speed_mbs > 66 && st.speed_mbs < 67); /* matched down to its slowest, a third of 200 */
	OPS(l)->close(l);
}

static int setup(void **state)
{
	return fx_setup_dirs(state, "phys-sim", 0);
}

/* One drive's work in drives_at_once: its own blocks written, then read back. */
struct drive_run {
	struct phys_lib *l;
	unsigned d;
	int rc;       /* the first failure */
	unsigned bad; /* blocks that read back wrong */
};

#define RUN_BLOCKS 200
#define RUN_BLOCK 4096

static void *drive_main(void *arg)
{
	struct drive_run *r = arg;
	uint8_t b[RUN_BLOCK], got[RUN_BLOCK];
	for (unsigned i = 0; i < RUN_BLOCKS && !r->rc; i++) {
		memset(b, (int)(r->d * 64 + i % 64), sizeof b);
		int rc = OPS(r->l)->write_block(r->l, r->d, b, sizeof b);
		r->rc = rc < 0 ? rc : 0;
	}
	if (!r->rc)
		r->rc = OPS(r->l)->write_filemarks(r->l, r->d, 1);
	if (!r->rc)
		r->rc = OPS(r->l)->rewind(r->l, r->d);
	for (unsigned i = 0; i < RUN_BLOCKS && !r->rc; i++) {
		size_t len = 0;
		memset(b, (int)(r->d * 64 + i % 64), sizeof b);
		r->rc = OPS(r->l)->read_block(r->l, r->d, got, sizeof got, &len);
		r->bad += len != sizeof got || memcmp(b, got, sizeof b) != 0;
	}
	return NULL;
}

/*
 * Calls for different drives run at the same time on different threads, and
 * the changer's meanwhile: each drive's tape holds exactly its own blocks,
 * and the inventory always shows the four tapes in the four drives.
 */
static void drives_at_once(void **state)
{
	struct fx *f = *state;
	struct phys_sim_config cfg = base_cfg(f->dir);
	cfg.drives = 4;
	cfg.tapes = 5;
	cfg.rate_mbs = 400;
	struct phys_lib *l = open_sim(&cfg);
	for (unsigned d = 0; d < 4; d++)
		assert_int_equal(OPS(l)->move(l, (uint16_t)(PHYS_SIM_SLOT0 + d), (uint16_t)(PHYS_SIM_DRIVE0 + d)), VTL_OK);
	struct drive_run r[4];
	pthread_t th[4];
	for (unsigned d = 0; d < 4; d++) {
		r[d] = (struct drive_run){.l = l, .d = d};
		assert_int_equal(pthread_create(&th[d], NULL, drive_main, &r[d]), 0);
	}
	/* The changer meanwhile: the fifth tape back and forth between slots, and inventories. */
	for (unsigned i = 0; i < 50; i++) {
		struct phys_element e[32];
		unsigned n = 0;
		assert_int_equal(OPS(l)->inventory(l, e, 32, &n), VTL_OK);
		for (unsigned d = 0; d < 4; d++)
			assert_true(e[d].type == PHYS_ELEM_DRIVE && e[d].full);
		uint16_t from = (uint16_t)(PHYS_SIM_SLOT0 + 4 + i % 2), to = (uint16_t)(PHYS_SIM_SLOT0 + 5 - i % 2);
		assert_int_equal(OPS(l)->move(l, from, to), VTL_OK);
	}
	for (unsigned d = 0; d < 4; d++) {
		assert_int_equal(pthread_join(th[d], NULL), 0);
		assert_int_equal(r[d].rc, VTL_OK);
		assert_int_equal(r[d].bad, 0);
		struct phys_drive_status st;
		assert_int_equal(OPS(l)->status(l, d, &st), VTL_OK);
		assert_int_equal(st.block, RUN_BLOCKS); /* its own blocks, none of another drive's */
	}
	OPS(l)->close(l);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, fx_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(inventory_and_moves), T(write_read_position), T(end_of_tape), T(injected_faults), T(timing_model),
		T(drives_at_once),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
