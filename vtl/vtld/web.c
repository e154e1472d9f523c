/* SPDX-License-Identifier: Apache-2.0 */
#include "vtl/vtld/web.h"

#include "common/ctlsock.h"
#include "common/grow.h"
#include "common/http.h"
#include "common/log.h"
#include "common/promtext.h"
#include "common/vtl_error.h"
#include "vtl/vtld/control.h"
#include "vtl/vtld/metrics.h"

static void get_metrics(void *arg, struct http_reply *r)
{
	r->type = PROM_CONTENT_TYPE;
	vtld_metrics_write(arg, &r->body);
}

/* A control verb's answer, as the control socket gives it to vtlctl (which prints it for --json). */
static void verb(struct vtld *v, const char *request, struct http_reply *r)
{
	static char answer[CTLSOCK_ANSWER_MAX]; /* the HTTP thread's alone: handlers run one at a time */
	control_answer(v, request, answer, sizeof answer);
	outbuf_printf(&r->body, "%s\n", answer);
}

static void get_status(void *arg, struct http_reply *r)
{
	verb(arg, "status", r);
}

static const struct http_route routes[] = {
	{.path = "/metrics", .fn = get_metrics},
	{.path = "/api/status", .fn = get_status},
};

int web_start(const struct vtl_config *cfg, struct vtld *v, struct http_server **out, char *err, size_t errlen)
{
	*out = NULL;
	const struct vtl_cfg_http *h = &cfg->daemon.http;
	if (!h->listen[0])
		return VTL_OK;
	struct http_config hc = {.listen = h->listen, .token = h->token, .connections = h->connections,
				 .per_address = h->per_address, .timeout = h->timeout, .routes = routes,
				 .nroutes = VTL_ARRAY_SIZE(routes), .arg = v, .daemon = "vtld"};
	int rc = http_start(&hc, out, err, errlen);
	if (rc == VTL_OK)
		log_info("http: /metrics and /api/status on %s (port %u)%s", h->listen, http_port(*out),
			 h->token[0] ? ", every request with the token" : "");
	return rc;
}

void web_stop(struct http_server *s)
{
	http_stop(s);
}
