#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Host ingest first (docs/migrator.md): while a host writes over iSCSI, vtld
# tells vtl-migrator what its hosts move, and a copy reads the pool only with
# what is left of [migrator] pool_rate, never below its drive's lowest
# matched speed nor copy_floor. The simulated drive streams at 12 MB/s and
# matches speed down to a third of that, 4 MB/s: a copy's floor is 5 % above,
# 4.2 MB/s; copy_floor is 2 MB/s, below it, so that the floor the copy gets
# can only come from its drive. pool_rate is 1 MB/s, so that any host traffic
# (the host here loads, writes and unloads in turn: its rate varies) leaves
# the copy exactly that floor of 4.2 MB/s. Asserted:
#   - vtlctl status shows the hosts' traffic and the rule; vtlctl jobs shows
#     the copy held to its drive's floor (not the operator's lower 2 MB/s)
#     while the host writes, and the pool's live figures;
#   - the copy moves no faster than its floor then (an upper bound: a slow
#     machine makes it slower, never faster);
#   - once the host stops, the limit goes (vtld reports 0) and the copy
#     completes at the drive's speed; the copy is good;
#   - with pool_rate = auto (vtlctl reload) and the host writing again, a
#     second copy is never held below its floor, the probe's budget never
#     below the floors, and vtlctl jobs shows the probe's figures.
#
# Usage: sh test_ingest.sh <build-dir>   (needs vtld, vtlctl, vtl-migrator, tests/integration/iscsi_fill)
set -eu

build=$(cd "${1:?usage: test_ingest.sh <build-dir>}" && pwd)
VTLD=$build/vtld
VTLCTL=$build/vtlctl
MIGRATOR=$build/vtl-migrator
FILL=$build/tests/integration/iscsi_fill
. "$(dirname "$0")/vtld_env.sh"
need_built "$VTLD" "$VTLCTL" "$MIGRATOR" "$FILL"
. "$(dirname "$0")/migrator_env.sh"
. "$(dirname "$0")/daemon_env.sh"
vtld_env vtl-ingest
hostpid=""
trap '[ -z "$hostpid" ] || kill "$hostpid" 2>/dev/null || true; [ -z "$mpid" ] || kill "$mpid" 2>/dev/null || true
	[ -z "$pid" ] || kill "$pid" 2>/dev/null || true; rm -rf "$tmp"' EXIT INT TERM
iqn=iqn.2026-01.org.vtl:ingesttest
vtld_library $iqn INGS0001
mlog=$tmp/migrator.log
mport=$(free_port)
migrator_conf physical.rate=12 migrator.verify=no migrator.pool_rate=1 migrator.copy_floor=2 \
	migrator.http=127.0.0.1:$mport >>"$conf" || fail "migrator_conf"
murl=http://127.0.0.1:$mport
"$VTLCTL" -c "$conf" cartridge add --barcode G00001L8 --count 3 >/dev/null

jobs_json() {
	"$VTLCTL" -c "$conf" --json jobs >"$tmp/jobs" || { cat "$tmp/jobs" >&2; fail "vtlctl jobs"; }
}
# until_jobs SECONDS EXPR: polls vtlctl --json jobs until EXPR over d holds, or fails after SECONDS.
until_jobs() {
	end=$(($(date +%s) + $1))
	while :; do
		jobs_json
		[ "$(json "$tmp/jobs" "$2")" = True ] && return 0
		[ "$(date +%s)" -lt "$end" ] || { cat "$tmp/jobs" >&2; fail "timed out waiting for: $2"; }
		sleep 0.2
	done
}

step "vtld up; a host writes 40 MiB to G00001L8 and 80 MiB to G00003L8, the cartridges to copy"
vtld_start
timeout 120 "$FILL" "127.0.0.1:$port" "$iqn" 1025 40 >"$tmp/fill" 2>&1 || { cat "$tmp/fill" >&2; fail "iscsi_fill"; }
timeout 120 "$FILL" "127.0.0.1:$port" "$iqn" 1027 80 >"$tmp/fill" 2>&1 || { cat "$tmp/fill" >&2; fail "iscsi_fill"; }
migrator_start

# host_writes: a host writes G00002L8 over and over in the background until $tmp/host.stop exists.
host_writes() {
	rm -f "$tmp/host.stop"
	: >"$tmp/host.log"
	(
		while [ ! -e "$tmp/host.stop" ]; do
			timeout 120 "$FILL" "127.0.0.1:$port" "$iqn" 1026 64 >>"$tmp/host.log" 2>&1 || exit 1
		done
	) &
	hostpid=$!
}
# host_stops: ends host_writes' loop after its current write.
host_stops() {
	touch "$tmp/host.stop"
	wait "$hostpid" || { cat "$tmp/host.log" >&2; fail "the host's writes failed"; }
	hostpid=""
	sed 's/^/   | host: /' "$tmp/host.log" | tail -3
}

step "a host writes G00002L8 over and over; vtld reports its traffic to the migrator"
host_writes
until_jobs 30 'd["ingest"]["host_mb_s"] > 0'
echo "   | the migrator hears: hosts move $(json "$tmp/jobs" 'd["ingest"]["host_mb_s"]') MB/s"
ctl status
grep -q "^hosts move [0-9.]* MB/s through the drives; host ingest first: copies read what is left of 1 MB/s, each at least its drive's lowest matched speed and 2 MB/s" "$tmp/out" ||
	fail "vtlctl status does not show the hosts' traffic and the rule"
grep -q "^  the pool gives [0-9.]* MB/s: hosts [0-9.]*, copies 0.0; the copies' budget 0.0 MB/s, their floors 0.0$" "$tmp/out" ||
	fail "vtlctl status does not show the rule's live figures (no copy runs yet)"

step "a copy queued while the host writes is held to its drive's floor of 4.2 MB/s (12 / 3 and 5 %), not copy_floor's 2"
ctl migrate G00001L8
job=$(job_id)
until_jobs 30 "[j for j in d['jobs'] if j['id'] == $job][0]['state'] == 'running' and d['ingest']['copies'] == 1"
until_jobs 10 "[j for j in d['jobs'] if j['id'] == $job][0]['bytes'] > 0"
b0=$(json "$tmp/jobs" "[j for j in d['jobs'] if j['id'] == $job][0]['bytes']")
t0=$(date +%s.%N)
sleep 3
jobs_json
b1=$(json "$tmp/jobs" "[j for j in d['jobs'] if j['id'] == $job][0]['bytes']")
t1=$(date +%s.%N)
limit=$(json "$tmp/jobs" 'd["ingest"]["copy_limit_mb_s"]')
host=$(json "$tmp/jobs" 'd["ingest"]["host_mb_s"]')
state=$(json "$tmp/jobs" "[j for j in d['jobs'] if j['id'] == $job][0]['state']")
rate=$(python3 -c "print(round(($b1 - $b0) / ($t1 - $t0) / 1e6, 1))")
echo "   | hosts move $host MB/s; the copy may read $limit MB/s and moved $rate MB/s over $(python3 -c "print(round($t1 - $t0, 1))") s ($state)"
ctl jobs
grep -q "^host ingest first: hosts move [0-9.]* MB/s; each of 1 copies reads at most 4.2 MB/s (pool_rate 1, copy_floor 2 MB/s)" "$tmp/out" ||
	{ cat "$mlog" >&2; fail "vtlctl jobs does not show the copy held to its floor"; }
grep -q "^  the pool gives [0-9.]* MB/s: hosts [0-9.]*, copies [0-9.]*; the copies' budget 0.0 MB/s, their floors 4.2$" "$tmp/out" ||
	fail "vtlctl jobs does not show the pool's live figures (nothing left of pool_rate 1, the copy's floor 4.2)"
grep -q "a copy is never held below 4.2 MB/s, 5 % above 4.0 MB/s, the lowest speed its drives match (the simulated drive's model)" "$mlog" ||
	{ cat "$mlog" >&2; fail "the migrator does not log its drives' floor"; }
[ "$limit" = 4.2 ] || fail "the copy's limit is $limit MB/s while the host writes, expected its drive's floor 4.2"
[ "$state" = running ] || fail "the 40 MiB copy ended within 3 s at a 4.2 MB/s limit ($state)"
# The job's bytes come from progress reports up to 0.5 s old: a second more at the floor, and 20 % slack.
python3 -c "import sys; sys.exit(0 if $b1 - $b0 <= 4.2e6 * ($t1 - $t0 + 1) * 1.2 else 1)" ||
	fail "the copy moved $rate MB/s while held to 4.2 MB/s"

step "the host stops: the limit goes, and the copy completes at the drive's speed"
host_stops
until_jobs 30 "d['ingest']['host_mb_s'] == 0"
job_ends "$job" done
grep -q "job $job: copied G00001L8 to " "$mlog" || { cat "$mlog" >&2; fail "no copy of G00001L8 in the log"; }
[ "$(cache_of G00001L8)" = premigrated ] || fail "G00001L8 is not premigrated after its copy"

step "pool_rate = auto: while the host writes again, a copy never goes below its floor, nor the budget below the floors"
sed -i 's/^pool_rate = 1$/pool_rate = auto/' "$conf"
grep -q "^pool_rate = auto$" "$conf" || fail "the test's configuration has no pool_rate = 1 line to change"
ctl reload
host_writes
until_jobs 30 'd["ingest"]["host_mb_s"] > 0 and d["ingest"]["auto"]'
ctl migrate G00003L8
job2=$(job_id)
until_jobs 30 "[j for j in d['jobs'] if j['id'] == $job2][0]['state'] == 'running' and d['ingest']['copies'] == 1"
ctl jobs
grep -q "^host ingest first: hosts move [0-9.]* MB/s; .* (pool_rate auto, copy_floor 2 MB/s)$" "$tmp/out" ||
	fail "vtlctl jobs does not show pool_rate auto"
grep -q "; the hosts' reference [0-9.]* MB/s, [0-9]* drops$" "$tmp/out" || fail "vtlctl jobs does not show the probe's figures"
# Sampled for 4 s: whenever the rule holds the copy (the host's rate varies between its writes; a
# stale report means none), its limit is at least its floor and the budget at least the floors.
held=0 mheld=0
for i in $(seq 20); do
	jobs_json
	r=$(json "$tmp/jobs" "'held' if d['ingest']['copy_limit_mb_s'] > 0 else 'free'")
	if [ "$r" = held ]; then
		[ "$(json "$tmp/jobs" "d['ingest']['copy_limit_mb_s'] >= 4.2 and d['ingest']['budget_mb_s'] >= d['ingest']['floors_mb_s'] == 4.2")" = True ] ||
			{ cat "$tmp/jobs" >&2; fail "under pool_rate = auto a copy went below its floor of 4.2 MB/s"; }
		held=$((held + 1))
		# /metrics shows the rule too: with the copy's floor of 4.2 MB/s, a budget never under it while held.
		f=$(metric "$murl" vtl_migrator_ingest_copy_floors_bytes_per_second) h=$(metric "$murl" vtl_migrator_ingest_held)
		b=$(metric "$murl" vtl_migrator_ingest_copy_budget_bytes_per_second)
		[ -n "$f" ] && [ -n "$h" ] && [ -n "$b" ] && [ -n "$(metric "$murl" vtl_migrator_ingest_probe_drops_total)" ] ||
			fail "/metrics lacks the rule's series"
		if [ "$f" = 4200000 ] && [ "$h" = 1 ]; then
			[ "$b" -ge "$f" ] || fail "/metrics: held with a budget of $b B/s, under the floor of $f"
			mheld=$((mheld + 1))
		fi
	fi
	sleep 0.2
done
echo "   | /metrics showed the copy held, its floor 4200000 B/s and the budget not under it, in $mheld samples"
[ "$mheld" -gt 0 ] || fail "/metrics never showed the rule holding the copy while vtlctl jobs did"
echo "   | the rule held the copy in $held of 20 samples, never below its floor"
[ "$held" -gt 0 ] || fail "pool_rate = auto never held the copy while the host wrote"
host_stops
job_ends "$job2" done
[ "$(cache_of G00003L8)" = premigrated ] || fail "G00003L8 is not premigrated after its copy"
grep -E "hosts (move|stopped)" "$mlog" | sed 's/^/   | migrator: /'
migrator_stop
vtld_stop
echo "test_ingest: all steps passed"
