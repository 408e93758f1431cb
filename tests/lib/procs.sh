# shellcheck shell=sh
# SPDX-License-Identifier: MIT
#
# Sourced by the shell-driven tests: stop every process they started.
#
#   stop_procs TAG PIDS...
#
# Asks with SIGTERM, waits up to STOP_TRIES fifths of a second (default
# 10: 2 s) for all of them, then SIGKILLs (and names, prefixed with TAG)
# whatever is left, and reaps them.

stop_procs() {
	tag=$1
	shift
	for p in "$@"; do
		kill "$p" 2>/dev/null
	done
	alive=""
	for _ in $(seq "${STOP_TRIES:-10}"); do
		alive=""
		for p in "$@"; do
			kill -0 "$p" 2>/dev/null && alive="$alive $p"
		done
		[ -z "$alive" ] && break
		sleep 0.2
	done
	for p in $alive; do
		echo "$tag: killing straggler $p" >&2
		kill -9 "$p" 2>/dev/null
	done
	wait 2>/dev/null
}

# fail_logs TAG MESSAGE...: say what failed, show the last lines of every
# log in $dir (LOG_LINES of each, default 20) and exit 1.
# shellcheck disable=SC2154 # $dir is the sourcing script's
fail_logs() {
	echo "$1: $2" >&2
	for f in "$dir"/*.log; do
		[ -s "$f" ] || continue
		echo "--- $f" >&2
		tail -n "${LOG_LINES:-20}" "$f" >&2
	done
	exit 1
}

# wait_until TAG WHAT COMMAND...: wait until COMMAND succeeds, up to
# WAIT_TRIES tenths of a second (default 300: 30 s, a start-up on a loaded
# machine; the cap only turns a hang into a failure), else fail_logs.
wait_until() {
	tag_=$1
	what=$2
	shift 2
	for _ in $(seq "${WAIT_TRIES:-300}"); do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	fail_logs "$tag_" "FAIL: $what did not come up"
}
