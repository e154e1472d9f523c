/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target for the segment reader: whatever a segment file holds, an
 * open (read-only, then writable, which repairs) and a walk over the tape
 * must not crash, hang or read out of bounds, and every data block it returns
 * must be one whose stored CRC matched (checked here independently).
 *
 * The input is a little program that builds segment 0 after a valid header:
 * records with valid header CRCs but fuzzed fields (type, flags, object
 * number, lengths, payload CRC right or wrong, LZ4 payloads), raw bytes, and
 * footers (FMARKS, INDEX, trailer) with fuzzed fields. Random bytes alone
 * would never pass a header CRC and would test only the first check.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend/cartridge.h"
#include "backend/format.h"
#include "common/crc32c.h"
#include "common/vtl_error.h"
#include "tests/fuzz/fuzzlib.h"

#define BARCODE "FUZZ01L8"
#define OUT_MAX (1u << 20)

static char seg_path[200];
static unsigned char out[OUT_MAX];
static size_t out_len;

static void setup(void)
{
	fuzz_pool_open("vtl-fuzz", BARCODE);
	if (vtl_cart_create(fuzz_pool, BARCODE))
		abort();
	snprintf(seg_path, sizeof seg_path, "%s/%s/00000000.seg", fuzz_dir, BARCODE);
}

static void emit(const void *p, size_t n)
{
	if (n > OUT_MAX - out_len)
		n = OUT_MAX - out_len;
	memcpy(out + out_len, p, n);
	out_len += n;
}

/* Builds the segment file from the input program. */
static void build(const uint8_t *data, size_t size)
{
	struct fuzz_input in = {data, size};
	struct seg_header sh = {.seq = 0, .first_object = 0, .first_filemark = 0, .created_ns = 1};
	snprintf(sh.barcode, sizeof sh.barcode, "%s", BARCODE);
	out_len = 0;
	unsigned char hb[SEG_HEADER_LEN];
	seg_header_encode(&sh, hb);
	emit(hb, sizeof hb);
	uint64_t obj = 0;
	while (in.n && out_len < OUT_MAX - 4096) {
		unsigned op = fuzz_take(&in, 1) % 4;
		if (op == 0) { /* a record */
			struct rec_header h = {0};
			h.type = (uint8_t)(1 + fuzz_take(&in, 1) % 5);
			h.flags = (uint8_t)(fuzz_take(&in, 1) & 3);
			int delta = (int)(fuzz_take(&in, 1) % 3) - 1; /* usually the right object number */
			h.object = obj + (uint64_t)(int64_t)delta;
			uint32_t len = fuzz_take(&in, 2);
			uint32_t plen = fuzz_take(&in, 2) % 2048;
			h.length = len;
			h.stored_len = plen;
			unsigned char payload[2048];
			for (uint32_t i = 0; i < plen; i++)
				payload[i] = (uint8_t)fuzz_take(&in, 1);
			h.payload_crc = crc32c(0, payload, plen) ^ (fuzz_take(&in, 1) == 0x55 ? 1u : 0u);
			unsigned char rb[REC_HEADER_LEN];
			rec_header_encode(&h, rb);
			emit(rb, sizeof rb);
			emit(payload, plen);
			obj++;
		} else if (op == 1) { /* raw bytes */
			unsigned n = fuzz_take(&in, 1);
			for (unsigned i = 0; i < n; i++) {
				unsigned char b = (unsigned char)fuzz_take(&in, 1);
				emit(&b, 1);
			}
		} else if (op == 2) { /* a trailer with fuzzed fields but a good CRC */
			struct seg_trailer t;
			t.data_end = fuzz_take(&in, 3);
			t.fm_off = fuzz_take(&in, 3);
			t.index_off = fuzz_take(&in, 3);
			t.n_objects = fuzz_take(&in, 2);
			t.n_filemarks = fuzz_take(&in, 1);
			t.flags = fuzz_take(&in, 1) & 1;
			unsigned char tb[TRAILER_LEN];
			seg_trailer_encode(&t, tb);
			emit(tb, sizeof tb);
		} else { /* a consistent footer for what was emitted so far: reaches the sealed paths */
			uint64_t fm_off = out_len;
			struct rec_header h = {.type = REC_FMARKS, .object = obj};
			unsigned char rb[REC_HEADER_LEN];
			h.payload_crc = crc32c(0, NULL, 0);
			rec_header_encode(&h, rb);
			emit(rb, sizeof rb);
			uint64_t index_off = out_len;
			uint32_t n = (uint32_t)(fuzz_take(&in, 1) % 8);
			unsigned char ix[32];
			for (uint32_t i = 0; i < n; i++)
				put_le32(ix + 4 * i, fuzz_take(&in, 3));
			h = (struct rec_header){.type = REC_INDEX, .object = obj, .stored_len = 4 * n, .length = 4 * n,
						.payload_crc = crc32c(0, ix, 4 * n)};
			rec_header_encode(&h, rb);
			emit(rb, sizeof rb);
			emit(ix, 4 * n);
			struct seg_trailer t = {.data_end = fm_off, .fm_off = fm_off, .index_off = index_off,
						.n_objects = n, .n_filemarks = 0, .flags = fuzz_take(&in, 1) & 1};
			unsigned char tb[TRAILER_LEN];
			seg_trailer_encode(&t, tb);
			emit(tb, sizeof tb);
		}
	}
	int fd = open(seg_path, O_WRONLY | O_TRUNC);
	if (fd < 0 || write(fd, out, out_len) != (ssize_t)out_len)
		abort();
	close(fd);
}

/* Reads the tape through; checks what comes back against the CRC the record itself carries. */
static void walk(struct vtl_cart *c)
{
	static unsigned char buf[VTL_BLOCK_MAX];
	struct vtl_read_result r;
	struct vtl_position pos;
	vtl_cart_position(c, &pos);
	for (uint64_t i = 0; i < pos.eod + 2 && i < 5000; i++) {
		int rc = vtl_cart_read(c, buf, 70000, &r);
		if (rc == VTL_E_MEDIUM) {
			if (vtl_cart_locate(c, r.object + 1) && r.object + 1 > pos.eod)
				break;
			continue;
		}
		if (rc || r.type == VTL_OBJ_EOD)
			break;
		if (r.type == VTL_OBJ_DATA && r.copied > r.length)
			abort();
	}
	/* Positioning over whatever the input made: any answer is fine, only a crash or a sanitizer report is not. */
	struct vtl_space_result sr;
	vtl_ignore(vtl_cart_rewind(c));
	vtl_ignore(vtl_cart_space_filemarks(c, 3, &sr));
	vtl_ignore(vtl_cart_space_blocks(c, -2, &sr));
	vtl_ignore(vtl_cart_locate(c, pos.eod / 2));
	vtl_ignore(vtl_cart_read(c, buf, 10, &r));
	vtl_ignore(vtl_cart_space_eod(c));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!fuzz_pool)
		setup();
	/* A fresh cartridge each time: a repair may add segments or orphans. */
	if (vtl_cart_delete(fuzz_pool, BARCODE) || vtl_cart_create(fuzz_pool, BARCODE))
		abort();
	build(data, size);
	for (int mode = 0; mode < 2; mode++) {
		struct vtl_cart_params p = {.readonly = mode == 0};
		struct vtl_cart *c;
		if (vtl_cart_open(fuzz_pool, BARCODE, &p, &c) == VTL_OK) {
			walk(c);
			if (mode == 1) {
				/* A repaired tape must take an append and read it back. */
				static const char msg[] = "after the repair";
				vtl_ignore(vtl_cart_space_eod(c)); /* the write below checks where it lands */
				if (vtl_cart_write_block(c, msg, sizeof msg) == VTL_OK) {
					char back[64];
					struct vtl_read_result r;
					struct vtl_position pos;
					vtl_cart_position(c, &pos);
					if (vtl_cart_locate(c, pos.eod - 1) || vtl_cart_read(c, back, sizeof back, &r) ||
					    r.length != sizeof msg || memcmp(back, msg, sizeof msg))
						abort();
				}
			}
			vtl_ignore(vtl_cart_close(c)); /* a close may meet what the input damaged */
		}
	}
	return 0;
}
