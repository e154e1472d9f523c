/* SPDX-License-Identifier: Apache-2.0 */
/*
 * vtld's /metrics: the Prometheus exposition of its drives (what hosts
 * wrote and read, the cartridge, the buffers), logical units (commands,
 * CHECK CONDITIONs by sense key), iSCSI sessions, pool, throttle and cache.
 * Built from the snapshots `vtlctl status` reads (ssc_status_now, the
 * throttle's state, the pool's space), each taken under its own lock and
 * released before the next; docs/operations.md lists every series.
 */
#ifndef VTL_VTLD_METRICS_H
#define VTL_VTLD_METRICS_H

#include "common/outbuf.h"

struct vtld;

/* Writes the exposition of v into o (o->failed says whether it is whole). */
void vtld_metrics_write(struct vtld *v, struct outbuf *o);

#endif
