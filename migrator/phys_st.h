/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A physical tape library attached to this Linux host: its drives through
 * the st driver (non-rewinding nodes /dev/nstN: read, write and the mtio
 * ioctls), its medium changer through SCSI generic (/dev/sgN, SG_IO).
 * Opening it learns which drive node sits behind which data transfer
 * element (or, when no drive is listed, finds every drive the changer
 * reports among the host's st drives); everything else is struct phys_ops
 * (migrator/phys.h). Each drive's calls run under its own lock, so the
 * drives stream at once on their threads.
 */
#ifndef VTL_MIGRATOR_PHYS_ST_H
#define VTL_MIGRATOR_PHYS_ST_H

#include <stddef.h>

#include "migrator/phys.h"

struct phys_st_config {
	const char *changer;                   /* the changer's SCSI generic node, e.g. /dev/sg1 */
	/* The drives' non-rewinding st nodes (/dev/nst0, ...), or none (drives = 0): then every drive the changer
	 * reports is found by its serial number among this host's st drives (migrator/phys_st_find.h). */
	const char *drive[PHYS_MAX_DRIVES];
	/* Optional SCSI generic node of each drive (NULL: SG_IO on the st node, which st allows only with
	 * CAP_SYS_RAWIO). Used for INQUIRY (serial number), READ BLOCK LIMITS, READ POSITION, LOG SENSE. */
	const char *drive_sg[PHYS_MAX_DRIVES];
	unsigned drives;
	const char *sysfs;          /* where sysfs is mounted, for finding the drives; NULL: /sys */
	unsigned ready_timeout_s;   /* how long a drive may take to become ready after a load; 0: 300 s */
	unsigned command_timeout_s; /* how long one changer command may take; 0: 600 s */
};

/* Opens the changer and the drives and maps them: VTL_OK and *out (freed by its close), or an error with its reason in err. */
int phys_st_open(const struct phys_st_config *cfg, struct phys_lib **out, char *err, size_t errlen);

#endif
