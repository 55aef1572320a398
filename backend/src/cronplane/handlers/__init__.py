"""Handlers: the job types a worker can run. See ``registry.py``.

``management`` imports this package for the catalogue and payload validation; it must stay free
of worker machinery.
"""

from cronplane.handlers.context import Cancelled, HandlerContext
from cronplane.handlers.registry import (
    ENTRY_POINT_GROUP,
    HandlerSpec,
    Registry,
    default_registry,
    handler,
)

__all__ = ["ENTRY_POINT_GROUP", "Cancelled", "HandlerContext", "HandlerSpec", "Registry",
           "default_registry", "handler"]
