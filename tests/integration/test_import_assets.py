"""`memories import obsidian --assets`: a vault's attachments kept as encrypted asset records,
found again on the next import, and the notes' embeds resolved to them."""

from __future__ import annotations

from pathlib import Path

from tests.helpers.cli import call_cli
from tests.integration.test_importers import obsidian_vault

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 8  # as obsidian_vault writes attachments/plan.png


def test_obsidian_attachments_become_assets_linked_from_their_notes(engine, tmp_path: Path) -> None:
    vid = engine.test_vault_id
    folder = obsidian_vault(tmp_path)
    report = {i.note: i for i in engine.import_notes(vid, "obsidian", folder, assets=True).items}
    plan = report["attachments/plan.png"]
    assert plan.status == "created"
    asset = engine.read_record(vid, plan.id or "")
    assert asset.kind == "asset" and asset.data == PNG and asset.title == "plan.png"
    garden = engine.read_record(vid, report["Projects/Garden.md"].id or "")
    assert garden.metadata["links"]["plan.png"] == asset.id  # ![[plan.png]] names the asset
    assert {h.kind for h in engine.search(vid, "PNG").results} == {"card"}  # the note naming it; bytes never indexed

    again = {i.note: i for i in engine.import_notes(vid, "obsidian", folder, assets=True).items}
    assert again["attachments/plan.png"].status == "unchanged" and again["Projects/Garden.md"].status == "unchanged"
    (folder / "attachments" / "plan.png").write_bytes(PNG + b"more")
    changed = {i.note: i for i in engine.import_notes(vid, "obsidian", folder, assets=True).items}
    assert changed["attachments/plan.png"].status == "skipped" and "no revisions" in changed["attachments/plan.png"].reason
    assert engine.read_record(vid, plan.id or "").data == PNG  # the stored one is kept, not half-replaced
    assert sum(r.kind == "asset" for r in engine.list_records(vid)) == 1


def test_cli_import_assets_flag_and_without_it_attachments_are_skipped(tmp_path: Path, vault) -> None:
    home = tmp_path / "home"
    folder = obsidian_vault(tmp_path)
    dry = call_cli(home, "--json", "import", "obsidian", "notes", str(folder), "--assets", "--dry-run")
    assert dry.code == 0 and {i["note"]: i["status"] for i in dry.json["items"]}["attachments/plan.png"] == "created"
    plain = call_cli(home, "--json", "import", "obsidian", "notes", str(folder))
    assert {i["note"]: i["status"] for i in plain.json["items"]}["attachments/plan.png"] == "skipped"
    kept = call_cli(home, "--json", "import", "obsidian", "notes", str(folder), "--assets")
    assert kept.code == 0, kept.stderr
    assert {i["note"]: i["status"] for i in kept.json["items"]}["attachments/plan.png"] == "created"
