from pathlib import Path

import pytest

from cronplane.config import ConfigError, Settings


def test_defaults_match_the_contract() -> None:
    s = Settings.from_env({})
    assert (s.host, s.port) == ("127.0.0.1", 8080)
    assert s.database_url is None and s.embedded_database
    assert s.lease_ttl_seconds == 15 and s.attempt_lease_seconds == 30
    assert s.worker_concurrency == 8 and s.execution is True and s.demo_personas is False


@pytest.mark.parametrize(
    ("env", "variable"),
    [
        ({"DATABASE_URL": "mysql://x@h/db"}, "DATABASE_URL"),
        ({"DATABASE_URL": "postgresql:///db"}, "DATABASE_URL"),
        ({"CRONPLANE_PORT": "0"}, "CRONPLANE_PORT"),
        ({"CRONPLANE_PORT": "http"}, "CRONPLANE_PORT"),
        ({"CRONPLANE_LEASE_TTL_SECONDS": "-5"}, "CRONPLANE_LEASE_TTL_SECONDS"),
        ({"CRONPLANE_ATTEMPT_LEASE_SECONDS": "soon"}, "CRONPLANE_ATTEMPT_LEASE_SECONDS"),
        ({"CRONPLANE_WORKER_CONCURRENCY": "0"}, "CRONPLANE_WORKER_CONCURRENCY"),
        ({"CRONPLANE_EXECUTION": "maybe"}, "CRONPLANE_EXECUTION"),
        ({"CRONPLANE_DEMO_PERSONAS": "2"}, "CRONPLANE_DEMO_PERSONAS"),
        ({"CRONPLANE_SHELL_SANDBOX": "landlock"}, "CRONPLANE_SHELL_SANDBOX"),
        ({"CRONPLANE_MAX_QUEUES_PER_PROJECT": "0"}, "CRONPLANE_MAX_QUEUES_PER_PROJECT"),
        ({"CRONPLANE_ENV": "production"}, "CRONPLANE_SECRET_KEY"),
        ({"CRONPLANE_ADMIN_USERNAME": "root"}, "CRONPLANE_ADMIN_PASSWORD"),
    ],
)
def test_invalid_values_fail_with_one_line_naming_the_variable(env: dict[str, str],
                                                               variable: str) -> None:
    with pytest.raises(ConfigError) as info:
        Settings.from_env(env)
    message = str(info.value)
    assert message.startswith(variable + ":"), message
    assert "\n" not in message


def test_execution_switch_accepts_on_and_off() -> None:
    assert Settings.from_env({"CRONPLANE_EXECUTION": "off"}).execution is False
    assert Settings.from_env({"CRONPLANE_EXECUTION": "on"}).execution is True


def test_the_shell_sandbox_is_on_unless_explicitly_turned_off() -> None:
    assert Settings.from_env({}).shell_sandbox is True
    assert Settings.from_env({"CRONPLANE_SHELL_SANDBOX": "off"}).shell_sandbox is False


def test_dev_secret_is_generated_once_and_reused(tmp_path: Path) -> None:
    first = Settings(data_dir=tmp_path).with_secret()
    second = Settings(data_dir=tmp_path).with_secret()
    assert first.secret_key and first.secret_key == second.secret_key
    assert (tmp_path / "secret_key").stat().st_mode & 0o077 == 0, "key file must be private"


def test_a_database_url_libpq_cannot_read_is_one_line_and_both_host_lists_are_read() -> None:
    from cronplane.config import ConfigError, Settings

    with pytest.raises(ConfigError, match="DATABASE_URL: not a URL libpq can read"):
        Settings.from_env({"DATABASE_URL": "postgresql://u@h1:5432,h2/db?no_such_key=1"})
    settings = Settings.from_env({"DATABASE_URL": "postgresql://u:p@h1:5432,h2:5432/db"
                                                  "?target_session_attrs=read-write"})
    assert settings.database_url is not None
    settings = Settings.from_env({"DATABASE_URL": "postgresql://u@/db?host=h1,h2&port=5432,5433"})
    assert settings.database_url is not None


def test_metrics_search_and_notify_bounds_have_the_contracts_defaults() -> None:
    s = Settings.from_env({})
    assert s.metrics_token is None
    assert s.search_concurrency == 2 and s.notify_per_minute == 10
    assert Settings.from_env({"CRONPLANE_METRICS_TOKEN": "tok"}).metrics_token == "tok"


def test_queues_per_project_are_capped_at_100_unless_set() -> None:
    assert Settings.from_env({}).max_queues_per_project == 100
    assert Settings.from_env(
        {"CRONPLANE_MAX_QUEUES_PER_PROJECT": "7"}).max_queues_per_project == 7


def test_a_production_metrics_token_must_be_long_and_not_the_example() -> None:
    production = {"CRONPLANE_ENV": "production", "CRONPLANE_SECRET_KEY": "a1b2c3d4e5f6" * 4,
                  "CRONPLANE_AUDIT_KEY": "f6e5d4c3b2a1" * 4}
    for token in ("short-token", "change-me-to-a-third-output-of-openssl-rand-hex-32"):
        with pytest.raises(ConfigError, match=r"^CRONPLANE_METRICS_TOKEN:"):
            Settings.from_env({**production, "CRONPLANE_METRICS_TOKEN": token})
    assert Settings.from_env({**production, "CRONPLANE_METRICS_TOKEN": "0123456789abcdef" * 3}
                             ).metrics_token == "0123456789abcdef" * 3
