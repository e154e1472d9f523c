/* SPDX-License-Identifier: Apache-2.0 */
#include "common/http.h"

#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "common/log.h"
#include "common/vtl_error.h"

#define PORT_MAX 65535u
#define BEARER "Bearer " /* RFC 6750 2.1: the Authorization header's scheme */
#define ALLOWED "GET, HEAD"
#define ALLOWED_OPERATOR "POST"
#define MESSAGE_MAX 256
/* What every reply carries: the console's page runs only its own files (no inline script, no other
 * origin), in no other site's frame, and tells no other site where it came from. */
#define CSP "default-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"

/* An operator route's request body, gathered as libmicrohttpd hands it over (the connection's own). */
struct upload {
	const struct http_route *route;
	size_t len;
	bool over; /* more than HTTP_BODY_MAX came: the rest is read and dropped, then 413 */
	char data[HTTP_BODY_MAX + 1];
};

struct http_server {
	struct MHD_Daemon *d;
	const struct http_route *routes;
	unsigned nroutes;
	void *arg;
	char token[HTTP_TOKEN_MAX + 1];
	const char *daemon;
	pthread_mutex_t last_mu; /* libmicrohttpd logs from every connection's thread */
	char last[MESSAGE_MAX];  /* its last message: why a start failed */
};

int http_listen_parse(const char *listen, char *host, size_t cap, unsigned *port, char *err, size_t errlen)
{
	const char *colon, *h = listen;
	size_t hl;
	if (listen[0] == '[') {
		const char *close = strchr(listen, ']');
		if (!close || close[1] != ':') {
			snprintf(err, errlen, "'%s': write an IPv6 address in brackets and a port: [::1]:9110", listen);
			return VTL_E_INVAL;
		}
		h = listen + 1;
		hl = (size_t)(close - h);
		colon = close + 1;
	} else {
		colon = strrchr(listen, ':');
		if (!colon || strchr(listen, ':') != colon) {
			snprintf(err, errlen, "'%s': give an address and a port: 127.0.0.1:9110", listen);
			return VTL_E_INVAL;
		}
		hl = (size_t)(colon - listen);
	}
	char *end;
	const char *p = colon + 1;
	unsigned long n = *p >= '0' && *p <= '9' ? strtoul(p, &end, 10) : PORT_MAX + 1;
	if (n > PORT_MAX || *end) {
		snprintf(err, errlen, "'%s': the port must be a number from 0 to %u", listen, PORT_MAX);
		return VTL_E_INVAL;
	}
	if (hl == 0 || hl >= cap) {
		snprintf(err, errlen, "'%s': give a numeric address before the port", listen);
		return VTL_E_INVAL;
	}
	memcpy(host, h, hl);
	host[hl] = 0;
	struct in6_addr a6;
	struct in_addr a4;
	if (listen[0] == '[' ? inet_pton(AF_INET6, host, &a6) != 1 : inet_pton(AF_INET, host, &a4) != 1) {
		snprintf(err, errlen, "'%s': %s is not a numeric IP%s address", listen, host, listen[0] == '[' ? "v6" : "v4");
		return VTL_E_INVAL;
	}
	*port = (unsigned)n;
	return VTL_OK;
}

bool http_listen_loopback(const char *listen)
{
	char host[HTTP_LISTEN_MAX], err[8];
	unsigned port;
	if (http_listen_parse(listen, host, sizeof host, &port, err, sizeof err) != VTL_OK)
		return false;
	if (listen[0] == '[')
		return strcmp(host, "::1") == 0;
	struct in_addr a;
	return inet_pton(AF_INET, host, &a) == 1 && (ntohl(a.s_addr) >> 24) == 127; /* 127.0.0.0/8 (RFC 1122 3.2.1.3) */
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	struct http_server *s = cls;
	char m[MESSAGE_MAX];
	vsnprintf(m, sizeof m, fmt, ap);
	size_t n = strlen(m);
	while (n && (m[n - 1] == '\n' || m[n - 1] == '\r'))
		m[--n] = 0;
	pthread_mutex_lock(&s->last_mu);
	memcpy(s->last, m, n + 1);
	pthread_mutex_unlock(&s->last_mu);
	/* Refused connections over a limit are routine under load: not worth a line each above debug. */
	log_debug("%s: http: %s", s->daemon, m);
}

/* Whether the request carries the server's token (which is set), in time that does not depend on where it differs. */
static bool carries_token(const struct http_server *s, struct MHD_Connection *c)
{
	const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
	if (!h || strncmp(h, BEARER, strlen(BEARER)) != 0)
		return false;
	h += strlen(BEARER);
	size_t tl = strlen(s->token), hl = strlen(h);
	unsigned char diff = tl != hl;
	for (size_t i = 0; i < tl; i++)
		diff |= (unsigned char)s->token[i] ^ (unsigned char)(i < hl ? h[i] : 0);
	return diff == 0;
}

/* Whether the request may read: there is no token, or it carries it. */
static bool authorized(const struct http_server *s, struct MHD_Connection *c)
{
	return !s->token[0] || carries_token(s, c);
}

/* Counts the bytes of the query arguments (MHD_get_connection_values' iterator). */
static enum MHD_Result arg_bytes(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
	(void)kind;
	size_t *n = cls;
	*n += strlen(key) + 2 + (value ? strlen(value) : 0); /* with its '?' or '&' and '=' */
	return MHD_YES;
}

static enum MHD_Result send_reply(struct MHD_Connection *c, unsigned status, const char *type, void *body,
				  size_t len, bool own, const char *header, const char *value)
{
	struct MHD_Response *rsp = MHD_create_response_from_buffer(len, body ? body : (void *)"",
								   own && body ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);
	if (!rsp) {
		if (own)
			free(body);
		return MHD_NO; /* libmicrohttpd closes the connection */
	}
	enum MHD_Result ok = MHD_add_response_header(rsp, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	if (ok == MHD_YES)
		ok = MHD_add_response_header(rsp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	if (ok == MHD_YES)
		ok = MHD_add_response_header(rsp, "X-Content-Type-Options", "nosniff");
	if (ok == MHD_YES)
		ok = MHD_add_response_header(rsp, "Content-Security-Policy", CSP);
	if (ok == MHD_YES)
		ok = MHD_add_response_header(rsp, "Referrer-Policy", "no-referrer");
	if (ok == MHD_YES && header)
		ok = MHD_add_response_header(rsp, header, value);
	if (ok == MHD_YES)
		ok = MHD_queue_response(c, status, rsp);
	MHD_destroy_response(rsp);
	return ok;
}

static enum MHD_Result send_text(struct MHD_Connection *c, unsigned status, const char *text, const char *header,
				 const char *value)
{
	return send_reply(c, status, "text/plain; charset=utf-8", (void *)text, strlen(text), false, header, value);
}

static enum MHD_Result send_json_error(struct MHD_Connection *c, unsigned status, const char *json)
{
	return send_reply(c, status, "application/json", (void *)json, strlen(json), false, NULL, NULL);
}

/* The route for url: an exact path, or the longest prefix route it begins with. */
static const struct http_route *find_route(const struct http_server *s, const char *url)
{
	const struct http_route *best = NULL;
	for (unsigned i = 0; i < s->nroutes; i++) {
		const struct http_route *r = &s->routes[i];
		size_t n = strlen(r->path);
		if (!r->prefix ? strcmp(r->path, url) == 0 : strncmp(r->path, url, n) == 0 && (!best || n > strlen(best->path)))
			best = r;
		if (best && !best->prefix)
			break;
	}
	return best;
}

/* Runs r's handler and sends what it built (body, if any, the request body of an operator route). */
static enum MHD_Result run_handler(struct http_server *s, struct MHD_Connection *c, const char *url,
				   const struct http_route *r, const struct upload *u)
{
	struct http_reply rep = {.status = MHD_HTTP_OK, .type = "application/json", .conn = c, .path = url,
				 .request = u ? u->data : NULL, .request_len = u ? u->len : 0};
	outbuf_init(&rep.body, HTTP_REPLY_MAX);
	r->fn(s->arg, &rep);
	if (rep.body.failed) {
		outbuf_free(&rep.body);
		log_warn("%s: http: the reply to %s passed %u bytes or found no memory", s->daemon, url, HTTP_REPLY_MAX);
		return send_text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "the reply could not be built\n", NULL, NULL);
	}
	size_t len;
	char *body = outbuf_take(&rep.body, &len);
	return send_reply(c, rep.status, rep.type, body, len, true, NULL, NULL);
}

/*
 * The first call for an operator route's POST: refuses it (403, 413) or
 * makes the upload its body is gathered into.
 */
static enum MHD_Result begin_operator(struct http_server *s, struct MHD_Connection *c, const struct http_route *r,
				      void **con_cls)
{
	if (!s->token[0])
		return send_json_error(c, MHD_HTTP_FORBIDDEN, "{\"ok\":false,\"error\":\"operator actions are off: set "
				       "[daemon] http_token and send Authorization: Bearer TOKEN\"}\n");
	if (!carries_token(s, c))
		return send_json_error(c, MHD_HTTP_FORBIDDEN,
				       "{\"ok\":false,\"error\":\"give the token: Authorization: Bearer TOKEN\"}\n");
	const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
	if (cl && (strlen(cl) > 5 || strtoul(cl, NULL, 10) > HTTP_BODY_MAX))
		return send_json_error(c, MHD_HTTP_CONTENT_TOO_LARGE, "{\"ok\":false,\"error\":\"the request body is "
				       "longer than 1024 bytes\"}\n");
	struct upload *u = calloc(1, sizeof *u);
	if (!u)
		return MHD_NO;
	u->route = r;
	*con_cls = u;
	return MHD_YES;
}

_Static_assert(HTTP_BODY_MAX == 1024, "the 413 text says 1024");

static enum MHD_Result serve(void *cls, struct MHD_Connection *c, const char *url, const char *method,
			     const char *version, const char *upload_data, size_t *upload_data_size, void **con_cls)
{
	(void)version;
	struct http_server *s = cls;
	struct upload *u = *con_cls;
	if (u) { /* an operator route's body, as it comes, then its end */
		size_t n = *upload_data_size;
		if (n) {
			if (!u->over && n <= HTTP_BODY_MAX - u->len) {
				memcpy(u->data + u->len, upload_data, n);
				u->len += n;
			} else {
				u->over = true;
			}
			*upload_data_size = 0;
			return MHD_YES;
		}
		if (u->over)
			return send_json_error(c, MHD_HTTP_CONTENT_TOO_LARGE, "{\"ok\":false,\"error\":\"the request body is "
					       "longer than 1024 bytes\"}\n");
		u->data[u->len] = 0;
		return run_handler(s, c, url, u->route, u);
	}
	if (*upload_data_size)
		return MHD_NO; /* a body was refused on the first call: nothing more is read */
	size_t target = strlen(url);
	MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, arg_bytes, &target);
	bool post = strcmp(method, MHD_HTTP_METHOD_POST) == 0;
	if (!post && strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
		return send_text(c, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET and HEAD are served, and POST of an action\n",
				 MHD_HTTP_HEADER_ALLOW, ALLOWED);
	if (target > HTTP_URL_MAX)
		return send_text(c, MHD_HTTP_URI_TOO_LONG, "the request target is too long\n", NULL, NULL);
	const struct http_route *r = find_route(s, url);
	if (post && !(r && r->operator))
		return send_text(c, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET and HEAD are served here\n", MHD_HTTP_HEADER_ALLOW,
				 ALLOWED);
	if (post)
		return begin_operator(s, c, r, con_cls);
	if (r && r->operator)
		return send_text(c, MHD_HTTP_METHOD_NOT_ALLOWED, "an action is a POST\n", MHD_HTTP_HEADER_ALLOW,
				 ALLOWED_OPERATOR);
	const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
	if ((cl && strcmp(cl, "0") != 0) || MHD_lookup_connection_value(c, MHD_HEADER_KIND,
									MHD_HTTP_HEADER_TRANSFER_ENCODING))
		return send_text(c, MHD_HTTP_CONTENT_TOO_LARGE, "a request body is not accepted\n", NULL, NULL);
	bool builtin = r && !r->fn; /* a file of the console: no data of the daemon, served to anyone */
	if (!builtin && !authorized(s, c))
		return send_text(c, MHD_HTTP_UNAUTHORIZED, "give the token: Authorization: Bearer TOKEN\n",
				 MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer");
	if (!r)
		return send_text(c, MHD_HTTP_NOT_FOUND, "no such page\n", NULL, NULL);
	if (builtin)
		return send_reply(c, MHD_HTTP_OK, r->type, (void *)r->data, r->len, false, NULL, NULL);
	return run_handler(s, c, url, r, NULL);
}

/* Frees a request's upload when libmicrohttpd is done with it (MHD_OPTION_NOTIFY_COMPLETED). */
static void completed(void *cls, struct MHD_Connection *c, void **con_cls, enum MHD_RequestTerminationCode toe)
{
	(void)cls;
	(void)c;
	(void)toe;
	free(*con_cls);
	*con_cls = NULL;
}

const char *http_arg(const struct http_reply *r, const char *key)
{
	const char *v = MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, key);
	if (v)
		return v;
	/* "?key" without "=": libmicrohttpd keeps the key with no value. */
	return MHD_lookup_connection_value_n(r->conn, MHD_GET_ARGUMENT_KIND, key, strlen(key), NULL, NULL) == MHD_YES
		       ? ""
		       : NULL;
}

int http_start(const struct http_config *c, struct http_server **out, char *err, size_t errlen)
{
	char host[HTTP_LISTEN_MAX];
	unsigned port;
	int rc = http_listen_parse(c->listen, host, sizeof host, &port, err, errlen);
	if (rc)
		return VTL_E_CONFIG;
	if (c->token && c->token[0] && (strlen(c->token) < HTTP_TOKEN_MIN || strlen(c->token) > HTTP_TOKEN_MAX)) {
		snprintf(err, errlen, "the HTTP token must be %d to %d characters long", HTTP_TOKEN_MIN, HTTP_TOKEN_MAX);
		return VTL_E_CONFIG;
	}
	if (!(c->token && c->token[0]) && !http_listen_loopback(c->listen)) {
		snprintf(err, errlen, "http = %s is not a loopback address: set http_token, or listen on 127.0.0.1 "
			 "behind a reverse proxy (docs/operations.md)", c->listen);
		return VTL_E_CONFIG;
	}
	struct http_server *s = calloc(1, sizeof *s);
	if (!s)
		return VTL_E_NOMEM;
	s->routes = c->routes;
	s->nroutes = c->nroutes;
	s->arg = c->arg;
	s->daemon = c->daemon ? c->daemon : "daemon";
	if (pthread_mutex_init(&s->last_mu, NULL) != 0) {
		free(s);
		snprintf(err, errlen, "cannot serve HTTP on %s: no lock", c->listen);
		return VTL_E_NOMEM;
	}
	snprintf(s->token, sizeof s->token, "%s", c->token ? c->token : "");
	struct sockaddr_storage ss;
	memset(&ss, 0, sizeof ss);
	/*
	 * A thread for each connection (at most `connections` of them): a handler
	 * that waits (a migrator that is slow to answer an action, a catalog busy
	 * with a writer) holds only its own client, never another's /metrics.
	 */
	unsigned flags = MHD_USE_AUTO_INTERNAL_THREAD | MHD_USE_THREAD_PER_CONNECTION | MHD_USE_ERROR_LOG;
	if (c->listen[0] == '[') {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
		a->sin6_family = AF_INET6;
		a->sin6_port = htons((uint16_t)port);
		(void)inet_pton(AF_INET6, host, &a->sin6_addr); /* checked by http_listen_parse */
		flags |= MHD_USE_IPv6;
	} else {
		struct sockaddr_in *a = (struct sockaddr_in *)&ss;
		a->sin_family = AF_INET;
		a->sin_port = htons((uint16_t)port);
		(void)inet_pton(AF_INET, host, &a->sin_addr);
	}
	unsigned conns = c->connections ? c->connections : HTTP_CONNECTIONS_DEFAULT;
	unsigned per = c->per_address ? c->per_address : HTTP_PER_ADDRESS_DEFAULT;
	unsigned timeout = c->timeout ? c->timeout : HTTP_TIMEOUT_DEFAULT;
	s->d = MHD_start_daemon(flags, (uint16_t)port, NULL, NULL, serve, s, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
				MHD_OPTION_CONNECTION_LIMIT, conns, MHD_OPTION_PER_IP_CONNECTION_LIMIT, per,
				MHD_OPTION_CONNECTION_TIMEOUT, timeout, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
				(size_t)HTTP_HEADERS_MAX, MHD_OPTION_EXTERNAL_LOGGER, mhd_log, s,
				MHD_OPTION_NOTIFY_COMPLETED, completed, NULL, MHD_OPTION_END);
	if (!s->d) {
		snprintf(err, errlen, "cannot serve HTTP on %s: %s", c->listen, s->last[0] ? s->last : "libmicrohttpd failed");
		pthread_mutex_destroy(&s->last_mu);
		free(s);
		return VTL_E_IO;
	}
	*out = s;
	return VTL_OK;
}

unsigned http_port(const struct http_server *s)
{
	const union MHD_DaemonInfo *i = MHD_get_daemon_info(s->d, MHD_DAEMON_INFO_BIND_PORT);
	return i ? i->port : 0;
}

void http_stop(struct http_server *s)
{
	if (!s)
		return;
	MHD_stop_daemon(s->d); /* joins every connection's thread */
	pthread_mutex_destroy(&s->last_mu);
	free(s);
}
