/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The iSCSI login phase (RFC 7143 6.3 and 11.12-11.13) as a state machine
 * without I/O: the connection engine feeds it each Login Request and sends
 * the Login Response it makes, until the login succeeds (then the
 * negotiated parameters are in login.params) or fails (then the connection
 * ends after that response). Also the answers to Text Requests of a session
 * (SendTargets, RFC 7143 appendix C).
 *
 * docs/iscsi.md explains the choices: stages, defaults for tape blocks,
 * CHAP, and what SendTargets advertises behind NAT.
 */
#ifndef VTL_ISCSI_LOGIN_H
#define VTL_ISCSI_LOGIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "vtl/iscsi/chap.h"
#include "vtl/iscsi/pdu.h"
#include "vtl/iscsi/text.h"

#define ISCSI_NAME_MAX 223    /* bytes of an iSCSI name (RFC 7143 4.2.7.1) */
#define ISCSI_ISID_LEN 6
#define ISCSI_PORTAL_MAX 64   /* "[IPv6]:port" fits */

/* Login Request / Response bits and fields (RFC 7143 11.12, 11.13). */
#define LOGIN_TRANSIT 0x80
#define LOGIN_CONTINUE 0x40
#define LOGIN_CSG_SHIFT 2
#define LOGIN_STAGE_MASK 3
#define LOGIN_VERSION_MAX 2   /* byte: Version-max */
#define LOGIN_VERSION_MIN 3   /* byte of a request: Version-min; of a response: Version-active */
#define LOGIN_ISID 8
#define LOGIN_TSIH 14
#define LOGIN_CID 20          /* request */
#define LOGIN_CMDSN 24        /* request */
#define LOGIN_EXPSTATSN 28    /* request */
#define LOGIN_STATSN 24       /* response */
#define LOGIN_EXPCMDSN 28     /* response */
#define LOGIN_MAXCMDSN 32     /* response */
#define LOGIN_STATUS_CLASS 36 /* response */
#define LOGIN_STATUS_DETAIL 37
#define ISCSI_VERSION 0x00    /* the only version RFC 7143 defines */

/* Stages (RFC 7143 11.12.3). */
enum iscsi_stage {
	ISCSI_STAGE_SECURITY = 0,
	ISCSI_STAGE_OPERATIONAL = 1,
	ISCSI_STAGE_FULL_FEATURE = 3,
};

/* Login status: class << 8 | detail (RFC 7143 11.13.5). */
enum iscsi_login_status {
	LOGIN_OK = 0x0000,
	LOGIN_INITIATOR_ERROR = 0x0200,
	LOGIN_AUTH_FAILED = 0x0201,
	LOGIN_FORBIDDEN = 0x0202,         /* authorization failure */
	LOGIN_NOT_FOUND = 0x0203,
	LOGIN_TARGET_REMOVED = 0x0204,
	LOGIN_UNSUPPORTED_VERSION = 0x0205,
	LOGIN_TOO_MANY_CONNECTIONS = 0x0206,
	LOGIN_MISSING_PARAMETER = 0x0207,
	LOGIN_CANT_INCLUDE = 0x0208,
	LOGIN_SESSION_TYPE_UNSUPPORTED = 0x0209,
	LOGIN_NO_SESSION = 0x020A,
	LOGIN_INVALID_DURING_LOGIN = 0x020B,
	LOGIN_TARGET_ERROR = 0x0300,
	LOGIN_SERVICE_UNAVAILABLE = 0x0301,
	LOGIN_OUT_OF_RESOURCES = 0x0302,
};

enum iscsi_session_type { ISCSI_SESSION_NORMAL, ISCSI_SESSION_DISCOVERY };

/* What SendTargets puts in TargetAddress (docs/iscsi.md, "Discovery and NAT"). */
enum iscsi_advertise {
	ISCSI_ADVERTISE_NONE,  /* no TargetAddress: initiators reuse the portal they discovered through */
	ISCSI_ADVERTISE_LOCAL, /* the address and port the discovery connection came in on */
	ISCSI_ADVERTISE_FIXED, /* advertise_address, as configured */
};

/* The CHAP credentials of one initiator (or of all without their own); strings: NULL or "" for none. */
struct iscsi_credentials {
	const char *initiator_name;     /* the InitiatorName they belong to (unused for the shared ones) */
	const char *chap_user;          /* NULL or "": no CHAP, AuthMethod=None */
	const char *chap_secret;        /* the initiator's secret, for its CHAP_R */
	const char *mutual_user;        /* NULL or "": the target cannot authenticate itself (no mutual CHAP) */
	const char *mutual_secret;      /* the target's secret, for the CHAP_R it answers with */
	bool discovery_chap;            /* discovery sessions need CHAP too (else they may use None) */
};

/* The target as the login sees it; strings belong to the caller and must outlive the logins. */
struct iscsi_target_config {
	const char *target_name;        /* IQN (compared case-insensitively: names are lower case) */
	const char *target_alias;       /* NULL or "": none */
	/* Credentials of initiators without their own entry in hosts. */
	const char *chap_user;          /* NULL or "": no CHAP, AuthMethod=None */
	const char *chap_secret;        /* the initiator's secret, for its CHAP_R */
	const char *mutual_user;        /* NULL or "": the target cannot authenticate itself (no mutual CHAP) */
	const char *mutual_secret;      /* the target's secret, for the CHAP_R it answers with */
	bool discovery_chap;            /* discovery sessions need CHAP too (else they may use None) */
	/*
	 * Per-initiator credentials: the InitiatorName a login claims selects
	 * its entry, whose CHAP name and secret alone then let it in (mutual_*
	 * NULL or "": the shared ones above). Every entry is also allowed.
	 */
	const struct iscsi_credentials *hosts;
	size_t n_hosts;
	const char *const *initiators;  /* allowed initiator names besides the hosts'; neither: everyone */
	size_t n_initiators;
	uint16_t tpgt;                  /* TargetPortalGroupTag; 0 means 1 */
	uint32_t cmd_window;            /* commands in flight allowed (MaxCmdSN - ExpCmdSN + 1); 0 means 32 */
	enum iscsi_advertise advertise;
	const char *advertise_address;  /* ISCSI_ADVERTISE_FIXED: "host:port" or "[v6]:port" */
};

/* The values of the login's keys once negotiated (RFC 7143 section 13), with RFC defaults otherwise. */
struct iscsi_params {
	enum iscsi_session_type session_type;
	char initiator_name[ISCSI_NAME_MAX + 1];
	char initiator_alias[ISCSI_VALUE_MAX + 1];
	char target_name[ISCSI_NAME_MAX + 1];  /* "" for a discovery session that named none */
	uint8_t isid[ISCSI_ISID_LEN];
	uint16_t tsih;                    /* the session's, as sent in the final response */
	uint16_t cid;
	uint32_t exp_cmdsn;               /* the next CmdSN expected (the login's, immediate ones do not count) */
	uint32_t statsn;                  /* the StatSN of the next response on this connection */
	bool header_digest, data_digest;  /* CRC32C on headers / data segments */
	uint32_t target_max_recv;         /* MaxRecvDataSegmentLength the target declared: most the initiator may send per PDU */
	uint32_t initiator_max_recv;      /* the initiator's: most the target may send per PDU */
	uint32_t max_burst, first_burst;
	bool initial_r2t, immediate_data;
	uint32_t max_outstanding_r2t;
	bool data_pdu_in_order, data_sequence_in_order;
	uint32_t error_recovery_level;
	uint32_t default_time2wait, default_time2retain;
	uint32_t max_connections;
	bool chap_used, mutual_chap_used;
};

/* What the target offers (RFC 7143 section 13; docs/iscsi.md says why these, for tape). */
#define ISCSI_OFFER_MAX_RECV (256u << 10)        /* MaxRecvDataSegmentLength the target declares */
#define ISCSI_OFFER_MAX_BURST ((16u << 20) - (1u << 10)) /* MaxBurstLength: the largest whole KiB the key allows */
#define ISCSI_OFFER_FIRST_BURST (256u << 10)     /* FirstBurstLength */
#define ISCSI_OFFER_MAX_OUTSTANDING_R2T 1u
#define ISCSI_OFFER_TIME2WAIT 2u
#define ISCSI_OFFER_TIME2RETAIN 20u
#define ISCSI_LEN_MIN 512u                       /* least of the length keys (RFC 7143 13.12-13.14) */
#define ISCSI_LEN_MAX ((1u << 24) - 1)           /* most of the length keys */

enum iscsi_login_result {
	ISCSI_LOGIN_CONTINUE, /* send the response, wait for the next Login Request */
	ISCSI_LOGIN_DONE,     /* send the response: full feature phase from the next PDU, params are final */
	ISCSI_LOGIN_FAILED,   /* send the response (status in login.status), then close the connection */
};

/* One connection's login; fill with iscsi_login_init. Fields are read-only for the caller. */
struct iscsi_login {
	const struct iscsi_target_config *cfg;
	struct iscsi_params params;
	enum iscsi_login_status status;  /* of the last response */
	const char *reason;              /* why it failed, for the log (static text) */
	/* Internal state. */
	enum iscsi_stage stage;           /* the current stage (CSG the next request must carry) */
	bool started;                     /* a first request was seen */
	bool auth_done;                   /* security stage passed (or not needed) */
	struct iscsi_credentials cred;    /* the initiator's, once its InitiatorName is known */
	int chap_step;                    /* 0: not started, 1: method chosen, 2: challenge sent */
	uint8_t chap_id;
	uint8_t chap_challenge[CHAP_CHALLENGE_LEN];
	bool declared_max_recv;           /* MaxRecvDataSegmentLength sent */
	bool sent_tpgt;
	uint64_t negotiated;              /* bit per key table entry already answered */
	uint16_t new_tsih;
	uint8_t rsp_isid[ISCSI_ISID_LEN];
	uint16_t req_tsih;
	uint8_t *pending;                 /* text of a request sent in pieces (C bit) */
	size_t pending_len;
	struct iscsi_text_buf out;        /* the data of the last response */
};

/*
 * Prepares a login on a new connection: tsih is what the session gets if
 * it is new (non-zero, unique among the engine's sessions), statsn the
 * connection's first StatSN.
 */
void iscsi_login_init(struct iscsi_login *l, const struct iscsi_target_config *cfg, uint16_t tsih,
		      uint32_t statsn);

/* Frees what the login holds (the last response's data included). */
void iscsi_login_free(struct iscsi_login *l);

/*
 * Handles one request PDU of the login phase and fills *rsp with the Login
 * Response to send (rsp->data points into l, valid until the next call or
 * iscsi_login_free). Any PDU is accepted: one that is not a Login Request
 * fails the login with "invalid during login".
 */
enum iscsi_login_result iscsi_login_step(struct iscsi_login *l, const struct iscsi_pdu *req,
					 struct iscsi_pdu *rsp);

/*
 * Replaces the response iscsi_login_step just made for req (one that
 * returned ISCSI_LOGIN_DONE) with a refusal of status: the engine found a
 * reason the login itself could not see (too many sessions). Returns
 * ISCSI_LOGIN_FAILED.
 */
enum iscsi_login_result iscsi_login_refuse(struct iscsi_login *l, const struct iscsi_pdu *req, struct iscsi_pdu *rsp,
					   enum iscsi_login_status status, const char *reason);

/* A short English name for a login status. */
const char *iscsi_login_status_str(enum iscsi_login_status s);

/* Formats sa as "a.b.c.d:port" or "[v6]:port" into out: 0, or -1 for another family or no room. */
int iscsi_portal_format(const struct sockaddr *sa, char *out, size_t len);

/*
 * Appends the SendTargets answer (RFC 7143 appendix C) to a request whose
 * value is value: "All" (discovery sessions only), "" (this session's
 * target) or a target name. Lists the target when the initiator of session
 * may see it, with TargetAddress as cfg->advertise says (local_portal: what
 * iscsi_portal_format made of the connection's local address, or NULL when
 * unknown). Returns 0 or ISCSI_TEXT_NO_MEMORY.
 */
int iscsi_sendtargets(const struct iscsi_target_config *cfg, const struct iscsi_params *session,
		      const char *value, const char *local_portal, struct iscsi_text_buf *out);

/*
 * The data of a Text Response to a whole (non-continued) Text Request's
 * data in the full feature phase: SendTargets answered as above, other keys
 * "Reject" (known ones: nothing is renegotiated after login) or
 * "NotUnderstood". Returns 0, ISCSI_TEXT_NO_MEMORY, or another
 * iscsi_text_err for malformed text (answer with a Reject PDU).
 */
int iscsi_text_respond(const struct iscsi_target_config *cfg, const struct iscsi_params *session,
		       const uint8_t *data, size_t len, const char *local_portal, struct iscsi_text_buf *out);

#endif
