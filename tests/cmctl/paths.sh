#!/bin/bash
# SPDX-License-Identifier: MIT
#
# cmctl paths against two daemons on the simulated fabric (node 1: sim1,
# LID 17; node 2: sim2, LID 33), SA paths on: the empty cache as JSON
# (python's json judges it), --flush refused to a non-admin, --flush and
# its count, the command line's mistakes, bash completion; then a connect
# from node 1 to node 2 by GID, which asks the SA: its answer listed with
# node 2's LID, and --flush emptying the cache again (the hub is the SA,
# tools/cmhub_sa.c; a query that got no answer fails the test).
#
#   CMHUB=... CMD=... paths.sh CMCTL CMCTL_HOLD COMPLETION
set -u
# shellcheck source=tests/lib/procs.sh
. "$(dirname "$0")/../lib/procs.sh"

CMCTL=${1:?usage: paths.sh CMCTL CMCTL_HOLD COMPLETION}
HOLD=${2:?usage: paths.sh CMCTL CMCTL_HOLD COMPLETION}
COMPLETION=${3:?usage: paths.sh CMCTL CMCTL_HOLD COMPLETION}
: "${CMHUB:?CMHUB must name cmhub}" "${CMD:?CMD must name cmd}"
PY=/usr/bin/python3

dir=$(mktemp -d /tmp/cmd-paths-XXXXXX) || exit 1
# A user without privileges must reach the sockets.
chmod 755 "$dir"
pids=""
failed=0

cleanup() {
	exec 9>&- 2>/dev/null
	# shellcheck disable=SC2086 # a list of pids
	stop_procs paths.sh $pids
	rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

ok() { echo "ok: $*"; }
bad() {
	echo "FAIL: $*"
	failed=1
}
check() {
	what=$1
	shift
	if "$@"; then ok "$what"; else bad "$what"; fi
}
# py_check WHAT SCRIPT ARGS...: python3 judges (an assert fails it).
py_check() {
	what=$1
	shift
	check "$what" $PY -c "$@"
}

S1=$dir/cmd1.sock
S2=$dir/cmd2.sock

"$CMHUB" --seed 7 "$dir/hub" >"$dir/hub.log" 2>&1 &
pids="$pids $!"
wait_until paths.sh "cmhub" "$CMHUB" --ctl "$dir/hub" stats
# The hub answers SA queries at once; each attempt may wait 2 s, however
# loaded the machine. The lifetime is long enough that nothing expires
# during the test.
for n in 1 2; do
	"$CMD" --sim "$dir/hub" --node $n --socket "$dir/cmd$n.sock" \
		--sa on --sa-timeout 2000 --sa-retries 2 --path-lifetime 600 \
		--log-level info >"$dir/cmd$n.log" 2>&1 &
	pids="$pids $!"
done
wait_until paths.sh "cmd on node 1" "$CMCTL" -s "$S1" ports
wait_until paths.sh "cmd on node 2" "$CMCTL" -s "$S2" ports

# ---- nothing cached yet -----------------------------------------------
"$CMCTL" -s "$S1" --json paths >"$dir/empty.json" 2>&1
echo "--- cmctl --json paths, nothing cached: $(tr -d ' \n' <"$dir/empty.json")"
py_check "paths --json is an empty JSON list" '
import json, sys
assert json.load(open(sys.argv[1])) == [], open(sys.argv[1]).read()
' "$dir/empty.json"
"$CMCTL" -s "$S1" paths >"$dir/empty.txt" 2>&1
check "paths: the header and nothing else" sh -c "
	[ \$(wc -l <'$dir/empty.txt') -eq 1 ] &&
	grep -Eq '^PORT +DESTINATION +DLID +SL +MTU +RATE +PLT +PKEY +AGE_S +EXPIRES +HITS\$' '$dir/empty.txt'"

# ---- --flush: admin only ------------------------------------------------
# As a user that is neither root nor in an admin group (the daemons have
# none): ourselves, or when we are root, nobody through setpriv.
as_user=""
if [ "$(id -u)" -ne 0 ]; then
	as_user=" "
	who="uid $(id -u)"
elif command -v setpriv >/dev/null 2>&1; then
	as_user="setpriv --reuid=65534 --regid=65534 --clear-groups"
	who="uid 65534 (setpriv)"
fi
if [ -n "$as_user" ]; then
	# shellcheck disable=SC2086 # a command and its options
	$as_user "$CMCTL" -s "$S1" paths --flush >"$dir/out" 2>"$dir/err"
	rc=$?
	echo "--- cmctl paths --flush as $who: exit $rc: $(cat "$dir/err")"
	check "a non-admin's --flush: exit 1 and why" sh -c "[ $rc -eq 1 ] &&
		[ \"\$(cat '$dir/err')\" = 'cmctl: paths: flushing the path cache is for root and the admin group' ]"
	# shellcheck disable=SC2086
	check "a non-admin may read the cache" sh -c "$as_user '$CMCTL' -s '$S1' \
		--json paths | $PY -c 'import json,sys; assert json.load(sys.stdin) == []'"
else
	echo "skip: a non-admin's --flush: running as root without setpriv (util-linux) to become another user"
fi

out=$("$CMCTL" -s "$S1" paths --flush 2>&1)
check "--flush of the empty cache: '$out'" test "$out" = "flushed 0 path cache entries"
"$CMCTL" -s "$S1" --json paths --flush --port sim1/1 >"$dir/flush.json" 2>&1
py_check "--json paths --flush --port sim1/1" '
import json, sys
o = json.load(open(sys.argv[1]))
assert o == {"flushed": 0, "port": "sim1/1"}, o
' "$dir/flush.json"
out=$("$CMCTL" -s "$S1" paths --flush --port sim9/1 2>&1)
rc=$?
check "--flush --port of a port the daemon lacks: exit 1, named" sh -c "
	[ $rc -eq 1 ] && [ '$out' = 'cmctl: paths --flush: the daemon serves no port sim9/1 (cmctl ports lists them)' ]"

# ---- the command line's mistakes ----------------------------------------
expect_usage() {
	what=$1
	want=$2
	shift 2
	"$CMCTL" -s "$S1" "$@" >/dev/null 2>"$dir/err"
	rc=$?
	printf '%s\n%s\n' "$want" "Try 'cmctl --help' for more information." \
		>"$dir/err.want"
	if [ $rc -eq 2 ] && cmp -s "$dir/err" "$dir/err.want"; then
		ok "$what"
	else
		bad "$what (exit $rc): $(cat "$dir/err")"
	fi
}
expect_usage "--flush elsewhere" "cmctl: --flush goes with 'paths' only" \
	ports --flush
expect_usage "paths --port without --flush" \
	"cmctl: --port goes with 'paths --flush' only" paths --port sim1/1
expect_usage "paths takes no arguments" \
	"cmctl: 'paths' takes no arguments, not 'x'" paths x
check "--help names paths" sh -c "'$CMCTL' --help | grep -q 'paths \[--flush \[--port DEV/PORT\]\]'"

# ---- bash completion -----------------------------------------------------
complete_words() {
	bash --norc --noprofile -c '
		. "$1"
		shift
		spec=$(complete -p cmctl) || exit 1
		fn=${spec#*-F }
		fn=${fn%% *}
		COMP_WORDS=("$@")
		COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
		COMP_LINE="$*"
		COMP_POINT=${#COMP_LINE}
		"$fn" "$CMCTL_BIN" "${COMP_WORDS[COMP_CWORD]}" \
			"${COMP_WORDS[COMP_CWORD - 1]}"
		printf "%s\n" "${COMPREPLY[@]}" | sort' \
		sh "$COMPLETION" "$@"
}
export CMCTL_BIN=$CMCTL
got=$(complete_words cmctl pa | tr '\n' ' ')
check "completion: 'pa' -> $got" test "$got" = "paths "
got=$(complete_words cmctl paths --fl | tr '\n' ' ')
check "completion: '--fl' -> $got" test "$got" = "--flush "
got=$(complete_words cmctl -s "$S1" paths --flush --port "" | tr '\n' ' ')
check "completion: paths --flush --port ($got)" test "$got" = "sim1/1 "

# ---- a connect by GID asks the SA; its answer is cached -----------------
gid2=$("$CMCTL" -s "$S2" --json ports | $PY -c '
import json, sys
print(json.load(sys.stdin)[0]["gids"][0]["gid"])')
lid2=$("$CMCTL" -s "$S2" --json ports | $PY -c '
import json, sys
print(json.load(sys.stdin)[0]["lid"])')
echo "--- node 2: GID $gid2, LID $lid2; node 1 connects to it by GID"
mkfifo "$dir/hold.in"
timeout 120 "$HOLD" "$S2" "$S1" "$gid2" <"$dir/hold.in" >"$dir/hold.log" 2>&1 &
hold1=$!
pids="$pids $hold1"
exec 9>"$dir/hold.in"
# sa_counter NAME: node 1's counter.
sa_counter() {
	"$CMCTL" -s "$S1" --json counters | $PY -c '
import json, sys
print(json.load(sys.stdin)[sys.argv[1]])' "$1"
}
state=""
for _ in $(seq 300); do
	if grep -q '^established' "$dir/hold.log"; then
		state=established
		break
	fi
	if [ "$(sa_counter sa_failed)" -gt 0 ] 2>/dev/null; then
		state=sa_failed
		break
	fi
	sleep 0.1
done
echo "--- the connect: ${state:-no outcome within 30 s}"
if [ "$state" = established ]; then
	"$CMCTL" -s "$S1" --json paths >"$dir/one.json" 2>&1
	"$CMCTL" -s "$S1" paths
	py_check "paths --json: the SA's answer, by GID, DLID $lid2" '
import json, sys
rows = json.load(open(sys.argv[1]))
assert len(rows) == 1, rows
r = rows[0]
assert r["port"] == "sim1/1", r
assert r["destination"] == sys.argv[2] and r["asked_dlid"] == 0, r
assert r["dlid"] == int(sys.argv[3]), r
assert r["dgid"] == sys.argv[2], r
assert 1 <= r["expires_s"] <= 600 and r["age_s"] <= 120, r
assert r["mtu"] in (256, 512, 1024, 2048, 4096), r
' "$dir/one.json" "$gid2" "$lid2"
	# The same destination again (the first holder gone, its listener
	# with it): the CONNECT finds the cache's answer and its REQ goes at
	# once, a hit. (Node 2 rejects that REQ as stale, its QP numbers
	# being the first connection's, still in timewait: the hit is the
	# point, not the connection.)
	exec 9>&-
	wait "$hold1"
	timeout 120 "$HOLD" "$S2" "$S1" "$gid2" </dev/null >"$dir/hold2.log" 2>&1 &
	pids="$pids $!"
	for _ in $(seq 300); do
		[ "$(sa_counter sa_cache_hits)" -gt 0 ] 2>/dev/null && break
		sleep 0.1
	done
	"$CMCTL" -s "$S1" --json paths >"$dir/hit.json" 2>&1
	py_check "a second connect to $gid2: one entry, 1 hit" '
import json, sys
rows = json.load(open(sys.argv[1]))
assert len(rows) == 1 and rows[0]["hits"] == 1, rows
' "$dir/hit.json"
	check "sa_cache_hits 1, sa_queries 1" test \
		"$(sa_counter sa_cache_hits)/$(sa_counter sa_queries)" = 1/1
	out=$("$CMCTL" -s "$S1" paths --flush 2>&1)
	check "--flush: '$out'" test "$out" = "flushed 1 path cache entry"
	check "paths --json is empty after --flush" sh -c "'$CMCTL' -s '$S1' \
		--json paths | $PY -c 'import json,sys; assert json.load(sys.stdin) == []'"
	check "sa_cache_flushed counts it" test "$(sa_counter sa_cache_flushed)" -ge 1
else
	bad "the connect by GID (${state:-no outcome}; sa_timeouts $(sa_counter sa_timeouts), sa_answered $(sa_counter sa_answered)): $(cat "$dir/hold.log")"
fi

exec 9>&-
if [ $failed -ne 0 ]; then
	fail_logs paths.sh "some checks failed"
fi
echo "PASS"
