"""``storage.connections.conninfo``: any URL libpq reads (several hosts included), with TCP
keepalives so that a primary whose machine died is noticed in seconds, not after the kernel's
retransmission timeout; a URL's own settings win."""

from __future__ import annotations

import psycopg
import pytest
from psycopg.conninfo import conninfo_to_dict

from cronplane.storage.connections import TCP_DEFAULTS, conninfo


def test_a_multi_host_url_keeps_its_hosts_and_gains_keepalives_and_a_tcp_user_timeout() -> None:
    params = conninfo_to_dict(conninfo(
        "postgresql+psycopg://u:p@h1:5432,h2:5433/db?target_session_attrs=read-write"))
    assert params["host"] == "h1,h2" and params["port"] == "5432,5433", params
    assert params["target_session_attrs"] == "read-write"
    for key, value in TCP_DEFAULTS.items():
        assert params[key] == value, f"{key} must default to {value}: {params}"


def test_settings_in_the_url_win_over_the_defaults() -> None:
    params = conninfo_to_dict(conninfo(
        "postgresql://u@/db?host=/run/pg&keepalives_idle=30&tcp_user_timeout=0"))
    assert params["keepalives_idle"] == "30" and params["tcp_user_timeout"] == "0", params
    assert params["host"] == "/run/pg"


def test_a_url_libpq_cannot_read_is_refused() -> None:
    with pytest.raises(psycopg.ProgrammingError):
        conninfo("postgresql://u@h1:notaport/db?bogus_option=1")


def test_the_pool_retries_a_lost_connection_at_least_once_a_second_however_long_it_is_down() -> None:
    from cronplane.storage.pool import RECONNECT_MAX_DELAY_SECONDS, ReconnectBackoff

    attempt = ReconnectBackoff(timeout=300)
    now, delays = 0.0, []
    for _ in range(20):  # 20 failed attempts: the primary is gone for a while
        attempt.update_delay(now)
        delays.append(attempt.delay)
        now += attempt.delay
    assert delays[0] < 0.5, f"the first retry comes quickly: {delays}"
    assert max(delays) <= RECONNECT_MAX_DELAY_SECONDS, f"no pause grows past the cap: {delays}"
    assert not attempt.time_to_give_up(now), "the pool keeps trying (reconnect_timeout 300 s)"
