#!/usr/bin/env bash
# Builds Examples/EmbeddedMiddleware — a Hummingbird app that depends on the SignetMiddleware product
# alone — and fails if a database driver, the HTTP client or Prometheus entered its build graph.
set -euo pipefail
cd "$(dirname "$0")/../Examples/EmbeddedMiddleware"

swift build
modules=$(ls .build/debug/Modules 2>/dev/null || ls .build/debug)
found=()
for forbidden in SQLiteNIO PostgresNIO AsyncHTTPClient Prometheus SignetSQLite SignetPostgres SignetServer; do
  if grep -qx "$forbidden.swiftmodule\|$forbidden.build" <<<"$modules"; then found+=("$forbidden"); fi
done
if [ ${#found[@]} -gt 0 ]; then
  echo "embedding the middleware pulls in: ${found[*]}" >&2
  exit 1
fi
echo "SignetMiddleware embeds without SQLiteNIO, PostgresNIO, AsyncHTTPClient or Prometheus"
