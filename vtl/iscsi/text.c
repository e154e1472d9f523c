/* SPDX-License-Identifier: Apache-2.0 */
#include "vtl/iscsi/text.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TEXT_GROW_MIN 256 /* first allocation of a text buffer */

/* RFC 7143 6.1: key names are made of letters, digits, '.', '-', '+', '@' and '_'. */
static bool key_char(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
	       c == '-' || c == '+' || c == '@' || c == '_';
}

/* Strict UTF-8 (RFC 3629): no overlong forms, no surrogates, nothing above U+10FFFF. */
static bool valid_utf8(const unsigned char *s)
{
	while (*s) {
		unsigned c = *s++;
		if (c < 0x80)
			continue;
		unsigned n;
		uint32_t cp, min;
		if ((c & 0xE0) == 0xC0) {
			n = 1, cp = c & 0x1F, min = 0x80;
		} else if ((c & 0xF0) == 0xE0) {
			n = 2, cp = c & 0x0F, min = 0x800;
		} else if ((c & 0xF8) == 0xF0) {
			n = 3, cp = c & 0x07, min = 0x10000;
		} else {
			return false;
		}
		for (unsigned i = 0; i < n; i++) {
			if ((s[i] & 0xC0) != 0x80)
				return false;
			cp = cp << 6 | (s[i] & 0x3F);
		}
		s += n;
		if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
			return false;
	}
	return true;
}

void iscsi_text_free(struct iscsi_text *t)
{
	free(t->buf);
	t->buf = NULL;
	t->n = 0;
}

const char *iscsi_text_get(const struct iscsi_text *t, const char *key)
{
	for (unsigned i = 0; i < t->n; i++)
		if (strcmp(t->kv[i].key, key) == 0)
			return t->kv[i].value;
	return NULL;
}

int iscsi_text_parse(const uint8_t *data, size_t len, struct iscsi_text *t)
{
	t->n = 0;
	/* A copy with a NUL after the last byte: the last pair may come without its own. */
	t->buf = malloc(len + 1);
	if (!t->buf)
		return ISCSI_TEXT_NO_MEMORY;
	if (len)
		memcpy(t->buf, data, len);
	t->buf[len] = 0;
	int err = ISCSI_TEXT_OK;
	for (size_t at = 0; at < len && !err;) {
		char *pair = t->buf + at;
		size_t plen = strlen(pair);
		at += plen + 1;
		if (plen == 0)
			continue;
		char *eq = strchr(pair, '=');
		if (!eq) {
			err = ISCSI_TEXT_NO_EQUALS;
			break;
		}
		size_t klen = (size_t)(eq - pair);
		*eq = 0;
		if (klen == 0)
			err = ISCSI_TEXT_BAD_KEY;
		else if (klen > ISCSI_KEY_MAX)
			err = ISCSI_TEXT_KEY_LONG;
		else if (plen - klen - 1 > ISCSI_LARGE_VALUE_MAX)
			err = ISCSI_TEXT_VALUE_LONG;
		else if (!valid_utf8((const unsigned char *)eq + 1))
			err = ISCSI_TEXT_BAD_UTF8;
		else if (t->n == ISCSI_TEXT_MAX_PAIRS)
			err = ISCSI_TEXT_TOO_MANY;
		for (size_t i = 0; i < klen && !err; i++)
			if (!key_char((unsigned char)pair[i]))
				err = ISCSI_TEXT_BAD_KEY;
		if (!err && iscsi_text_get(t, pair))
			err = ISCSI_TEXT_DUPLICATE;
		if (!err)
			t->kv[t->n++] = (struct iscsi_kv){pair, eq + 1};
	}
	if (err)
		iscsi_text_free(t);
	return err;
}

const char *iscsi_text_strerror(int err)
{
	switch (err) {
	case ISCSI_TEXT_OK: return "no error";
	case ISCSI_TEXT_NO_EQUALS: return "a text pair without '='";
	case ISCSI_TEXT_BAD_KEY: return "a malformed key name";
	case ISCSI_TEXT_KEY_LONG: return "a key name longer than 63 bytes";
	case ISCSI_TEXT_VALUE_LONG: return "a value longer than 8192 bytes";
	case ISCSI_TEXT_BAD_UTF8: return "a value that is not UTF-8";
	case ISCSI_TEXT_DUPLICATE: return "a key given twice";
	case ISCSI_TEXT_TOO_MANY: return "too many keys";
	case ISCSI_TEXT_NO_MEMORY: return "out of memory";
	}
	return "unknown text error";
}

static int text_append(struct iscsi_text_buf *b, const char *s, size_t n)
{
	if (b->failed)
		return ISCSI_TEXT_NO_MEMORY;
	if (n > b->cap - b->len) {
		size_t cap = b->cap ? b->cap : TEXT_GROW_MIN;
		while (cap - b->len < n)
			cap *= 2;
		uint8_t *nd = realloc(b->data, cap);
		if (!nd) {
			b->failed = true;
			return ISCSI_TEXT_NO_MEMORY;
		}
		b->data = nd;
		b->cap = cap;
	}
	memcpy(b->data + b->len, s, n);
	b->len += n;
	return ISCSI_TEXT_OK;
}

int iscsi_text_add(struct iscsi_text_buf *b, const char *key, const char *value)
{
	size_t before = b->len;
	int e = text_append(b, key, strlen(key));
	if (!e)
		e = text_append(b, "=", 1);
	if (!e)
		e = text_append(b, value, strlen(value) + 1);
	if (e)
		b->len = before; /* never leave half a pair */
	return e;
}

int iscsi_text_add_uint(struct iscsi_text_buf *b, const char *key, uint64_t n)
{
	char v[24];
	snprintf(v, sizeof v, "%" PRIu64, n);
	return iscsi_text_add(b, key, v);
}

void iscsi_text_buf_free(struct iscsi_text_buf *b)
{
	free(b->data);
	*b = (struct iscsi_text_buf){0};
}

int iscsi_parse_number(const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
	uint64_t v = 0;
	unsigned base = 10;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
	}
	if (!*s)
		return -1;
	for (; *s; s++) {
		unsigned d;
		if (*s >= '0' && *s <= '9')
			d = (unsigned)(*s - '0');
		else if (base == 16 && *s >= 'a' && *s <= 'f')
			d = (unsigned)(*s - 'a' + 10);
		else if (base == 16 && *s >= 'A' && *s <= 'F')
			d = (unsigned)(*s - 'A' + 10);
		else
			return -1;
		if (v > (UINT64_MAX - d) / base)
			return -1;
		v = v * base + d;
	}
	if (v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

int iscsi_parse_bool(const char *s, bool *out)
{
	if (strcmp(s, "Yes") == 0)
		*out = true;
	else if (strcmp(s, "No") == 0)
		*out = false;
	else
		return -1;
	return 0;
}

int iscsi_neg_list(const char *offer, const char *const *acceptable, size_t n)
{
	const char *p = offer;
	while (*p) {
		size_t len = strcspn(p, ",");
		for (size_t i = 0; i < n; i++)
			if (strlen(acceptable[i]) == len && memcmp(acceptable[i], p, len) == 0)
				return (int)i;
		p += len;
		if (*p == ',')
			p++;
	}
	return -1;
}
