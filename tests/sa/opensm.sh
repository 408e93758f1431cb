#!/bin/bash
# SPDX-License-Identifier: MIT
#
# The SA client against a real SM: opensm on ibsim's simulated fabric,
# queried through umad2sim (LD_PRELOAD) by saquery and by sa_probe (the
# daemon's sa_client over libibumad, tests/sa/sa_probe.c), which must
# print the same PathRecord, field for field.
#
#   opensm.sh SA_PROBE [NETFILE]
#
# 1. ibsim on NETFILE (tests/sa/net: two switches, three HCAs) on an
#    abstract socket of its own (IBSIM_SOCKNAME), so runs do not meet;
# 2. opensm on Hca1, until saquery from Hca2 gets a path to Hca3
#    (bounded: OSM_WAIT seconds, default 60);
# 3. by GID: Hca2 -> Hca3 and Hca2 -> Hca1, `saquery -p --sgid --dgid -r 1
#    -n 1` (the mask sa_path_query asks: DGID SGID Reversible NumbPath)
#    and `sa_probe --no-rmpp --dgid`; by LID: Hca3 -> Hca2, `saquery -p
#    --slid --dlid -r 1 -n 1` and `sa_probe --dlid --slid`; every field
#    compared (side by side in the log);
# 4. an unknown DGID: opensm answers an empty table and sa_probe exits 3
#    (no records, -ENOENT); without --no-rmpp the answers are refused as
#    malformed (RMPP version 0) and sa_probe exits 4 (no answer).
#
# Exit 77 (skip) only when ibsim cannot make its sockets (a sandbox);
# missing programs are a failure: scripts/install-deps.sh installs them.
set -uo pipefail

probe=$(realpath "${1:?usage: opensm.sh SA_PROBE [NETFILE]}")
here=$(cd "$(dirname "$0")" && pwd)
net=$(realpath "${2:-$here/net}")
# shellcheck source=tests/lib/procs.sh
. "$here/../lib/procs.sh"

sim_so=${UMAD2SIM:-/usr/lib/$(gcc -print-multiarch 2>/dev/null ||
	echo x86_64-linux-gnu)/umad2sim/libumad2sim.so}
for t in ibsim opensm saquery; do
	command -v "$t" >/dev/null || {
		echo "opensm.sh: $t not found (scripts/install-deps.sh installs opensm ibsim-utils infiniband-diags)" >&2
		exit 1
	}
done
[ -f "$sim_so" ] || {
	echo "opensm.sh: no $sim_so (package libumad2sim0, pulled by ibsim-utils)" >&2
	exit 1
}

# An ASan-built sa_probe (scripts/test.sh's asan run) under the preload:
# the runtime is not first in the library list, and umad2sim's own read()
# over-reads (umad2sim.supp).
if [ -n "${ASAN_OPTIONS:-}" ]; then
	export ASAN_OPTIONS="$ASAN_OPTIONS:verify_asan_link_order=0:suppressions=$here/umad2sim.supp"
fi

dir=$(mktemp -d /tmp/cmd-sa.XXXXXX)
# umad2sim writes its emulated sysfs to ./sys-PID, removed at exit (not
# after a SIGKILL): everything runs in $dir.
cd "$dir" || exit 1
export IBSIM_SOCKNAME="cmd-sa-$$"
pids=()
# opensm under umad2sim does not end on SIGTERM (still running seconds
# later): after 3 s stop_procs SIGKILLs it and says so.
cleanup() {
	[ ${#pids[@]} -gt 0 ] && STOP_TRIES=15 stop_procs opensm.sh "${pids[@]}"
	rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

fail() {
	echo "opensm.sh: FAIL: $*" >&2
	for f in "$dir"/*.log; do
		[ -s "$f" ] || continue
		echo "--- $(basename "$f") (last 30 lines)" >&2
		tail -n 30 "$f" >&2
	done
	exit 1
}

# A program on node $1 of the fabric, through umad2sim.
on() {
	local host=$1
	shift
	SIM_HOST=$host LD_PRELOAD=$sim_so "$@"
}

# 1. ibsim, ready when its control socket is bound.
ibsim -s -n "$net" >"$dir/ibsim.log" 2>&1 &
pids+=($!)
ibsim_pid=$!
up=0
for _ in $(seq 100); do
	if ! kill -0 "$ibsim_pid" 2>/dev/null; then
		wait "$ibsim_pid"
		rc=$?
		if grep -q "can't create socket\|can't bind socket" "$dir/ibsim.log"; then
			echo "opensm.sh: SKIP: ibsim cannot make its sockets here (exit $rc):"
			grep "can't" "$dir/ibsim.log"
			exit 77
		fi
		fail "ibsim exited ($rc) before it was ready"
	fi
	if grep -q "@$IBSIM_SOCKNAME:ctl" /proc/net/unix 2>/dev/null; then
		up=1
		break
	fi
	# No /proc/net/unix to look in: alive for a second will do (opensm
	# is waited for below anyway).
	if [ ! -r /proc/net/unix ] && [ $SECONDS -ge 1 ]; then
		up=1
		break
	fi
	sleep 0.1
done
[ $up = 1 ] || fail "ibsim's socket @$IBSIM_SOCKNAME:ctl did not appear in 10 s"
echo "ibsim: up on @$IBSIM_SOCKNAME ($(grep -c . "$net") lines of $net)"

# The ports' facts, from umad2sim's emulated sysfs.
port_file() { # host file
	on "$1" cat "/sys/class/infiniband/ibsim0/ports/1/$2"
}

# 2. opensm on Hca1: a sweep at start, none after (-s 0).
cfg="$dir/opensm.conf"
: >"$cfg"
SIM_HOST=Hca1 OSM_TMP_DIR=$dir OSM_CACHE_DIR=$dir LD_PRELOAD=$sim_so \
	opensm -F "$cfg" -f "$dir/osm.log" -s 0 >"$dir/opensm.log" 2>&1 &
pids+=($!)
osm_pid=$!

# Ready when the ports have opensm's subnet prefix and saquery from Hca2
# gets a path to Hca3 (umad2sim's sysfs is a snapshot taken when each
# program starts, so every look is a new program).
t0=$SECONDS
ready=0
while [ $((SECONDS - t0)) -lt "${OSM_WAIT:-60}" ]; do
	kill -0 "$osm_pid" 2>/dev/null || fail "opensm exited"
	gid2=$(port_file Hca2 gids/0)
	gid3=$(port_file Hca3 gids/0)
	if [ "${gid2#0000:0000:0000:0000:}" = "$gid2" ] &&
		[ "${gid3#0000:0000:0000:0000:}" = "$gid3" ] &&
		on Hca2 saquery -p --sgid "$gid2" --dgid "$gid3" -r 1 -n 1 \
			2>/dev/null | grep -q "dlid\.*[1-9]"; then
		ready=1
		break
	fi
	sleep 0.5
done
[ $ready = 1 ] || fail "no path Hca2 -> Hca3 from opensm after ${OSM_WAIT:-60} s"
echo "opensm: paths after $((SECONDS - t0)) s ($(grep -o 'Entering [A-Z]* state' \
	"$dir/opensm.log" | tail -n 1))"
gid1=$(port_file Hca1 gids/0)
echo "GIDs: Hca1 $gid1, Hca2 $gid2, Hca3 $gid3"
lid1=$(($(port_file Hca1 lid)))
lid2=$(($(port_file Hca2 lid)))
lid3=$(($(port_file Hca3 lid)))
echo "LIDs: Hca1 $lid1, Hca2 $lid2, Hca3 $lid3"

# saquery's text and sa_probe's records, field by field. saquery prints
# the record's bytes as opensm's ib_path_rec_t has them (hop_flow_raw,
# num_path_revers, mtu/rate/pkt_life with their selectors on top);
# sa_probe one row of sa_fields.def a line.
compare() { # label saquery-output sa_probe-output
	python3 - "$1" "$2" "$3" <<'EOF'
import ipaddress, re, sys

label, sq_file, sp_file = sys.argv[1:4]
sq = {}
n_sq = 0
for line in open(sq_file):
    if line.startswith("PathRecord dump"):
        n_sq += 1
    m = re.match(r"\s+(\w+)\.+(\S+)", line)
    if m and n_sq == 1:
        sq[m.group(1)] = m.group(2)
sp = {}
for line in open(sp_file):
    m = re.match(r"record 0 (\w+): (\S+)", line)
    if m:
        sp[m.group(1)] = m.group(2)
if n_sq != 1:
    sys.exit(f"{label}: saquery printed {n_sq} PathRecords, not 1")
if not sp:
    sys.exit(f"{label}: sa_probe printed no record")

gid = lambda s: str(ipaddress.IPv6Address(s))
num = lambda s: int(s, 0)
hfr, npr = num(sq["hop_flow_raw"]), num(sq["num_path_revers"])
mtu, rate, plt = num(sq["mtu"]), num(sq["rate"]), num(sq["pkt_life"])
qos, sid = num(sq["qos_class"]), num(sq["service_id"])
rows = [  # field, saquery's value, sa_probe's value
    ("dgid", gid(sq["dgid"]), gid(sp["dgid"])),
    ("sgid", gid(sq["sgid"]), gid(sp["sgid"])),
    ("dlid", num(sq["dlid"]), num(sp["dlid"])),
    ("slid", num(sq["slid"]), num(sp["slid"])),
    ("service_id", sid, num(sp["service_id_msb"]) << 32 | num(sp["service_id_lsb"])),
    ("raw_traffic", hfr >> 31, num(sp["raw_traffic"])),
    ("flow_label", (hfr >> 8) & 0xFFFFF, num(sp["flow_label"])),
    ("hop_limit", hfr & 0xFF, num(sp["hop_limit"])),
    ("tclass", num(sq["tclass"]), num(sp["tclass"])),
    ("reversible", npr >> 7, num(sp["reversible"])),
    ("numb_path", npr & 0x7F, num(sp["numb_path"])),
    ("pkey", num(sq["pkey"]), num(sp["pkey"])),
    ("qos_class", qos, num(sp["qos_class"])),
    ("sl", num(sq["sl"]), num(sp["sl"])),
    ("mtu_selector", mtu >> 6, num(sp["mtu_selector"])),
    ("mtu", mtu & 0x3F, num(sp["mtu"])),
    ("rate_selector", rate >> 6, num(sp["rate_selector"])),
    ("rate", rate & 0x3F, num(sp["rate"])),
    ("plt_selector", plt >> 6, num(sp["plt_selector"])),
    ("packet_life_time", plt & 0x3F, num(sp["packet_life_time"])),
    ("preference", num(sq["preference"]), num(sp["preference"])),
]
print(f"== {label}: saquery | sa_probe")
bad = 0
for f, a, b in rows:
    ok = a == b
    bad += not ok
    a = hex(a) if isinstance(a, int) and a > 9 else a
    b = hex(b) if isinstance(b, int) and b > 9 else b
    print(f"  {f:<17} {str(a):<28} {str(b):<28} {'ok' if ok else 'DIFFERENT'}")
if bad:
    sys.exit(f"{label}: {bad} field(s) differ")
EOF
}

# One path both ways: saquery's arguments, then sa_probe's.
check_path() { # label host "saquery args" "sa_probe args"
	local label=$1 host=$2 sq_args=$3 sp_args=$4 rc
	local sq="$dir/$label.saquery.txt" sp="$dir/$label.sa_probe.txt"
	# shellcheck disable=SC2086 # the argument strings are word lists
	on "$host" saquery -p $sq_args -r 1 -n 1 >"$sq" 2>&1 ||
		fail "$label: saquery failed: $(cat "$sq")"
	# shellcheck disable=SC2086
	on "$host" "$probe" --no-rmpp $sp_args >"$sp" 2>&1
	rc=$?
	echo "== $label: saquery -p $sq_args -r 1 -n 1"
	cat "$sq"
	echo "== $label: sa_probe --no-rmpp $sp_args (exit $rc)"
	cat "$sp"
	[ $rc = 0 ] || fail "$label: sa_probe exited $rc"
	grep -q "^result: 1 record$" "$sp" || fail "$label: sa_probe did not get 1 record"
	grep -q "^rx_malformed: 0$" "$sp" || fail "$label: sa_probe refused an answer"
	compare "$label" "$sq" "$sp" || fail "$label: saquery and sa_probe differ"
}

# 3. The paths.
check_path gid-hca2-hca3 Hca2 "--sgid $gid2 --dgid $gid3" "--dgid $gid3"
check_path gid-hca2-hca1 Hca2 "--sgid $gid2 --dgid $gid1" "--dgid $gid1"
check_path lid-hca3-hca2 Hca3 "--slid $lid3 --dlid $lid2" \
	"--dlid $lid2 --slid $lid3"

# 4. An unknown DGID: no path. saquery prints nothing; sa_probe exits 3.
unknown=fe80::dead:beef
out="$dir/unknown.sa_probe.txt"
on Hca2 saquery -p --sgid "$gid2" --dgid "$unknown" -r 1 -n 1 \
	>"$dir/unknown.saquery.txt" 2>&1
echo "== unknown DGID: saquery -p --sgid $gid2 --dgid $unknown -r 1 -n 1 (exit $?)"
cat "$dir/unknown.saquery.txt"
grep -q PathRecord "$dir/unknown.saquery.txt" &&
	fail "opensm has a path to $unknown"
on Hca2 "$probe" --no-rmpp --dgid "$unknown" >"$out" 2>&1
rc=$?
echo "== unknown DGID: sa_probe --no-rmpp --dgid $unknown (exit $rc)"
cat "$out"
[ $rc = 3 ] || fail "unknown DGID: sa_probe exited $rc, not 3 (no records)"
grep -q "^result: error -2 " "$out" || fail "unknown DGID: not -ENOENT"
grep -q "^answered: 0$" "$out" || fail "unknown DGID: answered"

# Without --no-rmpp every table answer is RMPP version 0: refused.
out="$dir/rmpp.sa_probe.txt"
on Hca2 "$probe" --dgid "$gid3" --timeout-ms 200 --retries 1 >"$out" 2>&1
rc=$?
echo "== without --no-rmpp: sa_probe --dgid $gid3 --timeout-ms 200 --retries 1 (exit $rc)"
cat "$out"
[ $rc = 4 ] || fail "without --no-rmpp: sa_probe exited $rc, not 4 (no answer)"
grep -q "^rx_malformed: [1-9]" "$out" || fail "without --no-rmpp: nothing refused"

kill -0 "$osm_pid" 2>/dev/null || fail "opensm died during the test"
echo "opensm.sh: 3 paths equal in saquery and sa_probe; unknown DGID: no records; RMPP version 0 refused without --no-rmpp"
