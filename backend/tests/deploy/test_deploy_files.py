"""The deploy files call the CLI that exists: every compose `command:`, Kubernetes `args:` and
the image's ENTRYPOINT/CMD is a real `cronplane` subcommand.
"""

from __future__ import annotations

import pytest

from tests.deploy.harness import (
    COMPOSE_FILES,
    DEPLOYED_SUBCOMMANDS,
    Stage,
    cronplane_services,
    exec_form,
    load_yaml,
    pod_specs,
)


def test_cli_offers_every_subcommand_the_deploy_files_use() -> None:
    try:
        from cronplane.cli import main
    except Exception as exc:
        pytest.fail(f"cannot import the CLI group cronplane.cli:main ({exc!r}); the deploy files "
                    f"call `cronplane {' | '.join(DEPLOYED_SUBCOMMANDS)}`", pytrace=False)
    missing = set(DEPLOYED_SUBCOMMANDS) - set(main.commands)
    assert not missing, f"deploy files call cronplane subcommands the CLI lacks: {sorted(missing)}"


def test_image_entrypoint_is_the_cronplane_cli(stages: dict[str, Stage],
                                                cli_subcommands: frozenset[str]) -> None:
    runtime = stages["runtime"]
    assert exec_form(runtime.last("ENTRYPOINT"), "ENTRYPOINT") == ["cronplane"]
    command = exec_form(runtime.last("CMD"), "CMD")
    assert command[0] in cli_subcommands, f"CMD {command} is not a cronplane subcommand"


@pytest.mark.parametrize("relative", COMPOSE_FILES)
def test_every_compose_command_is_a_cli_subcommand(relative: str,
                                                   cli_subcommands: frozenset[str]) -> None:
    services = cronplane_services(load_yaml(relative))
    assert {"migrate", "api", "worker"} <= set(services), sorted(services)
    for name, service in services.items():
        command = service.get("command")
        assert isinstance(command, list) and command, f"{relative}: {name} has no exec-form command"
        assert command[0] in cli_subcommands, f"{relative}: {name} runs unknown `{command[0]}`"
        assert "entrypoint" not in service, f"{relative}: {name} must keep the image's entrypoint"


def test_k8s_containers_run_real_cli_subcommands_through_the_image_entrypoint(
        cli_subcommands: frozenset[str]) -> None:
    seen = {}
    for name, spec in pod_specs().items():
        for container in spec["containers"]:
            assert "command" not in container, f"{name}: keep the image's ENTRYPOINT (cronplane)"
            assert container["args"][0] in cli_subcommands, f"{name}: {container['args']}"
            seen[name] = container["args"][0]
    assert seen == {"cronplane-api": "serve", "cronplane-worker": "worker",
                    "cronplane-migrate": "migrate"}
