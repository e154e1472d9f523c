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

/*
 * What one peer, and all peers together, may make the target hold; 0
 * means the default in parentheses (docs/iscsi.md, "Limits and security").
 */
struct iscsi_limits {
	unsigned login_timeout;            /* seconds a connection may take to finish its login (15) */
	unsigned max_logins;               /* connections still logging in, from everywhere (64) */
	unsigned max_logins_per_address;   /* ... from one address (16) */
	unsigned max_sessions;             /* logged-in sessions, from everywhere (128) */
	unsigned max_sessions_per_address; /* ... from one address (64) */
	uint64_t output_max;               /* bytes waiting to be sent beyond which a connection is not read (4 MiB) */
	uint32_t cmd_window;               /* commands a session may hold (32, at most 32) */
	uint32_t ping_data_max;            /* NOP-Out ping data echoed (4096) */
	uint64_t session_buffer_max;       /* task-buffer bytes of one session (64 MiB) */
	uint64_t buffer_max;               /* task-buffer bytes of all sessions (1 GiB) */
};

#define ISCSI_LOGIN_TIMEOUT 15
#define ISCSI_MAX_LOGINS 64
#define ISCSI_MAX_LOGINS_PER_ADDRESS 16
#define ISCSI_MAX_SESSIONS 128
#define ISCSI_MAX_SESSIONS_PER_ADDRESS 64
#define ISCSI_OUTPUT_MAX (4ull << 20)
#define ISCSI_BUFFER_MAX (1ull << 30)

/* Fills every 0 of l with its default. */
void iscsi_limits_default(struct iscsi_limits *l);

struct iscsi_target_opts {
	const char *listen;                /* address to listen on ("127.0.0.1", "0.0.0.0", "::") */
	unsigned port;                     /* 0: any free port (see iscsi_target_port) */
	struct iscsi_target_config login;  /* target name, CHAP, initiators, discovery answers */
	const struct vtl_lu *lus;          /* the logical units, changer first, each with its worker started */
	unsigned n_lus;
	unsigned nop_interval;             /* seconds of silence before a NOP-In ping (and for its answer); 0: none */
	struct iscsi_limits limits;
	unsigned auth_fail_delay;          /* seconds an authentication failure waits before its answer and close */
};

struct iscsi_target;

/* A logged-in normal session, as the metrics show it. */
struct iscsi_session_info {
	char initiator[ISCSI_NAME_MAX + 1];
	char isid[2 * ISCSI_ISID_LEN + 1]; /* hex */
	char peer[ISCSI_PORTAL_MAX];
	unsigned in_flight;                /* commands with a unit now */
	uint64_t commands;                 /* commands the units finished */
	uint64_t data_in_bytes, data_out_bytes; /* SCSI data sent to and taken from the initiator */
};

/* Listens and starts the event loop thread; err says why not. */
int iscsi_target_start(const struct iscsi_target_opts *o, struct iscsi_target **out, char *err, size_t errlen);

/* The TCP port listened on. */
unsigned iscsi_target_port(const struct iscsi_target *t);

/*
 * Copies up to max of the normal sessions logged in into out (NULL with max
 * 0: none), as the event loop last published them (at most PUBLISH_MS old);
 * how many there are, max or not.
 */
unsigned iscsi_target_sessions(struct iscsi_target *t, struct iscsi_session_info *out, unsigned max);

/* What of iscsi_target_config a reload may change: the CHAP credentials and the allowed initiators. */
struct iscsi_auth {
	const char *chap_user, *chap_secret, *mutual_user, *mutual_secret;
	bool discovery_chap;
	const struct iscsi_credentials *hosts;
	size_t n_hosts;
	const char *const *initiators;
	size_t n_initiators;
};

/*
 * Makes every later login use a (its strings must outlive the target or
 * the next call) and closes the connections still in their login, whose
 * next steps would use the credentials they started with; sessions already
 * logged in stay, as on a real target. Returns once the event loop applied
 * it: from then on nothing reads the previous credentials.
 */
void iscsi_target_set_auth(struct iscsi_target *t, const struct iscsi_auth *a);

/* Closes every connection (waiting for commands the units are running), stops the thread, frees t. */
void iscsi_target_stop(struct iscsi_target *t);

#endif
