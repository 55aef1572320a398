"""Batches with real processes (issue 44): a batch of 1,000 with a callback fires the callback
once, with exact counts, while kill -9 hits a worker mid-batch; a running ``shell.command`` job
fans out 100 children into its own batch with its ``CRONPLANE_JOB_TOKEN``, which is refused
elsewhere and dies with its attempt."""

from __future__ import annotations

import json
from pathlib import Path

import requests

from tests.acceptance.faults import QUEUE_ENV, cluster, report
from tests.acceptance.processes import Cluster, wait_until
from tests.acceptance.serve_process import admin_token
from tests.support.apps import RoleClient
from tests.support.servers import Serve, free_port

__all__ = ["cluster"]  # the fixture, imported for the tests below

ADMIN_PASSWORD = "long enough admin pw"


def _batch_counts(cluster: Cluster, batch_id: int) -> dict[str, int]:
    """The counts the triggers kept, beside a count over the batch's jobs (what they must equal)."""
    kept = cluster.query("SELECT total, waiting, pending, running, succeeded, dead, cancelled "
                         "FROM batches WHERE id = %s", batch_id)[0]
    counted = {status.lower(): n for status, n in (
        (r["status"], r["n"]) for r in cluster.query(
            "SELECT status, count(*)::int AS n FROM jobs WHERE batch_id = %s GROUP BY status",
            batch_id))}
    expected = {name: counted.get(name, 0) for name in (
        "waiting", "pending", "running", "succeeded", "dead", "cancelled")}
    assert {k: v for k, v in kept.items() if k != "total"} == expected, (kept, counted)
    assert kept["total"] == sum(expected.values())
    return dict(kept)


def test_a_batch_of_1000_fires_its_callback_once_with_exact_counts_despite_kill_9(
        cluster: Cluster) -> None:
    clients = RoleClient.on(cluster.url)
    try:
        response = clients.operator.post("/api/v1/batches", json={
            "jobs": [{"handler": "sleep", "payload": {"seconds": 0.02}}] * 1000,
            "on_complete": {"handler": "noop", "payload": {"report": "nightly"}}})
    finally:
        clients.close()
    assert response.status_code == 202, response.json
    batch_id, callback = response.json["id"], response.json["callback_job_id"]
    procs = [cluster.start(**QUEUE_ENV) for _ in range(3)]
    cluster.wait_registered(procs)

    def finished() -> int:
        return int(cluster.scalar("SELECT succeeded + dead + cancelled FROM batches WHERE id = %s",
                                  batch_id))

    # kill -9 a worker that holds RUNNING attempts of the batch, mid-batch.
    wait_until(lambda: finished() >= 200, 120, lambda: f"{finished()} of 1000 finished")
    rows = cluster.query("SELECT DISTINCT split_part(a.worker_id, ':', 2) AS pid FROM attempts a "
                         "JOIN jobs j ON j.id = a.job_id WHERE a.status = 'RUNNING' "
                         "AND j.batch_id = %s", batch_id)
    alive = {str(p.pid): p for p in cluster.alive()}
    victims = [alive[r["pid"]] for r in rows if r["pid"] in alive] or cluster.alive()[:1]
    at_kill = finished()
    cluster.kill9(victims[0])
    cluster.start(**QUEUE_ENV)
    assert at_kill < 1000, "the batch finished before the kill: the test proved nothing"
    wait_until(lambda: cluster.scalar("SELECT status FROM jobs WHERE id = %s", callback)
               == "SUCCEEDED", 180,
               lambda: f"callback {callback}: {finished()} of 1000 finished")
    attempts = cluster.query("SELECT status FROM attempts WHERE job_id = %s", callback)
    assert [a["status"] for a in attempts] == ["SUCCEEDED"], f"the callback ran {attempts}"
    payload = cluster.scalar("SELECT payload FROM jobs WHERE id = %s", callback)
    assert payload == {"report": "nightly", "batch": {
        "id": batch_id, "succeeded": 1000, "dead": 0, "cancelled": 0}}, payload
    counts = _batch_counts(cluster, batch_id)
    assert counts["total"] == 1000 and counts["succeeded"] == 1000, counts
    lost = cluster.scalar("SELECT count(*) FROM attempts a JOIN jobs j ON j.id = a.job_id "
                          "WHERE j.batch_id = %s AND a.status = 'LOST'", batch_id)
    report("batch of 1000 with kill -9", finished_at_kill=at_kill, lost_attempts=lost)


# A handler script run by shell.command (in its sandbox, as the unprivileged CRONPLANE_SHELL_USER when
# the worker is root): adds 100 children to its own batch with its token, tries the token where it
# must be refused, and prints what it saw (and the token) for the test: the sandbox lets it write
# nowhere but its private directory.
FAN_OUT = r"""
set -u
auth="Authorization: Bearer $CRONPLANE_JOB_TOKEN"
jobs='{"handler":"noop"}'
i=1; while [ $i -lt 100 ]; do jobs="$jobs,{\"handler\":\"noop\"}"; i=$((i+1)); done
call() { curl -s -o /dev/null -w '%{http_code}' -H "$auth" -H 'Content-Type: application/json' "$@"; }
status=$(curl -s -o children.json -w '%{http_code}' -H "$auth" \
  -H 'Content-Type: application/json' -X POST -d "{\"jobs\":[$jobs]}" \
  "$CRONPLANE_API_URL/batches/$CRONPLANE_BATCH_ID/jobs")
list=$(call "$CRONPLANE_API_URL/jobs")
create=$(call -X POST -d '{"handler":"noop"}' "$CRONPLANE_API_URL/jobs")
batch=$(call -X POST -d '{"jobs":[{"handler":"noop"}]}' "$CRONPLANE_API_URL/batches")
other=$(call -X POST -d '{"jobs":[{"handler":"noop"}]}' "$CRONPLANE_API_URL/batches/$1/jobs")
printf '{"token":"%s","status":%s,"children":%s,"refused":{"list jobs":%s,"create job":%s,"new batch":%s,"other batch":%s}}\n' \
  "$CRONPLANE_JOB_TOKEN" "$status" "$(cat children.json)" "$list" "$create" "$batch" "$other"
[ "$status" = 202 ]
"""
SH = "/bin/sh"


def _serve_with_public_url(database_url: str, data_dir: Path) -> Serve:
    """``cronplane serve`` (with workers) whose CRONPLANE_PUBLIC_URL is its own address, so a
    shell job finds the API in CRONPLANE_API_URL."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    serve = Serve(database_url, data_dir, CRONPLANE_EXECUTION="on", CRONPLANE_PORT=str(port),
                  CRONPLANE_PUBLIC_URL=base, CRONPLANE_SHELL_COMMANDS=SH,
                  CRONPLANE_ADMIN_USERNAME="root", CRONPLANE_ADMIN_PASSWORD=ADMIN_PASSWORD)
    serve.port, serve.base = port, base
    return serve


def test_a_running_shell_job_fans_out_100_children_into_its_batch_with_its_token(
        make_database, tmp_path: Path) -> None:
    serve = _serve_with_public_url(make_database(), tmp_path / "data")
    try:
        serve.wait_ready()
        token = admin_token(serve, "root", ADMIN_PASSWORD, "fan-out")
        auth = {"Authorization": f"Bearer {token}"}
        other = requests.post(serve.base + "/api/v1/batches", headers=auth, timeout=30,
                              json={"jobs": [{"handler": "sleep", "payload": {"seconds": 60}}]})
        assert other.status_code == 202, other.text
        created = requests.post(serve.base + "/api/v1/batches", headers=auth, timeout=30, json={
            "jobs": [{"handler": "shell.command", "payload": {"argv": [
                SH, "-c", FAN_OUT, "fan-out", str(other.json()["id"])]}}],
            "on_complete": {"handler": "noop"}})
        assert created.status_code == 202, created.text
        batch = created.json()
        callback = batch["callback_job_id"]

        def callback_status() -> str:
            return str(requests.get(f"{serve.base}/api/v1/jobs/{callback}", headers=auth,
                                    timeout=10).json()["status"])

        wait_until(lambda: callback_status() == "SUCCEEDED", 120,
                   lambda: f"callback {callback} {callback_status()}; {serve.output()[-2000:]}")
        shell_job = requests.get(f"{serve.base}/api/v1/jobs/{batch['job_ids'][0]}",
                                 headers=auth, timeout=10).json()
        result = json.loads(shell_job["result"]["stdout"])
        assert result["status"] == 202 and len(result["children"]["job_ids"]) == 100, result
        assert result["refused"] == {"list jobs": 401, "create job": 401, "new batch": 401,
                                     "other batch": 403}, result["refused"]
        shown = requests.get(f"{serve.base}/api/v1/batches/{batch['id']}", headers=auth,
                             timeout=10).json()
        assert (shown["total"], shown["succeeded"], shown["state"]) == (101, 101, "succeeded")
        callback_job = requests.get(f"{serve.base}/api/v1/jobs/{callback}", headers=auth,
                                    timeout=10).json()
        assert callback_job["payload"]["batch"] == {"id": batch["id"], "succeeded": 101,
                                                    "dead": 0, "cancelled": 0}
        assert len(callback_job["attempts"]) == 1
        # The attempt has ended: its token is refused now, even for its own batch.
        late = requests.post(f"{serve.base}/api/v1/batches/{batch['id']}/jobs", timeout=10,
                             headers={"Authorization": f"Bearer {result['token']}"},
                             json={"jobs": [{"handler": "noop"}]})
        assert late.status_code == 401, late.text
        requests.post(f"{serve.base}/api/v1/jobs/{other.json()['job_ids'][0]}/cancel",
                      headers=auth, timeout=10)
    finally:
        serve.stop()

