/* SPDX-License-Identifier: Apache-2.0 */
/*
 * CHAP for iSCSI (RFC 1994 with RFC 7143 12.1.3): the MD5 response, random
 * challenges, and the binary value encodings of RFC 7143 6.1 ("0x" hex,
 * "0b" base64) that CHAP_C and CHAP_R travel in.
 */
#ifndef VTL_ISCSI_CHAP_H
#define VTL_ISCSI_CHAP_H

#include <stddef.h>
#include <stdint.h>

#include "common/md5.h"

#define CHAP_ALG_MD5 5               /* CHAP_A value for MD5 (RFC 1994 / IANA PPP CHAP algorithms) */
#define CHAP_RESPONSE_LEN MD5_DIGEST_LEN
#define CHAP_CHALLENGE_LEN 16        /* random bytes the target sends: at least the digest size */
#define CHAP_BINARY_MAX 1024         /* longest CHAP_C a side must accept (RFC 7143 12.1.3) */
#define CHAP_ID_MAX 255              /* CHAP_I is one byte (RFC 1994 4.1) */
#define CHAP_SECRET_MAX 255          /* longest secret the configuration takes */
/* Characters of a binary value encoded as "0x" hex: prefix, two per byte, NUL. */
#define CHAP_HEX_LEN(n) (2 + 2 * (size_t)(n) + 1)

/* MD5(id || secret || challenge): the CHAP response (RFC 1994 4.1). */
void chap_response(uint8_t id, const char *secret, size_t secret_len, const uint8_t *challenge, size_t clen,
		   uint8_t out[CHAP_RESPONSE_LEN]);

/* Fills buf with n random bytes from getrandom(2): 0 or VTL_E_IO. */
int chap_random(uint8_t *buf, size_t n);

/*
 * Decodes a binary value, "0x"/"0X" hex or "0b"/"0B" base64 (RFC 7143 6.1),
 * into out (cap bytes): 0 and *len, or -1 when malformed, empty or longer than cap.
 */
int chap_decode(const char *s, uint8_t *out, size_t cap, size_t *len);

/* Writes "0x" and n bytes in hex with a NUL into out (CHAP_HEX_LEN(n) bytes); returns its length. */
size_t chap_encode_hex(const uint8_t *b, size_t n, char *out);

#endif
