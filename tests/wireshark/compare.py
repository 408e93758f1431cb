#!/usr/bin/python3
# SPDX-License-Identifier: MIT
#
# Compare, packet by packet and field by field, `cmmad decode FILE.pcap`
# with `tshark -X lua_script:cmd_cm.lua -T json -J cmd_cm -r FILE.pcap`:
# every cmd_cm field tshark reports must be one cmmad prints for that
# record, with the same value, and the other way round (reserved fields
# aside, which neither shows). Run by dissector.sh and daemon_capture.sh
# with Debian's /usr/bin/python3 (standard library only).
import ipaddress, json, re, sys

# compare.py CMMAD_OUT TSHARK_JSON LABEL [all|COUNT]
#   all:   exactly one of each of the eleven messages (write_all_cm)
#   COUNT: that many packets, whatever their messages
cmmad_path, json_path, name = sys.argv[1:4]
want_n = sys.argv[4] if len(sys.argv) > 4 else "all"
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
n_exp = 11 if want_n == "all" else int(want_n)
if len(recs) != n_exp or len(pkts) != n_exp:
    print(f"FAIL {name}: {len(recs)} cmmad records, {len(pkts)} packets, "
          f"not {n_exp}")
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
if not bad:
    print(f"ok {name}: {len(recs)} packets, messages {sorted(seen)}")
if want_n == "all" and len(seen) != 11:
    print(f"FAIL {name}: messages seen {sorted(seen)}")
    bad = 1
sys.exit(bad)
