"""The egress policy: which network addresses an outbound call made on a user's behalf may reach.

Pure classification (no sockets, no DNS): the transport in ``handlers/outbound.py`` resolves a
name and asks this module about every address before it connects. Everything that is not on the
public internet is denied unless the operator lists it in ``CRONPLANE_HTTP_ALLOW``: an OPERATOR (or
a demo persona) is trusted to run work, not to reach the network behind the server (ADR-0012).
"""

from __future__ import annotations

import ipaddress
import socket
from dataclasses import dataclass
from urllib.parse import urlsplit

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

# (network, why) — the name appears in the error so the operator knows what to allow.
_DENIED: tuple[tuple[IPNetwork, str], ...] = tuple(
    (ipaddress.ip_network(cidr), why) for cidr, why in (
        ("0.0.0.0/8", "unspecified"),
        ("10.0.0.0/8", "private (RFC 1918)"),
        ("100.64.0.0/10", "carrier-grade NAT"),
        ("127.0.0.0/8", "loopback"),
        ("169.254.0.0/16", "link-local (cloud metadata)"),
        ("172.16.0.0/12", "private (RFC 1918)"),
        ("192.0.0.0/24", "IETF protocol assignments"),
        ("192.168.0.0/16", "private (RFC 1918)"),
        ("198.18.0.0/15", "benchmarking"),
        ("224.0.0.0/4", "multicast"),
        ("240.0.0.0/4", "reserved"),
        ("::/128", "unspecified"),
        ("::1/128", "loopback"),
        ("fe80::/10", "link-local"),
        ("fec0::/10", "site-local"),
        ("fc00::/7", "unique-local"),
        ("ff00::/8", "multicast"),
        ("100::/64", "discard"),
    ))
SCHEMES = ("http", "https")


class EgressError(ValueError):
    """A destination the policy refuses; ``str()`` starts with ``egress denied:``."""

    def __init__(self, detail: str) -> None:
        super().__init__(f"egress denied: {detail}")


def _embedded_ipv4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    # IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible (::a.b.c.d), NAT64 (64:ff9b::/96) and 6to4
    # (2002::/16) all carry an IPv4 address a router may deliver to: judge that address.
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    packed = address.packed
    if packed[:12] == bytes(12) and address not in (ipaddress.IPv6Address("::"),
                                                    ipaddress.IPv6Address("::1")):
        return ipaddress.IPv4Address(packed[12:])
    if address in ipaddress.ip_network("64:ff9b::/96"):
        return ipaddress.IPv4Address(packed[12:])
    return None


def denied_reason(address: IPAddress) -> str | None:
    """Why ``address`` is not on the public internet, or None when it is."""
    if isinstance(address, ipaddress.IPv6Address):
        if address.scope_id:
            return "link-local (scoped)"
        embedded = _embedded_ipv4(address)
        if embedded is not None:
            reason = denied_reason(embedded)
            return None if reason is None else f"{reason}, IPv4 embedded in IPv6"
    for network, why in _DENIED:
        if address.version == network.version and address in network:
            return why
    if not address.is_global:
        return "not globally routable"
    return None


def parse_ip_literal(host: str) -> IPAddress | None:
    """The address a URL host spells literally, including the forms ``inet_aton`` accepts
    (``2130706433``, ``0x7f.1``, ``0177.0.0.1``) that resolvers turn into addresses; else None."""
    text = host.strip("[]")
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        pass
    if ":" in text:
        return None
    try:
        return ipaddress.IPv4Address(socket.inet_aton(text))
    except OSError:
        return None


def _is_localhost_name(host: str) -> bool:
    # RFC 6761: every name under .localhost is loopback, whatever DNS says.
    name = host.rstrip(".").lower()
    return name == "localhost" or name.endswith(".localhost")


@dataclass(frozen=True)
class EgressPolicy:
    """Denied ranges minus what the operator allowed (CIDRs and exact host names)."""

    allow_networks: tuple[IPNetwork, ...] = ()
    allow_hosts: frozenset[str] = frozenset()

    @classmethod
    def parse(cls, text: str) -> EgressPolicy:
        """``CRONPLANE_HTTP_ALLOW``: comma-separated CIDRs, addresses and host names."""
        networks: list[IPNetwork] = []
        hosts: set[str] = set()
        for raw in text.split(","):
            entry = raw.strip()
            if not entry:
                continue
            try:
                networks.append(ipaddress.ip_network(entry.strip("[]"), strict=False))
                continue
            except ValueError:
                pass
            name = entry.rstrip(".").lower()
            labels = name.split(".")
            if not name or len(name) > 253 or not all(
                    label and len(label) <= 63 and label.replace("-", "").replace("_", "").isalnum()
                    for label in labels):
                raise ValueError(f"not a CIDR, address or host name: {entry!r}")
            hosts.add(name)
        return cls(tuple(networks), frozenset(hosts))

    def host_allowed(self, host: str) -> bool:
        return host.strip("[]").rstrip(".").lower() in self.allow_hosts

    def check_address(self, host: str, address: IPAddress) -> None:
        """Raise EgressError unless a connection to ``address`` (which ``host`` resolved to) is
        allowed."""
        if self.host_allowed(host):
            return
        if any(address.version == net.version and address in net for net in self.allow_networks):
            return
        if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
            mapped = address.ipv4_mapped
            if any(mapped in net for net in self.allow_networks if net.version == 4):
                return
        reason = denied_reason(address)
        if reason is not None:
            shown = host if host.strip("[]") == str(address) else f"{host} ({address})"
            raise EgressError(f"{shown} is {reason}; allow it with CRONPLANE_HTTP_ALLOW")

    def check_url_literal(self, url: str) -> None:
        """What can be refused without DNS (at submission): the scheme, and a host that is an
        address literal or a localhost name. Raise EgressError when denied."""
        try:
            parts = urlsplit(url)
            host = parts.hostname or ""
        except ValueError as exc:
            raise EgressError(f"not a valid URL ({exc})") from None
        if parts.scheme.lower() not in SCHEMES:
            raise EgressError(f"scheme {parts.scheme or '(none)'!r}; only http and https")
        if not host:
            raise EgressError("the URL names no host")
        if self.host_allowed(host):
            return
        if _is_localhost_name(host):
            self.check_address(host, ipaddress.IPv4Address("127.0.0.1"))
            return
        address = parse_ip_literal(host)
        if address is not None:
            self.check_address(host, address)


DEFAULT_POLICY = EgressPolicy()


def origin_of(url: str) -> str:
    """``scheme://host[:port]`` of ``url``, lower-case, the default port left out: what an error
    about an outbound call may name (a path or a query can be a credential, e.g. a Slack hook),
    and what a secret's ``.origins`` file lists. ``(invalid URL)`` when it cannot be parsed."""
    try:
        parts = urlsplit(url.strip())
        scheme = parts.scheme.lower()
        host = (parts.hostname or "").lower()
        port = parts.port
    except ValueError:
        return "(invalid URL)"
    if not scheme or not host:
        return "(invalid URL)"
    shown = f"[{host}]" if ":" in host else host
    if port is None or port == {"http": 80, "https": 443}.get(scheme):
        return f"{scheme}://{shown}"
    return f"{scheme}://{shown}:{port}"


def parse_origins(text: str) -> frozenset[str]:
    """A ``NAME.origins`` file: one ``scheme://host[:port]`` a line; blank lines and ``#``
    comments skipped. A line that is not an http(s) origin binds to nothing (fail closed)."""
    found: set[str] = set()
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        origin = origin_of(line)
        if origin.split("://", 1)[0] in SCHEMES:
            found.add(origin)
    return frozenset(found)

