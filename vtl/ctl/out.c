/* SPDX-License-Identifier: Apache-2.0 */
/* vtlctl output: aligned tables, key/value lists, JSON, sizes and times. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/vtl_error.h"
#include "vtl/ctl/ctl.h"

/* ------------------------------------------------------------------ table */

void table_init(struct table *t, unsigned ncols, const char *const *head, const char *align)
{
	memset(t, 0, sizeof *t);
	t->ncols = ncols;
	t->head = head;
	t->align = align;
}

int table_add(struct table *t, ...)
{
	if (t->nrows == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 16;
		char **c = realloc(t->cells, cap * t->ncols * sizeof *c);
		if (!c)
			return VTL_E_NOMEM;
		t->cells = c;
		t->cap = cap;
	}
	char **row = t->cells + t->nrows * t->ncols;
	va_list ap;
	va_start(ap, t);
	int rc = VTL_OK;
	for (unsigned i = 0; i < t->ncols; i++) {
		const char *s = va_arg(ap, const char *);
		row[i] = strdup(s ? s : "-");
		if (!row[i])
			rc = VTL_E_NOMEM;
	}
	va_end(ap);
	t->nrows++; /* even on failure, so that table_free frees what was copied */
	return rc;
}

void table_print(const struct table *t, FILE *f)
{
	size_t w[16] = {0};
	unsigned nc = t->ncols < 16 ? t->ncols : 16;
	for (unsigned c = 0; c < nc; c++)
		w[c] = strlen(t->head[c]);
	for (size_t r = 0; r < t->nrows; r++)
		for (unsigned c = 0; c < nc; c++) {
			const char *s = t->cells[r * t->ncols + c];
			size_t n = s ? strlen(s) : 1;
			if (n > w[c])
				w[c] = n;
		}
	for (size_t r = 0; r <= t->nrows; r++) {
		for (unsigned c = 0; c < nc; c++) {
			const char *s = r == 0 ? t->head[c] : t->cells[(r - 1) * t->ncols + c];
			if (!s)
				s = "-";
			bool last = c + 1 == nc;
			if (t->align[c] == 'R')
				fprintf(f, "%*s", (int)w[c], s);
			else if (last)
				fputs(s, f);
			else
				fprintf(f, "%-*s", (int)w[c], s);
			if (!last)
				fputs("  ", f);
		}
		fputc('\n', f);
	}
}

void table_free(struct table *t)
{
	for (size_t i = 0; i < t->nrows * t->ncols; i++)
		free(t->cells[i]);
	free(t->cells);
	memset(t, 0, sizeof *t);
}

void kv_print(const struct kv *kv, size_t n, FILE *f)
{
	size_t w = 0;
	for (size_t i = 0; i < n; i++)
		if (strlen(kv[i].key) > w)
			w = strlen(kv[i].key);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%-*s  %s\n", (int)w, kv[i].key, kv[i].value);
}

/* ------------------------------------------------------------------- JSON */

void json_init(struct json *j, FILE *f)
{
	memset(j, 0, sizeof *j);
	j->f = f;
	j->first[0] = true;
}

static void indent(struct json *j)
{
	fputc('\n', j->f);
	for (int i = 0; i < j->depth; i++)
		fputs("  ", j->f);
}

/* Length of the valid UTF-8 sequence at s (1..4), or 0 if it is not one. */
static size_t utf8_len(const unsigned char *s)
{
	if (s[0] < 0x80)
		return 1;
	size_t n;
	uint32_t cp;
	if ((s[0] & 0xE0) == 0xC0) {
		n = 2;
		cp = s[0] & 0x1F;
	} else if ((s[0] & 0xF0) == 0xE0) {
		n = 3;
		cp = s[0] & 0x0F;
	} else if ((s[0] & 0xF8) == 0xF0) {
		n = 4;
		cp = s[0] & 0x07;
	} else {
		return 0;
	}
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xC0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3F);
	}
	static const uint32_t min[5] = {0, 0, 0x80, 0x800, 0x10000};
	if (cp < min[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
		return 0;
	return n;
}

static void json_string(FILE *f, const char *s)
{
	fputc('"', f);
	const unsigned char *p = (const unsigned char *)s;
	while (*p) {
		unsigned char c = *p;
		switch (c) {
		case '"': fputs("\\\"", f); p++; continue;
		case '\\': fputs("\\\\", f); p++; continue;
		case '\n': fputs("\\n", f); p++; continue;
		case '\r': fputs("\\r", f); p++; continue;
		case '\t': fputs("\\t", f); p++; continue;
		case '\b': fputs("\\b", f); p++; continue;
		case '\f': fputs("\\f", f); p++; continue;
		default: break;
		}
		if (c < 0x20 || c == 0x7f) {
			fprintf(f, "\\u%04x", c);
			p++;
			continue;
		}
		size_t n = utf8_len(p);
		if (n == 0) {
			fputs("\\ufffd", f);
			p++;
			continue;
		}
		fwrite(p, 1, n, f);
		p += n;
	}
	fputc('"', f);
}

/* Comma and indentation before a value, then "key": if there is a key. */
static void member(struct json *j, const char *key)
{
	if (j->depth > 0) {
		if (!j->first[j->depth])
			fputc(',', j->f);
		indent(j);
	}
	j->first[j->depth] = false;
	if (key) {
		json_string(j->f, key);
		fputs(": ", j->f);
	}
}

static void open_(struct json *j, const char *key, char c)
{
	member(j, key);
	fputc(c, j->f);
	if (j->depth < 31)
		j->depth++;
	j->first[j->depth] = true;
}

static void close_(struct json *j, char c)
{
	bool empty = j->first[j->depth];
	if (j->depth > 0)
		j->depth--;
	if (!empty)
		indent(j);
	fputc(c, j->f);
}

void json_obj(struct json *j, const char *key) { open_(j, key, '{'); }
void json_obj_end(struct json *j) { close_(j, '}'); }
void json_arr(struct json *j, const char *key) { open_(j, key, '['); }
void json_arr_end(struct json *j) { close_(j, ']'); }

void json_str(struct json *j, const char *key, const char *v)
{
	member(j, key);
	if (v)
		json_string(j->f, v);
	else
		fputs("null", j->f);
}

void json_u64(struct json *j, const char *key, uint64_t v)
{
	member(j, key);
	fprintf(j->f, "%" PRIu64, v);
}

void json_i64(struct json *j, const char *key, int64_t v)
{
	member(j, key);
	fprintf(j->f, "%" PRId64, v);
}

void json_bool(struct json *j, const char *key, bool v)
{
	member(j, key);
	fputs(v ? "true" : "false", j->f);
}

void json_null(struct json *j, const char *key)
{
	member(j, key);
	fputs("null", j->f);
}

void json_end(struct json *j)
{
	fputc('\n', j->f);
}

/* ---------------------------------------------------------------- formats */

void fmt_bytes(uint64_t n, char *buf, size_t len)
{
	static const char *const unit[] = {"B", "KB", "MB", "GB", "TB", "PB", "EB"};
	if (n < 1000) {
		snprintf(buf, len, "%" PRIu64 " B", n);
		return;
	}
	double v = (double)n;
	int u = 0;
	while (v >= 1000.0 && u < 6) {
		v /= 1000.0;
		u++;
	}
	if (v >= 99.95)
		snprintf(buf, len, "%.0f %s", v, unit[u]);
	else
		snprintf(buf, len, "%.1f %s", v, unit[u]);
}

void fmt_time(int64_t t, char *buf, size_t len)
{
	if (t == 0) {
		snprintf(buf, len, "never");
		return;
	}
	time_t tt = (time_t)t;
	struct tm tm;
	if (!localtime_r(&tt, &tm) || !strftime(buf, len, "%Y-%m-%d %H:%M:%S", &tm))
		snprintf(buf, len, "%" PRId64, t);
}

void fmt_time_iso(int64_t t, char *buf, size_t len)
{
	time_t tt = (time_t)t;
	struct tm tm;
	if (!gmtime_r(&tt, &tm) || !strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(buf, len, "%" PRId64, t);
}

/* ---- reading a daemon's one-line JSON answer ---- */

/* The unsigned number after "key": in s, or 0. */
unsigned long long ans_u64(const char *s, const char *key)
{
	char pat[64];
	snprintf(pat, sizeof pat, "\"%s\":", key);
	const char *p = strstr(s, pat);
	return p ? strtoull(p + strlen(pat), NULL, 10) : 0;
}

/* The number (with a fraction or not) after "key": in s, or 0. */
double ans_real(const char *s, const char *key)
{
	char pat[64];
	snprintf(pat, sizeof pat, "\"%s\":", key);
	const char *p = strstr(s, pat);
	return p ? strtod(p + strlen(pat), NULL) : 0;
}

/* The string after "key": in s, copied to out (no escapes occur in these values). */
void ans_text(const char *s, const char *key, char *out, size_t cap)
{
	char pat[64];
	snprintf(pat, sizeof pat, "\"%s\":\"", key);
	const char *p = strstr(s, pat);
	size_t n = 0;
	if (p)
		for (p += strlen(pat); *p && *p != '"' && n + 1 < cap; p++)
			out[n++] = *p;
	out[n] = 0;
}
