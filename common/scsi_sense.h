/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The one place that builds SCSI sense data, and the one that reads it
 * (fixed and descriptor format, SPC-4 4.5).
 *
 * A handler of the target describes what went wrong as a struct scsi_sense
 * (sense key, additional sense code and qualifier, and the bits and fields a
 * tape host reads: FILEMARK, EOM, ILI, INFORMATION with VALID, the sense-key
 * specific field pointer); sense_encode turns it into the bytes a host
 * receives. An initiator (the migrator's physical libraries, the tests) turns
 * the bytes a device sent back into the same value with sense_decode.
 */
#ifndef VTL_COMMON_SCSI_SENSE_H
#define VTL_COMMON_SCSI_SENSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/scsi_proto.h"

/* What a handler reports (the encoder turns it into bytes), or what a device reported (the decoder's result). */
struct scsi_sense {
	enum scsi_sense_key key;
	enum scsi_asc asc;
	bool deferred;     /* an error of an earlier, already completed command (response code 71h) */
	bool filemark;     /* FILEMARK bit: a filemark was read or spaced over */
	bool eom;          /* EOM bit: at or past early warning / end of medium, or at BOT */
	bool ili;          /* ILI bit: the block length did not match the request */
	bool info_valid;   /* VALID bit: INFORMATION holds a residue or an address */
	int64_t info;      /* INFORMATION (SSC: residue, negative when the block was larger); fixed format: 32 bits */
	bool sks_valid;    /* SKSV: the field pointer below is valid */
	bool sks_cdb;      /* C/D: the pointer is into the CDB (else into the parameter data) */
	bool sks_bit_valid;
	uint8_t sks_bit;   /* bit pointer 0..7 */
	uint16_t sks_field; /* byte pointer */
};

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

/*
 * Decodes len bytes of sense data (fixed format 70h/71h or descriptor format 72h/73h, SPC-4 4.5),
 * reading nothing beyond len: true with *out set when they hold at least a response code and a sense
 * key; false, *out zeroed, for an unknown response code or too few bytes. Fields the bytes do not
 * reach (a fixed format cut before its ASC) are left zero; in descriptor format INFORMATION comes
 * from the information descriptor, FILEMARK/EOM/ILI from the stream commands descriptor, the field
 * pointer from the sense-key specific one, and descriptors of other types are skipped.
 */
bool sense_decode(const uint8_t *b, size_t len, struct scsi_sense *out);

#endif
