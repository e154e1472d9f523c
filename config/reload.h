/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A daemon's reload of its configuration file (docs/operations.md,
 * "Reload"), the same for vtld and vtl-migrator: read the file again, sort
 * its changes (vtl_config_reload_plan), apply them all through the daemon's
 * own function or none, say so in the log, to the caller and to the service
 * manager (RELOADING=1, then READY=1).
 */
#ifndef VTL_CONFIG_RELOAD_H
#define VTL_CONFIG_RELOAD_H

#include <stdatomic.h>
#include <stddef.h>

#include "config/config.h"

/* What one daemon reloads, and how. */
struct vtl_reload {
	const char *const *reloads, *const *ignores; /* as vtl_config_reload_plan takes them */
	/* Applies next, which the plan accepted: VTL_OK and next is the daemon's; else nothing changed. */
	int (*apply)(void *arg, struct vtl_config *next);
	void *arg;
	const char *name;   /* for the manager's STATUS=: "library L1", "copies go to simlib" */
	atomic_flag *busy;  /* the daemon's: one reload at a time */
};

/*
 * Reloads r's daemon, whose configuration now is cur (read from cur->path):
 * VTL_OK with msg ("reload: applied ..." or "reload: nothing this daemon
 * reads changed"); VTL_E_CONFIG (the file does not parse, or a change needs a
 * restart: msg names each), VTL_E_BUSY (another reload runs) or the apply
 * function's error, with nothing applied. Logs msg.
 */
int vtl_reload(const struct vtl_config *cur, const struct vtl_reload *r, char *msg, size_t cap);

#endif
