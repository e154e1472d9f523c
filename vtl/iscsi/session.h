/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The full feature phase of an iSCSI session (RFC 7143, one connection per
 * session) as a state machine without I/O: PDUs that arrive go in with
 * session_receive; PDUs to send come out through the send callback; SCSI
 * commands whose data has all arrived go to their logical unit through the
 * submit callback and come back, executed, through session_complete. The
 * connection that owns the socket (and the threads that run the logical
 * units) is elsewhere, so this part can be tested PDU by PDU.
 */
#ifndef VTL_ISCSI_SESSION_H
#define VTL_ISCSI_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "vtl/iscsi/pdu.h"
#include "vtl/lu_worker.h"
#include "vtl/scsi/cmd.h"

#define SESSION_MAX_LUNS 64
#define SESSION_CMD_WINDOW 32     /* default of the commands a session may hold (cmd_window) */
#define SESSION_CMD_WINDOW_MAX 32 /* the most: CmdSNs received ahead are one bit each of a 32-bit word */
#define SESSION_PING_DATA 4096    /* default of the NOP-Out ping data echoed (ping_data_max) */
#define SESSION_BUFFER_MAX (64ull << 20) /* default of the task-buffer bytes one session may hold */

/*
 * Task-buffer bytes every session of a target holds together, against a
 * limit; shared by sessions that all run on one thread (the event loop).
 */
struct session_budget {
	uint64_t used, max;
};

/* A logical unit: LUN 0 the changer, 1..N the drives; exec runs a command on it (any thread). */

/* Operational parameters the login negotiated (RFC 7143 13). */
struct session_params {
	uint32_t max_recv_data;    /* MaxRecvDataSegmentLength the target declared: Data-Out it accepts */
	uint32_t max_send_data;    /* the initiator's MaxRecvDataSegmentLength: Data-In it accepts */
	uint32_t max_burst;        /* MaxBurstLength */
	uint32_t first_burst;      /* FirstBurstLength */
	bool initial_r2t;          /* InitialR2T */
	bool immediate_data;       /* ImmediateData */
	uint32_t exp_cmd_sn;       /* CmdSN of the login request: the first the session expects */
	uint32_t stat_sn;          /* the StatSN of the first response of the full feature phase */
	/* Limits (docs/iscsi.md, "Limits and security"); 0 means the default. */
	uint32_t cmd_window;       /* commands held at once (1..SESSION_CMD_WINDOW_MAX), as the login announced */
	uint32_t ping_data_max;    /* NOP-Out ping data echoed; a larger ping is rejected */
	uint64_t buffer_max;       /* task-buffer bytes held, spares included */
	struct session_budget *budget; /* the target's, for all sessions; NULL: no common limit */
	const struct scsi_tid *tid; /* the initiator port's TransportID, given to every command; NULL: none */
};

/* A SCSI command in the session. */
struct session_task {
	struct scsi_cmd cmd;
	uint32_t itt;
	uint32_t ttt;              /* target transfer tag of its R2Ts */
	uint32_t cmd_sn;
	uint16_t lun;
	const struct vtl_lu *lu;
	uint8_t lun_field[8];
	uint32_t edtl;             /* expected data transfer length */
	uint8_t *buf;              /* edtl bytes: data in or out */
	struct iovec iov;
	/*
	 * Data-Out arrives in order (DataPDUInOrder = DataSequenceInOrder =
	 * Yes): [0, received) of buf is placed, and the next Data-Out must
	 * start at received, carry burst_ttt and DataSN data_sn, and fit in
	 * burst_left. So a write reaches its unit only with every byte sent.
	 */
	uint32_t received;
	uint32_t burst_left;       /* bytes still expected in the current burst (0: none is open) */
	uint32_t burst_ttt;        /* TTT of the current burst: its R2T's, or ITT_RESERVED when unsolicited */
	uint32_t data_sn;          /* DataSN the next Data-Out of the burst must carry */
	uint32_t r2t_sn;
	bool write;
	bool submitted;
	bool aborted;              /* a task management function waits for it instead of its status */
	bool crc_error;            /* a Data-Out of it failed its digest: ends in CHECK CONDITION, never runs */
	struct session_task *next;
};

struct session_io {
	/* Sends (or copies for sending) a PDU whose data segment is niov buffers, before it returns. */
	void (*send)(void *arg, struct iscsi_pdu *pdu, const struct iovec *data, int niov);
	/* Hands a command whose data is complete to its logical unit; session_complete must follow. */
	void (*submit)(void *arg, struct session_task *t);
	/* The session is over (logout done, or a protocol error): close the connection once sends drain. */
	void (*close)(void *arg);
	/* Answers a Text Request's keys (SendTargets) into out (cap bytes); returns the length. May be NULL. */
	size_t (*text)(void *arg, const uint8_t *keys, size_t len, uint8_t *out, size_t cap);
	void *arg;
};

struct session;

/* Creates the full feature phase of a session with nexus id nexus over the given logical units. */
int session_create(const struct session_params *p, const struct vtl_lu *lus, unsigned n_lus, uint64_t nexus,
		   const struct session_io *io, struct session **out);

/* Ends the session: logical units learn the nexus is gone; tasks still with a unit must have completed. */
void session_destroy(struct session *s);

/* Handles one PDU from the initiator. */
void session_receive(struct session *s, const struct iscsi_pdu *pdu);

/*
 * Where the data segment of the PDU whose header bhs just arrived (len
 * bytes) should be read (struct pdu_reader's dest): for a write's
 * immediate data, the buffer its task will keep, so that the data is
 * received straight into it rather than copied there; for a Data-Out that
 * continues its write where the write's data ends, the place in the
 * write's buffer it goes; NULL otherwise. An immediate data's buffer
 * stays the session's: the next session_receive,
 * session_data_digest_error or session_protocol_error takes it as the
 * task's or gives it back, and so does session_destroy.
 */
uint8_t *session_data_dest(struct session *s, const uint8_t *bhs, uint32_t len);

/*
 * A PDU whose header was sound but whose data digest was wrong (RFC 7143
 * 7.8): answers with a Reject, reason "data digest error", and carries on.
 * A Data-Out's task then ends, once all its data has come, with CHECK
 * CONDITION "protocol service CRC error" (ERL 0 has no recovery R2T); any
 * other PDU is dropped as if never sent (the initiator may retry it).
 */
void session_data_digest_error(struct session *s, const struct iscsi_pdu *pdu);

/*
 * A PDU whose header was sound but whose data segment is longer than the
 * MaxRecvDataSegmentLength the target declared (RFC 7143 13.12): answers
 * with a Reject, reason "protocol error", and ends the session, since the
 * stream after it cannot be trusted. The caller closes once sends drain.
 */
void session_protocol_error(struct session *s, const struct iscsi_pdu *pdu);

/* A task the submit callback handed out has been executed: sends its data and status. */
void session_complete(struct session *s, struct session_task *t);

/* Sends a NOP-In the initiator must answer (a keepalive), unless one is still unanswered. */
void session_ping(struct session *s);

/* Whether the last session_ping is still unanswered. */
bool session_ping_outstanding(const struct session *s);

/* Whether tasks are still with a logical unit (the connection waits for them before destroying). */
bool session_busy(const struct session *s);

/* Whether the session holds no task at all (none waiting for data, none with a unit). */
bool session_idle(const struct session *s);

/* Frees the spare data buffers the session keeps for its next commands (it is idle, or memory is short). */
void session_release_spares(struct session *s);

/* Task-buffer bytes the session holds, its spares included. */
uint64_t session_buffer_bytes(const struct session *s);

/* The LUN number of an 8-byte LUN field (single level, peripheral or flat addressing); -1 otherwise. */
int session_lun_of(const uint8_t field[8]);

#endif
