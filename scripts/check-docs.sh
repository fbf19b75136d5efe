#!/usr/bin/env bash
# Builds the DocC documentation of every public module and fails on any warning (an unresolved
# symbol link, a missing article).
set -euo pipefail
cd "$(dirname "$0")/.."

mkdir -p .build/docs
for target in SignetCore SignetAppAttest SignetAndroid SignetStore SignetSQLite SignetPostgres SignetMiddleware SignetServer \
  SignetClient SignetSimulator SignetTrust; do
  rm -rf ".build/docs/$target"
  swift package --disable-sandbox generate-documentation --target "$target" --warnings-as-errors \
    --output-path ".build/docs/$target" >/dev/null
  echo "docs: $target builds without warnings"
done
