/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests of the disk pool: opening (and refusing bad configurations),
 * barcode rules, placement of segments over the members, space accounting
 * and a pool that runs full.
 *
 * Every test works in its own temporary directory (mkdtemp under $TMPDIR or
 * /tmp), removed by the teardown even when the test fails.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "backend/cartridge.h"
#include "backend/pool.h"
#include "common/grow.h"
#include "common/vtl_error.h"
#include "tests/unit/testlib.h"

/* ---------------------------------------------------------------- helpers */

static int fx_setup(void **state)
{
	return fx_setup_dirs(state, "vtl-pool", TL_MAXM);
}

static void fx_config(struct fx *f, unsigned n, uint64_t segsize, uint64_t quota)
{
	fx_pool_config(f, n, segsize);
	f->cfg.member_quota = quota;
}

static void fx_pool_open(struct fx *f, unsigned n, uint64_t segsize, uint64_t quota)
{
	fx_config(f, n, segsize, quota);
	tl_pool_open(&f->cfg, &f->pool);
	assert_non_null(f->pool);
}

static void fx_pool_reopen(struct fx *f)
{
	char err[256] = "";
	vtl_pool_close(f->pool);
	f->pool = NULL;
	int rc = vtl_pool_open(&f->cfg, &f->pool, err, sizeof(err));
	if (rc != 0)
		fail_msg("vtl_pool_open (again): %d (%s): %s", rc, es(rc), err);
}

static struct vtl_cart *open_cart(struct fx *f, const char *bc, const struct vtl_cart_params *p)
{
	return tl_cart_open(f->pool, bc, p);
}

static void close_cart(struct fx *f, int slot)
{
	tl_cart_close(&f->cart[slot]);
}

static void read_expect_block(struct vtl_cart *c, uint64_t obj, uint64_t key, size_t len)
{
	uint8_t *want = talloc(len), *got = talloc(len + 16);
	assert_non_null(want);
	assert_non_null(got);
	gen_data(want, len, key, false);
	struct vtl_read_result r;
	memset(&r, 0, sizeof(r));
	int rc = vtl_cart_read(c, got, len + 16, &r);
	if (rc != 0)
		fail_msg("read of object %" PRIu64 ": %d (%s)", obj, rc, es(rc));
	assert_int_equal(r.type, VTL_OBJ_DATA);
	assert_int_equal(r.object, obj);
	assert_int_equal(r.length, len);
	assert_int_equal(r.copied, len);
	if (memcmp(want, got, len) != 0)
		fail_msg("object %" PRIu64 ": data differs", obj);
	tfree(want);
	tfree(got);
}

static void read_expect_eod(struct vtl_cart *c, uint64_t eod)
{
	uint8_t b[16];
	struct vtl_read_result r;
	memset(&r, 0, sizeof(r));
	EXPECT_RC(vtl_cart_read(c, b, sizeof(b), &r), 0);
	assert_int_equal(r.type, VTL_OBJ_EOD);
	assert_int_equal(r.object, eod);
	assert_int_equal(r.copied, 0);
}

static uint64_t sum_used(struct fx *f)
{
	uint64_t s = 0;
	for (unsigned i = 0; i < vtl_pool_members(f->pool); i++) {
		struct vtl_member_space ms;
		EXPECT_RC(vtl_pool_member_space(f->pool, i, &ms), 0);
		s += ms.used_bytes;
	}
	return s;
}

/* Writes n blocks of len bytes, block i with key base+i; every write must return 0. */
static void write_blocks(struct vtl_cart *c, unsigned n, size_t len, uint64_t base)
{
	uint8_t *buf = talloc(len);
	assert_non_null(buf);
	for (unsigned i = 0; i < n; i++) {
		gen_data(buf, len, base + i, false);
		int rc = vtl_cart_write_block(c, buf, len);
		if (rc != 0)
			fail_msg("write of block %u: %d (%s)", i, rc, es(rc));
	}
	tfree(buf);
}

/* ------------------------------------------------------------------ tests */

static void test_pool_open_ok(void **state)
{
	struct fx *f = *state;
	fx_pool_open(f, 3, VTL_SEGMENT_SIZE_MIN, 0);
	assert_int_equal(vtl_pool_members(f->pool), 3);
	for (unsigned i = 0; i < 3; i++) {
		struct vtl_member_space ms;
		memset(&ms, 0, sizeof(ms));
		EXPECT_RC(vtl_pool_member_space(f->pool, i, &ms), 0);
		assert_non_null(ms.path);
		assert_true(ms.free_bytes > 0);
	}
	struct vtl_member_space ms;
	assert_true(vtl_pool_member_space(f->pool, 3, &ms) < 0);

	/* Defaults (segment size 0 = default) and a single member work too. */
	vtl_pool_close(f->pool);
	f->pool = NULL;
	fx_pool_open(f, 1, 0, 0);
	assert_int_equal(vtl_pool_members(f->pool), 1);
}

static void expect_open_fails(struct fx *f, const char *what)
{
	char err[256];
	memset(err, 0, sizeof(err));
	struct vtl_pool *p = NULL;
	int rc = vtl_pool_open(&f->cfg, &p, err, sizeof(err));
	if (rc >= 0) {
		if (rc == 0 && p)
			vtl_pool_close(p);
		fail_msg("vtl_pool_open with %s returned %d, expected an error", what, rc);
	}
	if (err[0] == '\0')
		fail_msg("vtl_pool_open with %s failed (%d) but left no message", what, rc);
	print_message("  %s -> %d (%s): %s\n", what, rc, es(rc), err);
}

static void test_pool_open_missing_member(void **state)
{
	struct fx *f = *state;
	fx_config(f, 3, VTL_SEGMENT_SIZE_MIN, 0);
	char missing[PATH_MAX];
	snprintf(missing, sizeof(missing), "%s/does-not-exist", f->dir);
	f->cfg.members[1] = missing;
	expect_open_fails(f, "a missing member directory");
	/* Nothing was created in its place. */
	struct stat st;
	assert_int_equal(stat(missing, &st), -1);
}

static void test_pool_open_member_is_file(void **state)
{
	struct fx *f = *state;
	fx_config(f, 2, VTL_SEGMENT_SIZE_MIN, 0);
	char file[PATH_MAX];
	snprintf(file, sizeof(file), "%s/plain-file", f->dir);
	int fd = open(file, O_CREAT | O_WRONLY, 0644);
	assert_true(fd >= 0);
	close(fd);
	f->cfg.members[1] = file;
	expect_open_fails(f, "a member that is a regular file");
}

static void test_pool_open_bad_config(void **state)
{
	struct fx *f = *state;

	fx_config(f, 0, VTL_SEGMENT_SIZE_MIN, 0);
	expect_open_fails(f, "no members");

	fx_config(f, 2, VTL_SEGMENT_SIZE_MIN, 0);
	f->cfg.n_members = VTL_POOL_MAX_MEMBERS + 1;
	expect_open_fails(f, "more than VTL_POOL_MAX_MEMBERS members");

	fx_config(f, 2, VTL_SEGMENT_SIZE_MIN, 0);
	f->cfg.members[1] = NULL;
	expect_open_fails(f, "a NULL member path");

	fx_config(f, 2, VTL_SEGMENT_SIZE_MIN - 1, 0);
	expect_open_fails(f, "segment_size below VTL_SEGMENT_SIZE_MIN");

	fx_config(f, 2, VTL_SEGMENT_SIZE_MAX + 1, 0);
	expect_open_fails(f, "segment_size above VTL_SEGMENT_SIZE_MAX");
}

static const char *const bad_barcodes[] = {
	"",
	"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456", /* 33 */
	"AB/CD",
	"/ABC",
	"ABC/",
	"AB CD",
	" ABC",
	"ABC\x01",
	"AB\tCD",
	"ABC\x7f",
	"AB\xc3\xa9",
	".",
	"..",
	"../ABC",
	".A",
	"...",
	".ABC123",
	"AB\\CD",
	"\\",
};

static const char *const good_barcodes[] = {
	"ABC123L8",
	"A",
	"ABCDEFGHIJKLMNOPQRSTUVWXYZ012345", /* 32 */
	"A.B",
	"A..",
	"abc-123_L8",
	"!ABC~", /* 0x21 and 0x7E, the ends of the range */
};

static void test_barcode_check(void **state)
{
	(void)state;
	for (size_t i = 0; i < VTL_ARRAY_SIZE(bad_barcodes); i++)
		if (vtl_barcode_check(bad_barcodes[i]) >= 0)
			fail_msg("vtl_barcode_check accepted bad barcode #%zu \"%s\"", i,
				 bad_barcodes[i]);
	for (size_t i = 0; i < VTL_ARRAY_SIZE(good_barcodes); i++)
		if (vtl_barcode_check(good_barcodes[i]) != 0)
			fail_msg("vtl_barcode_check rejected good barcode \"%s\"", good_barcodes[i]);
	/* Exactly at the limit and one past it. */
	char b[VTL_BARCODE_MAX + 2];
	memset(b, 'Z', sizeof(b));
	b[VTL_BARCODE_MAX] = '\0';
	assert_int_equal(vtl_barcode_check(b), 0);
	b[VTL_BARCODE_MAX] = 'Z';
	b[VTL_BARCODE_MAX + 1] = '\0';
	assert_true(vtl_barcode_check(b) < 0);
}

static unsigned count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	assert_non_null(d);
	unsigned n = 0;
	struct dirent *e;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

static void test_cart_create_rejects_bad_barcodes(void **state)
{
	struct fx *f = *state;
	fx_pool_open(f, 2, VTL_SEGMENT_SIZE_MIN, 0);
	unsigned before[2] = { count_entries(f->mpath[0]), count_entries(f->mpath[1]) };
	unsigned top_before = count_entries(f->dir);
	for (size_t i = 0; i < VTL_ARRAY_SIZE(bad_barcodes); i++) {
		const char *bc = bad_barcodes[i];
		int rc = vtl_cart_create(f->pool, bc);
		if (rc != VTL_E_INVAL)
			fail_msg("vtl_cart_create(bad #%zu \"%s\") = %d (%s), expected VTL_E_INVAL",
				 i, bc, rc, es(rc));
		rc = vtl_cart_exists(f->pool, bc);
		if (rc >= 0)
			fail_msg("vtl_cart_exists(bad \"%s\") = %d, expected an error", bc, rc);
		struct vtl_cart_params p;
		memset(&p, 0, sizeof(p));
		struct vtl_cart *c = NULL;
		rc = vtl_cart_open(f->pool, bc, &p, &c);
		if (rc >= 0) {
			if (c)
				vtl_ignore(vtl_cart_close(c)); /* the test fails on the open already */
			fail_msg("vtl_cart_open(bad \"%s\") = %d, expected an error", bc, rc);
		}
		rc = vtl_cart_delete(f->pool, bc);
		if (rc >= 0)
			fail_msg("vtl_cart_delete(bad \"%s\") = %d, expected an error", bc, rc);
	}
	/* Nothing appeared anywhere (in particular nothing outside the members via ".."). */
	assert_int_equal(count_entries(f->mpath[0]), before[0]);
	assert_int_equal(count_entries(f->mpath[1]), before[1]);
	assert_int_equal(count_entries(f->dir), top_before);

	for (size_t i = 0; i < VTL_ARRAY_SIZE(good_barcodes); i++) {
		const char *bc = good_barcodes[i];
		assert_int_equal(vtl_cart_exists(f->pool, bc), 0);
		int rc = vtl_cart_create(f->pool, bc);
		if (rc != 0)
			fail_msg("vtl_cart_create(good \"%s\") = %d (%s)", bc, rc, es(rc));
		assert_int_equal(vtl_cart_exists(f->pool, bc), 1);
		f->cart[0] = open_cart(f, bc, NULL);
		write_blocks(f->cart[0], 2, 100, i * 10);
		close_cart(f, 0);
	}
	/* Each is its own cartridge. */
	for (size_t i = 0; i < VTL_ARRAY_SIZE(good_barcodes); i++) {
		f->cart[0] = open_cart(f, good_barcodes[i], NULL);
		struct vtl_position pos;
		get_pos(f->cart[0], &pos);
		assert_int_equal(pos.eod, 2);
		read_expect_block(f->cart[0], 0, i * 10, 100);
		read_expect_block(f->cart[0], 1, i * 10 + 1, 100);
		close_cart(f, 0);
	}
}

static void test_member_for_spreading(void **state)
{
	struct fx *f = *state;
	fx_pool_open(f, 3, VTL_SEGMENT_SIZE_MIN, 0);
	unsigned hits[3] = { 0, 0, 0 };
	char bc[16];
	for (unsigned i = 0; i < 96; i++) {
		snprintf(bc, sizeof(bc), "VOL%03uL8", i);
		unsigned m = vtl_pool_member_for(f->pool, bc, 0);
		assert_true(m < 3);
		hits[m]++;
	}
	print_message("  first members of 96 barcodes: %u %u %u\n", hits[0], hits[1], hits[2]);
	for (unsigned m = 0; m < 3; m++)
		if (hits[m] < 96 / 3 / 4)
			fail_msg("member %u starts only %u of 96 cartridges: barcodes do not spread", m,
				 hits[m]);
	/* Two neighbouring barcodes should not systematically collide. */
	unsigned same = 0;
	for (unsigned i = 0; i + 1 < 96; i++) {
		char b2[16];
		snprintf(bc, sizeof(bc), "VOL%03uL8", i);
		snprintf(b2, sizeof(b2), "VOL%03uL8", i + 1);
		same += vtl_pool_member_for(f->pool, bc, 0) == vtl_pool_member_for(f->pool, b2, 0);
	}
	assert_true(same < 95);
}

static void test_member_for_round_robin(void **state)
{
	struct fx *f = *state;
	static const unsigned ns[] = { 1, 2, 3, 4 };
	static const char *const bcs[] = { "ABC123L8", "VOL000L8", "X", "ZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZ" };
	for (size_t k = 0; k < VTL_ARRAY_SIZE(ns); k++) {
		unsigned n = ns[k];
		fx_pool_open(f, n, VTL_SEGMENT_SIZE_MIN, 0);
		for (size_t b = 0; b < VTL_ARRAY_SIZE(bcs); b++) {
			unsigned start = vtl_pool_member_for(f->pool, bcs[b], 0);
			assert_true(start < n);
			for (uint32_t seq = 0; seq < 50; seq++) {
				unsigned m = vtl_pool_member_for(f->pool, bcs[b], seq);
				if (m != (start + seq) % n)
					fail_msg("%u members, %s seq %u: member %u, expected %u", n,
						 bcs[b], seq, m, (start + seq) % n);
			}
			unsigned big = vtl_pool_member_for(f->pool, bcs[b], 4000000000u);
			assert_true(big < n);
		}
		/* Stable across a reopen of the same configuration. */
		unsigned a = vtl_pool_member_for(f->pool, "ABC123L8", 7);
		fx_pool_reopen(f);
		assert_int_equal(vtl_pool_member_for(f->pool, "ABC123L8", 7), a);
		vtl_pool_close(f->pool);
		f->pool = NULL;
	}
}

/* The segments of a written cartridge lie where vtl_pool_member_for says. */
static void test_segments_on_member_for(void **state)
{
	struct fx *f = *state;
	const char *bc = "PLACE1L8";
	fx_pool_open(f, 3, VTL_SEGMENT_SIZE_MIN, 0);
	EXPECT_RC(vtl_cart_create(f->pool, bc), 0);
	f->cart[0] = open_cart(f, bc, NULL);
	write_blocks(f->cart[0], 150, 4096, 1000); /* ~600 KiB: about 10 segments */
	close_cart(f, 0);

	bool seen[4096];
	memset(seen, 0, sizeof(seen));
	unsigned maxseq = 0, nseg = 0;
	for (unsigned m = 0; m < 3; m++) {
		char d[1024];
		snprintf(d, sizeof(d), "%s/%s", f->mpath[m], bc);
		DIR *dir = opendir(d);
		if (!dir)
			continue;
		struct dirent *e;
		while ((e = readdir(dir))) {
			unsigned seq;
			char tail[8];
			size_t l = strlen(e->d_name);
			if (l != 12 || sscanf(e->d_name, "%8u.%3s", &seq, tail) != 2 ||
			    strcmp(tail, "seg") != 0)
				continue;
			assert_true(seq < 4096);
			if (seen[seq])
				fail_msg("segment %u exists on two members", seq);
			seen[seq] = true;
			nseg++;
			if (seq > maxseq)
				maxseq = seq;
			unsigned want = vtl_pool_member_for(f->pool, bc, seq);
			if (want != m)
				fail_msg("segment %u is on member %u, vtl_pool_member_for says %u", seq,
					 m, want);
		}
		closedir(dir);
	}
	print_message("  %u segment files, highest seq %u\n", nseg, maxseq);
	assert_true(nseg >= 5);
	for (unsigned s = 0; s <= maxseq; s++)
		if (!seen[s])
			fail_msg("segment %u missing (highest is %u)", s, maxseq);
}

static void test_member_space_accounting(void **state)
{
	struct fx *f = *state;
	const uint64_t quota = 64ull << 20;
	fx_pool_open(f, 3, VTL_SEGMENT_SIZE_MIN, quota);
	struct vtl_member_space before[3], after[3];
	for (unsigned i = 0; i < 3; i++)
		EXPECT_RC(vtl_pool_member_space(f->pool, i, &before[i]), 0);
	uint64_t used0 = sum_used(f);

	EXPECT_RC(vtl_cart_create(f->pool, "SPACE1L8"), 0);
	f->cart[0] = open_cart(f, "SPACE1L8", NULL);
	const unsigned n = 256;
	write_blocks(f->cart[0], n, 4096, 7); /* 1 MiB over 16+ segments */
	EXPECT_RC(vtl_cart_sync(f->cart[0]), 0);
	uint64_t total = 0;
	for (unsigned i = 0; i < 3; i++) {
		EXPECT_RC(vtl_pool_member_space(f->pool, i, &after[i]), 0);
		print_message("  member %u: used %" PRIu64 " -> %" PRIu64 ", free %" PRIu64
			      " -> %" PRIu64 "\n",
			      i, before[i].used_bytes, after[i].used_bytes, before[i].free_bytes,
			      after[i].free_bytes);
		if (after[i].used_bytes <= before[i].used_bytes)
			fail_msg("member %u: used did not grow", i);
		if (after[i].free_bytes >= before[i].free_bytes)
			fail_msg("member %u: free did not shrink", i);
		assert_true(after[i].used_bytes <= quota);
		assert_true(after[i].free_bytes + after[i].used_bytes <= quota);
		total += after[i].used_bytes - before[i].used_bytes;
	}
	if (total < (uint64_t)n * 4096)
		fail_msg("used grew by %" PRIu64 " for %u bytes written", total, n * 4096);
	close_cart(f, 0);

	/* A new pool instance counts what is already on disk. */
	uint64_t used1 = sum_used(f);
	fx_pool_reopen(f);
	uint64_t used2 = sum_used(f);
	print_message("  used: fresh %" PRIu64 ", after writing %" PRIu64 ", after reopen %" PRIu64
		      "\n",
		      used0, used1, used2);
	assert_true(used2 >= (uint64_t)n * 4096);

	/* Deleting gives it back. */
	EXPECT_RC(vtl_cart_delete(f->pool, "SPACE1L8"), 0);
	assert_int_equal(sum_used(f), used0);
}

/* A tape rewritten from BOT no longer counts the space of what it discarded. */
static void test_space_reclaimed_after_rewrite(void **state)
{
	struct fx *f = *state;
	fx_pool_open(f, 2, VTL_SEGMENT_SIZE_MIN, 64ull << 20);
	uint64_t used0 = sum_used(f);
	EXPECT_RC(vtl_cart_create(f->pool, "RECLM1L8"), 0);
	f->cart[0] = open_cart(f, "RECLM1L8", NULL);
	write_blocks(f->cart[0], 256, 4096, 3);
	close_cart(f, 0);
	uint64_t used1 = sum_used(f);
	f->cart[0] = open_cart(f, "RECLM1L8", NULL);
	write_blocks(f->cart[0], 1, 4096, 99); /* at BOT: discards the 1 MiB */
	close_cart(f, 0);
	uint64_t used2 = sum_used(f);
	print_message("  used: %" PRIu64 " fresh, %" PRIu64 " with 1 MiB, %" PRIu64
		      " after rewrite from BOT\n",
		      used0, used1, used2);
	assert_true(used1 - used0 >= (1u << 20));
	if (used2 - used0 > (used1 - used0) / 4)
		fail_msg("rewriting from BOT left %" PRIu64 " bytes counted", used2 - used0);
	f->cart[0] = open_cart(f, "RECLM1L8", NULL);
	read_expect_block(f->cart[0], 0, 99, 4096);
	read_expect_eod(f->cart[0], 1);
	close_cart(f, 0);
}

static void test_pool_full(void **state)
{
	struct fx *f = *state;
	const uint64_t quota = 256u << 10;
	const size_t bl = 4096;
	fx_pool_open(f, 2, VTL_SEGMENT_SIZE_MIN, quota);

	/* Something to delete later. */
	EXPECT_RC(vtl_cart_create(f->pool, "FILLER"), 0);
	f->cart[1] = open_cart(f, "FILLER", NULL);
	write_blocks(f->cart[1], 40, bl, 5000);
	close_cart(f, 1);

	EXPECT_RC(vtl_cart_create(f->pool, "FULL01L8"), 0);
	f->cart[0] = open_cart(f, "FULL01L8", NULL);
	uint8_t *buf = talloc(bl);
	assert_non_null(buf);
	unsigned n = 0;
	int rc = 0;
	for (; n < 1000; n++) {
		gen_data(buf, bl, n, false);
		rc = vtl_cart_write_block(f->cart[0], buf, bl);
		if (rc != 0)
			break;
	}
	print_message("  %u blocks of %zu bytes written before %d (%s)\n", n, bl, rc, es(rc));
	if (rc != VTL_E_POOL_FULL)
		fail_msg("write %u returned %d (%s), expected VTL_E_POOL_FULL", n, rc, es(rc));
	/* The 40-block filler took 160 KiB of the 512 KiB: at least half the rest was usable. */
	assert_true((uint64_t)n * bl >= (2 * quota - 40 * bl) / 2);

	struct vtl_position pos;
	get_pos(f->cart[0], &pos);
	assert_int_equal(pos.object, n);
	assert_int_equal(pos.eod, n);
	assert_true(pos.at_eod);
	/* Still full, still clean. */
	gen_data(buf, bl, n, false);
	EXPECT_RC(vtl_cart_write_block(f->cart[0], buf, bl), VTL_E_POOL_FULL);
	get_pos(f->cart[0], &pos);
	assert_int_equal(pos.eod, n);
	for (unsigned i = 0; i < 2; i++) {
		struct vtl_member_space ms;
		EXPECT_RC(vtl_pool_member_space(f->pool, i, &ms), 0);
		assert_true(ms.used_bytes <= quota);
	}

	EXPECT_RC(vtl_cart_rewind(f->cart[0]), 0);
	for (unsigned i = 0; i < n; i++)
		read_expect_block(f->cart[0], i, i, bl);
	read_expect_eod(f->cart[0], n);
	close_cart(f, 0);

	f->cart[0] = open_cart(f, "FULL01L8", NULL);
	get_pos(f->cart[0], &pos);
	assert_int_equal(pos.object, 0);
	assert_int_equal(pos.eod, n);
	for (unsigned i = 0; i < n; i++)
		read_expect_block(f->cart[0], i, i, bl);
	read_expect_eod(f->cart[0], n);
	close_cart(f, 0);

	/* Freeing space lets the same cartridge go on. */
	EXPECT_RC(vtl_cart_delete(f->pool, "FILLER"), 0);
	f->cart[0] = open_cart(f, "FULL01L8", NULL);
	EXPECT_RC(vtl_cart_space_eod(f->cart[0]), 0);
	for (unsigned i = n; i < n + 10; i++) {
		gen_data(buf, bl, i, false);
		rc = vtl_cart_write_block(f->cart[0], buf, bl);
		if (rc != 0)
			fail_msg("write %u after freeing space: %d (%s)", i, rc, es(rc));
	}
	close_cart(f, 0);
	f->cart[0] = open_cart(f, "FULL01L8", NULL);
	for (unsigned i = 0; i < n + 10; i++)
		read_expect_block(f->cart[0], i, i, bl);
	read_expect_eod(f->cart[0], n + 10);
	close_cart(f, 0);
	tfree(buf);
}

struct names {
	char v[8][VTL_BARCODE_MAX + 1];
	int n;
};

static int collect_name(const char *barcode, void *arg)
{
	struct names *ns = arg;
	if (ns->n >= 8)
		return 99;
	snprintf(ns->v[ns->n++], sizeof ns->v[0], "%s", barcode);
	return 0;
}

/* The inventory names each cartridge once, sorted, whatever member it starts on; info matches the tape. */
static void test_pool_inventory(void **state)
{
	struct fx *f = *state;
	fx_pool_open(f, 3, VTL_SEGMENT_SIZE_MIN, 0);
	static const char *const bcs[] = {"ZZ0001L8", "AA0001L8", "MM0001L8", "AA0002L8"};
	for (int i = 0; i < 4; i++)
		EXPECT_RC(vtl_cart_create(f->pool, bcs[i]), 0);
	struct vtl_cart_params p = {0};
	struct vtl_cart *c = NULL;
	EXPECT_RC(vtl_cart_open(f->pool, "MM0001L8", &p, &c), 0);
	static uint8_t b[40000];
	for (int i = 0; i < 5; i++) {
		gen_data(b, sizeof b, 70 + i, false);
		EXPECT_RC(vtl_cart_write_block(c, b, sizeof b), 0);
		EXPECT_RC(vtl_cart_write_filemarks(c, 1), 0);
	}
	struct vtl_position pos;
	vtl_cart_position(c, &pos);
	/* A writer holds it: info must not read under it. */
	struct vtl_cart_info info;
	EXPECT_RC(vtl_cart_info(f->pool, "MM0001L8", &info), VTL_E_BUSY);
	EXPECT_RC(vtl_cart_close(c), 0);
	struct names ns = {.n = 0};
	EXPECT_RC(vtl_pool_list_cartridges(f->pool, collect_name, &ns), 0);
	assert_int_equal(ns.n, 4);
	assert_string_equal(ns.v[0], "AA0001L8");
	assert_string_equal(ns.v[1], "AA0002L8");
	assert_string_equal(ns.v[2], "MM0001L8");
	assert_string_equal(ns.v[3], "ZZ0001L8");
	EXPECT_RC(vtl_cart_info(f->pool, "MM0001L8", &info), 0);
	assert_int_equal(info.eod, 10);
	assert_int_equal(info.filemarks, 5);
	assert_int_equal(info.stored_bytes, pos.stored_bytes);
	assert_true(info.segments >= 3); /* 200 KB over 64 KiB segments */
	EXPECT_RC(vtl_cart_info(f->pool, "AA0001L8", &info), 0);
	assert_int_equal(info.eod, 0);
	assert_int_equal(info.segments, 1);
	EXPECT_RC(vtl_cart_info(f->pool, "NOPE01L8", &info), VTL_E_NOTFOUND);
	/* A callback's non-zero answer stops the walk and comes back. */
	struct names few = {.n = 6};
	EXPECT_RC(vtl_pool_list_cartridges(f->pool, collect_name, &few), 99);
	EXPECT_RC(vtl_cart_delete(f->pool, "AA0002L8"), 0);
	ns.n = 0;
	EXPECT_RC(vtl_pool_list_cartridges(f->pool, collect_name, &ns), 0);
	assert_int_equal(ns.n, 3);
}

/*
 * The file system itself refuses a write (here EFBIG from RLIMIT_FSIZE, as
 * ENOSPC would): the write reports a full pool, the partial record is cut off,
 * and everything before it stays readable, in the same session and after a
 * reopen. Runs in a child so that the limit does not touch the test runner.
 */
static void test_filesystem_refuses_write(void **state)
{
	struct fx *f = *state;
	fx_pool_open(f, 2, 0, 0);
	EXPECT_RC(vtl_cart_create(f->pool, "EFBIG1"), 0);
	enum { BL = 65536, LIMIT = 600000 };
	int fds[2];
	assert_int_equal(pipe(fds), 0);
	fflush(NULL);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(fds[0]);
		static uint8_t b[BL];
		/* The parent's worker threads did not come through fork: a pool of its own. */
		struct vtl_pool *pool = NULL;
		char err[256];
		struct vtl_cart_params p = {0};
		struct vtl_cart *c = NULL;
		if (vtl_pool_open(&f->cfg, &pool, err, sizeof err) || vtl_cart_open(pool, "EFBIG1", &p, &c))
			_exit(10);
		signal(SIGXFSZ, SIG_IGN);
		/* Only the soft limit: raising it back needs no privilege. */
		struct rlimit rl;
		if (getrlimit(RLIMIT_FSIZE, &rl))
			_exit(11);
		rlim_t hard = rl.rlim_max;
		rl.rlim_cur = LIMIT;
		if (setrlimit(RLIMIT_FSIZE, &rl))
			_exit(11);
		uint32_t n = 0;
		int rc;
		for (;;) {
			gen_data(b, BL, 500 + n, false);
			if ((rc = vtl_cart_write_block(c, b, BL)) != 0)
				break;
			n++;
		}
		if (rc != VTL_E_POOL_FULL)
			_exit(12);
		/* Same session: everything before reads back, EOD did not move. */
		struct vtl_position pos;
		vtl_cart_position(c, &pos);
		if (pos.eod != n || vtl_cart_rewind(c))
			_exit(13);
		for (uint32_t i = 0; i < n; i++) {
			static uint8_t got[BL], want[BL];
			struct vtl_read_result r;
			gen_data(want, BL, 500 + i, false);
			if (vtl_cart_read(c, got, BL, &r) || r.length != BL || memcmp(got, want, BL))
				_exit(14);
		}
		rl.rlim_cur = hard;
		if (setrlimit(RLIMIT_FSIZE, &rl))
			_exit(15);
		if (vtl_cart_close(c))
			_exit(17);
		vtl_pool_close(pool);
		if (write(fds[1], &n, sizeof n) != (ssize_t)sizeof n)
			_exit(16);
		_exit(0);
	}
	close(fds[1]);
	uint32_t n = 0;
	ssize_t got = read(fds[0], &n, sizeof n);
	close(fds[0]);
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		fail_msg("child failed at step %d", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	assert_int_equal(got, sizeof n);
	assert_true(n >= 1 && n <= LIMIT / BL);
	print_message("  %u blocks of %u bytes written before the file system refused one\n", n, BL);
	struct vtl_cart_params p = {0};
	struct vtl_cart *c = NULL;
	EXPECT_RC(vtl_cart_open(f->pool, "EFBIG1", &p, &c), 0);
	struct vtl_position pos;
	vtl_cart_position(c, &pos);
	assert_int_equal(pos.eod, n);
	static uint8_t gotb[BL], want[BL];
	for (uint32_t i = 0; i < n; i++) {
		struct vtl_read_result r;
		gen_data(want, BL, 500 + i, false);
		EXPECT_RC(vtl_cart_read(c, gotb, BL, &r), 0);
		assert_int_equal(r.length, BL);
		assert_memory_equal(gotb, want, BL);
	}
	EXPECT_RC(vtl_cart_write_block(c, want, 100), 0);
	EXPECT_RC(vtl_cart_close(c), 0);
}

/* A full pool refuses a large block and a filemark run cleanly too, and other cartridges. */
static void test_pool_full_other_writes(void **state)
{
	struct fx *f = *state;
	const uint64_t quota = 192u << 10;
	fx_pool_open(f, 2, VTL_SEGMENT_SIZE_MIN, quota);
	EXPECT_RC(vtl_cart_create(f->pool, "BIG001"), 0);
	f->cart[0] = open_cart(f, "BIG001", NULL);
	/* One block larger than the whole pool. */
	size_t big = 1u << 20;
	uint8_t *buf = talloc(big);
	assert_non_null(buf);
	gen_data(buf, big, 1, false);
	EXPECT_RC(vtl_cart_write_block(f->cart[0], buf, big), VTL_E_POOL_FULL);
	struct vtl_position pos;
	get_pos(f->cart[0], &pos);
	assert_int_equal(pos.eod, 0);
	assert_int_equal(pos.stored_bytes, 0);
	/* Small ones still fit afterwards. */
	write_blocks(f->cart[0], 10, 1000, 50);
	EXPECT_RC(vtl_cart_write_filemarks(f->cart[0], 1), 0);
	unsigned n = 10;
	int rc;
	for (;; n++) {
		assert_true(n < 2000);
		gen_data(buf, 1000, 50 + n, false);
		rc = vtl_cart_write_block(f->cart[0], buf, 1000);
		if (rc != 0)
			break;
	}
	EXPECT_RC(rc, VTL_E_POOL_FULL);
	/* A second cartridge in the same pool gets the same answer and loses nothing either. */
	EXPECT_RC(vtl_cart_create(f->pool, "BIG002"), 0);
	f->cart[1] = open_cart(f, "BIG002", NULL);
	gen_data(buf, 64u << 10, 3, false);
	EXPECT_RC(vtl_cart_write_block(f->cart[1], buf, 64u << 10), VTL_E_POOL_FULL);
	close_cart(f, 1);
	close_cart(f, 0);
	f->cart[0] = open_cart(f, "BIG001", NULL);
	get_pos(f->cart[0], &pos);
	assert_int_equal(pos.eod, n + 1);
	for (unsigned i = 0; i < 10; i++)
		read_expect_block(f->cart[0], i, 50 + i, 1000);
	struct vtl_read_result r;
	EXPECT_RC(vtl_cart_read(f->cart[0], buf, 16, &r), 0);
	assert_int_equal(r.type, VTL_OBJ_FILEMARK);
	for (unsigned i = 10; i < n; i++)
		read_expect_block(f->cart[0], i + 1, 50 + i, 1000);
	read_expect_eod(f->cart[0], n + 1);
	close_cart(f, 0);
	f->cart[1] = open_cart(f, "BIG002", NULL);
	get_pos(f->cart[1], &pos);
	assert_int_equal(pos.eod, 0);
	close_cart(f, 1);
	tfree(buf);
}

/*
 * Several drives at once: each thread drives its own cartridge in the shared
 * pool (one thread per cartridge, as the contract allows). Failures are
 * recorded and asserted by the main thread (cmocka is not thread-safe).
 */
struct drive {
	struct vtl_pool *pool;
	char bc[16];
	unsigned idx, nblocks;
	bool until_full;
	unsigned written;
	int full_rc;
	char err[256];
};

static size_t drive_len(unsigned idx, unsigned i)
{
	return 1000 + (size_t)((idx * 7919u + i * 104729u) % 19000u);
}

static bool drive_verify(struct drive *d, struct vtl_cart *c, uint8_t *want, uint8_t *got,
			 const char *when)
{
	if (vtl_cart_rewind(c) != 0) {
		snprintf(d->err, sizeof(d->err), "%s: rewind failed", d->bc);
		return false;
	}
	for (unsigned i = 0; i <= d->written; i++) {
		struct vtl_read_result r;
		int rc = vtl_cart_read(c, got, 20064, &r);
		if (rc != 0) {
			snprintf(d->err, sizeof(d->err), "%s %s: read %u: %d (%s)", d->bc, when, i, rc,
				 es(rc));
			return false;
		}
		if (i == d->written) {
			if (r.type != VTL_OBJ_EOD)
				snprintf(d->err, sizeof(d->err), "%s %s: no EOD after %u blocks", d->bc,
					 when, i);
			return r.type == VTL_OBJ_EOD;
		}
		size_t len = drive_len(d->idx, i);
		gen_data(want, len, (uint64_t)d->idx * 1000000 + i, false);
		if (r.type != VTL_OBJ_DATA || r.length != len || memcmp(want, got, len) != 0) {
			snprintf(d->err, sizeof(d->err), "%s %s: block %u reads back wrong", d->bc, when,
				 i);
			return false;
		}
	}
	return true;
}

static void *drive_main(void *arg)
{
	struct drive *d = arg;
	uint8_t *want = malloc(20064), *got = malloc(20064);
	struct vtl_cart_params p;
	memset(&p, 0, sizeof(p));
	p.compression = d->idx % 2;
	struct vtl_cart *c = NULL;
	int rc;
	if (!want || !got) {
		snprintf(d->err, sizeof(d->err), "out of memory");
		goto out;
	}
	if ((rc = vtl_cart_open(d->pool, d->bc, &p, &c)) != 0) {
		snprintf(d->err, sizeof(d->err), "%s: open: %d (%s)", d->bc, rc, es(rc));
		goto out;
	}
	for (unsigned i = 0; d->until_full || i < d->nblocks; i++) {
		size_t len = drive_len(d->idx, i);
		gen_data(want, len, (uint64_t)d->idx * 1000000 + i, false);
		rc = vtl_cart_write_block(c, want, len);
		if (rc != 0) {
			if (d->until_full) {
				d->full_rc = rc;
				break;
			}
			snprintf(d->err, sizeof(d->err), "%s: write %u: %d (%s)", d->bc, i, rc, es(rc));
			goto out;
		}
		d->written++;
		if (i % 50 == 49 && (rc = vtl_cart_sync(c)) != 0) {
			snprintf(d->err, sizeof(d->err), "%s: sync: %d (%s)", d->bc, rc, es(rc));
			goto out;
		}
	}
	if (!drive_verify(d, c, want, got, "before close"))
		goto out;
	rc = vtl_cart_close(c);
	c = NULL;
	if (rc != 0) {
		snprintf(d->err, sizeof(d->err), "%s: close: %d (%s)", d->bc, rc, es(rc));
		goto out;
	}
	p.readonly = true;
	if ((rc = vtl_cart_open(d->pool, d->bc, &p, &c)) != 0) {
		snprintf(d->err, sizeof(d->err), "%s: reopen: %d (%s)", d->bc, rc, es(rc));
		goto out;
	}
	drive_verify(d, c, want, got, "after reopen");
out:
	if (c)
		EXPECT_RC(vtl_cart_close(c), 0);
	free(want);
	free(got);
	return NULL;
}

static void run_drives(struct fx *f, unsigned n, unsigned nblocks, bool until_full, struct drive *d)
{
	pthread_t th[8];
	assert_true(n <= 8);
	for (unsigned i = 0; i < n; i++) {
		memset(&d[i], 0, sizeof(d[i]));
		d[i].pool = f->pool;
		d[i].idx = i;
		d[i].nblocks = nblocks;
		d[i].until_full = until_full;
		snprintf(d[i].bc, sizeof(d[i].bc), "DRIVE%u", i);
		EXPECT_RC(vtl_cart_create(f->pool, d[i].bc), 0);
	}
	for (unsigned i = 0; i < n; i++)
		assert_int_equal(pthread_create(&th[i], NULL, drive_main, &d[i]), 0);
	for (unsigned i = 0; i < n; i++)
		assert_int_equal(pthread_join(th[i], NULL), 0);
	for (unsigned i = 0; i < n; i++)
		if (d[i].err[0])
			fail_msg("drive %u: %s", i, d[i].err);
}

static void test_concurrent_drives(void **state)
{
	struct fx *f = *state;
	fx_pool_open(f, 3, VTL_SEGMENT_SIZE_MIN, 0);
	struct drive d[6];
	run_drives(f, 6, 150, false, d);
	/* And all of them again, from a new pool instance. */
	fx_pool_reopen(f);
	for (unsigned i = 0; i < 6; i++) {
		f->cart[0] = open_cart(f, d[i].bc, NULL);
		for (unsigned b = 0; b < 150; b++)
			read_expect_block(f->cart[0], b, (uint64_t)i * 1000000 + b, drive_len(i, b));
		read_expect_eod(f->cart[0], 150);
		close_cart(f, 0);
	}
}

/* Drives racing for the last bytes of a small pool: none overcommits, none loses data. */
static void test_concurrent_fill(void **state)
{
	struct fx *f = *state;
	const uint64_t quota = 320u << 10;
	fx_pool_open(f, 2, VTL_SEGMENT_SIZE_MIN, quota);
	struct drive d[4];
	run_drives(f, 4, 0, true, d);
	unsigned total = 0;
	for (unsigned i = 0; i < 4; i++) {
		if (d[i].full_rc != VTL_E_POOL_FULL)
			fail_msg("drive %u stopped with %d (%s), expected VTL_E_POOL_FULL", i, d[i].full_rc,
				 es(d[i].full_rc));
		total += d[i].written;
	}
	print_message("  4 drives wrote %u blocks before the pool was full\n", total);
	for (unsigned m = 0; m < 2; m++) {
		struct vtl_member_space ms;
		EXPECT_RC(vtl_pool_member_space(f->pool, m, &ms), 0);
		if (ms.used_bytes > quota)
			fail_msg("member %u: %" PRIu64 " bytes used, quota %" PRIu64, m, ms.used_bytes,
				 quota);
	}
	/* What each wrote is there after a new pool instance counts the files again. */
	fx_pool_reopen(f);
	for (unsigned m = 0; m < 2; m++) {
		struct vtl_member_space ms;
		EXPECT_RC(vtl_pool_member_space(f->pool, m, &ms), 0);
		assert_true(ms.used_bytes <= quota);
	}
	for (unsigned i = 0; i < 4; i++) {
		f->cart[0] = open_cart(f, d[i].bc, NULL);
		for (unsigned b = 0; b < d[i].written; b++)
			read_expect_block(f->cart[0], b, (uint64_t)i * 1000000 + b, drive_len(i, b));
		read_expect_eod(f->cart[0], d[i].written);
		close_cart(f, 0);
	}
}

/*
 * Two pools on the same members play vtld and vtl-migrator: the space the
 * second frees is invisible to the first until it rescans; a rescan sees it,
 * and a write that hits the quota rescans by itself (at most once a second),
 * so it succeeds instead of failing with a full pool.
 */
static void test_rescan_sees_space_freed_elsewhere(void **state)
{
	struct fx *f = *state;
	const uint64_t quota = 256u << 10;
	const size_t bl = 4096;
	fx_pool_open(f, 1, VTL_SEGMENT_SIZE_MIN, quota);
	EXPECT_RC(vtl_cart_create(f->pool, "FREED1"), 0);
	f->cart[1] = open_cart(f, "FREED1", NULL);
	write_blocks(f->cart[1], 24, bl, 100);
	close_cart(f, 1);
	EXPECT_RC(vtl_cart_create(f->pool, "WRITER"), 0);
	f->cart[0] = open_cart(f, "WRITER", NULL);
	uint8_t *buf = talloc(bl);
	assert_non_null(buf);
	int rc = 0;
	for (unsigned n = 0; n < 1000 && rc == 0; n++) {
		gen_data(buf, bl, n, false);
		rc = vtl_cart_write_block(f->cart[0], buf, bl);
	}
	assert_int_equal(rc, VTL_E_POOL_FULL);
	struct vtl_pool_fill full;
	EXPECT_RC(vtl_pool_fill(f->pool, false, &full), 0);
	assert_true(full.percent > 90.0);

	/* The other process empties FREED1 (as the migrator releases a disk copy). */
	struct vtl_pool *other = NULL;
	tl_pool_open(&f->cfg, &other);
	struct vtl_cart *c = tl_cart_open(other, "FREED1", NULL);
	EXPECT_RC(vtl_cart_rewind(c), 0);
	EXPECT_RC(vtl_cart_erase(c), 0);
	EXPECT_RC(vtl_cart_close(c), 0);
	vtl_pool_close(other);

	struct vtl_pool_fill stale, fresh;
	EXPECT_RC(vtl_pool_fill(f->pool, false, &stale), 0);
	assert_int_equal(stale.used_bytes, full.used_bytes); /* not seen without a rescan */
	/* Right after the refused write, the take path does not rescan again: still full. */
	EXPECT_RC(vtl_cart_write_block(f->cart[0], buf, bl), VTL_E_POOL_FULL);
	struct timespec pause = {.tv_sec = 1, .tv_nsec = 100 * 1000 * 1000};
	nanosleep(&pause, NULL);
	/* A second later the write rescans, sees the freed space and succeeds. */
	EXPECT_RC(vtl_cart_write_block(f->cart[0], buf, bl), 0);
	EXPECT_RC(vtl_pool_fill(f->pool, true, &fresh), 0);
	assert_true(fresh.used_bytes + 20 * bl < full.used_bytes);
	assert_true(fresh.percent < full.percent);
	assert_int_equal(fresh.size_bytes, quota);
	/* What this pool wrote after the rescan is still counted by the next one. */
	write_blocks(f->cart[0], 4, bl, 5000);
	struct vtl_pool_fill later;
	EXPECT_RC(vtl_pool_fill(f->pool, true, &later), 0);
	assert_true(later.used_bytes >= fresh.used_bytes + 4 * bl);
	tfree(buf);
	close_cart(f, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_pool_open_ok, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_pool_open_missing_member, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_pool_open_member_is_file, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_pool_open_bad_config, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_barcode_check, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_cart_create_rejects_bad_barcodes, fx_setup,
						fx_teardown),
		cmocka_unit_test_setup_teardown(test_member_for_spreading, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_member_for_round_robin, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_segments_on_member_for, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_member_space_accounting, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_space_reclaimed_after_rewrite, fx_setup,
						fx_teardown),
		cmocka_unit_test_setup_teardown(test_pool_full, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_pool_full_other_writes, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_filesystem_refuses_write, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_pool_inventory, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_concurrent_drives, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_concurrent_fill, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_rescan_sees_space_freed_elsewhere, fx_setup, fx_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
