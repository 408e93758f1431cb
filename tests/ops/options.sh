#!/bin/sh
# shellcheck disable=SC2086 # $C is two words on purpose
# SPDX-License-Identifier: MIT
#
# The daemon's start-up errors (issue 18): each bad option, config file or
# combination is refused with exit status 2 and exactly two lines on
# stderr, the first naming the option and the bad value, the second
# "Try 'cmd --help' for more information." -- no usage text, and nothing
# served before.
#
#   options.sh CMD
set -u
CMD=${1:?usage: options.sh CMD}
tmp=$(mktemp -d /tmp/cmd-options-XXXXXX) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0
try="Try 'cmd --help' for more information."

# refused MESSAGE ARGS...: cmd ARGS exits 2, stderr is MESSAGE and $try.
refused() {
	want=$1
	shift
	"$CMD" "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
	st=$?
	printf '%s\n%s\n' "$want" "$try" >"$tmp/want"
	if [ $st -ne 2 ] || ! cmp -s "$tmp/want" "$tmp/err" || [ -s "$tmp/out" ]; then
		echo "FAIL: cmd $*: exit $st (want 2); stderr:" >&2
		sed 's/^/  | /' "$tmp/err" >&2
		echo "  want:" >&2
		sed 's/^/  | /' "$tmp/want" >&2
		fail=1
	else
		echo "ok   cmd $*: $want"
	fi
}

C="--config /dev/null"
refused "cmd: --max-held: 'abc' is not a number from 0 to 1048576" $C --max-held abc
refused "cmd: --max-held: 'abc' is not a number from 0 to 1048576" $C --max-held=abc
refused "cmd: --max-held: '-1' is not a number from 0 to 1048576" $C --max-held -1
refused "cmd: --max-clients: '0' is not a number from 1 to 1048576" $C --max-clients 0
refused "cmd: --log-level: 'lots' is not a log level (err, warn, notice, info, debug)" $C -l lots
refused "cmd: unknown option '--bogus'" $C --bogus
refused "cmd: unknown option '-x'" $C -x
refused "cmd: --max-held: needs a value" $C --max-held
refused "cmd: unexpected argument 'extra'" $C extra
# Contradictions, naming both options.
refused "cmd: --node is for --sim: there is no --sim" $C --node 3
refused "cmd: --sim-ports is for --sim: there is no --sim" $C --sim-ports 2
refused "cmd: --sim-roce is for --sim: there is no --sim" $C --sim-roce
refused "cmd: --sim needs --node" $C --sim "$tmp/hub"
refused "cmd: --device and --sim: the simulated fabric serves its own ports, not devices" \
	$C --sim "$tmp/hub" --node 1 --device mlx5_0
refused "cmd: --resume-timeout and --state-file '': without a state file nothing resumes" \
	$C --state-file '' --resume-timeout 5
# --device: DEV/PORT (cmctl ports, rdma link) and DEV:PORT.
refused "cmd: --device: 'mlx5_0/x': the port after '/' is not a number from 1 to 255" $C --device mlx5_0/x
refused "cmd: --device: 'mlx5_0:0': the port after ':' is not a number from 1 to 255" $C --device mlx5_0:0
refused "cmd: --device: 'mlx5_0/1/2': the port after '/' is not a number from 1 to 255" $C --device mlx5_0/1/2
refused "cmd: --device: '/1' is not a device name" $C --device /1
# The config file: a directory, a missing one, bad lines (file:line: key).
refused "cmd: config file $tmp: Is a directory" --config "$tmp"
refused "cmd: config file $tmp/none.conf: No such file or directory" --config "$tmp/none.conf"
printf '# limits\nmax-held = lots\n' >"$tmp/bad.conf"
refused "cmd: $tmp/bad.conf:2: max-held: 'lots' is not a number from 0 to 1048576" --config "$tmp/bad.conf"
printf 'max-helt = 3\n' >"$tmp/bad.conf"
refused "cmd: $tmp/bad.conf:1: unknown option 'max-helt'" --config "$tmp/bad.conf"
printf 'socket\n' >"$tmp/bad.conf"
refused "cmd: $tmp/bad.conf:1: socket: no value ('socket = VALUE')" --config "$tmp/bad.conf"
printf 'device = mlx5_0/1\nsim-roce = yes\n' >"$tmp/bad.conf"
refused "cmd: $tmp/bad.conf:2: sim-roce takes no value, got 'yes'" --config "$tmp/bad.conf"
# A socket directory that is not there: refused before anything is served.
refused "cmd: --socket $tmp/nodir/cmd.sock: directory $tmp/nodir: No such file or directory" \
	$C --sim "$tmp/hub" --node 1 --socket "$tmp/nodir/cmd.sock"
: >"$tmp/file"
refused "cmd: --socket $tmp/file/cmd.sock: $tmp/file is not a directory" \
	$C --sim "$tmp/hub" --node 1 --socket "$tmp/file/cmd.sock"

# DEV/PORT and DEV:PORT parse (no RDMA device here: the start fails
# later, with status 1, not as a configuration error).
for d in rxe0/1 rxe0:1 rxe0; do
	"$CMD" $C --device $d --socket "$tmp/s.sock" >/dev/null 2>"$tmp/err"
	st=$?
	if [ $st -eq 2 ]; then
		echo "FAIL: --device $d refused as a configuration error:" >&2
		cat "$tmp/err" >&2
		fail=1
	else
		echo "ok   --device $d accepted (exit $st, no RDMA device here)"
	fi
done
# Under systemd (INVOCATION_ID) every line has its priority, the
# authorization rule parser's own included.
INVOCATION_ID=0123 "$CMD" $C --listen-allow "nobody-such tcp:1" \
	>/dev/null 2>"$tmp/err"
if grep -qv '^<[0-7]>' "$tmp/err" || [ "$(wc -l <"$tmp/err")" -ne 3 ]; then
	echo "FAIL: a bad listen-allow rule under systemd: lines without a priority:" >&2
	sed 's/^/  | /' "$tmp/err" >&2
	fail=1
else
	echo "ok   a bad listen-allow rule under systemd: <3> on all 3 lines"
fi
# Help is asked for: on stdout, exit 0.
if ! "$CMD" --help >"$tmp/out" 2>&1 || ! grep -q '^usage: cmd' "$tmp/out"; then
	echo "FAIL: cmd --help" >&2
	fail=1
fi
grep -q 'DEV\[/PORT\]' "$tmp/out" ||
	{ echo "FAIL: cmd --help does not show DEV[/PORT]" >&2; fail=1; }

[ $fail -eq 0 ] && echo "options.sh: PASS"
exit $fail
