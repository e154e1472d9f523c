#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Runs bench_iscsi (or another host benchmark given, e.g. bench_hostile via
# bench_hostile.sh) against a vtld of its own: a library of 2 LTO-8 drives in a
# temporary folder under VTL_BENCH_DIR (default /var/tmp, not /tmp, which may
# be tmpfs), on a free loopback port. The baseline files go in the same
# folder, so cartridges and baselines share one file system. vtld is stopped
# by its PID and the folder removed on every exit.
#
# Usage: sh bench_iscsi.sh BUILD/tests/bench/bench_iscsi   (tests/bench/run calls it)
# The host gets PORTAL and TARGET-IQN as arguments, and VTL_BENCH_DIR, VTL_BENCH_POOL and
# VTL_BENCH_VTLD_PID in its environment.
set -eu

bench=$(cd "$(dirname "${1:?usage: bench_iscsi.sh <host benchmark binary>}")" && pwd)/$(basename "$1")
build=$(cd "$(dirname "$bench")/../.." && pwd)
VTLD=$build/vtld
VTLCTL=$build/vtlctl
for x in "$bench" "$VTLD" "$VTLCTL"; do
	[ -x "$x" ] || { echo "bench_iscsi.sh: $x is missing; build it with 'make'" >&2; exit 1; }
done

tmp=$(mktemp -d "${VTL_BENCH_DIR:-/var/tmp}/vtl-bench-iscsi.XXXXXX")
pid=""
cleanup() {
	if [ -n "$pid" ]; then
		kill -TERM "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP
log=$tmp/vtld.log
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
iqn=iqn.2026-01.org.vtl:bench

mkdir -p "$tmp/etc"
cat >"$tmp/etc/vtl.conf" <<CONF
[library]
name = bench
serial = BENCH00001
slots = 4
drives = 2

[pool]
member = ../pool/m0

[catalog]
path = ../var/catalog.db

[iscsi]
listen = 127.0.0.1
port = $port
target_iqn = $iqn
CONF
"$VTLCTL" -c "$tmp/etc/vtl.conf" init >/dev/null
"$VTLCTL" -c "$tmp/etc/vtl.conf" cartridge add --barcode BEN001L8 --count 2 >/dev/null

"$VTLD" -c "$tmp/etc/vtl.conf" 2>>"$log" &
pid=$!
i=0
until grep -q "ready:" "$log" 2>/dev/null; do
	i=$((i + 1))
	if [ "$i" -gt 200 ] || ! kill -0 "$pid" 2>/dev/null; then
		echo "bench_iscsi.sh: vtld did not come up; its log:" >&2
		tail -20 "$log" >&2
		exit 1
	fi
	sleep 0.1
done

rc=0
VTL_BENCH_DIR=$tmp VTL_BENCH_POOL=$tmp/pool/m0 VTL_BENCH_VTLD_PID=$pid "$bench" "127.0.0.1:$port" "$iqn" || rc=$?
kill -TERM "$pid"
if ! wait "$pid"; then
	echo "bench_iscsi.sh: vtld did not stop cleanly; its log:" >&2
	tail -20 "$log" >&2
	rc=1
fi
pid=""
exit "$rc"
