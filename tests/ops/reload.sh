#!/bin/sh
# SPDX-License-Identifier: MIT
#
# SIGHUP reload on the simulated fabric (issue 18): a config file with a
# bad value anywhere changes nothing -- a warning names the option and the
# value, and the log level stays -- and a good one takes effect.
#
# The level is seen through an info line: the hub takes the daemon's port
# down and up; "port active" is logged at info. Once the daemon counted
# the two port events (cmctl counters), the line is there or not.
#
#   CMHUB=... CMD=... reload.sh CMCTL
set -u
# shellcheck source=tests/lib/procs.sh
. "$(dirname "$0")/../lib/procs.sh"
CMCTL=${1:?usage: reload.sh CMCTL}
: "${CMHUB:?CMHUB must name cmhub}" "${CMD:?CMD must name cmd}"

dir=$(mktemp -d /tmp/cmd-reload-XXXXXX) || exit 1
pids=""
cleanup() {
	# shellcheck disable=SC2086 # a list of pids
	stop_procs reload.sh $pids
	rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
fail() {
	fail_logs reload.sh "FAIL: $*"
}
counter() {
	"$CMCTL" -s "$dir/cmd.sock" counters | awk -v n="$1" '$1 == n { print $2 }'
}
# bounce N: the port down and up, and wait until the daemon counted the
# two events (N the count to reach).
bounce() {
	"$CMHUB" --ctl "$dir/hub" port 1 0 down >/dev/null || fail "port down"
	"$CMHUB" --ctl "$dir/hub" port 1 0 up >/dev/null || fail "port up"
	wait_until reload.sh "port_events $1" sh -c \
		"[ \"\$('$CMCTL' -s '$dir/cmd.sock' counters | awk '\$1 == \"port_events\" { print \$2 }')\" = $1 ]"
}
# hup N: SIGHUP, and wait for the Nth SIGHUP line (warning or notice).
hup() {
	kill -HUP "$daemon"
	wait_until reload.sh "SIGHUP line $1" sh -c \
		"[ \$(grep -c 'SIGHUP:' '$dir/cmd.log') -ge $1 ]"
}

"$CMHUB" "$dir/hub" >"$dir/hub.log" 2>&1 &
pids="$pids $!"
wait_until reload.sh "cmhub" "$CMHUB" --ctl "$dir/hub" stats

printf 'log-level = warn\nmax-held = 8\n' >"$dir/cmd.conf"
"$CMD" --config "$dir/cmd.conf" --sim "$dir/hub" --node 1 \
	--socket "$dir/cmd.sock" >"$dir/cmd.log" 2>&1 &
daemon=$!
pids="$pids $daemon"
wait_until reload.sh "cmd" "$CMCTL" -s "$dir/cmd.sock" counters

# 1. Bad values: nothing changes, the warning names option and value.
printf 'log-level = info\n# limits\nmax-held = lots\n' >"$dir/cmd.conf"
hup 1
grep -qxF "SIGHUP: $dir/cmd.conf:3: max-held: 'lots' is not a number from 0 to 1048576; nothing changed" \
	"$dir/cmd.log" || fail "no warning naming max-held and 'lots'"
echo "ok   bad max-held: warned"
printf 'log-level = info\nlisten-allow = nobody-such tcp:1\n' >"$dir/cmd.conf"
hup 2
grep -qF "SIGHUP: $dir/cmd.conf:2: listen-allow: bad rule 'nobody-such tcp:1'; nothing changed" \
	"$dir/cmd.log" || fail "no warning naming listen-allow and its rule"
echo "ok   bad listen-allow: warned"
printf 'log-level = loud\n' >"$dir/cmd.conf"
hup 3
grep -qxF "SIGHUP: $dir/cmd.conf:1: log-level: 'loud' is not a log level (err, warn, notice, info, debug); nothing changed" \
	"$dir/cmd.log" || fail "no warning naming log-level and 'loud'"
echo "ok   bad log-level: warned"
bounce 2
grep -q "port active" "$dir/cmd.log" &&
	fail "the log level changed to info after reloads that had errors"
echo "ok   log level still warn: no 'port active' line"

# 2. A good file: the level takes effect.
printf 'log-level = info\nmax-held = 16\n' >"$dir/cmd.conf"
hup 4
grep -qxF "SIGHUP: re-read $dir/cmd.conf: log level info" "$dir/cmd.log" ||
	fail "no notice of the good reload"
bounce 4
grep -q "sim1 port 1: port active" "$dir/cmd.log" ||
	fail "log level info after the good reload, but no 'port active' line"
echo "ok   good reload: log level info took effect"
kill -0 "$daemon" || fail "the daemon died"
echo "reload.sh: PASS"
