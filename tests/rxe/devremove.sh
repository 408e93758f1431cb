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
B=$(cd "$B" && pwd) || exit 1
CMD=$B/daemon/cmd
CMCTL=$B/client-lib/cmctl
PROBE=$B/tests/rxe/devremove
failures=0

if [ ! -e /sys/class/infiniband/rxe0 ] || [ -z "${CMD_VM:-}" ]; then
	echo "devremove.sh: SKIP: needs the VM's rxe0 (run it through tests/vm/run.sh)"
	exit 77
fi
fail() {
	echo "devremove.sh: FAIL: $*"
	failures=$((failures + 1))
}
dir=/run/cmd-devremove.$$
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
	rdma link delete rxe2 2>/dev/null
	ip link delete dr0 2>/dev/null
	rm -rf "$dir"
}
trap cleanup EXIT

modprobe veth || {
	echo "devremove.sh: SKIP: no veth module"
	exit 77
}
echo 0 >/proc/sys/net/ipv6/conf/default/accept_dad
ip link add dr0 type veth peer name dr1 || exit 1
ip link set dr0 up && ip link set dr1 up || exit 1
rdma link add rxe1 type rxe netdev dr0 || exit 1
rdma link add rxe2 type rxe netdev dr1 || exit 1
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

"$CMD" --socket "$SOCK" >"$dir/cmd.log" 2>&1 &
cmd_pid=$!
for _ in $(seq 400); do
	[ "$(count_lines "$dir/cmd.log" "serving")" -ge 3 ] && [ -S "$SOCK" ] && break
	nap 0.05
done
"$PROBE" "$SOCK" rxe1 rxe2 rdma link delete rxe2 || fail "devremove"
[ -e /sys/class/infiniband/rxe2 ] && fail "rxe2 still exists"
kill -0 "$cmd_pid" 2>/dev/null || fail "cmd died"
"$CMCTL" -s "$SOCK" ports >"$dir/ports" 2>&1 || fail "cmctl ports"
echo "== cmctl ports:"
while IFS= read -r line; do echo "   $line"; done <"$dir/ports"
[ "$(count_lines "$dir/ports" "^rxe2/1 +[0-9]+ +no +DOWN")" = 1 ] ||
	fail "cmctl ports does not list rxe2/1 as down"
[ "$(count_lines "$dir/ports" "^rxe1/1 +[0-9]+ +yes +ACTIVE")" = 1 ] ||
	fail "cmctl ports does not list rxe1/1 as active"

kill -TERM "$cmd_pid"
wait "$cmd_pid"
rc=$?
cmd_pid=
[ "$rc" = 0 ] || fail "cmd exited $rc on SIGTERM"
echo "== cmd's log:"
while IFS= read -r line; do echo "   $line"; done <"$dir/cmd.log"
n=$(count_lines "$dir/cmd.log" "rxe2: device removed: its umad ports and verbs context are closed")
[ "$n" = 1 ] || fail "$n 'rxe2: device removed' lines, want 1"
n=$(count_lines "$dir/cmd.log" "rxe2 port 1: device removed")
[ "$n" = 1 ] || fail "$n 'rxe2 port 1: device removed' lines, want 1"
n=$(count_lines "$dir/cmd.log" "port [0-9]+ removed: told the owners of 2 ids \(DEVICE_REMOVAL\)")
[ "$n" = 1 ] || fail "$n 'told the owners of 2 ids' lines, want 1"

if [ "$failures" = 0 ]; then
	echo "devremove.sh: PASS"
	exit 0
fi
echo "devremove.sh: $failures failure(s)"
exit 1
