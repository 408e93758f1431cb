#!/bin/bash
# The whole test suite, as CI runs it: install what is missing, build with
# -Werror, check formatting, run every meson suite (unit; sa, opensm on
# ibsim, no VM; and the VM suites rxe, interop and rdmacm where the VM can
# run; else they SKIP), then the unit, sim and sa suites again under
# ASan/UBSan (the sim tests start the ASan-built daemons and fail when one
# does not exit 0 on SIGTERM: a sanitizer or leak report; sa runs the
# ASan-built sa_probe under umad2sim), then a subset of the unit suite under
# valgrind memcheck (VALGRIND_TESTS below).
#
#   scripts/test.sh              everything
#   scripts/test.sh --valgrind   the whole unit suite under valgrind, not
#                                only the subset
#   SUITES="unit" scripts/test.sh   only these meson suites in the main build
#   FUZZ_SECONDS=0 scripts/test.sh  skip the fuzzers (default: 30 s each)
set -euo pipefail
cd "$(dirname "$0")/.."
top=$PWD

valgrind=0
[ "${1:-}" = --valgrind ] && valgrind=1

scripts/install-deps.sh
# The rxe suite boots Debian's stock kernel in qemu (tests/vm/README.md);
# setup is idempotent and takes about a second when everything is there.
tests/vm/setup.sh

setup() { # dir, extra meson options...
	local dir=$1
	shift
	if [ -f "$dir/build.ninja" ]; then
		meson setup --reconfigure "$dir" "$@" >/dev/null
	else
		meson setup "$dir" "$@"
	fi
	meson compile -C "$dir"
}

results=()
logs=()
run_suite() { # label, build dir, meson test args...
	local label=$1 dir=$2 rc=0 log=testlog.json t0=$SECONDS a prev=
	shift 2
	# meson names the log of a --setup run testlog-SETUP.json
	for a in "$@"; do
		[ "${prev:-}" = --setup ] && log="testlog-$a.json"
		prev=$a
	done
	meson test -C "$dir" --print-errorlogs "$@" || rc=$?
	results+=("$label $(python3 "$top/scripts/testlog-summary.py" \
		"$dir/meson-logs/$log") ($((SECONDS - t0)) s)")
	logs+=("$dir/meson-logs/$log")
	return $rc
}

rc=0
scripts/check-format.sh || rc=1

setup build -Dwerror=true
# Every suite but rdmacm-selftest (the rdmacm VM checks shown to fail
# against wrong addresses: `meson test -C build --suite rdmacm-selftest`).
suite_args=(--no-suite rdmacm-selftest)
for s in ${SUITES:-}; do suite_args+=(--suite "$s"); done
run_suite "build:" build "${suite_args[@]}" || rc=1

setup build-asan -Dwerror=true -Db_sanitize=address,undefined \
	-Db_lundef=false -Dbuildtype=debug
# Under ASan a daemon's VmRSS is mostly the allocator's quarantine and
# shadow memory, so the robust tests' memory bounds (RB_*_KB) apply to the
# plain build only; here leaks are LeakSanitizer's: a daemon with a report
# exits non-zero on SIGTERM, which fails the test (rb_common.c,
# test_sim.c). Smaller fault and flood runs keep the wall time down.
RB_LEAK_KB=4194304 RB_PEAK_KB=4194304 RB_SLACK_KB=4194304 \
	RB_CONNS=${ASAN_RB_CONNS:-2000} \
	RB_FLOOD_COUNT=${ASAN_RB_FLOOD_COUNT:-100000} \
	run_suite "asan:" build-asan --setup asan --suite unit --suite sim --suite sa ||
	rc=1

# A short libFuzzer run of every decoder (scripts/fuzz.sh; longer runs
# are documented in tests/fuzz/README.md).
if [ "${FUZZ_SECONDS:-30}" != 0 ]; then
	scripts/fuzz.sh "${FUZZ_SECONDS:-30}" || rc=1
fi

# memcheck, zero reports (--error-exitcode): the decoders, the engine's
# conversations, the client library (both modes), the spare lists of the
# engine, the server and the library; about 70 s. --valgrind: all of unit.
VALGRIND_TESTS=${VALGRIND_TESTS:-cm_golden cm_malformed cmp engine_conv \
	cmclient cmc_qp cmc_async cmc_abi engine_alloc cmc_alloc srv_alloc}
if [ $valgrind = 1 ]; then
	run_suite "valgrind:" build --setup valgrind --suite unit || rc=1
else
	# shellcheck disable=SC2086
	run_suite "valgrind:" build --setup valgrind $VALGRIND_TESTS || rc=1
fi

echo
echo "== summary"
printf '%s\n' "${results[@]}"
python3 scripts/testlog-summary.py --total "${logs[@]}"
exit $rc
