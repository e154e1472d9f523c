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
# Usage: sh test_damage.sh <build-dir>   (needs vtld, vtlctl, tests/integration/iscsi_tape)
set -eu

. "$(dirname "$0")/vtld_env.sh"
build=$(cd "${1:?usage: test_damage.sh <build-dir>}" && pwd)
VTLD=$build/vtld VTLCTL=$build/vtlctl CLIENT=$build/tests/integration/iscsi_tape
need_built "$VTLD" "$VTLCTL" "$CLIENT"
vtld_env vtl-damage
iqn=iqn.2026-01.org.vtl:dtest
vtld_library $iqn DAMAGE0001
# One block per segment file: segment N holds object N until the first filemark.
sed -i 's|^member = ../pool/m0$|member = ../pool/m0\nsegment_size = 64K|' "$conf"
grep -q '^segment_size = 64K$' "$conf" || fail "could not set segment_size"
"$VTLCTL" -c "$conf" cartridge add --barcode I00001L8 --count 1 >/dev/null

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
vtld_stop
echo "test_damage: all steps passed"
