/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Logging with levels for the daemons: one line per event on stderr, with
 * the time and level, and to syslog when asked.
 */
#ifndef VTL_COMMON_LOG_H
#define VTL_COMMON_LOG_H

#include <stdbool.h>

enum log_level { LOG_LEVEL_ERROR = 0, LOG_LEVEL_WARN, LOG_LEVEL_INFO, LOG_LEVEL_DEBUG };

/* Sets the lowest level written and whether lines also go to syslog as ident. */
void log_setup(enum log_level level, bool syslog, const char *ident);

/* Parses "error", "warn", "info" or "debug"; -1 for anything else. */
int log_level_parse(const char *name);

/* Writes one line at level (printf format); thread safe. */
void log_msg(enum log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define log_error(...) log_msg(LOG_LEVEL_ERROR, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_LEVEL_WARN, __VA_ARGS__)
#define log_info(...) log_msg(LOG_LEVEL_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_LEVEL_DEBUG, __VA_ARGS__)

#endif
