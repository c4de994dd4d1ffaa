"""Every result type: its wire JSON reads back into an equal value, through real JSON text.

The resident engine sends results as `to_wire()` JSON and its client rebuilds them with
`from_json`; a field that does not survive the trip would change what a front end shows. The
printed forms (`--json`, MCP) are checked against their committed outputs elsewhere
(tests/integration/test_json_golden.py, test_mcp_schemas.py); here, what each form leaves out.
"""

from __future__ import annotations

import importlib
import json
import pkgutil
from pathlib import Path

import pytest

import memories_tui
from memories_tui import errors
from memories_tui.access.results import AskResult, ReadResult, RetrieveResult, SearchResult
from memories_tui.daemon.status import ClientInfo, DaemonStatus, GrantInfo, HeldVault
from memories_tui.egress import SentChunk
from memories_tui.engine import (
    Answer,
    BackupProgress,
    BackupReport,
    CacheFigures,
    ChunkRef,
    Citation,
    CitationSpan,
    EgressEntry,
    EgressReport,
    EmbedProgress,
    ExportedFile,
    ExportReport,
    ExtractedSentence,
    FileProgress,
    FileResult,
    HomeReport,
    ImportItem,
    ImportReport,
    IndexReport,
    IngestProgress,
    IngestResult,
    InstallProgress,
    InstallReport,
    Jsonable,
    Note,
    Quote,
    Record,
    RecordHit,
    RestoreReport,
    SearchHit,
    SearchResponse,
    Source,
    SourceInfo,
    SourceSpec,
    SourceSyncItem,
    SourceSyncReport,
    StatusReport,
    VaultInfo,
    VaultProblem,
    VaultScan,
    from_json,
    json_of,
)
from memories_tui.skill.inject import InjectReport, InjectResult
from memories_tui.sync.registry import TargetEntry
from memories_tui.sync.types import Conflict, ConflictRevision, DeviceInfo, JoinReport, SyncProgress, SyncReport

HIT = SearchHit(citation="S1", record_id="a1b2", revision=3, chunk_hash="h" * 64, byte_start=7, byte_end=40,
                score=0.123456789, title="Sourdough 酸種", text="Feed the starter 每天兩次", kind="card",
                scores={"bm25": 1.23456789, "vector": None, "fusion": 0.5, "rerank": 0.25}, key=12,
                terms=("starter", "每天"))
SOURCE = Source("S1", "a1b2", 3, 7, 40, "Sourdough", chunk_hash="h" * 64, text="Feed the starter", kind="card")
ANSWER = Answer("extractive", "Feed the starter. [S1]", citations=[Citation.of(SOURCE)],
                quotes=[Quote("S1", "Feed", True, "a1b2", 7, 11), Quote("S1", "missing", False)],
                sentences=[ExtractedSentence("S1", "Feed the starter.", "a1b2", 3, 7, 24, 0.75)],
                sources=[SOURCE], notes=[Note("Extractive answer: sentences copied from your notes, not generated.",
                                              "extractive"), Note("a plain remark")])
STATUS = StatusReport(
    vault_id="v1", backend="local-onnx", profile="embeddinggemma", directory="/m", installed=False, pinned=None,
    model="not installed", problem="EmbeddingGemma is not installed", vector_space=None, dimensions=None,
    max_tokens=2048, chunks=9, records_indexed=8, embedded=0, missing=9, truncated=0,
    limits=CacheFigures(10000, 16.0, 32.0, 2), usage=CacheFigures(9, 0.003, 0.0, 1), last_build=1.7e9,
    last_build_seconds=0.25, cache_repairs=["emb:x"])

EGRESS = EgressEntry(seq=5, time="2026-01-01T00:00:00Z", host="127.0.0.1:8080", purpose="rerank", loopback=True,
                     chunks=(SentChunk("a1b2", 3, "h" * 64), SentChunk(None, None, "g" * 64)), bytes_sent=120,
                     bytes_received=40, outcome="ok", attempts=1, client="mcp:claude-code")
HELD = HeldVault("v1", "notes", 1.7e9, 1.7e9 + 5, 1.7e9 + 3600, None, 3594.987654)
CLIENT = ClientInfo(4242, "mcp", 3, "mcp_call", 1.7e9 + 5, None)
GRANT = GrantInfo(4242, ["v1"], ["notes"], 1.7e9, None, False, [])

FOLDER = SourceSpec("1a2b3c4d", "/home/x/Notes", ["*.md"], ["drafts/*"], "2026-12-04T17:00:00Z")
SYNCED = SyncReport("v1", "/sync/folder", "0123456789abcdef", 2, 1, 2, 534, 3, 4, 2048, 2, 1)
SAMPLES: list[Jsonable] = [
    HIT,
    SearchResponse("v1", "starter", "hybrid", "all", [HIT], ["starter"], fallback="bm25",
                   notes=[Note("Vector ranking left out", "vector_left_out")]),
    ChunkRef("h" * 64, 7, 40, 1.5),
    RecordHit("a1b2", 3, "Sourdough", 2.5, 1.0, "…the starter…", [ChunkRef("h" * 64, 7, 40, 1.5)]),
    SOURCE, Citation.of(SOURCE), Quote("S1", "Feed", True, "a1b2", 7, 11),
    ExtractedSentence("S1", "Feed the starter.", "a1b2", 3, 7, 24, 0.75), ANSWER, Note("text", "uncited"),
    Record("a1b2", 2, "memory", "Garden", "Plant tomatoes.", ("garden", "花園"), {"source": "x.md", "bytes": 3},
           "2026-01-01T00:00:00Z", "2026-01-02T00:00:00Z"),
    Record("a1b3", 1, "asset", "Scan", "", (), {}, "2026-01-01T00:00:00Z", "2026-01-01T00:00:00Z", b"\x00\xff bytes"),
    VaultInfo("v1", "notes", Path("/home/x/vaults/v1.mvault"), 11),
    VaultScan([VaultInfo("v1", "notes", Path("/v1.mvault"), 1)], [VaultProblem("bad.mvault", "vault_invalid", "Not a vault.")]),
    VaultProblem("bad.mvault", "vault_invalid", "Not a vault."),
    HomeReport(Path("/home/x"), Path("/home/x/config.toml"), True),
    IngestProgress("read", 1, 2), IngestResult("a.md", "a1b2", 1, "created", 3, "A"),
    IngestResult("b.md", None, None, "unchanged", 0),
    IngestProgress("read", 2, 2, "notes/b.md"), IngestResult("x.png", None, None, "skipped", 0, "", "not a text file"),
    CacheFigures(10000, 16.0, 32.0, 2), STATUS,
    IndexReport(embedded=3, reused=2, missing=1, truncated=1, seconds=1.23456), EmbedProgress(3, 10, 1234.5, None),
    FileProgress("tokenizer.json", 10, 20, "downloading"),
    InstallProgress([FileProgress("tokenizer.json", 10, 20, "downloading")], 10, 20, 5.5, 2.0, "tokenizer.json"),
    FileResult("tokenizer.json", 20, "ab" * 32, "failed", "hash mismatch"),
    InstallReport(Path("/models"), [FileResult("tokenizer.json", 20, "ab" * 32, "reused")], True),
    RetrieveResult("v1", "starter", "hybrid", "any", [HIT], False, 0, "bm25", [Note("n")]),
    SearchResult("v1", "starter", [RecordHit("a1b2", 3, "S", 2.5, 0.5, "…", [])], True, 2),
    ReadResult("v1", "a1b2", 3, [1, 2, 3], "memory", "S", ["t"], "c", "u", 100, 0, 50, "text", True),
    AskResult("v1", "How?", ANSWER),
    InjectResult("codex", "server", "/h/.codex/config.toml", "added", None, "", {"command": "memories"}),
    InjectReport(False, [InjectResult("cursor", "skill", None, "skipped")], ["restart the client"]),
    SentChunk("a1b2", 3, "h" * 64), EGRESS, EgressReport("v1", "notes", "2026-01-01", [EGRESS], [4], [2]),
    BackupProgress("copy", 3, 10),
    BackupReport("v1", "notes", Path("/b/notes-20260101T000000Z.mvault"), 4096, 2, 3, "full", "change 4",
                 [Path("/b/old.mvault")], 0.1234567),
    RestoreReport("v1", "notes", Path("/h/vaults/v1.mvault"), Path("/b/x.mvault"), True, 2, Path("/h/kept.mvault"),
                  2, 3, "change 4"),
    RestoreReport("v2", "copy", Path("/h/vaults/v2.mvault"), Path("/b/x.mvault"), False, 0, None, 2, 3, "change 4"),
    ExportReport("v1", "notes", Path("/out"), [ExportedFile("memory/garden.md", "a1b2", 2, "memory")], 1, 0.25,
                 {"memory": 1}),
    ExportedFile("memory/garden.md", "a1b2", 2, "memory"),
    CitationSpan(3, 12, ("S1", "S2")),
    HELD, CLIENT, GRANT,
    DaemonStatus("daemon", 42, "/home/x", 1.7e9, 12.345678, 30.0, [HELD], [CLIENT], [GRANT], 9, 123456, True),
    SearchResponse("v1", "starter", "bm25", "any", [HIT], ["starter"]),
    FOLDER, SourceSyncItem("trip/筆記.md", "gone", "a1b2", 3, "筆記"), ImportItem("a.md", "unchanged", "a1b2", 1, "A"),
    SourceInfo(FOLDER, 3, ["old/筆記.md"], True),
    SourceSyncReport(FOLDER, [SourceSyncItem("a.md", "moved", "a1b2", 2, "A"), SourceSyncItem("x.png", "skipped", reason="not text")]),
    ImportReport("evernote", "/x/Notes.enex", False, [ImportItem("Tea", "created", "a1b2", 1, "Tea", "1 attachment(s)"),
                                                       ImportItem("Bad", "skipped", reason="not XML")]),
    SYNCED,
    JoinReport("v1", "notes 筆記", Path("/h/vaults/v1.mvault"), SYNCED),
    TargetEntry("v1", "s3://bucket/prefix", "http://127.0.0.1:8333", "2026-12-04T17:00:00Z", None, 1),
    Conflict("a1b2", "Sourdough", [ConflictRevision("r" * 24, False, "Sourdough 酸種", "on the laptop"),
                                   ConflictRevision("d" * 24, True, None, None)]),
    ConflictRevision("r" * 24, False, "t", "b"),
    DeviceInfo("0123456789abcdef", 7, "2026-12-04T17:00:00Z", True, 7),
    SyncProgress("pull", 3, 9, 4096),
]


def _all_result_types() -> set[type]:
    for module in pkgutil.walk_packages(memories_tui.__path__, "memories_tui."):
        if not module.name.startswith(("memories_tui.tui", "memories_tui.__main__")):
            importlib.import_module(module.name)
    found: set[type] = set()
    todo = list(Jsonable.__subclasses__())
    while todo:
        cls = todo.pop()
        found.add(cls)
        todo.extend(cls.__subclasses__())
    return found


@pytest.mark.parametrize("value", SAMPLES, ids=lambda v: type(v).__name__)
def test_wire_json_reads_back_into_an_equal_value(value: Jsonable) -> None:
    text = json.dumps(value.to_wire(), ensure_ascii=False, allow_nan=False)
    assert type(value).from_json(json.loads(text)) == value


def test_every_result_type_has_a_round_trip_case() -> None:
    assert _all_result_types() <= {type(v) for v in SAMPLES}


def test_printed_forms_leave_out_internals_and_round_for_people() -> None:
    printed = HIT.to_json()
    assert list(printed) == ["citation", "asset_id", "revision", "chunk_hash", "byte_start", "byte_end", "score",
                             "title", "text", "kind", "scores"]  # no index key, no query terms
    assert printed["score"] == 0.123457 and printed["scores"]["bm25"] == 1.234568
    assert HIT.to_wire()["score"] == 0.123456789 and HIT.to_wire()["terms"] == ["starter", "每天"]
    assert "id" in HIT.to_json("mcp") and "asset_id" not in HIT.to_json("mcp")
    assert SearchHit.from_json(HIT.to_json("mcp")).record_id == "a1b2"  # every form reads back
    answer = ANSWER.to_json()
    assert answer["notes"][0].startswith("Extractive answer") and answer["unverified_quotes"] is True
    assert list(answer)[:6] == ["status", "answer", "citation_spans", "citations", "quotes", "unverified_quotes"]
    assert answer["citation_spans"] == [{"start": 18, "end": 22, "labels": ["S1"]}]  # derived from the text
    assert "pinned" not in STATUS.to_json() and STATUS.to_json()["problem"]
    assert json_of([Note("a")]) == ["a"] and from_json(list[Note], ["a"]) == [Note("a")]
    asset = SAMPLES[11]
    assert isinstance(asset, Record) and asset.to_json()["bytes"] == 8 and "data" not in asset.to_json()
    assert "path" not in VaultInfo("v", "n", Path("/p")).to_json()
    assert SAMPLES[1].to_json()["fallback"] == "bm25" and "fallback" not in SAMPLES[-1].to_json()  # only when taken
    assert list(AskResult("v1", "How?", ANSWER).to_json("mcp"))[:4] == ["vault_id", "question", "status", "answer"]
    report = InjectReport(True, [InjectResult("codex", "server", None, "unchanged")], [])
    assert list(report.to_json()) == ["dry_run", "server_name", "targets", "notes"]
    egress = EGRESS.to_json()
    assert egress["records"] == ["a1b2"] and egress["chunks"][0] == {"id": "a1b2", "revision": 3, "chunk_hash": "h" * 64}
    assert list(egress)[:6] == ["seq", "time", "host", "purpose", "loopback", "records"]
    assert EgressEntry.from_json(egress) == EGRESS  # the computed key is ignored on the way back
    assert ExportedFile("a.md", "i", 1, "memory").to_json()["file"] == "a.md"
    assert report.to_json()["targets"][0] == {"client": "codex", "what": "server", "path": None, "status": "unchanged",
                                               "backup": None, "message": "", "entry": None}


@pytest.mark.parametrize("bad", [{"citation": "S1"}, {"revision": "3"}, [], None])
def test_json_that_does_not_fit_is_refused_clearly(bad: object) -> None:
    data = HIT.to_wire() if not isinstance(bad, dict) else {**HIT.to_wire(), **bad}
    if isinstance(bad, dict) and "citation" in bad:
        del data["citation"]
    with pytest.raises(ValueError):
        SearchHit.from_json(data if isinstance(bad, dict) else bad)


@pytest.mark.parametrize("error", [
    errors.UsageError("Give a query."), errors.InputRefusedError("Bad kind.", code="bad_kind"),
    errors.ModelNotInstalledError("No model."), errors.AnswerRejectedError("Bad JSON."),
    errors.CancelledError("Stopped."), errors.LockedError("Locked."), errors.MemoriesError("Plain.", code="odd_one"),
])
def test_errors_read_back_as_their_own_class(error: errors.MemoriesError) -> None:
    back = errors.error_from_json(json.loads(json.dumps(error.to_wire())))
    assert (type(back), back.code, back.message, back.exit_code) == (type(error), error.code, error.message,
                                                                      error.exit_code)
    printed = errors.error_from_json(error.to_json())  # the --json form: the class is found by its code
    assert printed.code == error.code and printed.exit_code == error.exit_code
