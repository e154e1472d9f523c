/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target for the iSCSI protocol layer: the input is a byte stream
 * cut into reads of fuzzed sizes, assembled by the PDU reader (digests on or
 * off), each PDU driven through the login state machine, and after a
 * successful login through the Text Request answer (SendTargets). Nothing may
 * crash or read out of bounds, and every Login Response must be well formed.
 *
 * Input: byte 0 picks the configuration (CHAP, mutual CHAP, digests,
 * discovery CHAP, an allowed-initiator list); byte 1 the mode. Raw mode:
 * the rest is the stream, each chunk preceded by one byte giving its
 * length. Program mode: the rest builds Login Requests from flags bytes and
 * picks among known keys and values (random bytes would almost never get
 * past the first key), with a right CHAP response when asked, serialized
 * with the PDU writers and then read back in fuzzed chunks.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vtl/iscsi/login.h"
#include "vtl/iscsi/pdu.h"
#include "vtl/iscsi/text.h"
#include "tests/fuzz/entry.h"

#include "common/grow.h"

#define FUZZ_MAX_DATA 8192 /* the login phase's MaxRecvDataSegmentLength (RFC 7143 13.12 default) */
#define FUZZ_LOGIN_TEXT_MAX 8192

static const char *const allowed[] = {"iqn.1994-05.com.redhat:client"};
/* With the allow list, the listed initiator has its own credentials (the secret RIGHT_RESPONSE knows). */
static const struct iscsi_credentials fuzz_hosts[] = {
	{.initiator_name = "iqn.1994-05.com.redhat:client", .chap_user = "alice", .chap_secret = "initiator-secret",
	 .mutual_user = "vtl-own", .mutual_secret = "target-secret-2", .discovery_chap = true},
};

static const char *const fkeys[] = {
	"InitiatorName", "TargetName", "SessionType", "AuthMethod", "CHAP_A", "CHAP_N", "CHAP_R", "CHAP_I",
	"CHAP_C", "HeaderDigest", "DataDigest", "MaxRecvDataSegmentLength", "MaxBurstLength", "FirstBurstLength",
	"InitialR2T", "ImmediateData", "MaxOutstandingR2T", "ErrorRecoveryLevel", "DefaultTime2Wait",
	"IFMarker", "X-vendor", "TargetAlias", "SendTargets", "InitiatorAlias",
};
static const char *const fvalues[] = {
	"iqn.1994-05.com.redhat:client", "iqn.2026-01.org.vtl:vtl1", "Normal", "Discovery", "CHAP,None", "None",
	"CHAP", "5", "7,5", "alice", "(right response)", "0x00112233445566778899aabbccddeeff", "Yes", "No",
	"None,CRC32C", "CRC32C", "512", "262144", "16777215", "0", "1", "All", "", "0bAAEC", "vtl", "x=y",
};
#define FUZZ_TEXT_MAX 2048
#define FUZZ_STREAM_MAX 65536
#define RIGHT_RESPONSE 10 /* fvalues index that stands for the correct CHAP_R */

/* Takes one byte of the input (0 once it is used up). */
static uint8_t take(const uint8_t **p, size_t *n)
{
	if (!*n)
		return 0;
	(*n)--;
	return *(*p)++;
}

/* Program mode: appends one Login Request built from the input to stream. */
static size_t build_request(const uint8_t **p, size_t *n, const struct iscsi_login *l, uint8_t *stream,
			    size_t at, bool hd, bool dd)
{
	char text[FUZZ_TEXT_MAX];
	size_t len = 0;
	struct iscsi_pdu req;
	memset(&req, 0, sizeof req);
	req.bhs[BHS_OPCODE] = (take(p, n) & 7) == 0 ? ISCSI_OP_TEXT_REQ : ISCSI_OP_LOGIN_REQ;
	req.bhs[BHS_FLAGS] = take(p, n);
	unsigned nk = take(p, n) % 10;
	for (unsigned i = 0; i < nk; i++) {
		const char *k = fkeys[take(p, n) % (VTL_ARRAY_SIZE(fkeys))];
		unsigned vi = take(p, n) % (VTL_ARRAY_SIZE(fvalues));
		char v[CHAP_HEX_LEN(CHAP_RESPONSE_LEN)];
		if (vi == RIGHT_RESPONSE) {
			uint8_t r[CHAP_RESPONSE_LEN];
			chap_response(l->chap_id, "initiator-secret", 16, l->chap_challenge, CHAP_CHALLENGE_LEN, r);
			chap_encode_hex(r, sizeof r, v);
		} else {
			snprintf(v, sizeof v, "%s", fvalues[vi]);
		}
		int w = snprintf(text + len, sizeof text - len, "%s=%s", k, v);
		if (w < 0 || (size_t)w + 1 >= sizeof text - len)
			break;
		len += (size_t)w + 1;
	}
	if (len && (take(p, n) & 1))
		len--; /* the last pair without its NUL */
	req.data = (uint8_t *)text;
	req.data_len = (uint32_t)len;
	if (at + ISCSI_HDR_MAX + len + ISCSI_TRAILER_MAX > FUZZ_STREAM_MAX)
		return at;
	at += pdu_header(&req, hd, stream + at);
	memcpy(stream + at, text, len);
	at += len;
	at += pdu_trailer(pdu_crc(0, text, len), (uint32_t)len, dd, stream + at);
	return at;
}

static void check_response(const struct iscsi_login *l, enum iscsi_login_result r, const struct iscsi_pdu *rsp)
{
	const uint8_t *b = rsp->bhs;
	if (b[BHS_OPCODE] != ISCSI_OP_LOGIN_RSP || b[LOGIN_VERSION_MAX] != ISCSI_VERSION ||
	    b[LOGIN_VERSION_MIN] != ISCSI_VERSION || b[BHS_AHS_LEN] != 0)
		abort();
	if (pdu_dlen_field(b) != rsp->data_len || rsp->data_len > FUZZ_LOGIN_TEXT_MAX)
		abort();
	if (rsp->data_len && !rsp->data)
		abort();
	unsigned status = (unsigned)b[LOGIN_STATUS_CLASS] << 8 | b[LOGIN_STATUS_DETAIL];
	if (status != (unsigned)l->status)
		abort();
	bool transit = b[BHS_FLAGS] & LOGIN_TRANSIT;
	unsigned csg = (b[BHS_FLAGS] >> LOGIN_CSG_SHIFT) & LOGIN_STAGE_MASK, nsg = b[BHS_FLAGS] & LOGIN_STAGE_MASK;
	if (b[BHS_FLAGS] & LOGIN_CONTINUE)
		abort();
	if (csg > ISCSI_STAGE_OPERATIONAL || (transit && (nsg <= csg || nsg == 2)) || (!transit && nsg))
		abort();
	switch (r) {
	case ISCSI_LOGIN_FAILED:
		if (status == LOGIN_OK || (status >> 8) < 2 || (status >> 8) > 3 || rsp->data_len || transit ||
		    pdu_get(b + LOGIN_TSIH, 2) != 0)
			abort();
		break;
	case ISCSI_LOGIN_DONE:
		if (status != LOGIN_OK || !transit || nsg != ISCSI_STAGE_FULL_FEATURE || pdu_get(b + LOGIN_TSIH, 2) == 0)
			abort();
		if (l->params.first_burst > l->params.max_burst)
			abort();
		break;
	case ISCSI_LOGIN_CONTINUE:
		if (status != LOGIN_OK)
			abort();
		break;
	}
	/* The text we send must itself parse. */
	struct iscsi_text t;
	if (iscsi_text_parse(rsp->data, rsp->data_len, &t) != ISCSI_TEXT_OK)
		abort();
	iscsi_text_free(&t);
}

/* One PDU to the login, or after it to the Text Request answer, checking what comes back. */
static void deliver(struct iscsi_login *login, const struct iscsi_target_config *cfg, const struct iscsi_pdu *pdu,
		    bool *in_ffp)
{
	if (*in_ffp) {
		struct iscsi_text_buf b = {0};
		iscsi_text_respond(cfg, &login->params, pdu->data, pdu->data_len, "10.0.2.15:3260", &b);
		/* Well-formed pairs; keys may repeat (SendTargets lists TargetName once per target). */
		struct iscsi_text t;
		int e = b.failed ? ISCSI_TEXT_OK : iscsi_text_parse(b.data, b.len, &t);
		if (e == ISCSI_TEXT_OK && !b.failed)
			iscsi_text_free(&t);
		else if (e != ISCSI_TEXT_OK && e != ISCSI_TEXT_DUPLICATE)
			abort();
		iscsi_text_buf_free(&b);
		return;
	}
	struct iscsi_pdu rsp;
	enum iscsi_login_result lr = iscsi_login_step(login, pdu, &rsp);
	check_response(login, lr, &rsp);
	if (lr == ISCSI_LOGIN_FAILED) {
		iscsi_login_free(login);
		iscsi_login_init(login, cfg, 1, 0);
	} else if (lr == ISCSI_LOGIN_DONE) {
		*in_ffp = true;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	uint8_t sel = data[0];
	data++, size--;
	struct iscsi_target_config cfg = {.target_name = "iqn.2026-01.org.vtl:vtl1", .target_alias = "VTL"};
	if (sel & 1) {
		cfg.chap_user = "alice";
		cfg.chap_secret = "initiator-secret";
	}
	if (sel & 2) {
		cfg.mutual_user = "vtl";
		cfg.mutual_secret = "target-secret-1";
	}
	cfg.discovery_chap = sel & 4;
	if (sel & 8) {
		cfg.initiators = allowed;
		cfg.n_initiators = 1;
	}
	if ((sel & 9) == 9) {
		cfg.hosts = fuzz_hosts;
		cfg.n_hosts = 1;
	}
	cfg.advertise = (enum iscsi_advertise)((sel >> 6) % 3);
	cfg.advertise_address = "192.0.2.1:3260";

	struct pdu_reader r;
	pdu_reader_init(&r, FUZZ_MAX_DATA);
	r.header_digest = sel & 16;
	r.data_digest = sel & 32;
	struct iscsi_login login;
	iscsi_login_init(&login, &cfg, 1, 0);
	bool in_ffp = false;
	size_t at = 0;
	static uint8_t stream[FUZZ_STREAM_MAX];
	if (size && (data[0] & 1)) {
		/* Program mode: one request at a time, so that each can answer the last challenge. */
		const uint8_t *p = data + 1;
		size_t n = size - 1;
		while (n) {
			size_t len = build_request(&p, &n, &login, stream, 0, r.header_digest, r.data_digest);
			for (size_t off = 0; off < len;) {
				struct iscsi_pdu pdu;
				size_t used, piece = 1 + take(&p, &n) % 64;
				if (piece > len - off)
					piece = len - off;
				enum pdu_error e = pdu_reader_feed(&r, stream + off, piece, &used, &pdu);
				off += used;
				if (e == PDU_NEED_MORE)
					continue;
				if (e != PDU_OK)
					abort(); /* our own writers made it: it must read back */
				deliver(&login, &cfg, &pdu, &in_ffp);
			}
		}
		goto out;
	}
	if (size)
		data++, size--;
	while (at < size) {
		size_t chunk = 1 + data[at++];
		if (chunk > size - at)
			chunk = size - at;
		size_t off = 0;
		while (off < chunk) {
			struct iscsi_pdu pdu;
			size_t used;
			enum pdu_error e = pdu_reader_feed(&r, data + at + off, chunk - off, &used, &pdu);
			if (used > chunk - off)
				abort();
			off += used;
			if (e == PDU_NEED_MORE)
				break;
			if (e != PDU_OK && e != PDU_BAD_DATA_DIGEST)
				goto out; /* the connection would end */
			if (e == PDU_BAD_DATA_DIGEST)
				continue;
			if (pdu.data_len > FUZZ_MAX_DATA || (pdu.data_len && !pdu.data))
				abort();
			deliver(&login, &cfg, &pdu, &in_ffp);
		}
		at += chunk;
	}
out:
	iscsi_login_free(&login);
	pdu_reader_free(&r);
	return 0;
}
