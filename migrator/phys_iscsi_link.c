/* SPDX-License-Identifier: Apache-2.0 */
#include "migrator/phys_iscsi_link.h"

#include <stdint.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include <iscsi/iscsi.h>
#include <iscsi/scsi-lowlevel.h>

#include "common/bytes.h"
#include "common/clock.h"
#include "common/vtl_error.h"

#define SENSE_LEN_FIELD 2 /* libiscsi's data-in on CHECK CONDITION: the sense length, then the sense data */
#define ISID_RANDOM_BYTES 3 /* RFC 7143 11.12.5: ISID type 10b, a 24-bit random part, then a 16-bit qualifier */
#define ISID_RANDOM_MASK 0xFFFFFFu

uint32_t phys_iscsi_link_isid_random(void)
{
	uint8_t b[ISID_RANDOM_BYTES];
	if (getrandom(b, sizeof b, GRND_NONBLOCK) == (ssize_t)sizeof b)
		return (uint32_t)be_get(b, sizeof b);
	/* No entropy yet (early boot): the process and the time differ between two migrators just as well. */
	return (uint32_t)(vtl_mono_ns() ^ (uint64_t)getpid()) & ISID_RANDOM_MASK;
}

static int login(struct phys_lib *pl, struct iscsi_context *ctx, const struct phys_iscsi_config *cfg, uint16_t q,
		 const char *who)
{
	if (iscsi_set_targetname(ctx, cfg->target_iqn) || iscsi_set_session_type(ctx, ISCSI_SESSION_NORMAL) ||
	    iscsi_set_header_digest(ctx, ISCSI_HEADER_DIGEST_NONE_CRC32C))
		return phys_fail(pl, VTL_E_CONFIG, "iSCSI: %s", iscsi_get_error(ctx));
	if (cfg->chap_user && cfg->chap_user[0] &&
	    iscsi_set_initiator_username_pwd(ctx, cfg->chap_user, cfg->chap_secret))
		return phys_fail(pl, VTL_E_CONFIG, "iSCSI: CHAP user %s: %s", cfg->chap_user, iscsi_get_error(ctx));
	/* Mutual CHAP: libiscsi sends a challenge of its own and fails the login unless the target answers it. */
	bool mutual = cfg->mutual_user && cfg->mutual_user[0];
	if (mutual && iscsi_set_target_username_pwd(ctx, cfg->mutual_user, cfg->mutual_secret))
		return phys_fail(pl, VTL_E_CONFIG, "iSCSI: mutual CHAP user %s: %s", cfg->mutual_user,
				 iscsi_get_error(ctx));
	/* A tape command must never be replayed behind our back: a lost connection is an error for the caller. */
	iscsi_set_noautoreconnect(ctx, 1);
	if (cfg->command_timeout_s)
		iscsi_set_timeout(ctx, (int)cfg->command_timeout_s);
	/* LUN -1: libiscsi sends no TEST UNIT READY of its own; the library takes every LUN's attentions
	 * when it looks for its units (phys_iscsi.c discover). */
	if (iscsi_full_connect_sync(ctx, cfg->portal, -1) != 0)
		return phys_fail(pl, VTL_E_IO, "iSCSI: %s%slogin to %s at %s as %s failed: %s%s%s%s%s", who ? who : "",
				 who ? ": " : "", cfg->target_iqn, cfg->portal, cfg->initiator_iqn, iscsi_get_error(ctx),
				 mutual ? " (mutual CHAP: the target must prove it knows the secret of " : "",
				 mutual ? cfg->mutual_user : "", mutual ? ")" : "",
				 /* The changer's session got in with the same credentials: what is left is a limit. */
				 q ? "; the library needs one session for the changer and one per drive, which the "
				     "target must allow one initiator" : "");
	return VTL_OK;
}

int phys_iscsi_link_open(struct phys_lib *pl, const struct phys_iscsi_config *cfg, uint32_t rnd, uint16_t q,
			 const char *who, struct iscsi_context **out)
{
	*out = NULL;
	struct iscsi_context *ctx = iscsi_create_context(cfg->initiator_iqn);
	if (!ctx)
		return phys_fail(pl, VTL_E_NOMEM, "iSCSI: cannot create a context for %s", cfg->initiator_iqn);
	/* libiscsi gives each context a rand() ISID with qualifier 0, so two of one process may meet; and a
	 * login with the (InitiatorName, ISID) of a live session reinstates it, closing the other (RFC 7143
	 * 6.3.5). One random part per library and a qualifier per session keep the sessions distinct I_T nexuses. */
	iscsi_set_isid_random(ctx, rnd, q);
	int rc = login(pl, ctx, cfg, q, who);
	if (rc != VTL_OK) {
		phys_iscsi_link_close(ctx);
		return rc;
	}
	*out = ctx;
	return VTL_OK;
}

int phys_iscsi_link_execute(struct phys_lib *pl, struct iscsi_context *ctx, unsigned timeout_s, int lun,
			    const char *who, const char *op, const uint8_t *cdb, unsigned cdb_len,
			    enum phys_scsi_dir dir, void *buf, size_t len, struct phys_scsi_result *res)
{
	int xfer = dir == PHYS_SCSI_IN ? SCSI_XFER_READ : dir == PHYS_SCSI_OUT ? SCSI_XFER_WRITE : SCSI_XFER_NONE;
	/* libiscsi copies the CDB into the task and only reads a data-out buffer: the casts drop const only. */
	struct scsi_task *t = scsi_create_task((int)cdb_len, (unsigned char *)(uintptr_t)cdb, xfer, (int)len);
	if (!t)
		return phys_fail(pl, VTL_E_NOMEM, "%s: %s: no memory for the task", who, op);
	struct scsi_iovec iov = {buf, len};
	if (xfer == SCSI_XFER_READ && len)
		scsi_task_set_iov_in(t, &iov, 1);
	struct iscsi_data out = {len, buf};
	if (!iscsi_scsi_command_sync(ctx, lun, t, xfer == SCSI_XFER_WRITE ? &out : NULL)) {
		scsi_free_scsi_task(t);
		return phys_fail(pl, VTL_E_IO, "%s: %s: not sent: %s", who, op, iscsi_get_error(ctx));
	}
	int st = t->status;
	if (st == SCSI_STATUS_TIMEOUT || st == SCSI_STATUS_CANCELLED || st == SCSI_STATUS_ERROR) {
		scsi_free_scsi_task(t);
		if (st == SCSI_STATUS_TIMEOUT)
			return phys_fail(pl, VTL_E_IO, "%s: %s: no answer within %u s", who, op, timeout_s);
		return phys_fail(pl, VTL_E_IO, "%s: %s: %s", who, op, iscsi_get_error(ctx));
	}
	memset(res, 0, sizeof *res);
	res->status = st;
	if (xfer == SCSI_XFER_READ)
		res->residual = t->residual_status == SCSI_RESIDUAL_UNDERFLOW ? t->residual : 0;
	if (st == SCSI_STATUS_CHECK_CONDITION && t->datain.data && t->datain.size >= SENSE_LEN_FIELD) {
		size_t n = be_get(t->datain.data, SENSE_LEN_FIELD);
		if (n > (size_t)t->datain.size - SENSE_LEN_FIELD)
			n = (size_t)t->datain.size - SENSE_LEN_FIELD;
		if (n > sizeof res->sense)
			n = sizeof res->sense;
		memcpy(res->sense, t->datain.data + SENSE_LEN_FIELD, n);
		res->sense_len = n;
	}
	scsi_free_scsi_task(t);
	return VTL_OK;
}

void phys_iscsi_link_close(struct iscsi_context *ctx)
{
	if (!ctx)
		return;
	if (iscsi_is_logged_in(ctx))
		iscsi_logout_sync(ctx); /* a failed logout leaves nothing to undo: the context goes anyway */
	iscsi_destroy_context(ctx);
}
