#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# kill -9 of vtl-migrator (issue 17): no cartridge loses its only good copy,
# nothing is marked good that is not. vtld serves a library on a free
# loopback port; vtl-migrator copies to a simulated LTO library whose tapes
# are files (so a killed migrator restarts on the same tapes), slowed to 16 MB/s
# (a 1 MiB drive buffer) with load and locate times, so that each step takes a moment. Each
# trial (tests/integration/migrator_kill.py), on one of three cartridges in
# turn, has a host (iscsi_recall) write 4 MiB of known content from BOT, then
# SIGKILLs vtl-migrator by its PID at a random moment of
#   (a) the copy (vtlctl migrate: copy, verify, record, premigrated),
#   (b) the release of the premigrated cartridge (vtlctl release),
#   (c) the recall a host's load of the migrated cartridge starts (the host
#       reads it back through the stage);
# after each kill it checks the catalog as the crash left it, starts the
# migrator again, lets the interrupted job run again (or queues the copy or
# the release again) and checks again: a migrated or recalling cartridge has
# a good copy; a premigrated or resident one has its whole disk copy (objects
# and stored bytes as written; read back byte for byte by the host after (b)
# when it was not released); every good copy verifies (a verify job ends
# done) and the host's read through the recall is bit-exact; no job is left
# queued or running. Then both daemons stop cleanly, and `vtlctl catalog
# check` (where vtlctl has it) finds the catalog and the pool in agreement.
#
# What this models: a crash of the migrator process. The kernel and its page
# cache survive; a power cut is the kernel tier's job (docs/testing.md).
#
# Usage: sh test_migrator_kill.sh <build-dir> [TRIALS]   (TRIALS: default $VTL_MIGKILL_TRIALS or 10)
# Environment: VTL_MIGKILL_SEED (repeats the kill moments of a run: printed).
# Prints a line per trial, then exactly "N passed, M failed"; exits 1 if M > 0.
set -eu

. "$(dirname "$0")/vtld_env.sh"
. "$(dirname "$0")/daemon_env.sh"
build=$(cd "${1:?usage: test_migrator_kill.sh <build-dir> [TRIALS]}" && pwd)
trials=${2:-${VTL_MIGKILL_TRIALS:-10}}
VTLD=$build/vtld
VTLCTL=$build/vtlctl
MIGRATOR=$build/vtl-migrator
HOST=$build/tests/integration/iscsi_recall
need_built "$VTLD" "$VTLCTL" "$MIGRATOR" "$HOST"
case $trials in '' | *[!0-9]*) echo "FAIL: TRIALS must be a number, not '$trials'" >&2; exit 1 ;; esac
seed=${VTL_MIGKILL_SEED:-$(date +%s)}
case $seed in '' | *[!0-9]*) echo "FAIL: VTL_MIGKILL_SEED must be a number" >&2; exit 1 ;; esac

vtld_env vtl-migkill
# The driver stops the migrator it started; this trap stops vtld by its PID.
trap '[ -z "$pid" ] || kill "$pid" 2>/dev/null || true; rm -rf "$tmp"' EXIT INT TERM
iqn=iqn.2026-01.org.vtl:migkilltest
vtld_library $iqn MKIL0001
mlog=$tmp/migrator.log
# Small segments: a release deletes about 17 files, so a kill can fall between them.
sed -i 's|^member = ../pool/m0$|member = ../pool/m0\nsegment_size = 256K|' "$conf"
# A tape for each cartridge; the drive slowed to 16 MB/s behind a 1 MiB buffer, with load and locate times.
migrator_conf physical.tapes=3 physical.tape_capacity=2G physical.rate=16 physical.load_ms=100 physical.locate_ms=50 \
	physical.drive_buffer=1M >>"$conf" || fail "the simulated library's configuration"
"$VTLCTL" -c "$conf" cartridge add --barcode K00001L8 --count 3 >/dev/null
BLOCKS=16   # 4 MiB
DRIVE=257   # LUN 1
# The kill moments (s) are drawn from 0 to a little more than each step takes here (a copy and its
# read-back about 0.75 s from vtlctl migrate, a release about 20 ms from vtlctl release, most of it
# reading the disk copy for its digest before the catalog change, a recall about 0.33 s from the
# host's start), so that most land inside it and some just after.
KILL_BY=0.85,0.03,0.4

step "vtld up; $trials trials of SIGKILL of vtl-migrator during a copy, a release, a recall (seed $seed)"
vtld_start
st=0
python3 "$(dirname "$0")/migrator_kill.py" "$VTLCTL" "$MIGRATOR" "$HOST" "$conf" "$port" "$iqn" "$tmp" "$mlog" \
	$BLOCKS $DRIVE 1 "$trials" "$seed" K00001L8:1025,K00002L8:1026,K00003L8:1027 "$KILL_BY" || st=$?
if [ "$st" -ne 0 ]; then
	echo "   migrator log:" >&2
	tail -30 "$mlog" | sed 's/^/   | /' >&2
fi
vtld_stop

step "catalog check, both daemons stopped"
if "$VTLCTL" -c "$conf" catalog check >"$tmp/out" 2>&1; then
	sed 's/^/   | /' "$tmp/out"
elif grep -q "unknown catalog command 'check'" "$tmp/out"; then
	echo "   (this vtlctl has no 'catalog check': skipped)"
else
	sed 's/^/   | /' "$tmp/out"
	fail "vtlctl catalog check found problems"
fi
[ "$st" -eq 0 ] || exit 1
echo "test_migrator_kill: all steps passed"
