# SPDX-License-Identifier: Apache-2.0
#
# Sourced by test_powercut.sh: the trial kinds whose power cut hits vtl-migrator
# (issue 17). In those trials vtl-migrator runs in the guest beside vtld, with a
# simulated physical library whose tapes are files on the same disk image
# (guest_powercut_mig.sh), so the cut hits the catalog, the pool and the tapes
# together. The host (iscsi_recall write) writes MIG_BLOCKS blocks of 256 KiB
# and a filemark to a fresh cartridge; the guest then runs the trial's step and
# writes /results/step as it begins (the file's mtime, the host's clock through
# 9p, is time zero); qemu is SIGKILLed a moment drawn from the trial's seed
# after it:
#   copy     0..MIG_CUT_BY[1] s into vtlctl migrate (mount, copy, read-back, record, premigrated)
#   release  0..MIG_CUT_BY[2] s into vtlctl release of the premigrated cartridge (catalog, then erase)
#   recall   0..MIG_CUT_BY[3] s after the host starts to read the migrated cartridge: its load
#            queues the recall, which stages it back while the host reads through it
# After the boot that follows, the host reads the cartridge back byte for byte
# (iscsi_recall read: a migrated one is recalled by that load) and
# powercut_mig.py judges what the guest recorded (the catalog as the cut left
# it, after the restart, the verify job of every good copy, after the read).
# Each trial prints where the cut landed (the job then running, the cache state,
# the good copies, the objects still on disk).
#
# What this models: the power of the machine running both daemons lost during a
# copy, a release or a recall, with the catalog's commits, the pool's syncs and
# the simulated tape's (an fdatasync of its file at each filemark) the only
# things that make data durable. What it does not: a real physical library (the
# tape files share the ext4 journal with the catalog and the pool; no drive or
# robot loses power mid-operation), native copies, two copy pools, the policy's
# own passes, and the gaps of the host-write kinds (test_powercut.sh's header,
# docs/testing.md). The windows are wall time: some cuts land before the step's
# first write or after its end, and the trial's line says so.
#
# Environment: VTL_POWERCUT_KINDS (a list of kinds the trials rotate through
# instead of the default, e.g. "copy release recall"), VTL_POWERCUT_MIG_BY
# (C,R,R: the three upper bounds, in seconds).

RECALL=$build/tests/integration/iscsi_recall
MIG_BLOCKS=8           # 2 MiB: a copy, its read-back and a recall take about a second each at the sim's 4 MB/s
MIG_DRIVE=257          # the library's drive (data transfer element), LUN 1
MIG_LUN=1
# Upper bounds (s) of the moments: a little more than each step took in the guest at a load of 10 on 2
# cores (copy 2.5 s, release 1.0 s, recall 2.6 s: the guest logs it when the cut comes after the end).
MIG_CUT_BY=${VTL_POWERCUT_MIG_BY:-3,1.2,3}
kinds=${VTL_POWERCUT_KINDS:-}
for x in "$build/vtl-migrator" "$RECALL" $( [ "$control" = 0 ] || echo "$NOSYNC"); do
	[ -x "$x" ] || { echo "FAIL: $x is missing; build it with 'make'" >&2; exit 1; }
done
for k in $kinds; do
	case $k in early | random | ack | copy | release | recall) ;; *) echo "FAIL: VTL_POWERCUT_KINDS: no kind '$k'" >&2; exit 1 ;; esac
done

# kind_of N: trial N's kind. By default 3 trials of every 10 are the migrator's, so that make kernel's
# 10 trials take no more boots: the 4th copy, the 8th release, the 10th recall; the others keep
# their kind from N % 3 (early, random, ack), as before the migrator kinds.
kind_of() {
	if [ -n "$kinds" ]; then
		set -- "$1" $kinds
		i=$(($1 % ($# - 1) + 1))
		[ "$i" -ne 1 ] || i=$#
		eval "echo \${$i}"
		return
	fi
	case $(($1 % 10)) in
	4) echo copy ;;
	8) echo release ;;
	0) echo recall ;;
	*) case $(($1 % 3)) in 1) echo early ;; 2) echo random ;; 0) echo ack ;; esac ;;
	esac
}
mig_is() { case $1 in copy | release | recall | copied) return 0 ;; esac; return 1; }

# mig_word N: the VTL_MIG word for the boot that checks trial N and serves trial N + 1 (none when neither
# is a migrator trial); $trials ends the run.
mig_word() {
	c=- s=-
	[ "$1" -lt 1 ] || { c=$(kind_of "$1"); mig_is "$c" || c=-; }
	[ "$1" -ge "$trials" ] || { s=$(kind_of $(($1 + 1))); mig_is "$s" || s=-; }
	[ "$c$s" = -- ] || echo "VTL_MIG=$c,$s"
}

# mig_choose N: trial N's moment (delay, mig_what) from its seed.
mig_choose() {
	i=1
	case $kind in release) i=2 ;; recall) i=3 ;; esac
	delay=$(awk -v s="$(((seed0 + $1) % 2147483647))" -v by="$MIG_CUT_BY" -v i="$i" \
		'BEGIN { split(by, b, ","); srand(s); printf "%.2f", rand() * b[i] }')
	mig_what="power cut $delay s into the $kind"
	[ "$kind" != recall ] || mig_what="power cut $delay s after the host's load of the migrated cartridge began"
}

# host_seed N: the content of trial N's cartridge (iscsi_recall's seed).
host_seed() { echo $(((seed0 + $1) % 100000 * 100)); }

# mig_cut N: the host writes trial N's cartridge; the guest starts the step; qemu is killed $delay s into
# it. Sets wwhy, written, acked (as cut does).
mig_cut() {
	wwhy="" written="" rpid=""
	acked=$((MIG_BLOCKS + 1)) # iscsi_recall's write ends with a WRITE FILEMARKS: all of it was acknowledged
	if ! timeout $HOST_LIMIT "$RECALL" "127.0.0.1:$port" $IQN write $SLOT $MIG_DRIVE $MIG_LUN $MIG_BLOCKS \
		"$(host_seed "$1")" >"$tmp/write-$1.out" 2>&1; then
		wwhy="the host's write: $(tail -1 "$tmp/write-$1.out")"
	fi
	written=$(tail -1 "$tmp/write-$1.out")
	echo done >"$out/written"
	if [ -z "$wwhy" ] && await step; then
		t0=$(stat -c %.9Y "$out/step")
		if [ "$kind" = recall ]; then
			timeout $HOST_LIMIT "$RECALL" "127.0.0.1:$port" $IQN read $SLOT $MIG_DRIVE $MIG_LUN $MIG_BLOCKS \
				"$(host_seed "$1")" >"$tmp/recall-$1.out" 2>&1 &
			rpid=$!
			t0=$(now)
		fi
		left=$(awk -v t="$t0" -v d="$delay" -v n="$(now)" 'BEGIN { x = t + d - n; printf "%.3f", (x > 0 ? x : 0) }')
		sleep "$left"
	else
		wwhy=${wwhy:-"before the step: $why"}
	fi
	qemu_kill
	rc=1
	[ -z "$vm" ] || { wait "$vm"; rc=$?; }
	vm=""
	[ "$rc" -eq 137 ] || wwhy="${wwhy:-qemu had ended with status $rc before the power cut}"
	# The host's read lost its target with the power: stopped by its PID (quietly: the shell would say
	# "Terminated").
	[ -z "$rpid" ] || { kill "$rpid"; wait "$rpid"; } 2>/dev/null
}

# mig_verify N [CUT_BOOT_DIR]: after the boot that follows trial N's cut: the host reads the cartridge
# back, then powercut_mig.py judges what the guest recorded. Sets vwhy, cwhy, verified (as verify does).
mig_verify() {
	vwhy="" cwhy=""
	t0=$(now)
	if timeout $HOST_LIMIT "$RECALL" "127.0.0.1:$port" $IQN read $SLOT $MIG_DRIVE $MIG_LUN $MIG_BLOCKS \
		"$(host_seed "$1")" >"$tmp/verify-$1.out" 2>&1 && grep -q "bit-exact" "$tmp/verify-$1.out"; then
		echo "ok" >"$out/verified"
	else
		vwhy="the host's read-back: $(tail -1 "$tmp/verify-$1.out")"
		echo "failed" >"$out/verified"
	fi
	verified="$(tail -1 "$tmp/verify-$1.out") ($(since "$t0") s)"
	if await check.out; then
		case $(cat "$out/check.out") in ok*) ;; *) cwhy="catalog: $(cat "$out/check.out")" ;; esac
		if judged=$(python3 "$here/powercut_mig.py" "$kind" "${2:-$tmp/boot-$1}" "$out" "$(barcode "$1")"); then
			verified="$judged; $verified"
		else
			vwhy="${vwhy:+$vwhy; }$judged"
		fi
	else
		cwhy="catalog: $why"
	fi
}

# mig_control: a copy whose tape data is never synced (nosync_shim.so matching ".tape" in the
# migrator: the copy is recorded good with its blocks only in the page cache), the power cut right
# after the copy is recorded: the checks must find a copy called good that is not.
mig_control() {
	img=$tmp/control-mig.img
	new_image "$img"
	kind=copied delay=0 tstart=$(date +%s)
	boot c3 none 0 "$(barcode 0)" "VTL_MIG=-,copied,tapenosync"
	if ! await write-ready; then
		echo "FAIL control (migrator): $why"
		failed=$((failed + 1))
		return
	fi
	mig_cut 0
	boot c4 "$(barcode 0)" "$acked" none "VTL_MIG=copied,-"
	if ! await vtld-up; then
		echo "FAIL control (migrator): after the cut: $why"
		failed=$((failed + 1))
		return
	fi
	mig_verify 0 "$tmp/boot-c3"
	shutdown || true
	if [ -n "$wwhy" ]; then
		echo "FAIL control (migrator): $wwhy"
		failed=$((failed + 1))
	elif [ -n "$vwhy" ]; then
		echo "ok   control (migrator): tape files never synced, power cut once the copy was recorded: $vwhy ($(($(date +%s) - tstart)) s)"
	else
		echo "FAIL control (migrator): tape files never synced, power cut once the copy was recorded, and the checks found nothing: $verified"
		failed=$((failed + 1))
	fi
	rm -f "$img"
}
