#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Runs in the guest twice (tests/kernel/test_kernel.sh), on slot 8's cartridge
# R00001L8, with the files the host made in $VTL_SRC (seen through the guest's
# read-only view of the host's root) and their checksums in $VTL_SRC.md5:
#   VTL_PHASE=write  a tar archive of $VTL_SRC goes onto the cartridge, which
#                    goes back to its slot; the host then copies it to
#                    physical tape and releases its disk copy (migrated);
#   VTL_PHASE=read   a restore as any script does it, with no wait of its own:
#                    `mtx load`, then `tar x` from the drive. vtld says "becoming
#                    ready" while vtl-migrator stages the cartridge back; st's
#                    open waits for that by itself. The files must come back
#                    byte for byte (md5).
set -u
. "$(dirname "$0")/guest_lib.sh"

[ -d "${VTL_SRC:-}" ] && [ -r "$VTL_SRC.md5" ] || fail "no originals in VTL_SRC (${VTL_SRC:-unset})"

step "discovery and login"
guest_login /dev/sch0 /dev/nst0
run mtx -f /dev/sch0 status >/tmp/mtx.out || fail "mtx status"
grep -q "Data Transfer Element 0:Empty" /tmp/mtx.out || { cat /tmp/mtx.out; fail "drive 0 is not empty"; }
grep -q "Storage Element 8:Full :VolumeTag=R00001L8" /tmp/mtx.out || { cat /tmp/mtx.out; fail "slot 8 does not hold R00001L8"; }

case "${VTL_PHASE:-}" in
write)
	step "a tar archive of the originals onto R00001L8, then back to slot 8"
	run mtx -f /dev/sch0 load 8 0 || fail "mtx load 8 0"
	wait_ready /dev/nst0
	run mt -f /dev/nst0 rewind || fail "rewind"
	run tar -cf /dev/nst0 -C "$VTL_SRC" . || fail "tar write"
	run mt -f /dev/nst0 offline || fail "offline"
	run mtx -f /dev/sch0 unload 8 0 || fail "mtx unload 8 0"
	;;
read)
	step "restore from the migrated cartridge: mtx load, then tar x (no wait of the guest's own)"
	t0=$(date +%s)
	run mtx -f /dev/sch0 load 8 0 || fail "mtx load 8 0"
	mkdir -p /tmp/back
	run tar -xf /dev/nst0 -C /tmp/back || fail "tar restore"
	echo "load and restore took $(($(date +%s) - t0)) s"
	step "the restored files against the originals"
	echo "\$ (cd /tmp/back && md5sum -c $VTL_SRC.md5)"
	(cd /tmp/back && md5sum -c "$VTL_SRC.md5") || fail "the restored files differ from the originals"
	run mt -f /dev/nst0 offline || fail "offline"
	run mtx -f /dev/sch0 unload 8 0 || fail "mtx unload 8 0"
	;;
*) fail "VTL_PHASE must be write or read (${VTL_PHASE:-unset})" ;;
esac
run iscsiadm -m node --logout || fail "logout"
echo "guest_recall ($VTL_PHASE): all steps passed"
