/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The disk pool: N member directories that hold cartridge segment files.
 *
 * A cartridge's segments are spread round-robin over the members, starting
 * at a member derived from its barcode, so that many cartridges written at
 * once spread their load over every disk. The pool also accounts free space
 * per member, so that a full pool ends a write cleanly instead of losing it.
 */
#ifndef VTL_BACKEND_POOL_H
#define VTL_BACKEND_POOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/barcode.h" /* vtl_barcode_check, VTL_BARCODE_MAX: the pool names files after barcodes */
#include "common/vtl_error.h"

#define VTL_POOL_MAX_MEMBERS 64

#define VTL_SEGMENT_SIZE_DEFAULT (256ull << 20)
#define VTL_SEGMENT_SIZE_MIN (64ull << 10)
#define VTL_SEGMENT_SIZE_MAX (1ull << 31) /* offsets in the index are 32-bit */

struct vtl_pool_config {
	const char *members[VTL_POOL_MAX_MEMBERS]; /* directories, must exist and be writable */
	unsigned n_members;
	uint64_t segment_size;  /* target size of a segment file; 0 = default */
	uint64_t member_quota;  /* bytes a member may hold; 0 = the file system's free space */
	uint64_t reserve_bytes; /* space kept free on each member; 0 = default (32 MiB, 0 with a quota) */
	/* Read-ahead: K reads of S bytes kept outstanding, at most M bytes per open cartridge. */
	unsigned readahead_depth;    /* K; 0 = default (8) */
	size_t readahead_chunk;      /* S; 0 = default (1 MiB) */
	size_t readahead_memory;     /* M; 0 = default (K * S * 5: raw chunk + 4x decompressed) */
	bool readahead_buffered;     /* true: read-ahead always reads through the page cache, never O_DIRECT */
	bool write_buffered;         /* true: records are always written through the page cache, never O_DIRECT */
	int lz4_acceleration;        /* LZ4 speed/ratio dial, 1 = best ratio; 0 = default (2) */
	unsigned io_threads;         /* worker threads shared by all cartridges; 0 = default (4) */
};

struct vtl_member_space {
	const char *path;
	uint64_t used_bytes;  /* bytes of segment files this pool counts on the member */
	uint64_t free_bytes;  /* bytes still available to cartridges (after reserve/quota) */
};

struct vtl_pool;

/* Opens the pool; on failure returns a vtl_err and writes a readable reason into err. */
VTL_MUST_CHECK int vtl_pool_open(const struct vtl_pool_config *cfg, struct vtl_pool **out, char *err, size_t errlen);

/* Stops the I/O workers and frees the pool; every cartridge must be closed first. */
void vtl_pool_close(struct vtl_pool *pool);

/* Number of member directories. */
unsigned vtl_pool_members(const struct vtl_pool *pool);

/* Fills *out with the space accounting of member i. */
VTL_MUST_CHECK int vtl_pool_member_space(struct vtl_pool *pool, unsigned i, struct vtl_member_space *out);

/*
 * Re-reads each member's used bytes from the segment files on disk, so that
 * space another process freed (vtl-migrator releasing disk copies) or took
 * becomes visible here. Safe while this process writes: space taken during
 * the scan is counted on top of it, so the accounting stays at or above what
 * is on disk (a write racing the scan may be counted twice until the next
 * rescan), but for the index space reserved for segments being written (a
 * few bytes a block, written when the segment is sealed). A write that hits
 * the quota rescans its member by itself, at most once a second.
 */
VTL_MUST_CHECK int vtl_pool_rescan(struct vtl_pool *pool);

/* How full the pool is, summed over its members. */
struct vtl_pool_fill {
	uint64_t used_bytes; /* segment files */
	uint64_t size_bytes; /* used plus still free */
	double percent;      /* used / size * 100; 100 when size is 0 */
};

/* Fills *out from vtl_pool_member_space of every member, after a vtl_pool_rescan when rescan is set. */
VTL_MUST_CHECK int vtl_pool_fill(struct vtl_pool *pool, bool rescan, struct vtl_pool_fill *out);

/* Member index that holds segment seq of the cartridge named barcode. */
unsigned vtl_pool_member_for(const struct vtl_pool *pool, const char *barcode, uint32_t seq);

#endif
