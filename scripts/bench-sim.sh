#!/bin/sh
# SPDX-License-Identifier: MIT
#
# cmbench on the simulated fabric: a hub and two daemons (node 1: LID 17,
# node 2: LID 33), a cmbench server on node 2 and a cmbench client on
# node 1. Runs
#   1. rate and latency at 1, 100, 1000 and 10000 connections in flight
#      (N = max(2000, 2 * in flight) connections each, set up, held, torn
#      down);
#   2. one run holding BIG (100,000; BIG=1000000 for the million)
#      established connections in the daemon pair, with the scale curve
#      (daemon RSS and one-at-a-time connect latency at each of SAMPLE's
#      levels established);
# then prints a summary. Benchmarks, not tests: nothing here passes or
# fails on a number.
#
#   scripts/bench-sim.sh [BUILD_DIR]
#
# BUILD_DIR (default build-bench/ in the source tree) is set up and
# compiled if it has no tools/cmbench. Environment:
#   LEVELS="1 100 1000 10000"  in-flight levels of part 1 (empty: skip it)
#   REPEAT=1                   runs per level (the machine is noisy)
#   BIG=100000                 connections of part 2 (0: skip it); the
#                              daemons' --max-ids follows it
#   SAMPLE=                    part 2's curve levels, comma-separated
#                              (default: those of 10k, 25k, 50k, 100k,
#                              250k, 500k, 1M up to BIG)
#   BIG_INFLIGHT=1000          in flight during part 2
#   PROBE=200                  probe connections per curve level
#   RUN_TIMEOUT=600            seconds any one cmbench may take
#   KEEP=DIR                   copy the logs there
#   CMBENCH_ARGS=              more cmbench options for server and client,
#                              e.g. --async (libcmclient's pipelined mode)
#   PROFILE=strace|perf|callgrind  one more run of 2000 connections, 100 in
#                              flight, profiled (see below)
# Everything lives in a temporary directory; every process started here
# is stopped on exit, whatever the outcome.
set -u

src=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$src/build-bench}
LEVELS=${LEVELS-"1 100 1000 10000"}
BIG=${BIG:-100000}
BIG_INFLIGHT=${BIG_INFLIGHT:-1000}
PROBE=${PROBE:-200}
RUN_TIMEOUT=${RUN_TIMEOUT:-600}
KEEP=${KEEP:-}
REPEAT=${REPEAT:-1}
CMBENCH_ARGS=${CMBENCH_ARGS:-}
SAMPLE=${SAMPLE:-}

if [ ! -x "$build/tools/cmbench" ]; then
	if [ ! -f "$build/build.ninja" ]; then
		meson setup "$build" "$src" >/dev/null || exit 1
	fi
	meson compile -C "$build" >/dev/null || exit 1
fi
CMHUB=$build/tools/cmhub
CMD=$build/daemon/cmd
CMCTL=$build/client-lib/cmctl
BENCH=$build/tools/cmbench
for f in "$CMHUB" "$CMD" "$CMCTL" "$BENCH"; do
	[ -x "$f" ] || {
		echo "bench-sim.sh: $f missing (is subdir('tools') in" \
			"meson.build?)" >&2
		exit 1
	}
done

dir=$(mktemp -d /tmp/cmd-bench-XXXXXX) || exit 1
pids=""

# shellcheck source=tests/lib/procs.sh
. "$src/tests/lib/procs.sh"
# Daemons holding 100k connections take a while to go: 5 s, and 2 s
# more per 100k beyond; logs: 15 lines each; start-ups: 10 s.
STOP_TRIES=$((25 + BIG / 10000))
LOG_LINES=15
WAIT_TRIES=100

cleanup() {
	# shellcheck disable=SC2086 # a list of pids
	stop_procs bench-sim.sh $pids
	if [ -n "$KEEP" ]; then
		mkdir -p "$KEEP" && cp "$dir"/*.log "$KEEP"/ 2>/dev/null
		cp "$dir"/perf-*.data "$dir"/callgrind.* "$KEEP"/ 2>/dev/null
	fi
	rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

die() {
	fail_logs bench-sim.sh "$*"
}

wait_for() {
	wait_until bench-sim.sh "$@"
}

echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo |
	cut -d: -f2 | sed 's/^ *//'), $(uname -sr)"

"$CMHUB" "$dir/hub" >"$dir/hub.log" 2>&1 &
hub=$!
pids="$pids $hub"
wait_for "cmhub" "$CMHUB" --ctl "$dir/hub" stats

# Room for part 2: ids per client (BIG, its probes and the ones in
# flight, at least 262144), events queued per client, REQs held beyond a
# listener's backlog. A short packet life time keeps timewait (and the
# records it holds) short.
MAX_IDS=$((BIG + PROBE + BIG_INFLIGHT))
[ $MAX_IDS -lt 262144 ] && MAX_IDS=262144
# PROFILE=callgrind runs both daemons under callgrind from the start.
WRAP=""
if [ "${PROFILE:-}" = callgrind ]; then
	command -v callgrind_control >/dev/null || die "no callgrind_control"
	WRAP="valgrind --tool=callgrind --callgrind-out-file=$dir/callgrind.%p"
fi

start_daemons() {
	for n in 1 2; do
		# shellcheck disable=SC2086 # WRAP is a command prefix
		$WRAP "$CMD" --sim "$dir/hub" --node $n --socket "$dir/cmd$n.sock" \
			--packet-life-time 8 --max-ids $MAX_IDS \
			--max-queued 1048576 --max-held 65536 --log-level warn \
			>>"$dir/cmd$n.log" 2>&1 &
		eval "d$n=$!"
		pids="$pids $!"
	done
	wait_for "cmd on node 1" "$CMCTL" -s "$dir/cmd1.sock" counters
	wait_for "cmd on node 2" "$CMCTL" -s "$dir/cmd2.sock" counters
	# shellcheck disable=SC2154 # set by the eval above
	echo "hub pid $hub, cmd pids $d1 (node 1, client side)" \
		"$d2 (node 2, server side)"
}

# Fresh daemons, so that RSS growth is the connections' and not refilled
# free lists of an earlier run.
restart_daemons() {
	kill "$d1" "$d2"
	wait "$d1" "$d2" 2>/dev/null
	start_daemons
}

start_daemons

# sa_counts: node 1's "queries joined cache_hits cache_misses" (the
# fabric is IB: every connect's path comes from the hub's SA or the cache).
sa_counts() {
	"$CMCTL" -s "$dir/cmd1.sock" counters | awk '
		$1 == "sa_queries" { q = $2 }
		$1 == "sa_joined" { j = $2 }
		$1 == "sa_cache_hits" { h = $2 }
		$1 == "sa_cache_misses" { m = $2 }
		END { print q + 0, j + 0, h + 0, m + 0 }'
}

# run NAME N M [client options...]: one server, one client, both logs.
run() {
	name=$1 n=$2 m=$3
	shift 3
	sa_before=$(sa_counts)
	# shellcheck disable=SC2086 # CMBENCH_ARGS is a list of options
	timeout "$RUN_TIMEOUT" "$BENCH" -l -n "$n" -s "$dir/cmd2.sock" \
		-p "$d2" $CMBENCH_ARGS >"$dir/$name.server.log" 2>&1 &
	server=$!
	pids="$pids $server"
	wait_for "the cmbench server" grep -q '^listening' \
		"$dir/$name.server.log"
	# shellcheck disable=SC2086
	timeout "$RUN_TIMEOUT" "$BENCH" -c "$n" -m "$m" -s "$dir/cmd1.sock" \
		-p "$d1" -p "$d2" $CMBENCH_ARGS "$@" lid:33 \
		>"$dir/$name.client.log" 2>&1
	crc=$?
	[ $crc -eq 0 ] || kill "$server" 2>/dev/null
	wait "$server"
	src_rc=$?
	echo
	echo "=== $name: cmbench -c $n -m $m $CMBENCH_ARGS $* lid:33" \
		"(client exit $crc, server exit $src_rc)"
	cat "$dir/$name.client.log"
	echo "$sa_before $(sa_counts)" | awk '{
		printf "--- node 1 SA paths: %d queries, %d joined, " \
		    "%d cache hits, %d misses\n", $5 - $1, $6 - $2, $7 - $3,
		    $8 - $4 }'
	echo "--- server"
	grep -v '^cmbench ' "$dir/$name.server.log"
}

for r in $(seq "$REPEAT"); do
	for m in $LEVELS; do
		n=$((2 * m))
		[ $n -lt 2000 ] && n=2000
		run "inflight-$m.r$r" $n "$m"
	done
done

# PROFILE=strace|perf: one more run (2000 connections, 100 in flight)
# with strace -c (syscalls per connection) or perf record (hot spots) on
# the hub and both daemons; the reports go to KEEP (or are printed).
# PROFILE=callgrind: the daemons' instructions during that run alone
# (counters zeroed before it, dumped after), per connection: repeatable
# whatever else the machine does.
if [ "${PROFILE:-}" = callgrind ]; then
	for p in "$d1" "$d2"; do
		callgrind_control -z "$p" >/dev/null || die "callgrind_control -z"
	done
	run "profile-callgrind" 2000 100
	for p in "$d1" "$d2"; do
		callgrind_control -d "$p" >/dev/null || die "callgrind_control -d"
	done
	sleep 1
	for p in "$d1" "$d2"; do
		for f in "$dir/callgrind.$p".*; do :; done # the dump
		ir=$(sed -n 's/^summary: *//p; s/^totals: *//p' "$f" | head -1)
		echo "callgrind pid $p: $ir instructions in the profile run," \
			"$((ir / 2000)) per connection ($f)"
	done | tee "$dir/profile-callgrind.report.log"
elif [ -n "${PROFILE:-}" ]; then
	prof=""
	for p in "$hub" "$d1" "$d2"; do
		case $PROFILE in
		strace) strace -c -f -p "$p" -o "$dir/strace-$p.log" \
			2>/dev/null & ;;
		perf) perf record -e cpu-clock -g -p "$p" \
			-o "$dir/perf-$p.data" >/dev/null 2>&1 & ;;
		*) die "PROFILE must be strace or perf" ;;
		esac
		prof="$prof $!"
	done
	sleep 1
	run "profile-$PROFILE" 2000 100
	# shellcheck disable=SC2086 # a list of pids
	kill -INT $prof
	# shellcheck disable=SC2086 # a list of pids
	wait $prof 2>/dev/null
	for p in "$hub" "$d1" "$d2"; do
		echo "--- $PROFILE of pid $p"
		case $PROFILE in
		strace) cat "$dir/strace-$p.log" ;;
		perf) perf report -i "$dir/perf-$p.data" --no-children \
			--sort dso,symbol --stdio -g none 2>/dev/null |
			grep '%' | head -30 ;;
		esac
	done | tee "$dir/profile-$PROFILE.report.log"
fi

if [ "$BIG" -gt 0 ]; then
	restart_daemons
	levels=$SAMPLE
	if [ -z "$levels" ]; then
		for l in 10000 25000 50000 100000 250000 500000 1000000; do
			[ $l -le "$BIG" ] && levels="$levels${levels:+,}$l"
		done
	fi
	# The probes after the last level are part of N.
	run "scale-$BIG" $((BIG + PROBE)) "$BIG_INFLIGHT" --hold 2 \
		--sample "$levels" --probe "$PROBE"
fi

echo
echo "=== summary (client side; CPU and RSS of cmd on node 1 = d0," \
	"node 2 = d1)"
printf '%-16s %8s %8s %10s %10s %9s %9s %9s %9s %8s %8s\n' run conns \
	inflight setup/s teardown/s conn_p50 conn_p99 setup_p50 setup_p99 \
	cpu_d0 cpu_d1
for f in "$dir"/*.client.log; do
	name=$(basename "$f" .client.log)
	tail -n 1 "$f" | tr ' ' '\n' | awk -v name="$name" -F= '
		{ v[$1] = $2 }
		END {
			printf "%-16s %8s %8s %10s %10s %9s %9s %9s %9s %8s %8s\n",
			    name, v["conns"], v["inflight"], v["setup_cps"],
			    v["teardown_cps"], v["connect_p50_us"],
			    v["connect_p99_us"], v["setup_p50_us"],
			    v["setup_p99_us"], v["d0_cpu_setup_us_per_conn"],
			    v["d1_cpu_setup_us_per_conn"]
		}'
done
echo "(rates in connections/s, latencies in us, cpu in daemon us per" \
	"connection set up)"
if [ "$BIG" -gt 0 ]; then
	f="$dir/scale-$BIG.client.log"
	tail -n 1 "$f" | tr ' ' '\n' | awk -F= '
		{ v[$1] = $2 }
		END {
			printf "scale run: rss per connection d0 %s B, d1 %s B\n",
			    v["d0_rss_bytes_per_conn"], v["d1_rss_bytes_per_conn"]
		}'
	sed -n '/^scale curve/,/^cmbench /p' "$f" | grep -v '^cmbench '
fi
