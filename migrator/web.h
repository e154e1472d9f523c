/* SPDX-License-Identifier: Apache-2.0 */
/*
 * vtl-migrator's HTTP endpoint ([migrator] http): /metrics
 * (migrator/metrics.h) and /api/jobs, /api/physical, /api/policy, the
 * documents `vtlctl --json jobs`, `physical list --live`... print, made by
 * the same migd_answer. docs/operations.md, "HTTP endpoint", lists the routes.
 */
#ifndef VTL_MIGRATOR_WEB_H
#define VTL_MIGRATOR_WEB_H

#include <stddef.h>

#include "common/http.h"
#include "config/config.h"
#include "migrator/daemon.h"

/* Serves m on cfg's [migrator] http address; *out stays NULL when it is off. VTL_OK, or the error with err. */
int migd_web_start(const struct vtl_config *cfg, struct migd *m, struct http_server **out, char *err, size_t errlen);

#endif
