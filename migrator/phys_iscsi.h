/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A physical tape library reached over iSCSI, through libiscsi's synchronous
 * calls, on a target that exports the library's medium changer and its tape
 * drives as LUNs, as iSCSI-attached libraries and bridges do. Opening it
 * logs in, finds the changer and the drives among the LUNs, learns which
 * drive LUN sits behind which data transfer element, and logs in once more
 * for each drive: 1 + drives sessions (at most 1 + PHYS_MAX_DRIVES), so
 * that the drives stream at once; everything else is struct phys_ops
 * (migrator/phys.h).
 */
#ifndef VTL_MIGRATOR_PHYS_ISCSI_H
#define VTL_MIGRATOR_PHYS_ISCSI_H

#include <stddef.h>

#include "migrator/phys.h"

struct phys_iscsi_config {
	const char *portal;         /* "host:port" ("host" alone: port 3260) */
	const char *target_iqn;     /* the target that exports the changer and the drives */
	const char *initiator_iqn;  /* our name, as the target's access list knows it */
	const char *chap_user;      /* one-way CHAP; NULL or "" logs in without */
	const char *chap_secret;
	const char *mutual_user;    /* mutual CHAP (needs one-way CHAP): the target must prove it knows this */
	const char *mutual_secret;  /* name's secret; NULL or "" user: the target is not authenticated */
	unsigned ready_timeout_s;   /* how long a drive may take to become ready after a load; 0: 300 s */
	unsigned command_timeout_s; /* how long one command may go unanswered; 0: no limit */
};

/* Logs in and maps the library: VTL_OK and *out (freed by its close), or an error with its reason in err. */
int phys_iscsi_open(const struct phys_iscsi_config *cfg, struct phys_lib **out, char *err, size_t errlen);

#endif
