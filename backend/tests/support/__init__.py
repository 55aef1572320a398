"""What tests share: one way to wait, one way to prove a refusal changed nothing.

- ``wait_until`` (``waiting.py``): poll a condition on events, never a bare sleep; returns the
  condition's truthy value and raises ``AssertionError`` naming what it waited for on timeout.
- ``assert_unchanged`` (``db_state.py``): a context manager that fails if any row of the named
  tables was inserted, updated or deleted inside it (403/412/422 refusals).
- The app/client factory is ``tests.integration.api.role_clients.make_app`` (one per role).
"""
