/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A virtual LTO tape drive (SSC-4), as an IBM ULT3580-TDn or HP Ultrium n
 * drive answers, over a cartridge of the disk pool.
 *
 * A front end hands every command for the drive to ssc_execute; the library
 * (the changer, or the operator through vtld) puts cartridges in with
 * ssc_insert and takes them out with ssc_remove once the drive has ejected
 * them, as a robot does. All functions are safe to call from any thread; a
 * drive runs one command at a time.
 */
#ifndef VTL_DRIVE_SSC_H
#define VTL_DRIVE_SSC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backend/pool.h"
#include "config/media.h"
#include "vtl/scsi/cmd.h"
#include "vtl/scsi/spc.h"

struct ssc_drive;

/* What the drive is doing, for status displays and the changer. */
enum ssc_state {
	SSC_EMPTY = 0,  /* no cartridge */
	SSC_LOADED,     /* cartridge threaded, ready */
	SSC_EJECTED,    /* cartridge in the drive's mouth, unloaded: the robot may take it */
	SSC_CLEANING,   /* a cleaning cartridge is running its cycle */
	SSC_STAGING,    /* becoming ready: a migrated cartridge with nothing back on disk yet, or one a copy still holds */
};

/* How the stage back to disk (recall) of a migrated cartridge stands. */
enum ssc_stage {
	SSC_STAGE_DONE = 0, /* all on disk (also: the cartridge was never migrated) */
	SSC_STAGE_RUNNING,  /* queued or copying back */
	SSC_STAGE_FAILED,   /* ended without all of it: what is missing is unreadable */
};

/* What a drive asks of the library about migrated cartridges; each member may be NULL. */
struct ssc_stage_ops {
	/* Asks for the cartridge to be staged back to disk; called when a migrated cartridge is loaded. */
	void (*request)(void *arg, const char *barcode);
	/* Where its stage stands; called every few tens of milliseconds while the drive waits on it. */
	enum ssc_stage (*poll)(void *arg, const char *barcode);
	/* Asks whoever holds the cartridge's files (a copy to physical tape) to let go of them. */
	void (*yield)(void *arg, const char *barcode);
	/*
	 * The host is about to change the cartridge: its physical copies stop
	 * being its data. VTL_OK once that is recorded; anything else fails the
	 * write (HARDWARE ERROR), since the copies would still count as its data.
	 */
	int (*modify)(void *arg, const char *barcode);
};

/* A MAM attribute as a store hands it over. */
struct ssc_mam_attr {
	uint16_t id;          /* SPC-4 attribute identifier */
	const uint8_t *value; /* valid during the callback only */
	size_t len;
};

/*
 * Where a drive keeps cartridges' MAM attributes between loads, by barcode
 * (the library model gives it the catalog: vtl/library/drive_store.h).
 * Called under the drive's lock; every member is required.
 */
struct ssc_mam_ops {
	/* Sets attribute id of the cartridge to len (1..65535) bytes; VTL_OK once it is kept. */
	int (*set)(void *arg, const char *barcode, uint16_t id, const void *val, size_t len);
	/* Removes attribute id of the cartridge (VTL_OK also when it was unset). */
	int (*remove)(void *arg, const char *barcode, uint16_t id);
	/*
	 * Calls fn for each attribute of the cartridge in identifier order; a
	 * non-zero return of fn stops the walk. VTL_OK, or the error that
	 * kept the attributes from being read (the load then answers READ and
	 * WRITE ATTRIBUTE with AUXILIARY MEMORY READ ERROR).
	 */
	int (*list)(void *arg, const char *barcode, int (*fn)(const struct ssc_mam_attr *a, void *fn_arg),
		    void *fn_arg);
};

struct ssc_config {
	struct scsi_ident ident;  /* vendor, product, revision, serial; type is set to tape */
	struct vtl_pool *pool;    /* where cartridges live */
	/* Where MAM attributes are kept (NULL: for the load only, and across loads of the same cartridge). */
	const struct ssc_mam_ops *mam;
	void *mam_arg;
	/*
	 * Told a line for the library's event log (damage a load found); best
	 * effort, as the drive logs it too. Called under the drive's lock. May be NULL.
	 */
	void (*on_event)(void *arg, const char *what);
	void *on_event_arg;
	uint64_t early_warning;   /* bytes before the end that early warning starts (at least one largest write); 0: a default */
	unsigned clean_ms;        /* how long a cleaning cycle takes */
	/*
	 * Told (under the drive's lock: it must not call back into the drive)
	 * whenever the cartridge is threaded (SSC_LOADED) or unthreaded and left
	 * in the drive (SSC_EJECTED), so that the library can record it. May be NULL.
	 * VTL_OK once recorded; a failure fails the load or unload that caused it.
	 */
	int (*on_medium)(void *arg, const char *barcode, enum ssc_state state);
	void *on_medium_arg;
	/* Migrated cartridges and copies (NULL: every cartridge is simply on disk). Called under the drive's lock. */
	const struct ssc_stage_ops *stage;
	void *stage_arg;
	/* How long one command waits on a stage with the drive's lock held (0: SSC_STAGE_WAIT_MS). */
	unsigned stage_wait_ms;
};

/*
 * A command that needs what a stage has not brought back yet (a write needs
 * all of it, a read the block it overtook) waits at most this long, then ends
 * with NOT READY, LOGICAL UNIT IS IN PROCESS OF BECOMING READY (04h/01h), so
 * the host retries instead of the drive's lock being held for as long as a
 * recall lasts, or for ever when the recall stalls.
 */
#define SSC_STAGE_WAIT_MS 10000

/* A cartridge as the library hands it to the drive. */
struct ssc_medium {
	char barcode[VTL_LABEL_LEN + 1];
	bool write_protected;     /* the cartridge's write-protect tab */
	uint64_t capacity;        /* native capacity in bytes; 0: the label's nominal capacity */
	bool migrated;            /* its data is on physical tape only, or being staged back: see ssc_stage_ops */
	uint64_t eod;             /* migrated: its end of data once all of it is back */
};


struct ssc_status {
	enum ssc_state state;
	char barcode[VTL_LABEL_LEN + 1];
	uint64_t object;        /* logical object number (position) */
	uint64_t file;          /* file number */
	uint64_t eod;
	uint64_t stored_bytes;  /* on the medium before EOD */
	uint64_t written_bytes; /* this load (kept after an unload until the next load) */
	uint64_t written_stored; /* what those took on the medium, after compression */
	uint64_t read_bytes;
	uint64_t readahead_ready; /* stored bytes read ahead for the host: the read buffer's fill */
	uint64_t readahead_limit; /* the read buffer's size */
	uint64_t readahead_direct; /* stored bytes read ahead past the page cache (O_DIRECT) since the load */
	uint64_t written_direct;   /* record bytes written past the page cache (O_DIRECT) since the load */
	uint64_t unsynced_bytes;  /* written, acknowledged, not yet synced: the write buffer's fill */
	const char *compression;  /* the cartridge's "on (...)" / "off (why)"; NULL with none loaded */
	bool prevent;           /* PREVENT MEDIUM REMOVAL in effect */
	unsigned generation;
	bool removable;         /* ssc_remove would take the cartridge now (see ssc_removable) */
	bool busy;              /* ssc_status_now: a command was running, this is the drive as it was before */
};

/*
 * Creates a drive; the model's generation comes from ident's vendor and
 * product (vtl_drive_generation). VTL_E_CONFIG if the model is not one it emulates.
 */
int ssc_create(const struct ssc_config *cfg, struct ssc_drive **out);

/*
 * Closes a loaded cartridge (syncing it; it stays threaded for the next
 * start) and frees d. Returns the close's error when the last writes could
 * not be made durable (logged with the drive and the cartridge), else VTL_OK.
 */
int ssc_destroy(struct ssc_drive *d);

/* Executes one command; status, sense and the data count are set in c. */
void ssc_execute(struct ssc_drive *d, struct scsi_cmd *c);

/*
 * Inserts a cartridge, as a robot does: the drive loads it (every nexus gets
 * NOT READY TO READY CHANGE) or, for a cleaning cartridge, cleans and then
 * ejects it. VTL_E_DST_FULL if one is in the drive; VTL_E_INCOMPATIBLE (with
 * err) if the drive cannot read this medium (the cartridge is not taken),
 * VTL_E_INVAL for a label that is no LTO label; VTL_E_MEDIUM when the
 * cartridge cannot be opened (its files cannot be read, or their repair
 * cannot be made durable: a failed load, err says why), VTL_E_BUSY when a
 * copy holds it and the library has no stage ops to ask it to let go,
 * VTL_E_NOMEM; VTL_E_IO when on_medium cannot record the load (the drive
 * stays empty). With stage ops, a copy that does not let go within the
 * stage wait leaves the drive SSC_STAGING, becoming ready, until it does.
 */
int ssc_insert(struct ssc_drive *d, const struct ssc_medium *m, char *err, size_t errlen);

/*
 * Unloads the cartridge (as LOAD UNLOAD with LOAD 0 or the drive's eject
 * button): VTL_E_BUSY while a host prevents medium removal; VTL_E_SRC_EMPTY
 * if there is none. The cartridge stays in the drive, ejected; a failed sync
 * of earlier writes, or VTL_E_IO when on_medium cannot record the unload, is
 * returned after it.
 */
int ssc_eject(struct ssc_drive *d);

/*
 * Takes an ejected cartridge out of the drive, as a robot does, and copies
 * its barcode to barcode (VTL_LABEL_LEN + 1 bytes). VTL_E_BUSY if still
 * loaded, VTL_E_SRC_EMPTY if the drive is empty.
 */
int ssc_remove(struct ssc_drive *d, char *barcode);

/*
 * Like ssc_status, without waiting for a running command (a read may wait
 * long on a recall): then the drive as the last ssc_status or
 * ssc_status_now saw it, with busy set. For displays and element status.
 */
void ssc_status_now(struct ssc_drive *d, struct ssc_status *st);

/* Whether ssc_remove would take the cartridge now (ejected, not held by the host). */
bool ssc_removable(struct ssc_drive *d);

/* "loaded", "ejected", "cleaning", "staging" or "empty": what vtlctl status and the metrics call a state. */
const char *ssc_state_name(enum ssc_state st);

/* Fills *st. */
void ssc_status(struct ssc_drive *d, struct ssc_status *st);

/* A logical unit reset or power cycle: every nexus gets POWER ON/RESET; SPC-2 reservations go. */
void ssc_reset(struct ssc_drive *d);

/* An initiator logged out: its SPC-2 reservation is released and its unit attentions forgotten. */
void ssc_nexus_lost(struct ssc_drive *d, uint64_t nexus);

/* ssc_execute, ssc_reset and ssc_nexus_lost as a front end calls them (dev: the struct ssc_drive). */
extern const struct scsi_unit_ops ssc_unit_ops;

struct scsi_op;
/* The drive's command table (what REPORT SUPPORTED OPERATION CODES lists); *n gets its length. */
const struct scsi_op *ssc_command_table(size_t *n);

/* Sets the LUN list REPORT LUNS answers with (the target's whole list). */
void ssc_set_luns(struct ssc_drive *d, const uint16_t *luns, unsigned n);

#endif
