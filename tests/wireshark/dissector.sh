#!/bin/sh
# SPDX-License-Identifier: MIT
#
# wireshark/cmd_cm.lua, field by field against cmmad.
#
#   dissector.sh PATH/TO/write_all_cm PATH/TO/cmmad PATH/TO/cmd_cm.lua
#
# write_all_cm writes one of each of the eleven CM messages, every field
# with a value of its own, twice: as the daemon's IB captures are written
# (LINKTYPE_USER0, decoded by tshark as "infiniband" through the user_dlts
# table) and as RoCE v2 over Ethernet. For every packet of both files,
# tshark with the dissector loaded explicitly (-X lua_script:, so nothing
# need be installed) must give exactly the fields `cmmad decode` prints for
# the same record, with the same values: every field of cm_fields.def
# except the reserved ones, plus the message name, method and TID.
#
# Then the same REQ through stock tshark (no -X): the flow labels and
# packet rates it reports are printed next to ours, for the record, and
# it must have no cmd_cm fields (so the comparison above is the
# dissector's work, not the stock one's).
#
# Exit 77 (meson: skipped) only when tshark is missing and cannot be
# installed.
set -eu

write_all_cm=${1:?usage: dissector.sh WRITE_ALL_CM CMMAD CMD_CM_LUA}
cmmad=${2:?usage: dissector.sh WRITE_ALL_CM CMMAD CMD_CM_LUA}
lua=${3:?usage: dissector.sh WRITE_ALL_CM CMMAD CMD_CM_LUA}

# shellcheck source=tests/lib/tshark.sh
. "$(dirname "$0")/../lib/tshark.sh"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Keep the caller's Wireshark profile and personal plugins out of it.
export WIRESHARK_CONFIG_DIR="$tmp/wireshark"
export XDG_CONFIG_HOME="$tmp/xdg" HOME="$tmp/home"
mkdir "$WIRESHARK_CONFIG_DIR" "$tmp/xdg" "$tmp/home"
user0='uat:user_dlts:"User 0 (DLT=147)","infiniband","0","","0",""'

"$write_all_cm" --ib "$tmp/ib.pcap" --roce "$tmp/roce.pcap"

# tshark ARGS: stderr kept for failures ("Running as user root" noise).
ts() {
	tshark -o "$user0" "$@" 2>"$tmp/stderr" || {
		cat "$tmp/stderr" >&2
		return 1
	}
}

fail=0
for f in ib roce; do
	"$cmmad" decode "$tmp/$f.pcap" >"$tmp/$f.cmmad"
	ts -X "lua_script:$lua" -r "$tmp/$f.pcap" -T json -J cmd_cm \
		>"$tmp/$f.json"
	grep -q 'Lua: Error' "$tmp/stderr" && { cat "$tmp/stderr"; fail=1; }
	/usr/bin/python3 "$(dirname "$0")/compare.py" "$tmp/$f.cmmad" \
		"$tmp/$f.json" "$f" all || fail=1
done

# Stock tshark on the REQ (record 1): for the record, and no cmd_cm.
ts -r "$tmp/ib.pcap" -Y 'frame.number == 1' -T fields -E separator=' ' \
	-e infiniband.cm.req.prim_flowlabel -e infiniband.cm.req.prim_pktrate \
	-e infiniband.cm.req.alt_flowlabel -e infiniband.cm.req.alt_pktrate \
	>"$tmp/stock"
ts -X "lua_script:$lua" -r "$tmp/ib.pcap" -Y 'frame.number == 1' \
	-T fields -E separator=' ' \
	-e cmd_cm.req.primary_flow_label -e cmd_cm.req.primary_packet_rate \
	-e cmd_cm.req.alt_flow_label -e cmd_cm.req.alt_packet_rate \
	>"$tmp/ours"
echo "REQ flow label, rate, alt flow label, alt rate:"
echo "  stock tshark: $(cat "$tmp/stock")"
echo "  cmd_cm.lua:   $(cat "$tmp/ours")"
echo "  cmmad:        $(grep -E '^(primary|alt)_(flow_label|packet_rate):' \
	"$tmp/ib.cmmad" | head -4 | cut -d' ' -f2 | tr '\n' ' ')"
if ts -r "$tmp/ib.pcap" -T fields -e cmd_cm.message >/dev/null 2>&1; then
	echo "FAIL: stock tshark knows cmd_cm.message: is cmd_cm.lua installed" \
		"in a plugin folder? The comparison may not be the -X script's"
	fail=1
fi

[ "$fail" = 0 ] && echo "PASS"
exit "$fail"
