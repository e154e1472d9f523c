/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests of vtl/media: LTO barcode labels (what is accepted, what is
 * refused and what the message says), media names, nominal capacities, drive
 * models and which cartridges a drive generation loads, barcode ranges.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "common/grow.h"
#include "common/vtl_error.h"
#include "tests/unit/testlib.h"
#include "config/media.h"

static void expect_label(const char *bc, enum cat_media media, unsigned gen, bool worm, bool cleaning, bool type_m,
			 uint64_t capacity)
{
	struct vtl_label l;
	char err[256] = "";
	int rc = vtl_label_parse(bc, &l, err, sizeof err);
	if (rc)
		fail_msg("%s refused: %s", bc, err);
	assert_int_equal(l.media, media);
	assert_int_equal(l.generation, gen);
	assert_int_equal(l.worm, worm);
	assert_int_equal(l.cleaning, cleaning);
	assert_int_equal(l.type_m, type_m);
	assert_true(l.capacity == capacity);
	assert_string_equal(l.suffix, bc + 6);
}

/* The label is refused, and the message contains want. */
static void expect_refused(const char *bc, const char *want)
{
	struct vtl_label l;
	char err[256] = "";
	EXPECT_RC(vtl_label_parse(bc, &l, err, sizeof err), VTL_E_INVAL);
	if (!strstr(err, want))
		fail_msg("label '%s': message \"%s\" does not contain \"%s\"", bc ? bc : "(null)", err, want);
}

static void data_and_worm_labels(void **state)
{
	(void)state;
	expect_label("A00001L5", CAT_MEDIA_LTO5, 5, false, false, false, 1500000000000ull);
	expect_label("A00001L6", CAT_MEDIA_LTO6, 6, false, false, false, 2500000000000ull);
	expect_label("A00001L7", CAT_MEDIA_LTO7, 7, false, false, false, 6000000000000ull);
	expect_label("A00001L8", CAT_MEDIA_LTO8, 8, false, false, false, 12000000000000ull);
	expect_label("ZZ9999L9", CAT_MEDIA_LTO9, 9, false, false, false, 18000000000000ull);
	expect_label("A00001LA", CAT_MEDIA_LTO10, 10, false, false, false, 30000000000000ull);
	expect_label("000001M8", CAT_MEDIA_LTO7, 7, false, false, true, 9000000000000ull);
	expect_label("W00001LV", CAT_MEDIA_LTO5W, 5, true, false, false, 1500000000000ull);
	expect_label("W00001LW", CAT_MEDIA_LTO6W, 6, true, false, false, 2500000000000ull);
	expect_label("W00001LX", CAT_MEDIA_LTO7W, 7, true, false, false, 6000000000000ull);
	expect_label("W00001LY", CAT_MEDIA_LTO8W, 8, true, false, false, 12000000000000ull);
	expect_label("W00001LZ", CAT_MEDIA_LTO9W, 9, true, false, false, 18000000000000ull);
	/* A NULL out only checks. */
	EXPECT_RC(vtl_label_parse("A00001L8", NULL, NULL, 0), VTL_OK);
	assert_true(vtl_label_is_type_m("000001M8"));
	assert_false(vtl_label_is_type_m("000001L8"));
	assert_false(vtl_label_is_type_m("CLN001M8"));
}

static void cleaning_labels(void **state)
{
	(void)state;
	expect_label("CLN001CU", CAT_MEDIA_CLEANING, 0, false, true, false, 0);
	expect_label("CLNU01L1", CAT_MEDIA_CLEANING, 0, false, true, false, 0);
	expect_label("CLN123L9", CAT_MEDIA_CLEANING, 0, false, true, false, 0);
	expect_refused("CLN001L0", "cleaning label 'CLN001L0' ends in 'L0'");
	expect_refused("CLN001LY", "CU or L1..L9");
	expect_refused("CLN01CU", "is 7 characters");
}

static void refused_labels(void **state)
{
	(void)state;
	expect_refused(NULL, "empty");
	expect_refused("", "empty");
	expect_refused("A0001L8", "barcode 'A0001L8' is 7 characters; LTO labels are 6 characters plus a 2-character "
				  "media suffix");
	expect_refused("A000001L8", "is 9 characters");
	expect_refused("a00001L8", "lower-case letter 'a'");
	expect_refused("A00001l8", "try 'L'");
	expect_refused("A-0001L8", "the character '-'");
	expect_refused("A 0001L8", "space or a non-printable character");
	expect_refused("A00001L4", "LTO-4 media (L4), older than this library emulates");
	expect_refused("A00001L1", "LTO-1 media");
	expect_refused("A00001LT", "LTO-3 WORM");
	expect_refused("A00001LU", "LTO-4 WORM");
	expect_refused("A00001X8", "ends in 'X8', which is not an LTO media identifier");
	expect_refused("A00001L0", "not an LTO media identifier");
	expect_refused("A00001M9", "not an LTO media identifier");
	expect_refused("A00001PA", "not an LTO media identifier"); /* LTO-10 Plus: not emulated */
	expect_refused("A00001LB", "not an LTO media identifier");
	/* err may be NULL. */
	EXPECT_RC(vtl_label_parse("bad", NULL, NULL, 0), VTL_E_INVAL);
}

static void media_names(void **state)
{
	(void)state;
	static const struct {
		const char *name;
		enum cat_media m;
		bool tm;
		uint64_t cap;
	} t[] = {
		{"LTO5", CAT_MEDIA_LTO5, false, VTL_CAP_LTO5},   {"LTO6", CAT_MEDIA_LTO6, false, VTL_CAP_LTO6},
		{"LTO7", CAT_MEDIA_LTO7, false, VTL_CAP_LTO7},   {"LTO7M", CAT_MEDIA_LTO7, true, VTL_CAP_LTO7M},
		{"LTO8", CAT_MEDIA_LTO8, false, VTL_CAP_LTO8},   {"LTO9", CAT_MEDIA_LTO9, false, VTL_CAP_LTO9},
		{"LTO10", CAT_MEDIA_LTO10, false, VTL_CAP_LTO10},
		{"LTO5W", CAT_MEDIA_LTO5W, false, VTL_CAP_LTO5}, {"LTO6W", CAT_MEDIA_LTO6W, false, VTL_CAP_LTO6},
		{"LTO7W", CAT_MEDIA_LTO7W, false, VTL_CAP_LTO7}, {"LTO8W", CAT_MEDIA_LTO8W, false, VTL_CAP_LTO8},
		{"LTO9W", CAT_MEDIA_LTO9W, false, VTL_CAP_LTO9}, {"CLN", CAT_MEDIA_CLEANING, false, 0},
	};
	for (size_t i = 0; i < VTL_ARRAY_SIZE(t); i++) {
		enum cat_media m;
		bool tm;
		EXPECT_RC(vtl_media_parse(t[i].name, &m, &tm), VTL_OK);
		assert_int_equal(m, t[i].m);
		assert_int_equal(tm, t[i].tm);
		assert_string_equal(vtl_media_name(m, tm), t[i].name);
		assert_non_null(vtl_media_describe(m, tm));
		assert_true(vtl_media_capacity(m, tm) == t[i].cap);
	}
	enum cat_media m;
	bool tm;
	EXPECT_RC(vtl_media_parse("lto8w", &m, &tm), VTL_OK);
	assert_int_equal(m, CAT_MEDIA_LTO8W);
	EXPECT_RC(vtl_media_parse("M8", &m, &tm), VTL_OK);
	assert_int_equal(m, CAT_MEDIA_LTO7);
	assert_true(tm);
	EXPECT_RC(vtl_media_parse("cleaning", &m, &tm), VTL_OK);
	assert_int_equal(m, CAT_MEDIA_CLEANING);
	EXPECT_RC(vtl_media_parse("LTO4", &m, &tm), VTL_E_INVAL);
	EXPECT_RC(vtl_media_parse("LTO10W", &m, &tm), VTL_E_INVAL); /* no LTO-10 WORM */
	EXPECT_RC(vtl_media_parse("LTO11", &m, &tm), VTL_E_INVAL);
	EXPECT_RC(vtl_media_parse("", &m, &tm), VTL_E_INVAL);
	EXPECT_RC(vtl_media_parse(NULL, &m, &tm), VTL_E_INVAL);
	assert_null(vtl_media_name((enum cat_media)42, false));
	assert_true(vtl_media_capacity((enum cat_media)42, false) == 0);
	assert_string_equal(vtl_media_describe(CAT_MEDIA_LTO7, true), "LTO-7 Type M (M8)");
}

static void drive_models(void **state)
{
	(void)state;
	assert_int_equal(vtl_drive_generation("IBM", "ULT3580-TD8"), 8);
	assert_int_equal(vtl_drive_generation("IBM", "ULT3580-TD5"), 5);
	assert_int_equal(vtl_drive_generation("IBM", "ULT3580-HH9"), 9);
	assert_int_equal(vtl_drive_generation("HP", "Ultrium 8-SCSI"), 8);
	assert_int_equal(vtl_drive_generation("HPE", "Ultrium 6-SCSI"), 6);
	assert_int_equal(vtl_drive_generation("IBM", "ULT3580-TDA"), 10);
	assert_int_equal(vtl_drive_generation("IBM", "ULT3580-HHA"), 10);
	assert_int_equal(vtl_drive_generation("IBM", "ULT3580-TDB"), 0);
	assert_int_equal(vtl_drive_generation("HP", "Ultrium 10-SCSI"), 0);
	assert_int_equal(vtl_drive_generation("IBM", "ULT3580-TD4"), 0);
	assert_int_equal(vtl_drive_generation("IBM", "ULT3580-TD8X"), 0);
	assert_int_equal(vtl_drive_generation("HP", "Ultrium 4-SCSI"), 0);
	assert_int_equal(vtl_drive_generation("HP", "Ultrium 8-SCSIX"), 0);
	assert_int_equal(vtl_drive_generation("HP", "ULT3580-TD8"), 0);
	assert_int_equal(vtl_drive_generation("QUANTUM", "ULTRIUM-HH8"), 0);
	assert_int_equal(vtl_drive_generation(NULL, "x"), 0);
}

static bool loads(unsigned gen, const char *bc, bool *w)
{
	struct vtl_label l;
	if (vtl_label_parse(bc, &l, NULL, 0))
		fail_msg("%s refused", bc);
	return vtl_drive_accepts(gen, &l, w);
}

static void drive_compatibility(void **state)
{
	(void)state;
	bool w = true;
	/* LTO-8: its own and LTO-7, read and write; Type M; not LTO-6. */
	assert_true(loads(8, "A00001L8", &w) && w);
	assert_true(loads(8, "A00001LY", &w) && w);
	assert_true(loads(8, "A00001L7", &w) && w);
	assert_true(loads(8, "A00001M8", &w) && w);
	assert_false(loads(8, "A00001L6", &w) || w);
	assert_false(loads(8, "A00001L9", &w));
	/* LTO-9: its own and LTO-8; no Type M, no LTO-7. */
	assert_true(loads(9, "A00001L9", &w) && w);
	assert_true(loads(9, "A00001L8", &w) && w);
	assert_false(loads(9, "A00001M8", &w));
	assert_false(loads(9, "A00001L7", &w));
	/* LTO-10: its own only, not LTO-9; no older drive loads LTO-10. */
	assert_true(loads(10, "A00001LA", &w) && w);
	assert_false(loads(10, "A00001L9", &w) || w);
	assert_false(loads(10, "A00001LZ", &w));
	assert_false(loads(9, "A00001LA", &w));
	assert_true(loads(10, "CLN001CU", &w) && !w);
	/* LTO-7: writes LTO-6, reads LTO-5 only. */
	assert_true(loads(7, "A00001L6", &w) && w);
	assert_true(loads(7, "A00001L5", &w) && !w);
	assert_false(loads(7, "A00001M8", &w));
	/* Cleaning cartridges load everywhere. */
	assert_true(loads(5, "CLN001CU", &w) && !w);
	assert_true(loads(9, "CLN001L1", NULL));
	assert_false(loads(4, "A00001L5", NULL));
}

static void label_ranges(void **state)
{
	(void)state;
	char next[VTL_LABEL_LEN + 1];
	EXPECT_RC(vtl_label_next("A00009L8", next), VTL_OK);
	assert_string_equal(next, "A00010L8");
	EXPECT_RC(vtl_label_next("AB0999LY", next), VTL_OK);
	assert_string_equal(next, "AB1000LY");
	EXPECT_RC(vtl_label_next("CLN009CU", next), VTL_OK);
	assert_string_equal(next, "CLN010CU");
	EXPECT_RC(vtl_label_next("ABCDE8L8", next), VTL_OK);
	assert_string_equal(next, "ABCDE9L8");
	EXPECT_RC(vtl_label_next("ABCDE9L8", next), VTL_E_INVAL); /* the 1-digit tail is exhausted */
	EXPECT_RC(vtl_label_next("A99999L8", next), VTL_E_INVAL);
	EXPECT_RC(vtl_label_next("ABCDEFL8", next), VTL_E_INVAL);
	EXPECT_RC(vtl_label_next("A1L8", next), VTL_E_INVAL);

	unsigned long n = 0;
	char err[256];
	EXPECT_RC(vtl_label_range("A00001L8", "A00020L8", &n, err, sizeof err), VTL_OK);
	assert_int_equal(n, 20);
	EXPECT_RC(vtl_label_range("A00001L8", "A00001L8", &n, err, sizeof err), VTL_OK);
	assert_int_equal(n, 1);
	EXPECT_RC(vtl_label_range("AB0998L8", "AB1002L8", &n, err, sizeof err), VTL_OK);
	assert_int_equal(n, 5);
	EXPECT_RC(vtl_label_range("A00020L8", "A00001L8", &n, err, sizeof err), VTL_E_INVAL);
	assert_non_null(strstr(err, "before it starts"));
	EXPECT_RC(vtl_label_range("A00001L8", "B00020L8", &n, err, sizeof err), VTL_E_INVAL);
	assert_non_null(strstr(err, "must differ only in the digits of '00001'"));
	EXPECT_RC(vtl_label_range("A00001L8", "A00020LY", &n, err, sizeof err), VTL_E_INVAL);
	EXPECT_RC(vtl_label_range("ABCDEFL8", "ABCDEFL8", &n, err, sizeof err), VTL_E_INVAL);
	assert_non_null(strstr(err, "no digits"));
	EXPECT_RC(vtl_label_range("ABC001L8", "ABCX01L8", &n, err, sizeof err), VTL_E_INVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(data_and_worm_labels),
		cmocka_unit_test(cleaning_labels),
		cmocka_unit_test(refused_labels),
		cmocka_unit_test(media_names),
		cmocka_unit_test(drive_models),
		cmocka_unit_test(drive_compatibility),
		cmocka_unit_test(label_ranges),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
