"""The state of one sign-in through the identity provider, kept in the browser, not the database.

Review N14: every unauthenticated ``GET /auth/oidc/login`` wrote a row (state, nonce, PKCE
verifier; ten minutes), and the callback deleted the row before comparing the browser's cookie.
Now ``seal`` puts the three values into the state cookie itself, encrypted and authenticated
(Fernet: AES-CBC + HMAC-SHA256) with a key derived from ``CRONPLANE_SECRET_KEY``, stamped with
the time; ``open`` gives them back only for an intact cookie younger than ``STATE_TTL``. So a
login request costs the server nothing it keeps, the cookie binds the sign-in to the browser that
started it (login CSRF), the callback's ``state`` is compared with the cookie's before anything
else, and the code verifier and nonce are readable by no one, the browser's user included.
A replayed callback finds the cookie gone (the callback deletes it) and the provider refuses a
code twice.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from dataclasses import dataclass
from datetime import timedelta

from cryptography.fernet import Fernet, InvalidToken

STATE_TTL = timedelta(minutes=10)
_KEY_CONTEXT = b"cronplane oidc login state v1\x00"


@dataclass(frozen=True)
class LoginState:
    state: str
    nonce: str
    code_verifier: str


def _fernet(secret_key: str) -> Fernet:
    # A key of its own (not the JWT signing key itself), derived from it.
    digest = hashlib.sha256(_KEY_CONTEXT + secret_key.encode()).digest()
    return Fernet(base64.urlsafe_b64encode(digest))


def seal(secret_key: str, login: LoginState) -> str:
    body = json.dumps({"s": login.state, "n": login.nonce, "v": login.code_verifier},
                      separators=(",", ":")).encode()
    return _fernet(secret_key).encrypt(body).decode()


def open_matching(secret_key: str, sealed: str | None, state: str) -> LoginState | None:
    """The sign-in the cookie holds when it is intact, younger than ``STATE_TTL`` and for this
    ``state``; None otherwise."""
    if not sealed:
        return None
    try:
        body = json.loads(_fernet(secret_key).decrypt(
            sealed.encode(), ttl=int(STATE_TTL.total_seconds())))
        login = LoginState(str(body["s"]), str(body["n"]), str(body["v"]))
    except (InvalidToken, ValueError, KeyError, TypeError):
        return None
    if not hmac.compare_digest(login.state.encode(), state.encode()):
        return None
    return login
