"""A small but real OpenID Connect provider for tests, served over HTTP on a loopback port.

Authorization code flow with PKCE (S256 only), one-use codes, client_secret_basic, RS256 ID tokens,
a JWKS endpoint whose key can be rotated, discovery and an end_session endpoint. ``next_user``
says who "signs in" at the next /authorize (there is no login form: the browser is approved at
once); ``tamper`` makes the next ID token wrong in one chosen way (aud, iss, exp, nonce,
signature) so the relying party's checks can be shown to hold.
"""

from __future__ import annotations

import base64
import hashlib
import secrets
import threading
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from flask import Flask, abort, jsonify, redirect, request
from joserfc import jwt
from joserfc.jwk import KeySet, RSAKey
from werkzeug.serving import make_server


@dataclass
class Provider:
    client_id: str = "cronplane-test"
    client_secret: str = "s3cret-" + secrets.token_hex(8)
    next_user: dict[str, Any] = field(default_factory=lambda: {
        "sub": "u-1", "preferred_username": "alice", "email": "alice@example.org",
        "groups": ["ops-admins"]})
    tamper: str | None = None
    issuer: str = ""
    codes: dict[str, dict[str, Any]] = field(default_factory=dict)
    token_requests: int = 0

    def __post_init__(self) -> None:
        self.key = RSAKey.generate_key(2048, parameters={"kid": "k1", "use": "sig", "alg": "RS256"})
        self.app = self._build()
        self._server = make_server("127.0.0.1", 0, self.app, threaded=True)
        self.issuer = f"http://127.0.0.1:{self._server.server_port}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def start(self) -> Provider:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()

    def rotate(self) -> None:
        """A new signing key; the JWKS publishes only the new one from now on."""
        kid = "k" + secrets.token_hex(3)
        self.key = RSAKey.generate_key(2048, parameters={"kid": kid, "use": "sig", "alg": "RS256"})

    def _id_token(self, nonce: str, user: dict[str, Any]) -> str:
        now = int(time.time())
        claims = {"iss": self.issuer, "aud": self.client_id, "iat": now, "exp": now + 300,
                  "nonce": nonce, **user}
        key = self.key
        tamper, self.tamper = self.tamper, None
        if tamper == "aud":
            claims["aud"] = "someone-else"
        elif tamper == "iss":
            claims["iss"] = "http://evil.example"
        elif tamper == "exp":
            claims["exp"], claims["iat"] = now - 600, now - 900
        elif tamper == "nonce":
            claims["nonce"] = "not-the-nonce"
        elif tamper == "signature":
            # Same kid as the published key, different private key: a forgery.
            key = RSAKey.generate_key(2048, parameters={"kid": self.key.kid, "alg": "RS256"})
        return jwt.encode({"alg": "RS256", "kid": key.kid}, claims, key)

    def _build(self) -> Flask:
        app = Flask("oidc-test-provider")

        @app.get("/.well-known/openid-configuration")
        def discovery() -> Any:
            return jsonify({
                "issuer": self.issuer,
                "authorization_endpoint": f"{self.issuer}/authorize",
                "token_endpoint": f"{self.issuer}/token",
                "jwks_uri": f"{self.issuer}/jwks",
                "end_session_endpoint": f"{self.issuer}/logout",
                "response_types_supported": ["code"],
                "subject_types_supported": ["public"],
                "id_token_signing_alg_values_supported": ["RS256"],
                "code_challenge_methods_supported": ["S256"],
                "token_endpoint_auth_methods_supported": ["client_secret_basic"],
            })

        @app.get("/jwks")
        def jwks() -> Any:
            return jsonify(KeySet([self.key]).as_dict(private=False))

        @app.get("/authorize")
        def authorize() -> Any:
            args = request.args
            if (args.get("client_id") != self.client_id or args.get("response_type") != "code"
                    or args.get("code_challenge_method") != "S256" or not args.get("code_challenge")
                    or "openid" not in (args.get("scope") or "").split()):
                abort(400)
            code = secrets.token_urlsafe(24)
            self.codes[code] = {"redirect_uri": args["redirect_uri"], "nonce": args.get("nonce", ""),
                                "challenge": args["code_challenge"], "user": dict(self.next_user)}
            return redirect(f"{args['redirect_uri']}?" + urlencode(
                {"code": code, "state": args.get("state", "")}), code=302)

        @app.post("/token")
        def token() -> Any:
            self.token_requests += 1
            auth = request.authorization
            if auth is None or (auth.username, auth.password) != (self.client_id, self.client_secret):
                return jsonify({"error": "invalid_client"}), 401
            form = request.form
            grant = self.codes.pop(form.get("code", ""), None)  # one use, whatever happens
            if grant is None or form.get("grant_type") != "authorization_code" \
                    or form.get("redirect_uri") != grant["redirect_uri"]:
                return jsonify({"error": "invalid_grant"}), 400
            verifier = form.get("code_verifier", "")
            challenge = base64.urlsafe_b64encode(
                hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
            if challenge != grant["challenge"]:
                return jsonify({"error": "invalid_grant", "error_description": "PKCE"}), 400
            return jsonify({"access_token": secrets.token_urlsafe(16), "token_type": "Bearer",
                            "expires_in": 300,
                            "id_token": self._id_token(grant["nonce"], grant["user"])})

        @app.get("/logout")
        def logout() -> Any:
            return "signed out", 200

        return app
