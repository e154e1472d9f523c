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

. "$(dirname "$0")/vtld_env.sh"
vtld_env vtl-iscsi
iqn=iqn.2026-01.org.vtl:itest
vtld_library $iqn ISCSI0001
"$VTLCTL" -c "$conf" cartridge add --barcode I00001L8 --count 2 >/dev/null

step "vtld listens on 127.0.0.1:$port"
vtld_start
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
vtld_stop
vtld_start
step "after the restart the cartridge is still loaded and every block is where it was"
hosts check
step "vtlctl status shows a drive's MB/s and buffer fill while a host streams (iscsi_hosts stream)"
# wait_line WORD: waits up to 30 s for the streaming host to print "-- WORD".
wait_line() {
	i=0
	until grep -q -- "-- $1" "$tmp/stream"; do
		i=$((i + 1))
		[ "$i" -le 300 ] || { sed 's/^/   /' "$tmp/stream"; fail "the streaming host never said '-- $1'"; }
		kill -0 "$spid" 2>/dev/null || { sed 's/^/   /' "$tmp/stream"; fail "the streaming host stopped early"; }
		sleep 0.1
	done
}
# watch_status PYTHON-EXPR: over 4 s, some status answer d for drive 2 (LUN 2) must satisfy the expression.
watch_status() {
	python3 - "$tmp/etc/vtld.sock" "$1" <<'PY' || fail "no status within 4 s satisfied: $1"
import json, socket, sys, time
for _ in range(20):
    time.sleep(0.2)
    s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.sendall(b"status\n")
    d = [x for x in json.loads(s.makefile().readline())["drives"] if x["lun"] == 2][0]
    if eval(sys.argv[2]):
        print("   status of LUN 2: write %.1f MB/s, read %.1f MB/s, read buffer %d of %d bytes, write buffer %d bytes,"
              " compression %s" % (d["write_mb_s"], d["read_mb_s"], d["read_buffer_bytes"], d["read_buffer_size"],
                                   d["write_buffer_bytes"], d["compression"]))
        sys.exit(0)
sys.exit(1)
PY
}
timeout 120 "$HOSTS" "127.0.0.1:$port" "$iqn" stream >"$tmp/stream" 2>&1 &
spid=$!
wait_line writing
sleep 1.5
# The host paces about 26 MB/s; the rate must show it (the bounds leave room for a busy machine).
watch_status 'd["write_mb_s"] > 5 and d["write_mb_s"] < 60 and d["write_buffer_bytes"] > 0'
# Whether the loaded cartridge compresses, and why (docs/format.md, "Compression").
watch_status 'd["compression"] in ("on (disk not measured)", "on (pays)", "on (probing)", "off (CPU-bound)", "off (mode page)")'
"$VTLCTL" -c "$conf" status | sed 's/^/   | /'
wait_line reading
sleep 1.5
watch_status 'd["read_mb_s"] > 5 and d["read_mb_s"] < 60 and d["read_buffer_size"] > 0 and d["read_buffer_bytes"] > 0'
"$VTLCTL" -c "$conf" status | sed 's/^/   | /'
wait "$spid" || { sed 's/^/   /' "$tmp/stream"; fail "iscsi_hosts stream failed"; }
sed 's/^/   /' "$tmp/stream"
step "and the first client's whole run works again"
client "after the restart"
vtld_stop
echo "test_iscsi: all steps passed"
