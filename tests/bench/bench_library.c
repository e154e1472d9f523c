/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The host of the library benchmark (tests/bench/bench_library.sh, which
 * starts vtld and vtl-migrator and says what is measured): one libiscsi
 * session that has the robot load a cartridge into a drive and then
 *
 *   bench_library PORTAL IQN write DRIVE SLOT MIB
 *       writes MIB MiB of incompressible data in 256 KiB blocks and a
 *       filemark, as fast as one command at a time goes, and prints
 *       "drive D: wrote N MiB in S s: R MB/s";
 *   bench_library PORTAL IQN first DRIVE SLOT
 *       reads the first block (a migrated cartridge: while vtl-migrator
 *       recalls it) and prints "drive D: first block after S s" counted from
 *       the MOVE MEDIUM that loaded it;
 *
 * then unloads the drive and puts the cartridge back in SLOT. DRIVE counts
 * from 0 (element 257 + DRIVE, LUN 1 + DRIVE: the default element map). The
 * data is one 16 MiB random buffer written at a moving offset, so the host
 * spends its CPU on the commands, not on making data. Exits 0 when every
 * command was GOOD.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tests/integration/hostlib.h"

#define CHANGER 0
#define DRIVE_ELEMENT_FIRST 257 /* [library] drive_first's default (docs/configuration.md) */
#define SLOT_FIRST 1025         /* [library] slot_first's default */
#define MAX_DRIVE 64
#define MAX_MIB (1u << 20)      /* 1 TiB: a bound on the argument, not a tape's capacity */
#define BLOCK (256u << 10)
#define POOL_BYTES (16u << 20)  /* the random data the blocks are cut from */
#define MIB (1u << 20)
#define READY_TRIES 6000        /* TEST UNIT READY every 50 ms: 300 s for a recall to make it ready */
#define READY_POLL_NS 50000000L
#define SCSI_ASC_BECOMING_READY 0x0401 /* SPC-4 table F.2: LOGICAL UNIT IS IN PROCESS OF BECOMING READY */

/* A whole number in [lo, hi] from argument s, or exits with the usage's status. */
static unsigned number(const char *s, unsigned lo, unsigned hi, const char *what)
{
	char *end;
	unsigned long v = strtoul(s, &end, 10);
	if (!*s || *end || v < lo || v > hi) {
		fprintf(stderr, "bench_library: %s must be a number from %u to %u, not '%s'\n", what, lo, hi, s);
		exit(2);
	}
	return (unsigned)v;
}

/* TEST UNIT READY until GOOD, waiting while the unit is becoming ready (a recall) and taking unit attentions. */
static void wait_ready(struct iscsi_context *c, int lun)
{
	const uint8_t tur[6] = {0};
	const struct timespec pause = {0, READY_POLL_NS};
	for (int i = 0; i < READY_TRIES; i++) {
		struct scsi_task *t = host_run(c, lun, tur, 6, SCSI_XFER_NONE, NULL, 0);
		int st = t->status, key = t->sense.key, ascq = t->sense.ascq;
		scsi_free_scsi_task(t);
		if (st == SCSI_STATUS_GOOD)
			return;
		if (key == SCSI_SENSE_NOT_READY && ascq == SCSI_ASC_BECOMING_READY)
			nanosleep(&pause, NULL);
		else if (key != SCSI_SENSE_UNIT_ATTENTION)
			fail("TEST UNIT READY on LUN %d: status %d, sense key %d, ASC/ASCQ %04X", lun, st, key, ascq);
	}
	fail("LUN %d did not become ready within %d s", lun, READY_TRIES / 20);
}

int main(int argc, char **argv)
{
	bool write = argc == 7 && !strcmp(argv[3], "write"), first = argc == 6 && !strcmp(argv[3], "first");
	if (!write && !first) {
		fprintf(stderr, "usage: bench_library PORTAL TARGET-IQN write DRIVE SLOT MIB\n"
				"       bench_library PORTAL TARGET-IQN first DRIVE SLOT\n");
		return 2;
	}
	unsigned drive = number(argv[4], 0, MAX_DRIVE - 1, "DRIVE"), slot = number(argv[5], SLOT_FIRST, 0xFFFF, "SLOT");
	unsigned mib = write ? number(argv[6], 1, MAX_MIB, "MIB") : 0;
	unsigned element = DRIVE_ELEMENT_FIRST + drive;
	int lun = 1 + (int)drive;
	char name[64];
	snprintf(name, sizeof name, "iqn.2026-01.org.vtl:benchlib-%u", drive);
	struct iscsi_context *c = host_iscsi_login(name, argv[2], argv[1], CHANGER, ISCSI_HEADER_DIGEST_NONE);
	host_ready(c, CHANGER);
	uint8_t *data = malloc(POOL_BYTES + BLOCK);
	if (!data)
		fail("out of memory");
	host_fill(data, POOL_BYTES + BLOCK, slot);
	double t0 = host_now_s();
	host_move(c, CHANGER, (uint16_t)slot, (uint16_t)element);
	wait_ready(c, lun);
	if (write) {
		const uint8_t wr6[6] = {0x0A, 0, BLOCK >> 16, (BLOCK >> 8) & 0xFF, BLOCK & 0xFF, 0};
		const uint8_t wfm1[6] = {0x10, 0, 0, 0, 1, 0};
		unsigned blocks = mib * (MIB / BLOCK);
		t0 = host_now_s();
		for (unsigned i = 0; i < blocks; i++) {
			/* A moving offset that is no multiple of the block: no two blocks of a cartridge are alike. */
			size_t off = ((size_t)i * 4099u * 64u) % POOL_BYTES;
			host_check(c, lun, wr6, 6, SCSI_XFER_WRITE, data + off, BLOCK, "WRITE(6)");
		}
		host_check(c, lun, wfm1, 6, SCSI_XFER_NONE, NULL, 0, "WRITE FILEMARKS(6)");
		double s = host_now_s() - t0;
		printf("drive %u: wrote %u MiB in %.2f s: %.1f MB/s\n", drive, mib, s, (double)mib * MIB / 1e6 / s);
	} else {
		const uint8_t rd6[6] = {0x08, 0, BLOCK >> 16, (BLOCK >> 8) & 0xFF, BLOCK & 0xFF, 0};
		struct scsi_task *t = host_run(c, lun, rd6, 6, SCSI_XFER_READ, data, BLOCK);
		double s = host_now_s() - t0;
		/* A shorter first block is GOOD with ILI (CHECK CONDITION, NO SENSE): the data came. */
		if (t->status != SCSI_STATUS_GOOD && t->sense.key != SCSI_SENSE_NO_SENSE)
			fail("READ(6) of the first block: status %d, sense key %d, ASC/ASCQ %04X", t->status, t->sense.key,
			     t->sense.ascq);
		scsi_free_scsi_task(t);
		printf("drive %u: first block after %.2f s\n", drive, s);
	}
	host_unload(c, CHANGER, lun, (uint16_t)element, (uint16_t)slot);
	free(data);
	iscsi_logout_sync(c);
	iscsi_destroy_context(c);
	return 0;
}
