/* SPDX-License-Identifier: Apache-2.0 */
#include "common/ctlproto.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/ctlsock.h"
#include "common/vtl_error.h"

/* No argument is longer than a library name (a barcode has 32 bytes, a job id 19 digits at most). */
#define WORD_MAX (CTLPROTO_NAME_MAX > VTL_BARCODE_MAX ? CTLPROTO_NAME_MAX : VTL_BARCODE_MAX)

/* The arguments several verbs share. */
#define ARG_BARCODE {.kind = CTLPROTO_ARG_BARCODE, .name = "BARCODE"}
#define JOB_OPTIONS                                                                                                 \
	{.kind = CTLPROTO_ARG_OPTION, .name = "drive", .value = "N", .slot = CTLPROTO_OPT_DRIVE,                    \
	 .max = CTLPROTO_DRIVE_MAX},                                                                                \
	{.kind = CTLPROTO_ARG_OPTION, .name = "rate", .value = "MB/S", .slot = CTLPROTO_OPT_RATE, .min = 1,         \
	 .max = CTLPROTO_RATE_MAX},                                                                                 \
	{.kind = CTLPROTO_ARG_OPTION, .name = "native", .value = "0|1", .slot = CTLPROTO_OPT_NATIVE, .max = 1},   \
	ARG_LIBRARY
#define ARG_LIBRARY {.kind = CTLPROTO_ARG_NAME, .name = "library", .value = "NAME"}

static const struct ctlproto_verb_info verbs[CTLPROTO_VERBS] = {
	[CTLPROTO_STATUS] = {"status", CTLPROTO_VTLD, "the library, every drive (state, cartridge, position, MB/s, "
			     "buffers) and the pool's throttle", 0, {{0}}},
	[CTLPROTO_MOVE] = {"move", CTLPROTO_VTLD, "moves the cartridge at element FROM (or with barcode FROM) to "
			   "element TO, as MOVE MEDIUM does", 2,
			   {{.kind = CTLPROTO_ARG_ITEM, .name = "FROM"},
			    {.kind = CTLPROTO_ARG_ELEMENT, .name = "TO", .slot = 0}}},
	[CTLPROTO_LOAD] = {"load", CTLPROTO_VTLD, "loads WHAT (a barcode or an element address) into the drive at "
			   "element DRIVE", 2,
			   {{.kind = CTLPROTO_ARG_ITEM, .name = "WHAT"},
			    {.kind = CTLPROTO_ARG_ELEMENT, .name = "DRIVE", .slot = 0}}},
	[CTLPROTO_UNLOAD] = {"unload", CTLPROTO_VTLD, "unloads the drive at element DRIVE to SLOT, else to its "
			     "source slot, else the first empty one", 2,
			     {{.kind = CTLPROTO_ARG_ELEMENT, .name = "DRIVE", .slot = 0},
			      {.kind = CTLPROTO_ARG_ELEMENT, .name = "SLOT", .optional = true, .slot = 1}}},
	[CTLPROTO_IMPORT] = {"import", CTLPROTO_VTLD, "puts a cartridge from outside the library into mail slot IE, "
			     "else the first empty one (a new barcode: a new blank cartridge)", 2,
			     {ARG_BARCODE, {.kind = CTLPROTO_ARG_ELEMENT, .name = "IE", .optional = true, .slot = 0}}},
	[CTLPROTO_EXPORT] = {"export", CTLPROTO_VTLD, "takes the cartridge in mail slot IE out of the library", 1,
			     {{.kind = CTLPROTO_ARG_ELEMENT, .name = "IE", .slot = 0}}},
	[CTLPROTO_RELOAD] = {"reload", CTLPROTO_VTLD, "reads the configuration file again and applies the log level, "
			     "CHAP credentials, allowed initiators and throttle, or nothing", 0, {{0}}},
	[CTLPROTO_MIGRATE] = {"migrate", CTLPROTO_MIGRATOR, "queues a copy of the cartridge to physical tape (native 1: "
			      "the host's blocks one to one), on drive N, at MB/S, to library NAME", 5, {ARG_BARCODE, JOB_OPTIONS}},
	[CTLPROTO_VERIFY] = {"verify", CTLPROTO_MIGRATOR, "queues a check of the cartridge's tape copies against their "
			     "digests (in library NAME)", 5, {ARG_BARCODE, JOB_OPTIONS}},
	[CTLPROTO_RECALL] = {"recall", CTLPROTO_MIGRATOR, "queues a stage of a migrated cartridge back to the disk "
			     "pool (from library NAME)", 5, {ARG_BARCODE, JOB_OPTIONS}},
	[CTLPROTO_WAKE] = {"wake", CTLPROTO_MIGRATOR, "vtld's hint: a host loaded the migrated cartridge, its recall "
			   "is queued; run it now", 1, {ARG_BARCODE}},
	[CTLPROTO_YIELD] = {"yield", CTLPROTO_MIGRATOR, "vtld's hint: a host loads the cartridge; stop copying it", 1,
			    {ARG_BARCODE}},
	[CTLPROTO_JOBS] = {"jobs", CTLPROTO_MIGRATOR, "the recent jobs, the running one with its rate, ring and waits",
			   0, {{0}}},
	[CTLPROTO_CANCEL] = {"cancel", CTLPROTO_MIGRATOR, "cancels a queued or running job", 1,
			     {{.kind = CTLPROTO_ARG_JOB, .name = "JOB"}}},
	[CTLPROTO_SCAN] = {"scan", CTLPROTO_MIGRATOR, "adds the physical library's new tapes to the catalog", 0, {{0}}},
	[CTLPROTO_PHYSICAL] = {"physical", CTLPROTO_MIGRATOR, "each physical library's (or library NAME's) elements and "
			       "what they hold", 1, {ARG_LIBRARY}},
	[CTLPROTO_DRIVES] = {"drives", CTLPROTO_MIGRATOR, "every physical library's (or library NAME's) drives: state, "
			     "job, tape, MB/s, ring fill, waits, back-hitches", 1, {ARG_LIBRARY}},
	[CTLPROTO_POLICY] = {"policy", CTLPROTO_MIGRATOR, "the cache policy: pool fill, marks, and its last pass", 0,
			     {{0}}},
	[CTLPROTO_RELEASE] = {"release", CTLPROTO_MIGRATOR, "gives up the disk copy of a premigrated cartridge (force: "
			      "a damaged one)", 2,
			      {ARG_BARCODE, {.kind = CTLPROTO_ARG_FLAG, .name = "force", .slot = CTLPROTO_FLAG_FORCE}}},
	[CTLPROTO_INGEST] = {"ingest", CTLPROTO_MIGRATOR, "vtld's hint: the hosts move MB/S through the drives now "
			     "(none given: 0), which copies leave them", 1,
			     {{.kind = CTLPROTO_ARG_OPTION, .name = "rate", .value = "MB/S", .slot = CTLPROTO_OPT_RATE,
			       .max = CTLPROTO_RATE_MAX}}},
	[CTLPROTO_MIGRATOR_RELOAD] = {"reload", CTLPROTO_MIGRATOR, "reads the configuration file again and applies "
				      "the log level, rates and cache policy, or nothing", 0, {{0}}},
};

const struct ctlproto_verb_info *ctlproto_verb(enum ctlproto_verb v)
{
	return &verbs[v];
}

const char *ctlproto_daemon_name(enum ctlproto_daemon d)
{
	return d == CTLPROTO_VTLD ? "vtld" : "vtl-migrator";
}

/*
 * Appends to buf (cap bytes) at *at, cut at cap and kept NUL-terminated.
 * Unlike jo_printf, *at then counts what did not fit too, so that the
 * formatter can tell a cut line (which would be another request) from a whole one.
 */
static void vput(char *buf, size_t cap, size_t *at, const char *fmt, va_list ap) __attribute__((format(printf, 4, 0)));
static void vput(char *buf, size_t cap, size_t *at, const char *fmt, va_list ap)
{
	if (*at >= cap)
		return;
	int n = vsnprintf(buf + *at, cap - *at, fmt, ap);
	*at = n < 0 ? cap : *at + (size_t)n;
}

static void put(char *buf, size_t cap, size_t *at, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void put(char *buf, size_t cap, size_t *at, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vput(buf, cap, at, fmt, ap);
	va_end(ap);
}

static bool positional(const struct ctlproto_arg *a)
{
	return a->kind != CTLPROTO_ARG_FLAG && a->kind != CTLPROTO_ARG_OPTION && a->kind != CTLPROTO_ARG_NAME;
}

void ctlproto_usage(enum ctlproto_verb v, char *buf, size_t cap)
{
	const struct ctlproto_verb_info *vi = &verbs[v];
	size_t at = 0;
	if (cap)
		buf[0] = 0;
	put(buf, cap, &at, "%s", vi->word);
	for (unsigned i = 0; i < vi->nargs; i++) {
		const struct ctlproto_arg *a = &vi->args[i];
		if (positional(a))
			put(buf, cap, &at, a->optional ? " [%s]" : " %s", a->name);
		else if (a->kind == CTLPROTO_ARG_FLAG)
			put(buf, cap, &at, " [%s]", a->name);
		else
			put(buf, cap, &at, " [%s %s]", a->name, a->value);
	}
}

/* ------------------------------------------------------------ parsing */

/* One word of the line: where it starts and how long it is. */
struct word {
	const char *p;
	size_t n;
};

/* What the parser is at: the verb (once known) and the error's buffer. */
struct parse {
	const struct ctlproto_verb_info *vi;
	enum ctlproto_verb verb;
	char *err;
	size_t errlen;
};

/* Reports a malformed request: "VERB: what; usage: USAGE" once the verb is known. VTL_E_INVAL. */
static int refuse(struct parse *ps, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int refuse(struct parse *ps, const char *fmt, ...)
{
	size_t at = 0;
	if (ps->errlen)
		ps->err[0] = 0;
	if (ps->vi)
		put(ps->err, ps->errlen, &at, "%s: ", ps->vi->word);
	va_list ap;
	va_start(ap, fmt);
	vput(ps->err, ps->errlen, &at, fmt, ap);
	va_end(ap);
	if (ps->vi) {
		char usage[CTLPROTO_USAGE_MAX];
		ctlproto_usage(ps->verb, usage, sizeof usage);
		put(ps->err, ps->errlen, &at, "; usage: %s", usage);
	}
	return VTL_E_INVAL;
}

/* The verbs daemon answers, for the message about a verb it does not know: "status, move, ...". */
static void daemon_verbs(enum ctlproto_daemon daemon, char *buf, size_t cap)
{
	size_t at = 0;
	if (cap)
		buf[0] = 0;
	for (unsigned v = 0; v < CTLPROTO_VERBS; v++)
		if (verbs[v].daemon == daemon)
			put(buf, cap, &at, "%s%s", at ? ", " : "", verbs[v].word);
}

/* A decimal number of digits only (no sign, no space: strtoull would take both) within min..max. */
static bool number(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	if (*s < '0' || *s > '9')
		return false;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (*end || errno == ERANGE || v < min || v > max)
		return false;
	*out = v;
	return true;
}

int ctlproto_item_parse(const char *word, struct ctlproto_item *out)
{
	uint64_t v;
	memset(out, 0, sizeof *out);
	if (number(word, 0, CTLPROTO_ELEMENT_MAX, &v)) {
		out->is_address = true;
		out->address = (uint16_t)v;
		return VTL_OK;
	}
	if (vtl_barcode_check(word) != VTL_OK)
		return VTL_E_INVAL;
	memcpy(out->barcode, word, strlen(word) + 1); /* vtl_barcode_check bounds it by VTL_BARCODE_MAX */
	return VTL_OK;
}

/* Reads one positional argument's word w (NUL-terminated) into req. */
static int positional_value(struct parse *ps, const struct ctlproto_arg *a, const char *w,
			    struct ctlproto_request *req)
{
	uint64_t v;
	switch (a->kind) {
	case CTLPROTO_ARG_BARCODE:
		if (vtl_barcode_check(w) != VTL_OK)
			return refuse(ps, "%s '%s' is not a barcode (1 to %d printable characters, no '/' or '\\', not "
				      "starting with '.')", a->name, w, VTL_BARCODE_MAX);
		memcpy(req->barcode, w, strlen(w) + 1);
		return VTL_OK;
	case CTLPROTO_ARG_ELEMENT:
		if (!number(w, 0, CTLPROTO_ELEMENT_MAX, &v))
			return refuse(ps, "%s '%s' is not an element address (0 to %u)", a->name, w, CTLPROTO_ELEMENT_MAX);
		req->element[a->slot] = (uint16_t)v;
		req->elements = a->slot + 1;
		return VTL_OK;
	case CTLPROTO_ARG_ITEM:
		if (ctlproto_item_parse(w, &req->item) != VTL_OK)
			return refuse(ps, "%s '%s' is neither an element address (0 to %u) nor a barcode", a->name, w,
				      CTLPROTO_ELEMENT_MAX);
		return VTL_OK;
	case CTLPROTO_ARG_JOB:
		if (!number(w, 1, CTLPROTO_JOB_MAX, &v))
			return refuse(ps, "%s '%s' is not a job id (1 to %lld)", a->name, w, (long long)CTLPROTO_JOB_MAX);
		req->job = (int64_t)v;
		return VTL_OK;
	case CTLPROTO_ARG_FLAG:
	case CTLPROTO_ARG_OPTION:
	case CTLPROTO_ARG_NAME:
		break;
	}
	return refuse(ps, "%s is not a positional argument", a->name);
}

/* A library name: what [physical NAME] takes. */
static bool name_ok(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n > CTLPROTO_NAME_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9') ||
		      strchr("._-", s[i])))
			return false;
	return true;
}

/* The verb's flag or option whose word is w, or NULL. */
static const struct ctlproto_arg *named(const struct ctlproto_verb_info *vi, const char *w)
{
	for (unsigned i = 0; i < vi->nargs; i++)
		if (!positional(&vi->args[i]) && strcmp(vi->args[i].name, w) == 0)
			return &vi->args[i];
	return NULL;
}

/* Splits line into words (at most CTLPROTO_WORDS_MAX + 1 are kept: one more is already too many). */
static unsigned split(const char *line, size_t len, struct word *w)
{
	unsigned n = 0;
	for (size_t i = 0; i < len && n <= CTLPROTO_WORDS_MAX;) {
		if (line[i] == ' ' || line[i] == '\t') {
			i++;
			continue;
		}
		size_t start = i;
		while (i < len && line[i] != ' ' && line[i] != '\t')
			i++;
		w[n++] = (struct word){line + start, i - start};
	}
	return n;
}

/* The first byte that has no place in a request (a NUL, a control byte, a byte above ASCII), or len. */
static size_t stray_byte(const char *line, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)line[i];
		if ((c < ' ' && c != '\t') || c > '~')
			return i;
	}
	return len;
}

int ctlproto_parse(const char *line, size_t len, enum ctlproto_daemon daemon, struct ctlproto_request *req, char *err,
		   size_t errlen)
{
	struct parse ps = {.err = err, .errlen = errlen};
	memset(req, 0, sizeof *req);
	if (len >= CTLSOCK_REQUEST_MAX)
		return refuse(&ps, "request longer than %d bytes", CTLSOCK_REQUEST_MAX - 1);
	if (len && line[len - 1] == '\r') /* a CRLF line ending, as a terminal or nc may send */
		len--;
	size_t bad = stray_byte(line, len);
	if (bad < len)
		return refuse(&ps, "byte %zu of the request is 0x%02x: a request is printable ASCII words", bad,
			      (unsigned char)line[bad]);
	struct word w[CTLPROTO_WORDS_MAX + 1];
	unsigned n = split(line, len, w);
	char known[256];
	daemon_verbs(daemon, known, sizeof known);
	if (n == 0)
		return refuse(&ps, "empty request; %s answers %s", ctlproto_daemon_name(daemon), known);
	unsigned v = 0;
	/* A word two daemons answer (reload) has an entry for each: the one of this daemon, else the first. */
	unsigned first = CTLPROTO_VERBS;
	for (v = 0; v < CTLPROTO_VERBS; v++) {
		if (strlen(verbs[v].word) != w[0].n || memcmp(verbs[v].word, w[0].p, w[0].n) != 0)
			continue;
		if (first == CTLPROTO_VERBS)
			first = v;
		if (verbs[v].daemon == daemon)
			break;
	}
	if (v == CTLPROTO_VERBS)
		v = first;
	if (v == CTLPROTO_VERBS)
		return refuse(&ps, "unknown request '%.*s'; %s answers %s", (int)(w[0].n < VTL_BARCODE_MAX ? w[0].n : VTL_BARCODE_MAX),
			      w[0].p, ctlproto_daemon_name(daemon), known);
	if (verbs[v].daemon != daemon)
		return refuse(&ps, "'%s' is a request for %s, not %s", verbs[v].word, ctlproto_daemon_name(verbs[v].daemon),
			      ctlproto_daemon_name(daemon));
	ps.vi = &verbs[v];
	ps.verb = (enum ctlproto_verb)v;
	req->verb = ps.verb;
	if (n > CTLPROTO_WORDS_MAX)
		return refuse(&ps, "too many words");
	char text[CTLPROTO_WORDS_MAX][WORD_MAX + 1];
	for (unsigned i = 1; i < n; i++) {
		if (w[i].n > WORD_MAX)
			return refuse(&ps, "word %u ('%.*s...') is longer than %d bytes", i + 1, VTL_BARCODE_MAX, w[i].p,
				      WORD_MAX);
		memcpy(text[i], w[i].p, w[i].n);
		text[i][w[i].n] = 0;
	}
	unsigned at = 1;
	for (unsigned i = 0; i < ps.vi->nargs; i++) {
		const struct ctlproto_arg *a = &ps.vi->args[i];
		if (!positional(a))
			continue;
		/* A required one takes the next word whatever it is: a cartridge may be called "force". */
		if (at == n || (a->optional && named(ps.vi, text[at]))) {
			if (a->optional)
				break; /* only the last positionals are optional: none follows */
			return refuse(&ps, "missing %s", a->name);
		}
		int rc = positional_value(&ps, a, text[at++], req);
		if (rc)
			return rc;
	}
	for (; at < n; at++) {
		const struct ctlproto_arg *a = named(ps.vi, text[at]);
		if (!a)
			return refuse(&ps, ps.vi->nargs ? "'%s' is not an argument of %s" : "'%s': %s takes no arguments",
				      text[at], ps.vi->word);
		if (a->kind == CTLPROTO_ARG_FLAG) {
			if (req->flags & a->slot)
				return refuse(&ps, "%s is given twice", a->name);
			req->flags |= a->slot;
			continue;
		}
		if (a->kind == CTLPROTO_ARG_NAME) {
			if (req->library[0])
				return refuse(&ps, "%s is given twice", a->name);
			if (at + 1 == n)
				return refuse(&ps, "%s needs a value (%s)", a->name, a->value);
			if (!name_ok(text[++at]))
				return refuse(&ps, "%s '%s': give a name of 1 to %d letters, digits, '.', '_' or '-'", a->name,
					      text[at], CTLPROTO_NAME_MAX);
			memcpy(req->library, text[at], strlen(text[at]) + 1);
			continue;
		}
		if (req->given[a->slot])
			return refuse(&ps, "%s is given twice", a->name);
		if (at + 1 == n)
			return refuse(&ps, "%s needs a value (%s)", a->name, a->value);
		uint64_t val;
		if (!number(text[++at], a->min, a->max, &val))
			return refuse(&ps, "%s '%s': give a number from %llu to %llu", a->name, text[at],
				      (unsigned long long)a->min, (unsigned long long)a->max);
		req->given[a->slot] = true;
		req->option[a->slot] = val;
	}
	return VTL_OK;
}

/* ---------------------------------------------------------- formatting */

/* Appends one positional argument's value to line; VTL_E_INVAL (reported) when it breaks the table's rule. */
static int format_positional(struct parse *ps, const struct ctlproto_arg *a, const struct ctlproto_request *req,
			     char *line, size_t cap, size_t *at)
{
	switch (a->kind) {
	case CTLPROTO_ARG_BARCODE:
		if (vtl_barcode_check(req->barcode) != VTL_OK)
			return refuse(ps, "%s '%.*s' is not a barcode", a->name, VTL_BARCODE_MAX, req->barcode);
		put(line, cap, at, " %s", req->barcode);
		return VTL_OK;
	case CTLPROTO_ARG_ELEMENT:
		if (req->element[a->slot] > CTLPROTO_ELEMENT_MAX)
			return refuse(ps, "%s %u is not an element address", a->name, req->element[a->slot]);
		put(line, cap, at, " %u", req->element[a->slot]);
		return VTL_OK;
	case CTLPROTO_ARG_ITEM: {
		const struct ctlproto_item *it = &req->item;
		if (it->is_address) {
			if (it->address > CTLPROTO_ELEMENT_MAX)
				return refuse(ps, "%s %u is not an element address", a->name, it->address);
			put(line, cap, at, " %u", it->address);
			return VTL_OK;
		}
		struct ctlproto_item back;
		if (ctlproto_item_parse(it->barcode, &back) != VTL_OK || back.is_address)
			return refuse(ps, "%s '%.*s' is not a barcode that reads as one (a number up to %u is an address)",
				      a->name, VTL_BARCODE_MAX, it->barcode, CTLPROTO_ELEMENT_MAX);
		put(line, cap, at, " %s", it->barcode);
		return VTL_OK;
	}
	case CTLPROTO_ARG_JOB:
		if (req->job < 1)
			return refuse(ps, "%s %lld is not a job id", a->name, (long long)req->job);
		put(line, cap, at, " %lld", (long long)req->job);
		return VTL_OK;
	case CTLPROTO_ARG_FLAG:
	case CTLPROTO_ARG_OPTION:
	case CTLPROTO_ARG_NAME:
		break;
	}
	return refuse(ps, "%s is not a positional argument", a->name);
}

int ctlproto_format(const struct ctlproto_request *req, char *line, size_t cap, char *err, size_t errlen)
{
	struct parse ps = {.err = err, .errlen = errlen};
	if (cap)
		line[0] = 0;
	if ((unsigned)req->verb >= CTLPROTO_VERBS)
		return refuse(&ps, "no verb %u", (unsigned)req->verb);
	ps.vi = &verbs[req->verb];
	ps.verb = req->verb;
	size_t at = 0;
	put(line, cap, &at, "%s", ps.vi->word);
	unsigned elements = 0, flags = 0;
	bool options[CTLPROTO_OPTIONS] = {false}, library = false;
	for (unsigned i = 0; i < ps.vi->nargs; i++) {
		const struct ctlproto_arg *a = &ps.vi->args[i];
		if (a->kind == CTLPROTO_ARG_NAME) {
			library = true;
			if (!req->library[0])
				continue;
			if (!name_ok(req->library))
				return refuse(&ps, "%s '%.*s': give a name of 1 to %d letters, digits, '.', '_' or '-'", a->name,
					      CTLPROTO_NAME_MAX, req->library, CTLPROTO_NAME_MAX);
			put(line, cap, &at, " %s %s", a->name, req->library);
			continue;
		}
		if (a->kind == CTLPROTO_ARG_ELEMENT) {
			if (a->slot >= req->elements) {
				if (a->optional)
					continue;
				return refuse(&ps, "missing %s", a->name);
			}
			elements++;
		}
		if (a->kind == CTLPROTO_ARG_FLAG) {
			flags |= a->slot;
			if (req->flags & a->slot)
				put(line, cap, &at, " %s", a->name);
			continue;
		}
		if (a->kind == CTLPROTO_ARG_OPTION) {
			options[a->slot] = true;
			uint64_t v = req->option[a->slot];
			if (!req->given[a->slot])
				continue;
			if (v < a->min || v > a->max)
				return refuse(&ps, "%s %llu: give a number from %llu to %llu", a->name, (unsigned long long)v,
					      (unsigned long long)a->min, (unsigned long long)a->max);
			put(line, cap, &at, " %s %llu", a->name, (unsigned long long)v);
			continue;
		}
		int rc = format_positional(&ps, a, req, line, cap, &at);
		if (rc)
			return rc;
	}
	/* Values the verb does not take would not come back from the line: refused, not dropped. */
	if (req->elements != elements || (req->flags & ~flags) || (req->library[0] && !library))
		return refuse(&ps, "a value that %s does not take", ps.vi->word);
	for (unsigned o = 0; o < CTLPROTO_OPTIONS; o++)
		if (req->given[o] && !options[o])
			return refuse(&ps, "an option that %s does not take", ps.vi->word);
	if (at >= cap || at >= CTLSOCK_REQUEST_MAX)
		return refuse(&ps, "the request needs %zu bytes, more than %zu", at + 1,
			      cap < CTLSOCK_REQUEST_MAX ? cap : (size_t)CTLSOCK_REQUEST_MAX);
	return VTL_OK;
}
