/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The daemons' control sockets: a Unix socket where a client sends one
 * request line and reads one answer line (JSON), served by a thread of
 * the daemon. vtld and vtl-migrator answer vtlctl this way.
 */
#ifndef VTL_COMMON_CTLSOCK_H
#define VTL_COMMON_CTLSOCK_H

#include <stdbool.h>
#include <stddef.h>

#define CTLSOCK_REQUEST_MAX 1024
#define CTLSOCK_ANSWER_MAX 65536

/* Answers one request line into out (cap bytes, NUL-terminated, no newline). */
typedef void (*ctlsock_handler)(void *arg, const char *request, char *out, size_t cap);

struct ctlsock;

/*
 * Listens on path (a stale socket nobody answers on is replaced; one that
 * answers: VTL_E_BUSY) and serves requests with handler on a thread; tick
 * (may be NULL) runs on that thread about every tick_ms while idle.
 */
int ctlsock_start(const char *path, ctlsock_handler handler, void (*tick)(void *arg), unsigned tick_ms, void *arg,
		  struct ctlsock **out, char *err, size_t errlen);

/* Stops serving, removes the socket and frees s (NULL is fine). */
void ctlsock_stop(struct ctlsock *s);

/* Whether something answers on the socket at path. */
bool ctlsock_answers(const char *path);

/*
 * Sends request (no newline) to the socket at path and reads the answer
 * line into answer (cap bytes, without its newline), waiting at most
 * timeout_ms. 0; -1 when nothing answers on path; -2 when the send fails
 * or no answer comes (the daemon hung up or hangs).
 */
int ctlsock_exchange(const char *path, const char *request, char *answer, size_t cap, int timeout_ms);

#endif
