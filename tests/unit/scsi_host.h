/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A host for the drive's tests: a drive over its own temporary pool and
 * catalog, and calls that send it a CDB the way an initiator does (one
 * I_T nexus, data in the host's own buffer, an expected transfer length),
 * with checks of what the host gets back.
 */
#ifndef VTL_TESTS_UNIT_SCSI_HOST_H
#define VTL_TESTS_UNIT_SCSI_HOST_H

#include "tests/unit/testlib.h"
#include "catalog/catalog.h"
#include "vtl/drive/ssc.h"

#define HOST_NEXUS 0x100 /* the nexus host_cmd uses unless told otherwise */

struct host {
	struct fx *fx;            /* temporary directory and pool */
	struct vtl_catalog *cat;
	struct ssc_drive *d;
	uint64_t nexus;           /* the nexus of the next command */
	struct scsi_cmd c;        /* the last command, with its result */
	struct iovec iov;
	uint8_t sense[SENSE_MAX_LEN]; /* the last command's sense as the host receives it */
	size_t sense_len;
	char vendor[16], product[32]; /* the drive's model */
	const struct ssc_stage_ops *stage; /* given to the drives host_setup and host_stage make */
	void *stage_arg;
	unsigned stage_wait_ms;   /* the drives' wait on a stage (0: SSC_STAGE_WAIT_MS); set before host_stage */
};

/*
 * Setup: *state = a host with a one-member pool (segment size 1 MiB), a
 * catalog and an IBM ULT3580-TD8 (VTL_TEST_DRIVE="vendor/product" picks
 * another). The host nexus has its power-on unit attention already cleared.
 */
int host_setup(void **state);

/* Teardown: destroys the drive, closes the catalog, removes the directory. */
int host_teardown(void **state);

/*
 * A fault hook: runs sql on the host's catalog through a connection of its
 * own, e.g. a trigger that makes some updates fail (RAISE(ABORT, ...)), or
 * the DROP TRIGGER that ends the fault. Fails the test if sql fails.
 */
void host_catalog_fault(struct host *h, const char *sql);

/* Replaces the drive with one of vendor/product (power-on attention cleared again). */
void host_drive_model(struct host *h, const char *vendor, const char *product);

/* Replaces the drive with one (of the same model) that asks ops about migrated cartridges. */
void host_stage(struct host *h, const struct ssc_stage_ops *ops, void *arg);

/* Reopens the pool with a member quota of quota bytes and segments of segsize (a new drive, attention cleared). */
void host_pool_quota(struct host *h, uint64_t quota, uint64_t segsize);

/* Creates a blank cartridge in the pool and in the catalog (capacity 0: the label's nominal). */
void host_new_cart(struct host *h, const char *barcode, uint64_t capacity);

/* Inserts the cartridge (ssc_insert must return 0) and clears the host nexus's unit attention. */
void host_load(struct host *h, const char *barcode);

/* Sends cdb with data buf of xfer bytes (dir from the caller); returns the status. */
int host_cmd(struct host *h, const uint8_t *cdb, uint8_t cdb_len, enum scsi_dir dir, void *buf, size_t xfer);

/* Fails unless the last command ended GOOD. */
void expect_good(struct host *h);

/* Fails unless the last command ended CHECK CONDITION with this sense key and ASC/ASCQ. */
void expect_sense(struct host *h, enum scsi_sense_key key, enum scsi_asc asc);

/*
 * Fails unless the last command ended ILLEGAL REQUEST with asc and a field
 * pointer at byte (in the CDB when cdb, else in the parameter list) and bit
 * (bit < 0: no bit pointer).
 */
void expect_invalid_field(struct host *h, enum scsi_asc asc, bool cdb, uint16_t byte, int bit);

/* INFORMATION of the last sense (fails unless VALID is set). */
int32_t sense_info(struct host *h);

/* The drive's position, as READ POSITION short form reports it (first block location). */
uint64_t host_position(struct host *h);

#define HOST_SLOT0 1000 /* first of 6 storage elements */
#define HOST_IE0 10     /* first of 2 import/export elements */
#define HOST_DRIVE0 256 /* an IBM LTO-8 drive (LUN 1), then an LTO-9 (LUN 2) */
struct vtl_library;
/*
 * Creates library LIB1 in the host's catalog (IBM 3573-TL, robot at 1) with
 * the elements above and cartridges D00000L8, D00001L8, D00002L6 and the
 * cleaning cartridge CLN000L1 in the first four slots, and opens it.
 */
struct vtl_library *host_library(struct host *h);

struct smc_changer;
/*
 * Sends cdb (len bytes) to changer ch from nexus, with data of xfer bytes in
 * direction dir, as an initiator does; the command and its result are left
 * in *c. Returns the status.
 */
int host_changer_cmd(struct smc_changer *ch, struct scsi_cmd *c, uint64_t nexus, const uint8_t *cdb, uint8_t len,
		     enum scsi_dir dir, void *data, size_t xfer);

/* CDB builders for the commands tests use most; each returns the CDB length. */
uint8_t cdb_write6(uint8_t *cdb, bool fixed, uint32_t len);
uint8_t cdb_read6(uint8_t *cdb, bool sili, bool fixed, uint32_t len);
uint8_t cdb_wfm6(uint8_t *cdb, uint32_t count, bool immed);
uint8_t cdb_space6(uint8_t *cdb, uint8_t code, int32_t count);
uint8_t cdb_locate10(uint8_t *cdb, uint32_t object);
uint8_t cdb_simple(uint8_t *cdb, uint8_t opcode); /* six bytes, everything but the opcode zero */

#endif
