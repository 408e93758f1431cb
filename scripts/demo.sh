#!/bin/bash
# SPDX-License-Identifier: MIT
#
# The live demo: cmd, the userspace IB Connection Manager, setting up RC
# connections over soft-RoCE with real QPs, moving data and tearing them
# down. Run as root on Debian 12 (stdin is never read):
#
#   scripts/demo.sh
#
#  1. installs the build dependencies (scripts/install-deps.sh)
#  2. prepares soft-RoCE (tests/vm/setup.sh: the packages, and Debian's
#     stock kernel for a qemu VM, unpacked, never installed)
#  3. builds (meson setup build, meson compile -C build)
#  4. runs scripts/demo-guest.sh through tests/vm/run.sh: directly on this
#     host when its kernel has rdma_rxe and ib_umad (rxe0 is created on lo),
#     else inside the VM (Debian's kernel under qemu, this root read-only).
#     It starts the daemon on rxe0, cmc_server and cmc_client (a few
#     connections), and shows their output, the daemon's state changes and
#     cmctl's listings and counters.
set -euo pipefail
cd "$(dirname "$0")/.."
T0=$EPOCHREALTIME

elapsed() {
	local t=$EPOCHREALTIME
	printf '%.1f' "$(((${t/./} - ${T0/./}) / 100000))e-1"
}
bold='' plain=''
if [ -t 1 ]; then
	bold=$'\033[1m' plain=$'\033[0m'
fi
say() { printf '\n%s== step %s%s  (%s s)\n' "$bold" "$*" "$plain" "$(elapsed)"; }

say "1/4: dependencies (scripts/install-deps.sh)"
scripts/install-deps.sh
echo "build dependencies present"

say "2/4: soft-RoCE: tests/vm/setup.sh (host packages, the VM's kernel)"
tests/vm/setup.sh

say "3/4: build (meson setup build; meson compile -C build)"
if [ -f build/build.ninja ]; then
	meson setup --reconfigure build >/dev/null
else
	meson setup build >/dev/null
fi
meson compile -C build | tail -n 1

say "4/4: cmd + cmc_server + cmc_client on rxe0 (tests/vm/run.sh)"
rc=0
tests/vm/run.sh --rw build --timeout 600 -- \
	"$PWD/scripts/demo-guest.sh" "$PWD/build" </dev/null || rc=$?
case $rc in
0) result="demo done" ;;
77) result="demo NOT run: this host can run neither rxe nor the VM (see above)" ;;
*) result="demo FAILED (exit $rc)" ;;
esac
printf '\n%s== %s: total %s s%s\n' "$bold" "$result" "$(elapsed)" "$plain"
exit $rc
