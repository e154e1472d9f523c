#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# vtlctl end to end, offline, in its own temporary folder: init, 20 cartridges
# added as a range, listings as tables and JSON, refused barcodes and exit
# codes, a trip through a mail slot (export, export --remove, import, move),
# remove with and without --force, then the catalog is deleted and rebuilt
# from the pool, and catalog check finds it consistent, then finds three
# disagreements made behind its back.
#
# Usage: sh test_vtlctl.sh <build-dir>   (needs <build-dir>/vtlctl; no root, no network)
set -eu

build=${1:?usage: test_vtlctl.sh <build-dir>}
VTLCTL=$(cd "$build" && pwd)/vtlctl
[ -x "$VTLCTL" ] || { echo "FAIL: $VTLCTL is missing; build it with 'make'" >&2; exit 1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/vtlctl-test.XXXXXX")
daemon=""
trap '[ -z "$daemon" ] || kill "$daemon" 2>/dev/null; rm -rf "$tmp"' EXIT INT TERM
conf=$tmp/etc/vtl.conf
out=$tmp/out
err=$tmp/err

step() { echo "-- $*"; }
fail() {
	echo "FAIL: $*" >&2
	echo "   stdout:" >&2; sed 's/^/   | /' "$out" >&2 2>/dev/null || true
	echo "   stderr:" >&2; sed 's/^/   | /' "$err" >&2 2>/dev/null || true
	exit 1
}
# vtl ARGS: runs vtlctl with the test's configuration; $rc, $out, $err hold what happened.
vtl() {
	set +e
	"$VTLCTL" -c "$conf" "$@" >"$out" 2>"$err"
	rc=$?
	set -e
}
# ok ARGS: vtlctl must succeed with nothing on stderr.
ok() {
	vtl "$@"
	[ "$rc" -eq 0 ] || fail "vtlctl $*: exit $rc, expected 0"
	[ ! -s "$err" ] || fail "vtlctl $*: succeeded but wrote to stderr"
}
# refused CODE PATTERN ARGS: vtlctl must exit CODE with one line on stderr that matches PATTERN.
refused() {
	code=$1 pattern=$2
	shift 2
	vtl "$@"
	[ "$rc" -eq "$code" ] || fail "vtlctl $*: exit $rc, expected $code"
	[ "$(wc -l <"$err")" -eq 1 ] || fail "vtlctl $*: expected one line on stderr"
	grep -q "^vtlctl: " "$err" || fail "vtlctl $*: the error does not start with 'vtlctl: '"
	grep -q -- "$pattern" "$err" || fail "vtlctl $*: the error does not say '$pattern'"
	echo "   refused as expected (exit $code): $(cat "$err")"
}
has() { grep -q -- "$1" "$out" || fail "output of the last command lacks '$1'"; }
lacks() { ! grep -q -- "$1" "$out" || fail "output of the last command has '$1'"; }
json_ok() {
	if [ -n "$PYTHON" ]; then
		"$PYTHON" -m json.tool <"$out" >/dev/null || fail "the output is not valid JSON"
	fi
}
PYTHON=$(command -v python3 || true)
[ -n "$PYTHON" ] || echo "   (python3 not found: the JSON documents are not validated, only grepped)"

step "write a configuration: 4 LTO-8 drives, 40 slots, 4 mail slots, a pool of 2 members"
mkdir -p "$tmp/etc"
cat >"$conf" <<'EOF'
# vtlctl integration test
[library]
name = itest
serial = ITEST0001
slots = 40
mail_slots = 4
drives = 4

[drive 4]
vendor = HP
model = Ultrium 8-SCSI

[pool]
member = ../pool/m0     # relative to this file's folder
member = ../pool/m1
segment_size = 1M

[catalog]
path = ../var/catalog.db

[daemon]
control_socket = ../var/vtld.sock
EOF

step "usage: help and exit codes"
ok --help
has "cartridge add"
ok help cartridge add
has "usage: vtlctl"
ok cartridge remove --help
has "force"
refused 2 "unknown command 'frobnicate'" frobnicate
refused 2 "unknown cartridge command 'eat'" cartridge eat
refused 2 "'cartridge' needs a subcommand" cartridge
refused 2 "unknown option '--bogus'" library show --bogus
vtl
[ "$rc" -eq 2 ] || fail "vtlctl with no command: exit $rc, expected 2"

step "init"
refused 1 "there is no catalog" library show
ok init
has "created catalog $tmp/var/catalog.db"
has "4 drives, 40 storage slots, 4 mail slots"
{ [ -d "$tmp/pool/m0" ] && [ -d "$tmp/pool/m1" ]; } || fail "init did not create the pool members"
[ -f "$tmp/var/catalog.db" ] || fail "init did not create the catalog"

step "a second init refuses"
refused 1 "exists already" init
refused 1 "exists already" init --catalog-only

step "library show, drive list, slot list"
ok library show
has "ITEST0001"
has "40 (1025..1064), 0 full"
has "4 (769..772), 0 full"
ok --json library show
json_ok
has '"name": "itest"'
ok drive list
has "ADDRESS"
[ "$(grep -c "online" "$out")" -eq 4 ] || fail "drive list: expected 4 drives"
[ "$(awk '$1 == 260 {print $3, $4, $5}' "$out")" = "HP Ultrium 8-SCSI" ] || fail "drive list: drive 260 is not the HP one"
ok slot list
[ "$(wc -l <"$out")" -eq 50 ] || fail "slot list: expected a header and 49 elements (1 + 4 + 4 + 40)"
ok slot list --type ie
[ "$(grep -c " ie " "$out")" -eq 4 ] || fail "slot list --type ie: expected 4 mail slots"
refused 2 "--type shelf" slot list --type shelf
VTL_CONFIG=$conf "$VTLCTL" drive list >"$out" 2>"$err" || fail "VTL_CONFIG is not used"

step "add 20 cartridges as a range"
ok cartridge add --barcode A00001L8 --to A00020L8
has "added 20 cartridges"
[ "$(awk '$1 == "A00020L8" {print $2, $3, $4, $5, $6}' "$out")" = "LTO8 12.0 TB slot 1044" ] ||
	fail "cartridge add: A00020L8 is not an LTO8 of 12.0 TB in slot 1044"

step "list them as a table"
ok cartridge list
[ "$(head -n 1 "$out" | awk '{print $1, $2, $3}')" = "BARCODE MEDIA CAPACITY" ] || fail "cartridge list: no header line"
[ "$(grep -c '^A000[0-2][0-9]L8 ' "$out")" -eq 20 ] || fail "cartridge list: expected 20 cartridges"
[ "$(awk '$1 == "A00007L8" {print $7, $8}' "$out")" = "slot 1031" ] || fail "cartridge list: A00007L8 is not in slot 1031"

step "list them as JSON"
ok --json cartridge list
json_ok
[ "$(grep -c '"barcode": "A000' "$out")" -eq 20 ] || fail "cartridge list --json: expected 20 cartridges"
has '"count": 20'
ok cartridge list --json
json_ok

step "barcodes and options that are refused"
refused 2 "is 7 characters; LTO labels are 6 characters plus a 2-character media suffix" cartridge add --barcode A0001L8
refused 2 "lower-case letter 'a'" cartridge add --barcode a00021L8
refused 2 "LTO-4 media (L4), older than this library emulates" cartridge add --barcode A00021L4
refused 2 "ends in 'Q8', which is not an LTO media identifier" cartridge add --barcode A00021Q8
refused 2 "does not match barcode A00021L8" cartridge add --barcode A00021L8 --media LTO8W
refused 2 "--media LTO10" cartridge add --barcode A00021L8 --media LTO10
refused 2 "--capacity 12Q" cartridge add --barcode A00021L8 --capacity 12Q
refused 2 "must differ only in the digits" cartridge add --barcode A00021L8 --to B00030L8
refused 2 "--count and --to exclude each other" cartridge add --barcode A00021L8 --count 2 --to A00022L8
refused 2 "which cartridge" cartridge add
refused 2 "option --barcode needs a value" cartridge add --barcode
refused 1 "cartridge A00001L8 is already in the catalog" cartridge add --barcode A00001L8
refused 1 "A00015L8 is already in the catalog" cartridge add --barcode A00015L8 --count 10
refused 1 "has 20 empty storage slots of 40; cannot add 21 cartridges" cartridge add --barcode C00001L8 --count 21
ok cartridge list
[ "$(grep -c 'L8 ' "$out")" -eq 20 ] || fail "a refused add left cartridges behind"
{ [ ! -e "$tmp/pool/m0/C00001L8" ] && [ ! -e "$tmp/pool/m1/C00001L8" ]; } || fail "a refused add left a cartridge in the pool"

step "a WORM cartridge, a Type M one and a cleaning cartridge with their media"
ok cartridge add W00001LY --media LTO8W
[ "$(awk '$1 == "W00001LY" {print $2, $3, $4, $5, $6}' "$out")" = "LTO8W 12.0 TB slot 1045" ] ||
	fail "W00001LY is not an LTO8W of 12.0 TB in slot 1045"
ok cartridge add --barcode M00001M8 --capacity 2.5T --slot 1064
[ "$(awk '$1 == "M00001M8" {print $2, $3, $4, $5, $6}' "$out")" = "LTO7M 2.5 TB slot 1064" ] ||
	fail "M00001M8 is not an LTO7M of 2.5 TB in slot 1064"
ok cartridge add CLN001CU
[ "$(awk '$1 == "CLN001CU" {print $2}' "$out")" = "CLN" ] || fail "CLN001CU is not a cleaning cartridge"
ok cartridge remove W00001LY M00001M8 CLN001CU
has "removed CLN001CU"

step "export through a mail slot, take it out, import it back, move it into its slot"
ok export A00005L8
has "exported A00005L8: slot 1029 -> mail slot 769"
ok cartridge show A00005L8
[ "$(awk '$1 == "location" {print $2, $3}' "$out")" = "ie 769" ] || fail "cartridge show: A00005L8 is not in ie 769"
ok slot list --type ie --full
[ "$(awk '$1 == 769 {print $4, $5, $6}' "$out")" = "full A00005L8 1029" ] || fail "slot list: mail slot 769 does not hold A00005L8 from 1029"
refused 1 "in mail slot 769 already; add --remove" export A00005L8
ok export A00005L8 --remove
has "mail slot 769 -> outside the library"
ok cartridge list
[ "$(awk '$1 == "A00005L8" {print $7}' "$out")" = "outside" ] || fail "A00005L8 is not outside after export --remove"
refused 1 "outside the library already" export A00005L8
ok import A00005L8
has "imported A00005L8: outside the library -> mail slot 769"
refused 1 "already in the library (mail slot 769)" import A00005L8
ok move 769 1029
has "moved A00005L8: mail slot 769 -> slot 1029"
ok --json cartridge show A00005L8
json_ok
has '"address": 1029'

step "moves that are refused"
refused 1 "slot 1030 already holds A00006L8" move 1029 1030
refused 1 "mail slot 770 is empty" move 770 1030
refused 1 "the library has no element 5000" move 1029 5000
refused 1 "is the robot" move 1029 1
refused 2 "FROM and TO are the same" move A00005L8 1029
refused 1 "there is no cartridge Z00001L8" move Z00001L8 1030
# A barcode is one word of a daemon's request: one that carries options is refused before anything is sent.
refused 2 "'A00005L8 drive 1' is not a barcode" migrate "A00005L8 drive 1"
refused 2 "'A00005L8 force' is not a barcode" release "A00005L8 force"
refused 2 "is not a barcode" verify "A00005L8 rate 1"

step "offline moves obey the library model's rules: a drive takes only media it reads"
ok import --new C00001L6
ok move C00001L6 1060
refused 1 "the LTO-8 drive at 258 (IBM ULT3580-TD8) cannot read C00001L6 (LTO-6); choose a drive" move C00001L6 258
ok cartridge show C00001L6
has "slot 1060"
ok import --new C00002L8
ok move C00002L8 258
ok move 258 1061
has "moved C00002L8: drive 258 -> slot 1061"
ok cartridge remove C00001L6 C00002L8

step "import a new cartridge, load it into a drive, remove it (refused, then --force)"
ok import --new B00001L8
has "imported new B00001L8: outside the library -> mail slot 769"
ok move B00001L8 257
ok drive list
[ "$(awk '$1 == 257 {print $3, $4, $5, $6, $NF}' "$out")" = "IBM ULT3580-TD8 8 ITEST0001D01 B00001L8" ] ||
	fail "drive list: drive 257 does not hold B00001L8"
refused 1 "cartridge B00001L8 is in drive 257" cartridge remove B00001L8
ok cartridge remove B00001L8 --force
has "removed B00001L8"
refused 1 "there is no cartridge B00001L8" cartridge show B00001L8
{ [ ! -e "$tmp/pool/m0/B00001L8" ] && [ ! -e "$tmp/pool/m1/B00001L8" ]; } || fail "remove --force left the pool files"
ok drive list
lacks "B00001L8"

step "events"
ok events
has "move A00005L8 from 769 to 1029"
has "remove B00001L8 (forced)"
ok --json events --limit 3
json_ok
[ "$(grep -c '"id":' "$out")" -eq 3 ] || fail "events --limit 3: expected 3 events"

step "with something answering on the control socket (vtld): offline changes are refused, moves go to it"
if [ -n "$PYTHON" ]; then
	# A listener that accepts and hangs up at once, as a vtld that is going away would.
	"$PYTHON" -c 'import socket, sys
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(4); s.settimeout(60)
open(sys.argv[2], "w").close()
while True:
    s.accept()[0].close()' "$tmp/var/vtld.sock" "$tmp/listening" &
	daemon=$!
	n=0
	while [ ! -e "$tmp/listening" ] && [ $n -lt 100 ]; do sleep 0.1 2>/dev/null || sleep 1; n=$((n + 1)); done
	refused 1 "vtld is running (it answers on $tmp/var/vtld.sock)" cartridge add C00001L8
	refused 1 "vtld did not answer" move 1029 1050 # this listener hangs up: nothing is moved
	ok cartridge list
	kill "$daemon"
	wait "$daemon" 2>/dev/null || true
	daemon=""
	rm -f "$tmp/var/vtld.sock"
	ok move 1029 1050
	ok move 1050 1029
else
	echo "   (python3 not found: skipped)"
fi

step "lose the catalog and rebuild it from the pool"
rm -f "$tmp/var/catalog.db" "$tmp/var/catalog.db-wal" "$tmp/var/catalog.db-shm"
refused 1 "init --catalog-only" cartridge list
refused 1 "the pool already holds 20 cartridges" init
ok init --catalog-only
has "the pool holds 20 cartridges"
ok cartridge list
[ "$(wc -l <"$out")" -eq 1 ] || fail "the recreated catalog is not empty"
ok catalog rebuild
has "rebuild: 20 cartridges in the pool: 20 added, 0 already in the catalog, 0 skipped, 0 failed"
ok cartridge list
i=1
while [ $i -le 20 ]; do
	bc=$(printf 'A%05dL8' $i)
	grep -q "^$bc  LTO8 .* slot " "$out" || fail "$bc is not back in a slot after the rebuild"
	i=$((i + 1))
done
[ "$(grep -c 'L8 ' "$out")" -eq 20 ] || fail "expected exactly 20 cartridges after the rebuild"
ok --json catalog rebuild
json_ok
has '"already_in_catalog": \['
[ "$(grep -c '"A000' "$out")" -eq 20 ] || fail "a second rebuild should find all 20 already there"

step "catalog check: the catalog against the pool"
ok catalog check
has "catalog check: 20 cartridges, the catalog and the pool agree"
ok --json catalog check
json_ok
has '"consistent": true'
if [ -n "$PYTHON" ]; then
	# Three disagreements made behind vtlctl's back: a row's end of data, a cartridge gone from the
	# pool, and one in the pool that the catalog does not know.
	"$PYTHON" -c 'import sqlite3, sys
db = sqlite3.connect(sys.argv[1]); db.execute("update cartridge set eod = 7 where barcode = ?", ("A00001L8",)); db.commit()' \
		"$tmp/var/catalog.db"
	home() { find "$tmp/pool" -mindepth 2 -maxdepth 2 -name "$1"; }
	rm -r "$(home A00002L8)"
	# On both members: the pool looks for a cartridge only on its home member.
	for m in m0 m1; do cp -r "$(home A00003L8)" "$tmp/pool/$m/A00099L8"; done
	refused 1 "catalog check: 3 problems" catalog check
	has "A00001L8: the catalog says end of data at object 7, the pool holds 0 objects"
	has "A00002L8: in the catalog, but the pool holds no cartridge of that name"
	has "A00099L8: in the pool, but the catalog has no row for it ('vtlctl catalog rebuild')"
	has "catalog check: 20 cartridges, problems found"
	lacks "A00003L8"
	refused 1 "catalog check: 3 problems" --json catalog check
	json_ok
	has '"consistent": false'
else
	echo "   (python3 not found: the disagreements are skipped)"
fi

echo "test_vtlctl: all steps passed"
