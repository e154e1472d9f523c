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

step "SIGTERM: vtld stops cleanly with exit 0"
kill -TERM "$pid"
set +e
wait "$pid"
rc=$?
set -e
pid=""
[ "$rc" -eq 0 ] || fail "vtld exited $rc on SIGTERM, expected 0"
grep -q "stopped" "$log" || fail "vtld did not log that it stopped"
echo "test_vtld: all steps passed"
