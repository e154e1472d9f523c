/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit attention conditions, kept per I_T nexus (SAM-5 5.14, SPC-4 5.14).
 *
 * A device remembers which conditions each initiator has not yet been told
 * of. A nexus it has never seen has a power-on/reset pending, so the first
 * command of a new initiator learns that the device may have changed. Each
 * condition is reported once, highest precedence first, and then cleared.
 */
#ifndef VTL_SCSI_UA_H
#define VTL_SCSI_UA_H

#include <stdbool.h>
#include <stdint.h>

#include "common/scsi_sense.h"

/* Conditions, in the order they are reported (lower bit first). */
enum scsi_ua {
	UA_POWER_ON = 1u << 0,             /* 29h/00h power on, reset, or bus device reset occurred */
	UA_RESERVATIONS_PREEMPTED = 1u << 1, /* 2Ah/03h */
	UA_RESERVATIONS_RELEASED = 1u << 2,  /* 2Ah/04h */
	UA_REGISTRATIONS_PREEMPTED = 1u << 3, /* 2Ah/05h */
	UA_MEDIUM_CHANGED = 1u << 4,       /* 28h/00h not ready to ready change, medium may have changed */
	UA_IE_ACCESSED = 1u << 5,          /* 28h/01h import or export element accessed */
	UA_MODE_CHANGED = 1u << 6,         /* 2Ah/01h mode parameters changed */
	UA_LOG_CHANGED = 1u << 7,          /* 2Ah/02h log parameters changed */
	UA_FAILURE_PREDICTION = 1u << 8,   /* 5Dh/00h failure prediction threshold exceeded (MRIE 2) */
	UA_FAILURE_PREDICTION_TEST = 1u << 9, /* 5Dh/FFh ... (false): the informational exceptions test */
	UA_ENCRYPTION_CHANGED = 1u << 10,  /* 2Ah/11h data encryption parameters changed by another I_T nexus */
};

#define UA_MAX_NEXUS 64 /* initiators remembered; the least recently seen is forgotten first */

struct scsi_ua_set {
	struct {
		uint64_t nexus;
		unsigned pending;
		uint64_t seen; /* tick of the last command, for forgetting */
	} e[UA_MAX_NEXUS];
	unsigned n;
	uint64_t tick;
};

/* Empties the set: every nexus then starts with a power-on condition. */
void ua_init(struct scsi_ua_set *u);

/* Raises cond for every nexus (known or not yet seen) except except_nexus (pass UA_NO_NEXUS for none). */
void ua_raise_all(struct scsi_ua_set *u, unsigned cond, uint64_t except_nexus);

/* Raises cond for one nexus. */
void ua_raise(struct scsi_ua_set *u, uint64_t nexus, unsigned cond);

/*
 * If nexus has a condition pending, fills *s with the one of highest
 * precedence, clears it and returns true; else returns false.
 */
bool ua_take(struct scsi_ua_set *u, uint64_t nexus, struct scsi_sense *s);

/* Whether nexus has anything pending (without clearing). */
bool ua_pending(struct scsi_ua_set *u, uint64_t nexus);

/* Forgets a nexus that logged out: it will start with power-on again. */
void ua_forget(struct scsi_ua_set *u, uint64_t nexus);

#define UA_NO_NEXUS UINT64_MAX

#endif
