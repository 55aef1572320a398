"""The typed client (``cronplane.client.api``) against the OpenAPI document: its models are the
document's schemas, regenerated and compared, and every method's body and return types are the
request and response schemas of the operation it names."""

from __future__ import annotations

import inspect
import json
import re
import subprocess
import sys
from pathlib import Path

from cronplane.client import api

REPO = Path(__file__).resolve().parents[3]
SPEC = json.loads((REPO / "frontend" / "openapi.json").read_text())
SCHEMAS = SPEC["components"]["schemas"]


def _ref(schema: dict) -> str:
    if schema.get("type") == "array":
        return f"list[{_ref(schema['items'])}]"
    return schema.get("$ref", "").rsplit("/", 1)[-1]


def _operations() -> dict[str, tuple[str, str]]:
    return {name: member.__operation__ for name, member in vars(api.Cronplane).items()
            if hasattr(member, "__operation__")}


def test_models_are_generated_from_the_current_document() -> None:
    result = subprocess.run([sys.executable, str(REPO / "scripts" / "gen_client_models.py"), "--check"],
                            capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr


def test_every_method_names_a_documented_operation_with_its_types() -> None:
    operations = _operations()
    assert len(operations) >= 20, operations
    for name, (method, path) in operations.items():
        documented = SPEC["paths"].get(f"/api/v1{path}", {}).get(method.lower())
        assert documented, f"{name}: {method} {path} is not in the OpenAPI document"
        signature = inspect.signature(getattr(api.Cronplane, name))
        bodies = [p for p in signature.parameters.values()
                  if str(p.annotation).removesuffix(" | None") in SCHEMAS]
        request = documented.get("requestBody", {}).get("content", {}).get("application/json", {})
        expected_body = _ref(request.get("schema", {})) if request else None
        assert [str(p.annotation).removesuffix(" | None") for p in bodies] == \
            ([expected_body] if expected_body else []), f"{name}: body type"
        success = {code: r for code, r in documented["responses"].items() if code.startswith("2")}
        returns = {_ref(r.get("content", {}).get("application/json", {}).get("schema", {})) or "None"
                   for r in success.values()}
        assert str(signature.return_annotation) in returns, (name, signature.return_annotation, returns)


def test_every_documented_job_and_schedule_read_has_a_method() -> None:
    """The reads automation needs most are all covered (writes like backfill stay API-only)."""
    wanted = {(m.upper(), re.sub("^/api/v1", "", p)) for p, item in SPEC["paths"].items()
              for m in item if m == "get" and re.match(r"^/api/v1/(jobs|schedules|queues)(/\{[a-z_]+\})?(/fires)?$", p)}
    wanted.discard(("GET", "/jobs/count"))
    assert wanted <= set(_operations().values()), sorted(wanted - set(_operations().values()))
