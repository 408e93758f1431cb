#!/bin/bash
# SPDX-License-Identifier: MIT
#
# bench-rxe-guest.sh: the half of scripts/bench-rxe.sh that runs inside the
# VM of tests/vm/run.sh --two-devices --with-kernel-cm. Connection setup
# and teardown on real soft-RoCE, side by side:
#
#   kernel  rdma-core's cmtime (rdmacm-utils), server and client on rxe1,
#           whose CM class the kernel's ib_cm owns; loopback to rxe1's
#           IPv6 link-local address (rdma_cm resolves it to rxe1 itself);
#   cmd     one cmd daemon serving rxe0 (it registers the CM class there
#           before the harness loads ib_cm), cmbench -l and cmbench on it,
#           loopback to rxe0's link-local GID;
#   rdmacm  the same cmtime, unmodified, through cmd-rdmacm (cmd's
#           librdmacm, rdmacm/) on rxe0: what an existing librdmacm
#           program gets from cmd, step by step against the kernel's.
#
# Both sides make a real RC QP per connection and move it INIT/RTR/RTS
# (cmtime through rdma_cm, cmbench --qp through cmc_modify_qp()), and
# both start all N connections at once: cmtime's client has no window
# (create all ids, resolve all, create all QPs, connect all, wait), so
# cmbench runs with -m N.
#
#   bench-rxe-guest.sh BUILD_ROOT
#
# Environment (scripts/bench-rxe.sh passes these through):
#   COUNTS="100 1000"  connection counts, one cmtime and one cmbench run each
#   REPEAT=1           runs per count (the machine is noisy)
#   CMBENCH_ARGS=      extra cmbench options, given to server and client
#                      (e.g. --async)
#   RUN_TIMEOUT=600    seconds any one cmtime or cmbench may take
#   BENCH_OUT=DIR      keep the logs there (default: a directory in /run)
#   MODES="kernel cmd rdmacm"  which of the three runs to make per count
#   BASE_LIBDIR=DIR    also run cmtime through another build's cmd
#                      librdmacm (DIR holds its librdmacm.so.1; mode
#                      "base", added to MODES): an A/B in one boot
#   PROFILE=perf       record every cmtime client run system-wide with
#                      perf (cpu-clock, call graphs) and print where the
#                      CPU went, by process and by function (perf is the
#                      host's linux-perf: 6.1, the guest kernel's version)
#
# Prints each run's step tables, then a summary and, last, one line of
# key=value pairs. A benchmark: no number fails it, but any run that errs
# does (exit 1). Exit 77 when not in such a VM.
set -u

B=${1:?usage: bench-rxe-guest.sh BUILD_ROOT}
B=$(cd "$B" && pwd) || exit 1
CMD=$B/daemon/cmd
CMCTL=$B/client-lib/cmctl
BENCH=$B/tools/cmbench
WRAP=$B/rdmacm/cmd-rdmacm
COUNTS=${COUNTS:-"100 1000"}
REPEAT=${REPEAT:-1}
CMBENCH_ARGS=${CMBENCH_ARGS:-}
RUN_TIMEOUT=${RUN_TIMEOUT:-600}
MODES=${MODES:-"kernel cmd rdmacm"}
BASE_LIBDIR=${BASE_LIBDIR:-}
[ -n "$BASE_LIBDIR" ] && [[ " $MODES " != *" base "* ]] && MODES+=" base"
PROFILE=${PROFILE:-}
T0=${EPOCHREALTIME/./}
errors=0
pids=()

if [ ! -e /sys/class/infiniband/rxe0 ] || [ ! -e /sys/class/infiniband/rxe1 ] ||
	[ -z "${CMD_VM_CM_READY:-}" ]; then
	echo "bench-rxe-guest.sh: SKIP: needs tests/vm/run.sh --two-devices --with-kernel-cm"
	exit 77
fi
command -v cmtime >/dev/null || {
	echo "bench-rxe-guest.sh: no cmtime (rdmacm-utils): run tests/vm/setup.sh" >&2
	exit 1
}
for f in "$CMD" "$CMCTL" "$BENCH" "$WRAP"; do
	[ -x "$f" ] || {
		echo "bench-rxe-guest.sh: $f missing" >&2
		exit 1
	}
done
for n in $COUNTS; do
	[[ $n =~ ^[1-9][0-9]*$ ]] || {
		echo "bench-rxe-guest.sh: COUNTS: not a count: $n" >&2
		exit 2
	}
done

dir=${BENCH_OUT:-/run/cmd-bench-rxe.$$}
mkdir -p "$dir" || exit 1
SOCK=/run/cmd-bench-rxe.$$.sock
# Sleep without a process: every exec costs 50-150 ms in the TCG guest.
mkfifo "/run/cmd-bench-rxe.$$.nap" && exec {NAP_FD}<>"/run/cmd-bench-rxe.$$.nap" || exit 1
nap() { read -r -t "$1" -u "$NAP_FD" _ || :; }
now_us() { echo "${EPOCHREALTIME/./}"; }
say() { printf '== [%d.%02d s] %s\n' $((($(now_us) - T0) / 1000000)) $((($(now_us) - T0) / 10000 % 100)) "$*"; }
error() {
	echo "bench-rxe-guest.sh: ERROR: $*"
	errors=$((errors + 1))
}
cleanup() {
	local p
	for p in ${pids[@]+"${pids[@]}"}; do kill "$p" 2>/dev/null; done
	for p in ${pids[@]+"${pids[@]}"}; do wait "$p" 2>/dev/null; done
	rm -f "$SOCK" "/run/cmd-bench-rxe.$$.nap"
}
trap cleanup EXIT
has_line() { # FILE REGEX
	local line
	while IFS= read -r line; do
		[[ $line =~ $2 ]] && return 0
	done <"$1"
	return 1
}
# wait_line FILE REGEX SECONDS PID: until FILE has a matching line; gives
# up when PID (the writer) is gone.
wait_line() {
	local end=$(($(now_us) + ${3}000000))
	while (($(now_us) < end)); do
		[ -f "$1" ] && has_line "$1" "$2" && return 0
		kill -0 "$4" 2>/dev/null || {
			[ -f "$1" ] && has_line "$1" "$2"
			return
		}
		nap 0.05
	done
	return 1
}
# The kernel has a listening rdma_cm id on this port (cmtime's server).
wait_kernel_listen() {
	local end=$(($(now_us) + ${2}000000)) out
	while (($(now_us) < end)); do
		out=$(rdma res show cm_id 2>/dev/null)
		[[ $out == *"LISTEN"*":$1 "* ]] && return 0
		nap 0.1
	done
	return 1
}
show() {
	local line
	while IFS= read -r line; do echo "   $line"; done <"$1"
}

read -r A0 <"/sys/class/infiniband/rxe0/ports/1/gids/${CMD_VM_RXE0_GID_INDEX:-0}" || exit 1
read -r A1 <"/sys/class/infiniband/rxe1/ports/1/gids/${CMD_VM_RXE1_GID_INDEX:-0}" || exit 1
say "kernel $(uname -r), $(nproc) vCPUs; cmtime $(command -v cmtime)"
echo "   rxe0 (cmd):    GID $A0 (index ${CMD_VM_RXE0_GID_INDEX:-0}) on veth0"
echo "   rxe1 (kernel): GID $A1 (index ${CMD_VM_RXE1_GID_INDEX:-0}) on veth1"
echo "   counts: $COUNTS, repeat $REPEAT, cmbench extra options: '${CMBENCH_ARGS}'"

# ---- cmd on rxe0 first, then the kernel CM (it gets rxe1 only) ------------
"$CMD" --device rxe0 --socket "$SOCK" --log-level notice >"$dir/cmd.log" 2>&1 &
cmd_pid=$!
pids+=("$cmd_pid")
# The socket answers once the agents are registered (main.c: the ports
# are opened before the socket listens).
end=$(($(now_us) + 15000000))
until "$CMCTL" -s "$SOCK" ports >"$dir/ports.log" 2>&1; do
	if ! kill -0 "$cmd_pid" 2>/dev/null || (($(now_us) >= end)); then
		show "$dir/cmd.log"
		error "cmd did not come up"
		exit 1
	fi
	nap 0.1
done
: >"$CMD_VM_CM_READY"
end=$(($(now_us) + 60000000))
while [ ! -e "$CMD_VM_CM_LOADED" ] && (($(now_us) < end)); do nap 0.05; done
read -r mrc <"$CMD_VM_CM_LOADED" 2>/dev/null || mrc=missing
[ "$mrc" = 0 ] || {
	error "the kernel CM could not be loaded (modprobe: $mrc)"
	exit 1
}
[ -e /sys/class/infiniband/rxe1/ports/1/cm_rx_msgs ] || error "ib_cm is not attached to rxe1"
[ ! -e /sys/class/infiniband/rxe0/ports/1/cm_rx_msgs ] || error "ib_cm attached to rxe0, which cmd holds"
[ $errors = 0 ] || exit 1
say "cmd (pid $cmd_pid) serves rxe0; ib_cm, rdma_cm, rdma_ucm loaded for rxe1"

# ib_cm's counters of rxe1 port 1, summed over the message types.
kctr_sum() {
	local f v s=0
	for f in /sys/class/infiniband/rxe1/ports/1/"$1"/*; do
		read -r v <"$f" 2>/dev/null && [[ $v =~ ^[0-9]+$ ]] && s=$((s + v))
	done
	echo "$s"
}

# cmd has a listener (cmtime's server through cmd-rdmacm) on this port.
wait_cmd_listen() {
	local end=$(($(now_us) + ${2}000000)) out
	local sid
	printf -v sid '0x%016x' $((0x1060000 + $1))
	while (($(now_us) < end)); do
		out=$("$CMCTL" -s "$SOCK" listeners 2>/dev/null)
		[[ $out == *"$sid"* ]] && return 0
		nap 0.1
	done
	return 1
}

# ---- PROFILE=perf: the whole guest while a client runs ----------------------
prof_pid=
prof_start() { # NAME
	[ "$PROFILE" = perf ] || return 0
	echo 0 >/proc/sys/kernel/kptr_restrict
	echo -1 >/proc/sys/kernel/perf_event_paranoid
	# Wall-clock sample times (-k realtime), so that perf script can
	# cut the samples at the client's step lines (timestamped by
	# prof_stamp); the guest's symbols, for perf report on the host.
	[ -f "$dir/kallsyms" ] || cat /proc/kallsyms >"$dir/kallsyms"
	perf record -a -g -F 999 -e cpu-clock -k realtime \
		-o "$dir/$1.perf.data" >"$dir/$1.perf.log" 2>&1 &
	prof_pid=$!
	nap 2 # perf's start-up: its mmaps of every CPU
}
# Each line of stdin, prefixed with the wall-clock time it was read.
prof_stamp() {
	local line
	while IFS= read -r line; do echo "${EPOCHREALTIME} $line"; done
}
if [ "$PROFILE" = perf ]; then
	# The first perf start-up reads its binary and libraries over 9p: a
	# warm-up, so that the first profiled run is recorded from its start.
	perf record -o /dev/null -e cpu-clock true >/dev/null 2>&1
	perf report -i /dev/null >/dev/null 2>&1
fi
prof_end() {
	[ -n "$prof_pid" ] || return 0
	kill -INT "$prof_pid" 2>/dev/null
	wait "$prof_pid" 2>/dev/null
	prof_pid=
}
prof_report() { # NAME
	[ -f "$dir/$1.perf.data" ] || return 0
	perf report -i "$dir/$1.perf.data" --no-children -g none --sort comm \
		--stdio 2>/dev/null | grep -v '^#' | grep -v '^$' | head -n 8 \
		>"$dir/$1.perf.comm.txt"
	perf report -i "$dir/$1.perf.data" --no-children -g none \
		--sort comm,dso,sym --stdio 2>/dev/null | grep -v '^#' |
		grep -v '^$' | head -n 40 >"$dir/$1.perf.sym.txt"
	perf report -i "$dir/$1.perf.data" --children -g none \
		--sort comm,sym --stdio 2>/dev/null | grep -v '^#' |
		grep -v '^$' | head -n 60 >"$dir/$1.perf.children.txt"
	echo "   perf: CPU by process, then by function (self), then with callees:"
	show "$dir/$1.perf.comm.txt"
	show "$dir/$1.perf.sym.txt"
	show "$dir/$1.perf.children.txt"
}

# ---- kernel and rdmacm: cmtime ------------------------------------------------
# run_cmtime NAME N PORT [rdmacm]: server and client on rxe1 (the kernel's
# rdma_cm), or with "rdmacm" on rxe0 through cmd-rdmacm; the server runs
# until it is stopped (cmtime's server never exits by itself).
run_cmtime() {
	local name=$1 n=$2 port=$3 srv rc t retr0 retr1 a=$A1%veth1 w=() line
	local what="kernel rdma_cm, rxe1 loopback"
	if [ "${4:-}" = rdmacm ]; then
		a=$A0%veth0 w=("$WRAP" --socket "$SOCK")
		what="cmd-rdmacm, rxe0 loopback"
	elif [ "${4:-}" = base ]; then
		a=$A0%veth0
		w=(env "CMD_RDMACM_LIBDIR=$BASE_LIBDIR" "$WRAP" --socket "$SOCK")
		what="cmd-rdmacm with $BASE_LIBDIR/librdmacm.so.1, rxe0 loopback"
	fi
	say "$name: cmtime -c $n ($what, port $port)"
	"${w[@]}" cmtime -b "$a" -p "$port" >"$dir/$name.server.log" 2>&1 &
	srv=$!
	pids+=("$srv")
	if [ ${#w[@]} = 0 ]; then
		wait_kernel_listen "$port" 20
	else
		wait_cmd_listen "$port" 20
	fi
	if [ $? != 0 ]; then
		show "$dir/$name.server.log"
		error "$name: cmtime's server did not listen"
		kill "$srv" 2>/dev/null
		return
	fi
	retr0=$(kctr_sum cm_tx_retries)
	prof_start "$name"
	t=$(now_us)
	if [ -n "$prof_pid" ]; then
		# Line-buffered, each step's line stamped when it comes.
		timeout -k 5 "$RUN_TIMEOUT" "${w[@]}" stdbuf -oL cmtime -s "$a" \
			-p "$port" -c "$n" 2>&1 | prof_stamp >"$dir/$name.stamps.txt"
		rc=${PIPESTATUS[0]}
		while IFS= read -r line; do
			echo "${line#* }"
		done <"$dir/$name.stamps.txt" >"$dir/$name.client.log"
	else
		timeout -k 5 "$RUN_TIMEOUT" "${w[@]}" cmtime -s "$a" -p "$port" \
			-c "$n" >"$dir/$name.client.log" 2>&1
		rc=$?
	fi
	t=$(($(now_us) - t))
	prof_end
	retr1=$(kctr_sum cm_tx_retries)
	kill "$srv" 2>/dev/null
	wait "$srv" 2>/dev/null
	echo "-- ${w[*]} cmtime -s $a -p $port -c $n (exit $rc, $((t / 1000)) ms)"
	show "$dir/$name.client.log"
	prof_report "$name"
	echo "   rxe1 ib_cm retransmissions during the run: $((retr1 - retr0))"
	[ $rc = 0 ] || error "$name: cmtime exited $rc"
	has_line "$dir/$name.client.log" "^connect *:" ||
		error "$name: cmtime printed no connect step"
	echo "$((retr1 - retr0))" >"$dir/$name.retx"
}

# ---- cmd: cmbench --qp --------------------------------------------------------
# cmd's counters into FILE; prints its MADs retransmitted so far (all kinds)
# and, on fd 3, the error counters that are not 0.
cmd_retx() {
	local k v retr=0 bad=""
	"$CMCTL" -s "$SOCK" counters >"$1" 2>&1 || return 1
	while read -r k v; do
		case $k in
		*_retransmitted) retr=$((retr + v)) ;;
		mad_tx_errors | mad_malformed | timeouts | *_duplicates) [ "$v" = 0 ] || bad+=" $k=$v" ;;
		esac
	done <"$1"
	echo "$retr"
	echo "$bad" >&3
}

# run_cmbench NAME N
run_cmbench() {
	local name=$1 n=$2 srv rc src t bad retr0 retr1
	local common=(-s "$SOCK" --qp -d rxe0 -g "${CMD_VM_RXE0_GID_INDEX:-0}" -p "$cmd_pid")
	# shellcheck disable=SC2206 # options, split on spaces on purpose
	local extra=($CMBENCH_ARGS)
	say "$name: cmbench --qp -c $n -m $n ${extra[*]} (cmd, rxe0 loopback)"
	timeout -k 5 "$RUN_TIMEOUT" "$BENCH" -l -n "$n" "${common[@]}" ${extra[@]+"${extra[@]}"} \
		>"$dir/$name.server.log" 2>&1 &
	srv=$!
	pids+=("$srv")
	if ! wait_line "$dir/$name.server.log" "^listening" 20 "$srv"; then
		show "$dir/$name.server.log"
		error "$name: the cmbench server did not listen"
		kill "$srv" 2>/dev/null
		return
	fi
	retr0=$(cmd_retx "$dir/$name.counters0.log" 3>/dev/null) || retr0=x
	t=$(now_us)
	timeout -k 5 "$RUN_TIMEOUT" "$BENCH" -c "$n" -m "$n" "${common[@]}" \
		${extra[@]+"${extra[@]}"} "$A0" >"$dir/$name.client.log" 2>&1
	rc=$?
	[ $rc = 0 ] || kill "$srv" 2>/dev/null
	wait "$srv"
	src=$?
	echo "-- cmbench -c $n -m $n ${common[*]} ${extra[*]} $A0 (exit $rc, $((($(now_us) - t) / 1000)) ms)"
	show "$dir/$name.client.log"
	echo "-- cmbench -l -n $n (exit $src)"
	show "$dir/$name.server.log"
	[ $rc = 0 ] || error "$name: cmbench client exited $rc"
	[ $src = 0 ] || error "$name: cmbench server exited $src"
	retr1=$(cmd_retx "$dir/$name.counters.log" 3>"$dir/$name.bad") || {
		error "$name: cmctl counters failed (is cmd alive?)"
		return
	}
	read -r bad <"$dir/$name.bad"
	[[ $retr0 =~ ^[0-9]+$ ]] && retr1=$((retr1 - retr0)) || retr1=x
	echo "   cmd MADs retransmitted during the run: $retr1"
	[ -z "$bad" ] || echo "   cmd since start:$bad"
	echo "$retr1" >"$dir/$name.retx"
}

names=()
port=7600
for r in $(seq "$REPEAT"); do
	for n in $COUNTS; do
		[[ " $MODES " == *" kernel "* ]] &&
			run_cmtime "kernel-$n.r$r" "$n" "$port"
		port=$((port + 1))
		[[ " $MODES " == *" cmd "* ]] && run_cmbench "cmd-$n.r$r" "$n"
		[[ " $MODES " == *" rdmacm "* ]] &&
			run_cmtime "rdmacm-$n.r$r" "$n" "$port" rdmacm
		port=$((port + 1))
		[ -n "$BASE_LIBDIR" ] &&
			run_cmtime "base-$n.r$r" "$n" "$port" base
		port=$((port + 1))
		names+=("$n.r$r")
	done
done

# ---- summary ----------------------------------------------------------------
# cmtime's table: "step : total_ms max_ms min_us us/conn". Its steps run
# one after the other, all connections at once: setup is create id +
# resolve addr + resolve route + create qp + connect (REQ to ESTABLISHED),
# teardown is disconnect (DREQ to DISCONNECTED) + destroy. cmbench's
# setup_s runs from its first create id to the last RTU, QPs created on
# the way; its teardown_s from the first DREQ to the last DREP, ids and QPs
# destroyed on the way. Rates in connections/s.
cmtime_ms() { # FILE STEP -> its total ms, or empty
	local line
	while IFS= read -r line; do
		if [[ $line =~ ^$2\ *:\ *([0-9.]+) ]]; then
			echo "${BASH_REMATCH[1]}"
			return
		fi
	done <"$1"
}
kv() { # FILE KEY -> the value of KEY= on the last line
	local last='' line w
	while IFS= read -r line; do last=$line; done <"$1"
	for w in $last; do
		[[ $w == "$2="* ]] && {
			echo "${w#*=}"
			return
		}
	done
}

echo
say "summary"
fmt='%-9s %6s %11s %11s %7s %11s %11s %7s %10s %10s %7s %7s\n'
# shellcheck disable=SC2059 # the format is the variable
printf "$fmt" run conns kern_setup/s cmd_setup/s ratio kern_down/s \
	cmd_down/s ratio kern_conn/s cmd_cpu_us k_retx c_retx
machine=""
for nm in "${names[@]}"; do
	n=${nm%%.*}
	kf="$dir/kernel-$nm.client.log" cf="$dir/cmd-$nm.client.log"
	{ [ -f "$kf" ] && [ -f "$cf" ]; } || continue
	vals=()
	for s in "create id" "resolve addr" "resolve route" "create qp" connect disconnect destroy; do
		v=$(cmtime_ms "$kf" "$s")
		vals+=("${v:-x}")
	done
	c_up=$(kv "$cf" setup_cps) c_down=$(kv "$cf" teardown_cps)
	c_cpu=$(kv "$cf" d0_cpu_setup_us_per_conn)
	line=$(awk -v n="$n" -v cid="${vals[0]}" -v ra="${vals[1]}" -v rr="${vals[2]}" \
		-v cq="${vals[3]}" -v co="${vals[4]}" -v di="${vals[5]}" -v de="${vals[6]}" \
		-v cu="${c_up:-x}" -v cd="${c_down:-x}" 'function ok(x) { return x ~ /^[0-9.]+$/ }
		BEGIN {
			ku = "x"; kd = "x"; kc = "x"; ru = "x"; rd = "x"
			if (ok(cid) && ok(ra) && ok(rr) && ok(cq) && ok(co) && cid + ra + rr + cq + co > 0)
				ku = sprintf("%.0f", n * 1000 / (cid + ra + rr + cq + co))
			if (ok(co) && co > 0) kc = sprintf("%.0f", n * 1000 / co)
			if (ok(di) && ok(de) && di + de > 0) kd = sprintf("%.0f", n * 1000 / (di + de))
			if (ku != "x" && ok(cu) && ku > 0) ru = sprintf("%.3f", cu / ku)
			if (kd != "x" && ok(cd) && kd > 0) rd = sprintf("%.3f", cd / kd)
			print ku, kd, kc, ru, rd
		}')
	read -r k_up k_down k_conn r_up r_down <<<"$line"
	k_retx=x c_retx=x
	read -r k_retx <"$dir/kernel-$nm.retx" 2>/dev/null
	read -r c_retx <"$dir/cmd-$nm.retx" 2>/dev/null
	# shellcheck disable=SC2059 # the format is the variable
	printf "$fmt" "$nm" "$n" "$k_up" "${c_up:-x}" "$r_up" "$k_down" \
		"${c_down:-x}" "$r_down" "$k_conn" "${c_cpu:-x}" "$k_retx" "$c_retx"
	p="n${nm/./_}"
	machine+=" ${p}_kernel_setup_cps=$k_up ${p}_cmd_setup_cps=${c_up:-x}"
	machine+=" ${p}_setup_ratio=$r_up ${p}_kernel_teardown_cps=$k_down"
	machine+=" ${p}_cmd_teardown_cps=${c_down:-x} ${p}_teardown_ratio=$r_down"
	machine+=" ${p}_kernel_connect_cps=$k_conn ${p}_cmd_cpu_setup_us_per_conn=${c_cpu:-x}"
	machine+=" ${p}_kernel_connect_ms=${vals[4]} ${p}_cmd_setup_s=$(kv "$cf" setup_s)"
	machine+=" ${p}_kernel_retransmitted=$k_retx ${p}_cmd_retransmitted=$c_retx"
done
echo
say "cmtime step by step: the kernel's rdma_cm (rxe1) / cmd-rdmacm (rxe0), us per connection"
sfmt='%-9s %-14s %10s %10s %7s %10s\n'
# shellcheck disable=SC2059 # the format is the variable
printf "$sfmt" run step kernel_us rdmacm_us ratio base_us
for nm in "${names[@]}"; do
	kf="$dir/kernel-$nm.client.log" wf="$dir/rdmacm-$nm.client.log"
	{ [ -f "$kf" ] && [ -f "$wf" ]; } || continue
	n=${nm%%.*}
	for s in "create id" "resolve addr" "resolve route" "create qp" connect disconnect destroy; do
		kv_=$(cmtime_ms "$kf" "$s") wv=$(cmtime_ms "$wf" "$s") bv=
		[ -f "$dir/base-$nm.client.log" ] && bv=$(cmtime_ms "$dir/base-$nm.client.log" "$s")
		line=$(awk -v n="$n" -v k="${kv_:-x}" -v w="${wv:-x}" -v b="${bv:--}" 'function ok(x) { return x ~ /^[0-9.]+$/ }
			BEGIN {
				ku = ok(k) ? sprintf("%.1f", k * 1000 / n) : "x"
				wu = ok(w) ? sprintf("%.1f", w * 1000 / n) : "x"
				bu = ok(b) ? sprintf("%.1f", b * 1000 / n) : "-"
				r = ok(k) && ok(w) && w > 0 ? sprintf("%.2f", k / w) : "x"
				print ku, wu, r, bu
			}')
		read -r ku wu r bu <<<"$line"
		# shellcheck disable=SC2059 # the format is the variable
		printf "$sfmt" "$nm" "$s" "$ku" "$wu" "$r" "$bu"
		machine+=" n${nm/./_}_${s// /_}_kernel_us=$ku n${nm/./_}_${s// /_}_rdmacm_us=$wu"
	done
done
echo "(cmtime's step totals / connections; ratio = kernel / rdmacm, > 1: cmd-rdmacm"
echo " is faster; the same binary, Debian's cmtime, unmodified)"

# The same binary's setup (create id .. connect) and teardown (disconnect
# + destroy) in connections/s, every run, then the median per count: the
# figures issue 16's first target is stated in.
echo
say "cmtime, same binary: setup and teardown, connections/s (ratio rdmacm / kernel)"
tfmt='%-9s %6s %11s %11s %7s %11s %11s %7s\n'
# shellcheck disable=SC2059 # the format is the variable
printf "$tfmt" run conns kern_up/s rdmacm_up/s ratio kern_down/s rdmacm_down/s ratio
declare -A up_r down_r
for lib in rdmacm base; do
for nm in "${names[@]}"; do
	kf="$dir/kernel-$nm.client.log" wf="$dir/$lib-$nm.client.log"
	{ [ -f "$kf" ] && [ -f "$wf" ]; } || continue
	n=${nm%%.*}
	v=()
	for f in "$kf" "$wf"; do
		for st in "create id" "resolve addr" "resolve route" "create qp" connect disconnect destroy; do
			x=$(cmtime_ms "$f" "$st")
			v+=("${x:-x}")
		done
	done
	line=$(awk -v n="$n" -v a="${v[*]}" 'function ok(x) { return x ~ /^[0-9.]+$/ }
		BEGIN {
			split(a, t, " ")
			for (i = 1; i <= 14; i++) if (!ok(t[i])) { print "x x x x x x"; exit }
			ku = n * 1000 / (t[1] + t[2] + t[3] + t[4] + t[5])
			kd = n * 1000 / (t[6] + t[7])
			wu = n * 1000 / (t[8] + t[9] + t[10] + t[11] + t[12])
			wd = n * 1000 / (t[13] + t[14])
			printf "%.0f %.0f %.3f %.0f %.0f %.3f\n", ku, wu, wu / ku, kd, wd, wd / kd
		}')
	read -r ku wu ru kd wd rd <<<"$line"
	# shellcheck disable=SC2059 # the format is the variable
	[ "$lib" = base ] && nm+=.base
	printf "$tfmt" "$nm" "$n" "$ku" "$wu" "$ru" "$kd" "$wd" "$rd"
	up_r[$lib$n]+=" $ru" down_r[$lib$n]+=" $rd"
	machine+=" n${nm//./_}_same_setup_ratio=$ru n${nm//./_}_same_teardown_ratio=$rd"
done
done
median() { # values... -> their median ("x" when there are none)
	printf '%s\n' "$@" | awk '/^[0-9.]+$/ { v[n++] = $1 }
		END {
			if (!n) { print "x"; exit }
			for (i = 0; i < n; i++) for (j = i + 1; j < n; j++)
				if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
			print n % 2 ? v[int(n / 2)] : (v[n / 2 - 1] + v[n / 2]) / 2
		}'
}
for lib in rdmacm base; do
	for n in $COUNTS; do
		[ -n "${up_r[$lib$n]:-}" ] || continue
		# shellcheck disable=SC2086 # lists of ratios
		mu=$(median ${up_r[$lib$n]}) md=$(median ${down_r[$lib$n]:-})
		echo "   $lib N=$n: median setup ratio $mu, teardown ratio $md (runs:${up_r[$lib$n]} /${down_r[$lib$n]:-})"
		[ $lib = base ] && p=base_ || p=
		machine+=" ${p}n${n}_same_setup_ratio_median=$mu ${p}n${n}_same_teardown_ratio_median=$md"
	done
done
echo
echo "(kern_setup: cmtime create id..connect; cmd_setup: cmbench, first create id to"
echo " last RTU; down: DREQ..DREP + destroy; ratio = cmd / kernel, > 1: cmd is"
echo " faster; kern_conn: cmtime's connect step alone; cmd_cpu_us: the daemon's"
echo " CPU per connection set up, both ends, rxe's work in its system calls"
echo " included; k_retx/c_retx: CM MADs retransmitted during the run, ib_cm's"
echo " on rxe1 / cmd's: a connect phase longer than the CM response timeout"
echo " (2^20 x 4.096 us + 2 packet lives: 4-5 s) makes REQs and REPs time out"
echo " and be sent again: the rate falls off a cliff)"

kill -TERM "$cmd_pid"
wait "$cmd_pid"
rc=$?
pids=()
[ $rc = 0 ] || error "cmd exited $rc on SIGTERM"
say "done: $errors error(s)"
echo "bench-rxe counts=${COUNTS// /,} repeat=$REPEAT errors=$errors$machine"
[ $errors = 0 ]
