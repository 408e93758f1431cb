#!/usr/bin/env python3
"""Summarise meson testlog.json files as 'N passed, N failed, N skipped'.

With --total, one line over all files given, prefixed 'total:'.
"""
import json
import sys


def count(path):
    c = {"passed": 0, "failed": 0, "skipped": 0}
    try:
        with open(path) as f:
            for line in f:
                r = json.loads(line).get("result")
                if r in ("OK", "EXPECTEDFAIL"):
                    c["passed"] += 1
                elif r == "SKIP":
                    c["skipped"] += 1
                else:
                    c["failed"] += 1
    except FileNotFoundError:
        pass
    return c


def fmt(c):
    return f'{c["passed"]} passed, {c["failed"]} failed, {c["skipped"]} skipped'


args = sys.argv[1:]
total = args and args[0] == "--total"
if total:
    args = args[1:]
sums = {"passed": 0, "failed": 0, "skipped": 0}
for a in args:
    c = count(a)
    for k in sums:
        sums[k] += c[k]
print(("total: " if total else "") + fmt(sums))
