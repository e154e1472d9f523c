/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Benchmark of tape data encryption at rest (backend/cart_crypt.c): a
 * cartridge written and read back through the backend, with encryption off
 * and on (AES-256-GCM, a 32-byte key, a U-KAD), on incompressible data
 * (compression off) and on text (LZ4 on), in 256 KiB blocks: MB/s of host
 * data and the CPU seconds the process spent per GiB, side by side, in one
 * run. The pool is in a temporary folder under TMPDIR (the page cache
 * serves the reads: the figures are the CPU path, not the disk's). Knob:
 * VTL_BENCH_CRYPT_MB (host data per case, default 256).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "backend/cartridge.h"
#include "backend/crypt.h"
#include "backend/pool.h"
#include "common/vtl_error.h"
#include "tests/bench/bench_util.h"

#define BLK (256u << 10)
#define MIB (1024.0 * 1024.0)
#define GIB (1024.0 * MIB)

static char g_dir[4096];
static void cleanup(void)
{
	bench_rmtree(g_dir);
}

static double cpu_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t rng = 0x2545F4914F6CDD1Dull;
static void fill(unsigned char *p, size_t n, int text)
{
	static const char *const words[] = {"tape ", "drive ", "cartridge ", "filemark ", "block ", "backup ",
					    "restore ", "2026-12-02 ", "ok\n", "volume "};
	for (size_t i = 0; i < n;) {
		rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
		if (!text) {
			size_t k = n - i < 8 ? n - i : 8;
			memcpy(p + i, &rng, k);
			i += k;
		} else {
			const char *w = words[rng % 10];
			size_t k = strlen(w) < n - i ? strlen(w) : n - i;
			memcpy(p + i, w, k);
			i += k;
		}
	}
}

struct figures {
	double w_mbs, w_cpu, r_mbs, r_cpu; /* MB/s, CPU s per GiB */
};

static int run_case(struct vtl_pool *pool, const char *bc, const struct vtl_crypt *cr, int text, size_t total,
		    unsigned char *data, unsigned char *buf, struct figures *f)
{
	int rc = vtl_cart_create(pool, bc);
	struct vtl_cart_params p = {.compression = text != 0};
	struct vtl_cart *c = NULL;
	if (rc || (rc = vtl_cart_open(pool, bc, &p, &c))) {
		fprintf(stderr, "bench_crypt: ERROR: cartridge %s: %s\n", bc, vtl_strerror(rc));
		return -1;
	}
	vtl_cart_set_crypt(c, cr);
	size_t n = total / BLK;
	double t0 = bench_now_s(), c0 = cpu_s();
	for (size_t i = 0; i < n; i++)
		if ((rc = vtl_cart_write_block(c, data + (i % 16) * BLK, BLK)) < 0)
			break;
	if (rc >= 0)
		rc = vtl_cart_sync(c);
	double t1 = bench_now_s(), c1 = cpu_s();
	if (rc < 0 || (rc = vtl_cart_rewind(c))) {
		fprintf(stderr, "bench_crypt: ERROR: write %s: %s\n", bc, vtl_strerror(rc));
		vtl_ignore(vtl_cart_close(c));
		return -1;
	}
	struct vtl_read_result r;
	for (size_t i = 0; i < n; i++) {
		if ((rc = vtl_cart_read(c, buf, BLK, &r)) || r.length != BLK ||
		    memcmp(buf, data + (i % 16) * BLK, BLK) != 0) {
			fprintf(stderr, "bench_crypt: ERROR: block %zu of %s does not read back (%s)\n", i, bc,
				vtl_strerror(rc));
			vtl_ignore(vtl_cart_close(c));
			return -1;
		}
	}
	double t2 = bench_now_s(), c2 = cpu_s();
	if ((rc = vtl_cart_close(c)) || (rc = vtl_cart_delete(pool, bc))) {
		fprintf(stderr, "bench_crypt: ERROR: close %s: %s\n", bc, vtl_strerror(rc));
		return -1;
	}
	double bytes = (double)n * BLK;
	f->w_mbs = bytes / (t1 - t0) / 1e6;
	f->w_cpu = (c1 - c0) / (bytes / GIB);
	f->r_mbs = bytes / (t2 - t1) / 1e6;
	f->r_cpu = (c2 - c1) / (bytes / GIB);
	return 0;
}

int main(void)
{
	size_t total = (size_t)bench_env_ul("VTL_BENCH_CRYPT_MB", 256) << 20;
	const char *base = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	if (!bench_make_dir(g_dir, sizeof g_dir, base, "vtl-bench-crypt", cleanup)) {
		fprintf(stderr, "bench_crypt: ERROR: cannot make a folder under %s\n", base);
		return 1;
	}
	char member[4200];
	snprintf(member, sizeof member, "%s/m0", g_dir);
	if (mkdir(member, 0750) != 0) {
		fprintf(stderr, "bench_crypt: ERROR: mkdir %s\n", member);
		return 1;
	}
	struct vtl_pool_config pc = {.n_members = 1, .members = {member}};
	struct vtl_pool *pool;
	char err[256] = "";
	int rc = vtl_pool_open(&pc, &pool, err, sizeof err);
	if (rc) {
		fprintf(stderr, "bench_crypt: ERROR: vtl_pool_open: %s: %s\n", vtl_strerror(rc), err);
		return 1;
	}
	static const uint8_t key[VTL_KEY_LEN] = {0x5A, 1, 2, 3};
	struct vtl_key *k;
	if ((rc = vtl_key_new(key, sizeof key, &k))) {
		fprintf(stderr, "bench_crypt: ERROR: vtl_key_new: %s\n", vtl_strerror(rc));
		return 1;
	}
	struct vtl_crypt on = {.enc = k, .dec = k, .plain_ok = true, .kad = {.ukad_len = 8, .ukad = "bench-ky"}};
	unsigned char *data = malloc(16 * (size_t)BLK), *buf = malloc(BLK);
	if (!data || !buf)
		return 1;
	printf("tape data encryption, %zu MiB of host data per case in %u KiB blocks (backend, page cache)\n",
	       total >> 20, BLK >> 10);
	printf("%-40s %8s %14s %12s %14s\n", "case", "write MB/s", "write CPU s/GiB", "read MB/s", "read CPU s/GiB");
	const char *names[2] = {"incompressible, no LZ4", "text, LZ4"};
	int bad = 0;
	for (int text = 0; text < 2; text++) {
		fill(data, 16 * (size_t)BLK, text);
		for (int enc = 0; enc < 2; enc++) {
			struct figures f;
			char bc[16], label[64];
			snprintf(bc, sizeof bc, "B%05dL8", text * 2 + enc);
			snprintf(label, sizeof label, "%s, %s", names[text], enc ? "AES-256-GCM" : "plaintext");
			if (run_case(pool, bc, enc ? &on : NULL, text, total, data, buf, &f)) {
				bad = 1;
				continue;
			}
			printf("%-40s %8.0f %14.3f %12.0f %14.3f\n", label, f.w_mbs, f.w_cpu, f.r_mbs, f.r_cpu);
		}
	}
	vtl_key_free(k);
	free(data);
	free(buf);
	vtl_pool_close(pool);
	return bad;
}
