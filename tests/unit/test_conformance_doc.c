/* SPDX-License-Identifier: Apache-2.0 */
/*
 * docs/scsi-conformance.md against the command tables: every command a
 * device's table dispatches has a row in the document (its own sections or
 * the common ones), and every opcode a row of the device's own sections
 * names is in its table. The document
 * can then neither forget a command nor claim one that does not exist.
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

#include "vtl/scsi/dispatch.h"
#include "vtl/changer/smc.h"
#include "vtl/drive/ssc.h"

static char *doc;

static int load_doc(void **state)
{
	(void)state;
	doc = tl_doc_read("scsi-conformance.md");
	return doc ? 0 : -1;
}

static int free_doc(void **state)
{
	(void)state;
	free(doc);
	return 0;
}

/* Appends to buf the text of every "## " section whose title starts with title. */
static char *section(const char *title, char *buf, size_t cap)
{
	for (const char *p = doc; (p = strstr(p, "\n## ")); p++) {
		if (strncmp(p + 4, title, strlen(title)) != 0)
			continue;
		const char *end = strstr(p + 4, "\n## ");
		size_t len = end ? (size_t)(end - p) : strlen(p);
		size_t have = strlen(buf);
		if (have + len + 1 < cap) {
			memcpy(buf + have, p, len);
			buf[have + len] = 0;
		}
	}
	return buf;
}

/*
 * Whether the opcode column (the second cell) of a table row of text names
 * the opcode as "XXh".
 */
static int row_mentions(const char *text, uint8_t opcode)
{
	char code[8];
	snprintf(code, sizeof code, "%02Xh", opcode);
	for (const char *line = text; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		if (line[0] != '|')
			continue;
		const char *cell = strchr(line + 1, '|');
		const char *end = cell ? strchr(cell + 1, '|') : NULL;
		const char *eol = strchr(line, '\n');
		if (!cell || !end || (eol && end > eol))
			continue;
		for (const char *q = cell + 1; (q = strstr(q, code)) && q < end; q++)
			if (!(q[-1] >= '0' && q[-1] <= '9') && !(q[-1] >= 'A' && q[-1] <= 'F'))
				return 1;
	}
	return 0;
}

/* The rows of the common sections and of the device's own (title prefix). */
static char *device_rows(const char *device)
{
	static char text[1 << 20];
	text[0] = 0;
	section("Common to every device", text, sizeof text);
	section(device, text, sizeof text);
	return text;
}

/* Fails unless every command of the table has a row, and every opcode in a row is in the table. */
static void check(const char *device, const struct scsi_op *ops, size_t n)
{
	const char *rows = device_rows(device);
	static char own[1 << 20];
	own[0] = 0;
	section(device, own, sizeof own);
	assert_true(strlen(rows) > 0 && strlen(own) > 0);
	int wrong = 0;
	for (size_t i = 0; i < n; i++)
		if (!row_mentions(rows, ops[i].opcode)) {
			print_error("docs/scsi-conformance.md: no %s row for %02Xh %s\n", device, ops[i].opcode, ops[i].name);
			wrong++;
		}
	for (unsigned op = 0; op < 256; op++) {
		if (!row_mentions(rows, (uint8_t)op))
			continue;
		int found = 0;
		for (size_t i = 0; i < n; i++)
			found |= ops[i].opcode == op;
		/* The common sections may name commands only the other device has. */
		if (!found && row_mentions(own, (uint8_t)op)) {
			print_error("docs/scsi-conformance.md: %s row for %02Xh, which its table lacks\n", device, op);
			wrong++;
		}
	}
	assert_int_equal(wrong, 0);
}

static void drive_table_and_document_agree(void **state)
{
	(void)state;
	size_t n;
	const struct scsi_op *ops = ssc_command_table(&n);
	check("Tape drive", ops, n);
}

static void changer_table_and_document_agree(void **state)
{
	(void)state;
	size_t n;
	const struct scsi_op *ops = smc_command_table(&n);
	check("Medium changer", ops, n);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(drive_table_and_document_agree),
		cmocka_unit_test(changer_table_and_document_agree),
	};
	return cmocka_run_group_tests(tests, load_doc, free_doc);
}
