"""Audit anchor benchmark: how fast the sealer catches up and how long a full verify takes.

    .venv/bin/python -m bench audit                 # = --events 50000
    .venv/bin/python -m bench audit --events 5000   # quick version

On a fresh migrated database: appends N/2 audit events through the product's own ``record`` (one
transaction each, as every mutation does) in 8 concurrent writers with no sealer; times sealing
that backlog (events/s); appends N/2 more with the sealer running every 0.2 s (the difference is
what sealing costs the write path); then times ``verify`` over the whole trail (events/s) as
``GET /audit/verify`` and ``cronplane audit verify`` run it.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import threading
import time
from pathlib import Path

from bench.databases import BenchServer


def _append(url: str, total: int, writers: int) -> float:
    from cronplane.domain.roles import Role
    from cronplane.management.actor import Actor
    from cronplane.management.audit import record
    from cronplane.storage.database import Database

    db = Database(url, pool_size=writers)
    actor = Actor(username="bench", role=Role.OPERATOR, ip="192.0.2.1", request_id="bench")
    per = total // writers
    barrier = threading.Barrier(writers + 1)

    def writer() -> None:
        barrier.wait()
        for n in range(per):
            with db.transaction() as session:
                record(session, actor, "job.create", target_type="job", target_id=n,
                       details={"handler": "noop", "payload": {"n": n}})

    threads = [threading.Thread(target=writer) for _ in range(writers)]
    for thread in threads:
        thread.start()
    barrier.wait()
    started = time.perf_counter()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - started
    db.close()
    return per * writers / elapsed


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench audit")
    parser.add_argument("--events", type=int, default=50_000)
    parser.add_argument("--writers", type=int, default=8)
    parser.add_argument("--database-url", default=os.environ.get("DATABASE_URL"))
    args = parser.parse_args(argv)

    from cronplane.config import Settings
    from cronplane.execution.audit_sealer import AuditSealer
    from cronplane.management import audit_log
    from cronplane.management.context import ManagementContext
    from cronplane.storage.audit_store import AuditChainStore
    from cronplane.storage.database import Database

    print(f"loadavg at start: {os.getloadavg()}", flush=True)
    server = BenchServer(args.database_url, prefix="bench_audit")
    half = args.events // 2
    with server.fresh() as url, tempfile.TemporaryDirectory() as data:
        settings = Settings(audit_key="bench-audit-key-" + "k" * 40, data_dir=Path(data),
                            env="test")
        keyring = settings.audit_keyring()
        assert keyring is not None
        db = Database(url)
        sealer = AuditSealer(AuditChainStore(db), keyring, interval=0.2,
                             anchor_path=settings.audit_anchor_path)

        without = _append(url, half, args.writers)
        # Catch-up: a trail that was never sealed (an upgrade, or a sealer that was down).
        started = time.perf_counter()
        while sealer.seal_once() is not None:
            pass
        sealing = time.perf_counter() - started
        print(f"sealed a backlog of {half:,} events in {sealing:.2f} s "
              f"({half / sealing:,.0f} events/s)", flush=True)
        sealer.start()
        with_sealer = _append(url, half, args.writers)
        sealer.stop()
        while sealer.seal_once() is not None:
            pass
        print(f"audited writes, {args.writers} writers: {without:,.0f}/s without the sealer, "
              f"{with_sealer:,.0f}/s with it sealing every 0.2 s", flush=True)

        ctx = ManagementContext(settings=settings, db=db)
        started = time.perf_counter()
        result = audit_log.verify(ctx)
        elapsed = time.perf_counter() - started
        assert result.ok, result.reasons
        print(f"verify: {result.checked:,} events in {elapsed:.2f} s "
              f"({result.checked / elapsed:,.0f} events/s), ok={result.ok}", flush=True)
        db.close()
    print(f"loadavg at end: {os.getloadavg()}", flush=True)
    return 0
