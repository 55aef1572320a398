"""docker-compose.yml and deploy/compose.demo.yml: the compose spec, start order, scaling,
secrets, and the ordinary Postgres role the application runs as.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest

from tests.deploy.harness import (
    COMPOSE_FILES,
    PIP_HINT,
    REPO,
    assert_ok,
    cronplane_services,
    load_yaml,
    require_tool,
    run,
)


@pytest.mark.parametrize("relative", COMPOSE_FILES)
def test_compose_file_matches_the_compose_spec(relative: str) -> None:
    tool = require_tool("check-jsonschema", PIP_HINT)
    assert_ok(run([tool, "--builtin-schema", "vendor.compose-spec", relative]),
              f"compose spec validation of {relative}")


def test_compose_spec_validation_rejects_a_broken_file(tmp_path: Path) -> None:
    tool = require_tool("check-jsonschema", PIP_HINT)
    broken = tmp_path / "compose.yml"
    broken.write_text("services:\n  api:\n    image: x\n    depends_on:\n"
                      "      db: {condition: when_ready}\n")
    assert run([tool, "--builtin-schema", "vendor.compose-spec", str(broken)]).returncode != 0


@pytest.mark.parametrize("relative", COMPOSE_FILES)
def test_compose_orders_postgres_then_migrate_then_the_app(relative: str) -> None:
    services = load_yaml(relative)["services"]
    postgres = services["postgres"]
    assert postgres["image"].startswith("postgres:16"), postgres["image"]
    assert "healthcheck" in postgres
    assert any(str(v).endswith(":/var/lib/postgresql/data") for v in postgres["volumes"])
    assert services["migrate"]["command"] == ["migrate"]
    assert services["migrate"]["depends_on"]["postgres"]["condition"] == "service_healthy"
    assert services["migrate"].get("restart") == "no"
    for name in ("api", "worker"):
        condition = services[name]["depends_on"]["migrate"]["condition"]
        assert condition == "service_completed_successfully", f"{name} starts before migrations"
    assert services["caddy"]["depends_on"]["api"]["condition"] == "service_healthy"


@pytest.mark.parametrize("relative", COMPOSE_FILES)
def test_worker_can_be_scaled(relative: str) -> None:
    worker = load_yaml(relative)["services"]["worker"]
    assert "container_name" not in worker, "a fixed container_name breaks --scale worker=N"
    assert "ports" not in worker, "published host ports break --scale worker=N"


def test_production_stack_runs_caddy_on_80_and_443_with_persistent_certificates() -> None:
    compose = load_yaml("docker-compose.yml")
    caddy = compose["services"]["caddy"]
    assert {"80:80", "443:443"} <= set(caddy["ports"])
    mounts = {volume.split(":")[1] for volume in caddy["volumes"]}
    assert {"/data", "/config"} <= mounts
    assert caddy["build"]["target"] == "caddy"
    assert set(compose["volumes"]) >= {"postgres_data", "caddy_data", "caddy_config"}
    for name, service in compose["services"].items():
        if name != "caddy":
            assert all(str(p).startswith("127.0.0.1:") for p in service.get("ports", [])), (
                f"{name} publishes a port to every interface; only Caddy faces the internet")


def test_production_stack_takes_its_secrets_from_env_and_refuses_to_start_without_them() -> None:
    text = (REPO / "docker-compose.yml").read_text()
    for name in ("POSTGRES_PASSWORD", "CRONPLANE_DB_PASSWORD", "CRONPLANE_DB_OWNER_PASSWORD",
                 "CRONPLANE_SECRET_KEY", "CRONPLANE_AUDIT_KEY", "CRONPLANE_METRICS_TOKEN",
                 "CRONPLANE_DOMAIN"):
        assert re.search(r"\$\{" + name + r":\?", text), f"{name} should be required (${{{name}:?…}})"
    api = load_yaml("docker-compose.yml")["services"]["api"]
    assert api["environment"]["CRONPLANE_ENV"] == "production"
    assert api["environment"]["CRONPLANE_EXECUTION"].startswith("${CRONPLANE_API_EXECUTION")


def test_env_example_documents_every_variable_and_holds_no_real_secret() -> None:
    used = set(re.findall(r"\$\{(\w+)", (REPO / "docker-compose.yml").read_text()))
    lines = [line for line in (REPO / ".env.example").read_text().splitlines()
             if line and not line.startswith("#")]
    example = dict(line.split("=", 1) for line in lines)
    assert used <= set(example), f"not in .env.example: {sorted(used - set(example))}"
    for name, value in example.items():
        if re.search(r"PASSWORD|SECRET|KEY|TOKEN", name):
            assert "change-me" in value, f"{name} in .env.example looks like a real secret"


def test_demo_stack_needs_no_configuration_and_enables_personas_on_plain_http() -> None:
    text = (REPO / "deploy/compose.demo.yml").read_text()
    for expression in re.findall(r"\$\{([^}]*)\}", text):
        assert ":-" in expression, f"${{{expression}}} has no default: the demo must need no .env"
    services = load_yaml("deploy/compose.demo.yml")["services"]
    api_env = services["api"]["environment"]
    assert api_env["CRONPLANE_DEMO_PERSONAS"] == "true"
    assert "demo" in api_env["CRONPLANE_ADMIN_PASSWORD"], "the demo admin must look like a dev value"
    assert api_env["CRONPLANE_ENV"] != "production"
    caddy = services["caddy"]
    assert caddy["environment"]["CRONPLANE_DOMAIN"] == ":80", "the demo must not attempt ACME"
    assert any(str(port).endswith(":80") for port in caddy["ports"])
    assert "seed-demo.sh" in " ".join(services["seed"]["entrypoint"])


@pytest.mark.parametrize("relative", COMPOSE_FILES)
def test_compose_bind_mounts_exist(relative: str) -> None:
    base = (REPO / relative).parent
    for name, service in load_yaml(relative)["services"].items():
        for volume in service.get("volumes", []):
            source = str(volume).split(":")[0]
            if source.startswith("."):
                assert (base / source).exists(), f"{relative}: {name} mounts missing {source}"
        build = service.get("build")
        if build:
            assert (base / build["context"] / build["dockerfile"]).exists()


@pytest.mark.parametrize("relative", COMPOSE_FILES)
def test_the_application_connects_as_its_own_role_not_the_superuser(relative: str) -> None:
    services = load_yaml(relative)["services"]
    superuser = services["postgres"]["environment"]["POSTGRES_USER"]
    assert superuser != "cronplane", "the app role must not be the image's superuser"
    for name, service in cronplane_services(load_yaml(relative)).items():
        url = service["environment"]["DATABASE_URL"]
        assert url.startswith("postgresql://cronplane:"), f"{name}: {url}"
    mounts = " ".join(services["postgres"]["volumes"])
    assert "init-app-role.sh:/docker-entrypoint-initdb.d/" in mounts


def psql_binary() -> str:
    try:
        import pgserver

        bundled = Path(pgserver.__file__).parent / "pginstall" / "bin" / "psql"
        if bundled.exists():
            return str(bundled)
    except ImportError:
        pass
    return require_tool("psql", "apt-get install -y postgresql-client")


def test_postgres_init_script_creates_an_owner_and_a_least_privilege_runtime_role(
        pg: Any) -> None:
    import secrets
    from urllib.parse import urlsplit, urlunsplit

    import psycopg
    from psycopg import sql
    from psycopg.conninfo import conninfo_to_dict

    from cronplane.storage import migrator

    suffix = secrets.token_hex(4)
    role, owner_role, database = f"cp_role_{suffix}", f"cp_owner_{suffix}", f"cp_init_{suffix}"
    password, owner_password = secrets.token_hex(12), secrets.token_hex(12)
    admin = conninfo_to_dict(pg.admin_url)
    # The script calls `psql` as the image's entrypoint does: found on PATH, server from PG*.
    env = {"PATH": f"{Path(psql_binary()).parent}:{os.environ['PATH']}",
           "POSTGRES_USER": str(admin["user"]), "CRONPLANE_DB_USER": role,
           "CRONPLANE_DB_OWNER": owner_role, "CRONPLANE_DB_OWNER_PASSWORD": owner_password,
           "CRONPLANE_DB_NAME": database, "CRONPLANE_DB_PASSWORD": password}
    for key, var in (("host", "PGHOST"), ("port", "PGPORT"), ("password", "PGPASSWORD")):
        if admin.get(key):
            env[var] = str(admin[key])

    def url_as(name: str, secret: str) -> str:
        parts = urlsplit(pg.url(database))
        host = parts.netloc.rsplit("@", 1)[-1]
        return urlunsplit(parts._replace(netloc=f"{name}:{secret}@{host}"))

    try:
        assert_ok(run(["sh", str(REPO / "deploy/postgres/init-app-role.sh")], env=env),
                  "init-app-role.sh")
        with psycopg.connect(pg.admin_url, autocommit=True) as conn:
            for name in (role, owner_role):
                attributes = conn.execute(
                    "SELECT rolsuper, rolcreatedb, rolcreaterole FROM pg_roles WHERE rolname = %s",
                    (name,)).fetchone()
                assert attributes == (False, False, False), f"{name} has extra powers: {attributes}"
            owner = conn.execute("SELECT pg_get_userbyid(datdba) FROM pg_database "
                                 "WHERE datname = %s", (database,)).fetchone()
            connect = conn.execute(
                "SELECT has_database_privilege('public', %(db)s, 'CONNECT'), "
                "has_database_privilege(%(role)s, %(db)s, 'CONNECT')",
                {"db": database, "role": role}).fetchone()
        assert owner == (owner_role,), "the owner role owns the database, not the runtime role"
        assert connect == (False, True), "only cronplane's roles may connect (review N11)"
        # What the compose `migrate` service does: migrate as the owner, grant the runtime role.
        migrator.upgrade(url_as(owner_role, owner_password), runtime_role=role)
        runtime = url_as(role, password)
        assert migrator.schema_state(runtime).up_to_date, "the runtime role reads the schema head"
        with psycopg.connect(runtime, autocommit=True) as conn:
            conn.execute("SELECT count(*) FROM jobs")
            for statement in ("UPDATE audit_events SET action = action",
                              "DELETE FROM audit_events",
                              "ALTER TABLE audit_events DISABLE TRIGGER ALL"):
                with pytest.raises(psycopg.errors.InsufficientPrivilege):
                    conn.execute(statement)
    finally:
        with psycopg.connect(pg.admin_url, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)")
                         .format(sql.Identifier(database)))
            for name in (role, owner_role):
                conn.execute(sql.SQL("DROP ROLE IF EXISTS {}").format(sql.Identifier(name)))
