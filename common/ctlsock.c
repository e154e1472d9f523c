/* SPDX-License-Identifier: Apache-2.0 */
#include "common/ctlsock.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/jsonout.h"
#include "common/log.h"
#include "common/vtl_error.h"

#define SOCKET_MODE 0600       /* the daemon's user only */
#define SOCKET_MODE_GROUP 0660 /* and the control group */
#define FOLDER_MODE 0700
#define FOLDER_MODE_GROUP 0750
#define ACCEPT_PAUSE_MS 100    /* out of descriptors: accept again after this, rather than spin on the listener */
#define PW_BUF 16384           /* getpwuid_r's buffer: a passwd line is far shorter */
#define GROUPS_MAX 65536       /* NGROUPS_MAX on Linux since 2.6.4: a user's groups never exceed it */
#define ERROR_ANSWER_MAX 512   /* a refusal or "busy" line */
#define REFUSED_MS 1000        /* a refused client's time to send its request and read why, before it is closed */

/* One connected client: reading its request, then sending its answer. */
struct client {
	int fd;              /* -1: the slot is free */
	uint64_t deadline;   /* CLOCK_MONOTONIC ms: the request (or the answer) must be through by then */
	size_t have;         /* request bytes read */
	char req[CTLSOCK_REQUEST_MAX];
	char *out;           /* the answer's unsent rest (owned); NULL while the request is read */
	size_t out_len, out_done;
};

/*
 * A refused client, kept only until it hangs up: closing a Unix socket with
 * unread bytes makes the peer's read fail with ECONNRESET, and the
 * refusal with it (Linux unix_release_sock); so what it sends is drained.
 */
struct refused {
	int fd;             /* -1: free */
	uint64_t deadline;
};

struct ctlsock {
	int fd;
	int stop_pipe[2];
	pthread_t thread;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	char daemon[32];
	bool group;
	char group_name[64];
	gid_t gid;
	uid_t uid;           /* the daemon's own (effective) user */
	ctlsock_handler handler;
	void (*tick)(void *arg);
	unsigned tick_ms;
	void *arg;
	unsigned deadline_ms, clients_max;
	struct client *clients;
	struct refused *refused; /* clients_max of them: more refused at once are closed at once */
	struct pollfd *polls; /* 2 + 2 * clients_max: the stop pipe, the listener, clients, refused */
	char answer[CTLSOCK_ANSWER_MAX];
};

/* A socket connected to path, or -1 with errno set. */
static int connect_to(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	if (strlen(path) >= sizeof sa.sun_path) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(sa.sun_path, path, strlen(path) + 1);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
		int e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

bool ctlsock_answers(const char *path)
{
	int fd = connect_to(path);
	if (fd < 0)
		return errno == EACCES || errno == EPERM; /* a daemon may well answer there, only not to this user */
	close(fd);
	return true;
}

size_t ctlsock_read_line(int fd, char *buf, size_t cap, int timeout_ms)
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
	if (cap == 0)
		return -1;
	int fd = connect_to(path);
	if (fd < 0)
		return errno == EACCES || errno == EPERM ? -3 : -1;
	char req[CTLSOCK_REQUEST_MAX];
	int len = snprintf(req, sizeof req, "%s\n", request);
	/* MSG_NOSIGNAL: a daemon that hangs up must give an error, not kill the client with SIGPIPE. */
	bool sent = len > 0 && (size_t)len < sizeof req && send(fd, req, (size_t)len, MSG_NOSIGNAL) == len;
	size_t got = sent ? ctlsock_read_line(fd, answer, cap, timeout_ms) : 0;
	close(fd);
	return sent && got ? 0 : -2;
}

/* ------------------------------------------------------ who may connect */

/* Whether uid's groups in the group database (primary and supplementary) include gid. */
static bool user_in_group(uid_t uid, gid_t gid)
{
	struct passwd pw, *found = NULL;
	char buf[PW_BUF];
	if (getpwuid_r(uid, &pw, buf, sizeof buf, &found) != 0 || !found)
		return false;
	if (pw.pw_gid == gid)
		return true;
	int n = 64;
	gid_t *groups = NULL;
	for (;;) {
		gid_t *g = realloc(groups, (size_t)n * sizeof *g);
		if (!g)
			break;
		groups = g;
		int want = n;
		if (getgrouplist(pw.pw_name, pw.pw_gid, groups, &want) >= 0) {
			for (int i = 0; i < want; i++)
				if (groups[i] == gid) {
					free(groups);
					return true;
				}
			break;
		}
		if (want <= n || want > GROUPS_MAX)
			break; /* a database that keeps growing under us is not trusted */
		n = want;
	}
	free(groups);
	return false;
}

/* Root, the daemon's own user and, with a control group, its members (primary or supplementary). */
static bool peer_allowed(const struct ctlsock *s, uid_t uid, gid_t gid)
{
	if (uid == 0 || uid == s->uid)
		return true;
	return s->group && (gid == s->gid || user_in_group(uid, s->gid));
}

/*
 * Sends a one-line error answer without waiting (it fits an empty socket
 * buffer), then keeps fd until the client hangs up, or closes it now when
 * as many refused clients are held already.
 */
static void refuse(struct ctlsock *s, int fd, const char *why, uint64_t now)
{
	char line[ERROR_ANSWER_MAX];
	jo_answer(line, sizeof line - 1, VTL_E_BUSY, why, NULL);
	size_t len = strlen(line);
	line[len++] = '\n';
	if (send(fd, line, len, MSG_NOSIGNAL | MSG_DONTWAIT) < 0 || shutdown(fd, SHUT_WR) != 0) {
		close(fd);
		return;
	}
	for (unsigned i = 0; i < s->clients_max; i++)
		if (s->refused[i].fd < 0) {
			unsigned ms = s->deadline_ms < REFUSED_MS ? s->deadline_ms : REFUSED_MS;
			s->refused[i] = (struct refused){.fd = fd, .deadline = now + ms};
			return;
		}
	close(fd);
}

/* Discards what a refused client sends; closes it when it hangs up. */
static void refused_read(struct refused *l)
{
	char scratch[CTLSOCK_REQUEST_MAX];
	ssize_t n = read(l->fd, scratch, sizeof scratch);
	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
		close(l->fd);
		l->fd = -1;
	}
}

/* -------------------------------------------------------- the server */

static void client_close(struct client *c)
{
	close(c->fd);
	free(c->out);
	*c = (struct client){.fd = -1};
}

/* Sends what the socket takes now; closes the client when all is sent or the peer is gone. */
static void client_send(struct client *c)
{
	while (c->out_done < c->out_len) {
		ssize_t n = send(c->fd, c->out + c->out_done, c->out_len - c->out_done, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (n <= 0) {
			client_close(c);
			return;
		}
		c->out_done += (size_t)n;
	}
	client_close(c);
}

/* Runs the handler on the client's whole request and starts sending the answer. */
static void client_answer(struct ctlsock *s, struct client *c, bool too_long, uint64_t now)
{
	size_t cap = sizeof s->answer - 1; /* room for the newline */
	const char *nul = memchr(c->req, 0, c->have);
	if (too_long) {
		char why[128];
		snprintf(why, sizeof why, "request longer than %d bytes", CTLSOCK_REQUEST_MAX - 1);
		jo_answer(s->answer, cap, VTL_E_INVAL, why, NULL);
	} else if (nul) {
		/* The handler gets a C string: what follows a NUL would be dropped without a word. */
		char why[128];
		snprintf(why, sizeof why, "byte %zu of the request is NUL", (size_t)(nul - c->req));
		jo_answer(s->answer, cap, VTL_E_INVAL, why, NULL);
	} else {
		s->handler(s->arg, c->req, s->answer, cap);
	}
	size_t len = strlen(s->answer);
	s->answer[len++] = '\n';
	if (!(c->out = malloc(len))) {
		client_close(c);
		return;
	}
	memcpy(c->out, s->answer, len);
	c->out_len = len;
	c->deadline = now + s->deadline_ms;
	client_send(c);
}

/* Reads what has arrived; answers once the request is whole (a newline, or the peer's end after some bytes). */
static void client_read(struct ctlsock *s, struct client *c, uint64_t now)
{
	size_t room = sizeof c->req - 1 - c->have; /* never 0: a full buffer is answered at once */
	ssize_t n = read(c->fd, c->req + c->have, room);
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
		return;
	if (n < 0 || (n == 0 && c->have == 0)) {
		client_close(c); /* gone without a request: ctlsock_answers' probe does this */
		return;
	}
	bool too_long = false;
	if (n > 0) {
		char *nl = memchr(c->req + c->have, '\n', (size_t)n);
		c->have += (size_t)n;
		if (nl)
			c->have = (size_t)(nl - c->req);
		else if (c->have == sizeof c->req - 1)
			too_long = true;
		else
			return; /* more to come */
	}
	c->req[c->have] = 0;
	client_answer(s, c, too_long, now);
}

/* Takes a new connection: refused when its peer may not use the socket, or when all client slots are taken. */
static void accept_one(struct ctlsock *s, int fd, uint64_t now)
{
	struct ucred cred;
	socklen_t len = sizeof cred;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || len != sizeof cred) {
		log_warn("control: cannot read a client's credentials: %s", strerror(errno));
		close(fd);
		return;
	}
	char why[ERROR_ANSWER_MAX - 64];
	if (!peer_allowed(s, cred.uid, cred.gid)) {
		log_warn("control: refused uid %u (pid %d): not root, %s's user or a member of %s", (unsigned)cred.uid,
			 (int)cred.pid, s->daemon, s->group ? s->group_name : "a control_group");
		snprintf(why, sizeof why, "uid %u may not use %s's control socket: only root, its own user%s%s may",
			 (unsigned)cred.uid, s->daemon, s->group ? " and members of group " : "",
			 s->group ? s->group_name : "");
		refuse(s, fd, why, now);
		return;
	}
	for (unsigned i = 0; i < s->clients_max; i++)
		if (s->clients[i].fd < 0) {
			s->clients[i] = (struct client){.fd = fd, .deadline = now + s->deadline_ms};
			return;
		}
	log_warn("control: uid %u (pid %d) turned away: %u clients are connected already", (unsigned)cred.uid,
		 (int)cred.pid, s->clients_max);
	snprintf(why, sizeof why, "busy: %s serves %u control clients already; try again", s->daemon, s->clients_max);
	refuse(s, fd, why, now);
}

/* The poll timeout: until the next tick or the first client deadline, -1 when neither. */
static int next_timeout(const struct ctlsock *s, uint64_t now, uint64_t next_tick, uint64_t accept_at)
{
	uint64_t at = s->tick ? next_tick : UINT64_MAX;
	if (accept_at && accept_at < at)
		at = accept_at;
	for (unsigned i = 0; i < s->clients_max; i++) {
		if (s->clients[i].fd >= 0 && s->clients[i].deadline < at)
			at = s->clients[i].deadline;
		if (s->refused[i].fd >= 0 && s->refused[i].deadline < at)
			at = s->refused[i].deadline;
	}
	if (at == UINT64_MAX)
		return -1;
	return at <= now ? 0 : at - now > INT_MAX ? INT_MAX : (int)(at - now);
}

/*
 * One thread multiplexes every client with poll: a client is read only when
 * its bytes are there, so a silent one costs a slot until its deadline and
 * nothing else. The handler runs here, one request at a time.
 */
static void *run(void *arg)
{
	struct ctlsock *s = arg;
	uint64_t next_tick = vtl_mono_ms() + s->tick_ms, accept_at = 0;
	for (;;) {
		uint64_t now = vtl_mono_ms();
		struct pollfd *p = s->polls;
		p[0] = (struct pollfd){s->stop_pipe[0], POLLIN, 0};
		p[1] = (struct pollfd){accept_at ? -1 : s->fd, POLLIN, 0};
		for (unsigned i = 0; i < s->clients_max; i++) {
			struct client *c = &s->clients[i];
			p[2 + i] = (struct pollfd){c->fd, (short)(c->out ? POLLOUT : POLLIN), 0};
			p[2 + s->clients_max + i] = (struct pollfd){s->refused[i].fd, POLLIN, 0};
		}
		if (poll(p, 2 + 2 * s->clients_max, next_timeout(s, now, next_tick, accept_at)) < 0 && errno != EINTR) {
			log_error("control: poll: %s; the control socket stops answering", strerror(errno));
			break;
		}
		if (p[0].revents)
			break;
		now = vtl_mono_ms();
		/* Bytes that arrived count before deadlines: a request the handler made wait is not late. */
		for (unsigned i = 0; i < s->clients_max; i++) {
			struct client *c = &s->clients[i];
			if (c->fd < 0 || c->fd != p[2 + i].fd || !p[2 + i].revents)
				continue;
			if (c->out)
				client_send(c);
			else
				client_read(s, c, vtl_mono_ms());
		}
		for (unsigned i = 0; i < s->clients_max; i++)
			if (s->refused[i].fd >= 0 && p[2 + s->clients_max + i].revents)
				refused_read(&s->refused[i]);
		now = vtl_mono_ms();
		for (unsigned i = 0; i < s->clients_max; i++)
			if (s->clients[i].fd >= 0 && s->clients[i].deadline <= now) {
				log_debug("control: a client %s within %u ms: closed",
					  s->clients[i].out ? "did not read its answer" : "sent no whole request",
					  s->deadline_ms);
				client_close(&s->clients[i]);
			}
		for (unsigned i = 0; i < s->clients_max; i++)
			if (s->refused[i].fd >= 0 && s->refused[i].deadline <= now) {
				close(s->refused[i].fd);
				s->refused[i].fd = -1;
			}
		if (accept_at && now >= accept_at)
			accept_at = 0;
		if (p[1].revents & POLLIN) {
			for (unsigned k = 0; k <= s->clients_max; k++) {
				int fd = accept4(s->fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
				if (fd < 0) {
					if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
						log_warn("control: cannot accept: %s", strerror(errno));
						accept_at = now + ACCEPT_PAUSE_MS;
					}
					break;
				}
				accept_one(s, fd, now);
			}
		}
		if (s->tick && now >= next_tick) {
			s->tick(s->arg);
			next_tick = vtl_mono_ms() + s->tick_ms;
		}
	}
	return NULL;
}

/* ------------------------------------------------------ start and stop */

/*
 * The socket's folder: whoever can write into it can replace the socket with
 * one of their own (and read what vtlctl sends) or with a symlink, so it must
 * be ours (or root's) and writable by nobody else.
 */
static int prepare_folder(const struct ctlsock *s, char *err, size_t errlen)
{
	char dir[sizeof s->path];
	snprintf(dir, sizeof dir, "%s", s->path);
	char *slash = strrchr(dir, '/');
	if (!slash) {
		snprintf(err, errlen, "%s's control socket %s: give an absolute path", s->daemon, s->path);
		return VTL_E_CONFIG;
	}
	if (slash == dir)
		slash[1] = 0; /* the root folder */
	else
		*slash = 0;
	mode_t want = s->group ? FOLDER_MODE_GROUP : FOLDER_MODE;
	struct stat st;
	if (stat(dir, &st) != 0) {
		if (errno != ENOENT) {
			snprintf(err, errlen, "%s's control socket folder %s: %s", s->daemon, dir, strerror(errno));
			return VTL_E_IO;
		}
		/* Made without group or others' bits, then given the group, then opened to it: never wider than wanted. */
		if (mkdir(dir, FOLDER_MODE) != 0 || (s->group && chown(dir, (uid_t)-1, s->gid) != 0) ||
		    chmod(dir, want) != 0) {
			snprintf(err, errlen, "cannot make %s's control socket folder %s: %s", s->daemon, dir, strerror(errno));
			return VTL_E_IO;
		}
		log_info("control: made the folder %s (mode %04o%s%s)", dir, (unsigned)want, s->group ? ", group " : "",
			 s->group ? s->group_name : "");
		return VTL_OK;
	}
	const char *wrong = NULL;
	char why[160];
	if (!S_ISDIR(st.st_mode)) {
		wrong = "is not a folder";
	} else if (st.st_uid != 0 && st.st_uid != s->uid) {
		snprintf(why, sizeof why, "belongs to uid %u: that user could replace the socket", (unsigned)st.st_uid);
		wrong = why;
	} else if (st.st_mode & S_IWOTH) {
		wrong = "is writable by every user: any of them could replace the socket";
	} else if ((st.st_mode & S_IWGRP) && !(s->group && st.st_gid == s->gid)) {
		snprintf(why, sizeof why, "is writable by group %u: its members could replace the socket", (unsigned)st.st_gid);
		wrong = why;
	}
	if (wrong) {
		snprintf(err, errlen, "%s's control socket folder %s (mode %04o) %s; use a folder only %s can write into "
			 "(chmod %s %s) or another control_socket", s->daemon, dir, (unsigned)(st.st_mode & 07777), wrong,
			 st.st_uid == s->uid || st.st_uid == 0 ? "its owner" : "root or the daemon's user",
			 s->group ? "go-w" : "g-w,o-w", dir);
		return VTL_E_CONFIG;
	}
	return VTL_OK;
}

/*
 * Binds the listening socket with exactly the mode it keeps: the kernel
 * gives a new socket file the socket's own mode less the umask (Linux
 * unix_bind), so fchmod before bind leaves no moment where it is wider
 * than 0600 whatever the umask; the group and its bits come after.
 */
static int bind_socket(struct ctlsock *s, char *err, size_t errlen)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	memcpy(sa.sun_path, s->path, strlen(s->path) + 1);
	const char *step = NULL;
	s->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (s->fd < 0)
		step = "socket";
	else if (fchmod(s->fd, SOCKET_MODE) != 0)
		step = "fchmod";
	else if (unlink(s->path) != 0 && errno != ENOENT)
		step = "remove the stale socket";
	else if (bind(s->fd, (struct sockaddr *)&sa, sizeof sa) != 0)
		step = "bind";
	else if (s->group && chown(s->path, (uid_t)-1, s->gid) != 0)
		step = "chown";
	else if (chmod(s->path, s->group ? SOCKET_MODE_GROUP : SOCKET_MODE) != 0)
		step = "chmod";
	else if (listen(s->fd, (int)s->clients_max) != 0)
		step = "listen";
	if (!step)
		return VTL_OK;
	snprintf(err, errlen, "%s's control socket %s: %s: %s", s->daemon, s->path, step, strerror(errno));
	return VTL_E_IO;
}

static void destroy(struct ctlsock *s)
{
	if (s->fd >= 0)
		close(s->fd);
	if (s->stop_pipe[0] >= 0) {
		close(s->stop_pipe[0]);
		close(s->stop_pipe[1]);
	}
	for (unsigned i = 0; s->clients && i < s->clients_max; i++)
		if (s->clients[i].fd >= 0)
			client_close(&s->clients[i]);
	for (unsigned i = 0; s->refused && i < s->clients_max; i++)
		if (s->refused[i].fd >= 0)
			close(s->refused[i].fd);
	free(s->clients);
	free(s->refused);
	free(s->polls);
	free(s);
}

int ctlsock_start(const struct ctlsock_config *c, struct ctlsock **out, char *err, size_t errlen)
{
	const char *daemon = c->daemon ? c->daemon : "the daemon";
	if (strlen(c->path) >= sizeof(((struct sockaddr_un *)0)->sun_path)) {
		snprintf(err, errlen, "%s's control socket path %s is too long", daemon, c->path);
		return VTL_E_CONFIG;
	}
	struct ctlsock *s = calloc(1, sizeof *s);
	if (!s)
		return VTL_E_NOMEM;
	*s = (struct ctlsock){.fd = -1, .stop_pipe = {-1, -1}, .group = c->group && c->group[0], .gid = c->gid,
			      .uid = geteuid(), .handler = c->handler, .tick = c->tick, .tick_ms = c->tick_ms,
			      .arg = c->arg, .deadline_ms = c->deadline_ms ? c->deadline_ms : CTLSOCK_DEADLINE_MS,
			      .clients_max = c->clients_max ? c->clients_max : CTLSOCK_CLIENTS_MAX};
	memcpy(s->path, c->path, strlen(c->path) + 1);
	snprintf(s->daemon, sizeof s->daemon, "%s", daemon);
	snprintf(s->group_name, sizeof s->group_name, "%s", s->group ? c->group : "");
	s->clients = calloc(s->clients_max, sizeof *s->clients);
	s->refused = calloc(s->clients_max, sizeof *s->refused);
	s->polls = calloc(2 + 2 * (size_t)s->clients_max, sizeof *s->polls);
	if (!s->clients || !s->refused || !s->polls) {
		destroy(s);
		return VTL_E_NOMEM;
	}
	for (unsigned i = 0; i < s->clients_max; i++)
		s->clients[i].fd = s->refused[i].fd = -1;
	int rc = prepare_folder(s, err, errlen);
	/* A socket file nobody answers on is left from a crash: take it over. One that answers is another daemon. */
	if (rc == VTL_OK && ctlsock_answers(c->path)) {
		snprintf(err, errlen, "another daemon answers on %s", c->path);
		rc = VTL_E_BUSY;
	}
	if (rc == VTL_OK)
		rc = bind_socket(s, err, errlen);
	if (rc == VTL_OK && (pipe2(s->stop_pipe, O_CLOEXEC) != 0 || pthread_create(&s->thread, NULL, run, s) != 0)) {
		snprintf(err, errlen, "%s's control socket %s: %s", daemon, c->path, strerror(errno));
		rc = VTL_E_IO;
	}
	if (rc != VTL_OK) {
		if (s->fd >= 0)
			unlink(s->path);
		destroy(s);
		return rc;
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
	unlink(s->path);
	destroy(s);
}
