#!/bin/sh
# SPDX-License-Identifier: MIT
#
# cmmad decode on pcap files: record numbers and stamps, both byte orders
# and both stamp units, the same decode as the raw MADs (and as before for
# raw and hex input), and a clear error, naming the file and the record,
# for each malformed file: a truncated file header, a truncated record, a
# record longer than the snapshot length, a wrong magic, pcapng, an
# unknown link type; a frame that holds no MAD is reported and skipped.
#
#   cmmad_pcap.sh PATH/TO/write_all_cm PATH/TO/cmmad
set -eu

write_all_cm=${1:?usage: cmmad_pcap.sh WRITE_ALL_CM CMMAD}
cmmad=${2:?usage: cmmad_pcap.sh WRITE_ALL_CM CMMAD}
py=/usr/bin/python3

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
err() {
	echo "FAIL: $*"
	fail=1
}

"$write_all_cm" --ib "$tmp/ib.pcap" --roce "$tmp/roce.pcap"

# want_rc RC FILE: cmmad decode FILE exits RC; its output in $tmp/out, err.
want_rc() {
	rc=0
	"$cmmad" decode "$2" >"$tmp/out" 2>"$tmp/err" || rc=$?
	[ "$rc" = "$1" ] || err "cmmad decode $2 exited $rc, not $1: $(cat "$tmp/err")"
}

# 1. Record numbers and UTC stamps (write_all_cm: 1700000000 s + i us).
for f in ib roce; do
	want_rc 0 "$tmp/$f.pcap"
	n=$(grep -c "^# record " "$tmp/out" || true)
	[ "$n" = 11 ] || err "$f: $n records, not 11"
	grep -qx '# record 1, 2023-11-14T22:13:20.000000000Z, [0-9]* bytes' \
		"$tmp/out" || err "$f: record 1's line"
	grep -qx '# record 11, 2023-11-14T22:13:20.000010000Z, [0-9]* bytes' \
		"$tmp/out" || err "$f: record 11's line"
	grep -q 'nanosecond stamps' "$tmp/out" || err "$f: stamp unit"
	cp "$tmp/out" "$tmp/$f.out"
done
grep -q 'link type 147 USER0' "$tmp/ib.out" || err "ib: link type line"
grep -q 'link type 1 ETHERNET' "$tmp/roce.out" || err "roce: link type line"

# 2. The same file big-endian with microsecond stamps, as another tool
# might write it; and the MADs alone, raw and as hex text.
$py - "$tmp/ib.pcap" "$tmp" <<'EOF'
import struct, sys
src, tmp = sys.argv[1], sys.argv[2]
b = open(src, "rb").read()
magic, vmaj, vmin, zone, sig, snap, lt = struct.unpack("<IHHiIII", b[:24])
assert magic == 0xA1B23C4D
be = [struct.pack(">IHHiIII", 0xA1B2C3D4, vmaj, vmin, zone, sig, snap, lt)]
raw, off = [], 24
while off < len(b):
    s, ns, cap, orig = struct.unpack("<IIII", b[off:off + 16])
    frame = b[off + 16:off + 16 + cap]
    be.append(struct.pack(">IIII", s, ns // 1000, cap, orig) + frame)
    raw.append(frame[8 + 12 + 8:8 + 12 + 8 + 256])  # LRH BTH DETH MAD
    off += 16 + cap
open(f"{tmp}/be-usec.pcap", "wb").write(b"".join(be))
open(f"{tmp}/mads.raw", "wb").write(b"".join(raw))
open(f"{tmp}/mads.hex", "w").write(
    "\n".join("# one MAD\n" + m.hex(" ") for m in raw) + "\n")
EOF
want_rc 0 "$tmp/be-usec.pcap"
grep -q 'big-endian, microsecond stamps' "$tmp/out" || err "be-usec: header line"
grep -qx '# record 11, 2023-11-14T22:13:20.000010Z, [0-9]* bytes' "$tmp/out" ||
	err "be-usec: record 11's stamp"
# decodes only: drop the '#' lines and the blank line between records
strip() { grep -v -e '^#' -e '^$' "$1" || true; }
strip "$tmp/out" >"$tmp/be.dec"
strip "$tmp/ib.out" >"$tmp/ib.dec"
cmp -s "$tmp/be.dec" "$tmp/ib.dec" || err "be-usec decodes differ from ib's"
want_rc 0 "$tmp/mads.raw"
strip "$tmp/out" >"$tmp/raw.dec"
cmp -s "$tmp/raw.dec" "$tmp/ib.dec" || err "raw MADs decode differently"
want_rc 0 "$tmp/mads.hex"
strip "$tmp/out" >"$tmp/hex.dec"
cmp -s "$tmp/hex.dec" "$tmp/ib.dec" || err "hex MADs decode differently"
"$cmmad" decode <"$tmp/ib.pcap" >"$tmp/out" 2>&1 || err "pcap on stdin"
grep -q '^# record 11,' "$tmp/out" || err "pcap on stdin: no record 11"

# 3. Malformed files: exit 2 and one line naming the file (and record).
head -c 10 "$tmp/ib.pcap" >"$tmp/short-hdr.pcap"
want_rc 2 "$tmp/short-hdr.pcap"
grep -qx "cmmad: $tmp/short-hdr.pcap: truncated pcap file header (10 of 24 bytes)" \
	"$tmp/err" || err "short header: $(cat "$tmp/err")"

size=$(wc -c <"$tmp/ib.pcap")
head -c $((size - 100)) "$tmp/ib.pcap" >"$tmp/short-rec.pcap"
want_rc 2 "$tmp/short-rec.pcap"
grep -qx "cmmad: $tmp/short-rec.pcap: record 11 truncated: 206 bytes left at offset 3084, record needs 306 (16-byte header + captured length 290)" "$tmp/err" ||
	err "short record: $(cat "$tmp/err")"
grep -c '^# record ' "$tmp/out" | grep -qx 10 ||
	err "short record: the 10 whole records before it not printed"
head -c $((24 + 8)) "$tmp/ib.pcap" >"$tmp/short-rec-hdr.pcap"
want_rc 2 "$tmp/short-rec-hdr.pcap"
grep -q "record 1 truncated: 8 bytes left at offset 24, record needs a 16-byte header" \
	"$tmp/err" || err "short record header: $(cat "$tmp/err")"

# snaplen (bytes 16..19) 100: every record (290 bytes) is longer.
$py - "$tmp" <<'EOF'
import struct, sys
tmp = sys.argv[1]
b = bytearray(open(f"{tmp}/ib.pcap", "rb").read())
s = bytearray(b); s[16:20] = struct.pack("<I", 100)
open(f"{tmp}/snaplen.pcap", "wb").write(s)
m = bytearray(b); m[0:4] = b"\xde\xad\xbe\xef"
open(f"{tmp}/magic.pcap", "wb").write(m)
lt = bytearray(b); lt[20:24] = struct.pack("<I", 105)  # IEEE 802.11
open(f"{tmp}/linktype.pcap", "wb").write(lt)
open(f"{tmp}/ng.pcap", "wb").write(b"\x0a\x0d\x0d\x0a" + bytes(24))
r = bytearray(open(f"{tmp}/roce.pcap", "rb").read())
# record 2's UDP destination port (Ethernet 14 + IPv4 20 + 2): not 4791
rec2 = 24 + 16 + struct.unpack("<I", r[24 + 8:24 + 12])[0]
r[rec2 + 16 + 36:rec2 + 16 + 38] = struct.pack(">H", 4792)
open(f"{tmp}/notmad.pcap", "wb").write(r)
EOF
want_rc 2 "$tmp/snaplen.pcap"
grep -qx "cmmad: $tmp/snaplen.pcap: record 1 at offset 24: captured length 290 exceeds snaplen 100 or original length 290" \
	"$tmp/err" || err "snaplen: $(cat "$tmp/err")"
want_rc 2 "$tmp/magic.pcap"
grep -qx "cmmad: $tmp/magic.pcap: not a pcap file: magic deadbeef is neither a1b2c3d4 nor a1b23c4d in either byte order" \
	"$tmp/err" || err "magic: $(cat "$tmp/err")"
want_rc 2 "$tmp/linktype.pcap"
grep -q "^cmmad: $tmp/linktype.pcap: unsupported pcap link type 105 " \
	"$tmp/err" || err "link type: $(cat "$tmp/err")"
want_rc 2 "$tmp/ng.pcap"
grep -q "^cmmad: $tmp/ng.pcap: a pcapng file" "$tmp/err" ||
	err "pcapng: $(cat "$tmp/err")"
want_rc 1 "$tmp/notmad.pcap"
grep -A1 '^# record 2,' "$tmp/out" | grep -qx 'no MAD: not a UD packet to QP1' ||
	err "not a MAD: record 2 not reported"
grep -c '^[A-Z_]* (attr 0x' "$tmp/out" | grep -qx 10 ||
	err "not a MAD: the other 10 records not decoded"

[ "$fail" = 0 ] && echo "PASS"
exit "$fail"
