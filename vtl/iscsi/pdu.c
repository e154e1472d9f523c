/* SPDX-License-Identifier: Apache-2.0 */
#include "vtl/iscsi/pdu.h"

#include <stdlib.h>
#include <string.h>

#include "common/crc32c.h"

/* Bytes per TotalAHSLength unit (RFC 7143 11.2.1.2: the field counts 4-byte words). */
#define AHS_WORD 4

uint32_t pdu_crc(uint32_t crc, const void *buf, size_t len)
{
	return crc32c(crc, buf, len);
}

void pdu_digest_bytes(uint32_t crc, uint8_t out[ISCSI_DIGEST_LEN])
{
	/*
	 * RFC 7143 11.1.3 (and the examples of RFC 3720 B.4): the CRC goes on
	 * the wire least significant byte first, unlike every other field.
	 */
	for (unsigned i = 0; i < ISCSI_DIGEST_LEN; i++)
		out[i] = (uint8_t)(crc >> (8 * i));
}

void pdu_reader_init(struct pdu_reader *r, uint32_t max_data)
{
	memset(r, 0, sizeof *r);
	r->max_data = max_data;
	r->hdr_need = ISCSI_BHS_LEN;
}

void pdu_reader_free(struct pdu_reader *r)
{
	free(r->buf);
	r->buf = NULL;
	r->buf_cap = 0;
}

/* Ready for the next PDU's header (the buffer is kept for reuse). */
static void reader_restart(struct pdu_reader *r)
{
	r->hdr_have = 0;
	r->hdr_need = ISCSI_BHS_LEN;
	r->buf_have = 0;
	r->buf_need = 0;
	r->ext = NULL;
	r->ext_len = 0;
	r->in_data = false;
}

/* Fills pdu from the assembled header and data; its data points into r->buf. */
static void reader_emit(struct pdu_reader *r, struct iscsi_pdu *pdu)
{
	memcpy(pdu->bhs, r->hdr, ISCSI_BHS_LEN);
	pdu->ahs_len = (uint32_t)r->hdr[BHS_AHS_LEN] * AHS_WORD;
	memcpy(pdu->ahs, r->hdr + ISCSI_BHS_LEN, pdu->ahs_len);
	pdu->data_len = pdu_dlen_field(r->hdr);
	pdu->data = !pdu->data_len ? NULL : r->ext ? r->ext : r->buf;
}

/* Where byte buf_have of the data phase goes, and how many bytes from there are contiguous. */
static uint8_t *reader_at(struct pdu_reader *r, size_t *span)
{
	if (r->buf_have < r->ext_len) {
		*span = r->ext_len - r->buf_have;
		return r->ext + r->buf_have;
	}
	*span = r->buf_need - r->buf_have;
	return r->buf + (r->buf_have - r->ext_len);
}

static bool digest_matches(uint32_t crc, const uint8_t *wire)
{
	uint8_t want[ISCSI_DIGEST_LEN];
	pdu_digest_bytes(crc, want);
	return memcmp(want, wire, ISCSI_DIGEST_LEN) == 0;
}

/* The header is complete: check its digest and size, and size the data phase. */
static enum pdu_error reader_header_done(struct pdu_reader *r, struct iscsi_pdu *pdu)
{
	size_t hlen = ISCSI_BHS_LEN + (size_t)r->hdr[BHS_AHS_LEN] * AHS_WORD;
	if (r->header_digest && !digest_matches(pdu_crc(0, r->hdr, hlen), r->hdr + hlen))
		return PDU_BAD_HEADER_DIGEST;
	uint32_t dlen = pdu_dlen_field(r->hdr);
	if (dlen > r->max_data) {
		/* The header is good: give it to the caller for its Reject, but no data. */
		reader_emit(r, pdu);
		pdu->data = NULL;
		pdu->data_len = 0;
		return PDU_TOO_LONG;
	}
	/* The data digest exists only when there is a data segment (RFC 7143 11.1). */
	r->buf_need = dlen ? pdu_padded(dlen) + (r->data_digest ? ISCSI_DIGEST_LEN : 0) : 0;
	r->buf_have = 0;
	r->in_data = true;
	r->ext = dlen && r->dest ? r->dest(r->dest_arg, r->hdr, dlen) : NULL;
	r->ext_len = r->ext ? dlen : 0;
	size_t own = r->buf_need - r->ext_len; /* with a destination, only padding and digest */
	if (own > r->buf_cap) {
		uint8_t *nb = realloc(r->buf, own);
		if (!nb)
			return PDU_NO_MEMORY;
		r->buf = nb;
		r->buf_cap = own;
	}
	return PDU_OK;
}

enum pdu_error pdu_reader_feed(struct pdu_reader *r, const uint8_t *buf, size_t len, size_t *used,
			       struct iscsi_pdu *pdu)
{
	size_t at = 0;
	*used = 0;
	/* A PDU was handed out by the previous call (or an error left it mid-way): start afresh. */
	if (r->in_data && r->buf_have == r->buf_need)
		reader_restart(r);
	while (!r->in_data) {
		size_t take = r->hdr_need - r->hdr_have;
		if (take > len - at)
			take = len - at;
		memcpy(r->hdr + r->hdr_have, buf + at, take);
		r->hdr_have += take;
		at += take;
		*used = at;
		if (r->hdr_have < r->hdr_need)
			return PDU_NEED_MORE;
		if (r->hdr_need == ISCSI_BHS_LEN) {
			/* The BHS tells how much more header follows: AHS, then the header digest. */
			size_t more = (size_t)r->hdr[BHS_AHS_LEN] * AHS_WORD + (r->header_digest ? ISCSI_DIGEST_LEN : 0);
			if (more) {
				r->hdr_need += more;
				continue;
			}
		}
		enum pdu_error e = reader_header_done(r, pdu);
		if (e != PDU_OK) {
			reader_restart(r);
			return e;
		}
	}
	while (r->buf_have < r->buf_need && at < len) {
		size_t take;
		uint8_t *dst = reader_at(r, &take);
		if (take > len - at)
			take = len - at;
		if (dst != buf + at) /* equal: read in place (pdu_reader_room) */
			memcpy(dst, buf + at, take);
		r->buf_have += take;
		at += take;
	}
	*used = at;
	if (r->buf_have < r->buf_need)
		return PDU_NEED_MORE;
	reader_emit(r, pdu);
	if (r->data_digest && pdu->data_len) {
		uint32_t padded = pdu_padded(pdu->data_len);
		/* The digest covers the data and its padding (RFC 7143 11.1.3), wherever the data went. */
		uint32_t crc = r->ext ? pdu_crc(pdu_crc(0, r->ext, r->ext_len), r->buf, padded - r->ext_len)
				      : pdu_crc(0, r->buf, padded);
		if (!digest_matches(crc, r->buf + (padded - r->ext_len)))
			return PDU_BAD_DATA_DIGEST;
	}
	return PDU_OK;
}

uint8_t *pdu_reader_room(struct pdu_reader *r, size_t *room)
{
	if (!r->in_data || r->buf_have >= r->buf_need) {
		*room = 0;
		return NULL;
	}
	return reader_at(r, room);
}

size_t pdu_reader_header_left(const struct pdu_reader *r)
{
	if (r->in_data)
		return r->buf_have >= r->buf_need ? ISCSI_BHS_LEN : 0; /* a PDU just ended: a header is next */
	return r->hdr_need - r->hdr_have;
}

size_t pdu_header(struct iscsi_pdu *p, bool header_digest, uint8_t out[ISCSI_HDR_MAX])
{
	uint32_t ahs = p->ahs_len > ISCSI_MAX_AHS ? ISCSI_MAX_AHS : p->ahs_len;
	ahs -= ahs % AHS_WORD; /* an AHS is whole words; a caller's odd length is a bug, not a wire format */
	p->bhs[BHS_AHS_LEN] = (uint8_t)(ahs / AHS_WORD);
	pdu_put(p->bhs + BHS_DATA_LEN, p->data_len, 3);
	memcpy(out, p->bhs, ISCSI_BHS_LEN);
	memcpy(out + ISCSI_BHS_LEN, p->ahs, ahs);
	size_t n = ISCSI_BHS_LEN + ahs;
	if (header_digest) {
		pdu_digest_bytes(pdu_crc(0, out, n), out + n);
		n += ISCSI_DIGEST_LEN;
	}
	return n;
}

size_t pdu_trailer(uint32_t crc, uint32_t len, bool data_digest, uint8_t out[ISCSI_TRAILER_MAX])
{
	size_t pad = pdu_padded(len) - len;
	memset(out, 0, pad);
	if (!data_digest || len == 0)
		return pad;
	crc = pdu_crc(crc, out, pad);
	pdu_digest_bytes(crc, out + pad);
	return pad + ISCSI_DIGEST_LEN;
}
