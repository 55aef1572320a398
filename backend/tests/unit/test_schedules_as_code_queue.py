"""Schedules as code know `queue`: a file may name it (default `default`), a changed queue is an
update, and export writes it only when it is not the default, so apply(export) changes nothing."""

from __future__ import annotations

import pytest
import yaml

from cronplane.client import schedules_as_code as sac

FILE = """
schedules:
  - name: mail
    handler: noop
    cron: "0 * * * * *"
    queue: mail
  - name: plain
    handler: noop
    cron: "0 * * * * *"
"""


def _server(name: str, queue: str, **extra) -> dict:
    return {"id": hash(name) % 1000, "version": 1, "project": "default", "deleted_at": None,
            **sac.DEFAULTS, "name": name, "handler": "noop", "cron": "0 * * * * *",
            "queue": queue, **extra}


def test_a_file_names_a_queue_and_the_default_is_default() -> None:
    desired = sac.load(FILE, "f.yaml", None)
    assert {s["name"]: s["queue"] for s in desired.schedules} == {"mail": "mail",
                                                                  "plain": "default"}
    [create, _] = sac.plan(desired, [], prune=False)
    assert create.kind == "create" and create.body["queue"] == "mail"


def test_a_changed_queue_is_an_update_and_an_equal_one_is_nothing() -> None:
    desired = sac.load(FILE, "f.yaml", None)
    same = [_server("mail", "mail"), _server("plain", "default")]
    assert sac.plan(desired, same, prune=False) == []
    moved = [_server("mail", "default"), _server("plain", "default")]
    [change] = sac.plan(desired, moved, prune=False)
    assert change.kind == "update" and change.fields == {"queue": ("default", "mail")}
    assert "    queue: \"default\" → \"mail\"" in sac.render([change])


def test_export_writes_a_non_default_queue_and_reads_back_unchanged() -> None:
    current = [_server("mail", "mail"), _server("plain", "default")]
    exported = yaml.safe_load(sac.export(current, None))
    by_name = {s["name"]: s for s in exported["schedules"]}
    assert by_name["mail"]["queue"] == "mail" and "queue" not in by_name["plain"]
    assert sac.plan(sac.load(sac.export(current, None), "e.yaml", None), current,
                    prune=True) == []


def test_an_unknown_field_is_still_refused() -> None:
    with pytest.raises(sac.FileError, match="unknown field"):
        sac.load("schedules:\n  - {name: x, handler: noop, cron: '* * * * * *', queues: q}\n",
                 "f.yaml", None)
