/* SPDX-License-Identifier: Apache-2.0 */
#include "common/jsonout.h"

#include <stdarg.h>
#include <stdio.h>

#include "common/vtl_error.h"

void jo_printf(char *out, size_t cap, size_t *at, const char *fmt, ...)
{
	if (*at >= cap)
		return;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(out + *at, cap - *at, fmt, ap);
	va_end(ap);
	if (n > 0)
		*at += (size_t)n < cap - *at ? (size_t)n : cap - *at - 1;
}

void jo_str(char *out, size_t cap, size_t *at, const char *s)
{
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			jo_printf(out, cap, at, "\\%c", *s);
		else if ((unsigned char)*s >= 0x20)
			jo_printf(out, cap, at, "%c", *s);
	}
}

void jo_answer(char *out, size_t cap, int rc, const char *err, const char *done)
{
	size_t at = 0;
	if (rc == VTL_OK) {
		jo_printf(out, cap, &at, "{\"ok\":true,\"message\":\"");
		jo_str(out, cap, &at, done);
	} else {
		jo_printf(out, cap, &at, "{\"ok\":false,\"error\":\"");
		jo_str(out, cap, &at, err && err[0] ? err : vtl_strerror(rc));
	}
	jo_printf(out, cap, &at, "\"}");
}
