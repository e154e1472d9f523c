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

step "vtlctl refuses offline changes while vtld answers on its control socket"
set +e
"$VTLCTL" -c "$conf" move 1025 257 >"$tmp/out" 2>&1
rc=$?
set -e
[ "$rc" -eq 1 ] || fail "vtlctl move ran while vtld was up (exit $rc)"
grep -q "vtld is running" "$tmp/out" || fail "vtlctl did not say vtld is running"

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
