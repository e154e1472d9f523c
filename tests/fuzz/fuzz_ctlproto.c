/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The control protocol's parser on lines a local client chose: it must read
 * nothing past the line (the input is copied to a heap block of exactly its
 * size, with no NUL after it, so ASan sees the first byte beyond), and a line
 * it accepts must survive the formatter: formatting what it parsed succeeds,
 * and parsing that gives the same request back.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/ctlproto.h"
#include "common/ctlsock.h"
#include "tests/fuzz/entry.h"

static void same_or_abort(const struct ctlproto_request *a, const struct ctlproto_request *b)
{
	if (a->verb != b->verb || a->item.is_address != b->item.is_address || a->item.address != b->item.address ||
	    strcmp(a->item.barcode, b->item.barcode) || strcmp(a->barcode, b->barcode) || a->elements != b->elements ||
	    a->job != b->job || a->flags != b->flags)
		abort();
	for (unsigned i = 0; i < a->elements; i++)
		if (a->element[i] != b->element[i])
			abort();
	for (unsigned o = 0; o < CTLPROTO_OPTIONS; o++)
		if (a->given[o] != b->given[o] || (a->given[o] && a->option[o] != b->option[o]))
			abort();
}

static void one_daemon(const char *line, size_t size, enum ctlproto_daemon d)
{
	struct ctlproto_request r, back;
	char err[512], out[CTLSOCK_REQUEST_MAX];
	if (ctlproto_parse(line, size, d, &r, err, sizeof err) != VTL_OK) {
		if (!memchr(err, 0, sizeof err)) /* a refusal's message is always a string */
			abort();
		return;
	}
	if (ctlproto_verb(r.verb)->daemon != d)
		abort();
	if (ctlproto_format(&r, out, sizeof out, err, sizeof err) != VTL_OK)
		abort();
	if (ctlproto_parse(out, strlen(out), d, &back, err, sizeof err) != VTL_OK)
		abort();
	same_or_abort(&r, &back);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *line = malloc(size ? size : 1);
	if (!line)
		return 0;
	memcpy(line, data, size);
	one_daemon(line, size, CTLPROTO_VTLD);
	one_daemon(line, size, CTLPROTO_MIGRATOR);
	free(line);
	return 0;
}
