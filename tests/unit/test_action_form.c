/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The web console's operator actions (common/action_form.h): the form a
 * browser posts becomes the control request vtlctl sends for the same
 * action, or is refused with words that name what to fix.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "common/action_form.h"
#include "common/vtl_error.h"

static char line[256], err[512];
static enum ctlproto_daemon daemon_of;

static int parse(const char *body)
{
	line[0] = err[0] = 0;
	return action_form_parse(body, strlen(body), line, sizeof line, &daemon_of, err, sizeof err);
}

/* body becomes want, for the daemon d. */
static void becomes(const char *body, const char *want, enum ctlproto_daemon d)
{
	if (parse(body) != VTL_OK)
		fail_msg("%s: %s", body, err);
	assert_string_equal(line, want);
	assert_int_equal(daemon_of, d);
}

/* body is refused, with words that hold want. */
static void refused(const char *body, const char *want)
{
	assert_int_equal(parse(body), VTL_E_INVAL);
	if (!strstr(err, want))
		fail_msg("%s: refused with '%s', not '%s'", body, err, want);
}

static void every_action_becomes_its_request(void **state)
{
	(void)state;
	becomes("verb=move&from=C00001L8&to=1032", "move C00001L8 1032", CTLPROTO_VTLD);
	becomes("to=1032&verb=move&from=1025", "move 1025 1032", CTLPROTO_VTLD); /* in any order */
	becomes("verb=load&what=C00001L8&drive=257", "load C00001L8 257", CTLPROTO_VTLD);
	becomes("verb=unload&drive=257", "unload 257", CTLPROTO_VTLD);
	becomes("verb=unload&drive=257&slot=1026", "unload 257 1026", CTLPROTO_VTLD);
	becomes("verb=import&barcode=NEW001L8", "import NEW001L8", CTLPROTO_VTLD);
	becomes("verb=import&barcode=NEW001L8&ie=769", "import NEW001L8 769", CTLPROTO_VTLD);
	becomes("verb=export&ie=769", "export 769", CTLPROTO_VTLD);
	becomes("verb=migrate&barcode=C00001L8", "migrate C00001L8", CTLPROTO_MIGRATOR);
	becomes("verb=migrate&barcode=C00001L8&rate=8&drive=1&native=1", "migrate C00001L8 drive 1 rate 8 native 1",
		CTLPROTO_MIGRATOR);
	becomes("verb=recall&barcode=C00001L8", "recall C00001L8", CTLPROTO_MIGRATOR);
	/* library: vtlctl's --library, a physical library's name of up to 64 characters. */
	becomes("verb=migrate&barcode=C00001L8&library=vault", "migrate C00001L8 library vault", CTLPROTO_MIGRATOR);
	becomes("verb=recall&library=site-2.a_b&barcode=C00001L8", "recall C00001L8 library site-2.a_b", CTLPROTO_MIGRATOR);
	becomes("verb=verify&barcode=C00001L8", "verify C00001L8", CTLPROTO_MIGRATOR);
	becomes("verb=verify&barcode=C00001L8&library=vault", "verify C00001L8 library vault", CTLPROTO_MIGRATOR);
	char name64[160], want64[160];
	snprintf(name64, sizeof name64, "verb=migrate&barcode=C00001L8&library=%064d", 7);
	snprintf(want64, sizeof want64, "migrate C00001L8 library %064d", 7);
	becomes(name64, want64, CTLPROTO_MIGRATOR);
	becomes("verb=release&barcode=C00001L8&force=1", "release C00001L8 force", CTLPROTO_MIGRATOR);
	/* Form encoding: percent escapes and empty pairs, as browsers send them. */
	becomes("verb=move&from=C%30%30001L8&&to=1032&", "move C00001L8 1032", CTLPROTO_VTLD);
}

static void wrong_forms_refused(void **state)
{
	(void)state;
	refused("", "give the field verb: one of move, load, unload, import, export, migrate, verify, recall, release");
	refused("from=1025&to=1032", "give the field verb");
	refused("verb=reload", "verb reload is not an action");
	refused("verb=status", "verb status is not an action");
	refused("verb=wake&barcode=C00001L8", "verb wake is not an action"); /* a hint between the daemons */
	refused("verb=move&from=C00001L8&to=1032&speed=9", "unknown field speed: move takes verb, from, to");
	refused("verb=move&from=C00001L8&from=C00002L8&to=1032", "field from is given twice");
	refused("verb=move&to=1032", "give the field from (usage: move FROM TO)");
	refused("verb=move&from=&to=1032", "field from: give one word of printable characters");
	refused("verb=move&from=C0+0001&to=1032", "field from: give one word"); /* '+' is a space: two words */
	refused("verb=move&from=C%0A1&to=1032", "field from: give one word");  /* no new request line */
	refused("verb=move&from=C%G1&to=1032", "field from: give one word");   /* not a percent escape */
	refused("verb=move&from=C00001L8%00x&to=1032", "field from: give one word"); /* a NUL would cut it short */
	assert_int_equal(action_form_parse("verb=move\0&from=C00001L8&to=1032", 32, line, sizeof line, &daemon_of, err,
					   sizeof err), VTL_E_INVAL);
	refused("verb=move&from=C00001L8&to=%", "field to: give one word");
	refused("verb=unload&slot=1026", "give the field drive");
	refused("verb=import&ie=769", "give the field barcode");
	refused("verb=release&barcode=C00001L8&force=yes", "field force: give 1");
	/* The values' rules are the control protocol's own, with its words. */
	refused("verb=move&from=C00001L8&to=70000", "usage: move FROM TO");
	refused("verb=migrate&barcode=C00001L8&rate=x", "usage: migrate");
	char many[512] = "verb=move";
	for (int i = 0; i < ACTION_FORM_FIELDS_MAX; i++)
		snprintf(many + strlen(many), sizeof many - strlen(many), "&f%d=1", i);
	refused(many, "more than 8 fields");
	char longv[128];
	snprintf(longv, sizeof longv, "verb=import&barcode=%065d", 1);
	refused(longv, "field barcode: give one word of printable characters, at most 64");
	snprintf(longv, sizeof longv, "verb=import&barcode=%040d", 1); /* a word, but no barcode: ctlproto says so */
	refused(longv, "usage: import");
	snprintf(longv, sizeof longv, "verb=migrate&barcode=C00001L8&library=%065d", 1);
	refused(longv, "field library: give one word of printable characters, at most 64");
	refused("verb=verify&barcode=C00001L8&library=a%2Fb", "library 'a/b': give a name of 1 to 64");
	refused("verb=verify&barcode=C00001L8&force=1", "unknown field force: verify takes verb, barcode, drive, rate, native, library");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_action_becomes_its_request),
		cmocka_unit_test(wrong_forms_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
