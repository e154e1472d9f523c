/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The iSCSI physical library: every phys_ops call is one or a few SCSI
 * commands, sent with libiscsi's synchronous API on the session of the
 * unit they are for. Each drive has a session of its own and the changer
 * another, because a libiscsi context serves one thread at a time and a
 * WRITE to one drive must not wait behind another drive's: the calls of
 * different drives run at once on their threads (migrator/phys.h), each
 * under its drive's lock, which also owns the drive's session. The changer's
 * session also finds the units when the library is opened. The sessions
 * share the initiator name and differ in the ISID's qualifier (0 the
 * changer, d + 1 drive d): distinct I_T nexuses (RFC 7143 4.4.3), each with
 * its own unit attentions. A target that refuses a drive's session (a limit
 * on sessions per initiator) fails the open with that said.
 *
 * The commands, their retries and their sense are the initiator's
 * (migrator/phys_scsi.c); this file is the transport and the tape data
 * commands' answers.
 *
 * Unit attentions: a new session gets one on every LUN (power on, reset),
 * a load gets one on the drive (medium may have changed); phys_scsi_exec
 * sends the command again, or refuses a positional one.
 *
 * Sense comes from libiscsi as the raw bytes (2-byte length, then sense data)
 * in the task's data-in on CHECK CONDITION; its parsed form lacks the stream
 * bits (FILEMARK, EOM, ILI) and INFORMATION that tape needs, so the raw bytes
 * go to the decoder. Data-in goes straight into the caller's buffer
 * (scsi_task_set_iov_in), so a READ that ends in CHECK CONDITION (a short
 * block) keeps its data.
 */
#include "migrator/phys_iscsi.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/bytes.h"
#include "common/vtl_error.h"
#include "migrator/phys_iscsi_link.h"
#include "migrator/phys_scsi.h"

#define BUF_LEN (64u << 10) /* the answers of REPORT LUNS and READ ELEMENT STATUS (longer ones are paged) */

/* REPORT LUNS (SPC-5 6.33): 8-byte header, 8 bytes a LUN; bits 7..6 of byte 0 the addressing method. */
#define RL_HDR 8
#define RL_ENTRY 8
#define RL_ALLOC_FIRST 4096
#define RL_METHOD_MASK 0xC0
#define RL_METHOD_PERIPHERAL 0x00
#define RL_METHOD_FLAT 0x40
#define MAX_LUNS PHYS_SCSI_MAX_ELEMS

/* SSC-4 data commands. */
#define RW_VARIABLE 0x00         /* READ(6)/WRITE(6) byte 1: FIXED and SILI clear, one variable-length block */
#define XFER6_MAX 0xFFFFFFu      /* 24-bit transfer length */
#define SPACE_FILEMARKS 0x01     /* SPACE code */
#define SPACE6_MIN (-0x800000LL) /* 24-bit two's complement count */
#define SPACE6_MAX 0x7FFFFFLL
#define MS_DBD 0x08              /* MODE SENSE(6): no block descriptors */
#define MS_ALL_PAGES 0x3F
#define MS_LEN 255
#define MS_DEVICE_SPECIFIC 2
#define MS_WP 0x80

/* Patience. */
#define BUSY_RETRIES 50
#define READY_TIMEOUT_DEFAULT_S 300 /* an LTO load and thread takes 15-60 s; a busy robot more */

/* The ISID qualifier of each session: the changer's, then drive d's is DRIVE_QUALIFIER(d). */
#define CHANGER_QUALIFIER 0
#define DRIVE_QUALIFIER(d) ((uint16_t)((d) + 1))

struct iscsi_lib {
	struct phys_scsi scsi; /* first: the migrator sees only its phys_lib */
	struct iscsi_context *ctx; /* the changer's session (and discovery's); under the changer's lock */
	unsigned ready_timeout_s;
	unsigned command_timeout_s;
	/* Drive d: its unit (channel: its own session), and what follows, all under its lock. */
	struct phys_scsi_unit drive[PHYS_MAX_DRIVES];
	uint64_t written[PHYS_MAX_DRIVES]; /* bytes since the tape was loaded */
	bool short_position[PHYS_MAX_DRIVES]; /* the drive refused the long READ POSITION: use the short one */
};

static struct iscsi_lib *lib_of(struct phys_lib *l)
{
	return (struct iscsi_lib *)l;
}

/* ---------------------------------------------------------------- transport */

/* phys_scsi_transport.execute: one task to LUN u->id, on u's own session (a drive's), else the changer's. */
static int iscsi_execute(struct phys_scsi *s, struct phys_scsi_unit *u, const char *op, const uint8_t *cdb,
			 unsigned cdb_len, enum phys_scsi_dir dir, void *buf, size_t len, struct phys_scsi_result *res)
{
	struct iscsi_lib *l = lib_of(&s->pub);
	struct iscsi_context *ctx = u->channel ? u->channel : l->ctx;
	return phys_iscsi_link_execute(&s->pub, ctx, l->command_timeout_s, u->id, u->name, op, cdb, cdb_len, dir,
				       buf, len, res);
}

static const struct phys_scsi_transport iscsi_transport = {.execute = iscsi_execute};

/* ---------------------------------------------------------------- the ops */

static struct phys_scsi_unit *drive_unit(struct phys_scsi *s, unsigned d)
{
	return &lib_of(&s->pub)->drive[d];
}

static int tape_left(struct phys_scsi *s, unsigned d)
{
	lib_of(&s->pub)->written[d] = 0;
	return VTL_OK;
}

static int tape_arrived(struct phys_scsi *s, unsigned d)
{
	struct iscsi_lib *l = lib_of(&s->pub);
	l->written[d] = 0;
	return phys_scsi_wait_ready(s, &l->drive[d], l->ready_timeout_s);
}

static const struct phys_scsi_move_ops move_ops = {drive_unit, tape_left, tape_arrived};

static int iscsi_move(struct phys_lib *pl, uint16_t from, uint16_t to)
{
	return phys_scsi_move_medium(pl, &move_ops, from, to);
}

/* Each drive call below runs its body under the drive's lock (phys.h). */
#define DRIVE_CALL(pl, d, call) PHYS_SCSI_DRIVE_CALL(pl, d, &lib_of(pl)->drive[d], call)

static int rewind_locked(struct iscsi_lib *l, unsigned d)
{
	uint8_t cdb[6] = {SCSI_OP_REWIND}; /* IMMED = 0: done when the tape is at the beginning */
	return phys_scsi_known_place(&l->drive[d], phys_scsi_run_nodata(&l->scsi, &l->drive[d], "REWIND", cdb,
									  sizeof cdb, 0));
}

static int iscsi_rewind(struct phys_lib *pl, unsigned d)
{
	DRIVE_CALL(pl, d, rewind_locked(lib_of(pl), d));
}

static int unload_locked(struct iscsi_lib *l, unsigned d)
{
	int rc = rewind_locked(l, d);
	if (rc != VTL_OK)
		return rc;
	/* Byte 4 LOAD = 0: unload; IMMED = 0: done when the changer may take it. */
	uint8_t cdb[6] = {SCSI_OP_LOAD_UNLOAD};
	rc = phys_scsi_run_nodata(&l->scsi, &l->drive[d], "LOAD UNLOAD (unload)", cdb, sizeof cdb, 0);
	if (rc == VTL_OK)
		l->written[d] = 0;
	return rc;
}

static int iscsi_unload(struct phys_lib *pl, unsigned d)
{
	DRIVE_CALL(pl, d, unload_locked(lib_of(pl), d));
}

/* True when r reports early warning after a completed write (NO SENSE, EOM, 00/02, nothing left over). */
static bool early_warning(const struct phys_scsi_reply *r)
{
	bool ew = r->s.eom || r->s.asc == ASC_EOM_DETECTED;
	return (r->s.key == SK_NO_SENSE || r->s.key == SK_RECOVERED_ERROR) && ew &&
	       (!r->s.info_valid || r->s.info == 0);
}

static int write_block_locked(struct phys_lib *pl, unsigned d, const void *buf, size_t len)
{
	struct iscsi_lib *l = lib_of(pl);
	int rc;
	struct phys_scsi_unit *u = &l->drive[d];
	if (len == 0 || len > XFER6_MAX)
		return phys_fail(pl, VTL_E_INVAL, "%s: WRITE(6): a block of %zu bytes (1 to %u)", u->name, len, XFER6_MAX);
	uint8_t cdb[6] = {SCSI_OP_WRITE6, RW_VARIABLE}; /* one block of len bytes */
	be_put(cdb + 2, len, 3);
	struct phys_scsi_reply r;
	/* WRITE(6) carries data out only: the buffer is not written to. */
	rc = phys_scsi_exec(&l->scsi, u, "WRITE(6)", cdb, sizeof cdb, PHYS_SCSI_OUT, (void *)(uintptr_t)buf, len,
			    PHYS_SCSI_POSITIONAL, &r);
	if (rc != VTL_OK)
		return rc;
	if (r.status == SCSI_GOOD) {
		l->written[d] += len;
		return VTL_OK;
	}
	bool cc = r.status == SCSI_CHECK_CONDITION && r.sense;
	if (cc && early_warning(&r)) {
		l->written[d] += len;
		return VTL_W_EARLY_WARNING;
	}
	if (cc && r.s.key == SK_RECOVERED_ERROR && !r.s.eom) {
		l->written[d] += len;
		return VTL_OK;
	}
	if (cc && r.s.key == SK_NO_SENSE && r.s.eom) {
		/* At the physical end with a residue: the block did not fit. */
		return phys_fail(pl, VTL_E_EOM, "%s: WRITE(6): end of medium, %" PRId64 " of %zu bytes not written",
				 u->name, r.s.info, len);
	}
	return phys_scsi_fail_reply(&l->scsi, u, "WRITE(6)", &r);
}

static int iscsi_write_block(struct phys_lib *pl, unsigned d, const void *buf, size_t len)
{
	DRIVE_CALL(pl, d, write_block_locked(pl, d, buf, len));
}

static int write_filemarks_locked(struct phys_lib *pl, unsigned d, unsigned n)
{
	struct iscsi_lib *l = lib_of(pl);
	int rc;
	struct phys_scsi_unit *u = &l->drive[d];
	if (n > XFER6_MAX)
		return phys_fail(pl, VTL_E_INVAL, "%s: WRITE FILEMARKS(6): %u filemarks (at most %u)", u->name, n, XFER6_MAX);
	/* IMMED = 0: the command ends when the data before it is on the tape, which is the flush phys.h promises. */
	uint8_t cdb[6] = {SCSI_OP_WRITE_FILEMARKS6, 0};
	be_put(cdb + 2, n, 3);
	struct phys_scsi_reply r;
	rc = phys_scsi_exec(&l->scsi, u, "WRITE FILEMARKS(6)", cdb, sizeof cdb, PHYS_SCSI_NONE, NULL, 0,
			    PHYS_SCSI_POSITIONAL, &r);
	if (rc != VTL_OK)
		return rc;
	if (r.status == SCSI_GOOD)
		return VTL_OK;
	if (r.status == SCSI_CHECK_CONDITION && r.sense && early_warning(&r))
		return VTL_W_EARLY_WARNING;
	return phys_scsi_fail_reply(&l->scsi, u, "WRITE FILEMARKS(6)", &r);
}

static int iscsi_write_filemarks(struct phys_lib *pl, unsigned d, unsigned n)
{
	DRIVE_CALL(pl, d, write_filemarks_locked(pl, d, n));
}

static int read_block_locked(struct phys_lib *pl, unsigned d, void *buf, size_t cap, size_t *len)
{
	struct iscsi_lib *l = lib_of(pl);
	int rc;
	struct phys_scsi_unit *u = &l->drive[d];
	if (cap == 0)
		return phys_fail(pl, VTL_E_INVAL, "%s: READ(6): a buffer of 0 bytes", u->name);
	size_t want = cap > XFER6_MAX ? XFER6_MAX : cap; /* no block is longer than READ(6) can ask for */
	/* FIXED = 0, SILI = 0: a block of another length is reported (ILI), with the difference as residue. */
	uint8_t cdb[6] = {SCSI_OP_READ6, RW_VARIABLE};
	be_put(cdb + 2, want, 3);
	struct phys_scsi_reply r;
	rc = phys_scsi_exec(&l->scsi, u, "READ(6)", cdb, sizeof cdb, PHYS_SCSI_IN, buf, want, PHYS_SCSI_POSITIONAL, &r);
	if (rc != VTL_OK)
		return rc;
	if (r.status == SCSI_GOOD) {
		*len = r.got;
		return VTL_OK;
	}
	if (r.status != SCSI_CHECK_CONDITION || !r.sense)
		return phys_scsi_fail_reply(&l->scsi, u, "READ(6)", &r);
	if (r.s.filemark || (r.s.key == SK_NO_SENSE && r.s.asc == ASC_FILEMARK_DETECTED))
		return VTL_W_FILEMARK;
	if (r.s.ili && (r.s.key == SK_NO_SENSE || r.s.key == SK_RECOVERED_ERROR)) {
		if (!r.s.info_valid)
			return phys_fail(pl, VTL_E_IO, "%s: READ(6): a block of another length, without its residue",
					 u->name);
		if (r.s.info < 0)
			return phys_fail(pl, VTL_E_INVAL,
					 "%s: READ(6): a block of %" PRId64 " bytes does not fit the buffer of %zu "
					 "(the tape is now past it)",
					 u->name, (int64_t)want - r.s.info, want);
		if ((uint64_t)r.s.info > want)
			return phys_fail(pl, VTL_E_IO, "%s: READ(6): residue %" PRId64 " exceeds the %zu bytes asked",
					 u->name, r.s.info, want);
		*len = want - (size_t)r.s.info;
		return VTL_OK;
	}
	return phys_scsi_fail_reply(&l->scsi, u, "READ(6)", &r);
}

static int iscsi_read_block(struct phys_lib *pl, unsigned d, void *buf, size_t cap, size_t *len)
{
	*len = 0;
	DRIVE_CALL(pl, d, read_block_locked(pl, d, buf, cap, len));
}

static int space_filemarks_locked(struct iscsi_lib *l, unsigned d, int64_t n)
{
	if (n == 0)
		return VTL_OK;
	if (n >= SPACE6_MIN && n <= SPACE6_MAX) {
		uint8_t cdb[6] = {SCSI_OP_SPACE6, SPACE_FILEMARKS};
		be_put(cdb + 2, (uint64_t)n, 3); /* two's complement: negative spaces backward */
		return phys_scsi_run_nodata(&l->scsi, &l->drive[d], "SPACE(6) filemarks", cdb, sizeof cdb,
					    PHYS_SCSI_POSITIONAL);
	}
	uint8_t cdb[16] = {SCSI_OP_SPACE16, SPACE_FILEMARKS};
	be_put(cdb + 4, (uint64_t)n, 8);
	return phys_scsi_run_nodata(&l->scsi, &l->drive[d], "SPACE(16) filemarks", cdb, sizeof cdb,
				    PHYS_SCSI_POSITIONAL);
}

static int iscsi_space_filemarks(struct phys_lib *pl, unsigned d, int64_t n)
{
	DRIVE_CALL(pl, d, space_filemarks_locked(lib_of(pl), d, n));
}

static int locate_locked(struct iscsi_lib *l, unsigned d, uint64_t block)
{
	struct phys_scsi_unit *u = &l->drive[d];
	/* BT = 0 (logical object identifiers), CP = 0 (this partition), IMMED = 0 (done when there). */
	if (block <= UINT32_MAX) {
		uint8_t cdb[10] = {SCSI_OP_LOCATE10};
		be_put(cdb + 3, block, 4);
		return phys_scsi_known_place(u, phys_scsi_run_nodata(&l->scsi, u, "LOCATE(10)", cdb, sizeof cdb, 0));
	}
	uint8_t cdb[16] = {SCSI_OP_LOCATE16};
	be_put(cdb + 4, block, 8);
	return phys_scsi_known_place(u, phys_scsi_run_nodata(&l->scsi, u, "LOCATE(16)", cdb, sizeof cdb, 0));
}

static int iscsi_locate(struct phys_lib *pl, unsigned d, uint64_t block)
{
	DRIVE_CALL(pl, d, locate_locked(lib_of(pl), d, block));
}

static int status_locked(struct phys_lib *pl, unsigned d, struct phys_drive_status *st)
{
	struct iscsi_lib *l = lib_of(pl);
	struct phys_scsi_unit *u = &l->drive[d];
	struct phys_scsi_reply r;
	int rc;
	if ((rc = phys_scsi_test_unit_ready(&l->scsi, u, &r)) != VTL_OK)
		return rc;
	if (r.status != SCSI_GOOD && !(r.status == SCSI_CHECK_CONDITION && r.sense && r.s.key == SK_NOT_READY))
		return phys_scsi_fail_reply(&l->scsi, u, "TEST UNIT READY", &r);
	st->ready = r.status == SCSI_GOOD;
	st->written = l->written[d];

	/* Limits and alerts are the drive's, tape or not; a drive without them reports 0. */
	if ((rc = phys_scsi_read_block_limits(&l->scsi, u, &st->max_block)) != VTL_OK)
		return rc;
	if ((rc = phys_scsi_tapealert(&l->scsi, u, &st->tapealert)) != VTL_OK)
		return rc;
	if (!st->ready)
		return VTL_OK;

	uint8_t ms[MS_LEN];
	uint8_t ms_cdb[6] = {SCSI_OP_MODE_SENSE6, MS_DBD, MS_ALL_PAGES, 0, MS_LEN};
	if ((rc = phys_scsi_exec_good(&l->scsi, u, "MODE SENSE(6)", ms_cdb, sizeof ms_cdb, PHYS_SCSI_IN, ms,
				      sizeof ms, 0, &r)) != VTL_OK)
		return rc;
	if (r.got <= MS_DEVICE_SPECIFIC)
		return phys_fail(pl, VTL_E_IO, "%s: MODE SENSE(6): %zu bytes, short of the header", u->name, r.got);
	st->write_protected = ms[MS_DEVICE_SPECIFIC] & MS_WP;
	return phys_scsi_read_position(&l->scsi, u, &l->short_position[d], st);
}

static int iscsi_status(struct phys_lib *pl, unsigned d, struct phys_drive_status *st)
{
	memset(st, 0, sizeof *st);
	st->file = UINT64_MAX;
	DRIVE_CALL(pl, d, status_locked(pl, d, st));
}

static void iscsi_close(struct phys_lib *pl)
{
	if (!pl)
		return;
	struct iscsi_lib *l = lib_of(pl);
	for (unsigned d = 0; d < PHYS_MAX_DRIVES; d++) {
		phys_iscsi_link_close(l->drive[d].channel);
		phys_scsi_unit_destroy(&l->drive[d]);
	}
	phys_iscsi_link_close(l->ctx);
	phys_scsi_release(&l->scsi);
	free(l);
}

static const struct phys_ops iscsi_ops = {
	.kind = "iscsi",
	.inventory = phys_scsi_inventory,
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

/* The LUNs the target reports, into luns (at most MAX_LUNS); those of another addressing method are skipped. */
static int report_luns(struct iscsi_lib *l, int *luns, unsigned *n)
{
	struct phys_scsi_unit lun0 = {.id = 0};
	snprintf(lun0.name, sizeof lun0.name, "LUN 0");
	uint8_t *buf = l->scsi.buf;
	size_t alloc = RL_ALLOC_FIRST;
	struct phys_scsi_reply r;
	for (;;) {
		uint8_t cdb[12] = {SCSI_OP_REPORT_LUNS};
		be_put(cdb + 6, alloc, 4);
		int rc = phys_scsi_exec_good(&l->scsi, &lun0, "REPORT LUNS", cdb, sizeof cdb, PHYS_SCSI_IN, buf, alloc,
					     0, &r);
		if (rc != VTL_OK)
			return rc;
		if (r.got < RL_HDR)
			return phys_fail(&l->scsi.pub, VTL_E_IO, "LUN 0: REPORT LUNS: %zu bytes, short of the header",
					 r.got);
		size_t list = be_get(buf, 4);
		if (RL_HDR + list <= r.got || alloc == BUF_LEN)
			break;
		alloc = RL_HDR + list < BUF_LEN ? RL_HDR + list : BUF_LEN;
	}
	size_t end = RL_HDR + be_get(buf, 4);
	if (end > r.got)
		end = r.got;
	*n = 0;
	for (size_t at = RL_HDR; at + RL_ENTRY <= end && *n < MAX_LUNS; at += RL_ENTRY) {
		uint8_t method = buf[at] & RL_METHOD_MASK;
		if (method != RL_METHOD_PERIPHERAL && method != RL_METHOD_FLAT)
			continue;
		luns[(*n)++] = (int)((buf[at] & ~RL_METHOD_MASK) << 8 | buf[at + 1]);
	}
	return VTL_OK;
}

/* INQUIRY of lun: its peripheral device type, or -1 when no unit is connected there; and its serial (drives). */
static int identify(struct iscsi_lib *l, int lun, int *type, char *serial, size_t cap)
{
	struct phys_scsi_unit u = {.id = lun};
	snprintf(u.name, sizeof u.name, "LUN %d", lun);
	serial[0] = 0;
	int rc = phys_scsi_device_type(&l->scsi, &u, type);
	if (rc != VTL_OK || *type != SCSI_PDT_TAPE)
		return rc;
	return phys_scsi_serial(&l->scsi, &u, serial, cap);
}

static void set_drive(struct iscsi_lib *l, uint16_t addr, int lun)
{
	unsigned d = l->scsi.pub.drives++;
	l->scsi.pub.drive_addr[d] = addr;
	l->drive[d].id = lun;
	snprintf(l->drive[d].name, sizeof l->drive[d].name, "drive %u (LUN %d)", d, lun);
}

/*
 * Pairs drive LUNs with data transfer elements: by the identifier each element reports (DVCID) and each
 * LUN's serial number; when the changer reports none, the i-th LUN is the i-th element.
 */
static int map_drives(struct iscsi_lib *l, struct drive_lun *dl, unsigned ndl)
{
	struct phys_lib *pl = &l->scsi.pub;
	struct phys_scsi_drive_elems *a = calloc(1, sizeof *a);
	if (!a)
		return phys_fail(pl, VTL_E_NOMEM, "no memory for the drive map");
	int rc = phys_scsi_drive_elements(&l->scsi, a);
	if (rc != VTL_OK) {
		free(a);
		return rc;
	}
	bool ids = false;
	for (unsigned i = 0; i < a->n; i++)
		ids |= a->e[i].id[0] != 0;
	if (ids) {
		for (unsigned i = 0; i < a->n && pl->drives < PHYS_MAX_DRIVES; i++)
			for (unsigned j = 0; j < ndl; j++)
				if (!dl[j].used && phys_element_is_drive(&a->e[i], dl[j].serial)) {
					dl[j].used = true;
					set_drive(l, a->e[i].e.address, dl[j].lun);
					break;
				}
		if (pl->drives == 0)
			rc = phys_fail(pl, VTL_E_NOTFOUND,
				       "%s: none of its %u drive elements names a drive LUN of this target by serial "
				       "number (first element: '%s', first LUN %d: '%s')",
				       l->scsi.changer.name, a->n, a->n ? a->e[0].id : "", ndl ? dl[0].lun : -1,
				       ndl ? dl[0].serial : "");
	} else if (a->n != ndl) {
		rc = phys_fail(pl, VTL_E_CONFIG,
			       "%s: %u drive elements but %u drive LUNs, and no device identifiers (DVCID) to tell "
			       "which is which",
			       l->scsi.changer.name, a->n, ndl);
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
	struct phys_lib *pl = &l->scsi.pub;
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
		if (type == SCSI_PDT_CHANGER && !changer) {
			struct phys_scsi_unit u = {.id = luns[i]};
			snprintf(u.name, sizeof u.name, "LUN %d", luns[i]);
			struct phys_scsi_reply r;
			/* TEST UNIT READY takes this session's attentions (exec retries them); the drives take theirs
			 * on their own sessions (open_drive_sessions). */
			if ((rc = phys_scsi_test_unit_ready(&l->scsi, &u, &r)) != VTL_OK)
				return rc;
			changer = true;
			l->scsi.changer.id = luns[i];
			snprintf(l->scsi.changer.name, sizeof l->scsi.changer.name, "changer (LUN %d)", luns[i]);
		} else if (type == SCSI_PDT_TAPE) {
			dl[ndl].lun = luns[i];
			dl[ndl].used = false;
			memcpy(dl[ndl].serial, serial, sizeof serial);
			ndl++;
		}
	}
	if (!changer)
		return phys_fail(pl, VTL_E_NOTFOUND, "none of the target's %u LUNs is a medium changer (type 08h)",
				 nluns);
	if (ndl == 0)
		return phys_fail(pl, VTL_E_NOTFOUND, "none of the target's %u LUNs is a tape drive (type 01h)", nluns);
	if ((rc = phys_scsi_find_transport(&l->scsi)) != VTL_OK)
		return rc;
	return map_drives(l, dl, ndl);
}

/* Logs each mapped drive in on a session of its own and takes that session's attentions on its LUN. */
static int open_drive_sessions(struct iscsi_lib *l, const struct phys_iscsi_config *cfg, uint32_t isid)
{
	for (unsigned d = 0; d < l->scsi.pub.drives; d++) {
		struct phys_scsi_unit *u = &l->drive[d];
		char who[PHYS_SCSI_NAME_MAX + 48];
		snprintf(who, sizeof who, "%s, session %u of %u", u->name, d + 2, l->scsi.pub.drives + 1);
		struct iscsi_context *ctx;
		int rc = phys_iscsi_link_open(&l->scsi.pub, cfg, isid, DRIVE_QUALIFIER(d), who, &ctx);
		if (rc != VTL_OK)
			return rc;
		u->channel = ctx;
		struct phys_scsi_reply r;
		if ((rc = phys_scsi_test_unit_ready(&l->scsi, u, &r)) != VTL_OK) /* not ready is fine here */
			return rc;
	}
	return VTL_OK;
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
	bool ok = l && phys_scsi_init(&l->scsi, &iscsi_ops, &iscsi_transport, BUSY_RETRIES, BUF_LEN) == VTL_OK;
	for (unsigned d = 0; ok && d < PHYS_MAX_DRIVES; d++)
		ok = phys_scsi_unit_init(&l->drive[d], VTL_LOCK_PHYS_DRIVE) == VTL_OK;
	if (!ok) {
		if (l)
			iscsi_close(&l->scsi.pub);
		snprintf(err, errlen, "iSCSI library: out of memory");
		return VTL_E_NOMEM;
	}
	l->ready_timeout_s = cfg->ready_timeout_s ? cfg->ready_timeout_s : READY_TIMEOUT_DEFAULT_S;
	l->command_timeout_s = cfg->command_timeout_s;
	uint32_t isid = phys_iscsi_link_isid_random();
	int rc = phys_iscsi_link_open(&l->scsi.pub, cfg, isid, CHANGER_QUALIFIER, NULL, &l->ctx);
	if (rc == VTL_OK)
		rc = discover(l);
	if (rc == VTL_OK)
		rc = open_drive_sessions(l, cfg, isid);
	if (rc != VTL_OK) {
		snprintf(err, errlen, "%s", phys_error(&l->scsi.pub));
		iscsi_close(&l->scsi.pub);
		return rc;
	}
	/* The attentions of the new sessions say nothing about a position we relied on: there was none yet. */
	for (unsigned d = 0; d < l->scsi.pub.drives; d++)
		l->drive[d].position_lost = false;
	*out = &l->scsi.pub;
	return VTL_OK;
}
