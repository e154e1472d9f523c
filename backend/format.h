/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The on-disk format of cartridge segment files (docs/format.md describes it
 * for humans). Everything is little-endian; every structure carries a CRC32C.
 *
 *   segment header (128 bytes)
 *   record*            32-byte header + payload: data block, filemark
 *   [EOD record]       only in the last segment of a cleanly closed cartridge
 *   [FMARKS record]    footer of a sealed segment: filemark positions
 *   [INDEX record]     footer: u32 offset of every object in the segment
 *   [trailer]          48 bytes at the very end: where the footer is
 */
#ifndef VTL_BACKEND_FORMAT_H
#define VTL_BACKEND_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/vtl_error.h"

#define SEG_MAGIC "VTLSEG\r\n"
#define SEG_VERSION 1
#define SEG_HEADER_LEN 128
#define SEG_BARCODE_LEN 32

#define REC_MAGIC 0x5456u /* "VT" */
#define REC_HEADER_LEN 32

#define TRAILER_MAGIC "VTLEND\r\n"
#define TRAILER_LEN 48
#define TRAILER_FLAG_EOD 1u /* an EOD record precedes the footer: the tape was closed cleanly */
#define TRAILER_FLAG_DAMAGED 2u /* INDEX entries of 0 name objects whose records are damaged */

/*
 * The sync mark: bytes 80..95 of the segment header, outside the header's
 * CRC (which is taken with them zero), rewritten in place after a sync: the
 * offset below which every record was durable (u64), 4 reserved bytes, and
 * a CRC32C of bytes 80..91. 0 or a bad CRC: no mark.
 */
#define SEG_SYNCMARK_OFF 80
#define SEG_SYNCMARK_LEN 16

enum rec_type {
	REC_DATA = 1,
	REC_FILEMARK = 2,
	REC_EOD = 3,
	REC_FMARKS = 4,
	REC_INDEX = 5,
};

#define REC_FLAG_LZ4 1u
#define REC_FLAG_ENCRYPTED 2u /* payload is an encrypted block (layout below; docs/format.md "Encrypted record") */

/*
 * The payload of a REC_FLAG_ENCRYPTED record: a 20-byte head (version,
 * U-KAD length, A-KAD length, reserved 0, key check value, IV), the U-KAD,
 * the A-KAD, the ciphertext of the block as it would otherwise be stored
 * (LZ4 when REC_FLAG_LZ4 is set too), and the GCM tag. The record's CRC32C
 * covers all of it, so a copy or a repair needs no key.
 */
#define REC_CRYPT_VERSION 1
#define REC_CRYPT_V_OFF 0
#define REC_CRYPT_UKAD_LEN_OFF 1
#define REC_CRYPT_AKAD_LEN_OFF 2
#define REC_CRYPT_KCV_OFF 4
#define REC_CRYPT_KCV_LEN 4
#define REC_CRYPT_IV_OFF 8
#define REC_CRYPT_IV_LEN 12
#define REC_CRYPT_HEAD 20
#define REC_CRYPT_TAG_LEN 16
#define REC_CRYPT_KAD_MAX (32 + 12) /* U-KAD and A-KAD maxima (backend/crypt.h) */
#define REC_CRYPT_MIN (REC_CRYPT_HEAD + REC_CRYPT_TAG_LEN)
#define REC_CRYPT_MAX (REC_CRYPT_MIN + REC_CRYPT_KAD_MAX)

/*
 * Bytes 24..27 hold the CRC32C of the host's block as it was before
 * compression (data records only): the logical block protection the drive
 * returns end to end. Never on an encrypted record.
 */
#define REC_FLAG_BLOCK_CRC 4u
#define REC_FLAGS_KNOWN (REC_FLAG_LZ4 | REC_FLAG_ENCRYPTED | REC_FLAG_BLOCK_CRC)

struct seg_header {
	uint32_t seq;
	uint64_t first_object;
	uint64_t first_filemark; /* filemarks on the tape before this segment */
	uint64_t created_ns;
	char barcode[SEG_BARCODE_LEN + 1];
	uint64_t synced_end; /* the sync mark; 0 when there is none */
};

struct rec_header {
	uint8_t type;
	uint8_t flags;
	uint32_t stored_len; /* payload bytes on disk */
	uint64_t object;     /* logical object number (FMARKS/INDEX/EOD: next object) */
	uint32_t length;     /* payload bytes after decompression */
	uint32_t payload_crc;
	uint32_t block_crc;  /* with REC_FLAG_BLOCK_CRC: CRC32C of the uncompressed block; else 0 */
};

struct seg_trailer {
	uint64_t data_end;  /* end of the last object record */
	uint64_t fm_off;    /* offset of the FMARKS record */
	uint64_t index_off; /* offset of the INDEX record */
	uint32_t n_objects;
	uint32_t n_filemarks;
	uint32_t flags;
};

/* Encodes h into out[SEG_HEADER_LEN]. */
void seg_header_encode(const struct seg_header *h, unsigned char *out);
/* Decodes and checks magic, version and CRC; returns 0 or -1. */
VTL_MUST_CHECK int seg_header_decode(const unsigned char *in, struct seg_header *h);

/* Encodes the sync mark for synced_end into out[SEG_SYNCMARK_LEN]. */
void seg_syncmark_encode(uint64_t synced_end, unsigned char *out);

/* Encodes h into out[REC_HEADER_LEN] (the payload CRC must already be set). */
void rec_header_encode(const struct rec_header *h, unsigned char *out);
/* Decodes and checks magic, header CRC and field sanity; returns 0 or -1. */
VTL_MUST_CHECK int rec_header_decode(const unsigned char *in, struct rec_header *h);

/* Encodes t into out[TRAILER_LEN]. */
void seg_trailer_encode(const struct seg_trailer *t, unsigned char *out);
/* Decodes and checks magic and CRC; returns 0 or -1. */
VTL_MUST_CHECK int seg_trailer_decode(const unsigned char *in, struct seg_trailer *t);

static inline void put_le16(unsigned char *p, uint16_t v) { p[0] = (unsigned char)v; p[1] = (unsigned char)(v >> 8); }
static inline void put_le32(unsigned char *p, uint32_t v) { for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i)); }
static inline void put_le64(unsigned char *p, uint64_t v) { for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> (8 * i)); }
static inline uint16_t get_le16(const unsigned char *p) { return (uint16_t)(p[0] | (p[1] << 8)); }
static inline uint32_t get_le32(const unsigned char *p) { uint32_t v = 0; for (int i = 3; i >= 0; i--) v = (v << 8) | p[i]; return v; }
static inline uint64_t get_le64(const unsigned char *p) { uint64_t v = 0; for (int i = 7; i >= 0; i--) v = (v << 8) | p[i]; return v; }

#endif
