#!/usr/bin/env bash
# Coverage-guided fuzzing of every parser of untrusted bytes: `signet-fuzz` built with libFuzzer and
# AddressSanitizer (-sanitize=fuzzer,address), each target run from its corpus in Fuzz/corpus.
#
#   scripts/fuzz.sh [--seconds N | --runs N] [--seed N] [TARGET...]
#
# Each target runs N seconds (default 20) or N inputs (with --seed, the same inputs every time: what
# CI runs); new inputs go to .build/fuzz/work/TARGET (the
# committed corpus is read, never written), an input that breaks a property or crashes to
# .build/fuzz/crashes/. Prints one line per target (inputs run, rate, coverage) and fails on any
# finding, with the command that replays it. Without libFuzzer the committed corpus is replayed by
# the tests (FuzzCorpusTests) and by `swift run signet-fuzz replay TARGET PATH`.
# A finding, once fixed, is copied into Fuzz/corpus/TARGET/ so the tests replay it from then on.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=20
runs=""
seed=()
targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) seconds="$2"; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    --seed) seed=(-seed="$2"); shift 2 ;;
    -h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) targets+=("$1"); shift ;;
  esac
done

# lld: gold fails on these objects ("internal error in format_file_lineno").
swift build --build-path .build/fuzz --product signet-fuzz \
  -Xswiftc -sanitize=fuzzer,address -Xswiftc -DSIGNET_LIBFUZZER -Xswiftc -use-ld=lld >/dev/null
binary=.build/fuzz/debug/signet-fuzz

if [ ${#targets[@]} -eq 0 ]; then
  mapfile -t targets < <(find Fuzz/corpus -mindepth 1 -maxdepth 1 -type d -printf '%f\n' | sort)
fi
if [ -n "$runs" ]; then budget=(-runs="$runs"); else budget=(-max_total_time="$seconds"); fi

mkdir -p .build/fuzz/crashes .build/fuzz/logs
failed=0
printf '%-22s %12s %10s %8s %8s %8s  %s\n' target inputs "inputs/s" cov ft corpus result
for target in "${targets[@]}"; do
  [ -d "Fuzz/corpus/$target" ] || { echo "no corpus Fuzz/corpus/$target" >&2; exit 1; }
  mkdir -p ".build/fuzz/work/$target"
  log=".build/fuzz/logs/$target.log"
  status=0
  # Deterministic hashing: with --seed, the same inputs and the same paths every run.
  SWIFT_DETERMINISTIC_HASHING=1 SWIFT_BACKTRACE=enable=no SIGNET_FUZZ_TARGET="$target" "$binary" ".build/fuzz/work/$target" "Fuzz/corpus/$target" \
    "${budget[@]}" "${seed[@]}" -timeout=10 -rss_limit_mb=2048 -max_len=16384 -print_final_stats=1 \
    -artifact_prefix=".build/fuzz/crashes/$target-" >"$log" 2>&1 || status=$?
  inputs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  last=$(grep -E '^#[0-9]+' "$log" | tail -1 || true)
  cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
  ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
  corpus=$(sed -n 's/.* corp: \([0-9]*\).*/\1/p' <<<"$last")
  if [ "$status" -eq 0 ]; then result=ok; else result="FAILED ($log)"; failed=1; fi
  printf '%-22s %12s %10s %8s %8s %8s  %s\n' "$target" "${inputs:-?}" "${rate:-?}" "${cov:-?}" "${ft:-?}" "${corpus:-?}" "$result"
  if [ "$status" -ne 0 ]; then
    { grep -E 'Fatal error|ERROR: |SUMMARY|Test unit written' "$log" || tail -3 "$log"; } | head -5 | sed 's/^/    /'
    for crash in .build/fuzz/crashes/"$target"-*; do
      [ -e "$crash" ] && echo "    replay: swift run signet-fuzz replay $target $crash"
    done
  fi
done
exit "$failed"
