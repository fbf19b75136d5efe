#!/usr/bin/env python3
"""Summarises a `swift test` log for CI, which shows only the tail of its output: the issues the
failing tests recorded and, when the run was stopped, the tests that had started and not ended."""
import re
import sys

log = open(sys.argv[1], encoding="utf-8", errors="replace").read().splitlines()
stopped = len(sys.argv) > 2 and sys.argv[2] == "stopped"

issues = [line for line in log if line.startswith("✘ Test ") and "recorded an issue" in line]
print("=== swift test: " + (f"{len(issues)} issue(s) recorded" if issues else "no issue recorded"))
for line in issues[:40]:
    print(line[:600])
if len(issues) > 40:
    print(f"... and {len(issues) - 40} more")

if stopped:
    started, ended = [], set()
    for line in log:
        if match := re.match(r"◇ Test (.+?) started\.$", line):
            started.append(match.group(1))
        elif match := re.match(r"[✔✘➜] Test (.+?) (passed|failed|skipped)", line):
            ended.add(re.sub(r" with \d+ test cases?$", "", match.group(1)))
    running = [name for name in started if name not in ended and name != "run" and not name.startswith("case ")]
    print("=== stopped while these had started and not ended:")
    for name in running:
        print("  " + name)
