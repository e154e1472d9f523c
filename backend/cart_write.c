/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Writing at the position: a write before EOD first cuts the tape there (the
 * cut marker made durable first), then the record is appended to the last
 * segment (a new one when it is full), with the space taken from the pool
 * before it is written, and capacity and early warning counted on the medium.
 */
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "backend/cart_crypt.h"
#include "backend/compress.h"
#include "backend/internal.h"
#include "common/crc32c.h"
#include "common/grow.h"
#include "common/vtl_error.h"

/* Discards every object from obj on. */
static int truncate_at(struct vtl_cart *c, uint64_t obj)
{
	if (obj >= c->tape.eod)
		return VTL_OK;
	if (c->p.worm)
		return VTL_E_WORM;
	ra_reset(c->ra);
	int rc = seal_wait(c);
	if (rc)
		return rc;
	size_t si = cart_seg_of(c, obj);
	if (c->tape.segs[si].lost && obj == c->tape.segs[si].first_obj && si > 0)
		si--; /* a cut at the start of a lost range: the segment before it is cut at its end */
	if (c->tape.segs[si].lost)
		return VTL_E_MEDIUM; /* inside objects no file holds: there is nowhere to cut */
	if (obj < c->tape.segs[si].first_obj + c->tape.segs[si].n_obj) {
		uint32_t o;
		if ((rc = cart_offsets(c, si, (uint32_t)(obj - c->tape.segs[si].first_obj), 1, &o)))
			return rc == VTL_E_CORRUPT ? VTL_E_MEDIUM : rc;
		if (o == 0)
			return VTL_E_MEDIUM; /* a damaged record: where it starts is not known */
	}
	/* A crash in the middle of the cut must not look like damage at the next open. */
	if ((rc = cut_marker_set(c, c->tape.segs[si].seq)))
		return rc;
	/* Highest segment first, so that a crash leaves a shorter but consistent tape. */
	while (c->tape.nseg - 1 > si) {
		struct seg *s = last_seg(c);
		char path[PATH_MAX];
		if (!s->lost) {
			if (pool_seg_path(c->pool, c->barcode, s->seq, path, sizeof path) || unlink(path) != 0)
				return VTL_E_IO;
			pool_space_give(c->pool, s->member, s->acct);
			c->wr.dir_dirty |= 1ull << s->member;
		}
		for (uint32_t q = s->lost_last + 1; s->lost && s->lost_files && q-- > s->seq;) {
			/* What is left of its files (an unreadable header) goes with it. */
			struct stat st;
			unsigned m = vtl_pool_member_for(c->pool, c->barcode, q);
			if (pool_seg_path(c->pool, c->barcode, q, path, sizeof path) || stat(path, &st) != 0)
				continue;
			if (unlink(path) != 0)
				return VTL_E_IO;
			pool_space_give(c->pool, m, (uint64_t)st.st_size);
			c->wr.dir_dirty |= 1ull << m;
		}
		c->tape.eod -= s->n_obj;
		c->tape.total_fm -= s->n_fm;
		c->tape.stored -= s->data_end - SEG_HEADER_LEN;
		seg_forget(c, s);
		c->tape.nseg--;
	}
	/*
	 * The removals must be on disk before the cut: a cut segment followed by
	 * the old later segments would not be a tape.
	 */
	if ((rc = cart_sync_dirs(c)))
		return rc;
	struct seg *s = last_seg(c);
	if (s->sealed && (rc = seg_unseal(c, si)))
		return rc;
	uint32_t rel = (uint32_t)(obj - s->first_obj);
	uint64_t new_end = rel < s->n_obj ? c->tape.off[rel] : s->data_end;
	int fd = seg_fd(c, si);
	if (fd < 0 || ftruncate(fd, (off_t)new_end) != 0)
		return VTL_E_IO;
	/* Records written from here on are not synced yet: the mark must not vouch for them. */
	if (s->synced_end > new_end && (rc = seg_mark_write(c, si, new_end)))
		return rc;
	if (s->mark_next > new_end)
		s->mark_next = new_end;
	if (s->wb_started > new_end)
		s->wb_started = new_end;
	if (s->wb_waited > new_end)
		s->wb_waited = new_end;
	dmg_cut(c, obj);
	uint32_t fm_keep = 0;
	while (fm_keep < s->n_fm && s->fm[fm_keep] < rel)
		fm_keep++;
	c->tape.eod -= s->n_obj - rel;
	c->tape.total_fm -= s->n_fm - fm_keep;
	c->tape.stored -= s->data_end - new_end;
	s->n_obj = rel;
	s->n_fm = fm_keep;
	s->data_end = new_end;
	uint64_t acct = new_end + footer_size(rel, fm_keep);
	if (s->acct > acct) {
		pool_space_give(c->pool, s->member, s->acct - acct);
		s->acct = acct;
	}
	c->cur.valid = false;
	c->wr.dirty = true;
	c->wr.need_sync = true;
	return VTL_OK;
}

/* Room for rec bytes on the tape before EOD (obj is where the write starts). */
static int capacity_check(struct vtl_cart *c, uint64_t rec)
{
	if (!c->p.capacity)
		return VTL_OK;
	uint64_t before;
	int rc = stored_before(c, c->cur.pos, &before);
	if (rc)
		return rc;
	return before + rec > c->p.capacity ? VTL_E_EOM : VTL_OK;
}

/* Makes the last segment open and ready for a record of rec bytes. */
static int prepare_append(struct vtl_cart *c, uint64_t rec)
{
	struct seg *s = last_seg(c);
	int rc;
	if (s->sealed && (rc = seg_unseal(c, c->tape.nseg - 1)))
		return rc;
	s = last_seg(c);
	if (s->n_obj > 0 && s->data_end - SEG_HEADER_LEN + rec > c->pool->segment_size) {
		if ((rc = seg_seal_last(c, false, true)))
			return rc;
		if ((rc = seg_append_new(c)))
			return rc;
	}
	return VTL_OK;
}

static int append_record(struct vtl_cart *c, struct rec_header *h, const void *payload)
{
	uint64_t rec = REC_HEADER_LEN + (uint64_t)h->stored_len;
	struct seg *s = last_seg(c);
	int fd = seg_fd(c, c->tape.nseg - 1);
	if (fd < 0)
		return VTL_E_IO;
	uint64_t take = rec + 4 + (h->type == REC_FILEMARK ? 4 : 0); /* the record and its index entries */
	int rc = pool_space_take(c->pool, s->member, take);
	if (rc)
		return rc;
	size_t fmcap = s->fm_cap;
	if ((rc = vtl_grow_to((void **)&c->tape.off, &c->tape.offcap, s->n_obj + 1, sizeof *c->tape.off)) ||
	    (h->type == REC_FILEMARK && (rc = vtl_grow_to((void **)&s->fm, &fmcap, s->n_fm + 1, sizeof *s->fm)))) {
		pool_space_give(c->pool, s->member, take);
		return rc;
	}
	s->fm_cap = (uint32_t)fmcap;
	h->object = c->tape.eod;
	unsigned char hb[REC_HEADER_LEN];
	rec_header_encode(h, hb);
	struct iovec iov[2] = {{hb, sizeof hb}, {(void *)payload, h->stored_len}};
	rc = direct_append(c, c->tape.nseg - 1, iov, h->stored_len ? 2 : 1, s->data_end);
	if (rc) {
		bool full = errno_is_full();
		/* Nothing half-written may stay behind the last whole record. */
		if (ftruncate(fd, (off_t)s->data_end) != 0)
			return cart_fence(c, VTL_E_IO);
		pool_space_give(c->pool, s->member, take);
		return full ? VTL_E_POOL_FULL : cart_fence(c, VTL_E_IO);
	}
	c->tape.off[s->n_obj] = (uint32_t)s->data_end;
	if (h->type == REC_FILEMARK) {
		s->fm[s->n_fm++] = s->n_obj;
		c->tape.total_fm++;
	}
	s->n_obj++;
	s->data_end += rec;
	s->acct += take;
	c->tape.eod++;
	c->cur.pos = c->tape.eod;
	c->tape.stored += rec;
	c->cur.valid = false;
	c->wr.dirty = true;
	c->wr.need_sync = true;
	return VTL_OK;
}

static int write_prologue(struct vtl_cart *c, uint64_t rec)
{
	if (c->p.readonly)
		return VTL_E_READONLY;
	if (c->wr.fault)
		return c->wr.fault;
	if (c->p.worm && c->cur.pos < c->tape.eod)
		return VTL_E_WORM;
	/* What earlier writes left dirty goes to the disk before this one adds to it. */
	int rc = cart_writeback(c);
	if (rc)
		return rc;
	if ((rc = capacity_check(c, rec)))
		return rc;
	c->cur.seq_run = 0;
	ra_reset(c->ra);
	if ((rc = truncate_at(c, c->cur.pos)))
		return rc;
	return prepare_append(c, rec);
}

static int ew_status(struct vtl_cart *c)
{
	return c->p.capacity && c->tape.stored >= c->p.capacity - c->p.early_warning ? VTL_W_EARLY_WARNING : VTL_OK;
}

/*
 * Every data record carries the CRC32C of the host's block (the block CRC):
 * taken once here, at the host's edge, or given by a caller that checked
 * it; a raw block's payload CRC is the same number, so it costs a pass over
 * the data only for a block that compresses.
 */
static int write_block(struct vtl_cart *c, const void *buf, size_t len, const uint32_t *known_crc)
{
	if (len == 0 || len > VTL_BLOCK_MAX || !buf)
		return VTL_E_INVAL;
	struct rec_header h = {.type = REC_DATA, .flags = REC_FLAG_BLOCK_CRC, .length = (uint32_t)len};
	const void *payload = buf;
	h.stored_len = (uint32_t)len;
	bool offered = c->wr.compress && !c->p.readonly && cpol_compress_next(&c->wr.cpol);
	if (offered) {
		int rc = scratch_need(&c->scratch.stored, &c->scratch.stored_cap, lz4_record_scratch(len));
		if (rc)
			return rc;
		uint64_t t0 = cpol_now(&c->wr.cpol);
		size_t n = lz4_record_compress(c->pool->workers, buf, len, c->scratch.stored, c->pool->lz4_accel,
					       &c->wr.lz4_slow, NULL);
		cpol_cpu_done(&c->wr.cpol, t0);
		if (n) {
			payload = c->scratch.stored;
			h.stored_len = (uint32_t)n;
			h.flags |= REC_FLAG_LZ4;
		}
	}
	uint32_t packed = h.stored_len; /* what compression made of it, for the compression policy */
	uint64_t obj = c->cur.pos;     /* the write cuts the tape here: the record becomes this object */
	if (c->crypt && c->crypt->enc && !c->p.readonly) {
		/* Compress, then encrypt, as a drive does. No block CRC beside the ciphertext: a CRC of the
		 * plaintext would tell something of it, and the GCM tag protects the block. */
		const unsigned char *sealed;
		int rc = crypt_seal(c, obj, payload, h.stored_len, &sealed, &h.stored_len);
		if (rc)
			return rc;
		payload = sealed;
		h.flags = (uint8_t)((h.flags & ~REC_FLAG_BLOCK_CRC) | REC_FLAG_ENCRYPTED);
		h.payload_crc = crc32c(0, payload, h.stored_len);
	} else {
		h.block_crc = known_crc ? *known_crc : crc32c(0, buf, len);
		h.payload_crc = (h.flags & REC_FLAG_LZ4) ? crc32c(0, payload, h.stored_len) : h.block_crc;
	}
	uint64_t t0 = cpol_now(&c->wr.cpol);
	int rc = write_prologue(c, REC_HEADER_LEN + (uint64_t)h.stored_len);
	if (rc)
		return rc;
	if (c->tape.eod != obj)
		return VTL_E_INVAL; /* the sealed object number would not match the record's: never store it */
	if ((rc = append_record(c, &h, payload)))
		return rc;
	cpol_io_done(&c->wr.cpol, t0, REC_HEADER_LEN + (uint64_t)h.stored_len, false);
	cpol_record(&c->wr.cpol, len, packed, offered);
	c->st.written_bytes += len;
	c->wr.unsynced += len;
	c->st.written_stored += h.stored_len;
	return ew_status(c);
}

int vtl_cart_write_block(struct vtl_cart *c, const void *buf, size_t len)
{
	return write_block(c, buf, len, NULL);
}

int vtl_cart_write_block_crc(struct vtl_cart *c, const void *buf, size_t len, uint32_t crc)
{
	return write_block(c, buf, len, &crc);
}

int vtl_cart_append_stored(struct vtl_cart *c, const void *rec, size_t len)
{
	struct rec_header h;
	const unsigned char *p = rec;
	if (c->p.readonly)
		return VTL_E_READONLY;
	if (len < REC_HEADER_LEN || rec_header_decode(p, &h) != 0 || (h.type != REC_DATA && h.type != REC_FILEMARK) ||
	    len != REC_HEADER_LEN + (size_t)h.stored_len || h.object != c->tape.eod || c->cur.pos != c->tape.eod ||
	    crc32c(0, p + REC_HEADER_LEN, h.stored_len) != h.payload_crc)
		return VTL_E_CORRUPT;
	int rc = write_prologue(c, len);
	if (rc)
		return rc;
	if ((rc = append_record(c, &h, p + REC_HEADER_LEN)))
		return rc;
	if (h.type == REC_DATA) {
		c->st.written_bytes += h.length;
		c->wr.unsynced += h.length;
		c->st.written_stored += h.stored_len;
	}
	return ew_status(c);
}

int vtl_cart_write_filemarks(struct vtl_cart *c, uint32_t count)
{
	if (count == 0)
		return c->p.readonly ? VTL_E_READONLY : VTL_OK;
	int rc = write_prologue(c, (uint64_t)count * REC_HEADER_LEN);
	if (rc)
		return rc;
	for (uint32_t i = 0; i < count; i++) {
		struct rec_header h = {.type = REC_FILEMARK, .payload_crc = crc32c(0, NULL, 0)};
		if (i && (rc = prepare_append(c, REC_HEADER_LEN)))
			return rc;
		if ((rc = append_record(c, &h, NULL)))
			return rc;
	}
	return ew_status(c);
}

int vtl_cart_erase(struct vtl_cart *c)
{
	if (c->p.readonly)
		return VTL_E_READONLY;
	if (c->wr.fault)
		return c->wr.fault;
	c->cur.seq_run = 0;
	uint64_t at = c->cur.pos;
	int rc = truncate_at(c, at);
	c->cur.pos = at;
	return rc;
}

int vtl_cart_set_capacity(struct vtl_cart *c, uint64_t capacity, uint64_t early_warning)
{
	if (c->cur.pos != 0 || (capacity && early_warning > capacity))
		return VTL_E_INVAL;
	if (c->p.readonly)
		return VTL_E_READONLY;
	c->p.capacity = capacity;
	c->p.early_warning = capacity ? early_warning : 0;
	return VTL_OK;
}

void vtl_cart_set_compression(struct vtl_cart *c, bool on)
{
	c->wr.compress = on;
}
