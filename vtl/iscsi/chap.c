/* SPDX-License-Identifier: Apache-2.0 */
#include "vtl/iscsi/chap.h"

#include <errno.h>
#include <string.h>
#include <sys/random.h>

#include "common/vtl_error.h"

#define B64_PAD '='
#define B64_BITS 6
#define B64_GROUP 4   /* characters per 3 bytes */

void chap_response(uint8_t id, const char *secret, size_t secret_len, const uint8_t *challenge, size_t clen,
		   uint8_t out[CHAP_RESPONSE_LEN])
{
	struct md5_ctx c;
	md5_init(&c);
	md5_update(&c, &id, 1);
	md5_update(&c, secret, secret_len);
	md5_update(&c, challenge, clen);
	md5_final(&c, out);
}

int chap_random(uint8_t *buf, size_t n)
{
	while (n) {
		ssize_t got = getrandom(buf, n, 0);
		if (got < 0) {
			if (errno == EINTR)
				continue;
			return VTL_E_IO;
		}
		buf += got;
		n -= (size_t)got;
	}
	return 0;
}

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static int b64_digit(char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

static int decode_hex(const char *s, uint8_t *out, size_t cap, size_t *len)
{
	size_t n = strlen(s);
	/* An odd count means a leading zero nibble was left out (RFC 7143 6.1 allows it). */
	size_t bytes = (n + 1) / 2;
	if (n == 0 || bytes > cap)
		return -1;
	size_t o = 0;
	if (n % 2) {
		int d = hex_digit(*s++);
		if (d < 0)
			return -1;
		out[o++] = (uint8_t)d;
	}
	for (; *s; s += 2) {
		int hi = hex_digit(s[0]), lo = hex_digit(s[1]);
		if (hi < 0 || lo < 0)
			return -1;
		out[o++] = (uint8_t)(hi << 4 | lo);
	}
	*len = o;
	return 0;
}

static int decode_b64(const char *s, uint8_t *out, size_t cap, size_t *len)
{
	size_t n = strlen(s);
	if (n == 0 || n % B64_GROUP)
		return -1;
	size_t o = 0;
	uint32_t acc = 0;
	unsigned bits = 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i] == B64_PAD) {
			/* Padding only at the end, at most two. */
			if (i < n - 2 || (i == n - 2 && s[n - 1] != B64_PAD))
				return -1;
			continue;
		}
		int d = b64_digit(s[i]);
		if (d < 0)
			return -1;
		acc = acc << B64_BITS | (uint32_t)d;
		bits += B64_BITS;
		if (bits >= 8) {
			bits -= 8;
			if (o == cap)
				return -1;
			out[o++] = (uint8_t)(acc >> bits);
		}
	}
	if (o == 0)
		return -1;
	*len = o;
	return 0;
}

int chap_decode(const char *s, uint8_t *out, size_t cap, size_t *len)
{
	if (s[0] != '0')
		return -1;
	if (s[1] == 'x' || s[1] == 'X')
		return decode_hex(s + 2, out, cap, len);
	if (s[1] == 'b' || s[1] == 'B')
		return decode_b64(s + 2, out, cap, len);
	return -1;
}

size_t chap_encode_hex(const uint8_t *b, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";
	size_t o = 0;
	out[o++] = '0';
	out[o++] = 'x';
	for (size_t i = 0; i < n; i++) {
		out[o++] = digits[b[i] >> 4];
		out[o++] = digits[b[i] & 0xF];
	}
	out[o] = 0;
	return o;
}
