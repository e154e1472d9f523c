/* SPDX-License-Identifier: Apache-2.0 */
#include "vtl/iscsi/login.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/grow.h"

#define DEFAULT_TPGT 1
#define DEFAULT_CMD_WINDOW 32
#define LOGIN_PENDING_MAX (4 * ISCSI_LARGE_VALUE_MAX) /* text a login may send in pieces (C bit) */
#define CHAP_ID_BYTES 1

/* RFC 7143 defaults of the keys the initiator may leave out (section 13). */
#define RFC_MAX_RECV 8192u
#define RFC_MAX_BURST 262144u
#define RFC_FIRST_BURST 65536u
#define RFC_TIME2RETAIN 20u
#define TIME_MAX 3600u           /* DefaultTime2Wait/Retain range (RFC 7143 13.15, 13.16) */
#define R2T_MAX 65535u           /* MaxOutstandingR2T, MaxConnections range (13.17, 13.2) */
#define ERL_MAX 2u               /* ErrorRecoveryLevel range (13.20) */
#define ERL_OURS 0u              /* the target implements level 0 only */
#define PROTOCOL_LEVEL_MAX 31u   /* iSCSIProtocolLevel range (RFC 7143 13.24) */
#define PROTOCOL_LEVEL_OURS 1u   /* RFC 7143 is level 1 */

/* How a key is negotiated (RFC 7143 6.2, section 13). */
enum kind {
	K_DIGEST,    /* list: None, CRC32C -> a bool in params */
	K_MIN,       /* numerical, the smaller wins */
	K_MAX,       /* numerical, the larger wins */
	K_AND,       /* boolean, Yes only if both */
	K_OR,        /* boolean, Yes if either */
	K_DECLARE,   /* the initiator's MaxRecvDataSegmentLength: taken, not answered */
	K_SESSION,   /* InitiatorName, InitiatorAlias, TargetName, SessionType: handled first */
	K_SECURITY,  /* AuthMethod and CHAP_*: the security stage's own */
	K_TARGET,    /* keys only a target sends: an initiator error */
	K_IRRELEVANT,/* answered "Irrelevant" */
	K_FFP,       /* full feature phase only: answered "Reject" in a login */
	K_TASK_REPORTING, /* list with one value we take */
};

struct keydef {
	const char *name;
	enum kind kind;
	uint64_t lo, hi, ours;
	bool normal_only; /* "Irrelevant" in a discovery session */
	size_t off;       /* into struct iscsi_params: uint32_t for numbers, bool for booleans/digests */
};

#define P(f) offsetof(struct iscsi_params, f)
#define NONE_OFF SIZE_MAX

static const struct keydef keys[] = {
	{"InitiatorName", K_SESSION, 0, 0, 0, false, NONE_OFF},
	{"InitiatorAlias", K_SESSION, 0, 0, 0, false, NONE_OFF},
	{"TargetName", K_SESSION, 0, 0, 0, false, NONE_OFF},
	{"SessionType", K_SESSION, 0, 0, 0, false, NONE_OFF},
	{"AuthMethod", K_SECURITY, 0, 0, 0, false, NONE_OFF},
	{"CHAP_A", K_SECURITY, 0, 0, 0, false, NONE_OFF},
	{"CHAP_I", K_SECURITY, 0, 0, 0, false, NONE_OFF},
	{"CHAP_C", K_SECURITY, 0, 0, 0, false, NONE_OFF},
	{"CHAP_N", K_SECURITY, 0, 0, 0, false, NONE_OFF},
	{"CHAP_R", K_SECURITY, 0, 0, 0, false, NONE_OFF},
	{"HeaderDigest", K_DIGEST, 0, 0, 0, false, P(header_digest)},                      /* 13.1 */
	{"DataDigest", K_DIGEST, 0, 0, 0, false, P(data_digest)},                          /* 13.1 */
	{"MaxConnections", K_MIN, 1, R2T_MAX, 1, true, P(max_connections)},                /* 13.2 */
	{"InitialR2T", K_OR, 0, 1, 0, true, P(initial_r2t)},                               /* 13.10 */
	{"ImmediateData", K_AND, 0, 1, 1, true, P(immediate_data)},                         /* 13.11 */
	{"MaxRecvDataSegmentLength", K_DECLARE, ISCSI_LEN_MIN, ISCSI_LEN_MAX, 0, false, P(initiator_max_recv)}, /* 13.12 */
	{"MaxBurstLength", K_MIN, ISCSI_LEN_MIN, ISCSI_LEN_MAX, ISCSI_OFFER_MAX_BURST, true, P(max_burst)},     /* 13.13 */
	{"FirstBurstLength", K_MIN, ISCSI_LEN_MIN, ISCSI_LEN_MAX, ISCSI_OFFER_FIRST_BURST, true, P(first_burst)}, /* 13.14 */
	{"DefaultTime2Wait", K_MAX, 0, TIME_MAX, ISCSI_OFFER_TIME2WAIT, false, P(default_time2wait)},        /* 13.15 */
	{"DefaultTime2Retain", K_MIN, 0, TIME_MAX, ISCSI_OFFER_TIME2RETAIN, false, P(default_time2retain)}, /* 13.16 */
	{"MaxOutstandingR2T", K_MIN, 1, R2T_MAX, ISCSI_OFFER_MAX_OUTSTANDING_R2T, true, P(max_outstanding_r2t)}, /* 13.17 */
	{"DataPDUInOrder", K_OR, 0, 1, 1, true, P(data_pdu_in_order)},                     /* 13.18 */
	{"DataSequenceInOrder", K_OR, 0, 1, 1, true, P(data_sequence_in_order)},           /* 13.19 */
	{"ErrorRecoveryLevel", K_MIN, 0, ERL_MAX, ERL_OURS, false, P(error_recovery_level)}, /* 13.20 */
	{"iSCSIProtocolLevel", K_MIN, 0, PROTOCOL_LEVEL_MAX, PROTOCOL_LEVEL_OURS, false, NONE_OFF}, /* 13.24 */
	{"TaskReporting", K_TASK_REPORTING, 0, 0, 0, true, NONE_OFF},                       /* 13.23 */
	/* RFC 3720's markers, gone from RFC 7143 but still offered (=No) by open-iscsi and libiscsi. */
	{"IFMarker", K_AND, 0, 1, 0, false, NONE_OFF},
	{"OFMarker", K_AND, 0, 1, 0, false, NONE_OFF},
	{"IFMarkInt", K_IRRELEVANT, 0, 0, 0, false, NONE_OFF},
	{"OFMarkInt", K_IRRELEVANT, 0, 0, 0, false, NONE_OFF},
	{"RDMAExtensions", K_AND, 0, 1, 0, false, NONE_OFF}, /* iSER (RFC 7145): not here */
	{"TargetAlias", K_TARGET, 0, 0, 0, false, NONE_OFF},
	{"TargetAddress", K_TARGET, 0, 0, 0, false, NONE_OFF},
	{"TargetPortalGroupTag", K_TARGET, 0, 0, 0, false, NONE_OFF},
	{"SendTargets", K_FFP, 0, 0, 0, false, NONE_OFF},
};
#define NKEYS (VTL_ARRAY_SIZE(keys))
_Static_assert(NKEYS <= 64, "one bit of iscsi_login.negotiated per key");

static const struct keydef *key_find(const char *name, size_t *idx)
{
	for (size_t i = 0; i < NKEYS; i++)
		if (strcmp(keys[i].name, name) == 0) {
			*idx = i;
			return &keys[i];
		}
	return NULL;
}

static uint16_t cfg_tpgt(const struct iscsi_target_config *cfg)
{
	return cfg->tpgt ? cfg->tpgt : DEFAULT_TPGT;
}

static bool set(const char *s)
{
	return s && *s;
}

void iscsi_login_init(struct iscsi_login *l, const struct iscsi_target_config *cfg, uint16_t tsih,
		      uint32_t statsn)
{
	memset(l, 0, sizeof *l);
	l->cfg = cfg;
	l->new_tsih = tsih;
	struct iscsi_params *p = &l->params;
	p->statsn = statsn;
	p->target_max_recv = ISCSI_OFFER_MAX_RECV;
	p->initiator_max_recv = RFC_MAX_RECV;
	p->max_burst = RFC_MAX_BURST;
	p->first_burst = RFC_FIRST_BURST;
	p->initial_r2t = true;
	p->immediate_data = true;
	p->max_outstanding_r2t = 1;
	p->data_pdu_in_order = true;
	p->data_sequence_in_order = true;
	p->error_recovery_level = 0;
	p->default_time2wait = ISCSI_OFFER_TIME2WAIT;
	p->default_time2retain = RFC_TIME2RETAIN;
	p->max_connections = 1;
}

void iscsi_login_free(struct iscsi_login *l)
{
	free(l->pending);
	l->pending = NULL;
	l->pending_len = 0;
	iscsi_text_buf_free(&l->out);
}

const char *iscsi_login_status_str(enum iscsi_login_status s)
{
	switch (s) {
	case LOGIN_OK: return "success";
	case LOGIN_INITIATOR_ERROR: return "initiator error";
	case LOGIN_AUTH_FAILED: return "authentication failure";
	case LOGIN_FORBIDDEN: return "authorization failure";
	case LOGIN_NOT_FOUND: return "not found";
	case LOGIN_TARGET_REMOVED: return "target removed";
	case LOGIN_UNSUPPORTED_VERSION: return "unsupported version";
	case LOGIN_TOO_MANY_CONNECTIONS: return "too many connections";
	case LOGIN_MISSING_PARAMETER: return "missing parameter";
	case LOGIN_CANT_INCLUDE: return "can't include in session";
	case LOGIN_SESSION_TYPE_UNSUPPORTED: return "session type not supported";
	case LOGIN_NO_SESSION: return "session does not exist";
	case LOGIN_INVALID_DURING_LOGIN: return "invalid request during login";
	case LOGIN_TARGET_ERROR: return "target error";
	case LOGIN_SERVICE_UNAVAILABLE: return "service unavailable";
	case LOGIN_OUT_OF_RESOURCES: return "out of resources";
	}
	return "unknown status";
}

/* Records a failure (the first one wins) and returns false, so that callers can `return fail(...)`. */
static bool fail(struct iscsi_login *l, enum iscsi_login_status s, const char *why)
{
	if (l->status == LOGIN_OK) {
		l->status = s;
		l->reason = why;
	}
	return false;
}

static bool answer(struct iscsi_login *l, const char *key, const char *value)
{
	if (iscsi_text_add(&l->out, key, value))
		return fail(l, LOGIN_OUT_OF_RESOURCES, "out of memory");
	return true;
}

static bool answer_uint(struct iscsi_login *l, const char *key, uint64_t v)
{
	if (iscsi_text_add_uint(&l->out, key, v))
		return fail(l, LOGIN_OUT_OF_RESOURCES, "out of memory");
	return true;
}

/* The entry of name in cfg->hosts, or NULL. iSCSI names compare case-insensitively (RFC 3722). */
static const struct iscsi_credentials *host_of(const struct iscsi_target_config *cfg, const char *name)
{
	for (size_t i = 0; i < cfg->n_hosts; i++)
		if (cfg->hosts[i].initiator_name && strcasecmp(cfg->hosts[i].initiator_name, name) == 0)
			return &cfg->hosts[i];
	return NULL;
}

static bool initiator_allowed(const struct iscsi_target_config *cfg, const char *name)
{
	if (cfg->n_initiators == 0 && cfg->n_hosts == 0)
		return true;
	for (size_t i = 0; i < cfg->n_initiators; i++)
		if (strcasecmp(cfg->initiators[i], name) == 0)
			return true;
	return host_of(cfg, name) != NULL;
}

/*
 * The credentials a login must prove: its own entry's when the name it
 * claims has one (mutual ones falling back to the shared), else the shared.
 * Whoever claims a name must know that name's secret.
 */
static struct iscsi_credentials credentials_of(const struct iscsi_target_config *cfg, const char *name)
{
	const struct iscsi_credentials *h = host_of(cfg, name);
	struct iscsi_credentials c = {.initiator_name = name, .chap_user = cfg->chap_user, .chap_secret = cfg->chap_secret,
				      .mutual_user = cfg->mutual_user, .mutual_secret = cfg->mutual_secret,
				      .discovery_chap = cfg->discovery_chap};
	if (h) {
		c.chap_user = h->chap_user;
		c.chap_secret = h->chap_secret;
		c.discovery_chap = h->discovery_chap;
		if (set(h->mutual_user)) {
			c.mutual_user = h->mutual_user;
			c.mutual_secret = h->mutual_secret;
		}
	}
	return c;
}

static bool has_chap(const struct iscsi_credentials *c)
{
	return set(c->chap_user) && set(c->chap_secret);
}

static bool auth_required(const struct iscsi_login *l)
{
	return has_chap(&l->cred) &&
	       (l->params.session_type == ISCSI_SESSION_NORMAL || l->cred.discovery_chap);
}

/* The session keys: required on the first request, the same values if repeated later (libiscsi does). */
static bool session_keys(struct iscsi_login *l, const struct iscsi_text *t, bool first)
{
	struct iscsi_params *p = &l->params;
	const char *iname = iscsi_text_get(t, "InitiatorName");
	const char *alias = iscsi_text_get(t, "InitiatorAlias");
	const char *tname = iscsi_text_get(t, "TargetName");
	const char *stype = iscsi_text_get(t, "SessionType");
	if (!first) {
		if ((iname && strcmp(iname, p->initiator_name)) || (tname && strcasecmp(tname, p->target_name)) ||
		    (stype && strcmp(stype, p->session_type == ISCSI_SESSION_NORMAL ? "Normal" : "Discovery")))
			return fail(l, LOGIN_INITIATOR_ERROR, "a session key changed during the login");
		return true;
	}
	if (!iname || !*iname)
		return fail(l, LOGIN_MISSING_PARAMETER, "no InitiatorName");
	if (strlen(iname) > ISCSI_NAME_MAX || (tname && strlen(tname) > ISCSI_NAME_MAX) ||
	    (alias && strlen(alias) > ISCSI_VALUE_MAX))
		return fail(l, LOGIN_INITIATOR_ERROR, "a name longer than RFC 7143 allows");
	snprintf(p->initiator_name, sizeof p->initiator_name, "%s", iname);
	snprintf(p->initiator_alias, sizeof p->initiator_alias, "%s", alias ? alias : "");
	if (!stype || strcmp(stype, "Normal") == 0)
		p->session_type = ISCSI_SESSION_NORMAL; /* the default (RFC 7143 13.21) */
	else if (strcmp(stype, "Discovery") == 0)
		p->session_type = ISCSI_SESSION_DISCOVERY;
	else
		return fail(l, LOGIN_SESSION_TYPE_UNSUPPORTED, "unknown SessionType");
	if (p->session_type == ISCSI_SESSION_NORMAL) {
		if (!tname || !*tname)
			return fail(l, LOGIN_MISSING_PARAMETER, "no TargetName in a normal session");
		if (strcasecmp(tname, l->cfg->target_name) != 0)
			return fail(l, LOGIN_NOT_FOUND, "no such target");
	}
	if (tname && strcasecmp(tname, l->cfg->target_name) == 0)
		snprintf(p->target_name, sizeof p->target_name, "%s", l->cfg->target_name);
	if (!initiator_allowed(l->cfg, iname))
		return fail(l, LOGIN_FORBIDDEN, "initiator not in the allowed list");
	l->cred = credentials_of(l->cfg, p->initiator_name);
	return true;
}

static bool chap_method(struct iscsi_login *l, const char *offer)
{
	/* With CHAP configured, None is refused where CHAP is required (RFC 7143 12.1: the target's choice). */
	static const char *const chap_only[] = {"CHAP"};
	static const char *const both[] = {"CHAP", "None"};
	static const char *const none_only[] = {"None"};
	const char *const *acc = none_only;
	size_t n = 1;
	if (has_chap(&l->cred)) {
		acc = auth_required(l) ? chap_only : both;
		n = auth_required(l) ? 1 : 2;
	}
	int i = iscsi_neg_list(offer, acc, n);
	if (i < 0) {
		answer(l, "AuthMethod", ISCSI_REJECT);
		return fail(l, LOGIN_AUTH_FAILED, "no acceptable AuthMethod");
	}
	if (!answer(l, "AuthMethod", acc[i]))
		return false;
	if (strcmp(acc[i], "None") == 0)
		l->auth_done = true;
	else
		l->chap_step = 1;
	return true;
}

static bool chap_algorithm(struct iscsi_login *l, const char *offer)
{
	static const char *const md5_only[] = {"5"};
	if (l->chap_step != 1)
		return fail(l, LOGIN_INITIATOR_ERROR, "CHAP_A out of turn");
	if (iscsi_neg_list(offer, md5_only, 1) < 0) {
		answer(l, "CHAP_A", ISCSI_REJECT);
		return fail(l, LOGIN_AUTH_FAILED, "no acceptable CHAP algorithm");
	}
	uint8_t id;
	if (chap_random(&id, CHAP_ID_BYTES) || chap_random(l->chap_challenge, CHAP_CHALLENGE_LEN))
		return fail(l, LOGIN_TARGET_ERROR, "no random bytes for the challenge");
	l->chap_id = id;
	char hex[CHAP_HEX_LEN(CHAP_CHALLENGE_LEN)];
	chap_encode_hex(l->chap_challenge, CHAP_CHALLENGE_LEN, hex);
	l->chap_step = 2;
	return answer_uint(l, "CHAP_A", CHAP_ALG_MD5) && answer_uint(l, "CHAP_I", id) && answer(l, "CHAP_C", hex);
}

/* Compares without an early exit, so that timing says nothing about where a response differs. */
static bool same_bytes(const uint8_t *a, const uint8_t *b, size_t n)
{
	uint8_t d = 0;
	for (size_t i = 0; i < n; i++)
		d |= a[i] ^ b[i];
	return d == 0;
}

static bool chap_check(struct iscsi_login *l, const struct iscsi_text *t)
{
	const struct iscsi_credentials *cfg = &l->cred;
	const char *n = iscsi_text_get(t, "CHAP_N"), *r = iscsi_text_get(t, "CHAP_R");
	const char *mi = iscsi_text_get(t, "CHAP_I"), *mc = iscsi_text_get(t, "CHAP_C");
	if (l->chap_step != 2)
		return fail(l, LOGIN_INITIATOR_ERROR, "CHAP response out of turn");
	if (!n || !r)
		return fail(l, LOGIN_AUTH_FAILED, "CHAP_N or CHAP_R missing");
	uint8_t got[CHAP_BINARY_MAX], want[CHAP_RESPONSE_LEN];
	size_t glen;
	chap_response(l->chap_id, cfg->chap_secret, strlen(cfg->chap_secret), l->chap_challenge, CHAP_CHALLENGE_LEN,
		      want);
	bool ok = chap_decode(r, got, sizeof got, &glen) == 0 && glen == CHAP_RESPONSE_LEN &&
		  same_bytes(got, want, CHAP_RESPONSE_LEN);
	if (strcmp(n, cfg->chap_user) != 0 || !ok)
		return fail(l, LOGIN_AUTH_FAILED, "wrong CHAP name or response");
	l->params.chap_used = true;
	l->chap_step = 3;
	if (!mi && !mc) {
		l->auth_done = true;
		return true;
	}
	/* Mutual CHAP: the initiator challenges the target (RFC 7143 12.1.3). */
	uint64_t id;
	uint8_t chal[CHAP_BINARY_MAX];
	size_t clen;
	if (!mi || !mc || !set(cfg->mutual_user) || !set(cfg->mutual_secret))
		return fail(l, LOGIN_AUTH_FAILED, "mutual CHAP asked for but not configured");
	if (iscsi_parse_number(mi, 0, CHAP_ID_MAX, &id) || chap_decode(mc, chal, sizeof chal, &clen))
		return fail(l, LOGIN_AUTH_FAILED, "malformed CHAP_I or CHAP_C");
	/* A challenge equal to ours would let the initiator replay our own answer (RFC 7143 12.1.3). */
	if (clen == CHAP_CHALLENGE_LEN && memcmp(chal, l->chap_challenge, clen) == 0)
		return fail(l, LOGIN_AUTH_FAILED, "the initiator reflected the target's challenge");
	uint8_t resp[CHAP_RESPONSE_LEN];
	chap_response((uint8_t)id, cfg->mutual_secret, strlen(cfg->mutual_secret), chal, clen, resp);
	char hex[CHAP_HEX_LEN(CHAP_RESPONSE_LEN)];
	chap_encode_hex(resp, CHAP_RESPONSE_LEN, hex);
	l->params.mutual_chap_used = true;
	l->auth_done = true;
	return answer(l, "CHAP_N", cfg->mutual_user) && answer(l, "CHAP_R", hex);
}

/* Answers one operational key by its table entry. */
static bool negotiate(struct iscsi_login *l, const struct keydef *k, const char *value)
{
	struct iscsi_params *p = &l->params;
	uint8_t *base = (uint8_t *)p;
	if (k->normal_only && p->session_type == ISCSI_SESSION_DISCOVERY)
		return answer(l, k->name, ISCSI_IRRELEVANT);
	switch (k->kind) {
	case K_DIGEST: {
		static const char *const digests[] = {"None", "CRC32C"};
		int i = iscsi_neg_list(value, digests, 2);
		if (i < 0)
			return answer(l, k->name, ISCSI_REJECT);
		*(bool *)(base + k->off) = i == 1;
		return answer(l, k->name, digests[i]);
	}
	case K_MIN:
	case K_MAX: {
		uint64_t v;
		if (iscsi_parse_number(value, k->lo, k->hi, &v))
			return answer(l, k->name, ISCSI_REJECT);
		v = k->kind == K_MIN ? iscsi_neg_min(v, k->ours) : iscsi_neg_max(v, k->ours);
		if (k->off != NONE_OFF)
			*(uint32_t *)(base + k->off) = (uint32_t)v;
		return answer_uint(l, k->name, v);
	}
	case K_AND:
	case K_OR: {
		bool v;
		if (iscsi_parse_bool(value, &v))
			return answer(l, k->name, ISCSI_REJECT);
		v = k->kind == K_AND ? iscsi_neg_and(v, k->ours != 0) : iscsi_neg_or(v, k->ours != 0);
		if (k->off != NONE_OFF)
			*(bool *)(base + k->off) = v;
		return answer(l, k->name, v ? "Yes" : "No");
	}
	case K_DECLARE: {
		uint64_t v;
		if (iscsi_parse_number(value, k->lo, k->hi, &v))
			return fail(l, LOGIN_INITIATOR_ERROR, "MaxRecvDataSegmentLength out of range");
		*(uint32_t *)(base + k->off) = (uint32_t)v;
		return true; /* declarative: our own value goes out as a declaration, not an answer */
	}
	case K_TASK_REPORTING: {
		static const char *const rfc3720[] = {"RFC3720"};
		return answer(l, k->name, iscsi_neg_list(value, rfc3720, 1) < 0 ? ISCSI_REJECT : "RFC3720");
	}
	case K_IRRELEVANT:
		return answer(l, k->name, ISCSI_IRRELEVANT);
	case K_FFP:
		return answer(l, k->name, ISCSI_REJECT);
	case K_TARGET:
		return fail(l, LOGIN_INITIATOR_ERROR, "the initiator sent a key only a target may send");
	case K_SESSION:
	case K_SECURITY:
		break;
	}
	return true;
}

/* Goes through the keys of a request in their order. */
static bool process_keys(struct iscsi_login *l, const struct iscsi_text *t, bool first)
{
	if (!session_keys(l, t, first))
		return false;
	if (first && l->stage == ISCSI_STAGE_OPERATIONAL && auth_required(l))
		return fail(l, LOGIN_AUTH_FAILED, "CHAP is required but the login skipped the security stage");
	bool chap_response_seen = false;
	for (unsigned i = 0; i < t->n; i++) {
		const char *key = t->kv[i].key, *value = t->kv[i].value;
		size_t idx;
		const struct keydef *k = key_find(key, &idx);
		if (!k) {
			/* Unknown and vendor (X-, X#) keys (RFC 7143 6.2, 13.25). */
			if (!answer(l, key, ISCSI_NOT_UNDERSTOOD))
				return false;
			continue;
		}
		if (k->kind == K_SESSION)
			continue;
		if (k->kind != K_SECURITY && strlen(value) > ISCSI_VALUE_MAX)
			return fail(l, LOGIN_INITIATOR_ERROR, "a value longer than 255 bytes");
		if (l->negotiated & (1ull << idx))
			return fail(l, LOGIN_INITIATOR_ERROR, "a key negotiated twice");
		l->negotiated |= 1ull << idx;
		bool ok = true;
		if (k->kind == K_SECURITY) {
			if (l->stage != ISCSI_STAGE_SECURITY)
				return fail(l, LOGIN_INITIATOR_ERROR, "a security key outside the security stage");
			if (strcmp(key, "AuthMethod") == 0)
				ok = chap_method(l, value);
			else if (strcmp(key, "CHAP_A") == 0)
				ok = chap_algorithm(l, value);
			else if (!chap_response_seen && (strcmp(key, "CHAP_N") == 0 || strcmp(key, "CHAP_R") == 0)) {
				chap_response_seen = true;
				ok = chap_check(l, t);
			} else if (!iscsi_text_get(t, "CHAP_R"))
				ok = fail(l, LOGIN_INITIATOR_ERROR, "CHAP_I or CHAP_C without a CHAP response");
		} else {
			ok = negotiate(l, k, value);
		}
		if (!ok)
			return false;
	}
	return true;
}

/* The declarations the target makes once: its receive size, and its alias and portal group for a normal session. */
static bool declarations(struct iscsi_login *l, bool transit_ffp)
{
	struct iscsi_params *p = &l->params;
	if (!l->sent_tpgt && p->session_type == ISCSI_SESSION_NORMAL) {
		l->sent_tpgt = true;
		if (set(l->cfg->target_alias) && !answer(l, "TargetAlias", l->cfg->target_alias))
			return false;
		if (!answer_uint(l, "TargetPortalGroupTag", cfg_tpgt(l->cfg)))
			return false;
	}
	if (!l->declared_max_recv && (l->stage == ISCSI_STAGE_OPERATIONAL || transit_ffp)) {
		l->declared_max_recv = true;
		return answer_uint(l, "MaxRecvDataSegmentLength", p->target_max_recv);
	}
	return true;
}

/* Values that follow from others once the login is over (RFC 7143 13.14, 13.21). */
static void finish_params(struct iscsi_params *p)
{
	if (p->first_burst > p->max_burst)
		p->first_burst = p->max_burst;
}

static void build_response(struct iscsi_login *l, const struct iscsi_pdu *req, struct iscsi_pdu *rsp, bool transit,
			   unsigned csg, unsigned nsg, bool final)
{
	memset(rsp->bhs, 0, sizeof rsp->bhs);
	rsp->ahs_len = 0;
	rsp->bhs[BHS_OPCODE] = ISCSI_OP_LOGIN_RSP;
	/* A failed response keeps CSG (the stage the login failed in) and never transits. */
	transit = transit && l->status == LOGIN_OK;
	rsp->bhs[BHS_FLAGS] = (uint8_t)((transit ? LOGIN_TRANSIT | nsg : 0) | csg << LOGIN_CSG_SHIFT);
	rsp->bhs[LOGIN_VERSION_MAX] = ISCSI_VERSION;
	rsp->bhs[LOGIN_VERSION_MIN] = ISCSI_VERSION;
	memcpy(rsp->bhs + LOGIN_ISID, req->bhs + LOGIN_ISID, ISCSI_ISID_LEN);
	pdu_put(rsp->bhs + LOGIN_TSIH, final ? l->params.tsih : l->req_tsih, 2);
	memcpy(rsp->bhs + BHS_ITT, req->bhs + BHS_ITT, 4);
	uint32_t cmdsn = pdu_get(req->bhs + LOGIN_CMDSN, 4);
	uint32_t window = l->cfg->cmd_window ? l->cfg->cmd_window : DEFAULT_CMD_WINDOW;
	pdu_put(rsp->bhs + LOGIN_STATSN, l->params.statsn++, 4);
	pdu_put(rsp->bhs + LOGIN_EXPCMDSN, cmdsn, 4);
	pdu_put(rsp->bhs + LOGIN_MAXCMDSN, cmdsn + window - 1, 4);
	rsp->bhs[LOGIN_STATUS_CLASS] = (uint8_t)(l->status >> 8);
	rsp->bhs[LOGIN_STATUS_DETAIL] = (uint8_t)(l->status & 0xFF);
	if (l->status != LOGIN_OK)
		l->out.len = 0; /* a failed login says only its status */
	rsp->data = l->out.len ? l->out.data : NULL;
	rsp->data_len = (uint32_t)l->out.len;
	pdu_put(rsp->bhs + BHS_DATA_LEN, rsp->data_len, 3);
}

static enum iscsi_login_result failed(struct iscsi_login *l, const struct iscsi_pdu *req, struct iscsi_pdu *rsp)
{
	build_response(l, req, rsp, false, l->stage, 0, false);
	return ISCSI_LOGIN_FAILED;
}

enum iscsi_login_result iscsi_login_refuse(struct iscsi_login *l, const struct iscsi_pdu *req, struct iscsi_pdu *rsp,
					   enum iscsi_login_status status, const char *reason)
{
	l->status = status;
	l->reason = reason;
	unsigned csg = req->bhs[BHS_FLAGS] >> LOGIN_CSG_SHIFT & LOGIN_STAGE_MASK;
	build_response(l, req, rsp, false, csg, 0, false);
	return ISCSI_LOGIN_FAILED;
}

/* Checks the header of a Login Request against the stage rules (RFC 7143 6.3, 11.12). */
static bool check_header(struct iscsi_login *l, const struct iscsi_pdu *req, bool *transit, bool *cont,
			 unsigned *csg, unsigned *nsg)
{
	const uint8_t *b = req->bhs;
	if (pdu_opcode(req) != ISCSI_OP_LOGIN_REQ)
		return fail(l, LOGIN_INVALID_DURING_LOGIN, "not a Login Request during the login");
	*transit = b[BHS_FLAGS] & LOGIN_TRANSIT;
	*cont = b[BHS_FLAGS] & LOGIN_CONTINUE;
	*csg = (b[BHS_FLAGS] >> LOGIN_CSG_SHIFT) & LOGIN_STAGE_MASK;
	*nsg = b[BHS_FLAGS] & LOGIN_STAGE_MASK;
	if (!l->started && *csg <= ISCSI_STAGE_OPERATIONAL)
		l->stage = (enum iscsi_stage)*csg; /* so that even a refusal names the stage it refused */
	if (b[LOGIN_VERSION_MIN] > ISCSI_VERSION || b[LOGIN_VERSION_MAX] < b[LOGIN_VERSION_MIN])
		return fail(l, LOGIN_UNSUPPORTED_VERSION, "no common protocol version");
	if (*transit && *cont)
		return fail(l, LOGIN_INITIATOR_ERROR, "both T and C set");
	if (*csg != ISCSI_STAGE_SECURITY && *csg != ISCSI_STAGE_OPERATIONAL)
		return fail(l, LOGIN_INITIATOR_ERROR, "CSG is not a login stage");
	if (*transit && (*nsg <= *csg || *nsg == 2))
		return fail(l, LOGIN_INITIATOR_ERROR, "NSG is not a later stage");
	uint16_t tsih = (uint16_t)pdu_get(b + LOGIN_TSIH, 2);
	if (!l->started) {
		if (tsih != 0)
			return fail(l, LOGIN_NO_SESSION, "adding a connection to a session is not supported");
		memcpy(l->params.isid, b + LOGIN_ISID, ISCSI_ISID_LEN);
		l->params.cid = (uint16_t)pdu_get(b + LOGIN_CID, 2);
		l->params.exp_cmdsn = pdu_get(b + LOGIN_CMDSN, 4);
		l->req_tsih = tsih;
		l->stage = (enum iscsi_stage)*csg;
		return true;
	}
	if (memcmp(l->params.isid, b + LOGIN_ISID, ISCSI_ISID_LEN) || tsih != l->req_tsih)
		return fail(l, LOGIN_INITIATOR_ERROR, "ISID or TSIH changed during the login");
	if (*csg != (unsigned)l->stage)
		return fail(l, LOGIN_INITIATOR_ERROR, "CSG is not the stage the target moved to");
	return true;
}

enum iscsi_login_result iscsi_login_step(struct iscsi_login *l, const struct iscsi_pdu *req,
					 struct iscsi_pdu *rsp)
{
	l->out.len = 0;
	l->status = LOGIN_OK;
	l->reason = NULL;
	bool transit, cont;
	unsigned csg, nsg;
	if (!check_header(l, req, &transit, &cont, &csg, &nsg))
		return failed(l, req, rsp);
	bool first = !l->started;
	l->started = true;

	/* Text in pieces: collect until the last piece, answering each with an empty response (RFC 7143 6.2). */
	if (req->data_len > LOGIN_PENDING_MAX - l->pending_len) {
		fail(l, LOGIN_OUT_OF_RESOURCES, "login text too long");
		return failed(l, req, rsp);
	}
	if (req->data_len) {
		uint8_t *np = realloc(l->pending, l->pending_len + req->data_len);
		if (!np) {
			fail(l, LOGIN_OUT_OF_RESOURCES, "out of memory");
			return failed(l, req, rsp);
		}
		l->pending = np;
		memcpy(l->pending + l->pending_len, req->data, req->data_len);
		l->pending_len += req->data_len;
	}
	if (cont) {
		if (first)
			l->started = false; /* the session keys come with the last piece */
		build_response(l, req, rsp, false, csg, 0, false);
		return ISCSI_LOGIN_CONTINUE;
	}
	struct iscsi_text t = {0};
	int te = iscsi_text_parse(l->pending, l->pending_len, &t);
	free(l->pending);
	l->pending = NULL;
	l->pending_len = 0;
	if (te) {
		fail(l, te == ISCSI_TEXT_NO_MEMORY ? LOGIN_OUT_OF_RESOURCES : LOGIN_INITIATOR_ERROR,
		     iscsi_text_strerror(te));
		return failed(l, req, rsp);
	}
	bool ok = process_keys(l, &t, first);
	iscsi_text_free(&t);
	if (!ok)
		return failed(l, req, rsp);

	/* Leaving the security stage needs authentication done (or not required). */
	bool go = transit;
	if (go && l->stage == ISCSI_STAGE_SECURITY && !l->auth_done) {
		if (l->chap_step > 0) {
			go = false; /* CHAP still under way: stay (RFC 7143 6.3: the target may refuse T) */
		} else if (auth_required(l)) {
			fail(l, LOGIN_AUTH_FAILED, "CHAP is required and the initiator offered no AuthMethod");
			return failed(l, req, rsp);
		} else {
			l->auth_done = true;
		}
	}
	if (l->stage == ISCSI_STAGE_OPERATIONAL)
		l->auth_done = true;
	bool final = go && nsg == ISCSI_STAGE_FULL_FEATURE;
	if (!declarations(l, final)) {
		return failed(l, req, rsp);
	}
	if (final) {
		l->params.tsih = l->new_tsih;
		finish_params(&l->params);
	}
	build_response(l, req, rsp, go, csg, nsg, final);
	if (l->out.failed) {
		fail(l, LOGIN_OUT_OF_RESOURCES, "out of memory");
		return failed(l, req, rsp);
	}
	if (go)
		l->stage = (enum iscsi_stage)nsg;
	return final ? ISCSI_LOGIN_DONE : ISCSI_LOGIN_CONTINUE;
}

int iscsi_portal_format(const struct sockaddr *sa, char *out, size_t len)
{
	char a[INET6_ADDRSTRLEN];
	int n;
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *s4 = (const struct sockaddr_in *)sa;
		if (!inet_ntop(AF_INET, &s4->sin_addr, a, sizeof a))
			return -1;
		n = snprintf(out, len, "%s:%u", a, ntohs(s4->sin_port));
	} else if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)sa;
		if (!inet_ntop(AF_INET6, &s6->sin6_addr, a, sizeof a))
			return -1;
		/* RFC 7143 13.8: IPv6 addresses in brackets, as in URLs. */
		n = snprintf(out, len, "[%s]:%u", a, ntohs(s6->sin6_port));
	} else {
		return -1;
	}
	return n > 0 && (size_t)n < len ? 0 : -1;
}

int iscsi_sendtargets(const struct iscsi_target_config *cfg, const struct iscsi_params *session,
		      const char *value, const char *local_portal, struct iscsi_text_buf *out)
{
	bool list;
	if (strcmp(value, "All") == 0) {
		/* "All" belongs to discovery sessions (RFC 7143 appendix C). */
		if (session->session_type != ISCSI_SESSION_DISCOVERY)
			return iscsi_text_add(out, "SendTargets", ISCSI_REJECT);
		list = true;
	} else if (*value == 0) {
		list = session->session_type == ISCSI_SESSION_NORMAL;
	} else {
		list = strcasecmp(value, cfg->target_name) == 0;
	}
	/* Targets the initiator may not use are not listed at all (RFC 7143 appendix C). */
	if (!list || !initiator_allowed(cfg, session->initiator_name))
		return 0;
	int e = iscsi_text_add(out, "TargetName", cfg->target_name);
	const char *addr = NULL;
	if (cfg->advertise == ISCSI_ADVERTISE_LOCAL)
		addr = local_portal;
	else if (cfg->advertise == ISCSI_ADVERTISE_FIXED)
		addr = cfg->advertise_address;
	if (!e && set(addr)) {
		char v[ISCSI_VALUE_MAX + 1];
		int n = snprintf(v, sizeof v, "%s,%u", addr, cfg_tpgt(cfg));
		if (n > 0 && (size_t)n < sizeof v)
			e = iscsi_text_add(out, "TargetAddress", v);
	}
	return e;
}

int iscsi_text_respond(const struct iscsi_target_config *cfg, const struct iscsi_params *session,
		       const uint8_t *data, size_t len, const char *local_portal, struct iscsi_text_buf *out)
{
	struct iscsi_text t;
	int e = iscsi_text_parse(data, len, &t);
	if (e)
		return e;
	for (unsigned i = 0; i < t.n && !e; i++) {
		size_t idx;
		if (strcmp(t.kv[i].key, "SendTargets") == 0)
			e = iscsi_sendtargets(cfg, session, t.kv[i].value, local_portal, out);
		else
			e = iscsi_text_add(out, t.kv[i].key,
					   key_find(t.kv[i].key, &idx) ? ISCSI_REJECT : ISCSI_NOT_UNDERSTOOD);
	}
	iscsi_text_free(&t);
	return e;
}
