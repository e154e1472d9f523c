/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Keys in memory that never leaves it (backend/crypt.h): one anonymous page
 * per key, locked so that it is never swapped, marked MADV_DONTDUMP so that a
 * core dump leaves it out, zeroed with explicit_bzero before it is unmapped.
 *
 * The IV of each block is the key's 8-byte random prefix and a 4-byte
 * counter (crypt_next_iv). Under one key object the pair never repeats: the
 * counter only goes up, and when it wraps a new random prefix is drawn. A
 * key set again (a new SET DATA ENCRYPTION with the same bytes, another
 * drive, a restart) gets a new random prefix, so two uses of one key share
 * IVs only if two 64-bit random prefixes collide (for n key objects about
 * n^2 / 2^65): overwriting or rewriting a position never reuses an IV.
 */
#include "backend/crypt.h"
#include "backend/crypt_key.h"

#include <openssl/evp.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <unistd.h>

/* The label hashed with the key for its check value: never the key's own cipher output. */
static const char KCV_LABEL[] = "vtl key check value v1";

static int random_bytes(void *p, size_t n)
{
	uint8_t *b = p;
	while (n) {
		ssize_t r = getrandom(b, n, 0);
		if (r < 0)
			return VTL_E_IO;
		b += r;
		n -= (size_t)r;
	}
	return VTL_OK;
}

static size_t key_page(void)
{
	long ps = sysconf(_SC_PAGESIZE);
	size_t want = sizeof(struct vtl_key);
	size_t page = ps > 0 ? (size_t)ps : 4096;
	return (want + page - 1) / page * page;
}

int vtl_key_new(const uint8_t *key, size_t len, struct vtl_key **out)
{
	*out = NULL;
	if (!key || len != VTL_KEY_LEN)
		return VTL_E_INVAL;
	size_t sz = key_page();
	void *mem = mmap(NULL, sz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		return VTL_E_NOMEM;
	/* Locked and left out of core dumps before a key byte is in it. */
	if (mlock(mem, sz) != 0 || madvise(mem, sz, MADV_DONTDUMP) != 0) {
		munmap(mem, sz);
		return VTL_E_IO;
	}
	struct vtl_key *k = mem;
	k->map_len = sz;
	memcpy(k->bytes, key, VTL_KEY_LEN);
	k->counter = 0;
	if (random_bytes(k->prefix, sizeof k->prefix) != VTL_OK) {
		vtl_key_free(k);
		return VTL_E_IO;
	}
	/* Check value: SHA-256(label || key), first bytes (it tells keys apart, and says nothing of AES_K). */
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;
	EVP_MD_CTX *m = EVP_MD_CTX_new();
	int ok = m && EVP_DigestInit_ex(m, EVP_sha256(), NULL) == 1 &&
		 EVP_DigestUpdate(m, KCV_LABEL, sizeof KCV_LABEL - 1) == 1 &&
		 EVP_DigestUpdate(m, k->bytes, VTL_KEY_LEN) == 1 && EVP_DigestFinal_ex(m, md, &mdlen) == 1;
	EVP_MD_CTX_free(m);
	if (!ok || mdlen < sizeof k->kcv) {
		explicit_bzero(md, sizeof md);
		vtl_key_free(k);
		return VTL_E_IO;
	}
	memcpy(k->kcv, md, sizeof k->kcv);
	explicit_bzero(md, sizeof md);
	*out = k;
	return VTL_OK;
}

void vtl_key_free(struct vtl_key *k)
{
	if (!k)
		return;
	size_t sz = k->map_len;
	explicit_bzero(k, sz);
	munlock(k, sz);
	munmap(k, sz);
}

bool vtl_key_same(const struct vtl_key *a, const struct vtl_key *b)
{
	if (!a || !b)
		return a == b;
	/* Constant time: no early exit on the first different byte. */
	uint8_t diff = 0;
	for (size_t i = 0; i < VTL_KEY_LEN; i++)
		diff |= a->bytes[i] ^ b->bytes[i];
	return diff == 0;
}

int crypt_next_iv(struct vtl_key *k, uint8_t iv[12])
{
	if (k->counter == UINT32_MAX) {
		/* The counter would wrap: a new random prefix starts a new IV space. */
		if (random_bytes(k->prefix, sizeof k->prefix) != VTL_OK)
			return VTL_E_IO;
		k->counter = 0;
	}
	memcpy(iv, k->prefix, sizeof k->prefix);
	uint32_t n = k->counter++;
	for (int i = 0; i < 4; i++)
		iv[8 + i] = (uint8_t)(n >> (24 - 8 * i));
	return VTL_OK;
}
