#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Hostile hosts against vtld's iSCSI target (tests/integration/iscsi_hostile,
# a hand-made initiator; its header says what each case sends and asserts):
#   - with the default limits: Data-Out integrity (duplicated, overlapping,
#     gapped, too much, wrong TTT or DataSN: Reject 04h, CHECK CONDITION
#     0Bh/4Bh/xx, the tape unmoved, nothing foreign readable), the command
#     window against a pile of WRITEs never given their data, a never-read
#     NOP-Out flood and nop_data_max, identity (same name with another ISID,
#     reinstatement, TransportIDs), a well-behaved host's streaming rate
#     while attacked (>= 90 % of quiet), and a descriptor limit lowered with
#     prlimit (no busy loop, hosts log in again afterwards);
#   - with small limits (login_timeout = 2, max_logins = 8 / 4 per address,
#     max_sessions = 4 / 2 per address, session_buffer_max = 8M, buffer_max =
#     12M): idle connections, unfinished logins, sessions and task buffers
#     beyond their caps.
#
# Usage: sh test_iscsi_hostile.sh <build-dir>
set -eu

build=$(cd "${1:?usage: test_iscsi_hostile.sh <build-dir>}" && pwd)
VTLD=$build/vtld
VTLCTL=$build/vtlctl
HOSTILE=$build/tests/integration/iscsi_hostile
for x in "$VTLD" "$VTLCTL" "$HOSTILE"; do
	[ -x "$x" ] || { echo "FAIL: $x is missing; build it with 'make'" >&2; exit 1; }
done
. "$(dirname "$0")/vtld_env.sh"
vtld_env vtl-iscsi-hostile
iqn=iqn.2026-01.org.vtl:hostile
vtld_library "$iqn" HOSTILE01
"$VTLCTL" -c "$conf" cartridge add --barcode H00001L8 --count 2 >/dev/null || fail "vtlctl cartridge add"
cp "$conf" "$tmp/base.conf"

# hostile CASE: runs one case of iscsi_hostile against the running vtld; its lines are indented. A
# failed case is recorded and the others still run, so that one run shows every misbehaviour.
failed=""
hostile() {
	set +e
	timeout 60 "$HOSTILE" "$1" "127.0.0.1:$port" "$iqn" "$pid" >"$tmp/out" 2>&1
	rc=$?
	set -e
	sed 's/^/   /' "$tmp/out"
	if [ "$rc" -ne 0 ]; then
		echo "   FAILED: iscsi_hostile $1 exited $rc" >&2
		failed="$failed $1"
	fi
}

# Under AddressSanitizer (make asan) freed memory waits in a quarantine (256 MiB by default) before
# it is reused, so vtld's VmRSS would grow by every buffer freed and the RSS bounds below would
# measure the quarantine: keep it small, so that they still measure vtld.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=8"

step "default limits: Data-Out integrity, the command window, a NOP flood, identity, streaming under attack"
vtld_start
hostile dataout
hostile window
hostile nop
hostile identity
hostile stream

step "a descriptor limit lowered to what vtld holds + 8: 100 connection attempts"
# The attackers' connections are gone once vtld's descriptor count stops falling.
fds=$(ls "/proc/$pid/fd" | wc -l)
i=0
while [ "$i" -lt 20 ]; do
	sleep 0.2
	now=$(ls "/proc/$pid/fd" | wc -l)
	[ "$now" -lt "$fds" ] || break
	fds=$now
	i=$((i + 1))
done
soft=$(prlimit --pid "$pid" --nofile --noheadings --output SOFT) || fail "prlimit"
prlimit --pid "$pid" --nofile="$((fds + 8)):" || fail "prlimit"
hostile emfile
prlimit --pid "$pid" --nofile="$soft:" || fail "prlimit"
vtld_stop

step "small limits: idle connections, unfinished logins, sessions and task buffers beyond their caps"
cp "$tmp/base.conf" "$conf"
cat >>"$conf" <<CONF
login_timeout = 2
max_logins = 8
max_logins_per_address = 4
max_sessions = 4
max_sessions_per_address = 2
session_buffer_max = 8M
buffer_max = 12M
CONF
vtld_start
hostile logins
hostile buffers
vtld_stop
[ -z "$failed" ] || fail "cases that failed:$failed"
echo "test_iscsi_hostile: all steps passed"
