/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The hand-made iSCSI initiator the raw test hosts share (iscsi_raw,
 * iscsi_hostile, bench_hostile): PDUs built and parsed byte by byte (RFC
 * 7143 section 11), digests computed independently of the target's code, a
 * login straight to the full feature phase, and SCSI commands whose every
 * PDU the caller may choose. Each program is one file built on its own, so
 * these are static inline functions; a failed step ends the program
 * through raw_fail.
 */
#ifndef VTL_TESTS_INTEGRATION_RAWLIB_H
#define VTL_TESTS_INTEGRATION_RAWLIB_H

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

/* RFC 7143 section 11: the opcodes and fields these initiators use. */
#define BHS_LEN 48
#define DIGEST_LEN 4
#define OP_NOP_OUT 0x00
#define OP_SCSI_CMD 0x01
#define OP_TMF_REQ 0x02
#define OP_LOGIN_REQ 0x03
#define OP_DATA_OUT 0x05
#define OP_LOGOUT_REQ 0x06
#define OP_NOP_IN 0x20
#define OP_SCSI_RSP 0x21
#define OP_TMF_RSP 0x22
#define OP_LOGIN_RSP 0x23
#define OP_DATA_IN 0x25
#define OP_LOGOUT_RSP 0x26
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
#define REJECT_INVALID_FIELD 0x09
#define TAG_NONE 0xFFFFFFFFu
#define ISID_RANDOM 0x80 /* ISID type 10b: random (RFC 7143 11.12.5) */
#define F_STATSN 24
#define F_EXPCMDSN 28
#define F_MAXCMDSN 32
#define F_DATASN 36
#define F_OFFSET 40
#define F_DESIRED 44
#define F_TTT 20
#define F_ITT 16
#define LOGIN_STATUS_CLASS 36
#define LOGIN_STATUS_DETAIL 37

/* SAM-5 status codes and the fixed sense bytes the tests read (SPC-4 4.5.3). */
#define GOOD 0x00
#define CHECK_CONDITION 0x02
#define RESERVATION_CONFLICT 0x18
#define TASK_SET_FULL 0x28
#define SENSE_KEY_BYTE 2
#define SENSE_ASC_BYTE 12
#define SENSE_ASCQ_BYTE 13

#define RAW_MAX_DATA (256u << 10) /* the MaxRecvDataSegmentLength these initiators declare */
#define RAW_SEND_MAX (RAW_MAX_DATA + 4096) /* room for a segment above what the target accepts */
#define RAW_RECV_TIMEOUT_S 10
#define RAW_TUR_TRIES 5
#define RAW_CHANGER 0

struct raw_conn {
	int fd;
	bool digests;       /* both digests, once the login is done */
	uint32_t cmd_sn, exp_stat_sn, next_itt;
	uint32_t max_cmd_sn; /* the last MaxCmdSN the target sent */
	uint32_t target_max_recv; /* MaxRecvDataSegmentLength the target declared */
};

struct raw_pdu {
	uint8_t bhs[BHS_LEN];
	uint8_t data[RAW_MAX_DATA + 3];
	uint32_t len;
};

/* What a command ended with: status, sense key, ASC, ASCQ, Data-In bytes. */
struct raw_status {
	int status;
	uint8_t key, asc, ascq;
	uint32_t got;
};

static inline void raw_fail(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "FAIL: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	exit(1);
}

/* CRC32C (Castagnoli, reflected 0x82F63B78), by a table of our own: independent of the target's. */
static inline uint32_t raw_crc32c(const uint8_t *p, size_t n)
{
	static uint32_t table[256];
	if (!table[1])
		for (uint32_t i = 0; i < 256; i++) {
			uint32_t c = i;
			for (int b = 0; b < 8; b++)
				c = c & 1 ? (c >> 1) ^ 0x82F63B78u : c >> 1;
			table[i] = c;
		}
	uint32_t c = 0xFFFFFFFFu;
	for (size_t i = 0; i < n; i++)
		c = table[(c ^ p[i]) & 0xFF] ^ (c >> 8);
	return ~c;
}

/* A digest as it goes on the wire: least significant byte first (RFC 7143 11.1.3). */
static inline void raw_put_digest(uint8_t *out, uint32_t crc)
{
	for (int i = 0; i < DIGEST_LEN; i++)
		out[i] = (uint8_t)(crc >> (8 * i));
}

static inline uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static inline void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static inline uint32_t raw_padded(uint32_t n)
{
	return (n + 3) & ~3u;
}

static inline double raw_now(void)
{
	struct timeval tv;
	gettimeofday(&tv, NULL);
	return (double)tv.tv_sec + tv.tv_usec / 1e6;
}

/* What to spoil in a PDU on its way out. */
enum raw_spoil { SPOIL_NONE, SPOIL_HEADER_DIGEST, SPOIL_DATA_DIGEST };

/* Writes n bytes; false when the peer is gone. */
static inline bool raw_send_all(int fd, const uint8_t *p, size_t n)
{
	for (size_t off = 0; off < n;) {
		ssize_t w = send(fd, p + off, n - off, MSG_NOSIGNAL);
		if (w <= 0)
			return false;
		off += (size_t)w;
	}
	return true;
}

/* Sends one PDU (data of len bytes, padded, digests when on); false when the target has closed. */
static inline bool raw_try_send(struct raw_conn *c, uint8_t *bhs, const uint8_t *data, uint32_t len,
				enum raw_spoil spoil)
{
	static uint8_t buf[BHS_LEN + DIGEST_LEN + RAW_SEND_MAX + 3 + DIGEST_LEN];
	if (len > RAW_SEND_MAX)
		raw_fail("a data segment of %u bytes, above what this initiator can send", len);
	bhs[5] = (uint8_t)(len >> 16);
	bhs[6] = (uint8_t)(len >> 8);
	bhs[7] = (uint8_t)len;
	size_t n = 0;
	memcpy(buf, bhs, BHS_LEN);
	n += BHS_LEN;
	if (c->digests) {
		raw_put_digest(buf + n, raw_crc32c(buf, BHS_LEN) ^ (spoil == SPOIL_HEADER_DIGEST ? 1u : 0u));
		n += DIGEST_LEN;
	}
	if (len) {
		size_t start = n;
		memcpy(buf + n, data, len);
		memset(buf + n + len, 0, raw_padded(len) - len);
		n += raw_padded(len);
		if (c->digests) {
			raw_put_digest(buf + n,
				       raw_crc32c(buf + start, raw_padded(len)) ^ (spoil == SPOIL_DATA_DIGEST ? 1u : 0u));
			n += DIGEST_LEN;
		}
	}
	return raw_send_all(c->fd, buf, n);
}

static inline void raw_send(struct raw_conn *c, uint8_t *bhs, const uint8_t *data, uint32_t len, enum raw_spoil spoil)
{
	if (!raw_try_send(c, bhs, data, len, spoil))
		raw_fail("send: %s", strerror(errno));
}

/* Reads n bytes; false at end of stream (the target closed the connection). */
static inline bool raw_recv_all(struct raw_conn *c, uint8_t *p, size_t n)
{
	for (size_t off = 0; off < n;) {
		ssize_t r = recv(c->fd, p + off, n - off, 0);
		if (r == 0 || (r < 0 && errno == ECONNRESET))
			return false;
		if (r < 0)
			raw_fail("recv: %s (no answer within %d s?)", strerror(errno), RAW_RECV_TIMEOUT_S);
		off += (size_t)r;
	}
	return true;
}

/* Receives one PDU, checking both digests when they are on; false at end of stream. */
static inline bool raw_recv(struct raw_conn *c, struct raw_pdu *p)
{
	if (!raw_recv_all(c, p->bhs, BHS_LEN))
		return false;
	if (p->bhs[4])
		raw_fail("the target sent an AHS");
	uint8_t d[DIGEST_LEN], want[DIGEST_LEN];
	if (c->digests) {
		if (!raw_recv_all(c, d, DIGEST_LEN))
			return false;
		raw_put_digest(want, raw_crc32c(p->bhs, BHS_LEN));
		if (memcmp(d, want, DIGEST_LEN))
			raw_fail("wrong header digest from the target (opcode %02Xh)", p->bhs[0]);
	}
	p->len = (uint32_t)p->bhs[5] << 16 | (uint32_t)p->bhs[6] << 8 | p->bhs[7];
	if (p->len > RAW_MAX_DATA)
		raw_fail("a data segment of %u bytes, above the %u declared", p->len, RAW_MAX_DATA);
	if (p->len) {
		if (!raw_recv_all(c, p->data, raw_padded(p->len)))
			return false;
		if (c->digests) {
			if (!raw_recv_all(c, d, DIGEST_LEN))
				return false;
			raw_put_digest(want, raw_crc32c(p->data, raw_padded(p->len)));
			if (memcmp(d, want, DIGEST_LEN))
				raw_fail("wrong data digest from the target (opcode %02Xh)", p->bhs[0]);
		}
	}
	uint8_t op = p->bhs[0] & OP_MASK;
	bool has_status = op == OP_SCSI_RSP || op == OP_NOP_IN || op == OP_REJECT || op == OP_TMF_RSP ||
			  op == OP_LOGOUT_RSP || (op == OP_DATA_IN && (p->bhs[1] & DATAIN_STATUS));
	if (has_status)
		c->exp_stat_sn = get32(p->bhs + F_STATSN) + 1;
	/* Every PDU from the target carries MaxCmdSN at byte 32 (RFC 7143 11.2). */
	c->max_cmd_sn = get32(p->bhs + F_MAXCMDSN);
	return true;
}

/* The socket address of PORTAL (IPv4 address:port); fails the program when it is not one. */
static inline struct sockaddr_in raw_portal(const char *portal)
{
	char host[64];
	const char *colon = strrchr(portal, ':');
	if (!colon || (size_t)(colon - portal) >= sizeof host)
		raw_fail("portal '%s': give ADDRESS:PORT", portal);
	memcpy(host, portal, (size_t)(colon - portal));
	host[colon - portal] = 0;
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(colon + 1))};
	if (inet_pton(AF_INET, host, &sa.sin_addr) != 1)
		raw_fail("portal '%s': not an IPv4 address", portal);
	return sa;
}

/* A TCP connection to PORTAL (IPv4 address:port) from source address src (NULL: any); -1 on failure. */
static inline int raw_dial(const char *portal, const char *src)
{
	struct sockaddr_in sa = raw_portal(portal);
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0)
		return -1;
	struct timeval tv = {.tv_sec = RAW_RECV_TIMEOUT_S};
	int one = 1;
	if (src) {
		struct sockaddr_in me = {.sin_family = AF_INET};
		if (inet_pton(AF_INET, src, &me.sin_addr) != 1 || bind(fd, (struct sockaddr *)&me, sizeof me)) {
			close(fd);
			return -1;
		}
	}
	if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) ||
	    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) ||
	    connect(fd, (struct sockaddr *)&sa, sizeof sa)) {
		close(fd);
		return -1;
	}
	return fd;
}

static inline void raw_connect(struct raw_conn *c, const char *portal, const char *src)
{
	memset(c, 0, sizeof *c);
	c->cmd_sn = 1;
	c->next_itt = 1;
	c->fd = raw_dial(portal, src);
	if (c->fd < 0)
		raw_fail("cannot connect to %s: %s", portal, strerror(errno));
}

/* The value of key in a login response's text, or NULL. */
static inline const char *raw_key(const struct raw_pdu *p, const char *key)
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

/* How a raw host logs in (no CHAP: the operational stage straight to the full feature phase). */
struct raw_login {
	const char *initiator;
	const char *target;     /* NULL: a discovery session */
	uint8_t isid_tail;      /* the last byte of ISID 80 00 00 12 34 xx */
	bool digests;           /* CRC32C header and data digests, else none */
	bool initial_r2t;
	bool immediate_data;
	uint32_t first_burst, max_burst; /* 0: 65536 and 262144 */
};

/*
 * Sends the Login Request and reads its response. Returns the login status
 * (class << 8 | detail, 0 when the full feature phase began); fails the
 * program when the target breaks the protocol or closes.
 */
static inline int raw_try_login(struct raw_conn *c, const struct raw_login *o, struct raw_pdu *r)
{
	char text[1024];
	const char *digest = o->digests ? "CRC32C" : "None";
	uint32_t fb = o->first_burst ? o->first_burst : 65536, mb = o->max_burst ? o->max_burst : 262144;
	int n;
	if (o->target)
		n = snprintf(text, sizeof text,
			     "InitiatorName=%s%cTargetName=%s%cSessionType=Normal%cHeaderDigest=%s%c"
			     "DataDigest=%s%cMaxRecvDataSegmentLength=%u%cImmediateData=%s%cInitialR2T=%s%c"
			     "FirstBurstLength=%u%cMaxBurstLength=%u%cErrorRecoveryLevel=0%c",
			     o->initiator, 0, o->target, 0, 0, digest, 0, digest, 0, RAW_MAX_DATA, 0,
			     o->immediate_data ? "Yes" : "No", 0, o->initial_r2t ? "Yes" : "No", 0, fb, 0, mb, 0, 0);
	else
		n = snprintf(text, sizeof text,
			     "InitiatorName=%s%cSessionType=Discovery%cHeaderDigest=None%cDataDigest=None%c"
			     "MaxRecvDataSegmentLength=%u%c",
			     o->initiator, 0, 0, 0, 0, RAW_MAX_DATA, 0);
	uint8_t bhs[BHS_LEN] = {OP_IMMEDIATE | OP_LOGIN_REQ, LOGIN_TRANSIT | STAGE_OPERATIONAL << 2 | STAGE_FFP};
	const uint8_t isid[6] = {ISID_RANDOM, 0, 0, 0x12, 0x34, o->isid_tail};
	memcpy(bhs + 8, isid, sizeof isid);
	put32(bhs + F_ITT, c->next_itt++);
	put32(bhs + 24, c->cmd_sn);
	c->digests = false;
	raw_send(c, bhs, (const uint8_t *)text, (uint32_t)n, SPOIL_NONE);
	if (!raw_recv(c, r))
		raw_fail("the target closed the connection during the login of %s", o->initiator);
	if ((r->bhs[0] & OP_MASK) != OP_LOGIN_RSP)
		raw_fail("expected a Login Response, got opcode %02Xh", r->bhs[0]);
	int status = r->bhs[LOGIN_STATUS_CLASS] << 8 | r->bhs[LOGIN_STATUS_DETAIL];
	if (status)
		return status;
	if (!(r->bhs[1] & LOGIN_TRANSIT) || (r->bhs[1] & 3) != STAGE_FFP)
		raw_fail("the target did not move to the full feature phase in one step (flags %02Xh)", r->bhs[1]);
	const char *mrd = raw_key(r, "MaxRecvDataSegmentLength");
	c->target_max_recv = mrd ? (uint32_t)strtoul(mrd, NULL, 10) : 8192; /* RFC 7143 13.12: the default */
	c->exp_stat_sn = get32(r->bhs + F_STATSN) + 1;
	c->cmd_sn = get32(r->bhs + F_EXPCMDSN);
	c->max_cmd_sn = get32(r->bhs + F_MAXCMDSN);
	c->digests = o->digests;
	return 0;
}

/* A login that must succeed; digests and the R2T settings must be what was asked. */
static inline void raw_login(struct raw_conn *c, const struct raw_login *o)
{
	static struct raw_pdu r;
	int st = raw_try_login(c, o, &r);
	if (st)
		raw_fail("login of %s refused: status class %u, detail %u", o->initiator, st >> 8, st & 0xFF);
	if (!o->target)
		return;
	const char *digest = o->digests ? "CRC32C" : "None";
	const char *hd = raw_key(&r, "HeaderDigest"), *dd = raw_key(&r, "DataDigest");
	if (!hd || strcmp(hd, digest) || !dd || strcmp(dd, digest))
		raw_fail("digests not negotiated: HeaderDigest=%s DataDigest=%s", hd ? hd : "(none)", dd ? dd : "(none)");
	const char *r2t = raw_key(&r, "InitialR2T"), *imm = raw_key(&r, "ImmediateData");
	if (!r2t || strcmp(r2t, o->initial_r2t ? "Yes" : "No") || !imm || strcmp(imm, o->immediate_data ? "Yes" : "No"))
		raw_fail("InitialR2T=%s ImmediateData=%s, not what was offered", r2t ? r2t : "(none)", imm ? imm : "(none)");
}

/* A SCSI Command header for lun with cdb: flags R/W, edtl, tag itt, CmdSN sn. */
static inline void raw_command_bhs(const struct raw_conn *c, uint8_t *bhs, int lun, const uint8_t *cdb, size_t cdb_len,
				   uint8_t rw, uint32_t edtl, uint32_t itt, uint32_t sn)
{
	memset(bhs, 0, BHS_LEN);
	bhs[0] = OP_SCSI_CMD;
	bhs[1] = FLAG_FINAL | rw | CMD_ATTR_SIMPLE;
	bhs[9] = (uint8_t)lun;
	put32(bhs + F_ITT, itt);
	put32(bhs + 20, edtl);
	put32(bhs + 24, sn);
	put32(bhs + 28, c->exp_stat_sn);
	memcpy(bhs + 32, cdb, cdb_len);
}

/* Fills st from a SCSI Response's status and sense. */
static inline void raw_response(const struct raw_pdu *r, struct raw_status *st)
{
	st->status = r->bhs[3];
	st->key = st->asc = st->ascq = 0;
	if (r->len >= 2 + SENSE_ASCQ_BYTE + 1) {
		st->key = r->data[2 + SENSE_KEY_BYTE] & 0x0F;
		st->asc = r->data[2 + SENSE_ASC_BYTE];
		st->ascq = r->data[2 + SENSE_ASCQ_BYTE];
	}
}

/* Waits for the end of command itt; Data-In goes to in (up to cap bytes). Any other PDU fails. */
static inline struct raw_status raw_wait(struct raw_conn *c, uint32_t itt, uint8_t *in, uint32_t cap)
{
	static struct raw_pdu r;
	struct raw_status st = {0};
	for (;;) {
		if (!raw_recv(c, &r))
			raw_fail("the target closed the connection before answering ITT %u", itt);
		uint8_t op = r.bhs[0] & OP_MASK;
		if (get32(r.bhs + F_ITT) != itt)
			raw_fail("unexpected PDU (opcode %02Xh, ITT %u) while waiting for ITT %u", op, get32(r.bhs + F_ITT),
				 itt);
		if (op == OP_DATA_IN) {
			uint32_t off = get32(r.bhs + F_OFFSET);
			if (off > cap || r.len > cap - off)
				raw_fail("Data-In beyond the buffer");
			memcpy(in + off, r.data, r.len);
			st.got = off + r.len;
			if (r.bhs[1] & DATAIN_STATUS) {
				st.status = r.bhs[3];
				return st;
			}
		} else if (op == OP_SCSI_RSP) {
			uint32_t got = st.got;
			raw_response(&r, &st);
			st.got = got;
			return st;
		} else {
			raw_fail("unexpected opcode %02Xh for ITT %u", op, itt);
		}
	}
}

/* Runs a command whose data (out: len bytes as immediate data; in: up to len bytes) fits one PDU. */
static inline struct raw_status raw_run(struct raw_conn *c, int lun, const uint8_t *cdb, size_t cdb_len, uint8_t rw,
					uint8_t *data, uint32_t len)
{
	uint8_t bhs[BHS_LEN];
	uint32_t itt = c->next_itt++;
	raw_command_bhs(c, bhs, lun, cdb, cdb_len, rw, len, itt, c->cmd_sn++);
	raw_send(c, bhs, rw == CMD_WRITE ? data : NULL, rw == CMD_WRITE ? len : 0, SPOIL_NONE);
	return raw_wait(c, itt, data, len);
}

static inline struct raw_status raw_good(struct raw_conn *c, int lun, const uint8_t *cdb, size_t cdb_len, uint8_t rw,
					 uint8_t *data, uint32_t len, const char *what)
{
	struct raw_status st = raw_run(c, lun, cdb, cdb_len, rw, data, len);
	if (st.status != GOOD)
		raw_fail("%s: status %02Xh, sense %Xh/%02Xh/%02Xh", what, st.status, st.key, st.asc, st.ascq);
	return st;
}

/* TEST UNIT READY until GOOD (unit attentions of a new nexus come first). */
static inline void raw_ready(struct raw_conn *c, int lun)
{
	static const uint8_t tur[6] = {0};
	struct raw_status st = {0};
	for (int i = 0; i < RAW_TUR_TRIES; i++) {
		st = raw_run(c, lun, tur, sizeof tur, 0, NULL, 0);
		if (st.status == GOOD)
			return;
	}
	raw_fail("LUN %d never became ready: status %02Xh, sense %Xh/%02Xh/%02Xh", lun, st.status, st.key, st.asc,
		 st.ascq);
}

/*
 * Puts the cartridge of storage element slot into drive element elem (LUN
 * lun) with MOVE MEDIUM on the changer, unless it is there already (an
 * earlier program moved it: destination full or source empty, 5/3Bh/0Dh or
 * 0Eh), and waits for the drive to be ready.
 */
static inline void raw_load(struct raw_conn *c, unsigned slot, unsigned elem, int lun)
{
	raw_ready(c, RAW_CHANGER);
	uint8_t move[12] = {0xA5, 0, 0, 0, (uint8_t)(slot >> 8), (uint8_t)slot, (uint8_t)(elem >> 8), (uint8_t)elem};
	struct raw_status st = raw_run(c, RAW_CHANGER, move, sizeof move, 0, NULL, 0);
	if (st.status != GOOD && !(st.key == 0x05 && st.asc == 0x3B && (st.ascq == 0x0D || st.ascq == 0x0E)))
		raw_fail("MOVE MEDIUM %u -> %u: status %02Xh, sense %Xh/%02Xh/%02Xh", slot, elem, st.status, st.key, st.asc,
			 st.ascq);
	raw_ready(c, lun);
}

/* A NOP-Out ping (immediate: it takes no CmdSN), with its data digest spoiled or not; false if closed. */
static inline bool raw_ping(struct raw_conn *c, const uint8_t *data, uint32_t len, uint32_t itt, enum raw_spoil spoil)
{
	uint8_t bhs[BHS_LEN] = {OP_IMMEDIATE | OP_NOP_OUT, FLAG_FINAL};
	put32(bhs + F_ITT, itt);
	put32(bhs + F_TTT, TAG_NONE);
	put32(bhs + 24, c->cmd_sn);
	put32(bhs + 28, c->exp_stat_sn);
	return raw_try_send(c, bhs, data, len, spoil);
}

/* The logical block the drive lun is at (READ POSITION, short form). */
static inline uint32_t raw_position(struct raw_conn *c, int lun)
{
	static const uint8_t rp[10] = {0x34};
	uint8_t buf[20];
	struct raw_status st = raw_good(c, lun, rp, sizeof rp, CMD_READ, buf, sizeof buf, "READ POSITION");
	if (st.got < 8)
		raw_fail("READ POSITION returned %u bytes", st.got);
	return get32(buf + 4);
}

/* One Data-Out of the task itt (TTT ttt, DataSN data_sn, at offset) on lun. */
static inline void raw_data_out(struct raw_conn *c, int lun, uint32_t itt, uint32_t ttt, uint32_t data_sn,
				uint32_t offset, const uint8_t *data, uint32_t len, bool final)
{
	uint8_t bhs[BHS_LEN] = {OP_DATA_OUT, final ? FLAG_FINAL : 0};
	bhs[9] = (uint8_t)lun;
	put32(bhs + F_ITT, itt);
	put32(bhs + F_TTT, ttt);
	put32(bhs + 28, c->exp_stat_sn);
	put32(bhs + F_DATASN, data_sn);
	put32(bhs + F_OFFSET, offset);
	raw_send(c, bhs, data, len, SPOIL_NONE);
}

/* A variable-block WRITE(6) CDB of len bytes (SSC-3, WRITE(6)). */
static inline void raw_write6(uint8_t cdb[6], uint32_t len)
{
	const uint8_t w[6] = {0x0A, 0, (uint8_t)(len >> 16), (uint8_t)(len >> 8), (uint8_t)len, 0};
	memcpy(cdb, w, 6);
}

/*
 * A well-behaved WRITE(6) of len bytes on lun over a session logged in with
 * o: immediate data and the unsolicited burst when o allows them (up to
 * FirstBurstLength, in PDUs no larger than the target accepts), then every
 * R2T answered in order. Returns the command's status.
 */
static inline struct raw_status raw_write(struct raw_conn *c, int lun, const uint8_t *data, uint32_t len,
					  const struct raw_login *o)
{
	uint32_t seg = c->target_max_recv < RAW_MAX_DATA ? c->target_max_recv : RAW_MAX_DATA;
	uint32_t fb = o->first_burst ? o->first_burst : 65536;
	uint32_t first = fb < len ? fb : len;
	uint32_t imm = o->immediate_data ? (first < seg ? first : seg) : 0;
	uint32_t unsol = o->initial_r2t ? imm : first;
	uint8_t cdb[6], bhs[BHS_LEN];
	raw_write6(cdb, len);
	uint32_t itt = c->next_itt++;
	raw_command_bhs(c, bhs, lun, cdb, sizeof cdb, CMD_WRITE, len, itt, c->cmd_sn++);
	if (unsol > imm)
		bhs[1] &= (uint8_t)~FLAG_FINAL; /* unsolicited Data-Out follows */
	raw_send(c, bhs, data, imm, SPOIL_NONE);
	uint32_t sn = 0;
	for (uint32_t off = imm; off < unsol;) {
		uint32_t n = unsol - off < seg ? unsol - off : seg;
		raw_data_out(c, lun, itt, TAG_NONE, sn++, off, data + off, n, off + n == unsol);
		off += n;
	}
	static struct raw_pdu r;
	struct raw_status st = {0};
	for (;;) {
		if (!raw_recv(c, &r))
			raw_fail("the target closed the connection during a WRITE");
		uint8_t op = r.bhs[0] & OP_MASK;
		if (get32(r.bhs + F_ITT) != itt)
			raw_fail("unexpected PDU (opcode %02Xh, ITT %u) during the WRITE of ITT %u", op, get32(r.bhs + F_ITT),
				 itt);
		if (op == OP_SCSI_RSP) {
			raw_response(&r, &st);
			return st;
		}
		if (op != OP_R2T)
			raw_fail("unexpected opcode %02Xh during a WRITE", op);
		uint32_t ttt = get32(r.bhs + F_TTT), at = get32(r.bhs + F_OFFSET), want = get32(r.bhs + F_DESIRED);
		if (at > len || want > len - at)
			raw_fail("an R2T beyond the write: offset %u, %u bytes of %u", at, want, len);
		uint32_t dsn = 0;
		for (uint32_t off = at; off < at + want;) {
			uint32_t n = at + want - off < seg ? at + want - off : seg;
			raw_data_out(c, lun, itt, ttt, dsn++, off, data + off, n, off + n == at + want);
			off += n;
		}
	}
}

/* Sends a WRITE(6) of len bytes on lun without data and waits for its first R2T; returns its transfer tag. */
static inline uint32_t raw_write_until_r2t(struct raw_conn *c, int lun, uint32_t itt, uint32_t sn, uint32_t len)
{
	uint8_t cdb[6], bhs[BHS_LEN];
	raw_write6(cdb, len);
	raw_command_bhs(c, bhs, lun, cdb, sizeof cdb, CMD_WRITE, len, itt, sn);
	raw_send(c, bhs, NULL, 0, SPOIL_NONE);
	static struct raw_pdu r;
	if (!raw_recv(c, &r))
		raw_fail("the target closed the connection instead of sending an R2T");
	if ((r.bhs[0] & OP_MASK) != OP_R2T || get32(r.bhs + F_ITT) != itt)
		raw_fail("expected an R2T for ITT %u, got opcode %02Xh ITT %u", itt, r.bhs[0], get32(r.bhs + F_ITT));
	if (get32(r.bhs + F_OFFSET) != 0 || get32(r.bhs + F_DESIRED) == 0)
		raw_fail("the first R2T asks for offset %u, %u bytes", get32(r.bhs + F_OFFSET), get32(r.bhs + F_DESIRED));
	return get32(r.bhs + F_TTT);
}

/* Logout (close the session) and its response; the connection is closed afterwards. */
static inline void raw_logout(struct raw_conn *c)
{
	uint8_t bhs[BHS_LEN] = {OP_IMMEDIATE | OP_LOGOUT_REQ, FLAG_FINAL};
	put32(bhs + F_ITT, c->next_itt++);
	put32(bhs + 24, c->cmd_sn);
	put32(bhs + 28, c->exp_stat_sn);
	raw_send(c, bhs, NULL, 0, SPOIL_NONE);
	static struct raw_pdu r;
	for (;;) {
		if (!raw_recv(c, &r))
			raw_fail("the target closed the connection instead of answering the Logout");
		if ((r.bhs[0] & OP_MASK) == OP_LOGOUT_RSP)
			break;
	}
	if (r.bhs[2])
		raw_fail("Logout response %u", r.bhs[2]);
	close(c->fd);
	c->fd = -1;
}

#endif
