#!/bin/bash
# SPDX-License-Identifier: MIT
#
# bench-restart.sh: what a restart that hands over costs, by the number of
# connections. Runs tests/integ/test_restart (two daemons on the sim
# fabric, N established connections plus 1,000 held handshakes, each
# daemon restarted five times: A with SIGTERM, B with SIGUSR2) for each
# N in LEVELS, and prints from the daemons' own log lines:
#   save ms     handoff_save: drain, serialize, write (median of the ten)
#   bytes       the state file's size
#   to-serving  from the end of the save to the successor having restored
#               it ("saved X ms ago": process start, umad/sim open, read,
#               restore), median
#   gap ms      the test's: from the signal until the clients saw both
#               daemons' connection counts again, longest
#
#   scripts/bench-restart.sh [BUILD]      (default build)
#   LEVELS="10000 100000" scripts/bench-restart.sh
#
# A benchmark: it prints numbers and asserts only what the test asserts.
set -u
B=${1:-build}
LEVELS=${LEVELS:-"10000 100000"}
exe=$B/tests/integ/test_restart
[ -x "$exe" ] || {
	echo "bench-restart: $exe not built" >&2
	exit 2
}
median() { sort -n | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)]; else print "-" }'; }
printf '%10s %10s %12s %12s %10s %s\n' conns "save ms" bytes "to-serving" "gap ms" result
for n in $LEVELS; do
	log=$(mktemp)
	CMHUB=$B/tools/cmhub CMD=$B/daemon/cmd CMD_LOG_LEVEL=notice \
		LD_LIBRARY_PATH=$B/client-lib RESTART_EST=$n \
		"$exe" >"$log" 2>&1
	rc=$?
	# Only the restarts' saves, not the two at the end of the test.
	save=$(grep -o 'sessions saved in [^ ]* ([0-9]* bytes, [0-9.]* ms)' "$log" |
		head -10 | sed 's/.*, \([0-9.]*\) ms)/\1/' | median)
	bytes=$(grep -o 'sessions saved in [^ ]* ([0-9]* bytes' "$log" | head -1 |
		sed 's/.*(\([0-9]*\) bytes/\1/')
	serving=$(grep -o 'saved [0-9.]* ms ago' "$log" | awk '{ print $2 }' | median)
	gap=$(grep -o 'longest gap [0-9]* ms' "$log" | awk '{ print $3 }')
	printf '%10s %10s %12s %12s %10s %s\n' "$((n + 1000))" "$save" "${bytes:--}" \
		"$serving" "${gap:--}" "$([ $rc = 0 ] && echo ok || echo "FAIL (exit $rc, log $log)")"
	[ $rc = 0 ] && rm -f "$log"
done
