/* SPDX-License-Identifier: Apache-2.0 */
/* The on-disk format's building blocks: CRC32C and the encoded headers (docs/format.md). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "backend/format.h"
#include "common/crc32c.h"
#include "common/grow.h"

static void crc32c_known_vectors(void **state)
{
	(void)state;
	/* RFC 3720 B.4 and the usual check value. */
	assert_int_equal(crc32c(0, "123456789", 9), 0xE3069283u);
	unsigned char zeros[32] = {0}, ones[32];
	memset(ones, 0xff, sizeof ones);
	assert_int_equal(crc32c(0, zeros, 32), 0x8A9136AAu);
	assert_int_equal(crc32c(0, ones, 32), 0x62A8AB43u);
	unsigned char inc[32];
	for (int i = 0; i < 32; i++)
		inc[i] = (unsigned char)i;
	assert_int_equal(crc32c(0, inc, 32), 0x46DD794Eu);
	assert_int_equal(crc32c(0, NULL, 0), 0u);
}

static void crc32c_fast_equals_portable(void **state)
{
	(void)state;
	size_t n = 70000;
	unsigned char *buf = malloc(n);
	assert_non_null(buf);
	for (size_t i = 0; i < n; i++)
		buf[i] = (unsigned char)(i * 2654435761u >> 13);
	/* Every alignment and a spread of lengths, and chaining in pieces. */
	for (size_t off = 0; off < 9; off++)
		for (size_t len = 0; len < 300; len += 7)
			assert_int_equal(crc32c(0, buf + off, len), crc32c_portable(0, buf + off, len));
	/* Around the three-lane strides (3 x 256 and 3 x 8192 bytes) and their joins. */
	static const size_t lane_lens[] = {767, 768, 769, 1543, 24575, 24576, 24577, 25345, 49152, 65536, 69991};
	for (size_t off = 0; off < 9; off++)
		for (size_t k = 0; k < sizeof lane_lens / sizeof lane_lens[0]; k++)
			assert_int_equal(crc32c(0, buf + off, lane_lens[k]), crc32c_portable(0, buf + off, lane_lens[k]));
	uint32_t whole = crc32c(0, buf, n);
	assert_int_equal(whole, crc32c_portable(0, buf, n));
	uint32_t part = crc32c(0, buf, 12345);
	part = crc32c(part, buf + 12345, n - 12345);
	assert_int_equal(part, whole);
	free(buf);
}

static void segment_header_round_trip_and_damage(void **state)
{
	(void)state;
	struct seg_header h = {.seq = 7, .first_object = 123456789012ull, .first_filemark = 42,
			       .created_ns = 1, .barcode = "ABC123L8", .synced_end = 65536};
	unsigned char b[SEG_HEADER_LEN];
	seg_header_encode(&h, b);
	struct seg_header d;
	assert_int_equal(seg_header_decode(b, &d), 0);
	assert_int_equal(d.seq, 7);
	assert_true(d.first_object == 123456789012ull);
	assert_true(d.first_filemark == 42);
	assert_string_equal(d.barcode, "ABC123L8");
	assert_true(d.synced_end == 65536);
	for (int i = 0; i < SEG_HEADER_LEN; i++) {
		b[i] ^= 0x10;
		if (i >= SEG_SYNCMARK_OFF && i < SEG_SYNCMARK_OFF + SEG_SYNCMARK_LEN) {
			/* The sync mark is rewritten in place, outside the header's CRC: damaged, it is just gone. */
			int rc = seg_header_decode(b, &d);
			assert_int_equal(rc, 0);
			assert_true(d.synced_end == 0);
		} else {
			assert_int_equal(seg_header_decode(b, &d), -1);
		}
		b[i] ^= 0x10;
	}
	/* A new mark written in place keeps the header valid. */
	seg_syncmark_encode(1u << 20, b + SEG_SYNCMARK_OFF);
	assert_int_equal(seg_header_decode(b, &d), 0);
	assert_true(d.synced_end == 1u << 20 && d.seq == 7);
}

static void record_header_round_trip_and_damage(void **state)
{
	(void)state;
	struct rec_header h = {.type = REC_DATA, .flags = REC_FLAG_LZ4, .stored_len = 100, .object = 99,
			       .length = 262144, .payload_crc = 0xdeadbeef};
	unsigned char b[REC_HEADER_LEN];
	rec_header_encode(&h, b);
	struct rec_header d;
	assert_int_equal(rec_header_decode(b, &d), 0);
	assert_int_equal(d.type, REC_DATA);
	assert_int_equal(d.stored_len, 100);
	assert_true(d.object == 99);
	assert_int_equal(d.length, 262144);
	assert_int_equal(d.payload_crc, 0xdeadbeefu);
	for (int i = 0; i < REC_HEADER_LEN; i++) {
		b[i] ^= 0x01;
		assert_int_equal(rec_header_decode(b, &d), -1);
		b[i] ^= 0x01;
	}
	/* Well-formed CRC but impossible fields are refused too. */
	struct rec_header bad[] = {
		{.type = REC_DATA, .stored_len = 10, .length = 11},                       /* raw must match */
		{.type = REC_DATA, .flags = REC_FLAG_LZ4, .stored_len = 11, .length = 11}, /* must shrink */
		{.type = REC_DATA, .stored_len = 0, .length = 0},
		{.type = REC_FILEMARK, .stored_len = 1, .length = 1},
		{.type = 9},
		{.type = REC_DATA, .stored_len = (16u << 20) + 1, .length = (16u << 20) + 1},
	};
	for (size_t i = 0; i < VTL_ARRAY_SIZE(bad); i++) {
		rec_header_encode(&bad[i], b);
		assert_int_equal(rec_header_decode(b, &d), -1);
	}
}

static void trailer_round_trip_and_damage(void **state)
{
	(void)state;
	struct seg_trailer t = {.data_end = 1000, .fm_off = 1032, .index_off = 1072, .n_objects = 9,
				.n_filemarks = 2, .flags = TRAILER_FLAG_EOD};
	unsigned char b[TRAILER_LEN];
	seg_trailer_encode(&t, b);
	struct seg_trailer d;
	assert_int_equal(seg_trailer_decode(b, &d), 0);
	assert_true(d.data_end == 1000 && d.fm_off == 1032 && d.index_off == 1072);
	assert_int_equal(d.n_objects, 9);
	assert_int_equal(d.n_filemarks, 2);
	assert_int_equal(d.flags, TRAILER_FLAG_EOD);
	for (int i = 0; i < TRAILER_LEN; i++) {
		b[i] ^= 0x80;
		assert_int_equal(seg_trailer_decode(b, &d), -1);
		b[i] ^= 0x80;
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(crc32c_known_vectors),
		cmocka_unit_test(crc32c_fast_equals_portable),
		cmocka_unit_test(segment_header_round_trip_and_damage),
		cmocka_unit_test(record_header_round_trip_and_damage),
		cmocka_unit_test(trailer_round_trip_and_damage),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
