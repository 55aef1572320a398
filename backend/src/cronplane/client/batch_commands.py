"""``cronplane batches create -f FILE`` and ``cronplane batches show ID``: fan-out from a shell.

The file (YAML or JSON) is the body of ``POST /batches``::

    project: default            # optional; --project wins
    jobs:
      - {handler: noop}
      - {handler: sleep, payload: {seconds: 2}}
    on_complete: {handler: noop, run_when: finished}

Exit codes as every remote command (``cronplane.cli_output``); ``create --wait`` exits 0 only if
the batch ended ``succeeded``.
"""

from __future__ import annotations

import json
import time
from typing import Any, cast

import click
import yaml

from cronplane.cli_output import EXIT_REFUSED, EXIT_USAGE, fail, remote, render_detail
from cronplane.client.api import Cronplane
from cronplane.client.http import ApiClient
from cronplane.client.models import BatchCreate
from cronplane.domain.batches import BatchState

POLL = 0.5


@click.group()
def batches() -> None:
    """Batches (many jobs with a callback) on a running server."""


def _load(path: str) -> dict[str, Any]:
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    try:
        # JSON is read as JSON (exact numbers, no YAML surprises); anything else as YAML.
        document = json.loads(text) if path.endswith(".json") else yaml.safe_load(text)
    except (ValueError, yaml.YAMLError) as exc:
        fail(f"{path}: not valid {'JSON' if path.endswith('.json') else 'YAML'}: {exc}",
             EXIT_USAGE)
    if isinstance(document, list):
        document = {"jobs": document}
    if not isinstance(document, dict) or not isinstance(document.get("jobs"), list):
        fail(f"{path}: expected a mapping with a list `jobs` (or a list of jobs)", EXIT_USAGE)
    return cast(dict[str, Any], document)


def _summary(batch: dict[str, Any]) -> str:
    counts = ", ".join(f"{name} {batch[name]}" for name in (
        "waiting", "pending", "running", "succeeded", "dead", "cancelled") if batch.get(name))
    return f"batch #{batch['id']} {batch['state']}: {batch['total']} job(s)" + (
        f" ({counts})" if counts else "")


@batches.command("create")
@click.option("-f", "--file", "path", required=True,
              type=click.Path(dir_okay=False, exists=True),
              help="The batch: YAML or JSON, the body of POST /batches.")
@click.option("--project", default=None, help="Project slug (default: the file's, or default).")
@click.option("--wait", is_flag=True,
              help="Wait until every job finished; exit 0 only if the batch succeeded.")
@click.option("--wait-timeout", type=float, default=600.0, show_default=True)
@remote
def batches_create(api: ApiClient, *, path: str, project: str | None, wait: bool,
                   wait_timeout: float) -> Any:
    """Create a batch from FILE: all its jobs (and its callback) or nothing."""
    body = _load(path)
    if project is not None:
        body["project"] = project
    client = Cronplane.over(api)
    created = client.create_batch(cast(BatchCreate, body))
    callback = created["callback_job_id"]
    text = (f"created batch #{created['id']}: {len(created['job_ids'])} job(s)"
            + (f", callback job #{callback}" if callback is not None else ""))
    if not wait:
        return created, text
    deadline = time.monotonic() + wait_timeout
    batch = client.get_batch(created["id"])
    while batch["state"] == BatchState.RUNNING.value and time.monotonic() < deadline:
        time.sleep(POLL)
        batch = client.get_batch(created["id"])
    if batch["state"] == BatchState.RUNNING.value:
        fail(f"batch #{created['id']} still running after {wait_timeout:g} s", EXIT_REFUSED)
    return ({**created, "batch": batch}, _summary(cast(dict[str, Any], batch)),
            0 if batch["state"] == BatchState.SUCCEEDED.value else EXIT_REFUSED)


@batches.command("show")
@click.argument("batch_id", type=int)
@remote
def batches_show(api: ApiClient, batch_id: int) -> Any:
    """A batch's counts per status and its state."""
    batch = Cronplane.over(api).get_batch(batch_id)
    return batch, render_detail(cast(dict[str, Any], batch))
