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
unitdir=$(pkg-config --variable=systemdsystemunitdir systemd 2>/dev/null ||
	echo "$prefix/lib/systemd/system")

for f in "$sbindir/cmd" "$bindir/cmctl" "$bindir/cmmad" \
	"$libdir/libcmclient.so" "$libdir/libcmclient.so.1" \
	"$includedir/cmclient.h" "$libdir/pkgconfig/cmclient.pc" \
	"$unitdir/cmd.service" "$unitdir/cmd.socket" \
	"$sysconfdir/cmd/cmd.conf" \
	"$mandir/man8/cmd.8" "$mandir/man8/cmctl.8" "$mandir/man1/cmmad.1" \
	"$mandir/man3/cmclient.3" "$mandir/man1/cmd-rdmacm.1" \
	"$mandir/man7/cmd-librdmacm.7" \
	"$libdir/cmd/librdmacm.so.1" "$bindir/cmd-rdmacm" \
	"$libdir/pkgconfig/cmd-rdmacm.pc"; do
	[ -e "$dest$f" ] || err "not installed: $f"
done
# Never in place of the system's librdmacm.
[ ! -e "$dest$libdir/librdmacm.so.1" ] || err "librdmacm.so.1 installed in $libdir"
for f in "$sbindir/cmd" "$bindir/cmctl" "$bindir/cmmad" "$bindir/cmd-rdmacm"; do
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
