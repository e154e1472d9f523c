/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The daemons' HTTP endpoint (common/http.h), over real loopback sockets:
 * what a client gets for a route, a static file, another method, a body, a
 * long target, an unknown page, a missing or wrong token; an operator
 * route's POST (only with a token set and carried, its body bounded); the
 * security headers on every reply; and the limits a
 * client cannot pass (connections in all and from one address, idle time);
 * the listen addresses it takes and the non-loopback one it refuses; and a
 * handler that waits holds only its own client.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/http.h"
#include "common/vtl_error.h"

#define REPLY_MAX 65536
#define WAIT_MS 3000  /* the most a reply may take on loopback */
#define TOKEN "0123456789abcdef0123"

static void hello(void *arg, struct http_reply *r)
{
	(void)arg;
	r->type = "text/plain";
	outbuf_printf(&r->body, "hello\n");
}

/* An operator route: echoes the body it was given. */
static void echo(void *arg, struct http_reply *r)
{
	(void)arg;
	outbuf_printf(&r->body, "got %zu bytes: %s", r->request_len, r->request);
}

/* A prefix route: says what followed its prefix. */
static void tail(void *arg, struct http_reply *r)
{
	(void)arg;
	outbuf_printf(&r->body, "tail=%s", r->path + strlen("/things/"));
}

/*
 * A handler that waits (as one asking a slow daemon does) until the test
 * writes to slow_gate, or SLOW_MAX_MS at most so that a broken server
 * cannot hang the test.
 */
#define SLOW_MAX_MS 10000
static int slow_gate[2] = {-1, -1};
static atomic_int slow_running;

static void slow(void *arg, struct http_reply *r)
{
	(void)arg;
	atomic_store(&slow_running, 1);
	struct pollfd p = {.fd = slow_gate[0], .events = POLLIN};
	int n = poll(&p, 1, SLOW_MAX_MS);
	outbuf_printf(&r->body, n == 1 ? "slow done\n" : "slow timed out\n");
}

static const char page[] = "<p>static</p>";
static const struct http_route routes[] = {
	{.path = "/hello", .fn = hello},
	{.path = "/page.html", .type = "text/html", .data = page, .len = sizeof page - 1},
	{.path = "/act", .fn = echo, .operator = true},
	{.path = "/things/", .fn = tail, .prefix = true},
	{.path = "/slow", .fn = slow},
};

static struct http_server *start(const char *token, unsigned conns, unsigned per, unsigned timeout)
{
	struct http_config c = {.listen = "127.0.0.1:0", .token = token, .connections = conns, .per_address = per,
				.timeout = timeout, .routes = routes, .nroutes = sizeof routes / sizeof routes[0], .daemon = "test"};
	struct http_server *s = NULL;
	char err[256] = "";
	int rc = http_start(&c, &s, err, sizeof err);
	if (rc != VTL_OK)
		fail_msg("http_start: %s", err);
	assert_true(http_port(s) > 0);
	return s;
}

static int connect_to(struct http_server *s)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(fd >= 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)http_port(s))};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
	return fd;
}

/* Reads what the server sends until it closes or WAIT_MS pass; the bytes read (NUL-terminated in buf). */
static size_t read_all(int fd, char *buf, size_t cap)
{
	size_t n = 0;
	for (;;) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		if (poll(&p, 1, WAIT_MS) <= 0)
			break;
		ssize_t r = read(fd, buf + n, cap - 1 - n);
		if (r <= 0)
			break;
		n += (size_t)r;
		if (n == cap - 1)
			break;
	}
	buf[n] = 0;
	return n;
}

/* Sends request whole on a new connection and returns the reply (static buffer). */
static const char *ask(struct http_server *s, const char *request)
{
	static char reply[REPLY_MAX];
	int fd = connect_to(s);
	size_t len = strlen(request);
	assert_int_equal(write(fd, request, len), (ssize_t)len);
	read_all(fd, reply, sizeof reply);
	close(fd);
	return reply;
}

/* The status code of a reply ("HTTP/1.1 200 OK" -> 200), 0 for none. */
static int code_of(const char *reply)
{
	int code = 0;
	return sscanf(reply, "HTTP/1.%*c %d", &code) == 1 ? code : 0;
}

static void routes_and_static_files(void **state)
{
	(void)state;
	struct http_server *s = start(NULL, 0, 0, 0);
	const char *r = ask(s, "GET /hello HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
	assert_int_equal(code_of(r), 200);
	assert_non_null(strstr(r, "Content-Type: text/plain"));
	assert_non_null(strstr(r, "\r\n\r\nhello\n"));
	r = ask(s, "GET /page.html HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
	assert_int_equal(code_of(r), 200);
	assert_non_null(strstr(r, "Content-Type: text/html"));
	assert_non_null(strstr(r, "<p>static</p>"));
	r = ask(s, "HEAD /hello HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
	assert_int_equal(code_of(r), 200);
	assert_null(strstr(r, "hello\n"));
	r = ask(s, "GET /nothing HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
	assert_int_equal(code_of(r), 404);
	http_stop(s);
}

static void only_get_without_a_body(void **state)
{
	(void)state;
	struct http_server *s = start(NULL, 0, 0, 0);
	const char *r = ask(s, "POST /hello HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
	assert_int_equal(code_of(r), 405);
	assert_non_null(strstr(r, "Allow: GET, HEAD"));
	r = ask(s, "DELETE /hello HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
	assert_int_equal(code_of(r), 405);
	r = ask(s, "GET /hello HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello");
	assert_int_equal(code_of(r), 413);
	r = ask(s, "GET /hello HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
		   "5\r\nhello\r\n0\r\n\r\n");
	assert_int_equal(code_of(r), 413);
	http_stop(s);
}

/* A target one byte over HTTP_URL_MAX is 414; one far over the header memory is refused too (414 or 431). */
static void long_targets_refused(void **state)
{
	(void)state;
	struct http_server *s = start(NULL, 0, 0, 0);
	static char req[3 * HTTP_HEADERS_MAX];
	char path[HTTP_URL_MAX + 2];
	memset(path, 'a', sizeof path - 1);
	path[0] = '/';
	path[sizeof path - 1] = 0;
	snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", path);
	assert_int_equal(code_of(ask(s, req)), 414);
	snprintf(req, sizeof req, "GET /hello?q=%s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", path + 1);
	assert_int_equal(code_of(ask(s, req)), 414);
	/* Exactly HTTP_URL_MAX is served (as a 404: no such page). */
	path[HTTP_URL_MAX] = 0;
	snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", path);
	assert_int_equal(code_of(ask(s, req)), 404);
	size_t at = (size_t)snprintf(req, sizeof req, "GET /");
	memset(req + at, 'b', 2 * HTTP_HEADERS_MAX);
	snprintf(req + at + 2 * HTTP_HEADERS_MAX, sizeof req - at - 2 * HTTP_HEADERS_MAX,
		 " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
	int code = code_of(ask(s, req));
	assert_true(code == 414 || code == 431);
	http_stop(s);
}

static void token_required(void **state)
{
	(void)state;
	struct http_server *s = start(TOKEN, 0, 0, 0);
	const char *r = ask(s, "GET /hello HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
	assert_int_equal(code_of(r), 401);
	assert_non_null(strstr(r, "WWW-Authenticate: Bearer"));
	r = ask(s, "GET /hello HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " TOKEN "x\r\nConnection: close\r\n\r\n");
	assert_int_equal(code_of(r), 401);
	r = ask(s, "GET /hello HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer 0123456789abcdef012\r\nConnection: close\r\n\r\n");
	assert_int_equal(code_of(r), 401);
	r = ask(s, "GET /hello HTTP/1.1\r\nHost: x\r\nAuthorization: Basic " TOKEN "\r\nConnection: close\r\n\r\n");
	assert_int_equal(code_of(r), 401);
	r = ask(s, "GET /hello HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " TOKEN "\r\nConnection: close\r\n\r\n");
	assert_int_equal(code_of(r), 200);
	/* A built-in file holds no data of the daemon: served without the token (the console's page asks for it). */
	r = ask(s, "GET /page.html HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
	assert_int_equal(code_of(r), 200);
	/* An unknown page says nothing without the token either. */
	r = ask(s, "GET /nothing HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
	assert_int_equal(code_of(r), 401);
	http_stop(s);
}

static void security_headers_and_prefix_routes(void **state)
{
	(void)state;
	struct http_server *s = start(NULL, 0, 0, 0);
	const char *r = ask(s, "GET /page.html HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
	assert_non_null(strstr(r, "Content-Security-Policy: default-src 'self'"));
	assert_non_null(strstr(r, "X-Content-Type-Options: nosniff"));
	r = ask(s, "GET /things/C00001L8 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
	assert_int_equal(code_of(r), 200);
	assert_non_null(strstr(r, "\r\n\r\ntail=C00001L8"));
	assert_non_null(strstr(r, "Content-Security-Policy: default-src 'self'"));
	r = ask(s, "GET /things HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
	assert_int_equal(code_of(r), 404);
	http_stop(s);
}

#define POST_ACT(headers, body)                                                                                   \
	"POST /act HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/x-www-form-urlencoded\r\n" \
	headers "Content-Length: " #body "\r\n\r\n"

static void operator_routes_need_the_token(void **state)
{
	(void)state;
	static char req[4096];
	/* No token configured: an operator route never acts. */
	struct http_server *s = start(NULL, 0, 0, 0);
	snprintf(req, sizeof req, POST_ACT("", 5) "a=b&c");
	const char *r = ask(s, req);
	assert_int_equal(code_of(r), 403);
	assert_non_null(strstr(r, "Content-Type: application/json"));
	assert_non_null(strstr(r, "{\"ok\":false,\"error\":\"operator actions are off: set [daemon] http_token"));
	http_stop(s);

	s = start(TOKEN, 0, 0, 0);
	snprintf(req, sizeof req, POST_ACT("", 5) "a=b&c");
	r = ask(s, req);
	assert_int_equal(code_of(r), 403);
	assert_non_null(strstr(r, "give the token: Authorization: Bearer TOKEN"));
	snprintf(req, sizeof req, POST_ACT("Authorization: Bearer " TOKEN "x\r\n", 5) "a=b&c");
	assert_int_equal(code_of(ask(s, req)), 403);
	/* A cookie is no token: a cross-site form can send cookies, never this header. */
	snprintf(req, sizeof req, POST_ACT("Cookie: token=" TOKEN "\r\n", 5) "a=b&c");
	assert_int_equal(code_of(ask(s, req)), 403);
	snprintf(req, sizeof req, POST_ACT("Authorization: Bearer " TOKEN "\r\n", 5) "a=b&c");
	r = ask(s, req);
	assert_int_equal(code_of(r), 200);
	assert_non_null(strstr(r, "\r\n\r\ngot 5 bytes: a=b&c"));
	/* A GET of it is 405 (Allow: POST); a POST elsewhere is 405 too. */
	r = ask(s, "GET /act HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " TOKEN "\r\nConnection: close\r\n\r\n");
	assert_int_equal(code_of(r), 405);
	assert_non_null(strstr(r, "Allow: POST"));
	http_stop(s);
}

static void operator_bodies_bounded(void **state)
{
	(void)state;
	struct http_server *s = start(TOKEN, 0, 0, 0);
	static char req[8192], body[HTTP_BODY_MAX + 2];
	/* Exactly HTTP_BODY_MAX is taken whole. */
	memset(body, 'x', HTTP_BODY_MAX);
	body[HTTP_BODY_MAX] = 0;
	snprintf(req, sizeof req, "POST /act HTTP/1.1\r\nHost: x\r\nConnection: close\r\nAuthorization: Bearer " TOKEN
		 "\r\nContent-Length: %u\r\n\r\n%s", HTTP_BODY_MAX, body);
	const char *r = ask(s, req);
	assert_int_equal(code_of(r), 200);
	assert_non_null(strstr(r, "got 1024 bytes: xxx"));
	/* One byte more, said in Content-Length: 413 before it is read. */
	body[HTTP_BODY_MAX] = 'x';
	body[HTTP_BODY_MAX + 1] = 0;
	snprintf(req, sizeof req, "POST /act HTTP/1.1\r\nHost: x\r\nConnection: close\r\nAuthorization: Bearer " TOKEN
		 "\r\nContent-Length: %u\r\n\r\n%s", HTTP_BODY_MAX + 1, body);
	r = ask(s, req);
	assert_int_equal(code_of(r), 413);
	assert_non_null(strstr(r, "longer than 1024 bytes"));
	/* Or chunked, where the length is known only as it comes: 413 as well. */
	snprintf(req, sizeof req, "POST /act HTTP/1.1\r\nHost: x\r\nConnection: close\r\nAuthorization: Bearer " TOKEN
		 "\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n0\r\n\r\n", HTTP_BODY_MAX + 1, body);
	assert_int_equal(code_of(ask(s, req)), 413);
	http_stop(s);
}

/* Whether the server closes fd without an answer within WAIT_MS (what a connection over a limit gets). */
static bool closed_unanswered(int fd)
{
	char buf[256];
	return read_all(fd, buf, sizeof buf) == 0;
}

/* Whether a request on fd (open already) is answered 200. */
static bool served(int fd)
{
	static const char req[] = "GET /hello HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
	if (write(fd, req, sizeof req - 1) != (ssize_t)(sizeof req - 1))
		return false;
	char buf[1024];
	read_all(fd, buf, sizeof buf);
	return code_of(buf) == 200;
}

static void connection_limits(void **state)
{
	(void)state;
	/* Two at once in all: a third is closed unanswered; once one goes, a new one is served. */
	struct http_server *s = start(NULL, 2, 2, 0);
	int a = connect_to(s), b = connect_to(s);
	int c = connect_to(s);
	assert_true(closed_unanswered(c));
	close(c);
	close(a);
	struct timespec pause = {0, 200000000};
	nanosleep(&pause, NULL); /* the server sees the close on its next poll */
	int d = connect_to(s);
	assert_true(served(d));
	close(d);
	assert_true(served(b));
	close(b);
	http_stop(s);
	/* One from an address: a second from 127.0.0.1 is closed although the total allows 8. */
	s = start(NULL, 8, 1, 0);
	a = connect_to(s);
	b = connect_to(s);
	assert_true(closed_unanswered(b));
	close(b);
	assert_true(served(a));
	close(a);
	http_stop(s);
}

/* A client that connects and sends nothing is closed after the idle timeout, never held. */
static void idle_connections_closed(void **state)
{
	(void)state;
	struct http_server *s = start(NULL, 0, 0, 1);
	int fd = connect_to(s);
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_true(closed_unanswered(fd));
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double s_waited = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	assert_true(s_waited < 2.9); /* closed by the 1 s timeout, not by read_all giving up after WAIT_MS */
	close(fd);
	http_stop(s);
}

static void listen_addresses(void **state)
{
	(void)state;
	char host[HTTP_LISTEN_MAX], err[256];
	unsigned port;
	assert_int_equal(http_listen_parse("127.0.0.1:9110", host, sizeof host, &port, err, sizeof err), VTL_OK);
	assert_string_equal(host, "127.0.0.1");
	assert_int_equal(port, 9110);
	assert_int_equal(http_listen_parse("[::1]:0", host, sizeof host, &port, err, sizeof err), VTL_OK);
	assert_string_equal(host, "::1");
	assert_int_equal(port, 0);
	static const char *const bad[] = {"localhost:9110", "127.0.0.1", ":9110", "127.0.0.1:70000", "127.0.0.1:x",
					  "::1:9110", "[::1]9110", "[127.0.0.1]:80", "127.0.0.1:-1", "127.0.0.1:"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		assert_int_equal(http_listen_parse(bad[i], host, sizeof host, &port, err, sizeof err), VTL_E_INVAL);
	assert_true(http_listen_loopback("127.0.0.1:1"));
	assert_true(http_listen_loopback("127.1.2.3:1"));
	assert_true(http_listen_loopback("[::1]:1"));
	assert_false(http_listen_loopback("0.0.0.0:1"));
	assert_false(http_listen_loopback("[::]:1"));
	assert_false(http_listen_loopback("10.0.0.1:1"));
}

/* Another address than loopback only with a token, and a token long enough. */
static void exposure_needs_a_token(void **state)
{
	(void)state;
	struct http_config c = {.listen = "0.0.0.0:0", .routes = routes, .nroutes = 2};
	struct http_server *s = NULL;
	char err[256] = "";
	assert_int_equal(http_start(&c, &s, err, sizeof err), VTL_E_CONFIG);
	assert_non_null(strstr(err, "not a loopback address: set http_token"));
	c.token = "short";
	assert_int_equal(http_start(&c, &s, err, sizeof err), VTL_E_CONFIG);
	assert_non_null(strstr(err, "16 to 128 characters"));
	c.token = TOKEN;
	assert_int_equal(http_start(&c, &s, err, sizeof err), VTL_OK);
	assert_true(http_port(s) > 0);
	http_stop(s);
}

/* While one client's handler waits, another client is served; the waiting one gets its reply after. */
static void a_waiting_handler_holds_only_its_client(void **state)
{
	(void)state;
	assert_int_equal(pipe(slow_gate), 0);
	atomic_store(&slow_running, 0);
	struct http_server *s = start(NULL, 0, 0, 0);
	int a = connect_to(s);
	static const char req[] = "GET /slow HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
	assert_int_equal(write(a, req, sizeof req - 1), (ssize_t)(sizeof req - 1));
	for (int i = 0; i < WAIT_MS / 10 && !atomic_load(&slow_running); i++) {
		struct timespec pause = {0, 10000000};
		nanosleep(&pause, NULL);
	}
	assert_true(atomic_load(&slow_running));
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	const char *reply = ask(s, "GET /hello HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
	clock_gettime(CLOCK_MONOTONIC, &t1);
	assert_int_equal(code_of(reply), 200);
	assert_non_null(strstr(reply, "hello"));
	/* Answered while /slow still waits (it waits for the gate, which is still shut). */
	assert_true((t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000 < SLOW_MAX_MS);
	struct pollfd p = {.fd = a, .events = POLLIN};
	assert_int_equal(poll(&p, 1, 0), 0);
	assert_int_equal(write(slow_gate[1], "x", 1), 1);
	char buf[1024];
	read_all(a, buf, sizeof buf);
	assert_int_equal(code_of(buf), 200);
	assert_non_null(strstr(buf, "slow done"));
	close(a);
	http_stop(s);
	close(slow_gate[0]);
	close(slow_gate[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(routes_and_static_files), cmocka_unit_test(only_get_without_a_body),
		cmocka_unit_test(long_targets_refused),    cmocka_unit_test(token_required),
		cmocka_unit_test(connection_limits),       cmocka_unit_test(idle_connections_closed),
		cmocka_unit_test(listen_addresses),        cmocka_unit_test(exposure_needs_a_token),
		cmocka_unit_test(security_headers_and_prefix_routes), cmocka_unit_test(operator_routes_need_the_token),
		cmocka_unit_test(operator_bodies_bounded), cmocka_unit_test(a_waiting_handler_holds_only_its_client),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
