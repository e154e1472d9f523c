/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Telling a service manager how the daemon is (the sd_notify protocol of
 * sd_notify(3), without libsystemd): one datagram of NEWLINE-separated
 * VARIABLE=value lines to the AF_UNIX socket named by $NOTIFY_SOCKET, a
 * path or, with a leading '@', an abstract name. Without $NOTIFY_SOCKET
 * (started by hand, by a test, by a manager that does not listen) every
 * call is a no-op. A failure is returned and logged once, never fatal: a
 * manager that lost our messages still sees the process and its exit.
 */
#ifndef VTL_COMMON_SDNOTIFY_H
#define VTL_COMMON_SDNOTIFY_H

#include "common/vtl_error.h"

/*
 * The longest message sent: STATUS= and the state lines of this project
 * stay far below it; a longer one is refused, not cut, so that no line
 * arrives half written.
 */
#define SDNOTIFY_MAX_BYTES 4096

/* Room for a daemon's STATUS= text (a library or physical library name and a few words). */
#define SDNOTIFY_STATUS_LEN 256

/*
 * Sends state (e.g. "READY=1\nSTATUS=serving") to $NOTIFY_SOCKET. VTL_OK when
 * it was sent or the variable is unset; VTL_E_INVAL for a state longer than
 * SDNOTIFY_MAX_BYTES or a socket name that is neither absolute nor '@' nor
 * fits sockaddr_un; VTL_E_IO (errno set) when the socket or the send
 * failed. The first failure of a process is logged as a warning.
 */
int sdnotify_send(const char *state) VTL_MUST_CHECK;

/* READY=1 with STATUS=status: the daemon serves (and, after RELOADING=1, the reload is over). */
int sdnotify_ready(const char *status) VTL_MUST_CHECK;

/* STOPPING=1 with STATUS=status: a stop signal began the shutdown. */
int sdnotify_stopping(const char *status) VTL_MUST_CHECK;

/*
 * RELOADING=1 with the CLOCK_MONOTONIC time in MONOTONIC_USEC (which
 * systemd 253's Type=notify-reload requires; 252 ignores it): a reload
 * began; sdnotify_ready ends it.
 */
int sdnotify_reloading(void) VTL_MUST_CHECK;

#endif
