/* SPDX-License-Identifier: Apache-2.0 */
#include "vtl/iscsi/target.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
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

#include "common/clock.h"
#include "common/log.h"
#include "common/vtl_error.h"

#define READ_CHUNK (256u << 10)   /* bytes read from a socket at a time */
#define READ_IN_PLACE_MIN 4096u   /* below a page of data left, one copy costs less than a read of its own */
#define LOGIN_MAX_DATA 8192        /* text a login PDU may carry (RFC 7143 13.12: the login-phase default) */
#define MAX_EVENTS 64
#define LISTEN_BACKLOG SOMAXCONN   /* the kernel's queue of connections not yet accepted; limits are ours */
#define TICK_MS 1000               /* how often idle connections are looked at for keepalives */
#define PUBLISH_MS 250             /* how often the sessions are published for iscsi_target_sessions, at most */
#define SPARES_IDLE_S 2            /* a session idle this long gives its spare buffers back */
#define NEXUS_MAX 4096             /* initiator ports remembered (their nexus ids outlive their sessions) */
#define NEXUS_BASE 0x1000000000000000ull /* iSCSI nexus ids: base + n, apart from TCMU's (vtl/tcmu/front.h) */
#define EMFILE_LOG_S 10            /* at most one "out of descriptors" line per this many seconds */

#define DIRECT_SEND_MIN (64u << 10) /* data segments this large are written from where they are, not copied */
#define SEND_IOV_MAX 8              /* pieces of one PDU written with one writev (pending output first) */

enum phase { PH_LOGIN, PH_FFP };

/*
 * An initiator port that logged in: the exact (InitiatorName, ISID) is the
 * I_T nexus (RFC 7143 4.4.1, SAM-5), so its id stays the same across its
 * sessions (a host that reconnects keeps its registrations) and differs
 * for any other name or ISID, whatever a hash of them would say.
 */
struct nexus {
	char name[ISCSI_NAME_MAX + 1];
	uint8_t isid[ISCSI_ISID_LEN];
	uint64_t id;
	struct scsi_tid tid;
};

struct conn {
	struct iscsi_target *t;
	int fd;
	enum phase phase;
	time_t accepted_at;         /* CLOCK_MONOTONIC seconds */
	char host[ISCSI_PORTAL_MAX]; /* the peer's address without the port: what per-address limits count */
	uint32_t events;            /* what epoll waits for on fd */
	bool throttled;             /* output over output_max: not read until it drains */
	/*
	 * Session reinstatement (RFC 7143 6.3.5): a login whose nexus has a
	 * live session waits, its final response held, until the old session's
	 * commands have ended and its nexus loss reached the units.
	 */
	bool waiting;
	struct iscsi_pdu held_rsp;
	struct conn *predecessor, *successor;
	const struct nexus *nexus;
	struct pdu_reader rd;
	bool big_data;              /* its last PDU's data was worth reading in place: read the next header alone */
	struct iscsi_login login;
	struct iscsi_params params;
	struct session *sess;
	uint8_t *out;               /* bytes waiting to be written */
	size_t out_len, out_off, out_cap;
	bool want_close;            /* close once out is written */
	bool dead;                  /* socket closed; freed when no command is with a unit */
	unsigned in_flight;
	uint64_t commands, data_in, data_out; /* finished commands and their data, for iscsi_target_sessions */
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
	struct vtl_lu *lus;
	int lfd, epfd, evfd;
	unsigned port;
	pthread_t thread;
	pthread_mutex_t mu;         /* done list, stopping, auth and auth_pending */
	pthread_cond_t auth_applied; /* auth_pending went false */
	struct job *done_head, *done_tail;
	bool stopping;
	struct iscsi_auth auth;     /* credentials a reload handed over, for the loop to apply */
	bool auth_pending;
	struct conn *conns;         /* newest first */
	struct conn *graveyard;     /* ended, freed after the events of this turn of the loop (they may name them) */
	uint16_t next_tsih;
	uint32_t next_statsn;
	struct iscsi_limits lim;
	struct session_budget budget;
	struct nexus **nexus;
	unsigned n_nexus;
	uint64_t next_nexus;
	int spare_fd;               /* held so that, out of descriptors, a connection can still be accepted and closed */
	bool accept_paused;
	time_t emfile_logged;
	uint8_t rbuf[READ_CHUNK];   /* the event loop's socket reads: one thread per target, one buffer each */
	/* The sessions as the loop last saw them, for readers on other threads (a leaf lock, held to copy). */
	pthread_mutex_t snap_mu;
	struct iscsi_session_info *snap; /* lim.max_sessions of them */
	unsigned n_snap;
	uint64_t published_ms;           /* when they last were (the loop's alone) */
};

void iscsi_limits_default(struct iscsi_limits *l)
{
	if (!l->login_timeout)
		l->login_timeout = ISCSI_LOGIN_TIMEOUT;
	if (!l->max_logins)
		l->max_logins = ISCSI_MAX_LOGINS;
	if (!l->max_logins_per_address)
		l->max_logins_per_address = ISCSI_MAX_LOGINS_PER_ADDRESS;
	if (!l->max_sessions)
		l->max_sessions = ISCSI_MAX_SESSIONS;
	if (!l->max_sessions_per_address)
		l->max_sessions_per_address = ISCSI_MAX_SESSIONS_PER_ADDRESS;
	if (!l->output_max)
		l->output_max = ISCSI_OUTPUT_MAX;
	if (!l->cmd_window || l->cmd_window > SESSION_CMD_WINDOW_MAX)
		l->cmd_window = SESSION_CMD_WINDOW;
	if (!l->ping_data_max)
		l->ping_data_max = SESSION_PING_DATA;
	if (!l->session_buffer_max)
		l->session_buffer_max = SESSION_BUFFER_MAX;
	if (!l->buffer_max)
		l->buffer_max = ISCSI_BUFFER_MAX;
}

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

/*
 * Sets what epoll waits for: output while some is pending; input unless
 * the pending output is over output_max (a host that does not read what it
 * asked for is not read either, until it has taken half of it) or a
 * reinstating login waits; neither while a refusal is held (hold()).
 * Errors and hang-ups are always reported.
 */
static void arm(struct conn *c)
{
	if (c->dead)
		return;
	size_t pending = c->out_len - c->out_off;
	if (pending > c->t->lim.output_max)
		c->throttled = true;
	else if (pending <= c->t->lim.output_max / 2)
		c->throttled = false;
	bool held = c->held_until != 0; /* a failed authentication's answer waits: nothing in or out */
	uint32_t ev = (c->throttled || c->waiting || held ? 0 : EPOLLIN) | (pending && !held ? EPOLLOUT : 0);
	if (ev == c->events)
		return;
	struct epoll_event e = {.events = ev, .data.ptr = c};
	if (epoll_ctl(c->t->epfd, EPOLL_CTL_MOD, c->fd, &e) != 0) {
		log_warn("iscsi: %s: epoll: %s; closing", c->peer, strerror(errno));
		conn_kill(c);
		return;
	}
	c->events = ev;
}

static void flush(struct conn *c)
{
	if (c->held_until)
		return; /* released by release_held() */
	while (!c->dead && c->out_off < c->out_len) {
		ssize_t n = write(c->fd, c->out + c->out_off, c->out_len - c->out_off);
		if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
			arm(c);
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
	arm(c);
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
	/*
	 * Only the completion that finds the list empty wakes the loop: the one
	 * that made it non-empty already did, and completions() takes the whole
	 * list under mu after reading the eventfd, so a job added meanwhile is
	 * taken with the rest or, once the list is taken, wakes it afresh.
	 */
	bool wake = !t->done_head;
	if (t->done_tail)
		t->done_tail->next = j;
	else
		t->done_head = j;
	t->done_tail = j;
	pthread_mutex_unlock(&t->mu);
	uint64_t one = 1;
	if (wake && write(t->evfd, &one, sizeof one) != sizeof one)
		log_error("iscsi: cannot wake the event loop");
}

static void io_submit(void *arg, struct session_task *task)
{
	struct conn *c = arg;
	struct job *j = calloc(1, sizeof *j);
	if (!j || !task->lu->worker) {
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
	lu_worker_submit(task->lu->worker, &j->w);
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

static void login_resume(struct conn *c);

static void conn_free(struct conn *c)
{
	struct iscsi_target *t = c->t;
	for (struct conn **pp = &t->conns; *pp; pp = &(*pp)->next)
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	/* The session's end is its nexus loss for the units: SPC-2 reservations and prevents go. */
	session_destroy(c->sess);
	c->sess = NULL;
	struct conn *next = c->successor;
	if (c->predecessor)
		c->predecessor->successor = NULL;
	c->successor = c->predecessor = NULL;
	c->next = t->graveyard;
	t->graveyard = c;
	if (next) {
		/* The session it reinstates is gone, nexus loss included: the new one may begin. */
		next->predecessor = NULL;
		login_resume(next);
	}
}

/* Frees the connections that ended during this turn of the loop. */
static void bury(struct iscsi_target *t)
{
	while (t->graveyard) {
		struct conn *c = t->graveyard;
		t->graveyard = c->next;
		iscsi_login_free(&c->login);
		pdu_reader_free(&c->rd);
		free(c->out);
		free(c);
	}
}

static void conn_kill(struct conn *c)
{
	if (c->dead)
		return;
	c->dead = true;
	if (epoll_ctl(c->t->epfd, EPOLL_CTL_DEL, c->fd, NULL) != 0)
		log_warn("iscsi: %s: epoll: %s", c->peer, strerror(errno));
	close(c->fd);
	log_info("iscsi: %s disconnected", c->peer);
	if (!c->in_flight)
		conn_free(c);
}

/* The TransportID of an iSCSI initiator port (SPC-4 7.6.4.6, format 01b): "name,i,0xISID", NUL, padded to 4. */
#define TID_ISCSI_PORT 0x45        /* FORMAT CODE 01b (bits 7..6), PROTOCOL IDENTIFIER 5h (iSCSI) */
#define TID_ISCSI_NAME_AT 4
static void nexus_tid(struct nexus *n)
{
	char text[ISCSI_NAME_MAX + 32];
	int len = snprintf(text, sizeof text, "%s,i,0x%02x%02x%02x%02x%02x%02x", n->name, n->isid[0], n->isid[1],
			   n->isid[2], n->isid[3], n->isid[4], n->isid[5]);
	size_t body = pdu_padded((uint32_t)len + 1); /* the NUL, then padding to a multiple of 4 */
	_Static_assert(TID_ISCSI_NAME_AT + ISCSI_NAME_MAX + 18 + ISCSI_PAD <= SCSI_TID_MAX, "an iSCSI TransportID fits");
	memset(&n->tid, 0, sizeof n->tid);
	n->tid.id[0] = TID_ISCSI_PORT;
	pdu_put(n->tid.id + 2, (uint32_t)body, 2); /* ADDITIONAL LENGTH: the bytes after the first four */
	memcpy(n->tid.id + TID_ISCSI_NAME_AT, text, (size_t)len);
	n->tid.len = (uint16_t)(TID_ISCSI_NAME_AT + body);
}

/* Whether a live session (or a login waiting to reinstate one) belongs to nexus n. */
static bool nexus_in_use(const struct iscsi_target *t, const struct nexus *n)
{
	for (const struct conn *c = t->conns; c; c = c->next)
		if (c->nexus == n)
			return true;
	return false;
}

/*
 * The nexus of an initiator port, the same one for every session of the
 * same exact name and ISID; NULL when NEXUS_MAX ports are remembered and
 * all of them have a session. A forgotten port that comes back gets a new
 * id (ids are never reused), so nothing of another port reaches it.
 */
static const struct nexus *nexus_of(struct iscsi_target *t, const struct iscsi_params *p)
{
	for (unsigned i = 0; i < t->n_nexus; i++)
		if (!strcmp(t->nexus[i]->name, p->initiator_name) && !memcmp(t->nexus[i]->isid, p->isid, ISCSI_ISID_LEN))
			return t->nexus[i];
	struct nexus *n = NULL;
	if (t->n_nexus < NEXUS_MAX) {
		if (!(n = calloc(1, sizeof *n)))
			return NULL;
		t->nexus[t->n_nexus++] = n;
	} else {
		for (unsigned i = 0; i < t->n_nexus && !n; i++)
			if (!nexus_in_use(t, t->nexus[i]))
				n = t->nexus[i];
		if (!n)
			return NULL;
	}
	snprintf(n->name, sizeof n->name, "%s", p->initiator_name);
	memcpy(n->isid, p->isid, ISCSI_ISID_LEN);
	n->id = NEXUS_BASE + ++t->next_nexus;
	nexus_tid(n);
	return n;
}

/* The live session of nexus n and session type, other than c's own; NULL when none. */
static struct conn *session_of(struct iscsi_target *t, const struct nexus *n, enum iscsi_session_type type,
			       const struct conn *c)
{
	for (struct conn *o = t->conns; o; o = o->next)
		if (o != c && !o->dead && o->phase == PH_FFP && o->nexus == n && o->params.session_type == type)
			return o;
	return NULL;
}

/* Logged-in sessions from everywhere, and from host, but for skip (the session a login reinstates). */
static void count_sessions(const struct iscsi_target *t, const char *host, const struct conn *skip, unsigned *all,
			   unsigned *here)
{
	*all = *here = 0;
	for (const struct conn *c = t->conns; c; c = c->next)
		if (c != skip && !c->dead && c->phase == PH_FFP) {
			(*all)++;
			*here += !strcmp(c->host, host);
		}
}

/* The PDU reader's dest: a write's immediate data is read straight into its task's buffer (session_data_dest). */
static uint8_t *conn_data_dest(void *arg, const uint8_t *bhs, uint32_t len)
{
	struct conn *c = arg;
	return c->sess && !c->dead ? session_data_dest(c->sess, bhs, len) : NULL;
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
		.cmd_window = t->lim.cmd_window, .ping_data_max = t->lim.ping_data_max,
		.buffer_max = t->lim.session_buffer_max, .budget = &t->budget, .tid = &c->nexus->tid,
	};
	struct session_io io = {.send = io_send, .submit = io_submit, .close = io_close, .text = io_text, .arg = c};
	bool normal = c->params.session_type == ISCSI_SESSION_NORMAL;
	if (session_create(&sp, t->lus, normal ? t->o.n_lus : 0, c->nexus->id, &io, &c->sess) != VTL_OK) {
		c->want_close = true;
		return;
	}
	c->rd.dest = conn_data_dest;
	c->rd.dest_arg = c;
	const uint8_t *i = c->params.isid;
	log_info("iscsi: %s logged in: %s session of %s%s%s; ISID %02x%02x%02x%02x%02x%02x", c->peer,
		 normal ? "normal" : "discovery", c->params.initiator_name, c->params.header_digest ? ", header digest" : "",
		 c->params.data_digest ? ", data digest" : "", i[0], i[1], i[2], i[3], i[4], i[5]);
}

/* Sends a login's final response and enters the full feature phase. */
static void login_finish(struct conn *c, struct iscsi_pdu *rsp)
{
	struct iovec iov = {rsp->data, rsp->data_len};
	send_pdu(c, rsp, &iov, rsp->data_len ? 1 : 0);
	login_done(c);
}

/* The old session a waiting login reinstates is gone: the held final response goes out now. */
static void login_resume(struct conn *c)
{
	c->waiting = false;
	if (c->dead)
		return;
	login_finish(c, &c->held_rsp);
	arm(c); /* written when the socket takes it: a failed write here could free c under its caller */
}

/*
 * A login the login state machine accepted: refused when the session
 * limits are reached; otherwise, if its nexus (and session type) has a
 * live session, that session is reinstated (RFC 7143 6.3.5): closed, its
 * tasks ended and its nexus lost before the new one's final response.
 */
static void login_accepted(struct conn *c, const struct iscsi_pdu *req, struct iscsi_pdu *rsp)
{
	struct iscsi_target *t = c->t;
	const struct nexus *n = nexus_of(t, &c->login.params);
	struct conn *old = n ? session_of(t, n, c->login.params.session_type, c) : NULL;
	unsigned all, here;
	count_sessions(t, c->host, old, &all, &here);
	const char *why = !n ? "every remembered initiator port has a session"
			  : all >= t->lim.max_sessions ? "max_sessions reached"
			  : here >= t->lim.max_sessions_per_address ? "max_sessions_per_address reached" : NULL;
	if (why) {
		iscsi_login_refuse(&c->login, req, rsp, LOGIN_OUT_OF_RESOURCES, why);
		struct iovec iov = {rsp->data, rsp->data_len};
		send_pdu(c, rsp, &iov, rsp->data_len ? 1 : 0);
		log_warn("iscsi: %s: login refused: %s (%s)", c->peer, iscsi_login_status_str(c->login.status), why);
		c->want_close = true;
		return;
	}
	c->nexus = n;
	if (!old) {
		login_finish(c, rsp);
		return;
	}
	log_info("iscsi: %s: reinstating the session of the same initiator port from %s", c->peer, old->peer);
	c->waiting = true;
	c->held_rsp = *rsp; /* its data is the login's, valid until iscsi_login_free */
	c->predecessor = old;
	old->successor = c;
	arm(c);
	conn_kill(old); /* resumes c at once when old has no command with a unit */
}

/*
 * A failed authentication is answered only after auth_fail_delay, so that
 * guessing secrets goes at one try per delay and connection. The response
 * waits in out, the socket is not read meanwhile (nothing it sends matters
 * now), and the event loop goes on serving everyone else.
 */
static void hold(struct conn *c)
{
	c->held_until = (int64_t)vtl_mono_ms() + (int64_t)c->t->o.auth_fail_delay * 1000;
	arm(c);
}

/* Sends the answers held by hold() whose time has come (and so closes those connections). */
static void release_held(struct iscsi_target *t)
{
	int64_t now = (int64_t)vtl_mono_ms();
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
	if (r == ISCSI_LOGIN_DONE) {
		login_accepted(c, pdu, &rsp);
		return;
	}
	struct iovec iov = {rsp.data, rsp.data_len};
	send_pdu(c, &rsp, &iov, rsp.data_len ? 1 : 0);
	if (r == ISCSI_LOGIN_FAILED) {
		log_warn("iscsi: %s: login refused: %s (%s)", c->peer, iscsi_login_status_str(c->login.status),
			 c->login.reason ? c->login.reason : "");
		c->want_close = true;
		if (c->login.status == LOGIN_AUTH_FAILED && c->t->o.auth_fail_delay)
			hold(c);
	}
}

static void conn_read(struct conn *c)
{
	/*
	 * A large data segment (Data-Out, immediate data) is read straight into
	 * the PDU reader's buffer, which its DataSegmentLength (at most the
	 * negotiated MaxRecvDataSegmentLength) already sized, rather than
	 * through rbuf and a copy. While a host sends such segments, its next
	 * header is read alone first so that the data after it can go in
	 * place; then the data is read at once. Data bytes stay within
	 * READ_CHUNK a turn either way, so that no connection reads longer.
	 */
	size_t budget = sizeof c->t->rbuf;
	bool got = false;
	while (budget && !c->dead && !c->want_close && !c->waiting) {
		uint8_t *buf = c->t->rbuf;
		size_t want = budget, room, hdr = pdu_reader_header_left(&c->rd);
		uint8_t *in_place = pdu_reader_room(&c->rd, &room);
		bool header_only = false;
		if (in_place && room >= READ_IN_PLACE_MIN) {
			buf = in_place;
			want = room < want ? room : want;
		} else if (in_place && c->big_data && room <= ISCSI_TRAILER_MAX) {
			/*
			 * The padding and digest after data read into its task's buffer
			 * (session_data_dest): read alone, like a header, so that the next
			 * PDU's header is read alone too and its data in place.
			 */
			buf = in_place;
			want = room;
			header_only = true;
		} else if (c->big_data && hdr && hdr < want) {
			/* Not counted: each header read alone is followed by a data read that is (or a PDU that resets big_data). */
			want = hdr;
			header_only = true;
		}
		ssize_t n = read(c->fd, buf, want);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			break;
		if (n <= 0) {
			conn_kill(c);
			return;
		}
		got = true;
		if (!header_only)
			budget -= (size_t)n;
		c->last_rx = (time_t)(vtl_mono_ms() / 1000);
		for (size_t off = 0; off < (size_t)n && !c->dead && !c->want_close;) {
			if (c->waiting) {
				/* Nothing may follow a Login Request before its response (RFC 7143 6.3): the stream is lost. */
				log_warn("iscsi: %s: sent more while its login waited for the old session; closing", c->peer);
				conn_kill(c);
				return;
			}
			size_t used = 0;
			struct iscsi_pdu pdu;
			enum pdu_error e = pdu_reader_feed(&c->rd, buf + off, (size_t)n - off, &used, &pdu);
			off += used;
			if (e == PDU_OK) {
				c->big_data = pdu.data_len >= READ_IN_PLACE_MIN;
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
		/* One read a turn, but for a header read alone: its data follows at once. */
		if (!header_only || (size_t)n < want)
			break;
	}
	if (got)
		flush(c);
}

/* Stops or resumes taking connections (while out of descriptors or memory, for a tick). */
static void accept_pause(struct iscsi_target *t, bool pause)
{
	if (t->accept_paused == pause)
		return;
	struct epoll_event le = {.events = EPOLLIN, .data.ptr = &t->lfd};
	if (epoll_ctl(t->epfd, pause ? EPOLL_CTL_DEL : EPOLL_CTL_ADD, t->lfd, &le) != 0) {
		log_warn("iscsi: epoll (listener): %s", strerror(errno));
		return;
	}
	t->accept_paused = pause;
}

/*
 * Out of descriptors (EMFILE, ENFILE): the pending connection would wake
 * the loop again and again. The spare descriptor is given up to accept it
 * and close it at once (the host sees its connection reset and retries);
 * if even that fails, accepting pauses until the next tick.
 */
static void accept_shed(struct iscsi_target *t, int err)
{
	time_t now = (time_t)(vtl_mono_ms() / 1000);
	if (now - t->emfile_logged >= EMFILE_LOG_S) {
		log_warn("iscsi: cannot accept a connection: %s; refusing connections (raise the descriptor limit, "
			 "ulimit -n / LimitNOFILE)", strerror(err));
		t->emfile_logged = now;
	}
	if (t->spare_fd >= 0) {
		close(t->spare_fd);
		t->spare_fd = -1;
		int fd = accept4(t->lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd >= 0)
			close(fd);
		t->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	}
	accept_pause(t, true);
}

/* The peer's address without its port, for the per-address limits. */
static void host_of(const struct sockaddr_storage *sa, char *out, size_t len)
{
	if (getnameinfo((const struct sockaddr *)sa, sizeof *sa, out, (socklen_t)len, NULL, 0, NI_NUMERICHOST) != 0)
		snprintf(out, len, "?");
}

/*
 * Makes room for a new connection's login from host: when max_logins (or
 * max_logins_per_address for host) connections are still logging in, the
 * oldest of them (of host) is closed, so that connections that never log
 * in cannot keep a real host out; the login timeout ends them anyway.
 */
static void login_room(struct iscsi_target *t, const char *host)
{
	unsigned all = 0, here = 0;
	struct conn *oldest = NULL, *oldest_here = NULL;
	for (struct conn *c = t->conns; c; c = c->next) /* newest first: the last one seen is the oldest */
		if (!c->dead && c->phase == PH_LOGIN && !c->waiting) {
			all++;
			oldest = c;
			if (!strcmp(c->host, host)) {
				here++;
				oldest_here = c;
			}
		}
	struct conn *victim = here >= t->lim.max_logins_per_address ? oldest_here
			      : all >= t->lim.max_logins ? oldest : NULL;
	if (victim) {
		log_warn("iscsi: %s: closing a connection that has not logged in, to make room for a new one",
			 victim->peer);
		conn_kill(victim);
	}
}

static void accept_all(struct iscsi_target *t)
{
	for (;;) {
		struct sockaddr_storage peer, local;
		socklen_t pl = sizeof peer, ll = sizeof local;
		int fd = accept4(t->lfd, (struct sockaddr *)&peer, &pl, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				accept_shed(t, errno); /* EMFILE, ENFILE, ENOBUFS, ENOMEM */
			return;
		}
		struct conn *c = calloc(1, sizeof *c);
		if (!c) {
			close(fd);
			continue;
		}
		int one = 1;
		if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0)
			log_debug("iscsi: TCP_NODELAY: %s", strerror(errno));
		c->t = t;
		c->fd = fd;
		c->last_rx = c->accepted_at = (time_t)(vtl_mono_ms() / 1000);
		if (getsockname(fd, (struct sockaddr *)&local, &ll) != 0)
			memset(&local, 0, sizeof local);
		iscsi_portal_format((struct sockaddr *)&peer, c->peer, sizeof c->peer);
		iscsi_portal_format((struct sockaddr *)&local, c->local, sizeof c->local);
		host_of(&peer, c->host, sizeof c->host);
		login_room(t, c->host);
		pdu_reader_init(&c->rd, LOGIN_MAX_DATA);
		if (++t->next_tsih == 0)
			t->next_tsih = 1;
		iscsi_login_init(&c->login, &t->o.login, t->next_tsih, t->next_statsn++);
		struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};
		c->events = EPOLLIN;
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
	time_t now = (time_t)(vtl_mono_ms() / 1000);
	accept_pause(t, false); /* a pause for want of descriptors lasts a tick */
	for (struct conn *c = t->conns, *next; c; c = next) {
		next = c->next;
		if (c->dead)
			continue;
		if (c->phase == PH_LOGIN && !c->waiting && !c->held_until &&
		    now - c->accepted_at >= (time_t)t->lim.login_timeout) {
			log_warn("iscsi: %s has not logged in within %u s; closing", c->peer, t->lim.login_timeout);
			conn_kill(c);
			continue;
		}
		if (c->phase != PH_FFP || !c->sess)
			continue;
		if (session_idle(c->sess) && now - c->last_rx >= SPARES_IDLE_S)
			session_release_spares(c->sess); /* idle memory goes back */
		if (!t->o.nop_interval)
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
		c->commands++;
		if (j->task->cmd.dir == SCSI_DIR_IN)
			c->data_in += j->task->cmd.data_len;
		else if (j->task->cmd.dir == SCSI_DIR_OUT)
			c->data_out += j->task->cmd.data_len;
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

/* Publishes the logged-in normal sessions for iscsi_target_sessions. */
static void publish(struct iscsi_target *t)
{
	uint64_t now = vtl_mono_ms();
	if (now - t->published_ms < PUBLISH_MS)
		return; /* a busy loop turns thousands of times a second: the copy is not worth making each time */
	t->published_ms = now;
	pthread_mutex_lock(&t->snap_mu);
	unsigned n = 0;
	for (struct conn *c = t->conns; c && n < t->lim.max_sessions; c = c->next) {
		if (c->dead || c->phase != PH_FFP || c->params.session_type != ISCSI_SESSION_NORMAL)
			continue;
		struct iscsi_session_info *s = &t->snap[n++];
		snprintf(s->initiator, sizeof s->initiator, "%s", c->params.initiator_name);
		for (unsigned i = 0; i < ISCSI_ISID_LEN; i++)
			snprintf(s->isid + 2 * i, sizeof s->isid - 2 * i, "%02x", c->params.isid[i]);
		snprintf(s->peer, sizeof s->peer, "%s", c->peer);
		s->in_flight = c->in_flight;
		s->commands = c->commands;
		s->data_in_bytes = c->data_in;
		s->data_out_bytes = c->data_out;
	}
	t->n_snap = n;
	pthread_mutex_unlock(&t->snap_mu);
}

unsigned iscsi_target_sessions(struct iscsi_target *t, struct iscsi_session_info *out, unsigned max)
{
	pthread_mutex_lock(&t->snap_mu);
	unsigned n = t->n_snap;
	if (out && max)
		memcpy(out, t->snap, (n < max ? n : max) * sizeof *out);
	pthread_mutex_unlock(&t->snap_mu);
	return n;
}

/* Applies credentials a reload handed over, between two turns of the loop, where no login step runs. */
static void apply_auth(struct iscsi_target *t)
{
	pthread_mutex_lock(&t->mu);
	bool pending = t->auth_pending;
	struct iscsi_auth a = t->auth;
	pthread_mutex_unlock(&t->mu);
	if (!pending)
		return;
	struct iscsi_target_config *l = &t->o.login;
	l->chap_user = a.chap_user;
	l->chap_secret = a.chap_secret;
	l->mutual_user = a.mutual_user;
	l->mutual_secret = a.mutual_secret;
	l->discovery_chap = a.discovery_chap;
	l->hosts = a.hosts;
	l->n_hosts = a.n_hosts;
	l->initiators = a.initiators;
	l->n_initiators = a.n_initiators;
	unsigned closed = 0;
	/* A login part way through holds the old credentials it looked up: it starts again, with the new ones. */
	for (struct conn *c = t->conns, *next; c; c = next) {
		next = c->next;
		if (!c->dead && c->phase == PH_LOGIN && !c->waiting && !c->held_until) {
			conn_kill(c);
			closed++;
		}
	}
	log_info("iscsi: the next logins use the new credentials and allowed initiators; %u login%s in progress "
		 "closed, logged-in sessions kept", closed, closed == 1 ? "" : "s");
	pthread_mutex_lock(&t->mu);
	t->auth_pending = false;
	pthread_cond_broadcast(&t->auth_applied);
	pthread_mutex_unlock(&t->mu);
}

void iscsi_target_set_auth(struct iscsi_target *t, const struct iscsi_auth *a)
{
	pthread_mutex_lock(&t->mu);
	t->auth = *a;
	t->auth_pending = true;
	pthread_mutex_unlock(&t->mu);
	uint64_t one = 1;
	if (write(t->evfd, &one, sizeof one) != sizeof one)
		log_error("iscsi: cannot wake the event loop"); /* its next tick (TICK_MS) applies them */
	pthread_mutex_lock(&t->mu);
	while (t->auth_pending)
		pthread_cond_wait(&t->auth_applied, &t->mu);
	pthread_mutex_unlock(&t->mu);
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
				if (c->dead)
					continue; /* ended by an earlier event of this turn */
				if (evs[i].events & (EPOLLERR | EPOLLHUP))
					conn_kill(c);
				else if (evs[i].events & EPOLLOUT)
					flush(c);
				else if (evs[i].events & EPOLLIN)
					conn_read(c);
			}
		}
		apply_auth(t);
		keepalives(t);
		release_held(t);
		bury(t);
		publish(t);
	}
	bury(t);
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
	t->lim = o->limits;
	iscsi_limits_default(&t->lim);
	t->o.login.cmd_window = t->lim.cmd_window; /* the Login Response announces the window the session keeps */
	t->budget.max = t->lim.buffer_max;
	t->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	pthread_mutex_init(&t->mu, NULL);
	pthread_mutex_init(&t->snap_mu, NULL);
	pthread_cond_init(&t->auth_applied, NULL);
	t->lus = calloc(o->n_lus ? o->n_lus : 1, sizeof *t->lus);
	t->nexus = calloc(NEXUS_MAX, sizeof *t->nexus);
	t->snap = calloc(t->lim.max_sessions, sizeof *t->snap);
	int rc = VTL_E_NOMEM;
	if (!t->lus || !t->nexus || !t->snap || t->spare_fd < 0)
		goto fail;
	memcpy(t->lus, o->lus, o->n_lus * sizeof *t->lus);
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
	if (t->spare_fd >= 0)
		close(t->spare_fd);
	free(t->nexus);
	free(t->lus);
	free(t->snap);
	pthread_mutex_destroy(&t->snap_mu);
	pthread_cond_destroy(&t->auth_applied);
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
	if (t->spare_fd >= 0)
		close(t->spare_fd);
	for (unsigned i = 0; i < t->n_nexus; i++)
		free(t->nexus[i]);
	free(t->nexus);
	free(t->lus);
	free(t->snap);
	pthread_mutex_destroy(&t->snap_mu);
	pthread_cond_destroy(&t->auth_applied);
	pthread_mutex_destroy(&t->mu);
	free(t);
}
