#!/bin/sh
# SPDX-License-Identifier: MIT
#
# The rcsim programs test our librdmacm only if they run with it: each
# must need librdmacm.so.1 (objdump), define no rdma_* itself, and have
# the dynamic linker resolve that library to ours (ldd), with
# LD_LIBRARY_PATH as the test runs and without it (the binary's own
# run path). rcsim.c checks the same at run time with dladdr().
#
#   rcsim_linkage.sh OUR_LIBRDMACM PROGRAM...
set -u
lib=$(readlink -f "${1:?usage: rcsim_linkage.sh LIB PROGRAM...}")
shift
status=0

fail() {
	echo "rcsim_linkage.sh: FAIL: $*" >&2
	status=1
}

resolved() { # the path ldd gives librdmacm.so.1 for $2, env $1
	env "$1" ldd "$2" | awk '$1 == "librdmacm.so.1" { print $3 }'
}

for exe in "$@"; do
	objdump -p "$exe" | grep -Eq '^ *NEEDED +librdmacm\.so\.1$' ||
		fail "$exe does not need librdmacm.so.1"
	if objdump -T "$exe" | grep -E ' rdma_' | grep -vq '\*UND\*'; then
		fail "$exe defines rdma_* symbols of its own"
	fi
	objdump -T "$exe" | grep -q '\*UND\*.* rdma_create_id$' ||
		fail "$exe does not import rdma_create_id"
	for e in "LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}" -uLD_LIBRARY_PATH; do
		got=$(resolved "$e" "$exe")
		[ -n "$got" ] && [ "$(readlink -f "$got")" = "$lib" ] ||
			fail "$exe ($e): librdmacm.so.1 is '$got', not $lib"
	done
	n=$(ldd "$exe" | grep -c 'librdmacm')
	[ "$n" = 1 ] || fail "$exe loads $n librdmacm libraries"
done
[ $status = 0 ] && echo "rcsim_linkage.sh: PASS ($# programs)"
exit $status
