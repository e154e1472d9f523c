/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The library configuration file, read by vtld, vtl-migrator and vtlctl
 * (docs/configuration.md is its reference).
 *
 * INI style: "[section]" or "[drive N]" headers, "key = value" lines, blank
 * lines, and comments: a line whose first non-blank character is # or ;, or
 * the rest of a line from a # that follows a blank. Keys and section names
 * are case-insensitive; values keep their case. A value may be written in
 * double quotes (to keep a # or leading blanks). Every unknown section or
 * key, every repeated key (but pool "member") and every out-of-range value
 * is an error "FILE:LINE: ...", so that a typo never goes unnoticed.
 *
 * Relative paths resolve against the folder of the configuration file.
 */
#ifndef VTL_CONFIG_CONFIG_H
#define VTL_CONFIG_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "backend/pool.h"
#include "catalog/catalog.h"
#include "common/http.h"

#define VTL_CFG_MAX_DRIVES 256
#define VTL_CFG_MAX_LUN 255
#define VTL_CFG_ERR_LEN 512 /* a big enough err buffer for every message */
/* The allow list: [iscsi] initiator lines and [initiator NAME] sections together. */
#define VTL_CFG_MAX_INITIATORS 256
#define VTL_CFG_NAME_MAX 223 /* bytes of an iSCSI name (RFC 7143 4.2.7.1) */
#define VTL_CFG_AUTH_FAIL_DELAY_MAX 60 /* [iscsi] auth_fail_delay: longer only holds connections open */
#define VTL_CFG_MAX_PHYS_DRIVES 16 /* [physical] drive lines (type = st): PHYS_MAX_DRIVES */
#define VTL_CFG_POOL_RATE_AUTO 0xFFFFFFFFu /* [migrator] pool_rate = auto: above any number the key takes */
#define VTL_CFG_MAX_PHYS_LIBS 4    /* [physical NAME] sections: a site library, a vault, two more rooms */
#define VTL_CFG_MAX_LIB_POOLS 8    /* names in a [physical NAME] pools line */
/* CHAP secrets: RFC 7143 12.1.3 recommends 12 to 16 bytes; shorter ones fall to an offline guess from one exchange. */
#define VTL_CFG_CHAP_SECRET_MIN 12
#define VTL_CFG_CHAP_SECRET_MAX 255
#define VTL_CFG_GROUP_MAX 64 /* a control_group name with its NUL (Linux's shadow-utils allow 32 characters) */

/* A control socket's group (docs/configuration.md): its members may use the socket too. */
struct vtl_cfg_group {
	char name[VTL_CFG_GROUP_MAX]; /* "" = no group: root and the daemon's own user only */
	gid_t gid;                    /* looked up when the file is read */
};

/* A daemon's HTTP endpoint (docs/operations.md, "HTTP endpoint"); listen "" = off. 0 limits: common/http.h's defaults. */
struct vtl_cfg_http {
	char listen[HTTP_LISTEN_MAX];    /* "127.0.0.1:9110" */
	char token[HTTP_TOKEN_MAX + 1];  /* "" = none: then only a loopback address is served */
	unsigned connections, per_address, timeout;
};


struct vtl_drive_config {
	unsigned number;             /* 1..drives: the N of [drive N] */
	unsigned line;               /* line of its [drive N] header; 0 if it has none (all defaults) */
	char vendor[9], model[17], revision[5], serial[CAT_BARCODE_MAX + 1];
	unsigned lun;
	unsigned generation;         /* LTO generation it emulates, 5..10 */
};

/* [policy] premigrate: the rules that make a resident cartridge a candidate for a copy (bits). */
#define VTL_POLICY_FULL 1u    /* it reached its early-warning point */
#define VTL_POLICY_EJECTED 2u /* it sits in an import/export (mail) slot */
#define VTL_POLICY_IDLE 4u    /* no drive has mounted it for [policy] idle */
#define VTL_POLICY_MAX_COPIES 2 /* [policy] copy_pools: a copy on site and one in another pool (a vault) */

/* The migrator's cache policy of the library's disk pool (docs/configuration.md, [policy]). */
struct vtl_policy_config {
	unsigned interval;       /* seconds between policy passes */
	unsigned premigrate;     /* VTL_POLICY_* bits; 0: none */
	unsigned idle;           /* seconds a cartridge not mounted becomes a candidate; 0: the rule is off */
	unsigned high_water;     /* pool fill, percent, from which disk copies are released */
	unsigned low_water;      /* ... down to this fill */
	unsigned throttle;       /* pool fill, percent, from which host writes are slowed; 0: never */
	unsigned throttle_rate;  /* MB/s hosts may still write at, all drives together, when throttled */
	/* The physical pools a cartridge gets a copy in, in order (1 or 2): released only once it has all. */
	char copy_pool[VTL_POLICY_MAX_COPIES][CAT_NAME_MAX + 1];
	unsigned copy_pools;
};

/* An [initiator NAME] section: one host's own CHAP credentials, bound to the InitiatorName it sends. */
struct vtl_initiator_config {
	char name[VTL_CFG_NAME_MAX + 1]; /* the InitiatorName (also in the allow list) */
	unsigned line;                  /* of its [initiator NAME] header */
	char chap_user[256], chap_secret[VTL_CFG_CHAP_SECRET_MAX + 1];
	char mutual_user[256], mutual_secret[VTL_CFG_CHAP_SECRET_MAX + 1]; /* "": the [iscsi] ones */
	bool discovery_chap;            /* default: [iscsi] discovery_chap */
};

/* A physical library vtl-migrator copies cartridges to (docs/migrator.md): a [physical] or [physical NAME] section. */
struct vtl_physical_config {
	char name[CAT_NAME_MAX + 1];  /* its name in the catalog (ptape.library): NAME, or [physical] name */
	unsigned line;                /* of its section header */
	bool named;                   /* [physical NAME] (else a plain [physical]) */
	/* pools: the copy pools whose tapes are in it; 0 (none given, the only library): every pool */
	char pool[VTL_CFG_MAX_LIB_POOLS][CAT_NAME_MAX + 1];
	unsigned pools;
	char type[8];                 /* "sim", "iscsi" or "st" */
	/* sim */
	unsigned generation, drives, slots, mail_slots, tapes;
	uint64_t tape_capacity, drive_buffer; /* 0: the generation's native capacity; 1 GiB */
	char prefix[4];               /* its tapes' barcodes begin with these 3 characters (default PHY) */
	unsigned rate;                /* MB/s; 0: the generation's native rate */
	unsigned backhitch_ms, load_ms, locate_ms;
	char *data_dir;               /* absolute: where the simulated tapes are kept */
	bool keep_data;               /* no: keep only lengths and checksums (benchmarks) */
	/* iscsi */
	char portal[256];             /* host:port */
	char target[224], initiator[224];
	char chap_user[256], chap_secret[VTL_CFG_CHAP_SECRET_MAX + 1];
	/* mutual CHAP: the name and secret the library's target must prove it knows; "" = unset */
	char mutual_user[256], mutual_secret[VTL_CFG_CHAP_SECRET_MAX + 1];
	/* st: the changer's sg node, the drives' non-rewinding st nodes and (optional) their sg nodes, in order */
	char *changer;
	char *drive[VTL_CFG_MAX_PHYS_DRIVES], *drive_sg[VTL_CFG_MAX_PHYS_DRIVES];
	unsigned st_drives, st_drive_sgs;
};

struct vtl_config {
	char *path; /* the file, as given */
	char *dir;  /* its folder, absolute: the base of relative paths */

	struct {
		char name[CAT_NAME_MAX + 1];
		char vendor[9], product[17], revision[5], serial[CAT_BARCODE_MAX + 1];
		unsigned lun;
		unsigned slots, mail_slots, drives;
		uint16_t transport_first, slot_first, mail_slot_first, drive_first;
		unsigned recall_wait; /* seconds a host command waits on a recall's stage; 0: SSC_STAGE_WAIT_MS */
	} library;

	struct vtl_drive_config drive[VTL_CFG_MAX_DRIVES]; /* drive[i] is [drive i+1]; library.drives are valid */

	struct {
		char *member[VTL_POOL_MAX_MEMBERS]; /* absolute paths, in the order of the file */
		unsigned members;
		uint64_t segment_size, member_quota, reserve; /* 0 = the pool's default */
		unsigned readahead_depth;
		uint64_t readahead_chunk, readahead_memory;
		bool readahead_direct; /* cold chunks read with O_DIRECT (default yes) */
		bool write_direct;     /* records of 60 KiB or more written with O_DIRECT (default no) */
		int lz4_acceleration;
		unsigned io_threads;
	} pool;

	struct {
		char *path; /* absolute */
	} catalog;

	/* Read by vtld; vtlctl only checks them. */
	struct {
		char listen[256];       /* default 127.0.0.1: serving the network is asked for (docs/iscsi.md) */
		unsigned port;
		unsigned nop_interval; /* seconds of silence before a keepalive NOP-In; as long for its answer; 0: none */
		char target_iqn[224];
		char target_alias[256]; /* "" = the library name */
		char advertise[256]; /* SendTargets' TargetAddress: "none", "local" or host[:port] (docs/iscsi.md) */
		/* CHAP (docs/iscsi.md): chap_* the initiators' credentials, mutual_* the target's own. "" = unset. */
		char chap_user[256], chap_secret[VTL_CFG_CHAP_SECRET_MAX + 1];
		char mutual_user[256], mutual_secret[VTL_CFG_CHAP_SECRET_MAX + 1];
		bool discovery_chap;    /* discovery sessions need CHAP too */
		char *initiator[VTL_CFG_MAX_INITIATORS]; /* allowed initiator names; none = every initiator */
		unsigned initiators;
		/* What hosts may make vtld hold (docs/iscsi.md, "Limits and security"); 0 = the target's default. */
		unsigned login_timeout, max_logins, max_logins_per_address, max_sessions, max_sessions_per_address;
		unsigned cmd_window;
		uint64_t output_max, nop_data_max, session_buffer_max, buffer_max;
		struct vtl_initiator_config *host[VTL_CFG_MAX_INITIATORS]; /* [initiator NAME] sections, in file order */
		unsigned hosts;
		bool allow_anonymous;   /* serve a non-loopback address without CHAP or an allow list */
		unsigned auth_fail_delay; /* seconds before a failed authentication is answered */
	} iscsi;
	struct {
		char *control_socket; /* absolute */
		struct vtl_cfg_group control_group;
		char log_level[8];    /* error, warn, info, debug */
		bool syslog;          /* log lines also go to syslog (facility daemon) */
		bool tcmu;            /* also serve the LIO user backstores of this library (docs/lio.md) */
		struct vtl_cfg_http http; /* /metrics and /api/... (http, http_token, http_*) */
	} daemon;

	/* The physical libraries vtl-migrator copies cartridges to (docs/migrator.md), in the order of the file. */
	struct vtl_physical_config physical[VTL_CFG_MAX_PHYS_LIBS];
	unsigned physicals;

	/* vtl-migrator's streaming engine and daemon. */
	struct {
		unsigned buffers, readers, watermark; /* ring: M buffers, reader threads, buffers before writing (0: M/2) */
		uint64_t buffer_size;         /* B: the block size on physical tape */
		unsigned rate;                /* MB/s at most; 0: no limit */
		char window[16];              /* "HH:MM-HH:MM": when window_rate applies instead ("" none) */
		unsigned window_rate;         /* MB/s during the window */
		unsigned pool_rate;           /* MB/s the pool gives hosts and copies together; 0: hosts do not come first;
					       * VTL_CFG_POOL_RATE_AUTO: the migrator probes it (migrator/ingest.h) */
		unsigned copy_floor;          /* MB/s each copy keeps at least while hosts move data, besides its drive's
					       * lowest matched speed; 0: the drive's own */
		bool verify;                  /* read every copy back before recording it */
		unsigned drives;              /* physical drives that run jobs at once; 0 (all): every drive */
		unsigned recall_drives;       /* of those, kept for recalls (copies never use them); below drives */
		char *control_socket;         /* absolute */
		struct vtl_cfg_group control_group;
		char log_level[8];
		struct vtl_cfg_http http;     /* /metrics and /api/... */
	} migrator;

	struct vtl_policy_config policy;
};

/*
 * Reads and checks the configuration file at path. On success *out is a
 * configuration to free with vtl_config_free. On failure returns
 * VTL_E_CONFIG (a wrong file; err says "FILE:LINE: what is wrong", or that a
 * file holding CHAP secrets may be read by others or written by its group),
 * VTL_E_IO (cannot read it; err says why) or VTL_E_NOMEM.
 */
int vtl_config_load(const char *path, struct vtl_config **out, char *err, size_t errlen);

/* The installed configuration file, $(sysconfdir)/vtl/vtl.conf as the Makefile compiled it in (docs/install.md). */
const char *vtl_config_installed_path(void);

/* The file used when no -c FILE is given: $VTL_CONFIG when set and not empty, else the installed one. */
const char *vtl_config_default_path(void);

/* The same from text in memory: name is the file name used in messages and for relative paths. */
int vtl_config_parse(const char *name, const char *text, size_t len, struct vtl_config **out, char *err,
		     size_t errlen);

/* Parses a rate window "HH:MM-HH:MM" into minutes of the day; false if it is not one. */
bool vtl_config_window(const char *w, unsigned *from, unsigned *to);

/* True when the configuration holds a CHAP secret ([iscsi], [initiator NAME] or [physical]). */
bool vtl_config_has_secrets(const struct vtl_config *cfg);

/* True when every address host resolves to is a loopback one (127.0.0.0/8, ::1); false if it does not resolve. */
bool vtl_config_loopback(const char *host);

/* True when cfg's target authenticates or restricts initiators: CHAP ([iscsi] or [initiator]) or an allow list. */
bool vtl_config_iscsi_guarded(const struct vtl_config *cfg);

/* True when the configuration names a physical library ([physical] or [physical NAME]): vtl-migrator runs. */
bool vtl_config_has_physical(const struct vtl_config *cfg);

/* The physical library called name, or NULL. */
const struct vtl_physical_config *vtl_config_physical_named(const struct vtl_config *cfg, const char *name);

/* Whether library p keeps the tapes of copy pool pool (its pools line; none: every pool). */
bool vtl_config_library_serves(const struct vtl_physical_config *p, const char *pool);

/* The index in cfg->physical of the library that keeps the tapes of copy pool pool, or -1. */
int vtl_config_pool_library(const struct vtl_config *cfg, const char *pool);

/* Frees a configuration (NULL is fine). */
void vtl_config_free(struct vtl_config *cfg);

#define VTL_CFG_VALUE_TEXT 64 /* a changed value as a message shows it; longer ones are cut with "..." */

/* One key whose value differs between two configurations (vtl_config_diff). */
struct vtl_config_change {
	const char *section;          /* "library", "drive", "iscsi", "initiator", ... as in the file */
	char section_arg[VTL_CFG_NAME_MAX + 1]; /* the N of [drive N], the NAME of [initiator NAME]; "" otherwise */
	const char *key;              /* "slots"; "(section)" when a [drive N] or [initiator NAME] section came or went */
	char from[VTL_CFG_VALUE_TEXT], to[VTL_CFG_VALUE_TEXT]; /* the values as text; a secret's are "(secret)" */
};

/* Called once per key that differs, in the order of the key table. */
typedef void (*vtl_config_change_fn)(void *arg, const struct vtl_config_change *ch);

/*
 * Compares every key of the file, after defaults, between a and b (two
 * readings of one file, so relative paths resolve alike), calling fn for
 * each that differs: repeatable keys (member, initiator, drive, drive_sg,
 * copy_pools) as one list, [drive N] and [initiator NAME] sections by N and
 * NAME. Returns how many keys differ.
 */
unsigned vtl_config_diff(const struct vtl_config *a, const struct vtl_config *b, vtl_config_change_fn fn, void *arg);

/*
 * Sorts what differs between the running configuration cur and next (the
 * file read again) for a daemon's reload. reloads and ignores are
 * NULL-terminated lists of "SECTION KEY" or "SECTION *" (SECTION without
 * brackets or argument: "initiator *" is every [initiator NAME]): the keys
 * the daemon applies while running and those it does not read. When every
 * change is one of them, returns how many are to apply (0 or more):
 * applied (acap bytes) then lists them ("[daemon] log_level changed from
 * info to debug"), or says that nothing the daemon reads changed.
 * VTL_E_CONFIG otherwise: refused (rcap bytes) names every other change and
 * says it needs a restart.
 */
int vtl_config_reload_plan(const struct vtl_config *cur, const struct vtl_config *next, const char *const *reloads,
			   const char *const *ignores, char *applied, size_t acap, char *refused, size_t rcap);

/* Called once per key of the file (vtl_config_keys): section as in the file ("drive" for [drive N]). */
typedef void (*vtl_config_key_fn)(void *arg, const char *section, const char *key);

/*
 * Calls fn for every key the parser knows, in the order of its key table,
 * then "(section)" for each section that a reload sees come and go whole
 * ([initiator NAME], [physical NAME]): every name a vtl_config_change can carry.
 */
void vtl_config_keys(vtl_config_key_fn fn, void *arg);

/*
 * Whether a rule of rules (NULL-terminated "SECTION KEY" or "SECTION *", as
 * vtl_config_reload_plan takes them) names key of section.
 */
bool vtl_config_rule_matches(const char *const *rules, const char *section, const char *key);

/* Fills *pc with the pool settings of cfg (its strings point into cfg). */
void vtl_config_pool(const struct vtl_config *cfg, struct vtl_pool_config *pc);

/* Fills *lib with the library of cfg (id 0), as catalog_library_create takes it. */
void vtl_config_library(const struct vtl_config *cfg, struct cat_library *lib);

/*
 * Parses a size: digits with an optional decimal fraction (up to 9 digits;
 * the result must be whole bytes: 2.5T, 1.5K), then optionally a unit. K, M, G, T (any case) are
 * powers of 1024 when binary, else of 1000; KB, MB, GB, TB are always powers
 * of 1000 and KiB, MiB, GiB, TiB always of 1024. Blanks between the number
 * and the unit are allowed. Returns 0 or VTL_E_INVAL (garbage, overflow).
 */
int vtl_parse_size(const char *s, bool binary, uint64_t *out);

/*
 * Parses a duration: a whole number with an optional unit s, m, h or d
 * (none: seconds), into seconds up to max. Returns 0 or VTL_E_INVAL.
 */
int vtl_parse_duration(const char *s, uint64_t max, uint64_t *out);

/* Parses a whole unsigned decimal number (no sign, no blanks) up to max. Returns 0 or VTL_E_INVAL. */
int vtl_parse_uint(const char *s, uint64_t max, uint64_t *out);

#endif
