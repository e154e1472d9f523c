/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Stacked copies of virtual cartridges on physical tape (docs/format.md,
 * "Copies on physical tape"): a header block, the cartridge's record stream
 * as stored in blocks of B bytes, a trailer (an index of the data blocks
 * with their checksums, and the digest), and a filemark. Many copies follow
 * one another on a physical tape, one tape file each.
 */
#ifndef VTL_MIGRATOR_COPY_H
#define VTL_MIGRATOR_COPY_H

#include <stdbool.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "backend/cartridge.h"
#include "migrator/phys.h"
#include "migrator/stream.h"

#define COPY_HEADER_LEN 4096   /* the header block */
#define COPY_MAGIC "VTLCOPY"   /* 8 bytes with its NUL */
#define COPY_TRAILER_MAGIC "VTLCEND"
#define COPY_VERSION 1
#define COPY_DIGEST_MAX 64

/* What a copy's header block says. */
struct copy_header {
	uint32_t block_size;                /* B: the data blocks' size (the last is shorter) */
	char barcode[VTL_BARCODE_MAX + 1];
	char library[65];                   /* the virtual library's name */
	uint64_t objects;                   /* the cartridge's EOD: records in the stream */
	uint64_t filemarks;
	uint64_t stream_bytes;
	uint64_t created;                   /* Unix seconds */
};

/* One data block in the trailer's index. */
struct copy_index_entry {
	uint64_t first_object;  /* the first record that starts in the block; UINT64_MAX when none does */
	uint32_t start;         /* where in the block it starts */
	uint32_t crc;           /* CRC32C of the block */
};

/* What writing or verifying a copy found. */
struct copy_result {
	uint64_t block;               /* the header block's logical object number on the tape */
	uint64_t data_blocks, trailer_blocks;
	uint64_t stream_bytes, objects, filemarks;
	uint64_t tape_bytes;          /* header, stream and trailer: what the copy takes on the tape */
	uint32_t block_size;          /* B, as written or as the header says (0: a native copy) */
	char digest[COPY_DIGEST_MAX]; /* "crc32c-blocks:XXXXXXXX", the catalog's digest */
	struct stream_counters counters;
};

struct copy_job {
	struct stream_config ring;    /* M, B (the block size on tape), watermark, readers, rate limit */
	const char *library;          /* the virtual library's name, for the header */
	void (*progress)(void *arg, const struct stream_progress *p);
	void *progress_arg;
	atomic_bool *cancel;
};

/*
 * Writes a stacked copy of cartridge c (open, not written meanwhile) at the
 * current position of drive d: header, data, trailer, one filemark (which
 * flushes the drive). Every record is checked (header, object number,
 * payload CRC) on its way: a damaged cartridge fails with VTL_E_MEDIUM and
 * is not copied whole. Physical errors come back as the drive's (phys_error
 * says what); the tape then holds a partial file that must not be trusted.
 */
int copy_write(struct phys_lib *l, unsigned d, struct vtl_cart *c, const struct copy_job *job,
	       struct copy_result *res);

/*
 * The sizes a stacked copy may have (docs/format.md, "What a copy may say").
 * B is at least the header block (the writer's smallest block) and at most
 * the largest [migrator] buffer_size, and never more than the drive's READ
 * BLOCK LIMITS maximum; a copy is one file on one tape, so its stream is
 * below the native capacity of the largest LTO cartridge (LTO-9: 18 TB).
 */
#define COPY_BLOCK_MIN COPY_HEADER_LEN
#define COPY_BLOCK_MAX (64u << 20)
#define COPY_STREAM_MAX (32ull << 40)

/*
 * What the catalog recorded for a stacked copy: its header and trailer must
 * say the same before anything they size is allocated or read.
 */
struct copy_expect {
	const char *barcode;   /* the cartridge it is a copy of; NULL: any */
	const char *digest;    /* the catalog's digest; NULL: not compared */
	uint64_t stream_bytes; /* the catalog's length of the copy: its record stream's bytes */
	uint32_t block_size;   /* the catalog's block size of the copy; 0: not known, not compared */
};

/*
 * Reads back the copy whose header block is at block of drive d's tape and
 * checks it whole: the header against want and the bounds above (before
 * anything is allocated), every data block's CRC against the trailer,
 * every record, the trailer's fields, and the digest against want's.
 * VTL_E_MEDIUM when anything differs (err says which field, what the tape
 * says and what was expected), or the drive's error.
 */
int copy_verify(struct phys_lib *l, unsigned d, uint64_t block, const struct copy_expect *want,
		struct copy_result *res, char *err, size_t errlen);

/*
 * The digests stacked copies of cartridge c with data blocks of
 * block_size[i] bytes (COPY_BLOCK_MIN..COPY_BLOCK_MAX) would have, as
 * copy_write computes them, from one read of c's record stream; digest[i]
 * gets each. c must not be written meanwhile. VTL_E_MEDIUM when c is
 * damaged (its stream cannot be read whole), VTL_E_INVAL for a size out of
 * bounds or n of 0 or above COPY_DIGEST_SIZES_MAX, or the read's error.
 */
#define COPY_DIGEST_SIZES_MAX 8
int copy_stream_digests(struct vtl_cart *c, const uint32_t *block_size, size_t n, char (*digest)[COPY_DIGEST_MAX]);

/*
 * Walks cartridge c's record stream as reading a copy back does (each
 * record's header, objects in order from 0 to its end of data, each
 * payload's CRC): VTL_OK when every record is sound; VTL_E_MEDIUM when one
 * is not, or c is damaged (*bad_at: the stream byte near which); or the
 * read's error. c must not be written meanwhile.
 */
int copy_stream_check(struct vtl_cart *c, uint64_t *bad_at);

#define COPY_NATIVE_PREFIX "native-crc32c:" /* the digest of a native copy */

/*
 * Writes a native copy of cartridge c at the current position of drive d
 * (the beginning of a tape of its own): the host's blocks and filemarks one
 * to one, as the backup application wrote them, so that any library can
 * read the tape as it was the cartridge; then flushes the drive. The digest
 * (COPY_NATIVE_PREFIX) covers every block's length and bytes and every
 * filemark. A damaged record fails with VTL_E_MEDIUM; physical errors as the
 * drive's. progress (may be NULL) is called about twice a second.
 */
int copy_write_native(struct phys_lib *l, unsigned d, struct vtl_cart *c, const struct copy_job *job,
		      struct copy_result *res);

/*
 * Reads a native copy back from the beginning of drive d's tape to its end
 * of data and checks its digest against want; with c (not NULL) every block
 * and filemark is also compared with the cartridge's. VTL_E_MEDIUM when
 * anything differs (err says where), or the drive's error.
 */
int copy_verify_native(struct phys_lib *l, unsigned d, struct vtl_cart *c, const char *want, struct copy_result *res,
		       char *err, size_t errlen);

/* How a stage runs: all members may be left zero. */
struct copy_stage_opts {
	atomic_bool *cancel; /* set to stop it: it ends with VTL_E_BUSY */
	/* Called about twice a second with the stream bytes read so far, their total and the rate over the last second. */
	void (*progress)(void *arg, uint64_t bytes, uint64_t total, double mbs);
	void *progress_arg;
};

/*
 * Stages a stacked copy back (a recall): like copy_verify, and each record,
 * as stored, is appended to dst (open for writing, at its end of data) as it
 * comes off the tape, so that dst can be read while the rest is still on its
 * way. Records dst already holds (a stage interrupted before: the same data,
 * since every good copy of a cartridge holds the same) are read and checked
 * but not appended again. On any error dst holds only the records before
 * it, all of them sound; the caller keeps them or tries another copy.
 */
int copy_stage(struct phys_lib *l, unsigned d, uint64_t block, const struct copy_expect *want, struct vtl_cart *dst,
	       const struct copy_stage_opts *o, struct copy_result *res, char *err, size_t errlen);

/* Encodes and decodes the header block (COPY_HEADER_LEN bytes); decode returns VTL_E_CORRUPT when it is none. */
void copy_header_encode(const struct copy_header *h, uint8_t out[COPY_HEADER_LEN]);
int copy_header_decode(const uint8_t *in, size_t len, struct copy_header *h);

/*
 * Walks a record stream fed in pieces: checks each record's header, that
 * objects follow one another from 0, and each payload's CRC.
 */
struct recwalk {
	uint64_t off;            /* stream bytes fed */
	uint64_t next_object;
	uint64_t filemarks;
	uint8_t hdr[32];
	unsigned hdr_have;
	uint64_t payload_left;
	uint32_t crc, want_crc;
	bool bad;
	bool headers_only;       /* set before feeding: leave the payload CRCs to whoever takes the records */
};

/* Feeds n bytes; start (may be NULL) is told of each record that begins, with its stream offset. */
int recwalk_feed(struct recwalk *w, const uint8_t *p, size_t n, void (*start)(void *arg, uint64_t object, uint64_t off),
		 void *arg);

/* VTL_OK when the stream ended between records; VTL_E_CORRUPT when it ended inside one or was bad. */
int recwalk_end(const struct recwalk *w);

#endif
