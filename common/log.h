/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Logging with levels for the daemons: one line per event on stderr, with
 * the time and level, and to syslog when asked. When stderr is the journal
 * ($JOURNAL_STREAM names it), a line starts with its syslog priority as
 * "<N>" instead of the time, which the journal records itself.
 */
#ifndef VTL_COMMON_LOG_H
#define VTL_COMMON_LOG_H

#include <stdbool.h>
#include <stddef.h>

enum log_level { LOG_LEVEL_ERROR = 0, LOG_LEVEL_WARN, LOG_LEVEL_INFO, LOG_LEVEL_DEBUG };

/* Sets the lowest level written and whether lines also go to syslog as ident; looks whether stderr is the journal. */
void log_setup(enum log_level level, bool syslog, const char *ident);

/* Changes the lowest level written (a reload), while other threads log. */
void log_set_level(enum log_level level);

/* The lowest level written now. */
enum log_level log_get_level(void);

/* "error", "warn", "info" or "debug". */
const char *log_level_name(enum log_level level);

/* Parses "error", "warn", "info" or "debug"; -1 for anything else. */
int log_level_parse(const char *name);

/*
 * Copies in to out (cap bytes, NUL-terminated) with every byte that is not
 * printable text written as \xHH: controls (< 0x20, 0x7F), C1 controls and
 * bytes of invalid UTF-8. Stops before a character that would not fit;
 * returns the length written.
 */
size_t log_escape(const char *in, char *out, size_t cap);

/* Writes one line at level (printf format), its text escaped as log_escape does; thread safe. */
void log_msg(enum log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define log_error(...) log_msg(LOG_LEVEL_ERROR, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_LEVEL_WARN, __VA_ARGS__)
#define log_info(...) log_msg(LOG_LEVEL_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_LEVEL_DEBUG, __VA_ARGS__)

#endif
