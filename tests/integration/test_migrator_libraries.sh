#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Whole libraries: vtl-migrator with two simulated physical libraries,
# [physical site] keeping pool default and [physical vault] keeping pool
# vault, and [policy] copy_pools = default, vault. A host (iscsi_fill)
# writes two cartridges. Asserted on what vtlctl and the catalog show:
#   - configurations that bind a copy pool to no library, or leave a
#     library of several without pools, are refused with their messages;
#   - each library's tapes are in the catalog under its name, in its pool;
#   - a copy queued for each library runs at the same time as the other,
#     one on a drive of site and one on a drive of vault (the jobs show
#     both running, each with its LIBRARY);
#   - cartridge show names each copy's library; a verify runs in each;
#   - the policy (premigrate turned on by a reload) copies the other
#     cartridge to both libraries by itself: the one keeping its next pool;
#   - with its disk copy released and the site tape's data destroyed, a
#     recall asked of site fails there, marks that copy bad and reads the
#     cartridge back from the vault;
#   - vtlctl physical inventory shows both libraries, --library one.
#
# Usage: sh test_migrator_libraries.sh <build-dir>   (needs vtld, vtlctl, vtl-migrator, tests/integration/iscsi_fill)
set -eu

build=$(cd "${1:?usage: test_migrator_libraries.sh <build-dir>}" && pwd)
VTLD=$build/vtld
VTLCTL=$build/vtlctl
MIGRATOR=$build/vtl-migrator
FILL=$build/tests/integration/iscsi_fill
. "$(dirname "$0")/vtld_env.sh"
need_built "$VTLD" "$VTLCTL" "$MIGRATOR" "$FILL"
. "$(dirname "$0")/migrator_env.sh"
vtld_env vtl-libraries
trap '[ -z "$mpid" ] || kill "$mpid" 2>/dev/null || true; [ -z "$pid" ] || kill "$pid" 2>/dev/null || true
	rm -rf "$tmp"' EXIT INT TERM
iqn=iqn.2026-01.org.vtl:librariestest
vtld_library $iqn LIBS0001
mlog=$tmp/migrator.log
# sim_library NAME PREFIX POOLS: a small simulated LTO-8 library at 16 MB/s with its tapes in ../NAME.
sim_library() {
	cat <<CONF

[physical $1]
type = sim
generation = 8
drives = 2
slots = 6
tapes = 3
prefix = $2
tape_capacity = 1G
rate = 16
load_ms = 50
locate_ms = 20
drive_buffer = 2M
backhitch_ms = 20
data_dir = ../$1
pools = $3
CONF
}
cp "$conf" "$tmp/base.conf"
{
	sim_library site PHY default
	sim_library vault VLT vault
	printf '\n[migrator]\nbuffers = 8\nbuffer_size = 256K\nreaders = 2\nverify = yes\n'
	printf '\n[policy]\npremigrate = none\nidle = 1\ninterval = 1\ncopy_pools = default, vault\n'
} >>"$conf"
"$VTLCTL" -c "$conf" cartridge add --barcode X00001L8 --count 2 >/dev/null

# refused CONF-TEXT MESSAGE: vtl-migrator refuses the base configuration with CONF-TEXT appended, saying MESSAGE.
refused() {
	bad=$tmp/etc/bad.conf
	{ cat "$tmp/base.conf"; printf '%s\n' "$1"; } >"$bad"
	"$MIGRATOR" -c "$bad" >"$tmp/bad.out" 2>&1 && fail "vtl-migrator accepted: $1"
	grep -qF "$2" "$tmp/bad.out" || { cat "$tmp/bad.out" >&2; fail "vtl-migrator did not say: $2"; }
}

step "configurations vtl-migrator refuses, with their messages"
refused "$(sim_library site PHY default)
[physical vault]
type = sim
prefix = VLT
[policy]
copy_pools = default, vault" "bad.conf:$(($(wc -l <"$tmp/base.conf") + 17)): [physical vault] has no pools = line: with several physical libraries, name the copy pools whose tapes each one keeps"
refused "$(sim_library site PHY default)
$(sim_library vault VLT vault)
[policy]
copy_pools = default, elsewhere" "[policy] copy_pools: pool elsewhere is in no physical library's pools (default in site, vault in vault)"

step "vtld up; a host writes 4 MiB to each of two cartridges"
vtld_start
for s in 1025 1026; do
	timeout 120 "$FILL" "127.0.0.1:$port" "$iqn" $s 4 >"$tmp/fill" 2>&1 || { cat "$tmp/fill" >&2; fail "iscsi_fill $s"; }
done

step "vtl-migrator opens both libraries; each one's tapes are in the catalog under its name, in its pool"
migrator_start
grep -q "2 drives of site run jobs" "$mlog" || fail "the migrator does not run jobs on site's drives"
grep -q "2 drives of vault run jobs" "$mlog" || fail "the migrator does not run jobs on vault's drives"
grep -q "ready: copies go to site (sim), vault (sim)" "$mlog" || fail "the ready line does not name both libraries"
ctl physical list
grep -q "PHY001L8 *site *default" "$tmp/out" || fail "site's tape PHY001L8 is not in pool default of site"
grep -q "VLT001L8 *vault *vault" "$tmp/out" || fail "vault's tape VLT001L8 is not in pool vault of vault"

step "a copy for each library runs at the same time as the other, each on a drive of its library"
ctl migrate X00001L8 --library site
j1=$(job_id)
ctl migrate X00001L8 --library vault
j2=$(job_id)
python3 - "$VTLCTL" "$conf" "$j1" "$j2" <<'PY' || fail "the two copies did not run at the same time in site and vault"
import json, subprocess, sys, time
vtlctl, conf, a, b = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
end = time.monotonic() + 30
while time.monotonic() < end:
    js = json.loads(subprocess.run([vtlctl, "-c", conf, "--json", "jobs"], capture_output=True, text=True,
                                   check=True).stdout)["jobs"]
    run = {j["id"]: j["library"] for j in js if j["state"] == "running" and "drive" in j}
    if run.get(a) == "site" and run.get(b) == "vault":
        sys.exit(0)
    if all(j["state"] in ("done", "failed") for j in js if j["id"] in (a, b)):
        break
    time.sleep(0.05)
print(json.dumps(js, indent=1), file=sys.stderr)
sys.exit(1)
PY
job_ends "$j1" done
job_ends "$j2" done
ctl jobs
grep -q "^ *$j1 .* site " "$tmp/out" || fail "vtlctl jobs does not show job $j1 in site"
grep -q "^ *$j2 .* vault " "$tmp/out" || fail "vtlctl jobs does not show job $j2 in vault"
"$VTLCTL" -c "$conf" --json cartridge show X00001L8 >"$tmp/show"
[ "$(json "$tmp/show" 'sorted(k["tape"][:3] for k in d["copies"] if k["state"] == "good")')" = "['PHY', 'VLT']" ] ||
	{ cat "$tmp/show" >&2; fail "X00001L8 has no good copy in each library"; }

step "cartridge show names each copy's library; a verify checks the copies in each library"
ctl cartridge show X00001L8
grep -q "PHY00[0-9]L8 file [0-9]*, [0-9]* bytes, good (library site, pool default)" "$tmp/out" ||
	fail "cartridge show does not name the site copy's library and pool"
grep -q "VLT00[0-9]L8 file [0-9]*, [0-9]* bytes, good (library vault, pool vault)" "$tmp/out" ||
	fail "cartridge show does not name the vault copy's library and pool"
verify_in_site_and_vault X00001L8

step "a reload turns the policy on: it copies X00002L8 to both libraries by itself"
sed -i 's/^premigrate = none$/premigrate = idle/' "$conf"
ctl reload
grep -q "applied \[policy\] premigrate changed" "$tmp/out" || fail "the reload did not apply premigrate"
i=0
until "$VTLCTL" -c "$conf" --json cartridge show X00002L8 >"$tmp/show" &&
	[ "$(json "$tmp/show" 'sorted(k["tape"][:3] for k in d["copies"] if k["state"] == "good")')" = "['PHY', 'VLT']" ]; do
	i=$((i + 1))
	[ "$i" -le 300 ] || { cat "$tmp/show" "$mlog" >&2; fail "the policy did not copy X00002L8 to both libraries in 30 s"; }
	sleep 0.1
done
"$VTLCTL" -c "$conf" --json jobs >"$tmp/jobs"
[ "$(json "$tmp/jobs" 'sorted(j["library"] for j in d["jobs"] if j["barcode"] == "X00002L8" and j["state"] == "done")')" = "['site', 'vault']" ] ||
	{ cat "$tmp/jobs" >&2; fail "the policy's copies of X00002L8 did not run one in each library"; }

step "physical inventory: both libraries, or the one named"
ctl physical inventory
grep -q "^site .*drive" "$tmp/out" && grep -q "^vault .*drive" "$tmp/out" || fail "physical inventory does not list both libraries"
ctl physical inventory --library vault
! grep -q "^site " "$tmp/out" || fail "physical inventory --library vault lists site's elements"
"$VTLCTL" -c "$conf" physical inventory --library nowhere >"$tmp/out" 2>&1 && fail "an unknown library was accepted"
grep -q "no such physical library; its libraries are site, vault" "$tmp/out" || { cat "$tmp/out" >&2; fail "no message for an unknown library"; }

step "the site tape's data is destroyed: a recall asked of site fails there and reads from the vault"
sed -i 's/^premigrate = idle$/premigrate = none/' "$conf"
ctl reload
ctl release X00002L8
[ "$(cache_of X00002L8)" = migrated ] || fail "X00002L8 is not migrated after its release"
site_tape=$(json "$tmp/show" '[k["tape"] for k in d["copies"] if k["tape"].startswith("PHY")][0]')
tape_destroy "$tmp/site/$site_tape.tape"
ctl recall X00002L8 --library site
jr=$(job_id)
job_ends "$jr" done
[ "$(cache_of X00002L8)" = premigrated ] || fail "X00002L8 is not back on disk after the recall"
grep -q "job $jr: the recall of X00002L8 from site failed .*; queued again for vault, which has a good copy" "$mlog" ||
	{ cat "$mlog" >&2; fail "the log does not show the recall going on to the vault"; }
grep -q "job $jr: recalled X00002L8 on drive [0-9] of vault" "$mlog" || fail "the recall did not read from the vault"
"$VTLCTL" -c "$conf" --json cartridge show X00002L8 >"$tmp/show"
[ "$(json "$tmp/show" '[k["state"] for k in d["copies"] if k["tape"] == "'"$site_tape"'"][0]')" = bad ] ||
	{ cat "$tmp/show" >&2; fail "the destroyed site copy is not marked bad"; }
"$VTLCTL" -c "$conf" --json jobs >"$tmp/jobs"
[ "$(json "$tmp/jobs" '[j["library"] for j in d["jobs"] if j["id"] == '"$jr"'][0]')" = vault ] ||
	fail "the recall's job does not record the vault as its library"

migrator_stop
vtld_stop
echo "PASS test_migrator_libraries"
