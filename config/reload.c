/* SPDX-License-Identifier: Apache-2.0 */
#include "config/reload.h"

#include <stdbool.h>
#include <stdio.h>

#include "common/log.h"
#include "common/sdnotify.h"
#include "common/vtl_error.h"

#define PLAN_TEXT_MAX 1024 /* what a plan lists; longer lists are cut */

/*
 * The two daemons' keys side by side, so that a new key of the parser is
 * classified for both in one place (tests/unit/test_reload_keys.c fails
 * until it is). What a reload applies is what each daemon's apply function
 * takes: vtld's (vtl/vtld/daemon.c) the log level, the target's CHAP
 * credentials and allowed initiators (for the next logins), the write
 * throttle; vtl-migrator's (migrator/daemon.c) the log level, the rates and
 * the cache policy's marks, rules, idle time and interval. "SECTION *" is
 * used only for a section whose keys are all of one class.
 */
static const char *const vtld_reloads[] = {
	"daemon log_level", "iscsi chap_user", "iscsi chap_secret", "iscsi mutual_user", "iscsi mutual_secret",
	"iscsi discovery_chap", "iscsi initiator", "initiator *", "policy throttle", "policy throttle_rate", NULL,
};
static const char *const vtld_restarts[] = {
	"library *", "drive *", "pool *", "catalog *",
	"iscsi listen", "iscsi port", "iscsi nop_interval", "iscsi target_iqn", "iscsi advertise",
	"iscsi target_alias", "iscsi login_timeout", "iscsi max_logins", "iscsi max_logins_per_address",
	"iscsi max_sessions", "iscsi max_sessions_per_address", "iscsi cmd_window", "iscsi output_max",
	"iscsi nop_data_max", "iscsi session_buffer_max", "iscsi buffer_max", "iscsi allow_anonymous",
	"iscsi auth_fail_delay",
	"daemon control_socket", "daemon control_group", "daemon syslog", "daemon tcmu", "daemon http",
	"daemon http_token", "daemon http_connections", "daemon http_connections_per_address", "daemon http_timeout",
	"migrator control_socket", /* where vtld asks for recalls and its console finds the migrator */
	NULL,
};
static const char *const vtld_ignores[] = {
	"physical *", "migrator buffers", "migrator buffer_size", "migrator watermark", "migrator readers",
	"migrator rate", "migrator window", "migrator window_rate", "migrator verify", "migrator drives",
	"migrator recall_drives", "migrator control_group", "migrator log_level", "migrator pool_rate",
	"migrator copy_floor", "migrator http", "migrator http_token", "migrator http_connections",
	"migrator http_connections_per_address", "migrator http_timeout", "policy interval",
	"policy premigrate", "policy copy_pools", "policy idle", "policy high_water", "policy low_water", NULL,
};
const struct vtl_reload_keys vtl_reload_keys_vtld = {
	.daemon = "vtld", .reloads = vtld_reloads, .restarts = vtld_restarts, .ignores = vtld_ignores,
};

/* copy_pools stays: running copies read it. */
static const char *const migrator_reloads[] = {
	"migrator log_level", "migrator rate", "migrator window", "migrator window_rate", "migrator pool_rate",
	"migrator copy_floor", "policy interval",
	"policy premigrate", "policy idle", "policy high_water", "policy low_water", NULL,
};
static const char *const migrator_restarts[] = {
	"library name", /* the library whose cartridges it copies and recalls */
	"pool *", "catalog *", "physical *",
	"daemon syslog", /* its log goes where vtld's goes (migrator/main.c, log_setup) */
	"migrator buffers", "migrator buffer_size", "migrator watermark", "migrator readers", "migrator verify",
	"migrator drives", "migrator recall_drives", "migrator control_socket", "migrator control_group",
	"migrator http", "migrator http_token", "migrator http_connections", "migrator http_connections_per_address",
	"migrator http_timeout", "policy copy_pools", NULL,
};
static const char *const migrator_ignores[] = {
	"iscsi *", "initiator *", "drive *", "policy throttle", "policy throttle_rate",
	"daemon control_socket", "daemon control_group", "daemon log_level", "daemon tcmu", "daemon http",
	"daemon http_token", "daemon http_connections", "daemon http_connections_per_address", "daemon http_timeout",
	"library vendor", "library product", "library revision", "library serial", "library lun", "library slots",
	"library mail_slots", "library drives", "library transport_first", "library slot_first",
	"library mail_slot_first", "library drive_first", "library recall_wait", NULL,
};
const struct vtl_reload_keys vtl_reload_keys_migrator = {
	.daemon = "vtl-migrator", .reloads = migrator_reloads, .restarts = migrator_restarts, .ignores = migrator_ignores,
};

enum vtl_reload_class vtl_reload_class_of(const struct vtl_reload_keys *k, const char *section, const char *key)
{
	bool apply = vtl_config_rule_matches(k->reloads, section, key);
	bool restart = vtl_config_rule_matches(k->restarts, section, key);
	bool ignore = vtl_config_rule_matches(k->ignores, section, key);
	if (apply + restart + ignore > 1)
		return VTL_RELOAD_AMBIGUOUS;
	return apply ? VTL_RELOAD_APPLY : restart ? VTL_RELOAD_RESTART : ignore ? VTL_RELOAD_IGNORE
						: VTL_RELOAD_UNCLASSIFIED;
}

int vtl_reload(const struct vtl_config *cur, const struct vtl_reload *r, char *msg, size_t cap)
{
	if (atomic_flag_test_and_set(r->busy)) {
		snprintf(msg, cap, "reload: another reload is running; try again");
		return VTL_E_BUSY;
	}
	/* A manager that misses these still sees the daemon run; sdnotify logged why. */
	vtl_ignore(sdnotify_reloading());
	struct vtl_config *next = NULL;
	char err[VTL_CFG_ERR_LEN], applied[PLAN_TEXT_MAX], refused[PLAN_TEXT_MAX];
	int rc = vtl_config_load(cur->path, &next, err, sizeof err);
	if (rc != VTL_OK) {
		snprintf(msg, cap, "reload: %s; nothing applied, still serving the configuration read before", err);
	} else if ((rc = vtl_config_reload_plan(cur, next, r->keys->reloads, r->keys->ignores, applied, sizeof applied,
						refused, sizeof refused)) < 0) {
		snprintf(msg, cap, "reload: %s", refused);
	} else if (rc == 0) {
		snprintf(msg, cap, "reload: %s", applied); /* nothing to apply: nothing is touched */
	} else if ((rc = r->apply(r->arg, next)) != VTL_OK) {
		snprintf(msg, cap, "reload: %s; nothing applied", vtl_strerror(rc));
	} else {
		snprintf(msg, cap, "reload: applied %s", applied);
		next = NULL; /* the daemon's now */
	}
	vtl_config_free(next);
	if (rc == VTL_OK)
		log_info("%s", msg);
	else
		log_error("%s", msg);
	char status[SDNOTIFY_STATUS_LEN];
	snprintf(status, sizeof status, "%s: %s", r->name,
		 rc == VTL_OK ? "configuration reloaded" : "reload refused, serving the previous configuration");
	vtl_ignore(sdnotify_ready(status));
	atomic_flag_clear(r->busy);
	return rc;
}
