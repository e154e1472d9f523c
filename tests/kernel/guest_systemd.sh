#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Runs in a guest that booted the host's systemd as PID 1 (run_vm.py --init systemd), as a service
# (tests/kernel/test_kernel.sh's systemd entry): installs the package make deb built ($VTL_DEB) with
# dpkg, which starts nothing; writes /etc/vtl/vtl.conf; makes the catalog as the vtl user; starts
# vtld with systemctl and logs in to it over iSCSI (127.0.0.1:3260, the port the unit's capability
# allows) with open-iscsi; tar to /dev/nst0 and back; systemctl restart vtld keeps the cartridge in
# its drive and its data; vtl-migrator runs beside it with a simulated physical library; both stop
# cleanly with systemctl stop; the journal has their ready and stopping lines at priority info.
set -u
. "$(dirname "$0")/guest_lib.sh"
conf=/etc/vtl/vtl.conf

# unit_is UNIT STATE: systemctl is-active says STATE.
unit_is() {
	s=$(systemctl is-active "$1")
	[ "$s" = "$2" ] || { systemctl status --no-pager "$1" | tail -20; journalctl -u "$1" --no-pager | tail -20; fail "$1 is $s, not $2"; }
	echo "-- $1 is $2"
}
# stopped_clean UNIT: inactive (not failed), its main process exited 0 with result success.
stopped_clean() {
	unit_is "$1" inactive
	r=$(systemctl show -p Result --value "$1") st=$(systemctl show -p ExecMainStatus --value "$1")
	echo "-- $1: Result=$r ExecMainStatus=$st"
	[ "$r" = success ] && [ "$st" = 0 ] || fail "$1 did not stop cleanly (Result=$r, ExecMainStatus=$st)"
}
# journal_line UNIT PRIORITY TEXT: the unit's journal has TEXT at PRIORITY (syslog's number) exactly.
journal_line() {
	journalctl -u "$1" -p "$2..$2" -o cat --no-pager >/tmp/journal.txt
	grep -q "$3" /tmp/journal.txt || { journalctl -u "$1" -o verbose --no-pager | tail -40; fail "$1's journal has no '$3' at priority $2"; }
	echo "-- journal of $1, priority $2: $(grep "$3" /tmp/journal.txt | tail -1)"
}
# same_dirs SRC BACK: equal trees.
same_dirs() { run diff -r "$1" "$2" >/dev/null || fail "$2 differs from $1"; }

step "systemd is PID 1"
[ "$(cat /proc/1/comm)" = systemd ] || fail "PID 1 is $(cat /proc/1/comm), not systemd"
systemctl is-system-running >/tmp/state.txt 2>&1 || :
echo "-- system: $(cat /tmp/state.txt)"

step "dpkg -i $VTL_DEB: the vtl user and /var/lib/vtl, the units disabled, nothing started"
[ -r "${VTL_DEB:-}" ] || fail "no package (VTL_DEB=${VTL_DEB:-})"
# man-db's trigger would index every manual page under emulation: minutes for nothing here.
rm -f /var/lib/man-db/auto-update
t0=$(date +%s)
run dpkg -i "$VTL_DEB" >/tmp/dpkg.log 2>&1 || { cat /tmp/dpkg.log; fail "dpkg -i"; }
echo "-- installed in $(($(date +%s) - t0)) s"
run id vtl || fail "the package made no vtl user"
own=$(stat -c '%U:%G %a' /var/lib/vtl) || fail "no /var/lib/vtl"
[ "$own" = "vtl:vtl 750" ] || fail "/var/lib/vtl is $own, not vtl:vtl 750"
for u in vtld vtl-migrator; do
	e=$(systemctl is-enabled "$u.service" 2>&1)
	[ "$e" = disabled ] || fail "$u.service is $e after dpkg -i, not disabled"
	unit_is "$u" inactive
done
dpkg -L vtl | grep -qx /etc/vtl/vtl.conf || fail "dpkg -L vtl lists no /etc/vtl/vtl.conf"
grep -qx /etc/vtl/vtl.conf /var/lib/dpkg/info/vtl.conffiles || fail "/etc/vtl/vtl.conf is not a conffile"

step "vtl.conf for the guest; the catalog made as the vtl user (vtlctl finds /etc/vtl/vtl.conf)"
cat >"$conf" <<CONF
[library]
name = guest
serial = GUEST00001
slots = 6
drives = 1
[pool]
member = /var/lib/vtl/pool/m0
[catalog]
path = /var/lib/vtl/catalog.db
[iscsi]
listen = 127.0.0.1
port = 3260
[daemon]
control_socket = /run/vtl/vtld.sock
[migrator]
control_socket = /run/vtl/migrator.sock
[physical]
type = sim
name = simlib
drives = 1
tapes = 2
tape_capacity = 1G
data_dir = /var/lib/vtl/physical
[policy]
premigrate = none
CONF
run runuser -u vtl -- vtlctl init || fail "vtlctl init as vtl"
run runuser -u vtl -- vtlctl cartridge add --barcode G00001L8 --count 2 || fail "vtlctl cartridge add"
bad=$(find /var/lib/vtl ! -user vtl | head -3)
[ -z "$bad" ] || fail "not the vtl user's: $bad"
echo "-- every file in /var/lib/vtl is the vtl user's"

step "systemctl enable --now vtld"
run systemctl enable --now vtld.service || { journalctl -u vtld --no-pager | tail; fail "systemctl enable --now vtld"; }
unit_is vtld active
journal_line vtld 6 "library guest ready:"
run vtlctl status >/tmp/status.txt || fail "vtlctl status (as root, the installed config)"

step "open-iscsi to 127.0.0.1:3260; tar to /dev/nst0 and back"
VTL_PORTAL=127.0.0.1:3260 guest_login /dev/sch0 /dev/nst0
run mtx -f /dev/sch0 load 1 0 || fail "mtx load 1 0"
wait_ready /dev/nst0
mkdir -p /tmp/src /tmp/back
cp -r /usr/share/doc/mt-st /usr/share/doc/mtx /tmp/src/ 2>/dev/null
dd if=/dev/urandom of=/tmp/src/random.bin bs=1M count=8 2>/dev/null
run mt -f /dev/nst0 rewind || fail "rewind"
run tar -cf /dev/nst0 -C /tmp src || fail "tar write"
run mt -f /dev/nst0 rewind || fail "rewind"
run tar -xf /dev/nst0 -C /tmp/back || fail "tar read"
same_dirs /tmp/src /tmp/back/src
run iscsiadm -m node --logout || fail "logout"

step "systemctl restart vtld: the cartridge stays in drive 0, its archive reads back"
run systemctl restart vtld.service || fail "systemctl restart vtld"
unit_is vtld active
[ "$(journalctl -u vtld -p 6..6 -o cat --no-pager | grep -c "library guest ready:")" -ge 2 ] ||
	fail "vtld's journal has not two ready lines after the restart"
run iscsiadm -m node --login || fail "login after the restart"
i=0
until [ -e /dev/nst0 ] && [ -e /dev/sch0 ]; do i=$((i + 1)); [ "$i" -le 100 ] || fail "no devices after the restart"; sleep 0.2; done
run mtx -f /dev/sch0 status >/tmp/mtx.out || fail "mtx status"
grep -q "Data Transfer Element 0:Full (Storage Element 1 Loaded):VolumeTag = G00001L8" /tmp/mtx.out ||
	{ cat /tmp/mtx.out; fail "drive 0 does not hold G00001L8 after the restart"; }
wait_ready /dev/nst0
rm -rf /tmp/back && mkdir -p /tmp/back
run mt -f /dev/nst0 rewind || fail "rewind"
run tar -xf /dev/nst0 -C /tmp/back || fail "tar read after the restart"
same_dirs /tmp/src /tmp/back/src
run mt -f /dev/nst0 offline || fail "offline"
run mtx -f /dev/sch0 unload 1 0 || fail "unload"
run iscsiadm -m node --logout || fail "logout"

step "vtl-migrator with the simulated physical library"
run systemctl enable --now vtl-migrator.service || { journalctl -u vtl-migrator --no-pager | tail; fail "systemctl enable --now vtl-migrator"; }
unit_is vtl-migrator active
journal_line vtl-migrator 6 "ready: copies go to simlib (sim)"
run runuser -u vtl -- vtlctl migrate G00001L8 >/tmp/migrate.txt || { cat /tmp/migrate.txt; fail "vtlctl migrate"; }
cat /tmp/migrate.txt
i=0
until vtlctl cartridge show G00001L8 | grep -q "premigrated"; do
	i=$((i + 1)); [ "$i" -le 150 ] || { vtlctl cartridge show G00001L8; vtlctl jobs; fail "G00001L8 not premigrated in 30 s"; }
	sleep 0.2
done
echo "-- G00001L8 is premigrated: copied to the simulated library by the service"

step "systemctl stop: both end cleanly; the journal has their stopping lines"
run systemctl stop vtl-migrator.service || fail "systemctl stop vtl-migrator"
stopped_clean vtl-migrator
run systemctl stop vtld.service || fail "systemctl stop vtld"
stopped_clean vtld
# What the daemons log at SIGTERM (common/service.c); the longer "stopping: ..." text goes to systemd as
# STATUS=, not to the log.
journal_line vtl-migrator 6 "signal 15: stopping"
journal_line vtld 6 "signal 15: stopping"
journal_line vtld 6 "stopped"
n=$(journalctl -u vtld -u vtl-migrator -p 0..3 -o cat --no-pager | wc -l)
[ "$n" -eq 0 ] || { journalctl -u vtld -u vtl-migrator -p 0..3 --no-pager; fail "$n lines at priority err or worse"; }
echo "-- no journal line of either at priority err or worse"
echo "guest_systemd: all steps passed"
