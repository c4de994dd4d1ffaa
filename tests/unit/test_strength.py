"""Passphrase strength (frontend/strength.py, shown by the TUI's create form and the CLI): a real
estimator (zxcvbn) rates well-known passwords and phrases weak however long they are; character
classes alone rated `password12345678` "strong (~82 bits)"."""

from __future__ import annotations

import pytest

from memories_tui.frontend.strength import MAX_RATED_CHARS, estimate

KNOWN_WEAK = ["password12345678", "P@ssw0rd!2024", "qwertyuiop123456", "iloveyou12345678", "1qaz2wsx3edc4rfv",
              "aaaaaaaaaaaaaaaaaaaa", "Tr0ub4dor", "abcdefgh", "1234567890",
              "The quick brown fox jumps over the lazy dog.", "correct horse battery staple",
              "Correct-Horse-Battery-Staple", "to be or not to be, that is the question"]


@pytest.mark.parametrize("passphrase", KNOWN_WEAK)
def test_well_known_passwords_and_phrases_are_weak(passphrase: str) -> None:
    rated = estimate(passphrase)
    assert rated.label == "weak" and rated.bits < 32 and rated.advice


def test_random_words_rate_higher_than_common_ones() -> None:
    assert estimate("").label == ""
    assert estimate("granite otter velvet cascade lantern").label == "strong"
    assert estimate("granite otter velvet cascade").label in ("fair", "good")
    assert estimate("password12345678").bits < estimate("granite otter").bits < estimate(
        "granite otter velvet cascade lantern").bits


def test_warning_from_the_estimator_is_passed_on() -> None:
    assert "common" in estimate("password12345678").advice.lower()


def test_very_long_passphrases_are_rated_by_their_start_quickly() -> None:
    long = "granite otter velvet cascade lantern " * 20
    rated = estimate(long)
    assert len(long) > MAX_RATED_CHARS and rated.label == "strong"
