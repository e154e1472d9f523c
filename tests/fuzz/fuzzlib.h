/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the fuzz targets share: a pool in a temporary directory for the
 * whole run, and reading an input as a little program, a few bytes at a time.
 * Each target is one program built from its .c and the library's archives,
 * so these are static functions.
 */
#ifndef VTL_TESTS_FUZZ_FUZZLIB_H
#define VTL_TESTS_FUZZ_FUZZLIB_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend/cartridge.h"
#include "backend/format.h"
#include "backend/pool.h"
#include "vtl/scsi/cmd.h"
#include "common/scsi_sense.h"
#include "vtl/scsi/spc.h"
#include "common/crc32c.h"
#include "tests/fuzz/entry.h"

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
	vtl_ignore(vtl_cart_delete(fuzz_pool, fuzz_barcode)); /* cleanup at exit: the folder goes anyway */
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

/*
 * Rewrites buf (n bytes) into a record stream, as a cartridge's segments
 * hold it: a header from 12 fuzzed bytes (its CRC made right), then its
 * payload; returns the stream's length. Random bytes rarely pass a header
 * CRC, so this is how a target reaches what lies behind the record checks.
 * With faults, now and then a record is out of sequence or its payload CRC
 * is wrong; without, every record is sound and they follow from object 0.
 */
static inline size_t fuzz_shape_records(uint8_t *buf, size_t n, bool faults)
{
	size_t at = 0;
	uint64_t obj = 0;
	while (at + REC_HEADER_LEN <= n) {
		struct rec_header h = {
			.type = (uint8_t)(buf[at] % 3 ? REC_DATA : REC_FILEMARK),
			.flags = 0,
			.object = faults && buf[at + 1] == 0xFF ? obj + 5 : obj,
		};
		size_t room = n - at - REC_HEADER_LEN;
		uint32_t len = (uint32_t)(buf[at + 2] | buf[at + 3] << 8) % 2048 + 1;
		if (h.type == REC_DATA) {
			if (len > room)
				len = (uint32_t)room;
			if (!len)
				break;
			h.length = h.stored_len = len;
			h.payload_crc = crc32c(0, buf + at + REC_HEADER_LEN, len) ^ (faults && buf[at + 4] == 0x5A);
		}
		rec_header_encode(&h, buf + at);
		at += REC_HEADER_LEN + h.stored_len;
		obj++;
	}
	return at;
}

#define FUZZ_XFER_MAX (64u << 10) /* the largest transfer a step asks for */
#define FUZZ_MAX_IOV 3
#define FUZZ_N_NEXUS 4
#define FUZZ_NEXUS_BASE 0x100
#define FUZZ_EVENT_MARK 0xF0      /* header bytes Fxh are events */
#define FUZZ_MAP_OPCODE 0x10      /* header bit: map the opcode onto a listed command */
#define FUZZ_MAX_OPS 256

/* A command a device lists in REPORT SUPPORTED OPERATION CODES. */
struct fuzz_op {
	uint8_t opcode;
	int sa; /* -1: none */
};

/* Reads the all-commands answer of REPORT SUPPORTED OPERATION CODES (len bytes) into ops; returns the count. */
static inline unsigned fuzz_learn_ops(const uint8_t *b, size_t len, struct fuzz_op *ops)
{
	unsigned n = 0;
	size_t total = len >= 4 ? be_get(b, 4) : 0;
	for (size_t at = 4; at + 8 <= 4 + total && at + 8 <= len && n < FUZZ_MAX_OPS; at += 8) {
		ops[n].opcode = b[at];
		ops[n].sa = (b[at + 5] & 1) ? (int)be_get(b + at + 2, 2) : -1;
		n++;
	}
	if (n == 0)
		abort();
	return n;
}

/* The checks every answer must pass. */
static inline void fuzz_check(const struct scsi_cmd *c)
{
	if (c->status != SCSI_GOOD && c->status != SCSI_CHECK_CONDITION && c->status != SCSI_RESERVATION_CONFLICT)
		abort();
	if (c->data_len > c->xfer_len)
		abort();
	if (c->status == SCSI_RESERVATION_CONFLICT && c->data_len != 0)
		abort();
	if (c->status != SCSI_CHECK_CONDITION)
		return;
	const struct scsi_sense *s = &c->sense;
	if ((unsigned)s->key > 0xF || s->key == 0xC || s->key == 0xF) /* obsolete and reserved keys (SPC-4 table 27) */
		abort();
	if (s->key == SK_NO_SENSE && !s->filemark && !s->eom && !s->ili && s->asc == ASC_NONE)
		abort(); /* a CHECK CONDITION that says nothing */
	if (s->sks_valid && s->sks_cdb && s->sks_field >= c->cdb_len)
		abort(); /* a field pointer past the CDB */
	if (s->sks_valid && !s->sks_cdb && s->key == SK_ILLEGAL_REQUEST && s->sks_field >= c->xfer_len)
		abort(); /* a pointer into parameter data the host never sent */
	/* Both encodings read back, as a host decodes them, to the same key, code and bits. */
	uint8_t b[SENSE_MAX_LEN];
	struct scsi_sense d;
	size_t n = sense_encode(s, b, sizeof b);
	if (n != SENSE_FIXED_LEN || b[SENSE_FS_ADDITIONAL_LEN] != n - (SENSE_FS_ADDITIONAL_LEN + 1) ||
	    (b[0] & SENSE_RESPONSE_MASK) != (s->deferred ? SENSE_FIXED_DEFERRED : SENSE_FIXED_CURRENT) ||
	    !sense_decode(b, n, &d) || d.key != s->key || d.asc != s->asc || d.ili != s->ili)
		abort();
	n = sense_encode_desc(s, b, sizeof b);
	if (n < SENSE_DS_HEADER || b[0] != (s->deferred ? SENSE_DESC_DEFERRED : SENSE_DESC_CURRENT) ||
	    b[SENSE_DS_ADDITIONAL_LEN] != n - SENSE_DS_HEADER || !sense_decode(b, n, &d) || d.key != s->key ||
	    d.asc != s->asc || d.filemark != s->filemark || d.eom != s->eom || d.ili != s->ili ||
	    d.info_valid != s->info_valid || (s->info_valid && d.info != s->info))
		abort();
	for (size_t at = 8; at < n; at += 2u + b[at + 1]) /* descriptors tile the additional bytes exactly */
		if (at + 2 > n || at + 2u + b[at + 1] > n)
			abort();
}

/*
 * Builds a command from the input (nexus and direction from hdr, CDB length,
 * transfer length and its split into buffers, the CDB with its opcode
 * optionally mapped onto one of ops, the data-out bytes), runs it with exec
 * and checks the answer.
 */
static inline void fuzz_command(uint8_t hdr, struct fuzz_input *in, const struct fuzz_op *ops, unsigned n_ops,
				void (*exec)(struct scsi_cmd *c, void *arg), void *arg)
{
	struct scsi_cmd c;
	memset(&c, 0, sizeof c);
	c.nexus = FUZZ_NEXUS_BASE * (1 + (hdr & 3));
	static const enum scsi_dir dirs[4] = {SCSI_DIR_NONE, SCSI_DIR_IN, SCSI_DIR_OUT, SCSI_DIR_IN};
	c.dir = dirs[(hdr >> 2) & 3];
	c.cdb_len = (uint8_t)(1 + fuzz_take(in, 1) % 16);
	c.xfer_len = fuzz_take(in, 2) % (FUZZ_XFER_MAX + 1);
	unsigned split = fuzz_take(in, 1);
	for (unsigned i = 0; i < c.cdb_len; i++)
		c.cdb[i] = (uint8_t)fuzz_take(in, 1);
	if (hdr & FUZZ_MAP_OPCODE) {
		unsigned k = c.cdb[0] % n_ops;
		c.cdb[0] = ops[k].opcode;
		if (ops[k].sa >= 0 && c.cdb_len > 1)
			c.cdb[1] = (uint8_t)((c.cdb[1] & 0xE0) | ops[k].sa);
	}
	/* The buffers: up to three, each its own allocation so that ASan sees a step past any of them. */
	struct iovec iov[FUZZ_MAX_IOV];
	c.iov_cnt = 1 + (int)(split % FUZZ_MAX_IOV);
	size_t left = c.xfer_len;
	for (int i = 0; i < c.iov_cnt; i++) {
		size_t len = i == c.iov_cnt - 1 ? left : left * ((split >> (2 + 3 * i)) & 7) / 8;
		left -= len;
		iov[i].iov_len = len;
		iov[i].iov_base = malloc(len ? len : 1);
		if (!iov[i].iov_base)
			abort();
		uint8_t *p = iov[i].iov_base;
		for (size_t j = 0; j < len; j++) /* data-out from the input; for data-in, bytes the device must overwrite */
			p[j] = c.dir == SCSI_DIR_OUT ? (uint8_t)fuzz_take(in, 1) : 0xA5;
	}
	c.iov = iov;
	c.status = 0xFF;
	exec(&c, arg);
	fuzz_check(&c);
	for (int i = 0; i < c.iov_cnt; i++)
		free(iov[i].iov_base);
}

#endif
