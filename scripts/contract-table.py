#!/usr/bin/env python3
"""Writes the endpoint table of docs/gateway.md from the OpenAPI document, its single source.

    scripts/contract-table.py          rewrite the table between the contract markers
    scripts/contract-table.py --check  exit 1 when the table is not what the document gives
"""
import json
import pathlib
import sys

root = pathlib.Path(__file__).resolve().parent.parent
document = json.loads((root / "Sources/SignetServer/Contract/openapi.json").read_text())
docs = root / "docs/gateway.md"
begin, end = "<!-- contract:begin (scripts/contract-table.py) -->", "<!-- contract:end -->"


def table():
    lines = [
        "| Method | Path | Listener | What | Answers | Reason codes |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for path, operations in document["paths"].items():
        for method in ("get", "post", "put", "delete"):
            operation = operations.get(method)
            if not operation:
                continue
            answers = ", ".join(code for code in operation["responses"] if not code.startswith(("4", "5")))
            refusals = ", ".join(code for code in operation["responses"] if code.startswith(("4", "5")))
            reasons = ", ".join("`%s`" % reason for reason in operation.get("x-signet-reasons", []))
            lines.append(
                "| %s | `%s` | %s | %s | %s; refused %s | %s |"
                % (method.upper(), path, operation.get("x-signet-listener", "client"), operation["summary"], answers, refusals, reasons)
            )
    return "\n".join(lines)


text = docs.read_text()
head, rest = text.split(begin, 1)
_, tail = rest.split(end, 1)
wanted = head + begin + "\n" + table() + "\n" + end + tail
if "--check" in sys.argv[1:]:
    if wanted != text:
        sys.exit("docs/gateway.md: the endpoint table differs from openapi.json; run scripts/contract-table.py")
else:
    docs.write_text(wanted)
