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

/*
 * One daemon's classification of every key of the file: each key is named by
 * exactly one rule of the three lists (NULL-terminated "SECTION KEY" or
 * "SECTION *", as vtl_config_reload_plan takes them), which
 * tests/unit/test_reload_keys.c checks against the parser's key table and
 * docs/operations.md's table.
 */
struct vtl_reload_keys {
	const char *daemon;            /* "vtld", "vtl-migrator" */
	const char *const *reloads;    /* applied while the daemon runs */
	const char *const *restarts;   /* read, but only at the start: a change refuses the reload */
	const char *const *ignores;    /* not read by this daemon (the other one's) */
};

/* vtld's and vtl-migrator's keys (docs/operations.md, "Reload"). */
extern const struct vtl_reload_keys vtl_reload_keys_vtld, vtl_reload_keys_migrator;

/* What a daemon does with a change of one key at a reload. */
enum vtl_reload_class {
	VTL_RELOAD_UNCLASSIFIED, /* no rule names the key: the plan treats it as a restart */
	VTL_RELOAD_APPLY,
	VTL_RELOAD_RESTART,
	VTL_RELOAD_IGNORE,
	VTL_RELOAD_AMBIGUOUS,    /* rules of two lists name it */
};

/* The class of key of section for the daemon whose keys are k. */
enum vtl_reload_class vtl_reload_class_of(const struct vtl_reload_keys *k, const char *section, const char *key);

/* What one daemon reloads, and how. */
struct vtl_reload {
	const struct vtl_reload_keys *keys;
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
