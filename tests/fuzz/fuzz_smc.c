/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target for a whole library's command path: the changer and its
 * two drives behind one dispatcher each, with every move going through the
 * library model and the catalog. Whatever CDBs, transfer lengths and data a
 * host sends to the changer or a drive, and whatever the operator does in
 * between, the core must stay inside the buffers, answer with a valid status
 * and well-formed sense, and keep the catalog consistent (catalog_check).
 *
 * The input is a program as in fuzz_ssc: a header byte per step; events
 * (Fxh) are a reset, a nexus loss, an operator move or a drive's eject
 * button; commands go to the changer, or to drive 0 or 1 (header bits 6..5).
 * Each input gets a new catalog and library over the run's pool, so it
 * always starts from the same state.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "catalog/catalog.h"
#include "common/grow.h"
#include "common/vtl_error.h"
#include "tests/fuzz/fuzzlib.h"
#include "vtl/library/library.h"
#include "vtl/changer/smc.h"
#include "vtl/drive/ssc.h"

#define CAPACITY (4ull << 20)  /* every cartridge's native capacity: bounds what an input can write */
#define MAX_STEPS 24
#define TARGET_SHIFT 5         /* header bits 6..5: 0 the changer, 1 drive 0, 2 drive 1, 3 the changer */
#define SLOT0 1000
#define SLOTS 4
#define IE0 10
#define IES 2
#define DRIVE0 256
#define DRIVES 2
#define N_ADDR (SLOTS + IES + DRIVES + 1)

static const char *const carts[] = {"FZ0001L8", "FZ0002L9", "FZ0003L7", "CLN001L1"};
static const enum cat_media media[] = {CAT_MEDIA_LTO8, CAT_MEDIA_LTO9, CAT_MEDIA_LTO7, CAT_MEDIA_CLEANING};
#define N_CARTS (VTL_ARRAY_SIZE(carts))

static struct fuzz_op smc_ops[FUZZ_MAX_OPS], ssc_ops[FUZZ_MAX_OPS];
static unsigned n_smc_ops, n_ssc_ops;
static char cat_path[128];

struct lib {
	struct vtl_catalog *cat;
	struct vtl_library *lib;
	struct smc_changer *ch;
};

static void die(const char *what, const char *err)
{
	fprintf(stderr, "fuzz_smc: %s: %s\n", what, err);
	abort();
}

static void remove_catalog(void)
{
	static const char *const suffix[] = {"", "-wal", "-shm"};
	for (int i = 0; i < 3; i++) {
		char p[160];
		snprintf(p, sizeof p, "%s%s", cat_path, suffix[i]);
		unlink(p);
	}
}

/* A library of 4 slots (cartridges in each), 2 mail slots, an LTO-8 and an LTO-9 drive. */
static void lib_open(struct lib *l)
{
	char err[256] = "";
	remove_catalog();
	if (catalog_open(cat_path, true, &l->cat, err, sizeof err) != VTL_OK)
		die("catalog_open", err);
	struct cat_library li = {.transport_first = 1, .transports = 1, .slot_first = SLOT0, .slots = SLOTS,
				 .ie_first = IE0, .ies = IES, .drive_first = DRIVE0, .drives = DRIVES};
	snprintf(li.name, sizeof li.name, "FUZZ");
	snprintf(li.vendor, sizeof li.vendor, "IBM");
	snprintf(li.product, sizeof li.product, "3573-TL");
	snprintf(li.revision, sizeof li.revision, "F.11");
	snprintf(li.serial, sizeof li.serial, "FUZZLIB");
	if (catalog_library_create(l->cat, &li) != VTL_OK)
		die("library", catalog_last_error(l->cat));
	for (unsigned i = 0; i < DRIVES; i++) {
		struct cat_drive d = {.library_id = li.id, .address = (uint16_t)(DRIVE0 + i), .lun = (int)i + 1};
		snprintf(d.vendor, sizeof d.vendor, "IBM");
		snprintf(d.model, sizeof d.model, i ? "ULT3580-TD9" : "ULT3580-TD8");
		snprintf(d.revision, sizeof d.revision, "F001");
		snprintf(d.serial, sizeof d.serial, "FZDRV%u", i);
		snprintf(d.state, sizeof d.state, "online");
		if (catalog_drive_set(l->cat, &d) != VTL_OK)
			die("drive", catalog_last_error(l->cat));
	}
	for (unsigned i = 0; i < N_CARTS; i++) {
		struct cat_cartridge c = {.media = media[i], .capacity = CAPACITY, .element = (uint16_t)(SLOT0 + i),
					  .library_id = li.id};
		snprintf(c.barcode, sizeof c.barcode, "%s", carts[i]);
		snprintf(c.state, sizeof c.state, "available");
		if (catalog_cartridge_add(l->cat, &c) != VTL_OK)
			die("cartridge", catalog_last_error(l->cat));
		if (media[i] != CAT_MEDIA_CLEANING && vtl_cart_create(fuzz_pool, carts[i]) != VTL_OK)
			die("cartridge", carts[i]);
	}
	struct library_options opt = {0};
	if (library_open(l->cat, fuzz_pool, "FUZZ", &opt, &l->lib, err, sizeof err) != VTL_OK)
		die("library_open", err);
	if (smc_create(l->lib, &l->ch) != VTL_OK)
		die("smc_create", "");
}

static void lib_close(struct lib *l)
{
	char err[256];
	smc_destroy(l->ch);
	library_close(l->lib);
	if (catalog_check(l->cat, err, sizeof err) != VTL_OK)
		die("catalog_check", err);
	catalog_close(l->cat);
	for (unsigned i = 0; i < N_CARTS; i++)
		vtl_ignore(vtl_cart_delete(fuzz_pool, carts[i])); /* the next input creates them again */
	remove_catalog();
}

static void run_smc(struct scsi_cmd *c, void *arg)
{
	smc_execute(arg, c);
}

static void run_ssc(struct scsi_cmd *c, void *arg)
{
	ssc_execute(arg, c);
}

/* The all-commands answer of REPORT SUPPORTED OPERATION CODES through exec. */
static unsigned learn(void (*exec)(struct scsi_cmd *c, void *arg), void *dev, struct fuzz_op *ops)
{
	static uint8_t b[8192];
	struct iovec iov = {b, sizeof b};
	struct scsi_cmd c = {.cdb = {0xA3, 0x0C, 0, 0, 0, 0, 0, 0, 0x20, 0}, .cdb_len = 12, .dir = SCSI_DIR_IN,
			     .xfer_len = sizeof b, .iov = &iov, .iov_cnt = 1, .nexus = FUZZ_NEXUS_BASE};
	for (int tries = 0; tries < 2; tries++) /* the first answer is the power-on unit attention */
		exec(&c, dev);
	if (c.status != SCSI_GOOD)
		abort();
	return fuzz_learn_ops(b, c.data_len, ops);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_pool_open("vtl-fuzz-smc", carts[0]);
	snprintf(cat_path, sizeof cat_path, "%s/catalog.db", fuzz_dir);
	atexit(remove_catalog);
	struct lib l;
	lib_open(&l);
	n_smc_ops = learn(run_smc, l.ch, smc_ops);
	n_ssc_ops = learn(run_ssc, library_drive(l.lib, 0, NULL), ssc_ops);
	lib_close(&l);
	return 0;
}

static uint16_t address(unsigned k)
{
	k %= N_ADDR;
	if (k < SLOTS)
		return (uint16_t)(SLOT0 + k);
	if (k < SLOTS + IES)
		return (uint16_t)(IE0 + k - SLOTS);
	if (k < SLOTS + IES + DRIVES)
		return (uint16_t)(DRIVE0 + k - SLOTS - IES);
	return 1; /* the robot: never a valid source or destination */
}

static void event(struct lib *l, uint8_t what, struct fuzz_input *in)
{
	char err[256];
	switch (what & 3) {
	case 0:
		smc_reset(l->ch);
		ssc_reset(library_drive(l->lib, fuzz_take(in, 1) % DRIVES, NULL));
		break;
	case 1: {
		uint64_t nexus = FUZZ_NEXUS_BASE * (1 + fuzz_take(in, 1) % FUZZ_N_NEXUS);
		smc_nexus_lost(l->ch, nexus);
		for (unsigned i = 0; i < DRIVES; i++)
			ssc_nexus_lost(library_drive(l->lib, i, NULL), nexus);
		break;
	}
	case 2: {
		unsigned k = fuzz_take(in, 1);
		library_move(l->lib, address(k), address(k >> 4), "operator", err, sizeof err);
		break;
	}
	default:
		ssc_eject(library_drive(l->lib, fuzz_take(in, 1) % DRIVES, NULL));
		break;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct lib l;
	lib_open(&l);
	struct fuzz_input in = {data, size};
	for (unsigned step = 0; step < MAX_STEPS && in.n; step++) {
		uint8_t hdr = (uint8_t)fuzz_take(&in, 1);
		unsigned target = (hdr >> TARGET_SHIFT) & 3;
		if ((hdr & FUZZ_EVENT_MARK) == FUZZ_EVENT_MARK)
			event(&l, hdr, &in);
		else if (target == 1 || target == 2)
			fuzz_command(hdr, &in, ssc_ops, n_ssc_ops, run_ssc, library_drive(l.lib, target - 1, NULL));
		else
			fuzz_command(hdr, &in, smc_ops, n_smc_ops, run_smc, l.ch);
	}
	lib_close(&l);
	return 0;
}
