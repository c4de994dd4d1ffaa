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


def _zxcvbn_warnings() -> set[str]:
    """Every warning zxcvbn's feedback can give (the `_()` texts its feedback.py assigns to `warning`)."""
    import ast
    from pathlib import Path

    import zxcvbn

    tree = ast.parse((Path(zxcvbn.__file__).parent / "feedback.py").read_text(encoding="utf-8"))
    found = set()
    for node in ast.walk(tree):
        pairs = []
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "warning" for t in node.targets):
            pairs.append(node.value)
        elif isinstance(node, ast.Dict):
            pairs += [v for k, v in zip(node.keys, node.values, strict=True)
                      if isinstance(k, ast.Constant) and k.value == "warning"]
        for value in pairs:
            if isinstance(value, ast.Call) and value.args and isinstance(value.args[0], ast.Constant):
                found.add(value.args[0].value)
    return found


def test_every_zxcvbn_warning_is_in_the_catalog() -> None:
    from memories_tui.frontend.strength import WARNINGS

    warnings = _zxcvbn_warnings()
    assert len(warnings) >= 12 and warnings <= set(WARNINGS)


def test_the_advice_is_in_the_reader_s_language() -> None:
    from memories_tui.i18n import set_language

    try:
        set_language("zh-Hant")
        advice = estimate("password").advice
        assert advice.startswith("這是最常見的前 10 名密碼之一。很容易") and "top-10" not in advice
        set_language("zh-Hans")
        assert estimate("1qaz7ujm").advice.startswith("键盘上整排相连的按键很容易被猜到。")
    finally:
        set_language("en")
    assert estimate("password").advice.startswith("This is a top-10 common password. Easy to guess.")
