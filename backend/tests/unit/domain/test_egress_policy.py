"""Address classification: what the egress policy denies, allows, and how it reads the allow list."""

from __future__ import annotations

import ipaddress

import pytest

from cronplane.config import ConfigError, Settings
from cronplane.domain.egress import DEFAULT_POLICY, EgressError, EgressPolicy, denied_reason


@pytest.mark.parametrize("address", [
    "127.0.0.1", "127.9.9.9", "10.1.2.3", "172.16.0.1", "172.31.255.255", "192.168.1.1",
    "169.254.169.254", "100.64.0.1", "100.127.255.254", "0.0.0.0", "224.0.0.1", "255.255.255.255",
    "::", "::1", "fe80::1", "fc00::1", "fd00:ec2::254", "ff02::1",
    "::ffff:127.0.0.1", "::ffff:169.254.169.254", "::ffff:10.0.0.1", "::127.0.0.1",
    "2002:7f00:1::", "64:ff9b::a9fe:a9fe"])
def test_non_public_addresses_are_denied(address: str) -> None:
    assert denied_reason(ipaddress.ip_address(address)) is not None


@pytest.mark.parametrize("address", ["8.8.8.8", "1.1.1.1", "2001:4860:4860::8888",
                                     "::ffff:8.8.8.8", "100.128.0.1", "172.32.0.1"])
def test_public_addresses_are_allowed(address: str) -> None:
    assert denied_reason(ipaddress.ip_address(address)) is None


@pytest.mark.parametrize("url", [
    "http://127.0.0.1/", "http://2130706433/", "http://0x7f.1/", "http://0177.0.0.1/",
    "http://[::ffff:127.0.0.1]/", "http://LOCALHOST./", "http://api.localhost/",
    "ftp://example.com/", "file:///etc/passwd", "http:///nohost"])
def test_literal_denials_need_no_dns(url: str) -> None:
    with pytest.raises(EgressError, match=r"^egress denied:"):
        DEFAULT_POLICY.check_url_literal(url)


def test_names_are_left_for_resolution_time() -> None:
    DEFAULT_POLICY.check_url_literal("https://example.com/hook")


def test_the_allow_list_takes_cidrs_addresses_and_names() -> None:
    policy = EgressPolicy.parse(" 10.0.0.0/8, ::1 , Hooks.Internal. ")
    policy.check_address("x", ipaddress.ip_address("10.2.3.4"))
    policy.check_address("x", ipaddress.ip_address("::ffff:10.2.3.4"))
    policy.check_address("x", ipaddress.ip_address("::1"))
    policy.check_address("hooks.internal", ipaddress.ip_address("192.168.0.1"))
    with pytest.raises(EgressError):
        policy.check_address("x", ipaddress.ip_address("192.168.0.1"))


def test_a_bad_allow_entry_stops_start_up_naming_the_variable() -> None:
    with pytest.raises(ConfigError, match=r"^CRONPLANE_HTTP_ALLOW: "):
        Settings.from_env({"CRONPLANE_HTTP_ALLOW": "10.0.0.0/8, not a host!"})
    settings = Settings.from_env({"CRONPLANE_HTTP_ALLOW": "127.0.0.1/32"})
    assert settings.egress_policy == EgressPolicy.parse("127.0.0.1")
