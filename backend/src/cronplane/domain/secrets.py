"""Secret references in payloads: ``{"$secret": "NAME"}`` stands for a value kept outside the
database, resolved only when the attempt runs. Pure: finding, substituting and masking; where the
values come from is ``handlers/secret_source.py``.

The payload in the database holds the reference, never the value; anything the run writes back
(result, error, output) goes through ``mask`` so a value that came back in an answer is ``***``.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any
from urllib.parse import quote, quote_plus

REFERENCE_KEY = "$secret"
NAME_PATTERN = re.compile(r"[A-Z0-9_]{1,64}")
MASK = "***"


def _is_reference(value: object) -> bool:
    return isinstance(value, dict) and len(value) == 1 and REFERENCE_KEY in value


def references(payload: Any) -> tuple[set[str], set[str]]:
    """(valid names, invalid names) of every reference anywhere in ``payload``."""
    valid: set[str] = set()
    invalid: set[str] = set()

    def walk(value: Any) -> None:
        if _is_reference(value):
            name = value[REFERENCE_KEY]
            if isinstance(name, str) and NAME_PATTERN.fullmatch(name):
                valid.add(name)
            else:
                invalid.add(str(name)[:80])
        elif isinstance(value, dict):
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk(payload)
    return valid, invalid


def reference_paths(payload: Any) -> dict[tuple[str | int, ...], str]:
    """Where each reference is: ``{path: name}`` (a path as jsonschema writes it)."""
    found: dict[tuple[str | int, ...], str] = {}

    def walk(value: Any, path: tuple[str | int, ...]) -> None:
        if _is_reference(value):
            found[path] = str(value[REFERENCE_KEY])[:80]
        elif isinstance(value, dict):
            for key, item in value.items():
                walk(item, (*path, key))
        elif isinstance(value, list):
            for index, item in enumerate(value):
                walk(item, (*path, index))

    walk(payload, ())
    return found


# What a reference stands for while a payload is validated at submission: a string (a reference
# is one), never the value, which is read only when the attempt runs.
PLACEHOLDER = "\u2063secret\u2063"


def substitute(payload: Any, lookup: Callable[[str], str]) -> Any:
    """``payload`` with every reference replaced by ``lookup(name)`` (a new object)."""
    if _is_reference(payload):
        return lookup(str(payload[REFERENCE_KEY]))
    if isinstance(payload, dict):
        return {key: substitute(value, lookup) for key, value in payload.items()}
    if isinstance(payload, list):
        return [substitute(value, lookup) for value in payload]
    return payload


# A derived form shorter than this is not masked on its own: a two-character line of a PEM file
# or a base64 fragment of a short value would otherwise turn every such pair in the output into
# ``***``. The value itself is masked whatever its length.
MIN_DERIVED = 4


def derived_forms(value: str) -> set[str]:
    """The strings that give ``value`` away: the value, each of its lines, their ``repr``/JSON/
    bytes-literal escapes, URL encodings (``%20`` and ``+``), hex, and base64 (standard and
    URL-safe). Base64 of a value inside a longer text depends on where the value falls in the
    3-byte groups, so each of the three alignments contributes the characters that only the
    value decides (padded or not, they appear in the encoding)."""
    if not value:
        return set()
    bases = {value}
    bases.update(line.strip() for line in value.splitlines())
    for text in list(bases):
        bases.add(repr(text)[1:-1])
        bases.add(json.dumps(text)[1:-1])
        bases.add(json.dumps(text, ensure_ascii=False)[1:-1])
        bases.add(repr(text.encode("utf-8"))[2:-1])
        bases.add(text.replace("\\", "\\\\").replace("'", "\\'").replace('"', '\\"'))
    forms: set[str] = set()
    for text in bases:
        raw = text.encode("utf-8", "surrogatepass")
        forms.update({text, quote(text, safe=""), quote(text), quote_plus(text),
                      raw.hex(), raw.hex().upper()})
        forms.update(_base64_cores(raw))
    return {form for form in forms if form == value or len(form) >= MIN_DERIVED}


def _base64_cores(raw: bytes) -> set[str]:
    cores: set[str] = set()
    for shift in range(3):
        encoded = base64.b64encode(bytes(shift) + raw).decode("ascii")
        start = -(-8 * shift // 6)  # the first character no byte before the value touches
        end = 8 * (shift + len(raw)) // 6  # the last one no byte after it touches, exclusive
        core = encoded[start:end]
        if shift == 0:
            cores.add(encoded)
            cores.add(encoded.rstrip("="))
        cores.add(core)
    cores |= {c.replace("+", "-").replace("/", "_") for c in cores}
    return cores


class Masker:
    """Replaces every derived form of a set of values by ``***``: one compiled pattern, longest
    forms first, so a form that contains another is hidden whole."""

    __slots__ = ("_pattern", "longest")

    def __init__(self, values: Iterable[str]) -> None:
        forms: set[str] = set()
        for value in values:
            forms |= derived_forms(value)
        ordered = sorted(forms, key=len, reverse=True)
        self._pattern = re.compile("|".join(map(re.escape, ordered))) if ordered else None
        self.longest = len(ordered[0]) if ordered else 0

    def __bool__(self) -> bool:
        return self._pattern is not None

    def text(self, text: str) -> str:
        return text if self._pattern is None else self._pattern.sub(MASK, text)

    def __call__(self, value: Any) -> Any:
        """``value`` masked in strings at any depth (dict keys included)."""
        if self._pattern is None:
            return value
        if isinstance(value, str):
            return self._pattern.sub(MASK, value)
        if isinstance(value, Mapping):
            return {self(k) if isinstance(k, str) else k: self(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self(v) for v in value]
        return value

    def stream(self) -> StreamMask:
        return StreamMask(self)

    def spans(self, text: str) -> list[tuple[int, int]]:
        if self._pattern is None:
            return []
        return [match.span() for match in self._pattern.finditer(text)]


class StreamMask:
    """Masks text that arrives in pieces (a program's output): a form split between two writes is
    still found, because the last ``longest - 1`` characters wait for the next piece (or for
    ``flush``) unless a match already ends past them or a line break closes them. Not
    thread-safe: the caller holds a lock."""

    __slots__ = ("_held", "_masker")

    def __init__(self, masker: Masker) -> None:
        self._masker = masker
        self._held = ""

    def feed(self, text: str) -> str:
        raw = self._held + text
        cut = max(0, len(raw) - (self._masker.longest - 1))
        # No derived form spans a line break (a multi-line value is masked line by line), so
        # whatever ends with one is decided now: a command that printed a line and then waits
        # shows that line at once instead of holding back the form's length of its output.
        cut = max(cut, raw.rfind("\n") + 1)
        out: list[str] = []
        position = 0
        # A match starting before ``cut`` is complete already (no form is longer than what
        # follows it); one starting at or after ``cut`` is decided with the next piece.
        for start, end in self._masker.spans(raw):
            if start >= cut:
                break
            out.append(raw[position:start])
            out.append(MASK)
            position = end
        cut = max(cut, position)
        out.append(raw[position:cut])
        self._held = raw[cut:]
        return "".join(out)

    def flush(self) -> str:
        held, self._held = self._held, ""
        return self._masker.text(held)


def mask(value: Any, secrets: Iterable[str]) -> Any:
    """``value`` with every derived form of every secret replaced by ``***`` (see ``Masker``)."""
    return Masker(secrets)(value)
