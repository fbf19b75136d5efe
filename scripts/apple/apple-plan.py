#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""SwiftPM's Linux build plan, as Apple platforms would build it, for apple-typecheck --plan.

    apple-plan.py LINUX_PLAN OUT_DIR    -> writes OUT_DIR/<same name>.yaml and the source lists

SwiftPM's plan here is Linux's: it lists every source file of a target and builds the dependencies
declared for Linux. A Signet source that exists only where the client carries its own SwiftNIO
connections begins (after its comments) with `#if os(macOS) || !canImport(Darwin)`; on iOS it compiles to
nothing, and the packages it imports are not linked there (Package.swift's platform conditions).
apple-typecheck finds a module's dependencies by reading its sources' imports, so such files are
left out of the source lists here: the modules it then compiles are the ones an app links.
"""
import json, os, re, shlex, sys

plan, out = sys.argv[1], sys.argv[2]
project = os.path.join(os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..')), 'Sources') + os.sep
os.makedirs(out, exist_ok=True)
NIO_ONLY = '#if os(macOS) || !canImport(Darwin)'


def linux_only(path):
    """A file of this project whose code is one such block, start to end."""
    if not os.path.abspath(path).startswith(project):
        return False
    try:
        code = [l.strip() for l in open(path, errors='replace').read().splitlines()]
    except OSError:
        return False
    code = [l for l in code if l and not l.startswith('//')]
    if not code or code[0] != NIO_ONLY:
        return False
    depth = 0
    for i, line in enumerate(code):
        if line.startswith('#if'):
            depth += 1
        elif line.startswith('#endif'):
            depth -= 1
            if depth == 0:
                return i == len(code) - 1
    return False


dropped = []
kept_lines = []
for line in open(plan):
    m = re.match(r'\s*args: (\[.*\])\s*$', line)
    if not m:
        continue
    try:
        args = json.loads(m.group(1))
    except ValueError:
        continue
    if not args or not args[0].endswith('swiftc') or '-module-name' not in args:
        continue
    module = args[args.index('-module-name') + 1]
    for i, arg in enumerate(args):
        if arg.startswith('@') and os.path.exists(arg[1:]):
            sources = [w for l in open(arg[1:]) if l.strip() for w in shlex.split(l)]
            apple = [s for s in sources if not linux_only(s)]
            dropped += [s for s in sources if s not in apple]
            listed = os.path.join(out, module + '.sources')
            open(listed, 'w').write(''.join(shlex.quote(p) + '\n' for p in apple))
            args[i] = '@' + listed
    kept_lines.append('    args: ' + json.dumps(args) + '\n')

open(os.path.join(out, os.path.basename(plan)), 'w').writelines(kept_lines)
for path in sorted(set(dropped)):
    print(os.path.relpath(path))
