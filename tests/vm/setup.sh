#!/bin/bash
# tests/vm/setup.sh - prepare the host for tests/vm/run.sh (idempotent, fast when done).
#
#  1. host packages (userspace only, --no-install-recommends; apt-get update only
#     when something is missing). rdma-core is deliberately NOT installed: it would
#     upgrade systemd/udev and is not needed (no udev in the guest).
#  2. Debian's current kernel (the package behind linux-image-amd64), fetched with
#     `apt-get download`, unpacked with `dpkg-deb -x` into $CMD_VM_CACHE (never
#     installed on the host), then depmod'ed there.
#  3. a tiny initramfs: static busybox + the virtio/9p modules (resolved with
#     modprobe --show-depends) + tests/vm/initramfs-init as /init.
#
# Cache: ${CMD_VM_CACHE:-/var/cache/cmd-vm}. Result: $CMD_VM_CACHE/ready, read by run.sh.
# Options: --offline  never call apt-get update / download (use what is cached)
#          --force    rebuild the unpacked kernel and the initramfs
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CACHE=${CMD_VM_CACHE:-/var/cache/cmd-vm}
OFFLINE=0 FORCE=0
for a in "$@"; do
	case $a in
	--offline) OFFLINE=1 ;;
	--force) FORCE=1 ;;
	-h | --help) sed -n '2,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) echo "setup.sh: unknown option $a" >&2; exit 2 ;;
	esac
done

PKGS=(qemu-system-x86 busybox-static kmod iproute2 ibverbs-providers ibverbs-utils
	libibumad-dev libibverbs-dev infiniband-diags gcc libc6-dev pkg-config gzip xz-utils
	binutils mount rdmacm-utils perftest)

T0=$EPOCHREALTIME
say() { printf '[setup %ss] %s\n' "$(awk -v a="$T0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%5.1f", b - a }')" "$*"; }
die() { echo "setup.sh: error: $*" >&2; exit 1; }
export DEBIAN_FRONTEND=noninteractive

# ---- 1. packages --------------------------------------------------------------
installed=" $(dpkg-query -W -f='${db:Status-Abbrev}${Package}\n' "${PKGS[@]}" 2>/dev/null |
	awk '$1 == "ii" { printf "%s ", $2 }' || true) "
missing=()
for p in "${PKGS[@]}"; do [[ $installed == *" $p "* ]] || missing+=("$p"); done
APT_UPDATED=0
apt_update() {
	[ $APT_UPDATED = 1 ] && return 0
	[ $OFFLINE = 1 ] && die "would need 'apt-get update' but --offline was given"
	say "apt-get update"
	apt-get update -q >/dev/null
	APT_UPDATED=1
}
if [ ${#missing[@]} -gt 0 ]; then
	[ "$(id -u)" = 0 ] || die "missing packages (${missing[*]}) and not root: run as root"
	apt_update
	say "installing: ${missing[*]}"
	apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
fi
for c in qemu-system-x86_64 depmod modprobe dpkg-deb apt-get; do
	command -v "$c" >/dev/null || die "$c not found after installing packages"
done
[ -x /bin/busybox ] || die "/bin/busybox missing (busybox-static)"

# The guest bind-mounts the guest kernel's modules over /lib/modules so that a plain
# `modprobe` works in it; the mount point must exist in the (read-only) host root.
if [ ! -d /lib/modules ]; then
	[ "$(id -u)" = 0 ] || die "/lib/modules does not exist and not root to create it"
	mkdir -p /lib/modules
fi

# ---- 2. kernel ----------------------------------------------------------------
mkdir -p "$CACHE"
exec 9>"$CACHE/.lock"
flock 9   # one setup at a time per cache
resolve_kpkg() {   # the versioned image package behind the metapackage
	apt-cache depends linux-image-amd64 2>/dev/null |
		awk '$1 == "Depends:" && $2 ~ /^linux-image-[0-9]/ { print $2; exit }'
}
KPKG=$(resolve_kpkg)
if [ -z "$KPKG" ] && [ $OFFLINE = 0 ]; then apt_update; KPKG=$(resolve_kpkg); fi
if [ -z "$KPKG" ]; then
	# offline and no package lists: fall back to what is cached
	KPKG=$(sed -n 's/^kpkg=//p' "$CACHE/ready" 2>/dev/null || true)
	[ -n "$KPKG" ] || die "cannot resolve linux-image-amd64 (no apt lists?) and nothing cached"
	say "warning: cannot resolve linux-image-amd64, using cached $KPKG"
fi
KV=${KPKG#linux-image-}
KDIR=$CACHE/kernel/$KV

if [ $FORCE = 1 ] || [ ! -f "$KDIR/.complete" ]; then
	[ $OFFLINE = 1 ] && die "kernel $KV not cached and --offline given"
	DL=$CACHE/download
	rm -rf "$DL" "$KDIR" "$KDIR.tmp"
	mkdir -p "$DL"
	chmod 755 "$DL"   # apt-get download drops privileges to _apt when it can
	say "downloading $KPKG"
	if ! (cd "$DL" && apt-get download -q "$KPKG" >/dev/null 2>&1); then
		# stale package lists point at a version the mirror no longer has
		apt_update
		KPKG2=$(resolve_kpkg)
		[ "$KPKG2" = "$KPKG" ] || die "linux-image-amd64 now depends on $KPKG2; re-run setup.sh"
		(cd "$DL" && apt-get download -q "$KPKG" >/dev/null) || die "apt-get download $KPKG failed"
	fi
	say "unpacking $(basename "$DL"/*.deb)"
	mkdir -p "$KDIR.tmp"
	dpkg-deb -x "$DL"/"${KPKG}"_*.deb "$KDIR.tmp"
	rm -rf "$DL"
	# Debian >= 13 ships modules under usr/lib/modules; kmod looks in lib/modules
	if [ ! -d "$KDIR.tmp/lib/modules/$KV" ] && [ -d "$KDIR.tmp/usr/lib/modules/$KV" ]; then
		ln -s usr/lib "$KDIR.tmp/lib"
	fi
	[ -d "$KDIR.tmp/lib/modules/$KV" ] || die "no lib/modules/$KV in $KPKG"
	say "depmod $KV"
	depmod -b "$KDIR.tmp" "$KV"
	touch "$KDIR.tmp/.complete"
	mv "$KDIR.tmp" "$KDIR"
	# drop other (older) kernels
	for d in "$CACHE"/kernel/*; do [ "$d" = "$KDIR" ] || rm -rf "$d"; done
fi
VMLINUZ=$KDIR/boot/vmlinuz-$KV
[ -f "$VMLINUZ" ] || die "$VMLINUZ missing"
# Boot the uncompressed ELF vmlinux through its PVH entry point when it has one:
# decompressing the bzImage under TCG costs ~4 s of every boot.
BOOT=$VMLINUZ
VMLINUX=$KDIR/boot/vmlinux-$KV
if [ ! -f "$VMLINUX" ] && [ ! -f "$VMLINUX.none" ]; then
	off=$(LC_ALL=C grep -obUaP '\xfd7zXZ\x00' "$VMLINUZ" 2>/dev/null | head -1 | cut -d: -f1 || true)
	if [ -n "$off" ] && command -v xz >/dev/null &&
		{ tail -c +$((off + 1)) "$VMLINUZ" || :; } | xz -dc --single-stream >"$VMLINUX.tmp" 2>/dev/null &&
		[[ $(readelf -n "$VMLINUX.tmp" 2>/dev/null) == *"(0x00000012)"* ]]; then # XEN_ELFNOTE_PHYS32_ENTRY
		mv "$VMLINUX.tmp" "$VMLINUX"
		say "extracted $(basename "$VMLINUX") (PVH boot)"
	else
		rm -f "$VMLINUX.tmp"
		: >"$VMLINUX.none"
		say "no PVH-bootable vmlinux in $(basename "$VMLINUZ"): booting the bzImage (slower)"
	fi
fi
[ -s "$VMLINUX" ] && BOOT=$VMLINUX

# ---- 3. initramfs -------------------------------------------------------------
INIT_SRC=$HERE/initramfs-init
INIT_SUM=$(sha256sum <"$INIT_SRC" | cut -c1-16)   # run.sh checks this too
INITRD=$CACHE/initramfs-$KV.cpio.gz
if [ $FORCE = 1 ] || [ ! -f "$INITRD" ] || ! grep -qx "initsum=$INIT_SUM" "$CACHE/ready" 2>/dev/null; then
	say "building initramfs"
	R=$(mktemp -d "$CACHE/initramfs.XXXXXX")
	trap 'rm -rf "$R"' EXIT
	mkdir -p "$R"/{bin,dev,proc,sys,newroot,lib/modules}
	cp /bin/busybox "$R/bin/busybox"
	install -m 755 "$INIT_SRC" "$R/init"
	# modules (and their dependencies) needed to reach the 9p root, in load order
	: >"$R/lib/modules/order"
	while read -r verb path _; do
		[ "$verb" = insmod ] || continue        # "builtin NAME" lines need nothing
		name=$(basename "$path")
		case $name in
		*.ko) cp "$path" "$R/lib/modules/$name" ;;
		*.ko.xz) name=${name%.xz}; xz -dc "$path" >"$R/lib/modules/$name" ;;
		*.ko.zst) name=${name%.zst}; zstd -qdc "$path" >"$R/lib/modules/$name" ;;
		*.ko.gz) name=${name%.gz}; gzip -dc "$path" >"$R/lib/modules/$name" ;;
		*) die "unexpected module file $path" ;;
		esac
		grep -qx "$name" "$R/lib/modules/order" || echo "$name" >>"$R/lib/modules/order"
	done < <(modprobe -d "$KDIR" -S "$KV" --show-depends -a virtio_pci 9pnet_virtio 9p)
	say "initramfs modules: $(tr '\n' ' ' <"$R/lib/modules/order")"
	(cd "$R" && find . | /bin/busybox cpio -o -H newc 2>/dev/null | gzip -1) >"$INITRD.tmp"
	mv "$INITRD.tmp" "$INITRD"
	rm -rf "$R"
	trap - EXIT
	rm -f "$CACHE"/initramfs-*.cpio.gz.tmp
	for f in "$CACHE"/initramfs-*.cpio.gz; do [ "$f" = "$INITRD" ] || rm -f "$f"; done
	say "initramfs: $(stat -c %s "$INITRD") bytes"
fi

cat >"$CACHE/ready.tmp" <<EOF
kpkg=$KPKG
kver=$KV
kernel=$BOOT
modules=$KDIR/lib/modules
initrd=$INITRD
initsum=$INIT_SUM
EOF
mv "$CACHE/ready.tmp" "$CACHE/ready"
say "ready: kernel $KV, cache $CACHE"
