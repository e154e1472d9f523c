#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Runs in the guest (tests/kernel/run_vm.py): the migrator's st physical
# library (migrator/phys_st.c) against vtld on the host, through the guest's
# own st and sg drivers. build/tests/kernel/phys_st_check, built on the host
# by make, exercises every operation and checks what comes back.
set -u
. "$(dirname "$0")/guest_lib.sh"

step "discovery and login"
guest_login /dev/sch0 /dev/nst0 /dev/nst1
run lsscsi -g || fail "lsscsi"
# The changer's and the drives' SCSI generic nodes, from lsscsi -g's last column; drives in st order.
changer=$(lsscsi -g | awk '$2 == "mediumx" { print $NF; exit }')
sg0=$(lsscsi -g | awk '$2 == "tape" && $(NF-1) == "/dev/st0" { print $NF }')
sg1=$(lsscsi -g | awk '$2 == "tape" && $(NF-1) == "/dev/st1" { print $NF }')
[ -n "$changer" ] && [ -n "$sg0" ] && [ -n "$sg1" ] || fail "lsscsi -g names no sg node for the changer or a drive"

# A tape left in a drive (guest tape without restore) goes back to its slot: the check starts empty.
mtx -f /dev/sch0 status | sed -n 's/.*Data Transfer Element \([0-9]*\):Full (Storage Element \([0-9]*\) Loaded).*/\1 \2/p' |
	while read -r d s; do
		run mt -f "/dev/nst$d" offline && run mtx -f /dev/sch0 unload "$s" "$d" || fail "emptying drive $d"
	done

step "phys_st_check $changer /dev/nst0 /dev/nst1 $sg0 $sg1"
run "$VTL_BUILD/tests/kernel/phys_st_check" "$changer" /dev/nst0 /dev/nst1 "$sg0" "$sg1" || fail "phys_st_check"
run iscsiadm -m node --logout || fail "logout"
echo "guest_st: all steps passed"
