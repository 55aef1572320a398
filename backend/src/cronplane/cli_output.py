"""What every ``cronplane`` command shares: ``--output table|json`` and the exit codes scripts
branch on. A command gets both by construction: ``output_option`` (local commands) or ``remote``
(commands that call the API) — and ``tests/acceptance/test_cli_output.py`` walks the command tree
so a command without ``--output`` fails a test.

Exit codes (version 3 contract, "Observability"):

- ``0`` done;
- ``1`` the server refused (a 4xx; the reason on stderr), or the thing asked about is not so
  (``jobs submit --wait`` on a job that ended DEAD, ``audit verify`` on a broken chain);
- ``2`` usage: a bad option or argument (click's own usage errors), a missing ``--url``/``--token``,
  a bad file or configuration — nothing was sent;
- ``3`` the server could not be reached or failed: connection refused, a timeout, a 5xx (503
  during a failover), an answer that is not the API's JSON; for the local commands, the database
  could not be reached or its schema is behind.

``--output json`` prints the API's JSON (one document on stdout, stable keys, for ``jq``);
``--output table`` (the default) aligned columns for people. On a refusal in JSON mode, stdout
carries the server's problem+json document too, so a script can read ``status`` and ``errors``.

Document commands (``export``, ``openapi``) write a document rather than a view of objects: their
``-o/--output`` names the FILE (version 2's spelling, kept), and ``--format`` chooses the document
(``export``: ``yaml|json``; ``openapi``: ``json``); ``--format json`` is their machine-readable
spelling.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

import click

EXIT_OK = 0
EXIT_REFUSED = 1
EXIT_USAGE = 2
EXIT_UNAVAILABLE = 3

TABLE, JSON = "table", "json"
OUTPUTS = (TABLE, JSON)
# "text" is version 2's name for "table", still accepted (not shown in --help).
_ACCEPTED = (TABLE, JSON, "text")
_META_KEY = "cronplane.output"
# Commands whose -o/--output is a FILE; their document is chosen by --format.
DOCUMENT_COMMANDS = frozenset({"export", "openapi"})


def _remember(ctx: click.Context, _param: click.Parameter, value: str) -> str:
    chosen = JSON if value == JSON else TABLE
    ctx.meta[_META_KEY] = chosen
    return chosen


def output_option(func: Callable[..., Any]) -> Callable[..., Any]:
    """``--output/-o table|json`` (default table), also remembered for ``fail`` and ``emit``."""
    return click.option(
        "--output", "-o", "output", type=click.Choice(_ACCEPTED), default=TABLE,
        show_default=True, callback=_remember, is_eager=True, metavar="[table|json]",
        help="table: aligned columns for people; json: the API's JSON, for scripts.")(func)


def current_output() -> str:
    ctx = click.get_current_context(silent=True)
    return str(ctx.meta.get(_META_KEY, TABLE)) if ctx is not None else TABLE


def fail(message: str, code: int, *, problem: Any = None) -> NoReturn:
    """One line on stderr and the exit code; in JSON mode the server's problem document (if
    any) on stdout."""
    if problem is not None and current_output() == JSON:
        click.echo(json.dumps(problem, indent=2, sort_keys=True))
    click.echo(f"cronplane: {message}", err=True)
    sys.exit(code)


def exit_code_for_status(status: int | None) -> int:
    """An HTTP answer's exit code: no answer or a 5xx → 3, a 4xx → 1."""
    if status is None or status >= 500:
        return EXIT_UNAVAILABLE
    return EXIT_REFUSED


def emit(value: Any, table: str) -> None:
    """Print ``value`` as JSON or ``table`` as text, as ``--output`` says."""
    if current_output() == JSON:
        click.echo(json.dumps(value, indent=2, sort_keys=True, default=str))
    else:
        click.echo(table)


Column = tuple[str, Callable[[dict[str, Any]], Any]]


def render_table(rows: Sequence[dict[str, Any]], columns: Sequence[Column],
                 empty: str = "") -> str:
    """Aligned columns with a header; numbers right-aligned. ``empty`` when there are no rows."""
    if not rows:
        return empty
    cells = [[_cell(get(row)) for _, get in columns] for row in rows]
    numeric = [all(_is_number(get(row)) for row in rows) for _, get in columns]
    widths = [max(len(header), *(len(line[i]) for line in cells))
              for i, (header, _) in enumerate(columns)]

    def line(values: Sequence[str]) -> str:
        return "  ".join(v.rjust(w) if num else v.ljust(w)
                         for v, w, num in zip(values, widths, numeric, strict=True)).rstrip()

    return "\n".join([line([h.upper() for h, _ in columns]), *(line(c) for c in cells)])


def render_detail(obj: dict[str, Any]) -> str:
    """One object as ``key: value`` lines (nested values as compact JSON)."""
    return "\n".join(f"{key}: {_cell(value)}" for key, value in obj.items())


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.3f}"
    if isinstance(value, dict | list):
        return json.dumps(value, sort_keys=True, ensure_ascii=False)
    return str(value)


def _is_number(value: Any) -> bool:
    return value is None or (isinstance(value, int | float) and not isinstance(value, bool))


def remote(func: Callable[..., Any]) -> Callable[..., Any]:
    """A command against the API: adds ``--url``, ``--token`` and ``--output``, passes an
    ``ApiClient`` first, and turns API errors into one line and their exit code.

    The command returns ``None`` (it printed itself) or ``(value, table_text[, exit_code])``:
    ``value`` is printed as JSON with ``--output json``, ``table_text`` otherwise.
    """
    from cronplane.client.http import ApiError

    @click.option("--url", envvar="CRONPLANE_URL", help="Server URL (CRONPLANE_URL).")
    @click.option("--token", envvar="CRONPLANE_TOKEN", help="API token (CRONPLANE_TOKEN).")
    @timeout_option
    @output_option
    @click.pass_context
    def wrapper(ctx: click.Context, /, url: str | None, token: str | None, timeout: float,
                output: str, **kwargs: Any) -> None:
        api = client_from(url, token, timeout)
        try:
            result = ctx.invoke(func, api, **kwargs)
        except ApiError as exc:
            fail_api(exc)
        if result is None:
            return
        value, text, *code = result
        emit(value, text)
        if code and code[0]:
            sys.exit(code[0])

    wrapper.__name__ = func.__name__
    wrapper.__doc__ = func.__doc__
    return wrapper


def fail_api(exc: Any) -> NoReturn:
    """An ``ApiError``: its line, its problem document in JSON mode, its exit code."""
    fail(str(exc), exit_code_for_status(exc.status), problem=getattr(exc, "problem", None))


def timeout_option(func: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "--timeout", type=click.FloatRange(min=0.1), envvar="CRONPLANE_TIMEOUT", default=30.0,
        show_default=True, metavar="SECONDS",
        help="Give up on a request after this long (exit 3; CRONPLANE_TIMEOUT).")(func)


def client_from(url: str | None, token: str | None, timeout: float = 30.0) -> Any:
    from cronplane.client.http import ApiClient

    if not url:
        fail("--url or CRONPLANE_URL is required (e.g. http://127.0.0.1:8080)", EXIT_USAGE)
    if not token:
        fail("--token or CRONPLANE_TOKEN is required (an API token, console → API tokens)",
             EXIT_USAGE)
    return ApiClient(url, token, timeout=timeout)
