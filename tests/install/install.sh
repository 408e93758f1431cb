#!/bin/sh
# SPDX-License-Identifier: MIT
#
# meson install into a temporary DESTDIR, then check that every file lands
# where a packager expects it, that the units verify against the installed
# tree, and that an application builds against the installed library with
# `pkg-config --cflags --libs cmclient` and nothing else.
#
#   install.sh BUILD_DIR
set -eu

build=${1:?usage: install.sh BUILD_DIR}
tmp=$(mktemp -d /tmp/cmd-install-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
dest="$tmp/dest"

fail=0
err() {
	echo "FAIL: $*"
	fail=1
}

# --no-rebuild: the test runs after the build; --quiet keeps the log short.
meson install -C "$build" --destdir "$dest" --no-rebuild --quiet \
	>"$tmp/install.log" 2>&1 || {
	cat "$tmp/install.log"
	echo "FAIL: meson install"
	exit 1
}

# The installation's directories, as meson configured them (absolute).
# b_sanitize: an app linking a sanitized library must be built the same way.
prefix='' sbindir='' bindir='' libdir='' includedir='' mandir='' sysconfdir=''
sanitize=''
eval "$(meson introspect --buildoptions "$build" | python3 -c '
import json, os.path, shlex, sys
o = {x["name"]: x["value"] for x in json.load(sys.stdin)}
for k in ("prefix", "sbindir", "bindir", "libdir", "includedir",
          "mandir", "sysconfdir"):
    print("%s=%s" % (k, shlex.quote(os.path.join(o["prefix"], o[k]))))
san = o.get("b_sanitize", "none")
san = ",".join(san) if isinstance(san, list) else san
print("sanitize=%s" % shlex.quote("" if san == "none" else san))')"
docdir="$prefix/share/doc/cmd"
# The units' directory, as meson installs them (-Dsystemdunitdir, or
# systemd's own under prefix /usr, or prefix/lib/systemd/system).
unitdir=$(meson introspect --installed "$build" | python3 -c '
import json, os.path, sys
for src, dst in json.load(sys.stdin).items():
    if os.path.basename(dst) == "cmd.service":
        print(os.path.dirname(dst))')
[ -n "$unitdir" ] || err "meson installs no cmd.service"

tools="$bindir/cmctl $bindir/cmmad $bindir/cmd-rdmacm $bindir/cmhub \
	$bindir/cmc_ping $bindir/cmc_rping $bindir/cmbench"
examples="cmc_server.c cmc_client.c cmc_ping.c cmc_rping.c cmc_common.h Makefile"
# shellcheck disable=SC2086 # lists of paths
for f in "$sbindir/cmd" $tools \
	"$libdir/libcmclient.so" "$libdir/libcmclient.so.1" \
	"$includedir/cmd/cmclient.h" "$libdir/pkgconfig/cmclient.pc" \
	"$unitdir/cmd.service" "$unitdir/cmd.socket" \
	"$sysconfdir/cmd/cmd.conf" \
	"$mandir/man8/cmd.8" "$mandir/man8/cmctl.8" "$mandir/man1/cmmad.1" \
	"$mandir/man1/cmhub.1" \
	"$mandir/man3/cmclient.3" "$mandir/man1/cmd-rdmacm.1" \
	"$mandir/man7/cmd-librdmacm.7" \
	"$libdir/cmd/librdmacm.so.1" \
	"$libdir/pkgconfig/cmd-rdmacm.pc" \
	$(for e in $examples; do echo "$docdir/examples/$e"; done); do
	[ -e "$dest$f" ] || err "not installed: $f"
done
# Every installed program has its manual page (lintian's
# binary-without-manpage).
for f in "$dest$bindir"/* "$dest$sbindir"/*; do
	[ -e "$f" ] || continue
	n=${f##*/}
	[ -e "$dest$mandir/man1/$n.1" ] || [ -e "$dest$mandir/man8/$n.8" ] ||
		err "$n is installed without a manual page"
done
# The header lives in its own directory, not at the top of includedir.
[ ! -e "$dest$includedir/cmclient.h" ] || err "cmclient.h installed in $includedir"
# Under any prefix but /usr the units stay inside the prefix.
case $prefix in
/usr) ;;
*) case $unitdir in
	"$prefix"/*) ;;
	*) err "units installed outside the prefix $prefix: $unitdir" ;;
	esac ;;
esac
# Never in place of the system's librdmacm.
[ ! -e "$dest$libdir/librdmacm.so.1" ] || err "librdmacm.so.1 installed in $libdir"
# shellcheck disable=SC2086 # a list of paths
for f in "$sbindir/cmd" $tools; do
	[ -x "$dest$f" ] || err "not executable: $f"
done
grep -qx "ExecStart=$sbindir/cmd" "$dest$unitdir/cmd.service" ||
	err "cmd.service does not start $sbindir/cmd"

echo "--- installed files"
(cd "$dest" && find . -type f -o -type l | sort)

# The units, as installed. systemd-analyze verify wants ExecStart= to exist
# on this machine and the Documentation= man pages to be found: point the
# first at the build's daemon, the second at the installed pages.
if command -v systemd-analyze >/dev/null 2>&1; then
	mkdir "$tmp/units"
	sed "s|^ExecStart=.*|ExecStart=$(cd "$build" && pwd)/daemon/cmd|" \
		"$dest$unitdir/cmd.service" >"$tmp/units/cmd.service"
	cp "$dest$unitdir/cmd.socket" "$tmp/units/"
	if (cd "$tmp/units" && MANPATH="$dest$mandir" systemd-analyze verify \
		cmd.socket cmd.service) >"$tmp/verify" 2>&1 &&
		! [ -s "$tmp/verify" ]; then
		echo "--- systemd-analyze verify cmd.socket cmd.service: clean"
	else
		cat "$tmp/verify"
		err "systemd-analyze verify"
	fi
else
	echo "--- systemd-analyze not installed: units not verified"
fi

# An application, built the way cmclient(3) says, against the tree.
cat >"$tmp/app.c" <<'APP'
#include <stdio.h>
#include <cmclient.h>

int main(void)
{
	struct cmc_channel *ch;
	int rc = cmc_open("/nonexistent/cmd.sock", "install-test", &ch);

	printf("cmc_open: %s\n", cmc_strerror(rc));
	return rc == 0;
}
APP
# The .pc file is relocated as a packager's staging tree would be: its
# prefix moved into DESTDIR; libibverbs stays the system's.
mkdir "$tmp/pc"
sed "s|^prefix=.*|prefix=$dest$prefix|" "$dest$libdir/pkgconfig/cmclient.pc" \
	>"$tmp/pc/cmclient.pc"
export PKG_CONFIG_PATH="$tmp/pc"
flags=$(pkg-config --cflags --libs cmclient) || err "pkg-config cmclient"
echo "--- pkg-config --cflags --libs cmclient: $flags"
# shellcheck disable=SC2086 # flags is a list of options
if ${CC:-cc} -Wall -Werror ${sanitize:+-fsanitize=$sanitize} \
	-o "$tmp/app" "$tmp/app.c" $flags; then
	LD_LIBRARY_PATH="$dest$libdir" "$tmp/app" || err "the app did not run"
else
	err "the app does not build with pkg-config's flags"
fi

# The same application with the namespaced include, and pkg-config's flags
# pointing into includedir/cmd.
case " $(pkg-config --cflags cmclient) " in
*" -I$dest$includedir/cmd "*) ;;
*) err "pkg-config --cflags cmclient does not name $includedir/cmd" ;;
esac
sed 's|#include <cmclient.h>|#include <cmd/cmclient.h>|' "$tmp/app.c" >"$tmp/app2.c"
# shellcheck disable=SC2086 # flags is a list of options
${CC:-cc} -Wall -Werror ${sanitize:+-fsanitize=$sanitize} \
	-o "$tmp/app2" "$tmp/app2.c" $flags ||
	err "#include <cmd/cmclient.h> does not build with pkg-config's flags"

# The installed examples, built by their own Makefile against the tree
# (pkg-config finds the relocated .pc through PKG_CONFIG_PATH).
cp -r "$dest$docdir/examples" "$tmp/examples"
if make -C "$tmp/examples" \
	CFLAGS="-O2 -Wall -Werror ${sanitize:+-fsanitize=$sanitize}" \
	LDFLAGS="${sanitize:+-fsanitize=$sanitize}" >"$tmp/make.log" 2>&1; then
	for e in cmc_server cmc_client cmc_ping cmc_rping; do
		[ -x "$tmp/examples/$e" ] || err "the examples' Makefile built no $e"
	done
	echo "--- the installed examples build with their Makefile"
	LD_LIBRARY_PATH="$dest$libdir" "$tmp/examples/cmc_ping" -h \
		>/dev/null 2>&1 || err "the installed example cmc_ping -h failed"
else
	cat "$tmp/make.log"
	err "the installed examples do not build with their Makefile"
fi

# man finds a page for every function libcmclient exports, through the
# .so links in the installed tree.
man_missing=
for sym in $(nm -D --defined-only "$dest$libdir/libcmclient.so" |
	awk '$2 == "T" { sub(/@.*/, "", $3); print $3 }'); do
	out=$(MANPATH="$dest$mandir" LC_ALL=C MANWIDTH=1000 man -P cat "$sym" 2>&1) ||
		{ man_missing="$man_missing $sym"; continue; }
	# The page man opens lists the name in its NAME section.
	printf '%s\n' "$out" | sed -n '/^NAME/,/^SYNOPSIS/p' | grep -qw "$sym" ||
		man_missing="$man_missing $sym"
done
[ -z "$man_missing" ] || err "man finds no page naming:$man_missing"
echo "--- MANPATH=$mandir man cmc_connect_ip:"
MANPATH="$dest$mandir" LC_ALL=C MANWIDTH=80 man -P cat cmc_connect_ip 2>&1 | sed -n 1,8p

# No installed page cites a file the installation does not have. Each page
# is rendered to text (LC_ALL=C: ASCII hyphens; wide: no hyphenated
# breaks) and every absolute path in it must exist under DESTDIR, but
# those of the running system (/run, /dev, /proc, /sys, /tmp, /var: the
# socket, devices, state, logs), and no page may name a file of the source
# tree (docs/..., client-lib/..., tests/...).
find "$dest$mandir" -type f -name '*.[1-8]' | sort | while read -r page; do
	LC_ALL=C MANWIDTH=1000 man -l -P cat "$page" 2>/dev/null |
		python3 -c '
import re, sys
text = re.sub(".\b", "", sys.stdin.read())  # overstrike bold, if any
for m in re.finditer(r"(?<![\w./:~-])/[A-Za-z0-9_.][A-Za-z0-9_.@*+-]*(?:/[A-Za-z0-9_.@*+-]+)+", text):
    print("abs", m.group(0).rstrip("."))
for m in re.finditer(r"(?<![\w./:~-])(?:docs|client-lib|tests|tools|daemon|proto|scripts|systemd|etc)/[\w.-]+(?:/[\w.-]+)*", text):
    print("src", m.group(0).rstrip("."))' | sort -u | while read -r kind path; do
		name=${page##*/}
		case $kind:$path in
		abs:/run/* | abs:/dev/* | abs:/proc/* | abs:/sys/* | abs:/tmp/* | abs:/var/*) ;;
		abs:*)
			# shellcheck disable=SC2086 # a glob (umad*) may be part of it
			if ! ls -d "$dest"$path >/dev/null 2>&1; then
				echo "FAIL: $name cites $path, which is not installed"
				echo x >>"$tmp/cites"
			fi ;;
		src:*)
			echo "FAIL: $name cites the source tree's $path"
			echo x >>"$tmp/cites" ;;
		esac
	done
done
[ ! -e "$tmp/cites" ] || err "installed pages cite files that are not installed"
echo "--- $(find "$dest$mandir" -type f -name '*.[1-8]' | wc -l) installed pages: every file they cite is installed"

# A librdmacm program, built with cmd-rdmacm.pc's flags against the
# system's <rdma/rdma_cma.h>: it must run on the private librdmacm.so.1
# (the .pc's RUNPATH; relocated here, so LD_LIBRARY_PATH says where).
cat >"$tmp/rapp.c" <<'APP'
#define _GNU_SOURCE /* dladdr */
#include <dlfcn.h>
#include <stdio.h>
#include <rdma/rdma_cma.h>

int main(void)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	Dl_info info;

	if (!ch || !dladdr((void *)rdma_create_event_channel, &info))
		return 1;
	printf("rdma_create_event_channel from %s\n", info.dli_fname);
	rdma_destroy_event_channel(ch);
	return 0;
}
APP
sed "s|^prefix=.*|prefix=$dest$prefix|" "$dest$libdir/pkgconfig/cmd-rdmacm.pc" \
	>"$tmp/pc/cmd-rdmacm.pc"
flags=$(pkg-config --cflags --libs cmd-rdmacm) || err "pkg-config cmd-rdmacm"
echo "--- pkg-config --cflags --libs cmd-rdmacm: $flags"
# shellcheck disable=SC2086 # flags is a list of options
if ${CC:-cc} -Wall -Werror ${sanitize:+-fsanitize=$sanitize} \
	-o "$tmp/rapp" "$tmp/rapp.c" $flags -ldl; then
	LD_LIBRARY_PATH="$dest$libdir/cmd" "$tmp/rapp" >"$tmp/rapp.log" 2>&1 ||
		err "the librdmacm app did not run: $(cat "$tmp/rapp.log")"
	cat "$tmp/rapp.log"
	grep -q "from $dest$libdir/cmd/librdmacm.so.1" "$tmp/rapp.log" ||
		err "the librdmacm app did not run on cmd's librdmacm"
	readelf -d "$tmp/rapp" | grep -q "R.*PATH.*$dest$libdir/cmd" ||
		err "no RUNPATH into $libdir/cmd from cmd-rdmacm.pc"
else
	err "a librdmacm app does not build with cmd-rdmacm.pc's flags"
fi

[ "$fail" = 0 ] && echo "PASS: install lands every file and an app builds"
exit "$fail"
