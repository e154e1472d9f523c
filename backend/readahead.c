/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Sequential read-ahead: while a host streams a cartridge back, keep K reads
 * of about S bytes each in flight on the pool's worker threads, and have the
 * workers check CRCs and decompress, so that the consumer only copies.
 *
 * The planner runs on the consumer's thread and cuts the tape into chunks of
 * whole records using the index (never by reading headers), one segment at a
 * time; chunks of consecutive segments land on different pool members, so a
 * stream spreads its reads over the stripe. A slot is one chunk: FREE, then
 * QUEUED on the workers, BUSY while read, READY for the consumer. A reset
 * (LOCATE, SPACE, a write) marks queued and busy slots stale; the worker that
 * holds one frees it, so nobody waits for a read that is no longer wanted.
 * A chunk the page cache does not hold is read with O_DIRECT into the slot
 * (its buffer aligned for it), one it holds is copied from it (slot_fill).
 *
 * A slot can also be lent (vtl_cart_read_lend): a reader, such as the iSCSI
 * event loop sending a READ's Data-In, points at a block in it instead of
 * having it copied out. While any loan of a slot is out, the slot is never
 * refilled (ra_fill passes over it, whether a reset or the last read made it
 * FREE), and ra_destroy leaves the read-ahead to the last loan to free: an
 * UNLOAD on the drive's thread may run while the event loop still sends the
 * previous READ's data, and must neither wait for it nor pull the block
 * from under it.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/cart_crypt.h"
#include "backend/compress.h"
#include "backend/internal.h"
#include "backend/workers.h"
#include "common/crc32c.h"
#include "common/vtl_error.h"

/* Offsets the planner fetches from a sealed segment's index at a time (16 KiB). */
#define PLAN_WINDOW 4096
/* Decompressed bytes a slot may hold, as a multiple of the chunk size. */
#define DEC_FACTOR 4

enum slot_state { SLOT_FREE, SLOT_QUEUED, SLOT_BUSY, SLOT_READY };

struct ra_rec {
	uint8_t type;  /* REC_DATA or REC_FILEMARK */
	bool ok;       /* header and payload verified */
	bool in_dec;   /* data is decompressed in dec; otherwise as stored in raw */
	struct rec_header h;
	size_t data_off;
};

struct vtl_loan {
	struct slot *s;
};

struct slot {
	struct ra *ra;
	struct vtl_loan loan; /* the handle every loan of this slot gives out */
	unsigned lent;        /* loans out (under ra->lock): the slot is not refilled until 0 */
	struct job job;
	enum slot_state state;
	bool stale;
	struct fdref *fd;
	uint64_t start, end;
	uint64_t first;
	uint32_t n;
	uint32_t consumed;
	unsigned char *raw;   /* DIRECT_ALIGN-aligned, from the chunk's start rounded down to DIRECT_ALIGN */
	size_t raw_cap;
	unsigned char *data;  /* the chunk's first byte in raw */
	bool direct;          /* this fill was read with O_DIRECT */
	unsigned char *dec;
	size_t dec_cap;
	struct ra_rec *recs;
	size_t recs_cap;
};

struct ra {
	struct vtl_cart *c;
	struct workers *w;
	pthread_mutex_t lock;
	pthread_cond_t done;
	bool active;
	uint64_t next_obj;
	uint64_t inflight;
	uint64_t memory;
	unsigned lent;   /* loans out over all slots */
	uint64_t direct_bytes; /* stored bytes read with O_DIRECT, past the page cache */
	bool dead;       /* ra_destroy came while loans were out: the last vtl_loan_release frees */
	size_t chunk;
	unsigned nslots;
	unsigned *order; /* slots in tape order, order[(head + i) % nslots] */
	unsigned head, count;
	size_t wsi;      /* planner's window of offsets: segment, first relative object, count */
	uint32_t wrel, wlen;
	bool wvalid;
	uint32_t *win;
	struct slot *slots;
};

/* ---- file descriptor references ---- */

static pthread_mutex_t fdref_lock = PTHREAD_MUTEX_INITIALIZER;

static void fdref_close(struct fdref *f)
{
	close(f->fd);
	if (f->dfd >= 0)
		close(f->dfd);
	free(f);
}

void fdref_get(struct fdref *f)
{
	pthread_mutex_lock(&fdref_lock);
	f->refs++;
	pthread_mutex_unlock(&fdref_lock);
}

void fdref_put(struct fdref *f)
{
	pthread_mutex_lock(&fdref_lock);
	bool last = --f->refs == 0 && f->orphan;
	pthread_mutex_unlock(&fdref_lock);
	if (last)
		fdref_close(f);
}

void fdref_drop(struct fdref *f)
{
	pthread_mutex_lock(&fdref_lock);
	bool now = f->refs == 0;
	f->orphan = true;
	pthread_mutex_unlock(&fdref_lock);
	if (now)
		fdref_close(f);
}

/* ---- workers ---- */

/* Reads a chunk and verifies every record in it; a bad record and all after it are marked not ok. */
static void slot_fill(struct slot *s, size_t dec_limit)
{
	size_t len = (size_t)(s->end - s->start);
	for (uint32_t i = 0; i < s->n; i++)
		s->recs[i].ok = false;
	s->direct = false;
	/* The buffer stands for the file from start rounded down, so that an O_DIRECT read can land in it. */
	if (direct_buf_reserve(&s->raw, &s->raw_cap, direct_span(s->start, len)))
		return;
	s->data = s->raw + s->start % DIRECT_ALIGN;
	/*
	 * A chunk the page cache does not hold is read with O_DIRECT: the disk's DMA fills the slot, where a
	 * buffered read would fill cache pages and then copy every byte (the largest cost of a cold read in
	 * the profile), and a restore streaming a cartridge once does not push everything else out of the
	 * cache. A chunk it holds (just written, read again) is copied from it as before.
	 */
	if (s->fd->dfd >= 0 && !fd_range_cached(s->fd->fd, s->start, len)) {
		int rc = read_full_direct(s->fd->dfd, s->raw, s->start, len);
		s->direct = rc == VTL_OK;
		if (rc == VTL_E_IO && errno != EINVAL)
			return; /* the direct read of the consumer reports it */
	}
	if (!s->direct && read_full(s->fd->fd, s->data, len, s->start))
		return;
	/* First pass: headers, and how much room decompression needs. */
	size_t at = 0, dec_need = 0;
	uint32_t good = 0;
	for (; good < s->n; good++) {
		struct ra_rec *r = &s->recs[good];
		if (at + REC_HEADER_LEN > len || rec_header_decode(s->data + at, &r->h) ||
		    r->h.object != s->first + good || (r->h.type != REC_DATA && r->h.type != REC_FILEMARK) ||
		    at + REC_HEADER_LEN + r->h.stored_len > len)
			break;
		r->type = r->h.type;
		r->data_off = at + REC_HEADER_LEN;
		r->in_dec = false;
		/* An encrypted record stays as stored: its reader decrypts it on its own thread (cart_crypt.c). */
		if ((r->h.flags & REC_FLAG_LZ4) && !(r->h.flags & REC_FLAG_ENCRYPTED) && dec_need + r->h.length <= dec_limit) {
			r->in_dec = true;
			dec_need += r->h.length;
		}
		at += REC_HEADER_LEN + r->h.stored_len;
	}
	if (dec_need > s->dec_cap) {
		unsigned char *p = realloc(s->dec, dec_need);
		if (!p)
			return;
		s->dec = p;
		s->dec_cap = dec_need;
	}
	size_t dat = 0;
	for (uint32_t i = 0; i < good; i++) {
		struct ra_rec *r = &s->recs[i];
		if (r->in_dec) {
			if (record_payload_decode(&r->h, s->data + r->data_off, s->dec + dat, r->h.length))
				return;
			r->data_off = dat;
			dat += r->h.length;
		} else if (crc32c(0, s->data + r->data_off, r->h.stored_len) != r->h.payload_crc) {
			return;
		}
		r->ok = true;
	}
}

/* A slot's job: read and check one chunk, unless a reset made it stale meanwhile. */
static void slot_job(struct job *job)
{
	struct slot *s = (struct slot *)((char *)job - offsetof(struct slot, job));
	struct ra *ra = s->ra;
	pthread_mutex_lock(&ra->lock);
	bool skip = s->stale;
	s->state = SLOT_BUSY;
	pthread_mutex_unlock(&ra->lock);
	if (!skip)
		slot_fill(s, ra->chunk * DEC_FACTOR);
	struct fdref *f = s->fd;
	s->fd = NULL;
	fdref_put(f);
	pthread_mutex_lock(&ra->lock);
	if (!skip && s->direct)
		ra->direct_bytes += s->end - s->start;
	if (s->stale) {
		s->stale = false;
		s->state = SLOT_FREE;
	} else {
		s->state = SLOT_READY;
	}
	pthread_cond_broadcast(&ra->done);
	pthread_mutex_unlock(&ra->lock);
}

/* ---- per cartridge ---- */

struct ra *ra_create(struct vtl_cart *c)
{
	struct vtl_pool *pool = c->pool;
	struct ra *ra = calloc(1, sizeof *ra);
	if (!ra)
		return NULL;
	ra->c = c;
	ra->w = pool->workers;
	ra->chunk = pool->ra_chunk;
	ra->memory = pool->ra_memory;
	uint64_t per_slot = (uint64_t)ra->chunk * (1 + DEC_FACTOR);
	uint64_t fit = ra->memory / per_slot;
	ra->nslots = pool->ra_depth < fit ? pool->ra_depth : (unsigned)(fit ? fit : 1);
	pthread_mutex_init(&ra->lock, NULL);
	pthread_cond_init(&ra->done, NULL);
	ra->slots = calloc(ra->nslots, sizeof *ra->slots);
	ra->order = calloc(ra->nslots, sizeof *ra->order);
	ra->win = malloc(PLAN_WINDOW * sizeof *ra->win);
	if (!ra->slots || !ra->order || !ra->win) {
		ra_destroy(ra);
		return NULL;
	}
	for (unsigned i = 0; i < ra->nslots; i++) {
		ra->slots[i].ra = ra;
		ra->slots[i].loan.s = &ra->slots[i];
	}
	return ra;
}

void ra_reset(struct ra *ra)
{
	if (!ra->active && ra->count == 0)
		return;
	pthread_mutex_lock(&ra->lock);
	for (unsigned i = 0; i < ra->count; i++) {
		struct slot *s = &ra->slots[ra->order[(ra->head + i) % ra->nslots]];
		if (s->state == SLOT_READY)
			s->state = SLOT_FREE;
		else
			s->stale = true;
	}
	ra->count = 0;
	ra->head = 0;
	ra->inflight = 0;
	ra->active = false;
	ra->wvalid = false;
	pthread_mutex_unlock(&ra->lock);
}

/* Frees the read-ahead: no job is in flight and no loan out. */
static void ra_free(struct ra *ra)
{
	if (ra->slots) {
		for (unsigned i = 0; i < ra->nslots; i++) {
			free(ra->slots[i].raw);
			free(ra->slots[i].dec);
			free(ra->slots[i].recs);
		}
	}
	free(ra->slots);
	free(ra->order);
	free(ra->win);
	pthread_cond_destroy(&ra->done);
	pthread_mutex_destroy(&ra->lock);
	free(ra);
}

void ra_destroy(struct ra *ra)
{
	bool later = false;
	if (ra->slots) {
		ra_reset(ra);
		pthread_mutex_lock(&ra->lock);
		for (unsigned i = 0; i < ra->nslots; i++)
			while (ra->slots[i].state == SLOT_QUEUED || ra->slots[i].state == SLOT_BUSY)
				pthread_cond_wait(&ra->done, &ra->lock);
		/* A loan still out keeps its slot, and so the whole read-ahead, until it comes back. */
		later = ra->dead = ra->lent > 0;
		pthread_mutex_unlock(&ra->lock);
	}
	if (!later)
		ra_free(ra);
}

void vtl_loan_release(struct vtl_loan *loan)
{
	struct slot *s = loan->s;
	struct ra *ra = s->ra;
	pthread_mutex_lock(&ra->lock);
	s->lent--;
	ra->lent--;
	bool last = ra->dead && ra->lent == 0;
	pthread_mutex_unlock(&ra->lock);
	if (last)
		ra_free(ra);
}

bool ra_active(const struct ra *ra)
{
	return ra->active;
}

/* Offset where relative object e of segment si starts, through the window; false if not in it. */
static bool win_off(struct ra *ra, const struct seg *s, uint32_t e, uint64_t *off)
{
	if (e == s->n_obj) {
		*off = s->data_end;
		return true;
	}
	if (e < ra->wrel || e >= ra->wrel + ra->wlen)
		return false;
	*off = ra->win[e - ra->wrel];
	return true;
}

/* Plans one chunk from next_obj into slot s; false when there is nothing to plan. */
static bool plan_chunk(struct ra *ra, struct slot *s)
{
	struct vtl_cart *c = ra->c;
	if (ra->next_obj >= c->tape.eod)
		return false;
	size_t si = cart_seg_of(c, ra->next_obj);
	const struct seg *sg = &c->tape.segs[si];
	uint32_t rel = (uint32_t)(ra->next_obj - sg->first_obj);
	uint64_t start, end, next_end;
	if (!ra->wvalid || ra->wsi != si || !win_off(ra, sg, rel, &start) || !win_off(ra, sg, rel + 1, &end)) {
		uint32_t n = sg->n_obj - rel < PLAN_WINDOW ? sg->n_obj - rel : PLAN_WINDOW;
		if (cart_offsets(c, si, rel, n, ra->win)) {
			ra->wvalid = false;
			return false;
		}
		ra->wsi = si;
		ra->wrel = rel;
		ra->wlen = n;
		ra->wvalid = true;
		if (!win_off(ra, sg, rel, &start) || !win_off(ra, sg, rel + 1, &end))
			return false;
	}
	if (end <= start || end > sg->data_end)
		return false; /* a damaged index: the direct read reports it */
	uint32_t e = rel + 1;
	while (e < sg->n_obj && win_off(ra, sg, e + 1, &next_end) && next_end - start <= ra->chunk &&
	       next_end > end) {
		e++;
		end = next_end;
	}
	uint32_t n = e - rel;
	if (n > s->recs_cap) {
		struct ra_rec *r = realloc(s->recs, n * sizeof *r);
		if (!r)
			return false;
		s->recs = r;
		s->recs_cap = n;
	}
	struct fdref *f = cart_seg_fd(c, si);
	if (!f)
		return false;
	fdref_get(f);
	if (c->pool->ra_direct)
		cart_seg_direct(c, si, f);
	s->fd = f;
	s->start = start;
	s->end = end;
	s->first = ra->next_obj;
	s->n = n;
	s->consumed = 0;
	s->stale = false;
	ra->next_obj += n;
	return true;
}

void ra_buffered(struct ra *ra, uint64_t *ready, uint64_t *limit)
{
	pthread_mutex_lock(&ra->lock);
	*ready = 0;
	for (unsigned i = 0; i < ra->nslots; i++)
		if (ra->slots[i].state == SLOT_READY && !ra->slots[i].stale)
			*ready += ra->slots[i].end - ra->slots[i].start;
	*limit = ra->memory / (1 + DEC_FACTOR);
	pthread_mutex_unlock(&ra->lock);
}

uint64_t ra_direct_bytes(struct ra *ra)
{
	pthread_mutex_lock(&ra->lock);
	uint64_t n = ra->direct_bytes;
	pthread_mutex_unlock(&ra->lock);
	return n;
}

/* Issues chunks until the slots or the memory budget run out. */
static void ra_fill(struct ra *ra)
{
	for (;;) {
		pthread_mutex_lock(&ra->lock);
		bool room = ra->count < ra->nslots && (ra->count == 0 || ra->inflight < ra->memory / (1 + DEC_FACTOR));
		struct slot *s = NULL;
		for (unsigned i = 0; room && i < ra->nslots && !s; i++)
			if (ra->slots[i].state == SLOT_FREE && !ra->slots[i].stale && !ra->slots[i].lent)
				s = &ra->slots[i];
		pthread_mutex_unlock(&ra->lock);
		if (!s || !plan_chunk(ra, s))
			return;
		pthread_mutex_lock(&ra->lock);
		s->state = SLOT_QUEUED;
		ra->order[(ra->head + ra->count) % ra->nslots] = (unsigned)(s - ra->slots);
		ra->count++;
		ra->inflight += s->end - s->start;
		pthread_mutex_unlock(&ra->lock);
		s->job.run = slot_job;
		workers_submit(ra->w, &s->job);
	}
}

void ra_start(struct ra *ra, uint64_t obj)
{
	ra_reset(ra);
	ra->active = true;
	ra->next_obj = obj;
	ra_fill(ra);
	if (ra->count == 0)
		ra->active = false;
}

int ra_read(struct ra *ra, uint64_t obj, void *buf, size_t buflen, struct vtl_read_result *r, const void **data,
	    struct vtl_loan **loan)
{
	struct vtl_cart *c = ra->c;
	pthread_mutex_lock(&ra->lock);
	if (ra->count == 0) {
		pthread_mutex_unlock(&ra->lock);
		ra_reset(ra);
		return 0;
	}
	struct slot *s = &ra->slots[ra->order[ra->head]];
	if (obj != s->first + s->consumed) {
		pthread_mutex_unlock(&ra->lock);
		ra_reset(ra);
		return 0;
	}
	while (s->state != SLOT_READY)
		pthread_cond_wait(&ra->done, &ra->lock);
	pthread_mutex_unlock(&ra->lock);
	struct ra_rec *rec = &s->recs[s->consumed];
	if (!rec->ok)
		return 0; /* the direct read finds and reports the damage */
	r->object = obj;
	if (rec->type == REC_FILEMARK) {
		r->type = VTL_OBJ_FILEMARK;
	} else {
		r->type = VTL_OBJ_DATA;
		r->length = rec->h.length;
		r->copied = (uint32_t)(buflen < rec->h.length ? buflen : rec->h.length);
		record_block_crc(&rec->h, r);
		if (rec->h.flags & REC_FLAG_ENCRYPTED) {
			/* A failure is left to the direct read, which reports it with the position at the block. */
			if (crypt_open(c, &rec->h, s->data + rec->data_off, buf, buflen))
				return 0;
		} else if (crypt_plain_check(c)) {
			return 0;
		} else if (rec->in_dec || !(rec->h.flags & REC_FLAG_LZ4)) {
			const unsigned char *src = (rec->in_dec ? s->dec : s->data) + rec->data_off;
			if (loan) {
				/* The block as the host wrote it is here, checked: lend it rather than copy it. */
				pthread_mutex_lock(&ra->lock);
				s->lent++;
				ra->lent++;
				pthread_mutex_unlock(&ra->lock);
				*data = src;
				*loan = &s->loan;
			} else {
				memcpy(buf, src, r->copied);
			}
		} else {
			/* Past the slot's decompression budget: decompress it here. */
			unsigned char *dst = buf;
			if (buflen < rec->h.length) {
				if (rec->h.length > c->scratch.plain_cap) {
					unsigned char *p = realloc(c->scratch.plain, rec->h.length);
					if (!p)
						return 0;
					c->scratch.plain = p;
					c->scratch.plain_cap = rec->h.length;
				}
				dst = c->scratch.plain;
			}
			if (lz4_record_decompress(s->data + rec->data_off, rec->h.stored_len, dst, rec->h.length) ||
			    record_block_check(&rec->h, dst))
				return 0; /* the direct read reports it */
			if (dst != buf)
				memcpy(buf, dst, r->copied);
		}
		c->st.read_stored += rec->h.stored_len;
	}
	s->consumed++;
	if (s->consumed == s->n) {
		pthread_mutex_lock(&ra->lock);
		s->state = SLOT_FREE;
		ra->inflight -= s->end - s->start;
		ra->head = (ra->head + 1) % ra->nslots;
		ra->count--;
		pthread_mutex_unlock(&ra->lock);
	}
	ra_fill(ra);
	return 1;
}
