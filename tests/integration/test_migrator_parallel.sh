#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# The drive scheduler of vtl-migrator with a simulated 4-drive library at a
# fixed rate (8 MB/s): vtld serves a library; a host (iscsi_fill) writes
# 16 MiB to each of eight cartridges. Asserted on what vtlctl and the
# catalog show, never on wall-clock speed:
#   - four copies queued at once run at the same time on four different
#     drives, each with its own tape (the drives' inventory shows four
#     different tapes, the catalog four tapes with one copy each), and every
#     copy verifies;
#   - with recall_drives = 0, a recall queued while all four copy stops
#     exactly one copy and completes; the stopped copy is queued again and
#     completes later;
#   - with recall_drives = 1, at most three copies run and a recall takes
#     the fourth drive without stopping any;
#   - a job pinned to a drive waits for that drive while the others are idle;
#     a native copy pinned to drive 2 and queued behind it, and one queued in
#     the catalog while the migrator is stopped, run after a restart as they
#     were asked for: native copies, each in its drive (catalog schema 6);
#   - vtlctl physical drives while four copies run: four busy drives, each
#     with its own job, cartridge and mounted tape, the ring and waits of its
#     job and the back-hitches the simulated drive counted; the table and
#     --json say the same; with the migrator stopped it says so; every drive
#     idle once the jobs end;
#   - kill -9 of the migrator while four copies run: the cartridges keep
#     what they had, the restarted migrator ends every job, every cartridge's
#     good copies verify, no job is left, and the catalog checks out.
#
# Usage: sh test_migrator_parallel.sh <build-dir>   (needs vtld, vtlctl, vtl-migrator, tests/integration/iscsi_fill)
set -eu

build=$(cd "${1:?usage: test_migrator_parallel.sh <build-dir>}" && pwd)
VTLD=$build/vtld
VTLCTL=$build/vtlctl
MIGRATOR=$build/vtl-migrator
FILL=$build/tests/integration/iscsi_fill
. "$(dirname "$0")/vtld_env.sh"
need_built "$VTLD" "$VTLCTL" "$MIGRATOR" "$FILL"
. "$(dirname "$0")/migrator_env.sh"
vtld_env vtl-parallel
trap '[ -z "$mpid" ] || kill "$mpid" 2>/dev/null || true; [ -z "$pid" ] || kill "$pid" 2>/dev/null || true
	rm -rf "$tmp"' EXIT INT TERM
iqn=iqn.2026-01.org.vtl:paralleltest
vtld_library $iqn PARL0001
mlog=$tmp/migrator.log
cat >>"$conf" <<CONF

[physical]
type = sim
name = simlib
generation = 8
drives = 4
slots = 14
tapes = 10
tape_capacity = 1G
rate = 8
load_ms = 100
locate_ms = 50
drive_buffer = 2M
backhitch_ms = 20
data_dir = ../physical

[migrator]
buffers = 8
buffer_size = 256K
readers = 2
verify = yes
recall_drives = 0

[policy]
premigrate = none
copy_pools = vault
CONF
"$VTLCTL" -c "$conf" cartridge add --barcode X00001L8 --count 8 >/dev/null

# watch_jobs SECONDS UNTIL: polls vtlctl --json jobs every 0.1 s until the Python expression UNTIL over
# run (the running jobs with their drive) and js (every job) holds, or SECONDS pass (then it fails).
# Prints the most jobs seen running at once and the most distinct drives they ran on.
watch_jobs() {
	python3 - "$VTLCTL" "$conf" "$1" "$2" <<'PY'
import json, subprocess, sys, time
vtlctl, conf, limit, until = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4]
most, drives, end = 0, 0, time.monotonic() + limit
while True:
    out = subprocess.run([vtlctl, "-c", conf, "--json", "jobs"], capture_output=True, text=True, check=True).stdout
    js = json.loads(out)["jobs"]
    run = [j for j in js if j["state"] == "running" and "drive" in j]
    most = max(most, len(run))
    drives = max(drives, len({j["drive"] for j in run}))
    if eval(until):
        print(most, drives)
        sys.exit(0)
    if time.monotonic() > end:
        print("timed out waiting for: " + until, file=sys.stderr)
        print(out, file=sys.stderr)
        sys.exit(1)
    time.sleep(0.1)
PY
}
# tape_of BARCODE: the tape of the cartridge's newest good copy.
tape_of() {
	"$VTLCTL" -c "$conf" --json cartridge show "$1" >"$tmp/show"
	json "$tmp/show" '[k["tape"] for k in d["copies"] if k["state"] == "good"][-1]'
}
inventory() {
	"$VTLCTL" -c "$conf" --json physical inventory >"$tmp/inv" || { cat "$tmp/inv" >&2; fail "physical inventory"; }
}
# watch_drives SECONDS UNTIL: polls vtlctl physical drives (--json, then the table) every 0.1 s until the
# Python expression UNTIL over rows (the table's rows as lists of columns) and ds (the JSON's drives) holds
# with both taken in the same round, or SECONDS pass (then it fails). Leaves the JSON in $tmp/drives.
watch_drives() {
	python3 - "$VTLCTL" "$conf" "$1" "$2" "$tmp/drives" <<'PY'
import json, subprocess, sys, time
vtlctl, conf, limit, until, keep = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4], sys.argv[5]
end = time.monotonic() + limit
while True:
    out = subprocess.run([vtlctl, "-c", conf, "--json", "physical", "drives"], capture_output=True, text=True,
                         check=True).stdout
    text = subprocess.run([vtlctl, "-c", conf, "physical", "drives"], capture_output=True, text=True, check=True).stdout
    ds = json.loads(out)["drives"]
    lines = text.splitlines()
    if lines[0].split()[:7] != ["LIBRARY", "DRIVE", "STATE", "JOB", "KIND", "CARTRIDGE", "TAPE"]:
        sys.exit("physical drives: unexpected header " + lines[0])
    rows = [l.split() for l in lines[1:]]
    if eval("(" + until + ")"):
        open(keep, "w").write(out)
        print(text, end="")
        sys.exit(0)
    if time.monotonic() > end:
        print("timed out waiting for: " + until, file=sys.stderr)
        print(text + out, file=sys.stderr)
        sys.exit(1)
    time.sleep(0.1)
PY
}
state_of() { # state_of JOB
	"$VTLCTL" -c "$conf" --json jobs >"$tmp/jobs"
	json "$tmp/jobs" "[j['state'] for j in d['jobs'] if j['id'] == $1][0]"
}

step "vtld up; a host writes 16 MiB to each of the eight cartridges"
vtld_start
for s in 1025 1026 1027 1028 1029 1030 1031 1032; do
	timeout 120 "$FILL" "127.0.0.1:$port" "$iqn" $s 16 >"$tmp/fill" 2>&1 || { cat "$tmp/fill" >&2; fail "iscsi_fill $s"; }
done

step "two cartridges are copied to the vault's tape and released (migrated), for the recalls below"
migrator_start
grep -q "4 drives of simlib run jobs, 0 of them kept for recalls" "$mlog" || fail "the migrator does not run jobs on all 4 drives"
ctl physical pool vault PHY010L8
for bc in X00005L8 X00006L8; do
	ctl migrate $bc
	job_ends "$(job_id)" done
	ctl release $bc
	[ "$(cache_of $bc)" = migrated ] || fail "$bc is not migrated after its release"
done
migrator_stop
sed -i 's/^copy_pools = vault$/copy_pools = default/' "$conf"

step "four copies queued at once run at the same time on four drives, each on its own tape"
migrator_start
for bc in X00001L8 X00002L8 X00003L8 X00004L8; do
	ctl migrate $bc
	echo "$(job_id)" >>"$tmp/copies"
done
seen=$(watch_jobs 60 'len({j["drive"] for j in run}) == 4')
echo "   | running at once: $seen"
inventory
busy=$(json "$tmp/inv" 'len([e for e in d["elements"] if e.get("state") == "busy"])')
tapes=$(json "$tmp/inv" 'len({e["barcode"] for e in d["elements"] if e.get("state") == "busy" and e["barcode"]})')
echo "   | busy drives: $busy; tapes in busy drives (distinct, as mounted so far): $tapes"
[ "$busy" -eq 4 ] || fail "physical inventory shows $busy drives busy, expected 4"

step "a recall while all four copy (recall_drives = 0) stops exactly one copy and completes"
ctl recall X00005L8
recall=$(job_id)
job_ends "$recall" done
[ "$(cache_of X00005L8)" = premigrated ] || fail "X00005L8 is not premigrated after its recall"
stops=$(grep -c "stops so that a recall gets a drive" "$mlog" || true)
[ "$stops" -eq 1 ] || { cat "$mlog" >&2; fail "$stops copies stopped for the recall, expected exactly 1"; }
stopped=$(sed -n 's/.*job \([0-9]*\): stopped on drive [0-9]* for a recall; queued again.*/\1/p' "$mlog")
[ -n "$stopped" ] || { cat "$mlog" >&2; fail "no copy says it was queued again for the recall"; }
echo "   | job $stopped stopped for the recall (job $recall) and was queued again"

step "the stopped copy completes later; every copy verified, each of the four on its own tape"
for j in $(cat "$tmp/copies"); do
	job_ends "$j" done
done
"$VTLCTL" -c "$conf" --json jobs >"$tmp/jobs"
later=$(json "$tmp/jobs" "[j['finished'] for j in d['jobs'] if j['id'] == $stopped][0] >= [j['finished'] for j in d['jobs'] if j['id'] == $recall][0]")
[ "$later" = True ] || fail "the stopped copy (job $stopped) did not end after the recall (job $recall)"
verified=$(grep -c "copied X0000[1-4]L8 to PHY0[0-9][0-9]L8 file 0: .*; verified; drive [0-3]" "$mlog" || true)
[ "$verified" -eq 4 ] || { cat "$mlog" >&2; fail "$verified of the 4 copies were verified on file 0 of a tape"; }
t1=$(tape_of X00001L8) t2=$(tape_of X00002L8) t3=$(tape_of X00003L8) t4=$(tape_of X00004L8)
echo "   | tapes: $t1 $t2 $t3 $t4"
[ "$(printf '%s\n' "$t1" "$t2" "$t3" "$t4" | sort -u | wc -l)" -eq 4 ] || fail "two copies went to one tape: $t1 $t2 $t3 $t4"
ctl physical list
for t in $t1 $t2 $t3 $t4; do
	grep -q "$t *simlib *default .*filling *1 " "$tmp/out" || fail "$t does not hold exactly one copy"
done
migrator_stop

step "recall_drives = 1: at most three copies run, and a recall takes the fourth drive, stopping none"
sed -i 's/^recall_drives = 0$/recall_drives = 1/' "$conf"
migrator_start
grep -q "4 drives of simlib run jobs, 1 of them kept for recalls" "$mlog" || fail "recall_drives = 1 is not in force"
: >"$tmp/copies"
for bc in X00001L8 X00002L8 X00003L8 X00004L8; do
	ctl migrate $bc
	echo "$(job_id)" >>"$tmp/copies"
done
seen=$(watch_jobs 60 'len(run) == 3')
ctl recall X00006L8
recall=$(job_id)
seen2=$(watch_jobs 60 '[j["state"] for j in js if j["id"] == '"$recall"'][0] in ("done", "failed")')
echo "   | most running at once: $seen before the recall, $seen2 with it"
job_ends "$recall" done
[ "${seen%% *}" -eq 3 ] || fail "$seen copies ran at once with recall_drives = 1, expected 3"
[ "$(grep -c "stops so that a recall gets a drive" "$mlog")" -eq 1 ] || fail "a copy was stopped although a drive was kept for the recall"
grep -q "recall job .* needs its tape" "$mlog" && fail "a copy held the recall's tape"
for j in $(cat "$tmp/copies"); do
	job_ends "$j" done
done
migrator_stop
sed -i 's/^recall_drives = 1$/recall_drives = 0/' "$conf"

step "a pinned job waits for its drive; a restart runs the queued native copy pinned to drive 2 as asked"
migrator_start
ctl migrate X00007L8 --drive 2 --rate 2
slow=$(job_id)
watch_jobs 60 '[j.get("drive") for j in run if j["id"] == '"$slow"'] == [2]' >/dev/null
ctl migrate X00008L8 --native --drive 2
pinned=$(job_id)
sleep 1
[ "$(state_of "$pinned")" = queued ] || fail "job $pinned, pinned to busy drive 2, did not wait for it"
inventory
idle=$(json "$tmp/inv" 'len([e for e in d["elements"] if e.get("state") == "idle"])')
[ "$idle" -eq 3 ] || fail "the other 3 drives are not idle while the pinned job waits ($idle idle)"
migrator_stop
[ "$(state_of "$slow")" = queued ] || fail "the interrupted job $slow is not queued again"
[ "$(state_of "$pinned")" = queued ] || fail "the pinned job $pinned is not queued after the stop"
asked=$(json "$tmp/jobs" "[(j['copy'], j['asked_drive'], j['rate']) for j in d['jobs'] if j['id'] in ($slow, $pinned)]")
echo "   | in the catalog, with the migrator stopped: jobs $slow and $pinned ask for $asked"
[ "$asked" = "[('stacked', 2, 2), ('native', 2, 0)]" ] || fail "the catalog does not keep what the jobs asked for: $asked"

step "a native copy pinned to drive 3, queued in the catalog while the migrator is stopped"
ctl migrate X00001L8 --native --drive 3
offline=$(job_id)
grep -q "(native); vtl-migrator is not running" "$tmp/out" || fail "vtlctl did not queue the native copy in the catalog"
migrator_start
ctl cancel "$slow"
for j in $pinned $offline; do
	job_ends "$j" done
done
inventory
for want in "X00008L8 258" "X00001L8 259"; do
	set -- $want
	t=$(tape_of "$1")
	at=$(json "$tmp/inv" '[e["address"] for e in d["elements"] if e["barcode"] == "'"$t"'"][0]')
	echo "   | $1: native copy on $t, which is in element $at"
	[ "$at" = "$2" ] || fail "the copy of $1 is on $t in element $at, not in drive $2"
done
ctl physical list
for bc in X00008L8 X00001L8; do
	t=$(tape_of "$bc")
	grep -q "$t *simlib *default .*native *1 " "$tmp/out" || fail "$t (the copy of $bc) is not a native tape"
done
migrator_stop

step "kill -9 while four copies run: after a restart every job ends, every good copy verifies"
migrator_start
: >"$tmp/copies"
for bc in X00001L8 X00002L8 X00003L8 X00004L8; do
	ctl migrate $bc
	echo "$(job_id)" >>"$tmp/copies"
done
watch_jobs 60 'len({j["drive"] for j in run}) == 4' >/dev/null
step "physical drives while the four copy: four busy drives, each its own job, cartridge and tape"
# Every busy drive streams (its ring reported) on the tape its job reserved, and the table's row of each
# drive names the same job, kind, cartridge and tape as the JSON.
watch_drives 30 'len([d for d in ds if d["state"] == "busy" and d["tape"] and d["tape"] == d["job_tape"]
	and d.get("ring_buffers") == 8]) == 4 and all([r[:7] for r in rows if r[1] == str(d["drive"])] ==
	[[d["library"], str(d["drive"]), "busy", str(d["job"]), d["job_kind"], d["barcode"], d["tape"]]] for d in ds)' \
	>"$tmp/dtext" || fail "physical drives did not show the four copies"
sed 's/^/   | /' "$tmp/dtext"
jobs=$(json "$tmp/drives" 'sorted(x["job"] for x in d["drives"] if x["state"] == "busy")')
want=$(python3 -c 'import sys; print(sorted(int(x) for x in sys.argv[1:]))' $(cat "$tmp/copies"))
[ "$jobs" = "$want" ] || fail "physical drives shows jobs $jobs on the busy drives, the copies are $want"
[ "$(json "$tmp/drives" 'len({x["barcode"] for x in d["drives"]})')" -eq 4 ] || fail "two drives copy one cartridge"
[ "$(json "$tmp/drives" 'len({x["tape"] for x in d["drives"]})')" -eq 4 ] || fail "two drives hold one tape"
[ "$(json "$tmp/drives" 'd["ring_buffer_size"]')" -eq 262144 ] || fail "the answer's ring buffer size is not 256K"
[ "$(json "$tmp/drives" 'all(x["ring_bytes"] == x["ring_full"] * 262144 and 0 <= x["ring_full"] <= 8
	for x in d["drives"])')" = True ] || fail "a drive's ring fill is not its full buffers of 256 KiB each"
[ "$(json "$tmp/drives" 'all(x["backhitches_counted"] and x["writer_wait_ms"] >= 0 and x["mb_s"] >= 0
	for x in d["drives"])')" = True ] || fail "a simulated drive's back-hitches are not counted by the drive"
kill -KILL "$mpid"
wait "$mpid" 2>/dev/null || true
mpid=""
for bc in X00001L8 X00002L8 X00003L8 X00004L8; do
	[ "$(cache_of $bc)" = premigrated ] || fail "$bc is $(cache_of $bc) after the kill, expected premigrated"
done
migrator_start
for j in $(cat "$tmp/copies"); do
	job_ends "$j" done
done
: >"$tmp/verifies"
for bc in X00001L8 X00002L8 X00003L8 X00004L8; do
	ctl verify $bc
	echo "$(job_id)" >>"$tmp/verifies"
done
for j in $(cat "$tmp/verifies"); do
	job_ends "$j" done
done
"$VTLCTL" -c "$conf" --json jobs >"$tmp/jobs"
left=$(json "$tmp/jobs" 'len([j for j in d["jobs"] if j["state"] in ("queued", "running")])')
[ "$left" -eq 0 ] || fail "$left jobs are left queued or running"
step "physical drives once the jobs ended: every drive idle, without a job"
watch_drives 10 'len(ds) == 4 and all(d["state"] == "idle" and "job" not in d for d in ds) and
	len(rows) == 4 and all(r[2] == "idle" and r[3] == "-" for r in rows)' >"$tmp/dtext" ||
	fail "physical drives does not show four idle drives"
sed 's/^/   | /' "$tmp/dtext"
ctl physical drives --library simlib
[ "$(grep -c "^simlib " "$tmp/out")" -eq 4 ] || fail "physical drives --library simlib does not list its 4 drives"
"$VTLCTL" -c "$conf" physical drives --library nowhere >"$tmp/out" 2>&1 && fail "physical drives took an unknown library"
grep -q "nowhere" "$tmp/out" || fail "physical drives --library nowhere does not say which library is unknown"
migrator_stop
"$VTLCTL" -c "$conf" physical drives >"$tmp/out" 2>&1 && fail "physical drives succeeded without vtl-migrator"
grep -q "vtl-migrator is not running" "$tmp/out" || { cat "$tmp/out" >&2; fail "physical drives does not say vtl-migrator is not running"; }
vtld_stop
ctl catalog check
echo "test_migrator_parallel: all steps passed"
