"""How many examples a property test draws, by Hypothesis profile.

- ``dev`` (the default: the edit loop, ``make test-fast`` and ``make test``): enough examples to
  catch a broken rule on every change, cheap enough for two shared cores;
- ``ci-full`` (``make chaos``, or ``pytest --hypothesis-profile=ci-full``): the full counts, which
  search the corners (the croniter oracle at 2,000).

A test states both numbers with ``examples(full, dev=...)``; the profile picks one.
"""

from __future__ import annotations

from hypothesis import settings

DEV = "dev"
CI_FULL = "ci-full"

settings.register_profile(DEV, max_examples=50)
settings.register_profile(CI_FULL, max_examples=100, print_blob=True)


def examples(full: int, *, dev: int) -> int:
    return full if settings.get_current_profile_name() == CI_FULL else dev
