#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Two libraries of different kinds, a copy pool in each: vtl-migrator with
# [physical site] (simulated, pools = default) and [physical vault] (a
# second vtld, in a folder of its own on a free port, playing the library
# over iSCSI, pools = vault), [policy] copy_pools = default, vault. A host
# (iscsi_recall) writes 4 MiB to a cartridge of the first vtld. Asserted on
# what vtlctl, the logs and the host see:
#   - each library's tapes are in the catalog under its name, in its pool;
#   - a copy to each pool (vtlctl migrate --library) ends with one good copy
#     in each library: cartridge show names each copy's library and pool,
#     physical list each tape with one file;
#   - vtlctl verify runs one job in each library, both done;
#   - vtlctl physical drives lists the drives of both, idle, and a running
#     copy's drive busy in the vault;
#   - with the disk copy released and the site tape's data destroyed, the
#     host loads the cartridge: the recall tries the site's copy (the newer
#     one) first, marks it bad, reads the cartridge from the vault over
#     iSCSI, and the host reads every block back bit-exact.
#
# Usage: sh test_migrator_sim_iscsi.sh <build-dir>   (needs vtld, vtlctl, vtl-migrator, tests/integration/iscsi_recall)
set -eu

build=$(cd "${1:?usage: test_migrator_sim_iscsi.sh <build-dir>}" && pwd)
VTLD=$build/vtld
VTLCTL=$build/vtlctl
MIGRATOR=$build/vtl-migrator
HOST=$build/tests/integration/iscsi_recall
. "$(dirname "$0")/vtld_env.sh"
need_built "$VTLD" "$VTLCTL" "$MIGRATOR" "$HOST"
. "$(dirname "$0")/migrator_env.sh"
vtld_env vtl-sim-iscsi
ppid_vtld=""
# vtld_env's trap, and the migrator and the physical vtld this test starts, each by its PID.
trap '[ -z "$mpid" ] || kill "$mpid" 2>/dev/null || true; [ -z "$ppid_vtld" ] || kill "$ppid_vtld" 2>/dev/null || true
	[ -z "$pid" ] || kill "$pid" 2>/dev/null || true; rm -rf "$tmp"' EXIT INT TERM
iqn=iqn.2026-01.org.vtl:simiscsitest
piqn=iqn.2026-01.org.vtl:vaultlib
vtld_library $iqn SIMI0001
mlog=$tmp/migrator.log
BLOCKS=16 # 4 MiB of pseudo-random 256 KiB blocks
SEED=5

step "a second vtld plays the vault library over iSCSI: its own folder, port and two tapes"
pdir=$tmp/vault-vtld
mkdir -p "$pdir/etc"
# vtld_env's functions serve the vault too, with its folder, log and port; then the host's vtld is theirs again.
main_conf=$conf main_log=$log main_port=$port main_starts=$vtld_starts
conf=$pdir/etc/vtl.conf log=$pdir/vtld.log vtld_starts=0
port=$(free_port)
pport=$port
vtld_library $piqn VAULT001
"$VTLCTL" -c "$conf" cartridge add --barcode T00001L8 --count 2 >/dev/null || fail "cartridge add T00001L8 in the vault"
vtld_start
ppid_vtld=$pid pid=""
conf=$main_conf log=$main_log port=$main_port vtld_starts=$main_starts
[ "$port" != "$pport" ] || fail "the two vtlds picked one port"

cat >>"$conf" <<CONF

[physical site]
type = sim
generation = 8
drives = 2
slots = 6
tapes = 3
prefix = PHY
tape_capacity = 1G
load_ms = 20
locate_ms = 10
backhitch_ms = 20
data_dir = ../site
pools = default

[physical vault]
type = iscsi
portal = 127.0.0.1:$pport
target = $piqn
tape_capacity = 1G
pools = vault

[migrator]
buffers = 8
buffer_size = 256K
readers = 2
verify = yes

[policy]
premigrate = none
copy_pools = default, vault
CONF
"$VTLCTL" -c "$conf" cartridge add --barcode R00001L8 >/dev/null

step "vtld up; a host writes 4 MiB to R00001L8"
vtld_start
timeout 120 "$HOST" "127.0.0.1:$port" "$iqn" write 1025 257 1 $BLOCKS $SEED >"$tmp/host" 2>&1 ||
	{ cat "$tmp/host" >&2; fail "iscsi_recall write"; }

step "vtl-migrator opens both libraries; each one's tapes are in the catalog under its name, in its pool"
migrator_start
grep -q "ready: copies go to site (sim), vault (iscsi)" "$mlog" || { cat "$mlog" >&2; fail "the ready line does not name both libraries"; }
ctl physical list
grep -q "PHY001L8 *site *default" "$tmp/out" || fail "site's tape PHY001L8 is not in pool default of site"
grep -q "T00001L8 *vault *vault" "$tmp/out" || fail "the vault's tape T00001L8 is not in pool vault of vault"

step "physical drives: the two drives of each library, idle"
ctl physical drives
[ "$(grep -c "^site  *[01]  *idle " "$tmp/out")" -eq 2 ] || fail "physical drives does not show site's 2 drives idle"
[ "$(grep -c "^vault  *[01]  *idle " "$tmp/out")" -eq 2 ] || fail "physical drives does not show the vault's 2 drives idle"

step "a copy to each pool: one over iSCSI in the vault, then one in the simulated library"
ctl migrate R00001L8 --library vault --rate 2
j2=$(job_id)
# While it runs (about 2 s at 2 MB/s), the vault's drive is busy with it; an iSCSI drive reports no
# back-hitches, so they are estimated.
python3 - "$VTLCTL" "$conf" "$j2" <<'PY' || fail "physical drives never showed the vault copy's drive busy"
import json, subprocess, sys, time
vtlctl, conf, job = sys.argv[1], sys.argv[2], int(sys.argv[3])
end = time.monotonic() + 30
while time.monotonic() < end:
    ds = json.loads(subprocess.run([vtlctl, "-c", conf, "--json", "physical", "drives"], capture_output=True,
                                   text=True, check=True).stdout)["drives"]
    busy = [d for d in ds if d.get("job") == job]
    if busy and busy[0]["library"] == "vault" and busy[0]["barcode"] == "R00001L8" and busy[0]["state"] == "busy" \
            and busy[0]["backhitches_counted"] is False:
        print("   | vault drive %d busy with job %d, tape %r" % (busy[0]["drive"], job, busy[0]["tape"]))
        sys.exit(0)
    js = json.loads(subprocess.run([vtlctl, "-c", conf, "--json", "jobs"], capture_output=True, text=True,
                                   check=True).stdout)["jobs"]
    if [j["state"] for j in js if j["id"] == job][0] in ("done", "failed"):
        break
    time.sleep(0.02)
sys.exit(1)
PY
job_ends "$j2" done
grep -q "job $j2: copied R00001L8 to T0000[12]L8 file 0: .*back-hitches: 0 (estimated: .*; verified" "$mlog" ||
	{ cat "$mlog" >&2; fail "no verified copy on the vault's iSCSI tape"; }
# The site copy second: the newest, which a recall tries first.
ctl migrate R00001L8 --library site
j1=$(job_id)
job_ends "$j1" done

step "cartridge show and physical list: a good copy in each library, with its library and pool"
ctl cartridge show R00001L8
grep -q "PHY00[0-9]L8 file 0, [0-9]* bytes, good (library site, pool default)" "$tmp/out" ||
	fail "cartridge show does not name the site copy's library and pool"
grep -q "T0000[12]L8 file 0, [0-9]* bytes, good (library vault, pool vault)" "$tmp/out" ||
	fail "cartridge show does not name the vault copy's library and pool"
"$VTLCTL" -c "$conf" --json cartridge show R00001L8 >"$tmp/show"
site_tape=$(json "$tmp/show" '[k["tape"] for k in d["copies"] if k["library"] == "site" and k["state"] == "good"][0]')
vault_tape=$(json "$tmp/show" '[k["tape"] for k in d["copies"] if k["library"] == "vault" and k["state"] == "good"][0]')
ctl physical list
grep -q "$site_tape *site *default .*filling *1 " "$tmp/out" || fail "$site_tape (site) does not hold one copy"
grep -q "$vault_tape *vault *vault .*filling *1 " "$tmp/out" || fail "$vault_tape (vault) does not hold one copy"

step "verify: one job in each library, both done"
verify_in_site_and_vault R00001L8

step "the disk copy released and the site tape destroyed: the host's load recalls from the vault, bit-exact"
ctl release R00001L8
[ "$(cache_of R00001L8)" = migrated ] || fail "R00001L8 is not migrated after its release"
tape_destroy "$tmp/site/$site_tape.tape"
timeout 120 "$HOST" "127.0.0.1:$port" "$iqn" read 1025 257 1 $BLOCKS $SEED >"$tmp/host" 2>&1 ||
	{ cat "$tmp/host" "$mlog" >&2; fail "the host did not read R00001L8 back bit-exact"; }
sed 's/^/   | /' "$tmp/host"
grep "recall" "$mlog" | sed 's/^/   | /'
grep -q "the recall of R00001L8 from site failed .*; queued again for vault, which has a good copy" "$mlog" ||
	{ cat "$mlog" >&2; fail "the recall did not try the site's newer copy first and go on to the vault"; }
grep -q "recalled R00001L8 on drive [0-9] of vault" "$mlog" || { cat "$mlog" >&2; fail "the recall did not read from the vault"; }
"$VTLCTL" -c "$conf" --json cartridge show R00001L8 >"$tmp/show"
[ "$(json "$tmp/show" '[k["state"] for k in d["copies"] if k["tape"] == "'"$site_tape"'"][0]')" = bad ] ||
	{ cat "$tmp/show" >&2; fail "the destroyed site copy is not marked bad"; }
cache_becomes R00001L8 premigrated 30

migrator_stop
vtld_stop
kill -TERM "$ppid_vtld"
wait "$ppid_vtld" || fail "the vault's vtld did not stop cleanly"
ppid_vtld=""
echo "test_migrator_sim_iscsi: all steps passed"
