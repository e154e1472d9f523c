#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# A damaged cartridge as an operator sees it: a host writes a cartridge over
# iSCSI (iscsi_tape: 24 blocks of 256 KiB in 3 files) into segments of 64 KiB
# (one block each); vtld stops; a middle segment file is cut short. Then
# `vtlctl cartridge show` names the damaged object and its segment file
# (table and JSON), no segment file is renamed away, and loading the
# cartridge into a drive logs a warning and adds the damage to the event log.
#
# Then the recovery of docs/operations.md, "A damaged cartridge", with
# vtl-migrator and a simulated LTO library: a host (iscsi_recall) writes
# I00002L8, which is copied to tape and verified (premigrated), and
# I00003L8, which is not; a segment file of each is cut short. The plain
# `vtlctl release` refuses the damaged disk copy and names --force; `vtlctl
# release --force` refuses I00003L8 (no good copy: nothing changes) and gives
# up I00002L8's, saying so and logging it as forced; the host's next load
# recalls I00002L8 from tape and reads every block back intact.
#
# Usage: sh test_damage.sh <build-dir>   (needs vtld, vtlctl, vtl-migrator, tests/integration/iscsi_tape,
#        tests/integration/iscsi_recall)
set -eu

. "$(dirname "$0")/vtld_env.sh"
build=$(cd "${1:?usage: test_damage.sh <build-dir>}" && pwd)
VTLD=$build/vtld VTLCTL=$build/vtlctl CLIENT=$build/tests/integration/iscsi_tape
MIGRATOR=$build/vtl-migrator HOST=$build/tests/integration/iscsi_recall
need_built "$VTLD" "$VTLCTL" "$CLIENT" "$MIGRATOR" "$HOST"
. "$(dirname "$0")/migrator_env.sh"
. "$(dirname "$0")/daemon_env.sh"
vtld_env vtl-damage
# The exit trap of vtld_env stops vtld; this one stops the migrator too, by PID.
trap '[ -z "$mpid" ] || kill "$mpid" 2>/dev/null || true; [ -z "$pid" ] || kill "$pid" 2>/dev/null || true
	rm -rf "$tmp"' EXIT INT TERM
iqn=iqn.2026-01.org.vtl:dtest
vtld_library $iqn DAMAGE0001
mlog=$tmp/migrator.log
: >"$mlog"
# One block per segment file: segment N holds object N until the first filemark.
sed -i 's|^member = ../pool/m0$|member = ../pool/m0\nsegment_size = 64K|' "$conf"
grep -q '^segment_size = 64K$' "$conf" || fail "could not set segment_size"
migrator_conf >>"$conf" || fail "the simulated library's configuration"
"$VTLCTL" -c "$conf" cartridge add --barcode I00001L8 --count 3 >/dev/null

step "a host writes the cartridge (iscsi_tape)"
vtld_start
timeout 120 "$CLIENT" "127.0.0.1:$port" "$iqn" >"$tmp/client" 2>&1 || { sed 's/^/   /' "$tmp/client"; fail "iscsi_tape failed"; }
vtld_stop

seg=$tmp/pool/m0/I00001L8/00000005.seg
[ -f "$seg" ] || fail "no segment file $seg"
step "segment file 00000005.seg is cut short inside its only record"
truncate -s 1000 "$seg"

step "vtlctl cartridge show names the damage"
"$VTLCTL" -c "$conf" cartridge show I00001L8 >"$tmp/show" 2>"$tmp/show.err" || fail "cartridge show failed"
sed 's/^/   | /' "$tmp/show"
grep -q '^damaged  *objects 5\.\.5 unreadable (segment cut short, segment file 00000005.seg)$' "$tmp/show" ||
	fail "cartridge show does not name the damaged object"
grep -q 'recall it from a good tape copy' "$tmp/show" || fail "cartridge show does not say what to do"
grep -q 'cartridge I00001L8: damaged: segment cut short in segment file 00000005.seg: objects 5..5 unreadable' \
	"$tmp/show.err" || fail "no warning naming the damage"
"$VTLCTL" -c "$conf" --json cartridge show I00001L8 >"$tmp/show.json" 2>/dev/null || fail "cartridge show --json failed"
python3 - "$tmp/show.json" <<'PY' || fail "cartridge show --json: damage not listed"
import json, sys
p = json.load(open(sys.argv[1]))["pool"]
assert p["damaged_ranges"] == 1 and p["damaged_objects"] == 1, p
d = p["damage"][0]
assert (d["first_object"], d["objects"], d["kind"], d["segment"]) == (5, 1, "segment cut short", 5), d
PY
[ -z "$(find "$tmp/pool" -name '*.orphan')" ] || fail "a segment file was renamed away"

step "loading it logs the damage and adds it to the event log"
vtld_start
"$VTLCTL" -c "$conf" move 1025 257 >/dev/null || fail "move into the drive failed"
"$VTLCTL" -c "$conf" events >"$tmp/events" || fail "vtlctl events failed"
grep -q 'vtld .*cartridge I00001L8: damaged: segment cut short in segment file 00000005.seg: objects 5..5 unreadable, loaded in drive' \
	"$tmp/events" || { sed 's/^/   | /' "$tmp/events"; fail "no damage event"; }
grep 'damaged' "$tmp/events" | sed 's/^/   | /'
grep -q 'warn .*cartridge I00001L8: damaged: segment cut short' "$log" || fail "vtld logged no warning"

BLOCKS=16 # 4 MiB of pseudo-random blocks of 256 KiB, one per segment file, then a filemark
DRIVE=258 # LUN 2: I00001L8 stays in drive 257
host() { # host MODE SLOT SEED
	timeout 300 "$HOST" "127.0.0.1:$port" "$iqn" "$1" "$2" $DRIVE 2 $BLOCKS "$3" >"$tmp/host" 2>&1 ||
		{ cat "$tmp/host" >&2; cat "$mlog" >&2 2>/dev/null || true; fail "iscsi_recall $1 (slot $2)"; }
	sed 's/^/   | /' "$tmp/host"
}
# refused ARGS...: vtlctl must fail (non-zero); its words are in $tmp/out.
refused() {
	if "$VTLCTL" -c "$conf" "$@" >"$tmp/out" 2>&1; then sed 's/^/   | /' "$tmp/out"; fail "vtlctl $* succeeded"; fi
	sed 's/^/   | /' "$tmp/out"
}

step "a host writes I00002L8 and I00003L8; vtl-migrator copies I00002L8 to tape, verified (premigrated)"
host write 1026 21
host write 1027 22
migrator_start
ctl migrate I00002L8
job_ends "$(job_id)" done
[ "$(cache_of I00002L8)" = premigrated ] || fail "I00002L8 is $(cache_of I00002L8), not premigrated"

step "a segment file of each is cut short: the plain release refuses the damaged disk copy and names --force"
truncate -s 1000 "$tmp/pool/m0/I00002L8/00000005.seg"
truncate -s 1000 "$tmp/pool/m0/I00003L8/00000007.seg"
refused release I00002L8
grep -q 'I00002L8: its disk copy is damaged: objects 5\.\.5 unreadable (segment cut short, segment file 00000005.seg); not released: vtlctl release --force I00002L8 gives it up for a good tape copy' \
	"$tmp/out" || fail "the refusal does not say the disk copy is damaged and what to do"
[ "$(cache_of I00002L8)" = premigrated ] || fail "the refused release changed I00002L8"

step "release --force refuses I00003L8, which has no good copy on tape, and changes nothing"
refused release --force I00003L8
grep -q 'I00003L8 is resident, not premigrated: only a cartridge whose data has a verified copy on physical tape' \
	"$tmp/out" || fail "the forced release of I00003L8 does not say why it refuses"
[ "$(cache_of I00003L8)" = resident ] || fail "the refused release changed I00003L8"
"$VTLCTL" -c "$conf" cartridge show I00003L8 2>/dev/null | grep -q '^damaged  *objects 7\.\.7 unreadable' ||
	fail "I00003L8's disk copy is not as it was"

step "release --force gives up I00002L8's damaged disk copy for its verified tape copy, and logs it as forced"
ctl release --force I00002L8
grep -q '^release I00002L8 forced: its damaged disk copy ([0-9]* bytes) given up for its copy on PHY001L8 file 0 ([0-9]* bytes, crc32c-blocks:[0-9a-f]*, verified); it is migrated, the next load or vtlctl recall restores it whole' \
	"$tmp/out" || fail "the forced release does not say what it did"
[ "$(cache_of I00002L8)" = migrated ] || fail "I00002L8 is $(cache_of I00002L8), not migrated"
ctl events
grep -q 'policy .*release I00002L8 forced: ' "$tmp/out" || fail "the event log does not hold the forced release"
grep -q 'policy .*release I00002L8 refused: I00002L8: its disk copy is damaged' "$tmp/out" ||
	fail "the event log does not hold the refused plain release"

step "the host loads I00002L8: it is recalled from tape and every block reads back intact"
host read 1026 21
grep -q '^read: ' "$tmp/host" || fail "the host's read did not complete"
# The host may read the last block before the stage has closed: premigrated within 60 s.
cache_becomes I00002L8 premigrated
"$VTLCTL" -c "$conf" cartridge show I00002L8 >"$tmp/show" 2>&1 || fail "cartridge show I00002L8 failed"
if grep -q '^damaged' "$tmp/show"; then sed 's/^/   | /' "$tmp/show"; fail "I00002L8 is still damaged after its recall"; fi
grep -q "recalled I00002L8 from PHY001L8 file 0" "$tmp/out" 2>/dev/null || ctl events
grep -q "recalled I00002L8 from PHY001L8 file 0" "$tmp/out" || fail "the event log does not hold the recall"

migrator_stop
vtld_stop
echo "test_damage: all steps passed"
