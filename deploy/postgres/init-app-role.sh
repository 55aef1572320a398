#!/bin/sh
# Runs once, when the postgres container initialises an empty data volume. cronplane gets two
# ordinary roles (no superuser, no extensions), as the security model requires:
#   - the owner (CRONPLANE_DB_OWNER, default cronplane_owner) owns the database and every table;
#     only `cronplane migrate` connects as it (CRONPLANE_MIGRATION_DATABASE_URL);
#   - the runtime role (CRONPLANE_DB_USER, default cronplane) owns nothing; `cronplane migrate`
#     grants it least privilege (audit tables: SELECT, INSERT only), so a process running as it
#     cannot rewrite, truncate or un-trigger the audit trail.
# No other role may connect to the database (Postgres lets PUBLIC connect by default): a role that
# can connect can NOTIFY on cronplane's channels and call what PUBLIC may call (review N11).
# The image's POSTGRES_USER stays the superuser, for backups and maintenance only.
set -eu

psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname postgres \
    -v owner_role="${CRONPLANE_DB_OWNER:-cronplane_owner}" \
    -v owner_password="$CRONPLANE_DB_OWNER_PASSWORD" \
    -v app_role="${CRONPLANE_DB_USER:-cronplane}" \
    -v app_db="${CRONPLANE_DB_NAME:-cronplane}" \
    -v app_password="$CRONPLANE_DB_PASSWORD" <<'SQL'
CREATE ROLE :"owner_role" LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE PASSWORD :'owner_password';
CREATE ROLE :"app_role" LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE PASSWORD :'app_password';
CREATE DATABASE :"app_db" OWNER :"owner_role";
REVOKE CONNECT ON DATABASE :"app_db" FROM PUBLIC;
GRANT CONNECT ON DATABASE :"app_db" TO :"app_role";
SQL
