/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The drive's data path (SSC-4): READ(6), WRITE(6), WRITE FILEMARKS(6),
 * VERIFY(6) and READ BLOCK LIMITS, in variable- and fixed-block mode, with
 * the sense a tape host reads: ILI and the residue in INFORMATION for a
 * block of another length, FILEMARK and BLANK CHECK at a filemark or end of
 * data, EOM at early warning and VOLUME OVERFLOW at the end.
 */
#include "vtl/drive/ssc_internal.h"

#include <stdlib.h>
#include <string.h>

#include "common/vtl_error.h"

/* READ(6) / WRITE(6) / VERIFY(6) CDB (SSC-4, READ(6), WRITE(6), VERIFY(6)): byte 1 flags, bytes 2..4 transfer length. */
#define RW_FLAGS_BYTE 1
#define RW_FIXED 0x01
#define RW_SILI 0x02        /* READ(6): suppress incorrect length indicator */
#define VERIFY_BYTCMP 0x02  /* VERIFY(6): compare with the data-out buffer */
#define VERIFY_IMMED 0x04
#define VERIFY_VBF 0x08     /* verify by filemarks */
#define VERIFY_VLBAM 0x10
#define VERIFY_VTE 0x20
#define RW_LEN_BYTE 2
#define WFM_IMMED 0x01      /* WRITE FILEMARKS(6) byte 1 */
#define WFM_WSMK 0x02       /* write setmarks: no setmarks on LTO */
#define RBL_MLOI 0x01       /* READ BLOCK LIMITS byte 1: maximum logical object identifier form */
#define RBL_LEN 6           /* READ BLOCK LIMITS data (SSC-4 table 39) */

static uint32_t xfer_len_of(const struct scsi_cmd *c)
{
	return (uint32_t)be_get(c->cdb + RW_LEN_BYTE, 3);
}

/* The command's buffers at offset off, if len bytes from there lie in one of them; else NULL. */
static uint8_t *contiguous_at(const struct scsi_cmd *c, size_t off, size_t len)
{
	size_t at = 0;
	for (int i = 0; i < c->iov_cnt; i++) {
		if (off < at + c->iov[i].iov_len)
			return off + len <= at + c->iov[i].iov_len ? (uint8_t *)c->iov[i].iov_base + (off - at) : NULL;
		at += c->iov[i].iov_len;
	}
	return NULL;
}

/* The drive's bounce buffer, grown to at least len bytes; NULL if memory is short. */
static uint8_t *bounce(struct ssc_drive *d, size_t len)
{
	if (d->bounce_cap < len || !d->bounce) {
		uint8_t *b = realloc(d->bounce, len ? len : 1);
		if (!b)
			return NULL;
		d->bounce = b;
		d->bounce_cap = len;
	}
	return d->bounce;
}

/* Copies len bytes between buf and the command's buffers at offset off (to_cmd: into the buffers). */
static void iov_copy(const struct scsi_cmd *c, size_t off, uint8_t *buf, size_t len, bool to_cmd)
{
	size_t done = 0, pos = 0;
	for (int i = 0; i < c->iov_cnt && done < len; i++) {
		size_t seg = c->iov[i].iov_len;
		if (off + done < pos + seg) {
			uint8_t *p = (uint8_t *)c->iov[i].iov_base + (off + done - pos);
			size_t k = pos + seg - (off + done) < len - done ? pos + seg - (off + done) : len - done;
			if (to_cmd)
				memcpy(p, buf + done, k);
			else
				memcpy(buf + done, p, k);
			done += k;
		}
		pos += seg;
	}
}

/* The data at offset off of the command's buffers, len bytes contiguous: in place, or gathered. */
static const uint8_t *data_out_at(struct ssc_drive *d, const struct scsi_cmd *c, size_t off, size_t len)
{
	uint8_t *p = contiguous_at(c, off, len);
	if (p)
		return p;
	if (!(p = bounce(d, len)))
		return NULL;
	iov_copy(c, off, p, len, false);
	return p;
}

/* Where len bytes for offset off of the data-in buffers can be read into: in place, or the bounce buffer. */
static uint8_t *data_in_at(struct ssc_drive *d, const struct scsi_cmd *c, size_t off, size_t len, bool *bounced)
{
	uint8_t *p = contiguous_at(c, off, len);
	*bounced = !p;
	return p ? p : bounce(d, len);
}

/* CHECK CONDITION with INFORMATION = residue, as every data command reports a short transfer. */
static void fail_residue(struct scsi_cmd *c, struct scsi_sense s, int64_t residue, size_t transferred)
{
	s.info_valid = true;
	s.info = (int32_t)residue;
	scsi_fail(c, s);
	c->data_len = transferred;
}

/* Early warning reached by a completed write: NO SENSE, EOM, END-OF-PARTITION/MEDIUM DETECTED (SSC-4 4.2.6). */
static struct scsi_sense early_warning(void)
{
	struct scsi_sense s = sense_of(SK_NO_SENSE, ASC_EOM_DETECTED);
	s.eom = true;
	return s;
}

void ssc_write6(struct scsi_dev *dev, struct scsi_cmd *c)
{
	struct ssc_drive *d = ssc_of(dev);
	bool fixed = c->cdb[RW_FLAGS_BYTE] & RW_FIXED;
	uint32_t n = xfer_len_of(c);
	if (c->cdb[RW_FLAGS_BYTE] & ~RW_FIXED) {
		scsi_fail(c, sense_invalid_cdb_field(RW_FLAGS_BYTE, top_bit(c->cdb[RW_FLAGS_BYTE] & ~RW_FIXED)));
		return;
	}
	if (fixed && d->mode.block_len == 0) {
		/* Fixed-block transfer while the block length is 0 (variable): SSC-4, READ(6) and WRITE(6). */
		scsi_fail(c, sense_invalid_cdb_field(RW_FLAGS_BYTE, 0));
		return;
	}
	/* Under LBP_W each block the host sends is its data and then its protection information (SSC-4 4.2.22). */
	uint32_t pi = ssc_lbp_pi_len(d, true);
	uint32_t blen = fixed ? d->mode.block_len + pi : n;
	uint32_t count = fixed ? n : (n ? 1 : 0);
	if (!fixed && (n > SSC_BLOCK_LIMIT_MAX + pi || (n && n <= pi))) {
		scsi_fail(c, sense_invalid_cdb_field(RW_LEN_BYTE, -1));
		return;
	}
	uint64_t need = (uint64_t)blen * count;
	if (need > scsi_buf_len(c)) {
		/* The initiator sends less than the CDB asks for: write nothing rather than invent data. */
		scsi_fail(c, sense_invalid_cdb_field(RW_LEN_BYTE, -1));
		return;
	}
	struct scsi_sense s;
	if (!ssc_may_write(d, &s) || (count && !ssc_append_allowed(d, false, &s))) {
		scsi_fail(c, s);
		return;
	}
	if (count == 0) {
		scsi_done(c, 0);
		return;
	}
	/* The nexus's encryption parameters decide how the blocks are stored; a broken LOCK writes nothing. */
	if (!ssc_crypt_use(d, c->nexus, &s)) {
		scsi_fail(c, s);
		return;
	}
	d->cnt.write_cmds++;
	/* Every block's protection information is checked before any is written: a bad one writes nothing. */
	for (uint32_t i = 0; pi && i < count; i++) {
		const uint8_t *p = data_out_at(d, c, (size_t)i * blen, blen);
		if (!p || !ssc_lbp_check(d, p, blen)) {
			fail_residue(c, p ? ssc_lbp_guard_failed() : sense_of(SK_HARDWARE_ERROR, ASC_INTERNAL_TARGET_FAILURE),
				     fixed ? (int64_t)count : (int64_t)n, 0);
			return;
		}
	}
	bool ew = false;
	struct vtl_position at;
	vtl_cart_position(d->cart, &at);
	bool encrypted = ssc_crypt_encrypts(d, c->nexus);
	for (uint32_t i = 0; i < count; i++) {
		const uint8_t *p = data_out_at(d, c, (size_t)i * blen, blen);
		int rc = !p ? VTL_E_NOMEM : pi ? ssc_lbp_write_block(d, p, blen) : vtl_cart_write_block(d->cart, p, blen);
		if (rc >= 0 && i == 0)
			ssc_crypt_written(d, at.object, encrypted); /* what was from here on is gone (VCELB) */
		if (rc < 0) {
			/* Residue: blocks (fixed) or bytes (variable) not written (SSC-4 4.2.6). */
			int64_t residue = fixed ? (int64_t)(count - i) : (int64_t)n;
			fail_residue(c, ssc_sense_of_err(d, rc), residue, (size_t)i * blen);
			return;
		}
		d->cnt.host_written += blen - pi;
		ew |= rc == VTL_W_EARLY_WARNING;
	}
	if ((!d->mode.buffered || (ew && d->mode.sew)) && !ssc_flush(d, &s)) {
		scsi_fail(c, s);
		return;
	}
	if (ew) {
		fail_residue(c, early_warning(), 0, need);
		return;
	}
	scsi_done(c, need);
}

void ssc_write_filemarks6(struct scsi_dev *dev, struct scsi_cmd *c)
{
	struct ssc_drive *d = ssc_of(dev);
	uint8_t f = c->cdb[RW_FLAGS_BYTE];
	if (f & WFM_WSMK) {
		scsi_fail(c, sense_invalid_cdb_field(RW_FLAGS_BYTE, 1));
		return;
	}
	if (f & ~(WFM_IMMED | WFM_WSMK)) {
		scsi_fail(c, sense_invalid_cdb_field(RW_FLAGS_BYTE, top_bit(f & ~(WFM_IMMED | WFM_WSMK))));
		return;
	}
	uint32_t n = xfer_len_of(c);
	struct scsi_sense s;
	if (n && (!ssc_may_write(d, &s) || !ssc_append_allowed(d, false, &s))) {
		scsi_fail(c, s);
		return;
	}
	struct vtl_position before, after;
	vtl_cart_position(d->cart, &before);
	int rc = n ? vtl_cart_write_filemarks(d->cart, n) : VTL_OK;
	if (n && rc >= 0)
		ssc_crypt_written(d, before.object, false);
	if (rc < 0) {
		vtl_cart_position(d->cart, &after);
		uint64_t done = after.eod > before.object ? after.eod - before.object : 0;
		d->cnt.filemarks_written += done;
		fail_residue(c, ssc_sense_of_err(d, rc), (int64_t)(n - done), 0);
		return;
	}
	d->cnt.filemarks_written += n;
	/* Without IMMED the command ends when everything before it is on the medium (SSC-4 4.2.9). */
	if (!(f & WFM_IMMED) && !ssc_flush(d, &s)) {
		scsi_fail(c, s);
		return;
	}
	if (rc == VTL_W_EARLY_WARNING) {
		fail_residue(c, early_warning(), 0, 0);
		return;
	}
	scsi_done(c, 0);
}

/* How one object read ends a READ or VERIFY: the sense to report, or nothing for a whole block. */
enum read_end { READ_BLOCK, READ_SHORT_BLOCK, READ_LONG_BLOCK, READ_FILEMARK, READ_EOD, READ_ERROR };

static enum read_end classify(int rc, const struct vtl_read_result *r, uint32_t want)
{
	if (rc < 0)
		return READ_ERROR;
	if (r->type == VTL_OBJ_FILEMARK)
		return READ_FILEMARK;
	if (r->type == VTL_OBJ_EOD)
		return READ_EOD;
	if (r->length == want)
		return READ_BLOCK;
	return r->length < want ? READ_SHORT_BLOCK : READ_LONG_BLOCK;
}

/* The sense of a read stopped by a filemark, end of data or an unreadable block (SSC-4, READ(6)). */
static struct scsi_sense stop_sense(struct ssc_drive *d, enum read_end e, int rc)
{
	struct scsi_sense s;
	if (e == READ_FILEMARK) {
		s = sense_of(SK_NO_SENSE, ASC_FILEMARK_DETECTED);
		s.filemark = true;
	} else if (e == READ_EOD) {
		struct vtl_position pos;
		vtl_cart_position(d->cart, &pos);
		if (ssc_stage_sense(d, pos.eod, &s)) {
			if (s.key == SK_MEDIUM_ERROR) {
				d->cnt.read_errors++;
				d->tapealert |= 1ull << (TA_READ_FAILURE - 1);
			}
			return s;
		}
		s = sense_of(SK_BLANK_CHECK, ASC_EOD_DETECTED);
		s.eom = pos.early_warning;
	} else {
		s = ssc_sense_of_err(d, rc);
	}
	return s;
}

/* The release of a read-ahead loan a READ's data-in points at (scsi_loan_end). */
static void loan_release(void *arg)
{
	vtl_loan_release(arg);
}

/*
 * Reads (or, with verify, checks) count blocks of blen bytes (fixed) or one
 * block of up to n bytes (variable) into the data-in buffers. A READ of one
 * whole block, without protection information, for a front end that takes
 * loans, has its data lent from the read-ahead instead (no copy); a block
 * of another length is copied into the buffers after all, so that short and
 * long reads end exactly as they do without a loan.
 */
static void read_blocks(struct ssc_drive *d, struct scsi_cmd *c, bool fixed, bool sili, bool verify,
			const uint8_t *compare)
{
	uint32_t n = xfer_len_of(c);
	/* Under LBP_R each block comes with its protection information, counted in its length (VERIFY: none). */
	uint32_t pi = verify ? 0 : ssc_lbp_pi_len(d, false);
	uint32_t blen = fixed ? d->mode.block_len + pi : n;
	uint32_t count = fixed ? n : 1;
	size_t room = verify ? 0 : scsi_buf_len(c);
	size_t done = 0;
	/* The nexus's key, if any, decrypts what it reads; a broken LOCK reads nothing and leaves the position. */
	struct scsi_sense ls;
	if (!ssc_crypt_use(d, c->nexus, &ls)) {
		scsi_fail(c, ls);
		return;
	}
	if (!verify)
		d->cnt.read_cmds++;
	bool lend = c->may_lend && !verify && !pi && count == 1;
	for (uint32_t i = 0; i < count; i++) {
		/* The host's buffer may be shorter than the CDB asks: never place data past it. */
		size_t off = (size_t)i * blen;
		size_t fit = verify ? blen : (off < room ? (room - off < blen ? room - off : blen) : 0);
		bool bounced = false;
		uint8_t *p = verify ? bounce(d, blen) : data_in_at(d, c, off, fit, &bounced);
		if (!p) {
			scsi_fail(c, sense_of(SK_HARDWARE_ERROR, ASC_INTERNAL_TARGET_FAILURE));
			return;
		}
		struct vtl_read_result r;
		const void *lent = NULL;
		struct vtl_loan *loan = NULL;
		int rc = lend && fit ? vtl_cart_read_lend(d->cart, p, fit, &r, &lent, &loan)
				     : vtl_cart_read(d->cart, p, fit, &r);
		if (rc >= 0 && pi && r.type == VTL_OBJ_DATA)
			ssc_lbp_append(d, p, fit, &r);
		enum read_end e = classify(rc, &r, blen);
		if (loan && e == READ_BLOCK) {
			d->cnt.host_read += r.copied;
			c->loan = (struct scsi_loan){.data = lent, .release = loan_release, .arg = loan};
			scsi_done(c, r.copied);
			return;
		}
		if (loan) {
			/* Not a whole block: into the buffers as without a loan, then the loan ends here. */
			memcpy(p, lent, r.copied);
			vtl_loan_release(loan);
		}
		if (e == READ_BLOCK || e == READ_SHORT_BLOCK || e == READ_LONG_BLOCK) {
			if (bounced)
				iov_copy(c, off, d->bounce, r.copied, true);
			if (!verify)
				d->cnt.host_read += r.copied;
			done = off + r.copied;
		}
		if (e == READ_BLOCK && compare && memcmp(p, compare + off, blen) != 0) {
			fail_residue(c, sense_of(SK_MISCOMPARE, ASC_MISCOMPARE_DURING_VERIFY), fixed ? count - i : n, 0);
			return;
		}
		if (e == READ_BLOCK)
			continue;
		if (e == READ_SHORT_BLOCK && sili && !fixed) {
			/* SILI: a shorter block is not an error; the transport reports the residual. */
			scsi_done(c, verify ? 0 : done);
			return;
		}
		struct scsi_sense s;
		int64_t residue;
		if (e == READ_SHORT_BLOCK || e == READ_LONG_BLOCK) {
			/* Incorrect length (SSC-4, READ(6)): variable, requested minus actual (negative when longer). */
			s = sense_of(SK_NO_SENSE, ASC_NONE);
			s.ili = true;
			residue = fixed ? (int64_t)(count - i) : (int64_t)n - (int64_t)r.length;
		} else {
			s = stop_sense(d, e, rc);
			residue = fixed ? (int64_t)(count - i) : (int64_t)n;
			/*
			 * An unreadable block is passed, as a drive's read leaves the
			 * medium after the block in error: reading on gets what follows.
			 */
			if (e == READ_ERROR && rc == VTL_E_MEDIUM)
				vtl_ignore(vtl_cart_locate(d->cart, r.object + 1)); /* within the tape: cannot fail */
		}
		fail_residue(c, s, residue, verify ? 0 : done);
		return;
	}
	scsi_done(c, verify ? 0 : done);
}

void ssc_read6(struct scsi_dev *dev, struct scsi_cmd *c)
{
	struct ssc_drive *d = ssc_of(dev);
	uint8_t f = c->cdb[RW_FLAGS_BYTE];
	bool fixed = f & RW_FIXED, sili = f & RW_SILI;
	if (f & ~(RW_FIXED | RW_SILI)) {
		scsi_fail(c, sense_invalid_cdb_field(RW_FLAGS_BYTE, top_bit(f & ~(RW_FIXED | RW_SILI))));
		return;
	}
	if (fixed && sili) {
		/* SILI with FIXED is not allowed (SSC-4, READ(6)). */
		scsi_fail(c, sense_invalid_cdb_field(RW_FLAGS_BYTE, 1));
		return;
	}
	if (fixed && d->mode.block_len == 0) {
		scsi_fail(c, sense_invalid_cdb_field(RW_FLAGS_BYTE, 0));
		return;
	}
	if (!fixed && xfer_len_of(c) > SSC_BLOCK_LIMIT_MAX + ssc_lbp_pi_len(d, false)) {
		scsi_fail(c, sense_invalid_cdb_field(RW_LEN_BYTE, -1));
		return;
	}
	if (xfer_len_of(c) == 0) {
		scsi_done(c, 0);
		return;
	}
	read_blocks(d, c, fixed, sili, false, NULL);
}

void ssc_verify6(struct scsi_dev *dev, struct scsi_cmd *c)
{
	struct ssc_drive *d = ssc_of(dev);
	uint8_t f = c->cdb[RW_FLAGS_BYTE];
	bool fixed = f & RW_FIXED, bytcmp = f & VERIFY_BYTCMP;
	if (f & (VERIFY_VTE | VERIFY_VLBAM | VERIFY_VBF)) {
		/* Verify to end-of-data, by logical object address or by filemarks: not offered. */
		scsi_fail(c, sense_invalid_cdb_field(RW_FLAGS_BYTE, top_bit(f & (VERIFY_VTE | VERIFY_VLBAM | VERIFY_VBF))));
		return;
	}
	if (f & ~(RW_FIXED | VERIFY_BYTCMP | VERIFY_IMMED)) {
		scsi_fail(c, sense_invalid_cdb_field(RW_FLAGS_BYTE, top_bit(f & ~(RW_FIXED | VERIFY_BYTCMP | VERIFY_IMMED))));
		return;
	}
	if (fixed && d->mode.block_len == 0) {
		scsi_fail(c, sense_invalid_cdb_field(RW_FLAGS_BYTE, 0));
		return;
	}
	uint32_t n = xfer_len_of(c);
	if (!fixed && n > SSC_BLOCK_LIMIT_MAX) {
		scsi_fail(c, sense_invalid_cdb_field(RW_LEN_BYTE, -1));
		return;
	}
	if (n == 0) {
		scsi_done(c, 0);
		return;
	}
	uint8_t *cmp = NULL;
	if (bytcmp) {
		uint64_t need = fixed ? (uint64_t)n * d->mode.block_len : n;
		if (need > scsi_buf_len(c)) {
			scsi_fail(c, sense_invalid_cdb_field(RW_LEN_BYTE, -1));
			return;
		}
		cmp = malloc(need);
		if (!cmp) {
			scsi_fail(c, sense_of(SK_HARDWARE_ERROR, ASC_INTERNAL_TARGET_FAILURE));
			return;
		}
		scsi_data_out(c, cmp, need);
	}
	read_blocks(d, c, fixed, false, true, cmp);
	free(cmp);
}

void ssc_read_block_limits(struct scsi_dev *dev, struct scsi_cmd *c)
{
	(void)dev;
	if (c->cdb[1] & RBL_MLOI) {
		/* The maximum logical object identifier form is not offered. */
		scsi_fail(c, sense_invalid_cdb_field(1, 0));
		return;
	}
	uint8_t b[RBL_LEN] = {0};
	/* Byte 0: granularity 0 (any length); 1..3 maximum; 4..5 minimum block length. */
	be_put(b + 1, SSC_BLOCK_LIMIT_MAX, 3);
	be_put(b + 4, SSC_BLOCK_LIMIT_MIN, 2);
	scsi_data_in(c, b, sizeof b, sizeof b);
}
