#!/bin/bash
# tests/vm/run.sh - run a command against real soft-RoCE (rdma_rxe) devices.
#
# usage: run.sh [options] -- COMMAND [ARGS...]
#   --rw DIR          directory the command may write (shared read-write with the
#                     guest at the same path); default: the current directory
#   --timeout SECS    kill the VM after SECS seconds and exit 124 (default 600)
#   --env NAME[=VAL]  pass NAME (its value here, or VAL) to the command; repeatable.
#                     PATH, MALLOC_PERTURB_, ASAN_/UBSAN_/LSAN_OPTIONS always are.
#   --two-devices     rxe0 on veth0 + rxe1 on veth1 (RoCE v2 link-local fe80 GIDs)
#                     instead of rxe0 on lo (GID 1 = ::ffff:127.0.0.1)
#   --with-kernel-cm  allow the kernel CM: ib_cm, rdma_cm and rdma_ucm are loaded as
#                     soon as the command creates the file $CMD_VM_CM_READY; then
#                     $CMD_VM_CM_LOADED appears (holding modprobe's exit status).
#                     Without it they are never loaded by the harness (the command
#                     can still run `modprobe` itself: it works in the guest).
#   --vm | --host     force the VM, or running directly on this host (default: the
#                     host when its kernel has rdma_rxe + ib_umad, else the VM)
#   -v, --verbose     stream the guest console (kernel + harness messages) to stderr
#   --keep            keep the per-run control directory (console log, ...)
#
# The command runs as root in the guest, in the same working directory, with stdin
# from /dev/null; its stdout/stderr are streamed here while it runs. Exit status:
# the command's; 124 on timeout; 77 (skip) when this host cannot run the VM at all
# (the reason is printed); 99 when the VM ran but could not run/report the command.
# Environment seen by the command: CMD_VM=1, CMD_VM_KERNEL, CMD_VM_DEVICES ("rxe0" or
# "rxe0 rxe1"), CMD_VM_RXE0_GID_INDEX (/RXE1_), CMD_VM_KERNEL_CM (0/1),
# CMD_VM_CM_READY, CMD_VM_CM_LOADED.
# Tunables (environment): CMD_VM_CACHE (default /var/cache/cmd-vm, see setup.sh),
# CMD_VM_MODE=auto|vm|host, CMD_VM_SMP (2), CMD_VM_MEM (1024, MiB), CMD_VM_QEMU,
# CMD_VM_QEMU_ARGS (extra qemu arguments), CMD_VM_KCMDLINE (replaces 'quiet loglevel=4').
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CACHE=${CMD_VM_CACHE:-/var/cache/cmd-vm}
MODE=${CMD_VM_MODE:-auto}
RW=$PWD TIMEOUT=600 TWO=0 KCM=0 VERBOSE=0 KEEP=0
ENVS=()

usage() { sed -n '2,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'; }
err() { echo "run.sh: $*" >&2; }
skip() { err "SKIP: $*"; exit 77; }

while [ $# -gt 0 ]; do
	case $1 in
	--rw) RW=${2:?--rw needs a directory}; shift 2 ;;
	--rw=*) RW=${1#*=}; shift ;;
	--timeout) TIMEOUT=${2:?--timeout needs seconds}; shift 2 ;;
	--timeout=*) TIMEOUT=${1#*=}; shift ;;
	--env) ENVS+=("${2:?--env needs a NAME}"); shift 2 ;;
	--env=*) ENVS+=("${1#*=}"); shift ;;
	--two-devices) TWO=1; shift ;;
	--with-kernel-cm) KCM=1; shift ;;
	--vm) MODE=vm; shift ;;
	--host) MODE=host; shift ;;
	-v | --verbose) VERBOSE=1; shift ;;
	--keep) KEEP=1; shift ;;
	-h | --help) usage; exit 0 ;;
	--) shift; break ;;
	*) err "unknown option '$1' (the command goes after --)"; usage >&2; exit 2 ;;
	esac
done
[ $# -gt 0 ] || { err "no command given"; usage >&2; exit 2; }
CMD=("$@")
[[ $TIMEOUT =~ ^[1-9][0-9]*$ ]] || { err "--timeout: not a positive integer: $TIMEOUT"; exit 2; }
[ -d "$RW" ] || { err "--rw: not a directory: $RW"; exit 2; }
RW=$(cd "$RW" && pwd -P)
CWD=$(pwd -P)

# NAME=value pairs for the command
EXPORTS=("PATH=$PATH")
for name in MALLOC_PERTURB_ ASAN_OPTIONS UBSAN_OPTIONS LSAN_OPTIONS; do # set by meson test (setups)
	[ -n "${!name+x}" ] && EXPORTS+=("$name=${!name}")
done
for e in ${ENVS[@]+"${ENVS[@]}"}; do
	name=${e%%=*}
	[[ $name =~ ^[A-Za-z_][A-Za-z0-9_]*$ ]] || { err "--env: bad name '$name'"; exit 2; }
	if [[ $e == *=* ]]; then
		EXPORTS+=("$e")
	elif [ -n "${!name+x}" ]; then
		EXPORTS+=("$name=${!name}")
	else
		err "note: --env $name: not set here, not passed"
	fi
done

now() { echo "$EPOCHREALTIME"; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }
T_START=$(now)

# ---- host path: this kernel has soft-RoCE itself ------------------------------
host_capable() { # prints why not, returns 1, when the host path cannot be used
	[ "$(id -u)" = 0 ] || { echo "not root"; return 1; }
	[ $TWO = 0 ] || { echo "--two-devices is VM-only"; return 1; }
	command -v rdma >/dev/null || { echo "no rdma tool"; return 1; }
	local m
	for m in rdma_rxe ib_umad ib_uverbs; do
		[ -d "/sys/module/$m" ] || modinfo "$m" >/dev/null 2>&1 ||
			{ echo "host kernel $(uname -r) has no $m"; return 1; }
	done
	if [ $KCM = 0 ] && [ -d /sys/module/ib_cm ]; then
		echo "ib_cm is loaded on the host (it would own the CM class)"; return 1
	fi
	if [ -e /sys/class/infiniband/rxe0 ] && [[ $(rdma link show rxe0/1 2>/dev/null) != *"netdev lo "* ]]; then
		echo "the host already has an rxe0 that is not on lo"; return 1
	fi
	return 0
}
run_on_host() {
	local created=0 rc=0 idx
	modprobe -a crc32_generic rdma_rxe ib_umad ib_uverbs || skip "modprobe on the host failed"
	ip link set lo up
	if [ ! -e /sys/class/infiniband/rxe0 ]; then
		rdma link add rxe0 type rxe netdev lo || skip "rdma link add rxe0 on the host failed"
		created=1
	fi
	# shellcheck disable=SC2064
	[ $created = 1 ] && trap "rdma link delete rxe0 2>/dev/null || true" EXIT
	for ((n = 0; n < 600; n++)); do # up to 60 s (a loaded host)
		grep -qx ACTIVE <(cut -d' ' -f2 /sys/class/infiniband/rxe0/ports/1/state) &&
			idx=$(grep -lx '0000:0000:0000:0000:0000:ffff:7f00:0001' /sys/class/infiniband/rxe0/ports/1/gids/* 2>/dev/null |
				head -1) && [ -n "$idx" ] && break
		sleep 0.1
	done
	[ -n "${idx:-}" ] || skip "host rxe0 did not become ACTIVE with an ::ffff:127.0.0.1 GID"
	if [ $KCM = 0 ] && [ -d /sys/module/ib_cm ]; then # e.g. rdma-core's udev rules
		err "warning: ib_cm was loaded when rxe0 appeared: it may own the CM class on rxe0"
	fi
	[ $KCM = 1 ] && err "note: --with-kernel-cm on the host: ib_cm is not managed, load it yourself"
	err "running on the host ($(uname -r)), rxe0 on lo"
	env "${EXPORTS[@]}" CMD_VM=0 CMD_VM_KERNEL="$(uname -r)" CMD_VM_DEVICES=rxe0 \
		CMD_VM_RXE0_GID_INDEX="${idx##*/}" CMD_VM_KERNEL_CM="$KCM" \
		timeout -k 10 "$TIMEOUT" "${CMD[@]}" </dev/null || rc=$?
	[ $rc = 124 ] && err "TIMEOUT: the command did not finish within $TIMEOUT s"
	exit $rc
}
case $MODE in
auto) why=$(host_capable) && run_on_host ;;
host) why=$(host_capable) && run_on_host; skip "--host: cannot run on this host: $why" ;;
vm) ;;
*) err "CMD_VM_MODE must be auto, vm or host"; exit 2 ;;
esac

# ---- VM path: preflight (anything missing => skip, saying why) ----------------------
if [ ! -c /dev/null ] || [ ! -c /dev/urandom ]; then
	skip "/dev is not populated (no /dev/null or /dev/urandom)"
fi
QEMU=${CMD_VM_QEMU:-qemu-system-x86_64}
command -v "$QEMU" >/dev/null || skip "$QEMU not found: run tests/vm/setup.sh (as root)"
READY=$CACHE/ready
[ -r "$READY" ] || skip "$READY missing: run tests/vm/setup.sh (as root) first"
cfg() { sed -n "s/^$1=//p" "$READY"; }
KVER=$(cfg kver) KERNEL=$(cfg kernel) INITRD=$(cfg initrd) MODULES=$(cfg modules)
for f in "$KERNEL" "$INITRD"; do [ -r "$f" ] || skip "$f missing: run tests/vm/setup.sh"; done
[ -d "$MODULES/$KVER" ] || skip "$MODULES/$KVER missing: run tests/vm/setup.sh"
[ "$(sha256sum <"$HERE/initramfs-init" | cut -c1-16)" = "$(cfg initsum)" ] ||
	skip "the initramfs in $CACHE is older than tests/vm/initramfs-init: run tests/vm/setup.sh"
[ -d /lib/modules ] || skip "/lib/modules missing (mount point for the guest's modules): run tests/vm/setup.sh"
[ -x /bin/bash ] || skip "/bin/bash missing"
[ -x /bin/busybox ] || skip "/bin/busybox missing (busybox-static): run tests/vm/setup.sh"
for c in timeout tail awk sha256sum mktemp; do command -v $c >/dev/null || skip "$c not found"; done

# control dir: its path goes on the kernel command line, so no spaces or commas
TMPBASE=${TMPDIR:-/tmp}
[[ $TMPBASE =~ ^/[A-Za-z0-9_./-]*$ ]] || TMPBASE=/tmp
CTL=$(mktemp -d "$TMPBASE/cmd-vm.XXXXXX") || skip "cannot create a directory in $TMPBASE"
CTL=$(cd "$CTL" && pwd -P)
QPID='' TAILS=()
# shellcheck disable=SC2317 # called through the trap
cleanup() {
	[ -n "$QPID" ] && kill "$QPID" 2>/dev/null
	for p in ${TAILS[@]+"${TAILS[@]}"}; do kill "$p" 2>/dev/null; done
	if [ "$KEEP" = 1 ]; then err "kept $CTL"; else rm -rf "$CTL"; fi
}
trap cleanup EXIT
trap 'err "interrupted"; exit 130' INT
trap 'err "terminated"; exit 143' TERM HUP

cp "$HERE/guest-init.sh" "$CTL/guest-init.sh"
: >"$CTL/stdout"
: >"$CTL/stderr"
: >"$CTL/console.log"
{
	printf 'CMDVM_%s=%q\n' RW "$RW" CWD "$CWD" MODULES "$MODULES" TWO "$TWO" KCM "$KCM"
	printf 'CMDVM_ARGV=('
	printf '%q ' "${CMD[@]}"
	printf ')\n'
} >"$CTL/config"
for e in "${EXPORTS[@]}"; do printf 'export %s=%q\n' "${e%%=*}" "${e#*=}"; done >"$CTL/env"

qpath() { echo "${1//,/,,}"; }   # qemu option values escape ',' as ',,'
SMP=${CMD_VM_SMP:-2} MEM=${CMD_VM_MEM:-1024}
# shellcheck disable=SC2054 # commas are qemu's
QARGS=(
	-accel tcg,thread=multi -cpu max -smp "$SMP" -m "$MEM"
	-nodefaults -no-user-config -display none -monitor none -no-reboot -nic none
	-serial "file:$CTL/console.log"
	-kernel "$KERNEL" -initrd "$INITRD"
	-append "console=ttyS0 panic=-1 ${CMD_VM_KCMDLINE:-quiet loglevel=4} cmdvm.ctl=$CTL"
	-virtfs "local,path=/,mount_tag=cmdroot,security_model=none,readonly=on,multidevs=remap"
	-virtfs "local,path=$(qpath "$RW"),mount_tag=cmdrw,security_model=none,multidevs=remap"
	-virtfs "local,path=$CTL,mount_tag=cmdctl,security_model=none,multidevs=remap"
)
# shellcheck disable=SC2206 # extra arguments, split on spaces on purpose
[ -n "${CMD_VM_QEMU_ARGS:-}" ] && QARGS+=($CMD_VM_QEMU_ARGS)
[ $VERBOSE = 1 ] && err "qemu: $QEMU ${QARGS[*]}"

# qemu under TCG has been seen, rarely, to crash (SIGSEGV) or to hang at
# start-up, before the guest printed a line (both on a loaded 2-core host):
# that says nothing of the command, so it is tried again, up to three times
# in all, each try logged. A guest that printed nothing BOOT_WAIT s after
# qemu started is taken for such a hang: the kernel boots quiet, so the
# console's first line is guest-init's, 6-9 s after qemu starts under TCG
# (up to ~20 s measured on a loaded host); 120 s is a bound only a stuck
# qemu misses. A failure after the guest started is never retried (it is
# reported below).
BOOT_WAIT=${CMD_VM_BOOT_WAIT:-120}
for try in 1 2 3; do
	T_QEMU=$(now)
	timeout -k 10 "$TIMEOUT" "$QEMU" "${QARGS[@]}" </dev/null >"$CTL/qemu.log" 2>&1 &
	QPID=$!
	# the start-up watchdog (see above): stop a qemu whose guest is silent
	(
		for _ in $(seq $((BOOT_WAIT * 5))); do
			[ -s "$CTL/console.log" ] && exit 0
			kill -0 "$QPID" 2>/dev/null || exit 0
			sleep 0.2
		done
		: >"$CTL/boot-hung"
		# qemu is timeout's child: it first, then timeout itself
		pkill -KILL -P "$QPID" 2>/dev/null
		kill -KILL "$QPID" 2>/dev/null
	) &
	WATCH=$!
	# stream while the VM runs; tail exits after its last read once qemu is gone
	tail -n +1 -s 0.2 -f --pid="$QPID" "$CTL/stdout" &
	TAILS+=($!)
	tail -n +1 -s 0.2 -f --pid="$QPID" "$CTL/stderr" >&2 &
	TAILS+=($!)
	if [ $VERBOSE = 1 ]; then
		tail -n +1 -s 0.2 -f --pid="$QPID" "$CTL/console.log" >&2 &
		TAILS+=($!)
	fi
	QRC=0
	wait "$QPID" || QRC=$?
	QPID=''
	kill "$WATCH" 2>/dev/null || true
	wait "$WATCH" 2>/dev/null || true
	wait "${TAILS[@]}" 2>/dev/null || true
	TAILS=()
	T_END=$(now)
	hung=0
	[ -e "$CTL/boot-hung" ] && hung=1
	rm -f "$CTL/boot-hung"
	if [ $hung = 0 ] && { [ $QRC = 0 ] || [ $QRC = 124 ] ||
		[ $QRC = 137 ] || [ -s "$CTL/console.log" ] ||
		[ -s "$CTL/rc" ]; }; then
		break
	fi
	if [ $hung = 1 ]; then
		err "qemu: the guest printed nothing in ${BOOT_WAIT} s (try $try of 3)"
	else
		err "qemu exited $QRC before the guest started (try $try of 3)"
	fi
	sed 's/^/  /' "$CTL/qemu.log" >&2
	if [ "$try" = 3 ]; then
		[ $hung = 1 ] && QRC=1
		break
	fi
	err "trying again"
done

show_console() {
	[ $VERBOSE = 1 ] && return
	err "---- guest console (last 40 lines) ----"
	tail -n 40 "$CTL/console.log" | sed 's/^/  /' >&2
	err "---- end of guest console ----"
}
if [ $QRC = 124 ] || [ $QRC = 137 ]; then
	err "TIMEOUT: the VM did not finish within $TIMEOUT s; qemu was killed"
	show_console
	exit 124
fi
if [ -s "$CTL/rc" ]; then
	RC=$(<"$CTL/rc")
	STARTED=$(cat "$CTL/started" 2>/dev/null || echo '?')
	err "vm: kernel $KVER, command started at guest uptime ${STARTED}s, exit status $RC," \
		"wall $(secs "$T_START" "$T_END")s (qemu $(secs "$T_QEMU" "$T_END")s)"
	exit "$RC"
fi
if [ -s "$CTL/fatal" ]; then
	err "ERROR: the VM could not run the command: $(<"$CTL/fatal")"
	show_console
	exit 99
fi
if [ $QRC != 0 ] && [ ! -s "$CTL/console.log" ]; then
	err "qemu failed (exit $QRC):"
	sed 's/^/  /' "$CTL/qemu.log" >&2
	skip "qemu could not start the VM"
fi
err "ERROR: the VM stopped without reporting an exit status (qemu exit $QRC)"
sed 's/^/  qemu: /' "$CTL/qemu.log" >&2
show_console
exit 99
