/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A physical tape library as the migrator sees it: a changer that moves
 * tapes between slots, mail slots and drives, and drives that write and
 * read variable-length blocks and filemarks. One interface, three
 * implementations: phys_sim (a simulated LTO library with a timing model,
 * for tests and benchmarks), phys_st (the Linux st driver for the drives,
 * SCSI generic for the changer) and phys_iscsi (a library reached over
 * iSCSI with libiscsi).
 *
 * Every call returns VTL_OK, a positive warning or a negative vtl_err; on
 * an error, phys_error() says what the device said (sense key, ASC/ASCQ or
 * the system error) in the operator's words, to the thread that made the
 * call.
 *
 * Threads: calls for different drives may run at the same time on
 * different threads. The implementation serializes the rest: the calls for
 * one drive (every call that takes a drive index) run one at a time; the
 * changer's calls (inventory, move) run one at a time, as one robot serves
 * them. A move from drive d, or into d from a slot or mail slot, waits for
 * d's running call before the robot touches the tape, and d's next call
 * waits for the whole move, the wait for a loaded tape to become ready
 * included; the changer serves other moves during that wait. A move from
 * drive s to drive t waits for s's running call, and t's calls wait for
 * the move from the end of the robot's part on (t holds no tape before).
 * Locks: the changer's, then one drive's (common/lockorder.h
 * VTL_LOCK_PHYS_CHANGER, VTL_LOCK_PHYS_DRIVE; docs/architecture.md,
 * "Locking"), never two drives' at once. open and close run alone: no
 * other call on the library may run during them.
 */
#ifndef VTL_MIGRATOR_PHYS_H
#define VTL_MIGRATOR_PHYS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/vtl_error.h"

#include "backend/pool.h"

#define PHYS_MAX_DRIVES 16
#define PHYS_ERR_MAX 512

/* Element types, as SMC-3 table 25 codes them. */
enum phys_elem_type { PHYS_ELEM_TRANSPORT = 1, PHYS_ELEM_SLOT = 2, PHYS_ELEM_IE = 3, PHYS_ELEM_DRIVE = 4 };

struct phys_element {
	enum phys_elem_type type;
	uint16_t address;
	bool full;
	char barcode[VTL_BARCODE_MAX + 1]; /* the primary volume tag, "" when none or empty */
};

struct phys_drive_status {
	bool ready;            /* a tape is loaded and the drive answers TEST UNIT READY */
	bool write_protected;
	bool bot;              /* at the beginning of the tape */
	bool early_warning;    /* past the early-warning point */
	uint64_t block;        /* logical object number */
	uint64_t file;         /* filemarks before the position (-1 if the implementation cannot tell) */
	uint32_t max_block;    /* READ BLOCK LIMITS maximum (0 when not known) */
	uint64_t tapealert;    /* TapeAlert flags: bit n-1 is flag n */
	uint64_t backhitches;  /* times the drive stopped and repositioned (0 unless ops->counts_backhitches) */
	uint64_t written;      /* bytes written since this tape was loaded */
};

struct phys_lib;

/* The implementation behind a library; every member is required. */
struct phys_ops {
	const char *kind; /* "sim", "st", "iscsi" */
	bool counts_backhitches; /* status() reports the back-hitches its drives counted (else they are 0) */
	/* Lists every element into out (at most cap); *n gets how many there are. */
	VTL_MUST_CHECK int (*inventory)(struct phys_lib *l, struct phys_element *out, unsigned cap, unsigned *n);
	/* Moves the tape in element from to element to (MOVE MEDIUM); into a drive it loads, and waits until ready. */
	VTL_MUST_CHECK int (*move)(struct phys_lib *l, uint16_t from, uint16_t to);
	/* Rewinds and unloads drive d, so that the changer can take its tape out. */
	VTL_MUST_CHECK int (*unload)(struct phys_lib *l, unsigned d);
	VTL_MUST_CHECK int (*rewind)(struct phys_lib *l, unsigned d);
	/* Writes one block of len bytes; VTL_W_EARLY_WARNING past early warning, VTL_E_EOM when nothing fits. */
	VTL_MUST_CHECK int (*write_block)(struct phys_lib *l, unsigned d, const void *buf, size_t len);
	/* Writes n filemarks; also flushes the drive's buffer to the tape. */
	VTL_MUST_CHECK int (*write_filemarks)(struct phys_lib *l, unsigned d, unsigned n);
	/* Reads one block into buf (cap bytes): VTL_OK and *len; VTL_W_FILEMARK; VTL_E_EOD at end of data;
	 * VTL_E_INVAL when the block is longer than cap (nothing is returned, the position is past it). */
	VTL_MUST_CHECK int (*read_block)(struct phys_lib *l, unsigned d, void *buf, size_t cap, size_t *len);
	/* Spaces n filemarks forward (n > 0) or backward (n < 0). */
	VTL_MUST_CHECK int (*space_filemarks)(struct phys_lib *l, unsigned d, int64_t n);
	/* Goes to logical object block (LOCATE). */
	VTL_MUST_CHECK int (*locate)(struct phys_lib *l, unsigned d, uint64_t block);
	/* Position, readiness, limits and alerts of drive d. */
	VTL_MUST_CHECK int (*status)(struct phys_lib *l, unsigned d, struct phys_drive_status *st);
	/* Frees the library (drives are left as they are). */
	void (*close)(struct phys_lib *l);
};

/* What every implementation keeps first in its own structure. */
struct phys_lib {
	const struct phys_ops *ops;
	unsigned drives;                       /* drives 0 .. drives-1 */
	uint16_t drive_addr[PHYS_MAX_DRIVES];  /* the changer's element address of each drive (fixed once open) */
	double min_matched_mbs;                /* the lowest speed its drives match (MB/s) as their own model says;
						* 0: not known (the LTO table of phys_sim.h applies) */
};

/* The description of the calling thread's last failure on l ("" when its last failure was on another
 * library, or none): each thread reads its own, so that concurrent calls on other drives never overwrite it. */
const char *phys_error(const struct phys_lib *l);

/* Sets the calling thread's last failure on l (printf format) and returns rc. */
VTL_MUST_CHECK int phys_fail(struct phys_lib *l, int rc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Describes SCSI sense (key, ASC, ASCQ) as words, e.g. "MEDIUM ERROR, write error (0C/00h)". */
void phys_sense_text(uint8_t key, uint8_t asc, uint8_t ascq, char *out, size_t cap);

/* VTL_OK when l has a drive d, else VTL_E_INVAL with the reason set. */
VTL_MUST_CHECK int phys_check_drive(struct phys_lib *l, unsigned d);

/* Sleeps ms milliseconds (through signals). */
void phys_sleep_ms(unsigned ms);

/* A poll with a deadline and a pause that doubles up to a ceiling (a drive getting ready, a tape loading). */
struct phys_wait {
	uint64_t deadline_ms; /* CLOCK_MONOTONIC */
	unsigned pause_ms, max_ms;
};

/* Starts a wait of timeout_s seconds whose first pause is first_ms, doubling up to max_ms. */
void phys_wait_start(struct phys_wait *w, unsigned timeout_s, unsigned first_ms, unsigned max_ms);

/* False when the deadline has passed; else sleeps the next pause and returns true (poll again). */
bool phys_wait_more(struct phys_wait *w);

/* The drive index of element address addr, or -1. */
VTL_MUST_CHECK int phys_drive_of(const struct phys_lib *l, uint16_t addr);

/* Finds the element holding barcode (after an inventory); -1 when none does. */
VTL_MUST_CHECK int phys_find(const struct phys_element *e, unsigned n, const char *barcode);

/* ------------------------------------------------------------------------------------------------
 * Helpers for the implementations that speak SCSI to a changer and drives (phys_st, phys_iscsi). */

#define PHYS_ID_MAX 128
#define PHYS_SCSI_NAME_MAX 64
#define PHYS_SENSE_MAX 252 /* the most sense data any format may carry (SPC-4 4.5.1) */

/* The data direction of one SCSI command, as the initiator (migrator/phys_scsi.h) gives it to a transport. */
enum phys_scsi_dir {
	PHYS_SCSI_NONE = 0,
	PHYS_SCSI_IN,  /* data from the device (READ, INQUIRY) */
	PHYS_SCSI_OUT, /* data to the device (WRITE) */
};

/* What a transport brings back from one command. Kept here, free of the SCSI headers, because libiscsi's
 * own headers name the same types (struct scsi_sense, enum scsi_status) as common/scsi_proto.h. */
struct phys_scsi_result {
	int status;                    /* SAM-5 status */
	uint8_t sense[PHYS_SENSE_MAX]; /* sense data as the device sent it */
	size_t sense_len;              /* 0: none */
	size_t residual;               /* data-in bytes asked for and not received */
};

/* One element of a READ ELEMENT STATUS answer (SMC-3 6.11), with the drive identifier (DVCID) if asked. */
struct phys_element_desc {
	struct phys_element e;
	char id[PHYS_ID_MAX];        /* the device identifier as text; "" when none */
	char id_serial[PHYS_ID_MAX]; /* its serial-number part, for the T10 vendor identification form */
};

typedef void phys_element_fn(const struct phys_element_desc *e, void *arg);

/* Calls fn for each element of a READ ELEMENT STATUS answer of got bytes; *next gets the address to ask
 * from for the rest of a report the allocation cut, 0 when it is complete; errors name who. */
VTL_MUST_CHECK int phys_element_status_parse(struct phys_lib *l, const char *who, const uint8_t *b, size_t got, bool dvcid,
			      phys_element_fn *fn, void *arg, uint32_t *next);

/* Sends cdb (cdb_len bytes) to l's changer with len bytes of data-in into buf: VTL_OK and *got when it
 * ended GOOD, else the error, its description set with phys_fail. */
typedef int phys_changer_read_fn(struct phys_lib *l, const uint8_t *cdb, unsigned cdb_len, uint8_t *buf, size_t len,
				 size_t *got);

/* How an implementation asks its changer for element status. */
struct phys_changer {
	phys_changer_read_fn *read;
	const char *name; /* the changer as errors name it */
	uint8_t *buf;     /* scratch for the answers */
	size_t len;       /* buf's size: one request's allocation; a longer report is paged by address */
};

/* Calls fn for every element of type (READ ELEMENT STATUS with VOLTAG, and DVCID when asked). */
VTL_MUST_CHECK int phys_read_elements(struct phys_lib *l, const struct phys_changer *c, enum phys_elem_type type, bool dvcid,
		       phys_element_fn *fn, void *arg);

/* phys_ops.inventory over READ ELEMENT STATUS: transports, slots, mail slots, then drives. */
VTL_MUST_CHECK int phys_inventory(struct phys_lib *l, const struct phys_changer *c, struct phys_element *out, unsigned cap,
		   unsigned *n);

#define PHYS_MOVE_CDB_LEN 12 /* MOVE MEDIUM, SMC-3 6.6 */

/* Builds the MOVE MEDIUM CDB of a move by robot transport from from to to, and its name for errors. */
void phys_move_cdb(uint8_t cdb[PHYS_MOVE_CDB_LEN], uint16_t transport, uint16_t from, uint16_t to, char *name,
		   size_t namelen);

/* True when element e's device identifier names the drive of serial number serial. */
bool phys_element_is_drive(const struct phys_element_desc *e, const char *serial);

/* TapeAlert flags (bit n-1 is flag n) from a LOG SENSE answer of got bytes for page 2Eh. */
uint64_t phys_tapealert_parse(const uint8_t *b, size_t got);

/* Copies n bytes of a space-padded SCSI text field as a C string without the padding. */
void phys_text_field(char *out, size_t cap, const uint8_t *p, size_t n);

#endif
