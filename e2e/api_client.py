"""The API's view of the data the console shows: a small authenticated HTTP client for the e2e flows.

Tests set data up through it and check, next to what the page shows, what the server says.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import requests

# The suite's one wait helper lives in the backend's tests/support; e2e reuses it.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "backend"))
from tests.support.waiting import wait_until

__all__ = ["ApiClient", "ApiError", "login", "persona_login", "wait_until"]

API_PREFIX = "/api/v1"


class ApiError(AssertionError):
    """An API call answered with an unexpected status (the message carries the problem body)."""


class ApiClient:
    """A ``requests.Session`` bound to one server and, once signed in, one Bearer token."""

    def __init__(self, base_url: str, token: str | None = None, user: dict[str, Any] | None = None):
        self.base_url = base_url.rstrip("/")
        self.session = requests.Session()
        self.user = user or {}
        if token:
            self.session.headers["Authorization"] = f"Bearer {token}"

    @property
    def username(self) -> str:
        return str(self.user.get("username", ""))

    def url(self, path: str) -> str:
        if path.startswith("http"):
            return path
        prefix = "" if path.startswith(("/healthz", "/readyz", "/metrics")) else API_PREFIX
        return f"{self.base_url}{prefix}{path}"

    def call(self, method: str, path: str, *, expect: int | tuple[int, ...] | None = None,
             **kwargs: Any) -> requests.Response:
        kwargs.setdefault("timeout", 15)
        response = self.session.request(method, self.url(path), **kwargs)
        allowed = (expect,) if isinstance(expect, int) else expect
        ok = response.status_code < 400 if allowed is None else response.status_code in allowed
        if not ok:
            raise ApiError(f"{method} {path} -> {response.status_code} "
                           f"(expected {allowed or '< 400'}): {response.text[:500]}")
        return response

    def get(self, path: str, *, expect: int | tuple[int, ...] | None = 200, **params: Any) -> Any:
        return self.call("GET", path, expect=expect, params=params or None).json()

    def post(self, path: str, json: Any = None, *, expect: int | tuple[int, ...] | None = None,
             headers: dict[str, str] | None = None) -> Any:
        response = self.call("POST", path, expect=expect, json=json, headers=headers)
        return response.json() if response.content else None

    def patch(self, path: str, json: Any, *, expect: int | tuple[int, ...] | None = 200) -> Any:
        return self.call("PATCH", path, expect=expect, json=json).json()

    def delete(self, path: str, *, expect: int | tuple[int, ...] | None = 204) -> None:
        self.call("DELETE", path, expect=expect)

    def status(self, method: str, path: str, **kwargs: Any) -> int:
        """Only the status code (for asserting what a role may not do)."""
        kwargs.setdefault("timeout", 15)
        return self.session.request(method, self.url(path), **kwargs).status_code

    # -- resources the flows use ---------------------------------------------------------------

    def items(self, path: str, **params: Any) -> list[dict[str, Any]]:
        body = self.get(path, **params)
        return list(body["items"] if isinstance(body, dict) else body)

    def job(self, job_id: int) -> dict[str, Any]:
        return dict(self.get(f"/jobs/{job_id}"))

    def jobs_of_schedule(self, schedule_id: int) -> list[dict[str, Any]]:
        return self.items("/jobs", schedule_id=schedule_id, limit=200)

    def create_schedule(self, **fields: Any) -> dict[str, Any]:
        body = {"payload": {}, "timezone": "UTC", "max_attempts": 1, **fields}
        return dict(self.post("/schedules", body, expect=201))

    def create_job(self, handler: str, payload: dict[str, Any], **fields: Any) -> dict[str, Any]:
        return dict(self.post("/jobs", {"handler": handler, "payload": payload, **fields},
                              expect=202))

    def wait_for_job(self, job_id: int, statuses: set[str], timeout: float = 30) -> dict[str, Any]:
        return wait_until(lambda: (j := self.job(job_id))["status"] in statuses and j,
                          timeout=timeout, step=0.25,
                          message=lambda: f"job {job_id} never reached {sorted(statuses)}: "
                                          f"{self.job(job_id)}")


def login(base_url: str, username: str, password: str) -> ApiClient:
    response = requests.post(f"{base_url}{API_PREFIX}/auth/login",
                             json={"username": username, "password": password}, timeout=15)
    if response.status_code != 200:
        raise ApiError(f"login as {username} -> {response.status_code}: {response.text[:300]}")
    body = response.json()
    return ApiClient(base_url, body["access_token"], body.get("user"))


def persona_login(base_url: str, role: str) -> ApiClient:
    """Sign in as the demo persona that has ``role`` (personas are listed by the public endpoint,
    which also sets the ``csrf_persona`` cookie the sign-in must echo in ``X-CSRF-TOKEN``)."""
    browser = requests.Session()
    personas = browser.get(f"{base_url}{API_PREFIX}/auth/personas", timeout=15)
    if personas.status_code != 200:
        raise ApiError(f"GET /auth/personas -> {personas.status_code}: {personas.text[:300]}")
    listed = personas.json()
    listed = listed["items"] if isinstance(listed, dict) else listed
    match = [p for p in listed if str(p.get("role", "")).upper() == role.upper()]
    if not match:
        raise ApiError(f"no demo persona with role {role}: {listed}")
    name = match[0]["name"]
    response = browser.post(f"{base_url}{API_PREFIX}/auth/personas/{name}/login", timeout=15,
                            headers={"X-CSRF-TOKEN": browser.cookies.get("csrf_persona", "")})
    if response.status_code != 200:
        raise ApiError(f"persona login {name} -> {response.status_code}: {response.text[:300]}")
    body = response.json()
    return ApiClient(base_url, body["access_token"], body.get("user"))
