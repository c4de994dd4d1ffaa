"""A write that would take a vault past its index limits is refused before anything is written,
whatever the path (memory add, memory update, ingest); a vault already over a limit (limits
lowered afterwards, an older version) says which record to shrink, and can still shrink it."""

from __future__ import annotations

from tests.helpers.cli import call_cli


def _error(result, code: str = "limit_exceeded") -> str:
    assert "Traceback" not in result.stderr, result.stderr
    assert result.code == 1, (result.stdout, result.stderr)
    assert result.json["error"]["code"] == code, result.json
    return result.json["error"]["message"]


def _titles(home, vault) -> list[str]:
    return sorted(r["title"] for r in call_cli(home, "--json", "memory", "list", vault).json["records"])


def test_a_15_mib_note_is_refused_and_search_keeps_working(home, vault, tmp_path):
    assert call_cli(home, "memory", "add", vault, "--title", "small", "--text", "hello world").code == 0
    big = tmp_path / "big.txt"
    big.write_text("This is a sentence of text about things. More words here.\n" * 272_000, encoding="utf-8")
    assert big.stat().st_size > 15 * 1024 * 1024
    message = _error(call_cli(home, "--json", "memory", "add", vault, "--title", "big", "--file", str(big)))
    assert "10,000 chunks" in message and "Nothing was written" in message
    assert _titles(home, vault) == ["small"]
    found = call_cli(home, "--json", "rag", "search", vault, "hello", "--mode", "bm25")
    assert found.code == 0 and found.json["results"], found.stdout


def test_update_that_grows_past_the_limit_is_refused(home, vault):
    record = call_cli(home, "--json", "memory", "add", vault, "--title", "note", "--text", "short").json["id"]
    (home / "config.toml").write_text("[rag.limits]\nchunks = 4\n")
    long_text = "A sentence that goes on. " * 400
    message = _error(call_cli(home, "--json", "memory", "update", vault, record, "--text", long_text))
    assert "[rag.limits] chunks" in message and "Nothing was written" in message
    assert call_cli(home, "--json", "memory", "read", vault, record).json["body"] == "short"
    (home / "config.toml").write_text("[rag.limits]\nsource_mib = 0.001\n")
    message = _error(call_cli(home, "--json", "memory", "add", vault, "--title", "x", "--text", "b" * 2000))
    assert "[rag.limits] source_mib" in message and "Nothing was written" in message
    assert _titles(home, vault) == ["note"]


def test_private_records_are_not_counted(home, vault):
    (home / "config.toml").write_text("[rag.limits]\nchunks = 2\n")
    text = "A sentence that goes on. " * 400  # never indexed: no limit of the index applies
    assert call_cli(home, "memory", "add", vault, "--title", "p", "--kind", "private", "--text", text).code == 0


def test_a_vault_over_a_lowered_limit_names_the_record_to_shrink(home, vault):
    call_cli(home, "memory", "add", vault, "--title", "tiny", "--text", "hello world")
    big = call_cli(home, "--json", "memory", "add", vault, "--title", "Long essay",
                   "--text", "A sentence about hello. " * 300).json["id"]
    (home / "config.toml").write_text("[rag.limits]\nchunks = 3\n")
    for verb in (("rag", "search", vault, "hello", "--mode", "bm25"), ("memory", "search", vault, "hello")):
        message = _error(call_cli(home, "--json", *verb))
        assert big in message and "Long essay" in message and "3 chunks" in message, message
    # the record can still be shrunk (a write that does not grow the vault is never refused) …
    assert call_cli(home, "--json", "memory", "update", vault, big, "--text", "hello again").code == 0
    # … and then everything is searchable again
    found = call_cli(home, "--json", "rag", "search", vault, "hello", "--mode", "bm25")
    assert found.code == 0 and len(found.json["results"]) == 2, found.stdout


def test_usage_counted_from_the_saved_index_matches_a_fresh_count(home, vault):
    """A command in its own process counts the vault from the saved index snapshot (records it
    has not seen are chunked): the same verdict either way, at the limit exactly."""
    long_text = "A sentence about hello. " * 300  # 9 chunks
    assert call_cli(home, "memory", "add", vault, "--title", "long", "--text", long_text).code == 0
    assert call_cli(home, "memory", "add", vault, "--title", "short", "--text", "hello").code == 0
    assert call_cli(home, "--json", "rag", "search", vault, "hello", "--mode", "bm25").code == 0  # snapshot saved
    used = call_cli(home, "--json", "rag", "status", vault).json["chunks"]
    (home / "config.toml").write_text(f"[rag.limits]\nchunks = {used + 1}\n")
    assert call_cli(home, "memory", "add", vault, "--title", "fits", "--text", "one more").code == 0
    message = _error(call_cli(home, "--json", "memory", "add", vault, "--title", "over", "--text", "and another"))
    assert f"{used + 2:,} chunks" in message
    assert _titles(home, vault) == ["fits", "long", "short"]


def test_the_resident_engine_refuses_the_same_write(home, vault):
    from tests.helpers.daemon import stop, unlock

    (home / "config.toml").write_text("[rag.limits]\nchunks = 4\n")
    try:
        assert unlock(home, "notes").code == 0
        served = call_cli(home, "--json", "memory", "add", "notes", "--title", "big",
                          "--text", "A sentence that goes on. " * 400, passphrase=None)
        message = _error(served)
        assert "[rag.limits] chunks" in message and "Nothing was written" in message
        assert call_cli(home, "--json", "memory", "list", "notes", passphrase=None).json["records"] == []
    finally:
        stop(home)
