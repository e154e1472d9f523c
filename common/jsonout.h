/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Building the daemons' one-line JSON answers in a fixed buffer: appends
 * never run past it (a long answer is cut, still NUL-terminated).
 */
#ifndef VTL_COMMON_JSONOUT_H
#define VTL_COMMON_JSONOUT_H

#include <stddef.h>

/* Appends to out (cap bytes) at *at (printf format), keeping it NUL-terminated and never past cap. */
void jo_printf(char *out, size_t cap, size_t *at, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Appends s as the body of a JSON string: quotes and backslashes escaped, control characters dropped. */
void jo_str(char *out, size_t cap, size_t *at, const char *s);

/* Writes {"ok":true,"message":"done"} when rc is 0, else {"ok":false,"error":"err"} (err "" : rc's words). */
void jo_answer(char *out, size_t cap, int rc, const char *err, const char *done);

#endif
