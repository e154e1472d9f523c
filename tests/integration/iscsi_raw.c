/* SPDX-License-Identifier: Apache-2.0 */
/*
 * An initiator made by hand, for what libiscsi cannot do: data digests,
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
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

/* RFC 7143 section 11: the few opcodes and fields this initiator uses. */
#define BHS_LEN 48
#define DIGEST_LEN 4
#define OP_NOP_OUT 0x00
#define OP_SCSI_CMD 0x01
#define OP_TMF_REQ 0x02
#define OP_DATA_OUT 0x05
#define OP_LOGIN_REQ 0x03
#define OP_NOP_IN 0x20
#define OP_SCSI_RSP 0x21
#define OP_LOGIN_RSP 0x23
#define OP_DATA_IN 0x25
#define OP_TMF_RSP 0x22
#define OP_R2T 0x31
#define OP_REJECT 0x3F
#define OP_IMMEDIATE 0x40
#define OP_MASK 0x3F
#define FLAG_FINAL 0x80
#define CMD_READ 0x40
#define CMD_WRITE 0x20
#define CMD_ATTR_SIMPLE 0x01
#define DATAIN_STATUS 0x01
#define LOGIN_TRANSIT 0x80
#define STAGE_OPERATIONAL 1
#define STAGE_FFP 3
#define REJECT_DATA_DIGEST 0x02
#define REJECT_PROTOCOL 0x04
#define TMF_ABORT_TASK 0x01
#define TMF_COMPLETE 0x00
#define TAG_NONE 0xFFFFFFFFu
#define ISID_RANDOM 0x80 /* ISID type 10b: random (RFC 7143 11.12.5) */

#define BLOCK 4096u
#define MAX_DATA (256u << 10)
#define RECV_TIMEOUT_S 10
#define SEND_MAX (MAX_DATA + 4096) /* room for a segment above what the target accepts */
#define TUR_TRIES 5
#define INITIATOR "iqn.2026-01.org.vtl:digest-host"
#define SLOT 1025
#define DRIVE_ELEMENT 257
#define CHANGER 0
#define DRIVE 1
#define GOOD 0x00
#define CHECK_CONDITION 0x02

static int fd = -1;
static bool digests;        /* both digests, once the login is done */
static uint32_t cmd_sn = 1, exp_stat_sn, next_itt = 1;

static void fail(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "FAIL: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	exit(1);
}

/* CRC32C (Castagnoli, reflected 0x82F63B78), bit by bit: slow, small, independent of the target's. */
static uint32_t crc32c(const uint8_t *p, size_t n)
{
	uint32_t c = 0xFFFFFFFFu;
	for (size_t i = 0; i < n; i++) {
		c ^= p[i];
		for (int b = 0; b < 8; b++)
			c = c & 1 ? (c >> 1) ^ 0x82F63B78u : c >> 1;
	}
	return ~c;
}

/* A digest as it goes on the wire: least significant byte first (RFC 7143 11.1.3). */
static void put_digest(uint8_t *out, uint32_t crc)
{
	for (int i = 0; i < DIGEST_LEN; i++)
		out[i] = (uint8_t)(crc >> (8 * i));
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static uint32_t padded(uint32_t n)
{
	return (n + 3) & ~3u;
}

/* What to spoil in a PDU on its way out. */
enum spoil { SPOIL_NONE, SPOIL_HEADER_DIGEST, SPOIL_DATA_DIGEST };

static void send_pdu(uint8_t *bhs, const uint8_t *data, uint32_t len, enum spoil spoil)
{
	static uint8_t buf[BHS_LEN + DIGEST_LEN + SEND_MAX + 3 + DIGEST_LEN];
	bhs[5] = (uint8_t)(len >> 16);
	bhs[6] = (uint8_t)(len >> 8);
	bhs[7] = (uint8_t)len;
	size_t n = 0;
	memcpy(buf, bhs, BHS_LEN);
	n += BHS_LEN;
	if (digests) {
		put_digest(buf + n, crc32c(buf, BHS_LEN) ^ (spoil == SPOIL_HEADER_DIGEST ? 1u : 0u));
		n += DIGEST_LEN;
	}
	if (len) {
		size_t start = n;
		memcpy(buf + n, data, len);
		memset(buf + n + len, 0, padded(len) - len);
		n += padded(len);
		if (digests) {
			put_digest(buf + n, crc32c(buf + start, padded(len)) ^ (spoil == SPOIL_DATA_DIGEST ? 1u : 0u));
			n += DIGEST_LEN;
		}
	}
	for (size_t off = 0; off < n;) {
		ssize_t w = send(fd, buf + off, n - off, MSG_NOSIGNAL);
		if (w <= 0)
			fail("send: %s", strerror(errno));
		off += (size_t)w;
	}
}

/* Reads n bytes; false at end of stream (the target closed the connection). */
static bool recv_all(uint8_t *p, size_t n)
{
	for (size_t off = 0; off < n;) {
		ssize_t r = recv(fd, p + off, n - off, 0);
		if (r == 0 || (r < 0 && errno == ECONNRESET))
			return false;
		if (r < 0)
			fail("recv: %s (no answer within %d s?)", strerror(errno), RECV_TIMEOUT_S);
		off += (size_t)r;
	}
	return true;
}

struct pdu {
	uint8_t bhs[BHS_LEN];
	uint8_t data[MAX_DATA + 3];
	uint32_t len;
};

/* Receives one PDU, checking both digests when they are on; false at end of stream. */
static bool recv_pdu(struct pdu *p)
{
	if (!recv_all(p->bhs, BHS_LEN))
		return false;
	if (p->bhs[4])
		fail("the target sent an AHS");
	uint8_t d[DIGEST_LEN], want[DIGEST_LEN];
	if (digests) {
		if (!recv_all(d, DIGEST_LEN))
			return false;
		put_digest(want, crc32c(p->bhs, BHS_LEN));
		if (memcmp(d, want, DIGEST_LEN))
			fail("wrong header digest from the target (opcode %02Xh)", p->bhs[0]);
	}
	p->len = (uint32_t)p->bhs[5] << 16 | (uint32_t)p->bhs[6] << 8 | p->bhs[7];
	if (p->len > MAX_DATA)
		fail("a data segment of %u bytes, above the %u declared", p->len, MAX_DATA);
	if (p->len) {
		if (!recv_all(p->data, padded(p->len)))
			return false;
		if (digests) {
			if (!recv_all(d, DIGEST_LEN))
				return false;
			put_digest(want, crc32c(p->data, padded(p->len)));
			if (memcmp(d, want, DIGEST_LEN))
				fail("wrong data digest from the target (opcode %02Xh)", p->bhs[0]);
		}
	}
	uint8_t op = p->bhs[0] & OP_MASK;
	bool has_status = op == OP_SCSI_RSP || op == OP_NOP_IN || op == OP_REJECT ||
			  (op == OP_DATA_IN && (p->bhs[1] & DATAIN_STATUS));
	if (has_status)
		exp_stat_sn = get32(p->bhs + 24) + 1;
	return true;
}

static void connect_to(const char *portal)
{
	char host[64];
	const char *colon = strrchr(portal, ':');
	if (!colon || (size_t)(colon - portal) >= sizeof host)
		fail("portal '%s': give ADDRESS:PORT", portal);
	memcpy(host, portal, (size_t)(colon - portal));
	host[colon - portal] = 0;
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(colon + 1))};
	if (inet_pton(AF_INET, host, &sa.sin_addr) != 1)
		fail("portal '%s': not an IPv4 address", portal);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	struct timeval tv = {.tv_sec = RECV_TIMEOUT_S};
	int one = 1;
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) ||
	    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) ||
	    connect(fd, (struct sockaddr *)&sa, sizeof sa))
		fail("cannot connect to %s: %s", portal, strerror(errno));
}

/* The value of key in a login response's text, or NULL. */
static const char *key_value(const struct pdu *p, const char *key)
{
	size_t kl = strlen(key);
	for (uint32_t at = 0; at < p->len;) {
		const char *kv = (const char *)p->data + at;
		size_t n = strnlen(kv, p->len - at);
		if (n > kl && !strncmp(kv, key, kl) && kv[kl] == '=')
			return kv + kl + 1;
		at += (uint32_t)n + 1;
	}
	return NULL;
}

static uint32_t target_max_recv; /* MaxRecvDataSegmentLength the target declared */

/*
 * Operational stage straight to the full feature phase (no CHAP configured).
 * With digests: offers only CRC32C for both, ImmediateData=Yes, InitialR2T=No.
 * Without: no digests, and every write waits for an R2T (InitialR2T=Yes,
 * ImmediateData=No), so that the target is left waiting for data.
 */
static void login(const char *target, bool with_digests, uint8_t isid_tail)
{
	char text[1024];
	const char *digest = with_digests ? "CRC32C" : "None";
	int n = snprintf(text, sizeof text,
			 "InitiatorName=" INITIATOR "%cTargetName=%s%cSessionType=Normal%cHeaderDigest=%s%c"
			 "DataDigest=%s%cMaxRecvDataSegmentLength=%u%cImmediateData=%s%cInitialR2T=%s%c"
			 "FirstBurstLength=65536%cMaxBurstLength=262144%cErrorRecoveryLevel=0%c",
			 0, target, 0, 0, digest, 0, digest, 0, MAX_DATA, 0, with_digests ? "Yes" : "No", 0,
			 with_digests ? "No" : "Yes", 0, 0, 0, 0);
	uint8_t bhs[BHS_LEN] = {OP_IMMEDIATE | OP_LOGIN_REQ, LOGIN_TRANSIT | STAGE_OPERATIONAL << 2 | STAGE_FFP};
	const uint8_t isid[6] = {ISID_RANDOM, 0, 0, 0x12, 0x34, isid_tail};
	memcpy(bhs + 8, isid, sizeof isid);
	put32(bhs + 16, next_itt++);
	put32(bhs + 24, cmd_sn);
	digests = false;
	send_pdu(bhs, (const uint8_t *)text, (uint32_t)n, SPOIL_NONE);
	static struct pdu r;
	if (!recv_pdu(&r))
		fail("the target closed the connection during the login");
	if ((r.bhs[0] & OP_MASK) != OP_LOGIN_RSP)
		fail("expected a Login Response, got opcode %02Xh", r.bhs[0]);
	if (r.bhs[36] || r.bhs[37])
		fail("login refused: status class %u, detail %u", r.bhs[36], r.bhs[37]);
	if (!(r.bhs[1] & LOGIN_TRANSIT) || (r.bhs[1] & 3) != STAGE_FFP)
		fail("the target did not move to the full feature phase in one step (flags %02Xh)", r.bhs[1]);
	const char *hd = key_value(&r, "HeaderDigest"), *dd = key_value(&r, "DataDigest");
	if (!hd || strcmp(hd, digest) || !dd || strcmp(dd, digest))
		fail("digests not negotiated: HeaderDigest=%s DataDigest=%s", hd ? hd : "(none)", dd ? dd : "(none)");
	const char *r2t = key_value(&r, "InitialR2T"), *imm = key_value(&r, "ImmediateData");
	if (!with_digests && (!r2t || strcmp(r2t, "Yes") || !imm || strcmp(imm, "No")))
		fail("InitialR2T=%s ImmediateData=%s, expected Yes and No", r2t ? r2t : "(none)", imm ? imm : "(none)");
	const char *mrd = key_value(&r, "MaxRecvDataSegmentLength");
	target_max_recv = mrd ? (uint32_t)strtoul(mrd, NULL, 10) : 8192; /* RFC 7143 13.12: the default */
	exp_stat_sn = get32(r.bhs + 24) + 1;
	cmd_sn = get32(r.bhs + 28);
	digests = with_digests;
	printf("-- logged in with HeaderDigest=%s DataDigest=%s\n", hd, dd);
}

/* A SCSI Command header for lun with cdb: flags R/W, edtl; takes the next CmdSN unless sn is given. */
static void command_bhs(uint8_t *bhs, int lun, const uint8_t *cdb, size_t cdb_len, uint8_t rw, uint32_t edtl,
			uint32_t itt, uint32_t sn)
{
	memset(bhs, 0, BHS_LEN);
	bhs[0] = OP_SCSI_CMD;
	bhs[1] = FLAG_FINAL | rw | CMD_ATTR_SIMPLE;
	bhs[9] = (uint8_t)lun;
	put32(bhs + 16, itt);
	put32(bhs + 20, edtl);
	put32(bhs + 24, sn);
	put32(bhs + 28, exp_stat_sn);
	memcpy(bhs + 32, cdb, cdb_len);
}

/* Waits for the end of command itt: its status; Data-In goes to in (up to cap bytes), *got says how much. */
static int wait_status(uint32_t itt, uint8_t *in, uint32_t cap, uint32_t *got, uint8_t *sense_key)
{
	static struct pdu r;
	if (got)
		*got = 0;
	for (;;) {
		if (!recv_pdu(&r))
			fail("the target closed the connection before answering ITT %u", itt);
		uint8_t op = r.bhs[0] & OP_MASK;
		if (get32(r.bhs + 16) != itt)
			fail("unexpected PDU (opcode %02Xh, ITT %u) while waiting for ITT %u", op, get32(r.bhs + 16), itt);
		if (op == OP_DATA_IN) {
			uint32_t off = get32(r.bhs + 40);
			if (off + r.len > cap)
				fail("Data-In beyond the buffer");
			memcpy(in + off, r.data, r.len);
			if (got)
				*got = off + r.len;
			if (r.bhs[1] & DATAIN_STATUS)
				return r.bhs[3];
		} else if (op == OP_SCSI_RSP) {
			if (sense_key)
				*sense_key = r.len > 4 ? r.data[2 + 2] & 0x0F : 0;
			return r.bhs[3];
		} else {
			fail("unexpected opcode %02Xh for ITT %u", op, itt);
		}
	}
}

/* Runs a command whose data (out: len bytes as immediate data; in: up to len bytes) fits one PDU. */
static int run(int lun, const uint8_t *cdb, size_t cdb_len, uint8_t rw, uint8_t *data, uint32_t len, uint32_t *got,
	       uint8_t *sense_key)
{
	uint8_t bhs[BHS_LEN];
	uint32_t itt = next_itt++;
	command_bhs(bhs, lun, cdb, cdb_len, rw, len, itt, cmd_sn++);
	send_pdu(bhs, rw == CMD_WRITE ? data : NULL, rw == CMD_WRITE ? len : 0, SPOIL_NONE);
	return wait_status(itt, data, len, got, sense_key);
}

static void good(int lun, const uint8_t *cdb, size_t cdb_len, uint8_t rw, uint8_t *data, uint32_t len,
		 uint32_t *got, const char *what)
{
	uint8_t key = 0;
	int st = run(lun, cdb, cdb_len, rw, data, len, got, &key);
	if (st != GOOD)
		fail("%s: status %02Xh, sense key %Xh", what, st, key);
}

static void ready(int lun)
{
	static const uint8_t tur[6] = {0};
	for (int i = 0; i < TUR_TRIES; i++) {
		uint8_t key = 0;
		if (run(lun, tur, sizeof tur, 0, NULL, 0, NULL, &key) == GOOD)
			return;
	}
	fail("LUN %d never became ready", lun);
}

/* A NOP-Out ping (immediate: it takes no CmdSN), with its data digest spoiled or not. */
static void ping(const uint8_t *data, uint32_t len, uint32_t itt, enum spoil spoil)
{
	uint8_t bhs[BHS_LEN] = {OP_IMMEDIATE | OP_NOP_OUT, FLAG_FINAL};
	put32(bhs + 16, itt);
	put32(bhs + 20, TAG_NONE);
	put32(bhs + 24, cmd_sn);
	put32(bhs + 28, exp_stat_sn);
	send_pdu(bhs, data, len, spoil);
}

/* The next PDU must be a Reject for a data digest error, carrying the header of the PDU with tag itt. */
static void expect_digest_reject(uint32_t itt, uint8_t opcode)
{
	static struct pdu r;
	if (!recv_pdu(&r))
		fail("the target closed the connection instead of rejecting the PDU");
	if ((r.bhs[0] & OP_MASK) != OP_REJECT)
		fail("expected a Reject, got opcode %02Xh", r.bhs[0]);
	if (r.bhs[2] != REJECT_DATA_DIGEST)
		fail("Reject reason %02Xh, expected %02Xh (data digest error)", r.bhs[2], REJECT_DATA_DIGEST);
	if (r.len != BHS_LEN || (r.data[0] & OP_MASK) != opcode || get32(r.data + 16) != itt)
		fail("the Reject does not carry the rejected header (%u bytes, opcode %02Xh)", r.len, r.data[0]);
	printf("-- Reject, reason %02Xh (data digest error), for opcode %02Xh ITT %u\n", r.bhs[2], opcode, itt);
}

/* The logical block the drive is at (READ POSITION, short form). */
static uint32_t position(void)
{
	static const uint8_t rp[10] = {0x34};
	uint8_t buf[20];
	uint32_t got = 0;
	good(DRIVE, rp, sizeof rp, CMD_READ, buf, sizeof buf, &got, "READ POSITION");
	if (got < 8)
		fail("READ POSITION returned %u bytes", got);
	return get32(buf + 4);
}

/* An immediate ABORT TASK of the task tagged ref (CmdSN ref_sn); returns the TMF response code. */
static int abort_task(uint32_t ref, uint32_t ref_sn)
{
	uint8_t bhs[BHS_LEN] = {OP_IMMEDIATE | OP_TMF_REQ, FLAG_FINAL | TMF_ABORT_TASK};
	uint32_t itt = next_itt++;
	bhs[9] = DRIVE;
	put32(bhs + 16, itt);
	put32(bhs + 20, ref);
	put32(bhs + 24, cmd_sn);
	put32(bhs + 28, exp_stat_sn);
	put32(bhs + 32, ref_sn);
	send_pdu(bhs, NULL, 0, SPOIL_NONE);
	static struct pdu r;
	if (!recv_pdu(&r))
		fail("the target closed the connection instead of answering ABORT TASK");
	if ((r.bhs[0] & OP_MASK) != OP_TMF_RSP || get32(r.bhs + 16) != itt)
		fail("expected the TMF response for ITT %u, got opcode %02Xh ITT %u", itt, r.bhs[0], get32(r.bhs + 16));
	return r.bhs[2];
}

/* Sends a WRITE(6) of len bytes without data and waits for its R2T; returns the R2T's transfer tag. */
static uint32_t write_until_r2t(uint32_t itt, uint32_t sn, uint32_t len)
{
	uint8_t wr[6] = {0x0A, 0, (uint8_t)(len >> 16), (uint8_t)(len >> 8), (uint8_t)len, 0};
	uint8_t bhs[BHS_LEN];
	command_bhs(bhs, DRIVE, wr, sizeof wr, CMD_WRITE, len, itt, sn);
	send_pdu(bhs, NULL, 0, SPOIL_NONE);
	static struct pdu r;
	if (!recv_pdu(&r))
		fail("the target closed the connection instead of sending an R2T");
	if ((r.bhs[0] & OP_MASK) != OP_R2T || get32(r.bhs + 16) != itt)
		fail("expected an R2T for ITT %u, got opcode %02Xh", itt, r.bhs[0]);
	if (get32(r.bhs + 40) != 0 || get32(r.bhs + 44) == 0)
		fail("the first R2T asks for offset %u, %u bytes", get32(r.bhs + 40), get32(r.bhs + 44));
	return get32(r.bhs + 20);
}

/* One Data-Out of the task itt answering the R2T ttt. */
static void data_out(uint32_t itt, uint32_t ttt, uint32_t data_sn, uint32_t offset, const uint8_t *data, uint32_t len,
		     bool final)
{
	uint8_t bhs[BHS_LEN] = {OP_DATA_OUT, final ? FLAG_FINAL : 0};
	bhs[9] = DRIVE;
	put32(bhs + 16, itt);
	put32(bhs + 20, ttt);
	put32(bhs + 28, exp_stat_sn);
	put32(bhs + 36, data_sn);
	put32(bhs + 40, offset);
	send_pdu(bhs, data, len, SPOIL_NONE);
}

/* Second connection: a WRITE aborted while the target waits for its data, then a PDU too big. */
static void abort_and_oversize(const char *portal, const char *target)
{
	connect_to(portal);
	login(target, false, 0x57);
	ready(DRIVE); /* the new nexus's unit attention */
	uint32_t before = position();
	enum { LEN = 65536, PART = 16384 };
	static uint8_t data[LEN];
	for (unsigned i = 0; i < LEN; i++)
		data[i] = (uint8_t)(i * 13 + (i >> 9));

	uint32_t itt = next_itt++, sn = cmd_sn++;
	uint32_t ttt = write_until_r2t(itt, sn, LEN);
	data_out(itt, ttt, 0, 0, data, PART, false);
	int resp = abort_task(itt, sn);
	if (resp != TMF_COMPLETE)
		fail("ABORT TASK of the WRITE waiting for data: response %d, expected %d (function complete)", resp,
		     TMF_COMPLETE);
	/* A ping answered next proves no status of the aborted WRITE was queued before it. */
	static const uint8_t ping_data[] = "still there";
	uint32_t ping_itt = next_itt++;
	ping(ping_data, sizeof ping_data, ping_itt, SPOIL_NONE);
	static struct pdu r;
	if (!recv_pdu(&r) || (r.bhs[0] & OP_MASK) != OP_NOP_IN || get32(r.bhs + 16) != ping_itt)
		fail("after ABORT TASK, expected the ping's NOP-In, got opcode %02Xh ITT %u", r.bhs[0], get32(r.bhs + 16));
	uint32_t after = position();
	if (after != before)
		fail("the aborted WRITE moved the tape from block %u to %u", before, after);
	printf("-- ABORT TASK during a WRITE's Data-Out: function complete, no status, still at block %u\n", after);

	/* A tag not in the session, numbered before the TMF: it may be on its way, so "function complete". */
	resp = abort_task(0x7777, cmd_sn++);
	if (resp != TMF_COMPLETE)
		fail("ABORT TASK of a command not yet arrived: response %d, expected %d", resp, TMF_COMPLETE);
	printf("-- ABORT TASK of a command not yet arrived: function complete\n");

	/* The same WRITE again, whole: it lands. */
	itt = next_itt++;
	ttt = write_until_r2t(itt, cmd_sn++, LEN);
	data_out(itt, ttt, 0, 0, data, PART, false);
	data_out(itt, ttt, 1, PART, data + PART, LEN - PART, true);
	uint8_t key = 0;
	int st = wait_status(itt, NULL, 0, NULL, &key);
	if (st != GOOD)
		fail("the WRITE after the abort: status %02Xh, sense key %Xh", st, key);
	if (position() != before + 1)
		fail("the WRITE after the abort did not leave the tape at block %u", before + 1);
	printf("-- a WRITE after the abort lands at block %u\n", before);

	/* A data segment above what the target declared: Reject 04h, then the connection closes. */
	uint32_t big = target_max_recv + 4;
	if (big > SEND_MAX)
		fail("the target declared MaxRecvDataSegmentLength=%u, beyond what this test can send", target_max_recv);
	static uint8_t huge[SEND_MAX];
	uint32_t big_itt = next_itt++;
	ping(huge, big, big_itt, SPOIL_NONE);
	if (!recv_pdu(&r))
		fail("the target closed the connection without a Reject for the oversized PDU");
	if ((r.bhs[0] & OP_MASK) != OP_REJECT || r.bhs[2] != REJECT_PROTOCOL || r.len != BHS_LEN ||
	    get32(r.data + 16) != big_itt)
		fail("expected a Reject, reason %02Xh, with the header of ITT %u; got opcode %02Xh reason %02Xh", REJECT_PROTOCOL,
		     big_itt, r.bhs[0], r.bhs[2]);
	if (recv_pdu(&r))
		fail("the target went on after an oversized PDU (opcode %02Xh)", r.bhs[0]);
	printf("-- a %u-byte data segment (limit %u): Reject, reason %02Xh (protocol error), connection closed\n", big,
	       target_max_recv, REJECT_PROTOCOL);
	close(fd);
}

/* The next PDU must be the target's keepalive NOP-In: reserved ITT, a real TTT (returned). */
static uint32_t expect_target_ping(void)
{
	static struct pdu r;
	if (!recv_pdu(&r))
		fail("the target closed the connection instead of pinging");
	if ((r.bhs[0] & OP_MASK) != OP_NOP_IN || get32(r.bhs + 16) != TAG_NONE || get32(r.bhs + 20) == TAG_NONE)
		fail("expected a NOP-In asking for an answer, got opcode %02Xh ITT %08Xh TTT %08Xh", r.bhs[0],
		     get32(r.bhs + 16), get32(r.bhs + 20));
	return get32(r.bhs + 20);
}

static double now_s(void)
{
	struct timeval tv;
	gettimeofday(&tv, NULL);
	return (double)tv.tv_sec + tv.tv_usec / 1e6;
}

/* A silent initiator is pinged; answered, the session lives; unanswered, it is closed. */
static void keepalive(const char *portal, const char *target)
{
	connect_to(portal);
	login(target, false, 0x58);
	double t0 = now_s();
	uint32_t ttt = expect_target_ping();
	printf("-- silent for %.1f s: the target sent a NOP-In (TTT %08Xh)\n", now_s() - t0, ttt);
	uint8_t bhs[BHS_LEN] = {OP_IMMEDIATE | OP_NOP_OUT, FLAG_FINAL};
	put32(bhs + 16, TAG_NONE);
	put32(bhs + 20, ttt);
	put32(bhs + 24, cmd_sn);
	put32(bhs + 28, exp_stat_sn);
	send_pdu(bhs, NULL, 0, SPOIL_NONE);
	t0 = now_s();
	ttt = expect_target_ping();
	printf("-- answered, the session went on; %.1f s later the next NOP-In (TTT %08Xh)\n", now_s() - t0, ttt);
	t0 = now_s();
	static struct pdu r;
	if (recv_pdu(&r))
		fail("left unanswered, the target sent opcode %02Xh instead of closing", r.bhs[0]);
	printf("-- left unanswered: the target closed the connection %.1f s later\n", now_s() - t0);
	close(fd);
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
	connect_to(argv[1]);
	login(argv[2], true, 0x56);
	ready(CHANGER);
	uint8_t move[12] = {0xA5, 0, 0, 0, SLOT >> 8, SLOT & 0xFF, DRIVE_ELEMENT >> 8, DRIVE_ELEMENT & 0xFF};
	good(CHANGER, move, sizeof move, 0, NULL, 0, NULL, "MOVE MEDIUM");
	ready(DRIVE);
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
	uint32_t itt = next_itt++;
	ping(ping_data, sizeof ping_data, itt, SPOIL_DATA_DIGEST);
	expect_digest_reject(itt, OP_NOP_OUT);
	itt = next_itt++;
	ping(ping_data, sizeof ping_data, itt, SPOIL_NONE);
	static struct pdu r;
	if (!recv_pdu(&r) || (r.bhs[0] & OP_MASK) != OP_NOP_IN || get32(r.bhs + 16) != itt || r.len != sizeof ping_data ||
	    memcmp(r.data, ping_data, sizeof ping_data))
		fail("no NOP-In echo for the good ping after the Reject");
	printf("-- the connection goes on: a good ping is answered\n");

	/* A WRITE whose immediate data fails its digest: Reject; retried with the same ITT and CmdSN, it works. */
	uint8_t bhs[BHS_LEN];
	itt = next_itt++;
	uint32_t sn = cmd_sn++;
	command_bhs(bhs, DRIVE, wr, sizeof wr, CMD_WRITE, BLOCK, itt, sn);
	send_pdu(bhs, blk[1], BLOCK, SPOIL_DATA_DIGEST);
	expect_digest_reject(itt, OP_SCSI_CMD);
	command_bhs(bhs, DRIVE, wr, sizeof wr, CMD_WRITE, BLOCK, itt, sn);
	send_pdu(bhs, blk[1], BLOCK, SPOIL_NONE);
	uint8_t key = 0;
	int st = wait_status(itt, NULL, 0, NULL, &key);
	if (st != GOOD)
		fail("the retried WRITE: status %02Xh, sense key %Xh", st, key);
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
	command_bhs(bhs, DRIVE, tur, sizeof tur, 0, 0, next_itt++, cmd_sn++);
	send_pdu(bhs, NULL, 0, SPOIL_HEADER_DIGEST);
	if (recv_pdu(&r))
		fail("the target answered a PDU with a wrong header digest (opcode %02Xh)", r.bhs[0]);
	printf("-- a wrong header digest closed the connection\n");
	close(fd);

	abort_and_oversize(argv[1], argv[2]);
	return 0;
}
