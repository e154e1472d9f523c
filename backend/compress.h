/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Compression of one data block into an LZ4 record payload.
 *
 * The block is cut into independent pieces of 64 KiB (LZ4's own window, so
 * little ratio is lost) that the pool's workers and the caller compress in
 * parallel: one core's LZ4 is slower than a disk, a drive's compression is
 * not. Payload: u32 per piece (stored size; bit 31 = piece stored raw), then
 * the pieces in order.
 */
#ifndef VTL_BACKEND_COMPRESS_H
#define VTL_BACKEND_COMPRESS_H

#include <stdbool.h>
#include <stddef.h>

#include "common/vtl_error.h"

#define LZ4_PIECE (64u << 10)
#define LZ4_PIECE_RAW 0x80000000u

struct workers;

/* Scratch bytes lz4_record_compress needs for a block of len bytes. */
size_t lz4_record_scratch(size_t len);

/*
 * Compresses src[len] into dst (lz4_record_scratch(len) bytes). Returns the
 * payload size, or 0 when it would not be smaller than len (store it raw).
 * A piece whose sample does not pay (cpol_sample_pays) is stored raw with
 * no full attempt. w may be NULL (the caller does all the work). *slow (may
 * be NULL) carries from one block of a stream to the next whether LZ4 was
 * slow enough on it to be worth the workers. *tried (may be NULL) is set to
 * the pieces given a full LZ4 attempt.
 */
size_t lz4_record_compress(struct workers *w, const void *src, size_t len, void *dst, int accel, bool *slow,
			   unsigned *tried);

/* Decompresses a payload of stored bytes into dst[len]; 0, or -1 when it is malformed. */
VTL_MUST_CHECK int lz4_record_decompress(const void *src, size_t stored, void *dst, size_t len);

#endif
