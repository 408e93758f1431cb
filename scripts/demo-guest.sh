#!/bin/bash
# SPDX-License-Identifier: MIT
#
# The part of the demo that needs soft-RoCE: scripts/demo.sh runs it through
# tests/vm/run.sh, which gives it rxe0 on lo (directly on a host whose kernel
# has rdma_rxe, else in the qemu VM). By hand:
#
#   tests/vm/run.sh --rw build -- scripts/demo-guest.sh build
#
# It starts the daemon on rxe0 (the real umad path), a cmc_server and a
# cmc_client that make a few RC connections with real QPs (an RDMA write
# and two SENDs each, checked byte for byte), and shows cmctl's view while
# they run and the daemon's counters after the teardown.
#
# Every exec of a host binary costs 50-150 ms in the TCG guest: the polling
# loops use builtins only.
set -uo pipefail

B=$(cd "${1:-build}" && pwd) || exit 1
CONNS=${DEMO_CONNS:-3}
DEV=rxe0
GID=${CMD_VM_RXE0_GID_INDEX:-1} # ::ffff:127.0.0.1 on lo
DST=127.0.0.1
# DEMO_CMD, DEMO_CMCTL, DEMO_SERVER, DEMO_CLIENT: other programs than the
# build tree's (tests/deb runs the installed packages' daemon and cmctl and
# the examples built from libcmclient-dev).
CMD=${DEMO_CMD:-$B/daemon/cmd}
CMCTL=${DEMO_CMCTL:-$B/client-lib/cmctl}
SERVER=${DEMO_SERVER:-$B/client-lib/cmc_server}
CLIENT=${DEMO_CLIENT:-$B/client-lib/cmc_client}
T0=$EPOCHREALTIME

for f in "$CMD" "$CMCTL" "$SERVER" "$CLIENT"; do
	[ -x "$f" ] || {
		echo "demo-guest: $f is not built (meson compile -C build)" >&2
		exit 1
	}
done
if [ ! -e /sys/class/infiniband/$DEV ]; then
	echo "demo-guest: no $DEV here: run me through tests/vm/run.sh" >&2
	exit 1
fi

# A socket needs a file system that has them (not the VM's 9p shares).
dir=/run/cmd-demo.$$
mkdir -p "$dir" && mkfifo "$dir/nap" || exit 1
SOCK=$dir/cmd.sock
exec {NAP_FD}<>"$dir/nap"
nap() { read -r -t "$1" -u "$NAP_FD" _ || :; }
elapsed() {
	local t=$EPOCHREALTIME
	printf '%.1f' "$(((${t/./} - ${T0/./}) / 100000))e-1"
}
step() { printf '\n== [%s s] %s\n' "$(elapsed)" "$*"; }
pids=()
cleanup() {
	local p
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$dir"
}
trap cleanup EXIT

# Run "$@" in the background, its output shown with a "name |" prefix and
# kept in $dir/name.log; PID: its process id (not the prefixer's).
start() {
	local name=$1
	shift
	mkfifo "$dir/$name.fifo" || exit 1
	: >"$dir/$name.log"
	sed -u -e "w $dir/$name.log" -e "s/^/    $(printf '%-6s' "$name") | /" \
		<"$dir/$name.fifo" &
	"$@" >"$dir/$name.fifo" 2>&1 &
	PID=$!
	pids+=("$PID")
}

# Wait up to $2 s for a line containing $1 in file $3.
wait_text() {
	local end=$((${EPOCHREALTIME/./} + ${2}000000)) line
	while ((${EPOCHREALTIME/./} < end)); do
		while IFS= read -r line; do
			[[ $line == *"$1"* ]] && return 0
		done <"$3"
		nap 0.05
	done
	return 1
}

echo "programs: $CMD $CMCTL $SERVER $CLIENT"

step "1. the RDMA device: $DEV on lo (soft-RoCE, kernel $(uname -r))"
rdma link show "$DEV/1"
read -r gid <"/sys/class/infiniband/$DEV/ports/1/gids/$GID"
echo "GID $GID: $gid (::ffff:127.0.0.1; MADs and packets loop back)"

step "2. the daemon: cmd --device $DEV (umad: CM class 0x07 on $DEV port 1)"
# Debug level: the daemon logs every connection's state changes.
start cmd "$CMD" --device "$DEV" --socket "$SOCK" --log-level debug
cmd_pid=$PID
wait_text "serving 1 port" 10 "$dir/cmd.log" || {
	echo "demo-guest: cmd did not start" >&2
	exit 1
}

step "3. the server: cmc_server -c $CONNS (listens, accepts, verifies the data)"
start server "$SERVER" -S "$SOCK" -d "$DEV" -g "$GID" -c "$CONNS"
srv=$PID
wait_text "listening" 10 "$dir/server.log" || {
	echo "demo-guest: cmc_server did not listen" >&2
	exit 1
}
echo "-- cmctl listeners"
"$CMCTL" -s "$SOCK" listeners

step "4. the client: cmc_client -c $CONNS $DST (REQ/REP/RTU, RDMA write + SEND, DREQ/DREP, timewait)"
start client "$CLIENT" -S "$SOCK" -d "$DEV" -g "$GID" -c "$CONNS" "$DST"
cli=$PID
# While it runs: the connections as the daemon lists them (a few
# snapshots, each one cmctl run; only those that changed).
shown=0
last=
while kill -0 "$cli" 2>/dev/null && [ $shown -lt 4 ]; do
	"$CMCTL" -s "$SOCK" connections >"$dir/conns" 2>&1 || break
	mapfile -t rows <"$dir/conns"
	if [ ${#rows[@]} -gt 1 ] && [ "${rows[*]}" != "$last" ]; then
		last=${rows[*]}
		echo "-- cmctl connections (while the client runs)"
		printf '    %s\n' "${rows[@]}"
		shown=$((shown + 1))
	fi
done
wait "$cli"
crc=$?
wait "$srv"
src=$?

step "5. after the teardown: cmctl counters (the CM MADs went through umad on $DEV)"
"$CMCTL" -s "$SOCK" counters >"$dir/counters"
while read -r k v; do
	case $k in
	mad_rx | mad_tx | mad_tx_errors | req_sent | rep_sent | rtu_sent | \
		dreq_sent | drep_sent | rej_sent | req_received | rep_received | \
		rtu_received | dreq_received | drep_received | timeouts | ids | \
		records)
		printf '    %-20s %s\n' "$k" "$v"
		;;
	esac
done <"$dir/counters"
echo "-- cmctl ids (nothing left)"
"$CMCTL" -s "$SOCK" ids

step "6. stop the daemon"
kill -TERM "$cmd_pid"
wait "$cmd_pid"
drc=$?
wait # the prefixers end with their programs
pids=()
echo "cmd exit $drc"
echo "client exit $crc, server exit $src"
step "rxe part done in $(elapsed) s"
[ $crc = 0 ] && [ $src = 0 ] && [ $drc = 0 ]
