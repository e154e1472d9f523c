/* SPDX-License-Identifier: Apache-2.0 */
#include "common/ctlsock.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/log.h"
#include "common/vtl_error.h"

#define CLIENT_TIMEOUT_MS 5000 /* a client that sends nothing is dropped */

struct ctlsock {
	int fd;
	int stop_pipe[2];
	pthread_t thread;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	ctlsock_handler handler;
	void (*tick)(void *arg);
	unsigned tick_ms;
	void *arg;
	char answer[CTLSOCK_ANSWER_MAX];
};

/* A socket connected to path, or -1. */
static int connect_to(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	if (strlen(path) >= sizeof sa.sun_path)
		return -1;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

bool ctlsock_answers(const char *path)
{
	int fd = connect_to(path);
	if (fd < 0)
		return false;
	close(fd);
	return true;
}

/* Reads up to the first newline (or cap - 1 bytes) within timeout_ms per read; the line, NUL-terminated. */
static size_t read_line(int fd, char *buf, size_t cap, int timeout_ms)
{
	size_t have = 0;
	struct pollfd p = {fd, POLLIN, 0};
	while (have < cap - 1 && poll(&p, 1, timeout_ms) == 1) {
		ssize_t n = read(fd, buf + have, cap - 1 - have);
		if (n <= 0)
			break;
		have += (size_t)n;
		if (memchr(buf, '\n', have))
			break;
	}
	buf[have] = 0;
	char *nl = strchr(buf, '\n');
	if (nl)
		*nl = 0;
	return have;
}

int ctlsock_exchange(const char *path, const char *request, char *answer, size_t cap, int timeout_ms)
{
	int fd = connect_to(path);
	if (fd < 0 || cap == 0)
		return -1;
	char req[CTLSOCK_REQUEST_MAX];
	int len = snprintf(req, sizeof req, "%s\n", request);
	/* MSG_NOSIGNAL: a daemon that hangs up must give an error, not kill the client with SIGPIPE. */
	bool sent = len > 0 && (size_t)len < sizeof req && send(fd, req, (size_t)len, MSG_NOSIGNAL) == len;
	size_t got = sent ? read_line(fd, answer, cap, timeout_ms) : 0;
	close(fd);
	return sent && got ? 0 : -2;
}

static void serve_one(struct ctlsock *s, int fd)
{
	char req[CTLSOCK_REQUEST_MAX];
	read_line(fd, req, sizeof req, CLIENT_TIMEOUT_MS);
	s->handler(s->arg, req, s->answer, sizeof s->answer - 1);
	size_t len = strlen(s->answer);
	s->answer[len++] = '\n';
	for (size_t done = 0; done < len;) {
		ssize_t n = send(fd, s->answer + done, len - done, MSG_NOSIGNAL);
		if (n <= 0)
			break;
		done += (size_t)n;
	}
}

static void *run(void *arg)
{
	struct ctlsock *s = arg;
	for (;;) {
		struct pollfd p[2] = {{s->fd, POLLIN, 0}, {s->stop_pipe[0], POLLIN, 0}};
		if (poll(p, 2, s->tick ? (int)s->tick_ms : -1) < 0 && errno != EINTR)
			break;
		if (p[1].revents)
			break;
		if (s->tick)
			s->tick(s->arg);
		if (!(p[0].revents & POLLIN))
			continue;
		int fd = accept4(s->fd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0)
			continue;
		serve_one(s, fd);
		close(fd);
	}
	return NULL;
}

int ctlsock_start(const char *path, ctlsock_handler handler, void (*tick)(void *arg), unsigned tick_ms, void *arg,
		  struct ctlsock **out, char *err, size_t errlen)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	if (strlen(path) >= sizeof sa.sun_path) {
		snprintf(err, errlen, "control socket path %s is too long", path);
		return VTL_E_CONFIG;
	}
	memcpy(sa.sun_path, path, strlen(path) + 1);
	/* A socket file nobody answers on is left from a crash: take it over. One that answers is another daemon. */
	if (ctlsock_answers(path)) {
		snprintf(err, errlen, "another daemon answers on %s", path);
		return VTL_E_BUSY;
	}
	struct ctlsock *s = calloc(1, sizeof *s);
	if (!s)
		return VTL_E_NOMEM;
	*s = (struct ctlsock){.handler = handler, .tick = tick, .tick_ms = tick_ms, .arg = arg, .stop_pipe = {-1, -1}};
	memcpy(s->path, path, strlen(path) + 1);
	unlink(path);
	s->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s->fd < 0 || bind(s->fd, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(s->fd, 8) != 0 ||
	    pipe(s->stop_pipe) != 0 || pthread_create(&s->thread, NULL, run, s) != 0) {
		snprintf(err, errlen, "control socket %s: %s", path, strerror(errno));
		if (s->fd >= 0)
			close(s->fd);
		if (s->stop_pipe[0] >= 0) {
			close(s->stop_pipe[0]);
			close(s->stop_pipe[1]);
		}
		free(s);
		return VTL_E_IO;
	}
	*out = s;
	return VTL_OK;
}

void ctlsock_stop(struct ctlsock *s)
{
	if (!s)
		return;
	if (write(s->stop_pipe[1], "x", 1) != 1)
		log_warn("control socket: cannot wake its thread");
	pthread_join(s->thread, NULL);
	close(s->fd);
	close(s->stop_pipe[0]);
	close(s->stop_pipe[1]);
	unlink(s->path);
	free(s);
}
