"""The launcher of one ``shell.command`` program: confines itself with Landlock, drops to the
program's user, then becomes the program (``execve``).

The handler starts it as ``python -I -S sandbox_exec.py`` — a fresh interpreter, because the
worker is multi-threaded and nothing but ``exec`` is safe between ``fork`` and ``exec`` there —
and writes one JSON launch spec on its stdin::

    {"argv": [...], "env": {...}, "cwd": "/tmp/cronplane-shell-…",
     "user": [uid, gid] | null, "landlock": true | false,
     "rules": [["/usr", "read"], ["/dev/null", "device"], ["/tmp/cronplane-shell-…", "private"]]}

The spec travels on a pipe, not in argv, so the job's token never shows in ``ps``; the program's
environment is the spec's ``env`` exactly (this interpreter may add ``LC_CTYPE`` to its own).

With ``landlock`` it sets ``PR_SET_NO_NEW_PRIVS`` and restricts itself to the rules: every
filesystem right the running kernel's Landlock ABI knows is handled, so anything no rule grants
is denied — to root too — and the restriction is inherited by everything the program starts.
From ABI 6 it is also scoped: no signal to, and no abstract Unix socket of, a process outside the
sandbox. The network (TCP) is deliberately not handled. Landlock also keeps the program from
``ptrace``-ing the worker, which closes ``/proc/<worker>/environ`` and ``/proc/<worker>/mem`` to it.

It never runs the program unconfined when asked to confine it: any failure before ``execve``
prints one ``sandbox: …`` line on stderr and exits 125 (127/126 when the program itself cannot be
executed). Only the standard library, because it runs with ``-I -S`` (no site, no PYTHONPATH):
the handler imports this module for ``landlock_abi`` and the rights below.
"""

from __future__ import annotations

import ctypes
import errno
import json
import os
import stat
import sys
from typing import Any

SYS_LANDLOCK_CREATE_RULESET = 444  # the same number on every architecture Linux added it to
SYS_LANDLOCK_ADD_RULE = 445
SYS_LANDLOCK_RESTRICT_SELF = 446
LANDLOCK_CREATE_RULESET_VERSION = 1
LANDLOCK_RULE_PATH_BENEATH = 1
PR_SET_NO_NEW_PRIVS = 38

FS_EXECUTE = 1 << 0
FS_WRITE_FILE = 1 << 1
FS_READ_FILE = 1 << 2
FS_READ_DIR = 1 << 3
FS_REMOVE_DIR = 1 << 4
FS_REMOVE_FILE = 1 << 5
FS_MAKE_CHAR = 1 << 6
FS_MAKE_DIR = 1 << 7
FS_MAKE_REG = 1 << 8
FS_MAKE_SOCK = 1 << 9
FS_MAKE_FIFO = 1 << 10
FS_MAKE_BLOCK = 1 << 11
FS_MAKE_SYM = 1 << 12
FS_REFER = 1 << 13  # ABI 2
FS_TRUNCATE = 1 << 14  # ABI 3
FS_IOCTL_DEV = 1 << 15  # ABI 5
SCOPE_ABSTRACT_UNIX_SOCKET = 1 << 0  # ABI 6
SCOPE_SIGNAL = 1 << 1  # ABI 6

FS_ABI_1 = (1 << 13) - 1  # EXECUTE … MAKE_SYM
# The rights that mean something on a file that is not a directory; a rule on such a file that
# names any other right is refused by the kernel (EINVAL).
FILE_RIGHTS = FS_EXECUTE | FS_WRITE_FILE | FS_READ_FILE | FS_TRUNCATE | FS_IOCTL_DEV

# What a rule of the spec grants, by name.
RIGHTS: dict[str, int] = {
    "read": FS_EXECUTE | FS_READ_FILE | FS_READ_DIR,  # system hierarchies, the program's directory
    "proc": FS_READ_FILE | FS_READ_DIR,
    # /dev/null and friends: ``>/dev/null`` opens with O_TRUNC, a terminal takes ioctls.
    "device": FS_READ_FILE | FS_WRITE_FILE | FS_TRUNCATE | FS_IOCTL_DEV,
    "private": FS_ABI_1 | FS_REFER | FS_TRUNCATE | FS_IOCTL_DEV,  # the attempt's own directory
}

EXIT_SANDBOX = 125  # the launcher failed: the program never ran


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64),
                ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1  # the kernel's struct is packed: 12 bytes
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


class SandboxError(Exception):
    pass


def _libc() -> Any:
    return ctypes.CDLL(None, use_errno=True)


def _syscall(number: int, *args: Any) -> int:
    # Every argument typed: syscall(2) is variadic and reads each as a full register.
    libc = _libc()
    libc.syscall.restype = ctypes.c_long
    result = int(libc.syscall(ctypes.c_long(number), *args))
    if result < 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code))
    return result


def landlock_abi() -> tuple[int, str]:
    """The running kernel's Landlock ABI version, or 0 and why there is none (no such syscall:
    an old kernel; EOPNOTSUPP: built in but not enabled at boot; EPERM: a seccomp filter)."""
    try:
        return _syscall(SYS_LANDLOCK_CREATE_RULESET, ctypes.c_void_p(None), ctypes.c_size_t(0),
                        ctypes.c_uint32(LANDLOCK_CREATE_RULESET_VERSION)), ""
    except OSError as exc:
        name = errno.errorcode.get(exc.errno or 0, str(exc.errno))
        return 0, f"landlock_create_ruleset: {name} ({exc.strerror})"


def handled_fs(abi: int) -> int:
    """Every filesystem right ABI ``abi`` knows (the kernel docs' best-effort masking)."""
    handled = FS_ABI_1 | FS_REFER | FS_TRUNCATE | FS_IOCTL_DEV
    if abi < 2:
        handled &= ~FS_REFER
    if abi < 3:
        handled &= ~FS_TRUNCATE
    if abi < 5:
        handled &= ~FS_IOCTL_DEV
    return handled


def scoped(abi: int) -> int:
    return SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL if abi >= 6 else 0


def _create_ruleset(abi: int) -> int:
    attr = _RulesetAttr(handled_fs(abi), 0, scoped(abi))
    # The struct grew with the ABI; a kernel is given no more of it than it knows.
    size = 8 if abi < 4 else 16 if abi < 6 else 24
    try:
        return _syscall(SYS_LANDLOCK_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size),
                        ctypes.c_uint32(0))
    except OSError as exc:
        if exc.errno != errno.EINVAL or not attr.scoped:
            raise
    # Some vendor kernels report ABI 6 without its scopes: the filesystem rights still hold.
    attr.scoped = 0
    return _syscall(SYS_LANDLOCK_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size),
                    ctypes.c_uint32(0))


def _add_rule(ruleset: int, path: str, rights: int, handled: int) -> None:
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except FileNotFoundError:
        return  # /lib32, /dev/tty …: what this machine lacks needs no rule
    try:
        allowed = rights & handled
        if not stat.S_ISDIR(os.fstat(fd).st_mode):
            allowed &= FILE_RIGHTS
        if allowed:
            attr = _PathBeneathAttr(allowed, fd)
            _syscall(SYS_LANDLOCK_ADD_RULE, ctypes.c_long(ruleset),
                     ctypes.c_long(LANDLOCK_RULE_PATH_BENEATH), ctypes.byref(attr),
                     ctypes.c_uint32(0))
    finally:
        os.close(fd)


def confine(rules: list[tuple[str, str]]) -> int:
    """Restrict this process (and all it will execute) to ``rules``; returns the ABI used."""
    abi, why = landlock_abi()
    if abi < 1:
        raise SandboxError(f"Landlock is not available: {why}")
    # Landlock needs it from an unprivileged process, and it keeps a setuid program from
    # gaining what the sandbox withholds.
    libc = _libc()
    if libc.prctl(ctypes.c_int(PR_SET_NO_NEW_PRIVS), ctypes.c_ulong(1), ctypes.c_ulong(0),
                  ctypes.c_ulong(0), ctypes.c_ulong(0)) != 0:
        raise SandboxError(f"prctl(PR_SET_NO_NEW_PRIVS): {os.strerror(ctypes.get_errno())}")
    ruleset = _create_ruleset(abi)
    try:
        for path, name in rules:
            _add_rule(ruleset, path, RIGHTS[name], handled_fs(abi))
        _syscall(SYS_LANDLOCK_RESTRICT_SELF, ctypes.c_long(ruleset), ctypes.c_uint32(0))
    finally:
        os.close(ruleset)
    return abi


def _become(user: list[int] | None) -> None:
    if user is None:
        return
    uid, gid = user
    os.setgroups([])
    os.setgid(gid)
    os.setuid(uid)
    if os.geteuid() != uid or os.getegid() != gid:  # pragma: no cover - the kernel refused
        raise SandboxError(f"could not become uid {uid}")


def _fail(message: str, code: int = EXIT_SANDBOX) -> int:
    sys.stderr.write(f"sandbox: {message}\n")
    sys.stderr.flush()
    return code


def main() -> int:
    try:
        spec = json.loads(sys.stdin.buffer.read())
        # The program reads nothing from the worker: its stdin is /dev/null, as it always was.
        null = os.open("/dev/null", os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
        argv = [str(a) for a in spec["argv"]]
        env = {str(k): str(v) for k, v in spec["env"].items()}
        if spec["landlock"]:
            confine([(str(path), str(name)) for path, name in spec["rules"]])
        _become(spec["user"])
        os.chdir(spec["cwd"])
    except (OSError, SandboxError, ValueError, KeyError, TypeError) as exc:
        return _fail(str(exc))
    try:
        os.execve(argv[0], argv, env)  # noqa: S606 - an argv list, never a shell, by design
    except OSError as exc:
        code = 127 if isinstance(exc, FileNotFoundError) else 126
        return _fail(f"cannot run {argv[0]}: {exc.strerror}", code)
    return EXIT_SANDBOX  # pragma: no cover - execve does not return


if __name__ == "__main__":
    sys.exit(main())
