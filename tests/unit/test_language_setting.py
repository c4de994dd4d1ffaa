"""The language a person picks is remembered in config.toml without disturbing the rest of it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memories_tui.config import load_config
from memories_tui.errors import ConfigError
from memories_tui.frontend.language_setting import save_language
from tests.helpers.paths import REPO_ROOT

EXAMPLE = REPO_ROOT / "memories_tui" / "config.example.toml"


def test_the_commented_config_keeps_every_line_and_gains_the_language(tmp_path):
    config = tmp_path / "config.toml"
    original = EXAMPLE.read_text(encoding="utf-8")
    config.write_text(original, encoding="utf-8")
    os.chmod(config, 0o640)
    save_language(config, "zh-hans")
    updated = config.read_text(encoding="utf-8")
    assert load_config(config, tmp_path).ui.language == "zh-Hans"
    # nothing lost: the new file is the old one plus one line inside [ui]
    old_lines, new_lines = original.splitlines(), updated.splitlines()
    assert [line for line in new_lines if line not in old_lines] == ['language = "zh-Hans"']
    assert [line for line in old_lines if line not in new_lines] == []
    assert new_lines.index('language = "zh-Hans"') < new_lines.index("[tui]")
    assert oct(config.stat().st_mode & 0o777) == oct(0o640)
    save_language(config, "en")  # switching again replaces the value, not adds a second key
    assert config.read_text(encoding="utf-8").count("\nlanguage = ") == 1
    assert load_config(config, tmp_path).ui.language == "en"


def test_a_missing_config_is_created_owner_only(tmp_path):
    config = tmp_path / "home" / "config.toml"
    save_language(config, "zh-Hant")
    assert config.read_text(encoding="utf-8") == '[ui]\nlanguage = "zh-Hant"\n'
    assert config.stat().st_mode & 0o777 == 0o600


@pytest.mark.parametrize("content", ["[rag\nbroken", "ui = 3\n", b"\xff\xfe not utf-8"])
def test_a_config_that_cannot_be_edited_is_left_as_it_was(tmp_path, content):
    config = tmp_path / "config.toml"
    if isinstance(content, bytes):
        config.write_bytes(content)
    else:
        config.write_text(content, encoding="utf-8")
    before = config.read_bytes()
    with pytest.raises(ConfigError):
        save_language(config, "zh-Hant")
    assert config.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["config.toml"]  # no temporary file left


def test_not_a_regular_file_is_refused(tmp_path):
    folder: Path = tmp_path / "config.toml"
    folder.mkdir()
    with pytest.raises(ConfigError):
        save_language(folder, "en")
    with pytest.raises(ValueError):
        save_language(tmp_path / "other.toml", "klingon")
