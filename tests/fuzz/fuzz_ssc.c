/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target for the drive's command path (dispatch, reservations,
 * every handler): whatever CDBs, transfer lengths, directions, data-out
 * bytes and nexuses a host sends, the core must stay inside the buffers it
 * was given (ASan checks), answer GOOD, CHECK CONDITION or RESERVATION
 * CONFLICT, count no more data than the transfer length, and build sense a
 * host can parse, with field pointers inside the CDB or the data it sent.
 *
 * The input is a little program: a header byte per step, either an event
 * (reset, nexus loss, cartridge out and in, a new LUN list) or a command:
 * nexus, direction, CDB length, transfer length and its split into buffers,
 * the CDB (its opcode optionally mapped onto one the drive lists in REPORT
 * SUPPORTED OPERATION CODES, so that most steps reach a handler), then the
 * data-out bytes.
 *
 * The pool lives in a temporary directory made once; each input gets a new
 * drive and a new small cartridge, so that an input always runs from the
 * same state and a command that writes costs little.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cartridge.h"
#include "common/vtl_error.h"
#include "tests/fuzz/fuzzlib.h"
#include "vtl/scsi/ssc.h"

#define BARCODE "FZ0001L8"
#define CAPACITY (4ull << 20)  /* the cartridge's native capacity: bounds what an input can write */
#define XFER_MAX (64u << 10)   /* the largest transfer a step asks for */
#define MAX_STEPS 24
#define MAX_IOV 3
#define N_NEXUS 4
#define NEXUS_BASE 0x100
#define EVENT_MARK 0xF0        /* header bytes Fxh are events */
#define MAP_OPCODE 0x10        /* header bit: map the opcode onto a listed command */
#define MAX_OPS 256

static struct {
	uint8_t opcode;
	int sa; /* -1: none */
} ops[MAX_OPS];
static unsigned n_ops;

static struct ssc_drive *new_drive(void)
{
	struct ssc_config cfg = {.pool = fuzz_pool};
	snprintf(cfg.ident.vendor, sizeof cfg.ident.vendor, "IBM");
	snprintf(cfg.ident.product, sizeof cfg.ident.product, "ULT3580-TD8");
	snprintf(cfg.ident.revision, sizeof cfg.ident.revision, "F001");
	snprintf(cfg.ident.serial, sizeof cfg.ident.serial, "FUZZ000001");
	struct ssc_drive *d;
	if (ssc_create(&cfg, &d) != VTL_OK)
		abort();
	return d;
}

static void insert(struct ssc_drive *d)
{
	struct ssc_medium m = {.barcode = BARCODE, .capacity = CAPACITY};
	char err[256];
	if (ssc_insert(d, &m, err, sizeof err) != VTL_OK) {
		fprintf(stderr, "fuzz_ssc: %s\n", err);
		abort();
	}
}

/* The commands the drive lists (REPORT SUPPORTED OPERATION CODES, all of them), for mapping opcodes. */
static void learn_opcodes(void)
{
	struct ssc_drive *d = new_drive();
	static uint8_t b[8192];
	struct iovec iov = {b, sizeof b};
	struct scsi_cmd c = {.cdb = {0xA3, 0x0C, 0, 0, 0, 0, 0, 0, 0x20, 0}, .cdb_len = 12, .dir = SCSI_DIR_IN,
			     .xfer_len = sizeof b, .iov = &iov, .iov_cnt = 1, .nexus = NEXUS_BASE};
	for (int tries = 0; tries < 2; tries++) /* the first answer is the power-on unit attention */
		ssc_execute(d, &c);
	if (c.status != SCSI_GOOD)
		abort();
	size_t len = be_get(b, 4);
	for (size_t at = 4; at + 8 <= 4 + len && at + 8 <= c.data_len && n_ops < MAX_OPS; at += 8) {
		ops[n_ops].opcode = b[at];
		ops[n_ops].sa = (b[at + 5] & 1) ? (int)be_get(b + at + 2, 2) : -1;
		n_ops++;
	}
	ssc_destroy(d);
	if (n_ops == 0)
		abort();
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_pool_open("vtl-fuzz-ssc", BARCODE);
	learn_opcodes();
	return 0;
}

/* The checks every answer must pass. */
static void check(const struct scsi_cmd *c)
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
	uint8_t b[SENSE_MAX_LEN];
	size_t n = sense_encode(s, b, sizeof b);
	if (n != SENSE_FIXED_LEN || (b[0] & 0x7F) != (s->deferred ? 0x71 : 0x70) || b[7] != n - 8 ||
	    (b[2] & 0x0F) != (unsigned)s->key)
		abort();
	n = sense_encode_desc(s, b, sizeof b);
	if (n < 8 || b[0] != (s->deferred ? 0x73 : 0x72) || b[7] != n - 8 || (b[1] & 0x0F) != (unsigned)s->key)
		abort();
	for (size_t at = 8; at < n; at += 2u + b[at + 1]) /* descriptors tile the additional bytes exactly */
		if (at + 2 > n || at + 2u + b[at + 1] > n)
			abort();
}

static void event(struct ssc_drive *d, uint8_t what, struct fuzz_input *in)
{
	switch (what & 3) {
	case 0:
		ssc_reset(d);
		break;
	case 1:
		ssc_nexus_lost(d, NEXUS_BASE * (1 + fuzz_take(in, 1) % N_NEXUS));
		break;
	case 2: {
		/* The robot's turn: out if it may, and in again. */
		char bc[VTL_LABEL_LEN + 1];
		if (ssc_eject(d) == VTL_OK && ssc_remove(d, bc) == VTL_OK)
			insert(d);
		break;
	}
	default: {
		uint16_t luns[8];
		unsigned n = fuzz_take(in, 1) % 9;
		for (unsigned i = 0; i < n; i++)
			luns[i] = (uint16_t)fuzz_take(in, 2);
		ssc_set_luns(d, luns, n);
		break;
	}
	}
}

static void command(struct ssc_drive *d, uint8_t hdr, struct fuzz_input *in)
{
	struct scsi_cmd c;
	memset(&c, 0, sizeof c);
	c.nexus = NEXUS_BASE * (1 + (hdr & 3));
	static const enum scsi_dir dirs[4] = {SCSI_DIR_NONE, SCSI_DIR_IN, SCSI_DIR_OUT, SCSI_DIR_IN};
	c.dir = dirs[(hdr >> 2) & 3];
	c.cdb_len = (uint8_t)(1 + fuzz_take(in, 1) % 16);
	c.xfer_len = fuzz_take(in, 2) % (XFER_MAX + 1);
	unsigned split = fuzz_take(in, 1);
	for (unsigned i = 0; i < c.cdb_len; i++)
		c.cdb[i] = (uint8_t)fuzz_take(in, 1);
	if (hdr & MAP_OPCODE) {
		unsigned k = c.cdb[0] % n_ops;
		c.cdb[0] = ops[k].opcode;
		if (ops[k].sa >= 0 && c.cdb_len > 1)
			c.cdb[1] = (uint8_t)((c.cdb[1] & 0xE0) | ops[k].sa);
	}
	/* The buffers: up to three, each its own allocation so that ASan sees a step past any of them. */
	struct iovec iov[MAX_IOV];
	c.iov_cnt = 1 + (int)(split % MAX_IOV);
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
	ssc_execute(d, &c);
	check(&c);
	for (int i = 0; i < c.iov_cnt; i++)
		free(iov[i].iov_base);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (vtl_cart_create(fuzz_pool, BARCODE) != VTL_OK)
		abort();
	struct ssc_drive *d = new_drive();
	insert(d);
	struct fuzz_input in = {data, size};
	for (unsigned step = 0; step < MAX_STEPS && in.n; step++) {
		uint8_t hdr = (uint8_t)fuzz_take(&in, 1);
		if ((hdr & EVENT_MARK) == EVENT_MARK)
			event(d, hdr, &in);
		else
			command(d, hdr, &in);
	}
	ssc_destroy(d);
	if (vtl_cart_delete(fuzz_pool, BARCODE) != VTL_OK)
		abort();
	return 0;
}
