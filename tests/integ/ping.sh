#!/bin/sh
# SPDX-License-Identifier: MIT
#
# cmc_ping on the simulated fabric: a hub, two daemons (node 1: LID 17,
# node 2: LID 33), a listener on B and a client on A opening 200
# connections, 32 in flight, each through REQ/REP/RTU/DREQ/DREP/timewait.
# Both must exit 0, and afterwards neither daemon may hold an id.
#
#   CMHUB=... CMD=... ping.sh CMC_PING CMCTL
#
# Everything lives in a temporary directory; every process started here
# is stopped on exit, whatever the outcome.
set -u
# shellcheck source=tests/lib/procs.sh
. "$(dirname "$0")/../lib/procs.sh"

PING=${1:?usage: ping.sh CMC_PING CMCTL}
CMCTL=${2:?usage: ping.sh CMC_PING CMCTL}
: "${CMHUB:?CMHUB must name cmhub}" "${CMD:?CMD must name cmd}"
COUNT=200
IN_FLIGHT=32

dir=$(mktemp -d /tmp/cmd-ping-XXXXXX) || exit 1
pids=""

cleanup() {
	# shellcheck disable=SC2086 # a list of pids
	stop_procs ping.sh $pids
	rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

fail() {
	fail_logs ping.sh "FAIL: $*"
}

wait_for() {
	wait_until ping.sh "$@"
}

# The value of one of a daemon's global counters.
counter() {
	"$CMCTL" -s "$1" counters | awk -v n="$2" '$1 == n { print $2 }'
}

"$CMHUB" --seed 11 "$dir/hub" >"$dir/hub.log" 2>&1 &
pids="$pids $!"
wait_for "cmhub" "$CMHUB" --ctl "$dir/hub" stats

daemons=
for n in 1 2; do
	"$CMD" --sim "$dir/hub" --node $n --socket "$dir/cmd$n.sock" \
		--packet-life-time 8 --log-level warn >"$dir/cmd$n.log" 2>&1 &
	pids="$pids $!"
	daemons="$daemons $!"
done
wait_for "cmd on node 1" "$CMCTL" -s "$dir/cmd1.sock" counters
wait_for "cmd on node 2" "$CMCTL" -s "$dir/cmd2.sock" counters

# The listener prints its "listening" line once cmc_listen() returned.
# The timeouts are hang guards (200 connections take well under a second
# on an idle machine), inside meson's 120 s.
timeout 100 "$PING" -l -n $COUNT -s "$dir/cmd2.sock" >"$dir/server.log" 2>&1 &
server=$!
pids="$pids $server"
wait_for "the listener" grep -q '^listening' "$dir/server.log"

timeout 90 "$PING" -c $COUNT -m $IN_FLIGHT -s "$dir/cmd1.sock" lid:33 \
	>"$dir/client.log" 2>&1
client_rc=$?
# A failed client leaves the listener waiting for connections that will
# not come: stop it (it prints its summary on SIGTERM) rather than wait.
[ $client_rc -eq 0 ] || kill $server 2>/dev/null
wait $server
server_rc=$?

echo "--- client: cmc_ping -c $COUNT -m $IN_FLIGHT lid:33 (exit $client_rc)"
cat "$dir/client.log"
echo "--- server: cmc_ping -l -n $COUNT (exit $server_rc)"
cat "$dir/server.log"
[ $client_rc -eq 0 ] || fail "client exited $client_rc"
[ $server_rc -eq 0 ] || fail "server exited $server_rc"

# Both clients are gone: the daemons must have let go of every id and
# record. They notice a closed client asynchronously, and a destroyed
# id's record finishes its timewait first (a few ms with
# --packet-life-time 8), so wait for both to reach 0, up to 30 s: a leak
# never gets there. The "ids" counter covers every client; `cmctl ids`
# lists only the caller's own ids unless it runs as root, so it is shown,
# not relied upon.
for n in 1 2; do
	sock="$dir/cmd$n.sock"
	for _ in $(seq 300); do
		[ "$(counter "$sock" ids)" = 0 ] &&
			[ "$(counter "$sock" records)" = 0 ] && break
		sleep 0.1
	done
	echo "--- cmd on node $n: cmctl ids"
	"$CMCTL" -s "$sock" ids || fail "cmctl on node $n"
	ids=$(counter "$sock" ids)
	records=$(counter "$sock" records)
	echo "ids $ids, connection records $records"
	[ "$ids" = 0 ] || fail "node $n still holds $ids id(s)"
	[ "$records" = 0 ] || fail "node $n still holds $records record(s)"
	rows=$("$CMCTL" -s "$sock" ids | tail -n +2 | wc -l)
	[ "$rows" -eq 0 ] || fail "node $n lists $rows id(s)"
done

# A daemon must exit 0 on SIGTERM: under ASan a leak or error report makes
# it exit non-zero, and that is how the sanitizer build notices one.
for p in $daemons; do
	kill "$p"
done
for p in $daemons; do
	rc=0
	wait "$p" || rc=$?
	if [ $rc -ne 0 ]; then
		cat "$dir"/cmd*.log
		fail "cmd (pid $p) exited $rc"
	fi
done
echo "ping.sh: PASS"
