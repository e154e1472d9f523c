/* SPDX-License-Identifier: Apache-2.0 */
#include "common/action_form.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "common/grow.h"
#include "common/vtl_error.h"

#define NAME_MAX_LEN 16                  /* a field's name: the longest argument name is "barcode" */
/* No argument is longer than a barcode or a physical library's name (ctlproto's own bounds). */
#define VALUE_MAX_LEN (CTLPROTO_NAME_MAX > VTL_BARCODE_MAX ? CTLPROTO_NAME_MAX : VTL_BARCODE_MAX)

/* The verbs an operator may post; the others are hints between the daemons, queries or reloads. */
static const enum ctlproto_verb actions[] = {
	CTLPROTO_MOVE, CTLPROTO_LOAD, CTLPROTO_UNLOAD, CTLPROTO_IMPORT,
	CTLPROTO_EXPORT, CTLPROTO_MIGRATE, CTLPROTO_VERIFY, CTLPROTO_RECALL, CTLPROTO_RELEASE,
};

struct field {
	char name[NAME_MAX_LEN + 1];
	char value[VALUE_MAX_LEN + 1];
	bool used;
};

static int hexval(int c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/*
 * Percent-decodes s[0..n) ('+' is a space) into out (cap bytes). False when
 * it is longer, a '%' is not two hex digits, or it holds a NUL (which would
 * cut the value short of what was sent).
 */
static bool decode(const char *s, size_t n, char *out, size_t cap)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		int c = (unsigned char)s[i];
		if (c == '+') {
			c = ' ';
		} else if (c == '%') {
			int h = i + 2 < n ? hexval((unsigned char)s[i + 1]) : -1;
			int l = i + 2 < n ? hexval((unsigned char)s[i + 2]) : -1;
			if (h < 0 || l < 0)
				return false;
			c = h * 16 + l;
			i += 2;
		}
		if (c == 0 || k + 1 >= cap)
			return false;
		out[k++] = (char)c;
	}
	out[k] = 0;
	return true;
}

/* Whether s is one word of printable ASCII (what one word of a control request may be). */
static bool one_word(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (*s <= ' ' || *s > '~')
			return false;
	return true;
}

/* The field called name, or NULL; marks it used. */
static struct field *take(struct field *f, unsigned n, const char *name)
{
	for (unsigned i = 0; i < n; i++)
		if (strcmp(f[i].name, name) == 0) {
			f[i].used = true;
			return &f[i];
		}
	return NULL;
}

/* The argument's field name: its usage placeholder or its word, in lower case. */
static void arg_field(const struct ctlproto_arg *a, char *out, size_t cap)
{
	size_t i = 0;
	for (; a->name[i] && i + 1 < cap; i++)
		out[i] = (char)tolower((unsigned char)a->name[i]);
	out[i] = 0;
}

/* "from, to": the fields verb v takes, for a refusal. */
static void fields_of(const struct ctlproto_verb_info *vi, char *out, size_t cap)
{
	size_t at = 0;
	out[0] = 0;
	for (unsigned i = 0; i < vi->nargs; i++) {
		char name[NAME_MAX_LEN + 1];
		arg_field(&vi->args[i], name, sizeof name);
		int w = snprintf(out + at, cap - at, "%s%s", i ? ", " : "", name);
		if (w < 0 || (size_t)w >= cap - at)
			return;
		at += (size_t)w;
	}
}

static int split_fields(const char *body, size_t len, struct field *f, unsigned *nf, char *err, size_t errlen)
{
	*nf = 0;
	size_t i = 0;
	while (i < len) {
		size_t end = i;
		while (end < len && body[end] != '&')
			end++;
		if (end > i) { /* "a&&b": an empty pair is skipped, as browsers do */
			const char *eq = memchr(body + i, '=', end - i);
			size_t nl = eq ? (size_t)(eq - (body + i)) : end - i;
			if (*nf == ACTION_FORM_FIELDS_MAX) {
				snprintf(err, errlen, "more than %d fields", ACTION_FORM_FIELDS_MAX);
				return VTL_E_INVAL;
			}
			struct field *x = &f[(*nf)++];
			memset(x, 0, sizeof *x);
			if (!decode(body + i, nl, x->name, sizeof x->name) || !one_word(x->name)) {
				snprintf(err, errlen, "field %u: its name is not a field of an action", *nf);
				return VTL_E_INVAL;
			}
			for (unsigned k = 0; k + 1 < *nf; k++)
				if (strcmp(f[k].name, x->name) == 0) {
					snprintf(err, errlen, "field %s is given twice", x->name);
					return VTL_E_INVAL;
				}
			const char *v = eq ? eq + 1 : body + end;
			if (!decode(v, (size_t)(body + end - v), x->value, sizeof x->value) || !one_word(x->value)) {
				snprintf(err, errlen, "field %s: give one word of printable characters, at most %d", x->name,
					 VALUE_MAX_LEN);
				return VTL_E_INVAL;
			}
		}
		i = end + 1;
	}
	return VTL_OK;
}

static int append(char *line, size_t cap, size_t *at, const char *word, char *err, size_t errlen)
{
	int w = snprintf(line + *at, cap - *at, "%s%s", *at ? " " : "", word);
	if (w < 0 || (size_t)w >= cap - *at) {
		snprintf(err, errlen, "the request is too long");
		return VTL_E_INVAL;
	}
	*at += (size_t)w;
	return VTL_OK;
}

int action_form_parse(const char *body, size_t len, char *line, size_t cap, enum ctlproto_daemon *daemon, char *err,
		      size_t errlen)
{
	struct field f[ACTION_FORM_FIELDS_MAX];
	unsigned nf;
	int rc = split_fields(body, len, f, &nf, err, errlen);
	if (rc)
		return rc;
	struct field *vf = take(f, nf, "verb");
	char known[128] = "";
	size_t kat = 0;
	const struct ctlproto_verb_info *vi = NULL;
	enum ctlproto_verb verb = CTLPROTO_STATUS;
	for (size_t i = 0; i < VTL_ARRAY_SIZE(actions); i++) {
		const struct ctlproto_verb_info *x = ctlproto_verb(actions[i]);
		int w = snprintf(known + kat, sizeof known - kat, "%s%s", i ? ", " : "", x->word);
		if (w > 0 && (size_t)w < sizeof known - kat)
			kat += (size_t)w;
		if (vf && strcmp(vf->value, x->word) == 0) {
			vi = x;
			verb = actions[i];
		}
	}
	if (!vi) {
		if (vf)
			snprintf(err, errlen, "verb %s is not an action; give one of %s", vf->value, known);
		else
			snprintf(err, errlen, "give the field verb: one of %s", known);
		return VTL_E_INVAL;
	}
	size_t at = 0;
	line[0] = 0;
	if ((rc = append(line, cap, &at, vi->word, err, errlen)))
		return rc;
	char usage[CTLPROTO_USAGE_MAX];
	ctlproto_usage(verb, usage, sizeof usage);
	bool gap = false; /* an optional positional left out: no later one may follow */
	for (unsigned i = 0; i < vi->nargs; i++) {
		const struct ctlproto_arg *a = &vi->args[i];
		char name[NAME_MAX_LEN + 1];
		arg_field(a, name, sizeof name);
		struct field *x = take(f, nf, name);
		bool keyword = a->kind == CTLPROTO_ARG_OPTION || a->kind == CTLPROTO_ARG_NAME; /* "drive 1", "library vault" */
		bool positional = a->kind != CTLPROTO_ARG_FLAG && !keyword;
		if (!x) {
			if (positional && !a->optional) {
				snprintf(err, errlen, "give the field %s (usage: %s)", name, usage);
				return VTL_E_INVAL;
			}
			gap |= positional;
			continue;
		}
		if (positional && gap) {
			snprintf(err, errlen, "field %s needs the ones before it (usage: %s)", name, usage);
			return VTL_E_INVAL;
		}
		if (a->kind == CTLPROTO_ARG_FLAG) {
			if (strcmp(x->value, "1") != 0) {
				snprintf(err, errlen, "field %s: give 1 (or leave it out)", name);
				return VTL_E_INVAL;
			}
			rc = append(line, cap, &at, a->name, err, errlen);
		} else {
			if (keyword && (rc = append(line, cap, &at, a->name, err, errlen)))
				return rc;
			rc = append(line, cap, &at, x->value, err, errlen);
		}
		if (rc)
			return rc;
	}
	for (unsigned i = 0; i < nf; i++)
		if (!f[i].used) {
			char takes[128];
			fields_of(vi, takes, sizeof takes);
			snprintf(err, errlen, "unknown field %s: %s takes %s%s", f[i].name, vi->word, takes[0] ? "verb, " : "verb",
				 takes);
			return VTL_E_INVAL;
		}
	struct ctlproto_request req;
	if ((rc = ctlproto_parse(line, at, vi->daemon, &req, err, errlen)))
		return rc;
	*daemon = vi->daemon;
	return VTL_OK;
}
