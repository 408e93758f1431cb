#!/bin/bash
# SPDX-License-Identifier: MIT
#
# devremove.sh: DEVICE_REMOVAL when a device goes away (issue 14, item 5),
# on real soft-RoCE inside the VM of tests/vm/run.sh (rxe0 on lo).
#
#   devremove.sh BUILD_ROOT
#
# Setup, inside the VM only: a veth pair dr0/dr1 (no DAD, so the
# link-local addresses and their RoCE v2 GIDs appear at once) with the
# test's own rxe1 on dr0 and rxe2 on dr1; rxe0 stays as it is. One cmd
# serves all three. devremove (see its header) connects rxe1 -> rxe2 and
# runs `rdma link delete rxe2` in the background; its server side gets
# DEVICE_REMOVAL, lets go of rxe2, and the delete must complete; then a
# new connection on rxe0. Here: the daemon survived (it answers, and exits
# 0 on SIGTERM), logged the removal once at notice level (the device
# released, the ids told), and lists rxe2's port as down.
#
# Measured on the 6.1 guest (what the daemon can see while the delete
# waits): ib_umad's client is removed before ib_uverbs' (ib_umad is loaded
# last, and clients go in reverse order), so the umad fd gets POLLERR and
# read() EIO within ~0.2 s; the verbs async fd gets nothing; ib_uverbs'
# removal then waits until the last verbs context of the device is closed
# (the daemon's and the application's), and the delete ends ~0.3 s after.
#
# Exit: 0 pass, 1 fail, 77 not in a VM with rxe0 (or no veth).
set -u

B=${1:?usage: devremove.sh BUILD_ROOT}
PROBE=$B/tests/rxe/devremove
# shellcheck source=tests/lib/vmtest.sh
. "$(dirname "$0")/../lib/vmtest.sh"

need_vm_rxe0
vm_dir devremove

echo 0 >/proc/sys/net/ipv6/conf/default/accept_dad
veth_pair dr0 dr1
rxe_add rxe1 dr0
rxe_add rxe2 dr1
# Each port ACTIVE with its fe80 RoCE v2 GID (60 s: a hang guard).
for d in rxe1 rxe2; do
	for ((n = 0; ; n++)); do
		st=
		read -r _ st <"/sys/class/infiniband/$d/ports/1/state" 2>/dev/null
		g=$(cat /sys/class/infiniband/$d/ports/1/gids/* 2>/dev/null)
		[ "$st" = ACTIVE ] && [[ $g == *fe80:* ]] && break
		((n < 1200)) || { echo "devremove.sh: $d not ready"; exit 1; }
		nap 0.05
	done
done

cmd_start 3 20
"$PROBE" "$SOCK" rxe1 rxe2 rdma link delete rxe2 || fail "devremove"
[ -e /sys/class/infiniband/rxe2 ] && fail "rxe2 still exists"
kill -0 "$cmd_pid" 2>/dev/null || fail "cmd died"
"$CMCTL" -s "$SOCK" ports >"$dir/ports" 2>&1 || fail "cmctl ports"
echo "== cmctl ports:"
show "$dir/ports"
[ "$(count_lines "$dir/ports" "^rxe2/1 +[0-9]+ +no +DOWN")" = 1 ] ||
	fail "cmctl ports does not list rxe2/1 as down"
[ "$(count_lines "$dir/ports" "^rxe1/1 +[0-9]+ +yes +ACTIVE")" = 1 ] ||
	fail "cmctl ports does not list rxe1/1 as active"

cmd_stop
echo "== cmd's log:"
show "$dir/cmd.log"
n=$(count_lines "$dir/cmd.log" "rxe2: device removed: its umad ports and verbs context are closed")
[ "$n" = 1 ] || fail "$n 'rxe2: device removed' lines, want 1"
n=$(count_lines "$dir/cmd.log" "rxe2 port 1: device removed")
[ "$n" = 1 ] || fail "$n 'rxe2 port 1: device removed' lines, want 1"
n=$(count_lines "$dir/cmd.log" "port [0-9]+ removed: told the owners of 2 ids \(DEVICE_REMOVAL\)")
[ "$n" = 1 ] || fail "$n 'told the owners of 2 ids' lines, want 1"

exit_verdict
