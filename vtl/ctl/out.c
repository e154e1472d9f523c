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
