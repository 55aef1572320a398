"""Whether an error means "the database cannot be used just now" (the API's 503, not a 500)."""

from __future__ import annotations

from cronplane.storage.unreachable import unreachable

DATABASE_RETRY_AFTER_SECONDS = 5


def database_unreachable(error: BaseException) -> bool:
    return unreachable(error)
