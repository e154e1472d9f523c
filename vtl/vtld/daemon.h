/* SPDX-License-Identifier: Apache-2.0 */
/*
 * vtld's core: the library of the configuration brought up (pool, catalog,
 * library model, changer and drives, a worker thread per logical unit) and
 * taken down cleanly. The front ends (the built-in iSCSI target and
 * TCMU) get the logical units from here.
 */
#ifndef VTL_VTLD_DAEMON_H
#define VTL_VTLD_DAEMON_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "common/meter.h"
#include "config/config.h"
#include "vtl/lu_worker.h"
#include "vtl/scsi/cmd.h"

#define VTLD_MAX_LUS (VTL_CFG_MAX_DRIVES + 1)

/* A drive's byte counters, sampled by the control thread (vtlctl status's MB/s). */
struct vtld_meters {
	struct meter written, read;
	/* Every byte hosts wrote or read through the drive since vtld started: the counters above start again
	 * at each load, which would hide a host that loads often from host ingest first. */
	struct meter moved;
	uint64_t seen_written, seen_read, moved_total;
};

struct vtld;

/*
 * Opens the pool, the catalog (which vtlctl init created), the library, its
 * changer and drives, and starts one worker per logical unit. On failure err
 * says what to fix.
 */
int vtld_start(const struct vtl_config *cfg, struct vtld **out, char *err, size_t errlen);

/*
 * Stops the workers (running what is queued), unloads nothing, syncs and
 * closes everything. Returns VTL_OK, or the error of a loaded cartridge
 * whose final sync failed (logged with its drive and barcode): what a host
 * wrote after its last synchronizing command may be lost.
 */
int vtld_stop(struct vtld *v);

/*
 * Reads the configuration file again and applies what can change while
 * serving (the log level, CHAP credentials and allowed initiators for the
 * next logins, the write throttle), all or nothing: VTL_OK with msg saying
 * what was applied; VTL_E_CONFIG when the file does not parse or changes
 * anything else (msg names each such key), VTL_E_BUSY during another
 * reload, VTL_E_NOMEM: then nothing changed. Tells the service manager
 * RELOADING=1, then READY=1. Any thread; the file is cfg->path of vtld_start.
 */
int vtld_reload(struct vtld *v, char *msg, size_t cap);

struct vtl_library;
/* The library model (for the control socket). */
struct vtl_library *vtld_library(struct vtld *v);

struct vtl_catalog;
/* The catalog (for the control socket). */
struct vtl_catalog *vtld_catalog(struct vtld *v);

struct throttle;
/* The write throttle (for the control socket's status). */
struct throttle *vtld_throttle(struct vtld *v);

struct tcmu_front;
/* The TCMU front end, or NULL when [daemon] tcmu is off (for the control socket's status). */
struct tcmu_front *vtld_tcmu(struct vtld *v);

/* The logical units, changer first; *n gets their number. */
struct vtl_lu *vtld_lus(struct vtld *v, unsigned *n);

/* The meters of logical unit i of vtld_lus (read and sampled under vtld_control_mu only). */
struct vtld_meters *vtld_meters(struct vtld *v, unsigned i);

/* What the control thread tells vtl-migrator of the hosts' traffic (its alone; docs/migrator.md, "Host ingest first"). */
struct vtld_ingest {
	const char *migrator; /* the migrator's control socket; NULL: no [physical] library, nobody to tell */
	unsigned last_mbs;    /* the rate last reported (MB/s); 0 also before the first report */
	double host_bps;      /* what the hosts move through every drive (writes and reads), as the meters show */
};

/* The control thread's ingest report state. */
struct vtld_ingest *vtld_ingest(struct vtld *v);
/* The lock (rank VTL_LOCK_CONTROL) under which one control answer at a time is made: socket or HTTP. */
pthread_mutex_t *vtld_control_mu(struct vtld *v);

struct vtl_pool;
/* The disk pool (for the metrics' per-member space). */
struct vtl_pool *vtld_pool(struct vtld *v);

struct iscsi_target;
/* The built-in iSCSI target (for the metrics' sessions). */
struct iscsi_target *vtld_iscsi(struct vtld *v);

#endif
