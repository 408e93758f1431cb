#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Print the C program of a man page's EXAMPLE section (.EX ... .EE), with
the roff escapes it uses undone, so that the text readers see is the text
that is compiled."""
import re
import sys

ESCAPES = {r'\e': '\\', r'\-': '-', r'\&': '', r'\(aq': "'", r'\(dq': '"',
           r'\(ti': '~', r'\(ha': '^', r'\`': '`', r'\(rs': '\\'}


def unroff(line):
    return re.sub(r'\\\(..|\\.', lambda m: ESCAPES.get(m.group(0), m.group(0)),
                  line)


def main():
    section, inside, out = None, False, []
    with open(sys.argv[1], encoding='utf-8') as f:
        for line in f.read().split('\n'):
            if line.startswith('.SH '):
                section = line[4:].strip().strip('"')
                continue
            if section != 'EXAMPLE':
                continue
            if line.startswith('.EX'):
                inside = True
            elif line.startswith('.EE'):
                if out:
                    break
                inside = False
            elif inside:
                out.append(unroff(line))
    if not out:
        sys.exit('%s: no .EX block in EXAMPLE' % sys.argv[1])
    print('\n'.join(out))


main()
