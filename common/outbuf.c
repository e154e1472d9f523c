/* SPDX-License-Identifier: Apache-2.0 */
#include "common/outbuf.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OUTBUF_FIRST 4096 /* the first allocation: most replies fit in a page */

void outbuf_init(struct outbuf *o, size_t max)
{
	memset(o, 0, sizeof *o);
	o->max = max;
}

/* Makes room for more bytes and a NUL; false (o failed) when that passes max or memory. */
static bool room(struct outbuf *o, size_t more)
{
	if (o->failed)
		return false;
	if (more > o->max || o->len > o->max - more) {
		o->failed = true;
		return false;
	}
	size_t need = o->len + more + 1;
	if (need <= o->cap)
		return true;
	size_t cap = o->cap ? o->cap : OUTBUF_FIRST;
	while (cap < need)
		cap = cap > SIZE_MAX / 2 ? need : cap * 2;
	char *d = realloc(o->data, cap);
	if (!d) {
		o->failed = true;
		return false;
	}
	o->data = d;
	o->cap = cap;
	return true;
}

void outbuf_write(struct outbuf *o, const void *p, size_t n)
{
	if (!room(o, n))
		return;
	memcpy(o->data + o->len, p, n);
	o->len += n;
	o->data[o->len] = 0;
}

void outbuf_printf(struct outbuf *o, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0) {
		o->failed = true;
		return;
	}
	if (!room(o, (size_t)n))
		return;
	va_start(ap, fmt);
	vsnprintf(o->data + o->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	o->len += (size_t)n;
}

char *outbuf_take(struct outbuf *o, size_t *len)
{
	char *d = o->data;
	*len = o->len;
	size_t max = o->max;
	outbuf_init(o, max);
	return d;
}

void outbuf_free(struct outbuf *o)
{
	free(o->data);
	outbuf_init(o, o->max);
}
