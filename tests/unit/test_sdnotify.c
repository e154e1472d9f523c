/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests of the service manager notifications (common/sdnotify): what a
 * socket bound where $NOTIFY_SOCKET says receives, for a path and for an
 * abstract name; nothing at all without the variable; and refusals of a
 * relative name, a name too long for sockaddr_un, a message too long and a
 * socket nobody listens on, as values, the process going on.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/sdnotify.h"
#include "tests/unit/testlib.h"

struct listener {
	char dir[64];
	char path[96];
	int fd;
};

/* A datagram socket bound at a path in a fresh temporary folder, named by NOTIFY_SOCKET. */
static void listen_path(struct listener *l)
{
	snprintf(l->dir, sizeof l->dir, "/tmp/test_sdnotify.XXXXXX");
	assert_non_null(mkdtemp(l->dir));
	snprintf(l->path, sizeof l->path, "%s/notify", l->dir);
	l->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	assert_true(l->fd >= 0);
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	snprintf(sa.sun_path, sizeof sa.sun_path, "%s", l->path);
	assert_int_equal(bind(l->fd, (struct sockaddr *)&sa, sizeof sa), 0);
	assert_int_equal(setenv("NOTIFY_SOCKET", l->path, 1), 0);
}

static void close_listener(struct listener *l)
{
	close(l->fd);
	if (l->dir[0]) {
		unlink(l->path);
		rmdir(l->dir);
	}
	unsetenv("NOTIFY_SOCKET");
}

/* The next datagram, or "" when none is waiting. */
static void receive(int fd, char *buf, size_t cap)
{
	ssize_t n = recv(fd, buf, cap - 1, MSG_DONTWAIT);
	if (n < 0) {
		assert_true(errno == EAGAIN || errno == EWOULDBLOCK);
		n = 0;
	}
	buf[n] = 0;
}

static void path_socket_gets_the_states(void **state)
{
	(void)state;
	struct listener l;
	listen_path(&l);
	char got[SDNOTIFY_MAX_BYTES + 2];
	EXPECT_RC(sdnotify_ready("library L1 serving 3 logical units"), VTL_OK);
	receive(l.fd, got, sizeof got);
	assert_string_equal(got, "READY=1\nSTATUS=library L1 serving 3 logical units");
	EXPECT_RC(sdnotify_stopping("signal 15: stopping"), VTL_OK);
	receive(l.fd, got, sizeof got);
	assert_string_equal(got, "STOPPING=1\nSTATUS=signal 15: stopping");
	EXPECT_RC(sdnotify_reloading(), VTL_OK);
	receive(l.fd, got, sizeof got);
	unsigned long long usec = 0;
	char tail = 0;
	assert_int_equal(sscanf(got, "RELOADING=1\nMONOTONIC_USEC=%llu%c", &usec, &tail), 1);
	assert_true(usec > 0);
	EXPECT_RC(sdnotify_send("WATCHDOG=1"), VTL_OK);
	receive(l.fd, got, sizeof got);
	assert_string_equal(got, "WATCHDOG=1");
	close_listener(&l);
}

static void abstract_name_gets_the_states(void **state)
{
	(void)state;
	char name[64];
	snprintf(name, sizeof name, "@vtl-test-sdnotify-%ld", (long)getpid());
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	assert_true(fd >= 0);
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	size_t n = strlen(name);
	memcpy(sa.sun_path, name, n);
	sa.sun_path[0] = 0;
	/* The name's length, not a NUL, ends an abstract name: bound with exactly its bytes. */
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n)), 0);
	assert_int_equal(setenv("NOTIFY_SOCKET", name, 1), 0);
	EXPECT_RC(sdnotify_ready("up"), VTL_OK);
	char got[64];
	receive(fd, got, sizeof got);
	assert_string_equal(got, "READY=1\nSTATUS=up");
	close(fd);
	unsetenv("NOTIFY_SOCKET");
}

static void unset_sends_nothing(void **state)
{
	(void)state;
	struct listener l;
	listen_path(&l);
	unsetenv("NOTIFY_SOCKET");
	EXPECT_RC(sdnotify_ready("up"), VTL_OK);
	EXPECT_RC(sdnotify_stopping("down"), VTL_OK);
	EXPECT_RC(sdnotify_reloading(), VTL_OK);
	assert_int_equal(setenv("NOTIFY_SOCKET", "", 1), 0);
	EXPECT_RC(sdnotify_ready("up"), VTL_OK);
	char got[64];
	receive(l.fd, got, sizeof got);
	assert_string_equal(got, "");
	close_listener(&l);
}

static void bad_names_and_sizes_are_refused(void **state)
{
	(void)state;
	assert_int_equal(setenv("NOTIFY_SOCKET", "run/notify", 1), 0);
	EXPECT_RC(sdnotify_ready("up"), VTL_E_INVAL);
	char longname[sizeof(((struct sockaddr_un *)0)->sun_path) + 8];
	memset(longname, 'a', sizeof longname - 1);
	longname[0] = '/';
	longname[sizeof longname - 1] = 0;
	assert_int_equal(setenv("NOTIFY_SOCKET", longname, 1), 0);
	EXPECT_RC(sdnotify_ready("up"), VTL_E_INVAL);

	struct listener l;
	listen_path(&l);
	static char big[SDNOTIFY_MAX_BYTES + 2];
	memset(big, 'x', sizeof big - 1);
	EXPECT_RC(sdnotify_send(big), VTL_E_INVAL);
	EXPECT_RC(sdnotify_ready(big), VTL_E_INVAL);
	char got[64];
	receive(l.fd, got, sizeof got);
	assert_string_equal(got, "");
	/* The socket's owner is gone: the send fails as a value. */
	close(l.fd);
	unlink(l.path);
	EXPECT_RC(sdnotify_ready("up"), VTL_E_IO);
	l.fd = -1;
	close_listener(&l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(path_socket_gets_the_states),
		cmocka_unit_test(abstract_name_gets_the_states),
		cmocka_unit_test(unset_sends_nothing),
		cmocka_unit_test(bad_names_and_sizes_are_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
