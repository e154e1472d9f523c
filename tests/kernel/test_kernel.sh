#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# The kernel tier: vtld on the host (a fresh library on a free loopback port),
# a real Debian kernel in qemu logs in with open-iscsi and runs
# tests/kernel/guest_tape.sh with the st and ch drivers and unmodified tools.
#
# Usage: sh test_kernel.sh <build-dir>   (needs qemu, a kernel in /boot, open-iscsi, mt-st, mtx: scripts/install-deps)
set -eu
build=$(cd "${1:?usage: test_kernel.sh <build-dir>}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/vtl-kernel.XXXXXX")
pid=""
trap '[ -z "$pid" ] || kill "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT INT TERM
fail() { echo "FAIL: $*" >&2; exit 1; }
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')

mkdir -p "$tmp/etc"
cat >"$tmp/etc/vtl.conf" <<CONF
[library]
name = kernel
serial = KERNEL0001
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
CONF
"$build/vtlctl" -c "$tmp/etc/vtl.conf" init >/dev/null
"$build/vtlctl" -c "$tmp/etc/vtl.conf" cartridge add --barcode K00001L8 --count 4 >/dev/null
"$build/vtld" -c "$tmp/etc/vtl.conf" 2>"$tmp/vtld.log" &
pid=$!
i=0
until grep -q "ready:" "$tmp/vtld.log"; do
	i=$((i + 1)); [ "$i" -le 200 ] || fail "vtld did not start"; sleep 0.1
done
echo "-- vtld on 127.0.0.1:$port; booting the guest"
set +e
python3 "$here/run_vm.py" "$build" "$here/guest_tape.sh" "$tmp/results" "VTL_PORT=$port" --timeout 480
rc=$?
set -e
sed 's/^/   | /' "$tmp/results/guest.log" 2>/dev/null || true
kill -TERM "$pid"; wait "$pid" || true; pid=""
[ "$rc" -eq 0 ] || { tail -30 "$tmp/vtld.log" >&2; fail "the guest test failed (exit $rc)"; }
check_dmesg() {
	echo "-- the guest's kernel log, SCSI lines:"
	grep -iE "scsi|st[0-9]|ch[0-9]|iscsi" "$1" | sed 's/^/   | /' | head -40
	if grep -iE "st[0-9]+: Error|ch[0-9]+: .*error|I/O error|detected capacity change" "$1"; then
		fail "the guest kernel logged SCSI errors"
	fi
}
check_dmesg "$tmp/results/dmesg.log"

echo "-- vtld restarts; a second guest restores what the first left in drive 1"
"$build/vtld" -c "$tmp/etc/vtl.conf" 2>>"$tmp/vtld.log" &
pid=$!
i=0
until [ "$(grep -c "ready:" "$tmp/vtld.log")" -ge 2 ]; do
	i=$((i + 1)); [ "$i" -le 200 ] || fail "vtld did not restart"; sleep 0.1
done
set +e
python3 "$here/run_vm.py" "$build" "$here/guest_restore.sh" "$tmp/results2" "VTL_PORT=$port" --timeout 300
rc=$?
set -e
sed 's/^/   | /' "$tmp/results2/guest.log" 2>/dev/null || true
kill -TERM "$pid"; wait "$pid" || true; pid=""
[ "$rc" -eq 0 ] || { tail -30 "$tmp/vtld.log" >&2; fail "the restore after the restart failed (exit $rc)"; }
check_dmesg "$tmp/results2/dmesg.log"
echo "test_kernel: all steps passed"
