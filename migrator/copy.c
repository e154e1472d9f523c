/* SPDX-License-Identifier: Apache-2.0 */
#include "migrator/copy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend/format.h"
#include "common/clock.h"
#include "common/crc32c.h"
#include "common/vtl_error.h"
#include "migrator/stream.h"

/* Header block layout (little endian; docs/format.md). */
enum {
	H_MAGIC = 0, H_VERSION = 8, H_LEN = 12, H_BLOCK = 16, H_FLAGS = 20, H_BARCODE = 24, H_OBJECTS = 56,
	H_FILEMARKS = 64, H_STREAM = 72, H_CREATED = 80, H_LIBRARY = 88, H_CRC = 152,
};
#define H_BARCODE_LEN 32
#define H_LIBRARY_LEN 64

/* Trailer layout: a fixed part, the index entries, a CRC32C of all before it. */
enum {
	T_MAGIC = 0, T_VERSION = 8, T_ENTRY = 12, T_DATA_BLOCKS = 16, T_STREAM = 24, T_OBJECTS = 32, T_FILEMARKS = 40,
	T_DIGEST = 48, T_FIXED = 56,
};
#define ENTRY_LEN 16
#define NO_OBJECT UINT64_MAX

void copy_header_encode(const struct copy_header *h, uint8_t out[COPY_HEADER_LEN])
{
	memset(out, 0, COPY_HEADER_LEN);
	memcpy(out + H_MAGIC, COPY_MAGIC, sizeof COPY_MAGIC);
	put_le32(out + H_VERSION, COPY_VERSION);
	put_le32(out + H_LEN, COPY_HEADER_LEN);
	put_le32(out + H_BLOCK, h->block_size);
	memcpy(out + H_BARCODE, h->barcode, strnlen(h->barcode, H_BARCODE_LEN));
	put_le64(out + H_OBJECTS, h->objects);
	put_le64(out + H_FILEMARKS, h->filemarks);
	put_le64(out + H_STREAM, h->stream_bytes);
	put_le64(out + H_CREATED, h->created);
	memcpy(out + H_LIBRARY, h->library, strnlen(h->library, H_LIBRARY_LEN));
	put_le32(out + H_CRC, crc32c(0, out, H_CRC));
}

int copy_header_decode(const uint8_t *in, size_t len, struct copy_header *h)
{
	if (len != COPY_HEADER_LEN || memcmp(in + H_MAGIC, COPY_MAGIC, sizeof COPY_MAGIC) != 0 ||
	    get_le32(in + H_CRC) != crc32c(0, in, H_CRC) || get_le32(in + H_VERSION) != COPY_VERSION)
		return VTL_E_CORRUPT;
	memset(h, 0, sizeof *h);
	h->block_size = get_le32(in + H_BLOCK);
	memcpy(h->barcode, in + H_BARCODE, H_BARCODE_LEN);
	h->objects = get_le64(in + H_OBJECTS);
	h->filemarks = get_le64(in + H_FILEMARKS);
	h->stream_bytes = get_le64(in + H_STREAM);
	h->created = get_le64(in + H_CREATED);
	memcpy(h->library, in + H_LIBRARY, H_LIBRARY_LEN);
	return h->block_size ? VTL_OK : VTL_E_CORRUPT;
}

/* ------------------------------------------------------------ the walker */

int recwalk_feed(struct recwalk *w, const uint8_t *p, size_t n, void (*start)(void *arg, uint64_t object, uint64_t off),
		 void *arg)
{
	while (n && !w->bad) {
		if (w->payload_left) {
			size_t take = n < w->payload_left ? n : (size_t)w->payload_left;
			if (!w->headers_only)
				w->crc = crc32c(w->crc, p, take);
			w->payload_left -= take;
			p += take;
			n -= take;
			w->off += take;
			if (!w->payload_left && !w->headers_only && w->crc != w->want_crc)
				w->bad = true;
			continue;
		}
		if (w->hdr_have == 0 && start)
			start(arg, w->next_object, w->off);
		size_t take = sizeof w->hdr - w->hdr_have;
		if (take > n)
			take = n;
		memcpy(w->hdr + w->hdr_have, p, take);
		w->hdr_have += (unsigned)take;
		p += take;
		n -= take;
		w->off += take;
		if (w->hdr_have < sizeof w->hdr)
			break;
		w->hdr_have = 0;
		struct rec_header h;
		if (rec_header_decode(w->hdr, &h) != 0 || h.object != w->next_object ||
		    (h.type != REC_DATA && h.type != REC_FILEMARK)) {
			w->bad = true;
			break;
		}
		w->next_object++;
		w->filemarks += h.type == REC_FILEMARK;
		w->payload_left = h.stored_len;
		w->want_crc = h.payload_crc;
		w->crc = 0;
	}
	return w->bad ? VTL_E_CORRUPT : VTL_OK;
}

int recwalk_end(const struct recwalk *w)
{
	return w->bad || w->hdr_have || w->payload_left ? VTL_E_CORRUPT : VTL_OK;
}

/* ---------------------------------------------------------------- writing */

struct writer {
	struct phys_lib *l;
	unsigned d;
	struct vtl_cart *c;
	struct recwalk walk;
	struct copy_index_entry *index;
	uint64_t nblocks, at;  /* data blocks in all; the one being written */
	size_t b;
	int walk_rc;
	bool warned;           /* the drive passed early warning */
	const uint8_t *header; /* the header block, written just before the first data block */
	bool header_done;
};

static void note_start(void *arg, uint64_t object, uint64_t off)
{
	struct writer *w = arg;
	struct copy_index_entry *e = &w->index[off / w->b];
	if (e->first_object == NO_OBJECT) {
		e->first_object = object;
		e->start = (uint32_t)(off % w->b);
	}
}

static int source_read(void *arg, uint64_t off, void *buf, size_t len)
{
	struct writer *w = arg;
	int rc = vtl_cart_stream_read(w->c, off, buf, len);
	return rc == VTL_E_CORRUPT || rc == VTL_E_INVAL ? VTL_E_MEDIUM : rc;
}

static int put_block(struct writer *w, const void *buf, size_t len)
{
	int rc = w->l->ops->write_block(w->l, w->d, buf, len);
	if (rc == VTL_W_EARLY_WARNING) {
		w->warned = true; /* written: the copy may still fit; VOLUME OVERFLOW would say it does not */
		rc = VTL_OK;
	}
	return rc;
}

/*
 * The header goes to tape only when the first data block is ready to follow
 * it: written earlier, it would reach the drive alone while the ring fills,
 * the drive's buffer would run dry behind it, and the tape would stop and
 * back-hitch before the data even started.
 */
static int put_header(struct writer *w)
{
	if (w->header_done)
		return VTL_OK;
	w->header_done = true;
	return put_block(w, w->header, COPY_HEADER_LEN);
}

static int sink_write(void *arg, const void *buf, size_t len)
{
	struct writer *w = arg;
	int rc = put_header(w);
	if (rc)
		return rc;
	struct copy_index_entry *e = &w->index[w->at];
	e->crc = crc32c(0, buf, len);
	/* Check the records before they go to tape: a damaged cartridge is not copied as if it were sound. */
	if (recwalk_feed(&w->walk, buf, len, note_start, w) != VTL_OK) {
		w->walk_rc = VTL_E_MEDIUM;
		return VTL_E_MEDIUM;
	}
	w->at++;
	return put_block(w, buf, len);
}

/* The digest's chain: each data block's CRC32C, little endian, in order. */
static uint32_t digest_add(uint32_t chain, uint32_t block_crc)
{
	uint8_t b[4];
	put_le32(b, block_crc);
	return crc32c(chain, b, sizeof b);
}

static uint32_t index_digest(const struct copy_index_entry *e, uint64_t n)
{
	uint32_t crc = 0;
	for (uint64_t i = 0; i < n; i++)
		crc = digest_add(crc, e[i].crc);
	return crc;
}

static void digest_text(uint32_t d, char out[COPY_DIGEST_MAX])
{
	snprintf(out, COPY_DIGEST_MAX, "crc32c-blocks:%08x", d);
}

/* ------------------------------------------------- the disk copy's digest */

#define DIGEST_READ_BYTES (4u << 20) /* one read of the record stream: a few large reads, not many small ones */

/* One digest being chained: the CRC of the block in progress, and how far into it the stream is. */
struct digest_chain {
	uint32_t b, chain, block_crc;
	uint64_t in_block;
};

static void chain_feed(struct digest_chain *d, const uint8_t *p, size_t n)
{
	while (n) {
		size_t take = d->b - d->in_block < n ? (size_t)(d->b - d->in_block) : n;
		d->block_crc = crc32c(d->block_crc, p, take);
		d->in_block += take;
		p += take;
		n -= take;
		if (d->in_block == d->b) {
			d->chain = digest_add(d->chain, d->block_crc);
			d->block_crc = 0;
			d->in_block = 0;
		}
	}
}

/* Reads c's record stream from its start in large pieces and hands each to fn; stops at fn's first error. */
static int stream_each(struct vtl_cart *c, int (*fn)(void *arg, const uint8_t *p, size_t n), void *arg)
{
	uint64_t total = vtl_cart_stream_size(c);
	uint8_t *buf = malloc(DIGEST_READ_BYTES);
	if (!buf)
		return VTL_E_NOMEM;
	int rc = VTL_OK;
	for (uint64_t off = 0; rc == VTL_OK && off < total;) {
		size_t len = total - off < DIGEST_READ_BYTES ? (size_t)(total - off) : DIGEST_READ_BYTES;
		if ((rc = vtl_cart_stream_read(c, off, buf, len)) == VTL_OK)
			rc = fn(arg, buf, len);
		off += len;
	}
	free(buf);
	return rc == VTL_E_CORRUPT ? VTL_E_MEDIUM : rc;
}

struct digest_pass {
	struct digest_chain *d;
	size_t n;
};

static int digests_feed(void *arg, const uint8_t *p, size_t n)
{
	struct digest_pass *dp = arg;
	for (size_t i = 0; i < dp->n; i++)
		chain_feed(&dp->d[i], p, n);
	return VTL_OK;
}

int copy_stream_digests(struct vtl_cart *c, const uint32_t *block_size, size_t n, char (*digest)[COPY_DIGEST_MAX])
{
	struct digest_chain d[COPY_DIGEST_SIZES_MAX] = {{0}};
	if (!n || n > COPY_DIGEST_SIZES_MAX)
		return VTL_E_INVAL;
	for (size_t i = 0; i < n; i++) {
		if (block_size[i] < COPY_BLOCK_MIN || block_size[i] > COPY_BLOCK_MAX)
			return VTL_E_INVAL;
		d[i].b = block_size[i];
	}
	struct digest_pass dp = {d, n};
	int rc = stream_each(c, digests_feed, &dp);
	if (rc)
		return rc;
	for (size_t i = 0; i < n; i++) {
		if (d[i].in_block) /* the last block is shorter */
			d[i].chain = digest_add(d[i].chain, d[i].block_crc);
		digest_text(d[i].chain, digest[i]);
	}
	return VTL_OK;
}

static int check_feed(void *arg, const uint8_t *p, size_t n)
{
	return recwalk_feed(arg, p, n, NULL, NULL) == VTL_OK ? VTL_OK : VTL_E_MEDIUM;
}

int copy_stream_check(struct vtl_cart *c, uint64_t *bad_at)
{
	struct recwalk w = {0};
	struct vtl_position pos;
	vtl_cart_position(c, &pos);
	int rc = stream_each(c, check_feed, &w);
	if (rc == VTL_OK && (recwalk_end(&w) != VTL_OK || w.next_object != pos.eod))
		rc = VTL_E_MEDIUM;
	*bad_at = w.off;
	return rc;
}

/* The trailer as bytes: the fixed part, the entries, its own CRC32C. The caller frees *out. */
static int trailer_encode(const struct copy_result *r, const struct copy_index_entry *e, uint32_t digest,
			  uint8_t **out, size_t *len)
{
	size_t n;
	if (__builtin_mul_overflow(r->data_blocks, (size_t)ENTRY_LEN, &n) ||
	    __builtin_add_overflow(n, (size_t)T_FIXED + 4, &n))
		return VTL_E_NOMEM;
	uint8_t *t = calloc(1, n);
	if (!t)
		return VTL_E_NOMEM;
	memcpy(t + T_MAGIC, COPY_TRAILER_MAGIC, sizeof COPY_TRAILER_MAGIC);
	put_le32(t + T_VERSION, COPY_VERSION);
	put_le32(t + T_ENTRY, ENTRY_LEN);
	put_le64(t + T_DATA_BLOCKS, r->data_blocks);
	put_le64(t + T_STREAM, r->stream_bytes);
	put_le64(t + T_OBJECTS, r->objects);
	put_le64(t + T_FILEMARKS, r->filemarks);
	put_le32(t + T_DIGEST, digest);
	for (uint64_t i = 0; i < r->data_blocks; i++) {
		uint8_t *p = t + T_FIXED + i * ENTRY_LEN;
		put_le64(p, e[i].first_object);
		put_le32(p + 8, e[i].start);
		put_le32(p + 12, e[i].crc);
	}
	put_le32(t + n - 4, crc32c(0, t, n - 4));
	*out = t;
	*len = n;
	return VTL_OK;
}

/* The logical block where a copy written now on drive d starts; the drive must be ready. */
static int where_copy_starts(struct phys_lib *l, unsigned d, uint64_t *block)
{
	struct phys_drive_status st;
	int rc = l->ops->status(l, d, &st);
	if (rc)
		return rc;
	if (!st.ready)
		return phys_fail(l, VTL_E_IO, "drive %u is not ready", d);
	*block = st.block;
	return VTL_OK;
}

int copy_write(struct phys_lib *l, unsigned d, struct vtl_cart *c, const struct copy_job *job, struct copy_result *res)
{
	memset(res, 0, sizeof *res);
	struct vtl_position pos;
	vtl_cart_position(c, &pos);
	size_t b = job->ring.buffer_size;
	/* Nothing is written that copy_verify would refuse to read back. */
	if (b < COPY_BLOCK_MIN || b > COPY_BLOCK_MAX)
		return phys_fail(l, VTL_E_INVAL, "copy block size %zu: %u to %u bytes", b, COPY_BLOCK_MIN, COPY_BLOCK_MAX);
	res->stream_bytes = vtl_cart_stream_size(c);
	if (res->stream_bytes > COPY_STREAM_MAX)
		return phys_fail(l, VTL_E_INVAL, "cartridge %s: %llu stream bytes, more than a copy may hold (%llu)",
				 vtl_cart_barcode(c), (unsigned long long)res->stream_bytes,
				 (unsigned long long)COPY_STREAM_MAX);
	int rc = where_copy_starts(l, d, &res->block);
	if (rc)
		return rc;
	res->objects = pos.eod;
	res->block_size = (uint32_t)b;
	res->data_blocks = res->stream_bytes / b + (res->stream_bytes % b != 0);

	struct copy_header h = {.block_size = (uint32_t)b, .objects = pos.eod, .stream_bytes = res->stream_bytes,
				.created = (uint64_t)time(NULL)};
	snprintf(h.barcode, sizeof h.barcode, "%s", vtl_cart_barcode(c));
	snprintf(h.library, sizeof h.library, "%s", job->library ? job->library : "");
	h.filemarks = vtl_cart_filemarks(c);
	uint8_t hb[COPY_HEADER_LEN];
	copy_header_encode(&h, hb);

	struct writer w = {.l = l, .d = d, .c = c, .nblocks = res->data_blocks, .b = b, .header = hb};
	size_t index_bytes;
	if (__builtin_mul_overflow(res->data_blocks ? res->data_blocks : 1, sizeof *w.index, &index_bytes))
		return VTL_E_NOMEM;
	w.index = malloc(index_bytes);
	if (!w.index)
		return VTL_E_NOMEM;
	for (uint64_t i = 0; i < res->data_blocks; i++)
		w.index[i] = (struct copy_index_entry){.first_object = NO_OBJECT};
	{
		struct stream_job sj = {.cfg = job->ring, .total = res->stream_bytes, .read = source_read, .read_arg = &w,
					.write = sink_write, .write_arg = &w, .progress = job->progress,
					.progress_arg = job->progress_arg, .cancel = job->cancel};
		rc = stream_run(&sj, &res->counters);
		if (rc == VTL_OK && (recwalk_end(&w.walk) != VTL_OK || w.walk.next_object != pos.eod))
			rc = VTL_E_MEDIUM;
		if (rc == VTL_E_MEDIUM)
			rc = phys_fail(l, rc, "cartridge %s: its record stream is damaged near byte %llu; not copied",
				  vtl_cart_barcode(c), (unsigned long long)w.walk.off);
		if (rc == VTL_OK)
			rc = put_header(&w); /* an empty cartridge: no data block brought it */
	}
	uint8_t *t = NULL;
	size_t tlen = 0;
	if (rc == VTL_OK) {
		res->filemarks = w.walk.filemarks;
		uint32_t digest = index_digest(w.index, res->data_blocks);
		digest_text(digest, res->digest);
		rc = trailer_encode(res, w.index, digest, &t, &tlen);
	}
	for (size_t off = 0; rc == VTL_OK && off < tlen; off += b) {
		rc = put_block(&w, t + off, tlen - off < b ? tlen - off : b);
		res->trailer_blocks++;
	}
	if (rc == VTL_OK)
		rc = l->ops->write_filemarks(l, d, 1);
	res->tape_bytes = COPY_HEADER_LEN + res->stream_bytes + tlen;
	free(t);
	free(w.index);
	return rc;
}

/* -------------------------------------------------------------- verifying */

/* Reads exactly one block of at most cap bytes; a filemark or the end where a block should be is damage. */
static int get_block(struct phys_lib *l, unsigned d, uint8_t *buf, size_t cap, size_t *len, const char *what, char *err,
		     size_t errlen)
{
	int rc = l->ops->read_block(l, d, buf, cap, len);
	if (rc == VTL_OK)
		return VTL_OK;
	if (rc == VTL_W_FILEMARK || rc == VTL_E_EOD || rc == VTL_E_INVAL) {
		snprintf(err, errlen, "%s: %s", what,
			 rc == VTL_W_FILEMARK ? "a filemark instead" : rc == VTL_E_EOD ? "end of data instead" : "too long");
		return VTL_E_MEDIUM;
	}
	snprintf(err, errlen, "%s: %s", what, phys_error(l));
	return rc;
}

struct stager;
static int read_copy_into(struct phys_lib *l, unsigned d, uint64_t block, const struct copy_expect *want,
			  struct stager *sg, struct copy_result *res, char *err, size_t errlen);

/* Reassembles whole records from the data blocks of a copy and appends them to the cartridge being staged. */
struct stager {
	struct vtl_cart *dst;
	uint64_t have_objects; /* records dst held when the stage began: not appended again */
	uint8_t *rec;       /* one record: header and payload */
	size_t have, need;
	int rc;
	const struct copy_stage_opts *o;
	uint64_t bytes, total;  /* stream bytes fed, of */
	uint64_t mark_ns, mark_bytes; /* the last progress report */
};

#define STAGE_PROGRESS_NS 500000000ull /* progress about twice a second */

static void stage_progress(struct stager *s)
{
	if (!s->o || !s->o->progress)
		return;
	uint64_t now = vtl_mono_ns();
	if (now - s->mark_ns < STAGE_PROGRESS_NS && s->bytes < s->total)
		return;
	double mbs = s->mark_ns ? (double)(s->bytes - s->mark_bytes) * 1e3 / (double)(now - s->mark_ns) : 0;
	s->o->progress(s->o->progress_arg, s->bytes, s->total, mbs);
	s->mark_ns = now;
	s->mark_bytes = s->bytes;
}

/* Appends one whole record (header and payload, len bytes), unless an earlier stage brought it back already. */
static int stage_record(struct stager *s, const uint8_t *rec, size_t len)
{
	struct rec_header h;
	if (rec_header_decode(rec, &h) != 0)
		return s->rc = VTL_E_MEDIUM;
	int rc = h.object < s->have_objects ? VTL_OK : vtl_cart_append_stored(s->dst, rec, len);
	if (rc < 0)
		return s->rc = rc == VTL_E_CORRUPT ? VTL_E_MEDIUM : rc;
	return VTL_OK;
}

static int stage_feed(struct stager *s, const uint8_t *p, size_t n)
{
	if (s->o && s->o->cancel && atomic_load(s->o->cancel))
		return s->rc = VTL_E_BUSY;
	s->bytes += n;
	stage_progress(s);
	while (n && s->rc == VTL_OK) {
		struct rec_header h;
		if (s->have == 0 && n >= REC_HEADER_LEN && rec_header_decode(p, &h) == 0 &&
		    h.stored_len <= n - REC_HEADER_LEN) {
			/* A record whole inside this block: appended from where it lies, not copied first. */
			size_t len = REC_HEADER_LEN + h.stored_len;
			if (stage_record(s, p, len) != VTL_OK)
				break;
			p += len;
			n -= len;
			continue;
		}
		size_t take = s->need - s->have < n ? s->need - s->have : n;
		memcpy(s->rec + s->have, p, take);
		s->have += take;
		p += take;
		n -= take;
		if (s->have < s->need)
			break;
		if (s->need == REC_HEADER_LEN) {
			/* The header says how much payload follows (the walker has checked it already). */
			if (rec_header_decode(s->rec, &h) != 0 || h.stored_len > VTL_BLOCK_MAX)
				return s->rc = VTL_E_MEDIUM;
			s->need += h.stored_len;
			if (s->have < s->need)
				continue;
		}
		if (stage_record(s, s->rec, s->have) != VTL_OK)
			break;
		s->have = 0;
		s->need = REC_HEADER_LEN;
	}
	return s->rc;
}

/* Reads a stacked copy back and checks it; with dst, also appends its records to dst as they come. */
static int read_copy(struct phys_lib *l, unsigned d, uint64_t block, const struct copy_expect *want,
		     struct vtl_cart *dst, const struct copy_stage_opts *o, struct copy_result *res, char *err,
		     size_t errlen)
{
	struct stager sg = {.dst = dst, .need = REC_HEADER_LEN, .o = o};
	if (dst) {
		struct vtl_position pos;
		vtl_cart_position(dst, &pos);
		sg.have_objects = pos.eod;
		if (pos.object != pos.eod)
			return VTL_E_INVAL;
	}
	if (dst && !(sg.rec = malloc(REC_HEADER_LEN + (size_t)VTL_BLOCK_MAX)))
		return VTL_E_NOMEM;
	int rc = read_copy_into(l, d, block, want, dst ? &sg : NULL, res, err, errlen);
	free(sg.rec);
	return rc;
}

int copy_verify(struct phys_lib *l, unsigned d, uint64_t block, const struct copy_expect *want,
		struct copy_result *res, char *err, size_t errlen)
{
	return read_copy(l, d, block, want, NULL, NULL, res, err, errlen);
}

int copy_stage(struct phys_lib *l, unsigned d, uint64_t block, const struct copy_expect *want, struct vtl_cart *dst,
	       const struct copy_stage_opts *o, struct copy_result *res, char *err, size_t errlen)
{
	return read_copy(l, d, block, want, dst, o, res, err, errlen);
}

#define READ_RING_BUFFERS 8 /* blocks the drive may read ahead of the checks */

/*
 * Reading a copy back trusts nothing the tape says until it is checked: the
 * header's sizes are compared with the catalog's and bounded (COPY_BLOCK_MIN
 * .. COPY_BLOCK_MAX and the drive's limit, COPY_STREAM_MAX) before anything
 * is allocated; the data blocks and the trailer are then exactly as many
 * and as long as the header implies, and a block more or less is damage.
 * Nothing is held per data block: their CRCs are chained into the digest as
 * they come, and the trailer's entries are chained the same way as its
 * blocks come, so the two must agree.
 */

/* The data blocks of a copy being read back: the drive's side (a ring reader) and the checking side. */
struct data_pass {
	struct phys_lib *l;
	unsigned d;
	uint32_t digest;       /* the data blocks' CRCs so far, chained as the digest is */
	struct recwalk walk;
	struct stager *sg;     /* staging: the records go to a cartridge too */
	char rerr[320], werr[256];
};

static int data_read(void *arg, uint64_t off, void *buf, size_t len)
{
	struct data_pass *p = arg;
	size_t got = 0;
	int rc = get_block(p->l, p->d, buf, len, &got, "data block", p->rerr, sizeof p->rerr);
	if (rc == VTL_OK && got != len) {
		snprintf(p->rerr, sizeof p->rerr, "data block at stream byte %llu holds %zu bytes, not %zu",
			 (unsigned long long)off, got, len);
		rc = VTL_E_MEDIUM;
	}
	return rc;
}

static int data_check(void *arg, const void *buf, size_t len)
{
	struct data_pass *p = arg;
	p->digest = digest_add(p->digest, crc32c(0, buf, len));
	if (recwalk_feed(&p->walk, buf, len, NULL, NULL) != VTL_OK) {
		snprintf(p->werr, sizeof p->werr, "a damaged record near stream byte %llu", (unsigned long long)p->walk.off);
		return VTL_E_MEDIUM;
	}
	int rc = p->sg ? stage_feed(p->sg, buf, len) : VTL_OK;
	if (rc != VTL_OK)
		snprintf(p->werr, sizeof p->werr, "staging the records back: %s", vtl_strerror(rc));
	return rc;
}

/* The header against what the catalog recorded and the format's bounds; drive_max is READ BLOCK LIMITS (0: unknown). */
static int header_check(const struct copy_header *h, const struct copy_expect *want, uint32_t drive_max, char *err,
			size_t errlen)
{
	uint32_t bmax = drive_max && drive_max < COPY_BLOCK_MAX ? drive_max : COPY_BLOCK_MAX;
	if (want->barcode && strcmp(h->barcode, want->barcode) != 0)
		snprintf(err, errlen, "header: barcode %.32s, the catalog says %s", h->barcode, want->barcode);
	else if (h->block_size < COPY_BLOCK_MIN || h->block_size > bmax)
		snprintf(err, errlen, "header: block_size %u, outside %u..%u (%s)", h->block_size, COPY_BLOCK_MIN, bmax,
			 bmax == COPY_BLOCK_MAX ? "the largest copy block" : "the drive's READ BLOCK LIMITS");
	else if (want->block_size && h->block_size != want->block_size)
		snprintf(err, errlen, "header: block_size %u, the catalog says %u", h->block_size, want->block_size);
	else if (h->stream_bytes != want->stream_bytes)
		snprintf(err, errlen, "header: stream_bytes %llu, the catalog says %llu", (unsigned long long)h->stream_bytes,
			 (unsigned long long)want->stream_bytes);
	else if (h->stream_bytes > COPY_STREAM_MAX)
		snprintf(err, errlen, "header: stream_bytes %llu, more than a copy may hold (%llu)",
			 (unsigned long long)h->stream_bytes, (unsigned long long)COPY_STREAM_MAX);
	else if (h->objects > h->stream_bytes / REC_HEADER_LEN || h->filemarks > h->objects)
		snprintf(err, errlen, "header: %llu objects with %llu filemarks, more than %llu stream bytes hold",
			 (unsigned long long)h->objects, (unsigned long long)h->filemarks,
			 (unsigned long long)h->stream_bytes);
	else
		return VTL_OK;
	return VTL_E_MEDIUM;
}

/*
 * The trailer, checked as its blocks come without holding it: len bytes
 * (T_FIXED, ENTRY_LEN per data block, its CRC32C), the entries' CRCs chained
 * as the digest chains the data blocks'.
 */
struct trailer_check {
	uint64_t len, at;
	uint32_t crc;   /* CRC32C of the bytes before its own */
	uint32_t chain; /* the entries' block CRCs */
	uint8_t fixed[T_FIXED], entry[ENTRY_LEN], tail[4];
};

static size_t min_size(size_t a, uint64_t b)
{
	return b < a ? (size_t)b : a;
}

static void trailer_feed(struct trailer_check *t, const uint8_t *p, size_t n)
{
	uint64_t body = t->len - 4;
	while (n && t->at < t->len) {
		size_t k;
		if (t->at < T_FIXED) {
			k = min_size(n, T_FIXED - t->at);
			memcpy(t->fixed + t->at, p, k);
		} else if (t->at < body) {
			size_t off = (size_t)((t->at - T_FIXED) % ENTRY_LEN);
			k = min_size(n, ENTRY_LEN - off);
			memcpy(t->entry + off, p, k);
			if (off + k == ENTRY_LEN)
				t->chain = digest_add(t->chain, get_le32(t->entry + 12));
		} else {
			size_t off = (size_t)(t->at - body);
			k = min_size(n, 4 - off);
			memcpy(t->tail + off, p, k);
		}
		if (t->at < body)
			t->crc = crc32c(t->crc, p, k);
		t->at += k;
		p += k;
		n -= k;
	}
}

/* Reads the trailer's blocks, each of b bytes but the last, as t->len implies; then the filemark must follow. */
static int trailer_read(struct phys_lib *l, unsigned d, uint8_t *buf, size_t b, struct trailer_check *t,
			struct copy_result *res, char *err, size_t errlen)
{
	for (uint64_t left = t->len; left;) {
		size_t want = min_size(b, left), got = 0;
		int rc = get_block(l, d, buf, b, &got, "trailer block", err, errlen);
		if (rc)
			return rc;
		if (got != want) {
			snprintf(err, errlen, "trailer block %llu: %zu bytes, the header implies %zu",
				 (unsigned long long)res->trailer_blocks, got, want);
			return VTL_E_MEDIUM;
		}
		trailer_feed(t, buf, got);
		left -= got;
		res->trailer_blocks++;
	}
	size_t got = 0;
	int rc = l->ops->read_block(l, d, buf, b, &got);
	if (rc == VTL_W_FILEMARK)
		return VTL_OK;
	if (rc == VTL_OK || rc == VTL_E_INVAL || rc == VTL_E_EOD) {
		snprintf(err, errlen, "trailer: %s where the filemark should be (the header implies %llu trailer bytes)",
			 rc == VTL_E_EOD ? "end of data" : "another block", (unsigned long long)t->len);
		return VTL_E_MEDIUM;
	}
	snprintf(err, errlen, "trailer: %s", phys_error(l));
	return rc;
}

/* The trailer's fields against the header and what the data blocks gave. */
static int trailer_fields(const struct trailer_check *t, const struct copy_header *h, uint64_t nblocks,
			  const struct data_pass *dp, char *err, size_t errlen)
{
	const uint8_t *f = t->fixed;
	uint64_t v;
	if (get_le32(t->tail) != t->crc)
		snprintf(err, errlen, "trailer: CRC32C %08x, its bytes give %08x", get_le32(t->tail), t->crc);
	else if (memcmp(f + T_MAGIC, COPY_TRAILER_MAGIC, sizeof COPY_TRAILER_MAGIC) != 0 ||
		 get_le32(f + T_VERSION) != COPY_VERSION || get_le32(f + T_ENTRY) != ENTRY_LEN)
		snprintf(err, errlen, "trailer: not a version %d trailer with %d-byte entries", COPY_VERSION, ENTRY_LEN);
	else if ((v = get_le64(f + T_DATA_BLOCKS)) != nblocks)
		snprintf(err, errlen, "trailer: data_blocks %llu, the header implies %llu", (unsigned long long)v,
			 (unsigned long long)nblocks);
	else if ((v = get_le64(f + T_STREAM)) != h->stream_bytes)
		snprintf(err, errlen, "trailer: stream_bytes %llu, the header says %llu", (unsigned long long)v,
			 (unsigned long long)h->stream_bytes);
	else if ((v = get_le64(f + T_OBJECTS)) != h->objects)
		snprintf(err, errlen, "trailer: objects %llu, the header says %llu", (unsigned long long)v,
			 (unsigned long long)h->objects);
	else if ((v = get_le64(f + T_FILEMARKS)) != dp->walk.filemarks)
		snprintf(err, errlen, "trailer: filemarks %llu, the records hold %llu", (unsigned long long)v,
			 (unsigned long long)dp->walk.filemarks);
	else if (get_le32(f + T_DIGEST) != dp->digest || t->chain != dp->digest)
		snprintf(err, errlen, "the trailer does not match the data blocks (its digest %08x, its index %08x, the "
			 "blocks %08x)", get_le32(f + T_DIGEST), t->chain, dp->digest);
	else
		return VTL_OK;
	return VTL_E_MEDIUM;
}

static int read_copy_into(struct phys_lib *l, unsigned d, uint64_t block, const struct copy_expect *want,
			  struct stager *sg, struct copy_result *res, char *err, size_t errlen)
{
	memset(res, 0, sizeof *res);
	res->block = block;
	err[0] = 0;
	struct phys_drive_status st;
	int rc = l->ops->status(l, d, &st);
	if (rc) {
		snprintf(err, errlen, "drive %u: %s", d, phys_error(l));
		return rc;
	}
	if ((rc = l->ops->locate(l, d, block))) {
		snprintf(err, errlen, "locate to block %llu: %s", (unsigned long long)block, phys_error(l));
		return rc;
	}
	uint8_t hb[COPY_HEADER_LEN];
	size_t len = 0;
	if ((rc = get_block(l, d, hb, sizeof hb, &len, "header block", err, errlen)))
		return rc;
	struct copy_header h;
	if (copy_header_decode(hb, len, &h) != VTL_OK) {
		snprintf(err, errlen, "block %llu is not the header of a copy of %s", (unsigned long long)block,
			 want->barcode ? want->barcode : "a cartridge");
		return VTL_E_MEDIUM;
	}
	if ((rc = header_check(&h, want, st.max_block, err, errlen)))
		return rc;
	/* Bounded above, so neither can overflow; checked all the same, since a wrap here is a heap overflow later. */
	size_t b = h.block_size;
	uint64_t nblocks = h.stream_bytes / b + (h.stream_bytes % b != 0);
	struct trailer_check tc = {0};
	if (__builtin_mul_overflow(nblocks, (uint64_t)ENTRY_LEN, &tc.len) ||
	    __builtin_add_overflow(tc.len, (uint64_t)T_FIXED + 4, &tc.len)) {
		snprintf(err, errlen, "header: %llu data blocks, more than a trailer can index", (unsigned long long)nblocks);
		return VTL_E_MEDIUM;
	}
	if (sg)
		sg->total = h.stream_bytes;
	uint8_t *buf = malloc(b);
	if (!buf)
		return VTL_E_NOMEM;
	/* The drive reads ahead into a ring while this thread checks and stages: neither waits for the other. */
	struct data_pass dp = {.l = l, .d = d, .sg = sg};
	/* A stage appends each record with vtl_cart_append_stored, which checks its payload: once is enough. */
	dp.walk.headers_only = sg != NULL;
	struct stream_job job = {
		.cfg = {.buffers = READ_RING_BUFFERS, .buffer_size = b, .watermark = 1, .readers = 1},
		.total = h.stream_bytes,
		.read = data_read,
		.read_arg = &dp,
		.write = data_check,
		.write_arg = &dp,
		.cancel = sg && sg->o ? sg->o->cancel : NULL,
	};
	struct stream_counters sc;
	if (nblocks && (rc = stream_run(&job, &sc)) != VTL_OK)
		snprintf(err, errlen, "%s", dp.rerr[0] ? dp.rerr : dp.werr[0] ? dp.werr : vtl_strerror(rc));
	if (rc == VTL_OK && (recwalk_end(&dp.walk) != VTL_OK || dp.walk.next_object != h.objects)) {
		snprintf(err, errlen, "the record stream ends after %llu of %llu records",
			 (unsigned long long)dp.walk.next_object, (unsigned long long)h.objects);
		rc = VTL_E_MEDIUM;
	}
	if (rc == VTL_OK && dp.walk.filemarks != h.filemarks) {
		snprintf(err, errlen, "header: filemarks %llu, the records hold %llu", (unsigned long long)h.filemarks,
			 (unsigned long long)dp.walk.filemarks);
		rc = VTL_E_MEDIUM;
	}
	if (rc == VTL_OK)
		rc = trailer_read(l, d, buf, b, &tc, res, err, errlen);
	if (rc == VTL_OK)
		rc = trailer_fields(&tc, &h, nblocks, &dp, err, errlen);
	if (rc == VTL_OK) {
		digest_text(dp.digest, res->digest);
		if (want->digest && strcmp(want->digest, res->digest) != 0) {
			snprintf(err, errlen, "digest %s, the catalog says %s", res->digest, want->digest);
			rc = VTL_E_MEDIUM;
		}
	}
	res->data_blocks = nblocks;
	res->block_size = h.block_size;
	res->stream_bytes = h.stream_bytes;
	res->objects = h.objects;
	res->filemarks = dp.walk.filemarks;
	free(buf);
	return rc;
}

/* ------------------------------------------------------------ native copies */

#define FILEMARK_TAG 0xFFFFFFFFu /* what a filemark adds to a native copy's digest in place of a length */
#define PROGRESS_EVERY_S 0.5

/* The digest chain: each object adds its length (or FILEMARK_TAG), then its bytes. */
static uint32_t native_add(uint32_t crc, uint32_t tag, const void *data, size_t len)
{
	uint8_t b[4];
	put_le32(b, tag);
	crc = crc32c(crc, b, sizeof b);
	return len ? crc32c(crc, data, len) : crc;
}

static void native_text(uint32_t crc, char out[COPY_DIGEST_MAX])
{
	snprintf(out, COPY_DIGEST_MAX, COPY_NATIVE_PREFIX "%08x", crc);
}

int copy_write_native(struct phys_lib *l, unsigned d, struct vtl_cart *c, const struct copy_job *job,
		      struct copy_result *res)
{
	memset(res, 0, sizeof *res);
	int rc = where_copy_starts(l, d, &res->block);
	if (rc)
		return rc;
	uint8_t *buf = malloc(VTL_BLOCK_MAX);
	if (!buf)
		return VTL_E_NOMEM;
	if ((rc = vtl_cart_rewind(c))) {
		free(buf);
		return phys_fail(l, rc, "cartridge %s: cannot rewind it: %s", vtl_cart_barcode(c), vtl_strerror(rc));
	}
	struct vtl_position pos;
	vtl_cart_position(c, &pos);
	res->objects = pos.eod;
	uint32_t crc = 0;
	double t0 = vtl_mono_s(), last = t0;
	uint64_t last_bytes = 0;
	for (;;) {
		if (job->cancel && atomic_load(job->cancel)) {
			rc = phys_fail(l, VTL_E_BUSY, "cancelled");
			break;
		}
		struct vtl_read_result r;
		if ((rc = vtl_cart_read(c, buf, VTL_BLOCK_MAX, &r))) {
			if (rc == VTL_E_MEDIUM || rc == VTL_E_CORRUPT)
				rc = phys_fail(l, VTL_E_MEDIUM, "cartridge %s: object %llu is damaged; not copied",
					       vtl_cart_barcode(c), (unsigned long long)r.object);
			else if (rc == VTL_E_ENCRYPTED)
				/* The key lives only in the drive that wrote it (docs/operations.md, "Encryption"). */
				rc = phys_fail(l, VTL_E_ENCRYPTED,
					       "cartridge %s: object %llu is encrypted; a native export would need the "
					       "host's key, which only the drive holds: not copied (a stacked copy carries "
					       "encrypted blocks unchanged)",
					       vtl_cart_barcode(c), (unsigned long long)r.object);
			break;
		}
		if (r.type == VTL_OBJ_EOD)
			break;
		if (r.type == VTL_OBJ_FILEMARK) {
			rc = l->ops->write_filemarks(l, d, 1);
			crc = native_add(crc, FILEMARK_TAG, NULL, 0);
			res->filemarks++;
		} else {
			rc = l->ops->write_block(l, d, buf, r.copied);
			if (rc == VTL_W_EARLY_WARNING)
				rc = VTL_OK;
			crc = native_add(crc, r.copied, buf, r.copied);
			res->stream_bytes += r.copied;
			res->data_blocks++;
		}
		if (rc)
			break;
		double now = vtl_mono_s();
		if (job->progress && now - last >= PROGRESS_EVERY_S) {
			res->counters.bytes = res->stream_bytes;
			res->counters.seconds = now - t0;
			res->counters.avg_mbs = (double)res->stream_bytes / (now - t0) / 1e6;
			struct stream_progress p = {.bytes = res->stream_bytes, .total = pos.stored_bytes, .c = &res->counters,
						    .mbs = (double)(res->stream_bytes - last_bytes) / (now - last) / 1e6};
			job->progress(job->progress_arg, &p);
			last = now;
			last_bytes = res->stream_bytes;
		}
	}
	/* Whatever the host's last object was, the drive writes its buffer out now. */
	if (rc == VTL_OK)
		rc = l->ops->write_filemarks(l, d, 0);
	free(buf);
	res->counters.bytes = res->stream_bytes;
	res->counters.blocks = res->data_blocks;
	res->counters.seconds = vtl_mono_s() - t0;
	res->counters.avg_mbs = res->counters.seconds > 0 ? (double)res->stream_bytes / res->counters.seconds / 1e6 : 0;
	res->tape_bytes = res->stream_bytes;
	native_text(crc, res->digest);
	return rc;
}

int copy_verify_native(struct phys_lib *l, unsigned d, struct vtl_cart *c, const char *want, struct copy_result *res,
		       char *err, size_t errlen)
{
	memset(res, 0, sizeof *res);
	err[0] = 0;
	int rc = l->ops->rewind(l, d);
	if (rc) {
		snprintf(err, errlen, "rewind: %s", phys_error(l));
		return rc;
	}
	if (c && (rc = vtl_cart_rewind(c))) {
		snprintf(err, errlen, "cannot rewind the cartridge: %s", vtl_strerror(rc));
		return rc;
	}
	uint8_t *tb = malloc(VTL_BLOCK_MAX), *cb = c ? malloc(VTL_BLOCK_MAX) : NULL;
	if (!tb || (c && !cb)) {
		free(tb);
		free(cb);
		return VTL_E_NOMEM;
	}
	uint32_t crc = 0;
	for (uint64_t obj = 0;; obj++) {
		size_t len = 0;
		int t = l->ops->read_block(l, d, tb, VTL_BLOCK_MAX, &len);
		if (t != VTL_OK && t != VTL_W_FILEMARK && t != VTL_E_EOD) {
			snprintf(err, errlen, "object %llu: %s", (unsigned long long)obj, phys_error(l));
			rc = t == VTL_E_INVAL ? VTL_E_MEDIUM : t;
			break;
		}
		if (c) {
			struct vtl_read_result r;
			if ((rc = vtl_cart_read(c, cb, VTL_BLOCK_MAX, &r))) {
				snprintf(err, errlen, "object %llu of the cartridge: %s", (unsigned long long)obj, vtl_strerror(rc));
				break;
			}
			bool same = t == VTL_E_EOD ? r.type == VTL_OBJ_EOD
				  : t == VTL_W_FILEMARK ? r.type == VTL_OBJ_FILEMARK
							: r.type == VTL_OBJ_DATA && r.copied == len && !memcmp(tb, cb, len);
			if (!same) {
				snprintf(err, errlen, "object %llu differs from the cartridge's", (unsigned long long)obj);
				rc = VTL_E_MEDIUM;
				break;
			}
		}
		if (t == VTL_E_EOD)
			break;
		if (t == VTL_W_FILEMARK) {
			crc = native_add(crc, FILEMARK_TAG, NULL, 0);
			res->filemarks++;
		} else {
			crc = native_add(crc, (uint32_t)len, tb, len);
			res->stream_bytes += len;
			res->data_blocks++;
		}
		res->objects = obj + 1;
	}
	free(tb);
	free(cb);
	if (rc)
		return rc;
	native_text(crc, res->digest);
	if (want && strcmp(want, res->digest) != 0) {
		snprintf(err, errlen, "digest %s, the catalog says %s", res->digest, want);
		return VTL_E_MEDIUM;
	}
	return VTL_OK;
}
