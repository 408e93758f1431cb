#!/bin/sh
# SPDX-License-Identifier: MIT
#
# cmd.service and cmd.socket against Debian's rdma-core units: a boot
# that wants both cmd.service and rdma-load-modules@rdma.service must
# verify without an ordering cycle (issue 18: Before= that unit, which is
# DefaultDependencies=no and Before=sysinit.target, made one, and systemd
# deleted a job to break it). And the unit's RestartPreventExitStatus= is
# the status the daemon exits with on a configuration error.
#
#   units.sh CMD_SERVICE CMD_SOCKET CMD
set -u
service=${1:?usage: units.sh CMD_SERVICE CMD_SOCKET CMD}
socket=${2:?usage: units.sh CMD_SERVICE CMD_SOCKET CMD}
daemon=${3:?usage: units.sh CMD_SERVICE CMD_SOCKET CMD}
fail=0
err() {
	echo "FAIL: $*" >&2
	fail=1
}

if ! command -v systemd-analyze >/dev/null 2>&1; then
	echo "systemd-analyze not installed (scripts/install-deps.sh)" >&2
	exit 77
fi
tmp=$(mktemp -d /tmp/cmd-units-XXXXXX) || exit 1
trap 'rm -rf "$tmp"' EXIT

# rdma-core's units as Debian ships them: from the installed package
# (dpkg -L), else from its .deb in apt's cache.
units=$(dpkg -L rdma-core 2>/dev/null | grep '^/lib/systemd/system/.*\.\(service\|target\)$')
if [ -z "$units" ]; then
	deb=$(ls /var/cache/apt/archives/rdma-core_*.deb 2>/dev/null | head -n1)
	[ -n "$deb" ] || { echo "rdma-core not installed" >&2; exit 77; }
	dpkg-deb -x "$deb" "$tmp/deb"
	units=$(find "$tmp/deb" -path '*/systemd/system/*' -type f)
fi
mkdir "$tmp/u"
for u in $units; do
	cp "$u" "$tmp/u/"
done
[ -f "$tmp/u/rdma-load-modules@.service" ] ||
	err "rdma-core ships no rdma-load-modules@.service"
echo "--- rdma-core $(dpkg-query -W -f '${Version}' rdma-core 2>/dev/null): $(ls "$tmp/u" | tr '\n' ' ')"

# Ours, with ExecStart= at the build's daemon (verify wants it to exist).
sed "s|^ExecStart=.*|ExecStart=$daemon|" "$service" >"$tmp/u/cmd.service"
cp "$socket" "$tmp/u/cmd.socket"
# A boot that wants both, as multi-user.target (cmd) and udev's
# SYSTEMD_WANTS for an RDMA device (rdma-load-modules@rdma) do.
cat >"$tmp/u/ops-boot.target" <<'UNIT'
[Unit]
Description=A boot with cmd and rdma-core's module loading
Wants=cmd.service rdma-load-modules@rdma.service rdma-hw.target
Wants=rdma-load-modules@infiniband.service rdma-load-modules@roce.service
UNIT

# systemd 252: SYSTEMD_UNIT_PATH with a trailing ':' puts the host's unit
# directories (sysinit.target, ...) after ours; --man=no: no man pages.
SYSTEMD_UNIT_PATH="$tmp/u:" systemd-analyze verify --man=no \
	"$tmp/u/ops-boot.target" >"$tmp/verify" 2>&1
rc=$?
cat "$tmp/verify"
if grep -qi 'ordering cycle\|to break ordering cycle' "$tmp/verify"; then
	err "systemd-analyze verify found an ordering cycle"
fi
if grep -q 'cmd\.\(service\|socket\)' "$tmp/verify"; then
	err "systemd-analyze verify has something to say about our units"
fi
[ $rc -eq 0 ] || err "systemd-analyze verify exited $rc"

# The exit status the unit does not restart on is the daemon's for a
# configuration error: a bad option and a bad config file line.
prevent=$(sed -n 's/^RestartPreventExitStatus=//p' "$service")
[ -n "$prevent" ] || err "cmd.service has no RestartPreventExitStatus="
"$daemon" --max-held abc >/dev/null 2>&1
st=$?
[ "$st" = "$prevent" ] ||
	err "cmd --max-held abc exited $st, the unit prevents restart on '$prevent'"
printf 'max-held = lots\n' >"$tmp/bad.conf"
"$daemon" --config "$tmp/bad.conf" >/dev/null 2>&1
st=$?
[ "$st" = "$prevent" ] ||
	err "a bad config line exited $st, the unit prevents restart on '$prevent'"
# The watchdog the daemon pings (tests/ops/notify.py checks the pings).
grep -q '^WatchdogSec=[1-9]' "$service" || err "cmd.service has no WatchdogSec="
grep -q '^FileDescriptorName=cmd.socket$' "$socket" ||
	err "cmd.socket does not name its socket 'cmd.socket' (the daemon checks it)"

[ $fail -eq 0 ] && echo "units.sh: PASS"
exit $fail
