#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Runs in the guest (tests/kernel/run_vm.py): a real Linux host logs in to
# vtld on the host (10.0.2.2:$VTL_PORT) with open-iscsi, gets the changer
# and drives through the st and ch drivers, and uses unmodified tools: lsscsi,
# sg_inq, mtx, mt and tar. Writes its log to stdout (/results/guest.log).
set -u
. "$(dirname "$0")/guest_lib.sh"

step "discovery and login (no hand-made node records)"
guest_login /dev/sch0 /dev/nst0
run lsscsi -g || fail "lsscsi"
lsscsi | grep -q "mediumx" || fail "lsscsi shows no medium changer"
lsscsi | grep -q "tape" || fail "lsscsi shows no tape drive"
run sg_inq /dev/nst0 || fail "sg_inq /dev/nst0"
run sg_turs /dev/sch0 || fail "sg_turs /dev/sch0"

step "mtx: status, load slot 1 into drive 0"
run mtx -f /dev/sch0 status >/tmp/mtx.out || fail "mtx status"
cat /tmp/mtx.out
cp /tmp/mtx.out /results/mtx-status.txt # the host compares it with vtlctl's view
grep -q "Storage Element 1:Full" /tmp/mtx.out || fail "mtx does not see slot 1 full"
run mtx -f /dev/sch0 load 1 0 || fail "mtx load 1 0"
wait_ready /dev/nst0
run mt -f /dev/nst0 status >/tmp/mt.out || fail "mt status"
cat /tmp/mt.out
grep -q "Density code 0x5e (LTO-8)" /tmp/mt.out || fail "st does not see the LTO-8 density"

step "tar: two archives separated by filemarks, read back and compared"
mkdir -p /tmp/src1 /tmp/src2
cp -r /usr/share/doc/mt-st /usr/share/doc/mtx /tmp/src1/ 2>/dev/null
cp -r /etc/iscsi /tmp/src2/ 2>/dev/null
dd if=/dev/urandom of=/tmp/src2/random.bin bs=1M count=8 2>/dev/null
run mt -f /dev/nst0 rewind || fail "rewind"
run tar -cf /dev/nst0 -C /tmp src1 || fail "tar write 1"
run tar -cf /dev/nst0 -C /tmp src2 || fail "tar write 2"
run mt -f /dev/nst0 rewind || fail "rewind"
run mt -f /dev/nst0 fsf 1 || fail "fsf 1"
mkdir -p /tmp/back
run tar -xf /dev/nst0 -C /tmp/back || fail "tar read 2"
run mt -f /dev/nst0 rewind || fail "rewind"
run tar -xf /dev/nst0 -C /tmp/back || fail "tar read 1"
run diff -r /tmp/src1 /tmp/back/src1 || fail "archive 1 differs"
run diff -r /tmp/src2 /tmp/back/src2 || fail "archive 2 differs"
run mt -f /dev/nst0 tell || fail "tell"

step "dd of 64 MiB in 256 KiB blocks and back, with checksums"
dd if=/dev/urandom of=/tmp/big bs=256k count=256 2>/dev/null
run mt -f /dev/nst0 setblk 0 || fail "setblk 0"
run mt -f /dev/nst0 rewind
run dd if=/tmp/big of=/dev/nst0 bs=256k || fail "dd write"
run mt -f /dev/nst0 tell >/tmp/tell.out || fail "tell"
cat /tmp/tell.out
# 256 blocks, then the filemark st writes when dd closes the device: object 257.
grep -q "At block 257\." /tmp/tell.out || fail "the drive is not after the 256 blocks and their filemark"
run mt -f /dev/nst0 rewind
# Read back through a pipe: the checksum needs no second 64 MiB copy in the guest's memory.
echo "\$ dd if=/dev/nst0 bs=256k | md5sum"
b=$({ dd if=/dev/nst0 bs=256k 2>/tmp/dd.err || echo "dd read failed" >>/tmp/dd.err; } | md5sum)
cat /tmp/dd.err
grep -q "dd read failed" /tmp/dd.err && fail "dd read"
grep -q "^256+0 records in" /tmp/dd.err || fail "dd did not read back 256 whole blocks"
a=$(md5sum </tmp/big)
rm -f /tmp/big
[ "$a" = "$b" ] || fail "dd data differs ($a / $b)"
echo "checksums match: $a"

step "a block larger than the read asks: st reports it (ENOMEM), as for a real drive"
run mt -f /dev/nst0 rewind
dd if=/dev/urandom of=/tmp/one bs=1M count=1 2>/dev/null
run dd if=/tmp/one of=/dev/nst0 bs=1M || fail "dd 1 MiB block"
run mt -f /dev/nst0 rewind
if dd if=/dev/nst0 of=/tmp/part bs=64k count=1 2>/tmp/dd.err; then
	fail "reading a 1 MiB block with a 64 KiB read succeeded"
fi
cat /tmp/dd.err
grep -q "Cannot allocate memory" /tmp/dd.err || fail "st did not report the larger block as ENOMEM"

step "sg3_utils on the drive and the changer"
for dev in /dev/nst0 /dev/sch0; do
	run sg_vpd -p 0x80 "$dev" || fail "sg_vpd 0x80 $dev"
	run sg_vpd -p 0x83 "$dev" >/dev/null || fail "sg_vpd 0x83 $dev"
	run sg_modes -a "$dev" >/dev/null || fail "sg_modes $dev"
	run sg_logs -a "$dev" >/dev/null || fail "sg_logs -a $dev"
	run sg_opcodes "$dev" >/dev/null || fail "sg_opcodes $dev"
done
run sg_read_attr /dev/nst0 >/tmp/attr || fail "sg_read_attr"
head -20 /tmp/attr

step "mt: positioning, compression, erase"
run mt -f /dev/nst0 rewind
for i in 1 2 3; do dd if=/dev/urandom bs=64k count=4 2>/dev/null >/dev/nst0 || fail "dd file $i"; done
run mt -f /dev/nst0 rewind
run mt -f /dev/nst0 fsf 2 || fail "fsf 2"
run mt -f /dev/nst0 fsr 1 || fail "fsr 1"
run mt -f /dev/nst0 bsr 1 || fail "bsr 1"
run mt -f /dev/nst0 bsf 1 || fail "bsf 1"
run mt -f /dev/nst0 eod || fail "eod"
run mt -f /dev/nst0 tell || fail "tell"
run mt -f /dev/nst0 seek 5 || fail "seek 5"
run mt -f /dev/nst0 tell || fail "tell"
run mt -f /dev/nst0 compression 0 || fail "compression off"
run mt -f /dev/nst0 compression 1 || fail "compression on"
run mt -f /dev/nst0 densities >/dev/null || fail "densities"
run mt -f /dev/nst0 setblk 512 || fail "setblk 512"
run mt -f /dev/nst0 setblk 0 || fail "setblk 0"
run mt -f /dev/nst0 rewind
run mt -f /dev/nst0 erase || fail "erase"
run mt -f /dev/nst0 status || fail "status"

step "mtx: transfer, eepos, inventory"
run mtx -f /dev/sch0 inventory || fail "mtx inventory"
run mtx -f /dev/sch0 transfer 2 6 || fail "mtx transfer 2 6"
run mtx -f /dev/sch0 transfer 6 2 || fail "mtx transfer 6 2"
# eepos sets the vendor bits of MOVE MEDIUM's control byte (extend or retract a
# mail slot's tray on some libraries); this library has no tray and must move as
# without them. Storage elements 9 and 10 are the mail slots.
run mtx -f /dev/sch0 eepos 1 transfer 2 9 || fail "mtx eepos 1 transfer 2 9"
run mtx -f /dev/sch0 eepos 2 transfer 9 10 || fail "mtx eepos 2 transfer 9 10"
run mtx -f /dev/sch0 status >/tmp/mtx.out || fail "mtx status"
grep "Storage Element" /tmp/mtx.out
grep -q "Storage Element 10 IMPORT/EXPORT:Full :VolumeTag=K00002L8" /tmp/mtx.out || fail "mail slot 10 does not hold K00002L8"
run mtx -f /dev/sch0 eepos 1 transfer 10 2 || fail "mtx eepos 1 transfer 10 2"
run mtx -f /dev/sch0 eepos 1 load 4 1 || fail "mtx eepos 1 load 4 1"
wait_ready /dev/nst1
run mt -f /dev/nst1 offline || fail "mt offline nst1"
run mtx -f /dev/sch0 eepos 0 unload 4 1 || fail "mtx eepos 0 unload 4 1"
run mtx -f /dev/sch0 status >/tmp/mtx.out || fail "mtx status"
grep -q "Storage Element 2:Full :VolumeTag=K00002L8" /tmp/mtx.out || fail "slot 2 does not hold K00002L8"
grep -q "Storage Element 4:Full :VolumeTag=K00004L8" /tmp/mtx.out || fail "slot 4 does not hold K00004L8"
grep -q "Data Transfer Element 1:Empty" /tmp/mtx.out || fail "drive 1 is not empty"

step "offline and unload"
run mt -f /dev/nst0 offline || fail "mt offline"
run mtx -f /dev/sch0 unload 1 0 || fail "mtx unload"
run mtx -f /dev/sch0 status | head -5
step "a backup left in drive 1 for a restore after vtld restarts"
run mtx -f /dev/sch0 load 3 1 || fail "mtx load 3 1"
wait_ready /dev/nst1
run tar -cf /dev/nst1 -C /usr/share/doc mtx mt-st || fail "tar to drive 1"
run mt -f /dev/nst1 weof 1 || fail "weof"
run iscsiadm -m node --logout || fail "logout"
echo "guest_tape: all steps passed"
