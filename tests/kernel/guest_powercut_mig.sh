# SPDX-License-Identifier: Apache-2.0
#
# Sourced by guest_powercut.sh: the power cuts that hit vtl-migrator (issue 17).
# vtl-migrator runs in the guest beside vtld, with a simulated physical library
# whose tapes are files on the same disk (/dev/vda), so the power cut hits the
# catalog, the pool and the tapes at once. The host writes a small cartridge
# (iscsi_recall write), then this boot copies it, releases it or lets the
# host's load recall it, and the host cuts the power while that runs (the
# moment: test_powercut.sh's mig_cut). The next boot records the catalog as the
# cut left it, starts both daemons (the migrator queues the interrupted job
# again, vtld queues a recall for a migrated cartridge left in its drive), waits
# for every job to end, verifies every copy the catalog calls good against the
# simulated tape (a verify job), lets the host read the cartridge back (a
# released one is recalled through that load), and checks the catalog against
# the pool. The host judges what the guest records (tests/kernel/powercut_mig.py).
#
# Parameter: VTL_MIG=CHECK,NEXT[,tapenosync] on the kernel command line: the
# kinds of the trial VTL_CHECK names and of the one VTL_NEXT names: copy,
# release, recall, copied (the control's: the power goes right after the copy
# is recorded), or - (a host-write kind: guest_powercut.sh's own steps). With
# tapenosync, the migrator that serves VTL_NEXT runs with nosync_shim.so
# matching ".tape" (its tape files are never synced: the broken variant the
# control must catch).
# Files in /results: written (the host's write is done), step (the guest starts
# the step the power cut aims at: its mtime is the host's time zero),
# written.json, crash.json, verify.out, final.json, final-jobs.json (vtlctl
# --json outputs and the verify job's end); migrator.log (vtl-migrator's log:
# a job the cut interrupted is "queued again" at the next start).

MIG_CAPACITY=64M       # a small cartridge: the host writes 2 MiB (test_powercut.sh's MIG_BLOCKS)
MIG_DRIVE=257          # the library's only drive (guest_powercut.sh's vtl.conf: drives = 1)
MIG_JOB_WAIT=180       # seconds every job of a trial may take to end, under emulation
mlog=/results/migrator.log
mpid=""

mig_kind() { echo "${VTL_MIG:-} " | cut -d, -f"$1" | tr -d ' '; }

# mig_conf: the simulated library (daemon_env.sh, as the integration tests'), once, on the disk: 4 MB/s
# behind a 1 MiB buffer, with load and locate times, so that a copy, its read-back and a recall of 2 MiB
# take a moment.
mig_conf() {
	grep -q '^\[physical\]' "$conf" && return
	migrator_conf physical.rate=4 physical.load_ms=100 physical.locate_ms=50 physical.drive_buffer=1M >>"$conf" ||
		bail "the simulated library's configuration"
	sync
}

# mig_start [PRELOAD]: starts vtl-migrator; mig_wait waits (60 s at most) for this start's "ready: copies
# go to". vtld starts between the two: both open the catalog and the pool at once, which under emulation
# saves seconds a boot.
mig_start() {
	mbefore=$(grep -c "ready: copies go to" "$mlog" 2>/dev/null || true)
	mt0=$(date +%s.%N)
	if [ -n "${1:-}" ]; then
		LD_PRELOAD=$1 VTL_NOSYNC_MATCH=.tape "$build/vtl-migrator" -c "$conf" 2>>"$mlog" &
	else
		"$build/vtl-migrator" -c "$conf" 2>>"$mlog" &
	fi
	mpid=$!
}
mig_wait() {
	daemon_ready mpid "$mlog" "ready: copies go to" "${mbefore:-0}" 60 || mig_bail "vtl-migrator $why"
	echo "-- vtl-migrator $mpid ready in $(since "$mt0") s"
}
mig_down() { daemon_stop mpid || mig_bail "vtl-migrator $why"; }
mig_bail() {
	echo "-- vtl-migrator's log (last 20 lines):"
	tail -20 "$mlog" 2>/dev/null | sed 's/^/  migrator| /'
	[ -z "$mpid" ] || kill -TERM "$mpid" 2>/dev/null
	bail "$@"
}

# jfield KEY FILE: the first string or number KEY has in vtlctl's JSON (one key a line).
jfield() { sed -n "s/^ *\"$1\": \"*\([^\",]*\)\"*,*$/\1/p" "$2" | head -1; }

# mig_settle: waits until no job is queued or running (the trial's cartridge is the only one with jobs).
mig_settle() {
	t0=$(date +%s.%N)
	i=0
	while ctl --json jobs >/tmp/jobs.json 2>&1 && grep -Eq '"state": *"(queued|running)"' /tmp/jobs.json; do
		i=$((i + 1))
		[ "$i" -le $((MIG_JOB_WAIT * 4)) ] || mig_bail "a job was still queued or running after $MIG_JOB_WAIT s"
		sleep 0.25
	done
	grep -q '"ok": *true' /tmp/jobs.json || mig_bail "vtlctl jobs: $(cat /tmp/jobs.json)"
	echo "-- every job ended ($(since "$t0") s)"
}

# mig_queue VERB BARCODE: queues a job (vtlctl migrate or verify); sets id to its number.
mig_queue() {
	id=""
	ctl "$1" "$2" >/tmp/queued.out 2>&1 && id=$(sed -n 's/^queued job \([0-9]*\).*/\1/p' /tmp/queued.out)
	[ -n "$id" ] || mig_bail "vtlctl $1 $2: $(cat /tmp/queued.out)"
}

# mig_logged PATTERN: waits until the migrator's log has a line matching PATTERN (cheaper than
# vtlctl under emulation); 1 when job $id failed first ("job ID (BARCODE): why").
mig_logged() {
	i=0
	until grep -q "$1" "$mlog"; do
		! grep -q "warn  job $id (" "$mlog" || return 1
		i=$((i + 1)); [ "$i" -le $((MIG_JOB_WAIT * 10)) ] || mig_bail "no '$1' in vtl-migrator's log within $MIG_JOB_WAIT s"
		sleep 0.1
	done
}

# mig_show NAME BARCODE: its vtlctl --json cartridge show in /results/NAME.json.
mig_show() { ctl --json cartridge show "$2" >"/results/.$1.json" && mv "/results/.$1.json" "/results/$1.json"; }

# mig_serve KIND [tapenosync]: serves a fresh VTL_NEXT to the host, then runs the step the power cut
# aims at; never returns (the power goes).
mig_serve() {
	bc=$VTL_NEXT
	step "a fresh $bc for a power cut during a $1: vtld, and vtl-migrator with a simulated library on the disk"
	mig_conf
	run ctl cartridge add --barcode "$bc" --slot "$SLOT" --capacity "$MIG_CAPACITY" >/dev/null ||
		bail "vtlctl cartridge add $bc"
	preload=""
	if [ "${2:-}" = tapenosync ]; then
		preload=$build/tests/integration/nosync_shim.so
		[ -r "$preload" ] || bail "no $preload"
		echo "-- control: vtl-migrator's fsync and fdatasync of its tape files do nothing ($preload)"
	fi
	mig_start "$preload"
	vtld_up
	mig_wait
	note write-ready "$bc"
	host_done written || mig_bail "the host did not write within $HOST_WAIT s"
	mig_show written "$bc" || mig_bail "vtlctl cartridge show $bc"
	echo "-- the host wrote $bc: $(jfield objects /results/written.json) objects, $(jfield stored_bytes /results/written.json) bytes stored"
	if [ "$1" != copy ]; then
		t0=$(date +%s.%N)
		mig_queue migrate "$bc"
		mig_logged "job $id: copied" || mig_bail "the copy of $bc failed"
		echo "-- copied in $(since "$t0") s"
	fi
	t0=$(date +%s.%N)
	case $1 in
	copy)
		note step "copy"
		mig_queue migrate "$bc"
		mig_logged "job $id: copied" || echo "-- the copy failed"
		;;
	copied)
		note step "copied"
		;;
	release)
		note step "release"
		ctl release "$bc"
		;;
	recall)
		ctl release "$bc" || mig_bail "vtlctl release $bc"
		note step "recall"
		echo "-- the host loads $bc: vtld queues its recall"
		mig_logged ": recalled $bc" || echo "-- the recall failed"
		;;
	esac
	echo "-- the $1 ended $(since "$t0") s after its step began, before the power cut"
	# The host cuts the power: this sleep is where the guest ends.
	sleep "$HOST_WAIT"
	mig_bail "the power was not cut within $HOST_WAIT s"
}

# mig_check KIND: VTL_CHECK's trial was a power cut during a KIND: records the catalog as the cut left
# it, lets both daemons finish the interrupted work, verifies the copies, lets the host read the cartridge
# back, checks the catalog, and removes the cartridge.
mig_check() {
	bc=$VTL_CHECK
	step "$bc after a power cut during a $1: the catalog as the cut left it"
	mig_show crash "$bc" || bail "vtlctl cartridge show $bc"
	echo "-- $bc is $(jfield cache /results/crash.json), $(jfield objects /results/crash.json) objects on disk"
	step "vtld and vtl-migrator start; the interrupted work ends"
	mig_start
	vtld_up
	mig_wait
	# Queued behind the job the cut interrupted (queued again) and a recall vtld queued for a migrated
	# cartridge in its drive (recalls first): it reads every copy that is good once they are done.
	step "every copy the catalog calls good, against the simulated tape"
	# One job at a time, oldest first: its end (in the log, cheaper than vtlctl jobs) is the others' too.
	mig_queue verify "$bc"
	if mig_logged "job $id: verified"; then
		end=done
	else
		end="failed $(sed -n "s/.*warn  job $id ($bc): //p" "$mlog" | tail -1)"
	fi
	# A host's load the power cut interrupted left it in the drive; the host's read-back loads it from its slot.
	if grep -A1 '"location"' /results/crash.json | grep -q '"type": "drive"'; then
		run ctl unload "$MIG_DRIVE" --to "$SLOT" || mig_bail "vtlctl unload $MIG_DRIVE"
	fi
	echo "-- verify: $end"
	note verify.out "$end"
	note vtld-up "$bc"
	step "the host reads $bc back"
	host_done verified || mig_bail "the host did not read back within $HOST_WAIT s"
	echo "-- the host's read-back: $(cat /results/verified)"
	mig_settle
	cp /tmp/jobs.json /results/final-jobs.json
	mig_show final "$bc" || mig_bail "vtlctl cartridge show $bc"
	mig_down
	vtld_down
	catalog_check
	trial_done "$bc" "ok: the catalog and the pool agree"
}

# The hooks guest_powercut.sh calls: before its own check and before its own serving.
mig_check_hook() {
	case $(mig_kind 1) in
	copy | copied | release | recall) mig_check "$(mig_kind 1)"; VTL_CHECK=none ;;
	esac
}
mig_serve_hook() {
	case $(mig_kind 2) in
	copy | copied | release | recall) [ "${VTL_NEXT:-none}" = none ] || mig_serve "$(mig_kind 2)" "$(mig_kind 3)" ;;
	esac
}
