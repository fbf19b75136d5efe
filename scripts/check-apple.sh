#!/usr/bin/env bash
# Compiles every module an app links for iOS (arm64e-apple-ios17.0) against Apple's SDK, with the
# Linux build's upcoming features and strictness, warnings as errors in Signet's own modules; then
# type-checks against them the docs' Swift snippets (docs/ios.md, docs/transport.md, the README) and
# the example app's sources (Examples/iOSApp). Leaves each module's iOS .swiftmodule in OUT, so other
# Swift files can be checked with -I OUT.
#
#   scripts/check-apple.sh [--sdk DIR] [--out DIR]     (default: ../shared/apple-sdk/iPhoneOS26.2.sdk, .build/apple)
#
# Needs the SDK (never in this repository) and ../shared/tools/apple-typecheck; .ci/run skips this
# when they are absent. Nothing is linked or run: objects are thrown away.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

sdk="$root/../shared/apple-sdk/iPhoneOS26.2.sdk"
out="$root/.build/apple"
tool="$root/../shared/tools/apple-typecheck"
while [ $# -gt 0 ]; do
  case "$1" in
    --sdk) sdk="$(cd "$2" && pwd)"; shift 2 ;;
    --out) mkdir -p "$2"; out="$(cd "$2" && pwd)"; shift 2 ;;
    -h|--help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "check-apple: unknown argument $1" >&2; exit 2 ;;
  esac
done
[ -d "$sdk" ] || { echo "check-apple: no Apple SDK at $sdk" >&2; exit 2; }
[ -x "$tool" ] || { echo "check-apple: no $tool" >&2; exit 2; }

# The modules an app links (the client products and what they import of Signet's).
modules=SignetCore,SignetTrust,SignetClient,SignetAppAttest,SignetAndroid,SignetSimulator

# The compile reads each module's flags from SwiftPM's Linux plan.
swift build --build-tests >/dev/null

snippets="$out/snippets"
rm -rf "$snippets"
mkdir -p "$out"
python3 scripts/apple/swift-snippets.py "$snippets" docs/ios.md docs/transport.md README.md >"$out/snippets.txt"
mapfile -t scripts <"$out/snippets.txt"
mapfile -t example < <(find Examples/iOSApp -name '*.swift' | sort)

# SwiftPM's plan is Linux's; Apple platforms build without the client's SwiftNIO transport
# (Package.swift's platform conditions), so its files leave the source lists, and the
# modules compiled are the ones an app links. Modules of earlier runs are removed: none is stale.
python3 scripts/apple/apple-plan.py .build/debug.yaml "$out/plan" >/dev/null
rm -f "$out"/*.swiftmodule

# From a scratch folder: the compiler leaves partial module files in its working directory.
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
(cd "$scratch" && python3 "$tool" --project "$root" --sdk "$sdk" --out "$out" --plan "$out/plan/debug.yaml" \
  --full "$modules" --werror --check "${example[@]/#/$root/}" --script "${scripts[@]}") | tee "$out/summary.txt"
[ "${PIPESTATUS[0]}" -eq 0 ] || exit 1

# The weight docs/ios.md states is the weight compiled here.
compiled=$(sed -n 's/^apple-typecheck [^:]*: \([0-9]*\) modules.*/\1/p' "$out/summary.txt")
stated=$(sed -n 's/.*compile as \*\*\([0-9]*\) modules\*\*.*/\1/p' docs/ios.md | head -1)
if [ "$compiled" != "$stated" ]; then
  echo "check-apple: the client products compile as $compiled modules for iOS; docs/ios.md says ${stated:-nothing}" >&2
  exit 1
fi
