/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The login state machine driven with the requests open-iscsi and libiscsi
 * send (key order and values as their login code builds them), checking the
 * response bytes: flags, status, TSIH, sequence numbers and the exact text.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include "tests/unit/testlib.h"
#include "vtl/iscsi/login.h"

#include "common/grow.h"

#define IQN "iqn.2026-01.org.vtl:vtl1"
#define INI "iqn.1994-05.com.redhat:client"
#define TSIH 0x1234
#define STATSN 1000
#define CMDSN 77
#define ITT 0x0A0B0C0D
#define F_SEC_TO_OP 0x81   /* T, CSG 0, NSG 1 */
#define F_SEC_STAY 0x01    /* CSG 0, NSG 1, no T (libiscsi) */
#define F_OP_TO_FFP 0x87   /* T, CSG 1, NSG 3 */
#define F_SEC_TO_FFP 0x83  /* T, CSG 0, NSG 3 */
#define TXT(s) s, sizeof(s) /* a literal with its last NUL, as initiators send it */

static const uint8_t isid[ISCSI_ISID_LEN] = {0x80, 0x12, 0x34, 0x56, 0x00, 0x01};

static struct iscsi_target_config cfg;
static struct iscsi_login login;
static struct iscsi_pdu rsp;
static const char *allowed[] = {INI, "iqn.2000-01.org.other:x"};

static int setup(void **state)
{
	(void)state;
	memset(&cfg, 0, sizeof cfg);
	cfg.target_name = IQN;
	cfg.target_alias = "VTL";
	iscsi_login_init(&login, &cfg, TSIH, STATSN);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	iscsi_login_free(&login);
	return 0;
}

static void chap_cfg(bool mutual)
{
	cfg.chap_user = "alice";
	cfg.chap_secret = "initiator-secret";
	if (mutual) {
		cfg.mutual_user = "vtl-target";
		cfg.mutual_secret = "target-secret-1";
	}
}

/* One Login Request with flags and text, through the state machine. */
static enum iscsi_login_result step_ex(uint8_t opcode, uint8_t flags, uint8_t vmin, uint16_t tsih, const char *text,
				       size_t len)
{
	struct iscsi_pdu req;
	memset(&req, 0, sizeof req);
	req.bhs[0] = BHS_IMMEDIATE | opcode;
	req.bhs[1] = flags;
	req.bhs[LOGIN_VERSION_MIN] = vmin;
	memcpy(req.bhs + LOGIN_ISID, isid, sizeof isid);
	pdu_put(req.bhs + LOGIN_TSIH, tsih, 2);
	pdu_put(req.bhs + BHS_ITT, ITT, 4);
	pdu_put(req.bhs + LOGIN_CID, 1, 2);
	pdu_put(req.bhs + LOGIN_CMDSN, CMDSN, 4);
	req.data = (uint8_t *)text;
	req.data_len = (uint32_t)len;
	pdu_put(req.bhs + BHS_DATA_LEN, req.data_len, 3);
	memset(&rsp, 0xEE, sizeof rsp);
	return iscsi_login_step(&login, &req, &rsp);
}

static enum iscsi_login_result step(uint8_t flags, const char *text, size_t len)
{
	return step_ex(ISCSI_OP_LOGIN_REQ, flags, 0, 0, text, len);
}

/* The header every response must have, with the flags, status and TSIH given. */
static void expect_header(uint8_t flags, uint16_t status, uint16_t tsih, uint32_t statsn)
{
	assert_int_equal(rsp.bhs[0], ISCSI_OP_LOGIN_RSP);
	assert_int_equal(rsp.bhs[1], flags);
	assert_int_equal(rsp.bhs[LOGIN_VERSION_MAX], 0);
	assert_int_equal(rsp.bhs[LOGIN_VERSION_MIN], 0);
	assert_int_equal(rsp.bhs[BHS_AHS_LEN], 0);
	assert_int_equal(pdu_dlen_field(rsp.bhs), rsp.data_len);
	assert_memory_equal(rsp.bhs + LOGIN_ISID, isid, sizeof isid);
	assert_int_equal(pdu_get(rsp.bhs + LOGIN_TSIH, 2), tsih);
	assert_int_equal(pdu_get(rsp.bhs + BHS_ITT, 4), ITT);
	assert_int_equal(pdu_get(rsp.bhs + LOGIN_STATSN, 4), statsn);
	assert_int_equal(pdu_get(rsp.bhs + LOGIN_EXPCMDSN, 4), CMDSN);
	assert_int_equal(pdu_get(rsp.bhs + LOGIN_MAXCMDSN, 4), CMDSN + 31);
	assert_int_equal(pdu_get(rsp.bhs + LOGIN_STATUS_CLASS, 2), status);
	assert_int_equal(login.status, status);
}

static void expect_text(const char *want, size_t len)
{
	if (rsp.data_len != len || memcmp(rsp.data, want, len) != 0) {
		char got[2048];
		size_t n = rsp.data_len < sizeof got - 1 ? rsp.data_len : sizeof got - 1;
		for (size_t i = 0; i < n; i++)
			got[i] = rsp.data[i] ? (char)rsp.data[i] : '|';
		got[n] = 0;
		fail_msg("response text: %s", got);
	}
}

/* A failed login: the status, no transit, no text, TSIH 0. */
static void expect_failure(enum iscsi_login_result r, uint16_t status, uint8_t csg)
{
	assert_int_equal(r, ISCSI_LOGIN_FAILED);
	assert_int_equal(rsp.data_len, 0);
	expect_header((uint8_t)(csg << LOGIN_CSG_SHIFT), status, 0, login.params.statsn - 1);
}

/* libiscsi's operational request (lib/login.c), after InitiatorName, TargetName, SessionType. */
#define LIBISCSI_OP                                                                                            \
	"HeaderDigest=None,CRC32C\0DataDigest=None\0InitialR2T=No\0ImmediateData=Yes\0MaxBurstLength=262144\0" \
	"FirstBurstLength=262144\0DefaultTime2Wait=2\0DefaultTime2Retain=0\0MaxOutstandingR2T=1\0"             \
	"ErrorRecoveryLevel=0\0IFMarker=No\0OFMarker=No\0MaxConnections=1\0"                                   \
	"MaxRecvDataSegmentLength=262144\0DataPDUInOrder=Yes\0DataSequenceInOrder=Yes"
#define LIBISCSI_OP_ANSWER                                                                                     \
	"HeaderDigest=None\0DataDigest=None\0InitialR2T=No\0ImmediateData=Yes\0MaxBurstLength=262144\0"        \
	"FirstBurstLength=262144\0DefaultTime2Wait=2\0DefaultTime2Retain=0\0MaxOutstandingR2T=1\0"             \
	"ErrorRecoveryLevel=0\0IFMarker=No\0OFMarker=No\0MaxConnections=1\0DataPDUInOrder=Yes\0"               \
	"DataSequenceInOrder=Yes"

static void libiscsi_no_auth(void **state)
{
	(void)state;
	/* Without CHAP libiscsi starts in the operational stage and asks for the full feature phase at once. */
	assert_int_equal(step(F_OP_TO_FFP, TXT("InitiatorName=" INI "\0InitiatorAlias=host\0TargetName=" IQN
						"\0SessionType=Normal\0" LIBISCSI_OP)),
			 ISCSI_LOGIN_DONE);
	expect_header(F_OP_TO_FFP, LOGIN_OK, TSIH, STATSN);
	expect_text(TXT(LIBISCSI_OP_ANSWER "\0TargetAlias=VTL\0TargetPortalGroupTag=1\0MaxRecvDataSegmentLength=262144"));
	const struct iscsi_params *p = &login.params;
	assert_int_equal(p->session_type, ISCSI_SESSION_NORMAL);
	assert_string_equal(p->initiator_name, INI);
	assert_string_equal(p->initiator_alias, "host");
	assert_string_equal(p->target_name, IQN);
	assert_memory_equal(p->isid, isid, sizeof isid);
	assert_int_equal(p->tsih, TSIH);
	assert_int_equal(p->cid, 1);
	assert_int_equal(p->exp_cmdsn, CMDSN);
	assert_int_equal(p->statsn, STATSN + 1);
	assert_false(p->header_digest);
	assert_false(p->data_digest);
	assert_int_equal(p->target_max_recv, 262144);
	assert_int_equal(p->initiator_max_recv, 262144);
	assert_int_equal(p->max_burst, 262144);
	assert_int_equal(p->first_burst, 262144);
	assert_false(p->initial_r2t);
	assert_true(p->immediate_data);
	assert_int_equal(p->max_outstanding_r2t, 1);
	assert_true(p->data_pdu_in_order);
	assert_true(p->data_sequence_in_order);
	assert_int_equal(p->error_recovery_level, 0);
	assert_int_equal(p->default_time2wait, 2);
	assert_int_equal(p->default_time2retain, 0);
	assert_int_equal(p->max_connections, 1);
	assert_false(p->chap_used);
}

static void open_iscsi_no_auth(void **state)
{
	(void)state;
	/* open-iscsi: a security stage with AuthMethod=None, then the operational keys (usr/login.c). */
	assert_int_equal(step(F_SEC_TO_OP, TXT("InitiatorName=" INI "\0InitiatorAlias=guest\0TargetName=" IQN
						"\0SessionType=Normal\0AuthMethod=None")),
			 ISCSI_LOGIN_CONTINUE);
	expect_header(F_SEC_TO_OP, LOGIN_OK, 0, STATSN);
	expect_text(TXT("AuthMethod=None\0TargetAlias=VTL\0TargetPortalGroupTag=1"));
	assert_int_equal(step(F_OP_TO_FFP, TXT("HeaderDigest=CRC32C,None\0DataDigest=CRC32C,None\0DefaultTime2Wait=2\0"
						"DefaultTime2Retain=0\0IFMarker=No\0OFMarker=No\0ErrorRecoveryLevel=0\0"
						"InitialR2T=No\0ImmediateData=Yes\0MaxBurstLength=16776192\0"
						"FirstBurstLength=262144\0MaxConnections=1\0DataPDUInOrder=Yes\0"
						"DataSequenceInOrder=Yes\0MaxOutstandingR2T=1\0"
						"MaxRecvDataSegmentLength=131072")),
			 ISCSI_LOGIN_DONE);
	expect_header(F_OP_TO_FFP, LOGIN_OK, TSIH, STATSN + 1);
	expect_text(TXT("HeaderDigest=CRC32C\0DataDigest=CRC32C\0DefaultTime2Wait=2\0DefaultTime2Retain=0\0"
			"IFMarker=No\0OFMarker=No\0ErrorRecoveryLevel=0\0InitialR2T=No\0ImmediateData=Yes\0"
			"MaxBurstLength=16776192\0FirstBurstLength=262144\0MaxConnections=1\0DataPDUInOrder=Yes\0"
			"DataSequenceInOrder=Yes\0MaxOutstandingR2T=1\0MaxRecvDataSegmentLength=262144"));
	assert_true(login.params.header_digest);
	assert_true(login.params.data_digest);
	assert_int_equal(login.params.initiator_max_recv, 131072);
	assert_int_equal(login.params.max_burst, ISCSI_OFFER_MAX_BURST);
}

static void open_iscsi_discovery(void **state)
{
	(void)state;
	chap_cfg(false); /* CHAP for normal sessions does not bind discovery unless asked */
	assert_int_equal(step(F_SEC_TO_OP, TXT("InitiatorName=" INI "\0SessionType=Discovery\0AuthMethod=None")),
			 ISCSI_LOGIN_CONTINUE);
	expect_header(F_SEC_TO_OP, LOGIN_OK, 0, STATSN);
	expect_text(TXT("AuthMethod=None"));
	assert_int_equal(step(F_OP_TO_FFP, TXT("HeaderDigest=None\0DataDigest=None\0DefaultTime2Wait=2\0"
						"DefaultTime2Retain=0\0IFMarker=No\0OFMarker=No\0"
						"ErrorRecoveryLevel=0\0MaxBurstLength=262144\0MaxRecvDataSegmentLength=32768")),
			 ISCSI_LOGIN_DONE);
	expect_header(F_OP_TO_FFP, LOGIN_OK, TSIH, STATSN + 1);
	expect_text(TXT("HeaderDigest=None\0DataDigest=None\0DefaultTime2Wait=2\0DefaultTime2Retain=0\0IFMarker=No\0"
			"OFMarker=No\0ErrorRecoveryLevel=0\0MaxBurstLength=Irrelevant\0MaxRecvDataSegmentLength=262144"));
	assert_int_equal(login.params.session_type, ISCSI_SESSION_DISCOVERY);
	assert_int_equal(login.params.initiator_max_recv, 32768);

	/* discovery_chap: now None is refused for discovery too. */
	iscsi_login_free(&login);
	cfg.discovery_chap = true;
	iscsi_login_init(&login, &cfg, TSIH, STATSN);
	expect_failure(step(F_SEC_TO_OP, TXT("InitiatorName=" INI "\0SessionType=Discovery\0AuthMethod=None")),
		       LOGIN_AUTH_FAILED, ISCSI_STAGE_SECURITY);
}

/* The initiator's challenge for mutual CHAP: id 7 and sixteen 0xA5 bytes. */
#define MUTUAL_CHALLENGE "CHAP_I=7\0CHAP_C=0xa5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5"

/* Reads CHAP_I and CHAP_C of the target's challenge from the response. */
static void read_challenge(uint8_t *id, uint8_t *chal, size_t *clen)
{
	struct iscsi_text t;
	assert_int_equal(iscsi_text_parse(rsp.data, rsp.data_len, &t), 0);
	assert_int_equal(t.n, 3);
	assert_string_equal(t.kv[0].key, "CHAP_A");
	assert_string_equal(t.kv[0].value, "5");
	assert_string_equal(t.kv[1].key, "CHAP_I");
	uint64_t v;
	assert_int_equal(iscsi_parse_number(t.kv[1].value, 0, 255, &v), 0);
	*id = (uint8_t)v;
	assert_string_equal(t.kv[2].key, "CHAP_C");
	assert_int_equal(strlen(t.kv[2].value), 2 + 2 * CHAP_CHALLENGE_LEN);
	assert_int_equal(chap_decode(t.kv[2].value, chal, CHAP_BINARY_MAX, clen), 0);
	assert_int_equal(*clen, CHAP_CHALLENGE_LEN);
	iscsi_text_free(&t);
}

/*
 * libiscsi's CHAP as initiator ini, in a normal or a discovery session: offer
 * with T, CHAP_A=5 without T, then the response with T. Returns the last
 * step's result, or the first one's when the name is refused before CHAP.
 */
static enum iscsi_login_result chap_login_as(const char *ini, bool discovery, const char *secret, const char *user,
					     const char *mutual, size_t mlen)
{
	char first[512];
	int fl = discovery ? snprintf(first, sizeof first, "InitiatorName=%s%cSessionType=Discovery%cAuthMethod=CHAP,None",
				      ini, 0, 0)
			   : snprintf(first, sizeof first, "InitiatorName=%s%cTargetName=" IQN "%cSessionType=Normal%c"
				      "AuthMethod=CHAP,None", ini, 0, 0, 0);
	enum iscsi_login_result res = step(F_SEC_TO_OP, first, (size_t)fl + 1);
	if (res == ISCSI_LOGIN_FAILED)
		return res;
	assert_int_equal(res, ISCSI_LOGIN_CONTINUE);
	expect_header(0x00, LOGIN_OK, 0, STATSN); /* no transit while CHAP is under way */
	if (discovery)
		expect_text(TXT("AuthMethod=CHAP"));
	else
		expect_text(TXT("AuthMethod=CHAP\0TargetAlias=VTL\0TargetPortalGroupTag=1"));
	assert_int_equal(step(F_SEC_STAY, TXT("CHAP_A=5")), ISCSI_LOGIN_CONTINUE);
	expect_header(0x00, LOGIN_OK, 0, STATSN + 1);
	uint8_t id, chal[CHAP_BINARY_MAX], r[CHAP_RESPONSE_LEN];
	size_t clen;
	read_challenge(&id, chal, &clen);
	chap_response(id, secret, strlen(secret), chal, clen, r);
	char text[512], hex[CHAP_HEX_LEN(CHAP_RESPONSE_LEN)];
	chap_encode_hex(r, sizeof r, hex);
	for (char *p = hex + 2; *p; p++) /* libiscsi sends upper case */
		if (*p >= 'a' && *p <= 'f')
			*p = (char)(*p - 'a' + 'A');
	int n = snprintf(text, sizeof text, "CHAP_N=%s%cCHAP_R=%s%c", user, 0, hex, 0);
	memcpy(text + n, mutual, mlen);
	return step(F_SEC_TO_OP, text, (size_t)n + mlen);
}

static enum iscsi_login_result chap_login(const char *secret, const char *user, const char *mutual, size_t mlen)
{
	return chap_login_as(INI, false, secret, user, mutual, mlen);
}

/* A new login on the same cfg. */
static void relogin(void)
{
	iscsi_login_free(&login);
	iscsi_login_init(&login, &cfg, TSIH, STATSN);
}

#define HOST2 "iqn.1993-08.org.debian:01:host2"
#define PLAIN "iqn.2026-01.com.example:plain"
static const struct iscsi_credentials hosts[] = {
	{.initiator_name = INI, .chap_user = "host1", .chap_secret = "host1 secret 0123", .discovery_chap = true,
	 .mutual_user = "vtl-for-host1", .mutual_secret = "host1-target-secret"},
	{.initiator_name = HOST2, .chap_user = "host2", .chap_secret = "host2-secret-456"},
};
static const char *plain_only[] = {PLAIN};

/* hosts as per-initiator credentials, with PLAIN as an initiator line when plain; a new login. */
static void hosts_cfg(bool plain)
{
	cfg.hosts = hosts;
	cfg.n_hosts = 2;
	cfg.initiators = plain_only;
	cfg.n_initiators = plain ? 1 : 0;
	relogin();
}

/* Each host its own credentials: the name claimed picks them, and only they let that name in (02/01 otherwise). */
static void chap_per_initiator(void **state)
{
	(void)state;
	chap_cfg(false); /* the shared credentials, for initiators without their own */
	hosts_cfg(true);
	assert_int_equal(chap_login_as(INI, false, "host1 secret 0123", "host1", "", 0), ISCSI_LOGIN_CONTINUE);
	expect_header(F_SEC_TO_OP, LOGIN_OK, 0, STATSN + 2);
	assert_true(login.params.chap_used);
	relogin();
	assert_int_equal(chap_login_as(HOST2, false, "host2-secret-456", "host2", "", 0), ISCSI_LOGIN_CONTINUE);
	expect_header(F_SEC_TO_OP, LOGIN_OK, 0, STATSN + 2);

	/* host2 claiming host1's name with its own credentials, or host1's CHAP name with host2's secret. */
	relogin();
	expect_failure(chap_login_as(INI, false, "host2-secret-456", "host2", "", 0), LOGIN_AUTH_FAILED,
		       ISCSI_STAGE_SECURITY);
	assert_string_equal(login.reason, "wrong CHAP name or response");
	relogin();
	expect_failure(chap_login_as(INI, false, "host2-secret-456", "host1", "", 0), LOGIN_AUTH_FAILED,
		       ISCSI_STAGE_SECURITY);
	/* The shared credentials do not open a name that has its own. */
	relogin();
	expect_failure(chap_login_as(INI, false, "initiator-secret", "alice", "", 0), LOGIN_AUTH_FAILED,
		       ISCSI_STAGE_SECURITY);
	/* A listed initiator without its own uses the shared ones, and no host's. */
	relogin();
	assert_int_equal(chap_login_as(PLAIN, false, "initiator-secret", "alice", "", 0), ISCSI_LOGIN_CONTINUE);
	expect_header(F_SEC_TO_OP, LOGIN_OK, 0, STATSN + 2);
	relogin();
	expect_failure(chap_login_as(PLAIN, false, "host1 secret 0123", "host1", "", 0), LOGIN_AUTH_FAILED,
		       ISCSI_STAGE_SECURITY);
	/* Sections are the allow list too: a name in neither is not let in, whatever it knows. */
	relogin();
	expect_failure(chap_login_as("iqn.2026-01.com.example:stranger", false, "initiator-secret", "alice", "", 0),
		       LOGIN_FORBIDDEN, ISCSI_STAGE_SECURITY);
}

/* Without shared credentials: a host with its own must use CHAP, a listed one without logs in with None. */
static void chap_per_initiator_only(void **state)
{
	(void)state;
	hosts_cfg(true);
	expect_failure(step(F_SEC_TO_OP, TXT("InitiatorName=" INI "\0TargetName=" IQN "\0AuthMethod=None")),
		       LOGIN_AUTH_FAILED, ISCSI_STAGE_SECURITY);
	relogin();
	assert_int_equal(step(F_SEC_TO_OP, TXT("InitiatorName=" PLAIN "\0TargetName=" IQN "\0AuthMethod=None")),
			 ISCSI_LOGIN_CONTINUE);
	expect_header(F_SEC_TO_OP, LOGIN_OK, 0, STATSN);
	/* With only hosts and no initiator lines, the hosts are the whole allow list. */
	hosts_cfg(false);
	expect_failure(step(F_SEC_TO_OP, TXT("InitiatorName=" PLAIN "\0TargetName=" IQN "\0AuthMethod=None")),
		       LOGIN_FORBIDDEN, ISCSI_STAGE_SECURITY);
}

/* Discovery with a host's own credentials, as its discovery_chap says. */
static void chap_per_initiator_discovery(void **state)
{
	(void)state;
	hosts_cfg(false);
	/* host1: discovery_chap = yes, so None is refused and its own secret works. */
	expect_failure(step(F_SEC_TO_OP, TXT("InitiatorName=" INI "\0SessionType=Discovery\0AuthMethod=None")),
		       LOGIN_AUTH_FAILED, ISCSI_STAGE_SECURITY);
	relogin();
	assert_int_equal(chap_login_as(INI, true, "host1 secret 0123", "host1", "", 0), ISCSI_LOGIN_CONTINUE);
	expect_header(F_SEC_TO_OP, LOGIN_OK, 0, STATSN + 2);
	assert_true(login.params.chap_used);
	relogin();
	expect_failure(chap_login_as(INI, true, "host2-secret-456", "host2", "", 0), LOGIN_AUTH_FAILED,
		       ISCSI_STAGE_SECURITY);
	/* host2: discovery_chap = no, so None is fine, and so is its own CHAP. */
	relogin();
	assert_int_equal(step(F_SEC_TO_OP, TXT("InitiatorName=" HOST2 "\0SessionType=Discovery\0AuthMethod=None")),
			 ISCSI_LOGIN_CONTINUE);
	expect_text(TXT("AuthMethod=None"));
	relogin();
	assert_int_equal(chap_login_as(HOST2, true, "host2-secret-456", "host2", "", 0), ISCSI_LOGIN_CONTINUE);
	expect_header(F_SEC_TO_OP, LOGIN_OK, 0, STATSN + 2);
}

/* Mutual CHAP: a host's own target credentials, else the shared ones. */
static void chap_per_initiator_mutual(void **state)
{
	(void)state;
	chap_cfg(true);
	hosts_cfg(false);
	assert_int_equal(chap_login_as(INI, false, "host1 secret 0123", "host1", TXT(MUTUAL_CHALLENGE)),
			 ISCSI_LOGIN_CONTINUE);
	/* MD5(7 || "host1-target-secret" || 16 x A5), computed with Python's hashlib. */
	expect_text(TXT("CHAP_N=vtl-for-host1\0CHAP_R=0x8bd459c98689b20f950d66984f9481f7"));
	relogin();
	assert_int_equal(chap_login_as(HOST2, false, "host2-secret-456", "host2", TXT(MUTUAL_CHALLENGE)),
			 ISCSI_LOGIN_CONTINUE);
	expect_text(TXT("CHAP_N=vtl-target\0CHAP_R=0xdfb80b931d7cfd7400334fbaaf38d62a"));
}

static void chap_one_way(void **state)
{
	(void)state;
	chap_cfg(false);
	assert_int_equal(chap_login("initiator-secret", "alice", "", 0), ISCSI_LOGIN_CONTINUE);
	expect_header(F_SEC_TO_OP, LOGIN_OK, 0, STATSN + 2);
	assert_int_equal(rsp.data_len, 0);
	assert_true(login.params.chap_used);
	assert_false(login.params.mutual_chap_used);
	/* libiscsi repeats the session keys in the operational stage: the same values are fine. */
	assert_int_equal(step(F_OP_TO_FFP, TXT("InitiatorName=" INI "\0TargetName=" IQN "\0SessionType=Normal\0"
						LIBISCSI_OP)),
			 ISCSI_LOGIN_DONE);
	expect_header(F_OP_TO_FFP, LOGIN_OK, TSIH, STATSN + 3);
	expect_text(TXT(LIBISCSI_OP_ANSWER "\0MaxRecvDataSegmentLength=262144"));
}

static void chap_wrong_secret_or_name(void **state)
{
	(void)state;
	chap_cfg(false);
	expect_failure(chap_login("initiator-secreT", "alice", "", 0), LOGIN_AUTH_FAILED, ISCSI_STAGE_SECURITY);
	iscsi_login_free(&login);
	iscsi_login_init(&login, &cfg, TSIH, STATSN);
	expect_failure(chap_login("initiator-secret", "bob", "", 0), LOGIN_AUTH_FAILED, ISCSI_STAGE_SECURITY);
}


static void chap_mutual(void **state)
{
	(void)state;
	chap_cfg(true);
	assert_int_equal(chap_login("initiator-secret", "alice", TXT(MUTUAL_CHALLENGE)), ISCSI_LOGIN_CONTINUE);
	expect_header(F_SEC_TO_OP, LOGIN_OK, 0, STATSN + 2);
	/* MD5(7 || "target-secret-1" || 16 x A5), computed with Python's hashlib. */
	expect_text(TXT("CHAP_N=vtl-target\0CHAP_R=0xdfb80b931d7cfd7400334fbaaf38d62a"));
	assert_true(login.params.mutual_chap_used);
}

static void chap_mutual_refused(void **state)
{
	(void)state;
	chap_cfg(false); /* no target secret: the target cannot prove itself */
	expect_failure(chap_login("initiator-secret", "alice", TXT(MUTUAL_CHALLENGE)), LOGIN_AUTH_FAILED,
		       ISCSI_STAGE_SECURITY);
}

static void chap_refuses_none_and_skipping(void **state)
{
	(void)state;
	chap_cfg(false);
	expect_failure(step(F_SEC_TO_OP, TXT("InitiatorName=" INI "\0TargetName=" IQN "\0AuthMethod=None")),
		       LOGIN_AUTH_FAILED, ISCSI_STAGE_SECURITY);
	iscsi_login_free(&login);
	iscsi_login_init(&login, &cfg, TSIH, STATSN);
	expect_failure(step(F_OP_TO_FFP, TXT("InitiatorName=" INI "\0TargetName=" IQN)), LOGIN_AUTH_FAILED,
		       ISCSI_STAGE_OPERATIONAL);
	iscsi_login_free(&login);
	iscsi_login_init(&login, &cfg, TSIH, STATSN);
	expect_failure(step(F_SEC_TO_OP, TXT("InitiatorName=" INI "\0TargetName=" IQN)), LOGIN_AUTH_FAILED,
		       ISCSI_STAGE_SECURITY);
	/* Only SHA algorithms offered. */
	iscsi_login_free(&login);
	iscsi_login_init(&login, &cfg, TSIH, STATSN);
	assert_int_equal(step(F_SEC_STAY, TXT("InitiatorName=" INI "\0TargetName=" IQN "\0AuthMethod=CHAP")),
			 ISCSI_LOGIN_CONTINUE);
	expect_failure(step(F_SEC_STAY, TXT("CHAP_A=7,6")), LOGIN_AUTH_FAILED, ISCSI_STAGE_SECURITY);
}

static void chap_reflection_refused(void **state)
{
	(void)state;
	chap_cfg(true);
	assert_int_equal(step(F_SEC_STAY, TXT("InitiatorName=" INI "\0TargetName=" IQN "\0AuthMethod=CHAP")),
			 ISCSI_LOGIN_CONTINUE);
	assert_int_equal(step(F_SEC_STAY, TXT("CHAP_A=5")), ISCSI_LOGIN_CONTINUE);
	uint8_t id, chal[CHAP_BINARY_MAX], r[CHAP_RESPONSE_LEN];
	size_t clen;
	read_challenge(&id, chal, &clen);
	chap_response(id, "initiator-secret", 16, chal, clen, r);
	char rh[CHAP_HEX_LEN(CHAP_RESPONSE_LEN)], ch[CHAP_HEX_LEN(CHAP_CHALLENGE_LEN)], text[256];
	chap_encode_hex(r, sizeof r, rh);
	chap_encode_hex(chal, clen, ch);
	int n = snprintf(text, sizeof text, "CHAP_N=alice%cCHAP_R=%s%cCHAP_I=%u%cCHAP_C=%s", 0, rh, 0, id, 0, ch);
	expect_failure(step(F_SEC_TO_OP, text, (size_t)n + 1), LOGIN_AUTH_FAILED, ISCSI_STAGE_SECURITY);
}

/* One failing first request: its text, flags and the status it must get. */
struct bad_case {
	const char *name;
	uint8_t opcode, flags, vmin;
	uint16_t tsih;
	const char *text;
	size_t len;
	uint16_t status;
};

static void status_table(void **state)
{
	(void)state;
	static const char *const restrict_to[] = {"iqn.2000-01.org.other:x"};
	static const struct bad_case cases[] = {
		{"unknown target", ISCSI_OP_LOGIN_REQ, F_OP_TO_FFP, 0, 0,
		 TXT("InitiatorName=" INI "\0TargetName=iqn.2026-01.org.vtl:nope"), LOGIN_NOT_FOUND},
		{"no initiator name", ISCSI_OP_LOGIN_REQ, F_OP_TO_FFP, 0, 0, TXT("TargetName=" IQN),
		 LOGIN_MISSING_PARAMETER},
		{"no target name", ISCSI_OP_LOGIN_REQ, F_OP_TO_FFP, 0, 0, TXT("InitiatorName=" INI),
		 LOGIN_MISSING_PARAMETER},
		{"no '='", ISCSI_OP_LOGIN_REQ, F_OP_TO_FFP, 0, 0, TXT("InitiatorName=" INI "\0TargetName"),
		 LOGIN_INITIATOR_ERROR},
		{"bad UTF-8", ISCSI_OP_LOGIN_REQ, F_OP_TO_FFP, 0, 0, TXT("InitiatorName=\xff\0TargetName=" IQN),
		 LOGIN_INITIATOR_ERROR},
		{"version", ISCSI_OP_LOGIN_REQ, F_OP_TO_FFP, 1, 0, TXT("InitiatorName=" INI "\0TargetName=" IQN),
		 LOGIN_UNSUPPORTED_VERSION},
		{"T and C", ISCSI_OP_LOGIN_REQ, F_OP_TO_FFP | LOGIN_CONTINUE, 0, 0, TXT("InitiatorName=" INI),
		 LOGIN_INITIATOR_ERROR},
		{"NSG backwards", ISCSI_OP_LOGIN_REQ, 0x84, 0, 0, TXT("InitiatorName=" INI "\0TargetName=" IQN),
		 LOGIN_INITIATOR_ERROR},
		{"NSG reserved", ISCSI_OP_LOGIN_REQ, 0x86, 0, 0, TXT("InitiatorName=" INI "\0TargetName=" IQN),
		 LOGIN_INITIATOR_ERROR},
		{"CSG full feature", ISCSI_OP_LOGIN_REQ, 0x0C, 0, 0, TXT("InitiatorName=" INI), LOGIN_INITIATOR_ERROR},
		{"not a login", ISCSI_OP_SCSI_CMD, 0x80, 0, 0, "", 0, LOGIN_INVALID_DURING_LOGIN},
		{"session type", ISCSI_OP_LOGIN_REQ, F_OP_TO_FFP, 0, 0,
		 TXT("InitiatorName=" INI "\0SessionType=Boot"), LOGIN_SESSION_TYPE_UNSUPPORTED},
		{"TSIH given", ISCSI_OP_LOGIN_REQ, F_OP_TO_FFP, 0, 5, TXT("InitiatorName=" INI "\0TargetName=" IQN),
		 LOGIN_NO_SESSION},
		{"target key", ISCSI_OP_LOGIN_REQ, F_OP_TO_FFP, 0, 0,
		 TXT("InitiatorName=" INI "\0TargetName=" IQN "\0TargetPortalGroupTag=1"), LOGIN_INITIATOR_ERROR},
		{"CHAP in operational", ISCSI_OP_LOGIN_REQ, F_OP_TO_FFP, 0, 0,
		 TXT("InitiatorName=" INI "\0TargetName=" IQN "\0AuthMethod=None"), LOGIN_INITIATOR_ERROR},
		{"CHAP_A unasked", ISCSI_OP_LOGIN_REQ, F_SEC_STAY, 0, 0,
		 TXT("InitiatorName=" INI "\0TargetName=" IQN "\0CHAP_A=5"), LOGIN_INITIATOR_ERROR},
		{"bad MaxRecvDataSegmentLength", ISCSI_OP_LOGIN_REQ, F_OP_TO_FFP, 0, 0,
		 TXT("InitiatorName=" INI "\0TargetName=" IQN "\0MaxRecvDataSegmentLength=100"), LOGIN_INITIATOR_ERROR},
	};
	for (size_t i = 0; i < VTL_ARRAY_SIZE(cases); i++) {
		const struct bad_case *c = &cases[i];
		iscsi_login_free(&login);
		iscsi_login_init(&login, &cfg, TSIH, STATSN);
		enum iscsi_login_result r = step_ex(c->opcode, c->flags, c->vmin, c->tsih, c->text, c->len);
		if (r != ISCSI_LOGIN_FAILED || pdu_get(rsp.bhs + LOGIN_STATUS_CLASS, 2) != c->status)
			fail_msg("%s: result %d status %04x, expected %04x", c->name, r,
				 (unsigned)pdu_get(rsp.bhs + LOGIN_STATUS_CLASS, 2), c->status);
		unsigned csg = c->flags >> LOGIN_CSG_SHIFT & LOGIN_STAGE_MASK;
		assert_int_equal(rsp.bhs[1], (csg <= ISCSI_STAGE_OPERATIONAL ? csg : 0) << LOGIN_CSG_SHIFT);
		assert_int_equal(rsp.data_len, 0);
		assert_int_equal(pdu_get(rsp.bhs + LOGIN_TSIH, 2), 0);
	}
	/* Not in the allowed list: authorization failure. */
	iscsi_login_free(&login);
	cfg.initiators = restrict_to;
	cfg.n_initiators = 1;
	iscsi_login_init(&login, &cfg, TSIH, STATSN);
	expect_failure(step(F_OP_TO_FFP, TXT("InitiatorName=" INI "\0TargetName=" IQN)), LOGIN_FORBIDDEN,
		       ISCSI_STAGE_OPERATIONAL);
	/* In it (any case): fine. */
	iscsi_login_free(&login);
	cfg.initiators = allowed;
	cfg.n_initiators = 2;
	iscsi_login_init(&login, &cfg, TSIH, STATSN);
	assert_int_equal(step(F_OP_TO_FFP, TXT("InitiatorName=IQN.1994-05.com.redhat:client\0TargetName=" IQN)),
			 ISCSI_LOGIN_DONE);
}

static void sequence_errors(void **state)
{
	(void)state;
	/* The next request must be in the stage the target moved to. */
	assert_int_equal(step(F_SEC_TO_OP, TXT("InitiatorName=" INI "\0TargetName=" IQN "\0AuthMethod=None")),
			 ISCSI_LOGIN_CONTINUE);
	expect_failure(step(F_SEC_TO_OP, TXT("HeaderDigest=None")), LOGIN_INITIATOR_ERROR, ISCSI_STAGE_OPERATIONAL);
	/* A key negotiated twice. */
	iscsi_login_free(&login);
	iscsi_login_init(&login, &cfg, TSIH, STATSN);
	assert_int_equal(step(0x05, TXT("InitiatorName=" INI "\0TargetName=" IQN "\0HeaderDigest=None")),
			 ISCSI_LOGIN_CONTINUE);
	expect_header(0x04, LOGIN_OK, 0, STATSN);
	expect_failure(step(F_OP_TO_FFP, TXT("HeaderDigest=None")), LOGIN_INITIATOR_ERROR, ISCSI_STAGE_OPERATIONAL);
	/* A session key changed. */
	iscsi_login_free(&login);
	iscsi_login_init(&login, &cfg, TSIH, STATSN);
	assert_int_equal(step(0x05, TXT("InitiatorName=" INI "\0TargetName=" IQN)), ISCSI_LOGIN_CONTINUE);
	expect_failure(step(F_OP_TO_FFP, TXT("InitiatorName=iqn.2000-01.org.other:x")), LOGIN_INITIATOR_ERROR,
		       ISCSI_STAGE_OPERATIONAL);
}

static void odd_keys_and_values(void **state)
{
	(void)state;
	assert_int_equal(step(F_SEC_TO_FFP, TXT("InitiatorName=" INI "\0TargetName=" IQN "\0X-com.example.Foo=1\0"
						 "MaxBurstLength=100\0ImmediateData=Maybe\0HeaderDigest=MD5\0"
						 "IFMarkInt=2048~8192\0TaskReporting=RFC3720\0SendTargets=All")),
			 ISCSI_LOGIN_DONE);
	expect_header(F_SEC_TO_FFP, LOGIN_OK, TSIH, STATSN);
	expect_text(TXT("X-com.example.Foo=NotUnderstood\0MaxBurstLength=Reject\0ImmediateData=Reject\0"
			"HeaderDigest=Reject\0IFMarkInt=Irrelevant\0TaskReporting=RFC3720\0SendTargets=Reject\0"
			"TargetAlias=VTL\0TargetPortalGroupTag=1\0MaxRecvDataSegmentLength=262144"));
	assert_int_equal(login.params.max_burst, 262144); /* RFC defaults where refused */
	assert_true(login.params.immediate_data);
	assert_false(login.params.header_digest);
}

static void continued_text(void **state)
{
	(void)state;
	/* The text split in two PDUs with the C bit, cut in the middle of a value. */
	static const char all[] = "InitiatorName=" INI "\0TargetName=" IQN "\0MaxBurstLength=65536";
	assert_int_equal(step(0x44 | 0x03, all, 20), ISCSI_LOGIN_CONTINUE);
	expect_header(0x04, LOGIN_OK, 0, STATSN);
	assert_int_equal(rsp.data_len, 0);
	assert_int_equal(step(F_OP_TO_FFP, all + 20, sizeof all - 20), ISCSI_LOGIN_DONE);
	expect_text(TXT("MaxBurstLength=65536\0TargetAlias=VTL\0TargetPortalGroupTag=1\0MaxRecvDataSegmentLength=262144"));
	assert_int_equal(login.params.max_burst, 65536);
	assert_int_equal(login.params.first_burst, 65536); /* never above MaxBurstLength */
}

static struct iscsi_params session(enum iscsi_session_type type, const char *ini)
{
	struct iscsi_params p;
	memset(&p, 0, sizeof p);
	p.session_type = type;
	snprintf(p.initiator_name, sizeof p.initiator_name, "%s", ini);
	return p;
}

static void expect_buf(struct iscsi_text_buf *b, const char *want, size_t len)
{
	assert_int_equal(b->len, len);
	if (len)
		assert_memory_equal(b->data, want, len);
	iscsi_text_buf_free(b);
}

static void sendtargets(void **state)
{
	(void)state;
	struct iscsi_text_buf b = {0};
	struct iscsi_params disc = session(ISCSI_SESSION_DISCOVERY, INI);
	struct iscsi_params norm = session(ISCSI_SESSION_NORMAL, INI);
	/* Default: no address, the initiator reuses its discovery portal (what makes NAT work). */
	assert_int_equal(iscsi_sendtargets(&cfg, &disc, "All", "127.0.0.1:3260", &b), 0);
	expect_buf(&b, TXT("TargetName=" IQN));
	cfg.advertise = ISCSI_ADVERTISE_LOCAL;
	assert_int_equal(iscsi_sendtargets(&cfg, &disc, "All", "192.0.2.7:3260", &b), 0);
	expect_buf(&b, TXT("TargetName=" IQN "\0TargetAddress=192.0.2.7:3260,1"));
	cfg.advertise = ISCSI_ADVERTISE_FIXED;
	cfg.advertise_address = "[2001:db8::1]:3261";
	cfg.tpgt = 3;
	assert_int_equal(iscsi_sendtargets(&cfg, &disc, "All", "192.0.2.7:3260", &b), 0);
	expect_buf(&b, TXT("TargetName=" IQN "\0TargetAddress=[2001:db8::1]:3261,3"));
	/* A normal session: its own target with "", "All" refused, other names give nothing. */
	assert_int_equal(iscsi_sendtargets(&cfg, &norm, "", NULL, &b), 0);
	expect_buf(&b, TXT("TargetName=" IQN "\0TargetAddress=[2001:db8::1]:3261,3"));
	assert_int_equal(iscsi_sendtargets(&cfg, &norm, "All", NULL, &b), 0);
	expect_buf(&b, TXT("SendTargets=Reject"));
	assert_int_equal(iscsi_sendtargets(&cfg, &disc, "iqn.2026-01.org.vtl:other", NULL, &b), 0);
	expect_buf(&b, "", 0);
	/* An initiator that may not log in sees no target. */
	static const char *const only[] = {"iqn.2000-01.org.other:x"};
	cfg.initiators = only;
	cfg.n_initiators = 1;
	assert_int_equal(iscsi_sendtargets(&cfg, &disc, "All", NULL, &b), 0);
	expect_buf(&b, "", 0);
	/* The whole Text Request answer. */
	cfg.n_initiators = 0;
	cfg.advertise = ISCSI_ADVERTISE_NONE;
	static const char req[] = "SendTargets=All\0MaxRecvDataSegmentLength=65536\0X-foo=bar";
	assert_int_equal(iscsi_text_respond(&cfg, &disc, (const uint8_t *)req, sizeof req, NULL, &b), 0);
	expect_buf(&b, TXT("TargetName=" IQN "\0MaxRecvDataSegmentLength=Reject\0X-foo=NotUnderstood"));
	assert_int_equal(iscsi_text_respond(&cfg, &disc, (const uint8_t *)"Oops", 4, NULL, &b), ISCSI_TEXT_NO_EQUALS);
	iscsi_text_buf_free(&b);
}

static void portal_format(void **state)
{
	(void)state;
	struct sockaddr_in a4 = {.sin_family = AF_INET, .sin_port = htons(3260)};
	inet_pton(AF_INET, "10.0.2.2", &a4.sin_addr);
	char out[ISCSI_PORTAL_MAX];
	assert_int_equal(iscsi_portal_format((struct sockaddr *)&a4, out, sizeof out), 0);
	assert_string_equal(out, "10.0.2.2:3260");
	struct sockaddr_in6 a6 = {.sin6_family = AF_INET6, .sin6_port = htons(3261)};
	inet_pton(AF_INET6, "fe80::1", &a6.sin6_addr);
	assert_int_equal(iscsi_portal_format((struct sockaddr *)&a6, out, sizeof out), 0);
	assert_string_equal(out, "[fe80::1]:3261");
	assert_int_equal(iscsi_portal_format((struct sockaddr *)&a4, out, 5), -1);
	struct sockaddr un = {.sa_family = AF_UNIX};
	assert_int_equal(iscsi_portal_format(&un, out, sizeof out), -1);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(libiscsi_no_auth),        T(open_iscsi_no_auth),     T(open_iscsi_discovery),
		T(chap_one_way),            T(chap_wrong_secret_or_name), T(chap_mutual),
		T(chap_mutual_refused),     T(chap_refuses_none_and_skipping), T(chap_reflection_refused),
		T(status_table),            T(sequence_errors),        T(odd_keys_and_values),
		T(continued_text),          T(sendtargets),            T(portal_format),
		T(chap_per_initiator),      T(chap_per_initiator_only), T(chap_per_initiator_discovery),
		T(chap_per_initiator_mutual),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
