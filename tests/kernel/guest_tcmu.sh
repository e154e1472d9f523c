#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Runs in the guest (tests/kernel/run_vm.py), needs nothing on the host: vtld
# runs inside the guest with [daemon] tcmu = yes, scripts/vtl-lio-setup puts
# its library on LIO's loopback fabric (tcm_loop), and the guest's own st, ch
# and sg drivers see the changer and the drives as local devices. The same
# tools as the iSCSI guests: sg_inq, mtx, mt, tar, dd, sg_logs, sg_read_attr.
#   python3 tests/kernel/run_vm.py build tests/kernel/guest_tcmu.sh /tmp/tcmu --timeout 300
set -u
. "$(dirname "$0")/guest_lib.sh"
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${VTL_BUILD:-$top/build}
setup=$top/scripts/vtl-lio-setup
dir=/tmp/vtl
conf=$dir/etc/vtl.conf
vpid=""

# On a failure: vtld's log and the kernel's last lines, then the setup taken down and vtld stopped.
bail() {
	echo "FAIL: $*"
	echo "-- vtld's log (last 40 lines):"
	tail -40 "$dir/vtld.log" 2>/dev/null | sed 's/^/  vtld| /'
	echo "-- the kernel's log (last 40 lines):"
	dmesg | tail -40 | sed 's/^/  kernel| /'
	sh "$setup" -c "$conf" --remove >/dev/null 2>&1
	[ -z "$vpid" ] || kill -TERM "$vpid" 2>/dev/null
	exit 1
}
# Waits up to 20 s for the changer and two tape drives from the loopback host.
wait_devices() {
	i=0
	until [ "$(lsscsi | grep -c ' tape ')" -ge 2 ] && lsscsi | grep -q mediumx; do
		i=$((i + 1))
		[ "$i" -le 100 ] || return 1
		sleep 0.2
	done
}

step "a library in $dir, vtld with [daemon] tcmu = yes"
mkdir -p "$dir/etc" "$dir/pool"
mount -t tmpfs tmpfs "$dir" 2>/dev/null && mkdir -p "$dir/etc" "$dir/pool"
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cat >"$conf" <<CONF
[library]
name = tcmu
serial = TCMU000001
slots = 6
drives = 2
[pool]
member = ../pool/m0
[catalog]
path = ../catalog.db
[iscsi]
listen = 127.0.0.1
port = $port
[daemon]
tcmu = yes
CONF
run "$build/vtlctl" -c "$conf" init >/dev/null || bail "vtlctl init"
run "$build/vtlctl" -c "$conf" cartridge add --barcode T00001L8 --count 3 >/dev/null || bail "vtlctl cartridge add"
"$build/vtld" -c "$conf" 2>"$dir/vtld.log" &
vpid=$!
i=0
until grep -q "ready:" "$dir/vtld.log"; do
	i=$((i + 1)); [ "$i" -le 100 ] || bail "vtld did not start"; sleep 0.1
done
echo "vtld $vpid: $(grep "ready:" "$dir/vtld.log" | head -1)"

step "modules and vtl-lio-setup (loopback)"
for m in target_core_user tcm_loop sg st ch; do run modprobe "$m" || bail "modprobe $m"; done
t0=$(date +%s)
run sh "$setup" -c "$conf" --cmd-time-out 20 || bail "vtl-lio-setup"
wait_devices || { run lsscsi -g; bail "no changer and two tapes after 20 s"; }
echo "-- devices after $(($(date +%s) - t0)) s"
run lsscsi -g
grep "tcmu: serving" "$dir/vtld.log" | sed 's/^/  vtld| /'
[ "$(grep -c "tcmu: serving" "$dir/vtld.log")" -eq 3 ] || bail "vtld does not serve the three UIO devices"
run "$build/vtlctl" -c "$conf" status >/tmp/status.out || bail "vtlctl status"
grep -q "tcmu: 3 LIO user backstores served" /tmp/status.out || { cat /tmp/status.out; bail "vtlctl status does not count the 3 backstores"; }
chsg=$(lsscsi -g | awk '$2 == "mediumx" { print $NF; exit }')
st0=$(lsscsi -g | awk '$2 == "tape" { print $(NF-1); exit }')
[ "$st0" = /dev/st0 ] || bail "the first tape is $st0, not /dev/st0"

step "sg_inq: the changer and the drive"
run sg_inq "$chsg" >/tmp/inq.ch || bail "sg_inq $chsg"
cat /tmp/inq.ch
grep -q "PDT=8" /tmp/inq.ch || bail "the changer's INQUIRY is not a medium changer (PDT 8)"
run sg_inq /dev/nst0 >/tmp/inq.st || bail "sg_inq /dev/nst0"
cat /tmp/inq.st
grep -q "PDT=1" /tmp/inq.st || bail "the drive's INQUIRY is not a tape (PDT 1)"
grep -q "Vendor identification: ." /tmp/inq.st || bail "no vendor identification"

step "mtx on $chsg: status, load slot 1 into drive 0"
run mtx -f "$chsg" status >/tmp/mtx.out || bail "mtx status"
cat /tmp/mtx.out
grep -q "Storage Element 1:Full :VolumeTag=T00001L8" /tmp/mtx.out || bail "mtx does not see T00001L8 in slot 1"
run mtx -f "$chsg" load 1 0 || bail "mtx load 1 0"
i=0
until mt -f /dev/nst0 status >/dev/null 2>&1; do
	i=$((i + 1)); [ "$i" -le 50 ] || bail "/dev/nst0 did not become ready"; sleep 0.2
done
run mt -f /dev/nst0 status >/tmp/mt.out || bail "mt status"
cat /tmp/mt.out
grep -q "Density code 0x5e (LTO-8)" /tmp/mt.out || bail "st does not see the LTO-8 density"

step "tar: two archives across a filemark, read back and compared byte for byte"
mkdir -p /tmp/src1 /tmp/src2 /tmp/back
cp -r /usr/share/doc/mt-st /usr/share/doc/mtx /tmp/src1/ 2>/dev/null
dd if=/dev/urandom of=/tmp/src2/random.bin bs=1M count=8 2>/dev/null
cp -r "$top/docs" /tmp/src2/ 2>/dev/null
run mt -f /dev/nst0 rewind || bail "rewind"
run tar -cf /dev/nst0 -C /tmp src1 || bail "tar write 1"
run tar -cf /dev/nst0 -C /tmp src2 || bail "tar write 2"
run mt -f /dev/nst0 rewind || bail "rewind"
run mt -f /dev/nst0 fsf 1 || bail "fsf 1"
run tar -xf /dev/nst0 -C /tmp/back || bail "tar read 2"
run mt -f /dev/nst0 rewind || bail "rewind"
run tar -xf /dev/nst0 -C /tmp/back || bail "tar read 1"
run diff -r /tmp/src1 /tmp/back/src1 || bail "archive 1 differs"
run diff -r /tmp/src2 /tmp/back/src2 || bail "archive 2 differs"
run mt -f /dev/nst0 tell || bail "tell"
rm -rf /tmp/src1 /tmp/src2 /tmp/back
echo "-- both archives equal"

step "dd of 100 MiB in 256 KiB and in 1 MiB blocks, md5 compared"
dd if=/dev/urandom of=/tmp/big bs=1M count=100 2>/dev/null
a=$(md5sum </tmp/big)
run mt -f /dev/nst0 setblk 0 || bail "setblk 0"
for bs in 256k 1M; do
	case "$bs" in 256k) n=400 ;; 1M) n=100 ;; esac
	t0=$(date +%s)
	run mt -f /dev/nst0 rewind
	run dd if=/tmp/big of=/dev/nst0 bs=$bs 2>&1 || bail "dd write bs=$bs"
	run mt -f /dev/nst0 tell >/tmp/tell.out || bail "tell"
	cat /tmp/tell.out
	grep -q "At block $((n + 1))\." /tmp/tell.out || bail "the drive is not after the $n blocks and their filemark"
	run mt -f /dev/nst0 rewind
	echo "\$ dd if=/dev/nst0 bs=$bs | md5sum"
	b=$({ dd if=/dev/nst0 bs=$bs 2>/tmp/dd.err || echo "dd read failed" >>/tmp/dd.err; } | md5sum)
	cat /tmp/dd.err
	grep -q "dd read failed" /tmp/dd.err && bail "dd read bs=$bs"
	grep -q "^$n+0 records in" /tmp/dd.err || bail "dd did not read back $n whole blocks of $bs"
	[ "$a" = "$b" ] || bail "dd data of bs=$bs differs ($a / $b)"
	echo "-- bs=$bs: checksums match ($a), $(($(date +%s) - t0)) s"
done
rm -f /tmp/big

step "sg_logs and sg_read_attr on the drive"
run sg_logs -a /dev/nst0 >/tmp/logs || bail "sg_logs -a /dev/nst0"
head -25 /tmp/logs
run sg_read_attr /dev/nst0 >/tmp/attr || bail "sg_read_attr"
head -20 /tmp/attr
grep -q "T00001L8" /tmp/attr || bail "sg_read_attr does not show the barcode T00001L8"

step "offline, unload, remove, stop vtld"
run mt -f /dev/nst0 offline || bail "mt offline"
run mtx -f "$chsg" unload 1 0 || bail "mtx unload"
run mtx -f "$chsg" status >/tmp/mtx.out || bail "mtx status"
grep -q "Data Transfer Element 0:Empty" /tmp/mtx.out || bail "drive 0 is not empty"
grep -q "Storage Element 1:Full :VolumeTag=T00001L8" /tmp/mtx.out || bail "T00001L8 is not back in slot 1"
t0=$(date +%s)
run sh "$setup" -c "$conf" --remove || bail "vtl-lio-setup --remove"
echo "-- removed in $(($(date +%s) - t0)) s"
run lsscsi -g
lsscsi | grep -qE "tape|mediumx" && bail "the devices are still there"
[ ! -e /sys/kernel/config/target/core/user_86 ] || bail "user_86 is still there"
i=0
until [ "$(grep -c "tcmu: .* is gone" "$dir/vtld.log")" -ge 3 ] || [ "$i" -ge 30 ]; do sleep 0.1; i=$((i + 1)); done

step "the backstores come back: the same vtld serves them again, then they go again"
run sh "$setup" -c "$conf" --cmd-time-out 20 || bail "vtl-lio-setup (again)"
wait_devices || { run lsscsi -g; bail "no changer and two tapes after the second setup"; }
chsg=$(lsscsi -g | awk '$2 == "mediumx" { print $NF; exit }')
run mtx -f "$chsg" status >/tmp/mtx.out || bail "mtx status (again)"
grep -q "Storage Element 1:Full :VolumeTag=T00001L8" /tmp/mtx.out || bail "the changer does not answer as before"
[ "$(grep -c "tcmu: serving" "$dir/vtld.log")" -ge 6 ] || bail "vtld did not serve the new devices"
run sh "$setup" -c "$conf" --remove || bail "vtl-lio-setup --remove (again)"
i=0
until [ "$(grep -c "tcmu: .* is gone" "$dir/vtld.log")" -ge 6 ] || [ "$i" -ge 30 ]; do sleep 0.1; i=$((i + 1)); done
kill -TERM "$vpid"
wait "$vpid"
rc=$?
vpid=""
echo "-- vtld exited $rc"
grep "tcmu:" "$dir/vtld.log" | sed 's/^/  vtld| /'
[ "$rc" -eq 0 ] || bail "vtld exited $rc after SIGTERM"
echo "-- the kernel's log: LIO, st, ch"
dmesg | grep -v VTL_ | grep -iE "tcm|target|scsi host|st[0-9]|ch[0-9]|abort|timed out|I/O error" | sed 's/^/  kernel| /'
dmesg | grep -v VTL_ | grep -qiE "st[0-9]+: Error|I/O error|timed out|abort" && fail "the kernel logged errors or timeouts"
echo "guest_tcmu: all steps passed"
