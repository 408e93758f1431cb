# shellcheck shell=sh
# SPDX-License-Identifier: MIT
#
# Sourced by the shell-driven tests: stop every process they started.
#
#   stop_procs TAG PIDS...
#
# Asks with SIGTERM, waits up to 2 s for all of them, then SIGKILLs (and
# names, prefixed with TAG) whatever is left, and reaps them.

stop_procs() {
	tag=$1
	shift
	for p in "$@"; do
		kill "$p" 2>/dev/null
	done
	alive=""
	for _ in 1 2 3 4 5 6 7 8 9 10; do
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
