/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The SCSI initiator of the physical libraries that speak SCSI (phys_iscsi
 * over libiscsi, phys_st's changer and drive queries over SG_IO): it builds
 * the CDBs, decodes the status and sense that come back, retries what SAM-5
 * says was not executed, and turns the rest into a vtl_err with the device's
 * words. A transport only carries one command ("execute this CDB with this
 * data direction and buffer, give me status, sense, residual"), and keeps
 * its own quirks.
 *
 * Unit attentions: a command that meets one was not executed (SAM-5 5.14),
 * so it is sent again, except where the attention says the drive's position
 * may be lost (reset, medium changed) and the command depends on that
 * position: then it is an error, because writing at an unknown place would
 * destroy data.
 *
 * A struct phys_scsi is a struct phys_lib (its first member) that has a
 * changer and drives on a SCSI transport; an implementation keeps it first
 * in its own structure.
 *
 * Threads (migrator/phys.h): each unit has a lock, and a unit's state (its
 * struct phys_scsi_unit, and what the implementation keeps per drive) is
 * touched only under it. The changer's lock also covers the scratch buffer
 * and the robot's address. An implementation takes the unit's lock in each
 * phys_ops call; the functions below that send commands expect it held
 * (or the library still being opened, by one thread).
 */
#ifndef VTL_MIGRATOR_PHYS_SCSI_H
#define VTL_MIGRATOR_PHYS_SCSI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <pthread.h>

#include "common/lockorder.h"
#include "common/scsi_proto.h"
#include "common/scsi_sense.h"
#include "migrator/phys.h"

#define PHYS_SCSI_MAX_ELEMS 64  /* drive elements one library may report */
#define PHYS_SCSI_UA_RETRIES 8  /* a new session or reset queues a few attentions per unit */

_Static_assert(PHYS_SENSE_MAX == SENSE_MAX_LEN, "a transport carries all the sense any format may have");

/* A logical unit, as its transport addresses it and as errors name it ("drive 1 (LUN 2)"). */
struct phys_scsi_unit {
	int id;                         /* the transport's: a LUN (iSCSI), a drive index or -1 for the changer (SG_IO) */
	char name[PHYS_SCSI_NAME_MAX];
	unsigned timeout_ms;            /* one command's limit, where the transport takes one per command */
	/* A reset or medium change was reported since the drive was last put at a known place (load, rewind,
	 * locate): until it is again, commands that depend on the position are refused. */
	bool position_lost;
	void *channel;                  /* the transport's own path to the unit (iSCSI: its session), or NULL */
	pthread_mutex_t mu;             /* serializes the unit's calls; of rank `rank` */
	enum vtl_lock_rank rank;        /* VTL_LOCK_PHYS_CHANGER or VTL_LOCK_PHYS_DRIVE */
	bool mu_ready;                  /* mu was initialised (phys_scsi_unit_init) */
};

/* Initialises u's lock, of rank rank: VTL_OK, or VTL_E_NOMEM when the system has no room for it. */
VTL_MUST_CHECK int phys_scsi_unit_init(struct phys_scsi_unit *u, enum vtl_lock_rank rank);

/* Destroys what phys_scsi_unit_init made (nothing when it was not). */
void phys_scsi_unit_destroy(struct phys_scsi_unit *u);

/* Takes u's lock (in the order of common/lockorder.h). */
void phys_scsi_lock(struct phys_scsi_unit *u);

/* Releases u's lock. */
void phys_scsi_unlock(struct phys_scsi_unit *u);

/* The body of a phys_ops call for drive d of pl: returns call's result, evaluated under unit's lock (unit an
 * expression naming drive d's unit, evaluated once d is known to exist), or phys_check_drive's error. */
#define PHYS_SCSI_DRIVE_CALL(pl, d, unit, call)                                                                \
	do {                                                                                                   \
		int rc_ = phys_check_drive(pl, d);                                                             \
		if (rc_ != VTL_OK)                                                                             \
			return rc_;                                                                            \
		struct phys_scsi_unit *u_ = (unit);                                                            \
		phys_scsi_lock(u_);                                                                            \
		rc_ = (call);                                                                                  \
		phys_scsi_unlock(u_);                                                                          \
		return rc_;                                                                                    \
	} while (0)

/* What one command came back with, decoded. */
struct phys_scsi_reply {
	int status;
	bool sense;           /* sense data came with it, decoded into s */
	struct scsi_sense s;
	size_t got;           /* data-in bytes received */
};

struct phys_scsi;

struct phys_scsi_transport {
	/* Sends cdb (cdb_len bytes) to u once, with len bytes of buf in direction dir: VTL_OK with *res when
	 * a SCSI status came back, whichever it was; else an error, its description set with phys_fail. */
	int (*execute)(struct phys_scsi *s, struct phys_scsi_unit *u, const char *op, const uint8_t *cdb,
		       unsigned cdb_len, enum phys_scsi_dir dir, void *buf, size_t len, struct phys_scsi_result *res);
};

struct phys_scsi {
	struct phys_lib pub;                     /* first: the migrator sees only this */
	const struct phys_scsi_transport *tr;
	unsigned busy_retries;                   /* BUSY or TASK SET FULL: sent again this many times */
	struct phys_scsi_unit changer;
	uint16_t transport;                      /* the robot's element address (0: the default one) */
	uint8_t *buf;                            /* scratch for element status */
	size_t buf_len;
};

/* The phys_scsi that l is (an implementation built on this initiator). */
static inline struct phys_scsi *phys_scsi_of(struct phys_lib *l)
{
	return (struct phys_scsi *)l;
}

/* Sets s up on transport tr with a scratch buffer of buf_len bytes and the changer's lock: VTL_OK, or VTL_E_NOMEM. */
VTL_MUST_CHECK int phys_scsi_init(struct phys_scsi *s, const struct phys_ops *ops, const struct phys_scsi_transport *tr,
				  unsigned busy_retries, size_t buf_len);

/* Frees what phys_scsi_init took (not s itself). */
void phys_scsi_release(struct phys_scsi *s);

/* exec flags. */
#define PHYS_SCSI_POSITIONAL 0x01 /* depends on the tape position: a reset or medium change is an error, not retried */

/* Sends cdb to u, again after a unit attention or while the unit is busy: VTL_OK with *r when a status came
 * back (whichever: the caller judges it), else the transport's error. */
VTL_MUST_CHECK int phys_scsi_exec(struct phys_scsi *s, struct phys_scsi_unit *u, const char *op, const uint8_t *cdb,
				  unsigned cdb_len, enum phys_scsi_dir dir, void *buf, size_t len, unsigned flags,
				  struct phys_scsi_reply *r);

/* phys_scsi_exec, where anything but GOOD is a failure (phys_scsi_fail_reply). */
VTL_MUST_CHECK int phys_scsi_exec_good(struct phys_scsi *s, struct phys_scsi_unit *u, const char *op,
				       const uint8_t *cdb, unsigned cdb_len, enum phys_scsi_dir dir, void *buf,
				       size_t len, unsigned flags, struct phys_scsi_reply *r);

/* A command without data that must end GOOD. */
VTL_MUST_CHECK int phys_scsi_run_nodata(struct phys_scsi *s, struct phys_scsi_unit *u, const char *op,
					const uint8_t *cdb, unsigned cdb_len, unsigned flags);

/* The vtl_err a command that did not end GOOD stands for. */
int phys_scsi_rc_of(const struct phys_scsi_reply *r);

/* Records r as the failure of op on u ("drive 0 (LUN 1): WRITE(6): MEDIUM ERROR, write error (0C/00h)") and
 * returns phys_scsi_rc_of(r). */
VTL_MUST_CHECK int phys_scsi_fail_reply(struct phys_scsi *s, const struct phys_scsi_unit *u, const char *op,
					const struct phys_scsi_reply *r);

/* rc; when VTL_OK, u is at a place it knows again (loaded, rewound, located). */
int phys_scsi_known_place(struct phys_scsi_unit *u, int rc);

/* TEST UNIT READY: VTL_OK with *r whatever the status, else the transport's error. */
VTL_MUST_CHECK int phys_scsi_test_unit_ready(struct phys_scsi *s, struct phys_scsi_unit *u, struct phys_scsi_reply *r);

/* Polls u with TEST UNIT READY until GOOD, while it says it is getting there (04h/xx, 3Ah/xx), at most
 * timeout_s; then u is at a known place (a tape just loaded is at its beginning). */
VTL_MUST_CHECK int phys_scsi_wait_ready(struct phys_scsi *s, struct phys_scsi_unit *u, unsigned timeout_s);

/* READ POSITION into st's bot, early_warning, block and file (UINT64_MAX when not known): the long form
 * unless *short_form, which is set when the drive refuses it (an older drive); nothing written on error. */
VTL_MUST_CHECK int phys_scsi_read_position(struct phys_scsi *s, struct phys_scsi_unit *u, bool *short_form,
					   struct phys_drive_status *st);

/* READ BLOCK LIMITS: *max the largest block, 0 when the drive does not say; errors are the transport's. */
VTL_MUST_CHECK int phys_scsi_read_block_limits(struct phys_scsi *s, struct phys_scsi_unit *u, uint32_t *max);

/* LOG SENSE of the TapeAlert page: *flags (bit n-1 is flag n), 0 when the drive has none. */
VTL_MUST_CHECK int phys_scsi_tapealert(struct phys_scsi *s, struct phys_scsi_unit *u, uint64_t *flags);

/* INQUIRY: *type the peripheral device type, -1 when no unit is connected there (qualifier not 0). */
VTL_MUST_CHECK int phys_scsi_device_type(struct phys_scsi *s, struct phys_scsi_unit *u, int *type);

/* The unit serial number (INQUIRY page 80h) into serial (cap bytes), "" when the unit has none. */
VTL_MUST_CHECK int phys_scsi_serial(struct phys_scsi *s, struct phys_scsi_unit *u, char *serial, size_t cap);

/* Calls fn for every element of type (READ ELEMENT STATUS on the changer, VOLTAG, and DVCID when asked). */
VTL_MUST_CHECK int phys_scsi_read_elements(struct phys_scsi *s, enum phys_elem_type type, bool dvcid,
					   phys_element_fn *fn, void *arg);

/* phys_ops.inventory for a library built on this initiator (takes the changer's lock). */
VTL_MUST_CHECK int phys_scsi_inventory(struct phys_lib *l, struct phys_element *out, unsigned cap, unsigned *n);

/* Learns the robot's element address (the first medium transport element; 0, the default one, if none). */
VTL_MUST_CHECK int phys_scsi_find_transport(struct phys_scsi *s);

/* MOVE MEDIUM by the robot from element from to element to, the changer's lock held; the caller waits for a
 * loaded drive. */
VTL_MUST_CHECK int phys_scsi_move(struct phys_scsi *s, uint16_t from, uint16_t to);

/* What an implementation does around a move (phys_scsi_move_medium). */
struct phys_scsi_move_ops {
	struct phys_scsi_unit *(*unit)(struct phys_scsi *s, unsigned d); /* drive d's unit */
	/* The tape left drive d (its lock held): forget it. */
	VTL_MUST_CHECK int (*left)(struct phys_scsi *s, unsigned d);
	/* A tape went into drive d (its lock held, the robot's not): wait until it is ready. */
	VTL_MUST_CHECK int (*arrived)(struct phys_scsi *s, unsigned d);
};

/* phys_ops.move with phys.h's locking: the changer's lock, then the lock of the drive the tape leaves (or,
 * if none, of the drive it goes to) around MOVE MEDIUM; the destination drive's wait for the tape without
 * the changer's lock, so that the robot serves other moves meanwhile. */
VTL_MUST_CHECK int phys_scsi_move_medium(struct phys_lib *l, const struct phys_scsi_move_ops *ops, uint16_t from,
					 uint16_t to);

/* The data transfer elements the changer reports, with their device identifiers when it gives them. */
struct phys_scsi_drive_elems {
	struct phys_element_desc e[PHYS_SCSI_MAX_ELEMS];
	unsigned n;
};

/* Fills a with the drive elements: with DVCID, or without when an older changer (SMC-2) refuses it. */
VTL_MUST_CHECK int phys_scsi_drive_elements(struct phys_scsi *s, struct phys_scsi_drive_elems *a);

#endif
