/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The iSCSI physical library: every phys_ops call is one or a few SCSI
 * commands on one libiscsi session, sent with the synchronous API (the
 * migrator gives a library to one thread at a time, so blocking is what it
 * wants).
 *
 * Unit attentions: a new session gets one on every LUN (power on, reset),
 * a load gets one on the drive (medium may have changed). A command that
 * meets a unit attention was not executed (SAM-5 5.14), so it is simply sent
 * again, except where the attention says the drive's position may be lost
 * (reset, medium changed) and the command depends on that position: then it
 * is an error, because writing at an unknown place would destroy data.
 *
 * Sense comes from libiscsi as the raw bytes (2-byte length, then sense data)
 * in the task's data-in on CHECK CONDITION; its parsed form lacks the stream
 * bits (FILEMARK, EOM, ILI) and INFORMATION that tape needs, so this file
 * reads fixed and descriptor sense itself. Data-in goes straight into the
 * caller's buffer (scsi_task_set_iov_in), so a READ that ends in CHECK
 * CONDITION (a short block) keeps its data.
 */
#include "migrator/phys_iscsi.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <iscsi/iscsi.h>
#include <iscsi/scsi-lowlevel.h>

#include "common/bytes.h"
#include "common/vtl_error.h"

/* Operation codes of every device (SPC-5 annex table "operation codes"). */
#define OP_TEST_UNIT_READY 0x00
#define OP_INQUIRY 0x12
#define OP_MODE_SENSE6 0x1A
#define OP_LOG_SENSE 0x4D
#define OP_REPORT_LUNS 0xA0
/* Of tape drives (SSC-4 table "commands for sequential-access devices"). */
#define OP_REWIND 0x01
#define OP_READ_BLOCK_LIMITS 0x05
#define OP_READ6 0x08
#define OP_WRITE6 0x0A
#define OP_WRITE_FILEMARKS6 0x10
#define OP_SPACE6 0x11
#define OP_LOAD_UNLOAD 0x1B
#define OP_LOCATE10 0x2B
#define OP_READ_POSITION 0x34
#define OP_SPACE16 0x91
#define OP_LOCATE16 0x92
/* Of medium changers (SMC-3 table "commands for medium changer devices"). */

#define BUF_LEN (64u << 10) /* the answers of REPORT LUNS and READ ELEMENT STATUS (longer ones are paged) */

/* Peripheral device types (SPC-5 table "peripheral device type"). */
#define PDT_TAPE 0x01
#define PDT_CHANGER 0x08
#define PDT_MASK 0x1F
#define PQ_SHIFT 5 /* peripheral qualifier: 0 means a unit is connected */

/* INQUIRY (SPC-5 6.7). */
#define INQ_EVPD 0x01
#define INQ_STD_LEN 36
#define VPD_SERIAL 0x80 /* unit serial number page: byte 3 length, serial from byte 4 */
#define VPD_LEN 255

/* REPORT LUNS (SPC-5 6.33): 8-byte header, 8 bytes a LUN; bits 7..6 of byte 0 the addressing method. */
#define RL_HDR 8
#define RL_ENTRY 8
#define RL_ALLOC_FIRST 4096
#define RL_METHOD_MASK 0xC0
#define RL_METHOD_PERIPHERAL 0x00
#define RL_METHOD_FLAT 0x40
#define MAX_LUNS 64

/* Sense data (SPC-5 4.4): response codes, fixed format bytes and bits, descriptor types. */
#define SENSE_CODE_MASK 0x7F
#define SENSE_FIXED_CURRENT 0x70
#define SENSE_FIXED_DEFERRED 0x71
#define SENSE_DESC_CURRENT 0x72
#define SENSE_DESC_DEFERRED 0x73
#define SENSE_VALID 0x80      /* fixed byte 0: INFORMATION is valid */
#define SENSE_FILEMARK 0x80   /* fixed byte 2, descriptor 04h byte 3 */
#define SENSE_EOM 0x40
#define SENSE_ILI 0x20
#define SENSE_KEY_MASK 0x0F
#define SENSE_FIXED_ASC 12
#define SENSE_DESC_FIRST 8
#define DESC_INFORMATION 0x00 /* SPC-5 table "information sense data descriptor" */
#define DESC_STREAM 0x04      /* SSC-4 "stream commands sense data descriptor" */

/* ASC/ASCQ pairs acted on (SPC-5 table "ASC and ASCQ assignments"). */
#define ASC_NONE 0x00
#define ASCQ_FILEMARK 0x01
#define ASCQ_EOM 0x02
#define ASCQ_BOM 0x04
#define ASC_NOT_READY 0x04  /* 04/xx: logical unit not ready (becoming ready, in progress, ...) */
#define ASC_MEDIUM_CHANGED 0x28 /* not ready to ready change, medium may have changed */
#define ASC_RESET 0x29          /* power on, reset or bus device reset occurred */
#define ASC_INCOMPATIBLE 0x30
#define ASC_MEDIUM_NOT_PRESENT 0x3A
#define ASC_ELEMENT 0x3B        /* SMC: element and magazine conditions */
#define ASCQ_DESTINATION_FULL 0x0D
#define ASCQ_SOURCE_EMPTY 0x0E
#define ASCQ_MAGAZINE_NOT_ACCESSIBLE 0x11
#define ASCQ_MAGAZINE_REMOVED 0x12
#define ASC_REMOVAL_PREVENTED 0x53

/* MOVE MEDIUM (SMC-3 6.x): transport, source, destination at bytes 2, 4, 6. */

/* SSC-4 data commands. */
#define RW_VARIABLE 0x00         /* READ(6)/WRITE(6) byte 1: FIXED and SILI clear, one variable-length block */
#define XFER6_MAX 0xFFFFFFu      /* 24-bit transfer length */
#define SPACE_FILEMARKS 0x01     /* SPACE code */
#define SPACE6_MIN (-0x800000LL) /* 24-bit two's complement count */
#define SPACE6_MAX 0x7FFFFFLL
#define RP_SHORT 0x00            /* READ POSITION service actions */
#define RP_LONG 0x06
#define RP_SHORT_LEN 20
#define RP_LONG_LEN 32
#define RP_BOP 0x80              /* byte 0 of both forms */
#define RP_EOP 0x40              /* between early warning and end of partition */
#define RP_LOCATION_UNKNOWN 0x04 /* short: LOLU; long: LONU */
#define RBL_LEN 6
#define MS_DBD 0x08              /* MODE SENSE(6): no block descriptors */
#define MS_ALL_PAGES 0x3F
#define MS_LEN 255
#define MS_DEVICE_SPECIFIC 2
#define MS_WP 0x80
#define LOG_PC_CUMULATIVE 0x40   /* LOG SENSE byte 2: page control 01b */
#define LOG_TAPEALERT 0x2E       /* SSC-4 TapeAlert log page: parameters 0001h..0040h, one flag byte each */
#define LOG_LEN (4 + 64 * 5)     /* the page header and 64 parameters of 4 + 1 bytes */

/* Patience. */
#define UA_RETRIES 8              /* a new session queues a few attentions per LUN */
#define BUSY_RETRIES 50
#define BUSY_WAIT_MS 200
#define READY_TIMEOUT_DEFAULT_S 300 /* an LTO load and thread takes 15-60 s; a busy robot more */
#define READY_POLL_FIRST_MS 50
#define READY_POLL_MAX_MS 1000

/* A LUN and how errors name it ("changer (LUN 0)", "drive 1 (LUN 2)"). */
struct unit {
	int lun;
	char name[32];
	/* A reset or medium change was reported since the drive was last put at a known place (load, rewind,
	 * locate): until it is again, commands that depend on the position are refused. */
	bool position_lost;
};

struct iscsi_lib {
	struct phys_lib pub; /* first: the migrator sees only this */
	struct iscsi_context *ctx;
	unsigned ready_timeout_s;
	unsigned command_timeout_s;
	struct unit changer;
	uint16_t transport;               /* the robot's element address (0: the default one) */
	struct unit drive[PHYS_MAX_DRIVES];
	uint64_t written[PHYS_MAX_DRIVES]; /* bytes since the tape was loaded */
	bool short_position[PHYS_MAX_DRIVES]; /* the drive refused the long READ POSITION: use the short one */
	uint8_t *buf;                      /* BUF_LEN bytes for element status and REPORT LUNS */
};

/* What one command came back with. */
struct reply {
	int status;             /* SCSI status */
	bool sense;             /* sense data came with it */
	uint8_t key, asc, ascq;
	bool filemark, eom, ili; /* SSC stream bits */
	bool info_valid;
	int64_t info;           /* INFORMATION: the residue of a tape data command */
	size_t got;             /* data-in bytes received */
};

/* exec flags. */
#define EXEC_POSITIONAL 0x01 /* depends on the tape position: a reset or medium change is an error, not retried */

static struct iscsi_lib *lib_of(struct phys_lib *l)
{
	return (struct iscsi_lib *)l;
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* ------------------------------------------------------------------ commands */

static void parse_sense(const uint8_t *sb, size_t n, struct reply *r)
{
	if (n < 2)
		return;
	uint8_t code = sb[0] & SENSE_CODE_MASK;
	if (code == SENSE_FIXED_CURRENT || code == SENSE_FIXED_DEFERRED) {
		if (n < 3)
			return;
		r->sense = true;
		r->key = sb[2] & SENSE_KEY_MASK;
		r->filemark = sb[2] & SENSE_FILEMARK;
		r->eom = sb[2] & SENSE_EOM;
		r->ili = sb[2] & SENSE_ILI;
		if (n >= 7) {
			r->info_valid = sb[0] & SENSE_VALID;
			r->info = (int32_t)be_get(sb + 3, 4);
		}
		if (n >= SENSE_FIXED_ASC + 2) {
			r->asc = sb[SENSE_FIXED_ASC];
			r->ascq = sb[SENSE_FIXED_ASC + 1];
		}
	} else if (code == SENSE_DESC_CURRENT || code == SENSE_DESC_DEFERRED) {
		if (n < 4)
			return;
		r->sense = true;
		r->key = sb[1] & SENSE_KEY_MASK;
		r->asc = sb[2];
		r->ascq = sb[3];
		size_t end = n >= SENSE_DESC_FIRST ? SENSE_DESC_FIRST + (size_t)sb[7] : n;
		if (end > n)
			end = n;
		for (size_t at = SENSE_DESC_FIRST; at + 2 <= end;) {
			size_t dl = 2 + (size_t)sb[at + 1];
			if (at + dl > end)
				break;
			if (sb[at] == DESC_INFORMATION && dl >= 12) {
				r->info_valid = sb[at + 2] & SENSE_VALID;
				r->info = (int64_t)be_get(sb + at + 4, 8);
			} else if (sb[at] == DESC_STREAM && dl >= 4) {
				r->filemark = sb[at + 3] & SENSE_FILEMARK;
				r->eom = sb[at + 3] & SENSE_EOM;
				r->ili = sb[at + 3] & SENSE_ILI;
			}
			at += dl;
		}
	}
}

/* Sends cdb to u once: VTL_OK with *r when a SCSI status came back (whichever), else an error. */
static int exec_once(struct iscsi_lib *l, const struct unit *u, const char *op, const uint8_t *cdb, int cdb_len,
		     int dir, void *buf, size_t len, struct reply *r)
{
	memset(r, 0, sizeof *r);
	/* libiscsi copies the CDB into the task and only reads a data-out buffer: the casts drop const only. */
	struct scsi_task *t = scsi_create_task(cdb_len, (unsigned char *)cdb, dir, (int)len);
	if (!t)
		return phys_fail(&l->pub, VTL_E_NOMEM, "%s: %s: no memory for the task", u->name, op);
	struct scsi_iovec iov = {buf, len};
	if (dir == SCSI_XFER_READ && len)
		scsi_task_set_iov_in(t, &iov, 1);
	struct iscsi_data out = {len, buf};
	if (!iscsi_scsi_command_sync(l->ctx, u->lun, t, dir == SCSI_XFER_WRITE ? &out : NULL)) {
		scsi_free_scsi_task(t);
		return phys_fail(&l->pub, VTL_E_IO, "%s: %s: not sent: %s", u->name, op, iscsi_get_error(l->ctx));
	}
	r->status = t->status;
	if (r->status == SCSI_STATUS_TIMEOUT || r->status == SCSI_STATUS_CANCELLED || r->status == SCSI_STATUS_ERROR) {
		int st = r->status;
		scsi_free_scsi_task(t);
		if (st == SCSI_STATUS_TIMEOUT)
			return phys_fail(&l->pub, VTL_E_IO, "%s: %s: no answer within %u s", u->name, op,
					 l->command_timeout_s);
		return phys_fail(&l->pub, VTL_E_IO, "%s: %s: %s", u->name, op, iscsi_get_error(l->ctx));
	}
	if (dir == SCSI_XFER_READ) {
		size_t short_by = t->residual_status == SCSI_RESIDUAL_UNDERFLOW ? t->residual : 0;
		r->got = short_by < len ? len - short_by : 0;
	}
	if (r->status == SCSI_STATUS_CHECK_CONDITION && t->datain.data && t->datain.size >= 2) {
		size_t n = be_get(t->datain.data, 2);
		if (n > (size_t)t->datain.size - 2)
			n = (size_t)t->datain.size - 2;
		parse_sense(t->datain.data + 2, n, r);
	}
	scsi_free_scsi_task(t);
	return VTL_OK;
}

/* exec_once, sent again after a unit attention (the command was not executed) or while the unit is busy. */
static int exec(struct iscsi_lib *l, struct unit *u, const char *op, const uint8_t *cdb, int cdb_len, int dir,
		void *buf, size_t len, unsigned flags, struct reply *r)
{
	if ((flags & EXEC_POSITIONAL) && u->position_lost)
		return phys_fail(&l->pub, VTL_E_IO,
				 "%s: %s: not sent: the drive was reset or its tape changed since it was last positioned; "
				 "rewind or locate first",
				 u->name, op);
	for (unsigned attempt = 0;; attempt++) {
		int rc = exec_once(l, u, op, cdb, cdb_len, dir, buf, len, r);
		if (rc != VTL_OK)
			return rc;
		bool ua = r->status == SCSI_STATUS_CHECK_CONDITION && r->key == SCSI_SENSE_UNIT_ATTENTION;
		/* Whichever command takes it (a status poll, too), this attention means the position may be lost. */
		if (ua && (r->asc == ASC_MEDIUM_CHANGED || r->asc == ASC_RESET))
			u->position_lost = true;
		if (ua && (flags & EXEC_POSITIONAL) && u->position_lost)
			return VTL_OK;
		if (ua && attempt < UA_RETRIES)
			continue;
		if ((r->status == SCSI_STATUS_BUSY || r->status == SCSI_STATUS_TASK_SET_FULL) && attempt < BUSY_RETRIES) {
			sleep_ms(BUSY_WAIT_MS);
			continue;
		}
		return VTL_OK;
	}
}

/* The vtl_err a failed command stands for. */
static int rc_of(const struct reply *r)
{
	if (r->status == SCSI_STATUS_RESERVATION_CONFLICT)
		return VTL_E_BUSY;
	if (r->status != SCSI_STATUS_CHECK_CONDITION || !r->sense)
		return VTL_E_IO;
	if (r->asc == ASC_INCOMPATIBLE)
		return VTL_E_INCOMPATIBLE;
	switch (r->key) {
	case SCSI_SENSE_MEDIUM_ERROR:
		return VTL_E_MEDIUM;
	case SCSI_SENSE_DATA_PROTECTION:
		return VTL_E_READONLY;
	case SCSI_SENSE_BLANK_CHECK:
		return VTL_E_EOD;
	case SCSI_SENSE_OVERFLOW_COMMAND: /* VOLUME OVERFLOW */
		return VTL_E_EOM;
	case SCSI_SENSE_NO_SENSE:
		/* Spacing or locating backward ran into the beginning of the tape: no such filemark or block. */
		return r->asc == ASC_NONE && r->ascq == ASCQ_BOM ? VTL_E_NOTFOUND : VTL_E_IO;
	case SCSI_SENSE_ILLEGAL_REQUEST:
		if (r->asc == ASC_ELEMENT && r->ascq == ASCQ_SOURCE_EMPTY)
			return VTL_E_SRC_EMPTY;
		if (r->asc == ASC_ELEMENT && r->ascq == ASCQ_DESTINATION_FULL)
			return VTL_E_DST_FULL;
		if (r->asc == ASC_ELEMENT && (r->ascq == ASCQ_MAGAZINE_NOT_ACCESSIBLE || r->ascq == ASCQ_MAGAZINE_REMOVED))
			return VTL_E_INACCESSIBLE;
		if (r->asc == ASC_REMOVAL_PREVENTED)
			return VTL_E_BUSY;
		return VTL_E_INVAL;
	default:
		return VTL_E_IO;
	}
}

static const char *status_name(int status)
{
	switch (status) {
	case SCSI_STATUS_GOOD:
		return "GOOD";
	case SCSI_STATUS_CHECK_CONDITION:
		return "CHECK CONDITION without sense data";
	case SCSI_STATUS_BUSY:
		return "BUSY";
	case SCSI_STATUS_RESERVATION_CONFLICT:
		return "RESERVATION CONFLICT";
	case SCSI_STATUS_TASK_SET_FULL:
		return "TASK SET FULL";
	case SCSI_STATUS_ACA_ACTIVE:
		return "ACA ACTIVE";
	case SCSI_STATUS_TASK_ABORTED:
		return "TASK ABORTED";
	default:
		return "unexpected status";
	}
}

/* Records r as the failure of op on u ("drive 0 (LUN 1): WRITE(6): MEDIUM ERROR, write error (0C/00h)"). */
static int fail_reply(struct iscsi_lib *l, const struct unit *u, const char *op, const struct reply *r)
{
	char what[128];
	if (r->status == SCSI_STATUS_CHECK_CONDITION && r->sense)
		phys_sense_text(r->key, r->asc, r->ascq, what, sizeof what);
	else
		snprintf(what, sizeof what, "%s (status %02Xh)", status_name(r->status), (unsigned)r->status);
	const char *lost = r->key == SCSI_SENSE_UNIT_ATTENTION && (r->asc == ASC_MEDIUM_CHANGED || r->asc == ASC_RESET)
				   ? "; the tape position is no longer known"
				   : "";
	return phys_fail(&l->pub, rc_of(r), "%s: %s: %s%s", u->name, op, what, lost);
}

/* exec, where anything but GOOD is a failure. */
static int exec_good(struct iscsi_lib *l, struct unit *u, const char *op, const uint8_t *cdb, int cdb_len,
		     int dir, void *buf, size_t len, unsigned flags, struct reply *r)
{
	int rc = exec(l, u, op, cdb, cdb_len, dir, buf, len, flags, r);
	if (rc != VTL_OK)
		return rc;
	return r->status == SCSI_STATUS_GOOD ? VTL_OK : fail_reply(l, u, op, r);
}

/* A command without data that must end GOOD. */
static int run_nodata(struct iscsi_lib *l, struct unit *u, const char *op, const uint8_t *cdb, int cdb_len,
		      unsigned flags)
{
	struct reply r;
	return exec_good(l, u, op, cdb, cdb_len, SCSI_XFER_NONE, NULL, 0, flags, &r);
}

static int test_unit_ready(struct iscsi_lib *l, struct unit *u, struct reply *r)
{
	uint8_t cdb[6] = {OP_TEST_UNIT_READY};
	return exec(l, u, "TEST UNIT READY", cdb, sizeof cdb, SCSI_XFER_NONE, NULL, 0, 0, r);
}

/* ------------------------------------------------------- element status */

/* phys_changer_read_fn: READ ELEMENT STATUS on the changer LUN. */
static int changer_read(struct phys_lib *pl, const uint8_t *cdb, unsigned cdb_len, uint8_t *buf, size_t len,
			size_t *got)
{
	struct iscsi_lib *l = lib_of(pl);
	struct reply r;
	int rc = exec_good(l, &l->changer, "READ ELEMENT STATUS", cdb, (int)cdb_len, SCSI_XFER_READ, buf, len, 0, &r);
	*got = r.got;
	return rc;
}

/* Calls fn for every element of type (VOLTAG, and DVCID when asked). */
static int read_elements(struct iscsi_lib *l, enum phys_elem_type type, bool dvcid, phys_element_fn *fn,
			 void *arg)
{
	const struct phys_changer c = {changer_read, l->changer.name, l->buf, BUF_LEN};
	return phys_read_elements(&l->pub, &c, type, dvcid, fn, arg);
}

/* ---------------------------------------------------------------- the ops */

static int iscsi_inventory(struct phys_lib *pl, struct phys_element *out, unsigned cap, unsigned *n)
{
	struct iscsi_lib *l = lib_of(pl);
	const struct phys_changer c = {changer_read, l->changer.name, l->buf, BUF_LEN};
	return phys_inventory(pl, &c, out, cap, n);
}

/* rc; when VTL_OK, u is at a place it knows again (loaded, rewound, located). */
static int known_place(struct unit *u, int rc)
{
	if (rc == VTL_OK)
		u->position_lost = false;
	return rc;
}

static int check_drive(struct iscsi_lib *l, unsigned d)
{
	if (d < l->pub.drives)
		return VTL_OK;
	return phys_fail(&l->pub, VTL_E_INVAL, "no drive %u: the library has %u", d, l->pub.drives);
}

/* Waits until drive d answers TEST UNIT READY with GOOD, while it reports that it is getting there. */
static int wait_ready(struct iscsi_lib *l, unsigned d)
{
	struct unit *u = &l->drive[d];
	uint64_t deadline = now_ms() + (uint64_t)l->ready_timeout_s * 1000u;
	unsigned pause = READY_POLL_FIRST_MS;
	for (;;) {
		struct reply r;
		int rc = test_unit_ready(l, u, &r);
		if (rc != VTL_OK)
			return rc;
		if (r.status == SCSI_STATUS_GOOD)
			return known_place(u, VTL_OK); /* a tape just loaded is at its beginning */
		/* 04/xx: becoming ready, or an operation in progress; 3A: the tape is not yet in the drive's throat. */
		bool coming = r.status == SCSI_STATUS_CHECK_CONDITION && r.key == SCSI_SENSE_NOT_READY &&
			      (r.asc == ASC_NOT_READY || r.asc == ASC_MEDIUM_NOT_PRESENT);
		if (!coming || now_ms() >= deadline) {
			char op[64];
			snprintf(op, sizeof op, "not ready after a load (waited up to %u s)", l->ready_timeout_s);
			return fail_reply(l, u, op, &r);
		}
		sleep_ms(pause);
		pause = pause * 2 < READY_POLL_MAX_MS ? pause * 2 : READY_POLL_MAX_MS;
	}
}

static int iscsi_move(struct phys_lib *pl, uint16_t from, uint16_t to)
{
	struct iscsi_lib *l = lib_of(pl);
	uint8_t cdb[PHYS_MOVE_CDB_LEN];
	char op[48];
	phys_move_cdb(cdb, l->transport, from, to, op, sizeof op);
	int rc = run_nodata(l, &l->changer, op, cdb, sizeof cdb, 0);
	if (rc != VTL_OK)
		return rc;
	int src = phys_drive_of(pl, from), dst = phys_drive_of(pl, to);
	if (src >= 0)
		l->written[src] = 0;
	if (dst < 0)
		return VTL_OK;
	l->written[dst] = 0;
	return wait_ready(l, (unsigned)dst);
}

static int iscsi_rewind(struct phys_lib *pl, unsigned d)
{
	struct iscsi_lib *l = lib_of(pl);
	int rc = check_drive(l, d);
	if (rc != VTL_OK)
		return rc;
	uint8_t cdb[6] = {OP_REWIND}; /* IMMED = 0: done when the tape is at the beginning */
	return known_place(&l->drive[d], run_nodata(l, &l->drive[d], "REWIND", cdb, sizeof cdb, 0));
}

static int iscsi_unload(struct phys_lib *pl, unsigned d)
{
	struct iscsi_lib *l = lib_of(pl);
	int rc = iscsi_rewind(pl, d);
	if (rc != VTL_OK)
		return rc;
	uint8_t cdb[6] = {OP_LOAD_UNLOAD}; /* byte 4 LOAD = 0: unload; IMMED = 0: done when the changer may take it */
	rc = run_nodata(l, &l->drive[d], "LOAD UNLOAD (unload)", cdb, sizeof cdb, 0);
	if (rc == VTL_OK)
		l->written[d] = 0;
	return rc;
}

/* True when r reports early warning after a completed write (NO SENSE, EOM, 00/02, nothing left over). */
static bool early_warning(const struct reply *r)
{
	bool ew = r->eom || (r->asc == ASC_NONE && r->ascq == ASCQ_EOM);
	return (r->key == SCSI_SENSE_NO_SENSE || r->key == SCSI_SENSE_RECOVERED_ERROR) && ew &&
	       (!r->info_valid || r->info == 0);
}

static int iscsi_write_block(struct phys_lib *pl, unsigned d, const void *buf, size_t len)
{
	struct iscsi_lib *l = lib_of(pl);
	int rc = check_drive(l, d);
	if (rc != VTL_OK)
		return rc;
	struct unit *u = &l->drive[d];
	if (len == 0 || len > XFER6_MAX)
		return phys_fail(pl, VTL_E_INVAL, "%s: WRITE(6): a block of %zu bytes (1 to %u)", u->name, len, XFER6_MAX);
	uint8_t cdb[6] = {OP_WRITE6, RW_VARIABLE}; /* one block of len bytes */
	be_put(cdb + 2, len, 3);
	struct reply r;
	/* WRITE(6) carries data out only: the buffer is not written to. */
	rc = exec(l, u, "WRITE(6)", cdb, sizeof cdb, SCSI_XFER_WRITE, (void *)(uintptr_t)buf, len, EXEC_POSITIONAL, &r);
	if (rc != VTL_OK)
		return rc;
	if (r.status == SCSI_STATUS_GOOD) {
		l->written[d] += len;
		return VTL_OK;
	}
	if (r.status == SCSI_STATUS_CHECK_CONDITION && early_warning(&r)) {
		l->written[d] += len;
		return VTL_W_EARLY_WARNING;
	}
	if (r.status == SCSI_STATUS_CHECK_CONDITION && r.key == SCSI_SENSE_RECOVERED_ERROR && !r.eom) {
		l->written[d] += len;
		return VTL_OK;
	}
	if (r.status == SCSI_STATUS_CHECK_CONDITION && r.key == SCSI_SENSE_NO_SENSE && r.eom) {
		/* At the physical end with a residue: the block did not fit. */
		return phys_fail(pl, VTL_E_EOM, "%s: WRITE(6): end of medium, %" PRId64 " of %zu bytes not written",
				 u->name, r.info, len);
	}
	return fail_reply(l, u, "WRITE(6)", &r);
}

static int iscsi_write_filemarks(struct phys_lib *pl, unsigned d, unsigned n)
{
	struct iscsi_lib *l = lib_of(pl);
	int rc = check_drive(l, d);
	if (rc != VTL_OK)
		return rc;
	struct unit *u = &l->drive[d];
	if (n > XFER6_MAX)
		return phys_fail(pl, VTL_E_INVAL, "%s: WRITE FILEMARKS(6): %u filemarks (at most %u)", u->name, n, XFER6_MAX);
	/* IMMED = 0: the command ends when the data before it is on the tape, which is the flush phys.h promises. */
	uint8_t cdb[6] = {OP_WRITE_FILEMARKS6, 0};
	be_put(cdb + 2, n, 3);
	struct reply r;
	rc = exec(l, u, "WRITE FILEMARKS(6)", cdb, sizeof cdb, SCSI_XFER_NONE, NULL, 0, EXEC_POSITIONAL, &r);
	if (rc != VTL_OK)
		return rc;
	if (r.status == SCSI_STATUS_GOOD)
		return VTL_OK;
	if (r.status == SCSI_STATUS_CHECK_CONDITION && early_warning(&r))
		return VTL_W_EARLY_WARNING;
	return fail_reply(l, u, "WRITE FILEMARKS(6)", &r);
}

static int iscsi_read_block(struct phys_lib *pl, unsigned d, void *buf, size_t cap, size_t *len)
{
	struct iscsi_lib *l = lib_of(pl);
	*len = 0;
	int rc = check_drive(l, d);
	if (rc != VTL_OK)
		return rc;
	struct unit *u = &l->drive[d];
	if (cap == 0)
		return phys_fail(pl, VTL_E_INVAL, "%s: READ(6): a buffer of 0 bytes", u->name);
	size_t want = cap > XFER6_MAX ? XFER6_MAX : cap; /* no block is longer than READ(6) can ask for */
	/* FIXED = 0, SILI = 0: a block of another length is reported (ILI), with the difference as residue. */
	uint8_t cdb[6] = {OP_READ6, RW_VARIABLE};
	be_put(cdb + 2, want, 3);
	struct reply r;
	rc = exec(l, u, "READ(6)", cdb, sizeof cdb, SCSI_XFER_READ, buf, want, EXEC_POSITIONAL, &r);
	if (rc != VTL_OK)
		return rc;
	if (r.status == SCSI_STATUS_GOOD) {
		*len = r.got;
		return VTL_OK;
	}
	if (r.status != SCSI_STATUS_CHECK_CONDITION || !r.sense)
		return fail_reply(l, u, "READ(6)", &r);
	if (r.filemark || (r.key == SCSI_SENSE_NO_SENSE && r.asc == ASC_NONE && r.ascq == ASCQ_FILEMARK))
		return VTL_W_FILEMARK;
	if (r.ili && (r.key == SCSI_SENSE_NO_SENSE || r.key == SCSI_SENSE_RECOVERED_ERROR)) {
		if (!r.info_valid)
			return phys_fail(pl, VTL_E_IO, "%s: READ(6): a block of another length, without its residue",
					 u->name);
		if (r.info < 0)
			return phys_fail(pl, VTL_E_INVAL,
					 "%s: READ(6): a block of %" PRId64 " bytes does not fit the buffer of %zu "
					 "(the tape is now past it)",
					 u->name, (int64_t)want - r.info, want);
		if ((uint64_t)r.info > want)
			return phys_fail(pl, VTL_E_IO, "%s: READ(6): residue %" PRId64 " exceeds the %zu bytes asked",
					 u->name, r.info, want);
		*len = want - (size_t)r.info;
		return VTL_OK;
	}
	return fail_reply(l, u, "READ(6)", &r);
}

static int iscsi_space_filemarks(struct phys_lib *pl, unsigned d, int64_t n)
{
	struct iscsi_lib *l = lib_of(pl);
	int rc = check_drive(l, d);
	if (rc != VTL_OK)
		return rc;
	if (n == 0)
		return VTL_OK;
	if (n >= SPACE6_MIN && n <= SPACE6_MAX) {
		uint8_t cdb[6] = {OP_SPACE6, SPACE_FILEMARKS};
		be_put(cdb + 2, (uint64_t)n, 3); /* two's complement: negative spaces backward */
		return run_nodata(l, &l->drive[d], "SPACE(6) filemarks", cdb, sizeof cdb, EXEC_POSITIONAL);
	}
	uint8_t cdb[16] = {OP_SPACE16, SPACE_FILEMARKS};
	be_put(cdb + 4, (uint64_t)n, 8);
	return run_nodata(l, &l->drive[d], "SPACE(16) filemarks", cdb, sizeof cdb, EXEC_POSITIONAL);
}

static int iscsi_locate(struct phys_lib *pl, unsigned d, uint64_t block)
{
	struct iscsi_lib *l = lib_of(pl);
	int rc = check_drive(l, d);
	if (rc != VTL_OK)
		return rc;
	/* BT = 0 (logical object identifiers), CP = 0 (this partition), IMMED = 0 (done when there). */
	if (block <= UINT32_MAX) {
		uint8_t cdb[10] = {OP_LOCATE10};
		be_put(cdb + 3, block, 4);
		return known_place(&l->drive[d], run_nodata(l, &l->drive[d], "LOCATE(10)", cdb, sizeof cdb, 0));
	}
	uint8_t cdb[16] = {OP_LOCATE16};
	be_put(cdb + 4, block, 8);
	return known_place(&l->drive[d], run_nodata(l, &l->drive[d], "LOCATE(16)", cdb, sizeof cdb, 0));
}

/* The position of drive d: the long READ POSITION form (with the file number), else the short one. */
static int read_position(struct iscsi_lib *l, unsigned d, struct phys_drive_status *st)
{
	struct unit *u = &l->drive[d];
	uint8_t b[RP_LONG_LEN];
	struct reply r;
	if (!l->short_position[d]) {
		uint8_t cdb[10] = {OP_READ_POSITION, RP_LONG};
		int rc = exec(l, u, "READ POSITION (long form)", cdb, sizeof cdb, SCSI_XFER_READ, b, RP_LONG_LEN, 0, &r);
		if (rc != VTL_OK)
			return rc;
		if (r.status == SCSI_STATUS_GOOD && r.got >= RP_LONG_LEN) {
			st->bot = b[0] & RP_BOP;
			st->early_warning = b[0] & RP_EOP;
			st->block = be_get(b + 8, 8);
			st->file = (b[0] & RP_LOCATION_UNKNOWN) ? UINT64_MAX : be_get(b + 16, 8);
			return VTL_OK;
		}
		if (!(r.status == SCSI_STATUS_CHECK_CONDITION && r.key == SCSI_SENSE_ILLEGAL_REQUEST))
			return fail_reply(l, u, "READ POSITION (long form)", &r);
		l->short_position[d] = true; /* an older drive: remember, and use the short form from now on */
	}
	uint8_t cdb[10] = {OP_READ_POSITION, RP_SHORT};
	int rc = exec_good(l, u, "READ POSITION", cdb, sizeof cdb, SCSI_XFER_READ, b, RP_SHORT_LEN, 0, &r);
	if (rc != VTL_OK)
		return rc;
	if (r.got < RP_SHORT_LEN)
		return phys_fail(&l->pub, VTL_E_IO, "%s: READ POSITION: %zu bytes, short of %u", u->name, r.got,
				 RP_SHORT_LEN);
	st->bot = b[0] & RP_BOP;
	st->early_warning = b[0] & RP_EOP;
	st->block = be_get(b + 4, 4);
	st->file = UINT64_MAX; /* the short form has no file number */
	return VTL_OK;
}

static int iscsi_status(struct phys_lib *pl, unsigned d, struct phys_drive_status *st)
{
	struct iscsi_lib *l = lib_of(pl);
	memset(st, 0, sizeof *st);
	st->file = UINT64_MAX;
	int rc = check_drive(l, d);
	if (rc != VTL_OK)
		return rc;
	struct unit *u = &l->drive[d];
	struct reply r;
	if ((rc = test_unit_ready(l, u, &r)) != VTL_OK)
		return rc;
	if (r.status != SCSI_STATUS_GOOD && !(r.status == SCSI_STATUS_CHECK_CONDITION && r.key == SCSI_SENSE_NOT_READY))
		return fail_reply(l, u, "TEST UNIT READY", &r);
	st->ready = r.status == SCSI_STATUS_GOOD;
	st->written = l->written[d];

	/* Limits and alerts are the drive's, tape or not; a drive without them reports 0. */
	uint8_t rbl[RBL_LEN];
	uint8_t rbl_cdb[6] = {OP_READ_BLOCK_LIMITS};
	if ((rc = exec(l, u, "READ BLOCK LIMITS", rbl_cdb, sizeof rbl_cdb, SCSI_XFER_READ, rbl, sizeof rbl, 0, &r)) != VTL_OK)
		return rc;
	if (r.status == SCSI_STATUS_GOOD && r.got >= 4)
		st->max_block = be_get(rbl + 1, 3);
	uint8_t log[LOG_LEN];
	uint8_t log_cdb[10] = {OP_LOG_SENSE, 0, LOG_PC_CUMULATIVE | LOG_TAPEALERT};
	be_put(log_cdb + 7, sizeof log, 2);
	if ((rc = exec(l, u, "LOG SENSE (TapeAlert)", log_cdb, sizeof log_cdb, SCSI_XFER_READ, log, sizeof log, 0, &r)) !=
	    VTL_OK)
		return rc;
	if (r.status == SCSI_STATUS_GOOD)
		st->tapealert = phys_tapealert_parse(log, r.got);
	if (!st->ready)
		return VTL_OK;

	uint8_t ms[MS_LEN];
	uint8_t ms_cdb[6] = {OP_MODE_SENSE6, MS_DBD, MS_ALL_PAGES, 0, MS_LEN};
	if ((rc = exec_good(l, u, "MODE SENSE(6)", ms_cdb, sizeof ms_cdb, SCSI_XFER_READ, ms, sizeof ms, 0, &r)) != VTL_OK)
		return rc;
	if (r.got <= MS_DEVICE_SPECIFIC)
		return phys_fail(pl, VTL_E_IO, "%s: MODE SENSE(6): %zu bytes, short of the header", u->name, r.got);
	st->write_protected = ms[MS_DEVICE_SPECIFIC] & MS_WP;
	return read_position(l, d, st);
}

static void iscsi_close(struct phys_lib *pl)
{
	if (!pl)
		return;
	struct iscsi_lib *l = lib_of(pl);
	if (l->ctx) {
		if (iscsi_is_logged_in(l->ctx))
			iscsi_logout_sync(l->ctx); /* a failed logout leaves nothing to undo: the context goes anyway */
		iscsi_destroy_context(l->ctx);
	}
	free(l->buf);
	free(l);
}

static const struct phys_ops iscsi_ops = {
	.kind = "iscsi",
	.inventory = iscsi_inventory,
	.move = iscsi_move,
	.unload = iscsi_unload,
	.rewind = iscsi_rewind,
	.write_block = iscsi_write_block,
	.write_filemarks = iscsi_write_filemarks,
	.read_block = iscsi_read_block,
	.space_filemarks = iscsi_space_filemarks,
	.locate = iscsi_locate,
	.status = iscsi_status,
	.close = iscsi_close,
};

/* ------------------------------------------------------------------- open */

/* A drive LUN found by INQUIRY, before it is matched to its element. */
struct drive_lun {
	int lun;
	char serial[PHYS_ID_MAX];
	bool used;
};

struct drive_elems {
	struct phys_element_desc e[MAX_LUNS];
	unsigned n;
};

static void add_drive_element(const struct phys_element_desc *e, void *arg)
{
	struct drive_elems *a = arg;
	if (a->n < MAX_LUNS)
		a->e[a->n++] = *e;
}

static void first_transport(const struct phys_element_desc *e, void *arg)
{
	long *addr = arg;
	if (*addr < 0)
		*addr = e->e.address;
}

static int login(struct iscsi_lib *l, const struct phys_iscsi_config *cfg)
{
	if (!(l->ctx = iscsi_create_context(cfg->initiator_iqn)))
		return phys_fail(&l->pub, VTL_E_NOMEM, "iSCSI: cannot create a context for %s", cfg->initiator_iqn);
	if (iscsi_set_targetname(l->ctx, cfg->target_iqn) || iscsi_set_session_type(l->ctx, ISCSI_SESSION_NORMAL) ||
	    iscsi_set_header_digest(l->ctx, ISCSI_HEADER_DIGEST_NONE_CRC32C))
		return phys_fail(&l->pub, VTL_E_CONFIG, "iSCSI: %s", iscsi_get_error(l->ctx));
	if (cfg->chap_user && cfg->chap_user[0] &&
	    iscsi_set_initiator_username_pwd(l->ctx, cfg->chap_user, cfg->chap_secret))
		return phys_fail(&l->pub, VTL_E_CONFIG, "iSCSI: CHAP user %s: %s", cfg->chap_user, iscsi_get_error(l->ctx));
	/* Mutual CHAP: libiscsi sends a challenge of its own and fails the login unless the target answers it. */
	bool mutual = cfg->mutual_user && cfg->mutual_user[0];
	if (mutual && iscsi_set_target_username_pwd(l->ctx, cfg->mutual_user, cfg->mutual_secret))
		return phys_fail(&l->pub, VTL_E_CONFIG, "iSCSI: mutual CHAP user %s: %s", cfg->mutual_user,
				 iscsi_get_error(l->ctx));
	/* A tape command must never be replayed behind our back: a lost connection is an error for the caller. */
	iscsi_set_noautoreconnect(l->ctx, 1);
	if (l->command_timeout_s)
		iscsi_set_timeout(l->ctx, (int)l->command_timeout_s);
	/* LUN -1: libiscsi sends no TEST UNIT READY of its own; every LUN's attentions are taken below. */
	if (iscsi_full_connect_sync(l->ctx, cfg->portal, -1) != 0)
		return phys_fail(&l->pub, VTL_E_IO, "iSCSI: login to %s at %s as %s failed: %s%s%s%s", cfg->target_iqn,
				 cfg->portal, cfg->initiator_iqn, iscsi_get_error(l->ctx),
				 mutual ? " (mutual CHAP: the target must prove it knows the secret of " : "",
				 mutual ? cfg->mutual_user : "", mutual ? ")" : "");
	return VTL_OK;
}

/* The LUNs the target reports, into luns (at most MAX_LUNS); those of another addressing method are skipped. */
static int report_luns(struct iscsi_lib *l, int *luns, unsigned *n)
{
	struct unit lun0 = {.lun = 0};
	snprintf(lun0.name, sizeof lun0.name, "LUN 0");
	size_t alloc = RL_ALLOC_FIRST;
	struct reply r;
	for (;;) {
		uint8_t cdb[12] = {OP_REPORT_LUNS};
		be_put(cdb + 6, alloc, 4);
		int rc = exec_good(l, &lun0, "REPORT LUNS", cdb, sizeof cdb, SCSI_XFER_READ, l->buf, alloc, 0, &r);
		if (rc != VTL_OK)
			return rc;
		if (r.got < RL_HDR)
			return phys_fail(&l->pub, VTL_E_IO, "LUN 0: REPORT LUNS: %zu bytes, short of the header", r.got);
		size_t list = be_get(l->buf, 4);
		if (RL_HDR + list <= r.got || alloc == BUF_LEN)
			break;
		alloc = RL_HDR + list < BUF_LEN ? RL_HDR + list : BUF_LEN;
	}
	size_t end = RL_HDR + be_get(l->buf, 4);
	if (end > r.got)
		end = r.got;
	*n = 0;
	for (size_t at = RL_HDR; at + RL_ENTRY <= end && *n < MAX_LUNS; at += RL_ENTRY) {
		uint8_t method = l->buf[at] & RL_METHOD_MASK;
		if (method != RL_METHOD_PERIPHERAL && method != RL_METHOD_FLAT)
			continue;
		luns[(*n)++] = (int)((l->buf[at] & ~RL_METHOD_MASK) << 8 | l->buf[at + 1]);
	}
	return VTL_OK;
}

/* INQUIRY of lun: its peripheral device type, or -1 when no unit is connected there; and its serial (drives). */
static int identify(struct iscsi_lib *l, int lun, int *type, char *serial, size_t cap)
{
	struct unit u = {.lun = lun};
	snprintf(u.name, sizeof u.name, "LUN %d", lun);
	uint8_t b[VPD_LEN];
	uint8_t cdb[6] = {OP_INQUIRY, 0, 0, 0, INQ_STD_LEN};
	struct reply r;
	int rc = exec_good(l, &u, "INQUIRY", cdb, sizeof cdb, SCSI_XFER_READ, b, INQ_STD_LEN, 0, &r);
	if (rc != VTL_OK)
		return rc;
	*type = r.got >= 1 && (b[0] >> PQ_SHIFT) == 0 ? b[0] & PDT_MASK : -1;
	serial[0] = 0;
	if (*type != PDT_TAPE)
		return VTL_OK;
	uint8_t vpd[6] = {OP_INQUIRY, INQ_EVPD, VPD_SERIAL, 0, VPD_LEN};
	rc = exec(l, &u, "INQUIRY (unit serial number)", vpd, sizeof vpd, SCSI_XFER_READ, b, VPD_LEN, 0, &r);
	if (rc != VTL_OK)
		return rc;
	/* A drive without the page is matched by order, as when the changer gives no identifiers. */
	if (r.status == SCSI_STATUS_GOOD && r.got >= 4 && b[1] == VPD_SERIAL) {
		size_t n = b[3] < r.got - 4 ? b[3] : r.got - 4;
		phys_text_field(serial, cap, b + 4, n);
	}
	return VTL_OK;
}

static void set_drive(struct iscsi_lib *l, uint16_t addr, int lun)
{
	unsigned d = l->pub.drives++;
	l->pub.drive_addr[d] = addr;
	l->drive[d].lun = lun;
	snprintf(l->drive[d].name, sizeof l->drive[d].name, "drive %u (LUN %d)", d, lun);
}

/*
 * Pairs drive LUNs with data transfer elements: by the identifier each element reports (DVCID) and each
 * LUN's serial number; when the changer reports none, the i-th LUN is the i-th element.
 */
static int map_drives(struct iscsi_lib *l, struct drive_lun *dl, unsigned ndl)
{
	struct drive_elems *a = calloc(1, sizeof *a);
	if (!a)
		return phys_fail(&l->pub, VTL_E_NOMEM, "no memory for the drive map");
	int rc = read_elements(l, PHYS_ELEM_DRIVE, true, add_drive_element, a);
	if (rc == VTL_E_INVAL) {
		/* An older changer (SMC-2) refuses DVCID: ask without, and match by order. */
		a->n = 0;
		rc = read_elements(l, PHYS_ELEM_DRIVE, false, add_drive_element, a);
	}
	if (rc != VTL_OK) {
		free(a);
		return rc;
	}
	bool ids = false;
	for (unsigned i = 0; i < a->n; i++)
		ids |= a->e[i].id[0] != 0;
	if (ids) {
		for (unsigned i = 0; i < a->n && l->pub.drives < PHYS_MAX_DRIVES; i++)
			for (unsigned j = 0; j < ndl; j++)
				if (!dl[j].used && phys_element_is_drive(&a->e[i], dl[j].serial)) {
					dl[j].used = true;
					set_drive(l, a->e[i].e.address, dl[j].lun);
					break;
				}
		if (l->pub.drives == 0)
			rc = phys_fail(&l->pub, VTL_E_NOTFOUND,
				       "%s: none of its %u drive elements names a drive LUN of this target by serial "
				       "number (first element: '%s', first LUN %d: '%s')",
				       l->changer.name, a->n, a->n ? a->e[0].id : "", ndl ? dl[0].lun : -1,
				       ndl ? dl[0].serial : "");
	} else if (a->n != ndl) {
		rc = phys_fail(&l->pub, VTL_E_CONFIG,
			       "%s: %u drive elements but %u drive LUNs, and no device identifiers (DVCID) to tell "
			       "which is which",
			       l->changer.name, a->n, ndl);
	} else {
		for (unsigned i = 0; i < a->n && i < PHYS_MAX_DRIVES; i++)
			set_drive(l, a->e[i].e.address, dl[i].lun);
	}
	free(a);
	return rc;
}

/* Finds the changer and the drives, takes each LUN's unit attentions and maps the drives. */
static int discover(struct iscsi_lib *l)
{
	int luns[MAX_LUNS];
	unsigned nluns = 0;
	int rc = report_luns(l, luns, &nluns);
	if (rc != VTL_OK)
		return rc;
	struct drive_lun dl[MAX_LUNS];
	unsigned ndl = 0;
	bool changer = false;
	for (unsigned i = 0; i < nluns; i++) {
		int type;
		char serial[PHYS_ID_MAX];
		if ((rc = identify(l, luns[i], &type, serial, sizeof serial)) != VTL_OK)
			return rc;
		struct unit u = {.lun = luns[i]};
		snprintf(u.name, sizeof u.name, "LUN %d", luns[i]);
		struct reply r;
		/* TEST UNIT READY takes the new session's attentions (exec retries them); not ready is fine here. */
		if ((type == PDT_CHANGER || type == PDT_TAPE) && (rc = test_unit_ready(l, &u, &r)) != VTL_OK)
			return rc;
		if (type == PDT_CHANGER && !changer) {
			changer = true;
			l->changer.lun = luns[i];
			snprintf(l->changer.name, sizeof l->changer.name, "changer (LUN %d)", luns[i]);
		} else if (type == PDT_TAPE) {
			dl[ndl].lun = luns[i];
			dl[ndl].used = false;
			memcpy(dl[ndl].serial, serial, sizeof serial);
			ndl++;
		}
	}
	if (!changer)
		return phys_fail(&l->pub, VTL_E_NOTFOUND, "none of the target's %u LUNs is a medium changer (type 08h)",
				 nluns);
	if (ndl == 0)
		return phys_fail(&l->pub, VTL_E_NOTFOUND, "none of the target's %u LUNs is a tape drive (type 01h)", nluns);
	long transport = -1;
	if ((rc = read_elements(l, PHYS_ELEM_TRANSPORT, false, first_transport, &transport)) != VTL_OK)
		return rc;
	l->transport = transport < 0 ? 0 : (uint16_t)transport; /* 0 asks for the default robot (SMC-3) */
	return map_drives(l, dl, ndl);
}

int phys_iscsi_open(const struct phys_iscsi_config *cfg, struct phys_lib **out, char *err, size_t errlen)
{
	*out = NULL;
	if (!cfg || !cfg->portal || !cfg->portal[0] || !cfg->target_iqn || !cfg->target_iqn[0] || !cfg->initiator_iqn ||
	    !cfg->initiator_iqn[0]) {
		snprintf(err, errlen, "iSCSI library: the portal, the target IQN and the initiator IQN are all needed");
		return VTL_E_CONFIG;
	}
	if (cfg->chap_user && cfg->chap_user[0] && (!cfg->chap_secret || !cfg->chap_secret[0])) {
		snprintf(err, errlen, "iSCSI library: CHAP user %s has no secret", cfg->chap_user);
		return VTL_E_CONFIG;
	}
	bool chap = cfg->chap_user && cfg->chap_user[0], mutual = cfg->mutual_user && cfg->mutual_user[0];
	if (mutual && (!cfg->mutual_secret || !cfg->mutual_secret[0] || !chap)) {
		snprintf(err, errlen, "iSCSI library: mutual CHAP user %s needs a secret and one-way CHAP (chap_user)",
			 cfg->mutual_user);
		return VTL_E_CONFIG;
	}
	/* RFC 7143 12.1.3: a secret that authenticates one side never authenticates the other. */
	if (mutual && !strcmp(cfg->mutual_secret, cfg->chap_secret)) {
		snprintf(err, errlen, "iSCSI library: the mutual CHAP secret is the same as the CHAP secret; they must differ");
		return VTL_E_CONFIG;
	}
	struct iscsi_lib *l = calloc(1, sizeof *l);
	if (l)
		l->buf = malloc(BUF_LEN);
	if (!l || !l->buf) {
		free(l);
		snprintf(err, errlen, "iSCSI library: out of memory");
		return VTL_E_NOMEM;
	}
	l->pub.ops = &iscsi_ops;
	l->ready_timeout_s = cfg->ready_timeout_s ? cfg->ready_timeout_s : READY_TIMEOUT_DEFAULT_S;
	l->command_timeout_s = cfg->command_timeout_s;
	int rc = login(l, cfg);
	if (rc == VTL_OK)
		rc = discover(l);
	if (rc != VTL_OK) {
		snprintf(err, errlen, "%s", l->pub.err);
		iscsi_close(&l->pub);
		return rc;
	}
	/* The attentions of the new session say nothing about a position we relied on: there was none yet. */
	for (unsigned d = 0; d < l->pub.drives; d++)
		l->drive[d].position_lost = false;
	l->pub.err[0] = 0;
	*out = &l->pub;
	return VTL_OK;
}
