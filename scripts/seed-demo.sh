#!/bin/sh
# Seed a running cronplane with demo schedules that do real work, through the public HTTP API.
#
#   scripts/seed-demo.sh                                  # the local demo at http://localhost
#   CRONPLANE_URL=https://cronplane.example.com CRONPLANE_ADMIN_PASSWORD=... scripts/seed-demo.sh
#
# Idempotent: a schedule that already exists (409) is left as it is, so re-running is safe.
# POSIX sh + curl only, so it also runs in the demo stack's curl container.
set -eu

CRONPLANE_URL=${CRONPLANE_URL:-http://localhost}
CRONPLANE_URL=${CRONPLANE_URL%/}
# How the workers reach the API for the self health probe (inside the compose network).
CRONPLANE_SELF_URL=${CRONPLANE_SELF_URL:-http://api:8080}
CRONPLANE_SELF_URL=${CRONPLANE_SELF_URL%/}
ADMIN_USERNAME=${CRONPLANE_ADMIN_USERNAME:-admin}
ADMIN_PASSWORD=${CRONPLANE_ADMIN_PASSWORD:-demo-only-admin-password}
WAIT_SECONDS=${SEED_WAIT_SECONDS:-120}

API="$CRONPLANE_URL/api/v1"
WORKDIR=$(mktemp -d)
trap 'rm -rf "$WORKDIR"' EXIT INT TERM
BODY="$WORKDIR/body"

say() { printf 'seed-demo: %s\n' "$*"; }
die() { printf 'seed-demo: error: %s\n' "$*" >&2; exit 1; }

# request METHOD URL [JSON] -> prints the HTTP status; the response body is left in $BODY.
request() {
    if [ $# -ge 3 ]; then
        printf '%s' "$3" > "$WORKDIR/request"
        curl -sS -o "$BODY" -w '%{http_code}' -X "$1" \
            -H 'Content-Type: application/json' -H 'Accept: application/json' \
            ${TOKEN:+-H "Authorization: Bearer $TOKEN"} \
            --data-binary "@$WORKDIR/request" "$2"
    else
        curl -sS -o "$BODY" -w '%{http_code}' -X "$1" -H 'Accept: application/json' \
            ${TOKEN:+-H "Authorization: Bearer $TOKEN"} "$2"
    fi
}

wait_until_ready() {
    deadline=$(( $(date +%s) + WAIT_SECONDS ))
    until [ "$(curl -s -o /dev/null -w '%{http_code}' "$CRONPLANE_URL/readyz" || true)" = 200 ]; do
        [ "$(date +%s)" -lt "$deadline" ] || die "$CRONPLANE_URL/readyz not ready after ${WAIT_SECONDS}s"
        sleep 2
    done
}

login() {
    TOKEN=
    status=$(request POST "$API/auth/login" \
        "{\"username\": \"$ADMIN_USERNAME\", \"password\": \"$ADMIN_PASSWORD\"}")
    [ "$status" = 200 ] || die "login as $ADMIN_USERNAME failed (HTTP $status): $(cat "$BODY")"
    TOKEN=$(tr -d '\n' < "$BODY" | sed -n 's/.*"access_token"[[:space:]]*:[[:space:]]*"\([^"]*\)".*/\1/p')
    [ -n "$TOKEN" ] || die "login response has no access_token"
}

# create_schedule NAME JSON: 201 created, 409 already there (skipped), anything else fails.
create_schedule() {
    status=$(request POST "$API/schedules" "$2")
    case "$status" in
        201) say "created schedule $1" ;;
        409) say "schedule $1 already exists, skipped" ;;
        *) die "creating schedule $1 failed (HTTP $status): $(cat "$BODY")" ;;
    esac
}

TOKEN=
wait_until_ready
login

create_schedule self-health-probe "{
  \"name\": \"self-health-probe\",
  \"description\": \"GET this stack's own /healthz every 30 seconds.\",
  \"handler\": \"http.request\",
  \"payload\": {\"method\": \"GET\", \"url\": \"$CRONPLANE_SELF_URL/healthz\", \"expect_status\": 200},
  \"cron\": \"*/30 * * * * *\",
  \"timezone\": \"UTC\",
  \"max_attempts\": 1,
  \"timeout_seconds\": 10,
  \"overlap\": \"forbid\",
  \"misfire\": \"skip\"
}"

create_schedule nightly-history-purge "{
  \"name\": \"nightly-history-purge\",
  \"description\": \"Delete finished jobs older than 30 days, every night at 03:00 UTC.\",
  \"handler\": \"maintenance.purge_history\",
  \"payload\": {\"older_than_days\": 30},
  \"cron\": \"0 0 3 * * *\",
  \"timezone\": \"UTC\",
  \"max_attempts\": 3,
  \"overlap\": \"forbid\",
  \"misfire\": \"fire_once\"
}"

create_schedule flaky-demo "{
  \"name\": \"flaky-demo\",
  \"description\": \"Always fails: watch it retry with backoff, then land in the dead-letter queue.\",
  \"handler\": \"fail\",
  \"payload\": {\"message\": \"demo failure: this job fails on purpose to show retries\"},
  \"cron\": \"0 */5 * * * *\",
  \"timezone\": \"UTC\",
  \"max_attempts\": 3,
  \"overlap\": \"forbid\",
  \"misfire\": \"skip\"
}"

say "done: open $CRONPLANE_URL and sign in as $ADMIN_USERNAME, or use a demo persona"
