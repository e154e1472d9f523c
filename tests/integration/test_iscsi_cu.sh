#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# libiscsi's conformance suite, iscsi-test-cu, against the library: vtld on a
# free loopback port in a temporary folder, a cartridge loaded into drive 1,
# then the test families that apply to a tape drive or a medium changer (iSCSI
# protocol, INQUIRY, TEST UNIT READY, MODE SENSE, REPORT SUPPORTED OPERATION
# CODES, RESERVE(6)/RELEASE(6), PERSISTENT RESERVE IN/OUT) on LUN 0 (the
# changer) and LUN 1 (the loaded drive). Each test's outcome (pass, skip: it
# passed without checking what it is named for, fail) is compared with
# iscsi_cu_expected.txt beside this script: a test listed "pass" that no longer
# passes, or a "skip" that now fails, fails this script; a test that now does
# better than listed is reported so that the list can be raised. Why each test
# that does not pass cannot: docs/scsi-conformance.md, "iscsi-test-cu".
#
# iscsi-test-cu's setup insists on READ CAPACITY(10), which neither a tape
# drive nor a changer has: cu_shim.so (LD_PRELOAD) answers that one command.
#
# Usage: sh test_iscsi_cu.sh <build-dir>   (needs vtld, vtlctl, tests/integration/cu_shim.so; libiscsi-bin)
set -eu

here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:?usage: test_iscsi_cu.sh <build-dir>}" && pwd)
VTLD=$build/vtld
VTLCTL=$build/vtlctl
SHIM=$build/tests/integration/cu_shim.so
EXPECTED=$here/iscsi_cu_expected.txt
for x in "$VTLD" "$VTLCTL"; do
	[ -x "$x" ] || { echo "FAIL: $x is missing; build it with 'make'" >&2; exit 1; }
done
[ -f "$SHIM" ] || { echo "FAIL: $SHIM is missing; build it with 'make'" >&2; exit 1; }
command -v iscsi-test-cu >/dev/null || { echo "FAIL: iscsi-test-cu is missing (libiscsi-bin; scripts/install-deps)" >&2; exit 1; }

# The families that apply to a tape drive or a changer, as iscsi-test-cu -t takes them.
FAMILIES="iSCSI,SCSI.Inquiry,SCSI.TestUnitReady,SCSI.ModeSense6,SCSI.ReportSupportedOpcodes,SCSI.Reserve6,SCSI.Prin*,SCSI.Prout*"
# Seconds one LUN's run may take: about 20 s here, most of it libiscsi reconnecting after resets.
RUN_TIMEOUT=90
CHANGER_LUN=0
DRIVE_LUN=1
DRIVE_ELEMENT=257
BARCODE=C00001L8

. "$here/vtld_env.sh"
vtld_env vtl-iscsi-cu
iqn=iqn.2026-01.org.vtl:cu
vtld_library $iqn ISCSICU001
"$VTLCTL" -c "$conf" cartridge add --barcode $BARCODE --count 2 >/dev/null || fail "vtlctl cartridge add"

step "vtld listens on 127.0.0.1:$port"
vtld_start
step "vtlctl loads $BARCODE into drive $DRIVE_ELEMENT (LUN $DRIVE_LUN)"
"$VTLCTL" -c "$conf" load $BARCODE $DRIVE_ELEMENT >"$tmp/load" 2>&1 || fail "vtlctl load: $(cat "$tmp/load")"

# outcomes FILE: iscsi-test-cu's verbose output -> "SUITE.TEST pass|skip|fail" per test. A test
# passes on CUnit's "passed"; it is a skip when it passed after logging [SKIPPED] or [FAILED]
# (a command it needs was refused, so it checked nothing); a test without a verdict failed.
outcomes() {
	awk '
	function finish() {
		if (test == "") return
		print suite "." test " " (result == "" ? "fail" : (result == "pass" && skipped ? "skip" : result))
		test = ""
	}
	/^Suite: / { finish(); suite = $2; next }
	/^  Test: / { finish(); test = $2; result = ""; skipped = 0; sub(/^  Test: [^ ]+ \.\.\./, "") }
	test != "" && result == "" {
		if ($0 ~ /^passed/) result = "pass"
		else if ($0 ~ /^FAILED/) result = "fail"
		else if (index($0, "[SKIPPED]") || index($0, "[FAILED]")) skipped = 1
	}
	/^Run Summary:/ { finish() }
	END { finish() }' "$1"
}

for lun in $CHANGER_LUN $DRIVE_LUN; do
	step "iscsi-test-cu on LUN $lun"
	out=$tmp/cu$lun.out
	# iscsi-test-cu exits non-zero when any test failed; the comparison below is the verdict.
	# -d (dataloss): the tool sends no PERSISTENT RESERVE OUT without it. The only writes it
	# then allows in these families are SBC's WRITE(10..16), which a tape LUN refuses unread.
	LD_PRELOAD=$SHIM timeout $RUN_TIMEOUT iscsi-test-cu -d -t "$FAMILIES" \
		"iscsi://127.0.0.1:$port/$iqn/$lun" >"$out" 2>&1 || true
	grep -q "^Run Summary:" "$out" || { tail -20 "$out" | sed 's/^/   | /' >&2; fail "iscsi-test-cu did not run on LUN $lun"; }
	outcomes "$out" | sed "s/^/$lun /" >>"$tmp/got"
	kill -0 "$pid" 2>/dev/null || fail "vtld died during iscsi-test-cu on LUN $lun"
done

step "outcomes against $(basename "$EXPECTED")"
# Ranks: fail 0 < skip 1 < pass 2. Worse than listed is a regression; better is news.
awk '
function rank(o) { return o == "pass" ? 2 : o == "skip" ? 1 : 0 }
FILENAME == ARGV[1] { if ($0 !~ /^#/ && NF == 3) want[$1 " " $2] = $3; next }
{
	key = $1 " " $2; seen[key] = 1
	n[$3]++
	if (!(key in want)) { printf "   new    LUN %s %s: %s (not listed)\n", $1, $2, $3; next }
	if (rank($3) < rank(want[key])) { printf "   WORSE  LUN %s %s: %s, listed %s\n", $1, $2, $3, want[key]; bad++ }
	else if (rank($3) > rank(want[key])) printf "   better LUN %s %s: %s, listed %s: raise it in the list\n", $1, $2, $3, want[key]
}
END {
	for (key in want) if (!(key in seen) && want[key] != "fail") { split(key, k, " "); printf "   MISSING LUN %s %s: did not run, listed %s\n", k[1], k[2], want[key]; bad++ }
	printf "   outcomes: %d pass, %d skip, %d fail; %d worse than listed\n", n["pass"], n["skip"], n["fail"], bad
	exit bad > 0 ? 1 : 0
}' "$EXPECTED" "$tmp/got" >"$tmp/verdict" || {
	cat "$tmp/verdict"
	# What iscsi-test-cu printed for each test that did worse.
	grep -E '^   (WORSE|MISSING)' "$tmp/verdict" | while read -r _ _ lun name _; do
		suite=${name%%.*}
		test=${name#*.}
		test=${test%:}
		echo "   iscsi-test-cu on LUN $lun, $suite.$test:"
		awk -v s="$suite" -v t="$test" '
			/^Suite: / { in_suite = ($2 == s); on = 0 }
			/^  Test: / { on = in_suite && $2 == t }
			on' "$tmp/cu$lun.out" | sed 's/^/   | /'
	done
	fail "iscsi-test-cu: a test does worse than $(basename "$EXPECTED") lists"
}
cat "$tmp/verdict"

vtld_stop
echo "test_iscsi_cu: all steps passed"
