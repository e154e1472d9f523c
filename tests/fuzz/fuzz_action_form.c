/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The web console's action forms (common/action_form.h) on bodies a browser,
 * or anyone holding the token, chose: the parser must read nothing past the
 * body (copied to a heap block of exactly its size, no NUL after it), a
 * refusal's message is a string, and a form it accepts becomes one request
 * line of an operator action that the control protocol's parser takes for
 * the daemon it named.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/action_form.h"
#include "common/ctlsock.h"
#include "tests/fuzz/entry.h"

static const enum ctlproto_verb actions[] = {
	CTLPROTO_MOVE, CTLPROTO_LOAD, CTLPROTO_UNLOAD, CTLPROTO_IMPORT,
	CTLPROTO_EXPORT, CTLPROTO_MIGRATE, CTLPROTO_VERIFY, CTLPROTO_RECALL, CTLPROTO_RELEASE,
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *body = malloc(size ? size : 1);
	if (!body)
		return 0;
	memcpy(body, data, size);
	char line[CTLSOCK_REQUEST_MAX], err[512];
	enum ctlproto_daemon d;
	int rc = action_form_parse(body, size, line, sizeof line, &d, err, sizeof err);
	free(body);
	if (rc != VTL_OK) {
		if (!memchr(err, 0, sizeof err))
			abort();
		return 0;
	}
	struct ctlproto_request r;
	if (!memchr(line, 0, sizeof line) || strchr(line, '\n') || ctlproto_parse(line, strlen(line), d, &r, err, sizeof err) != VTL_OK)
		abort();
	for (size_t i = 0; i < sizeof actions / sizeof actions[0]; i++)
		if (r.verb == actions[i])
			return 0;
	abort(); /* only an operator action may come out */
}
