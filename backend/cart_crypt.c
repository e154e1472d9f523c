/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Encrypted records (backend/format.h, REC_FLAG_ENCRYPTED): a data block is
 * compressed first (as the drive would store it), then sealed with
 * AES-256-GCM under the write key. The additional authenticated data is the
 * block's object number, the payload's head (version, KAD lengths, key check
 * value, IV) and its KAD, so a block moved to another position, replayed
 * from elsewhere, or given another KAD fails its tag. Decrypting happens on
 * the reader's own thread: the read-ahead carries encrypted records as
 * stored and never sees a key.
 */
#include "backend/cart_crypt.h"

#include <openssl/evp.h>
#include <string.h>

#include "backend/compress.h"
#include "backend/crypt_key.h"
#include "backend/internal.h"

void vtl_cart_set_crypt(struct vtl_cart *c, const struct vtl_crypt *cr)
{
	c->crypt = cr;
}

void crypt_key_check(const struct vtl_key *k, uint8_t kcv[REC_CRYPT_KCV_LEN])
{
	memcpy(kcv, k->kcv, REC_CRYPT_KCV_LEN);
}

int crypt_payload_kad(const unsigned char *p, size_t len, struct vtl_kad *kad, uint8_t kcv[REC_CRYPT_KCV_LEN])
{
	if (len < REC_CRYPT_MIN || p[REC_CRYPT_V_OFF] != REC_CRYPT_VERSION || p[3] != 0)
		return VTL_E_MEDIUM;
	size_t u = p[REC_CRYPT_UKAD_LEN_OFF], a = p[REC_CRYPT_AKAD_LEN_OFF];
	if (u > VTL_UKAD_MAX || a > VTL_AKAD_MAX || len < REC_CRYPT_MIN + u + a)
		return VTL_E_MEDIUM;
	memset(kad, 0, sizeof *kad);
	kad->ukad_len = (uint8_t)u;
	kad->akad_len = (uint8_t)a;
	memcpy(kad->ukad, p + REC_CRYPT_HEAD, u);
	memcpy(kad->akad, p + REC_CRYPT_HEAD + u, a);
	memcpy(kcv, p + REC_CRYPT_KCV_OFF, REC_CRYPT_KCV_LEN);
	return VTL_OK;
}

/* The object number as the first 8 bytes of the AAD (little-endian, as in the record header). */
static void object_aad(uint64_t obj, unsigned char out[8])
{
	put_le64(out, obj);
}

/* One AES-256-GCM pass (enc: seal, else open with tag); VTL_OK, VTL_E_AUTH when the tag fails, VTL_E_IO. */
static int gcm(const struct vtl_key *k, bool enc, const unsigned char *iv, const unsigned char *aad1, size_t aad1_len,
	       const unsigned char *aad2, size_t aad2_len, const unsigned char *in, size_t n, unsigned char *out,
	       unsigned char *tag)
{
	/*
	 * A context per block: its key schedule lives in OpenSSL's heap only for
	 * this call and EVP_CIPHER_CTX_free cleanses it.
	 */
	EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
	if (!x)
		return VTL_E_NOMEM;
	int rc = VTL_E_IO, len = 0;
	const EVP_CIPHER *cipher = EVP_aes_256_gcm();
	if ((enc ? EVP_EncryptInit_ex(x, cipher, NULL, NULL, NULL) : EVP_DecryptInit_ex(x, cipher, NULL, NULL, NULL)) != 1 ||
	    EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_GCM_SET_IVLEN, REC_CRYPT_IV_LEN, NULL) != 1 ||
	    (enc ? EVP_EncryptInit_ex(x, NULL, NULL, k->bytes, iv) : EVP_DecryptInit_ex(x, NULL, NULL, k->bytes, iv)) != 1)
		goto out;
	if ((enc ? EVP_EncryptUpdate(x, NULL, &len, aad1, (int)aad1_len)
		 : EVP_DecryptUpdate(x, NULL, &len, aad1, (int)aad1_len)) != 1 ||
	    (enc ? EVP_EncryptUpdate(x, NULL, &len, aad2, (int)aad2_len)
		 : EVP_DecryptUpdate(x, NULL, &len, aad2, (int)aad2_len)) != 1)
		goto out;
	if (n && (enc ? EVP_EncryptUpdate(x, out, &len, in, (int)n) : EVP_DecryptUpdate(x, out, &len, in, (int)n)) != 1)
		goto out;
	if (enc) {
		if (EVP_EncryptFinal_ex(x, out + n, &len) != 1 ||
		    EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_GCM_GET_TAG, REC_CRYPT_TAG_LEN, tag) != 1)
			goto out;
	} else {
		if (EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_GCM_SET_TAG, REC_CRYPT_TAG_LEN, tag) != 1)
			goto out;
		if (EVP_DecryptFinal_ex(x, out + n, &len) != 1) {
			rc = VTL_E_AUTH;
			goto out;
		}
	}
	rc = VTL_OK;
out:
	EVP_CIPHER_CTX_free(x);
	return rc;
}

int crypt_seal(struct vtl_cart *c, uint64_t obj, const unsigned char *in, size_t n, const unsigned char **out,
	       uint32_t *out_len)
{
	const struct vtl_crypt *cr = c->crypt;
	const struct vtl_kad *kad = &cr->kad;
	size_t kadn = (size_t)kad->ukad_len + kad->akad_len;
	size_t total = REC_CRYPT_MIN + kadn + n;
	if (kad->ukad_len > VTL_UKAD_MAX || kad->akad_len > VTL_AKAD_MAX || n > VTL_BLOCK_MAX)
		return VTL_E_INVAL;
	int rc = scratch_need(&c->scratch.crypt, &c->scratch.crypt_cap, total);
	if (rc)
		return rc;
	unsigned char *p = c->scratch.crypt;
	memset(p, 0, REC_CRYPT_HEAD);
	p[REC_CRYPT_V_OFF] = REC_CRYPT_VERSION;
	p[REC_CRYPT_UKAD_LEN_OFF] = kad->ukad_len;
	p[REC_CRYPT_AKAD_LEN_OFF] = kad->akad_len;
	crypt_key_check(cr->enc, p + REC_CRYPT_KCV_OFF);
	if ((rc = crypt_next_iv(cr->enc, p + REC_CRYPT_IV_OFF)))
		return rc;
	memcpy(p + REC_CRYPT_HEAD, kad->ukad, kad->ukad_len);
	memcpy(p + REC_CRYPT_HEAD + kad->ukad_len, kad->akad, kad->akad_len);
	unsigned char ob[8];
	object_aad(obj, ob);
	size_t ct = REC_CRYPT_HEAD + kadn;
	rc = gcm(cr->enc, true, p + REC_CRYPT_IV_OFF, ob, sizeof ob, p, ct, in, n, p + ct, p + ct + n);
	if (rc)
		return rc;
	*out = p;
	*out_len = (uint32_t)total;
	return VTL_OK;
}

int crypt_plain_check(const struct vtl_cart *c)
{
	return c->crypt && !c->crypt->plain_ok ? VTL_E_PLAIN : VTL_OK;
}

int crypt_open(struct vtl_cart *c, const struct rec_header *h, const unsigned char *stored, unsigned char *dst,
	       size_t dst_len)
{
	const struct vtl_crypt *cr = c->crypt;
	struct vtl_kad kad;
	uint8_t kcv[REC_CRYPT_KCV_LEN], mine[REC_CRYPT_KCV_LEN];
	int rc = crypt_payload_kad(stored, h->stored_len, &kad, kcv);
	if (rc)
		return rc;
	if (!cr || !cr->dec)
		return VTL_E_ENCRYPTED;
	crypt_key_check(cr->dec, mine);
	if (memcmp(kcv, mine, sizeof kcv) != 0)
		return VTL_E_KEY;
	size_t ct = REC_CRYPT_HEAD + (size_t)kad.ukad_len + kad.akad_len;
	size_t n = h->stored_len - ct - REC_CRYPT_TAG_LEN;
	bool lz4 = h->flags & REC_FLAG_LZ4;
	if ((!lz4 && n != h->length) || (lz4 && n >= h->length))
		return VTL_E_MEDIUM;
	/* Straight into the caller's buffer when it is the whole raw block; else through scratch. */
	bool direct = !lz4 && dst_len >= h->length;
	unsigned char *plain = dst;
	if (!direct) {
		if ((rc = scratch_need(&c->scratch.crypt, &c->scratch.crypt_cap, n + 16)))
			return rc;
		plain = c->scratch.crypt;
	}
	unsigned char ob[8], tag[REC_CRYPT_TAG_LEN];
	object_aad(h->object, ob);
	memcpy(tag, stored + ct + n, sizeof tag);
	rc = gcm(cr->dec, false, stored + REC_CRYPT_IV_OFF, ob, sizeof ob, stored, ct, stored + ct, n, plain, tag);
	if (rc) {
		if (direct)
			explicit_bzero(dst, n); /* nothing unauthenticated reaches the host */
		return rc;
	}
	if (direct)
		return VTL_OK;
	if (!lz4) {
		memcpy(dst, plain, dst_len < h->length ? dst_len : h->length);
		return VTL_OK;
	}
	if (dst_len >= h->length)
		return lz4_record_decompress(plain, n, dst, h->length) ? VTL_E_MEDIUM : VTL_OK;
	if ((rc = scratch_need(&c->scratch.plain, &c->scratch.plain_cap, h->length)))
		return rc;
	if (lz4_record_decompress(plain, n, c->scratch.plain, h->length))
		return VTL_E_MEDIUM;
	memcpy(dst, c->scratch.plain, dst_len);
	return VTL_OK;
}
