"""`memories import obsidian|notion|evernote`: exports written here in each app's documented
format, imported, imported again (nothing duplicated), changed and imported again."""

from __future__ import annotations

import unicodedata
import zipfile
from pathlib import Path

import pytest

from memories_tui.errors import InputRefusedError
from tests.helpers.cli import call_cli

NFC = "會議 筆記"
NFD = unicodedata.normalize("NFD", "Café 會議")


def obsidian_vault(root: Path) -> Path:
    vault = root / "Obsidian"
    (vault / ".obsidian").mkdir(parents=True)
    (vault / "Projects").mkdir()
    (vault / "attachments").mkdir()
    (vault / ".obsidian" / "app.json").write_text('{"secret": "secretword"}', encoding="utf-8")
    (vault / "Projects" / "Garden.md").write_text(
        "---\ntitle: Garden plan\ntags:\n  - home\n  - '#outdoor'\naliases: [Yard]\ncreated: 2024-03-01\n"
        "status: draft\n---\nPlant tomatoes. See [[Kyoto trip|the trip]] and ![[plan.png]].\n", encoding="utf-8")
    (vault / f"{NFD}.md").write_text("Links back to [[Garden plan]] and [[Yard#Beds]].\n", encoding="utf-8")
    (vault / "Kyoto trip.md").write_text("---\ntags: travel, japan\n---\n拉麵店在車站旁邊。\n", encoding="utf-8")
    (vault / "Broken.md").write_text("---\ntitle: [unclosed\n  nested: {\n---\nThe body stays.\n", encoding="utf-8")
    (vault / "attachments" / "plan.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00" * 8)
    return vault


def _by_note(report) -> dict[str, object]:
    return {i.note: i for i in report.items}


def test_obsidian_import_keeps_front_matter_links_and_names_and_is_idempotent(engine, tmp_path: Path) -> None:
    vid = engine.test_vault_id
    vault = obsidian_vault(tmp_path)
    report = engine.import_notes(vid, "obsidian", vault)
    items = _by_note(report)
    nfc_name = unicodedata.normalize("NFC", f"{NFD}.md")
    assert {n: i.status for n, i in items.items()} == {
        "Projects/Garden.md": "created", nfc_name: "created", "Kyoto trip.md": "created", "Broken.md": "created",
        "attachments/plan.png": "skipped"}
    assert "attachment" in items["attachments/plan.png"].reason
    assert "front matter" in items["Broken.md"].reason
    garden = engine.read_record(vid, items["Projects/Garden.md"].id)
    assert garden.title == "Garden plan" and set(garden.tags) == {"home", "outdoor"}
    assert garden.metadata["source_app"] == "obsidian" and garden.metadata["source_created"] == "2024-03-01"
    assert garden.metadata["properties"] == {"status": "draft"}
    assert "[[Kyoto trip|the trip]]" in garden.body  # the link stays readable in the text
    assert garden.metadata["links"] == {"Kyoto trip": items["Kyoto trip.md"].id}  # and names its card
    cafe = engine.read_record(vid, items[nfc_name].id)
    assert cafe.title == unicodedata.normalize("NFC", NFD)  # a macOS NFD name comes through as NFC
    assert cafe.metadata["links"] == {"Garden plan": garden.id, "Yard": garden.id}  # by title and by alias
    kyoto = engine.read_record(vid, items["Kyoto trip.md"].id)
    assert set(kyoto.tags) == {"travel", "japan"}
    broken = engine.read_record(vid, items["Broken.md"].id)
    assert broken.body.startswith("---\ntitle: [unclosed") and "The body stays." in broken.body
    assert engine.memory_search(vid, "secretword") == []  # .obsidian/ is not imported

    counter = engine._vault(vid).change_counter()
    again = engine.import_notes(vid, "obsidian", vault)
    assert {i.status for i in again.items} == {"unchanged", "skipped"}
    assert engine._vault(vid).change_counter() == counter and len(engine.list_records(vid)) == 4

    (vault / "Kyoto trip.md").write_text("---\ntags: travel, japan\n---\n拉麵店在車站對面。\n", encoding="utf-8")
    changed = _by_note(engine.import_notes(vid, "obsidian", vault))
    assert (changed["Kyoto trip.md"].status, changed["Kyoto trip.md"].id, changed["Kyoto trip.md"].revision) == \
        ("updated", kyoto.id, 2)
    assert len(engine.list_records(vid)) == 4


NOTION_PAGE = "Projects 0123456789abcdef0123456789abcdef"
NOTION_DB = "Reading list 89abcdef0123456789abcdef01234567"


def notion_zip(root: Path) -> Path:
    path = root / "Export-notion.zip"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr(f"{NOTION_PAGE}.md", "# Projects\n\nAll my projects.\n")
        z.writestr(f"{NOTION_PAGE}/Garden fedcba9876543210fedcba9876543210.md", "# Garden\n\nTomatoes first.\n")
        z.writestr(f"{NOTION_PAGE}/Garden fedcba9876543210fedcba9876543210/plan.png", b"\x89PNG\r\n\x1a\n")
        z.writestr(f"{NOTION_PAGE}/{NFC} 11111111111111111111111111111111.md", f"# {NFC}\n\n決定下週開會。\n")
        z.writestr(f"{NOTION_PAGE}/{NFD} 33333333333333333333333333333333.md", "No heading here.\n")  # macOS zip
        csv_text = "\ufeffName,Author,Status\nDune,Frank Herbert,Read\n三體,劉慈欣,Reading\n"
        z.writestr(f"{NOTION_DB}.csv", csv_text)
        z.writestr(f"{NOTION_DB}_all.csv", csv_text)
        z.writestr(f"{NOTION_DB}/Dune 22222222222222222222222222222222.md",
                   "# Dune\n\nAuthor: Frank Herbert\nStatus: Read\n\nSpice.\n")
    return path


def test_notion_export_strips_ids_keeps_paths_and_turns_rows_into_cards(engine, tmp_path: Path) -> None:
    vid = engine.test_vault_id
    export = notion_zip(tmp_path)
    report = engine.import_notes(vid, "notion", export)
    items = _by_note(report)
    assert {n: i.status for n, i in items.items() if i.status != "skipped"} == {
        "Projects": "created", "Projects/Garden": "created", f"Projects/{NFC}": "created",
        "Reading list/Dune": "created", "Reading list/三體": "created",
        "Projects/" + unicodedata.normalize("NFC", NFD): "created"}
    assert [i.reason for i in report.items if i.status == "skipped"] == ["an attachment, not a page"]
    garden = engine.read_record(vid, items["Projects/Garden"].id)
    assert garden.title == "Garden" and garden.metadata["notion_path"] == "Projects/Garden"
    assert garden.metadata["notion_id"] == "fedcba9876543210fedcba9876543210"
    dune = engine.read_record(vid, items["Reading list/Dune"].id)
    assert dune.metadata["properties"] == {"Author": "Frank Herbert", "Status": "Read"} and "Spice." in dune.body
    santi = engine.read_record(vid, items["Reading list/三體"].id)  # a row with no page of its own
    assert santi.title == "三體" and santi.metadata["properties"]["Author"] == "劉慈欣" and "劉慈欣" in santi.body
    assert engine.read_record(vid, items[f"Projects/{NFC}"].id).title == NFC
    again = engine.import_notes(vid, "notion", export)
    assert {i.status for i in again.items} == {"unchanged", "skipped"} and len(engine.list_records(vid)) == 6
    cafe = items["Projects/" + unicodedata.normalize("NFC", NFD)]
    assert cafe.title == unicodedata.normalize("NFC", NFD)  # the title from an NFD name, as NFC

    (tmp_path / "not.zip").write_bytes(b"PK\x03\x04 truncated")
    with pytest.raises(InputRefusedError) as bad:
        engine.import_notes(vid, "notion", tmp_path / "not.zip")
    assert bad.value.code == "bad_export" and "zip" in bad.value.message


def enex(notes: str) -> str:
    return ('<?xml version="1.0" encoding="UTF-8"?>\n'
            '<!DOCTYPE en-export SYSTEM "http://xml.evernote.com/pub/evernote-export4.dtd">\n'
            f'<en-export export-date="20240102T030405Z" application="Evernote" version="10.0">{notes}</en-export>\n')


def enex_note(title: str, content: str, *, created: str = "20231201T120000Z", extra: str = "") -> str:
    enml = ('<?xml version="1.0" encoding="UTF-8" standalone="no"?>'
            '<!DOCTYPE en-note SYSTEM "http://xml.evernote.com/pub/enml2.dtd">'
            f"<en-note>{content}</en-note>")
    return (f"<note><title>{title}</title><content><![CDATA[{enml}]]></content><created>{created}</created>"
            f"<updated>20231202T080000Z</updated><tag>work</tag><tag>會議</tag>"
            f"<note-attributes><author>Ann</author><source-url>https://example.org/a</source-url></note-attributes>"
            f"{extra}</note>")


RESOURCE = ("<resource><data encoding=\"base64\">iVBORw0KGgo=</data><mime>image/png</mime>"
            "<resource-attributes><file-name>whiteboard.png</file-name></resource-attributes></resource>")


def test_enex_notes_become_markdown_with_dates_tags_and_notebook(engine, tmp_path: Path) -> None:
    vid = engine.test_vault_id
    path = tmp_path / "Work notes.enex"
    first = enex_note("週會 Weekly", "<div><b>Decisions</b></div><ul><li>ship it</li></ul>"
                      '<en-media hash="abc" type="image/png"/><en-crypt cipher="AES">c2VjcmV0</en-crypt>',
                      extra=RESOURCE)
    second = enex_note("Reading", "<h1>Books</h1><p>Dune</p>", created="20231203T120000Z")
    path.write_text(enex(first + second), encoding="utf-8")
    report = engine.import_notes(vid, "evernote", path)
    items = _by_note(report)
    assert {n: i.status for n, i in items.items()} == {"週會 Weekly": "created", "Reading": "created"}
    assert "1 encrypted section" in items["週會 Weekly"].reason and "whiteboard.png" in items["週會 Weekly"].reason
    weekly = engine.read_record(vid, items["週會 Weekly"].id)
    assert "**Decisions**" in weekly.body and "- ship it" in weekly.body and "c2VjcmV0" not in weekly.body
    assert "[encrypted section not imported]" in weekly.body and "attachment not imported: image/png" in weekly.body
    assert set(weekly.tags) == {"work", "會議"}
    assert weekly.metadata["notebook"] == "Work notes" and weekly.metadata["source_created"] == "2023-12-01T12:00:00Z"
    assert weekly.metadata["source_updated"] == "2023-12-02T08:00:00Z" and weekly.metadata["source_app"] == "evernote"
    assert "# Books" in engine.read_record(vid, items["Reading"].id).body

    assert {i.status for i in engine.import_notes(vid, "evernote", path).items} == {"unchanged"}
    path.write_text(enex(first + second.replace("Dune", "Dune Messiah")), encoding="utf-8")
    changed = _by_note(engine.import_notes(vid, "evernote", path))
    assert changed["Reading"].status == "updated" and changed["Reading"].revision == 2
    assert len(engine.list_records(vid)) == 2


def test_a_broken_enex_keeps_the_notes_before_the_fault(engine, tmp_path: Path) -> None:
    vid = engine.test_vault_id
    path = tmp_path / "cut.enex"
    text = enex(enex_note("Kept", "<p>one</p>") + enex_note("Cut", "<p>two</p>", created="20231205T000000Z"))
    path.write_text(text[: text.index("Cut") + 20], encoding="utf-8")  # a download that stopped half-way
    items = engine.import_notes(vid, "evernote", path).items
    assert [(i.note, i.status) for i in items if i.status != "skipped"] == [("Kept", "created")]
    fault = [i for i in items if i.status == "skipped"]
    assert len(fault) == 1 and "not well-formed XML" in fault[0].reason and "1 notes" in fault[0].reason
    (tmp_path / "other.xml").write_text("<rss><item/></rss>", encoding="utf-8")
    with pytest.raises(InputRefusedError) as bad:
        engine.import_notes(vid, "evernote", tmp_path / "other.xml")
    assert bad.value.code == "bad_export"


def test_cli_import_dry_run_writes_nothing_and_keeps_the_json_contract(tmp_path: Path, vault) -> None:
    home = tmp_path / "home"
    folder = obsidian_vault(tmp_path)
    dry = call_cli(home, "--json", "import", "obsidian", "notes", str(folder), "--dry-run")
    assert dry.code == 0, dry.stdout + dry.stderr
    assert dry.json["dry_run"] is True and {i["status"] for i in dry.json["items"]} == {"created", "skipped"}
    assert call_cli(home, "--json", "memory", "list", "notes").json["records"] == []
    text = call_cli(home, "import", "obsidian", "notes", str(folder))
    assert text.code == 0 and "4 created" in text.stdout and "attachments/plan.png" in text.stdout
    wrong = call_cli(home, "--json", "import", "evernote", "notes", str(tmp_path / "missing.enex"))
    assert wrong.code != 0 and "Traceback" not in wrong.stderr and set(wrong.json["error"]) == {"code", "message"}


def _joplin_item(title: str | None, body: str | None, **props: str) -> str:
    head = f"{title}\n\n{body}\n\n" if title is not None else ""
    return head + "\n".join(f"{k}: {v}" for k, v in props.items())


def jex(root: Path) -> Path:
    """A JEX file as Joplin writes one: a tar of serialized items and resources/."""
    import io
    import tarfile

    items = {
        "f1": _joplin_item("工作 Work", "", id="f1", parent_id="", type_="2"),
        "f2": _joplin_item("Meetings", "", id="f2", parent_id="f1", type_="2"),
        "n1": _joplin_item("週會", "決定下週發布。\n\n- ship it", id="n1", parent_id="f2",
                           created_time="2024-01-02T03:04:05.000Z", updated_time="2024-01-03T03:04:05.000Z",
                           user_created_time="2024-01-01T00:00:00.000Z", is_todo="0", type_="1"),
        "t1": _joplin_item("urgent", "", id="t1", type_="5"),
        "nt1": _joplin_item(None, None, id="nt1", note_id="n1", tag_id="t1", type_="6"),
        "r1": _joplin_item("whiteboard.png", "", id="r1", mime="image/png", type_="4"),
    }
    path = root / "export.jex"
    with tarfile.open(path, "w") as tar:
        for name, text in [*((f"{k}.md", v) for k, v in items.items()), ("resources/r1.png", "\x89PNG")]:
            data = text.encode("utf-8")
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def test_joplin_jex_notes_keep_notebook_path_tags_and_dates(engine, tmp_path: Path) -> None:
    vid = engine.test_vault_id
    path = jex(tmp_path)
    report = engine.import_notes(vid, "joplin", path)
    created = [i for i in report.items if i.status == "created"]
    assert [i.note for i in created] == ["工作 Work/Meetings/週會"]
    assert {i.reason for i in report.items if i.status == "skipped"} == {"an attachment (resource), not a note"}
    note = engine.read_record(vid, created[0].id)
    assert note.title == "週會" and note.body.startswith("決定下週發布。") and note.tags == ("urgent",)
    assert note.metadata["notebook"] == "工作 Work/Meetings" and note.metadata["joplin_id"] == "n1"
    assert note.metadata["source_created"] == "2024-01-01T00:00:00.000Z"
    assert {i.status for i in engine.import_notes(vid, "joplin", path).items} == {"unchanged", "skipped"}
    (tmp_path / "bad.jex").write_bytes(b"not a tar at all" * 40)
    with pytest.raises(InputRefusedError) as bad:
        engine.import_notes(vid, "joplin", tmp_path / "bad.jex")
    assert bad.value.code == "bad_export"


def test_a_killed_import_resumes_without_duplicates(engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import threading

    from memories_tui.engine.importers import common
    from memories_tui.errors import CancelledError

    vid = engine.test_vault_id
    monkeypatch.setattr(common, "BATCH_NOTES", 2)  # small batches, so the stop lands between two of them
    path = tmp_path / "Many.enex"
    path.write_text(enex("".join(enex_note(f"Note {n}", f"<p>text {n}</p>", created=f"2023120{n}T000000Z")
                                 for n in range(1, 8))), encoding="utf-8")
    stop = threading.Event()

    def kill_after_five(p) -> None:
        if p.done == 5:
            stop.set()

    with pytest.raises(CancelledError):
        engine.import_notes(vid, "evernote", path, progress=kill_after_five, cancel=stop)
    assert len(engine.list_records(vid)) == 4  # two whole batches were written
    resumed = engine.import_notes(vid, "evernote", path)
    assert sorted(i.status for i in resumed.items) == ["created"] * 3 + ["unchanged"] * 4
    assert len(engine.list_records(vid)) == 7


def test_bear_textbundles_give_title_inline_tags_and_dates(engine, tmp_path: Path) -> None:
    import json

    vid = engine.test_vault_id
    export = tmp_path / "Bear"
    bundle = export / f"{NFD}.textbundle"
    (bundle / "assets").mkdir(parents=True)
    (bundle / "text.md").write_text("# 咖啡 Coffee\n\nBeans from #shop/kyoto and #morning routine# notes.\n"
                                    "```\n#not-a-tag\n```\n", encoding="utf-8")
    (bundle / "assets" / "cup.jpg").write_bytes(b"\xff\xd8\xff")
    (bundle / "info.json").write_text(json.dumps({"version": 2, "net.shinyfrog.bear": {
        "creationDate": "2024-02-01T08:00:00Z", "modificationDate": "2024-02-02T08:00:00Z"}}), encoding="utf-8")
    with zipfile.ZipFile(export / "Packed.textpack", "w") as z:
        z.writestr("Packed.textbundle/text.md", "No heading, just #packed text.\n")
        z.writestr("Packed.textbundle/info.json", "{}")
    (export / "Broken.textpack").write_bytes(b"PK\x03\x04 cut")
    report = engine.import_notes(vid, "bear", export)
    items = _by_note(report)
    coffee = engine.read_record(vid, items[unicodedata.normalize("NFC", f"{NFD}.textbundle")].id)
    assert coffee.title == "咖啡 Coffee" and coffee.tags == ("shop/kyoto", "morning routine")
    assert coffee.metadata["source_created"] == "2024-02-01T08:00:00Z" and coffee.metadata["source_app"] == "bear"
    packed = engine.read_record(vid, items["Packed.textpack"].id)
    assert packed.title == "Packed" and packed.tags == ("packed",)
    skipped = {n: i.reason for n, i in items.items() if i.status == "skipped"}
    assert "not a readable TextBundle" in skipped["Broken.textpack"] and any("cup.jpg" in n for n in skipped)
    assert {i.status for i in engine.import_notes(vid, "bear", export).items} == {"unchanged", "skipped"}


def test_hostile_enex_entities_are_refused_not_expanded(engine, tmp_path: Path) -> None:
    vid = engine.test_vault_id
    secret = tmp_path / "secret.txt"
    secret.write_text("secretword", encoding="utf-8")
    laughs = "".join(f'<!ENTITY e{n} "{f"&e{n - 1};" * 10}">' for n in range(1, 9))
    for name, doctype, title in (("xxe", f'<!ENTITY x SYSTEM "file://{secret}">', "&x;"),
                                 ("laughs", '<!ENTITY e0 "aaaaaaaaaa">' + laughs, "&e8;")):
        path = tmp_path / f"{name}.enex"
        path.write_text(f'<?xml version="1.0"?>\n<!DOCTYPE en-export [{doctype}]>\n'
                        f"<en-export><note><title>{title}</title><content>x</content></note></en-export>\n",
                        encoding="utf-8")
        items = engine.import_notes(vid, "evernote", path).items
        assert [i.status for i in items] == ["skipped"] and "not well-formed XML" in items[0].reason
    assert engine.list_records(vid) == []
