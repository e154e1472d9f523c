/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Hostile hosts against vtld's iSCSI target, by the hand-made initiator
 * (rawlib.h): each case sends what no correct initiator would and asserts
 * what a host sees. Cases (the first argument), each run by
 * test_iscsi_hostile.sh against a vtld configured for it:
 *
 *   dataout   Data-Out that is duplicated, overlapping, gapped, beyond the
 *             burst or the EDTL, with a wrong TTT or DataSN: Reject 04h with
 *             the header, CHECK CONDITION ABORTED COMMAND 4Bh/xx, the tape
 *             does not move, the session goes on; a Data-Out for no write:
 *             Reject 09h. Host A's blocks, written before, and host B's good
 *             block after are all that can be read back.
 *   window    200 WRITEs of 1 MiB whose R2Ts are never answered: R2Ts for
 *             the cmd_window (32) commands inside MaxCmdSN only, MaxCmdSN
 *             still, an immediate command gets TASK SET FULL; answering one
 *             moves MaxCmdSN by one; vtld's VmRSS stays bounded.
 *   buffers   (session_buffer_max = 8M, buffer_max = 12M) 1 MiB WRITEs beyond
 *             either get TASK SET FULL; the room comes back when a session goes.
 *   nop       a never-read discovery session flooding NOP-Outs is no longer
 *             read (its sends stall) and vtld stays under a bound; a ping of
 *             nop_data_max + 1 bytes gets Reject 09h.
 *   logins    (login_timeout = 2, max_logins = 8, max_logins_per_address = 4,
 *             max_sessions = 4, max_sessions_per_address = 2) idle connections
 *             beyond a cap lose the oldest; a real host still logs in; an
 *             unfinished login is closed after the timeout; sessions beyond a
 *             cap are refused with status 03/02.
 *   emfile    (vtld's descriptor limit lowered by the script) 100 connection
 *             attempts: vtld does not spin; once they go, a host logs in.
 *   identity  same name, other ISID: another nexus (RESERVATION CONFLICT, its
 *             logout releases nothing); READ FULL STATUS TransportIDs; same
 *             name and ISID: reinstatement (the old connection sees EOF
 *             before the new login's answer, its RESERVE, PREVENT and tasks go).
 *   stream    a host streaming WRITEs to drive 2, quiet and attacked (idle
 *             connections, a NOP flood, an R2T pile) in alternation: the
 *             median of each attacked rate over its quiet neighbours is
 *             >= 0.9 (measured again once if not, since a shared machine's
 *             load can sink one measurement).
 *
 * Usage: iscsi_hostile CASE PORTAL TARGET-IQN [VTLD-PID]
 * Exit 0 when every step passed; each step prints a line.
 */
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>

#include "tests/integration/attack.h"

#include "common/grow.h"

#define fail raw_fail
#define DRIVE 1
#define DRIVE2 2
#define SLOT_FIRST 1025      /* the library's first storage element (vtld's element map) */
#define DRIVE_ELEMENT 257    /* the first drive's element; the second is the next */
#define KEY_ABORTED 0x0B
#define KEY_ILLEGAL 0x05
#define KEY_UNIT_ATTENTION 0x06
#define KEY_BLANK_CHECK 0x08
#define ASC_DATA_PHASE 0x4B  /* SPC-4 table D.2: 4Bh/00h..05h, the data phase errors */
#define ASCQ_DATA_PHASE_ERROR 0x00
#define ASCQ_INVALID_TTT 0x01
#define ASCQ_TOO_MUCH_DATA 0x02
#define ASCQ_DATA_OFFSET 0x05
#define ASC_REMOVAL_PREVENTED 0x53
#define ASCQ_REMOVAL_PREVENTED 0x02
#define LOGIN_OUT_OF_RESOURCES 0x0302 /* RFC 7143 11.13.5 */
#define CMD_WINDOW 32        /* the default cmd_window */
#define BLK (512u << 10)     /* the data-out cases' write */
#define SEG (16u << 10)      /* their Data-Out PDUs */
#define FIRST_BURST (64u << 10)
#define MAX_BURST (256u << 10)
#define HOST_A_BLOCKS 4
#define QUIET_MS 1500
#define RSS_SLACK_KIB (48 << 10) /* output_max 4M + socket buffers + allocator slack, well below a 150 MB flood */

static const char *portal, *target;
static int vtld_pid;

static void ok(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	printf("-- ");
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
	fflush(stdout);
}

/* Whether a PDU can be read from fd within ms, or EOF; 1 readable data, 0 nothing, -1 EOF. */
static int peek(int fd, int ms)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};
	if (poll(&p, 1, ms) <= 0)
		return 0;
	char b;
	ssize_t r = recv(fd, &b, 1, MSG_PEEK | MSG_DONTWAIT);
	if (r == 0 || (r < 0 && errno == ECONNRESET))
		return -1;
	return r > 0 ? 1 : 0;
}

/* Reads and drops what fd has already received; true if the end of the stream is among it. */
static bool eof_now(int fd)
{
	static uint8_t sink[65536];
	for (;;) {
		ssize_t r = recv(fd, sink, sizeof sink, MSG_DONTWAIT);
		if (r == 0 || (r < 0 && errno == ECONNRESET))
			return true;
		if (r < 0)
			return false;
	}
}

/* Reads and drops whatever fd has until EOF; true if EOF came within ms. */
static bool drains_to_eof(int fd, int ms)
{
	double end = raw_now() + ms / 1000.0;
	static uint8_t sink[65536];
	while (raw_now() < end) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		if (poll(&p, 1, 50) <= 0)
			continue;
		ssize_t r = recv(fd, sink, sizeof sink, MSG_DONTWAIT);
		if (r == 0 || (r < 0 && errno == ECONNRESET))
			return true;
	}
	return false;
}

/* ------------------------------------------------------------ dataout */

static uint8_t pat_a[HOST_A_BLOCKS][BLK], pat_b[BLK], junk[BLK + MAX_BURST];

static struct raw_login dataout_login(const char *name, uint8_t isid)
{
	struct raw_login o = {.initiator = name, .target = target, .isid_tail = isid, .immediate_data = true,
			      .initial_r2t = false, .first_burst = FIRST_BURST, .max_burst = MAX_BURST};
	return o;
}

/* A WRITE of len bytes with SEG bytes of immediate data, unsolicited Data-Out to follow (F clear). */
static uint32_t start_write(struct raw_conn *c, uint32_t len)
{
	uint8_t cdb[6], bhs[BHS_LEN];
	raw_write6(cdb, len);
	uint32_t itt = c->next_itt++;
	raw_command_bhs(c, bhs, DRIVE, cdb, sizeof cdb, CMD_WRITE, len, itt, c->cmd_sn++);
	bhs[1] &= (uint8_t)~FLAG_FINAL;
	raw_send(c, bhs, junk, SEG, SPOIL_NONE);
	return itt;
}

/* The rest of the unsolicited burst, right; then the first R2T, whose TTT and desired length are returned. */
static uint32_t finish_unsolicited(struct raw_conn *c, uint32_t itt, uint32_t *desired)
{
	uint32_t sn = 0;
	for (uint32_t off = SEG; off < FIRST_BURST; off += SEG)
		raw_data_out(c, DRIVE, itt, TAG_NONE, sn++, off, junk + off, SEG, off + SEG == FIRST_BURST);
	static struct raw_pdu r;
	if (!raw_recv(c, &r))
		fail("the target closed the connection instead of sending an R2T");
	if ((r.bhs[0] & OP_MASK) != OP_R2T || get32(r.bhs + F_ITT) != itt)
		fail("expected an R2T for ITT %u, got opcode %02Xh ITT %u", itt, r.bhs[0], get32(r.bhs + F_ITT));
	if (get32(r.bhs + F_OFFSET) != FIRST_BURST || get32(r.bhs + F_DESIRED) == 0 ||
	    get32(r.bhs + F_DESIRED) > MAX_BURST)
		fail("the first R2T asks for offset %u, %u bytes (expected %u, 1..%u)", get32(r.bhs + F_OFFSET),
		     get32(r.bhs + F_DESIRED), FIRST_BURST, MAX_BURST);
	*desired = get32(r.bhs + F_DESIRED);
	return get32(r.bhs + F_TTT);
}

/*
 * After a Data-Out that breaks the data phase of write itt (its offset
 * bad_off): a Reject 04h carrying that header, and the write's CHECK
 * CONDITION ABORTED COMMAND 4Bh/ascq; a ping sent after is answered.
 */
static void expect_violation(struct raw_conn *c, uint32_t itt, uint32_t bad_off, uint32_t bad_sn, uint8_t ascq,
			     const char *what)
{
	uint32_t ping_itt = c->next_itt++;
	if (!raw_ping(c, NULL, 0, ping_itt, SPOIL_NONE))
		fail("%s: the target closed the connection", what);
	bool rejected = false, status = false, pong = false;
	static struct raw_pdu r;
	while (!(rejected && status && pong)) {
		/* Once the ping is answered, what is still missing has 2 s to come. */
		if (pong && peek(c->fd, 2000) != 1)
			fail("%s: %s%s after the ping's answer (a write whose data broke its order must end at once)", what,
			     rejected ? "" : "no Reject 04h", status ? "" : rejected ? "no status" : ", no status");
		if (!raw_recv(c, &r))
			fail("%s: the target closed the connection (Reject %s, status %s)", what, rejected ? "seen" : "not seen",
			     status ? "seen" : "not seen");
		uint8_t op = r.bhs[0] & OP_MASK;
		if (op == OP_REJECT) {
			if (r.bhs[2] != REJECT_PROTOCOL)
				fail("%s: Reject reason %02Xh, expected %02Xh (protocol error)", what, r.bhs[2], REJECT_PROTOCOL);
			if (r.len != BHS_LEN || (r.data[0] & OP_MASK) != OP_DATA_OUT || get32(r.data + F_ITT) != itt ||
			    get32(r.data + F_OFFSET) != bad_off || get32(r.data + F_DATASN) != bad_sn)
				fail("%s: the Reject does not carry the offending Data-Out's header (%u bytes, opcode %02Xh, "
				     "ITT %u, offset %u)", what, r.len, r.data[0], get32(r.data + F_ITT), get32(r.data + F_OFFSET));
			rejected = true;
		} else if (op == OP_SCSI_RSP && get32(r.bhs + F_ITT) == itt) {
			struct raw_status st;
			raw_response(&r, &st);
			if (st.status == GOOD)
				fail("%s: GOOD for a write whose data did not arrive in order", what);
			if (st.status != CHECK_CONDITION || st.key != KEY_ABORTED || st.asc != ASC_DATA_PHASE ||
			    st.ascq != ascq)
				fail("%s: status %02Xh, sense %Xh/%02Xh/%02Xh; expected CHECK CONDITION %Xh/%02Xh/%02Xh", what,
				     st.status, st.key, st.asc, st.ascq, KEY_ABORTED, ASC_DATA_PHASE, ascq);
			status = true;
		} else if (op == OP_NOP_IN && get32(r.bhs + F_ITT) == ping_itt) {
			pong = true;
		} else if (op == OP_R2T && get32(r.bhs + F_ITT) == itt) {
			fail("%s: an R2T for the write after its data phase broke", what);
		} else {
			fail("%s: unexpected opcode %02Xh ITT %u", what, op, get32(r.bhs + F_ITT));
		}
	}
	ok("%s: Reject 04h with the header, CHECK CONDITION %Xh/%02Xh/%02Xh", what, KEY_ABORTED, ASC_DATA_PHASE, ascq);
}

static void still_at(struct raw_conn *c, uint32_t pos, const char *what)
{
	uint32_t now = raw_position(c, DRIVE);
	if (now != pos)
		fail("%s moved the tape from block %u to %u: the drive saw the command", what, pos, now);
}

/*
 * vtld ends a session that breaks the data phase a third time: host B's
 * cases take a new session after every second one (the limit itself is
 * checked last).
 */
static unsigned b_violations;

static void still_at_turn(struct raw_conn *c, const struct raw_login *l, uint32_t pos)
{
	still_at(c, pos, "it");
	if (++b_violations % 2)
		return;
	raw_logout(c);
	raw_connect(c, portal, NULL);
	raw_login(c, l);
	raw_ready(c, DRIVE);
}

static void case_dataout(void)
{
	for (unsigned b = 0; b < HOST_A_BLOCKS; b++)
		for (unsigned i = 0; i < BLK; i++)
			pat_a[b][i] = (uint8_t)(0xA0 ^ b ^ (i * 7) ^ (i >> 11));
	for (unsigned i = 0; i < BLK; i++)
		pat_b[i] = (uint8_t)(0x3C ^ (i * 13) ^ (i >> 9));
	memset(junk, 0xEE, sizeof junk);

	/* Host A writes its blocks from the start of the tape and leaves. */
	struct raw_conn a;
	raw_connect(&a, portal, NULL);
	struct raw_login la = dataout_login("iqn.2026-01.org.vtl:host-a", 1);
	raw_login(&a, &la);
	raw_load(&a, SLOT_FIRST, DRIVE_ELEMENT, DRIVE);
	static const uint8_t rewind[6] = {0x01};
	raw_good(&a, DRIVE, rewind, sizeof rewind, 0, NULL, 0, "REWIND");
	for (unsigned b = 0; b < HOST_A_BLOCKS; b++) {
		struct raw_status st = raw_write(&a, DRIVE, pat_a[b], BLK, &la);
		if (st.status != GOOD)
			fail("host A's WRITE %u: status %02Xh, sense %Xh", b, st.status, st.key);
	}
	raw_logout(&a);
	ok("host A wrote %u blocks of %u KiB and logged out", HOST_A_BLOCKS, BLK >> 10);

	struct raw_conn b;
	raw_connect(&b, portal, NULL);
	struct raw_login lb = dataout_login("iqn.2026-01.org.vtl:host-b", 2);
	raw_login(&b, &lb);
	raw_ready(&b, DRIVE);
	uint32_t pos = raw_position(&b, DRIVE);
	if (pos != HOST_A_BLOCKS)
		fail("host B finds the tape at block %u, expected %u", pos, HOST_A_BLOCKS);
	uint32_t itt, ttt, want;

	itt = start_write(&b, BLK);
	raw_data_out(&b, DRIVE, itt, TAG_NONE, 0, 0, junk, SEG, false);
	expect_violation(&b, itt, 0, 0, ASCQ_DATA_OFFSET, "unsolicited Data-Out repeating the immediate data");
	still_at_turn(&b, &lb, pos);

	itt = start_write(&b, BLK);
	raw_data_out(&b, DRIVE, itt, TAG_NONE, 0, SEG / 2, junk, SEG, false);
	expect_violation(&b, itt, SEG / 2, 0, ASCQ_DATA_OFFSET, "Data-Out overlapping the immediate data");
	still_at_turn(&b, &lb, pos);

	itt = start_write(&b, BLK);
	raw_data_out(&b, DRIVE, itt, TAG_NONE, 0, 2 * SEG, junk, SEG, false);
	expect_violation(&b, itt, 2 * SEG, 0, ASCQ_DATA_OFFSET, "Data-Out leaving a gap after the immediate data");
	still_at_turn(&b, &lb, pos);

	itt = start_write(&b, BLK);
	ttt = finish_unsolicited(&b, itt, &want);
	raw_data_out(&b, DRIVE, itt, ttt, 0, FIRST_BURST, junk, SEG, false);
	raw_data_out(&b, DRIVE, itt, ttt, 1, FIRST_BURST, junk, SEG, false);
	expect_violation(&b, itt, FIRST_BURST, 1, ASCQ_DATA_OFFSET, "an R2T's burst sending its first bytes twice");
	still_at_turn(&b, &lb, pos);

	itt = start_write(&b, BLK);
	ttt = finish_unsolicited(&b, itt, &want);
	raw_data_out(&b, DRIVE, itt, ttt, 0, FIRST_BURST + SEG, junk, SEG, false);
	expect_violation(&b, itt, FIRST_BURST + SEG, 0, ASCQ_DATA_OFFSET, "an R2T answered from beyond its offset");
	still_at_turn(&b, &lb, pos);

	itt = start_write(&b, BLK);
	raw_data_out(&b, DRIVE, itt, TAG_NONE, 0, SEG, junk, SEG, false);
	raw_data_out(&b, DRIVE, itt, TAG_NONE, 1, 2 * SEG, junk, SEG, false);
	raw_data_out(&b, DRIVE, itt, TAG_NONE, 2, 3 * SEG, junk, 2 * SEG, false);
	expect_violation(&b, itt, 3 * SEG, 2, ASCQ_TOO_MUCH_DATA, "unsolicited data beyond FirstBurstLength");
	still_at_turn(&b, &lb, pos);

	enum { SMALL = 40u << 10 };
	itt = start_write(&b, SMALL);
	raw_data_out(&b, DRIVE, itt, TAG_NONE, 0, SEG, junk, 2 * SEG, true);
	expect_violation(&b, itt, SEG, 0, ASCQ_TOO_MUCH_DATA, "unsolicited data beyond the EDTL");
	still_at_turn(&b, &lb, pos);

	itt = start_write(&b, BLK);
	ttt = finish_unsolicited(&b, itt, &want);
	raw_data_out(&b, DRIVE, itt, ttt, 0, FIRST_BURST, junk, want / 2, false);
	raw_data_out(&b, DRIVE, itt, ttt, 1, FIRST_BURST + want / 2, junk, want / 2 + SEG, true);
	expect_violation(&b, itt, FIRST_BURST + want / 2, 1, ASCQ_TOO_MUCH_DATA, "more data than the R2T asked for");
	still_at_turn(&b, &lb, pos);

	itt = start_write(&b, BLK);
	ttt = finish_unsolicited(&b, itt, &want);
	raw_data_out(&b, DRIVE, itt, ttt ^ 0x5A5A, 0, FIRST_BURST, junk, SEG, false);
	expect_violation(&b, itt, FIRST_BURST, 0, ASCQ_INVALID_TTT, "an R2T answered with another TTT");
	still_at_turn(&b, &lb, pos);

	itt = start_write(&b, BLK);
	raw_data_out(&b, DRIVE, itt, 0x1234, 0, SEG, junk, SEG, false);
	expect_violation(&b, itt, SEG, 0, ASCQ_INVALID_TTT, "unsolicited Data-Out with a TTT");
	still_at_turn(&b, &lb, pos);

	itt = start_write(&b, BLK);
	raw_data_out(&b, DRIVE, itt, TAG_NONE, 1, SEG, junk, SEG, false);
	expect_violation(&b, itt, SEG, 1, ASCQ_DATA_PHASE_ERROR, "unsolicited Data-Out starting at DataSN 1");
	still_at_turn(&b, &lb, pos);

	itt = start_write(&b, BLK);
	ttt = finish_unsolicited(&b, itt, &want);
	raw_data_out(&b, DRIVE, itt, ttt, 0, FIRST_BURST, junk, SEG, false);
	raw_data_out(&b, DRIVE, itt, ttt, 2, FIRST_BURST + SEG, junk, SEG, false);
	expect_violation(&b, itt, FIRST_BURST + SEG, 2, ASCQ_DATA_PHASE_ERROR, "an R2T's burst skipping DataSN 1");
	still_at_turn(&b, &lb, pos);

	/* A Data-Out for no write: Reject 09h with its header, no status, the session goes on. */
	raw_data_out(&b, DRIVE, 0x0BAD0BADu, TAG_NONE, 0, 0, junk, SEG, true);
	uint32_t ping_itt = b.next_itt++;
	if (!raw_ping(&b, NULL, 0, ping_itt, SPOIL_NONE))
		fail("the target closed the connection after a stray Data-Out");
	static struct raw_pdu r;
	if (!raw_recv(&b, &r) || (r.bhs[0] & OP_MASK) != OP_REJECT || r.bhs[2] != REJECT_INVALID_FIELD ||
	    r.len != BHS_LEN || get32(r.data + F_ITT) != 0x0BAD0BADu)
		fail("a Data-Out for no write: expected Reject %02Xh with its header, got opcode %02Xh reason %02Xh",
		     REJECT_INVALID_FIELD, r.bhs[0], r.bhs[2]);
	if (!raw_recv(&b, &r) || (r.bhs[0] & OP_MASK) != OP_NOP_IN || get32(r.bhs + F_ITT) != ping_itt)
		fail("after the stray Data-Out's Reject, expected the ping's NOP-In, got opcode %02Xh", r.bhs[0]);
	ok("a Data-Out whose ITT matches no write: Reject 09h with its header, the session goes on");
	still_at(&b, pos, "it");

	/* A session that breaks the data phase a third time is ended: Reject, status, then the connection closes. */
	for (unsigned k = 0; k < 3; k++) {
		itt = start_write(&b, BLK);
		raw_data_out(&b, DRIVE, itt, TAG_NONE, 0, 0, junk, SEG, false);
		if (k < 2) {
			expect_violation(&b, itt, 0, 0, ASCQ_DATA_OFFSET, "a repeated offset");
			continue;
		}
		if (!drains_to_eof(b.fd, 5000))
			fail("a third data phase error in one session: the target kept the connection open");
	}
	ok("a third data phase error in one session: the target closed the connection");
	close(b.fd);
	raw_connect(&b, portal, NULL);
	raw_login(&b, &lb);
	raw_ready(&b, DRIVE);
	still_at(&b, pos, "it");

	/* A good WRITE lands, and the tape holds host A's blocks, host B's, then the end of data. */
	struct raw_status st = raw_write(&b, DRIVE, pat_b, BLK, &lb);
	if (st.status != GOOD)
		fail("host B's good WRITE after the attacks: status %02Xh, sense %Xh/%02Xh/%02Xh", st.status, st.key,
		     st.asc, st.ascq);
	still_at(&b, pos + 1, "nothing but host B's good WRITE");
	raw_good(&b, DRIVE, rewind, sizeof rewind, 0, NULL, 0, "REWIND");
	static uint8_t back[BLK];
	uint8_t rd[6] = {0x08, 0, BLK >> 16, (BLK >> 8) & 0xFF, BLK & 0xFF, 0};
	for (unsigned i = 0; i <= HOST_A_BLOCKS; i++) {
		memset(back, 0, sizeof back);
		st = raw_run(&b, DRIVE, rd, sizeof rd, CMD_READ, back, BLK);
		const uint8_t *want_blk = i < HOST_A_BLOCKS ? pat_a[i] : pat_b;
		if (st.status != GOOD || st.got != BLK || memcmp(back, want_blk, BLK))
			fail("block %u read back: status %02Xh, %u bytes, %s", i, st.status, st.got,
			     st.status == GOOD ? "not what was written" : "");
	}
	st = raw_run(&b, DRIVE, rd, sizeof rd, CMD_READ, back, BLK);
	if (st.status != CHECK_CONDITION || st.key != KEY_BLANK_CHECK)
		fail("after the last good block: status %02Xh, sense key %Xh; expected BLANK CHECK (end of data)", st.status,
		     st.key);
	ok("read back: host A's %u blocks, host B's good block, then end of data; no attack's bytes anywhere",
	   HOST_A_BLOCKS);
	raw_logout(&b);
}

/* ------------------------------------------------------------- window */

/* Collects the PDUs of c until none comes for ms; counts R2Ts; fails on an R2T beyond max_sn or a moved MaxCmdSN. */
static int count_r2ts(struct raw_conn *c, uint32_t first_itt, uint32_t first_sn, uint32_t max_sn, int ms)
{
	int n = 0;
	static struct raw_pdu r;
	while (peek(c->fd, ms) == 1) {
		if (!raw_recv(c, &r))
			fail("the target closed the connection during the R2T pile");
		uint8_t op = r.bhs[0] & OP_MASK;
		if (op != OP_R2T)
			fail("during the R2T pile: opcode %02Xh ITT %u status %02Xh", op, get32(r.bhs + F_ITT), r.bhs[3]);
		uint32_t sn = first_sn + (get32(r.bhs + F_ITT) - first_itt);
		if ((int32_t)(sn - max_sn) > 0)
			fail("an R2T for CmdSN %u, beyond MaxCmdSN %u: the command should have been ignored", sn, max_sn);
		if (c->max_cmd_sn != max_sn)
			fail("MaxCmdSN moved from %u to %u while no command completed", max_sn, c->max_cmd_sn);
		n++;
	}
	return n;
}

static void case_window(void)
{
	struct raw_conn c;
	raw_connect(&c, portal, NULL);
	struct raw_login o = attack_login("iqn.2026-01.org.vtl:piler", target, 3, true);
	raw_login(&c, &o);
	raw_load(&c, SLOT_FIRST, DRIVE_ELEMENT, DRIVE);
	uint32_t pos = raw_position(&c, DRIVE);
	long base = vtld_rss_kib(vtld_pid);
	uint32_t exp = c.cmd_sn, max = c.max_cmd_sn;
	if (max - exp + 1 != CMD_WINDOW)
		fail("the command window is ExpCmdSN %u .. MaxCmdSN %u: %u commands, expected %u", exp, max, max - exp + 1,
		     CMD_WINDOW);
	uint32_t first_itt;
	attack_r2t_pile(&c, DRIVE, ATTACK_PILE_CMDS, &first_itt);
	int n = count_r2ts(&c, first_itt, exp, max, QUIET_MS);
	if (n != CMD_WINDOW)
		fail("%d WRITEs of 1 MiB left waiting: %d R2Ts, expected %d (one per command inside MaxCmdSN)",
		     ATTACK_PILE_CMDS, n, CMD_WINDOW);
	long peak = vtld_rss_kib(vtld_pid);
	ok("%d WRITEs of 1 MiB never answered: R2Ts for the %d inside the window only, MaxCmdSN stays %u", ATTACK_PILE_CMDS,
	   n, max);
	if (peak - base > (long)(CMD_WINDOW * (ATTACK_PILE_LEN >> 10)) + RSS_SLACK_KIB)
		fail("vtld grew by %ld KiB for the pile (bound %u KiB: the window's buffers and slack)", peak - base,
		     CMD_WINDOW * (ATTACK_PILE_LEN >> 10) + RSS_SLACK_KIB);
	ok("vtld's VmRSS %ld KiB -> %ld KiB (bound: +%u KiB)", base, peak,
	   CMD_WINDOW * (ATTACK_PILE_LEN >> 10) + RSS_SLACK_KIB);

	/* An immediate command while the session holds its window: TASK SET FULL. */
	static const uint8_t tur[6] = {0};
	uint8_t bhs[BHS_LEN];
	uint32_t itt = c.next_itt++;
	raw_command_bhs(&c, bhs, DRIVE, tur, sizeof tur, 0, 0, itt, c.cmd_sn);
	bhs[0] |= OP_IMMEDIATE;
	raw_send(&c, bhs, NULL, 0, SPOIL_NONE);
	struct raw_status st = raw_wait(&c, itt, NULL, 0);
	if (st.status != TASK_SET_FULL)
		fail("an immediate TEST UNIT READY with the window full: status %02Xh, expected %02Xh (TASK SET FULL)",
		     st.status, TASK_SET_FULL);
	ok("an immediate command with the window full: TASK SET FULL");

	close(c.fd);

	struct raw_conn d;
	raw_connect(&d, portal, NULL);
	raw_login(&d, &o);
	raw_ready(&d, DRIVE);
	still_at(&d, pos, "the pile of unanswered WRITEs");
	exp = d.cmd_sn;
	max = d.max_cmd_sn;
	itt = d.next_itt++;
	uint32_t ttt = raw_write_until_r2t(&d, DRIVE, itt, d.cmd_sn++, ATTACK_PILE_LEN);
	if (d.max_cmd_sn != max)
		fail("MaxCmdSN moved from %u to %u on a command's arrival", max, d.max_cmd_sn);
	attack_r2t_pile(&d, DRIVE, CMD_WINDOW - 1, &first_itt);
	n = count_r2ts(&d, first_itt, exp + 1, max, QUIET_MS / 2);
	if (n != CMD_WINDOW - 1)
		fail("a full window of WRITEs: %d R2Ts for the %d after the first", n, CMD_WINDOW - 1);
	/* The first WRITE answered, R2T after R2T: it completes, and only then does MaxCmdSN move, by one. */
	static uint8_t data[ATTACK_PILE_LEN];
	static struct raw_pdu r;
	memset(data, 0x11, sizeof data);
	uint32_t off = 0, dsn = 0, want = MAX_BURST;
	for (;;) {
		for (uint32_t at = off; at < off + want;) {
			uint32_t len = off + want - at < SEG * 8 ? off + want - at : SEG * 8;
			raw_data_out(&d, DRIVE, itt, ttt, dsn++, at, data + at, len, at + len == off + want);
			at += len;
		}
		do {
			if (!raw_recv(&d, &r))
				fail("the target closed the connection while the first WRITE got its data");
		} while ((r.bhs[0] & OP_MASK) == OP_R2T && get32(r.bhs + F_ITT) != itt);
		if ((r.bhs[0] & OP_MASK) == OP_SCSI_RSP && get32(r.bhs + F_ITT) == itt)
			break;
		if ((r.bhs[0] & OP_MASK) != OP_R2T)
			fail("while answering the first WRITE: opcode %02Xh ITT %u", r.bhs[0], get32(r.bhs + F_ITT));
		ttt = get32(r.bhs + F_TTT);
		off = get32(r.bhs + F_OFFSET);
		want = get32(r.bhs + F_DESIRED);
		dsn = 0;
	}
	raw_response(&r, &st);
	if (st.status != GOOD)
		fail("the answered WRITE: status %02Xh, sense %Xh/%02Xh/%02Xh", st.status, st.key, st.asc, st.ascq);
	uint32_t ping_itt = d.next_itt++;
	if (!raw_ping(&d, NULL, 0, ping_itt, SPOIL_NONE) || !raw_recv(&d, &r) || (r.bhs[0] & OP_MASK) != OP_NOP_IN)
		fail("no answer to a ping after the WRITE completed");
	if (d.max_cmd_sn != max + 1)
		fail("after one of %u commands completed, MaxCmdSN is %u, expected %u", CMD_WINDOW, d.max_cmd_sn, max + 1);
	ok("one WRITE answered: GOOD, and MaxCmdSN moves from %u to %u", max, max + 1);
	close(d.fd);

	struct raw_conn e;
	raw_connect(&e, portal, NULL);
	raw_login(&e, &o);
	raw_ready(&e, DRIVE);
	still_at(&e, pos + 1, "the one answered WRITE");
	ok("the piled WRITEs ended with their sessions; only the answered one is on tape");
	raw_logout(&e);
}

/* ------------------------------------------------------------ buffers */

/* Sends n WRITEs of 1 MiB; returns how many got an R2T (the rest must get TASK SET FULL). */
static int pile_until_full(struct raw_conn *c, int n, const char *who)
{
	uint32_t first_itt;
	attack_r2t_pile(c, DRIVE, n, &first_itt);
	int r2ts = 0, full = 0;
	static struct raw_pdu r;
	while (r2ts + full < n) {
		if (peek(c->fd, 3000) != 1 || !raw_recv(c, &r))
			fail("%s: %d R2Ts and %d TASK SET FULL for %d WRITEs, then nothing", who, r2ts, full, n);
		uint8_t op = r.bhs[0] & OP_MASK;
		if (op == OP_R2T) {
			if (full)
				fail("%s: an R2T after a TASK SET FULL", who);
			r2ts++;
		} else if (op == OP_SCSI_RSP && r.bhs[3] == TASK_SET_FULL) {
			full++;
		} else {
			fail("%s: opcode %02Xh status %02Xh for a WRITE", who, op, r.bhs[3]);
		}
	}
	return r2ts;
}

static void case_buffers(void)
{
	enum { SESSION_MIB = 8, TOTAL_MIB = 12 };
	struct raw_conn a, b;
	struct raw_login la = attack_login("iqn.2026-01.org.vtl:buffer-a", target, 4, true);
	struct raw_login lb = attack_login("iqn.2026-01.org.vtl:buffer-b", target, 5, true);
	raw_connect(&a, portal, "127.0.0.10");
	raw_login(&a, &la);
	raw_load(&a, SLOT_FIRST, DRIVE_ELEMENT, DRIVE);
	int n = pile_until_full(&a, SESSION_MIB + 2, "session A");
	if (n != SESSION_MIB)
		fail("session A: %d WRITEs of 1 MiB held, expected %d (session_buffer_max = 8M)", n, SESSION_MIB);
	ok("session A: %d WRITEs of 1 MiB held, the next ones TASK SET FULL (session_buffer_max)", n);
	raw_connect(&b, portal, "127.0.0.11");
	raw_login(&b, &lb);
	raw_ready(&b, DRIVE);
	n = pile_until_full(&b, TOTAL_MIB - SESSION_MIB + 2, "session B");
	if (n != TOTAL_MIB - SESSION_MIB)
		fail("session B: %d WRITEs of 1 MiB held, expected %d (buffer_max = 12M, A holds 8M)", n,
		     TOTAL_MIB - SESSION_MIB);
	ok("session B: %d held, then TASK SET FULL (buffer_max for all sessions)", n);
	close(a.fd);
	for (int tries = 0;; tries++) {
		if (tries == 20)
			fail("session A is gone, yet session B still gets TASK SET FULL");
		usleep(250000);
		if (pile_until_full(&b, 1, "session B after A left") == 1)
			break;
	}
	ok("session A gone: its room is B's");
	close(b.fd);
}

/* ---------------------------------------------------------------- nop */

static void case_nop(void)
{
	long base = vtld_rss_kib(vtld_pid);
	struct raw_conn f;
	const uint64_t limit = ATTACK_FLOOD_MAX;
	double t0 = raw_now();
	uint64_t sent = attack_nop_flood(&f, portal, "iqn.2026-01.org.vtl:flooder", limit);
	long peak = vtld_rss_kib(vtld_pid);
	if (sent >= limit)
		fail("vtld read %llu MiB of NOP-Outs from a connection that never reads its answers",
		     (unsigned long long)(sent >> 20));
	ok("a never-read discovery session flooding NOP-Outs stalled after %llu KiB (%.1f s)",
	   (unsigned long long)(sent >> 10), raw_now() - t0);
	if (peak - base > RSS_SLACK_KIB)
		fail("vtld grew by %ld KiB during the flood (bound %d KiB)", peak - base, RSS_SLACK_KIB);
	ok("vtld's VmRSS %ld KiB -> %ld KiB (bound: +%d KiB)", base, peak, RSS_SLACK_KIB);

	/* Meanwhile a normal session is served, and a ping above nop_data_max is refused. */
	struct raw_conn c;
	raw_connect(&c, portal, NULL);
	struct raw_login o = attack_login("iqn.2026-01.org.vtl:pinger", target, 6, true);
	raw_login(&c, &o);
	raw_ready(&c, RAW_CHANGER);
	static uint8_t ping[ATTACK_NOP_DATA + 1];
	memset(ping, 0x42, sizeof ping);
	uint32_t itt = c.next_itt++;
	raw_ping(&c, ping, sizeof ping, itt, SPOIL_NONE);
	static struct raw_pdu r;
	if (!raw_recv(&c, &r) || (r.bhs[0] & OP_MASK) != OP_REJECT || r.bhs[2] != REJECT_INVALID_FIELD ||
	    r.len != BHS_LEN || get32(r.data + F_ITT) != itt)
		fail("a ping of %u bytes (nop_data_max 4096): expected Reject %02Xh with its header, got opcode %02Xh "
		     "reason %02Xh", (unsigned)sizeof ping, REJECT_INVALID_FIELD, r.bhs[0], r.bhs[2]);
	itt = c.next_itt++;
	raw_ping(&c, ping, ATTACK_NOP_DATA, itt, SPOIL_NONE);
	if (!raw_recv(&c, &r) || (r.bhs[0] & OP_MASK) != OP_NOP_IN || get32(r.bhs + F_ITT) != itt ||
	    r.len != ATTACK_NOP_DATA)
		fail("a ping of %u bytes: expected its echo, got opcode %02Xh", ATTACK_NOP_DATA, r.bhs[0]);
	ok("a ping of %u bytes: Reject 09h; one of %u bytes is echoed", (unsigned)sizeof ping, ATTACK_NOP_DATA);
	raw_logout(&c);
	close(f.fd);
}

/* ------------------------------------------------------------- logins */

/* A TCP connection from src that says nothing. */
static int idle_from(const char *src)
{
	int fd = raw_dial(portal, src);
	if (fd < 0)
		fail("cannot connect from %s: %s", src, strerror(errno));
	usleep(30000); /* so that vtld accepts them in this order */
	return fd;
}

static void expect_open(const int *fds, int from, int to, bool open, const char *what)
{
	for (int i = from; i < to; i++) {
		int p = peek(fds[i], open ? 0 : 500);
		if (open && p == -1)
			fail("%s: connection %d was closed", what, i);
		if (!open && p != -1)
			fail("%s: connection %d is still open", what, i);
	}
}

static int try_login_from(const char *src, const char *name, uint8_t isid, struct raw_conn *c)
{
	raw_connect(c, portal, src);
	struct raw_login o = attack_login(name, target, isid, true);
	static struct raw_pdu r;
	return raw_try_login(c, &o, &r);
}

static void case_logins(void)
{
	int fds[16];
	/* Per address (max_logins_per_address = 4): the fifth and sixth close the two oldest. */
	for (int i = 0; i < 6; i++)
		fds[i] = idle_from("127.0.0.2");
	expect_open(fds, 0, 2, false, "6 idle connections from one address (cap 4)");
	expect_open(fds, 2, 6, true, "6 idle connections from one address (cap 4)");
	ok("6 idle connections from 127.0.0.2: the 2 oldest closed, 4 left");
	struct raw_conn c;
	int st = try_login_from("127.0.0.2", "iqn.2026-01.org.vtl:real-host", 7, &c);
	if (st)
		fail("a real host behind 4 idle connections of its address: login status %04Xh", st);
	raw_ready(&c, RAW_CHANGER);
	raw_logout(&c);
	ok("a real host from the same address still logs in");
	for (int i = 0; i < 6; i++)
		close(fds[i]);

	/* Globally (max_logins = 8): 10 from 3 addresses close the 2 oldest. */
	const char *srcs[] = {"127.0.0.3", "127.0.0.3", "127.0.0.3", "127.0.0.4", "127.0.0.4",
			      "127.0.0.4", "127.0.0.5", "127.0.0.5", "127.0.0.5", "127.0.0.6"};
	usleep(200000);
	for (int i = 0; i < 10; i++)
		fds[i] = idle_from(srcs[i]);
	expect_open(fds, 0, 2, false, "10 idle connections (cap 8)");
	expect_open(fds, 2, 10, true, "10 idle connections (cap 8)");
	ok("10 idle connections from 4 addresses: the 2 oldest closed, 8 left");
	st = try_login_from("127.0.0.7", "iqn.2026-01.org.vtl:real-host", 8, &c);
	if (st)
		fail("a real host behind 8 idle connections: login status %04Xh", st);
	raw_logout(&c);
	ok("a real host still logs in");
	for (int i = 0; i < 10; i++)
		close(fds[i]);

	/* login_timeout = 2: a silent connection, and one whose login never finishes, are closed. */
	usleep(200000);
	int silent = idle_from("127.0.0.8");
	struct raw_conn half;
	raw_connect(&half, portal, "127.0.0.9");
	double t0 = raw_now();
	char text[256];
	int n = snprintf(text, sizeof text, "InitiatorName=iqn.2026-01.org.vtl:slow%cTargetName=%s%cSessionType=Normal%c", 0,
			 target, 0, 0);
	uint8_t bhs[BHS_LEN] = {OP_IMMEDIATE | OP_LOGIN_REQ, STAGE_OPERATIONAL << 2}; /* T=0: more to come */
	bhs[8] = ISID_RANDOM;
	put32(bhs + F_ITT, 1);
	raw_send(&half, bhs, (const uint8_t *)text, (uint32_t)n, SPOIL_NONE);
	static struct raw_pdu r;
	if (!raw_recv(&half, &r) || (r.bhs[0] & OP_MASK) != OP_LOGIN_RSP || r.bhs[LOGIN_STATUS_CLASS])
		fail("the first step of a login: opcode %02Xh status class %u", r.bhs[0], r.bhs[LOGIN_STATUS_CLASS]);
	if (!drains_to_eof(half.fd, 5000) || !drains_to_eof(silent, 1000))
		fail("a login left unfinished for 5 s is still open (login_timeout = 2)");
	double took = raw_now() - t0;
	if (took < 1.5)
		fail("an unfinished login was closed after %.1f s, before login_timeout (2 s)", took);
	ok("an unfinished login and a silent connection closed after %.1f s (login_timeout = 2)", took);
	close(half.fd);
	close(silent);

	/* Sessions: 2 per address, 4 in all; beyond: 03/02; room comes back with a logout. */
	struct raw_conn s[6];
	const char *ss[] = {"127.0.0.2", "127.0.0.2", "127.0.0.3", "127.0.0.4"};
	for (int i = 0; i < 4; i++) {
		char name[64];
		snprintf(name, sizeof name, "iqn.2026-01.org.vtl:session-%d", i);
		if ((st = try_login_from(ss[i], name, (uint8_t)(10 + i), &s[i])))
			fail("session %d of 4 from %s: login status %04Xh", i, ss[i], st);
	}
	st = try_login_from("127.0.0.2", "iqn.2026-01.org.vtl:session-x", 20, &s[4]);
	if (st != LOGIN_OUT_OF_RESOURCES)
		fail("a third session from one address (max_sessions_per_address = 2): status %04Xh, expected %04Xh", st,
		     LOGIN_OUT_OF_RESOURCES);
	close(s[4].fd);
	ok("a third session from one address: login status 03/02 (out of resources)");
	st = try_login_from("127.0.0.5", "iqn.2026-01.org.vtl:session-y", 21, &s[4]);
	if (st != LOGIN_OUT_OF_RESOURCES)
		fail("a fifth session (max_sessions = 4): status %04Xh, expected %04Xh", st, LOGIN_OUT_OF_RESOURCES);
	close(s[4].fd);
	ok("a fifth session: login status 03/02");
	raw_logout(&s[0]);
	for (int tries = 0;; tries++) {
		st = try_login_from("127.0.0.5", "iqn.2026-01.org.vtl:session-y", 21, &s[4]);
		if (!st)
			break;
		close(s[4].fd);
		if (tries == 10)
			fail("a session logged out, yet a new one still gets status %04Xh", st);
		usleep(200000);
	}
	ok("after a logout, the fifth logs in");
	for (int i = 1; i < 5; i++)
		raw_logout(&s[i]);
}

/* ------------------------------------------------------------- emfile */

/* utime + stime of vtld in clock ticks (/proc/PID/stat fields 14 and 15). */
static long cpu_ticks(void)
{
	char path[64], buf[1024];
	snprintf(path, sizeof path, "/proc/%d/stat", vtld_pid);
	FILE *f = fopen(path, "r");
	if (!f)
		fail("cannot read %s", path);
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = 0;
	const char *p = strrchr(buf, ')');
	long ut = 0, st = 0;
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %ld %ld", &ut, &st) != 2)
		fail("cannot parse %s", path);
	return ut + st;
}

/* How many descriptors vtld has open (/proc/PID/fd). */
static int fd_count(void)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/fd", vtld_pid);
	DIR *d = opendir(path);
	if (!d)
		fail("cannot read %s", path);
	int n = 0;
	for (struct dirent *e; (e = readdir(d));)
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

/* vtld's soft limit on open descriptors (/proc/PID/limits, "Max open files"). */
static int fd_limit(void)
{
	char path[64], line[256];
	snprintf(path, sizeof path, "/proc/%d/limits", vtld_pid);
	FILE *f = fopen(path, "r");
	int lim = -1;
	if (!f)
		fail("cannot read %s", path);
	while (fgets(line, sizeof line, f))
		if (!strncmp(line, "Max open files", 14))
			lim = atoi(line + 14);
	fclose(f);
	if (lim <= 0)
		fail("no descriptor limit in %s", path);
	return lim;
}

static void case_emfile(void)
{
	enum { CONNS = 100, MEASURE_S = 3 };
	static int fds[CONNS];
	if (attack_idle_tcp(portal, 40, CONNS, fds) == 0)
		fail("no connection attempt could be started");
	usleep(500000);
	int open_fds = fd_count(), limit = fd_limit();
	if (open_fds < limit - 1)
		fail("vtld holds %d descriptors of its %d: the attempts did not exhaust them", open_fds, limit);
	ok("vtld holds %d descriptors, its limit %d", open_fds, limit);
	long hz = sysconf(_SC_CLK_TCK), t0 = cpu_ticks();
	sleep(MEASURE_S);
	long used = cpu_ticks() - t0;
	double frac = (double)used / (double)hz / MEASURE_S;
	ok("%d connections with vtld out of descriptors: vtld used %.2f s of CPU in %d s", CONNS, (double)used / hz,
	   MEASURE_S);
	if (frac > 0.1)
		fail("vtld spins without descriptors: %.0f %% of a CPU for %d s", frac * 100, MEASURE_S);
	for (int i = 0; i < CONNS; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	for (int tries = 0;; tries++) {
		int fd = raw_dial(portal, NULL);
		if (fd >= 0) {
			struct raw_conn c;
			memset(&c, 0, sizeof c);
			c.fd = fd;
			c.cmd_sn = c.next_itt = 1;
			struct raw_login o = attack_login("iqn.2026-01.org.vtl:after-emfile", target, 30, true);
			static struct raw_pdu r;
			struct timeval tv = {.tv_sec = 2};
			setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
			/* A connection vtld could not accept stays in its backlog: wait for an answer or a close. */
			if (peek(fd, 0) != -1) {
				pid_t child = fork();
				if (child == 0) {
					_exit(raw_try_login(&c, &o, &r) == 0 ? 0 : 1);
				}
				int ws = 0;
				waitpid(child, &ws, 0);
				if (WIFEXITED(ws) && WEXITSTATUS(ws) == 0) {
					close(fd);
					break;
				}
			}
			close(fd);
		}
		if (tries == 20)
			fail("the connections are gone, yet no host can log in");
		usleep(500000);
	}
	ok("the connections gone, a host logs in again");
}

/* ----------------------------------------------------------- identity */

#define SAME_NAME "iqn.2026-01.org.vtl:shared-name"

static struct raw_login ident(uint8_t isid)
{
	return attack_login(SAME_NAME, target, isid, false); /* immediate data: PR OUT parameters in one PDU */
}

/* TEST UNIT READY past unit attentions; returns the status it settles on. */
static struct raw_status tur_settled(struct raw_conn *c, int lun)
{
	static const uint8_t tur[6] = {0};
	struct raw_status st = {0};
	for (int i = 0; i < RAW_TUR_TRIES; i++) {
		st = raw_run(c, lun, tur, sizeof tur, 0, NULL, 0);
		if (!(st.status == CHECK_CONDITION && st.key == KEY_UNIT_ATTENTION))
			break;
	}
	return st;
}

static struct raw_status unload(struct raw_conn *c, bool load_it)
{
	const uint8_t cdb[6] = {0x1B, 0, 0, 0, load_it ? 1 : 0, 0};
	return raw_run(c, DRIVE, cdb, sizeof cdb, 0, NULL, 0);
}

static void pr_register(struct raw_conn *c, uint64_t old_key, uint64_t new_key)
{
	uint8_t cdb[10] = {0x5F, 0x00, 0, 0, 0, 0, 0, 0, 24, 0};
	uint8_t p[24] = {0};
	for (int i = 0; i < 8; i++) {
		p[i] = (uint8_t)(old_key >> (56 - 8 * i));
		p[8 + i] = (uint8_t)(new_key >> (56 - 8 * i));
	}
	raw_good(c, DRIVE, cdb, sizeof cdb, CMD_WRITE, p, sizeof p, "PERSISTENT RESERVE OUT, REGISTER");
}

/* Whether READ FULL STATUS lists key with the iSCSI TransportID of SAME_NAME and ISID tail isid. */
static void expect_transport_id(const uint8_t *b, uint32_t got, uint64_t key, uint8_t isid)
{
	char want[128];
	snprintf(want, sizeof want, "%s,i,0x%02x%02x%02x%02x%02x%02x", SAME_NAME, ISID_RANDOM, 0, 0, 0x12, 0x34, isid);
	uint32_t end = 8 + get32(b + 4);
	if (end > got)
		end = got;
	for (uint32_t at = 8; at + 24 <= end;) {
		uint64_t k = (uint64_t)get32(b + at) << 32 | get32(b + at + 4);
		uint32_t tid_len = get32(b + at + 20);
		const uint8_t *tid = b + at + 24;
		if (at + 24 + tid_len > end)
			break;
		if (k == key) {
			if (tid_len < 4 || tid[0] != 0x45)
				fail("READ FULL STATUS: TransportID byte 0 is %02Xh, expected 45h (format 01b, iSCSI)",
				     tid_len ? tid[0] : 0);
			uint32_t n = (uint32_t)tid[2] << 8 | tid[3];
			if (n % 4 || 4 + n > tid_len || strncasecmp((const char *)tid + 4, want, n) ||
			    strlen(want) >= n || tid[4 + strlen(want)] != 0)
				fail("READ FULL STATUS: TransportID '%.*s', expected '%s'", (int)n, (const char *)tid + 4, want);
			return;
		}
		at += 24 + tid_len;
	}
	fail("READ FULL STATUS does not list the key %016llX", (unsigned long long)key);
}

static void case_identity(void)
{
	struct raw_conn s1, s2, s3, s4;
	struct raw_login l1 = ident(0x01), l2 = ident(0x02), l3 = ident(0x03);
	raw_connect(&s1, portal, NULL);
	raw_login(&s1, &l1);
	raw_load(&s1, SLOT_FIRST, DRIVE_ELEMENT, DRIVE);
	raw_connect(&s2, portal, NULL);
	raw_login(&s2, &l2);
	tur_settled(&s2, DRIVE);

	/* TransportIDs: the same name with two ISIDs is two registrants. */
	const uint64_t k1 = 0x1111222233334444ull, k2 = 0x5555666677778888ull;
	pr_register(&s1, 0, k1);
	pr_register(&s2, 0, k2);
	uint8_t cdb[10] = {0x5E, 0x03, 0, 0, 0, 0, 0, 0x10, 0x00, 0};
	static uint8_t fs[4096];
	struct raw_status st = raw_good(&s1, DRIVE, cdb, sizeof cdb, CMD_READ, fs, sizeof fs, "READ FULL STATUS");
	expect_transport_id(fs, st.got, k1, 0x01);
	expect_transport_id(fs, st.got, k2, 0x02);
	ok("READ FULL STATUS: iSCSI TransportIDs '%s,i,0x800000123401' and '...02'", SAME_NAME);
	pr_register(&s1, k1, 0);
	pr_register(&s2, k2, 0);

	/* Same name, another ISID: another nexus. */
	static const uint8_t prevent[6] = {0x1E, 0, 0, 0, 1, 0}, reserve[6] = {0x16}, release[6] = {0x17};
	raw_good(&s1, DRIVE, prevent, sizeof prevent, 0, NULL, 0, "PREVENT MEDIUM REMOVAL");
	raw_good(&s1, DRIVE, reserve, sizeof reserve, 0, NULL, 0, "RESERVE(6)");
	st = tur_settled(&s2, DRIVE);
	if (st.status != RESERVATION_CONFLICT)
		fail("same name, another ISID, on a drive the first reserved: status %02Xh, expected %02Xh", st.status,
		     RESERVATION_CONFLICT);
	ok("same name, another ISID: RESERVATION CONFLICT on the drive the first reserved");
	raw_logout(&s2);
	raw_connect(&s3, portal, NULL);
	raw_login(&s3, &l3);
	st = tur_settled(&s3, DRIVE);
	if (st.status != RESERVATION_CONFLICT)
		fail("after the other ISID's logout, the first session's reservation is gone (status %02Xh)", st.status);
	raw_good(&s1, DRIVE, release, sizeof release, 0, NULL, 0, "RELEASE(6)");
	st = unload(&s3, false);
	if (st.status != CHECK_CONDITION || st.key != KEY_ILLEGAL || st.asc != ASC_REMOVAL_PREVENTED ||
	    st.ascq != ASCQ_REMOVAL_PREVENTED)
		fail("after the other ISID's logout, an unload: status %02Xh, sense %Xh/%02Xh/%02Xh; the first session's "
		     "PREVENT should hold (5/53/02)", st.status, st.key, st.asc, st.ascq);
	raw_good(&s1, DRIVE, reserve, sizeof reserve, 0, NULL, 0, "RESERVE(6)");
	ok("its logout released nothing of the first: RESERVE and PREVENT still hold");

	/* Same name and ISID, TSIH 0: reinstatement. The old session has a WRITE waiting for its R2T's data. */
	uint32_t pos = raw_position(&s1, DRIVE); /* the holder of the reservation may ask */
	uint32_t itt = s1.next_itt++;
	(void)raw_write_until_r2t(&s1, DRIVE, itt, s1.cmd_sn++, BLK);
	raw_connect(&s4, portal, NULL);
	raw_login(&s4, &l1);
	if (!eof_now(s1.fd)) {
		if (drains_to_eof(s1.fd, 2000))
			fail("reinstatement: the old connection was closed only after the new login's final response");
		fail("reinstatement: the old connection is still open after the new login");
	}
	close(s1.fd);
	ok("same name and ISID: the old connection saw EOF before the new login's final response");
	st = tur_settled(&s3, DRIVE);
	if (st.status != GOOD)
		fail("after reinstatement, another nexus's TEST UNIT READY: status %02Xh (the old RESERVE should be gone)",
		     st.status);
	still_at(&s3, pos, "the old session's WRITE that waited for its data");
	st = unload(&s3, false);
	if (st.status != GOOD)
		fail("after reinstatement, an unload: status %02Xh, sense %Xh/%02Xh/%02Xh (the old PREVENT should be gone)",
		     st.status, st.key, st.asc, st.ascq);
	st = unload(&s3, true);
	if (st.status != GOOD)
		fail("reloading the cartridge: status %02Xh, sense %Xh", st.status, st.key);
	ok("the old session's RESERVE and PREVENT MEDIUM REMOVAL went with it (I_T nexus loss)");
	st = tur_settled(&s4, DRIVE);
	if (st.status != GOOD)
		fail("the reinstated session's TEST UNIT READY: status %02Xh", st.status);
	memset(pat_b, 0x77, sizeof pat_b);
	st = raw_write(&s4, DRIVE, pat_b, 4096, &l1);
	if (st.status != GOOD)
		fail("a WRITE in the reinstated session: status %02Xh, sense %Xh", st.status, st.key);
	ok("the old session's waiting WRITE ended unwritten; the new session writes");
	raw_logout(&s4);
	raw_logout(&s3);
}

/* ------------------------------------------------------------- stream */

/*
 * One measurement: ROUNDS attacked intervals, each between two quiet ones
 * (Q A Q A ... Q); each attacked rate is compared with the mean of the quiet
 * ones on either side, which cancels the drift of a shared machine's load.
 * Returns the median of those ratios; *peak gets vtld's largest VmRSS.
 */
static double stream_measure(struct raw_conn *g, const struct raw_login *o, long *peak)
{
	enum { ROUNDS = 6 }; /* a median of six: one interval a shared machine's load sinks moves it little */
	const double interval = 0.7;
	double quiet[ROUNDS + 1], loud[ROUNDS], ratio[ROUNDS];
	quiet[0] = stream_for(g, DRIVE2, o, true, interval, NULL);
	for (int i = 0; i < ROUNDS; i++) {
		double t0 = raw_now();
		pid_t idle = attack_spawn(ATTACK_IDLE_TCP, 200, portal, target, DRIVE, 20);
		pid_t flood = attack_spawn(ATTACK_NOP_FLOOD, 1, portal, target, DRIVE, 0);
		pid_t pile = attack_spawn(ATTACK_R2T_PILE, 1, portal, target, DRIVE, 1);
		double t1 = raw_now();
		loud[i] = stream_for(g, DRIVE2, o, true, interval, NULL);
		long rss = vtld_rss_kib(vtld_pid);
		if (rss > *peak)
			*peak = rss;
		attack_end(idle);
		attack_end(flood);
		attack_end(pile);
		usleep(200000); /* their connections close */
		quiet[i + 1] = stream_for(g, DRIVE2, o, true, interval, NULL);
		ratio[i] = loud[i] / ((quiet[i] + quiet[i + 1]) / 2);
		printf("   round %d: quiet %.0f, attacked %.0f, quiet %.0f MB/s: ratio %.2f; vtld VmRSS %ld KiB "
		       "(attack set up in %.1f s, round %.1f s)\n",
		       i + 1, quiet[i], loud[i], quiet[i + 1], ratio[i], rss, t1 - t0, raw_now() - t0);
	}
	return median(ratio, ROUNDS);
}

static void case_stream(void)
{
	enum { ATTEMPTS = 3 };
	struct raw_conn g;
	raw_connect(&g, portal, NULL);
	struct raw_login o = attack_login("iqn.2026-01.org.vtl:good-host", target, 40, false);
	raw_login(&g, &o);
	raw_load(&g, SLOT_FIRST + 1, DRIVE_ELEMENT + 1, DRIVE2);
	(void)stream_for(&g, DRIVE2, &o, true, 0.5, NULL); /* warm up: the cartridge's first segment */
	attack_wait_stall = false; /* the flood's ramp is part of what the host must bear (and quicker to set up) */
	long base = vtld_rss_kib(vtld_pid), peak = base;
	long bound = CMD_WINDOW * (long)(ATTACK_PILE_LEN >> 10) + 2 * RSS_SLACK_KIB;
	/*
	 * Another measurement only when one falls short: load from elsewhere (on 2 cores the attackers
	 * themselves) can sink one, a target that lets them starve the host sinks every one.
	 */
	double r = 0;
	for (int a = 0; a < ATTEMPTS && r < 0.9; a++) {
		r = stream_measure(&g, &o, &peak);
		ok("streaming WRITEs of %u KiB under attack (200 idle connections, a never-read NOP-Out flood, a pile of "
		   "200 unanswered 1 MiB WRITEs): median ratio to the quiet rate %.2f (measurement %d)",
		   STREAM_BLOCK >> 10, r, a + 1);
	}
	ok("vtld's VmRSS %ld KiB -> peak %ld KiB (bound: +%ld KiB)", base, peak, bound);
	if (peak - base > bound)
		fail("vtld grew by %ld KiB under attack (bound %ld KiB)", peak - base, bound);
	if (r < 0.9)
		fail("the well-behaved host kept %.0f %% of its quiet rate under attack (at least 90 %%)", 100 * r);
	raw_logout(&g);
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: iscsi_hostile dataout|window|buffers|nop|logins|emfile|identity|stream PORTAL "
				"TARGET-IQN [VTLD-PID]\n");
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	portal = argv[2];
	target = argv[3];
	vtld_pid = argc > 4 ? atoi(argv[4]) : 0;
	static const struct {
		const char *name;
		void (*run)(void);
		bool pid;
	} cases[] = {
		{"dataout", case_dataout, false}, {"window", case_window, true},   {"buffers", case_buffers, false},
		{"nop", case_nop, true},          {"logins", case_logins, false},  {"emfile", case_emfile, true},
		{"identity", case_identity, false}, {"stream", case_stream, true},
	};
	for (size_t i = 0; i < VTL_ARRAY_SIZE(cases); i++)
		if (!strcmp(argv[1], cases[i].name)) {
			if (cases[i].pid && vtld_pid <= 0)
				fail("case %s needs vtld's PID", argv[1]);
			cases[i].run();
			return 0;
		}
	fail("unknown case '%s'", argv[1]);
	return 2;
}
