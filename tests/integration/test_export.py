"""`vault export`: Markdown with front matter, safe unique names, excluded kinds only on
request, and an export → `rag ingest` round trip with the same searchable text."""

from __future__ import annotations

import os
import re
import threading
import unicodedata
from pathlib import Path

import pytest

from memories_tui.engine import Engine
from memories_tui.errors import CancelledError
from tests.helpers.cli import run_cli
from tests.helpers.faults import file_size_limit, obey_permissions, run_cli_as
from tests.helpers.vaults import PASS, open_vault

QUERIES = ["咖啡", "sourdough", "混合排序 hybrid", "hand drip 手沖", "bread starter", "向量 vector", "note",
           "旅行", "tags", "lantern"]
WINDOWS_DEVICES = {"CON", "PRN", "AUX", "NUL", *(f"{port}{digit}" for port in ("COM", "LPT")
                                                 for digit in "0123456789¹²³")}
ZH_EN = [  # (title, body, tags): names that clash, need cleaning, or could break front matter
    ("混合搜尋 Hybrid search", "混合搜尋把 BM25 與向量排名融合。Hybrid search fuses both lists.\n", ("搜尋", "bm25")),
    ("hybrid SEARCH", "Case differs from another title; 大小寫不同。", ()),
    ("Hybrid search", "Same name as above on a case-insensitive disk.", ("dup",)),
    ('a/b\\c:d*e?f"g<h>i|j', "Every character Windows forbids. 每個 Windows 禁用的字元。", ()),
    ("CON", "A reserved device name on Windows.", ()),
    ("COM¹", "Windows reserves COM and LPT with a superscript digit too.", ()),
    ("lpt³ .notes", "Reserved as well: Windows ignores the space before the dot.", ()),
    ("?", "A title that cleans to nothing; 沒有可用的標題。", ()),
    ("   ...  ", "Only dots and spaces.", ()),
    ("長" * 120, "A title longer than any file name may be. " + "很長的標題。" * 5, ()),
    ("café ☕ emoji 🚀", "Unicode in the name: 咖啡 café.", ('quote " and \\ backslash', "line\u2028sep")),
    ("front matter inside", "---\nid: fake\nrevision: 9\nkind: card\n---\nThe body itself starts with a fence.\n", ()),
    ("crlf", "Windows line ends\r\nsecond line\r\n", ()),
    ("no newline", "ends without one", ("x",)),
    ("lantern", "The lantern release ships in May.", ("release", "五月")),
]


def _searchable(engine: Engine, vault_id: str) -> dict[str, tuple[str, tuple[str, ...], object]]:
    """title → (body, tags, source): what the index is built from, keyed by title."""
    out = {}
    for r in engine.list_records(vault_id):
        if r.kind in ("memory", "card"):
            assert r.title not in out, r.title
            out[r.title] = (r.body, r.tags, r.metadata.get("source"))
    return out


def _results(engine: Engine, vault_id: str) -> list[list[tuple[str, str, float]]]:
    return [[(h.title, h.chunk_hash, round(h.score, 9)) for h in engine.search(vault_id, q, limit=20).results]
            for q in QUERIES]


@pytest.mark.parametrize("dataset", ["samples", "zh-en"])
def test_export_then_ingest_gives_the_same_searchable_text(tmp_path, cheap_kdf, dataset):
    source, vault_id = open_vault(tmp_path / "a")
    target, other = open_vault(tmp_path / "b")
    folder = tmp_path / "export"
    try:
        if dataset == "samples":
            source.import_samples(vault_id)
            source.add_record(vault_id, kind="memory", title="旅行 note", body="京都的咖啡 and a note.", tags=["旅行"])
        else:
            for title, body, tags in ZH_EN:
                source.add_record(vault_id, kind="card" if tags else "memory", title=title, body=body, tags=tags)
        report = source.export_vault(vault_id, folder)
        files = sorted(folder.glob("*.md"))
        assert len(files) == len(report.files) == len(source.list_records(vault_id))
        results = target.ingest(other, files)
        assert {r.status for r in results} == {"created"}
        assert _searchable(target, other) == _searchable(source, vault_id)
        assert _results(target, other) == _results(source, vault_id)
        assert any(_results(source, vault_id))  # the queries do find something
    finally:
        source.close()
        target.close()


def test_names_are_safe_unique_and_the_front_matter_is_complete(tmp_path, cheap_kdf):
    engine, vault_id = open_vault(tmp_path / "a")
    try:
        made = {engine.add_record(vault_id, kind="memory", title=t, body=b, tags=tags).id: (t, b, tags)
                for t, b, tags in ZH_EN}
        report = engine.export_vault(vault_id, tmp_path / "export")
    finally:
        engine.close()
    names = [f.path for f in report.files]
    keys = [unicodedata.normalize("NFC", n).casefold() for n in names]
    assert len(set(keys)) == len(keys) == len(ZH_EN)
    for name in names:
        stem = name.removesuffix(".md")
        assert not re.search(r'[<>:"/\\|?*\x00-\x1f]', stem) and stem == stem.strip(" .") and stem
        assert len(name.encode()) <= 255 and stem.split(".")[0].rstrip().upper() not in WINDOWS_DEVICES
    for item in report.files:
        text = (tmp_path / "export" / item.path).read_bytes().decode("utf-8")
        title, body, tags = made[item.id]
        assert text.startswith(f'---\nid: "{item.id}"\nrevision: 1\nkind: "memory"\n')
        for key in ("title", "tags", "created", "updated"):
            assert f"\n{key}: " in text.split("\n---\n", 1)[0]
        assert text.endswith(body) and text.split("\n---\n", 1)[1] == body
        assert (tmp_path / "export" / item.path).stat().st_mode & 0o777 == 0o600


def _with_excluded(home: Path, tmp_path: Path) -> dict[str, str]:
    assert run_cli(home, "vault", "create", "notes", "--json").code == 0
    run_cli(home, "memory", "add", "notes", "--title", "public", "--text", "an ordinary note")
    run_cli(home, "memory", "add", "notes", "--title", "diary", "--kind", "private", "--text", "PRIVATE-CANARY")
    run_cli(home, "memory", "add", "notes", "--title", "bank", "--kind", "credential", "--text", "CRED-CANARY")
    scan = tmp_path / "scan.pdf"
    scan.write_bytes(b"%PDF-1.4 binary \x00\xff asset")
    assert run_cli(home, "asset", "add", "notes", str(scan)).code == 0
    return {"scan": str(scan)}


def test_excluded_kinds_only_on_request_and_after_confirmation(tmp_path, cheap_kdf):
    home = tmp_path / "home"
    made = _with_excluded(home, tmp_path)
    plain = run_cli(home, "vault", "export", "notes", str(tmp_path / "plain"), "--json")
    assert plain.code == 0 and plain.json["excluded_skipped"] == 3
    written = b"".join(p.read_bytes() for p in (tmp_path / "plain").rglob("*") if p.is_file())
    assert b"CANARY" not in written and b"%PDF" not in written
    unconfirmed = run_cli(home, "vault", "export", "notes", str(tmp_path / "all"), "--include-excluded", "--json")
    assert unconfirmed.code == 2 and unconfirmed.json["error"]["code"] == "usage_error"
    assert not (tmp_path / "all").exists() or not any((tmp_path / "all").iterdir())
    everything = run_cli(home, "vault", "export", "notes", str(tmp_path / "all"), "--include-excluded", "--yes",
                         "--json")
    assert everything.code == 0, everything.stderr
    files = {f["file"]: f["kind"] for f in everything.json["files"]}
    assert files == {"public.md": "memory", "private/diary.md": "private", "credential/bank.md": "credential",
                     "assets/scan.pdf": "asset"}
    assert (tmp_path / "all" / "assets" / "scan.pdf").read_bytes() == Path(made["scan"]).read_bytes()
    assert 'kind: "credential"' in (tmp_path / "all" / "credential" / "bank.md").read_text()


def test_folder_rules_non_empty_collisions_and_a_file(tmp_path, cheap_kdf):
    home = tmp_path / "home"
    _with_excluded(home, tmp_path)
    folder = tmp_path / "out"
    folder.mkdir()
    (folder / "Public.md").write_text("mine, not the export's")
    refused = run_cli(home, "vault", "export", "notes", str(folder), "--json")
    assert refused.json["error"]["code"] == "folder_not_empty"
    clash = run_cli(home, "vault", "export", "notes", str(folder), "--force", "--json")
    assert clash.code == 1 and clash.json["error"]["code"] == "export_name_collision"
    assert "public.md" in clash.json["error"]["message"]
    assert sorted(p.name for p in folder.iterdir()) == ["Public.md"]  # nothing written, nothing replaced
    (folder / "Public.md").rename(folder / "keep.txt")
    beside = run_cli(home, "vault", "export", "notes", str(folder), "--force", "--json")
    assert beside.code == 0 and sorted(p.name for p in folder.iterdir()) == ["keep.txt", "public.md"]
    assert (folder / "keep.txt").read_text() == "mine, not the export's"
    blocker = tmp_path / "file.txt"
    blocker.write_text("x")
    assert run_cli(home, "vault", "export", "notes", str(blocker), "--json").json["error"]["code"] == "not_a_folder"


def _big_last(home: Path) -> None:
    """Small notes first, then one note larger than the file size limit below."""
    engine, vault_id = open_vault(home)
    try:
        for i in range(3):
            engine.add_record(vault_id, kind="memory", title=f"small {i}", body=f"note {i} 筆記")
        engine.add_record(vault_id, kind="credential", title="bank", body="PIN 2468")
        engine.add_record(vault_id, kind="memory", title="big", body="long lines of text\n" * 9000)
    finally:
        engine.close()


def test_export_onto_a_full_disk_takes_back_what_it_wrote(tmp_path, cheap_kdf):
    """The child cannot grow a file past 100 KB (RLIMIT_FSIZE: writes fail as on a full disk):
    the small notes are written, the big one fails, and the folder is left as it was found."""
    home = tmp_path / "home"
    _big_last(home)
    fresh, kept = tmp_path / "fresh", tmp_path / "kept"
    kept.mkdir()
    (kept / "mine.txt").write_text("not the export's")
    for folder, extra in ((fresh, ()), (kept, ("--force",))):
        result = run_cli_as(home, "vault", "export", "notes", str(folder), "--include-excluded", "--yes", "--json",
                            *extra, preexec=file_size_limit(100_000))
        assert result.code == 1 and result.json["error"]["code"] == "disk_full", result.stdout + result.stderr
    assert not fresh.exists()  # made by the export, removed with what it wrote
    assert [p.name for p in kept.rglob("*")] == ["mine.txt"] and (kept / "mine.txt").read_text() == "not the export's"
    ok = run_cli(home, "vault", "export", "notes", str(fresh), "--json")
    assert ok.code == 0 and len(ok.json["files"]) == 4


def test_export_into_an_unwritable_folder_or_cancelled_leaves_nothing(tmp_path, cheap_kdf):
    home = tmp_path / "home"
    _big_last(home)
    locked = tmp_path / "ro"
    locked.mkdir()
    os.chmod(locked, 0o500)
    try:
        result = run_cli_as(home, "vault", "export", "notes", str(locked), "--json", preexec=obey_permissions)
        deeper = run_cli_as(home, "vault", "export", "notes", str(locked / "sub"), "--json", preexec=obey_permissions)
    finally:
        os.chmod(locked, 0o700)
    assert result.code == 1 and result.json["error"]["code"] == "folder_unwritable", result.stdout
    assert deeper.code == 1 and deeper.json["error"]["code"] == "folder_unwritable", deeper.stdout
    assert list(locked.iterdir()) == []
    engine = Engine.open(home)
    try:
        vault_id = engine.resolve_vault("notes").vault_id
        engine.unlock(vault_id, PASS)
        stop = threading.Event()
        with pytest.raises(CancelledError, match="removed"):
            engine.export_vault(vault_id, tmp_path / "cancelled", include_excluded=True, cancel=stop,
                                progress=lambda done, total: stop.set() if done == 2 else None)
    finally:
        engine.close()
    assert not (tmp_path / "cancelled").exists()
