# SPDX-License-Identifier: Apache-2.0
#
# Sourced by the guest scripts (guest_*.sh): logging helpers, the iSCSI login
# every guest starts with, and waits for a drive to become ready. Each wait
# has a bound: a guest must always end.

fail() { echo "FAIL: $*"; exit 1; }
step() { echo "-- $*"; }
run() { echo "\$ $*"; "$@"; }

# Loads the SCSI and iSCSI modules, starts iscsid, discovers the target on the
# host (10.0.2.2:$VTL_PORT, or $VTL_PORTAL: the systemd guest's own vtld) and
# logs in without hand-made node records, then waits until every device node
# named in the arguments exists.
guest_login() {
	for m in sg st ch iscsi_tcp; do modprobe "$m" || fail "modprobe $m"; done
	mkdir -p /etc/iscsi /var/lib/iscsi /run/lock/iscsi
	echo "InitiatorName=iqn.2026-01.org.vtl:kernel-guest" >/etc/iscsi/initiatorname.iscsi
	iscsid -f >/results/iscsid.log 2>&1 &
	sleep 1
	run iscsiadm -m discovery -t sendtargets -p "${VTL_PORTAL:-10.0.2.2:$VTL_PORT}" || fail "discovery"
	run iscsiadm -m node --login || fail "login"
	for dev in "$@"; do
		i=0
		until [ -e "$dev" ]; do
			i=$((i + 1))
			[ "$i" -le 100 ] || fail "no $dev after login"
			sleep 0.2
		done
	done
}

# Waits (10 s at most) until the tape drive $1 answers `mt status`: a cartridge is loaded and ready.
wait_ready() {
	i=0
	until mt -f "$1" status >/dev/null 2>&1; do
		i=$((i + 1))
		[ "$i" -le 50 ] || fail "$1 did not become ready"
		sleep 0.2
	done
}
