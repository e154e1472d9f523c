/* SPDX-License-Identifier: Apache-2.0 */
/*
 * vtld's control socket: vtlctl connects to a Unix socket, sends one request
 * line ("status", "load ...", ...) and reads one JSON answer. Requests run on
 * the same code paths as the SCSI commands (the library model), so what the
 * operator does is what hosts see.
 */
#ifndef VTL_VTLD_CONTROL_H
#define VTL_VTLD_CONTROL_H

#include <stdbool.h>
#include <stddef.h>

struct vtld;
struct ctlsock;
struct vtl_cfg_group;

/*
 * Listens on path (a stale socket nobody answers on is replaced; one that
 * answers means another vtld runs: VTL_E_BUSY) and serves v from a thread,
 * to root, vtld's own user and the members of group (name "" for none);
 * the socket's and its folder's modes as ctlsock_start makes them.
 */
int control_start(const char *path, const struct vtl_cfg_group *group, struct vtld *v, struct ctlsock **out, char *err,
		  size_t errlen);

/* Whether something answers on the socket at path (another vtld). */
bool control_answers(const char *path);

/* Stops serving, removes the socket and frees c. */
void control_stop(struct ctlsock *c);

/*
 * Answers one request line into out (cap bytes, NUL-terminated JSON), one
 * answer at a time (vtld_control_mu): for the socket, the HTTP endpoint's
 * /api routes and tests.
 */
void control_answer(struct vtld *v, const char *request, char *out, size_t cap);

#endif
