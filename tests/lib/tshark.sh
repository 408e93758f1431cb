# shellcheck shell=sh
# SPDX-License-Identifier: MIT
#
# Sourced by the tests that read captures back with tshark: install it
# where we may (root, apt-get), else exit 77 (meson: skipped).
if ! command -v tshark >/dev/null 2>&1 && [ "$(id -u 2>/dev/null)" = 0 ] &&
	command -v apt-get >/dev/null 2>&1; then
	echo "installing tshark" >&2
	# wireshark-common asks whether non-root users may capture.
	echo "wireshark-common wireshark-common/install-setuid boolean false" |
		debconf-set-selections 2>/dev/null || true
	export DEBIAN_FRONTEND=noninteractive
	apt-get install -y --no-install-recommends tshark >&2 ||
		{ apt-get update >&2 &&
		  apt-get install -y --no-install-recommends tshark >&2; } ||
		true
fi
if ! command -v tshark >/dev/null 2>&1; then
	echo "SKIP: tshark is not installed and could not be installed"
	exit 77
fi
