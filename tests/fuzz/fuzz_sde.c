/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The SET DATA ENCRYPTION parse on bytes a host chose: it must read nothing
 * past the list (the input is copied to a heap block of exactly its size,
 * so ASan sees the first byte beyond), and what it accepts must be within
 * what the drive offers: a refusal points inside the list, an accepted page
 * has a 32-byte key whenever a mode needs one and KADs within their maxima.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tests/fuzz/entry.h"
#include "vtl/drive/sde.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *b = malloc(size ? size : 1);
	if (!b)
		return 0;
	memcpy(b, data, size);
	struct sde r;
	uint16_t byte;
	int bit;
	enum sde_result rc = sde_parse(b, size, &r, &byte, &bit);
	free(b);
	if (rc == SDE_BAD_FIELD && (byte >= size || bit < -1 || bit > 7))
		abort();
	if (rc != SDE_OK)
		return 0;
	if (r.scope > SDE_SCOPE_ALL || r.kad.ukad_len > VTL_UKAD_MAX || r.kad.akad_len > VTL_AKAD_MAX)
		abort();
	if (r.scope != SDE_SCOPE_PUBLIC && (r.enc_mode != SDE_ENC_DISABLE || r.dec_mode != SDE_DEC_DISABLE) &&
	    (!r.has_key || r.algorithm != SDE_ALGORITHM_INDEX))
		abort();
	if (r.enc_mode == SDE_ENC_EXTERNAL || r.dec_mode == SDE_DEC_RAW || r.dec_mode > SDE_DEC_MIXED)
		abort();
	return 0;
}
