/* SPDX-License-Identifier: Apache-2.0 */
#include "common/sdnotify.h"
#include "common/log.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define USEC_PER_SEC 1000000ULL
#define NSEC_PER_USEC 1000ULL

static atomic_bool warned;

static int fail(int rc, const char *why, const char *name)
{
	int saved = errno;
	if (!atomic_exchange(&warned, true))
		log_warn("sd_notify to %s: %s (the service manager may not see this daemon's state; not fatal)", name,
			 why);
	errno = saved;
	return rc;
}

/* Fills sa from the socket's name: a path, or '@' for the abstract namespace (unix(7)); its length in *len. */
static int notify_address(const char *name, struct sockaddr_un *sa, socklen_t *len)
{
	size_t n = strlen(name);
	memset(sa, 0, sizeof *sa);
	sa->sun_family = AF_UNIX;
	if (n < 2 || (name[0] != '/' && name[0] != '@') || n >= sizeof sa->sun_path)
		return VTL_E_INVAL;
	memcpy(sa->sun_path, name, n);
	if (name[0] == '@')
		sa->sun_path[0] = 0; /* an abstract name: no NUL terminator, its length says where it ends */
	*len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + (name[0] == '/'));
	return VTL_OK;
}

int sdnotify_send(const char *state)
{
	const char *name = getenv("NOTIFY_SOCKET");
	if (!name || !*name)
		return VTL_OK;
	size_t len = strlen(state);
	if (len > SDNOTIFY_MAX_BYTES)
		return fail(VTL_E_INVAL, "message too long", name);
	struct sockaddr_un sa;
	socklen_t salen;
	if (notify_address(name, &sa, &salen) != VTL_OK)
		return fail(VTL_E_INVAL, "NOTIFY_SOCKET is neither an absolute path nor an @abstract name that fits", name);
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return fail(VTL_E_IO, strerror(errno), name);
	ssize_t sent = sendto(fd, state, len, MSG_NOSIGNAL, (struct sockaddr *)&sa, salen);
	int saved = errno;
	close(fd);
	errno = saved;
	if (sent < 0)
		return fail(VTL_E_IO, strerror(errno), name);
	if ((size_t)sent != len) {
		errno = EMSGSIZE;
		return fail(VTL_E_IO, "datagram cut short", name);
	}
	return VTL_OK;
}

/* Sends head, then STATUS=status when there is one. */
static int send_with_status(const char *head, const char *status)
{
	const char *name = getenv("NOTIFY_SOCKET");
	if (!name || !*name)
		return VTL_OK;
	char msg[SDNOTIFY_MAX_BYTES + 1];
	int n = status ? snprintf(msg, sizeof msg, "%s\nSTATUS=%s", head, status) : snprintf(msg, sizeof msg, "%s", head);
	if (n < 0 || (size_t)n >= sizeof msg)
		return fail(VTL_E_INVAL, "message too long", name);
	return sdnotify_send(msg);
}

int sdnotify_ready(const char *status)
{
	return send_with_status("READY=1", status);
}

int sdnotify_stopping(const char *status)
{
	return send_with_status("STOPPING=1", status);
}

int sdnotify_reloading(void)
{
	const char *name = getenv("NOTIFY_SOCKET");
	if (!name || !*name)
		return VTL_OK;
	struct timespec ts;
	if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
		return fail(VTL_E_IO, strerror(errno), name);
	char msg[64];
	unsigned long long usec = (unsigned long long)ts.tv_sec * USEC_PER_SEC + (unsigned long long)ts.tv_nsec / NSEC_PER_USEC;
	snprintf(msg, sizeof msg, "RELOADING=1\nMONOTONIC_USEC=%llu", usec);
	return sdnotify_send(msg);
}
