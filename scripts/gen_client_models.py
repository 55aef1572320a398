"""Generates ``backend/src/cronplane/client/models.py``: one ``TypedDict`` (a ``Literal`` for a
named enum) per schema of the OpenAPI document (``frontend/openapi.json``), so the Python client
is typed from the same document the console's TypeScript types come from. ``--check`` fails when the file is stale.

Run through ``make openapi`` (which also regenerates the document); never edit models.py by hand.
"""

from __future__ import annotations

import argparse
import json
import keyword
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
SPEC = REPO / "frontend" / "openapi.json"
TARGET = REPO / "backend" / "src" / "cronplane" / "client" / "models.py"

HEADER = '''"""Typed shapes of the cronplane API, generated from the OpenAPI document by
``scripts/gen_client_models.py`` (``make openapi``). Do not edit by hand."""

# ruff: noqa: E501
from __future__ import annotations

from typing import Any, Literal, NotRequired, TypedDict

__all__ = [
{names}
]
'''


def annotation(schema: dict[str, Any]) -> str:
    """The Python type of one property schema."""
    if "$ref" in schema:
        text = schema["$ref"].rsplit("/", 1)[-1]
    elif "anyOf" in schema:
        parts = [t for part in schema["anyOf"] for t in annotation(part).split(" | ")]
        text = " | ".join(dict.fromkeys(t for t in parts if t != "None"))
        if "None" in parts:
            text += " | None"
    elif "enum" in schema:
        text = "Literal[" + ", ".join(json.dumps(v) for v in schema["enum"] if v is not None) + "]"
    else:
        kind = schema.get("type")
        if kind == "array":
            text = f"list[{annotation(schema.get('items', {}))}]"
        elif kind == "object":
            extra = schema.get("additionalProperties")
            value = annotation(extra) if isinstance(extra, dict) and extra else "Any"
            text = f"dict[str, {value}]"
        else:
            text = {"integer": "int", "number": "float", "string": "str",
                    "boolean": "bool"}.get(kind or "", "Any")
    if schema.get("nullable") and text != "Any" and not text.endswith(" | None"):
        text += " | None"
    return text


def render_class(name: str, schema: dict[str, Any]) -> str:
    if "properties" not in schema and "enum" in schema:
        # A named set of values (the status sets, api/vocabulary.py): a Literal alias.
        doc = (schema.get("description") or "").strip()
        comment = f"  # {doc}" if doc else ""
        return f"{name} = {annotation(schema)}{comment}\n"
    required = set(schema.get("required", []))
    fields = []
    for prop, sub in schema.get("properties", {}).items():
        kind = annotation(sub)
        fields.append((prop, kind if prop in required else f"NotRequired[{kind}]"))
    doc = (schema.get("description") or "").strip().replace('"""', "'''")
    if any(keyword.iskeyword(p) or not p.isidentifier() for p, _ in fields):
        body = ", ".join(f"{json.dumps(p)}: {k}" for p, k in fields)
        return f"{name} = TypedDict({json.dumps(name)}, {{{body}}})\n"
    lines = [f"class {name}(TypedDict):"]
    if doc:
        lines.append(f'    """{doc}"""')
    lines.extend(f"    {p}: {k}" for p, k in fields)
    if len(lines) == 1:
        lines.append("    pass")
    return "\n".join(lines) + "\n"


def render(spec: dict[str, Any]) -> str:
    schemas = spec["components"]["schemas"]
    names = sorted(schemas)
    parts = [HEADER.format(names="\n".join(f'    "{n}",' for n in names))]
    parts.extend(render_class(name, schemas[name]) for name in names)
    return "\n\n".join(parts)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail if models.py is stale")
    args = parser.parse_args()
    text = render(json.loads(SPEC.read_text()))
    if args.check:
        if not TARGET.is_file() or TARGET.read_text() != text:
            print(f"{TARGET.relative_to(REPO)} is stale: run `make openapi`", file=sys.stderr)
            return 1
        return 0
    TARGET.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
