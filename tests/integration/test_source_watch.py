"""A real daemon keeps an unlocked vault's sources in step from file events; nothing is watched
while the vault is locked, and unlocking catches up what changed meanwhile."""

from __future__ import annotations

from pathlib import Path

from tests.helpers.cli import call_cli
from tests.helpers.daemon import stop, unlock, wait_until


def _titles(home: Path) -> set[str]:
    out = call_cli(home, "--json", "memory", "list", "notes", "--kind", "card", passphrase=None)
    return {r["title"] for r in out.json.get("records", [])} if out.code == 0 else set()


def _files(home: Path) -> dict[str, str]:
    """Card id -> its file under the source folder."""
    listed = call_cli(home, "--json", "memory", "list", "notes", "--kind", "card", passphrase=None).json["records"]
    return {r["id"]: str(call_cli(home, "--json", "memory", "read", "notes", r["id"], passphrase=None)
                          .json["metadata"].get("source_rel")) for r in listed}


def _gone(home: Path) -> list[str]:
    out = call_cli(home, "--json", "source", "list", "notes", passphrase=None)
    return out.json["sources"][0]["gone"] if out.code == 0 else []


def test_the_daemon_syncs_changes_as_they_happen_and_catches_up_at_unlock(tmp_path: Path, vault) -> None:
    home = tmp_path / "home"
    notes = tmp_path / "Notes"
    notes.mkdir()
    (notes / "a.md").write_text("# First\n", encoding="utf-8")
    (home / "config.toml").write_text("[sources]\ndebounce_seconds = 0.2\nrescan_seconds = 3600\n", encoding="utf-8")
    assert call_cli(home, "--json", "source", "add", "notes", str(notes)).code == 0
    try:
        assert unlock(home, "notes").code == 0
        (notes / "b.md").write_text("# 第二篇 Second\n", encoding="utf-8")  # a new file: seen by its event
        wait_until(lambda: "第二篇 Second" in _titles(home), what="the new file's card")
        first = {r["title"]: r["id"] for r in call_cli(home, "--json", "memory", "list", "notes",
                                                         passphrase=None).json["records"]}
        (notes / "sub").mkdir()
        (notes / "b.md").rename(notes / "sub" / "b2.md")  # a move: only the two paths' events
        wait_until(lambda: _files(home).get(first["第二篇 Second"]) == "sub/b2.md", what="the move, same card")
        (notes / "a.md").unlink()
        wait_until(lambda: _gone(home) == ["a.md"], what="the deleted file marked gone")

        assert call_cli(home, "--json", "lock", "notes", passphrase=None).code == 0
        (notes / "c.md").write_text("# Written while locked\n", encoding="utf-8")
        assert unlock(home, "notes").code == 0  # the rescan at unlock, not an event, brings it
        wait_until(lambda: "Written while locked" in _titles(home), what="the catch-up at unlock")
    finally:
        stop(home)
