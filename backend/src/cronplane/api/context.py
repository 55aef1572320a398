"""The management context of the running app, for views: the one way a resource reaches the
management plane's settings and database (attached by ``create_app``)."""

from __future__ import annotations

from flask import current_app

from cronplane.management.context import ManagementContext


def management_context() -> ManagementContext:
    context: ManagementContext = current_app.extensions["cronplane"]
    return context
