/* SPDX-License-Identifier: Apache-2.0 */
#include "vtl/iscsi/target.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"
#include "common/vtl_error.h"

#define READ_CHUNK (256u << 10)   /* bytes read from a socket at a time */
#define LOGIN_MAX_DATA 8192        /* text a login PDU may carry (RFC 7143 13.12: the login-phase default) */
#define MAX_EVENTS 64
#define LISTEN_BACKLOG 16
#define TICK_MS 1000               /* how often idle connections are looked at for keepalives */

static time_t now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec;
}

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}
#define DIRECT_SEND_MIN (64u << 10) /* data segments this large are written from where they are, not copied */
#define SEND_IOV_MAX 8              /* pieces of one PDU written with one writev (pending output first) */

enum phase { PH_LOGIN, PH_FFP };

struct conn {
	struct iscsi_target *t;
	int fd;
	enum phase phase;
	struct pdu_reader rd;
	struct iscsi_login login;
	struct iscsi_params params;
	struct session *sess;
	uint8_t *out;               /* bytes waiting to be written */
	size_t out_len, out_off, out_cap;
	bool want_out;              /* EPOLLOUT armed */
	bool want_close;            /* close once out is written */
	bool dead;                  /* socket closed; freed when no command is with a unit */
	unsigned in_flight;
	char peer[ISCSI_PORTAL_MAX], local[ISCSI_PORTAL_MAX];
	time_t last_rx;             /* when the initiator last sent something (CLOCK_MONOTONIC seconds) */
	time_t ping_at;             /* when the unanswered keepalive went out */
	int64_t held_until;         /* a failed authentication's answer waits until then (now_ms); 0: not held */
	struct conn *next;
};

/* A command with a unit's worker. */
struct job {
	struct lu_work w;
	struct conn *c;
	struct session_task *task;
	struct job *next;
};

struct iscsi_target {
	struct iscsi_target_opts o;
	struct session_lu *lus;
	struct lu_worker **workers;
	int lfd, epfd, evfd;
	unsigned port;
	pthread_t thread;
	pthread_mutex_t mu;         /* done list and stopping */
	struct job *done_head, *done_tail;
	bool stopping;
	struct conn *conns;
	uint16_t next_tsih;
	uint32_t next_statsn;
};

/* ------------------------------------------------------------------ output */

static bool out_reserve(struct conn *c, size_t more)
{
	if (c->out_len + more <= c->out_cap)
		return true;
	if (c->out_off) {
		memmove(c->out, c->out + c->out_off, c->out_len - c->out_off);
		c->out_len -= c->out_off;
		c->out_off = 0;
		if (c->out_len + more <= c->out_cap)
			return true;
	}
	size_t cap = c->out_cap ? c->out_cap : 65536;
	while (cap < c->out_len + more)
		cap *= 2;
	uint8_t *p = realloc(c->out, cap);
	if (!p)
		return false;
	c->out = p;
	c->out_cap = cap;
	return true;
}

static void out_put(struct conn *c, const void *p, size_t n)
{
	if (!n || !out_reserve(c, n)) {
		if (n)
			c->want_close = true; /* out of memory: the connection cannot go on */
		return;
	}
	memcpy(c->out + c->out_len, p, n);
	c->out_len += n;
}

static void conn_kill(struct conn *c);

static void arm(struct conn *c, bool out)
{
	if (c->dead || c->want_out == out)
		return;
	struct epoll_event ev = {.events = EPOLLIN | (out ? EPOLLOUT : 0), .data.ptr = c};
	epoll_ctl(c->t->epfd, EPOLL_CTL_MOD, c->fd, &ev);
	c->want_out = out;
}

static void flush(struct conn *c)
{
	if (c->held_until)
		return; /* released by release_held() */
	while (!c->dead && c->out_off < c->out_len) {
		ssize_t n = write(c->fd, c->out + c->out_off, c->out_len - c->out_off);
		if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
			arm(c, true);
			return;
		}
		if (n <= 0) {
			conn_kill(c);
			return;
		}
		c->out_off += (size_t)n;
	}
	if (c->dead)
		return;
	c->out_off = c->out_len = 0;
	arm(c, false);
	if (c->want_close)
		conn_kill(c);
}

/*
 * Writes pending output, then the pieces of one PDU, with one writev; what
 * the socket does not take now is copied into out for flush() (which also
 * meets any error again and ends the connection: this may not, since the
 * session that called is still running).
 */
static void send_direct(struct conn *c, const struct iovec *pieces, int n)
{
	struct iovec v[SEND_IOV_MAX + 1];
	int cnt = 0;
	size_t pending = c->out_len - c->out_off;
	if (pending)
		v[cnt++] = (struct iovec){c->out + c->out_off, pending};
	for (int i = 0; i < n; i++)
		v[cnt++] = pieces[i];
	ssize_t w = writev(c->fd, v, cnt);
	size_t done = w > 0 ? (size_t)w : 0;
	size_t from_out = done < pending ? done : pending;
	c->out_off += from_out;
	done -= from_out;
	if (c->out_off == c->out_len)
		c->out_off = c->out_len = 0;
	for (int i = 0; i < n; i++) {
		size_t skip = done < pieces[i].iov_len ? done : pieces[i].iov_len;
		done -= skip;
		out_put(c, (const uint8_t *)pieces[i].iov_base + skip, pieces[i].iov_len - skip);
	}
}

/*
 * Lays out a PDU (header, data pieces, padding, digests as negotiated) for
 * sending. A large data segment (a Data-In of a tape block) goes to the
 * socket straight from the task's buffer rather than through out: copying
 * every byte read into out cost about 0.09 CPU-s per GiB (docs/benchmarks.md).
 */
static void send_pdu(struct conn *c, struct iscsi_pdu *p, const struct iovec *data, int niov)
{
	bool ffp = c->phase == PH_FFP;
	uint8_t hdr[ISCSI_HDR_MAX];
	size_t hl = pdu_header(p, ffp && c->params.header_digest, hdr);
	uint32_t crc = 0;
	size_t bytes = 0;
	for (int i = 0; i < niov; i++) {
		bytes += data[i].iov_len;
		if (ffp && c->params.data_digest)
			crc = pdu_crc(crc, data[i].iov_base, data[i].iov_len);
	}
	uint8_t trailer[ISCSI_TRAILER_MAX];
	size_t tl = pdu_trailer(crc, p->data_len, ffp && c->params.data_digest, trailer);
	if (bytes >= DIRECT_SEND_MIN && niov + 2 <= SEND_IOV_MAX && !c->dead) {
		struct iovec pieces[SEND_IOV_MAX];
		int n = 0;
		pieces[n++] = (struct iovec){hdr, hl};
		for (int i = 0; i < niov; i++)
			pieces[n++] = data[i];
		pieces[n++] = (struct iovec){trailer, tl};
		send_direct(c, pieces, n);
		return;
	}
	out_put(c, hdr, hl);
	for (int i = 0; i < niov; i++)
		out_put(c, data[i].iov_base, data[i].iov_len);
	out_put(c, trailer, tl);
}

/* ---------------------------------------------------------- session hooks */

static void io_send(void *arg, struct iscsi_pdu *pdu, const struct iovec *data, int niov)
{
	send_pdu(arg, pdu, data, niov);
}

static void job_done(struct lu_work *w)
{
	struct job *j = w->owner;
	struct iscsi_target *t = j->c->t;
	pthread_mutex_lock(&t->mu);
	j->next = NULL;
	if (t->done_tail)
		t->done_tail->next = j;
	else
		t->done_head = j;
	t->done_tail = j;
	pthread_mutex_unlock(&t->mu);
	uint64_t one = 1;
	if (write(t->evfd, &one, sizeof one) != sizeof one)
		log_error("iscsi: cannot wake the event loop");
}

static void io_submit(void *arg, struct session_task *task)
{
	struct conn *c = arg;
	struct iscsi_target *t = c->t;
	struct job *j = calloc(1, sizeof *j);
	unsigned i = 0;
	while (i < t->o.n_lus && t->lus[i].dev != task->lu->dev)
		i++;
	if (!j || i == t->o.n_lus) {
		free(j);
		scsi_fail(&task->cmd, sense_of(SK_HARDWARE_ERROR, ASC_INTERNAL_TARGET_FAILURE));
		session_complete(c->sess, task);
		return;
	}
	j->c = c;
	j->task = task;
	j->w.cmd = &task->cmd;
	j->w.done = job_done;
	j->w.owner = j;
	c->in_flight++;
	lu_worker_submit(t->workers[i], &j->w);
}

static void io_close(void *arg)
{
	struct conn *c = arg;
	c->want_close = true;
}

static size_t io_text(void *arg, const uint8_t *keys, size_t len, uint8_t *out, size_t cap)
{
	struct conn *c = arg;
	struct iscsi_text_buf b;
	memset(&b, 0, sizeof b);
	size_t n = 0;
	if (iscsi_text_respond(&c->t->o.login, &c->params, keys, len, c->local, &b) == 0) {
		n = b.len < cap ? b.len : cap;
		memcpy(out, b.data, n);
	}
	iscsi_text_buf_free(&b);
	return n;
}

/* --------------------------------------------------------------- connections */

static void conn_free(struct conn *c)
{
	struct iscsi_target *t = c->t;
	for (struct conn **pp = &t->conns; *pp; pp = &(*pp)->next)
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	session_destroy(c->sess);
	iscsi_login_free(&c->login);
	pdu_reader_free(&c->rd);
	free(c->out);
	free(c);
}

static void conn_kill(struct conn *c)
{
	if (c->dead)
		return;
	c->dead = true;
	epoll_ctl(c->t->epfd, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	log_info("iscsi: %s disconnected", c->peer);
	if (!c->in_flight)
		conn_free(c);
}

/* The I_T nexus of a session: the same initiator port (name and ISID) is the same nexus after a reconnect. */
static uint64_t nexus_of(const struct iscsi_params *p)
{
	uint64_t h = 14695981039346656037ull;
	for (const char *s = p->initiator_name; *s; s++)
		h = (h ^ (uint8_t)*s) * 1099511628211ull;
	for (int i = 0; i < ISCSI_ISID_LEN; i++)
		h = (h ^ p->isid[i]) * 1099511628211ull;
	return h;
}

static void login_done(struct conn *c)
{
	struct iscsi_target *t = c->t;
	c->params = c->login.params;
	c->phase = PH_FFP;
	c->rd.header_digest = c->params.header_digest;
	c->rd.data_digest = c->params.data_digest;
	c->rd.max_data = c->params.target_max_recv;
	struct session_params sp = {
		.max_recv_data = c->params.target_max_recv, .max_send_data = c->params.initiator_max_recv,
		.max_burst = c->params.max_burst, .first_burst = c->params.first_burst,
		.initial_r2t = c->params.initial_r2t, .immediate_data = c->params.immediate_data,
		.exp_cmd_sn = c->params.exp_cmdsn, .stat_sn = c->params.statsn,
	};
	struct session_io io = {.send = io_send, .submit = io_submit, .close = io_close, .text = io_text, .arg = c};
	bool normal = c->params.session_type == ISCSI_SESSION_NORMAL;
	if (session_create(&sp, t->lus, normal ? t->o.n_lus : 0, nexus_of(&c->params), &io, &c->sess) != VTL_OK) {
		c->want_close = true;
		return;
	}
	log_info("iscsi: %s logged in: %s session of %s%s%s", c->peer, normal ? "normal" : "discovery",
		 c->params.initiator_name, c->params.header_digest ? ", header digest" : "",
		 c->params.data_digest ? ", data digest" : "");
}

/*
 * A failed authentication is answered only after auth_fail_delay, so that
 * guessing secrets goes at one try per delay and connection. The response
 * waits in out, the socket is not read meanwhile (nothing it sends matters
 * now), and the event loop goes on serving everyone else.
 */
static void hold(struct conn *c)
{
	struct epoll_event ev = {.events = 0, .data.ptr = c};
	if (epoll_ctl(c->t->epfd, EPOLL_CTL_MOD, c->fd, &ev) != 0)
		log_warn("iscsi: %s: epoll: %s (its input is read and dropped until the answer)", c->peer, strerror(errno));
	c->want_out = false;
	c->held_until = now_ms() + (int64_t)c->t->o.auth_fail_delay * 1000;
}

/* Sends the answers held by hold() whose time has come (and so closes those connections). */
static void release_held(struct iscsi_target *t)
{
	int64_t now = now_ms();
	for (struct conn *c = t->conns, *next; c; c = next) {
		next = c->next;
		if (!c->dead && c->held_until && now >= c->held_until) {
			c->held_until = 0;
			flush(c);
		}
	}
}

static void handle_pdu(struct conn *c, const struct iscsi_pdu *pdu)
{
	if (c->phase == PH_FFP) {
		session_receive(c->sess, pdu);
		return;
	}
	struct iscsi_pdu rsp;
	memset(&rsp, 0, sizeof rsp);
	enum iscsi_login_result r = iscsi_login_step(&c->login, pdu, &rsp);
	struct iovec iov = {rsp.data, rsp.data_len};
	send_pdu(c, &rsp, &iov, rsp.data_len ? 1 : 0);
	if (r == ISCSI_LOGIN_DONE) {
		login_done(c);
	} else if (r == ISCSI_LOGIN_FAILED) {
		log_warn("iscsi: %s: login refused: %s (%s)", c->peer, iscsi_login_status_str(c->login.status),
			 c->login.reason ? c->login.reason : "");
		c->want_close = true;
		if (c->login.status == LOGIN_AUTH_FAILED && c->t->o.auth_fail_delay)
			hold(c);
	}
}

static void conn_read(struct conn *c)
{
	static uint8_t buf[READ_CHUNK];
	ssize_t n = read(c->fd, buf, sizeof buf);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		conn_kill(c);
		return;
	}
	c->last_rx = now_s();
	for (size_t off = 0; off < (size_t)n && !c->dead && !c->want_close;) {
		size_t used = 0;
		struct iscsi_pdu pdu;
		enum pdu_error e = pdu_reader_feed(&c->rd, buf + off, (size_t)n - off, &used, &pdu);
		off += used;
		if (e == PDU_OK) {
			handle_pdu(c, &pdu);
		} else if (e == PDU_BAD_DATA_DIGEST && c->phase == PH_FFP) {
			/* The header is sound: Reject that PDU and go on (RFC 7143 7.8, 11.17). */
			log_warn("iscsi: %s: data digest error (opcode 0x%02x, ITT 0x%08x): rejected", c->peer,
				 (unsigned)pdu_opcode(&pdu), (unsigned)pdu_itt(&pdu));
			session_data_digest_error(c->sess, &pdu);
		} else if (e == PDU_TOO_LONG && c->phase == PH_FFP) {
			/* The header is sound: say why in a Reject, then close, since its data cannot be skipped safely. */
			log_warn("iscsi: %s: a data segment above MaxRecvDataSegmentLength (opcode 0x%02x, ITT 0x%08x); "
				 "rejecting and closing", c->peer, (unsigned)pdu_opcode(&pdu), (unsigned)pdu_itt(&pdu));
			session_protocol_error(c->sess, &pdu);
		} else if (e == PDU_BAD_HEADER_DIGEST) {
			/* Where the next PDU starts is unknown: only a new connection can resynchronise (RFC 7143 7.8). */
			log_warn("iscsi: %s: header digest error; closing the connection", c->peer);
			conn_kill(c);
			return;
		} else if (e != PDU_NEED_MORE) {
			/* A header that cannot be trusted, or a PDU larger than declared: the stream is lost. */
			log_warn("iscsi: %s: malformed stream (%d); closing", c->peer, (int)e);
			conn_kill(c);
			return;
		}
	}
	flush(c);
}

static void accept_all(struct iscsi_target *t)
{
	for (;;) {
		struct sockaddr_storage peer, local;
		socklen_t pl = sizeof peer, ll = sizeof local;
		int fd = accept4(t->lfd, (struct sockaddr *)&peer, &pl, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0)
			return;
		struct conn *c = calloc(1, sizeof *c);
		if (!c) {
			close(fd);
			continue;
		}
		int one = 1;
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
		c->t = t;
		c->fd = fd;
		c->last_rx = now_s();
		getsockname(fd, (struct sockaddr *)&local, &ll);
		iscsi_portal_format((struct sockaddr *)&peer, c->peer, sizeof c->peer);
		iscsi_portal_format((struct sockaddr *)&local, c->local, sizeof c->local);
		pdu_reader_init(&c->rd, LOGIN_MAX_DATA);
		if (++t->next_tsih == 0)
			t->next_tsih = 1;
		iscsi_login_init(&c->login, &t->o.login, t->next_tsih, t->next_statsn++);
		struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};
		if (epoll_ctl(t->epfd, EPOLL_CTL_ADD, fd, &ev) != 0) {
			pdu_reader_free(&c->rd);
			iscsi_login_free(&c->login);
			close(fd);
			free(c);
			continue;
		}
		c->next = t->conns;
		t->conns = c;
		log_info("iscsi: connection from %s to %s", c->peer, c->local);
	}
}

/*
 * Keepalives (RFC 7143 11.19): a connection silent for nop_interval gets a
 * NOP-In it must answer; one that leaves it unanswered as long is dead
 * (its host crashed or the network went away) and is closed, which releases
 * what its nexus held.
 */
static void keepalives(struct iscsi_target *t)
{
	if (!t->o.nop_interval)
		return;
	time_t now = now_s();
	for (struct conn *c = t->conns, *next; c; c = next) {
		next = c->next;
		if (c->dead || c->phase != PH_FFP || !c->sess)
			continue;
		if (session_ping_outstanding(c->sess)) {
			if (now - c->ping_at >= (time_t)t->o.nop_interval && !c->in_flight) {
				log_warn("iscsi: %s does not answer NOP-In; closing the connection", c->peer);
				conn_kill(c);
			}
		} else if (now - c->last_rx >= (time_t)t->o.nop_interval) {
			session_ping(c->sess);
			c->ping_at = now;
			flush(c);
		}
	}
}

/* Hands finished commands back to their sessions (or drops them for connections that are gone). */
static void completions(struct iscsi_target *t)
{
	uint64_t v;
	if (read(t->evfd, &v, sizeof v) < 0 && errno != EAGAIN)
		log_warn("iscsi: eventfd: %s", strerror(errno));
	pthread_mutex_lock(&t->mu);
	struct job *j = t->done_head;
	t->done_head = t->done_tail = NULL;
	pthread_mutex_unlock(&t->mu);
	while (j) {
		struct job *next = j->next;
		struct conn *c = j->c;
		c->in_flight--;
		if (!c->dead) {
			session_complete(c->sess, j->task);
			flush(c);
		} else if (!c->in_flight) {
			conn_free(c);
		}
		free(j);
		j = next;
	}
}

static void *loop(void *arg)
{
	struct iscsi_target *t = arg;
	struct epoll_event evs[MAX_EVENTS];
	for (;;) {
		pthread_mutex_lock(&t->mu);
		bool stopping = t->stopping;
		pthread_mutex_unlock(&t->mu);
		if (stopping) {
			/* Close every connection; wait for the commands units are still running. */
			for (struct conn *c = t->conns, *next; c; c = next) {
				next = c->next;
				conn_kill(c);
			}
			if (!t->conns)
				break;
		}
		int n = epoll_wait(t->epfd, evs, MAX_EVENTS, stopping ? 100 : TICK_MS);
		for (int i = 0; i < n; i++) {
			void *p = evs[i].data.ptr;
			if (p == &t->lfd) {
				accept_all(t);
			} else if (p == &t->evfd) {
				completions(t);
			} else {
				struct conn *c = p;
				if (evs[i].events & (EPOLLERR | EPOLLHUP))
					conn_kill(c);
				else if (evs[i].events & EPOLLOUT)
					flush(c);
				else if (evs[i].events & EPOLLIN)
					conn_read(c);
			}
		}
		keepalives(t);
		release_held(t);
	}
	return NULL;
}

/* ------------------------------------------------------------------ setup */

static int listen_on(struct iscsi_target *t, const char *host, unsigned port, char *err, size_t errlen)
{
	struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE};
	struct addrinfo *ai;
	char ps[8];
	snprintf(ps, sizeof ps, "%u", port);
	int rc = getaddrinfo(host && *host ? host : NULL, ps, &hints, &ai);
	if (rc != 0) {
		snprintf(err, errlen, "listen address %s: %s", host, gai_strerror(rc));
		return VTL_E_CONFIG;
	}
	t->lfd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	int one = 1;
	if (t->lfd >= 0)
		setsockopt(t->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (t->lfd < 0 || bind(t->lfd, ai->ai_addr, ai->ai_addrlen) != 0 || listen(t->lfd, LISTEN_BACKLOG) != 0) {
		snprintf(err, errlen, "cannot listen on %s:%u: %s", host, port, strerror(errno));
		freeaddrinfo(ai);
		return VTL_E_IO;
	}
	freeaddrinfo(ai);
	struct sockaddr_storage sa;
	socklen_t sl = sizeof sa;
	getsockname(t->lfd, (struct sockaddr *)&sa, &sl);
	t->port = ntohs(sa.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&sa)->sin6_port
						  : ((struct sockaddr_in *)&sa)->sin_port);
	return VTL_OK;
}

int iscsi_target_start(const struct iscsi_target_opts *o, struct iscsi_target **out, char *err, size_t errlen)
{
	struct iscsi_target *t = calloc(1, sizeof *t);
	if (!t)
		return VTL_E_NOMEM;
	t->o = *o;
	t->lfd = t->epfd = t->evfd = -1;
	t->next_statsn = 1;
	pthread_mutex_init(&t->mu, NULL);
	t->lus = calloc(o->n_lus ? o->n_lus : 1, sizeof *t->lus);
	t->workers = calloc(o->n_lus ? o->n_lus : 1, sizeof *t->workers);
	int rc = VTL_E_NOMEM;
	if (!t->lus || !t->workers)
		goto fail;
	memcpy(t->lus, o->lus, o->n_lus * sizeof *t->lus);
	memcpy(t->workers, o->workers, o->n_lus * sizeof *t->workers);
	if ((rc = listen_on(t, o->listen, o->port, err, errlen)) != VTL_OK)
		goto fail;
	rc = VTL_E_IO;
	t->epfd = epoll_create1(EPOLL_CLOEXEC);
	t->evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	struct epoll_event le = {.events = EPOLLIN, .data.ptr = &t->lfd};
	struct epoll_event ee = {.events = EPOLLIN, .data.ptr = &t->evfd};
	if (t->epfd < 0 || t->evfd < 0 || epoll_ctl(t->epfd, EPOLL_CTL_ADD, t->lfd, &le) != 0 ||
	    epoll_ctl(t->epfd, EPOLL_CTL_ADD, t->evfd, &ee) != 0 || pthread_create(&t->thread, NULL, loop, t) != 0) {
		snprintf(err, errlen, "iscsi: cannot start the event loop: %s", strerror(errno));
		goto fail;
	}
	*out = t;
	return VTL_OK;
fail:
	if (t->lfd >= 0)
		close(t->lfd);
	if (t->epfd >= 0)
		close(t->epfd);
	if (t->evfd >= 0)
		close(t->evfd);
	free(t->lus);
	free(t->workers);
	pthread_mutex_destroy(&t->mu);
	free(t);
	return rc;
}

unsigned iscsi_target_port(const struct iscsi_target *t)
{
	return t->port;
}

void iscsi_target_stop(struct iscsi_target *t)
{
	if (!t)
		return;
	pthread_mutex_lock(&t->mu);
	t->stopping = true;
	pthread_mutex_unlock(&t->mu);
	uint64_t one = 1;
	if (write(t->evfd, &one, sizeof one) != sizeof one)
		log_error("iscsi: cannot wake the event loop to stop it");
	pthread_join(t->thread, NULL);
	close(t->lfd);
	close(t->epfd);
	close(t->evfd);
	free(t->lus);
	free(t->workers);
	pthread_mutex_destroy(&t->mu);
	free(t);
}
