/* SPDX-License-Identifier: Apache-2.0 */
/*
 * MD5 (RFC 1321), for CHAP (RFC 1994, iSCSI CHAP_A=5) and nothing that
 * needs collision resistance.
 */
#ifndef VTL_COMMON_MD5_H
#define VTL_COMMON_MD5_H

#include <stddef.h>
#include <stdint.h>

#define MD5_DIGEST_LEN 16
#define MD5_BLOCK_LEN 64

struct md5_ctx {
	uint32_t state[4];
	uint64_t bytes;                 /* message length so far */
	uint8_t block[MD5_BLOCK_LEN];   /* bytes waiting for a whole block */
};

/* Starts a digest. */
void md5_init(struct md5_ctx *c);

/* Adds len bytes at p. */
void md5_update(struct md5_ctx *c, const void *p, size_t len);

/* Finishes the digest into out; c must be initialized again before reuse. */
void md5_final(struct md5_ctx *c, uint8_t out[MD5_DIGEST_LEN]);

/* The digest of len bytes at p, in one call. */
void md5(const void *p, size_t len, uint8_t out[MD5_DIGEST_LEN]);

#endif
