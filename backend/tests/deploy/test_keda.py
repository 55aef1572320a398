"""deploy/k8s/optional/keda: the KEDA ScaledObject that scales one queue's worker Deployment on
that queue's due PENDING jobs. Checked statically (the fields KEDA's CRDs require and the
PostgreSQL scaler reads, references to real objects) and its query is run against the real
schema: it counts due jobs of its queue only, and 0 while the queue is paused."""

from __future__ import annotations

import re
from typing import Any

import jsonschema
import psycopg
import pytest

from tests.deploy.harness import REPO, keda_files, load_yaml_documents

# The part of KEDA v2's CRDs (keda.sh/v1alpha1 ScaledObject, TriggerAuthentication) the files
# use, with KEDA's required fields, plus the PostgreSQL scaler's metadata keys (keda.sh docs).
NAME = {"type": "string", "pattern": "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"}
METADATA = {"type": "object", "required": ["name", "namespace"],
            "properties": {"name": NAME, "namespace": NAME}}
POSTGRES_KEYS = {"query", "targetQueryValue", "activationTargetQueryValue", "connectionFromEnv",
                 "host", "port", "userName", "dbName", "sslmode", "passwordFromEnv"}
SCALED_OBJECT = {
    "type": "object",
    "required": ["apiVersion", "kind", "metadata", "spec"],
    "properties": {
        "apiVersion": {"const": "keda.sh/v1alpha1"},
        "metadata": METADATA,
        "spec": {
            "type": "object",
            "required": ["scaleTargetRef", "triggers"],
            "additionalProperties": False,
            "properties": {
                "scaleTargetRef": {
                    "type": "object", "required": ["name"], "additionalProperties": False,
                    "properties": {"apiVersion": {"type": "string"}, "kind": {"type": "string"},
                                   "name": NAME, "envSourceContainerName": {"type": "string"}}},
                "minReplicaCount": {"type": "integer", "minimum": 0},
                "maxReplicaCount": {"type": "integer", "minimum": 1},
                "pollingInterval": {"type": "integer", "minimum": 1},
                "cooldownPeriod": {"type": "integer", "minimum": 0},
                "idleReplicaCount": {"type": "integer", "minimum": 0},
                "advanced": {"type": "object"},
                "fallback": {"type": "object"},
                "triggers": {
                    "type": "array", "minItems": 1,
                    "items": {
                        "type": "object", "required": ["type", "metadata"],
                        "additionalProperties": False,
                        "properties": {
                            "type": {"type": "string"}, "name": {"type": "string"},
                            "metricType": {"enum": ["AverageValue", "Value", "Utilization"]},
                            "useCachedMetrics": {"type": "boolean"},
                            "authenticationRef": {
                                "type": "object", "required": ["name"],
                                "properties": {"name": NAME,
                                               "kind": {"enum": ["TriggerAuthentication",
                                                                 "ClusterTriggerAuthentication"]}}},
                            # KEDA reads every metadata value as a string.
                            "metadata": {"type": "object",
                                         "additionalProperties": {"type": "string"}}}}}}}},
}
TRIGGER_AUTHENTICATION = {
    "type": "object",
    "required": ["apiVersion", "kind", "metadata", "spec"],
    "properties": {
        "apiVersion": {"const": "keda.sh/v1alpha1"},
        "metadata": METADATA,
        "spec": {"type": "object", "properties": {"secretTargetRef": {
            "type": "array", "minItems": 1,
            "items": {"type": "object", "required": ["parameter", "name", "key"],
                      "additionalProperties": False,
                      "properties": {"parameter": {"type": "string"}, "name": NAME,
                                     "key": {"type": "string"}}}}}},
    },
}
SCHEMAS = {"ScaledObject": SCALED_OBJECT, "TriggerAuthentication": TRIGGER_AUTHENTICATION}


def _keda() -> list[dict[str, Any]]:
    docs = [doc for path in keda_files() for doc in load_yaml_documents(path)]
    assert docs, "no KEDA manifests in deploy/k8s/optional/keda"
    return docs


def _kind(kind: str) -> dict[str, dict[str, Any]]:
    return {d["metadata"]["name"]: d for d in _keda() if d["kind"] == kind}


def _deployments() -> dict[str, dict[str, Any]]:
    found = {}
    for path in sorted((REPO / "deploy/k8s").rglob("*.yaml")):
        for doc in load_yaml_documents(path):
            if doc.get("kind") == "Deployment":
                found[doc["metadata"]["name"]] = doc
    return found


def _postgres_trigger(scaled: dict[str, Any]) -> dict[str, Any]:
    [trigger] = [t for t in scaled["spec"]["triggers"] if t["type"] == "postgresql"]
    return trigger


def test_keda_manifests_match_the_crd_fields_and_the_postgresql_scaler() -> None:
    for doc in _keda():
        assert doc["kind"] in SCHEMAS, f"unexpected kind {doc['kind']}"
        jsonschema.validate(doc, SCHEMAS[doc["kind"]])
    for name, scaled in _kind("ScaledObject").items():
        trigger = _postgres_trigger(scaled)
        unknown = set(trigger["metadata"]) - POSTGRES_KEYS
        assert not unknown, f"{name}: the PostgreSQL scaler has no {unknown}"
        assert float(trigger["metadata"]["targetQueryValue"]) > 0
        assert scaled["spec"]["minReplicaCount"] <= scaled["spec"]["maxReplicaCount"]


def test_keda_validation_rejects_a_broken_scaled_object() -> None:
    broken = {"apiVersion": "keda.sh/v1alpha1", "kind": "ScaledObject",
              "metadata": {"name": "x", "namespace": "cronplane"},
              "spec": {"scaleTargetRef": {"name": "x"},
                       "triggers": [{"type": "postgresql", "metadata": {"targetQueryValue": 20}}]}}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, SCALED_OBJECT)


def test_the_scaled_object_targets_the_deployment_that_serves_its_queue() -> None:
    deployments = _deployments()
    auths = _kind("TriggerAuthentication")
    secret = next(d for path in (REPO / "deploy/k8s").glob("secret.example.yaml")
                  for d in load_yaml_documents(path) if d["kind"] == "Secret")
    for name, scaled in _kind("ScaledObject").items():
        target = scaled["spec"]["scaleTargetRef"]["name"]
        assert target in deployments, f"{name} scales {target}, which no manifest defines"
        container = deployments[target]["spec"]["template"]["spec"]["containers"][0]
        queues = {e["name"]: e["value"] for e in container.get("env", [])}["CRONPLANE_QUEUES"]
        query = _postgres_trigger(scaled)["metadata"]["query"]
        [counted] = re.findall(r"j\.queue = '([a-z0-9_.-]+)'", query)
        assert queues.split(",") == [counted], (
            f"{name} counts queue {counted!r} but {target} serves {queues!r}")
        ref = _postgres_trigger(scaled)["authenticationRef"]["name"]
        assert ref in auths, f"{name} names TriggerAuthentication {ref}, which is not defined"
        for item in auths[ref]["spec"]["secretTargetRef"]:
            assert item["name"] == secret["metadata"]["name"]
            assert item["key"] in secret["stringData"], f"the secret has no {item['key']}"


def test_the_scaler_query_counts_due_pending_jobs_of_its_queue_and_nothing_when_paused(
        database_url: str) -> None:
    [scaled] = _kind("ScaledObject").values()
    query = _postgres_trigger(scaled)["metadata"]["query"]
    with psycopg.connect(database_url, autocommit=True) as conn:
        def count() -> int:
            return int(conn.execute(query).fetchone()[0])

        before = count()
        conn.execute("INSERT INTO jobs (handler, queue) VALUES ('noop', 'reports'), "
                     "('noop', 'reports'), ('noop', 'other')")
        conn.execute("INSERT INTO jobs (handler, queue, run_at) "
                     "VALUES ('noop', 'reports', now() + interval '1 hour')")
        assert count() == before + 2, "counts the due PENDING jobs of `reports` only"
        conn.execute("UPDATE queues SET paused = true WHERE project = 'default' "
                     "AND name = 'reports'")
        assert count() == 0, "a paused queue asks for no workers"
