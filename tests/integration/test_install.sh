#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# make install / make uninstall into a temporary DESTDIR: the installed files are the list of
# docs/install.md; every manual page renders without a warning, vtl.conf(5) names every key of the
# parser's table and vtlctl(8) every command of vtlctl's; the installed vtld serves the installed
# configuration (its paths moved under the temporary root) and the installed vtlctl talks to it;
# uninstall leaves no file behind; with the example's [physical] section uncommented, the installed
# vtl-migrator runs beside it and vtlctl reload asks both. The installed systemd units pass systemd-analyze verify (their
# binaries and manual pages those of the temporary root) and name the state and socket folders the
# installed configuration uses; a PREFIX without /var and /run installs no unit.
# (sysconfdir=/etc there too: the programs are not rebuilt for another one.) Writes nowhere outside its temporary folder (and <build-dir>).
#
# Usage: sh test_install.sh <build-dir>
set -eu
build=${1:?usage: test_install.sh <build-dir>}
top=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/install-test.XXXXXX")
pid="" mpid=""
trap '[ -z "$pid" ] || kill "$pid" 2>/dev/null; [ -z "$mpid" ] || kill "$mpid" 2>/dev/null; rm -rf "$tmp"' EXIT INT TERM
root=$tmp/root
step() { echo "-- $*"; }
fail() { echo "FAIL: $*" >&2; [ ! -e "$tmp/vtld.log" ] || tail -20 "$tmp/vtld.log" >&2; exit 1; }
mk() { make -s --no-print-directory -C "$top" BUILD="$build" DESTDIR="$root" PREFIX=/usr "$@"; }

step "make install DESTDIR=... PREFIX=/usr installs the files docs/install.md lists"
mk install >"$tmp/make.log" 2>&1 || { cat "$tmp/make.log" >&2; fail "make install failed"; }
(cd "$root" && find . -type f | sed 's|^\.||' | sort) >"$tmp/got"
sed -n '/^<!-- installed files -->/,/^<!-- end -->/s/^- `\(.*\)`$/\1/p' "$top/docs/install.md" | sort >"$tmp/want"
[ -s "$tmp/want" ] || fail "docs/install.md lists no installed file"
diff "$tmp/want" "$tmp/got" >"$tmp/diff" || { cat "$tmp/diff" >&2; fail "installed files differ from docs/install.md (< docs, > installed)"; }

step "systemd-analyze verify accepts the installed units, as installed"
units=$root/lib/systemd/system
for u in vtld vtl-migrator; do
	[ -f "$units/$u.service" ] || fail "no $u.service installed"
	grep -q "^ExecStart=/usr/sbin/$u -c /etc/vtl/vtl.conf\$" "$units/$u.service" || fail "$u.service does not start /usr/sbin/$u -c /etc/vtl/vtl.conf"
done
if command -v systemd-analyze >/dev/null; then
	# verify needs ExecStart's program to exist and runs man on Documentation=: the root's copies.
	mkdir -p "$tmp/verify"
	for u in vtld vtl-migrator; do
		sed "s|^ExecStart=/usr/sbin/|ExecStart=$root/usr/sbin/|" "$units/$u.service" >"$tmp/verify/$u.service"
	done
	out=$(cd "$tmp/verify" && MANPATH=$root/usr/share/man systemd-analyze verify vtld.service vtl-migrator.service 2>&1) ||
		fail "systemd-analyze verify: $out"
	[ -z "$out" ] || fail "systemd-analyze verify warns: $out"
	# The check itself: a wrong key must make it speak.
	printf '[Service]\nTypo=1\n' >>"$tmp/verify/vtld.service"
	out=$(cd "$tmp/verify" && MANPATH=$root/usr/share/man systemd-analyze verify vtld.service 2>&1) || :
	[ -n "$out" ] || fail "systemd-analyze verify says nothing of an unknown key: the check above proves nothing"
else
	echo "   (systemd-analyze not installed: verify skipped)"
fi

step "the installed config keeps its state and sockets where the units' StateDirectory and RuntimeDirectory are"
conf=$root/etc/vtl/vtl.conf
for u in vtld vtl-migrator; do
	grep -qx "StateDirectory=vtl" "$units/$u.service" || fail "$u.service: no StateDirectory=vtl"
	grep -qx "RuntimeDirectory=vtl" "$units/$u.service" || fail "$u.service: no RuntimeDirectory=vtl"
	grep -qx "User=vtl" "$units/$u.service" || fail "$u.service: not User=vtl"
done
grep -q "^u vtl " "$root/usr/lib/sysusers.d/vtl.conf" || fail "sysusers.d/vtl.conf makes no vtl user"
for k in member path; do
	if grep "^$k = " "$conf" | grep -qv "^$k = /var/lib/vtl/"; then fail "the installed config's $k is not under /var/lib/vtl"; fi
done
for s in vtld migrator; do
	grep -q "^control_socket = /run/vtl/$s.sock" "$conf" || fail "the installed config's $s control socket is not /run/vtl/$s.sock"
done

step "every manual page renders without warnings"
for p in "$root"/usr/share/man/man*/*; do
	w=$(MANWIDTH=80 man --warnings -l "$p" 2>&1 >/dev/null) || fail "man -l $p failed"
	[ -z "$w" ] || fail "man -l $p warns: $w"
done

step "vtl.conf(5) names every key of the parser, vtlctl(8) every command"
page=$(MANWIDTH=200 man -l "$root/usr/share/man/man5/vtl.conf.5" 2>/dev/null)
for k in $(sed -n 's/^	{SEC_[A-Z]*, "\([a-z_]*\)".*/\1/p' "$top/config/config.c" | sort -u); do
	printf '%s\n' "$page" | grep -Eq "^ *([a-z_]+, )*$k(, [a-z_]+)* \(default" || fail "vtl.conf(5) lacks the key $k"
done
page=$(MANWIDTH=300 man -l "$root/usr/share/man/man8/vtlctl.8" 2>/dev/null)
sed -n 's/^	{"\([a-z ]*\)",.*/\1/p' "$top/vtl/ctl/main.c" >"$tmp/cmds"
[ -s "$tmp/cmds" ] || fail "no command found in vtl/ctl/main.c"
while read -r c; do
	printf '%s\n' "$page" | grep -q "^ *$c\( \|$\)" || fail "vtlctl(8) lacks the command '$c'"
done <"$tmp/cmds"

step "bash completes vtlctl's commands and options from the installed vtlctl"
if command -v bash >/dev/null; then
	got=$(PATH=$root/usr/bin:$PATH bash -c '
		. "$1"
		t() { COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _vtlctl; echo "${COMPREPLY[*]}"; }
		t vtlctl ca; t vtlctl cartridge ""; t vtlctl reload --; t vtlctl -c x cartridge add --b' \
		sh "$root/usr/share/bash-completion/completions/vtlctl")
	want="cancel cartridge catalog
add list show remove
--config --help --json --migrator --vtld
--barcode"
	[ "$got" = "$want" ] || fail "bash completion gave:
$got
expected:
$want"
else
	echo "   (bash not installed: completion not checked)"
fi

step "the installed vtld serves the installed config and vtlctl reaches it without -c"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
mkdir -p -m 0700 "$root/run/vtl"
sed -i -e "s|/var/lib/vtl|$root/var/lib/vtl|" -e "s|/run/vtl|$root/run/vtl|" -e "s|^port = .*|port = $port|" "$conf"
grep -q "^member = $root/var/lib/vtl/pool/m0" "$conf" || fail "the installed config's pool is not under /var/lib/vtl"
VTL_CONFIG=$conf "$root/usr/bin/vtlctl" init >"$tmp/init" 2>&1 || { cat "$tmp/init" >&2; fail "vtlctl init failed"; }
"$root/usr/sbin/vtld" -c "$conf" 2>"$tmp/vtld.log" &
pid=$!
i=0
until VTL_CONFIG=$conf "$root/usr/bin/vtlctl" status >"$tmp/status" 2>&1; do
	i=$((i + 1)); [ "$i" -le 100 ] || fail "vtlctl status never reached vtld: $(cat "$tmp/status")"
	kill -0 "$pid" 2>/dev/null || fail "the installed vtld exited"
	sleep 0.1
done

step "with the example's [physical] section, the installed vtl-migrator runs too; vtlctl reload asks both"
cp "$conf" "$tmp/conf.before"
sed -i -e '/^# \[physical\]$/,/^# data_dir/s/^# //' "$conf"
grep -q "^data_dir = $root/var/lib/vtl/physical" "$conf" || fail "the example's [physical] does not keep its tapes under /var/lib/vtl"
"$root/usr/sbin/vtl-migrator" -c "$conf" 2>"$tmp/migrator.log" &
mpid=$!
i=0
until grep -q "ready: copies go to simlib" "$tmp/migrator.log"; do
	i=$((i + 1)); [ "$i" -le 100 ] || { cat "$tmp/migrator.log" >&2; fail "the installed vtl-migrator did not start"; }
	kill -0 "$mpid" 2>/dev/null || { cat "$tmp/migrator.log" >&2; fail "the installed vtl-migrator exited"; }
	sleep 0.1
done
VTL_CONFIG=$conf "$root/usr/bin/vtlctl" reload >"$tmp/reload" 2>&1 || { cat "$tmp/reload" >&2; fail "vtlctl reload failed"; }
grep -q "^vtld: reload: nothing this daemon reads changed" "$tmp/reload" &&
	grep -q "^vtl-migrator: reload: nothing this daemon reads changed" "$tmp/reload" ||
	{ cat "$tmp/reload" >&2; fail "vtlctl reload did not ask both daemons"; }
kill "$mpid"; wait "$mpid" || { cat "$tmp/migrator.log" >&2; fail "vtl-migrator did not stop cleanly"; }; mpid=""
cp "$tmp/conf.before" "$conf"
kill "$pid"; wait "$pid" || fail "vtld did not stop cleanly"; pid=""
rm -rf "$root/var/lib/vtl"/* "$root/run"
sed -i -e "s|$root||" -e "s|^port = .*|port = 3260|" "$conf"

step "make uninstall leaves no file behind"
mk uninstall >"$tmp/make.log" 2>&1 || { cat "$tmp/make.log" >&2; fail "make uninstall failed"; }
left=$(cd "$root" && find . -type f)
[ -z "$left" ] || fail "uninstall left: $left"

step "a PREFIX whose state is not under /var and /run installs no systemd unit, and says so"
rm -rf "$root"
make -s --no-print-directory -C "$top" BUILD="$build" DESTDIR="$root" PREFIX=/opt/vtl sysconfdir=/etc install >"$tmp/make.log" 2>&1 ||
	{ cat "$tmp/make.log" >&2; fail "make install PREFIX=/opt/vtl failed"; }
grep -q "systemd units not installed" "$tmp/make.log" || fail "make install PREFIX=/opt/vtl does not say the units were left out"
[ -z "$(cd "$root" && find . -name '*.service')" ] || fail "PREFIX=/opt/vtl sysconfdir=/etc installed a unit"
make -s --no-print-directory -C "$top" BUILD="$build" DESTDIR="$root" PREFIX=/opt/vtl sysconfdir=/etc uninstall >"$tmp/make.log" 2>&1 ||
	{ cat "$tmp/make.log" >&2; fail "make uninstall PREFIX=/opt/vtl failed"; }
left=$(cd "$root" && find . -type f)
[ -z "$left" ] || fail "uninstall PREFIX=/opt/vtl left: $left"
echo "PASS: test_install"
