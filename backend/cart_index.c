/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Finding objects, filemarks and stored bytes without scanning the tape: the
 * segment table gives the segment of an object, a segment's index its offset
 * (in memory while it is open or its footer is damaged, else the INDEX record
 * of its footer), and its filemark list (loaded from the footer when first
 * needed) the filemarks before an object.
 */
#include <stdlib.h>
#include <string.h>

#include "backend/internal.h"
#include "common/crc32c.h"
#include "common/vtl_error.h"

size_t cart_seg_of(const struct vtl_cart *c, uint64_t obj)
{
	size_t lo = 0, hi = c->tape.nseg - 1;
	while (lo < hi) {
		size_t mid = (lo + hi + 1) / 2;
		if (c->tape.segs[mid].first_obj <= obj)
			lo = mid;
		else
			hi = mid - 1;
	}
	/* Empty segments share first_obj with the next; the object is in the last one that starts before it. */
	while (lo > 0 && c->tape.segs[lo].n_obj == 0 && c->tape.segs[lo].first_obj > obj)
		lo--;
	return lo;
}

int cart_offsets(struct vtl_cart *c, size_t si, uint32_t rel, uint32_t n, uint32_t *out)
{
	struct seg *s = &c->tape.segs[si];
	if ((uint64_t)rel + n > s->n_obj)
		return VTL_E_INVAL;
	if (s->lost)
		return VTL_E_CORRUPT; /* no file holds these objects */
	if (!s->sealed || s->mem_off) {
		memcpy(out, (s->sealed ? s->mem_off : c->tape.off) + rel, 4ull * n);
		return VTL_OK;
	}
	int fd = seg_fd(c, si);
	if (fd < 0)
		return VTL_E_IO;
	unsigned char *raw = (unsigned char *)out;
	int rc = read_full(fd, raw, 4ull * n, s->index_off + REC_HEADER_LEN + 4ull * rel);
	if (rc)
		return rc;
	for (uint32_t i = 0; i < n; i++)
		out[i] = get_le32(raw + 4ull * i);
	return VTL_OK;
}

int obj_offset(struct vtl_cart *c, size_t si, uint64_t obj, uint64_t *off)
{
	struct seg *s = &c->tape.segs[si];
	if (obj == s->first_obj + s->n_obj) {
		*off = s->data_end;
		return VTL_OK;
	}
	uint32_t o;
	int rc = cart_offsets(c, si, (uint32_t)(obj - s->first_obj), 1, &o);
	if (rc)
		return rc;
	if (o < SEG_HEADER_LEN || o >= s->data_end)
		return VTL_E_CORRUPT;
	*off = o;
	return VTL_OK;
}

/* Loads the filemark list of a sealed segment from its footer (a small record, checked whole). */
static int seg_load_fm_footer(struct vtl_cart *c, size_t si)
{
	struct seg *s = &c->tape.segs[si];
	if (s->lost && s->n_fm)
		return VTL_E_MEDIUM; /* where its filemarks were is lost with it */
	if (s->fm || s->n_fm == 0)
		return VTL_OK;
	int fd = seg_fd(c, si);
	if (fd < 0)
		return VTL_E_IO;
	unsigned char hb[REC_HEADER_LEN];
	struct rec_header h;
	int rc = read_full(fd, hb, sizeof hb, s->fm_off);
	if (rc)
		return rc;
	if (rec_header_decode(hb, &h) || h.type != REC_FMARKS || h.stored_len != 4ull * s->n_fm)
		return VTL_E_CORRUPT;
	unsigned char *raw = malloc(h.stored_len);
	uint32_t *fm = malloc(4ull * s->n_fm);
	if (!raw || !fm) {
		free(raw);
		free(fm);
		return VTL_E_NOMEM;
	}
	rc = read_full(fd, raw, h.stored_len, s->fm_off + REC_HEADER_LEN);
	if (!rc && crc32c(0, raw, h.stored_len) != h.payload_crc)
		rc = VTL_E_CORRUPT;
	for (uint32_t i = 0; !rc && i < s->n_fm; i++) {
		fm[i] = get_le32(raw + 4ull * i);
		if (fm[i] >= s->n_obj || (i && fm[i] <= fm[i - 1]))
			rc = VTL_E_CORRUPT;
	}
	free(raw);
	if (rc) {
		free(fm);
		return rc;
	}
	s->fm = fm;
	s->fm_cap = s->n_fm;
	return VTL_OK;
}

/* Loads the filemark list of a sealed segment; a damaged footer is rebuilt from the records. */
int seg_load_fm(struct vtl_cart *c, size_t si)
{
	int rc = seg_load_fm_footer(c, si);
	if (rc == VTL_E_CORRUPT)
		rc = seg_rebuild(c, si);
	return rc == VTL_E_CORRUPT && c->tape.segs[si].lost ? VTL_E_MEDIUM : rc;
}

/* Filemarks before object obj (0..eod). */
int fm_before(struct vtl_cart *c, uint64_t obj, uint64_t *count)
{
	if (obj >= c->tape.eod) {
		*count = c->tape.total_fm;
		return VTL_OK;
	}
	size_t si = cart_seg_of(c, obj);
	struct seg *s = &c->tape.segs[si];
	if (s->lost && obj == s->first_obj) {
		*count = s->first_fm;
		return VTL_OK;
	}
	int rc = seg_load_fm(c, si);
	if (rc)
		return rc;
	uint32_t rel = (uint32_t)(obj - s->first_obj);
	uint32_t lo = 0, hi = s->n_fm;
	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;
		if (s->fm[mid] < rel)
			lo = mid + 1;
		else
			hi = mid;
	}
	*count = s->first_fm + lo;
	return VTL_OK;
}

/* Object number of the k-th filemark on the tape (k < total_fm). */
int fm_object(struct vtl_cart *c, uint64_t k, uint64_t *obj)
{
	size_t lo = 0, hi = c->tape.nseg - 1;
	while (lo < hi) { /* first segment whose filemarks reach past k */
		size_t mid = (lo + hi) / 2;
		if (c->tape.segs[mid].first_fm + c->tape.segs[mid].n_fm > k)
			hi = mid;
		else
			lo = mid + 1;
	}
	struct seg *s = &c->tape.segs[lo];
	if (k < s->first_fm || k >= s->first_fm + s->n_fm)
		return VTL_E_CORRUPT;
	int rc = seg_load_fm(c, lo);
	if (rc)
		return rc;
	*obj = s->first_obj + s->fm[k - s->first_fm];
	return VTL_OK;
}

/* Record bytes on the tape before object obj. */
int stored_before(struct vtl_cart *c, uint64_t obj, uint64_t *bytes)
{
	if (obj >= c->tape.eod) {
		*bytes = c->tape.stored;
		return VTL_OK;
	}
	size_t si = cart_seg_of(c, obj);
	uint64_t off = SEG_HEADER_LEN, sum = 0;
	/* A lost range holds no bytes: what is before it is what the files before it hold. */
	int rc = c->tape.segs[si].lost ? VTL_OK : obj_offset(c, si, obj, &off);
	if (rc)
		return rc;
	for (size_t i = 0; i < si; i++)
		sum += c->tape.segs[i].data_end - SEG_HEADER_LEN;
	*bytes = sum + off - SEG_HEADER_LEN;
	return VTL_OK;
}
