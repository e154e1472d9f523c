#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# The library over the built-in iSCSI target, with libiscsi as the host: vtld
# on a free loopback port in a temporary folder; iscsi-inq sees the changer
# (LUN 0) and the drives; the iscsi_tape client moves a cartridge into a
# drive, writes three files with filemarks and reads them back byte for byte;
# discovery lists the target; vtld restarts and serves the same library.
#
# Usage: sh test_iscsi.sh <build-dir>   (needs vtld, vtlctl, tests/integration/iscsi_tape; libiscsi-bin)
set -eu

build=$(cd "${1:?usage: test_iscsi.sh <build-dir>}" && pwd)
VTLD=$build/vtld
VTLCTL=$build/vtlctl
CLIENT=$build/tests/integration/iscsi_tape
for x in "$VTLD" "$VTLCTL" "$CLIENT"; do
	[ -x "$x" ] || { echo "FAIL: $x is missing; build it with 'make'" >&2; exit 1; }
done
command -v iscsi-inq >/dev/null || { echo "FAIL: iscsi-inq is missing (libiscsi-bin; scripts/install-deps)" >&2; exit 1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/vtl-iscsi.XXXXXX")
pid=""
trap '[ -z "$pid" ] || kill "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT INT TERM
log=$tmp/vtld.log
step() { echo "-- $*"; }
fail() {
	echo "FAIL: $*" >&2
	echo "   vtld log:" >&2; tail -20 "$log" | sed 's/^/   | /' >&2 2>/dev/null || true
	exit 1
}
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
iqn=iqn.2026-01.org.vtl:itest

mkdir -p "$tmp/etc"
cat >"$tmp/etc/vtl.conf" <<CONF
[library]
name = itest
serial = ISCSI0001
slots = 8
mail_slots = 2
drives = 2

[pool]
member = ../pool/m0

[catalog]
path = ../var/catalog.db

[iscsi]
listen = 127.0.0.1
port = $port
target_iqn = $iqn
advertise = local
CONF
"$VTLCTL" -c "$tmp/etc/vtl.conf" init >/dev/null
"$VTLCTL" -c "$tmp/etc/vtl.conf" cartridge add --barcode I00001L8 --count 2 >/dev/null

start() {
	# The log keeps every run: wait for one more "ready:" than it has, not for the last run's.
	readies=$(grep -c "ready:" "$log" 2>/dev/null || true)
	"$VTLD" -c "$tmp/etc/vtl.conf" 2>>"$log" &
	pid=$!
	i=0
	until [ "$(grep -c "ready:" "$log" 2>/dev/null || true)" -gt "${readies:-0}" ]; do
		i=$((i + 1))
		[ "$i" -le 200 ] || fail "vtld did not come up within 20 s"
		kill -0 "$pid" 2>/dev/null || fail "vtld exited"
		sleep 0.1
	done
}
stop() {
	kill -TERM "$pid"
	wait "$pid" || fail "vtld did not stop cleanly"
	pid=""
}

step "vtld listens on 127.0.0.1:$port"
start
step "discovery lists the target (advertise = local gives libiscsi an address)"
timeout 20 iscsi-ls "iscsi://127.0.0.1:$port" >"$tmp/ls" 2>&1 || fail "iscsi-ls failed: $(cat "$tmp/ls")"
grep -q "$iqn" "$tmp/ls" || fail "iscsi-ls does not list $iqn: $(cat "$tmp/ls")"
step "INQUIRY: LUN 0 is a medium changer, LUNs 1 and 2 are IBM LTO-8 drives"
timeout 20 iscsi-inq "iscsi://127.0.0.1:$port/$iqn/0" >"$tmp/inq" 2>&1 || fail "iscsi-inq LUN 0: $(cat "$tmp/inq")"
grep -q "MEDIA_CHANGER" "$tmp/inq" || fail "LUN 0 is not a changer"
for lun in 1 2; do
	timeout 20 iscsi-inq "iscsi://127.0.0.1:$port/$iqn/$lun" >"$tmp/inq" 2>&1 || fail "iscsi-inq LUN $lun failed"
	grep -q "SEQUENTIAL_ACCESS" "$tmp/inq" || fail "LUN $lun is not a tape drive"
	grep -q "ULT3580-TD8" "$tmp/inq" || fail "LUN $lun is not an ULT3580-TD8"
done
step "a host moves, writes, spaces, reads back and unloads (iscsi_tape)"
client() {
	timeout 120 "$CLIENT" "127.0.0.1:$port" "$iqn" >"$tmp/client" 2>&1 || { sed 's/^/   /' "$tmp/client"; fail "iscsi_tape failed $1"; }
	sed 's/^/   /' "$tmp/client"
}
client ""
step "vtld restarts and serves the same library"
stop
start
client "after the restart"
stop
echo "test_iscsi: all steps passed"
