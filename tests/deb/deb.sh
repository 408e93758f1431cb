#!/bin/bash
# SPDX-License-Identifier: MIT
#
# The Debian packages, end to end:
#  1. copies the source tree as it is in the work tree (every file git
#     tracks or would track: `git ls-files --cached --others
#     --exclude-standard`, so uncommitted edits are built, the build
#     directories and ignored files are not) and builds it with
#     `DEB_BUILD_OPTIONS=nocheck dpkg-buildpackage -us -uc -b`
#     (dpkg-checkbuilddeps first: debian/control's Build-Depends must be
#     installed, i.e. scripts/install-deps.sh installs them);
#  2. lintian on the .changes: no error or warning beyond
#     debian/*.lintian-overrides;
#  3. the packages' contents: each expected file in its package, no path
#     that an installed package (librdmacm1 above all) already owns;
#  4. `dpkg -i` of the four packages inside a private mount namespace, on an
#     overlayfs over / (upper layer in a tmpfs): this machine's / is never
#     written. There, the conffile and the enabled units are checked, and
#     the examples are built from /usr/share/doc/cmd/examples with their
#     Makefile against the installed libcmclient-dev;
#  5. from inside that namespace, scripts/demo-guest.sh through
#     tests/vm/run.sh with the installed /usr/sbin/cmd and /usr/bin/cmctl
#     and those examples: the VM's root is the namespace's /, so the guest
#     sees the installed packages (on a host with rxe, run.sh runs it there,
#     in the namespace too). Under flock /tmp/cmd-vm.lock: one VM at a time.
#
#   deb.sh SOURCE_DIR
#
# Exit 77 (SKIP) when not root, or when overlayfs or the VM are not there
# (saying which); the packages were then built and checked all the same.
set -uo pipefail

src=$(cd "${1:?usage: deb.sh SOURCE_DIR}" && pwd) || exit 2
fail=0
err() {
	echo "FAIL: $*"
	fail=1
}
die() {
	echo "FAIL: $*"
	exit 1
}
skip() {
	echo "SKIP: $*"
	exit 77
}
[ "$(id -u)" = 0 ] || skip "not root (dpkg -i in a mount namespace needs root)"
for c in dpkg-buildpackage lintian git unshare; do
	command -v $c >/dev/null || die "$c not found (scripts/install-deps.sh)"
done

tmp=$(mktemp -d /tmp/cmd-deb-XXXXXX) || die "mktemp"
trap 'rm -rf "$tmp"' EXIT
version=$(dpkg-parsechangelog -l "$src/debian/changelog" -S Version) ||
	die "debian/changelog"
arch=$(dpkg-architecture -qDEB_HOST_ARCH)
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)

# ---- 1. build ---------------------------------------------------------------
tree=$tmp/src/cmd-$version
mkdir -p "$tree"
(cd "$src" && git ls-files -z --cached --others --exclude-standard |
	while IFS= read -r -d '' f; do
		# dh's meson build directory of an in-tree dpkg-buildpackage
		case $f in obj-*/*) continue ;; esac
		# tracked but deleted in the work tree: not part of it
		[ -e "$f" ] || [ -L "$f" ] && printf '%s\0' "$f"
	done | tar --null --no-recursion -T - -cf -) |
	tar -xf - -C "$tree" || die "copying the source tree"
echo "--- dpkg-buildpackage -us -uc -b (DEB_BUILD_OPTIONS=nocheck) in a copy of $src"
if ! (cd "$tree" && DEB_BUILD_OPTIONS=nocheck dpkg-buildpackage -us -uc -b) \
	>"$tmp/build.log" 2>&1; then
	tail -n 40 "$tmp/build.log"
	die "dpkg-buildpackage"
fi
grep -E '^dpkg-(deb|buildpackage): ' "$tmp/build.log"
debs=()
for p in cmd libcmclient1 libcmclient-dev cmd-rdmacm; do
	d=$tmp/src/${p}_${version}_$arch.deb
	[ -f "$d" ] || die "not built: ${d##*/}"
	debs+=("$d")
done

# ---- 2. lintian -------------------------------------------------------------
echo "--- lintian ${tmp##*/}/src/cmd_${version}_$arch.changes"
lintian --fail-on error,warning --info --display-level '>=pedantic' \
	"$tmp/src/cmd_${version}_$arch.changes" >"$tmp/lintian.log" 2>&1
lrc=$?
grep -v 'running with root privileges' "$tmp/lintian.log"
[ $lrc = 0 ] || err "lintian: an error or warning not overridden (exit $lrc)"
# (--show-overrides would make lintian fail on the overridden tags too)
echo "overridden, with the reasons in debian/*.lintian-overrides:"
grep -hv '^#' "$tree"/debian/*.lintian-overrides | sed 's/^/    /'
grep -q '^[EW]: ' "$tmp/lintian.log" && err "lintian: errors or warnings above"

# ---- 3. contents ------------------------------------------------------------
ml=usr/lib/$multiarch
want() { # package, paths it must ship
	local p=$1 f
	shift
	dpkg-deb -c "$tmp/src/${p}_${version}_$arch.deb" |
		awk '{ sub(/^\.\//, "/", $6); print $6 }' >"$tmp/$p.list"
	for f in "$@"; do
		grep -qx "$f" "$tmp/$p.list" || err "$p does not ship $f"
	done
}
want cmd /usr/sbin/cmd /usr/bin/cmctl /usr/bin/cmmad /usr/bin/cmhub \
	/usr/bin/cmc_ping /usr/bin/cmc_rping /usr/bin/cmbench \
	/etc/cmd/cmd.conf /lib/systemd/system/cmd.service \
	/lib/systemd/system/cmd.socket /usr/share/man/man8/cmd.8.gz \
	/usr/share/man/man8/cmctl.8.gz /usr/share/bash-completion/completions/cmctl
want libcmclient1 "/$ml/libcmclient.so.1"
want libcmclient-dev /usr/include/cmd/cmclient.h "/$ml/libcmclient.so" \
	"/$ml/pkgconfig/cmclient.pc" /usr/share/man/man3/cmclient.3.gz \
	/usr/share/doc/cmd/examples/Makefile \
	/usr/share/doc/cmd/examples/cmc_server.c \
	/usr/share/doc/cmd/examples/cmc_client.c
want cmd-rdmacm "/$ml/cmd/librdmacm.so.1" /usr/bin/cmd-rdmacm \
	/usr/share/man/man1/cmd-rdmacm.1.gz
grep -q "^/$ml/librdmacm" "$tmp/cmd-rdmacm.list" &&
	err "cmd-rdmacm ships a librdmacm in /$ml, librdmacm1's place"
grep -q '/wireshark/plugins/' "$tmp/cmd.list" ||
	err "cmd ships no Wireshark dissector"
# The maintainer scripts (no systemd runs the units here): cmd.socket
# enabled and started, cmd.service enabled, never started at installation,
# try-restarted on upgrade, stopped on removal.
dpkg-deb -e "${debs[0]}" "$tmp/cmd.control"
grep -q "deb-systemd-helper enable 'cmd.service'" "$tmp/cmd.control/postinst" ||
	err "postinst does not enable cmd.service"
grep -q "deb-systemd-invoke \$_dh_action 'cmd.socket'" "$tmp/cmd.control/postinst" ||
	err "postinst does not start cmd.socket"
grep -Eq "deb-systemd-invoke (start|restart|\\\$_dh_action) 'cmd.service'" \
	"$tmp/cmd.control/postinst" && err "postinst starts cmd.service"
grep -q "deb-systemd-invoke try-restart cmd.service" "$tmp/cmd.control/postinst" ||
	err "postinst does not try-restart cmd.service on upgrade"
grep -q "deb-systemd-invoke stop cmd.service" "$tmp/cmd.control/prerm" ||
	err "prerm does not stop cmd.service on removal"
dpkg-deb -f "${debs[0]}" Depends | grep -q libcmclient1 ||
	err "cmd does not depend on libcmclient1 (shlibs)"
dpkg-deb -I "${debs[1]}" symbols >/dev/null 2>&1 ||
	err "libcmclient1 has no symbols file"
# No file any installed package owns (librdmacm1's first: cmd-rdmacm is
# installed beside it); directories are shared.
dpkg-query -W librdmacm1 >/dev/null 2>&1 ||
	echo "note: librdmacm1 is not installed here: its file list not checked"
for p in cmd libcmclient1 libcmclient-dev cmd-rdmacm; do
	dpkg-deb -c "$tmp/src/${p}_${version}_$arch.deb" | awk '$1 !~ /^d/ {
		sub(/^\.\//, "/", $6); print $6 }' | while read -r f; do
		# (an older cmd installed on this machine owns them rightly)
		owner=$(dpkg -S "$f" 2>/dev/null | grep -Ev \
			'^(cmd|cmd-rdmacm|libcmclient1|libcmclient-dev)(:[a-z0-9]+)?: ') &&
			echo "FAIL: $p's $f is already owned: $owner"
	done
done | tee "$tmp/owned"
[ -s "$tmp/owned" ] && fail=1
echo "--- contents (files per package)"
for d in "${debs[@]}"; do
	printf '%-40s %3d files\n' "${d##*/}" \
		"$(dpkg-deb -c "$d" | grep -vc '^d')"
done

host_cmd=$(dpkg-query -W -f '${db:Status-Abbrev}${Version}' cmd 2>/dev/null)

# ---- 4./5. install and run, in a private mount namespace ------------------------
grep -qw overlay /proc/filesystems || modprobe overlay 2>/dev/null
grep -qw overlay /proc/filesystems || skip "no overlayfs here: packages built and checked, not installed"
cat >"$tmp/inside.sh" <<'INSIDE'
#!/bin/bash
# Runs in the new mount namespace: overlay over /, then chroot into it.
set -eu
tmp=$1 src=$2
ovl=$tmp/ovl
mkdir -p "$ovl"
mount -t tmpfs -o mode=0755 cmd-deb "$ovl"
mkdir -p "$ovl/upper" "$ovl/work" "$ovl/root"
mount -t overlay -o "lowerdir=/,upperdir=$ovl/upper,workdir=$ovl/work" cmd-deb "$ovl/root"
r=$ovl/root
for m in proc sys dev dev/pts dev/shm; do
	mountpoint -q "/$m" && mount --rbind "/$m" "$r/$m"
done
# /run: empty, so that the maintainer scripts see no running systemd (on a
# developer's machine they would otherwise start units on the host's).
mount -t tmpfs -o mode=0755 cmd-deb-run "$r/run"
exec chroot "$r" /bin/bash "$tmp/chroot.sh" "$tmp" "$src"
INSIDE
cat >"$tmp/chroot.sh" <<'CHROOT'
#!/bin/bash
# Runs chrooted into the overlay: this / is the machine's, writes are lost.
set -u
tmp=$1 src=$2
fail=0
err() { echo "FAIL: $*"; fail=1; }
export DEBIAN_FRONTEND=noninteractive
echo "--- dpkg -i (overlay over /, private mount namespace)"
if ! dpkg -i "$tmp"/src/cmd_*.deb "$tmp"/src/libcmclient1_*.deb \
	"$tmp"/src/libcmclient-dev_*.deb "$tmp"/src/cmd-rdmacm_*.deb \
	>"$tmp/dpkg.log" 2>&1; then
	cat "$tmp/dpkg.log"
	echo "FAIL: dpkg -i"
	exit 1
fi
grep -E '^Setting up ' "$tmp/dpkg.log"
dpkg-query -W -f '${Package} ${Version} ${db:Status-Abbrev}\n' cmd \
	libcmclient1 libcmclient-dev cmd-rdmacm
for p in cmd libcmclient1 libcmclient-dev cmd-rdmacm; do
	[ "$(dpkg-query -W -f '${db:Status-Abbrev}' "$p")" = "ii " ] ||
		err "$p is not installed"
done
grep -qx /etc/cmd/cmd.conf /var/lib/dpkg/info/cmd.conffiles ||
	err "/etc/cmd/cmd.conf is not a conffile"
# cmd.socket enabled; cmd.service enabled for boot (never started here).
[ -L /etc/systemd/system/sockets.target.wants/cmd.socket ] ||
	err "cmd.socket is not enabled"
[ -L /etc/systemd/system/multi-user.target.wants/cmd.service ] ||
	err "cmd.service is not enabled"
/usr/sbin/cmd --help >/dev/null 2>&1 || err "/usr/sbin/cmd --help"

echo "--- the examples, built from /usr/share/doc/cmd/examples (libcmclient-dev)"
ex=$tmp/examples
cp -r /usr/share/doc/cmd/examples "$ex"
if ! make -C "$ex" cmc_server cmc_client >"$tmp/make.log" 2>&1; then
	cat "$tmp/make.log"
	echo "FAIL: the examples do not build against the installed packages"
	exit 1
fi
tail -n 1 "$tmp/make.log"
# /lib may be /usr/lib's symlink (merged /usr): the file dpkg knows.
lib=$(readlink -f "$(ldd "$ex/cmc_server" |
	awk '$1 == "libcmclient.so.1" { print $3 }')")
echo "cmc_server runs on $lib ($(dpkg -S "$lib" 2>/dev/null))"
dpkg -S "$lib" 2>/dev/null | grep -q '^libcmclient1' ||
	err "cmc_server does not run on libcmclient1's library"

echo "--- the demo on rxe: /usr/sbin/cmd, /usr/bin/cmctl, the built examples"
cd "$ex"
rc=0
DEMO_CMD=/usr/sbin/cmd DEMO_CMCTL=/usr/bin/cmctl DEMO_SERVER=$ex/cmc_server \
	DEMO_CLIENT=$ex/cmc_client \
	"$src/tests/vm/run.sh" --rw "$ex" --timeout 600 \
	--env DEMO_CMD --env DEMO_CMCTL --env DEMO_SERVER --env DEMO_CLIENT \
	-- "$src/scripts/demo-guest.sh" "$ex" </dev/null >"$tmp/demo.log" 2>&1 || rc=$?
cat "$tmp/demo.log"
[ $rc = 77 ] && exit 77
[ $rc = 0 ] || err "the demo failed (exit $rc)"
grep -q "^programs: /usr/sbin/cmd /usr/bin/cmctl $ex/cmc_server $ex/cmc_client" \
	"$tmp/demo.log" || err "the demo did not run the installed programs"
grep -q "serving 1 port" "$tmp/demo.log" || err "the installed cmd served no port"
exit $fail
CHROOT
chmod +x "$tmp/inside.sh" "$tmp/chroot.sh"
# One VM at a time on this machine (tests/vm); the lock is the host's /tmp.
flock /tmp/cmd-vm.lock unshare -m --propagation private \
	"$tmp/inside.sh" "$tmp" "$src"
rc=$?
case $rc in
0) ;;
77) skip "packages built, checked and installed; the VM could not run the demo (above)" ;;
*) fail=1 ;;
esac
# The machine's own / is untouched.
[ "$(dpkg-query -W -f '${db:Status-Abbrev}${Version}' cmd 2>/dev/null)" = "$host_cmd" ] ||
	err "the package cmd changed on this machine's own /"
[ -e /usr/sbin/cmd ] && [ -z "$host_cmd" ] && err "/usr/sbin/cmd appeared on this machine's own /"
[ "$fail" = 0 ] && echo "PASS: packages built, lintian clean, installed, demo ran on them"
exit "$fail"
