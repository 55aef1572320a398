"""Where secret values come from: the file ``CRONPLANE_SECRETS_DIR/NAME`` (a mounted Kubernetes
or Docker secret), else the variable ``CRONPLANE_SECRET_NAME``. Read on every use, so a rotated
file takes effect at the next attempt; never cached, never logged."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from cronplane.domain.secrets import NAME_PATTERN, references, substitute

ENV_PREFIX = "CRONPLANE_SECRET_"
# CRONPLANE_SECRET_KEY is the product's JWT signing key, not a user secret: a payload naming KEY
# must never read it (it could be sent anywhere the egress policy allows).
RESERVED_ENV_NAMES = frozenset({"KEY"})


class UnknownSecret(LookupError):
    def __init__(self, name: str) -> None:
        super().__init__(f"unknown secret {name!r} (no file in CRONPLANE_SECRETS_DIR and no "
                         f"{ENV_PREFIX}{name})")
        self.name = name


class SecretSource:
    def __init__(self, directory: Path | None, environ: Mapping[str, str] | None = None) -> None:
        self.directory = directory
        self.environ = os.environ if environ is None else environ

    @classmethod
    def for_settings(cls, settings: Any) -> SecretSource:
        directory = getattr(settings, "secrets_dir", None) if settings is not None else None
        return cls(directory if isinstance(directory, Path) else None)

    def get(self, name: str) -> str | None:
        if not NAME_PATTERN.fullmatch(name):
            return None
        if self.directory is not None:
            path = self.directory / name
            try:
                return path.read_text().rstrip("\r\n")
            except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
                pass
        if name in RESERVED_ENV_NAMES:
            return None
        return self.environ.get(ENV_PREFIX + name)

    def names(self) -> list[str]:
        """Every name ``get`` would find, sorted: the directory's files (Kubernetes' ``..data``
        bookkeeping and other names outside the pattern skipped), then the variables. Names
        only: nothing here reads a value."""
        found: set[str] = set()
        if self.directory is not None and self.directory.is_dir():
            found.update(entry.name for entry in self.directory.iterdir()
                         if NAME_PATTERN.fullmatch(entry.name) and entry.is_file())
        found.update(key[len(ENV_PREFIX):] for key in self.environ
                     if key.startswith(ENV_PREFIX)
                     and NAME_PATTERN.fullmatch(key[len(ENV_PREFIX):])
                     and key[len(ENV_PREFIX):] not in RESERVED_ENV_NAMES)
        return sorted(found)

    def resolve(self, name: str) -> str:
        value = self.get(name)
        if value is None:
            raise UnknownSecret(name)
        return value

    def resolve_payload(self, payload: dict[str, Any]) -> tuple[dict[str, Any], tuple[str, ...]]:
        """(the payload with values in place of references, the values used). Raises
        UnknownSecret."""
        names, _invalid = references(payload)
        if not names:
            return payload, ()
        values = {name: self.resolve(name) for name in names}
        resolved = substitute(payload, values.__getitem__)
        return resolved, tuple(values.values())
