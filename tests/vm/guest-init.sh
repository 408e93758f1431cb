#!/bin/bash
# guest-init.sh - PID 1 of the cmd test VM (after the initramfs's switch_root).
#
# Runs with the guest kernel but the HOST's root filesystem (9p, read-only).
# run.sh copies this file into its per-run control directory CTL (shared
# read-write over 9p as tag "cmdctl") together with:
#   CTL/config   CMDVM_* settings and the command (CMDVM_ARGV), bash syntax
#   CTL/env      `export NAME=value` lines for the command
# and reads back CTL/stdout, CTL/stderr (streamed while they grow), CTL/rc (the
# command's exit status) or CTL/fatal (why the VM could not run it).
# Harness messages go to the console (ttyS0 -> CTL/console.log on the host).
#
# No `set -e`: PID 1 must always get to report and power off.
set -uo pipefail
CTL=${BASH_SOURCE[0]%/*}
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root LC_ALL=C.UTF-8
# Every exec of a dynamically linked host binary over 9p costs 50-150 ms under TCG;
# the static busybox ~15 ms. So: bash builtins where possible, busybox for the rest,
# and one modprobe call.
bb() { /bin/busybox "$@"; }
read -r KVER </proc/sys/kernel/osrelease

uptime_s() { local u _; read -r u _ </proc/uptime; echo "$u"; }
log() { echo "[vm $(uptime_s)] $*"; }
power_off() {
	bb sync
	bb poweroff -f
	echo o >/proc/sysrq-trigger # if that failed
	exec sleep 60
}
CTL_MOUNTED=0
fatal() {
	log "FATAL: $*"
	[ $CTL_MOUNTED = 1 ] && echo "$*" >"$CTL/fatal"
	power_off
}
# sleep without spawning a process (every exec over 9p costs ~50 ms under TCG)
SLEEP_FD=
nap() { read -r -t "$1" -u "$SLEEP_FD" _ || true; }

# shellcheck source=/dev/null
. "$CTL/config" || fatal "cannot read $CTL/config"
log "guest kernel $KVER, PID $$"

# ---- filesystems ----------------------------------------------------------------
bb mount -t sysfs sysfs /sys || fatal "mount /sys"
bb mkdir -p /dev/pts /dev/shm
bb mount -t devpts -o gid=5,mode=620,ptmxmode=666 devpts /dev/pts
bb mount -t tmpfs tmpfs /dev/shm
bb mount -t tmpfs -o mode=755 tmpfs /run || fatal "mount /run"
bb mkfifo /run/.nap || fatal "mkfifo"
exec {SLEEP_FD}<>/run/.nap
# the guest kernel's modules where kmod looks for them: plain `modprobe` works,
# and the kernel's own request_module() (/sbin/modprobe) too
bb mount -o bind "$CMDVM_MODULES" /lib/modules || fatal "bind $CMDVM_MODULES on /lib/modules"
[ -d "/lib/modules/$KVER" ] || fatal "no modules for $KVER in $CMDVM_MODULES"
# all modules at once: overlay for /tmp, crc32_generic before `rdma link add` (rxe
# needs the crc32 shash, else ENOENT), NOT ib_cm / rdma_cm
mods=(overlay crc32_generic rdma_rxe ib_umad ib_uverbs)
[ "$CMDVM_TWO" = 1 ] && mods+=(veth)
modprobe -a "${mods[@]}" || fatal "modprobe ${mods[*]} failed"
# /tmp and /var/tmp: the host's content stays visible, writes go to guest RAM
for d in /tmp /var/tmp; do
	w=/run/.ovl$d
	bb mkdir -p "$w/upper" "$w/work"
	if ! bb mount -t overlay -o "lowerdir=$d,upperdir=$w/upper,workdir=$w/work" overlay "$d" 2>/dev/null; then
		log "overlay on $d failed, using an empty tmpfs"
		bb mount -t tmpfs -o mode=1777 tmpfs "$d" || fatal "mount $d"
	fi
done
m9p() { # tag dir
	bb mkdir -p "$2" 2>/dev/null
	bb mount -t 9p -o trans=virtio,version=9p2000.L,msize=524288,cache=none "$1" "$2"
}
m9p cmdrw "$CMDVM_RW" || fatal "cannot mount the --rw share on $CMDVM_RW"
m9p cmdctl "$CTL" || fatal "cannot mount the control share on $CTL"
CTL_MOUNTED=1
: >"$CTL/booted"

# ---- RDMA ------------------------------------------------------------------------
bb ip link set lo up || fatal "ip link set lo up"
if [ "$CMDVM_TWO" = 1 ]; then
	# no DAD: the link-local addresses (and so the fe80 GIDs) appear at once
	echo 0 >/proc/sys/net/ipv6/conf/default/accept_dad
	ip link add veth0 mtu 9000 type veth peer name veth1 mtu 9000 || fatal "ip link add veth0/veth1"
	bb ip link set veth0 up || fatal "veth0 up"
	bb ip link set veth1 up || fatal "veth1 up"
	rdma link add rxe0 type rxe netdev veth0 || fatal "rdma link add rxe0 (veth0)"
	rdma link add rxe1 type rxe netdev veth1 || fatal "rdma link add rxe1 (veth1)"
	devs=(rxe0 rxe1)
else
	rdma link add rxe0 type rxe netdev lo || fatal "rdma link add rxe0 (lo)"
	devs=(rxe0)
fi
# wait until each port is ACTIVE and has its GID: ::ffff:127.0.0.1 on lo, a RoCE v2
# link-local one on a veth. Exported as CMD_VM_<DEV>_GID_INDEX. Up to 60 s: TCG on
# a loaded 2-core host is slow to bring a port up; the cap only turns a hang
# into a failure.
want_gid() { # dev -> prints the index once present
	local p=/sys/class/infiniband/$1/ports/1 i g t
	for ((i = 0; i < 16; i++)); do
		read -r g <"$p/gids/$i" 2>/dev/null || continue
		read -r t <"$p/gid_attrs/types/$i" 2>/dev/null || continue
		[ "$t" = "RoCE v2" ] || continue
		if [ "$CMDVM_TWO" = 1 ]; then
			[[ $g == fe80:* ]] && { echo "$i"; return 0; }
		else
			[ "$g" = 0000:0000:0000:0000:0000:ffff:7f00:0001 ] && { echo "$i"; return 0; }
		fi
	done
	return 1
}
for d in "${devs[@]}"; do
	for ((n = 0; ; n++)); do
		st=; read -r _ st <"/sys/class/infiniband/$d/ports/1/state" 2>/dev/null
		if [ "$st" = ACTIVE ] && idx=$(want_gid "$d"); then break; fi
		((n < 1200)) || fatal "$d: port not ACTIVE with its GID after 60 s (state '$st')"
		nap 0.05
	done
	D=${d^^}
	export "CMD_VM_${D}_GID_INDEX=$idx"
	log "$d ACTIVE, gid[$idx] $(<"/sys/class/infiniband/$d/ports/1/gids/$idx")"
done

# ---- the command -----------------------------------------------------------------
export CMD_VM=1 CMD_VM_KERNEL=$KVER CMD_VM_DEVICES="${devs[*]}" CMD_VM_KERNEL_CM=$CMDVM_KCM
export CMD_VM_CM_READY=/run/cmd-vm/cm-ready CMD_VM_CM_LOADED=/run/cmd-vm/cm-loaded
bb mkdir -p /run/cmd-vm
# shellcheck source=/dev/null
. "$CTL/env" || fatal "cannot read $CTL/env"
cd "$CMDVM_CWD" || fatal "cannot cd to $CMDVM_CWD in the guest"
log "running: ${CMDVM_ARGV[*]} (in $CMDVM_CWD)"
uptime_s >"$CTL/started"
"${CMDVM_ARGV[@]}" </dev/null >>"$CTL/stdout" 2>>"$CTL/stderr" {SLEEP_FD}<&- &
pid=$!
if [ "$CMDVM_KCM" = 1 ]; then
	# --with-kernel-cm: load the kernel CM once the command says it is ready
	# (it creates $CMD_VM_CM_READY, e.g. after registering its own CM agent), then
	# tell it so: $CMD_VM_CM_LOADED appears, holding modprobe's exit status.
	while kill -0 "$pid" 2>/dev/null && [ ! -e "$CMD_VM_CM_READY" ]; do nap 0.05; done
	if [ -e "$CMD_VM_CM_READY" ]; then
		modprobe -a ib_cm rdma_cm rdma_ucm
		r=$?
		log "kernel CM loaded (modprobe rc=$r)"
		echo "$r" >"$CMD_VM_CM_LOADED.tmp" && mv "$CMD_VM_CM_LOADED.tmp" "$CMD_VM_CM_LOADED"
	fi
fi
wait "$pid"
rc=$?
log "command exited with status $rc"
echo "$rc" >"$CTL/rc"
power_off
