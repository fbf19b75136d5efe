#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# Counts, per proxied request, the calls into the allocator and Swift's runtime that the gateway's
# core makes — malloc, swift_allocObject, swift_retain, swift_release, swift_bridgeObjectRetain,
# swift_task_alloc, swift_task_switch (an `await`'s hop, which with a task executor preference
# takes the task's status lock) and pthread_mutex_lock — in the pass-through and the verified HMAC
# run of one `signet-bench gateway` round. The counts are exact (uprobes count every call), so a
# change that saves a few of them shows where a throughput ratio on a shared VM, which moves by a
# tenth from round to round, cannot.
#
# Requests are counted by llhttp's completed messages on the same core: two a proxied request (the
# client's, and the upstream's answer). A development tool, not a test: it needs root, `perf` (the
# `linux-perf` package) and an upstream on core 1, as docs/benchmarks.md's pinned runs do.
#
#   taskset -c 1 nginx -c up.conf     # listen 127.0.0.1:18099; location / { return 200 '{"ok":true}'; }
#   swift build -c release --product signet-bench
#   sudo scripts/runtime-calls.sh .build/release/signet-bench http://127.0.0.1:18099
#
# The probes slow the gateway tenfold: the rates it prints are meaningless, the counts are not.
set -euo pipefail
bench=$(realpath "${1:?usage: runtime-calls.sh SIGNET_BENCH [UPSTREAM]}")
upstream=${2:-http://127.0.0.1:18099}
swift_lib=$(dirname "$(ldd "$bench" | awk '/libswiftCore.so/ {print $3}')")
libc=$(ldd "$bench" | awk '/libc.so.6/ {print $3}')
[ -n "$swift_lib" ] && [ -n "$libc" ] || { echo "runtime-calls: $bench is not linked to libswiftCore and libc" >&2; exit 1; }

perf probe -q -d 'probe_*' 2>/dev/null || true
perf probe -q -x "$libc" --add malloc
perf probe -q -x "$libc" --add pthread_mutex_lock
for function in swift_allocObject swift_retain swift_release swift_bridgeObjectRetain; do
    perf probe -q -x "$swift_lib/libswiftCore.so" --add "$function"
done
for function in swift_task_alloc swift_task_switch; do
    perf probe -q -x "$swift_lib/libswift_Concurrency.so" --add "$function"
done
perf probe -q -x "$bench" --add c_nio_llhttp__on_message_complete
trap 'perf probe -q -d "probe_*" 2>/dev/null || true' EXIT
events=$(perf probe -l 2>/dev/null | awk '{print $1}' | paste -sd, -)

counts=$(mktemp)
# Without a workload, perf counts until it is interrupted.
taskset -c 1 perf stat -C 0 -e "$events" -I 1000 -x, -o "$counts" &
perf_pid=$!
sleep 0.3
taskset -c 0 "$bench" gateway --upstream "$upstream" --wrk-cpus 1 --connections 64 --duration 6 --rounds 1 \
    --alg hmac-sha256 >/dev/null
kill -INT "$perf_pid"
wait "$perf_pid" 2>/dev/null || true

python3 - "$counts" <<'PY'
import collections, sys
rows = collections.defaultdict(dict)
for line in open(sys.argv[1]):
    part = line.strip().split(',')
    if len(part) < 4 or not part[0][:1].isdigit():
        continue
    try:
        rows[round(float(part[0]))][part[3].split(':')[-1]] = float(part[1])
    except ValueError:
        pass
seconds = sorted(rows)
messages = 'c_nio_llhttp__on_message_complete'
busy = lambda s: rows[s].get(messages, 0) > 200
tasks = lambda s: rows[s].get('swift_task_alloc', 0) > 2000
# The verified run is the last stretch of seconds with verifying tasks; the pass-through run ends
# just before it. The first and last second of each are left out (partly another phase).
verified = [s for s in seconds if tasks(s) and busy(s)]
block = [verified[-1]]
for s in reversed(verified[:-1]):
    if s != block[0] - 1:
        break
    block.insert(0, s)
verified = block[1:-1]
passing = [s for s in range(block[0] - 7, block[0] - 1) if busy(s) and not tasks(s)][1:]
if not verified or not passing:
    sys.exit("runtime-calls: could not find both runs in the counts")
def per_request(event, window):
    requests = sum(rows[s].get(messages, 0) for s in window) / 2
    return sum(rows[s].get(event, 0) for s in window) / requests
print(f"{'per proxied request':28s} {'pass-through':>12s} {'verified HMAC':>14s}")
for event in sorted({e for s in seconds for e in rows[s]} - {messages}):
    a, b = per_request(event, passing), per_request(event, verified)
    print(f"{event:28s} {a:12.1f} {b:14.1f}")
PY
rm -f "$counts"
