/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The Linux st physical library: tape I/O goes through the st driver, so
 * that st's view of the tape (file and block numbers, its end-of-medium
 * state, the filemark it writes on close) stays right for every other tool
 * on the host; the changer, which has no driver of its own worth using
 * (ch offers no volume tags with DVCID), gets SCSI commands through SG_IO.
 *
 * What st does, and what this file makes of it (drivers/scsi/st.c and
 * Documentation/scsi/st.rst, kernel 6.x), in variable block mode:
 *
 * - write() of one block is one WRITE(6). When the drive reports early
 *   warning (CHECK CONDITION, EOM bit, nothing left unwritten), st returns
 *   the whole count, as if all were well, and remembers ST_EOM_OK, which
 *   MTIOCGET shows as GMT_EOT. The next write() is refused with ENOSPC
 *   without touching the tape (st's chance for the application to notice);
 *   st then lets one more write() through, and so on, one refusal after
 *   each write, until the drive says VOLUME OVERFLOW (the block did not
 *   fit): ENOSPC again, now with GMT_EOT. The two ENOSPC are told apart by
 *   MTIOCGET: the soft refusal leaves GMT_EOD (ST_EOD_1), the real end
 *   GMT_EOT. So write_block returns VTL_W_EARLY_WARNING when GMT_EOT follows
 *   a full write, writes again after a soft refusal, and VTL_E_EOM after
 *   the real end.
 * - st writes asynchronously (returns before the drive answered, the error
 *   surfacing on the next call) when it copies the block through its own
 *   buffer; with a buffer aligned for direct I/O it maps the caller's pages
 *   and waits. Blocks are therefore written from page-aligned memory (a
 *   bounce buffer when the caller's is not), so that each error belongs to
 *   the block that caused it.
 * - read() returning 0 is a filemark; reading on at end of data just after
 *   a filemark returns 0 once more (st turns that BLANK CHECK into ST_EOD,
 *   shown as GMT_EOD), then EIO. A 0 with GMT_EOD, or EIO with GMT_EOD, is
 *   VTL_E_EOD. A block longer than the read is ENOMEM (ILI with a negative
 *   residue), and st has moved past it: VTL_E_INVAL. A BLANK CHECK that
 *   does not follow a filemark is a bare EIO that st does not flag: it
 *   stays VTL_E_IO, which is why a caller should not read past its own data.
 * - Before MTREW, MTOFFL, MTSEEK and MTBSF, and on close, st writes a
 *   filemark if the last thing done was a write. The migrator ends every
 *   copy with its own filemark, so this does not happen in its use.
 * - MTBSF leaves the tape on the beginning side of the filemark, as SPACE
 *   does; MTSEEK and MTIOCPOS use st's block addresses (LOCATE and READ
 *   POSITION with BT set unless st's scsi2logical option is on): on LTO
 *   drives these are the logical object numbers. After MTSEEK or MTBSF st
 *   no longer knows the file number; status then asks the drive (READ
 *   POSITION, long form).
 * - st looks at the drive only when its node is opened: after a load the
 *   node is opened again until st sees the tape online.
 *
 * The changer's commands and the drives' queries (INQUIRY, READ BLOCK
 * LIMITS, READ POSITION, LOG SENSE) are those of the SCSI initiator
 * (migrator/phys_scsi.c), with SG_IO as its transport. SG_IO does not retry
 * anything: the initiator sends a command again after a unit attention (the
 * command was not executed, SAM-5 5.14) or BUSY, a few times.
 */
#include "migrator/phys_st.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mtio.h>
#include <unistd.h>

#include <scsi/sg.h>

#include "common/vtl_error.h"
#include "migrator/phys_scsi.h"
#include "migrator/phys_st_find.h"

#define RES_ALLOC (64u << 10) /* READ ELEMENT STATUS: one request's allocation; longer reports are paged */

#define SG_RETRIES 8             /* BUSY: sent again this many times (as unit attentions, PHYS_SCSI_UA_RETRIES) */
#define DID_TIME_OUT 0x03        /* SG_IO host_status: the command timed out (the kernel's scsi.h) */
#define DRIVE_CMD_TIMEOUT_MS 60000u
#define COMMAND_TIMEOUT_DEFAULT_S 600 /* a MOVE MEDIUM in a big library takes minutes */
#define READY_TIMEOUT_DEFAULT_S 300   /* an LTO load and thread takes 15-60 s; a busy robot more */
#define READY_POLL_FIRST_MS 50
#define READY_POLL_MAX_MS 1000
#define IO_ALIGN 4096            /* page alignment: st then maps the caller's pages (direct I/O, synchronous) */

struct st_drive {
	struct phys_scsi_unit u; /* its SCSI unit, and its name for errors: "drive 0 (/dev/nst0)" */
	char *path;
	int fd;             /* the st node, -1 when not open */
	int sg_fd;          /* its sg node, or -1: SG_IO goes to fd */
	bool sg_denied;     /* SG_IO was refused (no CAP_SYS_RAWIO): do without it */
	bool short_position; /* the drive refused the long READ POSITION: use the short one */
	uint32_t max_block; /* READ BLOCK LIMITS; 0 when not known */
	uint64_t written;   /* bytes since the tape was loaded */
	char serial[PHYS_ID_MAX];
	void *bounce;       /* page-aligned copy of an unaligned block to write */
	size_t bounce_len;
};

struct st_lib {
	struct phys_scsi scsi; /* first: the migrator sees only its phys_lib */
	int changer_fd;
	unsigned ready_timeout_s, command_timeout_s;
	/* Drive d: all of drive[d] is under its unit's lock (drive[d].u), the changer's fd under the changer's. */
	struct st_drive drive[PHYS_MAX_DRIVES];
	char found[PHYS_MAX_DRIVES][2][PHYS_ST_PATH_MAX]; /* discovered st and sg nodes, when none were listed */
};

static struct st_lib *lib_of(struct phys_lib *l)
{
	return (struct st_lib *)l;
}

/* --------------------------------------------------------------- SG_IO */

/* phys_scsi_transport.execute: one SG_IO, to the changer's sg node or drive u->id's (its sg node, else
 * its st node); VTL_E_BUSY without a word when this process may not ask the drive. */
static int sg_execute(struct phys_scsi *s, struct phys_scsi_unit *u, const char *op, const uint8_t *cdb,
		      unsigned cdb_len, enum phys_scsi_dir dir, void *buf, size_t len, struct phys_scsi_result *res)
{
	struct st_lib *l = lib_of(&s->pub);
	struct st_drive *dr = u->id >= 0 ? &l->drive[u->id] : NULL;
	int fd = l->changer_fd;
	if (dr) {
		if (dr->sg_denied || (dr->sg_fd < 0 && dr->fd < 0))
			return VTL_E_BUSY;
		fd = dr->sg_fd >= 0 ? dr->sg_fd : dr->fd;
	}
	struct sg_io_hdr h = {.interface_id = 'S',
			      .dxfer_direction = !len		       ? SG_DXFER_NONE
						 : dir == PHYS_SCSI_OUT ? SG_DXFER_TO_DEV
									: SG_DXFER_FROM_DEV,
			      .cmd_len = (unsigned char)cdb_len,
			      .mx_sb_len = sizeof res->sense,
			      .dxfer_len = (unsigned)len,
			      .dxferp = buf,
			      .cmdp = (unsigned char *)(uintptr_t)cdb, /* the kernel only reads the CDB */
			      .sbp = res->sense,
			      .timeout = u->timeout_ms};
	if (ioctl(fd, SG_IO, &h) < 0) {
		int e = errno;
		if (dr && e == EPERM)
			dr->sg_denied = true; /* st wants CAP_SYS_RAWIO for SG_IO: without it, no use asking again */
		return phys_fail(&s->pub, e == EPERM ? VTL_E_BUSY : VTL_E_IO, "%s: %s: SG_IO: %s", u->name, op,
				 strerror(e));
	}
	/* host_status: the transport lost the command (DID_TIME_OUT 03h, DID_NO_CONNECT 01h, ...). */
	if (h.host_status)
		return phys_fail(&s->pub, VTL_E_IO, "%s: %s: %s (host status %02Xh)", u->name, op,
				 h.host_status == DID_TIME_OUT ? "no answer in time" : "not delivered", h.host_status);
	res->status = h.status;
	res->residual = h.resid >= 0 && (size_t)h.resid <= len ? (size_t)h.resid : len;
	res->sense_len = h.sb_len_wr;
	if (h.sb_len_wr > 0 && res->status == SCSI_GOOD)
		res->status = SCSI_CHECK_CONDITION; /* driver-reported sense without a status */
	return VTL_OK;
}

static const struct phys_scsi_transport sg_transport = {.execute = sg_execute};

/* ------------------------------------------------------------- the drives */


/* The vtl error for a failed st call. */
static int rc_of_errno(int e)
{
	switch (e) {
	case ENOSPC:
		return VTL_E_EOM;
	case EACCES:
	case EROFS:
		return VTL_E_READONLY;
	case EINVAL:
	case ENOMEM:
		return VTL_E_INVAL;
	case EBUSY:
		return VTL_E_BUSY;
	default:
		return VTL_E_IO;
	}
}

static int fail_errno(struct st_lib *l, unsigned d, const char *op, int e, const char *why)
{
	return phys_fail(&l->scsi.pub, rc_of_errno(e), "%s: %s: %s%s%s", l->drive[d].u.name, op, strerror(e),
			 why[0] ? " " : "", why);
}

static int get_status(struct st_lib *l, unsigned d, struct mtget *mg)
{
	if (ioctl(l->drive[d].fd, MTIOCGET, mg) < 0)
		return fail_errno(l, d, "MTIOCGET", errno, "");
	return VTL_OK;
}

/* One MTIOCTOP: VTL_OK, or the failure in st's words. */
static int mtop(struct st_lib *l, unsigned d, short op, int count, const char *name)
{
	struct mtop m = {.mt_op = op, .mt_count = count};
	if (ioctl(l->drive[d].fd, MTIOCTOP, &m) == 0)
		return VTL_OK;
	return fail_errno(l, d, name, errno, "");
}

/* Asks the drive for its limits (READ BLOCK LIMITS); leaves 0 when it cannot be asked. */
static void read_limits(struct st_lib *l, unsigned d)
{
	vtl_ignore(phys_scsi_read_block_limits(&l->scsi, &l->drive[d].u, &l->drive[d].max_block)); /* 0 says it all */
}

/*
 * Opens drive d's st node again, so that st looks at the drive afresh (st checks for a tape only on
 * open). O_NONBLOCK lets the open succeed without a tape; it is then cleared so that commands wait.
 * A write-protected tape refuses O_RDWR (EROFS): it is opened read-only then.
 */
static int reopen(struct st_lib *l, unsigned d)
{
	struct st_drive *dr = &l->drive[d];
	if (dr->fd >= 0)
		close(dr->fd); /* st's own errors on close (a filemark on a tape that left) say nothing to us */
	dr->fd = open(dr->path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (dr->fd < 0 && errno == EROFS)
		dr->fd = open(dr->path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (dr->fd < 0)
		return fail_errno(l, d, "open", errno, "");
	int fl = fcntl(dr->fd, F_GETFL);
	if (fl < 0 || fcntl(dr->fd, F_SETFL, fl & ~O_NONBLOCK) < 0)
		return fail_errno(l, d, "fcntl", errno, "");
	return VTL_OK;
}

/* A tape is now in drive d: variable block mode (MTSETBLK 0), its limits, nothing written yet. */
static int tape_loaded(struct st_lib *l, unsigned d)
{
	l->drive[d].written = 0;
	read_limits(l, d);
	return mtop(l, d, MTSETBLK, 0, "MTSETBLK 0 (variable block mode)");
}

/* Opens drive d's node again until st sees the tape online, at most ready_timeout_s. */
static int wait_ready(struct st_lib *l, unsigned d)
{
	struct phys_wait w;
	phys_wait_start(&w, l->ready_timeout_s, READY_POLL_FIRST_MS, READY_POLL_MAX_MS);
	for (;;) {
		struct mtget mg;
		int rc = reopen(l, d);
		if (rc == VTL_OK)
			rc = get_status(l, d, &mg);
		if (rc != VTL_OK)
			return rc;
		if ((GMT_ONLINE(mg.mt_gstat) != 0))
			return tape_loaded(l, d);
		if (!phys_wait_more(&w))
			return phys_fail(&l->scsi.pub, VTL_E_IO, "%s: not online %u s after the load", l->drive[d].u.name,
					 l->ready_timeout_s);
	}
}

static struct phys_scsi_unit *drive_unit(struct phys_scsi *s, unsigned d)
{
	return &lib_of(&s->pub)->drive[d].u;
}

static int tape_left(struct phys_scsi *s, unsigned d)
{
	struct st_lib *l = lib_of(&s->pub);
	l->drive[d].written = 0;
	return reopen(l, d); /* st forgets the tape that left */
}

static int tape_arrived(struct phys_scsi *s, unsigned d)
{
	return wait_ready(lib_of(&s->pub), d);
}

static const struct phys_scsi_move_ops move_ops = {drive_unit, tape_left, tape_arrived};

static int st_move(struct phys_lib *pl, uint16_t from, uint16_t to)
{
	return phys_scsi_move_medium(pl, &move_ops, from, to);
}

static int rewind_locked(struct phys_lib *pl, unsigned d)
{
	struct st_lib *l = lib_of(pl);
	int rc = phys_check_drive(pl, d);
	return rc != VTL_OK ? rc : mtop(l, d, MTREW, 1, "MTREW (rewind)");
}

static int unload_locked(struct phys_lib *pl, unsigned d)
{
	struct st_lib *l = lib_of(pl);
	int rc = phys_check_drive(pl, d);
	if (rc != VTL_OK)
		return rc;
	/* MTOFFL rewinds, then unloads (LOAD UNLOAD with LOAD = 0), and st marks the drive empty. */
	if ((rc = mtop(l, d, MTOFFL, 1, "MTOFFL (rewind and unload)")) == VTL_OK)
		l->drive[d].written = 0;
	return rc;
}

/* buf, or a page-aligned copy of it, so that st writes it with direct I/O, synchronously. */
static const void *aligned(struct st_drive *dr, const void *buf, size_t len)
{
	if ((uintptr_t)buf % IO_ALIGN == 0)
		return buf;
	if (dr->bounce_len < len) {
		void *p = NULL;
		if (posix_memalign(&p, IO_ALIGN, len) != 0)
			return NULL;
		free(dr->bounce);
		dr->bounce = p;
		dr->bounce_len = len;
	}
	memcpy(dr->bounce, buf, len);
	return dr->bounce;
}

static int write_block_locked(struct phys_lib *pl, unsigned d, const void *buf, size_t len)
{
	struct st_lib *l = lib_of(pl);
	int rc = phys_check_drive(pl, d);
	if (rc != VTL_OK)
		return rc;
	struct st_drive *dr = &l->drive[d];
	if (len == 0 || len > INT_MAX || (dr->max_block && len > dr->max_block))
		return phys_fail(pl, VTL_E_INVAL, "%s: WRITE: a block of %zu bytes (the drive takes 1 to %u)", dr->u.name, len,
				 dr->max_block ? dr->max_block : INT_MAX);
	const void *p = aligned(dr, buf, len);
	if (!p)
		return phys_fail(pl, VTL_E_NOMEM, "%s: WRITE: no memory for an aligned copy of %zu bytes", dr->u.name, len);
	for (int attempt = 0;; attempt++) {
		ssize_t n = write(dr->fd, p, len);
		int e = errno;
		struct mtget mg;
		if (n == (ssize_t)len) {
			dr->written += len;
			if ((rc = get_status(l, d, &mg)) != VTL_OK)
				return rc;
			return (GMT_EOT(mg.mt_gstat) != 0) ? VTL_W_EARLY_WARNING : VTL_OK;
		}
		if (n >= 0)
			return phys_fail(pl, VTL_E_IO, "%s: WRITE: %zd of %zu bytes written", dr->u.name, n, len);
		if (e != ENOSPC)
			return fail_errno(l, d, "WRITE", e, "");
		if ((rc = get_status(l, d, &mg)) != VTL_OK)
			return rc;
		/* st's refusal after early warning wrote nothing and leaves GMT_EOD: the next write goes through. */
		if (attempt == 0 && (GMT_EOD(mg.mt_gstat) != 0) && !(GMT_EOT(mg.mt_gstat) != 0))
			continue;
		return fail_errno(l, d, "WRITE", e, "(end of medium)");
	}
}

/* Asks the drive where it is (READ POSITION): *file UINT64_MAX and *ew false when it cannot be asked. */
static void read_position(struct st_lib *l, unsigned d, uint64_t *file, bool *ew)
{
	struct phys_drive_status pos = {.file = UINT64_MAX};
	if (phys_scsi_read_position(&l->scsi, &l->drive[d].u, &l->drive[d].short_position, &pos) != VTL_OK)
		pos = (struct phys_drive_status){.file = UINT64_MAX}; /* st's own view stands alone */
	*file = pos.file;
	*ew = pos.early_warning;
}

static int write_filemarks_locked(struct phys_lib *pl, unsigned d, unsigned n)
{
	struct st_lib *l = lib_of(pl);
	int rc = phys_check_drive(pl, d);
	if (rc != VTL_OK)
		return rc;
	if (n > INT_MAX)
		return phys_fail(pl, VTL_E_INVAL, "%s: MTWEOF: %u filemarks", l->drive[d].u.name, n);
	/* MTWEOF is WRITE FILEMARKS with IMMED = 0: done when the data before it is on the tape. */
	if ((rc = mtop(l, d, MTWEOF, (int)n, "MTWEOF (write filemarks)")) != VTL_OK)
		return rc;
	/* st takes early warning on a filemark as success and forgets it: the drive still knows. */
	uint64_t file;
	bool ew;
	read_position(l, d, &file, &ew);
	return ew ? VTL_W_EARLY_WARNING : VTL_OK;
}

static int read_block_locked(struct phys_lib *pl, unsigned d, void *buf, size_t cap, size_t *len)
{
	struct st_lib *l = lib_of(pl);
	int rc = phys_check_drive(pl, d);
	if (rc != VTL_OK)
		return rc;
	struct st_drive *dr = &l->drive[d];
	if (cap == 0)
		return phys_fail(pl, VTL_E_INVAL, "%s: READ: a buffer of 0 bytes", dr->u.name);
	/* st refuses (EINVAL) a read longer than the drive's maximum block: no block is longer anyway. */
	size_t want = cap > INT_MAX ? INT_MAX : cap;
	if (dr->max_block && want > dr->max_block)
		want = dr->max_block;
	ssize_t n = read(dr->fd, buf, want);
	int e = errno;
	if (n > 0) {
		*len = (size_t)n;
		return VTL_OK;
	}
	if (n < 0 && e == ENOMEM)
		return phys_fail(pl, VTL_E_INVAL,
				 "%s: READ: the block is longer than the buffer of %zu bytes (st: %s); the tape is now "
				 "past it",
				 dr->u.name, want, strerror(e));
	if (n < 0 && e != EIO)
		return fail_errno(l, d, "READ", e, "");
	struct mtget mg;
	if ((rc = get_status(l, d, &mg)) != VTL_OK)
		return rc;
	if ((GMT_EOD(mg.mt_gstat) != 0))
		return phys_fail(pl, VTL_E_EOD, "%s: READ: end of data", dr->u.name);
	if (n == 0)
		return VTL_W_FILEMARK; /* st's way of saying filemark: no data, and the tape is past it */
	return fail_errno(l, d, "READ", e, "");
}

static int space_filemarks_locked(struct phys_lib *pl, unsigned d, int64_t n)
{
	struct st_lib *l = lib_of(pl);
	int rc = phys_check_drive(pl, d);
	if (rc != VTL_OK || n == 0)
		return rc;
	if (n > INT_MAX || n < -(int64_t)INT_MAX)
		return phys_fail(pl, VTL_E_INVAL, "%s: space %" PRId64 " filemarks: too many at once", l->drive[d].u.name, n);
	const char *name = n > 0 ? "MTFSF (space filemarks forward)" : "MTBSF (space filemarks backward)";
	struct mtop m = {.mt_op = n > 0 ? MTFSF : MTBSF, .mt_count = (int)(n > 0 ? n : -n)};
	if (ioctl(l->drive[d].fd, MTIOCTOP, &m) == 0)
		return VTL_OK;
	int e = errno;
	struct mtget mg;
	if ((rc = get_status(l, d, &mg)) != VTL_OK)
		return rc;
	if (n > 0 && (GMT_EOD(mg.mt_gstat) != 0))
		return phys_fail(pl, VTL_E_EOD, "%s: %s: end of data before %" PRId64 " filemarks", l->drive[d].u.name, name, n);
	if (n < 0 && (GMT_BOT(mg.mt_gstat) != 0))
		return phys_fail(pl, VTL_E_NOTFOUND, "%s: %s: the beginning of the tape before %" PRId64 " filemarks",
				 l->drive[d].u.name, name, -n);
	return fail_errno(l, d, name, e, "");
}

static int locate_locked(struct phys_lib *pl, unsigned d, uint64_t block)
{
	struct st_lib *l = lib_of(pl);
	int rc = phys_check_drive(pl, d);
	if (rc != VTL_OK)
		return rc;
	if (block > INT_MAX) /* struct mtop's count is an int */
		return phys_fail(pl, VTL_E_INVAL, "%s: MTSEEK: block %" PRIu64 " is beyond what st can ask for",
				 l->drive[d].u.name, block);
	return mtop(l, d, MTSEEK, (int)block, "MTSEEK (locate)");
}

static int status_locked(struct phys_lib *pl, unsigned d, struct phys_drive_status *st)
{
	struct st_lib *l = lib_of(pl);
	int rc = phys_check_drive(pl, d);
	if (rc != VTL_OK)
		return rc;
	struct st_drive *dr = &l->drive[d];
	struct mtget mg;
	if ((rc = get_status(l, d, &mg)) != VTL_OK)
		return rc;
	if (!(GMT_ONLINE(mg.mt_gstat) != 0)) {
		/* st looks for a tape only on open: look again, in case one was loaded behind our back. */
		if ((rc = reopen(l, d)) != VTL_OK || (rc = get_status(l, d, &mg)) != VTL_OK)
			return rc;
		if ((GMT_ONLINE(mg.mt_gstat) != 0) && (rc = tape_loaded(l, d)) != VTL_OK)
			return rc;
	}
	st->ready = (GMT_ONLINE(mg.mt_gstat) != 0);
	st->max_block = dr->max_block;
	st->written = dr->written;
	vtl_ignore(phys_scsi_tapealert(&l->scsi, &dr->u, &st->tapealert)); /* a drive that cannot be asked has none */
	if (!st->ready)
		return VTL_OK;
	st->write_protected = GMT_WR_PROT(mg.mt_gstat) != 0;
	struct mtpos pos;
	if (ioctl(dr->fd, MTIOCPOS, &pos) < 0)
		return fail_errno(l, d, "MTIOCPOS", errno, "");
	st->block = (uint64_t)pos.mt_blkno;
	st->bot = st->block == 0;
	bool ew;
	uint64_t file;
	read_position(l, d, &file, &ew);
	st->early_warning = (GMT_EOT(mg.mt_gstat) != 0) || ew;
	/* st's own count when it has one; after MTSEEK or MTBSF it has not, and the drive's is used. */
	st->file = mg.mt_fileno >= 0 ? (uint64_t)mg.mt_fileno : file;
	return VTL_OK;
}

/* Each drive call runs its body under the drive's lock (phys.h). */
#define DRIVE_CALL(pl, d, call) PHYS_SCSI_DRIVE_CALL(pl, d, &lib_of(pl)->drive[d].u, call)

static int st_rewind(struct phys_lib *pl, unsigned d)
{
	DRIVE_CALL(pl, d, rewind_locked(pl, d));
}

static int st_unload(struct phys_lib *pl, unsigned d)
{
	DRIVE_CALL(pl, d, unload_locked(pl, d));
}

static int st_write_block(struct phys_lib *pl, unsigned d, const void *buf, size_t len)
{
	DRIVE_CALL(pl, d, write_block_locked(pl, d, buf, len));
}

static int st_write_filemarks(struct phys_lib *pl, unsigned d, unsigned n)
{
	DRIVE_CALL(pl, d, write_filemarks_locked(pl, d, n));
}

static int st_read_block(struct phys_lib *pl, unsigned d, void *buf, size_t cap, size_t *len)
{
	*len = 0;
	DRIVE_CALL(pl, d, read_block_locked(pl, d, buf, cap, len));
}

static int st_space_filemarks(struct phys_lib *pl, unsigned d, int64_t n)
{
	DRIVE_CALL(pl, d, space_filemarks_locked(pl, d, n));
}

static int st_locate(struct phys_lib *pl, unsigned d, uint64_t block)
{
	DRIVE_CALL(pl, d, locate_locked(pl, d, block));
}

static int st_status(struct phys_lib *pl, unsigned d, struct phys_drive_status *st)
{
	memset(st, 0, sizeof *st);
	st->file = UINT64_MAX;
	DRIVE_CALL(pl, d, status_locked(pl, d, st));
}

static void st_close(struct phys_lib *pl)
{
	if (!pl)
		return;
	struct st_lib *l = lib_of(pl);
	for (unsigned d = 0; d < PHYS_MAX_DRIVES; d++) {
		if (l->drive[d].fd >= 0)
			close(l->drive[d].fd);
		if (l->drive[d].sg_fd >= 0)
			close(l->drive[d].sg_fd);
		free(l->drive[d].path);
		free(l->drive[d].bounce);
		phys_scsi_unit_destroy(&l->drive[d].u);
	}
	if (l->changer_fd >= 0)
		close(l->changer_fd);
	phys_scsi_release(&l->scsi);
	free(l);
}

static const struct phys_ops st_ops = {
	.kind = "st",
	.inventory = phys_scsi_inventory,
	.move = st_move,
	.unload = st_unload,
	.rewind = st_rewind,
	.write_block = st_write_block,
	.write_filemarks = st_write_filemarks,
	.read_block = st_read_block,
	.space_filemarks = st_space_filemarks,
	.locate = st_locate,
	.status = st_status,
	.close = st_close,
};

/* ------------------------------------------------------------------- open */

/* The drive's serial number (INQUIRY, unit serial number page), "" when it cannot be asked. */
static void read_serial(struct st_lib *l, unsigned d)
{
	struct st_drive *dr = &l->drive[d];
	if (phys_scsi_serial(&l->scsi, &dr->u, dr->serial, sizeof dr->serial) != VTL_OK)
		dr->serial[0] = 0; /* matched by order, as when the changer gives no identifiers */
}

/*
 * Ties each configured drive to its data transfer element: by the identifier the changer reports
 * (DVCID) and the drive's serial number; when either is missing, the i-th node is the i-th element,
 * and only when the numbers agree.
 */
static int map_drives(struct st_lib *l)
{
	struct phys_scsi_drive_elems *a = calloc(1, sizeof *a);
	if (!a)
		return phys_fail(&l->scsi.pub, VTL_E_NOMEM, "no memory for the drive map");
	int rc = phys_scsi_drive_elements(&l->scsi, a);
	bool ids = a->n > 0;
	for (unsigned i = 0; i < a->n; i++)
		ids &= a->e[i].id[0] != 0;
	for (unsigned d = 0; d < l->scsi.pub.drives; d++)
		ids &= l->drive[d].serial[0] != 0;
	for (unsigned d = 0; rc == VTL_OK && ids && d < l->scsi.pub.drives; d++) {
		unsigned i = 0;
		while (i < a->n && !phys_element_is_drive(&a->e[i], l->drive[d].serial))
			i++;
		if (i == a->n)
			rc = phys_fail(&l->scsi.pub, VTL_E_NOTFOUND,
				       "%s: no drive element of %s names %s's serial number %s (first element: '%s')",
				       l->scsi.changer.name, l->scsi.changer.name, l->drive[d].u.name, l->drive[d].serial,
				       a->n ? a->e[0].id : "");
		else
			l->scsi.pub.drive_addr[d] = a->e[i].e.address;
	}
	if (rc == VTL_OK && !ids) {
		if (a->n != l->scsi.pub.drives)
			rc = phys_fail(&l->scsi.pub, VTL_E_CONFIG,
				       "%s: %u drive elements but %u drives configured, and no serial numbers to tell which "
				       "is which",
				       l->scsi.changer.name, a->n, l->scsi.pub.drives);
		for (unsigned d = 0; rc == VTL_OK && d < l->scsi.pub.drives; d++)
			l->scsi.pub.drive_addr[d] = a->e[d].e.address;
	}
	free(a);
	return rc;
}

/*
 * The drives the changer reports, in its order, found among this host's st drives by serial number
 * (migrator/phys_st_find.h): their st and sg nodes into st[] and sg[], *n of them, and their element
 * addresses. A drive element no st node matches is an error naming its serial number.
 */
static int discover(struct st_lib *l, const struct phys_st_config *cfg, const char **st, const char **sg, unsigned *n)
{
	struct phys_lib *pl = &l->scsi.pub;
	struct phys_scsi_drive_elems *a = calloc(1, sizeof *a);
	struct phys_st_node *nodes = calloc(PHYS_ST_NODE_MAX, sizeof *nodes);
	int rc = a && nodes ? VTL_OK : phys_fail(pl, VTL_E_NOMEM, "no memory for the drive search");
	unsigned nn = 0, order[PHYS_MAX_DRIVES];
	if (rc == VTL_OK)
		rc = phys_scsi_drive_elements(&l->scsi, a);
	if (rc == VTL_OK)
		rc = phys_st_find_nodes(pl, cfg->sysfs && cfg->sysfs[0] ? cfg->sysfs : PHYS_ST_SYSFS_DEFAULT, nodes, &nn);
	if (rc == VTL_OK)
		rc = phys_st_match(pl, l->scsi.changer.name, a->e, a->n, nodes, nn, order);
	for (unsigned i = 0; rc == VTL_OK && i < a->n; i++) {
		const struct phys_st_node *p = &nodes[order[i]];
		snprintf(l->found[i][0], sizeof l->found[i][0], "%s", p->st);
		snprintf(l->found[i][1], sizeof l->found[i][1], "%s", p->sg);
		st[i] = l->found[i][0];
		sg[i] = p->sg[0] ? l->found[i][1] : NULL;
		pl->drive_addr[i] = a->e[i].e.address;
		*n = i + 1;
	}
	free(nodes);
	free(a);
	return rc;
}

static int open_all(struct st_lib *l, const struct phys_st_config *cfg)
{
	snprintf(l->scsi.changer.name, sizeof l->scsi.changer.name, "changer (%s)", cfg->changer);
	/* SG_IO needs the node opened for writing for commands that move things (sg's rule). */
	if ((l->changer_fd = open(cfg->changer, O_RDWR | O_NONBLOCK | O_CLOEXEC)) < 0)
		return phys_fail(&l->scsi.pub, rc_of_errno(errno), "%s: open: %s", l->scsi.changer.name, strerror(errno));
	/* The wrong sg node (a drive's, a disk's) would take MOVE MEDIUM as nonsense: ask what it is first. */
	l->scsi.changer.timeout_ms = DRIVE_CMD_TIMEOUT_MS; /* an INQUIRY takes no robot's time */
	int type;
	int rc = phys_scsi_device_type(&l->scsi, &l->scsi.changer, &type);
	l->scsi.changer.timeout_ms = l->command_timeout_s * 1000u;
	if (rc != VTL_OK)
		return rc;
	if (type != SCSI_PDT_CHANGER)
		return phys_fail(&l->scsi.pub, VTL_E_CONFIG,
				 "%s: not a medium changer (peripheral device type %02Xh); lsscsi -g names the changer's "
				 "sg node (mediumx)",
				 l->scsi.changer.name, type < 0 ? 0xFFu : (unsigned)type);
	const char *st[PHYS_MAX_DRIVES], *sg[PHYS_MAX_DRIVES];
	unsigned n = cfg->drives;
	for (unsigned d = 0; d < n; d++) {
		st[d] = cfg->drive[d];
		sg[d] = cfg->drive_sg[d];
	}
	bool found = n == 0;
	if (found && (rc = discover(l, cfg, st, sg, &n)) != VTL_OK)
		return rc;
	l->scsi.pub.drives = n;
	for (unsigned d = 0; d < n; d++) {
		struct st_drive *dr = &l->drive[d];
		snprintf(dr->u.name, sizeof dr->u.name, "drive %u (%s)", d, st[d]);
		dr->u.id = (int)d;
		dr->u.timeout_ms = DRIVE_CMD_TIMEOUT_MS;
		if (!(dr->path = strdup(st[d])))
			return phys_fail(&l->scsi.pub, VTL_E_NOMEM, "no memory");
		if (sg[d] && sg[d][0] && (dr->sg_fd = open(sg[d], O_RDWR | O_NONBLOCK | O_CLOEXEC)) < 0)
			return phys_fail(&l->scsi.pub, rc_of_errno(errno), "%s: open %s: %s", dr->u.name, sg[d],
					 strerror(errno));
		if ((rc = reopen(l, d)) != VTL_OK)
			return rc;
		struct mtget mg;
		if ((rc = get_status(l, d, &mg)) != VTL_OK)
			return rc;
		if ((GMT_ONLINE(mg.mt_gstat) != 0) && (rc = tape_loaded(l, d)) != VTL_OK)
			return rc;
		if (!found)
			read_serial(l, d);
	}
	if ((rc = phys_scsi_find_transport(&l->scsi)) != VTL_OK)
		return rc;
	return found ? VTL_OK : map_drives(l); /* found drives are mapped already, by serial number */
}

int phys_st_open(const struct phys_st_config *cfg, struct phys_lib **out, char *err, size_t errlen)
{
	*out = NULL;
	if (!cfg || !cfg->changer || !cfg->changer[0] || cfg->drives > PHYS_MAX_DRIVES) {
		snprintf(err, errlen, "st library: the changer's sg node and 0 (find them) to %d drive nodes are needed",
			 PHYS_MAX_DRIVES);
		return VTL_E_CONFIG;
	}
	for (unsigned d = 0; d < cfg->drives; d++)
		if (!cfg->drive[d] || !cfg->drive[d][0]) {
			snprintf(err, errlen, "st library: drive %u has no node", d);
			return VTL_E_CONFIG;
		}
	struct st_lib *l = calloc(1, sizeof *l);
	if (!l) {
		snprintf(err, errlen, "st library: out of memory");
		return VTL_E_NOMEM;
	}
	l->changer_fd = -1;
	for (unsigned d = 0; d < PHYS_MAX_DRIVES; d++)
		l->drive[d].fd = l->drive[d].sg_fd = -1;
	bool ok = phys_scsi_init(&l->scsi, &st_ops, &sg_transport, SG_RETRIES, RES_ALLOC) == VTL_OK;
	for (unsigned d = 0; ok && d < PHYS_MAX_DRIVES; d++)
		ok = phys_scsi_unit_init(&l->drive[d].u, VTL_LOCK_PHYS_DRIVE) == VTL_OK;
	if (!ok) {
		st_close(&l->scsi.pub);
		snprintf(err, errlen, "st library: out of memory");
		return VTL_E_NOMEM;
	}
	l->ready_timeout_s = cfg->ready_timeout_s ? cfg->ready_timeout_s : READY_TIMEOUT_DEFAULT_S;
	l->command_timeout_s = cfg->command_timeout_s ? cfg->command_timeout_s : COMMAND_TIMEOUT_DEFAULT_S;
	int rc = open_all(l, cfg);
	if (rc != VTL_OK) {
		snprintf(err, errlen, "%s", phys_error(&l->scsi.pub));
		st_close(&l->scsi.pub);
		return rc;
	}
	*out = &l->scsi.pub;
	return VTL_OK;
}
