"""A small JSON client for the cronplane API (standard library only, so the CLI needs nothing
extra): bearer-token auth, problem+json errors turned into one readable line."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

API_PREFIX = "/api/v1"


class ApiError(Exception):
    """The server refused or could not be reached; ``str()`` is one line for the operator."""

    def __init__(self, message: str, status: int | None = None, problem: Any = None) -> None:
        super().__init__(message)
        self.status = status  # None: no answer (refused, timed out, not the API's JSON)
        self.problem = problem  # the server's problem+json document, when it sent one


@dataclass(frozen=True)
class Response:
    status: int
    headers: dict[str, str]
    body: Any


class ApiClient:
    def __init__(self, base_url: str, token: str, timeout: float = 30.0) -> None:
        self.base_url = base_url.rstrip("/")
        self.token = token
        self.timeout = timeout

    def request(self, method: str, path: str, body: Any = None,
                headers: dict[str, str] | None = None,
                query: dict[str, Any] | None = None) -> Response:
        url = f"{self.base_url}{API_PREFIX}{path}"
        if query:
            url += "?" + urlencode({k: v for k, v in query.items() if v is not None}, doseq=True)
        data = None if body is None else json.dumps(body).encode()
        sent = {"Authorization": f"Bearer {self.token}", "Accept": "application/json",
                **({"Content-Type": "application/json"} if data is not None else {}),
                **(headers or {})}
        req = urllib.request.Request(url, data=data, method=method, headers=sent)  # noqa: S310 - the operator's own URL
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as raw:  # noqa: S310
                text = raw.read().decode() or "null"
                status, answer_headers = raw.status, dict(raw.headers.items())
        except urllib.error.HTTPError as exc:
            line, problem = _problem(exc)
            raise ApiError(f"{method} {path}: {exc.code} {line}", exc.code, problem) from None
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            raise ApiError(f"cannot reach {self.base_url}: {reason}") from None
        try:
            return Response(status, answer_headers, json.loads(text))
        except ValueError:
            # A proxy's page or the console's HTML: whatever answered is not the API.
            raise ApiError(f"{method} {path}: {status} but the answer is not JSON "
                           f"(is {self.base_url} a cronplane server?)") from None

    def text(self, path: str, query: dict[str, Any] | None = None) -> tuple[bytes, dict[str, str]]:
        """A text/plain resource (an attempt's output): its bytes and headers, errors as in
        ``request``."""
        url = f"{self.base_url}{API_PREFIX}{path}"
        if query:
            url += "?" + urlencode(query)
        req = urllib.request.Request(url, headers={  # noqa: S310 - the operator's own URL
            "Authorization": f"Bearer {self.token}", "Accept": "text/plain"})
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as raw:  # noqa: S310
                return raw.read(), {k.lower(): v for k, v in raw.headers.items()}
        except urllib.error.HTTPError as exc:
            line, problem = _problem(exc)
            raise ApiError(f"GET {path}: {exc.code} {line}", exc.code, problem) from None
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            raise ApiError(f"cannot reach {self.base_url}: {reason}") from None

    def get_all(self, path: str, **query: Any) -> list[dict[str, Any]]:
        """Every item of a cursor-paginated list."""
        items: list[dict[str, Any]] = []
        cursor: str | None = None
        while True:
            page = self.request("GET", path, query={**query, "limit": 200, "cursor": cursor}).body
            items.extend(page["items"])
            cursor = page.get("next_cursor")
            if not cursor:
                return items


def _problem(exc: urllib.error.HTTPError) -> tuple[str, Any]:
    """(one readable line, the problem document or None)."""
    try:
        problem = json.loads(exc.read().decode())
    except (ValueError, OSError):
        return str(exc.reason or ""), None
    if not isinstance(problem, dict):
        return str(problem), None
    detail = problem.get("detail") or problem.get("title") or ""
    errors = problem.get("errors")
    if errors and not all(str(name) in str(detail) for name in errors):
        return f"{detail} {json.dumps(errors)}", problem
    return str(detail), problem
