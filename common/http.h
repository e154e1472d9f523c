/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The daemons' HTTP endpoint (/metrics, /api/..., built-in static files),
 * on libmicrohttpd. Each connection has its own thread, which runs its
 * handlers: a handler that waits (on another daemon, on a busy catalog)
 * holds only its own client. Handlers therefore run concurrently and must
 * keep no state of their own outside the reply. A handler builds its whole
 * reply in memory (from snapshots taken under the daemon's own locks,
 * released before it returns) and the thread then writes it as the client
 * reads, so no other thread of the daemon ever waits on a slow HTTP client.
 *
 * What a client may make the daemon hold is bounded (docs/operations.md,
 * "HTTP endpoint"): connections in all and from one address, how long a
 * connection may stay idle, the bytes of a request line and its headers.
 * GET and HEAD of a route in the table are served, and POST of an operator
 * route: another method is 405, a GET with a body or a POST body over
 * HTTP_BODY_MAX 413, a target longer than HTTP_URL_MAX 414, an unknown path
 * 404. With a token, every request but for a built-in file (which holds no
 * data of the daemon) must carry "Authorization: Bearer TOKEN" (else 401).
 * An operator route acts only when a token is set and the request carries
 * it, else 403: a header, never a cookie, so a page of another site cannot
 * make a browser act (a cross-site form cannot set it).
 */
#ifndef VTL_COMMON_HTTP_H
#define VTL_COMMON_HTTP_H

#include <stdbool.h>
#include <stddef.h>

#include "common/outbuf.h"

#define HTTP_CONNECTIONS_DEFAULT 16  /* connections at once, from everywhere (a thread each) */
#define HTTP_PER_ADDRESS_DEFAULT 8   /* ... from one address */
#define HTTP_TIMEOUT_DEFAULT 10      /* seconds a connection may stay idle */
#define HTTP_URL_MAX 256             /* bytes of a request target (path and query): longer is 414 */
#define HTTP_HEADERS_MAX (16u << 10) /* bytes of a request line and its headers a connection may hold */
#define HTTP_REPLY_MAX (16u << 20)   /* bytes of one reply built in memory */
#define HTTP_TOKEN_MIN 16            /* a bearer token: long enough not to be guessed over the network */
#define HTTP_TOKEN_MAX 128
#define HTTP_LISTEN_MAX 64           /* "host:port" or "[v6]:port", with its NUL */
#define HTTP_BODY_MAX 1024u          /* bytes of an operator route's request body: longer is 413 */

/* The statuses a handler sets itself (RFC 9110, section 15); the others are common/http.c's own. */
#define HTTP_STATUS_OK 200            /* 15.3.1 */
#define HTTP_STATUS_BAD_REQUEST 400   /* 15.5.1: a query argument that is not what the page takes */
#define HTTP_STATUS_NOT_FOUND 404     /* 15.5.5: the thing a path names does not exist */
#define HTTP_STATUS_CONFLICT 409      /* 15.5.10: the daemon refused the action in the state it is in */
#define HTTP_STATUS_SERVER_ERROR 500  /* 15.6.1: what the page is made from failed */
#define HTTP_STATUS_UNAVAILABLE 503   /* 15.6.4: the daemon the page comes from does not answer */

/* What a handler fills: the body, its status (200 unless set) and content type. */
struct http_reply {
	struct outbuf body;
	unsigned status;
	const char *type; /* a static string */
	void *conn;       /* the request's connection, for http_arg */
	const char *path; /* the request's path (a prefix route's handler reads what follows the prefix) */
	const char *request; /* an operator route's request body (len bytes, NUL-terminated), else NULL */
	size_t request_len;
};

/* The value of the request's query argument key ("" for "?key"), or NULL when it has none. */
const char *http_arg(const struct http_reply *r, const char *key);

/* Builds the reply to a GET of the route's path; may run on several connections' threads at once. */
typedef void (*http_handler)(void *arg, struct http_reply *r);

/* A route: a handler, or (fn NULL) a built-in static file of len bytes. */
struct http_route {
	const char *path; /* exact: "/metrics"; with prefix, every path that begins so ("/api/cartridges/") */
	http_handler fn;
	const char *type; /* the static file's content type */
	const void *data;
	size_t len;
	bool prefix;
	bool operator; /* POST only, with its body in the reply's request, and only with the token */
};

struct http_config {
	const char *listen;       /* "127.0.0.1:9110", "[::1]:9110"; port 0: any free one (http_port) */
	const char *token;        /* NULL or "": none */
	unsigned connections;     /* 0: HTTP_CONNECTIONS_DEFAULT */
	unsigned per_address;     /* 0: HTTP_PER_ADDRESS_DEFAULT */
	unsigned timeout;         /* seconds; 0: HTTP_TIMEOUT_DEFAULT */
	const struct http_route *routes;
	unsigned nroutes;
	void *arg;                /* for the handlers */
	const char *daemon;       /* for log lines ("vtld") */
};

struct http_server;

/*
 * Parses "host:port" (an IPv4 address, or an IPv6 one in brackets; port
 * 0..65535) into a numeric host (cap bytes) and port. VTL_OK, or VTL_E_INVAL
 * with err saying what is wrong.
 */
int http_listen_parse(const char *listen, char *host, size_t cap, unsigned *port, char *err, size_t errlen);

/* Whether the host part of a listen address is a loopback address (127.0.0.0/8, ::1). */
bool http_listen_loopback(const char *listen);

/* Listens on c->listen and serves c->routes from a thread; err says why not (VTL_E_CONFIG, VTL_E_IO). */
int http_start(const struct http_config *c, struct http_server **out, char *err, size_t errlen);

/* The TCP port listened on. */
unsigned http_port(const struct http_server *s);

/* Stops serving (closing every connection) and frees s (NULL is fine). */
void http_stop(struct http_server *s);

#endif
