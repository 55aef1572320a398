"""Argon2id hashing: parameters at least OWASP's minimum, rehash detection, and the dummy
verification that makes unknown users cost as much as known ones."""

from __future__ import annotations

from argon2 import PasswordHasher, extract_parameters

from cronplane.security.passwords import (
    DEFAULT_HASHING,
    MAX_LENGTH,
    PasswordHashing,
    check_strength,
)


def test_hashes_are_argon2id_with_at_least_19_mib_and_two_passes() -> None:
    stored = DEFAULT_HASHING.hash("correct horse battery")
    params = extract_parameters(stored)
    assert stored.startswith("$argon2id$")
    assert params.memory_cost >= 19 * 1024 and params.time_cost >= 2


def test_verify_accepts_the_password_and_rejects_others() -> None:
    stored = DEFAULT_HASHING.hash("correct horse battery")
    assert DEFAULT_HASHING.verify(stored, "correct horse battery").ok
    assert not DEFAULT_HASHING.verify(stored, "correct horse batterY").ok
    assert not DEFAULT_HASHING.verify("not a hash", "x").ok


def test_a_hash_with_weaker_parameters_asks_for_a_rehash() -> None:
    weak = PasswordHasher(memory_cost=1024, time_cost=1).hash("pw-12345678")
    result = DEFAULT_HASHING.verify(weak, "pw-12345678")
    assert result.ok and result.needs_rehash
    assert not DEFAULT_HASHING.verify(DEFAULT_HASHING.hash("pw-12345678"),
                                      "pw-12345678").needs_rehash


def test_unknown_users_pay_for_one_verification_too() -> None:
    hashing = PasswordHashing(memory_cost=1024, time_cost=1)
    real = hashing._hasher
    calls: list[str] = []

    class Spy:
        def verify(self, stored: str, password: str) -> bool:
            calls.append(stored)
            return real.verify(stored, password)

        def hash(self, password: str) -> str:
            return real.hash(password)

    hashing._dummy_hash  # noqa: B018 - computed before the spy goes in
    hashing._hasher = Spy()  # type: ignore[assignment]
    assert not hashing.verify(None, "anything").ok
    assert len(calls) == 1 and calls[0].startswith("$argon2id$"), (
        "an unknown user must cost one Argon2 verification, like a wrong password")


def test_personas_get_unusable_passwords() -> None:
    hashing = PasswordHashing(memory_cost=1024, time_cost=1)
    assert hashing.unusable_hash() != hashing.unusable_hash()


def test_strength_rules() -> None:
    assert check_strength("short") is not None
    assert check_strength("eight ch") is None
    assert check_strength("x" * (MAX_LENGTH + 1)) is not None
