/* SPDX-License-Identifier: Apache-2.0 */
/*
 * One TCMU command ring (the kernel's <linux/target_core_user.h>), on the
 * memory a UIO device maps: the mailbox, the command ring and the data area.
 * The kernel appends command entries at cmd_head; this side takes them in
 * order, hands each as a struct scsi_cmd whose iovecs point into the data
 * area (no copy), and completes them in the same order by writing status,
 * sense data and the length read into the entry and moving cmd_tail past it.
 * PAD entries (the kernel's filler at the ring's end), TMR notifications and
 * entries of unknown kinds are stepped over (an unknown kind is flagged back
 * to the kernel as TCMU_UFLAG_UNKNOWN_OP).
 *
 * Nothing here does I/O: the caller reads the UIO fd for the kernel's
 * doorbell and writes it after completing (vtl/tcmu/device.c). One thread
 * takes entries (tcmu_ring_next); one thread completes them
 * (tcmu_ring_complete); they may be different threads.
 */
#ifndef VTL_TCMU_RING_H
#define VTL_TCMU_RING_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "vtl/scsi/cmd.h"

/*
 * iovecs one command may carry; more is refused as a malformed entry. The data
 * area hands out 4 KiB pages: a block of the drive's largest size (8 MiB,
 * READ BLOCK LIMITS) may come in as many pieces.
 */
#define TCMU_RING_IOV_MAX 2048

struct tcmu_ring {
	uint8_t *map;           /* the whole mapped region */
	size_t map_len;
	uint32_t cmdr_off, cmdr_size;
	_Atomic uint32_t next;  /* ring offset of the next entry to take */
	bool read_len;          /* the kernel takes the length read (TCMU_MAILBOX_FLAG_CAP_READ_LEN) */
	uint64_t skipped;       /* PAD, TMR and unknown entries stepped over */
	uint64_t malformed;     /* command entries whose CDB or iovecs lie outside the map */
};

/* One command taken from the ring, until tcmu_ring_complete. */
struct tcmu_ring_cmd {
	uint32_t off;                        /* the entry's ring offset */
	uint16_t cmd_id;
	struct scsi_cmd cmd;                 /* CDB copied, iov pointing into the data area */
	struct iovec iov[TCMU_RING_IOV_MAX];
	bool malformed;                      /* answered with an error without running */
};

/*
 * Checks the mailbox at the start of map (len bytes): version, ring offset
 * and size inside the map. Starts taking entries at the mailbox's cmd_tail.
 * VTL_E_INVAL when the region is not a TCMU ring this code understands.
 */
int tcmu_ring_init(struct tcmu_ring *r, void *map, size_t len);

/*
 * Takes the next command entry, stepping over PAD, TMR and unknown entries.
 * Returns 1 with *out filled (nexus: 0; malformed entries come back with
 * out->malformed set and an error already in out->cmd), 0 when the ring
 * holds nothing new.
 */
int tcmu_ring_next(struct tcmu_ring *r, struct tcmu_ring_cmd *out);

/*
 * Completes the oldest command taken and not completed (commands complete in
 * the order they were taken): status, sense (descriptor format when the
 * command asks for it), the length read for data-in; then moves cmd_tail
 * past it and past any non-command entries that follow it up to what was
 * taken. The caller then rings the kernel's doorbell.
 */
void tcmu_ring_complete(struct tcmu_ring *r, const struct tcmu_ring_cmd *rc);

/* The length of a CDB from its operation code's group (SPC-4 4.2.5.1); 0 for a reserved group. */
uint8_t tcmu_cdb_len(const uint8_t *cdb);

#endif
