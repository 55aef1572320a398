"""What the ``shell.command`` sandbox grants, when a worker may run a program at all, and which
Landlock rights each kernel ABI is asked to handle (``handlers/shell_sandbox.py``,
``handlers/sandbox_exec.py``)."""

from __future__ import annotations

import logging
from pathlib import Path
from types import SimpleNamespace

import pytest

from cronplane.handlers import sandbox_exec, shell_sandbox
from cronplane.handlers.shell_sandbox import SandboxRefused, refuse_overlaps, rules_for

# (CRONPLANE_SHELL_SANDBOX, kernel ABI, worker euid) → sandboxed, unconfined, or refused.
DECISIONS = [
    (True, 7, 0, True), (True, 7, 10001, True), (True, 1, 10001, True),
    (True, 0, 0, False),  # root without Landlock: the separate user is what is left
    (True, 0, 10001, "refused"),  # not root, no Landlock: nothing would stand in the way
    (False, 7, 0, False), (False, 7, 10001, False), (False, 0, 10001, False),
]


@pytest.mark.parametrize(("enabled", "abi", "euid", "expected"), DECISIONS)
def test_who_runs_sandboxed_unconfined_or_not_at_all(enabled: bool, abi: int, euid: int,
                                                     expected: object) -> None:
    settings = SimpleNamespace(shell_sandbox=enabled)
    if expected == "refused":
        with pytest.raises(SandboxRefused, match="CRONPLANE_SHELL_SANDBOX=off") as refused:
            shell_sandbox.use_landlock(settings, abi=abi, reason="ENOSYS", euid=euid)
        assert "ENOSYS" in str(refused.value), "the refusal says why Landlock is missing"
    else:
        assert shell_sandbox.use_landlock(settings, abi=abi, reason="", euid=euid) is expected


def test_settings_without_the_field_mean_sandboxed() -> None:
    assert shell_sandbox.use_landlock(object(), abi=7, reason="", euid=10001)


def test_the_grants_cover_the_system_the_programs_directory_and_its_home_only() -> None:
    rules = dict(rules_for("/bin/sh", "/tmp/cronplane-shell-x"))
    assert rules["/usr"] == rules["/etc"] == "read"
    assert rules["/tmp/cronplane-shell-x"] == "private" and rules["/proc"] == "proc"
    assert rules["/dev/null"] == "device"
    assert not any(p in rules for p in ("/", "/tmp", "/var", "/home", "/srv", "/dev", "/run")), (
        "a grant that wide would cover where data directories live")
    assert [r for r in rules.values() if r == "private"] == ["private"], "one writable place"


def test_a_data_directory_inside_a_granted_hierarchy_is_refused(tmp_path: Path) -> None:
    system = tmp_path / "usr"  # stands for /usr: a hierarchy every program may read
    rules = rules_for("/bin/sh", str(tmp_path / "home"), system=(str(system),))
    with pytest.raises(SandboxRefused, match="data directory") as refused:
        refuse_overlaps(rules, SimpleNamespace(data_dir=system / "lib" / "cronplane"))
    assert str(system) in str(refused.value)
    with pytest.raises(SandboxRefused, match="CRONPLANE_SECRETS_DIR"):
        refuse_overlaps(rules, SimpleNamespace(data_dir=tmp_path / "data", secrets_dir=system))
    refuse_overlaps(rules, SimpleNamespace(data_dir=tmp_path / "data",
                                           secrets_dir=tmp_path / "secrets"))


def test_a_grant_inside_the_data_directory_is_refused(tmp_path: Path) -> None:
    # A private directory made under the data directory (TMPDIR pointing there) would hand the
    # program part of it, and ``/`` as a data directory contains every grant.
    rules = rules_for("/bin/sh", str(tmp_path / "data" / "tmp" / "home"), system=())
    with pytest.raises(SandboxRefused):
        refuse_overlaps(rules, SimpleNamespace(data_dir=tmp_path / "data"))
    with pytest.raises(SandboxRefused):
        refuse_overlaps(rules_for("/bin/sh", None), SimpleNamespace(data_dir=Path("/")))


def test_a_relative_data_directory_is_judged_where_it_really_is(tmp_path: Path,
                                                                monkeypatch) -> None:
    granted = tmp_path / "opt"
    (granted / "app").mkdir(parents=True)
    monkeypatch.chdir(granted / "app")  # the default CRONPLANE_DATA_DIR is ./.cronplane
    with pytest.raises(SandboxRefused):
        refuse_overlaps(rules_for("/bin/sh", None, system=(str(granted),)),
                        SimpleNamespace(data_dir=Path(".cronplane")))


def test_a_symlink_into_a_granted_hierarchy_is_followed(tmp_path: Path) -> None:
    system = tmp_path / "usr"
    (system / "data").mkdir(parents=True)
    (tmp_path / "link").symlink_to(system / "data")
    with pytest.raises(SandboxRefused):
        refuse_overlaps(rules_for("/bin/sh", None, system=(str(system),)),
                        SimpleNamespace(data_dir=tmp_path / "link"))


@pytest.mark.parametrize(("abi", "missing"), [
    (1, sandbox_exec.FS_REFER | sandbox_exec.FS_TRUNCATE | sandbox_exec.FS_IOCTL_DEV),
    (2, sandbox_exec.FS_TRUNCATE | sandbox_exec.FS_IOCTL_DEV),
    (4, sandbox_exec.FS_IOCTL_DEV), (5, 0), (7, 0)])
def test_every_right_an_abi_knows_is_handled_and_no_other(abi: int, missing: int) -> None:
    every = (1 << 16) - 1
    assert sandbox_exec.handled_fs(abi) == every & ~missing
    scopes = sandbox_exec.SCOPE_SIGNAL | sandbox_exec.SCOPE_ABSTRACT_UNIX_SOCKET
    assert sandbox_exec.scoped(abi) == (scopes if abi >= 6 else 0)


def test_a_rule_on_a_file_asks_only_for_file_rights() -> None:
    # The kernel refuses a rule on a non-directory that names a directory right (EINVAL).
    for name, rights in sandbox_exec.RIGHTS.items():
        assert rights & sandbox_exec.FILE_RIGHTS, name
    assert sandbox_exec.RIGHTS["device"] & ~sandbox_exec.FILE_RIGHTS == 0


def test_the_worker_says_once_at_start_when_programs_run_unconfined(caplog) -> None:
    off = SimpleNamespace(shell_commands=("/bin/sh",), shell_sandbox=False)
    with caplog.at_level(logging.INFO):
        shell_sandbox.announce(off, logging.getLogger("test"))
        shell_sandbox.announce(SimpleNamespace(shell_commands=()), logging.getLogger("test"))
    assert [r.levelname for r in caplog.records] == ["WARNING"], caplog.text
    assert "CRONPLANE_SHELL_SANDBOX=off" in caplog.records[0].getMessage()


def test_the_worker_names_at_start_a_program_whose_jobs_will_be_refused(
        tmp_path: Path, caplog) -> None:
    if shell_sandbox.landlock_status()[0] < 1:
        pytest.skip("this kernel has no Landlock")
    tool = tmp_path / "tool.sh"
    settings = SimpleNamespace(shell_commands=(str(tool),), data_dir=tmp_path / "data")
    with caplog.at_level(logging.INFO):
        shell_sandbox.announce(settings, logging.getLogger("test"))
    assert any(str(tool) in r.getMessage() and r.levelname == "WARNING"
               for r in caplog.records), caplog.text
