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
#include "vtl/drive/ssc.h"
#include "vtl/scsi/spc.h"

#define BARCODE "FZ0001L8"
#define CAPACITY (4ull << 20)  /* the cartridge's native capacity: bounds what an input can write */
#define MAX_STEPS 24

static struct fuzz_op ops[FUZZ_MAX_OPS];
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
			     .xfer_len = sizeof b, .iov = &iov, .iov_cnt = 1, .nexus = FUZZ_NEXUS_BASE};
	for (int tries = 0; tries < 2; tries++) /* the first answer is the power-on unit attention */
		ssc_execute(d, &c);
	if (c.status != SCSI_GOOD)
		abort();
	n_ops = fuzz_learn_ops(b, c.data_len, ops);
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

static void event(struct ssc_drive *d, uint8_t what, struct fuzz_input *in)
{
	switch (what & 3) {
	case 0:
		ssc_reset(d);
		break;
	case 1:
		ssc_nexus_lost(d, FUZZ_NEXUS_BASE * (1 + fuzz_take(in, 1) % FUZZ_N_NEXUS));
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

static void run(struct scsi_cmd *c, void *arg)
{
	ssc_execute(arg, c);
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
		if ((hdr & FUZZ_EVENT_MARK) == FUZZ_EVENT_MARK)
			event(d, hdr, &in);
		else
			fuzz_command(hdr, &in, ops, n_ops, run, d);
	}
	ssc_destroy(d);
	if (vtl_cart_delete(fuzz_pool, BARCODE) != VTL_OK)
		abort();
	return 0;
}
