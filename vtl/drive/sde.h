/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The SET DATA ENCRYPTION page (SSC-4 8.5.3.2, SECURITY PROTOCOL OUT,
 * protocol 20h, page 0010h) as a pure parse: bytes from the host in, the
 * drive's request or the field to blame out. No state, no allocation; what
 * the drive does with a valid request is ssc_crypt.c's business.
 */
#ifndef VTL_DRIVE_SDE_H
#define VTL_DRIVE_SDE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backend/crypt.h"

#define SDE_PAGE 0x0010
#define SDE_FIXED_LEN 20      /* bytes 0..19: header to KEY LENGTH */
#define SDE_MAX_LEN 1024      /* a parameter list longer than any valid page (20 + 32 + two KADs) is refused */
#define SDE_ALGORITHM_INDEX 1 /* the drive's one algorithm: AES-256-GCM (page 0010h descriptor) */
#define SDE_KEY_FORMAT_PLAIN 0x00
#define SDE_FLAGS_BYTE 5      /* CEEM 7-6, RDMC 5-4, SDK 3, CKOD 2, CKORP 1, CKORL 0 */
#define SDE_CKORP_BIT 1
#define SDE_CKORL_BIT 0

/* SCOPE (SSC-4 table "SCOPE field values"). */
enum sde_scope { SDE_SCOPE_PUBLIC = 0, SDE_SCOPE_LOCAL = 1, SDE_SCOPE_ALL = 2 };
/* ENCRYPTION MODE and DECRYPTION MODE (SSC-4 tables "ENCRYPTION MODE", "DECRYPTION MODE"). */
enum sde_enc { SDE_ENC_DISABLE = 0, SDE_ENC_EXTERNAL = 1, SDE_ENC_ENCRYPT = 2 };
enum sde_dec { SDE_DEC_DISABLE = 0, SDE_DEC_RAW = 1, SDE_DEC_DECRYPT = 2, SDE_DEC_MIXED = 3 };
/* KAD descriptor types (SSC-4 table "Key descriptor type"). */
enum sde_kad_type { SDE_KAD_UKAD = 0, SDE_KAD_AKAD = 1, SDE_KAD_NONCE = 2, SDE_KAD_MKAD = 3 };

struct sde {
	uint8_t scope;       /* enum sde_scope */
	bool lock;
	uint8_t rdmc;        /* raw decryption mode control: 0 default, 2 unprotect, 3 protect */
	bool ckod;           /* clear key on demount */
	bool ckorp, ckorl;   /* clear key on reservation preempt / loss (whether the drive offers them is ssc_crypt.c's) */
	uint8_t ceem;        /* check external encryption mode: 00b or 01b (no external mode to check) */
	uint8_t enc_mode, dec_mode;
	uint8_t algorithm;
	uint8_t kad_format;
	uint8_t key[VTL_KEY_LEN];
	bool has_key;
	struct vtl_kad kad;
};

enum sde_result {
	SDE_OK = 0,
	SDE_BAD_FIELD = 1,   /* INVALID FIELD IN PARAMETER LIST at *byte, *bit (-1: the whole byte) */
	SDE_BAD_LENGTH = 2,  /* PARAMETER LIST LENGTH ERROR: the page does not fit or is cut short */
};

/*
 * Parses the len bytes of a SECURITY PROTOCOL OUT parameter list: SDE_OK
 * with *out filled; else the refusal, with *byte and *bit naming the field for
 * SDE_BAD_FIELD. Only what this drive offers passes: ENCRYPT or DISABLE,
 * DECRYPT, MIXED or DISABLE, algorithm index 1, a plaintext 32-byte key,
 * a U-KAD of at most VTL_UKAD_MAX bytes and an A-KAD of at most VTL_AKAD_MAX.
 * CKORP and CKORL are returned as set; the drive refuses them on models
 * that do not offer them.
 */
enum sde_result sde_parse(const uint8_t *p, size_t len, struct sde *out, uint16_t *byte, int *bit);

#endif
