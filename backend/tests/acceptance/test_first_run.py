"""First run as a newcomer meets it: a real ``cronplane serve`` on an empty database prints a
working admin password once, keeps it 0600 in the data dir until it is changed, and the sign-in
page can say where it is; production invents no account and says how to make one."""

from __future__ import annotations

import re
import stat

import psycopg
import requests

from tests.support.servers import Serve


def _login(base: str, username: str, password: str) -> requests.Response:
    return requests.post(base + "/api/v1/auth/login",
                         json={"username": username, "password": password}, timeout=10)


def test_first_serve_prints_a_working_password_once_and_keeps_it_0600_until_changed(
        fresh_database_url, tmp_path) -> None:
    data = tmp_path / "data"
    first = Serve(fresh_database_url, data)
    try:
        first.wait_ready()
        out = first.output()
        password = re.search(r"│\s+Password:\s+(\S+)\s+│", out)
        assert password, out
        assert re.search(rf"│\s+Console:\s+{re.escape(first.base)}/\s+│", out), out
        assert "Stop:" in out and "Ctrl-C" in out and str(data.resolve()) in out
        secret = password.group(1)

        kept = data / "initial-admin-password"
        assert kept.read_text().strip() == secret
        assert stat.S_IMODE(kept.stat().st_mode) == 0o600

        hint = requests.get(first.base + "/api/v1/auth/first-run", timeout=5).json()
        assert hint == {"username": "admin", "initial_password_file": str(kept.resolve())}
        assert secret not in requests.get(first.base + "/api/v1/auth/first-run", timeout=5).text

        signed_in = _login(first.base, "admin", secret)
        assert signed_in.status_code == 200 and signed_in.json()["user"]["role"] == "ADMIN"
    finally:
        first.stop()

    second = Serve(fresh_database_url, data)
    try:
        second.wait_ready()
        assert secret not in second.output(), "the password is printed once, on the first run"
        assert "│" not in second.output()
        assert str(kept) in second.output(), "later starts still say where the password is"

        token = _login(second.base, "admin", secret).json()["access_token"]
        me = requests.get(second.base + "/api/v1/auth/me", timeout=5,
                          headers={"Authorization": f"Bearer {token}"}).json()
        changed = requests.post(f"{second.base}/api/v1/users/{me['id']}/password", timeout=10,
                                headers={"Authorization": f"Bearer {token}"},
                                json={"password": "a brand new passphrase 42"})
        assert changed.status_code == 200, changed.text
        assert not kept.exists(), "the file goes with the first password change"
        assert requests.get(second.base + "/api/v1/auth/first-run", timeout=5).json() == {
            "username": None, "initial_password_file": None}
        assert _login(second.base, "admin", secret).status_code == 401
    finally:
        second.stop()


def test_production_creates_no_account_and_names_the_command(fresh_database_url, tmp_path) -> None:
    data = tmp_path / "data"
    server = Serve(fresh_database_url, data, CRONPLANE_ENV="production",
                   CRONPLANE_SECRET_KEY="prod-test-key-3f9a1c7e5b2d8046aa9e",
                   CRONPLANE_AUDIT_KEY="prod-audit-key-8c1e4f7a9b3d6205ee71")
    try:
        server.wait_ready()
        out = server.output()
        assert "cronplane create-user admin --role ADMIN" in out, out
        assert "│" not in out
        assert not (data / "initial-admin-password").exists()
        assert _login(server.base, "admin", "anything-at-all").status_code == 401
        with psycopg.connect(fresh_database_url) as conn:
            assert conn.execute("SELECT count(*) FROM users").fetchone() == (0,)
    finally:
        server.stop()
