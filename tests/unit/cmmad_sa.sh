#!/bin/sh
# SPDX-License-Identifier: MIT
#
# cmmad decode of SA MADs: the golden MADs of sa_golden_bytes.h as a raw
# file, hex text, a pcap capture, and opensm's table answer from ibsim,
# a reassembled four-record table (312 bytes: one message, no warning),
# each decoded by the built cmmad and compared with cmmad_sa/NAME.txt
# (exit codes too: the ibsim answer is refused without --no-rmpp, and
# with --strict for its third slot's reserved bytes).
#
#   cmmad_sa.sh PATH/TO/write_sa_golden PATH/TO/cmmad EXPECTED_DIR
set -eu

write=${1:?usage: cmmad_sa.sh WRITE_SA_GOLDEN CMMAD EXPECTED_DIR}
cmmad=${2:?usage: cmmad_sa.sh WRITE_SA_GOLDEN CMMAD EXPECTED_DIR}
want=${3:?usage: cmmad_sa.sh WRITE_SA_GOLDEN CMMAD EXPECTED_DIR}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

"$write" "$tmp"

# check NAME RC ARGS...: cmmad decode ARGS exits RC and prints NAME.txt.
check() {
	name=$1
	rc_want=$2
	shift 2
	rc=0
	"$cmmad" decode "$@" >"$tmp/$name.raw" 2>"$tmp/$name.err" || rc=$?
	# A pcap decode names its file: the temporary directory is TMP.
	sed "s|$tmp|TMP|" "$tmp/$name.raw" >"$tmp/$name.out"
	if [ "$rc" != "$rc_want" ]; then
		echo "FAIL: $name: exit $rc, want $rc_want"
		fail=1
	fi
	if [ -s "$tmp/$name.err" ]; then
		echo "FAIL: $name: unexpected standard error:"
		cat "$tmp/$name.err"
		fail=1
	fi
	if ! diff -u "$want/$name.txt" "$tmp/$name.out"; then
		echo "FAIL: $name: output differs from $want/$name.txt"
		fail=1
	fi
}

check pr_query 0 --strict "$tmp/pr_query.mad"
check pr_table 0 --strict "$tmp/pr_table.hex"
check sa_pcap 0 --strict "$tmp/sa.pcap"
check reassembled 0 --strict "$tmp/reassembled.mad"
check ibsim 1 "$tmp/ibsim.mad"
check ibsim_no_rmpp 0 --no-rmpp "$tmp/ibsim.mad"
check ibsim_no_rmpp_strict 1 --no-rmpp --strict "$tmp/ibsim.mad"

[ "$fail" = 0 ] && echo "cmmad SA decode: all cases match"
exit "$fail"
