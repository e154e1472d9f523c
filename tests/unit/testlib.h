/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the cartridge store's unit tests share: error-code checks,
 * deterministic block content, allocations a teardown can free after a
 * failed assertion, the per-test fixture (struct fx: temporary member
 * directories, a pool, open cartridges) and the seed and scale a run takes
 * from the environment. fx_* work on a fixture, tl_* wrap a store call.
 *
 * Linked into every tests/unit/test_* program (see the Makefile); it includes
 * cmocka, so a test includes this instead.
 */
#ifndef VTL_TESTS_UNIT_TESTLIB_H
#define VTL_TESTS_UNIT_TESTLIB_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdbool.h>

#include "backend/cartridge.h"
#include "backend/pool.h"

/* UNDER_ASAN: 1 in a build with AddressSanitizer, else 0. */
#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif
#ifndef UNDER_ASAN
#define UNDER_ASAN 0
#endif

/* ------------------------------------------------------------------ checks */

/* vtl_strerror(e), or "(null)" for a code it has no text for. */
const char *es(int e);

/* Fails the test, naming the call and both codes, unless call returns want. */
#define EXPECT_RC(call, want)                                                                  \
	do {                                                                                   \
		int rc_ = (call);                                                              \
		int want_ = (want);                                                            \
		if (rc_ != want_)                                                              \
			fail_msg("%s returned %d (%s), expected %d (%s)", #call, rc_, es(rc_), \
				 want_, es(want_));                                            \
	} while (0)

/* ---------------------------------------------------------------- content */

/* The next value of the splitmix64 sequence whose state is *s (advances *s). */
uint64_t splitmix64(uint64_t *s);

/* Fills buf[from..to) with the splitmix64 byte stream of state seed: buf[from + j] is its byte j. */
void gen_random(uint8_t *buf, size_t from, size_t to, uint64_t seed);

/* Fills buf[from..to) with LZ4-friendly text; buf[i] depends only on (key, i), with a marker every 4 KiB. */
void gen_text(uint8_t *buf, size_t from, size_t to, uint64_t key);

/* Deterministic block content, byte i a function of (key, comp, i) only: random, or text if comp. */
void gen_data(uint8_t *buf, size_t len, uint64_t key, bool comp);

/* ----------------------------------------------------------------- memory */

/* Zeroed memory of n bytes (1 for 0) that tfree_all frees too; fails the test if none or too many. */
void *talloc(size_t n);

/* realloc for memory from talloc (or NULL, then like talloc without zeroing); stays tracked. */
void *trealloc(void *old, size_t n);

/* Frees p (from talloc/trealloc, or NULL) and forgets it. */
void tfree(void *p);

/* Frees every allocation talloc/trealloc still track: for a teardown, so a failed test leaks nothing. */
void tfree_all(void);

/* ---------------------------------------------------------------- fixture */

#define TL_DIR_LEN 512  /* size of fx.dir */
#define TL_PATH_LEN 600 /* size of each fx.mpath[i] */
#define TL_MAXM 4       /* member directories a fixture can have */
#define TL_MAXC 4       /* cartridge slots of a fixture */

/* A test's own pool: a temporary directory, its member directories, the pool and open cartridges. */
struct fx {
	char dir[TL_DIR_LEN];
	char mpath[TL_MAXM][TL_PATH_LEN];
	struct vtl_pool_config cfg;
	struct vtl_pool *pool;
	struct vtl_cart *cart[TL_MAXC];
};

/* Syncs every file below dir and drops it from the page cache, so that the next read goes to the disk. */
void tl_drop_cache(const char *dir);

/* Removes dir and everything below it, following no links; errors are ignored. */
void rm_rf(const char *dir);

/* Setup: *state = a zeroed fixture with new dirs <$TMPDIR|/tmp>/<tag>-XXXXXX and its m0..m<n-1>; 0 or -1. */
int fx_setup_dirs(void **state, const char *tag, unsigned n);

/* Teardown: closes the open cartridges, then the pool, runs tfree_all, removes dir and frees the fixture. */
int fx_teardown(void **state);

/* Zeroes f->cfg, then sets the members f->mpath[0..n) and the segment size. */
void fx_pool_config(struct fx *f, unsigned n, uint64_t segsize);

/* vtl_pool_open(cfg, pool): fails the test with the code and the pool's reason unless it returns 0. */
void tl_pool_open(const struct vtl_pool_config *cfg, struct vtl_pool **pool);

/* vtl_cart_open with p (NULL: all defaults); fails the test unless it returns 0 and a cartridge. */
struct vtl_cart *tl_cart_open(struct vtl_pool *pool, const char *bc, const struct vtl_cart_params *p);

/* Closes *slot and sets it to NULL first; fails the test unless vtl_cart_close returns 0. */
void tl_cart_close(struct vtl_cart **slot);

/* vtl_cart_position into *p, poisoned first so that a field it does not set shows. */
void get_pos(struct vtl_cart *c, struct vtl_position *p);

/* ----------------------------------------------------------- environment */

/* VTL_TEST_SEED if set, else a seed below 10^12 made from the clock and the process id. */
uint64_t tl_env_seed(void);

/* VTL_TEST_SCALE if it is a number above 0, else 1. */
double tl_env_scale(void);

/*
 * The whole of docs/NAME under $VTL_SRCDIR (else the current folder), read
 * into a NUL-terminated block the caller frees; NULL when it cannot be read,
 * is empty or is larger than TL_DOC_MAX.
 */
#define TL_DOC_MAX (1 << 20)
char *tl_doc_read(const char *name);

#endif
