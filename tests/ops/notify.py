#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""sd_notify and socket activation of cmd, with this test as the manager.

  notify.py            (CMD and CMHUB in the environment)

1. READY=1, then WATCHDOG=1 again and again at half of WATCHDOG_USEC;
   none while the daemon is stopped (SIGSTOP), again after SIGCONT;
   STOPPING=1 on SIGTERM, exit 0.
2. Socket activation: a SOCK_STREAM socket as fd 3, and a SOCK_SEQPACKET
   one named otherwise than cmd.socket, are refused with exit status 2 and
   a message saying what was wrong; the right one is served.

Every bound here is a hang guard (30 s for something that takes
milliseconds), except the quiet period while stopped, which can only be
broken by a stopped process sending, whatever the machine's speed.
"""
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time

CMD = os.environ["CMD"]
CMHUB = os.environ["CMHUB"]
GUARD = 30.0
failed = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        failed.append(what)


def recv_until(sock, want, timeout=GUARD):
    """Datagrams until one holds the line 'want'; returns all read."""
    got = []
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        sock.settimeout(max(0.01, end - time.monotonic()))
        try:
            msg = sock.recv(4096).decode()
        except socket.timeout:
            break
        got.append(msg)
        if want in msg.split("\n"):
            return got, True
    return got, False


def spawn(args, env, fd3=None, log=None):
    """cmd with LISTEN_PID/WATCHDOG_PID set to its own pid (the shell
    execs it), and 'fd3' as its fd 3."""
    def pre():
        if fd3 is not None:
            os.dup2(fd3.fileno(), 3)

    return subprocess.Popen(
        ["sh", "-c", 'export LISTEN_PID=$$ WATCHDOG_PID=$$; exec "$@"',
         "sh", CMD] + args,
        env=env, preexec_fn=pre, close_fds=False,
        stdout=log, stderr=subprocess.STDOUT if log else subprocess.PIPE)


def finish(p):
    """stderr of a daemon expected to exit; killed (and -9) if it
    does not within the guard."""
    try:
        return p.communicate(timeout=GUARD)[1].decode()
    except subprocess.TimeoutExpired:
        p.kill()
        return p.communicate()[1].decode()


def state(pid):
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()[0]


def main():
    d = tempfile.mkdtemp(prefix="cmd-notify-")
    hub = subprocess.Popen([CMHUB, f"{d}/hub"], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
    procs = [hub]
    try:
        end = time.monotonic() + GUARD
        while subprocess.call([CMHUB, "--ctl", f"{d}/hub", "stats"],
                              stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL):
            if time.monotonic() > end:
                check(False, "cmhub came up")
                return
            time.sleep(0.1)

        ns = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        ns.bind(f"{d}/notify")
        base = {k: v for k, v in os.environ.items()
                if not k.startswith(("LISTEN_", "WATCHDOG_", "NOTIFY_",
                                     "JOURNAL_STREAM", "INVOCATION_ID"))}
        env = dict(base, NOTIFY_SOCKET=f"{d}/notify",
                   WATCHDOG_USEC="400000")
        sim = ["--sim", f"{d}/hub", "--node", "1", "--config", "/dev/null"]

        # 1. READY and the watchdog.
        log = open(f"{d}/cmd1.log", "w")
        p = spawn(sim + ["--socket", f"{d}/cmd1.sock"], env, log=log)
        procs.append(p)
        got, ok = recv_until(ns, "READY=1")
        check(ok, "READY=1 arrives")
        n = 0
        for _ in range(3):
            got, ok = recv_until(ns, "WATCHDOG=1")
            n += ok
        check(n == 3, f"three WATCHDOG=1 after READY ({n})")
        os.kill(p.pid, signal.SIGSTOP)
        end = time.monotonic() + GUARD
        while state(p.pid) != "T" and time.monotonic() < end:
            time.sleep(0.01)
        check(state(p.pid) == "T", "the daemon is stopped")
        # What it sent before it stopped is in the queue already (a Unix
        # datagram is queued by sendto itself): drain it, then listen
        # for five watchdog intervals.
        ns.setblocking(False)
        try:
            while True:
                ns.recv(4096)
        except BlockingIOError:
            pass
        got, ok = recv_until(ns, "WATCHDOG=1", timeout=1.0)
        check(not ok, "no WATCHDOG=1 while stopped (1 s, 5 intervals)")
        os.kill(p.pid, signal.SIGCONT)
        got, ok = recv_until(ns, "WATCHDOG=1")
        check(ok, "WATCHDOG=1 again after SIGCONT")
        p.send_signal(signal.SIGTERM)
        got, ok = recv_until(ns, "STOPPING=1")
        check(ok, "STOPPING=1 on SIGTERM")
        check(p.wait(GUARD) == 0, "exit 0 on SIGTERM")
        log.close()
        with open(f"{d}/cmd1.log") as f:
            text = f.read()
        check("watchdog: WATCHDOG=1 every 0.200 s" in text,
              "the daemon logged its watchdog interval")

        # 2. Socket activation: the wrong sockets refused, the right one
        # served.
        env = dict(base, LISTEN_FDS="1", LISTEN_FDNAMES="cmd.socket")
        st = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        st.bind(f"{d}/stream.sock")
        st.listen()
        p = spawn(sim + ["--socket", f"{d}/x.sock"], env, fd3=st)
        out = finish(p)
        check(p.returncode == 2, f"a SOCK_STREAM socket: exit 2 ({p.returncode})")
        want = ("cmd: socket activation: fd 3 is not a listening "
                "SOCK_SEQPACKET Unix socket (ListenSequentialPacket=)")
        check(want in out.split("\n"), f"a SOCK_STREAM socket: '{want}' in {out!r}")
        check(out.rstrip("\n").endswith("Try 'cmd --help' for more information."),
              "and the Try line last")

        sq = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        sq.bind(f"{d}/seq.sock")
        sq.listen()
        p = spawn(sim + ["--socket", f"{d}/x.sock"],
                  dict(env, LISTEN_FDNAMES="other.socket"), fd3=sq)
        out = finish(p)
        check(p.returncode == 2, f"a socket named other.socket: exit 2 ({p.returncode})")
        want = ("cmd: socket activation: the socket passed is named "
                "'other.socket' (LISTEN_FDNAMES), expected 'cmd.socket'")
        check(want in out.split("\n"), f"wrong name: '{want}' in {out!r}")

        p = spawn(sim + ["--socket", f"{d}/x.sock"],
                  dict(env, NOTIFY_SOCKET=f"{d}/notify"), fd3=sq)
        procs.append(p)
        got, ok = recv_until(ns, "READY=1")
        check(ok, "the right socket: READY=1")
        c = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        c.connect(f"{d}/seq.sock")
        check(True, "a client connects to the inherited socket")
        c.close()
        p.send_signal(signal.SIGTERM)
        out = finish(p)
        check(p.returncode == 0, f"exit 0 ({p.returncode})")
        check("serving 1 port(s) on an inherited socket" in out,
              "the daemon served the inherited socket")
    finally:
        for q in procs:
            if q.poll() is None:
                q.kill()
                q.wait()
        subprocess.call(["rm", "-rf", d])
    if failed:
        print(f"notify.py: {len(failed)} check(s) failed", file=sys.stderr)
        sys.exit(1)
    print("notify.py: PASS")


main()
