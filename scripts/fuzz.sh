#!/bin/bash
# Build the libFuzzer targets of tests/fuzz/ with clang (ASan + UBSan) and run
# each one for a while.
#
#   scripts/fuzz.sh [--merge] [SECONDS] [TARGET...]
#   scripts/fuzz.sh --seeds
#
# SECONDS defaults to 60 (what CI runs); TARGET is a name like cm_mad, rdmacm
# or cmp, default every tests/fuzz/fuzz_*.c. Each target runs on a scratch
# corpus in build-fuzz/corpus/<target>/, refilled from the repository's
# tests/fuzz/corpus/<target>/ on every run and kept between runs, so longer
# runs build on earlier ones. The repository's corpus is only written with
#   --merge   add the scratch inputs that bring new coverage to the
#             repository corpus (libFuzzer -merge=1), after the run;
#   --seeds   regenerate the golden seeds there (the replay programs'
#             --write-seeds, built with the normal compiler) and stop.
#
# Prints total execs and execs/s per target from libFuzzer's final stats.
# Exits non-zero when any target crashed, printing the crash file's path and
# the commands to minimise it and to keep it as a regression test.
# Longer runs: scripts/fuzz.sh 3600 cmp   (logs in build-fuzz/logs/).
set -euo pipefail
cd "$(dirname "$0")/.."
top=$PWD
out=$top/build-fuzz

merge=0
seeds=0
seconds=
targets=()
for arg in "$@"; do
	case $arg in
	--merge) merge=1 ;;
	--seeds) seeds=1 ;;
	-h | --help)
		sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
		exit 0
		;;
	-*)
		echo "fuzz: unknown option $arg" >&2
		exit 2
		;;
	*)
		if [[ $arg =~ ^[0-9]+$ ]] && [ -z "$seconds" ] &&
			[ ${#targets[@]} -eq 0 ]; then
			seconds=$arg
		else
			targets+=("$arg")
		fi
		;;
	esac
done
seconds=${seconds:-60}
if [ ${#targets[@]} -eq 0 ]; then
	for f in tests/fuzz/fuzz_*.c; do
		t=${f#tests/fuzz/fuzz_}
		t=${t%.c}
		# fuzz_main.c is the replay programs' main(), not a target.
		[ "$t" = main ] || targets+=("$t")
	done
fi
for t in "${targets[@]}"; do
	if [ "$t" = main ] || [ ! -f "tests/fuzz/fuzz_$t.c" ]; then
		echo "fuzz: no target $t (tests/fuzz/fuzz_$t.c)" >&2
		exit 2
	fi
done

# What each target links besides its own file and tests/fuzz/fuzz_main.c.
sources() {
	case $1 in
	cm_mad) echo proto/cm_mad.c ;;
	rdmacm) echo proto/rdmacm.c ;;
	cmp) echo proto/cmp.c proto/cm_mad.c ;;
	sa_client) echo daemon/sa_client.c proto/*.c -Idaemon ;;
	# The CM engine as daemon/meson.build's engine_sources, proto, and
	# the engine tests' fake fabric.
	# log.c and refuse.c are daemon/meson.build's log_lib, and log.c
	# speaks to the journal through libsystemd.
	engine)
		echo daemon/{conn,conn_msg,conn_rec,conn_table,counters,engine,evq}.c \
			daemon/{listen,log,refuse,rx,timer}.c proto/*.c \
			tests/lib/fake_fabric.c -lsystemd
		;;
	# The engine, its handoff state (daemon/eng_state.c, state.c) and
	# zlib for the state's CRC.
	state)
		echo daemon/{conn,conn_msg,conn_rec,conn_table,counters,engine,evq}.c \
			daemon/{listen,log,refuse,rx,timer,eng_state,state}.c \
			proto/*.c -lz -lsystemd
		;;
	*) echo proto/*.c ;;
	esac
}

# libFuzzer options per target. cmp: longer than CMP_MSG_MAX (4096) to
# reach the oversize check; libFuzzer's default cap would be 4096.
options() {
	case $1 in
	cmp) echo -max_len=4200 ;;
	esac
}

nfiles() { find "$1" -maxdepth 1 -type f | wc -l; }

CFLAGS=(-std=gnu11 -D_GNU_SOURCE -g -O1 -fno-omit-frame-pointer
	-Iproto -Itests/fuzz -Wall -Wextra -Wno-unused-parameter)

if [ $seeds = 1 ]; then
	cc=${CC:-cc}
	mkdir -p "$out/replay"
	for t in "${targets[@]}"; do
		# shellcheck disable=SC2046
		"$cc" "${CFLAGS[@]}" -DFUZZ_STANDALONE "tests/fuzz/fuzz_$t.c" \
			tests/fuzz/fuzz_main.c $(sources "$t") \
			-o "$out/replay/fuzz-replay-$t"
		mkdir -p "tests/fuzz/corpus/$t"
		"$out/replay/fuzz-replay-$t" --write-seeds "tests/fuzz/corpus/$t"
	done
	exit 0
fi

# clang and its fuzzer runtime (Debian 12: clang, libclang-rt-14-dev).
need=()
command -v clang >/dev/null || need+=(clang)
dpkg-query -W -f='${Status}' libclang-rt-14-dev 2>/dev/null |
	grep -q "install ok installed" || need+=(libclang-rt-14-dev)
if [ ${#need[@]} -gt 0 ]; then
	sudo=()
	[ "$(id -u)" -ne 0 ] && sudo=(sudo)
	echo "fuzz: installing ${need[*]}"
	export DEBIAN_FRONTEND=noninteractive
	"${sudo[@]}" apt-get update -q
	"${sudo[@]}" apt-get install -y -q --no-install-recommends "${need[@]}"
fi

mkdir -p "$out/logs"
for t in "${targets[@]}"; do
	echo "fuzz: building $t"
	# shellcheck disable=SC2046
	clang "${CFLAGS[@]}" -fsanitize=fuzzer,address,undefined \
		-fno-sanitize-recover=all "tests/fuzz/fuzz_$t.c" \
		$(sources "$t") -o "$out/fuzz_$t"
done

export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

rc=0
summary=()
for t in "${targets[@]}"; do
	work=$out/corpus/$t
	art=$out/artifacts/$t
	log=$out/logs/$t.log
	mkdir -p "$work" "$art"
	if [ -d "tests/fuzz/corpus/$t" ]; then
		cp -n "tests/fuzz/corpus/$t"/* "$work"/ 2>/dev/null || true
	fi
	echo "fuzz: running $t for ${seconds}s ($(nfiles "$work") inputs)"
	trc=0
	# shellcheck disable=SC2046
	(cd "$out" && "./fuzz_$t" -max_total_time="$seconds" \
		-print_final_stats=1 -timeout=10 -rss_limit_mb=2048 \
		-artifact_prefix="$art/" $(options "$t") "$work") \
		>"$log" 2>&1 || trc=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
	speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
	if [ $trc -ne 0 ]; then
		rc=1
		crash=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" |
			tail -1)
		# A crash skips the final stats; the last status line has them.
		last=$(grep -E '^#[0-9]+' "$log" | tail -1 || true)
		tail -40 "$log"
		echo "fuzz: $t CRASHED (exit $trc): ${crash:-no crash file}"
		echo "fuzz:   log: $log; at: ${last:-?}"
		if [ -n "$crash" ]; then
			echo "fuzz:   minimise: $out/fuzz_$t -minimize_crash=1" \
				"-max_total_time=60" \
				"-exact_artifact_path=$art/min-$(basename "$crash")" \
				"$crash"
			echo "fuzz:   keep it:  cp <minimised file>" \
				"tests/fuzz/corpus/$t/crash-<what>"
		fi
		summary+=("$(printf '%-8s CRASH  %s' "$t" "${crash:-see $log}")")
		continue
	fi
	if [ $merge = 1 ]; then
		mkdir -p "tests/fuzz/corpus/$t"
		before=$(nfiles "tests/fuzz/corpus/$t")
		# shellcheck disable=SC2046
		(cd "$out" && "./fuzz_$t" -merge=1 $(options "$t") \
			"$top/tests/fuzz/corpus/$t" "$work") >>"$log" 2>&1
		after=$(nfiles "tests/fuzz/corpus/$t")
		echo "fuzz: merged $((after - before)) new inputs into" \
			"tests/fuzz/corpus/$t"
	fi
	summary+=("$(printf '%-8s ok     %12s execs  %8s execs/s  %6s s' \
		"$t" "${execs:-?}" "${speed:-?}" "$seconds")")
done

echo "fuzz: results"
for line in "${summary[@]}"; do
	echo "  $line"
done
exit $rc
