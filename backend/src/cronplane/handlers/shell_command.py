"""``shell.command {argv}``: runs an allow-listed program; off unless ``CRONPLANE_SHELL_COMMANDS``
names absolute paths.

An argv list only, executed without a shell, so a payload can never inject shell syntax.
``argv[0]`` must equal one of the configured paths (checked at submission and again on the
worker, which fails closed without settings). The program runs in its own session and process
group, so at its deadline or on cancel the whole group — grandchildren included — is killed. Its
environment is PATH, HOME, TMPDIR, LANG and the job's id and attempt only: never the product's
own variables (database URL, signing key, admin password); a batch job also gets its attempt's
``CRONPLANE_JOB_TOKEN`` (with ``CRONPLANE_BATCH_ID``, and ``CRONPLANE_API_URL`` when the public
URL is configured), which can add jobs to its own batch and nothing else.

The program reads neither the data directory (signing and audit keys) nor
``CRONPLANE_SECRETS_DIR``, whoever the worker runs as (ADR 0042):

- It is started through ``sandbox_exec.py`` (a fresh interpreter, never code between ``fork``
  and ``exec`` of this multi-threaded worker), which confines it with Landlock to the system
  hierarchies, a few devices, ``/proc`` and a fresh private directory that is its HOME, working
  directory and TMPDIR (``shell_sandbox.py`` says what is granted and refuses a job whose grants
  would reach a protected directory). Landlock binds root as well.
- A worker running as root also starts it as ``CRONPLANE_SHELL_USER`` (default ``nobody``; root
  itself is refused) with no supplementary groups. A worker that is not root cannot change
  user: the program runs as the worker's user, and naming another user fails closed.
- Without Landlock (Linux before 5.13, or disabled) a root worker keeps the separate user; a
  worker that is not root refuses every job unless ``CRONPLANE_SHELL_SANDBOX=off`` says to run
  programs unconfined. The worker says which at start (``shell_sandbox.announce``).

An instance handler: only an instance ADMIN defines a schedule with it or submits it
(``scope="instance"``, management/scope.py); an OPERATOR may still trigger such a schedule.
"""
from __future__ import annotations

import contextlib
import json
import logging
import os
import pwd
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from cronplane.handlers import sandbox_exec, shell_sandbox
from cronplane.handlers.context import HandlerContext
from cronplane.handlers.registry import handler

MAX_OUTPUT_CHARS = 4000
SAFE_PATH = "/usr/local/bin:/usr/bin:/bin"
JOB_TOKEN_ENV = "CRONPLANE_JOB_TOKEN"  # noqa: S105 - the variable's name
LAUNCHER = str(Path(sandbox_exec.__file__))
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


@dataclass(frozen=True)
class ChildUser:
    """Who the program runs as: ``None`` ids keep the worker's own user."""

    name: str
    uid: int | None
    gid: int | None


_log = logging.getLogger(__name__)
_warned_exposed: set[str] = set()


def child_user(settings: Any) -> ChildUser:
    """Root never runs a payload's program itself; a non-root worker cannot switch user, so it
    runs the program as itself unless told to switch, which then fails closed."""
    named = str(getattr(settings, "shell_user", "") or "")
    euid = os.geteuid()
    if euid != 0:
        own = pwd.getpwuid(euid).pw_name if _has_entry(euid) else str(euid)
        if named and named != own:
            raise CommandFailed(f"cannot run as CRONPLANE_SHELL_USER={named}: the worker runs as "
                                f"{own}, not root")
        return ChildUser(own, None, None)
    name = named or "nobody"
    try:
        entry = pwd.getpwnam(name)
    except KeyError:
        raise CommandFailed(f"CRONPLANE_SHELL_USER={name} is not a user on this machine") from None
    if entry.pw_uid == 0:
        raise CommandFailed(f"CRONPLANE_SHELL_USER={name} is root; shell.command never runs as root")
    return ChildUser(name, entry.pw_uid, entry.pw_gid)


def _has_entry(uid: int) -> bool:
    try:
        pwd.getpwuid(uid)
    except KeyError:
        return False
    return True


def warn_if_exposed(settings: Any, user: ChildUser) -> None:
    """Once per directory and process: a secrets or data directory that other users may enter
    hands its files to a program running as another user."""
    if user.uid is None:
        return
    for label in ("secrets_dir", "data_dir"):
        directory = getattr(settings, label, None)
        if directory is None or str(directory) in _warned_exposed:
            continue
        try:
            mode = Path(directory).stat().st_mode
        except OSError:
            continue
        if mode & (stat.S_IROTH | stat.S_IXOTH):
            _warned_exposed.add(str(directory))
            _log.warning("%s %s is open to other users (mode %o): shell.command runs as %s and "
                         "can read what it holds; chmod 700 it", label, directory,
                         stat.S_IMODE(mode), user.name)


def child_environment(ctx: HandlerContext, home: str) -> dict[str, str]:
    env = {"PATH": SAFE_PATH, "HOME": home, "TMPDIR": home,
           "LANG": os.environ.get("LANG", "C.UTF-8"),
           "CRONPLANE_JOB_ID": str(ctx.job_id), "CRONPLANE_ATTEMPT": str(ctx.attempt)}
    # A batch job may add jobs to its own batch: its attempt's token (good for that alone, dead
    # when the attempt ends), the batch and, when CRONPLANE_PUBLIC_URL is set, where to send it.
    token = ctx.job_token
    if token is not None:
        env[JOB_TOKEN_ENV] = token
        env["CRONPLANE_BATCH_ID"] = str(ctx.batch_id)
        public_url = getattr(ctx.settings, "public_url", None)
        if isinstance(public_url, str) and public_url:
            env["CRONPLANE_API_URL"] = f"{public_url}/api/v1"
    return env


def _workdir(user: ChildUser) -> str:
    path = tempfile.mkdtemp(prefix="cronplane-shell-")
    if user.uid is not None and user.gid is not None:
        os.chown(path, user.uid, user.gid)
    return path


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
    user = child_user(ctx.settings)
    abi, reason = shell_sandbox.landlock_status()
    confined = shell_sandbox.use_landlock(ctx.settings, abi=abi, reason=reason,
                                          euid=os.geteuid())
    if not confined:
        warn_if_exposed(ctx.settings, user)
    home = _workdir(user)
    try:
        rules = shell_sandbox.rules_for(argv[0], home) if confined else []
        shell_sandbox.refuse_overlaps(rules, ctx.settings)
        spec = _launch_spec(ctx, argv, user, home, rules=rules, confined=confined)
        return _run(ctx, argv, spec)
    finally:
        shutil.rmtree(home, ignore_errors=True)


def _launch_spec(ctx: HandlerContext, argv: list[str], user: ChildUser, home: str, *,
                 rules: shell_sandbox.Rules, confined: bool) -> dict[str, Any]:
    """What ``sandbox_exec`` reads on its stdin (its docstring has the format)."""
    return {"argv": argv, "env": child_environment(ctx, home), "cwd": home,
            "user": [user.uid, user.gid] if user.uid is not None else None,
            "landlock": confined, "rules": rules}


def _run(ctx: HandlerContext, argv: list[str], spec: dict[str, Any]) -> dict[str, Any]:
    # -I -S: no PYTHON* variables, no site hooks, nothing from the working directory on the path.
    process = subprocess.Popen([sys.executable, "-I", "-S", LAUNCHER], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               errors="replace", env={"LANG": "C.UTF-8"}, cwd=spec["cwd"],
                               start_new_session=True, close_fds=True)
    assert process.stdin is not None and process.stdout is not None and process.stderr is not None
    stdout, stderr = _Tail(process.stdout, ctx), _Tail(process.stderr, ctx)
    # A launcher that died early has closed its end; its exit status tells the rest.
    with contextlib.suppress(BrokenPipeError):
        process.stdin.write(json.dumps(spec))
    with contextlib.suppress(BrokenPipeError):
        process.stdin.close()
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
    if process.returncode == sandbox_exec.EXIT_SANDBOX and stderr.text.startswith("sandbox: "):
        raise CommandFailed(f"{argv[0]} was not started: {stderr.text.strip()}")
    if process.returncode != 0:
        raise CommandFailed(f"{argv[0]} exited with {process.returncode}: {stderr.text}")
    return result
