#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Runs in the guest after vtld restarted (tests/kernel/test_kernel.sh): the
# cartridge guest_tape.sh left in drive 1 is still there, and the tar archive
# on it restores byte for byte.
set -u
. "$(dirname "$0")/guest_lib.sh"

step "log in again after vtld restarted"
guest_login /dev/sch0 /dev/nst1
run mtx -f /dev/sch0 status >/tmp/mtx.out || fail "mtx status"
grep -q "Data Transfer Element 1:Full (Storage Element 3 Loaded)" /tmp/mtx.out || { cat /tmp/mtx.out; fail "drive 1 does not hold slot 3's cartridge"; }
step "restore from drive 1"
wait_ready /dev/nst1
run mt -f /dev/nst1 rewind || fail "rewind"
mkdir -p /tmp/restore
run tar -xf /dev/nst1 -C /tmp/restore || fail "tar restore"
run diff -r /usr/share/doc/mtx /tmp/restore/mtx || fail "mtx docs differ"
run diff -r /usr/share/doc/mt-st /tmp/restore/mt-st || fail "mt-st docs differ"
run mt -f /dev/nst1 offline || fail "offline"
run mtx -f /dev/sch0 unload 3 1 || fail "unload"
run iscsiadm -m node --logout || fail "logout"
echo "guest_restore: all steps passed"
