#!/bin/bash
# SPDX-License-Identifier: MIT
#
# bench-rxe.sh: connection setup and teardown through cmd against the Linux
# kernel's own rdma_cm, on real soft-RoCE (rdma_rxe) in one qemu VM
# (tests/vm/run.sh --two-devices --with-kernel-cm, as the interop test):
#
#   kernel  cmtime (rdmacm-utils) server and client on rxe1 (ib_cm's);
#   cmd     one cmd daemon on rxe0, cmbench -l and cmbench --qp on it;
#   rdmacm  the same cmtime through cmd-rdmacm (cmd's librdmacm) on rxe0;
#
# at the same connection counts, all connections at once (what cmtime
# does), real RC QPs on both sides. Prints both step tables per count and
# a summary (connections/s for setup and teardown, ratio cmd/kernel); the
# last line is key=value for scripts. scripts/bench-rxe-guest.sh is the
# part that runs in the VM; it says what is timed.
#
#   scripts/bench-rxe.sh [BUILD_DIR]
#
# BUILD_DIR (default build-bench/ in the source tree) is set up (default
# buildtype) and compiled if it has no tools/cmbench. The VM needs
# tests/vm/setup.sh (as root; run here when the VM is not ready and we are
# root). Environment:
#   COUNTS="100 1000"   connection counts
#   REPEAT=1            runs per count
#   CMBENCH_ARGS=       extra cmbench options, server and client (--async)
#   RUN_TIMEOUT=600     seconds any one cmtime or cmbench may take
#   VM_TIMEOUT          seconds for the whole VM (default: from the above)
#   KEEP=DIR            copy the logs there
#   MODES="kernel cmd rdmacm"  which runs to make per count
#   BASE_LIBDIR=DIR     also cmtime through another build's librdmacm.so.1
#   PROFILE=perf        perf record the whole guest during each cmtime client
#   CMD_VM_MEM          the VM's memory in MiB (default: 1024, 4096 when a
#                       count is 5,000 or more: rxe's QPs and CQs, 4 per
#                       connection at N 10,000, are mostly guest memory)
# A benchmark: nothing fails on a number; exit 1 when a run errs, 77 when
# the VM cannot run here.
set -u

src=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$src/build-bench}
COUNTS=${COUNTS:-"100 1000"}
REPEAT=${REPEAT:-1}
CMBENCH_ARGS=${CMBENCH_ARGS:-}
RUN_TIMEOUT=${RUN_TIMEOUT:-600}
KEEP=${KEEP:-}

if [ ! -x "$build/tools/cmbench" ]; then
	if [ ! -f "$build/build.ninja" ]; then
		meson setup "$build" "$src" >/dev/null || exit 1
	fi
fi
# Always bring what the VM runs up to date (only that: a broken example
# elsewhere in the tree does not stop a benchmark).
meson compile -C "$build" daemon/cmd client-lib/cmctl tools/cmbench rdmacm/rdmacm rdmacm/cmd-rdmacm >/dev/null || {
	echo "bench-rxe.sh: build failed in $build" >&2
	exit 1
}
build=$(cd "$build" && pwd)
for f in daemon/cmd client-lib/cmctl tools/cmbench rdmacm/cmd-rdmacm; do
	[ -x "$build/$f" ] || {
		echo "bench-rxe.sh: $build/$f missing" >&2
		exit 1
	}
done

cache=${CMD_VM_CACHE:-/var/cache/cmd-vm}
if [ ! -r "$cache/ready" ] || ! command -v cmtime >/dev/null; then
	if [ "$(id -u)" = 0 ]; then
		echo "bench-rxe.sh: preparing the VM (tests/vm/setup.sh)"
		"$src/tests/vm/setup.sh" || exit 1
	else
		echo "bench-rxe.sh: the VM is not ready: run tests/vm/setup.sh as root" >&2
		exit 77
	fi
fi

# The whole VM: boot, then per count both runs; generous (TCG).
if [ -z "${VM_TIMEOUT:-}" ]; then
	VM_TIMEOUT=120
	for n in $COUNTS; do
		VM_TIMEOUT=$((VM_TIMEOUT + REPEAT * (60 + n / 5)))
	done
	max=$((120 + 2 * RUN_TIMEOUT * REPEAT * $(wc -w <<<"$COUNTS")))
	[ $VM_TIMEOUT -gt $max ] && VM_TIMEOUT=$max
fi

# 1 GiB is plenty up to N=1000; at N=10000 cmtime through the kernel
# holds 20,000 QPs (client and server) on one rxe device.
if [ -z "${CMD_VM_MEM:-}" ]; then
	for n in $COUNTS; do
		[ "$n" -ge 5000 ] && export CMD_VM_MEM=4096
	done
fi

out=$(mktemp -d "${TMPDIR:-/tmp}/cmd-bench-rxe.XXXXXX") || exit 1
trap 'rm -rf "$out"' EXIT
trap 'exit 130' INT TERM

echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo |
	cut -d: -f2 | sed 's/^ *//'), $(uname -sr); load: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "build: $build; VM timeout ${VM_TIMEOUT} s, memory ${CMD_VM_MEM:-1024} MiB"
"$src/tests/vm/run.sh" --two-devices --with-kernel-cm --timeout "$VM_TIMEOUT" \
	--rw "$out" --env "COUNTS=$COUNTS" --env "REPEAT=$REPEAT" \
	--env "CMBENCH_ARGS=$CMBENCH_ARGS" --env "RUN_TIMEOUT=$RUN_TIMEOUT" \
	--env "BENCH_OUT=$out" --env "MODES=${MODES:-kernel cmd rdmacm}" \
	--env "PROFILE=${PROFILE:-}" --env "BASE_LIBDIR=${BASE_LIBDIR:-}" \
	-- "$src/scripts/bench-rxe-guest.sh" "$build" | tee "$out/stdout.txt"
rc=${PIPESTATUS[0]}
if [ -n "$KEEP" ]; then
	mkdir -p "$KEEP" && cp "$out"/*.log "$out"/*.txt "$KEEP"/ 2>/dev/null
	cp "$out"/*.perf.data "$out"/kallsyms "$KEEP"/ 2>/dev/null
	echo "bench-rxe.sh: logs in $KEEP"
fi
case $rc in
0) ;;
77) echo "bench-rxe.sh: SKIP: the VM cannot run here" >&2 ;;
*) echo "bench-rxe.sh: FAILED (exit $rc)" >&2 ;;
esac
# The guest's key=value line once more, last (run.sh reports after it).
result=$(grep '^bench-rxe ' "$out/stdout.txt" | tail -n 1)
[ -n "$result" ] && echo "$result"
exit "$rc"
