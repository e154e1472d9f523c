/* SPDX-License-Identifier: Apache-2.0 */
/*
 * vtl-migrator: copies virtual cartridges to the physical library of a
 * configuration file, one queued job at a time, until SIGTERM or SIGINT;
 * a job interrupted by the stop is queued again for the next start.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/ctlsock.h"
#include "common/log.h"
#include "common/sdnotify.h"
#include "common/service.h"
#include "common/vtl_error.h"
#include "common/http.h"
#include "migrator/daemon.h"
#include "migrator/web.h"
#include "config/config.h"

/* SIGHUP: migd_reload logs what it applied or why nothing. */
static void reload(void *arg)
{
	char msg[2048];
	vtl_ignore(migd_reload(arg, msg, sizeof msg));
}

static void usage(FILE *f)
{
	fprintf(f, "usage: vtl-migrator [-c FILE]\n"
		   "  -c, --config FILE   the configuration (default $VTL_CONFIG, else %s)\n"
		   "  -h, --help          this text\n", vtl_config_installed_path());
}

int main(int argc, char **argv)
{
	const char *path = vtl_config_default_path();
	for (int i = 1; i < argc; i++) {
		if ((!strcmp(argv[i], "-c") || !strcmp(argv[i], "--config")) && i + 1 < argc) {
			path = argv[++i];
		} else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage(stdout);
			return 0;
		} else {
			fprintf(stderr, "vtl-migrator: unknown argument '%s'\n", argv[i]);
			usage(stderr);
			return 2;
		}
	}
	struct vtl_config *cfg;
	char err[VTL_CFG_ERR_LEN];
	if (vtl_config_load(path, &cfg, err, sizeof err) != VTL_OK) {
		fprintf(stderr, "vtl-migrator: %s\n", err);
		return 1;
	}
	int level = log_level_parse(cfg->migrator.log_level);
	log_setup(level < 0 ? LOG_LEVEL_INFO : (enum log_level)level, cfg->daemon.syslog, "vtl-migrator");

	sigset_t sigs;
	service_signals(&sigs);

	if (ctlsock_answers(cfg->migrator.control_socket)) {
		log_error("another vtl-migrator answers on %s", cfg->migrator.control_socket);
		vtl_config_free(cfg);
		return 1;
	}
	struct migd *m;
	if (migd_start(cfg, &m, err, sizeof err) != VTL_OK) {
		log_error("%s", err);
		vtl_config_free(cfg);
		return 1;
	}
	struct http_server *web;
	if (migd_web_start(cfg, m, &web, err, sizeof err) != VTL_OK) {
		log_error("[migrator] http: %s", err);
		migd_stop(m);
		vtl_config_free(cfg);
		return 1;
	}
	/* "site (sim), vault (iscsi)": every library copies go to. */
	char libs[SDNOTIFY_STATUS_LEN - 16] = "";
	size_t at = 0;
	for (unsigned i = 0; i < cfg->physicals && at < sizeof libs; i++) {
		int w = snprintf(libs + at, sizeof libs - at, "%s%s (%s)", i ? ", " : "", cfg->physical[i].name,
				 cfg->physical[i].type);
		at += w > 0 ? (size_t)w : 0;
	}
	log_info("ready: copies go to %s; control socket %s", libs, cfg->migrator.control_socket);
	char status[SDNOTIFY_STATUS_LEN];
	snprintf(status, sizeof status, "copies go to %s", libs);
	service_wait(&sigs, status, "stopping: an interrupted job is queued again for the next start", reload, m);
	http_stop(web); /* first: its handlers use m */
	migd_stop(m);
	log_info("stopped");
	vtl_config_free(cfg);
	return 0;
}
