/* SPDX-License-Identifier: Apache-2.0 */
#include "vtl/tcmu/ring.h"

#include "vtl/tcmu/uapi.h"
#include <stddef.h>
#include <string.h>

#include "common/scsi_proto.h"
#include "common/scsi_sense.h"
#include "common/vtl_error.h"

uint8_t tcmu_cdb_len(const uint8_t *cdb)
{
	/* The ring gives no length: the group gives it, or a variable length CDB its own (SPC-4 4.2.4). */
	if (cdb[0] == SCSI_OP_VARIABLE_LENGTH)
		return (uint8_t)(SCSI_CDB_VARIABLE_FIXED + cdb[SCSI_CDB_VARIABLE_ADDL_BYTE]);
	return scsi_cdb_group_len(cdb[0]);
}

static struct tcmu_mailbox *mailbox(const struct tcmu_ring *r)
{
	return (struct tcmu_mailbox *)r->map;
}

static struct tcmu_cmd_entry *entry_at(const struct tcmu_ring *r, uint32_t off)
{
	return (struct tcmu_cmd_entry *)(r->map + r->cmdr_off + off);
}

int tcmu_ring_init(struct tcmu_ring *r, void *map, size_t len)
{
	memset(r, 0, sizeof *r);
	if (!map || len < sizeof(struct tcmu_mailbox))
		return VTL_E_INVAL;
	const struct tcmu_mailbox *mb = map;
	if (mb->version != TCMU_MAILBOX_VERSION || mb->cmdr_off < sizeof *mb || mb->cmdr_size == 0 ||
	    (uint64_t)mb->cmdr_off + mb->cmdr_size > len || mb->cmd_tail >= mb->cmdr_size ||
	    mb->cmd_tail % TCMU_OP_ALIGN_SIZE)
		return VTL_E_INVAL;
	r->map = map;
	r->map_len = len;
	r->cmdr_off = mb->cmdr_off;
	r->cmdr_size = mb->cmdr_size;
	atomic_store(&r->next, mb->cmd_tail);
	r->read_len = mb->flags & TCMU_MAILBOX_FLAG_CAP_READ_LEN;
	return VTL_OK;
}

/* The length of the entry at off, or 0 when it cannot be a sound entry (the kernel's side is broken). */
static uint32_t entry_len(const struct tcmu_ring *r, uint32_t off)
{
	if (r->cmdr_size - off < sizeof(struct tcmu_cmd_entry_hdr))
		return 0;
	uint32_t len = tcmu_hdr_get_len(entry_at(r, off)->hdr.len_op);
	return len && len % TCMU_OP_ALIGN_SIZE == 0 && len <= r->cmdr_size - off ? len : 0;
}

static uint32_t advance(const struct tcmu_ring *r, uint32_t off, uint32_t len)
{
	return (off + len) % r->cmdr_size;
}

/* Whether [off, off + len) lies inside the map. */
static bool in_map(const struct tcmu_ring *r, uint64_t off, uint64_t len)
{
	return off <= r->map_len && len <= r->map_len - off;
}

/* Fills out from the command entry at off; false when it points outside the map. */
static bool take_cmd(struct tcmu_ring *r, uint32_t off, uint32_t len, struct tcmu_ring_cmd *out)
{
	const struct tcmu_cmd_entry *e = entry_at(r, off);
	memset(&out->cmd, 0, sizeof out->cmd);
	out->off = off;
	out->cmd_id = e->hdr.cmd_id;
	out->malformed = false;
	size_t fixed = offsetof(struct tcmu_cmd_entry, req.iov);
	uint64_t niov = (uint64_t)e->req.iov_cnt + e->req.iov_bidi_cnt + e->req.iov_dif_cnt;
	if (len < sizeof *e || e->req.iov_cnt > TCMU_RING_IOV_MAX || niov > (len - fixed) / sizeof(struct iovec) ||
	    !in_map(r, e->req.cdb_off, 1))
		return false;
	const uint8_t *cdb = r->map + e->req.cdb_off;
	uint8_t cdb_len = tcmu_cdb_len(cdb);
	if (!cdb_len || cdb_len > SCSI_CDB_MAX || !in_map(r, e->req.cdb_off, cdb_len))
		return false;
	memcpy(out->cmd.cdb, cdb, cdb_len);
	out->cmd.cdb_len = cdb_len;
	size_t total = 0;
	for (uint32_t i = 0; i < e->req.iov_cnt; i++) {
		/* The kernel gives offsets into the mapped region, not addresses. */
		uint64_t at = (uint64_t)(uintptr_t)e->req.iov[i].iov_base, n = e->req.iov[i].iov_len;
		if (!in_map(r, at, n))
			return false;
		out->iov[i].iov_base = r->map + at;
		out->iov[i].iov_len = (size_t)n;
		total += (size_t)n;
	}
	out->cmd.iov = out->iov;
	out->cmd.iov_cnt = (int)e->req.iov_cnt;
	out->cmd.xfer_len = total;
	out->cmd.dir = total ? SCSI_DIR_IN : SCSI_DIR_NONE; /* the core works from the CDB; the kernel knows the way */
	return true;
}

int tcmu_ring_next(struct tcmu_ring *r, struct tcmu_ring_cmd *out)
{
	const struct tcmu_mailbox *mb = mailbox(r);
	uint32_t head = __atomic_load_n(&mb->cmd_head, __ATOMIC_ACQUIRE);
	uint32_t off = atomic_load(&r->next);
	while (off != head) {
		uint32_t len = entry_len(r, off);
		if (!len)
			return 0; /* not an entry: wait for the kernel (or its reset of the ring) */
		struct tcmu_cmd_entry *e = entry_at(r, off);
		enum tcmu_opcode op = tcmu_hdr_get_op(e->hdr.len_op);
		if (op == TCMU_OP_CMD) {
			if (!take_cmd(r, off, len, out)) {
				/* Answered, never run: an entry we cannot read safely is a target failure. */
				r->malformed++;
				out->malformed = true;
				out->off = off;
				out->cmd_id = e->hdr.cmd_id;
				out->cmd.iov = NULL;
				out->cmd.iov_cnt = 0;
				scsi_fail(&out->cmd, sense_of(SK_HARDWARE_ERROR, ASC_INTERNAL_TARGET_FAILURE));
			}
			atomic_store(&r->next, advance(r, off, len));
			return 1;
		}
		if (op != TCMU_OP_PAD && op != TCMU_OP_TMR)
			e->hdr.uflags |= TCMU_UFLAG_UNKNOWN_OP;
		r->skipped++;
		off = advance(r, off, len);
		atomic_store(&r->next, off);
	}
	return 0;
}

/* Writes the response of c into its entry e: status, sense, and the length read when the kernel takes it. */
static void respond(struct tcmu_cmd_entry *e, const struct scsi_cmd *c, bool read_len)
{
	memset(&e->rsp, 0, sizeof e->rsp);
	e->rsp.scsi_status = (uint8_t)c->status;
	if (c->status == SCSI_CHECK_CONDITION) {
		if (c->sense_desc)
			sense_encode_desc(&c->sense, (uint8_t *)e->rsp.sense_buffer, TCMU_SENSE_BUFFERSIZE);
		else
			sense_encode(&c->sense, (uint8_t *)e->rsp.sense_buffer, TCMU_SENSE_BUFFERSIZE);
	}
	if (read_len) {
		/* A short tape block reads less than asked: the kernel reports the rest as residual. */
		e->hdr.uflags |= TCMU_UFLAG_READ_LEN;
		e->rsp.read_len = (uint32_t)c->data_len;
	}
}

void tcmu_ring_complete(struct tcmu_ring *r, const struct tcmu_ring_cmd *rc)
{
	struct tcmu_cmd_entry *e = entry_at(r, rc->off);
	uint32_t len = tcmu_hdr_get_len(e->hdr.len_op);
	/* The response overlays the request; the kernel makes every command entry big enough for it. */
	if (len >= sizeof *e)
		respond(e, &rc->cmd, r->read_len);
	/* Everything before this entry was completed or stepped over; what follows it up to next may be too. */
	uint32_t t = advance(r, rc->off, len);
	uint32_t next = atomic_load(&r->next);
	while (t != next) {
		uint32_t flen = entry_len(r, t);
		if (!flen || tcmu_hdr_get_op(entry_at(r, t)->hdr.len_op) == TCMU_OP_CMD)
			break;
		t = advance(r, t, flen);
	}
	__atomic_store_n(&mailbox(r)->cmd_tail, t, __ATOMIC_RELEASE);
}
