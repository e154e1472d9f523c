/* SPDX-License-Identifier: Apache-2.0 */
/*
 * iSCSI text: the key=value lists of Login and Text PDUs (RFC 7143 6.1 and
 * section 13), parsed into pairs, built into data segments, and the value
 * kinds' negotiation rules (RFC 7143 6.2) as small pure functions.
 */
#ifndef VTL_ISCSI_TEXT_H
#define VTL_ISCSI_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ISCSI_KEY_MAX 63            /* bytes of a key name (RFC 7143 6.1) */
#define ISCSI_VALUE_MAX 255         /* bytes of a simple value unless a key says more (RFC 7143 6.1) */
#define ISCSI_LARGE_VALUE_MAX 8192  /* the most text a side must accept in one negotiation (RFC 7143 6.1) */
#define ISCSI_TEXT_MAX_PAIRS 128    /* more keys than RFC 7143 defines, with room for vendor keys */

/* Special values (RFC 7143 6.2). */
#define ISCSI_NOT_UNDERSTOOD "NotUnderstood"
#define ISCSI_IRRELEVANT "Irrelevant"
#define ISCSI_REJECT "Reject"

/* Why a text data segment was refused; the login answers all of these with "initiator error". */
enum iscsi_text_err {
	ISCSI_TEXT_OK = 0,
	ISCSI_TEXT_NO_EQUALS = -1,   /* a pair without '=' */
	ISCSI_TEXT_BAD_KEY = -2,     /* empty, or a character outside RFC 7143 6.1's key set */
	ISCSI_TEXT_KEY_LONG = -3,    /* key longer than ISCSI_KEY_MAX */
	ISCSI_TEXT_VALUE_LONG = -4,  /* value longer than ISCSI_LARGE_VALUE_MAX */
	ISCSI_TEXT_BAD_UTF8 = -5,    /* a value that is not UTF-8 */
	ISCSI_TEXT_DUPLICATE = -6,   /* a key given twice in one list (RFC 7143 6.1) */
	ISCSI_TEXT_TOO_MANY = -7,    /* more than ISCSI_TEXT_MAX_PAIRS pairs */
	ISCSI_TEXT_NO_MEMORY = -8,
};

struct iscsi_kv {
	const char *key, *value; /* NUL-terminated, into the list's own copy */
};

/* A parsed list: pairs in the order they came. */
struct iscsi_text {
	struct iscsi_kv kv[ISCSI_TEXT_MAX_PAIRS];
	unsigned n;
	char *buf; /* owned copy of the data */
};

/*
 * Parses a data segment of len bytes: pairs separated by NULs, the last one
 * with or without its NUL, empty strings between NULs ignored (padding).
 * On success fills *t (free with iscsi_text_free); on failure returns an
 * iscsi_text_err and leaves *t empty.
 */
int iscsi_text_parse(const uint8_t *data, size_t len, struct iscsi_text *t);

/* Frees t's copy and empties it (an empty or zeroed t is fine). */
void iscsi_text_free(struct iscsi_text *t);

/* The value of key in t (exact, case-sensitive, as RFC 7143 6.1 says), or NULL. */
const char *iscsi_text_get(const struct iscsi_text *t, const char *key);

/* A short English description of an iscsi_text_err. */
const char *iscsi_text_strerror(int err);

/* A data segment under construction: "key=value\0" appended; the first failure sticks. */
struct iscsi_text_buf {
	uint8_t *data;
	size_t len, cap;
	bool failed; /* out of memory at some point: the contents are incomplete */
};

/* Appends key=value; returns 0 or ISCSI_TEXT_NO_MEMORY (then b->failed stays set). */
int iscsi_text_add(struct iscsi_text_buf *b, const char *key, const char *value);

/* Appends key=<decimal n>; returns as iscsi_text_add. */
int iscsi_text_add_uint(struct iscsi_text_buf *b, const char *key, uint64_t n);

/* Frees b's data and empties it. */
void iscsi_text_buf_free(struct iscsi_text_buf *b);

/*
 * Parses a numerical value (RFC 7143 6.1: decimal, or 0x hex) within
 * [lo, hi]: 0, or -1 when malformed or out of range.
 */
int iscsi_parse_number(const char *s, uint64_t lo, uint64_t hi, uint64_t *out);

/* Parses "Yes" or "No" into *out: 0, or -1 for anything else. */
int iscsi_parse_bool(const char *s, bool *out);

/* Numerical negotiation (RFC 7143 6.2.2): the smaller (min keys) or larger (max keys) of the two. */
static inline uint64_t iscsi_neg_min(uint64_t offered, uint64_t ours)
{
	return offered < ours ? offered : ours;
}
static inline uint64_t iscsi_neg_max(uint64_t offered, uint64_t ours)
{
	return offered > ours ? offered : ours;
}

/* Boolean negotiation (RFC 7143 6.2.2): AND keys are Yes only if both say Yes, OR keys if either does. */
static inline bool iscsi_neg_and(bool offered, bool ours)
{
	return offered && ours;
}
static inline bool iscsi_neg_or(bool offered, bool ours)
{
	return offered || ours;
}

/*
 * List negotiation (RFC 7143 6.2.1): the index in acceptable[0..n) of the
 * first value of the comma-separated offer that is acceptable (the
 * offerer's order is its preference), or -1 if none is (answer "Reject").
 */
int iscsi_neg_list(const char *offer, const char *const *acceptable, size_t n);

#endif
