import pytest

from cronplane.storage.queries import QUERIES, parse


def test_named_blocks_are_split_with_their_comments() -> None:
    text = "-- name: a\n-- why a\nSELECT 1;\n\n-- name: b\nSELECT 2;\n"
    assert parse(text) == {"a": "-- why a\nSELECT 1;", "b": "SELECT 2;"}


def test_duplicate_names_are_an_error_not_a_silent_override() -> None:
    with pytest.raises(ValueError, match="duplicate"):
        parse("-- name: a\nSELECT 1;\n-- name: a\nSELECT 2;\n")


def test_every_shipped_query_loads_and_is_unique() -> None:
    assert len(QUERIES) > 0
    for name in QUERIES:
        assert QUERIES[name].strip(), name
