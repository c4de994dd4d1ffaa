"""Hostile files and values get a clear error with a stable code,
never a traceback; listing never writes; permissions; secrets never echoed. Each case is the
attack the issue describes, through the real CLI (`cli.main`; in a subprocess where a hang or
the process itself is at stake)."""

from __future__ import annotations

import os
import sqlite3
import stat
import threading
from pathlib import Path

import pytest

from tests.helpers.cli import call_cli, run_cli
from tests.helpers.vaults import PASS


def _vault_file(home: Path, vault: str) -> Path:
    return home / "vaults" / f"{vault}.mvault"


def _error(result, code: str, exit_code: int = 1) -> str:
    assert "Traceback" not in result.stderr, result.stderr
    assert result.code == exit_code, (result.stdout, result.stderr)
    assert result.json["error"]["code"] == code, result.json
    return result.json["error"]["message"]


# -- item 3: no tracebacks ----------------------------------------------------------------

def test_ciphertext_column_turned_into_text(home, vault):
    call_cli(home, "memory", "add", vault, "--title", "t", "--text", "body")
    conn = sqlite3.connect(_vault_file(home, vault))
    conn.execute("UPDATE records SET ciphertext = 'plain text now'")
    conn.commit()
    conn.close()
    _error(call_cli(home, "--json", "memory", "list", vault), "vault_tampered")


def test_pages_xored_mid_file(home, vault, tmp_path):
    for i in range(40):
        note = tmp_path / f"n{i}.md"
        note.write_text(f"# Note {i}\n\n" + "searchable words here. " * 200, encoding="utf-8")
        assert call_cli(home, "rag", "ingest", vault, str(note)).code == 0
    path = _vault_file(home, vault)
    raw = bytearray(path.read_bytes())
    middle = len(raw) // 2 // 4096 * 4096
    for i in range(middle, middle + 4096):
        raw[i] ^= 0x5A
    path.write_bytes(bytes(raw))
    result = call_cli(home, "--json", "memory", "search", vault, "searchable")
    assert "Traceback" not in result.stderr
    assert result.code == 1 and result.json["error"]["code"] in ("vault_damaged", "vault_tampered"), result.stdout


def test_bad_ipv6_url_in_config_is_a_config_error_and_list_still_names_it(home, vault):
    (home / "config.toml").write_text('[rag]\nmodel_download_base_url = "http://[::1/x"\n')
    message = _error(call_cli(home, "--json", "vault", "list"), "config_invalid")
    assert "model_download_base_url" in message


def test_home_that_is_a_file(tmp_path):
    not_a_folder = tmp_path / "file"
    not_a_folder.write_text("x")
    for args in (("vault", "list"), ("init",), ("vault", "create", "v")):
        _error(call_cli(tmp_path, "--json", "--home", str(not_a_folder), *args), "home_invalid")


def test_huge_revision_number(home, vault):
    rid = call_cli(home, "--json", "memory", "add", vault, "--title", "t", "--text", "b").json["id"]
    _error(call_cli(home, "--json", "memory", "read", vault, rid, "--revision", "99999999999999999999"),
           "usage_error", 2)
    _error(call_cli(home, "--json", "memory", "read", vault, rid, "--revision", "0"), "usage_error", 2)


def test_unexpected_exception_is_one_line_with_internal_error_code(home, vault, monkeypatch, capsys):
    """The last-resort handler: an exception nobody planned for (here a deliberately broken
    engine method) is one JSON error line; --debug adds the traceback on stderr."""
    from memories_tui import cli
    from memories_tui.engine import Engine

    def broken(self, *args, **kwargs):
        raise KeyError("secret title that must not be shown")

    monkeypatch.setattr(Engine, "scan_vaults", broken)
    assert cli.main(["--home", str(home), "--json", "vault", "list"]) == 1
    out, err = capsys.readouterr()
    assert out.count("\n") == 1 and '"code": "internal_error"' in out and "KeyError" in out
    assert "secret title" not in out and err == ""
    assert cli.main(["--home", str(home), "vault", "list", "--debug"]) == 1
    out, err = capsys.readouterr()
    assert "Traceback" in err and "memories: error: Unexpected KeyError" in err


def test_undecodable_bytes_on_the_command_line(home, vault):
    """Non-UTF-8 argv bytes arrive as lone surrogates: refused clearly, never a traceback."""
    bad = os.fsdecode(b"caf\xff")
    _error(call_cli(home, "--json", "vault", "create", bad), "bad_name")
    _error(call_cli(home, "--json", "memory", "add", vault, "--title", bad, "--text", "x"), "invalid_text")
    _error(call_cli(home, "--json", "memory", "add", vault, "--title", "t", "--text", bad), "invalid_text")
    _error(call_cli(home, "--json", "memory", "add", vault, "--title", "t", "--text", "x", "--tag", bad),
           "invalid_text")
    _error(call_cli(home, "--json", "memory", "read", vault, bad), "not_found")
    _error(call_cli(home, "--json", "memory", "list", vault, passphrase=bad), "invalid_passphrase")


# -- item 4: devices and FIFOs ------------------------------------------------------------

@pytest.mark.parametrize("verb", [("rag", "ingest"), ("asset", "add")])
def test_device_is_refused_without_reading_it(home, vault, verb):
    result = run_cli(home, "--json", *verb, vault, "/dev/zero", timeout=60)
    _error(result, "not_regular_file")


@pytest.mark.parametrize("verb", [("rag", "ingest"), ("asset", "add")])
def test_fifo_is_refused_without_hanging(home, vault, tmp_path, verb):
    fifo = tmp_path / "pipe.md"
    os.mkfifo(fifo)
    result = run_cli(home, "--json", *verb, vault, str(fifo), timeout=60)
    _error(result, "not_regular_file")


def test_reads_are_capped_while_reading(tmp_path):
    """A file that grows after stat (here a regular file read with a smaller limit) is cut off
    at limit + 1 bytes, not read whole."""
    from memories_tui.errors import InputRefusedError
    from memories_tui.files import read_limited

    big = tmp_path / "big.txt"
    big.write_bytes(b"x" * 5000)
    assert read_limited(big, 5000, what="test") == b"x" * 5000
    with pytest.raises(InputRefusedError) as info:
        read_limited(big, 4999, what="test")
    assert info.value.code == "file_too_large"


def test_passphrase_file_may_be_a_pipe_but_not_a_device(home, vault, tmp_path):
    fifo = tmp_path / "pass"
    os.mkfifo(fifo)

    def feed() -> None:
        with open(fifo, "w") as fh:
            fh.write("correct horse\n")

    writer = threading.Thread(target=feed)
    writer.start()
    ok = call_cli(home, "--json", "memory", "list", vault, "--passphrase-file", str(fifo), passphrase=None)
    writer.join()
    assert ok.code == 0, ok.stdout
    _error(call_cli(home, "--json", "memory", "list", vault, "--passphrase-file", "/dev/zero", passphrase=None),
           "passphrase_source")


def test_config_that_is_a_device_is_refused(home, vault):
    _error(run_cli(home, "--json", "--config", "/dev/zero", "vault", "list", timeout=60), "config_invalid")


# -- item 5: bad *.mvault files never break listing, and are never written -----------------

def test_bad_vault_files_are_reported_and_left_untouched(home, vault):
    vaults = home / "vaults"
    (vaults / "junk.mvault").write_bytes(b"")
    foreign = vaults / "foreign.mvault"
    conn = sqlite3.connect(foreign)
    conn.execute("CREATE TABLE notes (body TEXT)")
    conn.execute("INSERT INTO notes VALUES ('mine')")
    conn.commit()
    conn.close()
    (vaults / "text.mvault").write_text("hello")
    (vaults / "folder.mvault").mkdir()
    before = {p.name: (p.read_bytes() if p.is_file() else None) for p in vaults.iterdir()}
    listed = call_cli(home, "--json", "vault", "list")
    assert listed.code == 0, listed.stdout
    assert [v["vault_id"] for v in listed.json["vaults"]] == [vault]
    assert {p["file"] for p in listed.json["problems"]} == {"junk.mvault", "foreign.mvault", "text.mvault",
                                                             "folder.mvault"}
    human = call_cli(home, "vault", "list")
    assert human.code == 0 and "junk.mvault" in human.stderr and vault in human.stdout
    # name lookups and create still work
    assert call_cli(home, "--json", "memory", "list", "notes").code == 0
    assert call_cli(home, "--json", "vault", "create", "second").code == 0
    after = {p.name: (p.read_bytes() if p.is_file() else None) for p in vaults.iterdir()}
    for name, data in before.items():
        assert after[name] == data, f"{name} was modified"
    assert (vaults / "junk.mvault").stat().st_size == 0
    conn = sqlite3.connect(foreign)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
    conn.close()
    # unlocking a foreign file by its name is refused without switching it to WAL either
    _error(call_cli(home, "--json", "memory", "list", "foreign"), "vault_invalid")
    conn = sqlite3.connect(foreign)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
    conn.close()


# -- item 6: permissions ------------------------------------------------------------------

def test_existing_shared_home_is_not_chmodded(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o1777)
    assert call_cli(shared, "--json", "init").code == 0
    assert call_cli(shared, "--json", "vault", "create", "v").code == 0
    assert stat.S_IMODE(shared.stat().st_mode) == 0o1777
    assert stat.S_IMODE((shared / "vaults").stat().st_mode) == 0o700
    assert stat.S_IMODE((shared / "config.toml").stat().st_mode) == 0o600


def test_new_home_is_private(tmp_path):
    home = tmp_path / "new" / "home"
    assert call_cli(home, "--json", "vault", "create", "v").code == 0
    assert stat.S_IMODE(home.stat().st_mode) == 0o700
    assert stat.S_IMODE((home / "vaults").stat().st_mode) == 0o700


# -- item 9: secrets are never echoed -----------------------------------------------------

@pytest.mark.parametrize("config", [
    '[rag]\nmodel_download_base_url = "ftp://bob:hunter2secret@mirror.example/x"\n',
    '[rag]\nmodel_download_base_url = "http://bob:hunter2secret@mirror.example/x"\n',
    '[rag.http]\nproxy_url = "http://bob:hunter2secret@proxy.example:8080"\n',
    '[rag.http]\nproxy_url = "gopher://bob:hunter2secret@proxy.example:8080"\n',
    '[rag.embedding]\nprotocol = "compatible"\nurl = "http://127.0.0.1:1/v1"\nmodel = "m"\n'
    'api_key_env = "sk-hunter2secret0123456789"\n',
])
def test_credentials_are_redacted_from_errors(home, vault, config):
    (home / "config.toml").write_text(config)
    for args in (("--json", "vault", "list"), ("vault", "list")):
        result = call_cli(home, *args)
        assert result.code == 1
        assert "hunter2secret" not in result.stdout + result.stderr, result.stdout + result.stderr


def test_redact_covers_urls_params_and_key_shapes():
    from memories_tui.errors import MemoriesError, redact

    assert "s3cr3t" not in redact("https://u:s3cr3t@h/p and https://h/p?api_key=s3cr3t")
    assert "sk-live-s3cr3t" not in redact("value sk-live-s3cr3tvalue")
    assert "s3cr3t" not in MemoriesError("proxy socks5://me:s3cr3t@p:1080 failed").message
    assert redact("vault 0123456789abcdef revision 2") == "vault 0123456789abcdef revision 2"


# -- item 10: the smaller ones --------------------------------------------------------------

@pytest.mark.parametrize("args", [
    ("rag", "search", "{v}", "words", "--limit", "0"),
    ("rag", "search", "{v}", "words", "--limit", "-1"),
    ("memory", "search", "{v}", "words", "--limit", "0"),
    ("rag", "search", "{v}", ""),
    ("rag", "search", "{v}", "   "),
    ("memory", "search", "{v}", " \t "),
])
def test_bad_limits_and_empty_queries_are_usage_errors(home, vault, args):
    _error(call_cli(home, "--json", *[a.format(v=vault) for a in args]), "usage_error", 2)


def test_a_file_name_cannot_forge_a_table_row(home, vault, tmp_path):
    evil = tmp_path / "x\nFORGED  ROW.md"
    evil.write_text("hello there", encoding="utf-8")
    result = call_cli(home, "rag", "ingest", vault, str(evil))
    assert result.code == 0
    assert not any(line.startswith("FORGED") for line in result.stdout.splitlines()), result.stdout
    assert "\\nFORGED" in result.stdout


def test_ingest_refuses_a_batch_over_the_chunk_limit_before_writing(home, vault, tmp_path):
    (home / "config.toml").write_text("[rag.limits]\nchunks = 5\n")
    small = tmp_path / "small.md"
    small.write_text("short note", encoding="utf-8")
    assert call_cli(home, "rag", "ingest", vault, str(small)).code == 0
    big = tmp_path / "big.md"
    big.write_text("\n\n".join(f"Paragraph {i}. " + "words " * 150 for i in range(20)), encoding="utf-8")
    message = _error(call_cli(home, "--json", "rag", "ingest", vault, str(big)), "limit_exceeded")
    assert "Nothing was written" in message and "[rag.limits] chunks" in message
    listed = call_cli(home, "--json", "memory", "list", vault).json["records"]
    assert [r["title"] for r in listed] == ["small.md"]
    assert call_cli(home, "--json", "rag", "search", vault, "short").code == 0  # still searchable


def test_short_passphrase_needs_confirmation(home):
    _error(call_cli(home, "--json", "vault", "create", "v", passphrase="short"), "usage_error", 2)
    assert not list((home / "vaults").glob("*.mvault")) if (home / "vaults").exists() else True
    ok = call_cli(home, "--json", "vault", "create", "v", "--allow-weak-passphrase", passphrase="short")
    assert ok.code == 0
    new = home.parent / "new-pass"
    new.write_text("tiny")
    _error(call_cli(home, "--json", "vault", "passwd", "v", "--new-passphrase-file", str(new), passphrase="short"),
           "usage_error", 2)
    assert call_cli(home, "--json", "vault", "passwd", "v", "--new-passphrase-file", str(new),
                   "--allow-weak-passphrase", passphrase="short").code == 0


def test_open_refuses_weak_argon2_and_passwd_upgrades_the_header(tmp_path):
    from memories_tui.errors import VaultError
    from memories_tui.vault import crypto
    from memories_tui.vault.store import UnlockedVault, create_vault_file, read_header
    from tests.helpers.vaults import CHEAP, cheap_kdf

    path = tmp_path / "v.mvault"
    with cheap_kdf():
        create_vault_file(path, "t", PASS)
    with pytest.raises(VaultError) as info:  # no test hook now: the 64 MiB floor applies
        UnlockedVault(path, PASS)
    assert info.value.code == "kdf_too_weak"
    current = crypto.KdfParams(memory_kib=1024, iterations=3, lanes=2)  # stands for "the current parameters"
    previous = crypto._TEST_KDF_OVERRIDE
    crypto._TEST_KDF_OVERRIDE = current
    try:
        assert read_header(path).kdf == CHEAP
        vault = UnlockedVault(path, PASS)
        vault.change_passphrase(PASS, "battery staple")
        vault.close()
        assert read_header(path).kdf == current
        UnlockedVault(path, "battery staple").close()
    finally:
        crypto._TEST_KDF_OVERRIDE = previous
