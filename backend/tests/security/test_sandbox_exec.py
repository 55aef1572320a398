"""The ``shell.command`` launcher (``handlers/sandbox_exec.py``) run as the handler runs it — a
fresh ``python -I -S`` reading its spec on stdin — with real files and processes: Landlock denies
what no grant covers even to root, while the program runs, writes its private directory and uses
``/dev/null``; a program of the worker's own user cannot read the worker's environment or signal
it; an ungranted program cannot be executed; and a spec the launcher cannot apply never runs the
program. Each confinement check is paired with the same launch unconfined, which succeeds."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from cronplane.handlers import sandbox_exec, shell_sandbox
from cronplane.handlers.shell_command import LAUNCHER

ABI, WHY = sandbox_exec.landlock_abi()
pytestmark = pytest.mark.skipif(ABI < 1, reason=f"this kernel has no Landlock: {WHY}")
NOBODY = 65534


def launch(argv: list[str], home: Path, *, landlock: bool = True,
           user: tuple[int, int] | None = None) -> subprocess.CompletedProcess[str]:
    spec = {"argv": argv, "env": {"PATH": "/usr/bin:/bin", "HOME": str(home)},
            "cwd": str(home), "user": list(user) if user else None, "landlock": landlock,
            "rules": shell_sandbox.rules_for(argv[0], str(home))}
    return subprocess.run([sys.executable, "-I", "-S", LAUNCHER], input=json.dumps(spec),
                          capture_output=True, text=True, timeout=30, check=False)


@pytest.fixture
def outside() -> Iterator[Path]:
    """A directory no grant covers (under /tmp, where tests and many installs keep data)."""
    path = Path(tempfile.mkdtemp(prefix="cp-outside-"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def home() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="cp-home-"))
    path.chmod(0o777)  # the user-switching launch runs as nobody
    yield path
    shutil.rmtree(path, ignore_errors=True)


def test_even_root_reads_nothing_outside_the_grants_while_the_program_works(
        outside: Path, home: Path) -> None:
    key = outside / "secret_key"
    key.write_text("k" * 64)
    key.chmod(0o600)
    script = ("echo hello; echo made > made && cat made; echo quiet > /dev/null && echo null-ok; "
              f"cat {key}; ls {outside}; echo planted > {outside}/planted")
    confined = launch(["/bin/sh", "-c", script], home)
    assert confined.stdout.splitlines() == ["hello", "made", "null-ok"], confined
    assert confined.stderr.count("Permission denied") == 3, confined.stderr
    assert "kkkk" not in confined.stdout + confined.stderr
    assert not (outside / "planted").exists(), "the program wrote outside its directory"
    assert (home / "made").read_text() == "made\n", "its private directory is writable"

    unconfined = launch(["/bin/sh", "-c", script], home, landlock=False)
    assert "k" * 64 in unconfined.stdout, "root reads the key unconfined: the test proves nothing"


def test_a_program_of_the_workers_own_user_cannot_read_its_environment_or_signal_it(
        home: Path) -> None:
    # The worker's stand-in: a process of the program's own user whose environment holds a
    # secret, as DATABASE_URL and CRONPLANE_SECRET_KEY sit in a container's worker.
    worker = subprocess.Popen(["/bin/sleep", "60"], user=NOBODY, group=NOBODY, extra_groups=[],
                              env={"DATABASE_URL": "postgresql://app:hunter2@db/cronplane"})
    try:
        script = (f"tr '\\0' ' ' < /proc/{worker.pid}/environ; echo; "
                  f"kill -0 {worker.pid} && echo signalled")
        confined = launch(["/bin/sh", "-c", script], home, user=(NOBODY, NOBODY))
        assert "hunter2" not in confined.stdout, confined
        assert "Permission denied" in confined.stderr, confined.stderr
        if ABI >= 6:  # LANDLOCK_SCOPE_SIGNAL
            assert "signalled" not in confined.stdout, confined
        unconfined = launch(["/bin/sh", "-c", script], home, user=(NOBODY, NOBODY),
                            landlock=False)
        assert "hunter2" in unconfined.stdout, "same user unconfined: the test proves nothing"
    finally:
        worker.send_signal(signal.SIGKILL)
        worker.wait()


def test_a_program_outside_the_grants_cannot_be_executed(outside: Path, home: Path) -> None:
    copy = outside / "echo"
    shutil.copy("/bin/echo", copy)
    spec_rules = shell_sandbox.rules_for("/bin/sh", str(home))  # the allowed program is /bin/sh
    spec = {"argv": ["/bin/sh", "-c", f"{copy} escaped"], "env": {"PATH": "/usr/bin:/bin"},
            "cwd": str(home), "user": None, "landlock": True, "rules": spec_rules}
    ran = subprocess.run([sys.executable, "-I", "-S", LAUNCHER], input=json.dumps(spec),
                         capture_output=True, text=True, timeout=30, check=False)
    assert "escaped" not in ran.stdout and "Permission denied" in ran.stderr, ran


def test_a_spec_the_launcher_cannot_apply_never_runs_the_program(home: Path) -> None:
    spec = {"argv": ["/bin/echo", "ran"], "env": {}, "cwd": str(home), "user": None,
            "landlock": True, "rules": [["/usr", "everything"]]}
    ran = subprocess.run([sys.executable, "-I", "-S", LAUNCHER], input=json.dumps(spec),
                         capture_output=True, text=True, timeout=30, check=False)
    assert ran.returncode == sandbox_exec.EXIT_SANDBOX and ran.stdout == "", ran
    assert ran.stderr.startswith("sandbox: "), ran.stderr


def test_the_program_gets_exactly_the_specs_environment(home: Path) -> None:
    # The launcher's interpreter may coerce a C locale by adding LC_CTYPE to its own
    # environment; the program must not inherit that, or anything else.
    spec = {"argv": ["/usr/bin/env"], "env": {"LANG": "C", "HOME": str(home)}, "cwd": str(home),
            "user": None, "landlock": True, "rules": shell_sandbox.rules_for("/usr/bin/env",
                                                                             str(home))}
    ran = subprocess.run([sys.executable, "-I", "-S", LAUNCHER], input=json.dumps(spec),
                         capture_output=True, text=True, timeout=30, check=False,
                         env={"LANG": "C", "SECRET": "x"})
    assert sorted(ran.stdout.splitlines()) == ["HOME=" + str(home), "LANG=C"], ran


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can change user")
def test_the_user_switch_happens_after_the_sandbox_and_drops_every_group(home: Path) -> None:
    ran = launch(["/bin/sh", "-c", "id -u; id -G; grep NoNewPrivs /proc/self/status"], home,
                 user=(NOBODY, NOBODY))
    uid, groups, nnp = ran.stdout.splitlines()
    assert (uid, groups) == (str(NOBODY), str(NOBODY)), ran
    assert nnp.split() == ["NoNewPrivs:", "1"], "a setuid program could regain what was dropped"
