#!/bin/bash
# Install every package the build and the tests need, from Debian 12's
# repositories. Idempotent: when everything is present it changes nothing
# and does not touch the network. Run as root (or with sudo).
#
# The rxe VM's own packages (qemu, busybox, the guest kernel) are installed by
# tests/vm/setup.sh, which the test and demo scripts call when they need it.
set -euo pipefail

PKGS=(
	meson ninja-build pkg-config gcc libc6-dev
	libibverbs-dev libibumad-dev libev-dev libcmocka-dev librdmacm-dev zlib1g-dev
	iproute2
	clang-format valgrind python3 tshark
	# libsystemd (notify, socket activation, journald), json-c (cmctl --json)
	libsystemd-dev libjson-c-dev
	# real peers of the ops tests: systemd-analyze against rdma-core's own
	# units, Prometheus' parser for the OpenMetrics exposition, bash's
	# completion framework, Debian's packaging tools and lintian
	systemd rdma-core python3-prometheus-client bash-completion
	debhelper dpkg-dev fakeroot lintian
	# the manual pages' lint (tests/man): groff -ww, man --warnings, lexgrog
	groff-base man-db
	# dpkg-buildpackage checks build-essential as an implicit Build-Depends
	build-essential
	# the sa suite (tests/sa): opensm on ibsim's simulated fabric, reached
	# through umad2sim (libumad2sim0, which ibsim-utils depends on), and
	# saquery to compare with. Note: Debian's opensm enables
	# opensm.service (PORTS=ALL in /etc/default/opensm), which starts an
	# SM on every port of a host where ib_umad is loaded; on a machine on
	# a real fabric set PORTS=NONE there. The tests never use the service.
	opensm ibsim-utils libumad2sim0 infiniband-diags
)

missing=()
for p in "${PKGS[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
		grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps: missing packages: ${missing[*]}" >&2
	echo "install-deps: run as root to install them" >&2
	exit 1
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends "${missing[@]}"
