/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Hostile hosts and a well-behaved one, shared by the hostile-host suite
 * (iscsi_hostile) and its benchmark (bench_hostile): connections that never
 * log in, sessions that sit idle, a discovery session flooding NOP-Outs
 * without ever reading, a session piling up WRITEs whose R2T it never
 * answers, one sending duplicated Data-Out in a loop, and a host streaming
 * WRITEs (or READs) whose rate is measured.
 * Each attacker runs in a child process the caller starts and ends by its
 * PID; vtld's resident memory comes from /proc/PID/status.
 */
#ifndef VTL_TESTS_INTEGRATION_ATTACK_H
#define VTL_TESTS_INTEGRATION_ATTACK_H

#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "tests/integration/rawlib.h"

#define ATTACK_PILE_LEN (1u << 20)  /* each piled WRITE asks for 1 MiB */
#define ATTACK_PILE_CMDS 200        /* more than any command window */
#define ATTACK_NOP_DATA 4096        /* the default nop_data_max: the largest ping the target must take */
#define ATTACK_IDLE_PER_ADDR 16     /* the default max_logins_per_address */
#define ATTACK_STALL_S 1            /* a send blocked this long: the target stopped reading */
#define STREAM_BLOCK (256u << 10)   /* the well-behaved host's block: one PDU of immediate data */
#define ATTACK_FLOOD_MAX (160ull << 20) /* a flood read this far is not stopped: the target never pushes back */
#define ATTACK_SESSIONS_MAX 64      /* sessions one attacker child runs */
#define ATTACK_TCP_MAX 1024         /* idle connections one attacker child holds */
#define ATTACK_READY_S 20           /* attackers in place within this, or the start fails */

/* vtld's resident set in KiB (VmRSS), or 0 when it cannot be read. */
static inline long vtld_rss_kib(int pid)
{
	char path[64], line[256];
	snprintf(path, sizeof path, "/proc/%d/status", pid);
	FILE *f = fopen(path, "r");
	long kib = 0;
	if (!f)
		return 0;
	while (fgets(line, sizeof line, f))
		if (!strncmp(line, "VmRSS:", 6))
			kib = strtol(line + 6, NULL, 10);
	fclose(f);
	return kib;
}

/* A normal session's login for an attacker or a host named name (ISID tail isid). */
static inline struct raw_login attack_login(const char *name, const char *target, uint8_t isid, bool r2t)
{
	struct raw_login o = {.initiator = name, .target = target, .isid_tail = isid, .initial_r2t = r2t,
			      .immediate_data = !r2t, .first_burst = r2t ? 0 : STREAM_BLOCK};
	return o;
}

/*
 * n TCP connections that never send a byte, from 127.0.0.<first_addr>.. (16
 * per address); fds kept in fds. The connects do not wait: those the
 * target's backlog holds back count as attackers too.
 */
static inline int attack_idle_tcp(const char *portal, int first_addr, int n, int *fds)
{
	struct sockaddr_in to = raw_portal(portal);
	int made = 0;
	for (int i = 0; i < n; i++) {
		char src[32];
		snprintf(src, sizeof src, "127.0.0.%d", first_addr + i / ATTACK_IDLE_PER_ADDR);
		struct sockaddr_in me = {.sin_family = AF_INET};
		fds[i] = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
		if (fds[i] < 0 || inet_pton(AF_INET, src, &me.sin_addr) != 1 ||
		    bind(fds[i], (struct sockaddr *)&me, sizeof me) ||
		    (connect(fds[i], (struct sockaddr *)&to, sizeof to) && errno != EINPROGRESS)) {
			if (fds[i] >= 0)
				close(fds[i]);
			fds[i] = -1;
			continue;
		}
		made++;
	}
	return made;
}

/*
 * A discovery session that sends NOP-Outs with ping data and never reads its
 * socket. Returns the bytes sent before the target stopped reading (a send
 * blocked ATTACK_STALL_S), or limit when it never did.
 */
static inline uint64_t attack_nop_flood(struct raw_conn *c, const char *portal, const char *name, uint64_t limit)
{
	raw_connect(c, portal, NULL);
	struct raw_login o = {.initiator = name};
	raw_login(c, &o);
	struct timeval tv = {.tv_sec = ATTACK_STALL_S};
	if (setsockopt(c->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv))
		raw_fail("SO_SNDTIMEO: %s", strerror(errno));
	static uint8_t ping[ATTACK_NOP_DATA];
	memset(ping, 0x5A, sizeof ping);
	uint64_t sent = 0;
	while (sent < limit) {
		if (!raw_ping(c, ping, sizeof ping, c->next_itt++, SPOIL_NONE)) {
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return sent;
			raw_fail("the flooding connection was closed after %llu bytes: %s", (unsigned long long)sent,
				 strerror(errno));
		}
		sent += BHS_LEN + sizeof ping;
	}
	return sent;
}

/*
 * Sends n WRITEs of ATTACK_PILE_LEN to lun over a session with InitialR2T=Yes,
 * one CmdSN each, and reads nothing: their R2Ts are never answered. The ITT
 * of command i is *first_itt + i, its CmdSN the session's next then on.
 */
static inline void attack_r2t_pile(struct raw_conn *c, int lun, int n, uint32_t *first_itt)
{
	uint8_t cdb[6], bhs[BHS_LEN];
	raw_write6(cdb, ATTACK_PILE_LEN);
	*first_itt = c->next_itt;
	for (int i = 0; i < n; i++) {
		raw_command_bhs(c, bhs, lun, cdb, sizeof cdb, CMD_WRITE, ATTACK_PILE_LEN, c->next_itt++, c->cmd_sn++);
		raw_send(c, bhs, NULL, 0, SPOIL_NONE);
	}
}

/*
 * Forever: a WRITE of 64 KiB to lun with 16 KiB of immediate data, then a
 * Data-Out sending those 16 KiB again (a duplicate offset), and whatever the
 * target answers read and dropped. Returns only when the target closes.
 */
static inline void attack_bad_data_out(struct raw_conn *c, int lun)
{
	enum { LEN = 64u << 10, IMM = 16u << 10 };
	static uint8_t data[LEN];
	static struct raw_pdu r;
	uint8_t cdb[6], bhs[BHS_LEN];
	raw_write6(cdb, LEN);
	for (;;) {
		uint32_t itt = c->next_itt++;
		raw_command_bhs(c, bhs, lun, cdb, sizeof cdb, CMD_WRITE, LEN, itt, c->cmd_sn++);
		bhs[1] &= (uint8_t)~FLAG_FINAL;
		if (!raw_try_send(c, bhs, data, IMM, SPOIL_NONE))
			return;
		raw_data_out(c, lun, itt, TAG_NONE, 0, 0, data, IMM, false);
		do {
			if (!raw_recv(c, &r))
				return;
		} while (!((r.bhs[0] & OP_MASK) == OP_SCSI_RSP && get32(r.bhs + F_ITT) == itt));
	}
}

/* Every attacker of one kind in a child process: started with attack_spawn, ended with attack_end. */
enum attack_kind { ATTACK_IDLE_TCP, ATTACK_IDLE_SESSIONS, ATTACK_NOP_FLOOD, ATTACK_R2T_PILE, ATTACK_BAD_DATA_OUT };

/*
 * Whether attack_spawn waits for a flood to stall (the target stopped reading
 * it) before it returns; when false the flood is in place once it logged in,
 * and its first megabytes land in what the caller measures next.
 */
static bool attack_wait_stall = true;

/* Ends an attacker child (and the flooders it forked) by its PID. */
static inline void attack_end(pid_t pid)
{
	(void)kill(-pid, SIGKILL);
	(void)kill(pid, SIGKILL);
	int st;
	(void)waitpid(pid, &st, 0);
}

/*
 * Starts a child running n attackers of kind against portal (the pile on
 * lun), and returns its PID once they are in place: connected, logged in,
 * their commands sent, and for a flood once the target stopped reading it
 * (each writes a byte to a pipe). The child then sleeps until it is killed.
 */
static inline pid_t attack_spawn(enum attack_kind kind, int n, const char *portal, const char *target, int lun,
				 int addr_base)
{
	int p[2];
	if (pipe(p))
		raw_fail("pipe: %s", strerror(errno));
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		raw_fail("fork: %s", strerror(errno));
	if (pid == 0) {
		(void)setpgid(0, 0); /* its own group, so that attack_end reaches the flooders it forks */
		(void)prctl(PR_SET_PDEATHSIG, SIGKILL); /* and it goes if the test dies first */
		close(p[0]);
		static int fds[ATTACK_TCP_MAX];
		static struct raw_conn conns[ATTACK_SESSIONS_MAX];
		int sessions = kind == ATTACK_IDLE_TCP ? 0 : n > ATTACK_SESSIONS_MAX ? ATTACK_SESSIONS_MAX : n;
		for (int i = 0; i < sessions; i++) {
			char name[96];
			snprintf(name, sizeof name, "iqn.2026-01.org.vtl:attacker-%d-%d-%d", (int)kind, addr_base, i);
			struct raw_conn *c = &conns[i];
			switch (kind) {
			case ATTACK_IDLE_TCP:
				break; /* not a session: below */
			case ATTACK_IDLE_SESSIONS: {
				raw_connect(c, portal, NULL);
				struct raw_login o = attack_login(name, target, (uint8_t)i, true);
				raw_login(c, &o);
				break;
			}
			case ATTACK_NOP_FLOOD:
				if (fork() == 0) { /* each flooder blocks on its own socket; in place once it stalls */
					(void)prctl(PR_SET_PDEATHSIG, SIGKILL);
					if (!attack_wait_stall && write(p[1], "f", 1) != 1)
						_exit(1);
					uint64_t sent = attack_nop_flood(c, portal, name, ATTACK_FLOOD_MAX);
					if (attack_wait_stall && sent < ATTACK_FLOOD_MAX && write(p[1], "f", 1) != 1)
						_exit(1);
					pause();
					_exit(0);
				}
				break;
			case ATTACK_BAD_DATA_OUT:
				if (fork() == 0) {
					(void)prctl(PR_SET_PDEATHSIG, SIGKILL);
					raw_connect(c, portal, NULL);
					struct raw_login o = attack_login(name, target, (uint8_t)i, false);
					raw_login(c, &o);
					attack_bad_data_out(c, lun);
					pause();
					_exit(0);
				}
				break;
			case ATTACK_R2T_PILE: {
				raw_connect(c, portal, NULL);
				struct raw_login o = attack_login(name, target, (uint8_t)i, true);
				raw_login(c, &o);
				uint32_t itt;
				attack_r2t_pile(c, lun, ATTACK_PILE_CMDS, &itt);
				break;
			}
			}
		}
		if (kind == ATTACK_IDLE_TCP)
			attack_idle_tcp(portal, addr_base, n > ATTACK_TCP_MAX ? ATTACK_TCP_MAX : n, fds);
		if (kind != ATTACK_NOP_FLOOD && write(p[1], "r", 1) != 1)
			_exit(1);
		/* The flooders are this child's children: they go with its process group. */
		for (;;)
			pause();
	}
	close(p[1]);
	int want = kind == ATTACK_NOP_FLOOD ? (n > ATTACK_SESSIONS_MAX ? ATTACK_SESSIONS_MAX : n) : 1;
	for (int got = 0; got < want; got++) {
		struct pollfd pf = {.fd = p[0], .events = POLLIN};
		char b;
		if (poll(&pf, 1, ATTACK_READY_S * 1000) != 1 || read(p[0], &b, 1) != 1) {
			attack_end(pid);
			raw_fail(kind == ATTACK_NOP_FLOOD ? "a never-read NOP-Out flood was still being read after %d s"
							  : "an attacker (kind %d) failed to start",
				 kind == ATTACK_NOP_FLOOD ? ATTACK_READY_S : (int)kind);
		}
	}
	close(p[0]);
	return pid;
}


/* A host streaming STREAM_BLOCK WRITEs (write) or READs to lun for seconds; returns MB/s (10^6 bytes). */
static inline double stream_for(struct raw_conn *c, int lun, const struct raw_login *o, bool write, double seconds,
				uint64_t *bytes_out)
{
	static uint8_t block[STREAM_BLOCK];
	static const uint8_t rewind[6] = {0x01};
	if (!block[1])
		for (unsigned i = 0; i < sizeof block; i++)
			block[i] = (uint8_t)(i * 31 + (i >> 10));
	raw_good(c, lun, rewind, sizeof rewind, 0, NULL, 0, "REWIND");
	if (write) {
		/* The first write at BOT discards the last interval's data: not part of the rate. */
		struct raw_status st = raw_write(c, lun, block, STREAM_BLOCK, o);
		if (st.status != GOOD)
			raw_fail("the well-behaved host's first WRITE: status %02Xh, sense %Xh", st.status, st.key);
	}
	uint64_t bytes = 0;
	uint8_t rd[6] = {0x08, 0, STREAM_BLOCK >> 16, (STREAM_BLOCK >> 8) & 0xFF, STREAM_BLOCK & 0xFF, 0};
	double t0 = raw_now(), t = t0;
	while (t - t0 < seconds) {
		struct raw_status st = write ? raw_write(c, lun, block, STREAM_BLOCK, o)
					     : raw_run(c, lun, rd, sizeof rd, CMD_READ, block, STREAM_BLOCK);
		if (st.status != GOOD) {
			if (!write && st.key == 0x08) /* BLANK CHECK: the end of what was written; read it again */
				raw_good(c, lun, rewind, sizeof rewind, 0, NULL, 0, "REWIND");
			else
				raw_fail("the well-behaved host's %s: status %02Xh, sense %Xh/%02Xh/%02Xh",
					 write ? "WRITE" : "READ", st.status, st.key, st.asc, st.ascq);
		} else {
			bytes += STREAM_BLOCK;
		}
		t = raw_now();
	}
	if (bytes_out)
		*bytes_out = bytes;
	return (double)bytes / (t - t0) / 1e6;
}

static inline int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static inline double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

#endif
