#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Logical block protection end to end, as a host that turns it on (Storage
# Protect's LBPROTECT) sees it: over iSCSI a host selects CRC32C with LBP_W
# and writes 4 MiB, each 256 KiB block with its CRC32C appended (a block
# with a wrong CRC is refused with HARDWARE ERROR 10h/01h); vtl-migrator
# copies the cartridge to a simulated LTO library and its disk copy is
# released; the host loads it again, which recalls it, and reads it under
# LBP_R: every block bit-exact and followed by the CRC the host computed.
# The CRC kept with each record went to the physical tape and came back.
#
# Usage: sh test_lbp.sh <build-dir>   (needs vtld, vtlctl, vtl-migrator, tests/integration/iscsi_recall)
set -eu

. "$(dirname "$0")/vtld_env.sh"
. "$(dirname "$0")/migrator_env.sh"
. "$(dirname "$0")/daemon_env.sh"
build=$(cd "${1:?usage: test_lbp.sh <build-dir>}" && pwd)
VTLD=$build/vtld
VTLCTL=$build/vtlctl
MIGRATOR=$build/vtl-migrator
HOST=$build/tests/integration/iscsi_recall
need_built "$VTLD" "$VTLCTL" "$MIGRATOR" "$HOST"

vtld_env vtl-lbp
trap '[ -z "$mpid" ] || kill "$mpid" 2>/dev/null || true
	[ -z "$pid" ] || kill "$pid" 2>/dev/null || true; rm -rf "$tmp"' EXIT INT TERM
iqn=iqn.2026-01.org.vtl:lbptest
vtld_library $iqn LBPL0001
mlog=$tmp/migrator.log
migrator_conf >>"$conf" || fail "the simulated library's configuration"
"$VTLCTL" -c "$conf" cartridge add --barcode P00001L8 >/dev/null
BLOCKS=16
DRIVE=257 # LUN 1
host() { # host MODE
	RECALL_LBP=1 timeout 120 "$HOST" "127.0.0.1:$port" "$iqn" "$1" 1025 $DRIVE 1 $BLOCKS 7 >"$tmp/host" 2>&1 ||
		{ cat "$tmp/host" >&2; cat "$mlog" >&2; fail "iscsi_recall $1 with logical block protection"; }
	sed 's/^/   | /' "$tmp/host"
}

step "vtld and vtl-migrator up; a host writes P00001L8 with LBP_W (CRC32C), a bad CRC is refused"
vtld_start
migrator_start
host write

step "P00001L8 is copied to physical tape and its disk copy released"
ctl migrate P00001L8
job_ends "$(job_id)" done
ctl release P00001L8
[ "$(cache_of P00001L8)" = migrated ] || fail "P00001L8 is not migrated"

step "the host loads it (recall) and reads it with LBP_R: every block with its CRC32C"
host read
grep -q "each with its CRC32C" "$tmp/host" || fail "the host did not check the CRCs"

migrator_stop
vtld_stop
step "ok"
