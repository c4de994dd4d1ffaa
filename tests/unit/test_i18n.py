"""The interface language: which one, catalogs compiled and loaded, plural forms, late-rendered
messages (English in JSON, the reader's language on screen), fallbacks."""

from __future__ import annotations

import json
import shutil

import pytest

from memories_tui import i18n
from memories_tui.config import parse_config
from memories_tui.errors import ConfigError, InputRefusedError, UsageError, describe_error
from memories_tui.i18n import Message, _, _n, msg, msg_n, resolve_language, set_language, term


@pytest.mark.parametrize(("environ", "expected"), [
    ({"LANG": "zh_TW.UTF-8"}, "zh-Hant"),
    ({"LANG": "zh_HK.UTF-8"}, "zh-Hant"),
    ({"LANG": "zh_MO"}, "zh-Hant"),
    ({"LANG": "zh_CN.UTF-8"}, "zh-Hans"),
    ({"LANG": "zh_SG.GB2312"}, "zh-Hans"),
    ({"LANG": "zh_Hant_TW.UTF-8"}, "zh-Hant"),
    ({"LANG": "en_US.UTF-8"}, "en"),
    ({"LANG": "C.UTF-8"}, "en"),
    ({"LANG": "fr_FR.UTF-8"}, "en"),
    ({"LANG": "zh"}, "en"),  # no region, no script: not one we can tell apart
    ({}, "en"),
    # POSIX order: LC_ALL, then LC_MESSAGES, then LANG; an empty one does not count
    ({"LC_ALL": "zh_CN.UTF-8", "LC_MESSAGES": "zh_TW.UTF-8", "LANG": "en_US.UTF-8"}, "zh-Hans"),
    ({"LC_ALL": "", "LC_MESSAGES": "zh_TW.UTF-8", "LANG": "zh_CN.UTF-8"}, "zh-Hant"),
    ({"LC_ALL": "", "LANG": "zh_TW.UTF-8"}, "zh-Hant"),
    ({"LC_ALL": "C", "LANG": "zh_TW.UTF-8"}, "en"),
])
def test_auto_follows_the_locale_variables(environ, expected):
    assert resolve_language("auto", environ) == expected
    assert resolve_language(None, environ) == expected


def test_an_explicit_setting_wins_over_the_locale():
    assert resolve_language("zh-Hans", {"LANG": "zh_TW.UTF-8"}) == "zh-Hans"
    assert resolve_language("en", {"LC_ALL": "zh_TW.UTF-8"}) == "en"
    assert resolve_language("ZH-hant", {}) == "zh-Hant"
    with pytest.raises(ValueError):
        resolve_language("klingon", {})


def test_ui_language_in_the_config(tmp_path):
    config = parse_config({"ui": {"language": "zh-Hant"}}, tmp_path / "c.toml", tmp_path)
    assert config.ui.language == "zh-Hant"
    assert parse_config({}, tmp_path / "c.toml", tmp_path).ui.language == "auto"
    with pytest.raises(ConfigError, match="ui.language must be one of auto, en, zh-Hant, zh-Hans"):
        parse_config({"ui": {"language": "fr"}}, tmp_path / "c.toml", tmp_path)
    with pytest.raises(ConfigError, match="Unknown config key"):
        parse_config({"ui": {"languages": "en"}}, tmp_path / "c.toml", tmp_path)


def test_catalogs_translate_in_each_script():
    set_language("zh-Hant")
    assert _("No results.") == "沒有結果。"
    assert _("Searching") == "搜尋中"
    set_language("zh-Hans")
    assert _("No results.") == "没有结果。"
    assert _("Searching") == "搜索中"
    set_language("en")
    assert _("No results.") == "No results."


def test_plural_forms_follow_each_language():
    one = msg_n("Stored asset {id} ({size:,} byte, encrypted; never indexed)",
                "Stored asset {id} ({size:,} bytes, encrypted; never indexed)", 1, id="a1", size=1)
    many = msg_n("Stored asset {id} ({size:,} byte, encrypted; never indexed)",
                 "Stored asset {id} ({size:,} bytes, encrypted; never indexed)", 2048, id="a1", size=2048)
    assert str(one) == "Stored asset a1 (1 byte, encrypted; never indexed)"
    assert str(many) == "Stored asset a1 (2,048 bytes, encrypted; never indexed)"
    set_language("zh-Hant")  # Chinese has one form (nplurals=1): the same sentence for 1 and 2,048
    assert one.localized() == "已儲存附件 a1（1 位元組，已加密；永不建立索引）"
    assert many.localized() == "已儲存附件 a1（2,048 位元組，已加密；永不建立索引）"
    assert str(many).startswith("Stored asset")  # English whatever the interface language


def test_english_uses_the_plural_for_zero():
    """"0 bytes", "0 requests served": English takes the singular for exactly one only."""
    args = ("Stored asset {id} ({size:,} byte, encrypted; never indexed)",
            "Stored asset {id} ({size:,} bytes, encrypted; never indexed)")
    none = msg_n(*args, 0, id="a1", size=0)
    assert str(none) == "Stored asset a1 (0 bytes, encrypted; never indexed)"
    assert none.localized() == str(none)  # the interface in English takes the same form
    assert _n("{n:,} request served", "{n:,} requests served", 0).format(n=0) == "0 requests served"


def test_an_error_is_english_in_json_and_localized_on_screen():
    error = InputRefusedError(msg("{path} does not exist.", path="/tmp/筆記.md"), code="file_not_found")
    set_language("zh-Hant")
    assert error.to_json() == {"error": {"code": "file_not_found", "message": "/tmp/筆記.md does not exist."}}
    assert describe_error(error) == "/tmp/筆記.md 不存在。"
    set_language("zh-Hans")
    assert describe_error(error) == "/tmp/筆記.md 不存在。"  # a value is shown as it is, never converted
    assert json.loads(json.dumps(error.to_json()))["error"]["message"] == "/tmp/筆記.md does not exist."


def test_a_nested_error_renders_in_its_hosts_language():
    inner = UsageError(msg("The query is empty; give some words to search for."))
    outer = ConfigError(msg("Cannot read the config file: {reason}", reason=inner))
    assert outer.message == "Cannot read the config file: The query is empty; give some words to search for."
    set_language("zh-Hant")
    assert outer.localized() == "無法讀取設定檔：查詢是空的；請輸入要搜尋的字詞。"


def test_localized_messages_are_redacted_too():
    key = "sk-" + "a" * 30
    error = ConfigError(msg("Cannot read the config file: {reason}", reason=f"bad value {key}"))
    set_language("zh-Hant")
    assert key not in error.localized() and "[redacted]" in error.localized()
    assert key not in error.message


def test_a_fragment_keeps_its_braces_and_translates_when_known():
    assert str(term("{not a placeholder}")) == "{not a placeholder}"
    set_language("zh-Hant")
    assert term("{not a placeholder}").localized() == "{not a placeholder}"
    assert term("passphrase file").localized() == "密碼檔"


def test_unknown_strings_and_broken_translations_fall_back_to_english(tmp_path, monkeypatch):
    """A msgid missing from the catalog shows the English; a translation whose placeholder does
    not exist in the message (a translator's typo) shows the English sentence, never crashes."""
    locale = tmp_path / "locale" / "zh_Hant" / "LC_MESSAGES"
    locale.mkdir(parents=True)
    source = i18n.catalog_dir("zh-Hant") / "memories.po"
    text = source.read_text(encoding="utf-8").replace('msgstr "{path} 不存在。"', 'msgstr "{paht} 不存在。"')
    assert "{paht}" in text
    (locale / "memories.po").write_text(text, encoding="utf-8")
    monkeypatch.setattr(i18n, "LOCALE_DIR", tmp_path / "locale")
    monkeypatch.setattr(i18n, "_loaded", {})
    set_language("zh-Hant")  # no .mo there: compiled from the .po in memory (and written beside it)
    assert (locale / "memories.mo").is_file()
    assert _("No results.") == "沒有結果。"
    assert _("A sentence no catalog has.") == "A sentence no catalog has."
    assert msg("{path} does not exist.", path="x").localized() == "x does not exist."


def test_a_stale_mo_is_compiled_again_from_its_po(tmp_path, monkeypatch):
    locale = tmp_path / "locale" / "zh_Hant" / "LC_MESSAGES"
    locale.mkdir(parents=True)
    po = i18n.catalog_dir("zh-Hant") / "memories.po"
    shutil.copy(po, locale / "memories.po")
    i18n.compile_po(locale / "memories.po", locale / "memories.mo")
    edited = (locale / "memories.po").read_text(encoding="utf-8").replace('msgstr "沒有結果。"', 'msgstr "查無結果。"')
    (locale / "memories.po").write_text(edited, encoding="utf-8")
    mo = locale / "memories.mo"
    import os
    os.utime(mo, (mo.stat().st_mtime - 10, mo.stat().st_mtime - 10))  # the .po is the newer file
    monkeypatch.setattr(i18n, "LOCALE_DIR", tmp_path / "locale")
    monkeypatch.setattr(i18n, "_loaded", {})
    set_language("zh-Hant")
    assert _("No results.") == "查無結果。"


def test_no_catalog_at_all_means_english(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(i18n, "LOCALE_DIR", tmp_path / "nowhere")
    monkeypatch.setattr(i18n, "_loaded", {})
    set_language("zh-Hant")
    assert i18n.current_language() == "zh-Hant"
    assert _("No results.") == "No results."


def test_message_equality_and_english_rendering():
    assert msg("a {x}", x=1) == msg("a {x}", x=1)
    assert msg("a {x}", x=1) != msg("a {x}", x=2)
    assert str(msg("{{literal}} {x:,}", x=12345)) == "{literal} 12,345"
    assert isinstance(msg("x"), Message)


def test_both_chinese_catalogs_declare_one_plural_form():
    for language in ("zh-Hant", "zh-Hans"):
        text = (i18n.catalog_dir(language) / "memories.po").read_text(encoding="utf-8")
        assert text.count('"Plural-Forms: nplurals=1; plural=0;\\n"') == 1


def test_every_lock_reason_of_the_resident_engine_has_a_sentence():
    """The daemon logs why it locked a vault in English ("idle", "expired", …); the TUI says it in
    the reader's language. A reason the daemon starts giving without a sentence fails here."""
    import ast
    from pathlib import Path

    from memories_tui.frontend.words import LOCK_NOTICES, lock_notice

    package = Path(i18n.__file__).parent
    reasons = set()
    for path in [*sorted((package / "daemon").glob("*.py")), package / "tui" / "daemon_link.py"]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "lock" and len(node.args) == 2 \
                    and isinstance(node.args[1], ast.Constant):
                reasons.add(node.args[1].value)  # service.lock(vault_id, "idle")
            if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "reason" for t in node.targets) \
                    and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
                reasons.add(node.value.value)  # reason = "locked in the Memories daemon"
    assert {"idle", "expired", "lock", "restore", "locked in the Memories daemon"} <= reasons
    assert reasons <= set(LOCK_NOTICES)
    try:
        set_language("zh-Hant")
        assert lock_notice("idle") == "已鎖定：閒置時間已超過常駐程式的設定。"
        assert lock_notice("SIGTERM") == "已鎖定：SIGTERM。"
    finally:
        set_language("en")
    assert lock_notice("expired") == "Locked: the time it was unlocked for (--for) ran out."
