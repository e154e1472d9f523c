/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests of the daemons' control socket (common/ctlsock): the socket is
 * 0600 (0660 of the control group) and its new folder 0700 (0750) whatever
 * the umask; a folder others could write into is refused with a message
 * that says what to change; a client that sends nothing neither delays
 * another nor stays past the deadline; one client too many is told "busy";
 * an over-long request, or one holding a NUL, gets an error line; and,
 * when the tests run as root, a peer that is neither root, the daemon's
 * user nor a member of the group is refused even when the file's mode lets
 * it connect.
 */
#include <errno.h>
#include <grp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/ctlsock.h"
#include "common/vtl_error.h"
#include "tests/unit/testlib.h"

#define DEADLINE_MS 300   /* short, so that the test waits little for it */
#define NOBODY 65534      /* the overflow uid/gid of Linux: a user that is surely not the test's */
#define OTHER_GROUP 37    /* "operator" in Debian's base-passwd: nobody is not a member */

struct sockfx {
	char dir[64];       /* the temporary folder */
	char sock_dir[96];  /* the socket's folder inside it */
	char path[128];
	struct ctlsock *s;
};

static void echo(void *arg, const char *request, char *out, size_t cap)
{
	(void)arg;
	snprintf(out, cap, "{\"ok\":true,\"message\":\"got %s\"}", request);
}

static int setup(void **state)
{
	struct sockfx *f = calloc(1, sizeof *f);
	snprintf(f->dir, sizeof f->dir, "/tmp/test_ctlsock.XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	snprintf(f->sock_dir, sizeof f->sock_dir, "%s/run", f->dir);
	snprintf(f->path, sizeof f->path, "%s/d.sock", f->sock_dir);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct sockfx *f = *state;
	ctlsock_stop(f->s);
	unlink(f->path);
	rmdir(f->sock_dir);
	rmdir(f->dir);
	free(f);
	return 0;
}

static int start(struct sockfx *f, const char *group, gid_t gid, unsigned clients_max, char *err, size_t errlen)
{
	struct ctlsock_config c = {.path = f->path, .group = group, .gid = gid, .daemon = "testd", .handler = echo,
				   .deadline_ms = DEADLINE_MS, .clients_max = clients_max};
	return ctlsock_start(&c, &f->s, err, errlen);
}

static unsigned mode_of(const char *path, gid_t *gid)
{
	struct stat st;
	assert_int_equal(lstat(path, &st), 0);
	if (gid)
		*gid = st.st_gid;
	return st.st_mode & 07777;
}

static int connect_idle(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	snprintf(sa.sun_path, sizeof sa.sun_path, "%s", path);
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_true(fd >= 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof sa), 0);
	return fd;
}

static uint64_t ms_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void modes_ignore_the_umask(void **state)
{
	struct sockfx *f = *state;
	char err[512] = "";
	mode_t old = umask(0);
	int rc = start(f, NULL, 0, 0, err, sizeof err);
	umask(old);
	if (rc)
		fail_msg("start: %s", err);
	assert_int_equal(mode_of(f->sock_dir, NULL), 0700);
	assert_int_equal(mode_of(f->path, NULL), 0600);
	char ans[256];
	assert_int_equal(ctlsock_exchange(f->path, "status", ans, sizeof ans, 2000), 0);
	assert_string_equal(ans, "{\"ok\":true,\"message\":\"got status\"}");
}

static void group_modes(void **state)
{
	struct sockfx *f = *state;
	char err[512] = "";
	gid_t gid = getegid() == 0 ? OTHER_GROUP : getegid(); /* root may give any group; others only their own */
	mode_t old = umask(0);
	int rc = start(f, "ops", gid, 0, err, sizeof err);
	umask(old);
	if (rc)
		fail_msg("start: %s", err);
	gid_t g;
	assert_int_equal(mode_of(f->sock_dir, &g), 0750);
	assert_int_equal(g, gid);
	assert_int_equal(mode_of(f->path, &g), 0660);
	assert_int_equal(g, gid);
}

/* The folder's mode is set to m, and starting is refused with a message that contains want. */
static void expect_refused_folder(struct sockfx *f, unsigned m, const char *group, const char *want)
{
	assert_int_equal(mkdir(f->sock_dir, 0700), 0);
	assert_int_equal(chmod(f->sock_dir, m), 0);
	char err[512] = "";
	EXPECT_RC(start(f, group, getegid(), 0, err, sizeof err), VTL_E_CONFIG);
	if (!strstr(err, want))
		fail_msg("message \"%s\" does not contain \"%s\"", err, want);
	assert_null(f->s);
	assert_int_equal(access(f->path, F_OK), -1);
	assert_int_equal(rmdir(f->sock_dir), 0);
}

static void writable_folders_refused(void **state)
{
	struct sockfx *f = *state;
	char want[256];
	snprintf(want, sizeof want, "testd's control socket folder %s (mode 0777) is writable by every user", f->sock_dir);
	expect_refused_folder(f, 0777, NULL, want);
	expect_refused_folder(f, 01777, NULL, "(mode 1777) is writable by every user");
	snprintf(want, sizeof want, "(mode 0770) is writable by group %u: its members could replace the socket",
		 (unsigned)getegid());
	expect_refused_folder(f, 0770, NULL, want);
	expect_refused_folder(f, 0770, NULL, "chmod g-w,o-w");
	/* With a control group, its own members may write into the folder. */
	assert_int_equal(mkdir(f->sock_dir, 0700), 0);
	assert_int_equal(chmod(f->sock_dir, 0770), 0);
	char err[512] = "";
	if (start(f, "ops", getegid(), 0, err, sizeof err))
		fail_msg("start with the folder writable by the control group: %s", err);
}

static void foreign_folder_refused(void **state)
{
	struct sockfx *f = *state;
	if (geteuid() != 0)
		skip();
	assert_int_equal(mkdir(f->sock_dir, 0755), 0);
	assert_int_equal(chown(f->sock_dir, NOBODY, NOBODY), 0);
	char err[512] = "";
	EXPECT_RC(start(f, NULL, 0, 0, err, sizeof err), VTL_E_CONFIG);
	if (!strstr(err, "belongs to uid 65534: that user could replace the socket"))
		fail_msg("message: %s", err);
}

static void idle_client_does_not_block(void **state)
{
	struct sockfx *f = *state;
	char err[512] = "";
	if (start(f, NULL, 0, 0, err, sizeof err))
		fail_msg("start: %s", err);
	int idle = connect_idle(f->path);
	assert_int_equal(write(idle, "sta", 3), 3); /* half a request, then nothing */
	uint64_t t0 = ms_now();
	char ans[256];
	assert_int_equal(ctlsock_exchange(f->path, "other", ans, sizeof ans, 2000), 0);
	assert_string_equal(ans, "{\"ok\":true,\"message\":\"got other\"}");
	assert_true(ms_now() - t0 < DEADLINE_MS / 2);
	/* The idle one is closed by the deadline, without an answer. */
	char buf[64];
	struct pollfd p = {idle, POLLIN, 0};
	assert_int_equal(poll(&p, 1, DEADLINE_MS * 5), 1);
	assert_int_equal(read(idle, buf, sizeof buf), 0);
	uint64_t took = ms_now() - t0;
	assert_true(took >= DEADLINE_MS - 50 && took < DEADLINE_MS * 3);
	close(idle);
}

static void one_too_many_is_busy(void **state)
{
	struct sockfx *f = *state;
	char err[512] = "";
	if (start(f, NULL, 0, 2, err, sizeof err))
		fail_msg("start: %s", err);
	int a = connect_idle(f->path), b = connect_idle(f->path);
	char ans[256];
	assert_int_equal(ctlsock_exchange(f->path, "status", ans, sizeof ans, 2000), 0);
	assert_string_equal(ans, "{\"ok\":false,\"error\":\"busy: testd serves 2 control clients already; try again\"}");
	/* A slot frees as soon as a client is answered. */
	assert_int_equal(write(a, "x\n", 2), 2);
	assert_true(ctlsock_read_line(a, ans, sizeof ans, 2000) > 0);
	assert_string_equal(ans, "{\"ok\":true,\"message\":\"got x\"}");
	close(a);
	assert_int_equal(ctlsock_exchange(f->path, "y", ans, sizeof ans, 2000), 0);
	assert_string_equal(ans, "{\"ok\":true,\"message\":\"got y\"}");
	close(b);
}

static void long_request_refused(void **state)
{
	struct sockfx *f = *state;
	char err[512] = "";
	if (start(f, NULL, 0, 0, err, sizeof err))
		fail_msg("start: %s", err);
	int fd = connect_idle(f->path);
	char big[CTLSOCK_REQUEST_MAX + 100];
	memset(big, 'a', sizeof big);
	assert_int_equal(write(fd, big, sizeof big), (ssize_t)sizeof big);
	char ans[256];
	assert_true(ctlsock_read_line(fd, ans, sizeof ans, 2000) > 0);
	assert_string_equal(ans, "{\"ok\":false,\"error\":\"request longer than 1023 bytes\"}");
	close(fd);
	/* A request ended by the client's shutdown instead of a newline is answered too. */
	fd = connect_idle(f->path);
	assert_int_equal(write(fd, "half", 4), 4);
	assert_int_equal(shutdown(fd, SHUT_WR), 0);
	assert_true(ctlsock_read_line(fd, ans, sizeof ans, 2000) > 0);
	assert_string_equal(ans, "{\"ok\":true,\"message\":\"got half\"}");
	close(fd);
}

/* A NUL inside a request would cut it short for the handler: the whole request is refused instead. */
static void request_with_nul_refused(void **state)
{
	struct sockfx *f = *state;
	char err[512] = "";
	if (start(f, NULL, 0, 0, err, sizeof err))
		fail_msg("start: %s", err);
	int fd = connect_idle(f->path);
	assert_int_equal(write(fd, "status\0move 1 2\n", 16), 16);
	char ans[256];
	assert_true(ctlsock_read_line(fd, ans, sizeof ans, 2000) > 0);
	assert_string_equal(ans, "{\"ok\":false,\"error\":\"byte 6 of the request is NUL\"}");
	close(fd);
}

/*
 * As uid and gid nobody with extra_group among its process groups (which the
 * group database does not give nobody), sends "status": the answer line, or
 * "EACCES" when the file system refuses the connection.
 */
static void as_nobody(const char *path, gid_t primary, gid_t extra_group, char *ans, size_t cap)
{
	int pfd[2];
	assert_int_equal(pipe(pfd), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(pfd[0]);
		char out[512] = "";
		if (setgroups(1, &extra_group) != 0 || setresgid(primary, primary, primary) != 0 ||
		    setresuid(NOBODY, NOBODY, NOBODY) != 0)
			snprintf(out, sizeof out, "setuid: %s", strerror(errno));
		else if (ctlsock_exchange(path, "status", out, sizeof out, 2000) == -3)
			snprintf(out, sizeof out, "EACCES");
		ssize_t w = write(pfd[1], out, strlen(out));
		_exit(w < 0);
	}
	close(pfd[1]);
	ssize_t n = read(pfd[0], ans, cap - 1);
	ans[n > 0 ? n : 0] = 0;
	close(pfd[0]);
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
}

static void peers_checked(void **state)
{
	struct sockfx *f = *state;
	if (geteuid() != 0)
		skip();
	char ans[512];
	/* Without a group the file system refuses nobody already. */
	char err[512] = "";
	assert_int_equal(mkdir(f->sock_dir, 0755), 0);
	if (start(f, NULL, 0, 0, err, sizeof err))
		fail_msg("start: %s", err);
	as_nobody(f->path, NOBODY, OTHER_GROUP, ans, sizeof ans);
	assert_string_equal(ans, "EACCES");
	ctlsock_stop(f->s);
	f->s = NULL;
	/* With a group: a process that carries it only as an extra group passes the file's mode, not the credential check. */
	assert_int_equal(chmod(f->dir, 0711), 0);
	if (start(f, "operator", OTHER_GROUP, 0, err, sizeof err))
		fail_msg("start: %s", err);
	as_nobody(f->path, NOBODY, OTHER_GROUP, ans, sizeof ans);
	assert_string_equal(ans, "{\"ok\":false,\"error\":\"uid 65534 may not use testd's control socket: only root, its "
				 "own user and members of group operator may\"}");
	/* Its primary group is the control group: allowed. */
	as_nobody(f->path, OTHER_GROUP, OTHER_GROUP, ans, sizeof ans);
	assert_string_equal(ans, "{\"ok\":true,\"message\":\"got status\"}");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(modes_ignore_the_umask, setup, teardown),
		cmocka_unit_test_setup_teardown(group_modes, setup, teardown),
		cmocka_unit_test_setup_teardown(writable_folders_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(foreign_folder_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(idle_client_does_not_block, setup, teardown),
		cmocka_unit_test_setup_teardown(one_too_many_is_busy, setup, teardown),
		cmocka_unit_test_setup_teardown(long_request_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(request_with_nul_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(peers_checked, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
