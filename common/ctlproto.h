/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The control protocol's requests, as one table that both ends use: vtld
 * and vtl-migrator parse the line a client sent into a typed, validated
 * request and dispatch on its verb; vtlctl (and vtld, for its hints to the
 * migrator) build the line from typed values with the formatter. The
 * grammar, the bounds and the usage lines are therefore written once, here,
 * and docs/operations.md ("The control protocol") lists the same table
 * (tests/unit/test_ctlproto.c checks it).
 *
 * A request is one line (common/ctlsock.h carries it) of printable ASCII
 * words separated by spaces or tabs: the verb, its positional arguments in
 * order (the optional ones last), then its keyword flags and named options
 * in any order, each at most once. Numbers are decimal digits only.
 */
#ifndef VTL_COMMON_CTLPROTO_H
#define VTL_COMMON_CTLPROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/barcode.h"

/* SMC element addresses are 16 bits (SMC-3 READ ELEMENT STATUS); 0xFFFF means "no element" in the catalog. */
#define CTLPROTO_ELEMENT_MAX 0xFFFEu
#define CTLPROTO_DRIVE_MAX 15u       /* a physical drive number: migrator/phys.h PHYS_MAX_DRIVES (16), from 0 */
#define CTLPROTO_RATE_MAX 100000u    /* MB/s: far above any tape drive (LTO-9 streams 400 MB/s) */
#define CTLPROTO_JOB_MAX INT64_MAX   /* the catalog's job ids are SQLite rowids */
#define CTLPROTO_ARGS_MAX 5          /* the most arguments a verb takes (migrate: BARCODE and four options) */
#define CTLPROTO_WORDS_MAX 10        /* the most words a request has (migrate BARCODE drive N rate N native 1 library L) */
#define CTLPROTO_NAME_MAX 64         /* a physical library's name: catalog/catalog.h CAT_NAME_MAX */
#define CTLPROTO_USAGE_MAX 96        /* a usage line, with its NUL */

/* Which daemon answers a verb. */
enum ctlproto_daemon { CTLPROTO_VTLD, CTLPROTO_MIGRATOR };

enum ctlproto_verb {
	/* vtld */
	CTLPROTO_STATUS,
	CTLPROTO_MOVE,
	CTLPROTO_LOAD,
	CTLPROTO_UNLOAD,
	CTLPROTO_IMPORT,
	CTLPROTO_EXPORT,
	CTLPROTO_RELOAD,
	/* vtl-migrator */
	CTLPROTO_MIGRATE,
	CTLPROTO_VERIFY,
	CTLPROTO_RECALL,
	CTLPROTO_WAKE,
	CTLPROTO_YIELD,
	CTLPROTO_JOBS,
	CTLPROTO_CANCEL,
	CTLPROTO_SCAN,
	CTLPROTO_PHYSICAL,
	CTLPROTO_DRIVES,
	CTLPROTO_POLICY,
	CTLPROTO_RELEASE,
	CTLPROTO_INGEST,
	CTLPROTO_MIGRATOR_RELOAD,
	CTLPROTO_VERBS
};

/* The kinds of argument. */
enum ctlproto_kind {
	CTLPROTO_ARG_BARCODE, /* a cartridge barcode (vtl_barcode_check) */
	CTLPROTO_ARG_ELEMENT, /* an element address, 0..CTLPROTO_ELEMENT_MAX */
	CTLPROTO_ARG_ITEM,    /* an element address, or else a barcode: "1000" is an address, "000123L8" a barcode */
	CTLPROTO_ARG_JOB,     /* a job id, 1..CTLPROTO_JOB_MAX */
	CTLPROTO_ARG_FLAG,    /* a keyword ("force") */
	CTLPROTO_ARG_OPTION,  /* a keyword and its number ("drive 1"), within the argument's bounds */
	CTLPROTO_ARG_NAME,    /* a keyword and a name ("library vault"): 1 to CTLPROTO_NAME_MAX of [A-Za-z0-9._-] */
};

/* The named options (migrate, verify, recall; ingest: rate). */
enum ctlproto_option { CTLPROTO_OPT_DRIVE, CTLPROTO_OPT_RATE, CTLPROTO_OPT_NATIVE, CTLPROTO_OPTIONS };

/* The keyword flags, as bits of ctlproto_request.flags. */
#define CTLPROTO_FLAG_FORCE 1u /* release: give up a damaged disk copy */

struct ctlproto_arg {
	enum ctlproto_kind kind;
	const char *name;  /* positional: its placeholder in the usage ("FROM"); flag and option: its word ("drive") */
	const char *value; /* option: its value's placeholder ("N") */
	bool optional;     /* positional: may be left out (only the last ones may); flags and options always may */
	unsigned slot;     /* ELEMENT: its index in ctlproto_request.element; OPTION: its ctlproto_option; FLAG: its bit */
	uint64_t min, max; /* OPTION: the value's bounds */
};

struct ctlproto_verb_info {
	const char *word;
	enum ctlproto_daemon daemon;
	const char *summary; /* what it does, one line: the doc's table says the same */
	unsigned nargs;
	struct ctlproto_arg args[CTLPROTO_ARGS_MAX];
};

/* What move FROM and load WHAT name: an element address or a barcode. */
struct ctlproto_item {
	bool is_address;
	uint16_t address;
	char barcode[VTL_BARCODE_MAX + 1];
};

/* A request's values; each verb uses the fields its arguments name, the others stay zero. */
struct ctlproto_request {
	enum ctlproto_verb verb;
	struct ctlproto_item item;         /* move FROM, load WHAT */
	char barcode[VTL_BARCODE_MAX + 1]; /* import, migrate, verify, recall, wake, yield, release */
	uint16_t element[2];               /* move TO, load DRIVE, unload DRIVE [SLOT], import [IE], export IE */
	unsigned elements;                 /* how many of element[] are given */
	int64_t job;                       /* cancel */
	unsigned flags;                    /* CTLPROTO_FLAG_* given */
	bool given[CTLPROTO_OPTIONS];      /* the named options given */
	uint64_t option[CTLPROTO_OPTIONS]; /* their values */
	char library[CTLPROTO_NAME_MAX + 1]; /* migrate, verify, recall, physical, drives: the physical library; "": any */
};

/* The table's entry for verb v (v < CTLPROTO_VERBS). */
const struct ctlproto_verb_info *ctlproto_verb(enum ctlproto_verb v);

/* "vtld" or "vtl-migrator". */
const char *ctlproto_daemon_name(enum ctlproto_daemon d);

/* Writes v's usage line ("unload DRIVE [SLOT]") into buf (cap bytes, NUL-terminated, cut if short). */
void ctlproto_usage(enum ctlproto_verb v, char *buf, size_t cap);

/*
 * Parses one request line of len bytes (no newline; a trailing CR is
 * allowed) addressed to daemon into *req. VTL_OK; VTL_E_INVAL with err
 * (errlen bytes) saying what is wrong and, once the verb is known, its usage.
 */
int ctlproto_parse(const char *line, size_t len, enum ctlproto_daemon daemon, struct ctlproto_request *req, char *err,
		   size_t errlen);

/*
 * Writes the request line of *req into line (cap bytes, NUL-terminated, no
 * newline) after checking its values against the table: what the parser of
 * that line gives back equals *req. VTL_OK; VTL_E_INVAL with err saying which
 * value is wrong, or that cap is too small.
 */
int ctlproto_format(const struct ctlproto_request *req, char *line, size_t cap, char *err, size_t errlen);

/* Reads word (NUL-terminated) as move FROM and load WHAT read it. VTL_OK, or VTL_E_INVAL when it is neither. */
int ctlproto_item_parse(const char *word, struct ctlproto_item *out);

#endif
