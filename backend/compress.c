/* SPDX-License-Identifier: Apache-2.0 */
#include "backend/compress.h"

#include <lz4.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "backend/compress_policy.h"
#include "backend/format.h"
#include "backend/workers.h"

#define MAX_HELPERS 8
/* A first piece that took longer than this makes the rest go to the workers. */
#define PARALLEL_MIN_NS 30000
/* In a piece's size word while gathering only: the sample said raw, no attempt was made. */
#define PIECE_SKIPPED 0x40000000u

/* One block's pieces, shared by the caller and the helper jobs; the last one out frees it. */
struct batch {
	const unsigned char *src;
	size_t len;
	unsigned char *slots; /* piece i compresses into slots + i * slot_len */
	size_t slot_len;
	unsigned npieces;
	int accel;
	uint32_t *sizes;
	atomic_uint next;
	atomic_uint refs;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	unsigned done;
	struct helper {
		struct job job; /* first: the worker hands back this pointer */
		struct batch *b;
	} helpers[MAX_HELPERS];
};

static unsigned pieces_of(size_t len)
{
	return (unsigned)((len + LZ4_PIECE - 1) / LZ4_PIECE);
}

size_t lz4_record_scratch(size_t len)
{
	unsigned n = pieces_of(len);
	return 4ull * n + (size_t)n * (size_t)LZ4_compressBound((int)LZ4_PIECE);
}

static void batch_put(struct batch *b)
{
	if (atomic_fetch_sub(&b->refs, 1) == 1) {
		pthread_mutex_destroy(&b->lock);
		pthread_cond_destroy(&b->cond);
		free(b);
	}
}

static uint32_t piece_compress(const unsigned char *src, size_t len, unsigned i, unsigned char *slot,
			       size_t slot_len, int accel)
{
	size_t off = (size_t)i * LZ4_PIECE;
	size_t plen = len - off < LZ4_PIECE ? len - off : LZ4_PIECE;
	/* A piece not much longer than a sample costs about as much to compress as to sample. */
	if (plen > 2 * CPOL_SAMPLE && !cpol_sample_pays(src + off, plen))
		return (uint32_t)plen | LZ4_PIECE_RAW | PIECE_SKIPPED;
	int n = LZ4_compress_fast((const char *)src + off, (char *)slot, (int)plen, (int)slot_len, accel);
	return (n > 0 && (size_t)n < plen) ? (uint32_t)n : (uint32_t)plen | LZ4_PIECE_RAW;
}

/* Compresses pieces until none is left, then counts them as done; returns how many it did. */
static unsigned batch_work(struct batch *b)
{
	unsigned mine = 0;
	for (;;) {
		unsigned i = atomic_fetch_add(&b->next, 1);
		if (i >= b->npieces)
			break;
		b->sizes[i] = piece_compress(b->src, b->len, i, b->slots + (size_t)i * b->slot_len, b->slot_len,
					     b->accel);
		mine++;
	}
	if (mine) {
		pthread_mutex_lock(&b->lock);
		b->done += mine;
		if (b->done == b->npieces)
			pthread_cond_signal(&b->cond);
		pthread_mutex_unlock(&b->lock);
	}
	return mine;
}

static void helper_job(struct job *j)
{
	struct batch *b = ((struct helper *)j)->b;
	(void)batch_work(b);
	batch_put(b);
}

/*
 * Hands pieces first..n-1 to the workers and the caller; returns 0 on failure.
 * *own_ns / *own_pieces: the caller's own compression time, with no waiting in it.
 */
static int compress_parallel(struct workers *w, const unsigned char *src, size_t len, unsigned first,
			     unsigned n, unsigned char *slots, size_t slot_len, int accel, uint32_t *sizes,
			     uint64_t *own_ns, unsigned *own_pieces)
{
	struct batch *b = malloc(sizeof *b);
	if (!b)
		return 0;
	memset(b, 0, sizeof *b);
	b->src = src;
	b->len = len;
	b->slots = slots;
	b->slot_len = slot_len;
	b->npieces = n;
	b->accel = accel;
	b->sizes = sizes;
	b->done = first;
	atomic_store(&b->next, first);
	pthread_mutex_init(&b->lock, NULL);
	pthread_cond_init(&b->cond, NULL);
	unsigned helpers = n - first - 1 < workers_count(w) ? n - first - 1 : workers_count(w);
	if (helpers > MAX_HELPERS)
		helpers = MAX_HELPERS;
	/* More helpers than other CPUs only adds context switches. */
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	if (cpus > 1 && helpers > (unsigned)(cpus - 1))
		helpers = (unsigned)(cpus - 1);
	/* The batch lives until the last helper has run, even one that starts after the work is done. */
	atomic_store(&b->refs, helpers + 1);
	for (unsigned i = 0; i < helpers; i++) {
		b->helpers[i].job.run = helper_job;
		b->helpers[i].b = b;
		workers_submit(w, &b->helpers[i].job);
	}
	uint64_t t0 = vtl_mono_ns();
	*own_pieces = batch_work(b);
	*own_ns = vtl_mono_ns() - t0;
	pthread_mutex_lock(&b->lock);
	while (b->done < b->npieces)
		pthread_cond_wait(&b->cond, &b->lock);
	pthread_mutex_unlock(&b->lock);
	batch_put(b);
	return 1;
}

size_t lz4_record_compress(struct workers *w, const void *src, size_t len, void *dst, int accel, bool *slow,
			   unsigned *tried)
{
	unsigned n = pieces_of(len);
	unsigned char *out = dst;
	size_t slot_len = (size_t)LZ4_compressBound((int)LZ4_PIECE);
	unsigned char *slots = out + 4ull * n;
	uint32_t sizes_stack[64], *sizes = sizes_stack;
	if (n > 64 && !(sizes = malloc(n * sizeof *sizes)))
		return 0; /* stored raw: correct, only larger */
	/*
	 * Waking helpers costs tens of microseconds; it pays only when LZ4 is slow
	 * on this data. The previous block of the stream tells; without it (or
	 * when it said fast) the first piece is timed to decide.
	 */
	uint64_t t0 = vtl_mono_ns(), own_ns = 0;
	unsigned first = 0, own = 0;
	if (!(w && n > 1 && slow && *slow)) {
		sizes[0] = piece_compress(src, len, 0, slots, slot_len, accel);
		first = 1;
		own = 1;
		own_ns = vtl_mono_ns() - t0;
	}
	bool parallel = w && n > first + 1 && (first == 0 || own_ns > PARALLEL_MIN_NS);
	uint64_t par_ns = 0;
	unsigned par_pieces = 0;
	if (parallel && compress_parallel(w, src, len, first, n, slots, slot_len, accel, sizes, &par_ns, &par_pieces)) {
		first = n;
		own += par_pieces;
		own_ns += par_ns;
	}
	uint64_t t1 = vtl_mono_ns();
	for (unsigned i = first; i < n; i++, own++)
		sizes[i] = piece_compress(src, len, i, slots + (size_t)i * slot_len, slot_len, accel);
	own_ns += vtl_mono_ns() - t1;
	/* Judged on the caller's own pieces: waiting for helpers must not make the data look slow. */
	if (slow && own)
		*slow = own_ns / own > PARALLEL_MIN_NS;
	/* Gather: table first, then the pieces moved down next to each other. */
	size_t total = 4ull * n;
	unsigned attempts = 0;
	for (unsigned i = 0; i < n; i++) {
		attempts += !(sizes[i] & PIECE_SKIPPED);
		sizes[i] &= ~PIECE_SKIPPED;
		total += sizes[i] & ~LZ4_PIECE_RAW;
	}
	if (tried)
		*tried = attempts;
	if (total < len) {
		size_t at = 4ull * n;
		for (unsigned i = 0; i < n; i++) {
			uint32_t sz = sizes[i];
			size_t plen = sz & ~LZ4_PIECE_RAW;
			const unsigned char *from = (sz & LZ4_PIECE_RAW)
							    ? (const unsigned char *)src + (size_t)i * LZ4_PIECE
							    : slots + (size_t)i * slot_len;
			put_le32(out + 4ull * i, sz);
			memmove(out + at, from, plen);
			at += plen;
		}
	}
	if (sizes != sizes_stack)
		free(sizes);
	return total < len ? total : 0;
}

int lz4_record_decompress(const void *src, size_t stored, void *dst, size_t len)
{
	const unsigned char *in = src;
	unsigned char *out = dst;
	unsigned n = pieces_of(len);
	if (n == 0 || stored < 4ull * n)
		return -1;
	size_t at = 4ull * n;
	for (unsigned i = 0; i < n; i++) {
		uint32_t sz = get_le32(in + 4ull * i);
		size_t clen = sz & ~LZ4_PIECE_RAW;
		size_t off = (size_t)i * LZ4_PIECE;
		size_t plen = len - off < LZ4_PIECE ? len - off : LZ4_PIECE;
		if (clen > stored - at)
			return -1;
		if (sz & LZ4_PIECE_RAW) {
			if (clen != plen)
				return -1;
			memcpy(out + off, in + at, plen);
		} else if (LZ4_decompress_safe((const char *)in + at, (char *)out + off, (int)clen, (int)plen) !=
			   (int)plen) {
			return -1;
		}
		at += clen;
	}
	return at == stored ? 0 : -1;
}
