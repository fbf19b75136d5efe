#!/usr/bin/env bash
# The modules an app links run from iOS 16 (Package.swift). No Apple SDK here to compile for it, so
# this refuses, in their sources, what iOS 16 lacks: Synchronization (Mutex, Atomic: iOS 18) and
# the other newer APIs we have reached for elsewhere. It also refuses a server module among their
# imports, which would drag Hummingbird and the database drivers into an app.
set -euo pipefail
cd "$(dirname "$0")/.."

modules=(SignetCore SignetTrust SignetClient SignetAppAttest SignetSimulator)
newer='import Synchronization|\bMutex<|\bAtomic<|withDiscardingTaskGroup|\bInlineArray\b|\bRawSpan\b|\bSpan<|Task\.immediate|#Predicate|@Observable'
server='^import (Hummingbird|SignetServer|SignetMiddleware|SignetStore|SignetSQLite|SignetPostgres|SQLiteNIO|PostgresNIO|AsyncHTTPClient|Prometheus)'
failed=0
for module in "${modules[@]}"; do
  if grep -rnE "$newer" "Sources/$module" --include=*.swift; then failed=1; fi
  if grep -rnE "$server" "Sources/$module" --include=*.swift; then failed=1; fi
done
if ! grep -q '\.iOS(\.v16)' Package.swift; then echo "Package.swift no longer says iOS 16: update this check and docs/ios.md" >&2; failed=1; fi
if [ "$failed" -ne 0 ]; then
  echo "a module an app links uses an API newer than iOS 16, or a server module (above)" >&2
  exit 1
fi
echo "the client modules (${modules[*]}) use nothing newer than iOS 16 and no server module"
