#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Power cuts (issue 17): nothing a WRITE FILEMARKS acknowledged is lost when
# the power goes. vtld runs inside a qemu guest (guest_powercut.sh) with its
# pool and catalog on a virtio disk backed by a raw ext4 image file made here
# with mkfs; qemu forwards a free host port to the guest's iSCSI port. A host
# program outside the guest (iscsi_crashwrite write) writes variable blocks,
# 4 commands in flight, a WRITE FILEMARKS every 1..64 blocks, and records each
# acknowledged position in a file it fdatasyncs. qemu is killed with SIGKILL
# at a moment the trial's kind picks: the guest's page cache, and whatever qemu
# had not yet written to the image file, are gone, as in a power failure.
# A new guest boots on the same image; vtld starts there (and repairs), the
# host reads the cartridge from BOT (iscsi_crashwrite verify: everything up to
# the last acknowledged position intact and in order, the stream after it
# until end of data); then the guest stops vtld and checks the catalog
# (vtlctl catalog check: SQLite's integrity, the elements, every cartridge's
# end of data and bytes against the pool; and the catalog's end of data is
# not before the acknowledged position). That boot then serves a fresh
# cartridge for the next trial, so N trials take N + 1 boots. The kinds, in turn
# (trial N's from N % 3):
#   early   the power goes 0.05..1 s after the host's first WRITE
#   random  1..5 s after it
#   ack     the moment the host has recorded its 1st..8th acknowledgement
# except that trials 4, 8 and 10 of every ten are vtl-migrator's (powercut_mig.sh):
#   copy, release, recall  vtl-migrator runs in the guest beside vtld, with a
#           simulated library whose tapes are on the same image, and the power
#           goes while it copies, releases or recalls a cartridge the host
#           wrote; after the reboot every good copy must verify against the
#           tape, the host must read the cartridge back bit-exact (a released
#           one recalled by that load), no cartridge may have lost its only
#           good copy, and vtlctl catalog check must pass.
# With VTL_POWERCUT_CONTROL=1 (make soak) a control comes first, on an image
# of its own: vtld runs with nosync_shim.so (fsync and fdatasync do nothing),
# the power goes at the 8th acknowledgement, and the verify must find
# acknowledged data lost: the test can see a missing sync. A second control
# (powercut_mig.sh) runs vtl-migrator with nosync_shim.so on its tape files
# only and cuts the power once a copy is recorded: a copy called good that is
# not must fail the checks.
# VTL_POWERCUT_CACHE=volatile gives the guest a disk with a volatile write cache (volatile_nbd.py,
# served over NBD to qemu): at each cut a random subset (from the trial's seed) of the writes since
# the guest's last FLUSH lands on the image, in a random order; the rest is lost (the trials' guests
# write dirty pages back within a second, so that the disk's cache holds unsynced data). Its control (with
# VTL_POWERCUT_CONTROL=1, or alone with VTL_POWERCUT_CONTROL=nobarrier) remounts the guest's ext4
# nobarrier before vtld serves, so no sync reaches the disk past its cache; the cut drops every
# unflushed write, and the verify must find acknowledged data lost. Under writeback or none the same
# misconfiguration loses nothing: the page-cache-only cut cannot see it (reported, not counted).
#
# Usage: sh test_powercut.sh <build-dir> [TRIALS]   (default $POWERCUT_TRIALS or 10)
# Environment: VTL_POWERCUT_CONTROL (1: the control first), VTL_POWERCUT_SEED (the first trial's seed, printed, to repeat the
# choices), VTL_POWERCUT_CACHE (qemu's cache mode for the image: writeback, the
# default, none, or volatile), VTL_POWERCUT_KEEP=DIR (keeps every boot's logs and the image),
# VTL_POWERCUT_KINDS (the kinds the trials rotate through instead, e.g. "copy release recall"),
# VTL_POWERCUT_MIG_BY (the migrator kinds' windows: powercut_mig.sh).
# Prints a line per trial, then exactly "N passed, M failed"; exits 1 if M > 0.
set -u
build=$(cd "${1:?usage: test_powercut.sh <build-dir> [TRIALS]}" && pwd)
trials=${2:-${POWERCUT_TRIALS:-10}}
case $trials in '' | *[!0-9]*) echo "FAIL: TRIALS must be a number, not '$trials'" >&2; exit 1 ;; esac
here=$(cd "$(dirname "$0")" && pwd)
HOST=$build/tests/integration/iscsi_crashwrite
control=${VTL_POWERCUT_CONTROL:-0}
NOSYNC=$build/tests/integration/nosync_shim.so
for x in "$build/vtld" "$build/vtlctl" "$HOST" $( [ "$control" = 0 ] || echo "$NOSYNC"); do
	[ -x "$x" ] || { echo "FAIL: $x is missing; build it with 'make'" >&2; exit 1; }
done
command -v mkfs.ext4 >/dev/null || { echo "FAIL: no mkfs.ext4 (e2fsprogs)" >&2; exit 1; }
seed0=${VTL_POWERCUT_SEED:-$(date +%s)}
case $seed0 in '' | *[!0-9]*) echo "FAIL: VTL_POWERCUT_SEED must be a number" >&2; exit 1 ;; esac
cache=${VTL_POWERCUT_CACHE:-writeback}
keep=${VTL_POWERCUT_KEEP:-}
IQN=iqn.2026-01.org.vtl:powercut
SLOT=1025           # where the guest puts each trial's cartridge (guest_powercut.sh)
GUEST_PORT=3260     # the guest's iSCSI port (RFC 7143's well-known port)
IMAGE_SIZE=3G       # sparse: the pool holds one trial's cartridge (2G nominal) at a time
BOOT_LIMIT=900      # seconds one VM may live (run_vm's timeout); the guest's own waits are 600 s
UP_LIMIT=300        # seconds a boot may take to serve vtld
HOST_LIMIT=300      # seconds one run of the host program may take
POLL=0.05           # seconds between two looks at a file (the limits above count 20 looks a second)
. "$here/powercut_mig.sh"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/vtl-powercut.XXXXXX")
vm=""
wpid=""
qemu_kill() { [ -s "$tmp/qemu.pid" ] && kill -KILL "$(cat "$tmp/qemu.pid")" 2>/dev/null; }
cleanup() {
	[ -z "$wpid" ] || kill "$wpid" 2>/dev/null
	if [ -n "$vm" ]; then qemu_kill; wait "$vm" 2>/dev/null; fi
	if [ -n "$keep" ]; then mkdir -p "$keep" && cp -r "$tmp/." "$keep/" && echo "-- kept everything in $keep"; fi
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# new_image FILE: a sparse raw image with an empty ext4 file system. Inode tables and journal are
# written now, on the host: no lazy init in the guest competing with vtld.
new_image() {
	truncate -s "$IMAGE_SIZE" "$1" || { echo "FAIL: truncate $1" >&2; exit 1; }
	mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 -N 4096 "$1" ||
		{ echo "FAIL: mkfs.ext4 $1" >&2; exit 1; }
}
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
barcode() { printf 'P%05dL8' "$1"; }
lines() { if [ -f "$1" ]; then wc -l <"$1"; else echo 0; fi; }
now() { date +%s.%N; }
since() { awk -v t0="$1" -v t1="$(now)" 'BEGIN { printf "%.1f", t1 - t0 }'; }

# boot B CHECK ACKED NEXT [NAME=VALUE]: starts VM number B on the image $img in the background (its files
# in $tmp/boot-B), on a fresh host port.
boot() {
	out=$tmp/boot-$1
	rm -rf "$out" "$tmp/qemu.pid"
	mkdir -p "$out"
	port=$(free_port)
	python3 "$here/run_vm.py" "$build" "$here/guest_powercut.sh" "$out" "VTL_BUILD=$build" "VTL_CHECK=$2" \
		"VTL_ACKED=$3" "VTL_NEXT=$4" "VTL_CACHE=$cache" ${5:+"$5"} --disk "$img:$cache" --cut-seed "$(cut_seed "$1")" \
		${cut_keep:+--cut-keep "$cut_keep"} --hostfwd "$port:$GUEST_PORT" --pidfile "$tmp/qemu.pid" \
		--timeout "$BOOT_LIMIT" >"$out/run_vm.out" 2>&1 &
	vm=$!
	booted=$(now)
}

# cut_seed B: the seed of the volatile disk's cut at the end of boot B: its trial's (boot B is cut
# during trial B), the first seed for the controls' boots.
cut_seed() {
	case $1 in *[!0-9]*) echo "$seed0" ;; *) echo $((seed0 + $1)) ;; esac
}

# cut_note: what the volatile disk kept at the cut that ended the boot in $out ("" in other modes).
cut_note() {
	[ "$cache" = volatile ] || return 0
	if [ -s "$out/cut.out" ]; then
		echo "; disk cache $(sed -n 's/^cut: seed [0-9]*, //p' "$out/cut.out" | head -1)"
	else
		echo "; the volatile disk printed no cut (see $(basename "$out")/nbd.log)"
	fi
}

# await FILE: waits until the guest has written FILE in its results; 1 (with why) if the VM ends first.
await() {
	[ -n "$vm" ] || { why="the guest had ended before $1"; return 1; }
	i=0
	until [ -e "$out/$1" ]; do
		kill -0 "$vm" 2>/dev/null || { wait "$vm"; vm=""; why="the guest ended before $1: $(tail -3 "$out/guest.log" 2>/dev/null | tr '\n' ' ')"; return 1; }
		i=$((i + 1))
		[ "$i" -le $((UP_LIMIT * 20)) ] || { why="no $1 from the guest within $UP_LIMIT s"; return 1; }
		sleep $POLL
	done
}

# shutdown: the last boot powers off by itself, with exit status 0.
shutdown() {
	[ -n "$vm" ] || { why="the last guest had ended before"; return 1; }
	wait "$vm"
	rc=$?
	vm=""
	[ "$rc" -eq 0 ] || { why="the last guest ended with $rc: $(tail -3 "$out/guest.log" | tr '\n' ' ')"; return 1; }
}

# verify T: the host reads trial T's cartridge back; the guest then checks the catalog. Sets vwhy, cwhy.
verify() {
	vwhy="" cwhy=""
	t0=$(now)
	if timeout $HOST_LIMIT "$HOST" verify "127.0.0.1:$port" $IQN $SLOT "$((seed0 + $1))" "$tmp/record-$1" \
		>"$tmp/verify-$1.out" 2>&1; then
		echo "ok" >"$out/verified"
	else
		vwhy="verify: $(tail -1 "$tmp/verify-$1.out")"
		echo "failed" >"$out/verified"
	fi
	verified="$(tail -1 "$tmp/verify-$1.out") ($(since "$t0") s)"
	if await check.out; then
		case $(cat "$out/check.out") in ok*) ;; *) cwhy="catalog: $(cat "$out/check.out")" ;; esac
	else
		cwhy="catalog: $why"
	fi
}

# cut T: the host writes trial T's cartridge; qemu is killed as the trial's kind says. Sets wwhy, written.
cut() {
	wwhy="" written=""
	rec=$tmp/record-$1
	rm -f "$rec"
	timeout $HOST_LIMIT "$HOST" write "127.0.0.1:$port" $IQN $SLOT "$((seed0 + $1))" "$rec" >"$tmp/write-$1.out" 2>&1 &
	wpid=$!
	want=1
	[ "$kind" = ack ] && want=$((1 + acks))
	i=0
	while [ "$(lines "$rec")" -lt "$want" ]; do
		kill -0 "$wpid" 2>/dev/null || break
		i=$((i + 1))
		[ "$i" -le $((HOST_LIMIT * 20)) ] || { wwhy="the host did not reach record line $want"; break; }
		sleep $POLL
	done
	[ "$kind" = ack ] || sleep "$delay"
	if ! kill -0 "$wpid" 2>/dev/null; then
		wwhy="the host ended before the power cut: $(tail -1 "$tmp/write-$1.out")"
	fi
	qemu_kill
	rc=1
	[ -z "$vm" ] || { wait "$vm"; rc=$?; }
	vm=""
	# 137 (128 + SIGKILL): run_vm saw qemu killed, not ended by itself before the cut.
	[ "$rc" -eq 137 ] || wwhy="${wwhy:-qemu had ended with status $rc before the power cut}"
	wait "$wpid"
	rc=$?
	wpid=""
	[ "$rc" -eq 0 ] || wwhy="${wwhy:-write (exit $rc): $(tail -1 "$tmp/write-$1.out")}"
	written=$(tail -1 "$tmp/write-$1.out")
	acked=$(tail -1 "$rec" 2>/dev/null)
	case $acked in '' | *[!0-9]*) acked=0 ;; esac
}

# report T: one line for trial T, and its logs when it failed.
report() {
	if [ -z "$wwhy$vwhy$cwhy" ]; then
		passed=$((passed + 1))
		echo "ok   trial $1/$trials $kind (seed $((seed0 + $1))): $what; acknowledged $acked_t; $verified; catalog consistent; $(($(date +%s) - tstart)) s"
	else
		failed=$((failed + 1))
		echo "FAIL trial $1/$trials $kind (seed $((seed0 + $1))): $what: $(echo "$wwhy $vwhy $cwhy" | sed 's/^ *//')"
		echo "     host's write: $written_t"
		for f in "write-$1.out" "verify-$1.out"; do
			[ -s "$tmp/$f" ] && sed "s/^/     $f | /" "$tmp/$f"
		done
		for b in "$tmp/boot-$1" "$out"; do
			sed "s/^/     $(basename "$b") guest | /" "$b/guest.log" 2>/dev/null
			tail -15 "$b/vtld.log" 2>/dev/null | sed "s/^/     $(basename "$b") vtld | /"
		done
	fi
}

# control_run NAME PARAM: a control's two boots on an image of its own: the first with the guest
# parameter PARAM serves a cartridge and the power goes at the 8th acknowledgement, the second verifies.
# Returns 1, with the FAIL line printed and counted, when a boot fails.
control_run() {
	img=$tmp/$1.img
	new_image "$img"
	kind=ack acks=8 delay=0 tstart=$(date +%s)
	boot "$1-1" none 0 "$(barcode 0)" "$2"
	if ! await write-ready; then
		echo "FAIL $1: $why"
		failed=$((failed + 1)) cut_keep=""
		return 1
	fi
	cut 0
	note=$(cut_note)
	cut_keep=""
	boot "$1-2" "$(barcode 0)" "$acked" none
	if ! await vtld-up; then
		echo "FAIL $1: after the cut: $why"
		failed=$((failed + 1))
		return 1
	fi
	verify 0
	shutdown || true
	rm -f "$img"
}

# control: the power cut under a vtld whose syncs do nothing must lose acknowledged data.
control() {
	control_run control VTL_NOSYNC=1 || return
	if [ -n "$wwhy" ]; then
		echo "FAIL control: $wwhy"
		failed=$((failed + 1))
	elif grep -q "acknowledged data is lost" "$tmp/verify-0.out"; then
		echo "ok   control: vtld without syncs, power cut at acknowledgement 8 (position $acked$note): $vwhy ($(($(date +%s) - tstart)) s)"
	else
		echo "FAIL control: vtld without syncs, power cut at acknowledgement 8 (position $acked), and the verify did not find acknowledged data lost: ${vwhy:-$verified}"
		failed=$((failed + 1))
	fi
}

# nobarrier_control: with ext4 mounted nobarrier, vtld's syncs stop at the disk's cache; a volatile
# cache that drops every unflushed write at the cut (cut_keep=0) must lose acknowledged data. Under the
# other cache modes the cut keeps whatever the guest wrote, so the same fault passes: printed, not counted.
nobarrier_control() {
	cut_keep=0
	control_run nobarrier VTL_NOBARRIER=1 || return
	what="ext4 nobarrier, power cut at acknowledgement 8 (position $acked$note)"
	if [ -n "$wwhy" ]; then
		echo "FAIL nobarrier control: $wwhy"
		failed=$((failed + 1))
	elif [ "$cache" != volatile ]; then
		echo "note nobarrier control under cache=$cache: $what: ${vwhy:-$verified}: the page-cache-only cut does not see a missing FLUSH"
	elif grep -q "acknowledged data is lost" "$tmp/verify-0.out"; then
		echo "ok   nobarrier control: $what: $vwhy ($(($(date +%s) - tstart)) s)"
	else
		echo "FAIL nobarrier control: $what, and the verify did not find acknowledged data lost: ${vwhy:-$verified}"
		failed=$((failed + 1))
	fi
}

echo "-- $trials power cuts, first seed $seed0 (VTL_POWERCUT_SEED=$seed0 repeats the choices), qemu cache=$cache"
passed=0
failed=0
t00=$(date +%s)
case $control in
0) ;;
nobarrier) nobarrier_control ;;
*) control; mig_control; [ "$cache" != volatile ] || nobarrier_control ;;
esac
img=$tmp/disk.img
new_image "$img"
boot 1 none 0 "$(barcode 1)" "$(mig_word 0)"
n=0
while [ "$n" -lt "$trials" ]; do
	n=$((n + 1))
	tstart=$(date +%s)
	seed=$((seed0 + n))
	kind=$(kind_of "$n")
	# Every choice of a trial comes from its seed (awk's srand takes up to 2^31 - 1).
	set -- $(awk -v s="$((seed % 2147483647))" 'BEGIN { srand(s); printf "%.2f %.2f %d\n", 0.05 + rand() * 0.95, 1 + rand() * 4,
		1 + int(rand() * 8) }')
	case $kind in early) delay=$1 ;; random) delay=$2 ;; ack) delay=0 ;; esac
	acks=$3
	! mig_is "$kind" || mig_choose "$n"
	case $kind in ack) what="power cut at acknowledgement $acks" ;; *) what="power cut $delay s into the writing" ;; esac
	! mig_is "$kind" || what=$mig_what
	wwhy="" vwhy="" cwhy="" verified="" why=""
	if ! await write-ready; then
		wwhy="boot $n: $why"
		written_t="" acked_t=""
		report "$n"
		echo "-- the image's state is unknown after a boot failed: the remaining $((trials - n)) trials count as failed"
		failed=$((failed + trials - n))
		break
	fi
	up=$(since "$booted")
	if mig_is "$kind"; then mig_cut "$n"; else cut "$n"; fi
	written_t=$written acked_t=$acked
	what="$what (boot to served $up s)"
	what="$what$(cut_note)"
	next=none
	[ "$n" -lt "$trials" ] && next=$(barcode $((n + 1)))
	boot $((n + 1)) "$(barcode "$n")" "$acked" "$next" "$(mig_word "$n")"
	if await vtld-up; then
		what="$what; vtld up after the cut in $(since "$booted") s"
		if mig_is "$kind"; then mig_verify "$n"; else verify "$n"; fi
	else
		vwhy="boot $((n + 1)): $why"
	fi
	[ "$n" -lt "$trials" ] || { shutdown || cwhy="${cwhy:-$why}"; }
	report "$n"
done
[ -z "$vm" ] || { qemu_kill; wait "$vm" 2>/dev/null; vm=""; }
echo "-- $trials power cuts in $(($(date +%s) - t00)) s"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
