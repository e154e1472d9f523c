#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# A probe, not part of make check (issue 10): what the guest's 6.1 kernel
# accepts for a TCMU backstore, and scripts/vtl-lio-setup against the real
# configfs. Needs no library: run it alone with
#   python3 tests/kernel/run_vm.py build tests/kernel/guest_lio_probe.sh /tmp/lio-probe --timeout 400
# and read /tmp/lio-probe/guest.log. Nothing consumes the TCMU rings, so the
# loopback part sets cmd_time_out to 3 s: the initiator's INQUIRY times out.
# VTL_PROBE_LIMITS=0 (after the results folder) skips the limits (2.5 minutes).
set -u
. "$(dirname "$0")/guest_lib.sh"
top=$(cd "$(dirname "$0")/../.." && pwd)
setup=$top/scripts/vtl-lio-setup
cfs=/sys/kernel/config/target

step "modules"
for m in target_core_user tcm_loop iscsi_target_mod sg st ch; do run modprobe "$m" || fail "modprobe $m"; done
grep -q configfs /proc/mounts || run mount -t configfs configfs /sys/kernel/config
[ -d "$cfs/core" ] || fail "no $cfs/core"
echo "global_max_data_area_mb=$(cat /sys/module/target_core_user/parameters/global_max_data_area_mb)"

mkdir -p /tmp/lio
cat >/tmp/lio/vtl.conf <<'CONF'
[library]
name = probe
slots = 4
drives = 2
[pool]
member = pool
CONF

# attrs DEV: the attributes a TCMU backstore shows, on one line.
attrs() {
	a=""
	for f in hw_block_size block_size hw_max_sectors optimal_sectors hw_queue_depth queue_depth max_data_area_mb \
		data_pages_per_blk cmd_ring_size_mb cmd_time_out qfull_time_out; do
		a="$a $f=$(cat "$1/attrib/$f" 2>/dev/null || echo -)"
	done
	echo "  attrib:$a"
	echo "  info: $(tr '\n' ' ' <"$1/info")"
	echo "  statistics/scsi_lu/dev_type: $(cat "$1/statistics/scsi_lu/dev_type" 2>/dev/null || echo -)"
}
uios() {
	for u in /sys/class/uio/uio*; do
		[ -e "$u/name" ] || continue
		echo "  $(basename "$u"): name=$(cat "$u/name") version=$(cat "$u/version") map0 size=$(cat "$u/maps/map0/size" 2>/dev/null)"
	done
}

step "vtl-lio-setup --dry-run and --targetcli"
run sh "$setup" -c /tmp/lio/vtl.conf --dry-run || fail "dry run"
run sh "$setup" -c /tmp/lio/vtl.conf --targetcli || fail "targetcli"

step "vtl-lio-setup --fabric none: the backstores alone"
run sh "$setup" -c /tmp/lio/vtl.conf --fabric none || fail "setup"
for d in "$cfs"/core/user_86/vtl_*; do echo "$d"; attrs "$d"; done
step "their UIO devices"
uios
for l in 0 1 2; do
	want="tcm-user/86/vtl_probe_lun$l/vtl/probe/$l"
	grep -qxF "$want" /sys/class/uio/uio*/name || fail "no UIO device named $want"
done
echo "-- the three UIO names are as expected"
step "a second run refuses"
if sh "$setup" -c /tmp/lio/vtl.conf --fabric none; then fail "a second run did not refuse"; fi
step "--remove"
run sh "$setup" -c /tmp/lio/vtl.conf --remove || fail "remove"
[ ! -e "$cfs/core/user_86" ] || fail "user_86 is still there"
ls /sys/class/uio/ | grep -q uio && fail "UIO devices are left"
echo "-- nothing left"

# try NAME CONTROL: a raw backstore core/user_87/NAME with CONTROL; reports what the write, the enable
# and the attributes say, and the kernel's messages, then removes it.
try() {
	d=$cfs/core/user_87/$1
	mkdir -p "$cfs/core/user_87" && mkdir "$d" || fail "mkdir $d"
	n=$(dmesg | wc -l)
	if printf '%s\n' "$2" >"$d/control" 2>/tmp/err; then c=ok; else c="refused ($(cat /tmp/err | sed 's/.*: //'))"; fi
	if echo 1 >"$d/enable" 2>/tmp/err; then e=ok; else e="refused ($(cat /tmp/err | sed 's/.*: //'))"; fi
	echo "$1: control '$2': $c; enable: $e"
	[ "$e" != ok ] || { attrs "$d"; uios; }
	dmesg | tail -n +$((n + 1)) | sed 's/^/  kernel: /'
	rmdir "$d" || fail "rmdir $d"
}
if [ "${VTL_PROBE_LIMITS:-1}" = 1 ]; then
step "limits: hw_max_sectors"
for v in 128 2048 16384 65535 65536 1048576 2147483647 2147483648 0 -1; do
	try hms$v "dev_config=vtl/x/0,dev_size=1048576,hw_max_sectors=$v,nl_reply_supported=-1"
done
step "limits: hw_block_size (and its effect on hw_max_sectors 16385)"
for v in 512 4096 1 2048 65536 1048576 0; do
	try hbs$v "dev_config=vtl/x/0,dev_size=1048576,hw_block_size=$v,hw_max_sectors=16385,nl_reply_supported=-1"
done
step "limits: max_data_area_mb"
for v in 1 64 1024 2048 2049 4096 0; do
	try mda$v "dev_config=vtl/x/0,dev_size=1048576,max_data_area_mb=$v,nl_reply_supported=-1"
done
step "limits: data_pages_per_blk and cmd_ring_size_mb"
try dpb256 "dev_config=vtl/x/0,dev_size=1048576,max_data_area_mb=1024,data_pages_per_blk=256,nl_reply_supported=-1"
try dpbbig "dev_config=vtl/x/0,dev_size=1048576,max_data_area_mb=1,data_pages_per_blk=512,nl_reply_supported=-1"
try ring16 "dev_config=vtl/x/0,dev_size=1048576,cmd_ring_size_mb=16,nl_reply_supported=-1"
step "limits: dev_config length (255 fits; longer is cut to 255)"
long=$(printf 'vtl/%0251d' 0)
try cfg255 "dev_config=$long,dev_size=1048576,nl_reply_supported=-1"
try cfg256 "dev_config=${long}1,dev_size=1048576,nl_reply_supported=-1"
rmdir "$cfs/core/user_87"
fi

step "vtl-lio-setup --fabric iscsi (LUNs and an ACL: nothing is sent to the rings before a login)"
run sh "$setup" -c /tmp/lio/vtl.conf --fabric iscsi --portal 127.0.0.1:3261 --initiator iqn.2026-01.org.vtl:probe-host ||
	fail "iscsi setup"
find "$cfs/iscsi" -path '*/fabric_statistics' -prune -o \( -name 'lun_*' -o -name 'np' -o -name '*:*' \) -print | sort | sed 's/^/  /'
for p in "$cfs"/iscsi/*/tpgt_1/lun/lun_*/*; do [ -L "$p" ] && echo "  $p -> $(readlink "$p")"; done
echo "  enable=$(cat "$cfs"/iscsi/*/tpgt_1/enable)"
run sh "$setup" -c /tmp/lio/vtl.conf --remove || fail "iscsi remove"
! ls -d "$cfs"/iscsi/iqn.* 2>/dev/null || fail "an iscsi target is left"
[ ! -e "$cfs/core/user_86" ] || fail "user_86 is still there"

step "vtl-lio-setup --fabric loopback with no ring consumer, cmd_time_out 3 s"
t0=$(date +%s)
run sh "$setup" -c /tmp/lio/vtl.conf --cmd-time-out 3
echo "-- setup exited $? after $(($(date +%s) - t0)) s"
run lsscsi -g
ls "$cfs"/loopback/*/tpgt_1/lun/ | sed 's/^/  /'
echo "  nexus=$(cat "$cfs"/loopback/*/tpgt_1/nexus)"
echo "  address=$(cat "$cfs"/loopback/*/tpgt_1/address 2>/dev/null)"
dmesg | grep -iE "tcm|tcmu|scsi|loop|target" | tail -30 | sed 's/^/  kernel: /'
t0=$(date +%s)
run sh "$setup" -c /tmp/lio/vtl.conf --remove || fail "loopback remove"
echo "-- remove took $(($(date +%s) - t0)) s"
! ls -d "$cfs"/loopback/naa.* 2>/dev/null || fail "a loopback target is left"
[ ! -e "$cfs/core/user_86" ] || fail "user_86 is still there"
run lsscsi -g

# A stand-in for vtld, for this probe only: a few lines of Python that serve the rings (INQUIRY,
# READ BLOCK LIMITS, MODE SENSE, WRITE(6)/READ(6) kept in memory) and log, for each command, its
# CDB and the data the kernel gave it (iov_cnt, bytes), to see how LIO sizes a tape's transfers.
cat >/tmp/lio/handler.py <<'PYH'
import mmap, os, select, struct, sys, time
devs = {}
deadline = time.time() + 60
while len(devs) < 3 and time.time() < deadline:
    for u in sorted(os.listdir("/sys/class/uio")):
        if u in devs:
            continue
        name = open("/sys/class/uio/%s/name" % u).read().strip()
        if "/vtl/probe/" not in name:
            continue
        size = int(open("/sys/class/uio/%s/maps/map0/size" % u).read(), 16)
        fd = os.open("/dev/" + u, os.O_RDWR)
        m = mmap.mmap(fd, size, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
        devs[u] = dict(fd=fd, m=m, lun=int(name.rsplit("/", 1)[1]), blocks=[], pos=0)
        print("serving %s %s (map %d MiB)" % (u, name, size >> 20), flush=True)
    time.sleep(0.1)

def sense(key, asc, ascq=0, info=None, ili=False):
    s = bytearray(18)
    s[0] = 0x70 | (0x80 if info is not None else 0)
    s[2] = key | (0x20 if ili else 0)
    if info is not None:
        s[3:7] = struct.pack(">i", info)
    s[7] = 10
    s[12], s[13] = asc, ascq
    return 2, bytes(s)

def execute(d, cdb, iov, m):
    op = cdb[0]
    total = sum(l for _, l in iov)
    def put(data):
        data, n = bytes(data), 0
        for base, l in iov:
            k = min(l, len(data) - n)
            if k <= 0:
                break
            m[base:base + k] = data[n:n + k]
            n += k
        return n
    if op == 0x12:  # INQUIRY
        if cdb[1] & 1:
            return sense(5, 0x24) + (0,)
        t = 0x03 if d["lun"] == 0 else 0x01
        inq = bytes([t, 0x80 if t == 1 else 0, 5, 2, 31, 0, 0, 0]) + b"VTLPROBE" + b"TCMU PROBE      " + b"0001"
        return 0, b"", put(inq[:cdb[4] | cdb[3] << 8])
    if op in (0x00, 0x01, 0x10, 0x11, 0x15, 0x1B, 0x1E):  # TUR, REWIND, WFM, SPACE, MODE SELECT, LOAD, PREVENT
        if op == 0x01:
            d["pos"] = 0
        return 0, b"", 0
    if op == 0x05:  # READ BLOCK LIMITS: 1 .. 8 MiB
        return 0, b"", put(bytes([0, 0x80, 0, 0, 0, 1]))
    if op == 0x1A:  # MODE SENSE(6): a block descriptor, variable blocks
        return 0, b"", put(bytes([11, 0, 0x10, 8, 0, 0, 0, 0, 0, 0, 0, 0])[:cdb[4]])
    if op == 0x34:  # READ POSITION, short form
        return 0, b"", put(bytes(20))
    if op == 0x0A:  # WRITE(6)
        data = b"".join(m[b:b + l] for b, l in iov)
        del d["blocks"][d["pos"]:]
        d["blocks"].append(data)
        d["pos"] += 1
        return 0, b"", 0
    if op == 0x08:  # READ(6), variable blocks: ILI and the residue when the block is not the size asked
        want = int.from_bytes(cdb[2:5], "big")
        if d["pos"] >= len(d["blocks"]):
            return sense(0, 0, 1, info=want) + (0,)  # a filemark
        blk = d["blocks"][d["pos"]]
        d["pos"] += 1
        n = put(blk[:total])
        if len(blk) != want:
            return sense(0, 0, 0, info=want - len(blk), ili=True) + (n,)
        return 0, b"", n
    return sense(5, 0x20) + (0,)

while devs:
    r, _, _ = select.select([d["fd"] for d in devs.values()], [], [], 120)
    if not r:
        break
    for d in devs.values():
        if d["fd"] not in r:
            continue
        os.read(d["fd"], 4)
        m = d["m"]
        cmdr_off, cmdr_size = struct.unpack_from("<II", m, 4)
        while True:
            head = struct.unpack_from("<I", m, 12)[0]
            tail = struct.unpack_from("<I", m, 64)[0]
            if head == tail:
                break
            e = cmdr_off + tail
            len_op, cmd_id, kflags, uflags = struct.unpack_from("<IHBB", m, e)
            length, op = len_op & ~7, len_op & 7
            if op == 1:
                iov_cnt, = struct.unpack_from("<I", m, e + 8)
                cdb_off, = struct.unpack_from("<Q", m, e + 24)  # req is not packed: cdb_off at 16 in it
                iov = [struct.unpack_from("<QQ", m, e + 48 + 16 * i) for i in range(iov_cnt)]
                cdb = bytes(m[cdb_off:cdb_off + 16])
                cdb = cdb[:6 if cdb[0] < 0x20 else 10 if cdb[0] < 0x60 else 16 if cdb[0] >= 0x80 and cdb[0] < 0xA0 else 12]
                status, sns, n = execute(d, cdb, iov, m)
                print("lun %d cdb %s iov_cnt %d bytes %d -> status %d%s" % (d["lun"], cdb.hex(), iov_cnt,
                      sum(l for _, l in iov), status, " sense " + sns[:14].hex() if sns else ""), flush=True)
                struct.pack_into("<BBHI", m, e + 8, status, 0, 0, n)
                m[e + 16:e + 16 + 96] = sns.ljust(96, b"\0")
                struct.pack_into("<B", m, e + 7, uflags | 0x2)
            tail = (tail + length) % cmdr_size
            struct.pack_into("<I", m, 64, tail)
        os.write(d["fd"], struct.pack("<I", 1))
PYH

step "loopback with a stand-in ring consumer (Python), hw_max_sectors 128 (64 KiB)"
python3 /tmp/lio/handler.py >/tmp/lio/handler.log 2>&1 &
hpid=$!
run sh "$setup" -c /tmp/lio/vtl.conf --hw-max-sectors 128 || fail "setup with a handler"
i=0
until [ -e /dev/nst1 ] || [ "$i" -ge 100 ]; do sleep 0.2; i=$((i + 1)); done
run lsscsi -g
[ -c /dev/nst0 ] || { sed 's/^/  /' /tmp/lio/handler.log; fail "no /dev/nst0"; }
cat "$cfs"/core/user_86/vtl_probe_lun1/attrib/hw_max_sectors | sed 's/^/  hw_max_sectors (lun 1): /'
head -c 4194304 /dev/urandom >/tmp/lio/data
for bs in 65536 262144 1048576 2097152; do
	run mt -f /dev/nst0 rewind
	run dd if=/tmp/lio/data of=/dev/nst0 bs=$bs count=2 2>&1 | grep -v records
	run mt -f /dev/nst0 rewind
	run dd if=/dev/nst0 of=/tmp/lio/back bs=$bs count=2 2>&1 | grep -v records
	cmp -n $((2 * bs)) /tmp/lio/data /tmp/lio/back && echo "  $bs-byte blocks: written and read back equal"
done
sg=$(lsscsi -g | awk '$2 == "tape" && $(NF-1) == "/dev/st0" { print $NF }')
step "sg_raw on $sg: WRITE(6) whose CDB says other than the data sent"
head -c 4096 /tmp/lio/data >/tmp/lio/4k
run sg_raw -i /tmp/lio/4k -s 4096 "$sg" 0a 00 00 20 00 00   # variable, CDB 8192, 4096 sent
run sg_raw -i /tmp/lio/4k -s 4096 "$sg" 0a 01 00 00 10 00   # fixed, 16 blocks, 4096 sent
run sg_raw -r 4096 -o /tmp/lio/r "$sg" 08 00 00 40 00 00                 # READ(6) variable, CDB 16384, 4096 asked
kill "$hpid" 2>/dev/null
wait "$hpid" 2>/dev/null
step "the stand-in's log"
grep -v '^lun . cdb 0[01]00' /tmp/lio/handler.log | sed 's/^/  /' | tail -80
run sh "$setup" -c /tmp/lio/vtl.conf --remove || fail "remove after the stand-in"
echo "guest_lio_probe: done"
