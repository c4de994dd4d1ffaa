"""One folder of notes on two devices (what Syncthing or iCloud Drive does to an Obsidian vault),
a source on both: the second `source add` is refused with what to do instead of making a second
card of every note; with --take-over both keep the same cards in step, and the same change of a
file, recorded by each device with its own path and stat, merges instead of showing as a
conflict. A folder added again after `source remove` is caught the same way."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest

from memories_tui.errors import ErrorCode, MemoriesError
from tests.helpers.cli import call_cli
from tests.helpers.sync import Device, first_device, joined_device


def _notes(folder: Path) -> Path:
    folder.mkdir(parents=True)
    (folder / "tea.md").write_text("# Tea\n\nOolong, rinse first.\n", encoding="utf-8")
    (folder / "sub").mkdir()
    (folder / "sub" / "bread.md").write_text("# Bread\n\nSourdough.\n", encoding="utf-8")
    return folder


def _cards(device: Device) -> list[tuple[str, str]]:
    return sorted((r.title, r.body) for r in device.engine.list_records(device.vault_id) if r.kind == "card")


def _laptop_and_desktop(tmp_path: Path) -> tuple[Device, Device, Path, Path]:
    """Device a keeps a folder as a source and synced; the sync tool copied the folder to device
    b, just joined. (a, b, a's folder, b's copy)"""
    target = tmp_path / "Sync"
    target.mkdir()
    here, there = _notes(tmp_path / "laptop" / "Notes"), tmp_path / "desktop" / "Notes"
    a = first_device(tmp_path / "a", str(target))
    a.engine.add_source(a.vault_id, here)
    a.engine.sync_sources(a.vault_id)
    a.sync()
    shutil.copytree(here, there)  # what the sync tool does
    return a, joined_device(tmp_path / "b", str(target)), here, there


def test_one_folder_on_two_devices_is_one_card_per_note(tmp_path, cheap_kdf):
    a, b, here, there = _laptop_and_desktop(tmp_path)
    with pytest.raises(MemoriesError) as refused:
        b.engine.add_source(b.vault_id, there)
    assert refused.value.code == ErrorCode.SOURCE_EXISTS and "--take-over" in refused.value.message
    assert b.engine.source_specs(b.vault_id) == []
    spec = b.engine.add_source(b.vault_id, there, take_over=True)
    assert [i.status for i in b.engine.sync_sources(b.vault_id)[0].items] == ["unchanged", "unchanged"]
    assert spec.id == a.engine.source_specs(a.vault_id)[0].id
    for n, folder in enumerate((here, there)):  # the same edit reaches both copies, each with its own time
        (folder / "tea.md").write_text("# Tea\n\nOolong, rinse first. 90C.\n", encoding="utf-8")
        os.utime(folder / "tea.md", ns=(1_800_000_000_000_000_000 + n, 1_800_000_000_000_000_000 + n))
    for device in (a, b):
        assert [i.status for i in device.engine.sync_sources(device.vault_id)[0].items] == ["unchanged", "updated"]
    for device in (a, b, a, b):
        device.sync()
    for device in (a, b):
        assert device.conflicts() == {}
        assert _cards(device) == [("Bread", "# Bread\n\nSourdough.\n"), ("Tea", "# Tea\n\nOolong, rinse first. 90C.\n")]
    for folder in (here, there):  # a note deleted: each device marks its card gone, at its own time
        (folder / "sub" / "bread.md").unlink()
    a.engine.sync_sources(a.vault_id)
    time.sleep(1.1)  # the mark is a time to the second: another second on the other device
    b.engine.sync_sources(b.vault_id)
    for device in (a, b, a, b):
        device.sync()
    for device in (a, b):
        assert device.conflicts() == {}
        assert [s.gone for s in device.engine.list_sources(device.vault_id)] == [["sub/bread.md"]]
    a.close()
    b.close()


def test_a_folder_added_again_after_source_remove_takes_its_cards_back(tmp_path):
    home, folder = tmp_path / "home", _notes(tmp_path / "Notes")
    call_cli(home, "vault", "create", "notes")
    assert call_cli(home, "source", "add", "notes", str(folder)).code == 0
    source = call_cli(home, "--json", "source", "list", "notes").json["sources"][0]["source"]["id"]
    assert call_cli(home, "source", "remove", "notes", source).code == 0
    again = call_cli(home, "source", "add", "notes", str(folder))
    assert again.code == 1 and "--take-over" in again.stderr and "Traceback" not in again.stderr
    assert call_cli(home, "--json", "source", "list", "notes").json["sources"] == []
    taken = call_cli(home, "--json", "source", "add", "notes", str(folder), "--take-over")
    assert taken.code == 0 and taken.json["source"]["id"] == source
    assert sorted(i["status"] for i in taken.json["sync"]["items"]) == ["unchanged", "unchanged"]
    cards = call_cli(home, "--json", "memory", "list", "notes").json["records"]
    assert sorted(c["title"] for c in cards if c["kind"] == "card") == ["Bread", "Tea"]


def test_a_new_file_both_devices_took_in_before_syncing_ends_as_one_card(tmp_path, cheap_kdf):
    """Both keep the folder (--take-over) and both take in a new file before either syncs: two
    cards of it meet at the sync; the next source sync on each device keeps the lower id and
    deletes the other, the same on both, with no conflict. A second card whose text was edited
    in the vault is left and reported instead."""
    a, b, here, there = _laptop_and_desktop(tmp_path)
    b.engine.add_source(b.vault_id, there, take_over=True)
    b.engine.sync_sources(b.vault_id)
    for name in ("jam.md", "pie.md"):
        for folder in (here, there):
            (folder / name).write_text(f"# {name[:-3].title()}\n\nQuince.\n", encoding="utf-8")
    for device in (a, b):
        device.engine.sync_sources(device.vault_id)
    for device in (a, b, a):
        device.sync()
    twins = sorted(r.id for r in a.engine.list_records(a.vault_id) if r.title == "Pie")
    assert len(twins) == 2
    a.engine.update_record(a.vault_id, twins[1], body="# Pie\n\nQuince, edited in the vault.\n")
    a.sync()  # b learns of the edit before it looks at its cards (else its delete and the edit cross: kept, reported)
    b.sync()
    for device in (a, b, a, b):
        items = device.engine.sync_sources(device.vault_id)[0].items
        device.sync()
    for device in (a, b):
        titles = sorted(r.title for r in device.engine.list_records(device.vault_id) if r.kind == "card")
        assert titles == ["Bread", "Jam", "Pie", "Pie", "Tea"], titles  # one Jam; both Pies (one edited)
        assert device.conflicts() == {}
    said = {(i.file, i.status) for i in a.engine.sync_sources(a.vault_id)[0].items}
    assert ("pie.md", "skipped") in said and ("jam.md", "unchanged") in said
    assert items  # the last source sync reported every file
    a.close()
    b.close()


def test_a_folder_holding_a_copy_of_a_few_notes_is_another_folder(tmp_path, engine):
    vault_id = engine.test_vault_id
    notes = _notes(tmp_path / "Notes")
    for n in range(4):
        (notes / f"n{n}.md").write_text(f"# Note {n}\n", encoding="utf-8")
    spec = engine.add_source(vault_id, notes)
    engine.sync_sources(vault_id)
    engine.remove_source(vault_id, spec.id)  # its cards stay, of a source this home no longer has
    project = tmp_path / "Project"
    project.mkdir()
    shutil.copy(notes / "tea.md", project / "tea.md")  # one of six notes copied elsewhere
    (project / "plan.md").write_text("# Plan\n", encoding="utf-8")
    assert engine.add_source(vault_id, project).id != spec.id  # not refused: another folder
    with pytest.raises(MemoriesError) as refused:
        engine.add_source(vault_id, notes)  # the folder itself
    assert refused.value.code == ErrorCode.SOURCE_EXISTS


def test_keeping_both_sides_of_a_source_cards_conflict_makes_a_copy_no_source_sync_touches(tmp_path, cheap_kdf):
    """The two copies of a file were changed differently (a conflict on its card); "keep both"
    makes the losing text a note of its own: not tied to the file, so no source sync takes it
    for the file's card and overwrites it (it carried the card's ties before)."""
    a, b, here, there = _laptop_and_desktop(tmp_path)
    b.engine.add_source(b.vault_id, there, take_over=True)
    b.engine.sync_sources(b.vault_id)
    (here / "tea.md").write_text("# Tea\n\nGreen tea, 80C.\n", encoding="utf-8")
    (there / "tea.md").write_text("# Tea\n\nBlack tea, boiling.\n", encoding="utf-8")
    for device in (a, b):
        device.engine.sync_sources(device.vault_id)
    for device in (a, b, a):
        device.sync()
    (card,) = a.conflicts()
    (copy,) = a.engine.keep_both(a.vault_id, card)
    assert not {"source_id", "source_rel", "sha256"} & set(copy.metadata)
    for _ in range(2):
        for device in (a, b):
            device.engine.sync_sources(device.vault_id)
            device.sync()
    for device in (a, b):
        records = {r.id: r for r in device.engine.list_records(device.vault_id)}
        assert records[copy.id].body == copy.body and records[copy.id].title.endswith("(conflict copy)")
        assert records[card].metadata["source_rel"] == "tea.md"
        assert device.conflicts() == {}
    a.close()
    b.close()
