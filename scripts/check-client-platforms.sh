#!/usr/bin/env bash
# The modules an app links run from iOS 17 (Package.swift; CryptoKit's HPKE, for Oblivious HTTP, is
# iOS 17). No Apple SDK here to compile for it, so this refuses, in their sources, what iOS 17
# lacks: Synchronization (Mutex, Atomic) and String(validating:as:) (iOS 18), Span and
# Task.immediate (iOS 26). It also refuses a server module among their imports, which would drag
# Hummingbird and the database drivers into an app.
set -euo pipefail
cd "$(dirname "$0")/.."

modules=(SignetCore SignetTrust SignetClient SignetAppAttest SignetAndroid SignetSimulator)
newer='String\(validating:|import Synchronization|\bMutex<|\bAtomic<|\bInlineArray\b|\bRawSpan\b|\bSpan<|Task\.immediate'
server='^import (Hummingbird|SignetServer|SignetMiddleware|SignetStore|SignetSQLite|SignetPostgres|SQLiteNIO|PostgresNIO|AsyncHTTPClient|Prometheus)'
failed=0
for module in "${modules[@]}"; do
  # Comments may name what is avoided; code may not use it.
  if grep -rnE "$newer" "Sources/$module" --include=*.swift | grep -vE '^[^:]+:[0-9]+:[[:space:]]*//'; then failed=1; fi
  if grep -rnE "$server" "Sources/$module" --include=*.swift; then failed=1; fi
done
if ! grep -q '\.iOS(\.v17)' Package.swift; then echo "Package.swift no longer says iOS 17: update this check and docs/ios.md" >&2; failed=1; fi
if [ "$failed" -ne 0 ]; then
  echo "a module an app links uses an API newer than iOS 17, or a server module (above)" >&2
  exit 1
fi
echo "the client modules (${modules[*]}) use nothing newer than iOS 17 and no server module"
