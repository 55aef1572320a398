#!/usr/bin/env bash
# Start, on this machine and from Debian packages, what a production cronplane database looks
# like: etcd, NODES Patroni nodes of Postgres (15 on Debian 12) with synchronous_mode, HAProxy sending
# connections to whichever node Patroni's REST API calls the primary, and PgBouncer (transaction
# mode) in front of HAProxy.
#
#   deploy/ha/start.sh [DIR]     (default .cronplane/ha; stop with deploy/ha/stop.sh DIR)
#
# Writes DIR/env: DATABASE_URL (PgBouncer), CRONPLANE_DIRECT_DATABASE_URL and
# CRONPLANE_MIGRATION_DATABASE_URL (every node, target_session_attrs=read-write). Ports start
# at CRONPLANE_HA_PORT_BASE (default 25400). As root, Postgres and Patroni run as `postgres`
# and PgBouncer as `postgres` too (neither runs as root).
set -euo pipefail

# pgbouncer and haproxy live in /usr/sbin, which an unprivileged user's PATH may lack (CI runners).
PATH="$PATH:/usr/sbin:/sbin"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
DIR="$(mkdir -p "${1:-.cronplane/ha}" && cd "${1:-.cronplane/ha}" && pwd)"
BASE="${CRONPLANE_HA_PORT_BASE:-25400}"
NODES="${CRONPLANE_HA_NODES:-2}"
# The newest server installed (15 on Debian 12, 16 on Ubuntu 24.04), unless named.
PG_BIN="${CRONPLANE_PG_BIN:-}"
if [ -z "$PG_BIN" ]; then
  for bin in /usr/lib/postgresql/*/bin; do [ -x "$bin/initdb" ] && PG_BIN="$bin"; done
fi
ETCD_PORT=$((BASE + 79))
ETCD_PEER_PORT=$((BASE + 80))
HAPROXY_PORT=$((BASE + 20))
PGBOUNCER_PORT=$((BASE + 30))

for tool in etcd patroni patronictl haproxy pgbouncer "$PG_BIN/initdb"; do
  command -v "$tool" >/dev/null || {
    echo "deploy/ha: $tool is missing (make ha-deps installs etcd-server patroni haproxy pgbouncer postgresql)" >&2
    exit 1
  }
done

if [ "$(id -u)" = 0 ]; then
  RUN_AS=(runuser -u postgres --)
  chown postgres:postgres "$DIR"
  "${RUN_AS[@]}" test -w "$DIR" || {
    echo "deploy/ha: the postgres user cannot reach $DIR (a parent directory is private?)" >&2
    exit 1
  }
else
  RUN_AS=()
fi

fill() {  # fill TEMPLATE NAME PG_PORT REST_PORT > file
  sed -e "s|@DIR@|$DIR|g" -e "s|@NAME@|${2:-}|g" -e "s|@PG_PORT@|${3:-}|g" \
      -e "s|@REST_PORT@|${4:-}|g" -e "s|@ETCD_PORT@|$ETCD_PORT|g" -e "s|@PG_BIN@|$PG_BIN|g" \
      -e "s|@HAPROXY_PORT@|$HAPROXY_PORT|g" -e "s|@PGBOUNCER_PORT@|$PGBOUNCER_PORT|g" "$HERE/$1"
}

wait_for() {  # wait_for SECONDS DESCRIPTION COMMAND...
  local deadline=$((SECONDS + $1)) what="$2"
  shift 2
  until "$@" >/dev/null 2>&1; do
    if [ "$SECONDS" -ge "$deadline" ]; then
      echo "deploy/ha: timed out waiting for $what (logs in $DIR)" >&2
      exit 1
    fi
    sleep 0.2
  done
}

# -- etcd: the DCS Patroni keeps its leader key in ----------------------------------------------
etcd --name ha --data-dir "$DIR/etcd" \
  --listen-client-urls "http://127.0.0.1:$ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
  --listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
  --initial-cluster "ha=http://127.0.0.1:$ETCD_PEER_PORT" --log-level warn \
  >"$DIR/etcd.log" 2>&1 &
echo $! >"$DIR/etcd.pid"
wait_for 30 etcd curl -sf "http://127.0.0.1:$ETCD_PORT/health"

# -- Patroni nodes --------------------------------------------------------------------------------
servers=""
hosts=""
for i in $(seq 1 "$NODES"); do
  name="node$i"
  pg_port=$((BASE + i))
  rest_port=$((BASE + 10 + i))
  mkdir -p "$DIR/$name"
  fill patroni.yml.in "$name" "$pg_port" "$rest_port" >"$DIR/$name/patroni.yml"
  [ "$(id -u)" = 0 ] && chown -R postgres:postgres "$DIR/$name"
  "${RUN_AS[@]}" patroni "$DIR/$name/patroni.yml" >"$DIR/$name/patroni.log" 2>&1 &
  echo $! >"$DIR/$name/patroni.pid"
  servers+="    server $name 127.0.0.1:$pg_port maxconn 500 check port $rest_port"$'\n'
  hosts+="${hosts:+,}127.0.0.1:$pg_port"
  # The first node bootstraps the cluster; the others clone it once it leads.
  [ "$i" = 1 ] && wait_for 60 "node1 to lead" curl -sf "http://127.0.0.1:$((BASE + 11))/primary"
done
patronictl_() { patronictl -c "$DIR/node1/patroni.yml" "$@"; }
cat >"$DIR/patronictl" <<EOF
#!/bin/sh
exec patronictl -c "$DIR/node1/patroni.yml" "\$@"
EOF
chmod +x "$DIR/patronictl"

sync_standby() {
  curl -sf "http://127.0.0.1:$((BASE + 11))/cluster" \
    | python3 -c 'import json,sys; m=json.load(sys.stdin)["members"]; sys.exit(not any(x["role"]=="sync_standby" and x["state"] in ("streaming","running") for x in m))'
}
[ "$NODES" -gt 1 ] && wait_for 90 "a synchronous standby" sync_standby

# -- HAProxy → the primary; PgBouncer → HAProxy ------------------------------------------------
fill haproxy.cfg.in >"$DIR/haproxy.cfg.part"
SERVERS="$servers" python3 -c 'import os, sys; print(open(sys.argv[1]).read().replace("@SERVERS@\n", os.environ["SERVERS"]), end="")' \
  "$DIR/haproxy.cfg.part" >"$DIR/haproxy.cfg"
haproxy -D -f "$DIR/haproxy.cfg"
wait_for 10 haproxy test -s "$DIR/haproxy.pid"

# The roles and the database cronplane uses (as docs/production.md describes): the owner runs
# `cronplane migrate`, the runtime role runs serve and worker.
psql_leader() { "${RUN_AS[@]}" "$PG_BIN/psql" -h 127.0.0.1 -p "$HAPROXY_PORT" -U postgres -d postgres -qAt "$@"; }
wait_for 30 "the primary through HAProxy" psql_leader -c "SELECT 1"
for role in cronplane_owner cronplane; do
  [ -n "$(psql_leader -c "SELECT 1 FROM pg_roles WHERE rolname = '$role'")" ] \
    || psql_leader -c "CREATE ROLE $role LOGIN"
done
[ -n "$(psql_leader -c "SELECT 1 FROM pg_database WHERE datname = 'cronplane'")" ] \
  || psql_leader -c "CREATE DATABASE cronplane OWNER cronplane_owner"

printf '"cronplane" ""\n"cronplane_owner" ""\n' >"$DIR/pgbouncer-users.txt"
fill pgbouncer.ini.in >"$DIR/pgbouncer.ini"
if [ "$(id -u)" = 0 ]; then
  chown postgres:postgres "$DIR/pgbouncer.ini" "$DIR/pgbouncer-users.txt"
  pgbouncer -d -u postgres "$DIR/pgbouncer.ini"
else
  pgbouncer -d "$DIR/pgbouncer.ini"
fi
wait_for 10 pgbouncer test -s "$DIR/pgbouncer.pid"

cat >"$DIR/env" <<EOF
DATABASE_URL=postgresql://cronplane@127.0.0.1:$PGBOUNCER_PORT/cronplane
CRONPLANE_DIRECT_DATABASE_URL=postgresql://cronplane@$hosts/cronplane?target_session_attrs=read-write
CRONPLANE_MIGRATION_DATABASE_URL=postgresql://cronplane_owner@$hosts/cronplane?target_session_attrs=read-write
EOF
patronictl_ list
echo "deploy/ha: up in $DIR — cronplane settings in $DIR/env, patronictl as $DIR/patronictl"
