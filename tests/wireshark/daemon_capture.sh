#!/bin/sh
# SPDX-License-Identifier: MIT
#
# cmd_cm.lua and cmmad on the daemon's own captures: two daemons with
# --pcap on the simulated fabric (as tests/capture/capture.sh), COUNT
# cmc_ping connections, then, for both captures, every cmd_cm field tshark
# reports against `cmmad decode` of the same file (compare.py), and the
# REQs' flow labels and packet rates as the daemon sent them.
#
#   daemon_capture.sh CMC_PING CMD_CM_LUA CMMAD [ib|roce]
#
# CMHUB and CMD name cmhub and cmd. Exit 77 (meson: skipped) only when
# tshark is missing and cannot be installed.
set -u
# shellcheck source=tests/lib/procs.sh
. "$(dirname "$0")/../lib/procs.sh"

PING=${1:?usage: daemon_capture.sh CMC_PING CMD_CM_LUA CMMAD [ib|roce]}
LUA=${2:?usage: daemon_capture.sh CMC_PING CMD_CM_LUA CMMAD [ib|roce]}
CMMAD=${3:?usage: daemon_capture.sh CMC_PING CMD_CM_LUA CMMAD [ib|roce]}
MODE=${4:-ib}
case $MODE in
ib) sim_opt="" dest=lid:33 ;;
roce) sim_opt="--sim-roce" dest=127.0.2.1 ;;
*)
	echo "daemon_capture.sh: mode is ib or roce" >&2
	exit 2
	;;
esac
: "${CMHUB:?CMHUB must name cmhub}" "${CMD:?CMD must name cmd}"
COUNT=3

# shellcheck source=tests/lib/tshark.sh
. "$(dirname "$0")/../lib/tshark.sh"

dir=$(mktemp -d /tmp/cmd-wscap-XXXXXX) || exit 1
pids=""
daemons=""
# shellcheck disable=SC2317 # called by the trap
cleanup() {
	# shellcheck disable=SC2086 # a list of pids
	stop_procs daemon_capture.sh $pids
	rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
fail=0
err() {
	echo "FAIL: $*"
	fail=1
}
die() {
	fail_logs daemon_capture.sh "FAIL: $*"
}
wait_for() {
	wait_until daemon_capture.sh "$@"
}
export WIRESHARK_CONFIG_DIR="$dir/wireshark"
mkdir "$WIRESHARK_CONFIG_DIR"
user0='uat:user_dlts:"User 0 (DLT=147)","infiniband","0","","0",""'

"$CMHUB" --seed 11 "$dir/hub" >"$dir/hub.log" 2>&1 &
pids="$pids $!"
wait_for "cmhub" "$CMHUB" --ctl "$dir/hub" stats
for n in 1 2; do
	# shellcheck disable=SC2086 # sim_opt is empty or one option
	"$CMD" --sim "$dir/hub" --node $n $sim_opt --socket "$dir/cmd$n.sock" \
		--packet-life-time 8 --log-level info \
		--pcap "$dir/node$n.pcap" >"$dir/cmd$n.log" 2>&1 &
	pids="$pids $!"
	daemons="$daemons $!"
done
wait_for "cmd on node 1" test -S "$dir/cmd1.sock"
wait_for "cmd on node 2" test -S "$dir/cmd2.sock"
# Hang guards only (well under a second on an idle machine).
timeout 100 "$PING" -l -n $COUNT -s "$dir/cmd2.sock" >"$dir/server.log" 2>&1 &
server=$!
pids="$pids $server"
wait_for "the listener" grep -q '^listening' "$dir/server.log"
timeout 90 "$PING" -c $COUNT -s "$dir/cmd1.sock" $dest >"$dir/client.log" 2>&1
client_rc=$?
[ $client_rc -eq 0 ] || kill $server 2>/dev/null
wait $server
server_rc=$?
[ $client_rc -eq 0 ] || die "cmc_ping client exited $client_rc"
[ $server_rc -eq 0 ] || die "cmc_ping listener exited $server_rc"
for p in $daemons; do kill "$p"; done # the capture is flushed at exit
for p in $daemons; do wait "$p" || err "cmd (pid $p) exited $?"; done

for n in 1 2; do
	f="$dir/node$n.pcap"
	"$CMMAD" decode "$f" >"$dir/node$n.cmmad" ||
		err "cmmad decode node $n's capture exited $?"
	tshark -o "$user0" -X "lua_script:$LUA" -r "$f" -T json -J cmd_cm \
		>"$dir/node$n.json" 2>"$dir/tshark.err" ||
		{ cat "$dir/tshark.err"; die "tshark on node $n's capture"; }
	grep -q 'Lua: Error' "$dir/tshark.err" && { cat "$dir/tshark.err"; err "Lua"; }
	nrec=$(grep -c '^# record ' "$dir/node$n.cmmad")
	# REQ REP RTU DREQ DREP per connection: at least 5 * COUNT MADs.
	[ "$nrec" -ge $((5 * COUNT)) ] || err "node $n: only $nrec records"
	/usr/bin/python3 "$(dirname "$0")/compare.py" "$dir/node$n.cmmad" \
		"$dir/node$n.json" "node$n-$MODE" "$nrec" >"$dir/cmp$n" ||
		{ grep FAIL "$dir/cmp$n"; err "node $n: cmd_cm and cmmad disagree"; }
	tail -1 "$dir/cmp$n"
done
echo "--- node 1's first REQ: stock tshark, cmd_cm, cmmad"
tshark -o "$user0" -r "$dir/node1.pcap" -Y infiniband.cm.req -c 1 -T fields \
	-e infiniband.cm.req.prim_flowlabel -e infiniband.cm.req.prim_pktrate \
	2>/dev/null
tshark -o "$user0" -X "lua_script:$LUA" -r "$dir/node1.pcap" -Y cmd_cm.req.local_comm_id \
	-c 1 -T fields -e cmd_cm.req.primary_flow_label \
	-e cmd_cm.req.primary_packet_rate 2>/dev/null
grep -m2 -E '^primary_(flow_label|packet_rate):' "$dir/node1.cmmad"

[ "$fail" = 0 ] && echo "PASS"
exit "$fail"
