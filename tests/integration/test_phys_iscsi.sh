#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# The migrator's iSCSI physical library (migrator/phys_iscsi.c) against vtld
# playing the physical library: vtld on a free loopback port in a temporary
# folder, with two cartridges in slots, one in a mail slot and a small one
# (12 MB) in a slot; phys_iscsi_vtl then drives every phys_ops call and checks
# what comes back (see its header comment); phys_parallel_vtl drives both
# drives at once from two threads with a third taking inventories, and a
# vtld that allows fewer sessions than the library needs must be refused
# with the reason; then again with vtld asking for
# CHAP and offering mutual CHAP, where a wrong expected target secret must
# make the migrator's library refuse the target.
#
# vtl-migrator itself, with [physical] mutual_user/mutual_secret, refuses the
# library for a wrong target secret and starts with the right one.
#
# Usage: sh test_phys_iscsi.sh <build-dir>   (needs vtld, vtlctl, vtl-migrator, tests/integration/phys_iscsi_vtl, phys_parallel_vtl)
set -eu

build=$(cd "${1:?usage: test_phys_iscsi.sh <build-dir>}" && pwd)
VTLD=$build/vtld
VTLCTL=$build/vtlctl
MIGRATOR=$build/vtl-migrator
CHECK=$build/tests/integration/phys_iscsi_vtl
PARALLEL=$build/tests/integration/phys_parallel_vtl
mpid=""
for x in "$VTLD" "$VTLCTL" "$MIGRATOR" "$CHECK" "$PARALLEL"; do
	[ -x "$x" ] || { echo "FAIL: $x is missing; build it with 'make'" >&2; exit 1; }
done

. "$(dirname "$0")/vtld_env.sh"
vtld_env vtl-phys-iscsi
# vtld_env's trap, and the migrator this test may have started.
trap '[ -z "$mpid" ] || kill "$mpid" 2>/dev/null || true; [ -z "$pid" ] || kill "$pid" 2>/dev/null || true; rm -rf "$tmp"' \
	EXIT INT TERM
iqn=iqn.2026-01.org.vtl:physlib
vtld_library $iqn PHYS0001
step "a library of 2 drives, 8 slots, 2 mail slots: P00001L8 P00002L8, M00001L8 in a mail slot, S00001L8 of 12 MB"
"$VTLCTL" -c "$conf" cartridge add --barcode P00001L8 --count 2 >/dev/null || fail "cartridge add P00001L8"
mail=$("$VTLCTL" -c "$conf" --json library show |
	python3 -c 'import json, sys; print(json.load(sys.stdin)["elements"]["mail_slots"]["first"])') ||
	fail "vtlctl library show: no mail slot address"
"$VTLCTL" -c "$conf" cartridge add --barcode M00001L8 --slot "$mail" >/dev/null || fail "cartridge add M00001L8 --slot $mail"
"$VTLCTL" -c "$conf" cartridge add --barcode S00001L8 --capacity 12M >/dev/null || fail "cartridge add S00001L8"

step "vtld listens on 127.0.0.1:$port"
vtld_start
step "phys_iscsi_vtl: every operation of the iSCSI physical library"
timeout 60 "$CHECK" "127.0.0.1:$port" "$iqn" >"$tmp/check" 2>&1 || { sed 's/^/   /' "$tmp/check"; fail "phys_iscsi_vtl failed"; }
sed 's/^/   /' "$tmp/check"
step "phys_parallel_vtl: two drives written and read back at once by two threads, inventories beside them"
timeout 120 "$PARALLEL" "127.0.0.1:$port" "$iqn" >"$tmp/check" 2>&1 || { sed 's/^/   /' "$tmp/check"; fail "phys_parallel_vtl failed"; }
sed 's/^/   /' "$tmp/check"
# One session per unit, each its own I_T nexus: one ISID random part, the qualifiers 0 (changer), 1 and 2.
isids=$(grep "logged in: normal session of iqn.2026-01.org.vtl:phys-parallel-check; ISID" "$log" | sed 's/.*ISID //' |
	sort -u)
[ "$(echo "$isids" | cut -c1-8 | sort -u | wc -l)" = 1 ] && [ "$(echo "$isids" | cut -c9-12 | tr '\n' ' ')" = "0000 0001 0002 " ] ||
	fail "the library's sessions are not one per unit with qualifiers 0, 1, 2: $(echo $isids)"
step "the library logged in 3 sessions (changer, drive 0, drive 1): ISIDs $(echo $isids)"
step "a migrator that expects mutual CHAP refuses this target, which proves nothing (an impostor would not either)"
PHYS_EXPECT_REFUSED=1 PHYS_CHAP_USER=migrator PHYS_CHAP_SECRET=migrator-secret-1 PHYS_MUTUAL_USER=physlib \
	PHYS_MUTUAL_SECRET=physlib-secret-2 timeout 60 "$CHECK" "127.0.0.1:$port" "$iqn" >"$tmp/check" 2>&1 ||
	{ sed 's/^/   /' "$tmp/check"; fail "a target without mutual CHAP was not refused"; }
sed 's/^/   /' "$tmp/check"
vtld_stop

# A target that allows fewer sessions than the library needs (1 + 2 drives): the open fails and says why.
step "vtld with max_sessions = 2: the library's third session is refused, and the open says so"
cp "$conf" "$tmp/conf.saved"
echo "max_sessions = 2" >>"$conf"
vtld_start
PHYS_EXPECT_SESSIONS_REFUSED=1 timeout 60 "$PARALLEL" "127.0.0.1:$port" "$iqn" >"$tmp/check" 2>&1 ||
	{ sed 's/^/   /' "$tmp/check"; fail "a refused drive session was not reported"; }
sed 's/^/   /' "$tmp/check"
vtld_stop
cp "$tmp/conf.saved" "$conf"

# The same library behind mutual CHAP ([iscsi] of vtld: the initiator's and the target's own
# credentials); the migrator's side is [physical] chap_user/chap_secret/mutual_user/mutual_secret.
step "vtld with CHAP and mutual CHAP: every operation again, logged in with both"
cat >>"$conf" <<CONF
chap_user = migrator
chap_secret = migrator-secret-1
mutual_user = physlib
mutual_secret = physlib-secret-2
CONF
chmod 600 "$conf" # a file with secrets must not be readable by others (vtld refuses it)
vtld_start
PHYS_CHAP_USER=migrator PHYS_CHAP_SECRET=migrator-secret-1 PHYS_MUTUAL_USER=physlib \
	PHYS_MUTUAL_SECRET=physlib-secret-2 timeout 60 "$CHECK" "127.0.0.1:$port" "$iqn" >"$tmp/check" 2>&1 ||
	{ sed 's/^/   /' "$tmp/check"; fail "phys_iscsi_vtl with mutual CHAP failed"; }
sed 's/^/   /' "$tmp/check"
grep -q "a wrong expected target secret: refused" "$tmp/check" || fail "the wrong target secret was not tried"

# vtl-migrator itself, configured by its [physical] keys: a wrong mutual_secret makes it refuse the
# library (and exit 1, naming the refusal); the right one lets it start.
mconf=$tmp/etc/migrator.conf
migrator_conf() {
	cp "$conf" "$mconf"
	cat >>"$mconf" <<CONF

[physical]
type = iscsi
name = isclib
portal = 127.0.0.1:$port
target = $iqn
initiator = iqn.2026-01.org.vtl:migrator
tape_capacity = 1G
chap_user = migrator
chap_secret = migrator-secret-1
mutual_user = physlib
mutual_secret = $1
CONF
	chmod 600 "$mconf"
}
step "vtl-migrator with [physical] mutual_secret not the target's: refuses the library"
migrator_conf physlib-secret-WRONG
rc=0
timeout 30 "$MIGRATOR" -c "$mconf" 2>"$tmp/mig.log" || rc=$?
sed 's/^/   | /' "$tmp/mig.log"
[ "$rc" = 1 ] || fail "vtl-migrator exited $rc with a wrong target secret, expected 1"
grep -q "Invalid CHAP_R response from the target (mutual CHAP: the target must prove it knows the secret of physlib)" \
	"$tmp/mig.log" || fail "vtl-migrator did not say the target failed mutual CHAP"
step "vtl-migrator with the target's mutual_secret: starts"
migrator_conf physlib-secret-2
"$MIGRATOR" -c "$mconf" 2>"$tmp/mig.log" &
mpid=$!
i=0
until grep -q "ready: copies go to isclib (iscsi)" "$tmp/mig.log"; do
	i=$((i + 1))
	[ "$i" -le 200 ] || { cat "$tmp/mig.log" >&2; fail "vtl-migrator did not come up within 20 s"; }
	kill -0 "$mpid" 2>/dev/null || { cat "$tmp/mig.log" >&2; fail "vtl-migrator exited"; }
	sleep 0.1
done
kill -TERM "$mpid"
wait "$mpid" || { cat "$tmp/mig.log" >&2; fail "vtl-migrator did not stop cleanly"; }
mpid=""
sed 's/^/   | /' "$tmp/mig.log"
vtld_stop
echo "test_phys_iscsi: all steps passed"
