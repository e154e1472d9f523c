#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Runs bench_iscsi (or another host benchmark given, e.g. bench_hostile via
# bench_hostile.sh) against a vtld of its own: a library of 4 LTO-8 drives in a
# temporary folder under VTL_BENCH_DIR (default /var/tmp, not /tmp, which may
# be tmpfs), on a free loopback port. For bench_iscsi it also starts its peer,
# a tgtd with 4 tape LUNs (tests/bench/tgt_peer.sh), in the same folder on
# another free port; when tgt is not installed or does not start, it says why
# and bench_iscsi measures vtld alone. The baseline files go in the same
# folder, so cartridges, tgt's tapes and baselines share one file system. vtld
# and tgtd are stopped by their PIDs and the folder removed on every exit.
#
# Usage: sh bench_iscsi.sh BUILD/tests/bench/bench_iscsi   (tests/bench/run calls it)
# The host gets vtld's PORTAL and TARGET-IQN as arguments, and VTL_BENCH_DIR, VTL_BENCH_POOL and
# VTL_BENCH_VTLD_PID in its environment; bench_iscsi also VTL_BENCH_TGT_PORTAL, VTL_BENCH_TGT_IQN,
# VTL_BENCH_TGTD_PID, VTL_BENCH_TGT_CTL and VTL_BENCH_TGT_DIR, or VTL_BENCH_TGT_ABSENT (why not).
set -eu

bench=$(cd "$(dirname "${1:?usage: bench_iscsi.sh <host benchmark binary>}")" && pwd)/$(basename "$1")
build=$(cd "$(dirname "$bench")/../.." && pwd)
. "$(cd "$(dirname "$0")" && pwd)/../integration/library_conf.sh"
VTLD=$build/vtld
VTLCTL=$build/vtlctl
for x in "$bench" "$VTLD" "$VTLCTL"; do
	[ -x "$x" ] || { echo "bench_iscsi.sh: $x is missing; build it with 'make'" >&2; exit 1; }
done

tmp=$(mktemp -d "${VTL_BENCH_DIR:-/var/tmp}/vtl-bench-iscsi.XXXXXX")
pid=""
tgt_ctl=$(cd "$(dirname "$0")" && pwd)/tgt_peer.sh
tgt_up=""
cleanup() {
	if [ -n "$tgt_up" ]; then
		sh "$tgt_ctl" stop "$tmp/tgt" || true
	fi
	if [ -n "$pid" ]; then
		kill -TERM "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP
log=$tmp/vtld.log
free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
port=$(free_port)
iqn=iqn.2026-01.org.vtl:bench

mkdir -p "$tmp/etc"
library_conf bench BENCH00001 8 "" 4 "$port" "$iqn" >"$tmp/etc/vtl.conf"
"$VTLCTL" -c "$tmp/etc/vtl.conf" init >/dev/null
"$VTLCTL" -c "$tmp/etc/vtl.conf" cartridge add --barcode BEN001L8 --count 4 >/dev/null

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

if [ "$(basename "$bench")" = bench_iscsi ]; then
	tgt_port=$(free_port)
	tgt_iqn=iqn.2026-01.org.vtl:bench-tgt
	mkdir -p "$tmp/tgt"
	if tgt_pid=$(sh "$tgt_ctl" start "$tmp/tgt" "$tgt_port" "$tgt_iqn" 4 2>"$tmp/tgt-start.err"); then
		tgt_up=1
		export VTL_BENCH_TGT_PORTAL="127.0.0.1:$tgt_port" VTL_BENCH_TGT_IQN=$tgt_iqn VTL_BENCH_TGTD_PID=$tgt_pid
		export VTL_BENCH_TGT_CTL="$tgt_ctl" VTL_BENCH_TGT_DIR="$tmp/tgt"
	else
		[ -f "$tmp/tgt/tgtd.pid" ] && tgt_up=1 # started but not configured: still to be stopped
		VTL_BENCH_TGT_ABSENT="tgt could not be started: $(tr '\n' ' ' <"$tmp/tgt-start.err" | sed 's/ *$//')"
		export VTL_BENCH_TGT_ABSENT
		echo "bench_iscsi.sh: $VTL_BENCH_TGT_ABSENT" >&2
	fi
fi

rc=0
VTL_BENCH_DIR=$tmp VTL_BENCH_POOL=$tmp/pool/m0 VTL_BENCH_VTLD_PID=$pid "$bench" "127.0.0.1:$port" "$iqn" || rc=$?
kill -TERM "$pid"
if ! wait "$pid"; then
	echo "bench_iscsi.sh: vtld did not stop cleanly; its log:" >&2
	tail -20 "$log" >&2
	rc=1
fi
pid=""
if [ -n "$tgt_up" ]; then
	sh "$tgt_ctl" stop "$tmp/tgt" || true
	tgt_up=""
fi
exit "$rc"
