/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A host that fills a cartridge, over iSCSI with libiscsi as the initiator:
 *
 *   iscsi_fill PORTAL IQN SLOT MIB
 *
 * has the robot load the cartridge in storage element SLOT into the first
 * drive (element 257, LUN 1), writes MIB MiB of incompressible data in
 * 256 KiB blocks and a filemark, unloads it and puts it back in SLOT. It
 * prints "wrote N MiB in S s: R MB/s" and exits 0 when every command was
 * GOOD; a write that fails (a full pool, say) fails it.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tests/integration/hostlib.h"

#define CHANGER 0
#define DRIVE 1
#define DRIVE_ELEMENT 257
#define BLOCK (256u << 10)
#define MIB (1u << 20)

int main(int argc, char **argv)
{
	if (argc != 5) {
		fprintf(stderr, "usage: iscsi_fill PORTAL TARGET-IQN SLOT MIB\n");
		return 2;
	}
	unsigned slot = (unsigned)strtoul(argv[3], NULL, 10), mib = (unsigned)strtoul(argv[4], NULL, 10);
	struct iscsi_context *c = host_iscsi_login("iqn.2026-01.org.vtl:filler", argv[2], argv[1], CHANGER,
					     ISCSI_HEADER_DIGEST_NONE);
	host_ready(c, CHANGER);
	host_move(c, CHANGER, (uint16_t)slot, DRIVE_ELEMENT);
	host_ready(c, DRIVE);
	static uint8_t block[BLOCK];
	const uint8_t wr6[6] = {0x0A, 0, BLOCK >> 16, (BLOCK >> 8) & 0xFF, BLOCK & 0xFF, 0}; /* one variable block */
	const uint8_t wfm1[6] = {0x10, 0, 0, 0, 1, 0};
	double t0 = host_now_s();
	unsigned blocks = mib * (MIB / BLOCK);
	for (unsigned i = 0; i < blocks; i++) {
		host_fill(block, BLOCK, slot * 100000u + i);
		host_check(c, DRIVE, wr6, 6, SCSI_XFER_WRITE, block, BLOCK, "WRITE(6)");
	}
	host_check(c, DRIVE, wfm1, 6, SCSI_XFER_NONE, NULL, 0, "WRITE FILEMARKS(6)");
	double s = host_now_s() - t0;
	host_unload(c, CHANGER, DRIVE, DRIVE_ELEMENT, (uint16_t)slot);
	printf("wrote %u MiB in %.2f s: %.1f MB/s\n", mib, s, (double)mib * MIB / 1e6 / s);
	iscsi_logout_sync(c);
	iscsi_destroy_context(c);
	return 0;
}
