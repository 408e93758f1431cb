# shellcheck shell=bash
# SPDX-License-Identifier: MIT
#
# Sourced by the bash tests that run inside the VM of tests/vm/run.sh
# (tests/rxe/*.sh, tests/interop/interop.sh): their working directory, the
# daemon's start and stop, log matching and counters, written once.
#
# Every exec of a host binary costs 50-150 ms in the TCG guest, so all of
# this is builtins: sleeps read a FIFO, clocks are $EPOCHREALTIME.
#
# The sourcing script sets B, the build root, first: CMD (the daemon) and
# CMCTL are under it. It owns `failures` (fail counts there).

B=$(cd "$B" && pwd) || exit 1
CMD=$B/daemon/cmd
CMCTL=$B/client-lib/cmctl
TAG=${0##*/}
T0=$EPOCHREALTIME
failures=0
pids=()
cmd_pid=
rxe_links=()
veths=()

# vm_dir NAME: a directory of our own under /run (a socket needs a file
# system that has them, not 9p), $SOCK in it, and the nap FIFO (the guest
# has no /dev/fd for a <(:)). At exit every pid in pids is killed, the rxe
# links and veth pairs of rxe_add and veth_pair deleted, and it removed.
vm_dir() {
	dir=/run/cmd-$1.$$
	mkdir -p "$dir" || exit 1
	SOCK=$dir/cmd.sock
	mkfifo "$dir/nap" && exec {NAP_FD}<>"$dir/nap" || exit 1
	trap vm_cleanup EXIT
}
vm_cleanup() {
	local p
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
	for p in "${rxe_links[@]}"; do rdma link delete "$p" 2>/dev/null; done
	for p in "${veths[@]}"; do ip link delete "$p" 2>/dev/null; done
	rm -rf "$dir"
}

# Sleep $1 s without a process: read from a FIFO nobody writes to.
nap() { read -r -t "$1" -u "$NAP_FD" _ || :; }
now_us() { echo "${EPOCHREALTIME/./}"; }
elapsed() { printf '%.2f' "$((($(now_us) - ${T0/./}) / 10000))e-2"; }
say() { echo "== [$(elapsed) s] $*"; }
fail() {
	echo "$TAG: FAIL: $*"
	failures=$((failures + 1))
}
# say_verdict NAME: the PASS/FAIL line; true when nothing failed.
say_verdict() {
	say "$1: $([ "$failures" = 0 ] && echo PASS || echo "FAIL ($failures)") in $(elapsed) s"
	[ "$failures" = 0 ]
}
# exit_verdict: print "TAG: PASS" and exit 0, or the failure count and 1.
exit_verdict() {
	if [ "$failures" = 0 ]; then
		echo "$TAG: PASS"
		exit 0
	fi
	echo "$TAG: $failures failure(s)"
	exit 1
}
show() { # file, indented
	local line
	while IFS= read -r line; do echo "   $line"; done <"$1"
}
# How many lines of file $1 match the (bash) regex $2 (0 if no file).
count_lines() {
	local n=0 line
	[ -f "$1" ] || {
		echo 0
		return
	}
	while IFS= read -r line; do
		[[ $line =~ $2 ]] && n=$((n + 1))
	done <"$1"
	echo "$n"
}
# Wait up to $3 s for a line matching $2 in file $1. The caps of these
# tests are hang guards sized for the TCG VM on a loaded 2-core host (a
# program start there takes seconds, not the milliseconds of an idle
# host); run.sh's --timeout bounds the whole.
wait_line() {
	local end=$(($(now_us) + ${3}000000))
	while (($(now_us) < end)); do
		[ "$(count_lines "$1" "$2")" -gt 0 ] && return 0
		nap 0.05
	done
	return 1
}
# Wait for pid $1 for up to $2 s, then SIGTERM it; its exit status.
wait_timeout() {
	local end=$(($(now_us) + ${2}000000))
	while kill -0 "$1" 2>/dev/null; do
		if (($(now_us) >= end)); then
			echo "$TAG: pid $1 still running after $2 s: SIGTERM"
			kill -TERM "$1" 2>/dev/null
			break
		fi
		nap 0.05
	done
	wait "$1"
}

# run_show LOG LABEL COMMAND...: COMMAND with its output in $dir/LOG.log,
# then that log shown under "-- LABEL (exit RC, N ms)"; rc is its status.
run_show() {
	local log=$dir/$1.log label=$2 t
	shift 2
	t=$(now_us)
	"$@" >"$log" 2>&1
	rc=$?
	echo "-- $label (exit $rc, $((($(now_us) - t) / 1000)) ms)"
	show "$log"
}

# cmd_start PORTS S ARGS...: start $CMD on $SOCK with ARGS, its log in
# $dir/cmd.log, and wait up to S s for "serving PORTS port(s)": the line
# it logs once every port is registered and the socket is bound.
cmd_start() {
	local ports=$1 s=$2
	shift 2
	cmd_ports=$ports cmd_args=("$@") cmd_log=$dir/cmd.log
	"$CMD" --socket "$SOCK" "$@" >"$cmd_log" 2>&1 &
	cmd_pid=$!
	pids+=("$cmd_pid")
	wait_line "$cmd_log" "serving $ports port" "$s"
}
# cmd_restart S: what `systemctl restart cmd` does: SIGTERM (the daemon
# hands its state over), wait (it must exit 0), start it again with the
# same arguments (its log: $dir/cmd-N.log, cmd_log), and wait S s (a hang
# guard) for it to serve again. cmd_gap_ms: from the SIGTERM until then.
cmd_restarts=0
cmd_restart() {
	local t0
	t0=$(now_us)
	kill -TERM "$cmd_pid"
	wait "$cmd_pid"
	cmd_rc=$?
	[ $cmd_rc = 0 ] || fail "cmd exited $cmd_rc on SIGTERM (restart)"
	cmd_restarts=$((cmd_restarts + 1))
	cmd_log=$dir/cmd-$cmd_restarts.log
	"$CMD" --socket "$SOCK" "${cmd_args[@]}" >"$cmd_log" 2>&1 &
	cmd_pid=$!
	pids+=("$cmd_pid")
	wait_line "$cmd_log" "serving $cmd_ports port" "$1" || return 1
	cmd_gap_ms=$((($(now_us) - t0) / 1000))
}
# cmd_stop: SIGTERM the daemon; it must exit 0 (its status: cmd_rc).
cmd_stop() {
	kill -TERM "$cmd_pid"
	wait "$cmd_pid"
	cmd_rc=$?
	pids=()
	[ $cmd_rc = 0 ] || fail "cmd exited $cmd_rc on SIGTERM"
}

# cm_ready_loaded: under run.sh --with-kernel-cm, tell the harness that
# ours are registered and wait (60 s, a hang guard) until it has loaded
# ib_cm, rdma_cm and rdma_ucm; mrc is its modprobe's exit status.
# shellcheck disable=SC2034 # mrc is for the caller
cm_ready_loaded() {
	local end=$(($(now_us) + 60000000))
	: >"$CMD_VM_CM_READY"
	while [ ! -e "$CMD_VM_CM_LOADED" ] && (($(now_us) < end)); do
		nap 0.05
	done
	read -r mrc <"$CMD_VM_CM_LOADED" || mrc=missing
}

# read_counters S KEY...: `cmctl counters` into the array ctr, again and
# again for up to S s until ids and records are 0 (clients are gone, but
# the daemon notices closed sockets asynchronously and destroyed ids
# finish their timewait; a leak never gets there); then KEYs printed.
declare -A ctr
read_counters() {
	local end=$(($(now_us) + ${1}000000)) k v
	shift
	while :; do
		"$CMCTL" -s "$SOCK" counters >"$dir/counters.log" 2>&1
		ctr=()
		while read -r k v; do ctr[$k]=$v; done <"$dir/counters.log"
		[ "${ctr[ids]:-x}" = 0 ] && [ "${ctr[records]:-x}" = 0 ] && break
		(($(now_us) < end)) || break
		nap 0.2
	done
	for k in "$@"; do
		printf '   %-16s %s\n' "$k" "${ctr[$k]:-?}"
	done
}
# check_counters_clean: no transmit error, nothing malformed, no id and no
# connection record left (of the last read_counters).
check_counters_clean() {
	[ "${ctr[mad_tx_errors]:-x}" = 0 ] || fail "mad_tx_errors ${ctr[mad_tx_errors]:-?}"
	[ "${ctr[mad_malformed]:-x}" = 0 ] || fail "mad_malformed ${ctr[mad_malformed]:-?}"
	[ "${ctr[ids]:-x}" = 0 ] || fail "${ctr[ids]:-?} id(s) left in the daemon"
	[ "${ctr[records]:-x}" = 0 ] || fail "${ctr[records]:-?} connection record(s) left"
}

# veth_pair A B: the veth pair A/B, both up; exit 77 (SKIP) without veth.
veth_pair() {
	modprobe veth || {
		echo "$TAG: SKIP: no veth module"
		exit 77
	}
	ip link add "$1" type veth peer name "$2" || exit 1
	veths+=("$1")
	ip link set "$1" up && ip link set "$2" up || exit 1
}

# need_vm_rxe0: exit 77 (SKIP) unless inside the VM, with its rxe0.
need_vm_rxe0() {
	if [ ! -e /sys/class/infiniband/rxe0 ] || [ -z "${CMD_VM:-}" ]; then
		echo "$TAG: SKIP: needs the VM's rxe0 (run it through tests/vm/run.sh)"
		exit 77
	fi
}

# rxe_add NAME NETDEV: a soft-RoCE device of the test's own on NETDEV.
rxe_add() {
	rdma link add "$1" type rxe netdev "$2" || exit 1
	rxe_links+=("$1")
}

# veth_ipv4: IPv4 between the two devices of run.sh --two-devices, V4A on
# veth0 (rxe0), V4B on veth1 (rxe1); call it before cmd reads its GID
# tables (rxe adds the ::ffff:10.0.0.x GIDs). One kernel routes traffic
# between its own addresses via lo; rxe needs it on the veths: policy
# routing (rules 10/11 for locally sent packets, the local table moved
# behind them). Rules 12/13 are for rdma_cm's passive side: it checks a
# REQ (validate_ipv4_net_dev) by a route lookup to the peer's address with
# oif = the receiving netdev and no iif; without them that lookup finds
# the peer's address local on the other veth and rdma_cm rejects the REQ
# (REJ 28, measured). The VM has no network device: nothing leaves it.
V4A=10.0.0.1 V4B=10.0.0.2
veth_ipv4() {
	local k
	say "ipv4: $V4A on veth0 (rxe0), $V4B on veth1 (rxe1), policy routing"
	for k in all.rp_filter default.rp_filter veth0.rp_filter veth1.rp_filter; do
		echo 0 >"/proc/sys/net/ipv4/conf/${k/./\/}"
	done
	for k in all veth0 veth1; do echo 1 >"/proc/sys/net/ipv4/conf/$k/accept_local"; done
	ip -batch - <<-EOF2
		addr add $V4A/32 dev veth0
		addr add $V4B/32 dev veth1
		rule add pref 10 iif lo to $V4B lookup 100
		route add $V4B dev veth0 src $V4A table 100
		rule add pref 11 iif lo to $V4A lookup 101
		route add $V4A dev veth1 src $V4B table 101
		rule add pref 12 oif veth1 to $V4A lookup 101
		rule add pref 13 oif veth0 to $V4B lookup 100
		rule add pref 100 lookup local
		rule del pref 0
	EOF2
}
