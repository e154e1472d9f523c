/* SPDX-License-Identifier: Apache-2.0 */
/*
 * LZ4 record payloads: pieces compressed alone or on workers read back
 * exactly; damage is refused; a piece whose sample does not shrink is stored
 * raw without a full attempt, and a stream switches record by record.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "backend/compress.h"
#include "backend/compress_policy.h"
#include "backend/format.h"
#include "backend/workers.h"

#include "common/grow.h"

static uint64_t rng = 88172645463325252ull;
static uint64_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* Text-like data (compresses well), random data (does not), or halves of each per piece. */
static void fill(unsigned char *p, size_t len, int kind)
{
	static const char words[] = "tape drive cartridge filemark block library robot slot ";
	for (size_t i = 0; i < len; i++) {
		bool text = kind == 0 || (kind == 2 && (i / LZ4_PIECE) % 2 == 0);
		p[i] = text ? (unsigned char)words[(i * 7 + i / 13) % (sizeof words - 1)] : (unsigned char)next_rand();
	}
}

static void round_trip(struct workers *w, size_t len, int kind, bool expect_shrink)
{
	unsigned char *src = malloc(len), *dst = malloc(lz4_record_scratch(len)), *back = malloc(len);
	assert_non_null(src);
	assert_non_null(dst);
	assert_non_null(back);
	fill(src, len, kind);
	bool slow = false;
	/* Twice: the second call follows the first one's speed hint. */
	for (int pass = 0; pass < 2; pass++) {
		size_t n = lz4_record_compress(w, src, len, dst, 1, &slow, NULL);
		if (!expect_shrink) {
			assert_int_equal(n, 0);
			continue;
		}
		assert_true(n > 0 && n < len);
		memset(back, 0xAA, len);
		assert_int_equal(lz4_record_decompress(dst, n, back, len), 0);
		assert_memory_equal(back, src, len);
		/* Any truncation or a wrong length is refused. */
		assert_int_equal(lz4_record_decompress(dst, n - 1, back, len), -1);
		assert_int_equal(lz4_record_decompress(dst, n, back, len - 1), -1);
	}
	free(src);
	free(dst);
	free(back);
}

static void text_blocks_shrink_and_come_back(void **state)
{
	(void)state;
	size_t sizes[] = {1000, LZ4_PIECE - 1, LZ4_PIECE, LZ4_PIECE + 1, 256 << 10, 1 << 20, (16 << 20)};
	for (size_t i = 0; i < VTL_ARRAY_SIZE(sizes); i++)
		round_trip(NULL, sizes[i], 0, true);
}

static void random_blocks_are_stored_raw(void **state)
{
	(void)state;
	round_trip(NULL, 1, 1, false);
	round_trip(NULL, 256 << 10, 1, false);
}

static void mixed_pieces_keep_raw_ones_raw(void **state)
{
	(void)state;
	size_t len = 4 * LZ4_PIECE;
	unsigned char *src = malloc(len), *dst = malloc(lz4_record_scratch(len)), *back = malloc(len);
	fill(src, len, 2);
	size_t n = lz4_record_compress(NULL, src, len, dst, 1, NULL, NULL);
	assert_true(n > 0 && n < len);
	/* Pieces 1 and 3 are random: flagged raw, stored at full size. */
	assert_true(get_le32(dst + 4) == (LZ4_PIECE | LZ4_PIECE_RAW));
	assert_true(get_le32(dst + 12) == (LZ4_PIECE | LZ4_PIECE_RAW));
	assert_int_equal(get_le32(dst) & LZ4_PIECE_RAW, 0);
	assert_int_equal(lz4_record_decompress(dst, n, back, len), 0);
	assert_memory_equal(back, src, len);
	/* A raw piece whose size disagrees with its place is refused. */
	put_le32(dst + 4, (LZ4_PIECE - 1) | LZ4_PIECE_RAW);
	assert_int_equal(lz4_record_decompress(dst, n, back, len), -1);
	free(src);
	free(dst);
	free(back);
}

/* Compresses src[len], reads the payload back and returns the pieces LZ4 really attempted. */
static unsigned attempts_and_round_trip(struct workers *w, const unsigned char *src, size_t len, bool shrinks)
{
	unsigned char *dst = malloc(lz4_record_scratch(len)), *back = malloc(len);
	assert_non_null(dst);
	assert_non_null(back);
	unsigned tried = 12345;
	bool slow = false;
	size_t n = lz4_record_compress(w, src, len, dst, 2, &slow, &tried);
	if (shrinks) {
		assert_true(n > 0 && n < len);
		memset(back, 0x5A, len);
		assert_int_equal(lz4_record_decompress(dst, n, back, len), 0);
		assert_memory_equal(back, src, len);
	} else {
		assert_int_equal(n, 0); /* the record is written raw: its bytes are src itself */
	}
	free(dst);
	free(back);
	return tried;
}

static void random_data_gets_no_full_attempt(void **state)
{
	(void)state;
	size_t len = 1 << 20;
	unsigned char *src = malloc(len);
	assert_non_null(src);
	fill(src, len, 1);
	assert_int_equal(attempts_and_round_trip(NULL, src, len, false), 0);
	struct workers *w = workers_start(2);
	assert_non_null(w);
	assert_int_equal(attempts_and_round_trip(w, src, len, false), 0);
	workers_stop(w);
	/* A record no longer than two samples is attempted outright: the attempt costs what a sample would. */
	assert_int_equal(attempts_and_round_trip(NULL, src, 2 * CPOL_SAMPLE, false), 1);
	free(src);
}

/* About 2:1 under LZ4: words at random, as in a log. */
static void fill_words(unsigned char *p, size_t len)
{
	static const char *const words[] = {"tape ", "drive ", "cartridge ", "filemark ", "block ", "the ",
					    "library ", "robot ", "slot ", "of ", "and ", "backup ", "restore ",
					    "volume ", "error ", "ok\n", "job ", "42 ", "2026-12-02 ", "03:41 "};
	for (size_t at = 0; at < len;) {
		const char *wd = words[next_rand() % VTL_ARRAY_SIZE(words)];
		size_t l = strlen(wd) < len - at ? strlen(wd) : len - at;
		memcpy(p + at, wd, l);
		at += l;
	}
}

static void text_and_zeros_are_compressed(void **state)
{
	(void)state;
	size_t len = 1 << 20;
	unsigned char *src = malloc(len);
	assert_non_null(src);
	fill_words(src, len);
	assert_int_equal(attempts_and_round_trip(NULL, src, len, true), len / LZ4_PIECE);
	memset(src, 0, len);
	assert_int_equal(attempts_and_round_trip(NULL, src, len, true), len / LZ4_PIECE);
	free(src);
}

/* Records of random, text, zeros and half-and-half pieces in turn: each is judged on its own. */
static void a_mixed_stream_switches_per_record(void **state)
{
	(void)state;
	size_t len = 256 << 10;
	unsigned pieces = (unsigned)(len / LZ4_PIECE);
	unsigned char *src = malloc(len);
	assert_non_null(src);
	for (int round = 0; round < 3; round++) {
		fill(src, len, 1);
		assert_int_equal(attempts_and_round_trip(NULL, src, len, false), 0);
		fill_words(src, len);
		assert_int_equal(attempts_and_round_trip(NULL, src, len, true), pieces);
		memset(src, 0, len);
		assert_int_equal(attempts_and_round_trip(NULL, src, len, true), pieces);
		fill(src, len, 2); /* pieces 0 and 2 text, 1 and 3 random */
		assert_int_equal(attempts_and_round_trip(NULL, src, len, true), pieces / 2);
	}
	free(src);
}

static void workers_give_the_same_bytes(void **state)
{
	(void)state;
	struct workers *w = workers_start(3);
	assert_non_null(w);
	size_t len = 1 << 20;
	unsigned char *src = malloc(len), *a = malloc(lz4_record_scratch(len)), *b = malloc(lz4_record_scratch(len));
	fill(src, len, 0);
	size_t na = lz4_record_compress(NULL, src, len, a, 1, NULL, NULL);
	bool slow = true; /* force the workers from the first piece */
	for (int i = 0; i < 20; i++) {
		size_t nb = lz4_record_compress(w, src, len, b, 1, &slow, NULL);
		assert_int_equal(nb, na);
		assert_memory_equal(a, b, na);
		slow = true;
	}
	round_trip(w, 3 * LZ4_PIECE + 5, 2, true);
	workers_stop(w);
	free(src);
	free(a);
	free(b);
}

static void garbage_never_decodes_past_its_buffer(void **state)
{
	(void)state;
	size_t len = 2 * LZ4_PIECE;
	unsigned char *junk = malloc(4096), *back = malloc(len);
	for (int t = 0; t < 200; t++) {
		size_t n = 8 + next_rand() % 4000;
		for (size_t i = 0; i < n; i++)
			junk[i] = (unsigned char)next_rand();
		put_le32(junk, (uint32_t)(next_rand() % n));
		put_le32(junk + 4, (uint32_t)(next_rand() % n));
		/* Any result will do: it must not crash, and ASan watches. */
		vtl_ignore(lz4_record_decompress(junk, n, back, len));
	}
	assert_int_equal(lz4_record_decompress(junk, 3, back, len), -1);
	free(junk);
	free(back);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(text_blocks_shrink_and_come_back),
		cmocka_unit_test(random_blocks_are_stored_raw),
		cmocka_unit_test(mixed_pieces_keep_raw_ones_raw),
		cmocka_unit_test(random_data_gets_no_full_attempt),
		cmocka_unit_test(text_and_zeros_are_compressed),
		cmocka_unit_test(a_mixed_stream_switches_per_record),
		cmocka_unit_test(workers_give_the_same_bytes),
		cmocka_unit_test(garbage_never_decodes_past_its_buffer),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
