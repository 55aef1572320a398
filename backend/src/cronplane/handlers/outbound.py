"""The one outbound HTTP client for calls made on a user's behalf (``http.request``, webhooks).

urllib3 does the HTTP; this module decides where it may go. For every hop it resolves the host
itself, checks every address against the egress policy (``domain/egress.py``) and then opens the
connection to the checked address — never to the name — so a DNS answer that changes between
check and connect (rebinding) cannot move the request. TLS still verifies the certificate against
the host name (SNI and ``assert_hostname``). Redirects are followed here (at most 5), each hop
re-checked, and ``Authorization``/``Cookie`` are dropped when the origin changes. No proxies from
the environment, no schemes but http and https. See ADR-0012.

A request that carries a secret (ADR-0025) is held tighter: every hop must be one of the origins
its secrets are bound to (``NAME.origins``), and it follows no redirect to another origin at all
(a secret may sit in any header, the body or the URL, not only in ``Authorization``).

Errors name the origin (``scheme://host[:port]``) of the URL, never its path or query: those can
be credentials (a Slack hook's path is its token) and errors are shown to every VIEWER.
"""

from __future__ import annotations

import ipaddress
import socket
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import SplitResult, urljoin, urlsplit

from cronplane.domain.egress import (
    DEFAULT_POLICY,
    SCHEMES,
    EgressError,
    EgressPolicy,
    IPAddress,
    origin_of,
)

if TYPE_CHECKING:
    import urllib3

MAX_REDIRECTS = 5
MAX_BODY_BYTES = 64 * 1024
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
CREDENTIAL_HEADERS = frozenset({"authorization", "cookie", "proxy-authorization"})
# A name and a port → the addresses to try, in order. Tests inject one that maps names.
Resolver = Callable[[str, int], Sequence[str]]


class OutboundError(Exception):
    """The request could not be made (connection, TLS, timeout, too many redirects)."""


@dataclass(frozen=True)
class OutboundResponse:
    status: int
    headers: dict[str, str]
    body: bytes  # at most ``max_body`` bytes
    truncated: bool  # the response had more than ``body``
    url: str  # the URL that answered (after redirects)
    redirects: int


def system_resolver(host: str, port: int) -> list[str]:
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise OutboundError(f"cannot resolve {host}: {exc.strerror or exc}") from None
    addresses: list[str] = []
    for _family, _type, _proto, _name, sockaddr in infos:
        address = str(sockaddr[0])
        if address not in addresses:
            addresses.append(address)
    return addresses


def _origin(url: str) -> tuple[str, str, int]:
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    return scheme, (parts.hostname or "").lower(), parts.port or (443 if scheme == "https" else 80)


class OutboundClient:
    """``request(method, url, headers, body, timeout)`` → OutboundResponse, under the policy."""

    def __init__(self, policy: EgressPolicy = DEFAULT_POLICY, *,
                 resolver: Resolver = system_resolver, max_redirects: int = MAX_REDIRECTS,
                 max_body: int = MAX_BODY_BYTES, user_agent: str = "cronplane/0.1") -> None:
        self.policy = policy
        self.resolver = resolver
        self.max_redirects = max_redirects
        self.max_body = max_body
        self.user_agent = user_agent

    def request(self, method: str, url: str, headers: Mapping[str, str] | None = None,
                body: bytes | None = None, timeout: float = 30.0, *,
                carries_secret: bool = False,
                allowed_origins: frozenset[str] | None = None) -> OutboundResponse:
        """Raises EgressError (``egress denied: …``) before anything is sent to a denied
        address, OutboundError when the exchange fails. ``timeout`` bounds the whole call.

        ``carries_secret``: no redirect to another origin. ``allowed_origins``: every hop's
        origin must be one of these (the origins the request's secrets are bound to)."""
        deadline = time.monotonic() + max(0.1, timeout)
        current = {k: v for k, v in (headers or {}).items() if k.lower() != "host"}
        current.setdefault("User-Agent", self.user_agent)
        method = method.upper()
        for hop in range(self.max_redirects + 1):
            if allowed_origins is not None and origin_of(url) not in allowed_origins:
                raise EgressError(f"{origin_of(url)} is not an origin the request's secrets "
                                  "may be sent to (their .origins files)")
            response = self._one(method, url, current, body, deadline)
            location = response.headers.get("location")
            if response.status not in REDIRECT_STATUSES or not location:
                return OutboundResponse(response.status, response.headers, response.body,
                                        response.truncated, url, hop)
            target = urljoin(url, location)
            if carries_secret and _origin(target) != _origin(url):
                raise EgressError(f"redirect from {origin_of(url)} to another origin "
                                  f"({origin_of(target)}) while the request carries a secret")
            if _origin(target) != _origin(url):
                current = {k: v for k, v in current.items()
                           if k.lower() not in CREDENTIAL_HEADERS}
            if response.status == 303 or (response.status in (301, 302) and method == "POST"):
                # What browsers do: the follow-up is a GET without the body.
                method, body = "GET", None
                current = {k: v for k, v in current.items()
                           if k.lower() not in ("content-type", "content-length")}
            url = target
        raise OutboundError(f"more than {self.max_redirects} redirects (last: {origin_of(url)})")

    def _one(self, method: str, url: str, headers: dict[str, str], body: bytes | None,
             deadline: float) -> OutboundResponse:
        # urllib3 is imported by the first request, not by every worker's start-up (issue 43).
        from urllib3.exceptions import HTTPError

        try:
            parts = urlsplit(url)
            host = parts.hostname or ""
            port = parts.port or (443 if parts.scheme.lower() == "https" else 80)
        except ValueError as exc:
            raise EgressError(f"not a valid URL ({exc})") from None
        scheme = parts.scheme.lower()
        if scheme not in SCHEMES:
            raise EgressError(f"scheme {scheme or '(none)'!r}; only http and https")
        if not host:
            raise EgressError("the URL names no host")
        self.policy.check_url_literal(url)
        addresses = self._checked_addresses(host, port)
        path = parts.path or "/"
        if parts.query:
            path += "?" + parts.query
        default_port = 443 if scheme == "https" else 80
        host_header = host if ":" not in host else f"[{host}]"
        sent = {**headers, "Host": host_header if port == default_port
                else f"{host_header}:{port}"}
        last_error: Exception | None = None
        for address in addresses:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            pool = self._pool(scheme, host, address, port, remaining)
            try:
                return self._exchange(pool, method, path, headers=sent, body=body, url=url,
                                      deadline=deadline)
            except (HTTPError, OSError) as exc:
                last_error = exc
            finally:
                pool.close()
        if last_error is None:
            raise OutboundError(f"{method} {origin_of(url)}: timed out")
        raise OutboundError(f"{method} {origin_of(url)}: {_describe(last_error, parts)}")

    def _checked_addresses(self, host: str, port: int) -> list[str]:
        literal = _literal(host)
        candidates = [str(literal)] if literal is not None else list(self.resolver(host, port))
        if not candidates:
            raise OutboundError(f"cannot resolve {host}: no addresses")
        for candidate in candidates:
            # Every address, not only the first: a name with one public and one private answer
            # must not be usable to reach the private one on a retry or failover.
            self.policy.check_address(host, ipaddress.ip_address(candidate.split("%", 1)[0]))
        return candidates

    def _pool(self, scheme: str, host: str, address: str, port: int,
              remaining: float) -> urllib3.HTTPConnectionPool:
        import urllib3

        timeout = urllib3.Timeout(connect=remaining, read=remaining)
        if scheme == "https":
            # Connect to the checked address; verify the certificate and send SNI for the name.
            return urllib3.HTTPSConnectionPool(
                address, port, timeout=timeout, retries=False, maxsize=1,
                cert_reqs="CERT_REQUIRED", server_hostname=host, assert_hostname=host)
        return urllib3.HTTPConnectionPool(address, port, timeout=timeout, retries=False,
                                          maxsize=1)

    def _exchange(self, pool: urllib3.HTTPConnectionPool, method: str, path: str, *,
                  headers: dict[str, str], body: bytes | None, url: str,
                  deadline: float) -> OutboundResponse:
        response = pool.urlopen(method, path, body=body, headers=headers, redirect=False,
                                retries=False, preload_content=False, assert_same_host=False)
        try:
            chunks: list[bytes] = []
            size = 0
            truncated = False
            while True:
                if time.monotonic() > deadline:
                    raise OutboundError(f"{method} {origin_of(url)}: timed out reading the body")
                chunk = response.read(min(16384, self.max_body + 1 - size))
                if not chunk:
                    break
                chunks.append(chunk)
                size += len(chunk)
                if size > self.max_body:
                    truncated = True
                    break
            data = b"".join(chunks)[: self.max_body]
            return OutboundResponse(
                status=int(response.status),
                headers={k.lower(): v for k, v in response.headers.items()},
                body=data, truncated=truncated, url=url, redirects=0)
        finally:
            response.release_conn()
            response.close()


def _literal(host: str) -> IPAddress | None:
    try:
        return ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return None


def _describe(exc: Exception, parts: SplitResult) -> str:
    reason = getattr(exc, "reason", None)
    text = str(reason or exc) or type(exc).__name__
    # urllib3 quotes the request path in some errors ("… with url: /services/T0/B0/…").
    for revealing in (parts.path + ("?" + parts.query if parts.query else ""), parts.path,
                      parts.query):
        if len(revealing) > 1:
            text = text.replace(revealing, "/…")
    return text


def client_for(settings: object) -> OutboundClient:
    """The client for these settings; without settings the strict default (fail closed)."""
    policy = getattr(settings, "egress_policy", None)
    return OutboundClient(policy if isinstance(policy, EgressPolicy) else DEFAULT_POLICY)
