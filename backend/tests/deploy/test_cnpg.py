"""deploy/k8s/cnpg: the documented production database, a CloudNativePG ``Cluster`` with
synchronous replication and its PgBouncer ``Pooler`` in transaction mode, checked statically:
the YAML parses, every kind and apiVersion is one we know, the fields the operator requires are
there, and every Secret and Service the manifests name (secretRef, passwordSecret, the hosts of
the database URLs) exists in them — a Service either written out or created by the operator
(``<cluster>-rw``/``-ro``/``-r``, one per Pooler)."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

import jsonschema

from tests.deploy.harness import cnpg_files, k8s_files, load_yaml_documents

KNOWN = {("v1", "Namespace"), ("v1", "ConfigMap"), ("v1", "Secret"), ("v1", "Service"),
         ("apps/v1", "Deployment"), ("batch/v1", "Job"), ("autoscaling/v2", "HorizontalPodAutoscaler"),
         ("policy/v1", "PodDisruptionBudget"), ("networking.k8s.io/v1", "Ingress"),
         ("postgresql.cnpg.io/v1", "Cluster"), ("postgresql.cnpg.io/v1", "Pooler"),
         ("keda.sh/v1alpha1", "ScaledObject"), ("keda.sh/v1alpha1", "TriggerAuthentication")}
NAME = {"type": "string", "pattern": "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"}
METADATA = {"type": "object", "required": ["name", "namespace"],
            "properties": {"name": NAME, "namespace": {"const": "cronplane"}}}
SECRET_REF = {"type": "object", "required": ["name"], "properties": {"name": NAME}}
# The part of CloudNativePG's CRDs (postgresql.cnpg.io/v1, operator 1.25) the files use.
CLUSTER = {
    "type": "object", "required": ["apiVersion", "kind", "metadata", "spec"],
    "properties": {
        "metadata": METADATA,
        "spec": {
            "type": "object", "required": ["instances", "storage", "postgresql", "bootstrap"],
            "properties": {
                "instances": {"type": "integer", "minimum": 2, "maximum": 3},
                "storage": {"type": "object", "required": ["size"]},
                "postgresql": {
                    "type": "object", "required": ["synchronous"],
                    "properties": {
                        "synchronous": {
                            "type": "object", "required": ["method", "number"],
                            "additionalProperties": False,
                            "properties": {"method": {"enum": ["any", "first"]},
                                           "number": {"type": "integer", "minimum": 1},
                                           "dataDurability": {"enum": ["required", "preferred"]}}},
                        "parameters": {"type": "object",
                                       "additionalProperties": {"type": "string"}}}},
                "bootstrap": {
                    "type": "object", "required": ["initdb"],
                    "properties": {"initdb": {
                        "type": "object", "required": ["database", "owner", "secret"],
                        "properties": {"secret": SECRET_REF}}}},
                "managed": {"type": "object", "properties": {"roles": {
                    "type": "array", "items": {
                        "type": "object", "required": ["name", "passwordSecret"],
                        "properties": {"passwordSecret": SECRET_REF}}}}},
            }}}}
POOLER = {
    "type": "object", "required": ["apiVersion", "kind", "metadata", "spec"],
    "properties": {
        "metadata": METADATA,
        "spec": {
            "type": "object", "required": ["cluster", "type", "pgbouncer"],
            "additionalProperties": False,
            "properties": {
                "cluster": SECRET_REF, "instances": {"type": "integer", "minimum": 1},
                "type": {"const": "rw"},
                "pgbouncer": {
                    "type": "object", "required": ["poolMode"], "additionalProperties": False,
                    "properties": {"poolMode": {"const": "transaction"},
                                   "parameters": {"type": "object",
                                                  "additionalProperties": {"type": "string"}}}},
                "template": {"type": "object"}, "monitoring": {"type": "object"},
                "deploymentStrategy": {"type": "object"}, "serviceTemplate": {"type": "object"},
            }}}}


def _all() -> list[dict[str, Any]]:
    return [doc for path in [*k8s_files(), *cnpg_files()] for doc in load_yaml_documents(path)]


def _cnpg(kind: str) -> dict[str, dict[str, Any]]:
    return {d["metadata"]["name"]: d for path in cnpg_files()
            for d in load_yaml_documents(path) if d["kind"] == kind}


def test_cnpg_manifests_parse_and_use_only_known_kinds() -> None:
    assert cnpg_files(), "no manifests in deploy/k8s/cnpg"
    unknown = {(d.get("apiVersion"), d.get("kind")) for d in _all()} - KNOWN
    assert not unknown, f"unknown apiVersion/kind: {unknown}"


def test_the_cluster_replicates_synchronously_and_the_pooler_is_pgbouncer_in_transaction_mode(
        ) -> None:
    [cluster] = _cnpg("Cluster").values()
    jsonschema.validate(cluster, CLUSTER)
    assert cluster["spec"]["postgresql"]["synchronous"]["number"] < cluster["spec"]["instances"]
    [pooler] = _cnpg("Pooler").values()
    jsonschema.validate(pooler, POOLER)
    assert pooler["spec"]["cluster"]["name"] == cluster["metadata"]["name"], (
        "the pooler must front the cluster of this directory")


def test_the_cluster_rejects_a_broken_spec() -> None:
    [cluster] = _cnpg("Cluster").values()
    broken = {**cluster, "spec": {**cluster["spec"], "instances": 1}}
    try:
        jsonschema.validate(broken, CLUSTER)
    except jsonschema.ValidationError:
        return
    raise AssertionError("a one-instance cluster (no standby to fail over to) must be refused")


def _secret_refs(node: Any) -> set[str]:
    """Secret names a manifest refers to: envFrom secretRef, env secretKeyRef, volumes, and
    CloudNativePG's passwordSecret / initdb secret."""
    found: set[str] = set()
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("secretRef", "secretKeyRef", "passwordSecret") and isinstance(value, dict):
                found.add(value["name"])
            elif key == "secret" and isinstance(value, dict):
                found.add(value.get("name") or value.get("secretName"))
            else:
                found |= _secret_refs(value)
    elif isinstance(node, list):
        for item in node:
            found |= _secret_refs(item)
    return found


def test_every_secret_and_service_the_manifests_name_exists() -> None:
    docs = _all()
    secrets = {d["metadata"]["name"]: d for d in docs if d["kind"] == "Secret"}
    missing = set().union(*(_secret_refs(d) for d in docs)) - set(secrets)
    assert not missing, f"Secrets referred to but not in the manifests: {missing}"

    services = {d["metadata"]["name"] for d in docs if d["kind"] == "Service"}
    services |= {f"{name}-{suffix}" for name in _cnpg("Cluster") for suffix in ("rw", "ro", "r")}
    services |= set(_cnpg("Pooler"))
    urls = {key: value for secret in secrets.values()
            for key, value in secret.get("stringData", {}).items()
            if str(value).startswith("postgresql://")}
    assert {"DATABASE_URL", "CRONPLANE_DIRECT_DATABASE_URL",
            "CRONPLANE_MIGRATION_DATABASE_URL"} <= set(urls), urls.keys()
    for key, url in urls.items():
        host = urlsplit(url).hostname or ""
        assert host.split(".")[0] in services, f"{key} names host {host}, not a Service here"
    [pooler] = _cnpg("Pooler")
    [cluster] = _cnpg("Cluster")
    assert urlsplit(urls["DATABASE_URL"]).hostname == pooler, "DATABASE_URL → the pooler"
    for key in ("CRONPLANE_DIRECT_DATABASE_URL", "CRONPLANE_MIGRATION_DATABASE_URL"):
        # LISTEN, the leader lease and the migration lock need a session: not through PgBouncer.
        assert urlsplit(urls[key]).hostname == f"{cluster}-rw", f"{key} → the primary's Service"


def test_cnpg_secrets_are_examples() -> None:
    for name, secret in _cnpg("Secret").items():
        assert "change-me" in secret["stringData"]["password"], f"secret {name} looks real"
