#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# vtld end to end: a library made with vtlctl init is brought up, announces
# its logical units, stops cleanly on SIGTERM (exit 0, cartridges synced) and
# refuses to start, with a clear message, when the catalog is missing.
#
# Usage: sh test_vtld.sh <build-dir>   (needs <build-dir>/vtld and vtlctl; no root, no network)
set -eu

build=${1:?usage: test_vtld.sh <build-dir>}
VTLD=$(cd "$build" && pwd)/vtld
VTLCTL=$(cd "$build" && pwd)/vtlctl
[ -x "$VTLD" ] || { echo "FAIL: $VTLD is missing; build it with 'make'" >&2; exit 1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/vtld-test.XXXXXX")
pid=""
trap '[ -z "$pid" ] || kill "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT INT TERM
conf=$tmp/etc/vtl.conf
log=$tmp/vtld.log
step() { echo "-- $*"; }
fail() {
	echo "FAIL: $*" >&2
	echo "   vtld log:" >&2; sed 's/^/   | /' "$log" >&2 2>/dev/null || true
	exit 1
}
# wait_for PATTERN: waits up to 20 s for PATTERN in the log.
wait_for() {
	i=0
	while ! grep -q -- "$1" "$log" 2>/dev/null; do
		i=$((i + 1))
		[ "$i" -le 200 ] || fail "vtld did not log '$1' within 20 s"
		kill -0 "$pid" 2>/dev/null || fail "vtld exited before logging '$1'"
		sleep 0.1
	done
}

mkdir -p "$tmp/etc"
cat >"$conf" <<'CONF'
[library]
name = vtldtest
serial = VTLD0001
slots = 8
mail_slots = 2
drives = 2

[pool]
member = ../pool/m0
segment_size = 1M

[catalog]
path = ../var/catalog.db
CONF

step "without a catalog vtld refuses to start and says what to do"
set +e
"$VTLD" -c "$conf" 2>"$log"
rc=$?
set -e
[ "$rc" -eq 1 ] || fail "vtld exited $rc without a catalog, expected 1"
grep -q "vtlctl init" "$log" || fail "the error does not say to run vtlctl init"

step "vtlctl init, then vtld comes up with the changer and 2 drives"
"$VTLCTL" -c "$conf" init >/dev/null
"$VTLCTL" -c "$conf" cartridge add --barcode T00001L8 --count 2 >/dev/null
"$VTLD" -c "$conf" 2>"$log" &
pid=$!
wait_for "ready: 3 logical units"

step "offline-only commands refuse to run while vtld answers on its control socket"
set +e
"$VTLCTL" -c "$conf" cartridge add --barcode T00009L8 >"$tmp/out" 2>&1
rc=$?
set -e
[ "$rc" -eq 1 ] || fail "vtlctl cartridge add ran while vtld was up (exit $rc)"
grep -q "vtld is running" "$tmp/out" || fail "vtlctl did not say vtld is running"

# ctl ARGS: vtlctl must succeed; its output goes to the log for the record.
ctl() {
	"$VTLCTL" -c "$conf" "$@" >"$tmp/out" 2>&1 || { cat "$tmp/out" >&2; fail "vtlctl $* failed"; }
	sed 's/^/   | /' "$tmp/out"
}
# status_has PYTHON-EXPR: the control socket's status answer d must satisfy the expression.
status_has() {
	python3 - "$tmp/etc/vtld.sock" "$1" <<'PY' || fail "status does not satisfy: $1"
import json, socket, sys
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.sendall(b"status\n")
d = json.loads(s.makefile().readline())
assert eval(sys.argv[2]), d
PY
}

step "while vtld runs, vtlctl moves go through it: a move into a drive loads the drive"
ctl move T00001L8 257
status_has 'd["drives"][0]["state"] == "loaded" and d["drives"][0]["barcode"] == "T00001L8"'
step "vtlctl status shows the drives as vtld sees them"
ctl status
grep -q "^1 *257 *loaded *T00001L8" "$tmp/out" || fail "vtlctl status does not show T00001L8 loaded in drive 257"
ctl --json status
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["drives"][0]["barcode"] == "T00001L8"' "$tmp/out" ||
	fail "vtlctl --json status is not vtld's JSON"
step "vtlctl unload: the drive unloads and the robot puts the cartridge back in its slot"
ctl unload 257
status_has 'd["drives"][0]["state"] == "empty"'
ctl slot list
grep -q "T00001L8" "$tmp/out" || fail "T00001L8 is not back in a slot"
step "vtlctl load by barcode, unload to a chosen slot"
ctl load T00002L8 258
status_has 'd["drives"][1]["state"] == "loaded"'
ctl unload 258 --to 1030
step "export through a mail slot and import again, all through vtld"
ctl export T00002L8 --remove
ctl cartridge list
grep "T00002L8" "$tmp/out" | grep -q "outside" || fail "T00002L8 is not outside the library"
ctl import T00002L8
ctl slot list --type ie
grep -q "T00002L8" "$tmp/out" || fail "T00002L8 did not come back into a mail slot"
set +e
"$VTLCTL" -c "$conf" unload 257 >"$tmp/out" 2>&1
rc=$?
set -e
[ "$rc" -eq 1 ] || fail "unloading an empty drive exited $rc, expected 1"
echo "   refused as expected: $(cat "$tmp/out")"

step "the control socket answers status with the drives as JSON"
sock=$tmp/etc/vtld.sock
answer=$(python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.sendall(b"status\n"); print(s.makefile().readline().strip())' "$sock")
echo "   $answer"
echo "$answer" | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["ok"] and d["library"]=="vtldtest" and len(d["drives"])==2 and d["drives"][0]["state"]=="empty", d' ||
	fail "status answer is not what it should be: $answer"

step "a second vtld refuses to start on the same control socket"
set +e
"$VTLD" -c "$conf" 2>"$tmp/second.log"
rc=$?
set -e
[ "$rc" -eq 1 ] || fail "a second vtld exited $rc, expected 1"
grep -q "another vtld" "$tmp/second.log" || fail "the second vtld did not say another one runs"

step "SIGTERM: vtld stops cleanly with exit 0"
kill -TERM "$pid"
set +e
wait "$pid"
rc=$?
set -e
pid=""
[ "$rc" -eq 0 ] || fail "vtld exited $rc on SIGTERM, expected 0"
grep -q "stopped" "$log" || fail "vtld did not log that it stopped"
[ ! -e "$sock" ] || fail "vtld left its control socket behind"
echo "test_vtld: all steps passed"
