#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Runs in the guest for tests/kernel/test_powercut.sh, once per boot: vtld
# serves a library whose pool and catalog are on the virtio disk /dev/vda (an
# ext4 image file on the host), listening on the guest's port 3260, which qemu
# forwards to the host. A host program outside the guest writes to it and the
# host kills qemu with SIGKILL: the power cut. The next boot mounts the same
# disk (ext4 replays its journal), starts vtld (which repairs the cartridge it
# finds in the drive), lets the host read the cartridge back, then stops vtld
# and checks the catalog against the pool.
#
# Parameters (NAME=VALUE on the kernel command line):
#   VTL_CHECK  the cartridge the last boot wrote when the power went, or none
#   VTL_ACKED  the last position the host recorded as acknowledged for it
#   VTL_NEXT   the cartridge to create and serve for the host to write, or none
#   VTL_BUILD  the build tree (vtld, vtlctl)
#   VTL_NOSYNC 1: the vtld that serves VTL_NEXT runs with nosync_shim.so preloaded (fsync and
#              fdatasync do nothing): the control that shows the test sees a loss
#   VTL_CACHE  the host's disk cache mode (test_powercut.sh's VTL_POWERCUT_CACHE); volatile: the
#              trials' boots write dirty pages back within a second (eager_writeback), so that at the
#              cut the disk's cache, not only the page cache, holds what vtld had not synced yet
#   VTL_NOBARRIER 1: before vtld serves VTL_NEXT, the disk is remounted with ext4's nobarrier (no
#              cache FLUSH reaches the disk: vtld's fdatasync stops at the disk's write cache): the
#              control that shows a volatile disk cache (test_powercut.sh's volatile mode) loses it
#   VTL_MIG    CHECK,NEXT[,tapenosync]: when VTL_CHECK's or VTL_NEXT's trial is one of the
#              migrator kinds (copy, release, recall), guest_powercut_mig.sh checks or serves
#              it instead of the steps below (vtl-migrator beside vtld, tapes on the same disk)
# Talks to the host through files in /results (a 9p share): it writes
# vtld-up (vtld serves VTL_CHECK), check.out and write-ready (vtld serves
# VTL_NEXT); the host writes verified once its read-back is done.
set -u
. "$(dirname "$0")/guest_lib.sh"
# The library's configuration and the daemons' start and stop, shared with the integration tests.
. "$(dirname "$0")/../integration/daemon_env.sh"
# Each step with the guest's uptime: where a boot's time goes.
step() { echo "-- [$(cut -d' ' -f1 /proc/uptime) s] $*"; }
build=${VTL_BUILD:?}
mnt=/mnt/vtl
conf=$mnt/etc/vtl.conf
vlog=/results/vtld.log
GUEST_PORT=3260          # iSCSI's well-known port (RFC 7143, 13.1); qemu forwards the host's port to it
SLOT=1025                # the library's first storage slot, where iscsi_crashwrite expects the cartridge
CAPACITY=2G              # far more than a trial writes; the image holds one trial's cartridge at a time
HOST_WAIT=600            # seconds the host may take to read back, or to kill the power once served
vpid=""

bail() {
	echo "FAIL: $*"
	echo "-- vtld's log (last 30 lines):"
	tail -30 "$vlog" 2>/dev/null | sed 's/^/  vtld| /'
	[ -z "$vpid" ] || kill -TERM "$vpid" 2>/dev/null
	exit 1
}
# note NAME TEXT: tells the host, in one rename, that NAME is done.
note() { printf '%s\n' "$2" >"/results/.$1" && mv "/results/.$1" "/results/$1"; }
ctl() { "$build/vtlctl" -c "$conf" "$@"; }
# Seconds since the date +%s.%N in $1.
since() { awk -v t0="$1" -v t1="$(date +%s.%N)" 'BEGIN { printf "%.1f", t1 - t0 }'; }

# vtld_up [PRELOAD]: starts vtld (with PRELOAD as LD_PRELOAD, if given) and waits (60 s at most: a repair
# reads the cartridge's last segment) for this start's "ready:".
vtld_up() {
	before=$(grep -c "ready:" "$vlog" 2>/dev/null || true)
	t0=$(date +%s.%N)
	LD_PRELOAD=${1:-} "$build/vtld" -c "$conf" 2>>"$vlog" &
	vpid=$!
	daemon_ready vpid "$vlog" "ready:" "${before:-0}" 60 || bail "vtld $why"
	echo "-- vtld $vpid ready in $(since "$t0") s"
}
vtld_down() { daemon_stop vpid || bail "vtld $why"; }

# host_done NAME: waits (HOST_WAIT s at most) until the host has written /results/NAME; 1 if it has not.
host_done() {
	i=0
	until [ -e "/results/$1" ]; do
		i=$((i + 1))
		[ "$i" -le $((HOST_WAIT * 10)) ] || return 1
		sleep 0.1
	done
}

# catalog_check: vtlctl catalog check (both daemons stopped), its output shown; sets problems to what
# it found, or to nothing when the catalog and the pool agree.
catalog_check() {
	step "the catalog against the pool"
	problems=""
	ctl catalog check >/tmp/check.out 2>&1 ||
		problems="vtlctl catalog check failed: $(tail -3 /tmp/check.out | tr '\n' ' ')"
	cat /tmp/check.out
}

# trial_done BARCODE VERDICT: tells the host the checks' verdict (problems, or VERDICT when there are
# none) and removes the cartridge: the next trial gets a fresh one (a rewrite from BOT could
# legitimately show the old stream).
trial_done() {
	note check.out "${problems:-$2}"
	run ctl cartridge remove --force "$1" >/dev/null || bail "vtlctl cartridge remove $1"
}
. "$(dirname "$0")/guest_powercut_mig.sh"

# eager_writeback: the flusher writes a dirty page back once it is EXPIRE_CS old, looking every
# WRITEBACK_CS (the defaults, 30 s and 5 s, keep a trial's unsynced pages in the page cache until
# vtld's fdatasync, which flushes them at once): unsynced pages then reach the disk's volatile cache
# and are in the cut's subset. The controls keep the defaults: what they prove must not rest on it.
EXPIRE_CS=50
WRITEBACK_CS=20
eager_writeback() {
	echo $EXPIRE_CS >/proc/sys/vm/dirty_expire_centisecs &&
		echo $WRITEBACK_CS >/proc/sys/vm/dirty_writeback_centisecs || fail "eager writeback"
	echo "-- dirty pages written back after $EXPIRE_CS cs, looked at every $WRITEBACK_CS cs"
}

# nobarrier: the control's disk from now on gets no FLUSH from ext4 (journal commits, fsync, fdatasync);
# what came before (the fresh cartridge in the catalog) is flushed first, so only vtld's data is at risk.
nobarrier() {
	sync
	run mount -o remount,nobarrier "$mnt" || bail "remount nobarrier"
	grep " $mnt " /proc/mounts | grep -q nobarrier || bail "no nobarrier in /proc/mounts"
	echo "-- control: $mnt remounted nobarrier: syncs stop at the disk's write cache"
}

step "the disk"
# virtio_blk and ext4 come from the initramfs (run_vm.py); modprobe, seconds through 9p, only if not.
for m in virtio_blk ext4; do
	[ -d "/sys/module/$m" ] || modprobe "$m" || fail "modprobe $m"
done
i=0
until [ -b /dev/vda ]; do
	i=$((i + 1)); [ "$i" -le 50 ] || fail "no /dev/vda"; sleep 0.1
done
mkdir -p "$mnt"
t0=$(date +%s.%N)
run mount -t ext4 /dev/vda "$mnt" || fail "mount /dev/vda"
echo "-- mounted in $(since "$t0") s; the disk's write cache: $(cat /sys/block/vda/queue/write_cache)"
dmesg | grep -i "EXT4-fs (vda)" | sed 's/^/  kernel| /'
# The durability under test rests on the guest knowing the disk caches writes (virtio-blk WCE), so that
# ext4 and the block layer send a FLUSH where a sync needs one; without it a volatile cache loses synced data.
[ "$(cat /sys/block/vda/queue/write_cache)" = "write back" ] || fail "the disk shows no write cache"
if [ "${VTL_CACHE:-}" = volatile ] && [ "${VTL_NOSYNC:-0}" != 1 ] && [ "${VTL_NOBARRIER:-0}" != 1 ]; then
	eager_writeback
fi

if [ ! -e "$conf" ]; then
	step "first boot: a library on the disk"
	mkdir -p "$mnt/etc"
	# The guest's port is reachable only through qemu's forward, which the host binds to its 127.0.0.1.
	crash_library_conf powercut PWRCUT0001 $GUEST_PORT iqn.2026-01.org.vtl:powercut iscsi.listen=0.0.0.0 \
		iscsi.allow_anonymous=yes iscsi.advertise=none >"$conf" || fail "the library's configuration"
	run ctl init >/dev/null || fail "vtlctl init"
	sync
fi

mig_check_hook
if [ "${VTL_CHECK:-none}" != none ]; then
	step "vtld repairs $VTL_CHECK after the power cut; the host reads it back"
	vtld_up
	note vtld-up "$VTL_CHECK"
	host_done verified || bail "the host did not read back within $HOST_WAIT s"
	echo "-- the host's read-back: $(cat /results/verified)"
	vtld_down
	catalog_check
	ctl --json cartridge show "$VTL_CHECK" >/tmp/show.json || problems="$problems; vtlctl cartridge show failed"
	# vtlctl's JSON has one key a line; python would take seconds to start under emulation.
	eod=$(sed -n 's/^ *"eod": \([0-9]*\),*$/\1/p' /tmp/show.json | head -1)
	echo "-- the catalog: $VTL_CHECK ends at object ${eod:-?}; the host recorded ${VTL_ACKED} as acknowledged"
	if [ -z "$eod" ] || [ "$eod" -lt "${VTL_ACKED:?}" ]; then
		problems="$problems; the catalog's end of data (${eod:-none}) is before the acknowledged position $VTL_ACKED"
	fi
	trial_done "$VTL_CHECK" "ok: the catalog and the pool agree; end of data $eod >= acknowledged $VTL_ACKED"
fi

mig_serve_hook
if [ "${VTL_NEXT:-none}" != none ]; then
	step "a fresh $VTL_NEXT for the host to write"
	run ctl cartridge add --barcode "$VTL_NEXT" --slot "$SLOT" --capacity "$CAPACITY" >/dev/null ||
		bail "vtlctl cartridge add $VTL_NEXT"
	preload=""
	if [ "${VTL_NOSYNC:-0}" = 1 ]; then
		preload=$build/tests/integration/nosync_shim.so
		[ -r "$preload" ] || bail "no $preload"
		echo "-- control: vtld's fsync and fdatasync do nothing ($preload)"
	fi
	[ "${VTL_NOBARRIER:-0}" != 1 ] || nobarrier
	vtld_up "$preload"
	note write-ready "$VTL_NEXT"
	# The host cuts the power while it writes: this sleep is where the guest ends.
	sleep "$HOST_WAIT"
	bail "the power was not cut within $HOST_WAIT s"
fi
run umount "$mnt" || fail "umount"
