"""Schedules as code: a YAML file is the desired state of a project's schedules.

``plan`` compares the file with what the server has, by schedule name (names are unique among live
schedules), and yields creates, updates and (with prune) deletes; ``apply`` sends them. A field the
file leaves out means the server's default, so deleting a line from the file resets that field,
and a second apply of the same file finds nothing to do. Cron expressions are compared in their
canonical form (five fields gain a leading ``0``), as the server stores them.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import yaml

from cronplane.client.http import ApiClient
from cronplane.domain.cron import CronError, CronExpression, validate_timezone
from cronplane.domain.roles import Role
from cronplane.domain.schedule_definition import DEFAULTS, FIELDS, REQUIRED

# What a file may say about a schedule (FIELDS, REQUIRED) and what it means when it says
# nothing: the server's own defaults for a new schedule (domain/schedule_definition.py).
# An alert the file leaves out is off; the server answers with every rule, so both sides are
# compared with the missing rules filled in.
ALERT_DEFAULTS: dict[str, Any] = DEFAULTS["alerts"]
DEFAULT_PROJECT = "default"


class FileError(ValueError):
    """The file is not a valid schedules file; ``str()`` names the place."""


@dataclass(frozen=True)
class Desired:
    project: str
    schedules: list[dict[str, Any]]


@dataclass
class Change:
    kind: str  # create | update | delete
    name: str
    fields: dict[str, tuple[Any, Any]] = field(default_factory=dict)  # name → (now, wanted)
    schedule_id: int | None = None
    version: int | None = None
    body: dict[str, Any] = field(default_factory=dict)
    # Live schedule ids by name in the project (shared by a plan's changes): ``upstream`` names
    # schedules in a file and ids on the server; execute resolves names made by its own creates.
    known: dict[str, int] = field(default_factory=dict)


def canonical_cron(text: str) -> str:
    try:
        return CronExpression.parse(text).canonical
    except CronError:
        return " ".join(text.split())  # the server names the problem when it refuses it


def load(text: str, source: str, project: str | None) -> Desired:
    try:
        document = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise FileError(f"{source}: not valid YAML: {exc}") from None
    if document is None:
        document = {}
    if not isinstance(document, dict):
        raise FileError(f"{source}: expected a mapping with a `schedules` list")
    unknown = set(document) - {"project", "schedules"}
    if unknown:
        raise FileError(f"{source}: unknown top-level key(s) {', '.join(sorted(unknown))}")
    in_file = document.get("project")
    if project and in_file and project != in_file:
        raise FileError(f"{source}: the file is for project {in_file!r}, not {project!r}")
    chosen = project or in_file or DEFAULT_PROJECT
    items = document.get("schedules") or []
    if not isinstance(items, list):
        raise FileError(f"{source}: `schedules` must be a list")
    seen: set[str] = set()
    schedules = []
    for index, item in enumerate(items):
        where = f"{source}: schedules[{index}]"
        if not isinstance(item, dict):
            raise FileError(f"{where}: expected a mapping")
        extra = set(item) - set(FIELDS)
        if extra:
            raise FileError(f"{where}: unknown field(s) {', '.join(sorted(extra))}")
        missing = [name for name in REQUIRED if not item.get(name)]
        if missing:
            raise FileError(f"{where}: missing {', '.join(missing)}")
        name = str(item["name"])
        if name in seen:
            raise FileError(f"{where}: the name {name!r} is used twice")
        seen.add(name)
        _check_timing(item, where)
        _check_upstream(item.get("upstream"), where)
        schedules.append({**DEFAULTS, **item, "name": name})
    return Desired(chosen, schedules)


def role_refusal(client: ApiClient, project: str) -> str | None:
    """Why the caller may not change the project's schedules (None: it may). The role is the
    caller's effective one there, as ``GET /projects`` gives it (a project token's included)."""
    roles = {p["slug"]: p.get("role") for p in client.get_all("/projects")}
    if project not in roles:
        return f"project {project!r} does not exist or is not one of yours"
    have = roles[project]
    if have is None or not Role.parse(str(have)).allows(Role.ADMIN):
        return (f"changing schedules needs the ADMIN role in project {project!r}; "
                f"you are {have} there")
    return None


def _check_timing(item: dict[str, Any], where: str) -> None:
    """The cron and zone checked here, by the rules the server applies (domain.cron): a dry run
    that passed a bad cron let the real run fail half-way, its earlier changes applied (review
    2026-12-05, step 10)."""
    try:
        CronExpression.parse(str(item["cron"]))
    except CronError as exc:
        raise FileError(f"{where}: cron: {exc}") from None
    try:
        validate_timezone(str(item.get("timezone") or DEFAULTS.get("timezone") or "UTC"))
    except CronError as exc:
        raise FileError(f"{where}: timezone: {exc}") from None


def _check_upstream(value: Any, where: str) -> None:
    if value is None:
        return
    if not isinstance(value, list) or not all(
            isinstance(u, dict) and isinstance(u.get("schedule"), str) and u["schedule"]
            and not set(u) - {"schedule", "run_when", "wait_seconds"} for u in value):
        raise FileError(f"{where}: upstream must be a list of {{schedule: <name>, run_when?, "
                        f"wait_seconds?}}")


def _upstream_by_name(value: Any, names: dict[int, str]) -> list[dict[str, Any]]:
    """``upstream`` as a file says it: schedules by name, rules only when not the default."""
    out = []
    for u in value or []:
        ref = u.get("schedule")
        item: dict[str, Any] = {"schedule": names.get(ref, ref) if isinstance(ref, int) else ref}
        if u.get("run_when") not in (None, "succeeded"):
            item["run_when"] = u["run_when"]
        if u.get("wait_seconds") is not None:
            item["wait_seconds"] = u["wait_seconds"]
        out.append(item)
    return out


def _comparable(key: str, value: Any) -> Any:
    if key == "cron" and isinstance(value, str):
        return canonical_cron(value)
    if key == "alerts" and isinstance(value, dict | None):
        return {**ALERT_DEFAULTS, **(value or {})}
    return value


def _exported(key: str, value: Any) -> Any:
    """A field as a file would say it: alerts name only the rules that are on."""
    if key == "alerts" and isinstance(value, dict):
        return {rule: v for rule, v in value.items() if ALERT_DEFAULTS.get(rule, object()) != v}
    return value


def plan(desired: Desired, current: Iterable[dict[str, Any]], *, prune: bool) -> list[Change]:
    live = {s["name"]: s for s in current
            if s.get("deleted_at") is None and s.get("project", DEFAULT_PROJECT) == desired.project}
    known = {name: int(s["id"]) for name, s in live.items()}
    names = {i: name for name, i in known.items()}
    live = {name: {**s, "upstream": _upstream_by_name(s.get("upstream"), names)}
            for name, s in live.items()}
    changes: list[Change] = []
    for in_file in desired.schedules:
        wanted = {**in_file, "upstream": _upstream_by_name(in_file.get("upstream"), names)}
        name = wanted["name"]
        existing = live.pop(name, None)
        if existing is None:
            body = dict(wanted)
            if desired.project != DEFAULT_PROJECT:
                # The server's default; left out so the body suits servers without projects too.
                body["project"] = desired.project
            changes.append(Change("create", name, body=body))
            continue
        differing = {key: (existing.get(key), value) for key, value in wanted.items()
                     if key != "name"
                     and _comparable(key, existing.get(key)) != _comparable(key, value)}
        if differing:
            changes.append(Change("update", name, fields=differing, schedule_id=existing["id"],
                                  version=existing.get("version"),
                                  body={k: v[1] for k, v in differing.items()}))
    if prune:
        changes.extend(Change("delete", name, schedule_id=s["id"])
                       for name, s in sorted(live.items()))
    for change in changes:
        change.known = known
    return changes


def _show(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def render(changes: list[Change]) -> list[str]:
    lines = []
    for change in changes:
        if change.kind == "create":
            lines.append(f"+ create {change.name}: cron {_show(change.body['cron'])}, "
                         f"handler {change.body['handler']}")
        elif change.kind == "update":
            lines.append(f"~ update {change.name}")
            lines.extend(f"    {key}: {_show(now)} → {_show(wanted)}"
                         for key, (now, wanted) in change.fields.items())
        else:
            lines.append(f"- delete {change.name}")
    return lines


def execute(client: ApiClient, changes: list[Change]) -> None:
    """Creates and updates first without ``upstream``, then ``upstream`` (names resolved to ids,
    including the schedules just created), so a file may name an upstream it creates."""
    known: dict[str, int] = dict(changes[0].known) if changes else {}
    chained: list[tuple[Change, int, int | None]] = []
    for change in changes:
        body = {k: v for k, v in change.body.items() if k != "upstream"}
        if change.kind == "create":
            made = client.request("POST", "/schedules", body).body
            known[change.name] = int(made["id"])
            if change.body.get("upstream"):
                chained.append((change, int(made["id"]), made.get("version")))
        elif change.kind == "update":
            version = change.version
            if body:
                # If-Match: a schedule edited since we read it is refused (412), not overwritten.
                version = client.request("PATCH", f"/schedules/{change.schedule_id}", body,
                                         headers={"If-Match": f'"{change.version}"'}
                                         ).body.get("version")
            if "upstream" in change.body:
                assert change.schedule_id is not None
                chained.append((change, change.schedule_id, version))
        else:
            client.request("DELETE", f"/schedules/{change.schedule_id}")
    for change, schedule_id, version in chained:
        upstream = [{**u, "schedule": known.get(u["schedule"], u["schedule"])}
                    for u in change.body["upstream"]]
        client.request("PATCH", f"/schedules/{schedule_id}", {"upstream": upstream},
                       headers={"If-Match": f'"{version}"'} if version is not None else None)


def export(current: Iterable[dict[str, Any]], project: str | None, fmt: str = "yaml") -> str:
    """The same format ``load`` reads (YAML, or the same document as JSON, which YAML reads
    too); fields equal to the defaults are left out."""
    document = export_document(current, project)
    if fmt == "json":
        return json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    return str(yaml.safe_dump(document, sort_keys=False, allow_unicode=True,
                              default_flow_style=False))


def export_document(current: Iterable[dict[str, Any]], project: str | None) -> dict[str, Any]:
    """``{project?, schedules: [...]}`` as ``export`` writes it."""
    wanted = project or DEFAULT_PROJECT
    current = list(current)
    names = {int(s["id"]): s["name"] for s in current if s.get("deleted_at") is None}
    schedules = []
    for raw in sorted(current, key=lambda s: s["name"]):
        s = {**raw, "upstream": _upstream_by_name(raw["upstream"], names)} if "upstream" in raw \
            else raw
        if s.get("deleted_at") is not None or s.get("project", DEFAULT_PROJECT) != wanted:
            continue
        item = {key: _exported(key, s[key]) for key in FIELDS
                if key in s and not (key in DEFAULTS
                                     and _comparable(key, s[key]) == _comparable(key, DEFAULTS[key]))}
        schedules.append(item)
    document: dict[str, Any] = {}
    if project:
        document["project"] = project
    document["schedules"] = schedules
    return document


def change_json(change: Change) -> dict[str, Any]:
    """A planned change as ``apply --output json`` prints it."""
    out: dict[str, Any] = {"kind": change.kind, "name": change.name,
                           "schedule_id": change.schedule_id}
    if change.kind == "update":
        out["changes"] = {key: [now, wanted] for key, (now, wanted) in change.fields.items()}
    if change.kind == "create":
        out["schedule"] = change.body
    return out
