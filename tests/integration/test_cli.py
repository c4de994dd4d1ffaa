"""The CLI through `cli.main(argv)` as a shell would call it: contract, records, ingest, refusals, secrets."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile

import pytest

from tests.helpers.cli import call_cli

CANARY = "CANARY-7f3a9c-金絲雀-zebra"


def test_init_is_idempotent_and_keeps_config(home):
    first = call_cli(home, "init", "--json")
    assert first.code == 0 and first.json["config_created"] is True
    config = home / "config.toml"
    assert "[rag.limits]" in config.read_text()
    config.write_text("# mine\n")
    second = call_cli(home, "--json", "init")
    assert second.json["config_created"] is False
    assert config.read_text() == "# mine\n"


def test_global_options_before_or_after_the_verb(home, vault, tmp_path):
    other = tmp_path / "elsewhere"
    before = call_cli(other, "--home", str(home), "--json", "vault", "list")
    after = call_cli(other, "vault", "list", "--home", str(home), "--json")
    assert before.code == after.code == 0
    assert before.json == after.json
    assert before.json["vaults"][0]["vault_id"] == vault
    assert before.json["vaults"][0]["name"] == "notes"


def test_json_is_one_object_with_raw_unicode(home, vault):
    result = call_cli(home, "memory", "add", vault, "--title", "中文標題", "--text", "內容", "--json")
    assert result.code == 0
    assert result.stdout.count("\n") == 1 and "\\u" not in result.stdout
    rid = result.json["id"]
    read = call_cli(home, "memory", "read", "notes", rid, "--json")  # unique name works as VAULT_ID
    assert "中文標題" in read.stdout and "\\u" not in read.stdout
    assert {"id", "revision", "kind", "title", "body", "tags", "metadata", "created", "updated"} <= set(read.json)


def test_usage_errors_exit_2_with_json_error(home, vault):
    cases = [
        ("memory", "add", vault, "--json"),                      # missing --title
        ("--json", "vault", "frobnicate"),                      # unknown verb
        ("memory", "read", vault, "x", "--revision", "two", "--json"),
        ("rag", "search", vault, "q", "--mode", "magic", "--json"),
        ("--json", "memory"),                                   # group without a command
    ]
    for args in cases:
        result = call_cli(home, *args)
        assert result.code == 2, (args, result.stdout, result.stderr)
        error = result.json["error"]
        assert error["code"] == "usage_error" and error["message"]


def test_usage_error_without_json_is_a_sentence_on_stderr(home):
    result = call_cli(home, "vault", "create")
    assert result.code == 2 and result.stdout == ""
    assert "error" in result.stderr and "--help" in result.stderr


def test_every_verb_has_help_with_an_example(home):
    verbs = [["init"], ["tui"], ["vault", "create"], ["vault", "list"], ["vault", "passwd"], ["vault", "policy"],
             ["memory", "add"], ["memory", "read"], ["memory", "update"], ["memory", "delete"], ["memory", "list"],
             ["memory", "search"], ["asset", "add"], ["rag", "ingest"], ["rag", "search"], ["rag", "status"],
             ["rag", "index"], ["rag", "model-install"]]
    for verb in verbs:
        result = call_cli(home, *verb, "--help")
        assert result.code == 0, verb
        assert "example" in result.stdout and "memories " + verb[0] in result.stdout, verb


def test_memory_lifecycle_and_revisions(home, vault):
    rid = call_cli(home, "memory", "add", vault, "--title", "t", "--text", "one", "--json").json["id"]
    upd = call_cli(home, "memory", "update", vault, rid, "--text", "two", "--json", "--expect-revision", "1")
    assert upd.json["revision"] == 2
    stale = call_cli(home, "memory", "update", vault, rid, "--text", "over it", "--json", "--expect-revision", "1")
    assert stale.code == 1 and stale.json["error"]["code"] == "record_changed"  # revision 2 came meanwhile
    assert "revision 2" in stale.json["error"]["message"]
    assert call_cli(home, "memory", "read", vault, rid, "--json").json["body"] == "two"
    assert call_cli(home, "memory", "read", vault, rid, "--revision", "1", "--json").json["body"] == "one"
    listing = call_cli(home, "memory", "list", vault, "--json").json["records"]
    assert [(r["id"], r["revision"]) for r in listing] == [(rid, 2)]
    assert call_cli(home, "memory", "delete", vault, rid, "--json").code == 0
    missing = call_cli(home, "memory", "read", vault, rid, "--json")
    assert missing.code == 1 and missing.json["error"]["code"] == "not_found"


def test_body_from_stdin_and_file(home, vault, tmp_path):
    rid = call_cli(home, "memory", "add", vault, "--title", "s", "--json", stdin="來自標準輸入\n").json["id"]
    assert call_cli(home, "memory", "read", vault, rid, "--json").json["body"] == "來自標準輸入\n"
    note = tmp_path / "n.md"
    note.write_text("from a file", encoding="utf-8")
    rid = call_cli(home, "memory", "add", vault, "--title", "f", "--file", str(note), "--json").json["id"]
    assert call_cli(home, "memory", "read", vault, rid, "--json").json["body"] == "from a file"
    bad = call_cli(home, "memory", "add", vault, "--title", "b", "--json", stdin=b"\xff\xfe bad")
    assert bad.code == 1 and bad.json["error"]["code"] == "invalid_utf8"


def test_wrong_and_empty_passphrase(home, vault):
    wrong = call_cli(home, "memory", "list", vault, "--json", passphrase="nope")
    assert wrong.code == 1 and wrong.json["error"]["code"] == "wrong_passphrase"
    empty = call_cli(home, "vault", "create", "other", "--json", passphrase="")
    assert empty.code == 1 and empty.json["error"]["code"] == "empty_passphrase"
    assert [v["name"] for v in call_cli(home, "vault", "list", "--json").json["vaults"]] == ["notes"]
    none = call_cli(home, "memory", "list", vault, "--json", passphrase=None)
    assert none.code == 2 and "passphrase" in none.json["error"]["message"].lower()


def test_passphrase_sources_in_order(home, vault, tmp_path):
    good = tmp_path / "good.txt"
    good.write_text("correct horse\n")
    bad = tmp_path / "bad.txt"
    bad.write_text("wrong\n")
    # --passphrase-file beats every environment source
    ok = call_cli(home, "memory", "list", vault, "--passphrase-file", str(good), "--json", passphrase="wrong",
                 env={"MEMORIES_PASSPHRASE_FILE": str(bad)})
    assert ok.code == 0
    # MEMORIES_PASSPHRASE_FILE beats the command and the plain variable
    assert call_cli(home, "memory", "list", vault, "--json", passphrase="wrong",
                   env={"MEMORIES_PASSPHRASE_FILE": str(good), "MEMORIES_PASSPHRASE_COMMAND": "echo wrong"}).code == 0
    # MEMORIES_PASSPHRASE_COMMAND beats MEMORIES_PASSPHRASE
    assert call_cli(home, "memory", "list", vault, "--json", passphrase="wrong",
                   env={"MEMORIES_PASSPHRASE_COMMAND": f"cat {good}"}).code == 0
    failing = call_cli(home, "memory", "list", vault, "--json", env={"MEMORIES_PASSPHRASE_COMMAND": "false"})
    assert failing.code == 1 and failing.json["error"]["code"] == "passphrase_source"


def test_vault_passwd_and_policy(home, vault, tmp_path):
    new = tmp_path / "new.txt"
    new.write_text("battery staple\n")
    assert call_cli(home, "vault", "passwd", vault, "--new-passphrase-file", str(new), "--json").code == 0
    assert call_cli(home, "memory", "list", vault, "--json").json["error"]["code"] == "wrong_passphrase"
    on = call_cli(home, "vault", "policy", vault, "--device-only", "on", "--json", passphrase="battery staple")
    assert on.json == {"vault_id": vault, "device_only": True}
    shown = call_cli(home, "vault", "policy", vault, "--json", passphrase="battery staple")
    assert shown.json["device_only"] is True


def test_duplicate_vault_names_are_refused(home, vault):
    again = call_cli(home, "vault", "create", "notes", "--json")
    assert again.code == 1 and again.json["error"]["code"] == "vault_exists"


def test_unknown_vault_is_a_clear_error(home):
    result = call_cli(home, "memory", "list", "nope", "--json")
    assert result.code == 1 and result.json["error"]["code"] == "not_found"


def test_bad_config_is_a_clear_error(home, vault):
    (home / "config.toml").write_text("[rag\nlocal_threads = 'x'\n")
    result = call_cli(home, "memory", "list", vault, "--json")
    assert result.code == 1 and result.json["error"]["code"] == "config_invalid"
    (home / "config.toml").write_text("[rag.generation]\nprotocol='gemini'\nurl='https://x.example/m'\nmodel='m'\napi_key='sk-123'\n")
    result = call_cli(home, "memory", "list", vault, "--json")
    assert result.json["error"]["code"] == "config_invalid" and "api_key_env" in result.json["error"]["message"]
    assert "sk-123" not in result.stdout


# -- ingest -----------------------------------------------------------------------------

def test_ingest_titles_idempotence_and_update(home, vault, tmp_path):
    a = tmp_path / "a.md"
    a.write_text("intro line\n\n# 第一個標題\n\nbody text", encoding="utf-8")
    b = tmp_path / "plain.txt"
    b.write_text("no heading here", encoding="utf-8")
    first = call_cli(home, "rag", "ingest", vault, str(a), str(b), "--json").json["results"]
    assert [r["status"] for r in first] == ["created", "created"]
    assert [r["title"] for r in first] == ["第一個標題", "plain.txt"]
    assert all(r["chunks"] >= 1 for r in first)
    again = call_cli(home, "rag", "ingest", vault, str(a), str(b), "--json").json["results"]
    assert [r["status"] for r in again] == ["unchanged", "unchanged"]
    assert [r["id"] for r in again] == [r["id"] for r in first]
    a.write_text("# 第一個標題\n\nchanged body", encoding="utf-8")
    changed = call_cli(home, "rag", "ingest", vault, str(a), "--json").json["results"][0]
    assert changed["status"] == "updated" and changed["id"] == first[0]["id"] and changed["revision"] == 2
    titled = call_cli(home, "rag", "ingest", vault, str(b), "--title", "Research notes", "--json").json["results"][0]
    assert titled["status"] == "updated" and titled["title"] == "Research notes"
    cards = call_cli(home, "memory", "list", vault, "--json").json["records"]
    assert len(cards) == 2 and {c["kind"] for c in cards} == {"card"}


@pytest.mark.parametrize("name,content,code,needle", [
    ("doc.pdf", b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj", "unsupported_file", "PDF"),
    ("doc.docx", None, "unsupported_file", "DOCX"),
    ("nul.txt", b"text with a \x00 NUL byte", "unsupported_file", "NUL"),
    ("latin1.txt", "café crème".encode("latin-1"), "invalid_utf8", "UTF-8"),
    ("image.png", b"\x89PNG\r\n\x1a\n\x00\x00", "unsupported_file", "PNG"),
])
def test_ingest_refusals_write_nothing(home, vault, tmp_path, name, content, code, needle):
    good = tmp_path / "good.md"
    good.write_text("# Good\n\nfine text", encoding="utf-8")
    bad = tmp_path / name
    if content is None:
        with zipfile.ZipFile(bad, "w") as zf:
            zf.writestr("word/document.xml", "<w:document/>")
    else:
        bad.write_bytes(content)
    result = call_cli(home, "rag", "ingest", vault, str(good), str(bad), "--json")
    assert result.code == 1
    error = result.json["error"]
    assert error["code"] == code and needle in error["message"] and "convert" in error["message"].lower()
    assert call_cli(home, "memory", "list", vault, "--json").json["records"] == []  # the good file too


def test_ingest_missing_file_and_directory(home, vault, tmp_path):
    missing = call_cli(home, "rag", "ingest", vault, str(tmp_path / "nope.md"), "--json")
    assert missing.json["error"]["code"] == "file_not_found"
    folder = call_cli(home, "rag", "ingest", vault, str(tmp_path), "--json")
    assert folder.json["error"]["code"] == "unsupported_file"


def test_asset_add_stores_binary_and_never_searches_it(home, vault, tmp_path):
    blob = tmp_path / "scan.bin"
    blob.write_bytes(bytes(range(256)) + CANARY.encode())
    added = call_cli(home, "asset", "add", vault, str(blob), "--json")
    assert added.code == 0, added.stderr
    asset = added.json
    assert asset["kind"] == "asset" and asset["bytes"] == 256 + len(CANARY.encode())
    read = call_cli(home, "memory", "read", vault, asset["id"], "--json").json
    assert read["kind"] == "asset" and read["bytes"] == asset["bytes"]
    # A memory holding the same words proves the searches below can find them at all.
    memo = call_cli(home, "memory", "add", vault, "--title", "memo", "--text", CANARY, "--json")
    assert memo.code == 0, memo.stderr
    # (no model here: vector and hybrid exclusion is tested in test_semantic.py)
    out = call_cli(home, "rag", "search", vault, CANARY, "--limit", "100", "--json")
    assert out.code == 0, out.stderr
    assert [r["asset_id"] for r in out.json["results"]] == [memo.json["id"]]
    grouped = call_cli(home, "memory", "search", vault, CANARY, "--json")
    assert [r["id"] for r in grouped.json["results"]] == [memo.json["id"]]
    status = call_cli(home, "rag", "status", vault, "--json").json
    assert status["chunks"] == 1  # the asset was never chunked


# -- secrets ----------------------------------------------------------------------------

def test_canary_never_on_disk_in_plaintext(home, vault, tmp_path):
    note = tmp_path / "canary.md"
    note.write_text(f"# {CANARY}\n\n{CANARY} in a body", encoding="utf-8")
    writes = [
        ("memory", "add", vault, "--title", CANARY, "--text", CANARY, "--tag", CANARY, "--json"),
        ("memory", "add", vault, "--title", "cred", "--kind", "credential", "--text", CANARY, "--json"),
        ("rag", "ingest", vault, str(note), "--json"),
    ]
    for args in writes:
        result = call_cli(home, *args)
        assert result.code == 0, (args, result.stderr)
    # the canary really is in the vault and searchable (so its absence on disk means something)
    found = call_cli(home, "rag", "search", vault, CANARY, "--json")
    assert found.code == 0 and len(found.json["results"]) == 2  # the memory and the ingested card
    assert call_cli(home, "memory", "search", vault, CANARY, "--json").code == 0
    note.unlink()
    needles = [CANARY.encode("utf-8"), CANARY.encode("utf-16-le"), "金絲雀".encode()]
    files = [path for path in home.rglob("*") if path.is_file()]
    assert any(path.suffix == ".mvault" for path in files)
    for path in files:
        data = path.read_bytes()
        for needle in needles:
            assert needle not in data, f"plaintext canary found in {path}"


def test_engine_and_cli_never_import_textual():
    code = ("import sys, memories_tui.engine, memories_tui.engine.jobs, memories_tui.cli, "
            "memories_tui.cli.search_verbs, memories_tui.cli.record_verbs, memories_tui.cli.vault_verbs; "
            "from memories_tui.cli import build_parser; build_parser(); "
            "assert 'textual' not in sys.modules, 'textual imported'; print('ok')")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr


def test_json_error_for_terminal_escape_is_cleaned(home, vault):
    evil = "\x1b]0;pwned\x07\x1b[31mred"
    rid = call_cli(home, "memory", "add", vault, "--title", evil, "--text", evil, "--json").json["id"]
    human = call_cli(home, "memory", "read", vault, rid)
    assert "\x1b" not in human.stdout and "red" in human.stdout
    assert json.loads(call_cli(home, "memory", "read", vault, rid, "--json").stdout)["title"] == evil
