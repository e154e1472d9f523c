/* SPDX-License-Identifier: Apache-2.0 */
/*
 * vtld's TCMU front end: the library's logical units as LIO user backstores
 * (target_core_user). scripts/vtl-lio-setup creates one backstore per LUN
 * with the config string "vtl/<library>/<lun>"; the kernel names each UIO
 * device "tcm-user/<hba>/<backstore>/vtl/<library>/<lun>". A thread scans
 * /sys/class/uio for such devices of this library (and again every
 * second, so that devices may come and go), maps each one's ring and hands
 * its commands to the LUN's worker, completing them in the ring as they end
 * (vtl/tcmu/ring.h). Devices of other subtypes or libraries are left alone,
 * so a tcmu-runner on the same host is not disturbed.
 */
#ifndef VTL_TCMU_FRONT_H
#define VTL_TCMU_FRONT_H

#include <stddef.h>
#include <stdint.h>

#include "vtl/lu_worker.h"

#define TCMU_SUBTYPE "vtl"
#define TCMU_UIO_ROOT "/sys/class/uio"
#define TCMU_DEV_ROOT "/dev"
#define TCMU_NEXUS_BASE 0x7C00000000000000ull /* nexus of the commands of TCMU device i: base + i */


struct tcmu_front;

/*
 * Parses a UIO device name. For "tcm-user/<hba>/<name>/vtl/<library>/<lun>"
 * sets *library (pointing into name, *library_len bytes) and *lun and
 * returns 0; VTL_E_NOTFOUND for any other name (another subtype, not TCMU).
 */
int tcmu_parse_uio_name(const char *name, const char **library, size_t *library_len, unsigned *lun);

/*
 * Starts serving the TCMU devices of library (its LUNs: lus, n) found under
 * uio_root ("/sys/class/uio"; device nodes in dev_root, "/dev"). A missing
 * uio_root is no error: devices may appear later.
 */
int tcmu_front_start(const char *library, const struct vtl_lu *lus, unsigned n, const char *uio_root,
		     const char *dev_root, struct tcmu_front **out);

/* How many devices it serves now. */
unsigned tcmu_front_devices(struct tcmu_front *f);

/* Stops the thread, waits for the commands in flight, unmaps and closes every device, frees f. */
void tcmu_front_stop(struct tcmu_front *f);

#endif
