/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The built-in iSCSI target (RFC 7143): a TCP listener and an event loop on
 * one thread that owns every connection's socket, runs logins
 * (vtl/iscsi/login.c) and full feature phases (vtl/iscsi/session.c), and
 * hands SCSI commands to each logical unit's worker thread, so that network
 * I/O never waits on a disk.
 */
#ifndef VTL_ISCSI_TARGET_H
#define VTL_ISCSI_TARGET_H

#include <stddef.h>
#include <stdint.h>

#include "vtl/iscsi/login.h"
#include "vtl/iscsi/session.h"
#include "vtl/lu_worker.h"

struct iscsi_target_opts {
	const char *listen;                /* address to listen on ("127.0.0.1", "0.0.0.0", "::") */
	unsigned port;                     /* 0: any free port (see iscsi_target_port) */
	struct iscsi_target_config login;  /* target name, CHAP, initiators, discovery answers */
	const struct session_lu *lus;      /* the logical units, changer first */
	struct lu_worker *const *workers;  /* workers[i] runs lus[i]'s commands */
	unsigned n_lus;
	unsigned nop_interval;             /* seconds of silence before a NOP-In ping (and for its answer); 0: none */
	unsigned auth_fail_delay;          /* seconds an authentication failure waits before its answer and close */
};

struct iscsi_target;

/* Listens and starts the event loop thread; err says why not. */
int iscsi_target_start(const struct iscsi_target_opts *o, struct iscsi_target **out, char *err, size_t errlen);

/* The TCP port listened on. */
unsigned iscsi_target_port(const struct iscsi_target *t);

/* Closes every connection (waiting for commands the units are running), stops the thread, frees t. */
void iscsi_target_stop(struct iscsi_target *t);

#endif
