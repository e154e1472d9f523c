/* SPDX-License-Identifier: Apache-2.0 */
/*
 * vtl-migrator's /metrics: the Prometheus exposition of a migd_snapshot
 * (its physical drives and their jobs, the jobs by state, the policy's
 * passes and releases, the recalls' time to first block). docs/operations.md
 * lists every series.
 */
#ifndef VTL_MIGRATOR_METRICS_H
#define VTL_MIGRATOR_METRICS_H

#include "common/outbuf.h"
#include "migrator/daemon.h"

/* Writes the exposition of s into o; each drive's series carries its library's name (label library). */
void migd_metrics_write(const struct migd_snapshot *s, struct outbuf *o);

#endif
