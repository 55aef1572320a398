"""The app and client fixtures every in-process API test shares (a pytest plugin loaded by
``tests/conftest.py``). A module that needs other settings builds its own with ``make_app``.

- ``app`` / ``clients``: one per test module, on the module's ``database_url``.
- ``fresh_app`` / ``fresh_clients``: one per test, on its own database (threaded tests, and tests
  that count every row).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:  # the app is imported when a test asks for it: unit tests never pay for Flask
    from flask import Flask

    from tests.support.apps import RoleClient


@pytest.fixture(scope="module")
def app(database_url: str) -> Iterator[Flask]:
    from tests.support.apps import close_app, make_app

    app = make_app(database_url)
    yield app
    close_app(app)


@pytest.fixture
def fresh_app(fresh_database_url: str) -> Iterator[Flask]:
    from tests.support.apps import close_app, make_app

    app = make_app(fresh_database_url)
    yield app
    close_app(app)


@pytest.fixture(scope="module")
def clients(database_url: str) -> Iterator[RoleClient]:
    from tests.support.apps import RoleClient

    clients = RoleClient.on(database_url)
    yield clients
    clients.close()


@pytest.fixture
def fresh_clients(fresh_database_url: str) -> Iterator[RoleClient]:
    from tests.support.apps import RoleClient

    clients = RoleClient.on(fresh_database_url)
    yield clients
    clients.close()
