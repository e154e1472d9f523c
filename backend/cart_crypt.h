/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The backend's side of encrypted records (cart_crypt.c), for cart_write.c,
 * cart_read.c and readahead.c.
 */
#ifndef VTL_BACKEND_CART_CRYPT_H
#define VTL_BACKEND_CART_CRYPT_H

#include <stddef.h>
#include <stdint.h>

#include "backend/crypt.h"
#include "backend/format.h"

struct vtl_cart;

/*
 * Encrypts the n bytes at in (the block as it would be stored) for object
 * obj with the write key of c, into c's crypt scratch; *out and *out_len are
 * the new payload (REC_FLAG_ENCRYPTED layout). VTL_E_NOMEM or VTL_E_IO.
 */
int crypt_seal(struct vtl_cart *c, uint64_t obj, const unsigned char *in, size_t n, const unsigned char **out,
	       uint32_t *out_len);

/*
 * Decodes an encrypted record's stored payload (its CRC already checked)
 * into dst (dst_len bytes, which may be fewer than h->length): VTL_OK;
 * VTL_E_ENCRYPTED without a read key; VTL_E_KEY when it was written with
 * another key; VTL_E_AUTH when its tag fails; VTL_E_MEDIUM when malformed.
 */
int crypt_open(struct vtl_cart *c, const struct rec_header *h, const unsigned char *stored, unsigned char *dst,
	       size_t dst_len);

/* VTL_OK when a plaintext data block may be read under c's crypt, else VTL_E_PLAIN. */
int crypt_plain_check(const struct vtl_cart *c);

/* Parses the KAD of an encrypted payload of len bytes: VTL_OK, or VTL_E_MEDIUM when malformed. */
int crypt_payload_kad(const unsigned char *p, size_t len, struct vtl_kad *kad, uint8_t kcv[REC_CRYPT_KCV_LEN]);

/* The key check value of k. */
void crypt_key_check(const struct vtl_key *k, uint8_t kcv[REC_CRYPT_KCV_LEN]);

#endif
