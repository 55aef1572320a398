"""What tests share: one way to wait, one way to prove a refusal changed nothing, one way to make
the app and its clients.

- ``wait_until`` (``waiting.py``): poll a condition on events, never a bare sleep; returns the
  condition's truthy value and raises ``AssertionError`` naming what it waited for on timeout.
- ``assert_unchanged`` (``db_state.py``): a context manager that fails if any row of the named
  tables was inserted, updated or deleted inside it (403/412/422 refusals).
- ``make_app`` and ``RoleClient`` (``apps.py``): the app on a test database, with real auth or
  with the role taken from a header; the shared fixtures ``app``, ``fresh_app``, ``clients`` and
  ``fresh_clients`` (``fixtures.py``); users, sign-in and tokens (``accounts.py``).
"""
