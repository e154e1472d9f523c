/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The Prometheus text writer behind /metrics (common/promtext.h) and the
 * bounded buffer it writes into (common/outbuf.h): the HELP and TYPE lines,
 * the escapes of HELP text and label values, names a scraper would reject,
 * histograms, special values, and the buffer's ceiling.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/outbuf.h"
#include "common/promtext.h"

#define MAX (1u << 20)

static void family_lines(void **state)
{
	(void)state;
	struct outbuf o;
	outbuf_init(&o, MAX);
	prom_family(&o, "vtl_x_bytes_total", "counter", "Bytes a \\ host\nwrote");
	prom_sample_u64(&o, "vtl_x_bytes_total", NULL, 0, 18446744073709551615ull);
	assert_false(o.failed);
	assert_string_equal(o.data, "# HELP vtl_x_bytes_total Bytes a \\\\ host\\nwrote\n"
				    "# TYPE vtl_x_bytes_total counter\n"
				    "vtl_x_bytes_total 18446744073709551615\n");
	outbuf_free(&o);
}

/* A barcode or an initiator name is a host's text: quotes, backslashes and line feeds are escaped. */
static void label_values_escaped(void **state)
{
	(void)state;
	struct outbuf o;
	outbuf_init(&o, MAX);
	struct prom_label l[] = {{"initiator", "iqn.x:\"a\\b\nc"}, {"drive", "257"}};
	prom_sample(&o, "vtl_s", l, 2, 1.5);
	assert_false(o.failed);
	assert_string_equal(o.data, "vtl_s{initiator=\"iqn.x:\\\"a\\\\b\\nc\",drive=\"257\"} 1.5\n");
	outbuf_free(&o);
}

static void special_values(void **state)
{
	(void)state;
	struct outbuf o;
	outbuf_init(&o, MAX);
	prom_sample(&o, "a", NULL, 0, NAN);
	prom_sample(&o, "b", NULL, 0, INFINITY);
	prom_sample(&o, "c", NULL, 0, -INFINITY);
	prom_sample(&o, "d", NULL, 0, 0.1);
	assert_string_equal(o.data, "a NaN\nb +Inf\nc -Inf\nd 0.10000000000000001\n");
	outbuf_free(&o);
}

/* A name the format refuses writes nothing and marks the buffer failed: the endpoint answers 500, not junk. */
static void bad_names_fail(void **state)
{
	(void)state;
	static const char *const bad[] = {"", "1abc", "vtl-x", "vtl x", "vtl\"x"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		struct outbuf o;
		outbuf_init(&o, MAX);
		prom_family(&o, bad[i], "gauge", "h");
		assert_true(o.failed);
		assert_int_equal(o.len, 0);
		outbuf_init(&o, MAX);
		prom_sample(&o, bad[i], NULL, 0, 1);
		assert_true(o.failed);
		assert_int_equal(o.len, 0);
	}
	/* A colon is allowed in a metric name, not in a label name. */
	assert_true(prom_name_valid("vtl:rule", false));
	assert_false(prom_name_valid("vtl:rule", true));
	struct outbuf o;
	outbuf_init(&o, MAX);
	prom_sample(&o, "ok", &(struct prom_label){"a:b", "v"}, 1, 1);
	assert_true(o.failed);
	outbuf_free(&o);
}

static void histogram_cumulative(void **state)
{
	(void)state;
	struct outbuf o;
	outbuf_init(&o, MAX);
	const double le[] = {0.5, 2};
	const uint64_t n[] = {1, 0, 2}; /* one at or below 0.5 s, none in (0.5, 2], two above */
	prom_histogram(&o, "vtl_t_seconds", &(struct prom_label){"library", "sim"}, 1, le, n, 2, 21.25);
	assert_false(o.failed);
	assert_string_equal(o.data, "vtl_t_seconds_bucket{library=\"sim\",le=\"0.5\"} 1\n"
				    "vtl_t_seconds_bucket{library=\"sim\",le=\"2\"} 1\n"
				    "vtl_t_seconds_bucket{library=\"sim\",le=\"+Inf\"} 3\n"
				    "vtl_t_seconds_sum{library=\"sim\"} 21.25\n"
				    "vtl_t_seconds_count{library=\"sim\"} 3\n");
	outbuf_free(&o);
}

/* The ceiling holds: an append past it is dropped whole and marks the buffer failed. */
static void outbuf_ceiling(void **state)
{
	(void)state;
	struct outbuf o;
	outbuf_init(&o, 10);
	outbuf_printf(&o, "%s", "12345");
	outbuf_write(&o, "67890", 5);
	assert_false(o.failed);
	assert_int_equal(o.len, 10);
	outbuf_write(&o, "x", 1);
	assert_true(o.failed);
	assert_int_equal(o.len, 10);
	size_t len;
	char *d = outbuf_take(&o, &len);
	assert_int_equal(len, 10);
	assert_memory_equal(d, "1234567890", 10);
	free(d);
	assert_int_equal(o.len, 0);
	assert_false(o.failed);
	outbuf_printf(&o, "%0*d", 11, 1); /* longer than the ceiling at once */
	assert_true(o.failed);
	outbuf_free(&o);
}

struct row {
	const char *name;
	unsigned number;
	uint64_t bytes;
};

static unsigned row_labels(const void *p, struct prom_label *l, char *text)
{
	const struct row *r = p;
	snprintf(text, PROM_ROW_TEXT, "%u", r->number);
	l[0] = (struct prom_label){"library", r->name};
	l[1] = (struct prom_label){"drive", text};
	return 2;
}

static unsigned too_many_labels(const void *p, struct prom_label *l, char *text)
{
	(void)p;
	(void)text;
	for (unsigned i = 0; i < PROM_ROW_LABELS_MAX; i++)
		l[i] = (struct prom_label){"x", "y"};
	return PROM_ROW_LABELS_MAX + 1; /* a labels function that miscounts */
}

static uint64_t row_bytes(const void *p) { return ((const struct row *)p)->bytes; }

/* A family over an array: its HELP and TYPE, then a sample per row with the row's labels and value. */
static void rows_family(void **state)
{
	(void)state;
	const struct row rows[] = {{"simlib", 0, 5}, {"remote", 12, 18446744073709551615ull}};
	struct prom_rows r = {.rows = rows, .n = 2, .size = sizeof rows[0], .labels = row_labels};
	struct outbuf o;
	outbuf_init(&o, MAX);
	prom_rows_u64(&o, &r, "vtl_x_drive_bytes_total", "counter", "Bytes", row_bytes);
	assert_false(o.failed);
	assert_string_equal(o.data, "# HELP vtl_x_drive_bytes_total Bytes\n"
				    "# TYPE vtl_x_drive_bytes_total counter\n"
				    "vtl_x_drive_bytes_total{library=\"simlib\",drive=\"0\"} 5\n"
				    "vtl_x_drive_bytes_total{library=\"remote\",drive=\"12\"} 18446744073709551615\n");
	outbuf_free(&o);
	/* No rows: the family's lines alone, as a scraper expects of a daemon with no drives. */
	r.n = 0;
	outbuf_init(&o, MAX);
	prom_rows_u64(&o, &r, "vtl_x_drive_bytes_total", "counter", "Bytes", row_bytes);
	assert_string_equal(o.data, "# HELP vtl_x_drive_bytes_total Bytes\n# TYPE vtl_x_drive_bytes_total counter\n");
	outbuf_free(&o);
	r = (struct prom_rows){.rows = rows, .n = 1, .size = sizeof rows[0], .labels = too_many_labels};
	outbuf_init(&o, MAX);
	prom_rows_u64(&o, &r, "vtl_x_drive_bytes_total", "counter", "Bytes", row_bytes);
	assert_true(o.failed);
	outbuf_free(&o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(family_lines),       cmocka_unit_test(label_values_escaped),
		cmocka_unit_test(special_values),     cmocka_unit_test(bad_names_fail),
		cmocka_unit_test(histogram_cumulative), cmocka_unit_test(outbuf_ceiling),
		cmocka_unit_test(rows_family),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
