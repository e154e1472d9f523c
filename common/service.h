/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A daemon's life under a service manager: the signals its main thread
 * takes synchronously (SIGTERM and SIGINT stop it, SIGHUP reloads its
 * configuration) and the states it tells the manager (common/sdnotify) as
 * they change, so that vtld and vtl-migrator behave alike under systemd.
 */
#ifndef VTL_COMMON_SERVICE_H
#define VTL_COMMON_SERVICE_H

#include <signal.h>

/*
 * Blocks SIGTERM, SIGINT and SIGHUP in the calling thread, so in every
 * thread it starts afterwards, into *set, and ignores SIGPIPE (a peer that
 * closes its socket is an error value, not a death). Call before any thread starts.
 */
void service_signals(sigset_t *set);

/* What a SIGHUP runs; it tells the manager RELOADING=1 and READY=1 and logs what it applied. */
typedef void (*service_reload_fn)(void *arg);

/*
 * Tells the manager READY=1 with status, then waits on set: each SIGHUP
 * is logged and runs reload(arg) (when not NULL); the first SIGTERM or
 * SIGINT is logged, told as STOPPING=1 with stopping, and returned.
 */
int service_wait(const sigset_t *set, const char *status, const char *stopping, service_reload_fn reload, void *arg);

#endif
