"""An app that signs in through the test OIDC provider (tests/oidc_provider), for every test
module that needs one with its own role map."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from flask import Flask

from tests.support.apps import close_app, make_app


@contextmanager
def oidc_app(database_url: str, provider: Any,
             role_map: tuple[tuple[str, str, str | None], ...]) -> Iterator[Flask]:
    application = make_app(database_url, oidc_issuer=provider.issuer,
                           oidc_client_id=provider.client_id,
                           oidc_client_secret=provider.client_secret, oidc_name="Test IdP",
                           oidc_role_map=role_map, public_url="http://localhost")
    try:
        yield application
    finally:
        close_app(application)
