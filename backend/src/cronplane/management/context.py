"""What the management plane needs to run: settings and the database, built once per process."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from cronplane.config import Settings
from cronplane.storage.connections import CONNECT_TIMEOUT_SECONDS
from cronplane.storage.credential_cache import CredentialCache
from cronplane.storage.database import Database


@dataclass
class ManagementContext:
    settings: Settings
    db: Database
    # Verified credentials of this process (storage/credential_cache.py); None: every request
    # asks the database.
    credentials: CredentialCache | None = None

    def now(self) -> datetime:
        """The injected clock's time (the one SQL reads too: ``Database.clock``, ADR 0034)."""
        return self.db.clock.now()

    @classmethod
    def build(cls, settings: Settings, database_url: str) -> ManagementContext:
        # A request waits a few seconds for a connection, then gets 503 (not a hung thread).
        db = Database(database_url, application_name="cronplane-api",
                      wait_seconds=CONNECT_TIMEOUT_SECONDS,
                      search_timeout_ms=round(settings.search_timeout_seconds * 1000),
                      direct_url=settings.direct_database_url)
        return cls(settings=settings, db=db, credentials=CredentialCache(db))
