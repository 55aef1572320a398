"""GET /jobs reads ``payload`` and ``result`` with orjson (issue 16): the same values as
psycopg's ``json.loads``, including the integers orjson alone would turn into floats."""

from __future__ import annotations

import json

import pytest
from psycopg.adapt import AdaptersMap
from psycopg.postgres import adapters, types

from cronplane.storage.job_list import _JsonbLoader

TEXTS = [
    b"{}", b"[]", b'"text"', b"null", b"true", b'{"n": 1, "s": "\\u00e9\\n", "a": [1.5, -0.0]}',
    b"123456789012345678901234567890", b"-9223372036854775809", b"18446744073709551616",
    b"9223372036854775807", b'{"big": ' + b"1" + b"0" * 400 + b"}", b"0.0000001", b"1.5e300",
    b'"\\ud800"',  # a lone surrogate escape: json.loads reads it, orjson refuses it
]


@pytest.mark.parametrize("text", TEXTS)
def test_the_jsonb_loader_reads_what_json_loads_reads(text: bytes) -> None:
    loader = _JsonbLoader(types["jsonb"].oid, AdaptersMap(adapters))
    value = loader.load(memoryview(text))
    expected = json.loads(text)
    assert value == expected and type(value) is type(expected)
    assert json.dumps(value) == json.dumps(expected)  # ints stay ints, floats floats
