#!/usr/bin/env bash
# Stop what deploy/ha/start.sh started in DIR (default .cronplane/ha), by the pids it wrote;
# DIR itself (data, logs) is kept: remove it to start afresh.
set -uo pipefail

DIR="${1:-.cronplane/ha}"
[ -d "$DIR" ] || exit 0
PG_BIN="${CRONPLANE_PG_BIN:-}"
if [ -z "$PG_BIN" ]; then
  for bin in /usr/lib/postgresql/*/bin; do [ -x "$bin/pg_ctl" ] && PG_BIN="$bin"; done
fi

stop_pid() {  # stop_pid PIDFILE: SIGTERM, then SIGKILL after 15 s
  local file="$1" pid
  [ -s "$file" ] || return 0
  pid="$(head -n1 "$file")"
  kill "$pid" 2>/dev/null || return 0
  for _ in $(seq 1 75); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.2
  done
  kill -9 "$pid" 2>/dev/null
}

stop_pid "$DIR/pgbouncer.pid"
stop_pid "$DIR/haproxy.pid"
for node in "$DIR"/node*/; do
  stop_pid "$node/patroni.pid"
  # Patroni stops its Postgres with itself; a Postgres it left (killed Patroni) is stopped here.
  if [ -s "$node/data/postmaster.pid" ]; then
    if [ "$(id -u)" = 0 ]; then
      runuser -u postgres -- "$PG_BIN/pg_ctl" -D "$node/data" -m immediate stop >/dev/null 2>&1
    else
      "$PG_BIN/pg_ctl" -D "$node/data" -m immediate stop >/dev/null 2>&1
    fi
  fi
done
stop_pid "$DIR/etcd.pid"
exit 0
