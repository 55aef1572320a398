"""The grammars of the names people choose, each defined once.

Management validation, the API schemas (and through them the OpenAPI document the console is
generated from: ``pattern`` and ``maxLength``), ``CRONPLANE_QUEUES`` and the ORM's CHECK
constraints all read these; the migrations that first created those CHECKs keep their own copy
(history does not change), and tests/integration/storage/test_vocabulary.py holds the database
to these.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from cronplane.domain.keys import MAX_KEY_LENGTH


@dataclass(frozen=True)
class NameGrammar:
    """1 to ``max_length`` characters from ``characters`` (a regex character-class body)."""

    characters: str
    max_length: int
    _compiled: re.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_compiled", re.compile(self.pattern))

    @property
    def pattern(self) -> str:
        """Anchored, for OpenAPI, marshmallow and Postgres ``~``."""
        return f"^[{self.characters}]{{1,{self.max_length}}}$"

    @property
    def shape(self) -> str:
        """How an error message names the grammar: ``[a-z0-9_.-]{1,64}``."""
        return f"[{self.characters}]{{1,{self.max_length}}}"

    @property
    def message(self) -> str:
        return f"Must match {self.shape}."

    def matches(self, value: object) -> bool:
        # fullmatch: ``$`` alone would let a trailing newline through.
        return isinstance(value, str) and self._compiled.fullmatch(value) is not None


# A queue: jobs, schedules and CRONPLANE_QUEUES name it; created on first use.
QUEUE_NAME = NameGrammar("a-z0-9_.-", 64)
# A notification channel: schedules' ``notify`` lists name it. Same grammar as a queue today,
# a separate rule because nothing ties the two together.
CHANNEL_NAME = NameGrammar("a-z0-9_.-", 64)
# A project's slug: in URLs, token scopes and secret folders (so no dots, no underscores).
PROJECT_SLUG = NameGrammar("a-z0-9-", 40)

# Job keys: an idempotency key and a concurrency key are 1 to this many characters.
MAX_CONCURRENCY_KEY_LENGTH = MAX_KEY_LENGTH
