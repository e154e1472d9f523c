/* SPDX-License-Identifier: Apache-2.0 */
/*
 * vtlctl, the operator's tool: what its commands share.
 *
 * Exit codes: 0 success, 1 the operation failed (VTLCTL_FAIL), 2 a usage
 * error (VTLCTL_USAGE). Every error is one line on stderr,
 * "vtlctl: <command>: <what is wrong and what to do>".
 */
#ifndef VTL_CTL_CTL_H
#define VTL_CTL_CTL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "backend/pool.h"
#include "catalog/catalog.h"
#include "common/ctlproto.h"
#include "common/jsonw.h"
#include "config/config.h"
#include "vtl/library/docs.h"
#include "vtl/library/library.h"

#define VTLCTL_OK 0
#define VTLCTL_FAIL 1
#define VTLCTL_USAGE 2

#define VTLCTL_VERSION "0.1"

/* ------------------------------------------------------------ the context */

struct ctl {
	const struct ctl_cmd *cmd; /* the running command */
	const char *config_path;   /* -c, else $VTL_CONFIG, else ./vtl.conf */
	bool config_from_default;  /* neither -c nor VTL_CONFIG named it */
	bool json;
	struct vtl_config *cfg;
	struct vtl_catalog *cat;
	struct cat_library lib;    /* valid once ctl_open_library returned 0 */
	struct vtl_pool *pool;
	struct vtl_library *model; /* the library model without drives (ctl_open_model), for offline moves */
	char actor[32];            /* "vtlctl:<user>", for the event log */
	char **argbuf;             /* the positionals of ctl_parse, freed by ctl_close */
};

/* Prints "vtlctl: <command>: <message>" to stderr and returns code. */
int ctl_err(struct ctl *ctl, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* A usage error: the message, then "; see 'vtlctl help <command>'"; returns VTLCTL_USAGE. */
int ctl_usage(struct ctl *ctl, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A warning line on stderr: "vtlctl: <command>: warning: ...". */
void ctl_warn(struct ctl *ctl, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Loads the configuration file (once). 0 or VTLCTL_FAIL (reported). */
int ctl_load_config(struct ctl *ctl);
/* Loads the configuration, opens the existing catalog and finds the configured library. 0 or VTLCTL_FAIL. */
int ctl_open_library(struct ctl *ctl);
/*
 * Opens the library model offline (no drives; the rules of every move, as vtld
 * applies them) over the catalog of ctl_open_library. 0 or VTLCTL_FAIL (reported).
 */
int ctl_open_model(struct ctl *ctl);
/* Loads the configuration and opens the pool. 0 or VTLCTL_FAIL. */
int ctl_open_pool(struct ctl *ctl);
/*
 * Refuses (VTLCTL_FAIL) when vtld answers on the control socket: this
 * vtlctl changes the catalog and pool only while the daemon is stopped.
 */
int ctl_require_offline(struct ctl *ctl);
/* Whether vtld answers on the control socket (the configuration is loaded first). */
bool ctl_daemon_up(struct ctl *ctl);
/* Whether vtl-migrator answers on its control socket ([migrator] control_socket). */
bool ctl_migrator_up(struct ctl *ctl);

/* Prints host ingest first's live figures as vtl-migrator gives them (the pool, hosts, copies, budget, floors and,
 * with pool_rate = auto, the probe's reference and drops), one indented line; nothing when it does not answer. */
void ctl_ingest_live(struct ctl *ctl);
/*
 * Sends *req (its line built by common/ctlproto.h's formatter) to the daemon
 * that answers its verb and reads the answer: 0 when it says ok (its message,
 * if msg is not NULL, copied to msg, cap bytes); VTLCTL_FAIL with the
 * daemon's error reported otherwise.
 */
int ctl_request(struct ctl *ctl, const struct ctlproto_request *req, char *msg, size_t cap);
/* Sends *req to its daemon and copies its whole one-line JSON answer to answer (cap bytes); 0 or VTLCTL_FAIL. */
int ctl_request_raw(struct ctl *ctl, const struct ctlproto_request *req, char *answer, size_t cap);
/*
 * Sends *req to its daemon and checks that it answered ok (else reports its
 * error: VTLCTL_FAIL). With --json it prints the answer and sets *printed:
 * only a table is left for the caller to print.
 */
int ctl_query(struct ctl *ctl, const struct ctlproto_request *req, char *answer, size_t cap, bool *printed);
/* Closes whatever is open. */
void ctl_close(struct ctl *ctl);

/* A catalog call failed: reports "<doing>: <reason>" and returns VTLCTL_FAIL. */
int ctl_cat_err(struct ctl *ctl, int rc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* ----------------------------------------------------------- the elements */

/* "robot", "slot", "mail slot", "drive": for sentences. */
const char *ctl_elem_type_words(enum cat_elem_type t);
/* The library's element ranges, for messages: "storage slots 1025..1064, mail slots 769..772, drives 257..260". */
void ctl_elem_ranges(const struct cat_library *lib, char *buf, size_t len);
/* Where a cartridge is, for tables: "slot 1025", "drive 257", "ie 769", "none", "outside". */
void ctl_location(const struct cat_library *lib, const struct cat_cartridge *c, char *buf, size_t len);
/* Parses an element address (decimal). 0 or VTL_E_INVAL. */
int ctl_parse_address(const char *s, uint16_t *out);

/* The empty elements of one type, in address order. */
struct ctl_empty {
	uint16_t *addr; /* the caller frees it */
	size_t n, cap;
	int err;
};

/* Fills *w with the addresses of the library's empty elements of type; 0 or a vtl_err. */
int ctl_empty_elements(struct ctl *ctl, enum cat_elem_type type, struct ctl_empty *w);

/*
 * Puts a cartridge that is in no element into element (of the library), or
 * with element CAT_NO_ELEMENT takes it out of its element and of the
 * library; sets its state. 0 or a vtl_err (catalog_last_error says why).
 */
int ctl_place(struct ctl *ctl, const char *barcode, uint16_t element, const char *state);

/* ------------------------------------------------------------ the output */

/* A table: a header line and aligned columns, like mtx and tgtadm print. */
struct table {
	unsigned ncols;
	const char *const *head;
	const char *align; /* one 'L' or 'R' per column */
	char **cells;      /* nrows * ncols, owned */
	size_t nrows, cap;
};

void table_init(struct table *t, unsigned ncols, const char *const *head, const char *align);
/* Adds a row of ncols strings (NULL prints as "-"); copies them. Returns 0 or VTL_E_NOMEM. */
int table_add(struct table *t, ...);
void table_print(const struct table *t, FILE *f);
void table_free(struct table *t);

/* Prints "key   value" lines with the keys aligned. */
struct kv {
	const char *key;
	char value[1024];
};
void kv_print(const struct kv *kv, size_t n, FILE *f);

/* "12.0 TB", "980 MB", "0 B": decimal units, as tape capacities are quoted. */
void fmt_bytes(uint64_t n, char *buf, size_t len);
/* "2026-11-29 23:55:43" in local time, "never" for 0. */
void fmt_time(int64_t t, char *buf, size_t len);

/* Fields of a daemon's one-line JSON answer (the first "key": at or after s): a number, a real, a string. */
unsigned long long ans_u64(const char *s, const char *key);
double ans_real(const char *s, const char *key);
void ans_text(const char *s, const char *key, char *out, size_t cap);

/* ---------------------------------------------------------- the commands */

/* An option of a command: --long [VALUE], or -s. */
struct ctl_opt {
	const char *lng;  /* without the dashes */
	char shrt;        /* 0 if none */
	bool has_arg;
	const char *val;  /* set by ctl_parse */
	bool set;
};

/*
 * Parses argv (after the command words) into opts and positionals (*pos, freed by ctl_close); the
 * global options (-c/--config, --json, -h/--help) are accepted everywhere, "--" ends the options.
 * Returns 0, VTLCTL_USAGE or VTLCTL_FAIL (reported), or -1 after printing the command's help.
 */
int ctl_parse(struct ctl *ctl, int argc, char **argv, struct ctl_opt *opts, size_t nopts, char ***pos, int *npos);
/* ctl_parse for a command that takes neither options nor arguments; then loads the configuration. */
int ctl_parse_bare(struct ctl *ctl, int argc, char **argv);
/* ctl_parse for a command that takes one cartridge barcode and no options (*barcode); then loads the configuration. */
int ctl_parse_barcode(struct ctl *ctl, int argc, char **argv, const char **barcode);
/* Like ctl_parse_barcode, with the options opts (nopts of them; ctl_parse fills them) too. */
int ctl_parse_barcode_opts(struct ctl *ctl, int argc, char **argv, struct ctl_opt *opts, size_t nopts,
			   const char **barcode);

struct ctl_cmd {
	const char *name;    /* "cartridge add" */
	const char *synopsis;
	const char *summary;
	const char *help;    /* paragraphs printed by 'vtlctl help <name>' */
	int (*run)(struct ctl *ctl, int argc, char **argv);
};

/* Prints the help of a command to f. */
void ctl_print_help(const struct ctl_cmd *cmd, FILE *f);

int cmd_init(struct ctl *ctl, int argc, char **argv);
int cmd_library_show(struct ctl *ctl, int argc, char **argv);
int cmd_drive_list(struct ctl *ctl, int argc, char **argv);
int cmd_slot_list(struct ctl *ctl, int argc, char **argv);
int cmd_events(struct ctl *ctl, int argc, char **argv);
int cmd_cartridge_add(struct ctl *ctl, int argc, char **argv);
int cmd_cartridge_list(struct ctl *ctl, int argc, char **argv);
int cmd_cartridge_show(struct ctl *ctl, int argc, char **argv);
int cmd_cartridge_remove(struct ctl *ctl, int argc, char **argv);
int cmd_move(struct ctl *ctl, int argc, char **argv);
int cmd_import(struct ctl *ctl, int argc, char **argv);
int cmd_export(struct ctl *ctl, int argc, char **argv);
int cmd_load(struct ctl *ctl, int argc, char **argv);
int cmd_status(struct ctl *ctl, int argc, char **argv);
int cmd_unload(struct ctl *ctl, int argc, char **argv);
int cmd_catalog_rebuild(struct ctl *ctl, int argc, char **argv);
int cmd_catalog_check(struct ctl *ctl, int argc, char **argv);
int cmd_physical_list(struct ctl *ctl, int argc, char **argv);
int cmd_physical_add(struct ctl *ctl, int argc, char **argv);
int cmd_physical_inventory(struct ctl *ctl, int argc, char **argv);
int cmd_physical_drives(struct ctl *ctl, int argc, char **argv);
int cmd_physical_pool(struct ctl *ctl, int argc, char **argv);
int cmd_migrate(struct ctl *ctl, int argc, char **argv);
int cmd_verify(struct ctl *ctl, int argc, char **argv);
int cmd_recall(struct ctl *ctl, int argc, char **argv);
int cmd_jobs(struct ctl *ctl, int argc, char **argv);
int cmd_policy(struct ctl *ctl, int argc, char **argv);
int cmd_reload(struct ctl *ctl, int argc, char **argv);
int cmd_release(struct ctl *ctl, int argc, char **argv);
int cmd_cancel(struct ctl *ctl, int argc, char **argv);

/* Shared by cartridge add and import --new: checks --media and --capacity against a label. */
struct new_cart {
	char barcode[CAT_BARCODE_MAX + 1];
	enum cat_media media;
	bool type_m;
	uint64_t capacity;
};
int ctl_new_cart(struct ctl *ctl, const char *barcode, const char *media, const char *capacity, struct new_cart *out);
/* Creates the cartridge in the pool, then its catalog row in element; undoes the pool part on failure.
 * 0, or VTLCTL_FAIL (reported). */
int ctl_create_cart(struct ctl *ctl, const struct new_cart *nc, uint16_t element);
/* Refuses (VTLCTL_FAIL, reported) a barcode the catalog or the pool already has. */
int ctl_check_new(struct ctl *ctl, const char *barcode);
/*
 * Checks that addr is an empty element of the library of type want (CAT_ELEM_ALL: a storage or a
 * mail slot) that a cartridge may be put into. 0 or VTLCTL_FAIL (reported).
 */
int ctl_check_target(struct ctl *ctl, uint16_t addr, enum cat_elem_type want);
/* The first empty element of a type: 0, VTL_E_DST_FULL if there is none, or a catalog error. */
int ctl_first_empty(struct ctl *ctl, enum cat_elem_type type, uint16_t *addr);

#endif
