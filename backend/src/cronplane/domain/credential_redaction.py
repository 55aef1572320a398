"""Literal credentials written before version 3: which JSON values look like one, and their
redaction (migration 0039, docs/adr/0035-redacting-literal-credentials.md).

Version 2 let a payload carry a credential literally (an ``http.request`` header
``Authorization: Bearer …``); its schedule versions and the audit diffs of its changes kept it,
readable by anyone who reads the project's history. Version 3 names secrets by reference
(``{"$secret": NAME}``, an object, never a string), so any *string* under a credential-looking key
is a literal credential and becomes ``***``, the mask used everywhere else. Pure: no I/O.
"""

from __future__ import annotations

import re
from typing import Any

MASK = "***"
# Header and field names that carry a credential: Authorization and its proxy twin, cookies, API
# keys, and anything ending in token, secret, password or api key (X-Auth-Token, X-Vault-Token,
# client_secret, X-Api-Key …), in any letter case and with '-' or '_'.
CREDENTIAL_NAME = re.compile(
    r"^(?:proxy[-_]?)?authorization$|^(?:set[-_]?)?cookie$|^(?:x[-_])?api[-_]?key$"
    r"|(?:^|[-_])(?:token|secret|password|passwd|api[-_]?key)$|^(?:access|refresh|bearer)[-_]?token$",
    re.IGNORECASE)


def is_credential_name(name: str) -> bool:
    return bool(CREDENTIAL_NAME.search(name))


def redact(value: Any, path: str = "") -> tuple[Any, list[str]]:
    """``value`` with every non-empty string under a credential-looking key replaced by
    ``***``, and the paths (``a.b.0.c``) it replaced. Anything else is returned unchanged."""
    if isinstance(value, dict):
        found: list[str] = []
        out: dict[str, Any] = {}
        for key, item in value.items():
            here = f"{path}.{key}" if path else str(key)
            if isinstance(item, str) and item and item != MASK and is_credential_name(str(key)):
                out[key] = MASK
                found.append(here)
            else:
                out[key], inner = redact(item, here)
                found.extend(inner)
        return out, found
    if isinstance(value, list):
        found = []
        items = []
        for index, item in enumerate(value):
            redacted, inner = redact(item, f"{path}.{index}" if path else str(index))
            items.append(redacted)
            found.extend(inner)
        return items, found
    return value, []
