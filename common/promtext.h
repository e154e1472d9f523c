/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The Prometheus text exposition format, version 0.0.4 (prometheus.io,
 * "Exposition formats"): a family's "# HELP" and "# TYPE" lines, then its
 * samples, "name{label="value",...} value". HELP text escapes backslash and
 * line feed, label values escape backslash, double quote and line feed, as
 * the format says; a metric or label name that is not
 * [a-zA-Z_:][a-zA-Z0-9_:]* (labels: no colon) is a programming error that
 * marks the buffer failed rather than write a line a scraper would reject.
 */
#ifndef VTL_COMMON_PROMTEXT_H
#define VTL_COMMON_PROMTEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/outbuf.h"

/* The content type of the format (what /metrics answers with). */
#define PROM_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

/* A sample's labels: n pairs of a name and a value (the value any bytes; it is escaped). */
struct prom_label {
	const char *name, *value;
};

/* Writes the "# HELP name help" and "# TYPE name type" lines (type: counter, gauge, histogram, untyped). */
void prom_family(struct outbuf *o, const char *name, const char *type, const char *help);

/* Writes one sample of name with its n labels (n 0: none) and a value (NaN and infinities as the format has them). */
void prom_sample(struct outbuf *o, const char *name, const struct prom_label *l, unsigned n, double value);

/* The same with an integer value, written exactly. */
void prom_sample_u64(struct outbuf *o, const char *name, const struct prom_label *l, unsigned n, uint64_t value);

#define PROM_ROW_LABELS_MAX 7   /* labels a row of prom_rows gives */
#define PROM_ROW_TEXT 32         /* the scratch text a row's labels may format a number into */

/*
 * A family with one sample per row of an array (a daemon's drives): n rows
 * of size bytes each from rows, and labels, which fills l with a row's
 * labels (at most PROM_ROW_LABELS_MAX; values may point into the row or into
 * text, PROM_ROW_TEXT bytes) and returns how many.
 */
struct prom_rows {
	const void *rows;
	size_t n, size;
	unsigned (*labels)(const void *row, struct prom_label *l, char *text);
};

/*
 * Writes family name (prom_family) and a sample of each row of r with the
 * row's labels and the integer get(row); a row with more labels than
 * PROM_ROW_LABELS_MAX marks the buffer failed.
 */
void prom_rows_u64(struct outbuf *o, const struct prom_rows *r, const char *name, const char *type, const char *help,
		   uint64_t (*get)(const void *row));

/*
 * The samples of a histogram family name (prom_family first, type
 * histogram): name_bucket with each upper bound le[i] (ascending) and
 * +Inf, each cumulative, from count[i] (observations in bucket i alone,
 * nb + 1 of them, the last above every bound), then name_sum and name_count.
 */
void prom_histogram(struct outbuf *o, const char *name, const struct prom_label *l, unsigned n, const double *le,
		    const uint64_t *count, unsigned nb, double sum);

/* Whether s is a valid metric name (labels: colon refused too). */
bool prom_name_valid(const char *s, bool label);

#endif
