/* SPDX-License-Identifier: Apache-2.0 */
#include "config/config.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <grp.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netdb.h>
#include <netinet/in.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

/* The Makefile passes its sysconfdir (docs/install.md); a build without it still names a real place. */
#ifndef VTL_SYSCONFDIR
#define VTL_SYSCONFDIR "/usr/local/etc"
#endif

#include "common/grow.h"
#include "common/vtl_error.h"
#include "config/media.h"

#define LINE_MAX_LEN 4096
/* A file with secrets may be read by its owner and group (0640), written by its owner only. */
#define SECRET_MODE_REFUSED (S_IWGRP | S_IROTH | S_IWOTH)
#define ADDR_MAX 0xFFFEu /* 0xFFFF is CAT_NO_ELEMENT */

/* ------------------------------------------------------------------ sizes */

int vtl_parse_uint(const char *s, uint64_t max, uint64_t *out)
{
	if (!s || !*s)
		return VTL_E_INVAL;
	uint64_t v = 0;
	for (const char *p = s; *p; p++) {
		if (*p < '0' || *p > '9')
			return VTL_E_INVAL;
		unsigned d = (unsigned)(*p - '0');
		if (v > (UINT64_MAX - d) / 10)
			return VTL_E_INVAL;
		v = v * 10 + d;
	}
	if (v > max)
		return VTL_E_INVAL;
	*out = v;
	return VTL_OK;
}

int vtl_parse_duration(const char *s, uint64_t max, uint64_t *out)
{
	static const struct {
		char unit;
		uint64_t seconds;
	} units[] = {{'s', 1}, {'m', 60}, {'h', 3600}, {'d', 86400}};
	if (!s || !*s)
		return VTL_E_INVAL;
	size_t n = strlen(s);
	uint64_t mul = 1;
	char num[32];
	for (size_t i = 0; i < VTL_ARRAY_SIZE(units); i++)
		if (tolower((unsigned char)s[n - 1]) == units[i].unit) {
			mul = units[i].seconds;
			n--;
			break; /* one unit: "1hs" is not a duration */
		}
	if (n == 0 || n >= sizeof num)
		return VTL_E_INVAL;
	memcpy(num, s, n);
	num[n] = 0;
	uint64_t v;
	if (vtl_parse_uint(num, UINT64_MAX / mul, &v) || v * mul > max)
		return VTL_E_INVAL;
	*out = v * mul;
	return VTL_OK;
}

int vtl_parse_size(const char *s, bool binary, uint64_t *out)
{
	if (!s)
		return VTL_E_INVAL;
	const char *p = s;
	uint64_t v = 0, frac = 0, fdiv = 1;
	if (*p < '0' || *p > '9')
		return VTL_E_INVAL;
	for (; *p >= '0' && *p <= '9'; p++) {
		unsigned d = (unsigned)(*p - '0');
		if (v > (UINT64_MAX - d) / 10)
			return VTL_E_INVAL;
		v = v * 10 + d;
	}
	if (*p == '.') {
		p++;
		if (*p < '0' || *p > '9')
			return VTL_E_INVAL;
		for (; *p >= '0' && *p <= '9'; p++) {
			if (fdiv >= 1000000000ull)
				return VTL_E_INVAL; /* more than 9 decimals */
			frac = frac * 10 + (unsigned)(*p - '0');
			fdiv *= 10;
		}
	}
	while (*p == ' ' || *p == '\t')
		p++;
	unsigned exp = 0;
	switch (*p) {
	case 0: break;
	case 'k': case 'K': exp = 1; break;
	case 'm': case 'M': exp = 2; break;
	case 'g': case 'G': exp = 3; break;
	case 't': case 'T': exp = 4; break;
	case 'p': case 'P': exp = 5; break;
	default: return VTL_E_INVAL;
	}
	uint64_t base = binary ? 1024 : 1000;
	if (exp) {
		p++;
		if ((p[0] == 'i' || p[0] == 'I') && (p[1] == 'b' || p[1] == 'B') && !p[2])
			base = 1024;
		else if ((p[0] == 'b' || p[0] == 'B') && !p[1])
			base = 1000;
		else if (*p)
			return VTL_E_INVAL;
	}
	uint64_t mult = 1;
	for (unsigned i = 0; i < exp; i++)
		mult *= base;
	if (v > UINT64_MAX / mult)
		return VTL_E_INVAL;
	v *= mult;
	/* The fraction must come to whole bytes: 1.5K is 1536 (or 1500), 0.3 bytes is refused. */
	unsigned __int128 f = (unsigned __int128)frac * mult;
	if (f % fdiv)
		return VTL_E_INVAL;
	f /= fdiv;
	if (f > UINT64_MAX - v)
		return VTL_E_INVAL;
	*out = v + (uint64_t)f;
	return VTL_OK;
}

/* ------------------------------------------------------------------ paths */

/* Lexically normalizes an absolute path in place: no //, no /./, no /../, no trailing /. */
static void path_normalize(char *p)
{
	char *out = p;
	const char *in = p;
	size_t n = strlen(p);
	char *end = p + n;
	*out++ = '/';
	while (in < end) {
		while (in < end && *in == '/')
			in++;
		const char *seg = in;
		while (in < end && *in != '/')
			in++;
		size_t len = (size_t)(in - seg);
		if (len == 0 || (len == 1 && seg[0] == '.'))
			continue;
		if (len == 2 && seg[0] == '.' && seg[1] == '.') {
			if (out > p + 1) {
				out--; /* the '/' after the last kept segment */
				while (out > p + 1 && out[-1] != '/')
					out--;
			}
			continue;
		}
		memmove(out, seg, len);
		out += len;
		*out++ = '/';
	}
	if (out > p + 1)
		out--;
	*out = 0;
}

/* dir + "/" + rel (or rel if absolute), normalized, malloc'ed; NULL if out of memory. */
static char *path_resolve(const char *dir, const char *rel)
{
	size_t n = (rel[0] == '/' ? 0 : strlen(dir) + 1) + strlen(rel) + 2;
	char *p = malloc(n);
	if (!p)
		return NULL;
	if (rel[0] == '/')
		snprintf(p, n, "%s", rel);
	else
		snprintf(p, n, "%s/%s", dir, rel);
	path_normalize(p);
	return p;
}

/* ----------------------------------------------------------------- parser */

enum section {
	SEC_NONE, SEC_LIBRARY, SEC_DRIVE, SEC_POOL, SEC_CATALOG, SEC_ISCSI, SEC_DAEMON, SEC_PHYSICAL, SEC_MIGRATOR,
	SEC_POLICY, SEC_INITIATOR, SEC_COUNT
};

static const char *const section_names[SEC_COUNT] = {
	"", "library", "drive", "pool", "catalog", "iscsi", "daemon", "physical", "migrator", "policy", "initiator",
};

enum ktype {
	K_NAME,   /* [A-Za-z0-9._-], 1..cap-1 */
	K_T10,    /* printable ASCII (INQUIRY fields), 1..cap-1 */
	K_SERIAL, /* [A-Za-z0-9._-], 1..cap-1 */
	K_UINT,   /* unsigned, min..max */
	K_ADDR,   /* uint16_t element address, 0..ADDR_MAX */
	K_SIZE,   /* uint64_t size with a binary unit, min..max (0 max: no limit) */
	K_INT,    /* int, min..max */
	K_PATH,   /* char *, absolute */
	K_MEMBER, /* pool member: appended */
	K_HOST,   /* listen address: no blanks */
	K_IQN,    /* iSCSI qualified name */
	K_LEVEL,  /* log level */
	K_TEXT,   /* printable ASCII, blanks allowed (an alias, a CHAP name), 1..cap-1 */
	K_SECRET, /* CHAP secret: printable ASCII, VTL_CFG_CHAP_SECRET_MIN..cap-1; never echoed in messages */
	K_BOOL,   /* yes/no */
	K_INITIATOR, /* allowed initiator name: appended */
	K_DEVNODE, /* [physical] drive / drive_sg: an absolute /dev path, appended */
	K_DURATION, /* unsigned seconds, written with an optional unit s/m/h/d, min..max */
	K_RULES,   /* [policy] premigrate: a comma list of full, ejected, idle, or none */
	K_POOLS,   /* [policy] copy_pools: a comma list of 1 or 2 distinct pool names */
	K_LIBPOOLS, /* [physical NAME] pools: a comma list of 1 to VTL_CFG_MAX_LIB_POOLS distinct pool names */
	K_GROUP,   /* struct vtl_cfg_group: the name of a group that exists on this host */
	K_DRIVES,  /* unsigned: "all" (0) or a count, min..max */
	K_RATE,    /* unsigned: "auto" (VTL_CFG_POOL_RATE_AUTO) or MB/s, min..max */
	K_LISTEN,  /* an HTTP listen address, host:port (http_listen_parse) */
	K_TOKEN,   /* an HTTP bearer token: printable ASCII without blanks, HTTP_TOKEN_MIN..cap-1; never echoed */
};

struct keydef {
	enum section sec;
	const char *name;
	enum ktype type;
	/* into struct vtl_config; vtl_drive_config for SEC_DRIVE, vtl_initiator_config for SEC_INITIATOR,
	 * vtl_physical_config for SEC_PHYSICAL */
	size_t off;
	size_t cap; /* string capacity including the NUL */
	uint64_t min, max;
};

#define POLICY_DURATION_MAX (365u * 86400) /* a year: longer idle times or intervals are typos */
/* Ten minutes: a drive's lock held longer outlasts the command timeouts of hosts (the st driver's is 15). */
#define RECALL_WAIT_MAX 600u
#define POLICY_IDLE_DEFAULT 3600 /* an hour without a mount makes a cartridge a candidate */

#define CF(f) offsetof(struct vtl_config, f)
#define DF(f) offsetof(struct vtl_drive_config, f)
#define CAP(f) sizeof(((struct vtl_config *)0)->f)
#define DCAP(f) sizeof(((struct vtl_drive_config *)0)->f)
#define HF(f) offsetof(struct vtl_initiator_config, f)
#define PF(f) offsetof(struct vtl_physical_config, f)
#define PCAP(f) sizeof(((struct vtl_physical_config *)0)->f)
#define HCAP(f) sizeof(((struct vtl_initiator_config *)0)->f)
/* An HTTP endpoint for operators and a scraper needs few connections; more is a mistake or a flood. */
#define HTTP_CFG_CONNECTIONS_MAX 1024
#define HTTP_CFG_TIMEOUT_MAX 3600 /* an hour: a longer idle connection is held for nothing */
#define AUTH_FAIL_DELAY_DEFAULT 2 /* seconds: a guess per 2 s is slow enough, a typo'd secret is not a wait */

static const struct keydef keys[] = {
	{SEC_LIBRARY, "name", K_NAME, CF(library.name), CAP(library.name), 0, 0},
	{SEC_LIBRARY, "vendor", K_T10, CF(library.vendor), CAP(library.vendor), 0, 0},
	{SEC_LIBRARY, "product", K_T10, CF(library.product), CAP(library.product), 0, 0},
	{SEC_LIBRARY, "revision", K_T10, CF(library.revision), CAP(library.revision), 0, 0},
	{SEC_LIBRARY, "serial", K_SERIAL, CF(library.serial), CAP(library.serial), 0, 0},
	{SEC_LIBRARY, "lun", K_UINT, CF(library.lun), 0, 0, VTL_CFG_MAX_LUN},
	{SEC_LIBRARY, "slots", K_UINT, CF(library.slots), 0, 1, ADDR_MAX},
	{SEC_LIBRARY, "mail_slots", K_UINT, CF(library.mail_slots), 0, 0, ADDR_MAX},
	{SEC_LIBRARY, "drives", K_UINT, CF(library.drives), 0, 0, VTL_CFG_MAX_DRIVES},
	{SEC_LIBRARY, "transport_first", K_ADDR, CF(library.transport_first), 0, 0, ADDR_MAX},
	{SEC_LIBRARY, "slot_first", K_ADDR, CF(library.slot_first), 0, 0, ADDR_MAX},
	{SEC_LIBRARY, "mail_slot_first", K_ADDR, CF(library.mail_slot_first), 0, 0, ADDR_MAX},
	{SEC_LIBRARY, "drive_first", K_ADDR, CF(library.drive_first), 0, 0, ADDR_MAX},
	{SEC_LIBRARY, "recall_wait", K_DURATION, CF(library.recall_wait), 0, 1, RECALL_WAIT_MAX},
	{SEC_DRIVE, "vendor", K_T10, DF(vendor), DCAP(vendor), 0, 0},
	{SEC_DRIVE, "model", K_T10, DF(model), DCAP(model), 0, 0},
	{SEC_DRIVE, "revision", K_T10, DF(revision), DCAP(revision), 0, 0},
	{SEC_DRIVE, "serial", K_SERIAL, DF(serial), DCAP(serial), 0, 0},
	{SEC_DRIVE, "lun", K_UINT, DF(lun), 0, 0, VTL_CFG_MAX_LUN},
	{SEC_DRIVE, "generation", K_UINT, DF(generation), 0, VTL_GEN_MIN, VTL_GEN_MAX},
	{SEC_POOL, "member", K_MEMBER, 0, 0, 0, 0},
	{SEC_POOL, "segment_size", K_SIZE, CF(pool.segment_size), 0, VTL_SEGMENT_SIZE_MIN, VTL_SEGMENT_SIZE_MAX},
	{SEC_POOL, "member_quota", K_SIZE, CF(pool.member_quota), 0, 1, 0},
	{SEC_POOL, "reserve", K_SIZE, CF(pool.reserve), 0, 1, 0},
	{SEC_POOL, "readahead_depth", K_UINT, CF(pool.readahead_depth), 0, 1, 1024},
	{SEC_POOL, "readahead_chunk", K_SIZE, CF(pool.readahead_chunk), 0, 4096, 64ull << 20},
	{SEC_POOL, "readahead_memory", K_SIZE, CF(pool.readahead_memory), 0, 4096, 64ull << 30},
	{SEC_POOL, "readahead_direct", K_BOOL, CF(pool.readahead_direct), 0, 0, 0},
	{SEC_POOL, "write_direct", K_BOOL, CF(pool.write_direct), 0, 0, 0},
	{SEC_POOL, "lz4_acceleration", K_INT, CF(pool.lz4_acceleration), 0, 1, 65537},
	{SEC_POOL, "io_threads", K_UINT, CF(pool.io_threads), 0, 1, 256},
	{SEC_CATALOG, "path", K_PATH, CF(catalog.path), 0, 0, 0},
	{SEC_ISCSI, "listen", K_HOST, CF(iscsi.listen), CAP(iscsi.listen), 0, 0},
	{SEC_ISCSI, "port", K_UINT, CF(iscsi.port), 0, 1, 65535},
	{SEC_ISCSI, "nop_interval", K_UINT, CF(iscsi.nop_interval), 0, 0, 3600},
	{SEC_ISCSI, "target_iqn", K_IQN, CF(iscsi.target_iqn), CAP(iscsi.target_iqn), 0, 0},
	{SEC_ISCSI, "advertise", K_HOST, CF(iscsi.advertise), CAP(iscsi.advertise), 0, 0},
	{SEC_ISCSI, "target_alias", K_TEXT, CF(iscsi.target_alias), CAP(iscsi.target_alias), 0, 0},
	{SEC_ISCSI, "chap_user", K_TEXT, CF(iscsi.chap_user), CAP(iscsi.chap_user), 0, 0},
	{SEC_ISCSI, "chap_secret", K_SECRET, CF(iscsi.chap_secret), CAP(iscsi.chap_secret), 0, 0},
	{SEC_ISCSI, "mutual_user", K_TEXT, CF(iscsi.mutual_user), CAP(iscsi.mutual_user), 0, 0},
	{SEC_ISCSI, "mutual_secret", K_SECRET, CF(iscsi.mutual_secret), CAP(iscsi.mutual_secret), 0, 0},
	{SEC_ISCSI, "discovery_chap", K_BOOL, CF(iscsi.discovery_chap), 0, 0, 0},
	{SEC_ISCSI, "initiator", K_INITIATOR, 0, 0, 0, 0},
	{SEC_ISCSI, "login_timeout", K_UINT, CF(iscsi.login_timeout), 0, 1, 3600},
	{SEC_ISCSI, "max_logins", K_UINT, CF(iscsi.max_logins), 0, 1, 65536},
	{SEC_ISCSI, "max_logins_per_address", K_UINT, CF(iscsi.max_logins_per_address), 0, 1, 65536},
	{SEC_ISCSI, "max_sessions", K_UINT, CF(iscsi.max_sessions), 0, 1, 4096},
	{SEC_ISCSI, "max_sessions_per_address", K_UINT, CF(iscsi.max_sessions_per_address), 0, 1, 4096},
	{SEC_ISCSI, "cmd_window", K_UINT, CF(iscsi.cmd_window), 0, 1, 32},
	{SEC_ISCSI, "output_max", K_SIZE, CF(iscsi.output_max), 0, 64u << 10, 1ull << 30},
	{SEC_ISCSI, "nop_data_max", K_SIZE, CF(iscsi.nop_data_max), 0, 1, 256u << 10},
	{SEC_ISCSI, "session_buffer_max", K_SIZE, CF(iscsi.session_buffer_max), 0, 1u << 20, 64ull << 30},
	{SEC_ISCSI, "buffer_max", K_SIZE, CF(iscsi.buffer_max), 0, 1u << 20, 1ull << 40},
	{SEC_ISCSI, "allow_anonymous", K_BOOL, CF(iscsi.allow_anonymous), 0, 0, 0},
	{SEC_ISCSI, "auth_fail_delay", K_UINT, CF(iscsi.auth_fail_delay), 0, 0, VTL_CFG_AUTH_FAIL_DELAY_MAX},
	{SEC_INITIATOR, "chap_user", K_TEXT, HF(chap_user), HCAP(chap_user), 0, 0},
	{SEC_INITIATOR, "chap_secret", K_SECRET, HF(chap_secret), HCAP(chap_secret), 0, 0},
	{SEC_INITIATOR, "mutual_user", K_TEXT, HF(mutual_user), HCAP(mutual_user), 0, 0},
	{SEC_INITIATOR, "mutual_secret", K_SECRET, HF(mutual_secret), HCAP(mutual_secret), 0, 0},
	{SEC_INITIATOR, "discovery_chap", K_BOOL, HF(discovery_chap), 0, 0, 0},
	{SEC_DAEMON, "control_socket", K_PATH, CF(daemon.control_socket), 0, 0, 0},
	{SEC_DAEMON, "control_group", K_GROUP, CF(daemon.control_group), 0, 0, 0},
	{SEC_DAEMON, "log_level", K_LEVEL, CF(daemon.log_level), CAP(daemon.log_level), 0, 0},
	{SEC_DAEMON, "syslog", K_BOOL, CF(daemon.syslog), 0, 0, 0},
	{SEC_DAEMON, "tcmu", K_BOOL, CF(daemon.tcmu), 0, 0, 0},
	{SEC_DAEMON, "http", K_LISTEN, CF(daemon.http.listen), CAP(daemon.http.listen), 0, 0},
	{SEC_DAEMON, "http_token", K_TOKEN, CF(daemon.http.token), CAP(daemon.http.token), 0, 0},
	{SEC_DAEMON, "http_connections", K_UINT, CF(daemon.http.connections), 0, 1, HTTP_CFG_CONNECTIONS_MAX},
	{SEC_DAEMON, "http_connections_per_address", K_UINT, CF(daemon.http.per_address), 0, 1, HTTP_CFG_CONNECTIONS_MAX},
	{SEC_DAEMON, "http_timeout", K_DURATION, CF(daemon.http.timeout), 0, 1, HTTP_CFG_TIMEOUT_MAX},
	{SEC_PHYSICAL, "name", K_NAME, PF(name), PCAP(name), 0, 0},
	{SEC_PHYSICAL, "type", K_NAME, PF(type), PCAP(type), 0, 0},
	{SEC_PHYSICAL, "generation", K_UINT, PF(generation), 0, VTL_GEN_MIN, VTL_GEN_MAX},
	{SEC_PHYSICAL, "drives", K_UINT, PF(drives), 0, 1, 16},
	{SEC_PHYSICAL, "slots", K_UINT, PF(slots), 0, 1, 1000},
	{SEC_PHYSICAL, "mail_slots", K_UINT, PF(mail_slots), 0, 0, 100},
	{SEC_PHYSICAL, "tapes", K_UINT, PF(tapes), 0, 0, 1000},
	{SEC_PHYSICAL, "prefix", K_SERIAL, PF(prefix), PCAP(prefix), 0, 0},
	{SEC_PHYSICAL, "tape_capacity", K_SIZE, PF(tape_capacity), 0, 1u << 20, 0},
	{SEC_PHYSICAL, "drive_buffer", K_SIZE, PF(drive_buffer), 0, 1u << 20, 64ull << 30},
	{SEC_PHYSICAL, "rate", K_UINT, PF(rate), 0, 1, 100000},
	{SEC_PHYSICAL, "backhitch_ms", K_UINT, PF(backhitch_ms), 0, 0, 600000},
	{SEC_PHYSICAL, "load_ms", K_UINT, PF(load_ms), 0, 0, 600000},
	{SEC_PHYSICAL, "locate_ms", K_UINT, PF(locate_ms), 0, 0, 600000},
	{SEC_PHYSICAL, "data_dir", K_PATH, PF(data_dir), 0, 0, 0},
	{SEC_PHYSICAL, "keep_data", K_BOOL, PF(keep_data), 0, 0, 0},
	{SEC_PHYSICAL, "portal", K_TEXT, PF(portal), PCAP(portal), 0, 0},
	{SEC_PHYSICAL, "target", K_IQN, PF(target), PCAP(target), 0, 0},
	{SEC_PHYSICAL, "initiator", K_IQN, PF(initiator), PCAP(initiator), 0, 0},
	{SEC_PHYSICAL, "chap_user", K_TEXT, PF(chap_user), PCAP(chap_user), 0, 0},
	{SEC_PHYSICAL, "chap_secret", K_SECRET, PF(chap_secret), PCAP(chap_secret), 0, 0},
	{SEC_PHYSICAL, "mutual_user", K_TEXT, PF(mutual_user), PCAP(mutual_user), 0, 0},
	{SEC_PHYSICAL, "mutual_secret", K_SECRET, PF(mutual_secret), PCAP(mutual_secret), 0, 0},
	{SEC_PHYSICAL, "changer", K_PATH, PF(changer), 0, 0, 0},
	{SEC_PHYSICAL, "drive", K_DEVNODE, PF(drive), 0, 0, 0},
	{SEC_PHYSICAL, "drive_sg", K_DEVNODE, PF(drive_sg), 0, 0, 0},
	{SEC_PHYSICAL, "pools", K_LIBPOOLS, PF(pool), 0, 0, 0},
	{SEC_MIGRATOR, "buffers", K_UINT, CF(migrator.buffers), 0, 2, 1024},
	{SEC_MIGRATOR, "buffer_size", K_SIZE, CF(migrator.buffer_size), 0, 64u << 10, 64ull << 20},
	{SEC_MIGRATOR, "watermark", K_UINT, CF(migrator.watermark), 0, 0, 1024},
	{SEC_MIGRATOR, "readers", K_UINT, CF(migrator.readers), 0, 1, 16},
	{SEC_MIGRATOR, "rate", K_UINT, CF(migrator.rate), 0, 0, 100000},
	{SEC_MIGRATOR, "window", K_TEXT, CF(migrator.window), CAP(migrator.window), 0, 0},
	{SEC_MIGRATOR, "window_rate", K_UINT, CF(migrator.window_rate), 0, 0, 100000},
	{SEC_MIGRATOR, "pool_rate", K_RATE, CF(migrator.pool_rate), 0, 0, 100000},
	{SEC_MIGRATOR, "copy_floor", K_UINT, CF(migrator.copy_floor), 0, 0, 100000},
	{SEC_MIGRATOR, "verify", K_BOOL, CF(migrator.verify), 0, 0, 0},
	{SEC_MIGRATOR, "drives", K_DRIVES, CF(migrator.drives), 0, 1, VTL_CFG_MAX_PHYS_DRIVES},
	{SEC_MIGRATOR, "recall_drives", K_UINT, CF(migrator.recall_drives), 0, 0, VTL_CFG_MAX_PHYS_DRIVES - 1},
	{SEC_MIGRATOR, "control_socket", K_PATH, CF(migrator.control_socket), 0, 0, 0},
	{SEC_MIGRATOR, "control_group", K_GROUP, CF(migrator.control_group), 0, 0, 0},
	{SEC_MIGRATOR, "log_level", K_LEVEL, CF(migrator.log_level), CAP(migrator.log_level), 0, 0},
	{SEC_MIGRATOR, "http", K_LISTEN, CF(migrator.http.listen), CAP(migrator.http.listen), 0, 0},
	{SEC_MIGRATOR, "http_token", K_TOKEN, CF(migrator.http.token), CAP(migrator.http.token), 0, 0},
	{SEC_MIGRATOR, "http_connections", K_UINT, CF(migrator.http.connections), 0, 1, HTTP_CFG_CONNECTIONS_MAX},
	{SEC_MIGRATOR, "http_connections_per_address", K_UINT, CF(migrator.http.per_address), 0, 1,
	 HTTP_CFG_CONNECTIONS_MAX},
	{SEC_MIGRATOR, "http_timeout", K_DURATION, CF(migrator.http.timeout), 0, 1, HTTP_CFG_TIMEOUT_MAX},
	{SEC_POLICY, "interval", K_DURATION, CF(policy.interval), 0, 1, POLICY_DURATION_MAX},
	{SEC_POLICY, "premigrate", K_RULES, CF(policy.premigrate), 0, 0, 0},
	{SEC_POLICY, "copy_pools", K_POOLS, CF(policy), 0, 0, 0},
	{SEC_POLICY, "idle", K_DURATION, CF(policy.idle), 0, 0, POLICY_DURATION_MAX},
	{SEC_POLICY, "high_water", K_UINT, CF(policy.high_water), 0, 1, 100},
	{SEC_POLICY, "low_water", K_UINT, CF(policy.low_water), 0, 0, 99},
	{SEC_POLICY, "throttle", K_UINT, CF(policy.throttle), 0, 0, 100},
	{SEC_POLICY, "throttle_rate", K_UINT, CF(policy.throttle_rate), 0, 1, 100000},
};
#define NKEYS (VTL_ARRAY_SIZE(keys))

struct parser {
	const char *name; /* file name for messages */
	struct vtl_config *c;
	char *err;
	size_t errlen;
	unsigned line;
	enum section sec;
	struct vtl_drive_config *drive;     /* current [drive N] */
	struct vtl_initiator_config *host;  /* current [initiator NAME] */
	struct vtl_physical_config *phys;   /* current [physical] or [physical NAME] */
	unsigned sec_line[SEC_COUNT];       /* header line of each (non-drive) section seen */
	unsigned key_line[NKEYS];           /* line of each key in non-drive sections */
	unsigned drive_key_line[VTL_CFG_MAX_DRIVES][NKEYS];
	unsigned member_line[VTL_POOL_MAX_MEMBERS];
	unsigned initiator_line[VTL_CFG_MAX_INITIATORS];
	unsigned host_key_line[VTL_CFG_MAX_INITIATORS][NKEYS]; /* keys of each [initiator NAME] */
	unsigned phys_key_line[VTL_CFG_MAX_PHYS_LIBS][NKEYS]; /* keys of each physical library */
	unsigned devnode_line[VTL_CFG_MAX_PHYS_LIBS][2][VTL_CFG_MAX_PHYS_DRIVES]; /* its drive, drive_sg lines */
};

static int perr(struct parser *ps, unsigned line, const char *fmt, ...)
{
	if (ps->err && ps->errlen) {
		int n = line ? snprintf(ps->err, ps->errlen, "%s:%u: ", ps->name, line)
			     : snprintf(ps->err, ps->errlen, "%s: ", ps->name);
		if (n >= 0 && (size_t)n < ps->errlen) {
			va_list ap;
			va_start(ap, fmt);
			vsnprintf(ps->err + n, ps->errlen - (size_t)n, fmt, ap);
			va_end(ap);
		}
	}
	return VTL_E_CONFIG;
}

static unsigned edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	if (la > 31 || lb > 31)
		return 99;
	unsigned d[32][32];
	for (size_t i = 0; i <= la; i++)
		d[i][0] = (unsigned)i;
	for (size_t j = 0; j <= lb; j++)
		d[0][j] = (unsigned)j;
	for (size_t i = 1; i <= la; i++)
		for (size_t j = 1; j <= lb; j++) {
			unsigned sub = d[i - 1][j - 1] + (tolower((unsigned char)a[i - 1]) != b[j - 1]);
			unsigned del = d[i - 1][j] + 1, ins = d[i][j - 1] + 1;
			d[i][j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
		}
	return d[la][lb];
}

/* ", did you mean 'x'?" for the closest known key of the section, or "" */
static void suggest(enum section sec, const char *key, char *buf, size_t len)
{
	const char *best = NULL;
	unsigned bd = 3;
	for (size_t i = 0; i < NKEYS; i++) {
		if (keys[i].sec != sec)
			continue;
		unsigned d = edit_distance(key, keys[i].name);
		if (d < bd) {
			bd = d;
			best = keys[i].name;
		}
	}
	if (best)
		snprintf(buf, len, "; did you mean '%s'?", best);
	else
		buf[0] = 0;
}

static void known_keys(enum section sec, char *buf, size_t len)
{
	size_t n = 0;
	buf[0] = 0;
	for (size_t i = 0; i < NKEYS; i++) {
		if (keys[i].sec != sec)
			continue;
		int w = snprintf(buf + n, len - n, "%s%s", n ? ", " : "", keys[i].name);
		if (w < 0 || (size_t)w >= len - n)
			break;
		n += (size_t)w;
	}
}

static bool all_in(const char *v, bool (*ok)(unsigned char))
{
	for (const unsigned char *p = (const unsigned char *)v; *p; p++)
		if (!ok(*p))
			return false;
	return true;
}

static bool name_char(unsigned char c)
{
	return isalnum(c) || c == '.' || c == '_' || c == '-';
}

static bool t10_char(unsigned char c)
{
	return c >= 0x20 && c <= 0x7e;
}

static bool host_char(unsigned char c)
{
	return c > 0x20 && c <= 0x7e;
}

static bool iqn_char(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '-' || c == ':';
}

/* Checks an iSCSI name: iqn.YYYY-MM.reversed.domain[:anything], eui.<16 hex>, naa.<16 or 32 hex>. */
static bool iqn_valid(const char *v)
{
	size_t n = strlen(v);
	if (n > 223)
		return false;
	if (strncmp(v, "eui.", 4) == 0 || strncmp(v, "naa.", 4) == 0) {
		size_t h = n - 4;
		if (!(h == 16 || (v[0] == 'n' && h == 32)))
			return false;
		for (size_t i = 4; i < n; i++)
			if (!isxdigit((unsigned char)v[i]))
				return false;
		return true;
	}
	if (strncmp(v, "iqn.", 4) != 0 || n < 13 || !all_in(v, iqn_char))
		return false;
	for (int i = 4; i < 11; i++)
		if (i == 8 ? v[i] != '-' : !isdigit((unsigned char)v[i]))
			return false;
	return v[11] == '.' && v[12] && v[12] != '.' && v[12] != ':';
}

/* [policy] premigrate = full, ejected, idle | none: the rules as VTL_POLICY_* bits. */
static int parse_rules(struct parser *ps, const char *sec, const char *key, const char *v, unsigned *bits)
{
	static const struct {
		const char *name;
		unsigned bit;
	} rules[] = {{"full", VTL_POLICY_FULL}, {"ejected", VTL_POLICY_EJECTED}, {"idle", VTL_POLICY_IDLE}, {"none", 0}};
	unsigned out = 0;
	bool none = false;
	const char *p = v;
	while (*p) {
		size_t n = strcspn(p, ", \t");
		size_t i = 0;
		while (i < VTL_ARRAY_SIZE(rules)&& (strlen(rules[i].name) != n || strncasecmp(p, rules[i].name, n)))
			i++;
		if (n == 0 || i == VTL_ARRAY_SIZE(rules))
			return perr(ps, ps->line, "[%s] %s = %s: give a list of full, ejected and idle (e.g. full, ejected), "
				    "or none", sec, key, v);
		out |= rules[i].bit;
		none |= rules[i].bit == 0;
		p += n;
		p += strspn(p, ", \t");
	}
	if (none && out)
		return perr(ps, ps->line, "[%s] %s = %s: none cannot be listed with a rule", sec, key, v);
	*bits = out;
	return VTL_OK;
}

/*
 * A comma list of distinct pool names into names (at most max of them), *n
 * how many: [policy] copy_pools (the pools each cartridge gets a copy in) and
 * [physical NAME] pools (the pools whose tapes a library keeps).
 */
static int parse_pools(struct parser *ps, const char *sec, const char *key, const char *v,
		       char (*names)[CAT_NAME_MAX + 1], unsigned max, unsigned *count)
{
	unsigned n = 0;
	const char *p = v;
	while (*p) {
		size_t len = strcspn(p, ", \t");
		char name[CAT_NAME_MAX + 1];
		if (len == 0 || len > CAT_NAME_MAX || n == max)
			return perr(ps, ps->line, "[%s] %s = %s: give 1 %s %u pool names of up to %d characters, "
				    "separated by commas (e.g. default, vault)", sec, key, v, max == 2 ? "or" : "to", max,
				    CAT_NAME_MAX);
		snprintf(name, sizeof name, "%.*s", (int)len, p);
		if (!all_in(name, name_char))
			return perr(ps, ps->line, "[%s] %s: pool '%s': use letters, digits, '.', '_' or '-'", sec, key,
				    name);
		for (unsigned i = 0; i < n; i++)
			if (!strcmp(names[i], name))
				return perr(ps, ps->line, "[%s] %s = %s: pool '%s' is named twice: each copy goes to "
					    "another pool", sec, key, v, name);
		snprintf(names[n++], CAT_NAME_MAX + 1, "%s", name);
		p += len;
		p += strspn(p, ", \t");
	}
	if (n == 0)
		return perr(ps, ps->line, "[%s] %s: give at least one pool name", sec, key);
	*count = n;
	return VTL_OK;
}

/* Appends name to the allow list ([iscsi] initiator lines and [initiator NAME] sections), once. */
static int allow_initiator(struct parser *ps, const char *v)
{
	struct vtl_config *c = ps->c;
	if (!iqn_valid(v))
		return perr(ps, ps->line, "initiator '%s' is not an iSCSI name: use the initiator's name as it "
			    "sends it, in lower case (e.g. iqn.1993-08.org.debian:01:1234abcd; on Linux it is in "
			    "/etc/iscsi/initiatorname.iscsi)", v);
	if (c->iscsi.initiators >= VTL_CFG_MAX_INITIATORS)
		return perr(ps, ps->line, "too many initiators (initiator lines and [initiator] sections): at most %d",
			    VTL_CFG_MAX_INITIATORS);
	for (unsigned i = 0; i < c->iscsi.initiators; i++)
		if (strcmp(c->iscsi.initiator[i], v) == 0)
			return perr(ps, ps->line, "initiator %s is listed twice (first at line %u)", v,
				    ps->initiator_line[i]);
	char *d = strdup(v);
	if (!d)
		return VTL_E_NOMEM;
	ps->initiator_line[c->iscsi.initiators] = ps->line;
	c->iscsi.initiator[c->iscsi.initiators++] = d;
	return VTL_OK;
}

#define GROUP_BUF_FIRST 4096     /* getgrnam_r's first buffer: a group line with a few members */
#define GROUP_BUF_MAX (1u << 20) /* it grows (ERANGE) up to this for groups with very many members */

/* control_group = NAME: the group must exist now, so that a typo is a config error and not a socket nobody can use. */
static int parse_group(struct parser *ps, const char *sec, const char *key, const char *v, struct vtl_cfg_group *g)
{
	if (strlen(v) >= sizeof g->name || !all_in(v, host_char))
		return perr(ps, ps->line, "[%s] %s '%s': give a group name of 1 to %zu characters without blanks", sec, key,
			    v, sizeof g->name - 1);
	struct group gr, *found = NULL;
	int e = ERANGE;
	for (size_t len = GROUP_BUF_FIRST; e == ERANGE && len <= GROUP_BUF_MAX; len *= 2) {
		char *buf = malloc(len);
		if (!buf)
			return VTL_E_NOMEM;
		e = getgrnam_r(v, &gr, buf, len, &found);
		if (found)
			g->gid = gr.gr_gid;
		free(buf);
	}
	if (!found)
		return perr(ps, ps->line, "[%s] %s = %s: there is no group %s on this host (%s); create it (groupadd %s) "
			    "or remove the key", sec, key, v, v, e ? strerror(e) : "the group database has no such name",
			    v);
	snprintf(g->name, sizeof g->name, "%s", v);
	return VTL_OK;
}

static int set_value(struct parser *ps, size_t ki, const char *sec, const char *v)
{
	const struct keydef *k = &keys[ki];
	char *base = ps->sec == SEC_DRIVE ? (char *)ps->drive
		     : ps->sec == SEC_INITIATOR ? (char *)ps->host
		     : ps->sec == SEC_PHYSICAL	? (char *)ps->phys
						: (char *)ps->c;
	void *field = base + k->off;
	const char *key = k->name;
	uint64_t u;
	switch (k->type) {
	case K_NAME:
	case K_SERIAL:
		if (strlen(v) >= k->cap || !all_in(v, name_char))
			return perr(ps, ps->line, "%s '%s': use 1 to %zu letters, digits, '.', '_' or '-'", key, v,
				    k->cap - 1);
		snprintf(field, k->cap, "%s", v);
		return VTL_OK;
	case K_T10:
		if (strlen(v) >= k->cap || !all_in(v, t10_char))
			return perr(ps, ps->line, "%s '%s': use 1 to %zu printable ASCII characters (a SCSI INQUIRY field)",
				    key, v, k->cap - 1);
		snprintf(field, k->cap, "%s", v);
		return VTL_OK;
	case K_HOST:
		if (strlen(v) >= k->cap || !all_in(v, host_char))
			return perr(ps, ps->line, "%s '%s': give an IP address or host name, without blanks", key, v);
		snprintf(field, k->cap, "%s", v);
		return VTL_OK;
	case K_IQN:
		if (!iqn_valid(v))
			return perr(ps, ps->line, "%s '%s' is not an iSCSI name: use lower-case "
				    "iqn.YYYY-MM.reversed.domain:name (e.g. iqn.2026-01.com.example:vtl1)", key, v);
		snprintf(field, k->cap, "%s", v);
		return VTL_OK;
	case K_TEXT:
		if (strlen(v) >= k->cap || !all_in(v, t10_char))
			return perr(ps, ps->line, "%s '%s': use 1 to %zu printable ASCII characters", key, v, k->cap - 1);
		snprintf(field, k->cap, "%s", v);
		return VTL_OK;
	case K_SECRET:
		/* The secret itself stays out of the message: error output ends up in logs. */
		if (strlen(v) < VTL_CFG_CHAP_SECRET_MIN || strlen(v) >= k->cap)
			return perr(ps, ps->line, "%s is %zu characters long: use %d to %zu (RFC 7143 12.1.3 recommends "
				    "at least %d bytes, so that one overheard CHAP exchange cannot be brute-forced)", key,
				    strlen(v), VTL_CFG_CHAP_SECRET_MIN, k->cap - 1, VTL_CFG_CHAP_SECRET_MIN);
		if (!all_in(v, t10_char))
			return perr(ps, ps->line, "%s: use printable ASCII characters only", key);
		snprintf(field, k->cap, "%s", v);
		return VTL_OK;
	case K_BOOL:
		if (!strcasecmp(v, "yes") || !strcasecmp(v, "true") || !strcmp(v, "1"))
			*(bool *)field = true;
		else if (!strcasecmp(v, "no") || !strcasecmp(v, "false") || !strcmp(v, "0"))
			*(bool *)field = false;
		else
			return perr(ps, ps->line, "[%s] %s = %s: use yes or no", sec, key, v);
		return VTL_OK;
	case K_INITIATOR:
		return allow_initiator(ps, v);
	case K_DEVNODE: {
		/* drive and drive_sg lines: each list keeps the order of the file, a node appears once. */
		struct vtl_physical_config *pc = ps->phys;
		bool sg = !strcmp(key, "drive_sg");
		char **list = sg ? pc->drive_sg : pc->drive;
		unsigned *n = sg ? &pc->st_drive_sgs : &pc->st_drives;
		unsigned *lines = ps->devnode_line[pc - ps->c->physical][sg];
		if (v[0] != '/')
			return perr(ps, ps->line, "[%s] %s = %s: give the device node's absolute path (e.g. %s)", sec, key, v,
				    sg ? "/dev/sg2" : "/dev/nst0");
		if (*n >= VTL_CFG_MAX_PHYS_DRIVES)
			return perr(ps, ps->line, "too many %s lines: at most %d", key, VTL_CFG_MAX_PHYS_DRIVES);
		for (unsigned i = 0; i < *n; i++)
			if (strcmp(list[i], v) == 0)
				return perr(ps, ps->line, "%s %s is listed twice (first at line %u)", key, v, lines[i]);
		if (!(list[*n] = strdup(v)))
			return VTL_E_NOMEM;
		lines[(*n)++] = ps->line;
		return VTL_OK;
	}
	case K_LISTEN: {
		char host[HTTP_LISTEN_MAX], why[160];
		unsigned port;
		if (strlen(v) >= k->cap || http_listen_parse(v, host, sizeof host, &port, why, sizeof why) != VTL_OK)
			return perr(ps, ps->line, "[%s] %s = %s: give an IP address and a port, as 127.0.0.1:9110 or [::1]:9110",
				    sec, key, v);
		snprintf(field, k->cap, "%s", v);
		return VTL_OK;
	}
	case K_TOKEN:
		/* The token itself stays out of the message: error output ends up in logs. */
		if (strlen(v) < HTTP_TOKEN_MIN || strlen(v) >= k->cap)
			return perr(ps, ps->line, "[%s] %s is %zu characters long: use %d to %zu, so that it cannot be "
				    "guessed over the network", sec, key, strlen(v), HTTP_TOKEN_MIN, k->cap - 1);
		for (const char *p = v; *p; p++)
			if (*p <= ' ' || *p > '~')
				return perr(ps, ps->line, "[%s] %s: use printable ASCII characters without blanks", sec, key);
		snprintf(field, k->cap, "%s", v);
		return VTL_OK;
	case K_LEVEL:
		if (strcmp(v, "error") && strcmp(v, "warn") && strcmp(v, "info") && strcmp(v, "debug"))
			return perr(ps, ps->line, "%s '%s': use error, warn, info or debug", key, v);
		snprintf(field, k->cap, "%s", v);
		return VTL_OK;
	case K_DRIVES:
	case K_RATE: {
		/* A word that stands for a value of its own, or a number: drives = all (0), pool_rate = auto. */
		bool drives = k->type == K_DRIVES;
		if (!strcmp(v, drives ? "all" : "auto")) {
			*(unsigned *)field = drives ? 0 : VTL_CFG_POOL_RATE_AUTO;
			return VTL_OK;
		}
		if (vtl_parse_uint(v, UINT64_MAX, &u) || u < k->min || u > k->max)
			return perr(ps, ps->line, "[%s] %s = %s: give %s from %llu to %llu", sec, key, v,
				    drives ? "all (every drive of the library) or a number"
					   : "auto (the migrator measures it) or MB/s",
				    (unsigned long long)k->min, (unsigned long long)k->max);
		*(unsigned *)field = (unsigned)u;
		return VTL_OK;
	}
	case K_UINT:
	case K_ADDR:
	case K_INT:
		if (vtl_parse_uint(v, UINT64_MAX, &u) || u < k->min || u > k->max)
			return perr(ps, ps->line, "[%s] %s = %s: give a whole number from %llu to %llu", sec, key, v,
				    (unsigned long long)k->min, (unsigned long long)k->max);
		if (k->type == K_UINT)
			*(unsigned *)field = (unsigned)u;
		else if (k->type == K_ADDR)
			*(uint16_t *)field = (uint16_t)u;
		else
			*(int *)field = (int)u;
		return VTL_OK;
	case K_DURATION:
		if (vtl_parse_duration(v, k->max, &u) || u < k->min)
			return perr(ps, ps->line, "[%s] %s = %s: give a duration such as 90s, 30m, 12h or 7d (no unit: "
				    "seconds), from %llu s to %llu d", sec, key, v, (unsigned long long)k->min,
				    (unsigned long long)(k->max / 86400));
		*(unsigned *)field = (unsigned)u;
		return VTL_OK;
	case K_RULES:
		return parse_rules(ps, sec, key, v, field);
	case K_POOLS: {
		struct vtl_policy_config *pc = field;
		return parse_pools(ps, sec, key, v, pc->copy_pool, VTL_POLICY_MAX_COPIES, &pc->copy_pools);
	}
	case K_LIBPOOLS:
		return parse_pools(ps, sec, key, v, ps->phys->pool, VTL_CFG_MAX_LIB_POOLS, &ps->phys->pools);
	case K_GROUP:
		return parse_group(ps, sec, key, v, field);
	case K_SIZE:
		if (vtl_parse_size(v, true, &u))
			return perr(ps, ps->line, "[%s] %s = %s: give a size such as 256M, 1G or 65536 (K, M, G, T are "
				    "powers of 1024)", sec, key, v);
		if (u < k->min || (k->max && u > k->max)) {
			if (k->max)
				return perr(ps, ps->line, "[%s] %s = %s is out of range: use %llu KiB to %llu MiB", sec,
					    key, v, (unsigned long long)(k->min >> 10), (unsigned long long)(k->max >> 20));
			return perr(ps, ps->line, "[%s] %s = %s: must be at least %llu bytes", sec, key, v,
				    (unsigned long long)k->min);
		}
		*(uint64_t *)field = u;
		return VTL_OK;
	case K_PATH: {
		char *p = path_resolve(ps->c->dir, v);
		if (!p)
			return VTL_E_NOMEM;
		if ((k->off == CF(daemon.control_socket) || k->off == CF(migrator.control_socket)) &&
		    strlen(p) >= sizeof(((struct sockaddr_un *)0)->sun_path)) {
			int rc = perr(ps, ps->line, "control_socket '%s' is %zu bytes long; a Unix socket path must be "
				      "under %zu: choose a shorter path", p, strlen(p),
				      sizeof(((struct sockaddr_un *)0)->sun_path));
			free(p);
			return rc;
		}
		free(*(char **)field);
		*(char **)field = p;
		return VTL_OK;
	}
	case K_MEMBER: {
		struct vtl_config *c = ps->c;
		if (c->pool.members >= VTL_POOL_MAX_MEMBERS)
			return perr(ps, ps->line, "too many pool members: at most %d", VTL_POOL_MAX_MEMBERS);
		char *p = path_resolve(c->dir, v);
		if (!p)
			return VTL_E_NOMEM;
		for (unsigned i = 0; i < c->pool.members; i++)
			if (strcmp(c->pool.member[i], p) == 0) {
				int rc = perr(ps, ps->line, "pool member %s is listed twice (first at line %u); "
					      "each member must be a different folder", p, ps->member_line[i]);
				free(p);
				return rc;
			}
		ps->member_line[c->pool.members] = ps->line;
		c->pool.member[c->pool.members++] = p;
		return VTL_OK;
	}
	}
	return VTL_E_INVAL;
}

static char *trim(char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	size_t n = strlen(s);
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
		s[--n] = 0;
	return s;
}

/*
 * [physical] (one library, named by its name key) or [physical NAME] (one of
 * several, named by NAME): each its own struct vtl_physical_config.
 */
static int physical_section(struct parser *ps, const char *arg)
{
	struct vtl_config *c = ps->c;
	for (unsigned i = 0; i < c->physicals; i++) {
		const struct vtl_physical_config *o = &c->physical[i];
		if (!*arg && !o->named)
			return perr(ps, ps->line, "section [physical] appears twice (first at line %u); put all its keys "
				    "in one, or name each library: [physical NAME]", o->line);
		if (*arg && o->named && !strcmp(o->name, arg))
			return perr(ps, ps->line, "[physical %s] appears twice (first at line %u)", arg, o->line);
	}
	if (c->physicals == VTL_CFG_MAX_PHYS_LIBS)
		return perr(ps, ps->line, "[physical%s%s]: at most %d physical libraries", *arg ? " " : "", arg,
			    VTL_CFG_MAX_PHYS_LIBS);
	if (*arg && (strlen(arg) > CAT_NAME_MAX || !all_in(arg, name_char)))
		return perr(ps, ps->line, "[physical %s]: name a library with 1 to %d letters, digits, '.', '_' or '-'",
			    arg, CAT_NAME_MAX);
	struct vtl_physical_config *p = &c->physical[c->physicals++];
	p->line = ps->line;
	p->named = *arg != 0;
	if (p->named)
		snprintf(p->name, sizeof p->name, "%s", arg);
	if (!ps->sec_line[SEC_PHYSICAL])
		ps->sec_line[SEC_PHYSICAL] = ps->line;
	ps->phys = p;
	return VTL_OK;
}

static int parse_section(struct parser *ps, char *s)
{
	char *close = strchr(s, ']');
	if (!close)
		return perr(ps, ps->line, "section header '%s' has no closing ']'", s);
	char *rest = trim(close + 1);
	if (*rest && *rest != '#' && *rest != ';')
		return perr(ps, ps->line, "unexpected text '%s' after the section header", rest);
	*close = 0;
	char *name = trim(s + 1);
	char word[32];
	size_t wl = strcspn(name, " \t");
	if (wl == 0 || wl >= sizeof word)
		return perr(ps, ps->line, "section header [%s]: expected [library], [drive N], [pool], [catalog], "
			    "[iscsi] or [daemon]", name);
	memcpy(word, name, wl);
	word[wl] = 0;
	char *arg = trim(name + wl);
	enum section sec = SEC_NONE;
	for (int i = 1; i < SEC_COUNT; i++)
		if (strcasecmp(word, section_names[i]) == 0)
			sec = (enum section)i;
	if (sec == SEC_NONE)
		return perr(ps, ps->line, "unknown section [%s]: expected [library], [drive N], [pool], [catalog], "
			    "[iscsi] or [daemon]", name);
	if (sec == SEC_DRIVE) {
		uint64_t n;
		if (vtl_parse_uint(arg, VTL_CFG_MAX_DRIVES, &n) || n == 0)
			return perr(ps, ps->line, "[%s]: a drive section is [drive N] with N from 1 to the number of "
				    "drives", name);
		struct vtl_drive_config *d = &ps->c->drive[n - 1];
		if (d->line)
			return perr(ps, ps->line, "[drive %u] appears twice (first at line %u)", (unsigned)n, d->line);
		d->line = ps->line;
		ps->drive = d;
	} else if (sec == SEC_INITIATOR) {
		/* [initiator NAME]: that host's own credentials; the name joins the allow list. */
		struct vtl_config *c = ps->c;
		if (!*arg)
			return perr(ps, ps->line, "[%s]: an initiator section is [initiator NAME], NAME the host's "
				    "InitiatorName (e.g. [initiator iqn.1993-08.org.debian:01:1234abcd])", name);
		int rc = allow_initiator(ps, arg);
		if (rc)
			return rc;
		struct vtl_initiator_config *h = calloc(1, sizeof *h);
		if (!h)
			return VTL_E_NOMEM;
		snprintf(h->name, sizeof h->name, "%s", arg);
		h->line = ps->line;
		c->iscsi.host[c->iscsi.hosts++] = h;
		ps->host = h;
	} else if (sec == SEC_PHYSICAL) {
		int rc = physical_section(ps, arg);
		if (rc)
			return rc;
	} else {
		if (*arg)
			return perr(ps, ps->line, "[%s]: section [%s] takes no argument", name, word);
		if (ps->sec_line[sec])
			return perr(ps, ps->line, "section [%s] appears twice (first at line %u); put all its keys in one",
				    section_names[sec], ps->sec_line[sec]);
		ps->sec_line[sec] = ps->line;
	}
	ps->sec = sec;
	return VTL_OK;
}

/* Splits off the value of "key = value", handling quotes and comments; returns NULL (with err) if malformed. */
static char *parse_value(struct parser *ps, char *v, int *rc)
{
	v = trim(v);
	if (*v == '"') {
		char *o = v, *i = v + 1;
		for (;;) {
			if (!*i) {
				*rc = perr(ps, ps->line, "a quoted value has no closing '\"'");
				return NULL;
			}
			if (*i == '"')
				break;
			if (*i == '\\' && (i[1] == '"' || i[1] == '\\'))
				i++;
			*o++ = *i++;
		}
		*o = 0;
		char *rest = trim(i + 1);
		if (*rest && *rest != '#' && *rest != ';') {
			*rc = perr(ps, ps->line, "unexpected text '%s' after the quoted value", rest);
			return NULL;
		}
		return v;
	}
	/* A # at the start of the value or after a blank begins a comment. */
	for (char *p = v; *p; p++)
		if (*p == '#' && (p == v || p[-1] == ' ' || p[-1] == '\t')) {
			*p = 0;
			break;
		}
	return trim(v);
}

static int parse_line(struct parser *ps, char *line)
{
	char *s = trim(line);
	if (!*s || *s == '#' || *s == ';')
		return VTL_OK;
	if (*s == '[')
		return parse_section(ps, s);
	char *eq = strchr(s, '=');
	if (!eq)
		return perr(ps, ps->line, "expected 'key = value' or a [section] header, got '%s'", s);
	*eq = 0;
	char *key = trim(s);
	if (!*key)
		return perr(ps, ps->line, "a line starts with '=': the key is missing");
	if (ps->sec == SEC_NONE)
		return perr(ps, ps->line, "key '%s' is outside any section; put it under [library], [pool], ...", key);
	int rc = VTL_OK;
	char *val = parse_value(ps, eq + 1, &rc);
	if (!val)
		return rc;
	size_t ki = NKEYS;
	for (size_t i = 0; i < NKEYS; i++)
		if (keys[i].sec == ps->sec && strcasecmp(keys[i].name, key) == 0)
			ki = i;
	const char *sname = section_names[ps->sec];
	char secname[VTL_CFG_NAME_MAX + 16];
	if (ps->sec == SEC_DRIVE)
		snprintf(secname, sizeof secname, "drive %u", ps->drive->number);
	else if (ps->sec == SEC_INITIATOR)
		snprintf(secname, sizeof secname, "initiator %s", ps->host->name);
	else if (ps->sec == SEC_PHYSICAL && ps->phys->named)
		snprintf(secname, sizeof secname, "physical %s", ps->phys->name);
	else
		snprintf(secname, sizeof secname, "%s", sname);
	if (ki == NKEYS) {
		char hint[64], known[512];
		suggest(ps->sec, key, hint, sizeof hint);
		if (hint[0])
			return perr(ps, ps->line, "unknown key '%s' in [%s]%s", key, secname, hint);
		known_keys(ps->sec, known, sizeof known);
		return perr(ps, ps->line, "unknown key '%s' in [%s]; the keys of [%s] are: %s", key, secname, sname,
			    known);
	}
	if (!*val)
		return perr(ps, ps->line, "[%s] %s has no value", secname, keys[ki].name);
	if (keys[ki].type != K_MEMBER && keys[ki].type != K_INITIATOR && keys[ki].type != K_DEVNODE) {
		unsigned *seen = ps->sec == SEC_DRIVE       ? &ps->drive_key_line[ps->drive->number - 1][ki]
				 : ps->sec == SEC_INITIATOR ? &ps->host_key_line[ps->c->iscsi.hosts - 1][ki]
				 : ps->sec == SEC_PHYSICAL  ? &ps->phys_key_line[ps->phys - ps->c->physical][ki]
							    : &ps->key_line[ki];
		if (*seen)
			return perr(ps, ps->line, "[%s] %s is set twice (first at line %u)", secname, keys[ki].name, *seen);
		*seen = ps->line;
	}
	if (ps->sec == SEC_PHYSICAL && ps->phys->named && !strcmp(keys[ki].name, "name"))
		return perr(ps, ps->line, "[%s] name = %s: the section header names this library (%s); leave name out, "
			    "or use a plain [physical] section", secname, val, ps->phys->name);
	return set_value(ps, ki, secname, val);
}

static size_t key_index(enum section sec, const char *name)
{
	for (size_t i = 0; i < NKEYS; i++)
		if (keys[i].sec == sec && strcmp(keys[i].name, name) == 0)
			return i;
	return 0;
}

/* Line where a library key was set, else the [library] header, else 0. */
static unsigned lib_line(const struct parser *ps, const char *key)
{
	unsigned l = ps->key_line[key_index(SEC_LIBRARY, key)];
	return l ? l : ps->sec_line[SEC_LIBRARY];
}

static unsigned max_u(unsigned a, unsigned b)
{
	return a > b ? a : b;
}

struct range {
	const char *what, *first_key, *count_key;
	unsigned first, count;
};

static uint32_t fnv1a(const char *s)
{
	uint32_t h = 2166136261u;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		h = (h ^ *p) * 16777619u;
	return h;
}

/*
 * CHAP settings of [iscsi] (vtld's targets) or [physical] (the library the
 * migrator logs in to) go in pairs, and mutual CHAP builds on one-way CHAP
 * (RFC 7143 12.1.3).
 */
/* s: the section as messages name it ("iscsi", "physical", "physical NAME"); lines: where its keys are. */
static int validate_chap(struct parser *ps, enum section sec, const char *s, const unsigned *lines, const char *secret,
			 const char *msecret)
{
	unsigned l_user = lines[key_index(sec, "chap_user")];
	unsigned l_secret = lines[key_index(sec, "chap_secret")];
	unsigned l_muser = lines[key_index(sec, "mutual_user")];
	unsigned l_msecret = lines[key_index(sec, "mutual_secret")];
	if (l_user && !l_secret)
		return perr(ps, l_user, "[%s] chap_user is set but chap_secret is not; CHAP needs both", s);
	if (l_secret && !l_user)
		return perr(ps, l_secret, "[%s] chap_secret is set but chap_user is not; CHAP needs both", s);
	if (l_muser && !l_msecret)
		return perr(ps, l_muser, "[%s] mutual_user is set but mutual_secret is not; mutual CHAP needs both", s);
	if (l_msecret && !l_muser)
		return perr(ps, l_msecret, "[%s] mutual_secret is set but mutual_user is not; mutual CHAP needs both", s);
	bool hosts = sec == SEC_ISCSI && ps->c->iscsi.hosts;
	if (l_muser && !l_user && !hosts)
		return perr(ps, max_u(l_muser, l_msecret), "[%s] mutual CHAP (the target proving itself) needs "
			    "one-way CHAP too: set chap_user and chap_secret%s", s,
			    sec == SEC_ISCSI ? ", or give hosts [initiator NAME] sections" : "");
	if (l_msecret && l_secret && strcmp(msecret, secret) == 0)
		return perr(ps, max_u(l_secret, l_msecret), "[%s] mutual_secret is the same as chap_secret; they "
			    "must differ (RFC 7143 12.1.3), or anyone who knows one could pose as the other side", s);
	if (sec != SEC_ISCSI)
		return VTL_OK;
	struct vtl_config *c = ps->c;
	if (c->iscsi.discovery_chap && !l_user && !c->iscsi.hosts)
		return perr(ps, ps->key_line[key_index(SEC_ISCSI, "discovery_chap")], "[iscsi] discovery_chap = yes "
			    "needs chap_user and chap_secret, or [initiator NAME] sections with their own");
	for (unsigned i = 0; i < c->iscsi.hosts; i++) {
		struct vtl_initiator_config *h = c->iscsi.host[i];
		const unsigned *kl = ps->host_key_line[i];
		unsigned hu = kl[key_index(SEC_INITIATOR, "chap_user")], hs = kl[key_index(SEC_INITIATOR, "chap_secret")];
		unsigned hmu = kl[key_index(SEC_INITIATOR, "mutual_user")];
		unsigned hms = kl[key_index(SEC_INITIATOR, "mutual_secret")];
		if (!hu || !hs)
			return perr(ps, max_u(h->line, max_u(hu, hs)), "[initiator %s] needs chap_user and chap_secret: "
				    "the host's own CHAP credentials (to only allow the name, write initiator = %s in "
				    "[iscsi] instead)", h->name, h->name);
		if (!hmu != !hms)
			return perr(ps, max_u(hmu, hms), "[initiator %s] mutual_user and mutual_secret go together; "
				    "without both the host gets the [iscsi] ones", h->name);
		const char *host_msecret = hms ? h->mutual_secret : c->iscsi.mutual_secret;
		if (*host_msecret && strcmp(host_msecret, h->chap_secret) == 0)
			return perr(ps, max_u(hs, hms ? hms : l_msecret), "[initiator %s] chap_secret is the same as %s; "
				    "they must differ (RFC 7143 12.1.3), or anyone who knows one could pose as the other side",
				    h->name, hms ? "its mutual_secret" : "[iscsi] mutual_secret");
		if (!kl[key_index(SEC_INITIATOR, "discovery_chap")])
			h->discovery_chap = c->iscsi.discovery_chap;
	}
	return VTL_OK;
}

bool vtl_config_loopback(const char *host)
{
	struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
	struct addrinfo *ai;
	if (!host || !*host || getaddrinfo(host, NULL, &hints, &ai) != 0)
		return false;
	bool all = true;
	for (struct addrinfo *a = ai; a && all; a = a->ai_next) {
		if (a->ai_family == AF_INET) {
			const struct sockaddr_in *s4 = (const struct sockaddr_in *)a->ai_addr;
			all = (ntohl(s4->sin_addr.s_addr) >> IN_CLASSA_NSHIFT) == IN_LOOPBACKNET;
		} else if (a->ai_family == AF_INET6) {
			const struct in6_addr *a6 = &((const struct sockaddr_in6 *)a->ai_addr)->sin6_addr;
			all = IN6_IS_ADDR_LOOPBACK(a6) ||
			      (IN6_IS_ADDR_V4MAPPED(a6) && a6->s6_addr[12] == IN_LOOPBACKNET);
		} else {
			all = false;
		}
	}
	freeaddrinfo(ai);
	return all;
}

bool vtl_config_iscsi_guarded(const struct vtl_config *c)
{
	return c->iscsi.chap_user[0] || c->iscsi.hosts || c->iscsi.initiators;
}

bool vtl_config_has_secrets(const struct vtl_config *c)
{
	if (c->iscsi.chap_secret[0] || c->iscsi.mutual_secret[0] || c->daemon.http.token[0] || c->migrator.http.token[0])
		return true;
	for (unsigned i = 0; i < c->physicals; i++)
		if (c->physical[i].chap_secret[0] || c->physical[i].mutual_secret[0])
			return true;
	for (unsigned i = 0; i < c->iscsi.hosts; i++)
		if (c->iscsi.host[i]->chap_secret[0] || c->iscsi.host[i]->mutual_secret[0])
			return true;
	return false;
}

/*
 * A target that anyone on the network may use is asked for, never a default:
 * a non-loopback listen address needs CHAP, an allow list, or allow_anonymous.
 */
static int validate_exposure(struct parser *ps)
{
	const struct vtl_config *c = ps->c;
	if (vtl_config_iscsi_guarded(c) || c->iscsi.allow_anonymous || vtl_config_loopback(c->iscsi.listen))
		return VTL_OK;
	unsigned l = ps->key_line[key_index(SEC_ISCSI, "listen")];
	return perr(ps, l ? l : ps->sec_line[SEC_ISCSI], "[iscsi] listen = %s serves the network without CHAP or an "
		    "initiator allow list: any host there could read and overwrite every cartridge. Set chap_user and "
		    "chap_secret, [initiator NAME] sections or initiator lines; or allow_anonymous = yes (vtld then "
		    "warns); or listen = 127.0.0.1", c->iscsi.listen);
}

/*
 * An HTTP endpoint on another address than loopback serves the library's
 * state (and later its actions) to the network: only with a token.
 */
static int validate_http(struct parser *ps, enum section sec, const struct vtl_cfg_http *h, const char *name)
{
	if (!h->listen[0] || h->token[0] || http_listen_loopback(h->listen))
		return VTL_OK;
	unsigned l = ps->key_line[key_index(sec, "http")];
	return perr(ps, l, "[%s] http = %s is not a loopback address: set http_token too (every request must then carry "
		    "it), or listen on 127.0.0.1 behind a reverse proxy (docs/operations.md, \"HTTP endpoint\")", name,
		    h->listen);
}

/* Parses "HH:MM-HH:MM" into minutes of the day; false if it is not that. */
bool vtl_config_window(const char *w, unsigned *from, unsigned *to)
{
	unsigned h1, m1, h2, m2;
	char tail;
	if (sscanf(w, "%2u:%2u-%2u:%2u%c", &h1, &m1, &h2, &m2, &tail) != 4 || h1 > 23 || h2 > 23 || m1 > 59 || m2 > 59)
		return false;
	*from = h1 * 60 + m1;
	*to = h2 * 60 + m2;
	return true;
}

/* "[physical]" or "[physical NAME]" of p, as messages name it. */
static void physical_label(const struct vtl_physical_config *p, char *buf, size_t cap)
{
	snprintf(buf, cap, p->named ? "[physical %s]" : "[physical]", p->name);
}

/* [physical] type = st: a changer, drives (none: vtl-migrator finds them), and drive_sg lines (if any) one for
 * each drive. */
static int validate_st(struct parser *ps, const struct vtl_physical_config *p, const char *sec)
{
	const unsigned(*dl)[VTL_CFG_MAX_PHYS_DRIVES] = ps->devnode_line[p - ps->c->physical];
	if (!p->changer)
		return perr(ps, p->line, "%s type = st needs changer = /dev/sgN (lsscsi -g: "
			    "the mediumx line), and a drive = /dev/nstN line for each drive unless they are to be found "
			    "by serial number", sec);
	if (p->st_drives == 0 && p->st_drive_sgs)
		return perr(ps, dl[1][0], "%s drive_sg lines without drive lines: drives that are "
			    "found by serial number come with their sg nodes; list both or neither", sec);
	for (unsigned i = 0; i < p->st_drives; i++) {
		/* A rewinding node (/dev/st0) rewinds whenever it is closed: the migrator would lose its place. */
		const char *base = strrchr(p->drive[i], '/') + 1;
		if (base[0] == 's' && base[1] == 't')
			return perr(ps, dl[0][i], "%s drive = %s rewinds on close: use the "
				    "non-rewinding node /dev/n%s", sec, p->drive[i], base);
	}
	if (p->st_drive_sgs && p->st_drive_sgs != p->st_drives)
		return perr(ps, dl[1][0], "%s %u drive_sg lines for %u drives: give each drive's "
			    "sg node, in the order of the drive lines, or none", sec, p->st_drive_sgs, p->st_drives);
	return VTL_OK;
}

/* One physical library: its type's own keys and default paths. */
static int validate_physical(struct parser *ps, struct vtl_physical_config *p)
{
	struct vtl_config *c = ps->c;
	const unsigned *kl = ps->phys_key_line[p - c->physical];
	char sec[CAT_NAME_MAX + 16];
	physical_label(p, sec, sizeof sec);
	unsigned tl = kl[key_index(SEC_PHYSICAL, "type")];
	if (!strcmp(p->type, "iscsi")) {
		if (!p->portal[0] || !p->target[0])
			return perr(ps, p->line, "%s type = iscsi needs portal = HOST:PORT and target = IQN", sec);
		if (!p->initiator[0])
			snprintf(p->initiator, sizeof p->initiator, "iqn.2026-01.org.vtl:migrator");
	} else if (!strcmp(p->type, "sim")) {
		if (p->tapes > p->slots)
			return perr(ps, kl[key_index(SEC_PHYSICAL, "tapes")], "%s tapes = %u: more than its %u slots", sec,
				    p->tapes, p->slots);
		if (strlen(p->prefix) != 3)
			return perr(ps, kl[key_index(SEC_PHYSICAL, "prefix")], "%s prefix = %s: give 3 letters or digits "
				    "(the tapes are PREFIX001L<generation>, ...)", sec, p->prefix);
		/* A tape's barcode names it in the catalog: two simulated libraries must not make the same ones. */
		for (const struct vtl_physical_config *o = c->physical; o < p; o++)
			if (!strcmp(o->type, "sim") && !strcmp(o->prefix, p->prefix))
				return perr(ps, kl[key_index(SEC_PHYSICAL, "prefix")] ? kl[key_index(SEC_PHYSICAL, "prefix")]
											 : p->line,
					    "%s prefix = %s: the tapes of simulated library %s begin with %s too; give each "
					    "its own prefix (a tape's barcode names it in the catalog)", sec, p->prefix,
					    o->name, o->prefix);
		/* Several simulated libraries: each its own folder of tapes by default. */
		char dir[CAT_NAME_MAX + 16];
		snprintf(dir, sizeof dir, p->named && c->physicals > 1 ? "physical-%s" : "physical", p->name);
		if (!p->data_dir && !(p->data_dir = path_resolve(c->dir, dir)))
			return VTL_E_NOMEM;
	} else if (!strcmp(p->type, "st")) {
		int rc = validate_st(ps, p, sec);
		if (rc != VTL_OK)
			return rc;
	} else {
		return perr(ps, tl ? tl : p->line, "%s type = '%s': use sim (a simulated "
			    "LTO library), iscsi (a library reached over iSCSI) or st (a library attached to this "
			    "host: st drives, SCSI generic changer)", sec, p->type);
	}
	return VTL_OK;
}

/*
 * The libraries together: distinct names, and every copy pool kept by one
 * library. The rule: the only library serves every pool unless it names its
 * pools; with several, each names its pools, and a pool is in one library.
 */
static int validate_libraries(struct parser *ps)
{
	struct vtl_config *c = ps->c;
	for (unsigned i = 0; i < c->physicals; i++) {
		const struct vtl_physical_config *p = &c->physical[i];
		char sec[CAT_NAME_MAX + 16];
		physical_label(p, sec, sizeof sec);
		for (unsigned j = 0; j < i; j++)
			if (!strcmp(c->physical[j].name, p->name))
				return perr(ps, p->line, "%s: another physical library (line %u) is called %s too; give each "
					    "its own name", sec, c->physical[j].line, p->name);
		if (c->physicals > 1 && !p->pools)
			return perr(ps, p->line, "%s has no pools = line: with several physical libraries, name the copy "
				    "pools whose tapes each one keeps (e.g. pools = default)", sec);
		for (unsigned k = 0; k < p->pools; k++)
			for (unsigned j = 0; j < i; j++)
				if (vtl_config_library_serves(&c->physical[j], p->pool[k]))
					return perr(ps, ps->phys_key_line[i][key_index(SEC_PHYSICAL, "pools")],
						    "%s pools: pool %s is in physical library %s (line %u) already: a pool's "
						    "tapes are in one library", sec, p->pool[k], c->physical[j].name,
						    c->physical[j].line);
	}
	for (unsigned k = 0; c->physicals && k < c->policy.copy_pools; k++)
		if (vtl_config_pool_library(c, c->policy.copy_pool[k]) < 0) {
			unsigned l = ps->key_line[key_index(SEC_POLICY, "copy_pools")];
			char libs[256] = "";
			size_t at = 0;
			for (unsigned i = 0; i < c->physicals && at < sizeof libs; i++) {
				const struct vtl_physical_config *p = &c->physical[i];
				for (unsigned j = 0; j < p->pools && at < sizeof libs; j++) {
					int w = snprintf(libs + at, sizeof libs - at, "%s%s in %s", at ? ", " : "", p->pool[j],
							 p->name);
					at += w > 0 ? (size_t)w : 0;
				}
			}
			return perr(ps, l ? l : ps->sec_line[SEC_POLICY], "[policy] copy_pools: pool %s is in no physical "
				    "library's pools (%s): add it to the pools line of the library whose tapes hold it",
				    c->policy.copy_pool[k], libs);
		}
	return VTL_OK;
}

bool vtl_config_has_physical(const struct vtl_config *c)
{
	return c->physicals > 0;
}

const struct vtl_physical_config *vtl_config_physical_named(const struct vtl_config *c, const char *name)
{
	for (unsigned i = 0; i < c->physicals; i++)
		if (!strcmp(c->physical[i].name, name))
			return &c->physical[i];
	return NULL;
}

bool vtl_config_library_serves(const struct vtl_physical_config *p, const char *pool)
{
	if (!p->pools)
		return true;
	for (unsigned i = 0; i < p->pools; i++)
		if (!strcmp(p->pool[i], pool))
			return true;
	return false;
}

int vtl_config_pool_library(const struct vtl_config *c, const char *pool)
{
	for (unsigned i = 0; i < c->physicals; i++)
		if (vtl_config_library_serves(&c->physical[i], pool))
			return (int)i;
	return -1;
}

/* The physical libraries and [migrator]: the types' own keys, the ring's sizes, the rate window, default paths. */
static int validate_migration(struct parser *ps)
{
	struct vtl_config *c = ps->c;
	for (unsigned i = 0; i < c->physicals; i++) {
		int rc = validate_physical(ps, &c->physical[i]);
		if (rc != VTL_OK)
			return rc;
	}
	int lrc = validate_libraries(ps);
	if (lrc != VTL_OK)
		return lrc;
	if (c->migrator.watermark > c->migrator.buffers)
		return perr(ps, ps->key_line[key_index(SEC_MIGRATOR, "watermark")],
			    "[migrator] watermark = %u: more than its %u buffers", c->migrator.watermark, c->migrator.buffers);
	if (c->migrator.drives && c->migrator.recall_drives >= c->migrator.drives)
		return perr(ps, max_u(ps->key_line[key_index(SEC_MIGRATOR, "drives")],
				      ps->key_line[key_index(SEC_MIGRATOR, "recall_drives")]),
			    "[migrator] recall_drives = %u must be below drives = %u: copies need a drive too",
			    c->migrator.recall_drives, c->migrator.drives);
	unsigned from, to;
	if (c->migrator.window[0] && !vtl_config_window(c->migrator.window, &from, &to))
		return perr(ps, ps->key_line[key_index(SEC_MIGRATOR, "window")],
			    "[migrator] window = '%s': give HH:MM-HH:MM (e.g. 08:00-18:00)", c->migrator.window);
	if (c->policy.low_water >= c->policy.high_water)
		return perr(ps, max_u(ps->key_line[key_index(SEC_POLICY, "low_water")],
				      ps->key_line[key_index(SEC_POLICY, "high_water")]),
			    "[policy] low_water = %u must be below high_water = %u: releases run from the high mark down "
			    "to the low one", c->policy.low_water, c->policy.high_water);
	if (c->policy.throttle && c->policy.throttle < c->policy.high_water)
		return perr(ps, ps->key_line[key_index(SEC_POLICY, "throttle")],
			    "[policy] throttle = %u is below high_water = %u: hosts would be slowed before any disk copy "
			    "is released; use a fill at or above high_water, or 0 (never throttle)", c->policy.throttle,
			    c->policy.high_water);
	if (!c->migrator.control_socket) {
		if (!(c->migrator.control_socket = path_resolve(c->dir, "migrator.sock")))
			return VTL_E_NOMEM;
		if (strlen(c->migrator.control_socket) >= sizeof(((struct sockaddr_un *)0)->sun_path))
			return perr(ps, 0, "the default migrator socket %s is too long for a Unix socket path; set "
				    "[migrator] control_socket to a shorter path", c->migrator.control_socket);
	}
	return VTL_OK;
}

/* Checks what no single line can: element ranges, drive sections, LUNs, serials; fills the defaults that depend on others. */
static int validate(struct parser *ps)
{
	struct vtl_config *c = ps->c;
	if (!ps->sec_line[SEC_LIBRARY])
		return perr(ps, 0, "there is no [library] section; it needs at least slots = N (see "
			    "docs/configuration.md)");
	if (!ps->key_line[key_index(SEC_LIBRARY, "slots")])
		return perr(ps, ps->sec_line[SEC_LIBRARY], "[library] has no slots = N (the number of storage slots)");
	if (!ps->sec_line[SEC_POOL] || c->pool.members == 0)
		return perr(ps, ps->sec_line[SEC_POOL], "the pool has no member; add [pool] with one member = DIR line "
			    "per disk");

	/* Element address ranges: inside 0..0xFFFE, and apart. */
	struct range r[4] = {
		{"the transport (robot)", "transport_first", NULL, c->library.transport_first, 1},
		{"the drives", "drive_first", "drives", c->library.drive_first, c->library.drives},
		{"the storage slots", "slot_first", "slots", c->library.slot_first, c->library.slots},
		{"the mail slots", "mail_slot_first", "mail_slots", c->library.mail_slot_first, c->library.mail_slots},
	};
	for (int i = 0; i < 4; i++) {
		unsigned li = max_u(lib_line(ps, r[i].first_key), r[i].count_key ? lib_line(ps, r[i].count_key) : 0);
		if (r[i].count && r[i].first + r[i].count - 1 > ADDR_MAX)
			return perr(ps, li, "%s would take element addresses %u..%u, past %u; lower %s", r[i].what,
				    r[i].first, r[i].first + r[i].count - 1, ADDR_MAX, r[i].first_key);
	}
	for (int i = 0; i < 4; i++)
		for (int j = i + 1; j < 4; j++) {
			if (!r[i].count || !r[j].count)
				continue;
			unsigned ai = r[i].first, bi = r[i].first + r[i].count - 1;
			unsigned aj = r[j].first, bj = r[j].first + r[j].count - 1;
			if (ai > bj || aj > bi)
				continue;
			unsigned li = max_u(max_u(lib_line(ps, r[i].first_key),
						  r[i].count_key ? lib_line(ps, r[i].count_key) : 0),
					    max_u(lib_line(ps, r[j].first_key),
						  r[j].count_key ? lib_line(ps, r[j].count_key) : 0));
			return perr(ps, li, "%s (element addresses %u..%u) overlap %s (%u..%u); move one of them with "
				    "%s or %s", r[i].what, ai, bi, r[j].what, aj, bj, r[i].first_key, r[j].first_key);
		}

	/* Library serial default: stable for a name, so that hosts see the same library after a restart. */
	if (!c->library.serial[0])
		snprintf(c->library.serial, sizeof c->library.serial, "VTL%07u", (unsigned)(fnv1a(c->library.name) % 10000000u));

	/* Drives: sections inside 1..drives, defaults, generation, unique LUNs and serials. */
	for (unsigned i = 0; i < VTL_CFG_MAX_DRIVES; i++) {
		struct vtl_drive_config *d = &c->drive[i];
		if (i >= c->library.drives) {
			if (d->line)
				return perr(ps, d->line, "[drive %u]: the library has %u drive%s (drives = %u), so drive "
					    "sections are [drive 1] to [drive %u]; raise drives or remove this section",
					    i + 1, c->library.drives, c->library.drives == 1 ? "" : "s", c->library.drives,
					    c->library.drives);
			continue;
		}
		unsigned *kl = ps->drive_key_line[i];
		unsigned hl = d->line ? d->line : lib_line(ps, "drives");
		if (!kl[key_index(SEC_DRIVE, "serial")])
			snprintf(d->serial, sizeof d->serial, "%.*sD%02u", (int)(sizeof d->serial - 5), c->library.serial,
				 i + 1);
		if (!kl[key_index(SEC_DRIVE, "lun")])
			d->lun = i + 1;
		unsigned g = vtl_drive_generation(d->vendor, d->model);
		unsigned gl = kl[key_index(SEC_DRIVE, "generation")];
		if (gl) {
			if (g && g != d->generation)
				return perr(ps, gl, "[drive %u] generation = %u, but %s %s is an LTO-%u drive; remove "
					    "generation or correct it", i + 1, d->generation, d->vendor, d->model, g);
		} else if (g) {
			d->generation = g;
		} else {
			unsigned ml = max_u(kl[key_index(SEC_DRIVE, "vendor")], kl[key_index(SEC_DRIVE, "model")]);
			return perr(ps, ml ? ml : hl, "[drive %u]: cannot tell which LTO generation %s '%s' emulates "
				    "(known: IBM ULT3580-TD5..TD9 and TDA, HP Ultrium 5-SCSI..9-SCSI); add generation = 5..10",
				    i + 1, d->vendor, d->model);
		}
		unsigned ll = kl[key_index(SEC_DRIVE, "lun")] ? kl[key_index(SEC_DRIVE, "lun")] : hl;
		if (d->lun == c->library.lun)
			return perr(ps, ll, "[drive %u] lun %u is the changer's LUN (library lun = %u); give each device "
				    "its own LUN", i + 1, d->lun, c->library.lun);
		unsigned sl = kl[key_index(SEC_DRIVE, "serial")] ? kl[key_index(SEC_DRIVE, "serial")] : hl;
		if (strcmp(d->serial, c->library.serial) == 0)
			return perr(ps, sl, "[drive %u] serial %s is the library's serial; serial numbers must differ",
				    i + 1, d->serial);
		for (unsigned j = 0; j < i; j++) {
			/* Name the one written later in the file, at its line. */
			unsigned *kj = ps->drive_key_line[j];
			unsigned hj = c->drive[j].line ? c->drive[j].line : lib_line(ps, "drives");
			unsigned llj = kj[key_index(SEC_DRIVE, "lun")] ? kj[key_index(SEC_DRIVE, "lun")] : hj;
			unsigned slj = kj[key_index(SEC_DRIVE, "serial")] ? kj[key_index(SEC_DRIVE, "serial")] : hj;
			bool later = llj > ll;
			if (c->drive[j].lun == d->lun)
				return perr(ps, later ? llj : ll, "[drive %u] lun %u is also drive %u's LUN; give each device "
					    "its own LUN", later ? j + 1 : i + 1, d->lun, later ? i + 1 : j + 1);
			later = slj > sl;
			if (strcmp(c->drive[j].serial, d->serial) == 0)
				return perr(ps, later ? slj : sl, "[drive %u] serial %s is also drive %u's serial; serial "
					    "numbers must differ", later ? j + 1 : i + 1, d->serial, later ? i + 1 : j + 1);
		}
	}

	/* Pool sizes that only make sense together. */
	if (c->pool.readahead_memory && c->pool.readahead_chunk && c->pool.readahead_memory < c->pool.readahead_chunk)
		return perr(ps, ps->key_line[key_index(SEC_POOL, "readahead_memory")],
			    "[pool] readahead_memory (%llu) is smaller than readahead_chunk (%llu)",
			    (unsigned long long)c->pool.readahead_memory, (unsigned long long)c->pool.readahead_chunk);

	/* Defaults that are paths or derived from the name. */
	if (!c->catalog.path && !(c->catalog.path = path_resolve(c->dir, "catalog.db")))
		return VTL_E_NOMEM;
	if (!c->daemon.control_socket) {
		if (!(c->daemon.control_socket = path_resolve(c->dir, "vtld.sock")))
			return VTL_E_NOMEM;
		if (strlen(c->daemon.control_socket) >= sizeof(((struct sockaddr_un *)0)->sun_path))
			return perr(ps, 0, "the default control socket %s is too long for a Unix socket path; set "
				    "[daemon] control_socket to a shorter path", c->daemon.control_socket);
	}
	int prc = validate_migration(ps);
	if (prc)
		return prc;
	for (unsigned i = 0; i < c->pool.members; i++)
		if (strcmp(c->pool.member[i], c->catalog.path) == 0)
			return perr(ps, ps->member_line[i], "pool member %s is also the catalog path", c->catalog.path);
	int rc = validate_chap(ps, SEC_ISCSI, "iscsi", ps->key_line, c->iscsi.chap_secret, c->iscsi.mutual_secret);
	for (unsigned i = 0; rc == VTL_OK && i < c->physicals; i++) {
		const struct vtl_physical_config *p = &c->physical[i];
		char sec[CAT_NAME_MAX + 16];
		snprintf(sec, sizeof sec, p->named ? "physical %s" : "physical", p->name);
		rc = validate_chap(ps, SEC_PHYSICAL, sec, ps->phys_key_line[i], p->chap_secret, p->mutual_secret);
	}
	if (rc == VTL_OK)
		rc = validate_exposure(ps);
	if (rc == VTL_OK)
		rc = validate_http(ps, SEC_DAEMON, &c->daemon.http, "daemon");
	if (rc == VTL_OK)
		rc = validate_http(ps, SEC_MIGRATOR, &c->migrator.http, "migrator");
	if (rc != VTL_OK)
		return rc;
	if (!c->iscsi.target_iqn[0]) {
		int n = snprintf(c->iscsi.target_iqn, sizeof c->iscsi.target_iqn, "iqn.2026-01.org.vtl:%s", c->library.name);
		for (int i = 0; i < n && i < (int)sizeof c->iscsi.target_iqn; i++)
			c->iscsi.target_iqn[i] = (char)tolower((unsigned char)c->iscsi.target_iqn[i]);
		for (char *p = c->iscsi.target_iqn; *p; p++)
			if (*p == '_')
				*p = '-';
	}
	return VTL_OK;
}

static void set_defaults(struct vtl_config *c)
{
	snprintf(c->library.name, sizeof c->library.name, "vtl");
	snprintf(c->library.vendor, sizeof c->library.vendor, "IBM");
	snprintf(c->library.product, sizeof c->library.product, "03584L32");
	snprintf(c->library.revision, sizeof c->library.revision, "0100");
	c->library.lun = 0;
	c->library.drives = 0;
	c->library.mail_slots = 0;
	c->library.transport_first = 1;
	c->library.drive_first = 257;
	c->library.mail_slot_first = 769;
	c->library.slot_first = 1025;
	for (unsigned i = 0; i < VTL_CFG_MAX_DRIVES; i++) {
		struct vtl_drive_config *d = &c->drive[i];
		d->number = i + 1;
		snprintf(d->vendor, sizeof d->vendor, "IBM");
		snprintf(d->model, sizeof d->model, "ULT3580-TD8");
		snprintf(d->revision, sizeof d->revision, "0100");
	}
	snprintf(c->iscsi.listen, sizeof c->iscsi.listen, "127.0.0.1");
	c->iscsi.port = 3260;
	c->iscsi.nop_interval = 30;
	c->iscsi.auth_fail_delay = AUTH_FAIL_DELAY_DEFAULT;
	snprintf(c->iscsi.advertise, sizeof c->iscsi.advertise, "local");
	snprintf(c->daemon.log_level, sizeof c->daemon.log_level, "info");
	for (unsigned i = 0; i < VTL_CFG_MAX_PHYS_LIBS; i++) {
		struct vtl_physical_config *p = &c->physical[i];
		snprintf(p->name, sizeof p->name, "physical");
		p->generation = 9;
		p->drives = 2;
		p->slots = 20;
		p->tapes = 10;
		p->backhitch_ms = 3000;
		p->keep_data = true;
		snprintf(p->prefix, sizeof p->prefix, "PHY");
	}
	c->pool.readahead_direct = true;
	c->pool.write_direct = false; /* off until a follower race is fixed (docs/configuration.md) */
	c->migrator.buffers = 64;
	c->migrator.buffer_size = 1u << 20;
	c->migrator.readers = 4;
	c->migrator.copy_floor = 0; /* the drive's own lowest matched speed alone (migrator/ingest.h) */
	c->migrator.verify = true;
	c->policy = (struct vtl_policy_config){.interval = 10, .premigrate = VTL_POLICY_FULL | VTL_POLICY_EJECTED | VTL_POLICY_IDLE,
					       .idle = POLICY_IDLE_DEFAULT, .high_water = 85, .low_water = 70, .throttle = 95,
					       .throttle_rate = 20, .copy_pools = 1};
	snprintf(c->policy.copy_pool[0], sizeof c->policy.copy_pool[0], "%s", CAT_POOL_DEFAULT);
	snprintf(c->migrator.log_level, sizeof c->migrator.log_level, "info");
}

/* Absolute folder of the file name: its dirname, made absolute against the working directory. */
static char *dir_of(const char *name)
{
	const char *slash = strrchr(name, '/');
	char *d;
	if (name[0] == '/') {
		d = strndup(name, slash == name ? 1 : (size_t)(slash - name));
	} else {
		char cwd[PATH_MAX];
		if (!getcwd(cwd, sizeof cwd))
			return NULL;
		size_t dl = slash ? (size_t)(slash - name) : 0;
		size_t n = strlen(cwd) + dl + 2;
		d = malloc(n);
		if (d)
			snprintf(d, n, "%s/%.*s", cwd, (int)dl, name);
	}
	if (d)
		path_normalize(d);
	return d;
}

void vtl_config_free(struct vtl_config *c)
{
	if (!c)
		return;
	free(c->path);
	free(c->dir);
	for (unsigned i = 0; i < c->pool.members; i++)
		free(c->pool.member[i]);
	free(c->catalog.path);
	free(c->daemon.control_socket);
	for (unsigned l = 0; l < VTL_CFG_MAX_PHYS_LIBS; l++) {
		struct vtl_physical_config *p = &c->physical[l];
		free(p->data_dir);
		free(p->changer);
		for (unsigned i = 0; i < p->st_drives; i++)
			free(p->drive[i]);
		for (unsigned i = 0; i < p->st_drive_sgs; i++)
			free(p->drive_sg[i]);
	}
	free(c->migrator.control_socket);
	for (unsigned i = 0; i < c->iscsi.initiators; i++)
		free(c->iscsi.initiator[i]);
	for (unsigned i = 0; i < c->iscsi.hosts; i++)
		free(c->iscsi.host[i]);
	free(c);
}

int vtl_config_parse(const char *name, const char *text, size_t len, struct vtl_config **out, char *err,
		     size_t errlen)
{
	*out = NULL;
	if (err && errlen)
		err[0] = 0;
	struct vtl_config *c = calloc(1, sizeof *c);
	struct parser *ps = calloc(1, sizeof *ps);
	char *buf = malloc(LINE_MAX_LEN + 1);
	int rc = VTL_OK;
	if (!c || !ps || !buf || !(c->path = strdup(name)) || !(c->dir = dir_of(name))) {
		rc = VTL_E_NOMEM;
		goto out;
	}
	set_defaults(c);
	ps->name = name;
	ps->c = c;
	ps->err = err;
	ps->errlen = errlen;
	size_t pos = 0;
	while (pos < len) {
		ps->line++;
		size_t end = pos;
		while (end < len && text[end] != '\n')
			end++;
		size_t n = end - pos;
		if (n && text[end - 1] == '\r')
			n--;
		if (n > LINE_MAX_LEN) {
			rc = perr(ps, ps->line, "the line is longer than %d bytes", LINE_MAX_LEN);
			goto out;
		}
		memcpy(buf, text + pos, n);
		buf[n] = 0;
		if (strlen(buf) != n) {
			rc = perr(ps, ps->line, "the line holds a NUL byte; is this a text file?");
			goto out;
		}
		if ((rc = parse_line(ps, buf)))
			goto out;
		pos = end + 1;
	}
	rc = validate(ps);
out:
	if (rc == VTL_E_NOMEM && err && errlen)
		snprintf(err, errlen, "%s: out of memory", name);
	free(buf);
	free(ps);
	if (rc) {
		vtl_config_free(c);
		return rc;
	}
	*out = c;
	return VTL_OK;
}

const char *vtl_config_installed_path(void)
{
	return VTL_SYSCONFDIR "/vtl/vtl.conf";
}

const char *vtl_config_default_path(void)
{
	const char *env = getenv("VTL_CONFIG");
	return env && env[0] ? env : vtl_config_installed_path();
}

int vtl_config_load(const char *path, struct vtl_config **out, char *err, size_t errlen)
{
	*out = NULL;
	FILE *f = fopen(path, "re");
	struct stat st;
	if (f && fstat(fileno(f), &st) != 0) {
		fclose(f);
		f = NULL;
	}
	if (!f) {
		if (err && errlen)
			snprintf(err, errlen, "cannot read the configuration file %s: %s", path, strerror(errno));
		return VTL_E_IO;
	}
	char *text = NULL;
	size_t len = 0, cap = 0;
	int rc = VTL_OK;
	for (;;) {
		if (cap - len < 65536) {
			if (cap > (16u << 20)) {
				if (err && errlen)
					snprintf(err, errlen, "%s: larger than 16 MiB; is this the configuration file?", path);
				rc = VTL_E_CONFIG;
				break;
			}
			char *t = realloc(text, cap + 65536);
			if (!t) {
				rc = VTL_E_NOMEM;
				break;
			}
			text = t;
			cap += 65536;
		}
		size_t r = fread(text + len, 1, cap - len, f);
		len += r;
		if (r == 0) {
			if (ferror(f)) {
				if (err && errlen)
					snprintf(err, errlen, "cannot read the configuration file %s: %s", path,
						 strerror(errno));
				rc = VTL_E_IO;
			}
			break;
		}
	}
	fclose(f);
	if (!rc) {
		rc = vtl_config_parse(path, text, len, out, err, errlen);
		/* The mode of the file read (fstat, not a second lookup of the path that could be another file). */
		if (!rc && vtl_config_has_secrets(*out) && (st.st_mode & SECRET_MODE_REFUSED)) {
			if (err && errlen)
				snprintf(err, errlen, "%s holds %s but its mode %04o lets %s: chmod 600 %s "
					 "(or 640 with a group of the library's operators only)", path,
					 (*out)->daemon.http.token[0] || (*out)->migrator.http.token[0] ? "secrets" : "CHAP secrets",
					 (unsigned)(st.st_mode & 07777),
					 st.st_mode & (S_IROTH | S_IWOTH) ? "other users read it" : "its group change it",
					 path);
			vtl_config_free(*out);
			*out = NULL;
			rc = VTL_E_CONFIG;
		}
	} else if (rc == VTL_E_NOMEM && err && errlen)
		snprintf(err, errlen, "%s: out of memory", path);
	free(text);
	return rc;
}

void vtl_config_pool(const struct vtl_config *c, struct vtl_pool_config *pc)
{
	memset(pc, 0, sizeof *pc);
	for (unsigned i = 0; i < c->pool.members; i++)
		pc->members[i] = c->pool.member[i];
	pc->n_members = c->pool.members;
	pc->segment_size = c->pool.segment_size;
	pc->member_quota = c->pool.member_quota;
	pc->reserve_bytes = c->pool.reserve;
	pc->readahead_depth = c->pool.readahead_depth;
	pc->readahead_chunk = (size_t)c->pool.readahead_chunk;
	pc->readahead_memory = (size_t)c->pool.readahead_memory;
	pc->readahead_buffered = !c->pool.readahead_direct;
	pc->write_buffered = !c->pool.write_direct;
	pc->lz4_acceleration = c->pool.lz4_acceleration;
	pc->io_threads = c->pool.io_threads;
}

void vtl_config_library(const struct vtl_config *c, struct cat_library *lib)
{
	memset(lib, 0, sizeof *lib);
	snprintf(lib->name, sizeof lib->name, "%s", c->library.name);
	snprintf(lib->vendor, sizeof lib->vendor, "%s", c->library.vendor);
	snprintf(lib->product, sizeof lib->product, "%s", c->library.product);
	snprintf(lib->revision, sizeof lib->revision, "%s", c->library.revision);
	snprintf(lib->serial, sizeof lib->serial, "%s", c->library.serial);
	lib->transport_first = c->library.transport_first;
	lib->transports = 1;
	lib->slot_first = c->library.slot_first;
	lib->slots = (uint16_t)c->library.slots;
	lib->ie_first = c->library.mail_slot_first;
	lib->ies = (uint16_t)c->library.mail_slots;
	lib->drive_first = c->library.drive_first;
	lib->drives = (uint16_t)c->library.drives;
}

/* ------------------------------------------------------------- comparing */

/* out = text, cut with "..." when it does not fit. */
static void value_text(char *out, const char *text)
{
	size_t n = strlen(text);
	if (n < VTL_CFG_VALUE_TEXT)
		memcpy(out, text, n + 1);
	else
		snprintf(out, VTL_CFG_VALUE_TEXT, "%.*s...", VTL_CFG_VALUE_TEXT - 4, text);
}

/* A list of n strings as "a, b, c" ("(none)" for none), cut to fit. */
static void list_text(char *out, char *const *items, unsigned n)
{
	char buf[VTL_CFG_VALUE_TEXT * 2];
	size_t at = 0;
	buf[0] = 0;
	for (unsigned i = 0; i < n && at < sizeof buf - 1; i++) {
		int w = snprintf(buf + at, sizeof buf - at, "%s%s", i ? ", " : "", items[i] ? items[i] : "");
		if (w < 0)
			break;
		at += (size_t)w < sizeof buf - at ? (size_t)w : sizeof buf - at - 1;
	}
	value_text(out, n ? buf : "(none)");
}

static bool same_list(char *const *a, unsigned na, char *const *b, unsigned nb)
{
	if (na != nb)
		return false;
	for (unsigned i = 0; i < na; i++)
		if (strcmp(a[i] ? a[i] : "", b[i] ? b[i] : "") != 0)
			return false;
	return true;
}

struct differ {
	vtl_config_change_fn fn;
	void *arg;
	unsigned n;
};

static void report(struct differ *d, const struct keydef *k, const char *sec_arg, const char *from, const char *to)
{
	struct vtl_config_change ch = {.section = section_names[k ? k->sec : SEC_NONE], .key = k ? k->name : "(section)"};
	snprintf(ch.section_arg, sizeof ch.section_arg, "%s", sec_arg ? sec_arg : "");
	bool secret = k && k->type == K_SECRET;
	value_text(ch.from, secret ? "(secret)" : from);
	value_text(ch.to, secret ? "(secret)" : to);
	d->n++;
	if (d->fn)
		d->fn(d->arg, &ch);
}

/* Writes the value of scalar key k at base into out (VTL_CFG_VALUE_TEXT * 2 bytes). */
static void scalar_text(const struct keydef *k, const char *base, char *out, size_t cap)
{
	const void *f = base + k->off;
	switch (k->type) {
	case K_RATE:
		if (*(const unsigned *)f == VTL_CFG_POOL_RATE_AUTO)
			snprintf(out, cap, "auto");
		else
			snprintf(out, cap, "%u", *(const unsigned *)f);
		break;
	case K_UINT: case K_DURATION: case K_RULES: case K_DRIVES:
		snprintf(out, cap, "%u", *(const unsigned *)f);
		break;
	case K_ADDR:
		snprintf(out, cap, "%u", (unsigned)*(const uint16_t *)f);
		break;
	case K_SIZE:
		snprintf(out, cap, "%llu", (unsigned long long)*(const uint64_t *)f);
		break;
	case K_INT:
		snprintf(out, cap, "%d", *(const int *)f);
		break;
	case K_BOOL:
		snprintf(out, cap, "%s", *(const bool *)f ? "yes" : "no");
		break;
	case K_PATH: {
		const char *p = *(char *const *)f;
		snprintf(out, cap, "%s", p ? p : "(none)");
		break;
	}
	case K_GROUP:
		snprintf(out, cap, "%s", ((const struct vtl_cfg_group *)f)->name[0] ? ((const struct vtl_cfg_group *)f)->name
										    : "(none)");
		break;
	default: /* the string kinds; an unset one ("") reads as such in a message */
		snprintf(out, cap, "%s", *(const char *)f ? (const char *)f : "(none)");
		break;
	}
}

/* Compares the scalar keys of section sec between the two bases (a whole config, a drive, an initiator). */
static void diff_section(struct differ *d, enum section sec, const char *a, const char *b, const char *sec_arg)
{
	char ta[VTL_CFG_VALUE_TEXT * 2], tb[VTL_CFG_VALUE_TEXT * 2];
	for (size_t i = 0; i < NKEYS; i++) {
		const struct keydef *k = &keys[i];
		if (k->sec != sec || k->type == K_MEMBER || k->type == K_INITIATOR || k->type == K_DEVNODE ||
		    k->type == K_POOLS || k->type == K_LIBPOOLS)
			continue;
		scalar_text(k, a, ta, sizeof ta);
		scalar_text(k, b, tb, sizeof tb);
		if (strcmp(ta, tb) != 0)
			report(d, k, sec_arg, ta, tb);
	}
}

static const struct keydef *key_of(enum section sec, const char *name)
{
	for (size_t i = 0; i < NKEYS; i++)
		if (keys[i].sec == sec && !strcmp(keys[i].name, name))
			return &keys[i];
	return NULL;
}

/* A repeatable key as one list. */
static void diff_list(struct differ *d, enum section sec, const char *sec_arg, const char *name, char *const *a,
		      unsigned na, char *const *b, unsigned nb)
{
	if (same_list(a, na, b, nb))
		return;
	char ta[VTL_CFG_VALUE_TEXT], tb[VTL_CFG_VALUE_TEXT];
	list_text(ta, a, na);
	list_text(tb, b, nb);
	report(d, key_of(sec, name), sec_arg, ta, tb);
}

/* The library of c called like p ([physical NAME] by NAME; the plain [physical] matches a plain one), or NULL. */
static const struct vtl_physical_config *phys_like(const struct vtl_config *c, const struct vtl_physical_config *p)
{
	for (unsigned i = 0; i < c->physicals; i++)
		if (c->physical[i].named == p->named && (!p->named || !strcmp(c->physical[i].name, p->name)))
			return &c->physical[i];
	return NULL;
}

/* One physical library's keys; its section's argument is NAME for [physical NAME]. */
static void diff_physical(struct differ *d, const struct vtl_physical_config *a, const struct vtl_physical_config *b)
{
	const char *arg = a->named ? a->name : NULL;
	diff_section(d, SEC_PHYSICAL, (const char *)a, (const char *)b, arg);
	diff_list(d, SEC_PHYSICAL, arg, "drive", a->drive, a->st_drives, b->drive, b->st_drives);
	diff_list(d, SEC_PHYSICAL, arg, "drive_sg", a->drive_sg, a->st_drive_sgs, b->drive_sg, b->st_drive_sgs);
	char *pa[VTL_CFG_MAX_LIB_POOLS], *pb[VTL_CFG_MAX_LIB_POOLS];
	for (unsigned i = 0; i < VTL_CFG_MAX_LIB_POOLS; i++) {
		pa[i] = (char *)a->pool[i];
		pb[i] = (char *)b->pool[i];
	}
	diff_list(d, SEC_PHYSICAL, arg, "pools", pa, a->pools, pb, b->pools);
}

static const struct vtl_initiator_config *host_named(const struct vtl_config *c, const char *name)
{
	for (unsigned i = 0; i < c->iscsi.hosts; i++)
		if (!strcmp(c->iscsi.host[i]->name, name))
			return c->iscsi.host[i];
	return NULL;
}

unsigned vtl_config_diff(const struct vtl_config *a, const struct vtl_config *b, vtl_config_change_fn fn, void *arg)
{
	struct differ d = {.fn = fn, .arg = arg};
	for (enum section sec = SEC_LIBRARY; sec < SEC_COUNT; sec++)
		if (sec != SEC_DRIVE && sec != SEC_INITIATOR && sec != SEC_PHYSICAL)
			diff_section(&d, sec, (const char *)a, (const char *)b, NULL);
	diff_list(&d, SEC_POOL, NULL, "member", a->pool.member, a->pool.members, b->pool.member, b->pool.members);
	diff_list(&d, SEC_ISCSI, NULL, "initiator", a->iscsi.initiator, a->iscsi.initiators, b->iscsi.initiator,
		  b->iscsi.initiators);
	/* Physical libraries: by name ([physical NAME]), in either file's order; a plain [physical] with a plain one. */
	static const struct keydef phys_key = {.sec = SEC_PHYSICAL, .name = "(section)", .type = K_TEXT};
	for (unsigned i = 0; i < a->physicals; i++) {
		const struct vtl_physical_config *pa = &a->physical[i], *pb = phys_like(b, pa);
		if (pb)
			diff_physical(&d, pa, pb);
		else
			report(&d, &phys_key, pa->named ? pa->name : NULL, "present", "removed");
	}
	for (unsigned i = 0; i < b->physicals; i++)
		if (!phys_like(a, &b->physical[i]))
			report(&d, &phys_key, b->physical[i].named ? b->physical[i].name : NULL, "absent", "added");
	char *pa[VTL_POLICY_MAX_COPIES], *pb[VTL_POLICY_MAX_COPIES];
	for (unsigned i = 0; i < VTL_POLICY_MAX_COPIES; i++) {
		pa[i] = (char *)a->policy.copy_pool[i];
		pb[i] = (char *)b->policy.copy_pool[i];
	}
	diff_list(&d, SEC_POLICY, NULL, "copy_pools", pa, a->policy.copy_pools, pb, b->policy.copy_pools);
	/* [drive N]: the drives both have, key by key; the count itself is [library] drives. */
	unsigned drives = a->library.drives < b->library.drives ? a->library.drives : b->library.drives;
	for (unsigned i = 0; i < drives; i++) {
		char n[16];
		snprintf(n, sizeof n, "%u", i + 1);
		diff_section(&d, SEC_DRIVE, (const char *)&a->drive[i], (const char *)&b->drive[i], n);
	}
	/* [initiator NAME]: by name, in either file's order. */
	static const struct keydef section_key = {.sec = SEC_INITIATOR, .name = "(section)", .type = K_TEXT};
	for (unsigned i = 0; i < a->iscsi.hosts; i++) {
		const struct vtl_initiator_config *ha = a->iscsi.host[i], *hb = host_named(b, ha->name);
		if (hb)
			diff_section(&d, SEC_INITIATOR, (const char *)ha, (const char *)hb, ha->name);
		else
			report(&d, &section_key, ha->name, "present", "removed");
	}
	for (unsigned i = 0; i < b->iscsi.hosts; i++)
		if (!host_named(a, b->iscsi.host[i]->name))
			report(&d, &section_key, b->iscsi.host[i]->name, "absent", "added");
	return d.n;
}

struct plan {
	const char *const *reloads, *const *ignores;
	char *applied, *refused;
	size_t acap, rcap, aat, rat;
	unsigned napplied, nrefused;
};

bool vtl_config_rule_matches(const char *const *rules, const char *section, const char *key)
{
	size_t n = strlen(section);
	for (; rules && *rules; rules++) {
		if (strncmp(*rules, section, n) != 0 || (*rules)[n] != ' ')
			continue;
		const char *k = *rules + n + 1;
		if (!strcmp(k, "*") || !strcmp(k, key))
			return true;
	}
	return false;
}

static bool rule_matches(const char *const *rules, const struct vtl_config_change *ch)
{
	return vtl_config_rule_matches(rules, ch->section, ch->key);
}

void vtl_config_keys(vtl_config_key_fn fn, void *arg)
{
	for (size_t i = 0; i < NKEYS; i++)
		fn(arg, section_names[keys[i].sec], keys[i].name);
	/* The sections vtl_config_diff reports whole when one file has them and the other not. */
	fn(arg, section_names[SEC_INITIATOR], "(section)");
	fn(arg, section_names[SEC_PHYSICAL], "(section)");
}

/* Appends "[SECTION ARG] key changed from X to Y" (or "... changed" for a secret) to buf. */
static void append_change(char *buf, size_t cap, size_t *at, const struct vtl_config_change *ch)
{
	if (*at >= cap)
		return;
	int w;
	const char *sep = *at ? ", " : "";
	const char *sp = ch->section_arg[0] ? " " : "";
	if (!strcmp(ch->key, "(section)"))
		w = snprintf(buf + *at, cap - *at, "%s[%s%s%s] %s", sep, ch->section, sp, ch->section_arg,
			     !strcmp(ch->to, "added") ? "added" : "removed");
	else if (!strcmp(ch->from, "(secret)"))
		w = snprintf(buf + *at, cap - *at, "%s[%s%s%s] %s changed", sep, ch->section, sp, ch->section_arg, ch->key);
	else
		w = snprintf(buf + *at, cap - *at, "%s[%s%s%s] %s changed from %s to %s", sep, ch->section, sp,
			     ch->section_arg, ch->key, ch->from, ch->to);
	if (w > 0)
		*at += (size_t)w < cap - *at ? (size_t)w : cap - *at;
}

static void plan_change(void *arg, const struct vtl_config_change *ch)
{
	struct plan *p = arg;
	if (rule_matches(p->ignores, ch))
		return;
	if (rule_matches(p->reloads, ch)) {
		append_change(p->applied, p->acap, &p->aat, ch);
		p->napplied++;
	} else {
		append_change(p->refused, p->rcap, &p->rat, ch);
		p->nrefused++;
	}
}

int vtl_config_reload_plan(const struct vtl_config *cur, const struct vtl_config *next, const char *const *reloads,
			   const char *const *ignores, char *applied, size_t acap, char *refused, size_t rcap)
{
	char a[1024] = "", r[1024] = "";
	struct plan p = {.reloads = reloads, .ignores = ignores, .applied = a, .refused = r, .acap = sizeof a,
			 .rcap = sizeof r};
	vtl_config_diff(cur, next, plan_change, &p);
	if (p.nrefused) {
		snprintf(refused, rcap, "%s: %s; nothing applied", r, p.nrefused == 1 ? "needs a restart" : "need a restart");
		if (acap)
			applied[0] = 0;
		return VTL_E_CONFIG;
	}
	snprintf(applied, acap, "%s", p.napplied ? a : "nothing this daemon reads changed");
	if (rcap)
		refused[0] = 0;
	return (int)p.napplied;
}
