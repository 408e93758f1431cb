#!/bin/bash
# SPDX-License-Identifier: MIT
#
# e2e.sh: cmd end to end on real soft-RoCE (rxe0 on lo), through the umad
# path, with the example programs' real RC QPs. Runs where rxe0 exists:
# inside the VM of tests/vm/run.sh (meson suite `rxe`), or on a host
# with rdma_rxe through run.sh's host path.
#
#   e2e.sh BUILD_ROOT              the daemon's end-to-end checks
#   e2e.sh BUILD_ROOT --kernel-cm  ib_cm loaded first: cmd must refuse rxe0
#
# Default mode, one daemon (`cmd --device rxe0`), in order:
#   data     cmc_server -c 20 and four cmc_client -c 5 at once: 20 RC
#            connections, QPs through INIT/RTR/RTS by cmc_modify_qp, an RDMA
#            write and two SENDs each, verified byte for byte on both
#            sides; the clients disconnect, the server answers, timewait.
#   passive  cmc_server -D / cmc_client -D: the server disconnects.
#   reject   cmc_server -R / cmc_client -R: REJ reason 28 with private data.
#   edge     cm_edge: backlog credits, reject with private data, DREQ from
#            each side, clients SIGKILLed mid-handshake, nothing left.
#   end      cmctl counters: MADs went through umad (mad_rx, mad_tx > 0 and
#            equal: every MAD loops back on lo; no transmit error, nothing
#            malformed; REQs held for a credit), no id and no connection
#            record left; cmctl ids lists nothing; cmd exits 0 on SIGTERM.
# --kernel-cm (run.sh --with-kernel-cm): the harness loads ib_cm, rdma_cm
# and rdma_ucm before cmd starts, so ib_cm owns the CM class on rxe0; cmd
# must name the owner in exactly the documented words and exit 1 without
# serving (no port could be served), never pretend.
#
# Every exec of a host binary costs 50-150 ms in the TCG guest: builtins
# only in loops, and few processes. Exit: 0 pass, 1 fail, 77 no rxe0.
set -u

B=${1:?usage: e2e.sh BUILD_ROOT [--kernel-cm]}
MODE=${2:-}
SERVER=$B/client-lib/cmc_server
CLIENT=$B/client-lib/cmc_client
EDGE=$B/tests/rxe/cm_edge
DEV=rxe0
GID=${CMD_VM_RXE0_GID_INDEX:-1} # ::ffff:127.0.0.1 on lo
DST=127.0.0.1
CONNS=20
CLIENTS=4

# shellcheck source=tests/lib/vmtest.sh
. "$(dirname "$0")/../lib/vmtest.sh"

if [ ! -e "/sys/class/infiniband/$DEV" ]; then
	echo "e2e.sh: SKIP: no $DEV here (run it through tests/vm/run.sh)"
	exit 77
fi
vm_dir e2e

# end_server LOG LABEL: wait for the cmc_server started last (srv), which
# logs to $dir/LOG.log and must exit 0.
end_server() {
	wait_timeout "$srv" 120
	rc=$?
	echo "-- $2 (exit $rc)"
	show "$dir/$1.log"
	[ $rc = 0 ] || fail "$2 exited $rc"
}
# run_pair FLAG ARGS...: cmc_server -FLAG ARGS in the background until it
# listens, then cmc_client -FLAG ARGS against it, which must exit 0. Logs
# server-flag.log and client-flag.log; end_server waits for the server.
run_pair() {
	local f=$1 l=${1,,}
	shift
	"$SERVER" -S "$SOCK" -d "$DEV" -g "$GID" -"$f" "$@" >"$dir/server-$l.log" 2>&1 &
	srv=$!
	pids+=("$srv")
	wait_line "$dir/server-$l.log" "^listening" 60 || fail "cmc_server -$f did not listen"
	run_show "client-$l" "cmc_client -$f" "$CLIENT" -S "$SOCK" -d "$DEV" \
		-g "$GID" -"$f" "$@" "$DST"
	[ $rc = 0 ] || fail "cmc_client -$f exited $rc"
}

# ---- --kernel-cm -------------------------------------------------------
if [ "$MODE" = --kernel-cm ]; then
	say "ib_cm first: loading the kernel CM before cmd starts"
	if [ -n "${CMD_VM_CM_READY:-}" ] && [ -n "${CMD_VM_CM_LOADED:-}" ]; then
		cm_ready_loaded # nothing of ours registered: go ahead
		echo "   harness: modprobe ib_cm rdma_cm rdma_ucm: exit $mrc"
		[ "$mrc" = 0 ] || fail "the harness could not load ib_cm"
	else
		modprobe ib_cm || fail "modprobe ib_cm"
	fi
	if [ -e "/sys/class/infiniband/$DEV/ports/1/cm_rx_msgs" ]; then
		echo "   ib_cm is attached to $DEV (its cm_rx_msgs counters show)"
	else
		fail "ib_cm's counters do not show under $DEV port 1"
	fi
	say "cmd --device $DEV: must refuse, naming ib_cm"
	timeout 120 "$CMD" --device "$DEV" --socket "$SOCK" >"$dir/cmd.log" 2>&1
	rc=$?
	show "$dir/cmd.log"
	echo "   exit status $rc"
	want="the kernel ib_cm module owns the CM class here; unload ib_cm and its users (rdma_ucm, rdma_cm, ib_ipoib, ...) or start cmd before they load; see README"
	n=0
	while IFS= read -r line; do
		[[ $line == "$DEV port 1: "*"$want" ]] && n=$((n + 1))
	done <"$dir/cmd.log"
	[ $n = 1 ] || fail "no line \"$DEV port 1: ... $want\""
	[ "$(count_lines "$dir/cmd.log" "serving")" = 0 ] ||
		fail "cmd claims to serve something"
	[ "$(count_lines "$dir/cmd.log" "^cmd: cannot start")" = 1 ] ||
		fail "no \"cmd: cannot start\" line"
	case $rc in
	0 | 124) fail "cmd kept going (exit $rc) with no port to serve" ;;
	1) ;;
	*) fail "exit status $rc, want 1 (no port could be served)" ;;
	esac
	[ ! -e "$SOCK" ] || fail "cmd left its socket behind"
	say_verdict kernel-cm
	exit
fi

# ---- the daemon --------------------------------------------------------
say "cmd --device $DEV on $(uname -r): the umad path"
if ! cmd_start 1 60 --device "$DEV"; then
	show "$dir/cmd.log"
	fail "cmd did not come up"
	exit 1
fi
show "$dir/cmd.log"
[ "$(count_lines "$dir/cmd.log" "^$DEV port 1: serving")" = 1 ] ||
	fail "cmd does not serve $DEV port 1"

# ---- data: many connections, real QPs ----------------------------------
say "data: cmc_server -c $CONNS, $CLIENTS x cmc_client -c $((CONNS / CLIENTS)) at once"
"$SERVER" -S "$SOCK" -d "$DEV" -g "$GID" -c "$CONNS" >"$dir/server.log" 2>&1 &
srv=$!
pids+=("$srv")
wait_line "$dir/server.log" "^listening" 60 || fail "cmc_server did not listen"
cpids=()
for i in $(seq "$CLIENTS"); do
	"$CLIENT" -S "$SOCK" -d "$DEV" -g "$GID" -c $((CONNS / CLIENTS)) "$DST" \
		>"$dir/client$i.log" 2>&1 &
	cpids+=("$!")
done
pids+=("${cpids[@]}")
# While they run: the listener as cmctl shows it.
"$CMCTL" -s "$SOCK" listeners >"$dir/listeners.log" 2>&1
show "$dir/listeners.log"
[ "$(count_lines "$dir/listeners.log" "LISTEN +0x0000000000c0ffee")" = 1 ] ||
	fail "cmctl listeners does not show cmc_server's listener"
i=0
for p in "${cpids[@]}"; do
	i=$((i + 1))
	wait_timeout "$p" 300
	rc=$?
	echo "-- cmc_client $i (exit $rc)"
	show "$dir/client$i.log"
	[ $rc = 0 ] || fail "cmc_client $i exited $rc"
	n=$(count_lines "$dir/client$i.log" "server verified 4096 bytes and answered correctly")
	[ "$n" = $((CONNS / CLIENTS)) ] || fail "cmc_client $i: $n connection(s) verified"
done
end_server server cmc_server
n=$(count_lines "$dir/server.log" "message and 4096 RDMA-written bytes verified")
[ "$n" = $CONNS ] || fail "cmc_server verified $n of $CONNS"
n=$(count_lines "$dir/server.log" "client disconnected, DREP sent")
[ "$n" = $CONNS ] || fail "cmc_server answered $n of $CONNS DREQs"
n=$(count_lines "$dir/server.log" "timewait over")
[ "$n" = $CONNS ] || fail "cmc_server saw $n of $CONNS timewait exits"
[ "$(count_lines "$dir/server.log" "^$CONNS connection\(s\) served, 0 failed")" = 1 ] ||
	fail "cmc_server's summary"

# ---- passive side disconnects --------------------------------------------
say "passive: cmc_server -D disconnects, cmc_client -D answers"
run_pair D -c 3 -s 0xd15c
[ "$(count_lines "$dir/client-d.log" "server disconnected, DREP sent")" = 3 ] ||
	fail "cmc_client -D did not answer 3 DREQs"
[ "$(count_lines "$dir/client-d.log" "timewait over")" = 3 ] ||
	fail "cmc_client -D: timewait"
end_server server-d "cmc_server -D"
[ "$(count_lines "$dir/server-d.log" "DREQ sent")" = 3 ] || fail "cmc_server -D: DREQs"
[ "$(count_lines "$dir/server-d.log" "disconnected \(DREP received\)")" = 3 ] ||
	fail "cmc_server -D: DREPs"

# ---- reject with private data --------------------------------------------
say "reject: cmc_server -R, cmc_client -R"
run_pair R -c 2 -s 0x4e4a
for k in 0 1; do
	[ "$(count_lines "$dir/client-r.log" "^conn $k: rejected, reason 28, private data \"cmc_server rejects request $k\"\$")" = 1 ] ||
		fail "cmc_client -R: conn $k's REJ and its private data"
done
end_server server-r "cmc_server -R"

# ---- backlog credits, both-side disconnect, killed clients ---------------
say "edge: cm_edge (backlog, reject, DREQ each side, killed clients)"
run_show edge cm_edge "$EDGE" "$SOCK"
[ $rc = 0 ] || fail "cm_edge exited $rc"

# ---- the daemon's view at the end ----------------------------------------
say "end: cmctl counters and ids"
read_counters 60 mad_rx mad_tx mad_tx_errors mad_malformed req_sent \
	rep_sent rtu_sent dreq_sent drep_sent rej_sent req_held req_delivered \
	timeouts ids records
((${ctr[mad_rx]:-0} > 0 && ${ctr[mad_tx]:-0} > 0)) ||
	fail "no MAD went through the umad path (mad_rx ${ctr[mad_rx]:-?}, mad_tx ${ctr[mad_tx]:-?})"
# Every MAD loops back on lo: each one sent is received.
[ "${ctr[mad_rx]:-x}" = "${ctr[mad_tx]:-y}" ] ||
	fail "mad_rx ${ctr[mad_rx]:-?} != mad_tx ${ctr[mad_tx]:-?} on a loopback port"
check_counters_clean
# 20 + 3 + 3 (cm_edge) connections were established at least.
((${ctr[req_sent]:-0} >= 28 && ${ctr[rtu_sent]:-0} >= 25)) ||
	fail "too few REQs/RTUs sent (${ctr[req_sent]:-?}/${ctr[rtu_sent]:-?})"
((${ctr[req_held]:-0} >= 2)) || fail "req_held ${ctr[req_held]:-?}: no REQ waited for a credit"
"$CMCTL" -s "$SOCK" ids >"$dir/ids.log" 2>&1 || fail "cmctl ids"
show "$dir/ids.log"
[ "$(count_lines "$dir/ids.log" "^[0-9]")" = 0 ] || fail "cmctl ids lists ids"

cmd_stop
[ "$(count_lines "$dir/cmd.log" "^cmd: |not served")" = 0 ] || fail "cmd logged errors"
echo "-- cmd (exit $cmd_rc), its log:"
show "$dir/cmd.log"
say_verdict e2e
