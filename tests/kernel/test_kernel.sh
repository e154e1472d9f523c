#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# The kernel tier: vtld on the host (a fresh library on a free loopback port),
# a real Debian kernel in qemu logs in with open-iscsi and runs a guest script
# (tests/kernel/guest_NAME.sh) with the st and ch drivers and unmodified tools.
#
# Usage: sh test_kernel.sh <build-dir> [GUEST ...]
#   GUEST: tape, restore, st, bacula, recall, tcmu, powercut, crypt (default: all eight, in that order),
#   and systemd (not in the default list: see its line below and docs/testing.md).
#   restore reads what tape left in drive 1 after vtld restarts, so it brings
#   tape along; st runs the migrator's st physical library (phys_st_check) in
#   the guest; recall boots two guests: one writes a tar archive to a cartridge,
#   which the host then migrates (vtl-migrator, a simulated physical library)
#   and releases; the second loads it with mtx and restores it with tar.
#   tcmu needs none of the host's library: vtld runs in the guest and serves
#   LIO user backstores (TCMU) on tcm_loop (scripts/vtl-lio-setup).
#   powercut runs test_powercut.sh: $POWERCUT_TRIALS (10; make kernel: 6, one of each kind) power cuts of a guest
#   whose vtld a host program outside it writes to; it needs none of the host's library either.
#   systemd boots the host's systemd as PID 1 in the guest (run_vm.py --init systemd), installs
#   the Debian package (scripts/build-deb builds it from the tree, or reuses build/deb's when the
#   sources did not change) with dpkg and runs vtld and vtl-migrator as services there
#   (guest_systemd.sh); it needs none of the host's library either. It is not in the default
#   list (so not in make check, which has no room for it): it takes about 230 s plus the package
#   build; make soak runs it, or run it by name.
#   VTL_KERNEL_KEEP=DIR keeps vtld's log and each guest's console, kernel log,
#   script log and btape output in DIR (see docs/testing.md).
# Needs qemu, a kernel in /boot, open-iscsi, mt-st, mtx, bacula-sd: scripts/install-deps; systemd
# also dpkg-dev, debhelper and lintian: scripts/install-deps deb.
set -eu
build=$(cd "${1:?usage: test_kernel.sh <build-dir> [tape|restore|st|bacula|recall|tcmu|powercut|crypt|systemd ...]}" && pwd)
shift
guests=${*:-tape restore st bacula recall tcmu powercut crypt}
case " $guests " in
*" restore "*) case " $guests " in *" tape "*) ;; *) guests="tape $guests" ;; esac ;;
esac
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../integration/library_conf.sh"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/vtl-kernel.XXXXXX")
keep=${VTL_KERNEL_KEEP:-}
pid=""
mpid=""
cleanup() {
	[ -z "$mpid" ] || kill "$mpid" 2>/dev/null
	[ -z "$pid" ] || kill "$pid" 2>/dev/null
	if [ -n "$keep" ]; then
		# All but the cartridges' data (pool/: hundreds of MB; physical/ and the recall's originals).
		mkdir -p "$keep" && (cd "$tmp" && ls -A | grep -vxE "pool|physical|recall-src" | xargs -r cp -r -t "$keep") &&
			echo "-- kept the tier's files in $keep"
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
fail() { echo "FAIL: $*" >&2; exit 1; }
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')

mkdir -p "$tmp/etc"
# [iscsi]: the guest reaches this loopback address as 10.0.2.2 through qemu's
# NAT: SendTargets must not name 127.0.0.1 (the guest's own), so open-iscsi
# keeps the portal it discovered through (advertise = none).
{ library_conf kernel KERNEL0001 8 2 2 "$port" "" none; cat <<CONF; } >"$tmp/etc/vtl.conf"

# For the recall guest, read by vtl-migrator alone: a simulated physical
# library with one slow drive (8 MB/s, load and locate times), so that the
# stage back takes seconds; no copies but those the host asks for.
[physical]
type = sim
name = simlib
drives = 1
tapes = 2
tape_capacity = 1G
rate = 8
load_ms = 400
locate_ms = 200
data_dir = ../physical
[policy]
premigrate = none
CONF
vtlctl() { "$build/vtlctl" -c "$tmp/etc/vtl.conf" "$@" >/dev/null; }
vtlctl init
# Slot 1: a small cartridge, so that btape's fill reaches the end of the tape in
# seconds; it must hold more than the 10000 records of 32 KiB fill reads back.
vtlctl cartridge add --barcode K00001L8 --capacity 400M
vtlctl cartridge add --barcode K00002L8 --count 3
# Slot 5: a 12 MB cartridge (past the drive's 8 MiB early-warning minimum) the st guest writes to its end (early warning, then end of medium).
vtlctl cartridge add --barcode S00001L8 --capacity 12M
# Slot 8 (address 1032; the tape guest moves cartridges through slot 6): the recall guest's cartridge.
vtlctl cartridge add --barcode R00001L8 --slot 1032
# Slot 7 (address 1031): the crypt guest's cartridge, encrypted with stenc.
vtlctl cartridge add --barcode E00001L8 --slot 1031

# Starts vtld and waits for its "ready:" line (the count of them in the log goes up by one).
start_vtld() {
	before=$(grep -c "ready:" "$tmp/vtld.log" 2>/dev/null || true)
	"$build/vtld" -c "$tmp/etc/vtl.conf" 2>>"$tmp/vtld.log" &
	pid=$!
	i=0
	until [ "$(grep -c "ready:" "$tmp/vtld.log")" -gt "${before:-0}" ]; do
		i=$((i + 1)); [ "$i" -le 200 ] || fail "vtld did not start"; sleep 0.1
	done
}
stop_vtld() {
	kill -TERM "$pid"; wait "$pid" || true; pid=""
}

# The guest's kernel log may show no SCSI errors.
check_dmesg() {
	echo "-- the guest's kernel log, SCSI lines:"
	grep -iE "scsi|st[0-9]|ch[0-9]|iscsi" "$1" | sed 's/^/   | /' | head -40
	if grep -iE "st[0-9]+: Error|ch[0-9]+: .*error|I/O error|detected capacity change" "$1"; then
		fail "the guest kernel logged SCSI errors"
	fi
}

# run_guest NAME TIMEOUT [SCRIPT [NAME=VALUE ...]]: boots a VM that runs guest_SCRIPT.sh (default
# guest_NAME.sh) with the NAME=VALUE words in its environment, its files in $tmp/NAME; prints its
# log, and on failure its console, kernel log and vtld's log (and vtl-migrator's when it runs).
run_guest() {
	name=$1 limit=$2
	shift 2
	script=${1:-$name}
	[ "$#" -eq 0 ] || shift
	out="$tmp/$name"
	t0=$(date +%s)
	set +e
	python3 "$here/run_vm.py" "$build" "$here/guest_$script.sh" "$out" "VTL_PORT=$port" "VTL_BUILD=$build" "$@" \
		--timeout "$limit"
	rc=$?
	set -e
	sed 's/^/   | /' "$out/guest.log" 2>/dev/null || true
	if [ "$rc" -ne 0 ]; then
		echo "-- the guest's console (last 40 lines):" >&2
		tail -40 "$out/console.log" 2>/dev/null | sed 's/^/   console| /' >&2
		echo "-- the guest's kernel log (last 40 lines):" >&2
		tail -40 "$out/dmesg.log" 2>/dev/null | sed 's/^/   dmesg| /' >&2
		echo "-- vtld's log (last 30 lines):" >&2
		tail -30 "$tmp/vtld.log" | sed 's/^/   vtld| /' >&2
		if [ -n "$mpid" ]; then
			echo "-- vtl-migrator's log (last 30 lines):" >&2
			tail -30 "$mlog" | sed 's/^/   migrator| /' >&2
		fi
		fail "guest $name failed (exit $rc)"
	fi
	${dmesg_check:-check_dmesg} "$out/dmesg.log"
	echo "-- guest $name passed in $(($(date +%s) - t0)) s"
}

# The recall guest's helpers, shared with the integration tests: ctl (vtlctl, its output shown and
# kept in $tmp/out), migrator_start and migrator_stop (by its PID), job_ends ID STATE, job_id, cache_of.
VTLCTL=$build/vtlctl MIGRATOR=$build/vtl-migrator conf=$tmp/etc/vtl.conf mlog=$tmp/migrator.log
. "$here/../integration/migrator_env.sh"
expect_cache() {
	c=$(cache_of "$1") || fail "vtlctl cartridge show $1"
	[ "$c" = "$2" ] || fail "$1 is $c, expected $2"
	echo "-- $1 is $2"
}

# The recall guest, in two VMs: the first writes a tar archive of files the host made to R00001L8 (slot
# 8); the host copies it to physical tape and releases its disk copy (migrated); the second loads it
# with mtx and restores it with tar while vtl-migrator stages it back. The cartridge must end
# premigrated, with the recall job done.
run_recall() {
	src=$tmp/recall-src
	rm -rf "$src" && mkdir -p "$src"
	cp -r /usr/share/doc/mtx /usr/share/doc/mt-st "$src/"
	# 16 MiB: the stage at the simulated drive's 8 MB/s takes a few seconds.
	head -c 16777216 /dev/urandom >"$src/random.bin"
	(cd "$src" && find . -type f | sort | xargs md5sum) >"$src.md5"
	echo "-- recall: the originals are $(wc -l <"$src.md5") files, $(du -sh "$src" | cut -f1)"
	run_guest recall-write 300 recall VTL_PHASE=write "VTL_SRC=$src"
	echo "-- vtl-migrator starts; R00001L8 goes to physical tape, then its disk copy is released"
	migrator_start
	ctl migrate R00001L8
	job_ends "$(job_id)" done
	expect_cache R00001L8 premigrated
	ctl release R00001L8
	expect_cache R00001L8 migrated
	run_guest recall 300 recall VTL_PHASE=read "VTL_SRC=$src"
	"$VTLCTL" -c "$conf" events >"$tmp/out" || fail "vtlctl events"
	grep "a host loaded migrated cartridge R00001L8: recall queued" "$tmp/out" | sed 's/^/   | /'
	job=$(sed -n 's/.*a host loaded migrated cartridge R00001L8: recall queued (job \([0-9]*\)).*/\1/p' "$tmp/out")
	[ -n "$job" ] || fail "no event for the guest's load of migrated R00001L8"
	job_ends "$job" done
	echo "-- the recall (job $job) is done; vtl-migrator's log of it:"
	grep -E "job $job[ :(]" "$mlog" | sed 's/^/   | /'
	expect_cache R00001L8 premigrated
	migrator_stop
}

# same_as_vtlctl SLOTS.JSON MTX.TXT: what the guest's `mtx status` printed (before it moved anything)
# is what `vtlctl slot list` said: every drive, slot and mail slot, full or empty, with its barcode.
# mtx numbers drives from 0 and storage elements from 1, the mail slots after the slots.
same_as_vtlctl() {
	python3 - "$1" "$2" <<'PY' || fail "mtx status and vtlctl slot list disagree"
import json, re, sys
els = json.load(open(sys.argv[1]))["elements"]
def tag(e):
    return "Full :VolumeTag=%s" % e["barcode"] if e["full"] else "Empty"
want = []
for i, e in enumerate([e for e in els if e["type"] == "drive"]):
    want.append("Data Transfer Element %d:%s" % (i, tag(e)))
stor = [e for e in els if e["type"] == "slot"] + [e for e in els if e["type"] == "ie"]
for i, e in enumerate(stor):
    want.append("Storage Element %d%s:%s" % (i + 1, " IMPORT/EXPORT" if e["type"] == "ie" else "", tag(e)))
got = [re.sub(r"\s+$", "", l.strip()) for l in open(sys.argv[2]) if "Element" in l]
# mtx writes "Empty:VolumeTag=" for an empty slot and "Full (Storage Element N Loaded):VolumeTag = X" for a drive.
got = [re.sub(r":VolumeTag=$", "", l) for l in got]
got = [re.sub(r"Full \(Storage Element \d+ Loaded\):VolumeTag = ", "Full :VolumeTag=", l) for l in got]
if got != want:
    print("mtx status:\n  " + "\n  ".join(got) + "\nvtlctl slot list:\n  " + "\n  ".join(want))
    sys.exit(1)
print("-- mtx status in the guest lists the %d drives and %d storage elements exactly as vtlctl does" %
      (len([e for e in els if e["type"] == "drive"]), len(stor)))
PY
}

# The crypt guest: stenc encrypts what tar writes (tests/kernel/guest_crypt.sh); its reads without the
# key must fail with DATA PROTECT in the kernel log, and no file of the pool may hold its marker.
check_dmesg_crypt() {
	echo "-- the guest's kernel log, SCSI lines:"
	grep -iE "scsi|st[0-9]|iscsi" "$1" | sed 's/^/   | /' | head -40
	grep -qi "data protect" "$1" || fail "the guest kernel logged no DATA PROTECT for the reads without the key"
	if grep -iE "detected capacity change|ch[0-9]+: .*error" "$1"; then
		fail "the guest kernel logged SCSI errors besides the reads without the key"
	fi
}
run_crypt() {
	marker="vtl-crypt-marker-$$-$(date +%s)"
	dmesg_check=check_dmesg_crypt
	run_guest crypt 300 crypt "VTL_MARKER=$marker"
	dmesg_check=""
	if grep -rl -- "$marker" "$tmp/pool" >"$tmp/found" 2>/dev/null; then
		sed 's/^/   | /' "$tmp/found"
		fail "the marker the guest wrote is in the pool in plaintext"
	fi
	echo "-- no file of the pool holds the guest's marker"
}

start_vtld
echo "-- vtld on 127.0.0.1:$port"
for g in $guests; do
	case "$g" in
	tape)
		"$build/vtlctl" -c "$tmp/etc/vtl.conf" --json slot list >"$tmp/slots.json" || fail "vtlctl slot list"
		run_guest tape 480
		same_as_vtlctl "$tmp/slots.json" "$tmp/tape/mtx-status.txt"
		;;
	restore)
		echo "-- vtld restarts; a second guest restores what the first left in drive 1"
		stop_vtld
		start_vtld
		run_guest restore 300
		;;
	st) run_guest st 300 ;;
	bacula) run_guest bacula 780 ;;
	recall) run_recall ;;
	tcmu) run_guest tcmu 300 ;;
	crypt) run_crypt ;;
	powercut)
		t0=$(date +%s)
		{
			VTL_POWERCUT_KEEP=${keep:+$keep/powercut} sh "$here/test_powercut.sh" "$build" "${POWERCUT_TRIALS:-10}" 2>&1
			echo "$?" >"$tmp/powercut.rc"
		} | sed 's/^/   | /'
		[ "$(cat "$tmp/powercut.rc")" = 0 ] || fail "the power cuts failed"
		echo "-- powercut passed in $(($(date +%s) - t0)) s"
		;;
	systemd)
		t0=$(date +%s)
		sh "$here/../../scripts/build-deb" "$build" >"$tmp/build-deb.log" 2>&1 ||
			{ cat "$tmp/build-deb.log" >&2; fail "scripts/build-deb failed"; }
		sed 's/^/   | /' "$tmp/build-deb.log"
		deb=$(tail -1 "$tmp/build-deb.log")
		echo "-- the package in $(($(date +%s) - t0)) s"
		run_guest systemd 400 systemd "VTL_DEB=$deb" --init systemd
		;;
	*) fail "no guest $g (tape, restore, st, bacula, recall, tcmu, powercut, crypt, systemd)" ;;
	esac
done
stop_vtld
echo "test_kernel: all steps passed ($guests)"
