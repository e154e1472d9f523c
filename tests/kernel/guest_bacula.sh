#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Runs in the guest (tests/kernel/run_vm.py): Bacula's tape tester, btape,
# unchanged, against /dev/nst0 and, through Bacula's own mtx-changer script,
# /dev/sch0. Slot 1 holds a small cartridge (test_kernel.sh gives it a
# capacity of a few hundred MB) so that `fill` reaches the end of the tape.
#   - `test` (no autochanger in the Device resource) on slot 2's cartridge:
#     write/re-read, block positioning, append after EOD, re-read after BSR,
#     forward space file;
#   - `autochanger` through mtx-changer: "loaded", unload slot 2, load slot 1;
#   - `fill` (simple, one tape) on slot 1: label, write to the end of the tape,
#     re-read and compare the last block.
# btape reads its commands (and its answers to questions) on stdin; what it
# printed is checked for every error message it has, not only its exit code.
set -u
. "$(dirname "$0")/guest_lib.sh"

work=/tmp/bacula
mkdir -p "$work"

# Writes a minimal bacula-sd.conf for btape to $1; with $2 = yes the Device is in an
# autochanger; $3, if given, is its Maximum Block Size.
sd_conf() {
	changer=""
	[ -z "${3:-}" ] || changer="
  Maximum Block Size = $3"
	if [ "$2" = yes ]; then
		changer="$changer
  Autochanger = yes
  Drive Index = 0
  Changer Device = /dev/sch0
  Changer Command = \"/etc/bacula/scripts/mtx-changer %c %o %S %a %d\""
		cat >"$1" <<EOF
Autochanger {
  Name = vtl-changer
  Device = Drive-0
  Changer Device = /dev/sch0
  Changer Command = "/etc/bacula/scripts/mtx-changer %c %o %S %a %d"
}
EOF
	else
		: >"$1"
	fi
	cat >>"$1" <<EOF
Storage {
  Name = vtl-guest-sd
  WorkingDirectory = $work
  Pid Directory = $work
}
Director {
  Name = vtl-guest-dir
  Password = "btape-only"
}
Device {
  Name = Drive-0
  Media Type = LTO-8
  Archive Device = /dev/nst0
  Device Type = Tape
  AutomaticMount = yes
  AlwaysOpen = yes
  RemovableMedia = yes
  RandomAccess = no$changer
}
EOF
}

# What btape prints only when something went wrong (btape.c's messages); the one
# normal line that names errors ("there should be no I/O errors") is left out.
BTAPE_ERRORS='[Ee]rror|ERR=|[Ff]ail|FAILED|NOT correct|must correct|Bad status|Bad autochanger|differ|Cannot|Could not|not terribly serious|aborted|!!!!'
BTAPE_NORMAL='there should be no I/O errors'

# btape NAME CONF INPUT: runs btape on /dev/nst0 with INPUT on stdin, logs what it printed and
# fails on a non-zero exit or any error message.
btape_run() {
	name=$1 conf=$2 input=$3
	printf '$ printf %s | btape -c %s -w %s /dev/nst0\n' "'$input'" "$conf" "$work"
	t0=$(date +%s)
	# A bound under the VM's own timeout, so that a hang still leaves btape's output in the log.
	printf "$input" | timeout 300 btape -c "$conf" -w "$work" /dev/nst0 >"$work/$name.out" 2>&1
	rc=$?
	awk '{ print "   btape| " $0 }' "$work/$name.out"
	cp "$work/$name.out" "/results/btape-$name.log"
	echo "(btape $name: exit $rc after $(($(date +%s) - t0)) s)"
	[ "$rc" -eq 0 ] || fail "btape $name exited with $rc"
	if grep -E "$BTAPE_ERRORS" "$work/$name.out" | grep -vF "$BTAPE_NORMAL"; then
		fail "btape $name printed errors (above)"
	fi
}

# expect NAME TEXT: btape's output of NAME has the line TEXT.
expect() {
	grep -qF "$2" "$work/$1.out" || fail "btape $1 did not print \"$2\""
}

step "log in"
guest_login /dev/sch0 /dev/nst0
# test writes and reads back 2 x 10000 blocks: of 4 KiB rather than Bacula's
# default 63 KiB, that takes minutes less under qemu's emulation (fill keeps the default).
TEST_BLOCK=4096
sd_conf "$work/plain.conf" no $TEST_BLOCK
sd_conf "$work/changer.conf" yes
run cat "$work/changer.conf"
# Many libraries (this one too) move a cartridge out of a drive only once the
# drive has unloaded it: mtx-changer does so with offline=1 (its documented
# setting for such libraries). The guest's /etc is an overlay: the host's file stays as it is.
sed -i 's/^offline=0/offline=1/' /etc/bacula/scripts/mtx-changer.conf
grep -q '^offline=1' /etc/bacula/scripts/mtx-changer.conf || fail "mtx-changer.conf has no offline setting"

step "btape test on slot 2's cartridge (no autochanger)"
run mtx -f /dev/sch0 load 2 0 || fail "mtx load 2 0"
wait_ready /dev/nst0
btape_run test "$work/plain.conf" 'test\nquit\n'
expect test "=== Test Succeeded. End Write, rewind, and re-read test ==="
expect test "We should be in file 3. I am at file 3. This is correct!"
expect test "We should be in file 4. I am at file 4. This is correct!"
# The scan of the append test: 7 blocks of the block size in 4 files (btape's "sample correct output").
expect test "Total files=4, blocks=7, bytes = "
expect test "Block re-read correct. Test succeeded!"
expect test "We should be in file 5. I am at file 5. This is correct!"
expect test "=== End Forward space files test ==="
[ "$(grep -c "=== Test Succeeded" "$work/test.out")" -ge 2 ] || fail "btape test: the positioning test did not succeed"

step "btape autochanger: mtx-changer unloads slot 2 and loads slot 1"
btape_run autochanger "$work/changer.conf" 'autochanger\ny\nquit\n'
expect autochanger "Slot 2 loaded. I am going to unload it."
expect autochanger "unload status=OK 0"
expect autochanger '3303 Autochanger "load 1 0" status is OK.'
expect autochanger "The test autochanger worked!!"
run mtx -f /dev/sch0 status >/tmp/mtx.out || fail "mtx status"
cat /tmp/mtx.out
grep -q "Data Transfer Element 0:Full (Storage Element 1 Loaded)" /tmp/mtx.out || fail "drive 0 does not hold slot 1's cartridge"
grep -q "Storage Element 2:Full" /tmp/mtx.out || fail "slot 2's cartridge did not go back to slot 2"
# What the storage daemon asks mtx-changer besides load and unload.
changer() {
	echo "\$ /etc/bacula/scripts/mtx-changer /dev/sch0 $1 0 /dev/nst0 0"
	/etc/bacula/scripts/mtx-changer /dev/sch0 "$1" 0 /dev/nst0 0 >/tmp/changer.out
	rc=$?
	cat /tmp/changer.out
	return $rc
}
changer loaded || fail "mtx-changer loaded"
[ "$(cat /tmp/changer.out)" = 1 ] || fail "mtx-changer loaded: not slot 1"
changer list || fail "mtx-changer list"
grep -qx "1:K00001L8" /tmp/changer.out || fail "mtx-changer list: no K00001L8 in drive 0 from slot 1"
grep -qx "2:K00002L8" /tmp/changer.out || fail "mtx-changer list: no K00002L8 in slot 2"
changer slots || fail "mtx-changer slots"
[ "$(cat /tmp/changer.out)" = 10 ] || fail "mtx-changer slots: not 10"

step "btape fill on slot 1's small cartridge: to the end of the tape and back"
# fill's records differ from one another in a few words only: the drive's
# compression would more than halve what they take on the cartridge, and fill
# would write twice as much before the end of the tape.
run mt -f /dev/nst0 compression 0 || fail "compression off"
btape_run fill "$work/changer.conf" 'fill\ns\nquit\n'
expect fill "Simple test (single tape) selected."
expect fill "Wrote Volume label for volume \"TestVolume1\"."
expect fill "End of tape"
expect fill "10000 records read now"
expect fill "The last block on the tape matches. Test succeeded."

step "unload"
run mt -f /dev/nst0 offline || fail "mt offline"
run mtx -f /dev/sch0 unload 1 0 || fail "mtx unload 1 0"
run iscsiadm -m node --logout || fail "logout"
echo "guest_bacula: all steps passed"
