/* SPDX-License-Identifier: Apache-2.0 */
#include "migrator/web.h"

#include <stdlib.h>

#include "common/ctlsock.h"
#include "common/grow.h"
#include "common/log.h"
#include "common/promtext.h"
#include "common/vtl_error.h"
#include "migrator/metrics.h"

/* What the handlers need: the daemon (its snapshot names each drive's library). */
struct web {
	struct migd *m;
};

static struct web the_web; /* one endpoint per process; read only once it serves (handlers run concurrently) */

static void get_metrics(void *arg, struct http_reply *r)
{
	struct web *w = arg;
	struct migd_snapshot *s = malloc(sizeof *s);
	if (!s) {
		r->body.failed = true;
		return;
	}
	migd_snapshot(w->m, s);
	r->type = PROM_CONTENT_TYPE;
	migd_metrics_write(s, &r->body);
	free(s);
}

/* A control verb's answer, as the control socket gives it to vtlctl (which prints it for --json). */
static void verb(struct web *w, const char *request, struct http_reply *r)
{
	char *answer = malloc(CTLSOCK_ANSWER_MAX); /* the handler's own: handlers run concurrently */
	if (!answer) {
		r->body.failed = true;
		return;
	}
	migd_answer(w->m, request, answer, CTLSOCK_ANSWER_MAX);
	outbuf_printf(&r->body, "%s\n", answer);
	free(answer);
}

static void get_jobs(void *arg, struct http_reply *r)
{
	verb(arg, "jobs", r);
}

static void get_physical(void *arg, struct http_reply *r)
{
	verb(arg, "physical", r);
}

static void get_drives(void *arg, struct http_reply *r)
{
	verb(arg, "drives", r);
}

static void get_policy(void *arg, struct http_reply *r)
{
	verb(arg, "policy", r);
}

static const struct http_route routes[] = {
	{.path = "/metrics", .fn = get_metrics},
	{.path = "/api/jobs", .fn = get_jobs},
	{.path = "/api/physical", .fn = get_physical},
	{.path = "/api/physical/drives", .fn = get_drives},
	{.path = "/api/policy", .fn = get_policy},
};

int migd_web_start(const struct vtl_config *cfg, struct migd *m, struct http_server **out, char *err, size_t errlen)
{
	*out = NULL;
	const struct vtl_cfg_http *h = &cfg->migrator.http;
	if (!h->listen[0])
		return VTL_OK;
	the_web = (struct web){.m = m};
	struct http_config hc = {.listen = h->listen, .token = h->token, .connections = h->connections,
				 .per_address = h->per_address, .timeout = h->timeout, .routes = routes,
				 .nroutes = VTL_ARRAY_SIZE(routes), .arg = &the_web, .daemon = "vtl-migrator"};
	int rc = http_start(&hc, out, err, errlen);
	if (rc == VTL_OK)
		log_info("http: /metrics and /api/jobs, /api/physical, /api/physical/drives, /api/policy on %s (port %u)%s", h->listen,
			 http_port(*out), h->token[0] ? ", every request with the token" : "");
	return rc;
}
