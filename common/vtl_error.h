/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Error values shared by every part of the project.
 *
 * Functions return 0 on success, a negative vtl_err on failure and, where a
 * header says so, a positive warning (the operation was done, but something
 * the caller must report happened, such as crossing the early-warning point).
 * errno is left as the failing system call set it for VTL_E_IO.
 */
#ifndef VTL_COMMON_VTL_ERROR_H
#define VTL_COMMON_VTL_ERROR_H

enum vtl_err {
	VTL_OK = 0,
	VTL_E_INVAL = -1,     /* an argument is out of range or malformed */
	VTL_E_IO = -2,        /* a system call failed; errno tells which */
	VTL_E_NOMEM = -3,     /* allocation failed */
	VTL_E_EXISTS = -4,    /* the object to create already exists */
	VTL_E_NOTFOUND = -5,  /* the object named does not exist */
	VTL_E_BUSY = -6,      /* held by another opener */
	VTL_E_EOM = -7,       /* end of medium: cartridge capacity reached, nothing written */
	VTL_E_POOL_FULL = -8, /* the disk pool has no room, nothing written */
	VTL_E_MEDIUM = -9,    /* a record failed its checksum: unreadable, never returned */
	VTL_E_READONLY = -10, /* a write on something opened read-only */
	VTL_E_WORM = -11,     /* an overwrite of data on append-only (WORM) media */
	VTL_E_CORRUPT = -12,  /* on-disk structure inconsistent beyond automatic repair */
	VTL_E_CONFIG = -13,   /* a configuration value is missing or wrong */
	VTL_E_EOD = -14,      /* end of data reached before the target (blank check) */
	VTL_E_SRC_EMPTY = -15, /* a move from an element that holds nothing */
	VTL_E_DST_FULL = -16,  /* a move into an element that is already full */
	VTL_E_INCOMPATIBLE = -17, /* a medium the drive cannot read */
	VTL_E_INACCESSIBLE = -18, /* an element the robot cannot reach now (a mail slot open to the operator) */
	VTL_E_ENCRYPTED = -19,    /* an encrypted block read without a key to decrypt it */
	VTL_E_KEY = -20,          /* an encrypted block written with another key than the one given */
	VTL_E_AUTH = -21,         /* an encrypted block failed its authentication tag: altered since written */
	VTL_E_PLAIN = -22,        /* a plaintext block read where only encrypted ones are allowed */
};

/* Positive warnings (the operation completed). */
enum vtl_warn {
	VTL_W_EARLY_WARNING = 1, /* written, and now past the early-warning point */
	VTL_W_FILEMARK = 2,      /* a read met a filemark (and is now past it); no data */
};

/* Returns a short static English description of a vtl_err or vtl_warn value. */
const char *vtl_strerror(int err);

/*
 * Marks a function whose result the caller must look at: a catalog, backend
 * or physical-library call that can fail without anything else showing it.
 * gcc does not let a (void) cast silence it; a call whose failure really
 * changes nothing goes through vtl_ignore, with a comment saying why.
 */
#define VTL_MUST_CHECK __attribute__((warn_unused_result))

/*
 * Drops the result of a deliberately best-effort call (an event log line, a
 * cleanup on a path that is already failing). The caller's comment says why
 * its failure cannot matter; everything else handles the result.
 */
static inline void vtl_ignore(int rc)
{
	(void)rc;
}

#endif
