#!/bin/bash
# SPDX-License-Identifier: MIT
#
# interop.sh: cmd against the Linux kernel's own CM (ib_cm + rdma_cm), one
# kernel, two soft-RoCE devices on a veth pair. Runs inside the VM of
# tests/vm/run.sh --two-devices --with-kernel-cm (meson suite `interop`).
#
#   interop.sh BUILD_ROOT
#
# cmd registers the CM class on rxe0 first; only then does the harness load
# ib_cm, rdma_cm and rdma_ucm, so the kernel CM owns rxe1 alone. cmd's side
# runs client-lib/cmc_rping (rping's protocol over libcmclient's rdma_cm
# addressing) on rxe0; the kernel's side runs Debian's rping (rdmacm-utils)
# on rxe1. Addresses: the devices' IPv6 link-local GIDs (no routing needed).
#
#   to-kernel   cmc_rping -c -> rping -s: REQ with the CMA header and user
#               private data, 3 pings with real RDMA read/write verified
#               by cmc_rping byte for byte; cmd's side disconnects (DREQ
#               from cmd, DREP from the kernel).
#   from-kernel rping -c -V -> cmc_rping -s: the CMA header parsed (peer
#               address and port), 3 pings verified by rping -V and by
#               cmc_rping's pattern check; the kernel disconnects.
#   reject-cmd  cmc_rping -s -R: rping -c reports RDMA_CM_EVENT_REJECTED,
#               error 28.
#   reject-kern cmc_rping -c to a port nobody listens on: REJ reason 8
#               from the kernel, reported as "invalid service id".
#   ipv4        10.0.0.1 on veth0, 10.0.0.2 on veth1 (policy routing, set up
#               before cmd starts): cmc_rping -c -> rping -s and rping -c
#               -V -> cmc_rping -s over ::ffff:10.0.0.x GIDs, 2 pings each,
#               the IPv4 CMA header (0x40) both ways.
#   mra         cmc_rping -s -b 1 -H 6000 and two rping -c at once: the
#               second REQ waits in cmd (MRA sent); the kernel receives the
#               MRA (ib_cm's cm_rx_msgs/mra), waits instead of failing,
#               and both clients verify their data.
#   end         cmctl counters: no transmit error, nothing malformed, no
#               id or connection left; cmd exits 0.
#
# Few processes: every exec costs 50-150 ms in the TCG guest.
# Exit: 0 pass, 1 fail, 77 not in a two-device VM with the kernel CM.
set -u

B=${1:?usage: interop.sh BUILD_ROOT}
RP=$B/client-lib/cmc_rping
# shellcheck source=tests/lib/vmtest.sh
. "$(dirname "$0")/../lib/vmtest.sh"

if [ ! -e /sys/class/infiniband/rxe0 ] || [ ! -e /sys/class/infiniband/rxe1 ] ||
	[ -z "${CMD_VM_CM_READY:-}" ]; then
	echo "interop.sh: SKIP: needs tests/vm/run.sh --two-devices --with-kernel-cm"
	exit 77
fi
if ! command -v rping >/dev/null; then
	echo "interop.sh: SKIP: no rping (rdmacm-utils): run tests/vm/setup.sh"
	exit 77
fi
vm_dir interop
# A sysfs GID as an address rping and cmc_rping take (link-local + scope).
gid_of() {
	local g
	read -r g <"/sys/class/infiniband/$1/ports/1/gids/$2" || return 1
	echo "$g"
}
# ib_cm's counters of rxe1 port 1: group/name.
kctr() {
	local v=x
	read -r v <"/sys/class/infiniband/rxe1/ports/1/$1" 2>/dev/null
	echo "$v"
}
# rping_listen LOG ADDR PORT: the kernel's rping -s on ADDR:PORT in the
# background (pid rs), its log $dir/LOG.log, until the kernel has a
# listening rdma_cm id (60 s, a hang guard).
rping_listen() {
	local end=$(($(now_us) + 60000000)) out
	rping -s -v -a "$2" -p "$3" >"$dir/$1.log" 2>&1 &
	rs=$!
	pids+=("$rs")
	while (($(now_us) < end)); do
		out=$(rdma res show cm_id 2>/dev/null)
		[[ $out == *LISTEN* ]] && return 0
		nap 0.1
	done
	fail "rping -s did not listen on $2"
}
# rp_listen LOG LABEL ARGS...: cmc_rping -v -s ARGS on rxe0 in the
# background (pid srv), its log $dir/LOG.log, until it listens.
rp_listen() {
	local log=$dir/$1.log label=$2
	shift 2
	"$RP" -v -s -S "$SOCK" -d rxe0 "$@" >"$log" 2>&1 &
	srv=$!
	pids+=("$srv")
	wait_line "$log" "listening" 60 || fail "$label did not listen"
}
# rp_end LOG S LABEL: wait up to S s for the rp_listen server, show its
# log; it must exit 0.
rp_end() {
	wait_timeout "$srv" "$2"
	rc=$?
	echo "-- $3 (exit $rc)"
	show "$dir/$1.log"
	[ $rc = 0 ] || fail "$3 exited $rc"
}
# rping_to_cmd SLOG CLOG ADDR PORT N LABEL: cmc_rping -s for one connection
# on PORT (log SLOG), then the kernel's rping -c -V with N pings to
# ADDR:PORT (log CLOG), which must exit 0 having verified all N. LABEL
# tells the case in the FAIL lines.
rping_to_cmd() {
	rp_listen "$1" "cmc_rping -s" -p "$4" -n 1
	run_show "$2" "rping -c $3" rping -c -V -v -C "$5" -a "$3" -p "$4"
	[ $rc = 0 ] || fail "rping -c$6 exited $rc"
	[ "$(count_lines "$dir/$2.log" "^ping data: rdma-ping-[0-$(($5 - 1))]: ")" = "$5" ] ||
		fail "rping -c$6 did not verify $5 pings"
}

# INTEROP_ONLY="to-kernel mra ...": run only those parts (debugging).
ONLY=${INTEROP_ONLY:-all}
want() { [[ $ONLY == all || " $ONLY " == *" $1 "* ]]; }
hwctr() { # rxe's own counters of both devices, one line each
	local d f v line
	for d in rxe0 rxe1; do
		line="   $d hw_counters:"
		for f in "/sys/class/infiniband/$d/ports/1/hw_counters/"*; do
			read -r v <"$f" || continue
			[ "$v" = 0 ] || line+=" ${f##*/}=$v"
		done
		echo "$line"
	done
}

say "kernel $(uname -r); rping from $(command -v rping)"
A0=$(gid_of rxe0 "${CMD_VM_RXE0_GID_INDEX:-0}") || exit 1
A1=$(gid_of rxe1 "${CMD_VM_RXE1_GID_INDEX:-0}") || exit 1
echo "   rxe0 (cmd):    $A0 on veth0"
echo "   rxe1 (kernel): $A1 on veth1"

# ---- IPv4 between the two devices (before cmd reads its GID tables) ---------
# veth_ipv4 (tests/lib/vmtest.sh): V4A on veth0, V4B on veth1, policy routing.
if want ipv4; then
	veth_ipv4 || fail "ipv4 set-up"
fi

# ---- cmd first, then the kernel CM ------------------------------------------
if ! cmd_start 1 15 --device rxe0; then
	show "$dir/cmd.log"
	fail "cmd did not come up"
	exit 1
fi
show "$dir/cmd.log"
if [ -n "${INTEROP_CAPTURE:-}" ]; then
	"$CMCTL" -s "$SOCK" capture start "$INTEROP_CAPTURE" || fail "capture start"
fi
cm_ready_loaded
say "harness: modprobe ib_cm rdma_cm rdma_ucm: exit $mrc"
[ "$mrc" = 0 ] || {
	fail "the kernel CM could not be loaded"
	exit 1
}
[ -e /sys/class/infiniband/rxe1/ports/1/cm_rx_msgs ] ||
	fail "ib_cm is not attached to rxe1"
[ ! -e /sys/class/infiniband/rxe0/ports/1/cm_rx_msgs ] ||
	fail "ib_cm attached to rxe0, which cmd holds"

# ---- to-kernel: cmc_rping -c -> rping -s ------------------------------------
if want to-kernel; then
	say "to-kernel: cmc_rping -c (cmd, rxe0) -> rping -s (kernel, rxe1) port 7471"
	rping_listen rping-s "$A1%veth1" 7471
	run_show c1 "cmc_rping -c" "$RP" -v -c -S "$SOCK" -d rxe0 -a "$A1%veth1" \
		-p 7471 -C 3 -P "hello from cmd"
	[ $rc = 0 ] || fail "cmc_rping -c exited $rc"
	[ "$(count_lines "$dir/c1.log" "^3 of 3 ping\(s\) verified")" = 1 ] ||
		fail "cmc_rping -c did not verify 3 pings"
	if [ "$(count_lines "$dir/c1.log" "DREQ sent")" != 1 ] ||
		[ "$(count_lines "$dir/c1.log" "disconnected \(DREP received\)")" != 1 ]; then
		fail "cmd-initiated disconnect: no DREQ/DREP"
fi
wait_timeout "$rs" 60
rc=$?
echo "-- rping -s (exit $rc)"
show "$dir/rping-s.log"
[ "$(count_lines "$dir/rping-s.log" "^server ping data: rdma-ping-[0-2]: ")" = 3 ] ||
	fail "rping -s did not see 3 pings"
	hwctr
fi

# ---- from-kernel: rping -c -> cmc_rping -s ----------------------------------
if want from-kernel; then
	say "from-kernel: rping -c -V (kernel, rxe1) -> cmc_rping -s (cmd, rxe0) port 7472"
	rping_to_cmd s2 rping-c "$A0%veth1" 7472 3 ""
	[ "$(count_lines "$dir/rping-c.log" "mismatch|error|fail")" = 0 ] ||
		fail "rping -c reported an error"
	rp_end s2 90 "cmc_rping -s"
	[ "$(count_lines "$dir/s2.log" "REQ from \[fe80:.*\]:[1-9][0-9]* to \[fe80:.*\]:7472")" = 1 ] ||
		fail "the REQ's CMA header (peer address and port) was not parsed"
	[ "$(count_lines "$dir/s2.log" "pattern verified")" = 3 ] ||
		fail "cmc_rping -s did not verify 3 pings"
	[ "$(count_lines "$dir/s2.log" "peer disconnected \(DREQ received\), DREP sent$")" = 1 ] ||
		fail "kernel-initiated disconnect: no DREQ/DREP"
	[ "$(count_lines "$dir/s2.log" "timewait over")" = 1 ] || fail "no timewait exit"
		hwctr
fi

# ---- reject-cmd: cmc_rping -s -R -> rping -c --------------------------------
if want reject-cmd; then
	say "reject-cmd: cmc_rping -s -R rejects rping -c (reason 28, private data)"
	rp_listen s3 "cmc_rping -s -R" -p 7473 -n 1 -R -P "cmd rejects you"
	run_show rping-c3 "rping -c" rping -c -v -C 1 -a "$A0%veth1" -p 7473
	[ $rc != 0 ] || fail "rping -c succeeded against a rejecting listener"
	[ "$(count_lines "$dir/rping-c3.log" "RDMA_CM_EVENT_REJECTED, error 28")" = 1 ] ||
		fail "rping -c did not report REJECTED, error 28"
	rp_end s3 60 "cmc_rping -s -R"
fi

# ---- reject-kern: nobody listens -> REJ 8 -----------------------------------
if want reject-kern; then
	say "reject-kern: cmc_rping -c to port 7499 where nobody listens"
	run_show c4 "cmc_rping -c -E 8" "$RP" -v -c -S "$SOCK" -d rxe0 \
		-a "$A1%veth1" -p 7499 -E 8
	[ $rc = 0 ] || fail "cmc_rping -c -E 8 exited $rc"
	[ "$(count_lines "$dir/c4.log" "rejected: reason 8 \(invalid service id")" = 1 ] ||
		fail "no REJ 8 mapped to \"invalid service id\""
fi

# ---- mra: the kernel waits on cmd's MRA -------------------------------------
if want mra; then
	say "mra: cmc_rping -s -b 1 -H 6000, two rping -c at once"
	mra0=$(kctr cm_rx_msgs/mra)
	retr0=$(kctr cm_tx_retries/req)
	rp_listen s5 "cmc_rping -s -b 1" -p 7475 -n 2 -b 1 -H 6000
	t=$(now_us)
	rping -c -V -v -C 1 -a "$A0%veth1" -p 7475 >"$dir/rping-m1.log" 2>&1 &
	m1=$!
	rping -c -V -v -C 1 -a "$A0%veth1" -p 7475 >"$dir/rping-m2.log" 2>&1 &
	m2=$!
	pids+=("$m1" "$m2")
	# Each client's own finishing time: poll both.
	t1='' t2='' end=$(($(now_us) + 90000000))
	while [ -z "$t1" ] || [ -z "$t2" ]; do
		[ -z "$t1" ] && ! kill -0 "$m1" 2>/dev/null && t1=$((($(now_us) - t) / 1000))
		[ -z "$t2" ] && ! kill -0 "$m2" 2>/dev/null && t2=$((($(now_us) - t) / 1000))
		(($(now_us) < end)) || break
		nap 0.05
	done
	wait_timeout "$m1" 1
	rc1=$?
	wait_timeout "$m2" 1
	rc2=$?
	t1=${t1:-90000} t2=${t2:-90000}
	wait_timeout "$srv" 90
	rc=$?
	mra1=$(kctr cm_rx_msgs/mra)
	retr1=$(kctr cm_tx_retries/req)
	echo "-- rping -c #1 (exit $rc1, done after $t1 ms)"
	show "$dir/rping-m1.log"
	echo "-- rping -c #2 (exit $rc2, done after $t2 ms)"
	show "$dir/rping-m2.log"
	echo "-- cmc_rping -s (exit $rc)"
	show "$dir/s5.log"
	echo "   rxe1 ib_cm: cm_rx_msgs/mra $mra0 -> $mra1, cm_tx_retries/req $retr0 -> $retr1"
	if [ $rc1 != 0 ] || [ $rc2 != 0 ]; then
		fail "an rping -c behind the MRA failed"
fi
[ $rc = 0 ] || fail "cmc_rping -s -b 1 exited $rc"
[ "$(count_lines "$dir/s5.log" "pattern verified")" = 2 ] || fail "not both pings verified"
# One client is answered after the hold, the other after two holds (its
# REQ waited in cmd, MRAed, for the credit, then in the application).
first=$((t1 < t2 ? t1 : t2)) last=$((t1 < t2 ? t2 : t1))
((first >= 6000 && last >= 12000)) ||
	fail "the held REQs were answered too early ($first/$last ms)"
[ "$(count_lines "$dir/s5.log" "conn 1: REQ from")" = 1 ] || fail "no second REQ"
if ! [[ $mra0 =~ ^[0-9]+$ && $mra1 =~ ^[0-9]+$ ]] || ((mra1 <= mra0)); then
	fail "the kernel received no MRA ($mra0 -> $mra1)"
fi
fi

# ---- ipv4: both directions over ::ffff:10.0.0.x GIDs --------------------------
if want ipv4; then
	say "ipv4: cmc_rping -c -> rping -s $V4B:7476, rping -c -> cmc_rping -s $V4A:7477"
	rping_listen rping-s4 "$V4B" 7476
	run_show c6 "cmc_rping -c $V4B" "$RP" -v -c -S "$SOCK" -d rxe0 -a "$V4B" \
		-p 7476 -C 2
	[ $rc = 0 ] || fail "cmc_rping -c over IPv4 exited $rc"
	[ "$(count_lines "$dir/c6.log" "^2 of 2 ping\(s\) verified")" = 1 ] ||
		fail "cmc_rping -c over IPv4 did not verify 2 pings"
	wait_timeout "$rs" 60
	echo "-- rping -s $V4B"
	show "$dir/rping-s4.log"
	[ "$(count_lines "$dir/rping-s4.log" "^server ping data: rdma-ping-[0-1]: ")" = 2 ] ||
		fail "rping -s over IPv4 did not see 2 pings"
	rping_to_cmd s7 rping-c7 "$V4A" 7477 2 " over IPv4"
	rp_end s7 90 "cmc_rping -s over IPv4"
	[ "$(count_lines "$dir/s7.log" "REQ from \[$V4B\]:[1-9][0-9]* to \[$V4A\]:7477")" = 1 ] ||
		fail "IPv4 CMA header not parsed"
fi

# ---- end ----------------------------------------------------------------------
say "end: cmctl counters"
read_counters 10 mad_rx mad_tx mad_tx_errors mad_malformed req_sent \
	rep_sent rtu_sent dreq_sent drep_sent rej_sent mra_sent req_held \
	timeouts ids records
check_counters_clean
for g in cm_tx_msgs cm_rx_msgs; do
	line="   rxe1 ib_cm $g:"
	for m in req mra rej rep rtu dreq drep; do line+=" $m $(kctr "$g/$m")"; done
	echo "$line"
done
cmd_stop
say_verdict interop
