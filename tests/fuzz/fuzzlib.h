/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the fuzz targets share: a pool in a temporary directory for the
 * whole run, and reading an input as a little program, a few bytes at a time.
 * Each target is one program built from its .c and the library sources, so
 * these are static functions.
 */
#ifndef VTL_TESTS_FUZZ_FUZZLIB_H
#define VTL_TESTS_FUZZ_FUZZLIB_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend/cartridge.h"
#include "backend/pool.h"

struct fuzz_input {
	const uint8_t *p;
	size_t n;
};

/* The next bytes (at most 4) of in as a big-endian number; zeros once the input is used up. */
static inline uint32_t fuzz_take(struct fuzz_input *in, unsigned bytes)
{
	uint32_t v = 0;
	for (unsigned i = 0; i < bytes; i++) {
		v = v << 8;
		if (in->n) {
			v |= *in->p++;
			in->n--;
		}
	}
	return v;
}

static char fuzz_dir[64];
static struct vtl_pool *fuzz_pool;
static const char *fuzz_barcode;

static void fuzz_pool_cleanup(void)
{
	if (!fuzz_pool)
		return;
	vtl_cart_delete(fuzz_pool, fuzz_barcode);
	vtl_pool_close(fuzz_pool);
	fuzz_pool = NULL;
	rmdir(fuzz_dir);
}

/*
 * Opens fuzz_pool, the smallest segment size, over a new directory named for
 * tag, removed at exit with the cartridge barcode; aborts on failure.
 */
static inline void fuzz_pool_open(const char *tag, const char *barcode)
{
	/* tmpfs when there is one: every open and close syncs, and syncs are free there. */
	struct stat st;
	snprintf(fuzz_dir, sizeof fuzz_dir, "%s/%s-XXXXXX", stat("/dev/shm", &st) == 0 ? "/dev/shm" : "/tmp", tag);
	if (!mkdtemp(fuzz_dir))
		abort();
	struct vtl_pool_config cfg = {.members = {fuzz_dir}, .n_members = 1, .segment_size = VTL_SEGMENT_SIZE_MIN,
				      .member_quota = 1ull << 40, .io_threads = 1};
	char err[256];
	if (vtl_pool_open(&cfg, &fuzz_pool, err, sizeof err) != 0) {
		fprintf(stderr, "%s: %s\n", tag, err);
		abort();
	}
	fuzz_barcode = barcode;
	atexit(fuzz_pool_cleanup);
}

#endif
