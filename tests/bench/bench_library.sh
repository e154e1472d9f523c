#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# The library benchmark (issue 19): a running vtld and vtl-migrator with two
# simulated libraries, site (4 drives) and vault (1), (drive buffers of VTL_BENCH_LIB_BUFFER, 256M,
# so that a copy's average is its streaming rate, not the buffer's fill), for each generation in VTL_BENCH_LIB_GENS
# ("6 8": LTO-6 at 160 MB/s, then LTO-8 at 360 MB/s), each in a fresh folder
# under VTL_BENCH_DIR (/var/tmp). bench_library (the host, over iSCSI)
#   1. writes 5 cartridges of VTL_BENCH_LIB_MB MiB (4096) through drives 0..3;
#   2. baseline (ii): two hosts write VTL_BENCH_LIB_HOST_MB MiB (the same) each
#      to drives 4 and 5 of vtld, alone;
#   3. baseline (i): one copy alone (cartridge 1 to site's drive 0), beside
#      the model's native rate; then cartridge 5 is copied to the vault and
#      released (migrated);
#   4. four copies at once, pinned to site's drives 0..3, while the two hosts
#      write two fresh cartridges to drives 4 and 5 and, once the four run, a
#      host loads cartridge 5 into drive 6 (a recall on the vault's drive): its time to the
#      first block. Every second the copies' rates are sampled. This round runs
#      with no rule, under host ingest first with a constant pool_rate (the
#      hosts' rates alone added; VTL_BENCH_LIB_CONSTANT=no skips it), with
#      pool_rate = auto, and drives first (pool_rate = auto with copy_floor =
#      the drive's native rate; VTL_BENCH_LIB_DRIVES_FIRST=no skips it). The
#      rule's figures are medians of vtlctl --json jobs sampled each second.
# Printed: each copy's MB/s and share of the native rate (the goal: >= 0.98,
# 0 back-hitches), the aggregate in TB/h beside the field's 2 TB/h for four
# LTO-4, the hosts' rates during the copies beside alone (goal >= 0.8), the
# recall's time to first block, and each drive's rate over time. Nothing
# passes or fails on time. Two simulated libraries: "site" (4 drives) takes
# the copies and keeps only their lengths and checksums (keep_data = no: a
# real drive's writes do not land on this machine's disk either); "vault" (1
# drive) keeps its tapes' data in the same folder, since the recall must
# read cartridge 5 back from it (docs/benchmarks.md).
#
# Usage: sh bench_library.sh BUILD/tests/bench/bench_library   (tests/bench/run calls it)
set -eu

bench=$(cd "$(dirname "${1:?usage: bench_library.sh <bench_library binary>}")" && pwd)/$(basename "$1")
build=$(cd "$(dirname "$bench")/../.." && pwd)
. "$(cd "$(dirname "$0")" && pwd)/../integration/library_conf.sh"
VTLD=$build/vtld
VTLCTL=$build/vtlctl
MIGRATOR=$build/vtl-migrator
for x in "$bench" "$VTLD" "$VTLCTL" "$MIGRATOR"; do
	[ -x "$x" ] || { echo "bench_library.sh: $x is missing; build it with 'make'" >&2; exit 1; }
done
MB=${VTL_BENCH_LIB_MB:-4096}
HOST_MB=${VTL_BENCH_LIB_HOST_MB:-$MB}
GENS=${VTL_BENCH_LIB_GENS:-6 8}
BUFFER=${VTL_BENCH_LIB_BUFFER:-256M}

tmp=""
pid=""
mpid=""
hosts=""
cleanup() {
	for p in $hosts $mpid $pid; do kill -TERM "$p" 2>/dev/null || true; done
	for p in $hosts $mpid $pid; do wait "$p" 2>/dev/null || true; done
	[ -z "$tmp" ] || rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

die() {
	echo "bench_library: $*" >&2
	for f in vtld.log migrator.log; do [ ! -f "$tmp/$f" ] || { echo "-- $f:" >&2; tail -20 "$tmp/$f" >&2; }; done
	exit 1
}
ctl() { "$VTLCTL" -c "$tmp/etc/vtl.conf" "$@"; }
# wait_line FILE TEXT: waits up to 30 s for a line with TEXT in FILE.
wait_line() {
	i=0
	until grep -q "$2" "$1" 2>/dev/null; do
		i=$((i + 1)); [ "$i" -le 300 ] || die "no '$2' in $1 within 30 s"
		sleep 0.1
	done
}
# write DRIVE SLOT MIB: a host writes a cartridge in the background (its PID is appended to $hosts).
write() {
	"$bench" "127.0.0.1:$port" "$iqn" write "$1" "$2" "$3" >"$tmp/host.$1.$2" 2>&1 &
	hosts="$hosts $!"
}
wait_hosts() {
	for p in $hosts; do wait "$p" || { cat "$tmp"/host.* >&2; die "a host failed"; }; done
	hosts=""
}
rate_of() { sed -n 's/.*: \([0-9.]*\) MB\/s$/\1/p' "$tmp/host.$1.$2"; }
# job_rate ID: the average MB/s the migrator logged for job ID; job_hitches ID its back-hitches.
job_rate() { sed -n "s/.*job $1: copied .*: \\([0-9.]*\\) MB\\/s average.*/\\1/p" "$tmp/migrator.log"; }
job_hitches() { sed -n "s/.*job $1: copied .*back-hitches: \\([0-9]*\\) .*/\\1/p" "$tmp/migrator.log"; }
# jobs_done ID...: waits until every job ID has ended; fails if one failed.
jobs_done() {
	python3 - "$VTLCTL" "$tmp/etc/vtl.conf" "$@" <<'PY' || die "a job failed or did not end"
import json, subprocess, sys, time
vtlctl, conf, ids = sys.argv[1], sys.argv[2], {int(a) for a in sys.argv[3:]}
end = time.monotonic() + 3600
while time.monotonic() < end:
    js = json.loads(subprocess.run([vtlctl, "-c", conf, "--json", "jobs"], capture_output=True, text=True,
                                   check=True).stdout)["jobs"]
    st = {j["id"]: j["state"] for j in js if j["id"] in ids}
    if any(s == "failed" for s in st.values()):
        print(js, file=sys.stderr)
        sys.exit(1)
    if all(st.get(i) == "done" for i in ids):
        sys.exit(0)
    time.sleep(0.5)
sys.exit(1)
PY
}

# cold: the writes so far on disk (sync) and, as root, the page cache dropped, so that every round
# below starts from the same state: no writeback of earlier rounds left, the cartridges read from disk.
cold() {
	sync
	# VTL_BENCH_LIB_COLD=no keeps the page cache (a smoke run on a shared machine: its figures are not cold).
	if [ "${VTL_BENCH_LIB_COLD:-yes}" = no ]; then dropped=" (VTL_BENCH_LIB_COLD=no: page cache kept)"
	elif [ -w /proc/sys/vm/drop_caches ]; then echo 3 >/proc/sys/vm/drop_caches; else dropped=" (not root: page cache kept)"; fi
}
dropped=""
# disk_read: baseline (iv), the disk alone: cartridges 1..4's pool files read at once, 1 MiB reads,
# one reader each, as cat does; prints the aggregate MB/s.
disk_read() {
	t0=$(date +%s.%N)
	rp=""
	for b in 1 2 3 4; do
		find "$tmp/pool" -path "*B0000${b}L8*" -type f -exec cat {} + >/dev/null &
		rp="$rp $!"
	done
	for p in $rp; do wait "$p" || die "reading the pool's files failed"; done
	t1=$(date +%s.%N)
	bytes=$(find "$tmp/pool" \( -path "*B00001L8*" -o -path "*B00002L8*" -o -path "*B00003L8*" -o -path "*B00004L8*" \) -type f -printf '%s\n' | awk '{s += $1} END {print s}')
	echo "   the disk alone: cartridges 1..4's pool files read at once, cold$dropped: $(python3 -c "print(f'{$bytes / 1e6 / ($t1 - $t0):.0f}')") MB/s together"
}

# copies_round TITLE: four copies at once, pinned to site's drives 0..3 (B00001..B00004, stacked
# after their earlier copies), sampled every second; prints each copy's share of native, the
# aggregate and the rate over time. Sets $ids.
copies_start() {
	ids=""
	for d in 0 1 2 3; do
		out=$(ctl migrate "B0000$((d + 1))L8" --library site --drive "$d") || die "migrate: $out"
		ids="$ids $(echo "$out" | sed -n 's/^queued job \([0-9]*\).*/\1/p')"
	done
	: >"$tmp/samples"
	: >"$tmp/ingest_samples"
	python3 - "$VTLCTL" "$tmp/etc/vtl.conf" "$tmp/ingest_samples" >"$tmp/samples" <<'PY' &
import json, subprocess, sys, time
vtlctl, conf, rule_log = sys.argv[1], sys.argv[2], open(sys.argv[3], "a")
t0, seen = time.monotonic(), False
while True:
    doc = json.loads(subprocess.run([vtlctl, "-c", conf, "--json", "jobs"], capture_output=True, text=True,
                                    check=True).stdout)
    js = doc["jobs"]
    g = doc.get("ingest", {})
    if g.get("host_mb_s", 0) > 0:  # the rule's figures each second while hosts write, for the report
        print(json.dumps(g), file=rule_log, flush=True)
    run = {j["drive"]: j.get("mb_s", 0) for j in js if j["state"] == "running" and "drive" in j and j["kind"] == "migrate"
           and j.get("library") == "site"}
    if run:
        seen = True
        print(f"{time.monotonic() - t0:.0f} " + " ".join(f"{run.get(d, 0):.0f}" for d in range(4)), flush=True)
    elif seen:
        break
    time.sleep(1)
PY
	sampler=$!
}
copies_report() {
	jobs_done $ids
	wait "$sampler" || true
	python3 - "$native" "$MB" "$tmp/migrator.log" "$tmp/samples" $ids <<'PY'
import re, sys
native, mb, log, samples, ids = float(sys.argv[1]), float(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5:]
text = open(log).read()
total = 0.0
for i in ids:
    m = re.search(rf"job {i}: copied \S+ to \S+ file \d+: ([0-9.]+) MB/s average, ([0-9.]+) minimum.*"
                  rf"back-hitches: (\d+) .*drive (\d+)", text)
    if not m:
        sys.exit(f"bench_library: no result line for job {i} in the migrator's log")
    avg, low, hitches, drive = float(m[1]), float(m[2]), int(m[3]), int(m[4])
    total += avg
    print(f"     copy on drive {drive}: {avg:.1f} MB/s ({avg / native:.3f} of native; goal >= 0.98), "
          f"minimum {low:.1f}, back-hitches {hitches} (goal 0)")
rows = [l.split() for l in open(samples) if l.strip()]
busy = [r for r in rows if all(float(x) > 0 for x in r[1:])]
agg = sum(sum(float(x) for x in r[1:]) for r in busy) / len(busy) if busy else total
print(f"     aggregate while all four ran: {agg:.0f} MB/s = {agg * 3600 / 1e6:.2f} TB/h "
      f"(the field's four LTO-4: 2 TB/h; four of these drives at native: {4 * native * 3600 / 1e6:.2f} TB/h)")
print("     each copy's rate over time (s, MB/s on drives 0 1 2 3):")
step = max(1, len(rows) // 20)
for r in rows[::step]:
    print("       " + " ".join(f"{x:>5}" for x in r))
PY
}
copies_round() {
	echo "   $1:"
	copies_start
	copies_report
}
# shared_round TITLE SLOT4 SLOT5: the four copies while two hosts write fresh cartridges (SLOT4 in
# drive 4, SLOT5 in drive 5) and, once the copies have run 3 s, a host loads cartridge 5 (released,
# its only good copy in the vault) into drive 6: the recall's time to its first block.
shared_round() {
	echo "   $1:"
	copies_start
	write 4 "$2" "$HOST_MB"; write 5 "$3" "$HOST_MB"
	while [ "$(wc -l <"$tmp/samples")" -lt 3 ] && kill -0 "$sampler" 2>/dev/null; do sleep 0.5; done
	"$bench" "127.0.0.1:$port" "$iqn" first 6 1029 >"$tmp/recall" 2>&1 || { cat "$tmp/recall" >&2; die "the recall's host failed"; }
	wait_hosts
	copies_report
	r4=$(rate_of 4 "$2") r5=$(rate_of 5 "$3")
	echo "     hosts during the copies: drive 4 $r4 MB/s ($(python3 -c "print(f'{$r4 / $solo4:.2f}')") of alone), drive 5 $r5 MB/s ($(python3 -c "print(f'{$r5 / $solo5:.2f}')") of alone; goal >= 0.8)"
	echo "     recall while four copies run: $(sed -n 's/^drive 6: //p' "$tmp/recall")"
	python3 - "$tmp/ingest_samples" <<'PY' || true
import json, statistics, sys
try:
    rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
except (OSError, ValueError):
    sys.exit(0)
if not rows:
    sys.exit(0)
# Each figure's median over the seconds the hosts wrote (vtlctl --json jobs, sampled every second).
def med(k):
    v = rows[-1].get(k)
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return v
    m = statistics.median(r.get(k, 0) for r in rows)
    return round(m) if isinstance(v, int) else m
g = {k: med(k) for k in rows[-1]}
if g.get("pool_rate") or g.get("auto"):
    rule = "auto" if g.get("auto") else g["pool_rate"]
    print(f"     the rule as vtlctl jobs showed it, medians of {len(rows)} seconds while the hosts wrote: "
          f"hosts move {g.get('host_mb_s', 0):.0f} MB/s; "
          f"each of {g.get('copies', 0)} copies reads at most {g.get('copy_limit_mb_s', 0):.0f} MB/s "
          f"(pool_rate {rule}, copy_floor {g.get('copy_floor', 0)} MB/s); the pool gave {g.get('pool_mb_s', 0):.0f} "
          f"MB/s, the copies {g.get('copies_mb_s', 0):.0f} of a budget of {g.get('budget_mb_s', 0):.0f}, their "
          f"floors {g.get('floors_mb_s', 0):.0f}" +
          (f"; the hosts' reference {g.get('host_ref_mb_s', 0):.0f} MB/s, {g.get('drops', 0)} drops"
           if g.get("auto") else ""))
PY
}
# set_migrator_key KEY VALUE: sets KEY in the [migrator] section of the benchmark's vtl.conf (replaced
# when set before, else added under the section's header); a vtlctl reload applies it.
set_migrator_key() {
	if grep -q "^$1 = " "$tmp/etc/vtl.conf"; then
		sed -i "s/^$1 = .*/$1 = $2/" "$tmp/etc/vtl.conf"
	else
		sed -i "s/^\[migrator\]\$/[migrator]\n$1 = $2/" "$tmp/etc/vtl.conf"
	fi
}
# release_again: cartridge 5's recall of the last round has staged it back; give up its disk copy
# again (waits up to 10 minutes for the recall to end) so that the next round recalls it too.
release_again() {
	i=0
	until ctl release B00005L8 >/dev/null 2>&1; do
		i=$((i + 1)); [ "$i" -le 1200 ] || die "release B00005L8 again: $(ctl release B00005L8 2>&1)"
		sleep 0.5
	done
}

run_gen() {
	gen=$1
	case $gen in 5) native=140 ;; 6) native=160 ;; 7) native=300 ;; 8) native=360 ;; 9) native=400 ;;
	*) die "VTL_BENCH_LIB_GENS: no LTO generation '$gen' (5 to 9)" ;; esac
	tmp=$(mktemp -d "${VTL_BENCH_DIR:-/var/tmp}/vtl-bench-library.XXXXXX")
	port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	iqn=iqn.2026-01.org.vtl:benchlib
	mkdir -p "$tmp/etc"
	{ library_conf benchlib BENCHLIB1 16 2 7 "$port" "$iqn" local; cat <<CONF; } >"$tmp/etc/vtl.conf"

[physical site]
type = sim
generation = $gen
drives = 4
slots = 12
tapes = 8
prefix = PHY
drive_buffer = $BUFFER
keep_data = no
pools = default

[physical vault]
type = sim
generation = $gen
drives = 1
slots = 4
tapes = 2
prefix = VLT
drive_buffer = $BUFFER
data_dir = ../physical
pools = vault

[migrator]
verify = no

[policy]
premigrate = none
# A release asks for a good copy in these pools: cartridge 5's is in the vault.
copy_pools = vault
CONF
	ctl init >/dev/null || die "vtlctl init"
	ctl cartridge add --barcode B00001L8 --count 13 >/dev/null || die "vtlctl cartridge add"
	"$VTLD" -c "$tmp/etc/vtl.conf" 2>"$tmp/vtld.log" &
	pid=$!
	wait_line "$tmp/vtld.log" "ready: [0-9]* logical units"
	"$MIGRATOR" -c "$tmp/etc/vtl.conf" 2>"$tmp/migrator.log" &
	mpid=$!
	wait_line "$tmp/migrator.log" "ready: copies go to"
	echo "-- LTO-$gen: 4 + 1 simulated drives, native $native MB/s each, $BUFFER buffers; cartridges of $MB MiB, hosts write $HOST_MB MiB"

	# 1. The cartridges the copies read (B00001..B00005 in slots 1025..1029).
	t=$(date +%s)
	for d in 0 1 2 3; do write "$d" $((1025 + d)) "$MB"; done
	wait_hosts
	write 0 1029 "$MB"
	wait_hosts
	echo "   written: 5 x $MB MiB in $(($(date +%s) - t)) s"

	# 2. Baseline (ii): the two hosts alone.
	write 4 1030 "$HOST_MB"; write 5 1031 "$HOST_MB"
	wait_hosts
	solo4=$(rate_of 4 1030) solo5=$(rate_of 5 1031)
	echo "   hosts alone: drive 4 $solo4 MB/s, drive 5 $solo5 MB/s"

	# 3. Baseline (i): one copy alone (cartridge 1 to a site drive); then cartridge 5 is copied to
	# the vault (whose tapes keep their data) and released, for the recalls below.
	out=$(ctl migrate B00001L8 --library site --drive 0) || die "migrate: $out"
	one=$(echo "$out" | sed -n 's/^queued job \([0-9]*\).*/\1/p')
	jobs_done "$one"
	r=$(job_rate "$one")
	echo "   one copy alone: $r MB/s ($(python3 -c "print(f'{$r / $native:.3f}')") of native), back-hitches $(job_hitches "$one")"
	out=$(ctl migrate B00005L8 --library vault) || die "migrate to the vault: $out"
	jobs_done "$(echo "$out" | sed -n 's/^queued job \([0-9]*\).*/\1/p')"
	ctl release B00005L8 >/dev/null || die "release B00005L8"

	# 4. Baselines (iv) and (iii): the disk alone, then the four copies alone (no host writes).
	cold
	disk_read
	cold
	copies_round "four copies alone"

	# 5. The four copies with the hosts writing and a recall, the copies reading as fast as their
	# drives take the data (pool_rate 0: no rule).
	cold
	shared_round "four copies, two hosts and a recall, no rule (pool_rate = 0)" 1032 1033

	# 6. The same under the stated rule, host ingest first, with a constant: pool_rate = what the two
	# hosts wrote alone together (the disks' write rate, measured in step 2), copy_floor its default
	# (0: each copy's floor is its drive's lowest matched speed). VTL_BENCH_LIB_CONSTANT=no skips it.
	if [ "${VTL_BENCH_LIB_CONSTANT:-yes}" != no ]; then
		P=$(python3 -c "print(int($solo4 + $solo5))")
		set_migrator_key pool_rate "$P"
		ctl reload >/dev/null || die "vtlctl reload (pool_rate = $P)"
		release_again
		cold
		shared_round "four copies, two hosts and a recall, host ingest first (pool_rate = $P)" 1034 1035
	fi

	# 7. The rule with pool_rate = auto: the migrator probes what the pool gives (migrator/ingest.h).
	set_migrator_key pool_rate auto
	ctl reload >/dev/null || die "vtlctl reload (pool_rate = auto)"
	release_again
	cold
	shared_round "four copies, two hosts and a recall, host ingest first (pool_rate = auto)" 1036 1037

	# 8. Drives first: pool_rate = auto with copy_floor = the drive's native rate, what an operator sets
	# to keep every drive streaming at full speed; the hosts get what the pool gives beyond the copies.
	# The hosts write over the cartridges of step 2 (from BOT: no more disk space than they took).
	# VTL_BENCH_LIB_DRIVES_FIRST=no skips it.
	if [ "${VTL_BENCH_LIB_DRIVES_FIRST:-yes}" != no ]; then
		set_migrator_key copy_floor "$native"
		ctl reload >/dev/null || die "vtlctl reload (copy_floor = $native)"
		release_again
		cold
		shared_round "four copies, two hosts and a recall, drives first (pool_rate = auto, copy_floor = $native)" 1030 1031
	fi
	kill -TERM "$mpid"; wait "$mpid" || die "vtl-migrator did not stop cleanly"; mpid=""
	kill -TERM "$pid"; wait "$pid" || die "vtld did not stop cleanly"; pid=""
	rm -rf "$tmp"; tmp=""
}

for g in $GENS; do run_gen "$g"; done
