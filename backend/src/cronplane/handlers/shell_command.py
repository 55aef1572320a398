"""``shell.command {argv}``: runs an allow-listed program; off unless ``CRONPLANE_SHELL_COMMANDS``
names absolute paths.

An argv list only, executed without a shell, so a payload can never inject shell syntax.
``argv[0]`` must equal one of the configured paths (checked at submission and again on the
worker, which fails closed without settings). The program runs in its own session and process
group, so at its deadline or on cancel the whole group — grandchildren included — is killed. Its
environment is PATH, HOME, LANG and the job's id and attempt only: never the product's own
variables (database URL, signing key, admin password). An instance handler: only an instance
ADMIN defines a schedule with it or submits it (``scope="instance"``, management/scope.py); an
OPERATOR may still trigger such a schedule.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
from typing import IO, Any

from cronplane.handlers.context import HandlerContext
from cronplane.handlers.registry import handler

MAX_OUTPUT_CHARS = 4000
SAFE_PATH = "/usr/local/bin:/usr/bin:/bin"
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "argv": {"type": "array", "items": {"type": "string", "maxLength": 4096},
                 "minItems": 1, "maxItems": 256},
    },
    "required": ["argv"],
    "additionalProperties": False,
}


class CommandFailed(Exception):
    pass


def allowed_commands(settings: Any) -> tuple[str, ...]:
    value = getattr(settings, "shell_commands", ()) if settings is not None else ()
    return tuple(value) if isinstance(value, tuple | list) else ()


def check_command(payload: dict[str, Any], settings: Any) -> list[str]:
    """At submission: argv[0] must be one of the allowed absolute paths, spelled exactly."""
    allowed = allowed_commands(settings)
    program = str(payload["argv"][0])
    if program not in allowed:
        return [f"argv/0: {program!r} is not allowed; CRONPLANE_SHELL_COMMANDS lists "
                f"{', '.join(allowed) or 'nothing'}"]
    return []


def child_environment(ctx: HandlerContext) -> dict[str, str]:
    return {"PATH": SAFE_PATH, "HOME": os.environ.get("HOME", "/"),
            "LANG": os.environ.get("LANG", "C.UTF-8"),
            "CRONPLANE_JOB_ID": str(ctx.job_id), "CRONPLANE_ATTEMPT": str(ctx.attempt)}


def _kill_group(process: subprocess.Popen[str]) -> None:
    # The child leads its own group (start_new_session): killing the group reaches everything it
    # started, even after the child itself has exited.
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)


class _Tail:
    """Reads one of the child's pipes line by line into the attempt's output (live, masked by
    the context), keeping the last ``MAX_OUTPUT_CHARS`` for the result."""

    def __init__(self, stream: IO[str], ctx: HandlerContext) -> None:
        self.text = ""
        self._stream = stream
        self._ctx = ctx
        self.thread = threading.Thread(target=self._pump, daemon=True,
                                       name=f"shell-output-{ctx.job_id}")
        self.thread.start()

    def _pump(self) -> None:
        for line in self._stream:
            # A last line without its newline gets one: the other pipe's next line must not
            # read as its continuation.
            self._ctx.output.write(line if line.endswith("\n") else line + "\n")
            self.text = (self.text + line)[-MAX_OUTPUT_CHARS:]


@handler("shell.command", schema=SCHEMA, timeout=300, requires_setting="shell_commands",
         check=check_command, scope="instance",
         description="Runs an allow-listed program from an argv list (no shell); its stdout and "
                     "stderr are the attempt's output. "
                     "Disabled unless CRONPLANE_SHELL_COMMANDS lists programs.")
def shell_command(ctx: HandlerContext) -> dict[str, Any]:
    allowed = allowed_commands(ctx.settings)
    if not allowed:  # also without settings: fail closed
        raise CommandFailed("shell.command is disabled on this worker (CRONPLANE_SHELL_COMMANDS)")
    argv = [str(a) for a in ctx.payload["argv"]]
    if argv[0] not in allowed:
        raise CommandFailed(f"{argv[0]!r} is not in CRONPLANE_SHELL_COMMANDS")
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               stdin=subprocess.DEVNULL, text=True, errors="replace",
                               env=child_environment(ctx), start_new_session=True,
                               close_fds=True)
    assert process.stdout is not None and process.stderr is not None
    stdout, stderr = _Tail(process.stdout, ctx), _Tail(process.stderr, ctx)
    try:
        while True:
            try:
                process.wait(timeout=min(0.2, max(0.01, ctx.remaining)))
                break
            except subprocess.TimeoutExpired:
                if ctx.cancelled.is_set() or ctx.remaining <= 0:
                    _kill_group(process)
                    process.wait()
                    ctx.raise_if_cancelled()
                    raise CommandFailed(f"{argv[0]} killed at its deadline") from None
    finally:
        # Whatever the program left running in the background dies with the group, which also
        # closes the pipes it inherited, so the readers reach end of file.
        _kill_group(process)
        for tail in (stdout, stderr):
            tail.thread.join(5)
        process.stdout.close()
        process.stderr.close()
    result = {"exit_code": process.returncode, "stdout": stdout.text, "stderr": stderr.text}
    if process.returncode != 0:
        raise CommandFailed(f"{argv[0]} exited with {process.returncode}: {stderr.text}")
    return result
