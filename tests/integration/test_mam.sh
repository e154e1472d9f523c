#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# MAM as a host keeps it across loads and restarts: vtld on a free loopback
# port in a temporary folder; the iscsi_mam host loads a cartridge, sets two
# host attributes with WRITE ATTRIBUTE and clears one again, and unloads it;
# vtld restarts; the host loads it again and READ ATTRIBUTE gives back the
# one set, not the one cleared, and a LOAD COUNT of 2. vtlctl's catalog
# check passes afterwards.
#
# Usage: sh test_mam.sh <build-dir>   (needs vtld, vtlctl, tests/integration/iscsi_mam)
set -eu

build=$(cd "${1:?usage: test_mam.sh <build-dir>}" && pwd)
VTLD=$build/vtld
VTLCTL=$build/vtlctl
CLIENT=$build/tests/integration/iscsi_mam
. "$(dirname "$0")/vtld_env.sh"
need_built "$VTLD" "$VTLCTL" "$CLIENT"
vtld_env vtl-mam
iqn=iqn.2026-01.org.vtl:mamtest
vtld_library $iqn MAM0001
"$VTLCTL" -c "$conf" cartridge add --barcode M00001L8 --count 2 >/dev/null

# client MODE: runs the host, showing its steps; fails the test with them if it fails.
client() {
	timeout 120 "$CLIENT" "127.0.0.1:$port" "$iqn" "$1" >"$tmp/client" 2>&1 || { sed 's/^/   /' "$tmp/client"; fail "iscsi_mam $1 failed"; }
	sed 's/^/   /' "$tmp/client"
}
step "vtld listens on 127.0.0.1:$port"
vtld_start
step "a host sets and clears attributes of a cartridge, and unloads it"
client write
step "vtld restarts"
vtld_stop
vtld_start
step "the host loads it again: what it set is there, what it cleared is not, LOAD COUNT is 2"
client check
vtld_stop
step "the catalog is consistent"
"$VTLCTL" -c "$conf" catalog check >"$tmp/check" 2>&1 || { sed 's/^/   | /' "$tmp/check"; fail "vtlctl catalog check failed"; }
echo "test_mam: all steps passed"
