#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# tgt (Linux SCSI target framework: tgtd, tgtadm, tgtimg; Debian's tgt,
# installed by `scripts/install-deps bench`) as bench_iscsi's peer target: one
# iSCSI target with tape LUNs (SSC emulation, backing store type ssc) on files
# in a folder of the benchmark's. Everything of this tgtd stays in that folder:
# its control socket and lock (TGT_IPC_SOCKET), its log, its pid and its tapes,
# so it never meets a tgtd of the system.
#
#   tgt_peer.sh start DIR PORT IQN LUNS   start tgtd on 127.0.0.1:PORT, target IQN, LUNs 1..LUNS;
#                                         prints tgtd's PID. Exit 3: tgt is not installed (why on stderr)
#   tgt_peer.sh fresh DIR LUN             give LUN a new, empty tape file (DIR/tapes/tapeLUN)
#   tgt_peer.sh stop DIR                  stop that tgtd, by its PID
set -eu

# The issue's tuning of tgt 1.0.85 (docs/benchmarks.md): what a host may send in one Data-Out PDU, in
# one burst, and unsolicited data allowed (RFC 7143 13.12, 13.13, 13.10).
TGT_PARAMS="MaxRecvDataSegmentLength=262144 MaxBurstLength=1048576 InitialR2T=No"
TID=1
# The management channel's number: the socket's path is DIR's own, so any number is free.
CONTROL_PORT=1
# A tape's nominal capacity in MB (tgtimg --size): far above a run; the file is sparse and grows as written.
TAPE_MB=1048576
SUN_PATH_MAX=107 # sockaddr_un's sun_path, less its terminating NUL
WAIT_TRIES=100   # tenths of a second
STOP_TRIES=50

usage() {
	echo "usage: tgt_peer.sh start DIR PORT IQN LUNS | fresh DIR LUN | stop DIR" >&2
	exit 2
}

[ $# -ge 2 ] || usage
cmd=$1
dir=$2
export TGT_IPC_SOCKET="$dir/socket"
adm() {
	tgtadm -C "$CONTROL_PORT" --lld iscsi "$@" >>"$dir/tgtadm.log" 2>&1
}

# True when process $1 is gone or a zombie (a tgtd started by `start` is no child of whoever stops it).
gone() {
	[ ! -e "/proc/$1" ] || [ "$(cut -d' ' -f3 "/proc/$1/stat" 2>/dev/null)" = Z ]
}

fresh() {
	lun=$1
	tape=$dir/tapes/tape$lun
	# A LUN that is not there yet (the first time) cannot be deleted: that failure is expected.
	adm --mode logicalunit --op delete --tid "$TID" --lun "$lun" || true
	rm -f "$tape"
	if ! tgtimg --op new --device-type tape --barcode "TGT${lun}L8" --size "$TAPE_MB" --type data \
		--file "$tape" --thin-provisioning >>"$dir/tgtadm.log" 2>&1; then
		echo "tgt_peer.sh: tgtimg could not create $tape; its output:" >&2
		tail -5 "$dir/tgtadm.log" >&2
		exit 1
	fi
	if ! adm --mode logicalunit --op new --tid "$TID" --lun "$lun" --backing-store "$tape" \
		--device-type tape --bstype ssc; then
		echo "tgt_peer.sh: tgtadm could not add tape LUN $lun; its output:" >&2
		tail -5 "$dir/tgtadm.log" >&2
		exit 1
	fi
}

case $cmd in
start)
	[ $# -eq 5 ] || usage
	port=$3
	iqn=$4
	luns=$5
	for x in tgtd tgtadm tgtimg; do
		if ! command -v "$x" >/dev/null; then
			echo "$x is not installed (Debian's tgt: scripts/install-deps bench, as root)" >&2
			exit 3
		fi
	done
	if [ "${#TGT_IPC_SOCKET}" -gt $((SUN_PATH_MAX - 8)) ]; then
		echo "tgt's control socket path $TGT_IPC_SOCKET is too long for a Unix socket: use a shorter VTL_BENCH_DIR" >&2
		exit 1
	fi
	mkdir -p "$dir/tapes"
	# -f: in the foreground (no fork), logging to stderr; backgrounded here, so $! is tgtd itself.
	tgtd -f -C "$CONTROL_PORT" --iscsi "portal=127.0.0.1:$port" >>"$dir/tgtd.log" 2>&1 &
	pid=$!
	echo "$pid" >"$dir/tgtd.pid"
	i=0
	until adm --mode target --op show && python3 -c 'import socket, sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 1).close()' "$port" 2>/dev/null; do
		i=$((i + 1))
		if [ "$i" -gt "$WAIT_TRIES" ] || ! kill -0 "$pid" 2>/dev/null; then
			echo "tgt_peer.sh: tgtd did not come up on 127.0.0.1:$port; its log:" >&2
			tail -10 "$dir/tgtd.log" >&2
			exit 1
		fi
		sleep 0.1
	done
	if ! adm --mode target --op new --tid "$TID" --targetname "$iqn"; then
		echo "tgt_peer.sh: tgtadm could not create the target $iqn; its output:" >&2
		tail -5 "$dir/tgtadm.log" >&2
		exit 1
	fi
	for kv in $TGT_PARAMS; do
		if ! adm --mode target --op update --tid "$TID" --name "${kv%%=*}" --value "${kv#*=}"; then
			echo "tgt_peer.sh: tgtadm could not set $kv; its output:" >&2
			tail -5 "$dir/tgtadm.log" >&2
			exit 1
		fi
	done
	adm --mode target --op bind --tid "$TID" --initiator-address ALL || {
		echo "tgt_peer.sh: tgtadm could not open the target to all initiators" >&2
		exit 1
	}
	lun=1
	while [ "$lun" -le "$luns" ]; do
		fresh "$lun"
		lun=$((lun + 1))
	done
	echo "$pid"
	;;
fresh)
	[ $# -eq 3 ] || usage
	fresh "$3"
	;;
stop)
	[ $# -eq 2 ] || usage
	[ -f "$dir/tgtd.pid" ] || exit 0
	pid=$(cat "$dir/tgtd.pid")
	# tgtd ignores SIGTERM: it stops when told to by its management channel, once its target is gone.
	adm --mode target --op delete --force --tid "$TID" || true
	tgtadm -C "$CONTROL_PORT" --op delete --mode system >>"$dir/tgtadm.log" 2>&1 || true
	i=0
	while ! gone "$pid"; do
		i=$((i + 1))
		if [ "$i" -gt "$STOP_TRIES" ]; then
			echo "tgt_peer.sh: tgtd (pid $pid) did not stop when asked; killing it" >&2
			kill -KILL "$pid" 2>/dev/null || true
			break
		fi
		sleep 0.1
	done
	rm -f "$dir/tgtd.pid"
	;;
*)
	usage
	;;
esac
