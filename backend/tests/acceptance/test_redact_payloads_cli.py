"""Issue 40: ``cronplane redact-payloads`` runs the finished-jobs pass to completion, and a walk
killed mid-batch (kill -9 of the real process) resumes where the last committed batch ended:
the batch in flight is rolled back whole, every job is still walked exactly once in the counts,
and every literal credential is gone at the end (ADR 0035, docs/operations.md)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from typing import Any

import psycopg

from tests.support.servers import CLI
from tests.support.waiting import wait_until

LEAK = "Bearer KILL-TEST-9z8y7x6w"
BATCH = 10


def _env(url: str, tmp_path: Any) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CRONPLANE_", "DATABASE"))}
    env.update({"DATABASE_URL": url, "CRONPLANE_DATA_DIR": str(tmp_path)})
    return env


def _run(url: str, tmp_path: Any, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, "redact-payloads", "--batch-size", str(BATCH),
                           "--settle-seconds", "0", *args], env=_env(url, tmp_path),
                          capture_output=True, text=True, timeout=90)


def _insert(url: str) -> list[int]:
    """60 finished jobs; a literal credential in one job of each batch of 10."""
    with psycopg.connect(url, autocommit=True) as conn:
        ids = []
        for index in range(60):
            payload: dict[str, Any] = {"url": "https://api.example.org/", "method": "GET"}
            if index % BATCH == 5:
                payload["headers"] = {"Authorization": f"{LEAK}-{index}"}
            ids.append(conn.execute(
                "INSERT INTO jobs (handler, payload, status, finished_at, attempt_count) VALUES "
                "('http.request', %s, 'SUCCEEDED', now(), 1) RETURNING id",
                (json.dumps(payload),)).fetchone()[0])
    return ids


def _leaky(url: str) -> list[int]:
    with psycopg.connect(url) as conn:
        return [r[0] for r in conn.execute(
            "SELECT id FROM jobs WHERE payload::text LIKE %s ORDER BY id", (f"%{LEAK}%",))]


def test_a_killed_walk_resumes_after_the_last_committed_batch(fresh_database_url,
                                                              tmp_path) -> None:
    url = fresh_database_url
    ids = _insert(url)
    blocker = psycopg.connect(url)
    # The fourth batch's credential-bearing job is locked: the walk commits three batches and
    # then waits inside the fourth, where it is killed.
    blocker.execute("SELECT 1 FROM jobs WHERE id = %s FOR UPDATE", (ids[35],))
    process = subprocess.Popen([*CLI, "redact-payloads", "--batch-size", str(BATCH),
                                "--settle-seconds", "0", "--output", "json"],
                               env=_env(url, tmp_path), stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    try:
        with psycopg.connect(url, autocommit=True) as watch:
            wait_until(lambda: watch.execute(
                "SELECT 1 FROM pg_stat_activity WHERE application_name LIKE "
                "'cronplane-redact-payloads%%' AND wait_event_type = 'Lock'").fetchone(),
                timeout=60, message="the walk waiting inside the fourth batch")
            process.send_signal(signal.SIGKILL)
            process.wait(timeout=10)
            blocker.rollback()  # the server side finds its client gone and rolls back
            wait_until(lambda: not watch.execute(
                "SELECT 1 FROM pg_stat_activity WHERE application_name LIKE "
                "'cronplane-redact-payloads%%'").fetchone(), timeout=30,
                message="the killed walk's session ended")
            cursor, scanned, redacted = watch.execute(
                "SELECT cursor, scanned, redacted FROM payload_redaction_passes").fetchone()
    finally:
        blocker.close()
        if process.poll() is None:
            process.kill()
    assert (cursor, scanned, redacted) == (ids[29], 30, 3), \
        "three batches committed; the fourth, killed inside its transaction, left nothing"
    assert _leaky(url) == [ids[i] for i in (35, 45, 55)]

    resumed = _run(url, tmp_path, "--output", "json")
    assert resumed.returncode == 0, resumed.stderr
    answer = json.loads(resumed.stdout)
    assert (answer["scanned"], answer["redacted"]) == (30, 3), "it resumed at job 31, not 1"
    assert (answer["status"]["scanned"], answer["status"]["redacted"]) == (60, 6)
    assert answer["status"]["cursor"] == ids[-1]
    assert _leaky(url) == []

    status = _run(url, tmp_path, "--status")
    assert status.returncode == 0 and f"walked through job {ids[-1]} of {ids[-1]}" in \
        status.stdout, status.stdout
