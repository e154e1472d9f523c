/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The control protocol (common/ctlproto.h), as the daemons see the lines a
 * client sends and as vtlctl builds them: every verb's values come back from
 * the line the formatter writes; malformed lines are refused with the message
 * a client reads in the answer's "error"; and docs/operations.md lists the
 * table the code has, verb for verb.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tests/unit/testlib.h"

#include "common/ctlproto.h"
#include "common/ctlsock.h"
#include "common/vtl_error.h"

/* ------------------------------------------------------------ helpers */

static void same_request(const struct ctlproto_request *a, const struct ctlproto_request *b)
{
	assert_int_equal(a->verb, b->verb);
	assert_int_equal(a->item.is_address, b->item.is_address);
	assert_int_equal(a->item.address, b->item.address);
	assert_string_equal(a->item.barcode, b->item.barcode);
	assert_string_equal(a->barcode, b->barcode);
	assert_int_equal(a->elements, b->elements);
	for (unsigned i = 0; i < a->elements; i++)
		assert_int_equal(a->element[i], b->element[i]);
	assert_int_equal(a->job, b->job);
	assert_int_equal(a->flags, b->flags);
	assert_string_equal(a->library, b->library);
	for (unsigned o = 0; o < CTLPROTO_OPTIONS; o++) {
		assert_int_equal(a->given[o], b->given[o]);
		if (a->given[o])
			assert_int_equal(a->option[o], b->option[o]);
	}
}

/* Formats r, checks the line is want, parses it back for r's daemon and checks the same values come back. */
static void round_trip(const struct ctlproto_request *r, const char *want)
{
	char line[CTLSOCK_REQUEST_MAX], err[512] = "";
	int rc = ctlproto_format(r, line, sizeof line, err, sizeof err);
	if (rc != VTL_OK)
		fail_msg("formatting %s: %s", ctlproto_verb(r->verb)->word, err);
	assert_string_equal(line, want);
	struct ctlproto_request back;
	rc = ctlproto_parse(line, strlen(line), ctlproto_verb(r->verb)->daemon, &back, err, sizeof err);
	if (rc != VTL_OK)
		fail_msg("parsing '%s': %s", line, err);
	same_request(r, &back);
}

/* Parses line (len bytes) for daemon d and checks it is refused with exactly the message want. */
static void refused_n(enum ctlproto_daemon d, const char *line, size_t len, const char *want)
{
	struct ctlproto_request r;
	char err[512] = "";
	assert_int_equal(ctlproto_parse(line, len, d, &r, err, sizeof err), VTL_E_INVAL);
	assert_string_equal(err, want);
}

static void refused(enum ctlproto_daemon d, const char *line, const char *want)
{
	refused_n(d, line, strlen(line), want);
}

/* ------------------------------------------------------------ round trips */

static void every_vtld_verb_round_trips(void **state)
{
	(void)state;
	round_trip(&(struct ctlproto_request){.verb = CTLPROTO_STATUS}, "status");
	struct ctlproto_request move = {.verb = CTLPROTO_MOVE, .item = {.is_address = true, .address = 1025},
					.element = {257}, .elements = 1};
	round_trip(&move, "move 1025 257");
	struct ctlproto_request by_barcode = {.verb = CTLPROTO_MOVE, .element = {0}, .elements = 1};
	snprintf(by_barcode.item.barcode, sizeof by_barcode.item.barcode, "000123L8"); /* digits first: a barcode */
	round_trip(&by_barcode, "move 000123L8 0");
	struct ctlproto_request load = {.verb = CTLPROTO_LOAD, .element = {CTLPROTO_ELEMENT_MAX}, .elements = 1};
	snprintf(load.item.barcode, sizeof load.item.barcode, "A00001L8");
	round_trip(&load, "load A00001L8 65534");
	round_trip(&(struct ctlproto_request){.verb = CTLPROTO_LOAD, .item = {.is_address = true, .address = 0},
					      .element = {256}, .elements = 1},
		   "load 0 256");
	round_trip(&(struct ctlproto_request){.verb = CTLPROTO_UNLOAD, .element = {256}, .elements = 1}, "unload 256");
	round_trip(&(struct ctlproto_request){.verb = CTLPROTO_UNLOAD, .element = {256, 1030}, .elements = 2},
		   "unload 256 1030");
	struct ctlproto_request import = {.verb = CTLPROTO_IMPORT};
	snprintf(import.barcode, sizeof import.barcode, "ABCDEFGHIJKLMNOPQRSTUVWXYZ012345"); /* 32: the longest */
	round_trip(&import, "import ABCDEFGHIJKLMNOPQRSTUVWXYZ012345");
	import.element[0] = 769;
	import.elements = 1;
	round_trip(&import, "import ABCDEFGHIJKLMNOPQRSTUVWXYZ012345 769");
	round_trip(&(struct ctlproto_request){.verb = CTLPROTO_EXPORT, .element = {770}, .elements = 1}, "export 770");
}

static void every_migrator_verb_round_trips(void **state)
{
	(void)state;
	static const struct {
		enum ctlproto_verb verb;
		const char *word;
	} jobs[] = {{CTLPROTO_MIGRATE, "migrate"}, {CTLPROTO_VERIFY, "verify"}, {CTLPROTO_RECALL, "recall"}};
	for (size_t i = 0; i < sizeof jobs / sizeof jobs[0]; i++) {
		char want[128];
		struct ctlproto_request r = {.verb = jobs[i].verb};
		snprintf(r.barcode, sizeof r.barcode, "I00001L8");
		snprintf(want, sizeof want, "%s I00001L8", jobs[i].word);
		round_trip(&r, want);
		r.given[CTLPROTO_OPT_DRIVE] = r.given[CTLPROTO_OPT_RATE] = r.given[CTLPROTO_OPT_NATIVE] = true;
		r.option[CTLPROTO_OPT_DRIVE] = CTLPROTO_DRIVE_MAX;
		r.option[CTLPROTO_OPT_RATE] = CTLPROTO_RATE_MAX;
		r.option[CTLPROTO_OPT_NATIVE] = 1;
		snprintf(want, sizeof want, "%s I00001L8 drive 15 rate 100000 native 1", jobs[i].word);
		round_trip(&r, want);
		r.given[CTLPROTO_OPT_DRIVE] = false;
		r.option[CTLPROTO_OPT_RATE] = 1;
		r.option[CTLPROTO_OPT_NATIVE] = 0;
		snprintf(want, sizeof want, "%s I00001L8 rate 1 native 0", jobs[i].word);
		round_trip(&r, want);
		snprintf(r.library, sizeof r.library, "vault");
		snprintf(want, sizeof want, "%s I00001L8 rate 1 native 0 library vault", jobs[i].word);
		round_trip(&r, want);
	}
	struct ctlproto_request lib = {.verb = CTLPROTO_PHYSICAL};
	snprintf(lib.library, sizeof lib.library, "site-2.a_b");
	round_trip(&lib, "physical library site-2.a_b");
	struct ctlproto_request hint = {.verb = CTLPROTO_WAKE};
	snprintf(hint.barcode, sizeof hint.barcode, "M00001L8");
	round_trip(&hint, "wake M00001L8");
	hint.verb = CTLPROTO_YIELD;
	round_trip(&hint, "yield M00001L8");
	round_trip(&(struct ctlproto_request){.verb = CTLPROTO_JOBS}, "jobs");
	round_trip(&(struct ctlproto_request){.verb = CTLPROTO_CANCEL, .job = 1}, "cancel 1");
	round_trip(&(struct ctlproto_request){.verb = CTLPROTO_CANCEL, .job = INT64_MAX}, "cancel 9223372036854775807");
	round_trip(&(struct ctlproto_request){.verb = CTLPROTO_SCAN}, "scan");
	round_trip(&(struct ctlproto_request){.verb = CTLPROTO_PHYSICAL}, "physical");
	round_trip(&(struct ctlproto_request){.verb = CTLPROTO_DRIVES}, "drives");
	lib.verb = CTLPROTO_DRIVES;
	round_trip(&lib, "drives library site-2.a_b");
	round_trip(&(struct ctlproto_request){.verb = CTLPROTO_POLICY}, "policy");
	struct ctlproto_request release = {.verb = CTLPROTO_RELEASE};
	snprintf(release.barcode, sizeof release.barcode, "P00001L8");
	round_trip(&release, "release P00001L8");
	release.flags = CTLPROTO_FLAG_FORCE;
	round_trip(&release, "release P00001L8 force");
	struct ctlproto_request ingest = {.verb = CTLPROTO_INGEST};
	round_trip(&ingest, "ingest");
	ingest.given[CTLPROTO_OPT_RATE] = true;
	ingest.option[CTLPROTO_OPT_RATE] = 0; /* unlike a job's rate, 0 is a value: the hosts stopped */
	round_trip(&ingest, "ingest rate 0");
	ingest.option[CTLPROTO_OPT_RATE] = 412;
	round_trip(&ingest, "ingest rate 412");
	round_trip(&(struct ctlproto_request){.verb = CTLPROTO_RELOAD}, "reload");
	round_trip(&(struct ctlproto_request){.verb = CTLPROTO_MIGRATOR_RELOAD}, "reload");
}

/* reload is a request for both daemons: each parses it as its own verb. */
static void reload_goes_to_either_daemon(void **state)
{
	(void)state;
	struct ctlproto_request r;
	char err[512];
	assert_int_equal(ctlproto_parse("reload", 6, CTLPROTO_VTLD, &r, err, sizeof err), VTL_OK);
	assert_int_equal(r.verb, CTLPROTO_RELOAD);
	assert_int_equal(ctlproto_parse("reload", 6, CTLPROTO_MIGRATOR, &r, err, sizeof err), VTL_OK);
	assert_int_equal(r.verb, CTLPROTO_MIGRATOR_RELOAD);
	assert_int_equal(ctlproto_parse("reload now", 10, CTLPROTO_MIGRATOR, &r, err, sizeof err), VTL_E_INVAL);
}

/* Every verb of the table is one of the two above: a new verb without a round trip fails here. */
static void the_round_trips_cover_the_table(void **state)
{
	(void)state;
	static const char *const tested[] = {"status", "move", "load", "unload", "import", "export", "reload",
					     "migrate", "verify", "recall", "wake", "yield", "jobs", "cancel", "scan",
					     "physical", "drives", "policy", "release", "ingest", "reload"};
	assert_int_equal(sizeof tested / sizeof tested[0], CTLPROTO_VERBS);
	for (unsigned v = 0; v < CTLPROTO_VERBS; v++)
		assert_string_equal(ctlproto_verb(v)->word, tested[v]);
}

static void spacing_and_order_of_options_are_free(void **state)
{
	(void)state;
	struct ctlproto_request r;
	char err[512];
	const char *line = "\tmigrate  I00001L8 native 1\t rate 40 drive 2 \r";
	assert_int_equal(ctlproto_parse(line, strlen(line), CTLPROTO_MIGRATOR, &r, err, sizeof err), VTL_OK);
	assert_int_equal(r.verb, CTLPROTO_MIGRATE);
	assert_string_equal(r.barcode, "I00001L8");
	assert_true(r.given[CTLPROTO_OPT_DRIVE] && r.given[CTLPROTO_OPT_RATE] && r.given[CTLPROTO_OPT_NATIVE]);
	assert_int_equal(r.option[CTLPROTO_OPT_DRIVE], 2);
	assert_int_equal(r.option[CTLPROTO_OPT_RATE], 40);
	assert_int_equal(r.option[CTLPROTO_OPT_NATIVE], 1);
	/* A required argument takes the next word, even one that names an option: cartridge "drive" can be copied. */
	assert_int_equal(ctlproto_parse("migrate drive drive 1", 21, CTLPROTO_MIGRATOR, &r, err, sizeof err), VTL_OK);
	assert_string_equal(r.barcode, "drive");
	assert_true(r.given[CTLPROTO_OPT_DRIVE]);
	assert_int_equal(r.option[CTLPROTO_OPT_DRIVE], 1);
	struct ctlproto_request force = {.verb = CTLPROTO_RELEASE};
	snprintf(force.barcode, sizeof force.barcode, "force");
	round_trip(&force, "release force");
	/* "99999" is above every element address: a barcode, as vtld's lookup has always read it. */
	assert_int_equal(ctlproto_parse("move 99999 1", 12, CTLPROTO_VTLD, &r, err, sizeof err), VTL_OK);
	assert_false(r.item.is_address);
	assert_string_equal(r.item.barcode, "99999");
}

/* ------------------------------------------------------------ refusals */

static void unknown_empty_and_other_daemons_verbs(void **state)
{
	(void)state;
	refused(CTLPROTO_VTLD, "", "empty request; vtld answers status, move, load, unload, import, export, reload");
	refused(CTLPROTO_VTLD, "   ", "empty request; vtld answers status, move, load, unload, import, export, reload");
	refused(CTLPROTO_VTLD, "stat",
		"unknown request 'stat'; vtld answers status, move, load, unload, import, export, reload");
	refused(CTLPROTO_MIGRATOR, "Jobs",
		"unknown request 'Jobs'; vtl-migrator answers migrate, verify, recall, wake, yield, jobs, cancel, scan, "
		"physical, drives, policy, release, ingest, reload");
	refused(CTLPROTO_VTLD, "migrate A00001L8", "'migrate' is a request for vtl-migrator, not vtld");
	refused(CTLPROTO_MIGRATOR, "status", "'status' is a request for vtld, not vtl-migrator");
}

static void missing_and_extra_words(void **state)
{
	(void)state;
	refused(CTLPROTO_VTLD, "move 1025", "move: missing TO; usage: move FROM TO");
	refused(CTLPROTO_VTLD, "move 1025 257 258", "move: '258' is not an argument of move; usage: move FROM TO");
	refused(CTLPROTO_VTLD, "export", "export: missing IE; usage: export IE");
	refused(CTLPROTO_VTLD, "status now", "status: 'now': status takes no arguments; usage: status");
	refused(CTLPROTO_MIGRATOR, "release", "release: missing BARCODE; usage: release BARCODE [force]");
	refused(CTLPROTO_MIGRATOR, "release P00001L8 force force",
		"release: force is given twice; usage: release BARCODE [force]");
	refused(CTLPROTO_MIGRATOR, "release P00001L8 now",
		"release: 'now' is not an argument of release; usage: release BARCODE [force]");
	refused(CTLPROTO_MIGRATOR, "migrate I00001L8 drive 1 rate 2 native 1 library a drive",
		"migrate: too many words; usage: migrate BARCODE [drive N] [rate MB/S] [native 0|1] [library NAME]");
	refused(CTLPROTO_MIGRATOR, "migrate I00001L8 drive",
		"migrate: drive needs a value (N); usage: migrate BARCODE [drive N] [rate MB/S] [native 0|1] [library NAME]");
	refused(CTLPROTO_MIGRATOR, "migrate I00001L8 drive 1 drive 2",
		"migrate: drive is given twice; usage: migrate BARCODE [drive N] [rate MB/S] [native 0|1] [library NAME]");
	refused(CTLPROTO_MIGRATOR, "wake", "wake: missing BARCODE; usage: wake BARCODE");
	refused(CTLPROTO_MIGRATOR, "cancel", "cancel: missing JOB; usage: cancel JOB");
}

static void bad_barcodes_and_addresses(void **state)
{
	(void)state;
	refused(CTLPROTO_MIGRATOR, "migrate .hidden",
		"migrate: BARCODE '.hidden' is not a barcode (1 to 32 printable characters, no '/' or '\\', not starting "
		"with '.'); usage: migrate BARCODE [drive N] [rate MB/S] [native 0|1] [library NAME]");
	refused(CTLPROTO_VTLD, "import ../etc",
		"import: BARCODE '../etc' is not a barcode (1 to 32 printable characters, no '/' or '\\', not starting "
		"with '.'); usage: import BARCODE [IE]");
	refused(CTLPROTO_VTLD, "import ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456",
		"import: BARCODE 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456' is not a barcode (1 to 32 printable characters, no "
		"'/' or '\\', not starting with '.'); usage: import BARCODE [IE]");
	refused(CTLPROTO_VTLD, "import ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ012",
		"import: word 2 ('ABCDEFGHIJKLMNOPQRSTUVWXYZ012345...') is longer than 64 bytes; usage: import BARCODE "
		"[IE]");
	refused(CTLPROTO_MIGRATOR, "physical library a/b",
		"physical: library 'a/b': give a name of 1 to 64 letters, digits, '.', '_' or '-'; usage: physical "
		"[library NAME]");
	refused(CTLPROTO_MIGRATOR, "physical library", "physical: library needs a value (NAME); usage: physical "
		"[library NAME]");
	refused(CTLPROTO_MIGRATOR, "recall I00001L8 library a library b",
		"recall: library is given twice; usage: recall BARCODE [drive N] [rate MB/S] [native 0|1] [library NAME]");
	refused(CTLPROTO_VTLD, "move 1025 x", "move: TO 'x' is not an element address (0 to 65534); usage: move FROM TO");
	refused(CTLPROTO_VTLD, "move 1025 65535",
		"move: TO '65535' is not an element address (0 to 65534); usage: move FROM TO");
	refused(CTLPROTO_VTLD, "unload -1", "unload: DRIVE '-1' is not an element address (0 to 65534); usage: unload "
					    "DRIVE [SLOT]");
	refused(CTLPROTO_VTLD, "unload +256", "unload: DRIVE '+256' is not an element address (0 to 65534); usage: "
					      "unload DRIVE [SLOT]");
	refused(CTLPROTO_VTLD, "move a/b 257",
		"move: FROM 'a/b' is neither an element address (0 to 65534) nor a barcode; usage: move FROM TO");
}

static void negative_and_overflowing_numbers(void **state)
{
	(void)state;
	refused(CTLPROTO_MIGRATOR, "cancel 0", "cancel: JOB '0' is not a job id (1 to 9223372036854775807); usage: "
					       "cancel JOB");
	refused(CTLPROTO_MIGRATOR, "cancel -5", "cancel: JOB '-5' is not a job id (1 to 9223372036854775807); usage: "
						"cancel JOB");
	refused(CTLPROTO_MIGRATOR, "cancel 9223372036854775808",
		"cancel: JOB '9223372036854775808' is not a job id (1 to 9223372036854775807); usage: cancel JOB");
	refused(CTLPROTO_MIGRATOR, "cancel 18446744073709551616",
		"cancel: JOB '18446744073709551616' is not a job id (1 to 9223372036854775807); usage: cancel JOB");
	refused(CTLPROTO_MIGRATOR, "cancel 12x", "cancel: JOB '12x' is not a job id (1 to 9223372036854775807); usage: "
						 "cancel JOB");
	/* The options of migrate: each line, and what its error says before the usage. */
	static const struct {
		const char *line, *why;
	} bad[] = {
		{"migrate I00001L8 drive 16", "drive '16': give a number from 0 to 15"},
		{"migrate I00001L8 drive -1", "drive '-1': give a number from 0 to 15"},
		{"migrate I00001L8 rate 0", "rate '0': give a number from 1 to 100000"},
		{"migrate I00001L8 rate 18446744073709551615",
		 "rate '18446744073709551615': give a number from 1 to 100000"},
		{"migrate I00001L8 native 2", "native '2': give a number from 0 to 1"},
		{"migrate I00001L8 speed 3", "'speed' is not an argument of migrate"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		char want[256];
		snprintf(want, sizeof want, "migrate: %s; usage: migrate BARCODE [drive N] [rate MB/S] [native 0|1] [library NAME]",
			 bad[i].why);
		refused(CTLPROTO_MIGRATOR, bad[i].line, want);
	}
}

static void over_long_lines_nul_and_control_bytes(void **state)
{
	(void)state;
	static char line[CTLSOCK_REQUEST_MAX + 1];
	memset(line, ' ', sizeof line - 1);
	memcpy(line, "status", 6);
	refused_n(CTLPROTO_VTLD, line, CTLSOCK_REQUEST_MAX, "request longer than 1023 bytes");
	struct ctlproto_request r;
	char err[256];
	assert_int_equal(ctlproto_parse(line, CTLSOCK_REQUEST_MAX - 1, CTLPROTO_VTLD, &r, err, sizeof err), VTL_OK);
	refused_n(CTLPROTO_VTLD, "status\0move 1 2", 15, "byte 6 of the request is 0x00: a request is printable ASCII words");
	refused(CTLPROTO_VTLD, "load A0\x1b" "[2J 256", "byte 7 of the request is 0x1b: a request is printable ASCII words");
	refused(CTLPROTO_VTLD, "status\n", "byte 6 of the request is 0x0a: a request is printable ASCII words");
	refused(CTLPROTO_VTLD, "import A\xc3\xa9" "00001", "byte 8 of the request is 0xc3: a request is printable ASCII words");
	refused(CTLPROTO_VTLD, "status\x7f", "byte 6 of the request is 0x7f: a request is printable ASCII words");
}

/* A short error buffer gets a cut, NUL-terminated message; the request is still refused. */
static void short_error_buffers_are_cut(void **state)
{
	(void)state;
	struct ctlproto_request r;
	char err[8];
	memset(err, 'x', sizeof err);
	assert_int_equal(ctlproto_parse("move 1", 6, CTLPROTO_VTLD, &r, err, sizeof err), VTL_E_INVAL);
	assert_string_equal(err, "move: m");
}

/* ------------------------------------------------------------ the formatter */

static void the_formatter_refuses_what_would_not_come_back(void **state)
{
	(void)state;
	char line[CTLSOCK_REQUEST_MAX], err[512];
	struct ctlproto_request r = {.verb = CTLPROTO_LOAD, .element = {256}, .elements = 1};
	snprintf(r.item.barcode, sizeof r.item.barcode, "1000"); /* would be read as address 1000 */
	assert_int_equal(ctlproto_format(&r, line, sizeof line, err, sizeof err), VTL_E_INVAL);
	assert_string_equal(err, "load: WHAT '1000' is not a barcode that reads as one (a number up to 65534 is an "
				 "address); usage: load WHAT DRIVE");
	struct ctlproto_request m = {.verb = CTLPROTO_MIGRATE};
	snprintf(m.barcode, sizeof m.barcode, "A B"); /* a space would make two words */
	assert_int_equal(ctlproto_format(&m, line, sizeof line, err, sizeof err), VTL_E_INVAL);
	snprintf(m.barcode, sizeof m.barcode, "A00001L8");
	m.given[CTLPROTO_OPT_DRIVE] = true;
	m.option[CTLPROTO_OPT_DRIVE] = 16;
	assert_int_equal(ctlproto_format(&m, line, sizeof line, err, sizeof err), VTL_E_INVAL);
	assert_string_equal(err, "migrate: drive 16: give a number from 0 to 15; usage: migrate BARCODE [drive N] "
				 "[rate MB/S] [native 0|1] [library NAME]");
	struct ctlproto_request s = {.verb = CTLPROTO_STATUS, .elements = 1};
	assert_int_equal(ctlproto_format(&s, line, sizeof line, err, sizeof err), VTL_E_INVAL);
	assert_string_equal(err, "status: a value that status does not take; usage: status");
	struct ctlproto_request u = {.verb = CTLPROTO_UNLOAD};
	assert_int_equal(ctlproto_format(&u, line, sizeof line, err, sizeof err), VTL_E_INVAL);
	assert_string_equal(err, "unload: missing DRIVE; usage: unload DRIVE [SLOT]");
	struct ctlproto_request c = {.verb = CTLPROTO_CANCEL, .job = -1};
	assert_int_equal(ctlproto_format(&c, line, sizeof line, err, sizeof err), VTL_E_INVAL);
	struct ctlproto_request j = {.verb = CTLPROTO_JOBS, .given = {[CTLPROTO_OPT_RATE] = true}, .option = {0, 5}};
	assert_int_equal(ctlproto_format(&j, line, sizeof line, err, sizeof err), VTL_E_INVAL);
	assert_string_equal(err, "jobs: an option that jobs does not take; usage: jobs");
	/* A line buffer too short for the request: refused, not cut into another request. */
	struct ctlproto_request e = {.verb = CTLPROTO_EXPORT, .element = {770}, .elements = 1};
	char small[8];
	assert_int_equal(ctlproto_format(&e, small, sizeof small, err, sizeof err), VTL_E_INVAL);
	assert_string_equal(err, "export: the request needs 11 bytes, more than 8; usage: export IE");
}

/* ------------------------------------------------------------ the document */

static char *doc;

static int load_doc(void **state)
{
	(void)state;
	doc = tl_doc_read("operations.md");
	return doc ? 0 : -1;
}

static int free_doc(void **state)
{
	(void)state;
	free(doc);
	return 0;
}

#define DOC_SECTION "\n## The control protocol\n"

/*
 * docs/operations.md's "The control protocol" has, for every verb, the row
 * the table makes of it, "| `USAGE` | DAEMON | SUMMARY |" (a | in the usage
 * written \|, as a Markdown table needs), and no row of a
 * request the table lacks.
 */
static void the_document_lists_the_table(void **state)
{
	(void)state;
	const char *sec = strstr(doc, DOC_SECTION);
	assert_non_null(sec);
	sec += strlen(DOC_SECTION);
	const char *end = strstr(sec, "\n## ");
	size_t len = end ? (size_t)(end - sec) : strlen(sec);
	int wrong = 0;
	for (unsigned v = 0; v < CTLPROTO_VERBS; v++) {
		const struct ctlproto_verb_info *vi = ctlproto_verb(v);
		char usage[CTLPROTO_USAGE_MAX], row[512];
		ctlproto_usage(v, usage, sizeof usage);
		char cell[2 * CTLPROTO_USAGE_MAX];
		size_t n = 0;
		for (const char *c = usage; *c; c++) { /* a | inside a table's cell is written \| */
			if (*c == '|')
				cell[n++] = '\\';
			cell[n++] = *c;
		}
		cell[n] = 0;
		snprintf(row, sizeof row, "\n| `%s` | %s | %s |\n", cell, ctlproto_daemon_name(vi->daemon), vi->summary);
		const char *at = strstr(sec, row);
		if (!at || at >= sec + len) {
			print_error("docs/operations.md, \"The control protocol\": no row%s", row);
			wrong++;
		}
	}
	unsigned rows = 0;
	for (const char *p = sec; (p = strstr(p, "\n| `")) && p < sec + len; p++)
		rows++;
	if (rows != CTLPROTO_VERBS) {
		print_error("docs/operations.md, \"The control protocol\": %u request rows, the table has %u verbs\n", rows,
			    (unsigned)CTLPROTO_VERBS);
		wrong++;
	}
	assert_int_equal(wrong, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_vtld_verb_round_trips),
		cmocka_unit_test(every_migrator_verb_round_trips),
		cmocka_unit_test(the_round_trips_cover_the_table),
		cmocka_unit_test(reload_goes_to_either_daemon),
		cmocka_unit_test(spacing_and_order_of_options_are_free),
		cmocka_unit_test(unknown_empty_and_other_daemons_verbs),
		cmocka_unit_test(missing_and_extra_words),
		cmocka_unit_test(bad_barcodes_and_addresses),
		cmocka_unit_test(negative_and_overflowing_numbers),
		cmocka_unit_test(over_long_lines_nul_and_control_bytes),
		cmocka_unit_test(short_error_buffers_are_cut),
		cmocka_unit_test(the_formatter_refuses_what_would_not_come_back),
		cmocka_unit_test(the_document_lists_the_table),
	};
	return cmocka_run_group_tests(tests, load_doc, free_doc);
}
