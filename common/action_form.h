/* SPDX-License-Identifier: Apache-2.0 */
/*
 * An operator action as the web console posts it: an HTML form body
 * (application/x-www-form-urlencoded, WHATWG URL "urlencoded parsing"),
 * "verb=move&from=000123L8&to=1025", turned into the control protocol's
 * request line ("move 000123L8 1025") that vtlctl would send for the same
 * action. The fields a verb takes are its arguments in common/ctlproto.c's
 * table, named in lower case ("from", "to", "drive", "slot", "barcode",
 * "ie", and the option and flag words "rate", "native", "library",
 * "force"), so the
 * grammar, its bounds and its error texts are the control protocol's own:
 * the line is then parsed by ctlproto_parse like any other.
 *
 * Refused, with a message naming the field: an unknown field, one given
 * twice, an empty value or one that is not one word of printable ASCII, a
 * verb that is not an action (only move, load, unload, import, export,
 * migrate, verify, recall, release are), a required argument left out.
 */
#ifndef VTL_COMMON_ACTION_FORM_H
#define VTL_COMMON_ACTION_FORM_H

#include <stddef.h>

#include "common/ctlproto.h"

#define ACTION_FORM_FIELDS_MAX 8 /* fields of one action: the verb and CTLPROTO_ARGS_MAX arguments, and room to refuse */

/*
 * Reads the form body (len bytes) into the request line (cap bytes) for
 * the daemon *daemon answers it, already checked by ctlproto_parse. VTL_OK;
 * VTL_E_INVAL with err (errlen bytes) saying what to fix.
 */
int action_form_parse(const char *body, size_t len, char *line, size_t cap, enum ctlproto_daemon *daemon, char *err,
		      size_t errlen);

#endif
