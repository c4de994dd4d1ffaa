"""Stopping and moving a vault's sync, through the CLI: `sync remove` leaves the target and the
other devices as they are and adding the target again goes on where this device stopped; a
copy of the target at a new place (a Syncthing folder moved, a NAS mounted elsewhere) is taken
by `sync add` on each device; an empty target is refused for a vault whose changes are in
another one, with a sentence that says how to move."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.helpers.cli import call_cli


def _titles(home: Path) -> set[str]:
    return {r["title"] for r in call_cli(home, "--json", "memory", "list", "notes").json["records"]}


def _two_devices(tmp_path: Path) -> tuple[Path, Path, Path]:
    a, b, folder = tmp_path / "a", tmp_path / "b", tmp_path / "Sync"
    folder.mkdir()
    call_cli(a, "vault", "create", "notes")
    call_cli(a, "memory", "add", "notes", "--title", "first", "--text", "one")
    assert call_cli(a, "sync", "add", "notes", str(folder)).code == 0 and call_cli(a, "sync", "notes").code == 0
    assert call_cli(b, "sync", "join", str(folder)).code == 0
    return a, b, folder


def test_sync_remove_stops_here_only_and_adding_the_target_again_goes_on(tmp_path):
    a, b, folder = _two_devices(tmp_path)
    removed = call_cli(a, "sync", "remove", "notes")
    assert removed.code == 0 and str(folder) in removed.stdout and "goes on from here" in removed.stdout
    assert call_cli(a, "--json", "sync", "status").json["targets"] == []
    assert call_cli(a, "--json", "sync", "notes").json["error"]["code"] == "sync_no_target"
    assert call_cli(a, "--json", "sync", "remove", "notes").json["error"]["code"] == "sync_no_target"
    call_cli(a, "memory", "add", "notes", "--title", "while removed", "--text", "kept here")
    call_cli(b, "memory", "add", "notes", "--title", "from b", "--text", "two")
    assert call_cli(b, "sync", "notes").code == 0  # the other device goes on as before
    assert call_cli(a, "sync", "add", "notes", str(folder)).code == 0
    assert call_cli(a, "sync", "notes").code == 0 and call_cli(b, "sync", "notes").code == 0
    assert _titles(a) == _titles(b) == {"first", "while removed", "from b"}


def test_a_copy_of_the_target_at_a_new_place_is_taken_and_an_empty_one_refused(tmp_path):
    a, b, folder = _two_devices(tmp_path)
    empty = tmp_path / "Empty"
    empty.mkdir()
    refused = call_cli(a, "--json", "sync", "add", "notes", str(empty))
    assert refused.json["error"]["code"] == "sync_target_exists" and "copy everything" in refused.json["error"]["message"]
    assert list(empty.iterdir()) == [], "the refused target was written to"
    moved = tmp_path / "Moved"
    shutil.copytree(folder, moved)  # the user copies the target (or a sync tool brings it to a new place)
    shutil.rmtree(folder)
    for home, title in ((a, "after the move, a"), (b, "after the move, b")):
        assert call_cli(home, "sync", "add", "notes", str(moved)).code == 0
        call_cli(home, "memory", "add", "notes", "--title", title, "--text", "moved")
    for home in (a, b, a):
        assert call_cli(home, "sync", "notes").code == 0
    assert _titles(a) == _titles(b) == {"first", "after the move, a", "after the move, b"}
    assert [t["url"] for t in call_cli(a, "--json", "sync", "status").json["targets"]] == [str(moved)]
