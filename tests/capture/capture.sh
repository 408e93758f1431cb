#!/bin/sh
# SPDX-License-Identifier: MIT
#
# cmd --pcap on the simulated fabric: a hub, two daemons capturing (node 1:
# LID 17, node 2: LID 33; with roce, ::ffff:127.0.1.1 and ::ffff:127.0.2.1),
# cmc_ping opening 5 connections from node 1 to a listener on node 2, each
# through REQ/REP/RTU/DREQ/DREP. Then tshark decodes both captures (IB
# ports: LINKTYPE_USER0, handed to Wireshark's InfiniBand dissector through
# the user_dlts table, see cmd(8); RoCE ports: RoCE v2 over Ethernet, as it
# is) and the test checks the message types, the directions (LRH LIDs or
# IP addresses), the comm ids (each REQ answered by a REP naming it, and so
# on), and the timestamps.
#
#   CMHUB=... CMD=... capture.sh CMC_PING [ib|roce]
#
# Exit 77 (meson: skipped) only when tshark is missing and cannot be
# installed (as tests/unit/pcap_tshark.sh).
set -u
# shellcheck source=tests/lib/procs.sh
. "$(dirname "$0")/../lib/procs.sh"

PING=${1:?usage: capture.sh CMC_PING [ib|roce]}
MODE=${2:-ib}
case $MODE in
ib)
	sim_opt=""
	dest=lid:33
	linktype=147
	addr="-e infiniband.lrh.slid -e infiniband.lrh.dlid"
	node_a=17
	node_b=33
	;;
roce)
	sim_opt="--sim-roce"
	dest=127.0.2.1
	linktype=1
	addr="-e ip.src -e ip.dst"
	node_a=127.0.1.1
	node_b=127.0.2.1
	;;
*)
	echo "capture.sh: mode is ib or roce" >&2
	exit 2
	;;
esac
: "${CMHUB:?CMHUB must name cmhub}" "${CMD:?CMD must name cmd}"
COUNT=5

# shellcheck source=tests/lib/tshark.sh
. "$(dirname "$0")/../lib/tshark.sh"

dir=$(mktemp -d /tmp/cmd-capture-XXXXXX) || exit 1
pids=""
daemons=""

# shellcheck disable=SC2317 # called by the trap
cleanup() {
	# shellcheck disable=SC2086 # a list of pids
	stop_procs capture.sh $pids
	rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

fail=0
err() {
	echo "FAIL: $*"
	fail=1
}
die() {
	fail_logs capture.sh "FAIL: $*"
}

wait_for() {
	wait_until capture.sh "$@"
}

export WIRESHARK_CONFIG_DIR="$dir/wireshark"
mkdir "$WIRESHARK_CONFIG_DIR"
user0='uat:user_dlts:"User 0 (DLT=147)","infiniband","0","","0",""'
ts() { # FILE ARGS...: tshark on an IB capture; stderr kept for failures
	f=$1
	shift
	tshark -o "$user0" -o ip.check_checksum:TRUE -o udp.check_checksum:TRUE \
		-r "$f" "$@" 2>"$dir/tshark.err" || {
		cat "$dir/tshark.err" >&2
		return 1
	}
}

start=$(date +%s)
"$CMHUB" --seed 11 "$dir/hub" >"$dir/hub.log" 2>&1 &
pids="$pids $!"
wait_for "cmhub" "$CMHUB" --ctl "$dir/hub" stats

for n in 1 2; do
	# shellcheck disable=SC2086 # sim_opt is empty or one option
	"$CMD" --sim "$dir/hub" --node $n $sim_opt --socket "$dir/cmd$n.sock" \
		--packet-life-time 8 --log-level info \
		--pcap "$dir/node$n.pcap" >"$dir/cmd$n.log" 2>&1 &
	pids="$pids $!"
	daemons="$daemons $!"
done
wait_for "cmd on node 1" test -S "$dir/cmd1.sock"
wait_for "cmd on node 2" test -S "$dir/cmd2.sock"

# Hang guards (the connections take well under a second on an idle
# machine), inside meson's 120 s.
timeout 100 "$PING" -l -n $COUNT -s "$dir/cmd2.sock" >"$dir/server.log" 2>&1 &
server=$!
pids="$pids $server"
wait_for "the listener" grep -q '^listening' "$dir/server.log"
timeout 90 "$PING" -c $COUNT -s "$dir/cmd1.sock" $dest >"$dir/client.log" 2>&1
client_rc=$?
[ $client_rc -eq 0 ] || kill $server 2>/dev/null
wait $server
server_rc=$?
[ $client_rc -eq 0 ] || die "cmc_ping client exited $client_rc"
[ $server_rc -eq 0 ] || die "cmc_ping listener exited $server_rc"

# Stop the daemons: the capture is flushed at exit.
for p in $daemons; do
	kill "$p"
done
for p in $daemons; do
	wait "$p" || err "cmd (pid $p) exited $?"
done
end=$(date +%s)
for n in 1 2; do
	echo "--- cmd on node $n (log)"
	cat "$dir/cmd$n.log"
	grep -q "capture: .* written, 0 dropped, 0 not framed, 0 file errors" \
		"$dir/cmd$n.log" || err "node $n: capture counted problems"
done

# Bytes 20..23 of the file header: the link type, little-endian.
for n in 1 2; do
	lt=$(od -An -tu4 -j20 -N4 "$dir/node$n.pcap" | tr -d ' ')
	[ "$lt" = "$linktype" ] || err "node $n: link type $lt, not $linktype"
done

# One line per MAD: time, source and destination, message, then the comm ids
# of each message type (Wireshark's names, see tests/unit/pcap_tshark.sh).
fields="-T fields -E separator=| -e frame.time_epoch $addr
	-e infiniband.mad.mgmtclass -e _ws.col.Info
	-e infiniband.cm.req -e infiniband.cm.rep
	-e infiniband.cm.rep.remotecommid
	-e infiniband.cm.rtu.localcommid -e infiniband.cm.rtu.remotecommid
	-e infiniband.cm.dreq.localcommid -e infiniband.cm.dreq.remotecommid
	-e infiniband.cm.drsp.localcommid -e infiniband.cm.drsp.remotecommid"
for n in 1 2; do
	# shellcheck disable=SC2086 # fields is a list of options
	ts "$dir/node$n.pcap" $fields >"$dir/node$n.txt" ||
		die "tshark cannot read node $n's capture"
	echo "--- node $n: tshark $(wc -l <"$dir/node$n.txt") MADs"
	cat "$dir/node$n.txt"
	ts "$dir/node$n.pcap" -Y '_ws.expert.severity >= "warning" || _ws.malformed' \
		-T fields -e frame.number -e _ws.expert.message >"$dir/bad$n"
	[ -s "$dir/bad$n" ] && { err "node $n: tshark reports problems"; cat "$dir/bad$n"; }
done

# The checks, over both captures: node 1 (LID 17) is the active side.
python3 - "$dir/node1.txt" "$dir/node2.txt" "$COUNT" "$start" "$end" \
	"$node_a" "$node_b" <<'PY' || fail=1
import sys
from collections import Counter

count, start, end = int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
node_a, node_b = sys.argv[6], sys.argv[7]
names = {"ConnectRequest": "REQ", "ConnectReply": "REP",
         "ReadyToUse": "RTU", "DisconnectRequest": "DREQ",
         "DisconnectReply": "DREP"}
# Who sends each message: the active side (node 1) or the passive.
A, B = (node_a, node_b), (node_b, node_a)
sender = {"REQ": A, "REP": B, "RTU": A, "DREQ": A, "DREP": B}
bad = []

def load(path):
    out = []
    for line in open(path):
        f = line.rstrip("\n").split("|")
        t, slid, dlid, cls, info = float(f[0]), f[1], f[2], f[3], f[4]
        typ = next((v for k, v in names.items() if k in info), info)
        ids = [int(x, 16) for x in f[5:] if x]
        out.append((t, slid, dlid, cls, typ, ids))
    return out

caps = [load(sys.argv[1]), load(sys.argv[2])]
for n, cap in enumerate(caps, 1):
    types = Counter(r[4] for r in cap)
    if types != Counter({t: count for t in sender}):
        bad.append(f"node {n}: messages {dict(types)}, want {count} of each")
    last = 0.0
    for t, slid, dlid, cls, typ, ids in cap:
        if cls != "0x07":
            bad.append(f"node {n}: {typ} management class {cls}")
        if typ in sender and (slid, dlid) != sender[typ]:
            bad.append(f"node {n}: {typ} from LID {slid} to {dlid}")
        if not (start - 1 <= t <= end + 1) or t < last:
            bad.append(f"node {n}: {typ} timestamp {t} out of order or "
                       f"outside {start}..{end}")
        last = t

# Comm ids: the active side's REQ local id a and the passive REP local id
# p pair up: REP (p, a), RTU (a, p), DREQ (a, p), DREP (p, a).
def pairs(cap):
    got = Counter()
    for t, slid, dlid, cls, typ, ids in cap:
        got[(typ, tuple(ids))] += 1
    return got

for n, cap in enumerate(caps, 1):
    conns = {(r[5][1], r[5][0]) for r in cap if r[4] == "REP"}
    if len(conns) != count:
        bad.append(f"node {n}: {len(conns)} distinct REPs, want {count}")
    want = Counter()
    for a, p in conns:
        want[("REQ", (a,))] += 1
        want[("REP", (p, a))] += 1
        want[("RTU", (a, p))] += 1
        want[("DREQ", (a, p))] += 1
        want[("DREP", (p, a))] += 1
    if pairs(cap) != want:
        bad.append(f"node {n}: comm ids do not pair up: "
                   f"{sorted(pairs(cap).items())} vs {sorted(want.items())}")
if pairs(caps[0]) != pairs(caps[1]):
    bad.append("the two captures disagree on the comm ids")
for b in bad:
    print("FAIL:", b)
if not bad:
    print(f"comm ids pair up on both nodes: {count} connections, "
          "REQ/REP/RTU/DREQ/DREP each")
sys.exit(1 if bad else 0)
PY

echo "--- node 1, first REQ as tshark shows it"
ts "$dir/node1.pcap" -V -c 1 | sed -n '/^    CM ConnectRequest/,/Primary Local Port LID/p'

[ "$fail" = 0 ] && echo "PASS: tshark decodes both daemons' $MODE captures"
exit "$fail"
