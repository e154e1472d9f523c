/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests of the daemons' log lines (common/log): values from hosts and
 * files with control characters, terminal escapes, C1 controls or invalid
 * UTF-8 come out as \xHH, printable UTF-8 stays as it is, and one log call
 * writes exactly one line to stderr whatever its values hold. When
 * $JOURNAL_STREAM names stderr (as systemd sets it), a line starts with its
 * syslog priority "<N>" and has no time stamp; when it names another stream
 * (a shell redirected stderr), or is malformed, lines keep their time.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/log.h"
#include "tests/unit/testlib.h"

static void expect_escaped(const char *in, const char *want)
{
	char out[256];
	size_t n = log_escape(in, out, sizeof out);
	if (strcmp(out, want) != 0)
		fail_msg("escaped \"%s\", expected \"%s\"", out, want);
	assert_int_equal(n, strlen(want));
}

static void controls_become_hex(void **state)
{
	(void)state;
	expect_escaped("iqn.2026-01.com.example:h1", "iqn.2026-01.com.example:h1");
	expect_escaped("a\nb", "a\\x0Ab");
	expect_escaped("x\r\n2026-01-01 00:00:00.000Z error  fake", "x\\x0D\\x0A2026-01-01 00:00:00.000Z error  fake");
	expect_escaped("\x1b[2J\x1b]0;title\x07", "\\x1B[2J\\x1B]0;title\\x07");
	expect_escaped("tab\there", "tab\\x09here");
	expect_escaped("del\x7f", "del\\x7F");
	expect_escaped("\x01\x1f", "\\x01\\x1F");
}

static void utf8_kept_unless_invalid_or_c1(void **state)
{
	(void)state;
	expect_escaped("Bänder – 磁带 🎞", "Bänder – 磁带 🎞");          /* 2, 3 and 4 byte characters */
	expect_escaped("\xc2\x9b" "31m", "\\xC2\\x9B31m");               /* U+009B CSI, a C1 control */
	expect_escaped("\xc2\x85", "\\xC2\\x85");                       /* U+0085 NEL, a C1 line break */
	expect_escaped("\xc2\xa0", "\xc2\xa0");                         /* U+00A0, the first printable after C1 */
	expect_escaped("\xff\xfe", "\\xFF\\xFE");                       /* never UTF-8 */
	expect_escaped("\xc0\x8a", "\\xC0\\x8A");                       /* overlong newline */
	expect_escaped("\xe0\x80\x8a", "\\xE0\\x80\\x8A");              /* overlong newline, 3 bytes */
	expect_escaped("\xed\xa0\x80", "\\xED\\xA0\\x80");              /* a UTF-16 surrogate */
	expect_escaped("\xf4\x90\x80\x80", "\\xF4\\x90\\x80\\x80");     /* past U+10FFFF */
	expect_escaped("ab\xe2\x82", "ab\\xE2\\x82");                   /* cut short at the end */
	expect_escaped("\xe2\x82" "A", "\\xE2\\x82A");                  /* cut short before ASCII */
	expect_escaped("\x80", "\\x80");                                /* a lone continuation byte */
}

static void output_is_bounded(void **state)
{
	(void)state;
	char out[8];
	/* Nothing is cut in the middle of an escape or a character. */
	assert_int_equal(log_escape("abc\ndef", out, sizeof out), 7);
	assert_string_equal(out, "abc\\x0A");
	assert_int_equal(log_escape("abcd\nef", out, sizeof out), 4);
	assert_string_equal(out, "abcd");
	assert_int_equal(log_escape("abcde\xc3\xa4", out, sizeof out), 7);
	assert_string_equal(out, "abcde\xc3\xa4");
	assert_int_equal(log_escape("abcdef\xc3\xa4", out, sizeof out), 6);
	assert_string_equal(out, "abcdef");
	assert_int_equal(log_escape("x", out, 1), 0);
	assert_string_equal(out, "");
}

/* What one log_warn with a hostile value writes to stderr. */
static void one_call_one_line(void **state)
{
	(void)state;
	char path[] = "/tmp/test_log.XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	fflush(stderr);
	int saved = dup(2);
	assert_true(saved >= 0);
	assert_int_equal(dup2(fd, 2), 2);
	log_setup(LOG_LEVEL_INFO, false, "test_log");
	log_warn("login from %s refused", "iqn.x\n2026-01-01 00:00:00.000Z info  admin logged in\x1b[0m");
	fflush(stderr);
	assert_int_equal(dup2(saved, 2), 2);
	close(saved);
	char text[512] = "";
	FILE *f = fdopen(fd, "r");
	assert_non_null(f);
	rewind(f);
	size_t n = fread(text, 1, sizeof text - 1, f);
	fclose(f);
	unlink(path);
	text[n] = 0;
	/* "YYYY-MM-DD HH:MM:SS.mmmZ warn  " then the escaped text and one newline. */
	assert_true(n > 25);
	const char *body = text + 25;
	assert_string_equal(body, "warn  login from iqn.x\\x0A2026-01-01 00:00:00.000Z info  admin logged in\\x1B[0m "
				  "refused\n");
	assert_ptr_equal(strchr(text, '\n'), text + n - 1);
}

/*
 * What log_setup (with JOURNAL_STREAM set to journal, or unset for NULL) and
 * a warning and an error, then a debug line below the threshold, write to stderr.
 * With journal "%s", the stream's own device and inode are put in.
 */
static void lines_with_journal(const char *journal, char *text, size_t cap)
{
	char path[] = "/tmp/test_log.XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	struct stat st;
	assert_int_equal(fstat(fd, &st), 0);
	char value[64];
	if (journal) {
		if (!strcmp(journal, "%s"))
			snprintf(value, sizeof value, "%llu:%llu", (unsigned long long)st.st_dev, (unsigned long long)st.st_ino);
		else
			snprintf(value, sizeof value, "%s", journal);
		assert_int_equal(setenv("JOURNAL_STREAM", value, 1), 0);
	} else {
		unsetenv("JOURNAL_STREAM");
	}
	fflush(stderr);
	int saved = dup(2);
	assert_true(saved >= 0);
	assert_int_equal(dup2(fd, 2), 2);
	log_setup(LOG_LEVEL_INFO, false, "test_log");
	log_warn("drive %u: %s", 2u, "cleaning\nneeded");
	log_error("pool full");
	log_debug("not written");
	fflush(stderr);
	assert_int_equal(dup2(saved, 2), 2);
	close(saved);
	unsetenv("JOURNAL_STREAM");
	log_setup(LOG_LEVEL_INFO, false, "test_log"); /* stderr is the terminal again: no journal */
	FILE *f = fdopen(fd, "r");
	assert_non_null(f);
	rewind(f);
	size_t n = fread(text, 1, cap - 1, f);
	fclose(f);
	unlink(path);
	text[n] = 0;
}

static void journal_lines_carry_the_priority(void **state)
{
	(void)state;
	char text[512];
	lines_with_journal("%s", text, sizeof text);
	/* LOG_WARNING is 4 and LOG_ERR 3 (RFC 5424 6.2.1), as sd-daemon(3) reads them. */
	assert_string_equal(text, "<4>warn  drive 2: cleaning\\x0Aneeded\n<3>error pool full\n");
}

static void other_streams_keep_the_time(void **state)
{
	(void)state;
	char text[512];
	const char *cases[] = {NULL, "1:1", "", "12", "12:", ":12", "1:2:3", "x:y"};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		lines_with_journal(cases[i], text, sizeof text);
		/* "YYYY-MM-DD HH:MM:SS.mmmZ " then the level. */
		if (strlen(text) < 25 || text[4] != '-' || text[23] != 'Z' || strncmp(text + 25, "warn  drive 2:", 14) != 0)
			fail_msg("JOURNAL_STREAM=%s: got \"%s\"", cases[i] ? cases[i] : "(unset)", text);
		assert_null(strchr(text, '<'));
	}
}

static void the_level_changes_while_running(void **state)
{
	(void)state;
	log_setup(LOG_LEVEL_INFO, false, "test_log");
	assert_int_equal(log_get_level(), LOG_LEVEL_INFO);
	log_set_level(LOG_LEVEL_DEBUG);
	assert_int_equal(log_get_level(), LOG_LEVEL_DEBUG);
	assert_string_equal(log_level_name(log_get_level()), "debug");
	log_set_level(LOG_LEVEL_INFO);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(controls_become_hex),
		cmocka_unit_test(utf8_kept_unless_invalid_or_c1),
		cmocka_unit_test(output_is_bounded),
		cmocka_unit_test(one_call_one_line),
		cmocka_unit_test(journal_lines_carry_the_priority),
		cmocka_unit_test(other_streams_keep_the_time),
		cmocka_unit_test(the_level_changes_while_running),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
