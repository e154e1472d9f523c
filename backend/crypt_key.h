/* SPDX-License-Identifier: Apache-2.0 */
/* The inside of a key (backend/crypt.c), for the backend's record code only (cart_crypt.c). */
#ifndef VTL_BACKEND_CRYPT_KEY_H
#define VTL_BACKEND_CRYPT_KEY_H

#include <stddef.h>
#include <stdint.h>

#include "backend/crypt.h"

struct vtl_key {
	uint8_t bytes[VTL_KEY_LEN];
	uint8_t kcv[4];     /* key check value stored in each record (REC_CRYPT_KCV_LEN) */
	uint8_t prefix[8];  /* random IV prefix of this key object */
	uint32_t counter;   /* IVs used under the prefix */
	size_t map_len;     /* the locked mapping the key lives in */
};

/* The next IV under k (prefix || counter, big-endian): VTL_OK, or VTL_E_IO when a new prefix cannot be drawn. */
int crypt_next_iv(struct vtl_key *k, uint8_t iv[12]);

#endif
