/* SPDX-License-Identifier: Apache-2.0 */
/*
 * iSCSI PDUs (RFC 7143 section 11): the basic header segment's fields, in
 * one place, and a reader that assembles PDUs from a byte stream, checking
 * digests and sizes, so that the rest of the target never parses bytes.
 */
#ifndef VTL_ISCSI_PDU_H
#define VTL_ISCSI_PDU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ISCSI_BHS_LEN 48
#define ISCSI_DIGEST_LEN 4
#define ISCSI_MAX_AHS (255 * 4)   /* TotalAHSLength is one byte of 4-byte words */
#define ISCSI_PAD 4               /* data segments are padded to a multiple of 4 bytes */

/* Opcodes (RFC 7143 11.1.1): initiator then target. */
enum iscsi_opcode {
	ISCSI_OP_NOP_OUT = 0x00,
	ISCSI_OP_SCSI_CMD = 0x01,
	ISCSI_OP_TMF_REQ = 0x02,
	ISCSI_OP_LOGIN_REQ = 0x03,
	ISCSI_OP_TEXT_REQ = 0x04,
	ISCSI_OP_DATA_OUT = 0x05,
	ISCSI_OP_LOGOUT_REQ = 0x06,
	ISCSI_OP_SNACK = 0x10,
	ISCSI_OP_NOP_IN = 0x20,
	ISCSI_OP_SCSI_RSP = 0x21,
	ISCSI_OP_TMF_RSP = 0x22,
	ISCSI_OP_LOGIN_RSP = 0x23,
	ISCSI_OP_TEXT_RSP = 0x24,
	ISCSI_OP_DATA_IN = 0x25,
	ISCSI_OP_LOGOUT_RSP = 0x26,
	ISCSI_OP_R2T = 0x31,
	ISCSI_OP_ASYNC = 0x32,
	ISCSI_OP_REJECT = 0x3F,
};

/* BHS bytes common to every PDU (RFC 7143 11.2.1). */
#define BHS_OPCODE 0              /* bit 6: immediate delivery, bits 5..0: opcode */
#define BHS_IMMEDIATE 0x40
#define BHS_OPCODE_MASK 0x3F
#define BHS_FLAGS 1               /* bit 7: final */
#define BHS_FINAL 0x80
#define BHS_AHS_LEN 4             /* in 4-byte words */
#define BHS_DATA_LEN 5            /* 3 bytes */
#define BHS_LUN 8                 /* 8 bytes */
#define BHS_ITT 16                /* initiator task tag */
#define ITT_RESERVED 0xFFFFFFFFu  /* the reserved tag (RFC 7143 11.2.1.8) */

/* A whole PDU as received or to be sent: header, optional AHS, data segment (unpadded length). */
struct iscsi_pdu {
	uint8_t bhs[ISCSI_BHS_LEN];
	uint8_t ahs[ISCSI_MAX_AHS];
	uint32_t ahs_len;
	uint8_t *data;     /* owned by whoever filled it (the reader's buffer, or the sender's) */
	uint32_t data_len;
};

static inline uint32_t pdu_get(const uint8_t *p, unsigned n)
{
	uint32_t v = 0;
	for (unsigned i = 0; i < n; i++)
		v = v << 8 | p[i];
	return v;
}

static inline void pdu_put(uint8_t *p, uint32_t v, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * (n - 1 - i)));
}

static inline enum iscsi_opcode pdu_opcode(const struct iscsi_pdu *p)
{
	return (enum iscsi_opcode)(p->bhs[BHS_OPCODE] & BHS_OPCODE_MASK);
}

static inline uint32_t pdu_itt(const struct iscsi_pdu *p)
{
	return pdu_get(p->bhs + BHS_ITT, 4);
}

/* The DataSegmentLength field of a header. */
static inline uint32_t pdu_dlen_field(const uint8_t *bhs)
{
	return pdu_get(bhs + BHS_DATA_LEN, 3);
}

/* Bytes a data segment of len takes on the wire with its padding. */
static inline uint32_t pdu_padded(uint32_t len)
{
	return (len + ISCSI_PAD - 1) & ~(uint32_t)(ISCSI_PAD - 1);
}

/* CRC32C (RFC 7143 11.1.3 / RFC 3385) continued over len more bytes; start with 0. */
uint32_t pdu_crc(uint32_t crc, const void *buf, size_t len);

/* The 4 digest bytes that follow the data they cover on the wire (least significant byte first). */
void pdu_digest_bytes(uint32_t crc, uint8_t out[ISCSI_DIGEST_LEN]);

/* Why the reader refused the stream; the connection then ends (with a Reject where RFC 7143 says). */
enum pdu_error {
	PDU_OK = 0,
	PDU_NEED_MORE,          /* not a whole PDU yet */
	PDU_BAD_HEADER_DIGEST,  /* the header cannot be trusted: the connection must end */
	PDU_BAD_DATA_DIGEST,    /* the header is good: Reject with reason "data digest error" */
	PDU_TOO_LONG,           /* DataSegmentLength above what was negotiated */
	PDU_NO_MEMORY,
};

/* Assembles PDUs from a stream. */
struct pdu_reader {
	bool header_digest, data_digest; /* as negotiated (the login phase has none) */
	uint32_t max_data;               /* MaxRecvDataSegmentLength this side declared */
	/*
	 * Where a data segment may be read instead of into the reader's buffer:
	 * asked once its header is whole and checked, with the BHS and the data
	 * length; returns at least len bytes that stay the caller's (the PDU's
	 * data then points there), or NULL for the reader's own buffer. The
	 * padding and data digest still go to the reader's buffer. NULL: never asked.
	 */
	uint8_t *(*dest)(void *arg, const uint8_t *bhs, uint32_t len);
	void *dest_arg;
	/* Internal state. */
	uint8_t hdr[ISCSI_BHS_LEN + ISCSI_MAX_AHS + ISCSI_DIGEST_LEN];
	size_t hdr_have, hdr_need;
	uint8_t *buf;                    /* data segment, padding and digest */
	size_t buf_cap, buf_have, buf_need;
	uint8_t *ext;                    /* this PDU's data segment goes here (from dest), its padding on in buf */
	size_t ext_len;
	bool in_data;
};

/* Sets up r for a new connection (no digests, max_data bytes of data per PDU). */
void pdu_reader_init(struct pdu_reader *r, uint32_t max_data);

/* Frees r's buffer. */
void pdu_reader_free(struct pdu_reader *r);

/*
 * Takes up to len bytes from buf (*used tells how many) and, once a whole
 * PDU has arrived, fills *pdu (its data points into r's buffer, valid until
 * the next call) and returns PDU_OK; PDU_NEED_MORE when everything was used
 * without completing one; an error otherwise. buf may be what
 * pdu_reader_room returned, with len at most its room: nothing is copied.
 */
enum pdu_error pdu_reader_feed(struct pdu_reader *r, const uint8_t *buf, size_t len, size_t *used,
			       struct iscsi_pdu *pdu);

/*
 * Mid-way through a data segment: where in r's buffer its next bytes go, and
 * in *room how many are still wanted, so that a caller can read them from
 * the socket in place; NULL (and 0) while r waits for a header.
 */
uint8_t *pdu_reader_room(struct pdu_reader *r, size_t *room);

/* How many bytes of the next header r still wants (0 mid-way through a data segment). */
size_t pdu_reader_header_left(const struct pdu_reader *r);

#define ISCSI_HDR_MAX (ISCSI_BHS_LEN + ISCSI_MAX_AHS + ISCSI_DIGEST_LEN)
#define ISCSI_TRAILER_MAX (ISCSI_PAD - 1 + ISCSI_DIGEST_LEN)

/*
 * Writes p's header for sending into out: the BHS with TotalAHSLength and
 * DataSegmentLength set from p->ahs_len and p->data_len, the AHS, and the
 * header digest when asked. Returns its length.
 */
size_t pdu_header(struct iscsi_pdu *p, bool header_digest, uint8_t out[ISCSI_HDR_MAX]);

/*
 * The bytes that follow a data segment of len bytes whose CRC32C is crc
 * (pdu_crc over the data): zero padding to 4 bytes and, when asked, the data
 * digest (computed over data and padding). Returns their length.
 */
size_t pdu_trailer(uint32_t crc, uint32_t len, bool data_digest, uint8_t out[ISCSI_TRAILER_MAX]);

#endif
