/* SPDX-License-Identifier: Apache-2.0 */
#include "vtl/scsi/ua.h"

#include <string.h>

#include "common/grow.h"

/* The sense each condition is reported with, in the bit order of enum scsi_ua. */
static const enum scsi_asc ua_asc[] = {
	ASC_POWER_ON_RESET, ASC_RESERVATIONS_PREEMPTED, ASC_RESERVATIONS_RELEASED, ASC_REGISTRATIONS_PREEMPTED,
	ASC_NOT_READY_TO_READY, ASC_IE_ELEMENT_ACCESSED, ASC_MODE_PARAMETERS_CHANGED, ASC_LOG_PARAMETERS_CHANGED,
	ASC_FAILURE_PREDICTION, ASC_FAILURE_PREDICTION_TEST, ASC_ENCRYPTION_CHANGED_BY_OTHER,
};
#define UA_COUNT (VTL_ARRAY_SIZE(ua_asc))

void ua_init(struct scsi_ua_set *u)
{
	memset(u, 0, sizeof *u);
}

/* The entry of nexus, created with a power-on condition when new (evicting the least recently seen). */
static unsigned *entry(struct scsi_ua_set *u, uint64_t nexus)
{
	u->tick++;
	for (unsigned i = 0; i < u->n; i++)
		if (u->e[i].nexus == nexus) {
			u->e[i].seen = u->tick;
			return &u->e[i].pending;
		}
	unsigned at = u->n;
	if (u->n < UA_MAX_NEXUS) {
		u->n++;
	} else {
		at = 0;
		for (unsigned i = 1; i < u->n; i++)
			if (u->e[i].seen < u->e[at].seen)
				at = i;
	}
	u->e[at].nexus = nexus;
	u->e[at].pending = UA_POWER_ON;
	u->e[at].seen = u->tick;
	return &u->e[at].pending;
}

void ua_raise_all(struct scsi_ua_set *u, unsigned cond, uint64_t except_nexus)
{
	/* A nexus not yet seen gets power-on when it appears, which covers cond. */
	for (unsigned i = 0; i < u->n; i++)
		if (u->e[i].nexus != except_nexus)
			u->e[i].pending |= cond;
}

void ua_raise(struct scsi_ua_set *u, uint64_t nexus, unsigned cond)
{
	*entry(u, nexus) |= cond;
}

bool ua_take(struct scsi_ua_set *u, uint64_t nexus, struct scsi_sense *s)
{
	unsigned *p = entry(u, nexus);
	if (!*p)
		return false;
	for (unsigned b = 0; b < UA_COUNT; b++)
		if (*p & (1u << b)) {
			/* Power-on supersedes every other condition (SAM-5 5.14): they are cleared with it. */
			*p = b == 0 ? 0 : *p & ~(1u << b);
			*s = sense_of(SK_UNIT_ATTENTION, ua_asc[b]);
			return true;
		}
	*p = 0;
	return false;
}

bool ua_pending(struct scsi_ua_set *u, uint64_t nexus)
{
	return *entry(u, nexus) != 0;
}

void ua_forget(struct scsi_ua_set *u, uint64_t nexus)
{
	for (unsigned i = 0; i < u->n; i++)
		if (u->e[i].nexus == nexus) {
			u->e[i] = u->e[--u->n];
			return;
		}
}
