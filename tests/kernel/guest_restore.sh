#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Runs in the guest after vtld restarted (tests/kernel/test_kernel.sh): the
# cartridge guest_tape.sh left in drive 1 is still there, and the tar archive
# on it restores byte for byte.
set -u
fail() { echo "FAIL: $*"; exit 1; }
step() { echo "-- $*"; }
run() { echo "\$ $*"; "$@"; }

for m in sg st ch iscsi_tcp; do modprobe "$m" || fail "modprobe $m"; done
mkdir -p /etc/iscsi /var/lib/iscsi /run/lock/iscsi
echo "InitiatorName=iqn.2026-01.org.vtl:kernel-guest" >/etc/iscsi/initiatorname.iscsi
iscsid -f >/results/iscsid.log 2>&1 &
sleep 1
step "log in again after vtld restarted"
run iscsiadm -m discovery -t sendtargets -p "10.0.2.2:$VTL_PORT" || fail "discovery"
run iscsiadm -m node --login || fail "login"
i=0
until [ -e /dev/sch0 ] && [ -e /dev/nst1 ]; do
	i=$((i + 1))
	[ "$i" -le 100 ] || fail "no /dev/sch0 and /dev/nst1 after login"
	sleep 0.2
done
run mtx -f /dev/sch0 status >/tmp/mtx.out || fail "mtx status"
grep -q "Data Transfer Element 1:Full (Storage Element 3 Loaded)" /tmp/mtx.out || { cat /tmp/mtx.out; fail "drive 1 does not hold slot 3's cartridge"; }
step "restore from drive 1"
i=0
until mt -f /dev/nst1 status >/dev/null 2>&1; do
	i=$((i + 1))
	[ "$i" -le 50 ] || fail "drive 1 did not become ready"
	sleep 0.2
done
run mt -f /dev/nst1 rewind || fail "rewind"
mkdir -p /tmp/restore
run tar -xf /dev/nst1 -C /tmp/restore || fail "tar restore"
run diff -r /usr/share/doc/mtx /tmp/restore/mtx || fail "mtx docs differ"
run diff -r /usr/share/doc/mt-st /tmp/restore/mt-st || fail "mt-st docs differ"
run mt -f /dev/nst1 offline || fail "offline"
run mtx -f /dev/sch0 unload 3 1 || fail "unload"
run iscsiadm -m node --logout || fail "logout"
echo "guest_restore: all steps passed"
