#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Disk faults under a host writing over iSCSI: vtld runs with fault_shim.so
# preloaded (a byte budget on the segment files, after which writes fail with
# ENOSPC; an fdatasync that fails with EIO when a trigger file appears, and
# then loses what was written since the last good sync; a write that fails
# with EIO when another trigger file appears), and the libiscsi host
# iscsi_faults writes, checks the SSC answers and reads back what the drive
# acknowledged (see both files' header comments):
#
# - a full disk: VOLUME OVERFLOW with EOM (0Dh, 00h/02h) at the write that
#   does not fit; UNLOAD GOOD; every block and filemark acknowledged GOOD
#   reads back after a load, and again after a vtld restart; once there is
#   space again the same tape takes more;
# - a failed fdatasync at a WRITE FILEMARKS: that command, the next WRITE and
#   WRITE FILEMARKS, and the UNLOAD get MEDIUM ERROR, WRITE ERROR (03h,
#   0Ch/00h); after a load the tape holds exactly what the last GOOD WRITE
#   FILEMARKS covered, byte for byte, and writing works again;
# - the synchronizing commands: a buffered WRITE and a WRITE FILEMARKS with
#   IMMED do not sync; REWIND, SPACE, LOCATE, ERASE, UNLOAD and a WRITE in
#   buffered mode 0 do, and each reports its failed sync as a deferred
#   MEDIUM ERROR;
# - a write to the disk that fails (EIO): that WRITE gets MEDIUM ERROR, WRITE
#   ERROR as a current error, then the same fence as after a failed sync;
# - early warning: with SEW 1 the WRITE that reaches it syncs (its failed
#   sync is the deferred MEDIUM ERROR), the buffered WRITEs before it do not;
# - vtld stopping (SIGTERM) with a tape loaded syncs it; when that sync fails,
#   vtld logs the cartridge and the error and exits 3 (not 0); `vtlctl
#   unload` of a tape whose sync fails moves it home, fails and says why, and
#   logs it.
#
# vtld built with AddressSanitizer (make asan): the sanitizer's runtime must
# come first among the preloaded libraries, so it is preloaded before the shim.
#
# Usage: sh test_faults.sh <build-dir>   (needs vtld, vtlctl, tests/integration/iscsi_faults and fault_shim.so)
set -eu

here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:?usage: test_faults.sh <build-dir>}" && pwd)
REAL_VTLD=$build/vtld
VTLCTL=$build/vtlctl
HOST=$build/tests/integration/iscsi_faults
SHIM=$build/tests/integration/fault_shim.so
for x in "$REAL_VTLD" "$VTLCTL" "$HOST"; do
	[ -x "$x" ] || { echo "FAIL: $x is missing; build it with 'make'" >&2; exit 1; }
done
[ -f "$SHIM" ] || { echo "FAIL: $SHIM is missing; build it with 'make'" >&2; exit 1; }

# Bytes the segment files may take before ENOSPC: about 17 of iscsi_faults' blocks (16..96 KiB), and
# not a multiple of anything, so that the budget ends inside a record.
SPACE_BUDGET=1000003
# Space back: far more than the rest of the test writes.
SPACE_PLENTY=1000000000
APPEND_BLOCKS=4
FULL_SLOT=1025
SYNC_SLOT=1026
POINTS_SLOT=1027
WRITE_SLOT=1028
EW_SLOT=1029
STOP_SLOT=1030
CTL_SLOT=1031
DRIVE_ELEMENT=257
# A tape small enough to reach early warning in about 30 blocks: its window is one largest write (8 MiB and a
# record header, wider than capacity/50), so that no block can jump over it to the end of the medium.
EW_CAPACITY=10M
# vtld's exit status when a loaded cartridge's final sync failed at a stop (vtl/vtld/main.c, docs/operations.md).
EXIT_UNSYNCED=3

. "$here/vtld_env.sh"
vtld_env vtl-faults
iqn=iqn.2026-01.org.vtl:faults
vtld_library $iqn FAULTS0001
"$VTLCTL" -c "$conf" cartridge add --barcode F00001L8 --count 4 >/dev/null || fail "vtlctl cartridge add"
"$VTLCTL" -c "$conf" cartridge add --barcode E00001L8 --capacity $EW_CAPACITY --slot $EW_SLOT >/dev/null ||
	fail "vtlctl cartridge add --capacity $EW_CAPACITY"
"$VTLCTL" -c "$conf" cartridge add --barcode S00001L8 --slot $STOP_SLOT >/dev/null || fail "vtlctl cartridge add"
"$VTLCTL" -c "$conf" cartridge add --barcode U00001L8 --slot $CTL_SLOT >/dev/null || fail "vtlctl cartridge add"

preload=$SHIM
asan=$(ldd "$REAL_VTLD" | awk '$1 ~ /^libasan\.so/ { print $3 }')
if [ -n "$asan" ]; then
	preload="$asan $SHIM"
	echo "-- vtld is built with AddressSanitizer: preloading $asan before the shim"
fi
space=$tmp/space
trigger=$tmp/sync-fault
wtrigger=$tmp/write-fault
# vtld_start runs $VTLD: a wrapper that execs vtld with the shim, so $pid is vtld's own.
VTLD=$tmp/vtld-faulty
cat >"$VTLD" <<EOF
#!/bin/sh
LD_PRELOAD="$preload" VTL_FAULT_SPACE="$space" VTL_FAULT_SYNC_TRIGGER="$trigger" VTL_FAULT_WRITE_TRIGGER="$wtrigger" VTL_FAULT_SYNC_LOSE=1 exec "$REAL_VTLD" "\$@"
EOF
chmod +x "$VTLD"

portal=127.0.0.1:$port
host() {
	"$HOST" "$portal" $iqn "$@" >"$tmp/host.out" 2>&1 || { sed 's/^/   | /' "$tmp/host.out" >&2; fail "iscsi_faults $*"; }
	sed 's/^/   /' "$tmp/host.out"
}
restart() {
	vtld_stop
	vtld_start
}

echo $SPACE_BUDGET >"$space"
step "vtld with fault_shim.so listens on $portal; the segment files may take $SPACE_BUDGET bytes"
vtld_start

step "a full disk in the middle of the writes (slot $FULL_SLOT)"
host enospc $FULL_SLOT "$tmp/full.manifest"
grep -q "fault_shim: write of .*\(ENOSPC\|short write\)" "$log" || fail "the shim injected no ENOSPC"
step "after an unload and a load, the tape holds every acknowledged object, and nothing else"
host verify $FULL_SLOT "$tmp/full.manifest"
step "space back ($SPACE_PLENTY bytes): the same tape takes $APPEND_BLOCKS blocks and a filemark at end of data"
echo $SPACE_PLENTY >"$space"
host append $FULL_SLOT "$tmp/full.manifest" $APPEND_BLOCKS
host verify $FULL_SLOT "$tmp/full.manifest"
step "after a vtld restart, the same"
restart
host verify $FULL_SLOT "$tmp/full.manifest"

step "fdatasync fails at a WRITE FILEMARKS (slot $SYNC_SLOT)"
rm -f "$trigger"
host syncfail $SYNC_SLOT "$tmp/sync.manifest" "$trigger"
grep -q "fault_shim: sync of fd [0-9]*: EIO, unsynced bytes dropped" "$log" || fail "the shim injected no fdatasync failure that lost data"
step "after a load, the tape holds what the last GOOD WRITE FILEMARKS covered, and writing works"
host verify $SYNC_SLOT "$tmp/sync.manifest"
host append $SYNC_SLOT "$tmp/sync.manifest" $APPEND_BLOCKS
host verify $SYNC_SLOT "$tmp/sync.manifest"
step "which commands sync (slot $POINTS_SLOT): each fails at its fdatasync, a buffered WRITE and WFM IMMED do not sync"
host syncpoints $POINTS_SLOT "$tmp/points.manifest" "$trigger"
step "after a load, the tape holds what each round's GOOD WRITE FILEMARKS covered, and nothing else"
host verify $POINTS_SLOT "$tmp/points.manifest"
step "a WRITE whose write to the disk fails (slot $WRITE_SLOT)"
host writefail $WRITE_SLOT "$tmp/write.manifest" "$wtrigger"
grep -q "fault_shim: write of [0-9]* bytes to fd [0-9]*: EIO" "$log" || fail "the shim injected no write failure"
step "after a load, the tape holds the two files before it, and writing works"
host verify $WRITE_SLOT "$tmp/write.manifest"
host append $WRITE_SLOT "$tmp/write.manifest" $APPEND_BLOCKS
host verify $WRITE_SLOT "$tmp/write.manifest"
step "early warning (slot $EW_SLOT, $EW_CAPACITY): the WRITE that reaches it syncs, none before it"
host earlywarning $EW_SLOT "$tmp/ew.manifest" "$trigger"
host verify $EW_SLOT "$tmp/ew.manifest"
step "vtld stopping (SIGTERM) with a tape loaded syncs it; that sync fails (slot $STOP_SLOT): exit $EXIT_UNSYNCED, logged"
host leave $STOP_SLOT "$tmp/stop.manifest"
: >"$trigger"
kill -TERM "$pid"
st=0
wait "$pid" || st=$?
pid=""
[ ! -e "$trigger" ] || fail "vtld stopped without syncing the loaded tape"
[ "$st" -eq $EXIT_UNSYNCED ] || fail "vtld exited with status $st after the final sync of S00001L8 failed (expected $EXIT_UNSYNCED)"
grep -q "error drive [^ ]*: the final sync of cartridge S00001L8 failed (I/O error)" "$log" ||
	fail "vtld did not log the cartridge whose final sync failed"
grep -q "error stopped, but a loaded cartridge could not be synced" "$log" || fail "vtld did not log its failed stop"
echo "   vtld exited $st: $(grep "the final sync of cartridge S00001L8" "$log" | sed 's/^[^ ]* [^ ]* //')"
vtld_start
"$VTLCTL" -c "$conf" unload $DRIVE_ELEMENT >"$tmp/unload" 2>&1 || fail "vtlctl unload $DRIVE_ELEMENT: $(cat "$tmp/unload")"
host verify $STOP_SLOT "$tmp/stop.manifest"
step "vtlctl unload of a tape whose close fails to sync (slot $CTL_SLOT): it goes home, and vtlctl says so"
host leave $CTL_SLOT "$tmp/ctl.manifest"
: >"$trigger"
if "$VTLCTL" -c "$conf" unload $DRIVE_ELEMENT >"$tmp/unload" 2>&1; then
	fail "vtlctl unload succeeded over a failed sync: $(cat "$tmp/unload")"
fi
[ ! -e "$trigger" ] || fail "vtlctl unload did not sync the tape"
grep -q "U00001L8 was unloaded to $CTL_SLOT, but the drive at $DRIVE_ELEMENT reported an error as it let go of it" \
	"$tmp/unload" || fail "vtlctl unload: $(cat "$tmp/unload")"
grep -q "error unload: U00001L8 was unloaded" "$log" || fail "vtld logged no error for the failed unload"
echo "   $(cat "$tmp/unload")"
host verify $CTL_SLOT "$tmp/ctl.manifest"
step "after a vtld restart, the seven tapes read back"
restart
host verify $CTL_SLOT "$tmp/ctl.manifest"
host verify $STOP_SLOT "$tmp/stop.manifest"
host verify $EW_SLOT "$tmp/ew.manifest"
host verify $SYNC_SLOT "$tmp/sync.manifest"
host verify $FULL_SLOT "$tmp/full.manifest"
host verify $POINTS_SLOT "$tmp/points.manifest"
host verify $WRITE_SLOT "$tmp/write.manifest"

vtld_stop
echo "test_faults: all steps passed"
