#!/usr/bin/env bash
# Runs Signet's whole test suite: unit and vector tests, the CLI as a separate process, and interop
# with an independent RFC 9421 implementation (pyauth's http-message-signatures, installed here into
# a virtual environment under .build/).
set -euo pipefail
cd "$(dirname "$0")/.."

venv=".build/python"
# selenium drives Chromium through the console; schemathesis fuzzes a live gateway with the OpenAPI
# document; axe-core (Deque's accessibility engine, the axe.min.js that axe-playwright-python ships;
# the package's Playwright half is not needed) checks each console page in that browser.
# httpx and h2 speak HTTP/2 to the gateway (HTTP2Tests). grpcio with xds-protos (Envoy's own
# protocol definitions) is Envoy's ext_authz client (ExtAuthzInteropTests). requests-oauth2client
# is a DPoP client (RFC 9449) with its own proofs and nonce handling (DPoPInteropTests). cbor2
# writes App Attest assertions as iOS 27 does, extensions and all (AppBuildTests).
if ! "$venv/bin/python" -c 'import http_message_signatures, requests, pyhpke, jwt, joserfc, selenium, schemathesis, httpx, h2, grpc, envoy.service.auth.v3.external_auth_pb2, requests_oauth2client, cbor2, importlib.util, sys
sys.exit(importlib.util.find_spec("axe_playwright_python") is None)' 2>/dev/null; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q --disable-pip-version-check 'http-message-signatures==3.0.0' requests 'pyhpke==0.6.5' \
    'PyJWT==2.15.1' 'joserfc==1.8.0' 'selenium==4.51.0' 'schemathesis==4.32.5' \
    'httpx[http2]==0.28.1' 'grpcio==1.85.3' 'xds-protos==1.85.0' 'requests-oauth2client==1.8.0' \
    'cbor2==6.3.0'
  "$venv/bin/pip" install -q --disable-pip-version-check --no-deps 'axe-playwright-python==0.1.8'
fi
export SIGNET_PYTHON="$PWD/$venv/bin/python"

# A throwaway PostgreSQL on loopback for the PostgreSQL store and multi-instance tests, when the
# server binaries are installed (CI installs them) and no server was given.
if [ -z "${SIGNET_POSTGRES_URL:-}" ] && ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
  pgdir=$(mktemp -d /tmp/signet-pg.XXXXXX)
  chmod 755 "$pgdir"
  port=$((20000 + RANDOM % 20000))
  SIGNET_POSTGRES_URL=$(scripts/postgres.sh start "$pgdir/pg" "$port")
  export SIGNET_POSTGRES_URL
  export SIGNET_POSTGRES_CA="$pgdir/pg/server.crt"
  trap 'scripts/postgres.sh stop "$pgdir/pg" || true; rm -rf "$pgdir"' EXIT
fi

# Build the products too (the CLI tests run the `signet` binary), failing if a target imports a
# module of this package it does not declare as a dependency.
swift build --build-tests --explicit-target-dependency-import-check error
# The browser and the fuzzer load both cores for seconds, and the Python OHTTP peer (one thread,
# a connection per request) has failed under that load: run them after the rest, alone, so the
# timing-sensitive tests (exactly-once storms, nonce lifetimes) never share the machine with them.
heavy='OperatorConsoleBrowserTests|ContractTests/aLiveGateway|ObliviousInteropClientTests'
# The edge tests — floods, generated paths, proxies in front (nginx, Caddy, grpcio and openssl as
# processes: fewer processes spawned at once in the parallel phase), the cost budget, a PostgreSQL outage
# under load, whose answers are held to a time budget — load both cores by
# design: one at a time, after the rest, so they neither starve the timing-sensitive tests (client
# timeouts, lockout windows, nonce lifetimes) nor skew each other's measurements.
load='UnauthenticatedCostTests|RoutedPathTests|TrustedProxyTests|PinReportGatewayTests|aFloodOf|SQLiteSharedFileTests|StoreOutageLiveTests|ForwardAuthProxyTests|ExtAuthzInteropTests'
# CI shows the tail of the output: each run ends with what failed and, should a run hang, is
# stopped after 15 minutes (a whole run takes under two) with what was still running.
run_tests() {
  local log status=0
  log=$(mktemp)
  timeout --kill-after=30 900 swift test --skip-build "$@" 2>&1 | tee "$log" || status=$?
  if [ "$status" -ne 0 ]; then
    python3 scripts/test-summary.py "$log" "$([ "$status" -ge 124 ] && echo stopped)"
    rm -f "$log"
    return "$status"
  fi
  rm -f "$log"
}
# Swift Testing starts every test at once by default; on two cores the servers of ~400 tests then
# starve the few that measure time (client timeouts, nonce lifetimes, lockout windows). Twelve at a
# time keeps the cores busy without that.
SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH=12 run_tests --skip "$heavy|$load"
run_tests --filter "$heavy"
run_tests --filter "$load" --no-parallel
