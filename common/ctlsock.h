/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The daemons' control sockets: a Unix socket where a client sends one
 * request line and reads one answer line (JSON), served by a thread of
 * the daemon. vtld and vtl-migrator answer vtlctl this way.
 *
 * Who may use one (docs/operations.md): the socket file is 0600 (0660 of a
 * configured group) in a folder that only its owner (and that group) can
 * enter and nobody else can write into, and every connection's peer
 * credentials (SO_PEERCRED) are checked again: root, the daemon's own user
 * and, with a group, its members. What one client can hold is bounded: a
 * request must arrive whole within a deadline, at most a fixed number of
 * clients are connected at once, and one that sends nothing never delays
 * another. Requests are answered one at a time, on the socket's thread, in
 * the order they arrive whole: handlers need no locking among themselves.
 */
#ifndef VTL_COMMON_CTLSOCK_H
#define VTL_COMMON_CTLSOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define CTLSOCK_REQUEST_MAX 1024
#define CTLSOCK_ANSWER_MAX 65536
#define CTLSOCK_DEADLINE_MS 5000  /* default: a client has this long to send its request, and to read the answer */
#define CTLSOCK_CLIENTS_MAX 16    /* default: clients connected at once; one more is answered "busy" */

/* Answers one request line into out (cap bytes, NUL-terminated, no newline). */
typedef void (*ctlsock_handler)(void *arg, const char *request, char *out, size_t cap);

struct ctlsock_config {
	const char *path;          /* the socket file's absolute path */
	const char *group;         /* NULL or "": root and the daemon's user only; else also this group's members */
	gid_t gid;                 /* group's id */
	const char *daemon;        /* the daemon's name, for messages ("vtld") */
	ctlsock_handler handler;
	void (*tick)(void *arg);   /* may be NULL: runs on the socket's thread about every tick_ms */
	unsigned tick_ms;
	void *arg;                 /* for handler and tick */
	unsigned deadline_ms;      /* 0: CTLSOCK_DEADLINE_MS */
	unsigned clients_max;      /* 0: CTLSOCK_CLIENTS_MAX */
};

struct ctlsock;

/*
 * Prepares the socket's folder (created 0700, 0750 of the group, when
 * missing; refused when it is not a folder, belongs to another user or
 * others can write into it), listens on c->path (a stale socket nobody
 * answers on is replaced; one that answers: VTL_E_BUSY) and serves requests
 * on a thread. VTL_E_CONFIG with err saying what to change, VTL_E_IO, VTL_E_NOMEM.
 */
int ctlsock_start(const struct ctlsock_config *c, struct ctlsock **out, char *err, size_t errlen);

/* Stops serving, removes the socket and frees s (NULL is fine). */
void ctlsock_stop(struct ctlsock *s);

/* Whether something answers on the socket at path; true too when this user may not connect to it (EACCES). */
bool ctlsock_answers(const char *path);

/*
 * Sends request (no newline) to the socket at path and reads the answer
 * line into answer (cap bytes, without its newline), waiting at most
 * timeout_ms. 0; -1 when nothing answers on path; -2 when the send fails
 * or no answer comes (the daemon hung up or hangs); -3 when the socket's
 * mode or folder does not let this user connect (EACCES).
 */
int ctlsock_exchange(const char *path, const char *request, char *answer, size_t cap, int timeout_ms);

/*
 * Reads from fd up to the first newline (or cap - 1 bytes), waiting at most
 * timeout_ms for each read, into buf without the newline, NUL-terminated;
 * the bytes read (0: nothing came).
 */
size_t ctlsock_read_line(int fd, char *buf, size_t cap, int timeout_ms);

#endif
