#!/bin/bash
# SPDX-License-Identifier: MIT
#
# neigh.sh: the daemon never stalls on one peer (issue 13, item 3), on real
# soft-RoCE inside the VM of tests/vm/run.sh (rxe0 on lo).
#
#   neigh.sh BUILD_ROOT
#
# Setup, inside the VM only (it has no NIC, -nic none: nothing leaves it):
# a veth pair nb0/nb1, nb0 up with 192.0.2.1/24 and 2001:db8::1/64
# (documentation ranges, RFC 5737 / RFC 3849) and rxe1 on nb0. No address
# of those subnets is configured anywhere else, so ARP and ND for
# 192.0.2.2 and 2001:db8::2 go out of nb0, arrive on nb1 and are never
# answered: the kernel gives up after its 3 probes (~3 s).
#
# Then one cmd serves rxe0 and rxe1, and neigh_stall (see its header) has
# two clients connect to those two peers while other clients' calls and a
# loopback connection on rxe0 are timed; it checks they complete while the
# two resolutions are still outstanding, that each unreachable connect
# ends with one CONNECT_ERROR -EHOSTUNREACH, that a connect to an address
# with no route (2001:db8:1::7: the VM has no default route)
# fails at once with -ENETUNREACH, the counters, and that nothing is
# left. Here: the daemon logs exactly one notice line per failed
# destination, naming it, and exits 0 on SIGTERM.
#
# Exit: 0 pass, 1 fail, 77 not in a VM with rxe0 (or no veth).
set -u

B=${1:?usage: neigh.sh BUILD_ROOT}
B=$(cd "$B" && pwd) || exit 1
CMD=$B/daemon/cmd
PROBE=$B/tests/rxe/neigh_stall
failures=0

if [ ! -e /sys/class/infiniband/rxe0 ] || [ -z "${CMD_VM:-}" ]; then
	echo "neigh.sh: SKIP: needs the VM's rxe0 (run it through tests/vm/run.sh)"
	exit 77
fi
fail() {
	echo "neigh.sh: FAIL: $*"
	failures=$((failures + 1))
}
dir=/run/cmd-neigh.$$
mkdir -p "$dir" || exit 1
SOCK=$dir/cmd.sock
mkfifo "$dir/nap" && exec {NAP_FD}<>"$dir/nap" || exit 1
nap() { read -r -t "$1" -u "$NAP_FD" _ || :; }
count_lines() {
	local n=0 line
	while IFS= read -r line; do
		[[ $line =~ $2 ]] && n=$((n + 1))
	done <"$1"
	echo "$n"
}
cmd_pid=
cleanup() {
	[ -n "$cmd_pid" ] && kill "$cmd_pid" 2>/dev/null
	rdma link delete rxe1 2>/dev/null
	ip link delete nb0 2>/dev/null
	rm -rf "$dir"
}
trap cleanup EXIT

modprobe veth || {
	echo "neigh.sh: SKIP: no veth module"
	exit 77
}
ip link add nb0 type veth peer name nb1 || exit 1
ip link set nb1 up && ip link set nb0 up || exit 1
ip addr add 192.0.2.1/24 dev nb0 || exit 1
# nodad: usable at once (no second host could answer DAD anyway).
ip -6 addr add 2001:db8::1/64 dev nb0 nodad || exit 1
rdma link add rxe1 type rxe netdev nb0 || exit 1
# rxe adds GIDs for nb0's addresses as they appear: wait for both.
for _ in $(seq 100); do
	g=$(cat /sys/class/infiniband/rxe1/ports/1/gids/* 2>/dev/null)
	[[ $g == *0000:0000:0000:0000:0000:ffff:c000:0201* &&
		$g == *2001:0db8:0000:0000:0000:0000:0000:0001* ]] && break
	nap 0.1
done

"$CMD" --socket "$SOCK" >"$dir/cmd.log" 2>&1 &
cmd_pid=$!
for _ in $(seq 200); do
	[ "$(count_lines "$dir/cmd.log" "serving")" -ge 2 ] && [ -S "$SOCK" ] && break
	nap 0.05
done
"$PROBE" "$SOCK" || fail "neigh_stall"

kill -TERM "$cmd_pid"
wait "$cmd_pid"
rc=$?
cmd_pid=
[ "$rc" = 0 ] || fail "cmd exited $rc on SIGTERM"
echo "== cmd's log:"
while IFS= read -r line; do echo "   $line"; done <"$dir/cmd.log"
n4=$(count_lines "$dir/cmd.log" "neighbour 192\.0\.2\.2 on nb0 unresolved")
n6=$(count_lines "$dir/cmd.log" "neighbour 2001:db8::2 on nb0 unresolved")
[ "$n4" = 1 ] || fail "$n4 notice lines for 192.0.2.2, want 1"
[ "$n6" = 1 ] || fail "$n6 notice lines for 2001:db8::2, want 1"
[ "$(count_lines "$dir/cmd.log" "rxe1 port 1: neighbour")" = 2 ] ||
	fail "the notice lines must name rxe1 port 1"
nr=$(count_lines "$dir/cmd.log" "rxe1 port 1: no route to 2001:db8:1::7")
[ "$nr" = 1 ] || fail "$nr notice lines for 2001:db8:1::7 (no route), want 1"

if [ "$failures" = 0 ]; then
	echo "neigh.sh: PASS"
	exit 0
fi
echo "neigh.sh: $failures failure(s)"
exit 1
