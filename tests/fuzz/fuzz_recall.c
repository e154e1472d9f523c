/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target for the sizing path of reading a stacked copy back:
 * copy_verify and the recall's copy_stage, run against a simulated physical
 * library (migrator/phys_sim.c) whose tape holds what the input says: a
 * header block, data blocks, trailer blocks, filemarks. Nothing may crash,
 * read or write out of bounds, or allocate what the header asks for before
 * it is checked (-rss_limit_mb catches the last); every answer is VTL_OK or
 * VTL_E_MEDIUM; a copy written as the format says (docs/format.md) must
 * verify and stage back whole, with the digest computed here independently.
 *
 * Input: byte 0 is the mode. Bit 0: also stage the copy into a cartridge.
 * Bit 1 clear: a raw tape. The header's fields come from the input (block
 * size, stream bytes, objects, filemarks: any values, 2^62 + 2 included), as
 * does the catalog's length (the header's or the input's); then items until
 * the input ends: two bytes of length (0: a filemark) and that many bytes.
 * Bit 1 set: a well-formed copy of the rest of the input, shaped into sound
 * records and cut into blocks of 4096, 8192 or 12288 bytes (bits 2-3), with
 * a correct trailer; bits 4-7 pick one mutation (0: none). The input's last
 * 8 bytes are parameters: how many times the rest is repeated into the
 * stream, then the mutation's.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/vtl_error.h"
#include "migrator/copy.h"
#include "migrator/phys_sim.h"
#include "tests/fuzz/fuzzlib.h"

#define BARCODE "F00001L8"
#define STAGED "F00002L8"
#define TRAILER_FIXED 56 /* docs/format.md, "Copies on physical tape": the trailer's fixed part */
#define TRAILER_ENTRY 16
#define RAW_ITEMS_MAX 64 /* tape blocks a raw input may write */
#define GOOD_REPEAT_MAX 32 /* how many times a well-formed input's bytes may be repeated into its stream */
#define SIM_RATE_MBS 1e7 /* a drive fast enough that its timing model never sleeps long */

static struct phys_lib *lib;
static char sim_dir[128];

static void sim_cleanup(void)
{
	if (!lib)
		return;
	lib->ops->close(lib);
	lib = NULL;
	char path[256];
	snprintf(path, sizeof path, "%s/PHY001L8.tape", sim_dir);
	unlink(path);
	snprintf(path, sizeof path, "%s/library.state", sim_dir);
	unlink(path);
	rmdir(sim_dir);
}

static void sim_open(void)
{
	snprintf(sim_dir, sizeof sim_dir, "%s/tapes", fuzz_dir);
	struct phys_sim_config cfg = {.generation = 8, .drives = 1, .slots = 1, .tapes = 1, .capacity = 1ull << 40,
				      .rate_mbs = SIM_RATE_MBS, .data_dir = sim_dir};
	char err[256];
	if (phys_sim_open(&cfg, &lib, err, sizeof err) != VTL_OK ||
	    lib->ops->move(lib, PHYS_SIM_SLOT0, PHYS_SIM_DRIVE0) != VTL_OK) {
		fprintf(stderr, "fuzz_recall: %s\n", err);
		abort();
	}
	atexit(sim_cleanup); /* runs before the pool's cleanup, which removes fuzz_dir */
}

static void put(const void *buf, size_t len)
{
	if (lib->ops->write_block(lib, 0, buf, len) != VTL_OK)
		abort();
}

static void filemark(void)
{
	if (lib->ops->write_filemarks(lib, 0, 1) != VTL_OK)
		abort();
}

static void header(uint32_t block_size, uint64_t stream, uint64_t objects, uint64_t filemarks)
{
	struct copy_header h = {.block_size = block_size, .stream_bytes = stream, .objects = objects,
				.filemarks = filemarks};
	snprintf(h.barcode, sizeof h.barcode, BARCODE);
	uint8_t hb[COPY_HEADER_LEN];
	copy_header_encode(&h, hb);
	put(hb, sizeof hb);
}

/* What a good copy's reading gives, to compare with: its digest and records. */
struct want {
	bool sound;
	uint64_t stream, objects;
	char digest[COPY_DIGEST_MAX];
};

static uint64_t fuzz_u64(struct fuzz_input *in)
{
	uint64_t hi = fuzz_take(in, 4);
	return hi << 32 | fuzz_take(in, 4);
}

/* A raw tape: every header field and every block from the input. */
static uint64_t raw_tape(struct fuzz_input *in)
{
	uint32_t b = fuzz_take(in, 4);
	uint64_t stream = fuzz_u64(in), objects = fuzz_u64(in), filemarks = fuzz_u64(in);
	uint64_t catalog = fuzz_take(in, 1) & 1 ? fuzz_u64(in) : stream;
	header(b, stream, objects, filemarks);
	static uint8_t blk[65536];
	for (unsigned i = 0; in->n && i < RAW_ITEMS_MAX; i++) {
		size_t len = fuzz_take(in, 2);
		if (!len) {
			filemark();
			continue;
		}
		size_t have = in->n < len ? in->n : len;
		memcpy(blk, in->p, have);
		memset(blk + have, 0, len - have);
		in->p += have;
		in->n -= have;
		put(blk, len);
	}
	return catalog;
}

enum mutation {
	M_NONE, M_BLOCK_SIZE, M_STREAM, M_CATALOG, M_OBJECTS, M_FLIP, M_TRAILER_SHORT, M_EXTRA_BLOCK, M_NO_FILEMARK,
	M_COUNT
};

/* A well-formed copy of the input's records in blocks of b, then one mutation; fills w when it is unchanged. */
static uint64_t good_tape(uint8_t mode, const uint8_t *data, size_t n, struct want *w)
{
	size_t b = COPY_BLOCK_MIN * (1 + (mode >> 2) % 3);
	enum mutation m = (enum mutation)((mode >> 4) % M_COUNT);
	/* The mutation's parameters: the last 8 bytes, kept out of the stream. */
	struct fuzz_input par = {data + (n > 8 ? n - 8 : 0), n > 8 ? 8 : n};
	n = n > 8 ? n - 8 : 0;
	/* The input repeated up to GOOD_REPEAT_MAX times: small inputs make copies of many blocks too. */
	size_t total = n * (1 + fuzz_take(&par, 1) % GOOD_REPEAT_MAX);
	uint8_t *s = malloc(total ? total : 1);
	if (!s)
		abort();
	for (size_t at = 0; at < total; at += n)
		memcpy(s + at, data, n);
	size_t len = fuzz_shape_records(s, total, false);
	uint64_t nblocks = (len + b - 1) / b, objects = 0, filemarks = 0;
	size_t tlen = TRAILER_FIXED + (size_t)nblocks * TRAILER_ENTRY + 4;
	uint8_t *t = calloc(1, tlen);
	if (!t)
		abort();
	for (uint64_t i = 0; i < nblocks; i++)
		put_le64(t + TRAILER_FIXED + i * TRAILER_ENTRY, UINT64_MAX);
	for (size_t at = 0; at < len;) {
		struct rec_header h;
		if (rec_header_decode(s + at, &h) != 0)
			abort(); /* fuzz_shape_records made it */
		uint8_t *e = t + TRAILER_FIXED + (at / b) * TRAILER_ENTRY;
		if (get_le64(e) == UINT64_MAX) {
			put_le64(e, objects);
			put_le32(e + 8, (uint32_t)(at % b));
		}
		objects++;
		filemarks += h.type == REC_FILEMARK;
		at += REC_HEADER_LEN + h.stored_len;
	}
	uint32_t digest = 0;
	for (uint64_t i = 0; i < nblocks; i++) {
		size_t off = (size_t)i * b, bl = len - off < b ? len - off : b;
		uint32_t crc = crc32c(0, s + off, bl);
		put_le32(t + TRAILER_FIXED + i * TRAILER_ENTRY + 12, crc);
		uint8_t le[4];
		put_le32(le, crc);
		digest = crc32c(digest, le, sizeof le);
	}
	memcpy(t, COPY_TRAILER_MAGIC, sizeof COPY_TRAILER_MAGIC);
	put_le32(t + 8, COPY_VERSION);
	put_le32(t + 12, TRAILER_ENTRY);
	put_le64(t + 16, nblocks);
	put_le64(t + 24, len);
	put_le64(t + 32, objects);
	put_le64(t + 40, filemarks);
	put_le32(t + 48, digest);
	put_le32(t + tlen - 4, crc32c(0, t, tlen - 4));

	uint64_t catalog = len;
	uint32_t hb = (uint32_t)b;
	uint64_t hstream = len, hobjects = objects;
	switch (m) {
	case M_BLOCK_SIZE: hb = fuzz_take(&par, 4); break;
	case M_STREAM: hstream = fuzz_u64(&par); break;
	case M_CATALOG: catalog = fuzz_u64(&par); break;
	case M_OBJECTS: hobjects = fuzz_u64(&par); break;
	case M_FLIP: {
		uint64_t at = fuzz_take(&par, 4) % (len + tlen);
		uint8_t x = (uint8_t)(fuzz_take(&par, 1) | 1);
		if (at < len)
			s[at] ^= x;
		else
			t[at - len] ^= x;
		break;
	}
	default: break;
	}
	header(hb ? hb : 1, hstream, hobjects, filemarks);
	for (size_t off = 0; off < len; off += b)
		put(s + off, len - off < b ? len - off : b);
	size_t tcut = m == M_TRAILER_SHORT ? tlen - 1 - fuzz_take(&par, 2) % tlen : tlen;
	for (size_t off = 0; off < tcut; off += b)
		put(t + off, tcut - off < b ? tcut - off : b);
	static const uint8_t extra[3 * COPY_BLOCK_MIN];
	if (m == M_EXTRA_BLOCK)
		put(extra, 1 + fuzz_take(&par, 2) % b);
	if (m != M_NO_FILEMARK)
		filemark();
	w->sound = m == M_NONE;
	w->stream = len;
	w->objects = objects;
	snprintf(w->digest, sizeof w->digest, "crc32c-blocks:%08x", digest);
	free(s);
	free(t);
	return catalog;
}

static void check(int rc, const struct copy_result *r, const struct want *w, const char *err)
{
	if (rc != VTL_OK && rc != VTL_E_MEDIUM) {
		fprintf(stderr, "fuzz_recall: %s: %s\n", vtl_strerror(rc), err);
		abort();
	}
	if (w->sound && (rc != VTL_OK || strcmp(r->digest, w->digest) != 0 || r->stream_bytes != w->stream ||
			 r->objects != w->objects)) {
		fprintf(stderr, "fuzz_recall: a sound copy failed: %s\n", err);
		abort();
	}
	if (rc == VTL_E_MEDIUM && !err[0])
		abort(); /* a refusal that does not say why */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	if (!lib) {
		fuzz_pool_open("fuzz_recall", STAGED);
		sim_open();
	}
	uint8_t mode = data[0];
	if (lib->ops->locate(lib, 0, 0) != VTL_OK)
		abort();
	struct want w = {0};
	struct fuzz_input in = {data + 1, size - 1};
	uint64_t catalog = mode & 2 ? good_tape(mode, data + 1, size - 1, &w) : raw_tape(&in);
	/* A well-formed copy's catalog record holds its true digest, whatever the mutation did to the tape. */
	struct copy_expect want = {.barcode = BARCODE, .digest = mode & 2 ? w.digest : NULL, .stream_bytes = catalog};
	struct copy_result r;
	char err[512] = "";
	check(copy_verify(lib, 0, 0, &want, &r, err, sizeof err), &r, &w, err);
	if (mode & 1) {
		if (vtl_cart_create(fuzz_pool, STAGED) != VTL_OK)
			abort();
		struct vtl_cart_params p = {0};
		struct vtl_cart *c;
		if (vtl_cart_open(fuzz_pool, STAGED, &p, &c) != VTL_OK)
			abort();
		err[0] = 0;
		int rc = copy_stage(lib, 0, 0, &want, c, NULL, &r, err, sizeof err);
		check(rc, &r, &w, err);
		struct vtl_position pos;
		vtl_cart_position(c, &pos);
		if (rc == VTL_OK && pos.eod != r.objects)
			abort(); /* a stage that ends well brought every record back */
		if (vtl_cart_close(c) != VTL_OK || vtl_cart_delete(fuzz_pool, STAGED) != VTL_OK)
			abort();
	}
	return 0;
}
