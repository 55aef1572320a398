"""Moved to ``tests/support/apps.py``; this alias keeps branches in flight importing. New tests
use the ``clients`` fixture or ``RoleClient.on(database_url, **settings)``."""

from functools import partial

from tests.support.apps import ROLE_HEADER, RoleClient  # noqa: F401
from tests.support.apps import make_app as _make_app

make_app = partial(_make_app, roles_by_header=True)
