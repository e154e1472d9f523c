#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# The volatile disk of the power cuts (volatile_nbd.py) as qemu's own NBD client
# sees it, without a VM (a few seconds): qemu-io writes patterns through it,
# is SIGKILLed as qemu is at a power cut, and the server is told to cut; the
# image must then hold what a disk with a volatile write cache would keep:
#   flushed      a write before a FLUSH survives a cut that keeps nothing (--keep 0)
#   unflushed    a write after it is read back before the cut, and lost by that cut
#   keep1        a cut that keeps every piece lands the newest data
#   fua          a write with FUA survives a cut that keeps nothing
#   disc         qemu-io ending cleanly (its flush, NBD_CMD_DISC) writes everything back
#   full         48 MiB unflushed through a 32 MiB cache: the oldest reach the image, the newest are lost
#   seeded       two cuts with the same seed (keep drawn from it) leave identical images
# Usage: sh test_volatile_nbd.sh   Prints a line per case, then "N passed, M failed"; exits 1 if M > 0.
set -u
here=$(cd "$(dirname "$0")" && pwd)
command -v qemu-io >/dev/null || { echo "FAIL: no qemu-io (package qemu-utils)" >&2; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/vtl-volnbd.XXXXXX")
spid="" qpid=""
cleanup() {
	[ -z "$qpid" ] || kill -KILL "$qpid" 2>/dev/null
	[ -z "$spid" ] || kill -KILL "$spid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
MIB=1048576
CACHE_MIN=33554432   # volatile_nbd.py's smallest --cache-max (one request of its 32 MiB maximum)
passed=0 failed=0

# start SEED [SERVER-OPTION...]: a fresh 64 MiB image of zeroes (sparse), served on $tmp/s.
start() {
	seed=$1
	shift
	rm -f "$tmp/img"
	truncate -s 64M "$tmp/img"
	rm -f "$tmp/s" "$tmp/out" "$tmp/io"  # io: a stale one would look like the next run's results
	python3 "$here/volatile_nbd.py" "$tmp/img" "$tmp/s" --seed "$seed" "$@" >"$tmp/out" 2>"$tmp/log" &
	spid=$!
	i=0
	until grep -q ready "$tmp/out" 2>/dev/null; do
		i=$((i + 1))
		[ "$i" -le 300 ] || { echo "FAIL: the server did not listen within 30 s: $(cat "$tmp/log")"; exit 1; }
		sleep 0.1
	done
}
# io CMD...: qemu-io through the server with a write cache (as qemu's cache=writeback), in the background.
io() {
	for c in "$@"; do set -- "$@" -c "$c"; shift; done
	stdbuf -oL qemu-io -t writeback --image-opts "driver=raw,file.driver=nbd,file.server.type=unix,file.server.path=$tmp/s" \
		"$@" >"$tmp/io" 2>&1 &
	qpid=$!
}
# power_cut N: qemu-io dies once it has printed N results (its reads and writes; the last command, a
# long sleep, keeps it connected); then the cut.
power_cut() {
	i=0
	until [ "$(cat "$tmp/io" 2>/dev/null | grep -c '^\(wrote\|read\) ')" -ge "$1" ]; do
		i=$((i + 1))
		[ "$i" -le 300 ] || { echo "FAIL: qemu-io did not run its commands: $(cat "$tmp/io")"; break; }
		sleep 0.1
	done
	kill -KILL "$qpid"
	wait "$qpid" 2>/dev/null
	qpid=""
	kill -TERM "$spid"
	wait "$spid"
	src=$?
	spid=""
}
# byte OFFSET: the image's byte there, in hex.
byte() { od -An -tx1 -j "$1" -N1 "$tmp/img" | tr -d ' '; }
check() {
	if [ "$2" = "$3" ]; then
		passed=$((passed + 1))
		echo "ok   $1: $4"
	else
		failed=$((failed + 1))
		echo "FAIL $1: $4: expected $3, found $2; qemu-io: $(tr '\n' ' ' <"$tmp/io"); server: $(tr '\n' ' ' <"$tmp/log")"
	fi
}

start 1 --keep 0
io "write -P 0xaa 0 64k" "flush" "write -P 0xbb 0 8k" "read -P 0xbb 0 8k" "write -P 0xcc 1M 128k" "sleep 600000"
power_cut 4
check flushed "$(byte 0)" aa "the flushed 0xaa at 0 after a cut that keeps nothing"
check unflushed "$(grep -c 'read 8192/8192' "$tmp/io")$(byte 8191)$(byte 1048576)" 1aa00 \
	"0xbb read back before the cut, then the flushed 0xaa at 8191 and the old zero at 1 MiB"
check cut-line "$src$(grep -c '^cut: seed 1, keep 0.00: 0 of 34 pieces' "$tmp/out")" 01 "exit 0 and the cut's line: $(cat "$tmp/out" | tail -1)"

start 2 --keep 1
io "write -P 0xaa 0 64k" "flush" "write -P 0xbb 0 8k" "write -P 0xcc 1M 128k" "sleep 600000"
power_cut 3
check keep1 "$(byte 0)$(byte 8191)$(byte 8192)$(byte 1048576)" bbbbaacc "every piece landed, the newest over the flushed"

start 3 --keep 0
io "write -P 0xaa 0 64k" "write -f -P 0xdd 1M 64k" "sleep 600000"
power_cut 2
check fua "$(byte 0)$(byte 1048576)" 00dd "the FUA write's 0xdd survives, the plain write before it does not"

start 4 --keep 0
io "write -P 0xaa 0 64k" "write -P 0xbb 2M 4k"
wait "$qpid"
qpid=""
wait "$spid"
src=$?
spid=""
check disc "$src$(byte 0)$(byte 2097152)" 0aabb "qemu-io's clean end wrote everything back (server exit 0)"

start 5 --keep 0 --cache-max $CACHE_MIN
set --
i=0
while [ "$i" -lt 48 ]; do set -- "$@" "write -P 0xaa $((i * MIB)) 1M"; i=$((i + 1)); done
io "$@" "sleep 600000"
power_cut 48
check full "$(byte 0)$(byte $((47 * MIB)))" aa00 "the oldest MiB reached the image when the cache filled, the last is lost"

for run in 1 2; do
	start 6
	io "write -P 0xaa 0 64k" "flush" "write -P 0xbb 0 256k" "write -P 0xcc 512k 256k" "sleep 600000"
	power_cut 3
	md5sum <"$tmp/img" >"$tmp/md5-$run"
	cp "$tmp/out" "$tmp/out-$run"
done
check seeded "$(cmp -s "$tmp/md5-1" "$tmp/md5-2" && echo same)" same "seed 6 twice: $(tail -1 "$tmp/out-1")"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
