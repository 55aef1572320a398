"""The README's and the docs' code blocks, run as written against a real ``cronplane serve``
(execution on), and the documentation's structure checked without one.

Every ```` ```sh ```` and ```` ```python ```` block of the pages in ``DOCUMENTS`` runs, in that order
(a later page may use what an earlier one made: the CLI page triggers a schedule that Schedules as
code applied), each in a fresh shell or interpreter whose working directory holds ``examples/`` and
a ``.cronplane`` that is the server's data directory (as after ``make run``). ``127.0.0.1:8080`` and
``localhost:8080`` are the test server's address; ``CRONPLANE_URL``/``URL`` and
``CRONPLANE_TOKEN``/``TOKEN`` (an ADMIN API token) are set, and so are ``DATABASE_URL`` (the
server's database), ``RESTORE_URL`` (an empty database) and a ``PATH`` whose
``pg_dump``/``pg_restore`` match the server; so an ``export`` line naming a placeholder (``…``) is
the reader's own step and is left out. A ``# → "…"`` comment is output that line must print (``…``
inside it: anything). A block that needs what a test machine lacks is preceded by
``<!-- docs-test: skip — REASON -->`` and REASON must name the test that covers it instead.

Without a server: a page of ``docs/`` with a runnable block must be in ``DOCUMENTS``; every
relative link of the README and ``docs/`` resolves to a file (and its ``#anchor`` to a heading);
the README stays under 15 KB; ``docs/README.md`` lists every page; and the environment variables
the code reads are exactly the ones in the table of ``docs/configuration.md``.
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.acceptance.serve_process import admin_token
from tests.support.servers import Serve

REPO = Path(__file__).resolve().parents[3]
DOCS = REPO / "docs"
# The pages whose blocks run, in the order they run.
DOCUMENTS = (REPO / "README.md", DOCS / "schedules-as-code.md", DOCS / "cli.md",
             DOCS / "notifications.md", DOCS / "operations.md")
# Every page the link, index and skip checks read (the design records included).
PAGES = (REPO / "README.md", *sorted(DOCS.rglob("*.md")))
FENCE = re.compile(r"^```(sh|python)\n(.*?)^```$", re.S | re.M)
SKIP = re.compile(r"<!-- docs-test: skip — (.+?) -->\s*$")
EXPECT = re.compile(r'# → "(.*)"\s*$')
MARK = "@@readme-line-done@@"


@dataclass(frozen=True)
class Block:
    language: str
    code: str
    line: int
    document: str
    section: str
    skip: str | None


def readme_blocks(documents: tuple[Path, ...] = DOCUMENTS) -> list[Block]:
    blocks = []
    for document in documents:
        text = document.read_text()
        for match in FENCE.finditer(text):
            before = text[: match.start()].rstrip("\n").splitlines()
            heading = next((line.lstrip("# ") for line in reversed(before) if line.startswith("#")), "")
            skip = SKIP.search(before[-1]) if before else None
            blocks.append(Block(match.group(1), match.group(2), len(before) + 1,
                                document.relative_to(REPO).as_posix(), heading,
                                skip.group(1) if skip else None))
    return blocks


def logical_lines(code: str) -> list[str]:
    """Shell lines with backslash continuations joined; blank and comment-only lines dropped."""
    lines: list[str] = []
    pending = ""
    for raw in code.splitlines():
        if raw.rstrip().endswith("\\"):
            pending += raw.rstrip()[:-1] + " "
            continue
        line = pending + raw
        pending = ""
        if line.strip() and not line.lstrip().startswith("#"):
            lines.append(line)
    return lines


def expected_in(output: str, comment_line: str) -> str | None:
    """None when every part of the line's ``# → "…"`` expectation is in ``output``, in order."""
    expected = EXPECT.search(comment_line)
    if not expected:
        return None
    position = 0
    for part in (p.strip() for p in expected.group(1).replace('\\"', '"').split("…")):
        found = output.find(part, position)
        if found < 0:
            return f"should print {expected.group(1)!r}"
        position = found + len(part)
    return None


def test_the_readme_has_blocks_and_every_skip_names_its_covering_test() -> None:
    assert sum(1 for b in readme_blocks() if b.skip is None) >= 5, \
        [b.section for b in readme_blocks()]
    for block in readme_blocks(PAGES):
        if block.skip is not None:
            named = re.findall(r"`?((?:backend/)?(?:tests|e2e)/[\w/]+\.py)`?", block.skip)
            assert named, f"{block.document}:{block.line}: the skip reason names no covering test"
            for path in named:
                assert (REPO / path).is_file() or (REPO / "backend" / path).is_file(), path


def test_every_page_with_a_runnable_block_is_run() -> None:
    runnable = {b.document for b in readme_blocks(PAGES) if b.skip is None}
    listed = {d.relative_to(REPO).as_posix() for d in DOCUMENTS}
    assert runnable <= listed, (f"{sorted(runnable - listed)} carry sh/python blocks that no test "
                                "runs: add them to DOCUMENTS (in the order they may run) or mark a "
                                "block with its docs-test skip")


LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)|!\[[^\]]*\]\(([^)\s]+)\)")
FENCED = re.compile(r"^```.*?^```$", re.S | re.M)
CODE = re.compile(rf"{FENCED.pattern}|`[^`\n]*`", re.S | re.M)


def anchors(page: Path) -> set[str]:
    """GitHub's heading ids: lower case, punctuation dropped, spaces to hyphens, repeats -1, -2."""
    seen: dict[str, int] = {}
    found = set()
    for heading in re.findall(r"^#+ (.+?)\s*$", FENCED.sub("", page.read_text()), re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")
        found.add(f"{slug}-{seen[slug]}" if slug in seen else slug)
        seen[slug] = seen.get(slug, 0) + 1
    return found


def test_every_relative_link_resolves_to_a_file_and_its_heading() -> None:
    broken = []
    for page in PAGES:
        for match in LINK.finditer(CODE.sub("", page.read_text())):
            target = match.group(1) or match.group(2)
            if re.match(r"^[a-z][a-z+.-]*:", target):
                continue  # https:, mailto: — not ours to check
            path, _, fragment = target.partition("#")
            resolved = (page.parent / path).resolve() if path else page
            where = f"{page.relative_to(REPO)}: {target}"
            if not resolved.exists():
                broken.append(f"{where} (no such file)")
            elif fragment and resolved.suffix == ".md" and fragment not in anchors(resolved):
                broken.append(f"{where} (no heading #{fragment})")
    assert not broken, "\n".join(broken)


def test_the_readme_stays_a_readme() -> None:
    size = len((REPO / "README.md").read_bytes())
    assert size <= 15_000, (f"README.md is {size} bytes; keep it under 15 KB (first run, quick "
                            "start, the design, links) and move the rest into a page of docs/")


def test_the_docs_index_lists_every_page() -> None:
    index = (DOCS / "README.md").read_text()
    listed = {m.split("#")[0] for m in re.findall(r"\]\(([^)\s]+)\)", index)}
    pages = {p.relative_to(DOCS).as_posix() for p in DOCS.glob("*.md")} - {"README.md"}
    assert not pages - listed, f"docs/README.md does not list {sorted(pages - listed)}"
    assert "docs/README.md" in (REPO / "README.md").read_text(), "the README links the index"
    records = (DOCS / "adr" / "README.md").read_text()
    rows = set(re.findall(r"^\| \[\d{4}\]\(([^)]+)\)", records, re.M))
    files = {p.name for p in (DOCS / "adr").glob("[0-9][0-9][0-9][0-9]-*.md")}
    assert files == rows, (f"docs/adr/README.md: one row per record, first column the link; "
                           f"missing {sorted(files - rows)}, no such file {sorted(rows - files)}")


def test_every_function_and_trigger_of_the_schema_is_on_the_database_page() -> None:
    schema = (REPO / "backend" / "src" / "cronplane" / "storage" / "sql" / "schema.sql").read_text()
    page = (DOCS / "database-program.md").read_text()
    objects = {*re.findall(r"^CREATE FUNCTION public\.(\w+)", schema, re.M),
               *re.findall(r"^CREATE TRIGGER (\w+)", schema, re.M)}
    missing = sorted(name for name in objects if not re.search(rf"`{name}\b", page))
    assert not missing, (f"docs/database-program.md does not name {missing}: add what each does "
                         "and the Python that relies on it")


# What the code reads: a full name (a name ending in _ is a prefix, e.g. CRONPLANE_SECRET_<NAME>).
READ = re.compile(r"\b(CRONPLANE_[A-Z0-9_]*[A-Z0-9])\b")
SOURCES = (*sorted((REPO / "backend" / "src").rglob("*.py")), REPO / "backend" / "hatch_build.py")


def documented_variables() -> set[str]:
    text = (DOCS / "configuration.md").read_text()
    table = text.split("## Environment variables", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in table.splitlines() if line.startswith("| `")]
    names = [name for row in rows for name in re.findall(r"`([A-Z][A-Z0-9_]+)`", row.split("|")[1])]
    assert len(names) == len(set(names)), "a variable has two rows in docs/configuration.md"
    return set(names)


def test_every_environment_variable_is_in_the_one_table_and_every_row_is_read() -> None:
    source = "\n".join(path.read_text() for path in SOURCES)
    read = set(READ.findall(source))
    documented = documented_variables()
    missing = read - documented
    assert not missing, (f"read in backend/src but not in docs/configuration.md's table: "
                         f"{sorted(missing)}: add a row (meaning, default)")
    unread = {name for name in documented if not re.search(rf"\b{name}\b", source)}
    assert not unread, f"docs/configuration.md documents variables nothing reads: {sorted(unread)}"


@pytest.fixture(scope="module")
def server(make_database, tmp_path_factory):
    data = tmp_path_factory.mktemp("readme-data")
    url = make_database()
    serve = Serve(url, data, CRONPLANE_EXECUTION="on")
    try:
        serve.wait_ready()
        yield serve, data, url
    finally:
        serve.stop()


@pytest.fixture
def empty_database(pg):
    name = f"cp_restore_{secrets.token_hex(4)}"
    pg.create_database(name)
    # Restored by the role that owns it (the runtime role may not create tables).
    yield pg.owner_url(name)
    pg.drop_database(name)


def _rewrite(code: str, base: str) -> str:
    host = base.removeprefix("http://")
    return code.replace("http://127.0.0.1:8080", base).replace("localhost:8080", host)


def _run_sh(block: Block, work: Path, env: dict[str, str], base: str) -> None:
    lines = [line for line in logical_lines(_rewrite(block.code, base))
             if not (line.lstrip().startswith("export ") and "…" in line)]
    script = ["set -eo pipefail"]
    for line in lines:
        script += [line, f"echo {MARK}"]
    result = subprocess.run(["bash", "-c", "\n".join(script)], cwd=work, env=env,
                            capture_output=True, text=True, timeout=180, check=False)
    outputs = result.stdout.split(f"{MARK}\n")
    done = len(outputs) - 1
    if result.returncode != 0:
        failed = lines[done] if done < len(lines) else "?"
        pytest.fail(f"{block.document}:{block.line} ({block.section}): {failed!r} exited "
                    f"{result.returncode}:\n{outputs[-1]}{result.stderr}")
    for line, output in zip(lines, outputs, strict=False):
        problem = expected_in(output, line)
        assert problem is None, f"{block.document}:{block.line}: {line!r} {problem}:\n{output}"


def _run_python(block: Block, work: Path, env: dict[str, str], base: str) -> None:
    code = _rewrite(block.code, base)
    result = subprocess.run([sys.executable, "-c", code], cwd=work, env=env,
                            capture_output=True, text=True, timeout=180, check=False)
    assert result.returncode == 0, f"{block.document}:{block.line}: {result.stdout}{result.stderr}"
    position = 0
    for line in code.splitlines():
        problem = expected_in(result.stdout[position:], line)
        assert problem is None, f"{block.document}:{block.line}: {line!r} {problem}:\n{result.stdout}"


def test_every_documented_block_runs_as_written(server, empty_database, tmp_path) -> None:
    serve, data, database_url = server
    token = admin_token_from_first_run(serve, data)
    work = tmp_path / "work"
    shutil.copytree(REPO / "examples", work / "examples")
    (work / ".cronplane").symlink_to(data)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CRONPLANE_", "DATABASE"))}
    env.update({"CRONPLANE_URL": serve.base, "URL": serve.base, "CRONPLANE_TOKEN": token,
                "TOKEN": token, "DATABASE_URL": database_url, "RESTORE_URL": empty_database,
                "PATH": os.pathsep.join([str(Path(sys.executable).parent), *_postgres_bin(),
                                         env.get("PATH", "")])})
    ran = 0
    for block in readme_blocks():
        if block.skip is not None:
            continue
        (_run_sh if block.language == "sh" else _run_python)(block, work, env, serve.base)
        ran += 1
    assert ran >= 7
    assert (work / "schedules.yaml").is_file(), "the Schedules as code export wrote its file"
    assert (work / "cronplane.dump").is_file(), "the operations guide's backup wrote its dump"


def _postgres_bin() -> list[str]:
    """The embedded server's own client tools (pg_dump must not be older than the server)."""
    if os.environ.get("TEST_DATABASE_URL") or os.environ.get("DATABASE_URL"):
        return []
    import pgserver

    return [str(Path(pgserver.__file__).parent / "pginstall" / "bin")]


def admin_token_from_first_run(serve: Serve, data: Path) -> str:
    """The first-run admin's password is in the data directory, as the README says."""
    password = (data / "initial-admin-password").read_text().strip()
    return admin_token(serve, "admin", password, "readme")
