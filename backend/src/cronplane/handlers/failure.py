"""How a handler's exception reads as an attempt's ``error``: one rule for the worker and for
``cronplane.testing``, so a plugin's test sees the text its jobs will show."""

from __future__ import annotations

import traceback

from cronplane.domain.egress import EgressError

MAX_ERROR_CHARS = 4000


def describe_failure(exc: BaseException) -> str:
    """The headline, then the last frames. An egress refusal reads as the contract spells it
    ("egress denied: …"), with no class name."""
    text = str(exc) if isinstance(exc, EgressError) else f"{type(exc).__name__}: {exc}"
    tail = "".join(traceback.format_exception(exc)[-3:])
    return (text + "\n" + tail)[:MAX_ERROR_CHARS]
