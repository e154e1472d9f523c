/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Hostile hosts and a well-behaved one, shared by the hostile-host suite
 * (iscsi_hostile) and its benchmark (bench_hostile): connections that never
 * log in, sessions that sit idle, a discovery session flooding NOP-Outs
 * without ever reading, a session piling up WRITEs whose R2T it never
 * answers, and a host streaming WRITEs (or READs) whose rate is measured.
 * Each attacker runs in a child process the caller starts and ends by its
 * PID; vtld's resident memory comes from /proc/PID/status.
 */
#ifndef VTL_TESTS_INTEGRATION_ATTACK_H
#define VTL_TESTS_INTEGRATION_ATTACK_H

#include <signal.h>
#include <sys/wait.h>

#include "tests/integration/rawlib.h"

#define ATTACK_PILE_LEN (1u << 20)  /* each piled WRITE asks for 1 MiB */
#define ATTACK_PILE_CMDS 200        /* more than any command window */
#define ATTACK_NOP_DATA 4096        /* the default nop_data_max: the largest ping the target must take */
#define ATTACK_IDLE_PER_ADDR 16     /* the default max_logins_per_address */
#define ATTACK_STALL_S 3            /* a send blocked this long: the target stopped reading */
#define STREAM_BLOCK (256u << 10)   /* the well-behaved host's block: one PDU of immediate data */

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

/* n TCP connections that never send a byte, from 127.0.0.<first_addr>.. (16 per address); fds kept in fds. */
static inline int attack_idle_tcp(const char *portal, int first_addr, int n, int *fds)
{
	int made = 0;
	for (int i = 0; i < n; i++) {
		char src[32];
		snprintf(src, sizeof src, "127.0.0.%d", first_addr + i / ATTACK_IDLE_PER_ADDR);
		fds[i] = raw_dial(portal, src);
		made += fds[i] >= 0;
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

/* Every attacker of one kind in a child process: started with attack_spawn, ended with attack_end. */
enum attack_kind { ATTACK_IDLE_TCP, ATTACK_IDLE_SESSIONS, ATTACK_NOP_FLOOD, ATTACK_R2T_PILE };

/*
 * Starts a child running n attackers of kind against portal (the pile on
 * lun), and returns its PID once they are in place (the child writes a byte
 * to a pipe). The child then sleeps until it is killed.
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
		close(p[0]);
		static int fds[1024];
		static struct raw_conn conns[64];
		if (n > 64 && kind != ATTACK_IDLE_TCP)
			n = 64;
		for (int i = 0; i < n; i++) {
			char name[96];
			snprintf(name, sizeof name, "iqn.2026-01.org.vtl:attacker-%d-%d-%d", (int)kind, addr_base, i);
			struct raw_conn *c = &conns[i];
			switch (kind) {
			case ATTACK_IDLE_TCP:
				break;
			case ATTACK_IDLE_SESSIONS: {
				raw_connect(c, portal, NULL);
				struct raw_login o = attack_login(name, target, (uint8_t)i, true);
				raw_login(c, &o);
				break;
			}
			case ATTACK_NOP_FLOOD:
				if (fork() == 0) { /* each flooder blocks on its own socket */
					(void)attack_nop_flood(c, portal, name, UINT64_MAX);
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
			attack_idle_tcp(portal, addr_base, n > 1024 ? 1024 : n, fds);
		if (write(p[1], "r", 1) != 1)
			_exit(1);
		/* The flooders are this child's children: they go with its process group. */
		for (;;)
			pause();
	}
	close(p[1]);
	char b;
	if (read(p[0], &b, 1) != 1)
		raw_fail("an attacker (kind %d) failed to start", (int)kind);
	close(p[0]);
	return pid;
}

/* Ends an attacker child (and the flooders it forked) by its PID. */
static inline void attack_end(pid_t pid)
{
	(void)kill(-pid, SIGKILL);
	(void)kill(pid, SIGKILL);
	int st;
	(void)waitpid(pid, &st, 0);
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
