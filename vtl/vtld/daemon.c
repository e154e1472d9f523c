/* SPDX-License-Identifier: Apache-2.0 */
#include "vtl/vtld/daemon.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/pool.h"
#include "catalog/catalog.h"
#include "common/log.h"
#include "common/vtl_error.h"
#include "config/reload.h"
#include "vtl/iscsi/target.h"
#include "vtl/library/library.h"
#include "vtl/changer/smc.h"
#include "vtl/drive/ssc.h"
#include "vtl/tcmu/front.h"
#include "vtl/library/throttle.h"

struct vtld {
	struct vtl_pool *pool;
	struct vtl_catalog *cat;
	struct vtl_library *lib;
	struct smc_changer *changer;
	struct vtl_lu lus[VTLD_MAX_LUS];
	struct vtld_meters meters[VTLD_MAX_LUS];
	struct vtld_ingest ingest;
	unsigned n_lus;
	struct iscsi_target *iscsi;
	struct throttle *throttle; /* slows host writes when the pool is nearly full */
	struct tcmu_front *tcmu;   /* the LIO front end ([daemon] tcmu) */
	struct iscsi_credentials *hosts; /* [initiator NAME] credentials, as the target reads them */
	pthread_mutex_t control_mu;      /* one control answer at a time (vtld_control_mu) */
	const struct vtl_config *cfg;    /* as started: every part but the target's credentials points into it */
	struct vtl_config *applied;      /* the last reload's, whose credentials the target reads; NULL: cfg's */
	atomic_flag reloading;           /* one reload at a time (SIGHUP and vtlctl reload) */
};

static void drive_gate(void *arg, const struct scsi_cmd *c)
{
	throttle_gate(arg, c);
}

struct lun_of {
	uint16_t address;
	int lun;
};

static int find_lun(const struct cat_drive *d, void *arg)
{
	struct lun_of *f = arg;
	if (d->address != f->address)
		return 0;
	f->lun = d->lun;
	return 1;
}

/* The [initiator NAME] credentials of cfg as the target reads them (pointing into cfg), malloc'ed; NULL for none. */
static int credentials_of(const struct vtl_config *cfg, struct iscsi_credentials **out)
{
	*out = NULL;
	if (!cfg->iscsi.hosts)
		return VTL_OK;
	struct iscsi_credentials *hosts = calloc(cfg->iscsi.hosts, sizeof *hosts);
	if (!hosts)
		return VTL_E_NOMEM;
	for (unsigned i = 0; i < cfg->iscsi.hosts; i++) {
		const struct vtl_initiator_config *h = cfg->iscsi.host[i];
		hosts[i] = (struct iscsi_credentials){.initiator_name = h->name, .chap_user = h->chap_user,
						      .chap_secret = h->chap_secret, .mutual_user = h->mutual_user,
						      .mutual_secret = h->mutual_secret, .discovery_chap = h->discovery_chap};
	}
	*out = hosts;
	return VTL_OK;
}

int vtld_start(const struct vtl_config *cfg, struct vtld **out, char *err, size_t errlen)
{
	struct vtld *v = calloc(1, sizeof *v);
	if (v)
		atomic_flag_clear(&v->reloading);
	if (!v)
		return VTL_E_NOMEM;
	pthread_mutex_init(&v->control_mu, NULL);
	char why[512] = "";
	int rc = catalog_open(cfg->catalog.path, false, &v->cat, why, sizeof why);
	if (rc != VTL_OK) {
		snprintf(err, errlen, "cannot open the catalog %s: %s (create the library with vtlctl init)",
			 cfg->catalog.path, why);
		goto fail;
	}
	struct vtl_pool_config pc;
	vtl_config_pool(cfg, &pc);
	rc = vtl_pool_open(&pc, &v->pool, why, sizeof why);
	if (rc != VTL_OK) {
		snprintf(err, errlen, "cannot open the disk pool: %s", why[0] ? why : vtl_strerror(rc));
		goto fail;
	}
	struct library_options opt = {.migrator = cfg->migrator.control_socket,
				      .stage_wait_ms = cfg->library.recall_wait * 1000u};
	/* The config outlives vtld (main owns it). */
	v->ingest.migrator = vtl_config_has_physical(cfg) ? cfg->migrator.control_socket : NULL;
	rc = library_open(v->cat, v->pool, cfg->library.name, &opt, &v->lib, why, sizeof why);
	if (rc != VTL_OK) {
		snprintf(err, errlen, "%s", why);
		goto fail;
	}
	if ((rc = smc_create(v->lib, &v->changer)) != VTL_OK) {
		snprintf(err, errlen, "cannot create the changer: %s", vtl_strerror(rc));
		goto fail;
	}
	v->lus[0] = (struct vtl_lu){.lun = (uint16_t)cfg->library.lun, .what = "changer", .dev = v->changer,
				    .ops = &smc_unit_ops};
	v->n_lus = 1;
	for (unsigned i = 0; i < library_drive_count(v->lib) && v->n_lus < VTLD_MAX_LUS; i++) {
		struct lun_of f = {.lun = -1};
		struct ssc_drive *d = library_drive(v->lib, i, &f.address);
		if ((rc = catalog_drive_list(v->cat, library_info(v->lib)->id, find_lun, &f)) != VTL_OK) {
			snprintf(err, errlen, "cannot list the drives in the catalog: %s", catalog_last_error(v->cat));
			goto fail;
		}
		if (f.lun < 0) {
			snprintf(err, errlen, "drive at element %u has no LUN in the catalog", f.address);
			rc = VTL_E_CONFIG;
			goto fail;
		}
		v->lus[v->n_lus++] = (struct vtl_lu){.lun = (uint16_t)f.lun, .what = "drive", .dev = d,
						     .ops = &ssc_unit_ops};
	}
	/* REPORT LUNS answers the whole target from every unit. */
	uint16_t luns[VTLD_MAX_LUS];
	for (unsigned i = 0; i < v->n_lus; i++)
		luns[i] = v->lus[i].lun;
	smc_set_luns(v->changer, luns, v->n_lus);
	for (unsigned i = 1; i < v->n_lus; i++)
		ssc_set_luns(v->lus[i].dev, luns, v->n_lus);
	if ((rc = throttle_create(v->pool, cfg->policy.throttle, cfg->policy.throttle_rate, &v->throttle)) != VTL_OK) {
		snprintf(err, errlen, "cannot create the write throttle: %s", vtl_strerror(rc));
		goto fail;
	}
	for (unsigned i = 0; i < v->n_lus; i++) {
		if ((rc = vtl_lu_start(&v->lus[i])) != VTL_OK) {
			snprintf(err, errlen, "cannot start a worker thread: %s", vtl_strerror(rc));
			goto fail;
		}
		if (v->lus[i].ops == &ssc_unit_ops)
			lu_worker_set_gate(v->lus[i].worker, drive_gate, v->throttle);
	}
	/* The iSCSI target: every unit, commands through its worker. */
	v->cfg = cfg;
	if ((rc = credentials_of(cfg, &v->hosts)) != VTL_OK) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	struct iscsi_target_opts to = {
		.listen = cfg->iscsi.listen, .port = cfg->iscsi.port, .lus = v->lus, .n_lus = v->n_lus,
		.nop_interval = cfg->iscsi.nop_interval, .auth_fail_delay = cfg->iscsi.auth_fail_delay,
		.limits = {.login_timeout = cfg->iscsi.login_timeout, .max_logins = cfg->iscsi.max_logins,
			   .max_logins_per_address = cfg->iscsi.max_logins_per_address,
			   .max_sessions = cfg->iscsi.max_sessions,
			   .max_sessions_per_address = cfg->iscsi.max_sessions_per_address,
			   .output_max = cfg->iscsi.output_max, .cmd_window = cfg->iscsi.cmd_window,
			   .ping_data_max = (uint32_t)cfg->iscsi.nop_data_max,
			   .session_buffer_max = cfg->iscsi.session_buffer_max, .buffer_max = cfg->iscsi.buffer_max},
		.login = {.target_name = cfg->iscsi.target_iqn,
			  .target_alias = cfg->iscsi.target_alias[0] ? cfg->iscsi.target_alias : cfg->library.name,
			  /* CHAP and the initiator list; cfg outlives the target (vtld_stop comes first). */
			  .chap_user = cfg->iscsi.chap_user, .chap_secret = cfg->iscsi.chap_secret,
			  .mutual_user = cfg->iscsi.mutual_user, .mutual_secret = cfg->iscsi.mutual_secret,
			  .discovery_chap = cfg->iscsi.discovery_chap,
			  .initiators = (const char *const *)cfg->iscsi.initiator, .n_initiators = cfg->iscsi.initiators,
			  .hosts = v->hosts, .n_hosts = cfg->iscsi.hosts, .advertise = ISCSI_ADVERTISE_LOCAL},
	};
	/* [iscsi] advertise: "local" (the default), "none", or a host[:port] to name in SendTargets. */
	if (!strcmp(cfg->iscsi.advertise, "none")) {
		to.login.advertise = ISCSI_ADVERTISE_NONE;
	} else if (cfg->iscsi.advertise[0] && strcmp(cfg->iscsi.advertise, "local") != 0) {
		to.login.advertise = ISCSI_ADVERTISE_FIXED;
		to.login.advertise_address = cfg->iscsi.advertise;
	}
	if ((rc = iscsi_target_start(&to, &v->iscsi, why, sizeof why)) != VTL_OK) {
		snprintf(err, errlen, "%s", why);
		goto fail;
	}
	log_info("iscsi: target %s on %s:%u", cfg->iscsi.target_iqn, cfg->iscsi.listen, iscsi_target_port(v->iscsi));
	bool chap = cfg->iscsi.chap_user[0] || cfg->iscsi.hosts, mutual = cfg->iscsi.mutual_user[0];
	for (unsigned i = 0; i < cfg->iscsi.hosts; i++)
		mutual = mutual || cfg->iscsi.host[i]->mutual_user[0];
	log_info("iscsi: authentication: %s%s%s; initiators: %s (%u with their own CHAP credentials)",
		 chap ? "CHAP" : "none", mutual ? " (mutual offered)" : "",
		 chap ? (cfg->iscsi.discovery_chap ? ", discovery too" : ", not for discovery") : "",
		 cfg->iscsi.initiators ? "allow list" : "any", cfg->iscsi.hosts);
	bool local = vtl_config_loopback(cfg->iscsi.listen);
	if (!vtl_config_iscsi_guarded(cfg) && !local)
		log_warn("iscsi: allow_anonymous = yes: any host that reaches %s:%u may use every cartridge without "
			 "authentication", cfg->iscsi.listen, iscsi_target_port(v->iscsi));
	/* Sections are in the allow list too: the lines beyond them are the names that log in without CHAP. */
	if (!local && !cfg->iscsi.chap_user[0] && cfg->iscsi.initiators > cfg->iscsi.hosts)
		log_warn("iscsi: %u allowed initiator%s without CHAP: a host is whoever it says it is; give each its "
			 "own [initiator NAME] credentials", cfg->iscsi.initiators - cfg->iscsi.hosts,
			 cfg->iscsi.initiators - cfg->iscsi.hosts == 1 ? "" : "s");
	if (cfg->daemon.tcmu) {
		if ((rc = tcmu_front_start(cfg->library.name, v->lus, v->n_lus, TCMU_UIO_ROOT, TCMU_DEV_ROOT, &v->tcmu))) {
			snprintf(err, errlen, "starting the TCMU front end: %s", vtl_strerror(rc));
			goto fail;
		}
		log_info("tcmu: looking for the user backstores of library %s (config vtl/%s/<lun>)", cfg->library.name,
			 cfg->library.name);
	}
	*out = v;
	return VTL_OK;
fail:
	/* rc says why the start failed; a cartridge's failed close is logged by its drive. */
	vtl_ignore(vtld_stop(v));
	return rc;
}

int vtld_stop(struct vtld *v)
{
	if (!v)
		return VTL_OK;
	iscsi_target_stop(v->iscsi); /* no new commands; those in flight finish first */
	tcmu_front_stop(v->tcmu);
	for (unsigned i = 0; i < v->n_lus; i++)
		lu_worker_stop(v->lus[i].worker);
	smc_destroy(v->changer);
	int rc = library_close(v->lib); /* syncs and closes loaded cartridges; they stay in their drives */
	if (v->cat)
		catalog_close(v->cat);
	throttle_destroy(v->throttle);
	if (v->pool)
		vtl_pool_close(v->pool);
	free(v->hosts);
	pthread_mutex_destroy(&v->control_mu);
	vtl_config_free(v->applied);
	free(v);
	return rc;
}

/*
 * vtl_reload's apply: makes next, which the plan accepted, vtld arg's configuration for the keys
 * vtl_reload_keys_vtld (config/reload.c) reloads (credentials, throttle, log level); keeps next (as
 * v->applied) on success.
 */
static int apply(void *arg, struct vtl_config *next)
{
	struct vtld *v = arg;
	struct iscsi_credentials *hosts;
	if (credentials_of(next, &hosts) != VTL_OK)
		return VTL_E_NOMEM; /* before anything changed: nothing applied */
	if (throttle_set(v->throttle, next->policy.throttle, next->policy.throttle_rate) != VTL_OK) {
		free(hosts); /* the parser keeps throttle_rate >= 1: cannot happen */
		return VTL_E_INVAL;
	}
	int level = log_level_parse(next->daemon.log_level[0] ? next->daemon.log_level : "info");
	log_set_level(level < 0 ? LOG_LEVEL_INFO : (enum log_level)level);
	const struct vtl_config *c = next;
	struct iscsi_auth a = {.chap_user = c->iscsi.chap_user, .chap_secret = c->iscsi.chap_secret,
			       .mutual_user = c->iscsi.mutual_user, .mutual_secret = c->iscsi.mutual_secret,
			       .discovery_chap = c->iscsi.discovery_chap, .hosts = hosts, .n_hosts = c->iscsi.hosts,
			       .initiators = (const char *const *)c->iscsi.initiator, .n_initiators = c->iscsi.initiators};
	iscsi_target_set_auth(v->iscsi, &a); /* from here on nothing reads the old credentials */
	free(v->hosts);
	vtl_config_free(v->applied);
	v->hosts = hosts;
	v->applied = next;
	return VTL_OK;
}

int vtld_reload(struct vtld *v, char *msg, size_t cap)
{
	char name[CAT_NAME_MAX + 16];
	snprintf(name, sizeof name, "library %s", v->cfg->library.name);
	struct vtl_reload r = {.keys = &vtl_reload_keys_vtld, .apply = apply, .arg = v, .name = name,
			       .busy = &v->reloading};
	return vtl_reload(v->applied ? v->applied : v->cfg, &r, msg, cap);
}

struct tcmu_front *vtld_tcmu(struct vtld *v)
{
	return v->tcmu;
}

struct vtl_catalog *vtld_catalog(struct vtld *v)
{
	return v->cat;
}

struct vtl_library *vtld_library(struct vtld *v)
{
	return v->lib;
}

struct throttle *vtld_throttle(struct vtld *v)
{
	return v->throttle;
}

struct vtl_lu *vtld_lus(struct vtld *v, unsigned *n)
{
	*n = v->n_lus;
	return v->lus;
}

struct vtld_meters *vtld_meters(struct vtld *v, unsigned i)
{
	return i < v->n_lus ? &v->meters[i] : NULL;
}

struct vtld_ingest *vtld_ingest(struct vtld *v)
{
	return &v->ingest;
}

pthread_mutex_t *vtld_control_mu(struct vtld *v)
{
	return &v->control_mu;
}

struct vtl_pool *vtld_pool(struct vtld *v)
{
	return v->pool;
}

struct iscsi_target *vtld_iscsi(struct vtld *v)
{
	return v->iscsi;
}
