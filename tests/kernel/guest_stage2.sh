#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Stage 2 in the guest, on the host's root seen through an overlay: mounts what
# a system needs, runs the test script ($VTL_SCRIPT, with the NAME=VALUE words
# of the kernel command line in its environment), writes its exit status to
# /results/exit-status and powers off on every path.
# Under systemd (run_vm.py --init systemd: stage 2 is a service, VTL_INIT=systemd) /run and
# /dev/pts are systemd's already.
if [ "${VTL_INIT:-}" != systemd ]; then
	mount -t devpts devpts /dev/pts 2>/dev/null
	mount -t tmpfs tmpfs /run
fi
mkdir -p /run/lock /var/lock
hostname vtl-guest
# Only NAME=value words whose NAME is a shell variable's: export of another (systemd.unit=...) is
# a special built-in's error, which ends a POSIX shell.
for w in $(cat /proc/cmdline); do
	case "$w" in
	*=*) ;;
	*) continue ;;
	esac
	case "${w%%=*}" in
	"" | [0-9]* | *[!A-Za-z0-9_]*) ;;
	*) export "$w" ;;
	esac
done
status=1
if [ -n "${VTL_SCRIPT:-}" ] && [ -r "$VTL_SCRIPT" ]; then
	sh "$VTL_SCRIPT" >/results/guest.log 2>&1
	status=$?
else
	echo "no test script ($VTL_SCRIPT)" >/results/guest.log
fi
dmesg >/results/dmesg.log 2>&1
echo "$status" >/results/exit-status
sync
echo "VTL-GUEST-DONE $status"
poweroff -f
