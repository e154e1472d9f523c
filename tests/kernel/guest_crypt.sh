#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Runs in the guest (tests/kernel/run_vm.py): a real Linux host encrypts a
# tape with Debian's stenc, as an administrator does for hardware
# encryption: it loads slot 7 (E00001L8) with mtx, sets a key on /dev/nst0
# (SECURITY PROTOCOL OUT), writes a tar archive holding $VTL_MARKER, reads
# it back and compares, and stenc --detail shows the block encrypted and
# decryptable; with encryption off, tar cannot read it and a READ through
# sg_raw gets DATA PROTECT, "Unable to decrypt data" (74h/01h), and stenc
# shows "unable to decrypt". The host then greps its pool for the marker.
set -u
. "$(dirname "$0")/guest_lib.sh"
[ -n "${VTL_MARKER:-}" ] || fail "no VTL_MARKER"

step "login; mtx loads slot 7 into drive 0"
guest_login /dev/sch0 /dev/nst0
run mtx -f /dev/sch0 load 7 0 || fail "mtx load 7 0"
wait_ready /dev/nst0
sg=$(lsscsi -g | awk '/tape/ {print $NF; exit}')
[ -n "$sg" ] || fail "no SCSI generic node for the tape drive"

step "stenc sets a 256-bit key (algorithm index 1) with a description"
{ od -An -tx1 -N32 /dev/urandom | tr -d ' \n'; echo; echo "kernel guest key"; } >/tmp/tape.key
chmod 600 /tmp/tape.key
run stenc -f /dev/nst0 -e on -a 1 -k /tmp/tape.key || fail "stenc -e on"
run stenc -f /dev/nst0 --detail >/tmp/detail1 2>&1 || fail "stenc --detail"
cat /tmp/detail1
grep -q "kernel guest key" /tmp/detail1 || fail "stenc --detail does not show the key description"

step "tar writes an archive with the marker, reads it back and compares"
mkdir -p /tmp/src /tmp/back
cp -r /usr/share/doc/mt-st /tmp/src/ 2>/dev/null
for i in 1 2 3 4 5 6 7 8; do echo "$VTL_MARKER line $i"; done >/tmp/src/marker.txt
dd if=/dev/urandom of=/tmp/src/random.bin bs=1M count=4 2>/dev/null
run mt -f /dev/nst0 rewind || fail "rewind"
run tar -cf /dev/nst0 -C /tmp src || fail "tar write"
run mt -f /dev/nst0 rewind || fail "rewind"
run stenc -f /dev/nst0 --detail >/tmp/detail2 2>&1 || fail "stenc --detail"
cat /tmp/detail2
grep -q "Encrypted and able to decrypt" /tmp/detail2 || fail "stenc does not see the block encrypted and decryptable"
run tar -xf /dev/nst0 -C /tmp/back || fail "tar read with the key"
run diff -r /tmp/src /tmp/back/src || fail "the archive read back differs"

step "encryption off: tar cannot read the archive; READ gets DATA PROTECT, unable to decrypt"
run stenc -f /dev/nst0 -e off -a 1 || fail "stenc -e off"
run mt -f /dev/nst0 rewind || fail "rewind"
rm -rf /tmp/back2 && mkdir -p /tmp/back2
if tar -xf /dev/nst0 -C /tmp/back2 2>/tmp/tar.err; then
	fail "tar read the encrypted archive without the key"
fi
echo "\$ tar -xf /dev/nst0: failed, as it must: $(head -1 /tmp/tar.err)"
run mt -f /dev/nst0 rewind || fail "rewind"
# READ(6), variable block, up to 512 KiB: the first block of the archive.
sg_raw -r 512k "$sg" 08 00 08 00 00 00 >/tmp/raw.out 2>&1
cat /tmp/raw.out
grep -qi "data protect" /tmp/raw.out || fail "READ without the key: no DATA PROTECT"
grep -qiE "unable to decrypt|asc=74, ascq=01|74h/01h|0x74.*0x1" /tmp/raw.out || fail "READ without the key: not 74h/01h"
run stenc -f /dev/nst0 --detail >/tmp/detail3 2>&1
cat /tmp/detail3
grep -q "unable to decrypt" /tmp/detail3 || fail "stenc does not say the block cannot be decrypted"

step "unload, back to slot 7"
run mt -f /dev/nst0 offline || fail "mt offline"
run mtx -f /dev/sch0 unload 7 0 || fail "mtx unload 7 0"
echo "guest crypt: all steps passed"
