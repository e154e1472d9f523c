/* SPDX-License-Identifier: Apache-2.0 */
#include "vtl/vtld/web.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/catalog.h"
#include "common/action_form.h"
#include "common/ctlproto.h"
#include "common/ctlsock.h"
#include "common/grow.h"
#include "common/http.h"
#include "common/jsonout.h"
#include "common/log.h"
#include "common/promtext.h"
#include "common/vtl_error.h"
#include "vtl/library/docs.h"
#include "vtl/library/library.h"
#include "vtl/vtld/console_files.h"
#include "vtl/vtld/control.h"
#include "vtl/vtld/daemon.h"
#include "vtl/vtld/metrics.h"

#define JOBS_TIMEOUT_MS 1000    /* the console asks every second: a migrator slower than that is shown as not answering */
#define ACTION_TIMEOUT_MS 10000 /* a migrator's action only queues a job; the connection's thread waits no longer */
#define CARTRIDGES_PREFIX "/api/cartridges/"

/* What the handlers need: the daemon, and from its configuration the paths the documents name. */
struct web {
	struct vtld *v;
	const struct vtl_config *cfg; /* vtld's, alive until web_stop */
	const char *migrator;         /* vtl-migrator's control socket, NULL without a [physical] library */
};

static struct web the_web; /* one endpoint per process; read only once it serves (handlers run concurrently) */

/* A buffer for a control answer, the handler's own (NULL, the reply failed, without memory). */
static char *answer_buffer(struct http_reply *r)
{
	char *a = malloc(CTLSOCK_ANSWER_MAX);
	if (!a)
		r->body.failed = true;
	return a;
}

static void get_metrics(void *arg, struct http_reply *r)
{
	struct web *w = arg;
	r->type = PROM_CONTENT_TYPE;
	vtld_metrics_write(w->v, &r->body);
}

/* A control verb's answer, as the control socket gives it to vtlctl (which prints it for --json). */
static void verb(struct vtld *v, const char *request, struct http_reply *r)
{
	char *answer = answer_buffer(r);
	if (!answer)
		return;
	control_answer(v, request, answer, CTLSOCK_ANSWER_MAX);
	outbuf_printf(&r->body, "%s\n", answer);
	free(answer);
}

static void get_status(void *arg, struct http_reply *r)
{
	struct web *w = arg;
	verb(w->v, "status", r);
}

/* A JSON refusal {"ok":false,"error":"..."} with status. */
static void refuse(struct http_reply *r, unsigned status, const char *error)
{
	char answer[1024];
	jo_answer(answer, sizeof answer, VTL_E_INVAL, error, NULL);
	r->status = status;
	outbuf_printf(&r->body, "%s\n", answer);
}

/*
 * Sends line to vtl-migrator and copies its answer, as vtlctl does (same
 * texts when it does not answer); false (the refusal written) when it did not.
 */
static bool migrator_exchange(struct web *w, const char *line, int timeout_ms, char *answer, size_t cap,
			      struct http_reply *r)
{
	char e[512];
	if (!w->migrator) {
		refuse(r, HTTP_STATUS_UNAVAILABLE, "this library has no [physical] library: there is no vtl-migrator");
		return false;
	}
	int rc = ctlsock_exchange(w->migrator, line, answer, cap, timeout_ms);
	if (rc == VTL_OK)
		return true;
	if (rc == -1)
		snprintf(e, sizeof e, "vtl-migrator does not answer on %s", w->migrator);
	else if (rc == -3)
		snprintf(e, sizeof e, "vtld may not use vtl-migrator's control socket %s (permission denied): put vtld's "
			 "user in the migrator's control_group", w->migrator);
	else
		snprintf(e, sizeof e, "vtl-migrator did not answer the request");
	refuse(r, HTTP_STATUS_UNAVAILABLE, e);
	return false;
}

/* /api/jobs: vtl-migrator's answer to "jobs" (what `vtlctl --json jobs` reads), so that the console needs one origin. */
static void get_jobs(void *arg, struct http_reply *r)
{
	char *answer = answer_buffer(r);
	if (answer && migrator_exchange(arg, "jobs", JOBS_TIMEOUT_MS, answer, CTLSOCK_ANSWER_MAX, r))
		outbuf_printf(&r->body, "%s\n", answer);
	free(answer);
}

/*
 * POST /api/action: an operator action as a form (common/action_form.h),
 * made into the control request vtlctl sends and answered by the daemon
 * vtlctl would ask (vtld's control_answer, or vtl-migrator's socket): the
 * same code path, rules and error texts. 200 with {"ok":true,...}; 400 when
 * the form is wrong; 409 when the daemon refused; 503 when it did not answer.
 */
static void post_action(void *arg, struct http_reply *r)
{
	struct web *w = arg;
	char line[CTLSOCK_REQUEST_MAX], err[512];
	enum ctlproto_daemon d;
	if (action_form_parse(r->request, r->request_len, line, sizeof line, &d, err, sizeof err) != VTL_OK) {
		refuse(r, HTTP_STATUS_BAD_REQUEST, err);
		return;
	}
	char *answer = answer_buffer(r);
	if (!answer)
		return;
	log_info("http: operator action: %s", line);
	bool answered = true;
	if (d == CTLPROTO_VTLD)
		control_answer(w->v, line, answer, CTLSOCK_ANSWER_MAX);
	else
		answered = migrator_exchange(w, line, ACTION_TIMEOUT_MS, answer, CTLSOCK_ANSWER_MAX, r);
	if (answered) {
		if (strncmp(answer, "{\"ok\":true", 10) != 0)
			r->status = HTTP_STATUS_CONFLICT;
		outbuf_printf(&r->body, "%s\n", answer);
	}
	free(answer);
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
enum doc { DOC_ELEMENTS, DOC_DRIVES, DOC_CARTRIDGES, DOC_EVENTS, DOC_LIBRARY, DOC_CARTRIDGE };

/* /api/cartridges/BARCODE: as vtlctl --json cartridge show BARCODE (its 404 text too). */
static int cartridge_doc(struct vtl_catalog *cat, struct vtld *v, const struct cat_library *lib, const char *barcode,
			 struct http_reply *r, FILE *f)
{
	struct libdoc_cart k;
	int rc = libdoc_cart_read(cat, vtld_pool(v), NULL, barcode, &k);
	if (rc == VTL_E_NOTFOUND) {
		char e[128];
		snprintf(e, sizeof e, "there is no cartridge %s in the catalog (see 'vtlctl cartridge list')", barcode);
		refuse(r, HTTP_STATUS_NOT_FOUND, e);
		return VTL_OK;
	}
	if (rc == VTL_OK) {
		libdoc_cart_write(lib, &k, f);
		libdoc_cart_free(&k);
	}
	return rc;
}

static void catalog_doc(struct web *w, struct http_reply *r, const struct doc_args *a, enum doc doc)
{
	struct vtld *v = w->v;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f) {
		r->body.failed = true;
		return;
	}
	struct vtl_catalog *cat = vtld_catalog(v);
	const struct cat_library *lib = library_info(vtld_library(v));
	struct libdoc_library_src src = {.catalog = w->cfg->catalog.path, .config = w->cfg->path, .pool = vtld_pool(v)};
	int rc = doc == DOC_LIBRARY	? libdoc_library(cat, lib, &src, f)
		 : doc == DOC_CARTRIDGE ? cartridge_doc(cat, v, lib, r->path + strlen(CARTRIDGES_PREFIX), r, f)
		 : doc == DOC_EVENTS	? libdoc_events(cat, a->since, a->limit, f)
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

/* /api/library: as vtlctl --json library show. */
static void get_library(void *arg, struct http_reply *r)
{
	catalog_doc(arg, r, &(struct doc_args){0}, DOC_LIBRARY);
}

static void get_cartridge(void *arg, struct http_reply *r)
{
	const char *bc = r->path + strlen(CARTRIDGES_PREFIX);
	if (vtl_barcode_check(bc) != VTL_OK) {
		refuse(r, HTTP_STATUS_BAD_REQUEST, "give a barcode: 1 to 32 printable ASCII characters, no / or \\, "
		       "not starting with '.'");
		return;
	}
	catalog_doc(arg, r, &(struct doc_args){0}, DOC_CARTRIDGE);
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
	{.path = "/api/library", .fn = get_library},
	{.path = CARTRIDGES_PREFIX, .fn = get_cartridge, .prefix = true},
	{.path = "/api/jobs", .fn = get_jobs},
	{.path = "/api/action", .fn = post_action, .operator = true},
	/* The console: its page, and its script and style as files of their own (the policy allows no inline one). */
	{.path = "/", .type = "text/html; charset=utf-8", .data = console_html},
	{.path = "/console", .type = "text/html; charset=utf-8", .data = console_html},
	{.path = "/console.js", .type = "text/javascript; charset=utf-8", .data = console_js},
	{.path = "/console.css", .type = "text/css; charset=utf-8", .data = console_css},
};

int web_start(const struct vtl_config *cfg, struct vtld *v, struct http_server **out, char *err, size_t errlen)
{
	*out = NULL;
	const struct vtl_cfg_http *h = &cfg->daemon.http;
	if (!h->listen[0])
		return VTL_OK;
	/* A route table's initializer cannot take an extern array's length: the files' lengths are set here. */
	static struct http_route table[VTL_ARRAY_SIZE(routes)];
	memcpy(table, routes, sizeof routes);
	for (size_t i = 0; i < VTL_ARRAY_SIZE(table); i++)
		if (!table[i].fn)
			table[i].len = table[i].data == console_js    ? console_js_len
				       : table[i].data == console_css ? console_css_len
								      : console_html_len;
	the_web = (struct web){.v = v, .cfg = cfg,
			       .migrator = vtl_config_has_physical(cfg) ? cfg->migrator.control_socket : NULL};
	struct http_config hc = {.listen = h->listen, .token = h->token, .connections = h->connections,
				 .per_address = h->per_address, .timeout = h->timeout, .routes = table,
				 .nroutes = VTL_ARRAY_SIZE(table), .arg = &the_web, .daemon = "vtld"};
	int rc = http_start(&hc, out, err, errlen);
	if (rc == VTL_OK)
		log_info("http: the console (/), /metrics and /api/status, /api/library, /api/elements, /api/drives, "
			 "/api/cartridges[/BARCODE], /api/events, /api/jobs on %s (port %u)%s", h->listen, http_port(*out),
			 h->token[0] ? "; every request but for the console's files with the token, and operator actions "
				       "(POST /api/action)" : "; no operator actions (no http_token)");
	return rc;
}

void web_stop(struct http_server *s)
{
	http_stop(s);
}
