"""Source folders kept in step with a vault (`memories source add/list/remove/sync`): real
folders changed between syncs the way a user or an editor changes them."""

from __future__ import annotations

import os
import unicodedata
from pathlib import Path

import pytest

from memories_tui.errors import InputRefusedError, NotFoundError
from tests.helpers.cli import call_cli
from tests.helpers.vaults import PASS

NFD_NAME = unicodedata.normalize("NFD", "café 筆記.md")  # as macOS hands it over


def make_folder(root: Path) -> Path:
    notes = root / "Notes"
    (notes / "trip").mkdir(parents=True)
    (notes / ".obsidian").mkdir()
    (notes / "node_modules" / "pkg").mkdir(parents=True)
    (notes / "a.md").write_text("# Kyoto\n\nThe JR pass covers local lines.\n", encoding="utf-8")
    (notes / "trip" / NFD_NAME).write_text("拉麵店在車站旁邊。", encoding="utf-8")
    (notes / "trip" / "photo.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00" * 16)
    (notes / ".obsidian" / "workspace.md").write_text("secretword", encoding="utf-8")
    (notes / ".DS_Store").write_bytes(b"\x00\x00\x00\x01Bud1")
    (notes / "node_modules" / "pkg" / "README.md").write_text("secretword", encoding="utf-8")
    return notes


def _items(report) -> dict[str, tuple[str, str | None, int | None]]:
    return {i.file: (i.status, i.id, i.revision) for i in report.items}


def test_sync_follows_new_changed_moved_deleted_and_recreated_files(engine, tmp_path: Path) -> None:
    vid = engine.test_vault_id
    notes = make_folder(tmp_path)
    spec = engine.add_source(vid, notes)
    first = _items(engine.sync_sources(vid)[0])
    nfc = unicodedata.normalize("NFC", "trip/café 筆記.md")
    assert {f: s for f, (s, _, _) in first.items()} == {"a.md": "created", nfc: "created", "trip/photo.png": "skipped"}
    card = engine.read_record(vid, first[nfc][1])
    assert card.title == unicodedata.normalize("NFC", "café 筆記.md") and card.metadata["source_id"] == spec.id

    counter = engine._vault(vid).change_counter()
    again = _items(engine.sync_sources(vid)[0])
    assert {s for s, _, _ in again.values()} == {"unchanged", "skipped"}
    assert engine._vault(vid).change_counter() == counter  # an untouched folder costs no write

    (notes / "a.md").write_text("# Kyoto\n\nThe JR pass covers local lines and the Haruka.\n", encoding="utf-8")
    os.utime(notes / "trip" / NFD_NAME, ns=(1, 1))  # touched, same bytes: read, hashed, not written
    changed = _items(engine.sync_sources(vid)[0])
    assert changed["a.md"] == ("updated", first["a.md"][1], 2) and changed[nfc][0] == "unchanged"

    (notes / "archive").mkdir()
    (notes / "trip" / NFD_NAME).rename(notes / "archive" / "ramen.md")  # renamed and moved, same bytes
    moved = _items(engine.sync_sources(vid)[0])
    assert moved["archive/ramen.md"][:2] == ("moved", first[nfc][1]) and nfc not in moved
    assert engine.revisions(vid, first[nfc][1]) == [1, 2]  # the same card, its history kept

    (notes / "a.md").unlink()
    gone = _items(engine.sync_sources(vid)[0])
    assert gone["a.md"][:2] == ("gone", first["a.md"][1])
    assert engine.list_sources(vid)[0].gone == ["a.md"]
    assert _items(engine.sync_sources(vid)[0])["a.md"][0] == "gone"  # marked once, listed every time
    assert engine.read_record(vid, first["a.md"][1]).body.endswith("Haruka.\n")  # kept until pruned

    (notes / "a.md").write_text("# Kyoto again\n", encoding="utf-8")  # re-created: the same card comes back
    back = _items(engine.sync_sources(vid)[0])
    assert back["a.md"][:2] == ("updated", first["a.md"][1])
    assert engine.list_sources(vid)[0].gone == []

    (notes / "a.md").unlink()
    pruned = _items(engine.sync_sources(vid, prune=True)[0])
    assert pruned["a.md"][0] == "pruned"
    assert first["a.md"][1] not in {r.id for r in engine.list_records(vid)}


def test_a_missing_folder_refuses_the_sync_and_changes_nothing(engine, tmp_path: Path) -> None:
    vid = engine.test_vault_id
    notes = make_folder(tmp_path)
    engine.add_source(vid, notes)
    engine.sync_sources(vid)
    notes.rename(tmp_path / "unmounted")
    with pytest.raises(InputRefusedError) as caught:
        engine.sync_sources(vid)
    assert caught.value.code == "source_missing" and "nothing was changed" in caught.value.message
    assert engine.list_sources(vid)[0].gone == [] and not engine.list_sources(vid)[0].present


def test_globs_excludes_loops_and_bad_names_are_reported_not_fatal(engine, tmp_path: Path) -> None:
    vid = engine.test_vault_id
    notes = make_folder(tmp_path)
    (notes / "drafts").mkdir()
    (notes / "drafts" / "wip.md").write_text("draft", encoding="utf-8")
    (notes / "plain.txt").write_text("not markdown", encoding="utf-8")
    (notes / "loop").symlink_to(notes, target_is_directory=True)
    Path(os.fsdecode(bytes(notes) + b"/caf\xe9.md")).write_text("a latin-1 name", encoding="utf-8")
    engine.add_source(vid, notes, globs=["*.md"], excludes=["drafts/*"])
    items = _items(engine.sync_sources(vid)[0])
    assert items["a.md"][0] == "created" and "drafts/wip.md" not in items and "plain.txt" not in items
    assert items["loop"][0] == "skipped" and items["caf\\xe9.md"][0] == "skipped"
    reasons = {i.file: i.reason for i in engine.sync_sources(vid)[0].items}
    assert "link" in reasons["loop"] and "UTF-8" in reasons["caf\\xe9.md"]
    with pytest.raises(InputRefusedError) as overlap:
        engine.add_source(vid, notes / "drafts")
    assert overlap.value.code == "source_exists"
    with pytest.raises(NotFoundError):
        engine.remove_source(vid, "nope")


def test_sources_belong_to_the_home_and_are_kept_encrypted(engine, tmp_path: Path) -> None:
    from memories_tui.engine import Engine

    vid = engine.test_vault_id
    notes = make_folder(tmp_path)
    engine.add_source(vid, notes)
    engine.lock()
    assert b"Notes" not in engine.resolve_vault(vid).path.read_bytes()  # the folder's name is not in plain text
    other = Engine.open(tmp_path / "home", None)
    other.home = tmp_path / "elsewhere"  # the same vault opened from another home
    other.unlock(vid, PASS)
    try:
        assert other.list_sources(vid) == []
    finally:
        other.close()


def test_cli_source_verbs_keep_the_json_contract(tmp_path: Path, vault) -> None:
    home = tmp_path / "home"
    notes = make_folder(tmp_path)
    added = call_cli(home, "--json", "source", "add", "notes", str(notes))
    assert added.code == 0, added.stdout + added.stderr
    sid = added.json["source"]["id"]
    assert {i["status"] for i in added.json["sync"]["items"]} == {"created", "skipped"}
    (notes / "a.md").unlink()
    text = call_cli(home, "source", "sync", "notes")
    assert text.code == 0 and "source gone" in text.stdout and "a.md" in text.stdout
    listed = call_cli(home, "--json", "source", "list", "notes")
    assert listed.json["sources"][0]["gone"] == ["a.md"] and listed.json["sources"][0]["records"] == 2
    (home / "config.toml").write_text("[sources]\nprune = true\n", encoding="utf-8")
    pruned = call_cli(home, "--json", "source", "sync", "notes", sid)
    assert [i["status"] for i in pruned.json["sources"][0]["items"] if i["file"] == "a.md"] == ["pruned"]
    assert call_cli(home, "--json", "source", "remove", "notes", str(notes)).json["removed"]["id"] == sid
    missing = call_cli(home, "--json", "source", "sync", "notes", sid)
    assert missing.code != 0 and set(missing.json["error"]) == {"code", "message"}


def test_a_folder_that_vanishes_mid_sync_marks_nothing_gone(engine, tmp_path: Path) -> None:
    vid = engine.test_vault_id
    notes = make_folder(tmp_path)
    (notes / "b.md").write_text("second note", encoding="utf-8")
    engine.add_source(vid, notes)
    engine.sync_sources(vid)
    (notes / "c.md").write_text("third note", encoding="utf-8")
    (notes / "a.md").unlink()  # really deleted; but this sync cannot be sure once the folder has gone

    def unmount(p) -> None:
        if p.stage == "read" and p.done == 2:
            notes.rename(tmp_path / "away")  # the drive goes away after the walk, while files are read

    items = {i.file: i for i in engine.sync_sources(vid, progress=unmount)[0].items}
    assert not [f for f, i in items.items() if i.status in ("gone", "pruned")]
    assert items["b.md"].status == "unchanged"  # read before the folder went
    assert {items[f].status for f in ("a.md", "c.md")} == {"skipped"} and "vanished" in items["c.md"].reason
    assert engine.list_sources(vid)[0].gone == []
    (tmp_path / "away").rename(notes)
    back = {i.file: i.status for i in engine.sync_sources(vid)[0].items}
    assert back["c.md"] == "created" and back["b.md"] == "unchanged" and back["a.md"] == "gone"


def test_sources_and_imports_run_through_the_resident_engine(tmp_path: Path, vault,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.helpers.daemon import stop, unlock

    home = tmp_path / "home"
    make_folder(tmp_path)
    (tmp_path / "Vault").mkdir()
    (tmp_path / "Vault" / "Idea.md").write_text("---\ntags: [x]\n---\nSee [[Kyoto]].\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)  # relative folders are the caller's, not the daemon's
    try:
        assert unlock(home, "notes").code == 0
        added = call_cli(home, "--json", "source", "add", "notes", "Notes", passphrase=None)
        assert added.code == 0, added.stdout + added.stderr
        assert added.json["source"]["path"] == str((tmp_path / "Notes").resolve())
        (tmp_path / "Notes" / "a.md").unlink()
        synced = call_cli(home, "--json", "source", "sync", "notes", "Notes", passphrase=None)
        assert synced.code == 0 and {i["file"]: i["status"] for i in synced.json["sources"][0]["items"]}["a.md"] == "gone"
        listed = call_cli(home, "--json", "source", "list", "notes", passphrase=None)
        assert listed.json["sources"][0]["gone"] == ["a.md"]
        imported = call_cli(home, "--json", "import", "obsidian", "notes", "Vault", passphrase=None)
        assert imported.code == 0 and [i["status"] for i in imported.json["items"]] == ["created"]
        assert call_cli(home, "--json", "source", "remove", "notes", "Notes", passphrase=None).code == 0
    finally:
        stop(home)


def test_a_watchers_sync_looks_only_at_the_changed_paths(engine, tmp_path: Path) -> None:
    vid = engine.test_vault_id
    notes = make_folder(tmp_path)
    (notes / "b.md").write_text("second note", encoding="utf-8")
    spec = engine.add_source(vid, notes)
    first = _items(engine.sync_sources(vid)[0])
    (notes / "b.md").rename(notes / "trip" / "b-moved.md")
    (notes / "unseen.md").write_text("not in the events", encoding="utf-8")  # no event named it: left for later
    changed = [str(notes / "b.md"), str(notes / "trip" / "b-moved.md"), str(notes / ".obsidian" / "x.json")]
    items = _items(engine.sync_changed(vid, spec.id, changed)[0])
    assert items == {"trip/b-moved.md": ("moved", first["b.md"][1], 2)}
    (notes / "a.md").unlink()
    assert _items(engine.sync_changed(vid, spec.id, [str(notes / "a.md")])[0]) == {"a.md": ("gone", first["a.md"][1], 2)}
    import shutil

    shutil.rmtree(notes / "trip")  # a folder of cards went: only a walk can tell what is gone
    whole = _items(engine.sync_changed(vid, spec.id, [str(notes / "trip")])[0])
    assert whole["unseen.md"][0] == "created" and whole["trip/b-moved.md"][0] == "gone"


def test_importing_a_source_folder_is_refused_not_duplicated(engine, tmp_path: Path) -> None:
    vid = engine.test_vault_id
    notes = make_folder(tmp_path)
    spec = engine.add_source(vid, notes)
    engine.sync_sources(vid)
    before = engine._vault(vid).change_counter()
    for where in (notes, notes / "trip", tmp_path):  # the folder, one inside it, one holding it
        with pytest.raises(InputRefusedError) as refused:
            engine.import_notes(vid, "obsidian", where)
        assert refused.value.code == "source_exists" and spec.id in refused.value.message
        assert "source sync" in refused.value.message
    assert engine._vault(vid).change_counter() == before
    engine.remove_source(vid, spec.id)
    assert engine.import_notes(vid, "obsidian", notes, dry_run=True).items  # once removed, it imports


def test_skip_reasons_are_shown_in_the_interface_language(tmp_path: Path, vault) -> None:
    home = tmp_path / "home"
    notes = make_folder(tmp_path)
    (notes / "trip" / "link").symlink_to(notes / "trip", target_is_directory=True)
    shown = call_cli(home, "--lang", "zh-Hant", "source", "add", "notes", str(notes))
    text = "".join(shown.stdout.split())  # a table may wrap a long reason
    assert shown.code == 0 and "不匯入.png檔案" in text and "指向資料夾的連結" in text, shown.stdout
    english = call_cli(home, "--json", "--lang", "zh-Hant", "source", "sync", "notes").json
    reasons = {i["file"]: i["reason"] for i in english["sources"][0]["items"] if i["status"] == "skipped"}
    assert reasons["trip/photo.png"] == "not a text or Markdown file (.png files are not ingested)"  # JSON stays English


def test_a_source_added_after_an_import_of_its_folder_adopts_the_cards(engine, tmp_path: Path) -> None:
    from tests.integration.test_importers import obsidian_vault

    vid = engine.test_vault_id
    folder = obsidian_vault(tmp_path)
    imported = {i.note: i for i in engine.import_notes(vid, "obsidian", folder).items if i.status == "created"}
    other = obsidian_vault(tmp_path / "copy")  # the same names in another folder: not this source's notes
    for copied in other.rglob("*"):  # the same notes: written in another second, their `source_updated`
        original = folder / copied.relative_to(other)  # would differ and the copy's import update the cards
        os.utime(copied, ns=(original.stat().st_atime_ns, original.stat().st_mtime_ns))
    assert {i.status for i in engine.import_notes(vid, "obsidian", other).items} <= {"unchanged", "skipped"}
    before = len(engine.list_records(vid))
    engine.add_source(vid, folder)
    synced = {i.file: i for i in engine.sync_sources(vid)[0].items if i.status != "skipped"}
    assert set(synced) == set(imported)  # every note of the folder, none of the copy's
    assert {f: (i.status, i.id) for f, i in synced.items()} == {f: ("updated", i.id) for f, i in imported.items()}
    assert len(engine.list_records(vid)) == before  # adopted: no second card per note
    garden = engine.read_record(vid, imported["Projects/Garden.md"].id or "")
    assert garden.metadata["source_rel"] == "Projects/Garden.md" and "import_key" not in garden.metadata
    assert garden.metadata["properties"] == {"status": "draft"}  # what the import found is kept
    assert engine.revisions(vid, garden.id) == [1, 2]
    assert {i.status for i in engine.sync_sources(vid)[0].items} <= {"unchanged", "skipped"}


def test_an_import_recorded_without_its_folder_is_adopted_only_where_the_text_matches(engine, tmp_path: Path) -> None:
    from memories_tui.vault.records import RecordUpdate

    vid = engine.test_vault_id
    folder = tmp_path / "Notes"
    folder.mkdir()
    (folder / "same.md").write_text("---\ntags: x\n---\nThe same words.\n", encoding="utf-8")
    (folder / "edited.md").write_text("Words before.\n", encoding="utf-8")
    report = {i.note: i.id for i in engine.import_notes(vid, "obsidian", folder).items}
    for rid in report.values():  # as an import made before imports recorded their folder
        card = engine.read_record(vid, rid or "")
        meta = {k: v for k, v in card.metadata.items() if k not in ("import_origin", "import_file")}
        engine._vault(vid).update_many([RecordUpdate(card.id, metadata=meta)])
    (folder / "edited.md").write_text("Words after.\n", encoding="utf-8")
    engine.add_source(vid, folder)
    synced = {i.file: i for i in engine.sync_sources(vid)[0].items}
    assert (synced["same.md"].status, synced["same.md"].id) == ("updated", report["same.md"])
    assert synced["edited.md"].status == "created"  # not provably the same note: kept apart, nothing lost


def test_an_unpacked_notion_export_imported_then_added_as_a_source_keeps_one_card_per_page(engine,
                                                                                           tmp_path: Path) -> None:
    import zipfile

    from tests.integration.test_importers import notion_zip

    vid = engine.test_vault_id
    folder = tmp_path / "Notion"
    with zipfile.ZipFile(notion_zip(tmp_path)) as z:
        z.extractall(folder)
    pages = {i.note: i.id for i in engine.import_notes(vid, "notion", folder).items if i.status == "created"}
    before = len(engine.list_records(vid))
    engine.add_source(vid, folder)
    synced = [i for i in engine.sync_sources(vid)[0].items if i.file.endswith(".md")]
    assert {i.status for i in synced} == {"updated"} and len(engine.list_records(vid)) == before
    assert {i.id for i in synced} <= set(pages.values())  # the pages' own cards, taken over
