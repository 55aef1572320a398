"""What the management plane needs to run: settings and the database, built once per process."""

from __future__ import annotations

from dataclasses import dataclass

from cronplane.config import Settings
from cronplane.storage.database import Database


@dataclass
class ManagementContext:
    settings: Settings
    db: Database

    @classmethod
    def build(cls, settings: Settings, database_url: str) -> ManagementContext:
        return cls(settings=settings,
                   db=Database(database_url, application_name="cronplane-api"))
