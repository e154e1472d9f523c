/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Reading the record at the position: from the read-ahead when it has it,
 * else from disk (straight into the caller's buffer when the block is stored
 * raw), every payload checked against its CRC; and the raw record stream a
 * copy reads.
 */
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "backend/cart_crypt.h"
#include "backend/compress.h"
#include "backend/internal.h"
#include "common/crc32c.h"
#include "common/vtl_error.h"

int record_payload_decode(const struct rec_header *h, const unsigned char *stored, unsigned char *dst,
			  size_t dst_len)
{
	if (crc32c(0, stored, h->stored_len) != h->payload_crc)
		return VTL_E_MEDIUM;
	if (!(h->flags & REC_FLAG_LZ4)) {
		memcpy(dst, stored, dst_len < h->length ? dst_len : h->length);
		return VTL_OK;
	}
	if (dst_len < h->length)
		return VTL_E_INVAL;
	if (lz4_record_decompress(stored, h->stored_len, dst, h->length))
		return VTL_E_MEDIUM;
	return record_block_check(h, dst);
}

int record_block_check(const struct rec_header *h, const unsigned char *plain)
{
	/* A raw block's payload CRC is its block CRC (format.c checks they agree): checked already. */
	if (!(h->flags & REC_FLAG_BLOCK_CRC) || !(h->flags & REC_FLAG_LZ4))
		return VTL_OK;
	return crc32c(0, plain, h->length) == h->block_crc ? VTL_OK : VTL_E_MEDIUM;
}

void record_block_crc(const struct rec_header *h, struct vtl_read_result *r)
{
	/* An encrypted record keeps none (its payload CRC is of the ciphertext): the drive computes it. */
	r->has_block_crc = !(h->flags & REC_FLAG_ENCRYPTED) && (!(h->flags & REC_FLAG_LZ4) || (h->flags & REC_FLAG_BLOCK_CRC));
	r->block_crc = !r->has_block_crc ? 0 : (h->flags & REC_FLAG_LZ4) ? h->block_crc : h->payload_crc;
}

/* Finds and checks the header of the record of object pos: VTL_E_MEDIUM when it is not there. */
static int cursor_header(struct vtl_cart *c, int *fd, struct rec_header *h)
{
	int rc = cursor_find(c);
	if (rc)
		return rc == VTL_E_CORRUPT ? VTL_E_MEDIUM : rc;
	*fd = seg_fd(c, c->cur.seg);
	if (*fd < 0)
		return VTL_E_IO;
	unsigned char hb[REC_HEADER_LEN];
	rc = read_full(*fd, hb, sizeof hb, c->cur.off);
	if (rc == VTL_E_CORRUPT || (!rc && (rec_header_decode(hb, h) || h->object != c->cur.pos ||
					     (h->type != REC_DATA && h->type != REC_FILEMARK))))
		return VTL_E_MEDIUM;
	return rc;
}

/* Reads the record at the cursor, which must be object pos. */
static int read_direct(struct vtl_cart *c, void *buf, size_t buflen, struct vtl_read_result *r,
		       uint64_t *rec_len)
{
	int fd;
	struct rec_header h;
	int rc = cursor_header(c, &fd, &h);
	size_t si = rc == VTL_E_MEDIUM ? cart_seg_of(c, c->cur.pos) : 0;
	if (rc == VTL_E_MEDIUM && c->tape.segs[si].sealed && !c->tape.segs[si].mem_off && seg_rebuild(c, si) == VTL_OK) {
		/* The footer index pointed at the wrong place; the records themselves are fine. */
		c->cur.valid = false;
		rc = cursor_header(c, &fd, &h);
	}
	if (rc)
		return rc;
	*rec_len = REC_HEADER_LEN + (uint64_t)h.stored_len;
	r->object = c->cur.pos;
	if (h.type == REC_FILEMARK) {
		r->type = VTL_OBJ_FILEMARK;
		return VTL_OK;
	}
	r->type = VTL_OBJ_DATA;
	r->length = h.length;
	r->copied = (uint32_t)(buflen < h.length ? buflen : h.length);
	record_block_crc(&h, r);
	uint64_t poff = c->cur.off + REC_HEADER_LEN;
	bool whole = buflen >= h.length;
	if (h.flags & REC_FLAG_ENCRYPTED) {
		if ((rc = scratch_need(&c->scratch.stored, &c->scratch.stored_cap, h.stored_len)))
			return rc;
		rc = read_full(fd, c->scratch.stored, h.stored_len, poff);
		if (rc)
			return rc == VTL_E_CORRUPT ? VTL_E_MEDIUM : rc;
		if (crc32c(0, c->scratch.stored, h.stored_len) != h.payload_crc)
			return VTL_E_MEDIUM;
		return crypt_open(c, &h, c->scratch.stored, buf, buflen);
	}
	if ((rc = crypt_plain_check(c)))
		return rc;
	if (!(h.flags & REC_FLAG_LZ4) && whole) {
		/* The common case: straight into the caller's buffer, checked there. */
		rc = read_full(fd, buf, h.stored_len, poff);
		if (rc)
			return rc == VTL_E_CORRUPT ? VTL_E_MEDIUM : rc;
		return crc32c(0, buf, h.stored_len) == h.payload_crc ? VTL_OK : VTL_E_MEDIUM;
	}
	if ((rc = scratch_need(&c->scratch.stored, &c->scratch.stored_cap, h.stored_len)))
		return rc;
	rc = read_full(fd, c->scratch.stored, h.stored_len, poff);
	if (rc)
		return rc == VTL_E_CORRUPT ? VTL_E_MEDIUM : rc;
	if (!(h.flags & REC_FLAG_LZ4) || whole)
		return record_payload_decode(&h, c->scratch.stored, buf, buflen);
	if ((rc = scratch_need(&c->scratch.plain, &c->scratch.plain_cap, h.length)))
		return rc;
	rc = record_payload_decode(&h, c->scratch.stored, c->scratch.plain, h.length);
	if (!rc)
		memcpy(buf, c->scratch.plain, r->copied);
	return rc;
}

/* vtl_cart_read, lending what the read-ahead holds when loan is non-NULL (vtl_cart_read_lend). */
static int cart_read(struct vtl_cart *c, void *buf, size_t buflen, struct vtl_read_result *r, const void **data,
		     struct vtl_loan **loan)
{
	memset(r, 0, sizeof *r);
	r->object = c->cur.pos;
	if (c->cur.pos >= c->tape.eod && !follow_until(c, c->cur.pos)) {
		r->type = VTL_OBJ_EOD;
		return VTL_OK;
	}
	bool sequential = c->cur.seq_run > 0 && c->cur.seq_next == c->cur.pos;
	c->cur.seq_run = sequential ? c->cur.seq_run + 1 : 1;
	if (ra_active(c->ra)) {
		int served = ra_read(c->ra, c->cur.pos, buf, buflen, r, data, loan);
		if (served) {
			c->st.readahead_hits++;
			c->cur.valid = false;
			c->cur.pos++;
			c->cur.seq_next = c->cur.pos;
			if (r->type == VTL_OBJ_DATA) {
				c->st.read_bytes += r->copied;
			}
			return VTL_OK;
		}
	}
	uint64_t rec_len = 0;
	int rc = read_direct(c, buf, buflen, r, &rec_len);
	if (rc) {
		r->object = c->cur.pos;
		c->cur.seq_run = 0;
		ra_reset(c->ra);
		return rc;
	}
	c->st.readahead_misses += ra_active(c->ra);
	if (r->type == VTL_OBJ_DATA) {
		c->st.read_bytes += r->copied;
		c->st.read_stored += rec_len - REC_HEADER_LEN;
	}
	c->cur.pos++;
	cursor_advance(c, rec_len);
	c->cur.seq_next = c->cur.pos;
	/* Two reads in a row are a stream: start reading ahead of it. */
	if (c->cur.seq_run >= 2 && !ra_active(c->ra) && c->cur.pos < c->tape.eod && !c->dmg.n)
		ra_start(c->ra, c->cur.pos);
	return VTL_OK;
}

int vtl_cart_read(struct vtl_cart *c, void *buf, size_t buflen, struct vtl_read_result *r)
{
	return cart_read(c, buf, buflen, r, NULL, NULL);
}

int vtl_cart_read_lend(struct vtl_cart *c, void *buf, size_t buflen, struct vtl_read_result *r, const void **data,
		       struct vtl_loan **loan)
{
	*loan = NULL;
	*data = NULL;
	return cart_read(c, buf, buflen, r, data, loan);
}

int vtl_cart_peek_crypt(struct vtl_cart *c, struct vtl_block_crypt *out)
{
	memset(out, 0, sizeof *out);
	out->object = c->cur.pos;
	if (c->cur.pos >= c->tape.eod)
		return VTL_OK; /* end of data: not a logical block */
	int fd;
	struct rec_header h;
	int rc = cursor_header(c, &fd, &h);
	if (rc || h.type != REC_DATA)
		return rc;
	out->is_data = true;
	out->compressed = h.flags & REC_FLAG_LZ4;
	if (!(h.flags & REC_FLAG_ENCRYPTED))
		return VTL_OK;
	out->encrypted = true;
	/* Only the head and the KAD: the block itself stays on disk. */
	unsigned char head[REC_CRYPT_MAX];
	size_t n = h.stored_len < sizeof head ? h.stored_len : sizeof head;
	uint8_t kcv[REC_CRYPT_KCV_LEN], mine[REC_CRYPT_KCV_LEN];
	if ((rc = read_full(fd, head, n, c->cur.off + REC_HEADER_LEN)))
		return rc == VTL_E_CORRUPT ? VTL_E_MEDIUM : rc;
	if ((rc = crypt_payload_kad(head, h.stored_len, &out->kad, kcv)))
		return rc;
	if (c->crypt && c->crypt->dec) {
		crypt_key_check(c->crypt->dec, mine);
		out->key_matches = memcmp(kcv, mine, sizeof kcv) == 0;
	}
	return VTL_OK;
}

uint64_t vtl_cart_stream_size(const struct vtl_cart *c)
{
	uint64_t sum = 0;
	for (size_t i = 0; i < c->tape.nseg; i++)
		sum += c->tape.segs[i].data_end - SEG_HEADER_LEN;
	return sum;
}

int vtl_cart_stream_read(struct vtl_cart *c, uint64_t off, void *buf, size_t len)
{
	if (c->dmg.n)
		return VTL_E_MEDIUM; /* a copy of a damaged tape would not hold every record */
	size_t si = 0;
	uint64_t base = 0;
	/* The segment holding off: segments are few (a tape of 18 TB in 256 MiB segments has 70,000 at most). */
	while (si < c->tape.nseg && off >= base + (c->tape.segs[si].data_end - SEG_HEADER_LEN)) {
		base += c->tape.segs[si].data_end - SEG_HEADER_LEN;
		si++;
	}
	unsigned char *p = buf;
	while (len) {
		if (si >= c->tape.nseg)
			return VTL_E_INVAL;
		const struct seg *s = &c->tape.segs[si];
		uint64_t in = off - base, avail = s->data_end - SEG_HEADER_LEN - in;
		size_t take = len < avail ? len : (size_t)avail;
		char path[PATH_MAX];
		if (pool_seg_path(c->pool, c->barcode, s->seq, path, sizeof path))
			return VTL_E_INVAL;
		int rc = read_path_range(c->pool, path, p, take, SEG_HEADER_LEN + in);
		if (rc)
			return rc;
		p += take;
		off += take;
		len -= take;
		base += s->data_end - SEG_HEADER_LEN;
		si++;
	}
	return VTL_OK;
}
