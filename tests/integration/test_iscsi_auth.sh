#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Who may log in to vtld's iSCSI target, and digests, with libiscsi as the
# host (tests/integration/iscsi_auth) and a hand-made initiator for data
# digests (tests/integration/iscsi_raw; libiscsi has none):
#   - [iscsi] chap_user/chap_secret: the right secret logs in and commands
#     run; a wrong secret, or none, is refused with "authentication failure";
#   - mutual_user/mutual_secret: mutual CHAP works, and a host that expects
#     another target secret refuses the target;
#   - initiator lines: a listed initiator gets in, another one is refused with
#     "authorization failure" even with the right secret, in discovery too;
#   - discovery without CHAP when discovery_chap = no, only with it when yes;
#   - [initiator NAME] sections: each host logs in with its own credentials
#     (discovery too); a host that claims another's name with its own secret
#     is refused with "authentication failure", and only after
#     auth_fail_delay seconds;
#   - a configuration with secrets that others may read makes vtld refuse to
#     start, naming the file, its mode and chmod 600; listen = 0.0.0.0
#     without CHAP or an allow list is refused, and with allow_anonymous =
#     yes it starts with a warning;
#   - a vtld started as make run starts it (scripts/vtl-run): libiscsi's own
#     iscsi-ls -s lists the target and every LUN through SendTargets;
#   - header digests (libiscsi), then header and data digests that write and
#     read back a block, a corrupt data digest answered with a Reject (02h)
#     after which the session goes on, and a corrupt header digest that ends
#     the connection (iscsi_raw);
#   - over a second connection without digests (iscsi_raw): ABORT TASK of a
#     WRITE whose Data-Out is half sent (function complete, no status, the
#     tape has not moved, the next WRITE lands), and a data segment above
#     the declared MaxRecvDataSegmentLength (Reject 04h, then closed).
#
# Usage: sh test_iscsi_auth.sh <build-dir>   (needs vtld, vtlctl, tests/integration/iscsi_auth and iscsi_raw)
set -eu

build=$(cd "${1:?usage: test_iscsi_auth.sh <build-dir>}" && pwd)
VTLD=$build/vtld
VTLCTL=$build/vtlctl
AUTH=$build/tests/integration/iscsi_auth
RAW=$build/tests/integration/iscsi_raw
for x in "$VTLD" "$VTLCTL" "$AUTH" "$RAW"; do
	[ -x "$x" ] || { echo "FAIL: $x is missing; build it with 'make'" >&2; exit 1; }
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/vtl-iscsi-auth.XXXXXX")
pid=""
trap '[ -z "$pid" ] || kill "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT INT TERM
log=$tmp/vtld.log
step() { echo "-- $*"; }
fail() {
	echo "FAIL: $*" >&2
	echo "   vtld log:" >&2; tail -20 "$log" | sed 's/^/   | /' >&2 2>/dev/null || true
	exit 1
}
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
iqn=iqn.2026-01.org.vtl:authtest
allowed=iqn.2026-01.org.vtl:allowed-host
other=iqn.2026-01.org.vtl:other-host
user=backup-host
secret=host-secret-0123
tuser=vtl-target
tsecret=target-secret-4567

mkdir -p "$tmp/etc"
listen=127.0.0.1
# $1: extra [iscsi] lines (and sections after them). The file may hold secrets: owner only.
configure() {
	cat >"$tmp/etc/vtl.conf" <<CONF
[library]
name = authtest
serial = AUTH00001
slots = 8
mail_slots = 2
drives = 1

[pool]
member = ../pool/m0

[catalog]
path = ../var/catalog.db

[iscsi]
listen = $listen
port = $port
target_iqn = $iqn
$1
CONF
	chmod 600 "$tmp/etc/vtl.conf"
}

start() {
	: >"$log"
	"$VTLD" -c "$tmp/etc/vtl.conf" 2>>"$log" &
	pid=$!
	i=0
	until grep -q "ready:" "$log" 2>/dev/null; do
		i=$((i + 1))
		[ "$i" -le 200 ] || fail "vtld did not come up within 20 s"
		kill -0 "$pid" 2>/dev/null || fail "vtld exited"
		sleep 0.1
	done
}
stop() {
	kill -TERM "$pid"
	wait "$pid" || fail "vtld did not stop cleanly"
	pid=""
}

# refused WORDS: vtld must exit 1 at once, saying WORDS (a fixed string).
refused() {
	: >"$log"
	set +e
	timeout 20 "$VTLD" -c "$tmp/etc/vtl.conf" 2>>"$log"
	got=$?
	set -e
	sed 's/^/   | /' "$log"
	[ "$got" -eq 1 ] || fail "vtld exited $got, expected 1 (refusal)"
	grep -qF -- "$1" "$log" || fail "vtld did not say '$1'"
}

# expect STATUS WORDS -- ARGS...: runs iscsi_auth, which must exit with STATUS and print WORDS.
expect() {
	want=$1 words=$2
	shift 3
	set +e
	timeout 30 "$AUTH" "$@" "127.0.0.1:$port" "$iqn" >"$tmp/out" 2>&1
	got=$?
	set -e
	sed 's/^/   /' "$tmp/out"
	[ "$got" -eq "$want" ] || fail "iscsi_auth $* exited $got, expected $want"
	grep -qi -- "$words" "$tmp/out" || fail "iscsi_auth $* did not say '$words'"
}

configure ""
"$VTLCTL" -c "$tmp/etc/vtl.conf" init >/dev/null
"$VTLCTL" -c "$tmp/etc/vtl.conf" cartridge add --barcode D00001L8 --count 1 >/dev/null

step "no CHAP configured: digests (CRC32C) and their errors, ABORT TASK during a transfer, an oversized PDU"
start
timeout 60 "$RAW" "127.0.0.1:$port" "$iqn" >"$tmp/out" 2>&1 || { sed 's/^/   /' "$tmp/out"; fail "iscsi_raw failed"; }
sed 's/^/   /' "$tmp/out"
grep -q "logged in: normal session of iqn.2026-01.org.vtl:digest-host, header digest, data digest" "$log" ||
	fail "vtld did not log a session with both digests"
grep -q "data digest error (opcode 0x00" "$log" || fail "vtld did not log the ping's data digest error"
grep -q "header digest error; closing the connection" "$log" || fail "vtld did not log the header digest error"
grep -q "above MaxRecvDataSegmentLength (opcode 0x00" "$log" || fail "vtld did not log the oversized PDU"
stop

step "keepalive: a silent initiator gets a NOP-In; answered it stays, unanswered it is closed"
configure "nop_interval = 1"
start
timeout 60 "$RAW" "127.0.0.1:$port" "$iqn" keepalive >"$tmp/out" 2>&1 || { sed 's/^/   /' "$tmp/out"; fail "iscsi_raw keepalive failed"; }
sed 's/^/   /' "$tmp/out"
grep -q "does not answer NOP-In; closing the connection" "$log" || fail "vtld did not log the dead connection"
stop

step "CHAP with mutual credentials, an initiator list, discovery without CHAP"
configure "auth_fail_delay = 0
chap_user = $user
chap_secret = $secret
mutual_user = $tuser
mutual_secret = $tsecret
discovery_chap = no
initiator = $allowed"
start
grep -q "authentication: CHAP (mutual offered), not for discovery; initiators: allow list" "$log" ||
	fail "vtld did not log its authentication settings"
step "the right secret logs in and commands run"
expect 0 "commands work" -- -i "$allowed" -u "$user" -p "$secret"
step "a wrong secret is refused (authentication failure)"
expect 2 "authentication fail" -- -i "$allowed" -u "$user" -p "wrong-secret-999"
grep -q "login refused: authentication failure (wrong CHAP name or response)" "$log" || fail "vtld did not log why"
step "a wrong CHAP name is refused"
expect 2 "authentication fail" -- -i "$allowed" -u "somebody" -p "$secret"
step "no credentials while CHAP is configured are refused"
expect 2 "authentication fail" -- -i "$allowed"
step "mutual CHAP: the target proves itself with its own secret"
expect 0 "commands work" -- -i "$allowed" -u "$user" -p "$secret" -U "$tuser" -P "$tsecret"
step "mutual CHAP: a host that expects another target secret refuses the target"
expect 2 "login refused" -- -i "$allowed" -u "$user" -p "$secret" -U "$tuser" -P "not-the-target-secret"
step "an initiator not in the list is refused (authorization failure), even with the right secret"
expect 2 "authorization fail" -- -i "$other" -u "$user" -p "$secret"
grep -q "initiator not in the allowed list" "$log" || fail "vtld did not log the refused initiator"
step "discovery without credentials works (discovery_chap = no) for a listed initiator"
expect 0 "discovered target $iqn" -- -i "$allowed" -d
step "an initiator not in the list cannot discover the target either"
expect 2 "authorization fail" -- -i "$other" -d
step "header digests with CHAP"
expect 0 "commands work" -- -i "$allowed" -u "$user" -p "$secret" -H
grep -q "logged in: normal session of $allowed, header digest" "$log" || fail "vtld did not log a header digest"
stop

step "discovery_chap = yes: discovery needs the secret too"
configure "auth_fail_delay = 0
chap_user = $user
chap_secret = $secret
discovery_chap = yes"
start
expect 2 "authentication fail" -- -i "$other" -d
expect 0 "discovered target $iqn" -- -i "$other" -u "$user" -p "$secret" -d
step "no initiator lines: every initiator with the secret gets in"
expect 0 "commands work" -- -i "$other" -u "$user" -p "$secret"
stop

host1=iqn.1993-08.org.debian:01:host1
host2=iqn.1993-08.org.debian:01:host2
delay=3
step "[initiator NAME] sections: each host its own CHAP credentials, bound to its name"
configure "auth_fail_delay = $delay
chap_user = $user
chap_secret = $secret
initiator = $allowed

[initiator $host1]
chap_user = host1
chap_secret = \"host1 secret 0123\"
discovery_chap = yes

[initiator $host2]
chap_user = host2
chap_secret = host2-secret-456"
start
grep -q "authentication: CHAP, not for discovery; initiators: allow list (2 with their own CHAP credentials)" "$log" ||
	fail "vtld did not log the per-initiator credentials"
step "host1 and host2 log in with their own credentials"
expect 0 "commands work" -- -i "$host1" -u host1 -p "host1 secret 0123"
expect 0 "commands work" -- -i "$host2" -u host2 -p host2-secret-456
step "host2 claiming host1's name with its own secret: authentication failure, after auth_fail_delay = $delay s"
t0=$(date +%s%N)
expect 2 "authentication fail" -- -i "$host1" -u host2 -p host2-secret-456
t1=$(date +%s%N)
ms=$(((t1 - t0) / 1000000))
echo "   refused after $ms ms"
[ "$ms" -ge $((delay * 1000)) ] || fail "the refusal came after $ms ms, before auth_fail_delay = $delay s"
[ "$ms" -lt $(((delay + 5) * 1000)) ] || fail "the refusal took $ms ms, far beyond auth_fail_delay = $delay s"
step "nor do the shared credentials open a name that has its own"
expect 2 "authentication fail" -- -i "$host1" -u "$user" -p "$secret"
step "a listed initiator without a section still uses the shared credentials, not a host's"
expect 0 "commands work" -- -i "$allowed" -u "$user" -p "$secret"
expect 2 "authentication fail" -- -i "$allowed" -u host1 -p "host1 secret 0123"
step "discovery CHAP per initiator: host1 (discovery_chap = yes) discovers with its secret, not without"
expect 0 "discovered target $iqn" -- -i "$host1" -u host1 -p "host1 secret 0123" -d
expect 2 "authentication fail" -- -i "$host1" -d
expect 0 "discovered target $iqn" -- -i "$host2" -d
step "the event loop serves others while a refusal waits"
"$AUTH" -i "$host1" -u host2 -p host2-secret-456 "127.0.0.1:$port" "$iqn" >"$tmp/held" 2>&1 &
held=$!
sleep 0.5
t0=$(date +%s%N)
expect 0 "commands work" -- -i "$host2" -u host2 -p host2-secret-456
t1=$(date +%s%N)
ms=$(((t1 - t0) / 1000000))
echo "   host2 logged in and ran commands in $ms ms meanwhile"
[ "$ms" -lt $((delay * 1000 - 1000)) ] || fail "host2 waited $ms ms: the held refusal blocked the loop"
set +e
wait "$held"
got=$?
set -e
[ "$got" -eq 2 ] || fail "the held login exited $got, expected 2"
stop

step "a configuration with secrets that others may read: vtld refuses to start"
chmod 644 "$tmp/etc/vtl.conf"
refused "$tmp/etc/vtl.conf holds CHAP secrets but its mode 0644 lets other users read it: chmod 600 $tmp/etc/vtl.conf"
chmod 660 "$tmp/etc/vtl.conf"
refused "its mode 0660 lets its group change it: chmod 600"
step "vtlctl reads the same file, and refuses it too"
set +e
"$VTLCTL" -c "$tmp/etc/vtl.conf" slot list >"$tmp/out" 2>&1
got=$?
set -e
sed 's/^/   /' "$tmp/out"
[ "$got" -ne 0 ] || fail "vtlctl accepted a group-writable file with secrets"
grep -qF "its mode 0660 lets its group change it: chmod 600 $tmp/etc/vtl.conf" "$tmp/out" ||
	fail "vtlctl did not say why"
chmod 640 "$tmp/etc/vtl.conf"
start
stop

step "listen = 0.0.0.0 without CHAP or an allow list: refused, with the options named"
listen=0.0.0.0
configure ""
refused "[iscsi] listen = 0.0.0.0 serves the network without CHAP or an initiator allow list"
grep -qF "allow_anonymous = yes" "$log" || fail "the refusal does not name allow_anonymous"
step "with allow_anonymous = yes it starts, and warns"
configure "allow_anonymous = yes"
start
grep -q "warn .*allow_anonymous = yes: any host that reaches 0.0.0.0:$port may use every cartridge" "$log" ||
	fail "vtld did not warn about anonymous access"
expect 0 "commands work" -- -i "$other"
stop
step "an allow list without CHAP on 0.0.0.0 starts, and warns that those names are not authenticated"
configure "initiator = $allowed"
start
grep -q "warn .*1 allowed initiator without CHAP: a host is whoever it says it is" "$log" ||
	fail "vtld did not warn about names allowed without CHAP"
grep -q "allow_anonymous = yes" "$log" && fail "vtld warned about anonymous access with an allow list"
stop
listen=127.0.0.1

step "make run's library (scripts/vtl-run): iscsi-ls -s lists the target and every LUN"
if command -v iscsi-ls >/dev/null 2>&1; then
	run_port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	: >"$log" # now: the background job's own redirection may come after the first grep below
	VTL_HOME=$tmp/run VTL_PORT=$run_port sh "$(dirname "$0")/../../scripts/vtl-run" "$build" >"$tmp/run.out" 2>"$log" &
	pid=$!
	i=0
	until grep -q "ready:" "$log" 2>/dev/null; do
		i=$((i + 1))
		[ "$i" -le 300 ] || fail "make run's vtld did not come up within 30 s"
		kill -0 "$pid" 2>/dev/null || fail "make run's vtld exited"
		sleep 0.1
	done
	timeout 30 iscsi-ls -s "iscsi://127.0.0.1:$run_port" >"$tmp/ls" 2>&1 || { sed 's/^/   /' "$tmp/ls"; fail "iscsi-ls failed"; }
	sed 's/^/   /' "$tmp/ls"
	grep -q "^Target:iqn.2026-01.org.vtl:vtl Portal:127.0.0.1:$run_port,1" "$tmp/ls" ||
		fail "iscsi-ls did not list the target with its address"
	grep -q "Lun:0 *Type:MEDIA_CHANGER" "$tmp/ls" || fail "iscsi-ls did not list the changer"
	for l in 1 2 3 4; do
		grep -q "Lun:$l *Type:SEQUENTIAL_ACCESS" "$tmp/ls" || fail "iscsi-ls did not list drive LUN $l"
	done
	stop
else
	echo "   iscsi-ls (libiscsi-bin) is not installed: skipped"
fi
echo "test_iscsi_auth: all steps passed"
