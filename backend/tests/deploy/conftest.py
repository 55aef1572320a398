"""Fixtures shared by the deploy-file tests."""

from __future__ import annotations

import pytest

from tests.deploy.harness import REPO, Stage, cli_subcommand_names, parse_dockerfile


@pytest.fixture(scope="module")
def cli_subcommands() -> frozenset[str]:
    return cli_subcommand_names()


@pytest.fixture(scope="module")
def stages() -> dict[str, Stage]:
    parsed = parse_dockerfile(REPO / "deploy/Dockerfile")
    named = {stage.name: stage for stage in parsed if stage.name}
    assert parsed[-1].name == "runtime", (
        "the last stage must be `runtime`, so a build without --target gives the application image")
    return named
