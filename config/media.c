/* SPDX-License-Identifier: Apache-2.0 */
#include "config/media.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "common/grow.h"
#include "common/vtl_error.h"

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	if (err && errlen) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return VTL_E_INVAL;
}

static bool is_label_char(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

uint64_t vtl_media_capacity(enum cat_media media, bool type_m)
{
	switch (media) {
	case CAT_MEDIA_LTO5: case CAT_MEDIA_LTO5W: return VTL_CAP_LTO5;
	case CAT_MEDIA_LTO6: case CAT_MEDIA_LTO6W: return VTL_CAP_LTO6;
	case CAT_MEDIA_LTO7: return type_m ? VTL_CAP_LTO7M : VTL_CAP_LTO7;
	case CAT_MEDIA_LTO7W: return VTL_CAP_LTO7;
	case CAT_MEDIA_LTO8: case CAT_MEDIA_LTO8W: return VTL_CAP_LTO8;
	case CAT_MEDIA_LTO9: case CAT_MEDIA_LTO9W: return VTL_CAP_LTO9;
	case CAT_MEDIA_LTO10: return VTL_CAP_LTO10;
	case CAT_MEDIA_CLEANING: return 0;
	}
	return 0;
}

/* The media identifiers this library refuses, with what they are. */
static const struct {
	const char *suffix, *what;
} old_media[] = {
	{"L1", "LTO-1"}, {"L2", "LTO-2"}, {"L3", "LTO-3"}, {"L4", "LTO-4"},
	{"LT", "LTO-3 WORM"}, {"LU", "LTO-4 WORM"},
};

int vtl_label_parse(const char *barcode, struct vtl_label *out, char *err, size_t errlen)
{
	struct vtl_label l;
	memset(&l, 0, sizeof l);
	if (!barcode || !barcode[0])
		return fail(err, errlen,
			    "the barcode is empty; LTO labels are 6 characters A-Z/0-9 plus a 2-character media suffix, "
			    "e.g. A00001L8");
	size_t n = strnlen(barcode, 64);
	for (size_t i = 0; i < n; i++) {
		if (is_label_char(barcode[i]))
			continue;
		unsigned char c = (unsigned char)barcode[i];
		if (c >= 'a' && c <= 'z')
			return fail(err, errlen, "barcode '%.64s' has the lower-case letter '%c'; LTO labels use upper case "
				    "A-Z and digits 0-9 (try '%c')", barcode, c, c - 'a' + 'A');
		if (c > ' ' && c <= '~')
			return fail(err, errlen, "barcode '%.64s' has the character '%c'; LTO labels use only A-Z and 0-9",
				    barcode, c);
		return fail(err, errlen, "barcode '%.64s' has a space or a non-printable character (byte 0x%02x at "
			    "position %zu); LTO labels use only A-Z and 0-9", barcode, c, i + 1);
	}
	if (n != VTL_LABEL_LEN)
		return fail(err, errlen, "barcode '%.64s' is %zu characters; LTO labels are 6 characters plus a 2-character "
			    "media suffix (L5..L9, LA, M8, LV..LZ; e.g. A00001L8)", barcode, n);
	memcpy(l.suffix, barcode + 6, 2);
	l.suffix[2] = 0;
	if (strncmp(barcode, "CLN", 3) == 0) {
		if (strcmp(l.suffix, "CU") != 0 && !(l.suffix[0] == 'L' && l.suffix[1] >= '1' && l.suffix[1] <= '9'))
			return fail(err, errlen, "cleaning label '%s' ends in '%s'; a cleaning label is CLN, 3 characters "
				    "A-Z/0-9, then CU or L1..L9 (e.g. CLN001CU)", barcode, l.suffix);
		l.media = CAT_MEDIA_CLEANING;
		l.cleaning = true;
		if (out)
			*out = l;
		return VTL_OK;
	}
	char s0 = l.suffix[0], s1 = l.suffix[1];
	if (s0 == 'L' && s1 >= '5' && s1 <= '9') {
		l.generation = (unsigned)(s1 - '0');
		l.media = (enum cat_media)(CAT_MEDIA_LTO5 + (int)(l.generation - 5));
	} else if (s0 == 'L' && s1 == 'A') {
		/* LTO-10 is generation "A" (IBM's LTFS, FreeBSD mt(1): "The barcode identifier for LTO-10 tapes is LA"). */
		l.generation = 10;
		l.media = CAT_MEDIA_LTO10;
	} else if (s0 == 'L' && s1 >= 'V' && s1 <= 'Z') {
		l.generation = 5u + (unsigned)(s1 - 'V');
		l.worm = true;
		l.media = (enum cat_media)(CAT_MEDIA_LTO5W + (int)(l.generation - 5));
	} else if (s0 == 'M' && s1 == '8') {
		l.generation = 7;
		l.type_m = true;
		l.media = CAT_MEDIA_LTO7;
	} else {
		for (size_t i = 0; i < VTL_ARRAY_SIZE(old_media); i++)
			if (strcmp(l.suffix, old_media[i].suffix) == 0)
				return fail(err, errlen, "barcode '%s' is %s media (%s), older than this library emulates; "
					    "use L5..L9, LA, M8 or LV..LZ", barcode, old_media[i].what, l.suffix);
		return fail(err, errlen, "barcode '%s' ends in '%s', which is not an LTO media identifier; use L5..L9, "
			    "LA (data), M8 (LTO-7 Type M), LV..LZ (WORM), or a cleaning label CLNxxxCU", barcode, l.suffix);
	}
	l.capacity = vtl_media_capacity(l.media, l.type_m);
	if (out)
		*out = l;
	return VTL_OK;
}

bool vtl_label_is_type_m(const char *barcode)
{
	return barcode && strlen(barcode) == VTL_LABEL_LEN && strcmp(barcode + 6, "M8") == 0 &&
	       strncmp(barcode, "CLN", 3) != 0;
}

const char *vtl_media_name(enum cat_media media, bool type_m)
{
	switch (media) {
	case CAT_MEDIA_LTO5: return "LTO5";
	case CAT_MEDIA_LTO6: return "LTO6";
	case CAT_MEDIA_LTO7: return type_m ? "LTO7M" : "LTO7";
	case CAT_MEDIA_LTO8: return "LTO8";
	case CAT_MEDIA_LTO9: return "LTO9";
	case CAT_MEDIA_LTO10: return "LTO10";
	case CAT_MEDIA_LTO5W: return "LTO5W";
	case CAT_MEDIA_LTO6W: return "LTO6W";
	case CAT_MEDIA_LTO7W: return "LTO7W";
	case CAT_MEDIA_LTO8W: return "LTO8W";
	case CAT_MEDIA_LTO9W: return "LTO9W";
	case CAT_MEDIA_CLEANING: return "CLN";
	}
	return NULL;
}

const char *vtl_media_describe(enum cat_media media, bool type_m)
{
	switch (media) {
	case CAT_MEDIA_LTO5: return "LTO-5";
	case CAT_MEDIA_LTO6: return "LTO-6";
	case CAT_MEDIA_LTO7: return type_m ? "LTO-7 Type M (M8)" : "LTO-7";
	case CAT_MEDIA_LTO8: return "LTO-8";
	case CAT_MEDIA_LTO9: return "LTO-9";
	case CAT_MEDIA_LTO10: return "LTO-10";
	case CAT_MEDIA_LTO5W: return "LTO-5 WORM";
	case CAT_MEDIA_LTO6W: return "LTO-6 WORM";
	case CAT_MEDIA_LTO7W: return "LTO-7 WORM";
	case CAT_MEDIA_LTO8W: return "LTO-8 WORM";
	case CAT_MEDIA_LTO9W: return "LTO-9 WORM";
	case CAT_MEDIA_CLEANING: return "cleaning";
	}
	return NULL;
}

int vtl_media_parse(const char *name, enum cat_media *media, bool *type_m)
{
	static const enum cat_media all[] = {
		CAT_MEDIA_LTO5, CAT_MEDIA_LTO6, CAT_MEDIA_LTO7, CAT_MEDIA_LTO8, CAT_MEDIA_LTO9, CAT_MEDIA_LTO10,
		CAT_MEDIA_LTO5W, CAT_MEDIA_LTO6W, CAT_MEDIA_LTO7W, CAT_MEDIA_LTO8W, CAT_MEDIA_LTO9W,
		CAT_MEDIA_CLEANING,
	};
	if (!name)
		return VTL_E_INVAL;
	bool m = false;
	enum cat_media v = CAT_MEDIA_CLEANING;
	bool found = false;
	if (strcasecmp(name, "LTO7M") == 0 || strcasecmp(name, "M8") == 0) {
		v = CAT_MEDIA_LTO7;
		m = true;
		found = true;
	} else if (strcasecmp(name, "CLEANING") == 0) {
		found = true;
	} else {
		for (size_t i = 0; i < VTL_ARRAY_SIZE(all); i++)
			if (strcasecmp(name, vtl_media_name(all[i], false)) == 0) {
				v = all[i];
				found = true;
				break;
			}
	}
	if (!found)
		return VTL_E_INVAL;
	if (media)
		*media = v;
	if (type_m)
		*type_m = m;
	return VTL_OK;
}

unsigned vtl_drive_generation(const char *vendor, const char *model)
{
	if (!vendor || !model)
		return 0;
	unsigned g;
	char tail;
	/* IBM full-height ULT3580-TDn and half-height ULT3580-HHn. */
	if (strcasecmp(vendor, "IBM") == 0 &&
	    (strncmp(model, "ULT3580-TD", 10) == 0 || strncmp(model, "ULT3580-HH", 10) == 0) &&
	    ((model[10] >= '5' && model[10] <= '9') || model[10] == 'A') && model[11] == 0)
		return model[10] == 'A' ? 10 : (unsigned)(model[10] - '0');
	/* HP / HPE "Ultrium n-SCSI". */
	if ((strcasecmp(vendor, "HP") == 0 || strcasecmp(vendor, "HPE") == 0) &&
	    sscanf(model, "Ultrium %u-SCSI%c", &g, &tail) == 1 && strlen(model) == 14 && g >= 5 && g <= 9)
		return g;
	return 0;
}

bool vtl_drive_accepts(unsigned gen, const struct vtl_label *label, bool *can_write)
{
	bool load = false, write = false;
	if (label->cleaning) {
		load = gen >= VTL_GEN_MIN && gen <= VTL_GEN_MAX;
	} else if (label->type_m) {
		load = write = gen == 8;
	} else if (gen == 10) {
		load = write = label->generation == 10; /* not backward compatible */
	} else if (gen >= VTL_GEN_MIN && gen <= 9) {
		unsigned c = label->generation;
		if (c == gen || c + 1 == gen) {
			load = write = true;
		} else if (gen <= 7 && c + 2 == gen) {
			load = true;
		}
	}
	if (can_write)
		*can_write = write;
	return load;
}

/* Start of the numeric tail of the 6-character volume serial; 6 if there is none. */
static size_t tail_start(const char *barcode)
{
	size_t i = 6;
	while (i > 0 && is_digit(barcode[i - 1]))
		i--;
	return i;
}

int vtl_label_next(const char *barcode, char out[VTL_LABEL_LEN + 1])
{
	if (!barcode || strlen(barcode) != VTL_LABEL_LEN)
		return VTL_E_INVAL;
	size_t t = tail_start(barcode);
	if (t == 6)
		return VTL_E_INVAL;
	memcpy(out, barcode, VTL_LABEL_LEN + 1);
	for (size_t i = 6; i-- > t;) {
		if (out[i] != '9') {
			out[i]++;
			return VTL_OK;
		}
		out[i] = '0';
	}
	return VTL_E_INVAL; /* all 9s: the range would need another digit */
}

int vtl_label_range(const char *first, const char *last, unsigned long *count, char *err, size_t errlen)
{
	if (!first || !last || strlen(first) != VTL_LABEL_LEN || strlen(last) != VTL_LABEL_LEN)
		return fail(err, errlen, "a range needs two 8-character labels");
	size_t t = tail_start(first);
	if (t == 6)
		return fail(err, errlen, "'%s' has no digits at the end of its 6-character serial to count with", first);
	if (memcmp(first, last, t) != 0 || strcmp(first + 6, last + 6) != 0)
		return fail(err, errlen, "'%s' and '%s' must differ only in the digits of '%.*s' (the numeric part "
			    "of the serial)", first, last, (int)(6 - t), first + t);
	unsigned long a = 0, b = 0;
	for (size_t i = t; i < 6; i++) {
		if (!is_digit(last[i]))
			return fail(err, errlen, "'%s' and '%s' must differ only in the digits of '%.*s' (the numeric "
				    "part of the serial)", first, last, (int)(6 - t), first + t);
		a = a * 10 + (unsigned long)(first[i] - '0');
		b = b * 10 + (unsigned long)(last[i] - '0');
	}
	if (b < a)
		return fail(err, errlen, "the range ends at '%s', before it starts at '%s'", last, first);
	*count = b - a + 1;
	return VTL_OK;
}
