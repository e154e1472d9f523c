/* SPDX-License-Identifier: Apache-2.0 */
#include "vtl/iscsi/session.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "common/scsi_proto.h"
#include "common/scsi_sense.h"
#include "common/vtl_error.h"
#include "vtl/scsi/dispatch.h"

/* SCSI Command (RFC 7143 11.3.1). */
#define CMD_READ 0x40
#define CMD_WRITE 0x20
#define CMD_EDTL 20
#define CMD_CMDSN 24
#define CMD_CDB 32
#define CMD_CDB_LEN 16
#define AHS_EXT_CDB 0x01          /* AHS type of an extended CDB (11.2.2) */

/* Fields of responses (11.4, 11.7, 11.8, 11.19, 11.6, 11.15, 11.17). */
#define RSP_FLAGS 1
#define RSP_RESPONSE 2
#define RSP_STATUS 3
#define RSP_TTT 20
#define RSP_STATSN 24
#define RSP_EXPCMDSN 28
#define RSP_MAXCMDSN 32
#define RSP_DATASN 36
#define RSP_OFFSET 40
#define RSP_RESIDUAL 44
#define RSP_DESIRED 44            /* R2T: desired data transfer length */
#define RSP_FINAL 0x80
#define RSP_OVERFLOW 0x04
#define RSP_UNDERFLOW 0x02
#define DATAIN_STATUS 0x01        /* S: the Data-In carries the status (phase collapse) */
#define RESPONSE_COMPLETED 0x00   /* command completed at target */
#define SENSE_LEN_FIELD 2         /* SenseLength before the sense data */

/* Data-Out (11.7). */
#define DOUT_TTT 20
#define DOUT_DATASN 36
#define DOUT_OFFSET 40

/* Task management (11.5, 11.6). */
#define TMF_FUNCTION_MASK 0x7F
#define TMF_REF_ITT 20
#define TMF_REF_CMDSN 32
enum tmf_function {
	TMF_ABORT_TASK = 1, TMF_ABORT_TASK_SET = 2, TMF_CLEAR_ACA = 3, TMF_CLEAR_TASK_SET = 4,
	TMF_LU_RESET = 5, TMF_TARGET_WARM_RESET = 6, TMF_TARGET_COLD_RESET = 7, TMF_TASK_REASSIGN = 8,
};
enum tmf_response {
	TMF_COMPLETE = 0, TMF_NO_TASK = 1, TMF_NO_LUN = 2, TMF_NOT_SUPPORTED = 5,
};

/* Logout (11.14, 11.15). */
#define LOGOUT_REASON_MASK 0x7F
#define LOGOUT_CLOSE_SESSION 0
#define LOGOUT_CLOSE_CONNECTION 1

/* Text (11.10, 11.11). */
#define TEXT_CONTINUE 0x40
#define TEXT_MAX 8192

/* Reject reasons (11.17.1). */
enum reject_reason {
	REJECT_DATA_DIGEST = 0x02, REJECT_PROTOCOL = 0x04, REJECT_NOT_SUPPORTED = 0x05,
	REJECT_INVALID_FIELD = 0x09,
};

#define TASK_BUF_MAX (64u << 20) /* the largest transfer one command may ask for */
#define SPARE_BUFS 8                /* data buffers of finished tasks a session keeps for the next ones */
#define SPARE_BUF_MIN (64u << 10)   /* buffers are allocated in power-of-two sizes from this one... */
#define SPARE_BUF_MAX (1u << 20)    /* ...and kept up to this one (the blocks of a tape stream) */
#define BUF_MMAP_MIN (128u << 10)   /* buffers this large are mappings of their own, given back whole when freed */
#define DATA_FAULTS_MAX 3           /* data phase errors after which a session is ended */
#define DEST_MIN (4u << 10)         /* immediate data this large is received into its task's buffer (session_data_dest) */

/* LUN field (SAM-5 4.7): address method in the top two bits of byte 0. */
#define LUN_METHOD_MASK 0xC0
#define LUN_PERIPHERAL 0x00
#define LUN_FLAT 0x40

struct session {
	struct session_params p;
	struct vtl_lu lus[SESSION_MAX_LUNS];
	unsigned n_lus;
	uint64_t nexus;
	struct session_io io;
	uint32_t exp_cmd_sn, stat_sn, next_ttt;
	/*
	 * The command window [ExpCmdSN, MaxCmdSN]: MaxCmdSN never goes back
	 * (RFC 7143 4.2.2.1) and moves on only as held tasks end, so that the
	 * tasks held plus the CmdSNs still open never exceed cmd_window.
	 */
	uint32_t max_cmd_sn;
	/* CmdSNs received ahead of ExpCmdSN: bit i is exp_cmd_sn + i (the window is at most 32 wide). */
	uint32_t sn_ahead;
	struct session_task *tasks;
	unsigned n_tasks;           /* in tasks: every command the session holds */
	unsigned submitted;
	uint64_t buf_bytes;         /* task buffers held, spares included (counted in the budget too) */
	unsigned data_faults;       /* writes ended for a Data-Out out of sequence */
	/* A task management function waiting for aborted tasks still with their unit. */
	bool tmf_waiting;
	uint32_t tmf_itt;
	bool closing;
	/* A NOP-In the target sent to check the initiator is alive, until its NOP-Out answer. */
	bool ping_out;
	uint32_t ping_ttt;
	/* Spare data buffers (power-of-two sizes): reusing them spares the page faults of fresh memory. */
	uint8_t *spare[SPARE_BUFS];
	uint32_t spare_cap[SPARE_BUFS];
	unsigned n_spare;
	/* The buffer session_data_dest gave the PDU reader for a write's immediate data, and its EDTL. */
	uint8_t *pend;
	uint32_t pend_edtl;
};

int session_lun_of(const uint8_t f[8])
{
	for (int i = 2; i < 8; i++)
		if (f[i])
			return -1;
	if ((f[0] & LUN_METHOD_MASK) == LUN_PERIPHERAL)
		return f[0] ? -1 : f[1]; /* bus 0 only */
	if ((f[0] & LUN_METHOD_MASK) == LUN_FLAT)
		return (f[0] & ~LUN_METHOD_MASK) << 8 | f[1];
	return -1;
}

int session_create(const struct session_params *p, const struct vtl_lu *lus, unsigned n_lus, uint64_t nexus,
		   const struct session_io *io, struct session **out)
{
	if (n_lus > SESSION_MAX_LUNS)
		return VTL_E_INVAL;
	struct session *s = calloc(1, sizeof *s);
	if (!s)
		return VTL_E_NOMEM;
	s->p = *p;
	memcpy(s->lus, lus, n_lus * sizeof *lus);
	s->n_lus = n_lus;
	s->nexus = nexus;
	s->io = *io;
	if (!s->p.cmd_window || s->p.cmd_window > SESSION_CMD_WINDOW_MAX)
		s->p.cmd_window = SESSION_CMD_WINDOW;
	if (!s->p.ping_data_max)
		s->p.ping_data_max = SESSION_PING_DATA;
	if (!s->p.buffer_max)
		s->p.buffer_max = SESSION_BUFFER_MAX;
	s->exp_cmd_sn = p->exp_cmd_sn;
	s->max_cmd_sn = p->exp_cmd_sn + s->p.cmd_window - 1; /* what the last Login Response announced */
	s->stat_sn = p->stat_sn;
	s->next_ttt = 1;
	*out = s;
	return VTL_OK;
}

/* The size class of a buffer for len bytes: a power of two, at least SPARE_BUF_MIN. */
static uint32_t buf_class(uint32_t len)
{
	uint32_t cap = SPARE_BUF_MIN;
	while (cap < len)
		cap *= 2;
	return cap;
}

/*
 * Memory for a buffer of cap bytes, zeroed: memory another session used must
 * never reach this one's host. Large ones are mappings of their own, so
 * that the kernel zeroes them and takes them back when they are freed (the
 * allocator would keep 1 MiB blocks freed by a crowd of sessions for good).
 */
static uint8_t *buf_alloc(uint32_t cap)
{
	if (cap < BUF_MMAP_MIN)
		return calloc(1, cap);
	void *p = mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

/* Frees a buffer of cap bytes the session held, and its count. */
static void buf_free(struct session *s, uint8_t *p, uint32_t cap)
{
	if (cap < BUF_MMAP_MIN)
		free(p);
	else if (munmap(p, cap) != 0)
		abort(); /* only a pointer that is not a mapping of that size fails: memory is corrupt */
	s->buf_bytes -= cap;
	if (s->p.budget)
		s->p.budget->used -= cap;
}

/* Takes spare i out of the spares (it keeps being counted as held). */
static uint8_t *spare_take(struct session *s, unsigned i)
{
	uint8_t *p = s->spare[i];
	s->n_spare--;
	s->spare[i] = s->spare[s->n_spare];
	s->spare_cap[i] = s->spare_cap[s->n_spare];
	return p;
}

void session_release_spares(struct session *s)
{
	while (s->n_spare) {
		uint32_t cap = s->spare_cap[0];
		buf_free(s, spare_take(s, 0), cap);
	}
}

/* Whether cap more bytes stay within the session's and the target's limits. */
static bool buf_fits(const struct session *s, uint32_t cap)
{
	return s->buf_bytes + cap <= s->p.buffer_max && (!s->p.budget || s->p.budget->used + cap <= s->p.budget->max);
}

/*
 * A data buffer for len bytes (1..TASK_BUF_MAX): a spare one of its class,
 * or a new one within the limits (spares of other sizes are given up for
 * it); NULL when the limits leave no room. Without the spares, every 512
 * KiB command of a stream would fault in 128 fresh pages, which cost more
 * than the iSCSI work itself. A new buffer is zeroed (buf_alloc).
 */
static uint8_t *buf_get(struct session *s, uint32_t len)
{
	uint32_t cap = buf_class(len);
	for (unsigned i = 0; i < s->n_spare; i++)
		if (s->spare_cap[i] == cap)
			return spare_take(s, i);
	while (!buf_fits(s, cap) && s->n_spare) {
		uint32_t c = s->spare_cap[0];
		buf_free(s, spare_take(s, 0), c);
	}
	if (!buf_fits(s, cap))
		return NULL;
	uint8_t *p = buf_alloc(cap);
	if (!p)
		return NULL;
	s->buf_bytes += cap;
	if (s->p.budget)
		s->p.budget->used += cap;
	return p;
}

/* Gives back a buffer buf_get returned for len bytes (NULL: none). */
static void buf_put(struct session *s, uint8_t *p, uint32_t len)
{
	if (!p)
		return;
	uint32_t cap = buf_class(len);
	if (cap <= SPARE_BUF_MAX && s->n_spare < SPARE_BUFS) {
		s->spare[s->n_spare] = p;
		s->spare_cap[s->n_spare++] = cap;
		return;
	}
	buf_free(s, p, cap);
}

/* Takes t out of the tasks the session holds: its answer may now open the window by one. */
static void task_unlink(struct session *s, struct session_task *t)
{
	for (struct session_task **pp = &s->tasks; *pp; pp = &(*pp)->next)
		if (*pp == t) {
			*pp = t->next;
			s->n_tasks--;
			return;
		}
}

/* Frees an unlinked task and gives its buffer back. */
static void task_release(struct session *s, struct session_task *t)
{
	scsi_loan_end(&t->cmd); /* sent, aborted or dropped with its connection: the data lent comes back here */
	buf_put(s, t->buf, t->edtl);
	free(t);
}

static void task_free(struct session *s, struct session_task *t)
{
	task_unlink(s, t);
	task_release(s, t);
}

/* Sends t's last answer (its data and status) as a task the session no longer holds, then frees it. */
static void send_data_in(struct session *s, struct session_task *t);
static void send_status(struct session *s, struct session_task *t);
static void task_finish(struct session *s, struct session_task *t)
{
	task_unlink(s, t);
	if (!t->write && t->cmd.data_len)
		send_data_in(s, t);
	else
		send_status(s, t);
	task_release(s, t);
}

/* Gives back the buffer session_data_dest lent for immediate data that no task took. */
static void pend_drop(struct session *s)
{
	if (s->pend)
		buf_put(s, s->pend, s->pend_edtl);
	s->pend = NULL;
}

void session_destroy(struct session *s)
{
	if (!s)
		return;
	pend_drop(s);
	while (s->tasks)
		task_free(s, s->tasks);
	session_release_spares(s);
	for (unsigned i = 0; i < s->n_lus; i++)
		if (s->lus[i].ops && s->lus[i].ops->nexus_lost)
			s->lus[i].ops->nexus_lost(s->lus[i].dev, s->nexus);
	free(s);
}

bool session_busy(const struct session *s)
{
	return s->submitted > 0;
}

bool session_idle(const struct session *s)
{
	return s->tasks == NULL;
}

uint64_t session_buffer_bytes(const struct session *s)
{
	return s->buf_bytes;
}

/*
 * Fills the sequence numbers every response carries; status responses take
 * (and advance) StatSN. MaxCmdSN opens as far as the tasks held allow:
 * ExpCmdSN - 1 (the window closed) while cmd_window tasks are held.
 */
static void seq(struct session *s, struct iscsi_pdu *r, bool status)
{
	uint32_t room = s->n_tasks < s->p.cmd_window ? s->p.cmd_window - s->n_tasks : 0;
	uint32_t max = s->exp_cmd_sn + room - 1;
	if ((int32_t)(max - s->max_cmd_sn) > 0)
		s->max_cmd_sn = max;
	pdu_put(r->bhs + RSP_STATSN, status ? s->stat_sn++ : s->stat_sn, 4);
	pdu_put(r->bhs + RSP_EXPCMDSN, s->exp_cmd_sn, 4);
	pdu_put(r->bhs + RSP_MAXCMDSN, s->max_cmd_sn, 4);
}

static void send_pdu(struct session *s, struct iscsi_pdu *r, const void *data, uint32_t len)
{
	struct iovec iov = {(void *)data, len};
	r->data_len = len;
	s->io.send(s->io.arg, r, &iov, len ? 1 : 0);
}

static void reject(struct session *s, const struct iscsi_pdu *bad, enum reject_reason why)
{
	struct iscsi_pdu r;
	memset(&r, 0, sizeof r);
	r.bhs[BHS_OPCODE] = ISCSI_OP_REJECT;
	r.bhs[RSP_FLAGS] = RSP_FINAL;
	r.bhs[RSP_RESPONSE] = (uint8_t)why;
	pdu_put(r.bhs + BHS_ITT, ITT_RESERVED, 4);
	seq(s, &r, true);
	send_pdu(s, &r, bad->bhs, ISCSI_BHS_LEN); /* the data segment is the rejected header */
}

static const struct vtl_lu *lu_of(struct session *s, int lun)
{
	for (unsigned i = 0; i < s->n_lus; i++)
		if (s->lus[i].lun == lun)
			return &s->lus[i];
	return NULL;
}

static struct session_task *task_by_itt(struct session *s, uint32_t itt)
{
	for (struct session_task *t = s->tasks; t; t = t->next)
		if (t->itt == itt)
			return t;
	return NULL;
}

/* SCSI Response with status, sense and residual. */
static void send_status(struct session *s, struct session_task *t)
{
	struct iscsi_pdu r;
	memset(&r, 0, sizeof r);
	r.bhs[BHS_OPCODE] = ISCSI_OP_SCSI_RSP;
	r.bhs[RSP_FLAGS] = RSP_FINAL;
	r.bhs[RSP_RESPONSE] = RESPONSE_COMPLETED;
	r.bhs[RSP_STATUS] = (uint8_t)t->cmd.status;
	pdu_put(r.bhs + BHS_ITT, t->itt, 4);
	if (t->cmd.data_len < t->edtl) {
		r.bhs[RSP_FLAGS] |= RSP_UNDERFLOW;
		pdu_put(r.bhs + RSP_RESIDUAL, (uint32_t)(t->edtl - t->cmd.data_len), 4);
	}
	seq(s, &r, true);
	uint8_t sense[SENSE_LEN_FIELD + SENSE_MAX_LEN];
	uint32_t len = 0;
	if (t->cmd.status == SCSI_CHECK_CONDITION) {
		size_t n = t->cmd.sense_desc ? sense_encode_desc(&t->cmd.sense, sense + SENSE_LEN_FIELD, SENSE_MAX_LEN)
					     : sense_encode(&t->cmd.sense, sense + SENSE_LEN_FIELD, SENSE_MAX_LEN);
		pdu_put(sense, (uint32_t)n, SENSE_LEN_FIELD);
		len = (uint32_t)(SENSE_LEN_FIELD + n);
	}
	send_pdu(s, &r, sense, len);
}

/*
 * Data-In PDUs of at most the initiator's MaxRecvDataSegmentLength; the last
 * carries GOOD status when it can. The data is the task's buffer, or what
 * the unit lent: send_pdu writes it or copies it for sending before it
 * returns, so a loan may end as soon as this does.
 */
static void send_data_in(struct session *s, struct session_task *t)
{
	uint32_t total = (uint32_t)t->cmd.data_len;
	const uint8_t *data = t->cmd.loan.data ? t->cmd.loan.data : t->buf;
	bool collapse = t->cmd.status == SCSI_GOOD;
	uint32_t chunk = s->p.max_send_data ? s->p.max_send_data : total;
	uint32_t sn = 0;
	for (uint32_t off = 0; off < total; off += chunk, sn++) {
		uint32_t len = total - off < chunk ? total - off : chunk;
		bool last = off + len == total;
		struct iscsi_pdu r;
		memset(&r, 0, sizeof r);
		r.bhs[BHS_OPCODE] = ISCSI_OP_DATA_IN;
		memcpy(r.bhs + BHS_LUN, t->lun_field, 8);
		pdu_put(r.bhs + BHS_ITT, t->itt, 4);
		pdu_put(r.bhs + RSP_TTT, ITT_RESERVED, 4);
		pdu_put(r.bhs + RSP_DATASN, sn, 4);
		pdu_put(r.bhs + RSP_OFFSET, off, 4);
		if (last && collapse) {
			r.bhs[RSP_FLAGS] = RSP_FINAL | DATAIN_STATUS;
			r.bhs[RSP_STATUS] = SCSI_GOOD;
			if (total < t->edtl) {
				r.bhs[RSP_FLAGS] |= RSP_UNDERFLOW;
				pdu_put(r.bhs + RSP_RESIDUAL, t->edtl - total, 4);
			}
			seq(s, &r, true);
		} else {
			r.bhs[RSP_FLAGS] = last ? RSP_FINAL : 0;
			seq(s, &r, false);
		}
		send_pdu(s, &r, data + off, len);
	}
	if (!(total && collapse))
		send_status(s, t);
}

static void send_tmf_response(struct session *s, uint32_t itt, enum tmf_response resp)
{
	struct iscsi_pdu r;
	memset(&r, 0, sizeof r);
	r.bhs[BHS_OPCODE] = ISCSI_OP_TMF_RSP;
	r.bhs[RSP_FLAGS] = RSP_FINAL;
	r.bhs[RSP_RESPONSE] = (uint8_t)resp;
	pdu_put(r.bhs + BHS_ITT, itt, 4);
	seq(s, &r, true);
	send_pdu(s, &r, NULL, 0);
}

static bool tasks_aborting(const struct session *s)
{
	for (const struct session_task *t = s->tasks; t; t = t->next)
		if (t->aborted)
			return true;
	return false;
}

void session_complete(struct session *s, struct session_task *t)
{
	s->submitted--;
	if (t->aborted) {
		/* Its status is not sent (SAM-5: an aborted task ends without one); the TMF answers once all are done. */
		task_free(s, t);
		if (s->tmf_waiting && !tasks_aborting(s)) {
			s->tmf_waiting = false;
			send_tmf_response(s, s->tmf_itt, TMF_COMPLETE);
		}
		return;
	}
	task_finish(s, t);
}

/* Whether all of t's data is there (commands without data-out are ready as they arrive). */
static bool task_ready(const struct session_task *t)
{
	return !t->write || t->received >= t->edtl;
}

/* Whether a command with an earlier CmdSN (serial arithmetic) for t's unit has not gone to it yet. */
static bool earlier_pending(const struct session *s, const struct session_task *t)
{
	for (const struct session_task *o = s->tasks; o; o = o->next)
		if (o != t && o->lu == t->lu && !o->submitted && (int32_t)(o->cmd_sn - t->cmd_sn) < 0)
			return true;
	return false;
}

/*
 * Hands every command whose data is complete to its unit, in CmdSN order per
 * unit: a tape drive executes in the order the host numbered its commands
 * (RFC 7143 3.2.2.1 orders delivery by CmdSN), so a 256 KiB WRITE whose
 * data all came as immediate data must not overtake an earlier 512 KiB
 * WRITE still waiting for its R2T's Data-Out. Rescans after each submit,
 * since submit may complete (and free) a task at once.
 */
static void submit_ready(struct session *s)
{
	for (bool again = true; again;) {
		again = false;
		for (struct session_task *t = s->tasks; t; t = t->next)
			if (!t->submitted && !t->aborted && task_ready(t) && !earlier_pending(s, t)) {
				t->submitted = true;
				s->submitted++;
				s->io.submit(s->io.arg, t);
				again = true;
				break;
			}
	}
}

/* A target transfer tag for an R2T or a ping: never the reserved value. */
static uint32_t new_ttt(struct session *s)
{
	uint32_t ttt = s->next_ttt++;
	if (ttt == ITT_RESERVED)
		ttt = s->next_ttt++;
	return ttt;
}

/*
 * Asks for the next burst of a write's data, from where its data ends so
 * far (RFC 7143 11.8; one R2T outstanding at a time, each with its own TTT
 * so that a Data-Out meant for an earlier burst is recognised).
 */
static void send_r2t(struct session *s, struct session_task *t)
{
	uint32_t len = t->edtl - t->received;
	if (s->p.max_burst && len > s->p.max_burst)
		len = s->p.max_burst;
	t->ttt = new_ttt(s);
	struct iscsi_pdu r;
	memset(&r, 0, sizeof r);
	r.bhs[BHS_OPCODE] = ISCSI_OP_R2T;
	r.bhs[RSP_FLAGS] = RSP_FINAL;
	memcpy(r.bhs + BHS_LUN, t->lun_field, 8);
	pdu_put(r.bhs + BHS_ITT, t->itt, 4);
	pdu_put(r.bhs + RSP_TTT, t->ttt, 4);
	seq(s, &r, false);
	pdu_put(r.bhs + RSP_DATASN, t->r2t_sn++, 4);
	pdu_put(r.bhs + RSP_OFFSET, t->received, 4);
	pdu_put(r.bhs + RSP_DESIRED, len, 4);
	t->burst_left = len;
	t->burst_ttt = t->ttt;
	t->data_sn = 0;
	send_pdu(s, &r, NULL, 0);
}

/* The next step of a write once a burst ended: all data there (submit), or another R2T. */
static void write_progress(struct session *s, struct session_task *t)
{
	if (t->crc_error) {
		/*
		 * Its burst has ended and some of its data was lost to a digest
		 * error: no further R2T, and the unit never sees the command
		 * (RFC 7143 7.8, option b: ERL 0 cannot ask for the data again).
		 */
		scsi_fail(&t->cmd, sense_of(SK_ABORTED_COMMAND, ASC_PROTOCOL_SERVICE_CRC_ERROR));
		task_finish(s, t);
		submit_ready(s); /* later commands no longer wait for it */
	} else if (task_ready(t))
		submit_ready(s);
	else if (t->burst_left == 0)
		send_r2t(s, t);
}

/* Answers a command for a LUN the target does not have (SPC-4: INQUIRY says so; others get 25h/00h). */
static void no_such_lun(struct session *s, struct session_task *t)
{
	if (t->cmd.cdb[0] == SCSI_OP_INQUIRY) {
		/* Peripheral qualifier 011b, type 1Fh: no logical unit here (SPC-4 6.6.2). */
		static const uint8_t inq[36] = {0x7F, 0, 0x06, 0x12, 31};
		size_t n = t->edtl < sizeof inq ? t->edtl : sizeof inq;
		size_t alloc = (size_t)t->cmd.cdb[3] << 8 | t->cmd.cdb[4];
		if (n > alloc)
			n = alloc;
		if (n)
			memcpy(t->buf, inq, n);
		scsi_done(&t->cmd, n);
	} else {
		scsi_fail(&t->cmd, sense_of(SK_ILLEGAL_REQUEST, ASC_LUN_NOT_SUPPORTED));
	}
	s->submitted++; /* session_complete counts it back */
	session_complete(s, t);
}

/*
 * A SCSI Response with only a status, for a command the session does not
 * take: TASK SET FULL when it holds all the commands or buffer bytes it may
 * (SAM-5 5.3.1: the initiator retries once others complete).
 */
static void send_bare_status(struct session *s, const struct iscsi_pdu *cmd, enum scsi_status status)
{
	struct iscsi_pdu r;
	memset(&r, 0, sizeof r);
	r.bhs[BHS_OPCODE] = ISCSI_OP_SCSI_RSP;
	r.bhs[RSP_FLAGS] = RSP_FINAL;
	r.bhs[RSP_RESPONSE] = RESPONSE_COMPLETED;
	r.bhs[RSP_STATUS] = (uint8_t)status;
	pdu_put(r.bhs + BHS_ITT, pdu_itt(cmd), 4);
	uint32_t edtl = pdu_get(cmd->bhs + CMD_EDTL, 4);
	if (edtl) {
		r.bhs[RSP_FLAGS] |= RSP_UNDERFLOW;
		pdu_put(r.bhs + RSP_RESIDUAL, edtl, 4);
	}
	seq(s, &r, true);
	send_pdu(s, &r, NULL, 0);
}

static void scsi_command(struct session *s, const struct iscsi_pdu *pdu)
{
	const uint8_t *h = pdu->bhs;
	uint32_t edtl = pdu_get(h + CMD_EDTL, 4);
	bool rd = h[RSP_FLAGS] & CMD_READ, wr = h[RSP_FLAGS] & CMD_WRITE;
	if ((rd && wr) || edtl > TASK_BUF_MAX || (!wr && pdu->data_len) || (wr && pdu->data_len > edtl) ||
	    (pdu->data_len && (!s->p.immediate_data || pdu->data_len > s->p.first_burst)) ||
	    task_by_itt(s, pdu_itt(pdu))) {
		/* Bidirectional commands, transfers beyond any tape command, stray or excess data, a tag in use. */
		reject(s, pdu, REJECT_INVALID_FIELD);
		return;
	}
	/* Immediate commands do not wait for the window (RFC 7143 3.2.2.1), but count against what is held. */
	if (s->n_tasks >= s->p.cmd_window) {
		send_bare_status(s, pdu, SCSI_TASK_SET_FULL);
		return;
	}
	struct session_task *t = calloc(1, sizeof *t);
	/* Immediate data received into the buffer session_data_dest gave: the task keeps it, nothing is copied. */
	bool received_in_place = t && s->pend && pdu->data == s->pend && s->pend_edtl == edtl;
	if (received_in_place) {
		t->buf = s->pend;
		s->pend = NULL;
	}
	if (t && edtl && !t->buf && !(t->buf = buf_get(s, edtl))) {
		free(t);
		send_bare_status(s, pdu, SCSI_TASK_SET_FULL); /* its data would pass a memory limit */
		return;
	}
	if (!t) {
		reject(s, pdu, REJECT_NOT_SUPPORTED);
		return;
	}
	t->itt = pdu_itt(pdu);
	t->cmd_sn = pdu_get(h + CMD_CMDSN, 4);
	t->edtl = edtl;
	t->write = wr;
	memcpy(t->lun_field, h + BHS_LUN, 8);
	memcpy(t->cmd.cdb, h + CMD_CDB, CMD_CDB_LEN);
	t->cmd.cdb_len = CMD_CDB_LEN;
	/* An extended CDB (AHS type 1) continues the CDB past 16 bytes. */
	if (pdu->ahs_len >= 4 && pdu->ahs[2] == AHS_EXT_CDB) {
		uint32_t ext = pdu_get(pdu->ahs, 2) - 1; /* AHSLength counts the reserved byte */
		if (ext > SCSI_CDB_MAX - CMD_CDB_LEN || 4 + ext > pdu->ahs_len) {
			buf_put(s, t->buf, edtl);
			free(t);
			reject(s, pdu, REJECT_INVALID_FIELD);
			return;
		}
		memcpy(t->cmd.cdb + CMD_CDB_LEN, pdu->ahs + 4, ext);
		t->cmd.cdb_len = (uint8_t)(CMD_CDB_LEN + ext);
	}
	t->cmd.dir = rd ? SCSI_DIR_IN : wr ? SCSI_DIR_OUT : SCSI_DIR_NONE;
	t->cmd.xfer_len = edtl;
	t->iov = (struct iovec){t->buf, edtl};
	t->cmd.iov = &t->iov;
	t->cmd.iov_cnt = edtl ? 1 : 0;
	t->cmd.nexus = s->nexus;
	t->cmd.tid = s->p.tid;
	t->cmd.may_lend = rd; /* its data-in is sent from a loan as it is from buf, and every task ends in task_release */
	t->next = s->tasks;
	s->tasks = t;
	s->n_tasks++;
	int lun = session_lun_of(t->lun_field);
	t->lu = lun >= 0 ? lu_of(s, lun) : NULL;
	if (!t->lu && t->cmd.cdb[0] == SCSI_OP_REPORT_LUNS && s->n_lus)
		t->lu = &s->lus[0]; /* REPORT LUNS answers the target's list from any LUN */
	if (!t->lu) {
		no_such_lun(s, t);
		return;
	}
	t->lun = (uint16_t)(lun >= 0 ? lun : 0);
	if (!wr) {
		submit_ready(s);
		return;
	}
	/*
	 * Immediate data, then unsolicited Data-Out (TTT reserved, DataSN from
	 * 0) up to FirstBurstLength unless InitialR2T, then R2Ts: the first
	 * burst counts immediate and unsolicited data together (RFC 7143 13.14).
	 */
	if (pdu->data_len && !received_in_place)
		memcpy(t->buf, pdu->data, pdu->data_len);
	t->received = pdu->data_len;
	uint32_t first = s->p.first_burst < edtl ? s->p.first_burst : edtl;
	bool no_more = h[RSP_FLAGS] & BHS_FINAL; /* F: no unsolicited Data-Out follows */
	t->burst_left = no_more || s->p.initial_r2t || first <= t->received ? 0 : first - t->received;
	t->burst_ttt = ITT_RESERVED;
	t->data_sn = 0;
	write_progress(s, t);
}

/* The write task waiting for Data-Out with this PDU's ITT; NULL when there is none. */
static struct session_task *data_out_task(struct session *s, const struct iscsi_pdu *pdu)
{
	struct session_task *t = task_by_itt(s, pdu_itt(pdu));
	return t && t->write && !t->submitted ? t : NULL;
}

/*
 * Why a Data-Out does not continue its write exactly where the write's data
 * ends (SPC-4 table 28, 4Bh: the data phase errors); ASC_NONE when it does.
 * With DataPDUInOrder and DataSequenceInOrder both Yes (the only values
 * this target negotiates) there is one place each byte may come from:
 * anything else would leave a gap, or bytes sent twice, in the block the
 * drive writes.
 */
static enum scsi_asc data_out_fault(const struct session_task *t, const uint8_t *bhs, uint32_t data_len)
{
	if (pdu_get(bhs + DOUT_TTT, 4) != t->burst_ttt)
		return ASC_INVALID_TTT_RECEIVED;
	if (pdu_get(bhs + DOUT_DATASN, 4) != t->data_sn)
		return ASC_DATA_PHASE_ERROR;
	if (pdu_get(bhs + DOUT_OFFSET, 4) != t->received)
		return ASC_DATA_OFFSET_ERROR;
	if (data_len > t->burst_left)
		return ASC_TOO_MUCH_WRITE_DATA;
	return ASC_NONE;
}

/*
 * Ends a write whose Data-Out broke the sequence: a Reject (protocol error)
 * for the PDU, CHECK CONDITION for the command, which its unit never sees;
 * the session goes on (ERL 0 has no within-command recovery).
 */
static void data_out_refuse(struct session *s, struct session_task *t, const struct iscsi_pdu *pdu,
			    enum scsi_asc why)
{
	reject(s, pdu, REJECT_PROTOCOL);
	scsi_fail(&t->cmd, sense_of(SK_ABORTED_COMMAND, why));
	task_finish(s, t);
	submit_ready(s); /* later commands no longer wait for it */
	/*
	 * No initiator that follows RFC 7143 breaks the data phase at all; one
	 * that keeps doing it would have the target read and refuse its data
	 * for ever at the cost of everyone else's: its session ends.
	 */
	if (++s->data_faults >= DATA_FAULTS_MAX && !s->closing) {
		s->closing = true;
		s->io.close(s->io.arg);
	}
}

/* Counts a Data-Out's bytes against its burst (placed or lost) and moves the write on when the burst ends. */
static void data_out_account(struct session *s, struct session_task *t, const struct iscsi_pdu *pdu)
{
	t->received += pdu->data_len;
	t->burst_left -= pdu->data_len;
	t->data_sn++;
	if (pdu->bhs[RSP_FLAGS] & BHS_FINAL)
		t->burst_left = 0; /* a burst may end early: the next R2T asks from where the data ends */
	if (t->burst_left == 0)
		write_progress(s, t);
}

static void data_out(struct session *s, const struct iscsi_pdu *pdu)
{
	struct session_task *t = data_out_task(s, pdu);
	if (!t) {
		reject(s, pdu, REJECT_INVALID_FIELD);
		return;
	}
	enum scsi_asc why = data_out_fault(t, pdu->bhs, pdu->data_len);
	if (why != ASC_NONE) {
		data_out_refuse(s, t, pdu, why);
		return;
	}
	if (pdu->data != t->buf + t->received) /* equal: received in place (session_data_dest) */
		memcpy(t->buf + t->received, pdu->data, pdu->data_len);
	data_out_account(s, t, pdu);
}

void session_data_digest_error(struct session *s, const struct iscsi_pdu *pdu)
{
	pend_drop(s); /* the command is dropped whole: its data's buffer comes back */
	if (s->closing)
		return;
	if (pdu_opcode(pdu) != ISCSI_OP_DATA_OUT) {
		reject(s, pdu, REJECT_DATA_DIGEST);
		return; /* a command, ping or text dropped whole: its CmdSN stays expected, for a retry */
	}
	struct session_task *t = data_out_task(s, pdu);
	enum scsi_asc why = t ? data_out_fault(t, pdu->bhs, pdu->data_len) : ASC_NONE;
	if (why != ASC_NONE) {
		data_out_refuse(s, t, pdu, why);
		return;
	}
	reject(s, pdu, REJECT_DATA_DIGEST);
	if (!t)
		return; /* it fits no write: nothing more to do than for a good one */
	/* The bytes are lost but count towards the burst, so the task still reaches its end (and its status). */
	t->crc_error = true;
	data_out_account(s, t, pdu);
}

void session_protocol_error(struct session *s, const struct iscsi_pdu *pdu)
{
	pend_drop(s);
	if (s->closing)
		return;
	reject(s, pdu, REJECT_PROTOCOL);
	s->closing = true;
	s->io.close(s->io.arg);
}

static void nop_out(struct session *s, const struct iscsi_pdu *pdu)
{
	if (pdu_itt(pdu) == ITT_RESERVED) {
		/* An answer to our ping (it carries the ping's TTT), or a ping that wants none. */
		if (s->ping_out && pdu_get(pdu->bhs + RSP_TTT, 4) == s->ping_ttt)
			s->ping_out = false;
		return;
	}
	if (pdu->data_len > s->p.ping_data_max) {
		reject(s, pdu, REJECT_INVALID_FIELD); /* echoing it would let a host make the target hold its data */
		return;
	}
	struct iscsi_pdu r;
	memset(&r, 0, sizeof r);
	r.bhs[BHS_OPCODE] = ISCSI_OP_NOP_IN;
	r.bhs[RSP_FLAGS] = RSP_FINAL;
	memcpy(r.bhs + BHS_LUN, pdu->bhs + BHS_LUN, 8);
	pdu_put(r.bhs + BHS_ITT, pdu_itt(pdu), 4);
	pdu_put(r.bhs + RSP_TTT, ITT_RESERVED, 4);
	seq(s, &r, true);
	send_pdu(s, &r, pdu->data, pdu->data_len); /* the ping data comes back */
}

/* Marks the tasks of lu (NULL: every unit) aborted; those not yet with their unit are dropped now. */
static void abort_tasks(struct session *s, const struct vtl_lu *lu, uint32_t only_itt, bool one)
{
	for (struct session_task *t = s->tasks, *next; t; t = next) {
		next = t->next;
		if ((lu && t->lu != lu) || (one && t->itt != only_itt))
			continue;
		if (t->submitted)
			t->aborted = true;
		else
			task_free(s, t);
	}
}

_Static_assert(SESSION_CMD_WINDOW_MAX <= 32, "sn_ahead holds one bit per CmdSN of the window");

/* Whether sn lies in the command window [ExpCmdSN, MaxCmdSN] the session last announced. */
static bool sn_in_window(const struct session *s, uint32_t sn)
{
	return (int32_t)(sn - s->exp_cmd_sn) >= 0 && (int32_t)(s->max_cmd_sn - sn) >= 0;
}

/* Records sn as received, moving ExpCmdSN past every CmdSN received without a gap; false for a duplicate. */
static bool sn_receive(struct session *s, uint32_t sn)
{
	uint32_t bit = 1u << (sn - s->exp_cmd_sn);
	if (s->sn_ahead & bit)
		return false;
	s->sn_ahead |= bit;
	while (s->sn_ahead & 1u) {
		s->sn_ahead >>= 1;
		s->exp_cmd_sn++;
	}
	return true;
}

static void task_management(struct session *s, const struct iscsi_pdu *pdu)
{
	unsigned fn = pdu->bhs[RSP_FLAGS] & TMF_FUNCTION_MASK;
	uint32_t itt = pdu_itt(pdu);
	int lun = session_lun_of(pdu->bhs + BHS_LUN);
	const struct vtl_lu *lu = lun >= 0 ? lu_of(s, lun) : NULL;
	switch (fn) {
	case TMF_ABORT_TASK: {
		struct session_task *t = task_by_itt(s, pdu_get(pdu->bhs + TMF_REF_ITT, 4));
		if (!t) {
			/*
			 * RFC 7143 11.5.1: a command numbered before the TMF and still
			 * inside the window may be on its way: count it as received (it is
			 * dropped if it comes) and answer "function complete"; otherwise
			 * the task does not exist.
			 */
			uint32_t ref = pdu_get(pdu->bhs + TMF_REF_CMDSN, 4);
			uint32_t tmf_sn = pdu_get(pdu->bhs + CMD_CMDSN, 4);
			bool on_its_way = sn_in_window(s, ref) && (int32_t)(ref - tmf_sn) < 0;
			if (on_its_way)
				sn_receive(s, ref);
			send_tmf_response(s, itt, on_its_way ? TMF_COMPLETE : TMF_NO_TASK);
			return;
		}
		abort_tasks(s, NULL, t->itt, true);
		break;
	}
	case TMF_ABORT_TASK_SET:
	case TMF_CLEAR_TASK_SET:
	case TMF_LU_RESET:
		if (!lu) {
			send_tmf_response(s, itt, TMF_NO_LUN);
			return;
		}
		abort_tasks(s, lu, 0, false);
		if (fn == TMF_LU_RESET && lu->ops && lu->ops->reset)
			lu->ops->reset(lu->dev);
		break;
	case TMF_TARGET_WARM_RESET:
	case TMF_TARGET_COLD_RESET:
		abort_tasks(s, NULL, 0, false);
		for (unsigned i = 0; i < s->n_lus; i++)
			if (s->lus[i].ops && s->lus[i].ops->reset)
				s->lus[i].ops->reset(s->lus[i].dev);
		break;
	default:
		send_tmf_response(s, itt, TMF_NOT_SUPPORTED);
		return;
	}
	submit_ready(s); /* commands that waited behind a dropped one go to their unit now */
	if (tasks_aborting(s)) {
		/* Answer once the aborted commands the units are running have finished (RFC 7143 4.2.3.3). */
		s->tmf_waiting = true;
		s->tmf_itt = itt;
		return;
	}
	send_tmf_response(s, itt, TMF_COMPLETE);
	if (fn == TMF_TARGET_COLD_RESET)
		s->io.close(s->io.arg); /* a cold reset drops every connection */
}

static void logout(struct session *s, const struct iscsi_pdu *pdu)
{
	unsigned reason = pdu->bhs[RSP_FLAGS] & LOGOUT_REASON_MASK;
	struct iscsi_pdu r;
	memset(&r, 0, sizeof r);
	r.bhs[BHS_OPCODE] = ISCSI_OP_LOGOUT_RSP;
	r.bhs[RSP_FLAGS] = RSP_FINAL;
	/* One connection per session: closing it closes the session; recovery is not offered (ERL 0). */
	r.bhs[RSP_RESPONSE] = reason == LOGOUT_CLOSE_SESSION || reason == LOGOUT_CLOSE_CONNECTION ? 0 : 2;
	pdu_put(r.bhs + BHS_ITT, pdu_itt(pdu), 4);
	seq(s, &r, true);
	send_pdu(s, &r, NULL, 0);
	s->closing = true;
	s->io.close(s->io.arg);
}

static void text(struct session *s, const struct iscsi_pdu *pdu)
{
	static uint8_t out[TEXT_MAX];
	size_t n = 0;
	if (pdu->bhs[RSP_FLAGS] & TEXT_CONTINUE) {
		reject(s, pdu, REJECT_NOT_SUPPORTED); /* long key lists do not occur in what a tape target is asked */
		return;
	}
	if (s->io.text)
		n = s->io.text(s->io.arg, pdu->data, pdu->data_len, out, sizeof out);
	struct iscsi_pdu r;
	memset(&r, 0, sizeof r);
	r.bhs[BHS_OPCODE] = ISCSI_OP_TEXT_RSP;
	r.bhs[RSP_FLAGS] = RSP_FINAL;
	pdu_put(r.bhs + BHS_ITT, pdu_itt(pdu), 4);
	pdu_put(r.bhs + RSP_TTT, ITT_RESERVED, 4);
	seq(s, &r, true);
	send_pdu(s, &r, out, (uint32_t)n);
}

/*
 * Whether a numbered request is in the command window; the expected one
 * advances it. Immediate requests neither need nor move it (RFC 7143 3.2.2.1).
 */
/* A non-immediate PDU outside the window, or a CmdSN already received, is silently ignored (RFC 7143 4.2.2.1). */
static bool cmd_sn_ok(struct session *s, const struct iscsi_pdu *pdu)
{
	if (pdu->bhs[BHS_OPCODE] & BHS_IMMEDIATE)
		return true;
	uint32_t sn = pdu_get(pdu->bhs + CMD_CMDSN, 4);
	return sn_in_window(s, sn) && sn_receive(s, sn);
}

void session_ping(struct session *s)
{
	if (s->closing || s->ping_out)
		return;
	struct iscsi_pdu r;
	memset(&r, 0, sizeof r);
	r.bhs[BHS_OPCODE] = ISCSI_OP_NOP_IN;
	r.bhs[RSP_FLAGS] = RSP_FINAL;
	/* ITT reserved and a real TTT: the initiator must answer with a NOP-Out (RFC 7143 11.19). */
	pdu_put(r.bhs + BHS_ITT, ITT_RESERVED, 4);
	s->ping_ttt = new_ttt(s);
	pdu_put(r.bhs + RSP_TTT, s->ping_ttt, 4);
	seq(s, &r, false); /* StatSN is not advanced by a NOP-In that is no answer */
	s->ping_out = true;
	send_pdu(s, &r, NULL, 0);
}

bool session_ping_outstanding(const struct session *s)
{
	return s->ping_out;
}

/*
 * A Data-Out that continues its write exactly where the write's data ends
 * (what data_out will accept): the rest of the write's buffer. The task
 * cannot end before the PDU is whole: only this session's PDUs, which the
 * reader delivers after this one, or session_destroy, after which the
 * reader is never fed again, free an unsubmitted write.
 */
static uint8_t *data_out_dest(struct session *s, const uint8_t *bhs, uint32_t len)
{
	struct session_task *t = task_by_itt(s, pdu_get(bhs + BHS_ITT, 4));
	if (!t || !t->write || t->submitted || !t->buf || data_out_fault(t, bhs, len) != ASC_NONE)
		return NULL;
	return t->buf + t->received;
}

uint8_t *session_data_dest(struct session *s, const uint8_t *bhs, uint32_t len)
{
	if (!s->closing && (bhs[BHS_OPCODE] & BHS_OPCODE_MASK) == ISCSI_OP_DATA_OUT && len >= DEST_MIN)
		return data_out_dest(s, bhs, len);
	uint32_t edtl = pdu_get(bhs + CMD_EDTL, 4);
	bool wr = bhs[RSP_FLAGS] & CMD_WRITE, rd = bhs[RSP_FLAGS] & CMD_READ;
	/* Only what scsi_command would take as a write's immediate data; anything else, or small, is copied as before. */
	if (s->closing || (bhs[BHS_OPCODE] & BHS_OPCODE_MASK) != ISCSI_OP_SCSI_CMD || !wr || rd ||
	    len < DEST_MIN || len > edtl || edtl > TASK_BUF_MAX || !s->p.immediate_data || len > s->p.first_burst)
		return NULL;
	pend_drop(s); /* never more than one: the reader has one PDU in hand */
	s->pend = buf_get(s, edtl); /* NULL (a limit): the reader's buffer, and the command's own answer */
	s->pend_edtl = edtl;
	return s->pend;
}

static void session_dispatch(struct session *s, const struct iscsi_pdu *pdu);

void session_receive(struct session *s, const struct iscsi_pdu *pdu)
{
	session_dispatch(s, pdu);
	pend_drop(s); /* a command refused, or dropped, leaves what its data was read into */
}

static void session_dispatch(struct session *s, const struct iscsi_pdu *pdu)
{
	if (s->closing)
		return;
	switch (pdu_opcode(pdu)) {
	case ISCSI_OP_SCSI_CMD:
		if (cmd_sn_ok(s, pdu))
			scsi_command(s, pdu);
		break;
	case ISCSI_OP_DATA_OUT:
		data_out(s, pdu);
		break;
	case ISCSI_OP_NOP_OUT:
		if (cmd_sn_ok(s, pdu))
			nop_out(s, pdu);
		break;
	case ISCSI_OP_TMF_REQ:
		if (cmd_sn_ok(s, pdu))
			task_management(s, pdu);
		break;
	case ISCSI_OP_TEXT_REQ:
		if (cmd_sn_ok(s, pdu))
			text(s, pdu);
		break;
	case ISCSI_OP_LOGOUT_REQ:
		if (cmd_sn_ok(s, pdu))
			logout(s, pdu);
		break;
	case ISCSI_OP_LOGIN_REQ:
		reject(s, pdu, REJECT_PROTOCOL); /* a login in the full feature phase */
		break;
	default:
		reject(s, pdu, REJECT_NOT_SUPPORTED); /* SNACK (ERL 0) and unknown opcodes */
		break;
	}
}
