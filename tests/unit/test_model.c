/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Model-based randomized test of the cartridge: a trivial in-memory tape
 * (a vector of data blocks and filemarks plus a position) runs the same long
 * random sequence of operations as the real cartridge, and after every step
 * every return value, read result, space residual and stop reason, and the
 * full position (object, file, eod, bot, at_eod, stored_bytes, early_warning)
 * must agree.
 *
 * VTL_TEST_SEED=<n> repeats a run (the seed is printed at the start and on a
 * failure, with the last operations). VTL_TEST_SCALE=<f> multiplies the
 * number of steps (default 1; halved under AddressSanitizer).
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "backend/cartridge.h"
#include "backend/pool.h"
#include "common/grow.h"
#include "common/vtl_error.h"
#include "tests/unit/testlib.h"

#define HDR 32u
#define BLK_MAX_MODEL 300000u
#define RBUF (BLK_MAX_MODEL + 4096)
#define CANARY 16
#define LOGN 48

static uint64_t g_seed;
static double g_scale = 1.0;

/* ---------------------------------------------------------------- helpers */

/*
 * Block content: byte i depends only on (key, kind, i), so any prefix is the
 * same whatever the length. Kinds: 0 random, 1 LZ4-friendly text, 2 runs of
 * 20000 bytes alternately random and text (compressed in pieces, some pieces
 * shrink and some do not).
 */
static void gen_kind(uint8_t *buf, size_t len, uint64_t key, unsigned kind)
{
	if (kind < 2) {
		gen_data(buf, len, key, kind == 1);
	} else {
		for (size_t c = 0; c * 20000 < len; c++) {
			size_t from = c * 20000, to = from + 20000 < len ? from + 20000 : len;
			if (c % 2)
				gen_text(buf, from, to, key);
			else
				gen_random(buf, from, to, key * 0x9e3779b97f4a7c15ull + c * 0x632be59bd9b4e019ull);
		}
	}
}

static int fx_setup(void **state)
{
	return fx_setup_dirs(state, "vtl-model", 3);
}

/* ------------------------------------------------------------------ model */

struct run_cfg {
	const char *name;
	unsigned members;
	uint64_t segsize;
	unsigned ra_depth;
	size_t ra_chunk;
	size_t ra_memory;
	unsigned io_threads;
	unsigned runs;   /* independent runs, each on a new cartridge */
	unsigned steps;  /* per run */
	bool worm;
	uint64_t capacity; /* with a capacity, compression stays off so costs are exact... */
	bool cap_compress; /* ...unless this: then outcomes are checked for consistency only */
	uint64_t early_warning;
	uint64_t max_bytes; /* keep the model tape below this many stored bytes */
	unsigned carts;     /* 1 (default) or 2 cartridges driven interleaved */
};

struct mobj {
	bool fm;
	uint8_t kind; /* content kind, see gen_kind */
	bool compressed_session; /* written with compression on */
	uint32_t len;
	uint64_t key;
	uint64_t cost; /* stored bytes, as observed when written */
};

/* The operations of every cartridge of a run, oldest overwritten first. */
struct mlog {
	char line[LOGN][200];
	unsigned n;
};

struct ctx {
	struct fx *f;
	const struct run_cfg *cfg;
	struct vtl_cart **slot; /* where the open cartridge is (fx, for the teardown) */
	unsigned idx;
	struct mlog *lg;
	uint64_t run_seed;
	uint64_t rng;
	unsigned run, step;
	char barcode[16];
	struct vtl_cart_params params;
	bool comp_on;
	bool ro; /* this session is read-only */
	/* the model */
	struct mobj *o;
	uint64_t n, cap, pos, stored;
	uint64_t session_written;
	/* buffers */
	uint8_t *wbuf, *rbuf, *ebuf;
	/* counters */
	unsigned n_ops[32];
	uint64_t reads_seq;
	unsigned n_eom, n_ew, n_worm, n_short_reads, n_space_stops, n_ro;
};

#define CART(x) (*(x)->slot)

static uint64_t rnd(struct ctx *x)
{
	return splitmix64(&x->rng);
}

static uint64_t below(struct ctx *x, uint64_t n)
{
	return n ? rnd(x) % n : 0;
}

static void logf_(struct ctx *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void logf_(struct ctx *x, const char *fmt, ...)
{
	char *l = x->lg->line[x->lg->n % LOGN];
	int k = snprintf(l, sizeof(x->lg->line[0]),
			 "run %u step %u cart %u%s pos %" PRIu64 " eod %" PRIu64 ": ", x->run, x->step,
			 x->idx, x->ro ? " (read-only)" : "", x->pos, x->n);
	va_list ap;
	va_start(ap, fmt);
	if (k >= 0 && (size_t)k < sizeof(x->lg->line[0]))
		vsnprintf(l + k, sizeof(x->lg->line[0]) - (size_t)k, fmt, ap);
	va_end(ap);
	x->lg->n++;
}

static void dump(struct ctx *x)
{
	print_error("\n*** %s: mismatch. base seed %" PRIu64 " (VTL_TEST_SEED=%" PRIu64
		    " repeats it), run seed %" PRIu64 "\n*** last operations, oldest first:\n",
		    x->cfg->name, g_seed, g_seed, x->run_seed);
	unsigned first = x->lg->n > LOGN ? x->lg->n - LOGN : 0;
	for (unsigned i = first; i < x->lg->n; i++)
		print_error("    %s\n", x->lg->line[i % LOGN]);
}

#define MFAIL(x, ...)                                                                          \
	do {                                                                                   \
		dump(x);                                                                       \
		fail_msg(__VA_ARGS__);                                                         \
	} while (0)

#define MEQ(x, what, got, want)                                                                \
	do {                                                                                   \
		uint64_t g_ = (uint64_t)(got), w_ = (uint64_t)(want);                          \
		if (g_ != w_)                                                                  \
			MFAIL(x, "run %u step %u: %s = %" PRIu64 " (0x%" PRIx64 "), expected %" PRIu64, \
			      (x)->run, (x)->step, what, g_, g_, w_);                          \
	} while (0)

#define MRC(x, what, got, want)                                                                \
	do {                                                                                   \
		int g_ = (got), w_ = (want);                                                   \
		if (g_ != w_)                                                                  \
			MFAIL(x, "run %u step %u: %s returned %d (%s), expected %d (%s)", (x)->run, \
			      (x)->step, what, g_, es(g_), w_, es(w_));                        \
	} while (0)

static void m_truncate(struct ctx *x, uint64_t at)
{
	for (uint64_t i = at; i < x->n; i++)
		x->stored -= x->o[i].cost;
	if (at < x->n)
		x->n = at;
}

static void m_append(struct ctx *x, struct mobj o)
{
	if (x->n == x->cap) {
		x->cap = x->cap ? 2 * x->cap : 1024;
		x->o = trealloc(x->o, x->cap * sizeof(*x->o));
		assert_non_null(x->o);
	}
	x->o[x->n++] = o;
	x->stored += o.cost;
}

static uint64_t m_files(struct ctx *x, uint64_t pos)
{
	uint64_t k = 0;
	for (uint64_t i = 0; i < pos; i++)
		k += x->o[i].fm;
	return k;
}

static uint64_t m_stored_before(struct ctx *x, uint64_t pos)
{
	uint64_t s = 0;
	for (uint64_t i = 0; i < pos; i++)
		s += x->o[i].cost;
	return s;
}

/* EW as the contract puts it; exactly on the point either answer is accepted. */
static int ew_state(struct ctx *x, uint64_t stored)
{
	if (!x->cfg->capacity)
		return 0;
	uint64_t ewp = x->cfg->capacity - x->cfg->early_warning;
	if (stored > ewp)
		return 1;
	if (stored == ewp)
		return -1; /* either */
	return 0;
}

static void check_position(struct ctx *x)
{
	struct vtl_position p;
	memset(&p, 0xa5, sizeof(p));
	vtl_cart_position(CART(x), &p);
	MEQ(x, "position.object", p.object, x->pos);
	MEQ(x, "position.eod", p.eod, x->n);
	MEQ(x, "position.file", p.file, m_files(x, x->pos));
	MEQ(x, "position.bot", p.bot, x->pos == 0);
	MEQ(x, "position.at_eod", p.at_eod, x->pos == x->n);
	MEQ(x, "position.stored_bytes", p.stored_bytes, x->stored);
	int ew = ew_state(x, x->stored);
	if (ew >= 0)
		MEQ(x, "position.early_warning", p.early_warning, ew);
}

static uint64_t cart_stored(struct ctx *x)
{
	struct vtl_position p;
	vtl_cart_position(CART(x), &p);
	return p.stored_bytes;
}

/* ------------------------------------------------------------- operations */

enum {
	OP_APPEND,     /* space to EOD, write a block */
	OP_FM_APPEND,  /* space to EOD, write 1-3 filemarks */
	OP_WRITE_HERE, /* write a block wherever the position is */
	OP_FM_HERE,
	OP_LOCATE,
	OP_SPACE_B,
	OP_SPACE_F,
	OP_SPACE_EOD,
	OP_REWIND,
	OP_READ,
	OP_ERASE_NEAR_END, /* locate a few objects before EOD, erase */
	OP_ERASE_HERE,
	OP_OVERWRITE_NEAR_END, /* locate a few objects before EOD, write */
	OP_OVERWRITE_ANY,      /* locate anywhere (often far back), write */
	OP_SYNC,
	OP_REOPEN,
	OP_COMP,
	OP_READ_RUN,
	OP_APPEND_BURST, /* space to EOD, write 5-40 objects */
	OP_N
};

static const char *const op_names[OP_N] = {
	"append", "fm-append", "write-here", "fm-here", "locate", "space-blocks", "space-fm",
	"space-eod", "rewind", "read", "erase-near-end", "erase-here", "overwrite-near-end",
	"overwrite-any", "sync", "reopen", "compression", "read-run", "append-burst"
};

/*
 * Per mille. Writes mostly append, as a backup application does; a write
 * anywhere else discards the rest of the tape, so those are rare enough for
 * tapes of a few hundred objects over dozens of segments to build up.
 */
static const unsigned op_weight[OP_N] = { 220, 40, 2, 1, 100, 100, 70, 25, 25, 200,
					  12, 1, 25, 3, 20, 8, 20, 30, 20 };

static uint32_t pick_len(struct ctx *x)
{
	uint64_t r = below(x, 1000);
	if (r < 10) {
		static const uint32_t edge[] = { 65536, 65536 - 128 - 32, 65504, 131072, 65535,
						 65537, 262144 - 32, 131071, 131073, 196608, 196609,
						 262144 };
		return edge[below(x, VTL_ARRAY_SIZE(edge))];
	}
	if (r < 650)
		return 1 + (uint32_t)below(x, 512);
	if (r < 880)
		return 513 + (uint32_t)below(x, 16384 - 512);
	if (r < 980)
		return 16385 + (uint32_t)below(x, 100000 - 16384);
	return 100001 + (uint32_t)below(x, BLK_MAX_MODEL - 100000);
}

/* Outcome of a write of cost bytes at the current position: 0, 1 (EW), EOM, WORM; -100: either 0/1. */
static int expect_write(struct ctx *x, uint64_t cost, bool *either_eom)
{
	*either_eom = false;
	if (x->ro)
		return VTL_E_READONLY;
	if (x->cfg->worm && x->pos < x->n)
		return VTL_E_WORM;
	if (!x->cfg->capacity)
		return 0;
	uint64_t after = m_stored_before(x, x->pos) + cost;
	if (after > x->cfg->capacity)
		return VTL_E_EOM;
	if (after == x->cfg->capacity)
		*either_eom = true;
	int ew = ew_state(x, after);
	return ew < 0 ? -100 : ew;
}

static void count_rc(struct ctx *x, int rc)
{
	x->n_eom += rc == VTL_E_EOM;
	x->n_ew += rc == VTL_W_EARLY_WARNING;
	x->n_worm += rc == VTL_E_WORM;
	x->n_ro += rc == VTL_E_READONLY;
}

static bool rc_matches(int got, int want, bool either_eom)
{
	if (want == VTL_E_READONLY && got == VTL_E_WORM)
		return false; /* checked by the caller where both apply */
	if (either_eom && got == VTL_E_EOM)
		return true;
	if (want == -100)
		return got == 0 || got == VTL_W_EARLY_WARNING;
	return got == want;
}

static void op_write(struct ctx *x)
{
	uint32_t len = pick_len(x);
	uint64_t kr = below(x, 4);
	unsigned kind = kr < 2 ? 0 : (unsigned)kr - 1;
	uint64_t key = rnd(x);
	gen_kind(x->wbuf, len, key, kind);
	bool either;
	int want = expect_write(x, (uint64_t)len + HDR, &either);
	/* Compressed with a capacity: the cost is not known before, only bounded by len + HDR. */
	bool loose = x->cfg->capacity && x->comp_on && want != VTL_E_WORM && want != VTL_E_READONLY;
	logf_(x, "write len %u content %u compression %d key %" PRIx64, len, kind, x->comp_on, key);
	int rc = vtl_cart_write_block(CART(x), x->wbuf, len);
	count_rc(x, rc);
	if (x->ro && x->cfg->worm && x->pos < x->n && rc == VTL_E_WORM)
		rc = VTL_E_READONLY; /* both apply: either answer */
	if (loose) {
		if (rc == VTL_E_EOM && want != VTL_E_EOM && !either)
			MFAIL(x, "run %u step %u: VTL_E_EOM for %u bytes that fit even uncompressed",
			      x->run, x->step, len);
		if (rc < 0 && rc != VTL_E_EOM)
			MFAIL(x, "run %u step %u: write of %u bytes returned %d (%s)", x->run, x->step, len,
			      rc, es(rc));
	} else if (!rc_matches(rc, want, either)) {
		MFAIL(x, "run %u step %u: write of %u bytes returned %d (%s), expected %d (%s)", x->run,
		      x->step, len, rc, es(rc), want, es(want));
	}
	if (rc < 0)
		return;
	m_truncate(x, x->pos);
	uint64_t cost = cart_stored(x) - x->stored;
	if (loose) {
		uint64_t after = x->stored + cost;
		if (after > x->cfg->capacity)
			MFAIL(x, "run %u step %u: stored bytes %" PRIu64 " past the capacity %" PRIu64,
			      x->run, x->step, after, x->cfg->capacity);
		int ew = ew_state(x, after);
		if (ew >= 0 && rc != ew)
			MFAIL(x, "run %u step %u: write returned %d with %" PRIu64
				 " stored bytes (early warning from %" PRIu64 ")",
			      x->run, x->step, rc, after, x->cfg->capacity - x->cfg->early_warning);
	}
	if (x->comp_on) {
		if (cost == 0 || cost > (uint64_t)len + HDR + 32)
			MFAIL(x, "run %u step %u: compressed block of %u bytes cost %" PRIu64
				 " stored bytes",
			      x->run, x->step, len, cost);
	} else {
		MEQ(x, "stored bytes of an uncompressed block", cost, (uint64_t)len + HDR);
	}
	m_append(x, (struct mobj){ .fm = false, .kind = (uint8_t)kind, .compressed_session = x->comp_on,
				   .len = len, .key = key, .cost = cost });
	x->pos = x->n;
	x->session_written += len;
}

static void op_filemarks(struct ctx *x, uint32_t count)
{
	bool either;
	int want = expect_write(x, (uint64_t)count * HDR, &either);
	logf_(x, "write %u filemarks", count);
	int rc = vtl_cart_write_filemarks(CART(x), count);
	count_rc(x, rc);
	if (x->ro && x->cfg->worm && x->pos < x->n && rc == VTL_E_WORM)
		rc = VTL_E_READONLY; /* both apply: either answer */
	if (!rc_matches(rc, want, either))
		MFAIL(x, "run %u step %u: write of %u filemarks returned %d (%s), expected %d (%s)",
		      x->run, x->step, count, rc, es(rc), want, es(want));
	if (rc < 0)
		return;
	m_truncate(x, x->pos);
	MEQ(x, "stored bytes of filemarks", cart_stored(x) - x->stored, (uint64_t)count * HDR);
	for (uint32_t i = 0; i < count; i++)
		m_append(x, (struct mobj){ .fm = true, .cost = HDR });
	x->pos = x->n;
}

static void op_locate(struct ctx *x, uint64_t t)
{
	logf_(x, "locate %" PRIu64, t);
	int rc = vtl_cart_locate(CART(x), t);
	if (t > x->n) {
		MRC(x, "locate past EOD", rc, VTL_E_EOD);
		x->pos = x->n;
	} else {
		MRC(x, "locate", rc, 0);
		x->pos = t;
	}
}

static void op_read(struct ctx *x, size_t buflen)
{
	uint8_t *b = x->rbuf;
	memset(b, 0xcd, buflen + CANARY);
	struct vtl_read_result r;
	memset(&r, 0x5a, sizeof(r));
	logf_(x, "read buflen %zu", buflen);
	int rc = vtl_cart_read(CART(x), b, buflen, &r);
	MRC(x, "read", rc, 0);
	for (size_t i = buflen; i < buflen + CANARY; i++)
		if (b[i] != 0xcd)
			MFAIL(x, "run %u step %u: read wrote past the buffer end (%zu bytes)", x->run,
			      x->step, buflen);
	if (x->pos == x->n) {
		MEQ(x, "read at EOD: r.type", r.type, VTL_OBJ_EOD);
		MEQ(x, "read at EOD: r.object", r.object, x->n);
		MEQ(x, "read at EOD: r.copied", r.copied, 0);
		return;
	}
	const struct mobj *o = &x->o[x->pos];
	MEQ(x, "r.object", r.object, x->pos);
	if (o->fm) {
		MEQ(x, "r.type (filemark expected)", r.type, VTL_OBJ_FILEMARK);
		MEQ(x, "filemark: r.copied", r.copied, 0);
	} else {
		MEQ(x, "r.type (data expected)", r.type, VTL_OBJ_DATA);
		MEQ(x, "r.length", r.length, o->len);
		size_t want = buflen < o->len ? buflen : o->len;
		x->n_short_reads += buflen < o->len;
		MEQ(x, "r.copied", r.copied, want);
		gen_kind(x->ebuf, want, o->key, o->kind);
		if (memcmp(x->ebuf, b, want) != 0) {
			size_t i = 0;
			while (x->ebuf[i] == b[i])
				i++;
			MFAIL(x, "run %u step %u: object %" PRIu64 " (%u bytes, written %s): data differs from byte %zu",
			      x->run, x->step, x->pos, o->len,
			      o->compressed_session ? "compressed" : "uncompressed", i);
		}
	}
	x->pos++;
}

static size_t pick_buflen(struct ctx *x)
{
	uint32_t len = x->pos < x->n && !x->o[x->pos].fm ? x->o[x->pos].len : 0;
	uint64_t r = below(x, 100);
	if (r < 55)
		return BLK_MAX_MODEL + 64;
	if (r < 70)
		return len;
	if (r < 90)
		return (size_t)below(x, (uint64_t)len + 1);
	return (size_t)below(x, 64);
}

static void op_space(struct ctx *x, bool fms, int64_t count)
{
	/* the model */
	uint64_t pos = x->pos, done = 0;
	uint64_t n = count < 0 ? (uint64_t)(-(count + 1)) + 1 : (uint64_t)count;
	enum vtl_space_stop stop = VTL_SPACE_DONE;
	if (!fms && count > 0) {
		while (done < n) {
			if (pos == x->n) {
				stop = VTL_SPACE_EOD;
				break;
			}
			if (x->o[pos].fm) {
				pos++;
				stop = VTL_SPACE_FILEMARK;
				break;
			}
			pos++;
			done++;
		}
	} else if (!fms && count < 0) {
		while (done < n) {
			if (pos == 0) {
				stop = VTL_SPACE_BOT;
				break;
			}
			if (x->o[pos - 1].fm) {
				pos--;
				stop = VTL_SPACE_FILEMARK;
				break;
			}
			pos--;
			done++;
		}
	} else if (fms && count > 0) {
		while (done < n) {
			if (pos == x->n) {
				stop = VTL_SPACE_EOD;
				break;
			}
			done += x->o[pos].fm;
			pos++;
		}
	} else if (fms && count < 0) {
		while (done < n) {
			if (pos == 0) {
				stop = VTL_SPACE_BOT;
				break;
			}
			pos--;
			done += x->o[pos].fm;
		}
	}
	logf_(x, "space %s %" PRId64 " (model: to %" PRIu64 ", stop %d, residual %" PRIu64 ")",
	      fms ? "filemarks" : "blocks", count, pos, stop, n - done);
	struct vtl_space_result r;
	memset(&r, 0x5a, sizeof(r));
	int rc = fms ? vtl_cart_space_filemarks(CART(x), count, &r)
		     : vtl_cart_space_blocks(CART(x), count, &r);
	MRC(x, fms ? "space filemarks" : "space blocks", rc, 0);
	MEQ(x, "space: stop", r.stop, stop);
	MEQ(x, "space: residual", r.residual, n - done);
	x->n_space_stops += stop != VTL_SPACE_DONE;
	x->pos = pos;
}

static int64_t pick_count(struct ctx *x, bool fms)
{
	uint64_t r = below(x, 100);
	int64_t c;
	if (r < 5)
		return 0;
	if (r == 5 && below(x, 3) == 0) {
		static const int64_t extreme[] = { INT64_MAX, -INT64_MAX, INT64_MIN };
		return extreme[below(x, 3)];
	}
	if (fms)
		c = r < 55 ? 1 : r < 85 ? 2 + (int64_t)below(x, 3) : 5 + (int64_t)below(x, 16);
	else
		c = r < 60 ? 1 + (int64_t)below(x, 5)
			   : r < 88 ? 6 + (int64_t)below(x, 35) : 41 + (int64_t)below(x, 960);
	return below(x, 2) ? c : -c;
}

static void op_erase(struct ctx *x)
{
	logf_(x, "erase");
	int rc = vtl_cart_erase(CART(x));
	count_rc(x, rc);
	if (x->ro) {
		if (!(rc == VTL_E_WORM && x->cfg->worm && x->pos < x->n))
			MRC(x, "erase on a read-only session", rc, VTL_E_READONLY);
		return;
	}
	if (x->cfg->worm && x->pos < x->n) {
		MRC(x, "erase on WORM", rc, VTL_E_WORM);
		return;
	}
	if (x->cfg->worm && rc == VTL_E_WORM)
		return; /* at EOD: nothing to erase either way */
	MRC(x, "erase", rc, 0);
	m_truncate(x, x->pos);
}

static void check_stats(struct ctx *x)
{
	struct vtl_cart_stats st;
	memset(&st, 0xff, sizeof(st));
	vtl_cart_stats(CART(x), &st);
	MEQ(x, "stats.written_bytes", st.written_bytes, x->session_written);
}

static void open_cart(struct ctx *x)
{
	x->params.compression = x->cfg->capacity && !x->cfg->cap_compress ? false : below(x, 2);
	x->params.readonly = x->ro;
	x->comp_on = x->params.compression;
	int rc = vtl_cart_open(x->f->pool, x->barcode, &x->params, x->slot);
	MRC(x, "vtl_cart_open", rc, 0);
	x->pos = 0;
	x->session_written = 0;
	check_stats(x);
}

static void op_reopen(struct ctx *x)
{
	bool ro = below(x, 8) == 0, pool = x->cfg->carts <= 1 && below(x, 4) == 0;
	logf_(x, "close + reopen%s%s", pool ? " (the pool too)" : "", ro ? ", read-only" : "");
	struct vtl_cart *c = CART(x);
	CART(x) = NULL;
	MRC(x, "vtl_cart_close", vtl_cart_close(c), 0);
	if (pool) {
		vtl_pool_close(x->f->pool);
		x->f->pool = NULL;
		char err[256] = "";
		int rc = vtl_pool_open(&x->f->cfg, &x->f->pool, err, sizeof(err));
		if (rc != 0)
			MFAIL(x, "vtl_pool_open again: %d (%s): %s", rc, es(rc), err);
	}
	x->ro = ro;
	open_cart(x);
}

static void op_sync(struct ctx *x)
{
	logf_(x, "sync");
	int rc = vtl_cart_sync(CART(x));
	if (!(x->ro && rc == VTL_E_READONLY))
		MRC(x, "sync", rc, 0);
	check_stats(x);
}

static void op_comp(struct ctx *x)
{
	if (x->cfg->capacity && !x->cfg->cap_compress)
		return;
	x->comp_on = !x->comp_on;
	logf_(x, "compression %s", x->comp_on ? "on" : "off");
	vtl_cart_set_compression(CART(x), x->comp_on);
}

/* Long sequential reads (the read-ahead engages) with locates and writes in between. */
static void op_read_run(struct ctx *x)
{
	if (below(x, 10) < 3) {
		logf_(x, "rewind");
		MRC(x, "rewind", vtl_cart_rewind(CART(x)), 0);
		x->pos = 0;
	} else {
		op_locate(x, below(x, x->n + 1));
	}
	check_position(x);
	unsigned count = 20 + (unsigned)below(x, 150);
	/* In some runs, once: change the tape a little ahead of the reader (likely read
	 * ahead already), then come back and read through it. */
	unsigned change_at = below(x, 10) == 0 && !x->cfg->worm ? (unsigned)below(x, count) : UINT_MAX;
	for (unsigned k = 0; k < count; k++) {
		if (k == change_at) {
			uint64_t back = x->pos, t = x->pos + 1 + below(x, 12);
			if (t <= x->n) {
				op_locate(x, t);
				check_position(x);
				if (below(x, 3))
					op_write(x);
				else
					op_erase(x);
				check_position(x);
				op_locate(x, back);
				check_position(x);
			}
		}
		if (below(x, 100) < 4) {
			op_locate(x, x->pos - below(x, x->pos < 5 ? x->pos + 1 : 6));
		} else {
			bool at_eod = x->pos == x->n;
			op_read(x, BLK_MAX_MODEL + 64);
			x->reads_seq++;
			if (at_eod) {
				check_position(x);
				break;
			}
		}
		check_position(x);
	}
}

static void full_verify(struct ctx *x, const char *why)
{
	logf_(x, "full verify (%s)", why);
	MRC(x, "rewind", vtl_cart_rewind(CART(x)), 0);
	x->pos = 0;
	while (x->pos < x->n) {
		op_read(x, BLK_MAX_MODEL + 64);
		if ((x->pos & 63) == 0)
			check_position(x);
	}
	op_read(x, 16);
	check_position(x);
}

static void do_step(struct ctx *x)
{
	/* Keep the tape (and the run time) bounded. */
	if (x->cfg->max_bytes && x->stored > x->cfg->max_bytes && !x->cfg->worm && !x->ro) {
		op_locate(x, below(x, x->n / 2 + 1));
		check_position(x);
		op_erase(x);
		check_position(x);
		return;
	}
	unsigned total = 0;
	for (int i = 0; i < OP_N; i++)
		total += op_weight[i];
	uint64_t r = below(x, total);
	int op = 0;
	while (r >= op_weight[op]) {
		r -= op_weight[op];
		op++;
	}
	x->n_ops[op]++;
	switch (op) {
	case OP_APPEND:
	case OP_FM_APPEND:
		if (x->pos != x->n) {
			logf_(x, "space eod");
			MRC(x, "space_eod", vtl_cart_space_eod(CART(x)), 0);
			x->pos = x->n;
			check_position(x);
		}
		if (op == OP_APPEND)
			op_write(x);
		else
			op_filemarks(x, 1 + (uint32_t)below(x, 3));
		break;
	case OP_WRITE_HERE:
		op_write(x);
		break;
	case OP_FM_HERE:
		op_filemarks(x, 1 + (uint32_t)below(x, 3));
		break;
	case OP_LOCATE:
		op_locate(x, below(x, 8) == 0 ? x->n + 1 + below(x, 5) : below(x, x->n + 1));
		break;
	case OP_SPACE_B:
		op_space(x, false, pick_count(x, false));
		break;
	case OP_SPACE_F:
		op_space(x, true, pick_count(x, true));
		break;
	case OP_SPACE_EOD:
		logf_(x, "space eod");
		MRC(x, "space_eod", vtl_cart_space_eod(CART(x)), 0);
		x->pos = x->n;
		break;
	case OP_REWIND:
		logf_(x, "rewind");
		MRC(x, "rewind", vtl_cart_rewind(CART(x)), 0);
		x->pos = 0;
		break;
	case OP_READ:
		op_read(x, pick_buflen(x));
		break;
	case OP_ERASE_NEAR_END:
	case OP_OVERWRITE_NEAR_END:
	case OP_OVERWRITE_ANY: {
		uint64_t t;
		if (op == OP_OVERWRITE_ANY)
			t = below(x, 3) ? x->n / 2 + below(x, x->n - x->n / 2 + 1) : below(x, x->n + 1);
		else
			t = x->n - below(x, (x->n < 8 ? x->n : 8) + 1);
		op_locate(x, t);
		check_position(x);
		if (op == OP_ERASE_NEAR_END)
			op_erase(x);
		else if (below(x, 5) == 0)
			op_filemarks(x, 1 + (uint32_t)below(x, 2));
		else
			op_write(x);
		break;
	}
	case OP_ERASE_HERE:
		op_erase(x);
		break;
	case OP_SYNC:
		op_sync(x);
		break;
	case OP_REOPEN:
		op_reopen(x);
		break;
	case OP_COMP:
		op_comp(x);
		break;
	case OP_READ_RUN:
		op_read_run(x);
		break;
	case OP_APPEND_BURST: {
		if (x->pos != x->n) {
			logf_(x, "space eod");
			MRC(x, "space_eod", vtl_cart_space_eod(CART(x)), 0);
			x->pos = x->n;
		}
		unsigned k = 5 + (unsigned)below(x, 36);
		for (unsigned i = 0; i < k; i++) {
			check_position(x);
			if (below(x, 12) == 0)
				op_filemarks(x, 1);
			else
				op_write(x);
		}
		break;
	}
	}
	check_position(x);
}

static void run_model(struct fx *f, const struct run_cfg *cfg, uint64_t test_salt)
{
	fx_pool_config(f, cfg->members, cfg->segsize);
	f->cfg.readahead_depth = cfg->ra_depth;
	f->cfg.readahead_chunk = cfg->ra_chunk;
	f->cfg.readahead_memory = cfg->ra_memory;
	f->cfg.io_threads = cfg->io_threads;
	tl_pool_open(&f->cfg, &f->pool);

	const unsigned nc = cfg->carts > 1 ? 2 : 1;
	struct mlog *lg = talloc((1) * (sizeof(*lg)));
	assert_non_null(lg);
	struct ctx *xs[2] = { NULL, NULL };
	for (unsigned k = 0; k < nc; k++) {
		struct ctx *x = xs[k] = talloc((1) * (sizeof(*x)));
		assert_non_null(x);
		x->f = f;
		x->cfg = cfg;
		x->slot = &f->cart[k];
		x->idx = k;
		x->lg = lg;
		x->wbuf = talloc(RBUF + CANARY);
		x->rbuf = talloc(RBUF + CANARY);
		x->ebuf = talloc(RBUF + CANARY);
		assert_non_null(x->wbuf);
		assert_non_null(x->rbuf);
		assert_non_null(x->ebuf);
	}
	unsigned steps = (unsigned)(cfg->steps * g_scale);
	if (UNDER_ASAN)
		steps /= 2;
	if (steps < 20)
		steps = 20;
	uint64_t t0 = (uint64_t)time(NULL);
	uint64_t total_steps = 0, max_eod = 0, max_stored = 0, sum_eod = 0;
	for (unsigned run = 0; run < cfg->runs; run++) {
		uint64_t s = g_seed ^ (test_salt * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)run << 40);
		uint64_t pick = splitmix64(&s);
		for (unsigned k = 0; k < nc; k++) {
			struct ctx *x = xs[k];
			x->run = run;
			x->step = 0;
			x->run_seed = splitmix64(&s);
			x->rng = x->run_seed;
			x->n = x->pos = x->stored = 0;
			x->ro = false;
			snprintf(x->barcode, sizeof(x->barcode), "MDL%03u%c", run % 1000, 'A' + k);
			memset(&x->params, 0, sizeof(x->params));
			x->params.capacity = cfg->capacity;
			x->params.early_warning = cfg->early_warning;
			x->params.worm = cfg->worm;
			int rc = vtl_cart_create(f->pool, x->barcode);
			MRC(x, "vtl_cart_create", rc, 0);
			open_cart(x);
			check_position(x);
		}
		for (unsigned step = 1; step <= steps; step++) {
			struct ctx *x = xs[nc > 1 ? splitmix64(&pick) % nc : 0];
			x->step = step;
			do_step(x);
			sum_eod += x->n;
			if (x->n > max_eod)
				max_eod = x->n;
			if (x->stored > max_stored)
				max_stored = x->stored;
		}
		total_steps += steps;
		for (unsigned k = 0; k < nc; k++) {
			struct ctx *x = xs[k];
			full_verify(x, "end of run");
			op_reopen(x);
			check_position(x);
			full_verify(x, "after reopen");
			struct vtl_cart *c = CART(x);
			CART(x) = NULL;
			MRC(x, "vtl_cart_close", vtl_cart_close(c), 0);
			MRC(x, "vtl_cart_delete", vtl_cart_delete(f->pool, x->barcode), 0);
		}
	}
	uint64_t reads_seq = 0;
	unsigned ops[OP_N] = { 0 }, eom = 0, ew = 0, worm = 0, shortr = 0, stops = 0, ro = 0;
	for (unsigned k = 0; k < nc; k++) {
		struct ctx *x = xs[k];
		reads_seq += x->reads_seq;
		for (int i = 0; i < OP_N; i++)
			ops[i] += x->n_ops[i];
		eom += x->n_eom;
		ew += x->n_ew;
		worm += x->n_worm;
		shortr += x->n_short_reads;
		stops += x->n_space_stops;
		ro += x->n_ro;
	}
	print_message("  %s: %u run(s), %" PRIu64 " steps, tape of %" PRIu64
		      " objects on average, at most %" PRIu64 " objects / %" PRIu64 " bytes, %" PRIu64
		      " sequential reads, ~%" PRIu64 " s\n",
		      cfg->name, cfg->runs, total_steps, total_steps ? sum_eod / total_steps : 0, max_eod,
		      max_stored, reads_seq, (uint64_t)time(NULL) - t0);
	char line[600];
	int k = 0;
	for (int i = 0; i < OP_N && k >= 0 && (size_t)k < sizeof(line); i++)
		k += snprintf(line + k, sizeof(line) - (size_t)k, " %s %u", op_names[i], ops[i]);
	print_message("  ops:%s\n", line);
	print_message("  outcomes: %u EOM, %u early warnings, %u WORM refusals, %u read-only "
		      "refusals, %u short reads, %u spaces stopped early\n",
		      eom, ew, worm, ro, shortr, stops);
	for (unsigned i = 0; i < nc; i++) {
		tfree(xs[i]->o);
		tfree(xs[i]->wbuf);
		tfree(xs[i]->rbuf);
		tfree(xs[i]->ebuf);
		tfree(xs[i]);
	}
	tfree(lg);
	vtl_pool_close(f->pool);
	f->pool = NULL;
}

/* ------------------------------------------------------------------ tests */

static void test_model_small_segments(void **state)
{
	static const struct run_cfg cfg = {
		.name = "3 members, 64 KiB segments",
		.members = 3,
		.segsize = 64u << 10,
		.runs = 1,
		.steps = 12000,
		.max_bytes = 12u << 20,
	};
	run_model(*state, &cfg, 1);
}

static void test_model_tight_readahead(void **state)
{
	static const struct run_cfg cfg = {
		.name = "2 members, 256 KiB segments, small read-ahead, 1 I/O thread",
		.members = 2,
		.segsize = 256u << 10,
		.ra_depth = 2,
		.ra_chunk = 64u << 10,
		.ra_memory = 128u << 10,
		.io_threads = 1,
		.runs = 1,
		.steps = 8000,
		.max_bytes = 12u << 20,
	};
	run_model(*state, &cfg, 2);
}

static void test_model_capacity(void **state)
{
	static const struct run_cfg cfg = {
		.name = "capacity 1.5 MiB, early warning 200 KiB",
		.members = 3,
		.segsize = 64u << 10,
		.runs = 1,
		.steps = 6000,
		.capacity = 1536u << 10,
		.early_warning = 200u << 10,
	};
	run_model(*state, &cfg, 3);
}

static void test_model_capacity_compressed(void **state)
{
	static const struct run_cfg cfg = {
		.name = "capacity 1 MiB, early warning 128 KiB, compression",
		.members = 2,
		.segsize = 64u << 10,
		.runs = 1,
		.steps = 4000,
		.capacity = 1u << 20,
		.early_warning = 128u << 10,
		.cap_compress = true,
	};
	run_model(*state, &cfg, 7);
}

static void test_model_worm(void **state)
{
	static const struct run_cfg cfg = {
		.name = "WORM",
		.members = 2,
		.segsize = 64u << 10,
		.runs = 1,
		.steps = 2500,
		.worm = true,
	};
	run_model(*state, &cfg, 4);
}

static void test_model_two_carts(void **state)
{
	static const struct run_cfg cfg = {
		.name = "two cartridges interleaved, 2 I/O threads",
		.members = 3,
		.segsize = 64u << 10,
		.io_threads = 2,
		.runs = 1,
		.steps = 8000,
		.max_bytes = 8u << 20,
		.carts = 2,
	};
	run_model(*state, &cfg, 6);
}

static void test_model_many_short_runs(void **state)
{
	static const struct run_cfg cfg = {
		.name = "60 short runs",
		.members = 3,
		.segsize = 64u << 10,
		.runs = 60,
		.steps = 150,
		.max_bytes = 4u << 20,
	};
	run_model(*state, &cfg, 5);
}

int main(void)
{
	g_seed = tl_env_seed();
	g_scale = tl_env_scale();
	printf("test_model: seed %" PRIu64 " (VTL_TEST_SEED=%" PRIu64 " repeats this run)%s\n", g_seed,
	       g_seed, UNDER_ASAN ? ", steps halved under ASan" : "");
	fflush(stdout);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_model_small_segments, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_model_tight_readahead, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_model_capacity, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_model_capacity_compressed, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_model_worm, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_model_two_carts, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_model_many_short_runs, fx_setup, fx_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
