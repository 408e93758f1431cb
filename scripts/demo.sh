#!/bin/bash
# The live demo. Installs what is missing, builds, and shows what cmd can do
# today. The full demo (the daemon, a listener and a client connecting over an
# RC QP on soft-RoCE) replaces this as the daemon and client library land;
# until then it shows the CM wire codec that everything else is built on.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh
if [ -f build/build.ninja ]; then
	meson setup --reconfigure build >/dev/null
else
	meson setup build >/dev/null
fi
meson compile -C build >/dev/null

say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

say "cmd $(build/client-lib/cmmad --version | cut -d' ' -f2): what works so far"
cat <<'TXT'
  - every IB CM message (IBTA Vol 1 ch. 12, Tables 106-120) encoded, decoded,
    validated and dumped from one field table (proto/cm_fields.def)
  - rdma_cm compatibility: port-space service ids and the CMA header
  - the client<->daemon protocol (proto/cmp.h)
  Not yet: the daemon, libcmclient, connections over rxe (see the issues).
TXT

say "A REQ to rdma_cm's TCP port 7174, as it goes on the wire"
build/client-lib/cmmad example req

say "A consumer REJ, decoded back from its bytes"
build/client-lib/cmmad example rej | sed -n '/^decoded:/,$p'

say "A malformed MAD (class version 1) is refused with its reason"
build/client-lib/cmmad example rtu | sed -n '2,17p' | cut -c6- |
	sed '1s/^01 07 02/01 07 01/' | build/client-lib/cmmad decode || true
