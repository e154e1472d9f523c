#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# The HTTP endpoints of vtld ([daemon] http) and vtl-migrator ([migrator]
# http) on free loopback ports, checked by a real Prometheus:
#   - a host (iscsi_hosts write) writes 10 blocks of 64 KiB to I00002L8;
#     /metrics of both daemons passes `promtool check metrics`; read back
#     with the page cache dropped, the drive's read-ahead counts bytes read
#     past it (O_DIRECT, where the pool's file system serves it);
#   - a prometheus started here (its storage in the temporary folder, a
#     scrape every second) scrapes both; PromQL through its HTTP API finds
#     the drive's bytes written grown by exactly what the host wrote, the
#     cartridge on the drive's info series, and, after a copy to the
#     simulated library, the migrator's drive bytes and its done job, and
#     after a release and a recall, the recall's time to first block;
#   - /api/status, /api/jobs (of both daemons), /api/library, /api/elements,
#     /api/drives, /api/cartridges[/BARCODE] and /api/events are the
#     documents `vtlctl --json status`, `jobs`, `library show`, `slot list`,
#     `drive list`, `cartridge list` and `cartridge show`, `events` print; a POST is 405, a body 413, an unknown
#     page 404, a long target 414; a non-loopback address without
#     http_token is refused at the start.
# Skips (loudly) only when prometheus or promtool is not installed: scripts/install-deps installs them.
#
# Usage: sh test_metrics.sh <build-dir>   (needs vtld, vtlctl, vtl-migrator, tests/integration/iscsi_hosts)
set -eu

build=$(cd "${1:?usage: test_metrics.sh <build-dir>}" && pwd)
VTLD=$build/vtld
VTLCTL=$build/vtlctl
MIGRATOR=$build/vtl-migrator
HOSTS=$build/tests/integration/iscsi_hosts
. "$(dirname "$0")/vtld_env.sh"
. "$(dirname "$0")/daemon_env.sh"
. "$(dirname "$0")/migrator_env.sh"
need_built "$VTLD" "$VTLCTL" "$MIGRATOR" "$HOSTS"
for x in prometheus promtool curl; do
	if ! command -v $x >/dev/null 2>&1; then
		echo "SKIP: test_metrics.sh: $x is not installed (scripts/install-deps installs it): the metrics were NOT checked" >&2
		exit 0
	fi
done

vtld_env vtl-metrics
ppid_prom=""
trap '[ -z "$ppid_prom" ] || kill "$ppid_prom" 2>/dev/null || true; [ -z "$mpid" ] || kill "$mpid" 2>/dev/null || true
	[ -z "$pid" ] || kill "$pid" 2>/dev/null || true; rm -rf "$tmp"' EXIT INT TERM
hport=$(free_port)
mport=$(free_port)
pport=$(free_port)
iqn=iqn.2026-01.org.vtl:metrics
vtld_library $iqn METR0001
mlog=$tmp/migrator.log
printf '\n[daemon]\nhttp = 127.0.0.1:%s\n' "$hport" >>"$conf"
migrator_conf physical.drives=2 migrator.http=127.0.0.1:$mport >>"$conf" || fail "migrator_conf"
"$VTLCTL" -c "$conf" cartridge add --barcode I00001L8 --count 3 >/dev/null
vurl=http://127.0.0.1:$hport
murl=http://127.0.0.1:$mport

# promql QUERY: the value of the query's first series through prometheus's HTTP API ("" when none).
promql() {
	curl -sf "http://127.0.0.1:$pport/api/v1/query" --data-urlencode "query=$1" | python3 -c 'import json, sys
r = json.load(sys.stdin)["data"]["result"]
print(r[0]["value"][1] if r else "")'
}
# status URL PATH [CURL-ARGS]: the HTTP status of a request.
status() {
	u=$1$2
	shift 2
	curl -s -o /dev/null -w '%{http_code}' "$@" "$u"
}

step "vtld and vtl-migrator serve /metrics on loopback ports $hport and $mport"
vtld_start
migrator_start
grep -q "http: the console (/), /metrics and /api/status, /api/library, /api/elements, /api/drives, /api/cartridges\[/BARCODE\], /api/events, /api/jobs on 127.0.0.1:$hport" "$log" || fail "vtld did not log its HTTP endpoint"
before=$(metric "$vurl" vtl_drive_host_written_bytes_total 'drive="258",lun="2"')
[ "$before" = 0 ] || fail "drive 258 has written $before bytes before any host wrote (want 0)"

step "prometheus scrapes both every second, its storage in the temporary folder"
cat >"$tmp/prometheus.yml" <<YML
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: vtld
    static_configs:
      - targets: ['127.0.0.1:$hport']
  - job_name: vtl-migrator
    static_configs:
      - targets: ['127.0.0.1:$mport']
YML
promtool check config "$tmp/prometheus.yml" >"$tmp/promtool" 2>&1 || { cat "$tmp/promtool" >&2; fail "promtool check config"; }
prometheus --config.file="$tmp/prometheus.yml" --storage.tsdb.path="$tmp/prom" \
	--web.listen-address="127.0.0.1:$pport" >"$tmp/prometheus.log" 2>&1 &
ppid_prom=$!
# up == 1 for both targets: prometheus scraped each at least once.
scraped() {
	[ "$(promql "sum(up{job=~\"vtld|vtl-migrator\"})")" = 2 ]
}
i=0
until scraped 2>/dev/null; do
	i=$((i + 1))
	[ "$i" -le 300 ] || { tail -20 "$tmp/prometheus.log" >&2; fail "prometheus did not scrape both daemons within 30 s"; }
	kill -0 "$ppid_prom" 2>/dev/null || { tail -20 "$tmp/prometheus.log" >&2; fail "prometheus exited"; }
	sleep 0.1
done
echo "   prometheus (pid $ppid_prom) scraped vtld and vtl-migrator"

# direct_gauge METRIC AFTER WHAT: drive 258's METRIC is above 0 where the pool's file system serves
# O_DIRECT (and 0 where it refuses it); AFTER and WHAT word the messages.
direct_gauge() {
	v=$(metric "$vurl" "$1" 'drive="258",lun="2"')
	seg=$(find "$tmp/pool" -name '*.seg' | head -n 1)
	if dd if="$seg" of=/dev/null bs=4096 count=1 iflag=direct 2>/dev/null; then
		[ "${v:-0}" -gt 0 ] || fail "$1 of drive 258 is ${v:-absent} $2"
		echo "   $v $3"
	else
		[ "${v:-0}" = 0 ] || fail "the pool's file system refuses O_DIRECT, yet $1 is $v"
		echo "   the pool's file system refuses O_DIRECT: through the page cache ($1 0)"
	fi
}

step "a host writes 10 blocks of 64 KiB to I00002L8 in drive 258"
timeout 120 "$HOSTS" "127.0.0.1:$port" "$iqn" write >"$tmp/hosts" 2>&1 || { cat "$tmp/hosts" >&2; fail "iscsi_hosts write"; }
written=655360
after=$(metric "$vurl" vtl_drive_host_written_bytes_total 'drive="258",lun="2"')
[ "$after" = "$written" ] || fail "vtl_drive_host_written_bytes_total of drive 258 is $after after the host wrote $written bytes"
[ "$(metric "$vurl" vtl_drive_load_written_bytes 'drive="258",lun="2"')" = "$written" ] ||
	fail "vtl_drive_load_written_bytes of drive 258 is not $written"
# 64 KiB blocks are above [pool] write_direct's 60 KiB: written past the page cache where the disk allows it.
# [pool] write_direct is off by default (docs/configuration.md): nothing written past the page cache.
wdirect=$(metric "$vurl" vtl_drive_load_write_direct_bytes 'drive="258",lun="2"')
[ "$wdirect" = 0 ] || fail "vtl_drive_load_write_direct_bytes of drive 258 is ${wdirect:-absent}, with write_direct off"
curl -sf "$vurl/metrics" >"$tmp/vtld.prom" || fail "GET /metrics of vtld"
grep -q '^vtl_drive_info{drive="258",lun="2",state="loaded",barcode="I00002L8"} 1$' "$tmp/vtld.prom" ||
	fail "vtld's /metrics does not show I00002L8 loaded in drive 258"
# vtld answers the Logout before it ends the session: wait for the count to reach 0 (10 s at most).
i=0
until [ "$(metric "$vurl" vtl_iscsi_sessions)" = 0 ]; do
	i=$((i + 1))
	[ "$i" -le 100 ] || fail "the host logged out 10 s ago, yet vtl_iscsi_sessions is not 0"
	sleep 0.1
done
grep -q '^vtl_cartridges{cache="resident"} 3$' "$tmp/vtld.prom" || fail "vtl_cartridges does not count 3 resident cartridges"

step "read back cold: the read-ahead reads past the page cache"
# The cartridge's files dropped from the page cache (synced first), then read back by a host.
find "$tmp/pool" -name '*.seg' -exec python3 -c '
import os, sys
for p in sys.argv[1:]:
    fd = os.open(p, os.O_RDONLY)
    os.fdatasync(fd)
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    os.close(fd)' {} +
timeout 120 "$HOSTS" "127.0.0.1:$port" "$iqn" check >"$tmp/hosts" 2>&1 || { cat "$tmp/hosts" >&2; fail "iscsi_hosts check"; }
direct_gauge vtl_drive_load_read_direct_bytes "after a cold read back" "stored bytes read ahead past the page cache"

step "promtool check metrics passes on both expositions"
promtool check metrics <"$tmp/vtld.prom" >"$tmp/promtool" 2>&1 || { cat "$tmp/promtool" >&2; fail "promtool check metrics on vtld's /metrics"; }
curl -sf "$murl/metrics" >"$tmp/migrator.prom" || fail "GET /metrics of vtl-migrator"
promtool check metrics <"$tmp/migrator.prom" >"$tmp/promtool" 2>&1 ||
	{ cat "$tmp/promtool" >&2; fail "promtool check metrics on vtl-migrator's /metrics"; }
echo "   $(grep -c '^# TYPE' "$tmp/vtld.prom") families from vtld, $(grep -c '^# TYPE' "$tmp/migrator.prom") from vtl-migrator"

step "PromQL: drive 258's bytes written grew by what the host wrote"
q='vtl_drive_host_written_bytes_total{job="vtld",drive="258"}'
i=0
until [ "$(promql "$q")" = "$written" ]; do
	i=$((i + 1))
	[ "$i" -le 100 ] || fail "prometheus has $q = $(promql "$q"), not $written, 10 s after the write"
	sleep 0.1
done
grew=$(promql "max_over_time($q[1m]) - min_over_time($q[1m])")
[ "$grew" = "$written" ] || fail "over the last minute $q grew by $grew, not $written"
[ "$(promql 'vtl_drive_info{job="vtld",drive="258",barcode="I00002L8",state="loaded"}')" = 1 ] ||
	fail "prometheus has no info series of drive 258 with I00002L8 loaded"
echo "   $q grew by $grew bytes"

step "the migrator copies I00002L8; PromQL finds its drive's bytes and the done job"
ctl unload 258
ctl migrate I00002L8
job_ends "$(job_id)" done
copied=$(metric "$murl" vtl_migrator_jobs 'kind="migrate",state="done"')
[ "$copied" = 1 ] || fail "vtl-migrator's /metrics counts $copied done copies, not 1"
i=0
until [ "$(promql 'sum(vtl_migrator_jobs{job="vtl-migrator",kind="migrate",state="done"})')" = 1 ]; do
	i=$((i + 1))
	[ "$i" -le 100 ] || fail "prometheus does not see the done copy 10 s after it ended"
	sleep 0.1
done
moved=$(promql 'sum(vtl_migrator_drive_bytes_total{job="vtl-migrator",library="simlib"})')
python3 -c 'import sys; sys.exit(0 if float(sys.argv[1]) >= float(sys.argv[2]) else 1)' "${moved:-0}" "$written" ||
	fail "the migrator's drives copied ${moved:-0} bytes by prometheus's count, less than the $written of the cartridge"
[ -n "$(promql 'vtl_migrator_drive_info{job="vtl-migrator",drive="1"}')" ] || fail "prometheus has no info series of physical drive 1"
[ -n "$(promql 'vtl_migrator_policy_passes_total{job="vtl-migrator"}')" ] || fail "prometheus has no policy passes"
echo "   the migrator's drives moved $moved bytes"

step "its disk copy released and recalled: the recall's time to first block is in the histogram"
ctl release I00002L8
[ "$(metric "$murl" vtl_migrator_policy_releases_total)" = 1 ] || fail "vtl_migrator_policy_releases_total is not 1 after a release"
[ "$(metric "$vurl" vtl_cartridges 'cache="migrated"')" = 1 ] || fail "vtld does not count I00002L8 migrated"
ctl recall I00002L8
job_ends "$(job_id)" done
[ "$(metric "$murl" vtl_migrator_recall_first_block_seconds_count)" = 1 ] || fail "the histogram does not count the recall"
[ "$(metric "$murl" vtl_migrator_recall_first_block_seconds_bucket 'le="+Inf"')" = 1 ] || fail "the +Inf bucket is not 1"
i=0
until [ "$(promql 'vtl_migrator_recall_first_block_seconds_count{job="vtl-migrator"}')" = 1 ]; do
	i=$((i + 1))
	[ "$i" -le 100 ] || fail "prometheus does not count the recall 10 s after it ended"
	sleep 0.1
done
ttfb=$(promql 'vtl_migrator_recall_first_block_seconds_sum{job="vtl-migrator"}')
python3 -c 'import sys; sys.exit(0 if 0 < float(sys.argv[1]) < 60 else 1)' "$ttfb" ||
	fail "the recall's time to first block is $ttfb s: not within (0, 60)"
echo "   the recall's first block came after $ttfb s"
kill -TERM "$ppid_prom"
wait "$ppid_prom" || fail "prometheus did not stop cleanly"
ppid_prom=""

step "/api/status, jobs, elements, drives, cartridges, events are what vtlctl --json prints"
curl -sf "$murl/api/jobs" >"$tmp/api_jobs" || fail "GET /api/jobs"
"$VTLCTL" -c "$conf" --json jobs >"$tmp/ctl_jobs" || fail "vtlctl --json jobs"
# The jobs documents, made a moment apart: the same, the ingest rule's live rates aside (the host's
# MB/s is a moving average that can change between the two reads).
same_jobs() {
	python3 - "$1" "$2" <<'PY'
import json, sys
def shape(p):
    d = json.load(open(p))
    for k in ("host_mb_s", "copy_limit_mb_s", "budget_mb_s", "copies_mb_s", "pool_mb_s", "host_ref_mb_s", "drops"):
        d["ingest"].pop(k)
    return d
a, b = shape(sys.argv[1]), shape(sys.argv[2])
if a != b:
    print(a, b, sep="\n", file=sys.stderr)
    sys.exit(1)
PY
}
same_jobs "$tmp/api_jobs" "$tmp/ctl_jobs" || fail "/api/jobs differs from vtlctl --json jobs"
curl -sf "$vurl/api/status" >"$tmp/api_status" || fail "GET /api/status"
"$VTLCTL" -c "$conf" --json status >"$tmp/ctl_status" || fail "vtlctl --json status"
# The two were made a moment apart: the same document, MB/s and the pool's fill aside.
python3 - "$tmp/api_status" "$tmp/ctl_status" <<'PY' || fail "/api/status differs from vtlctl --json status"
import json, sys
def shape(p):
    d = json.load(open(p))
    for dr in d["drives"]:
        dr.pop("write_mb_s"); dr.pop("read_mb_s")
    d["pool"].pop("fill_percent")
    return d
a, b = shape(sys.argv[1]), shape(sys.argv[2])
if a != b:
    print(a, b, sep="\n", file=sys.stderr)
    sys.exit(1)
PY
# same_doc URL COMMAND...: the page at URL is byte for byte what vtlctl --json COMMAND prints.
same_doc() {
	u=$1
	shift
	curl -sf "$u" >"$tmp/api_doc" || fail "GET $u"
	"$VTLCTL" -c "$conf" --json "$@" >"$tmp/ctl_doc" || fail "vtlctl --json $*"
	cmp -s "$tmp/api_doc" "$tmp/ctl_doc" || { diff "$tmp/api_doc" "$tmp/ctl_doc" >&2 || true; fail "$u differs from vtlctl --json $*"; }
}
same_doc "$vurl/api/elements" slot list
same_doc "$vurl/api/drives" drive list
same_doc "$vurl/api/cartridges" cartridge list
same_doc "$vurl/api/events" events
# library show's pool members: vtld's figures are its own accounting, which learns what the migrator
# wrote (the recall above) at its next look at the disk; vtlctl's are read from the disk now. The
# same document, those figures aside.
curl -sf "$vurl/api/library" >"$tmp/api_lib" || fail "GET /api/library"
"$VTLCTL" -c "$conf" --json library show >"$tmp/ctl_lib" || fail "vtlctl --json library show"
python3 - "$tmp/api_lib" "$tmp/ctl_lib" <<'PY' || fail "/api/library differs from vtlctl --json library show"
import json, sys
def shape(p):
    d = json.load(open(p))
    def drop(x):
        if isinstance(x, dict):
            for k in ("used_bytes", "free_bytes", "fill_percent"):
                x.pop(k, None)
            for v in x.values():
                drop(v)
        elif isinstance(x, list):
            for v in x:
                drop(v)
    drop(d.get("pool"))
    return d
a, b = shape(sys.argv[1]), shape(sys.argv[2])
if a != b:
    print(a, b, sep="\n", file=sys.stderr)
    sys.exit(1)
PY
same_doc "$vurl/api/cartridges/I00001L8" cartridge show I00001L8
curl -sf "$vurl/api/jobs" >"$tmp/api_vjobs" || fail "GET /api/jobs of vtld"
same_jobs "$tmp/api_vjobs" "$tmp/ctl_jobs" || fail "vtld's /api/jobs differs from vtlctl --json jobs"
[ "$(status "$vurl" /api/cartridges/NOSUCH01)" = 404 ] || fail "/api/cartridges/NOSUCH01 is not 404"
same_doc "$vurl/api/events?since=2&limit=3" events --since 2 --limit 3
python3 -c 'import json, sys
e = json.load(open(sys.argv[1]))["events"]
sys.exit(0 if 1 <= len(e) <= 3 and all(x["id"] > 2 for x in e) else 1)' "$tmp/api_doc" ||
	fail "/api/events?since=2&limit=3 does not hold 1 to 3 events after id 2"
[ "$(status "$vurl" "/api/events?limit=x")" = 400 ] || fail "/api/events?limit=x is not 400"
for p in /api/physical /api/physical/drives /api/policy; do
	curl -sf "$murl$p" | python3 -c 'import json, sys; sys.exit(0 if json.load(sys.stdin)["ok"] else 1)' ||
		fail "GET $p is not an ok JSON answer"
done

step "only GET and HEAD of a known page: POST 405, a body 413, unknown 404, a long target 414"
[ "$(status "$vurl" /metrics -X POST)" = 405 ] || fail "a POST to /metrics is not 405"
[ "$(status "$vurl" /metrics -X GET --data-binary hello)" = 413 ] || fail "a GET with a body is not 413"
[ "$(status "$vurl" /nothing)" = 404 ] || fail "an unknown page is not 404"
[ "$(status "$murl" "/metrics?$(python3 -c 'print("x" * 300)')")" = 414 ] || fail "a 300-byte query is not 414"
[ "$(status "$vurl" /metrics -I)" = 200 ] || fail "HEAD /metrics is not 200"

step "a non-loopback http address without http_token is refused at the start"
migrator_stop
vtld_stop
sed "s/^http = 127.0.0.1:$hport/http = 0.0.0.0:$hport/" "$conf" >"$tmp/etc/open.conf"
if "$VTLD" -c "$tmp/etc/open.conf" >"$tmp/open.log" 2>&1; then fail "vtld started with http = 0.0.0.0 and no token"; fi
grep -q "http = 0.0.0.0:$hport is not a loopback address: set http_token" "$tmp/open.log" ||
	{ cat "$tmp/open.log" >&2; fail "vtld did not say why it refused http = 0.0.0.0"; }
echo "PASS: test_metrics"
