/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target for what verification and recall read from physical
 * tape: a copy's header block and its record stream, fed to the record
 * walker in pieces of the sizes the input chooses. Nothing may crash or read
 * out of bounds; the walker must accept a stream only if it is records with
 * good header CRCs, consecutive object numbers from 0 and payloads whose CRC
 * matches (checked here independently), and feeding it in other pieces must
 * give the same answer.
 *
 * Input: byte 0 picks the piece size (1..256), the rest is the stream; the
 * first 4096 bytes are also tried as a header block. Random bytes rarely pass
 * a header CRC, so half the runs first rewrite the stream into well-formed
 * records whose fields (type, lengths, object numbers, payload CRC) stay fuzzed.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "backend/format.h"
#include "common/crc32c.h"
#include "common/vtl_error.h"
#include "migrator/copy.h"
#include "tests/fuzz/fuzzlib.h"

/* An independent check of a stream: 1 when every record is sound and in sequence. */
static int sound(const uint8_t *p, size_t n)
{
	uint64_t obj = 0;
	for (size_t at = 0; at < n;) {
		struct rec_header h;
		if (n - at < REC_HEADER_LEN || rec_header_decode(p + at, &h) != 0 || h.object != obj ||
		    (h.type != REC_DATA && h.type != REC_FILEMARK) || n - at - REC_HEADER_LEN < h.stored_len ||
		    crc32c(0, p + at + REC_HEADER_LEN, h.stored_len) != h.payload_crc)
			return 0;
		at += REC_HEADER_LEN + h.stored_len;
		obj++;
	}
	return 1;
}

static int walk(const uint8_t *p, size_t n, size_t piece)
{
	struct recwalk w = {0};
	for (size_t at = 0; at < n; at += piece)
		if (recwalk_feed(&w, p + at, n - at < piece ? n - at : piece, NULL, NULL) != VTL_OK)
			return 0;
	return recwalk_end(&w) == VTL_OK;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 2)
		return 0;
	size_t piece = (size_t)data[0] % 256 + 1;
	size_t n = size - 1;
	uint8_t *buf = malloc(n);
	if (!buf)
		return 0;
	memcpy(buf, data + 1, n);
	struct copy_header h;
	if (n >= COPY_HEADER_LEN)
		(void)copy_header_decode(buf, COPY_HEADER_LEN, &h);
	if (data[0] & 0x80)
		n = fuzz_shape_records(buf, n, true);
	int want = sound(buf, n);
	if (walk(buf, n, piece) != want || walk(buf, n, n ? n : 1) != want)
		abort();
	free(buf);
	return 0;
}
