/* SPDX-License-Identifier: Apache-2.0 */
/* The unit tests' shared helpers; the contracts are in testlib.h. */
#include "tests/unit/testlib.h"

#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "common/vtl_error.h"

/* ------------------------------------------------------------------ checks */

const char *es(int e)
{
	const char *s = vtl_strerror(e);
	return s ? s : "(null)";
}

/* ---------------------------------------------------------------- content */

uint64_t splitmix64(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

void gen_random(uint8_t *buf, size_t from, size_t to, uint64_t seed)
{
	uint64_t s = seed;
	size_t i = from;
	while (i < to) {
		uint64_t v = splitmix64(&s);
		for (int b = 0; b < 8 && i < to; b++, i++)
			buf[i] = (uint8_t)(v >> (8 * b));
	}
}

void gen_text(uint8_t *buf, size_t from, size_t to, uint64_t key)
{
	uint64_t s = key * 0x2545f4914f6cdd1dull + 7;
	char line[64];
	for (int i = 0; i < 63; i++)
		line[i] = (char)('a' + splitmix64(&s) % 26);
	line[63] = '\n';
	static const char hex[] = "0123456789abcdef";
	for (size_t i = from; i < to; i++) {
		size_t in = i % 4096;
		if (in < 8)
			buf[i] = (uint8_t)hex[((i / 4096) + key) >> (4 * in) & 15];
		else
			buf[i] = (uint8_t)line[i % 64];
	}
}

void gen_data(uint8_t *buf, size_t len, uint64_t key, bool comp)
{
	if (comp)
		gen_text(buf, 0, len, key);
	else
		gen_random(buf, 0, len, key * 0x2545f4914f6cdd1dull + 1);
}

/* ----------------------------------------------------------------- memory */

#define TMEM_MAX 256
static void *g_mem[TMEM_MAX];

static void tmem_track(void *old, void *p)
{
	for (int i = 0; i < TMEM_MAX; i++)
		if (g_mem[i] == old) {
			g_mem[i] = p;
			return;
		}
	free(p);
	fail_msg("too many test allocations");
}

void *talloc(size_t n)
{
	void *p = calloc(1, n ? n : 1);
	assert_non_null(p);
	tmem_track(NULL, p);
	return p;
}

void *trealloc(void *old, size_t n)
{
	int slot = -1; /* old's slot (a free one for NULL), found before old may go away */
	for (int i = 0; i < TMEM_MAX && slot < 0; i++)
		if (g_mem[i] == old)
			slot = i;
	if (slot < 0)
		fail_msg("too many test allocations");
	void *p = realloc(old, n ? n : 1);
	assert_non_null(p);
	g_mem[slot] = p;
	return p;
}

void tfree(void *p)
{
	if (!p)
		return;
	for (int i = 0; i < TMEM_MAX; i++)
		if (g_mem[i] == p) {
			g_mem[i] = NULL;
			break;
		}
	free(p);
}

void tfree_all(void)
{
	for (int i = 0; i < TMEM_MAX; i++) {
		free(g_mem[i]);
		g_mem[i] = NULL;
	}
}

/* ---------------------------------------------------------------- fixture */

static int rm_cb(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(p);
}

void rm_rf(const char *dir)
{
	nftw(dir, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
}

int fx_setup_dirs(void **state, const char *tag, unsigned n)
{
	struct fx *f = calloc(1, sizeof(*f));
	if (!f)
		return -1;
	const char *t = getenv("TMPDIR");
	if (!t || !*t)
		t = "/tmp";
	snprintf(f->dir, sizeof(f->dir), "%s/%s-XXXXXX", t, tag);
	if (!mkdtemp(f->dir)) {
		free(f);
		return -1;
	}
	for (unsigned i = 0; i < n; i++) {
		char base[sizeof(f->dir)]; /* a copy: gcc -O1 -fsanitize warns of overlap otherwise */
		memcpy(base, f->dir, sizeof(base));
		snprintf(f->mpath[i], sizeof(f->mpath[i]), "%s/m%u", base, i);
		if (mkdir(f->mpath[i], 0755) != 0) {
			rm_rf(f->dir);
			free(f);
			return -1;
		}
	}
	*state = f;
	return 0;
}

int fx_teardown(void **state)
{
	struct fx *f = *state;
	if (!f)
		return 0;
	for (int i = 0; i < TL_MAXC; i++)
		if (f->cart[i])
			/* A test may leave a cartridge it failed on purpose: its close is not what is tested. */
			vtl_ignore(vtl_cart_close(f->cart[i]));
	if (f->pool)
		vtl_pool_close(f->pool);
	tfree_all();
	rm_rf(f->dir);
	free(f);
	return 0;
}

void fx_pool_config(struct fx *f, unsigned n, uint64_t segsize)
{
	memset(&f->cfg, 0, sizeof(f->cfg));
	for (unsigned i = 0; i < n; i++)
		f->cfg.members[i] = f->mpath[i];
	f->cfg.n_members = n;
	f->cfg.segment_size = segsize;
}

void tl_pool_open(const struct vtl_pool_config *cfg, struct vtl_pool **pool)
{
	char err[256] = "";
	int rc = vtl_pool_open(cfg, pool, err, sizeof(err));
	if (rc != 0)
		fail_msg("vtl_pool_open: %d (%s): %s", rc, es(rc), err);
}

struct vtl_cart *tl_cart_open(struct vtl_pool *pool, const char *bc, const struct vtl_cart_params *p)
{
	struct vtl_cart_params def;
	memset(&def, 0, sizeof(def));
	struct vtl_cart *c = NULL;
	int rc = vtl_cart_open(pool, bc, p ? p : &def, &c);
	if (rc != 0)
		fail_msg("vtl_cart_open(%s): %d (%s)", bc, rc, es(rc));
	assert_non_null(c);
	return c;
}

void tl_cart_close(struct vtl_cart **slot)
{
	struct vtl_cart *c = *slot;
	*slot = NULL;
	EXPECT_RC(vtl_cart_close(c), 0);
}

void get_pos(struct vtl_cart *c, struct vtl_position *p)
{
	memset(p, 0xa5, sizeof(*p));
	vtl_cart_position(c, p);
}

/* ------------------------------------------------------------ environment */

uint64_t tl_env_seed(void)
{
	const char *s = getenv("VTL_TEST_SEED");
	if (s && *s)
		return strtoull(s, NULL, 0);
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	uint64_t t = (uint64_t)ts.tv_sec * 1000000007ull ^ (uint64_t)ts.tv_nsec ^
		     ((uint64_t)getpid() << 20);
	return splitmix64(&t) % 1000000000000ull;
}

double tl_env_scale(void)
{
	const char *sc = getenv("VTL_TEST_SCALE");
	if (sc && *sc && atof(sc) > 0)
		return atof(sc);
	return 1.0;
}

char *tl_doc_read(const char *name)
{
	const char *dir = getenv("VTL_SRCDIR");
	char path[512];
	snprintf(path, sizeof path, "%s/docs/%s", dir ? dir : ".", name);
	FILE *f = fopen(path, "r");
	if (!f)
		return NULL;
	char *doc = calloc(1, TL_DOC_MAX + 1);
	size_t n = doc ? fread(doc, 1, TL_DOC_MAX + 1, f) : 0;
	fclose(f);
	if (n == 0 || n > TL_DOC_MAX) {
		free(doc);
		return NULL;
	}
	return doc;
}

static int drop_one(const char *path, const struct stat *sb, int type, struct FTW *ftw)
{
	(void)sb;
	(void)ftw;
	if (type != FTW_F)
		return 0;
	int fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(fdatasync(fd), 0);
	assert_int_equal(posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED), 0);
	close(fd);
	return 0;
}

void tl_drop_cache(const char *dir)
{
	assert_int_equal(nftw(dir, drop_one, 16, FTW_PHYS), 0);
}
