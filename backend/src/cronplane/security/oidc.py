"""The OpenID Connect relying party: discovery, the authorization request (code flow, PKCE S256,
state, nonce), the code exchange (Authlib's OAuth2Session) and the ID token check (joserfc, the
JOSE library of the Authlib project): RS256/ES256 signature against the provider's JWKS, ``iss``,
``aud``, ``exp`` and ``nonce``.

The JWKS is cached; a token signed with a key id the cache does not know triggers one refetch, so
a provider that rotates its keys keeps working and a forged ``kid`` costs one request at most.
"""

from __future__ import annotations

import secrets
import threading
import time
from dataclasses import dataclass
from typing import Any

import requests
from authlib.integrations.requests_client import OAuth2Session
from joserfc import jwt
from joserfc.errors import JoseError
from joserfc.jwk import KeySet

ALGORITHMS = ["RS256", "ES256"]
DISCOVERY_TTL = 3600.0
TIMEOUT = 10.0


class OidcFailure(Exception):
    """A sign-in that must not succeed; ``reason`` is the short word for the URL and the audit."""

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(detail or reason)
        self.reason = reason


@dataclass(frozen=True)
class Request:
    url: str
    state: str
    nonce: str
    code_verifier: str


class Provider:
    def __init__(self, issuer: str, client_id: str, client_secret: str | None,
                 redirect_uri: str) -> None:
        self.issuer = issuer
        self.client_id = client_id
        self.client_secret = client_secret
        self.redirect_uri = redirect_uri
        self._lock = threading.Lock()
        self._metadata: dict[str, Any] | None = None
        self._metadata_at = 0.0
        self._keys: KeySet | None = None

    def metadata(self) -> dict[str, Any]:
        with self._lock:
            if self._metadata is None or time.monotonic() - self._metadata_at > DISCOVERY_TTL:
                url = f"{self.issuer}/.well-known/openid-configuration"
                try:
                    response = requests.get(url, timeout=TIMEOUT)
                    response.raise_for_status()
                    document = response.json()
                except (requests.RequestException, ValueError) as exc:
                    raise OidcFailure("provider_unavailable", f"discovery at {url}: {exc}") from None
                if document.get("issuer", "").rstrip("/") != self.issuer:
                    raise OidcFailure("provider_misconfigured",
                                      f"discovery names issuer {document.get('issuer')!r}")
                self._metadata, self._metadata_at = document, time.monotonic()
            return self._metadata

    def _session(self) -> OAuth2Session:
        return OAuth2Session(self.client_id, self.client_secret, scope="openid profile email",
                             redirect_uri=self.redirect_uri, code_challenge_method="S256",
                             token_endpoint_auth_method="client_secret_basic"
                             if self.client_secret else "none")

    def authorization_request(self) -> Request:
        state, nonce = secrets.token_urlsafe(32), secrets.token_urlsafe(32)
        verifier = secrets.token_urlsafe(64)
        url, _ = self._session().create_authorization_url(
            self.metadata()["authorization_endpoint"], state=state, nonce=nonce,
            code_verifier=verifier)
        return Request(url, state, nonce, verifier)

    def exchange(self, code: str, code_verifier: str) -> str:
        """The ID token (compact JWS) for an authorization code."""
        session = self._session()
        try:
            token = session.fetch_token(self.metadata()["token_endpoint"], code=code,
                                        code_verifier=code_verifier,
                                        grant_type="authorization_code", timeout=TIMEOUT)
        except Exception as exc:  # noqa: BLE001 - any refusal of the code is the same failure
            raise OidcFailure("code_rejected", str(exc)) from None
        id_token = token.get("id_token")
        if not id_token:
            raise OidcFailure("no_id_token")
        return str(id_token)

    def _keyset(self, refresh: bool) -> KeySet:
        with self._lock:
            if self._keys is None or refresh:
                try:
                    response = requests.get(self.metadata_unlocked()["jwks_uri"], timeout=TIMEOUT)
                    response.raise_for_status()
                    self._keys = KeySet.import_key_set(response.json())
                except (requests.RequestException, ValueError, JoseError) as exc:
                    raise OidcFailure("provider_unavailable", f"JWKS: {exc}") from None
            return self._keys

    def metadata_unlocked(self) -> dict[str, Any]:
        assert self._metadata is not None
        return self._metadata

    def validate(self, id_token: str, nonce: str) -> dict[str, Any]:
        self.metadata()
        try:
            decoded = jwt.decode(id_token, self._keyset(refresh=False), algorithms=ALGORITHMS)
        except (JoseError, ValueError):
            # Perhaps a rotated key: fetch the JWKS again once, then the signature must hold.
            try:
                decoded = jwt.decode(id_token, self._keyset(refresh=True), algorithms=ALGORITHMS)
            except (JoseError, ValueError) as exc:
                raise OidcFailure("bad_signature", str(exc)) from None
        claims = decoded.claims
        audience = claims.get("aud")
        audiences = audience if isinstance(audience, list) else [audience]
        checks = {
            "bad_issuer": str(claims.get("iss", "")).rstrip("/") == self.issuer,
            "bad_audience": self.client_id in audiences,
            "bad_nonce": bool(nonce) and secrets.compare_digest(str(claims.get("nonce", "")), nonce),
            "no_subject": bool(claims.get("sub")),
        }
        for reason, ok in checks.items():
            if not ok:
                raise OidcFailure(reason)
        try:
            jwt.JWTClaimsRegistry(exp={"essential": True}, leeway=30).validate(claims)
        except JoseError as exc:
            raise OidcFailure("expired", str(exc)) from None
        return dict(claims)

    def end_session_url(self, post_logout_redirect: str) -> str | None:
        """RP-initiated logout, when the provider offers it."""
        try:
            endpoint = self.metadata().get("end_session_endpoint")
        except OidcFailure:
            return None
        if not endpoint:
            return None
        from urllib.parse import urlencode

        query = urlencode({"client_id": self.client_id,
                           "post_logout_redirect_uri": post_logout_redirect})
        return f"{endpoint}{'&' if '?' in endpoint else '?'}{query}"
