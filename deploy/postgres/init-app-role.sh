#!/bin/sh
# Runs once, when the postgres container initialises an empty data volume: cronplane gets an
# ordinary role that owns its database (no superuser, no extensions), as the contract requires.
# The image's POSTGRES_USER stays the superuser, for backups and maintenance only.
set -eu

psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname postgres \
    -v app_role="${CRONPLANE_DB_USER:-cronplane}" \
    -v app_db="${CRONPLANE_DB_NAME:-cronplane}" \
    -v app_password="$CRONPLANE_DB_PASSWORD" <<'SQL'
CREATE ROLE :"app_role" LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE PASSWORD :'app_password';
CREATE DATABASE :"app_db" OWNER :"app_role";
SQL
