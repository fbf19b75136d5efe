#!/usr/bin/env bash
# A throwaway PostgreSQL server on loopback for the tests, without a service manager.
#   scripts/postgres.sh start DIR PORT   -> prints the postgres:// URL (TLS on; root: DIR/server.crt)
#   scripts/postgres.sh stop DIR
set -euo pipefail
bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
[ -n "$bin" ] || { echo "PostgreSQL is not installed (apt-get install postgresql)" >&2; exit 1; }
as_postgres() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }

case "$1" in
start)
  dir="$2"; port="$3"
  # The server outlives this script: it must not keep a descriptor of whoever started it (Foundation's
  # Process waits for its child through a socket the child inherits; held by the server, it never closes).
  for fd in /proc/$$/fd/*; do
    fd=${fd##*/}
    [ "$fd" -gt 2 ] && eval "exec $fd>&-" 2>/dev/null || true
  done
  mkdir -p "$dir"
  [ "$(id -u)" = 0 ] && chown postgres: "$dir"
  if [ ! -f "$dir/data/PG_VERSION" ]; then
    # The password goes through a real file the server user can read (initdb refuses root).
    echo signet > "$dir/pw"
    [ "$(id -u)" = 0 ] && chown postgres: "$dir/pw"
    as_postgres "$bin/initdb" -D "$dir/data" -U signet --pwfile="$dir/pw" --auth=scram-sha-256 >"$dir/initdb.log"
  fi
  # TLS too (for sslmode=verify-full tests): a throwaway certificate for localhost / 127.0.0.1,
  # which is also the root clients trust ($dir/server.crt).
  if [ ! -f "$dir/server.crt" ]; then
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 30 -subj /CN=localhost \
      -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" -keyout "$dir/server.key" -out "$dir/server.crt" 2>/dev/null
    chmod 600 "$dir/server.key"
    [ "$(id -u)" = 0 ] && chown postgres: "$dir/server.key" "$dir/server.crt"
  fi
  as_postgres "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w \
    -o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c max_connections=200 -c fsync=off -c ssl=on -c ssl_cert_file=$dir/server.crt -c ssl_key_file=$dir/server.key" start >/dev/null
  PGPASSWORD=signet "$bin/psql" -h 127.0.0.1 -p "$port" -U signet -d postgres -qtAc \
    "SELECT 1 FROM pg_database WHERE datname = 'signet'" | grep -q 1 ||
    PGPASSWORD=signet "$bin/psql" -h 127.0.0.1 -p "$port" -U signet -d postgres -qc "CREATE DATABASE signet"
  echo "postgres://signet:signet@127.0.0.1:$port/signet"
  ;;
stop)
  as_postgres "$bin/pg_ctl" -D "$2/data" -m fast -w stop >/dev/null
  ;;
*) echo "usage: $0 start DIR PORT | stop DIR" >&2; exit 2 ;;
esac
