#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Decode the MAD captures proto/pcap.c builds with tshark, and check that
# Wireshark's InfiniBand dissector names every CM message and reads back the
# fields test_pcap put in them.
#
#   pcap_tshark.sh PATH/TO/test_pcap
#
# test_pcap --write-ib/--write-roce writes the same seven MADs twice: a
# connect (REQ, REP, RTU), a disconnect (DREQ, DREP) and a rejected REQ
# (REQ, REJ); once as LINKTYPE_INFINIBAND (LRH only, then with a GRH for
# the last two) and once as RoCE v2 over Ethernet (IPv4, then IPv6).
#
# Wireshark (4.0 at least) cannot open a LINKTYPE_INFINIBAND (247) file:
# its wiretap library maps no pcap link type to the InfiniBand dissector,
# so no "decode as" or preference helps. When tshark refuses the file, the
# script rewrites the link type to LINKTYPE_USER0 (147) and has the
# user_dlts table hand USER0 frames to the "infiniband" dissector, which is
# what an operator does in Wireshark (Preferences > Protocols > DLT_USER).
# RoCE v2 needs nothing: tshark sends UDP port 4791 to the same dissector.
#
# Exit 77 (meson: skipped) only when tshark is missing and cannot be
# installed.
set -eu

test_pcap=${1:?usage: pcap_tshark.sh PATH/TO/test_pcap}

# shellcheck source=tests/lib/tshark.sh
. "$(dirname "$0")/../lib/tshark.sh"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Keep the caller's Wireshark profile out of the results.
export WIRESHARK_CONFIG_DIR="$tmp/wireshark"
mkdir "$WIRESHARK_CONFIG_DIR"

fail=0
err() {
	echo "FAIL: $*"
	fail=1
}

# tshark prints "Running as user root" on stderr; keep stderr for failures.
ts() {
	tshark "$@" 2>"$tmp/stderr" || {
		cat "$tmp/stderr" >&2
		return 1
	}
}

"$test_pcap" --write-ib "$tmp/ib.pcap" --write-roce "$tmp/roce.pcap"

# Bytes 20..23 of the file header: the link type, little-endian.
linktype=$(od -An -tu4 -j20 -N4 "$tmp/ib.pcap" | tr -d ' ')
[ "$linktype" = 247 ] || err "IB capture has link type $linktype, not 247"

ib_file="$tmp/ib.pcap"
ib_opts=""
if ! tshark -r "$ib_file" -c 1 >/dev/null 2>"$tmp/stderr"; then
	grep -q "unknown or unsupported" "$tmp/stderr" ||
		{ cat "$tmp/stderr"; err "tshark cannot read the IB capture"; }
	echo "tshark cannot read link type 247; decoding as USER0 (147)"
	ib_file="$tmp/ib-user0.pcap"
	{
		head -c 20 "$tmp/ib.pcap"
		printf '\223\000\000\000'
		tail -c +25 "$tmp/ib.pcap"
	} >"$ib_file"
	ib_opts='uat:user_dlts:"User 0 (DLT=147)","infiniband","0","","0",""'
fi

# ts_ib ARGS: tshark on the IB capture, with the USER0 mapping if needed.
ts_ib() {
	if [ -n "$ib_opts" ]; then
		ts -o "$ib_opts" -r "$ib_file" "$@"
	else
		ts -r "$ib_file" "$@"
	fi
}

# One line per MAD: message name, transport (BTH opcode 100 = UD SEND Only,
# DestQP, DETH SrcQP and Q_Key), MAD header (class, method, attribute,
# TID), then the CM fields: local comm ID, remote comm ID, service ID,
# local QPN (REQ, REP) or remote QPN (DREQ), REJ reason and message
# rejected. Absent fields print empty. Wireshark calls REQ's and REP's
# local comm ID fields "infiniband.cm.req" and "infiniband.cm.rep", and
# DREQ's remote QPN "infiniband.cm.req.remoteqpneecn".
cm_fields="-T fields -E separator=| -e _ws.col.Info
	-e infiniband.bth.opcode -e infiniband.bth.destqp
	-e infiniband.deth.srcqp -e infiniband.deth.q_key
	-e infiniband.mad.mgmtclass -e infiniband.mad.method
	-e infiniband.mad.attributeid -e infiniband.mad.transactionid
	-e infiniband.cm.req -e infiniband.cm.rep
	-e infiniband.cm.rtu.localcommid -e infiniband.cm.rej.localcommid
	-e infiniband.cm.dreq.localcommid -e infiniband.cm.drsp.localcommid
	-e infiniband.cm.rep.remotecommid -e infiniband.cm.rtu.remotecommid
	-e infiniband.cm.rej.remotecommid -e infiniband.cm.dreq.remotecommid
	-e infiniband.cm.drsp.remotecommid
	-e infiniband.cm.req.serviceid
	-e infiniband.cm.req.localqpn -e infiniband.cm.rep.localqpn
	-e infiniband.cm.req.remoteqpneecn
	-e infiniband.cm.rej.reason -e infiniband.cm.rej.msgrej"

# What test_pcap wrote (see conv_mad there). REJ: reason 8 is "invalid
# service ID", message rejected 0 is the REQ.
cat >"$tmp/cm.expected" <<'EOF'
CM: ConnectRequest|100|0x000001|0x00000001|0x0000000080010000|0x07|0x03|0x0010|0x0000000000001000|0xa0a0a001|||||||||||0x0000000001064e20|0x000abc||||
CM: ConnectReply|100|0x000001|0x00000001|0x0000000080010000|0x07|0x03|0x0013|0x0000000000001000||0xb0b0b002|||||0xa0a0a001|||||||0x000def|||
CM: ReadyToUse|100|0x000001|0x00000001|0x0000000080010000|0x07|0x03|0x0014|0x0000000000001000|||0xa0a0a001|||||0xb0b0b002|||||||||
CM: DisconnectRequest|100|0x000001|0x00000001|0x0000000080010000|0x07|0x03|0x0015|0x0000000000001000|||||0xa0a0a001|||||0xb0b0b002|||||0x000def||
CM: DisconnectReply|100|0x000001|0x00000001|0x0000000080010000|0x07|0x03|0x0016|0x0000000000001000||||||0xb0b0b002|||||0xa0a0a001||||||
CM: ConnectRequest|100|0x000001|0x00000001|0x0000000080010000|0x07|0x03|0x0010|0x0000000000001001|0xa0a0a003|||||||||||0x0000000001064e20|0x000abc||||
CM: ConnectReject|100|0x000001|0x00000001|0x0000000080010000|0x07|0x03|0x0012|0x0000000000001001||||0x00000000|||||0xa0a0a003|||||||0x0008|0x00
EOF

# The link and network headers: LRH SLID, DLID, LNH (2 local, 3 global)
# and GRH SGID for IB; addresses and UDP ports for RoCE v2.
cat >"$tmp/ib-hdr.expected" <<'EOF'
17|34|0x02|
34|17|0x02|
17|34|0x02|
17|34|0x02|
34|17|0x02|
17|34|0x03|fe80::2:c903:a1:b2c3
34|17|0x03|fe80::2:c903:d4:e5f6
EOF
cat >"$tmp/roce-hdr.expected" <<'EOF'
192.168.1.10|192.168.1.20|||49152|4791
192.168.1.20|192.168.1.10|||49152|4791
192.168.1.10|192.168.1.20|||49152|4791
192.168.1.10|192.168.1.20|||49152|4791
192.168.1.20|192.168.1.10|||49152|4791
||fe80::2:c903:a1:b2c3|fe80::2:c903:d4:e5f6|49152|4791
||fe80::2:c903:d4:e5f6|fe80::2:c903:a1:b2c3|49152|4791
EOF

check() { # NAME EXPECTED ACTUAL
	if ! diff -u "$2" "$3" >"$tmp/diff"; then
		err "$1: tshark output differs from what was written"
		cat "$tmp/diff"
	fi
}

# shellcheck disable=SC2086 # cm_fields is a list of options
ts_ib $cm_fields >"$tmp/ib-cm.actual"
check "IB CM fields" "$tmp/cm.expected" "$tmp/ib-cm.actual"
# shellcheck disable=SC2086
ts -r "$tmp/roce.pcap" $cm_fields >"$tmp/roce-cm.actual"
check "RoCE v2 CM fields" "$tmp/cm.expected" "$tmp/roce-cm.actual"

ts_ib -T fields -E separator='|' -e infiniband.lrh.slid \
	-e infiniband.lrh.dlid -e infiniband.lrh.lnh \
	-e infiniband.grh.sgid >"$tmp/ib-hdr.actual"
check "IB headers" "$tmp/ib-hdr.expected" "$tmp/ib-hdr.actual"
ts -r "$tmp/roce.pcap" -T fields -E separator='|' -e ip.src -e ip.dst \
	-e ipv6.src -e ipv6.dst -e udp.srcport -e udp.dstport \
	>"$tmp/roce-hdr.actual"
check "RoCE v2 headers" "$tmp/roce-hdr.expected" "$tmp/roce-hdr.actual"

# No warnings, errors or malformed packets, with the IPv4 header and UDP
# checksums verified. (Wireshark shows the ICRC and VCRC but does not
# check them; tests/unit/test_pcap.c does.)
bad_filter='_ws.expert.severity >= "warning" || _ws.malformed'
ts_ib -Y "$bad_filter" -T fields -e frame.number \
	-e _ws.expert.message >"$tmp/ib-bad"
ts -r "$tmp/roce.pcap" -o ip.check_checksum:TRUE \
	-o udp.check_checksum:TRUE -Y "$bad_filter" -T fields \
	-e frame.number -e _ws.expert.message >"$tmp/roce-bad"
for f in ib-bad roce-bad; do
	if [ -s "$tmp/$f" ]; then
		err "$f: tshark reports problems"
		cat "$tmp/$f"
	fi
done

# For the log: how tshark shows the first REQ.
ts_ib -V -c 1 | sed -n '/^    CM ConnectRequest/,/Primary Local Port LID/p'

[ "$fail" = 0 ] && echo "PASS: tshark decodes every CM MAD in both captures"
exit "$fail"
