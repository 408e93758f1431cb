#!/bin/bash
# SPDX-License-Identifier: MIT
#
# cmctl against two daemons on the simulated fabric (node 1: sim1, LID
# 17; node 2: sim2, LID 33) holding one LID-routed connection
# (cmctl_hold), every check judged by a peer nobody here wrote where one
# exists: python's json, prometheus_client's two parsers (Debian's, so
# /usr/bin/python3), bash's completion machinery.
#
#   CMHUB=... CMD=... cmctl.sh CMCTL CMCTL_HOLD COMPLETION
#
# Each check says "ok" or "FAIL" and the script goes on, so that a run
# against a cmctl without a feature shows every check that feature
# fails; the exit status is 1 if any failed.
set -u
# shellcheck source=tests/lib/procs.sh
. "$(dirname "$0")/../lib/procs.sh"

CMCTL=${1:?usage: cmctl.sh CMCTL CMCTL_HOLD COMPLETION}
HOLD=${2:?usage: cmctl.sh CMCTL CMCTL_HOLD COMPLETION}
COMPLETION=${3:?usage: cmctl.sh CMCTL CMCTL_HOLD COMPLETION}
: "${CMHUB:?CMHUB must name cmhub}" "${CMD:?CMD must name cmd}"
OPERATIONS_MD=$(dirname "$0")/../../docs/OPERATIONS.md # its counter tables
PY=/usr/bin/python3

dir=$(mktemp -d /tmp/cmd-cmctl-XXXXXX) || exit 1
pids=""
failed=0
stopped=""

cleanup() {
	[ -n "$stopped" ] && kill -CONT "$stopped" 2>/dev/null
	exec 9>&- 2>/dev/null
	# shellcheck disable=SC2086 # a list of pids
	stop_procs cmctl.sh $pids
	rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

ok() { echo "ok: $*"; }
bad() {
	echo "FAIL: $*"
	failed=1
}
# matches TEXT ERE: TEXT matches the extended regular expression.
matches() { printf '%s\n' "$1" | grep -Eq -- "$2"; }
# check WHAT COMMAND...: ok if COMMAND succeeds.
check() {
	what=$1
	shift
	if "$@"; then ok "$what"; else bad "$what"; fi
}

S1=$dir/cmd1.sock
S2=$dir/cmd2.sock

"$CMHUB" --seed 5 "$dir/hub" >"$dir/hub.log" 2>&1 &
pids="$pids $!"
wait_until cmctl.sh "cmhub" "$CMHUB" --ctl "$dir/hub" stats
for n in 1 2; do
	"$CMD" --sim "$dir/hub" --node $n --socket "$dir/cmd$n.sock" \
		--log-level warn >"$dir/cmd$n.log" 2>&1 &
	pids="$pids $!"
	eval "cmd${n}_pid=$!"
done
# shellcheck disable=SC2154 # set by the eval above
d1=$cmd1_pid
wait_until cmctl.sh "cmd on node 1" "$CMCTL" -s "$S1" ports
wait_until cmctl.sh "cmd on node 2" "$CMCTL" -s "$S2" ports

# One connection, held while fd 9 stays open, captured on node 1. The
# timeout is a hang guard only.
"$CMCTL" -s "$S1" capture start "$dir/hold.pcap" >/dev/null ||
	bad "capture start"
mkfifo "$dir/hold.in"
timeout 250 "$HOLD" "$S2" "$S1" 33 <"$dir/hold.in" >"$dir/hold.log" 2>&1 &
pids="$pids $!"
exec 9>"$dir/hold.in"
wait_until cmctl.sh "the held connection" grep -q '^established' \
	"$dir/hold.log"
"$CMCTL" -s "$S1" capture stop >/dev/null || bad "capture stop"

# ---- list: the columns, hex comm ids and QPNs, DEV/PORT, lid:N -------
"$CMCTL" -s "$S1" list >"$dir/list1.txt" 2>&1
"$CMCTL" -s "$S2" list >"$dir/list2.txt" 2>&1
echo "--- cmctl list on node 1"
cat "$dir/list1.txt"
echo "--- cmctl list on node 2"
cat "$dir/list2.txt"
check "list header names PORT LQPN RQPN PID COMM" \
	grep -Eq '^ID +STATE .*LOCAL_CID +REMOTE_CID +PORT +LQPN +RQPN +PID +COMM ' \
	"$dir/list1.txt"
# node 1's connection: on sim1/1, our QP 0xabc, theirs 0xdef, peer LID 33,
# and its owner's name (the kernel cuts comm at 15 characters).
comm=$(basename "$HOLD" | cut -c1-15)
row1=$(grep ' ESTABLISHED ' "$dir/list1.txt")
check "node 1's connection: sim1/1, QPNs, owner name, lid:33" \
	matches "$row1" "^0x[0-9a-f]{8} +ESTABLISHED +0x0{12}1234 +0x0{16} +0x[0-9a-f]{8} +0x[0-9a-f]{8} +sim1/1 +0x000abc +0x000def +[0-9]+ +$comm +[0-9]+ +- +- +lid:33\$"
row2=$(grep ' ESTABLISHED ' "$dir/list2.txt")
check "node 2's connection: sim2/1, QPNs swapped, lid:17" \
	matches "$row2" " sim2/1 +0x000def +0x000abc .* lid:17\$"
# Each side's local comm id is the other's remote one.
l1=$(echo "$row1" | awk '{ print $5 }')
r1=$(echo "$row1" | awk '{ print $6 }')
l2=$(echo "$row2" | awk '{ print $5 }')
r2=$(echo "$row2" | awk '{ print $6 }')
check "comm ids cross-match ($l1/$r1 vs $l2/$r2)" \
	test -n "$l1" -a "$l1" = "$r2" -a "$r1" = "$l2"
# The daemon logs comm ids as 8 hex digits: what a reader greps for
# must be what cmctl printed (log level debug shows them; here the
# format is the point, so compare with printf's).
check "comm id is 0x%08x" test "$l1" = "$(printf '0x%08x' "$((l1))")"
check "the id column is the local comm id in hex" \
	matches "$row1" "^$l1 "
# Wireshark's reading of the same connection's REQ (node 1 sent it):
# the comm id and QPN as cmctl printed them, character for character.
if command -v tshark >/dev/null 2>&1; then
	mkdir -p "$dir/ws"
	WIRESHARK_CONFIG_DIR=$dir/ws tshark -o \
		'uat:user_dlts:"User 0 (DLT=147)","infiniband","0","","0",""' \
		-r "$dir/hold.pcap" -V >"$dir/hold.tshark" 2>/dev/null
	req_cid=$(grep -m1 'Local Communication ID:' "$dir/hold.tshark" |
		awk '{ print $NF }')
	req_qpn=$(grep -m1 'Local QPN:' "$dir/hold.tshark" | awk '{ print $NF }')
	echo "--- tshark: the REQ's Local Communication ID $req_cid, Local QPN $req_qpn"
	check "tshark shows cmctl's comm id ($req_cid) and QPN ($req_qpn)" \
		test "$req_cid" = "$l1" -a "$req_qpn" = 0x000abc
else
	echo "skip: tshark is not installed (scripts/install-deps.sh has it)"
fi

# ---- JSON (json-c) --------------------------------------------------
"$CMCTL" -s "$S1" --json list >"$dir/list1.json" 2>&1
check "list --json: the connection's fields" $PY -c '
import json, sys
want = {"port": "sim1/1", "local_qpn": "0x000abc", "remote_qpn": "0x000def",
        "remote_lid": 33, "peer": "lid:33", "owner_comm": sys.argv[2],
        "local_comm_id": sys.argv[3], "remote_comm_id": sys.argv[4]}
rows = [r for r in json.load(open(sys.argv[1])) if r["state"] == "ESTABLISHED"]
assert len(rows) == 1, rows
got = {k: rows[0].get(k) for k in want}
assert got == want, (got, want)
' "$dir/list1.json" "$comm" "$l1" "$r1"
for what in ports counters "counters --port sim1/1" listeners connections \
	ids; do
	# shellcheck disable=SC2086 # what is words
	check "--json $what parses" sh -c "'$CMCTL' -s '$S1' --json $what |
		$PY -c 'import json,sys; json.load(sys.stdin)'"
done
# A capture path with a double quote, a backslash and a tab: escaped.
weird="$dir/a\"b\\c	d.pcap"
"$CMCTL" -s "$S1" --json capture start "$weird" >"$dir/cap.json" 2>&1
echo "--- cmctl --json capture start '$weird'"
cat "$dir/cap.json"
check "capture --json: the path survives escaping" $PY -c '
import json, sys
o = json.load(open(sys.argv[1]))
assert o == {"capture": "started", "path": sys.argv[2]}, o
' "$dir/cap.json" "$weird"
check "capture --json stop parses" sh -c "'$CMCTL' -s '$S1' --json capture \
	stop | $PY -c 'import json,sys; assert json.load(sys.stdin) == {\"capture\": \"stopped\"}'"

# ---- the daemon's and the library's reasons (issue 18, point 2) -----
out=$("$CMCTL" -s "$S1" capture start /nonexistent-dir/x.pcap 2>&1)
echo "--- cmctl capture start /nonexistent-dir/x.pcap: $out"
check "capture to a missing directory names the file and the reason" \
	test "$out" = "cmctl: capture: cannot open /nonexistent-dir/x.pcap: No such file or directory"
out=$("$CMCTL" -s /nonexistent-dir/cmd.sock ports 2>&1)
echo "--- cmctl -s /nonexistent-dir/cmd.sock ports: $out"
check "an unreachable socket names the path and the reason" \
	test "$out" = "cmctl: cannot reach cmd at /nonexistent-dir/cmd.sock: No such file or directory"

# ---- one port notation ----------------------------------------------
check "ports prints sim1/1" sh -c "'$CMCTL' -s '$S1' ports | grep -q '^sim1/1 '"
"$CMCTL" -s "$S1" counters --port sim1/1 | awk '{ print $1 }' \
	>"$dir/port-slash" 2>&1
"$CMCTL" -s "$S1" counters --port sim1:1 | awk '{ print $1 }' \
	>"$dir/port-colon" 2>&1
check "--port sim1/1 and the old sim1:1 read the same port" \
	sh -c "grep -qx mad_rx '$dir/port-slash' && cmp -s '$dir/port-slash' '$dir/port-colon'"

# ---- errors that name the mistake -----------------------------------
# expect_usage WHAT STDERR-LINE ARGS...: exit 2, that line, then the
# one "Try" line, nothing else.
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
expect_usage "unknown command" "cmctl: unknown command 'frobnicate'" \
	frobnicate
expect_usage "unknown option" "cmctl: unknown option '--frob'" --frob ports
expect_usage "bad --port" \
	"cmctl: --port wants DEV/PORT (e.g. mlx5_0/1), not 'sim1'" \
	counters --port sim1
expect_usage "bad --timeout" \
	"cmctl: --timeout wants a number of seconds above 0, not '0'" \
	--timeout 0 ports
expect_usage "stray argument" "cmctl: 'ports' takes no arguments, not 'x'" \
	ports x
expect_usage "missing value" "cmctl: option '--port' needs a value" \
	counters --port
expect_usage "bad capture action" \
	"cmctl: unknown capture action 'begin' (start FILE or stop)" \
	capture begin

# ---- OpenMetrics / Prometheus text ----------------------------------
"$CMCTL" -s "$S1" metrics >"$dir/metrics.om" 2>&1
"$CMCTL" -s "$S1" metrics --format=prometheus >"$dir/metrics.prom" 2>&1
"$CMCTL" -s "$S1" --json counters >"$dir/counters.json" 2>&1
echo "--- cmctl metrics (excerpt)"
grep -E '^(# (HELP|TYPE) cmd_(mad_rx|conns|setup_duration_seconds)|cmd_mad_rx_total|cmd_conns\{state="established"\}|cmd_setup_duration_seconds_(bucket\{le="0.000(001|512)"\}|bucket\{le="\+Inf"\}|count|sum)|cmd_port_mad_rx_total|# EOF)' \
	"$dir/metrics.om"
cat >"$dir/check_metrics.py" <<'EOF'
import json, sys
from prometheus_client.parser import text_string_to_metric_families as prom
from prometheus_client.openmetrics.parser import \
    text_string_to_metric_families as om

fmt, path, counters = sys.argv[1], sys.argv[2], json.load(open(sys.argv[3]))
parse = om if fmt == "openmetrics" else prom
fams = {f.name: f for f in parse(open(path).read())}
assert not [n for n, f in fams.items() if f.type in ("unknown", "untyped")], \
    "untyped families: %s" % [n for n, f in fams.items()
                              if f.type in ("unknown", "untyped")]
# Every daemon counter is there, as what it is.
for name, value in counters.items():
    if name.startswith("setup_") or name.startswith("conns_"):
        continue
    f = fams["cmd_" + name]
    assert len(f.samples) == 1, (name, f.samples)
    s = f.samples[0]
    want = "cmd_" + name + ("_total" if f.type == "counter" else "")
    assert s.name == want and f.type in ("counter", "gauge"), (name, s)
    assert s.value <= value or f.type == "gauge", (name, s.value, value)
assert fams["cmd_mad_rx"].type == "counter"
assert fams["cmd_clients"].type == "gauge"
# What OPERATIONS.md calls a gauge, in a row of its own, is one here.
doc = open(sys.argv[4]).read().splitlines()
doc_gauges = [l.split("`")[1] for l in doc
              if l.startswith("| `") and l.count("`") == 2 and
              "(a gauge)" in l]
assert "sa_in_flight" in doc_gauges, doc_gauges
for name in doc_gauges:
    assert fams["cmd_" + name].type == "gauge", (name, fams["cmd_" + name])
states = {s.labels["state"] for s in fams["cmd_conns"].samples}
assert "established" in states and "listen" in states, states
# Per port: labelled.
pm = fams["cmd_port_mad_rx"].samples
assert [s.labels for s in pm] == [{"device": "sim1", "port": "1"}], pm
# The histogram: cumulative, +Inf == _count, at least the held setup.
h = fams["cmd_setup_duration_seconds"]
assert h.type == "histogram"
buckets = [(s.labels["le"], s.value) for s in h.samples
           if s.name.endswith("_bucket")]
count = [s.value for s in h.samples if s.name.endswith("_count")]
total = [s.value for s in h.samples if s.name.endswith("_sum")]
assert buckets[-1][0] == "+Inf", buckets[-1]
les = [float(le) for le, _ in buckets]
assert les == sorted(les) and len(set(les)) == len(les), les
vals = [v for _, v in buckets]
assert all(a <= b for a, b in zip(vals, vals[1:])), "not cumulative: %s" % vals
assert count == [vals[-1]] and vals[-1] >= 1, (count, vals)
assert len(total) == 1 and total[0] > 0, total
assert counters["setup_count"] == vals[-1], (counters["setup_count"], vals)
print("%s: %d families, histogram %d buckets, count %d" %
      (fmt, len(fams), len(buckets), vals[-1]))
EOF
check "metrics: OpenMetrics parser" $PY "$dir/check_metrics.py" openmetrics \
	"$dir/metrics.om" "$dir/counters.json" "$OPERATIONS_MD"
check "metrics --format=prometheus: Prometheus text parser" $PY \
	"$dir/check_metrics.py" prometheus "$dir/metrics.prom" \
	"$dir/counters.json" "$OPERATIONS_MD"
check "metrics ends with # EOF" sh -c "tail -n 1 '$dir/metrics.om' | grep -qx '# EOF'"
check "the daemon's setup_us_le_inf is setup_count (cumulative)" $PY -c '
import json, sys
c = json.load(open(sys.argv[1]))
assert c["setup_us_le_inf"] == c["setup_count"] >= 1, c
' "$dir/counters.json"

# ---- bash completion ------------------------------------------------
# complete_words WORDS...: what bash's completion for cmctl offers for
# the last word, one per line, sorted; the function is the one that
# sourcing the file registered with `complete`.
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
got=$(complete_words cmctl co | tr '\n' ' ')
check "completion: subcommands ('co' -> $got)" \
	test "$got" = "connections counters "
got=$(complete_words cmctl --ti | tr '\n' ' ')
check "completion: options ('--ti' -> $got)" test "$got" = "--timeout "
got=$(complete_words cmctl -s "$S1" counters --port "" | tr '\n' ' ')
check "completion: --port from cmctl ports ($got)" test "$got" = "sim1/1 "
got=$(complete_words cmctl --socket "$S2" metrics --port s | tr '\n' ' ')
check "completion: --port of the daemon --socket names ($got)" \
	test "$got" = "sim2/1 "
got=$(complete_words cmctl capture "" | tr '\n' ' ')
check "completion: capture start|stop ($got)" test "$got" = "start stop "
got=$(complete_words cmctl metrics --format "" | tr '\n' ' ')
check "completion: --format values ($got)" \
	test "$got" = "openmetrics prometheus "

# ---- a daemon that does not answer ----------------------------------
# SIGSTOP: the daemon's socket still accepts (the kernel queues the
# connection), but nothing can answer, however fast or slow the machine.
# The outer timeouts only guard against a cmctl that hangs.
kill -STOP "$d1"
stopped=$d1
timeout 60 "$CMCTL" -s "$S1" --timeout 1 list >"$dir/out" 2>"$dir/err"
rc=$?
echo "--- cmctl --timeout 1 list, daemon stopped: exit $rc"
cat "$dir/err"
check "stopped daemon, --timeout 1: exit 3 and the message" \
	sh -c "[ $rc -eq 3 ] && [ \"\$(cat '$dir/err')\" = 'cmctl: no answer from cmd at $S1 within 1 s' ]"
timeout 60 "$CMCTL" -s "$S1" counters >"$dir/out" 2>"$dir/err"
rc=$?
check "stopped daemon, default timeout: exit 3 within 5 s" \
	sh -c "[ $rc -eq 3 ] && [ \"\$(cat '$dir/err')\" = 'cmctl: no answer from cmd at $S1 within 5 s' ]"
kill -CONT "$d1"
stopped=""
check "the daemon answers again once continued" \
	sh -c "'$CMCTL' -s '$S1' ports >/dev/null"

exec 9>&-
if [ $failed -ne 0 ]; then
	fail_logs cmctl.sh "some checks failed"
fi
echo "PASS"
