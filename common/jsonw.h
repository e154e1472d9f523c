/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A JSON writer onto a stream: one document, indented two spaces a level,
 * strings escaped (control characters as \uXXXX, invalid UTF-8 as U+FFFD).
 * What vtlctl --json prints and vtld's /api serves from the catalog.
 */
#ifndef VTL_COMMON_JSONW_H
#define VTL_COMMON_JSONW_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct json {
	FILE *f;
	int depth;
	bool first[32];
};

/* Starts a document on f. */
void json_init(struct json *j, FILE *f);
/* Opens an object; key NULL inside an array or at the top. */
void json_obj(struct json *j, const char *key);
/* Closes the object opened last. */
void json_obj_end(struct json *j);
/* Opens an array; key as json_obj. */
void json_arr(struct json *j, const char *key);
/* Closes the array opened last. */
void json_arr_end(struct json *j);
/* A string member (v NULL: null). */
void json_str(struct json *j, const char *key, const char *v);
/* An unsigned number member. */
void json_u64(struct json *j, const char *key, uint64_t v);
/* A signed number member. */
void json_i64(struct json *j, const char *key, int64_t v);
/* A true or false member. */
void json_bool(struct json *j, const char *key, bool v);
/* A null member. */
void json_null(struct json *j, const char *key);
/* Ends the document with a newline. */
void json_end(struct json *j);

/* "2026-11-29T23:55:43Z" (UTC), as the documents write times. */
void fmt_time_iso(int64_t t, char *buf, size_t len);

#endif
