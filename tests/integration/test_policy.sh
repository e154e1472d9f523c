#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# The cache policy end to end. vtld serves a library on a free loopback port
# over a 24 MiB pool (member_quota); a host (iscsi_fill) writes cartridges:
#   - with vtl-migrator stopped, the pool passes [policy] throttle: vtlctl
#     status says host writes are throttled, and the next cartridge is
#     written at about throttle_rate, slowed but never failed;
#   - vtl-migrator starts with a simulated LTO library: its policy copies
#     every idle cartridge (premigrated), and as the pool is above the
#     high-water mark releases disk copies, least recently used first, until
#     it is at the low-water mark (vtlctl cartridge list shows migrated
#     cartridges, vtlctl policy what the passes did);
#   - vtld sees the space released by the other process: status shows the
#     fill down and writes at full speed, and a new cartridge that would not
#     have fit is written;
#   - vtlctl release refuses a resident cartridge and releases a premigrated one.
#
# Usage: sh test_policy.sh <build-dir>   (needs vtld, vtlctl, vtl-migrator, tests/integration/iscsi_fill)
set -eu

. "$(dirname "$0")/vtld_env.sh"
. "$(dirname "$0")/daemon_env.sh"
build=$(cd "${1:?usage: test_policy.sh <build-dir>}" && pwd)
VTLD=$build/vtld
VTLCTL=$build/vtlctl
MIGRATOR=$build/vtl-migrator
FILL=$build/tests/integration/iscsi_fill
need_built "$VTLD" "$VTLCTL" "$MIGRATOR" "$FILL"

vtld_env vtl-policy
mpid=""
# The exit trap of vtld_env stops vtld; this one stops the migrator too, by PID.
trap '[ -z "$mpid" ] || kill "$mpid" 2>/dev/null || true; [ -z "$pid" ] || kill "$pid" 2>/dev/null || true
	rm -rf "$tmp"' EXIT INT TERM
iqn=iqn.2026-01.org.vtl:policytest
vtld_library $iqn POLICY0001
mlog=$tmp/migrator.log
# A small pool: 24 MiB, in segments of 1 MiB.
sed -i 's|^member = ../pool/m0$|member = ../pool/m0\nmember_quota = 24M\nsegment_size = 1M|' "$conf"
# The policy under test: a pass a second copies what stayed unmounted for a second, releases from 60 %
# of the pool down to 30 %, and vtld throttles hosts to 4 MB/s from 70 %.
migrator_conf physical.tape_capacity=256M policy.interval=1s policy.premigrate=idle policy.idle=1s \
	policy.high_water=60 policy.low_water=30 policy.throttle=70 policy.throttle_rate=4 >>"$conf" ||
	fail "the simulated library's configuration"
"$VTLCTL" -c "$conf" cartridge add --barcode P00001L8 --count 6 >/dev/null

ctl() {
	"$VTLCTL" -c "$conf" "$@" >"$tmp/out" 2>&1 || { sed 's/^/   | /' "$tmp/out" >&2; fail "vtlctl $* failed"; }
	sed 's/^/   | /' "$tmp/out"
}
# fill SLOT MIB: the host writes MIB MiB to the cartridge in SLOT; its line goes to $tmp/fill.
fill() {
	timeout 60 "$FILL" "127.0.0.1:$port" "$iqn" "$1" "$2" >"$tmp/fill" 2>&1 ||
		{ cat "$tmp/fill" >&2; cat "$mlog" >&2 2>/dev/null || true; fail "the host's writes to slot $1 failed"; }
	sed 's/^/   | /' "$tmp/fill"
}
# json FILE EXPR: evaluates the Python expression EXPR over the JSON document d in FILE, prints it.
json() {
	python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
print(eval(sys.argv[2]))' "$1" "$2"
}
cache_count() {
	"$VTLCTL" -c "$conf" --json cartridge list >"$tmp/carts" || fail "vtlctl cartridge list failed"
	json "$tmp/carts" "sum(1 for c in d['cartridges'] if c['cache'] == '$1')"
}

step "vtld up over a 24 MiB pool; a host writes 3 cartridges of 6 MiB: the pool passes the 70 % throttle mark"
vtld_start
fill 1025 6
fill 1026 6
fill 1027 6
sleep 1.2 # vtld measures the fill at most once a second
ctl status
grep -q "host writes THROTTLED to 4 MB/s" "$tmp/out" || fail "status does not say host writes are throttled"

step "the next cartridge is written at about 4 MB/s: slowed, not failed"
fill 1028 2
rate=$(sed -n 's/.*: \([0-9.]*\) MB\/s$/\1/p' "$tmp/fill")
python3 -c "import sys; sys.exit(0 if float('$rate') <= 6 else 1)" || fail "writes went at $rate MB/s, not throttled to 4"

step "vtl-migrator starts: the policy copies the idle cartridges and releases disk copies down to the low-water mark"
"$MIGRATOR" -c "$conf" 2>>"$mlog" &
mpid=$!
i=0
while :; do
	i=$((i + 1))
	[ "$i" -le 300 ] || { cat "$mlog" >&2; fail "the pool did not go below the high-water mark within 30 s"; }
	kill -0 "$mpid" 2>/dev/null || { cat "$mlog" >&2; fail "vtl-migrator exited"; }
	if "$VTLCTL" -c "$conf" --json policy >"$tmp/policy" 2>/dev/null &&
		[ "$(json "$tmp/policy" "int(d['fill_percent'] <= 30)")" = 1 ] &&
		[ "$(cache_count migrated)" -ge 2 ] && [ "$(cache_count resident)" -eq 2 ]; then
		break
	fi
	sleep 0.1
done
ctl policy
ctl cartridge list
migrated=$(cache_count migrated)
premigrated=$(cache_count premigrated)
echo "   $migrated migrated, $premigrated premigrated"
[ "$((migrated + premigrated))" -eq 4 ] || fail "the 4 written cartridges are not all copied"
[ "$(json "$tmp/policy" "int(d['last_fill_before'] >= 0 and d['passes'] > 0)")" = 1 ] || fail "policy shows no pass"
# The least recently used go first: the first cartridge written is released before the last.
[ "$(json "$tmp/carts" "[c['cache'] for c in d['cartridges'] if c['barcode'] == 'P00001L8'][0]")" = migrated ] ||
	fail "P00001L8, the least recently used, was not released"
grep -q "policy: pool .*; [1-9][0-9]* disk copies released" "$mlog" || fail "the migrator's log does not show the releases"
[ "$(json "$tmp/carts" "[c['eod'] for c in d['cartridges'] if c['barcode'] == 'P00001L8'][0]")" -gt 0 ] ||
	fail "the released cartridge lost its end of data in the catalog"

step "vtld sees the space released by vtl-migrator: writes at full speed again, and a 10 MiB cartridge fits"
sleep 1.2
ctl status
grep -q "host writes at full speed" "$tmp/out" || fail "status still says host writes are throttled"
fill 1029 10

step "vtlctl release: refuses a resident cartridge, releases a premigrated one"
if "$VTLCTL" -c "$conf" release P00006L8 >"$tmp/out" 2>&1; then fail "release of a blank resident cartridge succeeded"; fi
grep -q "P00006L8 is resident, not premigrated" "$tmp/out" || { cat "$tmp/out" >&2; fail "release does not say why it refuses"; }
bc=$(json "$tmp/carts" "([c['barcode'] for c in d['cartridges'] if c['cache'] == 'premigrated'] + [''])[0]")
if [ -n "$bc" ]; then
	ctl release "$bc"
	grep -q "released the disk copy of $bc" "$tmp/out" || fail "release of $bc does not say it released it"
	cache_count migrated >/dev/null
	[ "$(json "$tmp/carts" "[c['cache'] for c in d['cartridges'] if c['barcode'] == '$bc'][0]")" = migrated ] ||
		fail "$bc is not migrated after its release"
fi

step "both daemons stop cleanly"
kill -TERM "$mpid"
wait "$mpid" || { cat "$mlog" >&2; fail "vtl-migrator did not stop cleanly"; }
mpid=""
vtld_stop
echo "test_policy: all steps passed"
