# SPDX-License-Identifier: Apache-2.0
#
# Sourced by the integration tests and by the kernel tier's power-cut guest
# (tests/kernel/guest_powercut.sh sees this tree read-only, as the host's
# root): what both need to run vtld and vtl-migrator. The configuration
# blocks the tests share, printed with each test's own values, a wait for a
# daemon's ready line, and a stop that wants exit status 0. It defines only
# these functions, and of the variables they set a caller reads only why (the
# reason one returned 1; the others begin conf_, ready_ or stop_), so it sits
# beside a guest's own fail, step and ctl.

# conf_print [SECTION.KEY=VALUE...] <CONF: prints the configuration on stdin, its sections one blank line
# apart, with every line of KEY in SECTION set to VALUE (added at the section's end when it has none,
# left out when VALUE is empty); returns 1, printing nothing, when an argument is not SECTION.KEY=VALUE,
# names a section the configuration lacks, or leaves out a key it does not have (a misspelt override
# fails the test instead of leaving the program's default in its place).
conf_print() {
	awk '
	function trim(s) { sub(/^[ \t]+/, "", s); sub(/[ \t]+$/, "", s); return s }
	# put K: the line of K (SECTION.KEY) as the arguments set it; none for an empty value.
	function put(k) {
		done[k] = 1
		if (val[k] != "") out = out substr(k, length(sec) + 2) " = " val[k] "\n"
	}
	# section_end: the keys the arguments add to the section that ends here.
	function section_end(   j) {
		for (j = 1; j <= n; j++)
			if (!(key[j] in done) && index(key[j], sec ".") == 1 && val[key[j]] != "") put(key[j])
	}
	BEGIN {
		for (i = 1; i < ARGC; i++) {
			eq = index(ARGV[i], "=")
			k = substr(ARGV[i], 1, eq - 1)
			if (eq == 0 || !match(k, /[^.]\.[^.]+$/)) {
				printf "conf_print: %s is not SECTION.KEY=VALUE\n", ARGV[i] >"/dev/stderr"
				bad = 1
				exit 1
			}
			if (!(k in val)) key[++n] = k
			val[k] = substr(ARGV[i], eq + 1)
			delete ARGV[i]
		}
	}
	/^[ \t]*$/ { next }
	/^\[/ {
		section_end()
		sec = substr($0, 2, length($0) - 2)
		seen[sec] = 1
		out = out (out == "" ? "" : "\n") $0 "\n"
		next
	}
	/^[ \t]*[#;]/ || index($0, "=") == 0 { out = out $0 "\n"; next }
	{
		k = sec "." trim(substr($0, 1, index($0, "=") - 1))
		if (k in val) put(k)
		else out = out $0 "\n"
	}
	END {
		if (bad) exit 1
		section_end()
		for (j = 1; j <= n; j++) {
			if (key[j] in done) continue
			match(key[j], /\.[^.]+$/)
			s = substr(key[j], 1, RSTART - 1)
			if (s in seen) printf "conf_print: %s=: [%s] has no %s to leave out\n", key[j], s, substr(key[j], RSTART + 1) >"/dev/stderr"
			else printf "conf_print: %s: the configuration has no section [%s]\n", key[j], s >"/dev/stderr"
			exit 1
		}
		printf "%s", out
	}' "$@"
}

# migrator_conf [SECTION.KEY=VALUE...]: prints, after a blank line (it follows a library's configuration),
# the [physical], [migrator] and [policy] sections of the tests' simulated library with conf_print's
# overrides: one LTO-8 drive and 2 tapes of 1 GB in 4 slots, which load, locate and stop at once (no
# back-hitch), kept in ../physical; a small ring (4 buffers of 256 KiB, 2 readers) that verifies each
# copy; no copies but those a test asks for. 1 as conf_print.
migrator_conf() {
	echo
	conf_print "$@" <<'CONF'
[physical]
type = sim
name = simlib
generation = 8
drives = 1
slots = 4
tapes = 2
tape_capacity = 1G
backhitch_ms = 0
load_ms = 0
locate_ms = 0
data_dir = ../physical
[migrator]
buffers = 4
buffer_size = 256K
readers = 2
verify = yes
[policy]
premigrate = none
CONF
}

# crash_library_conf NAME SERIAL PORT IQN [SECTION.KEY=VALUE...]: prints the library of the crash and
# power-cut trials, served as IQN on 127.0.0.1:PORT, with conf_print's overrides: one drive, 4 slots,
# and a pool of two members in segments of 4 MiB, so that a trial seals several segments and spans both
# members. 1 as conf_print.
crash_library_conf() {
	conf_name=$1 conf_serial=$2 conf_port=$3 conf_iqn=$4
	shift 4
	conf_print "$@" <<CONF
[library]
name = $conf_name
serial = $conf_serial
slots = 4
drives = 1
[pool]
member = ../pool/m0
member = ../pool/m1
segment_size = 4M
[catalog]
path = ../var/catalog.db
[iscsi]
listen = 127.0.0.1
port = $conf_port
target_iqn = $conf_iqn
advertise = local
CONF
}

# daemon_ready PIDVAR LOG PATTERN BEFORE SECONDS: waits until LOG holds more than BEFORE lines matching
# PATTERN (this start's ready line: the log is kept across starts); returns 1 with the reason in why
# when the daemon whose PID the variable named PIDVAR holds exits first (it is reaped and PIDVAR
# emptied) or SECONDS pass (it is left running).
daemon_ready() {
	eval "ready_pid=\$$1"
	ready_i=0
	until ready_lines=$(grep -c "$3" "$2" 2>/dev/null); [ "${ready_lines:-0}" -gt "$4" ]; do
		ready_i=$((ready_i + 1))
		[ "$ready_i" -le $(($5 * 10)) ] || { why="did not start within $5 s"; return 1; }
		if ! kill -0 "$ready_pid" 2>/dev/null; then
			ready_status=0
			wait "$ready_pid" || ready_status=$?
			eval "$1=''"
			why="exited with status $ready_status at start"
			return 1
		fi
		sleep 0.1
	done
}

# daemon_stop PIDVAR: sends SIGTERM to the daemon whose PID the variable named PIDVAR holds, waits for
# it and empties PIDVAR; returns 1 with the reason in why unless it exited 0.
daemon_stop() {
	eval "stop_pid=\$$1"
	eval "$1=''"
	kill -TERM "$stop_pid"
	stop_status=0
	wait "$stop_pid" || stop_status=$?
	[ "$stop_status" -eq 0 ] || { why="exited $stop_status on SIGTERM"; return 1; }
}
