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
# $1: extra [iscsi] lines.
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
listen = 127.0.0.1
port = $port
target_iqn = $iqn
$1
CONF
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
configure "chap_user = $user
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
configure "chap_user = $user
chap_secret = $secret
discovery_chap = yes"
start
expect 2 "authentication fail" -- -i "$other" -d
expect 0 "discovered target $iqn" -- -i "$other" -u "$user" -p "$secret" -d
step "no initiator lines: every initiator with the secret gets in"
expect 0 "commands work" -- -i "$other" -u "$user" -p "$secret"
stop
echo "test_iscsi_auth: all steps passed"
