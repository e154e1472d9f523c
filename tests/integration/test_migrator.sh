#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# vtl-migrator end to end: vtld serves a library on a free loopback port; a
# host (iscsi_hosts write) writes two files to I00002L8 and leaves it loaded;
# vtl-migrator copies cartridges to physical tape, driven by vtlctl:
#   - to a simulated LTO library ([physical] type = sim): physical list and
#     inventory, a job on a loaded cartridge fails and says why, after the
#     unload the copy is made, verified and recorded (copies stack on one
#     tape), verify reads it back, jobs shows it all, a restart of the
#     migrator keeps the catalog;
#     with [policy] copy_pools = default, vault a premigrated cartridge gets a
#     second copy on a tape an operator put in pool vault; copies recorded
#     without their block size (as before catalog schema 5) make a release
#     refuse until a verify records it;
#   - to a second vtld playing the physical library over iSCSI ([physical]
#     type = iscsi): the same cartridge copied and verified there.
#
# Usage: sh test_migrator.sh <build-dir>   (needs vtld, vtlctl, vtl-migrator, tests/integration/iscsi_hosts)
set -eu

build=$(cd "${1:?usage: test_migrator.sh <build-dir>}" && pwd)
VTLD=$build/vtld
VTLCTL=$build/vtlctl
MIGRATOR=$build/vtl-migrator
HOSTS=$build/tests/integration/iscsi_hosts
for x in "$VTLD" "$VTLCTL" "$MIGRATOR" "$HOSTS"; do
	[ -x "$x" ] || { echo "FAIL: $x is missing; build it with 'make'" >&2; exit 1; }
done

. "$(dirname "$0")/vtld_env.sh"
. "$(dirname "$0")/migrator_env.sh"
vtld_env vtl-migrator
ppid_vtld=""
# The exit trap of vtld_env stops vtld; this one stops the migrator and the physical vtld too, by PID.
# Each kill may find its process gone already: "|| true", or set -e would end the trap before the rest.
trap '[ -z "$mpid" ] || kill "$mpid" 2>/dev/null || true; [ -z "$ppid_vtld" ] || kill "$ppid_vtld" 2>/dev/null || true
	[ -z "$pid" ] || kill "$pid" 2>/dev/null || true; rm -rf "$tmp"' EXIT INT TERM
iqn=iqn.2026-01.org.vtl:migtest
vtld_library $iqn MIGR0001
mlog=$tmp/migrator.log
cat >>"$conf" <<CONF

[physical]
type = sim
name = simlib
generation = 8
drives = 2
slots = 6
tapes = 3
tape_capacity = 256M
backhitch_ms = 20
data_dir = ../physical

[migrator]
buffers = 8
buffer_size = 256K
readers = 2
verify = yes
CONF
"$VTLCTL" -c "$conf" cartridge add --barcode I00001L8 --count 3 >/dev/null
mlog=$tmp/migrator.log

step "vtld up; a host writes two files to I00002L8 and leaves it loaded in drive 258"
vtld_start
timeout 120 "$HOSTS" "127.0.0.1:$port" "$iqn" write >"$tmp/hosts" 2>&1 || { cat "$tmp/hosts" >&2; fail "iscsi_hosts write"; }

step "vtl-migrator comes up with a simulated LTO-8 library and puts its tapes in the catalog"
migrator_start
ctl physical list
grep -q "PHY001L8 *simlib .*scratch *0" "$tmp/out" || fail "physical list does not show PHY001L8 as scratch"
[ "$(grep -c "L8 *simlib" "$tmp/out")" -eq 3 ] || fail "physical list does not show 3 tapes"
ctl physical inventory
grep -q "256 *drive *-" "$tmp/out" || fail "inventory does not show drive 256 empty"
grep -q "1024 *slot *PHY001L8" "$tmp/out" || fail "inventory does not show PHY001L8 in slot 1024"

step "a cartridge a host has loaded is not copied: the job fails and says why"
ctl migrate I00002L8
job=$(job_id)
job_ends "$job" failed
grep -q "loaded in a drive" "$tmp/jobs" || fail "the failed job does not say the cartridge is loaded"

step "unloaded, it is copied, verified and recorded; a second cartridge stacks on the same tape"
ctl unload 258
ctl migrate I00002L8
job=$(job_id)
job_ends "$job" done
ctl migrate I00001L8
job_ends "$(job_id)" done
ctl jobs
grep -q "migrate *I00002L8 *done" "$tmp/out" || fail "jobs does not show the copy of I00002L8 done"
ctl physical list
grep -q "PHY001L8 *simlib .*filling *2" "$tmp/out" || fail "PHY001L8 does not hold 2 files (filling)"
grep -q "copied I00002L8 to PHY001L8 file 0: .*; verified" "$mlog" || fail "the migrator did not log a verified copy"
grep -q "writer waited .* back-hitches: 0 (counted by the drive)" "$mlog" ||
	fail "the migrator did not log its wait counters and the simulated drive's back-hitches"
ctl events
grep -q "copied I00002L8 to PHY001L8 file 0, pool default (.*, verified)" "$tmp/out" || fail "the event log does not hold the copy"

step "a native export copy: the host's blocks one to one on a scratch tape of its own, verified"
ctl migrate I00002L8 --native
grep -q "(native)" "$tmp/out" || fail "vtlctl migrate --native did not ask for a native copy"
job_ends "$(job_id)" done
grep -q "copied I00002L8 to PHY002L8 file 0: .*; verified" "$mlog" || fail "no verified native copy on PHY002L8"
ctl physical list
grep -q "PHY002L8 *simlib .*native *1" "$tmp/out" || fail "PHY002L8 is not marked as holding a native copy"

step "verify reads the copies back; a restarted migrator keeps the catalog and its copies"
ctl verify I00002L8
job_ends "$(job_id)" done
grep -q "verified 2 copies of I00002L8" "$mlog" || fail "the migrator did not verify both copies (stacked, native)"
migrator_stop
ctl physical list
grep -q "PHY001L8 *simlib .*filling *2" "$tmp/out" || fail "the catalog lost PHY001L8's files"
migrator_start
ctl verify I00001L8
job_ends "$(job_id)" done

step "a recall of a cartridge whose data is on disk has nothing to do, and says so"
ctl recall I00001L8
job_ends "$(job_id)" failed
grep -q "on disk already: nothing to recall" "$tmp/jobs" || fail "the recall job does not say why it failed"

step "jobs queued while vtl-migrator is stopped wait in the catalog and run when it starts"
migrator_stop
ctl migrate I00003L8
job=$(job_id)
grep -q "vtl-migrator is not running" "$tmp/out" || fail "vtlctl did not say the job waits for the migrator"
migrator_start
job_ends "$job" done
migrator_stop

step "a second copy pool: PHY003L8 goes to pool vault; the policy copies each premigrated cartridge there"
ctl physical pool vault PHY003L8
"$VTLCTL" -c "$conf" physical pool vault PHY001L8 >"$tmp/out" 2>&1 && fail "a tape holding copies changed pool"
grep -q "PHY001L8 holds [0-9]* files: only an empty tape changes pool" "$tmp/out" || fail "the refusal does not say why"
printf '\n[policy]\npremigrate = none\ncopy_pools = default, vault\n' >>"$conf"
migrator_start
i=0
until "$VTLCTL" -c "$conf" cartridge show I00002L8 | grep -q "PHY003L8 file .*good"; do
	i=$((i + 1))
	[ "$i" -le 300 ] || { cat "$mlog" >&2; fail "no copy of I00002L8 in pool vault within 30 s"; }
	sleep 0.1
done
ctl physical list
grep -q "PHY003L8 *simlib *vault" "$tmp/out" || fail "physical list does not show PHY003L8 in pool vault"
grep -q "copied I00002L8 to PHY003L8 file [0-9]*, pool vault" "$tmp/out" 2>/dev/null || ctl events
grep -q "copied I00002L8 to PHY003L8 file [0-9]*, pool vault" "$tmp/out" || fail "no event for the copy in pool vault"

step "copies recorded before the catalog kept their block size: release refuses until a verify records it"
# What the version 4 program left: the same rows without block_size (schema 5 reads them as 0).
python3 - "$tmp/var/catalog.db" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1], timeout=10)
db.execute("UPDATE copy SET block_size = 0 WHERE cartridge_id = (SELECT id FROM cartridge WHERE barcode = 'I00002L8')")
db.commit()
PY
if "$VTLCTL" -c "$conf" release I00002L8 >"$tmp/out" 2>&1; then cat "$tmp/out" >&2; fail "a release without block sizes went ahead"; fi
sed 's/^/   | /' "$tmp/out"
grep -q "I00002L8: its copy on PHY001L8 file 0 was recorded without its block size, so its digest cannot be compared with the disk copy's: not released; vtlctl verify I00002L8 reads the copy back and records it" \
	"$tmp/out" || fail "the refusal does not say to run a verify"
[ "$(cache_of I00002L8)" = premigrated ] || fail "the refused release changed I00002L8"
ctl verify I00002L8
job_ends "$(job_id)" done
ctl events
grep -q "verified the copy of I00002L8 on PHY001L8 file 0 and recorded its block size" "$tmp/out" ||
	fail "the verify did not record the copy's block size"
ctl release I00002L8
grep -q "released the disk copy of I00002L8" "$tmp/out" || fail "the release after the verify did not go ahead"
[ "$(cache_of I00002L8)" = migrated ] || fail "I00002L8 is not migrated after its release"
ctl recall I00002L8
job_ends "$(job_id)" done
[ "$(cache_of I00002L8)" = premigrated ] || fail "I00002L8 is not premigrated after its recall"
migrator_stop

step "a second vtld plays the physical library over iSCSI: the cartridge is copied there and verified"
pdir=$tmp/phys
mkdir -p "$pdir/etc"
# vtld_env's functions serve the physical library too, with its own folder, log and port.
main_conf=$conf main_log=$log main_port=$port main_pid=$pid main_starts=$vtld_starts
conf=$pdir/etc/vtl.conf log=$pdir/vtld.log vtld_starts=0
port=$(free_port)
pport=$port
vtld_library iqn.2026-01.org.vtl:physlib PHYSLIB01
"$VTLCTL" -c "$conf" cartridge add --barcode T00001L8 --count 2 >/dev/null
vtld_start
ppid_vtld=$pid
conf=$main_conf log=$main_log port=$main_port pid=$main_pid vtld_starts=$main_starts
python3 - "$conf" "$pport" <<'PY'
import re, sys
path, port = sys.argv[1], sys.argv[2]
text = open(path).read()
text = re.sub(r"\[physical\].*?(?=\n\[migrator\])", "[physical]\ntype = iscsi\nname = isclib\nportal = 127.0.0.1:%s\n"
              "target = iqn.2026-01.org.vtl:physlib\ntape_capacity = 1G\n" % port, text, flags=re.S)
open(path, "w").write(text)
PY
migrator_start
ctl physical list
grep -q "T00001L8 *isclib .*scratch" "$tmp/out" || { tail -5 "$mlog" >&2; fail "the iSCSI library's tapes are not in the catalog"; }
ctl migrate I00002L8
job_ends "$(job_id)" done
grep -q "copied I00002L8 to T00001L8 file 0: .*back-hitches: 0 (estimated: .*; verified" "$mlog" ||
	fail "no verified copy on the iSCSI library, with its estimated back-hitches"
ctl verify I00002L8
job_ends "$(job_id)" done
migrator_stop
kill -TERM "$ppid_vtld"
wait "$ppid_vtld" || fail "the physical vtld did not stop cleanly"
ppid_vtld=""
vtld_stop
echo "test_migrator: all steps passed"
