#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Recall end to end, as a restore sees it: vtld serves the library over
# iSCSI, vtl-migrator copies to a simulated LTO library whose drive is slow
# on purpose (8 MB/s, with load and locate times), so that a stage back
# takes a few seconds. A host (iscsi_recall) writes 24 MiB to a cartridge;
# it is copied (premigrated) and its disk copy released (migrated). Then:
#   - the host loads it with MOVE MEDIUM: the drive says NOT READY /
#     becoming ready, then serves the blocks while the stage still runs
#     (read-through: the first block comes long before the last), bit-exact;
#     the cartridge ends premigrated and the recall job is done;
#   - with two copies and the newer one corrupted on the physical tape, the
#     recall falls back to the older copy (the event log says so), bit-exact;
#   - vtl-migrator killed (SIGKILL) in the middle of a recall: the host
#     waits; the restarted migrator resumes the recall and the host's read
#     completes bit-exact;
#   - vtld killed (SIGKILL) in the middle of a recall: restarted, the
#     cartridge is still in the drive, the stage ends, and it reads back;
#   - a host appending to a premigrated cartridge makes it resident and its
#     physical copies invalid.
#
# Usage: sh test_recall.sh <build-dir>   (needs vtld, vtlctl, vtl-migrator, tests/integration/iscsi_recall)
set -eu

. "$(dirname "$0")/vtld_env.sh"
. "$(dirname "$0")/migrator_env.sh"
. "$(dirname "$0")/daemon_env.sh"
build=$(cd "${1:?usage: test_recall.sh <build-dir>}" && pwd)
VTLD=$build/vtld
VTLCTL=$build/vtlctl
MIGRATOR=$build/vtl-migrator
HOST=$build/tests/integration/iscsi_recall
need_built "$VTLD" "$VTLCTL" "$MIGRATOR" "$HOST"

vtld_env vtl-recall
hpid=""
trap '[ -z "$mpid" ] || kill "$mpid" 2>/dev/null || true; [ -z "$hpid" ] || kill "$hpid" 2>/dev/null || true
	[ -z "$pid" ] || kill "$pid" 2>/dev/null || true; rm -rf "$tmp"' EXIT INT TERM
iqn=iqn.2026-01.org.vtl:recalltest
vtld_library $iqn RECL0001
mlog=$tmp/migrator.log
# The slow drive: 8 MB/s with load and locate times, and the simulated drive's own back-hitch (3 s) after a
# flush or a stop; 8 buffers; no read-back of a copy.
migrator_conf physical.rate=8 physical.load_ms=400 physical.locate_ms=200 physical.backhitch_ms= \
	migrator.buffers=8 migrator.verify=no >>"$conf" || fail "the simulated library's configuration"
"$VTLCTL" -c "$conf" cartridge add --barcode R00001L8 --count 3 >/dev/null
BLOCKS=96     # 24 MiB of pseudo-random blocks: about 3 s at 8 MB/s
DRIVE=257     # LUN 1
host() { # host MODE SLOT SEED [log]
	timeout 300 "$HOST" "127.0.0.1:$port" "$iqn" "$1" "$2" $DRIVE 1 $BLOCKS "$3" >"$tmp/host" 2>&1 ||
		{ cat "$tmp/host" >&2; cat "$mlog" >&2; fail "iscsi_recall $1 (slot $2)"; }
	sed 's/^/   | /' "$tmp/host"
}
expect_cache() {
	c=$(cache_of "$1")
	[ "$c" = "$2" ] || fail "$1 is $c, expected $2"
}
# migrated BARCODE: copies it (job done), then releases its disk copy.
migrated() {
	ctl migrate "$1"
	job_ends "$(job_id)" done
	expect_cache "$1" premigrated
	ctl release "$1"
	expect_cache "$1" migrated
}
# read_in_background: a host reads R00001L8 (slot 1025) in the background (hpid); returns once its first block is in.
read_in_background() {
	rm -f "$tmp/progress"
	RECALL_PROGRESS=$tmp/progress timeout 300 "$HOST" "127.0.0.1:$port" "$iqn" read 1025 $DRIVE 1 $BLOCKS 11 \
		>"$tmp/host" 2>&1 &
	hpid=$!
	i=0
	until [ -s "$tmp/progress" ]; do
		i=$((i + 1))
		[ "$i" -le 600 ] || { cat "$tmp/host" >&2; fail "the host's first block did not come within 60 s"; }
		sleep 0.1
	done
}
# read_check: the read-through figures of the last host read
read_check() {
	line=$(grep "^read: " "$tmp/host")
	becoming=$(echo "$line" | sed 's/.*becoming ready \([0-9]*\) times.*/\1/')
	first=$(echo "$line" | sed 's/.*first block after \([0-9]*\) ms.*/\1/')
	last=$(echo "$line" | sed 's/.*last block after \([0-9]*\) ms.*/\1/')
	[ "$becoming" -ge 1 ] || fail "the drive never said NOT READY / becoming ready"
	[ $((last - first)) -ge 1000 ] ||
		fail "the blocks did not follow the stage (first at $first ms, last at $last ms): no read-through"
}

step "vtld and vtl-migrator up; a host writes 24 MiB to R00001L8 and R00002L8"
vtld_start
migrator_start
host write 1025 11
host write 1026 22

step "R00001L8 is copied to physical tape, then its disk copy is released"
migrated R00001L8
ctl cartridge show R00001L8
grep -q "pool *0 objects" "$tmp/out" || fail "the released cartridge still holds data in the pool"

step "a host loads it: becoming ready, then read-through while the stage runs, bit-exact"
host read 1025 11
read_check
cache_becomes R00001L8 premigrated
ctl jobs
grep -q "recall *R00001L8 *done" "$tmp/out" || fail "jobs does not show the recall done"
ctl events
grep -q "a host loaded migrated cartridge R00001L8: recall queued" "$tmp/out" || fail "no event for the host's recall"

step "two copies, the newer one corrupted on tape: the recall falls back to the older one"
ctl migrate R00002L8
job_ends "$(job_id)" done
# A host write would invalidate the first copy; a second copy of the same data is made by hand instead.
ctl migrate R00002L8
job_ends "$(job_id)" done
ctl release R00002L8
tape=$tmp/physical/PHY001L8.tape
size=$(stat -c %s "$tape")
# The newer copy is the last third of the tape (R00001L8, then R00002L8 twice): damage its middle.
printf 'XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX' |
	dd of="$tape" bs=1 seek=$((size - size / 6)) conv=notrunc 2>/dev/null
host read 1026 22
cache_becomes R00002L8 premigrated
ctl events
grep -q "recall of R00002L8 from PHY001L8 file 2 failed" "$tmp/out" || fail "no event for the damaged copy"
grep -q "recalled R00002L8 from PHY001L8 file 1" "$tmp/out" || fail "the recall did not fall back to file 1"
ctl cartridge show R00002L8
grep -q "PHY001L8 file 2, .*bad" "$tmp/out" || fail "the damaged copy is not marked bad"

step "vtl-migrator killed in the middle of a recall: the host waits, the restarted one resumes"
# The kills must land while the recall runs, after the host's first block and a vtlctl call, which
# on a loaded machine can take seconds: from here the drive moves 2 MB/s (12 s for 24 MiB).
migrator_stop
sed -i 's/^rate = 8$/rate = 2/' "$conf"
grep -q '^rate = 2$' "$conf" || fail "the simulated drive's rate is not in the configuration"
migrator_start
ctl release R00001L8
read_in_background
ctl jobs
grep -q "recall *R00001L8 *running" "$tmp/out" || fail "jobs does not show the recall running"
kill -KILL "$mpid"
wait "$mpid" 2>/dev/null || true
mpid=""
expect_cache R00001L8 recalling
sleep 1
kill -0 "$hpid" 2>/dev/null || { cat "$tmp/host" >&2; fail "the host did not wait for the recall"; }
migrator_start
wait "$hpid" || { cat "$tmp/host" >&2; cat "$mlog" >&2; fail "the host's read after the restart"; }
hpid=""
sed 's/^/   | /' "$tmp/host"
grep -q "^read: $BLOCKS blocks bit-exact" "$tmp/host" || fail "the host did not read everything back"
cache_becomes R00001L8 premigrated

step "vtld killed in the middle of a recall: restarted, its drive follows the stage again"
ctl release R00001L8
read_in_background
kill -KILL "$pid"
wait "$pid" 2>/dev/null || true
pid=""
# The host's session is gone (libiscsi would keep trying to log in again): it ends here.
kill "$hpid" 2>/dev/null || true
wait "$hpid" 2>/dev/null || true
hpid=""
vtld_start
ctl status
grep -q "257 .*R00001L8" "$tmp/out" || fail "the restarted vtld does not show R00001L8 in drive 257"
cache_becomes R00001L8 premigrated
ctl unload 257
host read 1025 11
grep -q "^read: $BLOCKS blocks bit-exact" "$tmp/host" || fail "R00001L8 does not read back after vtld's restart"

step "a host appends to premigrated R00001L8: it becomes resident and its copy invalid"
host append 1025 33
expect_cache R00001L8 resident
ctl cartridge show R00001L8
grep -q "PHY001L8 file 0, .*invalid" "$tmp/out" || fail "the copy of R00001L8 was not invalidated"
ctl events
grep -q "a host writes R00001L8: 1 physical copies invalidated" "$tmp/out" || fail "no event for the invalidation"

migrator_stop
vtld_stop
echo "test_recall: all steps passed"
