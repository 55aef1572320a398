"""Where secret values come from, per project: the file ``CRONPLANE_SECRETS_DIR/<project>/NAME``
(a mounted Kubernetes or Docker secret); for the project ``default`` also version 2's places,
``CRONPLANE_SECRETS_DIR/NAME`` and the variable ``CRONPLANE_SECRET_NAME``. A name of another
project is not found, exactly like a name that does not exist.

An optional ``NAME.origins`` beside the file binds the secret to the origins it may be sent to
(``domain/egress.py``, ``parse_origins``). Read on every use, so a rotated file takes effect at the
next attempt; never cached, never logged."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cronplane.domain.egress import parse_origins
from cronplane.domain.secrets import NAME_PATTERN, references, substitute

ENV_PREFIX = "CRONPLANE_SECRET_"
# CRONPLANE_SECRET_KEY is the product's JWT signing key, not a user secret: a payload naming KEY
# must never read it (it could be sent anywhere the egress policy allows).
RESERVED_ENV_NAMES = frozenset({"KEY"})
DEFAULT_PROJECT = "default"
ORIGINS_SUFFIX = ".origins"


class UnknownSecret(LookupError):
    def __init__(self, name: str) -> None:
        super().__init__(f"unknown secret {name!r}")
        self.name = name


@dataclass(frozen=True)
class ResolvedPayload:
    """A payload with values in place of references, for one attempt, in memory only."""

    payload: dict[str, Any]
    values: tuple[str, ...]
    names: frozenset[str]
    # The origins the request may reach: the intersection of the bound secrets' ``.origins``;
    # None when no secret of the payload is bound.
    origins: frozenset[str] | None


class SecretSource:
    def __init__(self, directory: Path | None, environ: Mapping[str, str] | None = None,
                 project: str = DEFAULT_PROJECT) -> None:
        self.directory = directory
        self.environ = os.environ if environ is None else environ
        self.project = project

    @classmethod
    def for_settings(cls, settings: Any, project: str = DEFAULT_PROJECT) -> SecretSource:
        directory = getattr(settings, "secrets_dir", None) if settings is not None else None
        return cls(directory if isinstance(directory, Path) else None, project=project)

    def _files(self, name: str) -> Iterator[Path]:
        """Where ``name``'s file may be, in order."""
        if self.directory is None:
            return
        # A project slug is [a-z0-9-]; anything else (a path, "..") names no folder.
        if self.project and all(c.islower() or c.isdigit() or c == "-" for c in self.project):
            yield self.directory / self.project / name
        if self.project == DEFAULT_PROJECT:
            yield self.directory / name

    def get(self, name: str) -> str | None:
        if not NAME_PATTERN.fullmatch(name):
            return None
        for path in self._files(name):
            try:
                return path.read_text().rstrip("\r\n")
            except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
                continue
        if self.project != DEFAULT_PROJECT or name in RESERVED_ENV_NAMES:
            return None
        return self.environ.get(ENV_PREFIX + name)

    def exists(self, name: str) -> bool:
        """Whether ``get`` would find ``name``, without reading a value (submission uses this:
        a value is read only when an attempt runs)."""
        if not NAME_PATTERN.fullmatch(name):
            return False
        if any(path.is_file() for path in self._files(name)):
            return True
        return (self.project == DEFAULT_PROJECT and name not in RESERVED_ENV_NAMES
                and ENV_PREFIX + name in self.environ)

    def origins(self, name: str) -> frozenset[str] | None:
        """The origins ``name`` is bound to (its ``.origins`` file beside the value's file), or
        None when it is not bound. Only the file that holds the value counts."""
        if not NAME_PATTERN.fullmatch(name):
            return None
        for path in self._files(name):
            if path.is_file():
                bound = path.with_name(name + ORIGINS_SUFFIX)
                try:
                    return parse_origins(bound.read_text())
                except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
                    return None
        return None

    def names(self) -> list[str]:
        """Every name ``get`` would find, sorted: the directory's files (Kubernetes' ``..data``
        bookkeeping, ``.origins`` files and other names outside the pattern skipped), then (for
        ``default``) the variables. Names only: nothing here reads a value."""
        found: set[str] = set()
        folders = {path.parent for path in self._files("X")}
        for folder in folders:
            if folder.is_dir():
                found.update(entry.name for entry in folder.iterdir()
                             if NAME_PATTERN.fullmatch(entry.name) and entry.is_file())
        if self.project == DEFAULT_PROJECT:
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

    def resolve_payload(self, payload: dict[str, Any]) -> ResolvedPayload:
        """The payload with values in place of references. Raises UnknownSecret."""
        names, _invalid = references(payload)
        if not names:
            return ResolvedPayload(payload, (), frozenset(), None)
        values = {name: self.resolve(name) for name in names}
        origins: frozenset[str] | None = None
        for name in sorted(names):
            bound = self.origins(name)
            if bound is not None:
                origins = bound if origins is None else origins & bound
        return ResolvedPayload(substitute(payload, values.__getitem__),
                               tuple(values.values()), frozenset(names), origins)

