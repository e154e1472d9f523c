/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Stacked copies on a simulated physical tape: the record stream read from
 * the pool in any pieces is the same; two cartridges copied one after the
 * other, each verified by its digest; a damaged cartridge is refused before
 * it is copied whole; a damaged tape fails verification; a write error of the
 * drive fails the copy.
 */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "backend/format.h"
#include "backend/internal.h"
#include "common/crc32c.h"
#include "common/vtl_error.h"
#include "migrator/copy.h"
#include "migrator/phys_sim.h"
#include "tests/unit/testlib.h"

#define SEG (1u << 20) /* small segments: a stream crosses several */

static struct phys_lib *lib;
static char tapes[TL_DIR_LEN + 16];

/* A cartridge of blocks of many sizes, half compressible, with filemarks; returns its host bytes. */
static void fill_cart(struct fx *f, const char *bc, unsigned blocks, uint64_t seed)
{
	EXPECT_RC(vtl_cart_create(f->pool, bc), 0);
	struct vtl_cart_params p = {.compression = true};
	struct vtl_cart *c = tl_cart_open(f->pool, bc, &p);
	static uint8_t buf[300000];
	for (unsigned i = 0; i < blocks; i++) {
		size_t len = 1000 + (size_t)((i * 7919 + seed * 31) % 290000);
		gen_data(buf, len, seed * 1000 + i, i % 2);
		EXPECT_RC(vtl_cart_write_block(c, buf, len), 0);
		if (i % 9 == 8)
			EXPECT_RC(vtl_cart_write_filemarks(c, 1), 0);
	}
	EXPECT_RC(vtl_cart_close(c), 0);
}

static struct vtl_cart *open_ro(struct fx *f, const char *bc, int slot)
{
	struct vtl_cart_params p = {.readonly = true};
	f->cart[slot] = tl_cart_open(f->pool, bc, &p);
	return f->cart[slot];
}

static int setup(void **state)
{
	if (fx_setup_dirs(state, "copy", 2) != 0)
		return -1;
	struct fx *f = *state;
	fx_pool_config(f, 2, SEG);
	tl_pool_open(&f->cfg, &f->pool);
	snprintf(tapes, sizeof tapes, "%s/tapes", f->dir);
	struct phys_sim_config cfg = {.generation = 8, .drives = 1, .slots = 4, .tapes = 2, .capacity = 1ull << 30,
				      .data_dir = tapes};
	char err[256];
	if (phys_sim_open(&cfg, &lib, err, sizeof err) != VTL_OK)
		return -1;
	return lib->ops->move(lib, PHYS_SIM_SLOT0, PHYS_SIM_DRIVE0) == VTL_OK ? 0 : -1;
}

static int teardown(void **state)
{
	lib->ops->close(lib);
	return fx_teardown(state);
}

static struct copy_job job(void)
{
	return (struct copy_job){.ring = {.buffers = 4, .buffer_size = 256 << 10, .watermark = 2, .readers = 2},
				 .library = "unit"};
}

/* Reads the whole stream of c into buf in pieces of big bytes where the offset divides by every, else small. */
static void read_in_pieces(struct vtl_cart *c, uint8_t *buf, uint64_t size, unsigned every, size_t big, size_t small)
{
	for (uint64_t off = 0; off < size;) {
		size_t n = off % every == 0 ? big : small;
		if (n > size - off)
			n = (size_t)(size - off);
		EXPECT_RC(vtl_cart_stream_read(c, off, buf + off, n), 0);
		off += n;
	}
}

/* The record stream read in odd pieces equals the stream read whole, and walks clean. */
static void stream_reads_agree(void **state)
{
	struct fx *f = *state;
	fill_cart(f, "S00001L8", 60, 1);
	struct vtl_cart *c = open_ro(f, "S00001L8", 0);
	uint64_t size = vtl_cart_stream_size(c);
	struct vtl_cart_info info;
	EXPECT_RC(vtl_cart_info(f->pool, "S00001L8", &info), 0);
	assert_int_equal(size, info.stored_bytes);
	assert_true(size > 2 * SEG); /* it spans segments */
	uint8_t *whole = talloc(size), *pieces = talloc(size);
	EXPECT_RC(vtl_cart_stream_read(c, 0, whole, size), 0);
	read_in_pieces(c, pieces, size, 5, 777777, 12345);
	assert_memory_equal(whole, pieces, size);
	/* Cold (the page cache dropped): read past the cache where the file system allows, the same bytes. */
	tl_drop_cache(f->dir);
	memset(pieces, 0, size);
	read_in_pieces(c, pieces, size, 3, 300001, 4099);
	assert_memory_equal(whole, pieces, size);
	assert_int_equal(vtl_cart_stream_read(c, size - 10, pieces, 11), VTL_E_INVAL);
	struct recwalk w = {0};
	EXPECT_RC(recwalk_feed(&w, whole, size, NULL, NULL), 0);
	EXPECT_RC(recwalk_end(&w), 0);
	assert_int_equal(w.next_object, info.eod);
	assert_int_equal(w.filemarks, info.filemarks);
	/* Records as stored append to another cartridge; out of sequence or damaged, they are refused. */
	EXPECT_RC(vtl_cart_create(f->pool, "S00009L8"), 0);
	struct vtl_cart_params wp = {0};
	struct vtl_cart *dst = tl_cart_open(f->pool, "S00009L8", &wp);
	struct rec_header rh;
	EXPECT_RC(rec_header_decode(whole, &rh), 0);
	size_t first = REC_HEADER_LEN + rh.stored_len;
	EXPECT_RC(vtl_cart_append_stored(dst, whole, first), 0);
	assert_int_equal(vtl_cart_append_stored(dst, whole, first), VTL_E_CORRUPT); /* object 0 again */
	assert_int_equal(vtl_cart_append_stored(dst, whole + first, 10), VTL_E_CORRUPT);
	EXPECT_RC(rec_header_decode(whole + first, &rh), 0);
	size_t second = REC_HEADER_LEN + rh.stored_len;
	uint8_t *bad = talloc(second);
	memcpy(bad, whole + first, second);
	bad[second - 1] ^= 1; /* the payload no longer matches its CRC */
	assert_int_equal(vtl_cart_append_stored(dst, bad, second), VTL_E_CORRUPT);
	EXPECT_RC(vtl_cart_append_stored(dst, whole + first, second), 0);
	struct vtl_position dp;
	vtl_cart_position(dst, &dp);
	assert_int_equal(dp.eod, 2);
	EXPECT_RC(vtl_cart_close(dst), 0);
	/* One flipped byte anywhere in a payload is caught. */
	whole[size / 2] ^= 1;
	w = (struct recwalk){0};
	assert_int_equal(recwalk_feed(&w, whole, size, NULL, NULL), VTL_E_CORRUPT);
}

/*
 * The block CRC (docs/format.md) is the host block's CRC32C end to end: kept
 * by records appended as stored (a recall), checked after decompression,
 * and computed by nobody for records written before it (they still read).
 */
static void block_crc_kept_by_records(void **state)
{
	struct fx *f = *state;
	EXPECT_RC(vtl_cart_create(f->pool, "B00001L8"), 0);
	struct vtl_cart_params p = {.compression = true};
	struct vtl_cart *c = tl_cart_open(f->pool, "B00001L8", &p);
	static uint8_t buf[4][70000], got[70000];
	for (unsigned i = 0; i < 4; i++) {
		gen_data(buf[i], sizeof buf[i], 500 + i, i % 2 == 0);
		/* Blocks 0, 1 as a drive under LBP_W writes them (its checked CRC), 2, 3 as without. */
		if (i < 2)
			EXPECT_RC(vtl_cart_write_block_crc(c, buf[i], sizeof buf[i], crc32c(0, buf[i], sizeof buf[i])), 0);
		else
			EXPECT_RC(vtl_cart_write_block(c, buf[i], sizeof buf[i]), 0);
	}
	/* A compressible block given a wrong CRC is stored, and every read of it is a medium error. */
	EXPECT_RC(vtl_cart_write_block_crc(c, buf[0], sizeof buf[0], crc32c(0, buf[0], sizeof buf[0]) ^ 1), 0);
	EXPECT_RC(vtl_cart_close(c), 0);
	c = open_ro(f, "B00001L8", 0);
	uint64_t size = vtl_cart_stream_size(c);
	uint8_t *whole = talloc(size);
	EXPECT_RC(vtl_cart_stream_read(c, 0, whole, size), 0);
	/* Restage it record by record; block 2 goes as a record written before the block CRC existed. */
	EXPECT_RC(vtl_cart_create(f->pool, "B00002L8"), 0);
	struct vtl_cart_params wp = {0};
	struct vtl_cart *dst = tl_cart_open(f->pool, "B00002L8", &wp);
	bool compressed[5];
	for (uint64_t off = 0, k = 0; off < size; k++) {
		struct rec_header rh;
		EXPECT_RC(rec_header_decode(whole + off, &rh), 0);
		assert_true(rh.flags & REC_FLAG_BLOCK_CRC);
		compressed[k] = rh.flags & REC_FLAG_LZ4;
		if (k == 2) {
			rh.flags &= (uint8_t)~REC_FLAG_BLOCK_CRC;
			rec_header_encode(&rh, whole + off);
		}
		size_t len = REC_HEADER_LEN + rh.stored_len;
		EXPECT_RC(vtl_cart_append_stored(dst, whole + off, len), 0);
		off += len;
	}
	assert_true(compressed[0] && !compressed[1] && compressed[2] && compressed[4]);
	EXPECT_RC(vtl_cart_rewind(dst), 0);
	for (unsigned i = 0; i < 4; i++) {
		struct vtl_read_result r;
		EXPECT_RC(vtl_cart_read(dst, got, sizeof got, &r), 0);
		assert_int_equal(r.length, sizeof buf[i]);
		assert_memory_equal(got, buf[i], sizeof buf[i]);
		/* An old compressed record leaves the CRC to the reader; every other one carries it. */
		assert_int_equal(r.has_block_crc, i != 2);
		if (i != 2)
			assert_int_equal(r.block_crc, crc32c(0, buf[i], sizeof buf[i]));
	}
	struct vtl_read_result r;
	assert_int_equal(vtl_cart_read(dst, got, sizeof got, &r), VTL_E_MEDIUM);
	assert_int_equal(r.object, 4);
	EXPECT_RC(vtl_cart_close(dst), 0);
}

/* Two cartridges stacked on one tape, each verified; positions follow the format. */
static void stacked_copies_verify(void **state)
{
	struct fx *f = *state;
	fill_cart(f, "S00001L8", 30, 2);
	fill_cart(f, "S00002L8", 12, 3);
	struct copy_job j = job();
	struct copy_result r1, r2, v;
	struct vtl_cart *c1 = open_ro(f, "S00001L8", 0);
	EXPECT_RC(copy_write(lib, 0, c1, &j, &r1), 0);
	assert_int_equal(r1.block, 0);
	assert_int_equal(r1.stream_bytes, vtl_cart_stream_size(c1));
	assert_int_equal(r1.data_blocks, (r1.stream_bytes + (256 << 10) - 1) / (256 << 10));
	assert_int_equal(r1.counters.blocks, r1.data_blocks);
	assert_int_equal(r1.trailer_blocks, 1);
	assert_non_null(strstr(r1.digest, "crc32c-blocks:"));
	struct vtl_cart *c2 = open_ro(f, "S00002L8", 1);
	EXPECT_RC(copy_write(lib, 0, c2, &j, &r2), 0);
	/* Header, data, trailer, filemark: the second copy starts right after the first's filemark. */
	assert_int_equal(r2.block, 1 + r1.data_blocks + r1.trailer_blocks + 1);
	struct phys_drive_status st;
	EXPECT_RC(lib->ops->status(lib, 0, &st), 0);
	assert_int_equal(st.file, 2);

	char err[256];
	struct copy_expect w1 = {"S00001L8", r1.digest, r1.stream_bytes, r1.block_size},
			   w2 = {"S00002L8", r2.digest, r2.stream_bytes, 0};
	EXPECT_RC(copy_verify(lib, 0, r1.block, &w1, &v, err, sizeof err), 0);
	assert_string_equal(v.digest, r1.digest);
	assert_int_equal(v.objects, r1.objects);
	EXPECT_RC(copy_verify(lib, 0, r2.block, &w2, &v, err, sizeof err), 0);
	/* The wrong cartridge, length or digest, or a block that is no header, is told apart. */
	struct copy_expect wrong = {"S00001L8", NULL, r2.stream_bytes, 0};
	assert_int_equal(copy_verify(lib, 0, r2.block, &wrong, &v, err, sizeof err), VTL_E_MEDIUM);
	assert_string_equal(err, "header: barcode S00002L8, the catalog says S00001L8");
	wrong = (struct copy_expect){"S00001L8", NULL, r1.stream_bytes + 1, 0};
	assert_int_equal(copy_verify(lib, 0, r1.block, &wrong, &v, err, sizeof err), VTL_E_MEDIUM);
	char want_err[256];
	snprintf(want_err, sizeof want_err, "header: stream_bytes %llu, the catalog says %llu",
		 (unsigned long long)r1.stream_bytes, (unsigned long long)r1.stream_bytes + 1);
	assert_string_equal(err, want_err);
	wrong = (struct copy_expect){"S00001L8", r2.digest, r1.stream_bytes, 0};
	assert_int_equal(copy_verify(lib, 0, r1.block, &wrong, &v, err, sizeof err), VTL_E_MEDIUM);
	assert_non_null(strstr(err, "digest"));
	wrong = (struct copy_expect){"S00001L8", NULL, r1.stream_bytes, r1.block_size * 2};
	assert_int_equal(copy_verify(lib, 0, r1.block, &wrong, &v, err, sizeof err), VTL_E_MEDIUM);
	snprintf(want_err, sizeof want_err, "header: block_size %u, the catalog says %u", r1.block_size,
		 r1.block_size * 2);
	assert_string_equal(err, want_err);
	struct copy_expect any = {NULL, NULL, 0, 0};
	assert_int_equal(copy_verify(lib, 0, 1, &any, &v, err, sizeof err), VTL_E_MEDIUM);
	assert_non_null(strstr(err, "header block: too long"));
}

/*
 * The digest a release recomputes from the disk copy is the one the copy
 * recorded, for its block size and no other; one pass serves several sizes.
 */
static void disk_digest_is_the_copys(void **state)
{
	struct fx *f = *state;
	fill_cart(f, "S00001L8", 30, 2);
	struct copy_job j = job();
	struct copy_result r, v;
	struct vtl_cart *c = open_ro(f, "S00001L8", 0);
	EXPECT_RC(copy_write(lib, 0, c, &j, &r), 0);
	assert_int_equal(r.block_size, 256u << 10);
	char err[256];
	struct copy_expect want = {"S00001L8", r.digest, r.stream_bytes, 0};
	EXPECT_RC(copy_verify(lib, 0, r.block, &want, &v, err, sizeof err), 0);
	assert_int_equal(v.block_size, r.block_size); /* what a verify records for a copy from before schema 5 */
	uint32_t sizes[] = {COPY_BLOCK_MIN, r.block_size, 1u << 20};
	char dg[3][COPY_DIGEST_MAX];
	EXPECT_RC(copy_stream_digests(c, sizes, 3, dg), 0);
	assert_string_equal(dg[1], r.digest);
	assert_string_not_equal(dg[0], r.digest);
	assert_string_not_equal(dg[2], r.digest);
	uint32_t one = r.block_size;
	char alone[1][COPY_DIGEST_MAX];
	EXPECT_RC(copy_stream_digests(c, &one, 1, alone), 0);
	assert_string_equal(alone[0], r.digest);
	uint32_t tiny = COPY_BLOCK_MIN - 1;
	assert_int_equal(copy_stream_digests(c, &tiny, 1, alone), VTL_E_INVAL);
	uint64_t bad_at = 1;
	EXPECT_RC(copy_stream_check(c, &bad_at), 0);
	/* An empty cartridge's digest is an empty copy's. */
	EXPECT_RC(vtl_cart_create(f->pool, "S00002L8"), 0);
	c = open_ro(f, "S00002L8", 1);
	EXPECT_RC(copy_write(lib, 0, c, &j, &r), 0);
	EXPECT_RC(copy_stream_digests(c, &one, 1, alone), 0);
	assert_string_equal(alone[0], r.digest);
}

/* One byte of a data block changed on the tape: the verify says which check failed. */
static void damaged_tape_fails_verify(void **state)
{
	struct fx *f = *state;
	fill_cart(f, "S00001L8", 20, 4);
	struct copy_job j = job();
	struct copy_result r, v;
	EXPECT_RC(copy_write(lib, 0, open_ro(f, "S00001L8", 0), &j, &r), 0);
	char path[TL_DIR_LEN + 64];
	snprintf(path, sizeof path, "%s/PHY001L8.tape", tapes);
	int fd = open(path, O_RDWR);
	assert_true(fd >= 0);
	off_t at = 4 + COPY_HEADER_LEN + 4 + 100000; /* inside the first data block */
	uint8_t b;
	assert_int_equal(pread(fd, &b, 1, at), 1);
	b ^= 0x40;
	assert_int_equal(pwrite(fd, &b, 1, at), 1);
	close(fd);
	char err[256];
	struct copy_expect want = {"S00001L8", r.digest, r.stream_bytes, 0};
	assert_int_equal(copy_verify(lib, 0, r.block, &want, &v, err, sizeof err), VTL_E_MEDIUM);
	assert_true(strstr(err, "damaged record") || strstr(err, "trailer"));
}

/* A cartridge damaged on disk is not copied as if it were sound. */
static void damaged_cartridge_is_refused(void **state)
{
	struct fx *f = *state;
	fill_cart(f, "S00003L8", 25, 5);
	char path[TL_DIR_LEN + 64];
	EXPECT_RC(pool_seg_path(f->pool, "S00003L8", 1, path, sizeof path), 0);
	int fd = open(path, O_RDWR);
	assert_true(fd >= 0);
	uint8_t b;
	off_t at = 128 + 32 + 5000; /* a payload byte of the segment's first record */
	assert_int_equal(pread(fd, &b, 1, at), 1);
	b ^= 0x01;
	assert_int_equal(pwrite(fd, &b, 1, at), 1);
	close(fd);
	struct copy_job j = job();
	struct copy_result r;
	assert_int_equal(copy_write(lib, 0, open_ro(f, "S00003L8", 0), &j, &r), VTL_E_MEDIUM);
	assert_non_null(strstr(phys_error(lib), "damaged"));
}

/* The drive fails a WRITE half way: the copy fails with the drive's words. */
static void write_error_fails_copy(void **state)
{
	struct fx *f = *state;
	fill_cart(f, "S00004L8", 30, 6);
	struct phys_sim_fault fault = {.write_error_at = 1u << 20};
	phys_sim_inject(lib, 0, &fault);
	struct copy_job j = job();
	struct copy_result r;
	assert_int_equal(copy_write(lib, 0, open_ro(f, "S00004L8", 0), &j, &r), VTL_E_IO);
	assert_non_null(strstr(phys_error(lib), "write error"));
	assert_true(r.counters.blocks < r.data_blocks);
}

/* Writes a forged copy at the drive's position: a header saying h, then data blocks of len bytes, a filemark. */
static void forge_copy(const struct copy_header *h, unsigned blocks, size_t len)
{
	uint8_t hb[COPY_HEADER_LEN];
	copy_header_encode(h, hb);
	EXPECT_RC(lib->ops->write_block(lib, 0, hb, sizeof hb), 0);
	uint8_t *b = talloc(len);
	memset(b, 0x5A, len);
	for (unsigned i = 0; i < blocks; i++)
		EXPECT_RC(lib->ops->write_block(lib, 0, b, len), 0);
	EXPECT_RC(lib->ops->write_filemarks(lib, 0, 1), 0);
}

/* A header saying h for S00001L8 (stream_bytes as given), then blocks data blocks of len bytes, a filemark. */
static void forge(uint32_t block_size, uint64_t stream_bytes, unsigned blocks, size_t len)
{
	struct copy_header h = {.block_size = block_size, .stream_bytes = stream_bytes};
	snprintf(h.barcode, sizeof h.barcode, "S00001L8");
	forge_copy(&h, blocks, len);
}

static void expect_refusal(const struct copy_expect *want, const char *msg)
{
	struct copy_result v;
	char err[256];
	assert_int_equal(copy_verify(lib, 0, 0, want, &v, err, sizeof err), VTL_E_MEDIUM);
	assert_string_equal(err, msg);
}

/*
 * A header whose block size (1) and stream length (2^62 + 2) made the count
 * of CRCs wrap (a heap overflow in the check of the data blocks): refused
 * before anything is read or allocated, even when the catalog says the same
 * length, with the field, what the tape says and the bound or the catalog's
 * value. The recall path (a stage) refuses it the same way and appends nothing.
 */
static void forged_header_sizes_are_refused(void **state)
{
	struct fx *f = *state;
	const uint64_t huge = (1ull << 62) + 2;
	forge(1, huge, 64, 1);
	struct copy_expect want = {"S00001L8", NULL, huge, 0};
	expect_refusal(&want, "header: block_size 1, outside 4096..8388608 (the drive's READ BLOCK LIMITS)");
	EXPECT_RC(vtl_cart_create(f->pool, "S00009L8"), 0);
	struct vtl_cart_params wp = {0};
	struct vtl_cart *dst = tl_cart_open(f->pool, "S00009L8", &wp);
	struct copy_result v;
	char err[256];
	assert_int_equal(copy_stage(lib, 0, 0, &want, dst, NULL, &v, err, sizeof err), VTL_E_MEDIUM);
	assert_string_equal(err, "header: block_size 1, outside 4096..8388608 (the drive's READ BLOCK LIMITS)");
	struct vtl_position pos;
	vtl_cart_position(dst, &pos);
	assert_int_equal(pos.eod, 0);
	EXPECT_RC(vtl_cart_close(dst), 0);
	/* Above the drive's READ BLOCK LIMITS maximum (the simulated drive's: 8 MiB). */
	EXPECT_RC(lib->ops->locate(lib, 0, 0), 0);
	forge(16u << 20, 16u << 20, 1, 4096);
	want.stream_bytes = 16u << 20;
	expect_refusal(&want, "header: block_size 16777216, outside 4096..8388608 (the drive's READ BLOCK LIMITS)");
}

/* The header's length against the catalog's, and a catalog (damaged too) that agrees with a length no tape holds. */
static void forged_stream_length_is_refused(void **state)
{
	(void)state;
	forge(4096, (1ull << 62) + 2, 3, 4096);
	struct copy_expect want = {"S00001L8", NULL, 8192, 0};
	expect_refusal(&want, "header: stream_bytes 4611686018427387906, the catalog says 8192");
	want.stream_bytes = (1ull << 62) + 2;
	expect_refusal(&want, "header: stream_bytes 4611686018427387906, more than a copy may hold (35184372088832)");
}

/* A trailer that goes on past what the header implies ends at the first block too many, not at a filemark. */
static void endless_trailer_is_refused(void **state)
{
	(void)state;
	uint8_t hb[COPY_HEADER_LEN];
	struct copy_header h = {.block_size = 4096};
	snprintf(h.barcode, sizeof h.barcode, "S00001L8");
	copy_header_encode(&h, hb);
	EXPECT_RC(lib->ops->write_block(lib, 0, hb, sizeof hb), 0);
	uint8_t junk[4096] = {0};
	EXPECT_RC(lib->ops->write_block(lib, 0, junk, 60), 0); /* an empty stream's trailer is 60 bytes */
	for (int i = 0; i < 100; i++)
		EXPECT_RC(lib->ops->write_block(lib, 0, junk, sizeof junk), 0);
	struct copy_expect want = {"S00001L8", NULL, 0, 0};
	expect_refusal(&want, "trailer: another block where the filemark should be (the header implies 60 trailer bytes)");
	/* Its first block longer than the header implies. */
	EXPECT_RC(lib->ops->locate(lib, 0, 1), 0);
	EXPECT_RC(lib->ops->write_block(lib, 0, junk, sizeof junk), 0);
	EXPECT_RC(lib->ops->write_filemarks(lib, 0, 1), 0);
	expect_refusal(&want, "trailer block 0: 4096 bytes, the header implies 60");
}

/*
 * An encrypted cartridge: the stacked copy carries its records unchanged
 * (no key needed), a recall after the disk copy is gone restores them, and
 * they read back with the key only; a native export refuses it by name.
 */
static void encrypted_copy_and_recall(void **state)
{
	struct fx *f = *state;
	static const uint8_t key[VTL_KEY_LEN] = {7, 7, 7, 1};
	static const char marker[] = "ENCRYPTED-COPY-MARKER";
	struct vtl_key *k;
	EXPECT_RC(vtl_key_new(key, sizeof key, &k), 0);
	struct vtl_crypt cr = {.enc = k, .dec = k, .plain_ok = true, .kad = {.ukad_len = 3, .ukad = "abc"}};
	const char *bc = "S00009L8";
	EXPECT_RC(vtl_cart_create(f->pool, bc), 0);
	struct vtl_cart_params p = {.compression = true};
	struct vtl_cart *c = tl_cart_open(f->pool, bc, &p);
	vtl_cart_set_crypt(c, &cr);
	static uint8_t buf[200000], back[200000];
	for (unsigned i = 0; i < 20; i++) {
		gen_data(buf, 150000, 900 + i, i % 2);
		memcpy(buf + 10, marker, sizeof marker - 1);
		EXPECT_RC(vtl_cart_write_block(c, buf, 150000), 0);
	}
	EXPECT_RC(vtl_cart_close(c), 0);

	struct copy_job j = job();
	struct copy_result r, v, n;
	c = open_ro(f, bc, 0);
	EXPECT_RC(copy_write(lib, 0, c, &j, &r), 0);
	char err[256];
	struct copy_expect want = {bc, r.digest, r.stream_bytes, r.block_size};
	EXPECT_RC(copy_verify(lib, 0, r.block, &want, &v, err, sizeof err), 0);
	/* Native: refused at the first encrypted block, with a message that says why. */
	assert_int_equal(copy_write_native(lib, 0, c, &j, &n), VTL_E_ENCRYPTED);
	assert_non_null(strstr(phys_error(lib), "is encrypted"));
	EXPECT_RC(vtl_cart_close(c), 0);
	f->cart[0] = NULL;

	/* Released, then recalled from the copy. */
	EXPECT_RC(vtl_cart_delete(f->pool, bc), 0);
	EXPECT_RC(vtl_cart_create(f->pool, bc), 0);
	struct vtl_cart_params wp = {0};
	struct vtl_cart *dst = tl_cart_open(f->pool, bc, &wp);
	EXPECT_RC(copy_stage(lib, 0, r.block, &want, dst, NULL, &v, err, sizeof err), 0);
	EXPECT_RC(vtl_cart_rewind(dst), 0);
	struct vtl_read_result rr;
	assert_int_equal(vtl_cart_read(dst, back, sizeof back, &rr), VTL_E_ENCRYPTED); /* no key */
	vtl_cart_set_crypt(dst, &cr);
	for (unsigned i = 0; i < 20; i++) {
		EXPECT_RC(vtl_cart_read(dst, back, sizeof back, &rr), 0);
		assert_int_equal(rr.length, 150000);
		gen_data(buf, 150000, 900 + i, i % 2);
		memcpy(buf + 10, marker, sizeof marker - 1);
		assert_memory_equal(back, buf, 150000);
	}
	/* The read-ahead carried the encrypted records: decrypted on the reader's thread as they were served. */
	struct vtl_cart_stats st;
	vtl_cart_stats(dst, &st);
	assert_true(st.readahead_hits > 0);
	EXPECT_RC(vtl_cart_close(dst), 0);
	vtl_key_free(k);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(stream_reads_agree), T(block_crc_kept_by_records), T(stacked_copies_verify), T(disk_digest_is_the_copys),
		T(damaged_tape_fails_verify),
		T(damaged_cartridge_is_refused), T(write_error_fails_copy), T(forged_header_sizes_are_refused),
		T(forged_stream_length_is_refused), T(endless_trailer_is_refused),
		T(encrypted_copy_and_recall),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
