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
	/usr/bin/python3 - "$tmp/$f.cmmad" "$tmp/$f.json" "$f" <<'EOF' || fail=1
import ipaddress, json, re, sys

cmmad_path, json_path, name = sys.argv[1:4]
# cmmad's MAD header lines (the first seven after the message line) that
# cmd_cm does not repeat, and its REJ reason in words.
HDR = {"base_version", "mgmt_class", "class_version", "status", "attr_mod"}


def parse_cmmad(text):
    """Records of cmmad's pcap decode: [(msg, {field: value})]."""
    recs, cur, last, in_hdr = [], None, None, False
    for line in text.splitlines():
        if line.startswith("# record "):
            cur = {}
            recs.append([None, cur])
            continue
        if cur is None or not line.strip() or line.startswith("#"):
            continue
        m = re.match(r"^([A-Z_]+) \(attr 0x[0-9a-f]{4}, IBTA table \d+\)$",
                     line)
        if m:
            recs[-1][0] = m.group(1)
            in_hdr = True
            continue
        if line.startswith("  "):  # continuation of a byte string
            s = line.strip()
            z = re.match(r"^\((\d+) zero bytes\)$", s)
            cur[last] += bytes(int(z.group(1))) if z else bytes.fromhex(s)
            continue
        k, _, v = line.partition(":")
        v = v.strip()
        last = k
        if (in_hdr and k in HDR) or k == "reason_text":
            in_hdr = in_hdr and k != "attr_mod"
            continue
        z = re.match(r"^\((\d+) zero bytes\)$", v)
        if z:
            cur[k] = bytes(int(z.group(1)))
        elif v == "":
            cur[k] = b""
        elif re.match(r"^[0-9a-f]{4}(:[0-9a-f]{4}){7}$", v):
            cur[k] = bytes.fromhex(v.replace(":", ""))
        else:
            cur[k] = int(v, 0)
    return recs


def ws_value(v):
    if re.match(r"^(0x[0-9a-fA-F]+|\d+)$", v):
        return int(v, 0)
    if re.match(r"^[0-9a-f]{2}(:[0-9a-f]{2})*$", v):
        return bytes.fromhex(v.replace(":", ""))
    return ipaddress.IPv6Address(v).packed


recs = parse_cmmad(open(cmmad_path).read())
pkts = json.load(open(json_path))
bad = 0
if len(recs) != 11 or len(pkts) != 11:
    print(f"FAIL {name}: {len(recs)} cmmad records, {len(pkts)} packets, "
          "not 11")
    sys.exit(1)
seen = set()
for n, ((msg, want), p) in enumerate(zip(recs, pkts), 1):
    layer = p["_source"]["layers"].get("cmd_cm")
    if layer is None:
        print(f"FAIL {name} #{n}: no cmd_cm layer")
        bad = 1
        continue
    got = {}
    for k, v in layer.items():
        if k == "cmd_cm.message":
            got["message"] = v
        elif k in ("cmd_cm.tid", "cmd_cm.method"):
            got[k.split(".")[1]] = int(v, 0)
        elif k == "cmd_cm.attribute_id":
            pass
        else:
            pre = f"cmd_cm.{msg.lower()}."
            if not k.startswith(pre):
                print(f"FAIL {name} #{n}: {k} in a {msg}")
                bad = 1
                continue
            got[k[len(pre):]] = ws_value(v)
    exp = dict(want)
    exp["message"] = msg
    seen.add(msg)
    for k in sorted(set(exp) | set(got)):
        if exp.get(k) != got.get(k):
            print(f"FAIL {name} #{n} {msg}.{k}: cmmad {exp.get(k)!r}, "
                  f"cmd_cm {got.get(k)!r}")
            bad = 1
    if not bad:
        print(f"ok {name} #{n} {msg}: {len(exp) - 1} fields agree")
if len(seen) != 11:
    print(f"FAIL {name}: messages seen {sorted(seen)}")
    bad = 1
sys.exit(bad)
EOF
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
