#!/bin/bash
# The whole test suite, as CI runs it: install what is missing, build with
# -Werror, check formatting, run every meson suite (unit, and the rxe VM
# suite where it exists), then the unit suite again under ASan/UBSan.
#
#   scripts/test.sh              everything
#   scripts/test.sh --valgrind   also the unit suite under valgrind memcheck
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
run_suite() { # label, build dir, meson test args...
	local label=$1 dir=$2 rc=0
	shift 2
	meson test -C "$dir" --print-errorlogs "$@" || rc=$?
	results+=("$label $(python3 "$top/scripts/testlog-summary.py" \
		"$dir/meson-logs/testlog.json")")
	return $rc
}

rc=0
scripts/check-format.sh || rc=1

setup build -Dwerror=true
suite_args=()
for s in ${SUITES:-}; do suite_args+=(--suite "$s"); done
run_suite "build:" build "${suite_args[@]}" || rc=1

setup build-asan -Dwerror=true -Db_sanitize=address,undefined \
	-Db_lundef=false -Dbuildtype=debug
run_suite "asan:" build-asan --setup asan --suite unit || rc=1

# A short libFuzzer run of every decoder (scripts/fuzz.sh; longer runs
# are documented in tests/fuzz/README.md).
if [ "${FUZZ_SECONDS:-30}" != 0 ]; then
	scripts/fuzz.sh "${FUZZ_SECONDS:-30}" || rc=1
fi

if [ $valgrind = 1 ]; then
	run_suite "valgrind:" build --setup valgrind --suite unit || rc=1
fi

echo
echo "== summary"
printf '%s\n' "${results[@]}"
python3 scripts/testlog-summary.py --total build/meson-logs/testlog.json \
	build-asan/meson-logs/testlog.json
exit $rc
