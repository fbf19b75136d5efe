#!/usr/bin/env bash
# Builds Examples/EmbeddedMiddleware — a Hummingbird app that depends on the SignetMiddleware product
# alone — and fails if a database driver, the HTTP client or Prometheus entered its build graph.
set -euo pipefail
cd "$(dirname "$0")/../Examples/EmbeddedMiddleware"

swift build
# The check means something only if the middleware itself was built.
[ -n "$(find .build/debug/ -name SignetMiddleware.swiftmodule -print -quit)" ] || { echo "the example did not build SignetMiddleware" >&2; exit 1; }
found=()
for forbidden in SQLiteNIO PostgresNIO AsyncHTTPClient Prometheus SignetSQLite SignetPostgres SignetServer; do
  # A compiled module leaves NAME.swiftmodule; planning alone may leave empty NAME.build folders.
  if [ -n "$(find .build/debug/ -name "$forbidden.swiftmodule" -print -quit)" ]; then found+=("$forbidden"); fi
done
if [ ${#found[@]} -gt 0 ]; then
  echo "embedding the middleware pulls in: ${found[*]}" >&2
  exit 1
fi
echo "SignetMiddleware embeds without SQLiteNIO, PostgresNIO, AsyncHTTPClient or Prometheus"
