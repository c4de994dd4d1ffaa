"""`--json` output of read-only calls, byte for byte, against a committed record of it.

Scripts and AI clients parse this JSON, and the resident engine sends the same JSON over its
socket: a refactor of the result types must not change one byte of it. The vault is a
committed file (fixed ids, revisions and dates), copied into a fresh home for every run.

Two things vary from run to run and are replaced before comparing: the temporary home's
path and the clock (when and how fast the index was built). Nothing else is touched.

To record the outputs again after an intended change of output:
    MEMORIES_JSON_GOLDEN_UPDATE=1 .venv/bin/pytest tests/integration/test_json_golden.py
and review the diff of tests/golden/json/outputs.json. `MEMORIES_JSON_GOLDEN_REBUILD=1` also
makes a new vault (new ids: every output changes).
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest

from tests.helpers.cli import call_cli

GOLDEN = Path(__file__).parents[1] / "golden" / "json"
VAULT = GOLDEN / "golden.mvault"
OUTPUTS = GOLDEN / "outputs.json"
PASSPHRASE = "golden json 金庫"
CLOCK = re.compile(r'"(last_build|last_build_seconds|seconds)": [0-9.e+-]+')


def _build_vault(home: Path) -> None:
    """The vault the outputs were recorded from (run only with MEMORIES_JSON_GOLDEN_REBUILD)."""
    from memories_tui.engine import Engine, NewRecord

    engine = Engine.open(home)
    info = engine.create_vault("golden", PASSPHRASE)
    engine.unlock(info.vault_id, PASSPHRASE)
    vid = info.vault_id
    engine.import_samples(vid)
    engine.add_records(vid, [
        NewRecord("memory", "Dentist", "Dentist on Tuesday at 9, bring the insurance card.", ("health",), {}),
        NewRecord("memory", "會議室", "週四下午三點在三樓會議室開會，記得帶筆電。", ("工作", "meeting"), {}),
        NewRecord("private", "Safe code", "The safe code is 4711.", (), {}),
        NewRecord("credential", "Router", "admin / hunter2", (), {}),
    ])
    garden = engine.add_record(vid, kind="memory", title="Garden", body="Plant tomatoes in May.")
    engine.update_record(vid, garden.id, body="Plant tomatoes in May, after the last frost; basil beside them.",
                         tags=["garden"])
    gone = engine.add_record(vid, kind="memory", title="Gone", body="This note is deleted.")
    engine.delete_record(vid, gone.id)
    asset = home / "scan.bin"
    asset.write_bytes(bytes(range(64)))
    engine.add_asset(vid, asset, title="Scan")
    engine.close()
    GOLDEN.mkdir(parents=True, exist_ok=True)
    shutil.copy2(info.path, VAULT)


def _ids(home: Path) -> dict[str, str]:
    """Record ids by title, read through the CLI itself."""
    listing = call_cli(home, "--json", "memory", "list", "golden", passphrase=PASSPHRASE).json
    return {r["title"]: r["id"] for r in listing["records"]}


def _calls(ids: dict[str, str], folder: Path) -> list[tuple[str, list[str]]]:
    queries = folder / "queries.jsonl"
    queries.write_text('{"id": "q1", "text": "sourdough starter"}\n{"id": "q2", "text": "咖啡 水溫"}\n'
                       '{"id": "q3", "text": ""}\n', encoding="utf-8")
    questions = folder / "questions.jsonl"
    questions.write_text('{"id": "a", "text": "When is the dentist?"}\n{"id": "b", "text": "京都的竹林"}\n',
                         encoding="utf-8")
    welcome, garden, coffee = ids["Welcome to Memories"], ids["Garden"], ids["手沖咖啡筆記"]
    return [
        ("vault list", ["vault", "list"]),
        ("vault policy", ["vault", "policy", "golden"]),
        ("memory list", ["memory", "list", "golden"]),
        ("memory list cards", ["memory", "list", "golden", "--kind", "card"]),
        ("memory list private", ["memory", "list", "golden", "--kind", "private"]),
        ("memory list assets", ["memory", "list", "golden", "--kind", "asset"]),
        ("memory read", ["memory", "read", "golden", welcome]),
        ("memory read revision 1", ["memory", "read", "golden", garden, "--revision", "1"]),
        ("memory read latest revision", ["memory", "read", "golden", garden]),
        ("memory read chinese", ["memory", "read", "golden", coffee]),
        ("memory read missing", ["memory", "read", "golden", "0123456789abcdef"]),
        ("memory search", ["memory", "search", "golden", "sourdough"]),
        ("memory search chinese all", ["memory", "search", "golden", "咖啡 萃取", "--match-mode", "all"]),
        ("memory search phrase", ["memory", "search", "golden", "bread flour", "--match-mode", "phrase"]),
        ("memory search limit", ["memory", "search", "golden", "the", "--limit", "2"]),
        ("rag search", ["rag", "search", "golden", "encryption"]),
        ("rag search chinese all", ["rag", "search", "golden", "咖啡 萃取", "--match-mode", "all"]),
        ("rag search phrase", ["rag", "search", "golden", "hybrid search", "--match-mode", "phrase", "--limit", "3"]),
        ("rag search cards only", ["rag", "search", "golden", "會議", "--cards-only"]),
        ("rag search no rerank", ["rag", "search", "golden", "Alice Bob", "--no-rerank"]),
        ("rag search mixed", ["rag", "search", "golden", "Kyoto 嵐山", "--limit", "2"]),
        ("rag search batch", ["rag", "search", "golden", "--queries", str(queries)]),
        ("rag search vector without model", ["rag", "search", "golden", "bread", "--mode", "vector"]),
        ("rag search over the limit", ["rag", "search", "golden", "bread", "--limit", "101"]),
        ("rag search unknown vault", ["rag", "search", "nosuchvault", "bread"]),
        ("rag status", ["rag", "status", "golden"]),
        ("rag ask", ["rag", "ask", "golden", "How do I bake sourdough bread?"]),
        ("rag ask chinese", ["rag", "ask", "golden", "手沖咖啡的水溫是多少？"]),
        ("rag ask nothing found", ["rag", "ask", "golden", "zzzqqx"]),
        ("rag ask batch", ["rag", "ask", "golden", "--questions", str(questions), "--limit", "3"]),
        ("mcp status", ["mcp", "status"]),
    ]


def _normalise(text: str, home: Path) -> str:
    return CLOCK.sub(r'"\1": 0', text.replace(str(home), "$HOME"))


@pytest.fixture
def golden_home(tmp_path: Path) -> Path:
    """A fresh home holding a copy of the committed vault (the committed file is never opened)."""
    from memories_tui.vault.header import read_header

    if os.environ.get("MEMORIES_JSON_GOLDEN_REBUILD"):
        _build_vault(tmp_path / "build")
    home = tmp_path / "home"
    (home / "vaults").mkdir(parents=True)
    copy = home / "vaults" / "copy.mvault"
    shutil.copy2(VAULT, copy)
    copy.rename(home / "vaults" / f"{read_header(copy).vault_id}.mvault")
    return home


def test_json_output_of_read_only_calls_is_unchanged(golden_home: Path, tmp_path: Path) -> None:
    calls = _calls(_ids(golden_home), tmp_path)
    assert len(calls) >= 30
    seen: dict[str, dict[str, object]] = {}
    for name, argv in calls:
        result = call_cli(golden_home, "--json", *argv, passphrase=PASSPHRASE)
        assert result.stdout.count("\n") == 1, f"{name}: not exactly one JSON line: {result.stdout!r}"
        shown = [Path(a).name if a.startswith(str(tmp_path)) else a for a in argv]  # query files: per-run paths
        seen[name] = {"argv": shown, "exit": result.code, "stdout": _normalise(result.stdout, golden_home)}
    if os.environ.get("MEMORIES_JSON_GOLDEN_UPDATE") or os.environ.get("MEMORIES_JSON_GOLDEN_REBUILD"):
        OUTPUTS.write_text(json.dumps(seen, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    recorded = json.loads(OUTPUTS.read_text(encoding="utf-8"))
    assert list(seen) == list(recorded)
    for name in seen:
        assert seen[name] == recorded[name], f"`--json {' '.join(recorded[name]['argv'])}` changed"
