"""A sync that finds nothing changed compares sizes and times only; a file touched but not
changed is read once, not at every sync; `source sync --full` reads and hashes everything."""

from __future__ import annotations

import os
from pathlib import Path

from tests.helpers.cli import call_cli

SECONDS = 5_000_000_000  # a fixed modification time, in ns


def _statuses(report) -> dict[str, tuple[str, str]]:
    return {i.file: (i.status, i.reason) for i in report.items}


def test_a_touched_file_is_read_once_and_full_rereads(engine, tmp_path: Path) -> None:
    vid = engine.test_vault_id
    notes = tmp_path / "Notes"
    (notes / "node_modules").mkdir(parents=True)
    (notes / ".git").mkdir()
    (notes / "a.md").write_text("# A\n\nfirst words\n", encoding="utf-8")
    (notes / "p.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    (notes / "node_modules" / "x.md").write_text("noise", encoding="utf-8")
    (notes / ".git" / "y.md").write_text("noise", encoding="utf-8")
    engine.add_source(vid, notes)
    first = _statuses(engine.sync_sources(vid)[0])
    assert first["a.md"][0] == "created" and set(first) == {"a.md", "p.png"}
    assert _statuses(engine.sync_sources(vid)[0]) == {"a.md": ("unchanged", ""), "p.png": first["p.png"]}

    os.utime(notes / "a.md", ns=(SECONDS, SECONDS))  # touched, same bytes: read and hashed once
    assert _statuses(engine.sync_sources(vid)[0])["a.md"][0] == "unchanged"
    counter = engine._vault(vid).change_counter()
    # other bytes of the same size under the same time: what every stat-trusting sync misses
    (notes / "a.md").write_text("# A\n\nfirst wordz\n", encoding="utf-8")
    os.utime(notes / "a.md", ns=(SECONDS, SECONDS))
    assert _statuses(engine.sync_sources(vid)[0])["a.md"][0] == "unchanged"
    (notes / "b.md").write_text("new", encoding="utf-8")  # the walk that reads new files trusts the stat too
    walked = _statuses(engine.sync_sources(vid)[0])
    assert walked["a.md"][0] == "unchanged" and walked["b.md"][0] == "created"
    assert engine._vault(vid).change_counter() == counter + 1

    full = {i.file: i for i in engine.sync_sources(vid, full=True)[0].items}
    assert full["a.md"].status == "updated" and full["b.md"].status == "unchanged"
    assert "wordz" in engine.read_record(vid, full["a.md"].id or "").body


def test_cli_sync_full_reads_every_file(tmp_path: Path, vault) -> None:
    home = tmp_path / "home"
    notes = tmp_path / "Notes"
    notes.mkdir()
    (notes / "a.md").write_text("same size one", encoding="utf-8")
    os.utime(notes / "a.md", ns=(SECONDS, SECONDS))
    assert call_cli(home, "--json", "source", "add", "notes", str(notes)).code == 0
    (notes / "a.md").write_text("same size two", encoding="utf-8")
    os.utime(notes / "a.md", ns=(SECONDS, SECONDS))
    quick = call_cli(home, "--json", "source", "sync", "notes")
    assert [i["status"] for i in quick.json["sources"][0]["items"]] == ["unchanged"]
    full = call_cli(home, "--json", "source", "sync", "notes", "--full")
    assert [i["status"] for i in full.json["sources"][0]["items"]] == ["updated"], full.stdout + full.stderr
