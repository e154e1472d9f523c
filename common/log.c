/* SPDX-License-Identifier: Apache-2.0 */
#include "common/log.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <syslog.h>
#include <time.h>

static enum log_level threshold = LOG_LEVEL_INFO;
static bool to_syslog;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

static const char *const names[] = {"error", "warn", "info", "debug"};
static const int priorities[] = {LOG_ERR, LOG_WARNING, LOG_INFO, LOG_DEBUG};

void log_setup(enum log_level level, bool syslog_too, const char *ident)
{
	threshold = level;
	to_syslog = syslog_too;
	if (syslog_too)
		openlog(ident, LOG_PID, LOG_DAEMON);
}

int log_level_parse(const char *name)
{
	for (int i = 0; i < (int)(sizeof names / sizeof names[0]); i++)
		if (strcmp(name, names[i]) == 0)
			return i;
	return -1;
}

void log_msg(enum log_level level, const char *fmt, ...)
{
	if (level > threshold)
		return;
	char line[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	struct tm tm;
	gmtime_r(&ts.tv_sec, &tm);
	pthread_mutex_lock(&mu);
	fprintf(stderr, "%04d-%02d-%02d %02d:%02d:%02d.%03ldZ %-5s %s\n", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
		tm.tm_hour, tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000, names[level], line);
	if (to_syslog)
		syslog(priorities[level], "%s", line);
	pthread_mutex_unlock(&mu);
}
