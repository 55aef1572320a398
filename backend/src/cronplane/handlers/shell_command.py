"""``shell.command {argv}``: runs a program, off unless ``CRONPLANE_SHELL_COMMANDS=true``.

An argv list only, executed without a shell, so a payload can never inject shell syntax. The
process is killed at the attempt's deadline or on cancel; output is truncated to keep job rows
small. When the setting is off the handler is not in the catalogue and submission rejects it as
an unknown handler; a job that reaches a worker where it is off fails without running.
"""

from __future__ import annotations

import subprocess
from typing import Any

from cronplane.handlers.context import HandlerContext
from cronplane.handlers.registry import handler

MAX_OUTPUT_CHARS = 4000
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


@handler("shell.command", schema=SCHEMA, timeout=300, requires_setting="shell_commands",
         description="Runs a program from an argv list (no shell). Disabled unless configured.")
def shell_command(ctx: HandlerContext) -> dict[str, Any]:
    if ctx.settings is not None and not getattr(ctx.settings, "shell_commands", False):
        raise CommandFailed("shell.command is disabled on this worker (CRONPLANE_SHELL_COMMANDS)")
    argv = [str(a) for a in ctx.payload["argv"]]
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               stdin=subprocess.DEVNULL, text=True)
    stdout, stderr = "", ""
    while True:
        try:
            stdout, stderr = process.communicate(timeout=min(0.2, max(0.01, ctx.remaining)))
            break
        except subprocess.TimeoutExpired:
            if ctx.cancelled.is_set() or ctx.remaining <= 0:
                process.kill()
                stdout, stderr = process.communicate()
                ctx.raise_if_cancelled()
                raise CommandFailed(f"{argv[0]} killed at its deadline") from None
    result = {"exit_code": process.returncode, "stdout": stdout[-MAX_OUTPUT_CHARS:],
              "stderr": stderr[-MAX_OUTPUT_CHARS:]}
    if process.returncode != 0:
        raise CommandFailed(f"{argv[0]} exited with {process.returncode}: "
                            f"{stderr[-MAX_OUTPUT_CHARS:]}")
    return result
