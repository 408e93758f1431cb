#!/bin/bash
# SPDX-License-Identifier: MIT
#
# rdmacm.sh: Debian's librdmacm programs, unmodified, through cmd's
# librdmacm (the cmd-rdmacm wrapper), inside the VM of tests/vm/run.sh
# --two-devices --with-kernel-cm (meson suite `rdmacm`, driven by
# rdmacm-suite.sh, which boots one VM per layout).
#
#   rdmacm.sh BUILD_ROOT LAYOUT [--kernel-only] [--wrong-address]
#             [--results FILE]
#
# LAYOUT cmd2: cmd serves rxe0 (veth0) and rxe1 (veth1); the kernel CM is
# loaded after it and owns no device. Both sides of every case go through
# cmd: servers on rxe1, clients on rxe0.
#   rping      rping -s -v -C 10 / rping -c -v -V -C 10: 10 pings with
#              rping's own verification, both exit 0
#   ucmatose   ucmatose -c 20 both sides: 20 connections, sends both ways
#   udaddy     UD over SIDR: 10 datagrams each way
#   cmtime     cmtime -c 200: its step table into the log
#   rping-restart  rping -C 3000 both sides; once 20 pings went through,
#              cmd is restarted (SIGTERM, start: it hands its state over)
#              while the data flows; every ping arrives once, both exit
#              0, the disconnect after goes through the new daemon (DREQ,
#              no REJ), and both programs' sessions resumed
#   send_bw    ib_send_bw -R, 4 KiB x 200 (IPv4: perftest's rdma_cm code
#   write_bw   ib_write_bw -R  is AF_INET only): the result line
# LAYOUT interop: cmd serves rxe0 alone and the kernel CM (ib_cm, rdma_cm)
# rxe1, as in tests/interop. "wrapped" is cmd-rdmacm PROG, "kernel" the
# plain program (the system's librdmacm, the kernel's rdma_cm):
#   rping-to-kernel       wrapped rping -c (rxe0) -> kernel rping -s (rxe1)
#   rping-from-kernel     kernel rping -c (rxe1) -> wrapped rping -s (rxe0)
#   ucmatose-to-kernel, ucmatose-from-kernel, udaddy-to-kernel,
#   udaddy-from-kernel    the same two ways for ucmatose -c 20 and udaddy
#   both-cms              wrapped rping -s on rxe1's address (the library
#                         hands that id to the system's librdmacm) reached
#                         by wrapped rping -c from rxe0 (through cmd)
#
# Addresses: the devices' RoCE v2 link-local GIDs with the scope of the
# sending side's netdev (fe80::..%veth0 from rxe0's side); perftest uses
# 10.0.0.1 (veth0) / 10.0.0.2 (veth1) with the policy routing of
# veth_ipv4 (tests/lib/vmtest.sh). The VM has no network device: nothing
# leaves it.
#
# --kernel-only: no cmd, no wrapper; the kernel CM owns both devices and
#   every program runs with the system's librdmacm. It calibrates the
#   options and hang guards in the TCG guest against the reference.
# --wrong-address: every client aims at an address where nobody is (fe80::1
#   on its veth; perftest: a port nobody listens on); every case must then
#   FAIL (proves the checks can).
# --results FILE: one line per case appended: LAYOUT CASE RESULT SECONDS.
# RDMACM_ONLY="rping udaddy ...": run only those cases (debugging).
#
# Checks are on behaviour only: exit codes, the programs' own success
# lines, cmd's counters. Every wait is for a condition (a listening id, a
# process exit) under a hang guard far above what the TCG guest needs.
# Exit: 0 pass, 1 fail, 77 not in a two-device VM with the kernel CM, or
# a program missing.
set -u

B=${1:?usage: rdmacm.sh BUILD_ROOT cmd2|interop [--kernel-only] [--wrong-address] [--results FILE]}
LAYOUT=${2:?usage: rdmacm.sh BUILD_ROOT cmd2|interop ...}
shift 2
KONLY=0 WRONG=0 RESULTS=
while [ $# -gt 0 ]; do
	case $1 in
	--kernel-only) KONLY=1 ;;
	--wrong-address) WRONG=1 ;;
	--results)
		RESULTS=${2:?--results needs a file}
		shift
		;;
	*)
		echo "rdmacm.sh: unknown option $1" >&2
		exit 2
		;;
	esac
	shift
done
case $LAYOUT in
cmd2 | interop) ;;
*)
	echo "rdmacm.sh: unknown layout $LAYOUT" >&2
	exit 2
	;;
esac
# shellcheck source=tests/lib/vmtest.sh
. "$(dirname "$0")/../lib/vmtest.sh"
TAG="rdmacm.sh[$LAYOUT]"

if [ ! -e /sys/class/infiniband/rxe0 ] || [ ! -e /sys/class/infiniband/rxe1 ] ||
	[ -z "${CMD_VM_CM_READY:-}" ]; then
	echo "$TAG: SKIP: needs tests/vm/run.sh --two-devices --with-kernel-cm"
	exit 77
fi
for p in rping ucmatose udaddy cmtime ib_send_bw ib_write_bw; do
	command -v $p >/dev/null && continue
	echo "$TAG: SKIP: no $p (rdmacm-utils, perftest): run tests/vm/setup.sh"
	exit 77
done
WRAPPER=$B/rdmacm/cmd-rdmacm
if [ $KONLY = 0 ] && [ ! -x "$WRAPPER" ]; then
	echo "$TAG: SKIP: no $WRAPPER (not built)"
	exit 77
fi
vm_dir rdmacm

# ---- cases, their verdicts and the summary table -----------------------------
ONLY=${RDMACM_ONLY:-all}
want() { [[ $ONLY == all || " $ONLY " == *" $1 "* ]]; }
case_names=() case_results=() case_secs=()
# case_begin NAME WHAT: a case starts; the failures from here on are its.
case_begin() {
	cname=$1 cfail0=$failures ct0=$(now_us)
	say "$1: $2"
	[ $KONLY = 1 ] || ctr_snap
}
case_end() {
	local r=PASS s
	[ "$failures" = "$cfail0" ] || r=FAIL
	s=$(printf '%.1f' "$((($(now_us) - ct0) / 100000))e-1")
	case_names+=("$cname") case_results+=("$r") case_secs+=("$s")
	say "$cname: $r ($s s)"
	[ -z "$RESULTS" ] || echo "$LAYOUT $cname $r $s" >>"$RESULTS"
}
summary() {
	local i
	echo
	say "summary ($LAYOUT$([ $KONLY = 1 ] && echo ", kernel only")$([ $WRONG = 1 ] && echo ", wrong addresses"))"
	printf '   %-22s %-6s %8s\n' case result seconds
	for i in "${!case_names[@]}"; do
		printf '   %-22s %-6s %8s\n' "${case_names[$i]}" "${case_results[$i]}" "${case_secs[$i]}"
	done
}

# ---- programs in the background, each with its wall time ---------------------
declare -A bgpid bgt bglabel
# bg NAME LABEL CMD...: CMD in the background, output in $dir/NAME.log.
bg() {
	local n=$1
	bglabel[$n]=$2
	shift 2
	echo "-- $n: $*"
	bgt[$n]=$(now_us)
	"$@" >"$dir/$n.log" 2>&1 &
	bgpid[$n]=$!
	pids+=("$!")
}
# bg_end NAME S: wait up to S s for it (a hang guard: SIGTERM after),
# show its log under its exit status and wall time; rc is the status.
bg_end() {
	wait_timeout "${bgpid[$1]}" "$2"
	rc=$?
	echo "-- ${bglabel[$1]} (exit $rc, $((($(now_us) - ${bgt[$1]}) / 1000)) ms)"
	show "$dir/$1.log"
}
# lines NAME REGEX: how many lines of NAME's log match.
lines() { count_lines "$dir/$1.log" "$2"; }

# listening CM PORT: true once a listening id on PORT exists in CM: the
# kernel (`rdma res show cm_id`: "state LISTEN ... src-addr ADDR:PORT") or
# cmd (`cmctl listeners`: the rdma_cm service id, TCP port space 0x0106 or
# UDP 0x0111, with PORT in its low 16 bits).
listening() {
	local out line hex
	if [ "$1" = kernel ]; then
		out=$(rdma res show cm_id 2>/dev/null)
		while IFS= read -r line; do
			[[ $line =~ state\ LISTEN.*src-addr\ [^\ ]*:$2( |$) ]] && return 0
		done <<<"$out"
		return 1
	fi
	printf -v hex '%04x' "$2"
	out=$("$CMCTL" -s "$SOCK" listeners 2>/dev/null)
	[[ $out =~ LISTEN\ +0x0000000001(06|11)$hex ]]
}
# cm_of SIDE SADDR: the CM a server of SIDE (w/k) on SADDR must listen
# in: cmd for a wrapped one on a device cmd serves, else the kernel.
cm_of() {
	if [ $KONLY = 1 ] || [ "$1" = k ] ||
		{ [ "$LAYOUT" = interop ] && [ "$2" = "$AT1" ]; }; then
		echo kernel
	else
		echo cmd
	fi
}
# server_up NAME PORT CM: wait (60 s, a hang guard) until server NAME
# listens on PORT in CM (cm_of); false, and a FAIL, if it does not or
# has exited.
server_up() {
	local end=$(($(now_us) + 60000000))
	while (($(now_us) < end)); do
		listening "$3" "$2" && return 0
		kill -0 "${bgpid[$1]}" 2>/dev/null || break
		nap 0.1
	done
	fail "${bglabel[$1]} did not listen on port $2 in $3"
	return 1
}
# server_end NAME CLIENT_RC S: the server's end. After a client that
# succeeded it has S s (a hang guard); after one that failed it waits for
# a connection that never comes, so 10 s then SIGTERM (the case has
# failed already).
server_end() {
	if [ "$2" = 0 ]; then bg_end "$1" "$3"; else bg_end "$1" 10; fi
}

# ---- cmd's counters: which side went through cmd -----------------------------
declare -A c0
ctr_read() { # into ctr
	local k v
	ctr=()
	"$CMCTL" -s "$SOCK" counters >"$dir/counters.log" 2>&1 || return 1
	while read -r k v; do ctr[$k]=$v; done <"$dir/counters.log"
}
ctr_snap() {
	local k
	c0=()
	ctr_read || return
	for k in "${!ctr[@]}"; do c0[$k]=${ctr[$k]}; done
}
# ctr_expect KEY MIN...: cmd counted at least MIN of each KEY in this
# case (req_sent 20: cmd sent the REQs of 20 connections), printed; then
# what the daemon retransmitted and held in the case and its ids and
# records left now (a program's ids go when it exits, records after
# their timewait: cmd-clean's check at the end).
CTR_SHOW="req_retransmitted rep_retransmitted dreq_retransmitted
	sidr_req_retransmitted mra_sent rej_sent req_held timeouts"
ctr_expect() {
	local line="   cmd counters in this case:" d k
	[ $KONLY = 0 ] || return 0
	ctr_read || fail "cmctl counters failed"
	while [ $# -ge 2 ]; do
		d=$((${ctr[$1]:-0} - ${c0[$1]:-0}))
		line+=" $1 +$d"
		((d >= $2)) || fail "cmd counted $1 +$d in $cname, expected at least $2"
		shift 2
	done
	echo "$line"
	line="   and:"
	for k in $CTR_SHOW; do
		line+=" $k +$((${ctr[$k]:-0} - ${c0[$k]:-0}))"
	done
	echo "$line; now ids ${ctr[ids]:-?} records ${ctr[records]:-?}"
}

# ---- the checks, one per program ---------------------------------------------
# check_rping_c NAME N / check_rping_s NAME N: exit 0 and N ping data
# lines, rdma-ping-0 .. N-1 each once (rping -c -V checks the data and
# exits non-zero on a mismatch; -v prints what came back).
check_rping() { # NAME N PREFIX
	local missing pre="^${3}ping data: rdma-ping-" all="ping data: rdma-ping-"
	[ $rc = 0 ] || fail "${bglabel[$1]} exited $rc"
	# PREFIX "": loose, for a log of one side's ping lines only: any
	# "rdma-ping-N: " in a line counts. rping's threads print
	# unsynchronised, and its cm thread's "client DISCONNECT EVENT..." can
	# land inside the last lines ("   ping data" + it, then ": rdma-ping-
	# 2949: ..." on the next), which under load it does.
	if [ -z "$3" ]; then
		pre="rdma-ping-" all="rdma-ping-[0-9]*: "
	fi
	# One pass (a process per ping is minutes in the TCG guest at N 3000):
	# the first i in 0..N-1 whose line is not there exactly once.
	missing=$(awk -v n="$2" -v pre="$pre" '
		$0 ~ pre { s = $0; sub(".*" pre, "", s); sub(/:.*/, "", s); c[s]++ }
		END { for (i = 0; i < n; i++) if (c[i] != 1) { print i; exit } }' \
		"$dir/$1.log")
	if [ -n "$missing" ]; then
		fail "${bglabel[$1]}: no single \"${3}ping data: rdma-ping-$missing\" line"
		return
	fi
	[ "$(lines "$1" "$all")" = "$2" ] ||
		fail "${bglabel[$1]}: not exactly $2 ping data lines"
	[ "$(lines "$1" "mismatch|error|fail")" = 0 ] || fail "${bglabel[$1]} reported an error"
}
# ucmatose and udaddy print "data transfers complete" once the messages
# of every connection completed, "return status 0" and exit 0 when all
# went well; a CM failure prints "<prog>: event: NAME, error: N".
check_cma() { # NAME PROG
	[ $rc = 0 ] || fail "${bglabel[$1]} exited $rc"
	[ "$(lines "$1" "^data transfers complete$")" = 1 ] ||
		fail "${bglabel[$1]}: no \"data transfers complete\""
	[ "$(lines "$1" "^return status 0$")" = 1 ] || fail "${bglabel[$1]}: no \"return status 0\""
	[ "$(lines "$1" "^$2: event: |failed|failure|error")" = 0 ] ||
		fail "${bglabel[$1]} reported a failure"
}

# ---- the cases ---------------------------------------------------------------
# Hang guards (seconds) for a client to finish and for its server after it:
# with the kernel's rdma_cm in the TCG guest every client takes 0.2-3 s
# (cmtime -c 200 under a second); these only turn a hang into a FAIL.
G_CLIENT=120 G_SERVER=60 G_CMTIME=600


# as SIDE PROG ARGS: side w runs PROG through the wrapper (cmd; in
# --kernel-only the plain program), side k the plain program (the
# kernel's rdma_cm). Only in bg's background subshell, which it replaces
# (exec; the wrapper execs PROG too): $! is the program's pid, and
# wait_timeout's SIGTERM reaches the program, not a shell around it.
if [ $KONLY = 1 ]; then W=(); else W=("$WRAPPER" --socket "$SOCK"); fi
as() {
	local how=$1
	shift
	[ "$how" = w ] && set -- "${W[@]}" "$@"
	exec "$@"
}
who() {
	if [ "$1" = k ]; then
		echo kernel
	elif [ $KONLY = 1 ]; then echo "kernel-only"; else echo cmd-rdmacm; fi
}

# Each case: NAME WHAT SW SADDR CW CADDR [PORT] WRONG: the server's side
# (w/k) and address, the client's side and the address it connects to, the
# port, and the address the client aims at under --wrong-address.
rping_case() {
	local n=$1 sw=$3 sa=$4 cw=$5 ca=$6 port=$7 crc=1
	[ $WRONG = 0 ] || ca=$8
	case_begin "$n" "$2"
	bg "$n-s" "$(who "$sw") rping -s" as "$sw" rping -s -v -C 10 -a "$sa" -p "$port"
	if server_up "$n-s" "$port" "$(cm_of "$sw" "$sa")"; then
		bg "$n-c" "$(who "$cw") rping -c" as "$cw" rping -c -v -V -C 10 -a "$ca" -p "$port"
		bg_end "$n-c" $G_CLIENT
		crc=$rc
		check_rping "$n-c" 10 ""
	fi
	server_end "$n-s" "$crc" $G_SERVER
	check_rping "$n-s" 10 "server "
}
# rping through a restart of cmd (issue 17): the QP is the program's, so
# the data flows on; the programs' CM sessions resume by themselves.
RPING_RESTART_N=3000
rping_restart_case() {
	local n=rping-restart port=7474 crc=1 before after end
	case_begin "$n" "rping -C $RPING_RESTART_N through cmd, cmd restarted under it"
	bg "$n-s" "cmd-rdmacm rping -s" as w rping -s -v -C $RPING_RESTART_N -a "$AT1" -p $port
	if server_up "$n-s" $port cmd; then
		bg "$n-c" "cmd-rdmacm rping -c" as w rping -c -v -V -C $RPING_RESTART_N -a "$TO1" -p $port
		end=$(($(now_us) + G_CLIENT * 1000000))
		while (($(lines "$n-c" "^ping data") < 20)) && (($(now_us) < end)) &&
			kill -0 "${bgpid[$n-c]}" 2>/dev/null; do
			nap 0.05
		done
		before=$(lines "$n-c" "^ping data")
		if ! kill -0 "${bgpid[$n-c]}" 2>/dev/null; then
			fail "rping -c ended before the restart ($before pings)"
		elif ! cmd_restart 60; then
			fail "cmd did not serve again after the restart"
		else
			after=$(lines "$n-c" "^ping data")
			say "restart after $before pings: cmd served again in $cmd_gap_ms ms, $after pings by then"
			show "$cmd_log"
			kill -0 "${bgpid[$n-c]}" 2>/dev/null ||
				fail "rping -c ended during the restart, before any ping after it could show the data flows on"
		fi
		bg_end "$n-c" 600
		crc=$rc
		# Loose (check_rping): 3000 lines give rping's threads room to
		# print into each other.
		check_rping "$n-c" $RPING_RESTART_N ""
	fi
	server_end "$n-s" "$crc" $G_SERVER
	check_rping "$n-s" $RPING_RESTART_N ""
	[ "$(count_lines "$cmd_log" "handoff: restored")" = 1 ] ||
		fail "the new cmd did not restore the state handed over"
}
ucmatose_case() {
	local n=$1 sw=$3 sa=$4 cw=$5 ca=$6 port=$7 crc=1
	[ $WRONG = 0 ] || ca=$8
	case_begin "$n" "$2"
	bg "$n-s" "$(who "$sw") ucmatose -b (server)" as "$sw" ucmatose -c 20 -b "$sa" -p "$port"
	if server_up "$n-s" "$port" "$(cm_of "$sw" "$sa")"; then
		bg "$n-c" "$(who "$cw") ucmatose -s (client)" as "$cw" ucmatose -c 20 -s "$ca" -p "$port"
		bg_end "$n-c" $G_CLIENT
		crc=$rc
		check_cma "$n-c" ucmatose
	fi
	server_end "$n-s" "$crc" $G_SERVER
	check_cma "$n-s" ucmatose
	[ "$(lines "$n-s" "^disconnected$")" = 1 ] || fail "${bglabel[$n-s]}: no \"disconnected\""
}
# udaddy's port is fixed (7174; its -p is the port space).
udaddy_case() {
	local n=$1 sw=$3 sa=$4 cw=$5 ca=$6 crc=1
	[ $WRONG = 0 ] || ca=$7
	case_begin "$n" "$2"
	bg "$n-s" "$(who "$sw") udaddy -b (server)" as "$sw" udaddy -b "$sa"
	if server_up "$n-s" 7174 "$(cm_of "$sw" "$sa")"; then
		bg "$n-c" "$(who "$cw") udaddy -s (client)" as "$cw" udaddy -s "$ca"
		bg_end "$n-c" $G_CLIENT
		crc=$rc
		check_cma "$n-c" udaddy
	fi
	server_end "$n-s" "$crc" $G_SERVER
	check_cma "$n-s" udaddy
}
# cmtime's server never exits: it must still be running when the client is
# done, then SIGTERM ends it. -t: the resolve timeout, 60 s instead of 2 s
# (all resolutions at once in the TCG guest must not fail on speed).
# 200 connections, all at once: with 1000 on a loaded host, one round of
# the daemon's umad writes (a REQ and a REP per connection, each building
# an address handle in the TCG guest's kernel: ~1 ms idle, several loaded)
# outlasts the CM response timeout librdmacm asks for (4.3 s), every REQ
# and REP is sent again and the retransmissions swamp the loop: a verdict
# on the machine's speed. 200 keeps a round under a second, loaded; the
# 1000-connection figures are scripts/bench-rxe.sh's.
cmtime_case() {
	local n=$1 sa=$3 ca=$4 port=$5 c=200 t=60000
	# --wrong-address: each resolution waits its whole timeout, three
	# times (-r 2 retries): 10 connections and cmtime's own 2 s timeout.
	[ $WRONG = 0 ] || ca=$6 c=10 t=2000
	case_begin "$n" "$2"
	bg "$n-s" "$(who w) cmtime (server)" as w cmtime -b "$sa" -p "$port"
	if server_up "$n-s" "$port" "$(cm_of w "$sa")"; then
		bg "$n-c" "$(who w) cmtime -c $c" as w cmtime -c $c -s "$ca" -p "$port" -t $t
		bg_end "$n-c" $G_CMTIME
		[ $rc = 0 ] || fail "cmtime -c $c exited $rc"
		[ "$(lines "$n-c" "error|fail")" = 0 ] || fail "cmtime -c $c reported errors"
		if [ "$(lines "$n-c" "^step +total ms")" != 1 ] ||
			[ "$(lines "$n-c" "^connect +: +[0-9.]+ ")" != 1 ] ||
			[ "$(lines "$n-c" "^disconnect +: +[0-9.]+ ")" != 1 ]; then
			fail "cmtime -c $c printed no step table"
		fi
	fi
	kill -0 "${bgpid[$n-s]}" 2>/dev/null || fail "cmtime's server died"
	kill -TERM "${bgpid[$n-s]}" 2>/dev/null
	bg_end "$n-s" 30
}
# perftest -R: both its control channel (the test parameters) and the
# test's QP are rdma_cm connections to the same port; its server listens
# on the wildcard address (its --source_ip is taken by the raw-Ethernet
# option). -d: perftest opens the device itself, so it must be the one
# rdma_cm binds to. -F: no cpufreq warning. Both sides print the result
# line: bytes, iterations, peak, average, message rate. --wrong-address:
# a wildcard listener takes every local address, so the client aims at a
# port where nobody listens instead.
perftest_case() {
	local n=$1 prog=$2 port=$3 cport=$3 crc=1 s='[[:space:]]+' f='[0-9.]+'
	local resline="^[[:space:]]*4096${s}200$s$f$s$f$s$f" try
	[ $WRONG = 0 ] || cport=$((port + 1000))
	case_begin "$n" "$prog -R, 4096 bytes x 200"
	# perftest -R races itself: after its control connection's
	# handshake, the client connects the test QP at once while the server
	# only then creates, binds and listens on its new listener; a REQ that
	# wins gets REJ 8 (nobody listens: the kernel's CM answers the same),
	# and perftest's retry of it then uses the ids it just destroyed
	# (SIGSEGV). That one outcome, and only it, is tried again (3 times at
	# most, each on a port of its own); any other failure fails the case.
	for try in 1 2 3; do
		bg "$n-s" "$(who w) $prog -R (server)" as w "$prog" -R -F -d rxe1 -s 4096 -n 200 -p "$port"
		if server_up "$n-s" "$port" "$(cm_of w "$V4B")"; then
			bg "$n-c" "$(who w) $prog -R $V4B" as w "$prog" -R -F -d rxe0 -s 4096 -n 200 -p "$cport" "$V4B"
			bg_end "$n-c" $G_CLIENT
			crc=$rc
			if [ $rc != 0 ] && [ $WRONG = 0 ] && [ $try -lt 3 ] &&
				[ "$(lines "$n-c" "Event: RDMA_CM_EVENT_REJECTED; error: 8\.")" -ge 1 ]; then
				echo "   perftest's own race (its server not yet listening again): try $((try + 1))"
				kill -TERM "${bgpid[$n-s]}" 2>/dev/null
				bg_end "$n-s" $G_SERVER
				port=$((port + 10)) cport=$port
				continue
			fi
			[ $rc = 0 ] || fail "$prog client exited $rc"
			[ "$(lines "$n-c" "$resline")" = 1 ] || fail "$prog client printed no result line"
		fi
		break
	done
	server_end "$n-s" "$crc" $G_SERVER
	[ $rc = 0 ] || fail "$prog server exited $rc"
	[ "$(lines "$n-s" "$resline")" = 1 ] || fail "$prog server printed no result line"
}

# ---- addresses, cmd, the kernel CM -------------------------------------------
gid_of() { # DEV INDEX: the sysfs GID, as an address (fe80::...)
	local g
	read -r g <"/sys/class/infiniband/$1/ports/1/gids/$2" || return 1
	echo "$g"
}
A0=$(gid_of rxe0 "${CMD_VM_RXE0_GID_INDEX:-0}") || exit 1
A1=$(gid_of rxe1 "${CMD_VM_RXE1_GID_INDEX:-0}") || exit 1
say "kernel $(uname -r); $LAYOUT layout$([ $KONLY = 1 ] && echo ", kernel only")$([ $WRONG = 1 ] && echo ", clients at wrong addresses")"
echo "   rxe0: $A0 on veth0; rxe1: $A1 on veth1"
[ $KONLY = 1 ] || echo "   wrapper: $WRAPPER"
if [ "$LAYOUT" = cmd2 ]; then
	# perftest is IPv4 only; before cmd reads its GID tables.
	veth_ipv4 || fail "ipv4 set-up"
fi
if [ $KONLY = 0 ]; then
	if [ "$LAYOUT" = cmd2 ]; then
		devs=(--device rxe0 --device rxe1) nports=2
	else
		devs=(--device rxe0) nports=1
	fi
	if ! cmd_start $nports 15 "${devs[@]}"; then
		show "$dir/cmd.log"
		fail "cmd did not come up"
		exit 1
	fi
	show "$dir/cmd.log"
	export CMD_SOCKET=$SOCK
fi
cm_ready_loaded
say "harness: modprobe ib_cm rdma_cm rdma_ucm: exit $mrc"
[ "$mrc" = 0 ] || {
	fail "the kernel CM could not be loaded"
	exit 1
}
if [ $KONLY = 0 ]; then
	[ ! -e /sys/class/infiniband/rxe0/ports/1/cm_rx_msgs ] ||
		fail "ib_cm attached to rxe0, which cmd holds"
	if [ "$LAYOUT" = cmd2 ]; then
		[ ! -e /sys/class/infiniband/rxe1/ports/1/cm_rx_msgs ] ||
			fail "ib_cm attached to rxe1, which cmd holds"
	else
		[ -e /sys/class/infiniband/rxe1/ports/1/cm_rx_msgs ] ||
			fail "ib_cm is not attached to rxe1"
	fi
fi

# From rxe0's side the peer is A1 scoped to veth0, from rxe1's A0 scoped
# to veth1 (the route lookup then leaves by that veth: its rxe device).
# --wrong-address: fe80::1 on the client's veth, which no device has
# (neighbour discovery goes unanswered).
TO1=$A1%veth0 AT1=$A1%veth1 TO0=$A0%veth1 AT0=$A0%veth0
NO0=fe80::1%veth0 NO1=fe80::1%veth1
if [ "$LAYOUT" = cmd2 ]; then
	if want rping; then
		rping_case rping "rping -C 10, both sides through cmd" \
			w "$AT1" w "$TO1" 7471 "$NO0"
		ctr_expect req_sent 1 rep_sent 1
		case_end
	fi
	if want ucmatose; then
		ucmatose_case ucmatose "ucmatose -c 20, both sides through cmd" \
			w "$AT1" w "$TO1" 7472 "$NO0"
		ctr_expect req_sent 20 rep_sent 20
		case_end
	fi
	if want udaddy; then
		udaddy_case udaddy "udaddy (UD, SIDR), both sides through cmd" \
			w "$AT1" w "$TO1" "$NO0"
		ctr_expect sidr_req_sent 1 sidr_rep_sent 1
		case_end
	fi
	if want cmtime; then
		cmtime_case cmtime "cmtime -c 200, both sides through cmd" \
			"$AT1" "$TO1" 7473 "$NO0"
		ctr_expect req_sent 200 rep_sent 200
		case_end
	fi
	# cmd's own case: nothing to restart without it.
	if want rping-restart && [ $KONLY = 0 ]; then
		rping_restart_case
		# The disconnect after the restart went through the new daemon;
		# nothing was refused.
		ctr_expect dreq_sent 1 sessions_resumed 2 handoffs_restored 1
		ctr_read
		[ "${ctr[rej_sent]:-0}" = "${c0[rej_sent]:-0}" ] ||
			fail "cmd sent a REJ in $cname"
		case_end
	fi
	if want send_bw; then
		perftest_case send_bw ib_send_bw 18515
		ctr_expect req_sent 1 rep_sent 1
		case_end
	fi
	if want write_bw; then
		perftest_case write_bw ib_write_bw 18516
		ctr_expect req_sent 1 rep_sent 1
		case_end
	fi
else
	if want rping-to-kernel; then
		rping_case rping-to-kernel "wrapped rping -c (rxe0) -> kernel rping -s (rxe1)" \
			k "$AT1" w "$TO1" 7481 "$NO0"
		ctr_expect req_sent 1 rep_received 1
		case_end
	fi
	if want rping-from-kernel; then
		rping_case rping-from-kernel "kernel rping -c (rxe1) -> wrapped rping -s (rxe0)" \
			w "$AT0" k "$TO0" 7482 "$NO1"
		ctr_expect req_received 1 rep_sent 1
		case_end
	fi
	if want ucmatose-to-kernel; then
		ucmatose_case ucmatose-to-kernel "wrapped ucmatose -c 20 (rxe0) -> kernel (rxe1)" \
			k "$AT1" w "$TO1" 7483 "$NO0"
		ctr_expect req_sent 20 rep_received 20
		case_end
	fi
	if want ucmatose-from-kernel; then
		ucmatose_case ucmatose-from-kernel "kernel ucmatose -c 20 (rxe1) -> wrapped (rxe0)" \
			w "$AT0" k "$TO0" 7484 "$NO1"
		ctr_expect req_received 20 rep_sent 20
		case_end
	fi
	if want udaddy-to-kernel; then
		udaddy_case udaddy-to-kernel "wrapped udaddy (rxe0) -> kernel udaddy (rxe1)" \
			k "$AT1" w "$TO1" "$NO0"
		ctr_expect sidr_req_sent 1 sidr_rep_received 1
		case_end
	fi
	if want udaddy-from-kernel; then
		udaddy_case udaddy-from-kernel "kernel udaddy (rxe1) -> wrapped udaddy (rxe0)" \
			w "$AT0" k "$TO0" "$NO1"
		ctr_expect sidr_req_received 1 sidr_rep_sent 1
		case_end
	fi
	if want both-cms; then
		rping_case both-cms "wrapped rping -s on rxe1 (kernel CM) <- wrapped rping -c from rxe0 (cmd)" \
			w "$AT1" w "$TO1" 7485 "$NO0"
		ctr_expect req_sent 1 rep_received 1
		case_end
	fi
fi

# ---- end ----------------------------------------------------------------------
# cmd-clean: every program has exited, so every id of theirs is gone from
# the daemon once the timewaits are over (60 s: a hang guard); nothing
# malformed, no transmit error; cmd exits 0 on SIGTERM.
if [ $KONLY = 0 ]; then
	case_begin cmd-clean "cmctl counters: nothing left, no errors; cmd exits 0"
	read_counters 60 mad_rx mad_tx mad_tx_errors mad_malformed req_sent \
		rep_sent rej_sent sidr_req_sent sidr_rep_sent timeouts ids records
	check_counters_clean
	if [ "${ctr[ids]:-x}" != 0 ] || [ "${ctr[records]:-x}" != 0 ]; then
		echo "-- cmctl ids"
		"$CMCTL" -s "$SOCK" ids >"$dir/ids.log" 2>&1
		show "$dir/ids.log"
	fi
	cmd_stop
	case_end
fi
summary
say_verdict "rdmacm $LAYOUT"
