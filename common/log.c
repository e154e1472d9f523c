/* SPDX-License-Identifier: Apache-2.0 */
#include "common/lockorder.h"
#include "common/grow.h"
#include "common/log.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

/* Atomic: a reload changes it while other threads log. */
static _Atomic int threshold = LOG_LEVEL_INFO;
static bool to_syslog;
static bool to_journal;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

#define LINE_MAX_BYTES 1024 /* a formatted line longer than this is cut */
#define ESCAPED_MAX (LINE_MAX_BYTES * 4) /* every byte may become \xHH */

static const char *const names[] = {"error", "warn", "info", "debug"};
static const int priorities[] = {LOG_ERR, LOG_WARNING, LOG_INFO, LOG_DEBUG};

/*
 * Whether stderr is the journal's stream: systemd sets $JOURNAL_STREAM to
 * "DEVICE:INODE" of the stream it connected (systemd.exec(5)); comparing
 * them with stderr's tells a service's stderr from one a shell redirected.
 */
static bool stderr_is_journal(void)
{
	const char *v = getenv("JOURNAL_STREAM");
	if (!v || !*v)
		return false;
	char *end;
	unsigned long long dev = strtoull(v, &end, 10);
	if (end == v || *end != ':')
		return false;
	const char *ino_text = end + 1;
	unsigned long long ino = strtoull(ino_text, &end, 10);
	if (end == ino_text || *end)
		return false;
	struct stat st;
	if (fstat(STDERR_FILENO, &st) != 0)
		return false;
	return (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
}

void log_setup(enum log_level level, bool syslog_too, const char *ident)
{
	atomic_store(&threshold, (int)level);
	to_syslog = syslog_too;
	to_journal = stderr_is_journal();
	if (syslog_too)
		openlog(ident, LOG_PID, LOG_DAEMON);
}

void log_set_level(enum log_level level)
{
	atomic_store(&threshold, (int)level);
}

enum log_level log_get_level(void)
{
	return (enum log_level)atomic_load(&threshold);
}

const char *log_level_name(enum log_level level)
{
	return (unsigned)level < VTL_ARRAY_SIZE(names) ? names[level] : "?";
}

int log_level_parse(const char *name)
{
	for (int i = 0; i < (int)(VTL_ARRAY_SIZE(names)); i++)
		if (strcmp(name, names[i]) == 0)
			return i;
	return -1;
}

/*
 * The length of the well-formed UTF-8 sequence of a printable character at
 * p (RFC 3629: no overlong forms, no surrogates, nothing past U+10FFFF; C1
 * controls U+0080..U+009F are not printable), or 0.
 */
static size_t utf8_printable(const unsigned char *p)
{
	unsigned c = p[0];
	size_t n;
	unsigned cp, min;
	if (c >= 0xC2 && c <= 0xDF) {
		n = 2, cp = c & 0x1F, min = 0xA0;
	} else if (c >= 0xE0 && c <= 0xEF) {
		n = 3, cp = c & 0x0F, min = 0x800;
	} else if (c >= 0xF0 && c <= 0xF4) {
		n = 4, cp = c & 0x07, min = 0x10000;
	} else {
		return 0;
	}
	for (size_t i = 1; i < n; i++) {
		if ((p[i] & 0xC0) != 0x80)
			return 0; /* also stops at the NUL */
		cp = cp << 6 | (p[i] & 0x3F);
	}
	if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
		return 0;
	return n;
}

size_t log_escape(const char *in, char *out, size_t cap)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t at = 0;
	if (cap == 0)
		return 0;
	for (const unsigned char *p = (const unsigned char *)in; *p;) {
		size_t n = *p >= 0x20 && *p < 0x7F ? 1 : utf8_printable(p);
		if (n) {
			if (at + n >= cap)
				break;
			memcpy(out + at, p, n);
			at += n;
			p += n;
			continue;
		}
		if (at + 4 >= cap)
			break;
		out[at++] = '\\';
		out[at++] = 'x';
		out[at++] = hex[*p >> 4];
		out[at++] = hex[*p & 0xF];
		p++;
	}
	out[at] = 0;
	return at;
}

void log_msg(enum log_level level, const char *fmt, ...)
{
	if ((int)level > atomic_load(&threshold))
		return;
	char raw[LINE_MAX_BYTES], line[ESCAPED_MAX + 1];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(raw, sizeof raw, fmt, ap);
	va_end(ap);
	/* Values in a line come from hosts, files and operators: none may start a fake line or drive a terminal. */
	log_escape(raw, line, sizeof line);
	if (to_journal) {
		/* The journal stamps each line itself and reads "<N>" as its priority (sd-daemon(3)). */
		vtl_lock(&mu, VTL_LOCK_LOG);
		fprintf(stderr, "<%d>%-5s %s\n", priorities[level], names[level], line);
		if (to_syslog)
			syslog(priorities[level], "%s", line);
		vtl_unlock(&mu, VTL_LOCK_LOG);
		return;
	}
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	struct tm tm;
	gmtime_r(&ts.tv_sec, &tm);
	vtl_lock(&mu, VTL_LOCK_LOG);
	fprintf(stderr, "%04d-%02d-%02d %02d:%02d:%02d.%03ldZ %-5s %s\n", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
		tm.tm_hour, tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000, names[level], line);
	if (to_syslog)
		syslog(priorities[level], "%s", line);
	vtl_unlock(&mu, VTL_LOCK_LOG);
}
