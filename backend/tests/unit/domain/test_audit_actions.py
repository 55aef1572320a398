"""Every audit event the product writes has a name from ``domain.audit_actions`` (the API's enum and
the console's action filter), and every listed name is written somewhere: read from the source."""

from __future__ import annotations

import re
from pathlib import Path

import cronplane
from cronplane.domain.audit_actions import AUDIT_ACTIONS
from cronplane.storage.migrator import migrations_dir

SOURCE = Path(cronplane.__file__).parent
# A line that hands a name to the trail: record(…, "x.y"), action="x.y", audit_action="x.y",
# a default (audit_action: str = "x.y"), the users' _finish(…, "x.y"), the lease store's
# _audit(conn, "x.y"), the health evaluator's AuditEntry(…, f"x.y.{…}").
_WRITER_LINE = re.compile(
    r"record\(|action=|audit_action: str =|_finish\(|_audit\(|AuditEntry\(|f\"schedule\.alert\.")
_NAME = re.compile(r"f?\"([a-z_]+\.[a-z_.]+)(\{)?")
_SQL_INSERT = re.compile(r"INSERT INTO audit_events.*?;", re.S)
_SQL_NAME = re.compile(r"'([a-z_]+\.[a-z_]+)'")
# The statement ends with its Python string: ") or a triple quote (a function body, 0043).
_MIGRATION_INSERT = re.compile(r"INSERT INTO audit_events.*?(?:\"\)|\"\"\")", re.S)


def _written() -> tuple[set[str], set[str]]:
    names, prefixes = set(), set()
    for path in [*SOURCE.glob("management/*.py"), *SOURCE.glob("execution/*.py"),
                 *SOURCE.glob("storage/*.py")]:
        for line in path.read_text().splitlines():
            if _WRITER_LINE.search(line):
                for name, dynamic in _NAME.findall(line):
                    (prefixes if dynamic else names).add(name)
    for path in SOURCE.glob("storage/sql/*.sql"):
        for statement in _SQL_INSERT.findall(path.read_text()):
            names.update(_SQL_NAME.findall(statement))
    # A migration may write one too (0039: audit.redacted), in a statement of a Python string.
    for path in migrations_dir().glob("versions/*.py"):
        for statement in _MIGRATION_INSERT.findall(path.read_text()):
            names.update(_SQL_NAME.findall(statement))
    # Not event names: logger names and the like on a matching line.
    names = {n for n in names if not n.startswith(("cronplane.", "projects.", "quotas."))}
    return names, prefixes


def test_every_written_audit_name_is_in_the_vocabulary() -> None:
    names, prefixes = _written()
    assert len(names) >= 30, f"the scan found too few names to be reading the writers: {names}"
    unknown = names - set(AUDIT_ACTIONS)
    assert not unknown, f"audit events written but not in domain.audit_actions: {sorted(unknown)}"
    for prefix in prefixes:
        assert any(a.startswith(prefix) for a in AUDIT_ACTIONS), (
            f"a computed name starting {prefix!r} has no entry in domain.audit_actions")


def test_every_listed_audit_name_is_written_somewhere() -> None:
    names, prefixes = _written()
    stale = [a for a in AUDIT_ACTIONS
             if a not in names and not any(a.startswith(p) for p in prefixes)]
    assert not stale, f"listed in domain.audit_actions but never written: {stale}"
    assert len(set(AUDIT_ACTIONS)) == len(AUDIT_ACTIONS), "a name listed twice"
