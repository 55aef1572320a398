"""Roles, ordered: VIEWER < OPERATOR < ADMIN. One role per user."""

from __future__ import annotations

from enum import IntEnum


class Role(IntEnum):
    VIEWER = 1
    OPERATOR = 2
    ADMIN = 3

    @classmethod
    def parse(cls, name: str) -> Role:
        try:
            return cls[name.upper()]
        except KeyError:
            raise ValueError(f"unknown role {name!r} (VIEWER, OPERATOR or ADMIN)") from None

    def allows(self, required: Role) -> bool:
        return self >= required


ROLE_NAMES = tuple(role.name for role in Role)  # how roles are stored and spoken in the API
