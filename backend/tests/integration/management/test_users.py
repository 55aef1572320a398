"""User administration: validation, guards (self lock/disable/demote, last active admin → 409),
and one audit event per change."""

from __future__ import annotations

import secrets
import threading

import pytest
from sqlalchemy import select, text

from cronplane.domain.roles import Role
from cronplane.management import throttle, users
from cronplane.management.actor import Actor
from cronplane.management.errors import Conflict, InvalidInput, NotFound
from cronplane.management.users import create_user_cli
from cronplane.storage.models import User
from tests.support.accounts import FAST_HASHING, add_user, bearer, tokens_for
from tests.support.apps import context
from tests.support.db_state import assert_unchanged
from tests.support.waiting import wait_until


def _actor(account) -> Actor:
    return Actor(username=account.username, role=Role[account.role], user_id=account.id)


def _events(app, action: str, target_id: int) -> int:
    with context(app).db.read_session() as session:
        return session.execute(text("SELECT count(*) FROM audit_events WHERE action = :a "
                                    "AND target_type = 'user' AND target_id = :t"),
                               {"a": action, "t": str(target_id)}).scalar_one()


@pytest.mark.parametrize("change", ["lock", "disable", "demote"])
def test_an_admin_cannot_lock_disable_or_demote_itself(app, change) -> None:
    me = add_user(app, "ADMIN")
    add_user(app, "ADMIN")  # not the last admin: the self-guard alone must refuse
    ctx, actor = context(app), _actor(me)
    action = {"lock": lambda: users.lock_user(ctx, actor, me.id),
              "disable": lambda: users.disable_user(ctx, actor, me.id),
              "demote": lambda: users.change_role(ctx, actor, me.id, "OPERATOR")}[change]
    with pytest.raises(Conflict, match="yourself"):
        action()
    assert users.get_user(ctx, actor, me.id).role == "ADMIN"


@pytest.mark.parametrize("change", ["lock", "disable", "demote"])
def test_the_last_active_admin_cannot_be_removed(fresh_app, change) -> None:
    app = fresh_app
    last = add_user(app, "ADMIN")
    ctx, system = context(app), Actor.system()
    action = {"lock": lambda: users.lock_user(ctx, system, last.id),
              "disable": lambda: users.disable_user(ctx, system, last.id),
              "demote": lambda: users.change_role(ctx, system, last.id, "VIEWER")}[change]
    with pytest.raises(Conflict, match="last active admin"):
        action()
    other = add_user(app, "ADMIN")
    users.lock_user(ctx, system, other.id)
    with pytest.raises(Conflict, match="last active admin"):
        action()  # a locked admin does not count


def test_two_admins_demoting_each_other_at_once_leave_one_admin(fresh_app) -> None:
    app = fresh_app
    a, b = add_user(app, "ADMIN"), add_user(app, "ADMIN")
    ctx = context(app)
    barrier = threading.Barrier(2)
    outcomes: list[str] = []

    def demote(actor_account, target_account) -> None:
        barrier.wait()
        try:
            users.change_role(ctx, _actor(actor_account), target_account.id, "VIEWER")
            outcomes.append("ok")
        except Conflict:
            outcomes.append("conflict")

    threads = [threading.Thread(target=demote, args=pair) for pair in ((a, b), (b, a))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    with ctx.db.read_session() as session:
        admins = session.execute(text("SELECT count(*) FROM users WHERE role = 'ADMIN'")).scalar_one()
    assert sorted(outcomes) == ["conflict", "ok"] and admins == 1


def _lock_waiters(app) -> int:
    with context(app).db.read_session() as session:
        return session.execute(text("SELECT count(*) FROM pg_stat_activity WHERE datname = "
                                    "current_database() AND wait_event_type = 'Lock'")).scalar_one()


def test_a_password_reset_does_not_deadlock_with_a_sign_in_of_the_same_name(fresh_app) -> None:
    # A sign-in locks its throttle rows, then the user row (management/auth.login); the reset
    # clears that name's throttle rows. Taken user row first, the two deadlocked and one of them
    # failed after deadlock_timeout.
    app = fresh_app
    target = add_user(app, "VIEWER")
    ctx = context(app)
    keys = throttle.login_keys(target.username.lower(), "203.0.113.9")
    with ctx.db.transaction() as session:
        throttle.lock(session, keys)  # the rows exist, as after an earlier wrong password
    failures: list[BaseException] = []

    def reset() -> None:
        try:
            users.reset_password(ctx, Actor.system(), target.id, "brand new password",
                                 hashing=FAST_HASHING)
        except BaseException as error:  # the test reports whatever ended it
            failures.append(error)

    resetter = threading.Thread(target=reset)
    with ctx.db.transaction() as sign_in:
        throttle.lock(sign_in, keys)
        resetter.start()
        wait_until(lambda: _lock_waiters(app), 15, "the reset to wait for the sign-in's locks")
        sign_in.scalars(select(User).where(User.id == target.id).with_for_update()).one()
    resetter.join(30)
    assert not resetter.is_alive() and failures == []
    with ctx.db.read_session() as session:
        left = session.execute(text("SELECT count(*) FROM login_throttles WHERE key = :k"),
                               {"k": keys[1]}).scalar_one()
    assert left == 0


def test_http_guards_answer_409(app) -> None:

    admin = add_user(app, "ADMIN")
    client = app.test_client(use_cookies=False)
    token = tokens_for(client, admin)["access_token"]
    with assert_unchanged(context(app).db.url):
        for path in ("lock", "disable"):
            response = client.post(f"/api/v1/users/{admin.id}/{path}", headers=bearer(token))
            assert response.status_code == 409, path
            assert response.mimetype == "application/problem+json"
        response = client.patch(f"/api/v1/users/{admin.id}", json={"role": "VIEWER"},
                                headers=bearer(token))
        assert response.status_code == 409


@pytest.mark.parametrize(("username", "password", "role", "field"), [
    ("", "long enough", "VIEWER", "username"),
    ("-dash-first", "long enough", "VIEWER", "username"),
    ("has space", "long enough", "VIEWER", "username"),
    ("x" * 65, "long enough", "VIEWER", "username"),
    ("system", "long enough", "VIEWER", "username"),
    ("fine", "short", "VIEWER", "password"),
    ("fine", "long enough", "ROOT", "role"),
])
def test_create_user_validates_input(app, username, password, role, field) -> None:
    with pytest.raises(InvalidInput) as caught:
        users.create_user(context(app), Actor.system(), username=username, password=password,
                          role=role, hashing=FAST_HASHING)
    assert field in (caught.value.errors or {})


def test_usernames_are_unique_ignoring_case(app) -> None:
    add_user(app, "VIEWER", username="Alice")
    with pytest.raises(Conflict):
        add_user(app, "VIEWER", username="alice")


def test_each_change_is_audited_once_and_passwords_never_are(app) -> None:
    ctx, system = context(app), Actor.system()
    target = add_user(app, "VIEWER")
    users.change_role(ctx, system, target.id, "OPERATOR")
    users.lock_user(ctx, system, target.id)
    users.unlock_user(ctx, system, target.id)
    users.disable_user(ctx, system, target.id)
    users.enable_user(ctx, system, target.id)
    users.reset_password(ctx, system, target.id, "brand new password")
    for action, count in (("user.create", 1), ("user.update", 2), ("user.lock", 1),
                          ("user.unlock", 1), ("user.disable", 1), ("user.enable", 1)):
        assert _events(app, action, target.id) == count, action
    with ctx.db.read_session() as session:
        dumped = session.execute(text("SELECT string_agg(details::text, ' ') FROM audit_events")
                                 ).scalar_one()
    assert "brand new password" not in dumped and "correct horse" not in dumped
    assert "$argon2" not in dumped


def test_missing_users_are_404(app) -> None:
    with pytest.raises(NotFound):
        users.lock_user(context(app), Actor.system(), 999_999)


def test_cli_creates_users_as_the_system(app) -> None:
    view = create_user_cli(context(app), username="cli-admin", password="long enough pw",
                           role="ADMIN")
    assert view.role == "ADMIN"
    with context(app).db.read_session() as session:
        actor = session.execute(text("SELECT actor FROM audit_events WHERE action = 'user.create' "
                                     "AND target_id = :id"), {"id": str(view.id)}).scalar_one()
    assert actor == "system"


def test_cli_create_user_reads_the_password_from_stdin(app, monkeypatch, tmp_path) -> None:
    from click.testing import CliRunner

    from cronplane.cli import main

    monkeypatch.setenv("DATABASE_URL", context(app).db.url)
    monkeypatch.setenv("CRONPLANE_DATA_DIR", str(tmp_path))
    result = CliRunner().invoke(main, ["create-user", "from-cli", "--role", "operator"],
                                input="a long password\n")
    assert result.exit_code == 0, result.output
    assert "created user from-cli (OPERATOR)" in result.output
    weak = CliRunner().invoke(main, ["create-user", "weak-cli", "--role", "VIEWER"],
                              input="short\n")
    assert weak.exit_code == 1 and "password" in weak.output


def test_the_users_list_searches_by_id_and_part_of_the_username(app) -> None:
    tag = secrets.token_hex(3)
    olga = add_user(app, "OPERATOR", username=f"o.Smith-{tag}")
    other = add_user(app, "VIEWER", username=f"vera_{tag}")
    admin = add_user(app, "ADMIN")
    client = app.test_client(use_cookies=False)
    token = tokens_for(client, admin)["access_token"]

    def ids(q: str) -> list[int]:
        response = client.get("/api/v1/users", query_string={"q": q}, headers=bearer(token))
        assert response.status_code == 200, response.json
        return [u["id"] for u in response.json["items"]]

    assert ids(f"#{olga.id}") == [olga.id], "#id is only that user"
    assert olga.id in ids(str(olga.id)), "a bare id names its user too"
    assert ids(f"smith-{tag}") == [olga.id], "a part of the name, case aside"
    assert ids(f"vera_{tag}") == [other.id]
    assert ids(f"vera%{tag}") == [] and ids(f"vera_{tag[:-1]}_") == [], "% and _ are no wildcards"
    assert ids(f"#{other.id + 10_000}") == []
    assert len(ids(" ")) >= 3, "blank: every user"
    page = client.get("/api/v1/users", query_string={"q": tag, "limit": 1}, headers=bearer(token))
    rest = client.get("/api/v1/users", headers=bearer(token),
                      query_string={"q": tag, "limit": 1, "cursor": page.json["next_cursor"]})
    assert [u["id"] for u in page.json["items"] + rest.json["items"]] == [olga.id, other.id]
    assert client.get("/api/v1/users", query_string={"q": "x" * 201},
                      headers=bearer(token)).status_code == 422
