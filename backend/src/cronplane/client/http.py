"""A small JSON client for the cronplane API (standard library only, so the CLI needs nothing
extra): bearer-token auth, problem+json errors turned into one readable line.

The token goes to the server's own origin only (review N13): urllib's default redirect handler
copies ``Authorization`` to whatever host a redirect names, so this client follows a redirect only
within the origin it was given and refuses any other (one line naming the other origin, never
the token). A plain ``http://`` URL to a host other than loopback sends the token in clear: the
client says so on stderr."""

from __future__ import annotations

import ipaddress
import json
import sys
import urllib.error
import urllib.request
from dataclasses import dataclass
from http.client import HTTPMessage
from typing import IO, Any
from urllib.parse import urlencode, urlsplit

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


def origin_of(url: str) -> str:
    parts = urlsplit(url)
    default = {"http": 80, "https": 443}.get(parts.scheme)
    port = parts.port or default
    host = (parts.hostname or "").lower()
    return f"{parts.scheme}://{host}" + ("" if port == default else f":{port}")


def _is_loopback(url: str) -> bool:
    host = (urlsplit(url).hostname or "").lower()
    if host in ("localhost", "localhost."):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class _SameOriginRedirects(urllib.request.HTTPRedirectHandler):
    """Follows a redirect within the request's origin; any other is refused (an HTTPError whose
    reason names the other origin), so the bearer token never travels there."""

    def redirect_request(  # noqa: PLR0917 - urllib calls it with these six, positionally
            self, req: urllib.request.Request, fp: IO[bytes], code: int, msg: str,
            headers: HTTPMessage, newurl: str) -> urllib.request.Request | None:
        there, here = origin_of(newurl), origin_of(req.full_url)
        if there != here:
            raise urllib.error.HTTPError(
                req.full_url, code, f"refused a redirect to another origin ({there}); the API "
                "token is only sent to the server's own origin", headers, fp)
        return super().redirect_request(req, fp, code, msg, headers, newurl)


_OPENER = urllib.request.build_opener(_SameOriginRedirects)


class ApiClient:
    def __init__(self, base_url: str, token: str, timeout: float = 30.0) -> None:
        self.base_url = base_url.rstrip("/")
        self.token = token
        self.timeout = timeout
        if urlsplit(self.base_url).scheme == "http" and not _is_loopback(self.base_url):
            print(f"cronplane: warning: {origin_of(self.base_url)} is plain HTTP; the API token "
                  "crosses the network unencrypted (use https://)", file=sys.stderr)

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
            with _OPENER.open(req, timeout=self.timeout) as raw:
                text = raw.read().decode() or "null"
                status, answer_headers = raw.status, dict(raw.headers.items())
        except urllib.error.HTTPError as exc:
            if 300 <= exc.code < 400:  # a redirect this client refused to follow
                raise ApiError(f"{method} {path}: {exc.code} {exc.reason}", exc.code) from None
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
            with _OPENER.open(req, timeout=self.timeout) as raw:
                return raw.read(), {k.lower(): v for k, v in raw.headers.items()}
        except urllib.error.HTTPError as exc:
            if 300 <= exc.code < 400:
                raise ApiError(f"GET {path}: {exc.code} {exc.reason}", exc.code) from None
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
