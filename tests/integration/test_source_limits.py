"""A folder bigger than the vault's limits, and a file that changes while a sync reads it: the
vault takes what fits and lists the rest with the reason, stays searchable, and loses nothing
(real folders, real files; the index limits lowered in config.toml so a test reaches them)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memories_tui.engine.fits import FULL_CHUNKS
from memories_tui.engine.source_sync import TORN
from tests.helpers.cli import CHEAP_CLI, call_cli, cli_env
from tests.helpers.vaults import PASS, open_vault

LIMIT = "[rag.limits]\nchunks = {n}\n"


def _folder(root: Path, count: int, per_folder: int = 1000) -> Path:
    """`count` one-line notes, `per_folder` to a sub-folder (as an export spreads them)."""
    notes = root / "Notes"
    for n in range(count):
        sub = notes / f"{n // per_folder:03d}"
        if n % per_folder == 0:
            sub.mkdir(parents=True)
        (sub / f"n{n:05d}.md").write_text(f"note {n} word{n}\n", encoding="utf-8")
    return notes


def _by_status(items) -> dict[str, list]:
    out: dict[str, list] = {}
    for item in items:
        out.setdefault(item.status, []).append(item)
    return out


def test_a_folder_past_the_chunk_limit_takes_what_fits_and_lists_the_rest(tmp_path: Path, cheap_kdf) -> None:
    notes = _folder(tmp_path, 8, per_folder=8)
    engine, vid = open_vault(tmp_path / "home", LIMIT.format(n=5))
    try:
        engine.add_source(vid, notes)
        first = _by_status(engine.sync_sources(vid)[0].items)
        assert len(first["created"]) == 5 and len(first["skipped"]) == 3
        assert {i.reason for i in first["skipped"]} == {FULL_CHUNKS}
        assert [i.file for i in first["created"]] == [f"000/n{n:05d}.md" for n in range(5)]  # the folder's order
        assert engine.search(vid, "word4").results and not engine.search(vid, "word7").results  # still searchable

        (notes / "000" / "n00001.md").write_text("note 1 grown " + "much longer text " * 200, encoding="utf-8")
        again = {i.file: i for i in engine.sync_sources(vid)[0].items}
        assert again["000/n00001.md"].status == "skipped" and again["000/n00001.md"].reason == FULL_CHUNKS
        assert engine.read_record(vid, again["000/n00001.md"].id or "").body == "note 1 word1\n"  # kept as it was
        assert sum(i.status == "unchanged" for i in again.values()) == 4
    finally:
        engine.close()
    (tmp_path / "home" / "config.toml").write_text(LIMIT.format(n=100), encoding="utf-8")  # the limit raised
    from memories_tui.engine import Engine

    engine = Engine.open(tmp_path / "home")
    try:
        engine.unlock(vid, PASS)
        rest = _by_status(engine.sync_sources(vid)[0].items)
        assert len(rest["created"]) == 3 and len(rest["updated"]) == 1 and len(rest["unchanged"]) == 4
        assert len(engine.list_records(vid)) == 8  # one card per file: nothing doubled, nothing lost
    finally:
        engine.close()


def test_ingest_and_import_of_a_folder_past_the_limit_take_what_fits(tmp_path: Path, cheap_kdf) -> None:
    notes = _folder(tmp_path, 6, per_folder=6)
    engine, vid = open_vault(tmp_path / "home", LIMIT.format(n=4))
    try:
        results = engine.ingest(vid, [notes], recursive=True)
        assert [r.status for r in results].count("created") == 4
        assert {r.reason for r in results if r.status == "skipped"} == {FULL_CHUNKS}
        named = notes / "000" / "n00005.md"
        with pytest.raises(Exception) as refused:  # a file named on its own must fit, or nothing is written
            engine.ingest(vid, [named])
        assert getattr(refused.value, "code", "") == "limit_exceeded"
    finally:
        engine.close()
    engine, vid = open_vault(tmp_path / "home2", LIMIT.format(n=3))
    try:
        report = engine.import_notes(vid, "obsidian", notes)
        assert report.count("created") == 3 and report.count("skipped") == 3
        assert {i.reason for i in report.items if i.status == "skipped"} == {FULL_CHUNKS}
        assert engine.import_notes(vid, "obsidian", notes).count("unchanged") == 3  # again: no duplicates
    finally:
        engine.close()


@pytest.mark.slow
def test_a_50000_file_folder_is_walked_whole_and_fills_the_vault_without_a_traceback(tmp_path: Path) -> None:
    """The size the walk used to refuse outright; limits lowered so the writing stays short."""
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text(LIMIT.format(n=2000), encoding="utf-8")
    notes = _folder(tmp_path, 50_000)
    assert call_cli(home, "--json", "vault", "create", "notes").code == 0
    added = call_cli(home, "--json", "source", "add", "notes", str(notes))
    assert added.code == 0, added.stderr[-2000:]
    items = added.json["sync"]["items"]
    assert len(items) == 50_000
    statuses = [i["status"] for i in items]
    assert statuses.count("created") == 2000 and statuses.count("skipped") == 48_000
    assert {i["reason"] for i in items if i["status"] == "skipped"} == {FULL_CHUNKS}
    found = call_cli(home, "--json", "rag", "search", "notes", "word1999")
    assert found.code == 0 and found.json["results"], found.stderr


def _held(tmp_path: Path, point: str, *args: str, home: Path) -> tuple[subprocess.Popen[bytes], Path]:
    """`memories ARGS` in a child process that stops at `point` until the test lets it go."""
    ready = tmp_path / f"held-{point}"
    env = cli_env(home, MEMORIES_TEST_HOLD_AT=f"{point}:{ready}")
    child = subprocess.Popen([sys.executable, str(CHEAP_CLI), *args], env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while not ready.exists():
        assert child.poll() is None, child.communicate()
        assert time.monotonic() < deadline, "the child never reached the point"
        time.sleep(0.02)
    return child, ready


def test_a_file_changed_while_it_is_read_is_skipped_and_synced_next_time(tmp_path: Path, vault) -> None:
    home = tmp_path / "home"
    notes = tmp_path / "Notes"
    notes.mkdir()
    (notes / "a.md").write_text("# Draft\n\nthe first half", encoding="utf-8")
    (notes / "b.md").write_text("# Other\n\nsteady", encoding="utf-8")
    assert call_cli(home, "--json", "source", "add", "notes", str(notes), "--no-sync").code == 0
    child, ready = _held(tmp_path, "source-read", "--json", "source", "sync", "notes", home=home)
    with open(notes / "a.md", "a", encoding="utf-8") as f:  # the editor is still writing: a.md was read
        f.write(" and the second half")
    ready.unlink()
    out, err = child.communicate(timeout=120)
    assert child.returncode == 0, err.decode()
    items = {i["file"]: i for i in json.loads(out)["sources"][0]["items"]}
    assert items["a.md"]["status"] == "skipped" and items["a.md"]["reason"] == TORN
    assert items["b.md"]["status"] == "created"
    listed = call_cli(home, "--json", "source", "list", "notes").json["sources"][0]
    assert listed["pending"] == 1 and listed["records"] == 1  # the torn file waits for the next sync
    later = call_cli(home, "--json", "source", "sync", "notes").json["sources"][0]["items"]
    torn = next(i for i in later if i["file"] == "a.md")
    assert torn["status"] == "created", later  # not recorded as seen: the next sync takes it, whole
    body = call_cli(home, "--json", "memory", "read", "notes", torn["id"]).json
    assert "the second half" in json.dumps(body, ensure_ascii=False)


def test_source_add_whose_first_sync_fails_says_it_stays_and_how_to_remove_it(tmp_path: Path, vault) -> None:
    home = tmp_path / "home"
    notes = tmp_path / "Notes"
    notes.mkdir()
    (notes / "a.md").write_text("text", encoding="utf-8")
    child, ready = _held(tmp_path, "source-sync", "--json", "source", "add", "notes", str(notes), home=home)
    notes.rename(tmp_path / "unmounted")  # the drive goes away between the add and its first sync
    ready.unlink()
    out, _ = child.communicate(timeout=120)
    error = json.loads(out)["error"]
    assert child.returncode != 0 and error["code"] == "source_missing"
    sid = call_cli(home, "--json", "source", "list", "notes").json["sources"][0]["source"]["id"]
    assert f"Source {sid} stays registered" in error["message"]
    assert f"memories source remove notes {sid}" in error["message"]
    assert os.path.isdir(tmp_path / "unmounted")
