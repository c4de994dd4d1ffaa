"""Imports under faults a user meets: the process killed (`kill -9`) between two batches, and
export folders holding a file whose name is not UTF-8. Real processes, real files."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from memories_tui.engine import Engine
from tests.helpers.cli import CHEAP_CLI, call_cli, cli_env
from tests.helpers.vaults import PASS
from tests.integration.test_importers import enex, enex_note

NOTES = 700  # one whole batch of 500 and the start of a second


def _records(home: Path, vault_id: str) -> list:
    engine = Engine.open(home)
    try:
        engine.unlock(vault_id, PASS)
        return engine.list_records(vault_id)
    finally:
        engine.close()


def test_an_import_killed_between_batches_resumes_without_duplicates(tmp_path: Path, vault: str, cheap_kdf) -> None:
    home = tmp_path / "home"
    export = tmp_path / "Many.enex"
    export.write_text(enex("".join(enex_note(f"Note {n}", f"<p>text {n}</p>") for n in range(NOTES))), encoding="utf-8")
    ready = tmp_path / "paused"
    env = cli_env(home, MEMORIES_TEST_PAUSE_AT=f"import-batch-written:{ready}")
    child = subprocess.Popen([sys.executable, str(CHEAP_CLI), "--json", "import", "evernote", "notes", str(export)],
                             env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while not ready.exists():
        assert child.poll() is None, child.communicate()
        assert time.monotonic() < deadline, "the import never finished its first batch"
        time.sleep(0.05)
    os.kill(child.pid, signal.SIGKILL)
    child.wait(timeout=30)
    assert child.returncode == -signal.SIGKILL
    written = _records(home, vault)
    assert len(written) == 500 and all(r.body.startswith("text ") for r in written)  # the batch, whole

    resumed = call_cli(home, "--json", "import", "evernote", "notes", str(export))
    assert resumed.code == 0, resumed.stderr
    statuses = [i["status"] for i in resumed.json["items"]]
    assert statuses.count("unchanged") == 500 and statuses.count("created") == NOTES - 500
    titles = [r.title for r in _records(home, vault)]
    assert len(titles) == NOTES and len(set(titles)) == NOTES  # each note once


def test_an_export_folder_with_a_name_that_is_not_utf8_imports_the_rest(tmp_path: Path, vault: str) -> None:
    home = tmp_path / "home"
    folder = tmp_path / "Obsidian"
    folder.mkdir()
    (folder / "good.md").write_text("# Good\n\nkept\n", encoding="utf-8")
    Path(os.fsdecode(os.fsencode(folder) + b"/caf\xe9.md")).write_text("a latin-1 name", encoding="utf-8")
    for app in ("obsidian", "notion"):
        done = call_cli(home, "--json", "import", app, "notes", str(folder))
        assert done.code == 0 and "Traceback" not in done.stderr, done.stderr
        items = {i["note"]: i for i in done.json["items"]}
        assert items["good.md" if app == "obsidian" else "good"]["status"] == "created"
        odd = items["caf\\xe9.md"]
        assert odd["status"] == "skipped" and "UTF-8" in odd["reason"], odd


def test_a_notion_export_split_into_zips_inside_the_zip_imports_every_part(tmp_path: Path, engine) -> None:
    import io
    import zipfile

    from tests.integration.test_importers import NOTION_PAGE

    def part(pages: dict[str, str]) -> bytes:
        data = io.BytesIO()
        with zipfile.ZipFile(data, "w", zipfile.ZIP_DEFLATED) as z:
            for name, text in pages.items():
                z.writestr(name, text)
        return data.getvalue()

    export = tmp_path / "Export-big.zip"
    with zipfile.ZipFile(export, "w") as z:  # as Notion sends a large export
        z.writestr("Export-big-Part-1.zip", part({f"{NOTION_PAGE}.md": "# Projects\n\nAll my projects.\n"}))
        z.writestr("Export-big-Part-2.zip", part({
            f"{NOTION_PAGE}/Garden fedcba9876543210fedcba9876543210.md": "# Garden\n\nTomatoes first.\n",
            f"{NOTION_PAGE}/Garden fedcba9876543210fedcba9876543210/plan.png": "png"}))
        z.writestr("Export-big-Part-3.zip", b"PK\x03\x04 damaged in transit")
    vid = engine.test_vault_id
    items = {i.note: i for i in engine.import_notes(vid, "notion", export).items}
    assert items["Projects"].status == "created" and items["Projects/Garden"].status == "created"
    assert items["Export-big-Part-3.zip"].status == "skipped" and "cannot be read" in items["Export-big-Part-3.zip"].reason
    garden = engine.read_record(vid, items["Projects/Garden"].id or "")
    assert garden.metadata["notion_id"] == "fedcba9876543210fedcba9876543210" and "Tomatoes" in garden.body
    again = engine.import_notes(vid, "notion", export)
    assert again.count("created") == 0 and again.count("unchanged") == 2

    unpacked = tmp_path / "Unpacked"  # the outer zip unpacked by hand, the parts left as they came
    unpacked.mkdir()
    with zipfile.ZipFile(export) as z:
        z.extractall(unpacked)
    folder = {i.note: i.status for i in engine.import_notes(vid, "notion", unpacked).items}
    assert folder["Projects/Garden"] == "unchanged" and folder["Export-big-Part-3.zip"] == "skipped"
