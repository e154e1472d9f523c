/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The one place that builds SCSI sense data (fixed format, SPC-4 4.5.3).
 *
 * A handler describes what went wrong as a struct scsi_sense (sense key,
 * additional sense code and qualifier, and the bits and fields a tape host
 * reads: FILEMARK, EOM, ILI, INFORMATION with VALID, the sense-key specific
 * field pointer); sense_encode turns it into the bytes a host receives.
 */
#ifndef VTL_SCSI_SENSE_H
#define VTL_SCSI_SENSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Sense keys (SPC-4 table 27). */
enum scsi_sense_key {
	SK_NO_SENSE = 0x0,
	SK_RECOVERED_ERROR = 0x1,
	SK_NOT_READY = 0x2,
	SK_MEDIUM_ERROR = 0x3,
	SK_HARDWARE_ERROR = 0x4,
	SK_ILLEGAL_REQUEST = 0x5,
	SK_UNIT_ATTENTION = 0x6,
	SK_DATA_PROTECT = 0x7,
	SK_BLANK_CHECK = 0x8,
	SK_ABORTED_COMMAND = 0xB,
	SK_VOLUME_OVERFLOW = 0xD,
	SK_MISCOMPARE = 0xE,
};

/* Additional sense code and qualifier pairs in use (SPC-4 table 28), as 0xAAQQ. */
enum scsi_asc {
	ASC_NONE = 0x0000,                       /* no additional sense information */
	ASC_FILEMARK_DETECTED = 0x0001,
	ASC_EOM_DETECTED = 0x0002,               /* end-of-partition/medium detected */
	ASC_BOT_DETECTED = 0x0004,               /* beginning-of-partition/medium detected */
	ASC_EOD_DETECTED = 0x0005,               /* end-of-data detected */
	ASC_BECOMING_READY = 0x0401,             /* logical unit is in process of becoming ready */
	ASC_NOT_READY_INIT_REQUIRED = 0x0402,    /* initializing command required (medium present, not loaded) */
	ASC_NOT_READY_IN_PROGRESS = 0x0407,      /* operation in progress */
	ASC_WRITE_ERROR = 0x0C00,
	ASC_UNRECOVERED_READ_ERROR = 0x1100,
	ASC_LOCATE_FAILED = 0x1403,              /* end-of-data not found */
	ASC_PARAMETER_LIST_LENGTH = 0x1A00,      /* parameter list length error */
	ASC_PARAMETER_VALUE_INVALID = 0x2602,
	ASC_INVALID_RELEASE_OF_PR = 0x2604,      /* invalid release of persistent reservation */
	ASC_INSUFFICIENT_REGISTRATION = 0x5504,  /* insufficient registration resources */
	ASC_SAVING_NOT_SUPPORTED = 0x3900,
	ASC_INVALID_OPCODE = 0x2000,             /* invalid command operation code */
	ASC_LBA_OUT_OF_RANGE = 0x2100,           /* logical block address out of range */
	ASC_INVALID_ELEMENT_ADDRESS = 0x2101,
	ASC_INVALID_FIELD_IN_CDB = 0x2400,
	ASC_LUN_NOT_SUPPORTED = 0x2500,
	ASC_INVALID_FIELD_IN_PARAMETERS = 0x2600,
	ASC_WRITE_PROTECTED = 0x2700,
	ASC_NOT_READY_TO_READY = 0x2800,         /* not ready to ready change, medium may have changed */
	ASC_IE_ELEMENT_ACCESSED = 0x2801,        /* import or export element accessed */
	ASC_POWER_ON_RESET = 0x2900,
	ASC_MODE_PARAMETERS_CHANGED = 0x2A01,
	ASC_LOG_PARAMETERS_CHANGED = 0x2A02,
	ASC_RESERVATIONS_PREEMPTED = 0x2A03,
	ASC_RESERVATIONS_RELEASED = 0x2A04,
	ASC_REGISTRATIONS_PREEMPTED = 0x2A05,
	ASC_COMMAND_SEQUENCE_ERROR = 0x2C00,
	ASC_INCOMPATIBLE_MEDIUM = 0x3000,        /* incompatible medium installed */
	ASC_CANNOT_WRITE_MEDIUM = 0x3005,        /* cannot write medium, incompatible format */
	ASC_CLEANING_CARTRIDGE = 0x3003,         /* cleaning cartridge installed */
	ASC_MEDIUM_NOT_PRESENT = 0x3A00,
	ASC_MEDIUM_REMOVAL_PREVENTED = 0x5302,
	ASC_MEDIA_LOAD_EJECT_FAILED = 0x5300,
	ASC_WRITE_APPEND_ERROR = 0x5000,
	ASC_MEDIUM_FORMAT_CORRUPTED = 0x3100,
	ASC_CLEANING_FAILURE = 0x3007,
	ASC_AUXILIARY_MEMORY_READ_ERROR = 0x1112,
	ASC_MEDIUM_SOURCE_EMPTY = 0x3B0E,
	ASC_MEDIUM_DESTINATION_FULL = 0x3B0D,
	ASC_MEDIUM_MAGAZINE_NOT_ACCESSIBLE = 0x3B11, /* e.g. a mail slot bank open to the operator */
	ASC_WORM_OVERWRITE = 0x300C,             /* WORM medium, overwrite attempted */
	ASC_SEQUENTIAL_POSITIONING_ERROR = 0x3B00,
	ASC_OVERLAPPED_COMMANDS = 0x4E00,
	ASC_INTERNAL_TARGET_FAILURE = 0x4400,
	ASC_PROTOCOL_SERVICE_CRC_ERROR = 0x4705, /* SCSI parity error: protocol service CRC error (a data digest) */
	ASC_DATA_PHASE_ERROR = 0x4B00,           /* a Data-Out out of sequence (its DataSN) */
	ASC_INVALID_TTT_RECEIVED = 0x4B01,       /* invalid target port transfer tag received */
	ASC_TOO_MUCH_WRITE_DATA = 0x4B02,        /* more data than the burst or the command asked for */
	ASC_DATA_OFFSET_ERROR = 0x4B05,          /* a Data-Out not where the previous one ended */
	ASC_MISCOMPARE_DURING_VERIFY = 0x1D00,
	ASC_FAILURE_PREDICTION = 0x5D00,         /* failure prediction threshold exceeded */
	ASC_FAILURE_PREDICTION_TEST = 0x5DFF,    /* failure prediction threshold exceeded (false) */
	ASC_POSITION_PAST_BOM = 0x3B0C,          /* position past beginning of medium (SSC-4 SET CAPACITY, FORMAT MEDIUM) */
	ASC_AUXILIARY_MEMORY_WRITE_ERROR = 0x0C0B,
};

/* What a handler reports; the encoder turns it into fixed-format bytes. */
struct scsi_sense {
	enum scsi_sense_key key;
	enum scsi_asc asc;
	bool deferred;     /* an error of an earlier, already completed command (response code 71h) */
	bool filemark;     /* FILEMARK bit: a filemark was read or spaced over */
	bool eom;          /* EOM bit: at or past early warning / end of medium, or at BOT */
	bool ili;          /* ILI bit: the block length did not match the request */
	bool info_valid;   /* VALID bit: INFORMATION holds a residue or an address */
	int32_t info;      /* INFORMATION field (SSC: residue, negative when the block was larger) */
	bool sks_valid;    /* SKSV: the field pointer below is valid */
	bool sks_cdb;      /* C/D: the pointer is into the CDB (else into the parameter data) */
	bool sks_bit_valid;
	uint8_t sks_bit;   /* bit pointer 0..7 */
	uint16_t sks_field; /* byte pointer */
};

#define SENSE_FIXED_LEN 18
#define SENSE_MAX_LEN 252 /* the most sense data any format may carry (SPC-4 4.5.1) */

/* Encodes s as fixed-format sense data into out (cap bytes); returns the bytes written (at most 18). */
size_t sense_encode(const struct scsi_sense *s, uint8_t *out, size_t cap);

/*
 * Encodes s in descriptor format (SPC-4 4.5.2: response code 72h, or 73h
 * deferred) with the information, sense-key specific and stream commands
 * descriptors it needs; returns the bytes written (at most cap).
 */
size_t sense_encode_desc(const struct scsi_sense *s, uint8_t *out, size_t cap);

/* ILLEGAL REQUEST / INVALID FIELD IN CDB pointing at byte (and bit, or -1 for none) of the CDB. */
struct scsi_sense sense_invalid_cdb_field(uint16_t byte, int bit);

/* ILLEGAL REQUEST / INVALID FIELD IN PARAMETER LIST pointing at byte (and bit, or -1) of the data. */
struct scsi_sense sense_invalid_param_field(uint16_t byte, int bit);

/* A plain sense key with an additional sense code and no other field set. */
struct scsi_sense sense_of(enum scsi_sense_key key, enum scsi_asc asc);

#endif
