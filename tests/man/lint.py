#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The manual pages as rdma-core writes them.

  lint.py LIBCMCLIENT_SO MAN_DIR CMCLIENT_H

- every function libcmclient exports (nm -D --defined-only) has a page
  NAME.3 in MAN_DIR, a page of its own or a .so link to one, and the page
  it ends at lists the name in its NAME section and declares it in its
  SYNOPSIS;
- every page has the sections its kind needs: NAME, SYNOPSIS (but section
  7), DESCRIPTION, SEE ALSO; a function page (section 3 with prototypes)
  also RETURN VALUE and ERRORS;
- every .so link names a page that exists;
- cmc_reject(3) lists every REJ reason cmclient.h defines, with its number;
- groff -ww finds nothing to warn about, man --warnings neither, and
  lexgrog (what mandb feeds whatis(1) and apropos(1)) parses each NAME.
"""
import os
import re
import shutil
import subprocess
import sys

so_path, man_dir, header = sys.argv[1], sys.argv[2], sys.argv[3]
errors = []


def err(msg):
    errors.append(msg)
    print('FAIL: ' + msg)


def sections(text):
    """{section name: its lines}"""
    out, cur = {}, None
    for line in text.split('\n'):
        m = re.match(r'\.SH\s+"?([^"]*)"?\s*$', line)
        if m:
            cur = m.group(1).strip()
            out[cur] = []
        elif cur is not None:
            out[cur].append(line)
    return out


def name_list(sec):
    """The names before '\\-' in a NAME section."""
    text = ' '.join(sec)
    if '\\-' not in text:
        return None
    names = text.split('\\-', 1)[0]
    return [n.strip().replace('\\-', '-') for n in names.split(',')
            if n.strip()]


pages, links = {}, {}
for f in sorted(os.listdir(man_dir)):
    if not re.search(r'\.[1-8]$', f):
        continue
    text = open(os.path.join(man_dir, f), encoding='utf-8').read()
    m = re.match(r'\.so\s+(\S+)\s*$', text.strip())
    if m:
        links[f] = m.group(1)
    else:
        pages[f] = text

for f, target in links.items():
    if os.path.basename(target) not in pages:
        err('%s: .so %s: no such page' % (f, target))

names_of, synopsis_of = {}, {}
for f, text in pages.items():
    sec = sections(text)
    kind = f.rsplit('.', 1)[1]
    need = ['NAME', 'DESCRIPTION', 'SEE ALSO']
    if kind != '7':
        need.insert(1, 'SYNOPSIS')
    protos = re.findall(r'\b(cmc_[a-z0-9_]+)\(',
                        '\n'.join(sec.get('SYNOPSIS', [])))
    if kind == '3' and protos:
        need += ['RETURN VALUE', 'ERRORS']
    for s in need:
        if s not in sec:
            err('%s: no %s section' % (f, s))
    names = name_list(sec.get('NAME', []))
    if not names:
        err('%s: NAME has no "name \\- description" line' % f)
        names = []
    names_of[f] = names
    synopsis_of[f] = set(protos)
    for n in names:
        if kind == '3' and n.startswith('cmc_') and n not in synopsis_of[f]:
            err('%s: %s is in NAME but not declared in SYNOPSIS' % (f, n))

nm = subprocess.run(['nm', '-D', '--defined-only', so_path], check=True,
                    capture_output=True, text=True).stdout
exported = sorted({l.split()[2].split('@')[0] for l in nm.splitlines()
                   if len(l.split()) == 3 and l.split()[1] in 'TW'})
if len(exported) < 10:
    err('%s exports only %d functions?' % (so_path, len(exported)))
for sym in exported:
    f = sym + '.3'
    target = os.path.basename(links.get(f, f))
    if target not in pages:
        err('%s has no page (man %s finds nothing)' % (sym, sym))
    elif sym not in names_of[target]:
        err('%s: man %s opens %s, whose NAME does not list it' %
            (sym, sym, target))

# The REJ reasons: each constant of cmclient.h in cmc_reject(3)'s table,
# on a row with its number.
reasons = re.findall(r'\b(CMC_REJ_[A-Z_]+) = (\d+),',
                     open(header, encoding='utf-8').read())
if len(reasons) < 30:
    err('%s: only %d REJ reasons found' % (header, len(reasons)))
rej_page = pages.get('cmc_reject.3', '')
for name, num in reasons:
    if not re.search(r'^%s\t%s\b' % (num, name), rej_page, re.M):
        err('cmc_reject.3: no row "%s %s"' % (num, name))

# groff's own warnings (-ww: all of them), tbl where the page asks.
for f, text in pages.items():
    path = os.path.join(man_dir, f)
    r = subprocess.run(['groff', '-man', '-t', '-ww', '-z', path],
                       capture_output=True, text=True)
    if r.returncode or r.stderr:
        err('%s: groff -ww: %s' % (f, r.stderr.strip()))
    if shutil.which('man'):
        r = subprocess.run(['man', '--warnings', '-l', path],
                           capture_output=True, text=True,
                           env=dict(os.environ, MANWIDTH='80',
                                    MAN_KEEP_FORMATTING='0'))
        if r.returncode or r.stderr:
            err('%s: man --warnings: %s' % (f, r.stderr.strip()))
    if shutil.which('lexgrog'):
        r = subprocess.run(['lexgrog', path], capture_output=True, text=True)
        if r.returncode or 'parse failed' in r.stdout:
            err('%s: lexgrog: %s' % (f, r.stdout.strip()))

print('%d pages, %d .so links, %d exported functions' %
      (len(pages), len(links), len(exported)))
if errors:
    sys.exit(1)
print('PASS')
