#!/bin/sh
# SPDX-License-Identifier: MIT
#
# libcmclient's ABI is what libcmclient.map lists, node by node: the
# library exports exactly the functions the map names, each bound to the
# node that names it, and cmclient.h declares exactly those functions. A
# function added to the library or the header and put in no node fails
# here (the map has no wildcard to catch it).
#
# Nodes are named CMCLIENT_MAJOR.MINOR for the release that added them,
# none newer than this one (VERSION, meson's project version), and each
# inherits the one before it.
#
#   symbols.sh LIBCMCLIENT_SO LIBCMCLIENT_MAP CMCLIENT_H VERSION
set -eu

so=${1:?usage: symbols.sh LIB MAP HEADER VERSION}
map=${2:?usage: symbols.sh LIB MAP HEADER VERSION}
hdr=${3:?usage: symbols.sh LIB MAP HEADER VERSION}
version=${4:?usage: symbols.sh LIB MAP HEADER VERSION}
tmp=$(mktemp -d /tmp/cmd-symbols-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail=0

# The map, as "name node" lines: a node opens with "NAME {", its globals
# are "name;" lines up to "local:" or the closing brace. Comments dropped.
sed 's|/\*.*\*/||; /\/\*/,/\*\//d' "$map" | awk '
	/^[A-Za-z_][A-Za-z0-9_.]* *\{/ { node = $1; glob = 1; next }
	/local:/ { glob = 0; next }
	/^\}/ { node = ""; next }
	node != "" && glob && /^[ \t]*[a-z_][a-z0-9_]*;/ {
		gsub(/[ \t;]/, ""); print $0, node }' | sort >"$tmp/map"
[ -s "$tmp/map" ] || { echo "FAIL: no symbol in $map"; exit 1; }

# What the library exports: defined dynamic symbols with their version,
# the version nodes themselves (absolute, 'A') left out.
nm -D --defined-only "$so" | awk '$2 != "A" {
	split($3, v, "@"); print v[1], v[length(v)] }' | sort >"$tmp/lib"

if ! diff -u "$tmp/map" "$tmp/lib" >"$tmp/diff"; then
	echo "FAIL: exported symbols (+) differ from libcmclient.map (-):"
	cat "$tmp/diff"
	fail=1
fi

# Every function cmclient.h declares, and nothing else, is in the map.
grep -o '^[a-z].*[ *]cmc_[a-z0-9_]*(' "$hdr" |
	sed 's/.*[ *]\(cmc_[a-z0-9_]*\)(/\1/' | sort -u >"$tmp/hdr"
cut -d' ' -f1 "$tmp/map" >"$tmp/mapnames"
if ! diff -u "$tmp/mapnames" "$tmp/hdr" >"$tmp/diff"; then
	echo "FAIL: functions declared in cmclient.h (+) differ from the map (-):"
	cat "$tmp/diff"
	fail=1
fi

# The nodes, in the map's order, each as "NAME PARENT" (PARENT - for the
# first), checked against the release numbering.
sed 's|/\*.*\*/||; /\/\*/,/\*\//d' "$map" | awk '
	/^[A-Za-z_][A-Za-z0-9_.]* *\{/ { node = $1 }
	/^\}/ && node != "" {
		p = $0; gsub(/[};[:space:]]/, "", p)
		print node, (p == "" ? "-" : p); node = "" }' >"$tmp/nodes"
prev=-
release=$(echo "$version" | cut -d. -f1,2)
while read -r node parent; do
	case $node in
	CMCLIENT_[0-9]*.[0-9]*) ;;
	*) echo "FAIL: node $node is not named CMCLIENT_MAJOR.MINOR"; fail=1 ;;
	esac
	[ "$parent" = "$prev" ] || {
		echo "FAIL: node $node inherits '$parent', not the node before it ($prev)"
		fail=1
	}
	v=${node#CMCLIENT_}
	if [ "$(printf '%s\n%s\n' "$v" "$release" | sort -V | tail -1)" != "$release" ]; then
		echo "FAIL: node $node is newer than this release ($version)"
		fail=1
	fi
	prev=$node
done <"$tmp/nodes"
[ -s "$tmp/nodes" ] || { echo "FAIL: no node in $map"; fail=1; }

[ "$fail" = 0 ] && echo "PASS: $(wc -l <"$tmp/map") functions, each in its node: $(cut -d' ' -f2 "$tmp/map" | sort -u | tr '\n' ' ')"
exit "$fail"
