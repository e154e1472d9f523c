#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Stage 2 in the guest, on the host's root seen through an overlay: mounts what
# a system needs, runs the test script ($VTL_SCRIPT, with the NAME=VALUE words
# of the kernel command line in its environment), writes its exit status to
# /results/exit-status and powers off on every path.
mount -t devpts devpts /dev/pts 2>/dev/null
mount -t tmpfs tmpfs /run
mkdir -p /run/lock /var/lock
hostname vtl-guest
for w in $(cat /proc/cmdline); do
	case "$w" in
	*=*) export "$w" 2>/dev/null || true ;;
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
