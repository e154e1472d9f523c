/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A well-behaved host beside hostile ones, over vtld's built-in iSCSI target:
 * the host (the hand-made initiator of tests/integration/rawlib.h, one
 * command at a time, 256 KiB variable blocks as one PDU of immediate data)
 * streams WRITEs to drive 2 and then READs them back, first alone, then
 * while 16 other sessions are connected: 8 idle sessions and 8 hostile ones
 * (3 discovery sessions flooding NOP-Outs and never reading, 3 sessions
 * piling up 1 MiB WRITEs whose R2T they never answer, 2 sending duplicated
 * Data-Out in a loop; the piles and the duplicates go to drive 1). The two
 * phases alternate VTL_BENCH_ROUNDS times, each phase measured for
 * VTL_BENCH_SECONDS per direction; the medians are printed side by side
 * with the median of each round's crowded/alone ratio (the goal is >= 0.9)
 * and vtld's VmRSS at the end of each phase. Nothing passes or fails on time: the exit status is non-zero
 * only when a command fails. tests/bench/bench_hostile.sh starts vtld.
 *
 * Usage: bench_hostile PORTAL TARGET-IQN
 * Environment: VTL_BENCH_VTLD_PID (required: vtld's PID, for its VmRSS),
 * VTL_BENCH_ROUNDS (default 3), VTL_BENCH_SECONDS (default 2),
 * VTL_BENCH_ATTACKS (which of idle,flood,pile,dup crowd the host; default all).
 */
#include "tests/bench/bench_util.h"
#include "tests/integration/attack.h"

#define DRIVE 1
#define DRIVE2 2
#define SLOT_FIRST 1025
#define DRIVE_ELEMENT 257
#define ROUNDS_MAX 9
#define IDLE_SESSIONS 8
#define FLOODERS 3
#define PILES 3
#define DUPLICATORS 2

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: bench_hostile PORTAL TARGET-IQN\n");
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	const char *portal = argv[1], *target = argv[2];
	int pid = (int)bench_env_ul("VTL_BENCH_VTLD_PID", 0);
	unsigned rounds = (unsigned)bench_env_ul("VTL_BENCH_ROUNDS", 3);
	double seconds = (double)bench_env_ul("VTL_BENCH_SECONDS", 2);
	if (pid <= 0)
		raw_fail("VTL_BENCH_VTLD_PID is not set");
	const char *attacks = getenv("VTL_BENCH_ATTACKS");
	if (!attacks || !*attacks)
		attacks = "idle,flood,pile,dup";
	if (rounds < 1 || rounds > ROUNDS_MAX)
		rounds = 3;

	struct raw_conn g;
	raw_connect(&g, portal, NULL);
	struct raw_login o = attack_login("iqn.2026-01.org.vtl:bench-good-host", target, 1, false);
	raw_login(&g, &o);
	raw_load(&g, SLOT_FIRST, DRIVE_ELEMENT, DRIVE);
	raw_load(&g, SLOT_FIRST + 1, DRIVE_ELEMENT + 1, DRIVE2);
	(void)stream_for(&g, DRIVE2, &o, true, 1.0, NULL); /* warm up: the first segments of the cartridge */

	double w[2][ROUNDS_MAX], r[2][ROUNDS_MAX];
	long rss[2] = {0, 0};
	printf("bench_hostile: %u rounds of %.0f s per direction and phase; blocks of %u KiB, one command at a time\n",
	       rounds, seconds, STREAM_BLOCK >> 10);
	for (unsigned i = 0; i < rounds; i++) {
		for (int crowded = 0; crowded < 2; crowded++) {
			pid_t kids[4] = {0};
			if (crowded) {
				if (strstr(attacks, "idle"))
					kids[0] = attack_spawn(ATTACK_IDLE_SESSIONS, IDLE_SESSIONS, portal, target, DRIVE, 0);
				if (strstr(attacks, "flood"))
					kids[1] = attack_spawn(ATTACK_NOP_FLOOD, FLOODERS, portal, target, DRIVE, 1);
				if (strstr(attacks, "pile"))
					kids[2] = attack_spawn(ATTACK_R2T_PILE, PILES, portal, target, DRIVE, 2);
				if (strstr(attacks, "dup"))
					kids[3] = attack_spawn(ATTACK_BAD_DATA_OUT, DUPLICATORS, portal, target, DRIVE, 3);
				usleep(300000);
			}
			w[crowded][i] = stream_for(&g, DRIVE2, &o, true, seconds, NULL);
			r[crowded][i] = stream_for(&g, DRIVE2, &o, false, seconds, NULL);
			rss[crowded] = vtld_rss_kib(pid);
			for (int k = 0; k < 4; k++)
				if (kids[k])
					attack_end(kids[k]);
			printf("  round %u %-8s write %7.1f MB/s  read %7.1f MB/s  vtld VmRSS %6ld KiB\n", i + 1,
			       crowded ? "crowded" : "alone", w[crowded][i], r[crowded][i], rss[crowded]);
			fflush(stdout);
			if (crowded)
				usleep(500000); /* the attackers' connections close */
		}
	}
	/* Each round's crowded phase right after its alone one: their ratio cancels the drift of a shared machine. */
	double wr[ROUNDS_MAX], rr[ROUNDS_MAX];
	for (unsigned i = 0; i < rounds; i++) {
		wr[i] = w[1][i] / w[0][i];
		rr[i] = r[1][i] / r[0][i];
	}
	double wq = median(wr, (int)rounds), rq = median(rr, (int)rounds);
	double wa = median(w[0], (int)rounds), wc = median(w[1], (int)rounds);
	double ra = median(r[0], (int)rounds), rc = median(r[1], (int)rounds);
	printf("\n%-34s %12s %12s %8s\n", "well-behaved host (medians)", "alone", "crowded", "ratio");
	printf("%-34s %9.1f MB/s %7.1f MB/s %8.2f\n", "write, 256 KiB blocks", wa, wc, wq);
	printf("%-34s %9.1f MB/s %7.1f MB/s %8.2f\n", "read, 256 KiB blocks", ra, rc, rq);
	printf("%-34s %9ld KiB  %7ld KiB\n", "vtld VmRSS at the end of the phase", rss[0], rss[1]);
	printf("ratio: the median of each round's crowded / alone (goal >= 0.90); crowded by %s of: idle = %d idle "
	       "sessions, flood = %d NOP-Out flooders that never read, pile = %d R2T piles of %d x 1 MiB WRITEs, "
	       "dup = %d duplicated-Data-Out loops\n",
	       attacks, IDLE_SESSIONS, FLOODERS, PILES, ATTACK_PILE_CMDS, DUPLICATORS);
	raw_logout(&g);
	return 0;
}
