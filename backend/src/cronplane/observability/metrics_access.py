"""Who may scrape ``/metrics`` (the API's and a worker's probe endpoint): one rule for both.

The scrape names every project and queue of the installation, so it is an installation-scope
read (docs/security-model.md). With ``CRONPLANE_METRICS_TOKEN`` set, only a request carrying
``Authorization: Bearer <that token>`` gets it (401 otherwise). Without it, a development or test
server stays open (a laptop's Prometheus needs no setup) and a production server hides the
endpoint (404): an operator who forgot the token gets no scrape rather than a public one.
"""

from __future__ import annotations

import hmac
from enum import Enum


class ScrapeAccess(Enum):
    ALLOWED = 200
    UNAUTHORIZED = 401
    HIDDEN = 404


UNAUTHORIZED_DETAIL = "/metrics needs Authorization: Bearer <CRONPLANE_METRICS_TOKEN>."
HIDDEN_DETAIL = "Not found."


def scrape_access(token: str | None, *, production: bool,
                  authorization: str | None) -> ScrapeAccess:
    if not token:
        return ScrapeAccess.HIDDEN if production else ScrapeAccess.ALLOWED
    scheme, _, presented = (authorization or "").partition(" ")
    if scheme.lower() != "bearer" or not presented:
        return ScrapeAccess.UNAUTHORIZED
    # Constant time: the comparison must not tell a prober how much of the token it guessed.
    if hmac.compare_digest(presented.strip().encode(), token.encode()):
        return ScrapeAccess.ALLOWED
    return ScrapeAccess.UNAUTHORIZED
