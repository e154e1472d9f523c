/* SPDX-License-Identifier: Apache-2.0 */
#include "vtl/vtld/web.h"

#include <stdio.h>
#include <stdlib.h>

#include "catalog/catalog.h"
#include "common/jsonout.h"

#include "common/ctlsock.h"
#include "common/grow.h"
#include "common/http.h"
#include "common/log.h"
#include "common/promtext.h"
#include "common/vtl_error.h"
#include "vtl/library/docs.h"
#include "vtl/library/library.h"
#include "vtl/vtld/control.h"
#include "vtl/vtld/daemon.h"
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

/* What a catalog document's query asks for. */
struct doc_args {
	int64_t since;
	unsigned limit;
};

/*
 * A catalog document as vtlctl --json prints it (vtl/library/docs.h), made
 * on a memory stream: the catalog's handle lock is taken and released by
 * each call inside, never held while the reply is sent.
 */
enum doc { DOC_ELEMENTS, DOC_DRIVES, DOC_CARTRIDGES, DOC_EVENTS };

static void catalog_doc(struct vtld *v, struct http_reply *r, const struct doc_args *a, enum doc doc)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f) {
		r->body.failed = true;
		return;
	}
	struct vtl_catalog *cat = vtld_catalog(v);
	const struct cat_library *lib = library_info(vtld_library(v));
	int rc = doc == DOC_EVENTS ? libdoc_events(cat, a->since, a->limit, f)
		 : doc == DOC_CARTRIDGES ? libdoc_cartridges(cat, lib, f)
		 : doc == DOC_DRIVES	 ? libdoc_drives(cat, lib, f)
					 : libdoc_elements(cat, lib, CAT_ELEM_ALL, LIBDOC_ALL, f);
	if (fclose(f) != 0) {
		r->body.failed = true;
	} else if (rc != VTL_OK) {
		char answer[512];
		jo_answer(answer, sizeof answer, rc, catalog_last_error(cat), NULL);
		r->status = HTTP_STATUS_SERVER_ERROR;
		outbuf_printf(&r->body, "%s\n", answer);
	} else {
		outbuf_write(&r->body, buf, len);
	}
	free(buf);
}

static void get_elements(void *arg, struct http_reply *r)
{
	catalog_doc(arg, r, &(struct doc_args){0}, DOC_ELEMENTS);
}

static void get_drives(void *arg, struct http_reply *r)
{
	catalog_doc(arg, r, &(struct doc_args){0}, DOC_DRIVES);
}

static void get_cartridges(void *arg, struct http_reply *r)
{
	catalog_doc(arg, r, &(struct doc_args){0}, DOC_CARTRIDGES);
}

/* A query argument as a number within max; false (a 400 written) when it is not one. */
static bool number_arg(struct http_reply *r, const char *key, uint64_t max, uint64_t *out)
{
	const char *s = http_arg(r, key);
	*out = 0;
	if (!s)
		return true;
	if (vtl_parse_uint(s, max, out) == VTL_OK)
		return true;
	r->status = HTTP_STATUS_BAD_REQUEST;
	outbuf_printf(&r->body, "{\"ok\":false,\"error\":\"%s: give a whole number from 0 to %llu\"}\n", key,
		      (unsigned long long)max);
	return false;
}

/* /api/events?since=ID&limit=N: as vtlctl --json events --since ID --limit N. */
static void get_events(void *arg, struct http_reply *r)
{
	uint64_t since, limit;
	if (!number_arg(r, "since", INT64_MAX, &since) || !number_arg(r, "limit", UINT32_MAX, &limit))
		return;
	catalog_doc(arg, r, &(struct doc_args){.since = (int64_t)since, .limit = (unsigned)limit}, DOC_EVENTS);
}

static const struct http_route routes[] = {
	{.path = "/metrics", .fn = get_metrics},
	{.path = "/api/status", .fn = get_status},
	{.path = "/api/elements", .fn = get_elements},
	{.path = "/api/drives", .fn = get_drives},
	{.path = "/api/cartridges", .fn = get_cartridges},
	{.path = "/api/events", .fn = get_events},
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
		log_info("http: /metrics and /api/status, /api/elements, /api/drives, /api/cartridges, /api/events on %s (port %u)%s",
			 h->listen, http_port(*out),
			 h->token[0] ? ", every request with the token" : "");
	return rc;
}

void web_stop(struct http_server *s)
{
	http_stop(s);
}
