/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the libiscsi host programs of the integration tests share: failing
 * with libiscsi's own words, logging in, running one CDB on a LUN of a
 * context (and failing unless GOOD), a monotonic clock, moving, loading and
 * unloading cartridges, waiting for a unit to become ready, reading a barcode
 * from the changer, and deterministic block content. Each program is built
 * on its own, so these are static functions; a program may use only some of
 * them (HOST_MAYBE_UNUSED).
 */
#ifndef VTL_TESTS_INTEGRATION_HOSTLIB_H
#define VTL_TESTS_INTEGRATION_HOSTLIB_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <iscsi/iscsi.h>
#include <iscsi/scsi-lowlevel.h>

#define HOST_MAYBE_UNUSED __attribute__((unused))

static struct iscsi_context *host_ctx; /* the context whose error a failure reports */

/* Prints FAIL with the message and libiscsi's last error, and exits 1. */
static void __attribute__((format(printf, 1, 2), noreturn)) fail(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "FAIL: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, " (%s)\n", host_ctx ? iscsi_get_error(host_ctx) : "");
	va_end(ap);
	exit(1);
}

/*
 * Logs in as initiator to target at portal, a normal session with header
 * digest digest whose connect reaches LUN lun, and makes the context host_ctx;
 * fails the program (with libiscsi's reason) when it cannot.
 */
static HOST_MAYBE_UNUSED struct iscsi_context *host_iscsi_login(const char *initiator, const char *target,
							   const char *portal, int lun, enum iscsi_header_digest digest)
{
	struct iscsi_context *c = host_ctx = iscsi_create_context(initiator);
	if (!c)
		fail("iscsi_create_context for %s", initiator);
	if (iscsi_set_targetname(c, target) || iscsi_set_session_type(c, ISCSI_SESSION_NORMAL) ||
	    iscsi_set_header_digest(c, digest) || iscsi_full_connect_sync(c, portal, lun) != 0)
		fail("login of %s to %s at %s", initiator, target, portal);
	return c;
}

/* Runs a CDB on lun of c: data out (n bytes) or in (up to n). Returns the task (the caller frees it). */
static HOST_MAYBE_UNUSED struct scsi_task *host_run(struct iscsi_context *c, int lun, const uint8_t *cdb, int len,
						    int dir, void *data, size_t n)
{
	host_ctx = c;
	struct scsi_task *t = scsi_create_task(len, (unsigned char *)cdb, dir, (int)n);
	struct iscsi_data d = {n, data};
	if (!t || !iscsi_scsi_command_sync(c, lun, t, dir == SCSI_XFER_WRITE ? &d : NULL))
		fail("command %02Xh on LUN %d did not complete", cdb[0], lun);
	return t;
}

/* Runs cdb on lun of c and fails unless it ended GOOD; what names it in the failure. */
static HOST_MAYBE_UNUSED void host_check(struct iscsi_context *c, int lun, const uint8_t *cdb, int len, int dir,
					 void *data, size_t n, const char *what)
{
	struct scsi_task *t = host_run(c, lun, cdb, len, dir, data, n);
	if (t->status != SCSI_STATUS_GOOD)
		fail("%s: status %d, sense key %d, ASC/ASCQ %02X/%02X", what, t->status, t->sense.key,
		     t->sense.ascq >> 8, t->sense.ascq & 0xFF);
	scsi_free_scsi_task(t);
}

/* Seconds on the monotonic clock. */
static HOST_MAYBE_UNUSED double host_now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* host_run of a CDB that must end GOOD: anything else fails the host with the status and sense. */
static HOST_MAYBE_UNUSED struct scsi_task *host_good(struct iscsi_context *c, int lun, const uint8_t *cdb, int len,
						     int dir, void *data, size_t n)
{
	struct scsi_task *t = host_run(c, lun, cdb, len, dir, data, n);
	if (t->status != SCSI_STATUS_GOOD)
		fail("command %02Xh on LUN %d: status %d, sense key %d, ASC/ASCQ %04X", cdb[0], lun, t->status,
		     t->sense.key, t->sense.ascq);
	return t;
}

/* MOVE MEDIUM (SMC-3) from element from to element to on the changer at lun of c; it must end GOOD. */
static HOST_MAYBE_UNUSED void host_move(struct iscsi_context *c, int lun, uint16_t from, uint16_t to)
{
	uint8_t cdb[12] = {0xA5, 0, 0, 0, (uint8_t)(from >> 8), (uint8_t)from, (uint8_t)(to >> 8), (uint8_t)to};
	scsi_free_scsi_task(host_good(c, lun, cdb, 12, SCSI_XFER_NONE, NULL, 0));
}

/*
 * LOAD UNLOAD (SSC-3, LOAD 0: rewinds, then unloads) on the drive at
 * drive_lun of c, then MOVE MEDIUM from its element drive back to slot on
 * the changer at changer_lun; both must end GOOD.
 */
static HOST_MAYBE_UNUSED void host_unload(struct iscsi_context *c, int changer_lun, int drive_lun, uint16_t drive,
					  uint16_t slot)
{
	uint8_t unload[6] = {0x1B, 0, 0, 0, 0, 0};
	scsi_free_scsi_task(host_good(c, drive_lun, unload, 6, SCSI_XFER_NONE, NULL, 0));
	host_move(c, changer_lun, drive, slot);
}

/* TEST UNIT READY until GOOD, taking the unit attentions a new initiator and a load bring. */
static HOST_MAYBE_UNUSED void host_ready(struct iscsi_context *c, int lun)
{
	uint8_t tur[6] = {0};
	for (int i = 0; i < 5; i++) {
		struct scsi_task *t = host_run(c, lun, tur, 6, SCSI_XFER_NONE, NULL, 0);
		int st = t->status, key = t->sense.key;
		scsi_free_scsi_task(t);
		if (st == SCSI_STATUS_GOOD)
			return;
		if (key != SCSI_SENSE_UNIT_ATTENTION)
			fail("TEST UNIT READY on LUN %d: status %d, sense key %d", lun, st, key);
	}
	fail("LUN %d never became ready", lun);
}

/* READ ELEMENT STATUS (SMC-3): VOLTAG, and where the first descriptor's fields lie. */
#define HOST_OP_READ_ELEMENT_STATUS 0xB8
#define HOST_RES_VOLTAG 0x10
#define HOST_RES_ALLOC 4096
#define HOST_RES_DESC_FIRST 16 /* element status header (8) + element status page header (8) */
#define HOST_RES_FULL 0x01     /* descriptor byte 2: the element holds a cartridge */
#define HOST_RES_VOLTAG_AT 12  /* primary volume tag within a descriptor */
#define HOST_BARCODE_LEN 8

/* The barcode in element addr of the changer at lun of c ("" when empty), without trailing blanks. */
static HOST_MAYBE_UNUSED void host_barcode_at(struct iscsi_context *c, int lun, uint16_t addr,
					      char out[HOST_BARCODE_LEN + 1])
{
	static uint8_t b[HOST_RES_ALLOC];
	uint8_t cdb[12] = {HOST_OP_READ_ELEMENT_STATUS, HOST_RES_VOLTAG, (uint8_t)(addr >> 8), (uint8_t)addr, 0, 1, 0,
			   HOST_RES_ALLOC >> 8, HOST_RES_ALLOC & 0xFF};
	struct scsi_task *t = host_run(c, lun, cdb, sizeof cdb, SCSI_XFER_READ, b, sizeof b);
	if (t->status != SCSI_STATUS_GOOD)
		fail("READ ELEMENT STATUS of element %u: status %d, sense key %d, ASC/ASCQ %04X", addr, t->status,
		     t->sense.key, t->sense.ascq);
	memset(out, 0, HOST_BARCODE_LEN + 1);
	if (t->datain.size >= HOST_RES_DESC_FIRST + HOST_RES_VOLTAG_AT + HOST_BARCODE_LEN &&
	    (t->datain.data[HOST_RES_DESC_FIRST + 2] & HOST_RES_FULL))
		memcpy(out, t->datain.data + HOST_RES_DESC_FIRST + HOST_RES_VOLTAG_AT, HOST_BARCODE_LEN);
	for (int i = HOST_BARCODE_LEN - 1; i >= 0 && out[i] == ' '; i--)
		out[i] = 0;
	scsi_free_scsi_task(t);
}

/* n bytes of pseudo-random content that depend only on seed. */
static HOST_MAYBE_UNUSED void host_fill(uint8_t *b, size_t n, unsigned seed)
{
	uint32_t x = seed * 2654435761u + 1;
	for (size_t i = 0; i < n; i++) {
		x = x * 1103515245u + 12345u;
		b[i] = (uint8_t)(x >> 16);
	}
}

#endif
