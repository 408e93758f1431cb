#!/bin/sh
# SPDX-License-Identifier: MIT
#
# cmclient(3)'s EXAMPLE, compiled from the page's own text and run on the
# simulated fabric, so that the example cannot rot: a hub, two daemons
# (node 1: LID 17, node 2: LID 33), the example's server on node 2 and its
# client on node 1 connecting to LID 33. Both must exit 0, the server must
# have gone through REQ_RECEIVED, ESTABLISHED, DREQ_RECEIVED and
# TIMEWAIT_EXIT, the client through REP_RECEIVED, DREP_RECEIVED and
# TIMEWAIT_EXIT, and neither daemon may hold an id afterwards.
#
#   CMHUB=... CMD=... CMCTL=... example.sh PAGE EXTRACT_PY INCDIR LIBDIR
set -u
# shellcheck source=tests/lib/procs.sh
. "$(dirname "$0")/../lib/procs.sh"

page=${1:?usage: example.sh PAGE EXTRACT_PY INCDIR LIBDIR}
extract=${2:?}
incdir=${3:?}
libdir=${4:?}
: "${CMHUB:?CMHUB must name cmhub}" "${CMD:?CMD must name cmd}"
: "${CMCTL:?CMCTL must name cmctl}"

dir=$(mktemp -d /tmp/cmd-manex-XXXXXX) || exit 1
pids=""
cleanup() {
	# shellcheck disable=SC2086 # a list of pids
	stop_procs example.sh $pids
	rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
fail() {
	fail_logs example.sh "FAIL: $*"
}

python3 "$extract" "$page" >"$dir/example.c" || fail "no EXAMPLE in $page"
# A sanitized library wants its application built the same way.
# shellcheck disable=SC2086 # SANITIZE_FLAGS is a list of options
${CC:-cc} -Wall -Wextra -Werror ${SANITIZE_FLAGS:-} -I"$incdir" \
	-o "$dir/example" "$dir/example.c" \
	-L"$libdir" -Wl,-rpath,"$libdir" -lcmclient -libverbs ||
	fail "cmclient(3)'s EXAMPLE does not compile"

"$CMHUB" --seed 7 "$dir/hub" >"$dir/hub.log" 2>&1 &
pids="$pids $!"
wait_until example.sh "cmhub" "$CMHUB" --ctl "$dir/hub" stats
for n in 1 2; do
	"$CMD" --sim "$dir/hub" --node $n --socket "$dir/cmd$n.sock" \
		--packet-life-time 8 --log-level warn >"$dir/cmd$n.log" 2>&1 &
	pids="$pids $!"
done
for n in 1 2; do
	wait_until example.sh "cmd on node $n" "$CMCTL" -s "$dir/cmd$n.sock" counters
done

# The timeouts are hang guards only (the handshake takes milliseconds).
CMD_SOCKET=$dir/cmd2.sock timeout 200 "$dir/example" >"$dir/server.log" 2>&1 &
server=$!
pids="$pids $server"
wait_until example.sh "the example's listener" grep -q '^listening' "$dir/server.log"
CMD_SOCKET=$dir/cmd1.sock timeout 200 "$dir/example" 33 >"$dir/client.log" 2>&1
client_rc=$?
[ $client_rc -eq 0 ] || kill $server 2>/dev/null
wait $server
server_rc=$?
echo "--- server (exit $server_rc)"
cat "$dir/server.log"
echo "--- client (exit $client_rc)"
cat "$dir/client.log"
[ $server_rc -eq 0 ] || fail "the example's server exited $server_rc"
[ $client_rc -eq 0 ] || fail "the example's client exited $client_rc"

# The events, in order, exactly.
printf 'listening\nREQ_RECEIVED\nESTABLISHED\nDREQ_RECEIVED\nTIMEWAIT_EXIT\n' \
	>"$dir/server.want"
printf 'REP_RECEIVED\nserver says "hello"\nDREP_RECEIVED\nTIMEWAIT_EXIT\n' \
	>"$dir/client.want"
diff -u "$dir/server.want" "$dir/server.log" || fail "server's events"
diff -u "$dir/client.want" "$dir/client.log" || fail "client's events"

# Nothing left behind: a destroyed id's record leaves after timewait.
for n in 1 2; do
	left=
	for _ in $(seq 300); do
		left=$("$CMCTL" -s "$dir/cmd$n.sock" counters |
			awk '$1 == "ids" || $1 == "records" { s += $2 } END { print s + 0 }')
		[ "$left" = 0 ] && break
		sleep 0.1
	done
	[ "$left" = 0 ] || fail "node $n still holds ids or records"
done
echo "example.sh: PASS"
