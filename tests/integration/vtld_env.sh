# SPDX-License-Identifier: Apache-2.0
#
# Sourced by the integration tests that serve a library over iSCSI: a
# temporary folder removed on exit, a free loopback port, a library made with
# vtlctl, and vtld started and stopped by its PID.
#
# Use: VTLD=... VTLCTL=...; . vtld_env.sh; vtld_env NAME; vtld_library IQN; vtld_start; ...; vtld_stop
# Sets tmp (the folder), log (vtld's stderr), conf (the configuration file), port and pid.

. "$(dirname "$0")/library_conf.sh"

step() { echo "-- $*"; }
fail() {
	echo "FAIL: $*" >&2
	echo "   vtld log:" >&2; tail -20 "$log" | sed 's/^/   | /' >&2 2>/dev/null || true
	exit 1
}

# need_built PROGRAM...: exits with FAIL unless each program exists and is executable (built by make).
need_built() {
	for x in "$@"; do
		[ -x "$x" ] || { echo "FAIL: $x is missing; build it with 'make'" >&2; exit 1; }
	done
}

# free_port: prints a TCP port free on 127.0.0.1 now.
free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# metric URL NAME [LABELS]: the value of the series NAME{LABELS} in URL's /metrics ("" when absent).
metric() {
	curl -sf "$1/metrics" | awk -v s="$2${3:+{$3\}}" 'index($0, s " ") == 1 { print $2 }'
}

# vtld_env NAME: makes the temporary folder and picks the port; the exit trap stops vtld and removes the folder.
vtld_env() {
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/$1.XXXXXX")
	pid=""
	trap '[ -z "$pid" ] || kill "$pid" 2>/dev/null || true; rm -rf "$tmp"' EXIT INT TERM
	log=$tmp/vtld.log
	conf=$tmp/etc/vtl.conf
	port=$(free_port)
}

# vtld_library IQN SERIAL: a library of 2 drives, 8 slots and 2 mail slots served as IQN on 127.0.0.1:$port.
vtld_library() {
	mkdir -p "$tmp/etc"
	library_conf itest "$2" 8 2 2 "$port" "$1" local >"$conf"
	"$VTLCTL" -c "$conf" init >/dev/null || fail "vtlctl init"
}

# vtld_try_start: starts vtld in the background and waits up to 20 s for it to be ready; returns 1
# with the reason in $why when it exits or is not ready by then (pid is then left set, or "" if it exited).
vtld_starts=0
vtld_try_start() {
	vtld_starts=$((vtld_starts + 1))
	"$VTLD" -c "$conf" 2>>"$log" &
	pid=$!
	i=0
	# The log is shared by every start: wait for this start's own "ready" line.
	# (grep -c prints nothing when the log does not exist yet: that counts as 0.)
	until vtld_ready=$(grep -c "ready: [0-9]* logical units" "$log" 2>/dev/null) || :; [ "${vtld_ready:-0}" -ge "$vtld_starts" ]; do
		i=$((i + 1))
		[ "$i" -le 1000 ] || { why="vtld did not come up within 20 s"; return 1; }
		kill -0 "$pid" 2>/dev/null || { st=0; wait "$pid" || st=$?; why="vtld exited with status $st"; pid=""; return 1; }
		sleep 0.02
	done
}

# vtld_start: vtld_try_start, and the test fails if vtld does not come up.
vtld_start() {
	vtld_try_start || fail "$why"
}

# vtld_stop: SIGTERM, and vtld must exit 0.
vtld_stop() {
	kill -TERM "$pid"
	wait "$pid" || fail "vtld did not stop cleanly"
	pid=""
}
