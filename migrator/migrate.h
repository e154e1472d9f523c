/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Migration jobs: copy a virtual cartridge to a physical tape, or verify
 * its copies, keeping the catalog right at every step. A copy is recorded
 * (with its tape's new file count, in one transaction) only after its
 * trailer and filemark are on the tape, and after reading it back when
 * verification is asked; a crash before that leaves no copy marked good.
 * A physical error fails the attempt, retires that tape (state "error")
 * and tries another; the cartridge on disk is never touched.
 */
#ifndef VTL_MIGRATOR_MIGRATE_H
#define VTL_MIGRATOR_MIGRATE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "backend/cartridge.h"
#include "catalog/catalog.h"
#include "config/config.h"
#include "migrator/copy.h"
#include "migrator/phys.h"

#define MIGRATE_TAPE_TRIES 3   /* physical tapes a job tries before it fails */

struct migrator {
	struct vtl_catalog *cat;
	struct vtl_pool *pool;
	struct phys_lib *lib;
	const char *phys_name;      /* the physical library's name: ptape.library of its tapes */
	const char *tape_pool;      /* the pool its new tapes join (migrate_scan_tapes); NULL: CAT_POOL_DEFAULT */
	const char *virt_name;      /* the virtual library's name, written in each copy's header */
	struct stream_config ring;  /* M, B, watermark, readers, rate limit */
	bool verify;                /* read every copy back before recording it */
	bool native;                /* a native export copy (the host's blocks one to one, a tape of its own) */
	int drive;                  /* the physical drive to use; -1: any */
	/* A recall that fails for want of a good copy here (VTL_E_MEDIUM, VTL_E_NOTFOUND) is not recorded as
	 * failed: the caller may queue it in another library, and records its end itself if it does not. */
	bool recall_may_go_on;
	/* Copy pools ([policy] copy_pools): a stacked copy goes to the first pool without a good copy, else the
	 * first pool. NULL: any tape of the library. */
	const struct vtl_policy_config *copies;
	atomic_bool *cancel;        /* may be NULL */
	/*
	 * Jobs running at once on other drives (all NULL: this job is alone).
	 * robot serialises mounts: a mount's inventory, unloads and moves run
	 * as one. A tape is used by one job at a time: reserve makes it this
	 * job's (VTL_OK), or answers VTL_E_BUSY when another job has it (wait:
	 * after waiting until it is free, unless the job is cancelled first);
	 * release gives it back. A job holds at most one tape at a time.
	 */
	pthread_mutex_t *robot;
	int (*reserve)(void *arg, const char *tape, bool wait);
	void (*release)(void *arg, const char *tape);
	void *tapes_arg;
	/* Live progress of the running job (may be NULL): called about twice a second. */
	void (*progress)(void *arg, const char *barcode, const struct stream_progress *p);
	void *progress_arg;
};

/* What a job did. */
struct migrate_report {
	char tape[CAT_BARCODE_MAX + 1]; /* the physical tape that holds the copy */
	char pool[CAT_NAME_MAX + 1];    /* its pool */
	uint32_t file;
	struct copy_result copy;
	unsigned tries;                 /* tapes tried */
	bool verified;
	uint64_t backhitches;           /* during the copy, as the drive counts them (the simulated one does) */
	bool backhitches_known;         /* false: only the stream's gaps estimate them */
};

/*
 * Copies cartridge barcode (stacked) to a physical tape of the library and
 * records it; job (0: none) gets its state and bytes in the catalog.
 * VTL_E_BUSY if a host has it loaded, VTL_E_NOTFOUND, VTL_E_POOL_FULL when
 * no physical tape has room, VTL_E_MEDIUM when the cartridge on disk is
 * damaged, or the last physical error. err says what, in words.
 */
int migrate_copy(struct migrator *m, const char *barcode, int64_t job, struct migrate_report *rep, char *err,
		 size_t errlen);

/*
 * Reads back every good copy of cartridge barcode and checks it against its
 * digest: verified copies get their time, failing ones the state "bad".
 * VTL_OK when all verified; VTL_E_MEDIUM when one failed (err says which);
 * VTL_E_NOTFOUND when it has no copy.
 */
int migrate_verify(struct migrator *m, const char *barcode, int64_t job, unsigned *verified, char *err, size_t errlen);

/*
 * Recalls cartridge barcode, whose data is on physical tape only (cache state
 * migrated): empties it, stages its newest good stacked copy on this library
 * back record by record, and makes it premigrated. A copy that fails (its
 * digest, a damaged record, a read error) is marked bad and the next one is
 * tried; with none left the cartridge stays migrated and empty. VTL_E_BUSY
 * if a host has it loaded, VTL_E_EXISTS if its data is on disk already,
 * VTL_E_NOTFOUND without a good copy here, VTL_E_MEDIUM when every copy failed.
 */
int migrate_recall(struct migrator *m, const char *barcode, int64_t job, char *err, size_t errlen);

/*
 * Adds to the catalog every tape of the physical library it does not know
 * (state "scratch", capacity as given); *added says how many.
 */
int migrate_scan_tapes(struct migrator *m, uint64_t capacity, unsigned *added, char *err, size_t errlen);

/* Puts the tape barcode into a drive of the library (unloading another if all are full); *d is the drive. */
int migrate_mount(struct migrator *m, const char *barcode, unsigned *d, char *err, size_t errlen);

#endif
