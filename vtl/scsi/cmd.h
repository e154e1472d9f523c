/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A SCSI command as the transport-independent core sees it: the front end
 * (iSCSI, TCMU, tests) fills the request half, the core the result half.
 */
#ifndef VTL_SCSI_CMD_H
#define VTL_SCSI_CMD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "common/scsi_proto.h" /* status codes, SCSI_CDB_MAX */
#include "common/scsi_sense.h"

/*
 * The TransportID of an initiator port (SPC-4 7.6.4) as its front end
 * knows it: for iSCSI, format 01b with the name and the ISID. At most 256
 * bytes: an iSCSI one is 4 + 223 + 5 + 12 + 1 bytes, padded to 4.
 */
#define SCSI_TID_MAX 256
struct scsi_tid {
	uint16_t len; /* 0: the front end has none */
	uint8_t id[SCSI_TID_MAX];
};

/*
 * Data-in a unit lends instead of copying it into the command's buffers (a
 * READ served from the read-ahead): data_len bytes at data, which stay valid
 * until the front end calls scsi_loan_end, whether it sent them or the task
 * was aborted. Only a front end that sets may_lend is ever given one.
 */
struct scsi_loan {
	const void *data;          /* NULL: no loan, the data is in iov */
	void (*release)(void *arg);
	void *arg;
};

enum scsi_dir {
	SCSI_DIR_NONE = 0,
	SCSI_DIR_IN,  /* data to the initiator (READ, INQUIRY) */
	SCSI_DIR_OUT, /* data from the initiator (WRITE, MODE SELECT) */
};

struct scsi_cmd {
	/* Request. */
	uint8_t cdb[SCSI_CDB_MAX];
	uint8_t cdb_len;
	enum scsi_dir dir;
	size_t xfer_len;        /* expected data transfer length the initiator gave */
	struct iovec *iov;      /* the transport's own buffers: data is copied at most once */
	int iov_cnt;
	uint64_t nexus;         /* I_T nexus id, for unit attentions and reservations */
	const struct scsi_tid *tid; /* the nexus's initiator port, for PERSISTENT RESERVE IN; NULL: unknown */
	bool may_lend;          /* the front end sends data-in from loan when given one, and ends it */
	/* Result. */
	enum scsi_status status;
	struct scsi_sense sense; /* valid when status is CHECK CONDITION */
	bool sense_desc;        /* the device asks for descriptor-format sense (D_SENSE) */
	size_t data_len;        /* bytes actually transferred */
	struct scsi_loan loan;  /* with GOOD status only: data_len bytes of data-in lent, not in iov */
};

/* Gives back the data-in a unit lent to c, if any (the front end's one release path, sent or aborted). */
static inline void scsi_loan_end(struct scsi_cmd *c)
{
	if (c->loan.release)
		c->loan.release(c->loan.arg);
	c->loan = (struct scsi_loan){0};
}

/* Sets GOOD status with data_len bytes transferred. */
static inline void scsi_done(struct scsi_cmd *c, size_t data_len)
{
	c->status = SCSI_GOOD;
	c->data_len = data_len;
}

/* Sets CHECK CONDITION with the given sense (no data counted). */
static inline void scsi_fail(struct scsi_cmd *c, struct scsi_sense s)
{
	c->status = SCSI_CHECK_CONDITION;
	c->sense = s;
	c->data_len = 0;
}

/*
 * What a front end calls on a logical unit, whatever its type (ssc_unit_ops
 * for a drive, smc_unit_ops for a changer); dev is the unit itself.
 */
struct scsi_unit_ops {
	void (*execute)(void *dev, struct scsi_cmd *c); /* runs one command; on the unit's worker thread */
	void (*reset)(void *dev);                       /* LOGICAL UNIT RESET (SAM-5) */
	void (*nexus_lost)(void *dev, uint64_t nexus);  /* the I_T nexus ended (logout, session gone) */
};

#endif
