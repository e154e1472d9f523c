/* SPDX-License-Identifier: Apache-2.0 */
/*
 * vtld: serves the library of a configuration file until SIGTERM or SIGINT,
 * then finishes the commands in flight, syncs the cartridges and exits 0;
 * VTLD_EXIT_UNSYNCED when a loaded cartridge's final sync failed, so that a
 * service manager (and the operator) sees that acknowledged data may be lost.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/sdnotify.h"
#include "common/service.h"
#include "common/vtl_error.h"
#include "config/config.h"
#include "vtl/vtld/control.h"
#include "vtl/vtld/daemon.h"
#include "vtl/vtld/web.h"

/* Exit statuses (docs/operations.md, "Starting and stopping vtld"). */
#define VTLD_EXIT_OK 0       /* stopped by a signal, every loaded cartridge synced */
#define VTLD_EXIT_START 1    /* could not start: the log says why */
#define VTLD_EXIT_USAGE 2    /* a wrong argument */
#define VTLD_EXIT_UNSYNCED 3 /* stopped, but a loaded cartridge's final sync failed (logged with its barcode) */

/* SIGHUP: vtld_reload logs what it applied or why nothing. */
static void reload(void *arg)
{
	char msg[2048];
	vtl_ignore(vtld_reload(arg, msg, sizeof msg));
}

static void usage(FILE *f)
{
	fprintf(f, "usage: vtld [-c FILE] [--port N]\n"
		   "  -c, --config FILE   the configuration (default $VTL_CONFIG, else %s)\n"
		   "  -p, --port N        the iSCSI port, instead of [iscsi] port\n"
		   "  -h, --help          this text\n"
		   "Exit status: 0 stopped (SIGTERM, SIGINT) with every loaded cartridge synced; 1 could not start;\n"
		   "2 a wrong argument; 3 stopped, but the final sync of a loaded cartridge failed: what was written\n"
		   "to it after its last synchronizing command may be lost (the log names the cartridge and the error).\n", vtl_config_installed_path());
}

int main(int argc, char **argv)
{
	const char *path = vtl_config_default_path();
	long port = -1;
	for (int i = 1; i < argc; i++) {
		if ((!strcmp(argv[i], "-c") || !strcmp(argv[i], "--config")) && i + 1 < argc) {
			path = argv[++i];
		} else if ((!strcmp(argv[i], "-p") || !strcmp(argv[i], "--port")) && i + 1 < argc) {
			char *end;
			port = strtol(argv[++i], &end, 10);
			if (*end || port < 1 || port > 65535) {
				fprintf(stderr, "vtld: --port %s is not a TCP port (1..65535)\n", argv[i]);
				return VTLD_EXIT_USAGE;
			}
		} else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage(stdout);
			return VTLD_EXIT_OK;
		} else {
			fprintf(stderr, "vtld: unknown argument '%s'\n", argv[i]);
			usage(stderr);
			return VTLD_EXIT_USAGE;
		}
	}
	struct vtl_config *cfg;
	char err[VTL_CFG_ERR_LEN];
	if (vtl_config_load(path, &cfg, err, sizeof err) != VTL_OK) {
		fprintf(stderr, "vtld: %s\n", err);
		return VTLD_EXIT_START;
	}
	if (port > 0)
		cfg->iscsi.port = (unsigned)port;
	int level = log_level_parse(cfg->daemon.log_level[0] ? cfg->daemon.log_level : "info");
	log_setup(level < 0 ? LOG_LEVEL_INFO : (enum log_level)level, cfg->daemon.syslog, "vtld");

	/* Signals are taken synchronously by this thread; every other thread inherits the mask. */
	sigset_t sigs;
	service_signals(&sigs);

	if (control_answers(cfg->daemon.control_socket)) {
		log_error("another vtld answers on %s: it serves this library already", cfg->daemon.control_socket);
		vtl_config_free(cfg);
		return VTLD_EXIT_START;
	}
	struct vtld *v;
	if (vtld_start(cfg, &v, err, sizeof err) != VTL_OK) {
		log_error("%s", err);
		vtl_config_free(cfg);
		return VTLD_EXIT_START;
	}
	struct ctlsock *ctl;
	if (control_start(cfg->daemon.control_socket, &cfg->daemon.control_group, v, &ctl, err, sizeof err) != VTL_OK) {
		log_error("%s", err);
		vtl_ignore(vtld_stop(v)); /* the start failed, which is the exit status; a drive logs a failed close itself */
		vtl_config_free(cfg);
		return VTLD_EXIT_START;
	}
	struct http_server *web;
	if (web_start(cfg, v, &web, err, sizeof err) != VTL_OK) {
		log_error("[daemon] http: %s", err);
		control_stop(ctl);
		vtl_ignore(vtld_stop(v));
		vtl_config_free(cfg);
		return VTLD_EXIT_START;
	}
	unsigned n;
	struct vtl_lu *lus = vtld_lus(v, &n);
	log_info("library %s ready: %u logical units (LUN %u %s, LUN %u..%u drives)", cfg->library.name, n,
		 lus[0].lun, lus[0].what, n > 1 ? lus[1].lun : 0, n > 1 ? lus[n - 1].lun : 0);
	char status[SDNOTIFY_STATUS_LEN];
	snprintf(status, sizeof status, "library %s: %u logical units", cfg->library.name, n);
	service_wait(&sigs, status, "stopping: finishing the commands in flight, syncing the cartridges", reload, v);
	web_stop(web); /* first: its handlers use v */
	control_stop(ctl);
	int rc = vtld_stop(v);
	if (rc != VTL_OK)
		log_error("stopped, but a loaded cartridge could not be synced (%s): see the drive's error above; "
			  "exit status %d", vtl_strerror(rc), VTLD_EXIT_UNSYNCED);
	else
		log_info("stopped");
	vtl_config_free(cfg);
	return rc != VTL_OK ? VTLD_EXIT_UNSYNCED : VTLD_EXIT_OK;
}
