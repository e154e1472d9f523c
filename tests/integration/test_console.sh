#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# vtld's web console in a real browser, while a host writes and a migration
# runs (tests/integration/console_check.py drives headless Chromium over the
# DevTools protocol):
#   - the page, its script and style are served from the binary with their
#     security headers (Content-Security-Policy default-src 'self', nosniff),
#     without the token; /api needs it;
#   - POST /api/action: 403 with a JSON error without the token or with a
#     wrong one (nothing moved), 400 for an unknown field, 413 for a body
#     over 1024 bytes, a GET of it 405, 409 with the migrator's refusal for
#     a verify in a physical library it does not have; with the token a
#     load is made;
#   - in the browser: every drive and slot with its barcode, a drive's rate
#     and bytes changing while `iscsi_hosts stream` writes, a migration
#     queued from the page (in library simlib) showing progress, a screenshot (PNG, its size and
#     dimensions checked; kept as $CONSOLE_PNG when set: docs/img/console.png
#     is made so), a move refused with a wrong token and made with it.
# Skips (loudly) only when /usr/bin/chromium is missing: scripts/install-deps installs it.
#
# Usage: sh test_console.sh <build-dir>   (needs vtld, vtlctl, vtl-migrator, iscsi_hosts, iscsi_fill)
set -eu

build=$(cd "${1:?usage: test_console.sh <build-dir>}" && pwd)
VTLD=$build/vtld
VTLCTL=$build/vtlctl
MIGRATOR=$build/vtl-migrator
HOSTS=$build/tests/integration/iscsi_hosts
FILL=$build/tests/integration/iscsi_fill
here=$(cd "$(dirname "$0")" && pwd)
. "$here/vtld_env.sh"
. "$here/daemon_env.sh"
. "$here/migrator_env.sh"
need_built "$VTLD" "$VTLCTL" "$MIGRATOR" "$HOSTS" "$FILL"
if [ ! -x /usr/bin/chromium ]; then
	echo "SKIP: chromium not installed (scripts/install-deps installs it): the web console was NOT checked" >&2
	exit 0
fi

vtld_env vtl-console
trap '[ -z "$mpid" ] || kill "$mpid" 2>/dev/null || true; [ -z "$pid" ] || kill "$pid" 2>/dev/null || true
	rm -rf "$tmp"' EXIT INT TERM
hport=$(free_port)
token=console-test-token-$$-0123456789
iqn=iqn.2026-01.org.vtl:console
vtld_library $iqn CONS0001
mlog=$tmp/migrator.log
printf '\n[daemon]\nhttp = 127.0.0.1:%s\nhttp_token = %s\n' "$hport" "$token" >>"$conf"
migrator_conf >>"$conf" || fail "migrator_conf"
chmod 600 "$conf" # it holds the token
"$VTLCTL" -c "$conf" cartridge add --barcode C00001L8 --count 3 >/dev/null
url=http://127.0.0.1:$hport
auth="Authorization: Bearer $token"
# code PATH [CURL-ARGS]: the HTTP status of a request; its body in $tmp/body, its headers in $tmp/headers.
code() {
	p=$1
	shift
	curl -s -o "$tmp/body" -D "$tmp/headers" -w '%{http_code}' "$@" "$url$p"
}
elements() {
	curl -sf -H "$auth" "$url/api/elements" >"$tmp/elements" || fail "GET /api/elements"
}

step "vtld serves the console with its security headers, without the token; /api needs it"
vtld_start
migrator_start
for p in / /console /console.js /console.css; do
	[ "$(code $p)" = 200 ] || fail "GET $p without the token is not 200"
	grep -qi "^Content-Security-Policy: default-src 'self'" "$tmp/headers" || fail "GET $p has no Content-Security-Policy default-src 'self'"
	grep -qi '^X-Content-Type-Options: nosniff' "$tmp/headers" || fail "GET $p has no X-Content-Type-Options: nosniff"
done
code / >/dev/null
grep -q '<script src="/console.js"' "$tmp/body" || fail "the page does not load /console.js"
if grep -q '<script>' "$tmp/body"; then fail "the page has an inline script, which its policy forbids"; fi
[ "$(code /api/status)" = 401 ] || fail "GET /api/status without the token is not 401"
[ "$(code /api/status -H "$auth")" = 200 ] || fail "GET /api/status with the token is not 200"

step "POST /api/action: 403 without the token or with a wrong one, nothing moved; 400, 413, 405"
elements
cp "$tmp/elements" "$tmp/before"
[ "$(code /api/action --data 'verb=move&from=C00001L8&to=1032')" = 403 ] || fail "an action without the token is not 403"
python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); sys.exit(0 if d["ok"] is False and "give the token" in d["error"] else 1)' \
	"$tmp/body" || fail "the 403 is not a JSON error asking for the token: $(cat "$tmp/body")"
[ "$(code /api/action -H 'Authorization: Bearer wrong-token-wrong-token' --data 'verb=move&from=C00001L8&to=1032')" = 403 ] ||
	fail "an action with a wrong token is not 403"
elements
cmp -s "$tmp/before" "$tmp/elements" || fail "a refused action moved a cartridge"
[ "$(code /api/action -H "$auth" --data 'verb=move&from=C00001L8&to=1032&speed=9')" = 400 ] || fail "an unknown field is not 400"
grep -q 'unknown field speed: move takes verb, from, to' "$tmp/body" || fail "the 400 does not name the unknown field: $(cat "$tmp/body")"
[ "$(code /api/action -H "$auth" --data "verb=move&pad=$(python3 -c 'print("x" * 2000)')")" = 413 ] ||
	fail "a body of 2 kB is not 413"
[ "$(code /api/action -H "$auth")" = 405 ] || fail "a GET of /api/action is not 405"
[ "$(code /api/action -H "$auth" --data 'verb=reload')" = 400 ] || fail "reload through /api/action is not refused"
echo "   $(cat "$tmp/body")"
# The library field is vtlctl's --library: the migrator answers for it, as it answers vtlctl.
[ "$(code /api/action -H "$auth" --data 'verb=verify&barcode=C00001L8&library=nowhere')" = 409 ] ||
	fail "a verify in a library the migrator does not have is not 409: $(cat "$tmp/body")"
grep -q 'no physical library nowhere: this migrator serves simlib' "$tmp/body" ||
	fail "the 409 does not name the unknown library and the migrator's: $(cat "$tmp/body")"
echo "   $(cat "$tmp/body")"

step "a host fills C00001L8 with 24 MiB and loads C00002L8 in drive 258 (iscsi_hosts write)"
timeout 120 "$FILL" "127.0.0.1:$port" "$iqn" 1025 24 >"$tmp/fill" 2>&1 || { cat "$tmp/fill" >&2; fail "iscsi_fill"; }
timeout 120 "$HOSTS" "127.0.0.1:$port" "$iqn" write >"$tmp/hosts" 2>&1 || { cat "$tmp/hosts" >&2; fail "iscsi_hosts write"; }

step "headless chromium: the console while the host streams and a migration runs"
png=${CONSOLE_PNG:-$tmp/console.png}
timeout 170 python3 "$here/console_check.py" "$url" "$token" "$png" -- \
	timeout 120 "$HOSTS" "127.0.0.1:$port" "$iqn" stream || fail "console_check.py"
"$VTLCTL" -c "$conf" --json cartridge show C00003L8 >"$tmp/c3" || fail "vtlctl cartridge show C00003L8"
[ "$(json "$tmp/c3" 'd["location"]["address"]')" = 1032 ] || fail "vtlctl does not find C00003L8 in slot 1032 after the page moved it"

migrator_stop
vtld_stop
echo "PASS: test_console"
