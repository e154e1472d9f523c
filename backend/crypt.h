/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Encryption at rest of the data blocks a drive writes (docs/format.md,
 * "Encrypted record"): AES-256-GCM over the block as stored (after LZ4), with
 * a fresh 96-bit IV per block and the block's object number and its
 * key-associated data (KAD) as additional authenticated data.
 *
 * A key lives only in memory: in a page of its own, locked (mlock, never
 * swapped), left out of core dumps (MADV_DONTDUMP) and zeroed when freed.
 * The backend never writes a key: a record carries a 4-byte key check value
 * (a SHA-256 of a label and the key), so a reader can tell "another key"
 * from "tampered with", and nothing that helps recover the key.
 */
#ifndef VTL_BACKEND_CRYPT_H
#define VTL_BACKEND_CRYPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/vtl_error.h"

#define VTL_KEY_LEN 32   /* AES-256 */
#define VTL_UKAD_MAX 32  /* unauthenticated KAD bytes a record may carry (as IBM LTO drives report) */
#define VTL_AKAD_MAX 12  /* authenticated KAD bytes (as IBM LTO drives report) */

struct vtl_key;

/* The key-associated data stored with each block: U-KAD in clear, A-KAD authenticated. */
struct vtl_kad {
	uint8_t ukad_len, akad_len;
	uint8_t ukad[VTL_UKAD_MAX];
	uint8_t akad[VTL_AKAD_MAX];
};

/*
 * What a cartridge does with blocks now (vtl_cart_set_crypt): the caller owns
 * it and keeps it alive and unchanged while the cartridge uses it.
 */
struct vtl_crypt {
	struct vtl_key *enc;  /* non-NULL: every data block written is encrypted with it */
	struct vtl_kad kad;   /* stored with each block encrypted */
	struct vtl_key *dec;  /* non-NULL: encrypted blocks read are decrypted with it */
	bool plain_ok;        /* plaintext blocks may be read (decryption disabled or MIXED); else VTL_E_PLAIN */
};

/* How a stored data block is protected, as vtl_cart_peek_crypt finds it. */
struct vtl_block_crypt {
	bool is_data;         /* the object at the position is a data block (not a filemark or EOD) */
	bool encrypted;
	bool key_matches;     /* encrypted with the key of the crypt in force for reads */
	bool compressed;
	struct vtl_kad kad;   /* its KAD (encrypted blocks) */
	uint64_t object;
};

/*
 * A new key of len bytes (VTL_KEY_LEN) in locked memory with a fresh random
 * IV prefix; VTL_E_INVAL for another length, VTL_E_NOMEM, or VTL_E_IO when
 * the page cannot be locked or no random bytes are to be had.
 */
VTL_MUST_CHECK int vtl_key_new(const uint8_t *key, size_t len, struct vtl_key **out);

/* Zeroes and frees k (NULL: nothing). */
void vtl_key_free(struct vtl_key *k);

/* Whether a and b hold the same key bytes (both NULL: true). */
bool vtl_key_same(const struct vtl_key *a, const struct vtl_key *b);

#endif
