#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Reloading the configuration while vtld and vtl-migrator run (docs/operations.md, "Reload"):
#   - vtld tells a service manager READY=1 when it serves, RELOADING=1 then READY=1 around a reload,
#     STOPPING=1 at SIGTERM (a datagram socket stands in for systemd's $NOTIFY_SOCKET);
#   - with $JOURNAL_STREAM naming its stderr (as systemd sets it), each log line starts with its
#     syslog priority (<6> for info, <3> for error) and carries no time of its own;
#   - vtlctl reload applies a new log level and CHAP secret and says so: a login with the old secret
#     is then refused, one with the new secret accepted, and a session that logged in with the old
#     one before the reload goes on working;
#   - a change of [library] slots is refused, naming the key and both values, and nothing of that
#     reload applies (a CHAP secret changed with it does not work); a file that does not parse is
#     refused too (by vtlctl, which reads it first, and by vtld at SIGHUP); vtld serves on with what
#     it had;
#   - SIGHUP does the same as vtlctl reload (its log line);
#   - vtl-migrator: [migrator] rate and [policy] high_water reload (vtlctl policy shows the new mark),
#     a [physical] change is refused; vtld, which reads neither, applies nothing and says so.
#
# Usage: sh test_reload.sh <build-dir>
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:?usage: test_reload.sh <build-dir>}" && pwd)
VTLD=$build/vtld
VTLCTL=$build/vtlctl
MIGRATOR=$build/vtl-migrator
AUTH=$build/tests/integration/iscsi_auth
. "$here/vtld_env.sh"
. "$here/daemon_env.sh"
. "$here/migrator_env.sh"
need_built "$VTLD" "$VTLCTL" "$MIGRATOR" "$AUTH"
vtld_env vtl-reload
mlog=$tmp/migrator.log
npid=""
trap '[ -z "$pid" ] || kill "$pid" 2>/dev/null; [ -z "$mpid" ] || kill "$mpid" 2>/dev/null;
	[ -z "$npid" ] || kill "$npid" 2>/dev/null; rm -rf "$tmp"' EXIT INT TERM
iqn=iqn.2026-01.org.vtl:reload
user=backup-host
old=old-secret-0123
new=new-secret-4567
third=third-secret-890

# write_conf SLOTS SECRET LEVEL [SECTION.KEY=VALUE...]: the library with one-way CHAP, then the simulated
# physical library with the overrides.
write_conf() {
	slots=$1 secret=$2 level=$3
	shift 3
	{ library_conf reload RLD0000001 "$slots" 2 1 "$port" "$iqn"; cat <<CONF; } >"$conf.new"
chap_user = $user
chap_secret = $secret
auth_fail_delay = 0
[daemon]
log_level = $level
CONF
	migrator_conf "$@" >>"$conf.new" || fail "migrator_conf $*"
	chmod 600 "$conf.new"
	mv "$conf.new" "$conf"
}

# login STATUS WORDS SECRET: iscsi_auth as $user with SECRET must exit STATUS and say WORDS.
login() {
	set +e
	timeout 30 "$AUTH" -u "$user" -p "$3" "127.0.0.1:$port" "$iqn" >"$tmp/login" 2>&1
	got=$?
	set -e
	sed 's/^/   | /' "$tmp/login"
	[ "$got" -eq "$1" ] || fail "a login with secret $3 exited $got, expected $1"
	grep -qi -- "$2" "$tmp/login" || fail "a login with secret $3 did not say '$2'"
}

# reload_says STATUS TEXT ARGS...: vtlctl reload ARGS must exit STATUS and print TEXT (stdout or stderr).
reload_says() {
	want=$1 text=$2
	shift 2
	set +e
	"$VTLCTL" -c "$conf" reload "$@" >"$tmp/reload" 2>&1
	got=$?
	set -e
	sed 's/^/   | /' "$tmp/reload"
	[ "$got" -eq "$want" ] || fail "vtlctl reload $* exited $got, expected $want"
	grep -qF -- "$text" "$tmp/reload" || fail "vtlctl reload $* did not print: $text"
}

# notified N TEXT: waits up to 5 s for the manager's Nth message to be TEXT.
notified() {
	i=0
	until [ "$(sed -n "${1}p" "$tmp/notify.log" 2>/dev/null)" = "$2" ]; do
		i=$((i + 1))
		[ "$i" -le 50 ] || { cat "$tmp/notify.log" >&2; fail "message $1 to the service manager is not '$2'"; }
		sleep 0.1
	done
}

mkdir -p "$tmp/etc"
write_conf 8 "$old" info
"$VTLCTL" -c "$conf" init >/dev/null || fail "vtlctl init"

step "vtld under a service manager: READY=1 once it serves"
python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
with open(sys.argv[2], "a", buffering=1) as f:
    while True:
        f.write(s.recv(4096).decode().split("\n")[0] + "\n")' "$tmp/notify" "$tmp/notify.log" &
npid=$!
i=0
until [ -S "$tmp/notify" ]; do i=$((i + 1)); [ "$i" -le 50 ] || fail "the notify listener did not start"; sleep 0.1; done
: >"$log"
export NOTIFY_SOCKET="$tmp/notify"
JOURNAL_STREAM=$(stat -c '%d:%i' "$log")
export JOURNAL_STREAM
vtld_start
unset NOTIFY_SOCKET JOURNAL_STREAM
notified 1 "READY=1"
grep -q '^<6>info  library reload ready: 2 logical units' "$log" || fail "vtld's journal line has no priority <6>"
if grep -q '^[0-9]' "$log"; then fail "a journal line carries its own time"; fi
login 0 "commands work" "$old"
# A host logged in with the old secret, whose session must outlive the reload.
timeout 60 "$AUTH" -u "$user" -p "$old" -w "$tmp/go-on" "127.0.0.1:$port" "$iqn" >"$tmp/held" 2>&1 &
held=$!
i=0
until grep -q "commands work" "$tmp/held"; do
	i=$((i + 1)); [ "$i" -le 100 ] || { cat "$tmp/held" >&2; fail "the held session did not log in"; }; sleep 0.1
done

step "vtlctl reload applies a new log level and CHAP secret"
write_conf 8 "$new" debug
reload_says 0 "vtld: reload: applied [iscsi] chap_secret changed, [daemon] log_level changed from info to debug" --vtld
notified 2 "RELOADING=1"
notified 3 "READY=1"
grep -q "reload: applied .*\[daemon\] log_level changed from info to debug" "$log" || fail "vtld did not log the reload"
grep -q "chap_secret" "$log" && ! grep -q "$new" "$log" || fail "vtld's log shows the secret or not its key"

step "the old secret is refused now, the new one logs in; the session logged in before goes on"
login 2 "authentication fail" "$old"
login 0 "commands work" "$new"
touch "$tmp/go-on"
wait "$held" || { cat "$tmp/held" >&2; fail "the session logged in before the reload stopped working"; }
sed 's/^/   | /' "$tmp/held"
[ "$(grep -c "commands work" "$tmp/held")" -eq 2 ] || fail "the held session did not run its commands twice"

step "[library] slots changed: refused, nothing of it applied (its new secret neither), the old config serves"
write_conf 12 "$third" debug
reload_says 1 "vtld: reload: [library] slots changed from 8 to 12: needs a restart; nothing applied" --vtld
grep -q "^<3>error reload: \[library\] slots changed from 8 to 12: needs a restart; nothing applied" "$log" ||
	fail "vtld did not log the refusal (at priority 3)"
login 2 "authentication fail" "$third"
login 0 "commands work" "$new"
"$VTLCTL" -c "$conf" status >/dev/null 2>&1 || fail "vtlctl status failed after the refused reload"

step "a file that does not parse: vtlctl says why (it reads it too), and vtld refuses it at SIGHUP"
printf '[library]\nslots = many\n' >"$conf.bad"
chmod 600 "$conf.bad"
cp "$conf" "$conf.good"
mv "$conf.bad" "$conf"
reload_says 1 "slots = many: give a whole number" --vtld
kill -HUP "$pid"
i=0
until grep -q "reload: .*slots = many.*; nothing applied, still serving the configuration read before" "$log"; do
	i=$((i + 1)); [ "$i" -le 100 ] || fail "vtld did not refuse the file that does not parse"; sleep 0.1
done
mv "$conf.good" "$conf"
login 0 "commands work" "$new"

step "SIGHUP reloads the same way"
write_conf 8 "$third" debug
before=$(grep -c "reload: applied" "$log" || :)
kill -HUP "$pid"
i=0
# Wait for a new "reload: applied" line: the first reload's line also starts with this one's words.
until [ "$(grep -c "reload: applied" "$log" || :)" -gt "$before" ]; do
	i=$((i + 1)); [ "$i" -le 100 ] || fail "SIGHUP did not reload within 10 s"; sleep 0.1
done
grep "reload: applied" "$log" | tail -1 | grep -q "reload: applied \[iscsi\] chap_secret changed$" ||
	fail "SIGHUP applied something else than the new secret"
grep -q "signal 1 (SIGHUP): reloading the configuration" "$log" || fail "vtld did not log the SIGHUP"
[ "$(grep -c "reload: applied" "$log")" -eq $((before + 1)) ] || fail "SIGHUP did not reload exactly once"
login 0 "commands work" "$third"
login 2 "authentication fail" "$new"

step "vtl-migrator reloads [migrator] rate and [policy] high_water; vtld reads neither"
migrator_start
write_conf 8 "$third" debug migrator.rate=50 policy.high_water=80 policy.low_water=60
reload_says 0 "vtl-migrator: reload: applied [migrator] rate changed from 0 to 50, [policy] high_water changed from 85 to 80, [policy] low_water changed from 70 to 60"
grep -qF "vtld: reload: nothing this daemon reads changed" "$tmp/reload" || fail "vtld did not say it had nothing to apply"
ctl policy
grep -q "high water 80%, low water 60%" "$tmp/out" || fail "vtlctl policy does not show the reloaded marks"

step "a [physical] change is refused by vtl-migrator, which keeps running"
write_conf 8 "$third" debug migrator.rate=50 policy.high_water=80 policy.low_water=60 physical.drives=2
reload_says 1 "vtl-migrator: reload: [physical] drives changed from 1 to 2: needs a restart; nothing applied" --migrator
ctl policy
migrator_stop

step "SIGTERM: STOPPING=1, and vtld exits 0"
vtld_stop
n=$(wc -l <"$tmp/notify.log")
[ "$(sed -n "${n}p" "$tmp/notify.log")" = "STOPPING=1" ] || { cat "$tmp/notify.log" >&2; fail "the last message is not STOPPING=1"; }
echo "test_reload: all steps passed"
