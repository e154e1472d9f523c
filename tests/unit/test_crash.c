/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Crash and corruption tests of the cartridge store.
 *
 * A forked child writes a deterministic sequence of blocks and filemarks
 * (object i is a function of the seed, i and a generation number bumped when
 * the tape is rewritten from some point), syncs now and then and reports
 * each sync through a pipe; it is killed with SIGKILL at a random moment.
 * The parent then checks that the cartridge opens (read-only first, which
 * must change nothing, then writable, which repairs), that every object up
 * to the last reported sync reads back bit-exact, that whatever else was
 * recovered is a prefix of what the child wrote, and that the tape can be
 * appended to. Tails are also damaged after the kill (truncated, zero
 * extended, bytes flipped beyond the last sync point).
 *
 * Damage stands for what a power loss can leave: anything written after the
 * last sync that the store did not flush itself before something depending
 * on it may be missing or garbage. Focused tests build such states
 * deterministically: a torn record under a footer written at a segment
 * change or at close, damaged close markers (end-of-data record, filemark
 * list, index, trailer), and segments an overwrite had removed coming back
 * on other members. A closed cartridge also has bytes flipped inside synced
 * records: such a block reads as VTL_E_MEDIUM, never as wrong data, and the
 * rest of the tape stays readable.
 *
 * The on-disk knowledge used: segments are <member>/<BARCODE>/<seq %08u>.seg,
 * the one with the highest seq is the last, and an uncompressed record is a
 * 32-byte header followed by the block's bytes.
 *
 * VTL_TEST_SEED=<n> repeats the random choices (kill timing done by the
 * parent is still up to the scheduler); VTL_TEST_SCALE=<f> scales the work.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "backend/cartridge.h"
#include "backend/format.h"
#include "backend/pool.h"
#include "common/grow.h"
#include "common/vtl_error.h"
#include "tests/unit/testlib.h"

#define NMEMB 3
#define SEG (64u << 10)
#define MAXOBJ 20000
#define MAXLEN (200u << 10)
#define MAXSEG 4096

static uint64_t g_seed;
static double g_scale = 1.0;

/* What happened to the cartridge under test so far, printed with any failure. */
static char g_hist[8192];

static void hist_add(const char *line)
{
	size_t k = strlen(g_hist);
	if (k + strlen(line) + 8 < sizeof(g_hist))
		snprintf(g_hist + k, sizeof(g_hist) - k, "    %s\n", line);
	if (getenv("VTL_TEST_VERBOSE"))
		print_message("  %s\n", line);
}

static void hist_dump(void)
{
	if (!g_hist[0])
		return;
	/* Line by line: cmocka's print_error formats into a 1 KiB buffer. */
	print_error("history of this cartridge:\n");
	for (const char *l = g_hist; *l;) {
		const char *e = strchr(l, '\n');
		int n = e ? (int)(e - l) : (int)strlen(l);
		print_error("%.*s\n", n, l);
		l += n + (e != NULL);
	}
}

#define CFAIL(...)                                                                             \
	do {                                                                                   \
		hist_dump();                                                                   \
		fail_msg(__VA_ARGS__);                                                         \
	} while (0)

/* ---------------------------------------------------------------- helpers */

/* Object i of generation gen of the sequence seed. */
struct cobj {
	bool fm;
	bool comp;
	uint32_t len;
	uint64_t key;
};

static struct cobj cdesc(uint64_t seed, uint64_t i, uint32_t gen)
{
	uint64_t s = seed ^ (i * 0xd1342543de82ef95ull) ^ ((uint64_t)gen << 48);
	uint64_t r = splitmix64(&s), r2 = splitmix64(&s);
	struct cobj o;
	memset(&o, 0, sizeof(o));
	if (r % 11 == 0) {
		o.fm = true;
		return o;
	}
	uint64_t k = r2 % 100;
	if (k < 85)
		o.len = 1 + (uint32_t)(splitmix64(&s) % 8192);
	else if (k < 98)
		o.len = 8193 + (uint32_t)(splitmix64(&s) % (56u << 10));
	else
		o.len = (64u << 10) + (uint32_t)(splitmix64(&s) % (MAXLEN - (64u << 10)));
	o.comp = (r >> 20) & 1;
	o.key = splitmix64(&s);
	return o;
}

static int fx_setup(void **state)
{
	if (fx_setup_dirs(state, "vtl-crash", NMEMB) != 0)
		return -1;
	struct fx *f = *state;
	fx_pool_config(f, NMEMB, SEG);
	return 0;
}

static void pool_open(struct fx *f)
{
	tl_pool_open(&f->cfg, &f->pool);
}

static void pool_close(struct fx *f)
{
	if (f->cart[0])
		tl_cart_close(&f->cart[0]);
	vtl_pool_close(f->pool);
	f->pool = NULL;
}

static int cart_open(struct fx *f, const char *bc, bool readonly, bool comp)
{
	struct vtl_cart_params p;
	memset(&p, 0, sizeof(p));
	p.readonly = readonly;
	p.compression = comp;
	return vtl_cart_open(f->pool, bc, &p, &f->cart[0]);
}

static void cart_close(struct fx *f)
{
	tl_cart_close(&f->cart[0]);
}

/* ------------------------------------------------------------ segment files */

struct seginfo {
	uint32_t seq;
	unsigned member;
	char path[700];
	uint64_t size;
};

static int seg_cmp(const void *a, const void *b)
{
	const struct seginfo *x = a, *y = b;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* The segment files of barcode, by seq. Plain libc: usable in the child. */
static int list_segs(const struct fx *f, const char *bc, struct seginfo *out, int max)
{
	int n = 0;
	for (unsigned m = 0; m < NMEMB; m++) {
		char d[700];
		snprintf(d, sizeof(d), "%s/%s", f->mpath[m], bc);
		DIR *dir = opendir(d);
		if (!dir)
			continue;
		struct dirent *e;
		while ((e = readdir(dir)) && n < max) {
			unsigned seq;
			char tail[8];
			if (strlen(e->d_name) != 12 || sscanf(e->d_name, "%8u.%3s", &seq, tail) != 2 ||
			    strcmp(tail, "seg") != 0)
				continue;
			struct seginfo *s = &out[n];
			s->seq = seq;
			s->member = m;
			snprintf(s->path, sizeof(s->path), "%.600s/%.12s", d, e->d_name);
			struct stat st;
			if (stat(s->path, &st) != 0)
				continue;
			s->size = (uint64_t)st.st_size;
			n++;
		}
		closedir(dir);
	}
	qsort(out, (size_t)n, sizeof(*out), seg_cmp);
	return n;
}

static bool last_seg(const struct fx *f, const char *bc, struct seginfo *out)
{
	static struct seginfo segs[MAXSEG];
	int n = list_segs(f, bc, segs, MAXSEG);
	if (n <= 0)
		return false;
	*out = segs[n - 1];
	return true;
}

static uint8_t *read_file(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	struct stat st;
	assert_int_equal(fstat(fd, &st), 0);
	uint8_t *b = talloc((size_t)st.st_size + 1);
	assert_non_null(b);
	size_t got = 0;
	while (got < (size_t)st.st_size) {
		ssize_t r = read(fd, b + got, (size_t)st.st_size - got);
		assert_true(r > 0);
		got += (size_t)r;
	}
	close(fd);
	*len = got;
	return b;
}

static void write_file(const char *path, const uint8_t *b, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	size_t put = 0;
	while (put < len) {
		ssize_t r = write(fd, b + put, len - put);
		assert_true(r > 0);
		put += (size_t)r;
	}
	close(fd);
}

static void flip_byte(const char *path, uint64_t off, uint8_t mask)
{
	int fd = open(path, O_RDWR);
	assert_true(fd >= 0);
	uint8_t b;
	assert_int_equal(pread(fd, &b, 1, (off_t)off), 1);
	b ^= mask ? mask : 0x01;
	assert_int_equal(pwrite(fd, &b, 1, (off_t)off), 1);
	close(fd);
}

/* All files of a cartridge (every member), to restore between damage trials. */
struct snapfile {
	char path[700];
	uint8_t *data;
	size_t len;
};

struct snap {
	struct snapfile *f;
	unsigned n;
};

static void snap_take(const struct fx *f, const char *bc, struct snap *s)
{
	s->f = NULL;
	s->n = 0;
	for (unsigned m = 0; m < NMEMB; m++) {
		char d[700];
		snprintf(d, sizeof(d), "%s/%s", f->mpath[m], bc);
		DIR *dir = opendir(d);
		if (!dir)
			continue;
		struct dirent *e;
		while ((e = readdir(dir))) {
			char p[700];
			snprintf(p, sizeof(p), "%.600s/%.90s", d, e->d_name);
			struct stat st;
			if (stat(p, &st) != 0 || !S_ISREG(st.st_mode))
				continue;
			s->f = trealloc(s->f, (s->n + 1) * sizeof(*s->f));
			assert_non_null(s->f);
			struct snapfile *sf = &s->f[s->n++];
			snprintf(sf->path, sizeof(sf->path), "%s", p);
			sf->data = read_file(p, &sf->len);
		}
		closedir(dir);
	}
}

static void snap_restore(const struct fx *f, const char *bc, const struct snap *s)
{
	for (unsigned m = 0; m < NMEMB; m++) {
		char d[700];
		snprintf(d, sizeof(d), "%s/%s", f->mpath[m], bc);
		rm_rf(d);
		mkdir(d, 0755);
	}
	for (unsigned i = 0; i < s->n; i++)
		write_file(s->f[i].path, s->f[i].data, s->f[i].len);
}

static void snap_free(struct snap *s)
{
	for (unsigned i = 0; i < s->n; i++)
		tfree(s->f[i].data);
	tfree(s->f);
	s->f = NULL;
	s->n = 0;
}

/*
 * Diagnostics only (nothing is asserted on it): whether a segment file ends
 * with a footer trailer, i.e. was sealed. docs/format.md: a 48-byte trailer
 * starting with "VTLEND\r\n" closes a sealed segment.
 */
static bool seg_looks_sealed(const char *path)
{
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return false;
	struct stat st;
	char m[8];
	bool r = fstat(fd, &st) == 0 && st.st_size >= 48 &&
		 pread(fd, m, 8, st.st_size - 48) == 8 && memcmp(m, "VTLEND\r\n", 8) == 0;
	close(fd);
	return r;
}

/* A digest of every segment file (name, size, bytes): read-only opens must not change it. */
static uint64_t segs_digest(const struct fx *f, const char *bc)
{
	static struct seginfo segs[MAXSEG];
	int n = list_segs(f, bc, segs, MAXSEG);
	uint64_t h = 1469598103934665603ull;
	for (int i = 0; i < n; i++) {
		size_t len;
		uint8_t *b = read_file(segs[i].path, &len);
		h = (h ^ segs[i].seq) * 1099511628211ull;
		h = (h ^ len) * 1099511628211ull;
		for (size_t k = 0; k < len; k++)
			h = (h ^ b[k]) * 1099511628211ull;
		tfree(b);
	}
	return h;
}

/* ----------------------------------------------------------- verification */

struct expect {
	uint64_t seed;
	const uint32_t *gen; /* generation of each object number */
};

/*
 * Reads the tape from BOT up to its EOD; every object must be object i of
 * the expected sequence. Returns the EOD.
 */
static uint64_t verify_prefix(struct vtl_cart *c, const struct expect *e, const char *ctx)
{
	struct vtl_position p;
	vtl_cart_position(c, &p);
	if (p.object != 0 || !p.bot)
		CFAIL("%s: not at BOT after open (object %" PRIu64 ")", ctx, p.object);
	uint64_t eod = p.eod;
	if (eod > MAXOBJ)
		CFAIL("%s: EOD %" PRIu64 " beyond anything written", ctx, eod);
	uint8_t *want = talloc(MAXLEN), *got = talloc(MAXLEN + 64);
	assert_non_null(want);
	assert_non_null(got);
	uint64_t files = 0;
	for (uint64_t i = 0; i <= eod; i++) {
		struct vtl_read_result r;
		memset(&r, 0x5a, sizeof(r));
		int rc = vtl_cart_read(c, got, MAXLEN + 64, &r);
		if (rc != 0)
			CFAIL("%s: read of object %" PRIu64 " of %" PRIu64 ": %d (%s)", ctx, i, eod, rc,
				 es(rc));
		if (r.object != i)
			CFAIL("%s: read at %" PRIu64 " reports object %" PRIu64, ctx, i, r.object);
		if (i == eod) {
			if (r.type != VTL_OBJ_EOD)
				CFAIL("%s: object %" PRIu64 " (EOD) read as type %d", ctx, i, r.type);
			break;
		}
		struct cobj o = cdesc(e->seed, i, e->gen[i]);
		if (o.fm) {
			if (r.type != VTL_OBJ_FILEMARK)
				CFAIL("%s: object %" PRIu64 " should be a filemark, read type %d "
					 "length %u",
					 ctx, i, r.type, r.length);
			files++;
			continue;
		}
		if (r.type != VTL_OBJ_DATA || r.length != o.len || r.copied != o.len)
			CFAIL("%s: object %" PRIu64 " should be %u bytes of data, read type %d "
				 "length %u copied %u",
				 ctx, i, o.len, r.type, r.length, r.copied);
		gen_data(want, o.len, o.key, o.comp);
		if (memcmp(want, got, o.len) != 0)
			CFAIL("%s: object %" PRIu64 " (%u bytes) reads back different data", ctx, i,
				 o.len);
	}
	vtl_cart_position(c, &p);
	if (p.object != eod || p.file != files)
		CFAIL("%s: at EOD the position is object %" PRIu64 " file %" PRIu64
			 ", expected %" PRIu64 " / %" PRIu64,
			 ctx, p.object, p.file, eod, files);
	tfree(want);
	tfree(got);
	return eod;
}

static int write_obj(struct vtl_cart *c, const struct cobj *o, uint8_t *buf)
{
	if (o->fm)
		return vtl_cart_write_filemarks(c, 1);
	gen_data(buf, o->len, o->key, o->comp);
	return vtl_cart_write_block(c, buf, o->len);
}

/* ----------------------------------------------------------- the child */

enum { MSG_SYNCED = 1, MSG_INTENT = 2, MSG_ERASED = 3, MSG_DONE = 4, MSG_FAILED = 5 };

struct msg {
	uint32_t kind;
	uint32_t seq;   /* last segment after the sync */
	uint64_t count; /* objects guaranteed from now on */
	uint64_t size;  /* size of that segment after the sync */
};

struct plan {
	const char *barcode;
	uint64_t seed;
	uint32_t *gen;     /* the child's own copy after fork */
	int64_t erase_at;  /* <0: none */
	uint32_t new_gen;
	unsigned steps;
	int64_t kill_step; /* <0: never kill itself */
	unsigned sync_one_in;
	bool comp;
	int fd;
};

static void child_send(const struct plan *pl, const struct fx *f, uint32_t kind, uint64_t count)
{
	struct msg m;
	memset(&m, 0, sizeof(m));
	m.kind = kind;
	m.count = count;
	struct seginfo s;
	if (kind != MSG_INTENT && last_seg(f, pl->barcode, &s)) {
		m.seq = s.seq;
		m.size = s.size;
	} else {
		m.seq = UINT32_MAX;
	}
	if (write(pl->fd, &m, sizeof(m)) != (ssize_t)sizeof(m))
		_exit(40);
}

/* Reports a failed call (what: 30 pool open ... 38 close; rc; at object) and exits. */
static void child_fail(const struct plan *pl, int what, int rc, uint64_t at)
{
	struct msg m;
	memset(&m, 0, sizeof(m));
	m.kind = MSG_FAILED;
	m.seq = (uint32_t)what;
	m.size = (uint64_t)(int64_t)rc;
	m.count = at;
	if (write(pl->fd, &m, sizeof(m)) != (ssize_t)sizeof(m))
		_exit(41);
	_exit(what);
}

/* Exit codes: 0 done; 3x: an API call failed (reported with MSG_FAILED first). */
static void child_main(struct fx *f, struct plan *pl)
{
	alarm(120);
	struct vtl_pool *pool = NULL;
	char err[256];
	int rc = vtl_pool_open(&f->cfg, &pool, err, sizeof(err));
	if (rc != 0)
		child_fail(pl, 30, rc, 0);
	struct vtl_cart_params p;
	memset(&p, 0, sizeof(p));
	p.compression = pl->comp;
	struct vtl_cart *c = NULL;
	rc = vtl_cart_open(pool, pl->barcode, &p, &c);
	if (rc != 0)
		child_fail(pl, 31, rc, 0);
	uint8_t *buf = malloc(MAXLEN);
	if (!buf)
		_exit(32);
	uint64_t s = pl->seed ^ 0xc0ffee ^ ((uint64_t)pl->new_gen << 32);
	uint64_t cur;
	if (pl->erase_at >= 0) {
		cur = (uint64_t)pl->erase_at;
		child_send(pl, f, MSG_INTENT, cur);
		if ((rc = vtl_cart_locate(c, cur)) != 0 || (rc = vtl_cart_erase(c)) != 0 ||
		    (rc = vtl_cart_sync(c)) != 0)
			child_fail(pl, 33, rc, cur);
		for (uint64_t i = cur; i < MAXOBJ; i++)
			pl->gen[i] = pl->new_gen;
		child_send(pl, f, MSG_ERASED, cur);
	} else {
		if ((rc = vtl_cart_space_eod(c)) != 0)
			child_fail(pl, 34, rc, 0);
		struct vtl_position pos;
		vtl_cart_position(c, &pos);
		cur = pos.eod;
	}
	for (unsigned step = 0; step < pl->steps && cur < MAXOBJ; step++) {
		if ((int64_t)step == pl->kill_step)
			raise(SIGKILL);
		struct cobj o = cdesc(pl->seed, cur, pl->gen[cur]);
		if ((rc = write_obj(c, &o, buf)) < 0)
			child_fail(pl, o.fm ? 39 : 35, rc, cur);
		cur++;
		uint64_t r = splitmix64(&s);
		if (r % pl->sync_one_in == 0) {
			if ((rc = vtl_cart_sync(c)) != 0)
				child_fail(pl, 36, rc, cur);
			child_send(pl, f, MSG_SYNCED, cur);
		}
		if ((r >> 32) % 97 == 0)
			vtl_cart_set_compression(c, (r >> 40) & 1);
	}
	if ((rc = vtl_cart_sync(c)) != 0)
		child_fail(pl, 37, rc, cur);
	child_send(pl, f, MSG_SYNCED, cur);
	if ((rc = vtl_cart_close(c)) != 0)
		child_fail(pl, 38, rc, cur);
	child_send(pl, f, MSG_DONE, cur);
	vtl_pool_close(pool);
	_exit(0);
}

struct outcome {
	uint64_t guaranteed; /* objects that must be there */
	uint32_t sync_seq;   /* last segment at the last sync point (UINT32_MAX: unknown) */
	uint64_t sync_size;
	bool done;           /* the child closed the cartridge */
	bool killed;
	unsigned syncs;
};

/*
 * Forks a child running plan; kills it after delay_us (0: never, let it finish
 * or kill itself) and collects its reports into *out (starting from *out).
 */
static void run_child(struct fx *f, struct plan *pl, unsigned delay_us, uint32_t *gen,
		      struct outcome *out)
{
	int fds[2];
	assert_int_equal(pipe(fds), 0);
	fflush(NULL);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(fds[0]);
		pl->fd = fds[1];
		child_main(f, pl);
		_exit(99);
	}
	close(fds[1]);
	if (delay_us) {
		usleep(delay_us);
		kill(pid, SIGKILL);
	}
	int st = 0;
	unsigned waited = 0;
	for (;;) {
		pid_t w = waitpid(pid, &st, WNOHANG);
		if (w == pid)
			break;
		assert_true(w == 0);
		if (++waited > 60 * 1000) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			close(fds[0]);
			CFAIL("the writer child hung for 60 s");
		}
		usleep(1000);
	}
	struct msg m;
	ssize_t r;
	char failed[200] = "";
	while ((r = read(fds[0], &m, sizeof(m))) == (ssize_t)sizeof(m)) {
		switch (m.kind) {
		case MSG_FAILED: {
			static const char *const calls[] = { "vtl_pool_open", "vtl_cart_open", "?",
							     "locate/erase/sync for the rewrite",
							     "vtl_cart_space_eod", "vtl_cart_write_block",
							     "vtl_cart_sync", "vtl_cart_sync before close",
							     "vtl_cart_close", "vtl_cart_write_filemarks" };
			int rc = (int)(int64_t)m.size;
			snprintf(failed, sizeof(failed), "%s at object %" PRIu64 ": %d (%s)",
				 m.seq >= 30 && m.seq <= 39 ? calls[m.seq - 30] : "?", m.count, rc,
				 es(rc));
			break;
		}
		case MSG_INTENT:
			if (m.count < out->guaranteed)
				out->guaranteed = m.count;
			break;
		case MSG_ERASED:
			for (uint64_t i = m.count; i < MAXOBJ; i++)
				gen[i] = pl->new_gen;
			/* fall through */
		case MSG_SYNCED:
			out->guaranteed = m.count;
			out->sync_seq = m.seq;
			out->sync_size = m.size;
			out->syncs++;
			break;
		case MSG_DONE:
			out->guaranteed = m.count;
			out->done = true;
			break;
		default:
			CFAIL("bad message from the child");
		}
	}
	close(fds[0]);
	if (WIFSIGNALED(st)) {
		if (WTERMSIG(st) != SIGKILL)
			CFAIL("the writer child died of signal %d", WTERMSIG(st));
		out->killed = true;
	} else if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		CFAIL("the writer child (cartridge %s, seed %" PRIu64 ") failed: %s (exit status %d)",
			 pl->barcode, pl->seed, failed, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	}
}

/* ------------------------------------------------------------ tail damage */

enum damage {
	DMG_NONE,
	DMG_TRUNC_TAIL, /* truncate the last segment beyond the last sync point */
	DMG_FLIP_TAIL,  /* flip bytes beyond the last sync point */
	DMG_ZERO_EXTEND, /* the file grew but the data never came: zeros */
	DMG_TRUNC_ANY,  /* truncate the last segment anywhere: only a prefix is owed */
	DMG_N
};

static const char *const dmg_names[DMG_N] = { "none", "truncate tail", "flip tail",
					      "zero-extend", "truncate anywhere" };

/*
 * Applies damage d to the last segment of bc. The region beyond the sync
 * point is: in the segment the sync point names, from its size at the sync on;
 * all of any later segment. Returns false if there was nothing to damage.
 */
static bool apply_damage(struct fx *f, const char *bc, enum damage d, const struct outcome *o,
			 uint64_t *rng, char *what, size_t whatlen)
{
	struct seginfo s;
	snprintf(what, whatlen, "%s", dmg_names[d]);
	if (d == DMG_NONE || !last_seg(f, bc, &s))
		return d == DMG_NONE;
	uint64_t lo;
	if (o->sync_seq == UINT32_MAX)
		return false;
	if (s.seq > o->sync_seq)
		lo = 0;
	else if (s.seq == o->sync_seq)
		lo = o->sync_size < s.size ? o->sync_size : s.size;
	else
		return false;
	/*
	 * Sealing syncs the records, then the footer (docs/format.md): a sealed
	 * segment is durable whole, so nothing in it is beyond the sync point.
	 */
	if (d != DMG_TRUNC_ANY && seg_looks_sealed(s.path))
		lo = s.size;
	switch (d) {
	case DMG_TRUNC_TAIL:
	case DMG_TRUNC_ANY: {
		uint64_t from = d == DMG_TRUNC_ANY ? 0 : lo;
		uint64_t len = from + splitmix64(rng) % (s.size - from + 1);
		assert_int_equal(truncate(s.path, (off_t)len), 0);
		snprintf(what, whatlen, "%s: seg %u cut from %" PRIu64 " to %" PRIu64 " (synced %" PRIu64
			 ")",
			 dmg_names[d], s.seq, s.size, len, lo);
		return true;
	}
	case DMG_FLIP_TAIL: {
		if (s.size <= lo)
			return false;
		unsigned k = 1 + (unsigned)(splitmix64(rng) % 4);
		uint64_t first = UINT64_MAX;
		for (unsigned i = 0; i < k; i++) {
			uint64_t off = lo + splitmix64(rng) % (s.size - lo);
			if (off < first)
				first = off;
			flip_byte(s.path, off, (uint8_t)(1u << (splitmix64(rng) % 8)));
		}
		snprintf(what, whatlen, "%s: seg %u (%" PRIu64 " bytes), %u flips from %" PRIu64
			 " (synced %" PRIu64 ")",
			 dmg_names[d], s.seq, s.size, k, first, lo);
		return true;
	}
	case DMG_ZERO_EXTEND: {
		uint64_t add = 1 + splitmix64(rng) % 70000;
		assert_int_equal(truncate(s.path, (off_t)(s.size + add)), 0);
		snprintf(what, whatlen, "%s: seg %u +%" PRIu64 " zero bytes", dmg_names[d], s.seq, add);
		return true;
	}
	default:
		return false;
	}
}

/*
 * Opens the cartridge read-only (must change nothing) and then writable
 * (repairs), checks both see a prefix of the expected sequence at least
 * min_eod long, closes. Returns the EOD.
 */
static uint64_t recover_and_check(struct fx *f, const char *bc, const struct expect *e, uint64_t min_eod,
				  const char *ctx)
{
	char c2[512];
	uint64_t before = segs_digest(f, bc);
	pool_open(f);
	int rc = cart_open(f, bc, true, false);
	if (rc != 0)
		CFAIL("%s: read-only open: %d (%s)", ctx, rc, es(rc));
	snprintf(c2, sizeof(c2), "%s, read-only", ctx);
	uint64_t eod_ro = verify_prefix(f->cart[0], e, c2);
	cart_close(f);
	pool_close(f);
	if (segs_digest(f, bc) != before)
		CFAIL("%s: a read-only open changed the segment files", ctx);

	pool_open(f);
	rc = cart_open(f, bc, false, false);
	if (rc != 0)
		CFAIL("%s: writable open: %d (%s)", ctx, rc, es(rc));
	snprintf(c2, sizeof(c2), "%s, writable", ctx);
	uint64_t eod = verify_prefix(f->cart[0], e, c2);
	if (eod < min_eod)
		CFAIL("%s: recovered EOD %" PRIu64 ", but %" PRIu64 " objects were synced", ctx, eod,
			 min_eod);
	if (eod != eod_ro)
		CFAIL("%s: read-only open saw EOD %" PRIu64 ", writable open %" PRIu64, ctx, eod_ro,
			 eod);
	cart_close(f);
	pool_close(f);
	/* The repair is durable and idempotent. */
	pool_open(f);
	rc = cart_open(f, bc, false, false);
	if (rc != 0)
		CFAIL("%s: second writable open: %d (%s)", ctx, rc, es(rc));
	struct vtl_position p;
	vtl_cart_position(f->cart[0], &p);
	if (p.eod != eod)
		CFAIL("%s: EOD %" PRIu64 " after the repair, %" PRIu64 " on the next open", ctx, eod,
			 p.eod);
	cart_close(f);
	pool_close(f);
	return eod;
}

/* Appends n objects of the expected sequence at EOD, closes, reopens and verifies all. */
static uint64_t append_and_verify(struct fx *f, const char *bc, const struct expect *e, unsigned n,
				  const char *ctx)
{
	uint8_t *buf = talloc(MAXLEN);
	assert_non_null(buf);
	pool_open(f);
	EXPECT_RC(cart_open(f, bc, false, true), 0);
	EXPECT_RC(vtl_cart_space_eod(f->cart[0]), 0);
	struct vtl_position p;
	vtl_cart_position(f->cart[0], &p);
	uint64_t eod = p.eod;
	for (unsigned i = 0; i < n; i++) {
		struct cobj o = cdesc(e->seed, eod + i, e->gen[eod + i]);
		int rc = write_obj(f->cart[0], &o, buf);
		if (rc != 0)
			CFAIL("%s: append of object %" PRIu64 ": %d (%s)", ctx, eod + i, rc, es(rc));
	}
	cart_close(f);
	EXPECT_RC(cart_open(f, bc, false, false), 0);
	uint64_t got = verify_prefix(f->cart[0], e, ctx);
	if (got != eod + n)
		CFAIL("%s: EOD %" PRIu64 " after appending %u to %" PRIu64, ctx, got, n, eod);
	cart_close(f);
	pool_close(f);
	tfree(buf);
	return got;
}

/* ------------------------------------------------------------------ tests */

static unsigned scaled(unsigned n)
{
	double v = n * g_scale;
	if (UNDER_ASAN)
		v /= 2;
	return v < 1 ? 1 : (unsigned)v;
}

/*
 * Cycles of: a child writes (sometimes rewriting the tape from some point
 * first), is killed or finishes; the tail may be damaged; the parent checks
 * recovery. Several seeds.
 */
static void test_crash_cycles(void **state)
{
	struct fx *f = *state;
	const unsigned seeds = scaled(8), cycles = 5;
	uint32_t *gen = talloc((MAXOBJ) * (sizeof(*gen)));
	assert_non_null(gen);
	unsigned stats_kill_self = 0, stats_kill_parent = 0, stats_done = 0, stats_dmg[DMG_N] = { 0 };
	unsigned stats_skipped = 0;
	for (unsigned si = 0; si < seeds; si++) {
		uint64_t rng = g_seed ^ (0x51ed270b27b1d7ull * (si + 1));
		uint64_t seed = splitmix64(&rng);
		char bc[16];
		snprintf(bc, sizeof(bc), "CRASH%02u", si);
		memset(gen, 0, MAXOBJ * sizeof(*gen));
		struct expect e = { .seed = seed, .gen = gen };
		g_hist[0] = '\0';
		pool_open(f);
		EXPECT_RC(vtl_cart_create(f->pool, bc), 0);
		pool_close(f);
		uint64_t eod = 0;
		for (unsigned cy = 1; cy <= cycles; cy++) {
			struct plan pl;
			memset(&pl, 0, sizeof(pl));
			pl.barcode = bc;
			pl.seed = seed;
			pl.gen = gen;
			pl.new_gen = cy;
			pl.erase_at = eod > 0 && splitmix64(&rng) % 3 == 0
					      ? (int64_t)(splitmix64(&rng) % (eod + 1))
					      : -1;
			pl.steps = 100 + (unsigned)(splitmix64(&rng) % 300);
			pl.sync_one_in = 4 + (unsigned)(splitmix64(&rng) % 20);
			pl.comp = splitmix64(&rng) & 1;
			unsigned mode = (unsigned)(splitmix64(&rng) % 10), delay = 0;
			pl.kill_step = -1;
			if (mode < 5)
				pl.kill_step = (int64_t)(splitmix64(&rng) % pl.steps);
			else if (mode < 9)
				delay = 1000 + (unsigned)(splitmix64(&rng) % 60000);
			struct outcome o = { .guaranteed = eod, .sync_seq = UINT32_MAX };
			struct seginfo ls;
			if (last_seg(f, bc, &ls)) {
				o.sync_seq = ls.seq; /* the cleanly closed state is durable */
				o.sync_size = ls.size;
			}
			char pre[300];
			snprintf(pre, sizeof(pre),
				 "cycle %u: child writes %u objects from %s%" PRId64 ", sync 1 in %u, "
				 "compression %d, %s %" PRId64,
				 cy, pl.steps, pl.erase_at >= 0 ? "a rewrite at " : "EOD ",
				 pl.erase_at >= 0 ? pl.erase_at : (int64_t)eod, pl.sync_one_in, pl.comp,
				 pl.kill_step >= 0 ? "kills itself at step" : "parent kills after us",
				 pl.kill_step >= 0 ? pl.kill_step : (int64_t)delay);
			hist_add(pre);
			run_child(f, &pl, delay, gen, &o);
			stats_kill_self += o.killed && pl.kill_step >= 0;
			stats_kill_parent += o.killed && pl.kill_step < 0;
			stats_done += o.done;

			bool was_sealed = last_seg(f, bc, &ls) && seg_looks_sealed(ls.path);
			enum damage d = DMG_NONE;
			uint64_t r = splitmix64(&rng) % 20;
			if (r >= 10)
				d = r < 13 ? DMG_TRUNC_TAIL : r < 16 ? DMG_FLIP_TAIL : r < 18 ? DMG_ZERO_EXTEND
											      : DMG_TRUNC_ANY;
			char what[300];
			if (!apply_damage(f, bc, d, &o, &rng, what, sizeof(what))) {
				stats_skipped += d != DMG_NONE;
				d = DMG_NONE;
				snprintf(what, sizeof(what), "none");
			}
			stats_dmg[d]++;
			char post[400];
			snprintf(post, sizeof(post),
				 "         %s, %u syncs, %" PRIu64 " objects synced; last segment %ssealed; "
				 "damage: %s",
				 o.done ? "finished" : "killed", o.syncs, o.guaranteed,
				 was_sealed ? "" : "not ", what);
			hist_add(post);
			char ctx[600];
			snprintf(ctx, sizeof(ctx),
				 "seed %" PRIu64 " (VTL_TEST_SEED=%" PRIu64 ") cartridge %s cycle %u: "
				 "%s%s, erase at %" PRId64 ", %u syncs, %" PRIu64
				 " objects synced, last segment %ssealed; damage: %s",
				 seed, g_seed, bc, cy,
				 o.done ? "child finished" : "child killed",
				 pl.kill_step >= 0 ? " (by itself)" : "", pl.erase_at, o.syncs,
				 o.guaranteed, was_sealed ? "" : "not ", what);
			eod = recover_and_check(f, bc, &e, d == DMG_TRUNC_ANY ? 0 : o.guaranteed, ctx);
			snprintf(post, sizeof(post), "         recovered EOD %" PRIu64, eod);
			hist_add(post);
			if (o.done && d == DMG_NONE && eod != o.guaranteed)
				CFAIL("%s: a cleanly closed tape of %" PRIu64 " objects came back with %" PRIu64,
					 ctx, o.guaranteed, eod);
		}
		char ctx[128];
		snprintf(ctx, sizeof(ctx), "seed %" PRIu64 " cartridge %s: final append", seed, bc);
		append_and_verify(f, bc, &e, 25, ctx);
		g_hist[0] = '\0';
		pool_open(f);
		EXPECT_RC(vtl_cart_delete(f->pool, bc), 0);
		pool_close(f);
	}
	print_message("  %u seeds x %u cycles: %u killed themselves, %u killed by the parent, %u "
		      "finished; damage none %u, truncate tail %u, flip tail %u, zero-extend %u, "
		      "truncate anywhere %u (%u skipped: nothing past the sync point)\n",
		      seeds, cycles, stats_kill_self, stats_kill_parent, stats_done, stats_dmg[0],
		      stats_dmg[1], stats_dmg[2], stats_dmg[3], stats_dmg[4], stats_skipped);
	tfree(gen);
}

/*
 * One killed writer with a known sync point; then, from a snapshot of its
 * files, many kinds of tail damage, each checked.
 */
static void test_tail_damage_after_kill(void **state)
{
	struct fx *f = *state;
	const char *bc = "TAIL01";
	uint32_t *gen = talloc((MAXOBJ) * (sizeof(*gen)));
	assert_non_null(gen);
	uint64_t rng = g_seed ^ 0x7a11;
	uint64_t seed = splitmix64(&rng);
	struct expect e = { .seed = seed, .gen = gen };
	pool_open(f);
	EXPECT_RC(vtl_cart_create(f->pool, bc), 0);
	pool_close(f);
	struct plan pl;
	memset(&pl, 0, sizeof(pl));
	pl.barcode = bc;
	pl.seed = seed;
	pl.gen = gen;
	pl.erase_at = -1;
	pl.steps = 400;
	pl.sync_one_in = 1000000; /* one sync, the one below */
	pl.kill_step = -1;
	/* First child: writes 250 objects, syncs, closes. Second: appends, syncs a few times, dies. */
	pl.steps = 250;
	struct outcome o = { .guaranteed = 0, .sync_seq = UINT32_MAX };
	run_child(f, &pl, 0, gen, &o);
	assert_true(o.done);
	pl.steps = 300;
	pl.sync_one_in = 40;
	pl.kill_step = 280;
	pl.comp = true;
	o.done = false;
	run_child(f, &pl, 0, gen, &o);
	assert_true(o.killed);
	print_message("  killed after %" PRIu64 " synced objects (sync point: seg %u, %" PRIu64
		      " bytes)\n",
		      o.guaranteed, o.sync_seq, o.sync_size);
	assert_true(o.guaranteed >= 250);
	struct snap sn;
	snap_take(f, bc, &sn);
	unsigned trials = scaled(24);
	for (unsigned t = 0; t < trials; t++) {
		snap_restore(f, bc, &sn);
		enum damage d = (enum damage)(1 + t % (DMG_N - 1));
		char what[300], ctx[600];
		if (!apply_damage(f, bc, d, &o, &rng, what, sizeof(what)))
			continue;
		snprintf(ctx, sizeof(ctx), "seed %" PRIu64 " trial %u: %s", g_seed, t, what);
		recover_and_check(f, bc, &e, d == DMG_TRUNC_ANY ? 0 : o.guaranteed, ctx);
		if (t % 4 == 0)
			append_and_verify(f, bc, &e, 10, ctx);
	}
	snap_free(&sn);
	tfree(gen);
}

/* A cleanly closed cartridge whose last segment loses bytes at its end. */
static void test_truncate_after_clean_close(void **state)
{
	struct fx *f = *state;
	const char *bc = "CLEAN1";
	uint32_t *gen = talloc((MAXOBJ) * (sizeof(*gen)));
	assert_non_null(gen);
	uint64_t rng = g_seed ^ 0xc1ea;
	struct expect e = { .seed = splitmix64(&rng), .gen = gen };
	uint8_t *buf = talloc(MAXLEN);
	assert_non_null(buf);
	pool_open(f);
	EXPECT_RC(vtl_cart_create(f->pool, bc), 0);
	EXPECT_RC(cart_open(f, bc, false, false), 0);
	const unsigned n = 150;
	for (unsigned i = 0; i < n; i++) {
		struct cobj ob = cdesc(e.seed, i, 0);
		assert_true(write_obj(f->cart[0], &ob, buf) >= 0);
	}
	EXPECT_RC(vtl_cart_sync(f->cart[0]), 0);
	struct seginfo s1, s2;
	memset(&s1, 0, sizeof(s1));
	memset(&s2, 0, sizeof(s2));
	assert_true(last_seg(f, bc, &s1));
	cart_close(f);
	pool_close(f);
	assert_true(last_seg(f, bc, &s2));
	print_message("  last segment %u: %" PRIu64 " bytes after sync, %u: %" PRIu64
		      " after close\n",
		      s1.seq, s1.size, s2.seq, s2.size);
	struct snap sn;
	snap_take(f, bc, &sn);
	uint64_t lens[40];
	unsigned nl = 0;
	const uint64_t fixed[] = { 0, 1, 127, 128, 129, s2.size - 1, s2.size - 48, s2.size - 49,
				   s2.size / 2 };
	for (unsigned i = 0; i < VTL_ARRAY_SIZE(fixed); i++)
		if (fixed[i] <= s2.size)
			lens[nl++] = fixed[i];
	if (s1.seq == s2.seq && s1.size <= s2.size) {
		lens[nl++] = s1.size;
		if (s1.size > 0)
			lens[nl++] = s1.size - 1;
		lens[nl++] = s1.size + 1 <= s2.size ? s1.size + 1 : s2.size;
		for (unsigned i = 0; i < 6; i++)
			lens[nl++] = s1.size + splitmix64(&rng) % (s2.size - s1.size + 1);
	}
	unsigned rnd_trials = scaled(8);
	for (unsigned i = 0; i < rnd_trials && nl < 40; i++)
		lens[nl++] = splitmix64(&rng) % (s2.size + 1);
	for (unsigned t = 0; t < nl; t++) {
		snap_restore(f, bc, &sn);
		assert_int_equal(truncate(s2.path, (off_t)lens[t]), 0);
		bool whole = s1.seq == s2.seq && lens[t] >= s1.size;
		char ctx[300];
		snprintf(ctx, sizeof(ctx), "seed %" PRIu64 ": last segment (%" PRIu64
			 " bytes, %" PRIu64 " at the sync) cut to %" PRIu64,
			 g_seed, s2.size, s1.size, lens[t]);
		recover_and_check(f, bc, &e, whole ? n : 0, ctx);
		if (t % 3 == 0)
			append_and_verify(f, bc, &e, 5, ctx);
	}
	/* Zeros after the trailer, and after a cut trailer. */
	for (unsigned t = 0; t < 2; t++) {
		snap_restore(f, bc, &sn);
		assert_int_equal(truncate(s2.path, (off_t)(s2.size - (t ? 20 : 0) + 4096)), 0);
		char ctx[300];
		snprintf(ctx, sizeof(ctx), "last segment %s, then 4096 zero bytes",
			 t ? "cut by 20 bytes" : "whole");
		recover_and_check(f, bc, &e, s1.seq == s2.seq ? n : 0, ctx);
	}
	snap_free(&sn);
	tfree(buf);
	tfree(gen);
}

/* Finds the payload of an uncompressed block by its first 64 bytes. */
static bool find_payload(struct fx *f, const char *bc, const uint8_t *want, size_t len,
			 struct seginfo *where, uint64_t *off)
{
	static struct seginfo segs[MAXSEG];
	int n = list_segs(f, bc, segs, MAXSEG);
	size_t probe = len < 64 ? len : 64;
	for (int i = 0; i < n; i++) {
		size_t flen;
		uint8_t *b = read_file(segs[i].path, &flen);
		uint8_t *p = memmem(b, flen, want, probe);
		if (p) {
			*where = segs[i];
			*off = (uint64_t)(p - b);
			tfree(b);
			return true;
		}
		tfree(b);
	}
	return false;
}

/* The corruption tests' cartridge: 90 objects, blocks of 5000 random bytes, a filemark every 15. */
#define CN 90
static bool corr_is_fm(unsigned i)
{
	return i % 15 == 14;
}

static void corr_block(uint8_t *b, unsigned i)
{
	gen_data(b, 5000, 1000 + i, false);
}

static void corr_build(struct fx *f, const char *bc)
{
	uint8_t b[5000];
	pool_open(f);
	EXPECT_RC(vtl_cart_create(f->pool, bc), 0);
	EXPECT_RC(cart_open(f, bc, false, false), 0);
	for (unsigned i = 0; i < CN; i++) {
		if (corr_is_fm(i)) {
			EXPECT_RC(vtl_cart_write_filemarks(f->cart[0], 1), 0);
		} else {
			corr_block(b, i);
			EXPECT_RC(vtl_cart_write_block(f->cart[0], b, sizeof(b)), 0);
		}
	}
	cart_close(f);
	pool_close(f);
}

/*
 * Reads object i at the current position; returns the read's rc. A successful
 * read must be exactly object i.
 */
static int corr_read_check(struct vtl_cart *c, unsigned i, uint64_t eod, const char *ctx)
{
	uint8_t want[5000], got[6000];
	struct vtl_read_result r;
	memset(&r, 0x5a, sizeof(r));
	int rc = vtl_cart_read(c, got, sizeof(got), &r);
	if (rc < 0)
		return rc;
	if (rc != 0)
		fail_msg("%s: read of %u returned %d", ctx, i, rc);
	if (r.object != i)
		fail_msg("%s: read at %u reports object %" PRIu64, ctx, i, r.object);
	if (i >= eod) {
		if (r.type != VTL_OBJ_EOD)
			fail_msg("%s: read at EOD %u gives type %d", ctx, i, r.type);
		return 0;
	}
	if (i >= CN)
		fail_msg("%s: object %u beyond what was written", ctx, i);
	if (corr_is_fm(i)) {
		if (r.type != VTL_OBJ_FILEMARK)
			fail_msg("%s: object %u should be a filemark, read type %d", ctx, i, r.type);
		return 0;
	}
	corr_block(want, i);
	if (r.type != VTL_OBJ_DATA || r.length != 5000 || r.copied != 5000 ||
	    memcmp(want, got, 5000) != 0)
		fail_msg("%s: object %u read back WRONG data (type %d length %u)", ctx, i, r.type,
			 r.length);
	return 0;
}

/* A bad block reads as VTL_E_MEDIUM where it is, and nowhere else. */
static void check_bad_block(struct fx *f, unsigned k, bool header, const char *ctx)
{
	struct vtl_position p;
	vtl_cart_position(f->cart[0], &p);
	if (p.eod != CN)
		fail_msg("%s: EOD %" PRIu64 ", expected %u (one bad block must not cut the tape)", ctx,
			 p.eod, CN);
	/* Sequentially from BOT (read-ahead on). */
	for (unsigned i = 0; i < CN; i++) {
		int rc = corr_read_check(f->cart[0], i, CN, ctx);
		if (i != k) {
			if (rc != 0)
				fail_msg("%s: good object %u: %d (%s)", ctx, i, rc, es(rc));
			continue;
		}
		if (header ? rc >= 0 : rc != VTL_E_MEDIUM)
			fail_msg("%s: corrupt block %u read gives %d (%s), expected VTL_E_MEDIUM", ctx,
				 k, rc, es(rc));
		vtl_cart_position(f->cart[0], &p);
		if (p.object != k)
			fail_msg("%s: after the bad read the position is %" PRIu64 ", expected %u", ctx,
				 p.object, k);
		/* Again: same answer, and r.object names it. */
		uint8_t got[6000];
		struct vtl_read_result r;
		memset(&r, 0x5a, sizeof(r));
		rc = vtl_cart_read(f->cart[0], got, sizeof(got), &r);
		if (rc >= 0 || (!header && rc != VTL_E_MEDIUM))
			fail_msg("%s: second read of bad block %u: %d (%s)", ctx, k, rc, es(rc));
		if (rc == VTL_E_MEDIUM && r.object != k)
			fail_msg("%s: VTL_E_MEDIUM with r.object %" PRIu64 ", expected %u", ctx, r.object,
				 k);
		EXPECT_RC(vtl_cart_locate(f->cart[0], k + 1), 0);
	}
	if (corr_read_check(f->cart[0], CN, CN, ctx) != 0)
		fail_msg("%s: read at EOD failed", ctx);
	/* Random access around it. */
	for (unsigned i = 0; i < CN; i += 7) {
		unsigned j = (i * 31 + k) % CN;
		EXPECT_RC(vtl_cart_locate(f->cart[0], j), 0);
		int rc = corr_read_check(f->cart[0], j, CN, ctx);
		if ((j == k) != (rc < 0))
			fail_msg("%s: locate+read of %u: %d (%s)", ctx, j, rc, es(rc));
	}
	if (k > 0) {
		EXPECT_RC(vtl_cart_locate(f->cart[0], k - 1), 0);
		int rc = corr_read_check(f->cart[0], k - 1, CN, ctx);
		if (rc != 0)
			fail_msg("%s: object before the bad one: %d (%s)", ctx, rc, es(rc));
		rc = corr_read_check(f->cart[0], k, CN, ctx);
		if (rc >= 0)
			fail_msg("%s: bad block %u read fine after its neighbour", ctx, k);
	}
}

static void test_corrupt_payload_medium(void **state)
{
	struct fx *f = *state;
	const char *bc = "CORRP1";
	corr_build(f, bc);
	struct snap sn;
	snap_take(f, bc, &sn);
	/* First segment, middle, right after a filemark, last block (in the last segment). */
	const unsigned targets[] = { 3, 40, 45, 88 };
	uint64_t rng = g_seed ^ 0xbad;
	for (unsigned ti = 0; ti < 2 * VTL_ARRAY_SIZE(targets); ti++) {
		unsigned k = targets[ti % 4];
		bool header = ti >= 4; /* second round: the record header instead */
		assert_false(corr_is_fm(k));
		snap_restore(f, bc, &sn);
		uint8_t want[5000];
		corr_block(want, k);
		struct seginfo s;
		memset(&s, 0, sizeof(s));
		uint64_t off = 0;
		if (!find_payload(f, bc, want, sizeof(want), &s, &off))
			fail_msg("block %u not found stored raw in any segment", k);
		uint64_t at = header ? off - 32 + splitmix64(&rng) % 32 : off + splitmix64(&rng) % 5000;
		flip_byte(s.path, at, (uint8_t)(1u << (splitmix64(&rng) % 8)));
		char ctx[200];
		snprintf(ctx, sizeof(ctx), "block %u: %s byte flipped (segment %u offset %" PRIu64 ")",
			 k, header ? "header" : "payload", s.seq, at);

		uint64_t before = segs_digest(f, bc);
		pool_open(f);
		int rc = cart_open(f, bc, true, false);
		if (rc != 0)
			fail_msg("%s: read-only open: %d (%s)", ctx, rc, es(rc));
		check_bad_block(f, k, header, ctx);
		cart_close(f);
		pool_close(f);
		if (segs_digest(f, bc) != before)
			fail_msg("%s: a read-only open changed the segment files", ctx);

		pool_open(f);
		rc = cart_open(f, bc, false, false);
		if (rc != 0)
			fail_msg("%s: writable open: %d (%s)", ctx, rc, es(rc));
		check_bad_block(f, k, header, ctx);
		/* Appending still works, and the bad block stays bad (not "repaired" into garbage). */
		EXPECT_RC(vtl_cart_space_eod(f->cart[0]), 0);
		uint8_t nb[3000];
		gen_data(nb, sizeof(nb), 4242, false);
		EXPECT_RC(vtl_cart_write_block(f->cart[0], nb, sizeof(nb)), 0);
		cart_close(f);
		EXPECT_RC(cart_open(f, bc, false, false), 0);
		struct vtl_position p;
		vtl_cart_position(f->cart[0], &p);
		if (p.eod != CN + 1)
			fail_msg("%s: EOD %" PRIu64 " after appending one, expected %u", ctx, p.eod, CN + 1);
		EXPECT_RC(vtl_cart_locate(f->cart[0], k), 0);
		rc = corr_read_check(f->cart[0], k, CN + 1, ctx);
		if (rc >= 0 || (!header && rc != VTL_E_MEDIUM))
			fail_msg("%s: after reopen, bad block %u reads %d (%s)", ctx, k, rc, es(rc));
		EXPECT_RC(vtl_cart_locate(f->cart[0], CN), 0);
		uint8_t got[3100];
		struct vtl_read_result r;
		EXPECT_RC(vtl_cart_read(f->cart[0], got, sizeof(got), &r), 0);
		assert_int_equal(r.length, sizeof(nb));
		assert_memory_equal(got, nb, sizeof(nb));
		cart_close(f);
		pool_close(f);
	}
	snap_free(&sn);
}

/* Random bytes flipped anywhere in a closed cartridge: reads give the right object or an error. */
static void test_random_corruption_never_wrong(void **state)
{
	struct fx *f = *state;
	const char *bc = "CORRR1";
	corr_build(f, bc);
	struct snap sn;
	snap_take(f, bc, &sn);
	static struct seginfo segs[MAXSEG];
	uint64_t rng = g_seed ^ 0x5eed;
	unsigned trials = scaled(30), opened = 0, errors = 0;
	for (unsigned t = 0; t < trials; t++) {
		snap_restore(f, bc, &sn);
		int n = list_segs(f, bc, segs, MAXSEG);
		assert_true(n > 0);
		unsigned flips = 1 + (unsigned)(splitmix64(&rng) % 3);
		char ctx[300];
		int k = snprintf(ctx, sizeof(ctx), "seed %" PRIu64 " trial %u flips:", g_seed, t);
		for (unsigned i = 0; i < flips; i++) {
			const struct seginfo *s = &segs[splitmix64(&rng) % (uint64_t)n];
			if (s->size == 0)
				continue;
			uint64_t off = splitmix64(&rng) % s->size;
			flip_byte(s->path, off, (uint8_t)(1u << (splitmix64(&rng) % 8)));
			if (k > 0 && (size_t)k < sizeof(ctx))
				k += snprintf(ctx + k, sizeof(ctx) - (size_t)k, " seg %u @%" PRIu64, s->seq,
					      off);
		}
		for (int mode = 0; mode < 2; mode++) {
			pool_open(f);
			int rc = cart_open(f, bc, mode == 0, false);
			if (rc != 0) {
				/* Allowed to refuse (e.g. VTL_E_CORRUPT), not to crash. */
				pool_close(f);
				continue;
			}
			opened++;
			struct vtl_position p;
			vtl_cart_position(f->cart[0], &p);
			uint64_t eod = p.eod;
			if (eod > CN)
				fail_msg("%s: EOD %" PRIu64 " > %u written", ctx, eod, CN);
			for (unsigned i = 0; i <= eod; i++) {
				rc = corr_read_check(f->cart[0], i, eod, ctx);
				if (rc < 0) {
					errors++;
					if (vtl_cart_locate(f->cart[0], i + 1) < 0)
						break;
				}
			}
			/* And backwards by locate. */
			for (uint64_t i = eod; i-- > 0;)
				if (vtl_cart_locate(f->cart[0], i) == 0)
					(void)corr_read_check(f->cart[0], (unsigned)i, eod, ctx);
			cart_close(f);
			pool_close(f);
		}
	}
	print_message("  %u trials: %u opens, %u reads refused with an error, no wrong data\n",
		      trials, opened, errors);
	snap_free(&sn);
}

/*
 * After a clean close the last segment ends with what close added past the
 * data (end-of-data record, index footer). A power loss during close, or bit
 * rot, can leave any byte of that bad: each single-byte flip there must still
 * give every object back, and the tape must take appends afterwards.
 */
/* The close-marker test's tape: block i is 500 + 137 i bytes of key 9000 + i; every 9th a filemark. */
static bool mk_fm(unsigned i)
{
	return i % 9 == 4;
}

/* Reads every object (sequentially, then by locate, backwards); returns a description of the first problem. */
static bool mk_check(struct vtl_cart *c, unsigned n, char *why, size_t whylen)
{
	uint8_t want[8000], got[8100];
	for (int pass = 0; pass < 2; pass++) {
		if (vtl_cart_rewind(c) != 0) {
			snprintf(why, whylen, "rewind failed");
			return false;
		}
		for (unsigned k = 0; k < n; k++) {
			unsigned i = pass == 0 ? k : n - 1 - k;
			if (pass == 1 && vtl_cart_locate(c, i) != 0) {
				snprintf(why, whylen, "locate %u failed", i);
				return false;
			}
			struct vtl_position p;
			vtl_cart_position(c, &p);
			unsigned files = 0;
			for (unsigned j = 0; j < i; j++)
				files += mk_fm(j);
			if (p.object != i || p.file != files) {
				snprintf(why, whylen, "at object %u the position says object %" PRIu64
					 " file %" PRIu64 " (expected file %u)",
					 i, p.object, p.file, files);
				return false;
			}
			struct vtl_read_result r;
			int rc = vtl_cart_read(c, got, sizeof(got), &r);
			if (rc != 0) {
				snprintf(why, whylen, "%s read of object %u: %d (%s)",
					 pass ? "locate +" : "sequential", i, rc, es(rc));
				return false;
			}
			bool ok;
			if (mk_fm(i)) {
				ok = r.type == VTL_OBJ_FILEMARK;
			} else {
				gen_data(want, 500 + 137 * i, 9000 + i, false);
				ok = r.type == VTL_OBJ_DATA && r.length == 500 + 137 * i &&
				     memcmp(want, got, r.length) == 0;
			}
			if (!ok)
				fail_msg("object %u read back WRONG", i); /* never acceptable */
		}
	}
	return true;
}

/*
 * After a clean close the last segment ends with what close added past the
 * data (end-of-data record, index footer). A power loss during close, or bit
 * rot, can leave any byte of that bad: with each single-byte flip there the
 * cartridge must still open with every object readable (also by locate), and
 * take appends afterwards.
 */
static void test_damaged_close_markers(void **state)
{
	struct fx *f = *state;
	const char *bc = "MARKS1";
	const unsigned n = 40;
	uint8_t *buf = talloc(8000);
	assert_non_null(buf);
	pool_open(f);
	EXPECT_RC(vtl_cart_create(f->pool, bc), 0);
	EXPECT_RC(cart_open(f, bc, false, false), 0);
	for (unsigned i = 0; i < n; i++) {
		if (mk_fm(i)) {
			EXPECT_RC(vtl_cart_write_filemarks(f->cart[0], 1), 0);
		} else {
			gen_data(buf, 500 + 137 * i, 9000 + i, false);
			EXPECT_RC(vtl_cart_write_block(f->cart[0], buf, 500 + 137 * i), 0);
		}
	}
	EXPECT_RC(vtl_cart_sync(f->cart[0]), 0);
	struct seginfo s1, s2;
	memset(&s1, 0, sizeof(s1));
	memset(&s2, 0, sizeof(s2));
	assert_true(last_seg(f, bc, &s1));
	cart_close(f);
	pool_close(f);
	assert_true(last_seg(f, bc, &s2));
	if (s1.seq != s2.seq || s2.size <= s1.size)
		fail_msg("close did not add to the last segment (%u: %" PRIu64 " -> %u: %" PRIu64 ")",
			 s1.seq, s1.size, s2.seq, s2.size);
	struct snap sn;
	snap_take(f, bc, &sn);
	unsigned bad = 0;
	uint64_t first_bad = UINT64_MAX, last_bad = 0;
	char first_msg[200] = "";
	for (uint64_t off = s1.size; off < s2.size; off++) {
		snap_restore(f, bc, &sn);
		flip_byte(s2.path, off, 0x10);
		char why[200] = "";
		pool_open(f);
		for (int mode = 0; mode < 2 && !why[0]; mode++) {
			int rc = cart_open(f, bc, mode == 0, false);
			if (rc != 0) {
				snprintf(why, sizeof(why), "%s open: %d (%s)", mode ? "writable" : "read-only",
					 rc, es(rc));
				break;
			}
			struct vtl_position p;
			vtl_cart_position(f->cart[0], &p);
			if (p.eod != n)
				snprintf(why, sizeof(why), "%s open: EOD %" PRIu64 " instead of %u",
					 mode ? "writable" : "read-only", p.eod, n);
			else
				mk_check(f->cart[0], n, why, sizeof(why));
			if (mode == 1 && !why[0]) {
				EXPECT_RC(vtl_cart_space_eod(f->cart[0]), 0);
				gen_data(buf, 1000, 77, false);
				rc = vtl_cart_write_block(f->cart[0], buf, 1000);
				if (rc != 0)
					snprintf(why, sizeof(why), "append after the open: %d (%s)", rc,
						 es(rc));
			}
			cart_close(f);
		}
		if (!why[0]) {
			EXPECT_RC(cart_open(f, bc, false, false), 0);
			struct vtl_position p;
			vtl_cart_position(f->cart[0], &p);
			if (p.eod != n + 1)
				snprintf(why, sizeof(why), "EOD %" PRIu64 " after appending one to %u", p.eod,
					 n);
			else
				mk_check(f->cart[0], n, why, sizeof(why));
			cart_close(f);
		}
		pool_close(f);
		if (why[0]) {
			if (getenv("VTL_TEST_VERBOSE"))
				print_message("    flip at %" PRIu64 " (+%" PRIu64 "): %s\n", off,
					      off - s1.size, why);
			if (!bad)
				snprintf(first_msg, sizeof(first_msg), "%s", why);
			bad++;
			if (off < first_bad)
				first_bad = off;
			last_bad = off;
		}
	}
	print_message("  last segment: %" PRIu64 " bytes after the sync, %" PRIu64
		      " after close: %" PRIu64 " single-byte flips past the data, %u broke it\n",
		      s1.size, s2.size, s2.size - s1.size, bad);
	if (bad)
		fail_msg("%u of the %" PRIu64 " flips (offsets %" PRIu64 "..%" PRIu64
			 ", the close markers being %" PRIu64 "..%" PRIu64 ") broke the cartridge; "
			 "first (at %" PRIu64 "): %s",
			 bad, s2.size - s1.size, first_bad, last_bad, s1.size, s2.size - 1, first_bad,
			 first_msg);
	snap_free(&sn);
	tfree(buf);
}

/*
 * A record spoiled after its segment was sealed cannot come from a crash:
 * sealing syncs the records before it writes the footer, so a footer on disk
 * means every record it covers is on disk. Such damage is bit rot, and reads
 * report it as a medium error for that block (test_corrupt_payload_medium
 * and the corruption tests above).
 */

/*
 * Erasing (or overwriting) far back removes the later segments and cuts the
 * one the new EOD is in. Until the next sync these changes are not durable
 * and, with members on different file systems, not ordered either: a power
 * loss may keep the cut but lose the removals. Built here from a killed
 * writer by putting the removed segments back. The cartridge must open,
 * as a prefix of the old tape (the stale later segments do not continue the
 * cut one), and take appends.
 */
static void stale_segments_case(struct fx *f, const char *bc, bool overwrite)
{
	const unsigned nblk = 60, at = 15;
	const size_t bl = 10000;
	uint8_t b[10000];
	pool_open(f);
	EXPECT_RC(vtl_cart_create(f->pool, bc), 0);
	EXPECT_RC(cart_open(f, bc, false, false), 0);
	for (unsigned i = 0; i < nblk; i++) {
		gen_data(b, bl, 3000 + i, false);
		EXPECT_RC(vtl_cart_write_block(f->cart[0], b, bl), 0);
	}
	cart_close(f);
	pool_close(f);
	struct snap before;
	snap_take(f, bc, &before);
	static struct seginfo segs0[MAXSEG];
	int n0 = list_segs(f, bc, segs0, MAXSEG);
	assert_true(n0 >= 5);

	fflush(NULL);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		alarm(60);
		struct vtl_pool *pool = NULL;
		char err[256];
		struct vtl_cart_params p;
		memset(&p, 0, sizeof(p));
		struct vtl_cart *c = NULL;
		if (vtl_pool_open(&f->cfg, &pool, err, sizeof(err)) || vtl_cart_open(pool, bc, &p, &c))
			_exit(30);
		if (vtl_cart_locate(c, at))
			_exit(31);
		if (overwrite) {
			gen_data(b, 2000, 77777, false);
			if (vtl_cart_write_block(c, b, 2000))
				_exit(32);
		} else if (vtl_cart_erase(c)) {
			_exit(33);
		}
		raise(SIGKILL);
		_exit(99);
	}
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	if (!WIFSIGNALED(st))
		fail_msg("the child failed before the crash point (exit %d)", WEXITSTATUS(st));

	/*
	 * The removals on the other members (other file systems: no ordering with
	 * the cut) are lost: those segment files come back. On the cut segment's
	 * own member a journal would have kept the order, so those stay removed.
	 */
	struct seginfo cut;
	memset(&cut, 0, sizeof(cut));
	assert_true(last_seg(f, bc, &cut));
	size_t plen = strlen(f->mpath[cut.member]);
	unsigned back = 0;
	for (unsigned i = 0; i < before.n; i++) {
		struct stat stt;
		bool same_member = strncmp(before.f[i].path, f->mpath[cut.member], plen) == 0 &&
				   before.f[i].path[plen] == '/';
		if (!same_member && stat(before.f[i].path, &stt) != 0) {
			write_file(before.f[i].path, before.f[i].data, before.f[i].len);
			back++;
		}
	}
	print_message("  %s at %u (segment %u): %u removed segment files on other members put "
		      "back\n",
		      overwrite ? "overwrite" : "erase", at, cut.seq, back);
	assert_true(back > 0);

	uint8_t want[10000], got[10100];
	for (int mode = 0; mode < 3; mode++) {
		const char *mname = mode == 0 ? "read-only open" : mode == 1 ? "writable open" : "reopen";
		pool_open(f);
		int rc = cart_open(f, bc, mode == 0, false);
		if (rc != 0)
			fail_msg("%s at %u, removals lost: %s: %d (%s)", overwrite ? "overwrite" : "erase",
				 at, mname, rc, es(rc));
		struct vtl_position p;
		vtl_cart_position(f->cart[0], &p);
		if (p.eod < at || p.eod > nblk)
			fail_msg("%s: EOD %" PRIu64 ", expected %u..%u", mname, p.eod, at, nblk);
		for (uint64_t i = 0; i < p.eod; i++) {
			struct vtl_read_result r;
			rc = vtl_cart_read(f->cart[0], got, sizeof(got), &r);
			if (rc != 0)
				fail_msg("%s: EOD %" PRIu64 ": read of object %" PRIu64 ": %d (%s)", mname,
					 p.eod, i, rc, es(rc));
			bool newblk = overwrite && i == at;
			/* The reopen also sees the block the writable open appended at EOD. */
			bool appended = mode == 2 && i == p.eod - 1;
			size_t len = appended ? 3000 : newblk ? 2000 : bl;
			gen_data(want, len, appended ? 88888 : newblk ? 77777 : 3000 + i, false);
			if (r.type != VTL_OBJ_DATA || r.length != len || memcmp(want, got, len) != 0)
				fail_msg("%s: object %" PRIu64 " reads back WRONG (EOD %" PRIu64 ")", mname, i,
					 p.eod);
		}
		if (overwrite && p.eod > at + 1 + (mode == 2))
			fail_msg("%s: EOD %" PRIu64 " after an overwrite at %u", mname, p.eod, at);
		if (mode == 1) {
			EXPECT_RC(vtl_cart_space_eod(f->cart[0]), 0);
			gen_data(b, 3000, 88888, false);
			EXPECT_RC(vtl_cart_write_block(f->cart[0], b, 3000), 0);
		}
		cart_close(f);
		pool_close(f);
	}
	snap_free(&before);
}

static void test_stale_segments_after_erase(void **state)
{
	stale_segments_case(*state, "STALE1", false);
}

static void test_stale_segments_after_overwrite(void **state)
{
	stale_segments_case(*state, "STALE2", true);
}

/*
 * The seal of a full segment runs on a worker while the host writes on, so a
 * crash can leave a middle segment whose records are on disk but whose footer
 * never arrived. Modelled by cutting the footer off middle segments of a
 * closed cartridge: every object must still read back, read-only and
 * writable, and the tape must take appends.
 */
static void test_middle_segment_without_footer(void **state)
{
	struct fx *f = *state;
	const char *bc = "NOFOOT1";
	const unsigned nblk = 60;
	const size_t bl = 10000;
	uint8_t b[10000], got[10100];
	pool_open(f);
	EXPECT_RC(vtl_cart_create(f->pool, bc), 0);
	EXPECT_RC(cart_open(f, bc, false, false), 0);
	for (unsigned i = 0; i < nblk; i++) {
		gen_data(b, bl, 4400 + i, false);
		EXPECT_RC(vtl_cart_write_block(f->cart[0], b, bl), 0);
		if (i % 17 == 16)
			EXPECT_RC(vtl_cart_write_filemarks(f->cart[0], 1), 0);
	}
	cart_close(f);
	pool_close(f);
	static struct seginfo segs[MAXSEG];
	int n = list_segs(f, bc, segs, MAXSEG);
	assert_true(n >= 4);
	/* Segments 1 and n-2: cut everything after the last record (footer and trailer). */
	int cut[2] = {1, n - 2};
	for (int k = 0; k < 2; k++) {
		size_t len;
		uint8_t *data = read_file(segs[cut[k]].path, &len);
		assert_non_null(data);
		/* The FMARKS record starts right after the last object: walk the record headers to it. */
		uint64_t at = SEG_HEADER_LEN;
		struct rec_header h;
		while (at + REC_HEADER_LEN <= len && rec_header_decode(data + at, &h) == 0 && h.type != REC_FMARKS)
			at += REC_HEADER_LEN + h.stored_len;
		tfree(data);
		assert_true(at < len);
		assert_int_equal(truncate(segs[cut[k]].path, (off_t)at), 0);
	}
	uint64_t expect_eod = nblk + (nblk / 17);
	for (int mode = 0; mode < 3; mode++) {
		pool_open(f);
		EXPECT_RC(cart_open(f, bc, mode == 0, false), 0);
		struct vtl_position p;
		get_pos(f->cart[0], &p);
		if (p.eod != expect_eod + (mode == 2))
			fail_msg("mode %d: EOD %" PRIu64 ", expected %" PRIu64, mode, p.eod, expect_eod + (mode == 2));
		unsigned blk = 0;
		for (uint64_t i = 0; i < p.eod; i++) {
			struct vtl_read_result r;
			EXPECT_RC(vtl_cart_read(f->cart[0], got, sizeof(got), &r), 0);
			if (r.type == VTL_OBJ_FILEMARK)
				continue;
			bool appended = mode == 2 && i == p.eod - 1;
			gen_data(b, appended ? 3000 : bl, appended ? 99 : 4400 + blk, false);
			if (r.type != VTL_OBJ_DATA || r.length != (appended ? 3000 : bl) ||
			    memcmp(b, got, r.length) != 0)
				fail_msg("mode %d: object %" PRIu64 " reads back wrong", mode, i);
			blk++;
		}
		/* Positioning goes through the rebuilt index too. */
		struct vtl_space_result sr;
		EXPECT_RC(vtl_cart_rewind(f->cart[0]), 0);
		EXPECT_RC(vtl_cart_space_filemarks(f->cart[0], 2, &sr), 0);
		get_pos(f->cart[0], &p);
		assert_int_equal(p.object, 2 * 17 + 2);
		assert_int_equal(p.file, 2);
		if (mode == 1) {
			EXPECT_RC(vtl_cart_space_eod(f->cart[0]), 0);
			gen_data(b, 3000, 99, false);
			EXPECT_RC(vtl_cart_write_block(f->cart[0], b, 3000), 0);
		}
		cart_close(f);
		pool_close(f);
	}
}

int main(void)
{
	g_seed = tl_env_seed();
	g_scale = tl_env_scale();
	printf("test_crash: seed %" PRIu64 " (VTL_TEST_SEED=%" PRIu64 " repeats the random choices)\n",
	       g_seed, g_seed);
	fflush(stdout);
	signal(SIGPIPE, SIG_IGN);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_crash_cycles, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_tail_damage_after_kill, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_truncate_after_clean_close, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_damaged_close_markers, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_stale_segments_after_erase, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_middle_segment_without_footer, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_stale_segments_after_overwrite, fx_setup,
						fx_teardown),
		cmocka_unit_test_setup_teardown(test_corrupt_payload_medium, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_random_corruption_never_wrong, fx_setup,
						fx_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
