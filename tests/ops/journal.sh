#!/bin/sh
# shellcheck disable=SC2094 # stat names the file the daemon appends to: its JOURNAL_STREAM
# SPDX-License-Identifier: MIT
#
# The daemon's log in a real journal (issue 18): Debian's systemd-journald
# runs in a private mount namespace (tmpfs on /run/systemd/journal and
# /run/log), cmd logs to it, and journalctl -o json, parsed by
# /usr/bin/python3's json, must show
#   - with JOURNAL_STREAM naming stderr: native entries with PRIORITY and
#     the structured fields (CMD_DEVICE, CMD_PORT on port lines;
#     CMD_LOCAL_COMM_ID, CMD_REMOTE_COMM_ID on REJ lines, matching the
#     message), nothing on stderr;
#   - under systemd without the journal's stream (INVOCATION_ID, stderr
#     through systemd-cat --level-prefix): a start-up error and its Try
#     line at priority 3, not journald's default 6.
#
#   CMD=... CMHUB=... journal.sh CMCTL CMC_PING
set -u
CMCTL=${1:?usage: journal.sh CMCTL CMC_PING}
PING=${2:?usage: journal.sh CMCTL CMC_PING}
: "${CMHUB:?CMHUB must name cmhub}" "${CMD:?CMD must name cmd}"
JOURNALD=/lib/systemd/systemd-journald

if [ -z "${CMD_OPS_IN_NS:-}" ]; then
	[ -x "$JOURNALD" ] || { echo "no $JOURNALD" >&2; exit 77; }
	[ "$(id -u)" = 0 ] || { echo "needs root (unshare -m)" >&2; exit 77; }
	unshare -m true 2>/dev/null || { echo "unshare -m not allowed" >&2; exit 77; }
	CMD_OPS_IN_NS=1 exec unshare -m sh "$0" "$@"
fi

# shellcheck source=tests/lib/procs.sh
. "$(dirname "$0")/../lib/procs.sh"
dir=$(mktemp -d /tmp/cmd-journal-XXXXXX) || exit 1
pids=""
cleanup() {
	# shellcheck disable=SC2086 # a list of pids
	stop_procs journal.sh $pids
	rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
fail() {
	fail_logs journal.sh "FAIL: $*"
}

# This namespace's journal: nothing of the host's is touched.
mount --make-rprivate / 2>/dev/null
mkdir -p /run/systemd/journal /run/log
mount -t tmpfs tmpfs /run/systemd/journal || fail "tmpfs on /run/systemd/journal"
mount -t tmpfs tmpfs /run/log || fail "tmpfs on /run/log"
if [ -d /var/log/journal ]; then
	mount -t tmpfs tmpfs /var/log/journal || fail "tmpfs on /var/log/journal"
fi
"$JOURNALD" >"$dir/journald.log" 2>&1 &
pids="$pids $!"
wait_until journal.sh "systemd-journald" test -S /run/systemd/journal/socket

"$CMHUB" "$dir/hub" >"$dir/hub.log" 2>&1 &
pids="$pids $!"
wait_until journal.sh "cmhub" "$CMHUB" --ctl "$dir/hub" stats

# 1. The native protocol: JOURNAL_STREAM names the daemon's stderr.
: >"$dir/cmd.log"
JOURNAL_STREAM=$(stat -c '%d:%i' "$dir/cmd.log") "$CMD" --config /dev/null \
	--sim "$dir/hub" --node 1 --socket "$dir/cmd.sock" \
	--log-level debug 2>>"$dir/cmd.log" &
daemon=$!
pids="$pids $daemon"
wait_until journal.sh "cmd" "$CMCTL" -s "$dir/cmd.sock" counters
# A REJ: nobody listens on node 1 (LID 17), which connects to itself.
"$PING" -s "$dir/cmd.sock" lid:17 >"$dir/ping.log" 2>&1
# A refused request: logged at debug with the client's pid.
"$CMCTL" -s "$dir/cmd.sock" capture start /nonexistent-dir/x.pcap \
	>"$dir/capture.log" 2>&1 && fail "a capture into no directory started"
"$CMHUB" --ctl "$dir/hub" port 1 0 down >/dev/null || fail "port down"
wait_until journal.sh "port_events 1" sh -c \
	"[ \"\$('$CMCTL' -s '$dir/cmd.sock' counters | awk '\$1 == \"port_events\" { print \$2 }')\" = 1 ]"
kill "$daemon"
wait "$daemon"
[ -s "$dir/cmd.log" ] && fail "stderr was not empty with the journal's stream: $(head -3 "$dir/cmd.log")"

# 2. Start-up errors under systemd without the native protocol: <N>.
systemd-cat -t cmd-prefix --level-prefix=true env INVOCATION_ID=0123 \
	"$CMD" --config /dev/null --max-held abc
# And natively.
: >"$dir/err.log"
JOURNAL_STREAM=$(stat -c '%d:%i' "$dir/err.log") "$CMD" --config /dev/null \
	--node 4 2>>"$dir/err.log" &
errpid=$!
wait $errpid

journalctl --sync 2>/dev/null || sleep 1
journalctl --directory=/run/log/journal -o json >"$dir/journal.json" ||
	fail "journalctl"
/usr/bin/python3 - "$dir/journal.json" "$daemon" "$errpid" <<'PY' || fail "journal entries"
import json, re, sys

entries = [json.loads(line) for line in open(sys.argv[1])]
pid = sys.argv[2]
bad = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        bad.append(what)


def find(pred):
    return [e for e in entries if pred(e)]


ours = find(lambda e: e.get("_PID") == pid)
check(all(e.get("_TRANSPORT") == "journal" for e in ours) and ours,
      f"{len(ours)} entries from the daemon, all native (_TRANSPORT=journal)")
serving = find(lambda e: e.get("_PID") == pid and
               e.get("MESSAGE") == "sim1 port 1: serving (port index 0)")
check(len(serving) == 1 and serving[0].get("PRIORITY") == "6" and
      serving[0].get("CMD_DEVICE") == "sim1" and
      serving[0].get("CMD_PORT") == "1",
      "'serving': PRIORITY 6, CMD_DEVICE sim1, CMD_PORT 1")
down = find(lambda e: e.get("_PID") == pid and
            e.get("MESSAGE") == "sim1 port 1: port down")
check(len(down) == 1 and down[0].get("PRIORITY") == "5" and
      down[0].get("CMD_DEVICE") == "sim1" and down[0].get("CMD_PORT") == "1",
      "'port down': PRIORITY 5, CMD_DEVICE sim1, CMD_PORT 1")
for d in ("sent to", "from"):
    rej = find(lambda e: e.get("_PID") == pid and
               f": REJ {d} LID 17: comm " in e.get("MESSAGE", ""))
    ok = len(rej) >= 1
    if ok:
        e = rej[0]
        m = re.search(r"comm ([0-9a-f]{8})/([0-9a-f]{8})", e["MESSAGE"])
        local, remote = (m.group(1), m.group(2)) if d == "sent to" else \
            (m.group(2), m.group(1))
        ok = (e.get("PRIORITY") == "5" and
              e.get("CMD_LOCAL_COMM_ID") == local and
              e.get("CMD_REMOTE_COMM_ID") == remote and
              e.get("CMD_DEVICE") == "sim1" and e.get("CMD_PORT") == "1")
    check(ok, f"'REJ {d}': PRIORITY 5, CMD_LOCAL_COMM_ID/CMD_REMOTE_COMM_ID "
              "as in the message" + ("" if ok else f" ({rej[0] if rej else 'none'})"))
refused = find(lambda e: e.get("_PID") == pid and
               "CAPTURE refused" in e.get("MESSAGE", ""))
ok = len(refused) == 1
if ok:
    m = re.search(r"\(cmctl, pid (\d+)\)", refused[0]["MESSAGE"])
    ok = (m is not None and refused[0].get("PRIORITY") == "7" and
          refused[0].get("CMD_CLIENT_PID") == m.group(1))
check(ok, "'CAPTURE refused': PRIORITY 7, CMD_CLIENT_PID the client's pid" +
      ("" if ok else f" ({refused})"))
pre = find(lambda e: e.get("SYSLOG_IDENTIFIER") == "cmd-prefix")
msgs = [(e.get("MESSAGE"), e.get("PRIORITY")) for e in pre]
check(msgs == [("cmd: --max-held: 'abc' is not a number from 0 to 1048576", "3"),
               ("Try 'cmd --help' for more information.", "3")],
      f"start-up error through <N> prefixes at priority 3: {msgs}")
# By _PID (from the socket's credentials): a process gone by the time
# journald reads its datagrams has no _COMM.
nat = find(lambda e: e.get("_TRANSPORT") == "journal" and
           e.get("_PID") == sys.argv[3])
msgs = [(e.get("MESSAGE"), e.get("PRIORITY")) for e in nat]
check(msgs == [("cmd: --node is for --sim: there is no --sim", "3"),
               ("Try 'cmd --help' for more information.", "3")],
      f"start-up error natively at priority 3: {msgs}")
sys.exit(1 if bad else 0)
PY
[ -s "$dir/err.log" ] && fail "a start-up error went to stderr with the journal's stream"
echo "journal.sh: PASS"
