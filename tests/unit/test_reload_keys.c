/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Every key the configuration parser knows against each daemon's reload
 * classification (config/reload.c): a key that a daemon neither reloads, nor
 * needs a restart for, nor leaves to the other daemon fails here, as does a
 * key two of its lists name and a rule that names no key (a typo or a key
 * since renamed). docs/operations.md's reload table is made from the same
 * classification and must be the one printed here, so the operator reads
 * what the daemons do.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tests/unit/testlib.h"

#include "common/vtl_error.h"
#include "config/config.h"
#include "config/reload.h"

#define MAX_KEYS 512      /* well above the parser's table (about 140 keys) */
#define TABLE_MAX 16384   /* the generated table's text */
#define TABLE_BEGIN "<!-- reload-table: made by tests/unit/test_reload_keys.c from config/reload.c -->\n"
#define TABLE_END "<!-- end of reload-table -->"

struct key {
	const char *section, *name;
};

static struct key keys[MAX_KEYS];
static size_t nkeys;

static void collect(void *arg, const char *section, const char *key)
{
	(void)arg;
	assert_true(nkeys < MAX_KEYS);
	keys[nkeys++] = (struct key){section, key};
}

static const struct vtl_reload_keys *const daemons[] = {&vtl_reload_keys_vtld, &vtl_reload_keys_migrator};
#define NDAEMONS (sizeof daemons / sizeof daemons[0])

static int load_keys(void **state)
{
	(void)state;
	nkeys = 0;
	vtl_config_keys(collect, NULL);
	return nkeys ? 0 : -1;
}

static const char *class_name(enum vtl_reload_class c)
{
	switch (c) {
	case VTL_RELOAD_APPLY:
		return "reloads";
	case VTL_RELOAD_RESTART:
		return "needs a restart";
	case VTL_RELOAD_IGNORE:
		return "not read";
	case VTL_RELOAD_AMBIGUOUS:
		return "AMBIGUOUS";
	default:
		return "UNCLASSIFIED";
	}
}

/* Each key is in exactly one of a daemon's three lists, for both daemons. */
static void every_key_classified(void **state)
{
	(void)state;
	unsigned bad = 0;
	assert_true(nkeys > 100); /* the table was walked, not an empty list */
	for (size_t d = 0; d < NDAEMONS; d++)
		for (size_t i = 0; i < nkeys; i++) {
			enum vtl_reload_class c = vtl_reload_class_of(daemons[d], keys[i].section, keys[i].name);
			if (c == VTL_RELOAD_UNCLASSIFIED || c == VTL_RELOAD_AMBIGUOUS) {
				print_message("%s: [%s] %s: %s\n", daemons[d]->daemon, keys[i].section, keys[i].name,
					      class_name(c));
				bad++;
			}
		}
	assert_int_equal(bad, 0);
}

/* Each rule of each list names at least one key the parser knows. */
static void every_rule_names_a_key(void **state)
{
	(void)state;
	unsigned bad = 0;
	for (size_t d = 0; d < NDAEMONS; d++) {
		const char *const *lists[] = {daemons[d]->reloads, daemons[d]->restarts, daemons[d]->ignores};
		for (size_t l = 0; l < 3; l++)
			for (const char *const *r = lists[l]; *r; r++) {
				const char *one[] = {*r, NULL};
				bool named = false;
				for (size_t i = 0; i < nkeys && !named; i++)
					named = vtl_config_rule_matches(one, keys[i].section, keys[i].name);
				if (!named) {
					print_message("%s: rule \"%s\" names no key\n", daemons[d]->daemon, *r);
					bad++;
				}
			}
	}
	assert_int_equal(bad, 0);
}

/* The classification of a rule the plan takes: an unknown key would need a restart, known ones as listed. */
static void class_of_rules(void **state)
{
	(void)state;
	assert_int_equal(vtl_reload_class_of(&vtl_reload_keys_vtld, "iscsi", "chap_secret"), VTL_RELOAD_APPLY);
	assert_int_equal(vtl_reload_class_of(&vtl_reload_keys_vtld, "library", "slots"), VTL_RELOAD_RESTART);
	assert_int_equal(vtl_reload_class_of(&vtl_reload_keys_vtld, "migrator", "rate"), VTL_RELOAD_IGNORE);
	assert_int_equal(vtl_reload_class_of(&vtl_reload_keys_migrator, "migrator", "rate"), VTL_RELOAD_APPLY);
	assert_int_equal(vtl_reload_class_of(&vtl_reload_keys_migrator, "daemon", "syslog"), VTL_RELOAD_RESTART);
	assert_int_equal(vtl_reload_class_of(&vtl_reload_keys_migrator, "initiator", "(section)"), VTL_RELOAD_IGNORE);
	assert_int_equal(vtl_reload_class_of(&vtl_reload_keys_vtld, "library", "no_such_key"), VTL_RELOAD_RESTART);
	assert_int_equal(vtl_reload_class_of(&vtl_reload_keys_vtld, "nosection", "x"), VTL_RELOAD_UNCLASSIFIED);
}

/* How the document writes a section's header. */
static const char *section_title(const char *s)
{
	if (!strcmp(s, "drive"))
		return "[drive N]";
	if (!strcmp(s, "initiator"))
		return "[initiator NAME]";
	if (!strcmp(s, "physical"))
		return "[physical NAME]";
	static char t[64];
	snprintf(t, sizeof t, "[%s]", s);
	return t;
}

/* Whether the section comes and goes whole at a reload ("(section)" is one of its keys). */
static bool sec_has_section(const char *sec)
{
	for (size_t i = 0; i < nkeys; i++)
		if (!strcmp(keys[i].section, sec) && !strcmp(keys[i].name, "(section)"))
			return true;
	return false;
}

static void add(char *buf, size_t *at, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int w = vsnprintf(buf + *at, TABLE_MAX - *at, fmt, ap);
	va_end(ap);
	assert_true(w >= 0 && (size_t)w < TABLE_MAX - *at);
	*at += (size_t)w;
}

/*
 * The table: per section, one row for each pair of classes (vtld's,
 * vtl-migrator's) its keys have, in the key table's order; "every key" when
 * the whole section has one pair.
 */
static void make_table(char *buf)
{
	size_t at = 0;
	add(buf, &at, "| section | keys | vtld | vtl-migrator |\n|---|---|---|---|\n");
	bool done[MAX_KEYS] = {false};
	for (size_t i = 0; i < nkeys; i++) {
		if (done[i])
			continue;
		const char *sec = keys[i].section;
		bool first_of_section = true;
		for (size_t j = 0; j < i; j++)
			if (!strcmp(keys[j].section, sec))
				first_of_section = false;
		enum vtl_reload_class cv = vtl_reload_class_of(&vtl_reload_keys_vtld, sec, keys[i].name);
		enum vtl_reload_class cm = vtl_reload_class_of(&vtl_reload_keys_migrator, sec, keys[i].name);
		/* Whether every key of the section has this pair. */
		bool whole = first_of_section;
		for (size_t j = i; j < nkeys && whole; j++)
			if (!strcmp(keys[j].section, sec))
				whole = vtl_reload_class_of(&vtl_reload_keys_vtld, sec, keys[j].name) == cv &&
					vtl_reload_class_of(&vtl_reload_keys_migrator, sec, keys[j].name) == cm;
		add(buf, &at, "| `%s` | ", section_title(sec));
		bool sep = false;
		for (size_t j = i; j < nkeys; j++) {
			if (strcmp(keys[j].section, sec) != 0 ||
			    vtl_reload_class_of(&vtl_reload_keys_vtld, sec, keys[j].name) != cv ||
			    vtl_reload_class_of(&vtl_reload_keys_migrator, sec, keys[j].name) != cm)
				continue;
			done[j] = true;
			if (whole)
				continue;
			if (!strcmp(keys[j].name, "(section)"))
				add(buf, &at, "%sthe section added or removed", sep ? ", " : "");
			else
				add(buf, &at, "%s`%s`", sep ? ", " : "", keys[j].name);
			sep = true;
		}
		if (whole)
			add(buf, &at, "every key%s", sec_has_section(sec) ? ", and the section added or removed" : "");
		add(buf, &at, " | %s | %s |\n", class_name(cv), class_name(cm));
	}
}

/* docs/operations.md holds, between its markers, the table made here. */
static void doc_table_current(void **state)
{
	(void)state;
	char *doc = tl_doc_read("operations.md");
	assert_non_null(doc);
	static char want[TABLE_MAX];
	make_table(want);
	const char *begin = strstr(doc, TABLE_BEGIN);
	const char *end = begin ? strstr(begin, TABLE_END) : NULL;
	size_t len = end ? (size_t)(end - begin) - strlen(TABLE_BEGIN) : 0;
	bool same = end && len == strlen(want) && !memcmp(begin + strlen(TABLE_BEGIN), want, len);
	if (!same) /* whole: cmocka's print_message cuts long messages */
		fprintf(stderr, "docs/operations.md, \"Reload\": put this table between\n%sand %s:\n%s", TABLE_BEGIN,
			TABLE_END, want);
	free(doc);
	assert_true(same);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_key_classified),
		cmocka_unit_test(every_rule_names_a_key),
		cmocka_unit_test(class_of_rules),
		cmocka_unit_test(doc_table_current),
	};
	return cmocka_run_group_tests(tests, load_keys, NULL);
}
