#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Who may use the control sockets, against a real vtld and vtl-migrator:
#   - under umask 000 the socket is 0600 and the folder vtld makes is 0700;
#   - another user (nobody) cannot connect, and vtlctl says why;
#   - with control_group the socket is 0660 and the folder 0750 of the group;
#     a process that carries the group only as an extra group passes the
#     file's mode but not the peer check (vtld logs "control: refused uid"),
#     one whose group it is gets its status;
#   - a client that connects and sends nothing does not delay another one's
#     vtlctl status, and is closed by the 5 s deadline;
#   - a folder every user can write into is refused at start, with the fix;
#   - vtl-migrator's socket: the same modes and the same peer check;
#   - both daemons answer a malformed request (missing or repeated words, bad numbers, a NUL, the other
#     daemon's verb) with an error that names what is wrong and the verb's usage.
# The user switches need root (setpriv); without root those steps are skipped.
#
# Usage: sh test_ctlsock.sh <build-dir>   (needs <build-dir>/vtld, vtlctl and vtl-migrator; no network)
set -eu

build=$(cd "${1:?usage: test_ctlsock.sh <build-dir>}" && pwd)
VTLD=$build/vtld
VTLCTL=$build/vtlctl
MIGRATOR=$build/vtl-migrator
for x in "$VTLD" "$VTLCTL" "$MIGRATOR"; do
	[ -x "$x" ] || { echo "FAIL: $x is missing; build it with 'make'" >&2; exit 1; }
done
. "$(dirname "$0")/vtld_env.sh"
. "$(dirname "$0")/migrator_env.sh"
vtld_env vtl-ctlsock
trap '[ -z "$mpid" ] || kill "$mpid" 2>/dev/null || true; [ -z "$pid" ] || kill "$pid" 2>/dev/null || true
	rm -rf "$tmp"' EXIT INT TERM
mlog=$tmp/migrator.log
NOBODY=65534
GROUP=operator # a group of Debian's base-passwd that nobody is not a member of
root=no
[ "$(id -u)" -eq 0 ] && getent group "$GROUP" >/dev/null && command -v setpriv >/dev/null && root=yes
gid=$(getent group "$GROUP" | cut -d: -f3 || true)

vtld_library iqn.2026-01.org.vtl:ctlsock CTLS0001
base=$(cat "$conf")
# with_daemon LINES: the configuration with a [daemon] section of LINES (and the migrator's sim library).
with_daemon() {
	printf '%s\n\n[daemon]\n%s\n\n[physical]\ntype = sim\ndata_dir = ../physical\n\n[migrator]\n%s\n' \
		"$base" "$1" "${2:-control_socket = ../mrun/migrator.sock}" >"$conf"
}
mode_of() { stat -c '%a %G' "$1"; }
# under_umask_000 CMD: runs the shell function CMD (which starts a daemon in the background) under umask 000.
under_umask_000() {
	saved=$(umask)
	umask 000
	"$1"
	umask "$saved"
}
# as_nobody SETPRIV-GROUP-ARGS CMD...: runs CMD as uid nobody with those group options.
as_nobody() {
	g=$1
	shift
	# shellcheck disable=SC2086 # the group options are words
	setpriv --reuid=$NOBODY $g -- "$@"
}
# refused_with_extra_group DAEMON LOG VTLCTL-COMMAND: as nobody carrying $GROUP only as an extra group,
# the command passes the socket's mode but not the peer check: it exits 1 saying who may, and the daemon
# logs the refused uid.
refused_with_extra_group() {
	set +e
	as_nobody "--regid=$NOBODY --groups=$gid" "$VTLCTL" -c "$conf" "$3" >"$tmp/out" 2>&1
	rc=$?
	set -e
	sed 's/^/   | /' "$tmp/out"
	[ "$rc" -eq 1 ] || fail "vtlctl $3 as nobody with an extra group exited $rc"
	grep -q "uid $NOBODY may not use $1's control socket: only root, its own user and members of group $GROUP may" \
		"$tmp/out" || fail "$1's refusal does not say who may"
	grep -q "warn  control: refused uid $NOBODY" "$2" || fail "$1 did not log the refused uid"
	grep "control: refused uid" "$2" | tail -1 | sed 's/^/   log: /'
}
# ask_refused SOCKET REQUEST ERROR: sends REQUEST (with Python backslash escapes, e.g. \0) as one line; the answer must be
# {"ok":false} with exactly ERROR.
ask_refused() {
	python3 - "$1" "$2" "$3" <<'PY' || fail "the answer to '$2' is not the refusal expected"
import json, socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.sendall(sys.argv[2].encode().decode("unicode_escape").encode("latin-1") + b"\n")
line = b""
while not line.endswith(b"\n"):
    got = s.recv(4096)
    if not got:
        break
    line += got
ans = json.loads(line)
print("   %s -> %s" % (sys.argv[2], ans.get("error")))
assert ans["ok"] is False and ans["error"] == sys.argv[3], ans
PY
}
# vtld can be reached through $tmp by nobody (as it would under /run); the folders below decide.
chmod 0711 "$tmp"

step "under umask 000 vtld makes its socket 0600 and the socket's folder 0700"
with_daemon "control_socket = ../run/vtld.sock"
under_umask_000 vtld_start
sock=$tmp/run/vtld.sock
[ "$(stat -c %a "$tmp/run")" = 700 ] || fail "folder mode $(stat -c %a "$tmp/run"), expected 700"
[ "$(stat -c %a "$sock")" = 600 ] || fail "socket mode $(stat -c %a "$sock"), expected 600"
echo "   folder $(stat -c %a "$tmp/run"), socket $(stat -c %a "$sock")"
"$VTLCTL" -c "$conf" status >"$tmp/out" 2>&1 || { cat "$tmp/out"; fail "vtlctl status as the daemon's user"; }

if [ $root = yes ]; then
	step "another user cannot connect, and vtlctl says so"
	set +e
	as_nobody "--regid=$NOBODY --clear-groups" "$VTLCTL" -c "$conf" status >"$tmp/out" 2>&1
	rc=$?
	set -e
	[ "$rc" -eq 1 ] || { cat "$tmp/out"; fail "vtlctl status as nobody exited $rc"; }
	grep -q "this user may not use vtld's control socket $sock (permission denied)" "$tmp/out" ||
		{ cat "$tmp/out"; fail "vtlctl does not say the socket is not for this user"; }
	sed 's/^/   | /' "$tmp/out"
fi

step "a client that sends nothing does not delay vtlctl status, and the deadline closes it"
python3 - "$sock" "$VTLCTL" "$conf" <<'PY' || fail "an idle client held up the control socket"
import socket, subprocess, sys, time
idle = socket.socket(socket.AF_UNIX)
idle.connect(sys.argv[1])
t0 = time.monotonic()
out = subprocess.run([sys.argv[2], "-c", sys.argv[3], "status"], capture_output=True, text=True, timeout=10)
took = time.monotonic() - t0
assert out.returncode == 0 and "vtld is running" in out.stdout, out
assert took < 1.0, "status took %.2f s beside an idle client" % took
idle.settimeout(15)
assert idle.recv(64) == b"", "the idle client got an answer"
closed = time.monotonic() - t0
assert 4.0 <= closed <= 8.0, "the idle client was closed after %.2f s, expected about 5" % closed
print("   status answered in %.3f s; the idle client was closed after %.1f s" % (took, closed))
PY

step "a malformed request gets vtld's error naming the verb's usage; a NUL or another daemon's verb is refused"
ask_refused "$sock" 'move 1025' 'move: missing TO; usage: move FROM TO'
ask_refused "$sock" 'unload 99999' "unload: DRIVE '99999' is not an element address (0 to 65534); usage: unload DRIVE [SLOT]"
ask_refused "$sock" 'migrate CTLS0001' "'migrate' is a request for vtl-migrator, not vtld"
ask_refused "$sock" 'status\0move 1 2' 'byte 6 of the request is NUL'
vtld_stop

if [ $root = yes ]; then
	step "with control_group = $GROUP: socket 0660 and folder 0750 of the group"
	rm -rf "$tmp/run"
	with_daemon "control_socket = ../run/vtld.sock
control_group = $GROUP"
	under_umask_000 vtld_start
	[ "$(mode_of "$tmp/run")" = "750 $GROUP" ] || fail "folder: $(mode_of "$tmp/run"), expected 750 $GROUP"
	[ "$(mode_of "$sock")" = "660 $GROUP" ] || fail "socket: $(mode_of "$sock"), expected 660 $GROUP"
	echo "   folder $(mode_of "$tmp/run"), socket $(mode_of "$sock")"

	step "nobody with $GROUP only as an extra group passes the file's mode, not the peer check"
	refused_with_extra_group vtld "$log" status

	step "nobody whose group is $GROUP gets its status"
	as_nobody "--regid=$gid --clear-groups" "$VTLCTL" -c "$conf" status >"$tmp/out" 2>&1 ||
		{ cat "$tmp/out"; fail "vtlctl status as a member of $GROUP"; }
	grep -q "vtld is running" "$tmp/out" || fail "no status for a member of $GROUP"
	vtld_stop
fi

step "a folder every user can write into is refused at start, and the message says what to change"
mkdir "$tmp/open"
chmod 0777 "$tmp/open"
with_daemon "control_socket = ../open/vtld.sock"
set +e
"$VTLD" -c "$conf" 2>"$tmp/refused.log"
rc=$?
set -e
sed 's/^/   | /' "$tmp/refused.log"
[ "$rc" -eq 1 ] || fail "vtld exited $rc with a world-writable socket folder, expected 1"
grep -q "vtld's control socket folder $tmp/open (mode 0777) is writable by every user: any of them could replace \
the socket; use a folder only its owner can write into (chmod g-w,o-w $tmp/open) or another control_socket" \
	"$tmp/refused.log" || fail "the refusal does not name the folder, its mode and the fix"
[ ! -e "$tmp/open/vtld.sock" ] || fail "a socket was made in the refused folder"

step "vtl-migrator: under umask 000 its socket is 0600 in a 0700 folder"
with_daemon "control_socket = ../run/vtld.sock"
under_umask_000 migrator_start
[ "$(stat -c %a "$tmp/mrun")" = 700 ] || fail "migrator folder mode $(stat -c %a "$tmp/mrun"), expected 700"
[ "$(stat -c %a "$tmp/mrun/migrator.sock")" = 600 ] || fail "migrator socket mode $(stat -c %a "$tmp/mrun/migrator.sock")"
echo "   folder $(stat -c %a "$tmp/mrun"), socket $(stat -c %a "$tmp/mrun/migrator.sock")"
ctl jobs >/dev/null
step "vtl-migrator refuses malformed requests the same way"
msock=$tmp/mrun/migrator.sock
ask_refused "$msock" 'cancel 0' "cancel: JOB '0' is not a job id (1 to 9223372036854775807); usage: cancel JOB"
ask_refused "$msock" 'migrate CTLS0001 drive 1 drive 2' \
	'migrate: drive is given twice; usage: migrate BARCODE [drive N] [rate MB/S] [native 0|1] [library NAME]'
ask_refused "$msock" 'release CTLS0001 now' "release: 'now' is not an argument of release; usage: release BARCODE [force]"
ask_refused "$msock" 'status' "'status' is a request for vtld, not vtl-migrator"
migrator_stop

if [ $root = yes ]; then
	step "vtl-migrator with control_group: 0660 of the group, and the same peer check"
	rm -rf "$tmp/mrun"
	with_daemon "control_socket = ../run/vtld.sock" "control_socket = ../mrun/migrator.sock
control_group = $GROUP"
	under_umask_000 migrator_start
	[ "$(mode_of "$tmp/mrun")" = "750 $GROUP" ] || fail "migrator folder: $(mode_of "$tmp/mrun")"
	[ "$(mode_of "$tmp/mrun/migrator.sock")" = "660 $GROUP" ] || fail "migrator socket: $(mode_of "$tmp/mrun/migrator.sock")"
	refused_with_extra_group vtl-migrator "$mlog" jobs
	as_nobody "--regid=$gid --clear-groups" "$VTLCTL" -c "$conf" jobs >"$tmp/out" 2>&1 ||
		{ cat "$tmp/out"; fail "vtlctl jobs as a member of $GROUP"; }
	migrator_stop
else
	echo "-- not root (or no group $GROUP, or no setpriv): the other-user steps were skipped"
fi
echo "ok: control sockets"
