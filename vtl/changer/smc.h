/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The library's medium changer (SMC-3), as an IBM or HP LTO library's robot
 * answers: elements reported from the library model, moves made through it.
 * All functions are safe to call from any thread.
 */
#ifndef VTL_CHANGER_SMC_H
#define VTL_CHANGER_SMC_H

#include <stddef.h>
#include <stdint.h>

#include "vtl/library/library.h"
#include "vtl/scsi/cmd.h"

struct smc_changer;

/* Creates the changer of lib, with the library's identity from the catalog. */
int smc_create(struct vtl_library *lib, struct smc_changer **out);

/* Frees the changer (the library stays; call before library_close): it no longer hears of the library. */
void smc_destroy(struct smc_changer *ch);

/* Executes one command; status, sense and the data count are set in c. */
void smc_execute(struct smc_changer *ch, struct scsi_cmd *c);

/* A logical unit reset or power cycle: every nexus gets POWER ON/RESET; SPC-2 reservations go. */
void smc_reset(struct smc_changer *ch);

/* An initiator logged out: its SPC-2 reservation, prevent and unit attentions go. */
void smc_nexus_lost(struct smc_changer *ch, uint64_t nexus);

/* smc_execute, smc_reset and smc_nexus_lost as a front end calls them (dev: the struct smc_changer). */
extern const struct scsi_unit_ops smc_unit_ops;

/* Sets the LUN list REPORT LUNS answers with. */
void smc_set_luns(struct smc_changer *ch, const uint16_t *luns, unsigned n);

struct scsi_op;
/* The changer's command table; *n gets its length. */
const struct scsi_op *smc_command_table(size_t *n);

#endif
