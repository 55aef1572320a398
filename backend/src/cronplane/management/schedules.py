"""Schedule use cases (the task registry): create, read, list, edit, pause, resume, delete. Runs a
person asks for (trigger, backfill) are in schedule_runs.py, the history (versions, rollback) in
schedule_versions.py.

Each public function is one transaction with its audit event, and NOTIFYs the schedules channel
when it changes what the leader fires, so edits take effect at the scheduler's next tick (within
a second). Decisions:

* ``next_run_at`` is always computed from the database clock, strictly after the transaction's
  ``cronplane_now()`` (the instant ``created_at``/``updated_at`` record): creating, editing cron or time
  zone, resuming. Resume does not catch up fires missed while paused.
* A deleted schedule stays readable (``get``, ``list(include_deleted=True)``) but every change to
  it (update, pause, resume, trigger, backfill) is 409 Conflict: it exists, its state forbids the change.
  Deleting it again is a no-op. Its name is free for a new live schedule.
* Pausing a paused schedule (or resuming a running one) changes nothing: no version bump, no
  audit event. So does a PATCH whose values equal the current ones.
* ``version`` counts definition changes (edit, pause, resume, delete); the scheduler's progress
  (``next_run_at``, ``last_run_at``, counters) never bumps it, so If-Match only fails on a real
  concurrent edit.
* A fire the leader wrote ahead of its due time (docs/adr/0043-fires-written-ahead.md) is
  provisional until it is due: every change (edit, rollback, pause, delete) withdraws the
  schedule's fires not yet due in its own transaction and ``next_run_at`` restarts from now, so
  the change takes effect on the next fire, as when fires are made at their due time.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import and_, false, func, or_, select, tuple_
from sqlalchemy import delete as sql_delete
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from cronplane.domain.cron import CronError, CronExpression, validate_timezone
from cronplane.domain.firing import Misfire, Overlap
from cronplane.domain.health import validate_alerts
from cronplane.domain.names import CHANNEL_NAME, QUEUE_NAME
from cronplane.domain.roles import Role
from cronplane.domain.schedule_definition import (
    DEFAULTS,
    FIELDS,
    MAX_DESCRIPTION,
    MAX_NAME,
    MAX_NOTIFY,
)
from cronplane.domain.states import JobStatus, Trigger
from cronplane.management import audit, notifications, projects, queues, schedule_chains, scope
from cronplane.management.actor import Actor
from cronplane.management.context import ManagementContext
from cronplane.management.errors import Conflict, InvalidInput, NotFound, PreconditionFailed
from cronplane.management.jobs import (
    JobRequest,
    _resolve,
    require_handler_rights,
)
from cronplane.management.pagination import (
    Page,
    check_limit,
    decode_cursor,
    page_in_order,
    sorted_key,
)
from cronplane.storage import notify, schedule_insert
from cronplane.storage.models import Job, Schedule, ScheduleHealth, ScheduleVersion
from cronplane.storage.notify import SCHEDULES
from cronplane.storage.search.schedules import search_condition

MAX_PAUSE_REASON = 1000
_LIVE_NAME_INDEX = "uq_schedules_live_name"


# -- validation ----------------------------------------------------------------------------------
def _validated(data: Mapping[str, Any], settings: Any) -> dict[str, Any]:
    """The full definition, checked field by field; every problem at once, keyed by field."""
    unknown = sorted(set(data) - set(FIELDS))
    if unknown:
        raise InvalidInput(f"unknown field {unknown[0]!r}",
                           errors={name: ["Unknown field."] for name in unknown})
    values = {**DEFAULTS, **data}
    errors: dict[str, list[str]] = {}
    name = values.get("name")
    if not isinstance(name, str) or not 1 <= len(name.strip()) <= MAX_NAME:
        errors["name"] = [f"Must be 1 to {MAX_NAME} characters."]
    else:
        values["name"] = name.strip()
    if not isinstance(values["description"], str) or len(values["description"]) > MAX_DESCRIPTION:
        errors["description"] = [f"Must be at most {MAX_DESCRIPTION} characters."]
    try:
        values["cron"] = CronExpression.parse(str(values.get("cron") or "")).canonical
    except CronError as exc:
        errors["cron"] = [str(exc)]
    try:
        validate_timezone(str(values["timezone"]))
    except CronError as exc:
        errors["timezone"] = [str(exc)]
    if not isinstance(values["paused"], bool):
        errors["paused"] = ["Must be a boolean."]
    if values["overlap"] not in set(Overlap):
        errors["overlap"] = [f"Must be one of {', '.join(Overlap)}."]
    if values["misfire"] not in set(Misfire):
        errors["misfire"] = [f"Must be one of {', '.join(Misfire)}."]
    if not QUEUE_NAME.matches(values["queue"]):
        errors["queue"] = [QUEUE_NAME.message]
    alerts, alert_errors = validate_alerts(values["alerts"])
    errors.update(alert_errors)
    values["alerts"] = alerts
    notify = values["notify"]
    if (not isinstance(notify, list) or len(notify) > MAX_NOTIFY
            or not all(CHANNEL_NAME.matches(n) for n in notify)):
        errors["notify"] = [f"Must be at most {MAX_NOTIFY} channel names ({CHANNEL_NAME.shape})."]
    else:
        values["notify"] = list(dict.fromkeys(notify))
    upstream, upstream_problems = schedule_chains.normalised(values["upstream"])
    if upstream_problems:
        errors["upstream"] = upstream_problems
    values["upstream"] = upstream
    # Handler, payload schema, priority, attempts and timeout: exactly the job queue's rules, so
    # a schedule can never be saved that would enqueue a job the queue rejects.
    try:
        _resolve(JobRequest(handler=str(values.get("handler") or ""), payload=values["payload"],
                            priority=values["priority"], max_attempts=values["max_attempts"],
                            timeout_seconds=values["timeout_seconds"]), settings)
    except InvalidInput as exc:
        for field, messages in (exc.errors or {"handler": [exc.detail]}).items():
            errors.setdefault(field, messages)
    if errors:
        field = next(iter(errors))
        raise InvalidInput(f"invalid {field}: {errors[field][0]}", errors=errors)
    cleaned = {name: values[name] for name in FIELDS}
    cleaned["payload"] = dict(cleaned["payload"])  # never share the defaults' dict
    cleaned["notify"] = list(cleaned["notify"])
    cleaned["upstream"] = [dict(u) for u in cleaned["upstream"]]
    return cleaned


def _next_run(session: Session, cron: str, timezone: str) -> datetime:
    # The transaction's cronplane_now(), the instant created_at/updated_at hold: the fire ledger and the
    # fire check expect every fire time after it, so a later clock (cronplane_clock_now() after a
    # wait for the project lock) would leave the fire times in between without a job (#16).
    now = session.execute(select(func.cronplane_now())).scalar_one()
    return CronExpression.parse(cron).next_after(now, validate_timezone(timezone))


def snapshot(schedule: Schedule) -> dict[str, Any]:
    """The definition as JSON, for audit details (before/after)."""
    data: dict[str, Any] = {name: getattr(schedule, name) for name in FIELDS}
    data["version"] = schedule.version
    data["next_run_at"] = schedule.next_run_at.isoformat() if schedule.next_run_at else None
    return data


# -- helpers ---------------------------------------------------------------------------------------
def not_found(schedule_id: int) -> str:
    return f"schedule {schedule_id} does not exist"


def _locked(session: Session, actor: Actor, schedule_id: int, role: Role = Role.ADMIN) -> Schedule:
    """The schedule, locked, if the caller has ``role`` in its project (else 404/403)."""
    schedule = session.execute(select(Schedule).where(Schedule.id == schedule_id)
                               .with_for_update()).scalar_one_or_none()
    if schedule is None:
        raise NotFound(not_found(schedule_id))
    scope.require(actor, schedule.project, role, missing=not_found(schedule_id))
    return schedule


def require_live(schedule: Schedule, verb: str) -> None:
    if schedule.deleted_at is not None:
        raise Conflict(f"schedule {schedule.id} is deleted and cannot be {verb}")


def _flush_unique_name(session: Session, name: str) -> None:
    try:
        with session.begin_nested():
            session.flush()
    except IntegrityError as exc:
        if _LIVE_NAME_INDEX in str(exc.orig):
            raise _duplicate(name) from None
        raise


def _duplicate(name: str) -> Conflict:
    return Conflict(f"a live schedule named {name!r} already exists",
                    errors={"name": ["A live schedule with this name already exists."]})


def _changed(session: Session) -> None:
    notify.send(session, SCHEDULES)


def _withdraw_written_ahead(session: Session, schedule: Schedule) -> datetime:
    """Delete the schedule's fires written ahead that are not due yet (never started: PENDING,
    no attempt) and restart ``next_run_at`` from now if the leader had moved it past them;
    returns the transaction's now. The schedule row is locked (``_locked``), so the leader's
    fire transaction either committed them before (and they are deleted here) or skips the
    row until this commits. Fires already due stay: they are no longer provisional."""
    now: datetime = session.execute(select(func.cronplane_now())).scalar_one()
    session.execute(sql_delete(Job).where(
        Job.schedule_id == schedule.id, Job.status == JobStatus.PENDING, Job.attempt_count == 0,
        Job.trigger == Trigger.SCHEDULE, Job.fire_time > now))
    if schedule.next_run_at is not None and schedule.next_run_at > now:
        schedule.next_run_at = _next_run(session, schedule.cron, schedule.timezone)
    if schedule.last_run_at is not None and schedule.last_run_at > now:
        # The withdrawn fire was the one written ahead: the leader writes the next one once
        # last_run_at has come (schedules_due), so it goes back to the last fire reached.
        schedule.last_run_at = session.execute(
            select(func.max(Job.fire_time)).where(
                Job.schedule_id == schedule.id, Job.trigger == Trigger.SCHEDULE,
                Job.fire_time <= now)).scalar_one()
    return now


def _touch(session: Session, schedule: Schedule) -> None:
    schedule.version += 1
    schedule.updated_at = session.execute(select(func.cronplane_now())).scalar_one()


def definition(schedule: Schedule) -> dict[str, Any]:
    """The editable definition: what a version records and a rollback puts back."""
    return {name: getattr(schedule, name) for name in FIELDS}


def _record_version(session: Session, schedule: Schedule, actor: Actor,
                    before: dict[str, Any] | None,
                    also: dict[str, list[Any]] | None = None) -> None:
    """Append the schedule's current version with the fields that changed from ``before``
    (``None``: it was just created, every field is new) and the ``also`` changes that are not
    part of the definition (``deleted``)."""
    after = definition(schedule)
    changes = {name: [None if before is None else before.get(name), after[name]]
               for name in FIELDS if before is None or before.get(name) != after[name]}
    changes.update(also or {})
    session.add(ScheduleVersion(schedule_id=schedule.id, version=schedule.version,
                                actor=actor.username, definition=after, changes=changes))
    session.flush()


def _finish(session: Session, schedule: Schedule) -> Schedule:
    session.flush()
    session.refresh(schedule)
    return schedule


# -- use cases -------------------------------------------------------------------------------------
def create(ctx: ManagementContext, actor: Actor, data: Mapping[str, Any]) -> Schedule:
    """``data["project"]`` (default ``default``) needs ADMIN there; its ``max_schedules`` quota
    is checked under the project's lock, and a queue it does not have yet against the cap on
    queues under the project's naming lock, so concurrent creates cannot overshoot either.

    The row, version 1, the audit event and the NOTIFY are one statement
    (storage/schedule_insert.py). A schedule with no ``notify`` or ``upstream``, on a queue its
    project has, in a project without a quota has nothing to check under a lock: that statement
    runs alone in autocommit after one read of the clock (two round trips; the audit chain's lock
    is never held across a round trip to this process). The rest take the checked path: one
    transaction, the checks' locks, then the same statement."""
    fields = dict(data)
    project = scope.writable(actor, fields.pop("project", None), Role.ADMIN)
    values = _validated(fields, ctx.settings)
    require_handler_rights(actor, values["handler"])
    if not values["notify"] and not values["upstream"]:
        with ctx.db.autocommit() as conn:
            now = schedule_insert.admit(conn, project, values["queue"])
            if now is not None:
                return _created(schedule_insert.insert(conn, _new(actor, project, values, now)),
                                values["name"])
    with ctx.db.transaction() as session:
        projects.check_schedules_quota(session, project)
        queues.admit(session, ctx.settings, project, [values["queue"]])
        notifications.check_notify(session, project, values["notify"])
        schedule_chains.check(session, project, None, values["upstream"])
        # The transaction's cronplane_now(): created_at, and the instant the first fire follows.
        now = session.execute(select(func.cronplane_now())).scalar_one()
        return _created(schedule_insert.insert_in_session(
            session, _new(actor, project, values, now)), values["name"])


def _new(actor: Actor, project: str, values: dict[str, Any],
         now: datetime) -> schedule_insert.NewSchedule:
    next_run = CronExpression.parse(values["cron"]).next_after(
        now, validate_timezone(values["timezone"]))
    columns = {**values, "project": project, "created_by": actor.username,
               "next_run_at": next_run, "created_at": now, "version": 1}
    after = {**values, "version": 1, "next_run_at": next_run.isoformat()}
    return schedule_insert.NewSchedule(
        columns=columns, definition=dict(values),
        changes={name: [None, values[name]] for name in FIELDS}, actor=actor.username,
        actor_role=audit.actor_role(actor, project), details=audit.with_token(actor, {"after": after}),
        request_id=actor.request_id, ip=actor.ip)


def _created(row: dict[str, Any] | None, name: str) -> Schedule:
    """The new schedule as the API shows it, from the statement's row: nothing downstream of
    it yet, no health evaluated, no failed run."""
    if row is None:
        raise _duplicate(name)
    del row["written"]
    schedule = Schedule(**row)
    schedule.downstream = []
    schedule.last_error = None
    schedule.health_row = None
    # Nothing is written ahead for a schedule that did not exist a moment ago.
    schedule.next_run_shown = schedule.next_run_at
    schedule.last_run_shown = schedule.last_run_at
    return schedule


def get(ctx: ManagementContext, actor: Actor, schedule_id: int) -> Schedule:
    with ctx.db.read_session() as session:
        schedule = session.get(Schedule, schedule_id)
        if schedule is None:
            raise NotFound(not_found(schedule_id))
        scope.require(actor, schedule.project, Role.VIEWER, missing=not_found(schedule_id))
        session.expunge(schedule)
        return schedule


SCHEDULE_SORTS = ("-id", "id", "name", "-name", "next_run_at", "-next_run_at",
                  "last_run_at", "-last_run_at")
"""What ``GET /schedules?sort=`` takes: a column, ``-`` for descending, ties by id in the same
direction. A schedule without a next or last run (paused, never ran) comes last either way."""

# Where a missing time sorts: after every real one, ascending or descending (a keyset needs a
# key that is never NULL; these are outside any time a schedule can have).
_LATEST = datetime(9999, 12, 31, tzinfo=UTC)
_EARLIEST = datetime(1, 1, 2, tzinfo=UTC)


def _sort_key(sort: str) -> Any:
    column = sort.lstrip("-")
    if column == "id":
        return Schedule.id
    if column == "name":
        return Schedule.name
    missing = _EARLIEST if sort.startswith("-") else _LATEST
    return func.coalesce(getattr(Schedule, column), missing)


def list_schedules(ctx: ManagementContext, actor: Actor, *, q: str | None = None,
                   paused: bool | None = None, include_deleted: bool = False,
                   limit: int | None = None, cursor: str | None = None,
                   project: list[str] | None = None,
                   health: list[str] | None = None,
                   created: tuple[datetime | None, datetime | None] = (None, None),
                   sort: str = "-id") -> Page[Schedule]:
    """Newest first (or in ``sort`` order, one of ``SCHEDULE_SORTS``), keyset by (key, id), in
    the caller's projects (``project`` narrows them); ``health`` keeps the schedules in one of
    those health states (as ``Schedule.health`` reads them: a paused schedule is ``paused``
    whatever was last evaluated). ``q`` is read as on the jobs list
    (``storage.search.schedules``): ``#6``, ``6`` and word prefixes; ``created`` is an open
    (after, before) window on ``created_at``. Each failing schedule comes with the headline of
    its last failed run's error (``Schedule.last_error``)."""
    size = check_limit(limit)
    if sort not in SCHEDULE_SORTS:
        raise InvalidInput("sort is not valid",
                           errors={"sort": [f"Must be one of: {', '.join(SCHEDULE_SORTS)}."]})
    query = _matching(actor, q=q, paused=paused, include_deleted=include_deleted,
                      project=project, health=health, created=created)
    descending = sort.startswith("-")
    key = _sort_key(sort)
    if sort == "-id":
        after = decode_cursor(cursor)
        if after is not None:
            query = query.where(Schedule.id < after["id"])
    else:
        last = sorted_key(cursor, sort, ("key",))
        if last is not None:
            value = _cursor_value(last, sort)
            if sort.lstrip("-") == "id":
                query = query.where(Schedule.id < last["id"] if descending
                                    else Schedule.id > last["id"])
            elif descending:
                query = query.where(tuple_(key, Schedule.id) < tuple_(value, last["id"]))
            else:
                query = query.where(tuple_(key, Schedule.id) > tuple_(value, last["id"]))
    order = [key] if sort.lstrip("-") == "id" else [key, Schedule.id]
    query = query.order_by(*(k.desc() if descending else k.asc() for k in order)).limit(size + 1)
    with ctx.db.read_session() as session:
        rows = list(session.execute(query).scalars())
        session.expunge_all()
    return page_in_order(rows, size, sort, lambda tail: {"key": _key_value(tail, sort)})


def _key_value(tail: Schedule, sort: str) -> Any:
    """The cursor's ``key``: the row's sort value, a missing time as the end it sorts at."""
    column = sort.lstrip("-")
    value = getattr(tail, column)
    if column.endswith("_at"):
        value = (value if value is not None
                 else (_EARLIEST if sort.startswith("-") else _LATEST)).isoformat()
    return value


def _cursor_value(key: dict[str, Any], sort: str) -> Any:
    """The last row's sort value from a cursor made by the same ``sort`` (``sorted_key``)."""
    column = sort.lstrip("-")
    value = key["key"]
    if column == "id":
        return value
    if column == "name":
        if not isinstance(value, str):
            raise InvalidInput("cursor is not valid", errors={"cursor": ["Not a valid cursor."]})
        return value
    try:
        at = datetime.fromisoformat(value) if isinstance(value, str) else None
    except ValueError:
        at = None
    if at is None or at.tzinfo is None:
        raise InvalidInput("cursor is not valid", errors={"cursor": ["Not a valid cursor."]})
    return at


COUNT_CAP = 10_000
"""The schedules count stops here: "more than 10,000" is as useful to a pager as the exact
figure, and the count stays one bounded index walk however many there are (as GET /jobs/count)."""


def count_schedules(ctx: ManagementContext, actor: Actor, *, q: str | None = None,
                    paused: bool | None = None, include_deleted: bool = False,
                    project: list[str] | None = None,
                    health: list[str] | None = None,
                    created: tuple[datetime | None, datetime | None] = (None, None)) -> int:
    """How many schedules ``list_schedules`` with these filters pages through, up to
    ``COUNT_CAP + 1`` (enough to say "more than COUNT_CAP")."""
    inner = _matching(actor, q=q, paused=paused, include_deleted=include_deleted,
                      project=project, health=health, created=created).limit(COUNT_CAP + 1).subquery()
    with ctx.db.read_session() as session:
        return int(session.execute(select(func.count()).select_from(inner)).scalar_one())


def _matching(actor: Actor, *, q: str | None, paused: bool | None, include_deleted: bool,
              project: list[str] | None, health: list[str] | None,
              created: tuple[datetime | None, datetime | None]) -> Any:
    """The schedules the list filters keep, one query for the page and its count."""
    query = scope.restrict(select(Schedule), Schedule.project, actor, project)
    if not include_deleted:
        query = query.where(Schedule.deleted_at.is_(None))
    if paused is not None:
        query = query.where(Schedule.paused.is_(paused))
    if health:
        query = query.where(_health_in(set(health)))
    if q is not None and q.strip():
        query = query.where(search_condition(q))
    after, before = created
    if after is not None:
        query = query.where(Schedule.created_at > after)
    if before is not None:
        query = query.where(Schedule.created_at < before)
    return query


def _health_in(states: set[str]) -> Any:
    stored = select(ScheduleHealth.state).where(
        ScheduleHealth.schedule_id == Schedule.id).scalar_subquery()
    evaluated = [s for s in states if s not in ("ok", "paused")]
    conditions = [and_(Schedule.paused.is_(False), stored.in_(evaluated))] if evaluated else []
    if "paused" in states:
        conditions.append(Schedule.paused.is_(True))
    if "ok" in states:
        conditions.append(and_(Schedule.paused.is_(False),
                               or_(stored.is_(None), stored.in_(["ok", "paused"]))))
    return or_(*conditions) if conditions else false()


def update(ctx: ManagementContext, actor: Actor, schedule_id: int, changes: Mapping[str, Any],
           if_match: int | None = None, *, audit_action: str = "schedule.update",
           audit_details: dict[str, Any] | None = None) -> Schedule:
    with ctx.db.transaction() as session:
        schedule = _locked(session, actor, schedule_id)
        if if_match is not None and if_match != schedule.version:
            raise PreconditionFailed(
                f"schedule {schedule_id} is at version {schedule.version}, not {if_match}")
        require_live(schedule, "edited")
        current = {name: getattr(schedule, name) for name in FIELDS}
        values = _validated({**current, **changes}, ctx.settings)
        # Editing (or rolling back) a schedule of an instance handler, or turning one into it.
        require_handler_rights(actor, schedule.handler, values["handler"])
        changed = [name for name in FIELDS if values[name] != current[name]]
        if not changed:
            return schedule
        if "notify" in changed:
            notifications.check_notify(session, schedule.project, values["notify"])
        if "queue" in changed:
            queues.admit(session, ctx.settings, schedule.project, [values["queue"]])
        if "upstream" in changed:
            schedule_chains.check(session, schedule.project, schedule_id, values["upstream"])
        if "name" in changed:
            taken = session.execute(select(Schedule.id).where(
                Schedule.project == schedule.project,
                Schedule.name == values["name"], Schedule.deleted_at.is_(None),
                Schedule.id != schedule_id)).first()
            if taken is not None:
                raise _duplicate(values["name"])
        before = snapshot(schedule)
        before_definition = definition(schedule)
        # New cron, zone, or un-pausing: fire from the next time after now (no catch-up).
        # Queried before any attribute changes, so no autoflush can hit the unique index early.
        now = _withdraw_written_ahead(session, schedule)
        next_run = schedule.next_run_at
        if {"cron", "timezone"} & set(changed) or ("paused" in changed and not values["paused"]):
            next_run = _next_run(session, values["cron"], values["timezone"])
        for name in changed:
            setattr(schedule, name, values[name])
        if not values["paused"]:
            schedule.paused_until = None
            schedule.pause_reason = None
        schedule.next_run_at = next_run
        schedule.version += 1
        schedule.updated_at = now
        _flush_unique_name(session, values["name"])
        _finish(session, schedule)
        _record_version(session, schedule, actor, before_definition)
        audit.record(session, actor, audit_action, target_type="schedule",
                     target_id=schedule_id,
                     details={"before": before, "after": snapshot(schedule), "changed": changed,
                              **(audit_details or {})},
                     project=schedule.project)
        _changed(session)
        return schedule


def pause(ctx: ManagementContext, actor: Actor, schedule_id: int, *,
          until: datetime | None = None, reason: str | None = None) -> Schedule:
    """Stop firing; with ``until`` the leader resumes it by itself at that instant (audited as
    ``system``). Pausing a paused schedule again sets its new ``until``/``reason``."""
    why = (reason or "").strip() or None
    if why is not None and len(why) > MAX_PAUSE_REASON:
        raise InvalidInput("reason is too long",
                           errors={"reason": [f"At most {MAX_PAUSE_REASON} characters."]})
    if until is not None and (until.tzinfo is None or until.utcoffset() is None):
        raise InvalidInput("until must include a time zone offset",
                           errors={"until": ["Must include a time zone offset."]})
    with ctx.db.transaction() as session:
        schedule = _locked(session, actor, schedule_id)
        require_live(schedule, "paused")
        if until is not None:
            now = session.execute(select(func.cronplane_now())).scalar_one()
            if until <= now:
                raise InvalidInput("until is in the past",
                                   errors={"until": ["Must be in the future."]})
        if schedule.paused and (schedule.paused_until, schedule.pause_reason) == (until, why):
            return schedule
        before_definition = definition(schedule)
        _withdraw_written_ahead(session, schedule)
        schedule.paused = True
        schedule.paused_until = until
        schedule.pause_reason = why
        _touch(session, schedule)
        _finish(session, schedule)
        _record_version(session, schedule, actor, before_definition)
        audit.record(session, actor, "schedule.pause", target_type="schedule",
                     target_id=schedule_id,
                     details={"until": until.isoformat() if until else None, "reason": why},
                     project=schedule.project)
        _changed(session)
        return schedule


def resume(ctx: ManagementContext, actor: Actor, schedule_id: int) -> Schedule:
    """Fire again from the first fire time after now; fires missed while paused are not run."""
    with ctx.db.transaction() as session:
        schedule = _locked(session, actor, schedule_id)
        require_live(schedule, "resumed")
        if not schedule.paused:
            return schedule
        before_definition = definition(schedule)
        schedule.paused = False
        schedule.paused_until = None
        schedule.pause_reason = None
        schedule.next_run_at = _next_run(session, schedule.cron, schedule.timezone)
        _touch(session, schedule)
        _finish(session, schedule)
        _record_version(session, schedule, actor, before_definition)
        audit.record(session, actor, "schedule.resume", target_type="schedule",
                     target_id=schedule_id,
                     details={"next_run_at": schedule.next_run_at.isoformat()
                              if schedule.next_run_at else None}, project=schedule.project)
        _changed(session)
        return schedule


def delete(ctx: ManagementContext, actor: Actor, schedule_id: int) -> Schedule:
    """Soft delete: the row and its jobs stay readable; it never fires again."""
    with ctx.db.transaction() as session:
        schedule = _locked(session, actor, schedule_id)
        if schedule.deleted_at is not None:
            return schedule
        before = snapshot(schedule)
        schedule.deleted_at = _withdraw_written_ahead(session, schedule)
        schedule.next_run_at = None
        _touch(session, schedule)
        _finish(session, schedule)
        # The delete bumps the version (ETags) so it is a version too: who deleted it shows in
        # the history and no version number is missing. The definition is unchanged, so a
        # rollback to it is a rollback to the definition before the delete.
        _record_version(session, schedule, actor, definition(schedule),
                        also={"deleted": [False, True]})
        audit.record(session, actor, "schedule.delete", target_type="schedule",
                     target_id=schedule_id, details={"before": before},
                     project=schedule.project)
        _changed(session)
        return schedule
