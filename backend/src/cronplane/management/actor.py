"""Who is asking: passed from the API (or CLI) into every use case, recorded in the audit trail."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from cronplane.domain.roles import Role


@dataclass(frozen=True)
class Actor:
    username: str
    role: Role
    user_id: int | None = None
    token_id: int | None = None  # set when the request used an API token
    session_id: str | None = None  # the refresh family (login) of a browser/session token
    request_id: str | None = None
    ip: str | None = None
    is_persona: bool = False  # a demo persona: anyone on the internet
    # Effective role per project (membership, capped by an API token's role and project).
    # None: every project at ``role`` — instance ADMINs and the system. management/scope.py is
    # the only reader; every project-owned query goes through it.
    memberships: Mapping[str, Role] | None = None
    # The one project a project-scoped API token acts in. Such a token carries no instance role
    # at all (review N2): management/scope.py answers every installation check with "no".
    token_project: str | None = None

    @classmethod
    def system(cls) -> Actor:
        return cls(username="system", role=Role.ADMIN)

    @property
    def is_system(self) -> bool:
        return self.user_id is None and self.username == "system"
