/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target for the iSCSI full feature phase (vtl/iscsi/session.c):
 * the input is a little program of PDUs an initiator sends (SCSI commands
 * with or without immediate data, Data-Out that follows the rules or breaks
 * them in one field, NOP-Out, task management, logout, raw headers, data
 * digest errors) and of completions of the commands the session handed to
 * its logical units, in any order. The fake callbacks check what a host
 * would see, and abort on a violation:
 *   - a write reaches its unit only with every byte of its buffer sent by
 *     the host at that offset for that command (the data is a pattern of
 *     tag and offset, so a gap shows as foreign or stale bytes), and only
 *     when the host sent its Data-Out in order (offsets contiguous, the
 *     burst's TTT, DataSN 0, 1, ..., no more than the burst); so a write
 *     whose data was not all received in order never gets GOOD;
 *   - an R2T asks for the bytes right after those received, within the EDTL
 *     and MaxBurstLength, with a real TTT;
 *   - StatSN goes up by one per status, ExpCmdSN and MaxCmdSN never go back,
 *     and MaxCmdSN - ExpCmdSN + 1 stays within the command window;
 *   - a Reject carries a whole header; Data-In stays within the EDTL;
 *   - nothing after close; every task handed out is completed before
 *     session_destroy (ASan/UBSan catch the rest).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tests/fuzz/fuzzlib.h"
#include "vtl/iscsi/pdu.h"
#include "vtl/iscsi/session.h"

#include "common/grow.h"

#define F_LUNS 3
#define F_MAX_TASKS 64          /* commands the program keeps track of */
#define F_EDTL_MAX (256u << 10) /* largest transfer: keeps the pattern checks quick */
#define F_SEG_MAX (64u << 10)
#define F_STEPS 256
#define TTT_NONE 0xFFFFFFFFu
#define F_ITT_FOREIGN 0x80000000u /* tags from here up are forged: the host's own stay below */
#define OFF_TTT 20
#define OFF_EXPCMDSN 28
#define OFF_MAXCMDSN 32
#define OFF_STATSN 24
#define OFF_DATASN 36
#define OFF_OFFSET 40
#define OFF_DESIRED 44

/* What the host knows of one command it sent. */
struct host_task {
	uint32_t itt, edtl, cmd_sn;
	bool write, used;
	bool ended;      /* its status came */
	bool submitted;  /* the session handed it to its unit */
	bool broken;     /* the host sent Data-Out out of order for it while it waited for data */
	uint32_t next;   /* the next offset the host sends */
	uint32_t burst_end, ttt, dsn; /* the burst open now: [next, burst_end) with TTT and DataSN */
	bool burst_open;
	bool maybe_aborted; /* a task management function came after it: the session may have dropped it */
};

static struct fuzz_state {
	struct session *s;
	struct session_params p;
	struct host_task tasks[F_MAX_TASKS];
	unsigned n_tasks;
	struct session_task *pending[F_MAX_TASKS * 2];
	unsigned n_pending;
	uint32_t itt_next, cmd_sn;
	bool closed, have_sn;
	uint32_t stat_sn, exp_cmd_sn, max_cmd_sn;
	struct fuzz_input *in;
} st;

/* With VTL_FUZZ_TRACE set (replaying a crash input), every PDU in and out is printed to stderr. */
static int tracing = -1;

static void trace(const char *dir, const struct iscsi_pdu *p, const char *note)
{
	if (tracing < 0)
		tracing = getenv("VTL_FUZZ_TRACE") != NULL;
	if (!tracing)
		return;
	const uint8_t *b = p->bhs;
	fprintf(stderr, "%s op %02X flags %02X b2 %02X b3 %02X ITT %08X TTT/EDTL %08X SN %08X DataSN %08X off %08X "
			"f44 %08X len %u%s%s\n",
		dir, b[0], b[1], b[2], b[3], pdu_get(b + 16, 4), pdu_get(b + 20, 4), pdu_get(b + 24, 4),
		pdu_get(b + 36, 4), pdu_get(b + 40, 4), pdu_get(b + 44, 4), p->data_len, note ? " " : "", note ? note : "");
}

static uint8_t pattern(uint32_t itt, uint32_t off)
{
	return (uint8_t)(itt * 131u + off * 7u + (off >> 8));
}

static struct host_task *task_of(uint32_t itt)
{
	for (unsigned i = 0; i < st.n_tasks; i++)
		if (st.tasks[i].used && st.tasks[i].itt == itt)
			return &st.tasks[i];
	return NULL;
}

#define check(ok) check_at((ok), __LINE__)
static void check_at(bool ok, int line)
{
	if (!ok) {
		fprintf(stderr, "fuzz_session: invariant at line %d broken\n", line);
		abort();
	}
}

static void f_send(void *arg, struct iscsi_pdu *pdu, const struct iovec *data, int niov)
{
	(void)arg;
	size_t len = 0;
	for (int i = 0; i < niov; i++)
		len += data[i].iov_len;
	check(len == pdu->data_len);
	trace("  <-", pdu, NULL);
	const uint8_t *b = pdu->bhs;
	uint32_t itt = pdu_itt(pdu);
	uint8_t op = b[BHS_OPCODE] & BHS_OPCODE_MASK;
	/* Sequence numbers (RFC 7143 4.2.2): StatSN one up per status; the window only moves forward. */
	uint32_t exp = pdu_get(b + OFF_EXPCMDSN, 4), max = pdu_get(b + OFF_MAXCMDSN, 4);
	bool status = op == ISCSI_OP_SCSI_RSP || op == ISCSI_OP_REJECT || op == ISCSI_OP_TMF_RSP ||
		      op == ISCSI_OP_LOGOUT_RSP || op == ISCSI_OP_TEXT_RSP ||
		      (op == ISCSI_OP_NOP_IN && itt != ITT_RESERVED) ||
		      (op == ISCSI_OP_DATA_IN && (b[BHS_FLAGS] & 0x01));
	if (op != ISCSI_OP_R2T && op != ISCSI_OP_DATA_IN) {
		uint32_t sn = pdu_get(b + OFF_STATSN, 4);
		if (status) {
			check(sn == st.stat_sn);
			st.stat_sn++;
		} else {
			check(sn == st.stat_sn);
		}
	} else if (op == ISCSI_OP_DATA_IN && status) {
		check(pdu_get(b + OFF_STATSN, 4) == st.stat_sn);
		st.stat_sn++;
	}
	if (st.have_sn) {
		check((int32_t)(exp - st.exp_cmd_sn) >= 0);
		check((int32_t)(max - st.max_cmd_sn) >= 0);
	}
	/* MaxCmdSN - ExpCmdSN + 1: from 0 (the window full) up to cmd_window. */
	uint32_t window = st.p.cmd_window ? st.p.cmd_window : SESSION_CMD_WINDOW;
	check((int32_t)(max - exp) >= -1 && (int32_t)(max - exp) < (int32_t)window);
	st.have_sn = true;
	st.exp_cmd_sn = exp;
	st.max_cmd_sn = max;

	struct host_task *t = task_of(itt);
	if (!t && itt >= F_ITT_FOREIGN && op != ISCSI_OP_REJECT)
		return; /* a tag the program forged (high bit): nothing to compare with */
	switch (op) {
	case ISCSI_OP_REJECT:
		check(pdu->data_len == ISCSI_BHS_LEN);
		break;
	case ISCSI_OP_R2T: {
		check(t && t->write && !t->ended && !t->submitted);
		uint32_t off = pdu_get(b + OFF_OFFSET, 4), want = pdu_get(b + OFF_DESIRED, 4);
		uint32_t ttt = pdu_get(b + OFF_TTT, 4);
		check(ttt != TTT_NONE && want > 0 && off <= t->edtl && want <= t->edtl - off);
		check(!st.p.max_burst || want <= st.p.max_burst);
		if (!t->broken)
			check(off == t->next && !t->burst_open);
		t->burst_open = true;
		t->burst_end = off + want;
		t->ttt = ttt;
		t->dsn = 0;
		break;
	}
	case ISCSI_OP_SCSI_RSP:
		check(t && !t->ended);
		t->ended = true;
		t->burst_open = false;
		/* GOOD only for what its unit executed: never for a write whose data broke its order. */
		if (b[3] == SCSI_GOOD)
			check(t->submitted && !t->broken);
		break;
	case ISCSI_OP_DATA_IN: {
		check(t && !t->write && t->submitted);
		uint32_t off = pdu_get(b + OFF_OFFSET, 4);
		check(off <= t->edtl && pdu->data_len <= t->edtl - off);
		if (status)
			t->ended = true;
		break;
	}
	default:
		break;
	}
}

/* The unit: a write's buffer must hold exactly the host's pattern; a read gets bytes. */
static void f_submit(void *arg, struct session_task *t)
{
	(void)arg;
	struct host_task *h = task_of(t->itt);
	check(h || t->itt >= F_ITT_FOREIGN);
	if (!h) {
		check(st.n_pending < VTL_ARRAY_SIZE(st.pending));
		st.pending[st.n_pending++] = t;
		return;
	}
	check(!h->submitted && !h->ended);
	h->submitted = true;
	if (tracing > 0)
		fprintf(stderr, "  submit ITT %08X%s\n", h->itt, h->broken ? " (its Data-Out broke the order)" : "");
	if (h->write) {
		check(!h->broken);
		check(t->cmd.iov_cnt == (h->edtl ? 1 : 0));
		const uint8_t *p = t->cmd.iov_cnt ? t->cmd.iov[0].iov_base : NULL;
		check(!h->edtl || t->cmd.iov[0].iov_len >= h->edtl);
		for (uint32_t i = 0; i < h->edtl; i++)
			check(p[i] == pattern(h->itt, i));
	}
	check(st.n_pending < VTL_ARRAY_SIZE(st.pending));
	st.pending[st.n_pending++] = t;
}

static void f_close(void *arg)
{
	(void)arg;
	st.closed = true;
}

/* Completes the pending task i: GOOD (a read with some bytes) or CHECK CONDITION. */
static void complete(unsigned i, uint8_t how)
{
	struct session_task *t = st.pending[i];
	st.pending[i] = st.pending[--st.n_pending];
	if (how & 1) {
		scsi_fail(&t->cmd, sense_of(SK_MEDIUM_ERROR, ASC_WRITE_ERROR));
	} else {
		size_t n = t->cmd.dir == SCSI_DIR_IN ? t->cmd.xfer_len >> (how >> 5) : 0;
		if (n && t->cmd.iov_cnt)
			memset(t->cmd.iov[0].iov_base, how, n);
		scsi_done(&t->cmd, n);
	}
	session_complete(st.s, t);
}

static void deliver(struct iscsi_pdu *pdu, bool digest_error)
{
	if (st.closed)
		return;
	trace("->", pdu, digest_error ? "(data digest error)" : NULL);
	if (digest_error)
		session_data_digest_error(st.s, pdu);
	else
		session_receive(st.s, pdu);
}

static uint32_t pick_len(struct fuzz_input *in)
{
	static const uint32_t lens[] = {0, 1, 512, 4096, 8192, 65536, 65537, 131072, F_EDTL_MAX};
	uint8_t k = (uint8_t)fuzz_take(in, 1);
	if (k < 200)
		return lens[k % (VTL_ARRAY_SIZE(lens))];
	return fuzz_take(in, 3) % (F_EDTL_MAX + 1);
}

static uint8_t data_buf[F_EDTL_MAX + F_SEG_MAX];

/* A SCSI command: a write (WRITE(6)) or read (READ(6)) or none, with immediate data per the input. */
static void op_command(struct fuzz_input *in)
{
	uint8_t f = (uint8_t)fuzz_take(in, 1);
	uint32_t edtl = pick_len(in);
	bool write = (f & 3) == 0 || (f & 3) == 3, read = (f & 3) == 1;
	if (!write && !read)
		edtl = 0;
	uint32_t imm = 0;
	if (write && st.p.immediate_data && (f & 4)) {
		imm = (f & 8) ? edtl : fuzz_take(in, 3) % (edtl + 1);
		if (imm > st.p.first_burst)
			imm = st.p.first_burst;
		if (imm > F_SEG_MAX)
			imm = F_SEG_MAX;
	}
	bool final = !(f & 0x10) || st.p.initial_r2t;
	bool immediate = (f & 0x60) == 0x60;
	/* A tag in use: only one the session surely holds (with its unit), which it must refuse. */
	struct host_task *held = st.n_tasks ? &st.tasks[fuzz_take(in, 1) % st.n_tasks] : NULL;
	bool reuse = (f & 0x80) && held && held->used && held->submitted && !held->ended && !held->maybe_aborted;
	uint32_t itt = reuse ? held->itt : st.itt_next++;
	uint32_t sn = (fuzz_take(in, 1) & 0x1F) == 0x1F ? st.cmd_sn + fuzz_take(in, 1) : st.cmd_sn;
	struct iscsi_pdu pdu;
	memset(&pdu, 0, sizeof pdu);
	pdu.bhs[BHS_OPCODE] = ISCSI_OP_SCSI_CMD | (immediate ? BHS_IMMEDIATE : 0);
	pdu.bhs[BHS_FLAGS] = (final ? BHS_FINAL : 0) | (write ? 0x20 : 0) | (read ? 0x40 : 0) | 0x01;
	pdu.bhs[BHS_LUN + 1] = (uint8_t)(fuzz_take(in, 1) % (F_LUNS + 1));
	pdu_put(pdu.bhs + BHS_ITT, itt, 4);
	pdu_put(pdu.bhs + 20, edtl, 4);
	pdu_put(pdu.bhs + 24, sn, 4);
	pdu.bhs[32] = write ? 0x0A : read ? 0x08 : 0x00;
	pdu.bhs[34] = (uint8_t)(edtl >> 16);
	pdu.bhs[35] = (uint8_t)(edtl >> 8);
	pdu.bhs[36] = (uint8_t)edtl;
	for (uint32_t i = 0; i < imm; i++)
		data_buf[i] = pattern(itt, i);
	pdu.data = data_buf;
	pdu.data_len = imm;
	pdu_put(pdu.bhs + BHS_DATA_LEN, imm, 3);
	struct host_task *h = NULL;
	if (!reuse && st.n_tasks < F_MAX_TASKS) {
		h = &st.tasks[st.n_tasks++];
		memset(h, 0, sizeof *h);
		*h = (struct host_task){.itt = itt, .edtl = edtl, .cmd_sn = sn, .write = write, .used = true, .next = imm};
		if (write && !final && !st.p.initial_r2t) {
			uint32_t unsol = st.p.first_burst < edtl ? st.p.first_burst : edtl;
			if (unsol > imm) {
				h->burst_open = true;
				h->burst_end = unsol;
				h->ttt = TTT_NONE;
			}
		}
	} else if (!reuse) {
		return; /* the host keeps track of no more: send nothing it could not check */
	}
	bool digest = (fuzz_take(in, 1) & 0x3F) == 0x3F && imm;
	if (digest && h)
		h->used = false; /* dropped as never sent, its CmdSN still expected: the host forgets it */
	else if (!immediate && sn == st.cmd_sn)
		st.cmd_sn++;
	deliver(&pdu, digest);
}

/* A Data-Out for one of the host's writes: the right next one, or one field broken. */
static void op_data_out(struct fuzz_input *in)
{
	if (!st.n_tasks)
		return;
	struct host_task *h = &st.tasks[fuzz_take(in, 1) % st.n_tasks];
	uint8_t how = (uint8_t)fuzz_take(in, 1);
	uint32_t itt = h->itt, off = h->next, ttt = h->ttt, dsn = h->dsn;
	uint32_t room = h->burst_open ? h->burst_end - h->next : 0;
	uint32_t len = room;
	uint8_t part = (uint8_t)fuzz_take(in, 1);
	if (part && len > 1)
		len = 1 + (uint32_t)((uint64_t)(len - 1) * part / 255);
	if (len > F_SEG_MAX)
		len = F_SEG_MAX;
	bool final = h->burst_open && off + len == h->burst_end;
	bool wrong = false;
	switch (how % 10) {
	case 0:
		off = (uint32_t)((int32_t)off + (int8_t)fuzz_take(in, 1) * 512); /* duplicate, overlap or gap */
		wrong = off != h->next;
		break;
	case 1:
		ttt ^= 1 + fuzz_take(in, 1);
		wrong = true;
		break;
	case 2:
		dsn += 1 + fuzz_take(in, 1);
		wrong = true;
		break;
	case 3:
		len += 1 + fuzz_take(in, 2); /* beyond the burst */
		if (len > F_SEG_MAX)
			len = F_SEG_MAX;
		wrong = len > room;
		break;
	case 4:
		itt = F_ITT_FOREIGN | fuzz_take(in, 4); /* a tag of no write */
		break;
	default:
		break;
	}
	if (!h->burst_open && how % 10 != 4)
		wrong = true; /* no burst is open: nothing may be sent */
	for (uint32_t i = 0; i < len; i++)
		data_buf[i] = pattern(itt, off + i);
	struct iscsi_pdu pdu;
	memset(&pdu, 0, sizeof pdu);
	pdu.bhs[BHS_OPCODE] = ISCSI_OP_DATA_OUT;
	pdu.bhs[BHS_FLAGS] = final ? BHS_FINAL : 0;
	pdu.bhs[BHS_LUN + 1] = 1;
	pdu_put(pdu.bhs + BHS_ITT, itt, 4);
	pdu_put(pdu.bhs + OFF_TTT, ttt, 4);
	pdu_put(pdu.bhs + OFF_DATASN, dsn, 4);
	pdu_put(pdu.bhs + OFF_OFFSET, off, 4);
	pdu_put(pdu.bhs + BHS_DATA_LEN, len, 3);
	pdu.data = data_buf;
	pdu.data_len = len;
	bool digest = (how & 0xF0) == 0xF0;
	/* Only a write still waiting for data can be broken; for others the Data-Out is a stray (Reject 09h). */
	if (itt == h->itt && h->write && !h->ended && !h->submitted && h->next < h->edtl) {
		if (wrong || digest)
			h->broken = true;
		else {
			h->next += len;
			h->dsn++;
			if (final || h->next == h->burst_end)
				h->burst_open = false;
		}
	}
	deliver(&pdu, digest);
}

/* Other requests: NOP-Out, task management, logout, text, raw header. */
static void op_other(struct fuzz_input *in, uint8_t kind)
{
	struct iscsi_pdu pdu;
	memset(&pdu, 0, sizeof pdu);
	uint32_t len = 0;
	switch (kind) {
	case 0:
		pdu.bhs[BHS_OPCODE] = ISCSI_OP_NOP_OUT | BHS_IMMEDIATE;
		pdu.bhs[BHS_FLAGS] = BHS_FINAL;
		pdu_put(pdu.bhs + BHS_ITT, fuzz_take(in, 1) & 1 ? ITT_RESERVED : st.itt_next++, 4);
		pdu_put(pdu.bhs + OFF_TTT, TTT_NONE, 4);
		len = fuzz_take(in, 2) % (8192 + 1);
		memset(data_buf, 0x33, len);
		break;
	case 1: {
		pdu.bhs[BHS_OPCODE] = ISCSI_OP_TMF_REQ | BHS_IMMEDIATE;
		pdu.bhs[BHS_FLAGS] = (uint8_t)(BHS_FINAL | (1 + fuzz_take(in, 1) % 8));
		pdu.bhs[BHS_LUN + 1] = (uint8_t)(fuzz_take(in, 1) % (F_LUNS + 1));
		pdu_put(pdu.bhs + BHS_ITT, st.itt_next++, 4);
		uint32_t ref = st.n_tasks ? st.tasks[fuzz_take(in, 1) % st.n_tasks].itt : 0;
		pdu_put(pdu.bhs + 20, ref, 4);
		pdu_put(pdu.bhs + 24, st.cmd_sn, 4); /* an aborted task ends without status: nothing to expect */
		for (unsigned i = 0; i < st.n_tasks; i++)
			st.tasks[i].maybe_aborted = true;
		break;
	}
	case 2:
		pdu.bhs[BHS_OPCODE] = ISCSI_OP_LOGOUT_REQ | BHS_IMMEDIATE;
		pdu.bhs[BHS_FLAGS] = (uint8_t)(BHS_FINAL | (fuzz_take(in, 1) % 3));
		pdu_put(pdu.bhs + BHS_ITT, st.itt_next++, 4);
		pdu_put(pdu.bhs + 24, st.cmd_sn, 4);
		break;
	default:
		for (unsigned i = 0; i < ISCSI_BHS_LEN; i++)
			pdu.bhs[i] = (uint8_t)fuzz_take(in, 1);
		pdu.bhs[BHS_ITT] |= 0x80; /* a forged tag: never one of the host's tasks */
		for (unsigned i = 0; i < st.n_tasks; i++)
			st.tasks[i].maybe_aborted = true; /* it may be a task management function */
		len = pdu_dlen_field(pdu.bhs) % (F_SEG_MAX + 1);
		memset(data_buf, 0x44, len);
		break;
	}
	pdu.data = data_buf;
	pdu.data_len = len;
	pdu_put(pdu.bhs + BHS_DATA_LEN, len, 3);
	deliver(&pdu, false);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_input in = {data, size};
	memset(&st, 0, sizeof st);
	uint8_t cfg = (uint8_t)fuzz_take(&in, 1);
	static const uint32_t bursts[] = {512, 4096, 65536, 262144};
	st.p = (struct session_params){
		.max_recv_data = F_SEG_MAX, .max_send_data = (cfg & 0x40) ? 8192 : F_SEG_MAX,
		.max_burst = bursts[(cfg >> 2) & 3], .first_burst = bursts[(cfg >> 4) & 3],
		.initial_r2t = cfg & 1, .immediate_data = cfg & 2, .exp_cmd_sn = 7, .stat_sn = 100,
	};
	/* The limits: a small window, ping data and buffers in some runs, so that their edges are reached. */
	uint8_t lim = (uint8_t)fuzz_take(&in, 1);
	static struct session_budget budget;
	static const uint64_t buffer_caps[] = {0, 1u << 20, 4u << 20, 64u << 20};
	st.p.cmd_window = lim & 0x80 ? 1 + lim % SESSION_CMD_WINDOW_MAX : 0;
	st.p.ping_data_max = lim & 0x40 ? 1 + (lim & 0x3F) * 64 : 0;
	st.p.buffer_max = buffer_caps[(lim >> 4) & 3];
	budget = (struct session_budget){.max = buffer_caps[(lim >> 2) & 3] ? buffer_caps[(lim >> 2) & 3] : 1u << 30};
	st.p.budget = lim & 2 ? &budget : NULL;
	if (st.p.first_burst > st.p.max_burst)
		st.p.first_burst = st.p.max_burst; /* RFC 7143 13.14: FirstBurstLength <= MaxBurstLength */
	st.cmd_sn = 7;
	st.stat_sn = 100;
	st.itt_next = 1;
	struct vtl_lu lus[F_LUNS];
	for (unsigned i = 0; i < F_LUNS; i++)
		lus[i] = (struct vtl_lu){.lun = (uint16_t)i};
	struct session_io io = {.send = f_send, .submit = f_submit, .close = f_close};
	if (session_create(&st.p, lus, F_LUNS, 0x1234, &io, &st.s) != 0)
		return 0;
	for (unsigned step = 0; step < F_STEPS && in.n; step++) {
		uint8_t op = (uint8_t)fuzz_take(&in, 1);
		if (op < 80)
			op_command(&in);
		else if (op < 180)
			op_data_out(&in);
		else if (op < 230) {
			if (st.n_pending)
				complete(fuzz_take(&in, 1) % st.n_pending, (uint8_t)fuzz_take(&in, 1));
		} else
			op_other(&in, (uint8_t)(op % 4));
	}
	while (st.n_pending)
		complete(0, 0);
	session_destroy(st.s);
	check(!st.p.budget || budget.used == 0); /* every byte a session took from the target's budget is back */
	return 0;
}
