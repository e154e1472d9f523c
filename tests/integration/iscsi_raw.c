/* SPDX-License-Identifier: Apache-2.0 */
/*
 * An initiator made by hand (its PDU layer is rawlib.h, shared with the
 * hostile-host suite), for what libiscsi cannot do: data digests,
 * digests that are wrong on purpose, a task aborted while the target waits
 * for its data, and a PDU larger than the target accepts.
 *
 * First connection: logs in with HeaderDigest=CRC32C and DataDigest=CRC32C
 * (and checks the target agreed), moves a cartridge into the drive (LUN 1),
 * writes two blocks, then:
 *   - a NOP-Out whose ping data has a wrong data digest gets a Reject with
 *     reason 02h ("data digest error") carrying its header; a good ping
 *     after it is answered (the connection goes on);
 *   - a WRITE whose immediate data has a wrong data digest gets the same
 *     Reject; sent again with the same CmdSN and a right digest, it works;
 * reads the blocks back (checking every digest the target sends) and
 * finally sends a command with a wrong header digest, after which the
 * target must close the connection without answering it.
 *
 * Second connection (no digests, InitialR2T=Yes, ImmediateData=No): a WRITE
 * gets its R2T, part of the burst is sent, then ABORT TASK: the target
 * answers "function complete", never a status for the write, and the tape
 * position has not moved; ABORT TASK of a tag that is not in the session
 * answers "function complete" too (RFC 7143 11.6.1: the command may never
 * have arrived). A WRITE after that works. Last, a NOP-Out whose data
 * segment is longer than the MaxRecvDataSegmentLength the target declared
 * gets a Reject with reason 04h ("protocol error"), then the connection
 * closes.
 *
 * With "keepalive" (vtld started with [iscsi] nop_interval = 1), it only
 * logs in and stays silent: a NOP-In with a reserved ITT and a real TTT
 * must come within a few seconds; answered, the session stays; the next
 * one, left unanswered, must end with the target closing the connection.
 *
 * Usage: iscsi_raw PORTAL TARGET-IQN [keepalive]   (PORTAL: IPv4 address:port)
 * Exit 0 when every step passed; each step prints a line.
 */
#include "tests/integration/rawlib.h"

#define TMF_ABORT_TASK 0x01
#define TMF_COMPLETE 0x00
#define BLOCK 4096u
#define INITIATOR "iqn.2026-01.org.vtl:digest-host"
#define SLOT 1025
#define DRIVE_ELEMENT 257
#define CHANGER 0
#define DRIVE 1

static struct raw_conn conn;
#define fail raw_fail

/*
 * With digests: offers only CRC32C for both, ImmediateData=Yes, InitialR2T=No.
 * Without: no digests, and every write waits for an R2T (InitialR2T=Yes,
 * ImmediateData=No), so that the target is left waiting for data.
 */
static void login(const char *target, bool with_digests, uint8_t isid_tail)
{
	struct raw_login o = {.initiator = INITIATOR, .target = target, .isid_tail = isid_tail,
			      .digests = with_digests, .initial_r2t = !with_digests, .immediate_data = with_digests};
	raw_login(&conn, &o);
	printf("-- logged in with HeaderDigest=%s DataDigest=%s\n", with_digests ? "CRC32C" : "None",
	       with_digests ? "CRC32C" : "None");
}

static void good(int lun, const uint8_t *cdb, size_t cdb_len, uint8_t rw, uint8_t *data, uint32_t len,
		 uint32_t *got, const char *what)
{
	struct raw_status st = raw_good(&conn, lun, cdb, cdb_len, rw, data, len, what);
	if (got)
		*got = st.got;
}

/* The next PDU must be a Reject for a data digest error, carrying the header of the PDU with tag itt. */
static void expect_digest_reject(uint32_t itt, uint8_t opcode)
{
	static struct raw_pdu r;
	if (!raw_recv(&conn, &r))
		fail("the target closed the connection instead of rejecting the PDU");
	if ((r.bhs[0] & OP_MASK) != OP_REJECT)
		fail("expected a Reject, got opcode %02Xh", r.bhs[0]);
	if (r.bhs[2] != REJECT_DATA_DIGEST)
		fail("Reject reason %02Xh, expected %02Xh (data digest error)", r.bhs[2], REJECT_DATA_DIGEST);
	if (r.len != BHS_LEN || (r.data[0] & OP_MASK) != opcode || get32(r.data + 16) != itt)
		fail("the Reject does not carry the rejected header (%u bytes, opcode %02Xh)", r.len, r.data[0]);
	printf("-- Reject, reason %02Xh (data digest error), for opcode %02Xh ITT %u\n", r.bhs[2], opcode, itt);
}

/* An immediate ABORT TASK of the task tagged ref (CmdSN ref_sn); returns the TMF response code. */
static int abort_task(uint32_t ref, uint32_t ref_sn)
{
	uint8_t bhs[BHS_LEN] = {OP_IMMEDIATE | OP_TMF_REQ, FLAG_FINAL | TMF_ABORT_TASK};
	uint32_t itt = conn.next_itt++;
	bhs[9] = DRIVE;
	put32(bhs + 16, itt);
	put32(bhs + 20, ref);
	put32(bhs + 24, conn.cmd_sn);
	put32(bhs + 28, conn.exp_stat_sn);
	put32(bhs + 32, ref_sn);
	raw_send(&conn, bhs, NULL, 0, SPOIL_NONE);
	static struct raw_pdu r;
	if (!raw_recv(&conn, &r))
		fail("the target closed the connection instead of answering ABORT TASK");
	if ((r.bhs[0] & OP_MASK) != OP_TMF_RSP || get32(r.bhs + 16) != itt)
		fail("expected the TMF response for ITT %u, got opcode %02Xh ITT %u", itt, r.bhs[0], get32(r.bhs + 16));
	return r.bhs[2];
}

/* Second connection: a WRITE aborted while the target waits for its data, then a PDU too big. */
static void abort_and_oversize(const char *portal, const char *target)
{
	raw_connect(&conn, portal, NULL);
	login(target, false, 0x57);
	raw_ready(&conn, DRIVE); /* the new nexus's unit attention */
	uint32_t before = raw_position(&conn, DRIVE);
	enum { LEN = 65536, PART = 16384 };
	static uint8_t data[LEN];
	for (unsigned i = 0; i < LEN; i++)
		data[i] = (uint8_t)(i * 13 + (i >> 9));

	uint32_t itt = conn.next_itt++, sn = conn.cmd_sn++;
	uint32_t ttt = raw_write_until_r2t(&conn, DRIVE, itt, sn, LEN);
	raw_data_out(&conn, DRIVE, itt, ttt, 0, 0, data, PART, false);
	int resp = abort_task(itt, sn);
	if (resp != TMF_COMPLETE)
		fail("ABORT TASK of the WRITE waiting for data: response %d, expected %d (function complete)", resp,
		     TMF_COMPLETE);
	/* A ping answered next proves no status of the aborted WRITE was queued before it. */
	static const uint8_t ping_data[] = "still there";
	uint32_t ping_itt = conn.next_itt++;
	raw_ping(&conn, ping_data, sizeof ping_data, ping_itt, SPOIL_NONE);
	static struct raw_pdu r;
	if (!raw_recv(&conn, &r) || (r.bhs[0] & OP_MASK) != OP_NOP_IN || get32(r.bhs + 16) != ping_itt)
		fail("after ABORT TASK, expected the ping's NOP-In, got opcode %02Xh ITT %u", r.bhs[0], get32(r.bhs + 16));
	uint32_t after = raw_position(&conn, DRIVE);
	if (after != before)
		fail("the aborted WRITE moved the tape from block %u to %u", before, after);
	printf("-- ABORT TASK during a WRITE's Data-Out: function complete, no status, still at block %u\n", after);

	/* A tag not in the session, numbered before the TMF: it may be on its way, so "function complete". */
	resp = abort_task(0x7777, conn.cmd_sn++);
	if (resp != TMF_COMPLETE)
		fail("ABORT TASK of a command not yet arrived: response %d, expected %d", resp, TMF_COMPLETE);
	printf("-- ABORT TASK of a command not yet arrived: function complete\n");

	/* The same WRITE again, whole: it lands. */
	itt = conn.next_itt++;
	ttt = raw_write_until_r2t(&conn, DRIVE, itt, conn.cmd_sn++, LEN);
	raw_data_out(&conn, DRIVE, itt, ttt, 0, 0, data, PART, false);
	raw_data_out(&conn, DRIVE, itt, ttt, 1, PART, data + PART, LEN - PART, true);
	struct raw_status st = raw_wait(&conn, itt, NULL, 0);
	if (st.status != GOOD)
		fail("the WRITE after the abort: status %02Xh, sense key %Xh", st.status, st.key);
	if (raw_position(&conn, DRIVE) != before + 1)
		fail("the WRITE after the abort did not leave the tape at block %u", before + 1);
	printf("-- a WRITE after the abort lands at block %u\n", before);

	/* A data segment above what the target declared: Reject 04h, then the connection closes. */
	uint32_t big = conn.target_max_recv + 4;
	if (big > RAW_SEND_MAX)
		fail("the target declared MaxRecvDataSegmentLength=%u, beyond what this test can send", conn.target_max_recv);
	static uint8_t huge[RAW_SEND_MAX];
	uint32_t big_itt = conn.next_itt++;
	raw_ping(&conn, huge, big, big_itt, SPOIL_NONE);
	if (!raw_recv(&conn, &r))
		fail("the target closed the connection without a Reject for the oversized PDU");
	if ((r.bhs[0] & OP_MASK) != OP_REJECT || r.bhs[2] != REJECT_PROTOCOL || r.len != BHS_LEN ||
	    get32(r.data + 16) != big_itt)
		fail("expected a Reject, reason %02Xh, with the header of ITT %u; got opcode %02Xh reason %02Xh", REJECT_PROTOCOL,
		     big_itt, r.bhs[0], r.bhs[2]);
	if (raw_recv(&conn, &r))
		fail("the target went on after an oversized PDU (opcode %02Xh)", r.bhs[0]);
	printf("-- a %u-byte data segment (limit %u): Reject, reason %02Xh (protocol error), connection closed\n", big,
	       conn.target_max_recv, REJECT_PROTOCOL);
	close(conn.fd);
}

/* The next PDU must be the target's keepalive NOP-In: reserved ITT, a real TTT (returned). */
static uint32_t expect_target_ping(void)
{
	static struct raw_pdu r;
	if (!raw_recv(&conn, &r))
		fail("the target closed the connection instead of pinging");
	if ((r.bhs[0] & OP_MASK) != OP_NOP_IN || get32(r.bhs + 16) != TAG_NONE || get32(r.bhs + 20) == TAG_NONE)
		fail("expected a NOP-In asking for an answer, got opcode %02Xh ITT %08Xh TTT %08Xh", r.bhs[0],
		     get32(r.bhs + 16), get32(r.bhs + 20));
	return get32(r.bhs + 20);
}

/* A silent initiator is pinged; answered, the session lives; unanswered, it is closed. */
static void keepalive(const char *portal, const char *target)
{
	raw_connect(&conn, portal, NULL);
	login(target, false, 0x58);
	double t0 = raw_now();
	uint32_t ttt = expect_target_ping();
	printf("-- silent for %.1f s: the target sent a NOP-In (TTT %08Xh)\n", raw_now() - t0, ttt);
	uint8_t bhs[BHS_LEN] = {OP_IMMEDIATE | OP_NOP_OUT, FLAG_FINAL};
	put32(bhs + 16, TAG_NONE);
	put32(bhs + 20, ttt);
	put32(bhs + 24, conn.cmd_sn);
	put32(bhs + 28, conn.exp_stat_sn);
	raw_send(&conn, bhs, NULL, 0, SPOIL_NONE);
	t0 = raw_now();
	ttt = expect_target_ping();
	printf("-- answered, the session went on; %.1f s later the next NOP-In (TTT %08Xh)\n", raw_now() - t0, ttt);
	t0 = raw_now();
	static struct raw_pdu r;
	if (raw_recv(&conn, &r))
		fail("left unanswered, the target sent opcode %02Xh instead of closing", r.bhs[0]);
	printf("-- left unanswered: the target closed the connection %.1f s later\n", raw_now() - t0);
	close(conn.fd);
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[3], "keepalive")) {
		keepalive(argv[1], argv[2]);
		return 0;
	}
	if (argc != 3) {
		fprintf(stderr, "usage: iscsi_raw PORTAL TARGET-IQN [keepalive]\n");
		return 1;
	}
	raw_connect(&conn, argv[1], NULL);
	login(argv[2], true, 0x56);
	raw_ready(&conn, CHANGER);
	uint8_t move[12] = {0xA5, 0, 0, 0, SLOT >> 8, SLOT & 0xFF, DRIVE_ELEMENT >> 8, DRIVE_ELEMENT & 0xFF};
	good(CHANGER, move, sizeof move, 0, NULL, 0, NULL, "MOVE MEDIUM");
	raw_ready(&conn, DRIVE);
	printf("-- cartridge in the drive\n");

	/* Two variable blocks of different bytes, written with data digests. */
	static uint8_t blk[2][BLOCK], back[BLOCK];
	for (unsigned b = 0; b < 2; b++)
		for (unsigned i = 0; i < BLOCK; i++)
			blk[b][i] = (uint8_t)(i * 7 + b * 131 + (i >> 8));
	uint8_t wr[6] = {0x0A, 0, BLOCK >> 16, (BLOCK >> 8) & 0xFF, BLOCK & 0xFF, 0};
	good(DRIVE, wr, sizeof wr, CMD_WRITE, blk[0], BLOCK, NULL, "WRITE of block 0");
	printf("-- wrote block 0 with a data digest\n");

	/* A ping with a wrong data digest: Reject 02h; a good ping after it is answered. */
	static const uint8_t ping_data[] = "are you there?";
	uint32_t itt = conn.next_itt++;
	raw_ping(&conn, ping_data, sizeof ping_data, itt, SPOIL_DATA_DIGEST);
	expect_digest_reject(itt, OP_NOP_OUT);
	itt = conn.next_itt++;
	raw_ping(&conn, ping_data, sizeof ping_data, itt, SPOIL_NONE);
	static struct raw_pdu r;
	if (!raw_recv(&conn, &r) || (r.bhs[0] & OP_MASK) != OP_NOP_IN || get32(r.bhs + 16) != itt || r.len != sizeof ping_data ||
	    memcmp(r.data, ping_data, sizeof ping_data))
		fail("no NOP-In echo for the good ping after the Reject");
	printf("-- the connection goes on: a good ping is answered\n");

	/* A WRITE whose immediate data fails its digest: Reject; retried with the same ITT and CmdSN, it works. */
	uint8_t bhs[BHS_LEN];
	itt = conn.next_itt++;
	uint32_t sn = conn.cmd_sn++;
	raw_command_bhs(&conn, bhs, DRIVE, wr, sizeof wr, CMD_WRITE, BLOCK, itt, sn);
	raw_send(&conn, bhs, blk[1], BLOCK, SPOIL_DATA_DIGEST);
	expect_digest_reject(itt, OP_SCSI_CMD);
	raw_command_bhs(&conn, bhs, DRIVE, wr, sizeof wr, CMD_WRITE, BLOCK, itt, sn);
	raw_send(&conn, bhs, blk[1], BLOCK, SPOIL_NONE);
	struct raw_status st = raw_wait(&conn, itt, NULL, 0);
	if (st.status != GOOD)
		fail("the retried WRITE: status %02Xh, sense key %Xh", st.status, st.key);
	printf("-- the WRITE retried with the same CmdSN succeeded\n");

	/* Rewind and read both blocks back: the target's data digests are checked on every Data-In. */
	static const uint8_t rewind[6] = {0x01};
	good(DRIVE, rewind, sizeof rewind, 0, NULL, 0, NULL, "REWIND");
	uint8_t rd[6] = {0x08, 0, BLOCK >> 16, (BLOCK >> 8) & 0xFF, BLOCK & 0xFF, 0};
	for (unsigned b = 0; b < 2; b++) {
		uint32_t got = 0;
		memset(back, 0, sizeof back);
		good(DRIVE, rd, sizeof rd, CMD_READ, back, BLOCK, &got, "READ");
		if (got != BLOCK || memcmp(back, blk[b], BLOCK))
			fail("block %u read back differs (%u bytes)", b, got);
	}
	printf("-- read both blocks back, byte for byte, digests checked\n");

	/* A wrong header digest: the target cannot trust where the next PDU starts, and closes. */
	static const uint8_t tur[6] = {0};
	raw_command_bhs(&conn, bhs, DRIVE, tur, sizeof tur, 0, 0, conn.next_itt++, conn.cmd_sn++);
	raw_send(&conn, bhs, NULL, 0, SPOIL_HEADER_DIGEST);
	if (raw_recv(&conn, &r))
		fail("the target answered a PDU with a wrong header digest (opcode %02Xh)", r.bhs[0]);
	printf("-- a wrong header digest closed the connection\n");
	close(conn.fd);

	abort_and_oversize(argv[1], argv[2]);
	return 0;
}
