# SPDX-License-Identifier: Apache-2.0
#
# Sourced after vtld_env.sh by the integration tests that run vtl-migrator
# beside vtld: starting and stopping it by its PID, vtlctl with its output
# kept, and waiting for jobs. Set MIGRATOR and mlog (its log) first. The
# simulated library's configuration is migrator_conf in daemon_env.sh, which
# the kernel tier's power-cut guest sources too (this file's ctl is not the
# guest's).

mpid=""

# ctl ARGS: vtlctl on $conf; its output is in $tmp/out and shown indented; a failure fails the test.
ctl() {
	"$VTLCTL" -c "$conf" "$@" >"$tmp/out" 2>&1 || { sed 's/^/   | /' "$tmp/out" >&2; fail "vtlctl $* failed"; }
	sed 's/^/   | /' "$tmp/out"
}

# migrator_start: starts vtl-migrator and waits up to 20 s for its "ready: copies go to" line (a plain
# "ready:" would also match "already:" in a job's message).
migrator_starts=0
migrator_start() {
	migrator_starts=$((migrator_starts + 1))
	"$MIGRATOR" -c "$conf" 2>>"$mlog" &
	mpid=$!
	i=0
	# Until the log exists grep prints no count: that is 0 ready lines, not an error.
	until migrator_ready=$(grep -c "ready: copies go to" "$mlog" 2>/dev/null) || :; [ "${migrator_ready:-0}" -ge "$migrator_starts" ]; do
		i=$((i + 1))
		[ "$i" -le 200 ] || { cat "$mlog" >&2; fail "vtl-migrator did not come up within 20 s"; }
		kill -0 "$mpid" 2>/dev/null || { cat "$mlog" >&2; fail "vtl-migrator exited"; }
		sleep 0.1
	done
}
migrator_stop() {
	kill -TERM "$mpid"
	wait "$mpid" || { cat "$mlog" >&2; fail "vtl-migrator did not stop cleanly"; }
	mpid=""
}
# job_ends ID STATE: waits up to 60 s for job ID to end, which must be in STATE.
job_ends() {
	i=0
	while :; do
		"$VTLCTL" -c "$conf" --json jobs >"$tmp/jobs" 2>&1 || { cat "$tmp/jobs" >&2; fail "vtlctl jobs failed"; }
		st=$(python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
print([j for j in d["jobs"] if j["id"] == int(sys.argv[2])][0]["state"])' "$tmp/jobs" "$1")
		case $st in done | failed) break ;; esac
		i=$((i + 1))
		[ "$i" -le 600 ] || fail "job $1 did not end within 60 s (state $st)"
		sleep 0.1
	done
	[ "$st" = "$2" ] || { cat "$tmp/jobs" >&2; cat "$mlog" >&2; fail "job $1 ended $st, expected $2"; }
}
job_id() {
	sed -n 's/^queued job \([0-9]*\).*/\1/p' "$tmp/out"
}


# cache_of BARCODE: prints the cartridge's cache state (resident, premigrated, migrated, recalling).
cache_of() {
	"$VTLCTL" -c "$conf" --json cartridge show "$1" | python3 -c 'import json, sys; print(json.load(sys.stdin)["cache"])'
}
# cache_becomes BARCODE STATE [SECONDS]: waits until the cartridge's cache state is STATE; fails after
# SECONDS (60).
cache_becomes() {
	i=0
	until [ "$(cache_of "$1")" = "$2" ]; do
		i=$((i + 1))
		[ "$i" -le $((${3:-60} * 10)) ] || fail "$1 did not become $2 within ${3:-60} s (it is $(cache_of "$1"))"
		sleep 0.1
	done
}

# json FILE EXPR: evaluates the Python expression EXPR over the JSON document d in FILE, prints it.
json() {
	python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
print(eval(sys.argv[2]))' "$1" "$2"
}

# verify_in_site_and_vault BARCODE: vtlctl verify queues one job in each of two libraries, site and vault;
# both must end done, one in each.
verify_in_site_and_vault() {
	ctl verify "$1"
	grep -q "^queued job [0-9]*: verify $1 in [a-z]*, job [0-9]* in [a-z]*$" "$tmp/out" ||
		fail "verify did not queue a job in each library"
	for j in $(grep -o "job [0-9]*" "$tmp/out" | cut -d' ' -f2); do
		job_ends "$j" done
	done
	"$VTLCTL" -c "$conf" --json jobs >"$tmp/jobs"
	[ "$(json "$tmp/jobs" 'sorted(j["library"] for j in d["jobs"] if j["kind"] == "verify" and j["state"] == "done")')" = "['site', 'vault']" ] ||
		{ cat "$tmp/jobs" >&2; fail "the verifies did not run one in each library"; }
}

# tape_destroy FILE: overwrites a simulated tape's file with zeros, its size kept: its data is gone.
tape_destroy() {
	python3 - "$1" <<'PY'
import os, sys
n = os.path.getsize(sys.argv[1])
with open(sys.argv[1], "r+b") as f:
    f.write(b"\0" * n)
PY
}
