"""`rag ingest DIR --recursive` and the engine call behind it (the TUI's ingest screen can use
the same one): text and Markdown files in the tree are ingested, every other file is skipped
and listed with its reason, dot-folders and dot-files are left out, links to folders are not
followed; in-process and through the resident engine alike."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memories_tui.engine import IngestProgress
from memories_tui.errors import InputRefusedError
from tests.helpers.cli import call_cli
from tests.helpers.daemon import stop, unlock

SKIPPED = {"trip/photos/temple.png", "trip/latin1.txt", "trip/blob", "report.pdf", "outside",
           "trip/caf\\xe9.md"}


def make_tree(root: Path) -> Path:
    tree = root / "notes"
    (tree / "trip" / "photos").mkdir(parents=True)
    (tree / ".git").mkdir()
    (tree / ".obsidian").mkdir()
    (tree / "a.md").write_text("# Kyoto\n\nThe JR pass covers local lines.\n", encoding="utf-8")
    (tree / "trip" / "ramen.txt").write_text("拉麵店在車站旁邊。", encoding="utf-8")
    (tree / "trip" / "photos" / "temple.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00" * 32)
    (tree / "trip" / "latin1.txt").write_bytes("café au lait".encode("latin-1"))
    (tree / "trip" / "blob").write_bytes(b"ELF\x00\x01binary")
    (Path(os.fsdecode(bytes(tree / "trip") + b"/caf\xe9.md"))).write_text("a latin-1 name", encoding="utf-8")
    (tree / "report.pdf").write_bytes(b"%PDF-1.7 not text")
    (tree / ".git" / "config").write_text("[core] secretword", encoding="utf-8")
    (tree / ".obsidian" / "workspace.md").write_text("secretword", encoding="utf-8")
    (tree / ".hidden.md").write_text("secretword", encoding="utf-8")
    (tree / "outside").symlink_to(root, target_is_directory=True)
    return tree


def test_cli_recursive_ingest_takes_text_and_lists_every_skipped_file(tmp_path: Path, vault) -> None:
    home = tmp_path / "home"
    tree = make_tree(tmp_path)
    plain = call_cli(home, "--json", "rag", "ingest", "notes", str(tree))
    assert plain.code != 0 and "--recursive" in plain.json["error"]["message"]
    out = call_cli(home, "--json", "rag", "ingest", "notes", str(tree), "--recursive")
    assert out.code == 0, out.stdout + out.stderr
    by_file = {r["file"].removeprefix(f"{tree}/"): r for r in out.json["results"]}
    assert {f for f, r in by_file.items() if r["status"] == "created"} == {"a.md", "trip/ramen.txt"}
    skipped = {f: r["reason"] for f, r in by_file.items() if r["status"] == "skipped"}
    assert set(skipped) == SKIPPED
    assert "UTF-8" in skipped["trip/latin1.txt"] and "binary" in skipped["trip/blob"]
    assert ".png" in skipped["trip/photos/temple.png"] and "link" in skipped["outside"]
    assert "name" in skipped["trip/caf\\xe9.md"] and "not valid UTF-8" in skipped["trip/caf\\xe9.md"]
    assert not any(str(tree) in reason for reason in skipped.values())  # the row names the file once
    assert "reason" not in by_file["a.md"]
    assert not any(f.startswith(".") or "/." in f for f in by_file)  # dot-folders and dot-files left out
    assert call_cli(home, "--json", "memory", "search", "notes", "secretword").json["results"] == []
    assert call_cli(home, "--json", "memory", "search", "notes", "拉麵").json["results"][0]["title"] == "ramen.txt"
    text = call_cli(home, "rag", "ingest", "notes", str(tree), "-r")
    assert text.code == 0 and "Skipped 6 files" in text.stdout and "not valid UTF-8" in text.stdout
    assert text.stdout.count("unchanged") == 2
    assert call_cli(home, "rag", "ingest", "notes", str(tree), "-r", "--title", "T").code == 2


def test_engine_folder_ingest_reports_progress_per_file(engine, tmp_path: Path) -> None:
    vault_id = engine.test_vault_id
    tree = make_tree(tmp_path)
    seen: list[IngestProgress] = []
    results = engine.ingest(vault_id, [tree], recursive=True, progress=seen.append)
    reads = [p for p in seen if p.stage == "read"]
    assert [Path(p.path).name for p in reads] == ["a.md", "blob", "caf\\xe9.md", "latin1.txt", "ramen.txt"]
    assert [p.done for p in reads] == [1, 2, 3, 4, 5] and {p.total for p in reads} == {5}
    assert seen[-1].stage == "written"
    assert sorted(r.status for r in results) == ["created", "created"] + ["skipped"] * 6
    with pytest.raises(InputRefusedError, match="not valid UTF-8"):  # a file named directly is still refused
        engine.ingest(vault_id, [tree / "trip" / "latin1.txt"], recursive=True)


def test_recursive_ingest_through_the_resident_engine_names_files_as_given(tmp_path: Path, vault,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    make_tree(tmp_path)
    monkeypatch.chdir(tmp_path)  # a relative folder is found in the caller's working folder
    try:
        assert unlock(home, "notes").code == 0
        served = call_cli(home, "--json", "rag", "ingest", "notes", "notes", "-r", passphrase=None)
        assert served.code == 0, served.stdout + served.stderr
        files = {r["file"]: r["status"] for r in served.json["results"]}
        assert files["notes/a.md"] == "created" and files["notes/trip/blob"] == "skipped"
        assert len(files) == 8
        text = call_cli(home, "rag", "ingest", "notes", "notes", "-r", passphrase=None)
        alone = call_cli(home, "--no-daemon", "rag", "ingest", "notes", "notes", "-r")
        assert (text.code, text.stdout) == (alone.code, alone.stdout) and "Skipped 6 files" in text.stdout
    finally:
        stop(home)


def test_links_to_files_outside_the_folder_are_skipped_not_read(tmp_path: Path, vault) -> None:
    home = tmp_path / "home"
    secret = tmp_path / "ssh" / "id_ed25519"
    secret.parent.mkdir()
    secret.write_text("-----BEGIN OPENSSH PRIVATE KEY----- keymaterial", encoding="utf-8")
    tree = tmp_path / "repo"
    (tree / "docs").mkdir(parents=True)
    (tree / ".git").mkdir()
    (tree / ".git" / "config").write_text("hiddenword", encoding="utf-8")
    (tree / "docs" / "real.md").write_text("# Real\n\nlinked insideword", encoding="utf-8")
    (tree / "docs" / "notes.md").symlink_to(secret)  # absolute, out of the tree
    (tree / "up.md").symlink_to(Path("..") / "ssh" / "id_ed25519")  # relative, out of the tree
    (tree / "alias.md").symlink_to(Path("docs") / "real.md")  # inside: followed
    (tree / "git.md").symlink_to(Path(".git") / "config")  # into a dot-folder: left out
    (tree / "loop.md").symlink_to("loop.md")  # a loop: skipped with its reason, no hang
    out = call_cli(home, "--json", "rag", "ingest", "notes", str(tree), "-r")
    assert out.code == 0, out.stdout + out.stderr
    by_file = {r["file"].removeprefix(f"{tree}/"): r for r in out.json["results"]}
    assert by_file["alias.md"]["status"] == "created" and by_file["docs/real.md"]["status"] in ("created", "unchanged")
    for name in ("docs/notes.md", "up.md"):
        assert by_file[name]["status"] == "skipped" and "outside the folder" in by_file[name]["reason"], by_file
    assert by_file["git.md"]["status"] == "skipped" and "dot-folder" in by_file["git.md"]["reason"]
    assert by_file["loop.md"]["status"] == "skipped"
    for word in ("keymaterial", "OPENSSH", "hiddenword"):
        assert call_cli(home, "--json", "memory", "search", "notes", word).json["results"] == [], word
    text = call_cli(home, "rag", "ingest", "notes", str(tree), "-r")
    assert "outside the folder" in text.stdout and "docs/notes.md" in text.stdout
    named = call_cli(home, "--json", "rag", "ingest", "notes", str(tree / "docs" / "notes.md"))
    assert named.code == 0 and named.json["results"][0]["status"] == "created"  # a file named directly is read
