/* SPDX-License-Identifier: Apache-2.0 */
#include "common/promtext.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define PROM_LABELS_MAX 8 /* labels of one sample, and one more for a histogram's le */

bool prom_name_valid(const char *s, bool label)
{
	if (!s || !*s)
		return false;
	for (const char *p = s; *p; p++) {
		char c = *p;
		bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (!label && c == ':');
		if (!alpha && !(p > s && c >= '0' && c <= '9'))
			return false;
	}
	return true;
}

/* s with the escapes of a HELP line (quote false) or a label value (quote true). */
static void escaped(struct outbuf *o, const char *s, bool quote)
{
	for (const char *p = s; *p; p++) {
		if (*p == '\\')
			outbuf_write(o, "\\\\", 2);
		else if (*p == '\n')
			outbuf_write(o, "\\n", 2);
		else if (quote && *p == '"')
			outbuf_write(o, "\\\"", 2);
		else
			outbuf_write(o, p, 1);
	}
}

void prom_family(struct outbuf *o, const char *name, const char *type, const char *help)
{
	if (!prom_name_valid(name, false)) {
		o->failed = true;
		return;
	}
	outbuf_printf(o, "# HELP %s ", name);
	escaped(o, help, false);
	outbuf_printf(o, "\n# TYPE %s %s\n", name, type);
}

/* name{labels} and the blank before the value; false (o failed) for a bad name. */
static bool series(struct outbuf *o, const char *name, const struct prom_label *l, unsigned n)
{
	if (!prom_name_valid(name, false) || n > PROM_LABELS_MAX) {
		o->failed = true;
		return false;
	}
	for (unsigned i = 0; i < n; i++)
		if (!prom_name_valid(l[i].name, true)) {
			o->failed = true;
			return false;
		}
	outbuf_printf(o, "%s", name);
	for (unsigned i = 0; i < n; i++) {
		outbuf_printf(o, "%s%s=\"", i ? "," : "{", l[i].name);
		escaped(o, l[i].value ? l[i].value : "", true);
		outbuf_write(o, "\"", 1);
	}
	outbuf_printf(o, "%s ", n ? "}" : "");
	return true;
}

static void value(struct outbuf *o, double v)
{
	if (isnan(v))
		outbuf_printf(o, "NaN\n");
	else if (isinf(v))
		outbuf_printf(o, "%sInf\n", v > 0 ? "+" : "-");
	else
		outbuf_printf(o, "%.17g\n", v);
}

void prom_sample(struct outbuf *o, const char *name, const struct prom_label *l, unsigned n, double v)
{
	if (series(o, name, l, n))
		value(o, v);
}

void prom_sample_u64(struct outbuf *o, const char *name, const struct prom_label *l, unsigned n, uint64_t v)
{
	if (series(o, name, l, n))
		outbuf_printf(o, "%llu\n", (unsigned long long)v);
}

void prom_rows_u64(struct outbuf *o, const struct prom_rows *r, const char *name, const char *type, const char *help,
		   uint64_t (*get)(const void *row))
{
	prom_family(o, name, type, help);
	for (size_t i = 0; i < r->n; i++) {
		const void *row = (const char *)r->rows + i * r->size;
		struct prom_label l[PROM_ROW_LABELS_MAX];
		char text[PROM_ROW_TEXT];
		unsigned n = r->labels(row, l, text);
		if (n > PROM_ROW_LABELS_MAX) {
			o->failed = true;
			return;
		}
		prom_sample_u64(o, name, l, n, get(row));
	}
}

void prom_histogram(struct outbuf *o, const char *name, const struct prom_label *l, unsigned n, const double *le,
		    const uint64_t *count, unsigned nb, double sum)
{
	char bucket[128], total[128], le_text[32];
	if (n >= PROM_LABELS_MAX || snprintf(bucket, sizeof bucket, "%s_bucket", name) >= (int)sizeof bucket) {
		o->failed = true;
		return;
	}
	struct prom_label ll[PROM_LABELS_MAX];
	if (n)
		memcpy(ll, l, n * sizeof *l);
	ll[n].name = "le";
	uint64_t cum = 0;
	for (unsigned i = 0; i <= nb; i++) {
		cum += count[i];
		if (i < nb)
			snprintf(le_text, sizeof le_text, "%.17g", le[i]);
		else
			snprintf(le_text, sizeof le_text, "+Inf");
		ll[n].value = le_text;
		prom_sample_u64(o, bucket, ll, n + 1, cum);
	}
	snprintf(total, sizeof total, "%s_sum", name);
	prom_sample(o, total, l, n, sum);
	snprintf(total, sizeof total, "%s_count", name);
	prom_sample_u64(o, total, l, n, cum);
}
