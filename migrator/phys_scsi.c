/* SPDX-License-Identifier: Apache-2.0 */
#include "migrator/phys_scsi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/bytes.h"
#include "common/vtl_error.h"

/* INQUIRY (SPC-4 6.6): the standard data's first bytes, the unit serial number page (byte 3 its length). */
#define INQ_EVPD 0x01
#define INQ_STD_LEN 36
#define VPD_SERIAL 0x80
#define VPD_HDR 4
#define VPD_LEN 255

/* READ POSITION (SSC-4): the short and long forms' lengths, byte 0's flags, where the numbers are. */
#define RP_SHORT_LEN 20
#define RP_LONG_LEN 32
#define RP_BOP 0x80              /* byte 0 of both forms */
#define RP_EOP 0x40              /* between early warning and end of partition */
#define RP_LOCATION_UNKNOWN 0x04 /* short: LOLU; long: LONU */
#define RP_SHORT_BLOCK 4         /* 4 bytes: first logical object location */
#define RP_LONG_BLOCK 8          /* 8 bytes: logical object number */
#define RP_LONG_FILE 16          /* 8 bytes: logical file identifier */
#define READ_POSITION_CDB_LEN 10

/* READ BLOCK LIMITS (SSC-4): the maximum block length at bytes 1-3. */
#define RBL_LEN 6
#define RBL_MAX 1
#define RBL_MAX_LEN 3

/* LOG SENSE (SPC-4 6.6): page control in byte 2, allocation length at bytes 7-8. */
#define LOG_PC_CUMULATIVE 0x40 /* page control 01b */
#define LOG_TAPEALERT 0x2E     /* SSC-4 TapeAlert log page: parameters 0001h..0040h, one flag byte each */
#define LOG_LEN (4 + 64 * 5)   /* the page header and 64 parameters of 4 + 1 bytes */
#define LOG_ALLOC 7
#define LOG_SENSE_CDB_LEN 10

#define BUSY_WAIT_MS 200
#define READY_POLL_FIRST_MS 50
#define READY_POLL_MAX_MS 1000

int phys_scsi_unit_init(struct phys_scsi_unit *u, enum vtl_lock_rank rank)
{
	u->rank = rank;
	if (pthread_mutex_init(&u->mu, NULL) != 0)
		return VTL_E_NOMEM;
	u->mu_ready = true;
	return VTL_OK;
}

void phys_scsi_unit_destroy(struct phys_scsi_unit *u)
{
	if (u->mu_ready)
		(void)pthread_mutex_destroy(&u->mu); /* fails only for a held lock: close runs alone (phys.h) */
	u->mu_ready = false;
}

void phys_scsi_lock(struct phys_scsi_unit *u)
{
	vtl_lock(&u->mu, u->rank);
}

void phys_scsi_unlock(struct phys_scsi_unit *u)
{
	vtl_unlock(&u->mu, u->rank);
}

int phys_scsi_init(struct phys_scsi *s, const struct phys_ops *ops, const struct phys_scsi_transport *tr,
		   unsigned busy_retries, size_t buf_len)
{
	s->pub.ops = ops;
	s->tr = tr;
	s->busy_retries = busy_retries;
	s->changer.id = -1;
	s->buf_len = buf_len;
	s->buf = malloc(buf_len);
	if (!s->buf)
		return VTL_E_NOMEM;
	return phys_scsi_unit_init(&s->changer, VTL_LOCK_PHYS_CHANGER);
}

void phys_scsi_release(struct phys_scsi *s)
{
	free(s->buf);
	s->buf = NULL;
	phys_scsi_unit_destroy(&s->changer);
}

/* ------------------------------------------------------------------ commands */

static int exec_once(struct phys_scsi *s, struct phys_scsi_unit *u, const char *op, const uint8_t *cdb,
		     unsigned cdb_len, enum phys_scsi_dir dir, void *buf, size_t len, struct phys_scsi_reply *r)
{
	struct phys_scsi_result res;
	memset(r, 0, sizeof *r);
	memset(&res, 0, sizeof res);
	int rc = s->tr->execute(s, u, op, cdb, cdb_len, dir, buf, len, &res);
	if (rc != VTL_OK)
		return rc;
	r->status = res.status;
	if (dir == PHYS_SCSI_IN)
		r->got = res.residual < len ? len - res.residual : 0;
	size_t n = res.sense_len < sizeof res.sense ? res.sense_len : sizeof res.sense;
	r->sense = n && sense_decode(res.sense, n, &r->s);
	return VTL_OK;
}

static bool medium_may_have_moved(const struct phys_scsi_reply *r)
{
	uint8_t asc = SCSI_ASC_OF(r->s.asc);
	return r->s.key == SK_UNIT_ATTENTION && (asc == SCSI_ASC_MEDIUM_CHANGED || asc == SCSI_ASC_RESET);
}

int phys_scsi_exec(struct phys_scsi *s, struct phys_scsi_unit *u, const char *op, const uint8_t *cdb,
		   unsigned cdb_len, enum phys_scsi_dir dir, void *buf, size_t len, unsigned flags,
		   struct phys_scsi_reply *r)
{
	if ((flags & PHYS_SCSI_POSITIONAL) && u->position_lost)
		return phys_fail(&s->pub, VTL_E_IO,
				 "%s: %s: not sent: the drive was reset or its tape changed since it was last positioned; "
				 "rewind or locate first",
				 u->name, op);
	for (unsigned attempt = 0;; attempt++) {
		int rc = exec_once(s, u, op, cdb, cdb_len, dir, buf, len, r);
		if (rc != VTL_OK)
			return rc;
		bool ua = r->status == SCSI_CHECK_CONDITION && r->sense && r->s.key == SK_UNIT_ATTENTION;
		/* Whichever command takes it (a status poll, too), this attention means the position may be lost. */
		if (ua && medium_may_have_moved(r))
			u->position_lost = true;
		if (ua && (flags & PHYS_SCSI_POSITIONAL) && u->position_lost)
			return VTL_OK;
		if (ua && attempt < PHYS_SCSI_UA_RETRIES)
			continue;
		if ((r->status == SCSI_BUSY || r->status == SCSI_TASK_SET_FULL) && attempt < s->busy_retries) {
			phys_sleep_ms(BUSY_WAIT_MS);
			continue;
		}
		return VTL_OK;
	}
}

int phys_scsi_rc_of(const struct phys_scsi_reply *r)
{
	if (r->status == SCSI_RESERVATION_CONFLICT)
		return VTL_E_BUSY;
	if (r->status != SCSI_CHECK_CONDITION || !r->sense)
		return VTL_E_IO;
	uint8_t asc = SCSI_ASC_OF(r->s.asc);
	if (asc == SCSI_ASC_INCOMPATIBLE)
		return VTL_E_INCOMPATIBLE;
	switch (r->s.key) {
	case SK_MEDIUM_ERROR:
		return VTL_E_MEDIUM;
	case SK_DATA_PROTECT:
		return VTL_E_READONLY;
	case SK_BLANK_CHECK:
		return VTL_E_EOD;
	case SK_VOLUME_OVERFLOW:
		return VTL_E_EOM;
	case SK_NO_SENSE:
		/* Spacing or locating backward ran into the beginning of the tape: no such filemark or block. */
		return r->s.asc == ASC_BOT_DETECTED ? VTL_E_NOTFOUND : VTL_E_IO;
	case SK_ILLEGAL_REQUEST:
		if (r->s.asc == ASC_MEDIUM_SOURCE_EMPTY)
			return VTL_E_SRC_EMPTY;
		if (r->s.asc == ASC_MEDIUM_DESTINATION_FULL)
			return VTL_E_DST_FULL;
		if (r->s.asc == ASC_MEDIUM_MAGAZINE_NOT_ACCESSIBLE || r->s.asc == ASC_MEDIUM_MAGAZINE_REMOVED)
			return VTL_E_INACCESSIBLE;
		if (asc == SCSI_ASC_REMOVAL_PREVENTED)
			return VTL_E_BUSY;
		return VTL_E_INVAL;
	default:
		return VTL_E_IO;
	}
}

static const char *status_name(int status)
{
	switch (status) {
	case SCSI_GOOD:
		return "GOOD";
	case SCSI_CHECK_CONDITION:
		return "CHECK CONDITION without sense data";
	case SCSI_BUSY:
		return "BUSY";
	case SCSI_RESERVATION_CONFLICT:
		return "RESERVATION CONFLICT";
	case SCSI_TASK_SET_FULL:
		return "TASK SET FULL";
	case SCSI_ACA_ACTIVE:
		return "ACA ACTIVE";
	case SCSI_TASK_ABORTED:
		return "TASK ABORTED";
	default:
		return "unexpected status";
	}
}

int phys_scsi_fail_reply(struct phys_scsi *s, const struct phys_scsi_unit *u, const char *op,
			 const struct phys_scsi_reply *r)
{
	char what[128];
	if (r->status == SCSI_CHECK_CONDITION && r->sense)
		phys_sense_text(r->s.key, SCSI_ASC_OF(r->s.asc), SCSI_ASCQ_OF(r->s.asc), what, sizeof what);
	else
		snprintf(what, sizeof what, "%s (status %02Xh)", status_name(r->status), (unsigned)r->status);
	const char *lost = r->sense && medium_may_have_moved(r) ? "; the tape position is no longer known" : "";
	return phys_fail(&s->pub, phys_scsi_rc_of(r), "%s: %s: %s%s", u->name, op, what, lost);
}

int phys_scsi_exec_good(struct phys_scsi *s, struct phys_scsi_unit *u, const char *op, const uint8_t *cdb,
			unsigned cdb_len, enum phys_scsi_dir dir, void *buf, size_t len, unsigned flags,
			struct phys_scsi_reply *r)
{
	int rc = phys_scsi_exec(s, u, op, cdb, cdb_len, dir, buf, len, flags, r);
	if (rc != VTL_OK)
		return rc;
	return r->status == SCSI_GOOD ? VTL_OK : phys_scsi_fail_reply(s, u, op, r);
}

int phys_scsi_run_nodata(struct phys_scsi *s, struct phys_scsi_unit *u, const char *op, const uint8_t *cdb,
			 unsigned cdb_len, unsigned flags)
{
	struct phys_scsi_reply r;
	return phys_scsi_exec_good(s, u, op, cdb, cdb_len, PHYS_SCSI_NONE, NULL, 0, flags, &r);
}

int phys_scsi_known_place(struct phys_scsi_unit *u, int rc)
{
	if (rc == VTL_OK)
		u->position_lost = false;
	return rc;
}

int phys_scsi_test_unit_ready(struct phys_scsi *s, struct phys_scsi_unit *u, struct phys_scsi_reply *r)
{
	uint8_t cdb[6] = {SCSI_OP_TEST_UNIT_READY};
	return phys_scsi_exec(s, u, "TEST UNIT READY", cdb, sizeof cdb, PHYS_SCSI_NONE, NULL, 0, 0, r);
}

int phys_scsi_wait_ready(struct phys_scsi *s, struct phys_scsi_unit *u, unsigned timeout_s)
{
	struct phys_wait w;
	phys_wait_start(&w, timeout_s, READY_POLL_FIRST_MS, READY_POLL_MAX_MS);
	for (;;) {
		struct phys_scsi_reply r;
		int rc = phys_scsi_test_unit_ready(s, u, &r);
		if (rc != VTL_OK)
			return rc;
		if (r.status == SCSI_GOOD)
			return phys_scsi_known_place(u, VTL_OK); /* a tape just loaded is at its beginning */
		/* 04/xx: becoming ready, or an operation in progress; 3A: the tape is not yet in the drive's throat. */
		uint8_t asc = SCSI_ASC_OF(r.s.asc);
		bool coming = r.status == SCSI_CHECK_CONDITION && r.sense && r.s.key == SK_NOT_READY &&
			      (asc == SCSI_ASC_NOT_READY || asc == SCSI_ASC_MEDIUM_NOT_PRESENT);
		if (!coming || !phys_wait_more(&w)) {
			char op[64];
			snprintf(op, sizeof op, "not ready after a load (waited up to %u s)", timeout_s);
			return phys_scsi_fail_reply(s, u, op, &r);
		}
	}
}

/* ------------------------------------------------------------- drive queries */

int phys_scsi_read_position(struct phys_scsi *s, struct phys_scsi_unit *u, bool *short_form,
			    struct phys_drive_status *st)
{
	uint8_t b[RP_LONG_LEN];
	struct phys_scsi_reply r;
	if (!*short_form) {
		uint8_t cdb[READ_POSITION_CDB_LEN] = {SCSI_OP_READ_POSITION, SCSI_RP_LONG};
		int rc = phys_scsi_exec(s, u, "READ POSITION (long form)", cdb, sizeof cdb, PHYS_SCSI_IN, b, RP_LONG_LEN,
					0, &r);
		if (rc != VTL_OK)
			return rc;
		if (r.status == SCSI_GOOD && r.got >= RP_LONG_LEN) {
			st->bot = b[0] & RP_BOP;
			st->early_warning = b[0] & RP_EOP;
			st->block = be_get(b + RP_LONG_BLOCK, 8);
			st->file = (b[0] & RP_LOCATION_UNKNOWN) ? UINT64_MAX : be_get(b + RP_LONG_FILE, 8);
			return VTL_OK;
		}
		if (!(r.status == SCSI_CHECK_CONDITION && r.sense && r.s.key == SK_ILLEGAL_REQUEST))
			return phys_scsi_fail_reply(s, u, "READ POSITION (long form)", &r);
		*short_form = true; /* an older drive: remember, and use the short form from now on */
	}
	uint8_t cdb[READ_POSITION_CDB_LEN] = {SCSI_OP_READ_POSITION, SCSI_RP_SHORT};
	int rc = phys_scsi_exec_good(s, u, "READ POSITION", cdb, sizeof cdb, PHYS_SCSI_IN, b, RP_SHORT_LEN, 0, &r);
	if (rc != VTL_OK)
		return rc;
	if (r.got < RP_SHORT_LEN)
		return phys_fail(&s->pub, VTL_E_IO, "%s: READ POSITION: %zu bytes, short of %u", u->name, r.got,
				 RP_SHORT_LEN);
	st->bot = b[0] & RP_BOP;
	st->early_warning = b[0] & RP_EOP;
	st->block = be_get(b + RP_SHORT_BLOCK, 4);
	st->file = UINT64_MAX; /* the short form has no file number */
	return VTL_OK;
}

int phys_scsi_read_block_limits(struct phys_scsi *s, struct phys_scsi_unit *u, uint32_t *max)
{
	uint8_t b[RBL_LEN];
	uint8_t cdb[6] = {SCSI_OP_READ_BLOCK_LIMITS};
	struct phys_scsi_reply r;
	*max = 0;
	int rc = phys_scsi_exec(s, u, "READ BLOCK LIMITS", cdb, sizeof cdb, PHYS_SCSI_IN, b, sizeof b, 0, &r);
	if (rc == VTL_OK && r.status == SCSI_GOOD && r.got >= RBL_MAX + RBL_MAX_LEN)
		*max = (uint32_t)be_get(b + RBL_MAX, RBL_MAX_LEN);
	return rc;
}

int phys_scsi_tapealert(struct phys_scsi *s, struct phys_scsi_unit *u, uint64_t *flags)
{
	uint8_t log[LOG_LEN];
	uint8_t cdb[LOG_SENSE_CDB_LEN] = {SCSI_OP_LOG_SENSE, 0, LOG_PC_CUMULATIVE | LOG_TAPEALERT};
	be_put(cdb + LOG_ALLOC, sizeof log, 2);
	struct phys_scsi_reply r;
	*flags = 0;
	int rc = phys_scsi_exec(s, u, "LOG SENSE (TapeAlert)", cdb, sizeof cdb, PHYS_SCSI_IN, log, sizeof log, 0, &r);
	if (rc == VTL_OK && r.status == SCSI_GOOD)
		*flags = phys_tapealert_parse(log, r.got);
	return rc;
}

int phys_scsi_device_type(struct phys_scsi *s, struct phys_scsi_unit *u, int *type)
{
	uint8_t b[INQ_STD_LEN];
	uint8_t cdb[6] = {SCSI_OP_INQUIRY, 0, 0, 0, INQ_STD_LEN};
	struct phys_scsi_reply r;
	*type = -1;
	int rc = phys_scsi_exec_good(s, u, "INQUIRY", cdb, sizeof cdb, PHYS_SCSI_IN, b, sizeof b, 0, &r);
	if (rc == VTL_OK && r.got >= 1 && (b[0] >> SCSI_PQ_SHIFT) == 0)
		*type = b[0] & SCSI_PDT_MASK;
	return rc;
}

int phys_scsi_serial(struct phys_scsi *s, struct phys_scsi_unit *u, char *serial, size_t cap)
{
	uint8_t b[VPD_LEN];
	uint8_t cdb[6] = {SCSI_OP_INQUIRY, INQ_EVPD, VPD_SERIAL, 0, VPD_LEN};
	struct phys_scsi_reply r;
	serial[0] = 0;
	int rc = phys_scsi_exec(s, u, "INQUIRY (unit serial number)", cdb, sizeof cdb, PHYS_SCSI_IN, b, sizeof b, 0, &r);
	/* A drive without the page is matched by order, as when the changer gives no identifiers. */
	if (rc == VTL_OK && r.status == SCSI_GOOD && r.got >= VPD_HDR && b[1] == VPD_SERIAL) {
		size_t n = b[3] < r.got - VPD_HDR ? b[3] : r.got - VPD_HDR;
		phys_text_field(serial, cap, b + VPD_HDR, n);
	}
	return rc;
}

/* ------------------------------------------------------------- the changer */

/* phys_changer_read_fn: READ ELEMENT STATUS on the changer. */
static int changer_read(struct phys_lib *l, const uint8_t *cdb, unsigned cdb_len, uint8_t *buf, size_t len,
			size_t *got)
{
	struct phys_scsi *s = phys_scsi_of(l);
	struct phys_scsi_reply r;
	int rc = phys_scsi_exec_good(s, &s->changer, "READ ELEMENT STATUS", cdb, cdb_len, PHYS_SCSI_IN, buf, len, 0,
				     &r);
	*got = r.got;
	return rc;
}

int phys_scsi_read_elements(struct phys_scsi *s, enum phys_elem_type type, bool dvcid, phys_element_fn *fn,
			    void *arg)
{
	const struct phys_changer c = {changer_read, s->changer.name, s->buf, s->buf_len};
	return phys_read_elements(&s->pub, &c, type, dvcid, fn, arg);
}

int phys_scsi_inventory(struct phys_lib *l, struct phys_element *out, unsigned cap, unsigned *n)
{
	struct phys_scsi *s = phys_scsi_of(l);
	const struct phys_changer c = {changer_read, s->changer.name, s->buf, s->buf_len};
	phys_scsi_lock(&s->changer);
	int rc = phys_inventory(l, &c, out, cap, n);
	phys_scsi_unlock(&s->changer);
	return rc;
}

static void first_transport(const struct phys_element_desc *e, void *arg)
{
	long *addr = arg;
	if (*addr < 0)
		*addr = e->e.address;
}

int phys_scsi_find_transport(struct phys_scsi *s)
{
	long transport = -1;
	int rc = phys_scsi_read_elements(s, PHYS_ELEM_TRANSPORT, false, first_transport, &transport);
	if (rc != VTL_OK)
		return rc;
	s->transport = transport < 0 ? 0 : (uint16_t)transport; /* 0 asks for the default robot (SMC-3) */
	return VTL_OK;
}

int phys_scsi_move(struct phys_scsi *s, uint16_t from, uint16_t to)
{
	uint8_t cdb[PHYS_MOVE_CDB_LEN];
	char op[48];
	phys_move_cdb(cdb, s->transport, from, to, op, sizeof op);
	return phys_scsi_run_nodata(s, &s->changer, op, cdb, sizeof cdb, 0);
}

int phys_scsi_move_medium(struct phys_lib *l, const struct phys_scsi_move_ops *ops, uint16_t from, uint16_t to)
{
	struct phys_scsi *s = phys_scsi_of(l);
	int src = phys_drive_of(l, from), dst = phys_drive_of(l, to);
	struct phys_scsi_unit *su = src >= 0 ? ops->unit(s, (unsigned)src) : NULL;
	struct phys_scsi_unit *du = dst >= 0 ? ops->unit(s, (unsigned)dst) : NULL;
	/* The drive whose tape the robot takes (or, loading, the drive it fills) finishes its running call first;
	 * a move between two drives never holds both (one rank), the destination is empty until the robot is done. */
	struct phys_scsi_unit *first = su ? su : du;
	phys_scsi_lock(&s->changer);
	if (first)
		phys_scsi_lock(first);
	int rc = phys_scsi_move(s, from, to);
	if (rc == VTL_OK && su)
		rc = ops->left(s, (unsigned)src);
	if (su)
		phys_scsi_unlock(su);
	if (rc != VTL_OK) {
		if (first && first != su)
			phys_scsi_unlock(first);
		phys_scsi_unlock(&s->changer);
		return rc;
	}
	if (du && su)
		phys_scsi_lock(du);
	phys_scsi_unlock(&s->changer);
	if (!du)
		return VTL_OK;
	rc = ops->arrived(s, (unsigned)dst);
	phys_scsi_unlock(du);
	return rc;
}

static void add_drive_element(const struct phys_element_desc *e, void *arg)
{
	struct phys_scsi_drive_elems *a = arg;
	if (a->n < PHYS_SCSI_MAX_ELEMS)
		a->e[a->n++] = *e;
}

int phys_scsi_drive_elements(struct phys_scsi *s, struct phys_scsi_drive_elems *a)
{
	a->n = 0;
	int rc = phys_scsi_read_elements(s, PHYS_ELEM_DRIVE, true, add_drive_element, a);
	if (rc == VTL_E_INVAL) {
		/* An older changer (SMC-2) refuses DVCID: ask without, and match by order. */
		a->n = 0;
		rc = phys_scsi_read_elements(s, PHYS_ELEM_DRIVE, false, add_drive_element, a);
	}
	return rc;
}
