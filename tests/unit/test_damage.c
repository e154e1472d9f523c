/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Damaged media behave like damaged tape: a middle segment cut short, a
 * missing middle segment, a bad record inside synced data of the open
 * segment. The damaged objects read as VTL_E_MEDIUM, everything else stays
 * readable and reachable by LOCATE, spaces stop at the damage with
 * VTL_E_MEDIUM, nothing is renamed away, and the damage is listed (and,
 * for bad records, still listed after the next close and open). Damage
 * after the sync point is a crash's torn tail and keeps today's repair.
 */
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backend/cartridge.h"
#include "backend/format.h"
#include "backend/pool.h"
#include "common/vtl_error.h"
#include "tests/unit/testlib.h"

#define NMEMB 3
#define SEG (64u << 10)
#define BL 10000  /* block size of the multi-segment tapes: 6 records per segment */
#define NBLK 60   /* blocks of those, a filemark after every 20th */
#define NOBJ (NBLK + NBLK / 20)

static int setup(void **state)
{
	if (fx_setup_dirs(state, "vtl-damage", NMEMB) != 0)
		return -1;
	fx_pool_config(*state, NMEMB, SEG);
	return 0;
}

static void seg_path(struct fx *f, const char *bc, uint32_t seq, char *buf, size_t len)
{
	unsigned m = vtl_pool_member_for(f->pool, bc, seq);
	snprintf(buf, len, "%s/%s/%08u.seg", f->mpath[m], bc, seq);
}

/* First object of segment seq, from its header. */
static uint64_t seg_first(struct fx *f, const char *bc, uint32_t seq)
{
	char path[700];
	seg_path(f, bc, seq, path, sizeof path);
	unsigned char hb[SEG_HEADER_LEN];
	int fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, hb, sizeof hb, 0), (ssize_t)sizeof hb);
	close(fd);
	struct seg_header h;
	assert_int_equal(seg_header_decode(hb, &h), 0);
	return h.first_object;
}

/* Files whose name ends in .orphan in the cartridge's folders. */
static unsigned orphans(struct fx *f, const char *bc)
{
	unsigned n = 0;
	for (unsigned m = 0; m < NMEMB; m++) {
		char dir[700];
		snprintf(dir, sizeof dir, "%s/%s", f->mpath[m], bc);
		DIR *d = opendir(dir);
		if (!d)
			continue;
		struct dirent *e;
		while ((e = readdir(d)))
			n += strstr(e->d_name, ".orphan") != NULL;
		closedir(d);
	}
	return n;
}

/* Object i of the multi-segment tape: a filemark after every 20th block. */
static bool is_fm(uint64_t i)
{
	return i % 21 == 20;
}

static void build(struct fx *f, const char *bc)
{
	uint8_t b[BL];
	tl_pool_open(&f->cfg, &f->pool);
	EXPECT_RC(vtl_cart_create(f->pool, bc), 0);
	struct vtl_cart_params p = {0};
	struct vtl_cart *c = tl_cart_open(f->pool, bc, &p);
	for (uint64_t i = 0; i < NOBJ; i++) {
		if (is_fm(i)) {
			EXPECT_RC(vtl_cart_write_filemarks(c, 1), 0);
			continue;
		}
		gen_data(b, BL, 1000 + i, false);
		EXPECT_RC(vtl_cart_write_block(c, b, BL), 0);
	}
	EXPECT_RC(vtl_cart_close(c), 0);
}

/* Reads the whole tape from BOT: objects in [bad, bad + nbad) give VTL_E_MEDIUM, the others their data. */
static void read_all(struct vtl_cart *c, uint64_t eod, uint64_t bad, uint64_t nbad, const char *ctx)
{
	static uint8_t want[BL], got[BL + 100];
	EXPECT_RC(vtl_cart_rewind(c), 0);
	for (uint64_t i = 0; i < eod; i++) {
		struct vtl_read_result r;
		int rc = vtl_cart_read(c, got, sizeof got, &r);
		if (i >= bad && i < bad + nbad) {
			if (rc != VTL_E_MEDIUM || r.object != i)
				fail_msg("%s: damaged object %llu: rc %d (%s) object %llu, expected VTL_E_MEDIUM", ctx,
					 (unsigned long long)i, rc, es(rc), (unsigned long long)r.object);
			/* As a drive does after the error: on past the bad block. */
			EXPECT_RC(vtl_cart_locate(c, i + 1), 0);
			continue;
		}
		if (rc != 0)
			fail_msg("%s: object %llu: %d (%s)", ctx, (unsigned long long)i, rc, es(rc));
		if (is_fm(i)) {
			if (r.type != VTL_OBJ_FILEMARK)
				fail_msg("%s: object %llu should be a filemark", ctx, (unsigned long long)i);
			continue;
		}
		gen_data(want, BL, 1000 + i, false);
		if (r.type != VTL_OBJ_DATA || r.length != BL || memcmp(want, got, BL) != 0)
			fail_msg("%s: object %llu reads back wrong", ctx, (unsigned long long)i);
	}
	struct vtl_read_result r;
	EXPECT_RC(vtl_cart_read(c, got, sizeof got, &r), 0);
	struct vtl_position pos;
	get_pos(c, &pos);
	/* The block an earlier writable open appended, then end of data. */
	assert_int_equal(r.type, pos.eod > eod ? VTL_OBJ_DATA : VTL_OBJ_EOD);
}

static void expect_damage(struct vtl_cart *c, enum vtl_damage_kind kind, uint32_t seq, uint32_t seq_last,
			  uint64_t first, uint64_t count)
{
	struct vtl_damage d[4];
	size_t n = vtl_cart_damage(c, d, 4);
	assert_int_equal(n, 1);
	assert_int_equal(d[0].kind, kind);
	assert_int_equal(d[0].seq, seq);
	assert_int_equal(d[0].seq_last, seq_last);
	assert_int_equal(d[0].first, first);
	assert_int_equal(d[0].count, count);
}

/* Segment 2 of 11 cut short in its third record: its first two stay, the rest up to segment 3 is damage. */
static void test_middle_segment_cut_short(void **state)
{
	struct fx *f = *state;
	const char *bc = "SHORT1";
	build(f, bc);
	uint64_t f2 = seg_first(f, bc, 2), f3 = seg_first(f, bc, 3);
	assert_true(f3 - f2 >= 4);
	char path[700];
	seg_path(f, bc, 2, path, sizeof path);
	assert_int_equal(truncate(path, SEG_HEADER_LEN + 2 * (REC_HEADER_LEN + BL) + 3000), 0);
	for (int mode = 0; mode < 3; mode++) {
		struct vtl_cart_params p = {.readonly = mode == 0};
		struct vtl_cart *c = tl_cart_open(f->pool, bc, &p);
		struct vtl_position pos;
		get_pos(c, &pos);
		assert_int_equal(pos.eod, NOBJ + (mode == 2));
		expect_damage(c, VTL_DAMAGE_SHORT, 2, 2, f2 + 2, f3 - f2 - 2);
		read_all(c, NOBJ, f2 + 2, f3 - f2 - 2, mode == 0 ? "read-only" : "writable");
		/* LOCATE beyond the damage reaches what follows. */
		EXPECT_RC(vtl_cart_locate(c, f3), 0);
		uint8_t got[BL + 100], want[BL];
		struct vtl_read_result r;
		EXPECT_RC(vtl_cart_read(c, got, sizeof got, &r), 0);
		gen_data(want, BL, 1000 + f3, false);
		assert_true(r.length == BL && memcmp(got, want, BL) == 0);
		/* Spacing over it stops on its near side: forward at its first object, backward after its last. */
		struct vtl_space_result sr;
		EXPECT_RC(vtl_cart_locate(c, f2), 0);
		EXPECT_RC(vtl_cart_space_blocks(c, 10, &sr), VTL_E_MEDIUM);
		assert_int_equal(sr.stop, VTL_SPACE_MEDIUM);
		assert_int_equal(sr.residual, 8);
		get_pos(c, &pos);
		assert_int_equal(pos.object, f2 + 2);
		EXPECT_RC(vtl_cart_locate(c, f3 + 1), 0);
		EXPECT_RC(vtl_cart_space_blocks(c, -10, &sr), VTL_E_MEDIUM);
		assert_int_equal(sr.stop, VTL_SPACE_MEDIUM);
		assert_int_equal(sr.residual, 9);
		get_pos(c, &pos);
		assert_int_equal(pos.object, f3);
		/* Within the good part a space is as before. */
		EXPECT_RC(vtl_cart_locate(c, f3), 0);
		EXPECT_RC(vtl_cart_space_blocks(c, 1, &sr), 0);
		assert_int_equal(sr.stop, VTL_SPACE_DONE);
		if (mode == 1) {
			uint8_t b[3000];
			gen_data(b, sizeof b, 5, false);
			EXPECT_RC(vtl_cart_space_eod(c), 0);
			EXPECT_RC(vtl_cart_write_block(c, b, sizeof b), 0);
		}
		EXPECT_RC(vtl_cart_close(c), 0);
		assert_int_equal(orphans(f, bc), 0);
	}
	struct vtl_cart_info info;
	EXPECT_RC(vtl_cart_info(f->pool, bc, &info), 0);
	assert_int_equal(info.damaged, 1);
	assert_int_equal(info.damaged_objects, f3 - f2 - 2);
	assert_int_equal(info.damage[0].kind, VTL_DAMAGE_SHORT);
	char line[256];
	vtl_damage_describe(bc, &info.damage[0], line, sizeof line);
	char want[256];
	snprintf(want, sizeof want,
		 "cartridge SHORT1: damaged: segment cut short in segment file 00000002.seg: objects %llu..%llu "
		 "unreadable",
		 (unsigned long long)(f2 + 2), (unsigned long long)(f3 - 1));
	assert_string_equal(line, want);
	vtl_pool_close(f->pool);
	f->pool = NULL;
}

/* A write inside a damaged range is refused; at its start it cuts the damage away with what follows. */
static void test_write_at_damage(void **state)
{
	struct fx *f = *state;
	const char *bc = "SHORT2";
	build(f, bc);
	uint64_t f2 = seg_first(f, bc, 2);
	char path[700];
	seg_path(f, bc, 2, path, sizeof path);
	assert_int_equal(truncate(path, SEG_HEADER_LEN + 2 * (REC_HEADER_LEN + BL) + 3000), 0);
	struct vtl_cart_params p = {.capacity = 1u << 30};
	struct vtl_cart *c = tl_cart_open(f->pool, bc, &p);
	uint8_t b[500];
	gen_data(b, sizeof b, 9, false);
	EXPECT_RC(vtl_cart_locate(c, f2 + 3), 0);
	EXPECT_RC(vtl_cart_write_block(c, b, sizeof b), VTL_E_MEDIUM);
	struct vtl_position pos;
	get_pos(c, &pos);
	assert_int_equal(pos.eod, NOBJ);
	EXPECT_RC(vtl_cart_locate(c, f2 + 2), 0);
	EXPECT_RC(vtl_cart_write_block(c, b, sizeof b), 0);
	get_pos(c, &pos);
	assert_int_equal(pos.eod, f2 + 3);
	assert_int_equal(vtl_cart_damage(c, NULL, 0), 0);
	EXPECT_RC(vtl_cart_close(c), 0);
	p.readonly = true;
	c = tl_cart_open(f->pool, bc, &p);
	get_pos(c, &pos);
	assert_int_equal(pos.eod, f2 + 3);
	assert_int_equal(vtl_cart_damage(c, NULL, 0), 0);
	read_all(c, f2 + 2, 0, 0, "after the cut");
	EXPECT_RC(vtl_cart_close(c), 0);
	assert_int_equal(orphans(f, bc), 0);
	vtl_pool_close(f->pool);
	f->pool = NULL;
}

/* Segment 3 removed: its objects (a filemark among them) are damage, segment 4 on reads. */
static void test_missing_middle_segment(void **state)
{
	struct fx *f = *state;
	const char *bc = "MISS1";
	build(f, bc);
	uint64_t f3 = seg_first(f, bc, 3), f4 = seg_first(f, bc, 4);
	assert_true(f3 <= 20 && f4 > 20); /* the first filemark is in segment 3 */
	char path[700];
	seg_path(f, bc, 3, path, sizeof path);
	assert_int_equal(unlink(path), 0);
	for (int mode = 0; mode < 2; mode++) {
		struct vtl_cart_params p = {.readonly = mode == 0};
		struct vtl_cart *c = tl_cart_open(f->pool, bc, &p);
		struct vtl_position pos;
		get_pos(c, &pos);
		assert_int_equal(pos.eod, NOBJ);
		assert_int_equal(vtl_cart_filemarks(c), NOBJ / 21);
		expect_damage(c, VTL_DAMAGE_MISSING, 3, 3, f3, f4 - f3);
		read_all(c, NOBJ, f3, f4 - f3, "missing");
		/* SPACE over the filemark the damage holds stops at the damage, nothing spaced. */
		struct vtl_space_result sr;
		EXPECT_RC(vtl_cart_rewind(c), 0);
		EXPECT_RC(vtl_cart_space_filemarks(c, 2, &sr), VTL_E_MEDIUM);
		assert_int_equal(sr.stop, VTL_SPACE_MEDIUM);
		assert_int_equal(sr.residual, 2);
		get_pos(c, &pos);
		assert_int_equal(pos.object, f3);
		/* From past it, filemarks space as before: the second one is object 41. */
		EXPECT_RC(vtl_cart_locate(c, f4), 0);
		EXPECT_RC(vtl_cart_space_filemarks(c, 1, &sr), 0);
		get_pos(c, &pos);
		assert_int_equal(pos.object, 42);
		assert_int_equal(pos.file, 2);
		EXPECT_RC(vtl_cart_close(c), 0);
		assert_int_equal(orphans(f, bc), 0);
	}
	/* Deleting it removes the files past the gap too: no folder is left. */
	EXPECT_RC(vtl_cart_delete(f->pool, bc), 0);
	for (unsigned m = 0; m < NMEMB; m++) {
		snprintf(path, sizeof path, "%s/%s", f->mpath[m], bc);
		struct stat st;
		if (stat(path, &st) == 0)
			fail_msg("%s is left after the delete", path);
	}
	vtl_pool_close(f->pool);
	f->pool = NULL;
}

/* Segment 3's header damaged: its objects are a damaged range; a write at its start removes it. */
static void test_middle_header_unreadable(void **state)
{
	struct fx *f = *state;
	const char *bc = "HDR1";
	build(f, bc);
	uint64_t f3 = seg_first(f, bc, 3), f4 = seg_first(f, bc, 4);
	char path[700];
	seg_path(f, bc, 3, path, sizeof path);
	int fd = open(path, O_RDWR);
	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, "X", 1, 20), 1);
	close(fd);
	for (int mode = 0; mode < 2; mode++) {
		struct vtl_cart_params p = {.readonly = mode == 0};
		struct vtl_cart *c = tl_cart_open(f->pool, bc, &p);
		expect_damage(c, VTL_DAMAGE_HEADER, 3, 3, f3, f4 - f3);
		read_all(c, NOBJ, f3, f4 - f3, "header");
		if (mode == 1) {
			uint8_t b[BL];
			gen_data(b, BL, 1000 + f3, false);
			EXPECT_RC(vtl_cart_locate(c, f3), 0);
			EXPECT_RC(vtl_cart_write_block(c, b, BL), 0);
			assert_int_equal(vtl_cart_damage(c, NULL, 0), 0);
		}
		EXPECT_RC(vtl_cart_close(c), 0);
	}
	/* The torn file went with the cut; the new block took its place. */
	struct vtl_cart_params p = {.readonly = true};
	struct vtl_cart *c = tl_cart_open(f->pool, bc, &p);
	struct vtl_position pos;
	get_pos(c, &pos);
	assert_int_equal(pos.eod, f3 + 1);
	assert_int_equal(vtl_cart_damage(c, NULL, 0), 0);
	read_all(c, f3 + 1, 0, 0, "after the cut");
	EXPECT_RC(vtl_cart_close(c), 0);
	vtl_pool_close(f->pool);
	f->pool = NULL;
}

#define OBL 1000 /* blocks of the open-segment tapes */
#define OSYNC 30 /* blocks the sync mark covers */
#define OMORE 3  /* blocks after them: 1 synced (not yet marked), 2 never synced */

/*
 * A writer in a child: opens bc (which must show no damage), appends blocks
 * from..to-1 at EOD (with sync, syncing after blocks OSYNC-1 and OSYNC) and
 * is killed, leaving its last segment open.
 */
static void killed_writer(struct fx *f, const char *bc, unsigned from, unsigned to, bool sync)
{
	fflush(NULL);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		uint8_t b[OBL];
		struct vtl_cart_params p = {0};
		struct vtl_cart *c = NULL;
		if (vtl_cart_open(f->pool, bc, &p, &c) || vtl_cart_damage(c, NULL, 0) != 0 || vtl_cart_space_eod(c))
			_exit(30);
		for (unsigned i = from; i < to; i++) {
			gen_data(b, OBL, 7000 + i, false);
			if (vtl_cart_write_block(c, b, OBL))
				_exit(31);
			/* The sync mark lags one sync: the second sync marks the first 30 blocks. */
			if (sync && (i == OSYNC - 1 || i == OSYNC) && vtl_cart_sync(c))
				_exit(32);
		}
		raise(SIGKILL);
		_exit(99);
	}
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	if (!WIFSIGNALED(st))
		fail_msg("the writer failed before it was killed (exit %d)", WEXITSTATUS(st));
}

/* A writer that syncs 30 blocks, then 1, writes 2 more and is killed: segment 0 is left open. */
static void build_open(struct fx *f, const char *bc)
{
	tl_pool_open(&f->cfg, &f->pool);
	EXPECT_RC(vtl_cart_create(f->pool, bc), 0);
	killed_writer(f, bc, 0, OSYNC + OMORE, true);
}

static void flip(struct fx *f, const char *bc, uint64_t off)
{
	char path[700];
	seg_path(f, bc, 0, path, sizeof path);
	int fd = open(path, O_RDWR);
	assert_true(fd >= 0);
	unsigned char b;
	assert_int_equal(pread(fd, &b, 1, (off_t)off), 1);
	b ^= 0x08;
	assert_int_equal(pwrite(fd, &b, 1, (off_t)off), 1);
	close(fd);
}

static uint64_t rec_off(unsigned i)
{
	return SEG_HEADER_LEN + (uint64_t)i * (REC_HEADER_LEN + OBL);
}

static void read_open(struct vtl_cart *c, uint64_t eod, uint64_t bad)
{
	uint8_t want[OBL], got[OBL + 10];
	EXPECT_RC(vtl_cart_rewind(c), 0);
	for (uint64_t i = 0; i < eod; i++) {
		struct vtl_read_result r;
		int rc = vtl_cart_read(c, got, sizeof got, &r);
		if (i == bad) {
			EXPECT_RC(rc, VTL_E_MEDIUM);
			EXPECT_RC(vtl_cart_locate(c, i + 1), 0);
			continue;
		}
		EXPECT_RC(rc, 0);
		gen_data(want, OBL, 7000 + i, false);
		if (r.length != OBL || memcmp(want, got, OBL) != 0)
			fail_msg("object %llu reads back wrong", (unsigned long long)i);
	}
}

/* A byte flipped in a synced record of the open segment: that block is damage, the ones after it stay. */
static void bad_synced_record(struct fx *f, const char *bc, unsigned k, uint64_t at)
{
	build_open(f, bc);
	flip(f, bc, at);
	for (int mode = 0; mode < 3; mode++) {
		struct vtl_cart_params p = {.readonly = mode == 0};
		struct vtl_cart *c = tl_cart_open(f->pool, bc, &p);
		struct vtl_position pos;
		get_pos(c, &pos);
		assert_int_equal(pos.eod, OSYNC + OMORE);
		/* Mode 2 opens what mode 1 closed: the footer's damaged flag lists it again. */
		expect_damage(c, VTL_DAMAGE_RECORDS, 0, 0, k, 1);
		read_open(c, OSYNC + OMORE, k);
		EXPECT_RC(vtl_cart_close(c), 0);
	}
	vtl_pool_close(f->pool);
	f->pool = NULL;
}

static void test_open_segment_bad_payload(void **state)
{
	bad_synced_record(*state, "OPENB1", 10, rec_off(10) + REC_HEADER_LEN + 500);
}

static void test_open_segment_bad_header(void **state)
{
	bad_synced_record(*state, "OPENB2", 12, rec_off(12) + 9);
}

/* The same flip after the sync point is a crash's torn tail: the tape ends there, nothing is damage. */
static void test_open_segment_torn_tail(void **state)
{
	struct fx *f = *state;
	const char *bc = "OPENT1";
	build_open(f, bc);
	flip(f, bc, rec_off(OSYNC + 1) + REC_HEADER_LEN + 10);
	struct vtl_cart_params p = {0};
	struct vtl_cart *c = tl_cart_open(f->pool, bc, &p);
	struct vtl_position pos;
	get_pos(c, &pos);
	assert_int_equal(pos.eod, OSYNC + 1);
	assert_int_equal(vtl_cart_damage(c, NULL, 0), 0);
	read_open(c, OSYNC + 1, UINT64_MAX);
	EXPECT_RC(vtl_cart_close(c), 0);
	vtl_pool_close(f->pool);
	f->pool = NULL;
}

/*
 * A cut a crash interrupted after its truncation but before its lowered sync
 * mark landed: the marker makes the open repair it as a crash and lower the
 * mark, so that blocks appended after it are never taken for synced ones.
 */
static void test_interrupted_cut_lowers_mark(void **state)
{
	struct fx *f = *state;
	const char *bc = "CUTM2";
	build_open(f, bc); /* sync mark at 30 blocks */
	char path[700], marker[700];
	seg_path(f, bc, 0, path, sizeof path);
	assert_int_equal(truncate(path, (off_t)rec_off(20)), 0);
	snprintf(marker, sizeof marker, "%s/%s/cut", f->mpath[vtl_pool_member_for(f->pool, bc, 0)], bc);
	FILE *m = fopen(marker, "w");
	assert_non_null(m);
	fputs("0\n", m);
	fclose(m);
	killed_writer(f, bc, 20, 23, false);
	struct stat sb;
	assert_int_not_equal(stat(marker, &sb), 0);
	/* A torn block among the unsynced appends (below the old mark): the tape ends there. */
	flip(f, bc, rec_off(21) + REC_HEADER_LEN + 7);
	struct vtl_cart_params p = {.readonly = true};
	struct vtl_cart *c = tl_cart_open(f->pool, bc, &p);
	struct vtl_position pos;
	get_pos(c, &pos);
	assert_int_equal(pos.eod, 21);
	assert_int_equal(vtl_cart_damage(c, NULL, 0), 0);
	read_open(c, 21, UINT64_MAX);
	EXPECT_RC(vtl_cart_close(c), 0);
	vtl_pool_close(f->pool);
	f->pool = NULL;
}

/* A cut writes its marker before it removes anything; the sync after it removes the marker. */
static void test_cut_marker(void **state)
{
	struct fx *f = *state;
	const char *bc = "CUTM1";
	build(f, bc);
	char marker[700];
	snprintf(marker, sizeof marker, "%s/%s/cut", f->mpath[vtl_pool_member_for(f->pool, bc, 0)], bc);
	struct vtl_cart_params p = {0};
	struct vtl_cart *c = tl_cart_open(f->pool, bc, &p);
	EXPECT_RC(vtl_cart_locate(c, 15), 0);
	uint8_t b[100] = {1};
	EXPECT_RC(vtl_cart_write_block(c, b, sizeof b), 0);
	struct stat st;
	assert_int_equal(stat(marker, &st), 0);
	EXPECT_RC(vtl_cart_sync(c), 0);
	assert_int_not_equal(stat(marker, &st), 0);
	EXPECT_RC(vtl_cart_close(c), 0);
	vtl_pool_close(f->pool);
	f->pool = NULL;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_middle_segment_cut_short, setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_write_at_damage, setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_missing_middle_segment, setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_middle_header_unreadable, setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_open_segment_bad_payload, setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_open_segment_bad_header, setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_open_segment_torn_tail, setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_cut_marker, setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_interrupted_cut_lowers_mark, setup, fx_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
