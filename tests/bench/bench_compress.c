/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Benchmark of the compression decision (backend/compress_policy.h): what
 * each candidate way of judging a 64 KiB piece from a sample costs per MB and
 * how often it misjudges the piece, on random, text, zeros, mixed and
 * already-compressed data; and LZ4_compress_fast's speed and ratio at
 * accelerations 1, 2, 4 and 8. The truth a judgement is held to: a full
 * LZ4_compress_default of the piece shrinks it by 1/CPOL_SAMPLE_GAIN_DIV.
 * CPU only (no disk), timed in the thread's CPU time so that other processes
 * on a shared machine inflate the figures less; docs/benchmarks.md, "Compression decision", has the
 * figures and the choice they led to. Knob: VTL_BENCH_CMP_MB (data per kind,
 * default 64).
 */
#include <lz4.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend/compress.h"
#include "backend/compress_policy.h"
#include "tests/bench/bench_util.h"

#define KINDS 7
#define ENTROPY_BITS_MAX 7.0 /* the histogram candidate: above this many bits per byte, raw */
#define REPEATS 3            /* each timing is the best of this many passes */
#define ACCEL_REPEATS 7      /* the acceleration figures are close: more passes */
#define RECORD (256u << 10)  /* the host's block for the whole-call figure (the benchmarks' 256 KiB) */
#define LZ4_ACCEL 2          /* the pool's default acceleration (backend/pool.c) */

/* This thread's CPU seconds: on a shared machine, what the work costs rather than how long others held the CPU. */
static double cpu_now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static const char *const kind_name[KINDS] = {"random", "text", "2:1 lz", "zeros", "split", "files", "lz4'd"};

/* Words drawn at random: ordinary text. */
static void fill_text(unsigned char *p, size_t n)
{
	static const char *const words[] = {"tape ", "drive ", "cartridge ", "filemark ", "block ", "the ",
					    "library ", "robot ", "slot ", "of ", "and ", "backup ", "restore ",
					    "volume ", "2026-12-02 ", "03:41:07 ", "error ", "ok\n", "job ", "42 "};
	size_t at = 0;
	while (at < n) {
		const char *w = words[rnd() % (sizeof words / sizeof words[0])];
		size_t l = strlen(w);
		if (l > n - at)
			l = n - at;
		memcpy(p + at, w, l);
		at += l;
	}
}

/* Random literals of 24 bytes, each followed by a 24-byte copy of earlier bytes: LZ-compressible, high order-0 entropy. */
static void fill_lz(unsigned char *p, size_t n)
{
	for (size_t at = 0; at < n;) {
		for (size_t i = 0; i < 24 && at < n; i++)
			p[at++] = (unsigned char)rnd();
		size_t back = at < 4096 ? at : 64 + rnd() % 4000;
		for (size_t i = 0; i < 24 && at < n && back; i++, at++)
			p[at] = p[at - back];
	}
}

static void fill_kind(unsigned char *p, size_t n, int kind)
{
	switch (kind) {
	case 0:
		for (size_t i = 0; i < n; i++)
			p[i] = (unsigned char)rnd();
		break;
	case 1:
		fill_text(p, n);
		break;
	case 2:
		fill_lz(p, n);
		break;
	case 3:
		memset(p, 0, n);
		break;
	case 5: /* files of 4 KiB..1 MiB, each text, random or zeros, back to back: a backup's stream */
		for (size_t at = 0; at < n;) {
			size_t l = (size_t)4096 << (rnd() % 9);
			if (l > n - at)
				l = n - at;
			fill_kind(p + at, l, (int)(rnd() % 3) == 2 ? 3 : (int)(rnd() % 2));
			at += l;
		}
		break;
	case 4: /* every piece split: its head text or random, the rest the other (what a head sample can miss) */
		for (size_t at = 0; at < n; at += LZ4_PIECE) {
			size_t l = n - at < LZ4_PIECE ? n - at : LZ4_PIECE, half = (rnd() % 8 + 1) * l / 16;
			bool text_first = rnd() & 1;
			fill_text(p + at + (text_first ? 0 : half), text_first ? half : l - half);
			for (size_t i = text_first ? half : 0; i < (text_first ? l : half); i++)
				p[at + i] = (unsigned char)rnd();
		}
		break;
	default: { /* text already through LZ4, the compressed blocks back to back */
		unsigned char *t = malloc(LZ4_PIECE * 3);
		size_t at = 0;
		while (t && at < n) {
			fill_text(t, LZ4_PIECE * 3);
			int got = LZ4_compress_default((char *)t, (char *)p + at, LZ4_PIECE * 3, (int)(n - at));
			at += got > 0 ? (size_t)got : n - at;
		}
		free(t);
	}
	}
}

static bool truth(const unsigned char *p, size_t len, char *out)
{
	int got = LZ4_compress_default((const char *)p, out, (int)len, LZ4_compressBound((int)LZ4_PIECE));
	return got > 0 && (size_t)got <= len - len / CPOL_SAMPLE_GAIN_DIV;
}

static bool lz4_sample(const unsigned char *p, size_t len, size_t sample)
{
	char out[LZ4_COMPRESSBOUND(CPOL_SAMPLE * 2)];
	size_t n = len < sample ? len : sample;
	int got = LZ4_compress_default((const char *)p, out, (int)n, (int)sizeof out);
	return got > 0 && (size_t)got <= n - n / CPOL_SAMPLE_GAIN_DIV;
}

/* Two samples of half the size, at the head and the middle. */
static bool lz4_two(const unsigned char *p, size_t len, size_t sample)
{
	return lz4_sample(p, len, sample / 2) || lz4_sample(p + len / 2, len - len / 2, sample / 2);
}

/* The head sample, and the middle one when the head does not pay. */
static bool lz4_head_mid(const unsigned char *p, size_t len, size_t sample)
{
	return lz4_sample(p, len, sample) || lz4_sample(p + len / 2, len - len / 2, sample);
}

/* Order-0 entropy of every 16th byte of the piece (4 KiB of a 64 KiB one). */
static bool entropy(const unsigned char *p, size_t len)
{
	unsigned h[256] = {0}, n = 0;
	for (size_t i = 0; i < len; i += 16, n++)
		h[p[i]]++;
	double bits = 0;
	for (int i = 0; i < 256; i++)
		if (h[i])
			bits -= h[i] * log2((double)h[i] / n);
	return bits / n <= ENTROPY_BITS_MAX;
}

enum cand { C_HEAD4, C_HEAD2, C_HEAD8, C_TWO4, C_HEADMID, C_ENTROPY, C_POLICY, NCAND };
static const char *const cand_name[NCAND] = {"LZ4 of the head 4 KiB", "LZ4 of the head 2 KiB",
					     "LZ4 of the head 8 KiB", "LZ4 of 2 x 2 KiB (head, middle)", "4 KiB head, else 4 KiB middle",
					     "entropy of 4 KiB (every 16th)", "cpol_sample_pays (the product)"};

static bool judge(int c, const unsigned char *p, size_t len)
{
	switch (c) {
	case C_HEAD4:
		return lz4_sample(p, len, 4096);
	case C_HEAD2:
		return lz4_sample(p, len, 2048);
	case C_HEAD8:
		return lz4_sample(p, len, 8192);
	case C_TWO4:
		return lz4_two(p, len, 4096);
	case C_HEADMID:
		return lz4_head_mid(p, len, 4096);
	case C_ENTROPY:
		return entropy(p, len);
	default:
		return cpol_sample_pays(p, len);
	}
}

int main(void)
{
	size_t mb = bench_env_ul("VTL_BENCH_CMP_MB", 64);
	if (mb < 1 || mb > 4096) {
		fprintf(stderr, "bench_compress: VTL_BENCH_CMP_MB must be 1..4096\n");
		return 1;
	}
	size_t n = mb << 20, pieces = n / LZ4_PIECE;
	unsigned char *buf = malloc(n);
	char *out = malloc((size_t)LZ4_compressBound((int)LZ4_PIECE));
	bool *want = malloc(pieces);
	if (!buf || !out || !want) {
		fprintf(stderr, "bench_compress: out of memory\n");
		return 1;
	}
	printf("compression decision: %zu MiB per kind in %u KiB pieces; ns per MB of data judged (best of %d),\n"
	       "misjudged = pieces judged otherwise than a full LZ4 attempt (%% of pieces); times are this thread's CPU time\n\n", mb,
	       LZ4_PIECE >> 10, REPEATS);
	printf("%-34s", "candidate");
	for (int k = 0; k < KINDS; k++)
		printf(" %14s", kind_name[k]);
	printf("\n");
	double cost[NCAND][KINDS];
	unsigned wrong[NCAND][KINDS];
	double full_ns[KINDS];
	for (int k = 0; k < KINDS; k++) {
		fill_kind(buf, n, k);
		double best = 1e30;
		for (int r = 0; r < REPEATS; r++) {
			double t0 = cpu_now_s();
			for (size_t i = 0; i < pieces; i++)
				want[i] = truth(buf + i * LZ4_PIECE, LZ4_PIECE, out);
			double t = cpu_now_s() - t0;
			best = t < best ? t : best;
		}
		full_ns[k] = best * 1e9 / (double)mb;
		for (int c = 0; c < NCAND; c++) {
			best = 1e30;
			wrong[c][k] = 0;
			for (int r = 0; r < REPEATS; r++) {
				unsigned bad = 0;
				double t0 = cpu_now_s();
				for (size_t i = 0; i < pieces; i++)
					bad += judge(c, buf + i * LZ4_PIECE, LZ4_PIECE) != want[i];
				double t = cpu_now_s() - t0;
				best = t < best ? t : best;
				wrong[c][k] = bad;
			}
			cost[c][k] = best * 1e9 / (double)mb;
		}
	}
	for (int c = 0; c < NCAND; c++) {
		printf("%-34s", cand_name[c]);
		for (int k = 0; k < KINDS; k++)
			printf(" %7.0f %5.1f%%", cost[c][k], 100.0 * wrong[c][k] / (double)pieces);
		printf("\n");
	}
	printf("%-34s", "(full LZ4 attempt, accel 1)");
	for (int k = 0; k < KINDS; k++)
		printf(" %7.0f %6s", full_ns[k], "");
	/* The writer's whole call, as cart_write.c makes it: samples, attempts, gather. */
	size_t rec = RECORD, nrec = n / rec;
	unsigned char *dst = malloc(lz4_record_scratch(rec));
	if (!dst) {
		fprintf(stderr, "bench_compress: out of memory\n");
		return 1;
	}
	printf("\n%-34s", "lz4_record_compress, 256 KiB recs");
	double rec_ns[KINDS], rec_ratio[KINDS];
	for (int k = 0; k < KINDS; k++) {
		fill_kind(buf, n, k);
		double best = 1e30;
		size_t stored = 0;
		for (int r = 0; r < REPEATS; r++) {
			stored = 0;
			double t0 = cpu_now_s();
			for (size_t i = 0; i < nrec; i++) {
				size_t got = lz4_record_compress(NULL, buf + i * rec, rec, dst, LZ4_ACCEL, NULL, NULL);
				stored += got ? got : rec;
			}
			double t = cpu_now_s() - t0;
			best = t < best ? t : best;
		}
		rec_ns[k] = best * 1e9 / (double)mb;
		rec_ratio[k] = (double)(nrec * rec) / (double)stored;
		printf(" %7.0f %5.2f:1", rec_ns[k], rec_ratio[k]);
	}
	free(dst);
	printf("\n\nLZ4_compress_fast by acceleration, whole %u KiB pieces: MB/s and ratio (plain/stored)\n",
	       LZ4_PIECE >> 10);
	static const int accels[] = {1, 2, 4, 8};
	static const int akinds[] = {1, 2};
	for (size_t ak = 0; ak < sizeof akinds / sizeof akinds[0]; ak++) {
		fill_kind(buf, n, akinds[ak]);
		printf("  %-8s", kind_name[akinds[ak]]);
		for (size_t a = 0; a < sizeof accels / sizeof accels[0]; a++) {
			double best = 1e30;
			size_t stored = 0;
			for (int r = 0; r < ACCEL_REPEATS; r++) {
				stored = 0;
				double t0 = cpu_now_s();
				for (size_t i = 0; i < pieces; i++)
					stored += (size_t)LZ4_compress_fast((char *)buf + i * LZ4_PIECE, out, (int)LZ4_PIECE,
									    LZ4_compressBound((int)LZ4_PIECE), accels[a]);
				double t = cpu_now_s() - t0;
				best = t < best ? t : best;
			}
			printf("   accel %d: %6.0f MB/s %5.2f:1", accels[a], (double)n / best / 1e6,
			       (double)n / (double)stored);
		}
		printf("\n");
	}
	free(buf);
	free(out);
	free(want);
	return 0;
}
