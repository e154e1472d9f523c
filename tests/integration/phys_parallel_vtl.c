/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The physical library's thread contract (migrator/phys.h) over iSCSI, as
 * the drive scheduler uses it: two threads each load their own tape into
 * their own drive (both moves asked for at once), write a file of blocks of
 * assorted sizes and a filemark, while a third thread takes inventories the
 * whole time; then both read their tape back at once and must find exactly
 * the blocks they wrote, before unloading and putting it back. Every
 * inventory must list the whole library, with each tape either in its slot
 * or in its own drive, never elsewhere.
 *
 * With PHYS_EXPECT_SESSIONS_REFUSED set, the target is expected to allow
 * fewer sessions than the library needs (one for the changer, one per
 * drive): the open must fail and say so.
 *
 * test_phys_iscsi.sh makes the library (2 drives) with P00001L8 and
 * P00002L8 in slots and runs this against its vtld.
 *
 * Usage: phys_parallel_vtl PORTAL TARGET-IQN
 * Exit 0 when every step passed; each step prints a line.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/vtl_error.h"
#include "migrator/phys.h"
#include "migrator/phys_iscsi.h"

#define INITIATOR "iqn.2026-01.org.vtl:phys-parallel-check"
#define WRITERS 2
#define BLOCKS 40                /* per tape */
#define BLOCK_MAX (256u << 10)   /* the largest block written */
#define MAX_ELEMENTS 64
#define ELEMENTS 13              /* 1 robot, 8 slots, 2 mail slots, 2 drives */

static const char *const tapes[WRITERS] = {"P00001L8", "P00002L8"};
static struct phys_lib *lib;
static atomic_bool writing = true;
static atomic_uint inventories;

/* Prints FAIL with who failed and the calling thread's last library error, and exits 1. */
static void __attribute__((format(printf, 2, 3), noreturn)) die(const char *who, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	fprintf(stderr, "FAIL: %s: %s (last error: %s)\n", who, msg, lib ? phys_error(lib) : "");
	exit(1);
}

static void want(const char *who, int rc, int expected, const char *what)
{
	if (rc != expected)
		die(who, "%s: %s (%d), expected %s", what, vtl_strerror(rc), rc, vtl_strerror(expected));
}

/* Block i of drive d's tape: its length, and bytes that depend on both. */
static size_t block_len(unsigned d, unsigned i)
{
	return 1 + ((size_t)i * 40009u + (size_t)d * 7919u) % BLOCK_MAX;
}

static void block_fill(uint8_t *b, size_t n, unsigned d, unsigned i)
{
	uint32_t x = (d + 1) * 2654435761u ^ (i + 1) * 40503u;
	for (size_t k = 0; k < n; k++) {
		x = x * 1103515245u + 12345u;
		b[k] = (uint8_t)(x >> 16);
	}
}

/* The element holding barcode in e (n of them), or -1. */
static int holder(const struct phys_element *e, unsigned n, const char *barcode)
{
	return phys_find(e, n, barcode);
}

struct writer {
	unsigned d;
	uint16_t slot; /* where its tape lives */
	char who[32];
};

static void *write_then_read(void *arg)
{
	struct writer *w = arg;
	unsigned d = w->d;
	uint8_t *buf = malloc(BLOCK_MAX);
	if (!buf)
		die(w->who, "no memory");
	want(w->who, lib->ops->move(lib, w->slot, lib->drive_addr[d]), VTL_OK, "load");
	for (unsigned i = 0; i < BLOCKS; i++) {
		size_t n = block_len(d, i);
		block_fill(buf, n, d, i);
		want(w->who, lib->ops->write_block(lib, d, buf, n), VTL_OK, "write_block");
	}
	want(w->who, lib->ops->write_filemarks(lib, d, 1), VTL_OK, "write_filemarks");
	struct phys_drive_status st;
	want(w->who, lib->ops->status(lib, d, &st), VTL_OK, "status after writing");
	if (st.block != BLOCKS + 1 || st.file != 1)
		die(w->who, "after writing: block %" PRIu64 ", file %" PRIu64 ", expected %u, 1", st.block, st.file,
		    BLOCKS + 1);
	free(buf);
	return NULL;
}

static void *read_back(void *arg)
{
	struct writer *w = arg;
	unsigned d = w->d;
	uint8_t *buf = malloc(BLOCK_MAX), *got = malloc(BLOCK_MAX);
	if (!buf || !got)
		die(w->who, "no memory");
	want(w->who, lib->ops->rewind(lib, d), VTL_OK, "rewind");
	for (unsigned i = 0; i < BLOCKS; i++) {
		size_t n = block_len(d, i), len = 0;
		block_fill(buf, n, d, i);
		want(w->who, lib->ops->read_block(lib, d, got, BLOCK_MAX, &len), VTL_OK, "read_block");
		if (len != n || memcmp(got, buf, n) != 0)
			die(w->who, "block %u reads back %zu bytes, expected %zu, or other bytes", i, len, n);
	}
	size_t len = 99;
	want(w->who, lib->ops->read_block(lib, d, got, BLOCK_MAX, &len), VTL_W_FILEMARK, "the filemark");
	want(w->who, lib->ops->unload(lib, d), VTL_OK, "unload");
	want(w->who, lib->ops->move(lib, lib->drive_addr[d], w->slot), VTL_OK, "put back");
	free(buf);
	free(got);
	return NULL;
}

/* Inventories while the writers run: each lists the library, each tape in its slot or its drive. */
static void *inventory_loop(void *arg)
{
	const struct writer *w = arg;
	struct phys_element e[MAX_ELEMENTS];
	do {
		unsigned n = 0;
		want("inventory thread", lib->ops->inventory(lib, e, MAX_ELEMENTS, &n), VTL_OK, "inventory");
		if (n != ELEMENTS)
			die("inventory thread", "%u elements, expected %u", n, ELEMENTS);
		for (unsigned d = 0; d < WRITERS; d++) {
			int i = holder(e, n, tapes[d]);
			if (i < 0 || (e[i].address != w[d].slot && e[i].address != lib->drive_addr[d]))
				die("inventory thread", "%s is in element %d, expected slot %u or drive %u's element %u",
				    tapes[d], i < 0 ? -1 : e[i].address, w[d].slot, d, lib->drive_addr[d]);
		}
		atomic_fetch_add(&inventories, 1);
	} while (atomic_load(&writing));
	return NULL;
}

/* Runs fn on one thread per drive, and with inventories when inv; waits for them all. */
static void run_drives(void *(*fn)(void *), struct writer *w, bool inv)
{
	pthread_t t[WRITERS], it;
	atomic_store(&writing, true);
	if (inv && pthread_create(&it, NULL, inventory_loop, w) != 0)
		die("main", "cannot start the inventory thread");
	for (unsigned d = 0; d < WRITERS; d++)
		if (pthread_create(&t[d], NULL, fn, &w[d]) != 0)
			die("main", "cannot start thread %u", d);
	for (unsigned d = 0; d < WRITERS; d++)
		(void)pthread_join(t[d], NULL); /* a thread that fails exits the process */
	atomic_store(&writing, false);
	if (inv)
		(void)pthread_join(it, NULL);
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: phys_parallel_vtl PORTAL TARGET-IQN\n");
		return 2;
	}
	struct phys_iscsi_config cfg = {.portal = argv[1], .target_iqn = argv[2], .initiator_iqn = INITIATOR,
					.ready_timeout_s = 20, .command_timeout_s = 30};
	char err[PHYS_ERR_MAX] = "";
	int rc = phys_iscsi_open(&cfg, &lib, err, sizeof err);
	if (getenv("PHYS_EXPECT_SESSIONS_REFUSED")) {
		if (rc == VTL_OK || lib || !strstr(err, "one session for the changer and one per drive"))
			die("open", "gave %s (%s), expected a refused drive session", vtl_strerror(rc), err);
		printf("-- a target allowing fewer sessions than 1 + drives: %s\n", err);
		return 0;
	}
	if (rc != VTL_OK)
		die("open", "%s", err);
	if (lib->drives != WRITERS)
		die("open", "%u drives, expected %u", lib->drives, WRITERS);

	struct phys_element e[MAX_ELEMENTS];
	unsigned n = 0;
	want("main", lib->ops->inventory(lib, e, MAX_ELEMENTS, &n), VTL_OK, "inventory");
	struct writer w[WRITERS];
	for (unsigned d = 0; d < WRITERS; d++) {
		int i = holder(e, n, tapes[d]);
		if (i < 0 || e[i].type != PHYS_ELEM_SLOT)
			die("main", "%s is not in a slot", tapes[d]);
		w[d] = (struct writer){.d = d, .slot = e[i].address};
		snprintf(w[d].who, sizeof w[d].who, "drive %u (%s)", d, tapes[d]);
	}

	run_drives(write_then_read, w, true);
	printf("-- 2 threads loaded %s and %s at once and wrote %u blocks (1 B to 256 KiB) and a filemark each, "
	       "while a third took %u inventories\n",
	       tapes[0], tapes[1], BLOCKS, atomic_load(&inventories));
	run_drives(read_back, w, true);
	printf("-- both read back at once: every block as its thread wrote it, then the filemark; unloaded and "
	       "put back (%u inventories in all)\n",
	       atomic_load(&inventories));

	want("main", lib->ops->inventory(lib, e, MAX_ELEMENTS, &n), VTL_OK, "inventory");
	for (unsigned d = 0; d < WRITERS; d++)
		if (holder(e, n, tapes[d]) < 0 || e[holder(e, n, tapes[d])].address != w[d].slot)
			die("main", "%s is not back in slot %u", tapes[d], w[d].slot);
	lib->ops->close(lib);
	printf("phys_parallel_vtl: all steps passed\n");
	return 0;
}
