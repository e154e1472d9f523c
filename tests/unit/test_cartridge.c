/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests of the cartridge API (backend/cartridge.h): each operation and
 * error path, with small segments so that data crosses many segment files,
 * and reopening to check that what was written (and discarded) stays so.
 *
 * Every test works in its own temporary directory (mkdtemp under $TMPDIR or
 * /tmp) with 3 member directories, removed by the teardown even on failure.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backend/cartridge.h"
#include "backend/format.h"
#include "backend/pool.h"
#include "common/grow.h"
#include "common/vtl_error.h"
#include "tests/unit/testlib.h"

#define NMEMB 3
#define SEG (64u << 10)
#define HDR 32u /* record header bytes */

/* ---------------------------------------------------------------- helpers */

#define EQ(line, what, got, want)                                                              \
	do {                                                                                   \
		uint64_t g_ = (uint64_t)(got), w_ = (uint64_t)(want);                          \
		if (g_ != w_)                                                                  \
			fail_msg("line %d: %s = %" PRIu64 ", expected %" PRIu64, line, what, g_, \
				 w_);                                                          \
	} while (0)

static int fx_setup(void **state)
{
	return fx_setup_dirs(state, "vtl-cart", NMEMB);
}

static void fx_config(struct fx *f, uint64_t segsize)
{
	fx_pool_config(f, NMEMB, segsize);
}

static void fx_pool_open_cfg(struct fx *f)
{
	tl_pool_open(&f->cfg, &f->pool);
	assert_non_null(f->pool);
}

static void fx_pool(struct fx *f)
{
	fx_config(f, SEG);
	fx_pool_open_cfg(f);
}

static struct vtl_cart_params params(bool comp)
{
	struct vtl_cart_params p;
	memset(&p, 0, sizeof(p));
	p.compression = comp;
	return p;
}

static struct vtl_cart *open_p(struct fx *f, const char *bc, struct vtl_cart_params p)
{
	return tl_cart_open(f->pool, bc, &p);
}

/* Opens slot 0 with default params, creating the cartridge first if create. */
static struct vtl_cart *fx_cart(struct fx *f, const char *bc, bool create)
{
	if (create)
		EXPECT_RC(vtl_cart_create(f->pool, bc), 0);
	f->cart[0] = open_p(f, bc, params(false));
	return f->cart[0];
}

static void close_slot(struct fx *f, int slot)
{
	tl_cart_close(&f->cart[slot]);
}

static struct vtl_cart *reopen_slot(struct fx *f, int slot, const char *bc, struct vtl_cart_params p)
{
	close_slot(f, slot);
	f->cart[slot] = open_p(f, bc, p);
	return f->cart[slot];
}

static int wr_(struct vtl_cart *c, uint64_t key, size_t len, bool comp)
{
	uint8_t *b = talloc(len ? len : 1);
	assert_non_null(b);
	gen_data(b, len, key, comp);
	int rc = vtl_cart_write_block(c, b, len);
	tfree(b);
	return rc;
}

#define WR(c, key, len, comp) wr_ok_(c, key, len, comp, __LINE__)
static void wr_ok_(struct vtl_cart *c, uint64_t key, size_t len, bool comp, int line)
{
	int rc = wr_(c, key, len, comp);
	if (rc != 0)
		fail_msg("line %d: write of %zu bytes: %d (%s)", line, len, rc, es(rc));
}

#define WFM(c, n) wfm_ok_(c, n, __LINE__)
static void wfm_ok_(struct vtl_cart *c, uint32_t n, int line)
{
	int rc = vtl_cart_write_filemarks(c, n);
	if (rc != 0)
		fail_msg("line %d: write of %u filemarks: %d (%s)", line, n, rc, es(rc));
}

#define RD_DATA(c, obj, key, len, comp) rd_data_(c, obj, key, len, comp, __LINE__)
static void rd_data_(struct vtl_cart *c, uint64_t obj, uint64_t key, size_t len, bool comp, int line)
{
	uint8_t *want = talloc(len), *got = talloc(len + 64);
	assert_non_null(want);
	assert_non_null(got);
	gen_data(want, len, key, comp);
	struct vtl_read_result r;
	memset(&r, 0x5a, sizeof(r));
	int rc = vtl_cart_read(c, got, len + 64, &r);
	if (rc != 0)
		fail_msg("line %d: read of object %" PRIu64 ": %d (%s)", line, obj, rc, es(rc));
	EQ(line, "r.type", r.type, VTL_OBJ_DATA);
	EQ(line, "r.object", r.object, obj);
	EQ(line, "r.length", r.length, len);
	EQ(line, "r.copied", r.copied, len);
	if (memcmp(want, got, len) != 0) {
		size_t i = 0;
		while (want[i] == got[i])
			i++;
		fail_msg("line %d: object %" PRIu64 " (%zu bytes): data differs from byte %zu", line,
			 obj, len, i);
	}
	tfree(want);
	tfree(got);
}

#define RD_FM(c, obj) rd_fm_(c, obj, __LINE__)
static void rd_fm_(struct vtl_cart *c, uint64_t obj, int line)
{
	uint8_t b[64];
	struct vtl_read_result r;
	memset(&r, 0x5a, sizeof(r));
	int rc = vtl_cart_read(c, b, sizeof(b), &r);
	if (rc != 0)
		fail_msg("line %d: read of filemark %" PRIu64 ": %d (%s)", line, obj, rc, es(rc));
	EQ(line, "r.type (want filemark)", r.type, VTL_OBJ_FILEMARK);
	EQ(line, "r.object", r.object, obj);
	EQ(line, "r.copied", r.copied, 0);
}

#define RD_EOD(c, eod) rd_eod_(c, eod, __LINE__)
static void rd_eod_(struct vtl_cart *c, uint64_t eod, int line)
{
	uint8_t b[64];
	struct vtl_read_result r;
	memset(&r, 0x5a, sizeof(r));
	int rc = vtl_cart_read(c, b, sizeof(b), &r);
	if (rc != 0)
		fail_msg("line %d: read at EOD: %d (%s)", line, rc, es(rc));
	EQ(line, "r.type (want EOD)", r.type, VTL_OBJ_EOD);
	EQ(line, "r.object", r.object, eod);
	EQ(line, "r.copied", r.copied, 0);
	struct vtl_position p;
	vtl_cart_position(c, &p);
	EQ(line, "position after read at EOD", p.object, eod);
}

#define POS(c, obj, file, eod) pos_(c, obj, file, eod, __LINE__)
static void pos_(struct vtl_cart *c, uint64_t obj, uint64_t file, uint64_t eod, int line)
{
	struct vtl_position p;
	get_pos(c, &p);
	EQ(line, "position.object", p.object, obj);
	EQ(line, "position.file", p.file, file);
	EQ(line, "position.eod", p.eod, eod);
	EQ(line, "position.bot", p.bot, obj == 0);
	EQ(line, "position.at_eod", p.at_eod, obj == eod);
}

static uint64_t stored(struct vtl_cart *c)
{
	struct vtl_position p;
	get_pos(c, &p);
	return p.stored_bytes;
}

#define LOC(c, obj) EXPECT_RC(vtl_cart_locate(c, obj), 0)

#define SB(c, count, stop, resid, pos) space_(c, false, count, stop, resid, pos, __LINE__)
#define SF(c, count, stop, resid, pos) space_(c, true, count, stop, resid, pos, __LINE__)
static void space_(struct vtl_cart *c, bool fm, int64_t count, enum vtl_space_stop stop,
		   uint64_t resid, uint64_t pos, int line)
{
	struct vtl_space_result r;
	memset(&r, 0x5a, sizeof(r));
	int rc = fm ? vtl_cart_space_filemarks(c, count, &r) : vtl_cart_space_blocks(c, count, &r);
	if (rc != 0)
		fail_msg("line %d: space %s %" PRId64 ": %d (%s)", line, fm ? "filemarks" : "blocks",
			 count, rc, es(rc));
	EQ(line, "space stop", r.stop, stop);
	EQ(line, "space residual", r.residual, resid);
	struct vtl_position p;
	get_pos(c, &p);
	EQ(line, "position after space", p.object, pos);
}

/* Expected tape content for the tests that keep a list. */
struct eobj {
	bool fm;
	uint64_t key;
	uint32_t len;
	bool comp;
};

struct elist {
	struct eobj o[2048];
	unsigned n;
};

static void el_write(struct vtl_cart *c, struct elist *e, uint64_t key, uint32_t len, bool comp)
{
	WR(c, key, len, comp);
	assert_true(e->n < 2048);
	e->o[e->n++] = (struct eobj){ .fm = false, .key = key, .len = len, .comp = comp };
}

static void el_fm(struct vtl_cart *c, struct elist *e)
{
	WFM(c, 1);
	assert_true(e->n < 2048);
	e->o[e->n++] = (struct eobj){ .fm = true, .key = 0, .len = 0, .comp = false };
}

/* Rewinds and reads the whole tape, checking every object and EOD. */
#define VERIFY(c, e) verify_(c, e, __LINE__)
static void verify_(struct vtl_cart *c, const struct elist *e, int line)
{
	EXPECT_RC(vtl_cart_rewind(c), 0);
	uint64_t files = 0;
	for (unsigned i = 0; i < e->n; i++) {
		pos_(c, i, files, e->n, line);
		if (e->o[i].fm) {
			rd_fm_(c, i, line);
			files++;
		} else {
			rd_data_(c, i, e->o[i].key, e->o[i].len, e->o[i].comp, line);
		}
	}
	rd_eod_(c, e->n, line);
	pos_(c, e->n, files, e->n, line);
}

/* ------------------------------------------------------------------ tests */

static void test_strerror(void **state)
{
	(void)state;
	for (int e = VTL_W_EARLY_WARNING; e >= VTL_E_EOD; e--) {
		const char *s = vtl_strerror(e);
		assert_non_null(s);
		assert_true(strlen(s) > 0);
	}
	assert_non_null(vtl_strerror(-1000));
	assert_non_null(vtl_strerror(1000));
	assert_true(strcmp(vtl_strerror(VTL_E_EOM), vtl_strerror(VTL_E_POOL_FULL)) != 0);
}

static void test_create_exists_delete(void **state)
{
	struct fx *f = *state;
	fx_pool(f);
	struct vtl_cart_params p = params(false);
	struct vtl_cart *c = NULL;
	assert_int_equal(vtl_cart_exists(f->pool, "CRT001L8"), 0);
	EXPECT_RC(vtl_cart_open(f->pool, "CRT001L8", &p, &c), VTL_E_NOTFOUND);
	p.readonly = true;
	EXPECT_RC(vtl_cart_open(f->pool, "CRT001L8", &p, &c), VTL_E_NOTFOUND);
	EXPECT_RC(vtl_cart_delete(f->pool, "CRT001L8"), VTL_E_NOTFOUND);
	EXPECT_RC(vtl_cart_create(f->pool, "CRT001L8"), 0);
	assert_int_equal(vtl_cart_exists(f->pool, "CRT001L8"), 1);
	assert_int_equal(vtl_cart_exists(f->pool, "CRT002L8"), 0);
	EXPECT_RC(vtl_cart_create(f->pool, "CRT001L8"), VTL_E_EXISTS);

	/* Fill it over several segments, then delete and re-create: it must be blank. */
	c = fx_cart(f, "CRT001L8", false);
	for (unsigned i = 0; i < 40; i++)
		WR(c, i, 10000, false);
	WFM(c, 2);
	close_slot(f, 0);
	EXPECT_RC(vtl_cart_create(f->pool, "CRT001L8"), VTL_E_EXISTS);
	EXPECT_RC(vtl_cart_delete(f->pool, "CRT001L8"), 0);
	assert_int_equal(vtl_cart_exists(f->pool, "CRT001L8"), 0);
	EXPECT_RC(vtl_cart_delete(f->pool, "CRT001L8"), VTL_E_NOTFOUND);
	p.readonly = false;
	EXPECT_RC(vtl_cart_open(f->pool, "CRT001L8", &p, &c), VTL_E_NOTFOUND);
	EXPECT_RC(vtl_cart_create(f->pool, "CRT001L8"), 0);
	c = fx_cart(f, "CRT001L8", false);
	POS(c, 0, 0, 0);
	assert_int_equal(stored(c), 0);
	RD_EOD(c, 0);
	close_slot(f, 0);
}

static void test_delete_open_busy(void **state)
{
	struct fx *f = *state;
	fx_pool(f);
	struct vtl_cart *c = fx_cart(f, "DEL001", true);
	WR(c, 1, 5000, false);
	EXPECT_RC(vtl_cart_delete(f->pool, "DEL001"), VTL_E_BUSY);
	assert_int_equal(vtl_cart_exists(f->pool, "DEL001"), 1);
	WR(c, 2, 5000, false);
	c = reopen_slot(f, 0, "DEL001", params(false));
	RD_DATA(c, 0, 1, 5000, false);
	RD_DATA(c, 1, 2, 5000, false);
	close_slot(f, 0);
	EXPECT_RC(vtl_cart_delete(f->pool, "DEL001"), 0);
}

static void test_blank_cartridge(void **state)
{
	struct fx *f = *state;
	fx_pool(f);
	struct vtl_cart *c = fx_cart(f, "BLANK1", true);
	struct vtl_position p;
	get_pos(c, &p);
	assert_int_equal(p.object, 0);
	assert_int_equal(p.file, 0);
	assert_int_equal(p.eod, 0);
	assert_int_equal(p.stored_bytes, 0);
	assert_true(p.bot);
	assert_true(p.at_eod);
	assert_false(p.early_warning);
	RD_EOD(c, 0);
	RD_EOD(c, 0);
	POS(c, 0, 0, 0);
	SB(c, 1, VTL_SPACE_EOD, 1, 0);
	SB(c, -1, VTL_SPACE_BOT, 1, 0);
	SF(c, 2, VTL_SPACE_EOD, 2, 0);
	SF(c, -2, VTL_SPACE_BOT, 2, 0);
	EXPECT_RC(vtl_cart_locate(c, 1), VTL_E_EOD);
	POS(c, 0, 0, 0);
	EXPECT_RC(vtl_cart_erase(c), 0);
	EXPECT_RC(vtl_cart_space_eod(c), 0);
	EXPECT_RC(vtl_cart_rewind(c), 0);
	EXPECT_RC(vtl_cart_sync(c), 0);
	POS(c, 0, 0, 0);
	c = reopen_slot(f, 0, "BLANK1", params(false));
	POS(c, 0, 0, 0);
	RD_EOD(c, 0);
	close_slot(f, 0);
}

static void test_write_read_basic(void **state)
{
	struct fx *f = *state;
	fx_pool(f);
	struct vtl_cart *c = fx_cart(f, "BASIC1", true);
	static const uint32_t sizes[] = { 1, 100, 65536, 100000, 2, 65535, 70000, 4096, 3 };
	const unsigned n = VTL_ARRAY_SIZE(sizes);
	for (unsigned i = 0; i < n; i++) {
		WR(c, 10 + i, sizes[i], false);
		POS(c, i + 1, 0, i + 1);
	}
	EXPECT_RC(vtl_cart_rewind(c), 0);
	POS(c, 0, 0, n);
	for (unsigned i = 0; i < n; i++) {
		RD_DATA(c, i, 10 + i, sizes[i], false);
		POS(c, i + 1, 0, n);
	}
	RD_EOD(c, n);
	/* Again after a reopen (all from disk). */
	c = reopen_slot(f, 0, "BASIC1", params(false));
	POS(c, 0, 0, n);
	for (unsigned i = 0; i < n; i++)
		RD_DATA(c, i, 10 + i, sizes[i], false);
	RD_EOD(c, n);
	/* Backwards, one locate at a time. */
	for (unsigned i = n; i-- > 0;) {
		LOC(c, i);
		RD_DATA(c, i, 10 + i, sizes[i], false);
	}
	close_slot(f, 0);
}

static void test_short_buffer_read(void **state)
{
	struct fx *f = *state;
	fx_pool(f);
	struct vtl_cart *c = fx_cart(f, "SHORT1", true);
	WR(c, 1, 1000, false);
	WR(c, 2, 200000, true);
	WR(c, 3, 50, false);
	WFM(c, 1);
	uint8_t want[1000], got[1100];
	gen_data(want, sizeof(want), 1, false);
	struct vtl_read_result r;
	EXPECT_RC(vtl_cart_rewind(c), 0);

	memset(got, 0xee, sizeof(got));
	EXPECT_RC(vtl_cart_read(c, got, 10, &r), 0);
	assert_int_equal(r.type, VTL_OBJ_DATA);
	assert_int_equal(r.object, 0);
	assert_int_equal(r.length, 1000);
	assert_int_equal(r.copied, 10);
	assert_memory_equal(got, want, 10);
	assert_int_equal(got[10], 0xee); /* not a byte more */
	POS(c, 1, 0, 4);

	/* 1000 bytes of a 200000-byte compressed block. */
	uint8_t *w2 = talloc(1000);
	assert_non_null(w2);
	gen_data(w2, 1000, 2, true);
	memset(got, 0xee, sizeof(got));
	EXPECT_RC(vtl_cart_read(c, got, 1000, &r), 0);
	assert_int_equal(r.type, VTL_OBJ_DATA);
	assert_int_equal(r.object, 1);
	assert_int_equal(r.length, 200000);
	assert_int_equal(r.copied, 1000);
	assert_memory_equal(got, w2, 1000);
	assert_int_equal(got[1000], 0xee);
	POS(c, 2, 0, 4);
	tfree(w2);

	/* A zero-length buffer: nothing copied, still moves past the block. */
	memset(got, 0xee, sizeof(got));
	EXPECT_RC(vtl_cart_read(c, got, 0, &r), 0);
	assert_int_equal(r.type, VTL_OBJ_DATA);
	assert_int_equal(r.object, 2);
	assert_int_equal(r.length, 50);
	assert_int_equal(r.copied, 0);
	assert_int_equal(got[0], 0xee);
	POS(c, 3, 0, 4);

	/* A filemark into a tiny buffer. */
	EXPECT_RC(vtl_cart_read(c, got, 1, &r), 0);
	assert_int_equal(r.type, VTL_OBJ_FILEMARK);
	assert_int_equal(r.object, 3);
	assert_int_equal(r.copied, 0);
	POS(c, 4, 1, 4);

	/* Exactly the block size, and a larger buffer. */
	LOC(c, 0);
	EXPECT_RC(vtl_cart_read(c, got, 1000, &r), 0);
	assert_int_equal(r.copied, 1000);
	assert_memory_equal(got, want, 1000);
	LOC(c, 0);
	memset(got, 0xee, sizeof(got));
	EXPECT_RC(vtl_cart_read(c, got, sizeof(got), &r), 0);
	assert_int_equal(r.copied, 1000);
	assert_int_equal(r.length, 1000);
	assert_memory_equal(got, want, 1000);
	close_slot(f, 0);
}

static void test_block_size_limits(void **state)
{
	struct fx *f = *state;
	fx_pool(f);
	struct vtl_cart *c = fx_cart(f, "LIMIT1", true);
	uint8_t *big = talloc((size_t)VTL_BLOCK_MAX + 1);
	assert_non_null(big);
	memset(big, 'x', (size_t)VTL_BLOCK_MAX + 1);
	EXPECT_RC(vtl_cart_write_block(c, big, 0), VTL_E_INVAL);
	EXPECT_RC(vtl_cart_write_block(c, big, (size_t)VTL_BLOCK_MAX + 1), VTL_E_INVAL);
	EXPECT_RC(vtl_cart_write_block(c, big, SIZE_MAX), VTL_E_INVAL);
	POS(c, 0, 0, 0);
	assert_int_equal(stored(c), 0);

	WR(c, 1, 1, false);
	WR(c, 2, VTL_BLOCK_MAX, false);
	WR(c, 3, 1, false);
	vtl_cart_set_compression(c, true);
	WR(c, 4, VTL_BLOCK_MAX, true);
	WR(c, 5, VTL_BLOCK_MAX, false); /* incompressible with compression on */
	EXPECT_RC(vtl_cart_write_block(c, big, (size_t)VTL_BLOCK_MAX + 1), VTL_E_INVAL);
	EXPECT_RC(vtl_cart_write_block(c, big, 0), VTL_E_INVAL);
	POS(c, 5, 0, 5);

	for (int pass = 0; pass < 2; pass++) {
		EXPECT_RC(vtl_cart_rewind(c), 0);
		RD_DATA(c, 0, 1, 1, false);
		RD_DATA(c, 1, 2, VTL_BLOCK_MAX, false);
		RD_DATA(c, 2, 3, 1, false);
		RD_DATA(c, 3, 4, VTL_BLOCK_MAX, true);
		RD_DATA(c, 4, 5, VTL_BLOCK_MAX, false);
		RD_EOD(c, 5);
		/* A short read of a 16 MiB block. */
		LOC(c, 1);
		struct vtl_read_result r;
		EXPECT_RC(vtl_cart_read(c, big, 100, &r), 0);
		assert_int_equal(r.length, VTL_BLOCK_MAX);
		assert_int_equal(r.copied, 100);
		POS(c, 2, 0, 5);
		c = reopen_slot(f, 0, "LIMIT1", params(false));
	}
	close_slot(f, 0);
	tfree(big);
}

static void test_filemarks_and_file_numbers(void **state)
{
	struct fx *f = *state;
	fx_pool(f);
	struct vtl_cart *c = fx_cart(f, "FMARK1", true);
	/* B0 FM1 B2 FM3 FM4 B5 FM6 FM7 FM8 */
	WR(c, 0, 3000, false);
	POS(c, 1, 0, 1);
	WFM(c, 1);
	POS(c, 2, 1, 2);
	WR(c, 2, 70000, false);
	WFM(c, 2);
	POS(c, 5, 3, 5);
	WR(c, 5, 10, false);
	WFM(c, 3);
	POS(c, 9, 6, 9);
	/* Zero filemarks at EOD write nothing. */
	EXPECT_RC(vtl_cart_write_filemarks(c, 0), 0);
	POS(c, 9, 6, 9);
	for (int pass = 0; pass < 2; pass++) {
		EXPECT_RC(vtl_cart_rewind(c), 0);
		RD_DATA(c, 0, 0, 3000, false);
		POS(c, 1, 0, 9);
		RD_FM(c, 1);
		POS(c, 2, 1, 9);
		RD_DATA(c, 2, 2, 70000, false);
		RD_FM(c, 3);
		POS(c, 4, 2, 9);
		RD_FM(c, 4);
		POS(c, 5, 3, 9);
		RD_DATA(c, 5, 5, 10, false);
		RD_FM(c, 6);
		RD_FM(c, 7);
		RD_FM(c, 8);
		POS(c, 9, 6, 9);
		RD_EOD(c, 9);
		c = reopen_slot(f, 0, "FMARK1", params(false));
		POS(c, 0, 0, 9);
	}
	/* Locate onto a filemark and read it. */
	LOC(c, 4);
	POS(c, 4, 2, 9);
	RD_FM(c, 4);
	/* Writing a block over a filemark removes it and all after. */
	LOC(c, 3);
	WR(c, 33, 500, false);
	POS(c, 4, 1, 4);
	EXPECT_RC(vtl_cart_rewind(c), 0);
	RD_DATA(c, 0, 0, 3000, false);
	RD_FM(c, 1);
	RD_DATA(c, 2, 2, 70000, false);
	RD_DATA(c, 3, 33, 500, false);
	RD_EOD(c, 4);
	close_slot(f, 0);
}

static void test_locate(void **state)
{
	struct fx *f = *state;
	fx_pool(f);
	struct vtl_cart *c = fx_cart(f, "LOCAT1", true);
	struct elist e = { .n = 0 };
	for (unsigned i = 0; i < 60; i++) {
		if (i % 7 == 3)
			el_fm(c, &e);
		else
			el_write(c, &e, 100 + i, 3000 + 997 * (i % 13), i % 2);
	}
	for (int pass = 0; pass < 2; pass++) {
		uint64_t files = 0;
		for (unsigned i = 0; i <= e.n; i++) {
			LOC(c, i);
			POS(c, i, files, e.n);
			if (i == e.n)
				RD_EOD(c, e.n);
			else if (e.o[i].fm)
				RD_FM(c, i);
			else
				RD_DATA(c, i, e.o[i].key, e.o[i].len, e.o[i].comp);
			if (i < e.n && e.o[i].fm)
				files++;
		}
		/* Random order. */
		for (unsigned k = 0; k < 60; k++) {
			unsigned i = (k * 37 + 11) % e.n;
			LOC(c, i);
			if (e.o[i].fm)
				RD_FM(c, i);
			else
				RD_DATA(c, i, e.o[i].key, e.o[i].len, e.o[i].comp);
		}
		/* Past EOD: stops at EOD. */
		LOC(c, 5);
		EXPECT_RC(vtl_cart_locate(c, e.n + 1), VTL_E_EOD);
		POS(c, e.n, files, e.n);
		LOC(c, 0);
		EXPECT_RC(vtl_cart_locate(c, UINT64_MAX), VTL_E_EOD);
		POS(c, e.n, files, e.n);
		RD_EOD(c, e.n);
		LOC(c, e.n);
		POS(c, e.n, files, e.n);
		LOC(c, 0);
		POS(c, 0, 0, e.n);
		c = reopen_slot(f, 0, "LOCAT1", params(false));
	}
	close_slot(f, 0);
}

/*
 * The space tests' tape: B0 B1 B2 FM3 B4 B5 FM6 FM7 B8, EOD 9, blocks of 30000
 * bytes so that it spans several segments.
 */
static void space_layout(struct vtl_cart *c)
{
	for (unsigned i = 0; i < 9; i++) {
		if (i == 3 || i == 6 || i == 7)
			WFM(c, 1);
		else
			WR(c, i, 30000, false);
	}
	POS(c, 9, 3, 9);
}

static void test_space_blocks(void **state)
{
	struct fx *f = *state;
	fx_pool(f);
	struct vtl_cart *c = fx_cart(f, "SPACEB", true);
	space_layout(c);
	for (int pass = 0; pass < 2; pass++) {
		LOC(c, 0);
		SB(c, 2, VTL_SPACE_DONE, 0, 2);
		RD_DATA(c, 2, 2, 30000, false);
		LOC(c, 0);
		SB(c, 5, VTL_SPACE_FILEMARK, 2, 4);
		POS(c, 4, 1, 9);
		RD_DATA(c, 4, 4, 30000, false);
		LOC(c, 3);
		SB(c, 1, VTL_SPACE_FILEMARK, 1, 4);
		LOC(c, 4);
		SB(c, 1, VTL_SPACE_DONE, 0, 5);
		LOC(c, 5);
		SB(c, 3, VTL_SPACE_FILEMARK, 2, 7);
		POS(c, 7, 2, 9);
		LOC(c, 7);
		SB(c, 1, VTL_SPACE_FILEMARK, 1, 8);
		LOC(c, 8);
		SB(c, 1, VTL_SPACE_DONE, 0, 9);
		POS(c, 9, 3, 9);
		LOC(c, 8);
		SB(c, 3, VTL_SPACE_EOD, 2, 9);
		SB(c, 1, VTL_SPACE_EOD, 1, 9);
		LOC(c, 0);
		SB(c, 1000000, VTL_SPACE_FILEMARK, 1000000 - 3, 4);

		LOC(c, 9);
		SB(c, -1, VTL_SPACE_DONE, 0, 8);
		RD_DATA(c, 8, 8, 30000, false);
		LOC(c, 8);
		SB(c, -1, VTL_SPACE_FILEMARK, 1, 7);
		POS(c, 7, 2, 9);
		RD_FM(c, 7);
		LOC(c, 7);
		SB(c, -2, VTL_SPACE_FILEMARK, 2, 6);
		POS(c, 6, 1, 9);
		LOC(c, 6);
		SB(c, -3, VTL_SPACE_FILEMARK, 1, 3);
		POS(c, 3, 0, 9);
		RD_FM(c, 3);
		LOC(c, 3);
		SB(c, -5, VTL_SPACE_BOT, 2, 0);
		POS(c, 0, 0, 9);
		SB(c, -1, VTL_SPACE_BOT, 1, 0);
		LOC(c, 2);
		SB(c, -2, VTL_SPACE_DONE, 0, 0);
		LOC(c, 5);
		SB(c, -1, VTL_SPACE_DONE, 0, 4);
		LOC(c, 2);
		SB(c, -1000000, VTL_SPACE_BOT, 1000000 - 2, 0);
		/* Count 0 changes nothing. */
		LOC(c, 5);
		SB(c, 0, VTL_SPACE_DONE, 0, 5);
		LOC(c, 3);
		SB(c, 0, VTL_SPACE_DONE, 0, 3);
		LOC(c, 9);
		SB(c, 0, VTL_SPACE_DONE, 0, 9);
		LOC(c, 0);
		SB(c, 0, VTL_SPACE_DONE, 0, 0);
		c = reopen_slot(f, 0, "SPACEB", params(false));
	}
	close_slot(f, 0);
}

static void test_space_filemarks(void **state)
{
	struct fx *f = *state;
	fx_pool(f);
	struct vtl_cart *c = fx_cart(f, "SPACEF", true);
	space_layout(c);
	for (int pass = 0; pass < 2; pass++) {
		LOC(c, 0);
		SF(c, 1, VTL_SPACE_DONE, 0, 4);
		POS(c, 4, 1, 9);
		RD_DATA(c, 4, 4, 30000, false);
		LOC(c, 0);
		SF(c, 2, VTL_SPACE_DONE, 0, 7);
		LOC(c, 0);
		SF(c, 3, VTL_SPACE_DONE, 0, 8);
		POS(c, 8, 3, 9);
		LOC(c, 0);
		SF(c, 4, VTL_SPACE_EOD, 1, 9);
		LOC(c, 1);
		SF(c, 10, VTL_SPACE_EOD, 7, 9);
		LOC(c, 4);
		SF(c, 1, VTL_SPACE_DONE, 0, 7);
		LOC(c, 3);
		SF(c, 1, VTL_SPACE_DONE, 0, 4);
		LOC(c, 6);
		SF(c, 2, VTL_SPACE_DONE, 0, 8);
		LOC(c, 9);
		SF(c, 1, VTL_SPACE_EOD, 1, 9);

		LOC(c, 9);
		SF(c, -1, VTL_SPACE_DONE, 0, 7);
		POS(c, 7, 2, 9);
		RD_FM(c, 7);
		LOC(c, 9);
		SF(c, -2, VTL_SPACE_DONE, 0, 6);
		LOC(c, 9);
		SF(c, -3, VTL_SPACE_DONE, 0, 3);
		POS(c, 3, 0, 9);
		LOC(c, 9);
		SF(c, -4, VTL_SPACE_BOT, 1, 0);
		POS(c, 0, 0, 9);
		LOC(c, 8);
		SF(c, -1, VTL_SPACE_DONE, 0, 7);
		LOC(c, 7);
		SF(c, -1, VTL_SPACE_DONE, 0, 6);
		LOC(c, 4);
		SF(c, -1, VTL_SPACE_DONE, 0, 3);
		LOC(c, 5);
		SF(c, -1, VTL_SPACE_DONE, 0, 3);
		LOC(c, 3);
		SF(c, -1, VTL_SPACE_BOT, 1, 0);
		LOC(c, 0);
		SF(c, -2, VTL_SPACE_BOT, 2, 0);
		LOC(c, 2);
		SF(c, 0, VTL_SPACE_DONE, 0, 2);
		LOC(c, 7);
		SF(c, 0, VTL_SPACE_DONE, 0, 7);
		c = reopen_slot(f, 0, "SPACEF", params(false));
	}
	/* A tape without filemarks. */
	EXPECT_RC(vtl_cart_erase(c), 0);
	for (unsigned i = 0; i < 5; i++)
		WR(c, i, 20000, false);
	LOC(c, 1);
	SF(c, 1, VTL_SPACE_EOD, 1, 5);
	SF(c, -3, VTL_SPACE_BOT, 3, 0);
	SB(c, 7, VTL_SPACE_EOD, 2, 5);
	SB(c, -7, VTL_SPACE_BOT, 2, 0);
	close_slot(f, 0);
}

static void test_overwrite_truncates(void **state)
{
	struct fx *f = *state;
	fx_pool(f);
	struct vtl_cart *c = fx_cart(f, "OVERW1", true);
	for (unsigned i = 0; i < 10; i++)
		WR(c, i, 9000, false);
	LOC(c, 4);
	WR(c, 100, 777, false);
	POS(c, 5, 0, 5);
	EXPECT_RC(vtl_cart_rewind(c), 0);
	for (unsigned i = 0; i < 4; i++)
		RD_DATA(c, i, i, 9000, false);
	RD_DATA(c, 4, 100, 777, false);
	RD_EOD(c, 5);
	LOC(c, 5);
	RD_EOD(c, 5);
	EXPECT_RC(vtl_cart_locate(c, 6), VTL_E_EOD);
	/* Filemarks truncate too. */
	LOC(c, 2);
	WFM(c, 2);
	POS(c, 4, 2, 4);
	EXPECT_RC(vtl_cart_rewind(c), 0);
	RD_DATA(c, 0, 0, 9000, false);
	RD_DATA(c, 1, 1, 9000, false);
	RD_FM(c, 2);
	RD_FM(c, 3);
	RD_EOD(c, 4);
	/* Overwrite at BOT. */
	EXPECT_RC(vtl_cart_rewind(c), 0);
	WR(c, 200, 5, false);
	POS(c, 1, 0, 1);
	c = reopen_slot(f, 0, "OVERW1", params(false));
	POS(c, 0, 0, 1);
	RD_DATA(c, 0, 200, 5, false);
	RD_EOD(c, 1);
	/* After a short read the position is past the block: writing there keeps it. */
	LOC(c, 0);
	struct vtl_read_result r;
	uint8_t b[2];
	EXPECT_RC(vtl_cart_read(c, b, 2, &r), 0);
	WR(c, 201, 6, false);
	POS(c, 2, 0, 2);
	EXPECT_RC(vtl_cart_rewind(c), 0);
	RD_DATA(c, 0, 200, 5, false);
	RD_DATA(c, 1, 201, 6, false);
	RD_EOD(c, 2);
	close_slot(f, 0);
}

static void test_overwrite_sealed_segment_reopen(void **state)
{
	struct fx *f = *state;
	fx_pool(f);
	struct vtl_cart *c = fx_cart(f, "SEALD1", true);
	struct elist e = { .n = 0 };
	for (unsigned i = 0; i < 50; i++) {
		if (i % 10 == 9)
			el_fm(c, &e);
		else
			el_write(c, &e, 100 + i, 7000, false);
	}
	c = reopen_slot(f, 0, "SEALD1", params(false));
	VERIFY(c, &e);
	/* Object 12 is far back, in the second segment or so. */
	LOC(c, 12);
	e.n = 12;
	el_write(c, &e, 900, 5000, false);
	el_fm(c, &e);
	el_write(c, &e, 901, 3000, true);
	POS(c, 15, 2, 15);
	VERIFY(c, &e);
	c = reopen_slot(f, 0, "SEALD1", params(false));
	POS(c, 0, 0, 15);
	VERIFY(c, &e);
	/* Append across many segments again (the old later segments are gone). */
	EXPECT_RC(vtl_cart_space_eod(c), 0);
	for (unsigned i = 0; i < 30; i++)
		el_write(c, &e, 2000 + i, 7000, false);
	VERIFY(c, &e);
	c = reopen_slot(f, 0, "SEALD1", params(false));
	POS(c, 0, 0, e.n);
	VERIFY(c, &e);
	/* Once more, without a reopen in between, far back. */
	LOC(c, 1);
	e.n = 1;
	el_write(c, &e, 3000, 60000, false);
	el_write(c, &e, 3001, 60000, false);
	c = reopen_slot(f, 0, "SEALD1", params(false));
	VERIFY(c, &e);
	close_slot(f, 0);
}

static void test_erase(void **state)
{
	struct fx *f = *state;
	fx_pool(f);
	struct vtl_cart *c = fx_cart(f, "ERASE1", true);
	struct elist e = { .n = 0 };
	for (unsigned i = 0; i < 30; i++) {
		if (i % 5 == 2)
			el_fm(c, &e);
		else
			el_write(c, &e, 10 + i, 5000, false);
	}
	uint64_t st7 = 0;
	for (unsigned i = 0; i < 7; i++)
		st7 += e.o[i].fm ? HDR : e.o[i].len + HDR;
	c = reopen_slot(f, 0, "ERASE1", params(false));
	/* At EOD: nothing to discard. */
	EXPECT_RC(vtl_cart_space_eod(c), 0);
	EXPECT_RC(vtl_cart_erase(c), 0);
	POS(c, 30, 6, 30);
	LOC(c, 7);
	EXPECT_RC(vtl_cart_erase(c), 0);
	POS(c, 7, 1, 7);
	RD_EOD(c, 7);
	assert_int_equal(stored(c), st7);
	e.n = 7;
	VERIFY(c, &e);
	c = reopen_slot(f, 0, "ERASE1", params(false));
	POS(c, 0, 0, 7);
	assert_int_equal(stored(c), st7);
	VERIFY(c, &e);
	/* Erase on a filemark's position removes the filemark. */
	LOC(c, 2);
	EXPECT_RC(vtl_cart_erase(c), 0);
	POS(c, 2, 0, 2);
	e.n = 2;
	VERIFY(c, &e);
	/* And from BOT: blank again. */
	EXPECT_RC(vtl_cart_rewind(c), 0);
	EXPECT_RC(vtl_cart_erase(c), 0);
	POS(c, 0, 0, 0);
	assert_int_equal(stored(c), 0);
	c = reopen_slot(f, 0, "ERASE1", params(false));
	POS(c, 0, 0, 0);
	assert_int_equal(stored(c), 0);
	RD_EOD(c, 0);
	/* Usable after. */
	WR(c, 5, 100, false);
	c = reopen_slot(f, 0, "ERASE1", params(false));
	RD_DATA(c, 0, 5, 100, false);
	RD_EOD(c, 1);
	close_slot(f, 0);
}

static void test_stored_bytes(void **state)
{
	struct fx *f = *state;
	fx_pool(f);
	struct vtl_cart *c = fx_cart(f, "STORE1", true);
	WR(c, 1, 1000, false);
	assert_int_equal(stored(c), 1000 + HDR);
	WFM(c, 1);
	assert_int_equal(stored(c), 1000 + 2 * HDR);
	WR(c, 2, 1, false);
	assert_int_equal(stored(c), 1001 + 3 * HDR);
	WFM(c, 3);
	assert_int_equal(stored(c), 1001 + 6 * HDR);
	WR(c, 3, 100000, false);
	assert_int_equal(stored(c), 101001 + 7 * HDR);
	/* Independent of the position. */
	LOC(c, 0);
	assert_int_equal(stored(c), 101001 + 7 * HDR);
	LOC(c, 3);
	assert_int_equal(stored(c), 101001 + 7 * HDR);
	c = reopen_slot(f, 0, "STORE1", params(false));
	assert_int_equal(stored(c), 101001 + 7 * HDR);
	/* Overwrite and erase give back what they discard. */
	LOC(c, 1);
	WR(c, 4, 10, false);
	assert_int_equal(stored(c), 1010 + 2 * HDR);
	LOC(c, 1);
	EXPECT_RC(vtl_cart_erase(c), 0);
	assert_int_equal(stored(c), 1000 + HDR);
	c = reopen_slot(f, 0, "STORE1", params(false));
	assert_int_equal(stored(c), 1000 + HDR);
	close_slot(f, 0);
}

static void test_capacity_ew_eom(void **state)
{
	struct fx *f = *state;
	fx_pool(f);
	const uint64_t cost = 1000 + HDR;
	struct vtl_cart_params p = params(false);
	p.capacity = 20 * cost + 500;
	p.early_warning = 5 * cost; /* EW point: 15 * cost + 500 */
	EXPECT_RC(vtl_cart_create(f->pool, "CAPAC1"), 0);
	struct vtl_cart *c = f->cart[0] = open_p(f, "CAPAC1", p);
	struct vtl_position pos;
	for (unsigned k = 1; k <= 20; k++) {
		int rc = wr_(c, k, 1000, false);
		int want = k <= 15 ? 0 : VTL_W_EARLY_WARNING;
		if (rc != want)
			fail_msg("write %u (stored %" PRIu64 " of %" PRIu64 ", EW from %" PRIu64
				 "): %d (%s), expected %d",
				 k, k * cost, p.capacity, p.capacity - p.early_warning, rc, es(rc),
				 want);
		get_pos(c, &pos);
		assert_int_equal(pos.stored_bytes, k * cost);
		assert_int_equal(pos.early_warning, k > 15);
	}
	/* Does not fit: nothing changes. */
	EXPECT_RC(wr_(c, 21, 1000, false), VTL_E_EOM);
	POS(c, 20, 0, 20);
	assert_int_equal(stored(c), 20 * cost);
	EXPECT_RC(wr_(c, 21, 1000, true), VTL_E_EOM); /* random data: compression off anyway */
	/* A filemark does fit (past EW). */
	EXPECT_RC(vtl_cart_write_filemarks(c, 1), VTL_W_EARLY_WARNING);
	POS(c, 21, 1, 21);
	/* 20 more do not: none is written. */
	EXPECT_RC(vtl_cart_write_filemarks(c, 20), VTL_E_EOM);
	POS(c, 21, 1, 21);
	assert_int_equal(stored(c), 20 * cost + HDR);
	/* 14 do (exactly 20 bytes left after). */
	EXPECT_RC(vtl_cart_write_filemarks(c, 14), VTL_W_EARLY_WARNING);
	POS(c, 35, 15, 35);
	assert_int_equal(stored(c), 20 * cost + 15 * HDR);
	EXPECT_RC(wr_(c, 99, 1, false), VTL_E_EOM);
	EXPECT_RC(vtl_cart_write_filemarks(c, 1), VTL_E_EOM);
	POS(c, 35, 15, 35);
	/* Everything reads back. */
	EXPECT_RC(vtl_cart_rewind(c), 0);
	for (unsigned k = 1; k <= 20; k++)
		RD_DATA(c, k - 1, k, 1000, false);
	for (unsigned k = 20; k < 35; k++)
		RD_FM(c, k);
	RD_EOD(c, 35);
	/* An overwrite far back frees room and clears EW. */
	LOC(c, 10);
	EXPECT_RC(wr_(c, 50, 1000, false), 0);
	get_pos(c, &pos);
	assert_int_equal(pos.eod, 11);
	assert_int_equal(pos.stored_bytes, 11 * cost);
	assert_false(pos.early_warning);
	c = reopen_slot(f, 0, "CAPAC1", p);
	get_pos(c, &pos);
	assert_int_equal(pos.eod, 11);
	assert_false(pos.early_warning);
	EXPECT_RC(vtl_cart_space_eod(c), 0);
	for (unsigned k = 12; k <= 15; k++)
		EXPECT_RC(wr_(c, 50 + k, 1000, false), 0);
	EXPECT_RC(wr_(c, 66, 1000, false), VTL_W_EARLY_WARNING);
	/* Reopened past EW: the position says so from BOT on. */
	c = reopen_slot(f, 0, "CAPAC1", p);
	get_pos(c, &pos);
	assert_int_equal(pos.eod, 16);
	assert_true(pos.early_warning);
	assert_true(pos.bot);
	/* Without a capacity the same tape takes more. */
	c = reopen_slot(f, 0, "CAPAC1", params(false));
	EXPECT_RC(vtl_cart_space_eod(c), 0);
	for (unsigned k = 0; k < 10; k++)
		EXPECT_RC(wr_(c, 70 + k, 1000, false), 0);
	get_pos(c, &pos);
	assert_false(pos.early_warning);
	assert_int_equal(pos.eod, 26);
	close_slot(f, 0);
}

/* SET CAPACITY's backend half: only at BOT, read-only refused, early warning and EOM follow the new capacity. */
static void test_set_capacity(void **state)
{
	struct fx *f = *state;
	fx_pool(f);
	const uint64_t cost = 1000 + HDR;
	EXPECT_RC(vtl_cart_create(f->pool, "SETCAP"), 0);
	struct vtl_cart *c = f->cart[0] = open_p(f, "SETCAP", params(false));
	WR(c, 1, 1000, false);
	EXPECT_RC(vtl_cart_set_capacity(c, 4 * cost, cost), VTL_E_INVAL); /* not at BOT */
	EXPECT_RC(vtl_cart_rewind(c), 0);
	EXPECT_RC(vtl_cart_set_capacity(c, cost, 2 * cost), VTL_E_INVAL); /* EW beyond the capacity */
	EXPECT_RC(vtl_cart_set_capacity(c, 4 * cost, cost), 0);
	struct vtl_position pos;
	get_pos(c, &pos);
	assert_false(pos.early_warning);
	EXPECT_RC(vtl_cart_space_eod(c), 0);
	EXPECT_RC(wr_(c, 2, 1000, false), 0);
	EXPECT_RC(wr_(c, 3, 1000, false), VTL_W_EARLY_WARNING); /* 3 * cost >= 4 * cost - cost */
	EXPECT_RC(wr_(c, 4, 1000, false), VTL_W_EARLY_WARNING);
	EXPECT_RC(wr_(c, 5, 1000, false), VTL_E_EOM);
	POS(c, 4, 0, 4);
	/* Unlimited again (capacity 0) at BOT: the write fits. */
	EXPECT_RC(vtl_cart_rewind(c), 0);
	EXPECT_RC(vtl_cart_set_capacity(c, 0, 0), 0);
	EXPECT_RC(vtl_cart_space_eod(c), 0);
	EXPECT_RC(wr_(c, 5, 1000, false), 0);
	/* Read-only opens refuse it. */
	struct vtl_cart_params ro = params(false);
	ro.readonly = true;
	c = reopen_slot(f, 0, "SETCAP", ro);
	EXPECT_RC(vtl_cart_set_capacity(c, 4 * cost, cost), VTL_E_READONLY);
	close_slot(f, 0);
}

static void test_capacity_compression_fits_more(void **state)
{
	struct fx *f = *state;
	fx_pool(f);
	struct vtl_cart_params p = params(true);
	p.capacity = 64u << 10;
	EXPECT_RC(vtl_cart_create(f->pool, "CAPCMP"), 0);
	struct vtl_cart *c = f->cart[0] = open_p(f, "CAPCMP", p);
	unsigned n = 0;
	int rc;
	while ((rc = wr_(c, n, 8192, true)) >= 0) {
		n++;
		assert_true(n < 100000);
	}
	EXPECT_RC(rc, VTL_E_EOM);
	print_message("  %u compressible 8 KiB blocks in a 64 KiB capacity\n", n);
	assert_true(n >= 16); /* raw, only 7 would fit */
	assert_true(stored(c) <= p.capacity);
	c = reopen_slot(f, 0, "CAPCMP", params(false));
	for (unsigned i = 0; i < n; i++)
		RD_DATA(c, i, i, 8192, true);
	RD_EOD(c, n);
	close_slot(f, 0);
}

static void test_worm(void **state)
{
	struct fx *f = *state;
	fx_pool(f);
	struct vtl_cart_params p = params(false);
	p.worm = true;
	EXPECT_RC(vtl_cart_create(f->pool, "WORM01"), 0);
	struct vtl_cart *c = f->cart[0] = open_p(f, "WORM01", p);
	struct elist e = { .n = 0 };
	for (unsigned i = 0; i < 3; i++)
		el_write(c, &e, i, 30000, false);
	el_fm(c, &e);
	el_write(c, &e, 10, 30000, false);
	el_write(c, &e, 11, 30000, false);
	for (int pass = 0; pass < 2; pass++) {
		uint64_t st = stored(c);
		for (uint64_t at = 0; at < e.n; at++) {
			LOC(c, at);
			EXPECT_RC(wr_(c, 99, 100, false), VTL_E_WORM);
			EXPECT_RC(vtl_cart_write_filemarks(c, 1), VTL_E_WORM);
			EXPECT_RC(vtl_cart_erase(c), VTL_E_WORM);
			struct vtl_position pos;
			get_pos(c, &pos);
			assert_int_equal(pos.object, at);
			assert_int_equal(pos.eod, e.n);
			assert_int_equal(pos.stored_bytes, st);
		}
		VERIFY(c, &e);
		/* Appending is fine. */
		EXPECT_RC(vtl_cart_space_eod(c), 0);
		el_write(c, &e, 20 + (uint64_t)pass, 40000, false);
		el_fm(c, &e);
		VERIFY(c, &e);
		c = reopen_slot(f, 0, "WORM01", p);
		VERIFY(c, &e);
	}
	close_slot(f, 0);
}

static void test_readonly(void **state)
{
	struct fx *f = *state;
	fx_pool(f);
	struct vtl_cart *c = fx_cart(f, "RDONLY", true);
	struct elist e = { .n = 0 };
	for (unsigned i = 0; i < 20; i++) {
		if (i == 7)
			el_fm(c, &e);
		else
			el_write(c, &e, i, 9000, i % 3 == 0);
	}
	close_slot(f, 0);
	struct vtl_cart_params p = params(false);
	p.readonly = true;
	c = f->cart[0] = open_p(f, "RDONLY", p);
	f->cart[1] = open_p(f, "RDONLY", p); /* readers do not exclude each other */
	close_slot(f, 1);
	VERIFY(c, &e);
	for (uint64_t at = 0; at <= e.n; at += 5) {
		LOC(c, at);
		EXPECT_RC(wr_(c, 99, 100, false), VTL_E_READONLY);
		EXPECT_RC(vtl_cart_write_filemarks(c, 1), VTL_E_READONLY);
		EXPECT_RC(vtl_cart_erase(c), VTL_E_READONLY);
		POS(c, at, at > 7 ? 1 : 0, e.n);
	}
	EXPECT_RC(vtl_cart_space_eod(c), 0);
	EXPECT_RC(wr_(c, 99, 100, false), VTL_E_READONLY);
	EXPECT_RC(vtl_cart_write_filemarks(c, 1), VTL_E_READONLY);
	VERIFY(c, &e);
	close_slot(f, 0);
	c = fx_cart(f, "RDONLY", false);
	VERIFY(c, &e);
	close_slot(f, 0);
}

static void test_busy_same_process(void **state)
{
	struct fx *f = *state;
	fx_pool(f);
	EXPECT_RC(vtl_cart_create(f->pool, "BUSY01"), 0);
	EXPECT_RC(vtl_cart_create(f->pool, "BUSY02"), 0);
	struct vtl_cart_params p = params(false);
	f->cart[0] = open_p(f, "BUSY01", p);
	struct vtl_cart *c2 = NULL;
	int rc = vtl_cart_open(f->pool, "BUSY01", &p, &c2);
	if (rc == 0 && c2)
		EXPECT_RC(vtl_cart_close(c2), 0);
	EXPECT_RC(rc, VTL_E_BUSY);
	/* Another cartridge is independent. */
	f->cart[1] = open_p(f, "BUSY02", p);
	WR(f->cart[0], 1, 100, false);
	close_slot(f, 0);
	f->cart[0] = open_p(f, "BUSY01", p);
	RD_DATA(f->cart[0], 0, 1, 100, false);
	close_slot(f, 0);
	close_slot(f, 1);
	/* A second pool instance on the same directories is still refused. */
	struct vtl_pool *p2 = NULL;
	char err[256];
	f->cart[0] = open_p(f, "BUSY01", p);
	EXPECT_RC(vtl_pool_open(&f->cfg, &p2, err, sizeof(err)), 0);
	struct vtl_cart *c3 = NULL;
	rc = vtl_cart_open(p2, "BUSY01", &p, &c3);
	if (rc == 0)
		EXPECT_RC(vtl_cart_close(c3), 0);
	vtl_pool_close(p2);
	EXPECT_RC(rc, VTL_E_BUSY);
	close_slot(f, 0);
}

/* A writable open in another process (another drive daemon) is refused while held. */
static void test_busy_other_process(void **state)
{
	struct fx *f = *state;
	fx_config(f, SEG);
	int to_child[2], to_parent[2];
	assert_int_equal(pipe(to_child), 0);
	assert_int_equal(pipe(to_parent), 0);
	fflush(NULL);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		/* Child: no cmocka here. */
		close(to_child[1]);
		close(to_parent[0]);
		struct vtl_pool *pool = NULL;
		char err[256];
		int res[2];
		char go;
		alarm(60); /* never outlive a parent that failed half-way */
		for (int phase = 0; phase < 2; phase++) {
			if (read(to_child[0], &go, 1) != 1)
				_exit(20);
			if (vtl_pool_open(&f->cfg, &pool, err, sizeof(err)) != 0)
				_exit(21);
			struct vtl_cart_params p;
			memset(&p, 0, sizeof(p));
			struct vtl_cart *c = NULL;
			res[phase] = vtl_cart_open(pool, "XPROC1", &p, &c);
			if (res[phase] == 0)
				EXPECT_RC(vtl_cart_close(c), 0);
			vtl_pool_close(pool);
			if (write(to_parent[1], &res[phase], sizeof(int)) != sizeof(int))
				_exit(22);
		}
		_exit(0);
	}
	close(to_child[0]);
	close(to_parent[1]);
	fx_pool_open_cfg(f);
	EXPECT_RC(vtl_cart_create(f->pool, "XPROC1"), 0);
	struct vtl_cart *c = fx_cart(f, "XPROC1", false);
	WR(c, 1, 1000, false);
	int res = 1234;
	assert_int_equal(write(to_child[1], "g", 1), 1);
	assert_int_equal(read(to_parent[0], &res, sizeof(res)), sizeof(res));
	EXPECT_RC(res, VTL_E_BUSY);
	close_slot(f, 0);
	assert_int_equal(write(to_child[1], "g", 1), 1);
	assert_int_equal(read(to_parent[0], &res, sizeof(res)), sizeof(res));
	EXPECT_RC(res, 0);
	int st = 0;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	close(to_child[1]);
	close(to_parent[0]);
	c = fx_cart(f, "XPROC1", false);
	RD_DATA(c, 0, 1, 1000, false);
	close_slot(f, 0);
}

static void test_reopen_preserves_everything(void **state)
{
	struct fx *f = *state;
	fx_pool(f);
	struct vtl_cart *c = fx_cart(f, "REOPEN", true);
	struct elist e = { .n = 0 };
	uint64_t s = 12345;
	unsigned files = 0;
	for (unsigned i = 0; i < 200; i++) {
		uint64_t r = splitmix64(&s);
		if (r % 10 == 0) {
			el_fm(c, &e);
			files++;
		} else {
			bool comp = (r >> 8) & 1;
			vtl_cart_set_compression(c, (r >> 9) & 1);
			el_write(c, &e, r, 1 + (uint32_t)((r >> 16) % 20000), comp);
		}
	}
	struct vtl_position before;
	get_pos(c, &before);
	assert_int_equal(before.eod, 200);
	assert_int_equal(before.file, files);
	for (int pass = 0; pass < 2; pass++) {
		c = reopen_slot(f, 0, "REOPEN", params(pass == 1));
		struct vtl_position p;
		get_pos(c, &p);
		assert_int_equal(p.object, 0);
		assert_int_equal(p.file, 0);
		assert_true(p.bot);
		assert_false(p.at_eod);
		assert_int_equal(p.eod, e.n);
		assert_int_equal(p.stored_bytes, before.stored_bytes);
		VERIFY(c, &e);
		EXPECT_RC(vtl_cart_space_eod(c), 0);
		POS(c, e.n, files, e.n);
		/* Append in the second pass. */
		if (pass == 0) {
			el_write(c, &e, 777, 12345, false);
			el_fm(c, &e);
			files++;
			el_write(c, &e, 778, 54321, true);
			get_pos(c, &before);
		}
	}
	close_slot(f, 0);
}

static void test_sync_then_reopen(void **state)
{
	struct fx *f = *state;
	fx_pool(f);
	struct vtl_cart *c = fx_cart(f, "SYNC01", true);
	struct elist e = { .n = 0 };
	for (unsigned i = 0; i < 20; i++)
		el_write(c, &e, i, 6000, false);
	EXPECT_RC(vtl_cart_sync(c), 0);
	POS(c, 20, 0, 20);
	el_fm(c, &e);
	for (unsigned i = 0; i < 5; i++)
		el_write(c, &e, 100 + i, 6000, true);
	LOC(c, 3);
	EXPECT_RC(vtl_cart_sync(c), 0);
	POS(c, 3, 0, 26);
	RD_DATA(c, 3, 3, 6000, false);
	EXPECT_RC(vtl_cart_sync(c), 0);
	EXPECT_RC(vtl_cart_sync(c), 0);
	POS(c, 4, 0, 26);
	VERIFY(c, &e);
	c = reopen_slot(f, 0, "SYNC01", params(false));
	VERIFY(c, &e);
	close_slot(f, 0);
}

/* Record i of the mixed stream: random, compressible, zeros, or 64 KiB pieces of each in turn. */
static void mixed_record(uint8_t *b, size_t len, unsigned i)
{
	switch (i % 4) {
	case 0:
	case 1:
		gen_data(b, len, 100 + i, i % 4 == 1);
		break;
	case 2:
		memset(b, 0, len);
		break;
	default:
		for (size_t at = 0; at < len; at += 64u << 10)
			gen_data(b + at, len - at < (64u << 10) ? len - at : 64u << 10, 100 + i + at, (at >> 16) & 1);
	}
}

static void test_adaptive_compression_reads_back(void **state)
{
	struct fx *f = *state;
	fx_pool(f);
	EXPECT_RC(vtl_cart_create(f->pool, "ADAPT1"), 0);
	struct vtl_cart *c = f->cart[0] = open_p(f, "ADAPT1", params(true));
	const size_t L = 256u << 10;
	const unsigned N = 16;
	uint8_t *b = talloc(L), *got = talloc(L);
	assert_non_null(b);
	assert_non_null(got);
	uint64_t st_before[4] = {0}, st_after[4] = {0};
	for (unsigned i = 0; i < N; i++) {
		mixed_record(b, L, i);
		st_before[i % 4] += stored(c);
		EXPECT_RC(vtl_cart_write_block(c, b, L), 0);
		st_after[i % 4] += stored(c);
	}
	/* What the medium holds: random at full size, the rest smaller. */
	assert_true(st_after[0] - st_before[0] >= N / 4 * L);
	assert_true(st_after[1] - st_before[1] < N / 4 * L * 2 / 3);
	assert_true(st_after[2] - st_before[2] < N / 4 * L / 16);
	assert_true(st_after[3] - st_before[3] < N / 4 * L * 6 / 7);
	EXPECT_RC(vtl_cart_sync(c), 0);
	for (int pass = 0; pass < 2; pass++) {
		EXPECT_RC(vtl_cart_rewind(c), 0);
		for (unsigned i = 0; i < N; i++) {
			struct vtl_read_result r;
			mixed_record(b, L, i);
			EXPECT_RC(vtl_cart_read(c, got, L, &r), 0);
			EQ(__LINE__, "r.length", r.length, L);
			assert_memory_equal(got, b, L);
		}
		c = reopen_slot(f, 0, "ADAPT1", params(true));
	}
	tfree(b);
	tfree(got);
	close_slot(f, 0);
}

static void test_compression_stored_sizes(void **state)
{
	struct fx *f = *state;
	fx_pool(f);
	EXPECT_RC(vtl_cart_create(f->pool, "COMPR1"), 0);
	struct vtl_cart *c = f->cart[0] = open_p(f, "COMPR1", params(true));
	const uint32_t L = 64u << 10;
	uint64_t s0 = stored(c);
	WR(c, 1, L, true);
	uint64_t s1 = stored(c);
	print_message("  compressible %u bytes stored as %" PRIu64 "\n", L, s1 - s0);
	assert_true(s1 - s0 < L / 4);
	struct vtl_cart_stats st;
	vtl_cart_stats(c, &st);
	assert_int_equal(st.written_bytes, L);
	assert_true(st.written_stored < st.written_bytes);
	WR(c, 2, L, false); /* random: stored raw */
	uint64_t s2 = stored(c);
	print_message("  random %u bytes stored as %" PRIu64 "\n", L, s2 - s1);
	assert_true(s2 - s1 >= L);
	assert_true(s2 - s1 <= L + HDR + 32);
	vtl_cart_stats(c, &st);
	assert_int_equal(st.written_bytes, 2 * L);
	/* Off: the same compressible data costs L + header. */
	vtl_cart_set_compression(c, false);
	WR(c, 3, L, true);
	assert_int_equal(stored(c) - s2, L + HDR);
	vtl_cart_set_compression(c, true);
	WR(c, 4, 1, true); /* tiny */
	assert_true(stored(c) - s2 - L - HDR <= 1 + HDR + 32);
	for (int pass = 0; pass < 2; pass++) {
		EXPECT_RC(vtl_cart_rewind(c), 0);
		RD_DATA(c, 0, 1, L, true);
		RD_DATA(c, 1, 2, L, false);
		RD_DATA(c, 2, 3, L, true);
		RD_DATA(c, 3, 4, 1, true);
		RD_EOD(c, 4);
		c = reopen_slot(f, 0, "COMPR1", params(pass == 0));
	}
	close_slot(f, 0);
}

/* Runs of 20000 bytes, alternately random and text: compressed in pieces, some shrink, some not. */
static void gen_mixed(uint8_t *buf, size_t len, uint64_t key)
{
	uint8_t *tmp = talloc(20000);
	for (size_t c = 0; c * 20000 < len; c++) {
		size_t from = c * 20000, n = len - from < 20000 ? len - from : 20000;
		gen_data(tmp, n, key * 31 + c, c % 2);
		memcpy(buf + from, tmp, n);
	}
	tfree(tmp);
}

/* Content kinds for the piece test: 0 random, 1 text, 2 mixed. */
static void gen_kind(uint8_t *buf, size_t len, uint64_t key, int kind)
{
	if (kind == 2)
		gen_mixed(buf, len, key);
	else
		gen_data(buf, len, key, kind == 1);
}

/*
 * Compression works on pieces of a block: lengths around piece multiples,
 * each kind of content, whole and partial reads, and reads of the same
 * blocks after a reopen without compression.
 */
static void test_compression_pieces(void **state)
{
	struct fx *f = *state;
	fx_pool(f);
	static const uint32_t lens[] = { 1, 100, 4096, 65535, 65536, 65537, 131071, 131072, 131073,
					 200000, (1u << 20) + 7 };
	const unsigned nl = VTL_ARRAY_SIZE(lens);
	EXPECT_RC(vtl_cart_create(f->pool, "PIECE1"), 0);
	struct vtl_cart *c = f->cart[0] = open_p(f, "PIECE1", params(true));
	uint8_t *buf = talloc((1u << 20) + 64), *got = talloc((1u << 20) + 64);
	for (int kind = 0; kind < 3; kind++)
		for (unsigned i = 0; i < nl; i++) {
			uint64_t before = stored(c);
			gen_kind(buf, lens[i], 100 * (uint64_t)kind + i, kind);
			int rc = vtl_cart_write_block(c, buf, lens[i]);
			if (rc != 0)
				fail_msg("write of %u bytes of kind %d: %d (%s)", lens[i], kind, rc, es(rc));
			uint64_t cost = stored(c) - before;
			if (cost > (uint64_t)lens[i] + HDR + 32 + lens[i] / 64)
				fail_msg("%u bytes of kind %d cost %" PRIu64 " stored bytes", lens[i], kind,
					 cost);
			if (kind == 1 && lens[i] >= 4096 && cost > lens[i] / 4)
				fail_msg("%u bytes of text cost %" PRIu64 " stored bytes", lens[i], cost);
			if (kind == 2 && lens[i] >= 131072 && cost > lens[i] * 3 / 4)
				fail_msg("%u bytes, half text, cost %" PRIu64 " stored bytes", lens[i], cost);
		}
	for (int pass = 0; pass < 3; pass++) {
		for (int kind = 0; kind < 3; kind++)
			for (unsigned i = 0; i < nl; i++) {
				uint64_t obj = (uint64_t)kind * nl + i;
				if (pass == 2)
					LOC(c, obj);
				else if (obj == 0)
					EXPECT_RC(vtl_cart_rewind(c), 0);
				gen_kind(buf, lens[i], 100 * (uint64_t)kind + i, kind);
				/* pass 1: partial reads of different sizes */
				size_t bl = pass != 1 ? lens[i] + 64 : (obj % 3 == 0 ? lens[i] / 2 + 1 : obj % 3 == 1 ? 65536 : 70000);
				memset(got, 0xee, bl + 64 < (1u << 20) + 64 ? bl + 64 : (1u << 20) + 64);
				struct vtl_read_result r;
				int rc = vtl_cart_read(c, got, bl, &r);
				if (rc != 0)
					fail_msg("pass %d: read of object %" PRIu64 " (%u bytes, kind %d): %d (%s)",
						 pass, obj, lens[i], kind, rc, es(rc));
				size_t want = bl < lens[i] ? bl : lens[i];
				if (r.type != VTL_OBJ_DATA || r.object != obj || r.length != lens[i] ||
				    r.copied != want)
					fail_msg("pass %d: object %" PRIu64 ": type %d object %" PRIu64
						 " length %u copied %u, expected %u / %zu",
						 pass, obj, r.type, r.object, r.length, r.copied, lens[i], want);
				if (memcmp(buf, got, want) != 0)
					fail_msg("pass %d: object %" PRIu64 " (%u bytes, kind %d, %zu read): "
						 "data differs",
						 pass, obj, lens[i], kind, want);
				if (want < bl && bl + 64 <= (1u << 20) + 64 && got[want] != 0xee)
					fail_msg("pass %d: object %" PRIu64 ": bytes past the block", pass, obj);
			}
		if (pass == 0)
			RD_EOD(c, 3 * nl);
		c = reopen_slot(f, 0, "PIECE1", params(pass == 0 ? false : true));
	}
	/* One 16 MiB block of mixed content. */
	tfree(buf);
	tfree(got);
	buf = talloc(VTL_BLOCK_MAX);
	got = talloc(VTL_BLOCK_MAX);
	gen_mixed(buf, VTL_BLOCK_MAX, 4242);
	EXPECT_RC(vtl_cart_space_eod(c), 0);
	EXPECT_RC(vtl_cart_write_block(c, buf, VTL_BLOCK_MAX), 0);
	c = reopen_slot(f, 0, "PIECE1", params(false));
	LOC(c, 3 * nl);
	struct vtl_read_result r;
	EXPECT_RC(vtl_cart_read(c, got, VTL_BLOCK_MAX, &r), 0);
	assert_int_equal(r.length, VTL_BLOCK_MAX);
	assert_int_equal(r.copied, VTL_BLOCK_MAX);
	if (memcmp(buf, got, VTL_BLOCK_MAX) != 0)
		fail_msg("16 MiB mixed block differs");
	close_slot(f, 0);
	tfree(buf);
	tfree(got);
}

static void test_compression_mixed_reopen(void **state)
{
	struct fx *f = *state;
	fx_pool(f);
	EXPECT_RC(vtl_cart_create(f->pool, "COMPR2"), 0);
	struct vtl_cart *c = f->cart[0] = open_p(f, "COMPR2", params(true));
	struct elist e = { .n = 0 };
	uint64_t s = 99;
	for (unsigned i = 0; i < 120; i++) {
		uint64_t r = splitmix64(&s);
		if (i % 10 == 0)
			vtl_cart_set_compression(c, (r >> 3) & 1);
		if (r % 17 == 0)
			el_fm(c, &e);
		else
			el_write(c, &e, r, 1 + (uint32_t)((r >> 20) % 40000), (r >> 5) & 1);
	}
	VERIFY(c, &e);
	c = reopen_slot(f, 0, "COMPR2", params(false));
	VERIFY(c, &e);
	c = reopen_slot(f, 0, "COMPR2", params(true));
	VERIFY(c, &e);
	/* An uncompressed session appending to a compressed tape, and overwrite. */
	c = reopen_slot(f, 0, "COMPR2", params(false));
	LOC(c, 60);
	e.n = 60;
	for (unsigned i = 0; i < 10; i++)
		el_write(c, &e, 5000 + i, 30000, true);
	c = reopen_slot(f, 0, "COMPR2", params(true));
	VERIFY(c, &e);
	close_slot(f, 0);
}

static void test_readahead_sequential(void **state)
{
	struct fx *f = *state;
	fx_pool(f);
	struct vtl_cart *c = fx_cart(f, "RAHEAD", true);
	const unsigned n = 300;
	for (unsigned i = 0; i < n; i++)
		WR(c, i, 4000, i % 2);
	c = reopen_slot(f, 0, "RAHEAD", params(false));
	for (unsigned i = 0; i < n; i++)
		RD_DATA(c, i, i, 4000, i % 2);
	RD_EOD(c, n);
	struct vtl_cart_stats st;
	vtl_cart_stats(c, &st);
	print_message("  read-ahead: %" PRIu64 " hits, %" PRIu64 " misses\n", st.readahead_hits,
		      st.readahead_misses);
	assert_int_equal(st.read_bytes, (uint64_t)n * 4000);
	assert_int_equal(st.written_bytes, 0);
	assert_true(st.readahead_hits > 0);
	assert_true(st.readahead_hits + st.readahead_misses <= n + 1);
	/* Sequential runs interleaved with locates. */
	for (unsigned k = 0; k < 6; k++) {
		unsigned start = (k * 97) % 250;
		LOC(c, start);
		for (unsigned i = start; i < start + 40 && i < n; i++)
			RD_DATA(c, i, i, 4000, i % 2);
	}
	close_slot(f, 0);
}

/* Whatever the read-ahead fetched must not outlive a write or erase that discards it. */
static void test_readahead_invalidated(void **state)
{
	struct fx *f = *state;
	fx_config(f, SEG);
	f->cfg.readahead_depth = 4;
	f->cfg.readahead_chunk = 64u << 10;
	fx_pool_open_cfg(f);
	struct vtl_cart *c = fx_cart(f, "RAINV1", true);
	const unsigned n = 100;
	for (unsigned i = 0; i < n; i++)
		WR(c, i, 3000, false);
	c = reopen_slot(f, 0, "RAINV1", params(false));
	/* 1: overwrite ahead of the read position. */
	for (unsigned i = 0; i < 10; i++)
		RD_DATA(c, i, i, 3000, false);
	LOC(c, 20);
	WR(c, 1000, 3000, false);
	LOC(c, 10);
	for (unsigned i = 10; i < 20; i++)
		RD_DATA(c, i, i, 3000, false);
	RD_DATA(c, 20, 1000, 3000, false);
	RD_EOD(c, 21);
	/* 2: write at the read position itself. */
	EXPECT_RC(vtl_cart_rewind(c), 0);
	for (unsigned i = 0; i < 8; i++)
		RD_DATA(c, i, i, 3000, false);
	WR(c, 1001, 2000, false);
	POS(c, 9, 0, 9);
	LOC(c, 5);
	for (unsigned i = 5; i < 8; i++)
		RD_DATA(c, i, i, 3000, false);
	RD_DATA(c, 8, 1001, 2000, false);
	RD_EOD(c, 9);
	/* 3: erase ahead, then read up to it. */
	EXPECT_RC(vtl_cart_space_eod(c), 0);
	for (unsigned i = 9; i < 60; i++)
		WR(c, 2000 + i, 3000, false);
	c = reopen_slot(f, 0, "RAINV1", params(false));
	for (unsigned i = 0; i < 12; i++)
		RD_DATA(c, i, i < 8 ? i : (i == 8 ? 1001 : 2000 + i), i == 8 ? 2000 : 3000, false);
	LOC(c, 15);
	EXPECT_RC(vtl_cart_erase(c), 0);
	LOC(c, 12);
	for (unsigned i = 12; i < 15; i++)
		RD_DATA(c, i, 2000 + i, 3000, false);
	RD_EOD(c, 15);
	/* 4: then append different data there and read it through. */
	for (unsigned i = 15; i < 40; i++)
		WR(c, 3000 + i, 3000, false);
	LOC(c, 10);
	for (unsigned i = 10; i < 15; i++)
		RD_DATA(c, i, 2000 + i, 3000, false);
	for (unsigned i = 15; i < 40; i++)
		RD_DATA(c, i, 3000 + i, 3000, false);
	RD_EOD(c, 40);
	close_slot(f, 0);
}

/*
 * Blocks lent from the read-ahead (vtl_cart_read_lend) stay as read while
 * the loans are out, whatever the cartridge does: reading on (a lent slot is
 * never refilled), LOCATE (a reset), and closing the cartridge (the last
 * release frees the read-ahead). Under ASan a slot reused or freed early is
 * an error; in any build the held blocks are compared at the end.
 */
enum { LOAN_N = 60, LOAN_LEN = 3000 };

struct held {
	const void *data;
	struct vtl_loan *loan;
	uint64_t key;
	bool comp;
};

/* Reads object obj (written with key, comp) with a loan; a lent block is kept in h[*n]. */
static void rd_lend(struct vtl_cart *c, uint64_t key, bool comp, struct held *h, unsigned *n, uint8_t *buf)
{
	struct vtl_read_result r;
	const void *data;
	struct vtl_loan *loan;
	EXPECT_RC(vtl_cart_read_lend(c, buf, LOAN_LEN, &r, &data, &loan), 0);
	assert_int_equal(r.type, VTL_OBJ_DATA);
	assert_int_equal(r.length, LOAN_LEN);
	assert_int_equal(r.copied, LOAN_LEN);
	uint8_t *want = talloc(LOAN_LEN);
	gen_data(want, LOAN_LEN, key, comp);
	assert_memory_equal(loan ? data : buf, want, LOAN_LEN);
	tfree(want);
	if (loan)
		h[(*n)++] = (struct held){data, loan, key, comp};
}

/* Every held block still holds what was written; then the loans come back. */
static void release_held(struct held *h, unsigned n)
{
	uint8_t *want = talloc(LOAN_LEN);
	for (unsigned i = 0; i < n; i++) {
		gen_data(want, LOAN_LEN, h[i].key, h[i].comp);
		assert_memory_equal(h[i].data, want, LOAN_LEN);
		vtl_loan_release(h[i].loan);
	}
	tfree(want);
}

static void test_readahead_loans(void **state)
{
	struct fx *f = *state;
	fx_config(f, SEG);
	f->cfg.readahead_depth = 3;
	f->cfg.readahead_chunk = 16u << 10;
	fx_pool_open_cfg(f);
	struct vtl_cart *c = fx_cart(f, "RALEND", true);
	vtl_cart_set_compression(c, true);
	for (unsigned i = 0; i < LOAN_N; i++)
		WR(c, i, LOAN_LEN, i % 2); /* half compressible: decompressed in the slot, lent from there */
	c = reopen_slot(f, 0, "RALEND", params(false));
	static struct held h[3 * LOAN_N];
	unsigned n = 0;
	uint8_t *buf = talloc(LOAN_LEN);
	/* 1: read the whole tape holding every loan: the slots run out and reads go to disk, never over a loan. */
	for (unsigned i = 0; i < LOAN_N; i++)
		rd_lend(c, i, i % 2, h, &n, buf);
	RD_EOD(c, LOAN_N);
	assert_true(n > 0);
	assert_true(n < LOAN_N); /* three slots of 16 KiB cannot lend 60 blocks of 3000 bytes at once */
	release_held(h, n);
	/* 2: a LOCATE (reset) while blocks are lent, then reading on reuses only the slots given back. */
	n = 0;
	LOC(c, 0);
	for (unsigned i = 0; i < 10; i++)
		rd_lend(c, i, i % 2, h, &n, buf);
	unsigned before = n;
	assert_true(before > 0);
	LOC(c, 20);
	for (unsigned i = 20; i < 40; i++)
		rd_lend(c, i, i % 2, h, &n, buf);
	release_held(h, before); /* the first loans back: their slots may now be refilled */
	memmove(h, h + before, (n - before) * sizeof *h);
	n -= before;
	for (unsigned i = 40; i < LOAN_N; i++)
		rd_lend(c, i, i % 2, h, &n, buf);
	release_held(h, n);
	/* 3: the cartridge closed while blocks are lent (an UNLOAD before the host got its data). */
	n = 0;
	LOC(c, 0);
	for (unsigned i = 0; i < 12; i++)
		rd_lend(c, i, i % 2, h, &n, buf);
	assert_true(n > 0);
	close_slot(f, 0);
	release_held(h, n);
	tfree(buf);
}

/* True when the file system under dir serves O_DIRECT reads (tmpfs before Linux 6.6 refuses them). */
static bool dir_takes_direct(const char *dir)
{
	char path[TL_PATH_LEN + 16];
	snprintf(path, sizeof path, "%s/direct.probe", dir);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	static uint8_t page[8192];
	assert_int_equal(pwrite(fd, page, sizeof page, 0), (ssize_t)sizeof page);
	assert_int_equal(fdatasync(fd), 0);
	close(fd);
	void *buf = NULL;
	assert_int_equal(posix_memalign(&buf, 4096, 4096), 0);
	fd = open(path, O_RDONLY | O_DIRECT);
	bool ok = fd >= 0 && pread(fd, buf, 4096, 4096) == 4096;
	if (fd >= 0)
		close(fd);
	free(buf);
	unlink(path);
	return ok;
}

#define COLD_N 120
#define COLD_LEN 7001 /* odd: records and chunks start and end off the 4 KiB blocks O_DIRECT reads */

/* Offset in a segment file of member m of the first bytes of want, or -1 (its path in path). */
static int64_t find_block(struct fx *f, const char *bc, const uint8_t *want, char *path, size_t pathlen)
{
	for (unsigned m = 0; m < NMEMB; m++)
		for (unsigned seq = 0; seq < 64; seq++) {
			snprintf(path, pathlen, "%s/%s/%08u.seg", f->mpath[m], bc, seq);
			int fd = open(path, O_RDONLY);
			if (fd < 0)
				continue;
			struct stat sb;
			assert_int_equal(fstat(fd, &sb), 0);
			uint8_t *b = talloc((size_t)sb.st_size + 1);
			assert_int_equal(pread(fd, b, (size_t)sb.st_size, 0), sb.st_size);
			close(fd);
			uint8_t *hit = memmem(b, (size_t)sb.st_size, want, 64);
			int64_t off = hit ? hit - b : -1;
			tfree(b);
			if (off >= 0)
				return off;
		}
	return -1;
}

/*
 * Read-ahead of a cartridge the page cache does not hold: chunks are read with O_DIRECT where the file
 * system serves it, through the page cache where it holds them, and either way the host gets what it
 * wrote, and a byte damaged on disk is still a medium error at its block.
 */
static void test_readahead_cold(void **state)
{
	struct fx *f = *state;
	fx_config(f, 256u << 10);
	f->cfg.readahead_depth = 4;
	f->cfg.readahead_chunk = 40u << 10;
	fx_pool_open_cfg(f);
	bool direct = dir_takes_direct(f->mpath[0]);
	print_message("  O_DIRECT on %s: %s\n", f->mpath[0], direct ? "served" : "refused (reads stay buffered)");
	struct vtl_cart *c = fx_cart(f, "RACOLD", true);
	vtl_cart_set_compression(c, true);
	for (unsigned i = 0; i < COLD_N; i++)
		WR(c, i, COLD_LEN, i % 3 == 0); /* a third compressible: decompressed in the slot */
	WFM(c, 1);
	/* Just written, so in the page cache: read through it, nothing direct. */
	c = reopen_slot(f, 0, "RACOLD", params(false));
	for (unsigned i = 0; i < COLD_N; i++)
		RD_DATA(c, i, i, COLD_LEN, i % 3 == 0);
	RD_FM(c, COLD_N);
	struct vtl_cart_stats st;
	vtl_cart_stats(c, &st);
	assert_true(st.readahead_hits > COLD_N / 2);
	assert_int_equal(st.readahead_direct, 0);
	/* Cold: every chunk from the disk (dropped after the open, whose own reads fill the cache). */
	close_slot(f, 0);
	c = fx_cart(f, "RACOLD", false);
	tl_drop_cache(f->dir);
	for (unsigned i = 0; i < COLD_N; i++)
		RD_DATA(c, i, i, COLD_LEN, i % 3 == 0);
	RD_FM(c, COLD_N);
	vtl_cart_stats(c, &st);
	print_message("  cold: %" PRIu64 " hits, %" PRIu64 " stored bytes read direct\n", st.readahead_hits,
		      st.readahead_direct);
	assert_true(st.readahead_hits > COLD_N / 2);
	if (direct)
		assert_true(st.readahead_direct > (uint64_t)COLD_N * COLD_LEN / 2); /* random blocks alone are 2/3 */
	else
		assert_int_equal(st.readahead_direct, 0);
	close_slot(f, 0);
	/* A payload byte of block 77 (random, stored raw) damaged on disk, read cold: an error there only. */
	uint8_t *want = talloc(COLD_LEN);
	gen_data(want, COLD_LEN, 77, false);
	char path[TL_PATH_LEN + 64];
	int64_t off = find_block(f, "RACOLD", want, path, sizeof path);
	assert_true(off >= 0);
	int fd = open(path, O_RDWR);
	assert_true(fd >= 0);
	uint8_t b;
	assert_int_equal(pread(fd, &b, 1, (off_t)off + 3000), 1);
	b ^= 0x10;
	assert_int_equal(pwrite(fd, &b, 1, (off_t)off + 3000), 1);
	close(fd);
	c = fx_cart(f, "RACOLD", false);
	tl_drop_cache(f->dir);
	for (unsigned i = 0; i < 77; i++)
		RD_DATA(c, i, i, COLD_LEN, i % 3 == 0);
	struct vtl_read_result r;
	uint8_t *got = talloc(COLD_LEN);
	EXPECT_RC(vtl_cart_read(c, got, COLD_LEN, &r), VTL_E_MEDIUM);
	LOC(c, 78);
	for (unsigned i = 78; i < COLD_N; i++)
		RD_DATA(c, i, i, COLD_LEN, i % 3 == 0);
	close_slot(f, 0);
	tfree(got);
	tfree(want);
	/* readahead_direct = no equivalent: the pool told to stay buffered never reads direct. */
	vtl_pool_close(f->pool);
	f->pool = NULL;
	f->cfg.readahead_buffered = true;
	fx_pool_open_cfg(f);
	c = fx_cart(f, "RACOLD", false);
	tl_drop_cache(f->dir);
	for (unsigned i = 0; i < 60; i++)
		RD_DATA(c, i, i, COLD_LEN, i % 3 == 0);
	vtl_cart_stats(c, &st);
	assert_true(st.readahead_hits > 30);
	assert_int_equal(st.readahead_direct, 0);
	close_slot(f, 0);
}

/* Record lengths around the direct writes' threshold (60 KiB) and DIRECT_ALIGN, odd ones included. */
static const size_t wd_lens[] = {65536, 61441, 100003, 7001, 262144, 1048579, 4096, 70000, 65535, 300001};
#define WD_LEN(key) wd_lens[(key) % (sizeof wd_lens / sizeof wd_lens[0])]
#define WD_COMP(key) ((key) % 5 == 2)

/* Every segment file of bc on the members ends with a trailer that decodes: no zeros after a footer. */
static unsigned wd_sealed_files(struct fx *f, const char *bc)
{
	unsigned n = 0;
	for (unsigned m = 0; m < NMEMB; m++)
		for (unsigned seq = 0; seq < 256; seq++) {
			char path[TL_PATH_LEN + 64];
			snprintf(path, sizeof path, "%s/%s/%08u.seg", f->mpath[m], bc, seq);
			int fd = open(path, O_RDONLY);
			if (fd < 0)
				continue;
			struct stat sb;
			assert_int_equal(fstat(fd, &sb), 0);
			unsigned char tb[TRAILER_LEN];
			assert_true(sb.st_size > TRAILER_LEN);
			assert_int_equal(pread(fd, tb, sizeof tb, sb.st_size - TRAILER_LEN), TRAILER_LEN);
			close(fd);
			struct seg_trailer t;
			if (seg_trailer_decode(tb, &t) != 0)
				fail_msg("%s (%lld bytes) does not end with its trailer", path, (long long)sb.st_size);
			n++;
		}
	return n;
}

/* Reads WDIRECT back from BOT after its cut at 12: records 0..11, the 8 written over the cut, a filemark. */
static void wd_read_cut(struct vtl_cart *c)
{
	for (unsigned i = 0; i < 12; i++)
		RD_DATA(c, i, i, WD_LEN(i), WD_COMP(i));
	for (unsigned j = 0; j < 8; j++)
		RD_DATA(c, 12 + j, 100 + j, WD_LEN(j + 3), WD_COMP(j));
	RD_FM(c, 20);
}

/*
 * Records appended past the page cache (O_DIRECT from 60 KiB on) beside buffered ones and filemarks:
 * every block reads back as written from the open segment the writer is still appending to, after a
 * cut in the middle and appends over it, across segment changes and after a close (whose files end
 * with their footers, not with the zeros a direct append leaves past the last record); and after a
 * writer that never closed (a crash), every record it synced and no damage.
 */
static void test_write_direct(void **state)
{
	struct fx *f = *state;
	fx_config(f, 2u << 20); /* segment changes every few records */
	fx_pool_open_cfg(f);
	bool direct = dir_takes_direct(f->mpath[0]);
	print_message("  O_DIRECT on %s: %s\n", f->mpath[0], direct ? "served" : "refused (writes stay buffered)");
	struct vtl_cart *c = fx_cart(f, "WDIRECT", true);
	vtl_cart_set_compression(c, true);
	for (unsigned i = 0; i < 30; i++)
		WR(c, i, WD_LEN(i), WD_COMP(i));
	WFM(c, 1);
	LOC(c, 0);
	for (unsigned i = 0; i < 30; i++)
		RD_DATA(c, i, i, WD_LEN(i), WD_COMP(i));
	RD_FM(c, 30);
	struct vtl_cart_stats st;
	vtl_cart_stats(c, &st);
	print_message("  %" PRIu64 " of %" PRIu64 " stored bytes appended direct\n", st.written_direct,
		      st.written_stored);
	if (direct)
		assert_true(st.written_direct > st.written_stored / 2);
	else
		assert_int_equal(st.written_direct, 0);
	/* A cut at 12 and appends over it, read back before any sync or close. */
	LOC(c, 12);
	for (unsigned j = 0; j < 8; j++)
		WR(c, 100 + j, WD_LEN(j + 3), WD_COMP(j));
	WFM(c, 1);
	LOC(c, 0);
	wd_read_cut(c);
	close_slot(f, 0);
	assert_true(wd_sealed_files(f, "WDIRECT") >= 2);
	/*
	 * A direct record (the first block, with the header, stays buffered) ending 64 bytes into a block:
	 * the zeros after it are longer than the footer, which must not leave them after its trailer.
	 */
	size_t first = 4000, at = SEG_HEADER_LEN + REC_HEADER_LEN + first + REC_HEADER_LEN;
	size_t pad_len = 17 * 4096 + 64 - at;
	c = fx_cart(f, "WDPAD", true);
	WR(c, 6, first, false);
	WR(c, 7, pad_len, false);
	vtl_cart_stats(c, &st);
	assert_int_equal(st.written_direct, direct ? REC_HEADER_LEN + pad_len : 0);
	close_slot(f, 0);
	assert_int_equal(wd_sealed_files(f, "WDPAD"), 1);
	c = fx_cart(f, "WDPAD", false);
	RD_DATA(c, 0, 6, first, false);
	RD_DATA(c, 1, 7, pad_len, false);
	close_slot(f, 0);
	c = fx_cart(f, "WDIRECT", false);
	wd_read_cut(c);
	close_slot(f, 0);

	/* A writer that never closes: it syncs 6 records, appends 3 more and exits. */
	fflush(NULL);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		alarm(60);
		struct vtl_pool *pool = NULL;
		char err[256];
		struct vtl_cart_params p;
		memset(&p, 0, sizeof p);
		struct vtl_cart *w = NULL;
		if (vtl_pool_open(&f->cfg, &pool, err, sizeof err) || vtl_cart_open(pool, "WDIRECT", &p, &w) ||
		    vtl_cart_space_eod(w))
			_exit(30);
		for (unsigned k = 0; k < 9; k++) {
			if (wr_(w, 200 + k, WD_LEN(k), false) < 0)
				_exit(31);
			if (k == 5 && vtl_cart_sync(w))
				_exit(32);
		}
		_exit(0); /* no close, no footer: the zeros past the last record stay */
	}
	int status = 0;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	struct vtl_cart_info info;
	EXPECT_RC(vtl_cart_info(f->pool, "WDIRECT", &info), 0);
	assert_int_equal(info.damaged, 0);
	c = fx_cart(f, "WDIRECT", false);
	wd_read_cut(c);
	for (unsigned k = 0; k < 9; k++)
		RD_DATA(c, 21 + k, 200 + k, WD_LEN(k), false); /* a process exit loses nothing written */
	close_slot(f, 0);
	EXPECT_RC(vtl_cart_info(f->pool, "WDIRECT", &info), 0);
	assert_int_equal(info.damaged, 0);

	/* write_direct = no: the pool told to stay buffered never writes direct. */
	vtl_pool_close(f->pool);
	f->pool = NULL;
	f->cfg.write_buffered = true;
	fx_pool_open_cfg(f);
	c = fx_cart(f, "WDIRECT", false);
	EXPECT_RC(vtl_cart_space_eod(c), 0);
	for (unsigned k = 0; k < 4; k++)
		WR(c, 300 + k, WD_LEN(k), false);
	vtl_cart_stats(c, &st);
	assert_int_equal(st.written_direct, 0);
	LOC(c, 30);
	for (unsigned k = 0; k < 4; k++)
		RD_DATA(c, 30 + k, 300 + k, WD_LEN(k), false);
	close_slot(f, 0);
}

static void test_stats(void **state)
{
	struct fx *f = *state;
	fx_pool(f);
	struct vtl_cart *c = fx_cart(f, "STATS1", true);
	struct vtl_cart_stats st;
	memset(&st, 0xff, sizeof(st));
	vtl_cart_stats(c, &st);
	assert_int_equal(st.written_bytes, 0);
	assert_int_equal(st.written_stored, 0);
	assert_int_equal(st.read_bytes, 0);
	assert_int_equal(st.read_stored, 0);
	WR(c, 1, 100, false);
	WR(c, 2, 200, false);
	WFM(c, 1);
	WR(c, 3, 300, false);
	vtl_cart_stats(c, &st);
	assert_int_equal(st.written_bytes, 600);
	assert_true(st.written_stored >= 600);
	assert_int_equal(st.read_bytes, 0);
	EXPECT_RC(vtl_cart_rewind(c), 0);
	RD_DATA(c, 0, 1, 100, false);
	RD_DATA(c, 1, 2, 200, false);
	RD_FM(c, 2);
	RD_DATA(c, 3, 3, 300, false);
	vtl_cart_stats(c, &st);
	assert_int_equal(st.read_bytes, 600);
	assert_true(st.read_stored >= 600);
	/* A new session starts from zero. */
	c = reopen_slot(f, 0, "STATS1", params(false));
	vtl_cart_stats(c, &st);
	assert_int_equal(st.written_bytes, 0);
	assert_int_equal(st.read_bytes, 0);
	close_slot(f, 0);
}

static void test_multiple_carts_interleaved(void **state)
{
	struct fx *f = *state;
	fx_pool(f);
	static const char *const bc[3] = { "MULTI0", "MULTI1", "MULTI2" };
	static struct elist e[3];
	for (int k = 0; k < 3; k++) {
		e[k].n = 0;
		EXPECT_RC(vtl_cart_create(f->pool, bc[k]), 0);
		f->cart[k] = open_p(f, bc[k], params(k == 1));
	}
	for (unsigned i = 0; i < 40; i++)
		for (int k = 0; k < 3; k++) {
			if (i % 9 == 8)
				el_fm(f->cart[k], &e[k]);
			else
				el_write(f->cart[k], &e[k], (uint64_t)k * 1000 + i, 2000 + 500 * k + i * 37,
					 k != 0);
		}
	/* Read one while the others write. */
	EXPECT_RC(vtl_cart_rewind(f->cart[0]), 0);
	for (unsigned i = 0; i < e[0].n; i++) {
		if (e[0].o[i].fm)
			RD_FM(f->cart[0], i);
		else
			RD_DATA(f->cart[0], i, e[0].o[i].key, e[0].o[i].len, e[0].o[i].comp);
		el_write(f->cart[1 + i % 2], &e[1 + i % 2], 50000 + i, 5000, true);
	}
	for (int k = 0; k < 3; k++)
		close_slot(f, k);
	for (int k = 0; k < 3; k++)
		f->cart[k] = open_p(f, bc[k], params(false));
	for (int k = 2; k >= 0; k--)
		VERIFY(f->cart[k], &e[k]);
	for (int k = 0; k < 3; k++)
		close_slot(f, k);
}

/*
 * A follower reads beside the writer (as vtld reads a cartridge the migrator
 * is staging back): it sees what was appended only after a refresh, across
 * segment files, through a clean close and a reopening that appends again.
 */
static void test_follow(void **state)
{
	struct fx *f = *state;
	fx_pool(f);
	struct vtl_cart *w = fx_cart(f, "FOL001L8", true);
	struct vtl_cart_params fp = params(false);
	fp.follow = true;
	f->cart[1] = open_p(f, "FOL001L8", fp); /* no lock: the writer holds it */
	struct vtl_cart *r = f->cart[1];
	uint64_t eod = 99;
	EXPECT_RC(vtl_cart_refresh(r, &eod), 0);
	assert_int_equal(eod, 0);
	RD_EOD(r, 0);
	/* Blocks of 20 KiB: 3 per 64 KiB segment, so 10 blocks cross 3 segment boundaries. */
	for (unsigned i = 0; i < 5; i++)
		WR(w, i, 20000, i & 1);
	WFM(w, 1);
	RD_EOD(r, 0); /* not refreshed yet */
	EXPECT_RC(vtl_cart_refresh(r, &eod), 0);
	assert_int_equal(eod, 6);
	for (unsigned i = 0; i < 5; i++)
		RD_DATA(r, i, i, 20000, i & 1);
	RD_FM(r, 5);
	RD_EOD(r, 6);
	for (unsigned i = 6; i < 12; i++)
		WR(w, i, 20000, false);
	EXPECT_RC(vtl_cart_refresh(r, &eod), 0);
	assert_int_equal(eod, 12);
	for (unsigned i = 6; i < 12; i++)
		RD_DATA(r, i, i, 20000, false);
	/* A clean close seals the last segment; a reopening unseals it to append. */
	close_slot(f, 0);
	EXPECT_RC(vtl_cart_refresh(r, &eod), 0);
	assert_int_equal(eod, 12);
	w = f->cart[0] = open_p(f, "FOL001L8", params(false));
	EXPECT_RC(vtl_cart_space_eod(w), 0);
	WR(w, 12, 100, false);
	WR(w, 13, 100, false);
	EXPECT_RC(vtl_cart_refresh(r, &eod), 0);
	assert_int_equal(eod, 14);
	RD_DATA(r, 12, 12, 100, false);
	RD_DATA(r, 13, 13, 100, false);
	/* Everything again from BOT, through the index the follower built. */
	EXPECT_RC(vtl_cart_locate(r, 3), 0);
	RD_DATA(r, 3, 3, 20000, true);
	EXPECT_RC(vtl_cart_rewind(r), 0);
	RD_DATA(r, 0, 0, 20000, false);
	/* Only a follower refreshes; a follower never writes. */
	EXPECT_RC(vtl_cart_refresh(w, NULL), VTL_E_INVAL);
	EXPECT_RC(wr_(r, 1, 10, false), VTL_E_READONLY);
}

struct slow_writer {
	struct vtl_cart *c;
	unsigned blocks;
	atomic_bool done;
	int rc;
};

static void *slow_write(void *arg)
{
	struct slow_writer *w = arg;
	uint8_t *b = malloc(20000); /* plain malloc: the test's allocator is not for other threads */
	if (!b) {
		w->rc = VTL_E_NOMEM;
		atomic_store(&w->done, true);
		return NULL;
	}
	for (unsigned i = 0; i < w->blocks && !w->rc; i++) {
		gen_data(b, 20000, i, false);
		w->rc = vtl_cart_write_block(w->c, b, 20000);
		if (i % 7 == 6)
			w->rc = w->rc ? w->rc : vtl_cart_write_filemarks(w->c, 1);
		usleep(1000);
	}
	free(b);
	atomic_store(&w->done, true);
	return NULL;
}

static int slow_more(void *arg)
{
	struct slow_writer *w = arg;
	if (atomic_load(&w->done))
		return 0;
	usleep(200);
	return 1;
}

/* Reads, SPACE and EOD wait for a writer that is still appending, and stop only once it has finished. */
static void test_follow_waits(void **state)
{
	struct fx *f = *state;
	fx_pool(f);
	f->cart[0] = fx_cart(f, "FOL002L8", true);
	struct slow_writer w = {.c = f->cart[0], .blocks = 40};
	atomic_init(&w.done, false);
	struct vtl_cart_params fp = params(false);
	fp.follow = true;
	fp.more = slow_more;
	fp.more_arg = &w;
	f->cart[1] = open_p(f, "FOL002L8", fp);
	struct vtl_cart *r = f->cart[1];
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, slow_write, &w), 0);
	/* Blocks 0..6, a filemark, 7..13, a filemark ...: read file 0, skip file 1, read the rest. */
	uint64_t obj = 0;
	for (unsigned i = 0; i < 7; i++, obj++)
		RD_DATA(r, obj, i, 20000, false);
	RD_FM(r, obj++);
	struct vtl_space_result sr;
	EXPECT_RC(vtl_cart_space_filemarks(r, 1, &sr), 0);
	assert_int_equal(sr.stop, VTL_SPACE_DONE);
	obj += 8;
	for (unsigned i = 14; i < 40; i++, obj++) {
		RD_DATA(r, obj, i, 20000, false);
		if (i % 7 == 6)
			RD_FM(r, ++obj);
	}
	RD_EOD(r, obj); /* only once the writer is done */
	assert_true(atomic_load(&w.done));
	pthread_join(t, NULL);
	assert_int_equal(w.rc, 0);
	EXPECT_RC(vtl_cart_space_eod(r), 0);
	struct vtl_position p;
	vtl_cart_position(r, &p);
	assert_int_equal(p.object, obj);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_strerror),
		cmocka_unit_test_setup_teardown(test_create_exists_delete, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_delete_open_busy, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_blank_cartridge, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_write_read_basic, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_short_buffer_read, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_block_size_limits, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_filemarks_and_file_numbers, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_locate, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_space_blocks, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_space_filemarks, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_overwrite_truncates, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_overwrite_sealed_segment_reopen, fx_setup,
						fx_teardown),
		cmocka_unit_test_setup_teardown(test_erase, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_stored_bytes, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_capacity_ew_eom, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_set_capacity, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_capacity_compression_fits_more, fx_setup,
						fx_teardown),
		cmocka_unit_test_setup_teardown(test_worm, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_readonly, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_follow, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_follow_waits, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_busy_same_process, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_busy_other_process, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_reopen_preserves_everything, fx_setup,
						fx_teardown),
		cmocka_unit_test_setup_teardown(test_sync_then_reopen, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_compression_stored_sizes, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_compression_pieces, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_compression_mixed_reopen, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_readahead_sequential, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_readahead_invalidated, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_readahead_loans, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_readahead_cold, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_write_direct, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_stats, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_adaptive_compression_reads_back, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_multiple_carts_interleaved, fx_setup,
						fx_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
