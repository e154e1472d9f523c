/* SPDX-License-Identifier: Apache-2.0 */
/* MD5 against RFC 1321 A.5, the CHAP response against MD5s computed elsewhere (Python hashlib), the encodings. */
#include <stdio.h>
#include <string.h>

#include "common/grow.h"
#include "common/md5.h"
#include "tests/unit/testlib.h"
#include "vtl/iscsi/chap.h"

static void hex(const uint8_t *b, size_t n, char *out)
{
	for (size_t i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", b[i]);
}

static void md5_rfc1321_suite(void **state)
{
	(void)state;
	static const struct {
		const char *in, *digest;
	} v[] = {
		{"", "d41d8cd98f00b204e9800998ecf8427e"},
		{"a", "0cc175b9c0f1b6a831c399e269772661"},
		{"abc", "900150983cd24fb0d6963f7d28e17f72"},
		{"message digest", "f96b697d7cb7938d525a2f31aaf161d0"},
		{"abcdefghijklmnopqrstuvwxyz", "c3fcd3d76192e4007dfb496cca67e13b"},
		{"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789", "d174ab98d277d9f5a5611c2c9f419d9f"},
		{"12345678901234567890123456789012345678901234567890123456789012345678901234567890",
		 "57edf4a22be3c955ac49da2e2107b67a"},
	};
	for (size_t i = 0; i < VTL_ARRAY_SIZE(v); i++) {
		uint8_t d[MD5_DIGEST_LEN];
		char h[2 * MD5_DIGEST_LEN + 1];
		md5(v[i].in, strlen(v[i].in), d);
		hex(d, sizeof d, h);
		assert_string_equal(h, v[i].digest);
		/* The same, fed one byte at a time (every block boundary case). */
		struct md5_ctx c;
		md5_init(&c);
		for (const char *p = v[i].in; *p; p++)
			md5_update(&c, p, 1);
		md5_final(&c, d);
		hex(d, sizeof d, h);
		assert_string_equal(h, v[i].digest);
	}
}

static void chap_known_answers(void **state)
{
	(void)state;
	uint8_t c[16], r[CHAP_RESPONSE_LEN];
	char h[2 * CHAP_RESPONSE_LEN + 1];
	for (int i = 0; i < 16; i++)
		c[i] = (uint8_t)(0x10 + i);
	chap_response(1, "initiator-secret", 16, c, sizeof c, r);
	hex(r, sizeof r, h);
	assert_string_equal(h, "d111bc1c9885277496a0d2b87cb8fa9d");
	memset(c, 0xA5, sizeof c);
	chap_response(7, "target-secret-1", 15, c, sizeof c, r);
	hex(r, sizeof r, h);
	assert_string_equal(h, "dfb80b931d7cfd7400334fbaaf38d62a");
}

static void encodings(void **state)
{
	(void)state;
	uint8_t want[16], got[CHAP_BINARY_MAX];
	size_t n;
	for (int i = 0; i < 16; i++)
		want[i] = (uint8_t)(0x10 + i);
	assert_int_equal(chap_decode("0x101112131415161718191A1b1c1d1e1f", got, sizeof got, &n), 0);
	assert_int_equal(n, 16);
	assert_memory_equal(got, want, 16);
	assert_int_equal(chap_decode("0bEBESExQVFhcYGRobHB0eHw==", got, sizeof got, &n), 0);
	assert_int_equal(n, 16);
	assert_memory_equal(got, want, 16);
	assert_int_equal(chap_decode("0XABC", got, sizeof got, &n), 0); /* odd: a leading zero nibble */
	assert_int_equal(n, 2);
	assert_int_equal(got[0], 0x0A);
	assert_int_equal(got[1], 0xBC);
	assert_int_equal(chap_decode("0x", got, sizeof got, &n), -1);
	assert_int_equal(chap_decode("0x12G4", got, sizeof got, &n), -1);
	assert_int_equal(chap_decode("1234", got, sizeof got, &n), -1);
	assert_int_equal(chap_decode("0bEBE", got, sizeof got, &n), -1);
	assert_int_equal(chap_decode("0bE=BE", got, sizeof got, &n), -1);
	assert_int_equal(chap_decode("0x1234", got, 1, &n), -1);
	char out[CHAP_HEX_LEN(16)];
	assert_int_equal(chap_encode_hex(want, 16, out), 34);
	assert_string_equal(out, "0x101112131415161718191a1b1c1d1e1f");
	uint8_t r1[32] = {0}, r2[32] = {0};
	assert_int_equal(chap_random(r1, sizeof r1), 0);
	assert_int_equal(chap_random(r2, sizeof r2), 0);
	assert_memory_not_equal(r1, r2, sizeof r1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(md5_rfc1321_suite),
		cmocka_unit_test(chap_known_answers),
		cmocka_unit_test(encodings),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
