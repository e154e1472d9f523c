#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# The migrator's iSCSI physical library (migrator/phys_iscsi.c) against vtld
# playing the physical library: vtld on a free loopback port in a temporary
# folder, with two cartridges in slots, one in a mail slot and a small one
# (2 MB) in a slot; phys_iscsi_vtl then drives every phys_ops call and checks
# what comes back (see its header comment).
#
# Usage: sh test_phys_iscsi.sh <build-dir>   (needs vtld, vtlctl, tests/integration/phys_iscsi_vtl)
set -eu

build=$(cd "${1:?usage: test_phys_iscsi.sh <build-dir>}" && pwd)
VTLD=$build/vtld
VTLCTL=$build/vtlctl
CHECK=$build/tests/integration/phys_iscsi_vtl
for x in "$VTLD" "$VTLCTL" "$CHECK"; do
	[ -x "$x" ] || { echo "FAIL: $x is missing; build it with 'make'" >&2; exit 1; }
done

. "$(dirname "$0")/vtld_env.sh"
vtld_env vtl-phys-iscsi
iqn=iqn.2026-01.org.vtl:physlib
vtld_library $iqn PHYS0001
step "a library of 2 drives, 8 slots, 2 mail slots: P00001L8 P00002L8, M00001L8 in a mail slot, S00001L8 of 2 MB"
"$VTLCTL" -c "$conf" cartridge add --barcode P00001L8 --count 2 >/dev/null || fail "cartridge add P00001L8"
mail=$("$VTLCTL" -c "$conf" --json library show |
	python3 -c 'import json, sys; print(json.load(sys.stdin)["elements"]["mail_slots"]["first"])') ||
	fail "vtlctl library show: no mail slot address"
"$VTLCTL" -c "$conf" cartridge add --barcode M00001L8 --slot "$mail" >/dev/null || fail "cartridge add M00001L8 --slot $mail"
"$VTLCTL" -c "$conf" cartridge add --barcode S00001L8 --capacity 2M >/dev/null || fail "cartridge add S00001L8"

step "vtld listens on 127.0.0.1:$port"
vtld_start
step "phys_iscsi_vtl: every operation of the iSCSI physical library"
timeout 60 "$CHECK" "127.0.0.1:$port" "$iqn" >"$tmp/check" 2>&1 || { sed 's/^/   /' "$tmp/check"; fail "phys_iscsi_vtl failed"; }
sed 's/^/   /' "$tmp/check"
vtld_stop
echo "test_phys_iscsi: all steps passed"
