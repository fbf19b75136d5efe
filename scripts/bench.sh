#!/usr/bin/env bash
# Benchmarks Signet's verify path against `openssl speed` (run by `signet-bench verify` right after each
# measurement) and against pyauth's Python implementation, all in the same minutes on this machine.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-3}"
swift build -c release --product signet-bench >/dev/null
.build/release/signet-bench verify --seconds "$seconds"

venv=".build/python"
if ! "$venv/bin/python" -c 'import http_message_signatures, requests' 2>/dev/null; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q --disable-pip-version-check 'http-message-signatures==3.0.0' requests
fi
echo
echo "pyauth http-message-signatures 3.0.0, same request, one thread, ${seconds} s each (verifies/s):"
"$venv/bin/python" Tests/Interop/pyauth_bench.py "$seconds"
