#!/usr/bin/env python3
"""Runs docs/quickstart.md as written: every ```sh block, in order, in one bash, in a fresh folder.

A ```text block right after a ```sh block says what that block's output must contain: each of its
lines must appear within one line of the output, with `…` standing for anything. Background jobs
the page starts are stopped at the end. Exit 0 when every block ran and matched; otherwise the
block, what was expected and what came out.

    scripts/quickstart.py [--bin DIR] [--page docs/quickstart.md]
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

MARK = "@@quickstart-block-{}@@"


def blocks(page):
    """[(commands, expected lines or None)] from the page's fenced blocks."""
    fences = re.findall(r"^```(\w*)\n(.*?)^```\s*$", page, flags=re.S | re.M)
    result = []
    for kind, body in fences:
        if kind == "sh":
            result.append([body, None])
        elif kind == "text" and result and result[-1][1] is None:
            result[-1][1] = [line for line in body.splitlines() if line.strip()]
    return result


def matches(expected, output_lines):
    parts = [re.escape(part) for part in expected.split("…")]
    pattern = re.compile(".*".join(parts))
    return any(pattern.search(line) for line in output_lines)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", help="folder holding the signet binary, put first on PATH")
    parser.add_argument("--page", default=os.path.join(os.path.dirname(__file__), "..", "docs", "quickstart.md"))
    parser.add_argument("--timeout", type=int, default=180)
    args = parser.parse_args()
    with open(args.page, encoding="utf-8") as file:
        steps = blocks(file.read())
    script = ["set -euo pipefail", "trap 'kill $(jobs -p) 2>/dev/null || true; wait 2>/dev/null || true' EXIT"]
    for index, (commands, _) in enumerate(steps):
        script.append(f"printf '\\n%s\\n' '{MARK.format(index)}'")
        script.append(commands)
    script.append(f"printf '\\n%s\\n' '{MARK.format(len(steps))}'")
    env = dict(os.environ)
    if args.bin:
        env["PATH"] = os.path.abspath(args.bin) + os.pathsep + env.get("PATH", "")
    with tempfile.TemporaryDirectory(prefix="signet-quickstart-") as folder:
        try:
            run = subprocess.run(
                ["bash", "-c", "\n".join(script)], cwd=folder, env=env, stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT, timeout=args.timeout, text=True,
            )
            output, status = run.stdout, run.returncode
        except subprocess.TimeoutExpired as error:
            output, status = (error.stdout or b"").decode() if isinstance(error.stdout, bytes) else (error.stdout or ""), 124
    sections = re.split(r"^@@quickstart-block-(\d+)@@$", output, flags=re.M)
    outputs = {int(sections[i]): sections[i + 1] for i in range(1, len(sections) - 1, 2)}
    failed = False
    for index, (commands, expected) in enumerate(steps):
        if index not in outputs or (index + 1 not in outputs and index + 1 <= len(steps)):
            print(f"block {index + 1} did not finish (exit {status}):\n{commands}\n--- output ---\n{outputs.get(index, output)}")
            return 1
        lines = outputs[index].splitlines()
        for line in expected or []:
            if not matches(line, lines):
                print(f"block {index + 1}: expected a line matching {line!r}\n{commands}\n--- output ---\n{outputs[index]}")
                failed = True
    if status != 0:
        print(f"the page's commands exited {status}:\n{output[-4000:]}")
        return 1
    if failed:
        return 1
    print(f"quickstart: {len(steps)} blocks ran, {sum(1 for _, e in steps if e)} outputs matched")
    return 0


if __name__ == "__main__":
    sys.exit(main())
