/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The changer's state, shared by the modules that implement its commands
 * (smc.c: lifecycle, the command table, elements and moves; smc_mode.c: mode
 * pages; smc_log.c: log pages; smc_ident.c: INQUIRY). Handlers run with
 * ch->mu held.
 */
#ifndef VTL_CHANGER_SMC_INTERNAL_H
#define VTL_CHANGER_SMC_INTERNAL_H

#include <pthread.h>
#include <stdint.h>

#include "vtl/library/library.h"
#include "vtl/scsi/device.h"
#include "vtl/changer/smc.h"

struct smc_changer {
	struct scsi_dev dev; /* first: handlers convert back with smc_of */
	pthread_mutex_t mu;
	struct vtl_library *lib;
	/*
	 * TapeAlert library flags (SMC-3 annex, log page 2Eh), bit (flag - 1),
	 * each set until a host reads it. Nothing the emulation can detect sets
	 * one yet: real robots report mechanical faults the model has none of.
	 */
	uint64_t tapealert;
};

static inline struct smc_changer *smc_of(struct scsi_dev *dev)
{
	return (struct smc_changer *)dev;
}

/* Handlers, by module. */
void smc_mode_sense(struct scsi_dev *dev, struct scsi_cmd *c);  /* 6 and 10 */
void smc_mode_select(struct scsi_dev *dev, struct scsi_cmd *c); /* 6 and 10 */
void smc_log_sense(struct scsi_dev *dev, struct scsi_cmd *c);
void smc_log_select(struct scsi_dev *dev, struct scsi_cmd *c);
void smc_inquiry(struct scsi_dev *dev, struct scsi_cmd *c);

#endif
