#!/bin/bash
# SPDX-License-Identifier: MIT
#
# rdmacm-suite.sh: the meson suite `rdmacm` on the host. Boots one VM
# (tests/vm/run.sh --two-devices --with-kernel-cm) per layout of
# rdmacm.sh, one after the other, and prints one table of every case.
#
#   rdmacm-suite.sh BUILD_ROOT OUT_DIR [rdmacm.sh options...]
#
# OUT_DIR (created if missing) is shared read-write with the guest: the
# results-LAYOUT files of rdmacm.sh --results.
# Options go to rdmacm.sh (--kernel-only, --wrong-address);
# RDMACM_LAYOUTS="cmd2 interop" picks layouts, RDMACM_ONLY cases.
# Exit: 0 every case passed (with --wrong-address: every case failed),
# 77 every layout skipped, else 1.
#
# One VM at a time: the VMs here run in sequence, and whoever runs two
# suites at once on one machine wraps each in `flock /tmp/cmd-vm.lock`.
set -u
here=$(cd "$(dirname "$0")" && pwd)
B=${1:?usage: rdmacm-suite.sh BUILD_ROOT OUT_DIR [options]}
OUT=${2:?usage: rdmacm-suite.sh BUILD_ROOT OUT_DIR [options]}
shift 2
mkdir -p "$OUT" || exit 2
B=$(cd "$B" && pwd) && OUT=$(cd "$OUT" && pwd) || exit 2

envs=()
[ -n "${RDMACM_ONLY:-}" ] && envs+=(--env RDMACM_ONLY)
declare -A lrc
read -r -a layouts <<<"${RDMACM_LAYOUTS:-cmd2 interop}"
for l in "${layouts[@]}"; do
	rm -f "$OUT/results-$l"
	echo "==== layout $l: tests/vm/run.sh --two-devices --with-kernel-cm"
	t0=$EPOCHREALTIME
	# --timeout: a hang guard for the whole VM, far above the sum of the
	# cases' own guards being reached by one or two hung programs.
	"$here/../vm/run.sh" --rw "$OUT" --two-devices --with-kernel-cm \
		--timeout 2400 "${envs[@]}" -- \
		"$here/rdmacm.sh" "$B" "$l" --results "$OUT/results-$l" "$@"
	lrc[$l]=$?
	echo "==== layout $l: exit ${lrc[$l]} after $(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }') s"
done

echo
echo "==== rdmacm summary${*:+ ($*)}"
printf '%-8s %-22s %-6s %8s\n' layout case result seconds
# --wrong-address: every case must FAIL (the checks can fail), and each
# layout exit 1; then this exits 0.
want=PASS
[[ " $* " == *" --wrong-address "* ]] && want=FAIL
rc=0 skipped=0
for l in "${layouts[@]}"; do
	if [ -s "$OUT/results-$l" ]; then
		while read -r lay c r s; do
			printf '%-8s %-22s %-6s %8s\n' "$lay" "$c" "$r" "$s"
			[ "$r" = $want ] || rc=1
		done <"$OUT/results-$l"
	elif [ "${lrc[$l]}" != 77 ]; then
		printf '%-8s %-22s %-6s\n' "$l" "(no case ran)" FAIL
		rc=1
	fi
	# A layout exits 0 when all its cases passed, 1 when one failed.
	good=0
	[ $want = FAIL ] && good=1
	case ${lrc[$l]} in
	"$good") ;;
	77)
		printf '%-8s %-22s %-6s\n' "$l" "(layout)" SKIP
		skipped=$((skipped + 1))
		;;
	*)
		printf '%-8s %-22s %-6s   exit %s\n' "$l" "(layout)" FAIL "${lrc[$l]}"
		rc=1
		;;
	esac
done
[ $rc = 0 ] && [ "$skipped" = "${#layouts[@]}" ] && exit 77
exit $rc
