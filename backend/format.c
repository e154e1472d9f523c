/* SPDX-License-Identifier: Apache-2.0 */
#include "backend/format.h"

#include <string.h>

#include "backend/cartridge.h"
#include "common/crc32c.h"

/* Segment header field offsets (docs/format.md, "Segment header"). */
enum {
	SH_MAGIC = 0, SH_VERSION = 8, SH_LEN = 10, SH_SEQ = 12, SH_FIRST_OBJ = 16,
	SH_FIRST_FM = 24, SH_CREATED = 32, SH_BARCODE = 48, SH_SYNC = SEG_SYNCMARK_OFF, SH_CRC = 124,
};
/* Sync mark field offsets, from SEG_SYNCMARK_OFF. */
enum { SM_END = 0, SM_CRC = 12 };

/* The header's CRC: bytes 0..123 with the sync mark (rewritten in place) taken as zero. */
static uint32_t seg_header_crc(const unsigned char *in)
{
	unsigned char tmp[SH_CRC];
	memcpy(tmp, in, sizeof tmp);
	memset(tmp + SH_SYNC, 0, SEG_SYNCMARK_LEN);
	return crc32c(0, tmp, sizeof tmp);
}

void seg_syncmark_encode(uint64_t synced_end, unsigned char *out)
{
	memset(out, 0, SEG_SYNCMARK_LEN);
	put_le64(out + SM_END, synced_end);
	put_le32(out + SM_CRC, crc32c(0, out, SM_CRC));
}
/* Record header field offsets (docs/format.md, "Record"). */
enum {
	RH_MAGIC = 0, RH_TYPE = 2, RH_FLAGS = 3, RH_STORED = 4, RH_OBJECT = 8,
	RH_LENGTH = 16, RH_PCRC = 20, RH_BCRC = 24, RH_CRC = 28,
};
/* Trailer field offsets (docs/format.md, "Trailer"). */
enum {
	TR_MAGIC = 0, TR_DATA_END = 8, TR_FM_OFF = 16, TR_INDEX_OFF = 24, TR_NOBJ = 32,
	TR_NFM = 36, TR_FLAGS = 40, TR_CRC = 44,
};

void seg_header_encode(const struct seg_header *h, unsigned char *out)
{
	memset(out, 0, SEG_HEADER_LEN);
	memcpy(out + SH_MAGIC, SEG_MAGIC, 8);
	put_le16(out + SH_VERSION, SEG_VERSION);
	put_le16(out + SH_LEN, SEG_HEADER_LEN);
	put_le32(out + SH_SEQ, h->seq);
	put_le64(out + SH_FIRST_OBJ, h->first_object);
	put_le64(out + SH_FIRST_FM, h->first_filemark);
	put_le64(out + SH_CREATED, h->created_ns);
	memcpy(out + SH_BARCODE, h->barcode, strnlen(h->barcode, SEG_BARCODE_LEN));
	if (h->synced_end)
		seg_syncmark_encode(h->synced_end, out + SH_SYNC);
	put_le32(out + SH_CRC, seg_header_crc(out));
}

int seg_header_decode(const unsigned char *in, struct seg_header *h)
{
	if (memcmp(in + SH_MAGIC, SEG_MAGIC, 8) != 0 || get_le16(in + SH_VERSION) != SEG_VERSION ||
	    get_le16(in + SH_LEN) != SEG_HEADER_LEN || get_le32(in + SH_CRC) != seg_header_crc(in))
		return -1;
	const unsigned char *m = in + SH_SYNC;
	h->synced_end = get_le32(m + SM_CRC) == crc32c(0, m, SM_CRC) ? get_le64(m + SM_END) : 0;
	h->seq = get_le32(in + SH_SEQ);
	h->first_object = get_le64(in + SH_FIRST_OBJ);
	h->first_filemark = get_le64(in + SH_FIRST_FM);
	h->created_ns = get_le64(in + SH_CREATED);
	memcpy(h->barcode, in + SH_BARCODE, SEG_BARCODE_LEN);
	h->barcode[SEG_BARCODE_LEN] = '\0';
	return 0;
}

void rec_header_encode(const struct rec_header *h, unsigned char *out)
{
	memset(out, 0, REC_HEADER_LEN);
	put_le16(out + RH_MAGIC, REC_MAGIC);
	out[RH_TYPE] = h->type;
	out[RH_FLAGS] = h->flags;
	put_le32(out + RH_STORED, h->stored_len);
	put_le64(out + RH_OBJECT, h->object);
	put_le32(out + RH_LENGTH, h->length);
	put_le32(out + RH_PCRC, h->payload_crc);
	if (h->flags & REC_FLAG_BLOCK_CRC)
		put_le32(out + RH_BCRC, h->block_crc);
	put_le32(out + RH_CRC, crc32c(0, out, RH_CRC));
}

int rec_header_decode(const unsigned char *in, struct rec_header *h)
{
	if (get_le16(in + RH_MAGIC) != REC_MAGIC || get_le32(in + RH_CRC) != crc32c(0, in, RH_CRC))
		return -1;
	h->type = in[RH_TYPE];
	h->flags = in[RH_FLAGS];
	h->stored_len = get_le32(in + RH_STORED);
	h->object = get_le64(in + RH_OBJECT);
	h->length = get_le32(in + RH_LENGTH);
	h->payload_crc = get_le32(in + RH_PCRC);
	h->block_crc = (h->flags & REC_FLAG_BLOCK_CRC) ? get_le32(in + RH_BCRC) : 0;
	if (h->type < REC_DATA || h->type > REC_INDEX || (h->flags & ~REC_FLAGS_KNOWN))
		return -1;
	/* Only a data block is encrypted or has a block CRC, never both (a CRC of the plaintext would
	 * tell something of it; the GCM tag protects the block); stored raw, its payload is the block,
	 * so both CRCs agree. */
	if ((h->type != REC_DATA && (h->flags & (REC_FLAG_ENCRYPTED | REC_FLAG_BLOCK_CRC))) ||
	    ((h->flags & REC_FLAG_ENCRYPTED) && (h->flags & REC_FLAG_BLOCK_CRC)) ||
	    ((h->flags & REC_FLAG_BLOCK_CRC) && !(h->flags & REC_FLAG_LZ4) && h->block_crc != h->payload_crc))
		return -1;
	if (h->type == REC_DATA) {
		if (h->length == 0 || h->length > VTL_BLOCK_MAX || h->stored_len == 0)
			return -1;
		/* An encrypted block adds its head, KAD and tag to what it would store (at most REC_CRYPT_MAX). */
		uint64_t inner = h->stored_len;
		if (h->flags & REC_FLAG_ENCRYPTED) {
			if (inner <= REC_CRYPT_MIN || inner > (uint64_t)h->length + REC_CRYPT_MAX)
				return -1;
		} else if ((h->flags & REC_FLAG_LZ4) ? inner >= h->length : inner != h->length) {
			/* A compressed record is stored only when it shrank; otherwise raw. */
			return -1;
		}
	} else if (h->type == REC_FILEMARK || h->type == REC_EOD) {
		if (h->stored_len || h->length || h->flags)
			return -1;
	}
	return 0;
}

void seg_trailer_encode(const struct seg_trailer *t, unsigned char *out)
{
	memset(out, 0, TRAILER_LEN);
	memcpy(out + TR_MAGIC, TRAILER_MAGIC, 8);
	put_le64(out + TR_DATA_END, t->data_end);
	put_le64(out + TR_FM_OFF, t->fm_off);
	put_le64(out + TR_INDEX_OFF, t->index_off);
	put_le32(out + TR_NOBJ, t->n_objects);
	put_le32(out + TR_NFM, t->n_filemarks);
	put_le32(out + TR_FLAGS, t->flags);
	put_le32(out + TR_CRC, crc32c(0, out, TR_CRC));
}

int seg_trailer_decode(const unsigned char *in, struct seg_trailer *t)
{
	if (memcmp(in + TR_MAGIC, TRAILER_MAGIC, 8) != 0 || get_le32(in + TR_CRC) != crc32c(0, in, TR_CRC))
		return -1;
	t->data_end = get_le64(in + TR_DATA_END);
	t->fm_off = get_le64(in + TR_FM_OFF);
	t->index_off = get_le64(in + TR_INDEX_OFF);
	t->n_objects = get_le32(in + TR_NOBJ);
	t->n_filemarks = get_le32(in + TR_NFM);
	t->flags = get_le32(in + TR_FLAGS);
	if (t->data_end < SEG_HEADER_LEN || t->fm_off < t->data_end || t->index_off <= t->fm_off ||
	    t->n_filemarks > t->n_objects || (t->flags & ~(TRAILER_FLAG_EOD | TRAILER_FLAG_DAMAGED)))
		return -1;
	return 0;
}
