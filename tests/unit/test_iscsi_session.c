/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The iSCSI full feature phase PDU by PDU, with a real tape drive as LUN 1:
 * SCSI commands with Data-In and phase-collapsed status, writes with
 * immediate data, unsolicited data and R2T, sense and residuals in the SCSI
 * Response, unknown LUNs, NOP ping, task management, logout, Rejects and
 * the command window.
 */
#include "tests/unit/scsi_host.h"

#include <stdlib.h>
#include <string.h>

#include "vtl/iscsi/session.h"

#include "common/grow.h"

#define MAX_SENT 256

struct sent {
	uint8_t bhs[ISCSI_BHS_LEN];
	uint8_t *data;
	uint32_t len;
};

static struct sent out[MAX_SENT];
static unsigned n_out;
static struct session_task *queue[64];
static unsigned n_queue;
static int closed;

static void cap_send(void *arg, struct iscsi_pdu *pdu, const struct iovec *data, int niov)
{
	(void)arg;
	assert_true(n_out < MAX_SENT);
	struct sent *o = &out[n_out++];
	memcpy(o->bhs, pdu->bhs, ISCSI_BHS_LEN);
	o->len = 0;
	for (int i = 0; i < niov; i++)
		o->len += (uint32_t)data[i].iov_len;
	assert_int_equal(o->len, pdu->data_len);
	o->data = talloc(o->len);
	uint32_t at = 0;
	for (int i = 0; i < niov; i++) {
		memcpy(o->data + at, data[i].iov_base, data[i].iov_len);
		at += (uint32_t)data[i].iov_len;
	}
}

static void cap_submit(void *arg, struct session_task *t)
{
	(void)arg;
	queue[n_queue++] = t;
}

static void cap_close(void *arg)
{
	(void)arg;
	closed++;
}

/* The drive as vtld's sessions see it, but for nexus_lost: a session's end leaves the host's state alone. */
static struct scsi_unit_ops drive_unit;

static struct session *sess;
static uint32_t cmd_sn;

/* Runs what the session handed to its units, as the drive's worker would. */
static void run_queue(void)
{
	while (n_queue) {
		struct session_task *t = queue[0];
		memmove(queue, queue + 1, --n_queue * sizeof *queue);
		t->lu->ops->execute(t->lu->dev, &t->cmd);
		session_complete(sess, t);
	}
}

/* A new session of the host over LUN 1 (the session's nexus is the host's: its power-on attention is seen). */
static int session_new(struct host *h)
{
	n_out = n_queue = 0;
	closed = 0;
	drive_unit = (struct scsi_unit_ops){.execute = ssc_unit_ops.execute, .reset = ssc_unit_ops.reset};
	struct vtl_lu lu = {.lun = 1, .dev = h->d, .ops = &drive_unit};
	struct session_params p = {.max_recv_data = 65536, .max_send_data = 65536, .max_burst = 65536,
				   .first_burst = 65536, .initial_r2t = false, .immediate_data = true,
				   .exp_cmd_sn = 10, .stat_sn = 100};
	struct session_io io = {.send = cap_send, .submit = cap_submit, .close = cap_close};
	cmd_sn = 10;
	return session_create(&p, &lu, 1, HOST_NEXUS, &io, &sess) == 0 ? 0 : -1;
}

static int setup(void **state)
{
	if (host_setup(state) != 0)
		return -1;
	return session_new(*state);
}

static int teardown(void **state)
{
	session_destroy(sess);
	return host_teardown(state);
}

/* A SCSI Command PDU for LUN lun with cdb, flags (R 40h, W 20h, F 80h), edtl and immediate data. */
static void command(uint8_t lun, const uint8_t *cdb, unsigned cdb_len, uint8_t flags, uint32_t edtl, uint32_t itt,
		    const uint8_t *data, uint32_t len)
{
	struct iscsi_pdu p;
	memset(&p, 0, sizeof p);
	p.bhs[0] = ISCSI_OP_SCSI_CMD;
	p.bhs[1] = flags;
	p.bhs[9] = lun;
	pdu_put(p.bhs + 16, itt, 4);
	pdu_put(p.bhs + 20, edtl, 4);
	pdu_put(p.bhs + 24, cmd_sn++, 4);
	memcpy(p.bhs + 32, cdb, cdb_len);
	p.data = (uint8_t *)data;
	p.data_len = len;
	session_receive(sess, &p);
	run_queue();
}

/* A Data-Out's header, DataSN datasn (the PDU's number within its burst), for len bytes. */
static void data_out_pdu(struct iscsi_pdu *p, uint32_t itt, uint32_t ttt, uint32_t datasn, uint32_t offset,
			 uint32_t len, bool final)
{
	memset(p, 0, sizeof *p);
	p->bhs[0] = ISCSI_OP_DATA_OUT;
	p->bhs[1] = final ? 0x80 : 0;
	p->bhs[9] = 1;
	pdu_put(p->bhs + 16, itt, 4);
	pdu_put(p->bhs + 20, ttt, 4);
	pdu_put(p->bhs + 36, datasn, 4);
	pdu_put(p->bhs + 40, offset, 4);
	p->data_len = len;
}

/* A Data-Out with DataSN datasn. */
static void data_out_sn(uint32_t itt, uint32_t ttt, uint32_t datasn, uint32_t offset, const uint8_t *data,
			uint32_t len, bool final)
{
	struct iscsi_pdu p;
	data_out_pdu(&p, itt, ttt, datasn, offset, len, final);
	p.data = (uint8_t *)data;
	session_receive(sess, &p);
	run_queue();
}

/* The first (or only) Data-Out of a burst. */
static void data_out(uint32_t itt, uint32_t ttt, uint32_t offset, const uint8_t *data, uint32_t len, bool final)
{
	data_out_sn(itt, ttt, 0, offset, data, len, final);
}

/* A NOP-Out ping (ITT itt, no TTT) numbered cmd_sn, immediate or not, with data. */
static void nop_pdu(struct iscsi_pdu *p, uint32_t itt, bool immediate, uint8_t *data, uint32_t len)
{
	memset(p, 0, sizeof *p);
	p->bhs[0] = ISCSI_OP_NOP_OUT | (immediate ? BHS_IMMEDIATE : 0);
	p->bhs[1] = 0x80;
	pdu_put(p->bhs + 16, itt, 4);
	pdu_put(p->bhs + 20, ITT_RESERVED, 4);
	pdu_put(p->bhs + 24, cmd_sn, 4);
	p->data = data;
	p->data_len = len;
}

static uint32_t f32(const struct sent *o, unsigned at)
{
	return pdu_get(o->bhs + at, 4);
}

static void inquiry_with_phase_collapse(void **state)
{
	(void)state;
	uint8_t inq[6] = {0x12, 0, 0, 0, 96, 0};
	command(1, inq, 6, 0xC0, 96, 7, NULL, 0);
	assert_int_equal(n_out, 1);
	struct sent *o = &out[0];
	assert_int_equal(o->bhs[0], ISCSI_OP_DATA_IN);
	assert_int_equal(o->bhs[1], 0x81); /* F and S: the status rides on the data */
	assert_int_equal(o->bhs[3], SCSI_GOOD);
	assert_int_equal(f32(o, 16), 7);
	assert_int_equal(f32(o, 24), 100); /* StatSN */
	assert_int_equal(f32(o, 28), 11);  /* ExpCmdSN moved past the command */
	assert_int_equal(f32(o, 32), 11 + SESSION_CMD_WINDOW - 1);
	assert_int_equal(o->len, 96);
	assert_int_equal(o->data[0], 0x01); /* a tape drive */
	/* A bigger allocation than the answer: underflow with the residual. */
	n_out = 0;
	inq[4] = 200;
	command(1, inq, 6, 0xC0, 200, 8, NULL, 0);
	assert_int_equal(out[0].bhs[1] & 0x02, 0x02);
	assert_int_equal(f32(&out[0], 44), 200 - 96);
	assert_int_equal(f32(&out[0], 24), 101);
}

static void unknown_lun(void **state)
{
	(void)state;
	uint8_t inq[6] = {0x12, 0, 0, 0, 36, 0};
	command(5, inq, 6, 0xC0, 36, 1, NULL, 0);
	assert_int_equal(out[0].data[0], 0x7F); /* peripheral qualifier 011b: no unit there */
	n_out = 0;
	uint8_t tur[6] = {0};
	command(5, tur, 6, 0x80, 0, 2, NULL, 0);
	struct sent *o = &out[0];
	assert_int_equal(o->bhs[0], ISCSI_OP_SCSI_RSP);
	assert_int_equal(o->bhs[3], SCSI_CHECK_CONDITION);
	assert_int_equal(pdu_get(o->data, 2), 18); /* SenseLength, then fixed-format sense */
	assert_int_equal(o->data[2 + 2] & 0x0F, SK_ILLEGAL_REQUEST);
	assert_int_equal(o->data[2 + 12], 0x25);
}

static void write_with_r2t_then_read_back(void **state)
{
	struct host *h = *state;
	host_new_cart(h, "F00001L8", 0);
	host_load(h, "F00001L8");
	enum { LEN = 200000 };
	static uint8_t block[LEN];
	gen_data(block, LEN, 5, false);
	uint8_t wr[6];
	cdb_write6(wr, false, LEN);
	/* 16 KiB immediate, unsolicited data to FirstBurstLength (64 KiB), then R2Ts of MaxBurstLength. */
	command(1, wr, 6, 0x20, LEN, 20, block, 16384);
	assert_int_equal(n_out, 0);
	data_out(20, ITT_RESERVED, 16384, block + 16384, 65536 - 16384, true);
	assert_int_equal(n_out, 1);
	assert_int_equal(out[0].bhs[0], ISCSI_OP_R2T);
	assert_int_equal(f32(&out[0], 40), 65536);  /* offset */
	assert_int_equal(f32(&out[0], 44), 65536);  /* desired length */
	assert_int_equal(f32(&out[0], 36), 0);      /* R2TSN */
	uint32_t ttt = f32(&out[0], 20);
	assert_true(ttt != ITT_RESERVED);
	/* The burst in two Data-Out PDUs. */
	data_out(20, ttt, 65536, block + 65536, 32768, false);
	assert_int_equal(n_out, 1);
	data_out_sn(20, ttt, 1, 98304, block + 98304, 32768, true);
	assert_int_equal(n_out, 2);
	assert_int_equal(f32(&out[1], 40), 131072);
	assert_int_equal(f32(&out[1], 44), 65536);
	assert_int_equal(f32(&out[1], 36), 1);
	/* Each R2T has its own TTT: a Data-Out meant for an earlier burst is told apart. */
	assert_true(f32(&out[1], 20) != ttt);
	data_out(20, f32(&out[1], 20), 131072, block + 131072, 65536, true);
	assert_int_equal(n_out, 3);
	assert_int_equal(f32(&out[2], 40), 196608);
	assert_int_equal(f32(&out[2], 44), LEN - 196608); /* the last burst is what is left */
	data_out(20, f32(&out[2], 20), 196608, block + 196608, LEN - 196608, true);
	assert_int_equal(n_out, 4);
	assert_int_equal(out[3].bhs[0], ISCSI_OP_SCSI_RSP);
	assert_int_equal(out[3].bhs[3], SCSI_GOOD);
	assert_int_equal(out[3].bhs[1] & 0x06, 0); /* no residual */
	/* Read it back: Data-In of 64 KiB each, DataSN and offsets in order, status on the last. */
	uint8_t rw[6] = {0x01};
	n_out = 0;
	command(1, rw, 6, 0x80, 0, 21, NULL, 0);
	assert_int_equal(out[0].bhs[3], SCSI_GOOD);
	n_out = 0;
	uint8_t rd[6];
	cdb_read6(rd, false, false, LEN);
	command(1, rd, 6, 0xC0, LEN, 22, NULL, 0);
	assert_int_equal(n_out, 4);
	static uint8_t back[LEN];
	for (unsigned i = 0; i < 4; i++) {
		assert_int_equal(out[i].bhs[0], ISCSI_OP_DATA_IN);
		assert_int_equal(f32(&out[i], 36), i);
		assert_int_equal(f32(&out[i], 40), i * 65536);
		memcpy(back + i * 65536, out[i].data, out[i].len);
	}
	assert_int_equal(out[3].bhs[1], 0x81);
	assert_int_equal(out[2].bhs[1], 0x00);
	assert_memory_equal(back, block, LEN);
}

/*
 * A host pipelines WRITEs: a 128 KiB block whose second half needs an R2T,
 * then a 32 KiB block whose data all came as immediate data. The drive must
 * still write them in CmdSN order, as the host numbered them.
 */
static void pipelined_writes_keep_cmdsn_order(void **state)
{
	struct host *h = *state;
	host_new_cart(h, "F00002L8", 0);
	host_load(h, "F00002L8");
	enum { BIG = 131072, SMALL = 32768 };
	static uint8_t big[BIG], small[SMALL], back[BIG];
	gen_data(big, BIG, 7, false);
	gen_data(small, SMALL, 8, false);
	uint8_t wr[6];
	cdb_write6(wr, false, BIG);
	command(1, wr, 6, 0xA0, BIG, 30, big, 65536); /* FirstBurstLength of immediate data, F: no more unsolicited */
	assert_int_equal(n_out, 1);
	assert_int_equal(out[0].bhs[0], ISCSI_OP_R2T);
	uint32_t ttt = f32(&out[0], 20);
	cdb_write6(wr, false, SMALL);
	command(1, wr, 6, 0xA0, SMALL, 31, small, SMALL);
	assert_int_equal(n_out, 1); /* complete, but held behind the earlier WRITE */
	data_out(30, ttt, 65536, big + 65536, 65536, true);
	assert_int_equal(n_out, 3);
	assert_int_equal(out[1].bhs[0], ISCSI_OP_SCSI_RSP);
	assert_int_equal(f32(&out[1], 16), 30);
	assert_int_equal(out[1].bhs[3], SCSI_GOOD);
	assert_int_equal(f32(&out[2], 16), 31);
	assert_int_equal(out[2].bhs[3], SCSI_GOOD);
	/* On the medium: the 128 KiB block first, then the 32 KiB one. */
	uint8_t rw[6] = {0x01};
	command(1, rw, 6, 0x80, 0, 32, NULL, 0);
	n_out = 0;
	uint8_t rd[6];
	cdb_read6(rd, false, false, BIG);
	command(1, rd, 6, 0xC0, BIG, 33, NULL, 0);
	assert_int_equal(n_out, 2);
	assert_int_equal(out[1].bhs[1], 0x81); /* final, status GOOD collapsed: the whole block, no residual */
	memcpy(back, out[0].data, out[0].len);
	memcpy(back + out[0].len, out[1].data, out[1].len);
	assert_memory_equal(back, big, BIG);
	n_out = 0;
	cdb_read6(rd, false, false, SMALL);
	command(1, rd, 6, 0xC0, SMALL, 34, NULL, 0);
	assert_int_equal(n_out, 1);
	assert_int_equal(out[0].bhs[1], 0x81);
	assert_memory_equal(out[0].data, small, SMALL);
}

static void short_read_sense_and_residual(void **state)
{
	struct host *h = *state;
	host_new_cart(h, "F00002L8", 0);
	host_load(h, "F00002L8");
	uint8_t data[1000];
	memset(data, 'q', sizeof data);
	uint8_t wr[6];
	cdb_write6(wr, false, 1000);
	command(1, wr, 6, 0xA0, 1000, 30, data, 1000);
	assert_int_equal(out[0].bhs[3], SCSI_GOOD);
	uint8_t rw[6] = {0x01};
	command(1, rw, 6, 0x80, 0, 31, NULL, 0);
	n_out = 0;
	uint8_t rd[6];
	cdb_read6(rd, false, false, 4096);
	command(1, rd, 6, 0xC0, 4096, 32, NULL, 0);
	/* The 1000 bytes, then a SCSI Response: CHECK CONDITION, ILI, INFORMATION 3096, underflow 3096. */
	assert_int_equal(n_out, 2);
	assert_int_equal(out[0].bhs[0], ISCSI_OP_DATA_IN);
	assert_int_equal(out[0].bhs[1] & 0x01, 0);
	assert_int_equal(out[0].len, 1000);
	struct sent *r = &out[1];
	assert_int_equal(r->bhs[0], ISCSI_OP_SCSI_RSP);
	assert_int_equal(r->bhs[3], SCSI_CHECK_CONDITION);
	assert_int_equal(r->bhs[1] & 0x02, 0x02);
	assert_int_equal(f32(r, 44), 3096);
	const uint8_t *sense = r->data + 2;
	assert_int_equal(sense[0], 0xF0);
	assert_int_equal(sense[2], 0x20);
	assert_int_equal(pdu_get(sense + 3, 4), 3096);
}

static void nop_tmf_logout_reject(void **state)
{
	(void)state;
	/* NOP-Out ping: NOP-In with the same tag and data. */
	struct iscsi_pdu p;
	memset(&p, 0, sizeof p);
	p.bhs[0] = ISCSI_OP_NOP_OUT | BHS_IMMEDIATE;
	p.bhs[1] = 0x80;
	pdu_put(p.bhs + 16, 77, 4);
	pdu_put(p.bhs + 20, ITT_RESERVED, 4);
	pdu_put(p.bhs + 24, cmd_sn, 4);
	uint8_t ping[5] = "ping";
	p.data = ping;
	p.data_len = 5;
	session_receive(sess, &p);
	assert_int_equal(out[0].bhs[0], ISCSI_OP_NOP_IN);
	assert_int_equal(f32(&out[0], 16), 77);
	assert_memory_equal(out[0].data, "ping", 5);
	assert_int_equal(f32(&out[0], 28), cmd_sn); /* immediate: the window did not move */
	/* ABORT TASK of a tag nobody uses; LOGICAL UNIT RESET of LUN 1. */
	memset(&p, 0, sizeof p);
	p.bhs[0] = ISCSI_OP_TMF_REQ | BHS_IMMEDIATE;
	p.bhs[1] = 0x80 | 1;
	pdu_put(p.bhs + 16, 78, 4);
	pdu_put(p.bhs + 20, 999, 4);
	session_receive(sess, &p);
	assert_int_equal(out[1].bhs[0], ISCSI_OP_TMF_RSP);
	assert_int_equal(out[1].bhs[2], 1); /* task does not exist */
	p.bhs[1] = 0x80 | 5;
	p.bhs[9] = 1;
	session_receive(sess, &p);
	assert_int_equal(out[2].bhs[2], 0);
	/* The reset reached the drive: the next command gets POWER ON, RESET. */
	n_out = 0;
	uint8_t tur[6] = {0};
	command(1, tur, 6, 0x80, 0, 40, NULL, 0);
	assert_int_equal(out[0].bhs[3], SCSI_CHECK_CONDITION);
	assert_int_equal(out[0].data[2 + 12], 0x29);
	/* Data-Out for a task that does not exist, and a SNACK: Reject with the header returned. */
	n_out = 0;
	data_out(555, 1, 0, ping, 4, true);
	assert_int_equal(out[0].bhs[0], ISCSI_OP_REJECT);
	assert_int_equal(out[0].bhs[2], 0x09);
	assert_int_equal(out[0].len, ISCSI_BHS_LEN);
	assert_int_equal(out[0].data[0], ISCSI_OP_DATA_OUT);
	memset(&p, 0, sizeof p);
	p.bhs[0] = ISCSI_OP_SNACK;
	session_receive(sess, &p);
	assert_int_equal(out[1].bhs[2], 0x05);
	/* A command outside the window is ignored. */
	n_out = 0;
	uint32_t saved = cmd_sn;
	cmd_sn += 1000;
	command(1, tur, 6, 0x80, 0, 41, NULL, 0);
	assert_int_equal(n_out, 0);
	cmd_sn = saved;
	/* A command received twice: the copy is ignored. */
	n_out = 0;
	command(1, tur, 6, 0x80, 0, 42, NULL, 0);
	assert_int_equal(n_out, 1);
	cmd_sn--;
	command(1, tur, 6, 0x80, 0, 43, NULL, 0);
	assert_int_equal(n_out, 1);
	/*
	 * ABORT TASK of a command numbered before the TMF that has not arrived:
	 * "function complete", and the command is dropped when it comes.
	 */
	n_out = 0;
	uint32_t lost = cmd_sn++;
	memset(&p, 0, sizeof p);
	p.bhs[0] = ISCSI_OP_TMF_REQ | BHS_IMMEDIATE;
	p.bhs[1] = 0x80 | 1;
	pdu_put(p.bhs + 16, 79, 4);
	pdu_put(p.bhs + 20, 44, 4);
	pdu_put(p.bhs + 24, cmd_sn, 4);
	pdu_put(p.bhs + 32, lost, 4);
	session_receive(sess, &p);
	assert_int_equal(out[0].bhs[0], ISCSI_OP_TMF_RSP);
	assert_int_equal(out[0].bhs[2], 0); /* function complete */
	assert_int_equal(f32(&out[0], 28), cmd_sn); /* ExpCmdSN moved past the aborted command */
	uint32_t next = cmd_sn;
	cmd_sn = lost;
	command(1, tur, 6, 0x80, 0, 44, NULL, 0);
	assert_int_equal(n_out, 1); /* dropped */
	cmd_sn = next;
	command(1, tur, 6, 0x80, 0, 45, NULL, 0);
	assert_int_equal(n_out, 2);
	assert_int_equal(out[1].bhs[0], ISCSI_OP_SCSI_RSP);
	assert_int_equal(f32(&out[1], 16), 45);
	/* Logout: the response, then the connection closes. */
	n_out = 0;
	memset(&p, 0, sizeof p);
	p.bhs[0] = ISCSI_OP_LOGOUT_REQ | BHS_IMMEDIATE;
	p.bhs[1] = 0x80;
	pdu_put(p.bhs + 16, 90, 4);
	session_receive(sess, &p);
	assert_int_equal(out[0].bhs[0], ISCSI_OP_LOGOUT_RSP);
	assert_int_equal(out[0].bhs[2], 0);
	assert_int_equal(closed, 1);
}

/* The target's own ping: a NOP-In the initiator must answer with the same TTT. */
static void target_ping(void **state)
{
	(void)state;
	session_ping(sess);
	assert_int_equal(n_out, 1);
	assert_int_equal(out[0].bhs[0], ISCSI_OP_NOP_IN);
	assert_int_equal(f32(&out[0], 16), ITT_RESERVED);
	uint32_t ttt = f32(&out[0], 20);
	assert_true(ttt != ITT_RESERVED);
	assert_int_equal(f32(&out[0], 24), 100); /* StatSN: the next one, not consumed */
	assert_true(session_ping_outstanding(sess));
	session_ping(sess); /* one ping at a time */
	assert_int_equal(n_out, 1);
	struct iscsi_pdu p;
	memset(&p, 0, sizeof p);
	p.bhs[0] = ISCSI_OP_NOP_OUT | BHS_IMMEDIATE;
	p.bhs[1] = 0x80;
	pdu_put(p.bhs + 16, ITT_RESERVED, 4);
	pdu_put(p.bhs + 20, ttt + 1, 4); /* not the ping's tag */
	pdu_put(p.bhs + 24, cmd_sn, 4);
	session_receive(sess, &p);
	assert_true(session_ping_outstanding(sess));
	pdu_put(p.bhs + 20, ttt, 4);
	session_receive(sess, &p);
	assert_false(session_ping_outstanding(sess));
	assert_int_equal(n_out, 1); /* an answer is not answered */
	/* The next status still carries StatSN 100. */
	uint8_t inq[6] = {0x12, 0, 0, 0, 36, 0};
	command(1, inq, 6, 0xC0, 36, 9, NULL, 0);
	assert_int_equal(f32(&out[1], 24), 100);
}

static void abort_waits_for_running_task(void **state)
{
	struct host *h = *state;
	host_new_cart(h, "F00003L8", 0);
	host_load(h, "F00003L8");
	/* A READ POSITION handed to the drive but not yet run; ABORT TASK answers only once it ends. */
	struct iscsi_pdu p;
	memset(&p, 0, sizeof p);
	p.bhs[0] = ISCSI_OP_SCSI_CMD;
	p.bhs[1] = 0xC0;
	p.bhs[9] = 1;
	pdu_put(p.bhs + 16, 50, 4);
	pdu_put(p.bhs + 20, 20, 4);
	pdu_put(p.bhs + 24, cmd_sn++, 4);
	p.bhs[32] = 0x34;
	session_receive(sess, &p);
	assert_int_equal(n_queue, 1);
	assert_true(session_busy(sess));
	memset(&p, 0, sizeof p);
	p.bhs[0] = ISCSI_OP_TMF_REQ | BHS_IMMEDIATE;
	p.bhs[1] = 0x80 | 1;
	p.bhs[9] = 1;
	pdu_put(p.bhs + 16, 51, 4);
	pdu_put(p.bhs + 20, 50, 4);
	session_receive(sess, &p);
	assert_int_equal(n_out, 0);
	run_queue();
	/* No status for the aborted command, then the TMF response. */
	assert_int_equal(n_out, 1);
	assert_int_equal(out[0].bhs[0], ISCSI_OP_TMF_RSP);
	assert_int_equal(out[0].bhs[2], 0);
	assert_false(session_busy(sess));
}

/*
 * READs served from the read-ahead send their Data-In from its slot (a
 * loan, no copy into the task's buffer). The loan must outlive whatever the
 * drive does after the READ ran and before the event loop sent its data
 * (UNLOAD frees the read-ahead, LOGICAL UNIT RESET rewinds), and come back
 * once on every way a task ends: sent, aborted, or dropped with its
 * connection. Under ASan (build-asan) a slot freed or refilled too early is
 * a use-after-free; in any build the data the host receives is compared.
 */
enum { LOAN_BLOCK = 65536, LOAN_BLOCKS = 12, LOAN_DIRECT = 2 };

static uint8_t loan_byte(unsigned block, unsigned at)
{
	return (uint8_t)(block * 37u + at * 7u + (at >> 9));
}

/* A cartridge of LOAN_BLOCKS blocks of LOAN_BLOCK bytes, rewound, and the first reads that start the read-ahead. */
static void loan_tape(struct host *h, const char *barcode)
{
	host_new_cart(h, barcode, 0);
	host_load(h, barcode);
	uint8_t *b = talloc(LOAN_BLOCK);
	uint8_t cdb[6];
	for (unsigned i = 0; i < LOAN_BLOCKS; i++) {
		for (unsigned j = 0; j < LOAN_BLOCK; j++)
			b[j] = loan_byte(i, j);
		host_cmd(h, cdb, cdb_write6(cdb, false, LOAN_BLOCK), SCSI_DIR_OUT, b, LOAN_BLOCK);
		expect_good(h);
	}
	host_cmd(h, cdb, cdb_simple(cdb, SCSI_OP_REWIND), SCSI_DIR_NONE, NULL, 0);
	expect_good(h);
	/* Two reads in a row make a stream: the read-ahead starts after them. */
	cdb_read6(cdb, false, false, LOAN_BLOCK);
	for (unsigned i = 0; i < LOAN_DIRECT; i++) {
		n_out = 0;
		command(1, cdb, 6, 0xC0, LOAN_BLOCK, 300 + i, NULL, 0);
		assert_int_equal(n_out, 1);
		assert_int_equal(out[0].len, LOAN_BLOCK);
		assert_int_equal(out[0].data[LOAN_BLOCK - 1], loan_byte(i, LOAN_BLOCK - 1));
	}
	n_out = 0;
}

/* A READ of the next block handed to the drive and run there, its answer not yet sent: it must hold a loan. */
static struct session_task *loan_read_run(uint32_t itt)
{
	uint8_t cdb[6];
	cdb_read6(cdb, false, false, LOAN_BLOCK);
	struct iscsi_pdu p;
	memset(&p, 0, sizeof p);
	p.bhs[0] = ISCSI_OP_SCSI_CMD;
	p.bhs[1] = 0xC0;
	p.bhs[9] = 1;
	pdu_put(p.bhs + 16, itt, 4);
	pdu_put(p.bhs + 20, LOAN_BLOCK, 4);
	pdu_put(p.bhs + 24, cmd_sn++, 4);
	memcpy(p.bhs + 32, cdb, sizeof cdb);
	session_receive(sess, &p);
	assert_int_equal(n_queue, 1);
	struct session_task *t = queue[--n_queue];
	t->lu->ops->execute(t->lu->dev, &t->cmd);
	assert_int_equal(t->cmd.status, SCSI_GOOD);
	assert_int_equal(t->cmd.data_len, LOAN_BLOCK);
	assert_non_null(t->cmd.loan.data); /* served from the read-ahead: lent, not copied */
	return t;
}

/* The Data-In o carries block i whole, with GOOD status. */
static void expect_block(const struct sent *o, unsigned i)
{
	assert_int_equal(o->bhs[0], ISCSI_OP_DATA_IN);
	assert_int_equal(o->bhs[3], SCSI_GOOD);
	assert_int_equal(o->len, LOAN_BLOCK);
	for (unsigned j = 0; j < LOAN_BLOCK; j++)
		if (o->data[j] != loan_byte(i, j))
			fail_msg("block %u differs at byte %u", i, j);
}

static void unload(struct host *h)
{
	uint8_t cdb[6];
	host_cmd(h, cdb, cdb_simple(cdb, SCSI_OP_LOAD_UNLOAD), SCSI_DIR_NONE, NULL, 0);
	expect_good(h);
}

static void read_data_lent_until_sent(void **state)
{
	struct host *h = *state;
	loan_tape(h, "F00010L8");
	/* Sent as usual, then read on through several slots (the lent one is refilled only once given back). */
	for (unsigned i = LOAN_DIRECT; i < LOAN_BLOCKS; i++) {
		struct session_task *t = loan_read_run(400 + i);
		session_complete(sess, t);
		assert_int_equal(n_out, 1);
		expect_block(&out[0], i);
		n_out = 0;
	}
	/* UNLOAD runs on the drive while the last READ's data is still to be sent: the loan keeps its slot. */
	uint8_t cdb[6];
	host_cmd(h, cdb, cdb_simple(cdb, SCSI_OP_REWIND), SCSI_DIR_NONE, NULL, 0);
	expect_good(h);
	cdb_read6(cdb, false, false, LOAN_BLOCK);
	for (unsigned i = 0; i < LOAN_DIRECT; i++) {
		command(1, cdb, 6, 0xC0, LOAN_BLOCK, 500 + i, NULL, 0);
		expect_block(&out[i], i);
	}
	n_out = 0;
	struct session_task *t = loan_read_run(510);
	unload(h);
	session_complete(sess, t);
	assert_int_equal(n_out, 1);
	expect_block(&out[0], LOAN_DIRECT);
	assert_false(session_busy(sess));
}

static void read_data_lent_then_aborted(void **state)
{
	struct host *h = *state;
	loan_tape(h, "F00011L8");
	/* ABORT TASK while the READ is with the drive: no Data-In, the TMF answers; the loan comes back. */
	struct session_task *t = loan_read_run(600);
	struct iscsi_pdu p;
	memset(&p, 0, sizeof p);
	p.bhs[0] = ISCSI_OP_TMF_REQ | BHS_IMMEDIATE;
	p.bhs[1] = 0x80 | 1; /* ABORT TASK */
	p.bhs[9] = 1;
	pdu_put(p.bhs + 16, 601, 4);
	pdu_put(p.bhs + 20, 600, 4);
	session_receive(sess, &p);
	assert_int_equal(n_out, 0);
	unload(h);
	session_complete(sess, t);
	assert_int_equal(n_out, 1);
	assert_int_equal(out[0].bhs[0], ISCSI_OP_TMF_RSP);
	assert_int_equal(out[0].bhs[2], 0);
	/* LOGICAL UNIT RESET (it rewinds the drive) while another READ's data is lent. */
	uint8_t cdb[6];
	cdb_simple(cdb, SCSI_OP_LOAD_UNLOAD);
	cdb[4] = 1; /* LOAD: the cartridge unloaded above is still in the drive */
	host_cmd(h, cdb, 6, SCSI_DIR_NONE, NULL, 0);
	expect_good(h);
	cdb_read6(cdb, false, false, LOAN_BLOCK);
	n_out = 0;
	for (unsigned i = 0; i < LOAN_DIRECT; i++) {
		command(1, cdb, 6, 0xC0, LOAN_BLOCK, 610 + i, NULL, 0);
		expect_block(&out[i], i);
	}
	n_out = 0;
	t = loan_read_run(620);
	memset(&p, 0, sizeof p);
	p.bhs[0] = ISCSI_OP_TMF_REQ | BHS_IMMEDIATE;
	p.bhs[1] = 0x80 | 5; /* LOGICAL UNIT RESET */
	p.bhs[9] = 1;
	pdu_put(p.bhs + 16, 621, 4);
	pdu_put(p.bhs + 20, ITT_RESERVED, 4);
	session_receive(sess, &p);
	assert_int_equal(n_out, 0);
	session_complete(sess, t);
	assert_int_equal(n_out, 1);
	assert_int_equal(out[0].bhs[0], ISCSI_OP_TMF_RSP);
	assert_int_equal(out[0].bhs[2], 0);
	assert_false(session_busy(sess));
}

static void read_data_lent_connection_dropped(void **state)
{
	struct host *h = *state;
	loan_tape(h, "F00012L8");
	/* The connection is gone: its tasks end with the session, never sent; the drive unloads meanwhile. */
	struct session_task *t = loan_read_run(700);
	(void)t;
	unload(h);
	session_destroy(sess);
	sess = NULL;
	assert_int_equal(n_out, 0);
	assert_int_equal(session_new(h), 0); /* for teardown */
}

/*
 * A write's immediate data is received straight into the buffer its task
 * keeps (session_data_dest, as the PDU reader asks once the header is in):
 * the block reaches the tape as sent, and that buffer comes back to the
 * session whether the command ran, was refused, or its data digest failed.
 */
static void immediate_data_received_in_place(void **state)
{
	struct host *h = *state;
	host_new_cart(h, "F00013L8", 0);
	host_load(h, "F00013L8");
	enum { LEN = 16384 };
	uint8_t cdb[6];
	cdb_write6(cdb, false, LEN);
	struct iscsi_pdu p;
	memset(&p, 0, sizeof p);
	p.bhs[0] = ISCSI_OP_SCSI_CMD;
	p.bhs[1] = 0xA0; /* F, W */
	p.bhs[9] = 1;
	pdu_put(p.bhs + 16, 800, 4);
	pdu_put(p.bhs + 20, LEN, 4);
	pdu_put(p.bhs + 24, cmd_sn++, 4);
	memcpy(p.bhs + 32, cdb, sizeof cdb);
	/* Not for a read, a small segment, or more than the EDTL. */
	uint8_t rd_bhs[ISCSI_BHS_LEN];
	memcpy(rd_bhs, p.bhs, sizeof rd_bhs);
	rd_bhs[1] = 0xC0;
	assert_null(session_data_dest(sess, rd_bhs, LEN));
	assert_null(session_data_dest(sess, p.bhs, 512));
	assert_null(session_data_dest(sess, p.bhs, LEN + 1));
	uint8_t *dest = session_data_dest(sess, p.bhs, LEN);
	assert_non_null(dest);
	for (unsigned i = 0; i < LEN; i++)
		dest[i] = (uint8_t)(i * 5 + 1);
	p.data = dest;
	p.data_len = LEN;
	session_receive(sess, &p);
	assert_int_equal(n_queue, 1);
	assert_ptr_equal(queue[0]->buf, dest); /* the task kept the buffer the data was received in: no copy */
	run_queue();
	assert_int_equal(n_out, 1);
	assert_int_equal(out[0].bhs[0], ISCSI_OP_SCSI_RSP);
	assert_int_equal(out[0].bhs[3], SCSI_GOOD);
	/* The block on the tape is what was received. */
	host_cmd(h, cdb, cdb_simple(cdb, SCSI_OP_REWIND), SCSI_DIR_NONE, NULL, 0);
	expect_good(h);
	n_out = 0;
	command(1, cdb, cdb_read6(cdb, false, false, LEN), 0xC0, LEN, 801, NULL, 0);
	assert_int_equal(n_out, 1);
	assert_int_equal(out[0].len, LEN);
	for (unsigned i = 0; i < LEN; i++)
		assert_int_equal(out[0].data[i], (uint8_t)(i * 5 + 1));
	/* Refused (its CmdSN is outside the window: dropped) and a data digest error: the buffer comes back. */
	n_out = 0;
	pdu_put(p.bhs + 16, 802, 4);
	pdu_put(p.bhs + 24, cmd_sn + 1000, 4);
	p.data = session_data_dest(sess, p.bhs, LEN);
	assert_non_null(p.data);
	session_receive(sess, &p);
	assert_int_equal(n_queue, 0);
	pdu_put(p.bhs + 24, cmd_sn, 4);
	p.data = session_data_dest(sess, p.bhs, LEN);
	assert_non_null(p.data);
	session_data_digest_error(sess, &p);
	assert_int_equal(n_out, 1);
	assert_int_equal(out[0].bhs[0], ISCSI_OP_REJECT);
	assert_true(session_idle(sess));
	session_release_spares(sess);
	assert_int_equal(session_buffer_bytes(sess), 0); /* every buffer the session took is back */
}

/*
 * A Data-Out answering an R2T is received straight into its write's buffer
 * (session_data_dest gives the place where the write's data ends), and only
 * one that continues the write exactly there: the block reaches the tape as
 * sent, and one with a wrong offset, TTT, DataSN or length is still refused
 * as before, through the reader's own buffer.
 */
static void data_out_received_in_place(void **state)
{
	struct host *h = *state;
	host_new_cart(h, "F00014L8", 0);
	host_load(h, "F00014L8");
	enum { LEN = 3 * 65536 };
	static uint8_t block[LEN];
	gen_data(block, LEN, 14, false);
	uint8_t wr[6];
	cdb_write6(wr, false, LEN);
	n_out = 0;
	command(1, wr, 6, 0x20, LEN, 40, block, 16384);
	data_out(40, ITT_RESERVED, 16384, block + 16384, 65536 - 16384, true);
	assert_int_equal(n_out, 1);
	assert_int_equal(out[0].bhs[0], ISCSI_OP_R2T);
	uint32_t ttt = f32(&out[0], 20);
	struct iscsi_pdu p;
	data_out_pdu(&p, 40, ttt, 0, 65536 + 4, 65536, true);
	assert_null(session_data_dest(sess, p.bhs, 65536)); /* off its offset */
	data_out_pdu(&p, 40, ttt + 1, 0, 65536, 65536, true);
	assert_null(session_data_dest(sess, p.bhs, 65536)); /* another burst's TTT */
	data_out_pdu(&p, 40, ttt, 1, 65536, 65536, true);
	assert_null(session_data_dest(sess, p.bhs, 65536)); /* DataSN 1 first */
	data_out_pdu(&p, 40, ttt, 0, 65536, 2 * 65536, true);
	assert_null(session_data_dest(sess, p.bhs, 2 * 65536)); /* more than the burst */
	data_out_pdu(&p, 41, ttt, 0, 65536, 65536, true);
	assert_null(session_data_dest(sess, p.bhs, 65536)); /* no such write */
	/* The burst in two PDUs, each received where the write's data ends. */
	for (unsigned k = 0; k < 2; k++) {
		uint32_t off = 65536 + k * 32768;
		data_out_pdu(&p, 40, ttt, k, off, 32768, k == 1);
		p.data = session_data_dest(sess, p.bhs, 32768);
		assert_non_null(p.data);
		memcpy(p.data, block + off, 32768);
		session_receive(sess, &p);
		run_queue();
	}
	assert_int_equal(n_out, 2);
	assert_int_equal(out[1].bhs[0], ISCSI_OP_R2T);
	data_out_pdu(&p, 40, f32(&out[1], 20), 0, 131072, 65536, true);
	p.data = session_data_dest(sess, p.bhs, 65536);
	assert_non_null(p.data);
	memcpy(p.data, block + 131072, 65536);
	session_receive(sess, &p);
	run_queue();
	assert_int_equal(n_out, 3);
	assert_int_equal(out[2].bhs[0], ISCSI_OP_SCSI_RSP);
	assert_int_equal(out[2].bhs[3], SCSI_GOOD);
	/* The block on the tape is what was sent. */
	uint8_t cdb[6];
	host_cmd(h, cdb, cdb_simple(cdb, SCSI_OP_REWIND), SCSI_DIR_NONE, NULL, 0);
	expect_good(h);
	n_out = 0;
	command(1, cdb, cdb_read6(cdb, false, false, LEN), 0xC0, LEN, 42, NULL, 0);
	size_t got = 0;
	for (unsigned i = 0; i < n_out; i++) {
		assert_true(got + out[i].len <= LEN);
		assert_memory_equal(out[i].data, block + got, out[i].len);
		got += out[i].len;
	}
	assert_int_equal(got, LEN);
}

/* A Data-Out or a ping whose data digest failed: Reject 02h, the write ends in CHECK CONDITION, the session goes on. */
static void data_digest_errors(void **state)
{
	struct host *h = *state;
	host_new_cart(h, "F00002L8", 0);
	host_load(h, "F00002L8");
	enum { LEN = 100000, IMM = 16384, FIRST = 65536 };
	static uint8_t block[LEN];
	gen_data(block, LEN, 9, false);
	uint8_t wr[6];
	cdb_write6(wr, false, LEN);
	command(1, wr, 6, 0x20, LEN, 30, block, IMM);
	assert_int_equal(n_out, 0);
	/* The unsolicited burst's Data-Out arrives with a bad digest. */
	struct iscsi_pdu p;
	memset(&p, 0, sizeof p);
	p.bhs[0] = ISCSI_OP_DATA_OUT;
	p.bhs[1] = 0x80;
	p.bhs[9] = 1;
	pdu_put(p.bhs + 16, 30, 4);
	pdu_put(p.bhs + 20, ITT_RESERVED, 4);
	pdu_put(p.bhs + 40, IMM, 4);
	p.data = block + IMM;
	p.data_len = FIRST - IMM;
	session_data_digest_error(sess, &p);
	run_queue();
	assert_int_equal(n_out, 2);
	assert_int_equal(out[0].bhs[0], ISCSI_OP_REJECT);
	assert_int_equal(out[0].bhs[2], 0x02); /* reason: data (payload) digest error */
	assert_int_equal(out[0].len, ISCSI_BHS_LEN);
	assert_memory_equal(out[0].data, p.bhs, ISCSI_BHS_LEN); /* the rejected header */
	/* No R2T for the rest: the command ends with "protocol service CRC error", unexecuted. */
	assert_int_equal(out[1].bhs[0], ISCSI_OP_SCSI_RSP);
	assert_int_equal(f32(&out[1], 16), 30);
	assert_int_equal(out[1].bhs[3], SCSI_CHECK_CONDITION);
	assert_int_equal(out[1].data[2 + 2] & 0x0F, SK_ABORTED_COMMAND);
	assert_int_equal(out[1].data[2 + 12], 0x47);
	assert_int_equal(out[1].data[2 + 13], 0x05);
	assert_false(session_busy(sess));
	uint8_t rp[10] = {0x34};
	n_out = 0;
	command(1, rp, 10, 0xC0, 20, 31, NULL, 0); /* READ POSITION: still at block 0, nothing was written */
	assert_int_equal(out[0].bhs[3], SCSI_GOOD);
	assert_int_equal(pdu_get(out[0].data + 4, 4), 0);

	/* A ping whose data digest failed is dropped: Reject, and its CmdSN stays expected for the retry. */
	n_out = 0;
	uint8_t ping[8] = "pingpong";
	nop_pdu(&p, 32, false, ping, sizeof ping);
	session_data_digest_error(sess, &p);
	assert_int_equal(n_out, 1);
	assert_int_equal(out[0].bhs[0], ISCSI_OP_REJECT);
	assert_int_equal(out[0].bhs[2], 0x02);
	assert_int_equal(f32(&out[0], 28), cmd_sn); /* ExpCmdSN did not move */
	session_receive(sess, &p);
	assert_int_equal(n_out, 2);
	assert_int_equal(out[1].bhs[0], ISCSI_OP_NOP_IN);
	assert_memory_equal(out[1].data, ping, sizeof ping);
	assert_int_equal(f32(&out[1], 28), cmd_sn + 1);
	cmd_sn++;

	/* The same write, sent whole this time, works. */
	n_out = 0;
	command(1, wr, 6, 0x20, LEN, 33, block, IMM);
	data_out(33, ITT_RESERVED, IMM, block + IMM, FIRST - IMM, true);
	assert_int_equal(out[0].bhs[0], ISCSI_OP_R2T);
	data_out(33, f32(&out[0], 20), FIRST, block + FIRST, LEN - FIRST, true);
	assert_int_equal(out[1].bhs[0], ISCSI_OP_SCSI_RSP);
	assert_int_equal(out[1].bhs[3], SCSI_GOOD);
}

/* A data segment above the declared MaxRecvDataSegmentLength: Reject 04h with the header, then the session closes. */
static void oversized_pdu_rejected_and_closed(void **state)
{
	(void)state;
	struct iscsi_pdu p;
	memset(&p, 0, sizeof p);
	p.bhs[0] = ISCSI_OP_SCSI_CMD;
	p.bhs[1] = 0xA0;
	p.bhs[9] = 1;
	pdu_put(p.bhs + 16, 40, 4);
	pdu_put(p.bhs + 20, 1u << 20, 4);
	pdu_put(p.bhs + 24, cmd_sn, 4);
	session_protocol_error(sess, &p);
	assert_int_equal(n_out, 1);
	assert_int_equal(out[0].bhs[0], ISCSI_OP_REJECT);
	assert_int_equal(out[0].bhs[2], 0x04); /* reason: protocol error */
	assert_int_equal(out[0].len, ISCSI_BHS_LEN);
	assert_memory_equal(out[0].data, p.bhs, ISCSI_BHS_LEN);
	assert_int_equal(closed, 1);
	/* Nothing more comes out of a closing session, not even for a good PDU. */
	uint8_t tur[6] = {0};
	command(1, tur, 6, 0x80, 0, 41, NULL, 0);
	assert_int_equal(n_out, 1);
	assert_false(session_busy(sess));
}


/* Position of the drive (READ POSITION short form's first block). */
static uint32_t tape_block(void)
{
	uint8_t rp[10] = {0x34};
	n_out = 0;
	command(1, rp, 10, 0xC0, 20, 90, NULL, 0);
	assert_int_equal(out[0].bhs[3], SCSI_GOOD);
	return pdu_get(out[0].data + 4, 4);
}

/* The last PDU sent must be a Reject with reason, carrying a Data-Out header; the one before it, or after, the status. */
static void expect_refused(uint32_t itt, uint8_t asc, uint8_t ascq)
{
	assert_int_equal(n_out, 2);
	assert_int_equal(out[0].bhs[0], ISCSI_OP_REJECT);
	assert_int_equal(out[0].bhs[2], 0x04); /* protocol error */
	assert_int_equal(out[0].data[0], ISCSI_OP_DATA_OUT);
	assert_int_equal(out[1].bhs[0], ISCSI_OP_SCSI_RSP);
	assert_int_equal(f32(&out[1], 16), itt);
	assert_int_equal(out[1].bhs[3], SCSI_CHECK_CONDITION);
	assert_int_equal(out[1].data[2 + 2] & 0x0F, SK_ABORTED_COMMAND);
	assert_int_equal(out[1].data[2 + 12], asc);
	assert_int_equal(out[1].data[2 + 13], ascq);
}

/*
 * Data-Out that does not continue the write exactly where its data ends:
 * sent twice, overlapping, leaving a gap, beyond the burst, with the wrong
 * TTT or DataSN. Each ends the write with CHECK CONDITION (4Bh/..) and a
 * Reject; the drive never sees it, and the session goes on.
 */
static void data_out_out_of_sequence(void **state)
{
	struct host *h = *state;
	host_new_cart(h, "F00009L8", 0);
	host_load(h, "F00009L8");
	enum { LEN = 131072, HALF = 65536 };
	static uint8_t block[LEN];
	gen_data(block, LEN, 9, false);
	uint8_t wr[6];
	cdb_write6(wr, false, LEN);
	uint32_t itt = 100;
	struct {
		uint32_t ttt_delta, datasn, offset, len;
		uint8_t asc, ascq;
	} cases[] = {
		{0, 1, 0, HALF, 0x4B, 0x05},         /* the same 64 KiB at offset 0 again */
		{0, 1, HALF / 2, HALF, 0x4B, 0x05},  /* overlapping the first half */
		{0, 1, HALF + 512, 512, 0x4B, 0x05}, /* a gap */
		{0, 1, HALF, HALF + 512, 0x4B, 0x02}, /* more than the burst asked for */
		{1, 1, HALF, HALF, 0x4B, 0x01},      /* another TTT */
		{0, 3, HALF, HALF, 0x4B, 0x00},      /* DataSN skipped */
	};
	for (unsigned i = 0; i < VTL_ARRAY_SIZE(cases); i++, itt++) {
		session_destroy(sess); /* each case in a session of its own: a session that breaks the data phase ends */
		assert_int_equal(session_new(h), 0);
		/* InitialR2T=No, no immediate data: the unsolicited burst is FirstBurstLength (64 KiB). */
		command(1, wr, 6, 0x20, LEN, itt, NULL, 0);
		data_out_sn(itt, ITT_RESERVED, 0, 0, block, HALF / 2, false);
		data_out_sn(itt, ITT_RESERVED, 1, HALF / 2, block + HALF / 2, HALF / 2, true);
		assert_int_equal(n_out, 1);
		assert_int_equal(out[0].bhs[0], ISCSI_OP_R2T);
		uint32_t ttt = f32(&out[0], 20);
		n_out = 0;
		uint32_t sn = cases[i].datasn == 1 ? 0 : cases[i].datasn;
		static uint8_t big[LEN + 512];
		memcpy(big, block, LEN);
		data_out_sn(itt, ttt + cases[i].ttt_delta, sn, cases[i].offset, big, cases[i].len, true);
		expect_refused(itt, cases[i].asc, cases[i].ascq);
		/* What the host sends on for that write is refused too: the write is gone. */
		n_out = 0;
		data_out(itt, ttt, HALF, block + HALF, HALF, true);
		assert_int_equal(out[0].bhs[0], ISCSI_OP_REJECT);
		assert_int_equal(out[0].bhs[2], 0x09);
		assert_int_equal(tape_block(), 0); /* the drive never wrote it */
	}
	/* The unsolicited burst is checked the same way: its second PDU sent at offset 0 again. */
	session_destroy(sess);
	assert_int_equal(session_new(h), 0);
	command(1, wr, 6, 0x20, LEN, itt, NULL, 0);
	data_out_sn(itt, ITT_RESERVED, 0, 0, block, HALF / 2, false);
	data_out_sn(itt, ITT_RESERVED, 1, 0, block, HALF / 2, true);
	expect_refused(itt, 0x4B, 0x05);
	itt++;
	/* And a good write still works (in a session that has broken the data phase once). */
	n_out = 0;
	command(1, wr, 6, 0x20, LEN, itt, NULL, 0);
	data_out_sn(itt, ITT_RESERVED, 0, 0, block, HALF, true);
	data_out(itt, f32(&out[0], 20), HALF, block + HALF, HALF, true);
	assert_int_equal(out[1].bhs[3], SCSI_GOOD);
	assert_int_equal(tape_block(), 1);
	/* A session that breaks the data phase a third time is ended, and answers nothing more. */
	for (unsigned k = 2; k <= 3; k++) {
		itt++;
		n_out = 0;
		command(1, wr, 6, 0x20, LEN, itt, NULL, 0);
		data_out_sn(itt, ITT_RESERVED, 0, HALF, block, HALF, true); /* not at offset 0 */
		expect_refused(itt, 0x4B, 0x05);
		assert_int_equal(closed, k == 3);
	}
	n_out = 0;
	command(1, wr, 6, 0x20, LEN, ++itt, NULL, 0);
	assert_int_equal(n_out, 0);
}

/*
 * The window: MaxCmdSN moves as held commands end, not as they arrive. 32
 * writes that wait for their data close it (MaxCmdSN = ExpCmdSN - 1); an
 * immediate command then gets TASK SET FULL; a command numbered beyond is
 * ignored; when one write ends, the window opens by one.
 */
static void window_moves_on_completion(void **state)
{
	struct host *h = *state;
	host_new_cart(h, "F0000AL8", 0);
	host_load(h, "F0000AL8");
	uint8_t wr[6];
	cdb_write6(wr, false, 4096);
	for (uint32_t i = 0; i < SESSION_CMD_WINDOW; i++)
		command(1, wr, 6, 0xA0, 4096, 200 + i, NULL, 0); /* F: no unsolicited data; each gets an R2T */
	assert_int_equal(n_out, SESSION_CMD_WINDOW);
	struct sent *last = &out[n_out - 1];
	assert_int_equal(last->bhs[0], ISCSI_OP_R2T);
	assert_int_equal(f32(last, 28), cmd_sn);           /* ExpCmdSN */
	assert_int_equal(f32(last, 32), 10 + SESSION_CMD_WINDOW - 1); /* MaxCmdSN as the login left it */
	/* Beyond MaxCmdSN: ignored. */
	n_out = 0;
	uint8_t tur[6] = {0};
	command(1, tur, 6, 0x80, 0, 300, NULL, 0);
	assert_int_equal(n_out, 0);
	cmd_sn--;
	/* Immediate: TASK SET FULL, with the whole transfer as residual. */
	struct iscsi_pdu p;
	memset(&p, 0, sizeof p);
	p.bhs[0] = ISCSI_OP_SCSI_CMD | BHS_IMMEDIATE;
	p.bhs[1] = 0x80;
	p.bhs[9] = 1;
	pdu_put(p.bhs + 16, 301, 4);
	pdu_put(p.bhs + 24, cmd_sn, 4);
	session_receive(sess, &p);
	assert_int_equal(n_out, 1);
	assert_int_equal(out[0].bhs[0], ISCSI_OP_SCSI_RSP);
	assert_int_equal(out[0].bhs[3], SCSI_TASK_SET_FULL);
	assert_int_equal(f32(&out[0], 32), 10 + SESSION_CMD_WINDOW - 1);
	/* One write gets its data and ends: MaxCmdSN opens by one. */
	static uint8_t data[4096];
	n_out = 0;
	data_out(200, 1, 0, data, 4096, true); /* the first R2T's TTT: tags start at 1 */
	assert_int_equal(out[n_out - 1].bhs[0], ISCSI_OP_SCSI_RSP);
	assert_int_equal(out[n_out - 1].bhs[3], SCSI_GOOD);
	assert_int_equal(f32(&out[n_out - 1], 32), 10 + SESSION_CMD_WINDOW);
	/* The CmdSN that was ignored is taken now (it waits behind the writes); ExpCmdSN moves past it. */
	n_out = 0;
	command(1, tur, 6, 0x80, 0, 302, NULL, 0);
	nop_pdu(&p, 303, true, NULL, 0);
	session_receive(sess, &p);
	assert_int_equal(n_out, 1);
	assert_int_equal(out[0].bhs[0], ISCSI_OP_NOP_IN);
	assert_int_equal(f32(&out[0], 28), cmd_sn);
	assert_int_equal(f32(&out[0], 32), 10 + SESSION_CMD_WINDOW); /* closed again: 32 held */
}

/* NOP-Out ping data over ping_data_max is refused (Reject 09h), not echoed. */
static void ping_data_bounded(void **state)
{
	(void)state;
	static uint8_t big[SESSION_PING_DATA + 4];
	struct iscsi_pdu p;
	nop_pdu(&p, 5, true, big, sizeof big);
	session_receive(sess, &p);
	assert_int_equal(n_out, 1);
	assert_int_equal(out[0].bhs[0], ISCSI_OP_REJECT);
	assert_int_equal(out[0].bhs[2], 0x09);
	p.data_len = SESSION_PING_DATA;
	session_receive(sess, &p);
	assert_int_equal(out[1].bhs[0], ISCSI_OP_NOP_IN);
	assert_int_equal(out[1].len, SESSION_PING_DATA);
}

/*
 * Task-buffer bytes: a session whose commands would hold more than its
 * buffer_max, or all sessions more than the shared budget, gets TASK SET
 * FULL for the command that would pass it; once one ends, room is back.
 */
static void buffers_bounded(void **state)
{
	struct host *h = *state;
	session_destroy(sess);
	struct session_budget budget = {.max = 3u << 20};
	drive_unit = (struct scsi_unit_ops){.execute = ssc_unit_ops.execute, .reset = ssc_unit_ops.reset};
	struct vtl_lu lu = {.lun = 1, .dev = h->d, .ops = &drive_unit};
	struct session_params p = {.max_recv_data = 65536, .max_send_data = 65536, .max_burst = 1u << 20,
				   .first_burst = 65536, .initial_r2t = true, .immediate_data = false,
				   .exp_cmd_sn = 10, .stat_sn = 100, .buffer_max = 2u << 20, .budget = &budget};
	struct session_io io = {.send = cap_send, .submit = cap_submit, .close = cap_close};
	assert_int_equal(session_create(&p, &lu, 1, HOST_NEXUS, &io, &sess), 0);
	struct session *other;
	assert_int_equal(session_create(&p, &lu, 1, HOST_NEXUS + 1, &io, &other), 0);
	host_new_cart(h, "F0000BL8", 0);
	host_load(h, "F0000BL8");
	uint8_t wr[6];
	cdb_write6(wr, false, 1u << 20);
	/* Two 1 MiB writes waiting for their data: the session's 2 MiB. The third gets TASK SET FULL. */
	command(1, wr, 6, 0xA0, 1u << 20, 1, NULL, 0);
	command(1, wr, 6, 0xA0, 1u << 20, 2, NULL, 0);
	assert_int_equal(session_buffer_bytes(sess), 2u << 20);
	n_out = 0;
	command(1, wr, 6, 0xA0, 1u << 20, 3, NULL, 0);
	assert_int_equal(n_out, 1);
	assert_int_equal(out[0].bhs[0], ISCSI_OP_SCSI_RSP);
	assert_int_equal(out[0].bhs[3], SCSI_TASK_SET_FULL);
	assert_int_equal(f32(&out[0], 44), 1u << 20); /* nothing transferred */
	/* The other session has room of its own, but the budget only 1 MiB more. */
	struct session *mine = sess;
	sess = other;
	uint32_t sn = cmd_sn;
	cmd_sn = 10;
	n_out = 0;
	command(1, wr, 6, 0xA0, 1u << 20, 1, NULL, 0);
	assert_int_equal(out[0].bhs[0], ISCSI_OP_R2T);
	command(1, wr, 6, 0xA0, 1u << 20, 2, NULL, 0);
	assert_int_equal(out[1].bhs[3], SCSI_TASK_SET_FULL);
	assert_int_equal(budget.used, 3u << 20);
	session_destroy(other);
	sess = mine;
	cmd_sn = sn;
	assert_int_equal(budget.used, 2u << 20);
	session_destroy(sess);
	assert_int_equal(budget.used, 0); /* every byte counted back, spares included */
	assert_int_equal(session_create(&p, &lu, 1, HOST_NEXUS, &io, &sess), 0);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(inquiry_with_phase_collapse), T(unknown_lun), T(write_with_r2t_then_read_back),
		T(pipelined_writes_keep_cmdsn_order),
		T(short_read_sense_and_residual), T(nop_tmf_logout_reject), T(abort_waits_for_running_task), T(target_ping),
		T(data_digest_errors), T(oversized_pdu_rejected_and_closed), T(data_out_out_of_sequence),
		T(window_moves_on_completion), T(ping_data_bounded), T(buffers_bounded),
		T(read_data_lent_until_sent), T(read_data_lent_then_aborted), T(read_data_lent_connection_dropped),
		T(immediate_data_received_in_place),
		T(data_out_received_in_place),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
