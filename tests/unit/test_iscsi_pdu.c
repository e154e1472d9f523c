/* SPDX-License-Identifier: Apache-2.0 */
/* The PDU layer: CRC32C digests against RFC 3720 B.4, the stream reader under any fragmentation, the writers. */
#include <stdlib.h>
#include <string.h>

#include "tests/unit/testlib.h"
#include "vtl/iscsi/pdu.h"

/* The 48-byte READ(10) SCSI Command PDU of RFC 3720 B.4. */
static const uint8_t read10_pdu[ISCSI_BHS_LEN] = {
	0x01, 0xc0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x18,
	0x28, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
};

static void digest_of(const uint8_t *buf, size_t len, uint8_t out[ISCSI_DIGEST_LEN])
{
	pdu_digest_bytes(pdu_crc(0, buf, len), out);
}

static void crc_rfc3720_examples(void **state)
{
	(void)state;
	uint8_t b[32], d[ISCSI_DIGEST_LEN];
	memset(b, 0, sizeof b);
	digest_of(b, sizeof b, d);
	assert_memory_equal(d, ((uint8_t[]){0xaa, 0x36, 0x91, 0x8a}), 4);
	memset(b, 0xff, sizeof b);
	digest_of(b, sizeof b, d);
	assert_memory_equal(d, ((uint8_t[]){0x43, 0xab, 0xa8, 0x62}), 4);
	for (int i = 0; i < 32; i++)
		b[i] = (uint8_t)i;
	digest_of(b, sizeof b, d);
	assert_memory_equal(d, ((uint8_t[]){0x4e, 0x79, 0xdd, 0x46}), 4);
	for (int i = 0; i < 32; i++)
		b[i] = (uint8_t)(31 - i);
	digest_of(b, sizeof b, d);
	assert_memory_equal(d, ((uint8_t[]){0x5c, 0xdb, 0x3f, 0x11}), 4);
	digest_of(read10_pdu, sizeof read10_pdu, d);
	assert_memory_equal(d, ((uint8_t[]){0x56, 0x3a, 0x96, 0xd9}), 4);
	/* Continuing a CRC over pieces gives the CRC of the whole. */
	assert_int_equal(pdu_crc(pdu_crc(0, read10_pdu, 7), read10_pdu + 7, 41), pdu_crc(0, read10_pdu, 48));
}

/* Serializes a PDU with the writers: header, data, trailer. Returns the length. */
static size_t wire(struct iscsi_pdu *p, bool hd, bool dd, uint8_t *out)
{
	size_t n = pdu_header(p, hd, out);
	if (p->data_len)
		memcpy(out + n, p->data, p->data_len);
	uint32_t crc = pdu_crc(0, p->data, p->data_len);
	n += p->data_len;
	n += pdu_trailer(crc, p->data_len, dd, out + n);
	return n;
}

static void writers_lay_out_bytes(void **state)
{
	(void)state;
	struct iscsi_pdu p;
	memset(&p, 0, sizeof p);
	memcpy(p.bhs, read10_pdu, ISCSI_BHS_LEN);
	uint8_t data[5] = {1, 2, 3, 4, 5};
	p.data = data;
	p.data_len = 5;
	p.ahs_len = 8;
	memset(p.ahs, 0xAB, 8);
	uint8_t out[ISCSI_HDR_MAX + 64];
	size_t n = wire(&p, true, true, out);
	/* BHS + AHS 8 + HD 4 + data 5 + pad 3 + DD 4 */
	assert_int_equal(n, 48 + 8 + 4 + 5 + 3 + 4);
	assert_int_equal(out[BHS_AHS_LEN], 2);
	assert_int_equal(pdu_dlen_field(out), 5);
	uint8_t d[4];
	digest_of(out, 56, d);
	assert_memory_equal(out + 56, d, 4);
	assert_memory_equal(out + 60, data, 5);
	assert_memory_equal(out + 65, ((uint8_t[]){0, 0, 0}), 3);
	digest_of(out + 60, 8, d); /* the data digest covers the padding */
	assert_memory_equal(out + 68, d, 4);
	/* No data: no padding, no data digest. */
	uint8_t tr[ISCSI_TRAILER_MAX];
	assert_int_equal(pdu_trailer(0, 0, true, tr), 0);
	assert_int_equal(pdu_trailer(pdu_crc(0, data, 4), 4, false, tr), 0);
}

/* A reader's dest for the tests: every data segment into one buffer of the caller's, whose use is counted. */
static uint8_t dest_buf[1024];
static unsigned dest_asks;
static uint8_t *test_dest(void *arg, const uint8_t *bhs, uint32_t len)
{
	(void)arg;
	(void)bhs;
	assert_true(len <= sizeof dest_buf);
	dest_asks++;
	memset(dest_buf, 0xEE, sizeof dest_buf);
	return dest_buf;
}

/* Feeds stream in pieces of step bytes (0: random sizes) and checks each PDU against want (to_dest: data into dest_buf). */
static void feed_all_to(const uint8_t *stream, size_t len, size_t step, bool hd, bool dd, struct iscsi_pdu *want,
			unsigned nwant, bool to_dest)
{
	struct pdu_reader r;
	pdu_reader_init(&r, 1024);
	r.header_digest = hd;
	r.data_digest = dd;
	if (to_dest)
		r.dest = test_dest;
	uint64_t seed = 42;
	unsigned got = 0;
	size_t at = 0;
	while (at < len) {
		size_t n = step ? step : 1 + splitmix64(&seed) % 97;
		if (n > len - at)
			n = len - at;
		size_t off = 0;
		while (off < n) {
			struct iscsi_pdu p;
			size_t used;
			enum pdu_error e = pdu_reader_feed(&r, stream + at + off, n - off, &used, &p);
			off += used;
			if (e == PDU_NEED_MORE) {
				assert_int_equal(off, n);
				break;
			}
			assert_int_equal(e, PDU_OK);
			assert_true(got < nwant);
			assert_memory_equal(p.bhs + 8, want[got].bhs + 8, ISCSI_BHS_LEN - 8);
			assert_int_equal(p.bhs[0], want[got].bhs[0]);
			assert_int_equal(p.ahs_len, want[got].ahs_len);
			assert_memory_equal(p.ahs, want[got].ahs, p.ahs_len);
			assert_int_equal(p.data_len, want[got].data_len);
			if (p.data_len)
				assert_memory_equal(p.data, want[got].data, p.data_len);
			if (p.data_len && to_dest)
				assert_ptr_equal(p.data, dest_buf); /* received where dest said, not copied there */
			got++;
		}
		at += n;
	}
	assert_int_equal(got, nwant);
	pdu_reader_free(&r);
}

static void feed_all(const uint8_t *stream, size_t len, size_t step, bool hd, bool dd, struct iscsi_pdu *want,
		     unsigned nwant)
{
	feed_all_to(stream, len, step, hd, dd, want, nwant, false);
	dest_asks = 0;
	feed_all_to(stream, len, step, hd, dd, want, nwant, true);
	unsigned with_data = 0;
	for (unsigned i = 0; i < nwant; i++)
		with_data += want[i].data_len > 0;
	assert_int_equal(dest_asks, with_data); /* asked once per data segment, never for a PDU without one */
}

static void reader_any_fragmentation(void **state)
{
	(void)state;
	static uint8_t d0[1000], d1[3];
	for (size_t i = 0; i < sizeof d0; i++)
		d0[i] = (uint8_t)(i * 7);
	memcpy(d1, "abc", 3);
	struct iscsi_pdu p[3];
	memset(p, 0, sizeof p);
	memcpy(p[0].bhs, read10_pdu, ISCSI_BHS_LEN);
	p[0].data = d0, p[0].data_len = sizeof d0;
	p[1].bhs[0] = ISCSI_OP_NOP_OUT, p[1].bhs[16] = 9;
	p[1].ahs_len = 12, memset(p[1].ahs, 0x5A, 12);
	p[2].bhs[0] = ISCSI_OP_TEXT_REQ, p[2].data = d1, p[2].data_len = 3;
	for (int digests = 0; digests < 4; digests++) {
		bool hd = digests & 1, dd = digests & 2;
		static uint8_t stream[4096];
		size_t len = 0;
		for (int i = 0; i < 3; i++)
			len += wire(&p[i], hd, dd, stream + len);
		feed_all(stream, len, len, hd, dd, p, 3);
		feed_all(stream, len, 1, hd, dd, p, 3);
		feed_all(stream, len, 0, hd, dd, p, 3);
	}
}

/* A data segment read straight into the reader's room comes out whole, and its digest is still checked. */
static void reader_data_in_place(void **state)
{
	(void)state;
	static uint8_t data[3001], s[4096];
	for (size_t i = 0; i < sizeof data; i++)
		data[i] = (uint8_t)(i * 13 + 1);
	struct iscsi_pdu p;
	memset(&p, 0, sizeof p);
	p.bhs[0] = ISCSI_OP_DATA_OUT;
	p.data = data, p.data_len = sizeof data;
	for (int bad = 0; bad < 2; bad++) {
		size_t len = wire(&p, true, true, s);
		if (bad)
			s[len - 1] ^= 0x01; /* the data digest */
		struct pdu_reader r;
		pdu_reader_init(&r, 4096);
		r.header_digest = r.data_digest = true;
		struct iscsi_pdu out;
		size_t used, room;
		assert_null(pdu_reader_room(&r, &room));
		assert_int_equal(room, 0);
		/* The BHS, then its digest and 100 bytes of data through a buffer, the rest in place in two reads. */
		assert_int_equal(pdu_reader_header_left(&r), ISCSI_BHS_LEN);
		assert_int_equal(pdu_reader_feed(&r, s, ISCSI_BHS_LEN, &used, &out), PDU_NEED_MORE);
		assert_int_equal(pdu_reader_header_left(&r), ISCSI_DIGEST_LEN);
		size_t at = ISCSI_BHS_LEN + ISCSI_DIGEST_LEN + 100;
		assert_int_equal(pdu_reader_feed(&r, s + ISCSI_BHS_LEN, at - ISCSI_BHS_LEN, &used, &out), PDU_NEED_MORE);
		assert_int_equal(used, at - ISCSI_BHS_LEN);
		assert_int_equal(pdu_reader_header_left(&r), 0);
		uint8_t *dst = pdu_reader_room(&r, &room);
		assert_non_null(dst);
		assert_int_equal(room, len - at);
		memcpy(dst, s + at, 1000);
		assert_int_equal(pdu_reader_feed(&r, dst, 1000, &used, &out), PDU_NEED_MORE);
		at += 1000;
		dst = pdu_reader_room(&r, &room);
		assert_int_equal(room, len - at);
		memcpy(dst, s + at, room);
		assert_int_equal(pdu_reader_feed(&r, dst, room, &used, &out), bad ? PDU_BAD_DATA_DIGEST : PDU_OK);
		assert_int_equal(used, room);
		assert_int_equal(out.data_len, sizeof data);
		if (!bad)
			assert_memory_equal(out.data, data, sizeof data);
		assert_null(pdu_reader_room(&r, &room)); /* a whole PDU: the next bytes are a header */
		assert_int_equal(pdu_reader_header_left(&r), ISCSI_BHS_LEN);
		pdu_reader_free(&r);
	}
}

/* Read in place into a dest: the data's room is dest's, then padding and digest the reader's; the digest spans both. */
static void reader_data_in_dest(void **state)
{
	(void)state;
	static uint8_t data[1001], s[2048];
	for (size_t i = 0; i < sizeof data; i++)
		data[i] = (uint8_t)(i * 11 + 3);
	struct iscsi_pdu p;
	memset(&p, 0, sizeof p);
	p.bhs[0] = ISCSI_OP_SCSI_CMD;
	p.data = data, p.data_len = sizeof data; /* 3 bytes of padding */
	for (int bad = 0; bad < 3; bad++) {
		size_t len = wire(&p, false, true, s);
		if (bad == 1)
			s[len - 1] ^= 0x01; /* the digest */
		if (bad == 2)
			s[ISCSI_BHS_LEN + 7] ^= 0x10; /* a data byte */
		struct pdu_reader r;
		pdu_reader_init(&r, 2048);
		r.data_digest = true;
		r.dest = test_dest;
		struct iscsi_pdu out;
		size_t used, room;
		assert_int_equal(pdu_reader_feed(&r, s, ISCSI_BHS_LEN, &used, &out), PDU_NEED_MORE);
		uint8_t *dst = pdu_reader_room(&r, &room);
		assert_ptr_equal(dst, dest_buf);
		assert_int_equal(room, sizeof data);
		memcpy(dst, s + ISCSI_BHS_LEN, room);
		assert_int_equal(pdu_reader_feed(&r, dst, room, &used, &out), PDU_NEED_MORE);
		size_t at = ISCSI_BHS_LEN + sizeof data;
		dst = pdu_reader_room(&r, &room);
		assert_true(dst != NULL && (dst < dest_buf || dst >= dest_buf + sizeof dest_buf));
		assert_int_equal(room, 3 + ISCSI_DIGEST_LEN);
		memcpy(dst, s + at, room);
		assert_int_equal(pdu_reader_feed(&r, dst, room, &used, &out), bad ? PDU_BAD_DATA_DIGEST : PDU_OK);
		assert_ptr_equal(out.data, dest_buf);
		assert_int_equal(out.data_len, sizeof data);
		if (!bad)
			assert_memory_equal(out.data, data, sizeof data);
		pdu_reader_free(&r);
	}
}

static void reader_errors(void **state)
{
	(void)state;
	uint8_t data[8] = "12345678";
	struct iscsi_pdu p;
	memset(&p, 0, sizeof p);
	p.bhs[0] = ISCSI_OP_SCSI_CMD;
	p.data = data, p.data_len = 8;
	uint8_t s[256];
	size_t len = wire(&p, true, true, s);
	struct pdu_reader r;
	struct iscsi_pdu out;
	size_t used;

	/* A header digest that does not match. */
	pdu_reader_init(&r, 1024);
	r.header_digest = r.data_digest = true;
	s[50] ^= 1;
	assert_int_equal(pdu_reader_feed(&r, s, len, &used, &out), PDU_BAD_HEADER_DIGEST);
	s[50] ^= 1;
	pdu_reader_free(&r);

	/* A data digest that does not match: the header comes out, and the next PDU reads fine. */
	pdu_reader_init(&r, 1024);
	r.header_digest = r.data_digest = true;
	uint8_t two[512];
	memcpy(two, s, len);
	memcpy(two + len, s, len);
	two[len - 1] ^= 0x80;
	assert_int_equal(pdu_reader_feed(&r, two, 2 * len, &used, &out), PDU_BAD_DATA_DIGEST);
	assert_int_equal(used, len);
	assert_int_equal(out.bhs[0], ISCSI_OP_SCSI_CMD);
	assert_int_equal(pdu_reader_feed(&r, two + len, len, &used, &out), PDU_OK);
	assert_int_equal(used, len);
	assert_memory_equal(out.data, data, 8);
	pdu_reader_free(&r);

	/* DataSegmentLength above what was declared. */
	pdu_reader_init(&r, 7);
	assert_int_equal(pdu_reader_feed(&r, s, ISCSI_BHS_LEN, &used, &out), PDU_TOO_LONG);
	assert_int_equal(out.bhs[0], ISCSI_OP_SCSI_CMD);
	pdu_reader_free(&r);
	pdu_reader_init(&r, 8); /* exactly the limit is fine */
	len = wire(&p, false, false, s);
	assert_int_equal(pdu_reader_feed(&r, s, len, &used, &out), PDU_OK);
	pdu_reader_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(crc_rfc3720_examples),
		cmocka_unit_test(writers_lay_out_bytes),
		cmocka_unit_test(reader_any_fragmentation),
		cmocka_unit_test(reader_errors),
		cmocka_unit_test(reader_data_in_place),
		cmocka_unit_test(reader_data_in_dest),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
