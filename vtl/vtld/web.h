/* SPDX-License-Identifier: Apache-2.0 */
/*
 * vtld's HTTP endpoint ([daemon] http): /metrics (vtl/vtld/metrics.h);
 * /api/status, the document `vtlctl --json status` prints, made by the same
 * control_answer; /api/library, /api/elements, /api/cartridges[/BARCODE],
 * /api/events..., the documents `vtlctl --json library show`, `slot list`,
 * `cartridge list|show` and `events` print, by the same writers
 * (vtl/library/docs.h); /api/jobs, vtl-migrator's answer through its control
 * socket; the web console's files (vtl/vtld/console_files.h) and its
 * operator actions, POST /api/action (common/action_form.h), answered by
 * the control code paths vtlctl reaches. docs/operations.md, "HTTP
 * endpoint" and "Web console", lists the routes.
 */
#ifndef VTL_VTLD_WEB_H
#define VTL_VTLD_WEB_H

#include <stddef.h>

#include "config/config.h"

struct vtld;
struct http_server;

/* Serves v on cfg's [daemon] http address; *out stays NULL when it is off. VTL_OK, or the error with err. */
int web_start(const struct vtl_config *cfg, struct vtld *v, struct http_server **out, char *err, size_t errlen);

/* Stops serving (NULL is fine). */
void web_stop(struct http_server *s);

#endif
