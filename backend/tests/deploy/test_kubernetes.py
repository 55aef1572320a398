"""deploy/k8s: the Kubernetes schema (strict), security context, probes, HPA and PDBs."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.deploy.harness import (
    PIP_HINT,
    REPO,
    Stage,
    assert_ok,
    by_kind,
    dockerfile_uid,
    k8s_files,
    k8s_resources,
    pod_specs,
    require_tool,
    run,
)

# Oldest Kubernetes these manifests claim to support; the newest schema the tool ships is checked too.
OLDEST_KUBERNETES = "1.30.0"


def kubernetes_versions() -> list[str]:
    try:
        from kubernetes_validate.utils import latest_version
    except ImportError:
        pytest.fail(f"kubernetes-validate is not installed; {PIP_HINT}", pytrace=False)
    return [OLDEST_KUBERNETES, latest_version()]


@pytest.mark.parametrize("which", ["oldest", "newest"])
def test_k8s_manifests_match_the_kubernetes_schema(which: str) -> None:
    tool = require_tool("kubernetes-validate", PIP_HINT)
    version = kubernetes_versions()[0 if which == "oldest" else 1]
    files = [str(path.relative_to(REPO)) for path in k8s_files()]
    assert_ok(run([tool, "--strict", "--quiet", "-k", version, *files]),
              f"kubernetes-validate against {version}")


def test_k8s_validation_rejects_a_broken_manifest(tmp_path: Path) -> None:
    tool = require_tool("kubernetes-validate", PIP_HINT)
    broken = tmp_path / "broken.yaml"
    broken.write_text("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\n"
                      "spec: {replicas: two, selector: {}, template: {}}\n")
    assert run([tool, "--strict", "--quiet", str(broken)]).returncode != 0


def test_k8s_pods_are_non_root_and_bounded(stages: dict[str, Stage]) -> None:
    uid = dockerfile_uid(stages)
    for name, spec in pod_specs().items():
        security = spec["securityContext"]
        assert security["runAsNonRoot"] is True, name
        assert security["runAsUser"] == uid, f"{name}: runAsUser differs from the image's USER"
        assert spec.get("automountServiceAccountToken") is False, name
        for container in spec["containers"]:
            assert container["securityContext"]["allowPrivilegeEscalation"] is False, name
            assert container["securityContext"]["readOnlyRootFilesystem"] is True, name
            resources = container["resources"]
            assert resources["requests"]["cpu"] and resources["requests"]["memory"], name
            assert resources["limits"]["memory"], f"{name} has no memory limit"


def test_k8s_probes_use_the_health_endpoints() -> None:
    api = by_kind("Deployment")["cronplane-api"]["spec"]["template"]["spec"]["containers"][0]
    assert api["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert api["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert {"name": "CRONPLANE_EXECUTION", "value": "off"} in api["env"]
    worker = by_kind("Deployment")["cronplane-worker"]["spec"]["template"]["spec"]["containers"][0]
    assert worker["livenessProbe"]["httpGet"]["path"] == "/healthz"


def test_k8s_worker_autoscales_and_disruption_budgets_select_real_pods() -> None:
    deployments = by_kind("Deployment")
    [hpa] = by_kind("HorizontalPodAutoscaler").values()
    assert hpa["apiVersion"] == "autoscaling/v2"
    assert hpa["spec"]["scaleTargetRef"]["name"] == "cronplane-worker"
    assert hpa["spec"]["metrics"][0]["resource"]["name"] == "cpu"
    budgets = by_kind("PodDisruptionBudget")
    assert set(budgets) == {"cronplane-api", "cronplane-worker"}
    for name, budget in budgets.items():
        pod_labels = deployments[name]["spec"]["template"]["metadata"]["labels"]
        selector = budget["spec"]["selector"]["matchLabels"]
        assert selector.items() <= pod_labels.items(), f"PDB {name} selects no pod"
    [service] = by_kind("Service").values()
    api_pod = deployments["cronplane-api"]["spec"]["template"]
    assert service["spec"]["selector"].items() <= api_pod["metadata"]["labels"].items()
    port_names = {p["name"] for p in api_pod["spec"]["containers"][0]["ports"]}
    assert service["spec"]["ports"][0]["targetPort"] in port_names


def test_k8s_has_no_database_and_only_example_secrets() -> None:
    kinds = {r["kind"] for r in k8s_resources()}
    assert "StatefulSet" not in kinds, "Postgres is external in the Kubernetes setup"
    for secret in by_kind("Secret").values():
        for key, value in secret.get("stringData", {}).items():
            if key != "CRONPLANE_ADMIN_USERNAME":
                assert "change-me" in value, f"secret {key} looks real"


def test_k8s_termination_grace_outlasts_the_drain() -> None:
    """Kubernetes SIGKILLs a pod terminationGracePeriodSeconds after SIGTERM: that must leave
    room for the whole drain (the shutdown grace of running attempts, then giving the rest back)."""
    from cronplane.config import Settings
    from cronplane.lifecycle import drain_timeout

    config = {d["metadata"]["name"]: d for d in k8s_resources() if d.get("kind") == "ConfigMap"}
    for name, deployment in by_kind("Deployment").items():
        spec = deployment["spec"]["template"]["spec"]
        grace = Settings().shutdown_grace_seconds
        for container in spec["containers"]:
            for env in container.get("env", []):
                if env["name"] == "CRONPLANE_SHUTDOWN_GRACE_SECONDS":
                    grace = float(env["value"])
        for source in config.values():
            value = source.get("data", {}).get("CRONPLANE_SHUTDOWN_GRACE_SECONDS")
            grace = float(value) if value else grace
        assert spec["terminationGracePeriodSeconds"] >= drain_timeout(grace), name
