/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The sense decoder on bytes a device (or an impersonator of one) chose: it
 * must read nothing past the buffer (the input is copied to a heap block of
 * exactly its size, so ASan sees the first byte beyond), and what it decodes
 * must survive the encoders: decoding what descriptor format encodes of it
 * gives the same value back.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/scsi_sense.h"
#include "tests/fuzz/entry.h"

static void same_or_abort(const struct scsi_sense *a, const struct scsi_sense *b)
{
	if (a->key != b->key || a->asc != b->asc || a->deferred != b->deferred || a->filemark != b->filemark ||
	    a->eom != b->eom || a->ili != b->ili || a->info_valid != b->info_valid ||
	    (a->info_valid && a->info != b->info) || a->sks_valid != b->sks_valid)
		abort();
	if (a->sks_valid && (a->sks_cdb != b->sks_cdb || a->sks_bit_valid != b->sks_bit_valid ||
			     a->sks_field != b->sks_field || (a->sks_bit_valid && a->sks_bit != b->sks_bit)))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *b = malloc(size ? size : 1);
	if (!b)
		return 0;
	memcpy(b, data, size);
	struct scsi_sense s;
	bool ok = sense_decode(b, size, &s);
	free(b);
	if (!ok)
		return 0;
	if ((unsigned)s.key > SENSE_KEY_MASK)
		abort();
	uint8_t e[SENSE_MAX_LEN];
	struct scsi_sense back;
	size_t n = sense_encode_desc(&s, e, sizeof e);
	if (!sense_decode(e, n, &back))
		abort();
	same_or_abort(&s, &back);
	n = sense_encode(&s, e, sizeof e);
	if (n != SENSE_FIXED_LEN || !sense_decode(e, n, &back))
		abort();
	if (back.key != s.key || back.asc != s.asc || back.ili != s.ili || back.filemark != s.filemark)
		abort();
	return 0;
}
