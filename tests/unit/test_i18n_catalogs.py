"""The catalogs against the source: every marked string translated in both scripts, no stale or
fuzzy entry, the same placeholders as the English, each script in its own characters and
regional words (Taiwan: 檔案, 搜尋, 資料夾; mainland: 文件, 搜索, 文件夹)."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import re

import opencc
import pytest

from tests.helpers.paths import REPO_ROOT


def _script():
    loader = importlib.machinery.SourceFileLoader("i18n_script", str(REPO_ROOT / "scripts" / "i18n"))
    spec = importlib.util.spec_from_loader("i18n_script", loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


SCRIPT = _script()


def test_every_marked_string_has_a_translation_in_both_catalogs():
    problems = SCRIPT.problems()
    assert not problems, "run `scripts/i18n update`, then translate:\n" + "\n".join(problems[:40])


def test_the_check_finds_a_missing_entry_and_a_broken_placeholder(tmp_path, monkeypatch):
    """The check above can fail: drop one entry and misspell a placeholder in a copy."""
    catalog = SCRIPT.load("zh-Hant")
    catalog.delete("No results.")
    entry = catalog.get("{path} does not exist.")
    entry.string = "{paht} 不存在。"
    real_load = SCRIPT.load
    monkeypatch.setattr(SCRIPT, "load", lambda language: catalog if language == "zh-Hant" else real_load(language))
    found = SCRIPT.problems()
    assert any("missing 'No results.'" in line for line in found)
    assert any("placeholders differ in '{path} does not exist.'" in line for line in found)


def _strings(language: str) -> list[str]:
    out = []
    for message in SCRIPT.load(language):
        if not message.id:
            continue
        texts = message.string if isinstance(message.string, tuple | list) else (message.string,)
        out += [t for t in texts if t]
    return out


# Words each region writes differently; a translation in one script must not use the other's.
MAINLAND_WORDS = ("文件夾", "文件夹", "搜索", "默認", "默认", "設置", "设置", "屏幕", "網絡", "网络", "軟件", "信息",
                  "數據", "数据", "服務器", "服务器", "視頻", "视频", "菜單", "菜单")
TAIWAN_WORDS = ("檔案", "档案", "搜尋", "搜寻", "資料夾", "资料夹", "預設", "预设", "螢幕", "萤幕", "網路", "网路",
                "軟體", "软体", "訊息", "讯息", "伺服器", "使用者", "選單", "选单", "程式")


@pytest.mark.parametrize(("language", "convert", "foreign"), [
    ("zh-Hant", "s2t", MAINLAND_WORDS),
    ("zh-Hans", "t2s", TAIWAN_WORDS),
])
def test_each_catalog_is_written_in_its_own_script_and_usage(language, convert, foreign):
    """Character by character (OpenCC converts some phrases to rarer variants, e.g. 查核 → 查覈):
    no character that the conversion to this script would change, but 台 (Taiwan writes 一台電腦)."""
    to_own_script = opencc.OpenCC(convert).convert
    strings = _strings(language)
    assert len(strings) > 300
    wrong_script = [(ch, s) for s in strings for ch in set(s) if ch != "台" and to_own_script(ch) != ch]
    assert not wrong_script, f"{language} strings with characters of the other script: {wrong_script[:5]}"
    wrong_words = [(w, s) for s in strings for w in foreign if w in s]
    assert not wrong_words, f"{language} strings with the other region's words: {wrong_words[:5]}"


def test_the_chinese_catalogs_say_file_folder_search_and_password_the_regional_way():
    hant = " ".join(_strings("zh-Hant"))
    hans = " ".join(_strings("zh-Hans"))
    for word in ("檔案", "搜尋", "資料夾", "密碼"):
        assert word in hant, word
    for word in ("文件", "搜索", "文件夹", "密码"):
        assert word in hans, word


def test_no_translation_leaves_an_english_sentence_untranslated():
    """A msgstr identical to a long English msgid is a translation someone skipped."""
    for language in ("zh-Hant", "zh-Hans"):
        same = [m.id for m in SCRIPT.load(language)
                if m.id and isinstance(m.id, str) and m.string == m.id and re.search(r"[a-z]{3,} [a-z]{3,}", m.id)]
        assert not same, f"{language}: {same[:5]}"
