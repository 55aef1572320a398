"""Moved to ``tests/support`` (``apps.py``, ``accounts.py``); this alias keeps branches in flight
importing. New tests import from ``tests.support``."""

from tests.support.accounts import (  # noqa: F401
    FAST_HASHING,
    PASSWORD,
    Account,
    add_user,
    audit_actions,
    bearer,
    forge,
    login,
    mint_session,
    persona_headers,
    persona_login,
    tokens_for,
)
from tests.support.apps import context, make_app, make_settings  # noqa: F401
