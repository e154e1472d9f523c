#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Tape data encryption end to end: vtld on a free loopback port in a
# temporary folder; the iscsi_crypt host sets a key with SECURITY PROTOCOL
# OUT, writes blocks that carry a marker, reads them back, and without the
# key gets DATA PROTECT 74h/01h; then no file of the pool holds the marker,
# and vtlctl's catalog check passes.
#
# Usage: sh test_crypt.sh <build-dir>   (needs vtld, vtlctl, tests/integration/iscsi_crypt)
set -eu

build=$(cd "${1:?usage: test_crypt.sh <build-dir>}" && pwd)
VTLD=$build/vtld
VTLCTL=$build/vtlctl
CLIENT=$build/tests/integration/iscsi_crypt
. "$(dirname "$0")/vtld_env.sh"
need_built "$VTLD" "$VTLCTL" "$CLIENT"
vtld_env vtl-crypt
iqn=iqn.2026-01.org.vtl:crypttest
vtld_library $iqn CRY0001
"$VTLCTL" -c "$conf" cartridge add --barcode C00001L8 --count 1 >/dev/null
marker="crypt-marker-$$-$(date +%s)"

step "vtld listens on 127.0.0.1:$port"
vtld_start
step "a host encrypts what it writes, reads it back with the key, and cannot without it"
timeout 120 "$CLIENT" "127.0.0.1:$port" "$iqn" "$marker" >"$tmp/client" 2>&1 || { sed 's/^/   /' "$tmp/client"; fail "iscsi_crypt failed"; }
sed 's/^/   /' "$tmp/client"
vtld_stop
step "no file of the pool holds the marker the host wrote"
if grep -rl -- "$marker" "$tmp/pool" >"$tmp/found" 2>/dev/null; then
	sed 's/^/   | /' "$tmp/found"
	fail "the marker is in the pool in plaintext"
fi
[ -n "$(find "$tmp/pool" -type f -size +500k)" ] || fail "no segment file holds the blocks written"
step "the catalog is consistent"
"$VTLCTL" -c "$conf" catalog check >"$tmp/check" 2>&1 || { sed 's/^/   | /' "$tmp/check"; fail "vtlctl catalog check failed"; }
echo "test_crypt: all steps passed"
