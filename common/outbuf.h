/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A growing text buffer with a ceiling: what a reply that is built whole
 * before it is sent (an HTTP body, a metrics exposition) is written into.
 * An append that would pass the ceiling, or that cannot get memory, marks
 * the buffer failed and is dropped, so a caller checks once at the end.
 */
#ifndef VTL_COMMON_OUTBUF_H
#define VTL_COMMON_OUTBUF_H

#include <stdbool.h>
#include <stddef.h>

struct outbuf {
	char *data;   /* NUL-terminated while len < cap; owned */
	size_t len, cap;
	size_t max;   /* bytes it may hold, at most */
	bool failed;  /* an append did not fit under max or found no memory */
};

/* An empty buffer that may hold up to max bytes (nothing is allocated yet). */
void outbuf_init(struct outbuf *o, size_t max);

/* Appends n bytes of p. */
void outbuf_write(struct outbuf *o, const void *p, size_t n);

/* Appends the printf format. */
void outbuf_printf(struct outbuf *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Hands the bytes to the caller (who frees them; NULL when empty) and leaves o empty. */
char *outbuf_take(struct outbuf *o, size_t *len);

/* Frees what o holds. */
void outbuf_free(struct outbuf *o);

#endif
