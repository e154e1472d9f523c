/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the programs that check a physical library through phys_ops share
 * (tests/integration/phys_iscsi_vtl.c against vtld, tests/kernel/phys_st_check.c
 * in a guest): failing with the library's last error, the inventory and its
 * look-ups, the drive's position, and the file both write and read back.
 * Each program is built on its own, so these are static functions on the
 * program's one library, lib.
 */
#ifndef VTL_TESTS_PHYS_CHECK_H
#define VTL_TESTS_PHYS_CHECK_H

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "common/vtl_error.h"
#include "migrator/phys.h"

#define SMALL_TAPE "S00001L8"     /* the small cartridge (12 MB: its early warning comes 8 MiB before its end) both scripts put in a slot */
#define ELEMENTS 13               /* 1 robot, 8 slots, 2 mail slots, 2 drives */
#define MAX_ELEMENTS 64
#define BIG (1u << 20)            /* larger than every block written */
#define SMALL_BLOCK (16u << 10)   /* the blocks that fill the small cartridge */

static struct phys_lib *lib; /* the library under test; its last error goes with every failure */

/* Prints FAIL with the message and the library's last error, and exits 1. */
static void __attribute__((format(printf, 1, 2), noreturn)) fail(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "FAIL: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, " (last error: %s)\n", lib ? phys_error(lib) : "");
	va_end(ap);
	exit(1);
}

/* Fails unless rc is want. */
static void expect(int rc, int want, const char *what)
{
	if (rc != want)
		fail("%s: %s (%d), expected %s (%d)", what, vtl_strerror(rc), rc, vtl_strerror(want), want);
}

/* Fills b with n bytes that depend only on seed, so that a read can be checked against them. */
static void fill(uint8_t *b, size_t n, unsigned seed)
{
	uint32_t x = seed * 2654435761u + 1;
	for (size_t i = 0; i < n; i++) {
		x = x * 1103515245u + 12345u;
		b[i] = (uint8_t)(x >> 16);
	}
}

static struct phys_element elems[MAX_ELEMENTS];
static unsigned nelems;

/* Takes the inventory into elems; fails unless it lists ELEMENTS. */
static void inventory(void)
{
	expect(lib->ops->inventory(lib, elems, MAX_ELEMENTS, &nelems), VTL_OK, "inventory");
	if (nelems != ELEMENTS)
		fail("inventory lists %u elements, expected %u", nelems, ELEMENTS);
}

/* The element of the given type holding barcode (after inventory), or fails. */
static const struct phys_element *where(const char *barcode, enum phys_elem_type type)
{
	int i = phys_find(elems, nelems, barcode);
	if (i < 0)
		fail("%s is in no element", barcode);
	if (elems[i].type != type)
		fail("%s is in element %u of type %d, expected type %d", barcode, elems[i].address, elems[i].type, type);
	return &elems[i];
}

/* How many elements of type t are full (or empty). */
static unsigned count_type(enum phys_elem_type t, bool full)
{
	unsigned n = 0;
	for (unsigned i = 0; i < nelems; i++)
		n += elems[i].type == t && elems[i].full == full;
	return n;
}

/* Drive d's status, or fails. */
static struct phys_drive_status status(unsigned d)
{
	struct phys_drive_status st;
	expect(lib->ops->status(lib, d, &st), VTL_OK, "status");
	return st;
}

/* Fails unless drive d is ready at block of file (at BOT when block is 0). */
static void expect_position(unsigned d, uint64_t block, uint64_t file, const char *when)
{
	struct phys_drive_status st = status(d);
	if (!st.ready || st.block != block || st.file != file || st.bot != (block == 0))
		fail("%s: drive %u ready %d at block %" PRIu64 " file %" PRIu64 " bot %d, expected block %" PRIu64
		     " file %" PRIu64,
		     when, d, st.ready, st.block, st.file, st.bot, block, file);
}

/* The file written: blocks of these sizes (block i filled with seed i), a filemark after blocks 2 and 4. */
static const size_t sizes[] = {1000, 65536, 1, 262144, 4096};
#define NBLOCKS (VTL_ARRAY_SIZE(sizes))
static const uint64_t object_of[NBLOCKS] = {0, 1, 2, 4, 5}; /* logical objects: A B C FM D E FM */

/* Reads the next block of drive d with a buffer of cap bytes and fails unless it is block i. */
static void read_expect(unsigned d, unsigned i, size_t cap)
{
	static uint8_t want[BIG], got[BIG];
	size_t len = 0;
	char what[64];
	snprintf(what, sizeof what, "read of block %u", i);
	expect(lib->ops->read_block(lib, d, got, cap, &len), VTL_OK, what);
	fill(want, sizes[i], i);
	if (len != sizes[i] || memcmp(got, want, len) != 0)
		fail("block %u reads back %zu bytes, expected %zu, or other bytes", i, len, sizes[i]);
}

/* Reads the next block of drive d and fails unless it is a filemark. */
static void read_filemark(unsigned d, const char *when)
{
	static uint8_t b[BIG];
	size_t len = 99;
	expect(lib->ops->read_block(lib, d, b, sizeof b, &len), VTL_W_FILEMARK, when);
	if (len != 0)
		fail("%s: a filemark returned %zu bytes", when, len);
}

#endif
