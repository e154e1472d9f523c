#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# The library over the built-in iSCSI target, with libiscsi as the host: vtld
# on a free loopback port in a temporary folder; iscsi-inq sees the changer
# (LUN 0) and the drives; the iscsi_tape client moves a cartridge into a
# drive, writes three files with filemarks and reads them back byte for byte;
# discovery lists the target; two initiators contend for a drive through
# SPC-2 and persistent reservations; vtld restarts with a cartridge loaded and
# every block and filemark where it was written.
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

starts=0
start() {
	starts=$((starts + 1))
	"$VTLD" -c "$tmp/etc/vtl.conf" 2>>"$log" &
	pid=$!
	i=0
	# The log is shared by every start: wait for this start's "ready" line.
	until [ "$(grep -c "ready:" "$log" 2>/dev/null)" -ge "$starts" ]; do
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
HOSTS=$build/tests/integration/iscsi_hosts
hosts() {
	timeout 120 "$HOSTS" "127.0.0.1:$port" "$iqn" "$1" >"$tmp/hosts" 2>&1 || { sed 's/^/   /' "$tmp/hosts"; fail "iscsi_hosts $1 failed"; }
	sed 's/^/   /' "$tmp/hosts"
}
step "two initiators share a drive under SPC-2 and persistent reservations (iscsi_hosts reserve)"
hosts reserve
step "a host writes two files and leaves the cartridge loaded; vtld restarts"
hosts write
stop
start
step "after the restart the cartridge is still loaded and every block is where it was"
hosts check
step "and the first client's whole run works again"
client "after the restart"
stop
echo "test_iscsi: all steps passed"
