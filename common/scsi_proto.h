/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The SCSI vocabulary, once, for every layer that speaks it: the target core
 * (vtl/scsi), the devices (vtl/drive, vtl/changer), the front ends
 * (vtl/iscsi, vtl/tcmu) and the migrator's initiators for physical libraries
 * (migrator/phys_scsi.c). Header only, in common/ so that any layer may
 * include it.
 *
 * Operation codes, status codes, sense keys, ASC/ASCQ pairs, the sense data
 * formats' fixed offsets and bits, peripheral device types and CDB lengths by
 * group, each with the table of the standard that assigns it. Nothing here
 * does anything but name a number.
 */
#ifndef VTL_COMMON_SCSI_PROTO_H
#define VTL_COMMON_SCSI_PROTO_H

#include <stdint.h>

/* ------------------------------------------------------------------ operation codes */

/*
 * Operation codes (SPC-4 annex D, table "operation codes", for all device types; SSC-4 table
 * "commands for sequential-access devices"; SMC-3 table "commands for medium changer devices").
 */
enum scsi_opcode {
	SCSI_OP_TEST_UNIT_READY = 0x00,
	SCSI_OP_REWIND = 0x01,              /* SSC */
	SCSI_OP_REQUEST_SENSE = 0x03,
	SCSI_OP_FORMAT_MEDIUM = 0x04,       /* SSC */
	SCSI_OP_READ_BLOCK_LIMITS = 0x05,   /* SSC */
	SCSI_OP_INITIALIZE_ELEMENT_STATUS = 0x07, /* SMC */
	SCSI_OP_READ6 = 0x08,               /* SSC */
	SCSI_OP_WRITE6 = 0x0A,              /* SSC */
	SCSI_OP_SET_CAPACITY = 0x0B,        /* SSC */
	SCSI_OP_WRITE_FILEMARKS6 = 0x10,    /* SSC */
	SCSI_OP_SPACE6 = 0x11,              /* SSC */
	SCSI_OP_INQUIRY = 0x12,
	SCSI_OP_MODE_SELECT6 = 0x15,
	SCSI_OP_RESERVE6 = 0x16,
	SCSI_OP_RELEASE6 = 0x17,
	SCSI_OP_ERASE6 = 0x19,              /* SSC */
	SCSI_OP_MODE_SENSE6 = 0x1A,
	SCSI_OP_LOAD_UNLOAD = 0x1B,         /* SSC */
	SCSI_OP_PREVENT_ALLOW = 0x1E,       /* PREVENT ALLOW MEDIUM REMOVAL */
	SCSI_OP_LOCATE10 = 0x2B,            /* SSC; POSITION TO ELEMENT in SMC */
	SCSI_OP_READ_POSITION = 0x34,       /* SSC */
	SCSI_OP_REPORT_DENSITY_SUPPORT = 0x44, /* SSC */
	SCSI_OP_LOG_SELECT = 0x4C,
	SCSI_OP_LOG_SENSE = 0x4D,
	SCSI_OP_MODE_SELECT10 = 0x55,
	SCSI_OP_RESERVE10 = 0x56,
	SCSI_OP_RELEASE10 = 0x57,
	SCSI_OP_MODE_SENSE10 = 0x5A,
	SCSI_OP_PERSISTENT_RESERVE_IN = 0x5E,
	SCSI_OP_PERSISTENT_RESERVE_OUT = 0x5F,
	SCSI_OP_VARIABLE_LENGTH = 0x7F,     /* SPC-4 4.2.4: 8 + ADDITIONAL CDB LENGTH bytes */
	SCSI_OP_READ_ATTRIBUTE = 0x8C,
	SCSI_OP_WRITE_ATTRIBUTE = 0x8D,
	SCSI_OP_SPACE16 = 0x91,             /* SSC */
	SCSI_OP_LOCATE16 = 0x92,            /* SSC */
	SCSI_OP_SERVICE_ACTION_IN16 = 0x9E,
	SCSI_OP_REPORT_LUNS = 0xA0,
	SCSI_OP_MAINTENANCE_IN = 0xA3,      /* REPORT SUPPORTED OPERATION CODES and others, by service action */
	SCSI_OP_MAINTENANCE_OUT = 0xA4,
	SCSI_OP_MOVE_MEDIUM = 0xA5,         /* SMC */
	SCSI_OP_EXCHANGE_MEDIUM = 0xA6,     /* SMC */
	SCSI_OP_READ_ELEMENT_STATUS = 0xB8, /* SMC */
};

/* The service action of the opcodes that carry one: CDB byte 1, bits 4..0 (SPC-4 4.2.5.1). */
#define SCSI_CDB_SA_BYTE 1
#define SCSI_CDB_SA_MASK 0x1F

/* READ POSITION service actions (SSC-4, READ POSITION: table "service action codes"). */
#define SCSI_RP_SHORT 0x00
#define SCSI_RP_LONG 0x06

/* ------------------------------------------------------------------ CDB lengths */

/* The operation code's group: its top three bits (SPC-4 4.2.5.1, table "group code values"). */
#define SCSI_CDB_GROUP_SHIFT 5
#define SCSI_CDB_MAX 32                  /* the longest CDB a front end carries (iSCSI: 16 + AHS) */
#define SCSI_CDB_VARIABLE_ADDL_BYTE 7    /* SPC-4 4.2.4: ADDITIONAL CDB LENGTH */
#define SCSI_CDB_VARIABLE_FIXED 8        /* the bytes of a variable length CDB before its additional ones */

/* The CDB length that the group of opcode gives: 6, 10, 12 or 16; 0 for groups 3 (reserved, or the
 * variable length CDB), 6 and 7 (vendor specific). */
static inline uint8_t scsi_cdb_group_len(uint8_t opcode)
{
	static const uint8_t by_group[8] = {6, 10, 10, 0, 16, 12, 0, 0};
	return by_group[opcode >> SCSI_CDB_GROUP_SHIFT];
}

/* ------------------------------------------------------------------ status */

/* Status codes (SAM-5 5.3.1, table "status codes"). */
enum scsi_status {
	SCSI_GOOD = 0x00,
	SCSI_CHECK_CONDITION = 0x02,
	SCSI_CONDITION_MET = 0x04,
	SCSI_BUSY = 0x08,
	SCSI_RESERVATION_CONFLICT = 0x18,
	SCSI_TASK_SET_FULL = 0x28,
	SCSI_ACA_ACTIVE = 0x30,
	SCSI_TASK_ABORTED = 0x40,
};

/* ------------------------------------------------------------------ sense data */

/* Sense keys (SPC-4 4.5.6, table 27 "sense key descriptions"). */
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

/* An ASC/ASCQ pair as one 0xAAQQ value, and its two halves. */
#define SCSI_ASC_OF(pair) ((uint8_t)((unsigned)(pair) >> 8))
#define SCSI_ASCQ_OF(pair) ((uint8_t)((unsigned)(pair) & 0xFF))
#define SCSI_ASC_PAIR(asc, ascq) ((unsigned)(asc) << 8 | (unsigned)(ascq))

/* Additional sense code and qualifier pairs in use (SPC-4 4.5.6, table 28 "ASC and ASCQ assignments", which
 * also lists those SSC-4 and SMC-3 use), as 0xAAQQ. */
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
	/*
	 * 10h/01h LOGICAL BLOCK GUARD CHECK FAILED (T10 ASC list, the kernel's
	 * drivers/scsi/sense_codes.h): a protection CRC that does not match its
	 * block. IBM LTO drives report it under HARDWARE ERROR (04/1001 in
	 * IBM's LTFS sense table, src/tape_drivers/vendor_compat.c; mhVTL alike).
	 */
	ASC_LOGICAL_BLOCK_GUARD_CHECK_FAILED = 0x1001,
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
	ASC_MEDIUM_MAGAZINE_REMOVED = 0x3B12,
	ASC_WORM_OVERWRITE = 0x300C,             /* WORM medium - overwrite attempted (T10 ASC list; IBM's LTFS table 07/300C) */
	/*
	 * 5Ah/02h OPERATOR SELECTED WRITE PROTECT in the T10 list: what an IBM
	 * LTO drive in append-only mode answers an overwrite with, DATA PROTECT
	 * (IBM's LTFS, src/libltfs/ltfs_error.h: "07/5A02 Attempt to overwrite in
	 * append only mode"; its sense table names it "Data Protect/Operator -
	 * Overwrite Attempted").
	 */
	ASC_APPEND_ONLY_OVERWRITE = 0x5A02,
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
	/*
	 * Tape data encryption: the 74h/xx security errors of the T10 ASC list
	 * (the kernel's drivers/scsi/sense_codes.h), under DATA PROTECT as IBM's
	 * LTFS sense table gives them for its LTO drives (07/7401..07/7405).
	 */
	ASC_UNABLE_TO_DECRYPT = 0x7401,          /* unable to decrypt data */
	ASC_UNENCRYPTED_WHILE_DECRYPTING = 0x7402, /* unencrypted data encountered while decrypting */
	ASC_INCORRECT_ENCRYPTION_KEY = 0x7403,   /* incorrect data encryption key */
	ASC_CRYPTO_INTEGRITY_FAILED = 0x7404,    /* cryptographic integrity validation failed */
	ASC_ENCRYPTION_PREVENTED = 0x7421,       /* data encryption configuration prevented */
	ASC_ENCRYPTION_CHANGED_BY_OTHER = 0x2A11, /* data encryption parameters changed by another I_T nexus */
	ASC_ENCRYPTION_KIC_CHANGED = 0x2A13,     /* data encryption key instance counter has changed (HP LTO-4 ref. p.72, IBM TS3310 LTO sense table) */
	ASC_INSUFFICIENT_RESOURCES = 0x5503,     /* insufficient resources (T10 ASC list) */
};

/* The additional sense codes whose every qualifier means one thing to an initiator (SPC-4 table 28). */
#define SCSI_ASC_NOT_READY 0x04          /* 04h/xx: logical unit not ready, for the reason in the ASCQ */
#define SCSI_ASC_MEDIUM_CHANGED 0x28     /* 28h/xx: not ready to ready change (medium may have changed) */
#define SCSI_ASC_RESET 0x29              /* 29h/xx: power on, reset or bus device reset occurred */
#define SCSI_ASC_INCOMPATIBLE 0x30       /* 30h/xx: incompatible medium installed, and its kinds */
#define SCSI_ASC_MEDIUM_NOT_PRESENT 0x3A /* 3Ah/xx: medium not present, tray open or closed */
#define SCSI_ASC_REMOVAL_PREVENTED 0x53  /* 53h/xx: media load or eject failed, removal prevented */

/* Sense data response codes (SPC-4 4.5.1, table "sense data response codes"). */
#define SENSE_RESPONSE_MASK 0x7F
#define SENSE_FIXED_CURRENT 0x70
#define SENSE_FIXED_DEFERRED 0x71
#define SENSE_DESC_CURRENT 0x72
#define SENSE_DESC_DEFERRED 0x73

/* Fixed format sense data (SPC-4 4.5.3, table 45): offsets and bits. */
#define SENSE_FIXED_LEN 18
#define SENSE_MAX_LEN 252       /* the most sense data any format may carry (SPC-4 4.5.1) */
#define SENSE_FS_RESPONSE 0     /* VALID (bit 7) and RESPONSE CODE */
#define SENSE_FS_FLAGS 2        /* FILEMARK (7), EOM (6), ILI (5), SENSE KEY (3..0) */
#define SENSE_FS_INFORMATION 3  /* 4 bytes, big-endian */
#define SENSE_FS_ADDITIONAL_LEN 7 /* bytes after this one */
#define SENSE_FS_ASC 12
#define SENSE_FS_ASCQ 13
#define SENSE_FS_SKS 15         /* SKSV (7), C/D (6), BPV (3), BIT POINTER (2..0), then FIELD POINTER */
#define SENSE_BIT_VALID 0x80    /* fixed byte 0; information descriptor byte 2 */
#define SENSE_BIT_FILEMARK 0x80 /* fixed byte 2; stream commands descriptor byte 3 */
#define SENSE_BIT_EOM 0x40
#define SENSE_BIT_ILI 0x20
#define SENSE_KEY_MASK 0x0F
#define SENSE_BIT_SKSV 0x80
#define SENSE_BIT_CD 0x40
#define SENSE_BIT_BPV 0x08
#define SENSE_BIT_POINTER_MASK 0x07

/* Descriptor format sense data (SPC-4 4.5.2 and its descriptor tables; the stream commands
 * descriptor SSC-4 4.2.24). */
#define SENSE_DS_RESPONSE 0
#define SENSE_DS_KEY 1
#define SENSE_DS_ASC 2
#define SENSE_DS_ASCQ 3
#define SENSE_DS_ADDITIONAL_LEN 7
#define SENSE_DS_HEADER 8
#define SENSE_DESC_HEADER 2          /* every descriptor: type, then the length of what follows */
#define SENSE_DESC_INFORMATION 0x00  /* 12 bytes: type, 0Ah, VALID, reserved, 8-byte INFORMATION */
#define SENSE_DESC_INFORMATION_LEN 12
#define SENSE_DESC_SKS 0x02          /* 8 bytes: type, 06h, 2 reserved, 3 bytes SKS, reserved */
#define SENSE_DESC_SKS_LEN 8
#define SENSE_DESC_STREAM 0x04       /* 4 bytes: type, 02h, reserved, FILEMARK/EOM/ILI */
#define SENSE_DESC_STREAM_LEN 4

/* ------------------------------------------------------------------ INQUIRY */

/* Peripheral device types (SPC-4 6.4.2, table "peripheral device type") and qualifier, INQUIRY byte 0. */
#define SCSI_PDT_TAPE 0x01
#define SCSI_PDT_CHANGER 0x08
#define SCSI_PDT_MASK 0x1F
#define SCSI_PQ_SHIFT 5 /* peripheral qualifier: 0 means a unit is connected */

#endif
