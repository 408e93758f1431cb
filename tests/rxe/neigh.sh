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
PROBE=$B/tests/rxe/neigh_stall
# shellcheck source=tests/lib/vmtest.sh
. "$(dirname "$0")/../lib/vmtest.sh"

need_vm_rxe0
vm_dir neigh

veth_pair nb0 nb1
ip addr add 192.0.2.1/24 dev nb0 || exit 1
# nodad: usable at once (no second host could answer DAD anyway).
ip -6 addr add 2001:db8::1/64 dev nb0 nodad || exit 1
rxe_add rxe1 nb0
# rxe adds GIDs for nb0's addresses as they appear: wait for both.
for _ in $(seq 100); do
	g=$(cat /sys/class/infiniband/rxe1/ports/1/gids/* 2>/dev/null)
	[[ $g == *0000:0000:0000:0000:0000:ffff:c000:0201* &&
		$g == *2001:0db8:0000:0000:0000:0000:0000:0001* ]] && break
	nap 0.1
done

cmd_start 2 10
"$PROBE" "$SOCK" || fail "neigh_stall"

cmd_stop
echo "== cmd's log:"
show "$dir/cmd.log"
n4=$(count_lines "$dir/cmd.log" "neighbour 192\.0\.2\.2 on nb0 unresolved")
n6=$(count_lines "$dir/cmd.log" "neighbour 2001:db8::2 on nb0 unresolved")
[ "$n4" = 1 ] || fail "$n4 notice lines for 192.0.2.2, want 1"
[ "$n6" = 1 ] || fail "$n6 notice lines for 2001:db8::2, want 1"
[ "$(count_lines "$dir/cmd.log" "rxe1 port 1: neighbour")" = 2 ] ||
	fail "the notice lines must name rxe1 port 1"
nr=$(count_lines "$dir/cmd.log" "rxe1 port 1: no route to 2001:db8:1::7")
[ "$nr" = 1 ] || fail "$nr notice lines for 2001:db8:1::7 (no route), want 1"

exit_verdict
