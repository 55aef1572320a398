"""Reading the deploy files and running the programs that validate them, for tests/deploy.

A missing tool fails the calling test with the one command that installs it; it never skips,
so a green run always means the files were checked.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

try:
    import yaml
except ImportError:  # pragma: no cover - load_yaml fails with the install command
    yaml = None

REPO = Path(__file__).resolve().parents[3]
VENV_BIN = Path(sys.executable).parent
PIP_HINT = "install the dev extras: .venv/bin/pip install -e 'backend[dev]'"

# What the deploy files run. Used when cronplane.cli cannot be imported, in which case
# test_cli_offers_every_subcommand_the_deploy_files_use fails, so the fallback hides nothing.
DEPLOYED_SUBCOMMANDS = ("serve", "worker", "migrate", "create-user")

COMPOSE_FILES = ("docker-compose.yml", "deploy/compose.demo.yml")


def require_tool(name: str, install: str) -> str:
    """Path of a command-line tool from the venv or PATH, or a one-line failure naming the fix."""
    candidate = VENV_BIN / name
    if candidate.exists():
        return str(candidate)
    found = shutil.which(name)
    if found:
        return found
    pytest.fail(f"{name} is not installed; install it with: {install}", pytrace=False)


def run(args: list[str], *, env: dict[str, str] | None = None, cwd: Path = REPO,
        timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout, check=False)


def assert_ok(result: subprocess.CompletedProcess[str], what: str) -> None:
    assert result.returncode == 0, (
        f"{what} failed (exit {result.returncode}):\n{result.stdout}\n{result.stderr}")


def load_yaml(relative: str) -> Any:
    if yaml is None:
        pytest.fail(f"PyYAML is not installed; {PIP_HINT}", pytrace=False)
    return yaml.safe_load((REPO / relative).read_text())


def load_yaml_documents(path: Path) -> list[dict[str, Any]]:
    if yaml is None:
        pytest.fail(f"PyYAML is not installed; {PIP_HINT}", pytrace=False)
    return [doc for doc in yaml.safe_load_all(path.read_text()) if doc]


def cli_subcommand_names() -> frozenset[str]:
    try:
        from cronplane.cli import main
    except Exception:
        return frozenset(DEPLOYED_SUBCOMMANDS)
    return frozenset(main.commands)


# --- Dockerfile ---------------------------------------------------------------------------------


class Stage:
    """One FROM stage and its instructions, as Docker's own parser reads them."""

    def __init__(self, image: str, name: str | None) -> None:
        self.image = image
        self.name = name
        self.commands: list[Any] = []  # dockerfile.Command

    def all(self, keyword: str) -> list[Any]:
        return [command for command in self.commands if command.cmd == keyword]

    def last(self, keyword: str) -> Any:
        found = self.all(keyword)
        return found[-1] if found else None

    def text(self, keyword: str) -> str:
        return "\n".join(" ".join((*c.flags, *c.value)) for c in self.all(keyword))


def parse_dockerfile(path: Path) -> list[Stage]:
    """FROM stages with their instructions; global ARG defaults substituted into FROM."""
    try:
        import dockerfile
    except ImportError:
        pytest.fail(f"the `dockerfile` parser is not installed; {PIP_HINT}", pytrace=False)
    try:
        commands = dockerfile.parse_file(str(path))
    except dockerfile.GoParseError as exc:
        pytest.fail(f"{path.name} does not parse: {exc}", pytrace=False)
    global_args: dict[str, str] = {}
    stages: list[Stage] = []
    for command in commands:
        if command.cmd == "ARG" and not stages:
            name, _, default = command.value[0].partition("=")
            global_args[name] = default
        elif command.cmd == "FROM":
            image = re.sub(r"\$\{(\w+)\}|\$(\w+)",
                           lambda m: global_args.get(m.group(1) or m.group(2), ""),
                           command.value[0])
            words = command.value
            alias = words[2] if len(words) >= 3 and words[1].upper() == "AS" else None
            stages.append(Stage(image, alias))
        else:
            assert stages, f"{command.original} comes before the first FROM"
            stages[-1].commands.append(command)
    return stages


def exec_form(command: Any, keyword: str) -> list[str]:
    assert command is not None, f"the runtime stage has no {keyword}"
    assert command.json, f"{keyword} should use the JSON (exec) form: {command.original}"
    return list(command.value)


def dockerfile_uid(stages: dict[str, Stage]) -> int:
    command = stages["runtime"].last("USER")
    assert command, "the runtime stage sets no USER, so it would run as root"
    user = command.value[0]
    uid = user.split(":")[0]
    assert uid.isdigit(), (
        f"USER {user}: use a numeric uid so Kubernetes' runAsNonRoot can verify it")
    return int(uid)


# --- compose, workflows, Kubernetes -------------------------------------------------------------


def cronplane_services(compose: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {name: service for name, service in compose["services"].items()
            if service.get("build", {}).get("target") == "runtime"}


def workflow(name: str) -> dict[Any, Any]:
    loaded: dict[Any, Any] = load_yaml(f".github/workflows/{name}")
    return loaded


def steps(job: dict[str, Any]) -> list[dict[str, Any]]:
    return list(job["steps"])


def k8s_files() -> list[Path]:
    """The manifests of built-in kinds. KEDA's and CloudNativePG's custom resources
    (deploy/k8s/optional/keda, deploy/k8s/cnpg) are not in the Kubernetes schema; test_keda.py
    and test_cnpg.py check them."""
    files = sorted(path for path in (REPO / "deploy/k8s").rglob("*.yaml")
                   if "keda" not in path.parts and "cnpg" not in path.parts)
    assert files, "no manifests in deploy/k8s"
    return files


def cnpg_files() -> list[Path]:
    return sorted((REPO / "deploy/k8s/cnpg").glob("*.yaml"))


def keda_files() -> list[Path]:
    return sorted((REPO / "deploy/k8s/optional/keda").glob("*.yaml"))


def k8s_resources() -> list[dict[str, Any]]:
    return [doc for path in k8s_files() if "optional" not in path.parts
            for doc in load_yaml_documents(path)]


def by_kind(kind: str) -> dict[str, dict[str, Any]]:
    return {r["metadata"]["name"]: r for r in k8s_resources() if r["kind"] == kind}


def pod_specs() -> dict[str, dict[str, Any]]:
    specs = {name: r["spec"]["template"]["spec"] for name, r in by_kind("Deployment").items()}
    specs.update({name: r["spec"]["template"]["spec"] for name, r in by_kind("Job").items()})
    return specs
