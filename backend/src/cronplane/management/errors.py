"""Errors of the management plane. The API maps each class to one HTTP status (problem+json);
the CLI prints ``str(err)``. Field errors are keyed by the request body's field names."""

from __future__ import annotations

from collections.abc import Mapping


class ManagementError(Exception):
    status = 400
    title = "Bad request"

    def __init__(self, detail: str, *, errors: Mapping[str, list[str]] | None = None) -> None:
        super().__init__(detail)
        self.detail = detail
        self.errors = dict(errors) if errors else None


class InvalidInput(ManagementError):
    """Semantically invalid input (unknown handler, bad cron, payload fails its schema)."""

    status = 422
    title = "Unprocessable content"


class NotFound(ManagementError):
    status = 404
    title = "Not found"


class Conflict(ManagementError):
    """The request conflicts with the current state (duplicate name, job already finished)."""

    status = 409
    title = "Conflict"


class PreconditionFailed(ManagementError):
    """``If-Match`` named a version that is no longer current."""

    status = 412
    title = "Precondition failed"


class Unauthenticated(ManagementError):
    status = 401
    title = "Unauthorized"


class Forbidden(ManagementError):
    status = 403
    title = "Forbidden"


class TooManyRequests(ManagementError):
    status = 429
    title = "Too many requests"

    def __init__(self, detail: str, *, retry_after: int,
                 errors: Mapping[str, list[str]] | None = None) -> None:
        super().__init__(detail, errors=errors)
        self.retry_after = retry_after


class RateQuotaExceeded(TooManyRequests):
    """A project's ``enqueue_per_minute`` is used up: 429 with ``Retry-After``, problem type
    ``…/quota-exceeded`` like the counting quotas, the quota named in ``errors``."""

    title = "Quota exceeded"


class QuotaExceeded(ManagementError):
    """A project quota (``max_schedules``, ``max_pending_jobs``) is reached: problem type
    ``…/quota-exceeded``, the quota named in ``errors``."""

    status = 409
    title = "Quota exceeded"

    def __init__(self, project: str, quota: str, limit: int) -> None:
        super().__init__(f"project {project!r} has reached its {quota} quota ({limit})",
                         errors={quota: [f"Project {project!r} allows at most {limit}."]})
        self.quota = quota


class Unavailable(ManagementError):
    """The server cannot answer now (database unreachable, every hashing slot busy): 503 with
    ``Retry-After``; nothing was changed."""

    status = 503
    title = "Service unavailable"

    def __init__(self, detail: str, *, retry_after: int) -> None:
        super().__init__(detail)
        self.retry_after = retry_after
