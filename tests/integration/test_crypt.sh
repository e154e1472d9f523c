#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Tape data encryption end to end: vtld on a free loopback port in a
# temporary folder; the iscsi_crypt host sets a key with SECURITY PROTOCOL
# OUT, writes blocks that carry a marker, reads them back, and without the
# key gets DATA PROTECT 74h/01h; then no file of the pool holds the marker.
# vtl-migrator copies the encrypted cartridge to a simulated library and its
# disk copy is released (no key is needed for either); the host loads it
# again, the recall brings the ciphertext back, and with the key every block
# reads back byte for byte. vtlctl's catalog check passes.
#
# Usage: sh test_crypt.sh <build-dir>   (needs vtld, vtlctl, vtl-migrator, tests/integration/iscsi_crypt)
set -eu

build=$(cd "${1:?usage: test_crypt.sh <build-dir>}" && pwd)
VTLD=$build/vtld
VTLCTL=$build/vtlctl
CLIENT=$build/tests/integration/iscsi_crypt
MIGRATOR=$build/vtl-migrator
. "$(dirname "$0")/vtld_env.sh"
. "$(dirname "$0")/migrator_env.sh"
. "$(dirname "$0")/daemon_env.sh"
need_built "$VTLD" "$VTLCTL" "$CLIENT" "$MIGRATOR"
vtld_env vtl-crypt
trap '[ -z "$mpid" ] || kill "$mpid" 2>/dev/null || true; [ -z "$pid" ] || kill "$pid" 2>/dev/null || true
	rm -rf "$tmp"' EXIT INT TERM
mlog=$tmp/migrator.log
iqn=iqn.2026-01.org.vtl:crypttest
vtld_library $iqn CRY0001
migrator_conf migrator.verify=no >>"$conf" || fail "the simulated library's configuration"
"$VTLCTL" -c "$conf" cartridge add --barcode C00001L8 --count 1 >/dev/null
marker="crypt-marker-$$-$(date +%s)"

step "vtld listens on 127.0.0.1:$port"
vtld_start
# client MODE: runs the host, showing its steps; fails the test with them if it fails.
client() {
	timeout 120 "$CLIENT" "127.0.0.1:$port" "$iqn" "$marker" "$1" >"$tmp/client" 2>&1 ||
		{ sed 's/^/   /' "$tmp/client"; [ ! -f "$mlog" ] || tail -20 "$mlog" >&2; fail "iscsi_crypt $1 failed"; }
	sed 's/^/   /' "$tmp/client"
}
step "a host encrypts what it writes, reads it back with the key, and cannot without it"
client write
step "no file of the pool holds the marker the host wrote"
if grep -rl -- "$marker" "$tmp/pool" >"$tmp/found" 2>/dev/null; then
	sed 's/^/   | /' "$tmp/found"
	fail "the marker is in the pool in plaintext"
fi
[ -n "$(find "$tmp/pool" -type f -size +500k)" ] || fail "no segment file holds the blocks written"
step "vtl-migrator copies the encrypted cartridge to physical tape and its disk copy is released"
migrator_start
ctl migrate C00001L8
job_ends "$(job_id)" done
ctl release C00001L8
[ "$(cache_of C00001L8)" = migrated ] || fail "C00001L8 is $(cache_of C00001L8) after the release, expected migrated"
step "the host loads it again: the recall brings it back and it reads back with the key"
client read
migrator_stop
vtld_stop
step "no file anywhere (pool, physical tapes, catalog, logs) holds the marker"
if grep -rl -- "$marker" "$tmp" >"$tmp/found" 2>/dev/null; then
	sed 's/^/   | /' "$tmp/found"
	fail "the marker is stored in plaintext"
fi
step "the catalog is consistent"
"$VTLCTL" -c "$conf" catalog check >"$tmp/check" 2>&1 || { sed 's/^/   | /' "$tmp/check"; fail "vtlctl catalog check failed"; }
echo "test_crypt: all steps passed"
