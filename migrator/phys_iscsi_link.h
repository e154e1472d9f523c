/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A libiscsi session under the iSCSI physical library: login (CHAP, mutual
 * CHAP, no automatic reconnection, an ISID chosen by the caller), one SCSI
 * command at a time, logout. A context is not thread safe: each is used by
 * one thread at a time (the lock of the unit it serves). It is
 * a file of its own because libiscsi's headers name SCSI types that
 * common/scsi_proto.h names too (struct scsi_sense, enum scsi_status): this
 * file includes only libiscsi's, migrator/phys_iscsi.c only ours.
 */
#ifndef VTL_MIGRATOR_PHYS_ISCSI_LINK_H
#define VTL_MIGRATOR_PHYS_ISCSI_LINK_H

#include <stddef.h>
#include <stdint.h>

#include "migrator/phys.h"
#include "migrator/phys_iscsi.h"

struct iscsi_context;

/* A random 24-bit ISID part for one library's sessions (RFC 7143 11.12.5, type 10b: random). */
uint32_t phys_iscsi_link_isid_random(void);

/* Logs in to cfg's target as the initiator port of ISID (random part rnd, qualifier q; who names the session
 * in errors, NULL: the library's first): VTL_OK and *out (freed by phys_iscsi_link_close), else the error set on pl. */
VTL_MUST_CHECK int phys_iscsi_link_open(struct phys_lib *pl, const struct phys_iscsi_config *cfg, uint32_t rnd,
					uint16_t q, const char *who, struct iscsi_context **out);

/* Sends cdb to lun once (phys_scsi_transport.execute): VTL_OK with *res when a SCSI status came back,
 * else the error set on pl, naming who and op. */
VTL_MUST_CHECK int phys_iscsi_link_execute(struct phys_lib *pl, struct iscsi_context *ctx, unsigned timeout_s,
					   int lun, const char *who, const char *op, const uint8_t *cdb,
					   unsigned cdb_len, enum phys_scsi_dir dir, void *buf, size_t len,
					   struct phys_scsi_result *res);

/* Logs out (when logged in) and frees ctx; NULL is nothing to do. */
void phys_iscsi_link_close(struct iscsi_context *ctx);

#endif
