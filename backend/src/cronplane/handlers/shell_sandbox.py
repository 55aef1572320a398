"""What a ``shell.command`` program may touch, and whether a worker may run one at all (ADR 0042).

The program runs in a Landlock sandbox (``sandbox_exec.py`` applies it) that grants:

- read and execute: the system hierarchies (``SYSTEM_READ``), the program's own directory and,
  where ``/etc/resolv.conf`` points elsewhere (systemd-resolved), the file it points to;
- read and write: the character devices in ``DEVICES``;
- read: ``/proc`` (Landlock still keeps other processes' ``environ``, ``mem``, ``cwd`` … closed,
  since the program may not ptrace anything outside its sandbox);
- everything: the attempt's private directory (its HOME, working directory and TMPDIR).

Nothing else — not ``/tmp``, ``/var``, ``/home``, ``/srv`` — so the data directory (signing and
audit keys, the embedded database) and ``CRONPLANE_SECRETS_DIR`` stay out of reach wherever they
are, as long as they are not inside a granted path: a job whose grants would cover one of them
(or sit inside one) is refused before anything starts.

Whether to sandbox: always when the kernel has Landlock, unless ``CRONPLANE_SHELL_SANDBOX=off``.
Without Landlock a root worker still runs the program as ``CRONPLANE_SHELL_USER``; a worker that
is not root has no other barrier, so it refuses every job unless the sandbox is explicitly off.
"""

from __future__ import annotations

import functools
import logging
import os
from collections.abc import Sequence
from pathlib import PurePosixPath
from typing import Any

from cronplane.handlers import sandbox_exec

# Where installed programs and what they load live. /etc is read whole: programs need their
# configuration, the name service and CA files there; the product keeps nothing in it.
SYSTEM_READ: tuple[str, ...] = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
                                "/etc", "/opt", "/sys/devices/system/cpu")
DEVICES: tuple[str, ...] = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random",
                            "/dev/urandom", "/dev/tty")
PROC = "/proc"
RESOLV_CONF = "/etc/resolv.conf"

Rules = list[tuple[str, str]]  # (path, a right name of sandbox_exec.RIGHTS)


class SandboxRefused(Exception):
    """The job may not run on this worker: no sandbox where one is required, or a grant that
    would cover what the sandbox exists to protect."""


@functools.cache
def landlock_status() -> tuple[int, str]:
    """This kernel's Landlock ABI (0: none) and why there is none; probed once per process."""
    return sandbox_exec.landlock_abi()


def sandbox_enabled(settings: Any) -> bool:
    return bool(getattr(settings, "shell_sandbox", True))


def use_landlock(settings: Any, *, abi: int, reason: str, euid: int) -> bool:
    """Whether this worker's program runs in the sandbox; raises when it must not run at all."""
    if not sandbox_enabled(settings):
        return False
    if abi >= 1:
        return True
    if euid == 0:
        return False  # the separate user (CRONPLANE_SHELL_USER) is the barrier left
    raise SandboxRefused(
        f"shell.command needs the Landlock sandbox on a worker that is not root, and this kernel "
        f"offers none ({reason}); run the worker on Linux 5.13 or later with Landlock enabled, "
        f"or as root with CRONPLANE_SHELL_USER, or set CRONPLANE_SHELL_SANDBOX=off to let "
        f"programs read whatever the worker's user can")


def rules_for(program: str, home: str | None, *, system: Sequence[str] = SYSTEM_READ) -> Rules:
    """The sandbox's grants for one attempt of ``program`` with private directory ``home``
    (``None``: before there is one)."""
    rules: Rules = [(path, "read") for path in system]
    rules.append((os.path.dirname(os.path.realpath(program)), "read"))
    resolv = os.path.realpath(RESOLV_CONF)
    if not any(_inside(resolv, os.path.realpath(path)) for path in system):
        rules.append((resolv, "read"))
    rules.extend((device, "device") for device in DEVICES)
    rules.append((PROC, "proc"))
    if home is not None:
        rules.append((home, "private"))
    return rules


def protected_paths(settings: Any) -> list[tuple[str, str]]:
    """What no grant may reach: (what it is, its real path)."""
    named = [("the data directory (CRONPLANE_DATA_DIR)", getattr(settings, "data_dir", None)),
             ("CRONPLANE_SECRETS_DIR", getattr(settings, "secrets_dir", None))]
    return [(label, os.path.realpath(path)) for label, path in named if path is not None]


def refuse_overlaps(rules: Rules, settings: Any) -> None:
    """Fail closed when a grant contains, or lies inside, a protected directory."""
    for label, protected in protected_paths(settings):
        for path, _ in rules:
            granted = os.path.realpath(path)
            if _inside(protected, granted) or _inside(granted, protected):
                raise SandboxRefused(
                    f"shell.command refused: {label} {protected} and the sandbox's grant "
                    f"{granted} overlap, so the program could read it; keep that directory "
                    f"outside {', '.join(SYSTEM_READ)} and away from the allowed programs' "
                    f"directories")


def _inside(path: str, ancestor: str) -> bool:
    inner, outer = PurePosixPath(path), PurePosixPath(ancestor)
    return inner == outer or outer in inner.parents


def announce(settings: Any, log: logging.Logger) -> None:
    """Once at worker start (not per job): say how this worker confines shell.command."""
    programs = tuple(getattr(settings, "shell_commands", ()) or ())
    if not programs:
        return
    abi, reason = landlock_status()
    if not sandbox_enabled(settings):
        log.warning("CRONPLANE_SHELL_SANDBOX=off: shell.command programs run without the "
                    "Landlock sandbox and read whatever their user can%s",
                    "" if os.geteuid() == 0 else ", the data directory included")
    elif abi < 1 and os.geteuid() == 0:
        log.warning("Landlock is not available (%s): shell.command programs are confined only by "
                    "running as CRONPLANE_SHELL_USER", reason)
    elif abi < 1:
        log.warning("Landlock is not available (%s): every shell.command job on this worker "
                    "fails (it is not root, so nothing else keeps a program from the data "
                    "directory); CRONPLANE_SHELL_SANDBOX=off runs them unconfined", reason)
    else:
        log.info("shell.command programs run in a Landlock sandbox (ABI %d)", abi)
        for program in programs:
            try:
                refuse_overlaps(rules_for(program, None), settings)
            except SandboxRefused as exc:
                log.warning("%s: every job of it will fail: %s", program, exc)
