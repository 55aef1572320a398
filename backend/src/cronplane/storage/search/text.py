"""What the small registries' search boxes share (``schedules.py``, ``users.py``): how much of
the box is read, and the box as a literal part of an ILIKE pattern."""

from __future__ import annotations

# The box is read up to this many characters: a longer one is no more precise, only slower.
MAX_TEXT = 200


def like_escaped(text: str) -> str:
    """``text`` matched literally inside an ILIKE pattern with ``escape='\\\\'``."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
