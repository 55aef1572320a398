"""The API's JSON encoder: orjson for response bodies, the standard library where they differ.

Encoding a 50-row ``GET /jobs`` page with ``json.dumps`` cost ~1.3 ms of the request's ~6 ms CPU
(issue 16); orjson encodes the same page in a tenth of that. Bodies stay the same JSON as Flask's
``DefaultJSONProvider`` would write (sorted keys, compact, a trailing newline): values orjson would
encode differently — datetimes and dataclasses (Flask has its own rules), integers beyond 64 bits,
non-string keys — go through Flask's encoder instead. The one byte-level difference is that
non-ASCII characters are written as UTF-8 rather than ``\\uXXXX`` escapes (the same JSON text).
"""

from __future__ import annotations

from typing import Any

import orjson
from flask import Response
from flask.json.provider import DefaultJSONProvider
from werkzeug.sansio.response import Response as BaseResponse

# Datetimes, dates and dataclasses reach ``default`` (Flask's rules: an HTTP date, ``asdict``)
# rather than orjson's own formats.
_OPTIONS = orjson.OPT_SORT_KEYS | orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS


class FastJSONProvider(DefaultJSONProvider):
    """``DefaultJSONProvider`` with orjson doing the compact, sorted encoding of responses."""

    def encode(self, obj: Any) -> bytes:
        """``obj`` as compact, key-sorted UTF-8 JSON, as ``DefaultJSONProvider`` would write it."""
        try:
            return orjson.dumps(obj, default=self.default, option=_OPTIONS)
        except (orjson.JSONEncodeError, TypeError):
            # An integer beyond 64 bits, a non-string key, a value neither encoder knows (which
            # raises again below, as it did before): exactly the body Flask's encoder wrote.
            return super().dumps(obj, separators=(",", ":")).encode()

    def dumps(self, obj: Any, **kwargs: Any) -> str:
        if kwargs and kwargs != {"separators": (",", ":")}:
            return super().dumps(obj, **kwargs)  # indented, or other options asked for
        return self.encode(obj).decode()

    def response(self, *args: Any, **kwargs: Any) -> BaseResponse:
        if (self.compact is None and self._app.debug) or self.compact is False:
            return super().response(*args, **kwargs)
        body = self.encode(self._prepare_response_obj(args, kwargs)) + b"\n"
        # Flask's Response: the app keeps the default response_class.
        return Response(body, mimetype=self.mimetype)
