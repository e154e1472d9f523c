/* SPDX-License-Identifier: Apache-2.0 */
/* Text key=value lists (RFC 7143 6.1) and the value kinds' negotiation rules (6.2). */
#include <string.h>

#include "tests/unit/testlib.h"
#include "vtl/iscsi/text.h"

static int parse(const char *s, size_t len, struct iscsi_text *t)
{
	return iscsi_text_parse((const uint8_t *)s, len, t);
}

static void parses_pairs(void **state)
{
	(void)state;
	struct iscsi_text t;
	static const char d[] = "InitiatorName=iqn.x\0SessionType=Normal\0\0Empty=\0Last=no-nul";
	assert_int_equal(parse(d, sizeof d - 1, &t), ISCSI_TEXT_OK);
	assert_int_equal(t.n, 4);
	assert_string_equal(t.kv[0].key, "InitiatorName");
	assert_string_equal(t.kv[0].value, "iqn.x");
	assert_string_equal(iscsi_text_get(&t, "SessionType"), "Normal");
	assert_string_equal(iscsi_text_get(&t, "Empty"), "");
	assert_string_equal(iscsi_text_get(&t, "Last"), "no-nul");
	assert_null(iscsi_text_get(&t, "sessiontype"));
	iscsi_text_free(&t);
	assert_int_equal(parse("", 0, &t), ISCSI_TEXT_OK);
	assert_int_equal(t.n, 0);
	iscsi_text_free(&t);
	/* "a=b=c": the value is everything after the first '='. */
	assert_int_equal(parse("a=b=c", 5, &t), ISCSI_TEXT_OK);
	assert_string_equal(t.kv[0].value, "b=c");
	iscsi_text_free(&t);
}

static void refuses_malformed(void **state)
{
	(void)state;
	struct iscsi_text t;
	char big[ISCSI_LARGE_VALUE_MAX + 16];
	assert_int_equal(parse("NoEquals\0", 9, &t), ISCSI_TEXT_NO_EQUALS);
	assert_null(t.buf);
	assert_int_equal(parse("=v", 2, &t), ISCSI_TEXT_BAD_KEY);
	assert_int_equal(parse("a b=v", 5, &t), ISCSI_TEXT_BAD_KEY);
	memset(big, 'K', 64);
	big[64] = '=';
	assert_int_equal(parse(big, 65, &t), ISCSI_TEXT_KEY_LONG);
	assert_int_equal(parse(big + 1, 64, &t), ISCSI_TEXT_OK); /* 63 is fine */
	iscsi_text_free(&t);
	big[0] = 'k', big[1] = '=';
	memset(big + 2, 'v', ISCSI_LARGE_VALUE_MAX + 1);
	assert_int_equal(parse(big, ISCSI_LARGE_VALUE_MAX + 3, &t), ISCSI_TEXT_VALUE_LONG);
	assert_int_equal(parse(big, ISCSI_LARGE_VALUE_MAX + 2, &t), ISCSI_TEXT_OK);
	iscsi_text_free(&t);
	assert_int_equal(parse("k=\xc3\x28", 4, &t), ISCSI_TEXT_BAD_UTF8);
	assert_int_equal(parse("k=\xc0\x80", 4, &t), ISCSI_TEXT_BAD_UTF8);   /* overlong NUL */
	assert_int_equal(parse("k=\xed\xa0\x80", 5, &t), ISCSI_TEXT_BAD_UTF8); /* a surrogate */
	assert_int_equal(parse("k=caf\xc3\xa9", 7, &t), ISCSI_TEXT_OK);
	iscsi_text_free(&t);
	assert_int_equal(parse("k=1\0k=2", 7, &t), ISCSI_TEXT_DUPLICATE);
	assert_string_equal(iscsi_text_strerror(ISCSI_TEXT_DUPLICATE), "a key given twice");
}

static void builds_lists(void **state)
{
	(void)state;
	struct iscsi_text_buf b = {0};
	assert_int_equal(iscsi_text_add(&b, "HeaderDigest", "None"), 0);
	assert_int_equal(iscsi_text_add_uint(&b, "MaxBurstLength", 262144), 0);
	static const char want[] = "HeaderDigest=None\0MaxBurstLength=262144";
	assert_int_equal(b.len, sizeof want);
	assert_memory_equal(b.data, want, sizeof want);
	for (int i = 0; i < 200; i++) /* growth */
		assert_int_equal(iscsi_text_add(&b, "K", "0123456789"), 0);
	assert_int_equal(b.len, sizeof want + 200 * 13);
	iscsi_text_buf_free(&b);
	assert_null(b.data);
}

static void negotiation_rules(void **state)
{
	(void)state;
	uint64_t v;
	assert_int_equal(iscsi_parse_number("262144", 512, 16777215, &v), 0);
	assert_int_equal(v, 262144);
	assert_int_equal(iscsi_parse_number("0x40000", 512, 16777215, &v), 0);
	assert_int_equal(v, 262144);
	assert_int_equal(iscsi_parse_number("511", 512, 16777215, &v), -1);
	assert_int_equal(iscsi_parse_number("16777216", 512, 16777215, &v), -1);
	assert_int_equal(iscsi_parse_number("", 0, 10, &v), -1);
	assert_int_equal(iscsi_parse_number("0x", 0, 10, &v), -1);
	assert_int_equal(iscsi_parse_number("12a", 0, 1000, &v), -1);
	assert_int_equal(iscsi_parse_number("99999999999999999999999", 0, UINT64_MAX, &v), -1);
	bool b;
	assert_int_equal(iscsi_parse_bool("Yes", &b), 0);
	assert_true(b);
	assert_int_equal(iscsi_parse_bool("No", &b), 0);
	assert_false(b);
	assert_int_equal(iscsi_parse_bool("yes", &b), -1);
	assert_int_equal(iscsi_neg_min(262144, 1048576), 262144);
	assert_int_equal(iscsi_neg_max(2, 20), 20);
	assert_false(iscsi_neg_and(true, false));
	assert_true(iscsi_neg_or(false, true));
	static const char *const acc[] = {"None", "CRC32C"};
	assert_int_equal(iscsi_neg_list("CRC32C,None", acc, 2), 1);
	assert_int_equal(iscsi_neg_list("None,CRC32C", acc, 2), 0);
	assert_int_equal(iscsi_neg_list("X,CRC32", acc, 2), -1);
	assert_int_equal(iscsi_neg_list("CRC32C", acc + 0, 1), -1);
	assert_int_equal(iscsi_neg_list("", acc, 2), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(parses_pairs),
		cmocka_unit_test(refuses_malformed),
		cmocka_unit_test(builds_lists),
		cmocka_unit_test(negotiation_rules),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
