"""Breaking the database's side on purpose, spelled once: end the sessions of given clients as
an operator (or a failover) would. Killing or restarting a private Postgres is
``support/private_postgres.py``; stopping cronplane's own processes is the harnesses' own."""

from __future__ import annotations

import psycopg


def terminate_backends(admin_url: str, database: str, application_name: str) -> int:
    """``pg_terminate_backend`` every session of ``database`` whose application name matches
    ``application_name`` (a LIKE pattern: ``cronplane%`` is every cronplane connection), except
    the one asking; how many were ended."""
    with psycopg.connect(admin_url, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = %s AND application_name LIKE %s AND pid <> pg_backend_pid()",
            (database, application_name)).fetchall()
    return len(rows)
